//! Montecito's requests in flight: the prefetches the instruction fetch unit's read
//! address buffer (RAB) holds until their lines arrive, the L2I lines whose misses
//! are outstanding at the L3 or memory (ERRATA MMC25), and the L2D's misses in the 16
//! request buffers that L2I and L2D misses share (§2.3.3.4, MMC28). A demand fetch of
//! a line still on its way hits the RAB and waits for it; a request for an L2I line
//! still pending recirculates until the fill; a lookup that would hit while another
//! line's fill returns its data is abandoned until the fill is done (§4.15
//! L1I_FETCH_RAB_HIT, L2I_SPEC_ABORTS, L2I_RECIRCULATES, L2I_HIT_CONFLICTS); an L2D
//! miss that finds every request buffer taken waits for the first to free. A data
//! request for a line whose L2D miss is here is a secondary miss (`ozq.rs`).
//!
//! Times are on the core's clock (`Montecito::clock`); the state the runner compares
//! is each entry's remaining time, so skipped iterations leave it exact.

use crate::machine::{Keys, Moves};

/// A prefetched L1I line: when its L2I lookup is done and when its data is there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Prefetch {
    line: u64,
    pub(super) looked_up: u64,
    pub(super) ready: u64,
}

/// An L2I line whose fill arrives at `ready`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Fill {
    line: u64,
    ready: u64,
}

/// An L2D miss in a request buffer: inserted into the OzQ at `inserted`, passed to
/// the L3 at `sent`, its data back at `ready`; `waiting` secondary misses suspended
/// until its fill, and whether a store is among them (`merges`: the fill merges its
/// data from the OzQ's data buffer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct DataMiss {
    line: u64,
    pub(super) inserted: u64,
    pub(super) sent: u64,
    pub(super) ready: u64,
    waiting: u8,
    merges: bool,
}

/// §2.3.3.4: "All L2I and L2D requests are allocated to one of 16 request buffers".
pub(super) const REQUEST_BUFFERS: usize = 16;

/// Table 2-9: the L1I's "1 Demand + 7 Prefetch Fills", the RAB's entries.
const RAB_PREFETCHES: usize = 7;

/// The cycle a request at `now` gets one of `places` that free at `frees`: `now`, or
/// when the first of the taken ones frees.
pub(super) fn first_free(frees: impl Iterator<Item = u64> + Clone, now: u64, places: usize) -> u64 {
    let taken = frees.filter(move |&t| t > now);
    // Counted first: only a request that finds them all taken needs them in order.
    if taken.clone().count() < places {
        return now;
    }
    let mut taken: Vec<u64> = taken.collect();
    taken.sort_unstable();
    taken[taken.len() - places]
}

/// What waits while the BRQ rejects L1 requests for its forward progress (MMC73): an
/// L1I request (an L2I miss) or an L1D request (an L2D miss) for a request buffer, or
/// a write for a write buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Starved {
    Instruction,
    Data,
    Writes,
}

impl Starved {
    /// The bit of `Signal::BrqRejecting` while it waits: the BRQ then rejects every
    /// L1D request (ER_REJECT_ALL_L1D_REQ) for an L1I request, every L1I request
    /// (ER_REJECT_ALL_L1I_REQ) for an L1D request, and every L1 request
    /// (ER_REJECT_ALL_L1_REQ, the "Big Hammer") for the writes.
    pub(super) const fn rejects(self) -> u8 {
        match self {
            Starved::Instruction => 0b001,
            Starved::Data => 0b010,
            Starved::Writes => 0b100,
        }
    }
}

/// The part of a wait from `from` to `to` after `until`, which the wait then extends:
/// a kind of wait is laid once over the cycles its waits cover, however they overlap.
fn uncovered(until: &mut u64, from: u64, to: u64) -> Option<(u64, u64)> {
    let from = from.max(*until);
    *until = (*until).max(to);
    (from < to).then_some((from, to))
}

#[derive(Debug, Clone, Default)]
pub(super) struct InFlight {
    prefetches: Vec<Prefetch>,
    fills: Vec<Fill>,
    /// The outstanding L2D misses.
    data: Vec<DataMiss>,
    /// When the L2D's data array is done reading out each dirty victim (ERRATA
    /// MMC49).
    victim_reads: Vec<u64>,
    /// Until when the BRQ rejects L1 requests for each `Starved` (MMC73).
    rejecting: [u64; 3],
    /// Since when it has rejected them without a break: the start of each
    /// `rejecting` run (MMC75).
    since: [u64; 3],
    /// Until when the prefetch pipeline is stalled for a RAB entry, and stalled so
    /// with its stream no further ahead than the demand fetch's next line (MMC50).
    stalls: [u64; 2],
}

impl InFlight {
    /// Forgets what has arrived by `now`.
    pub(super) fn expire(&mut self, now: u64) {
        self.prefetches.retain(|p| p.ready > now);
        self.fills.retain(|f| f.ready > now);
        self.data.retain(|d| d.ready > now);
        self.victim_reads.retain(|&done| done > now);
    }

    /// The cycle an L2D miss at `now` gets a request buffer: `now`, or when the first
    /// of the taken ones frees (L2I fills hold buffers too).
    pub(super) fn buffer_free(&self, now: u64) -> u64 {
        first_free(self.data.iter().map(|d| d.ready).chain(self.fills.iter().map(|f| f.ready)), now, REQUEST_BUFFERS)
    }

    /// A wait of `who` from `now` until `free`: the BRQ rejects L1 requests for it
    /// until then, and the cycles it was not already rejecting them for it in are
    /// returned (MMC73).
    pub(super) fn starve(&mut self, who: Starved, now: u64, free: u64) -> Option<(u64, u64)> {
        let k = who as usize;
        if now >= self.rejecting[k] && free > now {
            self.since[k] = now;
        }
        uncovered(&mut self.rejecting[k], now, free)
    }

    /// Whether the BRQ's forward-progress logic rejects L1 requests at `now`, for any
    /// kind of wait: the L2D then transforms no miss into a prefetch (MMC75).
    pub(super) fn throttled(&self, now: u64) -> bool {
        self.since.iter().zip(&self.rejecting).any(|(&since, &until)| since <= now && now < until)
    }

    /// A stall of the prefetch pipeline from `now` until a RAB entry frees at `free`,
    /// a FLOW stall when `flow` (MMC50): the cycles it was not already stalled in, and
    /// those it was not already stalled so in.
    pub(super) fn stall(&mut self, flow: bool, now: u64, free: u64) -> [Option<(u64, u64)>; 2] {
        let [stalled, flowing] = &mut self.stalls;
        [uncovered(stalled, now, free), if flow { uncovered(flowing, now, free) } else { None }]
    }

    /// An L2D miss of L2D line `line` holds a request buffer until its data arrives.
    pub(super) fn add_data(&mut self, line: u64, inserted: u64, sent: u64, ready: u64) {
        self.data.push(DataMiss { line, inserted, sent, ready, waiting: 0, merges: false });
    }

    /// A store suspended until the fill of L2D line `line` (after `suspend`).
    pub(super) fn merge(&mut self, line: u64) {
        if let Some(d) = self.data.iter_mut().find(|d| d.line == line) {
            d.merges = true;
        }
    }

    /// The L2D fill writing its data into the array at `now` (over its last `cycles`
    /// cycles), if one is: when it is done, and whether it merges a store's data
    /// (ERRATA MMC49).
    pub(super) fn data_returning(&self, now: u64, cycles: u64) -> Option<(u64, bool)> {
        let filling = self.data.iter().filter(|d| d.ready.saturating_sub(cycles) <= now && now < d.ready);
        filling.map(|d| (d.ready, d.merges)).max()
    }

    /// The L2D's data array reads a dirty victim out until `done`.
    pub(super) fn add_victim_read(&mut self, done: u64) {
        self.victim_reads.push(done);
    }

    /// When the victim the data array is reading out at `now` (over its last `cycles`
    /// cycles) is done, if it is reading one.
    pub(super) fn victim_reading(&self, now: u64, cycles: u64) -> Option<u64> {
        self.victim_reads.iter().copied().filter(|&done| done.saturating_sub(cycles) <= now && now < done).max()
    }

    /// One more secondary miss suspended until the fill of L2D line `line`: how many
    /// are, this one included (0 when no miss of the line is outstanding).
    pub(super) fn suspend(&mut self, line: u64) -> u8 {
        self.data.iter_mut().find(|d| d.line == line).map_or(0, |d| {
            d.waiting = d.waiting.saturating_add(1);
            d.waiting
        })
    }

    /// The outstanding miss of L2D line `line`, if there is one.
    pub(super) fn data_pending(&self, line: u64) -> Option<DataMiss> {
        self.data.iter().find(|d| d.line == line).copied()
    }

    /// Whether a miss of another line in the same L2D set (`same_set`) was inserted at
    /// `now`: in the same issue group.
    pub(super) fn same_index(&self, line: u64, now: u64, same_set: impl Fn(u64) -> bool) -> bool {
        self.data.iter().any(|d| d.inserted == now && d.line != line && same_set(d.line))
    }

    /// The cycle a prefetch at `at` gets one of the RAB's prefetch entries: `at`, or
    /// when the first of the taken ones frees (its line arrives).
    pub(super) fn rab_free(&self, at: u64) -> u64 {
        first_free(self.prefetches.iter().map(|p| p.ready), at, RAB_PREFETCHES)
    }

    /// The prefetch of L1I line `line` still on its way.
    pub(super) fn prefetch(&self, line: u64) -> Option<Prefetch> {
        self.prefetches.iter().find(|p| p.line == line).copied()
    }

    pub(super) fn add_prefetch(&mut self, line: u64, looked_up: u64, ready: u64) {
        self.prefetches.push(Prefetch { line, looked_up, ready });
    }

    /// When the pending fill of L2I line `line` arrives, if one is on its way.
    pub(super) fn pending(&self, line: u64) -> Option<u64> {
        self.fills.iter().find(|f| f.line == line).map(|f| f.ready)
    }

    pub(super) fn add_fill(&mut self, line: u64, ready: u64) {
        self.fills.push(Fill { line, ready });
    }

    /// When the fill returning its data at `now` (over its last `pairs` cycles) is
    /// done, if one is: a hit looked up then is abandoned until it is.
    pub(super) fn returning(&self, now: u64, pairs: u64) -> Option<u64> {
        self.fills.iter().filter(|f| f.ready.saturating_sub(pairs) <= now && now < f.ready).map(|f| f.ready).max()
    }

    /// The state relative to `now`: each entry's line and remaining times.
    pub(super) fn canonical(&self, keys: &Keys, now: u64, out: &mut Vec<u64>) {
        out.push(u64::MAX - self.prefetches.len() as u64);
        for p in &self.prefetches {
            out.extend([(keys.line)(p.line), p.looked_up.saturating_sub(now), p.ready - now]);
        }
        out.push(u64::MAX - self.fills.len() as u64);
        for f in &self.fills {
            out.extend([(keys.line)(f.line), f.ready - now]);
        }
        out.push(u64::MAX - self.data.len() as u64);
        for d in &self.data {
            // Insertion matters only while `now` is at most a cycle past it (ozq.rs).
            out.extend([(keys.line)(d.line), (d.inserted + 2).saturating_sub(now), d.sent.saturating_sub(now), d.ready - now]);
            out.extend([u64::from(d.waiting), u64::from(d.merges)]);
        }
        out.push(u64::MAX - self.victim_reads.len() as u64);
        out.extend(self.victim_reads.iter().map(|&done| done - now));
        out.extend(self.rejecting.iter().chain(&self.since).chain(&self.stalls).map(|until| until.saturating_sub(now)));
    }

    pub(super) fn relocate(&mut self, to: &Moves) {
        let data = self.data.iter_mut().map(|d| &mut d.line);
        for line in self.prefetches.iter_mut().map(|p| &mut p.line).chain(self.fills.iter_mut().map(|f| &mut f.line)).chain(data) {
            if let Some(moved) = (to.line)(*line) {
                *line = moved;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_live_until_their_data_arrives() {
        let mut f = InFlight::default();
        f.add_prefetch(0x40, 7, 20);
        f.add_fill(0x80, 30);
        f.expire(19);
        assert_eq!(f.prefetch(0x40).map(|p| p.ready), Some(20));
        assert_eq!(f.pending(0x80), Some(30));
        f.expire(20);
        assert_eq!(f.prefetch(0x40), None, "arrived at 20");
        assert_eq!(f.pending(0x80), Some(30));
        f.expire(30);
        assert_eq!(f.pending(0x80), None);
    }

    #[test]
    fn a_fill_returns_its_data_over_its_last_cycles() {
        let mut f = InFlight::default();
        f.add_fill(0x80, 30);
        assert_eq!(f.returning(25, 4), None, "data comes in cycles 26-29");
        assert_eq!(f.returning(26, 4), Some(30));
        assert_eq!(f.returning(29, 4), Some(30));
    }

    #[test]
    fn a_miss_waits_for_a_request_buffer_when_all_sixteen_are_taken() {
        let mut f = InFlight::default();
        for i in 0..15 {
            f.add_data(i * 128, 0, 5, 100 + i);
        }
        assert_eq!(f.buffer_free(10), 10, "one buffer is left");
        f.add_fill(0x80, 50);
        assert_eq!(f.buffer_free(10), 50, "the L2I fill took the last: the first to free is at 50");
        f.expire(50);
        assert_eq!(f.buffer_free(50), 50);
    }

    #[test]
    fn the_brq_rejects_for_each_wait_once_over_overlapping_waits() {
        let mut f = InFlight::default();
        assert_eq!(f.starve(Starved::Instruction, 10, 50), Some((10, 50)));
        assert_eq!(f.starve(Starved::Instruction, 20, 40), None, "already rejecting L1D requests");
        assert_eq!(f.starve(Starved::Instruction, 30, 70), Some((50, 70)));
        assert_eq!(f.starve(Starved::Data, 30, 60), Some((30, 60)), "each kind's waits are their own");
        assert_eq!(f.starve(Starved::Writes, 30, 40), Some((30, 40)));
        assert_eq!(f.starve(Starved::Data, 80, 80), None, "a request that does not wait");
    }

    #[test]
    fn transforms_are_throttled_over_the_runs_of_rejects_only() {
        let mut f = InFlight::default();
        assert!(!f.throttled(0));
        f.starve(Starved::Writes, 100, 120);
        assert!(!f.throttled(99) && f.throttled(100) && f.throttled(119) && !f.throttled(120));
        f.starve(Starved::Writes, 110, 130);
        assert!(f.throttled(125), "a wait overlapping the run extends it");
        f.starve(Starved::Writes, 150, 160);
        assert!(!f.throttled(140) && f.throttled(150), "a new run starts after a break");
        f.starve(Starved::Data, 160, 160);
        assert!(!f.throttled(160), "a request that does not wait starts none");
    }

    #[test]
    fn a_flow_stall_is_a_stall_and_each_is_laid_once() {
        let mut f = InFlight::default();
        assert_eq!(f.stall(false, 10, 30), [Some((10, 30)), None]);
        assert_eq!(f.stall(true, 20, 40), [Some((30, 40)), Some((20, 40))], "a stall over the first one's end");
        assert_eq!(f.stall(true, 25, 35), [None, None]);
    }

    #[test]
    fn the_state_is_relative_to_now() {
        let (mut a, mut b) = (InFlight::default(), InFlight::default());
        a.add_prefetch(0x40, 7, 20);
        b.add_prefetch(0x40, 107, 120);
        let key = |l: u64| l;
        let keys = Keys { line: &key, page: &key };
        let (mut x, mut y) = (Vec::new(), Vec::new());
        a.canonical(&keys, 10, &mut x);
        b.canonical(&keys, 110, &mut y);
        assert_eq!(x, y);
    }
}
