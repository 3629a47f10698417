//! pmukit-arch: the PMU families, each in a module of its own, and the catalog that
//! puts their PMUs and tables together.
//!
//! Event and metric tables are compiled from `data/<family>/*.toml` by `build.rs`.

extern crate alloc;

use std::borrow::Cow;

use pmukit_core::event_string::{self, EventError, EventSel};
use pmukit_core::pmu::{Pmu, PmuDesc};
use pmukit_core::register::{Decoded, Field, Register, RegisterError};
use pmukit_core::schedule::{self, Grouping, Rules, ScheduleError};
use pmukit_core::suggest;
use pmukit_core::table::{EventTable, MetricTable, TableError};
use serde::Serialize;
use thiserror::Error;

pub mod arm11;
pub mod encoder;
pub mod linux;
pub mod metrics;
pub mod montecito;
pub mod perf_json;
pub mod sparc;

mod tables {
    pub mod arm11 {
        include!(concat!(env!("OUT_DIR"), "/arm11.rs"));
    }
    pub mod sparc_t4 {
        include!(concat!(env!("OUT_DIR"), "/sparc_t4.rs"));
    }
    pub mod sparc_t4_dram {
        include!(concat!(env!("OUT_DIR"), "/sparc_t4_dram.rs"));
    }
    pub mod niagara {
        include!(concat!(env!("OUT_DIR"), "/niagara.rs"));
    }
    pub mod sparc_kt {
        include!(concat!(env!("OUT_DIR"), "/sparc_kt.rs"));
    }
    pub mod montecito {
        include!(concat!(env!("OUT_DIR"), "/montecito.rs"));
    }
}

/// Register values, by register name.
pub type RegisterValues = Vec<(&'static str, u64)>;

/// A family's placement rules over one list of events (see `Family::rules`).
pub type PlacementRules = for<'a> fn(&'a Pmu, &'a [EventSel]) -> Box<dyn Rules + 'a>;

/// A PMU family: its models, its tables, and the rules that place events on counters.
pub struct Family {
    pub name: &'static str,
    pub pmus: &'static [&'static PmuDesc],
    pub events: &'static EventTable,
    pub metrics: &'static MetricTable,
    /// The registers as they exist on a PMU's model.
    pub registers: fn(&Pmu) -> Vec<Register>,
    /// Mask of the counters an event may use.
    pub allowed: fn(&Pmu, &EventSel) -> u64,
    /// Register fields that place one event on one counter.
    pub placement: fn(&Pmu, &EventSel, usize) -> Result<RegisterValues, RegisterError>,
    /// Register values that start counting a placed set (placements OR-ed together,
    /// with the counters used).
    pub start: fn(&RegisterValues, &[usize]) -> RegisterValues,
    /// The meaning of an event-selector or unit-mask field in a register value.
    pub explain: fn(&Pmu, &Field, u64) -> Option<String>,
    /// The layout a register's value is read in, where the value itself (Montecito's
    /// PMC37) or another register's value (the mode of the EAR or trace buffer that
    /// filled a PMD), among `given`, chooses it; with a note when a mode had to be
    /// assumed.
    pub layout: LayoutFn,
    /// Refuse an event that cannot be programmed as given (a threshold beyond its
    /// range, a modifier its unit mask does not support), saying why.
    pub check: fn(&Pmu, &EventSel) -> Result<(), String>,
    /// Placement rules beyond counter masks over a list of events, as the scheduler
    /// asks them (`schedule::Rules`): which events they involve, which of those they
    /// cannot tell apart, and whether a partial placement breaks one beyond repair.
    pub rules: PlacementRules,
    /// Registers a whole set writes: for its [`SetOptions`] (Montecito's qualification
    /// registers and breakpoint pairs) and for what its events arm (Montecito's capture
    /// registers), with notes; refuses options the family does not have and settings
    /// it cannot program together.
    pub set_registers: SetRegistersFn,
}

/// A family's [`Family::set_registers`].
pub type SetRegistersFn = fn(&Pmu, &[EventSel], &SetOptions) -> Result<(RegisterValues, Vec<String>), EncodeError>;

/// What a set of events asks beyond each event's own fields: Montecito's event
/// qualification by instruction address range, data address range and opcode
/// (§3.2.3), and its trace buffer in IP-EAR mode (§3.3.10.2). Other families have no
/// such registers.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SetOptions {
    pub qualification: montecito::qualify::Request,
    /// The IP-EAR captures retired IPs, and freezes this many cycles after the PMU.
    pub ip_ear: Option<u64>,
    /// Which branches the execution trace buffer captures (PMC39's masks).
    pub etb: montecito::capture_events::EtbFilter,
}

impl SetOptions {
    pub fn is_empty(&self) -> bool {
        self.qualification.is_empty() && self.ip_ear.is_none() && self.etb.is_empty()
    }
}

/// For families without set-wide registers: only empty options.
pub fn no_set_options(pmu: &Pmu, _sels: &[EventSel], options: &SetOptions) -> Result<(RegisterValues, Vec<String>), EncodeError> {
    if options.is_empty() {
        return Ok((Vec::new(), Vec::new()));
    }
    if options.qualification.is_empty() {
        return Err(EncodeError::SetWide {
            what: "the IP-EAR".to_string(),
            why: format!("{} has no IP event address register: it is Itanium 2 Montecito's (§3.3.10.2); count on montecito", pmu.name()),
        });
    }
    Err(EncodeError::SetWide {
        what: "event qualification".to_string(),
        why: format!(
            "{} has no qualification registers: address ranges and opcode patterns are Itanium 2 Montecito's (§3.2.3); count on montecito",
            pmu.name()
        ),
    })
}

/// A family's [`Family::layout`]: the register as found, its value and the given
/// values of other registers, to the layout and a note when a mode was assumed.
pub type LayoutFn = fn(Register, u64, &[(String, u64)]) -> (Register, Option<String>);

/// For families whose registers have one layout whatever their value.
pub fn same_layout(register: Register, _value: u64, _given: &[(String, u64)]) -> (Register, Option<String>) {
    (register, None)
}

/// For families whose events need no check beyond their table entry.
pub fn any_event(_pmu: &Pmu, _sel: &EventSel) -> Result<(), String> {
    Ok(())
}

/// For families whose counter masks are the only placement rule.
pub fn no_rules<'a>(_pmu: &'a Pmu, _sels: &'a [EventSel]) -> Box<dyn Rules + 'a> {
    Box::new(schedule::NoRules)
}

pub static FAMILIES: &[Family] = &[
    Family {
        name: arm11::FAMILY,
        pmus: &[&arm11::ARM1136, &arm11::ARM1156, &arm11::ARM1176],
        events: &tables::arm11::EVENTS,
        metrics: &tables::arm11::METRICS,
        registers: arm11::registers,
        allowed: arm11::allowed,
        placement: arm11::placement,
        start: arm11::start,
        explain: arm11::explain,
        layout: same_layout,
        check: any_event,
        rules: no_rules,
        set_registers: no_set_options,
    },
    Family {
        name: sparc::t4::FAMILY,
        pmus: &[&sparc::t4::SPARC_T4],
        events: &tables::sparc_t4::EVENTS,
        metrics: &tables::sparc_t4::METRICS,
        registers: sparc::t4::registers,
        allowed: sparc::t4::allowed,
        placement: sparc::t4::placement,
        start: sparc::t4::start,
        explain: sparc::t4::explain,
        layout: same_layout,
        check: any_event,
        rules: no_rules,
        set_registers: no_set_options,
    },
    Family {
        name: sparc::t4::DRAM_FAMILY,
        pmus: &[&sparc::t4::SPARC_T4_DRAM, &sparc::kt::SPARC_KT_DRAM],
        events: &tables::sparc_t4_dram::EVENTS,
        metrics: &tables::sparc_t4_dram::METRICS,
        registers: sparc::dram_registers,
        allowed: sparc::t4::allowed,
        placement: sparc::dram_placement,
        start: sparc::t4::dram_start,
        explain: sparc::t4::dram_explain,
        layout: same_layout,
        check: any_event,
        rules: no_rules,
        set_registers: no_set_options,
    },
    Family {
        name: sparc::niagara::FAMILY,
        pmus: &[&sparc::niagara::NIAGARA],
        events: &tables::niagara::EVENTS,
        metrics: &tables::niagara::METRICS,
        registers: sparc::niagara::registers,
        allowed: sparc::niagara::allowed,
        placement: sparc::niagara::placement,
        start: sparc::niagara::start,
        explain: sparc::niagara::explain,
        layout: same_layout,
        check: any_event,
        rules: no_rules,
        set_registers: no_set_options,
    },
    Family {
        name: sparc::kt::FAMILY,
        pmus: &[&sparc::kt::SPARC_KT],
        events: &tables::sparc_kt::EVENTS,
        metrics: &tables::sparc_kt::METRICS,
        registers: sparc::kt::registers,
        allowed: sparc::kt::allowed,
        placement: sparc::kt::placement,
        start: sparc::kt::start,
        explain: sparc::kt::explain,
        layout: same_layout,
        check: any_event,
        rules: no_rules,
        set_registers: no_set_options,
    },
    Family {
        name: montecito::pmu::FAMILY,
        pmus: &[&montecito::pmu::MONTECITO, &montecito::pmu::MONTECITO_ST],
        events: &tables::montecito::EVENTS,
        metrics: &tables::montecito::METRICS,
        registers: montecito::pmu::registers,
        allowed: montecito::pmu::allowed,
        placement: montecito::pmu::placement,
        start: montecito::pmu::start,
        explain: montecito::pmu::explain,
        layout: montecito::pmu::layout,
        check: montecito::pmu::check,
        rules: montecito::placement::rules,
        set_registers: montecito::pmu::set_registers,
    },
];

/// The PMU used when an event string names none.
pub const DEFAULT_PMU: &str = "arm1176";

/// Every PMU with the event table in force.
#[derive(Debug, Clone)]
pub struct Catalog {
    pub pmus: Vec<Pmu>,
}

#[derive(Debug, Clone, Error)]
pub enum CatalogError {
    #[error("unknown PMU '{name}'; valid PMUs: {valid}{}", if suggestions.is_empty() { String::new() } else { format!(" (did you mean {}?)", suggestions.join(", ")) })]
    UnknownPmu { name: String, valid: String, suggestions: Vec<String> },
    /// The events file cannot be read (`is_unreadable`), or is too large or not text.
    #[error(transparent)]
    Input(#[from] pmukit_core::input::InputError),
    #[error(transparent)]
    Table(#[from] TableError),
    #[error("events file {path}: unknown family '{family}'; families: {valid}")]
    UnknownFamily { path: String, family: String, valid: String },
}

impl Family {
    /// Validate a table of this family against its models, counters and modifiers.
    pub fn validate(&self, table: &EventTable, origin: &str) -> Result<(), TableError> {
        let mut models: Vec<&str> = self.pmus.iter().map(|p| p.model).collect();
        models.sort_unstable();
        models.dedup();
        let mut counters: Vec<&str> = self.pmus.iter().flat_map(|p| p.counters.iter().map(|c| c.name)).collect();
        counters.sort_unstable();
        counters.dedup();
        let mut modifiers: Vec<&str> = self.pmus.iter().flat_map(|p| p.modifiers.iter().chain(p.event_modifiers).map(|m| m.name)).collect();
        modifiers.sort_unstable();
        modifiers.dedup();
        table.validate(&self.pmus[0].rules(&models, &counters, &modifiers), origin)
    }
}

impl Default for Catalog {
    fn default() -> Self {
        Catalog::builtin()
    }
}

impl Catalog {
    pub fn builtin() -> Catalog {
        let pmus = FAMILIES.iter().flat_map(|f| f.pmus.iter().map(move |d| Pmu { desc: d, table: Cow::Borrowed(f.events) })).collect();
        Catalog { pmus }
    }

    /// Replace the event table of the family a TOML file names (docs/event-tables.md).
    /// The file is validated as strictly as the built-in tables; on error nothing changes.
    pub fn load_events_file(&mut self, file: &std::path::Path) -> Result<(), CatalogError> {
        let origin = file.display().to_string();
        let text = pmukit_core::input::read_named(file, &format!("events file {origin}"), pmukit_core::input::EVENTS_FILE)?;
        let path = origin.as_str();
        let table = EventTable::from_toml(&text, path)?;
        let family = FAMILIES.iter().find(|f| f.name.eq_ignore_ascii_case(&table.family)).ok_or_else(|| CatalogError::UnknownFamily {
            path: path.to_string(),
            family: table.family.to_string(),
            valid: FAMILIES.iter().map(|f| f.name).collect::<Vec<_>>().join(", "),
        })?;
        family.validate(&table, path)?;
        for pmu in self.pmus.iter_mut().filter(|p| p.desc.family == family.name) {
            pmu.table = Cow::Owned(table.clone());
        }
        Ok(())
    }

    pub fn pmu(&self, name: &str) -> Result<&Pmu, CatalogError> {
        self.pmus.iter().find(|p| p.name().eq_ignore_ascii_case(name)).ok_or_else(|| {
            let names: Vec<&str> = self.pmus.iter().map(|p| p.name()).collect();
            let near = suggest::nearest(name, names.iter().copied());
            CatalogError::UnknownPmu {
                name: name.to_string(),
                valid: names.join(", "),
                suggestions: near.into_iter().map(str::to_string).collect(),
            }
        })
    }

    /// Resolve an event string; `default_pmu` applies when it names no PMU.
    pub fn resolve(&self, input: &str, default_pmu: &str) -> Result<EventSel, EventError> {
        event_string::resolve(input, &self.pmus, default_pmu)
    }
}

/// The PMUs of the machine `pmu` belongs to, which count one run together: a SPARC
/// T4 or KT strand and its chip's memory controllers.
pub fn machine_pmus(pmu: &Pmu) -> Vec<&'static str> {
    match pmu.desc.family {
        sparc::t4::FAMILY => vec![pmu.name(), sparc::t4::SPARC_T4_DRAM.name],
        sparc::kt::FAMILY => vec![pmu.name(), sparc::kt::SPARC_KT_DRAM.name],
        _ => vec![pmu.name()],
    }
}

/// The events `pmu stat` counts on `pmu` when given none (a simulated run, and a live
/// one on pmukit's PMU): cycles, instructions, branches and misses, which need
/// multiplexing on these PMUs; each as `pmu::NAME`.
pub fn default_events(pmu: &Pmu) -> Vec<String> {
    let names: &[&str] = match pmu.desc.family {
        arm11::FAMILY => &["CPU_CYCLES", "INSTR_EXEC", "BR_EXEC", "BR_MISPREDICT", "DCACHE_HIT", "DCACHE_MISS"],
        sparc::t4::FAMILY => &["CYCLES", "INSTR.ALL", "INSTR.BRANCHES", "BR_MISPREDICT.ALL", "DC_MISS_ASYNC.ANY", "IC_MISS_ASYNC.ANY"],
        sparc::t4::DRAM_FAMILY => &["ALL_READS", "ALL_WRITES"],
        sparc::kt::FAMILY => &["L2_MISSES", "L2_MISSES_LOCAL", "L2_MISSES_REMOTE"],
        montecito::pmu::FAMILY => &[
            "CPU_OP_CYCLES",
            "IA64_INST_RETIRED",
            "BACK_END_BUBBLE.ALL",
            "BR_MISPRED_DETAIL.ALL.ALL_PRED",
            "BR_MISPRED_DETAIL.ALL.WRONG_PATH",
            "L1D_READ_MISSES",
            "L2D_MISSES",
            "L3_MISSES",
        ],
        sparc::niagara::FAMILY => &[
            "IMMU_TSB_HITS.ALL",
            "IMMU_TSB_TICKS.ALL",
            "DMMU_TSB_HITS.ALL",
            "DMMU_TSB_TICKS.ALL",
            "DMMU_TSB_HITS.CTX0",
            "DMMU_TSB_HITS.CTXNON0",
        ],
        _ => &[],
    };
    let mut events: Vec<String> = names.iter().map(|n| format!("{}::{n}", pmu.name())).collect();
    // The strand counters and the memory controllers count one run together.
    for dram in machine_pmus(pmu).into_iter().skip(1) {
        events.extend(["ALL_READS", "ALL_WRITES"].map(|n| format!("{dram}::{n}")));
    }
    events
}

pub fn family(pmu: &Pmu) -> &'static Family {
    FAMILIES.iter().find(|f| f.name == pmu.desc.family).expect("every PMU belongs to a listed family")
}

/// The registers of a PMU, as they exist on its model.
pub fn registers(pmu: &Pmu) -> Vec<Register> {
    (family(pmu).registers)(pmu)
}

#[derive(Debug, Clone, Error)]
pub enum EncodeError {
    #[error("{input}: {source}")]
    Register { input: String, source: RegisterError },
    #[error("events from different PMUs cannot be counted as one set: '{first}' is on {first_pmu}, '{other}' on {other_pmu}")]
    MixedPmus { first: String, first_pmu: String, other: String, other_pmu: String },
    #[error("cannot count these events together on {pmu}: {why}")]
    Unschedulable { pmu: String, why: String },
    #[error("{pmu} has no register '{name}'; registers: {valid}")]
    UnknownRegister { pmu: String, name: String, valid: String },
    #[error("no events given")]
    Empty,
    #[error("{input}: {why}")]
    Invalid { input: String, why: String },
    #[error("{what}: {why}")]
    SetWide { what: String, why: String },
}

/// One event of an encoded set.
#[derive(Debug, Clone, Serialize)]
pub struct EncodedEvent {
    pub input: String,
    pub name: String,
    pub code: u64,
    pub umask: u64,
    /// Counters the event may use.
    pub counters: Vec<&'static str>,
    /// Counter the set's assignment gives it.
    pub counter: &'static str,
    /// Register fields that place this event on its counter.
    pub registers: RegisterValues,
}

/// A set of events placed on counters, and the register values that start counting it.
#[derive(Debug, Clone, Serialize)]
pub struct EncodedSet {
    pub pmu: &'static str,
    pub events: Vec<EncodedEvent>,
    pub registers: RegisterValues,
    /// What the set's options do to its events (which tag channel qualifies which
    /// event, fine mode, events left unconstrained).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// Counter index of each event, in input order.
    #[serde(skip)]
    pub assignment: Vec<usize>,
}

/// Counter mask of each event on `pmu`.
pub fn allowed_counters(pmu: &Pmu, sels: &[EventSel]) -> Vec<u64> {
    sels.iter().map(|s| (family(pmu).allowed)(pmu, s)).collect()
}

/// The counter of each event: a placement under the family's counter masks and rules,
/// or, on a PMU whose counters are shared, each event's first allowed counter.
pub fn assign(pmu: &Pmu, sels: &[EventSel], allowed: &[u64]) -> Result<Vec<usize>, ScheduleError> {
    assign_under(pmu, allowed, &*(family(pmu).rules)(pmu, sels))
}

/// [`assign`] under rules already built for the events.
fn assign_under(pmu: &Pmu, allowed: &[u64], rules: &dyn schedule::Rules) -> Result<Vec<usize>, ScheduleError> {
    if !pmu.desc.shared_counters {
        return schedule::solve(allowed, rules);
    }
    match allowed.iter().position(|&m| m == 0) {
        Some(event) => Err(ScheduleError::NoCounter { event }),
        None => Ok(allowed.iter().map(|m| m.trailing_zeros() as usize).collect()),
    }
}

/// Multiplexing groups: each a set that [`assign`] can place, in first-fit order, the
/// sets in `together` kept in one group where they can be placed at once.
pub fn groups(pmu: &Pmu, sels: &[EventSel], allowed: &[u64], together: &[Vec<usize>]) -> Result<Grouping, ScheduleError> {
    groups_under(pmu, allowed, together, &*(family(pmu).rules)(pmu, sels))
}

/// [`groups`] under rules already built for the events.
fn groups_under(pmu: &Pmu, allowed: &[u64], together: &[Vec<usize>], rules: &dyn schedule::Rules) -> Result<Grouping, ScheduleError> {
    if pmu.desc.shared_counters {
        return assign_under(pmu, allowed, rules).map(|_| Grouping { groups: vec![(0..allowed.len()).collect()], apart: Vec::new() });
    }
    schedule::groups(allowed, together, rules)
}

/// What `pmu schedule` decides for `sels` short of encoding registers: one group when
/// they fit together, else why not and the multiplexing groups (first fit, `together`
/// kept whole where it can be). The family's rules are built once for both.
pub fn plan(pmu: &Pmu, sels: &[EventSel], allowed: &[u64], together: &[Vec<usize>]) -> Result<(Option<String>, Grouping), EncodeError> {
    let rules = (family(pmu).rules)(pmu, sels);
    match assign_under(pmu, allowed, &*rules) {
        Ok(_) => Ok((None, Grouping { groups: vec![(0..sels.len()).collect()], apart: Vec::new() })),
        Err(e) => {
            let why = explain(pmu, sels, allowed, &e);
            let grouping = groups_under(pmu, allowed, together, &*rules)
                .map_err(|e| EncodeError::Unschedulable { pmu: pmu.name().to_string(), why: explain(pmu, sels, allowed, &e) })?;
            Ok((Some(why), grouping))
        }
    }
}

/// Refuse an event the family cannot program as given.
pub fn check(pmu: &Pmu, sel: &EventSel) -> Result<(), EncodeError> {
    (family(pmu).check)(pmu, sel).map_err(|why| EncodeError::Invalid { input: sel.input.clone(), why })
}

/// The counters an event of the table may use on `pmu`, as its family's restrictions
/// say (with its default unit mask, or its first when it has no default).
pub fn event_counters(pmu: &Pmu, event: &pmukit_core::table::EventDef) -> Vec<&'static str> {
    let text = match event.umasks.iter().any(|u| u.default) || event.umasks.is_empty() {
        true => event.name.to_string(),
        false => format!("{}.{}", event.name, event.umasks[0].name),
    };
    match event_string::resolve(&text, std::slice::from_ref(pmu), pmu.name()) {
        Ok(sel) => pmu.counter_names((family(pmu).allowed)(pmu, &sel)),
        Err(_) => pmu.counter_names(pmu.allowed_counters(event)),
    }
}

/// Explain a scheduling failure with event and counter names.
pub fn explain(pmu: &Pmu, sels: &[EventSel], allowed: &[u64], err: &ScheduleError) -> String {
    match err {
        ScheduleError::NoCounter { event } => format!("'{}' may use no counter of {}", sels[*event].input, pmu.name()),
        ScheduleError::Rules { events, rules } => {
            let mut names: Vec<String> = events.iter().map(|&e| format!("'{}'", sels[e].name())).collect();
            let (who, what) = match names.pop() {
                Some(last) if !names.is_empty() => (format!("{} and {last}", names.join(", ")), "cannot be counted together"),
                Some(only) => (only, "cannot be counted"),
                None => (String::new(), "cannot be counted"),
            };
            format!("{who} {what}: {}; count them in separate runs or let `pmu stat` multiplex them", rules.join("; "))
        }
        ScheduleError::SearchLimit { events } => {
            let names: Vec<String> = events.iter().map(|&e| format!("'{}'", sels[e].name())).collect();
            format!(
                "gave up placing {} together: {} placements tried under {}'s rules found none, nor proved there is none; \
                 count fewer of them together or let `pmu stat` multiplex them",
                names.join(", "),
                schedule::SEARCH_LIMIT,
                pmu.name()
            )
        }
        ScheduleError::Conflict { events, counters, .. } => {
            let names: Vec<String> =
                events.iter().map(|&e| format!("'{}' ({})", sels[e].name(), pmu.counter_names(allowed[e]).join("/"))).collect();
            let ctrs: Vec<&str> = counters.iter().map(|&c| pmu.desc.counters[c].name).collect();
            format!(
                "{} events {} share only the {} counter(s) {}; count them in separate runs or let `pmu stat` multiplex them",
                events.len(),
                names.join(", "),
                ctrs.len(),
                ctrs.join(", ")
            )
        }
    }
}

/// Place a set of events on counters and compute the register values.
pub fn encode_set(pmu: &Pmu, sels: &[EventSel]) -> Result<EncodedSet, EncodeError> {
    encode_set_with(pmu, sels, &SetOptions::default())
}

/// [`encode_set`] with set-wide options; their registers follow the counters' start
/// values.
pub fn encode_set_with(pmu: &Pmu, sels: &[EventSel], options: &SetOptions) -> Result<EncodedSet, EncodeError> {
    if sels.is_empty() {
        return Err(EncodeError::Empty);
    }
    if let Some(other) = sels.iter().find(|s| s.pmu != pmu.name()) {
        return Err(EncodeError::MixedPmus {
            first: sels[0].input.clone(),
            first_pmu: pmu.name().to_string(),
            other: other.input.clone(),
            other_pmu: other.pmu.to_string(),
        });
    }
    for sel in sels {
        check(pmu, sel)?;
    }
    let allowed = allowed_counters(pmu, sels);
    let assignment = assign(pmu, sels, &allowed)
        .map_err(|e| EncodeError::Unschedulable { pmu: pmu.name().to_string(), why: explain(pmu, sels, &allowed, &e) })?;
    let fam = family(pmu);
    let mut combined: RegisterValues = Vec::new();
    let mut events = Vec::new();
    for ((sel, &counter), &mask) in sels.iter().zip(&assignment).zip(&allowed) {
        let registers = (fam.placement)(pmu, sel, counter).map_err(|source| EncodeError::Register { input: sel.input.clone(), source })?;
        for &(reg, v) in &registers {
            match combined.iter_mut().find(|(r, _)| *r == reg) {
                Some((_, acc)) => *acc |= v,
                None => combined.push((reg, v)),
            }
        }
        events.push(EncodedEvent {
            input: sel.input.clone(),
            name: sel.name(),
            code: sel.code,
            umask: sel.umask,
            counters: pmu.counter_names(mask),
            counter: pmu.desc.counters[counter].name,
            registers,
        });
    }
    let mut registers = (fam.start)(&combined, &assignment);
    let (set_wide, notes) = (fam.set_registers)(pmu, sels, options)?;
    registers.extend(set_wide);
    Ok(EncodedSet { pmu: pmu.name(), events, registers, notes, assignment })
}

/// How a set of events is counted: together, or in multiplexing groups and why.
#[derive(Debug, Clone, Serialize)]
pub struct Schedule {
    pub pmu: &'static str,
    /// Why the events cannot all be counted together; `None` when they can.
    pub why: Option<String>,
    /// One group when the events fit together; otherwise the multiplexing groups, each
    /// counted in its turn.
    pub groups: Vec<ScheduledGroup>,
    /// Indices into the `together` sets that could not be counted at once.
    pub apart: Vec<usize>,
    /// The events scheduled (an event with a counter of its own may be in several
    /// groups).
    pub events: usize,
}

/// One multiplexing group: its events (positions in the input) and their encoding.
#[derive(Debug, Clone, Serialize)]
pub struct ScheduledGroup {
    pub events: Vec<usize>,
    pub set: EncodedSet,
}

/// Place `sels` on `pmu`'s counters together if they fit, else in multiplexing groups
/// (first fit, in input order, as perf rotates them), keeping each set of `together`
/// (indices into `sels`, such as a metric's events) in one group where it can be
/// placed at once. Every group is encoded with the set-wide `options`. Fails when an
/// event cannot be counted even alone.
pub fn schedule(pmu: &Pmu, sels: &[EventSel], together: &[Vec<usize>], options: &SetOptions) -> Result<Schedule, EncodeError> {
    if sels.is_empty() {
        return Err(EncodeError::Empty);
    }
    for sel in sels {
        check(pmu, sel)?;
    }
    let allowed = allowed_counters(pmu, sels);
    let (why, Grouping { groups, apart }) = plan(pmu, sels, &allowed, together)?;
    let groups = groups
        .into_iter()
        .map(|events: Vec<usize>| {
            let set = encode_set_with(pmu, &events.iter().map(|&i| sels[i].clone()).collect::<Vec<_>>(), options)?;
            Ok(ScheduledGroup { events, set })
        })
        .collect::<Result<Vec<_>, EncodeError>>()?;
    Ok(Schedule { pmu: pmu.name(), why, groups, apart, events: sels.len() })
}

/// Find a register of a PMU by name or alias.
pub fn register(pmu: &Pmu, name: &str) -> Result<Register, EncodeError> {
    let regs = registers(pmu);
    let valid = regs.iter().map(|r| r.name).collect::<Vec<_>>().join(", ");
    regs.into_iter().find(|r| r.is_named(name)).ok_or_else(|| EncodeError::UnknownRegister {
        pmu: pmu.name().to_string(),
        name: name.to_string(),
        valid,
    })
}

/// A register of a PMU in the layout `value` is read in, given the values of the
/// registers that select it (Montecito's PMC37 by its own ct, its EAR and trace
/// buffer PMDs by PMC37, PMC40 and PMC42); with a note when a mode was assumed.
pub fn register_for(pmu: &Pmu, name: &str, value: u64, given: &[(String, u64)]) -> Result<(Register, Option<String>), EncodeError> {
    Ok((family(pmu).layout)(register(pmu, name)?, value, given))
}

/// Decode a register value of a PMU, naming events in selector fields.
pub fn decode(pmu: &Pmu, register_name: &str, value: u64) -> Result<Decoded, EncodeError> {
    decode_with(pmu, register_name, value, &[])
}

/// Decode a register value whose layout other registers' values select (`given`,
/// by register name).
pub fn decode_with(pmu: &Pmu, register_name: &str, value: u64, given: &[(String, u64)]) -> Result<Decoded, EncodeError> {
    let (reg, note) = register_for(pmu, register_name, value, given)?;
    let mut decoded = reg
        .decode(value, &|field, reg| (family(pmu).explain)(pmu, field, reg))
        .map_err(|e| EncodeError::Register { input: format!("{value:#x}"), source: e })?;
    decoded.warnings.extend(note);
    // A register of a set that shares one layout (PMD48-63, PMC35 as PMC33, IBR3 as
    // IBR1) is the one asked for, not the first of its set; another name of the same
    // register (ARM's PMNC0 for PMN0) decodes under the register's own.
    let stem = |n: &str| n.trim_end_matches(|c: char| c.is_ascii_digit()).to_ascii_uppercase();
    if let Some(alias) = reg.aliases.iter().find(|a| a.eq_ignore_ascii_case(register_name) && stem(a) == stem(reg.name)) {
        decoded.register = alias.to_string();
    }
    Ok(decoded)
}
