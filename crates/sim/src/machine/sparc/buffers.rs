//! The T4 L2's buffers and the order its pipeline takes requests in (ERRATA MSP19,
//! MSP23-MSP25). A miss holds a miss-buffer entry from the cycle it gets one until its
//! line has been written into the L2; the dirty line it displaces, which leaves the L2
//! when the miss looks it up, holds a write-back buffer entry until the L3 has taken
//! it; then the miss holds a fill-buffer entry from its request to the L3 until its
//! line is in. Each waits for the entry it needs. A fill holds the L2's pipeline for
//! its last cycles, and a request of the core arriving then waits for it.
//!
//! Each buffer is a calendar of the cycle each entry is free again, on the buffers'
//! own clock: time passing costs one addition, an allocation a scan of a few entries.

use crate::stream::{Signal, Signals};

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

/// The cycle each entry of a buffer is free again (at or before `now`: free).
#[derive(Debug, Clone)]
struct Calendar(Vec<u64>);

impl Calendar {
    fn new(entries: usize) -> Calendar {
        Calendar(vec![0; entries])
    }

    /// The entry free soonest, and the cycle it is free.
    fn first(&self) -> (usize, u64) {
        self.0.iter().copied().enumerate().min_by_key(|&(_, free)| free).unwrap_or((0, 0))
    }

    /// Each entry's cycles until it is free, shortest first (entries are alike).
    fn canonical(&self, now: u64, out: &mut Vec<u64>) {
        let at = out.len();
        out.extend(self.0.iter().map(|&free| free.saturating_sub(now)));
        out[at..].sort_unstable();
    }
}

/// The miss, fill and write-back buffers of one L2.
#[derive(Debug, Clone)]
pub struct L2Buffers {
    /// Cycles since the machine started; the calendars count on this clock.
    now: u64,
    miss: Calendar,
    fill: Calendar,
    writeback: Calendar,
}

impl L2Buffers {
    pub fn new(sizes: L2BufferSizes) -> L2Buffers {
        L2Buffers { now: 0, miss: Calendar::new(sizes.miss), fill: Calendar::new(sizes.fill), writeback: Calendar::new(sizes.writeback) }
    }

    pub fn set_now(&mut self, now: u64) {
        self.now = now;
    }

    pub fn elapse(&mut self, cycles: u64) {
        self.now += cycles;
    }

    /// Whether a miss now finds every miss-buffer entry taken.
    pub fn miss_buffer_full(&self) -> bool {
        self.miss.first().1 > self.now
    }

    /// Cycles a request of the core arriving now waits in front of the pipeline for a
    /// fill that holds it; one that waits is a pipeline stall (TABLE 10-2 sl 24 mask 20).
    pub fn enter(&self, s: &mut Signals) -> u64 {
        let ahead = self.fill.0.iter().map(|&done| done.saturating_sub(self.now)).filter(|&left| left <= FILL_CYCLES).max();
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
        let mut held = arrives.max(miss_free);
        if let Some(hold) = writeback {
            let (w, writeback_free) = self.writeback.first();
            if writeback_free > held {
                s.bump(Signal::L2WritebackBufferFull);
                held = writeback_free;
            }
            self.writeback.0[w] = held + hold;
        }
        let (f, fill_free) = self.fill.first();
        if fill_free > held {
            s.bump(Signal::L2FillBufferFull);
        }
        let done = held.max(fill_free) + latency;
        self.miss.0[m] = done;
        self.fill.0[f] = done;
        done - self.now
    }

    /// The entries' remaining cycles, buffer by buffer.
    pub fn canonical(&self, out: &mut Vec<u64>) {
        for c in [&self.miss, &self.fill, &self.writeback] {
            c.canonical(self.now, out);
        }
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
