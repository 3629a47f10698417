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
    pub fn new(name: String, count: &Count, counters: Vec<String>) -> EventResult {
        EventResult {
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

fn metric_text(m: &MetricResult) -> String {
    format!("#  {:>8.3} {}{}", m.value, m.unit, if m.unit.is_empty() { m.name.clone() } else { format!(" {}", m.name) })
}

impl StatReport {
    /// The human table, laid out like `perf stat`.
    pub fn to_human(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "\n Performance counter stats for workload '{}' (seed {}, {} cycles) on {}:\n",
            self.workload,
            self.seed,
            thousands(self.cycles),
            self.pmu
        );
        for (i, e) in self.events.iter().enumerate() {
            let count = match e.count {
                Some(c) => thousands(c),
                None => "<not counted>".to_string(),
            };
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
        let _ = writeln!(out, "\n {:>17.9} seconds time elapsed (simulated)", self.elapsed_ns as f64 / 1e9);
        for n in &self.notes {
            let _ = writeln!(out, "\n note: {n}");
        }
        out
    }

    /// `perf stat -x SEP` lines: count, unit, event, run time, % running, metric value,
    /// metric unit. Extra metrics of one event follow on lines with empty leading fields.
    pub fn to_separated(&self, sep: &str) -> String {
        let mut out = String::new();
        for (i, e) in self.events.iter().enumerate() {
            let count = e.count.map_or("<not counted>".to_string(), |c| c.to_string());
            let pct = e.running_pct();
            let mut metrics = self.metrics.iter().filter(|m| m.anchor == i);
            let (mv, mu) =
                metrics.next().map_or((String::new(), String::new()), |m| (format!("{:.3}", m.value), format!("{}{}", m.unit, m.name)));
            let fields = [count, String::new(), e.name.clone(), e.running.to_string(), format!("{pct:.2}"), mv, mu];
            out.push_str(&fields.join(sep));
            out.push('\n');
            for m in metrics {
                let fields = [
                    String::new(),
                    String::new(),
                    String::new(),
                    String::new(),
                    String::new(),
                    format!("{:.3}", m.value),
                    format!("{}{}", m.unit, m.name),
                ];
                out.push_str(&fields.join(sep));
                out.push('\n');
            }
        }
        out
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}
