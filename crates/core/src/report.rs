//! The result of a counting run and its three renderings, modelled on `perf stat`:
//! the human table, `-x SEP` separated values, and JSON.

use std::fmt::Write as _;

use serde::Serialize;

use crate::count::Count;
use crate::metric::{MetricContext, MetricExpr};
use crate::table::MetricDef;

/// One counted event.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EventResult {
    pub name: String,
    /// The count, scaled to the whole run when the event was multiplexed; `null` in
    /// JSON when the event never ran.
    pub count: Option<u64>,
    pub raw: u64,
    pub enabled: u64,
    pub running: u64,
    pub scaled: bool,
    /// Counter(s) the event used, in the order of the multiplexing groups.
    pub counters: Vec<String>,
    /// False when the machine refused the event every time it was programmed (a
    /// hypervisor that denies a register): perf's `<not supported>`.
    pub supported: bool,
    /// Over repeated runs (`-r`), the standard deviation of the mean count as a
    /// percentage of the mean: perf's `( +- x.xx% )`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub noise_pct: Option<f64>,
}

/// One derived metric's value.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MetricResult {
    pub name: String,
    pub value: f64,
    pub unit: String,
    pub description: String,
    /// The event whose line the metric is printed beside.
    #[serde(skip)]
    pub anchor: usize,
}

/// One interval of an `-I` run: the counts since the interval before.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Interval {
    /// Simulated time at the interval's end.
    pub time_ns: u64,
    pub events: Vec<EventResult>,
    pub metrics: Vec<MetricResult>,
}

/// A whole counting run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StatReport {
    pub pmu: String,
    pub workload: String,
    pub seed: u64,
    pub cycles: u64,
    pub elapsed_ns: u64,
    /// Runs averaged into this report (`-r`), with seeds `seed`, `seed + 1`, ….
    pub runs: u64,
    /// The counts of each interval of the run (`-I`), in order; empty without.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub intervals: Vec<Interval>,
    pub events: Vec<EventResult>,
    pub metrics: Vec<MetricResult>,
    /// Things the user must know: unpredictable hardware behaviour, events that could
    /// not be counted, assumptions.
    pub notes: Vec<String>,
}

impl EventResult {
    pub fn new(name: String, count: &Count, counters: Vec<String>, supported: bool) -> EventResult {
        EventResult {
            supported,
            noise_pct: None,
            name,
            count: count.scaled(),
            raw: count.raw,
            enabled: count.enabled,
            running: count.running,
            scaled: count.is_scaled(),
            counters,
        }
    }
}

impl EventResult {
    pub fn running_pct(&self) -> f64 {
        Count { raw: self.raw, enabled: self.enabled, running: self.running }.running_pct()
    }
}

/// perf's tool event for the run's wall-clock time in nanoseconds; metrics use it
/// for rates such as bandwidth.
pub const DURATION_TIME: &str = "duration_time";

/// Looks up counted events (by canonical name, case-insensitively) and perf's
/// `duration_time`.
struct Counted<'a> {
    events: &'a [EventResult],
    duration_ns: u64,
}

impl MetricContext for Counted<'_> {
    fn value(&self, name: &str) -> Option<f64> {
        if name == DURATION_TIME {
            return Some(self.duration_ns as f64);
        }
        self.events.iter().find(|e| e.name.eq_ignore_ascii_case(name)).and_then(|e| e.count).map(|c| c as f64)
    }

    fn literal(&self, _name: &str) -> Option<f64> {
        None
    }
}

/// Evaluate every metric whose inputs were all counted. A metric whose value is
/// undefined for this run (a zero denominator) is left out with a note.
pub fn evaluate_metrics(defs: &[MetricDef], events: &[EventResult], duration_ns: u64, notes: &mut Vec<String>) -> Vec<MetricResult> {
    let ctx = Counted { events, duration_ns };
    let mut out = Vec::new();
    for def in defs {
        let Ok(expr) = MetricExpr::parse(&def.expr) else {
            notes.push(format!("metric {} has an invalid expression and was skipped", def.name));
            continue;
        };
        let inputs = expr.identifiers();
        let positions: Option<Vec<usize>> =
            inputs.iter().filter(|n| **n != DURATION_TIME).map(|n| events.iter().position(|e| e.name.eq_ignore_ascii_case(n))).collect();
        let Some(positions) = positions else { continue };
        if let Some(&lost) = positions.iter().find(|&&p| events[p].count.is_none()) {
            notes.push(format!("metric {} is not computed: its input {} was not counted", def.name, events[lost].name));
            continue;
        }
        match expr.eval(&ctx) {
            Ok(v) if v.is_finite() => {
                let (factor, unit) = def.scale();
                out.push(MetricResult {
                    name: def.name.to_string(),
                    value: v * factor,
                    unit: unit.to_string(),
                    description: def.description.to_string(),
                    anchor: positions.into_iter().min().unwrap_or(0),
                });
            }
            Ok(_) => notes.push(format!("metric {} is undefined for this run", def.name)),
            Err(e) => notes.push(format!("metric {} is undefined for this run: {e}", def.name)),
        }
    }
    out
}

/// Reports of runs that differ only in their seed (`-r N`), averaged as perf does:
/// each event's mean count (over the runs that counted it) with the standard
/// deviation of that mean as a percentage, its mean raw, enabled and running times,
/// each metric's mean value (a metric missing from a run is dropped), and every run's
/// notes once. `None` for no runs.
pub fn average(runs: &[StatReport]) -> Option<StatReport> {
    let first = runs.first()?;
    let n = runs.len() as u128;
    let mut out = first.clone();
    out.runs = runs.len() as u64;
    for (i, e) in out.events.iter_mut().enumerate() {
        let same: Vec<&EventResult> = runs.iter().filter_map(|r| r.events.get(i)).collect();
        let mean = |f: fn(&EventResult) -> u64| (same.iter().map(|e| u128::from(f(e))).sum::<u128>() / n) as u64;
        e.raw = mean(|e| e.raw);
        e.enabled = mean(|e| e.enabled);
        e.running = mean(|e| e.running);
        let counts: Vec<f64> = same.iter().filter_map(|e| e.count).map(|c| c as f64).collect();
        e.count = (!counts.is_empty()).then(|| (counts.iter().sum::<f64>() / counts.len() as f64).round() as u64);
        e.noise_pct = Some(noise_pct(&counts));
        e.scaled = same.iter().any(|e| e.scaled);
        e.supported = same.iter().any(|e| e.supported);
    }
    out.metrics.retain_mut(|m| {
        let values: Vec<f64> = runs.iter().filter_map(|r| r.metrics.iter().find(|x| x.name == m.name)).map(|x| x.value).collect();
        m.value = values.iter().sum::<f64>() / values.len().max(1) as f64;
        values.len() == runs.len()
    });
    out.notes = Vec::new();
    for note in runs.iter().flat_map(|r| &r.notes) {
        if !out.notes.contains(note) {
            out.notes.push(note.clone());
        }
    }
    Some(out)
}

/// perf's noise: the standard deviation of the mean (the sample variance over n,
/// square-rooted) relative to the mean, in percent; 0 for fewer than two values or a
/// zero mean.
fn noise_pct(values: &[f64]) -> f64 {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    if values.len() < 2 || mean == 0.0 {
        return 0.0;
    }
    let variance = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    100.0 * (variance / n).sqrt() / mean
}

/// `1234567` → `1,234,567`, as perf prints counts.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

impl MetricResult {
    /// The value as perf prints it: one decimal with a unit, two without.
    pub fn value_text(&self) -> String {
        if self.unit.is_empty() {
            format!("{:.2}", self.value)
        } else {
            format!("{:.1}", self.value)
        }
    }

    /// perf's metric unit column: `UNIT  NAME` (two spaces), or the name alone.
    pub fn unit_text(&self) -> String {
        if self.unit.is_empty() {
            self.name.clone()
        } else {
            format!("{}  {}", self.unit, self.name)
        }
    }
}

impl EventResult {
    /// The count column: the count, or perf's `<not counted>` (never ran) or
    /// `<not supported>` (refused).
    fn count_text(&self, digits: fn(u64) -> String) -> String {
        match (self.count, self.supported) {
            (Some(c), _) => digits(c),
            (None, true) => "<not counted>".to_string(),
            (None, false) => "<not supported>".to_string(),
        }
    }
}

/// perf's `# VALUE UNIT  NAME` beside an event line.
fn metric_text(m: &MetricResult) -> String {
    format!("# {:>8} {}", m.value_text(), m.unit_text())
}

/// An interval's time as perf's `-I` prints it: seconds, `%16.9f`.
fn interval_time(iv: &Interval) -> String {
    format!("{:>16.9}", iv.time_ns as f64 / 1e9)
}

/// perf's event lines: count, event, the first metric, the running percentage when
/// scaled and the variance over runs; further metrics on lines of their own.
fn human_lines(events: &[EventResult], metrics: &[MetricResult], digits: fn(u64) -> String, prefix: &str) -> String {
    let mut out = String::new();
    for (i, e) in events.iter().enumerate() {
        let count = e.count_text(digits);
        let mut mine = metrics.iter().filter(|m| m.anchor == i);
        let first = mine.next().map(metric_text).unwrap_or_default();
        let mut line = format!("{prefix}{count:>18}      {:<30} {first:<40}", e.name);
        if e.scaled || e.count.is_none() {
            let _ = write!(line, " ({:.2}%)", e.running_pct());
        }
        if let Some(pct) = e.noise_pct {
            let _ = write!(line, "  ( +-{pct:6.2}% )");
        }
        out.push_str(line.trim_end());
        out.push('\n');
        for m in mine {
            let _ = writeln!(out, "{prefix}{:>18}      {:<30} {}", "", "", metric_text(m));
        }
    }
    out
}

/// perf's `-x` lines: count, unit, event, [variance,] run time, % running, metric
/// value, metric unit; further metrics of one event on lines whose leading fields are
/// empty.
fn separated_lines(events: &[EventResult], metrics: &[MetricResult], sep: &str, prefix: &str) -> String {
    let mut out = String::new();
    for (i, e) in events.iter().enumerate() {
        let mut mine = metrics.iter().filter(|m| m.anchor == i);
        let (mv, mu) = mine.next().map_or((String::new(), String::new()), |m| (m.value_text(), m.unit_text()));
        let mut fields = vec![
            e.count_text(|c| c.to_string()),
            String::new(),
            e.name.clone(),
            e.running.to_string(),
            format!("{:.2}", e.running_pct()),
            mv,
            mu,
        ];
        // Repeated runs add perf's variance column after the event.
        if let Some(pct) = e.noise_pct {
            fields.insert(3, format!("{pct:.2}%"));
        }
        let _ = writeln!(out, "{prefix}{}", fields.join(sep));
        for m in mine {
            let empty = if e.noise_pct.is_some() { 6 } else { 5 };
            let fields: Vec<String> = std::iter::repeat_n(String::new(), empty).chain([m.value_text(), m.unit_text()]).collect();
            let _ = writeln!(out, "{prefix}{}", fields.join(sep));
        }
    }
    out
}

/// perf's narrowest column in `--metric-only` output (METRIC_ONLY_LEN).
const METRIC_ONLY_LEN: usize = 20;

impl StatReport {
    /// The human table, laid out like `perf stat`; `big_num` groups digits by
    /// thousands (perf's default; `--no-big-num` turns it off). With intervals, each
    /// interval's lines start with its time, under perf's `-I` header.
    pub fn to_human(&self, big_num: bool) -> String {
        let digits: fn(u64) -> String = if big_num { thousands } else { |c| c.to_string() };
        let mut out = self.title();
        if self.intervals.is_empty() {
            out.push_str(&human_lines(&self.events, &self.metrics, digits, ""));
        } else {
            out.push_str("#           time             counts unit events\n");
            for iv in &self.intervals {
                out.push_str(&human_lines(&iv.events, &iv.metrics, digits, &interval_time(iv)));
            }
        }
        out.push_str(&self.footer());
        out
    }

    fn title(&self) -> String {
        let seeds = match self.runs {
            0 | 1 => format!("seed {}", self.seed),
            n => format!("seeds {}-{}", self.seed, self.seed.saturating_add(n - 1)),
        };
        let runs = if self.runs > 1 { format!(" ({} runs)", self.runs) } else { String::new() };
        format!(
            "\n Performance counter stats for workload '{}' ({seeds}, {} cycles) on {}{runs}:\n\n",
            self.workload,
            thousands(self.cycles),
            self.pmu
        )
    }

    /// The elapsed time and the notes.
    fn footer(&self) -> String {
        let mut out = format!("\n {:>17.9} seconds time elapsed (simulated)\n", self.elapsed_ns as f64 / 1e9);
        for n in &self.notes {
            let _ = writeln!(out, "\n note: {n}");
        }
        out
    }

    /// `perf stat -x SEP` lines, in perf 6.1's column order: count, unit, event, run
    /// time, % running, metric value, metric unit. Extra metrics of one event follow
    /// on lines whose first five fields are empty.
    pub fn to_separated(&self, sep: &str) -> String {
        if self.intervals.is_empty() {
            return separated_lines(&self.events, &self.metrics, sep, "");
        }
        self.intervals.iter().map(|iv| separated_lines(&iv.events, &iv.metrics, sep, &format!("{}{sep}", interval_time(iv)))).collect()
    }

    /// `--metric-only`: a header of metric units and names, then their values, each
    /// right-aligned in a column at least [`METRIC_ONLY_LEN`] wide, as perf lays it out.
    pub fn to_metric_only_human(&self) -> String {
        let mut out = self.title();
        let widths: Vec<usize> = self.metrics.iter().map(|m| m.unit_text().chars().count().max(METRIC_ONLY_LEN)).collect();
        let row = |prefix: &str, cells: Vec<String>| {
            let mut line = prefix.to_string();
            for (c, w) in cells.iter().zip(&widths) {
                let _ = write!(line, " {c:>w$}");
            }
            format!("{}\n", line.trim_end())
        };
        let values = |metrics: &[MetricResult]| self.metric_values(metrics);
        let time_head = if self.intervals.is_empty() { "" } else { "#           time" };
        out.push_str(&row(time_head, self.metrics.iter().map(MetricResult::unit_text).collect()));
        if self.intervals.is_empty() {
            out.push_str(&row("", values(&self.metrics)));
        }
        for iv in &self.intervals {
            out.push_str(&row(&interval_time(iv), values(&iv.metrics)));
        }
        out.push_str(&self.footer());
        out
    }

    /// The values in `metrics` (the run's or an interval's) of the run's metrics, in
    /// their order; empty where `metrics` lacks one.
    fn metric_values(&self, metrics: &[MetricResult]) -> Vec<String> {
        self.metrics.iter().map(|m| metrics.iter().find(|x| x.name == m.name).map(MetricResult::value_text).unwrap_or_default()).collect()
    }

    /// `--metric-only -x SEP`: the metric units and names, then the values, each
    /// field followed by the separator, as perf prints them; with intervals, a line
    /// of values per interval after its time.
    pub fn to_metric_only_separated(&self, sep: &str) -> String {
        let mut out: String = self.metrics.iter().map(|m| format!("{}{sep}", m.unit_text())).collect();
        out.push('\n');
        let values = |metrics: &[MetricResult]| -> String { self.metric_values(metrics).iter().map(|v| format!("{v}{sep}")).collect() };
        if self.intervals.is_empty() {
            out.push_str(&values(&self.metrics));
            out.push('\n');
        }
        for iv in &self.intervals {
            let _ = writeln!(out, "{}{sep}{}", interval_time(iv), values(&iv.metrics));
        }
        out
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}
