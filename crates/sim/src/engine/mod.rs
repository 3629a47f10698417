//! Advances a PMU model through an event stream, fast.
//!
//! A span group (a primary span and the overlays of the other hardware threads' lanes
//! in the same cycles) is stepped as one: its cycles are the primary's, and each of its
//! spans adds what its lane counts. An overlay longer than its primary counts on in
//! the primaries after it (`Cursor::lanes`).
//!
//! A model exposes its counters as "virtual counters": a value that grows by a fixed
//! amount per cycle of a span and overflows after a known headroom. The engine skips
//! whole iterations of a block while no counter can overflow, and otherwise steps to
//! the exact cycle of the next overflow, so an interrupt stops execution where the
//! hardware would raise it.
//!
//! A long stream has few kinds of span (a few hundred to a few tens of thousands in
//! millions of spans), and a counter's rate depends only on the span's kind and the
//! model's configuration, so the engine asks the model once per kind (`RateCache`)
//! and keeps the counters that count in it.

use crate::stream::{Branch, Cursor, MemoryQueues, Signals, Span, EVERY};

/// The view of a PMU model that the engine drives.
///
/// Counter `i`'s rate in a span may depend on the model's configuration and on the
/// span's signals, thread, privilege, whether it is an overlay, memory queues, the
/// kind of its data reference and branch, and [`Counting::address_class`]; nothing
/// else. `add` may change rates only when it overflows a counter, and `executed`
/// never: the engine relies on both to ask for the rates of a kind of span once.
///
/// `F` is the family of the spans (their signals' words): a model counts its own
/// family's machine, and spans of [`EVERY`] signal made by hand.
pub trait Counting<const F: usize = EVERY>: Counters {
    /// Increment of counter `i` in each cycle of `span` (0 when it does not count).
    fn rate(&self, i: usize, span: &Span<F>) -> u64;
    /// Calls `f` with each counter that counts in `span` and its [`Counting::rate`],
    /// in counter order; `class` is the span's [`Counting::address_class`], which the
    /// engine has already asked for. A model whose counters share work per span (what
    /// the span's address qualifies or routes to, what its capture units make of it)
    /// overrides it to do that work once, or to read it from `class`; the answers must
    /// be [`Counting::rate`]'s.
    fn each_rate(&self, span: &Span<F>, _class: u64, f: &mut dyn FnMut(usize, u64)) {
        for i in 0..self.counters() {
            let r = self.rate(i, span);
            if r > 0 {
                f(i, r);
            }
        }
    }
    /// The part of the span's address (its data reference's, else its instruction
    /// address) that the rates depend on: where a model routes or qualifies by
    /// address. Spans that differ only in addresses of the same class count the same.
    fn address_class(&self, _span: &Span<F>) -> u64 {
        0
    }
    /// Adds to `by[i]` what counter `i` grows by in one iteration of `body`: each
    /// span's rates ([`Counting::each_rate`]) times its cycles, saturating. The engine
    /// asks a model of a few counters (`DIRECT`) once per block; such a model may do
    /// the same sums in one pass of its own, as long as they are these.
    fn grow(&self, body: &[Span<F>], by: &mut [u64]) {
        for s in body {
            self.each_rate(s, self.address_class(s), &mut |i, r| by[i] = by[i].saturating_add(r.saturating_mul(s.cycles)));
        }
    }
    /// `cycles` cycles of `span` have executed (for outputs beyond the counters), the
    /// last of them in iteration `iteration` of its block (where its data address is
    /// `addr + iteration * stride`).
    fn executed(&mut self, _span: &Span<F>, _cycles: u64, _iteration: u64) {}
    /// `k` whole iterations of `body` ran, from iteration `from` of their block, with
    /// no counter overflowing: by default [`Counting::executed`] for each span with
    /// its cycles of all `k` iterations.
    fn iterated(&mut self, body: &[Span<F>], k: u64, from: u64) {
        for s in body {
            self.executed(s, s.cycles * k, from + k - 1);
        }
    }
}

/// A PMU model's virtual counters, whatever the spans that drive them.
pub trait Counters {
    /// Number of virtual counters.
    fn counters(&self) -> usize;
    /// How much counter `i` can grow before it overflows; at least 1.
    fn headroom(&self, i: usize) -> u64;
    /// Add `n` to counter `i`; `n` exceeds the headroom by less than one cycle's
    /// rate, so at most one overflow happens. Returns whether execution must stop:
    /// the overflow raised an interrupt, or (a counter without one) software must read
    /// it before it can wrap again.
    fn add(&mut self, i: usize, n: u64) -> bool;
}

/// Why a run stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// The cycle budget was used up.
    Budget,
    /// An overflow raised an interrupt, or wrapped a counter software must read.
    Overflow,
    /// The stream ended.
    EndOfStream,
}

/// What a counter's rate may depend on in a span (see [`Counting`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Kind<const F: usize> {
    signals: Signals<F>,
    /// The rest of the span's own fields a rate may read, as one integer
    /// ([`Kind::small`]): told apart and hashed in one operation.
    small: u64,
    queues: MemoryQueues,
    class: u64,
}

impl<const F: usize> Kind<F> {
    fn of(span: &Span<F>, class: u64) -> Kind<F> {
        Kind { signals: span.signals, small: Kind::small(span), queues: span.queues, class }
    }

    /// The thread (bits 0-7), privilege (8-10), whether an overlay (11), whether the
    /// span has a data reference, whether it writes and its size (16, 17, 18 up),
    /// and whether it has a branch, taken, mispredicted (40-42).
    fn small(span: &Span<F>) -> u64 {
        let mem = span.mem.map_or(0, |m| 1 | u64::from(m.write) << 1 | u64::from(m.size) << 2);
        let branch = span.branch.map_or(0, |Branch { taken, mispredicted, .. }| 1 | u64::from(taken) << 1 | u64::from(mispredicted) << 2);
        u64::from(span.thread) | (span.privilege as u64) << 8 | u64::from(span.overlay) << 11 | mem << 16 | branch << 40
    }

    /// Whether `span`, whose [`Kind::small`] is `small` and address class `class`, is
    /// of this kind: the fields that differ most often first, without copying the
    /// span's signals.
    fn holds(&self, span: &Span<F>, small: u64, class: u64) -> bool {
        self.small == small && self.class == class && self.queues == span.queues && self.signals == span.signals
    }

    /// A slot of the cache for a span: the signals decide, mostly.
    fn slot(span: &Span<F>, small: u64, class: u64) -> usize {
        let q = u64::from(span.queues.read_cycles) << 48;
        let h = (span.signals.fingerprint() ^ small ^ q ^ class.rotate_left(32)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        (h >> (64 - SLOT_BITS)) as usize
    }
}

/// Models of this many counters or fewer are not worth a cache.
const DIRECT: usize = 4;

/// Kinds of span the cache holds at once. Montecito's main job meets tens of
/// thousands of kinds (its system interface's occupancies are signals too): with 2^10
/// direct-mapped slots one look-up in ten missed, nearly all on a slot another kind
/// held, and asked the model again; 2^12 slots miss one in twenty-five, and 2^14
/// (one in forty-four) were no faster.
const SLOT_BITS: u32 = 12;

/// One kind of span and the counters that count in it, with their rates.
struct Slot<const F: usize> {
    kind: Kind<F>,
    /// The cache's generation when it was filled: older ones are stale.
    generation: u64,
    counting: Vec<(usize, u64)>,
}

/// The rates of the counters that count in each kind of span seen, valid while the
/// model's configuration stands: a new run or an overflow starts a new generation.
/// A model of a few counters is asked directly: looking its rates up would cost more
/// than computing them (an ARM11's three).
struct RateCache<const F: usize> {
    direct: bool,
    slots: Vec<Slot<F>>,
    generation: u64,
}

thread_local! {
    /// The slots of the last run on this thread and its generation, for the next run
    /// to take over: a main job makes about a thousand runs (one per multiplexing
    /// interval or overflow), and allocating megabytes of slots afresh for each cost
    /// more than the look-ups they saved. They are of the last run's family of spans
    /// (a `(Vec<Slot<F>>, u64)`); a run of another family starts afresh.
    static KEPT: std::cell::Cell<Option<Box<dyn std::any::Any>>> = const { std::cell::Cell::new(None) };
}

impl<const F: usize> RateCache<F> {
    /// A cache in a generation of its own: nothing in the kept slots is valid for it.
    fn new(model: &dyn Counting<F>) -> RateCache<F> {
        let kept = KEPT.take().and_then(|k| k.downcast::<(Vec<Slot<F>>, u64)>().ok());
        let (slots, generation) = kept.map_or((Vec::new(), 0), |k| *k);
        RateCache { direct: model.counters() <= DIRECT, slots, generation: generation + 1 }
    }

    /// Calls `f` with each counter that counts in `span` and its rate.
    fn each(&mut self, model: &dyn Counting<F>, span: &Span<F>, mut f: impl FnMut(usize, u64)) {
        if self.direct {
            model.each_rate(span, model.address_class(span), &mut f);
        } else {
            self.counting(model, span).iter().for_each(|&(i, r)| f(i, r));
        }
    }

    /// Forgets every rate: the model's configuration may have changed.
    fn invalidate(&mut self) {
        self.generation += 1;
    }

    /// The counters that count in `span` and their rates.
    fn counting(&mut self, model: &dyn Counting<F>, span: &Span<F>) -> &[(usize, u64)] {
        if self.slots.is_empty() {
            let empty = Kind::of(&Span::new(0, 0), 0);
            self.slots = (0..1 << SLOT_BITS).map(|_| Slot { kind: empty, generation: 0, counting: Vec::new() }).collect();
        }
        let class = model.address_class(span);
        let small = Kind::small(span);
        let slot = &mut self.slots[Kind::slot(span, small, class)];
        if slot.generation != self.generation || !slot.kind.holds(span, small, class) {
            slot.kind = Kind::of(span, class);
            slot.generation = self.generation;
            slot.counting.clear();
            model.each_rate(span, class, &mut |i, r| slot.counting.push((i, r)));
        }
        &slot.counting
    }
}

impl<const F: usize> Drop for RateCache<F> {
    fn drop(&mut self) {
        KEPT.set(Some(Box::new((std::mem::take(&mut self.slots), self.generation))));
    }
}

/// Run `model` over the stream at `cursor` for at most `budget` cycles.
/// Returns the cycles executed and why it stopped.
pub fn run<const F: usize>(model: &mut dyn Counting<F>, cursor: &mut Cursor<F>, budget: u64) -> (u64, Exit) {
    let mut done = 0u64;
    let mut cache = RateCache::new(model);
    // The counters of the current span: rate and headroom.
    let mut steps: Vec<(usize, u64, u64)> = Vec::new();
    let mut growth = Growth { by: vec![0; model.counters()], grown: Vec::new() };
    while done < budget {
        if cursor.at_iteration_start() {
            let skipped = skip_iterations(model, cursor, budget - done, &mut cache, &mut growth);
            if skipped > 0 {
                done += skipped;
                continue;
            }
        }
        if cursor.block.is_none() {
            return (done, Exit::EndOfStream);
        }
        // The primary and the overlays covering it count in each of the next `m`
        // cycles.
        let mut m = cursor.steady().min(budget - done);
        steps.clear();
        let mut lanes = 0;
        for s in cursor.lanes() {
            cache.each(model, s, |i, r| steps.push((i, r, 0)));
            lanes += 1;
        }
        // A counter that counts in several lanes grows by their sum.
        if lanes > 1 {
            steps.sort_unstable_by_key(|&(i, _, _)| i);
            steps.dedup_by(|later, kept| {
                later.0 == kept.0 && {
                    kept.1 += later.1;
                    true
                }
            });
        }
        for (i, r, headroom) in steps.iter_mut() {
            *headroom = model.headroom(*i);
            m = m.min(headroom.div_ceil(*r));
        }
        let (mut stop, mut overflowed) = (false, false);
        if m > 0 {
            for &(i, r, headroom) in &steps {
                overflowed |= r * m >= headroom;
                stop |= model.add(i, r * m);
            }
            for s in cursor.lanes() {
                model.executed(s, m, cursor.iteration);
            }
        }
        if overflowed {
            // An overflow may freeze counters or change what they count.
            cache.invalidate();
        }
        cursor.advance(m);
        done += m;
        if stop {
            return (done, Exit::Overflow);
        }
    }
    (done, Exit::Budget)
}

/// What each counter grows by in one iteration of a block, and which counters grow:
/// a block touches a few of a machine's counters, and only those are visited.
struct Growth {
    /// Per counter; zero for every counter not in `grown`.
    by: Vec<u64>,
    /// The counters that grow, in counter order once the block is summed.
    grown: Vec<usize>,
}

/// Skip as many whole iterations as fit the budget without any counter overflowing.
/// `growth` is empty and is left so.
fn skip_iterations<const F: usize>(
    model: &mut dyn Counting<F>,
    cursor: &mut Cursor<F>,
    budget: u64,
    cache: &mut RateCache<F>,
    growth: &mut Growth,
) -> u64 {
    let per_iteration = cursor.cycles_per_iteration();
    let Some(block) = cursor.block.as_ref() else { return 0 };
    let mut k = (block.repeat - cursor.iteration).min(budget / per_iteration);
    if k == 0 {
        return 0;
    }
    let Growth { by, grown } = growth;
    if cache.direct {
        // A few counters: the model sums the block in one pass.
        model.grow(&block.body, by);
        grown.extend((0..by.len()).filter(|&i| by[i] > 0));
    } else {
        for s in &block.body {
            cache.each(model, s, |i, r| {
                let add = r.saturating_mul(s.cycles);
                if add > 0 && by[i] == 0 {
                    grown.push(i);
                }
                by[i] = by[i].saturating_add(add);
            });
        }
    }
    // Counter order, as the models are added to everywhere.
    grown.sort_unstable();
    for &i in grown.iter() {
        // Strictly below the headroom: the overflow itself is stepped exactly.
        k = k.min((model.headroom(i) - 1) / by[i]);
    }
    if k > 0 {
        for &i in grown.iter() {
            model.add(i, by[i] * k);
        }
        model.iterated(&block.body, k, cursor.iteration);
    }
    for &i in grown.iter() {
        by[i] = 0;
    }
    grown.clear();
    if k == 0 {
        return 0;
    }
    cursor.skip(k);
    k * per_iteration
}

#[cfg(test)]
mod tests;
