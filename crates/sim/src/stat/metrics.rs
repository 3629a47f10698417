//! The derived metrics of a simulated run: which metrics it computes, the sets of
//! events each reads (which the schedule keeps in one group where they fit), and
//! their values over the run's counts, each group's where it has them.

use pmukit_arch::{self as arch, Catalog};
use pmukit_core::event_string::EventSel;
use pmukit_core::metric::MetricExpr;
use pmukit_core::report::{evaluate_metrics, evaluate_unit_metrics, Aggregation, StatReport};
use pmukit_core::table::MetricDef;

use super::StatOptions;

/// The metrics of the PMUs named `pmus`, which metrics and domains may refer to; the
/// run computes those `-M` chose (`StatOptions::metrics`), or every one whose events
/// it counts.
pub(super) fn definitions(catalog: &Catalog, pmus: &[&str]) -> Vec<MetricDef> {
    pmus.iter().filter_map(|name| catalog.pmu(name).ok()).flat_map(|pmu| arch::family(pmu).metrics.metrics.iter()).cloned().collect()
}

/// Whether the run computes `def`.
fn computed(def: &MetricDef, opts: &StatOptions) -> bool {
    opts.metrics.as_ref().is_none_or(|names| names.iter().any(|n| n.eq_ignore_ascii_case(&def.name)))
}

/// The events of `sels` that `exprs` of `def` read, themselves or through the
/// metrics they name, as indices; `None` when they read one the run does not count.
fn reads(def: &MetricDef, exprs: &[&str], defs: &[MetricDef], sels: &[EventSel]) -> Option<Vec<usize>> {
    let mut exprs: Vec<String> = exprs.iter().filter(|e| !e.trim().is_empty()).map(|e| e.to_string()).collect();
    let mut seen = vec![def.name.to_string()];
    let mut found = Vec::new();
    while let Some(expr) = exprs.pop() {
        let parsed = MetricExpr::parse(&expr).ok()?;
        for id in parsed.identifiers().into_iter().filter(|&id| id != pmukit_core::report::DURATION_TIME) {
            if let Some(p) = sels.iter().position(|s| s.name().eq_ignore_ascii_case(id)) {
                if !found.contains(&p) {
                    found.push(p);
                }
            } else if let Some(d) = defs.iter().find(|d| d.name.eq_ignore_ascii_case(id)) {
                if !seen.iter().any(|s| s.eq_ignore_ascii_case(&d.name)) {
                    seen.push(d.name.to_string());
                    exprs.push(d.expr.to_string());
                }
            } else {
                return None;
            }
        }
    }
    Some(found)
}

/// The sets of events to count in one group where they fit: `-M`'s (from the caller)
/// first, then each computed metric's, as perf groups a metric's events, then each
/// one's with the events its domain's bounds read, so that the check of its domain
/// compares counts of one interval where it can.
pub(super) fn together(defs: &[MetricDef], sels: &[EventSel], opts: &StatOptions) -> Vec<Vec<usize>> {
    let mut sets = opts.together.clone();
    let computed: Vec<&MetricDef> = defs.iter().filter(|d| computed(d, opts)).collect();
    let value = computed.iter().map(|d| reads(d, &[&d.expr], defs, sels));
    let checked = computed.iter().map(|d| reads(d, &[&d.expr, &d.min, &d.max], defs, sels));
    for set in value.chain(checked) {
        if let Some(mut set) = set.filter(|s| s.len() > 1) {
            set.sort_unstable();
            if !sets.iter().any(|s| {
                let mut s = s.clone();
                s.sort_unstable();
                s == set
            }) {
                sets.push(set);
            }
        }
    }
    sets
}

/// Derives the metrics of a finished report (one run's, or the mean of `-r`'s) from
/// its counts, with their notes.
pub fn evaluate(catalog: &Catalog, opts: &StatOptions, report: &mut StatReport) {
    let pmus: Vec<&str> = report.pmu.iter().map(String::as_str).collect();
    let defs = definitions(catalog, &pmus);
    let only = opts.metrics.as_deref();
    let mut notes = Vec::new();
    report.metrics = evaluate_metrics(&defs, only, &report.events, &report.groups, report.elapsed_ns, &mut notes);
    report.unit_metrics = if opts.aggregation == Aggregation::Total {
        Vec::new()
    } else {
        evaluate_unit_metrics(&defs, only, &report.events, report.elapsed_ns)
    };
    for note in notes {
        if !report.notes.contains(&note) {
            report.notes.push(note);
        }
    }
}
