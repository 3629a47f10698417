//! The front end's events: FE_BUBBLE, FE_LOST_BW, IDEAL_BE_LOST_BW_DUE_TO_FE and
//! BE_LOST_BW_DUE_TO_FE, each cycle counted under its one stall cause (§4.6, §4.15;
//! MD39), and the branch events of the predictions the front end never made (§4.7:
//! BR_MISPRED_DETAIL2, BR_PATH_PRED2; MD40).
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic))]

use super::cycle::{taken_indirect, taken_returns, Cause, Cycle};
use crate::stream::{Signal, IBUF_BRQ_FULL, IBUF_FULL};

/// Why the front end delivers nothing (or less than two bundles) in a cycle, in the
/// priority order of §4.15's FE_LOST_BW note: "FEFLUSH, TLBMISS, IMISS, PLP, BR_ILOCK,
/// BRQ, BI, FILL_RECIRC, BUBBLE, IBFULL, UNREACHED".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Fe {
    /// The pipeline refills: a thread switch (and the data it returns), a mispredicted
    /// branch, a trap.
    Flush,
    TlbMiss,
    IMiss,
    /// A counted loop's first branch waits for the loop count (PLP, MMC43).
    Plp,
    /// A return waits for its link register (BR_ILOCK, MMC45).
    BrIlock,
    /// Behind a stalled back end, the next bundle's branch finds the branch
    /// retirement queue full (BRQ, MMC78).
    Brq,
    /// A counted loop's entry writes its back edge into the zero-bubble predictor
    /// (BI, MMC65).
    Bi,
    FillRecirc,
    /// A taken branch's resteer.
    Bubble,
    /// The instruction buffer is full behind a stalled back end.
    IbFull,
    /// A taken branch leaves bundles of its fetched pair unreached.
    Unreached,
}

impl Fe {
    /// The causes in §4.15's order, the one the masks' ALL selections list too;
    /// FE_BUBBLE's stalls are all but UNREACHED, the last.
    pub(super) const ORDER: [Fe; 11] =
        [Fe::Flush, Fe::TlbMiss, Fe::IMiss, Fe::Plp, Fe::BrIlock, Fe::Brq, Fe::Bi, Fe::FillRecirc, Fe::Bubble, Fe::IbFull, Fe::Unreached];

    /// Whether the cause stalls the front end only behind a stalled back end, with
    /// bundles in the buffer: a full buffer, a full branch retirement queue.
    fn behind_back_end(self) -> bool {
        matches!(self, Fe::IbFull | Fe::Brq)
    }

    /// The one cause a cycle is counted under, if any: the first of [`Fe::ORDER`] that
    /// holds.
    fn of(c: &Cycle) -> Option<Fe> {
        Fe::ORDER.into_iter().find(|fe| fe.holds(c))
    }

    /// Whether this cause holds in `c`: a taken branch's unreached bundles in a cycle
    /// that issues, a stall's cause in one that does not.
    fn holds(self, c: &Cycle) -> bool {
        use Signal::*;
        if c.get(Instructions) > 0 {
            return self == Fe::Unreached && c.get(UnreachedBundles) > 0;
        }
        let signal = match self {
            Fe::Flush => return c.get(BackgroundMemoryReads) > 0 || matches!(Cause::of(c), Some(Cause::Xpn | Cause::Bru)),
            Fe::TlbMiss => ITlbStallCycles,
            Fe::IMiss => ICacheStallCycles,
            Fe::Plp => LoopCountStallCycles,
            Fe::BrIlock => BranchInterlockCycles,
            Fe::Bi => BranchInitCycles,
            Fe::FillRecirc => ICacheFillRecircCycles,
            Fe::Bubble => ResteerBubbleCycles,
            Fe::Brq => return c.get(IBufFullCycles) & u64::from(IBUF_BRQ_FULL) != 0,
            Fe::IbFull => return c.get(IBufFullCycles) & u64::from(IBUF_FULL) != 0,
            Fe::Unreached => return false,
        };
        c.get(signal) > 0
    }
}

/// Where the front end's loss is counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Stage {
    /// FE_BUBBLE: stalled cycles.
    Bubbles,
    /// FE_LOST_BW: bundles not entering the instruction buffer, two a stalled cycle.
    Entrance,
    /// IDEAL_BE_LOST_BW_DUE_TO_FE: bundles not leaving it. The buffer is empty
    /// whenever the front end stalls, except behind a stalled back end, full (MMC18)
    /// or holding the bundles fetched before the branch retirement queue filled
    /// (MMC78): then it loses nothing at its exit.
    Exit,
    /// BE_LOST_BW_DUE_TO_FE: the same, in cycles the back end is not stalled for a
    /// reason of its own (BACK_END_BUBBLE.FE's cycles, and issue cycles).
    BackEnd,
}

/// Branch kinds of the unknown-prediction events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Return,
    Indirect,
    IpRelative,
}

/// What the front-end atoms count in a cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Front {
    Lost(Stage, Fe),
    /// Taken branches forced to "predicted not taken" (`UnknownPredTaken`), by kind: a
    /// forced taken branch ends its issue group, so a cycle's return or indirect
    /// branch is the forced one when there is one.
    UnknownTaken(Kind),
}

impl Front {
    pub(super) fn value(self, c: &Cycle) -> u64 {
        match self {
            Front::Lost(stage, fe) => {
                if Fe::of(c) != Some(fe) {
                    return 0;
                }
                let bundles = if fe == Fe::Unreached { c.get(Signal::UnreachedBundles) } else { 2 };
                match stage {
                    Stage::Bubbles => 1,
                    Stage::Entrance => bundles,
                    Stage::Exit if !fe.behind_back_end() => bundles,
                    // The back end is not stalled for a reason of its own.
                    Stage::BackEnd
                        if !fe.behind_back_end() && (c.get(Signal::Instructions) > 0 || Cause::of(c) == Some(Cause::FrontEnd)) =>
                    {
                        bundles
                    }
                    _ => 0,
                }
            }
            Front::UnknownTaken(kind) => {
                let taken = c.get(Signal::UnknownPredTaken);
                let (returns, indirect) = (taken.min(taken_returns(c)), taken.min(taken_indirect(c)));
                match kind {
                    Kind::Return => returns,
                    Kind::Indirect => indirect,
                    Kind::IpRelative => taken.saturating_sub(returns + indirect),
                }
            }
        }
    }
}

/// Returns and other indirect branches forced to "predicted not taken" and taken:
/// their path was mispredicted (BR_PATH_PRED's MISPRED_TAKEN, BR_MISPRED_DETAIL's
/// WRONG_PATH).
pub(super) const FORCED_RETURNS: Front = Front::UnknownTaken(Kind::Return);
pub(super) const FORCED_INDIRECT: Front = Front::UnknownTaken(Kind::Indirect);
