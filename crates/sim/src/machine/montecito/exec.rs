//! Montecito instruction execution: issue groups of up to six instructions (two
//! bundles, §2.3.1), at most two loads and two stores among them (§2.1); a taken
//! branch or a load whose value the next instruction needs ends its group.

use super::branch::is_wrong;
use super::fpu::Field;
use super::group::{address_space, bundle_address, fe_stall, slot, Group, Port};
use super::levels::{translated, Side};
use super::renamer;
use super::speculation;
use super::Montecito;
use super::{Out, Signals};
use crate::program::{ia64, Memory, Op, Pattern, Phase, INSN};
use crate::stream::{FetchMiss, L1dConflict, Privilege, Signal, UNCACHED_DEMAND};
use pmukit_arch::montecito::ear::Served;

/// Bytes of uncacheable code a fetch reads: a bundle pair, what the L1I delivers a
/// cycle (§4.15 L1I_READS: "32-byte chunks"; ERRATA MMC57).
const UNCACHED_FETCH: u64 = 32;

/// Whether the fence at `i` orders the store right after it to cacheable memory: a
/// release store.
fn releases(phase: &Phase, i: usize) -> bool {
    // The layout may put nops between the fence and the store (`ia64::bundled`).
    match phase.body[i + 1..].iter().find(|op| **op != Op::Nop) {
        Some(Op::Store(a)) => phase.streams[usize::from(a.stream)].memory == Memory::Cacheable,
        _ => false,
    }
}

/// Whether the load at `i` is an acquire: a fence right after it that is no store's
/// release orders the thread's later accesses after it, which the compiler gives the
/// load (`ld.acq`) rather than emit an `mf` (MMC48).
fn acquires(phase: &Phase, i: usize) -> bool {
    let Some(Op::Load(a)) = phase.body.get(i) else { return false };
    let next = phase.body[i + 1..].iter().position(|op| *op != Op::Nop).map(|n| i + 1 + n);
    phase.streams[usize::from(a.stream)].memory == Memory::Cacheable
        && next.is_some_and(|j| phase.body[j] == Op::Barrier && !releases(phase, j))
}

/// Whether the fence at `i` is the acquire of the load before it ([`acquires`]).
fn acquired(phase: &Phase, i: usize) -> bool {
    phase.body[..i].iter().rposition(|op| *op != Op::Nop).is_some_and(|j| acquires(phase, j))
}

/// Whether the skip at `i` jumps to a return, past `over` instructions: `if (c) { ... }
/// return;`, which an Itanium compiler turns into a return predicated on `c` ahead of
/// the skipped code (the return duplicated into the branch's target, MMC40). The
/// return's address and its place in the body, after the nops before it in its
/// bundle (the layout's, MMC79).
fn returns_early(phase: &Phase, i: usize, over: u8) -> Option<(u64, usize)> {
    let land = i + usize::from(over) + 1;
    let at = phase.body.get(land..)?.iter().position(|op| *op != Op::Nop)? + land;
    match phase.body[at] {
        Op::Return { to } => Some((to, at)),
        _ => None,
    }
}

/// The indirect jump the skip at `i` passes over, alone but for the layout's nops:
/// `if (c) goto *table[x]`, a switch's range check, which an Itanium compiler emits as
/// the jump predicated on the check (`(p) br.cond b6`, MMC41).
fn guarded_jump(phase: &Phase, i: usize, over: u8) -> Option<Op> {
    let skipped = phase.body.get(i + 1..=i + usize::from(over))?;
    let mut jumps = skipped.iter().filter(|op| **op != Op::Nop);
    match (jumps.next(), jumps.next()) {
        (Some(&jump @ Op::Jump { .. }), None) => Some(jump),
        _ => None,
    }
}

impl Montecito {
    /// The stalls of an interruption's entry or exit sequence (MMC39), in order: each
    /// so many cycles counting its signal, nothing issuing.
    fn switch_stacks(&self, out: &mut Out, ip: u64, steps: &[(u64, Signal)]) {
        for &(cycles, signal) in steps {
            self.be_stall(out, ip, 0, cycles, Signals::default().with(signal, 1));
        }
    }

    /// One iteration of `phase`.
    pub(super) fn run(&mut self, phase: &Phase, k: u64, out: &mut Out) {
        let mut g = Group::default();
        self.alat.begin();
        self.hoisted.clear();
        let change = std::mem::take(&mut self.privilege_change);
        if change != 0 {
            // The phase runs at another level than the thread's last one (a system
            // call, an interrupt, a return from one): CPU_CPL_CHANGES.
            g.signals.set(Signal::PrivilegeChange, change);
        }
        if k == 0 {
            self.presage_loop(phase, out);
        }
        // What the phase's code is, for its thread: at its start, and when it goes on
        // after another phase ran there (a tick's handler).
        let key = (phase.entry, phase.body.len());
        if k == 0 || self.code.get(self.thread).is_some_and(|c| (c.0, c.1) != key) {
            if let Some(rooms) = self.rooms.get_mut(self.thread) {
                super::brq::room(phase, self.cfg.brq_entries, rooms, &mut self.bundles);
            }
            if let Some(code) = self.code.get_mut(self.thread) {
                *code = (key.0, key.1, ia64::modulo_scheduled(&phase.body));
            }
        }
        self.at = 0;
        let mut i = 0;
        while i < phase.body.len() {
            if let Some(&ip) = phase.addresses.get(i) {
                self.ip = ip;
            }
            i += self.execute(phase, k, i, &mut g, out);
            // A switch an instruction fetch decided.
            self.note_decision(&g, out);
        }
        self.close(&mut g, out);
    }

    /// The first switch decision of the iteration (an L3 miss or a hint): the cycles
    /// since the thread last retired an instruction. A group still forming issues in
    /// the decision's cycle (MD44).
    pub(super) fn note_decision(&mut self, g: &Group, out: &Out) {
        if self.switch && self.decided.is_none() {
            let quiet = match out.since_retired() {
                _ if g.issued > 0 => 0,
                Some(cycles) => cycles,
                None => self.quiet[self.thread] + out.elapsed(),
            };
            self.decided = Some(quiet);
        }
    }

    /// Issues the group formed so far, in one cycle. A group with no instruction yet
    /// keeps what it counted (a fetch's lookups, a privilege change) for the group
    /// that forms after the stall.
    pub(super) fn close(&mut self, g: &mut Group, out: &mut Out) {
        if g.issued > 0 {
            self.progressed = true;
            let now = self.now(out);
            self.stream_step(now, &mut g.signals);
            if g.start > 0 {
                let lead = if g.resteered { Signal::ResteerSyllables } else { Signal::LeadingSyllables };
                g.signals.set(lead, g.start);
                if !g.resteered && g.after_explicit {
                    g.signals.set(Signal::LeadingExplicit, 1);
                }
            }
            let explicit = g.signals.get(Signal::ExplicitStops) > 0;
            let span = out.issue(g.ip, g.signals, g.issued);
            span.mem = g.mem;
            span.detail = g.detail;
            span.branch = g.branch;
            *g = Group { after_explicit: explicit, ..Group::default() };
        }
    }

    /// Issues the group first when it has no room for one more instruction at `ip`,
    /// which takes `port`: its window is full, the instruction is past the bundle of
    /// a branch it holds, or it would take a third load or store port (MMC1). The last
    /// two are implicit stops (SYLL_NOT_DISPERSED.IMPL, MMC64).
    pub(super) fn make_room(&mut self, g: &mut Group, out: &mut Out, ip: u64, port: Port) {
        let ports = self.cfg.memory_ports;
        let oversubscribed = match port {
            Port::None => false,
            Port::Load => g.loads == ports,
            Port::Store => g.stores == ports,
        };
        let split = g.split.is_some_and(|b| b != bundle_address(ip));
        if oversubscribed || split {
            g.signals.bump(Signal::ImplicitStops);
            self.close(g, out);
        } else if g.issued + g.start >= self.cfg.issue_width {
            self.close(g, out);
        }
    }

    /// Adds an instruction to the group, closing it first when it is full.
    pub(super) fn join(&mut self, g: &mut Group, out: &mut Out, ip: u64, port: Port) {
        self.make_room(g, out, ip, port);
        if g.issued == 0 {
            g.ip = ip;
            g.start = slot(ip) as u8;
        }
        g.issued += 1;
        g.loads += u8::from(port == Port::Load);
        g.stores += u8::from(port == Port::Store);
    }

    /// A counted loop's back edge (`br.cloop`) in its first iteration: the front end's
    /// perfect-loop prediction reads the loop count (ar.lc), which the `mov ar.lc` at
    /// the loop's entry writes once it has gone down the pipeline from fetch to
    /// execution (`mispredict_cycles`) and `lc_cycles` more (Table 2-8 note 5); the
    /// branch's fetch waits for it (FE_LOST_BW.PLP, MMC43).
    fn wait_for_loop_count(&mut self, g: &mut Group, out: &mut Out, ip: u64) {
        // The branch would issue in the iteration's cycle `out.elapsed()`, with the
        // open group; too soon, the group issues without it and the front end waits.
        let known = self.cfg.mispredict_cycles + self.cfg.lc_cycles;
        if out.elapsed() < known {
            self.close(g, out);
            let wait = known.saturating_sub(out.elapsed());
            fe_stall(out, ip, wait, Signals::default(), Signal::LoopCountStallCycles);
        }
    }

    /// A counted loop's entry, before its first iteration: the compiler puts a
    /// `brp.loop.imp` for the loop's back edge there (Open64's `Enable_BRP`, Intel's
    /// and OpenSSL's hand-written loops: "Put loop backedge target in TAR"), and the
    /// front end writes the branch's target into its zero-bubble predictor, taking
    /// `branch_init_cycles` in which it fetches nothing (FE_LOST_BW.BI; MMC65, an
    /// assumption). The entry is written when the back edge is first predicted
    /// (in its first iteration): the body's address is known only as it runs.
    fn presage_loop(&mut self, phase: &Phase, out: &mut Out) {
        if phase.body.iter().any(|op| matches!(op, Op::Branch { when: Pattern::Loop, .. })) {
            fe_stall(out, phase.entry, self.cfg.branch_init_cycles, Signals::default(), Signal::BranchInitCycles);
        }
    }

    /// A return of a function that has called others: its epilogue restores the
    /// return link (`mov b0 = r`, the register its prologue saved b0 in) right before
    /// the `br.ret`, and the front end waits `br_interlock_cycles` for the branch
    /// register (FE_LOST_BW.BR_ILOCK; MMC45, an assumption).
    fn wait_for_link(&mut self, g: &mut Group, out: &mut Out, ip: u64) {
        if self.rse[self.thread].restores_link() && self.cfg.br_interlock_cycles > 0 {
            self.close(g, out);
            fe_stall(out, ip, self.cfg.br_interlock_cycles, Signals::default(), Signal::BranchInterlockCycles);
        }
    }

    /// Cycles in which nothing issues, after the group so far, which ends at an
    /// architected stop (its last instruction's consumer follows): a back-end stall
    /// counting `stall`.
    pub(super) fn wait(&mut self, g: &mut Group, out: &mut Out, cycles: u64, stall: Signal) {
        g.signals.bump(Signal::ExplicitStops);
        self.close(g, out);
        self.be_stall(out, self.ip, 0, cycles, Signals::default().with(stall, 1));
    }

    /// Executes instruction `i`; returns how many instructions it consumed (a taken
    /// skip passes over the ones it skips).
    fn execute(&mut self, phase: &Phase, k: u64, i: usize, g: &mut Group, out: &mut Out) -> usize {
        let op = phase.body[i];
        let ip = self.ip;
        self.at = i;
        self.fetch(phase, ip, g, out);
        self.ip = ip.wrapping_add(INSN);
        if !self.hoisted.is_empty() && self.check(phase, k, i, ip, g, out) {
            // A load hoisted above its skip (MMC42): its `chk.s` is here.
            return 1;
        }
        match op {
            Op::Int => {
                self.join(g, out, ip, Port::None);
                if self.squashing > 0 {
                    // Issued and retired with a false predicate (MMC32).
                    self.squashing -= 1;
                    g.signals.bump(Signal::PredicatedOff);
                }
            }
            Op::Nop => {
                // A bundle's empty slot: dispersed and retired like any instruction
                // (IA64_INST_RETIRED counts it, §4.2); one in an if-converted block
                // is predicated off, which NOPS_RETIRED leaves out.
                self.join(g, out, ip, Port::None);
                if self.squashing > 0 {
                    self.squashing -= 1;
                    g.signals.bump(Signal::PredicatedOff);
                } else {
                    g.signals.bump(Signal::Nops);
                }
            }
            Op::Halt => {
                // The idle loop's call of PAL_HALT_LIGHT: the thread halts until an
                // interrupt, event monitoring frozen (§3.3.12). With the other thread
                // awake the core switches to it at the end of the iteration (a
                // low-power switch); otherwise the core halts (CPU_OP_CYCLES_HALTED).
                self.join(g, out, ip, Port::None);
                self.close(g, out);
                if let Some(wake) = self.wake {
                    self.halted[self.thread] = true;
                    if self.may_switch && self.other_awake() {
                        self.switch = true;
                        self.low_power = true;
                        self.note_decision(g, out);
                    } else {
                        let idle = wake.saturating_sub(self.now(out));
                        out.stall(ip, idle, Some(Signal::HaltedCycles));
                    }
                }
            }
            Op::Pause => {
                // hint@pause: the thread gives the core to the other thread, after its
                // issue group retires (§2.4.1.2), at the end of the iteration (MMC12).
                if self.may_switch && self.other_awake() {
                    self.switch = true;
                    self.hinted = true;
                    self.note_decision(g, out);
                }
                self.join(g, out, ip, Port::None);
            }
            Op::SpecialReg => {
                // A control-register move (the kernel saving or setting processor
                // state): its consumer follows, after a stop (MMC20). In the kernel it
                // sets the processor status, which an srlz.i makes take effect
                // (SERIALIZATION_EVENTS, MMC31), as part of the interruption's entry:
                // the register stack moves to the kernel's backing store and the
                // general registers to bank 1 (MMC39).
                self.join(g, out, ip, Port::None);
                let kernel = !phase.privilege.is_user();
                if kernel {
                    // The entry saves ar.unat, which holds the NaT bits of the
                    // registers it spilled, once the last spill has written its bit
                    // (Linux's pt_regs.eml_unat; MMC68).
                    let spilled = self.l1d_pipe.storing_any(self.now(out));
                    self.l1d_conflict(spilled, L1dConflict::ArCr, ip, g, out);
                    g.signals.bump(Signal::InstructionSerializations);
                }
                self.wait(g, out, self.cfg.cr_cycles - 1, Signal::ArCrStallCycles);
                if kernel {
                    self.switch_stacks(out, ip, &[(self.cfg.cr_cycles, Signal::RseArDepStallCycles), (1, Signal::BankSwitchStallCycles)]);
                }
            }
            Op::Fp(f) => self.fp_operation(phase, k, f, Field::Sf0, ip, g, out),
            Op::Barrier if releases(phase, i) => {
                // A fence before a store to cacheable memory (releasing a lock) is
                // that store's release semantics: the compiler emits `st.rel` and no
                // `mf` (MMC38).
                self.release = true;
            }
            Op::Barrier if acquired(phase, i) => {}
            Op::Barrier => {
                // A fence drains the write-coalescing buffers (MMC22).
                self.join(g, out, ip, Port::None);
                let mut sent = Vec::new();
                self.wcb.drain(&mut sent);
                let now = self.now(out);
                let buffered = self.bus_writes(&sent, now);
                self.close(g, out);
                self.write_wait(now, buffered, ip, g, out);
            }
            Op::FlushCode(a) => {
                // fc: the line leaves every cache of the coherence domain, a modified
                // copy written back, by a BIL on the bus, whose snoop reaches this
                // core's L1I (L1I_SNOOP: "each fc instruction will produce 1 snoop
                // request to L1I after it goes out on the bus") and its L2I (MMC35).
                self.join(g, out, ip, Port::Load);
                let addr = phase.streams[usize::from(a.stream)].position(k) + u64::from(a.offset);
                let now = self.now(out);
                let shared = phase.streams[usize::from(a.stream)].shared;
                self.flush_line(self.cfg.l3.line_of(addr), shared, now, &mut g.signals);
                self.sync_code(ip, g, out);
            }
            Op::Syscall => {
                self.join(g, out, ip, Port::None);
                self.close(g, out);
                out.stall(ip, self.cfg.trap_cycles, Some(Signal::ExceptionFlushCycles));
            }
            Op::ExceptionReturn => {
                // Leaving the kernel (MMC39): `loadrs`, the user's backing store back
                // in ar.bspstore, bank 0, then `rfi`.
                self.join(g, out, ip, Port::None);
                self.close(g, out);
                let exit = [
                    (1, Signal::RseLoadrsStallCycles),
                    (self.cfg.cr_cycles, Signal::RseArDepStallCycles),
                    (1, Signal::RseBankSwitchStallCycles),
                ];
                self.switch_stacks(out, ip, &exit);
                if phase.privilege == Privilege::KERNEL {
                    // The kernel's `rfi`, a privileged instruction (MMC77).
                    self.hypervisor(phase, ip, g, out);
                }
                out.stall(ip, self.cfg.trap_cycles, Some(Signal::ExceptionFlushCycles));
            }
            // FP loads are served by the L2D, not the L1D (`memory`, MMC27).
            Op::Load(a)
            | Op::FpLoad(a)
            | Op::Store(a)
            | Op::Atomic(a)
            | Op::Modify(a)
            | Op::Prefetch(a)
            | Op::BlockLoad(a)
            | Op::BlockStore(a) => {
                self.acquiring = acquires(phase, i);
                self.memory(phase, k, &op, a, ip, g, out);
            }
            Op::Jump { table, via } => {
                let target = phase.tables[usize::from(table)].target(k);
                if let Some(a) = via {
                    self.memory(phase, k, &Op::Load(a), a, ip, g, out);
                }
                let predicted = self.indirect.resolve(ip, true, target).map(|e| e.target);
                let s = Signals::default().with(Signal::IndirectBranches, 1);
                match self.forced_taken(ip) {
                    Some(forced) => self.branch(g, out, ip, s.union(forced), true, true, target),
                    None => {
                        let wrong = predicted != Some(target);
                        self.branch(g, out, ip, s.with(Signal::IndirectMispredicts, u8::from(wrong)), true, wrong, target);
                    }
                }
            }
            Op::Branch { target, when } => {
                if when == Pattern::Loop && k == 0 {
                    self.wait_for_loop_count(g, out, ip);
                    // The `brp.loop.imp` at the loop's entry gave the zero-bubble
                    // predictor its target (MMC65).
                    self.zero_bubble.resolve(ip, true, target);
                }
                let taken = when.taken(k, phase.iterations);
                let mut s = self.predict_path(ip, taken);
                if when == Pattern::Loop && self.code.get(self.thread).is_some_and(|c| c.2) {
                    // br.ctop (MMC81): a counted pass or the last, rotating (MD61).
                    let wrong = self.renamer.resolve(ip, renamer::loop_pass(taken), is_wrong(s));
                    s.set(Signal::BackEndMispredicts, wrong);
                }
                self.branch(g, out, ip, s, taken, is_wrong(s), target);
            }
            Op::Skip { over, when } if ia64::if_converted(&phase.body, i, over, when) => {
                // The compiler's if-conversion (MMC32): a compare sets the predicate,
                // and the instructions it guards issue either way, squashed when the
                // condition says to skip them.
                self.join(g, out, ip, Port::None);
                if when.taken(k, phase.iterations) {
                    self.squashing = over;
                }
            }
            Op::Skip { over, when } => {
                let taken = when.taken(k, phase.iterations);
                if let Some((to, at)) = returns_early(phase, i, over) {
                    // A return predicated on the skip's condition (MMC40): taken, the
                    // function returns at once, past the skipped code and its own return.
                    self.wait_for_link(g, out, ip);
                    self.predicated_return(ip, taken, to, g, out);
                    return if taken { at - i + 1 } else { 1 };
                }
                let past = ip.wrapping_add(INSN * (u64::from(over) + 1));
                if let Some(Op::Jump { table, via }) = guarded_jump(phase, i, over) {
                    // The jump predicated on the skip's condition being false (MMC41),
                    // in the skip's place: it reads its table entry only when it jumps.
                    let target = if taken { past } else { phase.tables[usize::from(table)].target(k) };
                    if let Some(a) = via.filter(|_| !taken) {
                        self.memory(phase, k, &Op::Load(a), a, ip, g, out);
                    }
                    self.predicated_jump(ip, !taken, target, g, out);
                    // Predicated off, it falls through to the code after the jump.
                    self.ip = target;
                    return usize::from(over) + 1;
                }
                // Control speculation (MMC42, MMC80): the block's first load issues as
                // an `ld.s` ahead of the skip, whether the block runs or not, or its
                // first floating-point operation in sf2.
                self.hoist(phase, k, &speculation::hoisted(phase, i, over), taken, ip, g, out);
                let s = self.predict_path(ip, taken);
                self.branch(g, out, ip, s, taken, is_wrong(s), past);
                return 1 + if taken { usize::from(over) } else { 0 };
            }
            Op::Call { target, frame } => {
                self.return_stacks[self.thread].push(ip.wrapping_add(INSN));
                let s = self.rse_registers().with(Signal::Calls, 1);
                match self.forced_taken(ip) {
                    // An IP-relative branch: its path was mispredicted.
                    Some(forced) => self.branch(g, out, ip, s.union(forced).with(Signal::PathMispredictsTaken, 1), true, true, target),
                    None => self.branch(g, out, ip, s, true, false, target),
                }
                self.rse_call(frame, out);
            }
            Op::Return { to } => {
                self.wait_for_link(g, out, ip);
                let predicted = self.return_stacks[self.thread].pop();
                let s = self.rse_registers().with(Signal::Returns, 1);
                match self.forced_taken(ip) {
                    Some(forced) => {
                        self.restore_frame(ip, true);
                        self.branch(g, out, ip, s.union(forced), true, true, to);
                    }
                    None => {
                        let wrong = predicted != Some(to);
                        let frame = self.restore_frame(ip, wrong);
                        let s = s.with(Signal::ReturnsMispredicted, u8::from(wrong)).with(Signal::BackEndMispredicts, frame);
                        self.branch(g, out, ip, s, true, wrong, to);
                    }
                }
                self.rse_return(out);
            }
        }
        1
    }

    /// The front end: a fetch from a new line translates through the I-TLBs and reads
    /// the L1I, then the L2I and the L3; uncacheable code, a bundle pair at a time
    /// from the bus.
    fn fetch(&mut self, phase: &Phase, ip: u64, g: &mut Group, out: &mut Out) {
        let addr = bundle_address(ip);
        let line = if phase.uncached_code { addr & !(UNCACHED_FETCH - 1) } else { self.cfg.l1i.line_of(addr) };
        if line == self.fetch_line {
            return;
        }
        self.fetch_line = line;
        g.signals.bump(Signal::ICacheReads);
        let now = self.now(out);
        self.inflight.expire(now);
        let mut tlb = Signals::default();
        let page = self.cfg.page(phase.code_page.unwrap_or(0));
        let translating = self.translate(Side::Instruction, addr, page, address_space(phase), now, &mut tlb);
        let faulted = tlb.get(Signal::MainTlbMisses) > 0 && self.text_faults(phase, addr, page);
        let mut miss = Signals::default();
        let mut filling = 0;
        let mut pairs = 0;
        let mut rab_wait = 0;
        let prefetched = self.inflight.prefetch(line);
        if phase.uncached_code {
            // A `.many` call's stream stops at uncacheable code (MMC57).
            self.streaming = None;
        }
        if phase.uncached_code && prefetched.is_none() && self.isb == Some(line) {
            // The next-line prefetcher's read of the pair is in the streaming buffer
            // (MMC76).
            g.signals.bump(Signal::IsbHits);
        } else if phase.uncached_code && prefetched.is_none() {
            // No cache holds the code (MMC57): the L2I reads the bundle pair from the
            // bus as a partial read.
            miss.flag(Signal::UncachedFetches, UNCACHED_DEMAND);
            miss.set(Signal::MemoryReads, 1);
            miss.set(Signal::PartialMemoryReads, 1);
            let ready = self.bus_read(now, 1);
            // An L3 miss event like any other (MMC62): the thread may switch away.
            filling = self.uncached_latency(&mut miss, now, ready);
            pairs = u64::from(filling > 0);
        } else if let Some(p) = prefetched {
            // The prefetch asked for this line and it is not here yet: the fetch waits
            // for it, and its change to a demand request is aborted once the
            // prefetch's L2I lookup is done (MMC25).
            if !phase.uncached_code {
                self.l1i.access(addr, false);
            }
            g.signals.bump(Signal::L1iFetchRabHits);
            if now >= p.looked_up {
                g.signals.bump(Signal::L2iSpecAborts);
            }
            rab_wait = p.ready - now;
        } else if !self.l1i.access(addr, false).hit {
            let l2_line = self.cfg.l2i.line_of(addr);
            if self.isb == Some(l2_line) {
                // The line came in whole with its other half: filled from the
                // streaming buffer as it is fetched (ERRATA MMC19).
                g.signals.bump(Signal::IsbHits);
            } else {
                miss.set(Signal::ICacheMisses, 1);
                filling = self.demand_instruction(addr, now, &mut miss);
                // The miss holds the RAB's demand entry until its line is there.
                self.si.hold(Signal::RabLive, now, now + filling);
                self.isb = Some(l2_line);
                // The L2I line arrives a 32-byte bundle pair a cycle, in the miss's
                // last cycles (one that returns in the background is not seen).
                pairs = (self.cfg.l2i.line / 32).min(filling);
            }
        }
        // The line after asks to be prefetched, once the demand line is on its way
        // (its L2I line in the streaming buffer serves both halves); the request goes
        // out with the next issue group.
        let mut prefetch = Signals::default();
        if phase.uncached_code {
            // The address space's last pair has none after it.
            if let Some(next) = line.checked_add(UNCACHED_FETCH) {
                self.prefetch_uncached(next, now, &mut prefetch);
            }
        } else {
            self.prefetch_instructions(line, now, &mut prefetch);
        }
        if translating + filling + rab_wait > 0 {
            self.close(g, out);
        }
        let walked = (translating > 0).then(|| if faulted { Served::Fault } else { translated(&tlb) });
        let demand = miss.get(Signal::ICacheMisses) + miss.get(Signal::UncachedFetches) > 0;
        if walked.is_some() || demand || rab_wait > 0 {
            // A miss the thread switched away from took memory's latency all the same.
            let latency = if demand && filling == 0 { self.cfg.memory_cycles } else { filling.max(rab_wait) };
            let latency = u16::try_from(latency).unwrap_or(u16::MAX);
            g.detail.fetch = Some(FetchMiss { addr, latency, rab: rab_wait > 0, tlb: walked });
        }
        // What costs this thread nothing (a miss it switched threads on) still
        // happened: its signals join the group's cycle.
        for (cycles, s) in [(translating, tlb), (filling, miss)] {
            if cycles == 0 {
                g.signals.add(&s);
            }
        }
        fe_stall(out, ip, translating, tlb, Signal::ITlbStallCycles);
        if faulted {
            // The walker found the page not present (MMC58): the Instruction Page Not
            // Present fault's handler maps it, and the fetch walks again.
            self.fault(phase, ip, self.cfg.page_fault_cycles, g, out);
            let mut again = Signals::default();
            let walk = self.walk(addr, page, address_space(phase), self.now(out), &mut again);
            fe_stall(out, ip, self.cfg.l2_tlb_cycles + walk, again, Signal::ITlbStallCycles);
        }
        fe_stall(out, ip, rab_wait, Signals::default(), Signal::ICacheStallCycles);
        // The miss waits for its line, which comes in over its last `pairs` cycles;
        // the very last recirculates the fill.
        let arriving = Signals::default().with(Signal::IsbBundlePairsIn, 1);
        let waiting = filling.saturating_sub(pairs.max(1));
        fe_stall(out, ip, waiting, miss, Signal::ICacheStallCycles);
        let first = if waiting == 0 { miss } else { Signals::default() };
        if pairs > 1 {
            fe_stall(out, ip, pairs - 1, first.union(arriving), Signal::ICacheStallCycles);
        }
        if filling > 0 {
            let last = if pairs > 1 { Signals::default() } else { first };
            let last = if pairs > 0 { last.union(arriving) } else { last };
            fe_stall(out, ip, 1, last, Signal::ICacheFillRecircCycles);
        }
        g.signals.add(&prefetch);
    }
}
