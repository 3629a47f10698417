//! The register stack engine (RSE): each thread's stacked registers, the frames calls
//! allocate in them, and the spills and fills to the backing store when the 96
//! physical registers run out (§2.4: per thread); and whether a frame has made calls,
//! which decides how its function returns (MMC45). Fills read the backing store
//! through the L1D (MMC17).

use super::{Montecito, Out, Signals};
use crate::stream::Signal;

/// Stacked general registers (r32-r127) of the physical register file.
const STACKED_REGISTERS: u32 = 96;
/// Call frames the register stack remembers (deeper chains forget their oldest).
const MAX_FRAMES: usize = 256;

/// Where each thread's backing store begins: a region of its own (Itanium region 1),
/// which no built-in program's data uses; a thread's stacked register `i` (counted
/// from the bottom of its register stack) is kept at `+ 8 i`.
const BACKING_STORE: u64 = 0x2000_0000_0000_0000;

/// One thread's register stack: the frames of the calls in progress, the stacked
/// registers they hold, and how many of those (the oldest) the RSE has spilled; for
/// each frame, whether its function has called another since it began.
#[derive(Debug, Clone, Default)]
pub(super) struct Rse {
    pub(super) frames: Vec<u8>,
    called: Vec<bool>,
    depth: u32,
    spilled: u32,
}

impl Rse {
    /// Whether the current frame's function has made a call: it saved its return
    /// link (b0) in a register, and restores it right before it returns.
    pub(super) fn restores_link(&self) -> bool {
        self.called.last().copied().unwrap_or(false)
    }

    /// What the comparison of states sees.
    pub(super) fn canonical(&self, out: &mut Vec<u64>) {
        out.push(self.frames.len() as u64);
        out.extend(self.frames.iter().zip(&self.called).map(|(&f, &c)| u64::from(f) | u64::from(c) << 8));
        out.extend([u64::from(self.depth), u64::from(self.spilled)]);
    }
}

impl Montecito {
    /// The register stack before a call or return retires: the current frame's
    /// registers and the older frames' still in the register file (dirty: the RSE has
    /// not spilled them), each as bits 2:0, 5:3 and 6 (RSE_CURRENT_REGS_*,
    /// RSE_DIRTY_REGS_*: "The Montecito processor can have a total of 96").
    pub(super) fn rse_registers(&self) -> Signals {
        let r = &self.rse[self.thread];
        let current = r.frames.last().map_or(0, |&f| u32::from(f));
        let dirty = (r.depth - r.spilled.min(r.depth)).saturating_sub(current);
        let mut s = Signals::default();
        for (n, [low, mid, high]) in [
            (current, [Signal::RseCurrentLow, Signal::RseCurrentMid, Signal::RseCurrentHigh]),
            (dirty, [Signal::RseDirtyLow, Signal::RseDirtyMid, Signal::RseDirtyHigh]),
        ] {
            s.set(low, (n & 7) as u8).set(mid, (n >> 3 & 7) as u8).set(high, (n >> 6 & 1) as u8);
        }
        s
    }

    /// A call allocates its frame on the register stack; what no longer fits in the
    /// physical stacked registers is spilled to the backing store, two registers a
    /// cycle (RSE_REFERENCES_RETIRED's maximum), while the pipeline waits.
    pub(super) fn rse_call(&mut self, frame: u8, out: &mut Out) {
        let r = &mut self.rse[self.thread];
        if r.frames.len() == MAX_FRAMES {
            // A chain this deep has long spilled its oldest frames: forget the oldest.
            r.called.remove(0);
            let oldest = u32::from(r.frames.remove(0));
            r.depth -= oldest;
            r.spilled = r.spilled.saturating_sub(oldest);
        }
        if let Some(caller) = r.called.last_mut() {
            *caller = true;
        }
        r.frames.push(frame);
        r.called.push(false);
        r.depth += u32::from(frame);
        let over = (r.depth - r.spilled).saturating_sub(STACKED_REGISTERS);
        r.spilled += over;
        self.rse_transfer(over, Signal::RseStores, Signal::RseSpillStallCycles, out);
    }

    /// A return frees its frame; when the caller's frame was spilled it is filled
    /// back before the caller goes on.
    pub(super) fn rse_return(&mut self, out: &mut Out) {
        let r = &mut self.rse[self.thread];
        let Some(frame) = r.frames.pop() else { return };
        r.called.pop();
        r.depth -= u32::from(frame);
        let caller = r.frames.last().map_or(0, |&f| u32::from(f));
        let short = caller.saturating_sub(r.depth - r.spilled.min(r.depth));
        let fill = short.min(r.spilled);
        r.spilled -= fill;
        let from = r.spilled;
        self.rse_fill(from, fill, out);
    }

    /// Fills stacked registers `from..from + registers` from the backing store, two a
    /// cycle, each line of them read through the L1D (§4.15: L1D_READS counts "RSE
    /// loads"): a line the L1D lacks (a spill writes through to the L2D and leaves it
    /// none) is an L1D read miss (L1D_READ_MISSES.RSE_FILL), brought from the L2D,
    /// where the spill wrote it, in the L2D's latency (Table 2-8 note 3: N = 5), for
    /// which the fill waits.
    fn rse_fill(&mut self, from: u32, registers: u32, out: &mut Out) {
        let base = BACKING_STORE + ((self.thread as u64) << 40);
        let per_line = (self.cfg.l1d.line / 8) as u32;
        let mut i = from;
        let mut already = 0;
        while i < from + registers {
            // The registers of this L1D line, to the fill's end.
            let n = (per_line - i % per_line).min(from + registers - i);
            let stall = Signals::default().with(Signal::RseFillStallCycles, 1);
            if !self.l1d.access(base + 8 * u64::from(i), false).hit {
                let wait = self.cfg.l2d_cycles;
                self.be_stall(out, self.ip, already, 1, stall.with(Signal::DCacheMisses, 1));
                self.be_stall(out, self.ip, already + 1, wait - 1, stall);
                already += wait;
            }
            let (pairs, odd) = (u64::from(n / 2), n % 2 == 1);
            self.be_stall(out, self.ip, already, pairs, stall.with(Signal::RseLoads, 2));
            if odd {
                self.be_stall(out, self.ip, already + pairs, 1, stall.with(Signal::RseLoads, 1));
            }
            already += pairs + u64::from(odd);
            i += n;
        }
    }

    /// `registers` moved between the stacked registers and memory, two a cycle.
    fn rse_transfer(&mut self, registers: u32, moved: Signal, stall: Signal, out: &mut Out) {
        let (pairs, odd) = (u64::from(registers / 2), registers % 2 == 1);
        self.be_stall(out, self.ip, 0, pairs, Signals::default().with(moved, 2).with(stall, 1));
        if odd {
            self.be_stall(out, self.ip, pairs, 1, Signals::default().with(moved, 1).with(stall, 1));
        }
    }
}
