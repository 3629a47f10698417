//! What each strand of a core has of its own: its program counter and fetch line, its
//! store buffer, its outstanding load misses and its return stack. A core holds one
//! per strand, and the strand that runs has its own in hand (`Sparc::s`); a strand
//! that has not run for a while is brought up to the core's cycle when it runs again,
//! its stores written and its misses returned in the meantime.

use crate::machine::mem::Occupancy;
use crate::machine::predict::ReturnStack;
use crate::machine::Keys;
use crate::stream::Privilege;

/// A store not yet written to the L2: in the store buffer, then (T4) in the store
/// queue. Its times are cycles of the strand's clock (`Strand::at`) by which each
/// step is over, so that time passing changes no entry: counting every entry down
/// each cycle was a twentieth of T4's machine thread. Stores are kept in program
/// order, and each is written after the ones before it, so they leave in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Buffered {
    pub(super) addr: u64,
    pub(super) size: u8,
    /// When it commits: the part of its time in the store buffer that is not spent
    /// waiting for the store queue (where there is none, all of it).
    pub(super) commit_at: u64,
    /// When it leaves the store buffer for the store queue (where there is none:
    /// when it has been written).
    pub(super) queued_at: u64,
    /// When it has been written.
    pub(super) written_at: u64,
}

impl Buffered {
    /// Where its bytes end, as wide as that needs to be (a store at the top of the
    /// address space ends past it).
    pub(super) fn end(&self) -> u128 {
        u128::from(self.addr) + u128::from(self.size)
    }

    /// Cycles from `at` until it commits (0 once it has).
    pub(super) fn commit(&self, at: u64) -> u64 {
        self.commit_at.saturating_sub(at)
    }

    /// Cycles from `at` until it leaves the store buffer.
    pub(super) fn queued(&self, at: u64) -> u64 {
        self.queued_at.saturating_sub(at)
    }

    /// Cycles from `at` until it has been written.
    pub(super) fn left(&self, at: u64) -> u64 {
        self.written_at.saturating_sub(at)
    }

    /// It still holds a store-buffer entry at `at`.
    pub(super) fn in_buffer(&self, at: u64) -> bool {
        self.queued_at > at
    }
}

/// An outstanding load miss: the cycle of the strand's clock its data is back by, as
/// for stores, and the strand's count of issued instructions when it issued.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Miss {
    pub(super) back_at: u64,
    pub(super) issued: u64,
}

impl Miss {
    /// Cycles from `at` until its data is back.
    pub(super) fn left(&self, at: u64) -> u64 {
        self.back_at.saturating_sub(at)
    }
}

#[derive(Debug, Clone)]
pub(super) struct Strand {
    pub(super) ip: u64,
    /// The line of the last fetch; `u64::MAX` for none.
    pub(super) fetch_line: u64,
    pub(super) store_buffer: Vec<Buffered>,
    /// What its store buffer and (T4) its load and reorder buffers have held.
    pub(super) stores: Occupancy,
    pub(super) loads: Occupancy,
    pub(super) reorder: Occupancy,
    /// The outstanding load misses that nothing waited for, in program order
    /// (out-of-order cores only), and the instructions the strand has issued.
    loads_in_flight: Vec<Miss>,
    /// No miss in flight is back before this cycle (`u64::MAX` with none): until
    /// then, time passing returns none but perhaps the oldest.
    soonest: u64,
    pub(super) issued: u64,
    /// None where the chip has none (T1, T3).
    pub(super) return_stack: Option<ReturnStack>,
    /// The core's cycle its times count from.
    pub(super) at: u64,
    /// The mode of the phase it last ran: the mode it waits for its turn in.
    pub(super) mode: Privilege,
}

impl Strand {
    pub(super) fn new(store_buffer: usize, return_stack: usize) -> Strand {
        Strand {
            ip: 0,
            fetch_line: u64::MAX,
            store_buffer: Vec::with_capacity(store_buffer),
            stores: Occupancy::default(),
            loads: Occupancy::default(),
            reorder: Occupancy::default(),
            loads_in_flight: Vec::new(),
            soonest: u64::MAX,
            issued: 0,
            return_stack: (return_stack > 0).then(|| ReturnStack::new(return_stack)),
            at: 0,
            mode: Privilege::USER,
        }
    }

    /// Where the stores that still hold a store-buffer entry at `at` begin. Each
    /// store leaves the buffer and is written no earlier than the one before it
    /// (`Strand::buffer`), so they are the youngest: counted from the youngest back,
    /// they are at most the buffer's entries, where a binary search over the queue's
    /// stores too was a chain of dependent loads (a tenth of T4's machine thread on
    /// a program's stores).
    pub(super) fn first_buffered(&self, at: u64) -> usize {
        let held = self.store_buffer.iter().rev().take_while(|b| b.in_buffer(at)).count();
        self.store_buffer.len() - held
    }

    /// The stores holding a store-buffer entry at `at`.
    pub(super) fn buffered(&self, at: u64) -> usize {
        self.store_buffer.len() - self.first_buffered(at)
    }

    /// Cycles from `at` until every store has been written: the youngest is
    /// written last.
    pub(super) fn drained(&self, at: u64) -> u64 {
        self.store_buffer.last().map_or(0, |b| b.left(at))
    }

    /// A store enters behind the others. What the searches above rely on: it leaves
    /// the buffer and is written no earlier than the store before it.
    pub(super) fn buffer(&mut self, b: Buffered) {
        debug_assert!(self.store_buffer.last().is_none_or(|l| l.queued_at <= b.queued_at && l.written_at <= b.written_at));
        self.store_buffer.push(b);
    }

    /// Time passes: buffered stores are written, load misses return. Inlined, with
    /// the rare work out of line: in most cycles nothing is written or comes back.
    #[inline(always)]
    pub(super) fn elapse(&mut self, cycles: u64) {
        self.at += cycles;
        let written = self.store_buffer.first().is_some_and(|b| b.written_at <= self.at);
        if cycles > 0 && (written || !self.loads_in_flight.is_empty()) {
            self.settle(cycles);
        }
    }

    /// The stores written and the misses back in the `cycles` up to `at`, and the
    /// reorder buffer's residence over them.
    #[inline(never)]
    fn settle(&mut self, cycles: u64) {
        // Stores are written in order: those written by now are the oldest.
        let written = self.store_buffer.iter().take_while(|b| b.written_at <= self.at).count();
        if written > 0 {
            self.store_buffer.drain(..written);
        }
        // The reorder buffer holds the oldest miss and what issued after it until that
        // miss's data is back; then the next oldest's.
        let mut t = self.at - cycles;
        while let Some(&oldest) = self.loads_in_flight.first() {
            let until = oldest.back_at.min(self.at).max(t);
            self.reorder.residence += (self.issued - oldest.issued + 1) * (until - t);
            t = until;
            if oldest.back_at > self.at {
                break;
            }
            self.loads_in_flight.remove(0);
        }
        if self.soonest <= self.at {
            let at = self.at;
            self.loads_in_flight.retain(|m| m.back_at > at);
            self.soonest = self.loads_in_flight.iter().map(|m| m.back_at).min().unwrap_or(u64::MAX);
        }
    }

    /// A load miss issues, its data back in `latency` cycles.
    pub(super) fn miss(&mut self, latency: u64) {
        let back_at = self.at + latency;
        self.loads_in_flight.push(Miss { back_at, issued: self.issued });
        self.soonest = self.soonest.min(back_at);
    }

    /// The load misses in flight, oldest first.
    pub(super) fn misses(&self) -> &[Miss] {
        &self.loads_in_flight
    }

    /// The reorder buffer's entries behind the oldest outstanding miss: the
    /// instructions issued after it (0 when none is outstanding).
    pub(super) fn reordered(&self) -> u64 {
        self.loads_in_flight.first().map_or(0, |m| self.issued - m.issued)
    }

    /// Brought up to the core's cycle `now`.
    pub(super) fn catch_up(&mut self, now: u64) {
        self.elapse(now.saturating_sub(self.at));
    }

    /// Its state as of the core's cycle `now` (it may not have run since `at`: what
    /// is over by now is left out, and what is not is counted from now).
    pub(super) fn canonical(&self, keys: &Keys, now: u64, out: &mut Vec<u64>) {
        // A strand that has not run since `at` is as it will be brought up to `now`.
        let now = now.max(self.at);
        for b in self.store_buffer.iter().filter(|b| b.left(now) > 0) {
            out.extend([(keys.line)(b.addr), u64::from(b.size), b.commit(now), b.queued(now), b.left(now)]);
        }
        out.push(u64::MAX);
        // Each miss not back by now, and how many instructions issued after it.
        for m in self.loads_in_flight.iter().filter(|m| m.left(now) > 0) {
            out.extend([m.left(now), self.issued - m.issued]);
        }
        out.push(u64::MAX);
        if let Some(r) = &self.return_stack {
            r.canonical(out);
        }
        out.extend([(keys.line)(self.ip), (keys.line)(self.fetch_line)]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A strand that has not run since `at` describes itself at the core's cycle as
    /// the same strand brought up to it does: the period search sees the strands that
    /// wait as they will be when they run.
    #[test]
    fn a_waiting_strand_is_described_as_it_will_be_when_it_runs() {
        let mut s = Strand::new(8, 0);
        s.store_buffer.push(Buffered { addr: 64, size: 8, commit_at: 5, queued_at: 5, written_at: 30 });
        s.store_buffer.push(Buffered { addr: 128, size: 4, commit_at: 9, queued_at: 9, written_at: 90 });
        s.issued = 9;
        s.issued = 2;
        s.miss(200);
        s.issued = 5;
        s.miss(20);
        let keys = Keys { line: &|a| a, page: &|a| a };
        for now in [0, 10, 25, 60, 150, 300] {
            let (mut stale, mut caught) = (Vec::new(), Vec::new());
            s.canonical(&keys, now, &mut stale);
            let mut c = s.clone();
            c.catch_up(now);
            assert_eq!(c.at, now);
            c.canonical(&keys, now, &mut caught);
            assert_eq!(stale, caught, "{now} cycles on");
        }
        let mut c = s.clone();
        c.catch_up(300);
        assert!(c.store_buffer.is_empty() && c.loads_in_flight.is_empty() && c.reordered() == 0);
    }

    proptest::proptest! {
        /// The searches that rely on stores leaving in order find what a scan of
        /// every entry finds.
        #[test]
        fn the_store_buffer_searches_agree_with_scans(steps in proptest::collection::vec((0u64..4, 0u64..40, 0u64..40), 0..24), at in 0u64..600) {
            let mut s = Strand::new(8, 0);
            let (mut queued_at, mut written_at) = (0, 0);
            for (i, (commit, queued, written)) in steps.into_iter().enumerate() {
                queued_at += queued;
                written_at = (written_at + written).max(queued_at);
                s.buffer(Buffered { addr: i as u64 * 8, size: 8, commit_at: queued_at.saturating_sub(commit), queued_at, written_at });
            }
            let first = s.store_buffer.iter().position(|b| b.in_buffer(at)).unwrap_or(s.store_buffer.len());
            proptest::prop_assert_eq!(s.first_buffered(at), first);
            proptest::prop_assert_eq!(s.buffered(at), s.store_buffer.iter().filter(|b| b.in_buffer(at)).count());
            proptest::prop_assert_eq!(s.drained(at), s.store_buffer.iter().map(|b| b.left(at)).max().unwrap_or(0));
        }
    }

    /// MSP13: the reorder buffer holds the oldest outstanding miss and what issued
    /// after it; when that miss's data is back, what issued before the next oldest
    /// leaves with it, and the entries held over time are the occupancy's residence.
    #[test]
    fn msp13_the_reorder_buffer_frees_up_to_the_next_oldest_miss() {
        let mut s = Strand::new(8, 0);
        s.miss(100);
        s.issued = 10;
        s.miss(300);
        s.issued = 25;
        assert_eq!(s.reordered(), 25);
        s.elapse(100);
        assert_eq!(s.reordered(), 15, "the first miss and the ten after it left");
        assert_eq!(s.reorder.residence, 26 * 100, "the first miss and the 25 after it");
        s.elapse(50);
        assert_eq!(s.reorder.residence, 26 * 100 + 16 * 50);
        s.elapse(1000);
        assert_eq!((s.reordered(), s.loads_in_flight.len()), (0, 0));
        assert_eq!(s.reorder.residence, 26 * 100 + 16 * 200, "the second miss was back 200 cycles after the first");
    }
}
