//! The configuration registers of Montecito's capture hardware (§3.3.8-§3.3.10): the
//! instruction EAR PMC37 (Tables 3-15, 3-16, 3-18), the execution trace buffer PMC39
//! (Table 3-26), the data EAR PMC40 (Tables 3-20, 3-21, 3-23), the IP-EAR PMC42
//! (Table 3-30) and the trace buffer index PMD38 (Tables 3-28, 3-32, one layout in both
//! modes). PMC37's unit mask is eight bits wide in cache mode and three in TLB mode,
//! where bit 12 belongs to `ct`, so a PMC37 value is read in the layout its own `ct`
//! selects ([`pmc37_layout`]).

use pmukit_core::register::{Access, Field, NamedValue, Register, Values};

use super::registers::{ISM, PLM, PM};

const IGNORED: Access = Access::Reserved { unpredictable_read: false };

const PM_VALUES: &[NamedValue] = &[
    NamedValue { value: 0, name: "0", meaning: "user monitor, enabled by PSR.up" },
    NamedValue { value: 1, name: "1", meaning: "privileged monitor, enabled by PSR.pp" },
];

// Table 3-15: PMC37.
/// PMC37 bit 4: pm (Table 3-15 puts it at bit 4, not PMC4-15's bit 6).
pub const IEAR_PM: Field = Field::new("pm", 4, 4, "Privileged monitor (Table 3-5)").with_values(Values::Named(PM_VALUES));
/// PMC37 bits 12:5 in cache mode: the latency threshold of Table 3-16.
pub const IEAR_CACHE_UMASK: Field =
    Field::new("umask", 12, 5, "Latency threshold of the captured L1I misses (Table 3-16)").with_values(Values::Umask);
/// PMC37 bit 13 in cache mode: ct's high bit, 1.
pub const IEAR_CT_CACHE: Field = Field::new("ct", 13, 13, "cache_tlb's high bit: 1 monitors demand L1I misses (ct = 1x)");
/// PMC37 bits 7:5 in TLB mode: which L1 ITLB misses (Table 3-18).
pub const IEAR_TLB_UMASK: Field =
    Field::new("umask", 7, 5, "L1 ITLB misses captured: bit 5 hit the L2 TLB, 6 the VHPT, 7 faulted (Table 3-18)")
        .with_values(Values::Umask);
/// PMC37 bits 11:8 in TLB mode: Table 3-15's umask field, unused by Table 3-18.
pub const IEAR_TLB_UNUSED: Field = Field::new("umask_hi", 11, 8, "Unit mask bits Table 3-18 does not use in TLB mode").with_proper(0);
/// PMC37 bits 13:12 outside cache mode: 00 ITLB misses, 01 nothing monitored.
pub const IEAR_CT: Field = Field::new("ct", 13, 12, "cache_tlb: instruction EAR selector (Table 3-15)").with_values(Values::Named(&[
    NamedValue { value: 0b00, name: "00", meaning: "monitor L1 instruction TLB misses" },
    NamedValue { value: 0b01, name: "01", meaning: "nothing monitored" },
]));
const IEAR_RSV: Field = Field::new("rsv", 15, 14, "Reserved").with_proper(0);
const IG_16: Field = Field::new("ignored", 63, 16, "Reads are 0; writes are ignored").with_access(IGNORED);

/// Table 3-15 with Table 3-16: PMC37 in cache mode (ct = 1x).
pub const PMC37_CACHE: Register = Register::new(
    "PMC37",
    64,
    0,
    "Instruction EAR configuration in cache mode, ct = 1x: L1I misses above a latency threshold (Tables 3-15, 3-16, §3.3.8.1)",
    &[IG_16, IEAR_RSV, IEAR_CT_CACHE, IEAR_CACHE_UMASK, IEAR_PM, PLM],
);
/// Table 3-15 with Table 3-18: PMC37 in TLB mode (ct = 00) or off (ct = 01); reset 0.
pub const PMC37_TLB: Register = Register::new(
    "PMC37",
    64,
    0,
    "Instruction EAR configuration in TLB mode, ct = 00 (01: nothing monitored): which L1 ITLB misses (Tables 3-15, 3-18, §3.3.8.2); reset 0",
    &[IG_16, IEAR_RSV, IEAR_CT, IEAR_TLB_UNUSED, IEAR_TLB_UMASK, IEAR_PM, PLM],
);

/// §3.3.8: a PMC37 value monitors instruction cache misses (ct = 1x, its bit 13) rather
/// than ITLB misses.
pub fn iear_cache_mode(pmc37: u64) -> bool {
    IEAR_CT_CACHE.get(pmc37) == 1
}

/// The layout a PMC37 value is read in: its bit 13 (ct's high bit) chooses cache mode.
pub fn pmc37_layout(value: u64) -> Register {
    if iear_cache_mode(value) {
        PMC37_CACHE
    } else {
        PMC37_TLB
    }
}

/// What an I-EAR cache-mode unit mask captures (Table 3-16).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IearCapture {
    /// L1I misses whose latency is at least this many cycles (1: "> 0", every miss).
    Latency(u64),
    /// Every L1I miss that hit in the RAB.
    Rab,
    /// A unit mask Table 3-16 does not define.
    Undefined,
}

/// Table 3-16: what the I-EAR captures in cache mode with unit mask bits 12:5.
pub fn iear_capture(umask: u64) -> IearCapture {
    match umask {
        0x40..=0x7f => IearCapture::Latency(1),
        0xff => IearCapture::Latency(4),
        0xfe => IearCapture::Latency(8),
        0xfc => IearCapture::Latency(16),
        0xf8 => IearCapture::Latency(32),
        0xf0 => IearCapture::Latency(128),
        0xe0 => IearCapture::Latency(256),
        0xc0 => IearCapture::Latency(1024),
        0x80 => IearCapture::Latency(4096),
        0x00 => IearCapture::Rab,
        _ => IearCapture::Undefined,
    }
}

/// What a PMC37 value has the I-EAR capture, in words: Table 3-16's threshold in cache
/// mode, Table 3-18's kinds of ITLB miss in TLB mode.
pub fn iear_captures(pmc37: u64) -> String {
    if iear_cache_mode(pmc37) {
        format!("L1I misses, {}", iear_threshold(IEAR_CACHE_UMASK.get(pmc37)))
    } else {
        tlb_kinds(IEAR_TLB_UMASK.get(pmc37))
    }
}

/// Table 3-16: what an I-EAR cache-mode unit mask captures, in words.
pub fn iear_threshold(umask: u64) -> String {
    match iear_capture(umask) {
        IearCapture::Latency(1) => "latency > 0: every L1I miss".to_string(),
        IearCapture::Latency(n) => format!("latency >= {n} cycles"),
        IearCapture::Rab => "RAB hit: every L1I miss that hit in the RAB".to_string(),
        IearCapture::Undefined => "undefined (Table 3-16 lists no such threshold)".to_string(),
    }
}

/// Tables 3-18 and 3-23: the TLB-miss kinds a unit mask selects (bit 0 the L2 TLB,
/// 1 the VHPT, 2 a fault).
pub fn tlb_kinds(bits: u64) -> String {
    let kinds: Vec<&str> = [(1, "L2TLB: hit the L2 TLB"), (2, "VHPT: hit the VHPT"), (4, "FAULT: a TLB miss fault")]
        .iter()
        .filter(|(b, _)| bits & b != 0)
        .map(|(_, k)| *k)
        .collect();
    if kinds.is_empty() {
        "disabled: nothing captured".to_string()
    } else {
        kinds.join(", ")
    }
}

// Table 3-26: PMC39.
const TM: &[NamedValue] = &[
    NamedValue { value: 0b11, name: "11", meaning: "all Itanium branches" },
    NamedValue { value: 0b10, name: "10", meaning: "taken branches only" },
    NamedValue { value: 0b01, name: "01", meaning: "not-taken branches only" },
    NamedValue { value: 0b00, name: "00", meaning: "no branch is captured" },
];
const PTM: &[NamedValue] = &[
    NamedValue { value: 0b11, name: "11", meaning: "regardless of target prediction" },
    NamedValue { value: 0b10, name: "10", meaning: "target predicted correctly" },
    NamedValue { value: 0b01, name: "01", meaning: "target mispredicted" },
    NamedValue { value: 0b00, name: "00", meaning: "no branch is captured" },
];
const PPM: &[NamedValue] = &[
    NamedValue { value: 0b11, name: "11", meaning: "regardless of path prediction" },
    NamedValue { value: 0b10, name: "10", meaning: "path (taken/not taken) predicted correctly" },
    NamedValue { value: 0b01, name: "01", meaning: "path mispredicted" },
    NamedValue { value: 0b00, name: "00", meaning: "no branch is captured" },
];
const BRT: &[NamedValue] = &[
    NamedValue { value: 0b11, name: "11", meaning: "only non-return indirect branches" },
    NamedValue { value: 0b10, name: "10", meaning: "only return branches" },
    NamedValue { value: 0b01, name: "01", meaning: "only IP-relative branches" },
    NamedValue { value: 0b00, name: "00", meaning: "all branches" },
];
/// PMC39 bit 7: data selector; 1 is reserved (undefined data instead of the target).
pub const ETB_DS: Field =
    Field::new("ds", 7, 7, "Data selector: 0 captures branch targets; 1 reserved").with_proper(0).with_values(Values::Named(&[
        NamedValue { value: 0, name: "0", meaning: "capture branch targets" },
        NamedValue { value: 1, name: "1", meaning: "reserved: undefined data in lieu of targets" },
    ]));
/// PMC39 bits 9:8: taken mask.
pub const ETB_TM: Field = Field::new("tm", 9, 8, "Taken mask").with_values(Values::Named(TM));
/// PMC39 bits 11:10: predicted target address mask.
pub const ETB_PTM: Field = Field::new("ptm", 11, 10, "Predicted target address mask").with_values(Values::Named(PTM));
/// PMC39 bits 13:12: predicted predicate (path) mask.
pub const ETB_PPM: Field = Field::new("ppm", 13, 12, "Predicted predicate (path) mask").with_values(Values::Named(PPM));
/// PMC39 bits 15:14: branch type mask.
pub const ETB_BRT: Field = Field::new("brt", 15, 14, "Branch type mask").with_values(Values::Named(BRT));
/// Table 3-26: PMC39.
pub const PMC39: Register = Register::new(
    "PMC39",
    64,
    0,
    "Execution trace buffer configuration: which branches, rfi, exceptions and failed chk are captured (Table 3-26, §3.3.10.1.1)",
    &[
        Field::new("ig", 63, 16, "Reads zero; writes are ignored").with_access(IGNORED),
        ETB_BRT,
        ETB_PPM,
        ETB_PTM,
        ETB_TM,
        ETB_DS,
        PM,
        Field::new("ig", 5, 4, "Reads zero; writes ignored").with_access(IGNORED),
        PLM,
    ],
);

// Table 3-20: PMC40.
/// PMC40 bits 8:7: data EAR mode.
pub const DEAR_MODE: Field = Field::new("mode", 8, 7, "Data EAR mode selector").with_values(Values::Named(&[
    NamedValue { value: 0b00, name: "00", meaning: "L1 data cache load misses and FP loads" },
    NamedValue { value: 0b01, name: "01", meaning: "L1 data TLB misses" },
    NamedValue { value: 0b10, name: "10", meaning: "ALAT misses" },
    NamedValue { value: 0b11, name: "11", meaning: "ALAT misses" },
]));
/// PMC40 bits 19:16: the mode's unit mask (Table 3-21 thresholds, Table 3-23 kinds).
pub const DEAR_UMASK: Field =
    Field::new("umask", 19, 16, "Unit mask: load latency threshold (mode 00, Table 3-21) or DTLB miss kinds (mode 01, Table 3-23)")
        .with_values(Values::Umask);
/// Table 3-20: PMC40.
pub const PMC40: Register = Register::new(
    "PMC40",
    64,
    0,
    "Data EAR configuration: L1D load misses, L1 DTLB misses or ALAT misses (Table 3-20, §3.3.9)",
    &[
        Field::new("ig", 63, 26, "Reads 0; writes are ignored").with_access(IGNORED),
        ISM,
        Field::new("ig", 23, 20, "Reads 0; writes are ignored").with_access(IGNORED),
        DEAR_UMASK,
        Field::new("ig", 15, 9, "Reads 0; writes are ignored").with_access(IGNORED),
        DEAR_MODE,
        PM,
        Field::new("ig", 5, 4, "Reads 0; writes are ignored").with_access(IGNORED),
        PLM,
    ],
);

/// Table 3-21: the least latency a D-EAR cache-mode unit mask captures, in cycles;
/// `None` for 1011-1111, which capture nothing.
pub fn dear_threshold(umask: u64) -> Option<u64> {
    (umask <= 0b1010).then(|| 4 << umask)
}

/// What a PMC40 value's unit mask has the D-EAR capture, in words: Table 3-21's
/// threshold (mode 00), Table 3-23's kinds of DTLB miss (01), nothing in ALAT mode.
pub fn dear_umask_meaning(pmc40: u64) -> String {
    let umask = DEAR_UMASK.get(pmc40);
    match DEAR_MODE.get(pmc40) {
        0b00 => dear_threshold(umask)
            .map_or_else(|| "1011-1111: no events are captured (Table 3-21)".to_string(), |t| format!("latency >= {t} cycles")),
        // Table 3-23: bit 16 is not used; 17 L2 DTLB hits, 18 VHPT hits, 19 faults.
        0b01 => tlb_kinds(umask >> 1),
        _ => "not used in ALAT mode".to_string(),
    }
}

// Table 3-30: PMC42.
/// PMC42 bits 10:8: IP-EAR mode.
pub const IPEAR_MODE: Field = Field::new("mode", 10, 8, "IP EAR mode").with_values(Values::Named(&[
    NamedValue { value: 0b000, name: "000", meaning: "ETB mode: the trace buffer captures branches (PMC39)" },
    NamedValue { value: 0b001, name: "001", meaning: "not defined by Table 3-30; the trace buffer captures nothing: PMC39 is ignored in any mode but 000 (§3.3.10) and pmukit's model runs the IP-EAR only with bit 10 set" },
    NamedValue { value: 0b010, name: "010", meaning: "not defined by Table 3-30; the trace buffer captures nothing: PMC39 is ignored in any mode but 000 (§3.3.10) and pmukit's model runs the IP-EAR only with bit 10 set" },
    NamedValue { value: 0b011, name: "011", meaning: "not defined by Table 3-30; the trace buffer captures nothing: PMC39 is ignored in any mode but 000 (§3.3.10) and pmukit's model runs the IP-EAR only with bit 10 set" },
    NamedValue { value: 0b100, name: "100", meaning: "IP-EAR mode: the trace buffer captures retired IPs" },
    NamedValue { value: 0b101, name: "101", meaning: "not defined by Table 3-30; pmukit's model runs the IP-EAR, as bit 10 is set" },
    NamedValue { value: 0b110, name: "110", meaning: "not defined by Table 3-30; pmukit's model runs the IP-EAR, as bit 10 is set" },
    NamedValue { value: 0b111, name: "111", meaning: "not defined by Table 3-30; pmukit's model runs the IP-EAR, as bit 10 is set" },
]));
/// Table 3-30: a PMC42 value puts the trace buffer in IP-EAR mode (mode 1xx).
pub fn ip_ear_mode(pmc42: u64) -> bool {
    IPEAR_MODE.get(pmc42) >> 2 == 1
}

/// PMC42 bits 18:11: cycles the IP-EAR keeps capturing after the PMU freezes.
pub const IPEAR_DELAY: Field = Field::new("delay", 18, 11, "Cycles of capture after the PMU freezes, before the IP-EAR freezes");
/// Table 3-30: PMC42. Table 3-30 lists `delay` as 18:11 and `ig` as 63:20; bit 19 is
/// in neither (ERRATA MA12): it is taken as ignored.
pub const PMC42: Register = Register::new(
    "PMC42",
    64,
    0,
    "IP-EAR configuration: the trace buffer's mode, and the freeze delay (Table 3-30, §3.3.10.2)",
    &[
        Field::new("ig", 63, 19, "Reads zero; writes ignored (bit 19: see ERRATA MA12)").with_access(IGNORED),
        IPEAR_DELAY,
        IPEAR_MODE,
        Field::new("ig", 7, 7, "Reads zero; writes ignored").with_access(IGNORED),
        PM,
        Field::new("ig", 5, 4, "Reads zero; writes ignored").with_access(IGNORED),
        PLM,
    ],
);

// Tables 3-28 and 3-32: PMD38.
/// PMD38 bits 3:0: the next trace buffer entry to write (0 is PMD48); the oldest when full.
pub const EBI: Field = Field::new("ebi", 3, 0, "Next entry to be written (0: PMD48); with full = 1, the oldest entry");
/// PMD38 bit 5: the buffer has wrapped (sticky until software clears it).
pub const FULL: Field =
    Field::new("full", 5, 5, "Full (sticky): the buffer has wrapped from PMD63 to PMD48").with_values(Values::Named(&[
        NamedValue { value: 0, name: "0", meaning: "not wrapped: entries PMD48 up to ebi are valid" },
        NamedValue { value: 1, name: "1", meaning: "wrapped: all sixteen entries, the oldest at ebi" },
    ]));
/// Tables 3-28 and 3-32: PMD38, the trace buffer index, in ETB and IP-EAR mode alike.
pub const PMD38: Register = Register::new(
    "PMD38",
    64,
    0,
    "Execution trace buffer index: next entry and the full bit, for the ETB and the IP-EAR (Tables 3-28, 3-32)",
    &[
        Field::new("ig", 63, 6, "Reads zero; writes ignored").with_access(IGNORED),
        FULL,
        Field::new("ig", 4, 4, "Reads zero; writes ignored").with_access(IGNORED),
        EBI,
    ],
);

/// The PMD index of the most recently written trace buffer entry, or `None` when
/// nothing was captured (§3.3.10.1.2). The spec's formula, "48 + ([16 * PMD38.full] +
/// (PMC38.ebi - 1) % 16)", would give PMD64-79 when full; the entry before `ebi` is
/// meant (ERRATA MA13).
pub fn last_written(pmd38: u64) -> Option<usize> {
    let ebi = (pmd38 & 0xf) as usize;
    let full = pmd38 >> 5 & 1 == 1;
    (full || ebi != 0).then(|| 48 + (ebi + 15) % 16)
}
