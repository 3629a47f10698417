//! The FPU's subnormal results (`program::FpValues`, ERRATA MMC53). In flush-to-zero
//! mode they are zero (FP_FLUSH_TO_ZERO.FTZ_Real). Otherwise Safe Instruction
//! Recognition stalls the pipeline until the FPU knows the result is tiny
//! (FP_TRUE_SIRSTALL, BE_L1D_FPU_BUBBLE.FPU), and a software-assist trap delivers it:
//! the Itanium SDM (Vol. 1 §5.4.1.3) says implementations use that trap "in difficult
//! situations, such as operations creating denormal numbers"; Linux's handler emulates
//! the operation with the firmware's FPSWA. The next iteration's operations read
//! those results: SIR stalls for them too, and nothing traps (FP_FALSE_SIRSTALL).

use super::group::Group;
use super::Montecito;
use super::{Out, Signals};
use crate::stream::Signal;

impl Montecito {
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
