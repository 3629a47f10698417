//! L2D fills of shared lines on their way (ERRATA MMC51): the other core's snoops
//! come in the last cycles of each iteration (MMC23), and one that finds its line's
//! fill not back yet changes the state the fill leaves the line in (Table 4-89: "the
//! fill states of I and P correspond to inflight snoop vs. fill conflicts"); one
//! within three cycles of the fill is a snoop and a fill "within a 3 cycle window of
//! each other" (Table 4-91, P2_COV_SNP_FILL_NOSNP). A fill's state is laid in the
//! cycle its data is back once no snoop can change it any more.

use crate::machine::{Keys, Moves};
use crate::stream::Signal;

/// Table 4-91: "within a 3 cycle window of each other".
pub(super) const WINDOW: u64 = 3;

/// One fill of a shared line: its line, the cycle its data is back, the state it
/// leaves the line in (an `L2dFills*` signal), and whether that is final (laid).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Fill {
    line: u64,
    ready: u64,
    state: Signal,
    laid: bool,
}

#[derive(Debug, Clone, Default)]
pub(super) struct Fills {
    fills: Vec<Fill>,
}

impl Fills {
    /// A fill of shared line `line` in `state`, back at cycle `ready`.
    pub(super) fn add(&mut self, line: u64, ready: u64, state: Signal) {
        self.fills.push(Fill { line, ready, state, laid: false });
    }

    /// The other core's snoop of `line` at cycle `at`, which takes the line (a read
    /// for ownership) or only reads it: a fill still on its way leaves it Invalid, or
    /// Pending until the snoop's answer is given (`settle` lays the state). Returns
    /// whether the snoop and a fill of the line were within [`WINDOW`] cycles of each
    /// other.
    pub(super) fn snoop(&mut self, line: u64, at: u64, takes: bool) -> bool {
        let mut window = false;
        for f in self.fills.iter_mut().filter(|f| f.line == line) {
            window |= f.ready.abs_diff(at) <= WINDOW;
            if !f.laid && f.ready > at {
                f.state = if takes { Signal::L2dFillsInvalid } else { Signal::L2dFillsPending };
            }
        }
        window
    }

    /// The fills no snoop can change any more once the iteration ends at `end` (those
    /// back by then), each `(state, ready)` for the timeline to lay; it forgets those
    /// no later snoop can come within the window of.
    pub(super) fn settle(&mut self, end: u64) -> Vec<(Signal, u64)> {
        let mut settled = Vec::new();
        for f in self.fills.iter_mut().filter(|f| !f.laid && f.ready <= end) {
            f.laid = true;
            settled.push((f.state, f.ready));
        }
        self.fills.retain(|f| !f.laid || f.ready + WINDOW >= end);
        settled
    }

    /// The state relative to `now`: every fill's line, cycles to its data, state and
    /// whether it is laid.
    pub(super) fn canonical(&self, keys: &Keys, now: u64, out: &mut Vec<u64>) {
        out.push(u64::MAX - self.fills.len() as u64);
        for f in &self.fills {
            // A laid fill matters only for the window: how far back it is.
            let ready = f.ready.saturating_add(WINDOW + 1).saturating_sub(now);
            out.extend([(keys.line)(f.line), ready, f.state as u64, u64::from(f.laid)]);
        }
    }

    pub(super) fn relocate(&mut self, to: &Moves) {
        for f in &mut self.fills {
            if let Some(moved) = (to.line)(f.line) {
                f.line = moved;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_snoop_before_the_data_changes_the_fills_state_and_one_after_does_not() {
        let mut f = Fills::default();
        f.add(0x1000, 100, Signal::L2dFillsExclusive);
        f.add(0x2000, 50, Signal::L2dFillsModified);
        assert!(!f.snoop(0x1000, 90, true), "ten cycles before the fill");
        assert!(f.snoop(0x2000, 52, false), "two cycles after the fill");
        assert_eq!(f.settle(60), vec![(Signal::L2dFillsModified, 50)], "back before the snoop: unchanged");
        // Laid, and no later snoop can come within the window of it: forgotten.
        assert!(!f.snoop(0x2000, 53, true));
        assert_eq!(f.settle(100), vec![(Signal::L2dFillsInvalid, 100)]);
        assert_eq!(f.fills.len(), 1);
        assert_eq!(f.settle(200), vec![]);
        assert!(f.fills.is_empty());
    }

    #[test]
    fn a_read_leaves_a_fill_pending() {
        let mut f = Fills::default();
        f.add(0x1000, 100, Signal::L2dFillsShared);
        assert!(f.snoop(0x1000, 98, false));
        assert_eq!(f.settle(100), vec![(Signal::L2dFillsPending, 100)]);
    }
}
