//! `pmu stat` on the simulated SPARC T4: events counted on every strand through the
//! PCR/PIC driver, privilege filtering, exact totals across 32-bit wraps, multiplexing.

use pmukit_arch::{encode_set, Catalog};
use pmukit_core::event_string::EventSel;
use pmukit_sim::drivers::t4::T4Driver;
use pmukit_sim::drivers::{self, Driver, Runs};
use pmukit_sim::stat::{self, stat, StatOptions};
use pmukit_sim::stream::{Block, Cursor, MemRef, Signal, Span, Totals, SPARC};

/// The signals the T4 machine computes for `workload` (seed 3, eight strands) over
/// `cycles`, in the spans `keep` accepts.
fn totals_matching(workload: &str, cycles: u64, keep: impl Fn(&Span) -> bool) -> Totals {
    let cat = Catalog::builtin();
    let opts = StatOptions { workload: workload.to_string(), seed: 3, cycles, ..StatOptions::default() };
    let (blocks, _) = stat::blocks(&[cat.pmu("sparc-t4").unwrap()], &opts, stat::Reads::ALL).unwrap();
    let blocks = blocks.every();
    Totals::of(blocks, cycles, keep)
}

fn totals(workload: &str, cycles: u64) -> Totals {
    totals_matching(workload, cycles, |_| true)
}

fn sels(cat: &Catalog, events: &[&str]) -> Vec<EventSel> {
    events.iter().map(|e| cat.resolve(e, "sparc-t4").unwrap()).collect()
}

fn run(events: &[&str], workload: &str, cycles: u64) -> pmukit_core::report::StatReport {
    let cat = Catalog::builtin();
    let opts = StatOptions { workload: workload.to_string(), seed: 3, cycles, ..StatOptions::default() };
    stat(&cat, &sels(&cat, events), &opts, &mut |_| {}).unwrap()
}

#[test]
fn t4_counts_match_the_workload_on_all_eight_strands() {
    let cycles = 300_000_000;
    let r = run(&["INSTR.ALL", "CYCLES", "INSTR.LOADS", "INSTR_SPECIAL.TAKEN_BRANCHES"], "mixed", cycles);
    let truth = totals("mixed", cycles);
    assert_eq!(r.events[0].count, Some(truth.get(Signal::Instructions)));
    // TABLE 10-2 sl 26: each of the eight strands counts every cycle, its own and those
    // it waits ready for its turn in (ERRATA MSP1).
    assert_eq!(r.events[1].count, Some(8 * cycles));
    assert_eq!(r.events[2].count, Some(truth.get(Signal::Loads)));
    assert_eq!(r.events[3].count, Some(truth.get(Signal::BranchesTaken)));
}

/// §10.3: the PIC is 32 bits; overflow traps and polling keep the 64-bit total exact
/// through several wraps (driven here on one strand with three instructions a cycle).
#[test]
fn t4_driver_counts_exactly_across_several_wraps() {
    let cat = Catalog::builtin();
    let pmu = cat.pmu("sparc-t4").unwrap();
    let set = encode_set(pmu, &sels(&cat, &["INSTR.ALL:u", "INSTR.ALL:k"])).unwrap();
    let mut driver = T4Driver::new(pmu, 8);
    let span = Span::<SPARC>::new(100, 0x1_0000).with(Signal::Instructions, 3);
    let mut cursor = Cursor::new(Box::new(std::iter::repeat(Block { body: vec![span], repeat: 1 << 20 })));
    driver.start(&set);
    let cycles = 5_000_000_000u64;
    assert_eq!(driver.run(&mut cursor, cycles), cycles);
    assert_eq!(drivers::totals(&driver.stop("sparc-t4")), vec![Some(3 * cycles), Some(0)]);
    assert!(3 * cycles > 3 << 32, "the PIC wrapped three times");
    assert!(driver.interrupts() >= 3, "precise overflow traps were serviced");
}

#[test]
fn t4_privilege_modifiers_select_the_modes_counted() {
    let cycles = 200_000_000;
    let r = run(&["INSTR.ALL:u", "INSTR.ALL:k", "INSTR.ALL"], "mixed", cycles);
    let user = totals_matching("mixed", cycles, |s| s.privilege.is_user());
    let all = totals("mixed", cycles);
    assert_eq!(r.events[0].count, Some(user.get(Signal::Instructions)), "PCR.ut");
    assert_eq!(r.events[1].count, Some(all.get(Signal::Instructions) - user.get(Signal::Instructions)), "PCR.st");
    assert_eq!(r.events[2].count, Some(all.get(Signal::Instructions)), "default: user and privileged");
}

#[test]
fn t4_hyperprivileged_counting_sees_only_the_drivers_own_accesses() {
    let r = run(&["INSTR.SPR_RING_OPS:h"], "compute", 10_000_000);
    // The workload never runs hyperprivileged; the driver's STXA/LDXA to the PCR and
    // PIC ASIs are SPR ring ops (footnote 8) executed in hyperprivileged mode.
    let n = r.events[0].count.unwrap();
    assert!(n > 0 && n < 1000, "{n}");
}

#[test]
fn t4_more_than_four_events_are_multiplexed_and_scaled() {
    let cycles = 100_000_000;
    let r = run(&["CYCLES", "INSTR.ALL", "INSTR.LOADS", "INSTR.STORES", "INSTR.BRANCHES"], "stream", cycles);
    assert!(r.events.iter().all(|e| e.scaled && e.enabled == cycles && e.running < cycles));
    assert!(r.notes.iter().any(|n| n.contains("2 counter groups on sparc-t4")));
    let truth = totals("stream", cycles);
    let est = r.events[2].count.unwrap() as f64;
    let exact = truth.get(Signal::Loads) as f64;
    assert!((est - exact).abs() / exact < 0.1, "{est} vs {exact}");
}

#[test]
fn t4_metrics_use_the_counted_events() {
    let cat = Catalog::builtin();
    let opts = StatOptions { workload: "compute".to_string(), seed: 3, cycles: 10_000_000, threads: Some(1), ..StatOptions::default() };
    let r = stat(&cat, &sels(&cat, &["CYCLES", "INSTR.ALL"]), &opts, &mut |_| {}).unwrap();
    let ipc = r.metrics.iter().find(|m| m.name == "ipc").unwrap();
    assert!((ipc.value - r.events[1].count.unwrap() as f64 / r.events[0].count.unwrap() as f64).abs() < 1e-12);
    // Compiled code on one strand: a quarter of it loads, a third of those used at once
    // (T4's load-use is 4 cycles), within the two-wide select.
    assert!(ipc.value > 0.4 && ipc.value <= 2.0, "compute on one strand: {}", ipc.value);
}

/// §10.5: core and DRAM events count in one run; the combined select codes see all the
/// workload's memory traffic, and the two channel codes add up to it.
#[test]
fn t4_dram_counts_all_memory_traffic_alongside_core_events() {
    let cycles = 100_000_000;
    let events = ["INSTR.ALL", "sparc-t4-dram::ALL_READS", "sparc-t4-dram::ALL_WRITES"];
    let r = run(&events, "stream", cycles);
    let truth = totals("stream", cycles);
    assert_eq!(r.events[0].count, Some(truth.get(Signal::Instructions)));
    assert_eq!(r.events[1].count, Some(truth.get(Signal::MemoryReads)));
    assert_eq!(r.events[2].count, Some(truth.get(Signal::MemoryWrites)));
    assert!(truth.get(Signal::MemoryReads) > 0);
    let bw = r.metrics.iter().find(|m| m.name == "dram_read_bandwidth").expect("bandwidth metric");
    assert!((bw.value - truth.get(Signal::MemoryReads) as f64 * 64.0 / cycles as f64).abs() < 1e-9);
    assert_eq!(bw.unit, "GB/s");

    let r = run(&["sparc-t4-dram::CHANNEL0_READS_WRITES", "sparc-t4-dram::CHANNEL1_READS_WRITES"], "stream", cycles);
    let both = r.events[0].count.unwrap() + r.events[1].count.unwrap();
    assert_eq!(both, truth.get(Signal::MemoryReads) + truth.get(Signal::MemoryWrites));
}

/// TABLES 10-5, 10-6: the DRAM counters are 31 bits with a sticky overflow bit and no
/// interrupt; the driver's reads keep the total exact through many wraps, even when a
/// counter wraps many times within one polling interval (TD15).
#[test]
fn t4_dram_counts_exactly_across_31_bit_wraps() {
    let cat = Catalog::builtin();
    let dram = cat.pmu("sparc-t4-dram").unwrap();
    let set = encode_set(dram, &[cat.resolve("sparc-t4-dram::READ_QUEUE_LATENCY", "sparc-t4").unwrap()]).unwrap();
    let mut driver = T4Driver::new(cat.pmu("sparc-t4").unwrap(), 8);
    // Eight reads a cycle, all to MCU 0, COU port 0 (address 0), that waited 3,000
    // cycles together: 2^31 every 715,828 cycles, about three times per 2^21-cycle poll.
    let mut span = Span::<SPARC>::new(1000, 0x1_0000).with(Signal::MemoryReads, 8);
    span.mem = Some(MemRef { addr: 0, stride: 0, size: 64, write: false });
    span.queues.read_cycles = 3000;
    let mut cursor = Cursor::new(Box::new(std::iter::repeat(Block { body: vec![span], repeat: 1 << 20 })));
    driver.start(&set);
    let cycles = 100_000_000u64;
    driver.run(&mut cursor, cycles);
    let expect = cycles * 3000;
    assert!(expect > 10 << 31, "wraps more than ten times");
    assert_eq!(drivers::totals(&driver.stop("sparc-t4-dram")), vec![Some(expect)]);
}
