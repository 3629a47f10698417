//! Montecito's events as the machine's signals drive them: what a selected event counts
//! in a cycle (the atoms a unit mask selects, chapter 4), and the mapped events'
//! facts; `table.rs` lists the rows (decisions MD... in docs/montecito-model.md).
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic))]

use super::bus::{self, Txn};
use super::cycle::{taken_indirect, taken_returns, Cause, Cycle};
use super::dispersal::Charges;
use super::frontend::{Front, Kind, FORCED_INDIRECT, FORCED_RETURNS};
use crate::stream::{L1dConflict, Signal};

/// Itanium L3 lines are 128 bytes; the MESI rule (MD13) reads the line number.
const LINE_SHIFT: u32 = 7;

/// §4.2.1 event types (Table 4-42 column T).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    /// A: happens only in the thread running in the pipeline, and belongs to it.
    Active,
    /// C: belongs to no thread; assigned to the thread in the foreground.
    Causal,
    /// F: belongs to a thread, and may happen while that thread is in the background.
    Floating,
    /// S: Floating with the .SELF unit mask (umask bits 1:0 = 10), Causal otherwise.
    SelfFloating,
}

impl EventType {
    pub fn letter(self) -> char {
        match self {
            EventType::Active => 'A',
            EventType::Causal => 'C',
            EventType::Floating => 'F',
            EventType::SelfFloating => 'S',
        }
    }
}

/// What one selected event counts in a cycle, from the cycle's signals.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Atom {
    /// One per cycle.
    Cycles,
    /// Cycles in which a signal that carries flags (`Signal::PrivilegeChange`,
    /// `Signal::L2iL3Rejects`, `Signal::BrqRejecting`) has one of these.
    AnyOf(Signal, u8),
    /// Cycles that give a capture unit (`capture::DEAR`, ...) an event.
    Captured(u8),
    /// A stream signal, per cycle.
    Sig(Signal),
    /// Cycles in which a signal (an occupancy) is not zero.
    Present(Signal),
    /// Cycles that retire no instruction (§4.6: CPU_OP_CYCLES = BACK_END_BUBBLE.all +
    /// cycles retiring at least one).
    NoRetire,
    /// A bubble cycle (no instruction retired) by its cause, each cycle counted under
    /// exactly one in §4.6's priority order (XPN, L1D/FPU, EXE, RSE, front end, BRU;
    /// MD37).
    Bubble(Cause),
    /// An L1D/FPU or EXE bubble cycle with this stall signal (their reasons are not
    /// prioritised among themselves, §4.6).
    L1dBubble(Signal),
    /// An L1D bubble the pipeline's conflict of this kind holds (MMC42, MMC44).
    L1dConflict(L1dConflict),
    ExeBubble(Signal),
    /// Syllables not dispersed in a cycle that dispersed some, as the hardware charges
    /// them (§4.4, MD38: `dispersal.rs`), for the reasons its bits select (`SYLL_*`),
    /// and what the charges of its EXPL and IMPL bits overcount (SYLL_OVERCOUNT).
    SyllablesNotDispersed(u8),
    SyllablesOvercounted(u8),
    /// Branches predicted correctly (outcome and target).
    CorrectBranches,
    /// What the atoms count in a cycle whose issue group has a branch on port B0
    /// (`Signal::EncodedBranches`; ENCBR_MISPRED_DETAIL, ERRATA MD41): all the
    /// cycle's branches are then its bundle's.
    Encoded(&'static [Atom]),
    /// IP-relative branches (all but returns and other indirect ones), and those whose
    /// path was predicted rightly; indirect branches predicted rightly.
    IpRelBranches,
    IpRelCorrect,
    IndirectCorrect,
    /// Branches (all: `All`, or IP-relative only) whose path was predicted rightly,
    /// taken or not (BR_PATH_PRED).
    PathRight {
        taken: bool,
        ip_relative: bool,
    },
    /// Returns or other indirect branches (`kind`) whose path was predicted rightly,
    /// taken or not (their predicate false, MMC40, MMC41): all but those forced to
    /// "predicted not taken" (§4.7) and the mispredicted predicated ones.
    PredicatedPathRight {
        kind: Kind,
        taken: bool,
    },
    /// Returns predicted correctly.
    CorrectReturns,
    /// L1D misses of reads (L1D is write-through: write misses are not counted).
    L1dReadMisses,
    /// Those of the RSE's fills: the misses of a cycle the RSE fills in (MMC17).
    RseFillMisses,
    /// Reads sent to the L2D: cacheable L1D read misses (integer loads), and FP loads,
    /// which the L1D does not serve (§4.15 L1D_READS_SET0).
    L2dReads,
    FpL2dReads,
    /// Writes sent to the L2D: every cacheable store (L1D is write-through); those of
    /// semaphores, and the rest.
    L2dWrites,
    CacheableAtomics,
    L2dStores,
    /// Cycles the L2D returns data to the core over its return ports: an integer
    /// load's the L1D missed, an FP load's or a semaphore's (MD59).
    L2dReturns,
    /// Cacheable data requests that miss the L2D (every miss misses every level).
    L2dMisses,
    /// Loads served by the L1D: cacheable integer loads and the RSE's fills; all
    /// integer loads.
    CacheableLoads,
    IntegerLoads,
    UncacheableLoads,
    UncacheableStores,
    /// Loads and stores issued to the memory pipeline, the RSE's included.
    DataReferences,
    /// ITLB misses that also miss the L2ITLB (a page walk).
    L2ItlbMisses,
    /// DTLB misses that also miss the L2DTLB (a page walk).
    L2DtlbMisses,
    /// L1DTLB misses that hit the L2DTLB.
    L1dtlbTransfers,
    /// This core's bus transactions of a type (`bus.rs`).
    Bus(Txn),
    /// Snoop answers (`bus.rs`).
    Snoop(bus::Answers, bus::Answer),
    /// An occupancy signal's bits 2:0, and its bits 4:3 (_LO and _HI events).
    Low(Signal),
    High(Signal),
    /// 1 when a signal is at least a value (a class carried as a signal's value).
    AtLeast(Signal, u8),
    /// The front end's losses and unknown predictions (`frontend.rs`).
    Front(Front),
}

impl Atom {
    /// The signal the atom reads when it is one of an event's own choosing. Every other
    /// atom reads signals of the core's pipeline, caches and branches that it names
    /// itself, never one of the system interface's occupancies
    /// (`machine::montecito::OCCUPANCIES`; `reads_occupancies` relies on it).
    pub(super) fn chosen(self) -> Option<Signal> {
        match self {
            Atom::Sig(s)
            | Atom::Present(s)
            | Atom::L1dBubble(s)
            | Atom::ExeBubble(s)
            | Atom::Low(s)
            | Atom::High(s)
            | Atom::AtLeast(s, _)
            | Atom::AnyOf(s, _) => Some(s),
            _ => None,
        }
    }

    /// Differences saturate: the machines keep each part within its whole (FP loads
    /// are loads), but a model embedded in an emulator may be fed any signals, and a
    /// difference that wrapped would count 2^64 (found by the `montecito_model` fuzz
    /// target).
    pub(super) fn value(self, c: &Cycle) -> u64 {
        use Signal::*;
        let when = |cond: bool, v: u64| if cond { v } else { 0 };
        match self {
            Atom::Cycles => 1,
            Atom::AnyOf(s, flags) => u64::from(c.get(s) & u64::from(flags) != 0),
            Atom::Captured(unit) => u64::from(c.captured & unit != 0),
            Atom::Sig(s) => c.get(s),
            Atom::Present(s) => u64::from(c.get(s) > 0),
            Atom::NoRetire => u64::from(c.get(Instructions) == 0),
            Atom::Bubble(cause) => u64::from(Cause::of(c) == Some(cause)),
            Atom::L1dBubble(s) => u64::from(Cause::of(c) == Some(Cause::L1dFpu) && c.get(s) > 0),
            Atom::L1dConflict(why) => u64::from(Cause::of(c) == Some(Cause::L1dFpu) && c.get(Signal::L1dConflict) == why as u64),
            Atom::ExeBubble(s) => u64::from(Cause::of(c) == Some(Cause::Exe) && c.get(s) > 0),
            Atom::SyllablesNotDispersed(reasons) => Charges::of(c).charged(reasons),
            Atom::SyllablesOvercounted(buckets) => Charges::of(c).overcount(buckets),
            Atom::CorrectBranches => c.get(Branches).saturating_sub(c.get(BranchMispredicts)),
            Atom::Encoded(atoms) => when(c.get(EncodedBranches) > 0, atoms.iter().map(|a| a.value(c)).sum()),
            Atom::IpRelBranches => c.get(Branches).saturating_sub(c.get(Returns) + c.get(IndirectBranches)),
            Atom::IpRelCorrect => c
                .get(Branches)
                .saturating_sub(c.get(Returns) + c.get(IndirectBranches))
                .saturating_sub(c.get(PathMispredictsTaken) + c.get(PathMispredictsNotTaken)),
            Atom::IndirectCorrect => c.get(IndirectBranches).saturating_sub(
                c.get(IndirectMispredicts)
                    + FORCED_INDIRECT.value(c)
                    + c.get(IndirectMispredictsTaken)
                    + c.get(IndirectMispredictsNotTaken),
            ),
            Atom::PathRight { taken, ip_relative } => {
                // Returns and other indirect branches are taken but for the predicated
                // ones whose predicate was false (MMC40, MMC41).
                let (all, wrong) = if taken {
                    // Forced returns and indirect branches (§4.7) are path mispredicts.
                    let all = c.get(BranchesTaken);
                    if ip_relative {
                        (all.saturating_sub(taken_returns(c) + taken_indirect(c)), c.get(PathMispredictsTaken))
                    } else {
                        let forced = FORCED_RETURNS.value(c) + FORCED_INDIRECT.value(c);
                        let predicated = c.get(ReturnMispredictsTaken) + c.get(IndirectMispredictsTaken);
                        (all, c.get(PathMispredictsTaken) + predicated + forced)
                    }
                } else {
                    let all = c.get(Branches).saturating_sub(c.get(BranchesTaken));
                    if ip_relative {
                        (all.saturating_sub(c.get(ReturnsNotTaken) + c.get(IndirectNotTaken)), c.get(PathMispredictsNotTaken))
                    } else {
                        let predicated = c.get(ReturnMispredictsNotTaken) + c.get(IndirectMispredictsNotTaken);
                        (all, c.get(PathMispredictsNotTaken) + predicated)
                    }
                };
                all.saturating_sub(wrong)
            }
            Atom::PredicatedPathRight { kind, taken } => {
                // The kind's branches, those whose predicate was false, and those
                // mispredicted taken and not taken.
                let [all, not_taken, wrong_taken, wrong_not_taken] = match kind {
                    Kind::Return => [Returns, ReturnsNotTaken, ReturnMispredictsTaken, ReturnMispredictsNotTaken],
                    _ => [IndirectBranches, IndirectNotTaken, IndirectMispredictsTaken, IndirectMispredictsNotTaken],
                };
                if taken {
                    let forced = Front::UnknownTaken(kind).value(c);
                    c.get(all).saturating_sub(c.get(not_taken)).saturating_sub(forced + c.get(wrong_taken))
                } else {
                    c.get(not_taken).saturating_sub(c.get(wrong_not_taken))
                }
            }
            Atom::CorrectReturns => c.get(Returns).saturating_sub(
                c.get(ReturnsMispredicted) + FORCED_RETURNS.value(c) + c.get(ReturnMispredictsTaken) + c.get(ReturnMispredictsNotTaken),
            ),
            Atom::L1dReadMisses => when(!c.write, c.get(DCacheMisses)),
            Atom::RseFillMisses => when(c.get(RseFillStallCycles) > 0, c.get(DCacheMisses)),
            // The machine counts only cacheable reads' L1D misses.
            Atom::L2dReads => when(!c.write, c.get(DCacheMisses)),
            Atom::FpL2dReads => c.get(FpLoads).saturating_sub(c.get(UncachedFpLoads)),
            Atom::L2dWrites => c.get(Stores).saturating_sub(c.get(UncachedStores)),
            Atom::CacheableAtomics => c.get(Atomics).saturating_sub(c.get(UncachedAtomics)),
            Atom::L2dReturns => u64::from(Atom::L2dReads.value(c) + Atom::FpL2dReads.value(c) + Atom::CacheableAtomics.value(c) > 0),
            Atom::L2dStores => {
                let uncached = c.get(UncachedStores).saturating_sub(c.get(UncachedAtomics));
                c.get(Stores).saturating_sub(c.get(Atomics)).saturating_sub(uncached)
            }
            Atom::L2dMisses => c.get(L2DataMisses),
            // The RSE's fills are L1D reads too, and its spills and fills data references
            // (§4.15 L1D_READS_SET0: "RSE loads"; DATA_REFERENCES: "RSE operations").
            Atom::CacheableLoads => {
                let uncached = c.get(UncachedLoads).saturating_sub(c.get(UncachedFpLoads));
                c.get(Loads).saturating_sub(c.get(FpLoads)).saturating_sub(uncached) + c.get(RseLoads)
            }
            Atom::IntegerLoads => c.get(Loads).saturating_sub(c.get(FpLoads)),
            Atom::UncacheableLoads => c.get(UncachedLoads),
            Atom::UncacheableStores => c.get(UncachedStores),
            Atom::DataReferences => c.get(Loads) + c.get(Stores) + c.get(RseLoads) + c.get(RseStores),
            Atom::L2ItlbMisses => c.get(ITlbMisses).min(c.get(MainTlbMisses)),
            Atom::L2DtlbMisses => c.get(DTlbMisses).min(c.get(MainTlbMisses)),
            Atom::L1dtlbTransfers => c.get(DTlbMisses) - c.get(DTlbMisses).min(c.get(MainTlbMisses)),
            Atom::Bus(txn) => txn.value(c),
            Atom::Snoop(who, answer) => bus::answers(who, answer, c),
            Atom::Low(s) => c.get(s) & 7,
            Atom::High(s) => c.get(s) >> 3,
            Atom::Front(f) => f.value(c),
            Atom::AtLeast(s, n) => u64::from(c.get(s) >= u64::from(n)),
        }
    }
}

/// One event of Table 4-42 that the model maps onto stream signals. Every other event
/// code counts zero (docs/montecito-model.md lists them).
pub struct MappedEvent {
    /// PMC.es (Table 4-42 "Event Code").
    pub code: u8,
    pub name: &'static str,
    /// Table 4-42 "Type" (corrected where the detailed description differs: MD26).
    pub ty: EventType,
    /// Table 4-42 "Max Inc/Cyc" (corrected where the detailed description differs:
    /// MD26): a cycle's value is clamped to it (MD11), unless it counts bus
    /// transactions.
    pub max_inc: u8,
    /// It counts the front-side bus's transactions, or their final snoop answers: the
    /// model makes a cycle's transactions in that cycle, where the bus takes each in a
    /// request phase (and a snoop phase) of its own, a bus clock apart, so every one
    /// counts and Max Inc/Cyc does not clamp them together (MD11).
    pub transactions: bool,
    /// Chapter 4 says "MESI filtering capability": PMC.MESI applies (Table 3-6).
    pub mesi: bool,
    /// How the unit mask names the agent whose transactions count (MD14).
    pub agent: Agent,
    /// "The .all field is ignored for this event. The event will count as if .all is
    /// set" (ME23).
    pub all: bool,
    /// The atoms a unit mask selects, summed; `None` counts nothing.
    pub(super) select: fn(u64) -> Option<&'static [Atom]>,
}

/// Where an event's unit mask selects the agent: the bus events' bits 1:0 (00 EITHER,
/// 01 IO, 10 SELF, 11 ANY; Tables 4-55 to 4-70) or the SI events' bit 0 (0 EITHER, 1
/// SELF; Tables 4-109 to 4-124); other events have none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agent {
    None,
    Bus,
    Si,
}

impl MappedEvent {
    /// The most a cycle's value adds (MD11).
    pub(super) fn clamp(&self) -> u64 {
        if self.transactions {
            u64::MAX
        } else {
            u64::from(self.max_inc)
        }
    }

    /// The type the event counts with under `umask`: a Self Floating event is Floating
    /// for SELF, Causal for EITHER, IO and ANY (MD14).
    pub(super) fn resolved_type(&self, umask: u64) -> EventType {
        let own = match self.agent {
            Agent::None => return self.ty,
            Agent::Bus => umask & 3 == 0b10,
            Agent::Si => umask & 1 == 1,
        };
        match self.ty {
            EventType::SelfFloating if own => EventType::Floating,
            EventType::SelfFloating => EventType::Causal,
            t => t,
        }
    }
}

/// MD13: the MESI state of the line at `addr`, as a PMC.MESI bit index: bits 8:7 of the
/// address (the 128-byte line number modulo 4), 0 I, 1 S, 2 E, 3 M.
pub fn line_state(addr: u64) -> u64 {
    (addr >> LINE_SHIFT) & 3
}
