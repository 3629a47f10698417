//! The event stream that drives every simulated PMU.
//!
//! A workload is an endless sequence of [`Block`]s. A block is a short body of
//! [`Span`]s repeated many times; a span is a run of identical cycles. Each cycle of a
//! span carries, for every architecture-neutral [`Signal`] its machine's family makes
//! ([`Signals`]), how much it increments in that cycle (so thresholds such as
//! Montecito's "cycles in which more than N events occurred" can be evaluated), plus the privilege level, the hardware thread, the
//! instruction address, an optional data reference and an optional branch outcome.
//!
//! A core with several hardware threads has a lane per thread: a cycle is a *span
//! group*, a primary span followed by overlay spans ([`Span::overlay`]) of the other
//! threads, each span's `thread` its lane (docs/engine.md, E1). An overlay covers its
//! primary's cycles, and those of the primaries after it when it has more.
//! Time is the primaries' cycles; what each lane counts is its own spans'.
//!
//! Repetition makes billions of cycles cheap: a model advances a whole block at once
//! when no counter can overflow within it, and steps span group by span group only
//! around an overflow.

mod cursor;
mod signal;
mod signals;

use pmukit_arch::montecito::ear::Served;
use pmukit_arch::montecito::etb::BranchKind;

pub use cursor::Cursor;
pub use signal::{
    L1dConflict, Signal, BE_FRAME, BE_ROTATE, BE_STAGE, FAILED_CHECK_FCHKF, FAILED_CHECK_FP, FAILED_CHECK_INT, IBUF_BRQ_FULL, IBUF_FULL,
    SPEC_NAT_CONSUMED, SPEC_NAT_PSR_ED, SPEC_NAT_TLB_FAULT, SPEC_NAT_TLB_MISS, UNCACHED_DEMAND, UNCACHED_PREFETCH,
};
pub use signals::{family_has, family_signals, Signals, ARM11, EVERY, MAX_PER_CYCLE, MONTECITO, SPARC};

/// Privilege of a span of execution. Itanium's four levels (CPL 0 most privileged),
/// plus hyperprivileged for SPARC; ARM11 distinguishes only user and privileged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Privilege {
    Hyper,
    Cpl0,
    Cpl1,
    Cpl2,
    #[default]
    Cpl3,
}

impl Privilege {
    pub const KERNEL: Privilege = Privilege::Cpl0;
    pub const USER: Privilege = Privilege::Cpl3;

    pub fn is_user(self) -> bool {
        self == Privilege::Cpl3
    }

    /// Every level, in the order of their codes.
    pub const ALL: [Privilege; 5] = [Privilege::Hyper, Privilege::Cpl0, Privilege::Cpl1, Privilege::Cpl2, Privilege::Cpl3];

    /// The level as a small number (`Signal::STRAND_READY` carries it), and back.
    pub fn code(self) -> u8 {
        Privilege::ALL.iter().position(|&p| p == self).map_or(0, |i| i as u8)
    }

    pub fn from_code(code: u8) -> Option<Privilege> {
        Privilege::ALL.get(usize::from(code)).copied()
    }
}

/// A data reference made in each cycle of a span; in iteration `k` of its block the
/// address is `addr + k * stride`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemRef {
    pub addr: u64,
    pub stride: i64,
    pub size: u8,
    pub write: bool,
}

/// The outcome of the branch that ends a span.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Branch {
    pub target: u64,
    pub taken: bool,
    pub mispredicted: bool,
}

/// An instruction fetch that missed the L1I or the first-level ITLB.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FetchMiss {
    /// The bundle address fetched.
    pub addr: u64,
    /// Cycles until its line was there: 0 when the L1I held it (a TLB miss only).
    pub latency: u16,
    /// The line was on its way for a prefetch (a RAB hit), not a demand miss.
    pub rab: bool,
    /// Where its translation came from when the L1 ITLB missed.
    pub tlb: Option<Served>,
}

/// What capture hardware records of a span's instructions beyond the signals they
/// count (Montecito's event address registers and execution trace buffer,
/// §3.3.8-§3.3.10): which instruction made the data reference and which the branch,
/// and what the misses were like. No counter counts by it, so spans that differ only
/// here count the same.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Detail {
    /// The address of the instruction that made the data reference ([`Span::mem`]).
    pub data_ip: u64,
    /// Cycles the data reference waited for its data when the L1D did not serve it;
    /// 0 when it did, or for a store.
    pub data_latency: u16,
    /// Where the data reference's translation came from when the L1 DTLB missed.
    pub data_tlb: Option<Served>,
    /// The address of the branch whose outcome is [`Span::branch`], its kind, and
    /// whether its path (taken or not) was mispredicted, rather than its target.
    pub branch_ip: u64,
    pub branch_kind: BranchKind,
    pub path_mispredicted: bool,
    /// The fetch of the span's first bundle, when it missed.
    pub fetch: Option<FetchMiss>,
}

/// What the memory transactions of a span's cycle met in the memory controller: each
/// transaction's whole wait is credited to the cycle that carries it (its
/// `MemoryReads` or `MemoryWrites`), since the cycles it waits through may belong to
/// other spans. Zero on machines without a memory-controller model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MemoryQueues {
    /// Cycles read transactions spent queued before they issued to their bank.
    pub read_cycles: u32,
    /// Cycles write transactions spent queued before they issued.
    pub write_cycles: u32,
    /// Cycles with requests queued and none able to issue for bank conflicts.
    pub bank_stall_cycles: u32,
    /// Reads deferred because they conflicted with a queued write.
    pub writeback_hits: u8,
    /// Times the queued writes starved and had to be drained ahead of reads.
    pub writes_starved: u8,
}

impl MemoryQueues {
    pub fn is_empty(&self) -> bool {
        *self == MemoryQueues::default()
    }
}

/// A run of identical cycles, of a machine of family `F` (its signals' words).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span<const F: usize = EVERY> {
    pub cycles: u64,
    /// The hardware thread whose lane this is.
    pub thread: u8,
    /// Another lane of the cycles of the primary span before it (the nearest that is
    /// not an overlay): it adds what its thread counts in those cycles and takes no
    /// time of its own. It may have more cycles than that primary: it then covers
    /// the primaries after it too, up to its cycles, never beyond its block's
    /// iteration (a strand stalled while others issue one cycle at a time).
    pub overlay: bool,
    pub privilege: Privilege,
    /// Address of the instructions executed in the span.
    pub ip: u64,
    pub mem: Option<MemRef>,
    pub branch: Option<Branch>,
    pub signals: Signals<F>,
    /// Per cycle of the span.
    pub queues: MemoryQueues,
    /// Of the span's last cycle (the one its instructions issue in).
    pub detail: Detail,
}

impl<const F: usize> Span<F> {
    /// `cycles` cycles of user code on thread 0 at `ip`, with no signals yet.
    pub fn new(cycles: u64, ip: u64) -> Span<F> {
        Span {
            cycles,
            thread: 0,
            overlay: false,
            privilege: Privilege::USER,
            ip,
            mem: None,
            branch: None,
            signals: Signals::default(),
            queues: MemoryQueues::default(),
            detail: Detail::default(),
        }
    }

    /// The address a span's events concern: its data reference's (the first
    /// iteration's, so that it is the same over the span), else its instruction
    /// address (an instruction fetch). PMU models route and qualify by it.
    pub fn address(&self) -> u64 {
        self.mem.map_or(self.ip, |m| m.addr)
    }

    pub fn with(mut self, s: Signal, per_cycle: u8) -> Span<F> {
        self.signals.set(s, per_cycle);
        self
    }

    /// Total of a signal over the span.
    pub fn total(&self, s: Signal) -> u64 {
        self.signals.get(s) * self.cycles
    }

    /// The time the span takes: its cycles, or none for an overlay (its cycles are its
    /// primary's).
    pub fn duration(&self) -> u64 {
        if self.overlay {
            0
        } else {
            self.cycles
        }
    }

    /// The same cycles on hardware thread `thread`'s lane: an overlay of this span's
    /// group, with no signals yet.
    pub fn lane(&self, thread: u8) -> Span<F> {
        Span {
            thread,
            overlay: true,
            mem: None,
            branch: None,
            signals: Signals::default(),
            queues: MemoryQueues::default(),
            detail: Detail::default(),
            ..*self
        }
    }

    /// The same span in family `G`'s words ([`Signals::into_family`]).
    pub fn into_family<const G: usize>(self) -> Span<G> {
        let Span { cycles, thread, overlay, privilege, ip, mem, branch, signals, queues, detail } = self;
        Span { cycles, thread, overlay, privilege, ip, mem, branch, signals: signals.into_family(), queues, detail }
    }
}

/// The span groups of `body`: each a primary and the overlays after it.
pub fn groups<const F: usize>(body: &[Span<F>]) -> impl Iterator<Item = &[Span<F>]> {
    body.chunk_by(|_, next| next.overlay)
}

/// The cycles of an iteration of `body` as runs in which the same spans count: each
/// run's cycles, and its spans, the primary first, then the overlays covering it in
/// body order (a span group, when overlays last as long as their primaries).
pub fn steady_runs<const F: usize>(body: &[Span<F>]) -> Vec<(u64, Vec<&Span<F>>)> {
    let (mut runs, mut covering, mut at) = (Vec::new(), Vec::<(&Span<F>, u64)>::new(), 0);
    for group in groups(body) {
        let (primary, overlays) = (&group[0], &group[1..]);
        covering.extend(overlays.iter().map(|o| (o, at + o.cycles)));
        let end = at + primary.cycles;
        while at < end {
            let to = covering.iter().map(|&(_, e)| e).filter(|&e| e > at).fold(end, u64::min);
            runs.push((to - at, std::iter::once(primary).chain(covering.iter().filter(|&&(_, e)| e > at).map(|&(o, _)| o)).collect()));
            at = to;
            covering.retain(|&(_, e)| e > at);
        }
    }
    runs
}

/// A body of spans repeated `repeat` times.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block<const F: usize = EVERY> {
    pub body: Vec<Span<F>>,
    pub repeat: u64,
}

impl<const F: usize> Block<F> {
    /// Cycles of one iteration: its primaries'.
    pub fn cycles_per_iteration(&self) -> u64 {
        self.body.iter().map(Span::duration).sum()
    }

    pub fn cycles(&self) -> u64 {
        self.cycles_per_iteration().saturating_mul(self.repeat)
    }

    /// The same block in family `G`'s words ([`Signals::into_family`]).
    pub fn into_family<const G: usize>(self) -> Block<G> {
        Block { body: self.body.into_iter().map(Span::into_family).collect(), repeat: self.repeat }
    }
}

/// Exact totals over the first cycles of a stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Totals {
    pub cycles: u64,
    /// Indexed by `Signal as usize`.
    pub signals: [u64; Signal::COUNT],
    pub user_cycles: u64,
    pub kernel_cycles: u64,
}

impl Totals {
    pub fn get(&self, s: Signal) -> u64 {
        self.signals[s as usize]
    }

    pub(crate) fn zero() -> Totals {
        Totals { cycles: 0, signals: [0; Signal::COUNT], user_cycles: 0, kernel_cycles: 0 }
    }

    /// Counts `cycles` cycles of `span`; an overlay's signals, but not its time.
    pub(crate) fn add<const F: usize>(&mut self, span: &Span<F>, cycles: u64) {
        if !span.overlay {
            self.cycles += cycles;
            if span.privilege.is_user() {
                self.user_cycles += cycles;
            } else {
                self.kernel_cycles += cycles;
            }
        }
        // No overflow: a signal counts at most 15 per cycle, and cycles are far below 2^59.
        span.signals.each_nonzero(|i, per_cycle| self.signals[i] += per_cycle * cycles);
    }

    /// Exact totals of the spans `keep` accepts over the first `cycles` cycles of
    /// `blocks` (`cycles` measures the whole stream; `Totals::cycles` the cycles kept).
    ///
    /// Block-wise: whole iterations are multiplied out, only the last partial iteration
    /// is walked span by span, so the cost grows with the number of blocks, not with
    /// the cycles.
    pub fn of<const F: usize>(blocks: impl IntoIterator<Item = Block<F>>, cycles: u64, keep: impl Fn(&Span<F>) -> bool) -> Totals {
        let mut totals = Totals::zero();
        let mut left = cycles;
        for block in blocks {
            if left == 0 {
                break;
            }
            let per_iteration = block.cycles_per_iteration();
            if per_iteration == 0 {
                continue;
            }
            let whole = block.repeat.min(left / per_iteration);
            for span in block.body.iter().filter(|s| keep(s)) {
                totals.add(span, span.cycles * whole);
            }
            left -= whole * per_iteration;
            if whole < block.repeat {
                // Less than an iteration is left: each span counts the cycles of it
                // that come before the cut.
                let mut at = 0;
                for group in groups(&block.body) {
                    for span in group.iter().filter(|s| keep(s)) {
                        totals.add(span, span.cycles.min(left.saturating_sub(at)));
                    }
                    at += group[0].cycles;
                }
                left = 0;
            }
        }
        totals
    }
}
