//! The dual-threaded Montecito core (Itanium 2 9000, spec chapter 2): bundles
//! dispersed two at a time, the L1I/L1D, L2I/L2D and L3 caches of Table 2-9, two levels
//! of TLB with the hardware page walker behind them, branch prediction with a return
//! stack per thread, and switch-on-event multithreading (§2.4.1): an L3 miss of the
//! foreground thread lowers its urgency and switches to the other thread when the other
//! is more urgent; the miss's data returns while the thread is in the background.
//! It computes the signals of `crate::stream` that the Montecito PMU model counts;
//! `config.rs` gives every parameter's source, `docs/machines.md` describes the model.

mod alat;
mod arbiter;
mod branch;
mod brq;
mod coherence;
pub mod config;
mod exec;
mod fills;
mod fpu;
mod group;
mod ifetch;
mod inflight;
mod io;
mod l1d_pipe;
mod l2d;
mod levels;
mod memory;
mod overrides;
mod ozq;
mod renamer;
mod rse;
mod si;
mod speculation;
mod wcb;

pub use config::MontecitoConfig;
pub use group::{bundle_address, slot};
pub use si::OCCUPANCIES;

use crate::machine::cache::{Cache, Victims};
use crate::machine::faults::Countdown;
use crate::machine::out::spread;
use crate::machine::peer::Peer;
use crate::machine::predict::{DirectionPredictor, ReturnStack, TargetCache, TargetCacheConfig};
use crate::machine::replay::Replayed;
use crate::machine::tlb::Tlb;
use crate::machine::{Core, Keys, Moves, Quantum};
use crate::program::{lcm, DataStream, Phase};
use crate::stream::{Privilege, Signal, MONTECITO};
use alat::Alat;
use arbiter::Requests;
use inflight::InFlight;
use ozq::Ozq;
use rse::Rse;
use si::Si;
use wcb::WriteCoalescing;

/// The spans, signals and span writer of this family's machines: its signals' words
/// only (docs/engine.md E7).
type Span = crate::stream::Span<MONTECITO>;
type Signals = crate::stream::Signals<MONTECITO>;
type Out<'a> = crate::machine::out::Out<'a, MONTECITO>;

/// §2.4.1.3: urgency runs 0-7; 5 is nominal.
const NOMINAL_URGENCY: u8 = 5;
const MAX_URGENCY: u8 = 7;

/// The caches beyond the L1s: L2I, L2D, L3.
const OUTER: usize = 3;

/// A read a thread switched away from, completing in the background: the cycle its
/// data is back, and whether it brings a line (an L3 miss's, which counts a memory
/// read as it returns, MD12) or not (an uncacheable read's, MMC62).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Return {
    ready: u64,
    line: bool,
}

pub struct Montecito {
    cfg: MontecitoConfig,
    l1i: Cache,
    l1d: Cache,
    /// L2I, L2D, L3. These, the L1D and the TLBs are replayed, not compared, when the
    /// runner skips (`machine::replay`).
    outer: [Cache; OUTER],
    l1_itlb: Tlb,
    l2_itlb: Tlb,
    l1_dtlb: Tlb,
    l2_dtlb: Tlb,
    direction: DirectionPredictor,
    indirect: TargetCache,
    /// The "0 cycle branch predictor" (§2.1.2): taken branches' targets.
    zero_bubble: TargetCache,
    /// Each branch bundle's last effect on the register frame (MD61).
    renamer: renamer::Renamer,
    /// For each thread, the phase its `rooms` are of (its entry and length) and whether
    /// that phase's loop is modulo-scheduled, its back edge `br.ctop` (MMC81).
    code: Vec<(u64, usize, bool)>,
    /// The last branch predicted taken that was not: the later branches of its
    /// bundle were never predicted (§4.7, ERRATA MD40); the bundle fetched again is
    /// predicted anew.
    forced: Option<u64>,
    return_stacks: Vec<ReturnStack>,
    /// Each thread's register stack (the RSE and its frames are per thread, §2.4).
    rse: Vec<Rse>,
    urgency: Vec<u8>,
    /// Each thread's privilege level, and the levels the phase just entered left and
    /// entered if it changed it (bit n for level n, `Signal::PrivilegeChange`).
    privilege: Vec<Privilege>,
    privilege_change: u8,
    /// The foreground thread, and whether it has retired an instruction since it was
    /// switched in (until then, switches are gated: MMC46).
    thread: usize,
    progressed: bool,
    /// For each thread, the cycles at which the data of its L3 misses it switched away
    /// from are back (docs/engine.md, step D): they complete in the background, and a
    /// thread that comes back before they do waits for them. The same for its
    /// uncacheable reads (MMC62), which bring no line and count nothing as they return.
    returns: Vec<Vec<Return>>,
    /// The cycle the last L2D miss sent to the L3 or memory left for it and the cycle
    /// its data is back (`request_buffer`), for the miss's `memory_latency`.
    data_sent: u64,
    data_ready: u64,
    /// The structures this core's requests to the system interface hold.
    requests: Requests,
    /// The cycle the latest dirty line the L3 evicted had a write buffer: the L3's
    /// next fill from memory waits for it (`arbiter.rs`).
    written_back: u64,
    /// An L3 event or a pause hint asked for a switch to the other thread; whether a
    /// hint did, and whether the switch under way is a hint's.
    switch: bool,
    hinted: bool,
    hint_switch: bool,
    /// The switch under way is the thread quantum's time-out (the runner's).
    timed_out: bool,
    /// Each thread halted by PAL_HALT_LIGHT until the next interrupt (the runner's
    /// tick), and whether the switch under way leaves a halted thread.
    halted: Vec<bool>,
    low_power: bool,
    /// The cycle the next interrupt comes at (`Core::interrupt_in`).
    wake: Option<u64>,
    /// The runner can switch now (another software thread exists; no handler runs).
    may_switch: bool,
    /// The next iteration starts with a thread switch (its cycles, and the data that
    /// returns for the thread that left).
    switching: Option<usize>,
    /// Instructions still to issue with a false predicate (an if-converted skip, MMC32).
    squashing: u8,
    /// The next store is a release (`st.rel`, MMC38); the access being made is an
    /// acquire load (`ld.acq`, MMC48).
    release: bool,
    acquiring: bool,
    /// Each thread's latest acquire the L1D did not serve (MMC48).
    acquires: Vec<l2d::Acquire>,
    /// Each thread's device writes since its last semaphore (a lock's acquire): when
    /// the platform has accepted them, for the `mf.a` its next lock release does first;
    /// and until when that `mf.a` holds the thread's accesses back (MMC72).
    device_writes: Vec<u64>,
    fences: Vec<u64>,
    /// The instruction stream a `.many` branch started (MMC50).
    streaming: Option<ifetch::Stream>,
    /// The L2D's fills of shared lines, which the other core's snoops may meet (MMC51).
    fills: fills::Fills,
    /// The L1D's fills on their way and its latest stores (MMC44).
    l1d_pipe: l1d_pipe::L1dPipe,
    /// The loads and the floating-point operation hoisted above the skip being
    /// executed, until their checks (MMC42, MMC80).
    hoisted: Vec<speculation::Hoisted>,
    /// Each address space's floating-point status flags (MMC80).
    fpsr: fpu::Fpsr,
    ip: u64,
    fetch_line: u64,
    /// The write-coalescing buffers' writes this iteration, each an item the
    /// iteration's end lays in a cycle of its own (`memory::bus_writes`).
    flushed: Vec<Signals>,
    /// The pages of user text mapped so far, by address space (MMC58).
    mapped_code: rustc_hash::FxHashSet<(u32, u64)>,
    /// The L2I line the instruction streaming buffer holds (ERRATA MMC19).
    isb: Option<u64>,
    /// Instruction prefetches, L2I fills and L2D misses on their way (MMC25, MMC28).
    inflight: InFlight,
    /// The L2D's data requests in its 32-entry queue (MMC29).
    ozq: Ozq,
    /// The iteration's stores and advanced loads (MMC33).
    alat: Alat,
    /// The core's clock: the cycles of the iterations run so far, and the cycle the
    /// current iteration's instructions started at (after a thread switch's cycles).
    clock: u64,
    started: u64,
    /// Each thread's cycles since it last retired an instruction, up to
    /// `STALL_THRESHOLDS`' last (the stall before a switch, MD44).
    quiet: Vec<u64>,
    /// Each hardware thread's phase's bundles the front end can fetch past each of its
    /// instructions before the branch retirement queue is full (`brq::room`, MMC78),
    /// the scratch space their computation takes, and the executing instruction's
    /// place in the body, which a back-end stall looks its room up by.
    rooms: Vec<Vec<u8>>,
    bundles: Vec<brq::Bundle>,
    at: usize,
    /// For each thread, the cycle its last L2D hit returns its data: a switch away
    /// from it waits for that return (THREAD_SWITCH_CYCLE.L2D, MD57).
    l2d_returns: Vec<u64>,
    /// The cycles without a retirement at this iteration's switch decision (an L3 miss
    /// or a hint), and the stall a switch after the last iteration counts (MD44).
    decided: Option<u64>,
    switch_stall: u64,
    /// The write-coalescing buffers (shared by the threads, §2.3.3.4).
    wcb: WriteCoalescing,
    /// The other core, where it meets this one (MMC23).
    peer: Peer,
    /// The system interface's queues and bus (MMC24).
    si: Si,
    /// Fault injection into the write data queue (MMC26) and into the L2D's tags as
    /// snoops read them (MMC67).
    faults: Option<Countdown>,
    tag_faults: Option<Countdown>,
}

/// THREAD_SWITCH_STALL's thresholds above its first (">= 4 cycles (Any latency)").
const STALL_THRESHOLDS: [u64; 10] = [8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096];

/// A privilege level's bit in `Signal::PrivilegeChange` (CPU_CPL_CHANGES' unit mask):
/// SPARC's hyperprivileged mode is level 0, as in the PMU model (MD3).
fn cpl_bit(p: Privilege) -> u8 {
    match p {
        Privilege::Hyper | Privilege::Cpl0 => 0b0001,
        Privilege::Cpl1 => 0b0010,
        Privilege::Cpl2 => 0b0100,
        Privilege::Cpl3 => 0b1000,
    }
}

/// A switch's stall class after `quiet` cycles without a retirement: 1, plus one for
/// each threshold reached.
fn stall_class(quiet: u64) -> u8 {
    1 + STALL_THRESHOLDS.iter().filter(|&&t| quiet >= t).count() as u8
}

impl Montecito {
    pub fn new(cfg: MontecitoConfig) -> Montecito {
        let threads = cfg.threads.max(1);
        Montecito {
            l1i: Cache::new(cfg.l1i),
            // What the core does with each cache's victims (`memory.rs`): the L1D takes
            // only loads and the L2I only code, so theirs are clean and only counted; the
            // L2D writes a dirty one back into the L3 by address; the L3 writes a dirty
            // one back to memory through a write buffer, whatever its address.
            l1d: Cache::new(cfg.l1d).with_victims(Victims::Unnamed),
            outer: [
                Cache::new(cfg.l2i).with_victims(Victims::Unnamed),
                Cache::new(cfg.l2d).with_victims(Victims::DirtyNamed),
                Cache::new(cfg.l3).with_victims(Victims::Unnamed),
            ],
            l1_itlb: Tlb::new(cfg.l1_itlb),
            l2_itlb: Tlb::new(cfg.l2_itlb),
            l1_dtlb: Tlb::new(cfg.l1_dtlb),
            l2_dtlb: Tlb::new(cfg.l2_dtlb),
            direction: DirectionPredictor::new(cfg.direction),
            indirect: TargetCache::new(cfg.indirect),
            zero_bubble: TargetCache::new(TargetCacheConfig { entries: cfg.zero_bubble, ways: cfg.zero_bubble }),
            renamer: renamer::Renamer::new(cfg.direction.entries),
            code: vec![(0, 0, false); cfg.threads],
            forced: None,
            return_stacks: (0..threads).map(|_| ReturnStack::new(cfg.return_stack)).collect(),
            rse: vec![Rse::default(); threads],
            urgency: vec![NOMINAL_URGENCY; threads],
            privilege: vec![Privilege::USER; threads],
            privilege_change: 0,
            thread: 0,
            returns: vec![Vec::new(); threads],
            data_sent: 0,
            data_ready: 0,
            written_back: 0,
            requests: Requests::new(cfg.device_reads),
            switch: false,
            hinted: false,
            hint_switch: false,
            timed_out: false,
            halted: vec![false; threads],
            low_power: false,
            wake: None,
            may_switch: false,
            switching: None,
            squashing: 0,
            release: false,
            acquiring: false,
            acquires: vec![l2d::Acquire::default(); threads],
            device_writes: vec![0; threads],
            fences: vec![0; threads],
            streaming: None,
            fills: Default::default(),
            progressed: true,
            hoisted: Vec::new(),
            fpsr: fpu::Fpsr::default(),
            l1d_pipe: Default::default(),
            ip: 0,
            fetch_line: u64::MAX,
            flushed: Vec::new(),
            mapped_code: Default::default(),
            isb: None,
            inflight: InFlight::default(),
            ozq: Ozq::default(),
            alat: Alat::default(),
            clock: 0,
            started: 0,
            quiet: vec![0; threads],
            rooms: vec![Vec::new(); threads],
            bundles: Vec::new(),
            at: 0,
            l2d_returns: vec![0; threads],
            decided: None,
            switch_stall: 0,
            wcb: WriteCoalescing::default(),
            peer: Peer::default(),
            si: Si::new(cfg.occupancies),
            faults: cfg.fault_every.map(Countdown::new),
            tag_faults: cfg.fault_every.map(Countdown::new),
            cfg,
        }
    }
}

/// A multiset of entries in a canonical state (`Core::canonical`): their number, then
/// the entries in sorted order, since the order they were made in says nothing.
pub(super) fn multiset<const N: usize>(out: &mut Vec<u64>, mut entries: Vec<[u64; N]>) {
    entries.sort_unstable();
    out.push(u64::MAX - entries.len() as u64);
    out.extend(entries.into_iter().flatten());
}

impl Montecito {
    /// The core's cycle now: the iteration's first and the cycles `out` holds so far.
    pub(super) fn now(&self, out: &Out) -> u64 {
        self.started + out.elapsed()
    }

    /// Thread `t`'s urgency at cycle `now`: each of its background reads (an L3 miss's,
    /// an uncacheable one's) whose data is back raises it by one, up to nominal
    /// (§2.4.1.3).
    fn urgency_at(&self, t: usize, now: u64) -> u8 {
        let back = self.returns.get(t).map_or(0, |r| r.iter().filter(|r| r.ready <= now).count());
        let u = self.urgency.get(t).copied().unwrap_or(0);
        if u < NOMINAL_URGENCY {
            (u as usize + back).min(usize::from(NOMINAL_URGENCY)) as u8
        } else {
            u
        }
    }

    /// Whether the other thread, if there is one, is awake: not halted by
    /// PAL_HALT_LIGHT (a switch to a halted thread is gated, THREAD_SWITCH_GATED.LP).
    pub(super) fn other_awake(&self) -> bool {
        self.halted.iter().enumerate().any(|(o, &h)| o != self.thread && !h)
    }

    /// §2.4.1: the switch from thread `left` takes 15 cycles until the new thread
    /// retires; they are the switched-out thread's (THREAD_SWITCH_EVENTS counts "the
    /// number of times the thread is switched out"). The thread switched to gets the
    /// data of the misses it left in the background: each counts as a read completed
    /// there, raises its urgency, and what is not back yet it waits for, since what it
    /// does next uses it.
    fn switch_from(&mut self, left: usize, template: Span, out: &mut Vec<Span>) {
        self.progressed = false;
        // §2.4.1: the switch invalidates the PVAB and cancels the prefetch pipeline's
        // requests: the stream ends (MMC50).
        self.streaming = None;
        let pending = self.returns.get(left).map_or(0, Vec::len);
        let low_power = std::mem::take(&mut self.low_power);
        let cause = match (std::mem::take(&mut self.hint_switch), std::mem::take(&mut self.timed_out), pending) {
            _ if low_power => Signal::ThreadSwitchesLowPower,
            (true, _, _) => Signal::ThreadSwitchesHint,
            (false, true, _) | (false, false, 0) => Signal::ThreadSwitchesTimeout,
            (false, false, _) => Signal::ThreadSwitchesL3Miss,
        };
        let mut leaving = Out::new(out, Span { thread: left as u8, ..template });
        let switching = Signals::default().with(Signal::ThreadSwitchCycles, 1).with(Signal::IBufStallCycles, 1);
        // The switch waits for the leaving thread's L2D hits to return their data
        // before it begins (MD57).
        let returning = self.l2d_returns.get(left).map_or(0, |&at| at.saturating_sub(self.clock));
        leaving.emit(template.ip, returning, switching.with(Signal::ThreadSwitchL2dStall, 1));
        let stall = stall_class(self.switch_stall);
        leaving.emit(template.ip, 1, switching.with(cause, 1).with(Signal::ThreadSwitchStall, stall));
        leaving.emit(template.ip, self.cfg.switch_cycles - 1, switching);
        let arrived = self.clock + returning + self.cfg.switch_cycles;
        let t = self.thread;
        self.urgency[t] = self.urgency_at(t, u64::MAX);
        let returns = std::mem::take(&mut self.returns[t]);
        let returned = returns.iter().filter(|r| r.line).count() as u64;
        let back = returns.iter().map(|r| r.ready).max().unwrap_or(0);
        let waits = back.saturating_sub(arrived).max(returned);
        if waits > 0 {
            // A read back in the background counts a cycle each, in which the thread
            // takes its data; the rest of the wait is for data still on its way (an
            // uncacheable read's too, which counts nothing as it returns).
            let mut arriving = Out::new(out, Span { thread: t as u8, ..template });
            let s = Signals::default().with(Signal::BackgroundMemoryReads, 1).with(Signal::IBufStallCycles, 1);
            arriving.emit(template.ip, returned, s);
            arriving.emit(
                template.ip,
                waits - returned,
                Signals::default().with(Signal::DataDepStallCycles, 1).with(Signal::IBufStallCycles, 1),
            );
        }
    }
}

impl Core<MONTECITO> for Montecito {
    fn queues(&self) -> Vec<crate::machine::mem::Queue> {
        self.requests.queues().to_vec()
    }

    fn enter(&mut self, phase: &Phase, thread: usize) {
        let thread = thread % self.cfg.threads.max(1);
        if thread != self.thread {
            // §2.4.1.3: a thread leaving on a time-out (not on an L3 miss, whose data it
            // still waits for) is ready to go on: urgency 7.
            if self.returns[self.thread].is_empty() {
                self.urgency[self.thread] = MAX_URGENCY;
            }
            self.switching = Some(self.thread);
            self.hint_switch = self.hinted;
            self.thread = thread;
            self.forced = None;
        }
        self.hinted = false;
        self.switch = false;
        self.alat.enter(phase);
        let level = &mut self.privilege[self.thread];
        self.privilege_change = if *level == phase.privilege { 0 } else { cpl_bit(*level) | cpl_bit(phase.privilege) };
        *level = phase.privilege;
        self.ip = phase.entry;
    }

    fn iterate(&mut self, phase: &Phase, k: u64, out: &mut Vec<Span>) {
        let start = out.len();
        let mut template = Span::new(0, phase.entry);
        template.privilege = phase.privilege;
        if let Some(left) = self.switching.take() {
            self.switch_from(left, template, out);
        }
        template.thread = self.thread as u8;
        let from = out.len();
        self.started = self.clock + out[start..].iter().map(|s| s.cycles).sum::<u64>();
        let gated = !self.progressed;
        let mut run = Out::new(out, template);
        self.run(phase, k, &mut run);
        if gated {
            // The thread's cycles from its switch-in to its first retirement (MMC46).
            for span in out[start..].iter_mut().filter(|s| usize::from(s.thread) == self.thread) {
                if span.signals.get(Signal::Instructions) > 0 {
                    break;
                }
                span.signals.set(Signal::ThreadSwitchGatedCycles, 1);
            }
        }
        // What the other agents and the write-coalescing buffers put on the bus this
        // iteration, a cycle each: in one `spread`, so that no two share a cycle.
        let end = self.turn_end(out, from);
        let mut items = self.peer_turn(end);
        self.io_turn(phase, k, end, &mut items);
        items.append(&mut self.flushed);
        spread(out, from, template, &items);
        // The thread switches, if it does, at the end of the iteration (MMC12). The
        // stall before it runs from its last retirement to the L3 miss or hint that
        // decided it, or, for a time-out, to the end of the iteration (MD44).
        let spans = &out[from..];
        // A halt ends the stall: the thread retired its call of PAL_HALT_LIGHT and
        // executed nothing since, by its own choice.
        let trailing: u64 = spans
            .iter()
            .rev()
            .take_while(|s| s.signals.get(Signal::Instructions) == 0 && s.signals.get(Signal::HaltedCycles) == 0)
            .map(|s| s.cycles)
            .sum();
        let retired = spans.iter().any(|s| s.signals.get(Signal::Instructions) > 0);
        let longest = STALL_THRESHOLDS[STALL_THRESHOLDS.len() - 1];
        let quiet = &mut self.quiet[self.thread];
        *quiet = if retired { trailing } else { *quiet + trailing }.min(longest);
        self.switch_stall = self.decided.take().map_or(*quiet, |d| d.min(longest));
        self.si.overlay(&self.cfg, out, start);
        self.clock += out[start..].iter().map(|s| s.cycles).sum::<u64>();
        self.inflight.expire(self.clock);
        self.ozq.expire(self.clock);
    }

    fn hardware_threads(&self) -> usize {
        self.cfg.threads.max(1)
    }

    fn time_out(&self) -> Option<u64> {
        (self.cfg.threads > 1).then_some(self.cfg.thread_quantum)
    }

    fn timed_out(&mut self) {
        self.timed_out = true;
    }

    fn interrupt_in(&mut self, cycles: Option<u64>) {
        self.wake = cycles.map(|c| self.clock + c);
    }

    fn tick(&mut self) {
        self.halted.fill(false);
    }

    fn runnable(&self, h: usize) -> bool {
        !self.halted.get(h).copied().unwrap_or(false)
    }

    fn may_switch(&mut self, allowed: bool) {
        self.may_switch = allowed && self.cfg.threads > 1;
    }

    fn take_switch(&mut self) -> bool {
        std::mem::take(&mut self.switch)
    }

    /// The replayed caches' lines and TLBs' pages, whose boundaries a replay's moves
    /// must keep where they were: nothing this core compares is indexed by a stream's
    /// addresses.
    fn quantum(&self, stream: &DataStream) -> Quantum {
        let lines = self.outer.iter().map(|c| c.config().line).fold(self.l1d.config().line, lcm);
        Quantum { lines, pages: self.cfg.page(stream.page) }
    }

    fn canonical(&self, keys: &Keys, out: &mut Vec<u64>) {
        self.l1i.canonical(keys.line, out);
        self.direction.canonical(out);
        self.indirect.canonical(out);
        self.zero_bubble.canonical(out);
        self.renamer.canonical(out);
        for r in &self.return_stacks {
            r.canonical(out);
        }
        for r in &self.rse {
            r.canonical(out);
        }
        out.extend(self.urgency.iter().map(|&u| u64::from(u)));
        out.extend(self.halted.iter().map(|&h| u64::from(h)));
        for r in &self.returns {
            // Relative to the clock: the same waits ahead are the same state.
            let mut left: Vec<u64> = r.iter().map(|r| r.ready.saturating_sub(self.clock) << 1 | u64::from(r.line)).collect();
            left.sort_unstable();
            out.push(left.len() as u64);
            out.extend(left);
        }
        out.extend(self.quiet.iter().map(|&q| u64::from(stall_class(q))));
        out.extend(self.l2d_returns.iter().map(|&at| at.saturating_sub(self.clock)));
        out.extend(
            self.acquires
                .iter()
                .flat_map(|a| [a.issued.saturating_sub(self.clock), a.done.saturating_sub(self.clock), u64::from(a.missed)]),
        );
        out.extend(self.device_writes.iter().chain(&self.fences).map(|at| at.saturating_sub(self.clock)));
        match self.streaming {
            Some(st) => out.extend([(keys.line)(st.after), (keys.line)(st.next), st.resume.saturating_sub(self.clock)]),
            None => out.push(u64::MAX),
        }
        out.push(u64::from(stall_class(self.switch_stall)));
        out.push(u64::from(self.progressed));
        // Code pages are only ever added: the same count means none was since.
        out.push(u64::MAX - self.mapped_code.len() as u64);
        self.fpsr.canonical(out);
        self.wcb.canonical(keys, out);
        self.peer.canonical(keys, out);
        self.fills.canonical(keys, self.clock, out);
        self.si.canonical(&self.cfg, out);
        out.push(self.written_back.saturating_sub(self.clock));
        self.requests.canonical(self.clock, out);
        self.inflight.canonical(keys, self.clock, out);
        self.ozq.canonical(keys, self.clock, out);
        self.l1d_pipe.canonical(keys, self.clock, out);
        for f in [&self.faults, &self.tag_faults].into_iter().flatten() {
            f.canonical(out);
        }
        out.extend([
            self.thread as u64,
            u64::from(self.switch),
            u64::from(self.hinted),
            u64::from(self.hint_switch),
            u64::from(self.timed_out),
            u64::from(self.low_power),
            self.wake.map_or(u64::MAX, |w| w.saturating_sub(self.clock)),
            u64::from(self.may_switch),
            (keys.line)(self.ip),
            (keys.line)(self.fetch_line),
            self.forced.map_or(u64::MAX, |b| (keys.line)(b)),
            self.isb.map_or(u64::MAX, |l| (keys.line)(l)),
        ]);
    }

    fn relocate(&mut self, to: &Moves) {
        self.l1i.relocate(to.line);
        self.wcb.relocate(to);
        self.peer.relocate(to);
        self.fills.relocate(to);
        self.inflight.relocate(to);
        self.ozq.relocate(to);
        self.l1d_pipe.relocate(to);
    }

    fn replayed(&mut self) -> Vec<&mut dyn Replayed> {
        let [l2i, l2d, l3] = &mut self.outer;
        vec![&mut self.l1d, l2i, l2d, l3, &mut self.l1_itlb, &mut self.l2_itlb, &mut self.l1_dtlb, &mut self.l2_dtlb]
    }
}
