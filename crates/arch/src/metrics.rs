//! The derived metrics a PMU can compute: its family's metric table
//! (`data/<family>/metrics.toml`) read against the events of the table in force.
//!
//! A metric belongs to a PMU when every event its expression reads resolves there, so
//! an ARM1156-only event keeps its metrics off `arm1176`, and an `--events-file` that
//! drops an event drops its metrics too.

use pmukit_core::event_string::EventSel;
use pmukit_core::metric::MetricExpr;
use pmukit_core::pmu::Pmu;
use pmukit_core::report::DURATION_TIME;
use pmukit_core::suggest::nearest;
use pmukit_core::table::MetricDef;
use thiserror::Error;

use crate::{family, Catalog};

/// One metric as it applies to one PMU.
#[derive(Debug, Clone)]
pub struct Metric {
    pub def: &'static MetricDef,
    pub pmu: &'static str,
    /// The events the expression reads (perf's `duration_time` aside), in first-use
    /// order, resolved on this PMU; each one's `input` is the name as the expression
    /// writes it.
    pub events: Vec<EventSel>,
    /// The expression reads perf's `duration_time`, the run's wall-clock time.
    pub uses_time: bool,
}

impl Metric {
    /// perf's `MetricGroup`: groups separated by `;`.
    pub fn groups(&self) -> impl Iterator<Item = &'static str> {
        self.def.group.split(';').map(str::trim).filter(|g| !g.is_empty())
    }

    /// The events' names as the expression writes them.
    pub fn event_names(&self) -> impl Iterator<Item = &str> {
        self.events.iter().map(|e| e.input.as_str())
    }
}

/// The metrics `pmu` can compute, in table order.
pub fn metrics(catalog: &Catalog, pmu: &Pmu) -> Vec<Metric> {
    family(pmu).metrics.metrics.iter().filter_map(|def| on_pmu(catalog, pmu, def)).collect()
}

fn on_pmu(catalog: &Catalog, pmu: &Pmu, def: &'static MetricDef) -> Option<Metric> {
    let expr = MetricExpr::parse(&def.expr).ok()?;
    let ids = expr.identifiers();
    let uses_time = ids.contains(&DURATION_TIME);
    let events =
        ids.into_iter().filter(|n| *n != DURATION_TIME).map(|e| catalog.resolve(e, pmu.name()).ok()).collect::<Option<Vec<_>>>()?;
    Some(Metric { def, pmu: pmu.name(), events, uses_time })
}

#[derive(Debug, Clone, Error)]
#[error("unknown metric or metric group '{name}' for {pmus}{hint}")]
pub struct UnknownMetric {
    pub name: String,
    pub pmus: String,
    pub hint: String,
    /// The closest metric and group names.
    pub suggestions: Vec<String>,
}

/// The metrics a `-M` argument names on the PMUs of one run: a metric's name or a
/// metric group, case-insensitively. A group gives all its metrics, in table order.
pub fn select(catalog: &Catalog, pmus: &[&Pmu], name: &str) -> Result<Vec<Metric>, UnknownMetric> {
    let all: Vec<Metric> = pmus.iter().flat_map(|p| metrics(catalog, p)).collect();
    let chosen: Vec<Metric> =
        all.iter().filter(|m| m.def.name.eq_ignore_ascii_case(name) || m.groups().any(|g| g.eq_ignore_ascii_case(name))).cloned().collect();
    if !chosen.is_empty() {
        return Ok(chosen);
    }
    let mut names: Vec<&str> = all.iter().map(|m| m.def.name.as_ref()).chain(all.iter().flat_map(|m| m.groups())).collect();
    names.sort_unstable();
    names.dedup();
    // A name that is a part of a metric's (`ipc` of `ia64_ipc`) is offered first.
    let mut near: Vec<&str> = names.iter().copied().filter(|n| n.split('_').any(|part| part.eq_ignore_ascii_case(name))).collect();
    for n in nearest(name, names.iter().copied()) {
        if !near.contains(&n) {
            near.push(n);
        }
    }
    near.truncate(5);
    let pmu_names: Vec<&str> = pmus.iter().map(|p| p.name()).collect();
    // A metric or group of other PMUs says which, and the --pmu that takes it.
    let elsewhere: Vec<&str> = catalog
        .pmus
        .iter()
        .filter(|p| !pmu_names.contains(&p.name()))
        .filter(|p| {
            metrics(catalog, p).iter().any(|m| m.def.name.eq_ignore_ascii_case(name) || m.groups().any(|g| g.eq_ignore_ascii_case(name)))
        })
        .map(|p| p.name())
        .collect();
    let mut hint = match (near.is_empty(), pmu_names.first()) {
        (false, _) => format!(" (did you mean {}?)", near.join(", ")),
        (true, Some(first)) if elsewhere.is_empty() => format!("; `pmu list --metrics {first}` lists them"),
        _ => String::new(),
    };
    // The default PMU where it is one of them, else the first.
    if let Some(pmu) = elsewhere.iter().find(|&&p| p == crate::DEFAULT_PMU).or(elsewhere.first()) {
        hint.push_str(&format!("; '{name}' is a metric of {}: give --pmu {pmu}", elsewhere.join(", ")));
    }
    Err(UnknownMetric {
        name: name.to_string(),
        pmus: pmu_names.join(", "),
        hint,
        suggestions: near.into_iter().map(str::to_string).collect(),
    })
}

/// Every PMU's metric called `name` (case-insensitively), for `pmu describe`: one per
/// family, with the PMUs it applies to.
pub fn by_name(catalog: &Catalog, name: &str) -> Vec<(Metric, Vec<&'static str>)> {
    let mut found: Vec<(Metric, Vec<&'static str>)> = Vec::new();
    for pmu in &catalog.pmus {
        let Some(def) = family(pmu).metrics.metrics.iter().find(|d| d.name.eq_ignore_ascii_case(name)) else { continue };
        let Some(metric) = on_pmu(catalog, pmu, def) else { continue };
        match found.iter_mut().find(|(m, _)| std::ptr::eq(m.def, def)) {
            Some((_, pmus)) => pmus.push(pmu.name()),
            None => found.push((metric, vec![pmu.name()])),
        }
    }
    found
}
