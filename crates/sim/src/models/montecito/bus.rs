//! The system-interface events (§4.11): the core's front-side bus transactions by
//! type, and the arbiter and external-request queues they pass through (Tables 4-55 to
//! 4-70, 4-109 to 4-124). The machine computes each transaction from its caches, its
//! write-coalescing buffers and its uncacheable accesses (MD15, MD46).
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic))]

use super::cycle::Cycle;
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
            // A store's upgrade of a shared line, and an `fc` (MMC35).
            Txn::Bil => c.get(BusInvalidates) + c.get(CodeFlushes),
            Txn::Brp => c.get(PartialMemoryReads) + c.get(DeviceReads),
            Txn::Ewb => c.get(MemoryWrites).saturating_sub(c.get(WcLines) + pieces),
            Txn::WcLine => c.get(WcLines),
            Txn::Bwp => pieces + c.get(DeviceWrites),
            Txn::CastOut => c.get(CleanCastouts),
        }
    }
}

/// This core's transactions, of every type.
const TXNS: [Txn; 8] = [Txn::Brl, Txn::Bril, Txn::Bil, Txn::Brp, Txn::Ewb, Txn::WcLine, Txn::Bwp, Txn::CastOut];

/// The other core's transactions (MMC23): line reads and reads for ownership.
const PEER_TXNS: [Signal; 2] = [Signal::PeerBrl, Signal::PeerBril];

/// The I/O bridge's transactions (MMC34).
const IO_TXNS: [Signal; 6] = {
    use Signal::*;
    [IoBrl, IoBrc, IoBrp, IoBil, IoBril, IoBwl]
};

/// Whose snoop answers an SI_SCB event counts (MMC23): this core's (to every
/// transaction on the bus, its own answered MISS), both cores', or the final answer
/// driven on the bus, one per transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Answers {
    ThisCore,
    BothCores,
    Final,
}

/// A snoop answer, or all of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Answer {
    Miss,
    Hit,
    Hitm,
    All,
}

/// Snoop answers of a kind in a cycle.
pub(super) fn answers(who: Answers, answer: Answer, c: &Cycle) -> u64 {
    use Signal::*;
    let sum = |signals: &[Signal]| signals.iter().map(|&s| c.get(s)).sum::<u64>();
    let own = TXNS.iter().map(|t| t.value(c)).sum::<u64>();
    // Every transaction of the other core and of the I/O bridge is snooped here too.
    let others = sum(&PEER_TXNS) + sum(&IO_TXNS);
    // This core's answers to the other's and the bridge's transactions (the other
    // core, holding none of the bridge's lines, answers it MISS); the other's to this
    // core's (a store to a shared line invalidates a clean copy: HIT).
    let my_hit = sum(&[PeerBrlHit, PeerBrilHit, IoBrlHit, IoOtherHit]);
    let my_hitm = sum(&[PeerBrlHitm, PeerBrilHitm, IoBrlHitm, IoBrilHitm, IoBilHitm, IoReadHitm]);
    let (its_hit, its_hitm) = (sum(&[BrlHit, BrilHit, BusInvalidates]), sum(&[BrlHitm, BrilHitm, BilHitm]));
    let (all, hit, hitm) = match who {
        Answers::ThisCore => (own + others, my_hit, my_hitm),
        Answers::BothCores => (2 * (own + others), my_hit + its_hit, my_hitm + its_hitm),
        Answers::Final => (own + others, my_hit + its_hit, my_hitm + its_hitm),
    };
    match answer {
        Answer::All => all,
        Answer::Hit => hit,
        Answer::Hitm => hitm,
        Answer::Miss => all.saturating_sub(hit + hitm),
    }
}
