//! perf stat's shadow metrics: what perf prints beside its generic hardware and
//! software events without being asked (`CPUs utilized`, `K/sec`, `GHz`, `insn per
//! cycle`, `of all branches`, …). The rules are perf 6.1's
//! `perf_stat__print_shadow_stats` (tools/perf/util/stat-shadow.c): which event gets
//! which ratio, which denominator it reads (counts of the same exclusions only, the
//! mean where several events count it), when a missing denominator leaves the metric
//! out and when it prints 0, and each value's printf format. A live run prints them,
//! as perf does, before the metrics asked for.

use super::{EventResult, MetricResult, ValueFormat};
use crate::pmu::GENERIC_EVENTS;

/// perf's generic hardware events this module reads, by their place in
/// `enum perf_hw_id` (GENERIC_EVENTS' order).
const CYCLES: usize = 0;
const INSTRUCTIONS: usize = 1;
const CACHE_REFERENCES: usize = 2;
const CACHE_MISSES: usize = 3;
const BRANCHES: usize = 4;
const BRANCH_MISSES: usize = 5;
const STALLED_FRONTEND: usize = 7;
const STALLED_BACKEND: usize = 8;

/// The denominators perf keeps per exclusion context (its `enum stat_type`).
#[derive(Clone, Copy)]
enum Stat {
    /// Clock events' nanoseconds (task-clock, cpu-clock).
    Nsecs,
    Cycles,
    Branches,
    CacheRefs,
    StalledFrontend,
    StalledBackend,
}

/// How many statistics [`Stat`] names: the length of a context's table.
const STATS: usize = Stat::StalledBackend as usize + 1;

/// The mean of the counts that updated one statistic, as perf's `avg_stats`; `None`
/// when no counted event updated it (perf's `runtime_stat_n` of 0).
#[derive(Clone, Copy, Default)]
struct Mean {
    sum: f64,
    n: u32,
}

impl Mean {
    fn get(self) -> Option<f64> {
        (self.n > 0).then(|| self.sum / f64::from(self.n))
    }

    /// The mean, or 0 when nothing updated it (perf's `runtime_stat_avg`).
    fn or_zero(self) -> f64 {
        self.get().unwrap_or(0.0)
    }
}

/// An event as the shadow rules see it.
enum Kind {
    Clock,
    Hardware(usize),
    Other,
}

/// The event's kind and its exclusion context: the letters of perf's modifiers
/// (`:u`, `:k`, …), sorted, so `cycles:ku` reads `instructions:uk`'s cycles.
fn classify(e: &EventResult) -> (Kind, String) {
    let (base, context) = match e.name.rsplit_once(':') {
        Some((base, mods)) if !mods.is_empty() && mods.bytes().all(|b| b.is_ascii_alphabetic()) => {
            let mut letters: Vec<char> = mods.chars().collect();
            letters.sort_unstable();
            letters.dedup();
            (base, letters.into_iter().collect())
        }
        _ => (e.name.as_str(), String::new()),
    };
    let kind = if e.unit.as_deref() == Some("ns") {
        Kind::Clock
    } else if let Some(id) = GENERIC_EVENTS.iter().position(|names| names.contains(&base)) {
        Kind::Hardware(id)
    } else {
        Kind::Other
    };
    (kind, context)
}

/// perf's `convert_unit_double`: a rate in K, M or G while it exceeds 1000.
fn scaled_rate(mut value: f64) -> (f64, &'static str) {
    let mut unit = "/sec";
    for next in ["K/sec", "M/sec", "G/sec"] {
        if value > 1000.0 {
            value /= 1000.0;
            unit = next;
        }
    }
    (value, unit)
}

const fn format(width: usize, decimals: usize, suffix: &'static str) -> ValueFormat {
    ValueFormat { width, decimals, suffix, count: false }
}

/// The shadow metrics of `events` (a run's, an interval's or one CPU's), `wall_ns` the
/// elapsed time they were counted over, each anchored to its event. An event that was
/// not counted has none, and is no one's denominator.
pub fn shadow_metrics(events: &[EventResult], wall_ns: u64) -> Vec<MetricResult> {
    let classified: Vec<(Kind, String)> = events.iter().map(classify).collect();
    let mut stats: Vec<(&str, [Mean; STATS])> = Vec::new();
    for (e, (kind, context)) in events.iter().zip(&classified) {
        let Some(count) = e.count else { continue };
        let stat = match kind {
            Kind::Clock => Stat::Nsecs,
            Kind::Hardware(CYCLES) => Stat::Cycles,
            Kind::Hardware(BRANCHES) => Stat::Branches,
            Kind::Hardware(CACHE_REFERENCES) => Stat::CacheRefs,
            Kind::Hardware(STALLED_FRONTEND) => Stat::StalledFrontend,
            Kind::Hardware(STALLED_BACKEND) => Stat::StalledBackend,
            _ => continue,
        };
        let at = match stats.iter().position(|(c, _)| c == context) {
            Some(at) => at,
            None => {
                stats.push((context, [Mean::default(); STATS]));
                stats.len() - 1
            }
        };
        let mean = &mut stats[at].1[stat as usize];
        mean.sum += count as f64;
        mean.n += 1;
    }
    let mut out = Vec::new();
    for (anchor, (e, (kind, context))) in events.iter().zip(&classified).enumerate() {
        let Some(count) = e.count else { continue };
        let avg = count as f64;
        let stat = |s: Stat| stats.iter().find(|(c, _)| c == context).map_or(Mean::default(), |(_, m)| m[s as usize]);
        let mut push = |name: &str, value: f64, format: ValueFormat, description: &str| {
            out.push(MetricResult {
                name: name.to_string(),
                value,
                unit: String::new(),
                description: description.to_string(),
                event: Some(e.name.clone()),
                estimate: false,
                anchor,
                format,
            });
        };
        // A ratio in percent, 0 where the denominator counted nothing, as perf prints it.
        let percent = |total: f64| if total != 0.0 { avg / total * 100.0 } else { 0.0 };
        match kind {
            Kind::Hardware(INSTRUCTIONS) => {
                let cycles = stat(Stat::Cycles).or_zero();
                if cycles != 0.0 {
                    push("insn per cycle", avg / cycles, format(7, 2, " "), "instructions per cycle of the same exclusions");
                }
                let stalled = stat(Stat::StalledFrontend).or_zero().max(stat(Stat::StalledBackend).or_zero());
                if stalled != 0.0 && avg != 0.0 {
                    push(
                        "stalled cycles per insn",
                        stalled / avg,
                        format(7, 2, " "),
                        "the larger of frontend and backend stalled cycles, per instruction",
                    );
                }
            }
            Kind::Hardware(BRANCH_MISSES) => {
                if let Some(branches) = stat(Stat::Branches).get() {
                    push("of all branches", percent(branches), format(7, 2, "%"), "branch misses per branch, in percent");
                }
            }
            Kind::Hardware(CACHE_MISSES) => {
                if let Some(refs) = stat(Stat::CacheRefs).get() {
                    push("of all cache refs", percent(refs), format(8, 3, " %"), "cache misses per cache reference, in percent");
                }
            }
            Kind::Hardware(STALLED_FRONTEND) => push(
                "frontend cycles idle",
                percent(stat(Stat::Cycles).or_zero()),
                format(7, 2, "%"),
                "frontend stalled cycles per cycle, in percent",
            ),
            Kind::Hardware(STALLED_BACKEND) => push(
                "backend cycles idle",
                percent(stat(Stat::Cycles).or_zero()),
                format(7, 2, "%"),
                "backend stalled cycles per cycle, in percent",
            ),
            Kind::Hardware(CYCLES) => {
                let nsecs = stat(Stat::Nsecs).or_zero();
                if nsecs != 0.0 {
                    push("GHz", avg / nsecs, format(8, 3, ""), "cycles per nanosecond of task-clock");
                }
            }
            Kind::Clock => {
                if wall_ns != 0 {
                    push("CPUs utilized", avg / wall_ns as f64, format(8, 3, ""), "clock time per elapsed time");
                }
            }
            Kind::Hardware(_) | Kind::Other => {
                if let Some(nsecs) = stat(Stat::Nsecs).get() {
                    let (value, unit) = if nsecs != 0.0 { scaled_rate(1e9 * avg / nsecs) } else { (0.0, "/sec") };
                    push(unit, value, format(8, 3, ""), "events per second of task-clock");
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::count::Count;

    fn event(name: &str, count: Option<u64>) -> EventResult {
        let mut e =
            EventResult::new("software", name.to_string(), &Count { raw: count.unwrap_or(0), enabled: 1, running: 1 }, Vec::new(), true);
        e.count = count;
        if name.starts_with("task-clock") || name.starts_with("cpu-clock") {
            e.unit = Some("ns".to_string());
        }
        e
    }

    fn shown(metrics: &[MetricResult]) -> Vec<(usize, String, String)> {
        metrics
            .iter()
            .map(|m| {
                let f = m.format;
                (m.anchor, format!("{:>w$.d$}{}", m.value, f.suffix, w = f.width, d = f.decimals), m.name.clone())
            })
            .collect()
    }

    /// `perf stat -- true` on this project's VM (perf 6.1): 0.608825 ms of task-clock,
    /// 50 page faults, 1.191 ms elapsed.
    #[test]
    fn software_events_are_rates_of_task_clock_and_the_clock_a_share_of_the_elapsed_time() {
        let events = [event("task-clock", Some(608_825)), event("context-switches", Some(0)), event("page-faults", Some(50))];
        let m = shown(&shadow_metrics(&events, 1_191_438));
        assert_eq!(
            m,
            [
                (0, "   0.511".to_string(), "CPUs utilized".to_string()),
                (1, "   0.000".to_string(), "/sec".to_string()),
                (2, "  82.125".to_string(), "K/sec".to_string()),
            ]
        );
    }

    /// With task-clock and cpu-clock both counted, perf divides by their mean
    /// (`perf stat -e task-clock,page-faults,cpu-clock`: 675,010 and 670,420 ns, 50
    /// faults → 74.326 K/sec).
    #[test]
    fn two_clocks_give_the_rates_their_mean() {
        let events = [event("task-clock", Some(675_010)), event("page-faults", Some(50)), event("cpu-clock", Some(670_420))];
        let m = shadow_metrics(&events, 1_300_000);
        let faults = m.iter().find(|m| m.anchor == 1).unwrap();
        assert_eq!(faults.name, "K/sec");
        assert_eq!(format!("{:.3}", faults.value), "74.326");
    }

    #[test]
    fn hardware_ratios_read_their_denominators() {
        let events = [
            event("task-clock", Some(2_000_000)),
            event("cycles", Some(3_000_000)),
            event("instructions", Some(4_500_000)),
            event("branches", Some(900_000)),
            event("branch-misses", Some(18_000)),
            event("cache-references", Some(50_000)),
            event("cache-misses", Some(1_234)),
            event("stalled-cycles-frontend", Some(600_000)),
            event("idle-cycles-backend", Some(900_000)),
        ];
        let m = shown(&shadow_metrics(&events, 2_000_000));
        let want = [
            (0, "   1.000", "CPUs utilized"),
            (1, "   1.500", "GHz"),
            (2, "   1.50 ", "insn per cycle"),
            (2, "   0.20 ", "stalled cycles per insn"),
            (3, " 450.000", "M/sec"),
            (4, "   2.00%", "of all branches"),
            (5, "  25.000", "M/sec"),
            (6, "   2.468 %", "of all cache refs"),
            (7, "  20.00%", "frontend cycles idle"),
            (8, "  30.00%", "backend cycles idle"),
        ];
        let want: Vec<(usize, String, String)> = want.iter().map(|(a, v, n)| (*a, v.to_string(), n.to_string())).collect();
        assert_eq!(m, want);
    }

    #[test]
    fn a_missing_denominator_leaves_the_metric_out_and_a_zero_one_gives_zero() {
        // No clock: no GHz, no rates; no cycles: no insn per cycle; no branches: nothing
        // beside branch-misses.
        let events =
            [event("cycles", Some(10)), event("instructions:u", Some(5)), event("branch-misses", Some(1)), event("faults", Some(3))];
        assert!(shadow_metrics(&events, 1_000).is_empty());
        // Branches counted as 0: perf prints 0.00%; a clock of 0 ns: 0.000 /sec.
        let events = [event("task-clock", Some(0)), event("branches", Some(0)), event("branch-misses", Some(0))];
        let m = shown(&shadow_metrics(&events, 1_000));
        assert_eq!(m[1], (1, "   0.000".to_string(), "/sec".to_string()));
        assert_eq!(m[2], (2, "   0.00%".to_string(), "of all branches".to_string()));
    }

    #[test]
    fn denominators_come_from_the_same_exclusions_only() {
        let events = [
            event("cycles:u", Some(100)),
            event("instructions:u", Some(50)),
            event("instructions:k", Some(70)),
            event("instructions", Some(90)),
        ];
        let m = shown(&shadow_metrics(&events, 1_000));
        assert_eq!(m, [(1, "   0.50 ".to_string(), "insn per cycle".to_string())]);
        let events = [event("cycles:ku", Some(100)), event("instructions:uk", Some(50))];
        assert_eq!(shadow_metrics(&events, 1_000).len(), 1);
    }

    #[test]
    fn events_not_counted_have_no_metric_and_are_no_denominator() {
        let events = [event("task-clock", None), event("cycles", Some(10)), event("page-faults", Some(3)), event("cs", None)];
        assert!(shadow_metrics(&events, 1_000).is_empty());
    }
}
