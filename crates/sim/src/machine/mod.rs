//! Machine models: the structures of a chip (caches, TLBs, predictors) and, per chip,
//! the core model that runs a program through them and computes the signals of every
//! cycle (`docs/machines.md`).
//!
//! One place maps structures to signals: each chip's core. One place maps signals to
//! events: each PMU model (`crate::models`).

pub mod arm11;
pub mod assumption;
pub mod cache;
mod faults;
pub mod mem;
pub mod montecito;
mod out;
pub mod overrides;
pub mod peer;
pub mod predict;
pub mod replay;
pub mod run;
mod sets;
pub mod sparc;
pub mod tlb;

use crate::program::{DataStream, Phase};
use crate::stream::{Span, ARM11, EVERY, MONTECITO, SPARC};

/// A chip's core as the runner drives it: iteration by iteration, with a complete,
/// comparable description of its state. `F` is its family of signals: the words its
/// spans hold (`stream::ARM11`, `SPARC`, `MONTECITO`).
pub trait Core<const F: usize = EVERY> {
    /// A phase starts on software thread `thread` (its first instruction at
    /// `phase.entry`).
    fn enter(&mut self, phase: &Phase, thread: usize);
    /// Executes iteration `k` of `phase`, appending the spans of its cycles.
    fn iterate(&mut self, phase: &Phase, k: u64, out: &mut Vec<Span<F>>);
    /// Bytes a data stream must move for every structure it goes through to index it
    /// the same way again: for the structures that hold lines (the least common
    /// multiple of the caches' set spans) and for those that hold pages (of the page
    /// size and the TLBs' set spans).
    fn quantum(&self, stream: &DataStream) -> Quantum;
    /// Everything that decides the core's future behaviour, as numbers, with every
    /// line address passed through `keys.line` and every page address through
    /// `keys.page`: two moments with equal canonical states behave the same.
    fn canonical(&self, keys: &Keys, out: &mut Vec<u64>);
    /// The structures the core's requests pass through and what each has held, over
    /// the iterations simulated (a skipped period repeats one simulated before it, so
    /// a run without skipping sees every request).
    fn queues(&self) -> Vec<mem::Queue>;
    /// The state of the large structures (outer caches), in the same terms: compared
    /// only when the rest of two states is equal, so that most snapshots never
    /// describe them.
    fn canonical_outer(&self, _keys: &Keys, _out: &mut Vec<u64>) {}
    /// The program has `threads` software threads; told once, before the first phase:
    /// a core whose hardware threads take turns knows which of them have work waiting.
    fn software_threads(&mut self, _threads: usize) {}
    /// Hardware threads of the core. Software thread `s` runs on hardware thread
    /// `s % hardware_threads()`, as an operating system that keeps each thread on its
    /// own logical processor (per-processor run queues) runs it.
    fn hardware_threads(&self) -> usize {
        1
    }
    /// Cycles a hardware thread holds the pipeline before the core's own time-out
    /// hands it to the next (Montecito's thread-quantum counters, §2.4.1.1); `None`
    /// for a core without one, whose hardware threads take turns at the program's
    /// timer ticks (ERRATA MSP1).
    fn time_out(&self) -> Option<u64> {
        None
    }
    /// The next switch of hardware threads is the time-out's, not an event's.
    fn timed_out(&mut self) {}
    /// Whether the phase just entered may be left for another software thread (there
    /// is one, and the phase is no interrupt handler): a switch-on-event core asks
    /// only then, and otherwise waits for its misses.
    fn may_switch(&mut self, _allowed: bool) {}
    /// Whether the core asks to run another software thread from the next iteration
    /// on (a switch-on-event core's switch); asking again clears it.
    fn take_switch(&mut self) -> bool {
        false
    }
    /// The next interrupt (the program's timer tick) comes `cycles` cycles after the
    /// start of the next iteration the runner hands the core (or, on lanes, the next
    /// instruction), `None` when none is coming: told before each iteration of a phase
    /// that halts (`Phase::halts`), whose `Op::Halt` waits until then.
    fn interrupt_in(&mut self, cycles: Option<u64>);
    /// The timer's tick: its interrupt wakes every halted hardware thread.
    fn tick(&mut self) {}
    /// Whether hardware thread `h` can run: a core whose halted thread gives the
    /// pipeline to the other (Montecito's low-power switch) keeps it until the tick.
    fn runnable(&self, _h: usize) -> bool {
        true
    }
    /// Moves every held line and page address for which `to` gives a new one, as if
    /// the stream that brought them had run on (the outer caches excepted).
    fn relocate(&mut self, to: &Moves);
    /// The structures the runner replays instead of comparing and moving
    /// (`replay.rs`): a core leaves these out of `canonical`, `canonical_outer`,
    /// `relocate` and `quantum`.
    fn replayed(&mut self) -> Vec<&mut dyn replay::Replayed> {
        Vec::new()
    }
}

/// Addresses with this bit set stand for a structure's own record of the line or page
/// at the address without it (a TTE in the TSB): the runner moves and compares them
/// with that page.
pub const ALIAS: u64 = 1 << 52;

/// Byte distances after which a stream indexes a core's structures the same way again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quantum {
    pub lines: u64,
    pub pages: u64,
}

/// How addresses enter a canonical state.
pub struct Keys<'a> {
    pub line: &'a dyn Fn(u64) -> u64,
    pub page: &'a dyn Fn(u64) -> u64,
}

/// Where held addresses go when iterations are skipped.
pub struct Moves<'a> {
    pub line: &'a dyn Fn(u64) -> Option<u64>,
    pub page: &'a dyn Fn(u64) -> Option<u64>,
}

/// The block stream of `program` on an ARM11 core.
pub fn arm11(cfg: arm11::Arm11Config, program: crate::program::Program, skipping: run::Skipping) -> run::Runner<arm11::Arm11, ARM11> {
    run::Runner::new(arm11::Arm11::new(cfg), program, skipping)
}

/// The block stream of `program` on a SPARC core: its threads take turns on the
/// strands, or, with `strands_at_once`, run on them at once (`run::lanes`).
pub fn sparc(cfg: sparc::SparcConfig, program: crate::program::Program, skipping: run::Skipping) -> SparcRun {
    let core = sparc::Sparc::new(cfg);
    if core.at_once(program.threads.len()) {
        SparcRun::Lanes(Box::new(run::lanes::LaneRunner::new(core, program)))
    } else {
        SparcRun::One(Box::new(run::Runner::new(core, program, skipping)))
    }
}

/// A program's run on a SPARC core.
pub enum SparcRun {
    One(Box<run::Runner<sparc::Sparc, SPARC>>),
    Lanes(Box<run::lanes::LaneRunner<sparc::Sparc, SPARC>>),
}

impl SparcRun {
    /// The core's queues (`Core::queues`).
    pub fn queues(&self) -> Vec<mem::Queue> {
        match self {
            SparcRun::One(r) => r.queues(),
            SparcRun::Lanes(r) => r.queues(),
        }
    }

    /// Why the program ended early, if a malformed phase ended it.
    pub fn error(&self) -> Option<&crate::program::PhaseError> {
        match self {
            SparcRun::One(r) => r.error(),
            SparcRun::Lanes(r) => r.error(),
        }
    }
}

impl Iterator for SparcRun {
    type Item = crate::stream::Block<SPARC>;

    fn next(&mut self) -> Option<crate::stream::Block<SPARC>> {
        match self {
            SparcRun::One(r) => r.next(),
            SparcRun::Lanes(r) => r.next(),
        }
    }
}

/// The block stream of `program` on a Montecito core.
pub fn montecito(
    cfg: montecito::MontecitoConfig,
    program: crate::program::Program,
    skipping: run::Skipping,
) -> run::Runner<montecito::Montecito, MONTECITO> {
    run::Runner::new(montecito::Montecito::new(cfg), program, skipping)
}
