//! Qualification gates the simulated Montecito's counts (§3.2.3.1, §3.3.5-§3.3.7): a
//! range encoded by `pmu stat --irange`/`--drange` counts exactly what the workload's
//! ground truth says happened inside it, the inverse range the rest; and the model's
//! breakpoint registers are privileged and bounded.

use std::collections::HashMap;

use pmukit_arch::montecito::qualify::{Range, Request};
use pmukit_arch::{Catalog, SetOptions};
use pmukit_core::report::StatReport;
use pmukit_sim::models::montecito::{per_cycle, Breakpoint, Montecito, MontecitoError};
use pmukit_sim::stat::{self, stat, StatOptions};
use pmukit_sim::stream::{Privilege, Signal, Span, Totals};

mod common;

const SEED: u64 = 7;
const CYCLES: u64 = 5_000_000;
/// A 64 KB block of the compute workload's text (`program::builtin::layout`).
const HOT: (u64, u64) = (0x1_0000, 0x2_0000);

fn run(events: &[&str], request: Request) -> StatReport {
    let cat = Catalog::builtin();
    let sels: Vec<_> = events.iter().map(|e| cat.resolve(e, "montecito").unwrap()).collect();
    let opts = StatOptions {
        workload: "compute".into(),
        seed: SEED,
        cycles: CYCLES,
        set_options: SetOptions { qualification: request, ..SetOptions::default() },
        ..StatOptions::default()
    };
    stat(&cat, &sels, &opts, &mut |_| {}).unwrap()
}

fn count(r: &StatReport, name: &str) -> u64 {
    let e = r.events.iter().find(|e| e.name == name).unwrap_or_else(|| panic!("{name}: {:?}", r.events));
    assert!(!e.scaled);
    e.count.unwrap()
}

/// The default privilege mask's spans (levels 0 and 3; hyperprivileged is CPL 0).
fn counted(s: &Span) -> bool {
    matches!(s.privilege, Privilege::Cpl0 | Privilege::Cpl3 | Privilege::Hyper)
}

fn blocks() -> stat::Blocks {
    let cat = Catalog::builtin();
    let opts = StatOptions { workload: "compute".into(), seed: SEED, ..StatOptions::default() };
    stat::blocks(&[cat.pmu("montecito").unwrap()], &opts, stat::Reads::ALL).unwrap().0.every()
}

#[test]
fn s3_3_5_an_instruction_range_counts_the_instructions_fetched_from_it() {
    let range = Range { start: HOT.0, end: HOT.1 };
    let events = ["IA64_INST_RETIRED", "CPU_OP_CYCLES.QUAL", "CPU_OP_CYCLES.ALL"];
    // CPU_OP_CYCLES.ALL cannot be qualified: counted beside them with --no-qual-check.
    let inside = run(&events, Request { irange: Some(range), no_check: true, ..Request::default() });
    let outside = run(&events, Request { irange: Some(range), inverse: true, no_check: true, ..Request::default() });
    let all = run(&events, Request::default());
    let truth_in = Totals::of(blocks(), CYCLES, |s| counted(s) && range.contains(s.ip));
    let truth_out = Totals::of(blocks(), CYCLES, |s| counted(s) && !range.contains(s.ip));
    assert!(truth_in.get(Signal::Instructions) > 0 && truth_out.get(Signal::Instructions) > 0, "the range splits the workload");
    // The hot loop's instructions, and the cycles they are in the pipeline (QUAL).
    assert_eq!(count(&inside, "IA64_INST_RETIRED.THIS"), truth_in.get(Signal::Instructions));
    assert_eq!(count(&outside, "IA64_INST_RETIRED.THIS"), truth_out.get(Signal::Instructions));
    assert_eq!(count(&inside, "CPU_OP_CYCLES.QUAL"), truth_in.cycles);
    assert_eq!(count(&outside, "CPU_OP_CYCLES.QUAL"), truth_out.cycles);
    // ALL is not qualified (ERRATA ME36), and the two halves make the whole.
    assert_eq!(count(&inside, "CPU_OP_CYCLES.ALL"), count(&all, "CPU_OP_CYCLES.ALL"));
    assert_eq!(count(&inside, "IA64_INST_RETIRED.THIS") + count(&outside, "IA64_INST_RETIRED.THIS"), count(&all, "IA64_INST_RETIRED.THIS"));
}

/// A second range (`--irange2`) qualifies tag channels 1 and 3 while the first keeps
/// 0 and 2 (§3.3.5: up to four ranges), so one run counts the instructions retired in
/// two places.
#[test]
fn s3_3_5_two_ranges_count_the_instructions_of_each() {
    let first = Range { start: HOT.0, end: HOT.1 };
    let second = Range { start: 0x2_0000, end: 0x4_0000 };
    let truth = |r: Range| Totals::of(blocks(), CYCLES, |s| counted(s) && r.contains(s.ip)).get(Signal::Instructions);
    assert!(truth(first) > 0 && truth(second) > 0, "both ranges hold instructions of the workload");
    let events = ["IA64_TAGGED_INST_RETIRED.IBRP0_PMC32_33", "IA64_TAGGED_INST_RETIRED.IBRP1_PMC34_35"];
    let r = run(&events, Request { irange: Some(first), irange2: Some(second), ..Request::default() });
    assert_eq!(count(&r, events[0]), truth(first));
    assert_eq!(count(&r, events[1]), truth(second));
}

#[test]
fn s3_3_7_a_data_range_counts_the_memory_events_of_its_addresses() {
    let cat = Catalog::builtin();
    let l1d = cat.resolve("montecito::L1D_READS_SET0", "montecito").unwrap();
    let all = run(&["L1D_READS_SET0"], Request::default());
    let total = count(&all, "L1D_READS_SET0");
    // The data addresses the loads touch, and a 64 KB block holding some of them.
    let mut by_block: HashMap<u64, u64> = HashMap::new();
    let mut seen: HashMap<(Option<u64>, bool, u64), u64> = HashMap::new();
    common::profile(blocks(), CYCLES, |s| (s.mem.map(|m| m.addr >> 16), counted(s), per_cycle(l1d.code as u8, l1d.umask, s)), &mut seen);
    for ((block, counted, rate), cycles) in &seen {
        if let (Some(b), true) = (block, counted) {
            *by_block.entry(*b).or_default() += rate * cycles;
        }
    }
    let (&hot, &truth) = by_block.iter().max_by_key(|(_, &n)| n).expect("loads");
    assert!(truth > 0 && truth < total, "one block holds some of the reads: {truth} of {total}");
    let range = Range { start: hot << 16, end: (hot + 1) << 16 };
    let inside = run(&["L1D_READS_SET0"], Request { drange: Some(range), ..Request::default() });
    assert_eq!(count(&inside, "L1D_READS_SET0"), truth);
}

#[test]
fn breakpoint_registers_are_privileged_bounded_and_read_back() {
    let mut core = Montecito::new();
    for kind in [Breakpoint::Ibr, Breakpoint::Dbr] {
        core.write_breakpoint(1, kind, 7, 0x1234).unwrap();
        assert_eq!(core.read_breakpoint(1, kind, 7), Ok(0x1234));
        assert_eq!(core.read_breakpoint(0, kind, 7), Ok(0), "each thread has its own");
        let before = core.clone();
        assert!(matches!(core.write_breakpoint(0, kind, 8, 1), Err(MontecitoError::NoSuchBreakpoint { index: 8, .. })));
        assert!(matches!(core.write_breakpoint(2, kind, 0, 1), Err(MontecitoError::NoSuchThread { .. })));
        assert_eq!(core, before, "a refused write changes nothing");
    }
    let e = core.write_breakpoint(0, Breakpoint::Dbr, 8, 1).unwrap_err().to_string();
    assert!(e.contains("DBR8 does not exist") && e.contains("DBR0-7"), "{e}");
    core.set_psr(0, 3 << 32).unwrap();
    assert!(matches!(core.write_breakpoint(0, Breakpoint::Ibr, 0, 1), Err(MontecitoError::PrivilegedOperation { .. })));
    assert!(matches!(core.read_breakpoint(0, Breakpoint::Ibr, 0), Err(MontecitoError::PrivilegedOperation { .. })));
}

#[test]
fn md51_an_opcode_pattern_is_reported_as_not_evaluated() {
    let mut core = Montecito::new();
    // OpCM0 with M slots only: channel 0 is opcode constrained once ig_ad is 0.
    core.write_pmc(0, 32, 0x0008_01ff_ffff_ffff).unwrap();
    let notes: Vec<String> = core.unpredictable().notes().collect();
    assert!(notes.iter().any(|n| n.contains("tag channel 0 is opcode constrained") && n.contains("MD51")), "{notes:?}");
}
