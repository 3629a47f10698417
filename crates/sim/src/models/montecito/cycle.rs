//! One cycle as a counter sees it, and what the counters read of it that several
//! event families share: why the back end had a bubble, and the taken returns.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic))]

use crate::stream::{Signal, Signals, MONTECITO};

/// One cycle as a counter sees it: the signals, whether the data reference writes, and
/// the MESI state of the line the cycle's events concern (`None`: unknown).
pub(super) struct Cycle {
    /// In Montecito's words, whatever the span's family: a Montecito counts no other
    /// signal.
    pub(super) signals: Signals<MONTECITO>,
    pub(super) write: bool,
    pub(super) state: Option<u64>,
    /// The capture units the cycle gives an event to (`capture::DEAR`...).
    pub(super) captured: u8,
}

impl Cycle {
    pub(super) fn get(&self, s: Signal) -> u64 {
        self.signals.get(s)
    }
}

/// The cycle's returns that were taken: all but the predicated ones whose predicate
/// was false (MMC40).
pub(super) fn taken_returns(c: &Cycle) -> u64 {
    c.get(Signal::Returns).saturating_sub(c.get(Signal::ReturnsNotTaken))
}

/// The cycle's other indirect branches that were taken: all but the predicated ones
/// whose predicate was false (MMC41).
pub(super) fn taken_indirect(c: &Cycle) -> u64 {
    c.get(Signal::IndirectBranches).saturating_sub(c.get(Signal::IndirectNotTaken))
}

/// Why the back end had a bubble (§4.6): an exception or interruption flush (a trap,
/// a thread switch: Table 4-47 XPN), the L1D or FPU, an execution dependency, the RSE,
/// the front end; a bubble with no cause of its own is a branch mispredict's refill
/// (BRU).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Cause {
    Xpn,
    L1dFpu,
    Exe,
    Rse,
    FrontEnd,
    Bru,
}

impl Cause {
    /// The one cause a bubble cycle is counted under (§4.6: "only the most important
    /// cause, the one latest in the pipeline, is counted").
    pub(super) fn of(c: &Cycle) -> Option<Cause> {
        use Signal::*;
        if c.get(Instructions) > 0 {
            return None;
        }
        Some(if c.get(ExceptionFlushCycles) + c.get(ThreadSwitchCycles) > 0 {
            Cause::Xpn
        } else if c.get(LsuFullStallCycles) + c.get(FpuStallCycles) > 0 {
            Cause::L1dFpu
        } else if c.get(DataDepStallCycles)
            + c.get(GrGrStallCycles)
            + c.get(FrDepStallCycles)
            + c.get(PrDepStallCycles)
            + c.get(ArCrStallCycles)
            + c.get(BankSwitchStallCycles)
            > 0
        {
            Cause::Exe
        } else if c.get(RseSpillStallCycles)
            + c.get(RseFillStallCycles)
            + c.get(RseArDepStallCycles)
            + c.get(RseLoadrsStallCycles)
            + c.get(RseBankSwitchStallCycles)
            > 0
        {
            Cause::Rse
        } else if c.get(IBufStallCycles) > 0 {
            Cause::FrontEnd
        } else {
            Cause::Bru
        })
    }
}
