//! ARM11 (ARM1136, ARM1156, ARM1176): the CP15 c15 performance monitor.
//!
//! Source: ARM Application Note 195 (ARM DAI 0195B). One cycle counter (CCNT) and two
//! event counters (PMN0, PMN1, which the note calls PMNC0/PMNC1), all 32 bits, driven
//! by the Performance Monitor Control Register (PMCR, Table 1).

use pmukit_core::event_string::EventSel;
use pmukit_core::pmu::{CounterDesc, GenericMap, ModifierDef, ModifierKind, Pmu, PmuDesc};
use pmukit_core::register::{Access, Field, NamedValue, Register, RegisterError, Values};

use crate::RegisterValues;

pub const FAMILY: &str = "arm11";

const OFF_ON: &[NamedValue] =
    &[NamedValue { value: 0, name: "0", meaning: "disabled" }, NamedValue { value: 1, name: "1", meaning: "enabled" }];
const FLAG: &[NamedValue] =
    &[NamedValue { value: 0, name: "0", meaning: "no overflow" }, NamedValue { value: 1, name: "1", meaning: "overflow has occurred" }];
const ACTION: &[NamedValue] =
    &[NamedValue { value: 0, name: "0", meaning: "no action" }, NamedValue { value: 1, name: "1", meaning: "reset counter to zero" }];
const SBZ: Access = Access::Reserved { unpredictable_read: true };

// Table 1, one constant per field: the only place a PMCR bit position is written.
/// Table 1 bit 31: should be zero on write, unpredictable on read.
pub const SBZ31: Field = Field::new("SBZ", 31, 31, "Should be zero on write / unpredictable on read").with_access(SBZ);
/// Table 1 bit 30 (ARM1156 only; SBZ on ARM1136/1176).
pub const FCC: Field = Field::new("FCC", 30, 30, "Enable CCNT FIQ interrupt reporting (ARM1156 only; SBZ on ARM1136/1176)")
    .with_values(Values::Named(OFF_ON))
    .only_on(&["arm1156"]);
/// Table 1 bit 29 (ARM1156 only).
pub const FC1: Field = Field::new("FC1", 29, 29, "Enable PMNC1 FIQ interrupt reporting (ARM1156 only; SBZ on ARM1136/1176)")
    .with_values(Values::Named(OFF_ON))
    .only_on(&["arm1156"]);
/// Table 1 bit 28 (ARM1156 only).
pub const FC0: Field = Field::new("FC0", 28, 28, "Enable PMNC0 FIQ interrupt reporting (ARM1156 only; SBZ on ARM1136/1176)")
    .with_values(Values::Named(OFF_ON))
    .only_on(&["arm1156"]);
/// Table 1 bits 27:20.
pub const EVT_COUNT0: Field = Field::new("EvtCount0", 27, 20, "PMNC0 event type (see table 2)").with_values(Values::Event);
/// Table 1 bits 19:12.
pub const EVT_COUNT1: Field = Field::new("EvtCount1", 19, 12, "PMNC1 event type (see table 2)").with_values(Values::Event);
/// Table 1 bit 11.
pub const X: Field = Field::new("X", 11, 11, "Enable export of the events to event bus for external monitoring (ETM trace)")
    .with_values(Values::Named(OFF_ON));
/// Table 1 bit 10: read 1 = overflow; write 1 clears the flag and the interrupt line.
pub const OCC: Field =
    Field::new("OCC", 10, 10, "CCNT overflow flag").with_access(Access::WriteOneToClear).with_values(Values::Named(FLAG));
/// Table 1 bit 9.
pub const OC1: Field = Field::new("OC1", 9, 9, "PMNC1 overflow flag").with_access(Access::WriteOneToClear).with_values(Values::Named(FLAG));
/// Table 1 bit 8.
pub const OC0: Field = Field::new("OC0", 8, 8, "PMNC0 overflow flag").with_access(Access::WriteOneToClear).with_values(Values::Named(FLAG));
/// Table 1 bit 7.
pub const SBZ7: Field = Field::new("SBZ", 7, 7, "Should be zero on write / unpredictable on read").with_access(SBZ);
/// Table 1 bit 6.
pub const ECC: Field = Field::new("ECC", 6, 6, "Enable CCNT interrupt").with_values(Values::Named(OFF_ON));
/// Table 1 bit 5.
pub const EC1: Field = Field::new("EC1", 5, 5, "Enable PMNC1 interrupt").with_values(Values::Named(OFF_ON));
/// Table 1 bit 4.
pub const EC0: Field = Field::new("EC0", 4, 4, "Enable PMNC0 interrupt").with_values(Values::Named(OFF_ON));
/// Table 1 bit 3: cycle count divider.
pub const D: Field = Field::new("D", 3, 3, "Cycle count divider").with_values(Values::Named(&[
    NamedValue { value: 0, name: "0", meaning: "CCNT counts every clock cycle" },
    NamedValue { value: 1, name: "1", meaning: "CCNT counts every 64th clock cycle" },
]));
/// Table 1 bit 2: write 1 resets CCNT; reads unpredictable.
pub const C: Field = Field::new("C", 2, 2, "CCNT Reset").with_access(Access::Action).with_values(Values::Named(ACTION));
/// Table 1 bit 1: write 1 resets PMN0 and PMN1; reads unpredictable.
pub const P: Field = Field::new("P", 1, 1, "PMNC1 and PMNC0 reset").with_access(Access::Action).with_values(Values::Named(ACTION));
/// Table 1 bit 0: enable all counters; must be set to clear an interrupt request.
pub const E: Field = Field::new("E", 0, 0, "Enable all counters").with_values(Values::Named(OFF_ON));

/// §2, Table 1: the Performance Monitor Control Register.
pub const PMCR: Register = Register::new(
    "PMCR",
    32,
    0,
    "Performance Monitor Control Register (MRC/MCR p15, 0, <Rd>, c15, c12, 0)",
    &[SBZ31, FCC, FC1, FC0, EVT_COUNT0, EVT_COUNT1, X, OCC, OC1, OC0, SBZ7, ECC, EC1, EC0, D, C, P, E],
)
.with_aliases(&["PMNC"]);

const COUNT: Field = Field::new("count", 31, 0, "Counter value");
/// §1: the cycle counter.
pub const CCNT: Register = Register::new("CCNT", 32, 0, "Cycle Counter Register (MRC/MCR p15, 0, <Rd>, c15, c12, 1)", &[COUNT]);
/// §1: event counter 0.
pub const PMN0: Register =
    Register::new("PMN0", 32, 0, "Count Register 0 (MRC/MCR p15, 0, <Rd>, c15, c12, 2)", &[COUNT]).with_aliases(&["PMNC0"]);
/// §1: event counter 1.
pub const PMN1: Register =
    Register::new("PMN1", 32, 0, "Count Register 1 (MRC/MCR p15, 0, <Rd>, c15, c12, 3)", &[COUNT]).with_aliases(&["PMNC1"]);

/// A CP15 register number as MRC/MCR name it: `p15, opc1, <Rd>, CRn, CRm, opc2`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cp15 {
    pub opc1: u8,
    pub crn: u8,
    pub crm: u8,
    pub opc2: u8,
}

/// §2: `MRC/MCR p15, 0, <Rd>, c15, c12, 0`.
pub const PMCR_CP: Cp15 = Cp15 { opc1: 0, crn: 15, crm: 12, opc2: 0 };
/// CCNT, PMN0 and PMN1 at opc2 1-3: the ARM11 TRMs' numbers, which the note omits
/// (docs/ERRATA.md).
pub const CCNT_CP: Cp15 = Cp15 { opc1: 0, crn: 15, crm: 12, opc2: 1 };
pub const PMN0_CP: Cp15 = Cp15 { opc1: 0, crn: 15, crm: 12, opc2: 2 };
pub const PMN1_CP: Cp15 = Cp15 { opc1: 0, crn: 15, crm: 12, opc2: 3 };

/// The four performance-monitor registers and their CP15 numbers.
pub const CP15_MAP: [(Cp15, &Register); 4] = [(PMCR_CP, &PMCR), (CCNT_CP, &CCNT), (PMN0_CP, &PMN0), (PMN1_CP, &PMN1)];

/// CP15 number of each counter, by counter index.
pub const COUNTER_CP: [Cp15; 3] = [CCNT_CP, PMN0_CP, PMN1_CP];

/// Counter indices, in the order of [`COUNTERS`].
pub const CCNT_IDX: usize = 0;
pub const PMN0_IDX: usize = 1;
pub const PMN1_IDX: usize = 2;

pub const COUNTERS: &[CounterDesc] = &[
    CounterDesc { name: "CCNT", width: 32, description: "cycle counter: every cycle, or every 64th with PMCR.D" },
    CounterDesc { name: "PMN0", width: 32, description: "event counter 0 (PMCR.EvtCount0)" },
    CounterDesc { name: "PMN1", width: 32, description: "event counter 1 (PMCR.EvtCount1)" },
];

/// The CPU_CYCLES event code: CCNT counts it without any selector.
pub const CYCLES_CODE: u64 = 0xFF;

/// FIQ reporting exists on ARM1156 only (Table 1: FCC/FC1/FC0 are SBZ on the others).
const FIQ: &[ModifierDef] = &[ModifierDef {
    name: "fiq",
    kind: ModifierKind::Flag,
    description: "report the counter's overflow on nPMUFIQ as well (PMCR.FCC/FC1/FC0, ARM1156 only)",
}];
const EVENT_MODIFIERS: &[ModifierDef] = &[ModifierDef {
    name: "d",
    kind: ModifierKind::Flag,
    description: "count every 64th cycle on CCNT (PMCR.D); the count is in units of 64 cycles",
}];
const RESERVED: &str = "Table 2 lists it as 'Reserved. Unpredictable behaviour.'";

/// Linux's ARMv6 driver (arch/arm/kernel/perf_event_v6.c) serves all three cores with
/// one map; it leaves cache-references, cache-misses, bus-cycles and ref-cycles
/// unsupported (Harvard caches: no combined count).
const GENERIC: GenericMap = GenericMap {
    events: &[
        ("cpu-cycles", "CPU_CYCLES"),
        ("instructions", "INSTR_EXEC"),
        ("branch-instructions", "BR_EXEC"),
        ("branch-misses", "BR_MISPREDICT"),
        ("stalled-cycles-frontend", "IBUF_STALL"),
        ("stalled-cycles-backend", "LSU_FULL_STALL"),
    ],
    source: "Linux's ARMv6 perf driver (arch/arm/kernel/perf_event_v6.c, armv6_perf_map)",
};

const fn desc(name: &'static str, linux: &'static str, description: &'static str, modifiers: &'static [ModifierDef]) -> PmuDesc {
    PmuDesc {
        name,
        family: FAMILY,
        model: name,
        description,
        counters: COUNTERS,
        general_counters: &["PMN0", "PMN1"],
        modifiers,
        event_modifiers: EVENT_MODIFIERS,
        max_code: 0xFF,
        max_umask: 0,
        raw_umask_bits: 0,
        raw_outside_table: Some(RESERVED),
        shared_counters: false,
        generic: GENERIC,
        linux_pmu: Some(linux),
    }
}

// Linux's arch/arm/kernel/perf_event_v6.c names its PMUs armv6_1136, armv6_1156, armv6_1176.
pub static ARM1136: PmuDesc = desc("arm1136", "armv6_1136", "ARM1136J(F)-S: CCNT, PMN0, PMN1 (32-bit), PMCR in CP15 c15", &[]);
pub static ARM1156: PmuDesc =
    desc("arm1156", "armv6_1156", "ARM1156T2(F)-S: as ARM1136, plus FIQ reporting (FCC/FC1/FC0) and nPMUFIQ", FIQ);
pub static ARM1176: PmuDesc = desc("arm1176", "armv6_1176", "ARM1176JZ(F)-S: as ARM1136, plus return-stack events 0x23-0x26", &[]);

/// The registers as they exist on `pmu`'s core.
pub fn registers(pmu: &Pmu) -> Vec<Register> {
    CP15_MAP.iter().map(|(_, r)| r.for_model(pmu.desc.model)).collect()
}

/// PMCR fields that place one event on one counter (event selector, divider, FIQ).
pub fn placement(pmu: &Pmu, sel: &EventSel, counter: usize) -> Result<RegisterValues, RegisterError> {
    let pmcr = PMCR.for_model(pmu.desc.model);
    let fiq = sel.modifier("fiq").unwrap_or(0);
    let fields: Vec<(&str, u64)> = match counter {
        CCNT_IDX => vec![(D.name, sel.modifier("d").unwrap_or(0)), (FCC.name, fiq)],
        PMN0_IDX => vec![(EVT_COUNT0.name, sel.code), (FC0.name, fiq)],
        _ => vec![(EVT_COUNT1.name, sel.code), (FC1.name, fiq)],
    };
    // Only ask for FIQ bits when wanted, so cores without them encode cleanly.
    let fields: Vec<(&str, u64)> = fields.into_iter().filter(|(n, v)| !n.starts_with("FC") || *v != 0).collect();
    Ok(vec![(PMCR.name, pmcr.encode(&fields)?)])
}

/// Counters an event may use: CCNT only counts cycles, and the divider exists only there.
pub fn allowed(pmu: &Pmu, sel: &EventSel) -> u64 {
    let mask = match &sel.event {
        Some(e) => pmu.allowed_counters(e),
        None => 1 << PMN0_IDX | 1 << PMN1_IDX,
    };
    if sel.modifier("d") == Some(1) {
        mask & 1 << CCNT_IDX
    } else {
        mask
    }
}

/// The interrupt-enable bit of each counter, so overflows are serviced.
pub fn interrupt_enable(counter: usize) -> &'static Field {
    match counter {
        CCNT_IDX => &ECC,
        PMN0_IDX => &EC0,
        _ => &EC1,
    }
}

/// The overflow flag of each counter.
pub fn overflow_flag(counter: usize) -> &'static Field {
    match counter {
        CCNT_IDX => &OCC,
        PMN0_IDX => &OC0,
        _ => &OC1,
    }
}

/// The PMCR value that starts counting a placed set: the events' fields, interrupt
/// enables for the used counters, all overflow flags cleared (write 1), both resets,
/// and E. §1: the flags clear only while E is set, so one write does it all.
pub fn start(placed: &RegisterValues, counters: &[usize]) -> RegisterValues {
    let mut v = placed.iter().find(|(r, _)| *r == PMCR.name).map_or(0, |(_, v)| *v);
    for &c in counters {
        v = interrupt_enable(c).set(v, 1);
    }
    for f in [&OCC, &OC1, &OC0, &C, &P, &E] {
        v = f.set(v, 1);
    }
    vec![(PMCR.name, v)]
}

/// EvtCount0/EvtCount1 name the Table 2 event they select.
pub fn explain(pmu: &Pmu, field: &Field, register: u64) -> Option<String> {
    pmu.event_name(field.get(register))
}
