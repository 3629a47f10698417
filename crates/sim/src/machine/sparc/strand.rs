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
/// queue. Times are cycles from the strand's `at`, and stores are kept in program
/// order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Buffered {
    pub(super) addr: u64,
    pub(super) size: u8,
    /// Until it commits: the part of its time in the store buffer that is not spent
    /// waiting for the store queue (where there is none, all of it).
    pub(super) commit: u64,
    /// Until it leaves the store buffer for the store queue (where there is none:
    /// until it has been written).
    pub(super) queued: u64,
    /// Until it has been written.
    pub(super) left: u64,
}

impl Buffered {
    /// It still holds a store-buffer entry.
    pub(super) fn in_buffer(&self) -> bool {
        self.queued > 0
    }
}

#[derive(Debug, Clone)]
pub(super) struct Strand {
    pub(super) ip: u64,
    /// The line of the last fetch; `u64::MAX` for none.
    pub(super) fetch_line: u64,
    pub(super) store_buffer: Vec<Buffered>,
    /// What its store buffer and (T4) its load buffer have held.
    pub(super) stores: Occupancy,
    pub(super) loads: Occupancy,
    /// Cycles until each outstanding load miss that nothing waited for has its data,
    /// and instructions issued since the oldest (out-of-order cores only).
    pub(super) loads_in_flight: Vec<u64>,
    pub(super) issued_past_miss: u64,
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
            loads_in_flight: Vec::new(),
            issued_past_miss: 0,
            return_stack: (return_stack > 0).then(|| ReturnStack::new(return_stack)),
            at: 0,
            mode: Privilege::USER,
        }
    }

    /// Time passes: buffered stores are written, load misses return.
    pub(super) fn elapse(&mut self, cycles: u64) {
        self.at += cycles;
        if cycles == 0 {
            return;
        }
        for b in &mut self.store_buffer {
            b.commit = b.commit.saturating_sub(cycles);
            b.queued = b.queued.saturating_sub(cycles);
            b.left = b.left.saturating_sub(cycles);
        }
        self.store_buffer.retain(|b| b.left > 0);
        if !self.loads_in_flight.is_empty() {
            for l in &mut self.loads_in_flight {
                *l = l.saturating_sub(cycles);
            }
            self.loads_in_flight.retain(|&l| l > 0);
            if self.loads_in_flight.is_empty() {
                self.issued_past_miss = 0;
            }
        }
    }

    /// Brought up to the core's cycle `now`.
    pub(super) fn catch_up(&mut self, now: u64) {
        self.elapse(now.saturating_sub(self.at));
    }

    /// Its state as of the core's cycle `now` (it may not have run since `at`: what
    /// is over by now is left out, and what is not is counted from now).
    pub(super) fn canonical(&self, keys: &Keys, now: u64, out: &mut Vec<u64>) {
        let behind = now.saturating_sub(self.at);
        let left = |t: u64| t.saturating_sub(behind);
        for b in self.store_buffer.iter().filter(|b| left(b.left) > 0) {
            out.extend([(keys.line)(b.addr), u64::from(b.size), left(b.commit), left(b.queued), left(b.left)]);
        }
        out.push(u64::MAX);
        let loads = self.loads_in_flight.iter().map(|&l| left(l)).filter(|&l| l > 0);
        let outstanding = loads.clone().count();
        out.extend(loads);
        out.push(u64::MAX);
        // The count since the oldest miss is over once every miss is back.
        out.push(if outstanding > 0 { self.issued_past_miss } else { 0 });
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
        s.store_buffer.push(Buffered { addr: 64, size: 8, commit: 5, queued: 5, left: 30 });
        s.store_buffer.push(Buffered { addr: 128, size: 4, commit: 9, queued: 9, left: 90 });
        s.loads_in_flight.extend([20, 200]);
        s.issued_past_miss = 7;
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
        assert!(c.store_buffer.is_empty() && c.loads_in_flight.is_empty() && c.issued_past_miss == 0);
    }
}
