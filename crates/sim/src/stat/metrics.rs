//! The derived metrics of a simulated run: which metrics it computes, the sets of
//! events each reads (which the schedule keeps in one group where they fit), and
//! their values over the run's counts, each group's where it has them.

use pmukit_arch::{self as arch, Catalog};
use pmukit_core::event_string::EventSel;
use pmukit_core::report::{evaluate_metrics, evaluate_unit_metrics, events_read, Aggregation, StatReport};
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

/// The sets of events to count in one group where they fit: `-M`'s (from the caller)
/// first, then each computed metric's, as perf groups a metric's events, then each
/// one's with the events its domain's bounds read, so that the check of its domain
/// compares counts of one interval where it can.
pub(super) fn together(defs: &[MetricDef], sels: &[EventSel], opts: &StatOptions) -> Vec<Vec<usize>> {
    let mut sets = opts.together.clone();
    let computed: Vec<&MetricDef> = defs.iter().filter(|d| computed(d, opts)).collect();
    let index = |name: &str| sels.iter().position(|s| s.name().eq_ignore_ascii_case(name));
    let value = computed.iter().map(|d| events_read(d, &[&d.expr], defs, index));
    let checked = computed.iter().map(|d| events_read(d, &[&d.expr, &d.min, &d.max], defs, index));
    // The schedule passes over a set an earlier one holds (`schedule::groups`).
    sets.extend(value.chain(checked).flatten().filter(|s| s.len() > 1));
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
