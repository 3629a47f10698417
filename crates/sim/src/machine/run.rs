//! Runs a program on a chip's core model and turns it into the block stream the PMU
//! models count, fast.
//!
//! Every iteration of a loop is simulated through the core's structures until the
//! machine provably repeats: its complete state at two iteration boundaries is the
//! same once the lines and pages of each moving data stream are taken relative to the
//! stream's position. The iterations in between are then one block body, repeated as
//! often as nothing can break the repetition (the loop's last iteration, a stream
//! wrapping round its buffer, the timer), and the structures are moved on as if those
//! iterations had run. Everything else is simulated iteration by iteration, so the
//! counts are exactly those of simulating every iteration; `Skipping::Off` does that,
//! and the property tests compare the two.

use std::collections::VecDeque;

use super::{Core, Keys, Moves, ALIAS};
use crate::program::{gcd, lcm, Phase, PhaseError, Program};
use crate::stream::{Block, Span};

/// Quanta above this many iterations are not worth waiting for: the loop is simulated
/// iteration by iteration.
const MAX_QUANTUM: u64 = 1 << 16;
/// Cycles a software thread runs before the next takes its turn, when the program has
/// no timer of its own.
const TURN_CYCLES: u64 = 1 << 18;
/// Simulated iterations are emitted in blocks of about this many spans.
const EMIT_SPANS: usize = 64;
/// A period longer than this many spans is not kept: the memory would outweigh the
/// gain.
const MAX_PERIOD_SPANS: usize = 1 << 17;

/// Whether the runner may skip repeating iterations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Skipping {
    On,
    /// Simulate every iteration (for proofs and for comparing with other simulators).
    Off,
}

/// One software thread: its phases and where it stands.
struct SoftThread {
    phases: Box<dyn Iterator<Item = Phase> + Send>,
    /// The phase it is in and its next iteration.
    current: Option<(Phase, u64)>,
}

/// The phase the core is running, and where it stands.
struct Running {
    phase: Phase,
    k: u64,
    finder: Option<Finder>,
    /// The timer may stop it at an iteration boundary (user code).
    interruptible: bool,
    /// It is part of the timer's handler, not of a software thread.
    handler: bool,
}

/// A program running on one hardware thread of a core: an endless iterator of blocks,
/// produced as they are consumed (a long loop that cannot be skipped is simulated a
/// few blocks at a time, never held whole).
pub struct Runner<C: Core> {
    core: C,
    threads: Vec<SoftThread>,
    running: usize,
    current: Option<Running>,
    timer: Option<crate::program::Timer>,
    /// The timer's handler phases still to run for the tick in progress.
    handlers: VecDeque<Phase>,
    ticking: bool,
    /// The core asked for the next software thread.
    switch: bool,
    skipping: Skipping,
    /// Cycles run so far, and when the timer fires next.
    cycles: u64,
    next_tick: u64,
    out: VecDeque<Block>,
    /// Spans of simulated iterations not yet emitted.
    pending: Vec<Span>,
    /// The finder's span buffer, kept between phases: it grows to megabytes, and
    /// allocating it afresh for every loop would fault in new pages each time.
    history: VecDeque<Span>,
    /// The malformed phase that ended the program, if one did.
    error: Option<PhaseError>,
}

impl<C: Core> Runner<C> {
    pub fn new(mut core: C, program: Program, skipping: Skipping) -> Runner<C> {
        let threads: Vec<SoftThread> = program.threads.into_iter().map(|phases| SoftThread { phases, current: None }).collect();
        core.software_threads(threads.len());
        // Threads of a program without an operating system's timer take turns on the
        // hardware all the same (strands of one core, ERRATA MSP1): a turn is a timer
        // tick without a handler.
        let timer = match program.timer {
            None if threads.len() > 1 => Some(crate::program::Timer { period: TURN_CYCLES, handler: Vec::new() }),
            timer => timer,
        };
        let next_tick = timer.as_ref().map_or(u64::MAX, |t| t.period);
        Runner {
            core,
            threads,
            running: 0,
            current: None,
            timer,
            handlers: VecDeque::new(),
            ticking: false,
            switch: false,
            skipping,
            cycles: 0,
            next_tick,
            out: VecDeque::new(),
            pending: Vec::new(),
            history: VecDeque::new(),
            error: None,
        }
    }

    /// Why the program ended early: a phase that refers to streams or tables it does
    /// not have, or is otherwise malformed (`Phase::check`). The machine never runs
    /// such a phase.
    pub fn error(&self) -> Option<&PhaseError> {
        self.error.as_ref()
    }

    fn flush(&mut self) {
        if !self.pending.is_empty() {
            let body = std::mem::replace(&mut self.pending, Vec::with_capacity(2 * EMIT_SPANS));
            self.out.push_back(Block { body, repeat: 1 });
        }
    }

    fn timer_due(&self) -> bool {
        self.cycles >= self.next_tick
    }

    /// Takes the next phase to run: the tick's handler first, then the running
    /// software thread's phase. `false` when the program has ended.
    fn start(&mut self) -> bool {
        let (phase, k, handler) = match self.handlers.pop_front() {
            Some(h) => (h, 0, true),
            None => {
                let Some(t) = self.threads.get_mut(self.running) else { return false };
                match t.current.take().or_else(|| t.phases.next().map(|p| (p, 0))) {
                    Some((p, k)) => (p, k, false),
                    None => return false,
                }
            }
        };
        if let Err(e) = phase.check() {
            self.error = Some(e);
            self.threads.clear();
            self.handlers.clear();
            return false;
        }
        // Execution (re)starts at the top of the loop body.
        self.core.enter(&phase, self.running);
        self.core.may_switch(!handler && self.threads.len() > 1);
        let finder = Finder::new(&phase, &self.core, self.skipping, &mut self.history);
        let interruptible = !handler && phase.privilege.is_user() && self.timer.is_some();
        self.current = Some(Running { phase, k, finder, interruptible, handler });
        true
    }

    /// Runs the current phase until it has produced a block, ended or been
    /// interrupted.
    fn advance(&mut self) {
        let Some(mut run) = self.current.take() else { return };
        if !self.run_phase(&mut run) {
            self.current = Some(run);
            return;
        }
        if let Some(mut f) = run.finder.take() {
            f.spans.clear();
            self.history = f.spans;
        }
        if !run.handler && run.k < run.phase.iterations {
            self.threads[self.running].current = Some((run.phase, run.k));
        }
        if run.interruptible && self.timer_due() {
            // The tick: its handler runs, then the next software thread.
            if let Some(timer) = &self.timer {
                self.handlers.extend(timer.handler.iter().cloned());
                self.ticking = true;
            }
        }
        if std::mem::take(&mut self.switch) && !self.ticking {
            self.running = (self.running + 1) % self.threads.len().max(1);
        }
        if self.ticking && self.handlers.is_empty() && (run.handler || self.timer.as_ref().is_some_and(|t| t.handler.is_empty())) {
            self.ticking = false;
            self.next_tick = self.cycles + self.timer.as_ref().map_or(u64::MAX, |t| t.period);
            self.running = (self.running + 1) % self.threads.len().max(1);
        }
    }

    /// Runs `run` from its iteration; with `interruptible`, stops at the first
    /// iteration boundary where the timer is due. Returns whether the phase stopped
    /// (ended or was interrupted) rather than paused with blocks to hand out.
    fn run_phase(&mut self, run: &mut Running) -> bool {
        let phase = &run.phase;
        while run.k < phase.iterations {
            let k = run.k;
            if run.interruptible && self.timer_due() {
                return true;
            }
            if let Some(f) = run.finder.as_mut().filter(|f| f.due(k)) {
                if let Some(skip) = f.check(phase, &self.core, k) {
                    // Repeat the period as often as nothing breaks it: the loop's exit,
                    // the streams, the timer.
                    let mut r = skip.repeat.min((phase.iterations - 1 - k) / skip.period);
                    if run.interruptible {
                        // The timer must not become due inside a skipped period.
                        r = r.min((self.next_tick - self.cycles) / skip.cycles.max(1));
                    }
                    if r > 0 {
                        self.flush();
                        let iterations = r * skip.period;
                        self.out.push_back(Block { body: skip.body, repeat: r });
                        f.relocate(&mut self.core, phase, iterations);
                        self.cycles += r * skip.cycles;
                        run.k += iterations;
                        f.reset(run.k);
                        return false;
                    }
                }
            }
            let start = self.pending.len();
            // An iteration makes a span or two per instruction: room for them at once,
            // where doubling would copy a trace's chunk of thousands of records again
            // and again (and growing an empty vector would still copy its old buffer).
            let room = 2 * phase.body.len();
            if self.pending.is_empty() && self.pending.capacity() < room {
                self.pending = Vec::with_capacity(room);
            } else {
                self.pending.reserve(room);
            }
            self.core.iterate(phase, k, &mut self.pending);
            let spans = &self.pending[start..];
            self.cycles += spans.iter().map(|s| s.cycles).sum::<u64>();
            if let Some(f) = run.finder.as_mut() {
                f.record(spans);
            }
            run.k += 1;
            // Handed out as soon as there are enough, whatever comes next: threads that
            // switch after every iteration would otherwise pile them up unbounded.
            let full = self.pending.len() >= EMIT_SPANS;
            if full {
                self.flush();
            }
            if self.core.take_switch() && self.threads.len() > 1 && !run.handler {
                // The core switches threads on an event of its own (Montecito's L3
                // miss): the next software thread runs from the next iteration.
                self.switch = true;
                return true;
            }
            if full {
                return false;
            }
        }
        true
    }
}

impl<C: Core> Iterator for Runner<C> {
    type Item = Block;

    fn next(&mut self) -> Option<Block> {
        loop {
            if let Some(b) = self.out.pop_front() {
                return Some(b);
            }
            if self.current.is_none() && !self.start() {
                self.flush();
                return self.out.pop_front();
            }
            self.advance();
        }
    }
}

/// A period found: the spans of one period, shifted to stand for the next, its
/// cycles, and how many periods may be skipped as far as the streams are concerned.
struct Skip {
    period: u64,
    body: Vec<Span>,
    cycles: u64,
    repeat: u64,
}

/// How a moving data stream enters the comparison of states. (A stream whose
/// addresses repeat within a few iterations, a fixed location or a small table, is
/// compared as it is, and its cycle joins the quantum.)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Motion {
    /// It moves on: lines and pages relative to its position.
    Moving,
    /// It moves on in pages too large to come back to the same TLB sets soon: lines
    /// relative, pages as they are, and no skip may cross a page.
    MovingInPage,
}

/// A moving stream's aligned address range, and how it moves.
#[derive(Debug, Clone, Copy)]
struct Region {
    stream: usize,
    start: u64,
    end: u64,
    motion: Motion,
}

/// A snapshot: iteration, hash and canonical state, and where its iteration's spans
/// start in `Finder::spans`.
struct Snapshot {
    k: u64,
    hash: u64,
    state: Vec<u64>,
    /// The large structures' state (`Core::canonical_outer`), once the snapshot has
    /// been a candidate.
    outer: Option<Vec<u64>>,
    spans: usize,
}

/// Snapshots kept for comparison.
const SNAPSHOTS: usize = 16;
/// Snapshots taken one quantum apart before the spacing starts doubling.
const DENSE: u64 = 8;

/// Looks for the machine repeating itself while a phase runs.
struct Finder {
    /// Iterations between two moments at which the structures index every stream the
    /// same way and every branch pattern and cyclic stream is at the same point.
    quantum: u64,
    regions: Vec<Region>,
    /// The lowest start and highest end of the regions: most addresses are outside.
    bounds: (u64, u64),
    /// Bytes past a stream's position that one iteration touches.
    reach: u64,
    snapshots: Vec<Snapshot>,
    /// Spans since the oldest snapshot (forgotten from the front).
    spans: VecDeque<Span>,
    taken: u64,
    next: u64,
}

impl Finder {
    /// `None` when the phase cannot be proved to repeat cheaply: skipping is off, a
    /// quantum is too long, or moving streams overlap each other or other data.
    fn new(phase: &Phase, core: &dyn Core, skipping: Skipping, spans: &mut VecDeque<Span>) -> Option<Finder> {
        if skipping == Skipping::Off || phase.iterations < 4 {
            return None;
        }
        let reach = phase.body.iter().filter_map(|op| op.access()).map(|a| u64::from(a.offset) + u64::from(a.size)).max().unwrap_or(0);
        let mut quantum = phase.control_period();
        let mut regions = Vec::new();
        let mut fixed = Vec::new();
        for (stream, s) in phase.streams.iter().enumerate() {
            // A stream is compared as it is when its addresses come back sooner than
            // its structures would index it the same way again.
            let q = core.quantum(s);
            let iterations = |bytes: u64| bytes / gcd(bytes, s.stride.unsigned_abs()).max(1);
            let lines = lcm(quantum, iterations(q.lines));
            let pages = lcm(lines, iterations(q.pages));
            let moving = if pages <= MAX_QUANTUM { pages } else { lines };
            let cyclic = lcm(quantum, s.cycle());
            if s.stride == 0 || cyclic_is_cheaper(cyclic, moving, s.cycle(), phase.iterations) {
                quantum = cyclic;
                fixed.push((s.base, s.base + s.footprint + reach));
                continue;
            }
            let motion = if pages <= MAX_QUANTUM { Motion::Moving } else { Motion::MovingInPage };
            quantum = moving;
            let start = s.base / s.page * s.page;
            let end = (s.base + s.footprint + reach).div_ceil(s.page).saturating_mul(s.page);
            regions.push(Region { stream, start, end, motion });
        }
        // Finding a period takes at least two quanta after the first: a shorter loop
        // cannot gain, so it does not pay for snapshots and recording.
        if quantum > MAX_QUANTUM || phase.iterations < 4 * quantum {
            return None;
        }
        // Every address must belong to one moving stream at most, and fixed data and
        // code to none.
        fixed.push((phase.entry, phase.entry + 1));
        for (n, a) in regions.iter().enumerate() {
            let overlaps = |(b0, b1): (u64, u64)| a.start < b1 && b0 < a.end;
            if regions[n + 1..].iter().any(|b| overlaps((b.start, b.end))) || fixed.iter().any(|&f| overlaps(f)) {
                return None;
            }
        }
        let spans = std::mem::take(spans);
        let bounds = (regions.iter().map(|r| r.start).min().unwrap_or(0), regions.iter().map(|r| r.end).max().unwrap_or(0));
        Some(Finder { quantum, regions, bounds, reach, snapshots: Vec::new(), spans, taken: 0, next: quantum })
    }

    fn due(&self, k: u64) -> bool {
        k >= self.next && k.is_multiple_of(self.quantum)
    }

    fn reset(&mut self, k: u64) {
        self.snapshots.clear();
        self.spans.clear();
        self.taken = 0;
        self.next = k + self.quantum;
    }

    fn record(&mut self, spans: &[Span]) {
        if self.snapshots.is_empty() {
            return;
        }
        self.spans.extend(spans.iter().copied());
        while self.spans.len() > MAX_PERIOD_SPANS && !self.snapshots.is_empty() {
            // Forget the oldest snapshot and the spans only it needed.
            self.forget_oldest();
        }
    }

    /// Drops the oldest snapshot and the spans only it needed.
    fn forget_oldest(&mut self) {
        self.snapshots.remove(0);
        let from = self.snapshots.first().map_or(self.spans.len(), |s| s.spans);
        self.spans.drain(..from);
        for s in &mut self.snapshots {
            s.spans -= from;
        }
    }

    /// The moving region an address (or the page an `ALIAS` address stands for) is in.
    fn region(&self, a: u64) -> Option<&Region> {
        let a = a & !ALIAS;
        if !(self.bounds.0..self.bounds.1).contains(&a) {
            return None;
        }
        self.regions.iter().find(|r| (r.start..r.end).contains(&a))
    }

    /// The canonical key of an address in iteration `k`: relative to its stream's
    /// position where the stream moves (pages only for `Moving` streams), absolute
    /// otherwise.
    fn key(&self, phase: &Phase, k: u64, a: u64, page: bool) -> u64 {
        // An alias stands for a page, wherever a structure keeps it.
        let page = page || a & ALIAS != 0;
        match self.region(a) {
            Some(r) if !page || r.motion == Motion::Moving => {
                let offset = a.wrapping_sub(phase.streams[r.stream].position(k)) & ((1 << 56) - 1);
                (1 << 63) | (r.stream as u64) << 56 | offset
            }
            _ => a,
        }
    }

    /// Where an address goes when `n` iterations are skipped.
    fn moved(&self, phase: &Phase, n: u64, a: u64, page: bool) -> Option<u64> {
        let page = page || a & ALIAS != 0;
        let r = self.region(a).filter(|r| !page || r.motion == Motion::Moving)?;
        Some(a.wrapping_add_signed(phase.streams[r.stream].stride.wrapping_mul(n as i64)))
    }

    /// Moves the core's structures on by `n` iterations.
    fn relocate(&self, core: &mut dyn Core, phase: &Phase, n: u64) {
        core.relocate(&Moves { line: &|a| self.moved(phase, n, a, false), page: &|a| self.moved(phase, n, a, true) });
    }

    /// The canonical state of the core (`outer`: of its large structures) at
    /// iteration `k`.
    fn describe(&self, phase: &Phase, core: &dyn Core, k: u64, outer: bool, out: &mut Vec<u64>) {
        let (line, page) = (|a| self.key(phase, k, a, false), |a| self.key(phase, k, a, true));
        let keys = Keys { line: &line, page: &page };
        if outer {
            core.canonical_outer(&keys, out);
        } else {
            core.canonical(&keys, out);
        }
    }

    /// Takes a snapshot at iteration `k`; when it equals an earlier one, the
    /// iterations between are a period.
    fn check(&mut self, phase: &Phase, core: &dyn Core, k: u64) -> Option<Skip> {
        // The state is as long as the last one, give or take: no growing and copying.
        let mut state = Vec::with_capacity(self.snapshots.last().map_or(0, |s| s.state.len() + 64));
        self.describe(phase, core, k, false, &mut state);
        let hash = fingerprint(&state);
        self.taken += 1;
        let spacing = if self.taken < DENSE { 1 } else { 1 << (self.taken - DENSE).min(16) };
        self.next = k.saturating_add(spacing * self.quantum);
        // A moving stream that wrapped in between moved by something else than its
        // stride times the iterations: equal states then prove nothing about skipping.
        let unwrapped = |then: u64| self.regions.iter().all(|r| phase.streams[r.stream].until_wrap(then) > k - then);
        let mut outer = None;
        // The latest match: the shortest period, and the one whose outer state a
        // confirmation recorded.
        if let Some(i) = self.snapshots.iter().rposition(|s| s.hash == hash && s.state == state && unwrapped(s.k)) {
            // The rest matches: now the large structures, which a snapshot records only
            // when it is a candidate, so the earlier one may not have them yet; then the
            // period is confirmed one period later.
            let mut o = Vec::new();
            self.describe(phase, core, k, true, &mut o);
            let then = &self.snapshots[i];
            if o.is_empty() || then.outer.as_ref() == Some(&o) {
                return Some(self.skip(phase, k, i));
            }
            self.next = k + (k - then.k);
            outer = Some(o);
        }
        if self.snapshots.len() == SNAPSHOTS {
            self.forget_oldest();
        }
        self.snapshots.push(Snapshot { k, hash, state, outer, spans: self.spans.len() });
        None
    }

    /// The skip from snapshot `i` to iteration `k`, whose states are equal.
    fn skip(&self, phase: &Phase, k: u64, i: usize) -> Skip {
        let then = &self.snapshots[i];
        let period = k - then.k;
        let mut body: Vec<Span> = self.spans.range(then.spans..).copied().collect();
        for mem in body.iter_mut().filter_map(|s| s.mem.as_mut()) {
            mem.addr = mem.addr.wrapping_add_signed(mem.stride.wrapping_mul(period as i64));
            mem.stride = mem.stride.wrapping_mul(period as i64);
        }
        let cycles = body.iter().map(|s| s.cycles).sum();
        // A stream must not wrap round, nor (in large pages) leave the page it was in
        // at the earlier snapshot.
        let mut room = u64::MAX;
        for r in &self.regions {
            let s = &phase.streams[r.stream];
            room = room.min(s.until_wrap(k));
            if r.motion == Motion::MovingInPage {
                room = room.min(s.in_page(then.k, self.reach).saturating_sub(period));
            }
        }
        Skip { period, body, cycles, repeat: room / period }
    }
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

/// A 64-bit fingerprint of a state (FNV-1a over the words), to compare cheaply first.
fn fingerprint(state: &[u64]) -> u64 {
    state.iter().fold(0xcbf2_9ce4_8422_2325, |h, &w| (h ^ w).wrapping_mul(0x0000_0100_0000_01B3))
}
