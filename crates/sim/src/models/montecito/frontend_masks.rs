//! The front end's events' unit masks (Tables 4-49, 4-52, 4-54, 4-74, 4-75, 4-79):
//! the atoms each selects (MD39, MD40).
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic))]

use super::events::Atom::{self, Sig};
use super::frontend::{Fe, Front, Kind, Stage};
use crate::stream::Signal;

const fn at(stage: Stage, fe: Fe) -> Atom {
    Atom::Front(Front::Lost(stage, fe))
}

/// The first `N` causes of §4.15's order (`Fe::ORDER`) at `stage`: every cause, or
/// FE_BUBBLE's stalls without the last, UNREACHED.
// Evaluated at compile time only: an index out of range fails the build.
#[allow(clippy::indexing_slicing)]
const fn first<const N: usize>(stage: Stage) -> [Atom; N] {
    let mut atoms = [at(stage, Fe::Flush); N];
    let mut i = 0;
    while i < N {
        atoms[i] = at(stage, Fe::ORDER[i]);
        i += 1;
    }
    atoms
}

/// FE_BUBBLE's unit masks (Table 4-74). BRANCH ("any of 4 branch recirculates") is
/// the perfect-loop prediction's wait (PLP, MMC43), the link register's (BR_ILOCK,
/// MMC45), the branch retirement queue's (BRQ, MMC78) and a loop entry's branch
/// initialization (BI, MMC65).
pub(super) fn fe_bubble(u: u64) -> Option<&'static [Atom]> {
    use Fe::*;
    use Stage::Bubbles as S;
    const ALL: [Atom; 10] = first(S);
    const FLUSH: [Atom; 1] = [at(S, Flush)];
    const GROUP1: [Atom; 5] = [at(S, Bubble), at(S, Plp), at(S, BrIlock), at(S, Brq), at(S, Bi)];
    const GROUP2: [Atom; 2] = [at(S, IMiss), at(S, TlbMiss)];
    const IBFULL: [Atom; 1] = [at(S, IbFull)];
    const IMISS: [Atom; 1] = [at(S, IMiss)];
    const TLBMISS: [Atom; 1] = [at(S, TlbMiss)];
    const RECIRC: [Atom; 1] = [at(S, FillRecirc)];
    const BRANCH: [Atom; 4] = [at(S, Plp), at(S, BrIlock), at(S, Brq), at(S, Bi)];
    const GROUP3: [Atom; 5] = [at(S, FillRecirc), at(S, Plp), at(S, BrIlock), at(S, Brq), at(S, Bi)];
    const ALLBUT_FEFLUSH_BUBBLE: [Atom; 8] =
        [at(S, TlbMiss), at(S, IMiss), at(S, Plp), at(S, BrIlock), at(S, Brq), at(S, Bi), at(S, FillRecirc), at(S, IbFull)];
    // Every stall but the last, IBFULL.
    const ALLBUT_IBFULL: [Atom; 9] = first(S);
    const BUBBLE: [Atom; 1] = [at(S, Bubble)];
    match u {
        0x0 => Some(&ALL),
        0x1 => Some(&FLUSH),
        0x3 => Some(&GROUP1),
        0x4 => Some(&GROUP2),
        0x5 => Some(&IBFULL),
        0x6 => Some(&IMISS),
        0x7 => Some(&TLBMISS),
        0x8 => Some(&RECIRC),
        0x9 => Some(&BRANCH),
        0xa => Some(&GROUP3),
        0xb => Some(&ALLBUT_FEFLUSH_BUBBLE),
        0xc => Some(&ALLBUT_IBFULL),
        0xd => Some(&BUBBLE),
        _ => None,
    }
}

/// The unit masks of FE_LOST_BW, IDEAL_BE_LOST_BW_DUE_TO_FE and BE_LOST_BW_DUE_TO_FE
/// (Tables 4-75, 4-79, 4-49), counted at `$stage`. IBFULL is "meaningless" at the
/// buffer's exit.
macro_rules! lost_bandwidth {
    ($name:ident, $stage:expr, $ib_full:expr) => {
        pub(super) fn $name(u: u64) -> Option<&'static [Atom]> {
            use Fe::*;
            const S: Stage = $stage;
            const ALL: [Atom; 11] = first(S);
            const FLUSH: [Atom; 1] = [at(S, Flush)];
            const UNREACHED: [Atom; 1] = [at(S, Unreached)];
            const IBFULL: [Atom; 1] = [at(S, IbFull)];
            const IMISS: [Atom; 1] = [at(S, IMiss)];
            const TLBMISS: [Atom; 1] = [at(S, TlbMiss)];
            const RECIRC: [Atom; 1] = [at(S, FillRecirc)];
            const PLP: [Atom; 1] = [at(S, Plp)];
            const BR_ILOCK: [Atom; 1] = [at(S, BrIlock)];
            const BI: [Atom; 1] = [at(S, Bi)];
            const BRQ: [Atom; 1] = [at(S, Brq)];
            const BUBBLE: [Atom; 1] = [at(S, Bubble)];
            match u {
                0x0 => Some(&ALL),
                0x1 => Some(&FLUSH),
                0x4 => Some(&UNREACHED),
                0x5 if $ib_full => Some(&IBFULL),
                0x6 => Some(&IMISS),
                0x7 => Some(&TLBMISS),
                0x8 => Some(&RECIRC),
                0x9 => Some(&BI),
                0xa => Some(&BRQ),
                0xb => Some(&PLP),
                0xc => Some(&BR_ILOCK),
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
const UNKNOWN_INDIRECT_NOT_TAKEN: Atom = Atom::Sig(Signal::UnknownIndirectNotTaken);
const UNKNOWN_TAKEN: Atom = Atom::Sig(Signal::UnknownPredTaken);
const UNKNOWN_RETURN: Atom = Atom::Front(super::frontend::FORCED_RETURNS);
const UNKNOWN_INDIRECT: Atom = Atom::Front(super::frontend::FORCED_INDIRECT);
const UNKNOWN_IPREL: Atom = Atom::Front(Front::UnknownTaken(Kind::IpRelative));

/// BR_MISPRED_DETAIL2 (Table 4-52): bits 3:2 the branch type (ALL, IPREL, RETURN,
/// NRETIND), bits 1:0 ALL_UNKNOWN_PRED, UNKNOWN_PATH_CORRECT_PRED (forced not taken,
/// and not taken), UNKNOWN_PATH_WRONG_PATH (forced not taken, and taken); 11 counts
/// nothing. Returns and other indirect branches are taken in the machine but for the
/// predicated ones (MMC40, MMC41).
pub(super) fn br_mispred_detail2(u: u64) -> Option<&'static [Atom]> {
    match (u >> 2 & 3, u & 3) {
        (0b00, 0b00) => Some(&[UNKNOWN_NOT_TAKEN, UNKNOWN_RETURN_NOT_TAKEN, UNKNOWN_INDIRECT_NOT_TAKEN, UNKNOWN_TAKEN]),
        (0b00, 0b01) => Some(&[UNKNOWN_NOT_TAKEN, UNKNOWN_RETURN_NOT_TAKEN, UNKNOWN_INDIRECT_NOT_TAKEN]),
        (0b01, 0b01) => Some(&[UNKNOWN_NOT_TAKEN]),
        (0b00, 0b10) => Some(&[UNKNOWN_TAKEN]),
        (0b01, 0b00) => Some(&[UNKNOWN_NOT_TAKEN, UNKNOWN_IPREL]),
        (0b01, 0b10) => Some(&[UNKNOWN_IPREL]),
        (0b10, 0b00) => Some(&[UNKNOWN_RETURN, UNKNOWN_RETURN_NOT_TAKEN]),
        (0b10, 0b01) => Some(&[UNKNOWN_RETURN_NOT_TAKEN]),
        (0b10, 0b10) => Some(&[UNKNOWN_RETURN]),
        (0b11, 0b00) => Some(&[UNKNOWN_INDIRECT, UNKNOWN_INDIRECT_NOT_TAKEN]),
        (0b11, 0b01) => Some(&[UNKNOWN_INDIRECT_NOT_TAKEN]),
        (0b11, 0b10) => Some(&[UNKNOWN_INDIRECT]),
        _ => None,
    }
}

/// BR_PATH_PRED2 (Table 4-54): bits 3:2 the branch type, bit 0 UNKNOWNPRED_NOTTAKEN
/// (0) or UNKNOWNPRED_TAKEN (1); bit 1 is ignored.
pub(super) fn br_path_pred2(u: u64) -> Option<&'static [Atom]> {
    match (u >> 2 & 3, u & 1) {
        (0b00, 0) => Some(&[UNKNOWN_NOT_TAKEN, UNKNOWN_RETURN_NOT_TAKEN, UNKNOWN_INDIRECT_NOT_TAKEN]),
        (0b01, 0) => Some(&[UNKNOWN_NOT_TAKEN]),
        (0b10, 0) => Some(&[UNKNOWN_RETURN_NOT_TAKEN]),
        (0b11, 0) => Some(&[UNKNOWN_INDIRECT_NOT_TAKEN]),
        (0b00, 1) => Some(&[UNKNOWN_TAKEN]),
        (0b01, 1) => Some(&[UNKNOWN_IPREL]),
        (0b10, 1) => Some(&[UNKNOWN_RETURN]),
        (0b11, 1) => Some(&[UNKNOWN_INDIRECT]),
        _ => None,
    }
}

/// The forced "predicted not taken" returns and other indirect branches that were
/// taken, as atoms.
pub(super) const FORCED_RETURNS: Atom = UNKNOWN_RETURN;
pub(super) const FORCED_INDIRECT: Atom = UNKNOWN_INDIRECT;

/// BR_PATH_PRED: bits 3:2 branch type (ALL, IPREL, RETURN, NRETIND), bits 1:0 the
/// path outcome (MISPRED_NOTTAKEN, MISPRED_TAKEN, OKPRED_NOTTAKEN, OKPRED_TAKEN).
/// Returns and other indirect branches are taken and predicted taken, but for
/// those forced to "predicted not taken" (§4.7, MD40) and the predicated ones, whose
/// predicate is predicted (MMC40, MMC41). Their other misses are wrong targets
/// (BR_MISPRED_DETAIL).
pub(super) fn br_path_pred(u: u64) -> Option<&'static [Atom]> {
    match (u >> 2 & 3, u & 3) {
        (0b00, 0b00) => {
            Some(&[Sig(Signal::PathMispredictsNotTaken), Sig(Signal::ReturnMispredictsNotTaken), Sig(Signal::IndirectMispredictsNotTaken)])
        }
        (0b01, 0b00) => Some(&[Sig(Signal::PathMispredictsNotTaken)]),
        (0b10, 0b00) => Some(&[Sig(Signal::ReturnMispredictsNotTaken)]),
        (0b00, 0b01) => Some(&[
            Sig(Signal::PathMispredictsTaken),
            Sig(Signal::ReturnMispredictsTaken),
            Sig(Signal::IndirectMispredictsTaken),
            FORCED_RETURNS,
            FORCED_INDIRECT,
        ]),
        (0b01, 0b01) => Some(&[Sig(Signal::PathMispredictsTaken)]),
        (0b00, 0b10) => Some(&[Atom::PathRight { taken: false, ip_relative: false }]),
        (0b00, 0b11) => Some(&[Atom::PathRight { taken: true, ip_relative: false }]),
        (0b01, 0b10) => Some(&[Atom::PathRight { taken: false, ip_relative: true }]),
        (0b01, 0b11) => Some(&[Atom::PathRight { taken: true, ip_relative: true }]),
        (0b10, 0b01) => Some(&[FORCED_RETURNS, Sig(Signal::ReturnMispredictsTaken)]),
        (0b10, 0b10) => Some(&[Atom::PredicatedPathRight { kind: Kind::Return, taken: false }]),
        (0b10, 0b11) => Some(&[Atom::PredicatedPathRight { kind: Kind::Return, taken: true }]),
        (0b11, 0b00) => Some(&[Sig(Signal::IndirectMispredictsNotTaken)]),
        (0b11, 0b01) => Some(&[FORCED_INDIRECT, Sig(Signal::IndirectMispredictsTaken)]),
        (0b11, 0b10) => Some(&[Atom::PredicatedPathRight { kind: Kind::Indirect, taken: false }]),
        (0b11, 0b11) => Some(&[Atom::PredicatedPathRight { kind: Kind::Indirect, taken: true }]),
        _ => None,
    }
}
