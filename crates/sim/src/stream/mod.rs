//! The event stream that drives every simulated PMU.
//!
//! A workload is an endless sequence of [`Block`]s. A block is a short body of
//! [`Span`]s repeated many times; a span is a run of identical cycles. Each cycle of a
//! span carries, for every architecture-neutral [`Signal`], how much it increments in
//! that cycle (so thresholds such as Montecito's "cycles in which more than N events
//! occurred" can be evaluated), plus the privilege level, the hardware thread, the
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

use pmukit_arch::montecito::ear::Served;
use pmukit_arch::montecito::etb::BranchKind;

pub use cursor::Cursor;
pub use signal::{family_signals, Signal, ARM11, EVERY, MONTECITO, SPARC};

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

/// Words of sixteen signals each: comparing spans (to merge them) compares these.
/// Bits of one signal's per-cycle increment, and the largest increment: no signal of
/// any modelled chip counts more than 15 in one cycle (Montecito retires at most six
/// instructions, §4.3; memory transactions are a few per access).
const SIGNAL_BITS: usize = 4;
pub const MAX_PER_CYCLE: u8 = (1 << SIGNAL_BITS) - 1;
const PER_WORD: usize = 64 / SIGNAL_BITS;

/// Per-cycle increments of the signals of family `F` (its words: [`ARM11`],
/// [`SPARC`], [`MONTECITO`], or [`EVERY`] signal), four bits each, sixteen to a 64-bit
/// word. Machines compare every cycle's signals with the span before to merge them,
/// and spans are copied into blocks: whole words, as few as possible, keep both
/// cheap. A signal outside the family reads as 0: its machines never make one
/// (`tests/signal_families.rs`).
#[derive(Debug, Clone, Copy, Eq)]
pub struct Signals<const F: usize = EVERY>([u64; F]);

impl<const F: usize> Default for Signals<F> {
    fn default() -> Self {
        Signals([0; F])
    }
}

impl<const F: usize> PartialEq for Signals<F> {
    fn eq(&self, other: &Signals<F>) -> bool {
        // OR of the XORs: no early exit and no call to memcmp.
        self.0.iter().zip(&other.0).fold(0, |acc, (x, y)| acc | (x ^ y)) == 0
    }
}

impl<const F: usize> std::hash::Hash for Signals<F> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.hash(state);
    }
}

impl<const F: usize> Signals<F> {
    /// The discriminant of the family's first signal.
    const FIRST: usize = family_signals(F).start;
    const END: usize = family_signals(F).end;

    /// Where signal `i` (a discriminant) lies: its word and shift, if the family has it.
    #[inline]
    const fn place(i: usize) -> Option<(usize, usize)> {
        if i < Self::FIRST || i >= Self::END {
            return None;
        }
        let at = i - Self::FIRST;
        Some((at / PER_WORD, SIGNAL_BITS * (at % PER_WORD)))
    }

    /// Every signal of `signals` at the largest increment: a mask for
    /// [`Signals::counts_any`], built at compile time. Signals outside the family
    /// are left out (its machines make none).
    pub const fn mask(signals: &[Signal]) -> Signals<F> {
        let mut words = [0u64; F];
        let mut i = 0;
        while i < signals.len() {
            if let Some((w, shift)) = Self::place(signals[i] as usize) {
                words[w] |= (MAX_PER_CYCLE as u64) << shift;
            }
            i += 1;
        }
        Signals(words)
    }

    #[inline]
    pub fn get(&self, s: Signal) -> u64 {
        match Self::place(s as usize) {
            Some((w, shift)) => (self.0[w] >> shift) & u64::from(MAX_PER_CYCLE),
            None => 0,
        }
    }

    /// Sets a signal's per-cycle increment, at most [`MAX_PER_CYCLE`] (machines never
    /// produce more, nor a signal outside their family; debug builds check both).
    #[inline]
    pub fn set(&mut self, s: Signal, per_cycle: u8) -> &mut Self {
        debug_assert!(per_cycle <= MAX_PER_CYCLE, "{s:?} counts {per_cycle} in one cycle");
        match Self::place(s as usize) {
            Some((w, shift)) => {
                let mask = u64::from(MAX_PER_CYCLE) << shift;
                self.0[w] = (self.0[w] & !mask) | (u64::from(per_cycle.min(MAX_PER_CYCLE)) << shift);
            }
            None => debug_assert!(per_cycle == 0, "{s:?} is not a signal of this family's machines"),
        }
        self
    }

    /// One more of `s` in this cycle.
    pub fn bump(&mut self, s: Signal) {
        let n = self.get(s) as u8;
        self.set(s, n + 1);
    }

    pub fn with(mut self, s: Signal, per_cycle: u8) -> Self {
        self.set(s, per_cycle);
        self
    }

    /// These increments in family `G`'s words, those of signals `G` lacks left out:
    /// all of them when `G` holds this family's signals (as [`EVERY`] holds all), and
    /// a plain copy within a family.
    pub fn into_family<const G: usize>(self) -> Signals<G> {
        let mut out = Signals::<G>::default();
        if F == G {
            out.0.copy_from_slice(&self.0);
        } else {
            self.each_nonzero(|i, n| {
                if let Some((w, shift)) = Signals::<G>::place(i) {
                    out.0[w] |= n << shift;
                }
            });
        }
        out
    }

    /// A 64-bit digest of every increment, to tell sets apart cheaply (equal sets have
    /// equal digests), unmixed: hash it before taking bits of it.
    pub fn fingerprint(&self) -> u64 {
        // Each word rotated by its own amount, then all of them exclusive-or'ed: no
        // word waits for the one before (a rotate of the running digest per word
        // chained 38 operations' latency), and a multiply per word would cost more.
        // Callers spread the bits.
        self.0.iter().enumerate().fold(0u64, |h, (i, &w)| h ^ w.rotate_left(7 * i as u32 % 64))
    }

    /// Calls `f` with the index (`Signal as usize`) and increment of every signal that
    /// counts, skipping whole words of signals that do not.
    pub fn each_nonzero(&self, mut f: impl FnMut(usize, u64)) {
        let max = u64::from(MAX_PER_CYCLE);
        for (w, &word) in self.0.iter().enumerate() {
            let mut bits = word;
            while bits != 0 {
                let slot = bits.trailing_zeros() as usize / SIGNAL_BITS;
                f(Self::FIRST + PER_WORD * w + slot, (word >> (SIGNAL_BITS * slot)) & max);
                bits &= !(max << (SIGNAL_BITS * slot));
            }
        }
    }

    /// Whether any of the signals `any` has set (to any increment) counts here: one
    /// test per word, where asking signal by signal costs a shift and mask each.
    pub fn counts_any(&self, any: &Signals<F>) -> bool {
        self.0.iter().zip(&any.0).any(|(w, a)| w & a != 0)
    }

    /// Whether `other`'s increments can be added to these without any signal counting
    /// more than [`MAX_PER_CYCLE`] in the cycle.
    pub fn fits(&self, other: &Signals<F>) -> bool {
        let mut fits = true;
        other.each_nonzero(|i, n| fits &= self.get(Signal::ALL[i]) + n <= u64::from(MAX_PER_CYCLE));
        fits
    }

    /// These increments plus `other`'s, each signal at most [`MAX_PER_CYCLE`] (callers
    /// check [`Signals::fits`] first).
    pub fn plus(mut self, other: &Signals<F>) -> Signals<F> {
        other.each_nonzero(|i, n| {
            let s = Signal::ALL[i];
            let sum = self.get(s) + n;
            self.set(s, sum as u8);
        });
        self
    }

    /// Both sets of signals, which must not share a signal (each one's increments
    /// are kept as they are).
    ///
    /// Inlined: a call takes both sets by value, and copying them in and out cost
    /// ARM1176's main job 18 % more instructions when the compiler stopped inlining it
    /// (c122bcf, which only changed its callers on Montecito).
    #[inline]
    pub fn union(mut self, other: Signals<F>) -> Signals<F> {
        debug_assert!(self.0.iter().zip(&other.0).all(|(a, b)| a & b == 0), "{self:?} and {other:?} share a signal");
        for (a, b) in self.0.iter_mut().zip(&other.0) {
            *a |= b;
        }
        self
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Every signal's words: the reference the families' are checked against.
    type Signals = super::Signals<EVERY>;

    /// Family `F`'s words against the reference, on increments of signals of `F`
    /// (`values[k]` for the family's `k`th signal) and of `other` (added to the first
    /// set): every operation a machine or model uses gives the same answer.
    fn family_agrees<const F: usize>(values: &[u8], other: &[u8]) -> Result<(), TestCaseError> {
        let of_family = family_signals(F).map(|i| Signal::ALL[i]);
        let (mut a, mut all) = (super::Signals::<F>::default(), Signals::default());
        let (mut b, mut all_b) = (super::Signals::<F>::default(), Signals::default());
        for ((sig, &v), &w) in of_family.zip(values).zip(other) {
            a.set(sig, v);
            all.set(sig, v);
            b.set(sig, w);
            all_b.set(sig, w);
        }
        prop_assert_eq!(a.into_family::<EVERY>(), all);
        prop_assert_eq!(all.into_family::<F>(), a);
        for sig in Signal::ALL {
            prop_assert_eq!(a.get(sig), all.get(sig));
        }
        let (mut seen, mut seen_all) = (Vec::new(), Vec::new());
        a.each_nonzero(|i, n| seen.push((i, n)));
        all.each_nonzero(|i, n| seen_all.push((i, n)));
        prop_assert_eq!(seen, seen_all);
        prop_assert_eq!(a.fits(&b), all.fits(&all_b));
        if a.fits(&b) {
            prop_assert_eq!(a.plus(&b).into_family::<EVERY>(), all.plus(&all_b));
        }
        prop_assert_eq!(a.counts_any(&b), all.counts_any(&all_b));
        prop_assert_eq!(a == b, all == all_b);
        Ok(())
    }

    #[test]
    fn a_mask_is_its_signals_at_the_largest_increment() {
        let signals = [Signal::Instructions, Signal::IoBwl, Signal::ALL[Signal::COUNT - 1]];
        let folded = signals.iter().fold(Signals::default(), |s, &sig| s.with(sig, MAX_PER_CYCLE));
        assert_eq!(Signals::mask(&signals), folded);
        assert!(Signals::default().with(Signal::IoBwl, 1).counts_any(&Signals::mask(&signals)));
        assert!(!Signals::default().with(Signal::Branches, 1).counts_any(&Signals::mask(&signals)));
    }

    proptest! {
        #[test]
        fn each_nonzero_visits_exactly_the_signals_that_count(values in prop::collection::vec(0u8..4, Signal::COUNT)) {
            let mut s = Signals::default();
            for (sig, &v) in Signal::ALL.iter().zip(&values) {
                s.set(*sig, v);
            }
            let mut seen = vec![0u64; Signal::COUNT];
            s.each_nonzero(|i, v| seen[i] += v);
            let expected: Vec<u64> = values.iter().map(|&v| u64::from(v)).collect();
            prop_assert_eq!(seen, expected);
            for (sig, &v) in Signal::ALL.iter().zip(&values) {
                prop_assert_eq!(s.get(*sig), u64::from(v));
            }
        }

        #[test]
        fn a_familys_signals_are_every_signals_on_its_own(
            values in prop::collection::vec(prop::sample::select(vec![0u8, 0, 1, 2, 7, 15]), Signal::COUNT),
            other in prop::collection::vec(prop::sample::select(vec![0u8, 0, 0, 1, 8]), Signal::COUNT),
        ) {
            family_agrees::<ARM11>(&values, &other)?;
            family_agrees::<SPARC>(&values, &other)?;
            family_agrees::<MONTECITO>(&values, &other)?;
        }

        #[test]
        fn a_union_keeps_both_sets(a in 0usize..Signal::COUNT, b in 0usize..Signal::COUNT, x in 1u8..8, y in 1u8..8) {
            prop_assume!(a != b);
            let u = Signals::default().with(Signal::ALL[a], x).union(Signals::default().with(Signal::ALL[b], y));
            prop_assert_eq!((u.get(Signal::ALL[a]), u.get(Signal::ALL[b])), (u64::from(x), u64::from(y)));
        }
    }
}
