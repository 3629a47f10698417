//! What the core knows about one PMU: its counters, modifiers and event table.
//! Architectures fill these in; the core never looks at a family by name.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic))]

use std::borrow::Cow;

use crate::table::{EventDef, EventTable, TableRules};

/// One hardware counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CounterDesc {
    pub name: &'static str,
    pub width: u8,
    pub description: &'static str,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModifierKind {
    /// `:u` (value 1) or `:u=0`.
    Flag,
    /// `:thresh=3`, within an inclusive range.
    Number { min: u64, max: u64 },
}

/// An event-string modifier (`:MOD[=VALUE]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModifierDef {
    pub name: &'static str,
    pub kind: ModifierKind,
    pub description: &'static str,
}

/// perf's generic hardware event names (`perf list hw`): the canonical name first,
/// then the other spellings perf accepts, in the order of the kernel's
/// `enum perf_hw_id` (pmukit-live opens them by that number).
pub const GENERIC_EVENTS: &[&[&str]] = &[
    &["cpu-cycles", "cycles"],
    &["instructions"],
    &["cache-references"],
    &["cache-misses"],
    &["branch-instructions", "branches"],
    &["branch-misses"],
    &["bus-cycles"],
    &["stalled-cycles-frontend", "idle-cycles-frontend"],
    &["stalled-cycles-backend", "idle-cycles-backend"],
    &["ref-cycles"],
];

/// What a PMU's Linux perf driver makes of perf's generic event names.
#[derive(Debug, Clone, Copy)]
pub struct GenericMap {
    /// (canonical generic name, the event in pmukit's syntax), as the driver maps them.
    pub events: &'static [(&'static str, &'static str)],
    /// The driver's table they come from, or why the PMU has none.
    pub source: &'static str,
}

/// The static description of one PMU model.
#[derive(Debug, Clone, Copy)]
pub struct PmuDesc {
    /// Name used in event strings and on the command line (`arm1176`).
    pub name: &'static str,
    /// Family whose table this PMU uses (`arm11`).
    pub family: &'static str,
    /// Model name as the event table's `only_on` / `unused_on` lists spell it.
    pub model: &'static str,
    pub description: &'static str,
    pub counters: &'static [CounterDesc],
    /// Counters an event may use when its table entry lists none.
    pub general_counters: &'static [&'static str],
    /// Modifiers every event of the family accepts.
    pub modifiers: &'static [ModifierDef],
    /// Modifiers that only events listing them accept.
    pub event_modifiers: &'static [ModifierDef],
    pub max_code: u64,
    pub max_umask: u64,
    /// A raw code `r<hex>` carries the unit mask in its low bits (T4: `sl << 6 | mask`).
    pub raw_umask_bits: u32,
    /// Whether a raw code the table does not list may be programmed. `None` allows it;
    /// `Some(why)` refuses it with the spec's reason.
    pub raw_outside_table: Option<&'static str>,
    /// Events only read what the hardware collects anyway (a statistics buffer), so any
    /// number of events may read the same counters and none compete for them.
    pub shared_counters: bool,
    /// perf's generic event names on this PMU.
    pub generic: GenericMap,
    /// The name its Linux perf driver registers the PMU under (its directory in
    /// /sys/bus/event_source/devices, and the `NAME/…/` of perf's event spellings),
    /// where Linux has a driver for it.
    pub linux_pmu: Option<&'static str>,
}

/// A PMU with the event table in force (built in, or loaded with `--events-file`).
#[derive(Debug, Clone)]
pub struct Pmu {
    pub desc: &'static PmuDesc,
    pub table: Cow<'static, EventTable>,
}

impl PmuDesc {
    pub fn counter_index(&self, name: &str) -> Option<usize> {
        self.counters.iter().position(|c| c.name.eq_ignore_ascii_case(name))
    }

    pub fn modifier(&self, name: &str) -> Option<&'static ModifierDef> {
        self.modifiers.iter().chain(self.event_modifiers).find(|m| m.name.eq_ignore_ascii_case(name))
    }

    /// Validation rules for tables of this PMU's family, given all the family's models.
    pub fn rules<'a>(&'a self, models: &'a [&'a str], counters: &'a [&'a str], modifiers: &'a [&'a str]) -> TableRules<'a> {
        TableRules { family: self.family, models, counters, modifiers, max_code: self.max_code, max_umask: self.max_umask }
    }
}

impl Pmu {
    pub fn name(&self) -> &'static str {
        self.desc.name
    }

    /// Events of the table that exist on this model, in table order.
    pub fn events(&self) -> impl Iterator<Item = &EventDef> {
        self.table.events.iter().filter(|e| e.exists_on(self.desc.model))
    }

    /// The selections `pmu list` offers, named as the table names them: each event
    /// without unit masks, and each unit mask of an event with them (`EVENT.UMASK`).
    pub fn selections(&self) -> impl Iterator<Item = String> + '_ {
        self.events().flat_map(|e| -> Vec<String> {
            match e.umasks.is_empty() {
                true => vec![e.name.to_string()],
                false => e.umasks.iter().map(|u| format!("{}.{}", e.name, u.name)).collect(),
            }
        })
    }

    /// Bit mask of the counters that may count `event`.
    pub fn allowed_counters(&self, event: &EventDef) -> u64 {
        let names: Vec<&str> = if event.counters.is_empty() {
            self.desc.general_counters.to_vec()
        } else {
            event.counters.iter().map(|c| c.as_ref()).collect()
        };
        names.iter().filter_map(|n| self.desc.counter_index(n)).fold(0, |m, i| m | 1 << i)
    }

    pub fn counter_names(&self, mask: u64) -> Vec<&'static str> {
        self.desc.counters.iter().enumerate().filter(|(i, _)| mask >> i & 1 == 1).map(|(_, c)| c.name).collect()
    }

    /// Name of the event with selector `code` on this model.
    pub fn event_name(&self, code: u64) -> Option<String> {
        self.table.by_code(code, self.desc.model).map(|e| e.name.to_string())
    }
}
