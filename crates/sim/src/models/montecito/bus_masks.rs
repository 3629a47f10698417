//! The system-interface events' unit masks (§4.11, Tables 4-55 to 4-70 and 4-109 to
//! 4-124): the atoms each selects, by the agent its bits name (MD14).
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic))]

use super::bus::{Answer, Answers, Txn};
use super::events::Atom;
use crate::stream::Signal;

use Atom::{Bus, Sig};
use Txn::*;

/// A bus event's atoms by its agent bits 1:0 (MD14): SELF (10) this core's
/// transactions (`$mine`), EITHER (00) both cores' (the other core's, `$peer`, too),
/// IO (01) the I/O bridge's (`$io`), ANY (11) all of them.
macro_rules! by_agent {
    ($u:expr, [$($mine:expr),*], [$($peer:expr),*], [$($io:expr),*]) => {{
        const MINE: &[Atom] = &[$($mine),*];
        const EITHER: &[Atom] = &[$($mine,)* $($peer),*];
        const IO: &[Atom] = &[$($io),*];
        const ANY: &[Atom] = &[$($mine,)* $($peer,)* $($io),*];
        Some(match $u & 3 {
            0b10 => MINE,
            0b01 => IO,
            0b11 => ANY,
            _ => EITHER,
        })
    }};
}

const PEER_BRL: Atom = Sig(Signal::PeerBrl);
const PEER_BRIL: Atom = Sig(Signal::PeerBril);
const IO_BRL: Atom = Sig(Signal::IoBrl);
const IO_BRC: Atom = Sig(Signal::IoBrc);
const IO_BRP: Atom = Sig(Signal::IoBrp);
const IO_BIL: Atom = Sig(Signal::IoBil);
const IO_BRIL: Atom = Sig(Signal::IoBril);
const IO_BWL: Atom = Sig(Signal::IoBwl);

/// BUS_ALL: every transaction.
pub(super) fn bus_all(u: u64) -> Option<&'static [Atom]> {
    by_agent!(
        u,
        [Bus(Brl), Bus(Bril), Bus(Ewb), Bus(WcLine), Bus(Brp), Bus(Bwp), Bus(Bil), Bus(CastOut)],
        [PEER_BRL, PEER_BRIL],
        [IO_BRL, IO_BRC, IO_BRP, IO_BIL, IO_BRIL, IO_BWL]
    )
}

/// BUS_MEMORY bits 3:2: 01 full lines (BRL, BRIL, BWL, BRC), 10 less than a line (BRP,
/// BWP, BIL, and the 0-byte clean castouts: MD15), 11 all.
pub(super) fn bus_memory(u: u64) -> Option<&'static [Atom]> {
    match u >> 2 & 3 {
        0b01 => by_agent!(u, [Bus(Brl), Bus(Bril), Bus(Ewb), Bus(WcLine)], [PEER_BRL, PEER_BRIL], [IO_BRL, IO_BRC, IO_BRIL, IO_BWL]),
        0b10 => by_agent!(u, [Bus(Brp), Bus(Bwp), Bus(Bil), Bus(CastOut)], [], [IO_BRP, IO_BIL]),
        0b11 => bus_all(u),
        _ => None,
    }
}

/// BUS_MEM_READ bits 3:2: 00 BIL, 01 BRL, 10 BRIL, 11 all three.
pub(super) fn bus_mem_read(u: u64) -> Option<&'static [Atom]> {
    match u >> 2 & 3 {
        0b00 => by_agent!(u, [Bus(Bil)], [], [IO_BIL]),
        0b01 => by_agent!(u, [Bus(Brl)], [PEER_BRL], [IO_BRL]),
        0b10 => by_agent!(u, [Bus(Bril)], [PEER_BRIL], [IO_BRIL]),
        _ => by_agent!(u, [Bus(Bil), Bus(Brl), Bus(Bril)], [PEER_BRL, PEER_BRIL], [IO_BIL, IO_BRL, IO_BRIL]),
    }
}

/// MEM_READ_CURRENT: the bridge's reads of the current data (BRC); only IO and ANY
/// are legal selections, and the cores issue none.
pub(super) fn mem_read_current(u: u64) -> Option<&'static [Atom]> {
    by_agent!(u, [], [], [IO_BRC])
}

/// BUS_RD_DATA: full-line data reads (BRL of data, not code; the other core's are of
/// shared data; the bridge's line reads are of DMA buffers).
pub(super) fn bus_rd_data(u: u64) -> Option<&'static [Atom]> {
    by_agent!(u, [Bus(BrlData)], [PEER_BRL], [IO_BRL])
}

/// BUS_RD_PRTL: partial reads (BRP).
pub(super) fn bus_rd_prtl(u: u64) -> Option<&'static [Atom]> {
    by_agent!(u, [Bus(Brp)], [], [IO_BRP])
}

/// BUS_RD_HIT ("implies HIT and BRL"), BUS_RD_HITM, BUS_RD_INVALID_BST_HITM (BRIL
/// and HITM), BUS_HITM: the answers of the other core to this core's reads (Table
/// 4-40), for EITHER and ANY this core's answers to the other's, for IO and ANY this
/// core's answers to the bridge's.
pub(super) fn bus_rd_hit(u: u64) -> Option<&'static [Atom]> {
    use Signal::*;
    by_agent!(u, [Sig(BrlHit)], [Sig(PeerBrlHit)], [Sig(IoBrlHit)])
}

pub(super) fn bus_rd_hitm(u: u64) -> Option<&'static [Atom]> {
    use Signal::*;
    by_agent!(u, [Sig(BrlHitm)], [Sig(PeerBrlHitm)], [Sig(IoBrlHitm)])
}

/// BUS_RD_INVALID_HITM (BIL and HITM): this core's `fc` of a line the other core
/// modified, and the bridge's BIL of a line this core modified. (The other core's
/// BILs are not modelled: it sends reads, MMC23.)
pub(super) fn bus_rd_invalid_hitm(u: u64) -> Option<&'static [Atom]> {
    by_agent!(u, [Sig(Signal::BilHitm)], [], [Sig(Signal::IoBilHitm)])
}

pub(super) fn bus_rd_invalid_bst_hitm(u: u64) -> Option<&'static [Atom]> {
    use Signal::*;
    by_agent!(u, [Sig(BrilHitm)], [Sig(PeerBrilHitm)], [Sig(IoBrilHitm)])
}

pub(super) fn bus_hitm(u: u64) -> Option<&'static [Atom]> {
    use Signal::*;
    by_agent!(
        u,
        [Sig(BrlHitm), Sig(BrilHitm), Sig(BilHitm)],
        [Sig(PeerBrlHitm), Sig(PeerBrilHitm)],
        [Sig(IoBrlHitm), Sig(IoBrilHitm), Sig(IoBilHitm), Sig(IoReadHitm)]
    )
}

/// BUS_WR_WB bits 3:2: 01 full lines "with write back or write coalesce attributes"
/// (the bridge's line writes among them), 10 clean castouts, 11 both. (A HITM's
/// implicit write-back is the snooped transaction's data, not a write transaction of
/// its own.) The other core's write-backs are not modelled (MMC23).
pub(super) fn bus_wr_wb(u: u64) -> Option<&'static [Atom]> {
    match u >> 2 & 3 {
        0b01 => by_agent!(u, [Bus(Ewb), Bus(WcLine)], [], [IO_BWL]),
        0b10 => by_agent!(u, [Bus(CastOut)], [], []),
        0b11 => by_agent!(u, [Bus(Ewb), Bus(WcLine), Bus(CastOut)], [], [IO_BWL]),
        _ => None,
    }
}

/// SI_RQ_INSERTS: reads enter the arbiter's request queue (bit 0: 1 SELF, 0 EITHER).
pub(super) fn si_rq_inserts(u: u64) -> Option<&'static [Atom]> {
    if u & 1 == 1 {
        Some(&[Bus(Brl), Bus(Bril), Bus(Bil), Bus(Brp)])
    } else {
        Some(&[Bus(Brl), Bus(Bril), Bus(Bil), Bus(Brp), PEER_BRL, PEER_BRIL])
    }
}

/// This core's implicit write-backs: its HITM answers to the other core and the bridge.
const IWB: [Atom; 6] = {
    use Signal::*;
    [Sig(PeerBrlHitm), Sig(PeerBrilHitm), Sig(IoBrlHitm), Sig(IoBrilHitm), Sig(IoBilHitm), Sig(IoReadHitm)]
};

/// SI_WRITEQ_INSERTS bits 3:1: 000 ALL, 001 IWB (implicit write-backs of a modified
/// line another agent's transaction snooped: this core's answering the other core's
/// and the I/O bridge's, and for EITHER the other core's answering this core's), 010 EWB, 011 WC1_8A,
/// 100 WC16, 101 WC32, 110 NEWB (none: MD46), 111 WC1_8B. Full coalesced lines and
/// uncacheable writes count in ALL.
pub(super) fn si_writeq_inserts(u: u64) -> Option<&'static [Atom]> {
    use Signal::*;
    let own = u & 1 == 1;
    match (u >> 1 & 7, own) {
        (0b000, true) => Some(&[Bus(Ewb), Bus(WcLine), Bus(Bwp), IWB[0], IWB[1], IWB[2], IWB[3], IWB[4], IWB[5]]),
        (0b000, false) => {
            Some(&[Bus(Ewb), Bus(WcLine), Bus(Bwp), IWB[0], IWB[1], IWB[2], IWB[3], IWB[4], IWB[5], Sig(BrlHitm), Sig(BrilHitm)])
        }
        (0b001, true) => Some(&IWB),
        (0b001, false) => Some(&[IWB[0], IWB[1], IWB[2], IWB[3], IWB[4], IWB[5], Sig(BrlHitm), Sig(BrilHitm)]),
        (0b010, _) => Some(&[Bus(Ewb)]),
        (0b011, _) => Some(&[Sig(Wc8Low)]),
        (0b100, _) => Some(&[Sig(Wc16)]),
        (0b101, _) => Some(&[Sig(Wc32)]),
        (0b111, _) => Some(&[Sig(Wc8High)]),
        _ => None,
    }
}

/// SI_CCQ_INSERTS: clean castouts enter the arbiter's clean-castout queue.
pub(super) fn si_ccq_inserts(_: u64) -> Option<&'static [Atom]> {
    Some(&[Bus(CastOut)])
}

/// SI_SCB_INSERTS bits 3:2: 00 MISS, 01 HIT, 10 HITM, 11 ALL raw answers; bit 0 SELF
/// (this core's) or EITHER (both cores'). SI_SCB_SIGNOFFS: the final answers.
pub(super) fn si_scb_inserts(u: u64) -> Option<&'static [Atom]> {
    use Answer::*;
    use Answers::*;
    const T: [[[Atom; 1]; 4]; 2] = [
        [[Atom::Snoop(BothCores, Miss)], [Atom::Snoop(BothCores, Hit)], [Atom::Snoop(BothCores, Hitm)], [Atom::Snoop(BothCores, All)]],
        [[Atom::Snoop(ThisCore, Miss)], [Atom::Snoop(ThisCore, Hit)], [Atom::Snoop(ThisCore, Hitm)], [Atom::Snoop(ThisCore, All)]],
    ];
    T.get((u & 1) as usize)?.get((u >> 2 & 3) as usize).map(|a| a.as_slice())
}

pub(super) fn si_scb_signoffs(u: u64) -> Option<&'static [Atom]> {
    use Answer::*;
    const T: [[Atom; 1]; 4] = [
        [Atom::Snoop(Answers::Final, Miss)],
        [Atom::Snoop(Answers::Final, Hit)],
        [Atom::Snoop(Answers::Final, Hitm)],
        [Atom::Snoop(Answers::Final, All)],
    ];
    T.get((u >> 2 & 3) as usize).map(|a| a.as_slice())
}

/// ER_BRQ_REQ_INSERTED: every request of the L2I or L2D to the L3 and beyond enters
/// the BRQ (§2.3.3.4): the L2D's misses (the page walker's too), the L2I's demand and
/// prefetch misses, and uncacheable reads. The L2D's victims are not counted.
pub(super) fn er_brq_req_inserted(_: u64) -> Option<&'static [Atom]> {
    use Signal::*;
    Some(&[Sig(L2DataMisses), Sig(L3InstructionHits), Sig(L3InstructionMisses), Sig(L2iPrefetchMisses), Bus(Brp)])
}

/// L2D_FILL_MESI_STATE bits 2:0: 000 M, 001 E, 010 S, 011 I, 1xx P. Every L2D miss
/// fills a line, in the cycle its data is back: Modified for a store, Shared when the
/// other core kept a copy, Exclusive otherwise; Invalid when the other core's snoop
/// took the line while the fill was on its way, Pending when it read it (MMC51).
pub(super) fn l2d_fill_mesi_state(u: u64) -> Option<&'static [Atom]> {
    use Signal::*;
    Some(match u & 0b111 {
        0b000 => &[Sig(L2dFillsModified)],
        0b001 => &[Sig(L2dFillsExclusive)],
        0b010 => &[Sig(L2dFillsShared)],
        0b011 => &[Sig(L2dFillsInvalid)],
        _ => &[Sig(L2dFillsPending)],
    })
}

/// An occupancy's bits 2:0 (a _LO event) and bits 4:3 (_HI): "In each core cycle …
/// the number of live requests in that cycle are added … _LO sums up the low order 3
/// bits …, _HI sums up the high order bit" (§4.11.2), so 8·HI + LO is the sum.
const fn lo(s: Signal) -> [Atom; 1] {
    [Atom::Low(s)]
}
const fn hi(s: Signal) -> [Atom; 1] {
    [Atom::High(s)]
}

/// The _LO and _HI events of a queue whose unit mask's bit 0 chooses this core's
/// entries (`mine`, SELF) or both cores' (`both`, EITHER).
macro_rules! live {
    ($name:ident, $half:ident, $mine:expr, $both:expr) => {
        pub(super) fn $name(u: u64) -> Option<&'static [Atom]> {
            const MINE: [Atom; 1] = $half($mine);
            const BOTH: [Atom; 1] = $half($both);
            Some(if u & 1 == 1 { &MINE } else { &BOTH })
        }
    };
}

use Signal::{
    ErBrqLive, ErMemReadOut, ErSnoopqLive, SiCcqLive, SiIoqLive, SiRqLive, SiRqLiveBoth, SiScbLive, SiScbLiveBoth, SiWriteqLive,
    SiWriteqLiveBoth,
};

live!(si_rq_live_lo, lo, SiRqLive, SiRqLiveBoth);
live!(si_rq_live_hi, hi, SiRqLive, SiRqLiveBoth);
live!(si_writeq_live_lo, lo, SiWriteqLive, SiWriteqLiveBoth);
live!(si_writeq_live_hi, hi, SiWriteqLive, SiWriteqLiveBoth);
// Only this core casts out: the other core's clean castouts are not modelled.
live!(si_ccq_live_lo, lo, SiCcqLive, SiCcqLive);
live!(si_ccq_live_hi, hi, SiCcqLive, SiCcqLive);
live!(si_scb_live_lo, lo, SiScbLive, SiScbLiveBoth);
live!(si_scb_live_hi, hi, SiScbLive, SiScbLiveBoth);
// No unit mask: the bus's in-order queue, this core's snoop queue, the BRQ, the reads
// outstanding on the bus.
live!(si_ioq_live_lo, lo, SiIoqLive, SiIoqLive);
live!(si_ioq_live_hi, hi, SiIoqLive, SiIoqLive);
live!(er_snoopq_lo, lo, ErSnoopqLive, ErSnoopqLive);
live!(er_snoopq_hi, hi, ErSnoopqLive, ErSnoopqLive);
live!(er_brq_live_lo, lo, ErBrqLive, ErBrqLive);
live!(er_brq_live_hi, hi, ErBrqLive, ErBrqLive);
live!(er_mem_read_out_lo, lo, ErMemReadOut, ErMemReadOut);
live!(er_mem_read_out_hi, hi, ErMemReadOut, ErMemReadOut);

/// BUS_DATA_CYCLE, BUS_B2B_DATA_CYCLES, BUS_SNOOP_STALL_CYCLES: bus clocks, of this
/// core's transactions (SELF) or both cores' (EITHER, ANY).
/// `mine` for SELF, `both` for EITHER, `io` for IO, `both` and `io` for ANY.
fn clocks(u: u64, [mine, both, io]: &'static [[Atom; 2]; 3]) -> Option<&'static [Atom]> {
    Some(match u & 3 {
        0b10 => &mine[..1],
        0b01 => &io[..1],
        0b11 => &both[..],
        _ => &both[..1],
    })
}

pub(super) fn bus_data_cycle(u: u64) -> Option<&'static [Atom]> {
    use Signal::*;
    const A: [[Atom; 2]; 3] = [[Sig(BusDataClocksSelf); 2], [Sig(BusDataClocks), Sig(BusDataClocksIo)], [Sig(BusDataClocksIo); 2]];
    clocks(u, &A)
}

pub(super) fn bus_b2b_data_cycles(u: u64) -> Option<&'static [Atom]> {
    use Signal::*;
    const A: [[Atom; 2]; 3] = [[Sig(BusB2bClocksSelf); 2], [Sig(BusB2bClocks), Sig(BusB2bClocksIo)], [Sig(BusB2bClocksIo); 2]];
    clocks(u, &A)
}

/// BUS_SNOOP_STALL_CYCLES ("from any agent"; IO is illegal): the snoop stalls of this
/// core's transactions, or of every transaction (the bridge's HITMs stall too).
pub(super) fn bus_snoop_stall_cycles(u: u64) -> Option<&'static [Atom]> {
    use Signal::*;
    Some(if u & 3 == 0b10 { &[Sig(BusSnoopStallClocksSelf)] } else { &[Sig(BusSnoopStallClocks)] })
}
