//! Table 4-42 as the machine drives it: for each event the model maps, its type and
//! maximum increment, and what each unit mask counts (docs/montecito-model.md has the
//! same table with the reasons).
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic))]

use pmukit_arch::montecito::{pal, pmu};

use super::bus::Txn;
use super::bus_masks as bus;
use super::capture;
use super::cycle::Cause;
use super::events::{Agent, Atom, EventType, MappedEvent};
use super::frontend_masks::{self as frontend, FORCED_INDIRECT, FORCED_RETURNS};
use super::l2_masks::{self as l2, first_second};

use crate::stream::{
    L1dConflict, Signal, BE_FRAME, BE_ROTATE, BE_STAGE, FAILED_CHECK_FCHKF, FAILED_CHECK_FP, FAILED_CHECK_INT, SPEC_NAT_CONSUMED,
    SPEC_NAT_PSR_ED, SPEC_NAT_TLB_FAULT, SPEC_NAT_TLB_MISS, UNCACHED_DEMAND, UNCACHED_PREFETCH,
};
use Atom::Sig;
use EventType::{Active as A, Causal as C, Floating as F, SelfFloating as S};

const fn ev(code: u8, name: &'static str, ty: EventType, max_inc: u8, select: fn(u64) -> Option<&'static [Atom]>) -> MappedEvent {
    MappedEvent { code, name, ty, max_inc, transactions: false, mesi: false, agent: Agent::None, all: false, select }
}

/// An event that counts both threads' whatever .all says (ME23).
const fn always_all(mut e: MappedEvent) -> MappedEvent {
    e.all = true;
    e
}

const ALAT_CHECKS: [Atom; 2] = [Sig(Signal::AlatChecksInt), Sig(Signal::AlatChecksFp)];
const ALAT_FAILED: [Atom; 2] = [Sig(Signal::AlatFailedInt), Sig(Signal::AlatFailedFp)];
const ALAT_DISPLACED: [Atom; 2] = [Sig(Signal::AlatDisplacedInt), Sig(Signal::AlatDisplacedFp)];
const FAILED_CHECKS: [Atom; 2] = [Atom::AnyOf(Signal::FailedChecks, FAILED_CHECK_INT), Atom::AnyOf(Signal::FailedChecks, FAILED_CHECK_FP)];

/// A bus event: its unit mask's bits 1:0 name the agent.
const fn bus(mut e: MappedEvent) -> MappedEvent {
    e.agent = Agent::Bus;
    e
}

/// A bus event that counts transactions (or their final answers), each in the cycle
/// that made it, however many a cycle made (MD11).
const fn transactions(mut e: MappedEvent) -> MappedEvent {
    e.transactions = true;
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

/// L3 lookups by kind and outcome, for the unit masks of L3_READS and L3_WRITES (bits
/// 1:0: 01 HIT, 10 MISS, 11 ALL).
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
/// BR_MISPRED_DETAIL.ALL's rows, by prediction result (bits 1:0): ALL_PRED,
/// CORRECT_PRED, WRONG_PATH (forced predictions among them, §4.7), WRONG_TARGET.
const ALL_PREDICTIONS: [&[Atom]; 4] = [
    &[Sig(Signal::Branches)],
    &[Atom::CorrectBranches],
    &[
        Sig(Signal::PathMispredictsTaken),
        Sig(Signal::PathMispredictsNotTaken),
        Sig(Signal::ReturnMispredictsTaken),
        Sig(Signal::ReturnMispredictsNotTaken),
        Sig(Signal::IndirectMispredictsTaken),
        Sig(Signal::IndirectMispredictsNotTaken),
        FORCED_RETURNS,
        FORCED_INDIRECT,
    ],
    &[Sig(Signal::ReturnsMispredicted), Sig(Signal::IndirectMispredicts)],
];

/// ENCBR_MISPRED_DETAIL's ALL rows: the same, in cycles whose group has a branch on
/// B0 (MD41).
const ENCODED_PREDICTIONS: [[Atom; 1]; 4] = [
    [Atom::Encoded(ALL_PREDICTIONS[0])],
    [Atom::Encoded(ALL_PREDICTIONS[1])],
    [Atom::Encoded(ALL_PREDICTIONS[2])],
    [Atom::Encoded(ALL_PREDICTIONS[3])],
];

pub static EVENTS: &[MappedEvent] = &[
    // BACK_END_BUBBLE (bxx00 ALL, bxx01 FE, bxx10 L1D_FPU_RSE): every cycle with a
    // bubble, i.e. no instruction retired, or those of one cause (MD37).
    ev(0x00, "BACK_END_BUBBLE", A, 1, |u| match u & 3 {
        0b00 => Some(&[Atom::NoRetire]),
        0b01 => Some(&[Atom::Bubble(Cause::FrontEnd)]),
        0b10 => Some(&[Atom::Bubble(Cause::L1dFpu)]),
        _ => None,
    }),
    // BE_RSE_BUBBLE: ALL, BANK_SWITCH, AR_DEP, LOADRS (an interruption's entry and
    // exit, MMC39), OVERFLOW (spills), UNDERFLOW (fills).
    ev(0x01, "BE_RSE_BUBBLE", A, 1, |u| match u & 7 {
        0b000 => Some(&[Atom::Bubble(Cause::Rse)]),
        0b001 => Some(&[Sig(Signal::RseBankSwitchStallCycles)]),
        0b010 => Some(&[Sig(Signal::RseArDepStallCycles)]),
        0b011 => Some(&[Sig(Signal::RseSpillStallCycles)]),
        0b100 => Some(&[Sig(Signal::RseFillStallCycles)]),
        0b101 => Some(&[Sig(Signal::RseLoadrsStallCycles)]),
        _ => None,
    }),
    // BE_EXE_BUBBLE: ALL; GRALL (a general register's value: a load's, or `getf`'s,
    // which is GRGR, MMC54), FRALL (a floating-point register's: an FP divide), PR
    // (frcpa's predicate, in a divide's first cycle: MMC10), ARCR (a control
    // register's, MMC20), CANCEL (a load the L2D cancelled, MMC47), BANK_SWITCH (an
    // interruption's entry, MMC39) and ARCR_PR_CANCEL_BANK (those four).
    ev(0x02, "BE_EXE_BUBBLE", A, 1, |u| match u {
        0b0000 => Some(&[Atom::Bubble(Cause::Exe)]),
        0b0001 => Some(&[Atom::ExeBubble(Signal::DataDepStallCycles), Atom::ExeBubble(Signal::GrGrStallCycles)]),
        0b0010 => Some(&[Atom::ExeBubble(Signal::FrDepStallCycles)]),
        0b0011 => Some(&[Atom::ExeBubble(Signal::PrDepStallCycles)]),
        0b0100 => Some(&[Atom::ExeBubble(Signal::ArCrStallCycles)]),
        0b0101 => Some(&[Atom::ExeBubble(Signal::GrGrStallCycles)]),
        0b0110 => Some(&[Atom::ExeBubble(Signal::CancelledLoadCycles)]),
        0b0111 => Some(&[Atom::ExeBubble(Signal::BankSwitchStallCycles)]),
        0b1000 => Some(&[
            Atom::ExeBubble(Signal::ArCrStallCycles),
            Atom::ExeBubble(Signal::PrDepStallCycles),
            Atom::ExeBubble(Signal::CancelledLoadCycles),
            Atom::ExeBubble(Signal::BankSwitchStallCycles),
        ]),
        _ => None,
    }),
    // FP_TRUE_SIRSTALL: SIR stalls of subnormal results, each leading to the
    // software-assist trap (MMC53).
    ev(0x03, "FP_TRUE_SIRSTALL", A, 1, |_| Some(&[Sig(Signal::FpSirStallsTrapping)])),
    // BE_FLUSH_BUBBLE: bxx00 ALL, bxx01 BRU (a mispredict's refill), bxx10 XPN (traps
    // and thread switches, Table 4-47).
    ev(0x04, "BE_FLUSH_BUBBLE", A, 1, |u| match u & 3 {
        0b00 => Some(&[Atom::Bubble(Cause::Xpn), Atom::Bubble(Cause::Bru)]),
        0b01 => Some(&[Atom::Bubble(Cause::Bru)]),
        0b10 => Some(&[Atom::Bubble(Cause::Xpn)]),
        _ => None,
    }),
    // FP_FALSE_SIRSTALL: SIR stalls of operations whose subnormal operand made them
    // unsafe and whose result is normal (MMC61).
    ev(0x05, "FP_FALSE_SIRSTALL", A, 1, |_| Some(&[Sig(Signal::FpSirStallsFalse)])),
    // FP_FAILED_FCHKF: the `fchkf` checks of speculated operations that failed (MMC80).
    ev(0x06, "FP_FAILED_FCHKF", A, 1, |_| Some(&[Atom::AnyOf(Signal::FailedChecks, FAILED_CHECK_FCHKF)])),
    // IA64_INST_RETIRED (umask bxx00) and IA64_TAGGED_INST_RETIRED (IBRP0-3): the tags
    // are not modelled; at their reset values every instruction matches (MD16).
    ev(0x08, "IA64_INST_RETIRED", A, 6, |_| Some(&[Sig(Signal::Instructions)])),
    // FP_OPS_RETIRED: the machine's floating-point instructions.
    ev(0x09, "FP_OPS_RETIRED", A, 6, |_| Some(&[Sig(Signal::FguCryptoInstructions)])),
    // FP_FLUSH_TO_ZERO: FTZ_Real, subnormal results flushed; FTZ_Poss, those delivered
    // without flush-to-zero (MMC53).
    ev(0x0b, "FP_FLUSH_TO_ZERO", A, 2, |u| match u & 1 {
        0 => Some(&[Sig(Signal::FpFlushedToZero)]),
        _ => Some(&[Sig(Signal::FpSubnormalResults)]),
    }),
    // THREAD_SWITCH_EVENTS: MISSED (L3 misses the urgencies did not switch on, MD45),
    // L3MISS, TIMER, HINT, LP (a halted thread's, PAL_HALT_LIGHT) and ALL ("all
    // taken"); debug switches do not happen in the machine.
    ev(0x0c, "THREAD_SWITCH_EVENTS", A, 1, |u| match u & 7 {
        0b000 => Some(&[Sig(Signal::ThreadSwitchesMissed)]),
        0b001 => Some(&[Sig(Signal::ThreadSwitchesL3Miss)]),
        0b010 => Some(&[Sig(Signal::ThreadSwitchesTimeout)]),
        0b011 => Some(&[Sig(Signal::ThreadSwitchesHint)]),
        0b100 => Some(&[Sig(Signal::ThreadSwitchesLowPower)]),
        0b111 => Some(&[
            Sig(Signal::ThreadSwitchesL3Miss),
            Sig(Signal::ThreadSwitchesTimeout),
            Sig(Signal::ThreadSwitchesHint),
            Sig(Signal::ThreadSwitchesLowPower),
        ]),
        _ => None,
    }),
    // THREAD_SWITCH_GATED: FWDPRO, the L3 misses that would have switched before the
    // thread switched in retired anything (MMC46); LP, those that would have switched
    // to a halted thread; ALL both (PIPE none).
    ev(0x0d, "THREAD_SWITCH_GATED", A, 1, |u| match u & 7 {
        0b001 => Some(&[Sig(Signal::ThreadSwitchesGatedLowPower)]),
        0b101 => Some(&[Sig(Signal::ThreadSwitchesGated)]),
        0b111 => Some(&[Sig(Signal::ThreadSwitchesGated), Sig(Signal::ThreadSwitchesGatedLowPower)]),
        _ => None,
    }),
    // THREAD_SWITCH_CYCLE: L2D and ANYSTALL, the cycles a switch waits for the leaving
    // thread's L2D returns (MD57; CRAB none); ALL_GATED, a thread's cycles from its
    // switch-in to its first retirement (MMC46); TOTAL, from a switch's start until it
    // happens, those included.
    ev(0x0e, "THREAD_SWITCH_CYCLE", A, 1, |u| match u & 7 {
        0b010 | 0b011 => Some(&[Sig(Signal::ThreadSwitchL2dStall)]),
        0b110 => Some(&[Sig(Signal::ThreadSwitchGatedCycles)]),
        0b111 => Some(&[Sig(Signal::ThreadSwitchCycles)]),
        _ => None,
    }),
    // THREAD_SWITCH_STALL: switches after at least 4 (any), 8, …, 4096 cycles without
    // a retirement (MD44); umask j is class j + 1 or more.
    ev(0x0f, "THREAD_SWITCH_STALL", A, 1, |u| {
        const AT: [[Atom; 1]; 11] = {
            let mut at = [[Atom::Cycles]; 11];
            let (mut rest, mut class): (&mut [[Atom; 1]], u8) = (&mut at, 1);
            while let [entry, tail @ ..] = rest {
                *entry = [Atom::AtLeast(Signal::ThreadSwitchStall, class)];
                (rest, class) = (tail, class + 1);
            }
            at
        };
        AT.get(u as usize).map(|a| a.as_slice())
    }),
    // BRANCH_EVENT: the branches the ETB captures, or the retirements the IP-EAR
    // records (MD54).
    ev(capture::BRANCH_EVENT, "BRANCH_EVENT", A, 1, |_| Some(&[Atom::Captured(capture::ETB | capture::IPEAR)])),
    // CPU_OP_CYCLES: ALL and QUAL (qualification not modelled, MD16).
    ev(pal::CPU_OP_CYCLES, "CPU_OP_CYCLES", C, 1, |_| Some(&[Atom::Cycles])),
    // CPU_CPL_CHANGES: the changes that leave or enter a level of the unit mask (bit n,
    // level n; ALL every change, once).
    ev(0x13, "CPU_CPL_CHANGES", A, 1, |u| {
        const AT: [[Atom; 1]; 16] = {
            let mut at = [[Atom::Cycles]; 16];
            let (mut rest, mut levels): (&mut [[Atom; 1]], u8) = (&mut at, 0);
            while let [entry, tail @ ..] = rest {
                *entry = [Atom::AnyOf(Signal::PrivilegeChange, levels)];
                (rest, levels) = (tail, levels + 1);
            }
            at
        };
        AT.get((u & 0xf) as usize).filter(|_| u & 0xf != 0).map(|a| a.as_slice())
    }),
    // CPU_OP_CYCLES_HALTED: the cycles the thread is halted (PAL_HALT_LIGHT), the only
    // ones a halted cycle counts (`rate.rs`). Max 1, not 7 (MD26).
    ev(pmu::CYCLES_HALTED as u8, "CPU_OP_CYCLES_HALTED", C, 1, |_| Some(&[Sig(Signal::HaltedCycles)])),
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
    // L2I_DEMAND_READS: "demand fetches that miss both the L1I and the ISB", the
    // uncacheable code's included (MMC57).
    ev(0x42, "L2I_DEMAND_READS", A, 1, |_| Some(&[Sig(Signal::ICacheMisses), Atom::AnyOf(Signal::UncachedFetches, UNCACHED_DEMAND)])),
    // L1I_EAR_EVENTS, DATA_EAR_EVENTS: the misses the EARs capture (PMC37, PMC40; MD53).
    ev(capture::L1I_EAR_EVENTS, "L1I_EAR_EVENTS", F, 1, |_| Some(&[Atom::Captured(capture::IEAR)])),
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
    // L1I_SNOOP: "each fc instruction will produce 1 snoop request to L1I after it
    // goes out on the bus … some bus transactions also can cause L1I snoops": the
    // invalidating ones of the other core (BRIL) and the I/O bridge (BIL, BRIL).
    // L2I victims send none: the machine's L1I is not kept inclusive (MMC35).
    ev(0x4a, "L1I_SNOOP", C, 1, |_| {
        use Signal::*;
        Some(&[Sig(CodeFlushes), Sig(PeerBril), Sig(IoBil), Sig(IoBril)])
    }),
    ev(0x4b, "L1I_PURGE", C, 1, |_| Some(&[Atom::L2ItlbMisses])),
    ev(0x4d, "INST_DISPERSED", A, 6, |_| Some(&[Sig(Signal::Instructions)])),
    // SYLL_NOT_DISPERSED: any combination of EXPL (bit 0), IMPL (bit 1), FE (bit 2) and
    // MLX (bit 3) counts the union of its reasons (MD38, MMC60).
    ev(0x4e, "SYLL_NOT_DISPERSED", A, 5, |u| {
        // Each mask's reasons, in one atom (a `&'static` slice per mask).
        macro_rules! reasons {
            ($($m:literal)*) => {
                match u & 0b1111 {
                    $($m => Some(&[Atom::SyllablesNotDispersed($m)]),)*
                    _ => None,
                }
            };
        }
        reasons!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15)
    }),
    // SYLL_OVERCOUNT bits 1:0: 00 nothing, 01 EXPL, 10 IMPL, 11 ALL (Table 4-127):
    // what SYLL_NOT_DISPERSED charges a stop beyond the syllables it cost (MD38).
    ev(0x4f, "SYLL_OVERCOUNT", A, 2, |u| match u & 0b11 {
        0b01 => Some(&[Atom::SyllablesOvercounted(0b01)]),
        0b10 => Some(&[Atom::SyllablesOvercounted(0b10)]),
        0b11 => Some(&[Atom::SyllablesOvercounted(0b11)]),
        _ => None,
    }),
    // NOPS_RETIRED: nops with a true predicate, the bundles' empty slots (ia64.rs).
    ev(0x50, "NOPS_RETIRED", A, 6, |_| Some(&[Sig(Signal::Nops)])),
    // PREDICATE_SQUASHED_RETIRED: the instructions of if-converted skips whose
    // predicate was false (MMC32).
    ev(0x51, "PREDICATE_SQUASHED_RETIRED", A, 6, |_| Some(&[Sig(Signal::PredicatedOff)])),
    // SERIALIZATION_EVENTS: the kernel's srlz.i after it sets the processor status (MMC31).
    // DATA_DEBUG_REGISTER_FAULT: the data debug faults a debugger's breakpoint took (MD58).
    ev(0x52, "DATA_DEBUG_REGISTER_FAULT", A, 1, |_| Some(&[Sig(Signal::DataDebugFaults)])),
    ev(0x53, "SERIALIZATION_EVENTS", A, 1, |_| Some(&[Sig(Signal::InstructionSerializations)])),
    ev(0x54, "BR_PATH_PRED", A, 3, frontend::br_path_pred),
    // INST_FAILED_CHKS_RETIRED (Table 4-82, bits 1:0: 01 INT, 10 FP, 11 ALL): the chk.s
    // whose load a page not present NaT'd (MMC55).
    ev(0x55, "INST_FAILED_CHKS_RETIRED", A, 1, |u| first_second(u, &FAILED_CHECKS)),
    // INST_CHKA_LDC_ALAT, INST_FAILED_CHKA_LDC_ALAT, ALAT_CAPACITY_MISS (bits 1:0: 01
    // INT, 10 FP, 11 ALL): the check loads of advanced loads (MMC33).
    ev(0x56, "INST_CHKA_LDC_ALAT", A, 2, |u| first_second(u, &ALAT_CHECKS)),
    ev(0x57, "INST_FAILED_CHKA_LDC_ALAT", A, 1, |u| first_second(u, &ALAT_FAILED)),
    ev(0x58, "ALAT_CAPACITY_MISS", A, 2, |u| first_second(u, &ALAT_DISPLACED)),
    // BR_MISPRED_DETAIL: bits 3:2 branch type (ALL, IPREL, RETURN, NRETIND), bits 1:0
    // prediction result (ALL_PRED, CORRECT_PRED, WRONG_PATH, WRONG_TARGET) (MD18).
    ev(0x5b, "BR_MISPRED_DETAIL", A, 3, |u| match (u >> 2 & 3, u & 3) {
        (0b00, p) => ALL_PREDICTIONS.get(p as usize).copied(),
        (0b01, 0b10) => Some(&[Sig(Signal::PathMispredictsTaken), Sig(Signal::PathMispredictsNotTaken)]),
        (0b01, 0b00) => Some(&[Atom::IpRelBranches]),
        (0b01, 0b01) => Some(&[Atom::IpRelCorrect]),
        (0b10, 0b00) => Some(&[Sig(Signal::Returns)]),
        (0b10, 0b01) => Some(&[Atom::CorrectReturns]),
        (0b10, 0b10) => Some(&[FORCED_RETURNS, Sig(Signal::ReturnMispredictsTaken), Sig(Signal::ReturnMispredictsNotTaken)]),
        (0b10, 0b11) => Some(&[Sig(Signal::ReturnsMispredicted)]),
        (0b11, 0b00) => Some(&[Sig(Signal::IndirectBranches)]),
        (0b11, 0b01) => Some(&[Atom::IndirectCorrect]),
        (0b11, 0b10) => Some(&[FORCED_INDIRECT, Sig(Signal::IndirectMispredictsTaken), Sig(Signal::IndirectMispredictsNotTaken)]),
        (0b11, 0b11) => Some(&[Sig(Signal::IndirectMispredicts)]),
        // IP-relative targets are never wrong.
        _ => None,
    }),
    // The streaming prefetcher (MMC50): its requests, the RAB's eight entries all taken
    // or all but one.
    ev(0x5f, "L1I_STRM_PREFETCHES", A, 1, |_| Some(&[Sig(Signal::L1iStrmPrefetches)])),
    ev(0x60, "L1I_RAB_FULL", C, 1, |_| Some(&[Atom::AtLeast(Signal::RabLive, 8)])),
    // BE_BR_MISPRED_DETAIL (Table 4-45, bits 1:0: 00 ANY, 01 STG, 10 ROT, 11 PFS): branch
    // bundles whose effect on the register frame the front end predicted wrongly
    // beside a right path (MD61).
    ev(0x61, "BE_BR_MISPRED_DETAIL", A, 1, |u| match u & 3 {
        0b00 => Some(&[Atom::AnyOf(Signal::BackEndMispredicts, BE_STAGE | BE_ROTATE | BE_FRAME)]),
        0b01 => Some(&[Atom::AnyOf(Signal::BackEndMispredicts, BE_STAGE)]),
        0b10 => Some(&[Atom::AnyOf(Signal::BackEndMispredicts, BE_ROTATE)]),
        _ => Some(&[Atom::AnyOf(Signal::BackEndMispredicts, BE_FRAME)]),
    }),
    // ENCBR_MISPRED_DETAIL: branches "only if there is a branch on port B0", which
    // only a BBB bundle's first slot gives (MD41): BR_MISPRED_DETAIL's ALL rows in
    // such groups' cycles. 00xx and 11xx (ALL, ALL2) count them; 01xx nothing; 10xx
    // OVERSUB: no nop.b or brp in an MIB, MFB or MMB comes before a BBB (MMC79).
    ev(0x63, "ENCBR_MISPRED_DETAIL", A, 3, |u| match u >> 2 & 3 {
        0b00 | 0b11 => ENCODED_PREDICTIONS.get((u & 3) as usize).map(|a| a.as_slice()),
        _ => None,
    }),
    ev(0x64, "L1I_RAB_ALMOST_FULL", C, 1, |_| Some(&[Atom::AtLeast(Signal::RabLive, 7)])),
    // L1I_FETCH_RAB_HIT: demand fetches of a line a prefetch is still bringing (MMC25).
    ev(0x65, "L1I_FETCH_RAB_HIT", A, 1, |_| Some(&[Sig(Signal::L1iFetchRabHits)])),
    // L1I_FETCH_ISB_HIT: fetches bypassed from the streaming buffer, all "just in
    // time" (the line is there when fetched, MMC19).
    ev(0x66, "L1I_FETCH_ISB_HIT", A, 1, |_| Some(&[Sig(Signal::IsbHits)])),
    // L1I_PREFETCH_STALL: bxx10 FLOW, bxx11 ALL (Table 4-85); L1I_PVAB_OVERFLOW (MMC50).
    ev(0x67, "L1I_PREFETCH_STALL", A, 1, |u| match u & 3 {
        0b10 => Some(&[Atom::AtLeast(Signal::PrefetchStall, 2)]),
        0b11 => Some(&[Atom::Present(Signal::PrefetchStall)]),
        _ => None,
    }),
    ev(0x68, "BR_MISPRED_DETAIL2", A, 2, frontend::br_mispred_detail2),
    ev(0x69, "L1I_PVAB_OVERFLOW", A, 1, |_| Some(&[Sig(Signal::PvabOverflows)])),
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
    // L2I_UC_READS: "UC code reads handled by L2I", L2I_READS' unit masks: the demand
    // fetches' and the next-line prefetcher's (MMC57, MMC76), at most one a cycle.
    // No cache holds the code, so none hits.
    ev(0x79, "L2I_UC_READS", F, 1, |u| match (u >> 2 & 3, u & 3) {
        (0b10 | 0b11, 0b01) => Some(&[Atom::AnyOf(Signal::UncachedFetches, UNCACHED_DEMAND)]),
        (0b10 | 0b11, 0b10) => Some(&[Atom::AnyOf(Signal::UncachedFetches, UNCACHED_PREFETCH)]),
        (0b10 | 0b11, 0b11) => Some(&[Atom::AnyOf(Signal::UncachedFetches, UNCACHED_DEMAND | UNCACHED_PREFETCH)]),
        _ => None,
    }),
    // L2I_VICTIMIZATIONS (no definition survives, MD48): valid lines a fill replaces.
    ev(0x7a, "L2I_VICTIMIZATIONS", F, 1, |_| Some(&[Sig(Signal::L2iVictims)])),
    // L2I_RECIRCULATES and L2I_HIT_CONFLICTS have L2I_READS' unit masks. A request
    // that recirculates matches a pending line's tag and a conflict abandons a lookup
    // that would hit: both are hits, so MISS counts nothing (MMC25, MD48).
    ev(0x7b, "L2I_RECIRCULATES", F, 1, l2::l2i_recirculates),
    // L2I_L3_REJECTS: L2I misses that found the 16 request buffers taken, demand and
    // prefetch as bits 1:0 say (MMC28); MISS and ALL count them, HIT none (a hit
    // sends no request).
    ev(0x7c, "L2I_L3_REJECTS", F, 1, l2::l2i_l3_rejects),
    ev(0x7d, "L2I_HIT_CONFLICTS", F, 1, l2::l2i_hit_conflicts),
    // L2I_SPEC_ABORTS: a demand fetch's change of a prefetch to a demand request,
    // aborted because the prefetch was already looked up (MMC25).
    ev(0x7e, "L2I_SPEC_ABORTS", F, 1, |_| Some(&[Sig(Signal::L2iSpecAborts)])),
    // L2I_SNOOP_HITS: snoops (another agent's invalidation, an `fc`) that found the
    // line in the L2I and invalidated it (MMC35).
    ev(0x7f, "L2I_SNOOP_HITS", C, 1, |_| Some(&[Sig(Signal::L2iSnoopHits)])),
    // System bus and system interface events (§4.11, `bus.rs`; MD14, MD15, MD46).
    transactions(bus(ev(0x80, "BUS_RD_HIT", S, 1, bus::bus_rd_hit))),
    transactions(bus(ev(0x81, "BUS_RD_HITM", S, 1, bus::bus_rd_hitm))),
    transactions(bus(ev(0x82, "BUS_RD_INVALID_HITM", S, 1, bus::bus_rd_invalid_hitm))),
    transactions(bus(ev(0x83, "BUS_RD_INVALID_BST_HITM", S, 1, bus::bus_rd_invalid_bst_hitm))),
    transactions(bus(ev(0x84, "BUS_HITM", S, 1, bus::bus_hitm))),
    transactions(bus(ev(0x87, "BUS_ALL", S, 1, bus::bus_all))),
    bus(ev(0x88, "BUS_DATA_CYCLE", C, 1, bus::bus_data_cycle)),
    transactions(bus(ev(0x89, "MEM_READ_CURRENT", C, 1, bus::mem_read_current))),
    transactions(bus(ev(0x8a, "BUS_MEMORY", S, 1, bus::bus_memory))),
    transactions(bus(ev(0x8b, "BUS_MEM_READ", S, 1, bus::bus_mem_read))),
    transactions(bus(ev(0x8c, "BUS_RD_DATA", S, 1, bus::bus_rd_data))),
    transactions(bus(ev(0x8d, "BUS_RD_PRTL", S, 1, bus::bus_rd_prtl))),
    // SI_CYCLES: the SI clock is the core's (bus ratio × bus clock).
    ev(0x8e, "SI_CYCLES", C, 1, |_| Some(&[Atom::Cycles])),
    bus(ev(0x8f, "BUS_SNOOP_STALL_CYCLES", S, 1, bus::bus_snoop_stall_cycles)),
    transactions(bus(ev(0x92, "BUS_WR_WB", S, 1, bus::bus_wr_wb))),
    bus(ev(0x93, "BUS_B2B_DATA_CYCLES", C, 1, bus::bus_b2b_data_cycles)),
    ev(0x97, "SI_IOQ_LIVE_REQ_LO", C, 7, bus::si_ioq_live_lo),
    ev(0x98, "SI_IOQ_LIVE_REQ_HI", C, 1, bus::si_ioq_live_hi),
    si(ev(0x9e, "SI_RQ_INSERTS", S, 2, bus::si_rq_inserts)),
    si(ev(0x9f, "SI_RQ_LIVE_REQ_LO", C, 7, bus::si_rq_live_lo)),
    si(ev(0xa0, "SI_RQ_LIVE_REQ_HI", C, 1, bus::si_rq_live_hi)),
    si(ev(0xa1, "SI_WRITEQ_INSERTS", S, 2, bus::si_writeq_inserts)),
    si(ev(0xa2, "SI_WRITEQ_LIVE_REQ_LO", C, 7, bus::si_writeq_live_lo)),
    si(ev(0xa3, "SI_WRITEQ_LIVE_REQ_HI", C, 1, bus::si_writeq_live_hi)),
    // SI_WAQ_COLLISIONS: an fc's BIL meeting its line's write-back in the write
    // address queue (MMC35): this core's own, so SELF and EITHER alike.
    si(ev(0xa4, "SI_WAQ_COLLISIONS", S, 1, |_| Some(&[Sig(Signal::SiWaqCollisions)]))),
    si(ev(0xa5, "SI_CCQ_INSERTS", S, 2, bus::si_ccq_inserts)),
    si(ev(0xa6, "SI_CCQ_LIVE_REQ_LO", C, 7, bus::si_ccq_live_lo)),
    si(ev(0xa7, "SI_CCQ_LIVE_REQ_HI", C, 1, bus::si_ccq_live_hi)),
    // SI_IOQ_COLLISIONS: an fc's BIL and its line's write-back meeting (MMC35).
    ev(0xaa, "SI_IOQ_COLLISIONS", C, 1, |_| Some(&[Sig(Signal::SiIoqCollisions)])),
    si(ev(0xab, "SI_SCB_INSERTS", C, 1, bus::si_scb_inserts)),
    si(ev(0xac, "SI_SCB_LIVE_REQ_LO", C, 7, bus::si_scb_live_lo)),
    si(ev(0xad, "SI_SCB_LIVE_REQ_HI", C, 1, bus::si_scb_live_hi)),
    transactions(ev(0xae, "SI_SCB_SIGNOFFS", C, 1, bus::si_scb_signoffs)),
    // SI_WDQ_ECC_ERRORS bits 3:2: 00 SGL, 01 DBL, 1x ALL; bit 0 the agent. Errors
    // happen only under fault injection, in this core's writes (MMC26, MD49).
    si(ev(0xaf, "SI_WDQ_ECC_ERRORS", S, 1, |u| match u >> 2 & 3 {
        0b00 => Some(&[Sig(Signal::WdqEccSingle)]),
        0b01 => Some(&[Sig(Signal::WdqEccDouble)]),
        _ => Some(&[Sig(Signal::WdqEccSingle), Sig(Signal::WdqEccDouble)]),
    })),
    // L2D_INSERT_MISSES / L2D_INSERT_HITS: the L2D's first lookups, missing (secondary
    // misses too: "this event will count secondary misses") or hitting.
    ev(0xb0, "L2D_INSERT_MISSES", F, 4, |_| Some(&[Sig(Signal::L2DataMisses), l2::SEC_L1W, l2::SEC_OZQ, l2::SEC_FILL])),
    ev(0xb1, "L2D_INSERT_HITS", F, 4, |_| Some(&[Sig(Signal::L2DataHits)])),
    ev(0xb4, "ER_MEM_READ_OUT_HI", F, 2, bus::er_mem_read_out_hi),
    ev(0xb5, "ER_MEM_READ_OUT_LO", F, 7, bus::er_mem_read_out_lo),
    always_all(ev(0xb6, "ER_SNOOPQ_REQ_HI", C, 1, bus::er_snoopq_hi)),
    always_all(ev(0xb7, "ER_SNOOPQ_REQ_LO", C, 7, bus::er_snoopq_lo)),
    always_all(ev(0xb8, "ER_BRQ_LIVE_REQ_HI", C, 2, bus::er_brq_live_hi)),
    always_all(ev(0xb9, "ER_BRQ_LIVE_REQ_LO", C, 7, bus::er_brq_live_lo)),
    ev(0xba, "ER_BRQ_REQ_INSERTED", F, 1, bus::er_brq_req_inserted),
    // The BRQ's forward progress (MMC73): while a request of one L1 waits for a
    // request buffer, it rejects the other L1's requests ("for L1D/L1I forward
    // progress"), and while a write waits for a write buffer every L1 request (the
    // "Big Hammer"); .all is ignored (ME23).
    always_all(ev(0xbc, "ER_REJECT_ALL_L1_REQ", C, 1, |_| Some(&[Atom::AnyOf(Signal::BrqRejecting, 0b100)]))),
    always_all(ev(0xbd, "ER_REJECT_ALL_L1D_REQ", C, 1, |_| Some(&[Atom::AnyOf(Signal::BrqRejecting, 0b001)]))),
    always_all(ev(0xbe, "ER_REJECT_ALL_L1I_REQ", C, 1, |_| Some(&[Atom::AnyOf(Signal::BrqRejecting, 0b010)]))),
    ev(0xc0, "L1DTLB_TRANSFER", A, 1, |_| Some(&[Atom::L1dtlbTransfers])),
    ev(0xc1, "L2DTLB_MISSES", A, 4, |_| Some(&[Atom::L2DtlbMisses])),
    ev(0xc2, "L1D_READS_SET0", A, 2, |_| Some(&[Atom::CacheableLoads])),
    ev(0xc3, "DATA_REFERENCES_SET0", A, 4, |_| Some(&[Atom::DataReferences])),
    ev(0xc4, "L1D_READS_SET1", A, 2, |_| Some(&[Atom::CacheableLoads])),
    ev(0xc5, "DATA_REFERENCES_SET1", A, 4, |_| Some(&[Atom::DataReferences])),
    // DATA_DEBUG_REGISTER_MATCHES: the accesses a data breakpoint matched (MD58).
    ev(0xc6, "DATA_DEBUG_REGISTER_MATCHES", A, 1, |_| Some(&[Sig(Signal::DataDebugMatches)])),
    // L1D_READ_MISSES: bit 0 = 0 ALL, 1 RSE_FILL (the RSE's fills' misses, MMC17).
    ev(0xc7, "L1D_READ_MISSES", A, 2, |u| match u & 1 {
        0 => Some(&[Atom::L1dReadMisses]),
        _ => Some(&[Atom::RseFillMisses]),
    }),
    ev(capture::DATA_EAR_EVENTS, "DATA_EAR_EVENTS", F, 1, |_| Some(&[Atom::Captured(capture::DEAR)])),
    // DTLB_INSERTS_HPW: every L2DTLB miss is walked and inserted by the HPW.
    ev(0xc9, "DTLB_INSERTS_HPW", F, 4, |_| Some(&[Atom::L2DtlbMisses])),
    // BE_L1D_FPU_BUBBLE: ALL; FPU (a SIR stall, MMC53); L1D (an LSU-full stall), of
    // which L1D_HPW (the page walker), L1D_TLB (an L2DTLB to L1DTLB transfer), L1D_NAT
    // (a NaT's recirculate, MMC42), L1D_PIPE_RECIRC, L1D_FILLCONF, L1D_LDCONF and
    // L1D_LDCHK (MMC44), L1D_AR_CR (an entry's ar.unat read, MMC68); the other L1D
    // reasons are not in the stream.
    ev(0xca, "BE_L1D_FPU_BUBBLE", A, 1, |u| match u {
        0b0000 => Some(&[Atom::Bubble(Cause::L1dFpu)]),
        0b0001 => Some(&[Atom::L1dBubble(Signal::FpuStallCycles)]),
        0b0010 => Some(&[Atom::L1dBubble(Signal::LsuFullStallCycles)]),
        0b0100 => Some(&[Atom::L1dConflict(L1dConflict::Recirculate)]),
        0b0101 => Some(&[Atom::L1dBubble(Signal::HpwStallCycles)]),
        0b0111 => Some(&[Atom::L1dConflict(L1dConflict::Fill)]),
        0b1000 => Some(&[Atom::L1dConflict(L1dConflict::ArCr)]),
        0b1001 => Some(&[Atom::L1dBubble(Signal::L2dBackPressureCycles)]),
        0b1010 => Some(&[Atom::L1dBubble(Signal::DTlbMissWaitCycles)]),
        0b1011 => Some(&[Atom::L1dConflict(L1dConflict::Store)]),
        0b1100 => Some(&[Atom::L1dConflict(L1dConflict::Check)]),
        0b1101 => Some(&[Atom::L1dConflict(L1dConflict::Nat)]),
        _ => None,
    }),
    // L2D_MISSES: Table 4-42 leaves its type blank; the description says F (MD26).
    ev(0xcb, "L2D_MISSES", F, 1, |_| Some(&[Atom::L2dMisses])),
    ev(0xcd, "LOADS_RETIRED", A, 4, |_| Some(&[Sig(Signal::Loads)])),
    // §4.15: misaligned accesses the hardware performed; one that traps is not
    // retired (MMC56).
    ev(0xce, "MISALIGNED_LOADS_RETIRED", A, 4, |_| Some(&[Sig(Signal::MisalignedReads)])),
    ev(0xcf, "UC_LOADS_RETIRED", A, 4, |_| Some(&[Atom::UncacheableLoads])),
    ev(0xd0, "UC_STORES_RETIRED", A, 2, |_| Some(&[Atom::UncacheableStores])),
    ev(0xd1, "STORES_RETIRED", A, 2, |_| Some(&[Sig(Signal::Stores)])),
    ev(0xd2, "MISALIGNED_STORES_RETIRED", A, 2, |_| Some(&[Sig(Signal::MisalignedWrites)])),
    ev(0xd8, "LOADS_RETIRED_INTG", A, 2, |_| Some(&[Atom::IntegerLoads])),
    // SPEC_LOADS_NATTED (Table 4-125): the integer ld.s that returned a NaT (MMC42):
    // deferred by the OS's PSR.ed (DEF_PSR_ED), for a NaT address (NAT_CNSM), or by the
    // hardware for a page not present (DEF_TLB_FAULT: Linux's DCR.dp, MMC55) or for a
    // walk that found no translation (DEF_TLB_MISS: the DCR.dm a hypervisor sets for
    // its guests, MMC77). No walker's reference to the VHPT faults, so VHPT_MISS has
    // none.
    ev(0xd9, "SPEC_LOADS_NATTED", A, 2, |u| match u {
        0b0000 => Some(&[
            Atom::AnyOf(Signal::SpecNat, SPEC_NAT_PSR_ED),
            Atom::AnyOf(Signal::SpecNat, SPEC_NAT_CONSUMED),
            Atom::AnyOf(Signal::SpecNat, SPEC_NAT_TLB_FAULT),
            Atom::AnyOf(Signal::SpecNat, SPEC_NAT_TLB_MISS),
        ]),
        0b0010 => Some(&[Atom::AnyOf(Signal::SpecNat, SPEC_NAT_TLB_MISS)]),
        0b0011 => Some(&[Atom::AnyOf(Signal::SpecNat, SPEC_NAT_TLB_FAULT)]),
        0b0100 => Some(&[Atom::AnyOf(Signal::SpecNat, SPEC_NAT_CONSUMED)]),
        0b0101 => Some(&[Atom::AnyOf(Signal::SpecNat, SPEC_NAT_PSR_ED)]),
        _ => None,
    }),
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
    // L2D_OZQ_CANCELS0.RECIRC (b0000), the store matches by stage (b0010-b0101), REL
    // (b0111), BANK_CONF (b1000), SEMA (b1001), OVER_SUB (b1010), MISC_ORDER (b1101)
    // and L2D_OZQ_CANCELS1.ANY (bxx00): the machine's OzQ cancels are recirculates
    // beyond the one a clock (MMC29), reads that found a store to their bytes in the
    // pipeline (MMC37), bypassing hits that lost their bank (MMC36), release stores,
    // semaphores and `sync.i`s that found older requests of their thread (MMC38),
    // and secondary misses a fill woke beyond the four a clock (MMC29).
    ev(0xe0, "L2D_OZQ_CANCELS0", F, 4, l2::l2d_ozq_cancels0),
    ev(0xe1, "L2D_OZQ_FULL", F, 1, |u| if u == 0 { Some(&[Sig(Signal::L2dOzqFull)]) } else { None }),
    ev(0xe2, "L2D_OZQ_CANCELS1", F, 4, l2::l2d_ozq_cancels1),
    // L2D_BYPASS bits 1:0: L2_DATA1 hits by the first path, L2_DATA2 by the second,
    // L3_DATA1 misses the L3 served; 11 counts nothing (MMC36).
    ev(0xe4, "L2D_BYPASS", F, 4, |u| match u & 3 {
        0b00 => Some(&[Sig(Signal::L2dBypassL1d)]),
        0b01 => Some(&[Sig(Signal::L2dBypassL1w)]),
        0b10 => Some(&[Sig(Signal::L3DataBypasses)]),
        _ => None,
    }),
    // L2D_OZQ_RELEASE: clocks a release store waits in the OzQ for its thread's older
    // requests and then writes (MMC38).
    ev(0xe5, "L2D_OZQ_RELEASE", F, 1, |_| Some(&[Atom::Present(Signal::L2dOzqReleaseLive)])),
    // L2D_REFERENCES (set 2): bits 1:0 01 reads, 10 writes, 11 both.
    ev(0xe6, "L2D_REFERENCES", F, 4, |u| match u & 3 {
        0b01 => Some(&[Atom::L2dReads, Atom::FpL2dReads]),
        0b10 => Some(&[Atom::L2dWrites]),
        0b11 => Some(&[Atom::L2dReads, Atom::FpL2dReads, Atom::L2dWrites]),
        _ => None,
    }),
    // L2D_L3ACCESS_CANCEL bits 2:0: INV_L3_BYP the L3 accesses of bypassing hits
    // (not true misses), SPEC_L3_BYP of uncacheable requests (MMC36), ER_REJECT the
    // misses that found every request buffer taken (MMC28), ANY all of them;
    // P2_COV_SNP_FILL_NOSNP a snoop within three cycles of its line's fill (MMC51);
    // P2_COV_SNP_TEM a snoop that found a tag error under fault injection (MMC67);
    // TAIL_TRANS_DIS the cycles the BRQ rejects L1 requests for forward progress,
    // which throttle the transform to prefetches (MMC75); the victim buffer's case
    // counts nothing.
    ev(0xe8, "L2D_L3ACCESS_CANCEL", F, 1, l2::l2d_l3access_cancel),
    // L2D_OZDB_FULL (THIS, b0000; others undefined): cycles every entry of the OzQ's
    // data buffer holds a write's data (MMC69).
    ev(0xe9, "L2D_OZDB_FULL", F, 1, |u| if u == 0 { Some(&[Atom::Present(Signal::L2dOzdbFull)]) } else { None }),
    ev(0xea, "L2D_FORCE_RECIRC", F, 4, l2::l2d_force_recirc),
    // L2D_ISSUED_RECIRC_OZQ_ACC: forced recirculates that issued, one a clock (MMC29).
    ev(0xeb, "L2D_ISSUED_RECIRC_OZQ_ACC", F, 1, |_| Some(&[Sig(Signal::L2dRecirculates)])),
    // L2D_BAD_LINES_SELECTED (b0xxx ANY): valid lines a fill replaced while its set had
    // an invalid way (MMC66).
    ev(0xec, "L2D_BAD_LINES_SELECTED", F, 4, |u| if u & 0b1000 == 0 { Some(&[Sig(Signal::L2dBadLinesSelected)]) } else { None }),
    // L2D_STORE_HIT_SHARED (b0xxx ANY): stores to a line the other core shares, which
    // the L2D upgrades with a BIL (MMC23).
    ev(0xed, "L2D_STORE_HIT_SHARED", F, 2, |u| if u & 0b1000 == 0 { Some(&[Sig(Signal::StoresHitShared)]) } else { None }),
    // L2D_OZQ_ACQUIRE: cycles a semaphore's acquire is in the OzQ (MMC29).
    // TAGGED_L2D_RETURN_PORT (Table 4-42 only, ME2: "Tagged L2D Return Ports 0-3"):
    // cycles the L2D returns data to the core, one a cycle as its Max Inc/Cyc (MD59).
    ev(0xee, "TAGGED_L2D_RETURN_PORT", F, 1, |_| Some(&[Atom::L2dReturns])),
    ev(0xef, "L2D_OZQ_ACQUIRE", F, 1, |_| Some(&[Atom::Present(Signal::L2dOzqAcquireLive)])),
    // L2D_OPS_ISSUED (bit 3 ignored): the L2D's operations by kind, each issued as a
    // hit in the end: integer loads (L1D read misses), FP loads (all of them: the L1D
    // holds no FP data), semaphores (RMW), other stores, lfetches the L1D missed, and
    // the page walker's reads (OTHER).
    ev(0xf0, "L2D_OPS_ISSUED", F, 4, |u| match u & 0b0111 {
        0b000 => Some(&[Atom::L2dReads]),
        0b001 => Some(&[Atom::FpL2dReads]),
        0b010 => Some(&[Atom::CacheableAtomics]),
        0b011 => Some(&[Atom::L2dStores]),
        0b100 | 0b110 => Some(&[Sig(Signal::L2PrefetchHitsL2), Sig(Signal::L2PrefetchHitsL3), Sig(Signal::L2PrefetchLocalMemory)]),
        0b101 | 0b111 => Some(&[Sig(Signal::MainTlbMisses)]),
        _ => None,
    }),
    // L2D_FILLB_FULL: L2D misses that found the 16 request buffers taken (MMC28).
    ev(0xf1, "L2D_FILLB_FULL", F, 1, |u| if u == 0 { Some(&[Sig(Signal::L2dFillBufferFull)]) } else { None }),
    ev(0xf2, "L2D_FILL_MESI_STATE", F, 1, bus::l2d_fill_mesi_state),
    // L2D_VICTIMB_FULL: writes that found the 8 write buffers taken (MMC52).
    ev(0xf3, "L2D_VICTIMB_FULL", F, 1, |u| if u == 0 { Some(&[Sig(Signal::L2dVictimBufferFull)]) } else { None }),
];
