//! The Montecito performance-monitor registers of chapter 3 ("Dual-Core Update to the
//! Intel Itanium 2 Processor Reference Manual", cited as §n): the generic PMC/PMD pairs
//! 4-15 (Tables 3-5 to 3-7), the overflow status registers PMC0-3 (Table 3-8), the
//! populated registers (Table 3-4), the PSR fields of Figure 3-10, the PMV (cr73, §3.3.11)
//! and the reset values of §3.3.12. One `const Field` per field: the only place a bit
//! position is written.

use pmukit_core::register::{Access, Field, NamedValue, Register, Values};

use super::qualification::{PMC32_34_RESET, PMC33_35_RESET, PMC34_RESET, PMC36_RESET, PMC38_RESET, PMC41_RESET};

const IGNORED: Access = Access::Reserved { unpredictable_read: false };

// Table 3-6 (with Table 3-5 for plm, pm, ism): PMC4-15.
/// Bits 3:0: one bit per privilege level, bit n enabling the monitor at CPL n.
pub const PLM: Field = Field::new("plm", 3, 0, "Privilege Level Mask: bit n enables the monitor at privilege level n (Table 3-5)");
/// Bit 4: external notification on overflow, whatever oi says.
pub const EV: Field =
    Field::new("ev", 4, 4, "External visibility: external notification when the counter overflows").with_values(Values::Named(OFF_ON));
/// Bit 5: raise the performance monitor interrupt and set PMC0.fr on overflow.
pub const OI: Field =
    Field::new("oi", 5, 5, "Overflow interrupt: on overflow raise the PMI and set PMC0.fr").with_values(Values::Named(OFF_ON));
/// Bit 6: privileged monitor (enabled by PSR.pp, PMD readable by privileged software only).
pub const PM: Field =
    Field::new("pm", 6, 6, "Privileged monitor: 0 user monitor (PSR.up), 1 privileged monitor (PSR.pp)").with_values(Values::Named(&[
        NamedValue { value: 0, name: "0", meaning: "user monitor, enabled by PSR.up" },
        NamedValue { value: 1, name: "1", meaning: "privileged monitor, enabled by PSR.pp; unprivileged PMD reads return 0" },
    ]));
pub const IG7: Field = Field::new("ig", 7, 7, "Read zero; writes ignored").with_access(IGNORED);
/// Bits 15:8: event select (chapter 4).
pub const ES: Field = Field::new("es", 15, 8, "Event select (chapter 4)").with_values(Values::Event);
/// Bits 19:16: event-specific unit mask.
pub const UMASK: Field = Field::new("umask", 19, 16, "Unit mask: event-specific (chapter 4)").with_values(Values::Umask);
/// Bits 22:20: count cycles in which the event's value exceeds the threshold (0: sum).
pub const THRESHOLD: Field =
    Field::new("threshold", 22, 20, "Threshold: 0 sums the event's values; n counts cycles in which the value exceeds n");
pub const IG23: Field = Field::new("ig", 23, 23, "Read zero; writes ignored").with_access(IGNORED);
/// Bits 25:24: instruction set mask, "should be set to '10 for proper operation" (§3.3.1).
pub const ISM: Field = Field::new("ism", 25, 24, "Instruction Set Mask: must be 10 (Table 3-5)")
    .with_values(Values::Named(&[
        NamedValue { value: 0b10, name: "10", meaning: "proper operation (§3.3.1)" },
        NamedValue { value: 0b00, name: "00", meaning: "undefined behaviour" },
        NamedValue { value: 0b01, name: "01", meaning: "undefined behaviour" },
        NamedValue { value: 0b11, name: "11", meaning: "undefined behaviour" },
    ]))
    .with_proper(ISM_PROPER);
/// The only ism value the monitor-enable equation accepts (§3.3.1).
pub const ISM_PROPER: u64 = 0b10;
/// Bit 26: count both threads (duplicated counters PMC4-9 only).
pub const ALL: Field =
    Field::new("all", 26, 26, "All threads: 1 counts both threads (duplicated counters PMC4-9 only)").with_values(Values::Named(&[
        NamedValue { value: 0, name: "0", meaning: "this thread only" },
        NamedValue { value: 1, name: "1", meaning: "both threads" },
    ]));
/// Bit 26 of a banked counter's PMC (PMC10-15): Table 3-6 says `all` "is applicable
/// only for Duplicated counters (PMC4-9)"; a banked counter counts its own thread.
pub const ALL_BANKED: Field = Field::new("all", 26, 26, "All threads: applies to the duplicated counters PMC4-9 only (Table 3-6)")
    .with_values(Values::Named(&[
        NamedValue { value: 0, name: "0", meaning: "this thread (a banked counter counts no other)" },
        NamedValue { value: 1, name: "1", meaning: "not applicable to a banked counter: it counts this thread only" },
    ]))
    .with_proper(0);
/// Bits 30:27: MESI filter, bit 27 I, 28 S, 29 E, 30 M; b1111 counts every state.
pub const MESI: Field = Field::new("MESI", 30, 27, "MESI filter for capable events: [27] I, [28] S, [29] E, [30] M; 1111 counts all");
pub const IG_HIGH: Field = Field::new("ig", 63, 31, "Read zero; writes ignored").with_access(IGNORED);

/// Table 3-6: PMC4-15, one layout for all twelve (the model stores every bit alike).
pub const PMC_GENERIC: Register = Register::new(
    "PMC",
    64,
    0,
    "Generic performance counter configuration register PMC4-15 (Table 3-6); reset: oi and ev 0, the rest undefined (§3.3.12)",
    &[IG_HIGH, MESI, ALL, ISM, IG23, THRESHOLD, UMASK, ES, IG7, PM, OI, EV, PLM],
);
/// PMC10-15 as `pmu decode` explains them: Table 3-6's layout, with `all` (which
/// applies to PMC4-9 only) explained for a banked counter.
pub const PMC_BANKED: Register = Register::new(
    "PMC",
    64,
    0,
    "Banked performance counter configuration register PMC10-15 (Table 3-6; `all` applies to PMC4-9 only); reset: oi and ev 0, the rest undefined (§3.3.12)",
    &[IG_HIGH, MESI, ALL_BANKED, ISM, IG23, THRESHOLD, UMASK, ES, IG7, PM, OI, EV, PLM],
);

// Table 3-7: PMD4-15.
/// Bits 63:48: reads return bit 46, writes are ignored.
pub const SXT47: Field =
    Field::new("sxt47", 63, 48, "Writes are ignored; reads return bit 46, so counts appear sign extended").with_access(Access::ReadOnly);
/// Bit 47: carry out of bit 46; write 0; reads return bit 46 (use PMC0 to detect overflow).
pub const OV: Field = Field::new("ov", 47, 47, "Overflow bit: always write 0; reads return bit 46 (use PMC0 for overflow)");
/// Bits 46:0: the count; it overflows when it wraps (carry out of bit 46).
pub const COUNT: Field = Field::new("count", 46, 0, "Event count: overflows when it wraps (carry out of bit 46)");

/// Table 3-7: PMD4-15.
pub const PMD_GENERIC: Register =
    Register::new("PMD", 64, 0, "Generic performance counter data register PMD4-15 (Table 3-7)", &[SXT47, OV, COUNT]);

// Table 3-8: PMC0-3.
/// PMC0 bit 0: freeze; set by hardware on an overflow with PMC.oi = 1, cleared by software.
pub const FR: Field = Field::new("fr", 0, 0, "Freeze: 1 disables event monitoring; set on an overflow of a counter with oi = 1")
    .with_values(Values::Named(&[
        NamedValue { value: 0, name: "0", meaning: "monitoring enabled" },
        NamedValue { value: 1, name: "1", meaning: "monitoring frozen" },
    ]));
pub const PMC0_IG_LOW: Field = Field::new("ig", 3, 1, "Read zero; writes ignored").with_access(IGNORED);
/// PMC0 bits 15:4: bit n set when PMDn overflowed; sticky; software may also set them.
pub const OVERFLOW: Field = Field::new("overflow", 15, 4, "Bit n: PMDn overflowed (set regardless of oi; software may set or clear)");
pub const PMC0_IG_HIGH: Field = Field::new("ig", 63, 16, "Read zero; writes ignored").with_access(IGNORED);
pub const PMC123_IG: Field = Field::new("ig", 63, 0, "Read zero; writes ignored").with_access(IGNORED);

/// Table 3-8: PMC0, overflow status and freeze; reset 0.
pub const PMC0: Register = Register::new(
    "PMC0",
    64,
    0,
    "Performance monitor overflow status: freeze bit and the overflow bit of each PMD4-15 (Table 3-8)",
    &[PMC0_IG_HIGH, OVERFLOW, PMC0_IG_LOW, FR],
);
/// Table 3-8: PMC1-3 are not populated on Montecito.
pub const PMC1: Register = Register::new("PMC1", 64, 0, "Overflow status register: not populated (Table 3-8)", &[PMC123_IG]);
pub const PMC2: Register = Register::new("PMC2", 64, 0, "Overflow status register: not populated (Table 3-8)", &[PMC123_IG]);
pub const PMC3: Register = Register::new("PMC3", 64, 0, "Overflow status register: not populated (Table 3-8)", &[PMC123_IG]);

const OFF_ON: &[NamedValue] =
    &[NamedValue { value: 0, name: "0", meaning: "disabled" }, NamedValue { value: 1, name: "1", meaning: "enabled" }];

// §3.3.2: which generic pairs are duplicated and which are banked.
/// PMC/PMD4-9: duplicated counters, which count their thread's events even while it is
/// in the background, and may count both threads (`all`).
pub const DUPLICATED: core::ops::RangeInclusive<usize> = 4..=9;
/// PMC/PMD10-15: banked counters, which count only while their thread is in the
/// foreground; `all` does not apply to them (Table 3-6).
pub const BANKED: core::ops::RangeInclusive<usize> = 10..=15;
/// PMC/PMD4-15: the twelve generic pairs of each thread (§3.3.2).
pub const GENERIC: core::ops::RangeInclusive<usize> = 4..=15;

// Table 3-4: the populated registers, as inclusive index ranges.
/// PMC0-3 (overflow status), PMC4-15 (counters), PMC32-36 (opcode match), PMC37 (I-EAR),
/// PMC38 (instruction address range), PMC39 (ETB), PMC40 (D-EAR), PMC41 (data address
/// range), PMC42 (IP-EAR).
pub const PMC_POPULATED: &[(usize, usize)] = &[(0, 15), (32, 42)];
/// PMD4-15 (counters), PMD32-39 (EARs and ETB support), PMD48-63 (ETB / IP-EAR).
pub const PMD_POPULATED: &[(usize, usize)] = &[(4, 15), (32, 39), (48, 63)];

/// Is PMC`index` populated on Montecito (Table 3-4)?
pub fn pmc_populated(index: usize) -> bool {
    PMC_POPULATED.iter().any(|&(lo, hi)| (lo..=hi).contains(&index))
}

/// Is PMD`index` populated on Montecito (Table 3-4)?
pub fn pmd_populated(index: usize) -> bool {
    PMD_POPULATED.iter().any(|&(lo, hi)| (lo..=hi).contains(&index))
}

/// §3.3.12 reset value of a model-specific PMC32-42: what PAL initialises, the opcode
/// matchers, PMC36, PMC38 and PMC41, from the field tables where §3.3.12 disagrees
/// with them (ERRATA MA9, MA10); the others are undefined and `None`.
pub const fn pmc_reset(index: usize) -> Option<u64> {
    match index {
        32 => Some(PMC32_34_RESET),
        34 => Some(PMC34_RESET),
        33 | 35 => Some(PMC33_35_RESET),
        36 => Some(PMC36_RESET),
        38 => Some(PMC38_RESET),
        41 => Some(PMC41_RESET),
        _ => None,
    }
}

// Figure 3-10: the PSR fields that affect performance monitoring, at their Itanium
// architecture positions.
/// PSR bit 2: user performance monitor enable (`sum`/`rum`); enables monitors with pm = 0.
pub const PSR_UP: Field =
    Field::new("up", 2, 2, "User performance monitor enable: enables monitors with PMC.pm = 0").with_values(Values::Named(OFF_ON));
/// PSR bit 20: secure performance monitors; PMD reads at CPL != 0 return 0 when set.
pub const PSR_SP: Field =
    Field::new("sp", 20, 20, "Secure performance monitors: 1 makes PMD reads at CPL 1-3 return 0").with_values(Values::Named(OFF_ON));
/// PSR bit 21: privileged performance monitor enable; enables monitors with pm = 1.
pub const PSR_PP: Field =
    Field::new("pp", 21, 21, "Privileged performance monitor enable: enables monitors with PMC.pm = 1").with_values(Values::Named(OFF_ON));
/// PSR bits 33:32: current privilege level, 0 most privileged; indexes PMC.plm.
pub const PSR_CPL: Field = Field::new("cpl", 33, 32, "Current privilege level (0 most privileged); selects the PMC.plm bit");
/// PSR bit 34: instruction set, 0 Itanium, 1 IA-32 (PMC.ism).
pub const PSR_IS: Field = Field::new("is", 34, 34, "Instruction set: 0 Itanium, 1 IA-32").with_values(Values::Named(&[
    NamedValue { value: 0, name: "0", meaning: "Itanium instruction set" },
    NamedValue { value: 1, name: "1", meaning: "IA-32 instruction set" },
]));
const PSR_RESERVED: Access = Access::Reserved { unpredictable_read: false };
const PSR_OTHER: &str = "Other PSR fields, not performance-monitoring related";

/// Figure 3-10: the Processor Status Register as the PMU sees it. "other" fields are the
/// rest of the architected PSR; "reserved" bits must be written 0.
pub const PSR: Register = Register::new(
    "PSR",
    64,
    0,
    "Processor Status Register fields for performance monitoring (Figure 3-10); not a PMU register",
    &[
        Field::new("reserved", 63, 46, "Reserved").with_access(PSR_RESERVED),
        Field::new("other", 45, 35, PSR_OTHER),
        PSR_IS,
        PSR_CPL,
        Field::new("reserved", 31, 28, "Reserved").with_access(PSR_RESERVED),
        Field::new("other", 27, 22, PSR_OTHER),
        PSR_PP,
        PSR_SP,
        Field::new("other", 19, 17, PSR_OTHER),
        Field::new("reserved", 16, 16, "Reserved").with_access(PSR_RESERVED),
        Field::new("other", 15, 3, PSR_OTHER),
        PSR_UP,
        Field::new("other", 1, 1, PSR_OTHER),
        Field::new("reserved", 0, 0, "Reserved").with_access(PSR_RESERVED),
    ],
);

// §3.3.11, §3.3.12: the Performance Monitor Vector register (cr73), Itanium layout.
/// PMV bits 7:0: the external interrupt vector of the performance monitor interrupt.
pub const PMV_VECTOR: Field = Field::new("vector", 7, 0, "External interrupt vector of the performance monitor interrupt");
/// PMV bit 16: mask; 1 keeps performance monitor interrupts from being pended. 1 at reset.
pub const PMV_M: Field = Field::new("m", 16, 16, "Mask: 1 keeps performance monitor interrupts from being pended (1 at reset, §3.3.12)")
    .with_values(Values::Named(&[
        NamedValue { value: 0, name: "0", meaning: "interrupts pended" },
        NamedValue { value: 1, name: "1", meaning: "interrupts masked" },
    ]));
/// §3.3.12: PMV.m is one after reset; the vector is undefined (0 here).
pub const PMV_RESET: u64 = 1 << 16;

/// cr73, the Performance Monitor Vector register (§3.3.11, written with `mov cr73=r`).
pub const PMV: Register = Register::new(
    "PMV",
    64,
    PMV_RESET,
    "Performance Monitor Vector register cr73: interrupt vector and mask (§3.3.11; m = 1 at reset, §3.3.12)",
    &[
        Field::new("ig", 63, 17, "Read zero; writes ignored").with_access(IGNORED),
        PMV_M,
        Field::new("ig", 15, 8, "Read zero; writes ignored").with_access(IGNORED),
        PMV_VECTOR,
    ],
)
.with_aliases(&["cr73"]);
