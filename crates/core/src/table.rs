//! The event-table schema shared by every PMU family.
//!
//! Tables are TOML files under `data/<family>/events.toml` (documented in
//! `docs/event-tables.md`). The build compiles them into `static` tables of these very
//! types (every `Cow` is `Borrowed`), and `--events-file` loads the same format at run
//! time (every `Cow` is `Owned`), so both paths share one schema and one validator.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic))]

use std::borrow::Cow;
use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use thiserror::Error;

type Text = Cow<'static, str>;
type List<T> = Cow<'static, [T]>;

/// One PMU family's events (for example all ARM11 cores).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, databake::Bake)]
#[databake(path = pmukit_core::table)]
#[serde(deny_unknown_fields)]
pub struct EventTable {
    /// Family name, matching the architecture module (`arm11`, `sparc-t4`, …).
    pub family: Text,
    /// Where the table comes from (spec document and table number).
    #[serde(default)]
    pub source: Text,
    #[serde(rename = "event")]
    pub events: List<EventDef>,
    /// The events' names and aliases in upper case, sorted, each with its event's
    /// position: [`EventTable::find`] searches it instead of comparing every name.
    /// Built with the table ([`EventTable::new`], [`EventTable::from_toml`], and so
    /// the build's static tables): never edit `events` after.
    #[serde(skip)]
    pub names: List<IndexEntry>,
    /// The unit masks' aliases likewise, for [`EventTable::find_umask_alias`].
    #[serde(skip)]
    pub umask_aliases: List<IndexEntry>,
}

/// A name of [`EventTable::names`] or [`EventTable::umask_aliases`]: in upper case,
/// with the position of its event in the table and, for a unit-mask alias, of the
/// unit mask in its event.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, databake::Bake)]
#[databake(path = pmukit_core::table)]
pub struct IndexEntry {
    pub key: Text,
    pub event: u32,
    pub umask: u32,
}

/// One event type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, databake::Bake)]
#[databake(path = pmukit_core::table)]
#[serde(deny_unknown_fields)]
pub struct EventDef {
    /// Canonical name (upper case, as Linux perf / libpfm4 name it where they do).
    pub name: Text,
    /// Event selector value written to the hardware.
    pub code: u64,
    pub description: Text,
    /// Other names accepted on input (spec wording, Solaris `cpustat`, pfmon).
    #[serde(default)]
    pub aliases: List<Text>,
    /// Unit masks: values OR-ed into the event's unit-mask field.
    #[serde(default)]
    pub umasks: List<UmaskDef>,
    /// Models the event exists on; empty means every model of the family.
    #[serde(default)]
    pub only_on: List<Text>,
    /// Models on which the spec marks the event unused (it selects nothing there).
    #[serde(default)]
    pub unused_on: List<Text>,
    /// Counters that may count the event; empty means the family's general counters.
    #[serde(default)]
    pub counters: List<Text>,
    /// Event-specific modifiers accepted in addition to the family's own.
    #[serde(default)]
    pub modifiers: List<Text>,
    /// Free-form attributes for what later families need (precise, max increment, …).
    #[serde(default)]
    pub attrs: List<Attr>,
    /// Unit-mask bits the hardware ignores for this event.
    #[serde(default)]
    pub umask_ignored: u64,
    /// What a unit-mask value other than a listed one does.
    #[serde(default)]
    pub umask_combinations: Combinations,
    /// The spec's words about other unit-mask values.
    #[serde(default)]
    pub umask_note: Text,
    /// Unit-mask values the spec lists as counting nothing, illegal or undefined.
    #[serde(default)]
    pub invalid_umasks: List<InvalidUmask>,
    /// The event this one is a named selection of (same code and unit mask; the spec
    /// calls it a sub event). Empty for an event in its own right.
    #[serde(default)]
    pub subevent_of: Text,
}

/// How the hardware treats a unit-mask value that is not one of the listed ones
/// (an OR of several, or a raw value).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, databake::Bake)]
#[databake(path = pmukit_core::table)]
#[serde(rename_all = "lowercase")]
pub enum Combinations {
    /// Each set bit adds its events: any combination counts their union.
    #[default]
    Any,
    /// Combinations are accepted but the spec calls them meaningless or not useful;
    /// they are flagged.
    Meaningless,
    /// Only the listed values are meaningful; others are refused.
    Listed,
}

/// A named unit-mask value of an event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, databake::Bake)]
#[databake(path = pmukit_core::table)]
#[serde(deny_unknown_fields)]
pub struct UmaskDef {
    pub name: Text,
    pub value: u64,
    #[serde(default)]
    pub description: Text,
    /// Used when the event string names no unit mask.
    #[serde(default)]
    pub default: bool,
    /// Names that select this event with this unit mask alone (Solaris `cpustat`, pfmon).
    #[serde(default)]
    pub aliases: List<Text>,
    /// Attributes of this unit mask, overriding the event's.
    #[serde(default)]
    pub attrs: List<Attr>,
    /// Bits of this unit mask the hardware does not look at (the spec's `x` in a
    /// pattern such as `bxx01`); `value` holds them as 0.
    #[serde(default)]
    pub ignored: u64,
}

/// A unit-mask selection the spec lists as invalid (`---` rows of Montecito's tables).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, databake::Bake)]
#[databake(path = pmukit_core::table)]
#[serde(deny_unknown_fields)]
pub struct InvalidUmask {
    pub value: u64,
    /// Don't-care bits of the pattern.
    #[serde(default)]
    pub ignored: u64,
    pub kind: InvalidKind,
    /// The spec's words, such as `(* nothing will be counted *)`.
    #[serde(default)]
    pub note: Text,
}

/// Why a unit-mask selection is invalid.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, databake::Bake)]
#[databake(path = pmukit_core::table)]
#[serde(rename_all = "lowercase")]
pub enum InvalidKind {
    /// The hardware counts nothing.
    Nothing,
    /// The spec calls the selection illegal.
    Illegal,
    /// The count is undefined.
    Undefined,
}

impl InvalidKind {
    pub fn describe(self) -> &'static str {
        match self {
            InvalidKind::Nothing => "counts nothing",
            InvalidKind::Illegal => "is an illegal selection",
            InvalidKind::Undefined => "gives an undefined count",
        }
    }
}

impl UmaskDef {
    /// Does a unit-mask field value select this unit mask (its don't-care bits aside)?
    pub fn matches(&self, value: u64) -> bool {
        value & !self.ignored == self.value & !self.ignored
    }
}

impl InvalidUmask {
    pub fn matches(&self, value: u64) -> bool {
        value & !self.ignored == self.value & !self.ignored
    }
}

/// A key/value attribute of an event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, databake::Bake)]
#[databake(path = pmukit_core::table)]
#[serde(deny_unknown_fields)]
pub struct Attr {
    pub key: Text,
    pub value: Text,
}

/// What a family knows about its tables, so the core can validate them.
#[derive(Debug, Clone, Copy)]
pub struct TableRules<'a> {
    pub family: &'a str,
    pub models: &'a [&'a str],
    pub counters: &'a [&'a str],
    pub modifiers: &'a [&'a str],
    /// Largest event code the hardware's selector field holds.
    pub max_code: u64,
    /// Largest unit-mask value (0 when the family has no unit masks).
    pub max_umask: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum TableError {
    #[error("{origin}: {message}")]
    Syntax { origin: String, message: String },
    #[error("{origin}: event '{event}': {message}")]
    Invalid { origin: String, event: String, message: String },
    #[error("{origin}: table is for family '{found}', expected '{expected}'")]
    WrongFamily { origin: String, found: String, expected: String },
}

impl EventTable {
    /// A table of `events`, with its name indexes.
    pub fn new(family: Text, source: Text, events: List<EventDef>) -> EventTable {
        EventTable { family, source, events, names: Cow::Borrowed(&[]), umask_aliases: Cow::Borrowed(&[]) }.indexed()
    }

    /// Parse a TOML table; `origin` names the file in messages.
    pub fn from_toml(text: &str, origin: &str) -> Result<EventTable, TableError> {
        toml::from_str::<EventTable>(text)
            .map(EventTable::indexed)
            .map_err(|e| TableError::Syntax { origin: origin.to_string(), message: crate::input::toml_message(text, &e) })
    }

    /// The table with its name indexes built from its events. Ties (names a valid
    /// table never repeats) sort by position, so a search finds what a scan in table
    /// order would.
    fn indexed(mut self) -> EventTable {
        let entry = |key: &str, event: usize, umask: usize| IndexEntry {
            key: key.to_ascii_uppercase().into(),
            event: u32::try_from(event).unwrap_or(u32::MAX),
            umask: u32::try_from(umask).unwrap_or(u32::MAX),
        };
        let mut names = Vec::new();
        let mut umask_aliases = Vec::new();
        for (i, e) in self.events.iter().enumerate() {
            names.extend(std::iter::once(&e.name).chain(e.aliases.iter()).map(|n| entry(n, i, 0)));
            for (j, u) in e.umasks.iter().enumerate() {
                umask_aliases.extend(u.aliases.iter().map(|a| entry(a, i, j)));
            }
        }
        names.sort_unstable();
        umask_aliases.sort_unstable();
        self.names = names.into();
        self.umask_aliases = umask_aliases.into();
        self
    }

    /// The entries of `index` whose key is `name` in any case, first in table order.
    fn lookup<'a>(index: &'a [IndexEntry], name: &str) -> Option<&'a IndexEntry> {
        let upper = || name.bytes().map(|b| b.to_ascii_uppercase());
        let first = index.partition_point(|x| x.key.bytes().lt(upper()));
        index.get(first).filter(|x| x.key.len() == name.len() && x.key.bytes().eq(upper()))
    }

    /// Check the table against the family's hardware. Every problem is reported with
    /// the event that has it.
    pub fn validate(&self, rules: &TableRules, origin: &str) -> Result<(), TableError> {
        if !self.family.eq_ignore_ascii_case(rules.family) {
            return Err(TableError::WrongFamily {
                origin: origin.to_string(),
                found: self.family.to_string(),
                expected: rules.family.to_string(),
            });
        }
        let invalid = |event: &str, message: String| TableError::Invalid { origin: origin.to_string(), event: event.to_string(), message };
        if self.events.is_empty() {
            return Err(invalid("-", "the table has no events".to_string()));
        }
        let mut names: HashMap<String, &str> = HashMap::new();
        let mut codes: HashMap<(u64, String), &str> = HashMap::new();
        for e in self.events.iter() {
            if !is_event_name(&e.name) {
                return Err(invalid(&e.name, "names use letters, digits and '_' and start with a letter".into()));
            }
            for n in std::iter::once(&e.name).chain(e.aliases.iter()) {
                if let Some(prev) = names.insert(n.to_ascii_uppercase(), &e.name) {
                    return Err(invalid(&e.name, format!("name '{n}' is already used by event '{prev}'")));
                }
            }
            if e.code > rules.max_code {
                return Err(invalid(&e.name, format!("code {:#x} exceeds the selector's maximum {:#x}", e.code, rules.max_code)));
            }
            if e.description.trim().is_empty() {
                return Err(invalid(&e.name, "description is empty".into()));
            }
            for m in e.only_on.iter().chain(e.unused_on.iter()) {
                if !rules.models.iter().any(|x| x.eq_ignore_ascii_case(m)) {
                    return Err(invalid(&e.name, format!("unknown model '{m}'; models: {}", rules.models.join(", "))));
                }
            }
            for c in e.counters.iter() {
                if !rules.counters.iter().any(|x| x.eq_ignore_ascii_case(c)) {
                    return Err(invalid(&e.name, format!("unknown counter '{c}'; counters: {}", rules.counters.join(", "))));
                }
            }
            for m in e.modifiers.iter() {
                if !rules.modifiers.iter().any(|x| x.eq_ignore_ascii_case(m)) {
                    return Err(invalid(&e.name, format!("unknown modifier '{m}'; modifiers: {}", rules.modifiers.join(", "))));
                }
            }
            if e.umask_ignored > rules.max_umask {
                return Err(invalid(&e.name, format!("umask_ignored {:#x} exceeds the maximum {:#x}", e.umask_ignored, rules.max_umask)));
            }
            let mut umask_names = Vec::new();
            for u in e.umasks.iter() {
                for a in u.aliases.iter() {
                    if let Some(prev) = names.insert(a.to_ascii_uppercase(), &e.name) {
                        return Err(invalid(&e.name, format!("alias '{a}' of unit mask {} is already used by event '{prev}'", u.name)));
                    }
                }
                if u.value > rules.max_umask {
                    return Err(invalid(
                        &e.name,
                        format!("unit mask {} = {:#x} exceeds the maximum {:#x}", u.name, u.value, rules.max_umask),
                    ));
                }
                if !is_umask_name(&u.name) {
                    return Err(invalid(
                        &e.name,
                        format!("unit mask '{}': names use letters, digits and '_', with a '.' only between two words (A.B)", u.name),
                    ));
                }
                if u.ignored > rules.max_umask || u.value & u.ignored != 0 {
                    return Err(invalid(
                        &e.name,
                        format!(
                            "unit mask {}: ignored bits {:#x} must fit the field and be 0 in the value {:#x}",
                            u.name, u.ignored, u.value
                        ),
                    ));
                }
                if umask_names.iter().any(|n: &&Text| n.eq_ignore_ascii_case(&u.name)) {
                    return Err(invalid(&e.name, format!("unit mask '{}' appears twice", u.name)));
                }
                umask_names.push(&u.name);
            }
            if let Some(u) = e.umasks.iter().find(|u| u.value & e.umask_ignored != 0) {
                // Its bits would be dropped before matching, so its own name would not
                // select it.
                return Err(invalid(
                    &e.name,
                    format!("unit mask {} = {:#x} overlaps the event's umask_ignored {:#x}", u.name, u.value, e.umask_ignored),
                ));
            }
            if e.umasks.iter().any(|u| u.default) {
                let value = e.umasks.iter().filter(|u| u.default).fold(0, |m, u| m | u.value);
                let why = match e.umask_verdict(value) {
                    UmaskVerdict::Listed | UmaskVerdict::Meaningless => None,
                    UmaskVerdict::NotListed => Some("not a listed unit mask, and umask_combinations is \"listed\"".to_string()),
                    UmaskVerdict::Invalid(bad) => Some(format!("{} ({})", bad.kind.describe(), bad.note)),
                };
                if let Some(why) = why {
                    return Err(invalid(&e.name, format!("its default unit masks make {value:#x}, which event strings refuse: {why}")));
                }
            }
            for bad in e.invalid_umasks.iter() {
                if bad.value > rules.max_umask || bad.ignored > rules.max_umask || bad.value & bad.ignored != 0 {
                    return Err(invalid(
                        &e.name,
                        format!("invalid unit mask {:#x} (ignored {:#x}) does not fit the field", bad.value, bad.ignored),
                    ));
                }
                if let Some(u) = e.umasks.iter().find(|u| u.matches(bad.value) || bad.matches(u.value)) {
                    return Err(invalid(&e.name, format!("unit mask {} overlaps an invalid selection {:#x}", u.name, bad.value)));
                }
            }
            if !e.subevent_of.is_empty() {
                let parent = self.find(&e.subevent_of).filter(|p| p.subevent_of.is_empty());
                if parent.is_none_or(|p| p.code != e.code) {
                    return Err(invalid(&e.name, format!("subevent_of '{}' must name an event with code {:#x}", e.subevent_of, e.code)));
                }
                continue;
            }
            // Two events may share a code only on disjoint sets of models.
            for model in rules.models {
                if e.exists_on(model) {
                    if let Some(prev) = codes.insert((e.code, model.to_string()), &e.name) {
                        return Err(invalid(&e.name, format!("code {:#x} is also event '{prev}' on {model}", e.code)));
                    }
                }
            }
        }
        Ok(())
    }

    /// Find an event by name or alias, case-insensitively.
    pub fn find(&self, name: &str) -> Option<&EventDef> {
        EventTable::lookup(&self.names, name).and_then(|x| self.events.get(x.event as usize))
    }

    /// Find the event and unit mask a unit-mask alias names (`Sel_0_wait`).
    pub fn find_umask_alias(&self, name: &str) -> Option<(&EventDef, &UmaskDef)> {
        let x = EventTable::lookup(&self.umask_aliases, name)?;
        let e = self.events.get(x.event as usize)?;
        Some((e, e.umasks.get(x.umask as usize)?))
    }

    /// The event with selector `code` on `model`, if the table defines one.
    pub fn by_code(&self, code: u64, model: &str) -> Option<&EventDef> {
        self.events.iter().find(|e| e.code == code && e.exists_on(model) && e.subevent_of.is_empty())
    }
}

impl EventDef {
    /// Does the event exist on `model` (listed, and not marked unused there)?
    pub fn exists_on(&self, model: &str) -> bool {
        let listed = self.only_on.is_empty() || self.only_on.iter().any(|m| m.eq_ignore_ascii_case(model));
        listed && !self.unused_on.iter().any(|m| m.eq_ignore_ascii_case(model))
    }

    pub fn attr(&self, key: &str) -> Option<&str> {
        self.attrs.iter().find(|a| a.key == key).map(|a| a.value.as_ref())
    }

    /// An attribute as it applies with unit mask `umask`: the unit mask's own value
    /// when it has one, else the event's.
    pub fn attr_with<'a>(&'a self, key: &str, umask: Option<&'a UmaskDef>) -> Option<&'a str> {
        umask.and_then(|u| u.attrs.iter().find(|a| a.key == key)).map(|a| a.value.as_ref()).or_else(|| self.attr(key))
    }

    pub fn umask(&self, name: &str) -> Option<&UmaskDef> {
        self.umasks.iter().find(|u| u.name.eq_ignore_ascii_case(name))
    }

    /// The unit mask a field value selects, don't-care bits aside.
    pub fn umask_for(&self, value: u64) -> Option<&UmaskDef> {
        self.umasks.iter().find(|u| u.matches(value & !self.umask_ignored))
    }

    /// The invalid selection a field value makes, if it makes one.
    pub fn invalid_umask(&self, value: u64) -> Option<&InvalidUmask> {
        self.invalid_umasks.iter().find(|b| b.matches(value & !self.umask_ignored))
    }

    /// Every rule of the table on a unit-mask value, however it was chosen: the one
    /// decision behind event strings (written unit masks and defaults alike) and the
    /// table validator's check of each event's defaults.
    pub fn umask_verdict(&self, value: u64) -> UmaskVerdict<'_> {
        let effective = value & !self.umask_ignored;
        if let Some(bad) = self.invalid_umask(value) {
            return UmaskVerdict::Invalid(bad);
        }
        if self.umasks.is_empty() || self.umasks.iter().any(|u| u.matches(effective)) {
            return UmaskVerdict::Listed;
        }
        match self.umask_combinations {
            Combinations::Any => UmaskVerdict::Listed,
            Combinations::Meaningless => UmaskVerdict::Meaningless,
            Combinations::Listed => UmaskVerdict::NotListed,
        }
    }
}

/// What the table says of a unit-mask value ([`EventDef::umask_verdict`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum UmaskVerdict<'a> {
    /// A listed value, or a combination the event allows.
    Listed,
    /// Allowed, but the spec calls the combination meaningless: warn.
    Meaningless,
    /// A combination of an event that allows only its listed values: refuse.
    NotListed,
    /// A selection the table names invalid: refuse.
    Invalid(&'a InvalidUmask),
}

/// Unit-mask names may contain '.' (Montecito's `ALL.ALL_PRED`), but only between two
/// words: an event string splits at each '.', and an empty word is a syntax error, so
/// `A..B` could never be written (issue 10: the `events_file` fuzz target).
fn is_umask_name(s: &str) -> bool {
    s.split('.').all(|word| !word.is_empty() && word.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
}

fn is_event_name(s: &str) -> bool {
    s.starts_with(|c: char| c.is_ascii_alphabetic()) && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// A family's derived metrics, in Linux perf's `MetricExpr` syntax
/// (`data/<family>/metrics.toml`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, databake::Bake)]
#[databake(path = pmukit_core::table)]
#[serde(deny_unknown_fields)]
pub struct MetricTable {
    pub family: Text,
    #[serde(default)]
    pub source: Text,
    #[serde(rename = "metric")]
    pub metrics: List<MetricDef>,
}

/// One derived metric: perf's `MetricName`, `MetricExpr`, `BriefDescription`,
/// `MetricGroup` and `ScaleUnit`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, databake::Bake)]
#[databake(path = pmukit_core::table)]
#[serde(deny_unknown_fields)]
pub struct MetricDef {
    pub name: Text,
    pub expr: Text,
    pub description: Text,
    #[serde(default)]
    pub group: Text,
    /// perf's ScaleUnit: a factor and a unit, such as `100%` or `1per_kinstr`.
    #[serde(default)]
    pub scale_unit: Text,
    /// Where the formula comes from, and how we read it.
    #[serde(default)]
    pub source: Text,
    /// The metric's domain: the least and greatest values its expression can take
    /// (before `scale_unit`) when every count it reads comes from one interval of
    /// exact counters, as MetricExpr expressions (a number, or counts and metrics of
    /// the same run: a part's `max` is its whole). Empty: unbounded on that side. A
    /// value outside is never printed (`report::evaluate_metrics`).
    #[serde(default)]
    pub min: Text,
    #[serde(default)]
    pub max: Text,
}

impl MetricTable {
    pub fn from_toml(text: &str, origin: &str) -> Result<MetricTable, TableError> {
        toml::from_str(text).map_err(|e| TableError::Syntax { origin: origin.to_string(), message: crate::input::toml_message(text, &e) })
    }
}

impl MetricDef {
    /// Split perf's ScaleUnit into its factor and unit: `100%` → (100, "%").
    pub fn scale(&self) -> (f64, &str) {
        let s = self.scale_unit.trim();
        let split = s.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == 'e' || c == '-')).unwrap_or(s.len());
        let factor = s[..split].parse().unwrap_or(1.0);
        (factor, &s[split..])
    }
}
