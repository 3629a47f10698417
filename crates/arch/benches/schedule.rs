//! Scheduling speed on Montecito. The baseline places twelve events that no rule
//! binds (plain bipartite matching); the others add the rule-bound events of §4.8's
//! L1D and L2D sets, which the scheduler searches exhaustively, and a refusal, which
//! it shrinks to a minimal conflicting set.
//!
//! Run: `cargo bench -p pmukit-arch --bench schedule`

use pmukit_arch::{allowed_counters, assign, Catalog};
use pmukit_core::event_string::EventSel;

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
