//! The SPARC T-series cores (T4, T3 "KT", T1 "Niagara"): strands sharing a core's
//! L1 caches, an inclusive write-back L2 behind write-through L1 data caches, the T4's
//! L3, memory on this socket or another, TLBs refilled from the TSB by a hardware table
//! walk (a hypervisor trap on Niagara), branch prediction with a branch target cache
//! and an indirect-target table on T4 (static not-taken on T3 and T1), and a store
//! buffer that loads can read from. It runs a program and says what every cycle counts
//! in the signals of `crate::stream`; `docs/machines.md` describes the model and
//! `config.rs` gives every parameter's source.
//!
//! Software thread `i` runs on strand `i % strands`. Strands take turns at the timer
//! (`machine::run`), one running in any cycle while the others with work wait, ready,
//! for their turn (ERRATA MSP1); with `strands_at_once` (the reference engine of
//! docs/engine.md, step C) they run at once: the lane runner (`machine::run::lanes`)
//! has each execute an instruction when the core's arbiter picks it, and a stalled
//! strand's cycles go to the others.

mod access;
mod buffers;
mod coherence;
pub mod config;
mod exec;
mod mcu;
mod memory;
mod overrides;
mod strand;
mod walk;

pub use buffers::L2BufferSizes;
pub use config::{SparcChip, SparcConfig};

use self::memory::{Hierarchy, Translation};
use self::strand::{Buffered, Strand};
use crate::machine::mem::Queue;
use crate::machine::peer::Peer;
use crate::machine::predict::{DirectionPredictor, TargetCache};
use crate::machine::run::lanes::{LaneRule, Lanes};
use crate::machine::{Core, Keys, Moves, Quantum};
use crate::program::{lcm, DataStream, Phase};
use crate::stream::{Privilege, Signal, SPARC};

/// The spans, signals and span writer of this family's machines: its signals' words
/// only (docs/engine.md E7).
type Span = crate::stream::Span<SPARC>;
type Signals = crate::stream::Signals<SPARC>;
type Out<'a> = crate::machine::out::Out<'a, SPARC>;

pub struct Sparc {
    cfg: SparcConfig,
    mem: Hierarchy,
    tr: Translation,
    direction: Option<DirectionPredictor>,
    btc: Option<TargetCache>,
    indirect: Option<TargetCache>,
    /// The running strand's own state, and every strand's (the running one's slot
    /// stale until it is put back).
    s: Strand,
    strands: Vec<Strand>,
    strand: u8,
    /// Cycles the core has run.
    now: u64,
    /// Strands that have a software thread (strands `0..busy`), and, while strands
    /// take turns, the marks of those not running: each waits, ready, in its mode
    /// (ERRATA MSP1).
    busy: usize,
    waiting: Signals,
    /// Another core, where it meets this one on shared data (MSP17).
    peer: Peer,
    /// The user code pages mapped so far, by address space (MSP21).
    mapped_code: rustc_hash::FxHashSet<(u32, u64)>,
    /// Cycles from the iteration's (on lanes, the instruction's) start until the next
    /// interrupt, which ends a `cpu_yield` (`Core::interrupt_in`).
    wake: Option<u64>,
}

impl Sparc {
    pub fn new(cfg: SparcConfig) -> Sparc {
        Sparc {
            mem: Hierarchy::new(&cfg),
            tr: Translation::new(&cfg),
            direction: cfg.direction.map(DirectionPredictor::new),
            btc: cfg.btc.map(TargetCache::new),
            indirect: cfg.indirect.map(TargetCache::new),
            s: Strand::new(cfg.store_buffer, cfg.return_stack),
            strands: vec![Strand::new(cfg.store_buffer, cfg.return_stack); cfg.strands],
            strand: 0,
            now: 0,
            busy: 1,
            waiting: Signals::default(),
            peer: Peer::default(),
            mapped_code: Default::default(),
            wake: None,
            cfg,
        }
    }

    /// Whether the program's threads run on the strands at once (`machine::run::lanes`)
    /// rather than in turns.
    pub fn at_once(&self, threads: usize) -> bool {
        self.cfg.strands_at_once && threads > 1 && self.cfg.strands > 1
    }

    /// Strand `strand`'s state in hand, brought up to the core's cycle: the strand
    /// that ran puts its own back.
    fn select(&mut self, strand: usize) {
        if strand != usize::from(self.strand) {
            if let Some(old) = self.strands.get_mut(usize::from(self.strand)) {
                std::mem::swap(&mut self.s, old);
            }
            if let Some(new) = self.strands.get_mut(strand) {
                std::mem::swap(&mut self.s, new);
            }
            self.strand = strand as u8;
        }
        self.s.catch_up(self.now);
    }

    /// The spans of `phase` on the running strand, from no cycle yet.
    fn template(&self, phase: &Phase) -> Span {
        let mut template = Span::new(0, phase.entry);
        template.privilege = phase.privilege;
        template.thread = self.strand;
        template
    }

    /// Executes instruction `i` of iteration `k` (and the next, when they pair),
    /// appending its cycles; returns how many instructions it consumed.
    fn instruction(&mut self, phase: &Phase, k: u64, i: usize, run: &mut Out) -> usize {
        // A recorded program says where each instruction is.
        if let Some(&ip) = phase.addresses.get(i) {
            self.s.ip = ip;
        }
        self.execute(phase, k, i, run)
    }
}

/// With one strand running, a cycle it fetches nothing in is one no strand does
/// (fetch-0-all); strands that run at once leave it to the lane runner.
fn alone(spans: &mut [Span]) {
    for s in spans.iter_mut().filter(|s| s.signals.get(Signal::NoFetchCycles) > 0) {
        s.signals.set(Signal::NoFetchAllCycles, 1);
    }
}

impl Lanes<SPARC> for Sparc {
    fn rule(&self) -> LaneRule {
        LaneRule { lanes: self.cfg.strands, groups: self.cfg.thread_groups, shared_units: self.cfg.thread_groups > 1 }
    }

    fn enter_lane(&mut self, phase: &Phase, lane: usize) {
        self.mem.enter();
        self.select(lane);
        self.s.ip = phase.entry;
        self.s.mode = phase.privilege;
    }

    fn step(&mut self, phase: &Phase, k: u64, i: usize, lane: usize, now: u64, out: &mut Vec<Span>) -> usize {
        // The memory system and the strand are at the cycle the instruction reaches
        // them; what the instruction's own waits move on stays the strand's.
        self.now = now;
        self.mem.set_now(now);
        self.select(lane);
        let template = self.template(phase);
        let mut run = Out::new(out, template);
        let n = self.instruction(phase, k, i, &mut run);
        // The iteration's end (`end_iteration`: other cores, devices) reaches the
        // memory system at the instruction's cycle too, not after its waits.
        self.mem.set_now(now);
        n
    }

    fn end_iteration(&mut self, phase: &Phase, k: u64, lane: usize, out: &mut Vec<Span>, from: usize) {
        self.select(lane);
        let template = self.template(phase);
        self.peer_turn(out, from, template);
        self.dma(phase, k, out, from, template);
    }
}

impl Core<SPARC> for Sparc {
    fn queues(&self) -> Vec<Queue> {
        // The running strand's own state is in hand, its slot stale.
        let strand = |i: usize| if i == usize::from(self.strand) { &self.s } else { &self.strands[i] };
        let strands = 0..self.strands.len();
        let stores = strands.clone().map(|i| Queue {
            name: "store buffer",
            unit: Some(i),
            size: self.cfg.store_buffer,
            occupancy: strand(i).stores,
        });
        // Out-of-order cores only (T4): a load miss nothing waits for stays outstanding,
        // and the reorder buffer holds it and what issues after it.
        let loads = self
            .cfg
            .load_buffer
            .map(|size| strands.clone().map(move |i| Queue { name: "load buffer", unit: Some(i), size, occupancy: strand(i).loads }));
        let reorder = self.cfg.reorder_buffer.map(|size| {
            strands.map(move |i| Queue { name: "reorder buffer", unit: Some(i), size: size as usize, occupancy: strand(i).reorder })
        });
        stores.chain(loads.into_iter().flatten()).chain(reorder.into_iter().flatten()).chain(self.mem.queues()).collect()
    }

    fn software_threads(&mut self, threads: usize) {
        self.busy = threads.clamp(1, self.cfg.strands);
    }

    fn hardware_threads(&self) -> usize {
        self.cfg.strands
    }

    fn enter(&mut self, phase: &Phase, thread: usize) {
        self.mem.enter();
        self.select(thread % self.cfg.strands);
        self.s.ip = phase.entry;
        self.s.mode = phase.privilege;
        // Strands take turns: every other strand with work waits ready for its turn.
        self.waiting = Signals::default();
        for (k, &signal) in Signal::STRAND_READY.iter().enumerate().take(self.busy).filter(|&(k, _)| k != usize::from(self.strand)) {
            let mode = self.strands.get(k).map_or(Privilege::USER, |s| s.mode);
            self.waiting.set(signal, 1 + mode.code());
        }
    }

    fn iterate(&mut self, phase: &Phase, k: u64, out: &mut Vec<Span>) {
        let mut template = self.template(phase);
        template.signals = self.waiting;
        let from = out.len();
        let mut run = Out::new(out, template);
        let mut i = 0;
        while i < phase.body.len() {
            i += self.instruction(phase, k, i, &mut run);
        }
        self.peer_turn(out, from, template);
        self.dma(phase, k, out, from, template);
        alone(&mut out[from..]);
    }

    fn quantum(&self, stream: &DataStream) -> Quantum {
        let class = self.cfg.size_class(stream.page);
        let page = self.cfg.page_sizes[class];
        let tlbs = lcm(self.cfg.dtlb.set_span(page), page);
        // Shared memory is interleaved over the sockets page by page (`exec::remote`).
        let homes = if stream.shared { self.cfg.page_sizes[0] * self.cfg.sockets } else { 1 };
        // A TTE is cached at an alias of its page (`exec::walk`): moving by whole
        // pages keeps its set.
        Quantum { lines: lcm(self.mem.set_span(), homes), pages: lcm(tlbs, homes) }
    }

    fn canonical(&self, keys: &Keys, out: &mut Vec<u64>) {
        self.mem.canonical(keys, out);
        self.peer.canonical(keys, out);
        // Code pages are only ever added: the same count means none was since.
        out.push(u64::MAX - self.mapped_code.len() as u64);
        self.tr.itlb.canonical(keys.page, out);
        self.tr.dtlb.canonical(keys.page, out);
        if let Some(d) = &self.direction {
            d.canonical(out);
        }
        for t in [&self.btc, &self.indirect].into_iter().flatten() {
            t.canonical(out);
        }
        out.push(u64::from(self.strand));
        self.s.canonical(keys, self.now, out);
        for (n, s) in self.strands.iter().enumerate().filter(|&(n, _)| n != usize::from(self.strand)) {
            out.push(n as u64);
            s.canonical(keys, self.now, out);
        }
    }

    fn canonical_outer(&self, keys: &Keys, out: &mut Vec<u64>) {
        self.mem.canonical_outer(keys, out);
    }

    fn interrupt_in(&mut self, cycles: Option<u64>) {
        self.wake = cycles;
    }

    fn relocate(&mut self, to: &Moves) {
        self.mem.relocate(to);
        self.peer.relocate(to);
        self.tr.itlb.relocate(to.page);
        self.tr.dtlb.relocate(to.page);
        for s in std::iter::once(&mut self.s).chain(&mut self.strands) {
            for b in &mut s.store_buffer {
                b.addr = (to.line)(b.addr).unwrap_or(b.addr);
            }
        }
    }
}
