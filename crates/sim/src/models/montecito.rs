//! Register-level model of the performance monitors of one Montecito core with its two
//! hardware threads ("Dual-Core Update to the Intel Itanium 2 Processor Reference
//! Manual", chapter 3, cited as §n; events from chapter 4).
//!
//! Each thread has its own PMU (§3.3.2): PMC0-3 (Table 3-8), the twelve generic pairs
//! PMC/PMD4-15 (Tables 3-5 to 3-7), the model-specific PMC32-42, PMD32-39 and PMD48-63
//! (stored only), its PSR (Figure 3-10) and its PMV (cr73). Software reaches them only
//! through [`Montecito::write_pmc`] (`mov pmc[i]=r`), [`Montecito::read_pmc`],
//! [`Montecito::write_pmd`], [`Montecito::read_pmd`] (`mov r=pmd[i]`),
//! [`Montecito::set_psr`], [`Montecito::write_pmv`] (`mov cr73=r`) and
//! [`Montecito::pal_perf_mon_info`]. Each access executes on one thread at that thread's
//! PSR.cpl. The engine ([`crate::engine`]) drives the counters through [`Counting`]; an
//! overflow interrupt is read with [`Montecito::take_interrupt`].
//! `docs/montecito-model.md` describes the model, its event mapping and every reading
//! of the spec it makes (decisions MD1...).

use pmukit_arch::montecito::pal::{self, PerfMonInfo};
use pmukit_arch::montecito::pmu::{self, er_si_l2d};
use pmukit_arch::montecito::registers::{
    pmc_populated, pmc_reset, pmd_populated, ALL, BANKED, COUNT, ES, FR, GENERIC, ISM, ISM_PROPER, MESI, OI, PLM, PM, PMC0, PMC_GENERIC,
    PMV, PMV_M, PMV_VECTOR, PSR, PSR_CPL, PSR_PP, PSR_SP, PSR_UP, THRESHOLD, UMASK,
};
use pmukit_core::register::RegisterError;
use thiserror::Error;

use crate::engine::Counting;
use crate::stream::{Privilege, Signal, Signals, Span};

/// Hardware threads of a Montecito core (§2.4, §3.3.2).
pub const THREADS: usize = 2;
/// Generic counter pairs per thread, PMC/PMD4-15 (§3.3.2).
pub const COUNTERS_PER_THREAD: usize = 12;
/// Table 3-7: the count field is bits 46:0; it overflows on the carry out of bit 46.
pub const COUNT_BITS: u32 = 47;
const COUNT_MODULUS: u64 = 1 << COUNT_BITS;
/// Bits 63:47 of a PMD read: copies of bit 46 (Table 3-7 sxt47 and ov).
const SIGN_EXTENSION: u64 = !(COUNT_MODULUS - 1);
/// Table 3-7: bit 47, "always write 0".
const PMD_OV_BIT: u64 = 1 << 47;
/// A MESI filter that selects every state (Table 3-6: "must be set to b1111").
const MESI_ALL: u64 = 0b1111;
/// §3.3.3: "CYCLES_HALTED event can only be monitored in PMD10".
const CYCLES_HALTED: u8 = pmu::CYCLES_HALTED as u8;
/// Itanium L3 lines are 128 bytes; the MESI rule (MD13) reads the line number.
const LINE_SHIFT: u32 = 7;

/// Why an access failed. A failed access changes nothing.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum MontecitoError {
    /// The core has threads 0 and 1 only.
    #[error("hardware thread {thread} does not exist: a Montecito core runs threads 0 and 1, each with its own PMU (§3.3.2)")]
    NoSuchThread { thread: usize },
    /// Table 3-4 does not populate this PMC.
    #[error("PMC{index} is not implemented on Montecito: the populated PMCs are PMC0-15 and PMC32-42 (Table 3-4)")]
    NoSuchPmc { index: usize },
    /// Table 3-4 does not populate this PMD.
    #[error("PMD{index} is not implemented on Montecito: the populated PMDs are PMD4-15, PMD32-39 and PMD48-63 (Table 3-4)")]
    NoSuchPmd { index: usize },
    /// PMC reads and writes, PMD writes and cr73 accesses need CPL 0 (Itanium SDM Vol. 2
    /// §7.2: "At non-zero privilege levels, these operations result in a Privileged
    /// Operation fault, regardless of the register address").
    #[error("`{instruction}` on thread {thread} at CPL {cpl}: privileged operation fault (PMC reads and writes, PMD writes and cr73 accesses need CPL 0)")]
    PrivilegedOperation { thread: usize, instruction: String, cpl: u8 },
    /// Figure 3-10 reserved PSR bits must be written 0.
    #[error("PSR write on thread {thread} rejected: {source}")]
    ReservedPsrBits { thread: usize, source: RegisterError },
}

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

/// A bus transaction class (System Bus events, §4.11).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Txn {
    /// Memory reads (`MemoryReads`).
    Reads,
    /// Data reads: memory reads that are not instruction fetch misses.
    DataReads,
    /// Write-backs of dirty lines: the writes of a cycle that writes lines back.
    Writebacks,
    /// Reads and writes.
    All,
}

/// Transaction size: full 128-byte line (BRL, BRIL, BWL) or partial (BRP, BWP, BIL).
/// A cycle's transactions are partial when its data access is non-cacheable (MD15).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Size {
    Line,
    Partial,
    Any,
}

/// What one selected event counts in a cycle, from the cycle's signals.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Atom {
    /// One per cycle.
    Cycles,
    /// A stream signal, per cycle.
    Sig(Signal),
    /// Cycles that retire no instruction (§4.6: CPU_OP_CYCLES = BACK_END_BUBBLE.all +
    /// cycles retiring at least one).
    NoRetire,
    /// A bubble cycle (no instruction retired) by its cause, each cycle counted under
    /// exactly one in §4.6's priority order (L1D/FPU, EXE, RSE, front end; MD37).
    Bubble(Cause),
    /// Syllables not dispersed in a cycle that dispersed some: 6 minus those dispersed
    /// (§4.4; MD38).
    SyllablesNotDispersed,
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
    /// Returns predicted correctly.
    CorrectReturns,
    /// L1D misses of reads (L1D is write-through: write misses are not counted).
    L1dReadMisses,
    /// Reads sent to the L2D: cacheable L1D read misses.
    L2dReads,
    /// Writes sent to the L2D: every cacheable store (L1D is write-through).
    L2dWrites,
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
    /// Bus (memory) transactions of a class and size.
    Bus(Txn, Size),
}

/// Why the back end had a bubble (§4.6). The machine tells a flush only as a stall
/// with no cause of its own (a pipeline refill, a thread switch, a trap).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cause {
    L1dFpu,
    Exe,
    Rse,
    FrontEnd,
    Flush,
}

impl Cause {
    /// The one cause a bubble cycle is counted under (§4.6: "only the most important
    /// cause, the one latest in the pipeline, is counted").
    fn of(c: &Cycle) -> Option<Cause> {
        use Signal::*;
        if c.get(Instructions) > 0 {
            return None;
        }
        Some(if c.get(LsuFullStallCycles) > 0 {
            Cause::L1dFpu
        } else if c.get(DataDepStallCycles) > 0 {
            Cause::Exe
        } else if c.get(RseSpillStallCycles) + c.get(RseFillStallCycles) > 0 {
            Cause::Rse
        } else if c.get(IBufStallCycles) > 0 {
            Cause::FrontEnd
        } else {
            Cause::Flush
        })
    }
}

/// Syllables Montecito disperses per cycle: two bundles of three (§4.4).
const DISPERSAL_WIDTH: u64 = 6;

/// One cycle as a counter sees it: the signals, whether the data reference writes, and
/// the MESI state of the line the cycle's events concern (`None`: unknown).
struct Cycle<'a> {
    signals: &'a Signals,
    write: bool,
    state: Option<u64>,
}

impl Cycle<'_> {
    fn get(&self, s: Signal) -> u64 {
        self.signals.get(s)
    }

    /// MD15: a cycle without a data access, or whose access is cacheable.
    fn cacheable(&self) -> bool {
        self.get(Signal::DCacheAccesses) == 0 || self.get(Signal::DCacheAccessesCacheable) > 0
    }
}

impl Atom {
    fn value(self, c: &Cycle) -> u64 {
        use Signal::*;
        let when = |cond: bool, v: u64| if cond { v } else { 0 };
        match self {
            Atom::Cycles => 1,
            Atom::Sig(s) => c.get(s),
            Atom::NoRetire => u64::from(c.get(Instructions) == 0),
            Atom::Bubble(cause) => u64::from(Cause::of(c) == Some(cause)),
            Atom::SyllablesNotDispersed => match c.get(Instructions) {
                0 => 0,
                i => DISPERSAL_WIDTH.saturating_sub(i),
            },
            Atom::CorrectBranches => c.get(Branches).saturating_sub(c.get(BranchMispredicts)),
            Atom::IpRelBranches => c.get(Branches).saturating_sub(c.get(Returns) + c.get(IndirectBranches)),
            Atom::IpRelCorrect => c
                .get(Branches)
                .saturating_sub(c.get(Returns) + c.get(IndirectBranches))
                .saturating_sub(c.get(PathMispredictsTaken) + c.get(PathMispredictsNotTaken)),
            Atom::IndirectCorrect => c.get(IndirectBranches).saturating_sub(c.get(IndirectMispredicts)),
            Atom::PathRight { taken, ip_relative } => {
                // Returns and other indirect branches are taken, their path predicted.
                let indirect = if ip_relative { c.get(Returns) + c.get(IndirectBranches) } else { 0 };
                let (all, wrong) = if taken {
                    (c.get(BranchesTaken), c.get(PathMispredictsTaken))
                } else {
                    (c.get(Branches).saturating_sub(c.get(BranchesTaken)), c.get(PathMispredictsNotTaken))
                };
                all.saturating_sub(if taken { indirect } else { 0 }).saturating_sub(wrong)
            }
            Atom::CorrectReturns => c.get(Returns).saturating_sub(c.get(ReturnsMispredicted)),
            Atom::L1dReadMisses => when(!c.write, c.get(DCacheMisses)),
            Atom::L2dReads => when(!c.write && c.cacheable(), c.get(DCacheMisses)),
            Atom::L2dWrites => when(c.cacheable(), c.get(Stores)),
            Atom::L2dMisses => c.get(L2DataMisses),
            Atom::CacheableLoads => when(c.cacheable(), c.get(Loads)),
            Atom::UncacheableLoads => when(!c.cacheable(), c.get(Loads)),
            Atom::UncacheableStores => when(!c.cacheable(), c.get(Stores)),
            Atom::DataReferences => c.get(Loads) + c.get(Stores),
            Atom::L2ItlbMisses => c.get(ITlbMisses).min(c.get(MainTlbMisses)),
            Atom::L2DtlbMisses => c.get(DTlbMisses).min(c.get(MainTlbMisses)),
            Atom::L1dtlbTransfers => c.get(DTlbMisses) - c.get(DTlbMisses).min(c.get(MainTlbMisses)),
            Atom::Bus(txn, size) => {
                let fits = match size {
                    Size::Line => c.cacheable(),
                    Size::Partial => !c.cacheable(),
                    Size::Any => true,
                };
                let (reads, writes) = (c.get(MemoryReads), c.get(MemoryWrites));
                let writebacks = when(c.get(DCacheWritebacks) > 0, writes);
                let v = match txn {
                    Txn::Reads => reads,
                    Txn::DataReads => reads.saturating_sub(c.get(ICacheMisses)),
                    Txn::Writebacks => writebacks,
                    Txn::All => reads + writes,
                };
                when(fits, v)
            }
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
    /// The atoms a unit mask selects, summed; `None` counts nothing.
    select: fn(u64) -> Option<&'static [Atom]>,
}

use Atom::{Bus, Sig};
use EventType::{Active as A, Causal as C, Floating as F, SelfFloating as S};

const fn ev(code: u8, name: &'static str, ty: EventType, max_inc: u8, select: fn(u64) -> Option<&'static [Atom]>) -> MappedEvent {
    MappedEvent { code, name, ty, max_inc, mesi: false, select }
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
const L2I_HIT: Atom = Sig(Signal::L2InstructionHits);

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
    // BE_EXE_BUBBLE: ALL and GRALL (a data dependency); the other causes are not in
    // the stream.
    ev(0x02, "BE_EXE_BUBBLE", A, 1, |u| match u {
        0b0000 | 0b0001 => Some(&[Atom::Bubble(Cause::Exe)]),
        _ => None,
    }),
    // BE_FLUSH_BUBBLE: bxx00 ALL, bxx01 BRU (a pipeline refill), bxx10 XPN (none).
    ev(0x04, "BE_FLUSH_BUBBLE", A, 1, |u| match u & 3 {
        0b00 | 0b01 => Some(&[Atom::Bubble(Cause::Flush)]),
        _ => None,
    }),
    // IA64_INST_RETIRED (umask bxx00) and IA64_TAGGED_INST_RETIRED (IBRP0-3): the tags
    // are not modelled; at their reset values every instruction matches (MD16).
    ev(0x08, "IA64_INST_RETIRED", A, 6, |_| Some(&[Sig(Signal::Instructions)])),
    // FP_OPS_RETIRED: the machine's floating-point instructions.
    ev(0x09, "FP_OPS_RETIRED", A, 6, |_| Some(&[Sig(Signal::FguCryptoInstructions)])),
    // THREAD_SWITCH_EVENTS: L3MISS, TIMER and ALL; hint, low-power and debug
    // switches, and missed opportunities, do not happen in the machine.
    ev(0x0c, "THREAD_SWITCH_EVENTS", A, 1, |u| match u & 7 {
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
    ev(0x2d, "HPW_DATA_REFERENCES", A, 4, |_| Some(&[Sig(Signal::MainTlbMisses)])),
    // RSE_EVENT_RETIRED: the instructions that move the register stack frame, calls
    // and returns (alloc is part of the call in the machine's programs).
    ev(0x32, "RSE_EVENT_RETIRED", A, 1, |_| Some(&[Sig(Signal::Calls), Sig(Signal::Returns)])),
    // L1I_READS: demand fetches from a new line, hit or miss.
    ev(0x40, "L1I_READS", A, 1, |_| Some(&[Sig(Signal::ICacheReads)])),
    ev(0x41, "L1I_FILLS", F, 1, |_| Some(&[Sig(Signal::ICacheMisses)])),
    ev(0x42, "L2I_DEMAND_READS", A, 1, |_| Some(&[Sig(Signal::ICacheMisses)])),
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
    ev(0x4d, "INST_DISPERSED", A, 6, |_| Some(&[Sig(Signal::Instructions)])),
    // SYLL_NOT_DISPERSED: any combination of EXPL (bit 0), IMPL (bit 1), FE (bit 2) and
    // MLX (bit 3) counts the union; the stream's only reason is the implicit stop that
    // ends an issue group (MD38).
    ev(0x4e, "SYLL_NOT_DISPERSED", A, 5, |u| if u & 0b0010 != 0 { Some(&[Atom::SyllablesNotDispersed]) } else { None }),
    // SYLL_OVERCOUNT: no bundle is dispersed twice in the stream.
    ev(0x4f, "SYLL_OVERCOUNT", A, 2, |_| None),
    // BR_PATH_PRED: bits 3:2 branch type (ALL, IPREL, RETURN, NRETIND), bits 1:0 the
    // path outcome (MISPRED_NOTTAKEN, MISPRED_TAKEN, OKPRED_NOTTAKEN, OKPRED_TAKEN).
    // Returns and other indirect branches are always taken and predicted taken; their
    // misses are wrong targets (BR_MISPRED_DETAIL).
    ev(0x54, "BR_PATH_PRED", A, 3, |u| match (u >> 2 & 3, u & 3) {
        (0b00 | 0b01, 0b00) => Some(&[Sig(Signal::PathMispredictsNotTaken)]),
        (0b00 | 0b01, 0b01) => Some(&[Sig(Signal::PathMispredictsTaken)]),
        (0b00, 0b10) => Some(&[Atom::PathRight { taken: false, ip_relative: false }]),
        (0b00, 0b11) => Some(&[Atom::PathRight { taken: true, ip_relative: false }]),
        (0b01, 0b10) => Some(&[Atom::PathRight { taken: false, ip_relative: true }]),
        (0b01, 0b11) => Some(&[Atom::PathRight { taken: true, ip_relative: true }]),
        (0b10, 0b11) => Some(&[Sig(Signal::Returns)]),
        (0b11, 0b11) => Some(&[Sig(Signal::IndirectBranches)]),
        _ => None,
    }),
    // BR_MISPRED_DETAIL: bits 3:2 branch type (ALL, IPREL, RETURN, NRETIND), bits 1:0
    // prediction result (ALL_PRED, CORRECT_PRED, WRONG_PATH, WRONG_TARGET) (MD18).
    ev(0x5b, "BR_MISPRED_DETAIL", A, 3, |u| match (u >> 2 & 3, u & 3) {
        (0b00, 0b00) => Some(&[Sig(Signal::Branches)]),
        (0b00, 0b01) => Some(&[Atom::CorrectBranches]),
        (0b00 | 0b01, 0b10) => Some(&[Sig(Signal::PathMispredictsTaken), Sig(Signal::PathMispredictsNotTaken)]),
        (0b00, 0b11) => Some(&[Sig(Signal::ReturnsMispredicted), Sig(Signal::IndirectMispredicts)]),
        (0b01, 0b00) => Some(&[Atom::IpRelBranches]),
        (0b01, 0b01) => Some(&[Atom::IpRelCorrect]),
        (0b10, 0b00) => Some(&[Sig(Signal::Returns)]),
        (0b10, 0b01) => Some(&[Atom::CorrectReturns]),
        (0b10, 0b11) => Some(&[Sig(Signal::ReturnsMispredicted)]),
        (0b11, 0b00) => Some(&[Sig(Signal::IndirectBranches)]),
        (0b11, 0b01) => Some(&[Atom::IndirectCorrect]),
        (0b11, 0b11) => Some(&[Sig(Signal::IndirectMispredicts)]),
        // IP-relative targets are never wrong; returns and indirect branches are always
        // taken as predicted.
        _ => None,
    }),
    // L2I_READS bits 3:2: 01 HIT, 10 MISS, 11 ALL; bits 1:0: 01 demand, 10 prefetch
    // (the machine has no instruction prefetches), 11 all. A miss is an L3 lookup.
    ev(0x78, "L2I_READS", F, 1, |u| match (u >> 2 & 3, u & 1) {
        (_, 0) => None,
        (0b01, _) => Some(&[L2I_HIT]),
        (0b10, _) => Some(&[L3_IH, L3_IM]),
        (0b11, _) => Some(&[L2I_HIT, L3_IH, L3_IM]),
        _ => None,
    }),
    // System bus events (Self Floating): bits 1:0 agent, 00 EITHER, 01 IO, 10 SELF, 11
    // ANY (MD14). BUS_ALL: every transaction, whatever its size; BUS_MEMORY bits 3:2:
    // 01 full line, 10 partial, 11 all.
    ev(0x87, "BUS_ALL", S, 1, |_| Some(&[Bus(Txn::All, Size::Any)])),
    ev(0x8a, "BUS_MEMORY", S, 1, |u| match u >> 2 & 3 {
        0b01 => Some(&[Bus(Txn::All, Size::Line)]),
        0b10 => Some(&[Bus(Txn::All, Size::Partial)]),
        0b11 => Some(&[Bus(Txn::All, Size::Any)]),
        _ => None,
    }),
    // BUS_MEM_READ bits 3:2: 00 BIL (0-byte; none in the stream), 01 BRL, 10 BRIL (none:
    // the stream's stores do not read for ownership), 11 ALL.
    ev(0x8b, "BUS_MEM_READ", S, 1, |u| match u >> 2 & 3 {
        0b01 | 0b11 => Some(&[Bus(Txn::Reads, Size::Line)]),
        _ => None,
    }),
    ev(0x8c, "BUS_RD_DATA", S, 1, |_| Some(&[Bus(Txn::DataReads, Size::Line)])),
    ev(0x8d, "BUS_RD_PRTL", S, 1, |_| Some(&[Bus(Txn::Reads, Size::Partial)])),
    // BUS_WR_WB bits 3:2: 01 full-line write-backs, 10 clean castouts (none), 11 all.
    ev(0x92, "BUS_WR_WB", S, 1, |u| match u >> 2 & 3 {
        0b01 | 0b11 => Some(&[Bus(Txn::Writebacks, Size::Line)]),
        _ => None,
    }),
    // L2D_INSERT_MISSES / L2D_INSERT_HITS: the L2D's first lookups, missing or
    // hitting (the machine has no secondary misses or recirculation).
    ev(0xb0, "L2D_INSERT_MISSES", F, 4, |_| Some(&[Sig(Signal::L2DataMisses)])),
    ev(0xb1, "L2D_INSERT_HITS", F, 4, |_| Some(&[Sig(Signal::L2DataHits)])),
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
    // BE_L1D_FPU_BUBBLE: ALL and L1D (an LSU-full stall); FPU and the finer L1D
    // reasons are not in the stream.
    ev(0xca, "BE_L1D_FPU_BUBBLE", A, 1, |u| match u {
        0b0000 | 0b0010 => Some(&[Atom::Bubble(Cause::L1dFpu)]),
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
    mesi(ev(0xda, "L3_INSERTS", F, 1, |_| {
        Some(&[Sig(Signal::L3InstructionMisses), Sig(Signal::L3DataReadMisses), Sig(Signal::L3WritebackMisses)])
    })),
    ev(0xdb, "L3_REFERENCES", F, 1, |_| {
        use Signal::*;
        Some(&[
            Sig(L3InstructionHits),
            Sig(L3InstructionMisses),
            Sig(L3DataReadHits),
            Sig(L3DataReadMisses),
            Sig(L3WritebackHits),
            Sig(L3WritebackMisses),
        ])
    }),
    ev(0xdc, "L3_MISSES", F, 1, |_| {
        Some(&[Sig(Signal::L3InstructionMisses), Sig(Signal::L3DataReadMisses), Sig(Signal::L3WritebackMisses)])
    }),
    // L3_READS bits 3:2: 00 demand instruction fetch, 01 instruction fetch and prefetch
    // (the machine has no instruction prefetches), 10 data reads, 11 all; bits 1:0:
    // 01 hits, 10 misses, 11 both.
    mesi(ev(0xdd, "L3_READS", F, 1, |u| match (u >> 2 & 3, u & 3) {
        (0b00 | 0b01, 0b01) => Some(&[L3_IH]),
        (0b00 | 0b01, 0b10) => Some(&[L3_IM]),
        (0b00 | 0b01, 0b11) => Some(&[L3_IH, L3_IM]),
        (0b10, 0b01) => Some(&[L3_DH]),
        (0b10, 0b10) => Some(&[L3_DM]),
        (0b10, 0b11) => Some(&[L3_DH, L3_DM]),
        (0b11, 0b01) => Some(&[L3_IH, L3_DH]),
        (0b11, 0b10) => Some(&[L3_IM, L3_DM]),
        (0b11, 0b11) => Some(&[L3_IH, L3_IM, L3_DH, L3_DM]),
        _ => None,
    })),
    // L3_WRITES bits 3:2: 01 data writes (none: the L2D allocates stores, so they reach
    // the L3 only as write-backs), 10 L2D write-backs, 11 all; bits 1:0 as L3_READS.
    mesi(ev(0xde, "L3_WRITES", F, 1, |u| match (u >> 2 & 3, u & 3) {
        (0b10 | 0b11, 0b01) => Some(&[Sig(Signal::L3WritebackHits)]),
        (0b10 | 0b11, 0b10) => Some(&[Sig(Signal::L3WritebackMisses)]),
        (0b10 | 0b11, 0b11) => Some(&[Sig(Signal::L3WritebackHits), Sig(Signal::L3WritebackMisses)]),
        _ => None,
    })),
    mesi(ev(0xdf, "L3_LINES_REPLACED", F, 1, |_| Some(&[Bus(Txn::Writebacks, Size::Line)]))),
    // L2D_REFERENCES (set 2): bits 1:0 01 reads, 10 writes, 11 both.
    ev(0xe6, "L2D_REFERENCES", F, 4, |u| match u & 3 {
        0b01 => Some(&[Atom::L2dReads]),
        0b10 => Some(&[Atom::L2dWrites]),
        0b11 => Some(&[Atom::L2dReads, Atom::L2dWrites]),
        _ => None,
    }),
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
    let Some(atoms) = (event.select)(umask) else { return 0 };
    let c = Cycle { signals: &span.signals, write: span.mem.is_some_and(|m| m.write), state: None };
    atoms.iter().map(|a| a.value(&c)).sum::<u64>().min(u64::from(event.max_inc))
}

/// MD13: the MESI state of the line at `addr`, as a PMC.MESI bit index: bits 8:7 of the
/// address (the 128-byte line number modulo 4), 0 I, 1 S, 2 E, 3 M.
pub fn line_state(addr: u64) -> u64 {
    (addr >> LINE_SHIFT) & 3
}

/// The CPL a span runs at. MD3: `Privilege::Hyper` (SPARC's hyperprivileged mode) is
/// taken as CPL 0, Itanium's most privileged level.
fn span_cpl(p: Privilege) -> u64 {
    match p {
        Privilege::Hyper | Privilege::Cpl0 => 0,
        Privilege::Cpl1 => 1,
        Privilege::Cpl2 => 2,
        Privilege::Cpl3 => 3,
    }
}

/// What PMCn selects, derived when the PMC is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Program {
    atoms: &'static [Atom],
    /// Resolved type: Active, Causal or Floating (Self Floating resolved by the umask).
    ty: EventType,
    max_inc: u64,
    mesi_capable: bool,
}

impl Program {
    /// What PMCn (`n` in 4..=15) counts with `pmc`, or `None` for nothing; `note` hears
    /// why a programming is undefined.
    fn new(n: usize, pmc: u64, mut note: impl FnMut(String)) -> Option<Program> {
        let code = ES.get(pmc) as u8;
        let umask = UMASK.get(pmc);
        if PLM.get(pmc) != 0 && ISM.get(pmc) != ISM_PROPER {
            note(format!("PMC{n}: ism = {:02b}: undefined behaviour (Table 3-5); the monitor counts nothing (§3.3.1)", ISM.get(pmc)));
        }
        if code == CYCLES_HALTED && n != pmu::CYCLES_HALTED_PMD {
            note(format!("PMC{n}: CPU_OP_CYCLES_HALTED outside PMD10 has an undefined count (§3.3.3); PMD{n} counts nothing"));
            return None;
        }
        if BANKED.contains(&n) && er_si_l2d(u64::from(code)) {
            note(format!("PMC{n}: event {code:#04x} (ER/SI/L2D) can only be monitored in PMD4-9 (§3.3.3); PMD{n} counts nothing"));
            return None;
        }
        let event = mapped_event(code)?;
        let atoms = (event.select)(umask)?;
        let ty = match event.ty {
            EventType::SelfFloating => match umask & 3 {
                0b10 => EventType::Floating,
                // IO: non-CPU priority agents, of which the model has none.
                0b01 => return None,
                _ => EventType::Causal,
            },
            t => t,
        };
        Some(Program { atoms, ty, max_inc: u64::from(event.max_inc), mesi_capable: event.mesi })
    }

    /// The event's value in one cycle, before clamping and thresholding. `mesi` is the
    /// PMC's filter (Table 3-6).
    fn value(&self, c: &Cycle, mesi: u64) -> u64 {
        if self.mesi_capable && mesi != MESI_ALL {
            // MD13: a known state counts when its bit is set; an unknown one only with b1111.
            match c.state {
                Some(state) if mesi >> state & 1 == 1 => {}
                _ => return 0,
            }
        }
        self.atoms.iter().map(|a| a.value(c)).sum()
    }
}

/// A generic PMC/PMD pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Pair {
    pmc: u64,
    /// The 47-bit count (Table 3-7 bits 46:0).
    count: u64,
    program: Option<Program>,
}

/// Where an index lands among one thread's registers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pmc {
    Status(usize),
    Generic(usize),
    Specific(usize),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pmd {
    Generic(usize),
    Specific(usize),
}

const SPECIFIC_PMCS: usize = 11; // PMC32-42
const SPECIFIC_PMDS: usize = 64 - 32; // PMD32-63 (PMD40-47 unpopulated, never reached)

/// The performance monitors of one hardware thread (§3.3.2: "The PMUs are not shared
/// between hardware threads").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MontecitoThread {
    /// PMC0 (Table 3-8); PMC1-3 read 0 and ignore writes.
    pmc0: u64,
    pairs: [Pair; COUNTERS_PER_THREAD],
    /// PMC32-42, stored as written.
    specific_pmc: [u64; SPECIFIC_PMCS],
    /// PMD32-39 and PMD48-63, stored as written.
    specific_pmd: [u64; SPECIFIC_PMDS],
    psr: u64,
    pmv: u64,
    /// The performance monitor interrupt is pended (§3.3.11: one line).
    interrupt: bool,
}

impl MontecitoThread {
    /// §3.3.12: oi and ev of every PMC are 0 and PMV.m is 1; PAL loads PMC32-36, 38 and
    /// 41; everything else is undefined and starts at 0 here (MD4).
    fn reset() -> MontecitoThread {
        MontecitoThread {
            pmc0: PMC0.reset,
            pairs: [Pair { pmc: PMC_GENERIC.reset, ..Pair::default() }; COUNTERS_PER_THREAD],
            specific_pmc: std::array::from_fn(|i| pmc_reset(32 + i).unwrap_or(0)),
            specific_pmd: [0; SPECIFIC_PMDS],
            psr: PSR.reset,
            pmv: PMV.reset,
            interrupt: false,
        }
    }

    pub fn psr(&self) -> u64 {
        self.psr
    }

    /// The CPL this thread's accesses execute at, and rests at in the background.
    pub fn cpl(&self) -> u8 {
        PSR_CPL.get(self.psr) as u8
    }

    pub fn interrupt_pending(&self) -> bool {
        self.interrupt
    }

    pub fn frozen(&self) -> bool {
        FR.get(self.pmc0) == 1
    }

    fn pair(&self, n: usize) -> &Pair {
        &self.pairs[n - GENERIC.start()]
    }

    fn pair_mut(&mut self, n: usize) -> &mut Pair {
        &mut self.pairs[n - GENERIC.start()]
    }

    /// §3.3.1: (not PMC0.fr) and PMC.plm[cpl] and (PMC.ism = '10) and ((not PMC.pm and
    /// PSR.up) or (PMC.pm and PSR.pp)).
    fn enabled(&self, pmc: u64, cpl: u64) -> bool {
        let up = PSR_UP.get(self.psr) == 1;
        let pp = PSR_PP.get(self.psr) == 1;
        let privileged = PM.get(pmc) == 1;
        !self.frozen() && PLM.get(pmc) >> cpl & 1 == 1 && ISM.get(pmc) == ISM_PROPER && if privileged { pp } else { up }
    }

    /// PMDn wrapped: Table 3-8 sets PMC0 bit n whatever oi says; with oi, Table 3-6 sets
    /// fr and raises the interrupt, which PMV.m keeps from being pended (§3.3.11).
    /// Returns whether an interrupt was raised.
    fn overflow(&mut self, n: usize) -> bool {
        self.pmc0 |= 1 << n;
        if OI.get(self.pair(n).pmc) == 0 {
            return false;
        }
        self.pmc0 = FR.set(self.pmc0, 1);
        if PMV_M.get(self.pmv) == 1 {
            return false;
        }
        self.interrupt = true;
        true
    }
}

/// One Montecito core: two hardware threads, each with its own PMU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Montecito {
    threads: [MontecitoThread; THREADS],
    unpredictable: Vec<String>,
}

impl Default for Montecito {
    fn default() -> Self {
        Montecito::new()
    }
}

impl Montecito {
    /// A core after processor reset (§3.3.12).
    pub fn new() -> Montecito {
        Montecito { threads: [MontecitoThread::reset(), MontecitoThread::reset()], unpredictable: Vec::new() }
    }

    pub fn thread(&self, thread: usize) -> Result<&MontecitoThread, MontecitoError> {
        self.threads.get(thread).ok_or(MontecitoError::NoSuchThread { thread })
    }

    /// Every programming the spec leaves undefined, in order (ism other than '10,
    /// ER/SI/L2D events in banked counters, CPU_OP_CYCLES_HALTED outside PMD10, a PMD
    /// write with bit 47 set).
    pub fn unpredictable(&self) -> &[String] {
        &self.unpredictable
    }

    /// Virtual counter of PMDn (4..=15) of `thread` for [`Counting`].
    pub fn counter_index(thread: usize, n: usize) -> Option<usize> {
        (thread < THREADS && GENERIC.contains(&n)).then(|| thread * COUNTERS_PER_THREAD + n - GENERIC.start())
    }

    /// The thread, checked to exist and to run at CPL 0 (for privileged operations).
    fn privileged(&self, thread: usize, instruction: impl FnOnce() -> String) -> Result<&MontecitoThread, MontecitoError> {
        let t = self.thread(thread)?;
        match t.cpl() {
            0 => Ok(t),
            cpl => Err(MontecitoError::PrivilegedOperation { thread, instruction: instruction(), cpl }),
        }
    }

    fn pmc_slot(index: usize) -> Result<Pmc, MontecitoError> {
        match index {
            0..=3 => Ok(Pmc::Status(index)),
            i if GENERIC.contains(&i) => Ok(Pmc::Generic(i)),
            i if pmc_populated(i) => Ok(Pmc::Specific(i - 32)),
            _ => Err(MontecitoError::NoSuchPmc { index }),
        }
    }

    fn pmd_slot(index: usize) -> Result<Pmd, MontecitoError> {
        match index {
            i if GENERIC.contains(&i) => Ok(Pmd::Generic(i)),
            i if pmd_populated(i) => Ok(Pmd::Specific(i - 32)),
            _ => Err(MontecitoError::NoSuchPmd { index }),
        }
    }

    /// `mov pmc[index]=value` on `thread`. Privileged: a fault at CPL != 0 whatever the
    /// index (MD7). Ignored bits are dropped (Tables 3-6, 3-8); PMC1-3 ignore the write.
    pub fn write_pmc(&mut self, thread: usize, index: usize, value: u64) -> Result<(), MontecitoError> {
        self.privileged(thread, || format!("mov pmc[{index}]=r"))?;
        let slot = Self::pmc_slot(index)?;
        let mut notes = Vec::new();
        let t = &mut self.threads[thread];
        match slot {
            Pmc::Status(0) => t.pmc0 = PMC0.apply_write(t.pmc0, value).stored,
            Pmc::Status(_) => {}
            Pmc::Generic(n) => {
                let pmc = PMC_GENERIC.apply_write(t.pair(n).pmc, value).stored;
                let program = Program::new(n, pmc, |s| notes.push(format!("thread {thread} {s}")));
                let pair = t.pair_mut(n);
                pair.pmc = pmc;
                pair.program = program;
            }
            Pmc::Specific(i) => t.specific_pmc[i] = value,
        }
        self.unpredictable.extend(notes);
        Ok(())
    }

    /// `mov r=pmc[index]` on `thread`. Privileged (MD7). Ignored bits read 0.
    pub fn read_pmc(&self, thread: usize, index: usize) -> Result<u64, MontecitoError> {
        let t = self.privileged(thread, || format!("mov r=pmc[{index}]"))?;
        Ok(match Self::pmc_slot(index)? {
            Pmc::Status(0) => PMC0.read(t.pmc0),
            Pmc::Status(_) => 0,
            Pmc::Generic(n) => PMC_GENERIC.read(t.pair(n).pmc),
            Pmc::Specific(i) => t.specific_pmc[i],
        })
    }

    /// `mov pmd[index]=value` on `thread`. Privileged (MD7). PMD4-15 keep bits 46:0:
    /// bits 63:48 are ignored (Table 3-7) and so is bit 47 (MD6, noted in
    /// [`Montecito::unpredictable`] when set).
    pub fn write_pmd(&mut self, thread: usize, index: usize, value: u64) -> Result<(), MontecitoError> {
        self.privileged(thread, || format!("mov pmd[{index}]=r"))?;
        let slot = Self::pmd_slot(index)?;
        let t = &mut self.threads[thread];
        match slot {
            Pmd::Generic(n) => {
                t.pair_mut(n).count = COUNT.get(value);
                if value & PMD_OV_BIT != 0 {
                    self.unpredictable.push(format!(
                        "thread {thread} PMD{n}: written with bit 47 (ov) set; software must write 0 (Table 3-7); the bit is dropped"
                    ));
                }
            }
            Pmd::Specific(i) => t.specific_pmd[i] = value,
        }
        Ok(())
    }

    /// `mov r=pmd[index]` on `thread`, at its PSR.cpl. PMD4-15 read the count with bits
    /// 63:47 copying bit 46 (Table 3-7). At CPL != 0 a read returns 0 when the PMC has
    /// pm = 1 (Table 3-5) or PSR.sp = 1 (MD8).
    pub fn read_pmd(&self, thread: usize, index: usize) -> Result<u64, MontecitoError> {
        let t = self.thread(thread)?;
        let slot = Self::pmd_slot(index)?;
        let secured = t.cpl() != 0 && PSR_SP.get(t.psr) == 1;
        Ok(match slot {
            Pmd::Generic(n) => {
                let pair = t.pair(n);
                if secured || (t.cpl() != 0 && PM.get(pair.pmc) == 1) {
                    0
                } else if pair.count >> (COUNT_BITS - 1) & 1 == 1 {
                    pair.count | SIGN_EXTENSION
                } else {
                    pair.count
                }
            }
            Pmd::Specific(_) if secured => 0,
            Pmd::Specific(i) => t.specific_pmd[i],
        })
    }

    /// Set `thread`'s PSR (Figure 3-10): up, pp, sp, cpl, is and the other fields. Not a
    /// PMU access, so not privileged here (`rum`/`sum`/`ssm`/`rsm`/`rfi` stand behind it).
    /// Reserved bits must be 0. PSR.cpl is the level the thread's accesses execute at
    /// and the level it rests at in the background; a span's privilege overrides it
    /// while the thread runs the span (MD2).
    pub fn set_psr(&mut self, thread: usize, value: u64) -> Result<(), MontecitoError> {
        self.thread(thread)?;
        PSR.check_write(value).map_err(|source| MontecitoError::ReservedPsrBits { thread, source })?;
        self.threads[thread].psr = value;
        Ok(())
    }

    /// `thread`'s PSR.
    pub fn psr(&self, thread: usize) -> Result<u64, MontecitoError> {
        Ok(self.thread(thread)?.psr)
    }

    /// `mov cr73=value` on `thread`: the Performance Monitor Vector (§3.3.11).
    /// Privileged; ignored bits are dropped.
    pub fn write_pmv(&mut self, thread: usize, value: u64) -> Result<(), MontecitoError> {
        self.privileged(thread, || "mov cr73=r".to_string())?;
        let t = &mut self.threads[thread];
        t.pmv = PMV.apply_write(t.pmv, value).stored;
        Ok(())
    }

    /// `mov r=cr73` on `thread`. Privileged.
    pub fn read_pmv(&self, thread: usize) -> Result<u64, MontecitoError> {
        let t = self.privileged(thread, || "mov r=cr73".to_string())?;
        Ok(PMV.read(t.pmv))
    }

    /// Is `thread`'s performance monitor interrupt pended?
    pub fn interrupt_pending(&self, thread: usize) -> Result<bool, MontecitoError> {
        Ok(self.thread(thread)?.interrupt)
    }

    /// Take `thread`'s pended performance monitor interrupt, as reading IVR does: its
    /// vector (PMV.vector), or `None` when none is pended. One overflow interrupt is
    /// pended however many counters overflowed (§3.3.11).
    pub fn take_interrupt(&mut self, thread: usize) -> Result<Option<u8>, MontecitoError> {
        self.thread(thread)?;
        let t = &mut self.threads[thread];
        Ok(std::mem::take(&mut t.interrupt).then(|| PMV_VECTOR.get(t.pmv) as u8))
    }

    /// PAL_PERF_MON_INFO (Table 3-34, checked against chapter 3: MD20-MD24).
    pub fn pal_perf_mon_info(&self) -> PerfMonInfo {
        pal::PERF_MON_INFO
    }

    /// Per-cycle increment of PMDn of thread `t` in a cycle of `span`.
    fn rate_of(&self, t: usize, n: usize, span: &Span) -> u64 {
        let thread = &self.threads[t];
        let pair = thread.pair(n);
        let Some(program) = pair.program else { return 0 };
        let fg = usize::from(span.thread);
        if fg >= THREADS {
            // A span of a thread the core lacks: nothing of this core runs.
            return 0;
        }
        // MD2: a thread's CPL is its span's while it runs, its PSR.cpl in the background.
        let cpl = if t == fg { span_cpl(span.privilege) } else { u64::from(thread.cpl()) };
        if !thread.enabled(pair.pmc, cpl) {
            return 0;
        }
        // §3.3.2: banked counters count only in the foreground and ignore .all.
        let banked = BANKED.contains(&n);
        let all = !banked && ALL.get(pair.pmc) == 1;
        let sees = |owner: usize| if owner == t { !banked || t == fg } else { all };
        let mesi = MESI.get(pair.pmc);
        let mut value = 0;
        // The span's own events belong to (or are assigned to) the foreground thread.
        if sees(fg) {
            let state = Some(line_state(span.mem.map_or(span.ip, |m| m.addr)));
            let c = Cycle { signals: &span.signals, write: span.mem.is_some_and(|m| m.write), state };
            value += program.value(&c, mesi);
        }
        // The background thread's floating events (§4.2.1): Floating ones stay its own;
        // Causal ones are assigned to the foreground thread; Active ones cannot happen.
        let bg = 1 - fg;
        let owner = match program.ty {
            EventType::Floating => Some(bg),
            EventType::Causal => Some(fg),
            _ => None,
        };
        if owner.is_some_and(sees) {
            // MD12: a span's `BackgroundMemoryReads` are the other thread's reads, each
            // an L3 data-read miss.
            let b = span.signals.get(Signal::BackgroundMemoryReads) as u8;
            let background = Signals::default().with(Signal::MemoryReads, b).with(Signal::L3DataReadMisses, b);
            let c = Cycle { signals: &background, write: false, state: None };
            value += program.value(&c, mesi);
        }
        // MD11: never above the event's maximum increment; Table 3-6 threshold.
        let value = value.min(program.max_inc);
        match THRESHOLD.get(pair.pmc) {
            0 => value,
            threshold => u64::from(value > threshold),
        }
    }
}

/// Virtual counter `thread × 12 + (n − 4)` is PMDn of that thread.
impl Counting for Montecito {
    fn counters(&self) -> usize {
        THREADS * COUNTERS_PER_THREAD
    }

    fn rate(&self, i: usize, span: &Span) -> u64 {
        self.rate_of(i / COUNTERS_PER_THREAD, GENERIC.start() + i % COUNTERS_PER_THREAD, span)
    }

    fn headroom(&self, i: usize) -> u64 {
        COUNT_MODULUS - self.threads[i / COUNTERS_PER_THREAD].pairs[i % COUNTERS_PER_THREAD].count
    }

    /// Table 3-7: the count wraps at 2^47 (carry out of bit 46).
    fn add(&mut self, i: usize, n: u64) -> bool {
        let (t, k) = (i / COUNTERS_PER_THREAD, i % COUNTERS_PER_THREAD);
        let thread = &mut self.threads[t];
        let total = u128::from(thread.pairs[k].count) + u128::from(n);
        thread.pairs[k].count = (total % u128::from(COUNT_MODULUS)) as u64;
        total >= u128::from(COUNT_MODULUS) && thread.overflow(GENERIC.start() + k)
    }
}
