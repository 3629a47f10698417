//! The front end's events: FE_BUBBLE, FE_LOST_BW, IDEAL_BE_LOST_BW_DUE_TO_FE and
//! BE_LOST_BW_DUE_TO_FE, each cycle counted under its one stall cause (§4.6, §4.15;
//! MD39), and the branch events of the predictions the front end never made (§4.7:
//! BR_MISPRED_DETAIL2, BR_PATH_PRED2; MD40).
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic))]

use super::events::{Atom, Cause, Cycle};
use crate::stream::Signal;

/// Why the front end delivers nothing (or less than two bundles) in a cycle, in the
/// priority order of §4.15's FE_LOST_BW note: "FEFLUSH, TLBMISS, IMISS, PLP, BR_ILOCK,
/// BRQ, BI, FILL_RECIRC, BUBBLE, IBFULL, UNREACHED". The machine has no perfect-loop
/// predictor, branch interlocks, branch retirement queue or branch initialization:
/// those causes never hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Fe {
    /// The pipeline refills: a thread switch (and the data it returns), a mispredicted
    /// branch, a trap.
    Flush,
    TlbMiss,
    IMiss,
    FillRecirc,
    /// A taken branch's resteer.
    Bubble,
    /// The instruction buffer is full behind a stalled back end.
    IbFull,
    /// A taken branch leaves bundles of its fetched pair unreached.
    Unreached,
}

impl Fe {
    /// The one cause a cycle is counted under, if any.
    fn of(c: &Cycle) -> Option<Fe> {
        use Signal::*;
        if c.get(Instructions) > 0 {
            return (c.get(UnreachedBundles) > 0).then_some(Fe::Unreached);
        }
        let flush = c.get(BackgroundMemoryReads) > 0 || matches!(Cause::of(c), Some(Cause::Xpn | Cause::Bru));
        [
            (flush, Fe::Flush),
            (c.get(ITlbStallCycles) > 0, Fe::TlbMiss),
            (c.get(ICacheStallCycles) > 0, Fe::IMiss),
            (c.get(ICacheFillRecircCycles) > 0, Fe::FillRecirc),
            (c.get(ResteerBubbleCycles) > 0, Fe::Bubble),
            (c.get(IBufFullCycles) > 0, Fe::IbFull),
        ]
        .into_iter()
        .find_map(|(on, fe)| on.then_some(fe))
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
    /// whenever the front end stalls, except when it is full (MMC18): a full buffer
    /// loses nothing at its exit.
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
                    Stage::Exit if fe != Fe::IbFull => bundles,
                    // The back end is not stalled for a reason of its own.
                    Stage::BackEnd if fe != Fe::IbFull && (c.get(Signal::Instructions) > 0 || Cause::of(c) == Some(Cause::FrontEnd)) => {
                        bundles
                    }
                    _ => 0,
                }
            }
            Front::UnknownTaken(kind) => {
                let taken = c.get(Signal::UnknownPredTaken);
                let (returns, indirect) = (taken.min(super::events::taken_returns(c)), taken.min(c.get(Signal::IndirectBranches)));
                match kind {
                    Kind::Return => returns,
                    Kind::Indirect => indirect,
                    Kind::IpRelative => taken.saturating_sub(returns + indirect),
                }
            }
        }
    }
}

const fn at(stage: Stage, fe: Fe) -> Atom {
    Atom::Front(Front::Lost(stage, fe))
}

/// FE_BUBBLE's unit masks (Table 4-74). BRANCH ("any of 4 branch recirculates") has no
/// cause in the machine: it counts nothing, and the groups holding it count the rest.
pub(super) fn fe_bubble(u: u64) -> Option<&'static [Atom]> {
    use Fe::*;
    use Stage::Bubbles as S;
    const ALL: [Atom; 6] = [at(S, Flush), at(S, TlbMiss), at(S, IMiss), at(S, FillRecirc), at(S, Bubble), at(S, IbFull)];
    const FLUSH: [Atom; 1] = [at(S, Flush)];
    const BUBBLE: [Atom; 1] = [at(S, Bubble)];
    const GROUP2: [Atom; 2] = [at(S, IMiss), at(S, TlbMiss)];
    const IBFULL: [Atom; 1] = [at(S, IbFull)];
    const IMISS: [Atom; 1] = [at(S, IMiss)];
    const TLBMISS: [Atom; 1] = [at(S, TlbMiss)];
    const RECIRC: [Atom; 1] = [at(S, FillRecirc)];
    const ALLBUT_FEFLUSH_BUBBLE: [Atom; 4] = [at(S, TlbMiss), at(S, IMiss), at(S, FillRecirc), at(S, IbFull)];
    const ALLBUT_IBFULL: [Atom; 5] = [at(S, Flush), at(S, TlbMiss), at(S, IMiss), at(S, FillRecirc), at(S, Bubble)];
    match u {
        0x0 => Some(&ALL),
        0x1 => Some(&FLUSH),
        0x3 | 0xd => Some(&BUBBLE),
        0x4 => Some(&GROUP2),
        0x5 => Some(&IBFULL),
        0x6 => Some(&IMISS),
        0x7 => Some(&TLBMISS),
        0x8 | 0xa => Some(&RECIRC),
        0xb => Some(&ALLBUT_FEFLUSH_BUBBLE),
        0xc => Some(&ALLBUT_IBFULL),
        _ => None,
    }
}

/// The unit masks of FE_LOST_BW, IDEAL_BE_LOST_BW_DUE_TO_FE and BE_LOST_BW_DUE_TO_FE
/// (Tables 4-75, 4-79, 4-49), counted at `$stage`. BI, BRQ, PLP and BR_ILOCK have no
/// cause in the machine; IBFULL is "meaningless" at the buffer's exit.
macro_rules! lost_bandwidth {
    ($name:ident, $stage:expr, $ib_full:expr) => {
        pub(super) fn $name(u: u64) -> Option<&'static [Atom]> {
            use Fe::*;
            const S: Stage = $stage;
            const ALL: [Atom; 7] =
                [at(S, Flush), at(S, TlbMiss), at(S, IMiss), at(S, FillRecirc), at(S, Bubble), at(S, IbFull), at(S, Unreached)];
            const FLUSH: [Atom; 1] = [at(S, Flush)];
            const UNREACHED: [Atom; 1] = [at(S, Unreached)];
            const IBFULL: [Atom; 1] = [at(S, IbFull)];
            const IMISS: [Atom; 1] = [at(S, IMiss)];
            const TLBMISS: [Atom; 1] = [at(S, TlbMiss)];
            const RECIRC: [Atom; 1] = [at(S, FillRecirc)];
            const BUBBLE: [Atom; 1] = [at(S, Bubble)];
            match u {
                0x0 => Some(&ALL),
                0x1 => Some(&FLUSH),
                0x4 => Some(&UNREACHED),
                0x5 if $ib_full => Some(&IBFULL),
                0x6 => Some(&IMISS),
                0x7 => Some(&TLBMISS),
                0x8 => Some(&RECIRC),
                0xd => Some(&BUBBLE),
                _ => None,
            }
        }
    };
}

lost_bandwidth!(fe_lost_bw, Stage::Entrance, true);
lost_bandwidth!(ideal_be_lost_bw, Stage::Exit, false);
lost_bandwidth!(be_lost_bw, Stage::BackEnd, false);

const UNKNOWN_NOT_TAKEN: Atom = Atom::Sig(Signal::UnknownPredNotTaken);
const UNKNOWN_RETURN_NOT_TAKEN: Atom = Atom::Sig(Signal::UnknownReturnsNotTaken);
const UNKNOWN_TAKEN: Atom = Atom::Sig(Signal::UnknownPredTaken);
const UNKNOWN_RETURN: Atom = Atom::Front(Front::UnknownTaken(Kind::Return));
const UNKNOWN_INDIRECT: Atom = Atom::Front(Front::UnknownTaken(Kind::Indirect));
const UNKNOWN_IPREL: Atom = Atom::Front(Front::UnknownTaken(Kind::IpRelative));

/// BR_MISPRED_DETAIL2 (Table 4-52): bits 3:2 the branch type (ALL, IPREL, RETURN,
/// NRETIND), bits 1:0 ALL_UNKNOWN_PRED, UNKNOWN_PATH_CORRECT_PRED (forced not taken,
/// and not taken), UNKNOWN_PATH_WRONG_PATH (forced not taken, and taken); 11 counts
/// nothing. Other indirect branches are always taken in the machine; returns but for
/// the predicated ones (MMC40).
pub(super) fn br_mispred_detail2(u: u64) -> Option<&'static [Atom]> {
    match (u >> 2 & 3, u & 3) {
        (0b00, 0b00) => Some(&[UNKNOWN_NOT_TAKEN, UNKNOWN_RETURN_NOT_TAKEN, UNKNOWN_TAKEN]),
        (0b00, 0b01) => Some(&[UNKNOWN_NOT_TAKEN, UNKNOWN_RETURN_NOT_TAKEN]),
        (0b01, 0b01) => Some(&[UNKNOWN_NOT_TAKEN]),
        (0b00, 0b10) => Some(&[UNKNOWN_TAKEN]),
        (0b01, 0b00) => Some(&[UNKNOWN_NOT_TAKEN, UNKNOWN_IPREL]),
        (0b01, 0b10) => Some(&[UNKNOWN_IPREL]),
        (0b10, 0b00) => Some(&[UNKNOWN_RETURN, UNKNOWN_RETURN_NOT_TAKEN]),
        (0b10, 0b01) => Some(&[UNKNOWN_RETURN_NOT_TAKEN]),
        (0b10, 0b10) => Some(&[UNKNOWN_RETURN]),
        (0b11, 0b00 | 0b10) => Some(&[UNKNOWN_INDIRECT]),
        _ => None,
    }
}

/// BR_PATH_PRED2 (Table 4-54): bits 3:2 the branch type, bit 0 UNKNOWNPRED_NOTTAKEN
/// (0) or UNKNOWNPRED_TAKEN (1); bit 1 is ignored.
pub(super) fn br_path_pred2(u: u64) -> Option<&'static [Atom]> {
    match (u >> 2 & 3, u & 1) {
        (0b00, 0) => Some(&[UNKNOWN_NOT_TAKEN, UNKNOWN_RETURN_NOT_TAKEN]),
        (0b01, 0) => Some(&[UNKNOWN_NOT_TAKEN]),
        (0b10, 0) => Some(&[UNKNOWN_RETURN_NOT_TAKEN]),
        (0b00, 1) => Some(&[UNKNOWN_TAKEN]),
        (0b01, 1) => Some(&[UNKNOWN_IPREL]),
        (0b10, 1) => Some(&[UNKNOWN_RETURN]),
        (0b11, 1) => Some(&[UNKNOWN_INDIRECT]),
        _ => None,
    }
}

/// Returns and other indirect branches forced to "predicted not taken" and taken:
/// their path was mispredicted (BR_PATH_PRED's MISPRED_TAKEN, BR_MISPRED_DETAIL's
/// WRONG_PATH).
pub(super) const FORCED_RETURNS: Atom = UNKNOWN_RETURN;
pub(super) const FORCED_INDIRECT: Atom = UNKNOWN_INDIRECT;
