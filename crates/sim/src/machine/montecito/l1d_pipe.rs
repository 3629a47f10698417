//! The L1D pipeline's conflicts (ERRATA MMC44): the eight fills the L1D can have on
//! their way for loads' misses (Table 2-9: "8 Fills"), a store that meets a fill of its line, and a
//! load that meets a store to its bytes that has not written the L1D yet. Each holds
//! the access back in the L1D stage: a BE_L1D_FPU_BUBBLE cycle of its own reason.

use super::group::Group;
use super::{Montecito, Out, Signals};
use crate::machine::{Keys, Moves};
use crate::stream::{L1dConflict, Signal};

/// Fills the L1D has on their way at most (Table 2-9).
pub(super) const L1D_FILLS: usize = 8;

/// Stores remembered: more than issue within any `store_write_cycles` (one a cycle).
const STORES: usize = 8;

#[derive(Debug, Clone, Default)]
pub(super) struct L1dPipe {
    /// The L1D lines being filled, with the cycle each fill is done.
    fills: Vec<(u64, u64)>,
    /// The latest stores: the 8-byte chunk each wrote and the cycle it is in the L1D.
    stores: Vec<(u64, u64)>,
}

impl L1dPipe {
    /// The cycle a read miss at `now` has a fill buffer: `now`, or when the first of
    /// the eight taken ones is done (the miss recirculates until then).
    pub(super) fn fill_buffer(&mut self, now: u64) -> u64 {
        self.fills.retain(|&(_, done)| done > now);
        if self.fills.len() < L1D_FILLS {
            return now;
        }
        self.fills.iter().map(|&(_, done)| done).min().unwrap_or(now)
    }

    /// A fill of `line` that is done at `done`.
    pub(super) fn fill(&mut self, line: u64, done: u64) {
        self.fills.push((line, done));
    }

    /// The cycle the fill of `line` under way at `now` is done, if one is.
    pub(super) fn filling(&self, line: u64, now: u64) -> Option<u64> {
        self.fills.iter().filter(|&&(l, done)| l == line && done > now).map(|&(_, done)| done).max()
    }

    /// A store of `chunk` that is in the L1D at `written`.
    pub(super) fn store(&mut self, chunk: u64, written: u64) {
        if self.stores.len() == STORES {
            self.stores.remove(0);
        }
        self.stores.push((chunk, written));
    }

    /// The cycle the last store to `chunk` under way at `now` is in the L1D, if one is.
    pub(super) fn storing(&self, chunk: u64, now: u64) -> Option<u64> {
        self.stores.iter().filter(|&&(c, written)| c == chunk && written > now).map(|&(_, written)| written).max()
    }

    /// The cycle the last store under way at `now` is in the L1D, if one is: a
    /// spill's NaT bit reaches ar.unat with its data.
    pub(super) fn storing_any(&self, now: u64) -> Option<u64> {
        self.stores.iter().map(|&(_, written)| written).filter(|&written| written > now).max()
    }

    /// What the comparison of states sees: the fills and stores under way, their
    /// addresses as `keys` give them and their times from `now`.
    pub(super) fn canonical(&self, keys: &Keys, now: u64, out: &mut Vec<u64>) {
        for list in [&self.fills, &self.stores] {
            super::multiset(out, list.iter().filter(|&&(_, at)| at > now).map(|&(addr, at)| [(keys.line)(addr), at - now]).collect());
        }
    }

    /// Moves the addresses when iterations are skipped.
    pub(super) fn relocate(&mut self, to: &Moves) {
        for (addr, _) in self.fills.iter_mut().chain(self.stores.iter_mut()) {
            if let Some(moved) = (to.line)(*addr) {
                *addr = moved;
            }
        }
    }
}

impl Montecito {
    /// An access the L1D holds back until `until` (if later than now) for `why`: the
    /// group so far issues, and the back end waits.
    pub(super) fn l1d_conflict(&mut self, until: Option<u64>, why: L1dConflict, ip: u64, g: &mut Group, out: &mut Out) {
        let Some(cycles) = until.map(|at| at.saturating_sub(self.now(out))).filter(|&c| c > 0) else { return };
        self.close(g, out);
        self.be_stall(out, ip, 0, cycles, l1d_stall(why));
    }
}

/// A cycle the L1D holds an access back for `why`: an LSU-full stall (MD37).
pub(super) fn l1d_stall(why: L1dConflict) -> Signals {
    Signals::default().with(Signal::LsuFullStallCycles, 1).with(Signal::L1dConflict, why as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_ninth_miss_waits_for_the_first_fill_to_be_done() {
        let mut p = L1dPipe::default();
        for i in 0..8 {
            assert_eq!(p.fill_buffer(10), 10);
            p.fill(i * 64, 20 + i);
        }
        assert_eq!(p.fill_buffer(10), 20);
        assert_eq!(p.fill_buffer(20), 20, "the first is done at 20");
        p.fill(0x1000, 30);
        assert_eq!(p.fill_buffer(20), 21, "eight again");
        assert_eq!(p.filling(64, 20), Some(21));
        assert_eq!(p.filling(64, 21), None);
    }

    #[test]
    fn a_load_meets_the_last_store_to_its_chunk_until_it_is_written() {
        let mut p = L1dPipe::default();
        p.store(0x100, 12);
        p.store(0x108, 13);
        assert_eq!(p.storing(0x100, 11), Some(12));
        assert_eq!(p.storing(0x100, 12), None);
        for i in 0..8 {
            p.store(0x200 + 8 * i, 20);
        }
        assert_eq!(p.storing(0x108, 11), None, "older stores are forgotten");
    }
}
