//! The T4 L2's buffers and the order its pipeline takes requests in (ERRATA MSP19,
//! MSP23-MSP25). A miss holds a miss-buffer entry from the cycle it gets one until its
//! line has been written into the L2; the dirty line it displaces, which leaves the L2
//! when the miss looks it up, holds a write-back buffer entry until the L3 has taken
//! it; then the miss holds a fill-buffer entry from its request to the L3 until its
//! line is in. Each waits for the entry it needs. A fill holds the L2's pipeline for
//! its last cycles, and a request of the core arriving then waits for it.
//!
//! Each buffer is a set of [`Entries`] on the buffers' own clock: time passing costs
//! one addition, an allocation a scan of a few entries. Strands that run at once reach
//! them a few cycles out of order, which entries allow.

use super::Signals;
use crate::machine::mem::{Entries, Queue};
use crate::stream::Signal;

/// Entries of the T4 L2's buffers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct L2BufferSizes {
    /// Misses outstanding (MSP19).
    pub miss: usize,
    /// Lines on their way from the L3 or memory (MSP23).
    pub fill: usize,
    /// Dirty lines on their way to the L3 (MSP24).
    pub writeback: usize,
}

/// Cycles a fill holds the L2's pipeline before its line is in the L2, in which the
/// core's requests wait behind it (MSP25; [T1]: the arbiter stalls the pipeline for a
/// fill's last two cycles and picks the core's requests only when no fill is ready).
const FILL_CYCLES: u64 = 2;

/// The miss, fill and write-back buffers of one L2.
#[derive(Debug, Clone)]
pub struct L2Buffers {
    /// Cycles since the machine started; the calendars count on this clock.
    now: u64,
    miss: Entries,
    fill: Entries,
    writeback: Entries,
}

impl L2Buffers {
    pub fn new(sizes: L2BufferSizes) -> L2Buffers {
        L2Buffers { now: 0, miss: Entries::new(sizes.miss), fill: Entries::new(sizes.fill), writeback: Entries::new(sizes.writeback) }
    }

    pub fn set_now(&mut self, now: u64) {
        self.now = now;
    }

    pub fn elapse(&mut self, cycles: u64) {
        self.now += cycles;
    }

    /// Whether a miss now finds every miss-buffer entry taken.
    pub fn miss_buffer_full(&self) -> bool {
        self.miss.full_at(self.now)
    }

    /// Cycles a request of the core arriving now waits in front of the pipeline for a
    /// fill that holds it; one that waits is a pipeline stall (TABLE 10-2 sl 24 mask 20).
    pub fn enter(&self, s: &mut Signals) -> u64 {
        let ahead = self.fill.frees().map(|done| done.saturating_sub(self.now)).filter(|&left| left <= FILL_CYCLES).max();
        match ahead {
            Some(left) if left > 0 => {
                s.bump(Signal::L2PipeStalls);
                left
            }
            _ => 0,
        }
    }

    /// A miss that entered the pipeline `entered` cycles from now and whose line takes
    /// `latency` cycles once its request is out; `writeback`: the cycles the L3 takes to
    /// accept the dirty line it displaces, if it displaces one. It waits for a
    /// miss-buffer entry, then its victim for a write-back entry, then it for a
    /// fill-buffer entry, counting each buffer it found full (sl 24 masks 10, 08, 04).
    /// Returns the cycles from now until its line is in the L2.
    pub fn miss(&mut self, entered: u64, latency: u64, writeback: Option<u64>, s: &mut Signals) -> u64 {
        let arrives = self.now + entered;
        let (m, miss_free) = self.miss.first();
        if miss_free > arrives {
            s.bump(Signal::L2MissBufferFull);
        }
        let got_miss = arrives.max(miss_free);
        let mut held = got_miss;
        if let Some(hold) = writeback {
            let (w, writeback_free) = self.writeback.first();
            if writeback_free > held {
                s.bump(Signal::L2WritebackBufferFull);
                held = writeback_free;
            }
            self.writeback.hold(w, got_miss, held, held + hold);
        }
        let (f, fill_free) = self.fill.first();
        if fill_free > held {
            s.bump(Signal::L2FillBufferFull);
        }
        let out = held.max(fill_free);
        let done = out + latency;
        self.miss.hold(m, arrives, got_miss, done);
        self.fill.hold(f, held, out, done);
        done - self.now
    }

    /// The entries' remaining cycles, buffer by buffer.
    pub fn canonical(&self, out: &mut Vec<u64>) {
        for c in [&self.miss, &self.fill, &self.writeback] {
            c.canonical(self.now, out);
        }
    }

    /// What each buffer has held.
    pub fn queues(&self) -> [Queue; 3] {
        let q = |name, e: &Entries| Queue { name, unit: None, size: e.size(), occupancy: e.occupancy() };
        [q("L2 miss buffer", &self.miss), q("L2 fill buffer", &self.fill), q("L2 write-back buffer", &self.writeback)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SIZES: L2BufferSizes = L2BufferSizes { miss: 4, fill: 2, writeback: 1 };

    #[test]
    fn a_miss_waits_for_a_fill_buffer_entry_while_it_holds_a_miss_buffer_entry() {
        let mut b = L2Buffers::new(SIZES);
        let mut s = Signals::default();
        assert_eq!((b.miss(0, 100, None, &mut s), b.miss(0, 100, None, &mut s)), (100, 100));
        assert_eq!(s, Signals::default());
        b.elapse(10);
        assert_eq!(b.miss(0, 100, None, &mut s), 190, "the third goes out when the first line is in");
        assert_eq!(s.get(Signal::L2FillBufferFull), 1);
        assert_eq!(b.miss(0, 100, None, &mut s), 190);
        assert!(b.miss_buffer_full(), "four misses hold the four entries");
        assert_eq!(b.miss(0, 100, None, &mut s), 290, "the fifth gets a miss entry at 100 and a fill entry at 200");
        assert_eq!((s.get(Signal::L2MissBufferFull), s.get(Signal::L2FillBufferFull)), (1, 3));
    }

    #[test]
    fn a_dirty_victim_waits_for_a_write_back_entry_and_a_fill_holds_the_pipeline_before_its_line_is_in() {
        let mut b = L2Buffers::new(SIZES);
        let mut s = Signals::default();
        assert_eq!(b.miss(0, 20, Some(50), &mut s), 20);
        assert_eq!(b.miss(0, 20, Some(50), &mut s), 70, "the first write-back leaves the entry at 50, then 20 cycles");
        assert_eq!(s.get(Signal::L2WritebackBufferFull), 1);
        b.elapse(19);
        assert_eq!(b.enter(&mut s), 1, "the first fill is in the pipeline");
        assert_eq!(s.get(Signal::L2PipeStalls), 1);
        b.elapse(1);
        assert_eq!(b.enter(&mut s), 0, "its line is in");
    }
}
