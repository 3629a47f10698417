//! Simulation speed. The baseline is `totals`, which only walks a signal-level
//! workload's block stream; `machine_arm11` runs the workload's program through the
//! ARM11 machine model; the other benchmarks add the model, the driver and
//! multiplexing on top, so their ratios to the baseline are the cost of simulating the
//! machine and of counting.
//!
//! Run: `cargo bench -p pmukit-sim --bench stat`

use pmukit_arch::Catalog;
use pmukit_sim::stat::{self, stat, StatOptions};
use pmukit_sim::stream::Totals;
use pmukit_sim::workloads::{totals, Profile};

const CYCLES: u64 = 1_000_000_000;

fn main() {
    divan::main();
}

#[divan::bench(args = ["compute", "mixed"])]
fn baseline_stream_totals(workload: &str) -> u64 {
    totals(workload, 1, Profile::ARM11, divan::black_box(CYCLES)).unwrap().cycles
}

/// The ARM1176 machine model alone: the program's blocks, summed.
#[divan::bench(args = ["compute", "branchy", "stream", "mixed"], sample_count = 3, sample_size = 1)]
fn machine_arm11(workload: &str) -> u64 {
    let cat = Catalog::builtin();
    let opts = StatOptions { workload: workload.to_string(), seed: 1, ..StatOptions::default() };
    let (blocks, _) = stat::blocks(&[cat.pmu("arm1176").unwrap()], &opts).unwrap();
    Totals::of(blocks, divan::black_box(CYCLES), |_| true).cycles
}

fn count(workload: &str, events: &[&str]) -> u64 {
    let cat = Catalog::builtin();
    let sels: Vec<_> = events.iter().map(|e| cat.resolve(e, "arm1176").unwrap()).collect();
    let opts = StatOptions { workload: workload.to_string(), seed: 1, cycles: divan::black_box(CYCLES), ..StatOptions::default() };
    stat(&cat, &sels, &opts, &mut |_| {}).unwrap().cycles
}

#[divan::bench(args = ["compute", "mixed"], sample_count = 3, sample_size = 1)]
fn stat_three_counters(workload: &str) -> u64 {
    count(workload, &["CPU_CYCLES", "INSTR_EXEC", "BR_EXEC"])
}

#[divan::bench(args = ["compute", "mixed"], sample_count = 3, sample_size = 1)]
fn stat_multiplexed_six_events(workload: &str) -> u64 {
    count(workload, &["CPU_CYCLES", "INSTR_EXEC", "BR_EXEC", "BR_MISPREDICT", "DCACHE_HIT", "DCACHE_MISS"])
}

/// SPARC T4: eight strands' PICs (6 events, multiplexed) and the DRAM counters.
#[divan::bench(args = ["compute", "mixed"])]
fn stat_t4_core_and_dram(workload: &str) -> u64 {
    let cat = Catalog::builtin();
    let events =
        ["INSTR.ALL", "CYCLES", "INSTR.LOADS", "INSTR.STORES", "BR_MISPREDICT.ALL", "DC_MISS_ASYNC.ANY", "sparc-t4-dram::ALL_READS"];
    let sels: Vec<_> = events.iter().map(|e| cat.resolve(e, "sparc-t4").unwrap()).collect();
    let opts = StatOptions { workload: workload.to_string(), seed: 1, cycles: divan::black_box(CYCLES), ..StatOptions::default() };
    stat(&cat, &sels, &opts, &mut |_| {}).unwrap().cycles
}

/// The T4 baseline: the same workload shaped for eight two-wide strands.
#[divan::bench(args = ["compute", "mixed"])]
fn baseline_stream_totals_t4(workload: &str) -> u64 {
    totals(workload, 1, Profile { issue_width: 2, threads: 8 }, divan::black_box(CYCLES)).unwrap().cycles
}

/// SPARC KT through the hypercalls: three L2-miss kinds multiplexed on eight strands'
/// pic0 and two DRAM events on the four MCUs of two nodes, polled every 2^21 cycles.
#[divan::bench(args = ["compute", "mixed"])]
fn stat_kt_hypercalls(workload: &str) -> u64 {
    let cat = Catalog::builtin();
    let events = ["L2_MISSES", "L2_MISSES_LOCAL", "L2_MISSES_REMOTE", "sparc-kt-dram::ALL_READS", "sparc-kt-dram::ALL_WRITES"];
    let sels: Vec<_> = events.iter().map(|e| cat.resolve(e, "sparc-kt").unwrap()).collect();
    let kt = pmukit_sim::models::kt::KtConfig { nodes: 2, ..Default::default() };
    let opts = StatOptions { workload: workload.to_string(), seed: 1, cycles: divan::black_box(CYCLES), kt, ..StatOptions::default() };
    stat(&cat, &sels, &opts, &mut |_| {}).unwrap().cycles
}

/// Niagara MMU statistics: four vCPUs' buffers, read once at the end.
#[divan::bench(args = ["compute", "mixed"])]
fn stat_niagara_mmu_statistics(workload: &str) -> u64 {
    let cat = Catalog::builtin();
    let events = ["IMMU_TSB_HITS", "IMMU_TSB_TICKS", "DMMU_TSB_HITS", "DMMU_TSB_TICKS"];
    let sels: Vec<_> = events.iter().map(|e| cat.resolve(e, "niagara").unwrap()).collect();
    let opts = StatOptions { workload: workload.to_string(), seed: 1, cycles: divan::black_box(CYCLES), ..StatOptions::default() };
    stat(&cat, &sels, &opts, &mut |_| {}).unwrap().cycles
}

/// The Niagara baseline: the workload shaped for four one-wide strands.
#[divan::bench(args = ["compute", "mixed"])]
fn baseline_stream_totals_niagara(workload: &str) -> u64 {
    totals(workload, 1, Profile { issue_width: 1, threads: 4 }, divan::black_box(CYCLES)).unwrap().cycles
}

/// Montecito: two threads, eight events on each (thresholds, the L1D set through PMD5,
/// a Floating L3 event), 47-bit counters.
#[divan::bench(args = ["compute", "mixed"])]
fn stat_montecito_two_threads(workload: &str) -> u64 {
    let cat = Catalog::builtin();
    let events = [
        "CPU_OP_CYCLES",
        "IA64_INST_RETIRED",
        "IA64_INST_RETIRED:thresh=2",
        "BACK_END_BUBBLE.ALL",
        "BR_MISPRED_DETAIL.ALL.WRONG_PATH",
        "L1D_READ_MISSES",
        "L2D_MISSES",
        "L3_MISSES",
    ];
    let sels: Vec<_> = events.iter().map(|e| cat.resolve(e, "montecito").unwrap()).collect();
    let opts = StatOptions { workload: workload.to_string(), seed: 1, cycles: divan::black_box(CYCLES), ..StatOptions::default() };
    stat(&cat, &sels, &opts, &mut |_| {}).unwrap().cycles
}

/// The Montecito baseline: the workload shaped for two six-wide threads.
#[divan::bench(args = ["compute", "mixed"])]
fn baseline_stream_totals_montecito(workload: &str) -> u64 {
    totals(workload, 1, Profile { issue_width: 6, threads: 2 }, divan::black_box(CYCLES)).unwrap().cycles
}

/// A Lackey trace of about two million lines: the shipped trace of `sum.c`, repeated.
fn lackey_trace() -> Vec<u8> {
    let one = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/traces/sum.lackey")).unwrap();
    one.repeat(170)
}

/// The trace baseline: reading its lines and nothing else.
#[divan::bench(sample_count = 5, sample_size = 1)]
fn baseline_trace_lines(bencher: divan::Bencher) {
    let trace = lackey_trace();
    bencher.bench(|| std::io::BufRead::split(std::io::Cursor::new(divan::black_box(&trace[..])), b'\n').count());
}

/// The same trace parsed into phases and run through the ARM1176 machine.
#[divan::bench(sample_count = 5, sample_size = 1)]
fn trace_lackey_arm11(bencher: divan::Bencher) {
    let trace = lackey_trace();
    bencher.bench(|| {
        let reader = Box::new(std::io::Cursor::new(trace.clone()));
        let (program, _) = pmukit_sim::program::trace::program(reader, "bench").unwrap();
        let cfg = pmukit_sim::machine::arm11::Arm11Config::new(pmukit_sim::machine::arm11::Arm11Core::Arm1176);
        Totals::of(pmukit_sim::machine::arm11(cfg, program, pmukit_sim::machine::run::Skipping::On), u64::MAX, |_| true).cycles
    });
}
