//! The result of a counting run, modelled on `perf stat`: counts with their enabled and
//! running times, split per hardware thread when asked (`-A`, `--per-thread`), derived
//! metrics, and the average of repeated runs. `render` lays it out.

mod average;
mod metrics;
mod render;
mod shadow;

pub use average::Average;
pub use metrics::{evaluate_metrics, evaluate_unit_metrics, events_read, outside_domain, unit_metrics, CountGroup, ESTIMATE_NOTE};
pub use render::{thousands, Style};
pub use shadow::shadow_metrics;

use serde::Serialize;

use crate::count::Count;

/// One counted event.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EventResult {
    /// The PMU that counted the event.
    pub pmu: String,
    pub name: String,
    /// The event as the user typed it, where that is not its name (`r7` for
    /// INSTR_EXEC): the text outputs print it, as perf prints what was typed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input: Option<String>,
    /// The count, scaled to the whole run when the event was multiplexed; `null` in
    /// JSON when the event never ran.
    pub count: Option<u64>,
    pub raw: u64,
    pub enabled: u64,
    pub running: u64,
    pub scaled: bool,
    /// The unit of `count` and `raw` when they are not numbers of events: `ns` for
    /// the kernel's clock events (`task-clock`), which the text outputs show in
    /// milliseconds as perf does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
    /// Counter(s) the event used, in the order of the multiplexing groups.
    pub counters: Vec<String>,
    /// False when the machine refused the event every time it was programmed (a
    /// hypervisor that denies a register): perf's `<not supported>`.
    pub supported: bool,
    /// Over repeated runs (`-r`), the standard deviation of the mean count as a
    /// percentage of the mean: perf's `( +- x.xx% )`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub noise_pct: Option<f64>,
    /// The count of each unit that counted the event (`-A`, `--per-thread`); empty when
    /// the counts are summed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub units: Vec<UnitCount>,
}

/// How a run's counts are split, as perf's aggregation modes: summed over the machine
/// (its default, like `perf stat -a`), per hardware thread (`-A`: strand, virtual CPU,
/// Montecito thread) or per workload thread (`--per-thread`). The simulated machine runs
/// workload thread n on hardware thread n, so the two splits differ only in their labels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Aggregation {
    #[default]
    Total,
    Cpu,
    Thread,
}

/// A part of the machine that counts on its own.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unit {
    /// `CPU3` for a hardware thread, as perf names CPUs; otherwise the shared unit
    /// (`MCU1` a memory controller, `N1-MCU0` one of a node's, `CPU0-1` a Montecito
    /// core counting both its threads).
    pub name: String,
    /// The hardware thread, which runs the workload thread of the same number; absent
    /// for a shared unit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thread: Option<usize>,
}

impl Unit {
    /// Hardware thread `n`.
    pub fn cpu(n: usize) -> Unit {
        Unit { name: format!("CPU{n}"), thread: Some(n) }
    }

    /// A unit shared by the threads, such as a memory controller.
    pub fn shared(name: String) -> Unit {
        Unit { name, thread: None }
    }
}

/// One unit's share of an event's count.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UnitCount {
    #[serde(flatten)]
    pub unit: Unit,
    /// Scaled by the unit's enabled and running times, as the total is.
    pub count: Option<u64>,
    pub raw: u64,
    /// The unit's own times (ns): the event's on the simulated machine, each CPU's
    /// counter's on a real one.
    pub enabled: u64,
    pub running: u64,
}

/// The metrics of one unit, from its own counts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UnitMetrics {
    #[serde(flatten)]
    pub unit: Unit,
    pub metrics: Vec<MetricResult>,
}

/// One derived metric's value.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MetricResult {
    pub name: String,
    pub value: f64,
    pub unit: String,
    pub description: String,
    /// For perf's shadow metrics (a live run's `CPUs utilized`, `K/sec`, …), the event
    /// the ratio is of, as perf's `-j` gives it in that event's record.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event: Option<String>,
    /// Its events could not all be counted at the same time: their counts come from
    /// different multiplexing intervals (`~` before the value in the text outputs).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub estimate: bool,
    /// The event whose line the metric is printed beside.
    #[serde(skip)]
    pub anchor: usize,
    /// How the text outputs print the value.
    #[serde(skip)]
    pub format: ValueFormat,
}

/// How perf prints a metric's value beside an event: `printf`'s width and precision,
/// then what follows the number (perf's percentages end in `%`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ValueFormat {
    pub width: usize,
    pub decimals: usize,
    pub suffix: &'static str,
    /// A count (a sum or difference of counts): the text outputs show it whole, with
    /// thousands separators as the counts beside it, not as `1306742.00`.
    pub count: bool,
}

impl ValueFormat {
    /// A MetricExpr metric's, as perf's `generic_metric` prints it: `%8.1f` with a
    /// ScaleUnit's unit, `%8.2f` without.
    pub fn of_expr(unit: &str) -> ValueFormat {
        ValueFormat { width: 8, decimals: if unit.is_empty() { 2 } else { 1 }, suffix: "", count: false }
    }
}

/// One interval of an `-I` run: the counts since the interval before.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Interval {
    /// Simulated time at the interval's end.
    pub time_ns: u64,
    pub events: Vec<EventResult>,
    pub metrics: Vec<MetricResult>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unit_metrics: Vec<UnitMetrics>,
}

/// A whole counting run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StatReport {
    /// The PMUs counted, in order of their first event.
    pub pmu: Vec<String>,
    pub workload: String,
    pub seed: u64,
    pub cycles: u64,
    pub elapsed_ns: u64,
    /// Runs averaged into this report (`-r`), with seeds `seed`, `seed + 1`, ….
    pub runs: u64,
    /// The counts of each interval of the run (`-I`), in order; empty without.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub intervals: Vec<Interval>,
    /// How the counts are split; every event carries its units' counts unless `total`.
    pub aggregation: Aggregation,
    pub events: Vec<EventResult>,
    pub metrics: Vec<MetricResult>,
    /// Each unit's metrics, from its own counts, when the counts are split.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unit_metrics: Vec<UnitMetrics>,
    /// Things the user must know: unpredictable hardware behaviour, events that could
    /// not be counted, assumptions.
    pub notes: Vec<String>,
    /// What each multiplexing group counted in its turns, for metrics over counts of
    /// one interval (empty when the run does not say, as a live run's does not).
    #[serde(skip)]
    pub groups: Vec<CountGroup>,
    /// What a count of the real machine (`pmu stat --live`) measured; absent for a
    /// simulated run, whose `workload`, `seed` and `cycles` say what ran. A live run's
    /// `workload` is the command, or `system wide`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub live: Option<LiveRun>,
}

/// A count of the real machine through the kernel's perf_event.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LiveRun {
    /// The command counted, with its arguments; empty when only a duration was.
    pub command: Vec<String>,
    /// Every CPU of the machine was counted (`-a`), not just the command.
    pub system_wide: bool,
    /// The command's exit status as a shell reports it: its exit code, or 128 plus the
    /// number of the signal that ended it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit_status: Option<i32>,
    /// CPU time the command and its children spent in user space and in the kernel
    /// (getrusage's RUSAGE_CHILDREN), ns; over repeated runs (`-r`), the mean.
    pub user_ns: u64,
    pub sys_ns: u64,
    /// Over repeated runs (`-r`), the standard deviation of the mean elapsed time as a
    /// percentage of it, as perf prints beside the elapsed time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub elapsed_noise_pct: Option<f64>,
}

impl EventResult {
    pub fn new(pmu: &str, name: String, count: &Count, counters: Vec<String>, supported: bool) -> EventResult {
        EventResult {
            pmu: pmu.to_string(),
            input: None,
            supported,
            noise_pct: None,
            name,
            count: count.scaled(),
            raw: count.raw,
            enabled: count.enabled,
            running: count.running,
            scaled: count.is_scaled(),
            unit: None,
            counters,
            units: Vec::new(),
        }
    }

    /// The event split over its units, each unit's raw count (`None` if the unit never
    /// counted it) scaled by the event's enabled and running times.
    pub fn with_units(self, units: impl IntoIterator<Item = (Unit, Option<u64>)>) -> EventResult {
        let (enabled, running) = (self.enabled, self.running);
        self.with_timed_units(units.into_iter().map(|(unit, raw)| (unit, raw, enabled, running)))
    }

    /// The event split over units that each kept their own enabled and running
    /// times (a real machine's CPUs), each unit's count scaled by its own.
    pub fn with_timed_units(mut self, units: impl IntoIterator<Item = (Unit, Option<u64>, u64, u64)>) -> EventResult {
        self.units = units
            .into_iter()
            .map(|(unit, raw, enabled, running)| UnitCount {
                unit,
                raw: raw.unwrap_or(0),
                count: raw.and_then(|raw| Count { raw, enabled, running }.scaled()),
                enabled,
                running,
            })
            .collect();
        self
    }
}

impl EventResult {
    pub fn running_pct(&self) -> f64 {
        Count { raw: self.raw, enabled: self.enabled, running: self.running }.running_pct()
    }
}

pub use crate::metric_group::DURATION_TIME;
