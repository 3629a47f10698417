//! How a phase's data streams enter the comparison of states and move when iterations
//! are skipped: which streams move, the address ranges they cover, and the quantum of
//! iterations after which the core's structures index them the same way again.

use super::MAX_QUANTUM;
use crate::machine::{Core, ALIAS};
use crate::program::{gcd, lcm, Phase};

/// Iterations a stream must stay in one page for its pages to be kept as they are
/// when the turns are looked for: a skip cannot cross a page then.
const IN_PAGE: u64 = 64;

/// How a moving data stream enters the comparison of states. (A stream whose
/// addresses repeat within a few iterations, a fixed location or a small table, is
/// compared as it is, and its cycle joins the quantum.)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Motion {
    /// It moves on: lines and pages relative to its position.
    Moving,
    /// It moves on in pages too large to come back to the same TLB sets soon: lines
    /// relative, pages as they are, and no skip may cross a page.
    MovingInPage,
}

/// A moving stream's aligned address range, and how it moves.
#[derive(Debug, Clone, Copy)]
pub(super) struct Region {
    pub(super) stream: usize,
    pub(super) start: u64,
    pub(super) end: u64,
    pub(super) motion: Motion,
}

/// A phase's moving streams and its quantum.
#[derive(Debug, Clone)]
pub(super) struct Frame {
    /// Iterations between two moments at which the structures index every stream the
    /// same way and every branch pattern and cyclic stream is at the same point.
    pub(super) quantum: u64,
    pub(super) regions: Vec<Region>,
    /// The address ranges compared as they are: cyclic streams and the code.
    pub(super) fixed: Vec<(u64, u64)>,
    /// The lowest start and highest end of the regions: most addresses are outside.
    bounds: (u64, u64),
    /// Bytes past a stream's position that one iteration touches.
    reach: u64,
}

impl Frame {
    /// The frame of `phase` on `core`; `None` when moving streams overlap each other or
    /// other data, so that an address would not say which way it moves. A stream whose
    /// addresses come back soon is compared as it is when that costs fewer iterations
    /// (`cyclic_is_cheaper`), unless `prefer_moving`: the turns of several threads are looked
    /// for in a few iterations of each, and want the shortest quanta.
    pub(super) fn new<const F: usize>(phase: &Phase, core: &dyn Core<F>, prefer_moving: bool) -> Option<Frame> {
        let reach = phase.body.iter().filter_map(|op| op.access()).map(|a| u64::from(a.offset) + u64::from(a.size)).max().unwrap_or(0);
        let mut quantum = phase.control_period();
        let mut regions = Vec::new();
        let mut fixed = Vec::new();
        // A stream the phase never touches (a list pointer a loop carries but does not
        // follow) moves nothing the structures hold: lines left in its range by earlier
        // phases stay where they are, so they are compared as they are, and it sets no
        // quantum.
        let mut used = vec![false; phase.streams.len()];
        let touched = phase.body.iter().filter_map(|op| op.access()).map(|a| a.stream).chain(phase.dma.iter().map(|d| d.stream));
        for stream in touched {
            if let Some(u) = used.get_mut(usize::from(stream)) {
                *u = true;
            }
        }
        for (stream, s) in phase.streams.iter().enumerate().filter(|&(i, _)| used[i]) {
            // A stream is compared as it is when its addresses come back sooner than
            // its structures would index it the same way again.
            let q = core.quantum(s);
            let iterations = |bytes: u64| bytes / gcd(bytes, s.stride.unsigned_abs()).max(1);
            let lines = lcm(quantum, iterations(q.lines));
            let pages = lcm(lines, iterations(q.pages));
            // Pages whose quantum is far longer than the lines' are kept as they are, and
            // skips end at page boundaries; so too for the turns, whose quanta must be
            // short.
            let in_page = pages > MAX_QUANTUM || (prefer_moving && pages > 4 * lines && s.page / s.stride.unsigned_abs().max(1) >= IN_PAGE);
            let moving = if in_page { lines } else { pages };
            let cyclic = lcm(quantum, s.cycle());
            if s.stride == 0 || (!prefer_moving && cyclic_is_cheaper(cyclic, moving, s.cycle(), phase.iterations)) {
                quantum = cyclic;
                fixed.push((s.base, s.base.saturating_add(s.footprint).saturating_add(reach)));
                continue;
            }
            let motion = if in_page { Motion::MovingInPage } else { Motion::Moving };
            quantum = moving;
            let start = s.base / s.page * s.page;
            let end = s.base.saturating_add(s.footprint).saturating_add(reach).div_ceil(s.page).saturating_mul(s.page);
            regions.push(Region { stream, start, end, motion });
        }
        // Every address must belong to one moving stream at most, and fixed data, code
        // and a data breakpoint (whose accesses fault) to none.
        fixed.push((phase.entry, phase.entry.saturating_add(1)));
        if let Some(w) = phase.watch {
            fixed.push((w.addr, w.addr.saturating_add(w.bytes)));
        }
        let frame = Frame {
            quantum,
            bounds: (regions.iter().map(|r| r.start).min().unwrap_or(0), regions.iter().map(|r| r.end).max().unwrap_or(0)),
            regions,
            fixed,
            reach,
        };
        (!frame.regions.iter().enumerate().any(|(n, a)| {
            frame.regions[n + 1..].iter().any(|b| overlaps(a, (b.start, b.end))) || frame.fixed.iter().any(|&f| overlaps(a, f))
        }))
        .then_some(frame)
    }

    /// Whether `other`'s addresses are all told apart from this frame's: no moving
    /// region of either overlaps anything of the other.
    pub(super) fn apart(&self, other: &Frame) -> bool {
        let ranges = |f: &Frame| f.regions.iter().map(|r| (r.start, r.end)).chain(f.fixed.clone()).collect::<Vec<_>>();
        !self.regions.iter().any(|a| ranges(other).into_iter().any(|b| overlaps(a, b)))
            && !other.regions.iter().any(|a| ranges(self).into_iter().any(|b| overlaps(a, b)))
    }

    /// The moving region an address (or the page an `ALIAS` address stands for) is in,
    /// as the structure holding it sees it (`page`): lines relative in every moving
    /// region, pages only in `Moving` ones.
    pub(super) fn region(&self, a: u64, page: bool) -> Option<&Region> {
        // An alias stands for a page, wherever a structure keeps it.
        let page = page || a & ALIAS != 0;
        let a = a & !ALIAS;
        if !(self.bounds.0..self.bounds.1).contains(&a) {
            return None;
        }
        self.regions.iter().find(|r| (r.start..r.end).contains(&a)).filter(|r| !page || r.motion == Motion::Moving)
    }

    /// An address relative to its stream's position in iteration `k`, when it is in a
    /// region that moves it: the stream and the offset.
    pub(super) fn offset(&self, phase: &Phase, k: u64, a: u64, page: bool) -> Option<(usize, u64)> {
        let r = self.region(a, page)?;
        Some((r.stream, a.wrapping_sub(phase.streams[r.stream].position(k))))
    }

    /// Where an address goes when `n` iterations are skipped.
    pub(super) fn moved(&self, phase: &Phase, n: u64, a: u64, page: bool) -> Option<u64> {
        let r = self.region(a, page)?;
        Some(a.wrapping_add_signed(phase.streams[r.stream].stride.wrapping_mul(n as i64)))
    }

    /// Whether no moving stream wrapped round between iterations `then` and `k` (one
    /// that did moved by something else than its stride times the iterations).
    pub(super) fn unwrapped(&self, phase: &Phase, then: u64, k: u64) -> bool {
        self.regions.iter().all(|r| phase.streams[r.stream].until_wrap(then) > k - then)
    }

    /// How many iterations from `k` may be skipped in periods of `period` found from
    /// `then`: no stream may wrap round, nor (in large pages) leave the page it was in
    /// at `then`.
    pub(super) fn room(&self, phase: &Phase, then: u64, k: u64, period: u64) -> u64 {
        let mut room = u64::MAX;
        for r in &self.regions {
            let s = &phase.streams[r.stream];
            room = room.min(s.until_wrap(k));
            if r.motion == Motion::MovingInPage {
                room = room.min(s.in_page(then, self.reach).saturating_sub(period));
            }
        }
        room
    }
}

fn overlaps(a: &Region, (b0, b1): (u64, u64)) -> bool {
    a.start < b1 && b0 < a.end
}

/// Whether to compare a stream's addresses as they are (its position comes back
/// every `cycle` iterations; the quantum becomes `cyclic`) rather than relative to its
/// position (quantum `moving`, and every wrap of the position ends a skip). Finding a
/// period takes about three quanta of simulated iterations, once for a cyclic stream
/// and again after every wrap for a moving one.
fn cyclic_is_cheaper(cyclic: u64, moving: u64, cycle: u64, iterations: u64) -> bool {
    let cyclic_cost = if cyclic <= MAX_QUANTUM { (3 * cyclic).min(iterations) } else { iterations };
    let moving_cost = if cycle > 3 * moving { (3 * moving).saturating_mul(iterations.div_ceil(cycle)).min(iterations) } else { iterations };
    cyclic_cost <= moving_cost
}
