//! A run's derived metrics. Each metric is evaluated over counts of one interval where
//! the run has them: when its events were multiplexed, over the counts of a group that
//! held them all (`CountGroup`), scaled to the run as perf scales a count; otherwise
//! over the run's scaled counts, and then, if its events ran in different groups, it is
//! an estimate (`MetricResult::estimate`). A value outside the metric's own domain
//! (`MetricDef::min`, `max`) is never given as a number: a note says why.

use serde::Serialize;

use super::{EventResult, MetricResult, Unit, UnitMetrics, ValueFormat};
use crate::metric::MetricExpr;
use crate::metric_group::{Counts, Evaluator, MetricError};
use crate::table::MetricDef;

/// What one multiplexing group counted in its turns: each of its events' raw count
/// (`events` are indices into the run's events) and the time it ran. An event of
/// several groups (a counter of its own, or a metric's events kept together) has a
/// count in each.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct CountGroup {
    pub events: Vec<usize>,
    pub raw: Vec<u64>,
    pub running: u64,
}

/// The counts a metric is evaluated over: the run's scaled counts, or one group's
/// scaled by the time it ran.
struct Counted<'a> {
    events: &'a [EventResult],
    group: Option<&'a CountGroup>,
    duration_ns: u64,
}

impl Counts for Counted<'_> {
    fn count(&self, name: &str) -> Option<Option<f64>> {
        let i = self.events.iter().position(|e| e.name.eq_ignore_ascii_case(name))?;
        let e = self.events.get(i)?;
        let in_group = self.group.and_then(|g| g.events.iter().position(|&x| x == i).map(|at| (g, at)));
        match in_group {
            Some((g, at)) if g.running > 0 => Some(g.raw.get(at).map(|&raw| raw as f64 * e.enabled as f64 / g.running as f64)),
            _ => Some(e.count.map(|c| c as f64)),
        }
    }

    fn literal(&self, _name: &str) -> Option<f64> {
        None
    }

    fn duration_s(&self) -> Option<f64> {
        Some(self.duration_ns as f64 * 1e-9)
    }
}

/// The events the expressions `exprs` of `def` (its own, its domain's bounds) read,
/// themselves or through the metrics of `defs` they name, as `index` numbers them
/// (perf's `duration_time` aside); `None` when one reads a name that is neither.
pub fn events_read(def: &MetricDef, exprs: &[&str], defs: &[MetricDef], index: impl Fn(&str) -> Option<usize>) -> Option<Vec<usize>> {
    let mut exprs: Vec<String> = exprs.iter().filter(|e| !e.trim().is_empty()).map(|e| e.to_string()).collect();
    let mut seen: Vec<&str> = vec![&def.name];
    let mut found = Vec::new();
    while let Some(expr) = exprs.pop() {
        let parsed = MetricExpr::parse(&expr).ok()?;
        for id in parsed.identifiers().into_iter().filter(|&id| id != crate::metric_group::DURATION_TIME) {
            if let Some(p) = index(id) {
                if !found.contains(&p) {
                    found.push(p);
                }
            } else if let Some(d) = defs.iter().find(|d| d.name.eq_ignore_ascii_case(id)) {
                if !seen.iter().any(|s| s.eq_ignore_ascii_case(&d.name)) {
                    seen.push(&d.name);
                    exprs.push(d.expr.to_string());
                }
            } else {
                return None;
            }
        }
    }
    Some(found)
}

/// The value of a domain's bound (`side` is `min` or `max` of `def`) over the same
/// counts: an empty bound is none.
fn bound(evaluator: &Evaluator, def: &MetricDef, side: &str, expr: &str) -> Option<f64> {
    if expr.trim().is_empty() {
        return None;
    }
    // The evaluator keeps values by name: each bound has its own.
    let probe = MetricDef { name: format!("{} {side}", def.name).into(), expr: expr.to_string().into(), ..MetricDef::default() };
    evaluator.value(&probe).ok().filter(|v| v.is_finite())
}

/// A bound as the note gives it: a number in the metric's unit, or its expression
/// with the value it had.
fn bound_text(expr: &str, value: f64, factor: f64, unit: &str) -> String {
    if expr.trim().parse::<f64>().is_ok() {
        format!("{}{unit}", number(value * factor))
    } else {
        format!("{} ({}{unit})", expr.trim(), number(value * factor))
    }
}

/// A value with as few decimals as it needs: two, or four below 1, so that a value
/// and the bound it broke do not print alike.
fn number(v: f64) -> String {
    let s = if v.abs() < 1.0 { format!("{v:.4}") } else { format!("{v:.2}") };
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// The domain `v`, a value of `def` over the evaluator's counts, lies outside (as
/// "0 to 100%", "at most NAME (VALUE)"), if it does. A bound that cannot be
/// evaluated over these counts bounds nothing.
pub fn outside_domain(evaluator: &Evaluator, def: &MetricDef, v: f64) -> Option<String> {
    let (factor, unit) = def.scale();
    let (min, max) = (bound(evaluator, def, "min", &def.min), bound(evaluator, def, "max", &def.max));
    // Bounds are exact; the value's arithmetic is not.
    let slack = |b: f64| 1e-9 * b.abs().max(1.0);
    if !(min.is_some_and(|m| v < m - slack(m)) || max.is_some_and(|m| v > m + slack(m))) {
        return None;
    }
    Some(match (min, max) {
        (Some(lo), Some(hi)) => format!("{} to {}", bound_text(&def.min, lo, factor, unit), bound_text(&def.max, hi, factor, unit)),
        (Some(lo), None) => format!("at least {}", bound_text(&def.min, lo, factor, unit)),
        (None, Some(hi)) => format!("at most {}", bound_text(&def.max, hi, factor, unit)),
        (None, None) => String::new(),
    })
}

/// Why a metric's value is outside its domain, and what to do instead: `inputs` are
/// the events of its value and bounds, `apart` when they came from different groups;
/// `grouped`: the run kept every metric's events in one group where they fit, so
/// these do not.
fn outside_note(
    def: &MetricDef,
    value: f64,
    range: String,
    events: &[EventResult],
    inputs: &[usize],
    apart: bool,
    grouped: bool,
) -> String {
    let (factor, unit) = def.scale();
    let names: Vec<&str> = inputs.iter().filter_map(|&i| events.get(i)).map(|e| e.name.as_str()).collect();
    let why = if apart {
        let running: Vec<String> =
            inputs.iter().filter_map(|&i| events.get(i)).map(|e| format!("{} {:.2}%", e.name, e.running_pct())).collect();
        let instead = if grouped {
            "they cannot be counted at the same time, so only more turns of the groups bring the intervals closer: a longer run or a \
             shorter --mux-interval"
                .to_string()
        } else {
            format!(
                "count only them (-e {}), or give the groups more turns (a longer run, a shorter multiplexing interval)",
                names.join(",")
            )
        };
        format!(
            "its events were counted in different multiplexing groups ({}), so its counts come from different intervals; {instead}",
            running.join(", ")
        )
    } else {
        format!(
            "yet its events ({}) were counted at the same time: the counts contradict the metric's definition, which is a fault \
             of the model or of the metric (docs/metrics.md); please report it",
            names.join(", ")
        )
    };
    format!("metric {} is not shown: its value {}{unit} lies outside its domain, {range}: {why}", def.name, number(value * factor))
}

/// Evaluate every metric of `defs` that `only` names (all when `None`) whose events
/// were all counted in this run (a metric, or a bound of its domain, may use any of
/// `defs`), each over the counts of one group where it can (`groups`; none for a run
/// that does not say). A metric over an event that was not counted, or
/// whose value is undefined for this run (a zero denominator), or lies outside its
/// domain, is left out with a note; one over events this run did not ask for is left
/// out silently.
pub fn evaluate_metrics(
    defs: &[MetricDef],
    only: Option<&[String]>,
    events: &[EventResult],
    groups: &[CountGroup],
    duration_ns: u64,
    notes: &mut Vec<String>,
) -> Vec<MetricResult> {
    let mut out = Vec::new();
    for def in defs.iter().filter(|d| only.is_none_or(|names| names.iter().any(|n| n.eq_ignore_ascii_case(&d.name)))) {
        // A metric reading a name the run lacks is not evaluated (below): its inputs
        // matter not.
        let index = |name: &str| events.iter().position(|e| e.name.eq_ignore_ascii_case(name));
        let inputs = events_read(def, &[&def.expr], defs, index).unwrap_or_default();
        // With the events its domain's bounds read (a part's whole), where they can be.
        let checked = events_read(def, &[&def.expr, &def.min, &def.max], defs, index).unwrap_or_else(|| inputs.clone());
        let multiplexed = checked.iter().filter_map(|&i| events.get(i)).any(|e| e.scaled);
        // The group that held them all longest, when they had to share the counters:
        // with the bounds' events if one did, else the value's own.
        let holding = |set: &[usize]| groups.iter().filter(|g| set.iter().all(|i| g.events.contains(i))).max_by_key(|g| g.running);
        let group = holding(&checked).or_else(|| holding(&inputs)).filter(|_| multiplexed);
        let together = |set: &[usize]| !multiplexed || group.is_some_and(|g| set.iter().all(|i| g.events.contains(i)));
        let estimate = !together(&inputs) && inputs.len() > 1;
        let counted = Counted { events, group, duration_ns };
        let evaluator = Evaluator::new(defs, &counted);
        match evaluator.value(def) {
            Ok(v) if v.is_finite() => {
                let (factor, unit) = def.scale();
                if let Some(range) = outside_domain(&evaluator, def, v) {
                    notes.push(outside_note(def, v, range, events, &checked, !together(&checked), !groups.is_empty()));
                    continue;
                }
                out.push(MetricResult {
                    name: def.name.to_string(),
                    value: v * factor,
                    unit: unit.to_string(),
                    description: def.description.to_string(),
                    event: None,
                    estimate,
                    anchor: anchor(&inputs),
                    format: ValueFormat { count: is_count(def), ..ValueFormat::of_expr(unit) },
                });
            }
            Ok(_) => notes.push(format!("metric {} is undefined for this run", def.name)),
            Err(MetricError::Missing { .. }) => {}
            Err(e @ MetricError::NotCounted { .. }) => notes.push(e.to_string()),
            Err(e) => notes.push(format!("metric {} is undefined for this run: {e}", def.name)),
        }
    }
    if out.iter().any(|m| m.estimate) {
        let note = ESTIMATE_NOTE.to_string();
        if !notes.contains(&note) {
            notes.push(note);
        }
    }
    out
}

/// What `~` before a metric's value means.
pub const ESTIMATE_NOTE: &str = "~ marks an estimate: the metric's events could not all be counted at the same time (too few \
     counters, or the PMU's rules), so its counts come from different multiplexing intervals";

/// Whether `def` is a count: its expression has no unit and neither divides nor reads
/// the time (a sum or difference of counts, `DCACHE_ACCESS - DCACHE_HIT`).
fn is_count(def: &MetricDef) -> bool {
    def.scale_unit.trim().is_empty() && !def.expr.contains('/') && !def.expr.contains(crate::metric_group::DURATION_TIME)
}

/// The event a metric is printed beside: the first counted one it reads.
fn anchor(inputs: &[usize]) -> usize {
    inputs.iter().copied().min().unwrap_or(0)
}

/// Each unit's metrics from its own counts, in the order the units first appear: a
/// metric whose inputs a unit did not all count is left out for it (the memory
/// controllers do not count a strand's events), silently, as the run's own metrics
/// carry the notes.
pub fn evaluate_unit_metrics(defs: &[MetricDef], only: Option<&[String]>, events: &[EventResult], duration_ns: u64) -> Vec<UnitMetrics> {
    unit_metrics(events, |mine| evaluate_metrics(defs, only, mine, &[], duration_ns, &mut Vec::new()))
}

/// Each unit's metrics, `each` computing them from the unit's events as if they were
/// a run of their own (each metric's anchor an index into those), in the order the
/// units first appear.
pub fn unit_metrics(events: &[EventResult], each: impl Fn(&[EventResult]) -> Vec<MetricResult>) -> Vec<UnitMetrics> {
    let mut units: Vec<&Unit> = Vec::new();
    for u in events.iter().flat_map(|e| &e.units) {
        if !units.contains(&&u.unit) {
            units.push(&u.unit);
        }
    }
    units
        .into_iter()
        .map(|unit| {
            // The unit's events, and where each is in the run's.
            let (at, mine): (Vec<usize>, Vec<EventResult>) = events
                .iter()
                .enumerate()
                .filter_map(|(i, e)| {
                    let u = e.units.iter().find(|u| u.unit == *unit)?;
                    Some((i, EventResult { count: u.count, raw: u.raw, units: Vec::new(), ..e.clone() }))
                })
                .unzip();
            let mut metrics = each(&mine);
            for m in &mut metrics {
                m.anchor = at[m.anchor];
            }
            UnitMetrics { unit: unit.clone(), metrics }
        })
        .collect()
}
