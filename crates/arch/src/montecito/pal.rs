//! PAL_PERF_MON_INFO on Montecito: Table 3-34 as printed, and the values checked
//! against the rest of chapter 3 (docs/montecito-model.md, decisions MD20-MD24).
//!
//! Table 3-34 repeats values that do not agree with the chapter it closes: 4 generic
//! pairs where §3.3.2 has 12 per thread, a 48-bit width where Table 3-7 counts in 47 bits
//! (bit 47 is an overflow bit that reads as bit 46), register masks that leave out
//! PMC14-15, PMC32-42, PMD32-39 and PMD48-63 (Table 3-4) and include unpopulated PMD0-3
//! and PMD16-17, and cycle / retired masks limited to PMD4-7 when every generic counter
//! can count both events (§4.2.1). [`TABLE_3_34`] keeps the printed values;
//! [`PERF_MON_INFO`] is what the simulated firmware returns.

use super::registers::{PMC_POPULATED, PMD_POPULATED};

/// A 256-bit register mask, bit n (word n / 64, bit n % 64) for register n.
pub type Mask256 = [u64; 4];

/// IA64_INST_RETIRED (Table 4-42): untagged retired Itanium instructions.
pub const IA64_INST_RETIRED: u8 = 0x08;
/// CPU_OP_CYCLES (Table 4-42): running CPU cycles.
pub const CPU_OP_CYCLES: u8 = 0x12;

/// The values PAL_PERF_MON_INFO returns (Table 3-34).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PerfMonInfo {
    /// PAL_RETIRED: event type counting untagged retired Itanium instructions.
    pub retired: u8,
    /// PAL_CYCLES: event type counting running CPU cycles.
    pub cycles: u8,
    /// PAL_WIDTH: number of implemented counter bits.
    pub width: u8,
    /// PAL_GENERIC_PM_PAIRS: number of generic PMC/PMD pairs.
    pub generic_pm_pairs: u8,
    /// PAL_PMCmask: populated PMC registers.
    pub pmc_mask: Mask256,
    /// PAL_PMDmask: populated PMD registers.
    pub pmd_mask: Mask256,
    /// PAL_CYCLES_MASK: counters that can count PAL_CYCLES.
    pub cycles_mask: Mask256,
    /// PAL_RETIRED_MASK: counters that can count PAL_RETIRED.
    pub retired_mask: Mask256,
}

/// Table 3-34 exactly as printed.
pub const TABLE_3_34: PerfMonInfo = PerfMonInfo {
    retired: 0x08,
    cycles: 0x12,
    width: 48,
    generic_pm_pairs: 4,
    pmc_mask: [0x3FFF, 0, 0, 0],
    pmd_mask: [0x3FFFF, 0, 0, 0],
    cycles_mask: [0xF0, 0, 0, 0],
    retired_mask: [0xF0, 0, 0, 0],
};

/// The counters of §3.3.2: PMC/PMD4-15.
const GENERIC_COUNTERS: &[(usize, usize)] = &[(4, 15)];

/// What the model's PAL_PERF_MON_INFO returns: Table 3-34 with each value checked
/// against chapters 3 and 4.
pub const PERF_MON_INFO: PerfMonInfo = PerfMonInfo {
    // MD20: 0x08 and 0x12 are the codes of IA64_INST_RETIRED and CPU_OP_CYCLES (Table 4-42).
    retired: IA64_INST_RETIRED,
    cycles: CPU_OP_CYCLES,
    // MD21: the count field is bits 46:0 and overflows on the carry out of bit 46 (Table
    // 3-7); bit 47 only reads back bit 46. The architected width W is 47.
    width: 47,
    // MD22: "Each hardware thread has its own set of 12 generic performance counter
    // (PMC/PMD4-15) pairs" (§3.3.2).
    generic_pm_pairs: 12,
    // MD23: Table 3-4.
    pmc_mask: mask(PMC_POPULATED),
    pmd_mask: mask(PMD_POPULATED),
    // MD24: CPU_OP_CYCLES "can be measured in both types of counters" (§4.2.1), and
    // IA64_INST_RETIRED is an Active event, which "either type of monitor" can count.
    cycles_mask: mask(GENERIC_COUNTERS),
    retired_mask: mask(GENERIC_COUNTERS),
};

/// The 256-bit mask with the bits of each inclusive range set (indices above 255 are
/// dropped).
pub const fn mask(ranges: &[(usize, usize)]) -> Mask256 {
    let mut out = [0u64; 4];
    let mut r = 0;
    while r < ranges.len() {
        let (lo, hi) = ranges[r];
        let mut n = lo;
        while n <= hi && n < 256 {
            out[n / 64] |= 1 << (n % 64);
            n += 1;
        }
        r += 1;
    }
    out
}

/// Is bit `n` set in `mask`?
pub const fn mask_has(mask: &Mask256, n: usize) -> bool {
    n < 256 && mask[n / 64] & (1 << (n % 64)) != 0
}
