//! Runs a program on a core whose hardware threads run at once (SPARC strands,
//! docs/engine.md E2): each hardware thread is a lane with its own software threads,
//! phases and clock, and every cycle the core's arbiter gives the issue slots to the
//! lanes ready to issue, the least recently picked first, the way the chip's pick
//! rule does. A lane executes its next instruction when the arbiter first considers
//! it; the instruction's cycles (a fetch miss before it issues, its issue cycle, the
//! data it waits for after) are played from the lane's queue, and only an issue cycle
//! needs a slot: a stalled lane's cycles go to the others.
//!
//! Each cycle leaves as a span group (`crate::stream`): the primary is the lane that
//! issued (or, when none did, the lowest stalled one), the overlays are the other
//! lanes with a cycle of their own (stalled, or issuing beside it in another thread
//! group). A lane that stays stalled through the cycles that follow, counting the
//! same, is one overlay that lasts as long (E1 of docs/engine.md). A lane ready to
//! issue but not picked is marked on the primary with its mode
//! (`Signal::STRAND_READY`): a cycle of eight ready strands is one span, not eight
//! (spans are a few hundred bytes, and writing them was most of the cost). The
//! primary also carries what the whole core did: no lane fetching
//! (`NoFetchAllCycles`) and the tag waits of any lane (`CORE_WAITS`).
//!
//! Every cycle is simulated; repetition is not looked for (step G of the design).

use std::collections::VecDeque;

use super::{SoftThread, EMIT_SPANS, TURN_CYCLES};
use crate::machine::Core;
use crate::program::{Phase, PhaseError, Program, Timer};
use crate::stream::{Block, Privilege, Signal, Span};

/// How a core's lanes share its issue slots.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaneRule {
    /// Hardware threads.
    pub lanes: usize,
    /// Groups of consecutive lanes that each pick one lane a cycle.
    pub groups: usize,
    /// The groups share one load/store unit and one floating-point unit: one
    /// instruction of either group a cycle may use each.
    pub shared_units: bool,
}

/// A core whose hardware threads run at once, driven an instruction at a time.
pub trait Lanes<const F: usize>: Core<F> {
    fn rule(&self) -> LaneRule;
    /// Lane `lane` starts `phase` (its first instruction at `phase.entry`).
    fn enter_lane(&mut self, phase: &Phase, lane: usize);
    /// Lane `lane` executes instruction `i` of iteration `k` of `phase`, reaching the
    /// core's shared structures at cycle `now`; appends the spans of its cycles and
    /// returns how many instructions it consumed.
    fn step(&mut self, phase: &Phase, k: u64, i: usize, lane: usize, now: u64, out: &mut Vec<Span<F>>) -> usize;
    /// Lane `lane` ended iteration `k`, whose last instruction's spans are
    /// `out[from..]`: what happens at an iteration's end (other cores, devices).
    fn end_iteration(&mut self, phase: &Phase, k: u64, lane: usize, out: &mut Vec<Span<F>>, from: usize);
}

/// Lanes a core may have (the arbiter keeps them as bits, the stream marks them).
const MAX_LANES: usize = 8;

/// Signals of tag waits that TABLE 10-2 counts for the whole core (sl 9, sl 20 mask
/// 10 cross strands): on the primary when any lane waits.
pub const CORE_WAITS: [Signal; 5] = [
    Signal::RobWaitCycles,
    Signal::LoadBufferWaitCycles,
    Signal::StoreBufferWaitCycles,
    Signal::DTlbMissWaitCycles,
    Signal::StoreQueueWaitCycles,
];

/// The phase a lane runs and where it stands.
struct Running {
    phase: Phase,
    k: u64,
    i: usize,
    /// A user phase: the timer may stop it at an iteration boundary.
    interruptible: bool,
    /// The software thread it belongs to (`usize::MAX` for a handler).
    thread: usize,
}

/// One hardware thread.
struct Lane<const F: usize> {
    /// The software threads that run on it (`t % lanes`), and whose turn it is.
    soft: Vec<usize>,
    turn: usize,
    running: Option<Running>,
    handlers: VecDeque<Phase>,
    next_tick: u64,
    /// The spans of executed instructions still to play, from `head`.
    queue: Vec<Span<F>>,
    head: usize,
    /// The cycle it last issued in: the arbiter picks the least recent first.
    last: u64,
    /// Its overlay last added to the spans not yet emitted, which later cycles of the
    /// same queued span may join (`take`): where it is there, the cycle it ends at
    /// and the queued span's place.
    open: Option<(usize, u64, usize)>,
}

impl<const F: usize> Lane<F> {
    /// The next cycle to play, if any (spans of no cycles are dropped).
    fn front(&mut self) -> Option<&Span<F>> {
        while self.queue.get(self.head).is_some_and(|s| s.cycles == 0) {
            self.head += 1;
        }
        self.queue.get(self.head)
    }

    fn issues_next(&mut self) -> bool {
        self.front().is_some_and(|s| s.signals.get(Signal::Instructions) > 0)
    }

    /// Appends the next `m` cycles of its queue (the front span holds them), from
    /// cycle `now`, to `out`, as an overlay or not. An overlay that counts as the
    /// lane's overlay of the cycles just before joins it: a strand stalled while others
    /// issue a cycle at a time is one span, not one a cycle.
    fn take(&mut self, m: u64, out: &mut Vec<Span<F>>, overlay: bool, now: u64) {
        if self.front().is_none() {
            return;
        }
        let head = self.head;
        let Some(f) = self.queue.get_mut(head) else { return };
        let whole = f.cycles <= m;
        let cycles = f.cycles.min(m);
        // The cycles after a span's first carry no data reference nor what its
        // transactions met, and all but its last no branch outcome: an overlay of them
        // is what more of them add to.
        let joins =
            |(j, end, from): (usize, u64, usize)| (overlay && end == now && from == head && (!whole || f.branch.is_none())).then_some(j);
        match self.open.and_then(joins).and_then(|j| out.get_mut(j).map(|o| (j, o))) {
            Some((j, o)) => {
                o.cycles += cycles;
                self.open = Some((j, now + cycles, head));
            }
            None => {
                // A span's branch outcome stays with its last cycle, its data reference
                // and what its transactions met with its first.
                let branch = if whole { f.branch } else { None };
                out.push(Span { cycles, branch, overlay, ..*f });
                let plain = f.mem.is_none() && f.queues.is_empty() && branch.is_none();
                self.open = (overlay && plain).then(|| (out.len() - 1, now + cycles, head));
            }
        }
        if whole {
            self.head += 1;
        } else {
            f.cycles -= m;
            f.mem = None;
            f.queues = Default::default();
        }
    }
}

/// Which shared unit an issuing span needs, as bits: 1 load/store, 2 floating point.
fn units<const F: usize>(s: &Span<F>) -> u8 {
    let memory = [Signal::Loads, Signal::Stores, Signal::Atomics, Signal::SoftwarePrefetches, Signal::BlockLoadsStores];
    u8::from(memory.iter().any(|&m| s.signals.get(m) > 0)) | u8::from(s.signals.get(Signal::FguCryptoInstructions) > 0) << 1
}

/// A program on a core's lanes: an endless iterator of blocks, produced as they are
/// consumed.
pub struct LaneRunner<C: Lanes<F>, const F: usize> {
    core: C,
    threads: Vec<SoftThread>,
    lanes: Vec<Lane<F>>,
    rule: LaneRule,
    timer: Option<Timer>,
    /// The program's own timer interrupts: a halted lane waits for its next tick.
    interrupts: bool,
    /// The core's cycle.
    now: u64,
    out: VecDeque<Block<F>>,
    pending: Vec<Span<F>>,
    error: Option<PhaseError>,
    /// The thread group that goes first at the shared units: the one refused last.
    favoured: usize,
}

impl<C: Lanes<F>, const F: usize> LaneRunner<C, F> {
    pub fn new(core: C, program: Program) -> LaneRunner<C, F> {
        let rule = core.rule();
        let lanes = rule.lanes.max(1);
        let threads: Vec<SoftThread> = program.threads.into_iter().map(|phases| SoftThread { phases, current: None, begun: 0 }).collect();
        // Software threads beyond the lanes take turns on theirs, at the program's
        // timer or, without one, every `TURN_CYCLES`.
        let interrupts = program.timer.is_some();
        let timer = match program.timer {
            None if threads.len() > lanes => Some(Timer { period: TURN_CYCLES, handler: Vec::new() }),
            timer => timer,
        };
        let next_tick = timer.as_ref().map_or(u64::MAX, |t| t.period);
        let lanes = (0..lanes)
            .map(|l| Lane {
                soft: (l..threads.len()).step_by(lanes).collect(),
                turn: 0,
                running: None,
                handlers: VecDeque::new(),
                next_tick,
                queue: Vec::new(),
                head: 0,
                last: 0,
                open: None,
            })
            .collect();
        LaneRunner {
            core,
            threads,
            lanes,
            rule,
            timer,
            interrupts,
            now: 0,
            out: VecDeque::new(),
            pending: Vec::new(),
            error: None,
            favoured: 0,
        }
    }

    /// The core's queues (`Core::queues`).
    pub fn queues(&self) -> Vec<crate::machine::mem::Queue> {
        self.core.queues()
    }

    /// Why the program ended early: a malformed phase (`Phase::check`), never run.
    pub fn error(&self) -> Option<&PhaseError> {
        self.error.as_ref()
    }

    /// Whether lane `l` has an instruction to execute, starting its next phase (the
    /// tick's handlers first) when it has none.
    fn work(&mut self, l: usize) -> bool {
        loop {
            let Some(lane) = self.lanes.get_mut(l) else { return false };
            if let Some(r) = &lane.running {
                if r.k < r.phase.iterations && !r.phase.body.is_empty() {
                    return true;
                }
                lane.running = None;
            }
            let (phase, k, handler, thread) = match lane.handlers.pop_front() {
                Some(h) => (h, 0, true, usize::MAX),
                None => loop {
                    let Some(&t) = lane.soft.get(lane.turn) else { return false };
                    let Some(st) = self.threads.get_mut(t) else { return false };
                    match st.current.take().or_else(|| st.phases.next().map(|p| (p, 0))) {
                        Some((p, k)) => break (p, k, false, t),
                        None => {
                            // The thread has ended: the lane's next takes its turn.
                            lane.soft.remove(lane.turn);
                            if lane.turn >= lane.soft.len() {
                                lane.turn = 0;
                            }
                        }
                    }
                },
            };
            if let Err(e) = phase.check() {
                self.error = Some(e);
                for lane in &mut self.lanes {
                    lane.soft.clear();
                    lane.handlers.clear();
                    lane.running = None;
                }
                return false;
            }
            self.core.enter_lane(&phase, l);
            let interruptible = !handler && phase.takes_ticks() && self.timer.is_some();
            if let Some(lane) = self.lanes.get_mut(l) {
                lane.running = Some(Running { phase, k, i: 0, interruptible, thread });
            }
        }
    }

    /// Lane `l` executes its next instruction at cycle `t`.
    fn execute(&mut self, l: usize, t: u64) {
        let Some(lane) = self.lanes.get_mut(l) else { return };
        let Some(r) = lane.running.as_mut() else { return };
        if lane.head == lane.queue.len() {
            // Its places are taken anew: no later cycle joins its open overlay.
            lane.queue.clear();
            lane.head = 0;
            lane.open = None;
        }
        let from = lane.queue.len();
        let halts = r.phase.body.get(r.i) == Some(&crate::program::Op::Halt);
        if halts {
            self.core.interrupt_in(self.interrupts.then(|| lane.next_tick.saturating_sub(t)));
        }
        let n = self.core.step(&r.phase, r.k, r.i, l, t, &mut lane.queue);
        r.i += n.max(1);
        if r.i < r.phase.body.len() {
            return;
        }
        self.core.end_iteration(&r.phase, r.k, l, &mut lane.queue, from);
        r.i = 0;
        r.k += 1;
        // A halt lasts until the tick: its interrupt is due once the halt is played,
        // whether or not the idle loop goes on.
        let woken = halts && self.interrupts && r.interruptible;
        if r.k >= r.phase.iterations && !woken {
            lane.running = None;
        } else if woken || r.interruptible && t >= lane.next_tick {
            // The tick: the thread stops here, the handler runs, then the lane's next
            // software thread.
            if let Some(r) = lane.running.take().filter(|r| r.k < r.phase.iterations) {
                if let Some(st) = self.threads.get_mut(r.thread) {
                    st.current = Some((r.phase, r.k));
                }
            }
            if let Some(timer) = &self.timer {
                lane.handlers.extend(timer.handler.iter().cloned());
                lane.next_tick = t.max(lane.next_tick) + timer.period;
            }
            lane.turn = (lane.turn + 1) % lane.soft.len().max(1);
        }
    }

    /// Whether lane `l` asks for an issue slot this cycle: its next cycle issues, or
    /// it has an instruction yet to execute.
    fn candidate(&mut self, l: usize) -> bool {
        let Some(lane) = self.lanes.get_mut(l) else { return false };
        if lane.front().is_some() {
            return lane.issues_next();
        }
        self.work(l)
    }

    /// One cycle's arbitration, then the group of cycles up to the next change.
    /// Returns false once every lane has ended.
    fn cycle(&mut self) -> bool {
        let t = self.now;
        let n = self.lanes.len().min(MAX_LANES);
        let groups = self.rule.groups.clamp(1, n.max(1));
        // Lanes as bits: issuing this cycle, ready and not picked.
        let (mut issued, mut ready) = (0u16, 0u16);
        let mut primary = None;
        let mut used = 0u8;
        let mut refused = None;
        let favoured = self.favoured;
        for g in (0..groups).map(|g| (g + favoured) % groups) {
            // The group's candidates, the least recently picked first.
            let mut candidates = [(0u64, 0usize); MAX_LANES];
            let mut c = 0;
            for l in g * n / groups..(g + 1) * n / groups {
                if self.candidate(l) {
                    if let (Some(slot), Some(lane)) = (candidates.get_mut(c), self.lanes.get(l)) {
                        *slot = (lane.last, l);
                        c += 1;
                    }
                }
            }
            let candidates = candidates.get_mut(..c).unwrap_or_default();
            candidates.sort_unstable();
            let mut picked = false;
            for &mut (_, l) in candidates {
                if picked {
                    ready |= 1 << l;
                    continue;
                }
                if self.lanes.get_mut(l).is_some_and(|lane| lane.front().is_none()) {
                    self.execute(l, t);
                }
                let Some(lane) = self.lanes.get_mut(l) else { continue };
                if !lane.issues_next() {
                    // It executed into a stall: a fetch miss, a table walk.
                    continue;
                }
                let need = lane.front().map_or(0, units);
                if self.rule.shared_units && need & used != 0 {
                    ready |= 1 << l;
                    refused = Some(g);
                    continue;
                }
                used |= need;
                lane.last = t;
                issued |= 1 << l;
                primary = primary.or(Some(l));
                picked = true;
            }
        }
        if let Some(g) = refused {
            self.favoured = g;
        }
        let mut stalled = 0u16;
        let mut m = u64::MAX;
        for (l, lane) in self.lanes.iter_mut().enumerate().take(n) {
            if (issued | ready) & (1 << l) == 0 {
                if let Some(f) = lane.front() {
                    stalled |= 1 << l;
                    m = m.min(f.cycles);
                }
            }
        }
        if issued != 0 {
            m = 1;
        }
        let Some(p) = primary.or_else(|| (stalled != 0).then(|| stalled.trailing_zeros() as usize)) else { return false };
        let start = self.pending.len();
        // What the whole core did, on the primary: ready lanes fetch and issue nothing.
        let mut no_fetch = issued == 0 && ready == 0;
        let mut waits = [0u64; CORE_WAITS.len()];
        let mut note = |s: &Span<F>| {
            no_fetch &= s.signals.get(Signal::NoFetchCycles) > 0;
            for (w, &signal) in waits.iter_mut().zip(&CORE_WAITS) {
                *w = (*w).max(s.signals.get(signal));
            }
        };
        let Some(lane) = self.lanes.get_mut(p) else { return false };
        lane.front().inspect(|s| note(s));
        lane.take(m, &mut self.pending, false, t);
        for l in (0..n).filter(|&l| l != p && (issued | stalled) & (1 << l) != 0) {
            if let Some(lane) = self.lanes.get_mut(l) {
                lane.front().inspect(|s| note(s));
                lane.take(m, &mut self.pending, true, t);
            }
        }
        let mut modes = [0u8; MAX_LANES];
        for (l, mode) in modes.iter_mut().enumerate().take(n).filter(|&(l, _)| ready & (1 << l) != 0) {
            *mode = self.ready_mode(l).map_or(0, |p| 1 + p.code());
        }
        if let Some(first) = self.pending.get_mut(start) {
            first.signals.set(Signal::NoFetchAllCycles, u8::from(no_fetch));
            for (&signal, &mode) in Signal::STRAND_READY.iter().zip(&modes) {
                first.signals.set(signal, mode);
            }
            for (&w, &signal) in waits.iter().zip(&CORE_WAITS) {
                first.signals.set(signal, u8::try_from(w).unwrap_or(u8::MAX));
            }
        }
        self.now += m;
        true
    }

    /// The mode of lane `l` ready to issue: its next instruction's, or (not executed
    /// yet) its phase's.
    fn ready_mode(&mut self, l: usize) -> Option<Privilege> {
        let lane = self.lanes.get_mut(l)?;
        match lane.front() {
            Some(f) => Some(f.privilege),
            None => lane.running.as_ref().map(|r| r.phase.privilege),
        }
    }

    fn flush(&mut self) {
        for lane in &mut self.lanes {
            lane.open = None;
        }
        if !self.pending.is_empty() {
            // The next block's room at once: grown span by span, it was copied as often.
            let body = std::mem::replace(&mut self.pending, Vec::with_capacity(EMIT_SPANS + MAX_LANES));
            self.out.push_back(Block { body, repeat: 1 });
        }
    }
}

impl<C: Lanes<F>, const F: usize> Iterator for LaneRunner<C, F> {
    type Item = Block<F>;

    fn next(&mut self) -> Option<Block<F>> {
        while self.out.is_empty() {
            if !self.cycle() {
                self.flush();
                return self.out.pop_front();
            }
            // Whole groups only: a group never spans two blocks.
            if self.pending.len() >= EMIT_SPANS {
                self.flush();
            }
        }
        self.out.pop_front()
    }
}
