//! Register-level model of the SPARC T4 strand performance counters (SPARC T4
//! Supplement, chapter 10, §10.1-§10.3).
//!
//! A [`T4Core`] holds the strands (virtual processors) of one core, each a [`T4Strand`]
//! with PCR0-3 and PIC0-3. Software reaches the registers only through
//! [`T4Core::ldxa`] and [`T4Core::stxa`], the alternate-space loads and stores of
//! §10.2 and §10.3, each executed by one strand in one privilege mode. The engine
//! ([`crate::engine`]) drives the counters through [`Counting`]; overflow traps are read
//! with [`T4Core::take_trap`] and [`T4Strand::pending_traps`]. `docs/t4-model.md`
//! describes the model, its signal mapping and every reading of the spec it makes.

use pmukit_arch::sparc::t4::{self, counter_va, HT, MASK, NTC, OV, PCR, PCR_ASI, PIC, PICNHT, PICNPT, PIC_ASI, SL, ST, TOE, UT};
use pmukit_arch::Catalog;
use pmukit_core::pmu::Pmu;
use thiserror::Error;

use crate::engine::Counting;
use crate::stream::{Privilege, Signal, Signals, Span};

/// §10.1 item 1: four PCR/PIC pairs per virtual processor.
pub const PICS: usize = 4;
/// Strands of a SPARC T4 core; [`T4Core::new`] takes its argument as 1..=8.
pub const STRANDS_PER_CORE: usize = 8;
/// PCR.sl selects one of 32 event groups (TABLE 10-1).
const GROUPS: usize = SL.max() as usize + 1;

/// Programming Note (sl 28): with the PIC at -1, -2 or -3 and PCR.mask 01, 02 or 03,
/// "the PIC increments within two cycles after the PCR is set".
const COMMIT_SL: u64 = 28;
/// The two cycles of that window.
const COMMIT_WINDOW_CYCLES: u64 = 2;
/// Increments landing at the end of the window: enough to wrap from -3, the edge of
/// the range the note warns about.
const COMMIT_LATE_INCREMENTS: u32 = 3;

/// A trap the model raises. `ldxa`/`stxa` return the access traps; the performance
/// event traps are read with [`T4Core::take_trap`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum Trap {
    /// §10.1 item 4: PCRs are reachable in hyperprivileged mode only; TABLE 10-1 and
    /// §10.3: a PIC access that picnht/picnpt forbid.
    #[error("privileged_action")]
    PrivilegedAction,
    /// An ASI other than 0x64/0xB0, or a VA other than 0x00/0x08/0x10/0x18. The spec
    /// names no trap for these; data_access_exception is our choice.
    #[error("data_access_exception")]
    DataAccessException,
    /// §10.3: a Precise group's PIC overflowed with toe = 1, ht = 0, outside
    /// hyperprivileged mode. PCR.ntc tells the handler whether to DONE or RETRY.
    #[error("precise_performance_event (PIC{pic})")]
    PrecisePerformanceEvent { pic: usize },
    /// §10.3: ov AND toe on an asynchronous group; pending until software clears ov.
    #[error("disrupting_performance_event (PIC{pic})")]
    DisruptingPerformanceEvent { pic: usize },
    /// Not a SPARC trap: the caller named a strand this core does not have.
    #[error("strand {strand} does not exist on this core")]
    NoSuchStrand { strand: usize },
}

/// What one TABLE 10-2 subevent counts in the stream. Atoms are disjoint, so the union
/// of the subevents a mask selects is the sum over its distinct atoms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Atom {
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
}

/// The instruction classes of sl 3 mask bits 0-4.
const CLASSIFIED: [Signal; 5] = [Signal::Branches, Signal::FguCryptoInstructions, Signal::Loads, Signal::Stores, Signal::SprRingOps];

impl Atom {
    fn per_cycle(self, span: &Span) -> u64 {
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
        // sl 1, Select: strands take turns, so no cycle has another strand ready
        // (sel-0-ready); select is two wide; pipe-drain cycles are part of sel-0-wait.
        (1, 0x01) => Sig(SelPipeDrainCycles),
        (1, 0x02) => InstructionsExactly(0),
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
        // sl 8: fetch-0 of this strand and fetch-0-all of the core are the same cycles
        // while one strand runs at a time.
        (8, 0x01) | (8, 0x02) => Sig(NoFetchCycles),
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
        // sl 18: prefetches dropped on an L1 hit.
        (18, 0x01) => Sig(HwPrefetchDropsCacheHit),
        (18, 0x02) => Sig(SwPrefetchDropsCacheHit),
        // sl 19: read-after-write hits in the store buffer.
        (19, 0x01) => Sig(StoreBufferFullRawHits),
        (19, 0x02) => Sig(StoreBufferPartialRawHits),
        // sl 20: L1 lines the inclusive L2 evicted.
        (20, 0x01) => Sig(ICacheEvictionInvalidations),
        (20, 0x04) => Sig(DCacheEvictionInvalidations),
        // sl 21: prefetches into the L2 by where the line was.
        (21, 0x01) => Sig(L2PrefetchHitsL2),
        (21, 0x04) => Sig(L2PrefetchHitsL3),
        (21, 0x08) => Sig(L2PrefetchLocalMemory),
        (21, 0x10) => Sig(L2PrefetchRemoteMemory),
        // sl 22: stores at the L2 by where the line was.
        (22, 0x01) => Sig(StoresHitL2),
        (22, 0x02) => Sig(StoresHitL3),
        (22, 0x10) => Sig(StoresLocalMemory),
        (22, 0x20) => Sig(StoresRemoteMemory),
        // sl 24: L2 evictions.
        (24, 0x01) => Sig(L2CleanEvictions),
        (24, 0x02) => Sig(L2DirtyEvictions),
        // sl 25: return-stack mispredicts are in both 02 and 08; indirect-table ones in
        // 04; the rest are direction.
        (25, 0x01) => DirectionMispredicts,
        (25, 0x02) | (25, 0x08) => Sig(ReturnsMispredicted),
        (25, 0x04) => Sig(IndirectMispredicts),
        // sl 26 ignores the mask: its one event stands at bit 0.
        (26, 0x01) => Cycles,
        // sl 28 (reconstructed): commit-0 of this strand and commit-0-all are the same
        // cycles, as for sl 8; commit is two wide.
        (28, 0x01) | (28, 0x02) => InstructionsExactly(0),
        (28, 0x04) => InstructionsExactly(1),
        (28, 0x08) => InstructionsAtLeast(2),
        _ => return None,
    })
}

/// What the event table says about one sl group.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Group {
    /// The table defines the group (sl 0 and the reserved values are not).
    defined: bool,
    /// TABLE 10-2 "Precise Event".
    precise: bool,
    /// Mask bits the hardware ignores.
    ignored: u64,
    /// Mask bits whose subevents cross strands (footnote 13).
    crossing: u64,
}

/// The groups of the sparc-t4 event table, indexed by sl.
fn groups(pmu: &Pmu) -> [Group; GROUPS] {
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

/// What PCR.sl = `sl`, PCR.mask = `mask` counts per cycle of `span`, run by the
/// counting strand in a mode its PCR counts: TABLE 10-2 as this model applies it
/// (for tests and for listing what the machine exercises).
pub fn per_cycle(pmu: &Pmu, sl: u64, mask: u64, span: &Span) -> u64 {
    let Some(group) = usize::try_from(sl).ok().and_then(|sl| groups(pmu).get(sl).copied()) else { return 0 };
    Program::new(sl, mask, &group).own.iter().map(|a| a.per_cycle(span)).sum()
}

/// The single-bit values set in `mask`, lowest first.
fn mask_bits(mask: u64) -> impl Iterator<Item = u64> {
    (0..MASK.width()).map(|b| 1u64 << b).filter(move |bit| mask & bit != 0)
}

/// What PCRn makes PICn count, derived when the PCR is written.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Program {
    /// Atoms counted in the strand's own spans.
    own: Vec<Atom>,
    /// Atoms that cross strands, counted in every other strand's spans too.
    shared: Vec<Atom>,
    /// Overflows raise precise traps (TABLE 10-2 "Precise Event").
    precise: bool,
}

impl Program {
    /// TABLE 10-2: the union of the subevents `mask` selects in group `sl`.
    fn new(sl: u64, mask: u64, group: &Group) -> Program {
        let mut p = Program { precise: group.precise, ..Program::default() };
        if !group.defined {
            return p;
        }
        // A group that ignores the whole mask (sl 26) has one event, at bit 0.
        let bits = if group.ignored == MASK.max() { 1 } else { mask & !group.ignored };
        for bit in mask_bits(bits) {
            let Some(a) = atom(sl, bit) else { continue };
            push_unique(&mut p.own, a);
            if group.crossing & bit != 0 {
                push_unique(&mut p.shared, a);
            }
        }
        p
    }
}

/// "Setting multiple mask bits ... can lead to multiple events being counted as one
/// event" (§10.2): a subevent selected twice counts once.
fn push_unique(atoms: &mut Vec<Atom>, a: Atom) {
    if !atoms.contains(&a) {
        atoms.push(a);
    }
}

/// TABLE 10-1 ut/st/ht: does the PCR count events in `mode`? CPL 1 and 2, which SPARC
/// does not have, count as privileged.
fn counts_in(pcr: u64, mode: Privilege) -> bool {
    let enable = match mode {
        Privilege::Hyper => HT,
        Privilege::Cpl3 => UT,
        _ => ST,
    };
    enable.get(pcr) == 1
}

/// Programming Note (sl 28): does this PCR value start the late-increment window?
fn opens_commit_window(pcr: u64, group: &Group) -> bool {
    let mask = MASK.get(pcr) & !group.ignored;
    SL.get(pcr) == COMMIT_SL && (1..=3).contains(&mask) && [UT, ST, HT].iter().any(|f| f.get(pcr) == 1)
}

/// An `ldxa`/`stxa` as the one-cycle instruction it is: an SPR ring op (footnote 8:
/// LDXA_0X64, LDXA_0XB0, STXA_0X64, STXA_0XB0) and a next-to-commit instruction
/// (footnote 1: a non-translating alternate-space access).
fn access_span(strand: usize, mode: Privilege) -> Span {
    let signals = Signals::default().with(Signal::Instructions, 1).with(Signal::SprRingOps, 1).with(Signal::NextToCommit, 1);
    Span { thread: strand as u8, privilege: mode, signals, ..Span::new(1, 0) }
}

/// A register `ldxa`/`stxa` reach.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reg {
    Pcr(usize),
    Pic(usize),
}

/// One virtual processor: PCR0-3, PIC0-3, its mode and its pending precise traps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct T4Strand {
    pcr: [u64; PICS],
    pic: [u32; PICS],
    programs: [Program; PICS],
    /// The mode the strand is in while the stream runs other strands' spans: that of
    /// its last `ldxa`/`stxa`, or of [`T4Core::set_mode`]. Hyperprivileged at reset.
    mode: Privilege,
    precise_pending: [bool; PICS],
    /// Cycles left in each PCR's sl 28 window, when one is open.
    commit_window: [Option<u64>; PICS],
}

impl T4Strand {
    /// TABLE 10-1 and 10-3: every register resets to zero.
    fn new() -> T4Strand {
        T4Strand {
            pcr: [PCR.reset; PICS],
            pic: [PIC.reset as u32; PICS],
            programs: Default::default(),
            mode: Privilege::Hyper,
            precise_pending: [false; PICS],
            commit_window: [None; PICS],
        }
    }

    /// The mode the strand is in between its own spans.
    pub fn mode(&self) -> Privilege {
        self.mode
    }

    /// Traps waiting for the hypervisor: precise ones (until taken) and disrupting ones
    /// (while PCRn.ov AND PCRn.toe), in PIC order, precise first.
    pub fn pending_traps(&self) -> Vec<Trap> {
        let precise = (0..PICS).filter(|&n| self.precise_pending[n]).map(|pic| Trap::PrecisePerformanceEvent { pic });
        precise.chain(self.disrupting()).collect()
    }

    /// TABLE 10-1 toe: "Hardware ANDs the value of toe with ov to produce a trap";
    /// asynchronous groups trap as disrupting_performance_event for as long as both are
    /// set (Programming Note: the handler must clear ov).
    fn disrupting(&self) -> impl Iterator<Item = Trap> + '_ {
        (0..PICS)
            .filter(|&n| OV.get(self.pcr[n]) == 1 && TOE.get(self.pcr[n]) == 1 && !self.programs[n].precise)
            .map(|pic| Trap::DisruptingPerformanceEvent { pic })
    }

    /// Precise traps first (they belong to an instruction), then disrupting ones, which
    /// stay pending.
    fn take_trap(&mut self) -> Option<Trap> {
        if let Some(n) = self.precise_pending.iter().position(|&p| p) {
            self.precise_pending[n] = false;
            return Some(Trap::PrecisePerformanceEvent { pic: n });
        }
        self.disrupting().next()
    }

    /// Per-cycle increment of PICn in a cycle of `span`; `own` when this strand runs it.
    /// Footnote 13: subevents that cross strands count in other strands' cycles, by
    /// this strand's own mode.
    fn rate(&self, n: usize, span: &Span, own: bool) -> u64 {
        let program = &self.programs[n];
        let (atoms, mode) = if own { (&program.own, span.privilege) } else { (&program.shared, self.mode) };
        if atoms.is_empty() || !counts_in(self.pcr[n], mode) {
            return 0;
        }
        atoms.iter().map(|a| a.per_cycle(span)).sum()
    }

    /// TABLE 10-3: PICn is a 32-bit counter. Returns whether it wrapped.
    fn advance(&mut self, n: usize, by: u64) -> bool {
        let total = u64::from(self.pic[n]) + by;
        self.pic[n] = total as u32;
        total >> 32 != 0
    }

    /// §10.2, §10.3: PICn wrapped from 2^32 - 1 to 0. Sets ov and raises the trap toe
    /// asks for; returns whether one was raised. `hpriv`: the overflow happened in
    /// hyperprivileged mode.
    fn overflow(&mut self, n: usize, hpriv: bool) -> bool {
        self.pcr[n] = OV.set(self.pcr[n], 1);
        if TOE.get(self.pcr[n]) == 0 {
            return false;
        }
        if !self.programs[n].precise {
            return true;
        }
        // Footnote 2, §10.3: no precise trap in hyperprivileged mode ("the trap is
        // lost") nor while ht = 1.
        let delivered = !hpriv && HT.get(self.pcr[n]) == 0;
        self.precise_pending[n] |= delivered;
        delivered
    }

    /// §10.2: a PCR write updates every field but ntc and ov, which it can only clear.
    fn write_pcr(&mut self, n: usize, value: u64, groups: &[Group; GROUPS]) {
        let pcr = PCR.apply_write(self.pcr[n], value).stored;
        let group = &groups[SL.get(pcr) as usize];
        self.pcr[n] = pcr;
        self.programs[n] = Program::new(SL.get(pcr), MASK.get(pcr), group);
        self.commit_window[n] = opens_commit_window(pcr, group).then_some(COMMIT_WINDOW_CYCLES);
    }

    /// Programming Note (sl 28): a PCR write inside the window: the increments land
    /// now, and the write overwrites the ov they were about to set.
    fn race_commit_window(&mut self, n: usize) {
        if self.commit_window[n].take().is_some() {
            self.pic[n] = self.pic[n].wrapping_add(COMMIT_LATE_INCREMENTS);
        }
    }

    /// `cycles` cycles pass: windows that end land their increments. They belong to
    /// the drain after a hyperprivileged PCR write, so they raise no precise trap; a
    /// disrupting one is taken at the next stop.
    fn tick(&mut self, cycles: u64) {
        for n in 0..PICS {
            match self.commit_window[n] {
                Some(left) if left > cycles => self.commit_window[n] = Some(left - cycles),
                Some(_) => {
                    self.commit_window[n] = None;
                    if self.advance(n, u64::from(COMMIT_LATE_INCREMENTS)) {
                        self.overflow(n, true);
                    }
                }
                None => {}
            }
        }
    }
}

/// The strands of one SPARC T4 core, with the event table in force.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct T4Core {
    strands: Vec<T4Strand>,
    groups: [Group; GROUPS],
    /// Counters (strand × 4 + PIC) that wrapped in the engine step under way; the
    /// step's span, seen in `executed`, says whether the instruction was next-to-commit.
    wrapped: Vec<usize>,
    unpredictable: Vec<String>,
}

impl Default for T4Core {
    fn default() -> Self {
        T4Core::new(STRANDS_PER_CORE)
    }
}

impl T4Core {
    /// A core in its reset state with `strands` strands (taken as 1..=8), counting by
    /// the built-in sparc-t4 event table.
    pub fn new(strands: usize) -> T4Core {
        let catalog = Catalog::builtin();
        T4Core::with_pmu(catalog.pmu(t4::FAMILY).expect("sparc-t4 is a built-in PMU"), strands)
    }

    /// A core counting by `pmu`'s event table (for example one loaded with
    /// `Catalog::load_events_file`): its precise, cross_strand and ignored-bit data.
    pub fn with_pmu(pmu: &Pmu, strands: usize) -> T4Core {
        let n = strands.clamp(1, STRANDS_PER_CORE);
        T4Core { strands: vec![T4Strand::new(); n], groups: groups(pmu), wrapped: Vec::new(), unpredictable: Vec::new() }
    }

    pub fn strands(&self) -> usize {
        self.strands.len()
    }

    pub fn strand(&self, strand: usize) -> Option<&T4Strand> {
        self.strands.get(strand)
    }

    /// Put a strand in `mode` between its own spans, as software running on it would.
    pub fn set_mode(&mut self, strand: usize, mode: Privilege) -> Result<(), Trap> {
        self.strands.get_mut(strand).ok_or(Trap::NoSuchStrand { strand })?.mode = mode;
        Ok(())
    }

    /// Deliver the next pending performance trap of a strand: a precise one is
    /// consumed; a disrupting one stays pending until software clears PCRn.ov, so
    /// taking it again without clearing ov delivers it again.
    pub fn take_trap(&mut self, strand: usize) -> Option<Trap> {
        self.strands.get_mut(strand)?.take_trap()
    }

    /// Every PCR programming the spec leaves undefined (reserved sl values), in order.
    pub fn unpredictable(&self) -> &[String] {
        &self.unpredictable
    }

    /// LDXA from ASI `asi`, VA `va`, executed by `strand` in `mode`. Returns the value
    /// before the load's own event is counted (it counts when it commits).
    pub fn ldxa(&mut self, strand: usize, asi: u8, va: u64, mode: Privilege) -> Result<u64, Trap> {
        let reg = self.decode(strand, asi, va, mode)?;
        let s = &self.strands[strand];
        let value = match reg {
            Reg::Pcr(n) => PCR.read(s.pcr[n]),
            Reg::Pic(n) => u64::from(s.pic[n]),
        };
        self.retire(&access_span(strand, mode), None);
        self.tick(1);
        Ok(value)
    }

    /// STXA of `value` to ASI `asi`, VA `va`, executed by `strand` in `mode`. The store
    /// is itself an instruction (footnote 8: STXA_0X64 and STXA_0XB0 are SPR ring ops),
    /// counted under the configuration in force before the write, except that a PCR
    /// write changes its own PIC's asynchronous count at once (Programming Note: "STXA
    /// %pcr ... affect an asynchronous count immediately").
    pub fn stxa(&mut self, strand: usize, asi: u8, va: u64, value: u64, mode: Privilege) -> Result<(), Trap> {
        let reg = self.decode(strand, asi, va, mode)?;
        let span = access_span(strand, mode);
        match reg {
            Reg::Pcr(n) => self.store_pcr(&span, n, value),
            Reg::Pic(n) => self.store_pic(&span, n, value),
        }
        Ok(())
    }

    /// A PCRn write by the access `span`, with the events of its own instruction.
    fn store_pcr(&mut self, span: &Span, n: usize, value: u64) {
        let strand = usize::from(span.thread);
        // PCRn's precise (instruction) events count the write at retirement, by the old
        // setting; its asynchronous ones see the new setting at once, below.
        let asynchronous = !self.strands[strand].programs[n].precise;
        let wrapped = self.retire(span, asynchronous.then_some(n));
        self.strands[strand].race_commit_window(n);
        self.tick(1);
        self.write_pcr(strand, n, value);
        let s = &mut self.strands[strand];
        let now = !s.programs[n].precise && s.advance(n, s.rate(n, span, true));
        // Programming Note after TABLE 10-1: the write's own overflow lands after the
        // write, so hardware re-writes ov (and ntc) to one, and the new setting decides
        // the trap. PCR writes run in hyperprivileged mode.
        if wrapped.contains(&n) || now {
            s.pcr[n] = NTC.set(s.pcr[n], 1);
            s.overflow(n, true);
        }
    }

    /// A PICn write by the access `span`: the instruction counts, then the PIC takes the
    /// low 32 bits (TABLE 10-3: bits 63:32 are reserved).
    fn store_pic(&mut self, span: &Span, n: usize, value: u64) {
        self.retire(span, None);
        self.tick(1);
        let s = &mut self.strands[usize::from(span.thread)];
        s.pic[n] = PIC.apply_write(u64::from(s.pic[n]), value).stored as u32;
    }

    /// The register an access reaches, or the trap it takes. Nothing changes here.
    fn decode(&self, strand: usize, asi: u8, va: u64, mode: Privilege) -> Result<Reg, Trap> {
        let s = self.strands.get(strand).ok_or(Trap::NoSuchStrand { strand })?;
        if asi != PCR_ASI && asi != PIC_ASI {
            return Err(Trap::DataAccessException);
        }
        // §10.1 item 4: the PCRs' ASI is hyperprivileged; its trap comes before the
        // VA is looked at.
        if asi == PCR_ASI && mode != Privilege::Hyper {
            return Err(Trap::PrivilegedAction);
        }
        let n = (0..PICS).find(|&n| counter_va(n) == va).ok_or(Trap::DataAccessException)?;
        if asi == PCR_ASI {
            return Ok(Reg::Pcr(n));
        }
        // TABLE 10-1 picnht/picnpt, §10.3.
        let pcr = s.pcr[n];
        let allowed = match mode {
            Privilege::Hyper => true,
            Privilege::Cpl3 => PICNHT.get(pcr) == 0 && PICNPT.get(pcr) == 0,
            _ => PICNHT.get(pcr) == 0,
        };
        if allowed {
            Ok(Reg::Pic(n))
        } else {
            Err(Trap::PrivilegedAction)
        }
    }

    fn write_pcr(&mut self, strand: usize, n: usize, value: u64) {
        self.strands[strand].write_pcr(n, value, &self.groups);
        let sl = SL.get(self.strands[strand].pcr[n]);
        if sl != 0 && !self.groups[sl as usize].defined {
            self.unpredictable
                .push(format!("strand {strand} PCR{n}: sl {sl} is reserved or undocumented (TABLE 10-2); PIC{n} counts nothing"));
        }
    }

    /// Count an access (`access_span`) on every counter but PIC `skip` of its strand;
    /// the strand is in the access's mode from now on. Returns the PICs of the strand
    /// it wrapped.
    fn retire(&mut self, span: &Span, skip: Option<usize>) -> Vec<usize> {
        let strand = usize::from(span.thread);
        self.strands[strand].mode = span.privilege;
        for i in 0..self.counters() {
            let (s, n) = (i / PICS, i % PICS);
            let r = self.rate(i, span);
            if r > 0 && (s, Some(n)) != (strand, skip) {
                // Each strand counts by its own mode, the access's for this one (footnote 13).
                let hpriv = self.strands[s].mode == Privilege::Hyper;
                self.count(s, n, r, hpriv);
            }
        }
        let wrapped = std::mem::take(&mut self.wrapped);
        self.mark_next_to_commit(span, &wrapped);
        wrapped.into_iter().filter(|i| i / PICS == strand).map(|i| i % PICS).collect()
    }

    /// Add `by` to PICn of strand `s`; returns whether an overflow raised a trap.
    fn count(&mut self, s: usize, n: usize, by: u64, hpriv: bool) -> bool {
        let strand = &mut self.strands[s];
        if !strand.advance(n, by) {
            return false;
        }
        self.wrapped.push(s * PICS + n);
        strand.overflow(n, hpriv)
    }

    /// `cycles` core cycles pass (sl 28 windows run out).
    fn tick(&mut self, cycles: u64) {
        self.strands.iter_mut().for_each(|s| s.tick(cycles));
    }

    /// TABLE 10-1 ntc and footnote 1: counters that wrapped in a cycle that carries a
    /// next-to-commit instruction set ntc with ov.
    fn mark_next_to_commit(&mut self, span: &Span, wrapped: &[usize]) {
        if span.signals.get(Signal::NextToCommit) == 0 {
            return;
        }
        for &i in wrapped {
            let pcr = &mut self.strands[i / PICS].pcr[i % PICS];
            *pcr = NTC.set(*pcr, 1);
        }
    }
}

/// Virtual counter `strand × 4 + n` is PICn of that strand.
impl Counting for T4Core {
    fn counters(&self) -> usize {
        self.strands.len() * PICS
    }

    fn rate(&self, i: usize, span: &Span) -> u64 {
        let s = i / PICS;
        self.strands[s].rate(i % PICS, span, usize::from(span.thread) == s)
    }

    fn headroom(&self, i: usize) -> u64 {
        (1u64 << 32) - u64::from(self.strands[i / PICS].pic[i % PICS])
    }

    fn add(&mut self, i: usize, n: u64) -> bool {
        // A count with ht = 0 happened outside hyperprivileged mode (`counts_in`), and
        // with ht = 1 `overflow` raises no precise trap anyway: hpriv adds nothing here.
        self.count(i / PICS, i % PICS, n, false)
    }

    fn executed(&mut self, span: &Span, cycles: u64) {
        let wrapped = std::mem::take(&mut self.wrapped);
        self.mark_next_to_commit(span, &wrapped);
        self.tick(cycles);
    }
}
