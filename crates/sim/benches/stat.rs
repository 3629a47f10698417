//! Simulation speed. The baseline, `baseline_span_totals`, sums a stream of ready-made
//! spans of 100 cycles each (what consuming the event stream costs, with no machine
//! behind it); `machine_*` run each workload's program through a chip's machine model
//! and sum its blocks; the `stat_*` benchmarks add the PMU model, the driver and
//! multiplexing on top.
//!
//! Run: `cargo bench -p pmukit-sim --bench stat`

use pmukit_arch::Catalog;
use pmukit_sim::stat::{self, stat, StatOptions};
use pmukit_sim::stream::{Block, Signal, Span, Totals};

const CYCLES: u64 = 1_000_000_000;
/// Machine models alone run fewer cycles: the slowest take seconds per 10^8.
const MACHINE_CYCLES: u64 = 200_000_000;

fn main() {
    divan::main();
}

/// Ten million spans of 100 cycles, one block each, summed.
#[divan::bench(sample_count = 3, sample_size = 1)]
fn baseline_span_totals() -> u64 {
    let span: Span = Span::new(100, 0x1_0000).with(Signal::Instructions, 1);
    let blocks = std::iter::repeat_with(move || Block { body: vec![span], repeat: 1 });
    Totals::of(blocks, divan::black_box(CYCLES), |_| true).cycles
}

/// A machine model alone: the program's blocks on the machine of `pmu`, summed.
fn machine(pmu: &str, workload: &str) -> u64 {
    machine_threads(pmu, workload, None)
}

/// [`machine`] with `threads` hardware threads running the workload (`None`: the
/// machine's default).
fn machine_threads(pmu: &str, workload: &str, threads: Option<usize>) -> u64 {
    let cat = Catalog::builtin();
    let opts = StatOptions { workload: workload.to_string(), seed: 1, threads, ..StatOptions::default() };
    let (blocks, _) = stat::blocks(&[cat.pmu(pmu).unwrap()], &opts, stat::Reads::ALL).unwrap();
    let blocks = blocks.every();
    Totals::of(blocks, divan::black_box(MACHINE_CYCLES), |_| true).cycles
}

#[divan::bench(args = ["compute", "branchy", "stream", "mixed"], sample_count = 3, sample_size = 1)]
fn machine_arm11(workload: &str) -> u64 {
    machine("arm1176", workload)
}

/// SPARC T4, eight strands.
#[divan::bench(args = ["compute", "branchy", "stream", "mixed"], sample_count = 3, sample_size = 1)]
fn machine_t4(workload: &str) -> u64 {
    machine("sparc-t4", workload)
}

/// Niagara, four strands.
#[divan::bench(args = ["compute", "mixed"], sample_count = 3, sample_size = 1)]
fn machine_niagara(workload: &str) -> u64 {
    machine("niagara", workload)
}

/// How the cost grows with the hardware threads running `mixed`: T4 strands (one to
/// eight) and Montecito threads (one or two), for the same number of cycles.
#[divan::bench(args = [1, 2, 4, 8], sample_count = 3, sample_size = 1)]
fn machine_t4_threads(threads: usize) -> u64 {
    machine_threads("sparc-t4", "mixed", Some(threads))
}

#[divan::bench(args = [1, 2], sample_count = 3, sample_size = 1)]
fn machine_montecito_threads(threads: usize) -> u64 {
    machine_threads("montecito", "mixed", Some(threads))
}

/// Montecito, two threads.
#[divan::bench(args = ["compute", "branchy", "stream", "mixed"], sample_count = 3, sample_size = 1)]
fn machine_montecito(workload: &str) -> u64 {
    machine("montecito", workload)
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
#[divan::bench(args = ["compute", "mixed"], sample_count = 3, sample_size = 1)]
fn stat_t4_core_and_dram(workload: &str) -> u64 {
    let cat = Catalog::builtin();
    let events =
        ["INSTR.ALL", "CYCLES", "INSTR.LOADS", "INSTR.STORES", "BR_MISPREDICT.ALL", "DC_MISS_ASYNC.ANY", "sparc-t4-dram::ALL_READS"];
    let sels: Vec<_> = events.iter().map(|e| cat.resolve(e, "sparc-t4").unwrap()).collect();
    let opts = StatOptions { workload: workload.to_string(), seed: 1, cycles: divan::black_box(CYCLES), ..StatOptions::default() };
    stat(&cat, &sels, &opts, &mut |_| {}).unwrap().cycles
}

/// SPARC KT through the hypercalls: three L2-miss kinds multiplexed on eight strands'
/// pic0 and two DRAM events on the four MCUs of two nodes, polled every 2^21 cycles.
#[divan::bench(args = ["compute", "mixed"], sample_count = 3, sample_size = 1)]
fn stat_kt_hypercalls(workload: &str) -> u64 {
    let cat = Catalog::builtin();
    let events = ["L2_MISSES", "L2_MISSES_LOCAL", "L2_MISSES_REMOTE", "sparc-kt-dram::ALL_READS", "sparc-kt-dram::ALL_WRITES"];
    let sels: Vec<_> = events.iter().map(|e| cat.resolve(e, "sparc-kt").unwrap()).collect();
    let kt = pmukit_sim::models::kt::KtConfig { nodes: 2, ..Default::default() };
    let opts = StatOptions { workload: workload.to_string(), seed: 1, cycles: divan::black_box(CYCLES), kt, ..StatOptions::default() };
    stat(&cat, &sels, &opts, &mut |_| {}).unwrap().cycles
}

/// Niagara MMU statistics: four vCPUs' buffers, read once at the end.
#[divan::bench(args = ["compute", "mixed"], sample_count = 3, sample_size = 1)]
fn stat_niagara_mmu_statistics(workload: &str) -> u64 {
    let cat = Catalog::builtin();
    let events = ["IMMU_TSB_HITS", "IMMU_TSB_TICKS", "DMMU_TSB_HITS", "DMMU_TSB_TICKS"];
    let sels: Vec<_> = events.iter().map(|e| cat.resolve(e, "niagara").unwrap()).collect();
    let opts = StatOptions { workload: workload.to_string(), seed: 1, cycles: divan::black_box(CYCLES), ..StatOptions::default() };
    stat(&cat, &sels, &opts, &mut |_| {}).unwrap().cycles
}

/// Montecito: two threads, eight events on each (thresholds, the L1D set through PMD5,
/// a Floating L3 event), 47-bit counters.
#[divan::bench(args = ["compute", "mixed"], sample_count = 3, sample_size = 1)]
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
