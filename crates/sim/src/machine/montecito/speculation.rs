//! Control speculation (ERRATA MMC42): the compiler hoists the load that begins a
//! skipped block above the skip as a speculative load (`ld.s`), and a chained load
//! whose address it gives with it, leaving a `chk.s` where each was. The `ld.s` issues
//! whether or not the block runs; in an iteration that skips the block, a load through
//! a pointer the skip tests (`DataStream::nullable`) reads page 0, which nothing maps:
//! the page walker finds no translation, the Data TLB fault goes to the operating
//! system, which sees a speculative load (ISR.sp) and sets PSR.ed, and the load,
//! executed again, returns a NaT (Intel Itanium Architecture SDM Vol. 2 §5.5.5; Linux's
//! `ia64_do_page_fault`). A load whose address is a NaT is NaT'd in turn. A load from a
//! page of freshly mapped memory that is not present yet (`Phase::present`) is NaT'd by
//! the hardware, which defers the fault (DCR.dp, MMC55): when the block runs, its
//! `chk.s` fails and the recovery code loads again, taking the page fault. In a
//! hardware virtual machine's guest (`Phase::guest`) outside its kernel, the
//! hypervisor has the hardware defer the TLB miss of a load through a NULL pointer
//! too (DCR.dm, MMC77).
//!
//! A block that begins with floating-point arithmetic has that operation hoisted
//! instead, computed in status field 2 (`fma.s2`, a divide's `frcpa.s2` sequence),
//! with an `fchkf.s2` in its place (MMC80): the check fails when sf2 holds a flag sf0
//! lacks (Linux enables no FP trap), and the recovery code computes the operation
//! again in sf0 and clears sf2 (`fclrf.s2`). A divide the skip guards against a zero
//! divisor (`FpValues::zero_divisors`) divides by zero in the iterations it skips, a
//! flag no operation of sf0 raises, so the next check of a block that runs fails.

use super::fpu::Field;
use super::group::{address_space, fe_stall, Group, Port};
use super::Montecito;
use super::{Out, Signals};
use crate::program::{Access, FpOp, Memory, Op, Phase};
use crate::stream::{
    L1dConflict, MemRef, Privilege, Signal, FAILED_CHECK_FCHKF, FAILED_CHECK_FP, FAILED_CHECK_INT, SPEC_NAT_CONSUMED, SPEC_NAT_PSR_ED,
    SPEC_NAT_TLB_FAULT, SPEC_NAT_TLB_MISS,
};
use pmukit_arch::montecito::ear::Served;

/// An instruction hoisted above the skip being executed: its place in the body, the
/// cycle its data is back, and whether the `ld.s` returned a NaT.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Hoisted {
    pub(super) index: usize,
    pub(super) ready: u64,
    pub(super) nat: bool,
}

/// The instructions the compiler hoists above the skip at `i` over `over`
/// instructions: the block's first instruction (nops aside) when it is a load from
/// cacheable memory, and the next one too when it is such a load and the first's value
/// is its address (`use_next`); or the first alone when it is floating-point
/// arithmetic (MMC80). At most two.
pub(super) fn hoisted(phase: &Phase, i: usize, over: u8) -> Vec<usize> {
    let block = i + 1..=i + usize::from(over);
    let mut ops = phase.body.get(block.clone()).into_iter().flatten().zip(block).filter(|(op, _)| **op != Op::Nop);
    let hoistable = |op: &Op| match *op {
        Op::Load(a) | Op::FpLoad(a) => (phase.streams[usize::from(a.stream)].memory == Memory::Cacheable).then_some(a),
        _ => None,
    };
    let mut out = Vec::new();
    if let Some((first, at)) = ops.next() {
        if matches!(first, Op::Fp(f) if f.arithmetic()) {
            out.push(at);
        } else if let Some(a) = hoistable(first) {
            out.push(at);
            if let Some((second, next)) = ops.next().filter(|_| a.use_next) {
                if hoistable(second).is_some() {
                    out.push(next);
                }
            }
        }
    }
    out
}

impl Montecito {
    /// The instructions at body indices `hoist`, issued in order at `ip` ahead of the
    /// skip, whose block is `skipped` in this iteration: a load's `ld.s`, the last
    /// leaving the wait for its value to its `chk.s`, an earlier one giving the next
    /// its address; an arithmetic operation in sf2, dividing by zero when the skip
    /// passes over a divide it guards against one.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn hoist(&mut self, phase: &Phase, k: u64, hoist: &[usize], skipped: bool, ip: u64, g: &mut Group, out: &mut Out) {
        self.hoisted.clear();
        for (n, &index) in hoist.iter().enumerate() {
            let op = phase.body[index];
            if let Op::Fp(f) = op {
                let by_zero = skipped && f == FpOp::Div && phase.fp.zero_divisors;
                self.fp_operation(phase, k, f, Field::Sf2 { by_zero }, ip, g, out);
                self.hoisted.push(Hoisted { index, ready: self.now(out), nat: false });
                continue;
            }
            let (Op::Load(a) | Op::FpLoad(a)) = op else { continue };
            let consumed = self.hoisted.last().is_some_and(|h| h.nat);
            let nat = if consumed {
                // Its address is a NaT: no memory reference (NAT_CNSM).
                self.nat_load(&op, SPEC_NAT_CONSUMED, 0, ip, g, out);
                true
            } else if skipped && phase.streams[usize::from(a.stream)].nullable {
                self.null_load(phase, &op, ip, g, out);
                true
            } else if !phase.present(a.stream, k) {
                // The page is not present: the walker finds its entry so, and the
                // hardware defers the fault (DEF_TLB_FAULT).
                let addr = phase.streams[usize::from(a.stream)].position(k) + u64::from(a.offset);
                self.failed_walk(phase, addr, a.stream, ip, g, out);
                self.nat_load(&op, SPEC_NAT_TLB_FAULT, addr, ip, g, out);
                true
            } else {
                false
            };
            let ready = if nat {
                0
            } else {
                let issued = Access { use_next: a.use_next && n + 1 < hoist.len(), ..a };
                let latency = self.memory(phase, k, &op, issued, ip, g, out);
                self.now(out) + latency
            };
            self.hoisted.push(Hoisted { index, ready, nat });
        }
        if skipped {
            self.hoisted.clear();
        }
    }

    /// A speculative load through a NULL pointer: page 0 misses both DTLBs, the walker
    /// reads its VHPT entry and finds no translation, and the Data TLB fault's handler
    /// defers the load (PSR.ed), which returns a NaT when it issues again (DEF_PSR_ED).
    /// A hardware virtual machine's guest above its kernel runs with the DCR.dm its
    /// hypervisor sets (Xen's `vmx_ia64_set_dcr`, MMC77): the hardware defers the fault
    /// and the load returns a NaT at once (DEF_TLB_MISS).
    fn null_load(&mut self, phase: &Phase, op: &Op, ip: u64, g: &mut Group, out: &mut Out) {
        let Some(a) = op.access() else { return };
        let addr = u64::from(a.offset);
        self.failed_walk(phase, addr, a.stream, ip, g, out);
        if phase.guest && phase.privilege != Privilege::KERNEL {
            self.nat_load(op, SPEC_NAT_TLB_MISS, addr, ip, g, out);
            return;
        }
        self.fault(phase, ip, self.cfg.fault_handler_cycles, g, out);
        self.nat_load(op, SPEC_NAT_PSR_ED, addr, ip, g, out);
    }

    /// A translation of `addr` (of stream `stream`) that finds no valid entry: both
    /// DTLBs miss, and the walker reads the page's VHPT entry to find it invalid or not
    /// present.
    fn failed_walk(&mut self, phase: &Phase, addr: u64, stream: u8, ip: u64, g: &mut Group, out: &mut Out) {
        let page = self.cfg.page(phase.streams[usize::from(stream)].page);
        self.close(g, out);
        let now = self.now(out);
        let mut s = Signals::default().with(Signal::DTlbMisses, 1).with(Signal::MainTlbMisses, 1);
        let walk = self.cfg.l2_tlb_cycles + self.walk(addr, page, address_space(phase), now, &mut s);
        let stall = Signals::default().with(Signal::LsuFullStallCycles, 1).with(Signal::HpwStallCycles, 1);
        out.emit(ip, 1, s.union(stall));
        self.be_stall(out, ip, 1, walk - 1, stall);
    }

    /// A fault of `phase`'s instruction at `ip`: in a guest the hypervisor's turn
    /// first (`hypervisor`), then the interruption to the operating system's handler
    /// of `handler` cycles (`interruption`).
    pub(super) fn fault(&mut self, phase: &Phase, ip: u64, handler: u64, g: &mut Group, out: &mut Out) {
        self.hypervisor(phase, ip, g, out);
        self.interruption(ip, handler, g, out);
    }

    /// An interruption: the group formed so far issues, and execution goes to the
    /// handler, `handler` cycles of it, and back (`rfi`), where the interrupted
    /// instruction's slot says (IPSR.ri).
    fn interruption(&mut self, ip: u64, handler: u64, g: &mut Group, out: &mut Out) {
        self.close(g, out);
        out.emit(ip, 1, Signals::default().with(Signal::ExceptionFlushCycles, 1));
        out.stall(ip, (self.cfg.trap_cycles + handler).saturating_sub(1), Some(Signal::ExceptionFlushCycles));
        // The handler's instructions retired (MD44 counts a switch's stall from them).
        out.handled();
        g.resteered = true;
    }

    /// The hypervisor's turn when a guest's phase (`Phase::guest`) takes an
    /// interruption or its kernel runs `rfi` (MMC77): under VT-i every interruption
    /// goes to the VMM first, which reflects it into the guest, and the guest kernel's
    /// privileged `rfi` faults to it to be emulated (Xen's `vmx_reflect_interruption`,
    /// its `rfi` emulation): a trap and a handler of `fault_handler_cycles` more. An
    /// `epc` into an inner level (a system call, `Op::Syscall`) is no interruption and
    /// runs in the guest. Nothing for other phases.
    pub(super) fn hypervisor(&mut self, phase: &Phase, ip: u64, g: &mut Group, out: &mut Out) {
        if phase.guest {
            self.interruption(ip, self.cfg.fault_handler_cycles, g, out);
        }
    }

    /// A demand access to `addr` of fresh stream `stream` whose page is not present
    /// (MMC55): the walker finds the page's entry not present, and the Data Page Not
    /// Present fault's handler maps the page (`page_fault_cycles`). The access then
    /// issues again, and translates as any other.
    pub(super) fn page_fault(&mut self, phase: &Phase, addr: u64, stream: u8, ip: u64, g: &mut Group, out: &mut Out) {
        self.failed_walk(phase, addr, stream, ip, g, out);
        self.fault(phase, ip, self.cfg.page_fault_cycles, g, out);
    }

    /// A speculative load that returns a NaT for `why` (a `Signal::SpecNat` flag, which
    /// integer loads only raise: SPEC_LOADS_NATTED) without reading memory: the L1D
    /// recirculates its return to generate the NaT (BE_L1D_FPU_BUBBLE.L1D_NAT), and the
    /// data EAR sees an L1DTLB miss that faulted when its address `addr` needed a walk.
    fn nat_load(&mut self, op: &Op, why: u8, addr: u64, ip: u64, g: &mut Group, out: &mut Out) {
        let size = op.access().map_or(0, |a| a.size);
        self.join(g, out, ip, Port::Load);
        g.signals.bump(Signal::Loads);
        if matches!(op, Op::Load(_)) {
            g.signals.flag(Signal::SpecNat, why);
        }
        if g.mem.is_none() {
            g.mem = Some(MemRef { addr, stride: 0, size, write: false });
            g.detail.data_ip = ip;
            g.detail.data_latency = 0;
            g.detail.data_tlb = (why != SPEC_NAT_CONSUMED).then_some(Served::Fault);
        }
        self.close(g, out);
        self.be_stall(out, ip, 0, self.cfg.nat_recirculate_cycles, super::l1d_pipe::l1d_stall(L1dConflict::Nat));
    }

    /// The `chk.s` in the place of the hoisted load at `index`: it waits for a value the
    /// next instruction needs. A load NaT'd in an iteration that runs the block (its
    /// page was not present) fails it (MMC55): the check branches to the recovery code
    /// the compiler put out of line, the pipeline flushed as for a mispredicted
    /// branch; the recovery code loads again, not speculatively, taking the page fault,
    /// and branches back.
    pub(super) fn check(&mut self, phase: &Phase, k: u64, index: usize, ip: u64, g: &mut Group, out: &mut Out) -> bool {
        let Some(at) = self.hoisted.iter().position(|h| h.index == index) else { return false };
        let h = self.hoisted.remove(at);
        self.join(g, out, ip, Port::None);
        if let Op::Fp(f) = phase.body[index] {
            self.fchkf(phase, k, f, ip, g, out);
            return true;
        }
        if h.nat {
            let op = phase.body[index];
            let (Op::Load(a) | Op::FpLoad(a)) = op else { return true };
            let flag = if matches!(op, Op::FpLoad(_)) { FAILED_CHECK_FP } else { FAILED_CHECK_INT };
            g.signals.flag(Signal::FailedChecks, flag);
            self.close(g, out);
            out.stall(ip, self.cfg.mispredict_cycles, None);
            // The recovery code holds the loads hoisted with it, whose addresses were
            // this one's NaT: it loads them too, each after the value it needs, and
            // their checks pass.
            let chained: Vec<usize> = self.hoisted.iter().filter(|c| c.nat).map(|c| c.index).collect();
            // The load takes its page fault (`memory`); its consumer, after the branch
            // back, waits for what is left of its latency, unless the recovery code
            // held it.
            let waits = a.use_next && !chained.is_empty();
            let mut latency = self.memory(phase, k, &op, Access { use_next: waits, ..a }, ip, g, out);
            if waits {
                latency = 0;
            }
            for later in chained {
                let Some(b) = phase.body[later].access() else { continue };
                let latency = self.memory(phase, k, &phase.body[later], Access { use_next: false, ..b }, ip, g, out);
                let ready = self.now(out) + latency;
                if let Some(c) = self.hoisted.iter_mut().find(|c| c.index == later) {
                    *c = Hoisted { ready, nat: false, ..*c };
                }
            }
            self.close(g, out);
            let back = self.cfg.resteer_cycles;
            fe_stall(out, ip, back, Signals::default(), Signal::ResteerBubbleCycles);
            if a.use_next && latency > back {
                g.signals.bump(Signal::ExplicitStops);
                self.be_stall(out, ip, 0, latency - back, Signals::default().with(Signal::DataDepStallCycles, 1));
            }
            return true;
        }
        let needed = phase.body[index].access().is_some_and(|a| a.use_next);
        let now = self.now(out);
        if needed && h.ready > now {
            g.signals.bump(Signal::ExplicitStops);
            self.close(g, out);
            self.be_stall(out, ip, 0, h.ready - now, Signals::default().with(Signal::DataDepStallCycles, 1));
        }
        true
    }

    /// The `fchkf.s2` in the place of the hoisted operation `f`: it fails when sf2
    /// holds a flag sf0 lacks (the SDM's check, with every FP trap disabled, as Linux's
    /// FPSR has them), branching to the recovery code as a mispredicted branch does;
    /// the recovery code clears sf2 and computes `f` again in sf0, then branches back
    /// (MMC80).
    fn fchkf(&mut self, phase: &Phase, k: u64, f: FpOp, ip: u64, g: &mut Group, out: &mut Out) {
        let status = self.fpsr.of(phase.context);
        if status.sf2 & !status.sf0 == 0 {
            return;
        }
        status.sf2 = 0;
        g.signals.flag(Signal::FailedChecks, FAILED_CHECK_FCHKF);
        self.close(g, out);
        out.stall(ip, self.cfg.mispredict_cycles, None);
        self.fp_operation(phase, k, f, Field::Sf0, ip, g, out);
        self.close(g, out);
        fe_stall(out, ip, self.cfg.resteer_cycles, Signals::default(), Signal::ResteerBubbleCycles);
    }
}
