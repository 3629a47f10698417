//! SPARC data accesses: loads (the store buffer's read-after-write hits, the L1, the
//! hardware prefetcher), stores through the store buffer, atomics, software prefetches,
//! block transfers and uncached accesses, each after the other core's say about a
//! shared line (`coherence.rs`).

use super::memory::{source, Level, Reach};
use super::walk::{context, Side};
use super::{Buffered, Sparc};
use super::{Out, Signals};
use crate::program::{Access, DataStream, Memory, Op, Phase};
use crate::stream::{MemRef, Signal};

impl Sparc {
    /// The socket memory at `addr` of `stream` lives on: shared mappings are spread
    /// over the sockets page by page ([Solaris] places shared memory over the
    /// lgroups; ERRATA MSP4), private memory is local.
    fn remote(&self, stream: &DataStream, addr: u64) -> bool {
        stream.shared && self.cfg.sockets > 1 && !(addr / self.cfg.page_sizes[0]).is_multiple_of(self.cfg.sockets)
    }

    /// Whether the code at `ip` lives on another socket. Code on a page the phase
    /// also maps as shared data (a JIT's code cache, which its threads write) is shared
    /// memory, spread over the sockets like the rest (ERRATA MSP26); other code is
    /// the process's text, local (MSP4).
    pub(super) fn code_remote(&self, phase: &Phase, ip: u64) -> bool {
        let page = self.cfg.page_sizes[0];
        let maps = |s: &DataStream| {
            s.memory == Memory::Cacheable && (s.base / page..=s.base.saturating_add(s.footprint.max(1) - 1) / page).contains(&(ip / page))
        };
        // Whether a stream is remote at `ip` is cheap to tell and mostly no (one socket,
        // private data); whether it maps `ip` divides, for each of up to 239 streams.
        phase.streams.iter().any(|s| self.remote(s, ip) && maps(s))
    }

    /// A load, store, atomic, prefetch or block transfer through the data side, after
    /// the other core had its say about a shared line (`coherence.rs`).
    pub(super) fn memory(&mut self, phase: &Phase, k: u64, op: &Op, a: Access, ip: u64, out: &mut Out) {
        let stream = &phase.streams[usize::from(a.stream)];
        let addr = stream.position(k) + u64::from(a.offset);
        if op.misaligned(addr) {
            // A misaligned access traps before it translates (mem_address_not_aligned,
            // MSP30): the kernel's handler performs it and goes on after it.
            self.wait(out, ip, self.cfg.trap_cycles + self.cfg.unaligned_cycles, None);
        }
        if stream.fresh && !phase.present(a.stream, k) {
            // A page of freshly mapped memory not present yet (MSP29): the TSB miss's
            // trap (MSP7) finds no page either, and the kernel's page fault handler
            // maps it.
            self.wait(out, ip, self.cfg.page_fault_cycles, None);
        }
        self.snoop(stream, addr, op.writes());
        self.access(phase, k, op, a, ip, out);
        self.mem.supplier = None;
        if phase.watch.is_some_and(|w| !matches!(op, Op::Prefetch(_)) && w.hits(addr, a.size, op.writes())) {
            // The virtual-address watchpoint's trap to the debugger, whose handling the
            // program's next phases are.
            self.wait(out, ip, self.cfg.trap_cycles, None);
        }
    }

    fn access(&mut self, phase: &Phase, k: u64, op: &Op, a: Access, ip: u64, out: &mut Out) {
        let stream = &phase.streams[usize::from(a.stream)];
        let addr = stream.position(k) + u64::from(a.offset);
        let mem = MemRef { addr, stride: stream.stride, size: a.size, write: op.writes() };
        let class = self.cfg.size_class(stream.page);
        if !self.tr.dtlb.access(addr, self.cfg.page_sizes[class], context(phase)) {
            // A base-page mapping is faulted in page by page on its first pass; a
            // large-page segment is populated when it is mapped (ERRATA MSP7).
            let first_touch = class == 0 && stream.stride != 0 && k < stream.until_wrap(0);
            self.walk(out, addr, class, context(phase), first_touch, Side::Data);
        }
        let remote = self.remote(stream, addr);
        let mut s = Signals::default();
        if stream.memory != Memory::Cacheable {
            // I/O space: next to commit (TABLE 10-1 footnote 1); uncached memory counts
            // as memory traffic, device registers do not.
            s.set(Signal::NextToCommit, 1).set(if op.writes() { Signal::Stores } else { Signal::Loads }, 1);
            let memory = stream.memory == Memory::NonCacheable;
            let waited = if memory { self.mem.uncached(addr, op.writes()) } else { 0 };
            // A write waits only for a write-queue entry.
            let (signal, latency) =
                if op.writes() { (Signal::MemoryWrites, waited) } else { (Signal::MemoryReads, self.cfg.memory_cycles + waited) };
            s.set(signal, u8::from(memory));
            self.issue(out, ip, s, 1).mem = Some(mem);
            self.wait(out, ip, latency, Some(Signal::DataDepStallCycles));
            return;
        }
        let waits = match *op {
            Op::Load(_) => self.load(addr, a.size, remote, &mut s),
            Op::Store(_) => {
                self.store(out, ip, addr, a.size, remote, &mut s);
                0
            }
            Op::Modify(_) => {
                let latency = self.load(addr, a.size, remote, &mut s);
                self.store(out, ip, addr, a.size, remote, &mut s);
                latency
            }
            Op::Atomic(_) => {
                // CASA, LDSTUB, SWAP: "other" instructions (footnote 9), performed at
                // the L2 after the L1 copy is invalidated; next to commit.
                s.set(Signal::Atomics, 1).set(Signal::NextToCommit, 1);
                self.mem.dcache.invalidate(addr);
                let reach = self.mem.access(addr, true, remote, &mut s);
                self.mem.latency(reach)
            }
            Op::Prefetch(_) => {
                // Compilers prefetch "for several writes" (fcn 2, into the L2) ahead of
                // streams the loop stores to, "for several reads" (fcn 0, into the L1)
                // otherwise; sl 21 counts only the first kind (ERRATA MSP5).
                s.set(Signal::SoftwarePrefetches, 1);
                let for_writes = phase.body.iter().any(|o| matches!(o, Op::Store(b) | Op::BlockStore(b) if b.stream == a.stream));
                self.prefetch(addr, remote, for_writes, &mut s);
                0
            }
            Op::BlockLoad(_) | Op::BlockStore(_) => {
                // Whole 64-byte blocks through the L2, bypassing the L1 (footnote 6 and
                // 7 count them as loads or stores, sl 4 mask 20 as block transfers).
                let write = op.writes();
                s.set(Signal::BlockLoadsStores, 1).set(if write { Signal::Stores } else { Signal::Loads }, 1);
                let line = self.cfg.l2.line;
                let mut from = Reach { level: Level::L2, waited: 0 };
                for l in (addr & !(line - 1)..=(addr & !(line - 1)).saturating_add(63)).step_by(line as usize) {
                    if write {
                        // Every L1 line the block covers (16-byte lines on T1 and T3).
                        let l1 = self.cfg.dcache.line;
                        for a in (l..=l + (line - 1)).step_by(l1 as usize) {
                            self.mem.dcache.invalidate(a);
                        }
                    }
                    let reach = self.mem.access(l, write, remote, &mut s);
                    from = Reach { level: from.level.max(reach.level), waited: from.waited.max(reach.waited) };
                }
                let latency = self.mem.latency(from);
                if write {
                    // A block store is one store at the L2, from the farthest level.
                    s.set(store_hit(from.level), 1);
                }
                self.issue(out, ip, s, 1).mem = Some(mem);
                self.wait(out, ip, self.cfg.block_cycles, None);
                if !write && a.use_next {
                    self.wait(out, ip, latency, Some(Signal::DataDepStallCycles));
                }
                return;
            }
            _ => 0,
        };
        let waited = a.use_next || matches!(op, Op::Atomic(_));
        if !waited && waits > self.cfg.load_use_cycles && matches!(op, Op::Load(_) | Op::Modify(_)) {
            self.outstanding(out, ip, waits);
        }
        self.issue(out, ip, s, 1).mem = Some(mem);
        if waits > 0 && waited {
            self.wait(out, ip, waits, Some(Signal::DataDepStallCycles));
        }
    }

    /// A load: from the store buffer when a buffered store covers it, else from the
    /// store queue, else the L1 and on a miss the L2 and beyond. Returns the cycles
    /// until its data is there.
    fn load(&mut self, addr: u64, size: u8, remote: bool, s: &mut Signals) -> u64 {
        s.set(Signal::Loads, 1);
        // Ends as wide as they need to be: an access at the top of the address space
        // ends past it.
        let (end, mut wait_store) = (u128::from(addr) + u128::from(size), 0);
        let overlaps = |b: &&Buffered| u128::from(b.addr) < end && u128::from(addr) < b.end();
        // The youngest overlapping store in the buffer; a hit there supersedes one in
        // the queue (TABLE 10-2 sl 19 note).
        let at = self.s.at;
        // The stores still in the buffer are the youngest (`Strand::buffer`), so the
        // youngest overlapping store is in the buffer if any there overlaps.
        let found = self.s.store_buffer.iter().rev().find(overlaps).map(|b| {
            let hits = if b.in_buffer(at) {
                [Signal::StoreBufferFullRawHits, Signal::StoreBufferPartialRawHits]
            } else {
                [Signal::StoreQueueFullRawHits, Signal::StoreQueuePartialRawHits]
            };
            (b, hits)
        });
        if let Some((b, [full, partial])) = found {
            if b.addr <= addr && end <= b.end() {
                s.set(full, 1);
                return self.cfg.load_use_cycles;
            }
            // A partial overlap waits for the store to be written, then reads the cache.
            s.set(partial, 1);
            wait_store = b.left(at);
        }
        if self.mem.dcache.access(addr, false).hit {
            return wait_store + self.cfg.load_use_cycles;
        }
        s.set(Signal::DCacheMisses, 1);
        let reach = self.mem.access(addr, false, remote, s);
        s.set(source(reach.level, [Signal::DCacheFillsFromCache, Signal::DCacheFillsFromLocalMemory, Signal::DCacheFillsFromRemote]), 1);
        if self.cfg.hardware_prefetch {
            // The next line, unless the L1 has it already (TABLE 10-2 sl 18 mask 01).
            // After the last line of the address space comes its first.
            let next = (addr - addr % self.cfg.dcache.line).wrapping_add(self.cfg.dcache.line);
            if self.mem.l1_holds(next) {
                s.set(Signal::HwPrefetchDropsCacheHit, 1);
            } else {
                self.mem.access(next, false, remote, s);
                self.mem.dcache.fill(next, false);
            }
        }
        wait_store + self.mem.latency(reach)
    }

    /// A store: into the store buffer (waiting for a free entry), on T4 from there
    /// into the store queue once committed (MSP18), and through to the L2; the
    /// write-through L1 is updated only where it holds the line.
    fn store(&mut self, out: &mut Out, ip: u64, addr: u64, size: u8, remote: bool, s: &mut Signals) {
        s.set(Signal::Stores, 1);
        let at = self.s.at;
        let first = self.s.first_buffered(at);
        let full = self.s.store_buffer.len() - first >= self.cfg.store_buffer;
        if let Some(oldest) = self.s.store_buffer.get(first).copied().filter(|_| full) {
            let queued = oldest.queued(at);
            self.s.stores.waited += queued;
            // Select waits for the oldest store in the buffer to leave it; once that one
            // has committed, it waits on behalf of a store-queue entry too.
            let committed = oldest.commit(at).min(queued);
            self.wait(out, ip, committed, Some(Signal::StoreBufferWaitCycles));
            let per_cycle = Signals::default().with(Signal::StoreBufferWaitCycles, 1).with(Signal::StoreQueueWaitCycles, 1);
            self.stall_with(out, ip, queued - committed, per_cycle);
        }
        if self.mem.l1_holds(addr) {
            self.mem.dcache.access(addr, false);
        }
        let reach = self.mem.access(addr, true, remote, s);
        s.bump(store_hit(reach.level));
        // Entries are written in order, each after the one before, from the queue.
        // (The wait for a free entry above moved the strand's clock on.)
        let at = self.s.at;
        let ahead = self.s.drained(at);
        let latency = self.mem.latency(reach);
        // (commit, queued, written), in cycles from now.
        let (commit, queued, written) = match self.cfg.store_queue {
            None => (ahead + latency, ahead + latency, ahead + latency),
            Some(q) => {
                // The queue has room once the store `entries` places ahead is written.
                let room = self.s.store_buffer.len().checked_sub(q.entries).map_or(0, |i| self.s.store_buffer[i].left(at));
                let queued = q.commit_cycles.max(room);
                (q.commit_cycles, queued, ahead.max(queued) + latency)
            }
        };
        self.s.buffer(Buffered { addr, size, commit_at: at + commit, queued_at: at + queued, written_at: at + written });
        let held = self.s.buffered(at);
        self.s.stores.add(queued, 0, held);
    }

    /// A software prefetch. One that would miss the L2 while the L2's miss buffer is
    /// full is dropped (MSP19): one into the L2 always, one into the L1 when other
    /// strands run beside this one (TABLE 10-2 sl 18: "Software prefetches are not
    /// dropped when only one thread is running").
    fn prefetch(&mut self, addr: u64, remote: bool, for_writes: bool, s: &mut Signals) {
        if for_writes && !self.mem.l2_holds(addr) && self.mem.miss_buffer_full() {
            s.set(Signal::L2PrefetchDrops, 1);
        } else if for_writes {
            let reach = self.mem.access(addr, false, remote, s);
            s.set(
                match reach.level {
                    Level::L2 => Signal::L2PrefetchHitsL2,
                    Level::L3 | Level::LocalC2c => Signal::L2PrefetchHitsL3,
                    Level::LocalMemory => Signal::L2PrefetchLocalMemory,
                    Level::RemoteC2c | Level::RemoteMemory => Signal::L2PrefetchRemoteMemory,
                },
                1,
            );
        } else if self.mem.l1_holds(addr) {
            s.set(Signal::SwPrefetchDropsCacheHit, 1);
        } else if self.cfg.strands > 1 && !self.mem.l2_holds(addr) && self.mem.miss_buffer_full() {
            s.set(Signal::SwPrefetchDropsMissBufferFull, 1);
        } else {
            self.mem.access(addr, false, remote, s);
            self.mem.dcache.fill(addr, false);
        }
    }
}

/// The TABLE 10-2 sl 22 signal of a store that found its line at `level`.
fn store_hit(level: Level) -> Signal {
    match level {
        Level::L2 => Signal::StoresHitL2,
        Level::L3 => Signal::StoresHitL3,
        Level::LocalC2c => Signal::StoresLocalC2c,
        Level::RemoteC2c => Signal::StoresRemoteC2c,
        Level::LocalMemory => Signal::StoresLocalMemory,
        Level::RemoteMemory => Signal::StoresRemoteMemory,
    }
}
