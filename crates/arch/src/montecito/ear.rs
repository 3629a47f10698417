//! The event address data registers of §3.3.8-§3.3.9, one layout per mode of the EAR
//! that fills them: the instruction EAR's PMD34-35 by PMC37.ct (Tables 3-17, 3-19), the
//! data EAR's PMD32, PMD33, PMD36 by PMC40.mode (Tables 3-22, 3-24, 3-25). They hold
//! valid data only while monitoring is frozen (PMC0.fr = 1, §3.3.8).

use pmukit_core::register::{Access, Field, NamedValue, Register, Values};

use super::capture::iear_cache_mode;

const IGNORED: Access = Access::Reserved { unpredictable_read: false };
const UNDEFINED: &str = "Undefined in this mode";

// Tables 3-17 and 3-19: PMD34 and PMD35.
/// PMD34 bits 63:5: the instruction cache line address.
pub const IEAR_ADDRESS: Field = Field::new("address", 63, 5, "Instruction cache line address (bits 63:5) of the miss");
/// PMD34 bits 1:0 in cache mode: x1 valid.
pub const IEAR_STAT_CACHE: Field =
    Field::new("stat", 1, 0, "Status: x0 nothing captured, x1 valid (Table 3-17)").with_values(Values::Named(&[
        NamedValue { value: 0b00, name: "00", meaning: "the EAR did not capture a qualified event" },
        NamedValue { value: 0b01, name: "01", meaning: "valid event data" },
        NamedValue { value: 0b10, name: "10", meaning: "the EAR did not capture a qualified event" },
        NamedValue { value: 0b11, name: "11", meaning: "valid event data" },
    ]));
/// PMD34 bits 1:0 in TLB mode: where the ITLB miss was served.
pub const IEAR_STAT_TLB: Field = Field::new("stat", 1, 0, "Status (Table 3-19)").with_values(Values::Named(&[
    NamedValue { value: 0b00, name: "00", meaning: "the EAR did not capture a qualified event" },
    NamedValue { value: 0b01, name: "01", meaning: "L1 ITLB miss hit in the L2 ITLB" },
    NamedValue { value: 0b10, name: "10", meaning: "L1 ITLB miss hit in the VHPT" },
    NamedValue { value: 0b11, name: "11", meaning: "L1 ITLB miss produced an ITLB Miss Fault" },
]));
const IEAR_GAP: Field = Field::new("ig", 4, 2, "Not listed in Tables 3-17 and 3-19").with_access(IGNORED);

/// Table 3-17: PMD34 in cache mode (PMC37.ct = 1x).
pub const PMD34_CACHE: Register = Register::new(
    "PMD34",
    64,
    0,
    "Instruction EAR address in cache mode, PMC37.ct = 1x (Table 3-17)",
    &[IEAR_ADDRESS, IEAR_GAP, IEAR_STAT_CACHE],
);
/// Table 3-19: PMD34 in TLB mode (PMC37.ct = 00).
pub const PMD34_TLB: Register = Register::new(
    "PMD34",
    64,
    0,
    "Instruction EAR address in TLB mode, PMC37.ct = 00 (Table 3-19)",
    &[IEAR_ADDRESS, IEAR_GAP, IEAR_STAT_TLB],
);
/// PMD35 bits 11:0 in cache mode: the miss's latency in CPU cycles.
pub const IEAR_LATENCY: Field = Field::new("latency", 11, 0, "Latency of the captured miss, CPU cycles");
/// PMD35 bit 12 in cache mode: the latency counter overflowed.
pub const IEAR_OVERFLOW: Field = Field::new("overflow", 12, 12, "The latency counter overflowed before the data returned");
/// Table 3-17: PMD35 in cache mode.
pub const PMD35_CACHE: Register = Register::new(
    "PMD35",
    64,
    0,
    "Instruction EAR latency in cache mode, PMC37.ct = 1x (Table 3-17)",
    &[Field::new("ig", 63, 13, "Not listed in Table 3-17").with_access(IGNORED), IEAR_OVERFLOW, IEAR_LATENCY],
);
/// Table 3-19: PMD35 in TLB mode: the latency field (11:2) is undefined.
pub const PMD35_TLB: Register = Register::new(
    "PMD35",
    64,
    0,
    "Instruction EAR latency in TLB mode, PMC37.ct = 00: undefined (Table 3-19)",
    &[
        Field::new("ig", 63, 12, "Not listed in Table 3-19").with_access(IGNORED),
        Field::new("latency", 11, 2, UNDEFINED),
        Field::new("ig", 1, 0, "Not listed in Table 3-19").with_access(IGNORED),
    ],
);

// Tables 3-22, 3-24, 3-25: PMD32, PMD33, PMD36.
/// PMD32 bits 63:0: the data address of the miss.
pub const DEAR_ADDRESS: Field = Field::new("address", 63, 0, "64-bit virtual address of the data item that missed");
/// Table 3-22 and 3-24: PMD32 in data cache and TLB modes.
pub const PMD32: Register = Register::new("PMD32", 64, 0, "Data EAR data address (Tables 3-22, 3-24)", &[DEAR_ADDRESS]);
/// Table 3-25: PMD32 in ALAT mode.
pub const PMD32_ALAT: Register =
    Register::new("PMD32", 64, 0, "Data EAR data address: undefined in ALAT mode (Table 3-25)", &[Field::new("address", 63, 0, UNDEFINED)]);

/// PMD33 bits 12:0 in data cache mode: latency in CPU cycles.
pub const DEAR_LATENCY: Field = Field::new("latency", 12, 0, "Load latency, CPU cycles");
/// PMD33 bit 13 in data cache mode: the latency counter overflowed.
pub const DEAR_OVERFLOW: Field = Field::new("overflow", 13, 13, "The latency counter overflowed before the data returned");
const VALID_STAT: &[NamedValue] = &[
    NamedValue { value: 0b00, name: "00", meaning: "no valid information in PMD32, PMD36 and the rest of PMD33" },
    NamedValue { value: 0b01, name: "01", meaning: "valid information in PMD32-33, and perhaps PMD36" },
];
/// PMD33 bits 15:14 in data cache and ALAT modes.
pub const DEAR_STAT: Field = Field::new("stat", 15, 14, "Status; clear it before the EAR is reused").with_values(Values::Named(VALID_STAT));
/// PMD33 bits 15:14 in TLB mode: where the DTLB miss was served.
pub const DEAR_STAT_TLB: Field =
    Field::new("stat", 15, 14, "Status; clear it before the EAR is reused (Table 3-24)").with_values(Values::Named(&[
        NamedValue { value: 0b00, name: "00", meaning: "invalid information in PMD32, PMD36 and the rest of PMD33" },
        NamedValue { value: 0b01, name: "01", meaning: "L2 data TLB hit" },
        NamedValue { value: 0b10, name: "10", meaning: "VHPT hit" },
        NamedValue { value: 0b11, name: "11", meaning: "the data TLB miss produced a fault" },
    ]));
/// Tables 3-22, 3-24, 3-25 list PMD33's ig as 63:26; bits 25:16 are in no row
/// (ERRATA MA15): ignored with them.
const DEAR_IG: Field = Field::new("ig", 63, 16, "Reads 0; writes are ignored (25:16 are in no row: ERRATA MA15)").with_access(IGNORED);
/// Table 3-22: PMD33 in data cache mode (PMC40.mode = 00).
pub const PMD33_CACHE: Register = Register::new(
    "PMD33",
    64,
    0,
    "Data EAR latency and status in data cache mode, PMC40.mode = 00 (Table 3-22)",
    &[DEAR_IG, DEAR_STAT, DEAR_OVERFLOW, DEAR_LATENCY],
);
/// Table 3-24: PMD33 in TLB mode (PMC40.mode = 01).
pub const PMD33_TLB: Register = Register::new(
    "PMD33",
    64,
    0,
    "Data EAR status in TLB mode, PMC40.mode = 01 (Table 3-24)",
    &[DEAR_IG, DEAR_STAT_TLB, Field::new("ov", 13, 13, UNDEFINED), Field::new("latency", 12, 0, UNDEFINED)],
);
/// Table 3-25: PMD33 in ALAT mode (PMC40.mode = 1x).
pub const PMD33_ALAT: Register = Register::new(
    "PMD33",
    64,
    0,
    "Data EAR status in ALAT mode, PMC40.mode = 1x (Table 3-25)",
    &[DEAR_IG, DEAR_STAT, Field::new("ov", 13, 13, UNDEFINED), Field::new("latency", 12, 0, UNDEFINED)],
);

/// PMD36 bits 63:4: the first bundle of the dispersal window of the miss.
pub const DEAR_IP: Field = Field::new("address", 63, 4, "First bundle (bits 63:4) of the 2-bundle dispersal window; +16 when bn = 1");
/// PMD36 bit 3: the instruction address is valid.
pub const DEAR_VL: Field = Field::new("vl", 3, 3, "Valid; clear it before the EAR is reused").with_values(Values::Named(&[
    NamedValue { value: 0, name: "0", meaning: "invalid address (no qualified event, or an RSE load in TLB mode)" },
    NamedValue { value: 1, name: "1", meaning: "valid instruction address" },
]));
/// PMD36 bit 2: which bundle of the window holds the memory instruction.
pub const DEAR_BN: Field = Field::new("bn", 2, 2, "Bundle: 1 means the second bundle (add 16 to the address)");
/// PMD36 bits 1:0: the slot of the memory instruction in its bundle.
pub const DEAR_SLOT: Field = Field::new("slot", 1, 0, "Slot of the memory instruction in its bundle");
/// Tables 3-22, 3-24, 3-25: PMD36, one layout in every mode.
pub const PMD36: Register = Register::new(
    "PMD36",
    64,
    0,
    "Data EAR instruction address: bundle, slot and validity (Tables 3-22, 3-24, 3-25)",
    &[DEAR_IP, DEAR_VL, DEAR_BN, DEAR_SLOT],
);

/// The I-EAR data registers PMD34-35 in the mode a PMC37 value selects.
pub fn iear_layout(register: &str, pmc37: u64) -> Option<Register> {
    let cache = iear_cache_mode(pmc37);
    Some(match (register, cache) {
        ("PMD34", true) => PMD34_CACHE,
        ("PMD34", false) => PMD34_TLB,
        ("PMD35", true) => PMD35_CACHE,
        ("PMD35", false) => PMD35_TLB,
        _ => return None,
    })
}

/// The D-EAR data registers PMD32, PMD33, PMD36 in the mode a PMC40 value selects.
pub fn dear_layout(register: &str, pmc40: u64) -> Option<Register> {
    let mode = pmc40 >> 7 & 0b11;
    Some(match (register, mode) {
        ("PMD32", 0b10 | 0b11) => PMD32_ALAT,
        ("PMD32", _) => PMD32,
        ("PMD33", 0b00) => PMD33_CACHE,
        ("PMD33", 0b01) => PMD33_TLB,
        ("PMD33", _) => PMD33_ALAT,
        ("PMD36", _) => PMD36,
        _ => return None,
    })
}

/// Where a captured TLB miss was served (Tables 3-19, 3-24).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Served {
    /// Hit the L2 TLB.
    L2Tlb,
    /// Hit the VHPT (the hardware page walker found it).
    Vhpt,
    /// Produced a TLB miss fault, served by software.
    Fault,
}

impl Served {
    /// The EAR status that says so: PMD34.stat (Table 3-19), PMD33.stat (Table 3-24).
    pub fn stat(self) -> u64 {
        match self {
            Served::L2Tlb => 0b01,
            Served::Vhpt => 0b10,
            Served::Fault => 0b11,
        }
    }
}

fn served(stat: u64) -> Option<Served> {
    match stat {
        0b01 => Some(Served::L2Tlb),
        0b10 => Some(Served::Vhpt),
        0b11 => Some(Served::Fault),
        _ => None,
    }
}

/// What an EAR captured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "mode", rename_all = "snake_case")]
pub enum Miss {
    /// A cache miss and its latency in CPU cycles; `overflow` when the latency counter
    /// wrapped before the data returned.
    Cache {
        latency: u64,
        overflow: bool,
    },
    Tlb {
        served: Served,
    },
    /// An ALAT miss (a failing `chk.a` or `ld.c`).
    Alat,
}

/// An instruction EAR capture (§3.3.8).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct IearSample {
    /// The instruction cache line (bits 63:5) that missed.
    pub line: u64,
    pub miss: Miss,
}

/// The instruction EAR's capture, read from PMD34-35 in the mode PMC37 selects;
/// `None` when it captured nothing (PMD34.stat, Tables 3-17, 3-19).
pub fn iear_sample(pmc37: u64, pmd34: u64, pmd35: u64) -> Option<IearSample> {
    let line = IEAR_ADDRESS.get(pmd34) << IEAR_ADDRESS.lsb;
    let stat = IEAR_STAT_CACHE.get(pmd34);
    let miss = if iear_cache_mode(pmc37) {
        (stat & 1 == 1).then_some(Miss::Cache { latency: IEAR_LATENCY.get(pmd35), overflow: IEAR_OVERFLOW.get(pmd35) == 1 })?
    } else {
        Miss::Tlb { served: served(stat)? }
    };
    Some(IearSample { line, miss })
}

/// A data EAR capture (§3.3.9).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct DearSample {
    /// The data address; none in ALAT mode, where PMD32 is undefined.
    pub data: Option<u64>,
    /// The memory instruction's bundle (PMD36, with bn's 16 added) and slot; none when
    /// PMD36.vl is 0 (an RSE load in TLB mode, say).
    pub instruction: Option<(u64, u8)>,
    pub miss: Miss,
}

/// The data EAR's capture, read from PMD32, PMD33 and PMD36 in the mode PMC40 selects;
/// `None` when PMD33.stat says nothing was captured (Tables 3-22, 3-24, 3-25).
pub fn dear_sample(pmc40: u64, pmd32: u64, pmd33: u64, pmd36: u64) -> Option<DearSample> {
    let stat = DEAR_STAT.get(pmd33);
    let mode = pmc40 >> 7 & 0b11;
    let miss = match mode {
        0b00 => (stat == 0b01).then_some(Miss::Cache { latency: DEAR_LATENCY.get(pmd33), overflow: DEAR_OVERFLOW.get(pmd33) == 1 })?,
        0b01 => Miss::Tlb { served: served(stat)? },
        _ => (stat == 0b01).then_some(Miss::Alat)?,
    };
    let bundle = (DEAR_IP.get(pmd36) << DEAR_IP.lsb).wrapping_add(16 * DEAR_BN.get(pmd36));
    Some(DearSample {
        data: (mode < 0b10).then_some(pmd32),
        instruction: (DEAR_VL.get(pmd36) == 1).then_some((bundle, DEAR_SLOT.get(pmd36) as u8)),
        miss,
    })
}
