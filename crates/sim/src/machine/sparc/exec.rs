//! One SPARC instruction (or a pair, on the dual-issue T4): fetch through the
//! instruction side, execute through the predictors and the data side (`access.rs`),
//! and the cycles and signals that result. Instruction classes follow TABLE 10-2 and its footnotes
//! (sparc-t4 spec §10.2): which instructions are branches, loads, stores, SPR ring
//! ops, atomics, prefetches, block transfers and next-to-commit.

use super::memory::source;
use super::walk::{code_page, context, Side};
use super::Sparc;
use super::{Out, Signals, Span};
use crate::program::{FpOp, Op, Phase, INSN};
use crate::stream::{Branch, Signal};

/// An instruction that needs nothing but an issue slot, and so can pair with another.
fn simple(op: &Op, cfg: &super::SparcConfig) -> bool {
    match op {
        Op::Int => true,
        Op::Fp(FpOp::Add | FpOp::Mul | FpOp::Fma | FpOp::Convert | FpOp::ToInt) => cfg.fp_cycles == 1,
        _ => false,
    }
}

impl Sparc {
    /// Executes instruction `i` of the body (with the next, when both are simple and the
    /// core issues two); returns how many instructions it consumed, skipped ones
    /// included.
    pub(super) fn execute(&mut self, phase: &Phase, k: u64, i: usize, out: &mut Out) -> usize {
        let op = &phase.body[i];
        let ip = self.s.ip;
        self.fetch(phase, out);
        self.s.ip = ip.wrapping_add(INSN);
        match *op {
            Op::Int | Op::Fp(_) => {
                let next = phase
                    .body
                    .get(i + 1)
                    .filter(|n| phase.addresses.is_empty() && self.cfg.issue_width > 1 && simple(op, &self.cfg) && simple(n, &self.cfg));
                let fp = u8::from(matches!(op, Op::Fp(_))) + u8::from(matches!(next, Some(Op::Fp(_))));
                let issued = 1 + u8::from(next.is_some());
                if next.is_some() {
                    // The second of the pair must be fetched too (it may start a line).
                    self.fetch(phase, out);
                    self.s.ip += INSN;
                }
                self.plain(out, ip, Signals::default().with(Signal::FguCryptoInstructions, fp), issued);
                if let Op::Fp(f) = *op {
                    let busy = self.cfg.fp_cycles - 1 + if matches!(f, FpOp::Div | FpOp::Sqrt) { self.cfg.fp_divide_cycles } else { 0 };
                    self.wait(out, ip, busy, Some(Signal::DataDepStallCycles));
                }
                // Subnormal results (MSP28): what the FGU takes beyond its normal latency,
                // nothing by default, so the common case looks at no operand.
                if self.cfg.subnormal_cycles > 0 && !phase.fp.flush {
                    let tiny = [Some(op), next]
                        .into_iter()
                        .flatten()
                        .filter(|o| matches!(o, Op::Fp(f) if phase.fp.tiny(*f, k, phase.iterations)))
                        .count() as u64;
                    if tiny > 0 {
                        self.wait(out, ip, tiny * self.cfg.subnormal_cycles, None);
                    }
                }
                return usize::from(issued);
            }
            // A spin loop's delay on SPARC is an ordinary instruction (no switch hint),
            // and so is a nop (SPARC code carries none the compiler did not mean).
            Op::Pause | Op::Nop => {
                self.plain(out, ip, Signals::default(), 1);
            }
            Op::SpecialReg => {
                // WRASR/WRPR and ASI register accesses: SPR ring ops, next to commit
                // (TABLE 10-1 footnote 1, TABLE 10-2 footnote 8).
                let s = Signals::default().with(Signal::SprRingOps, 1).with(Signal::NextToCommit, 1);
                self.plain(out, ip, s, 1);
            }
            Op::Barrier => {
                // MEMBAR #Sync counts as a store (footnote 7) and waits for the store
                // buffer to drain.
                let drain = self.s.drained(self.s.at);
                self.plain(out, ip, Signals::default().with(Signal::Stores, 1), 1);
                self.wait(out, ip, drain, None);
            }
            Op::FlushCode(a) => {
                // FLUSH: the L2's directory keeps the I-cache coherent with stores, so
                // the line's stale copy goes; the pipeline refetches after it, like a
                // trap's.
                let addr = phase.streams[usize::from(a.stream)].position(k) + u64::from(a.offset);
                self.mem.icache.invalidate(addr);
                if self.cfg.icache.line_of(addr) == self.s.fetch_line {
                    self.s.fetch_line = u64::MAX;
                }
                self.plain(out, ip, Signals::default(), 1);
                self.wait(out, ip, self.cfg.trap_cycles, None);
            }
            Op::Halt => {
                // The idle loop's sun4v CPU_YIELD (a fast trap to the hypervisor, in
                // the Hypervisor API specification): the strand executes nothing
                // until an interrupt.
                self.plain(out, ip, Signals::default(), 1);
                self.wait(out, ip, self.cfg.trap_cycles, None);
                let idle = self.wake.map_or(0, |w| w.saturating_sub(out.elapsed()));
                self.wait(out, ip, idle, Some(Signal::HaltedCycles));
            }
            Op::Syscall | Op::ExceptionReturn => {
                // Tcc, DONE and RETRY: "other" instructions (footnote 9), not branches.
                self.plain(out, ip, Signals::default(), 1);
                self.wait(out, ip, self.cfg.trap_cycles, None);
            }
            Op::Load(a) | Op::Store(a) | Op::Atomic(a) | Op::Modify(a) | Op::Prefetch(a) | Op::BlockLoad(a) | Op::BlockStore(a) => {
                self.memory(phase, k, op, a, ip, out);
            }
            // LDF/LDDF go through the L1 data cache like integer loads.
            Op::FpLoad(a) => self.memory(phase, k, &Op::Load(a), a, ip, out),
            Op::Jump { table, via } => {
                let target = phase.tables[usize::from(table)].target(k);
                if let Some(a) = via {
                    self.memory(phase, k, &Op::Load(a), a, ip, out);
                }
                self.control(out, ip, Control::Indirect, true, target);
            }
            Op::Branch { target, when } => {
                let taken = when.taken(k, phase.iterations);
                self.control(out, ip, Control::Conditional, taken, target);
            }
            Op::Skip { over, when } => {
                let taken = when.taken(k, phase.iterations);
                self.control(out, ip, Control::Conditional, taken, ip.wrapping_add(INSN * (u64::from(over) + 1)));
                return 1 + if taken { usize::from(over) } else { 0 };
            }
            Op::Call { target, .. } => {
                if let Some(r) = &mut self.s.return_stack {
                    r.push(ip.wrapping_add(2 * INSN));
                }
                self.control(out, ip, Control::Call, true, target);
            }
            Op::Return { to } => self.control(out, ip, Control::Return, true, to),
        }
        1
    }

    /// Issue cycle(s) of instructions, as a span of its own to attach a data reference
    /// or a branch outcome to.
    pub(super) fn issue<'o>(&mut self, out: &'o mut Out, ip: u64, s: Signals, issued: u8) -> &'o mut Span {
        self.admit(out, ip, issued);
        let span = out.issue(ip, s, issued);
        span.queues = self.mem.take_queues();
        span
    }

    /// Issue cycle(s) of instructions that carry no data reference or branch outcome:
    /// merged with the cycles before them when those count the same, as ARM11's are,
    /// unless memory transactions went out in them (their queues are the cycle's own).
    /// Half of a program's instructions are such, and a span each was most of what
    /// counting them cost.
    fn plain(&mut self, out: &mut Out, ip: u64, s: Signals, issued: u8) {
        self.admit(out, ip, issued);
        let queues = self.mem.take_queues();
        if queues.is_empty() {
            out.emit(ip, 1, s.with(Signal::Instructions, issued));
        } else {
            out.issue(ip, s, issued).queues = queues;
        }
    }

    /// What issuing `issued` instructions waits for and takes: room in the reorder
    /// buffer, then the issue cycle. Inlined: with no miss outstanding the reorder
    /// buffer has room and nothing to record, and the call was half of what was left.
    #[inline(always)]
    fn admit(&mut self, out: &mut Out, ip: u64, issued: u8) {
        if !self.s.misses().is_empty() {
            self.reorder(out, ip, issued);
        }
        self.s.issued += u64::from(issued);
        self.elapse(1);
    }

    /// Issue behind outstanding misses: it waits for room in the reorder buffer, and
    /// its entries are held until the oldest miss is back.
    #[inline(never)]
    fn reorder(&mut self, out: &mut Out, ip: u64, issued: u8) {
        if let Some(rob) = self.cfg.reorder_buffer {
            let issuing = u64::from(issued);
            // The reorder buffer has no room behind the oldest outstanding miss: issue
            // waits for that miss's data (TABLE 10-2 sl 9 mask 02), which frees what
            // issued before the next oldest.
            while self.s.reordered() + issuing >= rob {
                let Some(oldest) = self.s.misses().first().map(|m| m.left(self.s.at)) else { break };
                self.wait(out, ip, oldest, Some(Signal::RobWaitCycles));
                self.s.reorder.waited += oldest;
            }
            if !self.s.misses().is_empty() {
                // Entries taken behind a miss, the miss's own among them; how long they
                // are held is integrated as the misses return (`Strand::elapse`).
                self.s.reorder.requests += issuing;
                self.s.reorder.most = self.s.reorder.most.max((self.s.reordered() + issuing + 1) as usize);
            }
        }
    }

    /// A cycle in which nothing issues but memory transactions go out (an I-cache or
    /// TLB miss): a span of its own, carrying what they met in the memory controllers.
    pub(super) fn carry(&mut self, out: &mut Out, ip: u64, s: Signals) {
        self.elapse(1);
        out.issue(ip, s, 0).queues = self.mem.take_queues();
    }

    /// A load miss that nothing waits for stays outstanding (out-of-order cores): it
    /// takes a load-buffer entry, waiting for one when all are taken (sl 9 mask 04).
    /// Its `latency` is past the load-use cycles, so never 0.
    pub(super) fn outstanding(&mut self, out: &mut Out, ip: u64, latency: u64) {
        let Some(entries) = self.cfg.load_buffer else { return };
        if self.s.misses().len() >= entries {
            let oldest = self.s.misses().iter().map(|m| m.left(self.s.at)).min().unwrap_or(0);
            self.wait(out, ip, oldest, Some(Signal::LoadBufferWaitCycles));
            self.s.loads.waited += oldest;
        }
        debug_assert!(latency > 0, "a miss that is back at once is not outstanding");
        self.s.miss(latency);
        self.s.loads.add(latency, 0, self.s.misses().len());
    }

    /// Cycles in which the strand issues nothing, counting `stall`; a data stall
    /// longer than the front end needs to fill the instruction buffer leaves it full.
    pub(super) fn wait(&mut self, out: &mut Out, ip: u64, cycles: u64, stall: Option<Signal>) {
        self.elapse(cycles);
        if stall == Some(Signal::DataDepStallCycles) && cycles > IB_FILL_CYCLES {
            out.stall(ip, IB_FILL_CYCLES, stall);
            let s = Signals::default().with(Signal::DataDepStallCycles, 1).with(Signal::IBufFullCycles, 1);
            out.emit(ip, cycles - IB_FILL_CYCLES, s);
        } else {
            out.stall(ip, cycles, stall);
        }
    }

    /// `cycles` cycles in which nothing issues, each counting `per_cycle`.
    pub(super) fn stall_with(&mut self, out: &mut Out, ip: u64, cycles: u64, per_cycle: Signals) {
        self.elapse(cycles);
        if cycles > 0 {
            out.emit(ip, cycles, per_cycle);
        }
    }

    /// Time passes: the memory system's, and the running strand's buffered stores
    /// are written and its load misses return.
    pub(super) fn elapse(&mut self, cycles: u64) {
        self.mem.elapse(cycles);
        self.now += cycles;
        self.s.elapse(cycles);
    }

    /// A branch, call, return or indirect jump: predicted, counted, and the cycles a
    /// wrong prediction or a target the BTC lacked costs.
    fn control(&mut self, out: &mut Out, ip: u64, kind: Control, taken: bool, target: u64) {
        let mut s = Signals::default().with(Signal::Branches, 1);
        let mispredicted = match kind {
            Control::Conditional => {
                let predicted = self.direction.as_ref().is_some_and(|d| d.predict(ip));
                if let Some(d) = &mut self.direction {
                    d.update(ip, taken);
                }
                predicted != taken
            }
            Control::Call => self.direction.is_none(),
            Control::Return => {
                s.set(Signal::Returns, 1);
                match self.s.return_stack.as_mut().map(|r| r.pop()) {
                    None => true,
                    Some(predicted) => {
                        s.set(Signal::ReturnsPredicted, u8::from(predicted.is_some()));
                        let wrong = predicted != Some(target);
                        s.set(Signal::ReturnsMispredicted, u8::from(wrong));
                        wrong
                    }
                }
            }
            Control::Indirect => match self.indirect.as_mut() {
                None => true,
                Some(t) => {
                    let wrong = t.resolve(ip, true, target).map(|e| e.target) != Some(target);
                    s.set(Signal::IndirectMispredicts, u8::from(wrong));
                    wrong
                }
            },
        };
        if taken {
            s.set(Signal::BranchesTaken, 1).set(Signal::PcChanges, 1);
        }
        // The BTC supplies taken targets at fetch (TABLE 10-2 sl 5 mask 08, sl 8 mask 08).
        let mut bubble = 0;
        if let Some(btc) = self.btc.as_mut().filter(|_| taken) {
            match btc.resolve(ip, true, target) {
                None => {
                    s.set(Signal::BtcMisses, 1);
                    bubble = self.cfg.btc_miss_cycles;
                }
                Some(e) if e.target != target => {
                    s.set(Signal::BtcTargetIncorrect, 1);
                    bubble = self.cfg.btc_miss_cycles;
                }
                Some(_) => {}
            }
        }
        if mispredicted {
            s.set(Signal::BranchMispredicts, 1);
        }
        self.issue(out, ip, s, 1).branch = Some(Branch { target, taken, mispredicted });
        self.s.ip = if taken { target } else { ip.wrapping_add(INSN) };
        if mispredicted {
            // Correct-path instructions wait at select for the branch to commit
            // (TABLE 10-2 sl 1 mask 01, footnote 10).
            self.wait(out, ip, self.cfg.mispredict_cycles, Some(Signal::SelPipeDrainCycles));
        } else if bubble > 0 {
            self.wait(out, ip, bubble, Some(Signal::NoFetchCycles));
        }
    }

    /// The instruction side: a fetch from a new line looks up the ITLB and the I-cache.
    /// Inlined, as most fetches are from the line before: the call alone, saving and
    /// restoring six registers to return at once, was a fifth of its time.
    #[inline(always)]
    fn fetch(&mut self, phase: &Phase, out: &mut Out) {
        let line = self.cfg.icache.line_of(self.s.ip);
        if line != self.s.fetch_line {
            self.fetch_line(phase, out, line);
        }
    }

    /// A fetch from a new line.
    #[inline(never)]
    fn fetch_line(&mut self, phase: &Phase, out: &mut Out, line: u64) {
        let ip = self.s.ip;
        self.s.fetch_line = line;
        let class = self.cfg.size_class(code_page(phase));
        let page = self.cfg.page_sizes[class];
        if !self.tr.itlb.access(ip, page, context(phase)) {
            // A process's text on base pages is mapped as it first runs (demand
            // paging: the first fetch of each page in its address space finds no TTE
            // in the TSB and traps, MSP21); large pages are mapped with the text, and
            // the kernel's text from boot.
            let first_touch = class == 0 && phase.privilege.is_user() && self.mapped_code.insert((context(phase), ip & !(page - 1)));
            self.walk(out, ip, class, context(phase), first_touch, Side::Instruction);
        }
        if phase.uncached_code {
            // No cache holds the code (MSP31): the fetch reads its line from memory,
            // as an uncached load does, and nothing is filled.
            let waited = self.mem.uncached(ip, false);
            self.carry(out, ip, Signals::default().with(Signal::MemoryReads, 1).with(Signal::NoFetchCycles, 1));
            self.wait(out, ip, self.cfg.memory_cycles + waited - 1, Some(Signal::NoFetchCycles));
            return;
        }
        let microtag = self.microtag(ip);
        if self.mem.icache.access(ip, false).hit {
            if microtag == Some(Signal::MicrotagWayMismatches) {
                // The predicted way was wrong: the fetch is redone from the right one.
                out.emit(ip, 1, Signals::default().with(Signal::MicrotagWayMismatches, 1).with(Signal::NoFetchCycles, 1));
                self.elapse(1);
            }
            return;
        }
        let mut s = Signals::default().with(Signal::ICacheMisses, 1);
        if let Some(m) = microtag {
            s.set(m, 1);
        }
        let reach = self.mem.access(ip, false, self.code_remote(phase, ip), &mut s);
        s.set(source(reach.level, [Signal::ICacheFillsFromCache, Signal::ICacheFillsFromLocalMemory, Signal::ICacheFillsFromRemote]), 1);
        self.carry(out, ip, s.with(Signal::NoFetchCycles, 1));
        self.wait(out, ip, self.mem.latency(reach) - 1, Some(Signal::NoFetchCycles));
    }

    /// The I-cache's way prediction for a fetch at `ip`, before the lookup: each way
    /// keeps a microtag, eight bits hashed from its line's address above the set index
    /// (ERRATA MSP12); the most recent way whose microtag matches is read. Returns
    /// what went wrong, if anything (TABLE 10-2 sl 7).
    fn microtag(&self, ip: u64) -> Option<Signal> {
        let icache = &self.mem.icache;
        let hash = |a: u64| {
            let tag = icache.tag(a);
            (tag ^ (tag >> 8) ^ (tag >> 16)) & 0xff
        };
        let line = self.cfg.icache.line_of(ip);
        let (mut present, mut predicted) = (None, None);
        for (way, l) in self.mem.icache.set_lines(ip).enumerate() {
            if l == Some(line) {
                present = Some(way);
            }
            if predicted.is_none() && l.is_some_and(|l| hash(l) == hash(line)) {
                predicted = Some(way);
            }
        }
        match (predicted, present) {
            (None, _) => Some(Signal::MicrotagMisses),
            (Some(_), None) => Some(Signal::MicrotagFalseHits),
            (Some(p), Some(q)) if p != q => Some(Signal::MicrotagWayMismatches),
            _ => None,
        }
    }
}

/// The kinds of control transfer, as the predictors treat them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Control {
    Conditional,
    Call,
    Return,
    Indirect,
}

/// Cycles the front end needs to fill the instruction buffer behind a stalled strand
/// (ERRATA MSP6).
const IB_FILL_CYCLES: u64 = 2;
