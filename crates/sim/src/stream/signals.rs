//! Per-cycle increments of signals, in the words of a family of machines: the
//! families, and `Signals<F>`.

use super::Signal;
use std::ops::Range;

/// The families of machines, each named by the number of words of sixteen signals
/// its spans hold. Each family makes a range of signals, less at most one hole, the
/// enum's order being chosen for it (docs/engine.md E7): ARM11's 38, in a span of 48
/// that takes in the ten SPARC and Montecito share, fit three words, SPARC's 110
/// seven, Montecito's 255 sixteen, against twenty-three for all 355 ([`EVERY`]).
pub const ARM11: usize = 3;
pub const SPARC: usize = 7;
pub const MONTECITO: usize = 16;
/// Every signal: the reference the families' spans are checked against, and the
/// spans a test or a fuzz target makes by hand.
pub const EVERY: usize = Signal::COUNT.div_ceil(16);

/// The discriminants family `f`'s words span, its first signal's to its last's.
const fn span(f: usize) -> Range<usize> {
    match f {
        SPARC => Signal::SprRingOps as usize..Signal::MemoryWrites as usize + 1,
        ARM11 => Signal::PcChanges as usize..Signal::DtcmErrors as usize + 1,
        MONTECITO => Signal::FguCryptoInstructions as usize..Signal::COUNT,
        EVERY => 0..Signal::COUNT,
        _ => panic!("not a family of signals: ARM11, SPARC, MONTECITO or EVERY"),
    }
}

/// The discriminants within family `f`'s span that it does not make, and its words
/// leave out. ARM11's own signals lie between those it shares with SPARC and
/// Montecito and Montecito's own (one order cannot put them outside Montecito's span
/// and keep SPARC's within seven words): Montecito skips them.
const fn hole(f: usize) -> Range<usize> {
    match f {
        MONTECITO => Signal::DCacheAccessesCacheable as usize..Signal::DtcmErrors as usize + 1,
        _ => 0..0,
    }
}

/// Whether family `f`'s words hold the signal of discriminant `i`: its machines make
/// no signal outside them (ARM11's hold the ten SPARC's and Montecito's make, too).
pub const fn family_has(f: usize, i: usize) -> bool {
    let (span, hole) = (span(f), hole(f));
    span.start <= i && i < span.end && !(hole.start <= i && i < hole.end)
}

/// The discriminants of the signals family `f`'s words hold, in order: its machines
/// make no other.
pub fn family_signals(f: usize) -> impl Iterator<Item = usize> + Clone {
    span(f).filter(move |&i| family_has(f, i))
}

/// Each family's signals fill its words, and the families' numbers differ (a family
/// is known by its number).
const _: () = {
    let families = [ARM11, SPARC, MONTECITO, EVERY];
    let mut i = 0;
    while i < families.len() {
        let (r, hole) = (span(families[i]), hole(families[i]));
        assert!(r.start <= hole.start && hole.end <= r.end || hole.start == hole.end);
        assert!((r.end - r.start - (hole.end - hole.start)).div_ceil(16) == families[i]);
        let mut j = 0;
        while j < i {
            assert!(families[j] != families[i]);
            j += 1;
        }
        i += 1;
    }
};

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
    /// Inlined: a few instructions, asked for every span a machine makes and every
    /// span the rate cache looks up, where a call cost a fiftieth of T4's machine.
    #[inline(always)]
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
    /// The discriminants the family's words span, and the hole in them (`hole`): plain
    /// constants, so that `place` is a few comparisons the compiler folds away for a
    /// family without a hole.
    const FIRST: usize = span(F).start;
    const END: usize = span(F).end;
    const HOLE: usize = hole(F).start;
    const HOLE_END: usize = hole(F).end;
    const HOLE_LEN: usize = Self::HOLE_END - Self::HOLE;

    /// Where signal `i` (a discriminant) lies: its word and shift, if the family has it.
    #[inline]
    const fn place(i: usize) -> Option<(usize, usize)> {
        if i < Self::FIRST || i >= Self::END || (i >= Self::HOLE && i < Self::HOLE_END) {
            return None;
        }
        let at = i - Self::FIRST - if i >= Self::HOLE_END { Self::HOLE_LEN } else { 0 };
        Some((at / PER_WORD, SIGNAL_BITS * (at % PER_WORD)))
    }

    /// The discriminant of the signal at position `at` of the family's words.
    #[inline]
    const fn signal_at(at: usize) -> usize {
        let i = Self::FIRST + at;
        if i >= Self::HOLE {
            i + Self::HOLE_LEN
        } else {
            i
        }
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

    /// Sets `bits` of a signal that carries flags, not a count (`SpecNat`,
    /// `FailedChecks`, `L2iL3Rejects`, `L2iHitConflicts`).
    pub fn flag(&mut self, s: Signal, bits: u8) {
        let flags = self.get(s) as u8 | bits;
        self.set(s, flags);
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
    #[inline]
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
                f(Self::signal_at(PER_WORD * w + slot), (word >> (SIGNAL_BITS * slot)) & max);
                bits &= !(max << (SIGNAL_BITS * slot));
            }
        }
    }

    /// Whether any of the signals `any` has set (to any increment) counts here: one
    /// test per word, where asking signal by signal costs a shift and mask each.
    /// No early exit: the test is branch-free, and with a constant `any` the words
    /// it leaves empty fold away wherever the compiler inlines it.
    pub fn counts_any(&self, any: &Signals<F>) -> bool {
        self.0.iter().zip(&any.0).fold(0, |set, (w, a)| set | (w & a)) != 0
    }

    /// Whether `other`'s increments can be added to these without any signal counting
    /// more than [`MAX_PER_CYCLE`] in the cycle.
    pub fn fits(&self, other: &Signals<F>) -> bool {
        let mut fits = true;
        other.each_nonzero(|i, n| fits &= self.get(Signal::ALL[i]) + n <= u64::from(MAX_PER_CYCLE));
        fits
    }

    /// Adds `other`'s increments to these, a word at a time: each signal's four bits
    /// are added apart from its neighbours' and stop at [`MAX_PER_CYCLE`] (a machine
    /// never adds past it; debug builds check).
    #[inline]
    pub fn add(&mut self, other: &Signals<F>) {
        const HIGH: u64 = 0x8888_8888_8888_8888;
        // What is added is mostly a few signals: its empty words change nothing.
        for (a, &b) in self.0.iter_mut().zip(&other.0).filter(|(_, &b)| b != 0) {
            // The low three bits of each signal added without a carry out of them, the
            // top bit by exclusive or; a signal carries out where both top bits were
            // set, or either was and the low bits' sum reached it.
            let low = (*a & !HIGH) + (b & !HIGH);
            let sum = low ^ ((*a ^ b) & HIGH);
            let carry = ((*a & b) | ((*a | b) & !sum)) & HIGH;
            debug_assert!(carry == 0, "{self:?} plus {other:?} counts past {MAX_PER_CYCLE} in a cycle");
            *a = sum | ((carry >> 3) * u64::from(MAX_PER_CYCLE));
        }
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
            let mut sum = a;
            sum.add(&b);
            prop_assert_eq!(sum, a.plus(&b), "a word at a time, as signal by signal");
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
