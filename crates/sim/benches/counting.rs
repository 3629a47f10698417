//! The counting path: a PMU model counting a stream span by span, every counter of
//! every hardware thread armed through its driver's register writes, overflow
//! interrupts serviced. The stream is 4,096 different spans, each a block of its
//! own that runs once (nothing to skip), cycling through threads, privilege levels
//! and signals, 16 times over: 65,536 spans per iteration.
//!
//! The baseline adds each span's signals into a bare array, one increment per
//! counter (`args`: ARM1176's 3, Montecito's 2 × 12, T4's 8 × 4), so a model's time
//! over the baseline's with its own number of counters is the counting path's cost
//! per counter update against the cheapest update there is. The models read the
//! blocks through the cursor and engine that `pmu stat` uses; the baseline reads
//! the same blocks directly.
//!
//! Run: `cargo bench -p pmukit-sim --bench counting`

use pmukit_arch::{encode_set, Catalog, EncodedSet};
use pmukit_sim::drivers::arm11::Arm11Driver;
use pmukit_sim::drivers::montecito::MontecitoDriver;
use pmukit_sim::drivers::t4::T4Driver;
use pmukit_sim::drivers::Runs;
use pmukit_sim::stream::{Block, Cursor, Privilege, Signal, Span};

fn main() {
    divan::main();
}

const DISTINCT: usize = 4096;
const PASSES: usize = 16;
const SPANS: usize = DISTINCT * PASSES;

/// Span `k` of the stream on a machine of `threads` hardware threads.
fn span(k: usize, threads: usize) -> Span {
    let mut s = Span::new(1 + (k % 7) as u64, 0x1_0000 + 16 * k as u64);
    s.thread = (k % threads) as u8;
    s.privilege = if k.is_multiple_of(5) { Privilege::KERNEL } else { Privilege::USER };
    for j in 0..4 {
        s.signals.set(Signal::ALL[(k * 7 + j * 13) % Signal::COUNT], 1 + (j % 2) as u8);
    }
    s.signals.set(Signal::Instructions, 1 + (k % 3) as u8);
    s
}

fn spans(threads: usize) -> Vec<Span> {
    (0..DISTINCT).map(|k| span(k, threads)).collect()
}

/// The stream's blocks, made before the clock starts (they are freed as they are
/// consumed, inside the measurement, as in any run).
fn blocks(spans: &[Span]) -> Vec<Block> {
    std::iter::repeat_n(spans, PASSES).flatten().map(|&s| Block { body: vec![s], repeat: 1 }).collect()
}

fn cursor(spans: &[Span]) -> (Cursor, u64) {
    let cycles = spans.iter().map(|s| s.cycles).sum::<u64>() * PASSES as u64;
    (Cursor::new(Box::new(blocks(spans).into_iter())), cycles)
}

/// Events of `pmu` added one by one, in table order, while the set still encodes:
/// every counter ends up armed.
fn armed(cat: &Catalog, pmu: &str) -> EncodedSet {
    let p = cat.pmu(pmu).unwrap();
    let mut sels = Vec::new();
    for e in p.events() {
        let Ok(sel) = cat.resolve(&format!("{pmu}::{}", e.name), pmu) else { continue };
        sels.push(sel);
        if encode_set(p, &sels).is_err() {
            sels.pop();
        }
        if sels.len() == p.desc.counters.len() {
            break;
        }
    }
    assert_eq!(sels.len(), p.desc.counters.len(), "{pmu}: every counter armed");
    encode_set(p, &sels).unwrap()
}

/// `driver` with `set` started counts the stream; the clock runs over `run` only.
fn count(b: divan::Bencher, driver: impl Fn() -> Box<dyn Runs>, set: &EncodedSet, spans: &[Span]) {
    b.counter(divan::counter::ItemsCount::new(SPANS))
        .with_inputs(|| {
            let mut d = driver();
            d.start(set);
            (d, cursor(spans))
        })
        .bench_local_values(|(mut d, (mut c, cycles))| {
            let ran = d.run(&mut c, cycles);
            (ran, d)
        });
}

#[divan::bench(args = [3, 24, 32])]
fn baseline_bare_increments(b: divan::Bencher, counters: usize) {
    let spans = spans(1);
    let signals: Vec<Signal> = (0..counters).map(|i| Signal::ALL[(i * 5) % Signal::COUNT]).collect();
    b.counter(divan::counter::ItemsCount::new(SPANS)).with_inputs(|| blocks(&spans)).bench_local_values(|blocks| {
        let mut counts = vec![0u64; counters];
        for block in blocks {
            for span in &block.body {
                for (n, &s) in counts.iter_mut().zip(&signals) {
                    *n += span.signals.get(s) * span.cycles * block.repeat;
                }
            }
        }
        counts.iter().sum::<u64>()
    });
}

#[divan::bench]
fn arm1176_three_counters(b: divan::Bencher) {
    let cat = Catalog::builtin();
    count(b, || Box::new(Arm11Driver::new("arm1176")), &armed(&cat, "arm1176"), &spans(1));
}

#[divan::bench]
fn montecito_two_threads_twelve_counters(b: divan::Bencher) {
    let cat = Catalog::builtin();
    count(b, || Box::new(MontecitoDriver::new(2)), &armed(&cat, "montecito"), &spans(2));
}

#[divan::bench]
fn t4_eight_strands_four_counters(b: divan::Bencher) {
    let cat = Catalog::builtin();
    let pmu = cat.pmu("sparc-t4").unwrap();
    count(b, || Box::new(T4Driver::new(pmu, 8)), &armed(&cat, "sparc-t4"), &spans(8));
}
