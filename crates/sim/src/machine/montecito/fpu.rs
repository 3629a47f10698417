//! The FPU: floating-point operations, their status flags, and their subnormal
//! results.
//!
//! Subnormal results (`program::FpValues`, ERRATA MMC53): in flush-to-zero mode they
//! are zero (FP_FLUSH_TO_ZERO.FTZ_Real). Otherwise Safe Instruction Recognition
//! stalls the pipeline until the FPU knows the result is tiny (FP_TRUE_SIRSTALL,
//! BE_L1D_FPU_BUBBLE.FPU), and a software-assist trap delivers it: the Itanium SDM
//! (Vol. 1 §5.4.1.3) says implementations use that trap "in difficult situations, such
//! as operations creating denormal numbers"; Linux's handler emulates the operation
//! with the firmware's FPSWA. The next iteration's operations read those results: SIR
//! stalls for them too, and nothing traps (FP_FALSE_SIRSTALL).
//!
//! Status flags (MMC80): each operation raises its flags in the status field it names,
//! the main one (sf0) or, for an operation the compiler speculated above a branch, sf2,
//! which an `fchkf` in the operation's place compares with sf0 (`speculation.rs`).

use super::group::{Group, Port};
use super::Montecito;
use super::{Out, Signals};
use crate::program::{FpOp, Phase};
use crate::stream::Signal;

/// Table 2-8: a `getf` result reaches an ALU operation 5 cycles after it issues.
const GETF_TO_ALU: u64 = 5;

/// The flags of an FPSR status field that the programs' values raise, at their places
/// among the field's six (v, d, z, o, u, i: Itanium SDM Vol. 1 §5.2.2): a denormal
/// operand, a divide by zero, an underflow, an inexact result.
pub(super) const DENORMAL: u8 = 1 << 1;
pub(super) const ZERO_DIVIDE: u8 = 1 << 2;
pub(super) const UNDERFLOW: u8 = 1 << 4;
pub(super) const INEXACT: u8 = 1 << 5;

/// The status field an operation writes its flags to: the main one, or the one the
/// compiler's speculated operations use, with whether the operation divides by the
/// zero the branch it was hoisted above guards against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Field {
    Sf0,
    Sf2 { by_zero: bool },
}

/// The flags `f` raises: a divide by zero only Z (its infinite quotient is exact);
/// any other arithmetic result inexact, as results from the programs' data are
/// (MMC80), and underflowing when tiny as well (§5.4.3: tiny and inexact, with its
/// trap disabled; flush-to-zero sets both too); D besides when it reads a subnormal
/// operand; conversions and moves none.
fn raised(f: FpOp, tiny: bool, by_zero: bool, subnormal_operand: bool) -> u8 {
    if !f.arithmetic() {
        return 0;
    }
    let result = match f {
        FpOp::Div if by_zero => ZERO_DIVIDE,
        _ if tiny => UNDERFLOW | INEXACT,
        _ => INEXACT,
    };
    result | if subnormal_operand { DENORMAL } else { 0 }
}

/// The flags of a context's sf0 and sf2.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Status {
    pub(super) sf0: u8,
    pub(super) sf2: u8,
}

/// Each address space's FPSR flags. The programs give each software thread an address
/// space of its own, and the operating system saves and restores a thread's FPSR with
/// it; a new process starts with every flag clear (Linux's `FPSR_DEFAULT`).
#[derive(Debug, Clone, Default)]
pub(super) struct Fpsr(Vec<(u32, Status)>);

impl Fpsr {
    pub(super) fn of(&mut self, context: u32) -> &mut Status {
        let at = match self.0.iter().position(|(c, _)| *c == context) {
            Some(at) => at,
            None => {
                self.0.push((context, Status::default()));
                self.0.len() - 1
            }
        };
        &mut self.0[at].1
    }

    /// The flags, in an order that does not depend on when each context first ran.
    pub(super) fn canonical(&self, out: &mut Vec<u64>) {
        let mut flags: Vec<u64> = self.0.iter().map(|&(c, s)| u64::from(c) << 16 | u64::from(s.sf0) << 8 | u64::from(s.sf2)).collect();
        flags.sort_unstable();
        out.push(flags.len() as u64);
        out.extend(flags);
    }
}

impl Montecito {
    /// Floating-point operation `f` of `phase`'s iteration `k` at `ip`, in the open
    /// group, raising its flags in `field`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn fp_operation(&mut self, phase: &Phase, k: u64, f: FpOp, field: Field, ip: u64, g: &mut Group, out: &mut Out) {
        self.join(g, out, ip, Port::None);
        // FP_OPS_RETIRED's weights (§4.15) give `getf` none: it computes nothing.
        if f != FpOp::ToInt {
            g.signals.bump(Signal::FguCryptoInstructions);
        }
        if matches!(f, FpOp::Div | FpOp::Sqrt) {
            self.divide(g, out);
        }
        if f == FpOp::ToInt {
            // getf: its consumer, the next instruction, an ALU operation, waits Table
            // 2-8's getf to ALU latency (MMC54).
            self.wait(g, out, GETF_TO_ALU - 1, Signal::GrGrStallCycles);
        }
        let by_zero = field == Field::Sf2 { by_zero: true };
        let tiny = phase.fp.tiny(f, k, phase.iterations) && !by_zero;
        // The values it reads are the last iteration's subnormal results.
        let subnormal_operand = !phase.fp.flush && k > 0 && phase.fp.tiny(f, k - 1, phase.iterations);
        let flags = raised(f, tiny, by_zero, subnormal_operand);
        let status = self.fpsr.of(phase.context);
        match field {
            Field::Sf0 => status.sf0 |= flags,
            Field::Sf2 { .. } => status.sf2 |= flags,
        }
        if tiny {
            self.subnormal(g, out, ip, phase.fp.flush);
        } else if subnormal_operand {
            self.unsafe_operands(g, out, ip);
        }
    }

    /// A divide or square root: a software sequence that starts with frcpa or frsqrta,
    /// whose result the next step waits for (`fp_divide_cycles` in all, FRALL), and
    /// whose predicate qualifies it (Table 2-8: "FP side predicate write: frcpa,
    /// fprcpa, frsqta, fpsqta" to "Qual. Pred." 2 cycles): in the first cycle it waits
    /// for both, which BE_EXE_BUBBLE counts under each ("causes are independent and
    /// several of them fire at the same time, they all should be counted", MMC10).
    fn divide(&mut self, g: &mut Group, out: &mut Out) {
        const PREDICATE_WAIT: u64 = 2 - 1;
        let cycles = self.cfg.fp_divide_cycles;
        g.signals.bump(Signal::ExplicitStops);
        self.close(g, out);
        let both = PREDICATE_WAIT.min(cycles);
        let fr = Signals::default().with(Signal::FrDepStallCycles, 1);
        self.be_stall(out, self.ip, 0, both, fr.with(Signal::PrDepStallCycles, 1));
        self.be_stall(out, self.ip, both, cycles - both, fr);
    }

    /// The floating-point operation at `ip`, in the open group, has a subnormal result.
    pub(super) fn subnormal(&mut self, g: &mut Group, out: &mut Out, ip: u64, flush: bool) {
        if flush {
            g.signals.bump(Signal::FpFlushedToZero);
            return;
        }
        g.signals.bump(Signal::FpSubnormalResults);
        g.signals.bump(Signal::FpSirStallsTrapping);
        self.close(g, out);
        self.be_stall(out, ip, 0, self.cfg.sir_cycles, Signals::default().with(Signal::FpuStallCycles, 1));
        out.stall(ip, self.cfg.trap_cycles + self.cfg.fp_assist_cycles, Some(Signal::ExceptionFlushCycles));
        // The assist's instructions retired (MD44 counts a switch's stall from them).
        out.handled();
        // The handler goes on after the operation (IPSR.ri's next slot).
        g.resteered = true;
    }

    /// The floating-point operation at `ip`, in the open group, reads a subnormal
    /// operand and has a normal result. SIR judges an operation by each operand's
    /// exponent against fixed limits (Intel's SIR patents, US 5,257,216 and
    /// US 5,307,301): a subnormal operand is past the lower one, so the operation is
    /// unsafe and the pipeline stalls until its result is known, which needs no trap
    /// (FP_FALSE_SIRSTALL, ERRATA MMC61).
    pub(super) fn unsafe_operands(&mut self, g: &mut Group, out: &mut Out, ip: u64) {
        g.signals.bump(Signal::FpSirStallsFalse);
        self.close(g, out);
        self.be_stall(out, ip, 0, self.cfg.sir_cycles, Signals::default().with(Signal::FpuStallCycles, 1));
    }
}
