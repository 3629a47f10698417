//! The average of repeated runs (`-r N`), as perf takes it, kept as running sums: a run
//! is added when it ends and then dropped, so memory does not grow with N.

use super::{StatReport, Unit};

/// A running mean and variance (Welford's method: stable over any number of runs).
#[derive(Debug, Clone, Copy, Default)]
struct Moments {
    n: u64,
    mean: f64,
    m2: f64,
}

impl Moments {
    fn add(&mut self, x: f64) {
        self.n += 1;
        let d = x - self.mean;
        self.mean += d / self.n as f64;
        self.m2 += d * (x - self.mean);
    }

    /// perf's noise: the standard deviation of the mean (the sample variance over n,
    /// square-rooted) relative to the mean, in percent; 0 for fewer than two values or
    /// a zero mean.
    fn noise_pct(&self) -> f64 {
        if self.n < 2 || self.mean == 0.0 {
            return 0.0;
        }
        let n = self.n as f64;
        let variance = self.m2 / (n - 1.0);
        100.0 * (variance / n).sqrt() / self.mean
    }
}

/// Sums of one event's times, or of one unit's of it.
#[derive(Debug, Clone, Default)]
struct Times {
    raw: u128,
    enabled: u128,
    running: u128,
    /// The counts' exact sum for the mean, and their moments for the noise.
    count_sum: u128,
    counts: Moments,
}

impl Times {
    fn add(&mut self, raw: u64, enabled: u64, running: u64, count: Option<u64>) {
        self.raw += u128::from(raw);
        self.enabled += u128::from(enabled);
        self.running += u128::from(running);
        if let Some(c) = count {
            self.count_sum += u128::from(c);
            self.counts.add(c as f64);
        }
    }

    /// The mean count, rounded, over the runs that counted.
    fn count(&self) -> Option<u64> {
        (self.counts.n > 0).then(|| (self.count_sum as f64 / self.counts.n as f64).round() as u64)
    }
}

#[derive(Debug, Clone, Default)]
struct EventSums {
    times: Times,
    scaled: bool,
    supported: bool,
    units: Vec<(Unit, Times)>,
}

/// Notes kept at most: runs of one workload repeat their notes, and a run's own notes
/// are bounded, so this is reached only by runs whose notes all differ.
const MAX_NOTES: usize = 64;

/// Reports of runs that differ only in their seed (`-r N`), averaged as perf does:
/// each event's mean count (over the runs that counted it) with the standard deviation
/// of that mean as a percentage, its mean raw, enabled and running times, each
/// multiplexing group's mean counts, and every run's notes once. The metrics are not
/// averaged: as perf, the caller derives them from the mean counts.
#[derive(Debug, Default)]
pub struct Average {
    first: Option<StatReport>,
    runs: u64,
    elapsed: Moments,
    elapsed_sum: u128,
    user: u128,
    sys: u128,
    events: Vec<EventSums>,
    /// Each group's raw counts and running time, summed.
    groups: Vec<(Vec<u128>, u128)>,
    notes: Vec<String>,
    notes_dropped: u64,
}

fn mean(sum: u128, n: u64) -> u64 {
    u64::try_from(sum / u128::from(n.max(1))).unwrap_or(u64::MAX)
}

impl Average {
    pub fn new() -> Average {
        Average::default()
    }

    /// Runs added so far.
    pub fn runs(&self) -> u64 {
        self.runs
    }

    /// Adds a run. The first gives the shape of the result: its events (by position),
    /// units and metrics.
    pub fn add(&mut self, run: StatReport) {
        self.runs += 1;
        self.elapsed.add(run.elapsed_ns as f64);
        self.elapsed_sum += u128::from(run.elapsed_ns);
        if let Some(live) = &run.live {
            self.user += u128::from(live.user_ns);
            self.sys += u128::from(live.sys_ns);
        }
        self.events.resize_with(self.events.len().max(run.events.len()), EventSums::default);
        for (e, sums) in run.events.iter().zip(&mut self.events) {
            sums.times.add(e.raw, e.enabled, e.running, e.count);
            sums.scaled |= e.scaled;
            sums.supported |= e.supported;
            for u in &e.units {
                match sums.units.iter_mut().find(|(unit, _)| *unit == u.unit) {
                    Some((_, t)) => t.add(u.raw, u.enabled, u.running, u.count),
                    None => {
                        let mut t = Times::default();
                        t.add(u.raw, u.enabled, u.running, u.count);
                        sums.units.push((u.unit.clone(), t));
                    }
                }
            }
        }
        self.groups.resize_with(self.groups.len().max(run.groups.len()), Default::default);
        for (g, (raw, running)) in run.groups.iter().zip(&mut self.groups) {
            raw.resize(raw.len().max(g.raw.len()), 0);
            for (sum, &r) in raw.iter_mut().zip(&g.raw) {
                *sum += u128::from(r);
            }
            *running += u128::from(g.running);
        }
        for note in &run.notes {
            if self.notes.contains(note) {
                continue;
            }
            if self.notes.len() < MAX_NOTES {
                self.notes.push(note.clone());
            } else {
                self.notes_dropped += 1;
            }
        }
        if self.first.is_none() {
            self.first = Some(run);
        }
    }

    /// The average of the runs added, `None` for none.
    pub fn finish(self) -> Option<StatReport> {
        let mut out = self.first?;
        let n = self.runs;
        if n == 1 {
            return Some(out);
        }
        out.runs = n;
        out.elapsed_ns = mean(self.elapsed_sum, n);
        if let Some(live) = &mut out.live {
            live.elapsed_noise_pct = Some(self.elapsed.noise_pct());
            live.user_ns = mean(self.user, n);
            live.sys_ns = mean(self.sys, n);
        }
        for (e, sums) in out.events.iter_mut().zip(&self.events) {
            let t = &sums.times;
            e.raw = mean(t.raw, n);
            e.enabled = mean(t.enabled, n);
            e.running = mean(t.running, n);
            e.count = t.count();
            e.noise_pct = Some(t.counts.noise_pct());
            e.scaled = sums.scaled;
            e.supported = sums.supported;
            for u in &mut e.units {
                let Some((_, t)) = sums.units.iter().find(|(unit, _)| *unit == u.unit) else { continue };
                u.raw = mean(t.raw, n);
                u.enabled = mean(t.enabled, n);
                u.running = mean(t.running, n);
                u.count = t.count();
            }
        }
        for (g, (raw, running)) in out.groups.iter_mut().zip(&self.groups) {
            for (r, &sum) in g.raw.iter_mut().zip(raw) {
                *r = mean(sum, n);
            }
            g.running = mean(*running, n);
        }
        // Metrics of one run would stand for the mean: the caller derives them anew.
        out.metrics.clear();
        out.unit_metrics.clear();
        out.notes = self.notes;
        if self.notes_dropped > 0 {
            out.notes.push(format!("{} more notes of the runs are not shown", self.notes_dropped));
        }
        Some(out)
    }
}
