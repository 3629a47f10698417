//! The memory side of a SPARC core: the inclusive L2 behind the L1 caches, the L3
//! where the chip has one, the memory controllers, memory on this socket or another,
//! and the translation TLBs.

use super::buffers::L2Buffers;
use super::config::SparcConfig;
use super::mcu::Mcus;
use super::Signals;
use crate::machine::cache::{Cache, Victim};
use crate::machine::mem::Queue;
use crate::machine::tlb::Tlb;
use crate::machine::{Keys, Moves};
use crate::stream::{MemoryQueues, Signal};

/// Where a line came from, nearest first: another core's cache of this socket
/// (`LocalC2c`) or of another (`RemoteC2c`) holding it modified (ERRATA MSP17).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    L2,
    L3,
    LocalC2c,
    LocalMemory,
    RemoteC2c,
    RemoteMemory,
}

impl Level {
    pub fn is_memory(self) -> bool {
        matches!(self, Level::LocalMemory | Level::RemoteMemory)
    }
}

/// Where an access found its line, and the cycles it waited beyond that level's
/// latency: for a memory bank, and on T4 in front of the L2's pipeline and for its
/// buffers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reach {
    pub level: Level,
    pub waited: u64,
}

/// The caches beyond the L1s and the memory controllers, shared by the core's strands.
pub struct Hierarchy {
    pub icache: Cache,
    pub dcache: Cache,
    l2: Cache,
    l3: Option<Cache>,
    /// This socket's memory controllers (a remote line is served by another socket's).
    mcus: Mcus,
    /// Whether the L2 and the L3 have been looked up since the phase began: one that
    /// has not enters the canonical state as a marker instead of its lines (it did
    /// nothing in any period found, so it does nothing in the periods skipped, and
    /// stays as it is).
    touched: [bool; 2],
    /// The line another core holds modified and will hand over, for the access under
    /// way (`Sparc::snoop`), and where that core is.
    pub supplier: Option<(u64, Level)>,
    /// The L2's miss, fill and write-back buffers (T4, `buffers.rs`).
    buffers: Option<L2Buffers>,
    /// Cycles of a line from the L2, the L3 (or another L2 of the socket), local and
    /// remote memory.
    cycles: [u64; 4],
}

impl Hierarchy {
    pub fn new(cfg: &SparcConfig) -> Hierarchy {
        Hierarchy {
            icache: Cache::new(cfg.icache),
            dcache: Cache::new(cfg.dcache),
            l2: Cache::new(cfg.l2),
            l3: cfg.l3.map(Cache::new),
            mcus: Mcus::new(cfg.mcu),
            touched: [false; 2],
            supplier: None,
            buffers: cfg.l2_buffers.map(L2Buffers::new),
            cycles: [cfg.l2_cycles, cfg.l3_cycles, cfg.memory_cycles, cfg.remote_cycles],
        }
    }

    /// Cycles until the line an access reached is there.
    pub fn latency(&self, reach: Reach) -> u64 {
        reach.waited + self.level_cycles(reach.level)
    }

    /// Cycles of a line from `level`, nothing waited for.
    fn level_cycles(&self, level: Level) -> u64 {
        let [l2, l3, memory, remote] = self.cycles;
        match level {
            Level::L2 => l2,
            // Another L2 of the socket answers through the L3's crossbar.
            Level::L3 | Level::LocalC2c => l3,
            Level::LocalMemory => memory,
            Level::RemoteC2c | Level::RemoteMemory => remote,
        }
    }

    /// Whether an L2 miss now finds every miss-buffer entry taken.
    pub fn miss_buffer_full(&self) -> bool {
        self.buffers.as_ref().is_some_and(L2Buffers::miss_buffer_full)
    }

    /// Whether the L2 holds the line of `addr`.
    pub fn l2_holds(&self, addr: u64) -> bool {
        self.l2.contains(addr)
    }

    /// Reads (or, with `write`, writes) the L2 line of `addr`, allocating it on a miss
    /// with what that displaces; `remote` when the line's home is another socket.
    /// Returns where the line was.
    pub fn access(&mut self, addr: u64, write: bool, remote: bool, s: &mut Signals) -> Reach {
        self.touched[0] = true;
        // On T4 the request waits while a fill holds the L2's pipeline (MSP25).
        let entered = self.buffers.as_ref().map_or(0, |b| b.enter(s));
        let lookup = self.l2.access(addr, write);
        let writeback = lookup.victim.and_then(|v| self.evict_l2(v, s));
        if lookup.hit {
            return Reach { level: Level::L2, waited: entered };
        }
        if let Some((_, level)) = self.supplier.filter(|&(line, _)| line == self.coherence_line(addr)) {
            s.bump(Signal::CacheToCacheFills);
            return self.fill(Reach { level, waited: 0 }, entered, writeback, s);
        }
        let mut victim_out = 0;
        let level = match self.l3.as_mut() {
            Some(l3) => {
                self.touched[1] = true;
                let l3_lookup = l3.access(addr, false);
                if let Some(v) = l3_lookup.victim.filter(|v| v.dirty) {
                    // The new line takes the victim's place once the victim has a
                    // write-queue entry.
                    victim_out = self.mcus.write(v.line);
                    s.bump(Signal::MemoryWrites);
                }
                if l3_lookup.hit {
                    Level::L3
                } else if remote {
                    Level::RemoteMemory
                } else {
                    Level::LocalMemory
                }
            }
            None if remote => Level::RemoteMemory,
            None => Level::LocalMemory,
        };
        let mut bank_wait = 0;
        if level.is_memory() {
            s.bump(Signal::MemoryReads);
            if level == Level::LocalMemory {
                bank_wait = self.mcus.read(addr);
            }
        }
        let waited = bank_wait.max(victim_out.saturating_sub(self.level_cycles(level)));
        self.fill(Reach { level, waited }, entered, writeback, s)
    }

    /// An L2 miss through the T4 L2's buffers (MSP19, MSP23, MSP24): its request goes
    /// out once it holds a miss-buffer entry, the dirty line it displaces
    /// (`writeback`: the cycles the next level takes to accept it) a write-back entry,
    /// and it a fill-buffer entry. Elsewhere its line takes the victim's place once the
    /// next level has accepted the victim.
    fn fill(&mut self, reach: Reach, entered: u64, writeback: Option<u64>, s: &mut Signals) -> Reach {
        let cycles = self.level_cycles(reach.level);
        match self.buffers.as_mut() {
            Some(b) => Reach { level: reach.level, waited: b.miss(entered, cycles + reach.waited, writeback, s) - cycles },
            None => Reach { level: reach.level, waited: reach.waited.max(writeback.unwrap_or(0).saturating_sub(cycles)) },
        }
    }

    /// A transaction that bypasses the caches (non-cacheable memory): returns the
    /// cycles a read waited for its bank, or a write for a write-queue entry.
    pub fn uncached(&mut self, addr: u64, write: bool) -> u64 {
        if write {
            self.mcus.write(addr)
        } else {
            self.mcus.read(addr)
        }
    }

    /// What the L2's buffers (T4) and the memory controllers' write queues have held.
    pub fn queues(&self) -> Vec<Queue> {
        self.buffers.iter().flat_map(L2Buffers::queues).chain(self.mcus.queues()).collect()
    }

    /// The core's cycle is `now`: strands that run at once reach the memory system
    /// at their own cycles, each a little before or after the last.
    pub fn set_now(&mut self, now: u64) {
        self.mcus.set_now(now);
        if let Some(b) = &mut self.buffers {
            b.set_now(now);
        }
    }

    /// Time passes for the L2's buffers and the memory controllers.
    pub fn elapse(&mut self, cycles: u64) {
        self.mcus.elapse(cycles);
        if let Some(b) = &mut self.buffers {
            b.elapse(cycles);
        }
    }

    /// What the memory transactions since the last call met in the controllers.
    pub fn take_queues(&mut self) -> MemoryQueues {
        self.mcus.take()
    }

    /// A line leaves the L2: the L1 copies it covers go (inclusion), and a dirty line
    /// is written to the L3, or to memory. Returns, for a dirty line, the cycles the
    /// next level takes to accept it: the L3's latency (MSP24), or the L3's dirty
    /// victim's wait for a write-queue entry if longer; without an L3, the wait for a
    /// write-queue entry (MSP15).
    fn evict_l2(&mut self, v: Victim, s: &mut Signals) -> Option<u64> {
        s.bump(if v.dirty { Signal::L2DirtyEvictions } else { Signal::L2CleanEvictions });
        let line = self.l2.config().line;
        for (cache, signal) in
            [(&mut self.icache, Signal::ICacheEvictionInvalidations), (&mut self.dcache, Signal::DCacheEvictionInvalidations)]
        {
            let step = cache.config().line;
            for a in (v.line..=v.line + (line - 1)).step_by(step as usize) {
                if cache.invalidate(a).is_some() {
                    s.bump(signal);
                }
            }
        }
        if !v.dirty {
            return None;
        }
        match self.l3.as_mut() {
            Some(l3) => {
                self.touched[1] = true;
                let mut out = 0;
                if let Some(w) = l3.fill(v.line, true).filter(|w| w.dirty) {
                    out = self.mcus.write(w.line);
                    s.bump(Signal::MemoryWrites);
                }
                Some(self.cycles[1].max(out))
            }
            None => {
                s.bump(Signal::MemoryWrites);
                Some(self.mcus.write(v.line))
            }
        }
    }

    /// Bytes of a coherence line: the last level's.
    pub fn line_bytes(&self) -> u64 {
        self.l3.as_ref().unwrap_or(&self.l2).config().line
    }

    /// The line coherence is kept by: the last level's.
    pub fn coherence_line(&self, addr: u64) -> u64 {
        self.l3.as_ref().unwrap_or(&self.l2).config().line_of(addr)
    }

    /// Another core's snoop of coherence line `line` (a read, or a write that takes
    /// every copy): the L1 data and instruction lines it invalidated, and whether the
    /// outer levels it reaches (`outer`: the L2, and the L3 when `both`) held the line
    /// and held it modified. A read leaves their copies clean.
    pub fn snooped(&mut self, line: u64, write: bool, outer: bool, both: bool) -> (u8, u8, bool, bool) {
        let bytes = self.line_bytes();
        let (mut invalidated, mut code) = (0u8, 0u8);
        if write {
            for (cache, count) in [(&mut self.dcache, &mut invalidated), (&mut self.icache, &mut code)] {
                let step = cache.config().line;
                for a in (line..=line + (bytes - 1)).step_by(step as usize) {
                    *count += u8::from(cache.invalidate(a).is_some());
                }
            }
        }
        let (mut held, mut dirty) = (false, false);
        if outer {
            self.touched = [true, both || self.touched[1]];
            let levels = [Some(&mut self.l2), self.l3.as_mut().filter(|_| both)];
            for c in levels.into_iter().flatten() {
                let step = c.config().line;
                for a in (line..=line + (bytes - 1)).step_by(step as usize) {
                    held |= c.contains(a);
                    dirty |= if write { c.invalidate(a).is_some_and(|v| v.dirty) } else { c.clean(a) > 0 };
                }
            }
        }
        (invalidated, code, held, dirty)
    }

    /// A device's DMA of coherence line `line` (ERRATA MSP20); returns the L1 data and
    /// instruction lines it invalidated. Where the core's L2 is its own (`own_l2`: T4,
    /// whose I/O goes through the L3), a write takes every copy and goes to memory, and a read
    /// takes a modified copy's data (leaving it clean) or reads memory. Where the L2
    /// is the chip's, its bank serves the device: a write takes the L1 copies and
    /// updates the L2's copy, or goes to memory when the L2 has none; a read takes the
    /// L2's copy or reads memory. The controllers queue the device's transactions
    /// like the core's; what they meet there is not the core's.
    pub fn device(&mut self, line: u64, write: bool, own_l2: bool) -> (u8, u8) {
        let (invalidated, code, held, _) = self.snooped(line, write, own_l2, true);
        let memory = if own_l2 {
            write || !held
        } else {
            self.touched[0] = true;
            let in_l2 = self.l2.contains(line);
            if in_l2 && write {
                self.l2.fill(line, true);
            }
            !in_l2
        };
        if memory {
            self.mcus.device(line, write);
        }
        (invalidated, code)
    }

    /// Whether the L1 data cache holds the line; no state changes.
    pub fn l1_holds(&self, addr: u64) -> bool {
        self.dcache.contains(addr)
    }

    /// A phase begins: no outer level has been looked up in it yet.
    pub fn enter(&mut self) {
        self.touched = [false; 2];
    }

    pub fn canonical(&self, keys: &Keys, out: &mut Vec<u64>) {
        self.icache.canonical(keys.line, out);
        self.dcache.canonical(keys.line, out);
        if let Some(b) = &self.buffers {
            b.canonical(out);
        }
    }

    /// The L2 and L3 (`Core::canonical_outer`).
    pub fn canonical_outer(&self, keys: &Keys, out: &mut Vec<u64>) {
        self.mcus.canonical(keys, out);
        for (cache, touched) in [Some(&self.l2), self.l3.as_ref()].into_iter().zip(self.touched) {
            match cache {
                Some(c) if touched => c.canonical(keys.line, out),
                Some(_) => out.push(u64::MAX - 1),
                None => {}
            }
        }
    }

    /// Moves the lines of the levels the phase has used (`touched`); the others did
    /// nothing in the skipped periods.
    pub fn relocate(&mut self, to: &Moves) {
        self.mcus.relocate(to);
        self.icache.relocate(to.line);
        self.dcache.relocate(to.line);
        for (cache, touched) in [Some(&mut self.l2), self.l3.as_mut()].into_iter().zip(self.touched) {
            if let Some(c) = cache.filter(|_| touched) {
                c.relocate(to.line);
            }
        }
    }

    /// Bytes after which every cache indexes a stream the same way again.
    pub fn set_span(&self) -> u64 {
        let spans = [self.icache.config().set_span(), self.dcache.config().set_span(), self.l2.config().set_span(), self.mcus.span()];
        spans.into_iter().chain(self.l3.as_ref().map(|c| c.config().set_span())).max().unwrap_or(1)
    }
}

/// The TLBs.
pub struct Translation {
    pub itlb: Tlb,
    pub dtlb: Tlb,
}

impl Translation {
    pub fn new(cfg: &SparcConfig) -> Translation {
        Translation { itlb: Tlb::new(cfg.itlb), dtlb: Tlb::new(cfg.dtlb) }
    }
}

/// The L1 fill source signal of a level: a cache of this socket, local memory, remote.
pub(super) fn source(level: Level, signals: [Signal; 3]) -> Signal {
    match level {
        // TABLE 10-2 sl 11, 16: "local L2 cache to cache" is of this socket; a remote
        // cache counts with remote memory.
        Level::L2 | Level::L3 | Level::LocalC2c => signals[0],
        Level::LocalMemory => signals[1],
        Level::RemoteC2c | Level::RemoteMemory => signals[2],
    }
}
