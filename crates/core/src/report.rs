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

/// A whole counting run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StatReport {
    pub pmu: String,
    pub workload: String,
    pub seed: u64,
    pub cycles: u64,
    pub elapsed_ns: u64,
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

/// perf's narrowest column in `--metric-only` output (METRIC_ONLY_LEN).
const METRIC_ONLY_LEN: usize = 20;

impl StatReport {
    /// The human table, laid out like `perf stat`.
    pub fn to_human(&self) -> String {
        let mut out = self.title();
        for (i, e) in self.events.iter().enumerate() {
            let count = e.count_text(thousands);
            let mut metrics = self.metrics.iter().filter(|m| m.anchor == i);
            let first = metrics.next().map(metric_text).unwrap_or_default();
            let mut line = format!("{count:>18}      {:<30} {first:<40}", e.name);
            if e.scaled || e.count.is_none() {
                let _ = write!(line, " ({:.2}%)", e.running_pct());
            }
            out.push_str(line.trim_end());
            out.push('\n');
            for m in metrics {
                let _ = writeln!(out, "{:>18}      {:<30} {}", "", "", metric_text(m));
            }
        }
        out.push_str(&self.footer());
        out
    }

    fn title(&self) -> String {
        format!(
            "\n Performance counter stats for workload '{}' (seed {}, {} cycles) on {}:\n\n",
            self.workload,
            self.seed,
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
        let mut out = String::new();
        for (i, e) in self.events.iter().enumerate() {
            let mut metrics = self.metrics.iter().filter(|m| m.anchor == i);
            let (mv, mu) = metrics.next().map_or((String::new(), String::new()), |m| (m.value_text(), m.unit_text()));
            let fields = [
                e.count_text(|c| c.to_string()),
                String::new(),
                e.name.clone(),
                e.running.to_string(),
                format!("{:.2}", e.running_pct()),
                mv,
                mu,
            ];
            out.push_str(&fields.join(sep));
            out.push('\n');
            for m in metrics {
                let fields = [String::new(), String::new(), String::new(), String::new(), String::new(), m.value_text(), m.unit_text()];
                out.push_str(&fields.join(sep));
                out.push('\n');
            }
        }
        out
    }

    /// `--metric-only`: a header of metric units and names, then their values, each
    /// right-aligned in a column at least [`METRIC_ONLY_LEN`] wide, as perf lays it out.
    pub fn to_metric_only_human(&self) -> String {
        let mut out = self.title();
        let widths: Vec<usize> = self.metrics.iter().map(|m| m.unit_text().chars().count().max(METRIC_ONLY_LEN)).collect();
        let mut head = String::new();
        let mut values = String::new();
        for (m, w) in self.metrics.iter().zip(&widths) {
            let _ = write!(head, " {:>w$}", m.unit_text());
            let _ = write!(values, " {:>w$}", m.value_text());
        }
        let _ = writeln!(out, "{}\n{}", head.trim_end(), values.trim_end());
        out.push_str(&self.footer());
        out
    }

    /// `--metric-only -x SEP`: the metric units and names, then the values, each
    /// field followed by the separator, as perf prints them.
    pub fn to_metric_only_separated(&self, sep: &str) -> String {
        let head: String = self.metrics.iter().map(|m| format!("{}{sep}", m.unit_text())).collect();
        let values: String = self.metrics.iter().map(|m| format!("{}{sep}", m.value_text())).collect();
        format!("{head}\n{values}\n")
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}
