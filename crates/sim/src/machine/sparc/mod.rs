//! The SPARC T-series cores (T4, T3 "KT", T1 "Niagara"): strands sharing a core's
//! L1 caches, an inclusive write-back L2 behind write-through L1 data caches, the T4's
//! L3, memory on this socket or another, TLBs refilled from the TSB by a hardware table
//! walk (a hypervisor trap on Niagara), branch prediction with a branch target cache
//! and an indirect-target table on T4 (static not-taken on T3 and T1), and a store
//! buffer that loads can read from. It runs a program and says what every cycle counts
//! in the signals of `crate::stream`; `docs/machines.md` describes the model and
//! `config.rs` gives every parameter's source.
//!
//! Software thread `i` runs on strand `i % strands`; strands take turns at the timer
//! (`machine::run`), so one strand runs in any cycle while the others with work wait,
//! ready, for their turn (ERRATA MSP1).

mod access;
mod buffers;
mod coherence;
pub mod config;
mod exec;
mod mcu;
mod memory;
mod overrides;
mod strand;

pub use buffers::L2BufferSizes;
pub use config::{SparcChip, SparcConfig};

use self::memory::{Hierarchy, Translation};
use self::strand::{Buffered, Strand};
use crate::machine::out::Out;
use crate::machine::peer::Peer;
use crate::machine::predict::{DirectionPredictor, TargetCache};
use crate::machine::{Core, Keys, Moves, Quantum};
use crate::program::{lcm, DataStream, Phase};
use crate::stream::{Signal, Signals, Span};

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
    /// Strands that have a software thread (strands `0..busy`), and the signals of
    /// those of them not running: each waits for its turn (ERRATA MSP1).
    busy: usize,
    waiting: Signals,
    /// Another core, where it meets this one on shared data (MSP17).
    peer: Peer,
    /// The user code pages mapped so far, by address space (MSP21).
    mapped_code: rustc_hash::FxHashSet<(u32, u64)>,
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
            cfg,
        }
    }
}

impl Core for Sparc {
    fn software_threads(&mut self, threads: usize) {
        self.busy = threads.clamp(1, self.cfg.strands);
    }

    fn enter(&mut self, phase: &Phase, thread: usize) {
        self.mem.enter();
        let strand = thread % self.cfg.strands;
        if strand != usize::from(self.strand) {
            // The strand that ran puts its state back; the next takes its own, brought
            // up to now.
            if let Some(old) = self.strands.get_mut(usize::from(self.strand)) {
                std::mem::swap(&mut self.s, old);
            }
            if let Some(new) = self.strands.get_mut(strand) {
                std::mem::swap(&mut self.s, new);
            }
            self.strand = strand as u8;
        }
        self.s.catch_up(self.now);
        self.s.ip = phase.entry;
        self.waiting = Signals::default();
        for (k, &signal) in Signal::STRAND_WAITING.iter().enumerate().take(self.busy) {
            self.waiting.set(signal, u8::from(k != usize::from(self.strand)));
        }
    }

    fn iterate(&mut self, phase: &Phase, k: u64, out: &mut Vec<Span>) {
        let mut template = Span::new(0, phase.entry);
        template.privilege = phase.privilege;
        template.thread = self.strand;
        // Every cycle of this strand's is one in which the others with work wait.
        template.signals = self.waiting;
        let from = out.len();
        let mut run = Out::new(out, template);
        let mut i = 0;
        while i < phase.body.len() {
            // A recorded program says where each instruction is.
            if let Some(&ip) = phase.addresses.get(i) {
                self.s.ip = ip;
            }
            i += self.execute(phase, k, i, &mut run);
        }
        self.peer_turn(out, from, template);
        self.dma(phase, k, out, from, template);
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
