//! Scheduling speed on Montecito. The baseline places twelve events that no rule
//! binds (plain bipartite matching); the others add the rule-bound events of §4.8's
//! L1D and L2D sets, which the scheduler searches exhaustively, and a refusal, which
//! it shrinks to a minimal conflicting set.
//!
//! The corpus benchmarks schedule random sets of 2 to 12 Montecito selections (a
//! fixed corpus drawn with a fixed seed, resolved beforehand) the way `pmu schedule`
//! does: placed together, or else refused with the explanation and split into
//! multiplexing groups. `corpus_every_set` runs the whole corpus (its per-item time
//! is the mean per set); `corpus_median_set` and `corpus_worst_set` run the set that
//! took the median and the longest time when the corpus was timed set by set at
//! start-up (their names are printed to standard error).
//!
//! Run: `cargo bench -p pmukit-arch --bench schedule`

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use pmukit_arch::{allowed_counters, assign, plan, Catalog};
use pmukit_core::event_string::EventSel;
use pmukit_core::pmu::Pmu;

fn main() {
    divan::main();
}

fn sels(events: &[&str]) -> (Catalog, Vec<EventSel>) {
    let cat = Catalog::builtin();
    let sels = events.iter().map(|e| cat.resolve(e, "montecito").unwrap()).collect();
    (cat, sels)
}

fn place(events: &[&str]) -> bool {
    let (cat, sels) = sels(events);
    let pmu = cat.pmu("montecito").unwrap();
    let allowed = allowed_counters(pmu, &sels);
    assign(pmu, divan::black_box(&sels), &allowed).is_ok()
}

const FREE: [&str; 12] = [
    "CPU_OP_CYCLES",
    "IA64_INST_RETIRED",
    "BACK_END_BUBBLE.ALL",
    "BACK_END_BUBBLE.FE",
    "BE_EXE_BUBBLE.ALL",
    "BE_FLUSH_BUBBLE.ALL",
    "BR_MISPRED_DETAIL.ALL.ALL_PRED",
    "BR_MISPRED_DETAIL.ALL.WRONG_PATH",
    "INST_DISPERSED",
    "DISP_STALLED",
    "SYLL_NOT_DISPERSED.ALL",
    "L3_MISSES",
];

#[divan::bench]
fn baseline_twelve_free_events() -> bool {
    place(&FREE)
}

#[divan::bench]
fn twelve_events_with_l1d_and_l2d_sets() -> bool {
    place(&[
        "L1D_READS_SET1",
        "L1D_READ_MISSES",
        "DATA_REFERENCES_SET1",
        "L2D_REFERENCES.ALL",
        "L2D_BAD_LINES_SELECTED.ANY",
        "L2D_STORE_HIT_SHARED.ANY",
        "CPU_OP_CYCLES",
        "IA64_INST_RETIRED",
        "BACK_END_BUBBLE.ALL",
        "L3_MISSES",
        "INST_DISPERSED",
        "DISP_STALLED",
    ])
}

#[divan::bench]
fn refusal_shrunk_to_the_conflicting_events() -> bool {
    place(&[
        "L1D_READS_SET0",
        "LOADS_RETIRED",
        "CPU_OP_CYCLES",
        "IA64_INST_RETIRED",
        "L2D_REFERENCES.ALL",
        "L2D_OZQ_ACQUIRE",
        "L2D_BAD_LINES_SELECTED.ANY",
    ])
}

/// Sets in the corpus, and the seed they are drawn with.
const CORPUS_SETS: usize = 400;
const SEED: u64 = 0x5eed;

/// What `pmu schedule` decides for a set, short of encoding registers
/// (`pmukit_arch::plan`): that they fit together, or why they cannot all be counted
/// and the multiplexing groups.
fn schedule_set(pmu: &Pmu, sels: &[EventSel]) -> usize {
    let allowed = allowed_counters(pmu, sels);
    plan(pmu, sels, &allowed, &[]).map_or(0, |(why, g)| why.map_or(0, |w| w.len()) + g.groups.len())
}

struct Corpus {
    cat: Catalog,
    sets: Vec<Vec<EventSel>>,
    /// Positions of the median and the slowest set, timed one by one.
    median: usize,
    worst: usize,
}

/// Every Montecito selection (each event, and each of its unit masks) that resolves,
/// drawn into sets by a fixed linear congruential sequence: the same corpus every run.
fn corpus() -> &'static Corpus {
    static CORPUS: OnceLock<Corpus> = OnceLock::new();
    CORPUS.get_or_init(|| {
        let cat = Catalog::builtin();
        let pmu = cat.pmu("montecito").unwrap();
        let all: Vec<EventSel> = pmu.selections().filter_map(|n| cat.resolve(&n, "montecito").ok()).collect();
        let mut state = SEED;
        let mut next = |bound: usize| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((state >> 33) % bound as u64) as usize
        };
        let sets: Vec<Vec<EventSel>> = (0..CORPUS_SETS)
            .map(|_| {
                let n = 2 + next(11);
                (0..n).map(|_| all[next(all.len())].clone()).collect()
            })
            .collect();
        let time = |set: &[EventSel]| {
            (0..5)
                .map(|_| {
                    let start = Instant::now();
                    divan::black_box(schedule_set(pmu, set));
                    start.elapsed()
                })
                .min()
                .unwrap_or(Duration::ZERO)
        };
        let mut order: Vec<(Duration, usize)> = sets.iter().enumerate().map(|(i, s)| (time(s), i)).collect();
        order.sort();
        let (median, worst) = (order[order.len() / 2].1, order[order.len() - 1].1);
        for (what, i) in [("median", median), ("worst", worst)] {
            let names: Vec<String> = sets[i].iter().map(EventSel::name).collect();
            eprintln!("{what} set ({} events): {}", names.len(), names.join(","));
        }
        drop(order);
        Corpus { cat, sets, median, worst }
    })
}

#[divan::bench]
fn corpus_every_set(b: divan::Bencher) {
    let c = corpus();
    let pmu = c.cat.pmu("montecito").unwrap();
    b.counter(divan::counter::ItemsCount::new(c.sets.len()))
        .bench(|| c.sets.iter().map(|s| schedule_set(pmu, divan::black_box(s))).sum::<usize>());
}

#[divan::bench]
fn corpus_median_set(b: divan::Bencher) {
    let c = corpus();
    let pmu = c.cat.pmu("montecito").unwrap();
    b.bench(|| schedule_set(pmu, divan::black_box(&c.sets[c.median])));
}

#[divan::bench]
fn corpus_worst_set(b: divan::Bencher) {
    let c = corpus();
    let pmu = c.cat.pmu("montecito").unwrap();
    b.bench(|| schedule_set(pmu, divan::black_box(&c.sets[c.worst])));
}
