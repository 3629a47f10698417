//! Which event selections of the sun4v and DRAM PMUs the built-in workloads exercise:
//! every selection that counts zero on all of them must be listed here with its reason
//! (docs/machines.md repeats the list). The T4 strand PMU, ARM11 and Montecito have
//! their own lists in the machine tests.

mod common;

use std::collections::HashMap;

use pmukit_arch::Catalog;
use pmukit_sim::models::kt::KtConfig;
use pmukit_sim::program::builtin::WORKLOADS;
use pmukit_sim::stat::{stat, StatOptions};

/// Selections that count zero on every built-in workload, and why. KT's memory
/// controllers never see a read of a line whose write is queued. The writes they
/// queue are the L2's dirty victims, the devices' writes that miss the L2, and stores
/// to non-cacheable memory. On T4 the devices' writes of the packets received go to
/// memory and the kernel reads them at once (ERRATA MSP20), but KT's L2 is the chip's
/// and holds the recycled socket buffers, so the devices' writes land there; a victim
/// of KT's 24-way L2 is the least recently used line of its set, read again within the
/// few hundred cycles its write waits for its bank only by a loop over more than 24
/// lines 256 KB apart (one set), which no program runs; and no program reads back what
/// it wrote to the non-cacheable frame buffer.
const NEVER: &[(&str, &str)] = &[(
    "sparc-kt-dram::WRITEBACK_BUFFER_HITS",
    "the devices' writes land in KT's L2, no program re-reads an L2 victim within its write's few hundred cycles, and none reads non-cacheable memory it wrote",
)];

/// PMUs more than 5 % of whose selections count zero (issue 43 is open for them).
const SHORT_OF_THE_BAR: &[&str] = &["sparc-kt-dram"];

/// Counts of every selection of `pmu` summed over the built-in workloads, `per_run`
/// selections a run.
fn counts(pmu: &str, cycles: u64, per_run: usize) -> HashMap<String, u64> {
    let cat = Catalog::builtin();
    let p = cat.pmu(pmu).unwrap();
    let names: Vec<String> = common::selections(p).into_iter().map(|(name, _, _)| name).collect();
    let mut total = HashMap::new();
    for w in WORKLOADS {
        for names in names.chunks(per_run) {
            let sels: Vec<_> = names.iter().map(|n| cat.resolve(n, pmu).unwrap_or_else(|e| panic!("{n}: {e}"))).collect();
            // Every group of a multiplexed set gets its turns within the run.
            // KT on two nodes, so that misses can be remote.
            let kt = KtConfig { nodes: 2, ..KtConfig::default() };
            let opts = StatOptions { workload: w.name.to_string(), seed: 3, cycles, mux_interval: 50_000, kt, ..StatOptions::default() };
            let r = stat(&cat, &sels, &opts, &mut |_| {}).unwrap();
            for (name, e) in names.iter().zip(&r.events) {
                *total.entry(format!("{pmu}::{name}")).or_default() += e.count.unwrap_or(0);
            }
        }
    }
    total
}

#[test]
fn every_selection_counts_on_some_workload_or_is_listed_with_its_reason() {
    let mut zero = Vec::new();
    // The DRAM PMUs' events come in bursts (write starvation in memory-bound phases):
    // each pair is counted on the two counters of an MCU for the whole run rather than
    // multiplexed, so that a burst cannot fall between an event's turns.
    for (pmu, cycles, per_run) in [
        ("niagara", 10_000_000, usize::MAX),
        ("sparc-kt", 10_000_000, usize::MAX),
        ("sparc-kt-dram", 40_000_000, 2),
        ("sparc-t4-dram", 40_000_000, 2),
    ] {
        let mut c: Vec<(String, u64)> = counts(pmu, cycles, per_run).into_iter().collect();
        c.sort();
        let zeros = c.iter().filter(|(_, n)| *n == 0).count();
        eprintln!("{pmu}: {zeros} of {} count zero", c.len());
        // Issue 43's bar: at most 5 % of the selections count zero (none of these
        // PMUs has a selection the specification says counts nothing). KT's DRAM PMU
        // is still short of it: one of its 13 selections is 7.7 %.
        let meets = 20 * zeros <= c.len();
        assert_eq!(meets, !SHORT_OF_THE_BAR.contains(&pmu), "{pmu}: {zeros} of {} selections count zero", c.len());
        zero.extend(c.into_iter().filter(|(_, n)| *n == 0).map(|(name, _)| name));
    }
    let known: Vec<&str> = NEVER.iter().map(|(n, _)| *n).collect();
    let unexplained: Vec<&String> = zero.iter().filter(|z| !known.contains(&z.as_str())).collect();
    assert!(unexplained.is_empty(), "count zero without a documented reason: {unexplained:?}");
    let stale: Vec<&&str> = known.iter().filter(|k| !zero.iter().any(|z| z == *k)).collect();
    assert!(stale.is_empty(), "documented as never counting, but counts: {stale:?}");
}
