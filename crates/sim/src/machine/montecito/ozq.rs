//! The L2D's out-of-order queue (OzQ; §2.3.3.2, Table 2-9 "32 OzQ / 16 Fills",
//! ERRATA MMC29). Its 32 entries hold the L2D's data requests: a hit until it is
//! served, a miss until it is passed to the L3, and a secondary miss (a request for a
//! line whose miss is outstanding, `InFlight::data_pending`) until that miss's fill
//! satisfies it. A request that finds every entry taken waits for the first to leave
//! (L2D_OZQ_FULL), and the core with it. Each entry keeps its request's line: another
//! agent's snoop of the line forces the requests for it to recirculate (MMC71).
//!
//! Table 4-90 names where a secondary miss finds the earlier one: one cycle ahead in
//! the L1D pipeline (L1W, which forces it to recirculate), still in the OzQ (OZQ_MISS)
//! or in the fill buffer, passed to the L3 (FILL_HIT); the last two suspend it in the
//! OzQ's limbo state. One recirculate issues per clock: in a cycle with several, the
//! others are cancelled (L2D_OZQ_CANCELS0.RECIRC) and wait in limbo too.
//!
//! Times are on the core's clock; the state the runner compares is relative to it.

use super::inflight::{first_free, DataMiss};
use crate::machine::{Keys, Moves};

/// Table 2-9: the L2D's queuing is "32 OzQ".
pub(super) const OZQ_ENTRIES: usize = 32;

/// Where a secondary miss found the outstanding miss of its line (Table 4-90).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Secondary {
    /// Inserted this cycle or the one before: a miss "one cycle ahead" (L1W).
    L1w,
    /// Still waiting in the OzQ to be passed to the L3 (OZQ_MISS).
    Ozq,
    /// Passed to the L3, its fill on the way (FILL_HIT).
    Fill,
}

impl Secondary {
    /// How a request at `now` finds `miss`.
    pub(super) fn of(miss: &DataMiss, now: u64) -> Secondary {
        if now <= miss.inserted + 1 {
            Secondary::L1w
        } else if now < miss.sent {
            Secondary::Ozq
        } else {
            Secondary::Fill
        }
    }
}

/// The L2D's data banks (ERRATA MMC36): 16, interleaved every 16 bytes.
const L2D_BANKS: u64 = 16;
const BANK_BYTES: u64 = 16;

/// The bank of an address.
pub(super) fn bank(addr: u64) -> u64 {
    addr / BANK_BYTES % L2D_BANKS
}

/// The L2D pipeline's stages after arbitration, one cycle each, that
/// L2D_OZQ_CANCELS0's store matches name (Table 4-94): L2A, L2M, L2D, L2C (ERRATA
/// MMC37). With the issue stage before them they are the five cycles of an L2D hit
/// (Table 2-8: N = 5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Stage {
    L2a,
    L2m,
    L2d,
    L2c,
}

const STAGES: [Stage; 4] = [Stage::L2a, Stage::L2m, Stage::L2d, Stage::L2c];

impl Stage {
    /// Cycles until a request in this stage has left the pipeline.
    pub(super) fn remaining(self) -> u64 {
        STAGES.len() as u64 - self as u64
    }
}

/// The bytes a store match compares: the L2D's bank width (MMC36, MMC37).
pub(super) fn chunk(addr: u64) -> u64 {
    addr / BANK_BYTES * BANK_BYTES
}

/// Which 4-byte word of its chunk an address is in: a load and a store of one word
/// are ordered as an effective release (§4.15 L2D_OZQ_RELEASE: "loads and stores to
/// the same 4 byte chunk"; MMC37).
pub(super) fn word(addr: u64) -> u8 {
    (addr % BANK_BYTES / 4) as u8
}

/// A store in the L2D pipeline's stages: the cycle it entered them, its chunk and the
/// word of it its address is in, and whether the L2D cancelled it (MMC49).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct PipelineStore {
    entered: u64,
    chunk: u64,
    word: u8,
    cancelled: bool,
}

/// What a read found of a store to its chunk in the pipeline: the store's stage,
/// whether the L2D had cancelled the store, and whether the store's word is the
/// read's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct StoreMatch {
    pub(super) stage: Stage,
    pub(super) cancelled: bool,
    pub(super) same_word: bool,
}

/// How a request that found the OzQ empty went past it (L2D_BYPASS,
/// L2D_OZQ_CANCELS0.BANK_CONF; MMC36).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Bypass {
    /// The cycle's first, from the L1D stage into the L2D's arbitration (L1D to L2A).
    First,
    /// The cycle's second, a stage later (L1W to L2I).
    Second,
    /// The cycle's second, to the first's bank: cancelled, it issues from the OzQ.
    BankConflict,
}

/// What a forced recirculate did (L2D_ISSUED_RECIRC_OZQ_ACC, L2D_OZQ_CANCELS0.RECIRC).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Recirculate {
    Issued,
    Cancelled,
}

/// An OzQ entry: when it was inserted and when it leaves, the thread whose request
/// it holds, the L2D line the request is for (none for a `sync.i`), and whether the
/// request is a write, whose data takes an entry of the OzQ's data buffer with it
/// (L2D_OZDB_FULL, MMC69).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Entry {
    inserted: u64,
    leaves: u64,
    thread: usize,
    line: Option<u64>,
    data: bool,
}

#[derive(Debug, Clone, Default)]
pub(super) struct Ozq {
    entries: Vec<Entry>,
    /// The cycle of the last request forced to recirculate: it is in the OzQ, waiting
    /// to re-insert, during that cycle.
    forced: Option<u64>,
    /// The cycle of the last request that bypassed the queue, and its bank.
    bypassed: Option<(u64, u64)>,
    /// The stores still in the pipeline's stages.
    stores: Vec<PipelineStore>,
}

impl Ozq {
    /// Forgets the entries that have left by `now`.
    pub(super) fn expire(&mut self, now: u64) {
        self.entries.retain(|e| e.leaves > now);
        if self.forced.is_some_and(|f| f < now) {
            self.forced = None;
        }
        self.stores.retain(|s| s.entered + STAGES.len() as u64 > now);
    }

    /// A store to `addr` entered the pipeline at `now` (after `expire(now)`), and was
    /// `cancelled` there or not.
    pub(super) fn store(&mut self, now: u64, addr: u64, cancelled: bool) {
        self.stores.push(PipelineStore { entered: now, chunk: chunk(addr), word: word(addr), cancelled });
    }

    /// The youngest store to `addr`'s chunk still in the pipeline when a read enters
    /// it at `now` (after `expire(now)`): the read is cancelled and issues again once
    /// the store has left (L2D_OZQ_CANCELS0.*_ST_MAT, MMC37; CANC_L2M_TO_L2C_ST,
    /// MMC49).
    pub(super) fn store_match(&self, now: u64, addr: u64) -> Option<StoreMatch> {
        let chunk = chunk(addr);
        let s = self.stores.iter().filter(|s| s.chunk == chunk).max_by_key(|s| s.entered)?;
        let &stage = STAGES.get(now.checked_sub(s.entered)? as usize)?;
        Some(StoreMatch { stage, cancelled: s.cancelled, same_word: s.word == word(addr) })
    }

    pub(super) fn relocate(&mut self, to: &Moves) {
        for e in &mut self.entries {
            if let Some(moved) = e.line.and_then(|l| (to.line)(l)) {
                e.line = Some(moved);
            }
        }
        for s in &mut self.stores {
            if let Some(moved) = (to.line)(s.chunk) {
                s.chunk = moved;
            }
        }
    }

    /// The cycle a request at `now` gets an entry: `now`, or when the first of the
    /// taken ones leaves.
    pub(super) fn free(&self, now: u64) -> u64 {
        first_free(self.entries.iter().map(|e| e.leaves), now, OZQ_ENTRIES)
    }

    /// The leave times of the writes' entries: their data buffer entries'.
    fn data(&self) -> impl Iterator<Item = u64> + Clone + '_ {
        self.entries.iter().filter(|e| e.data).map(|e| e.leaves)
    }

    /// The cycle a write at `now` gets one of the data buffer's `places` entries.
    pub(super) fn data_free(&self, now: u64, places: usize) -> u64 {
        first_free(self.data(), now, places)
    }

    /// Until when the data buffer's `places` entries are all taken at `now`, if they
    /// are: the first of them leaves then.
    pub(super) fn data_full(&self, now: u64, places: usize) -> Option<u64> {
        let live = self.data().filter(|&l| l > now);
        (live.clone().count() >= places).then(|| live.min()).flatten()
    }

    /// A request of `thread` for `line` (none for a `sync.i`) holds an entry from
    /// `now` until `leaves`, and a write (`data`) a data buffer entry too.
    pub(super) fn insert(&mut self, thread: usize, line: Option<u64>, now: u64, leaves: u64, data: bool) {
        self.entries.push(Entry { inserted: now, leaves, thread, line, data });
    }

    /// How many requests for `line` the queue holds at `at`: those a snoop of the
    /// line arriving then finds (L2D_FORCE_RECIRC.SNP_OR_L3, MMC71).
    pub(super) fn holding(&self, line: u64, at: u64) -> usize {
        self.entries.iter().filter(|e| e.line == Some(line) && e.inserted <= at && at < e.leaves).count()
    }

    /// When the last request of `thread` in the queue leaves (after `expire`): an
    /// ordered request of the thread waits for it (MMC38).
    pub(super) fn older(&self, thread: usize) -> Option<u64> {
        self.entries.iter().filter(|e| e.thread == thread).map(|e| e.leaves).max()
    }

    /// Whether the queue holds no request at `now` (after `expire`): a request then
    /// bypasses it.
    pub(super) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// A request at `now` to `bank` that found the queue empty goes past it: the
    /// first of its cycle, the second, or the second to the first's bank.
    pub(super) fn bypass(&mut self, now: u64, bank: u64) -> Bypass {
        match self.bypassed {
            Some((at, b)) if at == now && b == bank => Bypass::BankConflict,
            Some((at, _)) if at == now => Bypass::Second,
            _ => {
                self.bypassed = Some((now, bank));
                Bypass::First
            }
        }
    }

    /// Whether a request forced to recirculate is in the queue at `now` (a miss
    /// inserted then counts L2D_FORCE_RECIRC.FRC_RECIRC).
    pub(super) fn forcing(&self, now: u64) -> bool {
        self.forced == Some(now)
    }

    /// A request at `now` is forced to recirculate: the first of a cycle issues its
    /// recirculate, the others are cancelled.
    pub(super) fn force(&mut self, now: u64) -> Recirculate {
        if self.forcing(now) {
            return Recirculate::Cancelled;
        }
        self.forced = Some(now);
        Recirculate::Issued
    }

    /// The state relative to `now`: each entry's remaining time, and whether a request
    /// was forced this cycle.
    pub(super) fn canonical(&self, keys: &Keys, now: u64, out: &mut Vec<u64>) {
        let entry = |e: &Entry| {
            let line = e.line.map_or(u64::MAX, |l| (keys.line)(l));
            [e.inserted.saturating_sub(now), e.leaves.saturating_sub(now), e.thread as u64, line, u64::from(e.data)]
        };
        super::multiset(out, self.entries.iter().map(entry).collect());
        out.push(u64::from(self.forcing(now)));
        out.push(self.bypassed.filter(|&(at, _)| at == now).map_or(0, |(_, bank)| bank + 1));
        let live: Vec<_> = self.stores.iter().filter(|s| s.entered + STAGES.len() as u64 > now).collect();
        out.push(u64::MAX - live.len() as u64);
        for s in &live {
            out.extend([(keys.line)(s.chunk), s.entered + STAGES.len() as u64 - now, u64::from(s.cancelled), u64::from(s.word)]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::machine::montecito::inflight::InFlight;

    #[test]
    fn a_request_waits_for_an_entry_when_all_thirty_two_are_taken() {
        let mut q = Ozq::default();
        for i in 0..31 {
            q.insert(0, None, 0, 100 + i, false);
        }
        assert_eq!(q.free(10), 10, "one entry is left");
        q.insert(0, None, 0, 40, false);
        assert_eq!(q.free(10), 40, "the first to leave does at 40");
        q.expire(40);
        assert_eq!(q.free(40), 40);
    }

    #[test]
    fn writes_fill_the_data_buffer_and_wait_for_it() {
        let mut q = Ozq::default();
        q.insert(0, None, 0, 50, false);
        for i in 0..3 {
            q.insert(0, None, 0, 30 + i, true);
        }
        assert_eq!(q.data_full(10, 4), None, "three writes in four entries");
        assert_eq!(q.data_full(10, 3), Some(30), "full until the first write leaves");
        assert_eq!(q.data_free(10, 3), 30);
        assert_eq!(q.data_free(10, 4), 10);
        assert_eq!(q.data_full(30, 3), None, "the first has left");
    }

    #[test]
    fn a_secondary_miss_is_named_by_where_it_finds_the_first() {
        let mut f = InFlight::default();
        // Inserted at 10, passed to the L3 at 15 (the L2D lookup), data at 200.
        f.add_data(0x80, 10, 15, 200);
        let miss = f.data_pending(0x80).unwrap();
        assert_eq!(Secondary::of(&miss, 10), Secondary::L1w, "same cycle");
        assert_eq!(Secondary::of(&miss, 11), Secondary::L1w, "one cycle ahead");
        assert_eq!(Secondary::of(&miss, 12), Secondary::Ozq);
        assert_eq!(Secondary::of(&miss, 14), Secondary::Ozq);
        assert_eq!(Secondary::of(&miss, 15), Secondary::Fill);
        assert_eq!(f.data_pending(0x100), None);
    }

    #[test]
    fn one_recirculate_issues_per_clock() {
        let mut q = Ozq::default();
        assert!(!q.forcing(7));
        assert_eq!(q.force(7), Recirculate::Issued);
        assert!(q.forcing(7));
        assert_eq!(q.force(7), Recirculate::Cancelled);
        assert_eq!(q.force(8), Recirculate::Issued, "a new clock");
        q.expire(9);
        assert!(!q.forcing(9));
    }

    #[test]
    fn two_requests_of_a_cycle_bypass_by_two_paths_unless_they_share_a_bank() {
        let mut q = Ozq::default();
        assert!(q.is_empty());
        assert_eq!(q.bypass(5, bank(0x1000)), Bypass::First);
        assert_eq!(q.bypass(5, bank(0x1010)), Bypass::Second, "the next 16 bytes: another bank");
        assert_eq!(q.bypass(6, bank(0x2000)), Bypass::First, "a new cycle");
        assert_eq!(q.bypass(6, bank(0x2100)), Bypass::BankConflict, "256 bytes on: the same bank");
        q.insert(0, None, 0, 20, false);
        assert!(!q.is_empty());
    }

    #[test]
    fn the_state_is_relative_to_now() {
        let (mut a, mut b) = (Ozq::default(), Ozq::default());
        a.insert(0, None, 0, 20, true);
        a.insert(0, None, 0, 15, false);
        b.insert(0, None, 0, 115, false);
        b.insert(0, None, 0, 120, true);
        let (mut x, mut y) = (Vec::new(), Vec::new());
        let keys = Keys { line: &|a| a, page: &|a| a };
        a.canonical(&keys, 10, &mut x);
        b.canonical(&keys, 110, &mut y);
        assert_eq!(x, y);
    }
}
