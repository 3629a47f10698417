//! Montecito's events as the machine's signals drive them: which Table 4-42 rows the
//! model maps, and what each unit mask counts in a cycle (chapter 4; decisions MD... in
//! docs/montecito-model.md).

use pmukit_arch::montecito::pal;

use super::bus::{self, Txn};
use super::frontend::{self, Front, FORCED_INDIRECT, FORCED_RETURNS};
use super::CYCLES_HALTED;
use crate::stream::{Signal, Signals, Span};

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
    /// A stream signal, per cycle.
    Sig(Signal),
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
    ExeBubble(Signal),
    /// Syllables not dispersed in a cycle that dispersed some (6 minus those dispersed,
    /// §4.4; MD38), by reason: the unreached bundles' three each (FE), then the rest
    /// at an architected stop (EXPL) or else an implicit one (IMPL).
    SyllablesNotDispersed(Syllables),
    /// Branches predicted correctly (outcome and target).
    CorrectBranches,
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
    /// Returns, and other indirect branches, whose path (taken) was predicted: all
    /// but those forced to "predicted not taken" (§4.7).
    ReturnsPathRight,
    IndirectPathRight,
    /// Returns predicted correctly.
    CorrectReturns,
    /// L1D misses of reads (L1D is write-through: write misses are not counted).
    L1dReadMisses,
    /// Reads sent to the L2D: cacheable L1D read misses.
    L2dReads,
    /// Writes sent to the L2D: every cacheable store (L1D is write-through); those of
    /// semaphores, and the rest.
    L2dWrites,
    CacheableAtomics,
    L2dStores,
    /// Cacheable data requests that miss the L2D (every miss misses every level).
    L2dMisses,
    /// Loads served by the L1D: cacheable loads.
    CacheableLoads,
    UncacheableLoads,
    UncacheableStores,
    /// Loads and stores issued to the memory pipeline.
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
    /// L2D fills in the Exclusive state: those neither Modified nor Shared.
    ExclusiveFills,
    /// An occupancy signal's bits 2:0, and its bits 4:3 (_LO and _HI events).
    Low(Signal),
    High(Signal),
    /// 1 when a signal is at least a value (a class carried as a signal's value).
    AtLeast(Signal, u8),
    /// The front end's losses and unknown predictions (`frontend.rs`).
    Front(Front),
}

/// Why syllables were not dispersed (SYLL_NOT_DISPERSED's reasons, Table 4-126).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Syllables {
    Explicit,
    Implicit,
    FrontEnd,
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
        } else if c.get(LsuFullStallCycles) > 0 {
            Cause::L1dFpu
        } else if c.get(DataDepStallCycles) + c.get(FrDepStallCycles) + c.get(ArCrStallCycles) > 0 {
            Cause::Exe
        } else if c.get(RseSpillStallCycles) + c.get(RseFillStallCycles) > 0 {
            Cause::Rse
        } else if c.get(IBufStallCycles) > 0 {
            Cause::FrontEnd
        } else {
            Cause::Bru
        })
    }
}

/// Syllables Montecito disperses per cycle: two bundles of three (§4.4).
const DISPERSAL_WIDTH: u64 = 6;

/// One cycle as a counter sees it: the signals, whether the data reference writes, and
/// the MESI state of the line the cycle's events concern (`None`: unknown).
pub(super) struct Cycle<'a> {
    pub(super) signals: &'a Signals,
    pub(super) write: bool,
    pub(super) state: Option<u64>,
}

impl Cycle<'_> {
    pub(super) fn get(&self, s: Signal) -> u64 {
        self.signals.get(s)
    }

    /// A cycle without a data access, or whose access is cacheable.
    fn cacheable(&self) -> bool {
        self.get(Signal::DCacheAccesses) == 0 || self.get(Signal::DCacheAccessesCacheable) > 0
    }
}

impl Atom {
    pub(super) fn value(self, c: &Cycle) -> u64 {
        use Signal::*;
        let when = |cond: bool, v: u64| if cond { v } else { 0 };
        match self {
            Atom::Cycles => 1,
            Atom::Sig(s) => c.get(s),
            Atom::NoRetire => u64::from(c.get(Instructions) == 0),
            Atom::Bubble(cause) => u64::from(Cause::of(c) == Some(cause)),
            Atom::L1dBubble(s) => u64::from(Cause::of(c) == Some(Cause::L1dFpu) && c.get(s) > 0),
            Atom::ExeBubble(s) => u64::from(Cause::of(c) == Some(Cause::Exe) && c.get(s) > 0),
            Atom::SyllablesNotDispersed(why) => {
                let lost = match c.get(Instructions) {
                    0 => 0,
                    i => DISPERSAL_WIDTH.saturating_sub(i),
                };
                let fe = (3 * c.get(UnreachedBundles)).min(lost);
                let expl = if c.get(ExplicitStops) > 0 { lost - fe } else { 0 };
                match why {
                    Syllables::FrontEnd => fe,
                    Syllables::Explicit => expl,
                    Syllables::Implicit => lost - fe - expl,
                }
            }
            Atom::CorrectBranches => c.get(Branches).saturating_sub(c.get(BranchMispredicts)),
            Atom::IpRelBranches => c.get(Branches).saturating_sub(c.get(Returns) + c.get(IndirectBranches)),
            Atom::IpRelCorrect => c
                .get(Branches)
                .saturating_sub(c.get(Returns) + c.get(IndirectBranches))
                .saturating_sub(c.get(PathMispredictsTaken) + c.get(PathMispredictsNotTaken)),
            Atom::IndirectCorrect => c.get(IndirectBranches).saturating_sub(c.get(IndirectMispredicts) + FORCED_INDIRECT.value(c)),
            Atom::PathRight { taken, ip_relative } => {
                // Returns and other indirect branches are taken, their path predicted.
                let indirect = if ip_relative { c.get(Returns) + c.get(IndirectBranches) } else { 0 };
                let (all, wrong) = if taken {
                    // Forced returns and indirect branches (§4.7) are path mispredicts.
                    let forced = if ip_relative { 0 } else { FORCED_RETURNS.value(c) + FORCED_INDIRECT.value(c) };
                    (c.get(BranchesTaken), c.get(PathMispredictsTaken) + forced)
                } else {
                    (c.get(Branches).saturating_sub(c.get(BranchesTaken)), c.get(PathMispredictsNotTaken))
                };
                all.saturating_sub(if taken { indirect } else { 0 }).saturating_sub(wrong)
            }
            Atom::ReturnsPathRight => c.get(Returns) - FORCED_RETURNS.value(c),
            Atom::IndirectPathRight => c.get(IndirectBranches) - FORCED_INDIRECT.value(c),
            Atom::CorrectReturns => c.get(Returns).saturating_sub(c.get(ReturnsMispredicted) + FORCED_RETURNS.value(c)),
            Atom::L1dReadMisses => when(!c.write, c.get(DCacheMisses)),
            Atom::L2dReads => when(!c.write && c.cacheable(), c.get(DCacheMisses)),
            Atom::L2dWrites => when(c.cacheable(), c.get(Stores)),
            Atom::CacheableAtomics => when(c.cacheable(), c.get(Atomics)),
            Atom::L2dStores => when(c.cacheable(), c.get(Stores).saturating_sub(c.get(Atomics))),
            Atom::L2dMisses => c.get(L2DataMisses),
            Atom::CacheableLoads => when(c.cacheable(), c.get(Loads)),
            Atom::UncacheableLoads => when(!c.cacheable(), c.get(Loads)),
            Atom::UncacheableStores => when(!c.cacheable(), c.get(Stores)),
            Atom::DataReferences => c.get(Loads) + c.get(Stores),
            Atom::L2ItlbMisses => c.get(ITlbMisses).min(c.get(MainTlbMisses)),
            Atom::L2DtlbMisses => c.get(DTlbMisses).min(c.get(MainTlbMisses)),
            Atom::L1dtlbTransfers => c.get(DTlbMisses) - c.get(DTlbMisses).min(c.get(MainTlbMisses)),
            Atom::Bus(txn) => txn.value(c),
            Atom::Snoop(who, answer) => bus::answers(who, answer, c),
            Atom::Low(s) => c.get(s) & 7,
            Atom::High(s) => c.get(s) >> 3,
            Atom::ExclusiveFills => c.get(L2DataMisses).saturating_sub(c.get(L2dFillsModified) + c.get(L2dFillsShared)),
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
    /// MD26): a cycle's value is clamped to it (MD11).
    pub max_inc: u8,
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

use Atom::Sig;
use EventType::{Active as A, Causal as C, Floating as F, SelfFloating as S};

impl MappedEvent {
    /// The type the event counts with under `umask`: a Self Floating event is Floating
    /// for SELF, Causal for EITHER and ANY; a bus event's IO agent, the non-CPU agents
    /// the machine does not have, counts nothing (MD14).
    pub(super) fn resolved_type(&self, umask: u64) -> Option<EventType> {
        let own = match self.agent {
            Agent::None => return Some(self.ty),
            Agent::Bus if umask & 3 == 0b01 => return None,
            Agent::Bus => umask & 3 == 0b10,
            Agent::Si => umask & 1 == 1,
        };
        Some(match self.ty {
            EventType::SelfFloating if own => EventType::Floating,
            EventType::SelfFloating => EventType::Causal,
            t => t,
        })
    }
}

const fn ev(code: u8, name: &'static str, ty: EventType, max_inc: u8, select: fn(u64) -> Option<&'static [Atom]>) -> MappedEvent {
    MappedEvent { code, name, ty, max_inc, mesi: false, agent: Agent::None, all: false, select }
}

/// An event that counts both threads' whatever .all says (ME23).
const fn always_all(mut e: MappedEvent) -> MappedEvent {
    e.all = true;
    e
}

/// A bus event: its unit mask's bits 1:0 name the agent.
const fn bus(mut e: MappedEvent) -> MappedEvent {
    e.agent = Agent::Bus;
    e
}

/// A system-interface event: its unit mask's bit 0 names the agent.
const fn si(mut e: MappedEvent) -> MappedEvent {
    e.agent = Agent::Si;
    e
}

const fn mesi(mut e: MappedEvent) -> MappedEvent {
    e.mesi = true;
    e
}

/// L3_READS / L3_WRITES unit masks: bits 1:0 are 01 HIT, 10 MISS, 11 ALL (00 nothing).
/// The stream has no L3 hits (every miss misses every level): HIT counts nothing and
/// MISS and ALL count the same.
/// L3 lookups by kind and outcome, for L3_READS' unit masks.
const L3_IH: Atom = Sig(Signal::L3InstructionHits);
const L3_IM: Atom = Sig(Signal::L3InstructionMisses);
const L3_DH: Atom = Sig(Signal::L3DataReadHits);
const L3_DM: Atom = Sig(Signal::L3DataReadMisses);
/// Reads for ownership: a store's or semaphore's L2D allocation (L3_WRITES.DATA_WRITE).
const L3_SH: Atom = Sig(Signal::StoresHitL3);
const L3_SM: Atom = Sig(Signal::StoresLocalMemory);
const L2I_HIT: Atom = Sig(Signal::L2InstructionHits);
/// The instruction prefetcher's L2I hits and misses, and its L3 lookups (MMC21).
const L2I_PH: Atom = Sig(Signal::L2iPrefetchHits);
const L2I_PM: Atom = Sig(Signal::L2iPrefetchMisses);
const L3_PH: Atom = Sig(Signal::L3InstructionPrefetchHits);
const L3_PM: Atom = Sig(Signal::L3InstructionPrefetchMisses);

/// Table 4-42 rows the stream drives, by event code. docs/montecito-model.md has the
/// same table with the reasons.
pub static EVENTS: &[MappedEvent] = &[
    // BACK_END_BUBBLE (bxx00 ALL, bxx01 FE, bxx10 L1D_FPU_RSE): every cycle with a
    // bubble, i.e. no instruction retired, or those of one cause (MD37).
    ev(0x00, "BACK_END_BUBBLE", A, 1, |u| match u & 3 {
        0b00 => Some(&[Atom::NoRetire]),
        0b01 => Some(&[Atom::Bubble(Cause::FrontEnd)]),
        0b10 => Some(&[Atom::Bubble(Cause::L1dFpu)]),
        _ => None,
    }),
    // BE_RSE_BUBBLE: ALL, OVERFLOW (spills), UNDERFLOW (fills); bank switches, AR
    // dependencies and loadrs do not happen in the machine's programs.
    ev(0x01, "BE_RSE_BUBBLE", A, 1, |u| match u & 7 {
        0b000 => Some(&[Atom::Bubble(Cause::Rse)]),
        0b011 => Some(&[Sig(Signal::RseSpillStallCycles)]),
        0b100 => Some(&[Sig(Signal::RseFillStallCycles)]),
        _ => None,
    }),
    // BE_EXE_BUBBLE: ALL; GRALL (a general register's value), FRALL (a floating-point
    // register's: an FP divide), ARCR and ARCR_PR_CANCEL_BANK (a control register's,
    // MMC20); predicates, cancelled loads and bank switches are not in the stream.
    ev(0x02, "BE_EXE_BUBBLE", A, 1, |u| match u {
        0b0000 => Some(&[Atom::Bubble(Cause::Exe)]),
        0b0001 => Some(&[Atom::ExeBubble(Signal::DataDepStallCycles)]),
        0b0010 => Some(&[Atom::ExeBubble(Signal::FrDepStallCycles)]),
        0b0100 | 0b1000 => Some(&[Atom::ExeBubble(Signal::ArCrStallCycles)]),
        _ => None,
    }),
    // BE_FLUSH_BUBBLE: bxx00 ALL, bxx01 BRU (a mispredict's refill), bxx10 XPN (traps
    // and thread switches, Table 4-47).
    ev(0x04, "BE_FLUSH_BUBBLE", A, 1, |u| match u & 3 {
        0b00 => Some(&[Atom::Bubble(Cause::Xpn), Atom::Bubble(Cause::Bru)]),
        0b01 => Some(&[Atom::Bubble(Cause::Bru)]),
        0b10 => Some(&[Atom::Bubble(Cause::Xpn)]),
        _ => None,
    }),
    // IA64_INST_RETIRED (umask bxx00) and IA64_TAGGED_INST_RETIRED (IBRP0-3): the tags
    // are not modelled; at their reset values every instruction matches (MD16).
    ev(0x08, "IA64_INST_RETIRED", A, 6, |_| Some(&[Sig(Signal::Instructions)])),
    // FP_OPS_RETIRED: the machine's floating-point instructions.
    ev(0x09, "FP_OPS_RETIRED", A, 6, |_| Some(&[Sig(Signal::FguCryptoInstructions)])),
    // THREAD_SWITCH_EVENTS: MISSED (L3 misses the urgencies did not switch on, MD45),
    // L3MISS, TIMER and ALL ("all taken"); hint, low-power and debug switches do not
    // happen in the machine.
    ev(0x0c, "THREAD_SWITCH_EVENTS", A, 1, |u| match u & 7 {
        0b000 => Some(&[Sig(Signal::ThreadSwitchesMissed)]),
        0b001 => Some(&[Sig(Signal::ThreadSwitchesL3Miss)]),
        0b010 => Some(&[Sig(Signal::ThreadSwitchesTimeout)]),
        0b111 => Some(&[Sig(Signal::ThreadSwitchesL3Miss), Sig(Signal::ThreadSwitchesTimeout)]),
        _ => None,
    }),
    // THREAD_SWITCH_CYCLE: TOTAL, from a switch's start until it happens.
    ev(0x0e, "THREAD_SWITCH_CYCLE", A, 1, |u| match u & 7 {
        0b111 => Some(&[Sig(Signal::ThreadSwitchCycles)]),
        _ => None,
    }),
    // THREAD_SWITCH_STALL: switches after at least 4 (any), 8, …, 4096 cycles without
    // a retirement (MD44); umask j is class j + 1 or more.
    ev(0x0f, "THREAD_SWITCH_STALL", A, 1, |u| {
        const AT: [[Atom; 1]; 11] = {
            let mut at = [[Atom::Cycles]; 11];
            let mut j = 0;
            while j < 11 {
                at[j] = [Atom::AtLeast(Signal::ThreadSwitchStall, j as u8 + 1)];
                j += 1;
            }
            at
        };
        AT.get(u as usize).map(|a| a.as_slice())
    }),
    // BRANCH_EVENT: the ETB (PMC39) is not modelled; every branch is captured (MD17).
    ev(0x11, "BRANCH_EVENT", A, 1, |_| Some(&[Sig(Signal::Branches)])),
    // CPU_OP_CYCLES: ALL and QUAL (qualification not modelled, MD16).
    ev(pal::CPU_OP_CYCLES, "CPU_OP_CYCLES", C, 1, |_| Some(&[Atom::Cycles])),
    // CPU_CPL_CHANGES: changes to or from level 0 or 3 (the programs' only levels)
    // count under LVL0, LVL3 and ALL; LVL1 and LVL2 see none.
    ev(0x13, "CPU_CPL_CHANGES", A, 1, |u| match u & 0b1001 {
        0 => None,
        _ => Some(&[Sig(Signal::PrivilegeChanges)]),
    }),
    // CPU_OP_CYCLES_HALTED: the stream has no halted cycles. Max 1, not 7 (MD26).
    ev(CYCLES_HALTED, "CPU_OP_CYCLES_HALTED", C, 1, |_| None),
    // RSE_REFERENCES_RETIRED: LOAD (fills), STORE (spills), ALL.
    ev(0x20, "RSE_REFERENCES_RETIRED", A, 2, |u| match u & 3 {
        0b01 => Some(&[Sig(Signal::RseLoads)]),
        0b10 => Some(&[Sig(Signal::RseStores)]),
        0b11 => Some(&[Sig(Signal::RseLoads), Sig(Signal::RseStores)]),
        _ => None,
    }),
    // HPW_DATA_REFERENCES: one VHPT reference per walk, instruction or data.
    // RSE_DIRTY_REGS_6/_5_TO_3/_2_TO_0 and RSE_CURRENT_REGS_6/_5_TO_3/_2_TO_0: the
    // register stack's dirty and current registers as each call or return retires,
    // by bits (their sum over RSE_EVENT_RETIRED is the average, Table 4-41).
    ev(0x24, "RSE_DIRTY_REGS_6", A, 1, |_| Some(&[Sig(Signal::RseDirtyHigh)])),
    ev(0x26, "RSE_CURRENT_REGS_6", A, 1, |_| Some(&[Sig(Signal::RseCurrentHigh)])),
    ev(0x28, "RSE_DIRTY_REGS_5_TO_3", A, 7, |_| Some(&[Sig(Signal::RseDirtyMid)])),
    ev(0x29, "RSE_DIRTY_REGS_2_TO_0", A, 7, |_| Some(&[Sig(Signal::RseDirtyLow)])),
    ev(0x2a, "RSE_CURRENT_REGS_5_TO_3", A, 7, |_| Some(&[Sig(Signal::RseCurrentMid)])),
    ev(0x2b, "RSE_CURRENT_REGS_2_TO_0", A, 7, |_| Some(&[Sig(Signal::RseCurrentLow)])),
    ev(0x2d, "HPW_DATA_REFERENCES", A, 4, |_| Some(&[Sig(Signal::MainTlbMisses)])),
    // RSE_EVENT_RETIRED: the instructions that move the register stack frame, calls
    // and returns (alloc is part of the call in the machine's programs).
    ev(0x32, "RSE_EVENT_RETIRED", A, 1, |_| Some(&[Sig(Signal::Calls), Sig(Signal::Returns)])),
    // L1I_READS: demand fetches from a new line, hit or miss.
    ev(0x40, "L1I_READS", A, 1, |_| Some(&[Sig(Signal::ICacheReads)])),
    // L1I_FILLS: "line fills from ISB to the L1 Instruction Cache": every L1I miss,
    // served by the L2I and beyond or by the streaming buffer (MMC19), and every
    // prefetched line (MMC21).
    ev(0x41, "L1I_FILLS", F, 1, |_| Some(&[Sig(Signal::ICacheMisses), Sig(Signal::IsbHits), L2I_PH, L2I_PM])),
    ev(0x42, "L2I_DEMAND_READS", A, 1, |_| Some(&[Sig(Signal::ICacheMisses)])),
    // L1I_PREFETCHES: every request of the next-line prefetcher, "hits and misses in L1
    // Instruction Cache are both included"; L2I_PREFETCHES: those sent to the L2I
    // (MMC21).
    ev(0x44, "L1I_PREFETCHES", A, 1, |_| Some(&[Sig(Signal::L1iPrefetches)])),
    ev(0x45, "L2I_PREFETCHES", A, 1, |_| Some(&[L2I_PH, L2I_PM])),
    // ISB_BUNPAIRS_IN: 32-byte bundle pairs written into the streaming buffer.
    ev(0x46, "ISB_BUNPAIRS_IN", F, 1, |_| Some(&[Sig(Signal::IsbBundlePairsIn)])),
    // ITLB_MISSES_FETCH: 01 L1ITLB, 10 L2ITLB, 11 ALL (every L2ITLB miss missed the L1ITLB).
    ev(0x47, "ITLB_MISSES_FETCH", A, 1, |u| match u & 3 {
        0b01 | 0b11 => Some(&[Sig(Signal::ITlbMisses)]),
        0b10 => Some(&[Atom::L2ItlbMisses]),
        _ => None,
    }),
    ev(0x48, "L1ITLB_INSERTS_HPW", A, 1, |_| Some(&[Atom::L2ItlbMisses])),
    // §4.4 dispersal: a cycle disperses what it retires (MD38); a cycle that disperses
    // nothing is a dispersal stall.
    ev(0x49, "DISP_STALLED", A, 1, |_| Some(&[Atom::NoRetire])),
    // L1I_PURGE: "inserts into L2ITLB" (every L2ITLB miss inserts); the programs issue
    // no purges (MD42).
    ev(0x4b, "L1I_PURGE", C, 1, |_| Some(&[Atom::L2ItlbMisses])),
    ev(0x4d, "INST_DISPERSED", A, 6, |_| Some(&[Sig(Signal::Instructions)])),
    // SYLL_NOT_DISPERSED: any combination of EXPL (bit 0), IMPL (bit 1), FE (bit 2) and
    // MLX (bit 3, none: no MLX templates) counts the union of its reasons (MD38).
    ev(0x4e, "SYLL_NOT_DISPERSED", A, 5, |u| {
        const E: Atom = Atom::SyllablesNotDispersed(Syllables::Explicit);
        const I: Atom = Atom::SyllablesNotDispersed(Syllables::Implicit);
        const F: Atom = Atom::SyllablesNotDispersed(Syllables::FrontEnd);
        match u & 0b0111 {
            0b001 => Some(&[E]),
            0b010 => Some(&[I]),
            0b011 => Some(&[E, I]),
            0b100 => Some(&[F]),
            0b101 => Some(&[E, F]),
            0b110 => Some(&[I, F]),
            0b111 => Some(&[E, I, F]),
            _ => None,
        }
    }),
    // SYLL_OVERCOUNT: no bundle is dispersed twice in the stream.
    ev(0x4f, "SYLL_OVERCOUNT", A, 2, |_| None),
    // BR_PATH_PRED: bits 3:2 branch type (ALL, IPREL, RETURN, NRETIND), bits 1:0 the
    // path outcome (MISPRED_NOTTAKEN, MISPRED_TAKEN, OKPRED_NOTTAKEN, OKPRED_TAKEN).
    // Returns and other indirect branches are always taken and predicted taken, but
    // for those forced to "predicted not taken" (§4.7, MD40); their other misses are
    // wrong targets (BR_MISPRED_DETAIL).
    ev(0x54, "BR_PATH_PRED", A, 3, |u| match (u >> 2 & 3, u & 3) {
        (0b00 | 0b01, 0b00) => Some(&[Sig(Signal::PathMispredictsNotTaken)]),
        (0b00, 0b01) => Some(&[Sig(Signal::PathMispredictsTaken), FORCED_RETURNS, FORCED_INDIRECT]),
        (0b01, 0b01) => Some(&[Sig(Signal::PathMispredictsTaken)]),
        (0b00, 0b10) => Some(&[Atom::PathRight { taken: false, ip_relative: false }]),
        (0b00, 0b11) => Some(&[Atom::PathRight { taken: true, ip_relative: false }]),
        (0b01, 0b10) => Some(&[Atom::PathRight { taken: false, ip_relative: true }]),
        (0b01, 0b11) => Some(&[Atom::PathRight { taken: true, ip_relative: true }]),
        (0b10, 0b01) => Some(&[FORCED_RETURNS]),
        (0b10, 0b11) => Some(&[Atom::ReturnsPathRight]),
        (0b11, 0b01) => Some(&[FORCED_INDIRECT]),
        (0b11, 0b11) => Some(&[Atom::IndirectPathRight]),
        _ => None,
    }),
    // BR_MISPRED_DETAIL: bits 3:2 branch type (ALL, IPREL, RETURN, NRETIND), bits 1:0
    // prediction result (ALL_PRED, CORRECT_PRED, WRONG_PATH, WRONG_TARGET) (MD18).
    ev(0x5b, "BR_MISPRED_DETAIL", A, 3, |u| match (u >> 2 & 3, u & 3) {
        (0b00, 0b00) => Some(&[Sig(Signal::Branches)]),
        (0b00, 0b01) => Some(&[Atom::CorrectBranches]),
        (0b00, 0b10) => Some(&[Sig(Signal::PathMispredictsTaken), Sig(Signal::PathMispredictsNotTaken), FORCED_RETURNS, FORCED_INDIRECT]),
        (0b01, 0b10) => Some(&[Sig(Signal::PathMispredictsTaken), Sig(Signal::PathMispredictsNotTaken)]),
        (0b00, 0b11) => Some(&[Sig(Signal::ReturnsMispredicted), Sig(Signal::IndirectMispredicts)]),
        (0b01, 0b00) => Some(&[Atom::IpRelBranches]),
        (0b01, 0b01) => Some(&[Atom::IpRelCorrect]),
        (0b10, 0b00) => Some(&[Sig(Signal::Returns)]),
        (0b10, 0b01) => Some(&[Atom::CorrectReturns]),
        (0b10, 0b10) => Some(&[FORCED_RETURNS]),
        (0b10, 0b11) => Some(&[Sig(Signal::ReturnsMispredicted)]),
        (0b11, 0b00) => Some(&[Sig(Signal::IndirectBranches)]),
        (0b11, 0b01) => Some(&[Atom::IndirectCorrect]),
        (0b11, 0b10) => Some(&[FORCED_INDIRECT]),
        (0b11, 0b11) => Some(&[Sig(Signal::IndirectMispredicts)]),
        // IP-relative targets are never wrong.
        _ => None,
    }),
    // ENCBR_MISPRED_DETAIL: branches "only if there is a branch on port B0": with no
    // templates modelled, the first branch of every group is on B0 (MD41). 00xx and
    // 11xx (ALL, ALL2) are BR_MISPRED_DETAIL's ALL rows; 01xx counts nothing; 10xx
    // OVERSUB: the machine never oversubscribes the branch ports.
    ev(0x63, "ENCBR_MISPRED_DETAIL", A, 3, |u| match u >> 2 & 3 {
        0b00 | 0b11 => mapped_event(0x5b).and_then(|e| (e.select)(u & 3)),
        _ => None,
    }),
    // L1I_FETCH_ISB_HIT: fetches bypassed from the streaming buffer, all "just in
    // time" (the line is there when fetched, MMC19).
    ev(0x66, "L1I_FETCH_ISB_HIT", A, 1, |_| Some(&[Sig(Signal::IsbHits)])),
    ev(0x68, "BR_MISPRED_DETAIL2", A, 2, frontend::br_mispred_detail2),
    ev(0x6a, "BR_PATH_PRED2", A, 2, frontend::br_path_pred2),
    // The front end's stalls by cause (§4.6, MD39).
    ev(0x70, "FE_LOST_BW", A, 2, frontend::fe_lost_bw),
    ev(0x71, "FE_BUBBLE", A, 1, frontend::fe_bubble),
    ev(0x72, "BE_LOST_BW_DUE_TO_FE", A, 2, frontend::be_lost_bw),
    ev(0x73, "IDEAL_BE_LOST_BW_DUE_TO_FE", A, 2, frontend::ideal_be_lost_bw),
    // L2I_READS bits 3:2: 01 HIT, 10 MISS, 11 ALL; bits 1:0: 01 demand, 10 prefetch,
    // 11 all. A demand miss is an L3 lookup.
    ev(0x78, "L2I_READS", F, 1, |u| match (u >> 2 & 3, u & 3) {
        (0b01, 0b01) => Some(&[L2I_HIT]),
        (0b01, 0b10) => Some(&[L2I_PH]),
        (0b01, 0b11) => Some(&[L2I_HIT, L2I_PH]),
        (0b10, 0b01) => Some(&[L3_IH, L3_IM]),
        (0b10, 0b10) => Some(&[L2I_PM]),
        (0b10, 0b11) => Some(&[L3_IH, L3_IM, L2I_PM]),
        (0b11, 0b01) => Some(&[L2I_HIT, L3_IH, L3_IM]),
        (0b11, 0b10) => Some(&[L2I_PH, L2I_PM]),
        (0b11, 0b11) => Some(&[L2I_HIT, L3_IH, L3_IM, L2I_PH, L2I_PM]),
        _ => None,
    }),
    // System bus and system interface events (§4.11, `bus.rs`; MD14, MD15, MD46).
    // 0x82 BUS_RD_INVALID_HITM (BIL and HITM) cannot happen: a BIL upgrades a shared
    // line, which no other core holds modified.
    bus(ev(0x80, "BUS_RD_HIT", S, 1, bus::bus_rd_hit)),
    bus(ev(0x81, "BUS_RD_HITM", S, 1, bus::bus_rd_hitm)),
    bus(ev(0x83, "BUS_RD_INVALID_BST_HITM", S, 1, bus::bus_rd_invalid_bst_hitm)),
    bus(ev(0x84, "BUS_HITM", S, 1, bus::bus_hitm)),
    bus(ev(0x87, "BUS_ALL", S, 1, bus::bus_all)),
    bus(ev(0x88, "BUS_DATA_CYCLE", C, 1, bus::bus_data_cycle)),
    bus(ev(0x8a, "BUS_MEMORY", S, 1, bus::bus_memory)),
    bus(ev(0x8b, "BUS_MEM_READ", S, 1, bus::bus_mem_read)),
    bus(ev(0x8c, "BUS_RD_DATA", S, 1, bus::bus_rd_data)),
    bus(ev(0x8d, "BUS_RD_PRTL", S, 1, bus::bus_rd_prtl)),
    // SI_CYCLES: the SI clock is the core's (bus ratio × bus clock).
    ev(0x8e, "SI_CYCLES", C, 1, |_| Some(&[Atom::Cycles])),
    bus(ev(0x8f, "BUS_SNOOP_STALL_CYCLES", S, 1, bus::bus_snoop_stall_cycles)),
    bus(ev(0x92, "BUS_WR_WB", S, 1, bus::bus_wr_wb)),
    bus(ev(0x93, "BUS_B2B_DATA_CYCLES", C, 1, bus::bus_b2b_data_cycles)),
    ev(0x97, "SI_IOQ_LIVE_REQ_LO", C, 7, bus::si_ioq_live_lo),
    ev(0x98, "SI_IOQ_LIVE_REQ_HI", C, 1, bus::si_ioq_live_hi),
    si(ev(0x9e, "SI_RQ_INSERTS", S, 2, bus::si_rq_inserts)),
    si(ev(0x9f, "SI_RQ_LIVE_REQ_LO", C, 7, bus::si_rq_live_lo)),
    si(ev(0xa0, "SI_RQ_LIVE_REQ_HI", C, 1, bus::si_rq_live_hi)),
    si(ev(0xa1, "SI_WRITEQ_INSERTS", S, 2, bus::si_writeq_inserts)),
    si(ev(0xa2, "SI_WRITEQ_LIVE_REQ_LO", C, 7, bus::si_writeq_live_lo)),
    si(ev(0xa3, "SI_WRITEQ_LIVE_REQ_HI", C, 1, bus::si_writeq_live_hi)),
    si(ev(0xa5, "SI_CCQ_INSERTS", S, 2, bus::si_ccq_inserts)),
    si(ev(0xa6, "SI_CCQ_LIVE_REQ_LO", C, 7, bus::si_ccq_live_lo)),
    si(ev(0xa7, "SI_CCQ_LIVE_REQ_HI", C, 1, bus::si_ccq_live_hi)),
    si(ev(0xab, "SI_SCB_INSERTS", C, 1, bus::si_scb_inserts)),
    si(ev(0xac, "SI_SCB_LIVE_REQ_LO", C, 7, bus::si_scb_live_lo)),
    si(ev(0xad, "SI_SCB_LIVE_REQ_HI", C, 1, bus::si_scb_live_hi)),
    ev(0xae, "SI_SCB_SIGNOFFS", C, 1, bus::si_scb_signoffs),
    // L2D_INSERT_MISSES / L2D_INSERT_HITS: the L2D's first lookups, missing or
    // hitting (the machine has no secondary misses or recirculation).
    ev(0xb0, "L2D_INSERT_MISSES", F, 4, |_| Some(&[Sig(Signal::L2DataMisses)])),
    ev(0xb1, "L2D_INSERT_HITS", F, 4, |_| Some(&[Sig(Signal::L2DataHits)])),
    ev(0xb4, "ER_MEM_READ_OUT_HI", F, 2, bus::er_mem_read_out_hi),
    ev(0xb5, "ER_MEM_READ_OUT_LO", F, 7, bus::er_mem_read_out_lo),
    always_all(ev(0xb6, "ER_SNOOPQ_REQ_HI", C, 1, bus::er_snoopq_hi)),
    always_all(ev(0xb7, "ER_SNOOPQ_REQ_LO", C, 7, bus::er_snoopq_lo)),
    always_all(ev(0xb8, "ER_BRQ_LIVE_REQ_HI", C, 2, bus::er_brq_live_hi)),
    always_all(ev(0xb9, "ER_BRQ_LIVE_REQ_LO", C, 7, bus::er_brq_live_lo)),
    ev(0xba, "ER_BRQ_REQ_INSERTED", F, 1, bus::er_brq_req_inserted),
    ev(0xc0, "L1DTLB_TRANSFER", A, 1, |_| Some(&[Atom::L1dtlbTransfers])),
    ev(0xc1, "L2DTLB_MISSES", A, 4, |_| Some(&[Atom::L2DtlbMisses])),
    ev(0xc2, "L1D_READS_SET0", A, 2, |_| Some(&[Atom::CacheableLoads])),
    ev(0xc3, "DATA_REFERENCES_SET0", A, 4, |_| Some(&[Atom::DataReferences])),
    ev(0xc4, "L1D_READS_SET1", A, 2, |_| Some(&[Atom::CacheableLoads])),
    ev(0xc5, "DATA_REFERENCES_SET1", A, 4, |_| Some(&[Atom::DataReferences])),
    // L1D_READ_MISSES: bit 0 = 0 ALL, 1 RSE_FILL (the stream has no RSE).
    ev(0xc7, "L1D_READ_MISSES", A, 2, |u| match u & 1 {
        0 => Some(&[Atom::L1dReadMisses]),
        _ => None,
    }),
    // DTLB_INSERTS_HPW: every L2DTLB miss is walked and inserted by the HPW.
    ev(0xc9, "DTLB_INSERTS_HPW", F, 4, |_| Some(&[Atom::L2DtlbMisses])),
    // BE_L1D_FPU_BUBBLE: ALL and L1D (an LSU-full stall), of which L1D_HPW (the page
    // walker) and L1D_TLB (an L2DTLB to L1DTLB transfer); FPU and the other L1D
    // reasons are not in the stream.
    ev(0xca, "BE_L1D_FPU_BUBBLE", A, 1, |u| match u {
        0b0000 | 0b0010 => Some(&[Atom::Bubble(Cause::L1dFpu)]),
        0b0101 => Some(&[Atom::L1dBubble(Signal::HpwStallCycles)]),
        0b1010 => Some(&[Atom::L1dBubble(Signal::DTlbMissWaitCycles)]),
        _ => None,
    }),
    // L2D_MISSES: Table 4-42 leaves its type blank; the description says F (MD26).
    ev(0xcb, "L2D_MISSES", F, 1, |_| Some(&[Atom::L2dMisses])),
    ev(0xcd, "LOADS_RETIRED", A, 4, |_| Some(&[Sig(Signal::Loads)])),
    ev(0xcf, "UC_LOADS_RETIRED", A, 4, |_| Some(&[Atom::UncacheableLoads])),
    ev(0xd0, "UC_STORES_RETIRED", A, 2, |_| Some(&[Atom::UncacheableStores])),
    ev(0xd1, "STORES_RETIRED", A, 2, |_| Some(&[Sig(Signal::Stores)])),
    // L3 events from the machine's L3 lookups: instruction fetches from the L2I, data
    // reads from the L2D (a miss switching threads counts in the background, MD12),
    // and the L2D's write-backs. Inserts are the lookups that missed and allocated.
    mesi(ev(0xda, "L3_INSERTS", F, 1, |_| Some(&[L3_IM, L3_PM, L3_DM, L3_SM, Sig(Signal::L3WritebackMisses)]))),
    ev(0xdb, "L3_REFERENCES", F, 1, |_| {
        use Signal::*;
        Some(&[
            Sig(L3InstructionHits),
            Sig(L3InstructionMisses),
            L3_PH,
            L3_PM,
            Sig(L3DataReadHits),
            Sig(L3DataReadMisses),
            L3_SH,
            L3_SM,
            Sig(L3WritebackHits),
            Sig(L3WritebackMisses),
        ])
    }),
    ev(0xdc, "L3_MISSES", F, 1, |_| Some(&[L3_IM, L3_PM, L3_DM, L3_SM, Sig(Signal::L3WritebackMisses)])),
    // L3_READS bits 3:2: 00 demand instruction fetch, 01 instruction fetch and prefetch,
    // 10 data reads, 11 all; bits 1:0: 01 hits, 10 misses, 11 both.
    mesi(ev(0xdd, "L3_READS", F, 1, |u| match (u >> 2 & 3, u & 3) {
        (0b00, 0b01) => Some(&[L3_IH]),
        (0b00, 0b10) => Some(&[L3_IM]),
        (0b00, 0b11) => Some(&[L3_IH, L3_IM]),
        (0b01, 0b01) => Some(&[L3_IH, L3_PH]),
        (0b01, 0b10) => Some(&[L3_IM, L3_PM]),
        (0b01, 0b11) => Some(&[L3_IH, L3_IM, L3_PH, L3_PM]),
        (0b10, 0b01) => Some(&[L3_DH]),
        (0b10, 0b10) => Some(&[L3_DM]),
        (0b10, 0b11) => Some(&[L3_DH, L3_DM]),
        (0b11, 0b01) => Some(&[L3_IH, L3_PH, L3_DH]),
        (0b11, 0b10) => Some(&[L3_IM, L3_PM, L3_DM]),
        (0b11, 0b11) => Some(&[L3_IH, L3_IM, L3_PH, L3_PM, L3_DH, L3_DM]),
        _ => None,
    })),
    // L3_WRITES bits 3:2: 01 data writes ("includes L3 read for ownership requests that
    // satisfy stores"), 10 L2D write-backs, 11 all; bits 1:0 as L3_READS.
    mesi(ev(0xde, "L3_WRITES", F, 1, |u| {
        const WH: Atom = Sig(Signal::L3WritebackHits);
        const WM: Atom = Sig(Signal::L3WritebackMisses);
        match (u >> 2 & 3, u & 3) {
            (0b01, 0b01) => Some(&[L3_SH]),
            (0b01, 0b10) => Some(&[L3_SM]),
            (0b01, 0b11) => Some(&[L3_SH, L3_SM]),
            (0b10, 0b01) => Some(&[WH]),
            (0b10, 0b10) => Some(&[WM]),
            (0b10, 0b11) => Some(&[WH, WM]),
            (0b11, 0b01) => Some(&[L3_SH, WH]),
            (0b11, 0b10) => Some(&[L3_SM, WM]),
            (0b11, 0b11) => Some(&[L3_SH, L3_SM, WH, WM]),
            _ => None,
        }
    })),
    mesi(ev(0xdf, "L3_LINES_REPLACED", F, 1, |_| Some(&[Atom::Bus(Txn::Ewb)]))),
    // L2D_REFERENCES (set 2): bits 1:0 01 reads, 10 writes, 11 both.
    ev(0xe6, "L2D_REFERENCES", F, 4, |u| match u & 3 {
        0b01 => Some(&[Atom::L2dReads]),
        0b10 => Some(&[Atom::L2dWrites]),
        0b11 => Some(&[Atom::L2dReads, Atom::L2dWrites]),
        _ => None,
    }),
    // L2D_FORCE_RECIRC.TAG_OK: "inserted to Ozq as a hit … Likely identical to
    // L2D_INSERT_HITS" (Table 4-90); the machine has no OZQ recirculation otherwise.
    ev(0xea, "L2D_FORCE_RECIRC", F, 4, |u| if u == 0b0111 { Some(&[Sig(Signal::L2DataHits)]) } else { None }),
    // L2D_OPS_ISSUED (bit 3 ignored): the L2D's operations by kind, each issued as a
    // hit in the end: integer loads (L1D read misses), semaphores (RMW), other stores,
    // lfetches the L1D missed, and the page walker's reads (OTHER). FP_LOAD 0: the
    // machine's loads go through the L1D.
    // L2D_STORE_HIT_SHARED (b0xxx ANY): stores to a line the other core shares, which
    // the L2D upgrades with a BIL (MMC23).
    ev(0xed, "L2D_STORE_HIT_SHARED", F, 2, |u| if u & 0b1000 == 0 { Some(&[Sig(Signal::StoresHitShared)]) } else { None }),
    ev(0xf0, "L2D_OPS_ISSUED", F, 4, |u| match u & 0b0111 {
        0b000 => Some(&[Atom::L2dReads]),
        0b010 => Some(&[Atom::CacheableAtomics]),
        0b011 => Some(&[Atom::L2dStores]),
        0b100 | 0b110 => Some(&[Sig(Signal::L2PrefetchHitsL2), Sig(Signal::L2PrefetchHitsL3), Sig(Signal::L2PrefetchLocalMemory)]),
        0b101 | 0b111 => Some(&[Sig(Signal::MainTlbMisses)]),
        _ => None,
    }),
    ev(0xf2, "L2D_FILL_MESI_STATE", F, 1, bus::l2d_fill_mesi_state),
];

/// The mapped event with this code, if any.
pub fn mapped_event(code: u8) -> Option<&'static MappedEvent> {
    EVENTS.iter().find(|e| e.code == code)
}

/// What event `code` with `umask` counts in a cycle of `span`, on the thread that runs
/// it, with every MESI state and no threshold (the span's own events; for listing what
/// the machine exercises, and for tests).
pub fn per_cycle(code: u8, umask: u64, span: &Span) -> u64 {
    let Some(event) = mapped_event(code) else { return 0 };
    if event.resolved_type(umask).is_none() {
        return 0;
    }
    let Some(atoms) = (event.select)(umask) else { return 0 };
    let c = Cycle { signals: &span.signals, write: span.mem.is_some_and(|m| m.write), state: None };
    atoms.iter().map(|a| a.value(&c)).sum::<u64>().min(u64::from(event.max_inc))
}

/// MD13: the MESI state of the line at `addr`, as a PMC.MESI bit index: bits 8:7 of the
/// address (the 128-byte line number modulo 4), 0 I, 1 S, 2 E, 3 M.
pub fn line_state(addr: u64) -> u64 {
    (addr >> LINE_SHIFT) & 3
}
