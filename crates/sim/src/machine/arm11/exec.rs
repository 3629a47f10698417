//! One ARM11 instruction: fetch through the instruction side, execute through the data
//! side and the predictors, and the cycles and signals that result.

use super::{Arm11, Faults};
use super::{Out, Signals};
use crate::program::{Access, DataStream, FpOp, Memory, Op, Phase, INSN};
use crate::stream::{Branch, MemRef, Signal};

/// Structures that fault injection can hit, indexing `Faults`.
#[derive(Debug, Clone, Copy)]
pub(super) enum Part {
    ICache,
    DCache,
    Itcm,
    Dtcm,
}

impl Faults {
    /// One more access to `part`: the error signal it raises, if this is the one. A
    /// cache's errors take turns among the RAMs that can have them.
    pub(super) fn access(&mut self, part: Part) -> Option<Signal> {
        let kinds: &[Signal] = match part {
            Part::ICache => &[Signal::ICacheTagParityErrors, Signal::ICacheDataParityErrors],
            Part::DCache => &[Signal::DCacheTagParityErrors, Signal::DCacheDataParityErrors, Signal::DCacheDirtyParityErrors],
            Part::Itcm => &[Signal::ItcmErrors],
            Part::Dtcm => &[Signal::DtcmErrors],
        };
        self.0[part as usize].access(kinds)
    }
}

/// What the data side's look-ups found for one access (docs/engine.md E8: an
/// instruction's look-ups apart from its timing): the signals they count, and the
/// cycles and write-buffer entries they cost, which `memory` then times.
#[derive(Default)]
struct DataSide {
    signals: Signals,
    /// Cycles of a micro-TLB refill or page walk before the access.
    translation: u64,
    /// Cycles until the data arrives (0 for a hit or a buffered write).
    latency: u64,
    /// The bytes of each write that leaves through the write buffer, in order (a
    /// write that misses, a dirty victim's halves).
    writes: [Option<u8>; 2],
}

impl DataSide {
    fn buffer(&mut self, bytes: u8) {
        if let Some(slot) = self.writes.iter_mut().find(|w| w.is_none()) {
            *slot = Some(bytes);
        }
    }
}

impl Arm11 {
    /// Executes `op` at the current ip; returns how many following instructions a
    /// taken forward branch skips.
    pub(super) fn execute(&mut self, phase: &Phase, k: u64, op: &Op, out: &mut Out) -> u8 {
        let ip = self.ip;
        self.fetch(phase, out);
        let mut s = Signals::default();
        // The comparators sit on a few addresses; most instructions are far from them.
        if self.etm_span.contains(&ip) {
            s.set(Signal::EtmExtOut0, u8::from(self.cfg.etm_out0.contains(&ip)));
            s.set(Signal::EtmExtOut1, u8::from(self.cfg.etm_out1.contains(&ip)));
        }
        self.ip = ip.wrapping_add(INSN);
        match *op {
            Op::Fp(f) if !phase.fp.flush && phase.fp.tiny(f, k, phase.iterations) => {
                // VFP11 bounces an operation whose result is subnormal to the support
                // code, through the undefined-instruction exception (MARM13).
                self.plain(out, ip, s);
                self.wait(out, ip, self.cfg.exception_cycles + self.cfg.vfp_support_cycles, None);
            }
            // A pause hint is YIELD, which ARM11 executes as a NOP.
            Op::Int | Op::Pause | Op::Nop | Op::SpecialReg | Op::Fp(FpOp::Add | FpOp::Mul | FpOp::Fma | FpOp::Convert | FpOp::ToInt) => {
                self.plain(out, ip, s);
            }
            Op::Fp(FpOp::Div | FpOp::Sqrt) => {
                self.plain(out, ip, s);
                self.wait(out, ip, self.cfg.fp_divide_cycles, Some(Signal::DataDepStallCycles));
            }
            Op::Barrier => {
                // DSB: drain the write buffer (0x12), then go on.
                let drain = self.drain();
                self.plain(out, ip, s.with(Signal::WriteBufferDrains, 1));
                self.wait(out, ip, drain, None);
            }
            Op::Halt => {
                // Wait For Interrupt (MCR p15 c7 c0 4): standby mode, "most of the
                // clocks" stopped until the interrupt (ARM DDI 0301H §10.2.2).
                self.plain(out, ip, s);
                let idle = self.wake.map_or(0, |w| w.saturating_sub(out.elapsed()));
                self.elapse(idle);
                out.stopped(ip, idle, Signal::HaltedCycles);
            }
            Op::Syscall | Op::ExceptionReturn => {
                // A mode change: not a PC change (§5); the pipeline refills.
                self.plain(out, ip, s);
                self.wait(out, ip, self.cfg.exception_cycles, None);
            }
            Op::Load(a) | Op::Atomic(a) | Op::Modify(a) | Op::Prefetch(a) | Op::BlockLoad(a) | Op::BlockStore(a) | Op::Store(a) => {
                self.memory(phase, k, op, a, ip, s, out);
            }
            Op::FlushCode(a) => {
                // Clean the data line (MCR p15 c7 c10 1) and invalidate the
                // instruction line (c7 c5 1) by address: one operation here.
                let addr = phase.streams[usize::from(a.stream)].position(k) + u64::from(a.offset);
                let halves = self.dcache.clean(addr);
                if halves > 0 {
                    s.set(Signal::DCacheWritebacks, halves).set(Signal::MemoryWrites, 1);
                }
                self.icache.invalidate(addr);
                if self.cfg.icache.line_of(addr) == self.fetch_line {
                    self.fetch_line = u64::MAX;
                }
                self.data_line = u64::MAX;
                self.plain(out, ip, s);
            }
            // A VFP load (FLDS, FLDD) goes through the D-cache like any other.
            Op::FpLoad(a) => self.memory(phase, k, &Op::Load(a), a, ip, s, out),
            Op::Jump { table, via } => {
                // LDR pc: a PC write that is no branch instruction (§5: 0xD counts it,
                // 0x5 does not); nothing predicts it, so fetch restarts.
                let target = phase.tables[usize::from(table)].target(k);
                s.set(Signal::PcChanges, 1);
                match via {
                    Some(a) => self.memory(phase, k, &Op::Load(a), a, ip, s, out),
                    None => {
                        self.plain(out, ip, s);
                    }
                }
                self.ip = target;
                self.flush(out, target);
            }
            Op::Branch { target, when } => {
                let taken = when.taken(k, phase.iterations);
                self.branch(out, ip, s, taken, target, false);
            }
            Op::Skip { over, when } => {
                let taken = when.taken(k, phase.iterations);
                self.branch(out, ip, s, taken, ip.wrapping_add(INSN * (u64::from(over) + 1)), false);
                return if taken { over } else { 0 };
            }
            Op::Call { target, .. } => {
                self.return_stack.push(ip.wrapping_add(INSN));
                self.branch(out, ip, s.with(Signal::Calls, 1), true, target, true);
            }
            Op::Return { to } => {
                // Table 2 0x24-0x26: predicted from the return stack; an empty stack (a
                // chain deeper than the stack) predicts nothing and flushes.
                let mut s = s.with(Signal::Returns, 1).with(Signal::Branches, 1).with(Signal::BranchesTaken, 1).with(Signal::PcChanges, 1);
                let mispredicted = match self.return_stack.pop() {
                    None => true,
                    Some(predicted) => {
                        s.set(Signal::ReturnsPredicted, 1);
                        if predicted != to {
                            s.set(Signal::ReturnsMispredicted, 1);
                        }
                        predicted != to
                    }
                };
                if mispredicted {
                    s.set(Signal::BranchMispredicts, 1);
                }
                self.cycle(out, ip, s).branch = Some(Branch { target: to, taken: true, mispredicted });
                self.ip = to;
                if mispredicted {
                    self.flush(out, to);
                }
            }
        }
        0
    }

    /// The devices' transfers at the end of an iteration. ARM11's caches do not snoop,
    /// so the driver keeps DMA coherent by hand, as Linux's DMA API does on ARMv6: it
    /// cleans every line of the buffer a device will read (MCR p15 c7 c10 1, the data
    /// goes out to memory) and cleans and invalidates every line of one a device will
    /// write (c7 c14 1, no stale copy stays). One instruction per line, in the kernel
    /// code that started the transfer; a dirty line's clean writes its halves back.
    pub(super) fn dma(&mut self, phase: &Phase, k: u64, out: &mut Out) {
        let line = self.cfg.dcache.line;
        for d in &phase.dma {
            for (addr, _) in d.lines(&phase.streams[usize::from(d.stream)], k, line) {
                let mut s = Signals::default();
                let dirty = if d.write {
                    self.dcache.invalidate(addr).filter(|v| v.dirty).map(|v| v.halves)
                } else {
                    Some(self.dcache.clean(addr)).filter(|&h| h > 0)
                };
                if let Some(halves) = dirty {
                    s.set(Signal::DCacheWritebacks, halves).set(Signal::MemoryWrites, 1);
                }
                let ip = self.ip;
                self.plain(out, ip, s);
                // The maintenance operation used the data side: the next access is
                // not sequential to the one before (AN195 §8).
                self.data_line = u64::MAX;
            }
        }
    }

    /// One instruction's issue cycle, as a span of its own to attach a data reference
    /// or a branch outcome to.
    #[inline]
    fn cycle<'o>(&mut self, out: &'o mut Out, ip: u64, s: Signals) -> &'o mut super::Span {
        self.elapse(1);
        out.issue(ip, s, 1)
    }

    /// One instruction's issue cycle, merged with the cycles before it when they count
    /// the same.
    #[inline]
    fn plain(&mut self, out: &mut Out, ip: u64, s: Signals) {
        self.elapse(1);
        out.emit(ip, 1, s.with(Signal::Instructions, 1));
    }

    /// Cycles in which nothing issues. Most waits an access could have are of none
    /// (no ordering wait, no translation, room in the write buffer), and the call
    /// alone, saving and restoring registers to do nothing, was nearly half of their
    /// cost.
    #[inline(always)]
    pub(super) fn wait(&mut self, out: &mut Out, ip: u64, cycles: u64, stall: Option<Signal>) {
        if cycles > 0 {
            self.stalled(out, ip, cycles, stall);
        }
    }

    /// A wait of some cycles: time passes and a span counts them.
    #[inline(never)]
    fn stalled(&mut self, out: &mut Out, ip: u64, cycles: u64, stall: Option<Signal>) {
        self.elapse(cycles);
        out.stall(ip, cycles, stall);
    }

    /// Time passes: buffered writes drain, an outstanding fill completes.
    fn elapse(&mut self, cycles: u64) {
        if cycles == 0 {
            return;
        }
        self.clock += cycles;
        let drained = self.write_buffer.iter().take_while(|&&w| w <= self.clock).count();
        if drained > 0 {
            self.write_buffer.drain(..drained);
        }
    }

    /// Cycles until the write buffer has drained.
    fn drain(&self) -> u64 {
        self.write_buffer.last().map_or(0, |w| w.saturating_sub(self.clock))
    }

    /// Cycles until the outstanding line fill completes (0 for none).
    pub(super) fn fill_busy(&self) -> u64 {
        self.fill_until.saturating_sub(self.clock)
    }

    /// §4: a flush costs `mispredict_cycles`, of which the refill's first counts as
    /// an instruction-buffer stall (0x1).
    fn flush(&mut self, out: &mut Out, ip: u64) {
        self.wait(out, ip, 1, Some(Signal::IBufStallCycles));
        self.wait(out, ip, self.cfg.mispredict_cycles - 1, None);
    }

    /// A branch: predicted by the BTAC (2-bit history) when it holds the branch,
    /// statically otherwise (backward taken, forward not); unconditional direct
    /// branches (`direct`: calls) are always predicted.
    fn branch(&mut self, out: &mut Out, ip: u64, s: Signals, taken: bool, target: u64, direct: bool) {
        let mispredicted = self.predict(ip, taken, target, direct);
        let mut s = s.with(Signal::Branches, 1);
        if taken {
            s.set(Signal::BranchesTaken, 1).set(Signal::PcChanges, 1);
        }
        if mispredicted {
            s.set(Signal::BranchMispredicts, 1);
        }
        self.cycle(out, ip, s).branch = Some(Branch { target, taken, mispredicted });
        self.ip = if taken { target } else { ip.wrapping_add(INSN) };
        if mispredicted {
            self.flush(out, self.ip);
        }
    }

    /// A branch's look-up: whether it was mispredicted. The BTAC learns its outcome.
    fn predict(&mut self, ip: u64, taken: bool, target: u64, direct: bool) -> bool {
        let predicted = match self.btac.resolve(ip, taken, target) {
            _ if direct => Some(target),
            Some(e) if e.counter >= 2 => Some(e.target),
            Some(_) => None,
            None if target <= ip => Some(target),
            None => None,
        };
        match predicted {
            Some(p) => !taken || p != target,
            None => taken,
        }
    }

    /// A load, store, swap, preload or LDM/STM through the data side.
    #[allow(clippy::too_many_arguments)]
    fn memory(&mut self, phase: &Phase, k: u64, op: &Op, a: Access, ip: u64, s: Signals, out: &mut Out) {
        let stream = &phase.streams[usize::from(a.stream)];
        let addr = stream.position(k) + u64::from(a.offset);
        if stream.fresh && !phase.present(a.stream, k) {
            // A page of freshly mapped memory not present yet (MARM14): the walk finds
            // a fault entry, and the data abort's handler maps the page; the access
            // then issues again.
            self.wait(out, ip, 2 * self.cfg.exception_cycles + self.cfg.page_fault_cycles, None);
        }
        if op.misaligned(addr) && alignment_fault(op, addr, stream.memory) {
            // An access ARMv6's unaligned support does not perform (MARM15): the
            // alignment fault's data abort, whose handler (Linux's alignment fix-up)
            // performs it and goes on after it.
            self.wait(out, ip, 2 * self.cfg.exception_cycles + self.cfg.unaligned_cycles, None);
        }
        let write = op.writes();
        let d = self.data_side(phase, stream, addr, a.size, op);
        // The timing of what the look-ups found: an ordering wait (a strongly ordered
        // access drains the write buffer, 0x12; a busy line-fill buffer fills the LSU
        // queue, 0x11), the translation, then a full write buffer for each write.
        let ordering = if stream.memory == Memory::Device {
            (self.drain(), None)
        } else if self.fill_busy() > 0 {
            self.filled.waited += self.fill_busy();
            (self.fill_busy(), Some(Signal::LsuFullStallCycles))
        } else {
            (0, None)
        };
        let mut buffer_full = 0;
        for bytes in d.writes.into_iter().flatten() {
            buffer_full = self.buffer_write(ordering.0 + d.translation, buffer_full, bytes);
        }
        self.wait(out, ip, ordering.0, ordering.1);
        self.wait(out, ip, d.translation, None);
        self.wait(out, ip, buffer_full, Some(Signal::LsuFullStallCycles));
        let kind = if write { Signal::Stores } else { Signal::Loads };
        // The instruction's own signals (ETM, PC change) and the data side's are
        // different signals.
        let mut signals = s.union(d.signals);
        if !matches!(op, Op::Prefetch(_)) {
            signals.set(kind, 1);
        }
        let mem = MemRef { addr, stride: stream.stride, size: a.size, write };
        self.cycle(out, ip, signals).mem = Some(mem);
        let block = matches!(op, Op::BlockLoad(_) | Op::BlockStore(_));
        if block {
            self.wait(out, ip, self.cfg.block_cycles, None);
        }
        // A load's consumer waits for the data; a fill nothing waits for keeps the
        // line-fill buffer busy for the next access.
        let waits = a.use_next || stream.memory == Memory::Device || matches!(op, Op::Atomic(_) | Op::Modify(_));
        let reads = !write || matches!(op, Op::Atomic(_) | Op::Modify(_));
        if d.latency > 0 && reads {
            // The line-fill buffer holds the fill until its data is in (its wait is
            // counted where the access met the buffer busy).
            self.filled.add(d.latency, 0, 1);
            if waits && !matches!(op, Op::Prefetch(_)) {
                self.wait(out, ip, d.latency, Some(Signal::DataDepStallCycles));
            } else {
                self.fill_until = self.clock + d.latency;
            }
        } else if a.use_next && reads && d.latency == 0 {
            self.wait(out, ip, self.cfg.load_use_cycles, Some(Signal::DataDepStallCycles));
        }
        if phase.watch.is_some_and(|w| !matches!(op, Op::Prefetch(_)) && w.hits(addr, a.size, write)) {
            // A watchpoint's debug exception (a data abort to the debugger, whose
            // handling the program's next phases are): the pipeline refills.
            self.wait(out, ip, self.cfg.exception_cycles, None);
        }
    }

    /// Translation, lookup and external transactions of one access: its look-ups,
    /// which no timing state changes.
    fn data_side(&mut self, phase: &Phase, stream: &DataStream, addr: u64, size: u8, op: &Op) -> DataSide {
        let mut d = DataSide::default();
        let write = op.writes();
        if stream.memory == Memory::Device {
            // Strongly ordered: the write buffer drains first (0x12).
            d.signals.set(Signal::WriteBufferDrains, 1);
        }
        if let Some(t) = &mut self.tlbs {
            let m = self.cfg.mmu.as_ref().map_or((0, 0, u64::MAX), |m| (m.micro_refill_cycles, m.walk_level_cycles, m.kernel_base));
            let context = if addr >= m.2 { 0 } else { phase.context };
            let page = arm_page(stream.page);
            if !t.micro_d.access(addr, page, context) {
                d.signals.set(Signal::DTlbMisses, 1);
                if t.main.access(addr, page, context) {
                    d.translation = m.0;
                } else {
                    d.signals.set(Signal::MainTlbMisses, 1);
                    d.translation = walk_levels(page) * m.1;
                }
            }
        }
        let line = self.dcache.config().line_of(addr);
        // §8: accesses to the line of the previous access are sequential and count once.
        let counted = line != self.data_line;
        self.data_line = line;
        // A preload is looked up like a load, and one that misses fills the line from
        // the bus (0xB): it is an access of 0x9 and 0xA too, which count "cache hits
        // plus cache misses" (§7; ERRATA MARM11).
        if counted {
            d.signals.set(Signal::DCacheAccesses, 1);
        }
        let in_tcm = self.cfg.dtcm.as_ref().is_some_and(|r| r.contains(&addr));
        if in_tcm {
            // §8: a TCM access is a cacheable access that never misses.
            if counted {
                d.signals.set(Signal::DCacheAccessesCacheable, 1);
            }
            if let Some(e) = self.faults.as_mut().and_then(|f| f.access(Part::Dtcm)) {
                d.signals.set(e, 1);
            }
            return d;
        }
        if stream.memory != Memory::Cacheable {
            // Looked up like every access, missed, and sent to the bus (§8, 0xB, 0x10).
            if counted {
                d.signals.set(Signal::DCacheMisses, 1);
            }
            d.signals.set(Signal::ExternalDataAccesses, 1);
            let memory = stream.memory == Memory::NonCacheable;
            if write {
                d.buffer(size);
                d.signals.set(Signal::MemoryWrites, u8::from(memory));
            } else {
                d.latency = if memory { self.cfg.memory_cycles } else { self.cfg.device_cycles };
                d.signals.set(Signal::MemoryReads, u8::from(memory));
            }
            return d;
        }
        if counted {
            d.signals.set(Signal::DCacheAccessesCacheable, 1);
        }
        if let Some(e) = self.faults.as_mut().and_then(|f| f.access(Part::DCache)) {
            d.signals.set(e, 1);
            // The faulty line is invalidated (its dirty halves written back first).
            if let Some(v) = self.dcache.invalidate(addr).filter(|v| v.dirty) {
                d.signals.set(Signal::DCacheWritebacks, v.halves).set(Signal::MemoryWrites, 1);
            }
        }
        // A read-modify-write reads first (allocating on a miss), then writes the line.
        let rmw = matches!(op, Op::Atomic(_) | Op::Modify(_));
        let lookup = self.dcache.access(addr, write && !rmw);
        if rmw && (lookup.hit || lookup.allocated) {
            self.dcache.access(addr, true);
        }
        // A store that covers its line's other half (an STM of the whole line) dirties
        // that half too: the cache keeps a dirty bit per half line.
        // (Lines are powers of two: a mask, where `%` divided on every access.)
        let line = self.cfg.dcache.line;
        let offset = addr & (line - 1);
        if write && (lookup.hit || lookup.allocated) && offset < line / 2 && offset + u64::from(size) > line / 2 {
            self.dcache.access(addr + line / 2, true);
        }
        if lookup.hit {
            return d;
        }
        if counted {
            d.signals.set(Signal::DCacheMisses, 1);
        }
        d.signals.set(Signal::ExternalDataAccesses, 1);
        if lookup.allocated {
            d.signals.set(Signal::MemoryReads, 1);
            d.latency = self.cfg.memory_cycles;
        } else {
            // No write allocation: the write goes out through the write buffer.
            d.buffer(size);
            d.signals.set(Signal::MemoryWrites, 1);
        }
        if let Some(v) = lookup.victim.filter(|v| v.dirty) {
            // 0xC counts the dirty half lines written back (one memory transaction),
            // which leave through the write buffer (MARM4).
            let writes = d.signals.get(Signal::MemoryWrites) as u8 + 1;
            d.signals.set(Signal::DCacheWritebacks, v.halves).set(Signal::MemoryWrites, writes);
            let half = (self.cfg.dcache.line / 2) as u8;
            d.buffer(v.halves * half);
        }
        d
    }

    /// A write joins the write buffer, `waited` cycles from now, waiting for a free
    /// entry when it is full (the LSU queue backs up: 0x11): returns the cycles it
    /// waits for one, or `buffer_full`, an earlier write's wait in the same access,
    /// when there is room. Each drains after the ones ahead of it.
    fn buffer_write(&mut self, waited: u64, buffer_full: u64, size: u8) -> u64 {
        let now = self.clock;
        let mut buffer_full = buffer_full;
        if self.write_buffer.len() >= self.cfg.write_buffer {
            buffer_full = self.write_buffer[0].saturating_sub(now + waited);
        }
        let start = waited + buffer_full;
        let ahead = self.drain();
        // A write drains in 64-bit beats.
        let beats = u64::from(size).div_ceil(8).max(1);
        let drained = ahead.max(start) + beats * self.cfg.write_cycles;
        self.write_buffer.push(now + drained);
        let held = self.write_buffer.iter().filter(|&&w| w > now + start).count();
        self.written.add(drained - start, buffer_full, held);
        buffer_full
    }
}

/// The page size an ARM11 MMU maps a program's mapping with: the largest of 4 KB,
/// 64 KB, 1 MB and 16 MB (supersection) that is not larger.
pub(super) fn arm_page(page: u64) -> u64 {
    [4 << 10, 64 << 10, 1 << 20, 16 << 20].into_iter().rev().find(|&s| s <= page).unwrap_or(4 << 10)
}

/// Levels of the page-table walk for a mapping: one for sections and supersections,
/// two for 4 KB and 64 KB pages.
pub(super) fn walk_levels(page: u64) -> u64 {
    if page >= 1 << 20 {
        1
    } else {
        2
    }
}

/// Whether a misaligned access of `op` at `addr` takes an alignment fault (MARM15):
/// with SCTLR.U set and A clear, as Linux runs ARMv6, LDR, STR and their halfword
/// forms are performed at any address in normal memory; doublewords and VFP transfers
/// need a word-aligned address, exclusive accesses and swaps an aligned one, and
/// device memory takes none misaligned (ARM DDI 0100I §A2.8, "Unaligned access
/// support").
fn alignment_fault(op: &Op, addr: u64, memory: Memory) -> bool {
    let size = op.access().map_or(0, |a| a.size);
    let word = !addr.is_multiple_of(4);
    matches!(op, Op::Atomic(_)) || memory == Memory::Device || ((size > 4 || matches!(op, Op::FpLoad(_))) && word)
}
