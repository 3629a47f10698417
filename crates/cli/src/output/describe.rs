//! `pmu describe`: everything known about one event (with or without a chosen unit
//! mask) or one derived metric, and the JSON form of an event that `pmu list --json`
//! shares.

use pmukit_arch::metrics::Metric;
use pmukit_core::event_string::EventSel;
use pmukit_core::pmu::{ModifierDef, ModifierKind, Pmu};
use pmukit_core::table::{Combinations, EventDef, UmaskDef};
use pmukit_sim::machine::assumption::Assumption;
use pmukit_sim::stat::assumed;
use serde_json::{json, Value};

use super::layout::{self, ranges};
use super::{hex, registers_json, Out};
use crate::failure::Failure;

/// The modifiers `e` accepts on `pmu`: the family's own, then the event's.
pub fn modifiers(pmu: &Pmu, e: &EventDef) -> Vec<&'static ModifierDef> {
    pmu.desc
        .modifiers
        .iter()
        .chain(pmu.desc.event_modifiers.iter().filter(|m| e.modifiers.iter().any(|n| n.eq_ignore_ascii_case(m.name))))
        .collect()
}

fn modifier_kind(m: &ModifierDef) -> String {
    match m.kind {
        ModifierKind::Flag => "flag".to_string(),
        ModifierKind::Number { min, max } => format!("{min}..={max}"),
    }
}

fn modifier_json(m: &ModifierDef) -> Value {
    let (min, max) = match m.kind {
        ModifierKind::Flag => (0, 1),
        ModifierKind::Number { min, max } => (min, max),
    };
    json!({"name": m.name, "kind": if matches!(m.kind, ModifierKind::Flag) { "flag" } else { "number" }, "min": min, "max": max, "description": m.description})
}

fn attrs_json(attrs: &[pmukit_core::table::Attr]) -> Value {
    Value::Object(attrs.iter().map(|a| (a.key.to_string(), Value::String(a.value.to_string()))).collect())
}

fn combinations_name(c: Combinations) -> &'static str {
    match c {
        Combinations::Any => "any",
        Combinations::Meaningless => "meaningless",
        Combinations::Listed => "listed",
    }
}

/// What the hardware does with unit-mask values other than the listed ones.
fn combination_rule(e: &EventDef) -> String {
    let mut rule = match e.umask_combinations {
        Combinations::Any => "several unit masks may be joined (EVENT.A.B): the count is the union of their events".to_string(),
        Combinations::Meaningless => {
            "several unit masks may be joined, but the spec calls such combinations meaningless (pmu warns)".to_string()
        }
        Combinations::Listed => "only the listed values are meaningful: one unit mask at a time".to_string(),
    };
    if e.umask_ignored != 0 {
        rule.push_str(&format!("; the hardware ignores unit-mask bits {:#x}", e.umask_ignored));
    }
    if !e.umask_note.is_empty() {
        rule.push_str(&format!(". {}", e.umask_note));
    }
    rule
}

fn pattern(value: u64, ignored: u64) -> String {
    if ignored == 0 {
        format!("{value:#x}")
    } else {
        format!("{value:#x} (bits {ignored:#x} ignored)")
    }
}

fn umask_json(u: &UmaskDef) -> Value {
    json!({
        "name": u.name, "value": u.value, "ignored": u.ignored, "default": u.default, "description": u.description,
        "aliases": u.aliases, "attrs": attrs_json(&u.attrs),
    })
}

/// The PMUs of `pmu`'s family that have `e`.
fn available_on(pmu: &Pmu, e: &EventDef) -> Vec<&'static str> {
    pmukit_arch::family(pmu).pmus.iter().filter(|d| e.exists_on(d.model)).map(|d| d.name).collect()
}

/// Everything the table knows of `e` on `pmu`, as `pmu list --json` and
/// `pmu describe --json` give it.
pub fn event_json(pmu: &Pmu, e: &EventDef) -> Value {
    let models = available_on(pmu, e);
    let invalid: Vec<Value> = e
        .invalid_umasks
        .iter()
        .map(|b| json!({"value": b.value, "ignored": b.ignored, "kind": format!("{:?}", b.kind).to_lowercase(), "note": b.note}))
        .collect();
    json!({
        "pmu": pmu.name(),
        "name": e.name,
        "code": e.code,
        "description": e.description,
        "aliases": e.aliases,
        "counters": pmukit_arch::event_counters(pmu, e),
        "modifiers": modifiers(pmu, e).into_iter().map(modifier_json).collect::<Vec<_>>(),
        "umasks": e.umasks.iter().map(umask_json).collect::<Vec<_>>(),
        "umask_rules": {
            "combinations": combinations_name(e.umask_combinations),
            "ignored_bits": e.umask_ignored,
            "note": e.umask_note,
            "invalid": invalid,
        },
        "needs_umask": !e.umasks.is_empty() && !e.umasks.iter().any(|u| u.default),
        "subevent_of": e.subevent_of,
        "available_on": models,
        "unused_on": e.unused_on,
        "attrs": attrs_json(&e.attrs),
    })
}

/// The labelled assumptions (docs/assumptions.md) the simulated machine's count of
/// the selection depends on: of `sel`, or of any of the event's unit masks when none
/// is chosen, and how many the machine has. `None` when no machine model counts the
/// PMU's events.
fn assumptions(pmu: &Pmu, e: &EventDef, sel: Option<&EventSel>) -> Option<(Vec<Assumption>, usize)> {
    let machine = assumed::assumptions(pmu)?.len();
    let selection = |umask: u64| EventSel::bare(pmu.name(), e, umask);
    let sels: Vec<EventSel> = match sel {
        Some(s) => vec![s.clone()],
        None if e.umasks.is_empty() => vec![selection(0)],
        None => e.umasks.iter().map(|u| selection(u.value)).collect(),
    };
    Some((assumed::depends_on(pmu, &sels)?, machine))
}

/// A derived metric as `pmu list --metrics --json` and `pmu describe --json` give it.
pub fn metric_json(m: &Metric, pmus: &[&str]) -> Value {
    json!({
        "name": m.def.name,
        "pmus": pmus,
        "expr": m.def.expr,
        "description": m.def.description,
        "groups": m.groups().collect::<Vec<_>>(),
        "scale_unit": m.def.scale_unit,
        "events": m.event_names().collect::<Vec<_>>(),
        "uses_duration_time": m.uses_time,
        "source": m.def.source,
    })
}

impl Out {
    /// An event, with the selection `sel` made of it when the input chose one (its
    /// unit masks and encoding), or the bare table entry for an event that needs a
    /// unit mask.
    pub fn describe_event(&self, pmu: &Pmu, e: &EventDef, sel: Option<&EventSel>) -> Result<(), Failure> {
        // The encoding of the event alone, with the set-wide registers it writes too (a
        // Montecito capture event's PMC40, say); describing a raw or refused event
        // still works.
        let placed = sel.and_then(|s| pmukit_arch::encode_set(pmu, std::slice::from_ref(s)).ok()).and_then(|set| {
            let mut event = set.events.into_iter().next()?;
            let extra: Vec<_> = set.registers.into_iter().filter(|(r, _)| !event.registers.iter().any(|(own, _)| own == r)).collect();
            event.registers.extend(extra);
            Some(event)
        });
        let assumed = assumptions(pmu, e, sel);
        if self.json {
            let mut v = event_json(pmu, e);
            if let Some(s) = sel {
                v["selected_umasks"] = json!(s.umask_names);
            }
            if let Some((list, _)) = &assumed {
                v["assumptions"] = list.iter().map(|a| json!({"key": a.name(), "value": a.value})).collect();
            }
            if let Some(p) = &placed {
                v["encoding"] = json!({"counter": p.counter, "registers": registers_json(&p.registers)});
            }
            return self.json(&json!({"event": v}));
        }
        let width = layout::width();
        let mut s = format!("{}::{}  (code {:#04x})\n", pmu.name(), e.name, e.code);
        let mut t = layout::table(&[], width);
        t.add_row(vec![String::new(), e.description.to_string()]);
        s.push_str(&format!("{}\n\n", layout::render(t, &[0])));

        let mut t = layout::table(&[], width);
        let mut row = |k: &str, v: String| {
            t.add_row(vec![k.to_string(), v]);
        };
        if !e.aliases.is_empty() {
            row("aliases", e.aliases.join(", "));
        }
        row("available on", available_on(pmu, e).join(", "));
        if !e.unused_on.is_empty() {
            row("unused on", e.unused_on.join(", "));
        }
        if !e.subevent_of.is_empty() {
            row("selection of", e.subevent_of.to_string());
        }
        let counters = match sel {
            Some(s) => pmu.counter_names(pmukit_arch::allowed_counters(pmu, std::slice::from_ref(s)).first().copied().unwrap_or(0)),
            None => pmukit_arch::event_counters(pmu, e),
        };
        row("counters", ranges(&counters).join(" "));
        for m in modifiers(pmu, e) {
            row("modifier", format!(":{} ({}) {}", m.name, modifier_kind(m), m.description));
        }
        if !e.attrs.is_empty() {
            row("attributes", e.attrs.iter().map(|a| format!("{}={}", a.key, a.value)).collect::<Vec<_>>().join(", "));
        }
        if !e.umasks.is_empty() {
            row("unit masks", combination_rule(e));
        }
        for bad in e.invalid_umasks.iter() {
            row("refused mask", format!("{} {} {}", pattern(bad.value, bad.ignored), bad.kind.describe(), bad.note));
        }
        match (&placed, sel) {
            (Some(p), _) => {
                let regs: Vec<String> = p.registers.iter().map(|(r, v)| format!("{r}={v:#010x}")).collect();
                row("encoding", format!("on {}: {}", p.counter, regs.join(" ")));
            }
            (None, None) => {
                let first = e.umasks.first().map_or("UMASK".to_string(), |u| u.name.to_string());
                row("encoding", format!("choose a unit mask, e.g. {}::{}.{first}", pmu.name(), e.name));
            }
            (None, Some(_)) => {}
        }
        match assumed.as_ref().map(|(list, all)| (list.as_slice(), list.len() == *all)) {
            Some(([], _)) => row("assumptions", "none: no labelled assumption shapes what the simulated machine counts for it".to_string()),
            Some((list, true)) => row(
                "assumptions",
                format!(
                    "all {} labelled assumptions of the simulated machine (docs/assumptions.md): it counts stalled cycles, which every assumed size and timing moves",
                    list.len()
                ),
            ),
            Some((list, false)) => {
                let values: Vec<String> = list.iter().map(|a| format!("{} = {}", a.name(), a.value)).collect();
                row("assumptions", format!("{}: labelled assumptions of the simulated machine (docs/assumptions.md)", values.join(", ")))
            }
            None => {}
        }
        s.push_str(&format!("{}\n", layout::render(t, &[0])));

        if !e.umasks.is_empty() {
            let mut t = layout::table(&["unit mask", "value", "description"], width);
            for u in e.umasks.iter() {
                let mut name = format!(".{}", u.name);
                let chosen = sel.is_some_and(|s| s.umask_names.iter().any(|n| n.eq_ignore_ascii_case(&u.name)));
                let marks: Vec<&str> = [(u.default, "default"), (chosen, "selected")].iter().filter(|(m, _)| *m).map(|(_, w)| *w).collect();
                if !marks.is_empty() {
                    name.push_str(&format!(" ({})", marks.join(", ")));
                }
                let mut text = u.description.to_string();
                if !u.aliases.is_empty() {
                    text.push_str(&format!(" [alias {}]", u.aliases.join(", ")));
                }
                for a in u.attrs.iter() {
                    text.push_str(&format!(" [{}: {}]", a.key, a.value));
                }
                t.add_row(vec![name, pattern(u.value, u.ignored), text]);
            }
            s.push_str(&format!("\n{}\n", layout::render(t, &[0, 1])));
        }
        self.text(&s)
    }

    /// A raw event code the table does not list.
    pub fn describe_raw(&self, pmu: &Pmu, sel: &EventSel) -> Result<(), Failure> {
        if self.json {
            let v = json!({"pmu": pmu.name(), "name": sel.name(), "code": sel.code, "umask": sel.umask, "raw": true});
            return self.json(&json!({"event": v}));
        }
        self.text(&format!("{}: raw event code {} on {}, not in the event table", sel.input, hex(sel.code), pmu.name()))
    }

    /// Every family's metric of one name: its expression, unit, events and source.
    pub fn describe_metrics(&self, found: &[(Metric, Vec<&'static str>)]) -> Result<(), Failure> {
        if self.json {
            let v: Vec<Value> = found.iter().map(|(m, pmus)| metric_json(m, pmus)).collect();
            return self.json(&json!({"metrics": v}));
        }
        let width = layout::width();
        let mut s = String::new();
        for (m, pmus) in found {
            let mut t = layout::table(&[], width);
            t.add_row(vec![String::new(), m.def.description.to_string()]);
            s.push_str(&format!("metric {} ({})\n{}\n\n", m.def.name, pmus.join(", "), layout::render(t, &[0])));
            let mut t = layout::table(&[], width);
            let (factor, unit) = m.def.scale();
            t.add_row(vec!["expression".to_string(), m.def.expr.to_string()]);
            if !m.def.scale_unit.is_empty() {
                t.add_row(vec!["unit".to_string(), format!("{unit} (value x {factor}, perf ScaleUnit {})", m.def.scale_unit)]);
            }
            t.add_row(vec!["groups".to_string(), m.groups().collect::<Vec<_>>().join(", ")]);
            let mut events: Vec<String> = m.event_names().map(str::to_string).collect();
            if m.uses_time {
                events.push("duration_time (the run's elapsed time, ns)".to_string());
            }
            t.add_row(vec!["events".to_string(), events.join(", ")]);
            t.add_row(vec!["source".to_string(), m.def.source.to_string()]);
            let first = pmus.first().copied().unwrap_or_default();
            t.add_row(vec!["count it".to_string(), format!("pmu stat --pmu {first} -M {}", m.def.name)]);
            s.push_str(&format!("{}\n\n", layout::render(t, &[0])));
        }
        self.text(s.trim_end())
    }
}
