//! `pmu stat` on the simulated ARM11: exact 64-bit counts, multiplexing and metrics.

use pmukit_arch::Catalog;
use pmukit_core::event_string::EventSel;
use pmukit_core::report::Style;
use pmukit_sim::stat::{self, stat, StatError, StatOptions};
use pmukit_sim::stream::{Signal, Totals};

fn sels(cat: &Catalog, events: &[&str]) -> Vec<EventSel> {
    events.iter().map(|e| cat.resolve(e, "arm1176").unwrap()).collect()
}

fn opts(workload: &str, cycles: u64) -> StatOptions {
    StatOptions { workload: workload.to_string(), seed: 7, cycles, ..StatOptions::default() }
}

/// What the ARM1176 machine computes for the workload: the ground truth of the counts.
fn totals(workload: &str, cycles: u64) -> Totals {
    let cat = Catalog::builtin();
    Totals::of(stat::blocks(&[cat.pmu("arm1176").unwrap()], &opts(workload, cycles), stat::Reads::ALL).unwrap().0.every(), cycles, |_| true)
}

#[test]
fn counts_stay_exact_across_more_than_2_pow_33_events_on_32_bit_counters() {
    let cat = Catalog::builtin();
    let cycles = 10_000_000_000u64;
    assert!(cycles > 1 << 33);
    // Cycles on CCNT, cycles again on PMN0, instructions on PMN1.
    let r = stat(&cat, &sels(&cat, &["CPU_CYCLES", "CPU_CYCLES", "INSTR_EXEC"]), &opts("compute", cycles), &mut |_| {}).unwrap();
    let truth = totals("compute", cycles);
    let counters: Vec<&str> = r.events.iter().map(|e| e.counters[0].as_str()).collect();
    assert_eq!(counters, ["CCNT", "PMN0", "PMN1"]);
    assert_eq!(r.events[0].count, Some(cycles));
    assert_eq!(r.events[1].count, Some(cycles));
    assert_eq!(r.events[2].count, Some(truth.signals[Signal::Instructions as usize]));
    assert!(r.events[2].count.unwrap() > 1 << 33, "the compute workload executes more than 2^33 instructions");
    assert!(r.events.iter().all(|e| !e.scaled && e.enabled == cycles && e.running == cycles));
}

#[test]
fn every_counted_event_matches_the_workload_totals() {
    let cat = Catalog::builtin();
    let cycles = 50_000_000;
    let truth = totals("mixed", cycles);
    let pairs = [
        ("DCACHE_ACCESS", Signal::DCacheAccesses),
        ("DCACHE_MISS", Signal::DCacheMisses),
        ("BR_EXEC", Signal::Branches),
        ("BR_MISPREDICT", Signal::BranchMispredicts),
        ("PROC_RET_EXEC_PRED", Signal::ReturnsPredicted),
        ("SW_PC_CHANGE", Signal::PcChanges),
    ];
    for pair in pairs.chunks(2) {
        let r = stat(&cat, &sels(&cat, &[pair[0].0, pair[1].0]), &opts("mixed", cycles), &mut |_| {}).unwrap();
        for (e, (_, signal)) in r.events.iter().zip(pair) {
            assert_eq!(e.count, Some(truth.signals[*signal as usize]), "{}", e.name);
        }
    }
}

#[test]
fn ccnt_divider_counts_every_64th_cycle() {
    let cat = Catalog::builtin();
    let r = stat(&cat, &sels(&cat, &["CPU_CYCLES:d", "INSTR_EXEC"]), &opts("compute", 1_000_000), &mut |_| {}).unwrap();
    assert_eq!(r.events[0].count, Some(1_000_000 / 64));
    let ipc = r.metrics.iter().find(|m| m.name == "ipc_ccnt64").expect("IPC with the divider");
    let expect = r.events[1].count.unwrap() as f64 / (64.0 * (1_000_000 / 64) as f64);
    assert!((ipc.value - expect).abs() < 1e-12);
}

#[test]
fn more_events_than_counters_are_multiplexed_and_scaled() {
    let cat = Catalog::builtin();
    let cycles = 400_000_000;
    let events = ["CPU_CYCLES", "INSTR_EXEC", "BR_EXEC", "DCACHE_ACCESS", "DCACHE_MISS"];
    let r = stat(&cat, &sels(&cat, &events), &opts("compute", cycles), &mut |_| {}).unwrap();
    let truth = totals("compute", cycles);
    // CPU_CYCLES has CCNT to itself: it counts in every group, the whole run (issue
    // 11: it sat in one group at a third of the time while CCNT idled in the others).
    assert_eq!((r.events[0].running, r.events[0].scaled, r.events[0].count), (cycles, false, Some(cycles)));
    for e in &r.events[1..] {
        assert_eq!(e.enabled, cycles, "{} enabled the whole run", e.name);
        assert!(e.running < e.enabled && e.scaled, "{} shared counters", e.name);
        assert_eq!(e.count, Some(((e.raw as u128 * e.enabled as u128 + e.running as u128 / 2) / e.running as u128) as u64));
    }
    // The estimate of a steady workload lands near the truth.
    let instr = r.events[1].count.unwrap() as f64;
    let exact = truth.signals[Signal::Instructions as usize] as f64;
    assert!((instr - exact).abs() / exact < 0.05, "{instr} vs {exact}");
    assert!(r.notes.iter().any(|n| n.contains("multiplexed")));
    assert!(r.render(Style::Human { big_num: true }).contains('%'), "scaled lines show the running percentage");
}

#[test]
fn metrics_are_computed_from_the_counted_events() {
    let cat = Catalog::builtin();
    let r = stat(&cat, &sels(&cat, &["BR_EXEC", "BR_MISPREDICT"]), &opts("branchy", 10_000_000), &mut |_| {}).unwrap();
    let ratio = r.metrics.iter().find(|m| m.name == "branch_prediction_ratio").unwrap();
    let (b, m) = (r.events[0].count.unwrap() as f64, r.events[1].count.unwrap() as f64);
    assert!((ratio.value - 100.0 * (1.0 - m / b)).abs() < 1e-9);
    assert_eq!(ratio.unit, "%");
    assert!(r.metrics.iter().all(|m| m.name != "ipc"), "ipc needs events not counted");
}

#[test]
fn same_seed_same_counts() {
    let cat = Catalog::builtin();
    let run =
        || stat(&cat, &sels(&cat, &["arm1136::DCACHE_MISS", "arm1136::INSTR_EXEC"]), &opts("stream", 5_000_000), &mut |_| {}).unwrap();
    assert_eq!(run().events, run().events);
}

#[test]
fn bad_options_are_errors() {
    let cat = Catalog::builtin();
    let s = sels(&cat, &["INSTR_EXEC"]);
    assert!(matches!(stat(&cat, &s, &opts("nope", 10), &mut |_| {}), Err(StatError::Workload(_))));
    assert!(matches!(stat(&cat, &s, &opts("compute", 0), &mut |_| {}), Err(StatError::NoCycles)));
    let short = StatOptions { mux_interval: 10, ..opts("compute", 10) };
    assert!(matches!(stat(&cat, &s, &short, &mut |_| {}), Err(StatError::ShortInterval(10))));
    let mixed = vec![cat.resolve("arm1156::INSTR_EXEC", "arm1176").unwrap(), s[0].clone()];
    assert!(matches!(stat(&cat, &mixed, &opts("compute", 10), &mut |_| {}), Err(StatError::MixedMachines { .. })));
}
