//! The system-interface events (§4.11): the core's front-side bus transactions by
//! type, and the arbiter and external-request queues they pass through (Tables 4-55 to
//! 4-70, 4-109 to 4-124). The machine computes each transaction from its caches, its
//! write-coalescing buffers and its uncacheable accesses (MD15, MD46).

use super::events::{Atom, Cycle};
use crate::stream::Signal;

/// A front-side bus transaction type (§4.11; Table 4-60 names the sizes): full-line
/// reads (BRL) of data (`BrlData`) or code, reads for ownership (BRIL), 0-byte
/// invalidations (BIL), partial reads (BRP), full-line writes of dirty lines (EWB) or
/// of coalesced ones (`WcLine`), partial writes (BWP) and clean castouts (0-byte BWL).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Txn {
    Brl,
    BrlData,
    Bril,
    Bil,
    Brp,
    Ewb,
    WcLine,
    Bwp,
    CastOut,
}

/// The write-coalescing pieces of a line flushed before it filled.
const WC_PIECES: [Signal; 4] = [Signal::Wc32, Signal::Wc16, Signal::Wc8Low, Signal::Wc8High];

impl Txn {
    /// This core's transactions of the type in a cycle.
    pub(super) fn value(self, c: &Cycle) -> u64 {
        use Signal::*;
        let lines = c.get(MemoryReads).saturating_sub(c.get(PartialMemoryReads));
        let bril = lines.min(c.get(StoresLocalMemory));
        let pieces: u64 = WC_PIECES.iter().map(|&s| c.get(s)).sum();
        match self {
            Txn::Brl => lines - bril,
            Txn::BrlData => {
                let code = c.get(L3InstructionMisses) + c.get(L3InstructionPrefetchMisses);
                (lines - bril).saturating_sub(code)
            }
            Txn::Bril => bril,
            // A store to a line this core shares needs a coherent peer (not yet modelled).
            Txn::Bil => 0,
            Txn::Brp => c.get(PartialMemoryReads) + c.get(DeviceReads),
            Txn::Ewb => c.get(MemoryWrites).saturating_sub(c.get(WcLines) + pieces),
            Txn::WcLine => c.get(WcLines),
            Txn::Bwp => pieces + c.get(DeviceWrites),
            Txn::CastOut => c.get(CleanCastouts),
        }
    }
}

use Atom::Bus;
use Txn::*;

const READS: [Atom; 4] = [Bus(Brl), Bus(Bril), Bus(Bil), Bus(Brp)];
const FULL_LINES: [Atom; 4] = [Bus(Brl), Bus(Bril), Bus(Ewb), Bus(WcLine)];
const PARTIAL: [Atom; 4] = [Bus(Brp), Bus(Bwp), Bus(Bil), Bus(CastOut)];
const ALL: [Atom; 8] = [Bus(Brl), Bus(Bril), Bus(Ewb), Bus(WcLine), Bus(Brp), Bus(Bwp), Bus(Bil), Bus(CastOut)];
const WRITEQ: [Atom; 3] = [Bus(Ewb), Bus(WcLine), Bus(Bwp)];

/// BUS_ALL: every transaction.
pub(super) fn bus_all(_: u64) -> Option<&'static [Atom]> {
    Some(&ALL)
}

/// BUS_MEMORY bits 3:2: 01 full lines (BRL, BRIL, BWL), 10 less than a line (BRP,
/// BWP, BIL, and the 0-byte clean castouts: MD15), 11 all.
pub(super) fn bus_memory(u: u64) -> Option<&'static [Atom]> {
    match u >> 2 & 3 {
        0b01 => Some(&FULL_LINES),
        0b10 => Some(&PARTIAL),
        0b11 => Some(&ALL),
        _ => None,
    }
}

/// BUS_MEM_READ bits 3:2: 00 BIL, 01 BRL, 10 BRIL, 11 all three.
pub(super) fn bus_mem_read(u: u64) -> Option<&'static [Atom]> {
    match u >> 2 & 3 {
        0b00 => Some(&[Bus(Bil)]),
        0b01 => Some(&[Bus(Brl)]),
        0b10 => Some(&[Bus(Bril)]),
        _ => Some(&[Bus(Bil), Bus(Brl), Bus(Bril)]),
    }
}

/// BUS_RD_DATA: full-line data reads (BRL of data, not code).
pub(super) fn bus_rd_data(_: u64) -> Option<&'static [Atom]> {
    Some(&[Bus(BrlData)])
}

/// BUS_RD_PRTL: partial reads (BRP).
pub(super) fn bus_rd_prtl(_: u64) -> Option<&'static [Atom]> {
    Some(&[Bus(Brp)])
}

/// BUS_WR_WB bits 3:2: 01 full lines "with write back or write coalesce attributes",
/// 10 clean castouts, 11 both.
pub(super) fn bus_wr_wb(u: u64) -> Option<&'static [Atom]> {
    match u >> 2 & 3 {
        0b01 => Some(&[Bus(Ewb), Bus(WcLine)]),
        0b10 => Some(&[Bus(CastOut)]),
        0b11 => Some(&[Bus(Ewb), Bus(WcLine), Bus(CastOut)]),
        _ => None,
    }
}

/// SI_RQ_INSERTS: reads enter the arbiter's request queue.
pub(super) fn si_rq_inserts(_: u64) -> Option<&'static [Atom]> {
    Some(&READS)
}

/// SI_WRITEQ_INSERTS bits 3:1: 000 ALL, 001 IWB (implicit write-backs answer another
/// agent's snoop: none without one), 010 EWB, 011 WC1_8A, 100 WC16, 101 WC32, 110
/// NEWB (none), 111 WC1_8B. Full coalesced lines and uncacheable writes count in ALL.
pub(super) fn si_writeq_inserts(u: u64) -> Option<&'static [Atom]> {
    match u >> 1 & 7 {
        0b000 => Some(&WRITEQ),
        0b010 => Some(&[Bus(Ewb)]),
        0b011 => Some(&[Atom::Sig(Signal::Wc8Low)]),
        0b100 => Some(&[Atom::Sig(Signal::Wc16)]),
        0b101 => Some(&[Atom::Sig(Signal::Wc32)]),
        0b111 => Some(&[Atom::Sig(Signal::Wc8High)]),
        _ => None,
    }
}

/// SI_CCQ_INSERTS: clean castouts enter the arbiter's clean-castout queue.
pub(super) fn si_ccq_inserts(_: u64) -> Option<&'static [Atom]> {
    Some(&[Bus(CastOut)])
}

/// ER_BRQ_REQ_INSERTED: every request of the L2I or L2D to the L3 and beyond enters
/// the BRQ (§2.3.3.4): the L2D's misses (the page walker's too), the L2I's demand and
/// prefetch misses, and uncacheable reads. The L2D's victims are not counted.
pub(super) fn er_brq_req_inserted(_: u64) -> Option<&'static [Atom]> {
    use Signal::*;
    Some(&[Atom::Sig(L2DataMisses), Atom::Sig(L3InstructionHits), Atom::Sig(L3InstructionMisses), Atom::Sig(L2iPrefetchMisses), Bus(Brp)])
}
