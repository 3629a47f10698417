//! `pmu stat` on the simulated Montecito core: counts against the workloads' ground
//! truth, chapter 4's identities between events as consistency checks (§4.4 dispersal,
//! §4.6 back-end bubbles, thresholds), threads, and multiplexing under the set rules.

use pmukit_arch::{encode_set, Catalog};
use pmukit_core::report::StatReport;
use pmukit_sim::drivers::montecito::MontecitoDriver;
use pmukit_sim::drivers::{totals, Driver, Runs};
use pmukit_sim::program::builtin::WORKLOADS;
use pmukit_sim::stat::{self, stat, StatError, StatOptions};
use pmukit_sim::stream::{Block, Cursor, Privilege, Signal, Span, Totals, MONTECITO};

const SEED: u64 = 7;

/// The Montecito machine's block stream of `workload` on both threads: the ground
/// truth the counts must match.
fn blocks(workload: &str) -> stat::Blocks {
    let cat = Catalog::builtin();
    let opts = StatOptions { workload: workload.to_string(), seed: SEED, ..StatOptions::default() };
    stat::blocks(&[cat.pmu("montecito").unwrap()], &opts, stat::Reads::ALL).unwrap().0.every()
}

fn totals_matching(workload: &str, cycles: u64, keep: impl Fn(&Span) -> bool) -> Totals {
    Totals::of(blocks(workload), cycles, keep)
}

fn run_on(pmu: &str, events: &[&str], workload: &str, cycles: u64) -> StatReport {
    let cat = Catalog::builtin();
    let sels: Vec<_> = events.iter().map(|e| cat.resolve(e, pmu).unwrap_or_else(|err| panic!("{e}: {err}"))).collect();
    let opts = StatOptions { workload: workload.to_string(), seed: SEED, cycles, ..StatOptions::default() };
    stat(&cat, &sels, &opts, &mut |_| {}).unwrap()
}

fn count(r: &StatReport, name: &str) -> u64 {
    let e = r.events.iter().find(|e| e.name == name).unwrap_or_else(|| panic!("{name} not counted: {:?}", r.events));
    assert!(!e.scaled, "{name} was multiplexed");
    e.count.unwrap()
}

/// Every span the default privilege mask counts (PMC.plm = levels 0 and 3; MD3:
/// hyperprivileged code runs at CPL 0).
fn user_or_kernel(s: &Span) -> bool {
    matches!(s.privilege, Privilege::Cpl0 | Privilege::Cpl3 | Privilege::Hyper)
}

/// Retired instructions and cycles are the workload's, on both threads.
#[test]
fn s4_3_retired_instructions_and_cycles_match_the_workload() {
    let cycles = 30_000_000;
    let r = run_on("montecito", &["CPU_OP_CYCLES", "IA64_INST_RETIRED"], "mixed", cycles);
    let truth = totals_matching("mixed", cycles, user_or_kernel);
    assert_eq!(count(&r, "IA64_INST_RETIRED.THIS"), truth.get(Signal::Instructions));
    assert_eq!(count(&r, "CPU_OP_CYCLES.ALL"), truth.cycles);
}

/// §4.4: 6 × (CPU_OP_CYCLES − DISP_STALLED) = INST_DISPERSED + SYLL_NOT_DISPERSED.ALL −
/// SYLL_OVERCOUNT.ALL, on every built-in workload, one thread and two.
#[test]
fn s4_4_the_dispersal_identity_holds_on_every_workload() {
    for w in WORKLOADS.iter() {
        for pmu in ["montecito", "montecito-st"] {
            let r = run_on(
                pmu,
                &["CPU_OP_CYCLES", "DISP_STALLED", "INST_DISPERSED", "SYLL_NOT_DISPERSED.ALL", "SYLL_OVERCOUNT.ALL"],
                w.name,
                5_000_000,
            );
            let lhs = 6 * (count(&r, "CPU_OP_CYCLES.ALL") - count(&r, "DISP_STALLED"));
            let rhs = count(&r, "INST_DISPERSED") + count(&r, "SYLL_NOT_DISPERSED.ALL") - count(&r, "SYLL_OVERCOUNT.ALL");
            assert_eq!(lhs, rhs, "{} on {pmu}", w.name);
            assert!(count(&r, "SYLL_NOT_DISPERSED.ALL") > 0);
        }
    }
}

/// §4.6: BACK_END_BUBBLE.all = BE_RSE_BUBBLE.all + BE_EXE_BUBBLE.all +
/// BE_L1D_FPU_BUBBLE.all + BE_FLUSH_BUBBLE.all + BACK_END_BUBBLE.fe. BE_L1D_FPU_BUBBLE is
/// an L1D set 2 event: the scheduler puts it on PMD5 (§4.8.2).
#[test]
fn s4_6_bubbles_add_up_to_their_causes() {
    for w in WORKLOADS.iter() {
        let r = run_on(
            "montecito",
            &[
                "BACK_END_BUBBLE.ALL",
                "BE_RSE_BUBBLE.ALL",
                "BE_EXE_BUBBLE.ALL",
                "BE_L1D_FPU_BUBBLE.ALL",
                "BE_FLUSH_BUBBLE.ALL",
                "BACK_END_BUBBLE.FE",
            ],
            w.name,
            5_000_000,
        );
        let parts: u64 = ["BE_RSE_BUBBLE.ALL", "BE_EXE_BUBBLE.ALL", "BE_L1D_FPU_BUBBLE.ALL", "BE_FLUSH_BUBBLE.ALL", "BACK_END_BUBBLE.FE"]
            .iter()
            .map(|e| count(&r, e))
            .sum();
        assert_eq!(count(&r, "BACK_END_BUBBLE.ALL"), parts, "{}", w.name);
        assert!(parts > 0);
        let l1d = r.events.iter().find(|e| e.name == "BE_L1D_FPU_BUBBLE.ALL").unwrap();
        assert_eq!(l1d.counters, ["PMD5"]);
    }
}

/// §4.6: CPU_OP_CYCLES = BACK_END_BUBBLE.all + (IA64_INST_RETIRED ≥ 1). Table 3-6's
/// threshold counts the cycles whose value exceeds it, so the cycles retiring at least
/// one are IA64_INST_RETIRED − Σ(t = 1..5) IA64_INST_RETIRED:thresh=t (at most 6 retire
/// per cycle, Table 4-42).
#[test]
fn s4_6_cycles_are_bubbles_plus_retiring_cycles_through_thresholds() {
    let events = [
        "CPU_OP_CYCLES",
        "BACK_END_BUBBLE.ALL",
        "IA64_INST_RETIRED",
        "IA64_INST_RETIRED:thresh=1",
        "IA64_INST_RETIRED:thresh=2",
        "IA64_INST_RETIRED:thresh=3",
        "IA64_INST_RETIRED:thresh=4",
        "IA64_INST_RETIRED:thresh=5",
    ];
    let r = run_on("montecito", &events, "compute", 20_000_000);
    let above: u64 = (1..=5).map(|t| count(&r, &format!("IA64_INST_RETIRED.THIS:thresh={t}"))).sum();
    let retiring = count(&r, "IA64_INST_RETIRED.THIS") - above;
    assert_eq!(count(&r, "CPU_OP_CYCLES.ALL"), count(&r, "BACK_END_BUBBLE.ALL") + retiring);
    // The thresholds really separate: compute retires several per cycle.
    assert!(count(&r, "IA64_INST_RETIRED.THIS:thresh=1") > count(&r, "IA64_INST_RETIRED.THIS:thresh=4"));
}

/// Table 3-6 .all: one duplicated counter with .all counts both threads, as the two
/// threads' own counts add up.
#[test]
fn table_3_6_all_counts_both_threads_once() {
    let r = run_on("montecito", &["IA64_INST_RETIRED:all", "IA64_INST_RETIRED"], "mixed", 50_000_000);
    assert_eq!(count(&r, "IA64_INST_RETIRED.THIS:all"), count(&r, "IA64_INST_RETIRED.THIS"));
    let ev = r.events.iter().find(|e| e.name.ends_with(":all")).unwrap();
    assert!(["PMD4", "PMD5", "PMD6", "PMD7", "PMD8", "PMD9"].contains(&ev.counters[0].as_str()), "duplicated counters only");
}

/// §4.2.1: a Floating event (L3_MISSES) on the two-thread core also counts the misses a
/// thread had in flight when it was switched out, which complete in the background.
/// L3_MISSES counts at most one per cycle in a counter (Table 4-42), so the expected
/// count clamps each cycle's foreground misses (the running thread's counter) and its
/// background misses (the other thread's counter) to 1 each.
#[test]
fn s4_2_1_floating_events_count_background_misses() {
    let cycles = 20_000_000;
    let r = run_on("montecito", &["L3_MISSES"], "stream", cycles);
    let misses = [
        Signal::L3InstructionMisses,
        Signal::L3InstructionPrefetchMisses,
        Signal::L3DataReadMisses,
        Signal::StoresLocalMemory,
        Signal::L3WritebackMisses,
    ];
    let per_cycle = |s: &Span| {
        let fg = if user_or_kernel(s) { misses.iter().map(|&m| s.signals.get(m)).sum() } else { 0 };
        fg.min(1) + s.signals.get(Signal::BackgroundMemoryReads).min(1)
    };
    assert_eq!(count(&r, "L3_MISSES"), sum_over("stream", cycles, per_cycle));
    assert!(totals_matching("stream", cycles, |_| true).get(Signal::BackgroundMemoryReads) > 0, "the workload has background misses");
    let without = sum_over("stream", cycles, |s| per_cycle(s) * u64::from(s.signals.get(Signal::BackgroundMemoryReads) == 0));
    assert!(count(&r, "L3_MISSES") > without, "background misses were counted");
}

/// Σ over the first `cycles` cycles of a workload of `value` per cycle of each span.
fn sum_over(workload: &str, cycles: u64, value: impl Fn(&Span) -> u64) -> u64 {
    let mut left = cycles;
    let mut sum = 0;
    for b in blocks(workload) {
        let per = b.cycles_per_iteration();
        let full = (left / per).min(b.repeat);
        sum += full * b.body.iter().map(|s| value(s) * s.cycles).sum::<u64>();
        left -= full * per;
        if full < b.repeat {
            for s in &b.body {
                let c = s.cycles.min(left);
                sum += value(s) * c;
                left -= c;
            }
        }
        if left == 0 {
            return sum;
        }
    }
    sum
}

/// §4.8.2: events of two L1D sets cannot share PMC5, so `pmu stat` multiplexes them and
/// scales each by its running time, as perf does.
#[test]
fn s4_8_2_l1d_sets_are_multiplexed() {
    let cycles = 40_000_000;
    let cat = Catalog::builtin();
    let sels: Vec<_> = ["L1D_READS_SET0", "LOADS_RETIRED", "CPU_OP_CYCLES"].iter().map(|e| cat.resolve(e, "montecito").unwrap()).collect();
    let opts = StatOptions { workload: "stream".into(), seed: SEED, cycles, mux_interval: 1_000_000, ..StatOptions::default() };
    let r = stat(&cat, &sels, &opts, &mut |_| {}).unwrap();
    let l1d = &r.events[0];
    let loads = &r.events[1];
    assert!(l1d.scaled && loads.scaled);
    assert_eq!(l1d.running + loads.running, cycles, "the two sets take turns");
    assert!(r.notes.iter().any(|n| n.contains("multiplexed")));
    // Both count loads of the stream: scaled, they agree to within a few percent.
    let (a, b) = (l1d.count.unwrap() as f64, loads.count.unwrap() as f64);
    assert!((a - b).abs() / b < 0.1, "{a} vs {b}");
}

/// Table 3-7: 47-bit counters; the overflow interrupt (oi, PMV.m = 0) lets the driver
/// keep exact 64-bit totals across wraps.
#[test]
fn table_3_7_counts_stay_exact_across_47_bit_wraps() {
    let cat = Catalog::builtin();
    let pmu = cat.pmu("montecito-st").unwrap();
    let set = encode_set(pmu, &[cat.resolve("IA64_INST_RETIRED", "montecito-st").unwrap()]).unwrap();
    let mut driver = MontecitoDriver::new(1);
    let span = Span::<MONTECITO>::new(1 << 20, 0x4000).with(Signal::Instructions, 6);
    let mut cursor = Cursor::new(Box::new(std::iter::repeat(Block { body: vec![span], repeat: 1 << 24 })));
    driver.start(&set);
    // Enough cycles for the 47-bit count to wrap twice.
    let cycles = (2u64 << 47) / 6 + (1 << 30);
    assert_eq!(driver.run(&mut cursor, cycles), cycles);
    assert_eq!(totals(&driver.stop("montecito-st")), vec![Some(6 * cycles)]);
    assert_eq!(driver.interrupts(), 2);
}

/// `--threads`: Montecito runs one or two threads; the one-thread PMU only one.
#[test]
fn threads_are_checked_against_the_machine() {
    let cat = Catalog::builtin();
    let sels = vec![cat.resolve("CPU_OP_CYCLES", "montecito-st").unwrap()];
    let opts = StatOptions { cycles: 1000, threads: Some(2), ..StatOptions::default() };
    let err = stat(&cat, &sels, &opts, &mut |_| {}).unwrap_err();
    assert!(matches!(err, StatError::Threads { max: 1, .. }), "{err}");
    assert!(err.to_string().contains("--pmu montecito"), "{err}");
    let sels = vec![cat.resolve("CPU_OP_CYCLES", "montecito").unwrap()];
    let opts = StatOptions { cycles: 1_000_000, threads: Some(1), ..StatOptions::default() };
    assert_eq!(stat(&cat, &sels, &opts, &mut |_| {}).unwrap().events[0].count, Some(1_000_000));
}

/// The derived monitors of chapter 4 are evaluated over the counted events.
#[test]
fn derived_monitors_are_reported() {
    let r =
        run_on("montecito", &["L2D_REFERENCES.ALL", "L2D_INSERT_MISSES", "L2D_INSERT_HITS", "L2D_REFERENCES.READS"], "stream", 10_000_000);
    assert!(r.metrics.iter().any(|m| m.name == "l2d_miss_ratio"), "{:?}", r.metrics);
}

/// BR_PATH_PRED's four outcomes (mispredicted or right, taken or not) partition the
/// branches BR_MISPRED_DETAIL.ALL.ALL_PRED counts, for all branches and by type.
#[test]
fn br_path_pred_outcomes_partition_the_branches() {
    let outcomes = ["MISPRED_NOTTAKEN", "MISPRED_TAKEN", "OKPRED_NOTTAKEN", "OKPRED_TAKEN"];
    for kind in ["ALL", "IPREL", "RETURN", "NRETIND"] {
        let mut events: Vec<String> = outcomes.iter().map(|o| format!("BR_PATH_PRED.{kind}.{o}")).collect();
        events.push(format!("BR_MISPRED_DETAIL.{kind}.ALL_PRED"));
        let names: Vec<&str> = events.iter().map(String::as_str).collect();
        let r = run_on("montecito", &names, "branchy", 5_000_000);
        let parts: u64 = r.events[..4].iter().map(|e| e.count.unwrap()).sum();
        assert_eq!(parts, r.events[4].count.unwrap(), "{kind}");
        assert!(parts > 0, "{kind}");
    }
}

/// §4.6, §4.15: the front end's losses, one cause per cycle (MD39). A stalled cycle
/// loses two bundles at the instruction buffer's entrance; a taken branch's cycle the
/// bundles it leaves unreached. At the exit a full buffer loses nothing, nor one the
/// branch retirement queue stopped filling (MMC78), and the back end sees the loss
/// only in cycles it is not stalled itself (BACK_END_BUBBLE.FE).
#[test]
fn s4_6_front_end_losses_add_up_to_their_causes() {
    for w in WORKLOADS.iter() {
        let run = |events: &[&str]| {
            let r = run_on("montecito", events, w.name, 3_000_000);
            events.iter().map(|e| count(&r, e)).collect::<Vec<u64>>()
        };
        let [bubbles, ib_full, allbut_ib_full, group2, imiss, tlb] = run(&[
            "FE_BUBBLE.ALL",
            "FE_BUBBLE.IBFULL",
            "FE_BUBBLE.ALLBUT_IBFULL",
            "FE_BUBBLE.GROUP2",
            "FE_BUBBLE.IMISS",
            "FE_BUBBLE.TLBMISS",
        ])[..] else {
            unreachable!()
        };
        let [lost, unreached, queue, ideal, be_lost, be_unreached, be_fe] = run(&[
            "FE_LOST_BW.ALL",
            "FE_LOST_BW.UNREACHED",
            "FE_LOST_BW.BRQ",
            "IDEAL_BE_LOST_BW_DUE_TO_FE.ALL",
            "BE_LOST_BW_DUE_TO_FE.ALL",
            "BE_LOST_BW_DUE_TO_FE.UNREACHED",
            "BACK_END_BUBBLE.FE",
        ])[..] else {
            unreachable!()
        };
        let name = w.name;
        assert_eq!(bubbles, allbut_ib_full + ib_full, "{name}");
        assert_eq!(group2, imiss + tlb, "{name}");
        assert_eq!(lost, 2 * bubbles + unreached, "{name}");
        // Behind a stalled back end the buffer holds bundles: a full buffer, or a full
        // branch retirement queue (MMC78), loses nothing at its exit.
        assert_eq!(ideal, lost - 2 * ib_full - queue, "{name}");
        assert_eq!(be_lost, 2 * be_fe + be_unreached, "{name}");
        assert!(bubbles > 0 && unreached > 0, "{name}: {bubbles} bubbles, {unreached} unreached");
    }
}

/// §4.7: branches behind one predicted taken in their bundle are forced to "predicted
/// not taken" (MD40): those taken are path mispredicts. `branchy`'s data-dependent ifs
/// make such bundles: their blocks load the datum they work on, so the compiler keeps
/// the branch (MMC32 predicates only integer blocks).
#[test]
fn s4_7_forced_predictions_are_part_of_the_path_outcomes() {
    let events = [
        "BR_PATH_PRED2.ALL.UNKNOWNPRED_TAKEN",
        "BR_PATH_PRED.ALL.MISPRED_TAKEN",
        "BR_MISPRED_DETAIL2.ALL.UNKNOWN_PATH_WRONG_PATH",
        "BR_MISPRED_DETAIL.ALL.WRONG_PATH",
    ];
    let r = run_on("montecito", &events, "branchy", 20_000_000);
    let c: Vec<u64> = events.iter().map(|e| count(&r, e)).collect();
    assert!(0 < c[0] && c[0] <= c[1], "{c:?}");
    assert_eq!(c[2], c[0], "UNKNOWN_PATH_WRONG_PATH is UNKNOWNPRED_TAKEN");
    assert!(c[2] <= c[3], "{c:?}");
}

/// §4.15 ENCBR_MISPRED_DETAIL (MD41): the branches of groups with a branch on B0, a
/// multiway branch's BBB: `services`' lexer tests for the command's end and the
/// table's range before its jump, three branches in one bundle. They are some of
/// BR_MISPRED_DETAIL's, split by prediction as it splits them; ALL2 is ALL, and no
/// MIB, MFB or MMB with a nop.b oversubscribes B0 ahead of them (MMC79).
#[test]
fn md41_encoded_branches_are_a_multiway_branchs() {
    // The lexer runs at privilege level 2: `plm=15` counts every level. Two runs of
    // eight events each (no multiplexing) count the same execution.
    let kinds = ["ALL_PRED", "CORRECT_PRED", "WRONG_PATH", "WRONG_TARGET"];
    let counts = |classes: [&str; 2]| -> Vec<u64> {
        let events: Vec<String> = classes.iter().flat_map(|class| kinds.iter().map(move |k| format!("{class}.{k}:plm=15"))).collect();
        let names: Vec<&str> = events.iter().map(String::as_str).collect();
        let r = run_on("montecito", &names, "services", 20_000_000);
        names.iter().map(|e| count(&r, e)).collect()
    };
    let c = counts(["ENCBR_MISPRED_DETAIL.ALL", "ENCBR_MISPRED_DETAIL.ALL2"]);
    let d = counts(["ENCBR_MISPRED_DETAIL.OVERSUB", "BR_MISPRED_DETAIL.ALL"]);
    let (all, all2, oversub, br) = (&c[0..4], &c[4..8], &d[0..4], &d[4..8]);
    assert_eq!(all, all2);
    assert_eq!(oversub, [0; 4]);
    assert!(all.iter().all(|&n| n > 0), "{c:?}");
    assert_eq!(all[0], all[1] + all[2] + all[3], "{c:?}");
    // The lexer's jump may make every target mispredict.
    assert!(all.iter().zip(br).all(|(e, b)| e <= b) && all[0] < br[0], "{c:?} {d:?}");
}

/// MMC19: an L1I miss brings the whole 128-byte L2I line into the streaming buffer,
/// four 32-byte bundle pairs; the line's other half is then filled from the buffer.
/// L1I_FILLS (fills from the ISB) is every L1I miss, served by the L2I or the buffer,
/// and every line the next-line prefetcher brings (MMC21).
#[test]
fn mmc19_the_streaming_buffer_serves_the_other_half_of_a_line() {
    let events = ["L1I_FILLS", "L2I_DEMAND_READS", "L1I_FETCH_ISB_HIT", "ISB_BUNPAIRS_IN", "L2I_PREFETCHES"];
    let r = run_on("montecito-st", &events, "os", 5_000_000);
    let [fills, demand, isb, pairs, prefetched] = [0, 1, 2, 3, 4].map(|i| count(&r, events[i]));
    // At most one a cycle (Table 4-42): a demand fill, a buffer hit and a prefetch can
    // share one.
    assert!(demand.max(isb) <= fills && fills <= demand + isb + prefetched, "{fills} {demand} {isb} {prefetched}");
    assert!(isb > 0 && pairs > 0, "{isb} buffer hits, {pairs} pairs in");
    assert!(pairs <= 4 * demand, "{pairs} pairs for {demand} L2I reads");
}

/// Table 4-47: flush bubbles are exception flushes (traps, thread switches) or branch
/// refills; Table 4-48: the L1D's stalls are L2DTLB transfers, page walks, L2D back
/// pressure (MMC28), a speculative load's NaT (MMC42: the NULL entries of `services`'
/// symbol table; MMC55: the pages of `os`'s mapped files not yet present) or the L1D
/// pipeline's conflicts (MMC44, MMC68);
/// Tables 4-105, 4-106 and §4.11: a store's line read for ownership is an L3 data write
/// and a BRIL on the bus (MD19, MD37).
#[test]
fn flush_tlb_and_ownership_reads_split_their_totals() {
    for w in ["os", "stream", "shared", "services"] {
        let run = |events: &[&str]| {
            let r = run_on("montecito", events, w, 4_000_000);
            events.iter().map(|e| count(&r, e)).collect::<Vec<u64>>()
        };
        let c = run(&["BE_FLUSH_BUBBLE.ALL", "BE_FLUSH_BUBBLE.XPN", "BE_FLUSH_BUBBLE.BRU", "BE_L1D_FPU_BUBBLE.L1D"]);
        let d = run(&["BE_L1D_FPU_BUBBLE.L1D_TLB", "BE_L1D_FPU_BUBBLE.L1D_HPW", "L3_WRITES.ALL.ALL", "L3_WRITES.DATA_WRITE.ALL"]);
        let e = run(&["L3_WRITES.L2_WB.ALL", "BUS_MEM_READ.ALL.SELF", "BUS_MEM_READ.BRL.SELF", "BUS_MEM_READ.BRIL.SELF"]);
        assert_eq!(c[0], c[1] + c[2], "{w}: flushes");
        let l1d = run(&["BE_L1D_FPU_BUBBLE.L1D_L2BPRESS", "BE_L1D_FPU_BUBBLE.L1D_NAT", "BE_L1D_FPU_BUBBLE.L1D_PIPE_RECIRC"]);
        let conflicts = run(&[
            "BE_L1D_FPU_BUBBLE.L1D_FILLCONF",
            "BE_L1D_FPU_BUBBLE.L1D_LDCONF",
            "BE_L1D_FPU_BUBBLE.L1D_LDCHK",
            "BE_L1D_FPU_BUBBLE.L1D_AR_CR",
        ]);
        assert_eq!(c[3], d[0] + d[1] + l1d.iter().sum::<u64>() + conflicts.iter().sum::<u64>(), "{w}: L1D stalls");
        assert_eq!(l1d[1] > 0, w == "services" || w == "os", "{w}: NaTs");
        // At most one a cycle (Table 4-42): a cycle with both kinds counts one in ALL.
        assert!(d[3].max(e[0]) <= d[2] && d[2] <= d[3] + e[0], "{w}: L3 writes {d:?} {e:?}");
        // BUS_MEM_READ.ALL is BRL + BRIL + BIL (a store to a line the other core
        // shares, MMC23).
        let bil = run(&["BUS_MEM_READ.BIL.SELF"])[0];
        assert!(e[2].max(e[3]).max(bil) <= e[1] && e[1] <= e[2] + e[3] + bil, "{w}: bus reads {e:?} {bil}");
    }
    let os = run_on("montecito", &["BE_FLUSH_BUBBLE.XPN", "BE_L1D_FPU_BUBBLE.L1D_HPW"], "os", 4_000_000);
    assert!(count(&os, "BE_FLUSH_BUBBLE.XPN") > 0 && count(&os, "BE_L1D_FPU_BUBBLE.L1D_HPW") > 0);
    let os = run_on("montecito", &["L3_WRITES.DATA_WRITE.ALL", "BUS_MEM_READ.BRIL.SELF"], "os", 4_000_000);
    assert!(count(&os, "L3_WRITES.DATA_WRITE.ALL") > 0 && count(&os, "BUS_MEM_READ.BRIL.SELF") > 0);
}

/// The reasons of one total are disjoint, so they add up: EXE bubbles by the register
/// waited for (general, floating-point, control: MMC20) or the bank switch (MMC39), syllables not dispersed by
/// the stop, the front end (MD38) or a re-steer into a bundle (MMC60), and the L2D's operations by kind against its
/// references.
#[test]
fn exe_bubbles_syllables_and_l2d_operations_split_by_reason() {
    for w in ["os", "fp", "mixed", "branchy"] {
        let run = |events: &[&str]| {
            let r = run_on("montecito", events, w, 3_000_000);
            events.iter().map(|e| count(&r, e)).collect::<Vec<u64>>()
        };
        let exe =
            run(&["BE_EXE_BUBBLE.ALL", "BE_EXE_BUBBLE.GRALL", "BE_EXE_BUBBLE.FRALL", "BE_EXE_BUBBLE.ARCR", "BE_EXE_BUBBLE.BANK_SWITCH"]);
        assert_eq!(exe[0], exe[1..].iter().sum::<u64>(), "{w}: {exe:?}");
        let syll = run(&[
            "SYLL_NOT_DISPERSED.ALL",
            "SYLL_NOT_DISPERSED.EXPL",
            "SYLL_NOT_DISPERSED.IMPL",
            "SYLL_NOT_DISPERSED.FE",
            "SYLL_NOT_DISPERSED.MLX",
        ]);
        assert_eq!(syll[0], syll[1..].iter().sum::<u64>(), "{w}: {syll:?}");
        // L2D events of different sets cannot be counted together (§4.8.4): one run each.
        let ops: Vec<u64> =
            ["L2D_REFERENCES.ALL", "L2D_OPS_ISSUED.INT_LOAD", "L2D_OPS_ISSUED.FP_LOAD", "L2D_OPS_ISSUED.RMW", "L2D_OPS_ISSUED.STORE"]
                .iter()
                .map(|e| run(&[e])[0])
                .collect();
        assert_eq!(ops[0], ops[1..].iter().sum::<u64>(), "{w}: {ops:?}");
    }
    for (w, e) in [
        ("os", "BE_EXE_BUBBLE.ARCR"),
        ("os", "SYLL_NOT_DISPERSED.EXPL"),
        // Mispredicted branches' fall-throughs and faults' returns into a bundle (MMC60).
        ("branchy", "SYLL_NOT_DISPERSED.MLX"),
        ("os", "SYLL_NOT_DISPERSED.MLX"),
        ("os", "L2D_OPS_ISSUED.OTHER"),
        ("fp", "BE_EXE_BUBBLE.FRALL"),
        ("fp", "L2D_OPS_ISSUED.LFETCH"),
        // The L1D holds no FP data: the FP kernels' loads all go to the L2D (Table 2-8).
        ("fp", "L2D_OPS_ISSUED.FP_LOAD"),
        ("mixed", "LOADS_RETIRED_INTG"),
    ] {
        assert!(count(&run_on("montecito", &[e], w, 3_000_000), e) > 0, "{w}: {e}");
    }
}

/// MD44: THREAD_SWITCH_STALL's thresholds nest: every switch is at least "any latency"
/// (GTE_4, which counts them all), and fewer reach each longer stall.
#[test]
fn s4_13_switch_stalls_are_nested_thresholds() {
    let events = ["THREAD_SWITCH_EVENTS.ALL", "THREAD_SWITCH_STALL.GTE_4", "THREAD_SWITCH_STALL.GTE_8", "THREAD_SWITCH_STALL.GTE_16"];
    let r = run_on("montecito", &events, "mixed", 10_000_000);
    let c: Vec<u64> = events.iter().map(|e| count(&r, e)).collect();
    assert_eq!(c[0], c[1], "every switch is at least GTE_4");
    assert!(c[1] >= c[2] && c[2] >= c[3] && c[1] > 0, "{c:?}");
}

/// MD45: an L3 miss either switches threads (L3MISS) or, the other thread being no more
/// urgent, is a missed opportunity; with one thread there is no opportunity.
#[test]
fn s4_13_missed_switches_are_l3_misses_that_did_not_switch() {
    let r = run_on("montecito", &["THREAD_SWITCH_EVENTS.MISSED", "THREAD_SWITCH_EVENTS.L3MISS"], "stream", 10_000_000);
    assert!(count(&r, "THREAD_SWITCH_EVENTS.MISSED") > 0 && count(&r, "THREAD_SWITCH_EVENTS.L3MISS") > 0);
    let single = run_on("montecito-st", &["THREAD_SWITCH_EVENTS.MISSED"], "stream", 10_000_000);
    assert_eq!(count(&single, "THREAD_SWITCH_EVENTS.MISSED"), 0);
}

/// MMC21: the next-line prefetcher asks for the line after every new line fetched
/// outside a call's or a return's stream, which asks for its own (MMC50); the requests
/// the L1I and the streaming buffer cannot serve go to the L2I, whose prefetch hits and
/// misses partition them, and its misses are L3 instruction prefetch lookups.
#[test]
fn mmc21_instruction_prefetches_go_to_the_l2i_when_the_l1i_lacks_the_line() {
    let t = totals_matching("os", 5_000_000, |_| true);
    let (reads, requests, stream) = (t.get(Signal::ICacheReads), t.get(Signal::L1iPrefetches), t.get(Signal::L1iStrmPrefetches));
    assert!(stream > 0 && stream < requests, "{stream} of {requests}");
    assert!(requests - stream <= reads, "at most one next-line request per new line fetched: {reads} reads, {requests} requests");
    let events = ["L1I_PREFETCHES", "L2I_PREFETCHES", "L2I_READS.HIT.PFTCH", "L2I_READS.MISS.PFTCH"];
    let r = run_on("montecito-st", &events, "os", 5_000_000);
    let [issued, to_l2i, hits, misses] = [0, 1, 2, 3].map(|i| count(&r, events[i]));
    // At most one a cycle (Table 4-42): two requests of one cycle count once.
    assert!(hits.max(misses) <= to_l2i && to_l2i <= hits + misses, "{to_l2i} {hits} {misses}");
    assert!(0 < to_l2i && to_l2i < issued && misses > 0, "{events:?}: {issued} {to_l2i} {hits} {misses}");
}

/// MD42: L1I_PURGE counts the "inserts into L2ITLB", one per L2ITLB miss, which the page
/// walker's inserts into the L1ITLB (L1ITLB_INSERTS_HPW) and ITLB_MISSES_FETCH.L2ITLB
/// count too.
#[test]
fn md42_l1i_purges_are_the_l2itlb_inserts() {
    let events = ["L1I_PURGE", "L1ITLB_INSERTS_HPW", "ITLB_MISSES_FETCH.L2ITLB"];
    let r = run_on("montecito-st", &events, "os", 5_000_000);
    let c: Vec<u64> = events.iter().map(|e| count(&r, e)).collect();
    assert!(c[0] > 0 && c[0] == c[1] && c[1] == c[2], "{c:?}");
}

/// §4.10 (identity I4, ERRATA MM35): every walk of the hardware page walker reads the
/// VHPT through the data memory pipeline, a data-side walk for each L2DTLB miss and
/// an instruction-side walk for each L1ITLB miss the L2ITLB lacks, so
/// HPW_DATA_REFERENCES = L2DTLB_MISSES + L1ITLB_INSERTS_HPW; the walks always find
/// their entry (MD56), so DTLB_INSERTS_HPW = L2DTLB_MISSES. On every workload, one
/// thread and two.
#[test]
fn s4_10_vhpt_references_are_the_data_and_instruction_walks() {
    let events = ["HPW_DATA_REFERENCES", "L2DTLB_MISSES", "L1ITLB_INSERTS_HPW", "DTLB_INSERTS_HPW"];
    let (mut data, mut code) = (0, 0);
    for w in WORKLOADS.iter() {
        for pmu in ["montecito", "montecito-st"] {
            let r = run_on(pmu, &events, w.name, 5_000_000);
            let [vhpt, l2dtlb, itlb, dtlb] = events.map(|e| count(&r, e));
            assert_eq!(vhpt, l2dtlb + itlb, "{} on {pmu}", w.name);
            assert_eq!(dtlb, l2dtlb, "{} on {pmu}", w.name);
            (data, code) = (data + l2dtlb, code + itlb);
        }
    }
    assert!(data > 0 && code > 0, "both sides walk: {data} data, {code} instruction walks");
}

/// §4.15 BUS_HITM (identity I5, ERRATA MM34): "equivalent to: BUS_RD_INVALID_BST_HITM +
/// BUS_RD_HITM". BUS_HITM also counts the BILs that meet a modified line
/// (BUS_RD_INVALID_HITM): for this core (SELF, EITHER) its `fc`s of code the other
/// core wrote (`shared`'s JIT); for the I/O bridge (IO) its BILs, and its partial reads
/// that meet a modified line, which no event counts apart. ANY's excess is the sum.
#[test]
fn s4_15_bus_hitm_is_the_reads_that_met_a_modified_line() {
    let (mut bridge, mut flushes) = (0, 0);
    for w in WORKLOADS.iter() {
        let excess = |m: &str| {
            let events = [
                format!("BUS_HITM.{m}"),
                format!("BUS_RD_INVALID_BST_HITM.{m}"),
                format!("BUS_RD_HITM.{m}"),
                format!("BUS_RD_INVALID_HITM.{m}"),
            ];
            // Long enough for `shared`'s JIT to compile a method now and then.
            let cycles = if w.name == "shared" { 60_000_000 } else { 3_000_000 };
            let r = run_on("montecito", &events.iter().map(String::as_str).collect::<Vec<_>>(), w.name, cycles);
            let [hitm, bril, brl, bil] = events.map(|e| count(&r, &e));
            assert!(hitm >= bril + brl + bil, "{} {m}: {hitm} < {bril} + {brl} + {bil}", w.name);
            (hitm - bril - brl, hitm - bril - brl - bil)
        };
        // A core's excess is its BILs (an `fc`) that met the other core's modified
        // line, all of them this core's (the other core sends reads only, MMC23).
        let (own, either) = (excess("SELF"), excess("EITHER"));
        assert_eq!((own.1, either), (0, own), "{}: SELF and EITHER", w.name);
        let (io, any) = (excess("IO"), excess("ANY"));
        assert_eq!(any, (io.0 + own.0, io.1), "{}: the excess of ANY is the bridge's and the cores' BILs", w.name);
        bridge += io.0;
        flushes += own.0;
    }
    assert!(bridge > 0, "the bridge's transactions meet modified lines somewhere");
    assert!(flushes > 0, "a JIT's fc meets the other core's modified code somewhere");
}

/// RSE_CURRENT_REGS and RSE_DIRTY_REGS count, bit by bit, the register stack as each
/// call or return retires; over RSE_EVENT_RETIRED they give the average frame (the
/// programs' frames hold 8-40 registers) and the average of the older frames' registers
/// still in the 96-register file (Table 4-41).
#[test]
fn rse_register_counts_average_over_rse_events() {
    for w in ["branchy", "mixed", "os"] {
        let current = ["RSE_CURRENT_REGS_6", "RSE_CURRENT_REGS_5_TO_3", "RSE_CURRENT_REGS_2_TO_0", "RSE_EVENT_RETIRED"];
        let dirty = ["RSE_DIRTY_REGS_6", "RSE_DIRTY_REGS_5_TO_3", "RSE_DIRTY_REGS_2_TO_0", "RSE_EVENT_RETIRED"];
        let sum = |events: &[&str]| {
            let r = run_on("montecito", events, w, 5_000_000);
            let c: Vec<u64> = events.iter().map(|e| count(&r, e)).collect();
            (64 * c[0] + 8 * c[1] + c[2], c[3])
        };
        let (regs, events) = sum(&current);
        // A return from a frame allocated before the run began finds no frame
        // recorded (0 registers), so the average may fall a little below 8.
        assert!(events > 0 && (6 * events..=40 * events).contains(&regs), "{w}: {regs} current registers over {events} events");
        let (regs, events) = sum(&dirty);
        // `os`'s calls are one deep, so no older frame is dirty when one retires (each
        // process keeps its hardware thread's register stack to itself, MMC14).
        assert!((regs > 0 || w == "os") && regs <= 96 * events, "{w}: {regs} dirty registers over {events} events");
    }
}

/// §4.11.2: Montecito's reads outstanding, summed per cycle (8·HI + LO), count from the
/// cycle after a read reaches the arbiter until its first data is back through it;
/// over the line reads issued they give the read's lifetime beyond the L3 (Little's
/// law), and less the arbiter's read queue, the text's "memory latency approximation"
/// (ERRATA MMC24): at least the 200-cycle memory latency less the L3 lookup and the
/// line's transfer after its first data (14 and 18 cycles), and on `stream`, whose
/// reads queue for the data bus (`arbiter.rs`), beyond the approximation.
#[test]
fn er_mem_read_out_gives_the_bus_latency_by_littles_law() {
    let events = ["ER_MEM_READ_OUT_HI", "ER_MEM_READ_OUT_LO", "BUS_MEM_READ.BRL.SELF", "BUS_MEM_READ.BRIL.SELF"];
    let r = run_on("montecito-st", &events, "stream", 10_000_000);
    let c: Vec<u64> = events.iter().map(|e| count(&r, e)).collect();
    let (outstanding, reads) = (8 * c[0] + c[1], c[2] + c[3]);
    let latency = outstanding as f64 / reads as f64;
    assert!(reads > 1000 && latency > 168.0, "{latency} cycles over {reads} reads");
    let queued = ["SI_RQ_LIVE_REQ_HI.SELF", "SI_RQ_LIVE_REQ_LO.SELF"];
    let r = run_on("montecito-st", &queued, "stream", 10_000_000);
    let in_rq = 8 * count(&r, queued[0]) + count(&r, queued[1]);
    let approximation = (outstanding - in_rq) as f64 / reads as f64;
    assert!(in_rq > 0 && approximation < latency && approximation > 160.0, "{approximation} against {latency}");
    // The BRQ holds each read from the L2 miss to its data, longer than the ER does.
    let brq = ["ER_BRQ_LIVE_REQ_HI", "ER_BRQ_LIVE_REQ_LO", "ER_MEM_READ_OUT_HI", "ER_MEM_READ_OUT_LO"];
    let r = run_on("montecito-st", &brq, "stream", 10_000_000);
    let c: Vec<u64> = brq.iter().map(|e| count(&r, e)).collect();
    assert!(8 * c[0] + c[1] > 8 * c[2] + c[3], "{c:?}");
}

/// The snoop coalescing buffer holds every transaction of either core, and HITM
/// answers stall the bus; the in-order queue holds this core's transactions (MMC24).
#[test]
fn bus_queues_hold_both_cores_transactions() {
    let shared = ["SI_SCB_LIVE_REQ_LO.SELF", "SI_SCB_LIVE_REQ_LO.EITHER", "BUS_SNOOP_STALL_CYCLES.SELF", "BUS_SNOOP_STALL_CYCLES.EITHER"];
    let r = run_on("montecito", &shared, "shared", 10_000_000);
    let c: Vec<u64> = shared.iter().map(|e| count(&r, e)).collect();
    assert!(c[0] > 0 && c[0] < c[1], "the other core's transactions are snooped too: {c:?}");
    assert!(c[2] > 0 && c[2] < c[3], "HITM answers stall the bus: {c:?}");
    let r = run_on("montecito-st", &["SI_IOQ_LIVE_REQ_LO", "SI_IOQ_LIVE_REQ_HI"], "stream", 10_000_000);
    assert!(count(&r, "SI_IOQ_LIVE_REQ_LO") > 0);
}

/// MMC31: every special-register move of the kernel (its entry setting the processor
/// status) is followed by an srlz.i, and user code's moves serialize nothing.
#[test]
fn mmc31_the_kernels_status_moves_serialize() {
    let kernel = totals_matching("mixed", 10_000_000, |s| !s.privilege.is_user());
    let user = totals_matching("mixed", 10_000_000, |s| s.privilege.is_user());
    assert!(kernel.get(Signal::InstructionSerializations) > 0);
    assert_eq!(user.get(Signal::InstructionSerializations), 0);
    let r = run_on("montecito", &["SERIALIZATION_EVENTS"], "mixed", 10_000_000);
    assert_eq!(count(&r, "SERIALIZATION_EVENTS"), kernel.get(Signal::InstructionSerializations));
}

/// Table 4-71: CPU_CPL_CHANGES counts the changes to or from each level of its mask.
/// Each request of `services` goes 3 → 2 → 1 → 2 → 3 (its command interpreter at
/// level 2, its record services at level 1), then 3 → 0 → 3 → 0 → 3 (its debugger's
/// fault and the system call that lets the program go on): per request level 1 sees
/// 2 changes, levels 0 and 2 4 each, level 3 6, and ALL counts each of the 8 once.
/// The changes count at the level they enter, so `plm=15` counts them at every level;
/// without it, the default user and kernel levels see the changes into 3 and 0.
#[test]
fn table_4_71_cpl_changes_count_the_levels_left_and_entered() {
    let levels = ["LVL0", "LVL1", "LVL2", "LVL3", "ALL"].map(|l| format!("CPU_CPL_CHANGES.{l}:plm=15"));
    let names: Vec<&str> = levels.iter().map(String::as_str).collect();
    let r = run_on("montecito", &names, "services", 100_000_000);
    let [lvl0, lvl1, lvl2, lvl3, all] = [0, 1, 2, 3, 4].map(|i| count(&r, names[i]));
    assert!(lvl1 > 10, "requests reach the record services: {lvl1}");
    // Each of the two threads may stop inside a request.
    let near = |a: u64, b: u64| a.abs_diff(b) <= 8;
    assert!(near(lvl2, 2 * lvl1) && near(lvl0, 2 * lvl1) && near(lvl3, 3 * lvl1), "{lvl0} {lvl1} {lvl2} {lvl3}");
    assert_eq!(all, lvl1 + lvl3, "every change leaves or enters level 1 or 3, never both");
    assert_eq!(2 * all, lvl0 + lvl1 + lvl2 + lvl3, "every change touches two levels");
    let names = ["CPU_CPL_CHANGES.LVL3", "CPU_CPL_CHANGES.ALL"];
    let r = run_on("montecito", &names, "services", 100_000_000);
    let into_0_or_3 = count(&r, names[1]);
    assert_eq!(count(&r, names[0]), into_0_or_3, "a change into 0 or 3 leaves or enters 3");
    assert!(near(into_0_or_3, lvl0 / 2 + lvl3 / 2), "{into_0_or_3} changes into 0 or 3");
}

/// MD58: `services` runs under a debugger watching its request count, a data
/// breakpoint on stores to it: each request's one store to the count matches it
/// (DATA_DEBUG_REGISTER_MATCHES) and faults (DATA_DEBUG_REGISTER_FAULT), once a
/// request, as many as the requests' two changes to and from level 1.
#[test]
fn md58_a_watched_store_matches_a_data_breakpoint_and_faults() {
    let names = ["DATA_DEBUG_REGISTER_FAULT", "DATA_DEBUG_REGISTER_MATCHES", "CPU_CPL_CHANGES.LVL1:plm=15"];
    let r = run_on("montecito", &names, "services", 100_000_000);
    let [faults, matches, level_1] = names.map(|n| count(&r, n));
    assert!(faults > 10, "{faults} faults");
    assert_eq!(matches, faults, "every match faults: the watch is on stores, which retire");
    // Each of the two threads may stop inside a request.
    assert!(faults.abs_diff(level_1 / 2) <= 2, "{faults} faults for {level_1} changes of level 1");
    // No other workload runs under a debugger.
    assert_eq!(count(&run_on("montecito", &names[..1], "mixed", 20_000_000), names[0]), 0);
}
