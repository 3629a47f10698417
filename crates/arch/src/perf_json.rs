//! Linux perf's pmu-events JSON (`tools/perf/pmu-events/arch/<arch>/<vendor>/<model>/
//! *.json`, read by `jevents.py`): writing a PMU's events and metrics in that layout,
//! and reading such a directory back into an events file.
//!
//! Only keys `jevents.py` maps are written (perf 6.1 to 7.2): `EventName`,
//! `ConfigCode` (where the PMU has a Linux driver: the `config` that driver takes, as
//! its PMU has no `format/` for `event=`/`umask=` terms) or `EventCode` and `UMask`,
//! `BriefDescription`, `PublicDescription`; and `MetricName`, `MetricExpr`,
//! `MetricGroup`, `ScaleUnit`, `BriefDescription`, `PublicDescription`. Every value is
//! a string, as the C generator of perf 4.x-5.x required. One file per topic: the
//! table's `category` (Montecito), else the PMU's name; metrics in `metrics.json`.

use std::collections::BTreeMap;

use pmukit_core::pmu::Pmu;
use pmukit_core::table::{Combinations, EventDef, EventTable, UmaskDef};
use serde_json::{json, Map, Value};
use thiserror::Error;

use crate::{family, linux, metrics, Catalog};

/// A file to write, by its path under the export directory.
#[derive(Debug, Clone, PartialEq)]
pub struct File {
    pub path: String,
    pub text: String,
}

/// Where each PMU's tables go in perf's tree, and the CPU identifier its mapfile row
/// carries: (arch, vendor, CPUID). perf matches CPUID against its own identification
/// of the CPU (`PERF_CPUID` overrides it on architectures where perf has none).
fn place(pmu: &Pmu) -> (&'static str, &'static str, &'static str) {
    match pmu.name() {
        // MIDR: implementer 0x41 (ARM), architecture 0xF (CPUID scheme), part numbers
        // 0xB36, 0xB56, 0xB76 (the cores' TRMs).
        "arm1136" => ("arm", "arm", "0x4107b360"),
        "arm1156" => ("arm", "arm", "0x4107b560"),
        "arm1176" => ("arm", "arm", "0x410fb760"),
        "montecito" | "montecito-st" => ("ia64", "intel", "GenuineIntel-32-0"),
        _ => ("sparc", "oracle", "SPARC-T4"),
    }
}

/// perf's "topic" file for an event: its category in the table, else the PMU.
///
/// The file name is made safe and never another file's: letters and digits, other
/// characters as `-`, at most 64 characters; a category with none (`!!!`) is `other`,
/// and one named `metrics` is `metrics-events`, since `metrics.json` holds the metrics.
/// Categories that come to the same name share its file.
fn topic(pmu: &Pmu, e: &EventDef) -> String {
    let category = e.attr("category").unwrap_or(pmu.name());
    let slug: String = category.to_ascii_lowercase().chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).take(64).collect();
    let name = match slug.trim_matches('-') {
        "" => "other",
        "metrics" => "metrics-events",
        s => s,
    };
    format!("{name}.json")
}

/// perf's one-line description: the first sentence.
fn brief(description: &str) -> String {
    let first = description.split(". ").next().unwrap_or(description);
    first.trim_end_matches('.').to_string()
}

/// One perf event entry for `e` with unit mask `u`.
fn entry(pmu: &Pmu, e: &EventDef, u: Option<&UmaskDef>) -> Value {
    let name = match u {
        Some(u) => format!("{}.{}", e.name, u.name),
        None => e.name.to_string(),
    };
    let umask = u.map_or(0, |u| u.value);
    let mut m = Map::new();
    m.insert("EventName".into(), json!(name));
    let sel =
        pmukit_core::event_string::EventSel { input: name.clone(), ..pmukit_core::event_string::EventSel::bare(pmu.name(), e, umask) };
    match linux::config(pmu, &sel).filter(|_| pmu.desc.linux_pmu.is_some()) {
        Some(config) => {
            m.insert("ConfigCode".into(), json!(format!("{config:#x}")));
        }
        None => {
            m.insert("EventCode".into(), json!(format!("{:#x}", e.code)));
            if umask != 0 {
                m.insert("UMask".into(), json!(format!("{umask:#x}")));
            }
        }
    }
    let public = match u {
        Some(u) if !u.description.is_empty() => format!("{} {}", e.description.trim_end(), u.description),
        _ => e.description.to_string(),
    };
    let short = match u {
        Some(u) if !u.description.is_empty() => brief(&u.description),
        _ => brief(&e.description),
    };
    m.insert("BriefDescription".into(), json!(short));
    m.insert("PublicDescription".into(), json!(public));
    Value::Object(m)
}

/// pmukit's companion file in an exported directory: the family's whole events table
/// in the events-file format, for what perf's keys cannot say (aliases, availability
/// per core, counter restrictions, modifiers, unit-mask rules, sub-events). `import`
/// reads it back whole, once perf's entries are checked against it.
pub const COMPANION: &str = "pmukit-events.toml";

/// The files of `pmu`'s tables in perf's layout, with pmukit's companion, and notes on
/// what could not be written (a metric whose expression perf cannot read).
pub fn export(catalog: &Catalog, pmu: &Pmu) -> (Vec<File>, Vec<String>) {
    let (arch, vendor, cpuid) = place(pmu);
    let dir = format!("{arch}/{vendor}/{}", pmu.name());
    let mut topics: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for e in pmu.events().filter(|e| e.exists_on(pmu.desc.model) && e.subevent_of.is_empty()) {
        let entries: Vec<Value> =
            if e.umasks.is_empty() { vec![entry(pmu, e, None)] } else { e.umasks.iter().map(|u| entry(pmu, e, Some(u))).collect() };
        topics.entry(topic(pmu, e)).or_default().extend(entries);
    }
    let mut notes = Vec::new();
    let mut metric_entries = Vec::new();
    // perf resolves a metric's events among the entries written: a metric over an event
    // the export leaves out (a sub-event) would not load.
    let written: Vec<&str> = topics.values().flatten().filter_map(|e| e.get("EventName").and_then(Value::as_str)).collect();
    for m in metrics::metrics(catalog, pmu) {
        // perf reads `EVENT:mod` as a modifier it must know; pmukit's :d (CCNT's
        // divider) is not one of perf's.
        if m.events.iter().any(|e| !e.modifiers.is_empty()) {
            notes.push(format!(
                "metric {} is not exported: perf has no modifier for {}",
                m.def.name,
                m.events.iter().map(|e| e.name()).collect::<Vec<_>>().join(", ")
            ));
            continue;
        }
        if let Some(missing) = m.events.iter().map(|e| e.name()).find(|n| !written.iter().any(|w| w.eq_ignore_ascii_case(n))) {
            notes.push(format!("metric {} is not exported: its event {missing} is not among the events written", m.def.name));
            continue;
        }
        let mut v = Map::new();
        v.insert("MetricName".into(), json!(m.def.name));
        v.insert("MetricExpr".into(), json!(m.def.expr));
        if !m.def.group.is_empty() {
            v.insert("MetricGroup".into(), json!(m.def.group.replace(',', ";")));
        }
        if !m.def.scale_unit.is_empty() {
            v.insert("ScaleUnit".into(), json!(m.def.scale_unit));
        }
        v.insert("BriefDescription".into(), json!(m.def.description));
        if !m.def.source.is_empty() {
            v.insert("PublicDescription".into(), json!(format!("{} ({})", m.def.description, m.def.source)));
        }
        metric_entries.push(Value::Object(v));
    }
    let mut files: Vec<File> =
        topics.into_iter().map(|(name, entries)| File { path: format!("{dir}/{name}"), text: pretty(&Value::Array(entries)) }).collect();
    if !metric_entries.is_empty() {
        files.push(File { path: format!("{dir}/metrics.json"), text: pretty(&Value::Array(metric_entries)) });
    }
    match toml::to_string(pmu.table.as_ref()) {
        Ok(text) => files.push(File { path: format!("{dir}/{COMPANION}"), text }),
        Err(e) => notes.push(format!("{COMPANION} is not written: {e}")),
    }
    files.push(File {
        path: format!("{arch}/mapfile.csv"),
        text: format!("Family-model,Version,Filename,EventType\n{cpuid},v1,{vendor}/{},core\n", pmu.name()),
    });
    (files, notes)
}

fn pretty(v: &Value) -> String {
    let mut s = serde_json::to_string_pretty(v).unwrap_or_default();
    s.push('\n');
    s
}

#[derive(Debug, Clone, PartialEq, Error)]
pub enum ImportError {
    #[error("{origin}: not pmu-events JSON: {why}")]
    Json { origin: String, why: String },
    #[error("{origin}: event {index}: {why}")]
    Entry { origin: String, index: usize, why: String },
    #[error("no event in {0}: expected perf's pmu-events JSON files (arrays of objects with EventName)")]
    NoEvents(String),
    #[error("none of the {total} events read fits {pmu}; the first: {first}")]
    NoneFit { pmu: String, total: usize, first: String },
    #[error("the events read do not make a valid {family} table: {why}")]
    Table { family: String, why: String },
    #[error("{origin}: {why}")]
    Companion { origin: String, why: String },
}

/// perf's value of a code key: a string that Python's `int(x, 0)` reads (the first of a
/// comma list for `EventCode`), or a number.
fn code(v: &Value) -> Option<u64> {
    match v {
        Value::Number(n) => n.as_u64(),
        Value::String(s) => {
            let first = s.split(',').next().unwrap_or("").trim();
            pmukit_core::number::parse_u64(first).ok()
        }
        _ => None,
    }
}

/// An events file for `pmu`'s family from pmu-events JSON files (`(origin, text)`):
/// the events of the model directory, with `ArchStdEvent` entries completed from
/// `standard` (the arch root's files), events that share a code and a name before
/// their first `.` made one event with unit masks. Metric entries are skipped; events
/// the PMU cannot encode are left out with a note. With pmukit's `companion` (an
/// export's `COMPANION`), its table whole, once every perf entry is found in it.
pub fn import(
    pmu: &Pmu,
    files: &[(String, String)],
    standard: &[(String, String)],
    companion: Option<(&str, &str)>,
) -> Result<(EventTable, Vec<String>), ImportError> {
    let parse = |origin: &str, text: &str| -> Result<Vec<Value>, ImportError> {
        // perf 6.12's metric group descriptions: an object, not events (jevents.py
        // leaves them out of the tables too).
        if origin.ends_with("metricgroups.json") {
            return Ok(Vec::new());
        }
        let v: Value = serde_json::from_str(text).map_err(|e| ImportError::Json { origin: origin.to_string(), why: e.to_string() })?;
        match v {
            Value::Array(a) => Ok(a),
            _ => Err(ImportError::Json { origin: origin.to_string(), why: "the file is not an array of objects".to_string() }),
        }
    };
    let mut notes = Vec::new();
    let mut std_events: Vec<Value> = Vec::new();
    // The arch root is read only to complete ArchStdEvent entries: outside perf's tree
    // the directories above may hold any JSON, which is no reason to refuse the model.
    for (origin, text) in standard {
        match parse(origin, text) {
            Ok(entries) => std_events.extend(entries),
            Err(e) => notes.push(format!("{e}; not read for ArchStdEvent entries")),
        }
    }
    let mut events: Vec<EventDef> = Vec::new();
    // (name, code, unit mask, description) of every event entry, in file order.
    let mut read: Vec<(String, u64, u64, String)> = Vec::new();
    let mut total = 0;
    let mut skipped = 0;
    for (origin, text) in files {
        for (index, entry) in parse(origin, text)?.into_iter().enumerate() {
            let Some(obj) = entry.as_object() else {
                return Err(ImportError::Entry { origin: origin.clone(), index, why: "not an object".to_string() });
            };
            if obj.contains_key("MetricName") && !obj.contains_key("EventName") {
                continue;
            }
            // An entry with only an ArchStdEvent is that standard event, by its name.
            // Other entries (x86's counter.json describes the counters) are not events.
            let Some(name) = obj.get("EventName").or_else(|| obj.get("ArchStdEvent")).and_then(Value::as_str).map(str::to_string) else {
                skipped += 1;
                continue;
            };
            total += 1;
            // A standard event's fields fill what the entry leaves out.
            let std = obj.get("ArchStdEvent").and_then(Value::as_str).and_then(|s| {
                std_events.iter().find(|e| e.get("EventName").and_then(Value::as_str).is_some_and(|n| n.eq_ignore_ascii_case(s)))
            });
            let field = |key: &str| obj.get(key).or_else(|| std.and_then(|s| s.get(key)));
            let (event_code, umask) = match (field("ConfigCode").and_then(code), field("EventCode").and_then(code)) {
                (Some(config), _) => match linux::raw_code(pmu, config) {
                    Ok(raw) => (raw >> pmu.desc.raw_umask_bits, raw & ((1 << pmu.desc.raw_umask_bits) - 1)),
                    Err(why) => {
                        notes.push(format!("{name} is left out: {why}"));
                        continue;
                    }
                },
                (None, Some(c)) => (c, field("UMask").and_then(code).unwrap_or(0)),
                (None, None) => {
                    notes.push(format!(
                        "{name} is left out: it has no EventCode or ConfigCode{}",
                        if obj.contains_key("ArchStdEvent") { " (give the arch root for its ArchStdEvent)" } else { "" }
                    ));
                    continue;
                }
            };
            if event_code > pmu.desc.max_code || umask > pmu.desc.max_umask {
                notes.push(format!(
                    "{name} is left out: code {event_code:#x} unit mask {umask:#x} do not fit {} (at most {:#x} and {:#x})",
                    pmu.name(),
                    pmu.desc.max_code,
                    pmu.desc.max_umask
                ));
                continue;
            }
            let description =
                field("PublicDescription").or_else(|| field("BriefDescription")).and_then(Value::as_str).unwrap_or("").to_string();
            read.push((name, event_code, umask, description));
        }
    }
    if let Some((origin, text)) = companion {
        let table = whole(pmu, origin, text, &read)?;
        notes.push(format!(
            "{origin}: pmukit's companion table is imported whole ({} events; perf's {} entries agree with it), with the aliases, availability per core, restrictions and modifiers perf's keys cannot say",
            table.events.len(),
            read.len()
        ));
        return Ok((table, notes));
    }
    // `E.U` is unit mask U of event E (an event name has no dot in pmukit's tables).
    for (name, event_code, umask, description) in &read {
        let (base, rest) = match name.split_once('.') {
            Some((b, r)) => (b.to_string(), Some(r.to_string())),
            None => (name.clone(), None),
        };
        // One code is one event in pmukit's tables: an entry of another name with a
        // code already taken (x86's ICACHE_16B.* and ICACHE_64B.* share 0x83) becomes
        // a unit mask of that event, under its whole name.
        let (base, rest) = match events.iter().find(|e| e.code == *event_code && e.name != base) {
            Some(owner) => (owner.name.to_string(), Some(name.clone())),
            None => (base, rest),
        };
        match (events.iter_mut().find(|e| e.name == base), rest) {
            (Some(e), Some(_)) if e.umasks.iter().any(|u| u.value == *umask) => {
                notes.push(format!("{name} is left out: {} already has unit mask {umask:#x}", e.name));
            }
            (Some(e), Some(u)) if e.code == *event_code => e.umasks.to_mut().push(umask_def(u, *umask, description)),
            (Some(_), _) => notes.push(format!("{name} is left out: {base} is already another event")),
            (None, Some(u)) => events.push(event_def(base, *event_code, description, vec![umask_def(u, *umask, description)])),
            (None, None) => events.push(event_def(base, *event_code, description, Vec::new())),
        }
    }
    if events.is_empty() && total > 0 {
        return Err(ImportError::NoneFit { pmu: pmu.name().to_string(), total, first: notes.first().cloned().unwrap_or_default() });
    }
    if events.is_empty() {
        return Err(ImportError::NoEvents(files.iter().map(|(o, _)| o.as_str()).collect::<Vec<_>>().join(", ")));
    }
    if skipped > 0 {
        notes.push(format!("{skipped} entries with neither EventName nor ArchStdEvent (nor MetricName) are not events and were skipped"));
    }
    if total > events.iter().map(|e| e.umasks.len().max(1)).sum::<usize>() {
        notes.push(format!("{} of {total} events read are in the table", events.iter().map(|e| e.umasks.len().max(1)).sum::<usize>()));
    }
    let family = family(pmu);
    let table = EventTable::new(family.name.into(), "Linux perf pmu-events JSON (pmu import perf-json)".into(), events.into());
    family.validate(&table, "pmu-events JSON").map_err(|e| ImportError::Table { family: family.name.to_string(), why: e.to_string() })?;
    Ok((table, notes))
}

/// The companion's table, valid for `pmu`'s family, holding every perf entry read
/// (`E` with its code, `E.U` with its unit mask's value): else perf's files were
/// changed without it, and which to believe is the user's call.
fn whole(pmu: &Pmu, origin: &str, text: &str, read: &[(String, u64, u64, String)]) -> Result<EventTable, ImportError> {
    let refuse = |why: String| ImportError::Companion { origin: origin.to_string(), why };
    let table = EventTable::from_toml(text, origin).map_err(|e| refuse(e.to_string()))?;
    crate::family(pmu).validate(&table, origin).map_err(|e| refuse(e.to_string()))?;
    for (name, code, umask, _) in read {
        let (base, unit) = name.split_once('.').map_or((name.as_str(), None), |(b, u)| (b, Some(u)));
        let event = table.events.iter().find(|e| e.name.eq_ignore_ascii_case(base));
        let agrees = event.is_some_and(|e| {
            e.code == *code && unit.is_none_or(|u| e.umasks.iter().any(|m| m.name.eq_ignore_ascii_case(u) && m.value == *umask))
        });
        if !agrees {
            return Err(refuse(format!(
                "perf's entry {name} (code {code:#x}, unit mask {umask:#x}) is not in this table: the JSON files were changed without it; remove {COMPANION} to import perf's entries alone"
            )));
        }
    }
    Ok(table)
}

fn umask_def(name: String, value: u64, description: &str) -> UmaskDef {
    UmaskDef {
        name: name.into(),
        value,
        description: description.to_string().into(),
        default: false,
        aliases: Vec::new().into(),
        attrs: Vec::new().into(),
        ignored: 0,
    }
}

/// An imported event: perf's tables say nothing of counters, models or unit-mask
/// rules, so those are the family's defaults (any counter, every model, unit masks
/// combine freely).
fn event_def(name: String, code: u64, description: &str, umasks: Vec<UmaskDef>) -> EventDef {
    EventDef {
        name: name.into(),
        code,
        description: description.to_string().into(),
        aliases: Vec::new().into(),
        umasks: umasks.into(),
        only_on: Vec::new().into(),
        unused_on: Vec::new().into(),
        counters: Vec::new().into(),
        modifiers: Vec::new().into(),
        attrs: Vec::new().into(),
        umask_ignored: 0,
        umask_combinations: Combinations::Any,
        umask_note: "".into(),
        invalid_umasks: Vec::new().into(),
        subevent_of: "".into(),
    }
}
