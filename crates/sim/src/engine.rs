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

use crate::stream::{Branch, Cursor, MemoryQueues, Privilege, Signals, Span};

/// The view of a PMU model that the engine drives.
///
/// Counter `i`'s rate in a span may depend on the model's configuration and on the
/// span's signals, thread, privilege, whether it is an overlay, memory queues, the
/// kind of its data reference and branch, and [`Counting::address_class`]; nothing
/// else. `add` may change rates only when it overflows a counter, and `executed`
/// never: the engine relies on both to ask for the rates of a kind of span once.
pub trait Counting {
    /// Number of virtual counters.
    fn counters(&self) -> usize;
    /// Increment of counter `i` in each cycle of `span` (0 when it does not count).
    fn rate(&self, i: usize, span: &Span) -> u64;
    /// Calls `f` with each counter that counts in `span` and its [`Counting::rate`],
    /// in counter order; `class` is the span's [`Counting::address_class`], which the
    /// engine has already asked for. A model whose counters share work per span (what
    /// the span's address qualifies or routes to, what its capture units make of it)
    /// overrides it to do that work once, or to read it from `class`; the answers must
    /// be [`Counting::rate`]'s.
    fn each_rate(&self, span: &Span, _class: u64, f: &mut dyn FnMut(usize, u64)) {
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
    fn address_class(&self, _span: &Span) -> u64 {
        0
    }
    /// Adds to `by[i]` what counter `i` grows by in one iteration of `body`: each
    /// span's rates ([`Counting::each_rate`]) times its cycles, saturating. The engine
    /// asks a model of a few counters (`DIRECT`) once per block; such a model may do
    /// the same sums in one pass of its own, as long as they are these.
    fn grow(&self, body: &[Span], by: &mut [u64]) {
        for s in body {
            self.each_rate(s, self.address_class(s), &mut |i, r| by[i] = by[i].saturating_add(r.saturating_mul(s.cycles)));
        }
    }
    /// How much counter `i` can grow before it overflows; at least 1.
    fn headroom(&self, i: usize) -> u64;
    /// Add `n` to counter `i`; `n` exceeds the headroom by less than one cycle's
    /// rate, so at most one overflow happens. Returns whether execution must stop:
    /// the overflow raised an interrupt, or (a counter without one) software must read
    /// it before it can wrap again.
    fn add(&mut self, i: usize, n: u64) -> bool;
    /// `cycles` cycles of `span` have executed (for outputs beyond the counters), the
    /// last of them in iteration `iteration` of its block (where its data address is
    /// `addr + iteration * stride`).
    fn executed(&mut self, _span: &Span, _cycles: u64, _iteration: u64) {}
    /// `k` whole iterations of `body` ran, from iteration `from` of their block, with
    /// no counter overflowing: by default [`Counting::executed`] for each span with
    /// its cycles of all `k` iterations.
    fn iterated(&mut self, body: &[Span], k: u64, from: u64) {
        for s in body {
            self.executed(s, s.cycles * k, from + k - 1);
        }
    }
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
struct Kind {
    signals: Signals,
    thread: u8,
    privilege: Privilege,
    overlay: bool,
    /// Whether the span has a data reference, whether it writes, and its size (bits
    /// 0, 1 and 2 up). Codes in whole integers: the slot's hash reads them back at
    /// once, and bytes written apart and read as one stalled every look-up.
    mem: u16,
    /// Whether the span has a branch, whether taken, whether mispredicted (bits 0-2).
    branch: u8,
    queues: MemoryQueues,
    class: u64,
}

impl Kind {
    fn of(span: &Span, class: u64) -> Kind {
        Kind {
            signals: span.signals,
            thread: span.thread,
            privilege: span.privilege,
            overlay: span.overlay,
            mem: span.mem.map_or(0, |m| 1 | u16::from(m.write) << 1 | u16::from(m.size) << 2),
            branch: span.branch.map_or(0, |Branch { taken, mispredicted, .. }| 1 | u8::from(taken) << 1 | u8::from(mispredicted) << 2),
            queues: span.queues,
            class,
        }
    }

    /// A slot of the cache: the signals decide, mostly.
    fn slot(&self) -> usize {
        let q = &self.queues;
        // Kinds of the same signals apart: a primary and an overlay, a span with a
        // data reference or branch and one without.
        let (mem, branch) = (u64::from(self.mem), u64::from(self.branch));
        let small = u64::from(self.thread)
            ^ (self.privilege as u64) << 8
            ^ u64::from(q.read_cycles) << 16
            ^ self.class.rotate_left(32)
            ^ (u64::from(self.overlay) | mem << 1 | branch << 11) << 40;
        let h = (self.signals.fingerprint() ^ small).wrapping_mul(0x9E37_79B9_7F4A_7C15);
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
struct Slot {
    kind: Kind,
    /// The cache's generation when it was filled: older ones are stale.
    generation: u64,
    counting: Vec<(usize, u64)>,
}

/// The rates of the counters that count in each kind of span seen, valid while the
/// model's configuration stands: a new run or an overflow starts a new generation.
/// A model of a few counters is asked directly: looking its rates up would cost more
/// than computing them (an ARM11's three).
struct RateCache {
    direct: bool,
    slots: Vec<Slot>,
    generation: u64,
}

thread_local! {
    /// The slots of the last run on this thread and its generation, for the next run
    /// to take over: a main job makes about a thousand runs (one per multiplexing
    /// interval or overflow), and allocating megabytes of slots afresh for each cost
    /// more than the look-ups they saved.
    static KEPT: std::cell::Cell<(Vec<Slot>, u64)> = const { std::cell::Cell::new((Vec::new(), 0)) };
}

impl RateCache {
    /// A cache in a generation of its own: nothing in the kept slots is valid for it.
    fn new(model: &dyn Counting) -> RateCache {
        let (slots, generation) = KEPT.take();
        RateCache { direct: model.counters() <= DIRECT, slots, generation: generation + 1 }
    }

    /// Calls `f` with each counter that counts in `span` and its rate.
    fn each(&mut self, model: &dyn Counting, span: &Span, mut f: impl FnMut(usize, u64)) {
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
    fn counting(&mut self, model: &dyn Counting, span: &Span) -> &[(usize, u64)] {
        if self.slots.is_empty() {
            let empty = Kind::of(&Span::new(0, 0), 0);
            self.slots = (0..1 << SLOT_BITS).map(|_| Slot { kind: empty, generation: 0, counting: Vec::new() }).collect();
        }
        let class = model.address_class(span);
        let kind = Kind::of(span, class);
        let slot = &mut self.slots[kind.slot()];
        if slot.generation != self.generation || slot.kind != kind {
            slot.kind = kind;
            slot.generation = self.generation;
            slot.counting.clear();
            model.each_rate(span, class, &mut |i, r| slot.counting.push((i, r)));
        }
        &slot.counting
    }
}

impl Drop for RateCache {
    fn drop(&mut self) {
        KEPT.set((std::mem::take(&mut self.slots), self.generation));
    }
}

/// Run `model` over the stream at `cursor` for at most `budget` cycles.
/// Returns the cycles executed and why it stopped.
pub fn run(model: &mut dyn Counting, cursor: &mut Cursor, budget: u64) -> (u64, Exit) {
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
fn skip_iterations(model: &mut dyn Counting, cursor: &mut Cursor, budget: u64, cache: &mut RateCache, growth: &mut Growth) -> u64 {
    let Some(block) = cursor.block.as_ref() else { return 0 };
    let per_iteration = block.cycles_per_iteration();
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
mod tests {
    use super::*;
    use crate::stream::{groups, Block, MemRef, Signal, Totals};

    /// Counter 0 counts instructions and wraps at `wrap`; its overflow freezes counter
    /// 1, which counts the cycles of spans whose data is in an odd 64-byte line (the
    /// address class), without stopping the run. The others count nothing: they make
    /// the model large enough for the engine to cache its rates.
    struct Toy {
        counts: [u64; 2],
        wrap: u64,
        frozen: bool,
    }

    impl Counting for Toy {
        fn counters(&self) -> usize {
            DIRECT + 1
        }

        fn rate(&self, i: usize, span: &Span) -> u64 {
            match i {
                0 => span.signals.get(Signal::Instructions),
                1 => u64::from(!self.frozen && self.address_class(span) == 1),
                _ => 0,
            }
        }

        fn address_class(&self, span: &Span) -> u64 {
            span.mem.map_or(0, |m| m.addr >> 6 & 1)
        }

        fn headroom(&self, i: usize) -> u64 {
            match i {
                0 => self.wrap - self.counts[0],
                1 => u64::MAX - self.counts[1],
                _ => u64::MAX,
            }
        }

        fn add(&mut self, i: usize, n: u64) -> bool {
            self.counts[i] += n;
            if i == 0 && self.counts[0] >= self.wrap {
                self.counts[0] -= self.wrap;
                self.frozen = true;
            }
            false
        }
    }

    fn at(addr: u64, cycles: u64) -> Span {
        let mut s = Span::new(cycles, 0x1000).with(Signal::Instructions, 1);
        s.mem = Some(MemRef { addr, stride: 0, size: 8, write: false });
        s
    }

    fn run_over(toy: &mut Toy, spans: Vec<Span>) -> (u64, Exit) {
        let blocks = spans.into_iter().map(|s| Block { body: vec![s], repeat: 1 });
        run(toy, &mut Cursor::new(Box::new(blocks)), u64::MAX)
    }

    #[test]
    fn spans_of_one_kind_count_by_their_address_class() {
        let mut toy = Toy { counts: [0; 2], wrap: u64::MAX, frozen: false };
        // Same signals, four addresses: two in odd lines, two in even ones.
        let spans = vec![at(0x1040, 3), at(0x1000, 5), at(0x20c0, 7), at(0x2080, 11)];
        assert_eq!(run_over(&mut toy, spans), (26, Exit::EndOfStream));
        assert_eq!(toy.counts, [26, 10]);
    }

    #[test]
    fn an_overflow_that_changes_the_rates_is_seen_at_once() {
        let mut toy = Toy { counts: [0; 2], wrap: 12, frozen: false };
        // The wrap comes 12 cycles in, in the second span: from then on counter 1 is
        // frozen, though the spans' kind is the one the engine has already seen.
        let spans = vec![at(0x1040, 8), at(0x1040, 8), at(0x1040, 8)];
        assert_eq!(run_over(&mut toy, spans), (24, Exit::EndOfStream));
        // Counter 0 wrapped twice, at 12 and 24; counter 1 counted until the first.
        assert_eq!(toy.counts, [0, 12]);
    }

    /// Counter 0 counts the instructions of primary spans (as a SPARC T4 counts the
    /// core's cycles); the others count nothing and make the model large enough for
    /// the cache.
    struct Primaries {
        count: u64,
    }

    impl Counting for Primaries {
        fn counters(&self) -> usize {
            DIRECT + 1
        }

        fn rate(&self, i: usize, span: &Span) -> u64 {
            if i == 0 && !span.overlay {
                span.signals.get(Signal::Instructions)
            } else {
                0
            }
        }

        fn headroom(&self, _: usize) -> u64 {
            u64::MAX - self.count
        }

        fn add(&mut self, i: usize, n: u64) -> bool {
            if i == 0 {
                self.count += n;
            }
            false
        }
    }

    #[test]
    fn an_overlay_is_a_kind_of_span_of_its_own() {
        let primary = Span::new(3, 0x1000).with(Signal::Instructions, 1).with(Signal::Loads, 2);
        // The same thread, signals and privilege as the primary, but an overlay.
        let overlay = Span { cycles: 7, signals: primary.signals, ..primary.lane(0) };
        let stores = Span { cycles: 5, ..primary.with(Signal::Stores, 1) };
        let more = Span { cycles: 11, ..primary.with(Signal::Instructions, 2) };
        let blocks = vec![Block { body: vec![primary, overlay, stores, more], repeat: 2 }];
        let mut model = Primaries { count: 0 };
        run(&mut model, &mut Cursor::new(Box::new(blocks.into_iter())), u64::MAX);
        assert_eq!(model.count, 2 * (3 + 5 + 2 * 11));
    }

    /// Counter `t` (for lanes 0-3) counts lane `t`'s instructions, counter 4 every
    /// lane's (a core-wide event, Montecito's `.all`), each wrapping at `wrap` and
    /// stopping the run when it does; the wraps are counted apart.
    struct Lanes {
        counts: [u64; 5],
        wraps: [u64; 5],
        wrap: u64,
    }

    impl Counting for Lanes {
        fn counters(&self) -> usize {
            // More than DIRECT: the rates go through the cache.
            6
        }

        fn rate(&self, i: usize, span: &Span) -> u64 {
            let n = span.signals.get(Signal::Instructions);
            match i {
                0..4 => n * u64::from(usize::from(span.thread) == i),
                4 => n,
                _ => 0,
            }
        }

        fn headroom(&self, i: usize) -> u64 {
            self.counts.get(i).map_or(u64::MAX, |c| self.wrap - c)
        }

        fn add(&mut self, i: usize, n: u64) -> bool {
            let Some(c) = self.counts.get_mut(i) else { return false };
            *c += n;
            // A cycle of several lanes can add more than one wrap's worth.
            self.wraps[i] += *c / self.wrap;
            let wrapped = *c >= self.wrap;
            *c %= self.wrap;
            wrapped
        }
    }

    /// A group of `cycles` cycles: a primary and overlays, each `(thread,
    /// instructions a cycle, cycles beyond the primary's)`.
    fn lane_group(cycles: u64, lanes: &[(u8, u8, u64)]) -> Vec<Span> {
        let primary = Span::new(cycles, 0x1000);
        lanes
            .iter()
            .enumerate()
            .map(|(k, &(thread, n, longer))| {
                let mut s = if k == 0 { Span { thread, ..primary } } else { Span { cycles: cycles + longer, ..primary.lane(thread) } };
                s.signals.set(Signal::Instructions, n);
                s
            })
            .collect()
    }

    /// Each lane's instructions (lane 4: all of them) in the first `cycles` cycles of
    /// `blocks`, cycle by cycle: the spans that count in a cycle are the primary it
    /// falls in and every overlay that began at or before it and has cycles left.
    fn cycle_by_cycle(blocks: &[Block], cycles: u64) -> [u64; 5] {
        let mut counts = [0; 5];
        let mut left = cycles;
        for block in blocks {
            let length = block.cycles_per_iteration();
            for _ in 0..block.repeat {
                for c in 0..length.min(left) {
                    let mut at = 0;
                    for group in groups(&block.body) {
                        for (k, s) in group.iter().enumerate() {
                            let (from, to) = (at, if k == 0 { at + s.cycles } else { (at + s.cycles).min(length) });
                            if (from..to).contains(&c) {
                                let n = s.signals.get(Signal::Instructions);
                                counts[usize::from(s.thread)] += n;
                                counts[4] += n;
                            }
                        }
                        at += group[0].cycles;
                    }
                }
                left -= length.min(left);
            }
        }
        counts
    }

    proptest::proptest! {
        /// docs/engine.md E1: a span group takes its primary's cycles once, each lane
        /// counts its own spans, a core-wide counter the sum of the lanes, an overlay
        /// longer than its primary counts on in the primaries after it (up to its
        /// iteration's end), and a run cut anywhere (by the budget or at an overflow)
        /// has counted exactly the cycles it ran: what counting cycle by cycle finds in
        /// them, lane by lane, and what `Totals::of` finds.
        #[test]
        fn span_groups_take_their_primarys_time_and_count_every_lane(
            blocks in proptest::collection::vec(
                (proptest::collection::vec((1u64..6, proptest::collection::vec((0u8..4, 0u8..4, 0u64..9), 1..4)), 1..4), 1u64..5),
                1..5,
            ),
            wrap in 5u64..200,
            budgets in proptest::collection::vec(1u64..40, 1..30),
        ) {
            let blocks: Vec<Block> = blocks
                .into_iter()
                .map(|(groups, repeat)| {
                    let mut body: Vec<Span> = groups.into_iter().flat_map(|(cycles, mut lanes)| {
                        lanes.sort_unstable_by_key(|l| l.0);
                        lanes.dedup_by_key(|l| l.0);
                        lane_group(cycles, &lanes)
                    }).collect();
                    // No overlay outlasts its iteration.
                    let length: u64 = body.iter().map(Span::duration).sum();
                    let (mut start, mut next) = (0, 0);
                    for s in &mut body {
                        if s.overlay {
                            s.cycles = s.cycles.min(length - start);
                        } else {
                            start = next;
                            next += s.cycles;
                        }
                    }
                    Block { body, repeat }
                })
                .collect();
            let total: u64 = blocks.iter().map(Block::cycles).sum();
            let mut model = Lanes { counts: [0; 5], wraps: [0; 5], wrap };
            let mut cursor = Cursor::new(Box::new(blocks.clone().into_iter()));
            let mut done = 0;
            for b in budgets.iter().cycle().take(400) {
                let (ran, exit) = run(&mut model, &mut cursor, *b);
                done += ran;
                let expected = cycle_by_cycle(&blocks, done);
                for (lane, &expected) in expected.iter().enumerate() {
                    proptest::prop_assert_eq!(model.wraps[lane] * wrap + model.counts[lane], expected, "lane {} after {} cycles", lane, done);
                    let keep = |s: &Span| lane == 4 || usize::from(s.thread) == lane;
                    proptest::prop_assert_eq!(Totals::of(blocks.clone(), done, keep).get(Signal::Instructions), expected);
                }
                if exit == Exit::EndOfStream {
                    break;
                }
            }
            proptest::prop_assert!(done <= total);
            proptest::prop_assert_eq!(Totals::of(blocks, u64::MAX, |_| true).cycles, total);
        }
    }
}
