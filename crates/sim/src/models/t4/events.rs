//! TABLE 10-2 as the machine's signals drive it: what each sl group and mask bit of a
//! T4 strand counter counts in a cycle (docs/t4-model.md).
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic))]

use pmukit_arch::sparc::t4::MASK;
use pmukit_core::pmu::Pmu;

use super::GROUPS;
use crate::stream::{Privilege, Signal, Span};

/// What one TABLE 10-2 subevent counts in the stream. Atoms are disjoint, so the union
/// of the subevents a mask selects is the sum over its distinct atoms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Atom {
    /// One per cycle.
    Cycles,
    /// A stream signal, per cycle.
    Sig(Signal),
    /// Two signals that one subevent counts together.
    Both(Signal, Signal),
    /// Cycles with exactly this many instructions (pick, select, commit widths).
    InstructionsExactly(u64),
    /// Cycles with at least this many instructions.
    InstructionsAtLeast(u64),
    /// Instructions in none of sl 3's other classes (footnote 9: "All other").
    OtherInstructions,
    /// Mispredicts other than return-stack and indirect-target ones.
    DirectionMispredicts,
    /// Cycles the strand selected nothing and was not ready to (sel-0-wait): stalled,
    /// not waiting for another strand's turn.
    SelectWait,
    /// Cycles the strand was ready and another was selected (sel-0-ready): marked on
    /// another strand's span (`Signal::STRAND_READY`).
    Ready,
}

/// The instruction classes of sl 3 mask bits 0-4.
const CLASSIFIED: [Signal; 5] = [Signal::Branches, Signal::FguCryptoInstructions, Signal::Loads, Signal::Stores, Signal::SprRingOps];

impl Atom {
    /// The atom's count in a cycle of `span`.
    pub(super) fn per_cycle<const F: usize>(self, span: &Span<F>) -> u64 {
        let get = |s| span.signals.get(s);
        let instructions = get(Signal::Instructions);
        match self {
            Atom::Cycles => 1,
            Atom::Sig(s) => get(s),
            Atom::Both(a, b) => get(a) + get(b),
            Atom::InstructionsExactly(k) => u64::from(instructions == k),
            Atom::InstructionsAtLeast(k) => u64::from(instructions >= k),
            Atom::OtherInstructions => instructions.saturating_sub(CLASSIFIED.iter().map(|&s| get(s)).sum()),
            Atom::DirectionMispredicts => get(Signal::BranchMispredicts)
                .saturating_sub(get(Signal::ReturnsMispredicted))
                .saturating_sub(get(Signal::IndirectMispredicts)),
            Atom::SelectWait => u64::from(instructions == 0),
            Atom::Ready => 0,
        }
    }

    /// The atom's count in a cycle the strand was ready and another was selected: it
    /// fetched, but picked, selected and committed nothing.
    fn when_ready(self) -> u64 {
        match self {
            Atom::Cycles | Atom::Ready | Atom::InstructionsExactly(0) => 1,
            _ => 0,
        }
    }
}

/// TABLE 10-2: the atom behind subevent `bit` of group `sl`, or `None` where the
/// machine has nothing that produces it (the subevent counts zero). docs/t4-model.md
/// has the same table with the reasons.
fn atom(sl: u64, bit: u64) -> Option<Atom> {
    use Atom::*;
    use Signal::*;
    Some(match (sl, bit) {
        // sl 1, Select: a strand ready while another is selected (sel-0-ready, MSP1)
        // or stalled (sel-0-wait, pipe-drain cycles among them); select is two wide.
        (1, 0x01) => Sig(SelPipeDrainCycles),
        (1, 0x02) => SelectWait,
        (1, 0x04) => Ready,
        (1, 0x08) => InstructionsExactly(1),
        (1, 0x10) => InstructionsAtLeast(2),
        // sl 2, Pick-0..3: mask 0E ("at least 1") then covers every busy cycle.
        (2, 0x01) => InstructionsExactly(0),
        (2, 0x02) => InstructionsExactly(1),
        (2, 0x04) => InstructionsExactly(2),
        (2, 0x08) => InstructionsAtLeast(3),
        // sl 3, instruction classes (footnotes 5-9): 3F counts every instruction.
        (3, 0x01) | (4, 0x01) => Sig(Branches),
        (3, 0x02) => Sig(FguCryptoInstructions),
        (3, 0x04) => Sig(Loads),
        (3, 0x08) => Sig(Stores),
        (3, 0x10) => Sig(SprRingOps),
        (3, 0x20) => OtherInstructions,
        // sl 4, special instructions.
        (4, 0x02) => Sig(BranchesTaken),
        (4, 0x08) => Sig(Atomics),
        (4, 0x10) => Sig(SoftwarePrefetches),
        (4, 0x20) => Sig(BlockLoadsStores),
        // sl 5 / 11: instruction-cache misses by where the line came from.
        (5, 0x01) | (11, 0x01) => Sig(ICacheFillsFromCache),
        (5, 0x02) => Sig(ICacheFillsFromLocalMemory),
        (5, 0x04) => Sig(ICacheFillsFromRemote),
        (11, 0x02) => Both(ICacheFillsFromLocalMemory, ICacheFillsFromRemote),
        (5, 0x08) => Sig(BtcMisses),
        (5, 0x10) => Sig(ITlbMisses),
        // sl 6 / 17: walk fills by page size (8K, 64K, 4M, 256M, 2G), and fill traps.
        (6, 0x01) => Sig(ITlbFillsSize0),
        (6, 0x02) => Sig(ITlbFillsSize1),
        (6, 0x04) => Sig(ITlbFillsSize2),
        (6, 0x08) => Sig(ITlbFillsSize3),
        (6, 0x10) => Sig(ITlbFillsSize4),
        (6, 0x20) => Sig(ITlbFillTraps),
        (17, 0x01) => Sig(DTlbFillsSize0),
        (17, 0x02) => Sig(DTlbFillsSize1),
        (17, 0x04) => Sig(DTlbFillsSize2),
        (17, 0x08) => Sig(DTlbFillsSize3),
        (17, 0x10) => Sig(DTlbFillsSize4),
        (17, 0x20) => Sig(DTlbFillTraps),
        // sl 7: I-cache microtags. "Microtag miss, ptag hit" needs two virtual
        // addresses of one line, which no program has.
        (7, 0x01) => Sig(MicrotagMisses),
        (7, 0x04) => Sig(MicrotagFalseHits),
        (7, 0x08) => Sig(MicrotagWayMismatches),
        // sl 8: fetch-0 of this strand; fetch-0-all, no strand of the core fetching.
        (8, 0x01) => Sig(NoFetchCycles),
        (8, 0x02) => Sig(NoFetchAllCycles),
        (8, 0x04) => Sig(IBufFullCycles),
        (8, 0x08) => Sig(BtcTargetIncorrect),
        // sl 9: the reorder, load and store buffers and the DTLB-miss waits.
        (9, 0x02) => Sig(RobWaitCycles),
        (9, 0x04) => Sig(LoadBufferWaitCycles),
        (9, 0x08) => Sig(StoreBufferWaitCycles),
        (9, 0x10) => Sig(DTlbMissWaitCycles),
        // sl 10: table-walk references by serving level.
        (10, 0x01) => Sig(ITlbWalkRefsL2),
        (10, 0x02) => Sig(ITlbWalkRefsL3),
        (10, 0x04) => Sig(ITlbWalkRefsMemory),
        (10, 0x08) => Sig(DTlbWalkRefsL2),
        (10, 0x10) => Sig(DTlbWalkRefsL3),
        (10, 0x20) => Sig(DTlbWalkRefsMemory),
        // sl 16 / 23: load misses by where the line came from.
        (16, 0x01) | (23, 0x01) => Sig(DCacheFillsFromCache),
        (16, 0x02) | (23, 0x02) => Sig(DCacheFillsFromLocalMemory),
        (16, 0x04) | (23, 0x04) => Sig(DCacheFillsFromRemote),
        // sl 18: prefetches dropped on an L1 hit, and software prefetches for a full
        // miss buffer (MSP19).
        (18, 0x01) => Sig(HwPrefetchDropsCacheHit),
        (18, 0x02) => Sig(SwPrefetchDropsCacheHit),
        (18, 0x04) => Sig(SwPrefetchDropsMissBufferFull),
        // sl 19: read-after-write hits in the store buffer, else in the store queue
        // (the note: store buffer hits supersede; MSP18).
        (19, 0x01) => Sig(StoreBufferFullRawHits),
        (19, 0x02) => Sig(StoreBufferPartialRawHits),
        (19, 0x04) => Sig(StoreQueueFullRawHits),
        (19, 0x08) => Sig(StoreQueuePartialRawHits),
        // sl 20: L1 lines the inclusive L2 evicted, and lines another core's store or a
        // device's write snooped away (MSP17, MSP20).
        (20, 0x01) => Sig(ICacheEvictionInvalidations),
        (20, 0x02) => Sig(ICacheSnoopInvalidations),
        (20, 0x04) => Sig(DCacheEvictionInvalidations),
        (20, 0x08) => Sig(DCacheSnoopInvalidations),
        // Store queue tag waits: stores held at select behind one waiting for a queue
        // entry (MSP18).
        (20, 0x10) => Sig(StoreQueueWaitCycles),
        // sl 21: prefetches into the L2 by where the line was, and those the L2 dropped
        // (MSP19). The L3's queues, which serve eight cores, never fill with one core's
        // misses (MSP23): nothing is dropped by the L3.
        (21, 0x01) => Sig(L2PrefetchHitsL2),
        (21, 0x02) => Sig(L2PrefetchDrops),
        (21, 0x04) => Sig(L2PrefetchHitsL3),
        (21, 0x08) => Sig(L2PrefetchLocalMemory),
        (21, 0x10) => Sig(L2PrefetchRemoteMemory),
        // sl 22: stores at the L2 by where the line was.
        (22, 0x01) => Sig(StoresHitL2),
        (22, 0x02) => Sig(StoresHitL3),
        (22, 0x04) => Sig(StoresLocalC2c),
        (22, 0x08) => Sig(StoresRemoteC2c),
        (22, 0x10) => Sig(StoresLocalMemory),
        (22, 0x20) => Sig(StoresRemoteMemory),
        // sl 24: L2 evictions, misses and fills that found a buffer full, and requests
        // held in front of the pipeline by a fill (MSP19, MSP23-MSP25).
        (24, 0x01) => Sig(L2CleanEvictions),
        (24, 0x02) => Sig(L2DirtyEvictions),
        (24, 0x04) => Sig(L2FillBufferFull),
        (24, 0x08) => Sig(L2WritebackBufferFull),
        (24, 0x10) => Sig(L2MissBufferFull),
        (24, 0x20) => Sig(L2PipeStalls),
        // sl 25: return-stack mispredicts are in both 02 and 08; indirect-table ones in
        // 04; the rest are direction.
        (25, 0x01) => DirectionMispredicts,
        (25, 0x02) | (25, 0x08) => Sig(ReturnsMispredicted),
        (25, 0x04) => Sig(IndirectMispredicts),
        // sl 26 ignores the mask: its one event stands at bit 0.
        (26, 0x01) => Cycles,
        // sl 28 (reconstructed): commit-0 of this strand; commit-0-all, a cycle the
        // primary of which issued nothing (any issuing strand is the primary); commit
        // is two wide.
        (28, 0x01) | (28, 0x02) => InstructionsExactly(0),
        (28, 0x04) => InstructionsExactly(1),
        (28, 0x08) => InstructionsAtLeast(2),
        _ => return None,
    })
}

/// What the event table says about one sl group.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Group {
    /// The table defines the group (sl 0 and the reserved values are not).
    pub(super) defined: bool,
    /// TABLE 10-2 "Precise Event".
    pub(super) precise: bool,
    /// Mask bits the hardware ignores.
    pub(super) ignored: u64,
    /// Mask bits whose subevents cross strands (footnote 13).
    pub(super) crossing: u64,
}

/// The groups of the sparc-t4 event table, indexed by sl.
pub(super) fn groups(pmu: &Pmu) -> [Group; GROUPS] {
    std::array::from_fn(|sl| {
        let Some(event) = pmu.table.by_code(sl as u64, pmu.desc.model) else {
            return Group::default();
        };
        let yes = |v: Option<&str>| v == Some("yes");
        let crossing = mask_bits(MASK.max())
            .filter(|&bit| yes(event.attr_with("cross_strand", event.umasks.iter().find(|u| u.value == bit))))
            .fold(0, |m, bit| m | bit);
        Group { defined: true, precise: yes(event.attr("precise")), ignored: event.umask_ignored, crossing }
    })
}

/// Group `sl` of `groups`; for an `sl` beyond them (never a PCR.sl, a 5-bit field), a
/// group the table does not define, which counts nothing.
pub(super) fn group(groups: &[Group; GROUPS], sl: u64) -> Group {
    usize::try_from(sl).ok().and_then(|sl| groups.get(sl)).copied().unwrap_or_default()
}

/// What strand `strand`'s PCR.sl = `sl`, PCR.mask = `mask` counts per cycle of
/// `span`, in a mode its PCR counts: its own subevents in its own spans, the events
/// that cross strands in the other strands', and the core's cycles (fetch-0-all,
/// commit-0-all, the tag waits) in every primary. TABLE 10-2 as this model applies it
/// (for tests and for listing what the machine exercises).
pub fn per_cycle<const F: usize>(pmu: &Pmu, sl: u64, mask: u64, strand: usize, span: &Span<F>) -> u64 {
    counter(pmu, sl, mask)(span, strand)
}

/// [`per_cycle`] of one selection, its program worked out once: for asking many spans.
pub fn counter<const F: usize>(pmu: &Pmu, sl: u64, mask: u64) -> impl Fn(&Span<F>, usize) -> u64 {
    let program = Program::new(sl, mask, &group(&groups(pmu), sl));
    move |span, strand| program.per_cycle(span, strand, span.privilege, |_| true)
}

/// The subevents that cross strands and are cycles of the whole core, not events of
/// one strand (footnote 13's example, fetch-0-all): counted once a cycle, in span
/// groups' primaries, on which the lane runner marks them (`machine::run::lanes`).
const CORE_CYCLES: [(u64, u64); 7] = [(8, 0x02), (9, 0x02), (9, 0x04), (9, 0x08), (9, 0x10), (20, 0x10), (28, 0x02)];

/// The single-bit values set in `mask`, lowest first.
fn mask_bits(mask: u64) -> impl Iterator<Item = u64> {
    (0..MASK.width()).map(|b| 1u64 << b).filter(move |bit| mask & bit != 0)
}

/// What PCRn makes PICn count, derived when the PCR is written.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Program {
    /// Atoms counted in the strand's own spans.
    pub(super) own: Vec<Atom>,
    /// Events that cross strands, counted in every other strand's spans too.
    pub(super) shared: Vec<Atom>,
    /// Cycles of the whole core (`CORE_CYCLES`), counted in every primary span.
    pub(super) core: Vec<Atom>,
    /// What the own atoms count in a cycle the strand is ready and not selected.
    pub(super) ready: u64,
    /// Overflows raise precise traps (TABLE 10-2 "Precise Event").
    pub(super) precise: bool,
}

impl Program {
    /// TABLE 10-2: the union of the subevents `mask` selects in group `sl`.
    pub(super) fn new(sl: u64, mask: u64, group: &Group) -> Program {
        let mut p = Program { precise: group.precise, ..Program::default() };
        if !group.defined {
            return p;
        }
        // A group that ignores the whole mask (sl 26) has one event, at bit 0.
        let bits = if group.ignored == MASK.max() { 1 } else { mask & !group.ignored };
        for bit in mask_bits(bits) {
            let Some(a) = atom(sl, bit) else { continue };
            let crossing = group.crossing & bit != 0;
            if crossing && CORE_CYCLES.contains(&(sl, bit)) {
                // A cycle no strand fetches (commits) in is one this strand does not
                // either: with fetch-0 (commit-0) selected, the "-all" form adds no
                // cycle ("counted as one event").
                if !(bit == 0x02 && (sl == 8 || sl == 28) && bits & 0x01 != 0) {
                    push_unique(&mut p.core, a);
                }
            } else {
                push_unique(&mut p.own, a);
                if crossing {
                    push_unique(&mut p.shared, a);
                }
            }
        }
        p.ready = p.own.iter().map(|a| a.when_ready()).sum();
        p
    }

    /// What it counts per cycle of `span`, a span of the counting strand's (`own`) or
    /// of another's, with the strand in `mode` (when not its own) and counting the
    /// modes `counts`.
    pub(super) fn per_cycle<const F: usize>(
        &self,
        span: &Span<F>,
        strand: usize,
        mode: Privilege,
        counts: impl Fn(Privilege) -> bool,
    ) -> u64 {
        let own = usize::from(span.thread) == strand;
        // A strand halted in CPU_YIELD executes nothing, and counts nothing of its own
        // (ERRATA MSP27); the core's cycles go on.
        let halted = own && span.signals.get(Signal::HaltedCycles) > 0;
        let mut n = 0;
        if counts(if own { span.privilege } else { mode }) {
            let atoms = if own { &self.own } else { &self.shared };
            if !halted {
                n += atoms.iter().map(|a| a.per_cycle(span)).sum::<u64>();
            }
            if !span.overlay {
                n += self.core.iter().map(|a| a.per_cycle(span)).sum::<u64>();
            }
        }
        if self.ready > 0 && !own && !span.overlay {
            // Ready in its own mode, which the span says (not a count).
            let marked = Signal::STRAND_READY.get(strand).map_or(0, |&s| span.signals.get(s));
            if let Some(m) = marked.checked_sub(1).and_then(|c| Privilege::from_code(c as u8)) {
                if counts(m) {
                    n += self.ready;
                }
            }
        }
        n
    }

    /// Whether it counts anything in other strands' spans.
    pub(super) fn reaches_others(&self) -> bool {
        !self.shared.is_empty() || !self.core.is_empty() || self.ready > 0
    }
}

/// "Setting multiple mask bits ... can lead to multiple events being counted as one
/// event" (§10.2): a subevent selected twice counts once.
fn push_unique(atoms: &mut Vec<Atom>, a: Atom) {
    if !atoms.contains(&a) {
        atoms.push(a);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::run::lanes::CORE_WAITS;

    /// The core's cycles the model counts once a cycle are the ones the lane runner
    /// marks on a group's primary (`CORE_WAITS`, `NoFetchAllCycles`) and a primary
    /// that issued nothing (commit-0-all): the two lists cannot drift apart.
    #[test]
    fn the_cores_cycles_are_what_the_lane_runner_marks() {
        let mut marked: Vec<Signal> = Vec::new();
        for &(sl, bit) in &CORE_CYCLES {
            match atom(sl, bit) {
                Some(Atom::Sig(s)) => marked.push(s),
                Some(Atom::InstructionsExactly(0)) => assert_eq!((sl, bit), (28, 0x02), "commit-0-all"),
                other => panic!("sl {sl} mask {bit:#x}: {other:?}"),
            }
        }
        let mut expected: Vec<Signal> = CORE_WAITS.to_vec();
        expected.push(Signal::NoFetchAllCycles);
        marked.sort_by_key(|&s| s as usize);
        expected.sort_by_key(|&s| s as usize);
        assert_eq!(marked, expected);
    }
}
