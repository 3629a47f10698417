//! SPARC KT (SPARC T3) performance registers as the sun4v KT API reaches them
//! ("KT performance registers", `shared/spec/sparc-kt-performance-registers-hv-api.txt`,
//! cited as §n): the PerfReg# map of §3.1, the SPARC PCR bits §2.1 names, the DRAM
//! registers of §2.2 and the L2 control register of §2.3 with its virtualized view.
//! No behaviour: `pmukit_sim::models::kt` simulates the calls. `docs/kt.md` records
//! every reading of the text (entries TK1 up).

use std::fmt;

use pmukit_core::event_string::EventSel;
use pmukit_core::pmu::{CounterDesc, GenericMap, ModifierDef, ModifierKind, Pmu, PmuDesc};
use pmukit_core::register::{Access, Field, NamedValue, Register, RegisterError, Values};
use serde::Serialize;

use crate::sparc::t4;
use crate::RegisterValues;

/// §2.0: "up to a four way glueless coherent system": nodes 0 to 3.
pub const MAX_NODES: usize = 4;
/// §2.2: "'n' is 0 through 1 for a total of two different DRAM channels" (per node).
pub const MCUS_PER_NODE: usize = 2;
/// §2.2: each memory controller "receives read and write traffic from 8 L2 banks".
pub const L2_BANKS_PER_MCU: usize = 8;
/// Every L2 bank feeds exactly one MCU, so a node has 2 × 8 = 16 banks (TK9).
pub const L2_BANKS_PER_NODE: usize = MCUS_PER_NODE * L2_BANKS_PER_MCU;
/// §3.1: per node, MCU0 PCR/PIC01/PIC23 then MCU1 PCR/PIC01/PIC23.
pub const PERFREGS_PER_NODE: usize = MCUS_PER_NODE * DramReg::ALL.len();

/// §3.1 PerfReg# 0: the SPARC PCR of the calling strand.
pub const SPARC_PCR_PERFREG: u64 = 0;
/// §3.1 PerfReg# 1: the virtualized L2 control register ("all L2 Bank CRs").
pub const L2_CONTROL_PERFREG: u64 = 1;
/// §3.1 PerfReg# 2+i*6: the first register of node i.
pub const FIRST_NODE_PERFREG: u64 = 2;
/// One past the last PerfReg# of a four-node machine: 2 + 4 × 6 = 26 (the last is 25).
pub const PERFREG_LIMIT: u64 = FIRST_NODE_PERFREG + (MAX_NODES * PERFREGS_PER_NODE) as u64;

/// §2.2: the DRAM registers' local addresses are 0x84.0000.n408/n410/n418, written in
/// groups of four hex digits: 0x84_0000_0000 + 0x1000 × n + offset (TK3).
pub const DRAM_BASE: u64 = 0x84_0000_0000;
/// §2.2: `n` is the fourth hex digit from the right: MCU n's registers are 0x1000 apart.
pub const DRAM_MCU_STEP: u64 = 0x1000;
/// §2.3: the L2 control register's address, 0xA9.0000.0000.
pub const L2_CONTROL_ADDRESS: u64 = 0xA9_0000_0000;

/// One of the three DRAM performance registers of an MCU (§2.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum DramReg {
    /// DRAM Perf Control Register, n408.
    Pcr,
    /// The first DRAM Perf Counter Register, n410: counters 0 and 1.
    Pic01,
    /// The second DRAM Perf Counter Register, n418: counters 2 and 3.
    Pic23,
}

impl DramReg {
    /// In §2.2 and §3.1 order.
    pub const ALL: [DramReg; 3] = [DramReg::Pcr, DramReg::Pic01, DramReg::Pic23];

    /// The low 12 bits of the register's address (§2.2).
    pub const fn offset(self) -> u64 {
        match self {
            DramReg::Pcr => 0x408,
            DramReg::Pic01 => 0x410,
            DramReg::Pic23 => 0x418,
        }
    }

    /// The register's layout (TK4).
    pub const fn register(self) -> &'static Register {
        DRAM_REGISTERS[self.index()]
    }

    /// Position in an MCU's register array, [`DramReg::ALL`] order.
    pub const fn index(self) -> usize {
        match self {
            DramReg::Pcr => 0,
            DramReg::Pic01 => 1,
            DramReg::Pic23 => 2,
        }
    }
}

/// The local address of `reg` in MCU `mcu` (§2.2, §3.1 "Local address"). The same on
/// every node: it reaches the MCUs of the node the accessing strand is on (TK3).
pub const fn dram_local_address(mcu: usize, reg: DramReg) -> u64 {
    DRAM_BASE + DRAM_MCU_STEP * mcu as u64 + reg.offset()
}

/// §3.1 "Global address" `DRAMi.0000.0408`: node i's DRAM register page, whose value
/// the text never gives, followed by the same low 32 bits as the local address. Kept
/// symbolic rather than inventing a number (TK3); displays as the text writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct GlobalAddress {
    pub node: usize,
    /// The low 32 bits, as in the local address (`0x0000_0408` ...).
    pub offset: u64,
}

impl fmt::Display for GlobalAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "DRAM{}.{:04x}.{:04x}", self.node, self.offset >> 16, self.offset & 0xFFFF)
    }
}

/// §3.1 "Scope".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Scope {
    /// "local": reached without naming a node (the calling strand's PCR; the L2 control
    /// register, virtualized over every bank of every node, TK8).
    Local,
    /// "node-i".
    Node(usize),
}

/// What a PerfReg# reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Target {
    /// The calling strand's SPARC PCR (§3.1: "always on the current hardware strand").
    SparcPcr,
    /// The virtualized L2 control register ([`L2_CONTROL_VIRTUAL`]).
    L2Control,
    /// A DRAM register of MCU `mcu` of node `node`.
    Dram { node: usize, mcu: usize, reg: DramReg },
}

/// One row of the §3.1 table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PerfReg {
    pub number: u64,
    pub scope: Scope,
    /// The table's "Description" (`NODE0_MCU0_PCR`).
    pub name: &'static str,
    pub target: Target,
    /// "-" in the table: `None`.
    pub local_address: Option<u64>,
    pub global_address: Option<GlobalAddress>,
}

const fn local(number: u64, name: &'static str, target: Target) -> PerfReg {
    PerfReg { number, scope: Scope::Local, name, target, local_address: None, global_address: None }
}

/// Row 2+node*6+mcu*3+reg of the table.
const fn dram(node: usize, mcu: usize, reg: DramReg, name: &'static str) -> PerfReg {
    let address = dram_local_address(mcu, reg);
    PerfReg {
        number: FIRST_NODE_PERFREG + (node * PERFREGS_PER_NODE + mcu * DramReg::ALL.len() + reg.index()) as u64,
        scope: Scope::Node(node),
        name,
        target: Target::Dram { node, mcu, reg },
        local_address: Some(address),
        global_address: Some(GlobalAddress { node, offset: address & 0xFFFF_FFFF }),
    }
}

/// §3.1, every row for a four-node machine, in PerfReg# order; a machine of n nodes has
/// the first `2 + 6n` ([`perfregs`]).
pub const PERFREGS: [PerfReg; PERFREG_LIMIT as usize] = [
    local(SPARC_PCR_PERFREG, "SPARC PCR", Target::SparcPcr),
    local(L2_CONTROL_PERFREG, "all L2 Bank CRs", Target::L2Control),
    dram(0, 0, DramReg::Pcr, "NODE0_MCU0_PCR"),
    dram(0, 0, DramReg::Pic01, "NODE0_MCU0_PIC01"),
    dram(0, 0, DramReg::Pic23, "NODE0_MCU0_PIC23"),
    dram(0, 1, DramReg::Pcr, "NODE0_MCU1_PCR"),
    dram(0, 1, DramReg::Pic01, "NODE0_MCU1_PIC01"),
    dram(0, 1, DramReg::Pic23, "NODE0_MCU1_PIC23"),
    dram(1, 0, DramReg::Pcr, "NODE1_MCU0_PCR"),
    dram(1, 0, DramReg::Pic01, "NODE1_MCU0_PIC01"),
    dram(1, 0, DramReg::Pic23, "NODE1_MCU0_PIC23"),
    dram(1, 1, DramReg::Pcr, "NODE1_MCU1_PCR"),
    dram(1, 1, DramReg::Pic01, "NODE1_MCU1_PIC01"),
    dram(1, 1, DramReg::Pic23, "NODE1_MCU1_PIC23"),
    dram(2, 0, DramReg::Pcr, "NODE2_MCU0_PCR"),
    dram(2, 0, DramReg::Pic01, "NODE2_MCU0_PIC01"),
    dram(2, 0, DramReg::Pic23, "NODE2_MCU0_PIC23"),
    dram(2, 1, DramReg::Pcr, "NODE2_MCU1_PCR"),
    dram(2, 1, DramReg::Pic01, "NODE2_MCU1_PIC01"),
    dram(2, 1, DramReg::Pic23, "NODE2_MCU1_PIC23"),
    dram(3, 0, DramReg::Pcr, "NODE3_MCU0_PCR"),
    dram(3, 0, DramReg::Pic01, "NODE3_MCU0_PIC01"),
    dram(3, 0, DramReg::Pic23, "NODE3_MCU0_PIC23"),
    dram(3, 1, DramReg::Pcr, "NODE3_MCU1_PCR"),
    dram(3, 1, DramReg::Pic01, "NODE3_MCU1_PIC01"),
    dram(3, 1, DramReg::Pic23, "NODE3_MCU1_PIC23"),
];

// The rows are written in PerfReg# order: row i is PerfReg# i.
const _: () = {
    let mut i = 0;
    while i < PERFREGS.len() {
        assert!(PERFREGS[i].number == i as u64);
        i += 1;
    }
};

/// The §3.1 rows of a machine of `nodes` nodes (1 to [`MAX_NODES`]); `None` otherwise.
pub fn perfregs(nodes: usize) -> Option<&'static [PerfReg]> {
    (1..=MAX_NODES).contains(&nodes).then(|| &PERFREGS[..FIRST_NODE_PERFREG as usize + nodes * PERFREGS_PER_NODE])
}

/// The §3.1 row of PerfReg# `number` on a four-node machine.
pub fn perfreg(number: u64) -> Option<&'static PerfReg> {
    usize::try_from(number).ok().and_then(|i| PERFREGS.get(i))
}

// §2.1: the SPARC PCR. The text names two bits; the rest is opaque (TK5).
/// Bits 63:33: not described by the KT text; stored as written.
pub const PCR_OPAQUE_HIGH: Field = Field::new("opaque_63_33", 63, 33, "Not described by the KT text; stored as written");
/// Bit 32: §2.1 "A new sample mode(bit-32 of PCR) is added to PCR."
pub const SAMPLE: Field = Field::new("sample", 32, 32, "Sample mode (§2.1)").with_values(Values::Named(&[
    NamedValue { value: 0, name: "0", meaning: "sample mode off" },
    NamedValue { value: 1, name: "1", meaning: "sample mode on" },
]));
/// Bits 31:4: not described by the KT text; stored as written.
pub const PCR_OPAQUE_MID: Field = Field::new("opaque_31_4", 31, 4, "Not described by the KT text; stored as written");
/// §2.1: "The HT bit in SPARC PCR controls the counting of hyperprivileged events and may
/// be set only in hyperprivileged mode." The text gives no position: bit 3, the
/// Niagara 2 PCR's, which Linux uses for KT ("niagara3" shares `niagara2_pmu`, whose
/// `hv_bit` is `PCR_N2_HTRACE` 0x8) (TK5).
pub const HT: Field =
    Field::new("ht", 3, 3, "Count hyperprivileged events; set only in hyperprivileged mode (§2.1)").with_values(Values::Named(&[
        NamedValue { value: 0, name: "0", meaning: "hyperprivileged events not counted" },
        NamedValue { value: 1, name: "1", meaning: "hyperprivileged events counted" },
    ]));
/// §3.0 has the strand counters count the CLC events, which needs the user and
/// privileged trace bits the text does not place: bit 2 (UT) and bit 1 (ST), the
/// Niagara 2 PCR's, from the same Linux source as HT (`PCR_UTRACE` 0x4, `PCR_STRACE`
/// 0x2) (TK16).
pub const UT: Field = Field::new("ut", 2, 2, "Count events in user mode (TK16)").with_values(Values::Named(OFF_ON));
pub const ST: Field = Field::new("st", 1, 1, "Count events in privileged mode (TK16)").with_values(Values::Named(OFF_ON));
/// Bit 0: not described by the KT text; stored as written.
pub const PCR_OPAQUE_LOW: Field = Field::new("opaque_0", 0, 0, "Not described by the KT text; stored as written");
const OFF_ON: &[NamedValue] =
    &[NamedValue { value: 0, name: "0", meaning: "not counted" }, NamedValue { value: 1, name: "1", meaning: "counted" }];
/// §2.1: the SPARC Performance Control Register, ASR 0x10, one per strand.
pub const SPARC_PCR: Register = Register::new(
    "SPARC_PCR",
    64,
    0,
    "SPARC Performance Control Register (ASR 0x10, per strand); §2.1 describes ht and sample, ut and st are placed by TK16",
    &[PCR_OPAQUE_HIGH, SAMPLE, PCR_OPAQUE_MID, HT, UT, ST, PCR_OPAQUE_LOW],
)
.with_aliases(&["PCR"]);
/// §2.1: the ASRs of the strand's PCR and PIC.
pub const PCR_ASR: u8 = 0x10;
pub const PIC_ASR: u8 = 0x11;

/// §3.0: "The SPARC performance registers are used to get CLC performance counters":
/// the lower 32 bits count the CLC events PERF_CONFIG selects; the upper half, whose
/// events the text does not give, is stored as written (TK16).
pub const PIC0: Field = Field::new("pic0", 31, 0, "Counts the CLC events (L2 misses) PERF_CONFIG selects (§3.0, TK16)");
pub const PIC1: Field = Field::new("pic1", 63, 32, "Not described by the KT text; stored as written");
/// §2.1: the SPARC Performance Instrumentation Counter, ASR 0x11, one per strand,
/// read and written directly by privileged code.
pub const SPARC_PIC: Register = Register::new(
    "SPARC_PIC",
    64,
    0,
    "SPARC Performance Instrumentation Counter (ASR 0x11, per strand; privileged code reads and writes it directly)",
    &[PIC1, PIC0],
)
.with_aliases(&["PIC"]);

/// §3.0: "In default mode all L2 misses are counted. The PERF_CONFIG bits ... can be
/// programmed to count misses serviced from local memory, misses serviced from remote
/// memory or misses serviced by cache-to-cache transfers." The text gives no encoding:
/// 0 to 3 in its order (TK6).
pub const PERF_CONFIG_ALL_MISSES: u64 = 0;
pub const PERF_CONFIG_LOCAL: u64 = 1;
pub const PERF_CONFIG_REMOTE: u64 = 2;
pub const PERF_CONFIG_CACHE_TO_CACHE: u64 = 3;
const PERF_CONFIG_VALUES: &[NamedValue] = &[
    NamedValue { value: PERF_CONFIG_ALL_MISSES, name: "all", meaning: "all L2 misses (default)" },
    NamedValue { value: PERF_CONFIG_LOCAL, name: "local", meaning: "L2 misses serviced from local memory" },
    NamedValue { value: PERF_CONFIG_REMOTE, name: "remote", meaning: "L2 misses serviced from remote memory" },
    NamedValue { value: PERF_CONFIG_CACHE_TO_CACHE, name: "c2c", meaning: "L2 misses serviced by cache-to-cache transfers" },
];

/// §2.3: "The perf control bits in the L2 Control Register are 37:36".
pub const L2_PERF_CONFIG: Field =
    Field::new("perf_config", 37, 36, "What the CLC counters count (§2.3, §3.0)").with_values(Values::Named(PERF_CONFIG_VALUES));
/// §2.3: the rest holds the "address interleave ceiling mask and nodeid" fields, whose
/// positions the text does not give; the hypervisor owns them (TK7).
pub const L2_OPAQUE_HIGH: Field = Field::new("hv_63_38", 63, 38, "Hypervisor-owned (interleave ceiling mask, nodeid, ...; §2.3)");
pub const L2_OPAQUE_LOW: Field = Field::new("hv_35_0", 35, 0, "Hypervisor-owned (interleave ceiling mask, nodeid, ...; §2.3)");
/// §2.3: one L2 bank's control register (hyperprivileged).
pub const L2_CONTROL: Register = Register::new(
    "L2_CONTROL_REG",
    64,
    0,
    "L2 Control Register of one bank (0xA9.0000.0000; hyperprivileged); only PERF_CONFIG is exposed (§2.3)",
    &[L2_OPAQUE_HIGH, L2_PERF_CONFIG, L2_OPAQUE_LOW],
);

/// §2.3: "which are bits 1:0 in the virtualized L2 Control Register".
pub const PERF_CONFIG: Field = Field::new("perf_config", 1, 0, "PERF_CONFIG, copied to bits 37:36 of every L2 bank (§2.3)")
    .with_values(Values::Named(PERF_CONFIG_VALUES));
/// Bits 63:2 of the virtualized register: "The PERF_CONFIG bits are the only bits that
/// are exposed" (§2.3): reserved, written as ignored, read as 0 (TK7).
pub const PERF_CONFIG_RESERVED: Field =
    Field::new("RSVD", 63, 2, "Reserved: not exposed (§2.3)").with_access(Access::Reserved { unpredictable_read: false });
/// §2.3, §3.0: the virtualized L2 control register, PerfReg# 1.
pub const L2_CONTROL_VIRTUAL: Register = Register::new(
    "L2_CONTROL_VIRTUAL",
    64,
    0,
    "Virtualized L2 Control Register (PerfReg# 1): PERF_CONFIG of every L2 bank (§2.3, §3.0)",
    &[PERF_CONFIG_RESERVED, PERF_CONFIG],
);

/// The virtualized register's value for a bank control register's value (§2.3).
pub const fn virtual_of_bank(bank: u64) -> u64 {
    PERF_CONFIG.set(0, L2_PERF_CONFIG.get(bank))
}

/// A bank control register's value after the guest writes `virtual_value` to PerfReg# 1:
/// only bits 37:36 change (§2.3).
pub const fn bank_with_virtual(bank: u64, virtual_value: u64) -> u64 {
    L2_PERF_CONFIG.set(bank, PERF_CONFIG.get(virtual_value))
}

// §2.2 gives locations only. The layout is the SPARC T4 one (T4 Supplement TABLES
// 10-4 to 10-6), whose registers sit at the same offsets 0x408/0x410/0x418 with the
// same "four performance counters, packed into two registers, plus a register to
// control what is counted" (TK4).
/// §2.2 n408: four 4-bit select codes.
pub const DRAM_PERF_CTL: Register = Register::new(
    "DRAM_PERF_CTL",
    64,
    0,
    "DRAM Perf Control Register (0x84.0000.n408; hyperprivileged; T4 layout, TK4)",
    &[t4::DRAM_CTL_RESERVED, t4::SEL3, t4::SEL2, t4::SEL1, t4::SEL0],
);
/// §2.2 n410: counters 0 and 1, 31 bits each with a sticky overflow bit.
pub const DRAM_PERF_COUNT01: Register = Register::new(
    "DRAM_PERF_COUNT01",
    64,
    0,
    "DRAM Perf Counter Register, counters 0 and 1 (0x84.0000.n410; hyperprivileged; T4 layout, TK4)",
    &[t4::STICKY0, t4::COUNTER0, t4::STICKY1, t4::COUNTER1],
)
.with_aliases(&["DRAM_PERF_PIC01"]);
/// §2.2 n418: counters 2 and 3.
pub const DRAM_PERF_COUNT23: Register = Register::new(
    "DRAM_PERF_COUNT23",
    64,
    0,
    "DRAM Perf Counter Register, counters 2 and 3 (0x84.0000.n418; hyperprivileged; T4 layout, TK4)",
    &[t4::STICKY3, t4::COUNTER3, t4::STICKY2, t4::COUNTER2],
)
.with_aliases(&["DRAM_PERF_PIC23"]);

/// The DRAM registers in [`DramReg::ALL`] order (a `const` array: a `Register` owns a
/// `Cow`, so a reference to one is only promoted in a constant's initializer).
const DRAM_REGISTERS: [&Register; 3] = [&DRAM_PERF_CTL, &DRAM_PERF_COUNT01, &DRAM_PERF_COUNT23];

/// Select field, counter field, sticky bit and holding register of each DRAM counter.
pub const DRAM_COUNTERS: [(&Field, &Field, &Field, DramReg); 4] = [
    (&t4::SEL0, &t4::COUNTER0, &t4::STICKY0, DramReg::Pic01),
    (&t4::SEL1, &t4::COUNTER1, &t4::STICKY1, DramReg::Pic01),
    (&t4::SEL2, &t4::COUNTER2, &t4::STICKY2, DramReg::Pic23),
    (&t4::SEL3, &t4::COUNTER3, &t4::STICKY3, DramReg::Pic23),
];

/// The family of the KT strand counters (the CLC events of §3.0).
pub const FAMILY: &str = "sparc-kt";
/// The model name KT PMUs share, here and in the DRAM family.
pub const MODEL: &str = "sparc-kt";

/// perf's privilege modifiers on the PCR's trace bits; without any, user and privileged
/// modes are counted.
const PRIVILEGE: &[ModifierDef] = &[
    ModifierDef { name: "u", kind: ModifierKind::Flag, description: "count in user mode (PCR.ut)" },
    ModifierDef { name: "k", kind: ModifierKind::Flag, description: "count in privileged mode (PCR.st)" },
    ModifierDef { name: "h", kind: ModifierKind::Flag, description: "count in hyperprivileged mode (PCR.ht; the guest may be denied it)" },
];

const STRAND_COUNTERS: &[CounterDesc] =
    &[CounterDesc { name: "PIC0", width: 32, description: "SPARC_PIC.pic0 of every strand: the CLC events PERF_CONFIG selects" }];

/// §3.0: the strand counters count L2 misses of the one kind the machine-wide
/// PERF_CONFIG selects, so two kinds can only be counted in turns.
pub static SPARC_KT: PmuDesc = PmuDesc {
    name: "sparc-kt",
    family: FAMILY,
    model: MODEL,
    description: "SPARC KT (T3) strands: SPARC_PIC counts the L2 misses PERF_CONFIG selects (all, local, remote, \
                  cache-to-cache), programmed through kt_set_perfreg (KT §3.0)",
    counters: STRAND_COUNTERS,
    general_counters: &["PIC0"],
    modifiers: PRIVILEGE,
    event_modifiers: &[],
    max_code: 3,
    max_umask: 0,
    raw_umask_bits: 0,
    raw_outside_table: None,
    shared_counters: false,
    generic: GenericMap {
        events: &[],
        source: "sparc-kt is the chip's L2 and memory performance registers reached through hypercalls (kt_get_perfreg); Linux's perf driver maps no generic name onto them",
    },
    linux_pmu: None,
};

const DRAM_COUNTER_DESCS: &[CounterDesc] = &[
    CounterDesc { name: "DRAM0", width: 31, description: "counter 0 (cou0 port0), DRAM_PERF_COUNT01 (PerfReg# 3 + 6i / 6 + 6i)" },
    CounterDesc { name: "DRAM1", width: 31, description: "counter 1 (cou0 port1), DRAM_PERF_COUNT01 (PerfReg# 3 + 6i / 6 + 6i)" },
    CounterDesc { name: "DRAM2", width: 31, description: "counter 2 (cou1 port0), DRAM_PERF_COUNT23 (PerfReg# 4 + 6i / 7 + 6i)" },
    CounterDesc { name: "DRAM3", width: 31, description: "counter 3 (cou1 port1), DRAM_PERF_COUNT23 (PerfReg# 4 + 6i / 7 + 6i)" },
];

/// §2.2: "Each memory controller has four performance counters"; the guest reaches all
/// four through the calls (TK4), with T4's TABLE 10-7 select codes (TK11).
pub static SPARC_KT_DRAM: PmuDesc = PmuDesc {
    name: "sparc-kt-dram",
    family: t4::DRAM_FAMILY,
    model: MODEL,
    description: "SPARC KT memory controllers: four DRAM counters per MCU, two MCUs per node, \
                  programmed and read through kt_set_perfreg / kt_get_perfreg (KT §2.2, §3.1)",
    counters: DRAM_COUNTER_DESCS,
    general_counters: &["DRAM0", "DRAM1", "DRAM2", "DRAM3"],
    modifiers: &[],
    event_modifiers: &[],
    max_code: 0xF,
    max_umask: 0,
    raw_umask_bits: 0,
    raw_outside_table: Some("TABLE 10-7: select codes 1101 and 111x are reserved"),
    shared_counters: false,
    generic: GenericMap { events: &[], source: super::t4::DRAM_GENERIC },
    linux_pmu: None,
};

/// The strand registers and the virtualized L2 control register.
pub fn registers(_pmu: &Pmu) -> Vec<Register> {
    vec![SPARC_PCR, SPARC_PIC, L2_CONTROL_VIRTUAL]
}

/// Every CLC event counts on the strands' pic0.
pub fn allowed(pmu: &Pmu, _sel: &EventSel) -> u64 {
    (1 << pmu.desc.counters.len()) - 1
}

/// The PCR's trace bits (`:u`, `:k`, `:h`; user and privileged by default) and the
/// event's PERF_CONFIG value (its code) in the virtualized L2 control register.
pub fn placement(_pmu: &Pmu, sel: &EventSel, _counter: usize) -> Result<RegisterValues, RegisterError> {
    let (ut, st, ht) = t4::privilege_bits(sel);
    let pcr = SPARC_PCR.encode(&[(UT.name, ut), (ST.name, st), (HT.name, ht)])?;
    let l2 = L2_CONTROL_VIRTUAL.encode(&[(PERF_CONFIG.name, sel.code)])?;
    Ok(vec![(SPARC_PCR.name, pcr), (L2_CONTROL_VIRTUAL.name, l2)])
}

pub fn start(placed: &RegisterValues, _counters: &[usize]) -> RegisterValues {
    placed.clone()
}

/// Every KT field names its own values (PERF_CONFIG's are the four kinds of miss).
pub fn explain(_pmu: &Pmu, _field: &Field, _register: u64) -> Option<String> {
    None
}
