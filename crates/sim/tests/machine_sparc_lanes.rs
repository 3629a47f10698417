//! The SPARC machines with their strands running at once (`strands_at_once`, the
//! reference engine of docs/engine.md step C; ERRATA MSP1): the core's arbiter gives
//! each cycle's issue slots to ready strands, stalled strands give theirs away, and
//! every strand with work is in every cycle exactly once.

use pmukit_sim::machine::run::Skipping;
use pmukit_sim::machine::sparc::{SparcChip, SparcConfig};
use pmukit_sim::machine::{self};
use pmukit_sim::program::builtin;
use pmukit_sim::stream::{steady_runs, Block, Signal, Span, Totals, SPARC};

const CHIPS: [SparcChip; 3] = [SparcChip::T4, SparcChip::Kt, SparcChip::Niagara];

fn at_once(chip: SparcChip) -> SparcConfig {
    SparcConfig { strands_at_once: true, ..SparcConfig::new(chip) }
}

/// The blocks of `workload` with `threads` threads, up to about `cycles` cycles.
fn run(cfg: SparcConfig, workload: &str, threads: usize, cycles: u64) -> Vec<Block<SPARC>> {
    let program = builtin::program(workload, 3, threads).unwrap();
    let mut done = 0;
    machine::sparc(cfg, program, Skipping::On)
        .take_while(|b| {
            let go = done < cycles;
            done += b.cycles_per_iteration() * b.repeat;
            go
        })
        .collect()
}

fn instructions(group: &[&Span<SPARC>]) -> u64 {
    group.iter().map(|s| s.signals.get(Signal::Instructions)).sum()
}

/// ERRATA MSP1, [HC23], [T2], [T1]: the strands' misses overlap: eight strands chasing
/// pointers retire several times what one does, where taking turns retired less.
#[test]
fn msp1_strands_at_once_overlap_their_misses() {
    let retired = |cfg: SparcConfig, threads| {
        Totals::of(machine::sparc(cfg, builtin::program("chase", 3, threads).unwrap(), Skipping::On), 400_000, |_| true)
            .get(Signal::Instructions)
    };
    let one = retired(at_once(SparcChip::T4), 1);
    let eight = retired(at_once(SparcChip::T4), 8);
    let turns = retired(SparcConfig::new(SparcChip::T4), 8);
    assert!(eight > 4 * one, "eight strands {eight}, one {one}");
    assert!(turns < 2 * one, "in turns, eight strands {turns}, one {one}");
}

/// Every cycle of a run of `workload` (`threads` software threads, `seed`) on `cfg`'s
/// strands at once, checked against the chip's rules:
/// - TABLE 10-2 sl 1 and its footnotes, [T2], [T1]: no cycle issues more than the core
///   can: T4 selects one strand a cycle (two instructions at most), KT picks one strand
///   in each of its two groups and lets one of them use the load/store unit, Niagara
///   picks one strand a cycle;
/// - TABLE 10-2 sl 26 ("cycles"), sl 1: a strand with work is in every cycle exactly
///   once: issuing, stalled (its own span) or ready and not picked (marked on the
///   primary), so its CYCLES is every cycle of the run, and the primary is the strand
///   that issued whenever one did;
/// - footnote 13's fetch-0-all: a cycle counts only when no strand fetches: never in a
///   cycle with a ready strand or an issuing one.
fn cycle_invariants(cfg: SparcConfig, workload: &str, seed: u64, threads: usize, cycles: u64) {
    let memory = [Signal::Loads, Signal::Stores, Signal::Atomics, Signal::SoftwarePrefetches, Signal::BlockLoadsStores];
    let (chip, strands) = (cfg.chip, cfg.strands);
    let (width, issuers) = match chip {
        SparcChip::T4 => (2, 1),
        SparcChip::Kt => (2, 2),
        SparcChip::Niagara => (1, 1),
    };
    let program = builtin::program(workload, seed, threads).unwrap();
    // The built-in programs' threads never end: strands 0.. with one have work throughout.
    let busy = program.threads.len().min(strands);
    let at = format!("{chip:?} {workload} seed {seed}, {threads} threads");
    let (mut run, mut present) = (0, vec![0u64; strands]);
    for block in machine::sparc(cfg, program, Skipping::On) {
        if run >= cycles {
            break;
        }
        // Cycle by cycle, or in runs of cycles in which the same spans count: a strand
        // stalled through several cycles is one overlay that covers them all.
        for (length, group) in steady_runs(&block.body) {
            let (primary, overlays) = (group[0], &group[1..]);
            assert!(!primary.overlay && overlays.iter().all(|s| s.overlay), "{at}");
            assert!(instructions(&group) <= width, "{at}: {group:?}");
            let issuing = group.iter().filter(|s| s.signals.get(Signal::Instructions) > 0).count();
            assert!(issuing <= issuers, "{at}: {issuing} strands issue");
            let lsu = group.iter().filter(|s| memory.iter().any(|&m| s.signals.get(m) > 0)).count();
            assert!(lsu <= 1, "{at}: {lsu} memory instructions in a cycle");
            if instructions(&group) > 0 {
                assert!(primary.signals.get(Signal::Instructions) > 0, "{at}: the primary issued");
            }
            if primary.signals.get(Signal::NoFetchAllCycles) > 0 {
                assert_eq!(instructions(&group), 0, "{at}");
                assert!(Signal::STRAND_READY.iter().all(|&r| primary.signals.get(r) == 0), "{at}");
                assert!(group.iter().all(|s| s.signals.get(Signal::NoFetchCycles) > 0), "{at}");
            }
            for (strand, n) in present.iter_mut().enumerate() {
                let own = group.iter().filter(|s| usize::from(s.thread) == strand).count() as u64;
                let ready = u64::from(primary.signals.get(Signal::STRAND_READY[strand]) > 0);
                assert!(own + ready <= 1, "{at}: strand {strand} twice in a cycle");
                *n += (own + ready) * length;
            }
            run += length;
        }
    }
    assert!(run >= cycles, "{at}: the run ended after {run} cycles");
    for (strand, &n) in present.iter().enumerate() {
        assert_eq!(n, if strand < busy { run } else { 0 }, "{at}: strand {strand}");
    }
}

/// docs/engine.md E1: a strand that stays stalled while others issue a cycle at a
/// time is one overlay over those cycles, not one a cycle: on `mixed`, where some
/// strands issue while others wait on memory, the cycles of stalled strands are many
/// times the overlays that carry them.
#[test]
fn a_stalled_strand_is_one_overlay_over_the_cycles_it_waits() {
    for chip in CHIPS {
        let blocks = run(at_once(chip), "mixed", at_once(chip).strands, 200_000);
        // Overlays of strands that do not issue (KT's second thread group issues in an
        // overlay of its own, a cycle at a time).
        let waits = |s: &Span<SPARC>| s.overlay && s.signals.get(Signal::Instructions) == 0;
        let overlays: u64 = blocks.iter().map(|b| b.body.iter().filter(|s| waits(s)).count() as u64 * b.repeat).sum();
        let stalled: u64 = blocks
            .iter()
            .flat_map(|b| steady_runs(&b.body).into_iter().map(|(n, g)| n * g.iter().filter(|s| waits(s)).count() as u64 * b.repeat))
            .sum();
        assert!(overlays * 3 < stalled, "{chip:?}: {overlays} overlays for {stalled} cycles of stalled strands");
    }
}

#[test]
fn every_cycle_keeps_the_chips_rules() {
    for chip in CHIPS {
        for workload in ["compute", "mixed", "stream", "os"] {
            cycle_invariants(at_once(chip), workload, 3, at_once(chip).strands, 150_000);
        }
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]

    /// The same rules on random programs, thread counts and machine parameters.
    #[test]
    fn every_cycle_keeps_the_chips_rules_whatever_the_program(
        chip in 0usize..3,
        workload in 0usize..8,
        seed in 0u64..1_000,
        threads in 1usize..10,
        store_buffer in 1u64..17,
        memory_cycles in 20u64..400,
    ) {
        let workloads = ["compute", "branchy", "stream", "mixed", "fp", "chase", "os", "shared"];
        let text = format!("[core]\nstore_buffer = {store_buffer}\nmemory_cycles = {memory_cycles}\n");
        let cfg = at_once(CHIPS[chip]).with_overrides(&text, "t").unwrap();
        cycle_invariants(cfg, workloads[workload], seed, threads, 30_000);
    }
}

/// More software threads than strands (Niagara's four strands, `os`'s eight
/// processes) take turns on each strand at the timer: every strand runs user code and
/// the kernel's, none is left without work.
#[test]
fn threads_beyond_the_strands_take_turns_on_theirs() {
    use pmukit_sim::stream::Privilege;
    let mut modes = std::collections::HashSet::new();
    for block in run(at_once(SparcChip::Niagara), "os", 8, 1_500_000) {
        for s in block.body.iter().filter(|s| s.signals.get(Signal::Instructions) > 0) {
            modes.insert((s.thread, s.privilege == Privilege::USER));
        }
    }
    for strand in 0..4 {
        assert!(modes.contains(&(strand, true)) && modes.contains(&(strand, false)), "strand {strand}: {modes:?}");
    }
}
