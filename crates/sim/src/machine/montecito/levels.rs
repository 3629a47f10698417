//! Where a request was served: the TLBs an address goes through, the cache level
//! that held a line, the L3 signals of a lookup, and what served a translation.

use super::Signals;
use crate::stream::Signal;
use pmukit_arch::montecito::ear::Served;

/// Which TLBs an address goes through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Side {
    Instruction,
    Data,
}

/// Where a line came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Level {
    L2,
    L3,
    Memory,
}

/// The L3 hit and miss signals of a lookup from outer cache `which` (0 L2I, 1 L2D),
/// reading for ownership when `write` (L3_WRITES.DATA_WRITE, L3_READS' data reads
/// exclude them: Tables 4-105, 4-106).
pub(super) fn l3_signal(which: usize, write: bool) -> (Signal, Signal) {
    match (which, write) {
        (0, _) => (Signal::L3InstructionHits, Signal::L3InstructionMisses),
        (_, false) => (Signal::L3DataReadHits, Signal::L3DataReadMisses),
        (_, true) => (Signal::StoresHitL3, Signal::StoresLocalMemory),
    }
}

/// Where a translation that missed the first-level TLB came from, by the signals
/// `Montecito::translate` counted (a miss in both levels is walked; a walk that finds
/// the page not present is the caller's to tell: MMC55, MMC58).
pub(super) fn translated(s: &Signals) -> Served {
    if s.get(Signal::MainTlbMisses) > 0 {
        Served::Vhpt
    } else {
        Served::L2Tlb
    }
}
