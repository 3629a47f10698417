//! `pmu stat -A` / `--per-thread`: every machine's driver reports each hardware thread's
//! (and each memory controller's) count apart; the units add up to the total exactly,
//! a split run counts what an unsplit one does, and each unit's metrics come from its
//! own counts.

use pmukit_arch::Catalog;
use pmukit_core::report::{Aggregation, StatReport, Style};
use pmukit_sim::models::kt::KtConfig;
use pmukit_sim::stat::{stat, StatOptions};

fn run(pmu: &str, events: &[&str], aggregation: Aggregation, opts: StatOptions) -> StatReport {
    let cat = Catalog::builtin();
    let sels: Vec<_> = events.iter().map(|e| cat.resolve(e, pmu).unwrap()).collect();
    stat(&cat, &sels, &StatOptions { aggregation, ..opts }, &mut |_| {}).unwrap()
}

fn short() -> StatOptions {
    // Two KT nodes, so that each has its memory controllers.
    StatOptions { cycles: 20_000_000, kt: KtConfig { nodes: 2, ..KtConfig::default() }, ..StatOptions::default() }
}

/// The unit names of each event, and the check that they sum to its total.
fn units(r: &StatReport) -> Vec<Vec<String>> {
    r.events
        .iter()
        .map(|e| {
            let raw: u64 = e.units.iter().map(|u| u.raw).sum();
            assert_eq!(raw, e.raw, "{}: the units' raw counts add up to the total", e.name);
            e.units.iter().map(|u| u.unit.name.clone()).collect()
        })
        .collect()
}

fn names(prefix: &str, n: usize) -> Vec<String> {
    (0..n).map(|i| format!("{prefix}{i}")).collect()
}

#[test]
fn every_machine_splits_its_counts_by_hardware_thread_and_memory_controller() {
    // PMU, events, and each event's units.
    type Case = (&'static str, &'static [&'static str], Vec<Vec<String>>);
    let cases: &[Case] = &[
        ("arm1176", &["CPU_CYCLES", "INSTR_EXEC"], vec![names("CPU", 1), names("CPU", 1)]),
        ("sparc-t4", &["CYCLES", "INSTR.ALL", "sparc-t4-dram::ALL_READS"], vec![names("CPU", 8), names("CPU", 8), names("MCU", 4)]),
        ("niagara", &["DMMU_TSB_HITS.ALL"], vec![names("CPU", 4)]),
        (
            "sparc-kt",
            &["L2_MISSES", "sparc-kt-dram::ALL_READS"],
            vec![names("CPU", 8), vec!["N0-MCU0".into(), "N0-MCU1".into(), "N1-MCU0".into(), "N1-MCU1".into()]],
        ),
        ("montecito", &["IA64_INST_RETIRED", "CPU_OP_CYCLES:all"], vec![names("CPU", 2), vec!["CPU0-1".to_string()]]),
        ("montecito-st", &["IA64_INST_RETIRED"], vec![names("CPU", 1)]),
    ];
    for (pmu, events, want) in cases {
        let split = run(pmu, events, Aggregation::Cpu, short());
        assert_eq!(&units(&split), want, "{pmu}");
        let summed = run(pmu, events, Aggregation::Total, short());
        for (s, t) in split.events.iter().zip(&summed.events) {
            assert_eq!((s.count, s.raw), (t.count, t.raw), "{pmu} {}: splitting changes no count", s.name);
            assert!(t.units.is_empty(), "summed counts carry no units");
        }
        assert!(summed.unit_metrics.is_empty());
    }
}

/// With two threads, each thread counts its own share: both counted something.
#[test]
fn each_thread_counts_its_own_share() {
    let r = run("montecito", &["IA64_INST_RETIRED"], Aggregation::Cpu, short());
    assert!(r.events[0].units.iter().all(|u| u.raw > 0), "{:?}", r.events[0].units);
    let r = run("sparc-t4", &["INSTR.ALL"], Aggregation::Cpu, StatOptions { threads: Some(2), ..short() });
    assert_eq!(r.events[0].units.len(), 2, "--threads 2 gives two strands");
    assert!(r.events[0].units.iter().all(|u| u.raw > 0), "{:?}", r.events[0].units);
}

/// Each unit's ipc is its own instructions over its own cycles.
#[test]
fn unit_metrics_come_from_the_units_own_counts() {
    let r = run("sparc-t4", &["CYCLES", "INSTR.ALL"], Aggregation::Cpu, StatOptions { threads: Some(2), ..short() });
    assert_eq!(r.unit_metrics.len(), 2);
    for um in &r.unit_metrics {
        let count = |i: usize| r.events[i].units.iter().find(|u| u.unit == um.unit).unwrap().count.unwrap() as f64;
        let ipc = um.metrics.iter().find(|m| m.name == "ipc").unwrap();
        assert!((ipc.value - count(1) / count(0)).abs() < 1e-12, "{}: {} vs {}", um.unit.name, ipc.value, count(1) / count(0));
        assert_eq!(ipc.anchor, r.metrics.iter().find(|m| m.name == "ipc").unwrap().anchor, "printed beside the same event");
    }
}

/// Multiplexed events: each unit's count is scaled as the total is.
#[test]
fn a_multiplexed_units_count_is_scaled_like_the_total() {
    let events = ["CPU_CYCLES", "INSTR_EXEC", "BR_EXEC", "BR_MISPREDICT", "DCACHE_HIT", "DCACHE_MISS"];
    let r = run("arm1176", &events, Aggregation::Cpu, short());
    for e in &r.events {
        assert_eq!(e.units.len(), 1);
        assert_eq!(e.units[0].count, e.count, "{}: one unit, so its scaled count is the total's", e.name);
    }
    assert!(r.events.iter().any(|e| e.scaled));
}

/// `-I` with `-A`: every interval carries each unit's counts since the one before,
/// which add up over the intervals to the unit's total.
#[test]
fn intervals_split_by_unit_add_up_to_the_run() {
    let opts = StatOptions { interval: Some(5_000_000), ..short() };
    let r = run("montecito", &["IA64_INST_RETIRED"], Aggregation::Cpu, opts);
    assert_eq!(r.intervals.len(), 4);
    for (u, total) in r.events[0].units.iter().enumerate() {
        let sum: u64 = r.intervals.iter().map(|iv| iv.events[0].units[u].raw).sum();
        assert_eq!(sum, total.raw, "{}", total.unit.name);
    }
    assert!(r.intervals.iter().all(|iv| iv.unit_metrics.len() == r.unit_metrics.len()));
}

/// The renderings lead each line with perf's unit column.
#[test]
fn renderings_lead_with_the_cpu_or_thread() {
    let opts = StatOptions { threads: Some(2), ..short() };
    let cpu = run("sparc-t4", &["CYCLES", "INSTR.ALL"], Aggregation::Cpu, opts.clone());
    let human = cpu.render(Style::Human { big_num: true });
    assert!(human.lines().any(|l| l.starts_with("CPU1       ") && l.contains("INSTR.ALL")), "{human}");
    let csv = cpu.render(Style::Separated(","));
    assert!(csv.lines().all(|l| l.starts_with("CPU0,") || l.starts_with("CPU1,")), "{csv}");
    assert_eq!(csv.lines().filter(|l| l.contains(",CYCLES,") || l.contains(",INSTR.ALL,")).count(), 4, "{csv}");
    let only = cpu.render(Style::MetricOnlySeparated(","));
    assert!(only.starts_with("cpu,ipc,cpi,\nCPU0,"), "{only}");
    let thread = run("sparc-t4", &["CYCLES"], Aggregation::Thread, opts);
    assert!(
        thread.render(Style::Human { big_num: true }).contains("           mixed-1        "),
        "{}",
        thread.render(Style::Human { big_num: true })
    );
    assert!(thread.render(Style::Separated(";")).lines().any(|l| l.starts_with("mixed-0;")));
    let json = serde_json::to_value(&thread).unwrap();
    assert_eq!(json["aggregation"], "thread");
    assert_eq!(json["events"][0]["units"][1]["thread"], 1);
}
