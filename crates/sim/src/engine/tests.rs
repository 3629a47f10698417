use super::*;
use crate::stream::{groups, Block, MemRef, Privilege, Signal, Totals};

/// Counter 0 counts instructions and wraps at `wrap`; its overflow freezes counter
/// 1, which counts the cycles of spans whose data is in an odd 64-byte line (the
/// address class), without stopping the run. The others count nothing: they make
/// the model large enough for the engine to cache its rates.
struct Toy {
    counts: [u64; 2],
    wrap: u64,
    frozen: bool,
}

impl Counters for Toy {
    fn counters(&self) -> usize {
        DIRECT + 1
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

impl Counting for Toy {
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

/// Counter 0 grows by `rate` of each span per cycle; the others count nothing and
/// make the model large enough for the cache.
struct One<F> {
    rate: F,
    count: u64,
}

impl<F> Counters for One<F> {
    fn counters(&self) -> usize {
        DIRECT + 1
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

impl<F: Fn(&Span) -> u64> Counting for One<F> {
    fn rate(&self, i: usize, span: &Span) -> u64 {
        if i == 0 {
            (self.rate)(span)
        } else {
            0
        }
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
    // Instructions of primary spans only, as a SPARC T4 counts the core's cycles.
    let mut model = One { rate: |s: &Span| if s.overlay { 0 } else { s.signals.get(Signal::Instructions) }, count: 0 };
    run(&mut model, &mut Cursor::new(Box::new(blocks.into_iter())), u64::MAX);
    assert_eq!(model.count, 2 * (3 + 5 + 2 * 11));
}

/// A digit for each field of a span that the [`Counting`] contract lets a rate read
/// besides its signals.
fn fields(s: &Span) -> u64 {
    let mem = s.mem.map_or(0, |m| 1 + u64::from(m.write) + 2 * u64::from(m.size));
    let branch = s.branch.map_or(0, |b| 1 + u64::from(b.taken) + 2 * u64::from(b.mispredicted));
    let q = &s.queues;
    1 + u64::from(s.thread)
        + 10 * s.privilege as u64
        + 100 * u64::from(s.overlay)
        + 1_000 * mem
        + 100_000 * branch
        + 1_000_000 * u64::from(q.read_cycles + q.write_cycles + q.bank_stall_cycles)
        + 10_000_000 * u64::from(q.writeback_hits + q.writes_starved)
}

#[test]
fn spans_apart_in_any_field_a_rate_may_read_are_kinds_apart() {
    let base = Span::new(1, 0x1000).with(Signal::Instructions, 1);
    let load = MemRef { addr: 0x40, stride: 0, size: 4, write: false };
    let branch = Branch { target: 0x2000, taken: false, mispredicted: false };
    let variants = [
        base,
        Span { thread: 1, ..base },
        Span { privilege: Privilege::Cpl0, ..base },
        Span { mem: Some(load), ..base },
        Span { mem: Some(MemRef { write: true, ..load }), ..base },
        Span { mem: Some(MemRef { size: 8, ..load }), ..base },
        Span { branch: Some(branch), ..base },
        Span { branch: Some(Branch { taken: true, ..branch }), ..base },
        Span { branch: Some(Branch { mispredicted: true, ..branch }), ..base },
        Span { queues: MemoryQueues { read_cycles: 1, ..MemoryQueues::default() }, ..base },
        Span { queues: MemoryQueues { write_cycles: 2, ..MemoryQueues::default() }, ..base },
        Span { queues: MemoryQueues { bank_stall_cycles: 3, ..MemoryQueues::default() }, ..base },
        Span { queues: MemoryQueues { writeback_hits: 1, ..MemoryQueues::default() }, ..base },
        Span { queues: MemoryQueues { writes_starved: 2, ..MemoryQueues::default() }, ..base },
    ];
    // Each variant once, after the base kind has filled the cache.
    let body: Vec<Span> = variants.iter().flat_map(|&v| [base, v]).collect();
    let mut model = One { rate: fields, count: 0 };
    let expected: u64 = body.iter().map(fields).sum();
    let blocks = vec![Block { body, repeat: 1 }];
    run(&mut model, &mut Cursor::new(Box::new(blocks.into_iter())), u64::MAX);
    assert_eq!(model.count, expected);
}

/// Counter `t` (for lanes 0-3) counts lane `t`'s instructions, counter 4 every
/// lane's (a core-wide event, Montecito's `.all`), each wrapping at `wrap` and
/// stopping the run when it does; the wraps are counted apart.
struct Lanes {
    counts: [u64; 5],
    wraps: [u64; 5],
    wrap: u64,
}

impl Counters for Lanes {
    fn counters(&self) -> usize {
        // More than DIRECT: the rates go through the cache.
        6
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

impl Counting for Lanes {
    fn rate(&self, i: usize, span: &Span) -> u64 {
        let n = span.signals.get(Signal::Instructions);
        match i {
            0..4 => n * u64::from(usize::from(span.thread) == i),
            4 => n,
            _ => 0,
        }
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
