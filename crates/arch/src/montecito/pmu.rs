//! The Montecito PMU as the encoder and scheduler see it: the twelve generic counters
//! PMD4-15 of each thread, the event-string modifiers, the counter restrictions of
//! §3.3.3 and chapter 4, and the placement rules that relate events to each other (the
//! L1D and L2D event sets of §4.8.2 and §4.8.4, mutually exclusive events).
//!
//! Two PMUs share the table: `montecito`, a core with Hyper-Threading enabled (two
//! threads, so Floating, Self Floating and Causal events need a duplicated counter,
//! §4.2.1), and `montecito-st`, the same core running one thread.

use pmukit_core::event_string::EventSel;
use pmukit_core::pmu::{CounterDesc, GenericMap, ModifierDef, ModifierKind, Pmu, PmuDesc};
use pmukit_core::register::{Field, Register, RegisterError};
use pmukit_core::table::UmaskDef;

use super::registers::{
    ALL, ES, ISM, ISM_PROPER, MESI, OI, PLM, PMC0, PMC1, PMC2, PMC3, PMC_BANKED, PMC_GENERIC, PMD_GENERIC, THRESHOLD, UMASK,
};
use super::{capture, capture_events, ear, etb, pal, qualification, qualify, registers};
use crate::{EncodeError, RegisterValues, SetOptions};

pub const FAMILY: &str = "montecito";
pub const MODEL: &str = "montecito";

/// Counter index n is PMD(n + 4) / PMC(n + 4).
pub const FIRST_COUNTER: usize = 4;
pub const PMC_NAMES: [&str; 12] = ["PMC4", "PMC5", "PMC6", "PMC7", "PMC8", "PMC9", "PMC10", "PMC11", "PMC12", "PMC13", "PMC14", "PMC15"];
pub const PMD_NAMES: [&str; 12] = ["PMD4", "PMD5", "PMD6", "PMD7", "PMD8", "PMD9", "PMD10", "PMD11", "PMD12", "PMD13", "PMD14", "PMD15"];

/// §3.3.2: the duplicated counters PMD4-9 (they count while their thread is in the
/// background), as a counter mask.
pub const DUPLICATED: u64 = mask(registers::DUPLICATED);
/// §3.3.2: the banked counters PMD10-15, as a counter mask.
pub const BANKED: u64 = mask(registers::BANKED);
const EVERY: u64 = DUPLICATED | BANKED;

/// The counter mask of a range of PMD numbers.
const fn mask(pmds: core::ops::RangeInclusive<usize>) -> u64 {
    ((1 << (*pmds.end() - *pmds.start() + 1)) - 1) << (*pmds.start() - FIRST_COUNTER)
}

pub(super) const fn index(pmd: usize) -> usize {
    pmd - FIRST_COUNTER
}

const COUNTERS: &[CounterDesc] = &[
    CounterDesc { name: "PMD4", width: 47, description: "duplicated; L2D set anchor (PMC4)" },
    CounterDesc { name: "PMD5", width: 47, description: "duplicated; selects the L1D set; shares PMC4's L2D set and umask" },
    CounterDesc { name: "PMD6", width: 47, description: "duplicated; L2D set anchor (PMC6)" },
    CounterDesc { name: "PMD7", width: 47, description: "duplicated; shares PMC6's L2D set and umask" },
    CounterDesc { name: "PMD8", width: 47, description: "duplicated; shares PMC4's L2D set and umask" },
    CounterDesc { name: "PMD9", width: 47, description: "duplicated; shares PMC6's L2D set and umask" },
    CounterDesc { name: "PMD10", width: 47, description: "banked; the only counter for CPU_OP_CYCLES_HALTED" },
    CounterDesc { name: "PMD11", width: 47, description: "banked" },
    CounterDesc { name: "PMD12", width: 47, description: "banked" },
    CounterDesc { name: "PMD13", width: 47, description: "banked" },
    CounterDesc { name: "PMD14", width: 47, description: "banked" },
    CounterDesc { name: "PMD15", width: 47, description: "banked" },
];

/// perf's privilege modifiers on PMC.plm, the raw mask, and Table 3-6's fields.
const MODIFIERS: &[ModifierDef] = &[
    ModifierDef { name: "u", kind: ModifierKind::Flag, description: "count at privilege level 3 (PMC.plm bit 3)" },
    ModifierDef { name: "k", kind: ModifierKind::Flag, description: "count at privilege level 0 (PMC.plm bit 0)" },
    ModifierDef {
        name: "plm",
        kind: ModifierKind::Number { min: 1, max: 15 },
        description: "privilege level mask: bit n counts at privilege level n (instead of :u/:k)",
    },
    ModifierDef {
        name: "thresh",
        kind: ModifierKind::Number { min: 0, max: 7 },
        description: "count cycles in which the event's value exceeds N (PMC.threshold; below the event's max increment)",
    },
    ModifierDef { name: "all", kind: ModifierKind::Flag, description: "count both threads (PMC.all; duplicated counters PMD4-9 only)" },
];

/// MESI filtering exists only on the events that list it.
const EVENT_MODIFIERS: &[ModifierDef] = &[ModifierDef {
    name: "mesi",
    kind: ModifierKind::Number { min: 1, max: 15 },
    description: "MESI filter (PMC.MESI): bit 0 I, 1 S, 2 E, 3 M; default 0xf counts every state",
}];

const fn desc(name: &'static str, description: &'static str) -> PmuDesc {
    PmuDesc {
        name,
        family: FAMILY,
        model: MODEL,
        description,
        counters: COUNTERS,
        general_counters: &["PMD4", "PMD5", "PMD6", "PMD7", "PMD8", "PMD9", "PMD10", "PMD11", "PMD12", "PMD13", "PMD14", "PMD15"],
        modifiers: MODIFIERS,
        event_modifiers: EVENT_MODIFIERS,
        max_code: 0xFF,
        max_umask: 0xF,
        raw_umask_bits: 4,
        raw_outside_table: Some("chapter 4 defines every event code; other codes are not events"),
        shared_counters: false,
        generic: GenericMap {
            events: &[],
            source: "Linux never had a perf_events driver for Itanium (IA-64 counted through perfmon), so no generic name maps to a Montecito event (CPU_OP_CYCLES.ALL counts cycles, IA64_INST_RETIRED.THIS instructions)",
        },
        linux_pmu: None,
    }
}

/// A core with Hyper-Threading enabled: two threads share the pipeline (§2.4).
pub static MONTECITO: PmuDesc = desc(
    "montecito",
    "Itanium 2 Montecito core, two hardware threads: PMC/PMD4-15 per thread (47-bit; 4-9 duplicated, 10-15 banked), PMC0 overflow and freeze",
);
/// The same core running one thread: no background thread, so no MT restriction.
pub static MONTECITO_ST: PmuDesc = desc(
    "montecito-st",
    "Itanium 2 Montecito core, one hardware thread (Hyper-Threading disabled): PMC/PMD4-15 (47-bit), PMC0 overflow and freeze",
);

/// Is this the two-thread PMU?
fn threaded(pmu: &Pmu) -> bool {
    pmu.desc.name == MONTECITO.name
}

pub fn registers(_pmu: &Pmu) -> Vec<Register> {
    // PMC4-9 and PMC10-15 share a layout but not the meaning of `all` (Table 3-6).
    let (duplicated, banked) = PMC_NAMES.split_at(6);
    vec![
        PMC0,
        PMC1,
        PMC2,
        PMC3,
        PMC_GENERIC.with_aliases(duplicated),
        PMC_BANKED.with_aliases(banked),
        PMD_GENERIC.with_aliases(&PMD_NAMES),
        qualification::PMC32,
        qualification::PMC33_35,
        qualification::PMC34,
        qualification::PMC36,
        capture::PMC37_TLB,
        qualification::PMC38,
        capture::PMC39,
        capture::PMC40,
        qualification::PMC41,
        capture::PMC42,
        qualification::IBR_ADDRESS,
        qualification::IBR_MASK,
        qualification::DBR_ADDRESS,
        qualification::DBR_MASK,
        ear::PMD32,
        ear::PMD33_CACHE,
        ear::PMD34_TLB,
        ear::PMD35_TLB,
        ear::PMD36,
        capture::PMD38,
        etb::PMD39_ETB,
        etb::PMD48_ETB,
    ]
}

/// The layout of model-specific PMC`index` (32-42) for a `value` written to it.
pub fn specific_pmc(index: usize, value: u64) -> Option<Register> {
    Some(match index {
        32 => qualification::PMC32,
        33 | 35 => qualification::PMC33_35,
        34 => qualification::PMC34,
        36 => qualification::PMC36,
        37 => capture::pmc37_layout(value),
        38 => qualification::PMC38,
        39 => capture::PMC39,
        40 => capture::PMC40,
        41 => qualification::PMC41,
        42 => capture::PMC42,
        _ => return None,
    })
}

/// The layout a value of `register` is read in: PMC37's by its own ct; the I-EAR's
/// PMD34-35 by PMC37, the D-EAR's PMD32-33 by PMC40 and the trace buffer's PMD39 and
/// PMD48-63 by PMC42, as `given`, or else as those are at reset, with a note saying so.
pub fn layout(register: Register, value: u64, given: &[(String, u64)]) -> (Register, Option<String>) {
    let name = register.name;
    // The selecting register's value as given, or its reset value 0 with a note.
    let by = |pmc: &str, layout: fn(&str, u64) -> Option<Register>| {
        let (value, note) = match given.iter().find(|(n, _)| n.eq_ignore_ascii_case(pmc)) {
            Some(&(_, v)) => (v, None),
            None => (
                0,
                Some(format!(
                    "{name} is read as {pmc} = 0 (its reset value) selects; give --with {pmc}=VALUE for the mode it was captured in"
                )),
            ),
        };
        layout(name, value).map(|r| (r, note))
    };
    let chosen = match name {
        "PMC37" => return (capture::pmc37_layout(value), None),
        "PMD34" | "PMD35" => by("PMC37", ear::iear_layout),
        "PMD32" | "PMD33" => by("PMC40", ear::dear_layout),
        "PMD39" | "PMD48" => by("PMC42", etb::layout),
        _ => None,
    };
    chosen.unwrap_or((register, None))
}

/// The table's unit mask an event selection uses.
fn umask_def(sel: &EventSel) -> Option<&UmaskDef> {
    sel.event.as_ref().and_then(|e| e.umask_for(sel.umask))
}

/// An attribute of the selected event, the unit mask's own value first.
pub(super) fn attr<'a>(sel: &'a EventSel, key: &str) -> Option<&'a str> {
    sel.event.as_ref().and_then(|e| e.attr_with(key, umask_def(sel)))
}

/// §3.3.3: "ER/SI/L2D events can only be monitored using PMD4-9 (These are the events
/// with event select IDs belong to 'h8x, 'h9x, 'hax, 'hbx, 'hex and 'hfx)"; and
/// §4.8.4: "None of the L2 data cache events can be measured using PMD10-15", which
/// also covers L2D_MISSES, an L2D event of Table 4-19 whose code lies outside those
/// ranges (ERRATA MA8).
pub fn er_si_l2d(code: u64) -> bool {
    matches!(code >> 4, 0x8 | 0x9 | 0xa | 0xb | 0xe | 0xf) || code == L2D_MISSES
}

/// L2D_MISSES (Table 4-19, §4.8.4.10).
pub const L2D_MISSES: u64 = 0xcb;
/// The events that count what the capture units capture (4.15): the execution trace
/// buffer's, the instruction EAR's and the data EAR's.
pub const BRANCH_EVENT: u64 = 0x11;
pub const L1I_EAR_EVENTS: u64 = 0x43;
pub const DATA_EAR_EVENTS: u64 = 0xc8;

/// CPU_OP_CYCLES_HALTED: §3.3.3 "can only be monitored in PMD10".
pub const CYCLES_HALTED: u64 = 0x18;
/// The one counter CPU_OP_CYCLES_HALTED may use (§3.3.3).
pub const CYCLES_HALTED_PMD: usize = 10;
/// CPU_OP_CYCLES (PAL_CYCLES): §4.2.1's exception among Causal events, countable anywhere.
const CPU_OP_CYCLES: u64 = pal::CPU_OP_CYCLES as u64;

pub fn allowed(pmu: &Pmu, sel: &EventSel) -> u64 {
    let mut mask = EVERY;
    if er_si_l2d(sel.code) || sel.modifier("all") == Some(1) {
        mask &= DUPLICATED;
    }
    if sel.code == CYCLES_HALTED {
        // PMD10 wins over the Causal type's duplicated counters (ERRATA).
        return 1 << index(CYCLES_HALTED_PMD);
    }
    // §4.2.1: with two threads, Floating, Self Floating and Causal events "should only
    // be monitored in duplicated counters"; CPU_OP_CYCLES is the stated exception.
    if threaded(pmu) && matches!(attr(sel, "mt"), Some("F" | "S" | "C")) && sel.code != CPU_OP_CYCLES {
        mask &= DUPLICATED;
    }
    mask
}

/// The event's maximum increment per cycle (Table 4-42), 1 when the table gives none.
pub fn max_inc(sel: &EventSel) -> u64 {
    attr(sel, "max_inc").and_then(|v| v.parse().ok()).unwrap_or(1)
}

/// Refuse what the hardware cannot count as asked.
pub fn check(pmu: &Pmu, sel: &EventSel) -> Result<(), String> {
    if sel.modifier("plm").is_some() && (sel.modifier("u").is_some() || sel.modifier("k").is_some()) {
        return Err("conflicting modifiers: plm sets the whole privilege level mask; give either :plm=N or :u/:k".into());
    }
    let thresh = sel.modifier("thresh").unwrap_or(0);
    let max = max_inc(sel);
    if thresh >= max && thresh > 0 {
        let range = if max > 1 { format!("thresholds 0 to {}", max - 1) } else { "threshold 0 only".to_string() };
        return Err(format!(
            "threshold {thresh} is beyond {}'s range: it increments by at most {max} per cycle (Table 4-42), so a cycle never exceeds \
             {thresh}; use {range}",
            sel.name()
        ));
    }
    if sel.modifier("all") == Some(1) {
        if !threaded(pmu) {
            return Err(format!("{} has one thread: .all (count both threads) needs the two-thread PMU `montecito`", pmu.name()));
        }
        if attr(sel, "all_capable") == Some("N") {
            return Err(format!(
                "{} is not .all capable: with PMC.all set its counts would be wrong (§4.8.4); count each thread on its own",
                sel.name()
            ));
        }
    }
    Ok(())
}

/// PMC.plm from the privilege modifiers: user and kernel (levels 3 and 0) by default.
pub(super) fn plm(sel: &EventSel) -> u64 {
    if let Some(mask) = sel.modifier("plm") {
        return mask;
    }
    match (sel.modifier("u"), sel.modifier("k")) {
        (None, None) => 0b1001,
        (u, k) => u.unwrap_or(0) << 3 | k.unwrap_or(0),
    }
}

/// PMCn: the event, its unit mask, the privilege mask, threshold, .all and MESI filter;
/// ism '10 as §3.3.1 requires and oi set so an overflow interrupts the driver.
pub fn placement(_pmu: &Pmu, sel: &EventSel, counter: usize) -> Result<RegisterValues, RegisterError> {
    let capable = sel.event.as_ref().is_some_and(|e| e.modifiers.iter().any(|m| m.eq_ignore_ascii_case("mesi")));
    let mesi = if capable { sel.modifier("mesi").unwrap_or(0b1111) } else { 0 };
    let value = PMC_GENERIC.encode(&[
        (PLM.name, plm(sel)),
        (OI.name, 1),
        (ES.name, sel.code),
        (UMASK.name, sel.umask),
        (THRESHOLD.name, sel.modifier("thresh").unwrap_or(0)),
        (ISM.name, ISM_PROPER),
        (ALL.name, sel.modifier("all").unwrap_or(0)),
        (MESI.name, mesi),
    ])?;
    Ok(vec![(PMC_NAMES[counter], value)])
}

/// The qualification registers and breakpoint pairs the set's request writes
/// (`qualify`), then the capture registers its events arm (`capture_events`).
pub fn set_registers(_pmu: &Pmu, sels: &[EventSel], options: &SetOptions) -> Result<(RegisterValues, Vec<String>), EncodeError> {
    let refused = |r: qualify::Refusal| EncodeError::SetWide { what: r.what, why: r.why };
    let qualified = qualify::program(sels, &options.qualification).map_err(refused)?;
    let captures = capture_events::program(sels, options.ip_ear, &options.etb).map_err(refused)?;
    let registers = qualified.registers.into_iter().chain(captures.registers).collect();
    Ok((registers, qualified.notes.into_iter().chain(captures.notes).collect()))
}

/// Each PMC is written on its own.
pub fn start(placed: &RegisterValues, _counters: &[usize]) -> RegisterValues {
    placed.clone()
}

/// es names the event; umask names the unit mask of that event.
pub fn explain(pmu: &Pmu, field: &Field, register: u64) -> Option<String> {
    // The EARs' unit masks: thresholds and miss kinds, not event unit masks.
    if *field == capture::IEAR_CACHE_UMASK {
        return Some(capture::iear_threshold(field.get(register)));
    }
    if *field == capture::IEAR_TLB_UMASK {
        return Some(capture::tlb_kinds(field.get(register)));
    }
    if *field == capture::DEAR_UMASK {
        return Some(capture::dear_umask_meaning(register));
    }
    let code = ES.get(register);
    let event = pmu.table.by_code(code, pmu.desc.model);
    if field.name == ES.name {
        return Some(event.map_or_else(|| format!("es {code:#x}: not an event"), |e| e.name.to_string()));
    }
    let e = event?;
    let umask = UMASK.get(register);
    if let Some(u) = e.umask_for(umask) {
        return Some(u.name.to_string());
    }
    e.invalid_umask(umask).map(|bad| format!("{} {}", bad.kind.describe(), bad.note))
}
