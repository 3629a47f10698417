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

mod finder;
mod frame;
pub mod lanes;
mod turns;

use std::collections::VecDeque;

use super::Core;
use crate::program::{Phase, PhaseError, Program};
use crate::stream::{Block, Span};
use finder::Finder;
use turns::Turns;

/// Quanta above this many iterations are not worth waiting for: the loop is simulated
/// iteration by iteration.
const MAX_QUANTUM: u64 = 1 << 16;
/// Cycles a software thread runs before the next takes its turn, when the program has
/// no timer of its own and the core no time-out.
const TURN_CYCLES: u64 = 1 << 18;
/// Simulated iterations are emitted in blocks of about this many spans.
const EMIT_SPANS: usize = 64;
/// A period longer than this many spans is not recorded: the memory would outweigh
/// the gain (16 MB of spans; twice that cost more in cache misses than the longer
/// periods it found saved).
const MAX_PERIOD_SPANS: usize = 1 << 16;
/// A turn of a software thread this many iterations long or shorter is short: while
/// every turn is, the runner looks for the turns repeating together (`turns.rs`)
/// rather than for each phase repeating alone.
const SHORT_TURN: u64 = 256;

/// Whether the runner may skip repeating iterations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Skipping {
    On,
    /// Simulate every iteration (for proofs and for comparing with other simulators).
    Off,
}

/// Skips end before this many cycles (146 years of a 1 GHz clock): an endless loop with
/// nothing else to stop it (no timer, no time-out due) is skipped up to here, and the
/// runner's cycle count and the cycles of what follows stay far from overflowing.
const HORIZON: u64 = 1 << 62;

/// How many periods of `cycles` a skip may repeat after `run` cycles (`HORIZON`).
fn countable(run: u64, cycles: u64) -> u64 {
    HORIZON.saturating_sub(run) / cycles.max(1)
}

/// One software thread: its phases and where it stands.
struct SoftThread {
    phases: Box<dyn Iterator<Item = Phase> + Send>,
    /// The phase it is in and its next iteration.
    current: Option<(Phase, u64)>,
    /// Phases begun: which phase `current` is.
    begun: u64,
}

/// The phase the core is running, and where it stands.
struct Running<const F: usize> {
    phase: Phase,
    k: u64,
    finder: Option<Finder<F>>,
    /// The timer may stop it at an iteration boundary (user code).
    interruptible: bool,
    /// It is part of the timer's handler, not of a software thread.
    handler: bool,
    /// Its iterations end in a halt until the next interrupt (`Phase::halts`).
    halts: bool,
    /// The iteration the turn began at.
    first: u64,
}

/// A program running on one hardware thread of a core: an endless iterator of blocks,
/// produced as they are consumed (a long loop that cannot be skipped is simulated a
/// few blocks at a time, never held whole).
pub struct Runner<C: Core<F>, const F: usize> {
    core: C,
    threads: Vec<SoftThread>,
    running: usize,
    current: Option<Running<F>>,
    timer: Option<crate::program::Timer>,
    /// The program's own timer interrupts (not turns without a handler): what wakes
    /// a halted thread.
    interrupts: bool,
    /// The timer's handler phases still to run for the tick in progress.
    handlers: VecDeque<Phase>,
    ticking: bool,
    /// The core asked for the next hardware thread.
    switch: bool,
    /// The core's hardware threads, and the software thread each holds: software
    /// thread `s` runs on hardware thread `s % hardware`, and a tick hands that
    /// hardware thread to the next software thread of its own.
    hardware: usize,
    loaded: Vec<usize>,
    /// The core's time-out (`Core::time_out`), and the cycle it is due at.
    quantum: Option<u64>,
    next_turn: u64,
    skipping: Skipping,
    /// Cycles run so far, and when the timer fires next.
    cycles: u64,
    next_tick: u64,
    out: VecDeque<Block<F>>,
    /// Spans of simulated iterations not yet emitted.
    pending: Vec<Span<F>>,
    /// The room the last iteration was given in `pending`.
    room: usize,
    /// The finder's span buffer, kept between phases: it grows to megabytes, and
    /// allocating it afresh for every loop would fault in new pages each time.
    history: Vec<Span<F>>,
    /// The malformed phase that ended the program, if one did.
    error: Option<PhaseError>,
    /// The search for the threads' turns repeating, and how many turns in a row were
    /// short (`SHORT_TURN`).
    turns: Option<Turns<F>>,
    short: usize,
}

impl<C: Core<F>, const F: usize> Runner<C, F> {
    pub fn new(mut core: C, program: Program, skipping: Skipping) -> Runner<C, F> {
        let threads: Vec<SoftThread> = program.threads.into_iter().map(|phases| SoftThread { phases, current: None, begun: 0 }).collect();
        core.software_threads(threads.len());
        let hardware = core.hardware_threads().max(1);
        let quantum = core.time_out().filter(|_| threads.len() > 1 && hardware > 1);
        // Threads of a program without an operating system's timer take turns on the
        // hardware all the same (strands of one core, ERRATA MSP1), unless the core's
        // own time-out hands the pipeline round: a turn is a timer tick without a
        // handler.
        let interrupts = program.timer.is_some();
        let timer = match program.timer {
            None if threads.len() > 1 && quantum.is_none() => Some(crate::program::Timer { period: TURN_CYCLES, handler: Vec::new() }),
            timer => timer,
        };
        let next_tick = timer.as_ref().map_or(u64::MAX, |t| t.period);
        Runner {
            core,
            threads,
            running: 0,
            current: None,
            timer,
            interrupts,
            handlers: VecDeque::new(),
            ticking: false,
            switch: false,
            hardware,
            loaded: (0..hardware).collect(),
            quantum,
            next_turn: quantum.unwrap_or(u64::MAX),
            skipping,
            cycles: 0,
            next_tick,
            out: VecDeque::new(),
            pending: Vec::new(),
            room: 0,
            history: Vec::new(),
            error: None,
            turns: None,
            short: 0,
        }
    }

    /// The core's queues (`Core::queues`).
    pub fn queues(&self) -> Vec<crate::machine::mem::Queue> {
        self.core.queues()
    }

    /// Why the program ended early: a phase that refers to streams or tables it does
    /// not have, or is otherwise malformed (`Phase::check`). The machine never runs
    /// such a phase.
    pub fn error(&self) -> Option<&PhaseError> {
        self.error.as_ref()
    }

    /// Hands the spans simulated so far out as a block. The next vector has room for
    /// a block's worth of the latest iterations, so that it need not grow.
    fn flush(&mut self) {
        if !self.pending.is_empty() {
            let body = std::mem::replace(&mut self.pending, Vec::with_capacity(EMIT_SPANS + 2 * self.room));
            self.out.push_back(Block { body, repeat: 1 });
        }
    }

    fn timer_due(&self) -> bool {
        self.cycles >= self.next_tick
    }

    /// The cycle the next tick or time-out is due at: no skipped period may hold it.
    fn next_due(&self) -> u64 {
        self.next_tick.min(self.next_turn)
    }

    /// The software thread the next hardware thread with one holds, passing over
    /// those the core has halted; the running one when every other is halted.
    fn next_hardware(&self) -> usize {
        let used = self.hardware.min(self.threads.len()).max(1);
        let h = self.running % self.hardware;
        (1..=used).map(|i| (h + i) % used).find(|&n| self.core.runnable(n)).map_or(self.running, |n| self.loaded[n])
    }

    /// A tick: the operating system hands the running hardware thread to the next
    /// software thread of its own; on a core without a time-out of its own, the next
    /// hardware thread takes its turn too.
    fn tick_switch(&mut self) {
        let h = self.running % self.hardware;
        let next = self.running + self.hardware;
        self.loaded[h] = if next < self.threads.len() { next } else { h };
        self.running = match self.quantum {
            Some(_) => self.loaded[h],
            None => self.next_hardware(),
        };
    }

    /// Takes the next phase to run: the tick's handler first, then the running
    /// software thread's phase. `false` when the program has ended.
    fn start(&mut self) -> bool {
        let (phase, k, handler) = match self.handlers.pop_front() {
            Some(h) => (h, 0, true),
            None => {
                let Some(t) = self.threads.get_mut(self.running) else { return false };
                match t.current.take().or_else(|| t.phases.next().inspect(|_| t.begun += 1).map(|p| (p, 0))) {
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
        let mut k = k;
        if !handler && self.running == 0 {
            self.turn(&phase, &mut k);
        }
        // While the turns are searched, the phases are not on their own: both would
        // record the replayed structures' operations.
        let finder = match self.turns {
            Some(_) => None,
            None => Finder::new(&phase, &self.core, self.skipping, &mut self.history),
        };
        let halts = phase.halts();
        let interruptible = !handler && phase.takes_ticks() && (self.timer.is_some() || self.quantum.is_some());
        self.current = Some(Running { phase, k, finder, interruptible, handler, halts, first: k });
        true
    }

    /// Thread 0 begins a turn at iteration `k` of `phase`: while the turns are short,
    /// look for them repeating, and skip the periods found (moving `k` and the other
    /// threads' iterations on).
    fn turn(&mut self, phase: &Phase, k: &mut u64) {
        // A halted thread's turn is the tick's to give back: not a repeating one.
        let halted = (0..self.hardware).any(|h| !self.core.runnable(h));
        if self.skipping == Skipping::Off || self.threads.len() < 2 || self.short < self.threads.len() || halted {
            self.drop_turns();
            return;
        }
        let mut phases = vec![phase];
        let mut ks = vec![*k];
        for t in &self.threads[1..] {
            // A thread that has not begun a phase yet, or has none left: nothing to
            // repeat together.
            let Some((p, k)) = &t.current else {
                self.drop_turns();
                return;
            };
            phases.push(p);
            ks.push(*k);
        }
        let generations: Vec<u64> = self.threads.iter().map(|t| t.begun).collect();
        if !self.turns.as_ref().is_some_and(|t| t.made_for(&generations)) {
            if let Some(mut old) = self.turns.take() {
                old.reset(&mut self.core);
            }
            self.turns = Turns::new(&phases, generations, &self.core);
        }
        let Some(turns) = self.turns.as_mut() else { return };
        let Some(skip) = turns.check(&phases, &ks, &mut self.core) else { return };
        // The timer must not become due inside a skipped period; the core's time-outs
        // are part of the period (each turn begins with a quantum of its own).
        let most = match self.timer {
            Some(_) => skip.repeat.min(self.next_tick.saturating_sub(self.cycles) / skip.cycles.max(1)),
            None => skip.repeat.min(countable(self.cycles, skip.cycles)),
        };
        let r = turns.repeat(&phases, &mut self.core, &skip, most);
        if r == 0 {
            return;
        }
        let n: Vec<u64> = skip.deltas.iter().map(|d| d * r).collect();
        turns.relocate(&phases, &mut self.core, &n);
        turns.skipped(&mut self.core, r * skip.cycles);
        if !self.pending.is_empty() {
            let body = std::mem::take(&mut self.pending);
            self.out.push_back(Block { body, repeat: 1 });
        }
        self.out.push_back(Block { body: skip.body, repeat: r });
        self.cycles += r * skip.cycles;
        self.next_turn = self.next_turn.saturating_add(r * skip.cycles);
        *k += n[0];
        for (t, n) in self.threads[1..].iter_mut().zip(&n[1..]) {
            if let Some((_, k)) = t.current.as_mut() {
                *k += n;
            }
        }
    }

    /// Stops looking for the turns repeating.
    fn drop_turns(&mut self) {
        if let Some(mut t) = self.turns.take() {
            t.reset(&mut self.core);
        }
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
            f.stop(&mut self.core);
            f.spans.clear();
            self.history = f.spans;
        }
        if !self.switch && run.interruptible && !self.timer_due() && self.cycles >= self.next_turn {
            if self.next_hardware() == self.running {
                // Every other hardware thread is halted: the quantum starts again.
                self.restart_quantum();
            } else {
                // The core's time-out: the other hardware thread gets the pipeline.
                self.core.timed_out();
                self.switch = true;
            }
        }
        if !run.handler && self.threads.len() > 1 {
            // A turn the core ended soon keeps the search for the turns repeating going;
            // any other ends it.
            if self.switch && run.k - run.first <= SHORT_TURN {
                self.short += 1;
            } else {
                self.short = 0;
                self.drop_turns();
            }
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
            if self.interrupts {
                // Its interrupt wakes every halted hardware thread.
                self.core.tick();
            }
            // A period of the turns cannot hold a tick.
            if let Some(t) = self.turns.as_mut() {
                t.reset(&mut self.core);
            }
        }
        if std::mem::take(&mut self.switch) && !self.ticking {
            self.running = self.next_hardware();
            self.restart_quantum();
        }
        if self.ticking && self.handlers.is_empty() && (run.handler || self.timer.as_ref().is_some_and(|t| t.handler.is_empty())) {
            self.ticking = false;
            self.next_tick = self.cycles + self.timer.as_ref().map_or(u64::MAX, |t| t.period);
            self.tick_switch();
            self.restart_quantum();
        }
    }

    /// The hardware threads switched: the time-out counts from now.
    fn restart_quantum(&mut self) {
        if let Some(q) = self.quantum {
            self.next_turn = self.cycles.saturating_add(q);
        }
    }

    /// Runs `run` from its iteration; with `interruptible`, stops at the first
    /// iteration boundary where the timer or the time-out is due. Returns whether the phase stopped
    /// (ended or was interrupted) rather than paused with blocks to hand out.
    fn run_phase(&mut self, run: &mut Running<F>) -> bool {
        let phase = &run.phase;
        while run.k < phase.iterations {
            let k = run.k;
            if run.interruptible && self.cycles >= self.next_due() {
                return true;
            }
            if self.turns.is_some() && k - run.first == SHORT_TURN && !run.handler {
                // A long turn: the phase is looked at on its own after all.
                self.short = 0;
                self.drop_turns();
                run.finder = Finder::new(phase, &self.core, self.skipping, &mut self.history);
            }
            if let Some(f) = run.finder.as_mut().filter(|f| f.due(k)) {
                if let Some(skip) = f.check(phase, &mut self.core, k) {
                    // Repeat the period as often as nothing breaks it: the loop's exit,
                    // the streams, the timer, and the replayed structures, which must
                    // answer every operation of each repetition as in the period.
                    let mut r = skip.repeat.min((phase.iterations - 1 - k) / skip.period).min(countable(self.cycles, skip.cycles));
                    if run.interruptible {
                        // Neither the timer nor the time-out may become due inside a
                        // skipped period.
                        r = r.min((self.next_due() - self.cycles) / skip.cycles.max(1));
                    }
                    let r = f.repeat(phase, &mut self.core, &skip, r);
                    if r > 0 {
                        self.flush();
                        let iterations = r * skip.period;
                        self.out.push_back(Block { body: skip.body, repeat: r });
                        f.relocate(&mut self.core, phase, iterations);
                        self.cycles += r * skip.cycles;
                        run.k += iterations;
                        f.reset(&mut self.core, run.k);
                        return false;
                    }
                    f.retry(k, skip.period);
                }
            }
            // An iteration makes a span or two per instruction: room for them at once.
            // Without it the spans already there are handed out first, since growing
            // the vector copies them (a third of a `pmu stat` run once went to such
            // copies), and a vector that is handed out must be allocated anyway.
            self.room = 2 * phase.body.len();
            if self.pending.capacity() - self.pending.len() < self.room {
                self.flush();
                if self.pending.capacity() < self.room {
                    self.pending = Vec::with_capacity(EMIT_SPANS + 2 * self.room);
                }
            }
            let start = self.pending.len();
            if run.halts {
                self.core.interrupt_in(self.interrupts.then(|| self.next_tick.saturating_sub(self.cycles)));
            }
            self.core.iterate(phase, k, &mut self.pending);
            let spans = &self.pending[start..];
            self.cycles += spans.iter().map(Span::duration).sum::<u64>();
            if let Some(f) = run.finder.as_mut() {
                f.record(&mut self.core, spans);
            }
            if let Some(t) = self.turns.as_mut().filter(|_| !run.handler) {
                t.record(&mut self.core, spans, self.running);
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

impl<C: Core<F>, const F: usize> Iterator for Runner<C, F> {
    type Item = Block<F>;

    fn next(&mut self) -> Option<Block<F>> {
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
