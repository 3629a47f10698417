//! The engine's invariants (docs/engine.md E6) on every machine, built-in workload and
//! thread count, in the engine `pmu stat` runs: no cycle issues more than the core can,
//! every run reaches its length, every T4 strand with work counts every cycle, two
//! Montecito threads retire at most what each does alone, and a chain of dependent
//! misses takes at least its links' latencies; the width and the queues' bounds also on
//! the shipped traces (`data/traces`).

use pmukit_arch::Catalog;
use pmukit_sim::machine::arm11::{Arm11Config, Arm11Core};
use pmukit_sim::machine::mem::Queue;
use pmukit_sim::machine::montecito::MontecitoConfig;
use pmukit_sim::machine::run::Skipping;
use pmukit_sim::machine::sparc::{SparcChip, SparcConfig};
use pmukit_sim::machine::{self};
use pmukit_sim::program::builtin::{self, WORKLOADS};
use pmukit_sim::program::ia64;
use pmukit_sim::program::{trace, Program};
use pmukit_sim::stat::{self, StatOptions};
use pmukit_sim::stream::{steady_runs, Block, Signal, Span, Totals};

/// Each machine (by a PMU it counts for), and the instructions its core issues at most
/// in a cycle, summed over its hardware threads: ARM11 issues one (ARM1176 TRM §1.2, a
/// single-issue pipeline); a T4 core's select takes up to two instructions of one
/// strand (TABLE 10-2 sl 1-2); a KT core has two integer pipelines, one a thread group
/// ([T2]); Niagara's single pipeline issues one ([T1]); Montecito disperses two bundles
/// of three (§2.3.1).
const MACHINES: [(&str, u64); 5] = [("arm1176", 1), ("sparc-t4", 2), ("sparc-kt", 2), ("niagara", 1), ("montecito", 6)];

/// The recorded programs shipped with pmukit, each on every machine.
const TRACES: [&str; 2] = [
    concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/traces/sum.lackey"),
    concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/traces/loop.trace"),
];

fn trace_program(path: &str) -> Program {
    let file = std::fs::File::open(path).unwrap();
    trace::program(Box::new(std::io::BufReader::new(file)), path).unwrap().0
}

fn options(workload: &str, threads: Option<usize>) -> StatOptions {
    StatOptions { workload: workload.to_string(), seed: 3, threads, ..StatOptions::default() }
}

/// The blocks of `workload` on `pmu`'s machine with `threads` hardware threads (the
/// machine's own number for `None`).
fn blocks(pmu: &str, workload: &str, threads: Option<usize>) -> impl Iterator<Item = Block> {
    let cat = Catalog::builtin();
    stat::blocks(&[cat.pmu(pmu).unwrap()], &options(workload, threads), stat::Reads::ALL).unwrap().0.every()
}

fn instructions(group: &[&Span]) -> u64 {
    group.iter().map(|s| s.signals.get(Signal::Instructions)).sum()
}

/// E6: summed over its hardware threads, no cycle of a core issues more than the
/// core's width, and the run reaches the length asked for (no machine stops early or
/// stalls for ever).
#[test]
fn no_cycle_issues_more_than_the_core_can_and_every_run_reaches_its_length() {
    const CYCLES: u64 = 2_000_000;
    for (pmu, width) in MACHINES {
        for w in WORKLOADS {
            for threads in [Some(1), None] {
                let at = format!("{pmu} {} threads {threads:?}", w.name);
                let mut run = 0;
                for block in blocks(pmu, w.name, threads) {
                    for (_, group) in steady_runs(&block.body) {
                        assert!(instructions(&group) <= width, "{at}: {group:?}");
                    }
                    run += block.cycles_per_iteration() * block.repeat;
                    if run >= CYCLES {
                        break;
                    }
                }
                assert!(run >= CYCLES, "{at}: the run ended after {run} cycles");
            }
        }
    }
}

/// E6 on the shipped traces: no cycle issues more than the core's width, and every
/// recorded instruction issues before the stream ends.
#[test]
fn the_shipped_traces_keep_the_cores_width_and_issue_every_instruction() {
    let cat = Catalog::builtin();
    for path in TRACES {
        let mut issued = Vec::new();
        for (pmu, width) in MACHINES {
            let opts = StatOptions { trace: Some(path.into()), ..StatOptions::default() };
            let (blocks, status) = stat::blocks(&[cat.pmu(pmu).unwrap()], &opts, stat::Reads::ALL).unwrap();
            let blocks = blocks.every();
            let mut total = 0;
            for block in blocks {
                for (cycles, group) in steady_runs(&block.body) {
                    assert!(instructions(&group) <= width, "{pmu} {path}: {group:?}");
                    total += cycles * instructions(&group) * block.repeat;
                }
            }
            assert_eq!(status.and_then(|s| s.error()), None, "{pmu} {path}");
            issued.push(total);
        }
        assert!(issued[0] > 0 && issued.iter().all(|&n| n == issued[0]), "{path}: {issued:?}");
    }
}

/// Instructions retired in the first `cycles` cycles on a Montecito core with
/// `threads` hardware threads, by hardware thread, of the program `program` makes.
fn montecito_retired(program: &dyn Fn() -> Program, threads: usize, cycles: u64) -> Vec<u64> {
    (0..threads)
        .map(|t| {
            let blocks = machine::montecito(MontecitoConfig::new(threads), program(), Skipping::On);
            Totals::of(blocks, cycles, |s| usize::from(s.thread) == t).get(Signal::Instructions)
        })
        .collect()
}

/// E6, §2.4: switch-on-event multithreading hides one thread's stalls behind the
/// other's work; it cannot make a thread retire more than it does alone, so two
/// software threads, each on a hardware thread of its own, retire at most what each
/// does alone, summed (at most twice what the faster does). A program of more
/// software threads than hardware threads (`os`, `shared`) is left out: which of its
/// threads run, and for how long, is the scheduler's and the time-out's choice (a
/// consumer that never misses holds the pipeline until its time-out while producers
/// wait on theirs), so its totals on one and on two hardware threads are work of
/// different threads.
#[test]
fn two_montecito_threads_retire_at_most_what_each_does_alone_summed() {
    const CYCLES: u64 = 20_000_000;
    for w in WORKLOADS {
        let program = |threads| ia64::compiled(builtin::program(w.name, 3, threads).unwrap());
        if program(2).threads.len() != 2 {
            continue;
        }
        let both: u64 = montecito_retired(&|| program(2), 2, CYCLES).iter().sum();
        let alone: u64 = (0..2)
            .map(|t| {
                let only = || {
                    let mut p = program(2);
                    Program { threads: vec![p.threads.swap_remove(t)], timer: p.timer }
                };
                montecito_retired(&only, 1, CYCLES)[0]
            })
            .sum();
        assert!(both > 0 && both <= alone, "{}: two threads retire {both}, alone {alone}", w.name);
    }
}

/// E6: a chain of dependent loads (`chase`, each load's address the value of the one
/// before) takes at least the memory latency per link that misses to memory: each
/// hardware thread's chain makes at most one memory read per latency, however the
/// threads overlap theirs. Every memory read of the run counts against the bound (a
/// few are instruction fetches and page walks): the chains take 79-99 % of it.
#[test]
fn a_dependent_chain_takes_at_least_the_memory_latency_a_link() {
    const CYCLES: u64 = 10_000_000;
    // Each machine's memory latency: ARM1176's line fill (ERRATA MARM4), the SPARC
    // chips' local memory (MSP2), Montecito's (Table 2-8 note 4).
    for (pmu, latency, most) in [("arm1176", 24, 1), ("sparc-t4", 260, 2), ("sparc-kt", 190, 2), ("niagara", 120, 2), ("montecito", 200, 2)]
    {
        for threads in 1..=most {
            let t = Totals::of(blocks(pmu, "chase", Some(threads)), CYCLES, |_| true);
            let reads = t.get(Signal::MemoryReads) + t.get(Signal::BackgroundMemoryReads);
            assert!(reads > 0 && reads * latency <= threads as u64 * CYCLES, "{pmu}, {threads} threads: {reads} reads of {latency} cycles");
        }
    }
}

/// E6, TABLE 10-2 sl 26: a T4 strand's CYCLES counts every cycle the strand is not
/// parked or halted, whether it issues, waits for its turn or stalls; a strand with no
/// software thread is parked, and one in its idle loop's CPU_YIELD counts none of its
/// own halted cycles (ERRATA MSP27), which the other strands count as theirs. So over
/// a run of `cycles`, CYCLES on all strands is the cycles times the strands with work,
/// less the halted cycles, on every workload and strand count, and on the shipped
/// traces.
#[test]
fn every_t4_strand_with_work_counts_every_cycle_it_is_not_halted() {
    const CYCLES: u64 = 3_000_000;
    let cat = Catalog::builtin();
    let sel = cat.resolve("CYCLES", "sparc-t4").unwrap();
    for w in WORKLOADS {
        for strands in [1, 3, 8] {
            let busy = builtin::program(w.name, 3, strands).unwrap().threads.len().min(strands) as u64;
            let opts = StatOptions { cycles: CYCLES, ..options(w.name, Some(strands)) };
            let r = stat::stat(&cat, std::slice::from_ref(&sel), &opts, &mut |_| {}).unwrap();
            let halted = Totals::of(blocks("sparc-t4", w.name, Some(strands)), CYCLES, |_| true).get(Signal::HaltedCycles);
            assert_eq!(w.name == "idle", halted > 0, "{} on {strands} strands: only the idle loop halts", w.name);
            assert_eq!(r.events[0].count, Some(busy * CYCLES - halted), "{} on {strands} strands", w.name);
        }
    }
    // A trace's one thread runs on one strand, to the trace's end.
    for path in TRACES {
        let opts = StatOptions { trace: Some(path.into()), ..StatOptions::default() };
        let r = stat::stat(&cat, std::slice::from_ref(&sel), &opts, &mut |_| {}).unwrap();
        assert!(r.cycles > 0 && r.cycles < opts.cycles, "{path}: {}", r.cycles);
        assert_eq!(r.events[0].count, Some(r.cycles), "{path}");
    }
}

/// E6, §2.5: this core's request queue holds at most four requests and its write
/// address queue two, in every cycle of every Montecito workload on one and two
/// threads (the SI's own-core occupancies, SI_RQ_LIVE_REQ.SELF and
/// SI_WRITEQ_LIVE_REQ.SELF, are what the structures hold: `arbiter.rs`); and the
/// queues are used, so the bound is not met by their never filling.
#[test]
fn montecito_queues_hold_at_most_their_entries() {
    const CYCLES: u64 = 2_000_000;
    let mut most = [0u64; 2];
    for w in WORKLOADS {
        for threads in [Some(1), None] {
            let mut run = 0;
            for block in blocks("montecito", w.name, threads) {
                for span in &block.body {
                    let held = [span.signals.get(Signal::SiRqLive), span.signals.get(Signal::SiWriteqLive)];
                    assert!(held[0] <= 4 && held[1] <= 2, "{} threads {threads:?}: {held:?} in {span:?}", w.name);
                    most = [most[0].max(held[0]), most[1].max(held[1])];
                }
                run += block.cycles_per_iteration() * block.repeat;
                if run >= CYCLES {
                    break;
                }
            }
        }
    }
    assert_eq!(most, [4, 2], "some workload fills each queue");
}

/// The queues a run of at most `cycles` cycles of `program` left on each machine, with
/// the cycles it ran, every iteration simulated (skipped periods would repeat requests
/// the queues never saw): ARM1176, the SPARC chips with strands in turns and at once,
/// Montecito (on the program as an Itanium compiler lays it out when `compiled`: the
/// built-in workloads; a trace's instructions are the ones it recorded).
fn queues_after(program: &dyn Fn() -> Program, compiled: bool, cycles: u64) -> Vec<(String, u64, Vec<Queue>)> {
    let mut runs = Vec::new();
    let mut arm = machine::arm11(Arm11Config::new(Arm11Core::Arm1176), program(), Skipping::Off);
    let ran = Totals::of(&mut arm, cycles, |_| true).cycles;
    runs.push(("arm1176".into(), ran, arm.queues()));
    for chip in [SparcChip::T4, SparcChip::Kt, SparcChip::Niagara] {
        for at_once in [false, true] {
            let cfg = SparcConfig { strands_at_once: at_once, ..SparcConfig::new(chip) };
            let mut run = machine::sparc(cfg, program(), Skipping::Off);
            let ran = Totals::of(&mut run, cycles, |_| true).cycles;
            runs.push((format!("{chip:?} at once {at_once}"), ran, run.queues()));
        }
    }
    let threads = program().threads.len().clamp(1, 2);
    let p = if compiled { ia64::compiled(program()) } else { program() };
    let mut mt = machine::montecito(MontecitoConfig::new(threads), p, Skipping::Off);
    let ran = Totals::of(&mut mt, cycles, |_| true).cycles;
    runs.push(("montecito".into(), ran, mt.queues()));
    runs
}

/// A program to run on every machine: its name, how to make it, and whether Montecito
/// runs it as a compiler lays it out (`queues_after`).
type Named = (String, Box<dyn Fn() -> Program>, bool);

/// A queue of a machine: the machine, the queue's name and unit.
type Held = (String, &'static str, Option<usize>);

/// E6, docs/engine.md E3: every structure a machine's requests pass through (the
/// ARM1176's write and line-fill buffers, each SPARC strand's store buffer and T4
/// load buffer, the T4 L2's miss, fill and write-back buffers, the memory
/// controllers' write queues, Montecito's request queue, write buffers, write data
/// buffers and data bus) holds at most its entries at once, on every machine,
/// workload, thread count and shipped trace, with SPARC strands in turns and at once
/// (whose requests reach the structures out of order). By Little's law the mean occupancy is the arrival rate times the mean
/// residence, Σ residence / cycles, so it too is at most the entries. And the
/// structures are used: each holds requests on some workload, and each machine has
/// one that is full at some cycle.
#[test]
fn every_queue_holds_at_most_its_entries_and_keeps_littles_law() {
    const CYCLES: u64 = 1_000_000;
    // A request may still hold its entry this long after the run's last cycle.
    const TAIL: u64 = 100_000;
    // By machine, queue and unit: requests, the most held, the size.
    let mut used: std::collections::BTreeMap<Held, (u64, usize, usize)> = Default::default();
    let mut programs: Vec<Named> = Vec::new();
    for w in WORKLOADS {
        for threads in [1, 8] {
            programs.push((format!("{} threads {threads}", w.name), Box::new(move || builtin::program(w.name, 3, threads).unwrap()), true));
        }
    }
    for path in TRACES {
        programs.push((path.rsplit('/').next().unwrap_or(path).to_string(), Box::new(move || trace_program(path)), false));
    }
    for (name, program, compiled) in &programs {
        for (machine, ran, queues) in queues_after(program, *compiled, CYCLES) {
            for q in queues {
                let o = q.occupancy;
                let at = format!("{machine} {} {name}: {q:?}", q.name);
                assert!(o.most <= q.size, "{at}");
                assert!(o.residence <= q.size as u64 * (ran + TAIL), "{at}: mean occupancy above the size");
                let u = used.entry((machine.clone(), q.name, q.unit)).or_insert((0, 0, q.size));
                *u = (u.0 + o.requests, u.1.max(o.most), q.size);
            }
        }
    }
    // By chip: the SPARC chips' write queues fill with strands at once.
    let mut chips: std::collections::BTreeMap<&str, (bool, bool)> = Default::default();
    for ((machine, name, unit), (requests, most, size)) in &used {
        let chip = machine.split(' ').next().unwrap_or(machine);
        let c = chips.entry(chip).or_insert((true, false));
        let total: u64 = used.iter().filter(|((m, n, u), _)| m.starts_with(chip) && n == name && u == unit).map(|(_, u)| u.0).sum();
        c.0 &= total > 0;
        c.1 |= most == size;
        let unit = unit.map_or(String::new(), |u| u.to_string());
        println!("{machine:24} {name:18} {unit:>2} requests {requests:>9} most {most}/{size}");
    }
    for (chip, (all_used, one_full)) in chips {
        assert!(all_used && one_full, "{chip}: every queue used on some workload {all_used}, one full {one_full}");
    }
}
