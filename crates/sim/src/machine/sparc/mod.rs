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

pub use buffers::L2BufferSizes;
pub use config::{SparcChip, SparcConfig};

use self::memory::{Hierarchy, Translation};
use crate::machine::out::Out;
use crate::machine::peer::Peer;
use crate::machine::predict::{DirectionPredictor, ReturnStack, TargetCache};
use crate::machine::{Core, Keys, Moves, Quantum};
use crate::program::{lcm, DataStream, Phase};
use crate::stream::{Signal, Signals, Span};

/// A store not yet written to the L2: in the store buffer, then (T4) in the store
/// queue. Times are cycles from now, and stores are kept in program order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Buffered {
    addr: u64,
    size: u8,
    /// Until it commits: the part of its time in the store buffer that is not spent
    /// waiting for the store queue (where there is none, all of it).
    commit: u64,
    /// Until it leaves the store buffer for the store queue (where there is none:
    /// until it has been written).
    queued: u64,
    /// Until it has been written.
    left: u64,
}

impl Buffered {
    /// It still holds a store-buffer entry.
    fn in_buffer(&self) -> bool {
        self.queued > 0
    }
}

pub struct Sparc {
    cfg: SparcConfig,
    mem: Hierarchy,
    tr: Translation,
    direction: Option<DirectionPredictor>,
    btc: Option<TargetCache>,
    indirect: Option<TargetCache>,
    /// None where the chip has none (T1, T3).
    return_stack: Option<ReturnStack>,
    store_buffer: Vec<Buffered>,
    /// Cycles until each outstanding load miss that nothing waited for has its data,
    /// and instructions issued since the oldest (out-of-order cores only).
    loads_in_flight: Vec<u64>,
    issued_past_miss: u64,
    strand: u8,
    /// Strands that have a software thread (strands `0..busy`), and the signals of
    /// those of them not running: each waits for its turn (ERRATA MSP1).
    busy: usize,
    waiting: Signals,
    ip: u64,
    /// The line of the last fetch; `u64::MAX` for none.
    fetch_line: u64,
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
            return_stack: (cfg.return_stack > 0).then(|| ReturnStack::new(cfg.return_stack)),
            store_buffer: Vec::with_capacity(cfg.store_buffer),
            loads_in_flight: Vec::new(),
            issued_past_miss: 0,
            strand: 0,
            busy: 1,
            waiting: Signals::default(),
            ip: 0,
            fetch_line: u64::MAX,
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
        self.ip = phase.entry;
        self.mem.enter();
        self.strand = (thread % self.cfg.strands) as u8;
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
                self.ip = ip;
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
        if let Some(r) = &self.return_stack {
            r.canonical(out);
        }
        for b in &self.store_buffer {
            out.extend([(keys.line)(b.addr), u64::from(b.size), b.commit, b.queued, b.left]);
        }
        out.push(u64::MAX);
        out.extend(&self.loads_in_flight);
        out.push(u64::MAX);
        out.extend([self.issued_past_miss, u64::from(self.strand), (keys.line)(self.ip), (keys.line)(self.fetch_line)]);
    }

    fn canonical_outer(&self, keys: &Keys, out: &mut Vec<u64>) {
        self.mem.canonical_outer(keys, out);
    }

    fn relocate(&mut self, to: &Moves) {
        self.mem.relocate(to);
        self.peer.relocate(to);
        self.tr.itlb.relocate(to.page);
        self.tr.dtlb.relocate(to.page);
        for b in &mut self.store_buffer {
            b.addr = (to.line)(b.addr).unwrap_or(b.addr);
        }
    }
}
