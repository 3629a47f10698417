//! SPARC T4 performance instrumentation (SPARC T4 Supplement, chapter 10).
//!
//! Per virtual processor (strand): four PCR/PIC pairs, PCRn controlling PICn (§10.2,
//! §10.3). Per memory controller (MCU): DRAM_PERF_CTL_REG selecting what four DRAM
//! counters count, held in pairs in DRAM_PERF_COUNT01_REG and DRAM_PERF_COUNT23_REG
//! (§10.5). The core counters and the DRAM counters are two PMUs, `sparc-t4` and
//! `sparc-t4-dram`, each with its own event table.

use pmukit_core::event_string::EventSel;
use pmukit_core::pmu::{CounterDesc, GenericMap, ModifierDef, ModifierKind, Pmu, PmuDesc};
use pmukit_core::register::{Access, Field, NamedValue, Register, RegisterError, Values};

use crate::RegisterValues;

pub const FAMILY: &str = "sparc-t4";
pub const DRAM_FAMILY: &str = "sparc-t4-dram";

const OFF_ON: &[NamedValue] =
    &[NamedValue { value: 0, name: "0", meaning: "disabled" }, NamedValue { value: 1, name: "1", meaning: "enabled" }];
const OVERFLOW: &[NamedValue] = &[
    NamedValue { value: 0, name: "0", meaning: "no overflow" },
    NamedValue { value: 1, name: "1", meaning: "PIC wrapped from 2^32-1 to 0" },
];

// TABLE 10-1, one constant per field.
/// Bits 63:19: reserved, read as 0.
pub const PCR_RESERVED: Field = Field::new("RSVD", 63, 19, "Reserved").with_access(Access::Reserved { unpredictable_read: false });
/// Bit 18: set with ov on a next-to-commit instruction; software may clear, never set (§10.2).
pub const NTC: Field = Field::new("ntc", 18, 18, "Set when PIC wraps from 2^32-1 to 0 on a next-to-commit instruction")
    .with_access(Access::Sticky)
    .with_values(Values::Named(&[
        NamedValue { value: 0, name: "0", meaning: "no wrap on a next-to-commit instruction" },
        NamedValue { value: 1, name: "1", meaning: "wrapped on a next-to-commit instruction: the handler must DONE, not RETRY" },
    ]));
/// Bit 17: privileged and non-privileged PIC accesses trap when set.
pub const PICNHT: Field = Field::new("picnht", 17, 17, "PIC non-hyperprivileged trap").with_values(Values::Named(&[
    NamedValue { value: 0, name: "0", meaning: "privileged software may access the PIC" },
    NamedValue { value: 1, name: "1", meaning: "privileged and non-privileged PIC accesses trap (privileged_action)" },
]));
/// Bit 16: non-privileged PIC accesses trap when set.
pub const PICNPT: Field = Field::new("picnpt", 16, 16, "PIC non-privileged trap").with_values(Values::Named(&[
    NamedValue { value: 0, name: "0", meaning: "non-privileged software may access the PIC (if picnht = 0)" },
    NamedValue { value: 1, name: "1", meaning: "non-privileged PIC accesses trap (privileged_action)" },
]));
/// Bits 15:11: the event group (TABLE 10-2).
pub const SL: Field = Field::new("sl", 15, 11, "Selects one of 32 events to be counted (TABLE 10-2)").with_values(Values::Event);
/// Bits 10:5: the subevents of the group.
pub const MASK: Field = Field::new("mask", 10, 5, "Mask event for PIC (TABLE 10-2)").with_values(Values::Umask);
/// Bit 4: count in hyperprivileged mode.
pub const HT: Field = Field::new("ht", 4, 4, "Count events in hyperprivileged mode").with_values(Values::Named(OFF_ON));
/// Bit 3: count in privileged mode.
pub const ST: Field = Field::new("st", 3, 3, "Count events in privileged mode").with_values(Values::Named(OFF_ON));
/// Bit 2: count in user mode.
pub const UT: Field = Field::new("ut", 2, 2, "Count events in user mode").with_values(Values::Named(OFF_ON));
/// Bit 1: trap on overflow (precise or disrupting, by event group).
pub const TOE: Field =
    Field::new("toe", 1, 1, "Trap-on-Event: trap to the hypervisor when the PIC overflows").with_values(Values::Named(OFF_ON));
/// Bit 0: set on wrap; software may clear, never set (§10.2).
pub const OV: Field =
    Field::new("ov", 0, 0, "Set to 1 when PIC wraps from 2^32-1 to 0").with_access(Access::Sticky).with_values(Values::Named(OVERFLOW));

/// TABLE 10-1: PCR0-3 at ASI 0x64, VA 0x00/0x08/0x10/0x18 (hyperprivileged).
pub const PCR: Register = Register::new(
    "PCR",
    64,
    0,
    "Performance Control Register (ASI 0x64, VA 0x00, 0x08, 0x10, 0x18 for PCR0-3; hyperprivileged)",
    &[PCR_RESERVED, NTC, PICNHT, PICNPT, SL, MASK, HT, ST, UT, TOE, OV],
)
.with_aliases(&["PCR0", "PCR1", "PCR2", "PCR3"]);

/// TABLE 10-3 bits 63:32: reserved.
pub const PIC_RESERVED: Field = Field::new("RSVD", 63, 32, "Reserved").with_access(Access::Reserved { unpredictable_read: false });
/// TABLE 10-3 bits 31:0.
pub const PIC_COUNTER: Field = Field::new("counter", 31, 0, "Programmable event counter, event controlled by PCR.sl");
/// TABLE 10-3: PIC0-3 at ASI 0xB0, VA 0x00/0x08/0x10/0x18.
pub const PIC: Register = Register::new(
    "PIC",
    64,
    0,
    "Performance Instrumentation Counter (ASI 0xB0, VA 0x00, 0x08, 0x10, 0x18 for PIC0-3)",
    &[PIC_RESERVED, PIC_COUNTER],
)
.with_aliases(&["PIC0", "PIC1", "PIC2", "PIC3"]);

/// §10.2: the PCRs' ASI; §10.3: the PICs'.
pub const PCR_ASI: u8 = 0x64;
pub const PIC_ASI: u8 = 0xB0;
/// VA of PCRn / PICn within its ASI.
pub const fn counter_va(n: usize) -> u64 {
    8 * n as u64
}

// TABLE 10-4 to 10-6: the DRAM counters of one MCU.
/// TABLE 10-4 bits 63:16: reserved, initial value unknown.
pub const DRAM_CTL_RESERVED: Field = Field::new("RSVD", 63, 16, "Reserved").with_access(Access::Reserved { unpredictable_read: true });
pub const SEL3: Field = Field::new("sel3", 15, 12, "Select code for performance counter 3 (cou1 port1)").with_values(Values::Event);
pub const SEL2: Field = Field::new("sel2", 11, 8, "Select code for performance counter 2 (cou1 port0)").with_values(Values::Event);
pub const SEL1: Field = Field::new("sel1", 7, 4, "Select code for performance counter 1 (cou0 port1)").with_values(Values::Event);
pub const SEL0: Field = Field::new("sel0", 3, 0, "Select code for performance counter 0 (cou0 port0)").with_values(Values::Event);
/// TABLE 10-4: DRAM_PERF_CTL_REG at 0xF804_0000_0408, Count 4, Step 4096.
pub const DRAM_PERF_CTL: Register = Register::new(
    "DRAM_PERF_CTL_REG",
    64,
    0,
    "DRAM Performance Control Register (0xF804_0000_0408 + 4096 x MCU)",
    &[DRAM_CTL_RESERVED, SEL3, SEL2, SEL1, SEL0],
)
.with_aliases(&["DRAM_PERF_CTL"]);

const STICKY: &[NamedValue] =
    &[NamedValue { value: 0, name: "0", meaning: "no overflow" }, NamedValue { value: 1, name: "1", meaning: "counter overflowed" }];
pub const STICKY0: Field =
    Field::new("sticky0", 63, 63, "Sticky overflow for counter 0").with_access(Access::Sticky).with_values(Values::Named(STICKY));
pub const COUNTER0: Field = Field::new("counter0", 62, 32, "Performance counter 0");
pub const STICKY1: Field =
    Field::new("sticky1", 31, 31, "Sticky overflow for counter 1").with_access(Access::Sticky).with_values(Values::Named(STICKY));
pub const COUNTER1: Field = Field::new("counter1", 30, 0, "Performance counter 1");
/// TABLE 10-5: DRAM_PERF_COUNT01_REG at 0xF804_0000_0410, Count 4, Step 4096.
pub const DRAM_PERF_COUNT01: Register = Register::new(
    "DRAM_PERF_COUNT01_REG",
    64,
    0,
    "DRAM Performance Counter 0 and 1 Register (0xF804_0000_0410 + 4096 x MCU); owned by Solaris",
    &[STICKY0, COUNTER0, STICKY1, COUNTER1],
)
.with_aliases(&["DRAM_PERF_COUNT01"]);
pub const STICKY3: Field =
    Field::new("sticky3", 63, 63, "Sticky overflow for counter 3").with_access(Access::Sticky).with_values(Values::Named(STICKY));
pub const COUNTER3: Field = Field::new("counter3", 62, 32, "Performance counter 3");
pub const STICKY2: Field =
    Field::new("sticky2", 31, 31, "Sticky overflow for counter 2").with_access(Access::Sticky).with_values(Values::Named(STICKY));
pub const COUNTER2: Field = Field::new("counter2", 30, 0, "Performance counter 2");
/// TABLE 10-6: DRAM_PERF_COUNT23_REG at 0xF804_0000_0418, Count 2, Step 4096.
pub const DRAM_PERF_COUNT23: Register = Register::new(
    "DRAM_PERF_COUNT23_REG",
    64,
    0,
    "DRAM Performance Counter 2 and 3 Register (0xF804_0000_0418 + 4096 x MCU); owned by power management",
    &[STICKY3, COUNTER3, STICKY2, COUNTER2],
)
.with_aliases(&["DRAM_PERF_COUNT23"]);

/// Physical address of each DRAM register in MCU 0, how many MCUs have it, and the
/// step between MCUs (TABLES 10-4 to 10-6, "Count" and "Step").
pub const DRAM_MAP: [(&Register, u64, u32); 3] =
    [(&DRAM_PERF_CTL, 0xF804_0000_0408, 4), (&DRAM_PERF_COUNT01, 0xF804_0000_0410, 4), (&DRAM_PERF_COUNT23, 0xF804_0000_0418, 2)];
pub const DRAM_STEP: u64 = 4096;

/// Select field, counter field and sticky bit of each DRAM counter.
pub const DRAM_COUNTERS: [(&Field, &Field, &Field, &Register); 4] = [
    (&SEL0, &COUNTER0, &STICKY0, &DRAM_PERF_COUNT01),
    (&SEL1, &COUNTER1, &STICKY1, &DRAM_PERF_COUNT01),
    (&SEL2, &COUNTER2, &STICKY2, &DRAM_PERF_COUNT23),
    (&SEL3, &COUNTER3, &STICKY3, &DRAM_PERF_COUNT23),
];

const PIC_COUNTERS: &[CounterDesc] = &[
    CounterDesc { name: "PIC0", width: 32, description: "controlled by PCR0" },
    CounterDesc { name: "PIC1", width: 32, description: "controlled by PCR1" },
    CounterDesc { name: "PIC2", width: 32, description: "controlled by PCR2" },
    CounterDesc { name: "PIC3", width: 32, description: "controlled by PCR3" },
];

/// perf's privilege modifiers, mapped onto PCR.ut/st/ht. Without any, user and
/// privileged modes are counted.
const PRIVILEGE: &[ModifierDef] = &[
    ModifierDef { name: "u", kind: ModifierKind::Flag, description: "count in user mode (PCR.ut)" },
    ModifierDef { name: "k", kind: ModifierKind::Flag, description: "count in privileged mode (PCR.st)" },
    ModifierDef { name: "h", kind: ModifierKind::Flag, description: "count in hyperprivileged mode (PCR.ht); no precise traps then" },
];

pub static SPARC_T4: PmuDesc = PmuDesc {
    name: "sparc-t4",
    family: FAMILY,
    model: "sparc-t4",
    description: "SPARC T4 strand: PCR0-3 / PIC0-3 (32-bit), privilege filtering, precise and disrupting overflow traps",
    counters: PIC_COUNTERS,
    general_counters: &["PIC0", "PIC1", "PIC2", "PIC3"],
    modifiers: PRIVILEGE,
    event_modifiers: &[],
    max_code: 31,
    max_umask: 0x3F,
    raw_umask_bits: 6,
    raw_outside_table: Some("TABLE 10-2: sl 0 disables counting, 12-15 and 27 are reserved, and 29-31 are undocumented"),
    shared_counters: false,
    // Linux's niagara4 map, (sl << 6) | mask: cycles 26 << 6, instructions 3 << 6 | 0x3f,
    // cache-references 3 << 6 | 0x04, cache-misses 16 << 6 | 0x07, branches
    // 4 << 6 | 0x01, branch-misses 25 << 6 | 0x0f.
    generic: GenericMap {
        events: &[
            ("cpu-cycles", "CYCLES"),
            ("instructions", "INSTR.ALL"),
            ("cache-references", "INSTR.LOADS"),
            ("cache-misses", "DC_MISS_PRECISE.ANY"),
            ("branch-instructions", "INSTR_SPECIAL.BRANCHES"),
            ("branch-misses", "BR_MISPREDICT.ALL"),
        ],
        source: "Linux's SPARC perf driver for T4 and later (arch/sparc/kernel/perf_event.c, niagara4_perfmon_event_map)",
    },
    // perf_event.c: perf_pmu_register(&pmu, "cpu", PERF_TYPE_RAW).
    linux_pmu: Some("cpu"),
};

/// Why the memory controllers take no generic names.
pub(crate) const DRAM_GENERIC: &str =
    "memory controller counters are not a perf_events PMU in Linux: no generic name maps to them; use the strand PMU for cycles, instructions and branches";

const DRAM_COUNTER_DESCS: &[CounterDesc] = &[
    CounterDesc { name: "DRAM0", width: 31, description: "counter 0 (cou0 port0), DRAM_PERF_COUNT01_REG, Solaris-owned" },
    CounterDesc { name: "DRAM1", width: 31, description: "counter 1 (cou0 port1), DRAM_PERF_COUNT01_REG, Solaris-owned" },
    CounterDesc { name: "DRAM2", width: 31, description: "counter 2 (cou1 port0), DRAM_PERF_COUNT23_REG, owned by power management" },
    CounterDesc { name: "DRAM3", width: 31, description: "counter 3 (cou1 port1), DRAM_PERF_COUNT23_REG, owned by power management" },
];

pub static SPARC_T4_DRAM: PmuDesc = PmuDesc {
    name: "sparc-t4-dram",
    family: DRAM_FAMILY,
    model: "sparc-t4",
    description: "SPARC T4 memory controller: four DRAM counters per MCU; counters 0-1 belong to Solaris, 2-3 to power management",
    counters: DRAM_COUNTER_DESCS,
    // §10.5: Solaris uses DRAM_PERF_COUNT01_REG only.
    general_counters: &["DRAM0", "DRAM1"],
    modifiers: &[],
    event_modifiers: &[],
    max_code: 0xF,
    max_umask: 0,
    raw_umask_bits: 0,
    raw_outside_table: Some("TABLE 10-7: select codes 1101 and 111x are reserved"),
    shared_counters: false,
    generic: GenericMap { events: &[], source: DRAM_GENERIC },
    linux_pmu: None,
};

/// The strand registers as one PCR and one PIC layout (the four of each are alike).
pub fn registers(_pmu: &Pmu) -> Vec<Register> {
    vec![PCR, PIC]
}

pub fn allowed(pmu: &Pmu, sel: &EventSel) -> u64 {
    match &sel.event {
        Some(e) => pmu.allowed_counters(e),
        None => (1 << pmu.desc.general_counters.len()) - 1,
    }
}

/// PCRn.ut/st/ht from the privilege modifiers: none given means user and privileged.
pub fn privilege_bits(sel: &EventSel) -> (u64, u64, u64) {
    let given = |m| sel.modifier(m).unwrap_or(0);
    if ["u", "k", "h"].iter().all(|m| sel.modifier(m).is_none()) {
        (1, 1, 0)
    } else {
        (given("u"), given("k"), given("h"))
    }
}

/// PCRn for one event on PICn: sl, mask, privilege bits and toe (overflow traps keep
/// the 64-bit counts exact).
pub fn placement(_pmu: &Pmu, sel: &EventSel, counter: usize) -> Result<RegisterValues, RegisterError> {
    let (ut, st, ht) = privilege_bits(sel);
    let value = PCR.encode(&[("sl", sel.code), ("mask", sel.umask), ("ut", ut), ("st", st), ("ht", ht), ("toe", 1)])?;
    Ok(vec![(["PCR0", "PCR1", "PCR2", "PCR3"][counter], value)])
}

/// Each PCR is written on its own; nothing is shared between counters.
pub fn start(placed: &RegisterValues, _counters: &[usize]) -> RegisterValues {
    placed.clone()
}

/// sl names the event group; mask names the subevents of the group sl selects.
pub fn explain(pmu: &Pmu, field: &Field, register: u64) -> Option<String> {
    let sl = SL.get(register);
    let event = pmu.table.by_code(sl, pmu.desc.model);
    if field.name == SL.name {
        return match (sl, event) {
            (0, _) => Some("disabled: no events are counted, counters power-managed off".to_string()),
            (_, Some(e)) => Some(e.name.to_string()),
            // TABLE 10-2 marks sl 12-15 and 27 reserved; it says nothing of sl 29-31
            // (its last page is missing from the spec text: ERRATA T1).
            (12..=15 | 27, None) => Some(format!("sl {sl}: reserved")),
            (_, None) => Some(format!("sl {sl}: undocumented (the spec describes no event for it)")),
        };
    }
    let mask = field.get(register);
    let e = event?;
    if let Some(u) = e.umasks.iter().find(|u| u.value == mask & !e.umask_ignored) {
        return Some(format!("{}.{}", e.name, u.name));
    }
    let parts: Vec<&str> = e.umasks.iter().filter(|u| u.value.count_ones() == 1 && mask & u.value != 0).map(|u| u.name.as_ref()).collect();
    Some(format!("{} with {}", e.name, if parts.is_empty() { format!("mask {mask:#x}") } else { parts.join(" + ") }))
}

pub fn dram_start(placed: &RegisterValues, _counters: &[usize]) -> RegisterValues {
    placed.clone()
}

/// Select fields name their TABLE 10-7 code.
pub fn dram_explain(pmu: &Pmu, field: &Field, register: u64) -> Option<String> {
    let code = field.get(register);
    Some(pmu.event_name(code).unwrap_or_else(|| format!("select {code:#06b}: reserved")))
}
