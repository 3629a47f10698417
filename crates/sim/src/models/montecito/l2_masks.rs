//! The unit masks of Montecito's L2I and L2D events (Tables 4-86 to 4-104) as the
//! machine drives them: which signals each selection counts (docs/montecito-model.md
//! has the same with the reasons).
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic))]

use super::events::Atom;
use crate::stream::Signal;
use Atom::Sig;

/// L2I_RECIRCULATES: requests for a line whose L2I miss is pending (MMC25), demand,
/// prefetch or both as bits 1:0 say (`first_second`); each matches the line's tag, so
/// HIT and ALL (bits 3:2) count them and MISS none (MD48).
pub(super) fn l2i_recirculates(u: u64) -> Option<&'static [Atom]> {
    const RECIRCULATES: [Atom; 2] = [Sig(Signal::L2iRecirculatesDemand), Sig(Signal::L2iRecirculatesPrefetch)];
    match u >> 2 & 3 {
        0b01 | 0b11 => first_second(u, &RECIRCULATES),
        _ => None,
    }
}

/// L2D secondary misses by where they found the outstanding miss (MMC29).
pub(super) const SEC_L1W: Atom = Sig(Signal::L2dSecondaryL1w);
pub(super) const SEC_OZQ: Atom = Sig(Signal::L2dSecondaryOzq);
pub(super) const SEC_FILL: Atom = Sig(Signal::L2dSecondaryFill);

/// L2D_FORCE_RECIRC (Table 4-90) from the OzQ (MMC29): RECIRC the forced
/// recirculates that re-inserted, LIMBO the secondary misses suspended on their first
/// insert (OZQ_MISS, FILL_HIT), TAG_OK the hits ("Likely identical to
/// L2D_INSERT_HITS"), the SECONDARY masks L1W + OZQ_MISS + FILL_HIT by direction,
/// TAG_NOTOK the store hits beside a miss of their issue group to their set (MMC1)
/// and the hits a pending `mf.a` held back (MMC72; its in-flight snoops and sibling
/// probes have no cause in the machine), SNP_OR_L3 the
/// entries a snoop of the other core found in the OzQ (MMC71), TRAN_PREF the misses
/// behind a missing acquire transformed into prefetches (MMC74).
pub(super) fn l2d_force_recirc(u: u64) -> Option<&'static [Atom]> {
    match u {
        0b0000 | 0b0010 => Some(&[Sig(Signal::L2dRecirculates)]),
        0b0001 | 0b0011 => Some(&[SEC_OZQ, SEC_FILL]),
        0b0100 => Some(&[Sig(Signal::L2dTagNotOk)]),
        0b0101 => Some(&[Sig(Signal::L2dTransformedPrefetches)]),
        0b0110 => Some(&[Sig(Signal::L2dSnoopRecirculates)]),
        0b0111 => Some(&[Sig(Signal::L2DataHits)]),
        0b1000 => Some(&[SEC_FILL]),
        0b1001 => Some(&[Sig(Signal::L2dMissWhileForced)]),
        0b1010 => Some(&[Sig(Signal::L2dSameIndex)]),
        0b1011 => Some(&[SEC_OZQ]),
        0b1100 => Some(&[SEC_L1W]),
        0b1101 => Some(&[Sig(Signal::L2dSecondaryReads)]),
        0b1110 => Some(&[Sig(Signal::L2dSecondaryWrites)]),
        0b1111 => Some(&[SEC_L1W, SEC_OZQ, SEC_FILL]),
        _ => None,
    }
}

/// Every cancel of the OzQ (L2D_OZQ_CANCELS1.ANY).
const OZQ_CANCELS: [Atom; 18] = [
    Sig(Signal::L2dRecirculateCancels),
    Sig(Signal::L2dMiscOrderCancels),
    Sig(Signal::L2dReleaseCancels),
    Sig(Signal::L2dSemaphoreCancels),
    Sig(Signal::L2dStoreMatchL2a),
    Sig(Signal::L2dStoreMatchL2m),
    Sig(Signal::L2dStoreMatchL2d),
    Sig(Signal::L2dStoreMatchL2c),
    Sig(Signal::L2dBankConflicts),
    Sig(Signal::L2dOversubscribed),
    Sig(Signal::L2dFillPreempts),
    Sig(Signal::L2dFillStoreConflicts),
    Sig(Signal::L2dOzDataConflicts),
    Sig(Signal::L2dWritebackConflicts),
    Sig(Signal::L2dCancelledStoreMatches),
    Sig(Signal::L2dAcquireCancels),
    Sig(Signal::L2dSiblingAcquireCancels),
    Sig(Signal::L3BypassAttributeCancels),
];

/// L2D_OZQ_CANCELS1 by unit mask bits 1:0 (Table 4-95): every cancel; the late
/// cancels of speculative bypasses, uncacheable requests' whose L3 access began as
/// they bypassed the empty OzQ (MMC70, the OzQ's side of SPEC_L3_BYP); those of
/// requests in an acquire's issue group (MMC48; releases cancel none of their group);
/// or those of reads that bypassed beside a store of their group to their word (MMC1,
/// a subset of the L2A store matches).
pub(super) fn l2d_ozq_cancels1(u: u64) -> Option<&'static [Atom]> {
    match u & 3 {
        0b00 => Some(&OZQ_CANCELS),
        0b01 => Some(&[Sig(Signal::L3BypassAttributeCancels)]),
        0b10 => Some(&[Sig(Signal::L2dSiblingAcquireCancels)]),
        0b11 => Some(&[Sig(Signal::L2dLateBypassReleases)]),
        _ => None,
    }
}

/// The L3 accesses the L2D cancels: bypassing hits' (the cycle's first, its second,
/// and one that lost its bank), uncacheable requests' (MMC36), then the L2D misses
/// the external request logic rejected, every request buffer being taken (MMC28).
const L3_BYPASS_CANCELS: [Atom; 5] = [
    Sig(Signal::L2dBypassL1d),
    Sig(Signal::L2dBypassL1w),
    Sig(Signal::L2dBankConflicts),
    Sig(Signal::L3BypassAttributeCancels),
    Sig(Signal::L2dFillBufferFull),
];
/// Unit-mask bits 1:0 choosing the first of `kinds` (01: demand, integer), the second
/// (10: prefetch, FP) or both (11); 00 counts nothing.
pub(super) fn first_second(u: u64, kinds: &'static [Atom; 2]) -> Option<&'static [Atom]> {
    match u & 3 {
        0b01 => Some(&kinds[..1]),
        0b10 => Some(&kinds[1..]),
        0b11 => Some(kinds),
        _ => None,
    }
}

/// L2I_L3_REJECTS: L2I misses that found the 16 request buffers taken, demand and
/// prefetch as bits 1:0 say (MMC28); MISS and ALL count them, HIT none (a hit sends
/// no request).
pub(super) fn l2i_l3_rejects(u: u64) -> Option<&'static [Atom]> {
    const REJECTED: [[Atom; 1]; 3] = flagged(Signal::L2iL3Rejects);
    on_side(u, 0b10, &REJECTED)
}

/// L2I_HIT_CONFLICTS: L2I hits abandoned while another line's fill returned its data
/// (MMC25), demand and prefetch as bits 1:0 say; HIT and ALL count them, MISS none
/// (MD48).
pub(super) fn l2i_hit_conflicts(u: u64) -> Option<&'static [Atom]> {
    const ABANDONED: [[Atom; 1]; 3] = flagged(Signal::L2iHitConflicts);
    on_side(u, 0b01, &ABANDONED)
}

/// L2I_READS' unit masks (Table 4-102) over a flags signal whose requests are all on
/// one `side` (bits 3:2: 01 HIT, 10 MISS), which ALL (11) counts too: bits 1:0 choose
/// its demand bit, its prefetch bit or either (`flagged`).
fn on_side(u: u64, side: u64, flags: &'static [[Atom; 1]; 3]) -> Option<&'static [Atom]> {
    match (u >> 2 & 3, u & 3) {
        (s, kinds @ 1..=3) if s == side || s == 0b11 => flags.get(kinds as usize - 1).map(|a| a.as_slice()),
        _ => None,
    }
}

/// A flags signal's bits 0 (demand), 1 (prefetch) and either, as unit-mask bits 1:0
/// of 01, 10 and 11 choose them: a cycle with one chosen counts one, as the events'
/// Max Inc/Cyc of 1 says.
const fn flagged(s: Signal) -> [[Atom; 1]; 3] {
    [[Atom::AnyOf(s, 0b01)], [Atom::AnyOf(s, 0b10)], [Atom::AnyOf(s, 0b11)]]
}

/// L2D_OZQ_CANCELS0 by reason (Table 4-94).
pub(super) fn l2d_ozq_cancels0(u: u64) -> Option<&'static [Atom]> {
    match u {
        0b0000 => Some(&[Sig(Signal::L2dRecirculateCancels)]),
        0b0001 => Some(&[Sig(Signal::L2dCancelledStoreMatches)]),
        0b0010 => Some(&[Sig(Signal::L2dStoreMatchL2a)]),
        0b0011 => Some(&[Sig(Signal::L2dStoreMatchL2m)]),
        0b0100 => Some(&[Sig(Signal::L2dStoreMatchL2d)]),
        0b0101 => Some(&[Sig(Signal::L2dStoreMatchL2c)]),
        0b0110 => Some(&[Sig(Signal::L2dAcquireCancels), Sig(Signal::L2dSiblingAcquireCancels)]),
        0b0111 => Some(&[Sig(Signal::L2dReleaseCancels)]),
        0b1000 => Some(&[Sig(Signal::L2dBankConflicts)]),
        0b1001 => Some(&[Sig(Signal::L2dSemaphoreCancels)]),
        0b1010 => Some(&[Sig(Signal::L2dOversubscribed)]),
        0b1011 => Some(&[Sig(Signal::L2dFillPreempts)]),
        0b1100 => Some(&[Sig(Signal::L2dWritebackConflicts)]),
        0b1101 => Some(&[Sig(Signal::L2dMiscOrderCancels)]),
        0b1110 => Some(&[Sig(Signal::L2dFillStoreConflicts)]),
        0b1111 => Some(&[Sig(Signal::L2dOzDataConflicts)]),
        _ => None,
    }
}

/// L2D_L3ACCESS_CANCEL bits 2:0 (Table 4-91).
pub(super) fn l2d_l3access_cancel(u: u64) -> Option<&'static [Atom]> {
    match u & 7 {
        0b000 => Some(&L3_BYPASS_CANCELS[..3]),
        0b001 => Some(&L3_BYPASS_CANCELS[3..4]),
        0b010 => Some(&L3_BYPASS_CANCELS),
        0b011 => Some(&L3_BYPASS_CANCELS[4..]),
        0b100 => Some(&[Sig(Signal::L2dSnoopTagErrors)]),
        0b110 => Some(&[Sig(Signal::L2dSnoopFillConflicts)]),
        // TAIL_TRANS_DIS: the cycles the BRQ's forward-progress logic runs, for any
        // kind of wait, in which the L2D transforms nothing (MMC75).
        0b111 => Some(&[Atom::AnyOf(Signal::BrqRejecting, 0b111)]),
        _ => None,
    }
}
