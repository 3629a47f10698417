//! The Montecito machine running programs: exact skipping, switch-on-event threading
//! (§2.4.1) and the hierarchy's relations.

mod common;

use std::collections::HashMap;

use pmukit_sim::machine::montecito::MontecitoConfig;
use pmukit_sim::machine::run::Skipping;
use pmukit_sim::machine::{self};
use pmukit_sim::models::montecito;
use pmukit_sim::program::builtin::{self, WORKLOADS};
use pmukit_sim::program::ia64;
use pmukit_sim::program::{Access, DataStream, Memory, Op, Program};
use pmukit_sim::stream::{Branch, FetchMiss, MemRef, Signal, Span, Totals, IBUF_BRQ_FULL, IBUF_FULL, MONTECITO};

/// The tables of selections that cannot count and that count zero, with their reasons.
const MODEL_DOC: &str = include_str!("../../../docs/montecito-model.md");

/// The names in the first column of the table under `heading` in
/// docs/montecito-model.md: an event's name stands for all its selections.
fn documented(heading: &str) -> Vec<String> {
    let section = MODEL_DOC.split(heading).nth(1).expect("the table").split("\n## ").next().unwrap();
    let mut names = Vec::new();
    for row in section.lines().filter(|l| l.starts_with("| `")) {
        let first = row.split('|').nth(1).unwrap();
        names.extend(first.split('`').skip(1).step_by(2).map(str::to_string));
    }
    names
}

/// Whether a table's entry names `name`: the selection itself, or its event (a name
/// alone stands for every unit mask).
fn covers(entry: &str, name: &str) -> bool {
    name == entry || name.strip_prefix(entry).is_some_and(|rest| rest.starts_with('.'))
}

/// A program of one user-mode phase at 0x1_0000 whose one data stream is a fixed
/// location.
fn one_phase(body: Vec<pmukit_sim::program::Op>, iterations: u64) -> pmukit_sim::program::Program {
    use pmukit_sim::program::{DataStream, Memory};
    common::one_phase(body, iterations, DataStream::fixed(0x100_0000, Memory::Cacheable))
}

/// Cacheable data at 0x1000_0000 that advances `stride` bytes an iteration through
/// `footprint` bytes, on `page`-byte pages.
fn striding(stride: i64, footprint: u64, page: u64) -> DataStream {
    DataStream { base: 0x1000_0000, stride, footprint, memory: Memory::Cacheable, page, shared: false, nullable: false, fresh: false }
}

fn totals(workload: &str, threads: usize, cycles: u64, skipping: Skipping) -> Totals {
    let program = builtin::program(workload, 3, threads).unwrap();
    Totals::of(machine::montecito(MontecitoConfig::new(threads), program, skipping), cycles, |_| true)
}

/// 5×10^6 cycles of `workload` (seed 3, two threads) with every 100th access of
/// each structure fault injection reaches in error (MMC26, MMC67).
fn faulty(workload: &str, skipping: Skipping) -> Totals {
    let cfg = MontecitoConfig { fault_every: Some(100), ..MontecitoConfig::new(2) };
    Totals::of(machine::montecito(cfg, builtin::program(workload, 3, 2).unwrap(), skipping), 5_000_000, |_| true)
}

/// Skipping proven repetition gives exactly the counts of simulating every iteration,
/// one thread and two, on the programs as written and as an Itanium compiler lays them
/// out in bundles (what `pmu stat` runs).
#[test]
fn skipping_is_exact_on_every_builtin_workload() {
    for w in WORKLOADS {
        for threads in [1, 2] {
            let on = totals(w.name, threads, 2_000_000, Skipping::On);
            let off = totals(w.name, threads, 2_000_000, Skipping::Off);
            assert_eq!(on, off, "{} on {threads} threads", w.name);
            let laid_out = |skipping| {
                let program = ia64::compiled(builtin::program(w.name, 3, threads).unwrap());
                Totals::of(machine::montecito(MontecitoConfig::new(threads), program, skipping), 2_000_000, |_| true)
            };
            assert_eq!(laid_out(Skipping::On), laid_out(Skipping::Off), "{} in bundles on {threads} threads", w.name);
        }
    }
}

/// A stream through 16 MB, more than the L3 holds, every line a miss at every level:
/// the runner finds its period on the core and replays it on the caches and TLBs
/// (machine::replay), and the counts are exactly those of simulating every iteration.
#[test]
fn a_period_replayed_on_the_caches_and_tlbs_counts_exactly() {
    use pmukit_sim::program::{Access, DataStream, Memory, Op, Pattern};
    let stream = DataStream {
        base: 0x4000_0000,
        stride: 64,
        footprint: 16 << 20,
        memory: Memory::Cacheable,
        page: 16 << 10,
        shared: false,
        nullable: false,
        fresh: false,
    };
    let load = Op::Load(Access { stream: 0, offset: 0, size: 8, use_next: true });
    let body = vec![load, Op::Int, Op::Int, Op::Branch { target: 0x1_0000, when: Pattern::Loop }];
    let run = |skipping| {
        let program = common::one_phase(body.clone(), 200_000, stream);
        machine::montecito(MontecitoConfig::new(1), program, skipping).collect::<Vec<_>>()
    };
    let on = run(Skipping::On);
    assert!(on.iter().any(|b| b.repeat > 100), "no long skip: {:?}", on.iter().map(|b| b.repeat).max());
    let totals = |blocks: Vec<pmukit_sim::stream::Block<{ pmukit_sim::stream::MONTECITO }>>| Totals::of(blocks, u64::MAX, |_| true);
    assert_eq!(totals(on), totals(run(Skipping::Off)));
}

/// Two threads streaming through buffers of their own, each line an L3 miss that
/// switches threads every few iterations: no phase runs alone long enough to repeat,
/// but the two threads' turns repeat together (`run/turns.rs`), and skipping them
/// counts exactly what simulating every iteration does.
#[test]
fn turns_of_two_threads_repeat_together_and_skip_exactly() {
    use pmukit_sim::program::{Access, DataStream, Memory, Op, Pattern, Phase, Program};
    let thread = |n: u64| -> Box<dyn Iterator<Item = Phase> + Send> {
        let stream = DataStream {
            base: 0x4000_0000 + (n << 28),
            stride: 64,
            footprint: 32 << 20,
            memory: Memory::Cacheable,
            page: 16 << 10,
            shared: false,
            nullable: false,
            fresh: false,
        };
        let load = Op::Load(Access { stream: 0, offset: 0, size: 8, use_next: true });
        let entry = 0x1_0000 + n * 0x1000;
        let body = vec![load, Op::Int, Op::Int, Op::Branch { target: entry, when: Pattern::Loop }];
        Box::new(std::iter::once(Phase { entry, context: 1 + n as u32, ..common::phase(body, 100_000, vec![stream]) }))
    };
    let run = |skipping| {
        let program = Program { threads: vec![thread(0), thread(1)], timer: None };
        machine::montecito(MontecitoConfig::new(2), program, skipping).collect::<Vec<_>>()
    };
    let on = run(Skipping::On);
    let skipped: u64 = on.iter().filter(|b| b.repeat > 1).map(|b| b.cycles()).sum();
    let all: u64 = on.iter().map(|b| b.cycles()).sum();
    assert!(skipped * 2 > all, "{skipped} of {all} cycles skipped");
    let totals = |blocks: Vec<pmukit_sim::stream::Block<{ pmukit_sim::stream::MONTECITO }>>| Totals::of(blocks, u64::MAX, |_| true);
    assert_eq!(totals(on), totals(run(Skipping::Off)));
}

/// Blocks are handed out as the machine goes, also when the threads switch after
/// every iteration (an L3 miss each time): the runner never piles up the spans of a
/// long run (it once held hundreds of megabytes of them).
#[test]
fn threads_that_switch_every_iteration_hand_out_small_blocks() {
    let program = builtin::program("mixed", 1, 2).unwrap();
    let mut cycles = 0;
    for block in machine::montecito(MontecitoConfig::new(2), program, Skipping::On) {
        // A period found is one block however long (up to the runner's limit); what
        // must not grow is the run of iterations simulated one by one.
        assert!(block.repeat > 1 || block.body.len() <= 4096, "a block of {} spans after {cycles} cycles", block.body.len());
        cycles += block.cycles();
        if cycles > 8_000_000 {
            return;
        }
    }
    panic!("mixed ended after {cycles} cycles");
}

#[test]
fn the_hierarchys_relations_hold() {
    for w in WORKLOADS {
        let t = totals(w.name, 2, 10_000_000, Skipping::On);
        let ctx = w.name;
        // The RSE's fills read the L1D too (MMC17).
        assert!(t.get(Signal::DCacheMisses) <= t.get(Signal::Loads) + t.get(Signal::RseLoads), "{ctx}");
        assert!(t.get(Signal::MainTlbMisses) <= t.get(Signal::ITlbMisses) + t.get(Signal::DTlbMisses), "{ctx}");
        assert!(t.get(Signal::ReturnsMispredicted) <= t.get(Signal::Returns), "{ctx}");
        assert!(t.get(Signal::BranchMispredicts) <= t.get(Signal::Branches), "{ctx}");
        assert!(t.get(Signal::Instructions) <= 6 * t.cycles, "{ctx}: two bundles a cycle at most");
        // Each level's lookups are the misses of the level above: the prefetcher's L2I
        // misses are its L3 lookups (MMC21), and the L1I's demand misses reach the L2I
        // and, missing it, the L3 (an L3 miss that switches threads completes in the
        // background, MD12, so the foreground's L3 lookups can be fewer).
        let l3_prefetch = t.get(Signal::L3InstructionPrefetchHits) + t.get(Signal::L3InstructionPrefetchMisses);
        assert_eq!(t.get(Signal::L2iPrefetchMisses), l3_prefetch, "{ctx}");
        assert!(t.get(Signal::L2iPrefetchHits) + t.get(Signal::L2iPrefetchMisses) <= t.get(Signal::L1iPrefetches), "{ctx}");
        let l2i = t.get(Signal::L2InstructionHits) + t.get(Signal::L3InstructionHits) + t.get(Signal::L3InstructionMisses);
        assert!(l2i <= t.get(Signal::ICacheMisses), "{ctx}: {l2i} L2I demand lookups");
        // One prefetch request per new line, or a stream's (MMC50). (The run may end
        // between a fetch and its prefetch, which goes out with the next issue group.)
        let requests = t.get(Signal::L1iPrefetches);
        assert!(t.get(Signal::L1iStrmPrefetches) <= requests, "{ctx}");
        assert!(
            (requests - t.get(Signal::L1iStrmPrefetches)).abs_diff(t.get(Signal::ICacheReads)) <= t.get(Signal::L1iStrmPrefetches) + 1,
            "{ctx}: one prefetch request per new line outside a stream"
        );
        // MMC22: partial reads are memory reads; what the coalescing buffers send is
        // memory writes.
        assert!(t.get(Signal::PartialMemoryReads) <= t.get(Signal::MemoryReads), "{ctx}");
        let coalesced: u64 = [Signal::WcLines, Signal::Wc32, Signal::Wc16, Signal::Wc8Low, Signal::Wc8High].iter().map(|&s| t.get(s)).sum();
        assert!(coalesced <= t.get(Signal::MemoryWrites), "{ctx}");
    }
}

/// MMC23: the other core takes the shared program's lines in turn: this core's
/// reads of them are snooped (HITM from the other's modified copy), its stores to a
/// copy the other shares invalidate it (BIL), and the other's accesses are answered
/// by this core. A program with no shared data, or a one-core package, has none.
#[test]
fn mmc23_the_other_core_snoops_the_shared_lines() {
    let t = totals("shared", 2, 20_000_000, Skipping::On);
    for s in [Signal::BrlHitm, Signal::BrilHitm, Signal::BusInvalidates, Signal::PeerBril, Signal::PeerBrilHitm, Signal::L2dFillsShared] {
        assert!(t.get(s) > 0, "{s:?}");
    }
    assert_eq!(t.get(Signal::StoresHitShared), t.get(Signal::BusInvalidates));
    assert!(t.get(Signal::PeerBrlHit) + t.get(Signal::PeerBrlHitm) <= t.get(Signal::PeerBrl));
    assert!(t.get(Signal::PeerBrilHit) + t.get(Signal::PeerBrilHitm) <= t.get(Signal::PeerBril));
    let answered: u64 = [Signal::BrlHit, Signal::BrlHitm, Signal::BrilHit, Signal::BrilHitm].iter().map(|&s| t.get(s)).sum();
    assert!(answered <= t.get(Signal::MemoryReads) + t.get(Signal::BackgroundMemoryReads), "answers only to bus reads");
    let states =
        [Signal::L2dFillsModified, Signal::L2dFillsExclusive, Signal::L2dFillsShared, Signal::L2dFillsInvalid, Signal::L2dFillsPending];
    let fills: u64 = states.iter().map(|&s| t.get(s)).sum();
    // Every L2D miss fills its line in one state; those still on their way when the
    // run ends (16 request buffers' worth at most) are not laid yet.
    assert!(fills <= t.get(Signal::L2DataMisses) && t.get(Signal::L2DataMisses) - fills <= 16, "{fills} fills");
    let quiet =
        |t: &Totals| [Signal::PeerBrl, Signal::PeerBril, Signal::BrlHitm, Signal::BusInvalidates].iter().map(|&s| t.get(s)).sum::<u64>();
    assert_eq!(quiet(&totals("compute", 2, 5_000_000, Skipping::On)), 0, "no shared data");
    let cfg = MontecitoConfig::new(2).with_overrides("[core]\ncores = 1\n", "m.toml").unwrap();
    let alone = Totals::of(machine::montecito(cfg, builtin::program("shared", 3, 2).unwrap(), Skipping::On), 20_000_000, |_| true);
    assert_eq!(quiet(&alone), 0, "one core");
    assert!(alone.get(Signal::Instructions) > t.get(Signal::Instructions), "lines bouncing between cores cost time");
}

/// MMC22: the frame-buffer fill's stores coalesce into whole lines; its descriptor
/// (16 + 8 + 8 bytes, drained by the barrier) leaves as a 16-byte piece and two 8-byte
/// ones; the L3's clean victims are castouts unless the platform does not want them.
#[test]
fn mmc22_write_coalescing_and_clean_castouts() {
    let t = totals("stream", 1, 20_000_000, Skipping::On);
    for s in [Signal::WcLines, Signal::Wc16, Signal::Wc8Low, Signal::Wc8High, Signal::CleanCastouts] {
        assert!(t.get(s) > 0, "{s:?}");
    }
    assert_eq!(t.get(Signal::Wc16), t.get(Signal::Wc8Low), "one header and one timestamp per frame");
    let cfg = MontecitoConfig::new(1).with_overrides("[core]\nclean_castouts = false\n", "m.toml").unwrap();
    let program = builtin::program("stream", 3, 1).unwrap();
    let off = Totals::of(machine::montecito(cfg, program, Skipping::On), 20_000_000, |_| true);
    assert_eq!(off.get(Signal::CleanCastouts), 0);
    assert_eq!(off.get(Signal::Instructions), t.get(Signal::Instructions), "castouts cost the core nothing");
}

/// A pointer chase over `footprint` bytes, each load's value the next's address
/// (`use_next`), among `ints` integer instructions, run by `threads` software threads,
/// each over data of its own.
fn chasing(threads: usize, footprint: u64, ints: usize) -> Program {
    let phase = |t: u64| {
        let stream = DataStream {
            base: 0x1000_0000 * (t + 1),
            stride: 256,
            footprint,
            memory: Memory::Cacheable,
            page: 1 << 14,
            shared: false,
            nullable: false,
            fresh: false,
        };
        let mut body = vec![Op::Int; ints];
        body.push(Op::Load(Access { stream: 0, offset: 0, size: 8, use_next: true }));
        body.push(Op::Int);
        common::phase(body, u64::MAX, vec![stream])
    };
    Program { threads: (0..threads as u64).map(|t| Box::new(std::iter::once(phase(t))) as _).collect(), timer: None }
}

/// §2.4.1.1: an L3 miss of the foreground thread switches to the other thread when the
/// other is more urgent, and its data returns in the background, where it completes:
/// the thread waits for what is not back when it returns (docs/engine.md, step D).
/// So two threads running the same miss-bound loop overlap their misses, and retire
/// more than one does, but at most twice as much (ERRATA MMC12, MMC13).
#[test]
fn l3_misses_switch_threads_and_complete_in_the_background() {
    let run = |threads| {
        Totals::of(machine::montecito(MontecitoConfig::new(threads), chasing(threads, 256 << 20, 8), Skipping::On), 20_000_000, |_| true)
    };
    let (one, two) = (run(1), run(2));
    assert!(two.get(Signal::BackgroundMemoryReads) > 0);
    assert_eq!(one.get(Signal::BackgroundMemoryReads), 0);
    let (i1, i2) = (one.get(Signal::Instructions), two.get(Signal::Instructions));
    assert!(i2 > i1 * 5 / 4, "switching hides memory latency: {i2} against {i1}");
    assert!(i2 <= 2 * i1, "switch-on-event at most doubles: {i2} against {i1}");
    // The dependent chain is bounded by the latency on each thread: no thread makes
    // more misses than the cycles allow.
    let misses = two.get(Signal::MemoryReads) + two.get(Signal::BackgroundMemoryReads);
    assert!(misses <= 2 * 20_000_000 / MontecitoConfig::new(2).memory_cycles, "{misses} misses");
}

/// ERRATA MMC46: a thread switched in retires an instruction before an L3 miss can
/// switch it out again: its miss before then is gated (and a missed opportunity), and
/// the cycles from its switch-in to its first retirement are gated cycles. Each
/// thread's loop here begins with its miss.
#[test]
fn mmc46_a_thread_switched_in_retires_before_it_is_switched_out() {
    let run = |threads| {
        Totals::of(machine::montecito(MontecitoConfig::new(threads), chasing(threads, 256 << 20, 0), Skipping::On), 20_000_000, |_| true)
    };
    let two = run(2);
    let gated = two.get(Signal::ThreadSwitchesGated);
    assert!(gated > 0 && gated <= two.get(Signal::ThreadSwitchesMissed), "{gated}");
    assert!(two.get(Signal::ThreadSwitchGatedCycles) >= gated, "each gated miss comes in a gated cycle");
    let one = run(1);
    assert_eq!((one.get(Signal::ThreadSwitchesGated), one.get(Signal::ThreadSwitchGatedCycles)), (0, 0));
}

/// ERRATA MMC47: a load's wait is a cancelled load's when the L2D cancelled its request
/// and issued it again. FP loads (the L2D's) two to a group over lines 16 bytes apart:
/// the second of each pair meets the first's bank (MMC36) and waits for it.
#[test]
fn mmc47_the_wait_for_a_cancelled_load_is_a_cancel_bubble() {
    use pmukit_sim::program::{Access, DataStream, Memory, Op, Pattern};
    let at = |offset, use_next| Op::FpLoad(Access { stream: 0, offset, size: 8, use_next });
    let run = |second: u32| {
        let body = vec![at(0, false), at(second, true), Op::Int, Op::Branch { target: 0x1_0000, when: Pattern::Loop }];
        let data = DataStream {
            base: 0x100_0000,
            stride: 0,
            footprint: 1,
            memory: Memory::Cacheable,
            page: 16 << 10,
            shared: false,
            nullable: false,
            fresh: false,
        };
        let program = common::program_of(common::phase(body, 1_000, vec![data]));
        Totals::of(machine::montecito(MontecitoConfig::new(1), program, Skipping::Off), u64::MAX, |_| true)
    };
    let conflict = run(256);
    assert!(conflict.get(Signal::L2dBankConflicts) > 0, "the second load meets the first's bank");
    assert!(conflict.get(Signal::CancelledLoadCycles) > 0);
    assert!(conflict.get(Signal::CancelledLoadCycles) <= conflict.get(Signal::DataDepStallCycles));
    let apart = run(16);
    assert_eq!((apart.get(Signal::L2dBankConflicts), apart.get(Signal::CancelledLoadCycles)), (0, 0));
}

/// MMC14, §2.4.1.1: a thread that never misses holds the pipeline until the core's
/// time-out, `thread_quantum` cycles after the last switch, and then hands it to the
/// other thread: two such threads alternate every quantum and retire alike, and
/// skipping repeated iterations keeps the count of time-outs exact.
#[test]
fn mmc14_threads_that_never_miss_take_turns_at_the_time_out() {
    const CYCLES: u64 = 2_000_000;
    let quantum = 4096;
    let program = || {
        let phase = || common::phase(vec![pmukit_sim::program::Op::Int; 40], u64::MAX, Vec::new());
        Program { threads: vec![Box::new(std::iter::once(phase())) as _, Box::new(std::iter::once(phase())) as _], timer: None }
    };
    let run = |skipping, thread: Option<u8>| {
        let cfg = MontecitoConfig { thread_quantum: quantum, ..MontecitoConfig::new(2) };
        Totals::of(machine::montecito(cfg, program(), skipping), CYCLES, |s| thread.is_none_or(|t| s.thread == t))
    };
    let t = run(Skipping::On, None);
    assert_eq!(t, run(Skipping::Off, None));
    // A quantum of a few iterations: the threads' turns are short, and the runner
    // skips whole rounds of them (`turns.rs`), each turn's time-out inside.
    let short = |skipping| {
        let cfg = MontecitoConfig { thread_quantum: 64, ..MontecitoConfig::new(2) };
        Totals::of(machine::montecito(cfg, program(), skipping), CYCLES, |_| true)
    };
    let on = short(Skipping::On);
    assert_eq!(on, short(Skipping::Off));
    assert!(on.get(Signal::ThreadSwitchesTimeout) > CYCLES / 200, "{} time-outs", on.get(Signal::ThreadSwitchesTimeout));
    let timeouts = t.get(Signal::ThreadSwitchesTimeout);
    // Each turn is the quantum, rounded up to an iteration boundary, and the switch.
    assert!((CYCLES / (quantum + 64)..=CYCLES / quantum).contains(&timeouts), "{timeouts} time-outs");
    // Only the code's first fetches miss.
    assert!(t.get(Signal::ThreadSwitchesL3Miss) <= 4);
    let (a, b) = (run(Skipping::On, Some(0)).get(Signal::Instructions), run(Skipping::On, Some(1)).get(Signal::Instructions));
    assert!(a.abs_diff(b) <= a / 50, "thread 0 retires {a}, thread 1 {b}");
}

/// MMC14: software thread `s` keeps hardware thread `s % 2`. An L3 miss or a time-out
/// switches to the process the other hardware thread holds; the timer tick gives the
/// running hardware thread its next process. Four processes that miss often thus each
/// run, every one only ever on its own hardware thread.
#[test]
fn mmc14_processes_keep_their_hardware_thread_across_switches_and_ticks() {
    const CYCLES: u64 = 4_000_000;
    let process = |s: u64| {
        let stream = DataStream {
            base: 0x1000_0000 * (s + 1),
            stride: 256,
            footprint: 64 << 20,
            memory: Memory::Cacheable,
            page: 1 << 14,
            shared: false,
            nullable: false,
            fresh: false,
        };
        let mut body = vec![Op::Int; 20];
        body.push(Op::Load(Access { stream: 0, offset: 0, size: 8, use_next: true }));
        body.push(Op::Int);
        pmukit_sim::program::Phase { entry: 0x10_0000 * (s + 1), ..common::phase(body, u64::MAX, vec![stream]) }
    };
    let program = Program {
        threads: (0..4).map(|s| Box::new(std::iter::once(process(s))) as _).collect(),
        timer: Some(pmukit_sim::program::Timer { period: 200_000, handler: Vec::new() }),
    };
    let (mut run, mut retired, mut holds, mut changes) = (0, [0u64; 4], [None; 2], 0);
    for block in machine::montecito(MontecitoConfig::new(2), program, Skipping::On) {
        for span in block.body.iter().filter(|s| s.signals.get(Signal::Instructions) > 0) {
            let s = (span.ip / 0x10_0000 - 1) as usize;
            let h = usize::from(span.thread);
            assert_eq!(h, s % 2, "process {s} at {:#x}", span.ip);
            changes += u64::from(holds[h].is_some_and(|p| p != s));
            holds[h] = Some(s);
            retired[s] += span.signals.get(Signal::Instructions) * span.cycles * block.repeat;
        }
        run += block.cycles_per_iteration() * block.repeat;
        if run >= CYCLES {
            break;
        }
    }
    assert!(retired.iter().all(|&n| n > 0), "{retired:?}");
    // A hardware thread changes process at a tick only, however often the threads
    // switch on misses.
    assert!(changes <= CYCLES / 200_000, "{changes} changes of process");
}

/// MMC26: under fault injection every n-th write into the write data queue has an ECC
/// error, single- and double-bit in turn; skipping stays exact; without it none.
#[test]
fn mmc26_fault_injection_puts_ecc_errors_in_the_write_data_queue() {
    let t = faulty("stream", Skipping::On);
    assert_eq!(t, faulty("stream", Skipping::Off));
    let (single, double) = (t.get(Signal::WdqEccSingle), t.get(Signal::WdqEccDouble));
    assert!(single > 0 && single.abs_diff(double) <= 1, "{single} single, {double} double");
    let writes: u64 =
        [Signal::MemoryWrites, Signal::DeviceWrites, Signal::PeerBrlHitm, Signal::PeerBrilHitm].iter().map(|&s| t.get(s)).sum();
    assert_eq!(single + double, writes / 100);
    let clean = totals("stream", 2, 5_000_000, Skipping::On);
    assert_eq!(clean.get(Signal::WdqEccSingle) + clean.get(Signal::WdqEccDouble), 0);
}

/// MMC67: under fault injection every `fault_every`-th snoop of the L2D's tags finds
/// an error there (L2D_L3ACCESS_CANCEL.P2_COV_SNP_TEM): on `shared`, whose snoops are
/// the other core's reads and reads for ownership and the JIT's `fc`s. The error is
/// counted only: the run is the same without it.
#[test]
fn mmc67_fault_injection_puts_errors_in_the_l2ds_tags() {
    let t = faulty("shared", Skipping::On);
    assert_eq!(t, faulty("shared", Skipping::Off));
    let snoops: u64 = [Signal::PeerBrl, Signal::PeerBril, Signal::CodeFlushes].iter().map(|&s| t.get(s)).sum();
    assert!(snoops >= 1000, "{snoops}");
    assert_eq!(t.get(Signal::L2dSnoopTagErrors), snoops / 100);
    let clean = totals("shared", 2, 5_000_000, Skipping::On);
    assert_eq!(clean.get(Signal::L2dSnoopTagErrors), 0);
    assert_eq!((clean.cycles, clean.get(Signal::Instructions)), (t.cycles, t.get(Signal::Instructions)));
}

/// MMC59: a device register's read takes `device_cycles` (the chipset defers its
/// response until the device has answered, and its Deferred Reply brings the data),
/// and the data EAR sees its latency, past 1024 cycles.
#[test]
fn mmc59_a_device_read_takes_the_devices_latency_and_the_data_ear_sees_it() {
    use pmukit_sim::program::{Access, DataStream, Memory, Op, Pattern};
    let read = Op::Load(Access { stream: 0, offset: 0, size: 4, use_next: true });
    let body = vec![read, Op::Int, Op::Branch { target: 0x1_0000, when: Pattern::Loop }];
    let program = |device| common::one_phase(body.clone(), 100, DataStream::fixed(0xF800_0000, device));
    let cfg = MontecitoConfig::new(1);
    let run = |device| machine::montecito(cfg.clone(), program(device), Skipping::Off).collect::<Vec<_>>();
    let cycles = |blocks: &[pmukit_sim::stream::Block<{ pmukit_sim::stream::MONTECITO }>]| blocks.iter().map(|b| b.cycles()).sum::<u64>();
    let (device, memory) = (run(Memory::Device), run(Memory::NonCacheable));
    let waited = cycles(&device) - cycles(&memory);
    // Each read waits the device's cycles where an uncacheable memory read waits
    // memory's, less the bus clocks both spend.
    let each = cfg.device_cycles - cfg.memory_cycles;
    assert!(waited >= 100 * (each - 2 * cfg.bus_ratio) && waited <= 100 * (each + 2 * cfg.bus_ratio), "{waited}");
    let slow = device.iter().flat_map(|b| &b.body).filter(|s| s.detail.data_latency >= 1024).count();
    assert_eq!(slow, 100, "every read is captured with its latency");
}

/// Threads each reading a device register 200 times in a loop, with the I/O bus
/// taking `reads` device reads at once: the run's totals, and how many reads the data
/// EAR sees take 1024 cycles or more, and 2048 or more.
fn device_loops(threads: usize, reads: usize, skipping: Skipping) -> (Totals, u64, u64) {
    use pmukit_sim::program::Pattern;
    let read = Op::Load(Access { stream: 0, offset: 0, size: 4, use_next: true });
    let body = vec![read, Op::Int, Op::Branch { target: 0x1_0000, when: Pattern::Loop }];
    let phase = || common::phase(body.clone(), 200, vec![DataStream::fixed(0xF800_0000, Memory::Device)]);
    let program = Program { threads: (0..threads).map(|_| Box::new(std::iter::once(phase())) as _).collect(), timer: None };
    let cfg = MontecitoConfig { device_reads: reads, ..MontecitoConfig::new(threads) };
    let blocks: Vec<_> = machine::montecito(cfg, program, skipping).collect();
    let slower = |cycles| blocks.iter().map(|b| b.repeat * b.body.iter().filter(|s| s.detail.data_latency >= cycles).count() as u64).sum();
    let (slow, slowest) = (slower(1024), slower(2048));
    (Totals::of(blocks, u64::MAX, |_| true), slow, slowest)
}

/// MMC62, §2.4.1.1: "The L3 miss and data return event can occur for several types
/// of accesses: ... cacheable or uncacheable". Two threads each reading a device
/// register in a loop, on an I/O bus that takes both threads' reads at once: a read is
/// a switch event, the reading thread goes to the background, and its read completes
/// there, counting no memory read of a line as it returns (MD12); the data EAR still
/// sees each read's own latency. Exact with skipping on; one thread switches on none.
#[test]
fn mmc62_an_uncacheable_read_may_switch_threads_and_counts_no_l3_miss() {
    let (off, slow, _) = device_loops(2, 2, Skipping::Off);
    assert!(off.get(Signal::ThreadSwitchesL3Miss) > 0);
    // Only the loop's code and the page walks' entries are lines read from memory:
    // no device read counts one, in the foreground or back from the background.
    let lines = off.get(Signal::BackgroundMemoryReads) + off.get(Signal::MemoryReads);
    assert!(lines < 40, "{lines}");
    assert_eq!(off.get(Signal::DeviceReads), 400);
    assert_eq!(slow, 400, "every read is captured with its latency");
    let (on, _, _) = device_loops(2, 2, Skipping::On);
    assert_eq!(on.cycles, off.cycles);
    assert_eq!(on.get(Signal::ThreadSwitchesL3Miss), off.get(Signal::ThreadSwitchesL3Miss));
    let (single, _, _) = device_loops(1, 2, Skipping::Off);
    assert_eq!(single.get(Signal::ThreadSwitchesL3Miss), 0);
    // Two threads overlap their reads: the pair takes well under twice one's time.
    assert!(off.cycles < 2 * single.cycles * 3 / 4, "{} against {}", off.cycles, single.cycles);
}

/// MMC63: the chipset has one device read outstanding on the I/O bus (`[core]
/// device_reads`, an assumption). The same two threads' reads no longer overlap: the
/// pair takes each read's `device_cycles` in turn, and a read that waited for the
/// other thread's takes 2048 cycles or more (DATA_EAR_CACHE_LAT2048), where one thread
/// alone never does. Exact with skipping on.
#[test]
fn mmc63_device_reads_wait_for_the_io_bus_one_at_a_time() {
    let cfg = MontecitoConfig::new(2);
    assert_eq!(cfg.device_reads, 1);
    let (off, _, slowest) = device_loops(2, 1, Skipping::Off);
    assert!(off.cycles >= 400 * cfg.device_cycles, "{}", off.cycles);
    assert!(slowest > 0 && slowest < 400, "{slowest}");
    let (on, _, on_slowest) = device_loops(2, 1, Skipping::On);
    assert_eq!((on.cycles, on_slowest), (off.cycles, slowest));
    let (single, _, alone) = device_loops(1, 1, Skipping::Off);
    assert_eq!(alone, 0);
    assert!(off.cycles >= 2 * single.cycles * 9 / 10, "{} against {}", off.cycles, single.cycles);
}

/// MMC78: behind a stalled back end the front end fetches ahead, two bundles a cycle,
/// and each branch it fetches takes an entry of the branch retirement queue until it
/// retires. A loop of one bundle whose load misses every time: the stalled bundle's
/// branch and seven bundles fetched ahead fill a queue of 8, so the front end stops
/// short of filling the buffer, and the rest of each stall is the queue's
/// (FE_LOST_BW.BRQ, `IBufFullCycles`' second flag) where a queue of 9 leaves the
/// buffer to fill (IBFULL). The timing is the same either way.
#[test]
fn mmc78_a_one_bundle_loop_fills_the_branch_queue_before_the_buffer() {
    use pmukit_sim::program::Pattern;
    let run = |entries| {
        let load = Op::Load(Access { stream: 0, offset: 0, size: 8, use_next: true });
        let body = vec![load, Op::Int, Op::Branch { target: 0xc000, when: Pattern::Loop }];
        let mut phase = common::phase(body, 200, vec![striding(128, 1 << 24, 1 << 14)]);
        // A bundle's address (three instructions of four bytes from a multiple of 12):
        // the loop is one bundle.
        phase.entry = 0xc000;
        let cfg = MontecitoConfig { brq_entries: entries, ..MontecitoConfig::new(1) };
        let blocks: Vec<_> = machine::montecito(cfg, common::program_of(phase), Skipping::Off).collect();
        let flagged = |flag: u8| -> u64 {
            let stalled = |s: &&Span<MONTECITO>| s.signals.get(Signal::IBufFullCycles) & u64::from(flag) != 0;
            blocks.iter().map(|b| b.repeat * b.body.iter().filter(stalled).map(|s| s.cycles).sum::<u64>()).sum()
        };
        (blocks.iter().map(|b| b.cycles()).sum::<u64>(), flagged(IBUF_BRQ_FULL), flagged(IBUF_FULL))
    };
    let (cycles, queue, buffer) = run(8);
    assert!(queue > 200 * 100, "{queue} cycles the queue stalls the front end");
    assert_eq!(buffer, 0);
    let (cycles_9, queue_9, buffer_9) = run(9);
    assert_eq!((cycles_9, queue_9), (cycles, 0));
    // The fetch of the buffer's eighth bundle, two a cycle, ends in the same cycle
    // as the seventh's: the same stall cycles are the full buffer's.
    assert_eq!(buffer_9, queue);
}

/// MMC28: L2I and L2D misses share 16 request buffers; a stream whose loads nobody
/// waits for (`stream`'s field sums) has at most 16 out and waits for a buffer.
#[test]
fn mmc28_sixteen_request_buffers_bound_the_misses_outstanding() {
    let t = totals("stream", 1, 10_000_000, Skipping::On);
    assert!(t.get(Signal::L2dBackPressureCycles) > 0);
    // Every back-pressure cycle is an LSU-full stall, in which nothing issues.
    assert!(t.get(Signal::L2dBackPressureCycles) <= t.get(Signal::LsuFullStallCycles));
}

/// 400 phases, each on a page of code of its own no cache holds, whose loop makes FP
/// loads of `lines` lines of a megabyte no cache holds either (the L2D serves FP loads:
/// the L1D's eight fills do not hold them back).
fn code_beyond_fp_loads(lines: u32) -> Program {
    use pmukit_sim::program::build::Body;
    use pmukit_sim::program::{Access, Op};
    use pmukit_sim::stream::Privilege;
    let phases = (0..400u64).map(move |i| {
        let mut b = Body::new(Privilege::USER, 1, 0x100_0000 + i * 0x2000);
        let s = b.stream(DataStream {
            base: 0x4000_0000 + i * 0x10_0000,
            stride: 128 * i64::from(lines),
            footprint: 1 << 20,
            memory: Memory::Cacheable,
            page: 16 << 20,
            shared: false,
            nullable: false,
            fresh: false,
        });
        for j in 0..lines {
            b.op(Op::FpLoad(Access { stream: s, offset: j * 128, size: 8, use_next: false }));
        }
        b.int(40);
        b.close_loop(4)
    });
    Program { threads: vec![Box::new(phases)], timer: None }
}

/// MMC28, §2.3.3.4: L2I misses take the 16 request buffers too. Each phase runs code
/// no cache holds after FP loads of lines no cache holds, whose misses take every buffer:
/// its first fetch's L2I miss, and the next-line prefetch's, find them taken, are
/// rejected (L2I_L3_REJECTS, once a request) and wait for one to free.
#[test]
fn mmc28_instruction_misses_wait_for_a_request_buffer_and_are_rejected_meanwhile() {
    let program = code_beyond_fp_loads(20);
    let mut seen = HashMap::new();
    let key = |s: &Span<MONTECITO>| (s.signals.get(Signal::L2iL3Rejects), s.signals.get(Signal::ICacheMisses));
    common::profile(machine::montecito(MontecitoConfig::new(1), program, Skipping::On), u64::MAX, key, &mut seen);
    let cycles = |keep: &dyn Fn(u64) -> bool| seen.iter().filter(|((r, _), _)| keep(*r)).map(|(_, c)| c).sum::<u64>();
    let (demand, prefetch) = (cycles(&|r| r & 1 != 0), cycles(&|r| r & 2 != 0));
    let misses: u64 = seen.iter().filter(|((_, m), _)| *m > 0).map(|(_, c)| c).sum();
    assert!(demand > 100 && prefetch > 100, "{demand} demand and {prefetch} prefetch requests rejected");
    assert!(demand <= misses, "only an L1I miss that misses the L2I sends a request: {demand} > {misses}");
}

/// MMC73: the program of the test above, whose FP loads keep the 16 request buffers
/// taken while its code misses the L2I. A request that finds them all taken waits for
/// the first to free and gets it, the BRQ rejecting the other L1's requests meanwhile
/// (bit 0 of `BrqRejecting` while an L2I miss waits, bit 1 while an L2D miss does).
/// An L2D miss that waits holds the core back for its wait (L2D back pressure), from
/// the cycle after the one it issued in, so the BRQ rejects L1I requests only in
/// back-pressure cycles and the issue cycle of each miss that waits; both L1s are
/// starved by turns. A program whose misses never fill the buffers has it reject
/// nothing.
#[test]
fn mmc73_a_request_waiting_for_a_buffer_has_the_brq_reject_the_other_l1s() {
    let program = code_beyond_fp_loads;
    let key = |s: &Span<MONTECITO>| {
        let signals = &s.signals;
        (signals.get(Signal::BrqRejecting), signals.get(Signal::L2dBackPressureCycles) != 0, signals.get(Signal::L2dFillBufferFull))
    };
    let mut seen = HashMap::new();
    common::profile(machine::montecito(MontecitoConfig::new(1), program(20), Skipping::On), u64::MAX, key, &mut seen);
    let cycles = |keep: &dyn Fn(&(u64, bool, u64)) -> bool| seen.iter().filter(|(k, _)| keep(k)).map(|(_, c)| c).sum::<u64>();
    let waits: u64 = seen.iter().map(|(k, c)| k.2 * c).sum();
    let issue_cycles = cycles(&|&(r, held, _)| r & 0b10 != 0 && !held);
    assert!(waits > 100 && issue_cycles <= waits, "{issue_cycles} cycles rejecting L1I requests outside {waits} waits: {seen:?}");
    let (d, i) = (cycles(&|k| k.0 & 0b001 != 0), cycles(&|k| k.0 & 0b010 != 0));
    assert!(d > 100 && i > 100, "{d} cycles rejecting L1D requests, {i} rejecting L1I requests: {seen:?}");
    // Two loads an iteration: the buffers never fill.
    let mut calm = HashMap::new();
    common::profile(machine::montecito(MontecitoConfig::new(1), program(2), Skipping::On), u64::MAX, key, &mut calm);
    assert!(calm.keys().all(|k| k.0 == 0), "{calm:?}");
}

/// MMC29: a memset of 64 MB with 16-byte stores on one thread. Each 128-byte line's
/// first store misses to memory; the seven after it are secondary misses that wait in
/// the OzQ for the fill: the second one cycle behind the first (L1W, forced to
/// recirculate), the rest behind a miss still in the OzQ or passed to the L3. They
/// fill the 32 entries long before the 16 request buffers, and the stores behind them
/// wait.
#[test]
fn mmc29_secondary_misses_wait_in_the_ozq_and_fill_it() {
    use pmukit_sim::program::{Access, Op, Pattern};
    let buffer = striding(32, 64 << 20, 16 << 20);
    let store = |offset| Op::Store(Access { stream: 0, offset, size: 16, use_next: false });
    let body = vec![store(0), store(16), Op::Int, Op::Branch { target: 0x1_0000, when: Pattern::Loop }];
    let program = common::one_phase(body, 1 << 21, buffer);
    let t = Totals::of(machine::montecito(MontecitoConfig::new(1), program, Skipping::On), u64::MAX, |_| true);
    let primaries = t.get(Signal::StoresLocalMemory);
    let (l1w, ozq, fill) = (t.get(Signal::L2dSecondaryL1w), t.get(Signal::L2dSecondaryOzq), t.get(Signal::L2dSecondaryFill));
    assert_eq!(primaries, (64 << 20) / 128, "every line misses once");
    assert_eq!(t.get(Signal::Stores), 8 * primaries);
    // Every store after a line's first is a secondary miss or, once the fill is in,
    // a hit; only writes here.
    assert_eq!(l1w + ozq + fill, t.get(Signal::L2dSecondaryWrites));
    assert_eq!(t.get(Signal::L2dSecondaryReads), 0);
    assert!(l1w > 0 && ozq > 0 && fill > 0, "{l1w} {ozq} {fill}");
    assert!(l1w + ozq + fill <= 7 * primaries);
    // The two stores of an iteration share an issue group (MMC1): a line's second
    // store finds its miss in its own cycle, and the next iteration's two the cycle
    // after (L1W), but for the few lines whose second group a stall for the full OzQ
    // holds back.
    assert!(l1w <= 3 * primaries && 3 * primaries - l1w < 16, "{l1w}: three of each line's eight stores");
    // Each forced recirculate issues (one a cycle) or is cancelled.
    assert_eq!(t.get(Signal::L2dRecirculates) + t.get(Signal::L2dRecirculateCancels), l1w + t.get(Signal::L2dSameIndex));
    // A fill wakes its line's secondaries, which issue four a clock (§2.3.3.2's four
    // tag ports): the fifth to seventh of a line are cancelled for oversubscription.
    let over = t.get(Signal::L2dOversubscribed);
    assert!(over > 0 && over <= 3 * primaries, "{over} oversubscribed of {primaries} lines");
    assert!(over >= (l1w + ozq + fill).saturating_sub(4 * primaries));
    // The secondaries fill the OzQ; the request buffers never fill behind it.
    assert!(t.get(Signal::L2dOzqFull) > 0);
    assert_eq!(t.get(Signal::L2dFillBufferFull), 0);
    assert!(t.get(Signal::L2dBackPressureCycles) > 0);
}

/// MMC29: a semaphore is performed in the L2D, also when the L1D holds its line: its
/// value takes the L2D's 5 cycles, during which its acquire holds in the OzQ (the
/// first, a miss, for memory's latency and its data's bus clock edge).
#[test]
fn mmc29_a_semaphore_waits_for_the_l2d_with_its_acquire_in_the_ozq() {
    use pmukit_sim::program::{Access, Op, Pattern};
    let atomic = Op::Atomic(Access { stream: 0, offset: 0, size: 4, use_next: true });
    let program = one_phase(vec![atomic, Op::Int, Op::Branch { target: 0x1_0000, when: Pattern::Loop }], 10_000);
    let t = Totals::of(machine::montecito(MontecitoConfig::new(1), program, Skipping::Off), u64::MAX, |_| true);
    assert_eq!(t.get(Signal::Atomics), 10_000);
    // All but the first find the line in the L2D, and so does the walk again after
    // the loop's text faults in (MMC58).
    assert_eq!(t.get(Signal::L2DataHits), 9_999 + 1);
    let cfg = MontecitoConfig::new(1);
    let acquire = t.get(Signal::L2dOzqAcquireLive);
    assert!(acquire >= 5 * 9_999 && acquire <= 5 * 9_999 + cfg.memory_cycles + cfg.bus_ratio + 1, "{acquire}");
}

/// ERRATA MMC39: the kernel's processor-status move is part of an interruption's
/// entry, which moves the register stack to the kernel's backing store (an AR
/// dependency of the RSE) and switches to register bank 1 (an execution stall); the
/// exception return runs `loadrs`, restores the user's backing store and switches to
/// bank 0 (RSE stalls). A user-mode special-register move does none of this.
#[test]
fn mmc39_an_interruptions_entry_and_exit_switch_register_stacks_and_banks() {
    use pmukit_sim::program::{Op, Pattern};
    use pmukit_sim::stream::Privilege;
    let cfg = MontecitoConfig::new(1);
    let run = |privilege: Privilege| {
        let body = vec![Op::SpecialReg, Op::Int, Op::ExceptionReturn, Op::Branch { target: 0x1_0000, when: Pattern::Loop }];
        let mut phase = common::phase(body, 100, vec![]);
        phase.privilege = privilege;
        // Text on a large page, mapped with its mapping: the user's first run faults
        // none in (MMC58), as the kernel's never does.
        phase.code_page = Some(1 << 20);
        Totals::of(machine::montecito(cfg.clone(), common::program_of(phase), Skipping::Off), u64::MAX, |_| true)
    };
    let kernel = run(Privilege::KERNEL);
    let expected = [
        (Signal::RseArDepStallCycles, 100 * 2 * cfg.cr_cycles),
        (Signal::BankSwitchStallCycles, 100),
        (Signal::RseBankSwitchStallCycles, 100),
        (Signal::RseLoadrsStallCycles, 100),
    ];
    for (signal, n) in expected {
        assert_eq!(kernel.get(signal), n, "{signal:?}");
    }
    let user = run(Privilege::USER);
    assert_eq!(user.get(Signal::RseArDepStallCycles) + user.get(Signal::BankSwitchStallCycles), 100 * cfg.cr_cycles, "the exit only");
    assert_eq!(kernel.cycles, user.cycles + 100 * (cfg.cr_cycles + 1));
}

/// ERRATA MMC68: an interruption's entry reads ar.unat, which holds the NaT bits of
/// the registers it has just spilled, once the last spill has written its bit
/// (`store_write_cycles` after it issued): the L1D holds the read (L1D_AR_CR). A
/// user-mode register move after a store reads no ar.unat, and an entry whose spills
/// are written waits for none.
#[test]
fn mmc68_an_entrys_ar_unat_read_waits_for_its_spills() {
    use pmukit_sim::program::{Access, DataStream, Memory, Op, Pattern};
    use pmukit_sim::stream::{L1dConflict, Privilege};
    const ITERATIONS: u64 = 100;
    let spill = Op::BlockStore(Access { stream: 0, offset: 0, size: 64, use_next: false });
    let run = |cfg: &MontecitoConfig, privilege: Privilege, body: &[Op]| {
        let mut body = body.to_vec();
        body.extend([Op::ExceptionReturn, Op::Branch { target: 0x1_0000, when: Pattern::Loop }]);
        let mut phase = common::phase(body, ITERATIONS, vec![DataStream::fixed(0x100_0000, Memory::Cacheable)]);
        phase.privilege = privilege;
        phase.code_page = Some(1 << 20);
        let held = |s: &pmukit_sim::stream::Span<{ pmukit_sim::stream::MONTECITO }>| {
            s.signals.get(Signal::L1dConflict) == L1dConflict::ArCr as u64
        };
        Totals::of(machine::montecito(cfg.clone(), common::program_of(phase), Skipping::Off), u64::MAX, held).cycles
    };
    let cfg = MontecitoConfig::new(1);
    // The move reaches the L1D with the spills (the machine places no stop, MMC1) and
    // waits out their write.
    let entry = [spill, Op::SpecialReg];
    assert_eq!(run(&cfg, Privilege::KERNEL, &entry), ITERATIONS * cfg.store_write_cycles);
    let slow = MontecitoConfig { store_write_cycles: 4, ..MontecitoConfig::new(1) };
    assert_eq!(run(&slow, Privilege::KERNEL, &entry), ITERATIONS * 4);
    assert_eq!(run(&cfg, Privilege::USER, &entry), 0);
    // Eighteen instructions between: three cycles at six a cycle at most.
    let later: Vec<Op> = [spill].into_iter().chain([Op::Int; 18]).chain([Op::SpecialReg]).collect();
    assert_eq!(run(&cfg, Privilege::KERNEL, &later), 0);
}

/// ERRATA MMC69: stores to lines on their way wait in the OzQ as secondary misses
/// until the fill, each with its data in the OzQ's data buffer: thirty-six stores to
/// three lines that miss fill its 32 entries (L2D_OZDB_FULL), eight entries fill
/// sooner and longer, and loads of the same bytes, which carry no data, never.
#[test]
fn mmc69_stores_to_lines_on_their_way_fill_the_ozq_data_buffer() {
    use pmukit_sim::program::Pattern;
    const ITERATIONS: u64 = 200;
    let run = |cfg: MontecitoConfig, store: bool| {
        // A new 4 KB page each iteration: every line misses.
        let far = striding(1 << 12, 256 << 20, 16 << 20);
        let mut body: Vec<Op> = (0..36u32)
            .map(|i| {
                let a = Access { stream: 0, offset: i / 12 * 128 + i % 12 * 8, size: 8, use_next: false };
                if store {
                    Op::Store(a)
                } else {
                    Op::Load(a)
                }
            })
            .collect();
        body.push(Op::Branch { target: 0x1_0000, when: Pattern::Loop });
        let program = common::program_of(common::phase(body, ITERATIONS, vec![far]));
        Totals::of(machine::montecito(cfg, program, Skipping::Off), u64::MAX, |_| true).get(Signal::L2dOzdbFull)
    };
    let full = run(MontecitoConfig::new(1), true);
    assert!(full > 0);
    assert!(run(MontecitoConfig { ozq_data_entries: 8, ..MontecitoConfig::new(1) }, true) > full);
    assert_eq!(run(MontecitoConfig::new(1), false), 0);
}

/// ERRATA MMC40: a skip to a function's return is a return predicated on the skip's
/// condition, ahead of the skipped code: taken, the function returns at once; its
/// predicate false, the skipped code and the function's own return follow. Its
/// predicate is predicted like a branch's, and a second such test forced by a first
/// predicted taken that fell through counts as an unknown prediction (§4.7).
#[test]
fn mmc40_a_skip_to_a_return_is_a_predicated_return() {
    use pmukit_sim::program::{Op, Pattern};
    const ITERATIONS: u64 = 6400;
    let run = |tests: &[Pattern]| {
        // The caller's loop calls a function that ends `if (...) { 4 instructions } return`.
        // Its first two instructions share a bundle (one of three starts at 0x2_0004).
        let (call_at, function) = (0x1_0000, 0x2_0004);
        let mut body = vec![Op::Call { target: function, frame: 8 }];
        for (n, &when) in tests.iter().enumerate() {
            body.push(Op::Skip { over: (4 + tests.len() - 1 - n) as u8, when });
        }
        body.extend(std::iter::repeat_n(Op::Int, 4));
        body.extend([Op::Return { to: call_at + 4 }, Op::Int, Op::Branch { target: call_at, when: Pattern::Loop }]);
        Totals::of(machine::montecito(MontecitoConfig::new(1), one_phase(body, ITERATIONS), Skipping::Off), u64::MAX, |_| true)
    };
    // Taken in one iteration of four: the predicate's outcome repeats, so the
    // predictor learns it after the first laps.
    let quarter = Pattern::Bits { bits: 0x1111_1111_1111_1111, len: 64 };
    let t = run(&[quarter]);
    let taken = ITERATIONS / 4;
    assert_eq!(t.get(Signal::ReturnsNotTaken), ITERATIONS - taken);
    // Every iteration retires the predicated return, and those whose predicate was
    // false the function's own return too.
    assert_eq!(t.get(Signal::Returns), ITERATIONS + ITERATIONS - taken);
    // The call, the predicated return, the caller's instruction and its loop branch; then the
    // skipped code and the return.
    assert_eq!(t.get(Signal::Instructions), ITERATIONS * 4 + (ITERATIONS - taken) * 5);
    let wrong = t.get(Signal::ReturnMispredictsTaken) + t.get(Signal::ReturnMispredictsNotTaken);
    assert!(wrong > 0 && wrong < ITERATIONS / 50, "learnt: {wrong}");
    assert_eq!(t.get(Signal::ReturnsMispredicted), 0, "the return stack holds every target");
    // Always taken: never the function's own return, never a predicate false.
    let always = run(&[Pattern::Always]);
    assert_eq!((always.get(Signal::Returns), always.get(Signal::ReturnsNotTaken)), (ITERATIONS, 0));
    // Two tests, the first taken in half the iterations, irregularly: when it is
    // predicted taken and falls through, the second, forced, is an unknown prediction.
    let irregular = Pattern::Bits { bits: 0x3a5c_96e1_0f2d_b487, len: 64 };
    let both = run(&[irregular, Pattern::Never]);
    let forced = both.get(Signal::UnknownReturnsNotTaken);
    assert!(forced > 0 && forced <= both.get(Signal::ReturnMispredictsNotTaken), "{forced}");
}

/// ERRATA MMC41: a skip over an indirect jump alone is the jump predicated on the
/// skip's condition being false, in the skip's place. Predicated off, it retires as a
/// branch not taken and execution goes on after the jump; its predicate is predicted
/// like a conditional branch's, and forced by a test before it in its bundle.
#[test]
fn mmc41_a_skip_over_a_jump_is_a_predicated_jump() {
    use pmukit_sim::program::{DataStream, Memory, Op, Pattern, Table};
    const ITERATIONS: u64 = 6400;
    let run = |tests: &[Pattern]| {
        // `if (...) goto *handler[k % 2]`, then the loop's tail: the two handlers' code
        // is the tail itself. The tests share a bundle (one of three starts at 0x1_0004).
        let mut body = Vec::new();
        for (n, &when) in tests.iter().enumerate() {
            body.push(Op::Skip { over: (tests.len() - n) as u8, when });
        }
        body.extend([Op::Jump { table: 0, via: None }, Op::Int, Op::Branch { target: 0x1_0000, when: Pattern::Loop }]);
        let mut phase = common::phase(body, ITERATIONS, vec![DataStream::fixed(0x100_0000, Memory::Cacheable)]);
        phase.tables = vec![Table { targets: vec![0x3_0000, 0x3_1000] }];
        Totals::of(machine::montecito(MontecitoConfig::new(1), common::program_of(phase), Skipping::Off), u64::MAX, |_| true)
    };
    // The range check is taken (the jump skipped) in one iteration of four: the
    // predicate's outcome repeats, so the predictor learns it.
    let quarter = Pattern::Bits { bits: 0x1111_1111_1111_1111, len: 64 };
    let t = run(&[quarter]);
    let skipped = ITERATIONS / 4;
    assert_eq!((t.get(Signal::IndirectBranches), t.get(Signal::IndirectNotTaken)), (ITERATIONS, skipped));
    // The predicated jump, the tail's add and its loop branch: no skip retires.
    assert_eq!(t.get(Signal::Instructions), ITERATIONS * 3);
    let wrong = t.get(Signal::IndirectMispredictsTaken) + t.get(Signal::IndirectMispredictsNotTaken);
    assert!(wrong > 0 && wrong < ITERATIONS / 50, "learnt: {wrong}");
    // The two handlers alternate at one jump: the indirect predictor, which keeps the
    // last target, is wrong about most of them (the ones after a skipped iteration
    // repeat the target before).
    let targets = t.get(Signal::IndirectMispredicts);
    assert!(targets > (ITERATIONS - skipped) / 2 && targets < ITERATIONS - skipped, "{targets}");
    // Never skipped: every jump taken, none predicated off.
    let never = run(&[Pattern::Never]);
    assert_eq!((never.get(Signal::IndirectBranches), never.get(Signal::IndirectNotTaken)), (ITERATIONS, 0));
    // A test before the range check, irregular: when it is predicted taken and falls
    // through, the predicated jump in its bundle is forced to "predicted not taken".
    let irregular = Pattern::Bits { bits: 0x3a5c_96e1_0f2d_b487, len: 64 };
    let both = run(&[irregular, quarter]);
    let forced = both.get(Signal::UnknownIndirectNotTaken);
    assert!(forced > 0, "forced and predicated off");
    assert!(both.get(Signal::UnknownPredTaken) > forced, "forced and jumping: three times as often");
}

/// `if (c) w += weight[c->key]`, skipped in one iteration of four, `iterations` times
/// (MMC42): the block's load of the node, and the load its value addresses; with
/// `nullable`, the node's pointer is NULL in the iterations the test skips the block.
fn null_guarded(iterations: u64, nullable: bool) -> pmukit_sim::program::Phase {
    use pmukit_sim::program::Pattern;
    let load = |stream, use_next| Op::Load(Access { stream, offset: 0, size: 4, use_next });
    let quarter = Pattern::Bits { bits: 0x1111_1111_1111_1111, len: 64 };
    let body = vec![
        Op::Skip { over: 3, when: quarter },
        load(0, true),
        load(1, true),
        Op::Int,
        Op::Branch { target: 0x1_0000, when: Pattern::Loop },
    ];
    let child = DataStream {
        base: 0x1000_0000,
        stride: 64,
        footprint: 1 << 16,
        memory: Memory::Cacheable,
        page: 16 << 10,
        shared: false,
        nullable,
        fresh: false,
    };
    let weights = DataStream::fixed(0x200_0000, Memory::Cacheable);
    common::phase(body, iterations, vec![child, weights])
}

/// ERRATA MMC42: a skip's block that begins with a load has it hoisted above the skip
/// as an `ld.s`, with the load its value addresses, and a `chk.s` in each one's place.
/// Through a NULL pointer, in the iterations the test skips the block, the first faults
/// to the OS, which defers it (PSR.ed): it returns a NaT, and so does the second, whose
/// address it is (NaT consumption). No check fails.
#[test]
fn mmc42_a_null_guarded_load_is_speculated_and_natted() {
    use pmukit_sim::stream::{SPEC_NAT_CONSUMED, SPEC_NAT_PSR_ED};
    const ITERATIONS: u64 = 6400;
    let run = |nullable: bool, cfg: MontecitoConfig| {
        let program = common::program_of(null_guarded(ITERATIONS, nullable));
        Totals::of(machine::montecito(cfg, program, Skipping::Off), u64::MAX, |_| true)
    };
    let skipped = ITERATIONS / 4;
    let t = run(true, MontecitoConfig::new(1));
    assert_eq!(t.get(Signal::SpecNat), skipped * u64::from(SPEC_NAT_PSR_ED + SPEC_NAT_CONSUMED), "each flag once a skip");
    // Both loads issue in every iteration: the skip, the two `ld.s` and the loop branch,
    // and the two `chk.s` and the add when the block runs.
    assert_eq!(t.get(Signal::Loads), 2 * ITERATIONS);
    assert_eq!(t.get(Signal::Instructions), 4 * ITERATIONS + 3 * (ITERATIONS - skipped));
    // One recirculate for each NaT: the conflict's code is in each of their cycles.
    assert_eq!(t.get(Signal::L1dConflict), 2 * skipped * pmukit_sim::stream::L1dConflict::Nat as u64);
    // Each NULL load walks for page 0 and faults: the walk counts, page 0 stays out of
    // the TLBs.
    assert!(t.get(Signal::MainTlbMisses) >= skipped);
    // The handler's cycles are the assumption's (misses in flight end at other points
    // of the slower run, a cycle or two apart).
    let slower = run(true, MontecitoConfig { fault_handler_cycles: 500, ..MontecitoConfig::new(1) });
    assert!((slower.cycles - t.cycles).abs_diff(100 * skipped) <= 8, "{} {}", slower.cycles, t.cycles);
    // A pointer that is never NULL: the skipped iterations' loads read their nodes.
    let valid = run(false, MontecitoConfig::new(1));
    assert_eq!(valid.get(Signal::SpecNat), 0);
    assert_eq!(valid.get(Signal::Loads), 2 * ITERATIONS);
}

/// ERRATA MMC77: MMC42's NULL-guarded load in a hardware virtual machine's guest. At
/// the user's privilege level the hypervisor has the hardware defer the walk's Data
/// TLB fault (Xen sets DCR.dm for a VT-i guest at cpl > 0): the `ld.s` is NaT'd with
/// no interruption (DEF_TLB_MISS), where the native run's fault goes to the operating
/// system, which defers the load (DEF_PSR_ED). In the guest's kernel nothing is
/// deferred, and each interruption reaches it through the hypervisor: a trap and a
/// handler more. A system call (`epc`) runs in the guest; the kernel's `rfi` back
/// takes the hypervisor's turn.
#[test]
fn mmc77_a_guests_null_guarded_load_is_deferred_by_the_hardware() {
    use pmukit_sim::program::Phase;
    use pmukit_sim::stream::{Privilege, SPEC_NAT_CONSUMED, SPEC_NAT_PSR_ED, SPEC_NAT_TLB_MISS};
    const ITERATIONS: u64 = 6400;
    let skipped = ITERATIONS / 4;
    let phase = |guest: bool, privilege: Privilege| Phase { guest, privilege, ..null_guarded(ITERATIONS, true) };
    let run = |p: Phase| Totals::of(machine::montecito(MontecitoConfig::new(1), common::program_of(p), Skipping::Off), u64::MAX, |_| true);
    let (native, guest) = (run(phase(false, Privilege::USER)), run(phase(true, Privilege::USER)));
    let each = |flags: u8| skipped * u64::from(flags);
    assert_eq!(native.get(Signal::SpecNat), each(SPEC_NAT_PSR_ED + SPEC_NAT_CONSUMED));
    assert_eq!(guest.get(Signal::SpecNat), each(SPEC_NAT_TLB_MISS + SPEC_NAT_CONSUMED));
    // The same walks; the guest takes no interruption for them.
    assert_eq!(guest.get(Signal::MainTlbMisses), native.get(Signal::MainTlbMisses));
    // Beside the user text's first fetch, which faults to map the page (MMC58), and
    // in the guest through the hypervisor.
    let cfg = MontecitoConfig::new(1);
    let (handler, text) = (cfg.trap_cycles + cfg.fault_handler_cycles, cfg.trap_cycles + cfg.page_fault_cycles);
    assert_eq!(native.get(Signal::ExceptionFlushCycles), text + skipped * handler);
    assert_eq!(guest.get(Signal::ExceptionFlushCycles), text + handler);
    // The guest's kernel: the operating system defers the load, reached through the
    // hypervisor.
    let kernel = run(phase(true, Privilege::KERNEL));
    assert_eq!(kernel.get(Signal::SpecNat), each(SPEC_NAT_PSR_ED + SPEC_NAT_CONSUMED));
    assert_eq!(kernel.get(Signal::ExceptionFlushCycles), 2 * skipped * handler);
    // A system call and its return: the hypervisor's turn for the `rfi`.
    let call = |guest: bool| {
        let body = vec![Op::Int, Op::Syscall];
        let enter = Phase { guest, ..common::phase(body, 1, vec![DataStream::fixed(0x100_0000, Memory::Cacheable)]) };
        let leave = Phase { guest, privilege: Privilege::KERNEL, body: vec![Op::Int, Op::ExceptionReturn], ..enter.clone() };
        let program = pmukit_sim::program::Program { threads: vec![Box::new([enter, leave].into_iter())], timer: None };
        Totals::of(machine::montecito(MontecitoConfig::new(1), program, Skipping::Off), u64::MAX, |_| true)
    };
    // The user text's first fetch faults through it too.
    let (native, guest) = (call(false), call(true));
    assert_eq!(guest.get(Signal::ExceptionFlushCycles) - native.get(Signal::ExceptionFlushCycles), 2 * handler);
}

/// ERRATA MMC43: a counted loop's first back edge waits in the front end for the loop
/// count its perfect-loop prediction reads: the `mov ar.lc` at the loop's entry writes
/// it `mispredict_cycles` (fetch to execution) and `lc_cycles` (Table 2-8 note 5)
/// after the loop begins. A loop of one add: once its code is in the L1I, its entry
/// waits 8 - 1 cycles; the later iterations, none.
#[test]
fn mmc43_a_counted_loops_first_branch_waits_for_its_count() {
    use pmukit_sim::program::{DataStream, Memory, Op, Pattern, Program};
    let run = |entries: usize, cfg: MontecitoConfig| {
        let body = vec![Op::Int, Op::Branch { target: 0x1_0000, when: Pattern::Loop }];
        let phase = common::phase(body, 100, vec![DataStream::fixed(0x100_0000, Memory::Cacheable)]);
        let program = Program { threads: vec![Box::new(std::iter::repeat_n(phase, entries))], timer: None };
        Totals::of(machine::montecito(cfg, program, Skipping::Off), u64::MAX, |_| true).get(Signal::LoopCountStallCycles)
    };
    // The loop's entry initializes the back edge's prediction first (MMC65): the count
    // is on its way meanwhile.
    let cfg = MontecitoConfig { branch_init_cycles: 0, ..MontecitoConfig::new(1) };
    assert_eq!(run(3, cfg.clone()) - run(2, cfg.clone()), cfg.mispredict_cycles + cfg.lc_cycles - 1);
    let longer = MontecitoConfig { lc_cycles: 5, ..cfg.clone() };
    assert_eq!(run(3, longer.clone()) - run(2, longer), cfg.mispredict_cycles + 5 - 1);
    let initialized = MontecitoConfig::new(1);
    assert_eq!(
        run(3, initialized.clone()) - run(2, initialized.clone()),
        cfg.mispredict_cycles + cfg.lc_cycles - 1 - initialized.branch_init_cycles
    );
}

/// ERRATA MMC66: the L2D's recency order ignores invalidations. Eight lines of one
/// L2D set (32 KB apart: 256 sets of 128 bytes) are read, the fourth is flushed (`fc`),
/// and a ninth line of the set is read: its fill replaces the least recently used
/// line, the first, though the fourth's way is free (L2D_BAD_LINES_SELECTED). Under
/// plain LRU the fill takes the free way.
#[test]
fn mmc66_the_l2d_passes_an_invalidated_way() {
    use pmukit_sim::machine::cache::{CacheConfig, Replacement};
    use pmukit_sim::program::Pattern;
    const SPAN: u64 = 32 << 10;
    const BASE: u64 = 0x1000_0000;
    let line = |n: u64| DataStream { page: 16 << 20, ..DataStream::fixed(BASE + n * SPAN, Memory::Cacheable) };
    let at = Access { stream: 0, offset: 0, size: 8, use_next: false };
    let run = |cfg: MontecitoConfig| {
        let set = DataStream { stride: SPAN as i64, footprint: 8 * SPAN, ..line(0) };
        let phases = vec![
            common::phase(vec![Op::Load(at), Op::Branch { target: 0x1_0000, when: Pattern::Loop }], 8, vec![set]),
            common::phase(vec![Op::FlushCode(at)], 1, vec![line(3)]),
            common::phase(vec![Op::Load(at)], 1, vec![line(8)]),
        ];
        let program = Program { threads: vec![Box::new(phases.into_iter())], timer: None };
        Totals::of(machine::montecito(cfg, program, Skipping::Off), u64::MAX, |_| true).get(Signal::L2dBadLinesSelected)
    };
    let cfg = MontecitoConfig::new(1);
    assert_eq!(cfg.l2d.replacement, Replacement::LruByUse);
    assert_eq!(run(cfg.clone()), 1);
    let lru = MontecitoConfig { l2d: CacheConfig { replacement: Replacement::Lru, ..cfg.l2d }, ..cfg };
    assert_eq!(run(lru), 0);
}

/// ERRATA MMC65: a counted loop's entry holds a `brp.loop.imp` for its back edge,
/// whose target the front end writes into the zero-bubble predictor, fetching
/// nothing for `branch_init_cycles` (FE_LOST_BW.BI); the back edge's first taken pass
/// then redirects fetch without a resteer bubble. A loop of one add, entered again
/// and again: each entry stalls once; no pass of the back edge bubbles.
#[test]
fn mmc65_a_loops_entry_initializes_its_back_edges_prediction() {
    use pmukit_sim::program::{DataStream, Memory, Op, Pattern, Program};
    let run = |entries: usize, cfg: MontecitoConfig| {
        let body = vec![Op::Int, Op::Branch { target: 0x1_0000, when: Pattern::Loop }];
        let phase = common::phase(body, 100, vec![DataStream::fixed(0x100_0000, Memory::Cacheable)]);
        let program = Program { threads: vec![Box::new(std::iter::repeat_n(phase, entries))], timer: None };
        let totals = Totals::of(machine::montecito(cfg, program, Skipping::Off), u64::MAX, |_| true);
        [Signal::BranchInitCycles, Signal::ResteerBubbleCycles].map(|s| totals.get(s))
    };
    let cfg = MontecitoConfig::new(1);
    assert_eq!(cfg.branch_init_cycles, 1);
    assert_eq!(run(1, cfg.clone()), [1, 0]);
    assert_eq!(run(5, cfg.clone()), [5, 0]);
    let longer = MontecitoConfig { branch_init_cycles: 4, ..cfg.clone() };
    assert_eq!(run(5, longer), [20, 0]);
    // Straight-line code has no loop to presage.
    let once = |cfg: MontecitoConfig| {
        let phase = common::phase(vec![Op::Int, Op::Int], 1, vec![DataStream::fixed(0x100_0000, Memory::Cacheable)]);
        Totals::of(machine::montecito(cfg, common::program_of(phase), Skipping::Off), u64::MAX, |_| true).get(Signal::BranchInitCycles)
    };
    assert_eq!(once(cfg), 0);
}

/// ERRATA MMC44: the L1D pipeline holds back a load of bytes a store has not yet
/// written (`store_write_cycles` after the store; an advanced load's check load is an
/// LDCHK), a store to a line whose fill is under way, and a read miss that finds the
/// eight fills taken (Table 2-9).
#[test]
fn mmc44_the_l1d_pipeline_holds_conflicting_accesses() {
    use pmukit_sim::program::{Access, DataStream, Memory, Op, Pattern};
    use pmukit_sim::stream::L1dConflict::{self, Check, Fill, Recirculate, Store};
    const ITERATIONS: u64 = 1_000;
    let at = |stream, offset, use_next| Access { stream, offset, size: 8, use_next };
    // The cycles the L1D holds accesses back for `why`.
    let run = |body: &[Op], cfg: &MontecitoConfig, why: L1dConflict| {
        let mut body = body.to_vec();
        body.push(Op::Branch { target: 0x1_0000, when: Pattern::Loop });
        // A slot on the stack, lines far apart that every access misses, and the slot
        // again through another pointer.
        let slot = DataStream::fixed(0x100_0000, Memory::Cacheable);
        let far = striding(1 << 12, 256 << 20, 16 << 20);
        let program = common::program_of(common::phase(body, ITERATIONS, vec![slot, far, slot]));
        let held = |s: &pmukit_sim::stream::Span<{ pmukit_sim::stream::MONTECITO }>| s.signals.get(Signal::L1dConflict) == why as u64;
        Totals::of(machine::montecito(cfg.clone(), program, Skipping::Off), u64::MAX, held).cycles
    };
    // A store, then a load of the same bytes in its issue group (MMC1): it waits the
    // store's two cycles (four when the write takes four).
    let reload = [Op::Store(at(0, 0, false)), Op::Load(at(0, 0, true)), Op::Int];
    let cfg = MontecitoConfig::new(1);
    assert_eq!(run(&reload, &cfg, Store), 2 * ITERATIONS);
    let slow = MontecitoConfig { store_write_cycles: 4, ..MontecitoConfig::new(1) };
    assert_eq!(run(&reload, &slow, Store), 4 * ITERATIONS);
    // Another word of the line: no conflict.
    let other = [Op::Store(at(0, 0, false)), Op::Load(at(0, 8, true)), Op::Int];
    assert_eq!(run(&other, &cfg, Store), 0);
    // The same bytes through another stream (aliasing pointers): the load is advanced
    // above the store (MMC33), and its check load, in the store's group, meets the
    // store (L1D_LDCHK).
    let aliased = [Op::Store(at(2, 0, false)), Op::Load(at(0, 0, true)), Op::Int];
    assert_eq!((run(&aliased, &cfg, Check), run(&aliased, &cfg, Store)), (2 * ITERATIONS, 0));
    // A load that misses, its value not waited for, then a store to its line: the
    // store waits for the fill.
    let fill = [Op::Load(at(1, 0, false)), Op::Store(at(1, 8, false)), Op::Int];
    let waited = run(&fill, &cfg, Fill);
    assert!(waited >= ITERATIONS * cfg.l2d_cycles, "{waited}");
    // Twelve misses not waited for: the ninth recirculates until the first fill is in.
    let misses: Vec<Op> = (0..12).map(|i| Op::Load(at(1, 128 * i, false))).collect();
    assert!(run(&misses, &cfg, Recirculate) > 0);
    assert_eq!(run(&misses, &cfg, Fill) + run(&misses, &cfg, Store), 0);
}

/// ERRATA MMC45: a function that has called another restores its return link right
/// before its `br.ret`, and the return waits `br_interlock_cycles` for it; a leaf's
/// does not.
#[test]
fn mmc45_a_return_that_restores_its_link_waits_for_it() {
    use pmukit_sim::program::{DataStream, Memory, Op, Pattern};
    const ITERATIONS: u64 = 1_000;
    let run = |cfg: MontecitoConfig| {
        // The loop calls f, which calls the leaf g: g's return is a leaf's, f's not.
        let body = vec![
            Op::Call { target: 0x2_0000, frame: 8 },
            Op::Call { target: 0x3_0000, frame: 8 },
            Op::Int,
            Op::Return { to: 0x2_0004 },
            Op::Int,
            Op::Return { to: 0x1_0004 },
            Op::Branch { target: 0x1_0000, when: Pattern::Loop },
        ];
        let program = common::program_of(common::phase(body, ITERATIONS, vec![DataStream::fixed(0x100_0000, Memory::Cacheable)]));
        Totals::of(machine::montecito(cfg, program, Skipping::Off), u64::MAX, |_| true).get(Signal::BranchInterlockCycles)
    };
    assert_eq!(run(MontecitoConfig::new(1)), ITERATIONS);
    assert_eq!(run(MontecitoConfig { br_interlock_cycles: 3, ..MontecitoConfig::new(1) }), 3 * ITERATIONS);
    assert_eq!(run(MontecitoConfig { br_interlock_cycles: 0, ..MontecitoConfig::new(1) }), 0);
}

/// ERRATA MMC38: a release store (a fence before a store to cacheable memory) and a
/// semaphore that find an older request of their thread in the OzQ are cancelled
/// (L2D_OZQ_CANCELS0.REL, SEMA) and issue once it has left, the thread waiting for the
/// semaphore only; a `sync.i` after an `fc` finds the flush there (MISC_ORDER).
#[test]
fn mmc38_ordered_requests_wait_for_the_threads_older_ones() {
    use pmukit_sim::program::{Access, DataStream, Op, Pattern};
    let at = |stream, offset| Access { stream, offset, size: 8, use_next: false };
    let run = |body: Vec<Op>| {
        // Every store to the data misses the L2D: it holds an OzQ entry until it is
        // passed to the L3, at least the L2D's 5 cycles of lookup.
        let data = striding(128, 64 << 20, 16 << 10);
        let lock = DataStream { base: 0x200_0000, stride: 0, footprint: 1, ..data };
        let mut body = body;
        // Long enough an iteration (40 cycles) for the bus to carry each miss's line
        // (24 cycles) before the next: the misses never wait for request buffers.
        body.extend(std::iter::repeat_n(Op::Int, 240));
        body.push(Op::Branch { target: 0x1_0000, when: Pattern::Loop });
        let program = common::program_of(common::phase(body, 1000, vec![data, lock]));
        Totals::of(machine::montecito(MontecitoConfig::new(1), program, Skipping::Off), u64::MAX, |_| true)
    };
    // A store to the data, then the lock released: the release waits; without the
    // fence it is a plain store.
    let release = run(vec![Op::Store(at(0, 0)), Op::Barrier, Op::Store(at(1, 0))]);
    // (Not when the data's miss waited for a request buffer, the core with it: it
    // has left the queue by the time the release comes.)
    assert!(release.get(Signal::L2dReleaseCancels) > 900, "{}", release.get(Signal::L2dReleaseCancels));
    let plain = run(vec![Op::Store(at(0, 0)), Op::Int, Op::Store(at(1, 0))]);
    assert_eq!(plain.get(Signal::L2dReleaseCancels), 0);
    // A waiting release is in the OzQ until it has issued again and written: the L2D's
    // 5 cycles at least (L2D_OZQ_RELEASE).
    let waiting = release.get(Signal::L2dReleaseCancels);
    assert!(release.get(Signal::L2dOzqReleaseLive) >= waiting * 5, "{}", release.get(Signal::L2dOzqReleaseLive));
    assert_eq!(plain.get(Signal::L2dOzqReleaseLive), 0);
    // The fence is the release: it issues nothing itself, and the thread goes on.
    assert_eq!(release.get(Signal::Instructions) + 1000, plain.get(Signal::Instructions));
    assert!(release.cycles <= plain.cycles, "{} {}", release.cycles, plain.cycles);
    // A semaphore after the store waits for it, and the thread for the semaphore.
    let sema = run(vec![Op::Store(at(0, 0)), Op::Atomic(at(1, 0))]);
    let alone = run(vec![Op::Int, Op::Atomic(at(1, 0))]);
    assert!(sema.get(Signal::L2dSemaphoreCancels) > 900, "{}", sema.get(Signal::L2dSemaphoreCancels));
    assert_eq!(alone.get(Signal::L2dSemaphoreCancels), 0);
    assert!(sema.get(Signal::L2dOzqAcquireLive) > alone.get(Signal::L2dOzqAcquireLive) + 1000);
    // Each fc is followed by sync.i (cancelled) and srlz.i (a serialization).
    let jit = run(vec![Op::Store(at(0, 0)), Op::FlushCode(at(0, 0))]);
    assert_eq!((jit.get(Signal::L2dMiscOrderCancels), jit.get(Signal::InstructionSerializations)), (1000, 1000));
    assert_eq!(plain.get(Signal::L2dMiscOrderCancels), 0);
}

/// ERRATA MMC48 on `os`: its processes read the time of day in the gate page's
/// light-weight system call, under the kernel's sequence lock (Linux's fsys.S: the
/// sequence with `ld4.acq`, then the clock's fields, a line away): the field read in
/// the acquire's issue group reaches the L2D while the acquire is there, a late cancel
/// (L2D_OZQ_CANCELS1.SIBLING_ACQ_REL), when the lock's line has left the L1D.
#[test]
fn mmc48_the_os_workloads_time_reads_cancel_the_acquires_sibling() {
    let program = ia64::compiled(builtin::program("os", 3, 1).unwrap());
    let totals = Totals::of(machine::montecito(MontecitoConfig::new(1), program, Skipping::On), 10_000_000, |_| true);
    assert!(totals.get(Signal::L2dSiblingAcquireCancels) > 0);
    assert!(totals.get(Signal::L2dOzqAcquireLive) > 0);
}

/// ERRATA MMC48: a load with a fence right after it is an acquire (`ld.acq`). One the
/// L1D does not serve is in the L2D until its data is back, and the thread's requests
/// that reach the L2D meanwhile are cancelled (L2D_OZQ_CANCELS0.ACQ), those of its
/// issue group as late cancels (CANCELS1.SIBLING_ACQ_REL), and wait for its data. A
/// plain load, or an acquire the L1D serves, holds nothing back.
#[test]
fn mmc48_an_acquire_holds_back_the_threads_younger_requests() {
    use pmukit_sim::program::{Access, DataStream, Op, Pattern};
    let at = |stream, use_next| Access { stream, offset: 0, size: 8, use_next };
    let run = |acquire: bool, stride: i64| {
        // Lines of 128 KB the L1D misses each iteration and the L2D holds.
        let flag = striding(stride, 128 << 10, 16 << 10);
        let data = DataStream { base: 0x2000_0000, stride: 64, ..flag };
        let more = DataStream { base: 0x3000_0000, stride: 64, ..flag };
        let mut body = vec![Op::Load(at(0, false))];
        body.extend(acquire.then_some(Op::Barrier));
        // A load in the acquire's issue group, six instructions (a group), and a load
        // of the next.
        body.push(Op::Load(at(1, false)));
        body.extend(std::iter::repeat_n(Op::Int, 6));
        body.extend([Op::Load(at(2, true)), Op::Int]);
        body.extend(std::iter::repeat_n(Op::Int, 40));
        body.push(Op::Branch { target: 0x1_0000, when: Pattern::Loop });
        let program = common::program_of(common::phase(body, 10_000, vec![flag, data, more]));
        Totals::of(machine::montecito(MontecitoConfig::new(1), program, Skipping::Off), u64::MAX, |_| true)
    };
    let acquired = run(true, 64);
    let (late, later) = (acquired.get(Signal::L2dSiblingAcquireCancels), acquired.get(Signal::L2dAcquireCancels));
    // Once the lines are in the L2D, every iteration's two younger loads meet the
    // acquire: the first in its group, the second a group later.
    assert!(late > 9_000 && later > 9_000, "{late} {later}");
    // The acquire is in the L2D for its data's 5 cycles at least.
    assert!(acquired.get(Signal::L2dOzqAcquireLive) >= 5 * 9_000, "{}", acquired.get(Signal::L2dOzqAcquireLive));
    let plain = run(false, 64);
    assert_eq!((plain.get(Signal::L2dSiblingAcquireCancels), plain.get(Signal::L2dAcquireCancels)), (0, 0));
    assert_eq!(plain.get(Signal::L2dOzqAcquireLive), 0);
    // The fence issues nothing: the acquire is the load's.
    assert_eq!(acquired.get(Signal::Instructions), plain.get(Signal::Instructions));
    // The cancelled loads' data comes later: the thread waits longer.
    assert!(acquired.cycles > plain.cycles, "{} {}", acquired.cycles, plain.cycles);
    // An acquire the L1D serves (the same line every time) is performed at once.
    let hit = run(true, 0);
    assert_eq!((hit.get(Signal::L2dSiblingAcquireCancels), hit.get(Signal::L2dAcquireCancels)), (0, 0));
}

/// ERRATA MMC74: Intel's patent 6,381,678 has the port convert the ordered requests
/// behind an ordered one that missed into prefetches. An acquire (`ld.acq`) that
/// misses the L2D, and two younger loads of lines it lacks: each younger load's miss
/// goes out at once (L2D_FORCE_RECIRC.TRAN_PREF), so its data comes about when the
/// acquire's does, not a memory latency after it. Behind an acquire the L2D serves,
/// and with no acquire, nothing is transformed.
#[test]
fn mmc74_misses_behind_an_acquire_that_missed_are_transformed_into_prefetches() {
    use pmukit_sim::program::{Access, DataStream, Op, Pattern};
    const ITERATIONS: u64 = 2_000;
    let at = |stream, use_next| Access { stream, offset: 0, size: 8, use_next };
    let run = |acquire: bool, footprint: u64| {
        // Lines of a footprint the L2D holds (64 KB a stream) once they are in, or
        // that misses every level.
        let flag = striding(128, footprint, 16 << 20);
        let data = DataStream { base: 0x4000_0000, ..flag };
        let more = DataStream { base: 0x8000_0000, ..flag };
        let mut body = vec![Op::Load(at(0, false))];
        body.extend(acquire.then_some(Op::Barrier));
        // A load in the acquire's issue group, six instructions (a group), and a load
        // of the next whose value the instruction after it uses.
        body.push(Op::Load(at(1, false)));
        body.extend(std::iter::repeat_n(Op::Int, 6));
        body.extend([Op::Load(at(2, true)), Op::Int]);
        body.push(Op::Branch { target: 0x1_0000, when: Pattern::Loop });
        let program = common::program_of(common::phase(body, ITERATIONS, vec![flag, data, more]));
        Totals::of(machine::montecito(MontecitoConfig::new(1), program, Skipping::Off), u64::MAX, |_| true)
    };
    let (acquired, plain) = (run(true, 1 << 30), run(false, 1 << 30));
    let transformed = acquired.get(Signal::L2dTransformedPrefetches);
    assert!(transformed > ITERATIONS * 19 / 10 && transformed <= 2 * ITERATIONS, "{transformed}");
    assert_eq!(plain.get(Signal::L2dTransformedPrefetches), 0);
    // Held back to the acquire's data and issued then, the younger loads would wait a
    // memory latency more each iteration (200 cycles); sent on at once, their data
    // comes after the acquire's on the bus, as without the acquire.
    assert!(acquired.cycles < plain.cycles + ITERATIONS * 50, "{} against {}", acquired.cycles, plain.cycles);
    assert!(acquired.cycles >= plain.cycles);
    // Behind an acquire the L2D serves, the younger loads wait for it and hit: only
    // the first pass over the lines transforms misses.
    let hit = run(true, 64 << 10);
    assert!(hit.get(Signal::L2dTransformedPrefetches) <= 2 * (64 << 10) / 128, "{}", hit.get(Signal::L2dTransformedPrefetches));
    assert!(hit.get(Signal::L2dAcquireCancels) > ITERATIONS / 2, "{}", hit.get(Signal::L2dAcquireCancels));
}

/// ERRATA MMC49: an L2D fill writes its line into the data array over the 4 cycles the
/// L3 delivers it in (§2.3.3.3), and a dirty victim is read out as long after its
/// miss's lookup: a hit meeting either is cancelled (L2D_OZQ_CANCELS0: a read meeting
/// a fill OZQ_PREEMPT, a store FILL_ST_CONF, either meeting a victim WB_CONF) and
/// issues again once the array is free.
#[test]
fn mmc49_hits_meeting_a_fill_or_a_victim_in_the_data_array_are_cancelled() {
    use pmukit_sim::program::{Access, DataStream, Op, Pattern};
    let at = |stream| Access { stream, offset: 0, size: 8, use_next: false };
    let run = |miss: Op| {
        // A line the L2D misses every iteration (64 MB), and hits: FP loads (the
        // L2D's, never the L1D's) and stores of 8 KB it holds, enough of them that
        // the loop's work, not the bus, paces it: the fills come back among the hits,
        // where a loop the bus paced would wait for each one's request buffer.
        let misses = striding(128, 64 << 20, 16 << 10);
        let hits = DataStream { base: 0x2000_0000, stride: 8, footprint: 8 << 10, ..misses };
        let written = DataStream { base: 0x3000_0000, ..hits };
        let mut body = vec![miss];
        for _ in 0..48 {
            body.extend([Op::FpLoad(at(1)), Op::Int, Op::Store(at(2)), Op::Int]);
        }
        body.push(Op::Branch { target: 0x1_0000, when: Pattern::Loop });
        let program = common::program_of(common::phase(body, 20_000, vec![misses, hits, written]));
        Totals::of(machine::montecito(MontecitoConfig::new(1), program, Skipping::Off), u64::MAX, |_| true)
    };
    let loads = run(Op::Load(at(0)));
    let (preempts, stores) = (loads.get(Signal::L2dFillPreempts), loads.get(Signal::L2dFillStoreConflicts));
    assert!(preempts > 1_000 && stores > 1_000, "{preempts} {stores}");
    // Stores that miss dirty the lines the L2D later evicts: their read-out cancels
    // too. The clean misses' victims are clean but for the stored lines among them.
    let dirty = run(Op::Store(at(0)));
    let (clean, written) = (loads.get(Signal::L2dWritebackConflicts), dirty.get(Signal::L2dWritebackConflicts));
    assert!(written > 1_000 && written > 10 * clean, "{written} {clean}");
    // Without misses the array is busy only while the hits' 128 lines first come in.
    let resident = run(Op::Int);
    let conflicts = [Signal::L2dFillPreempts, Signal::L2dFillStoreConflicts, Signal::L2dOzDataConflicts, Signal::L2dWritebackConflicts];
    let first = conflicts.iter().map(|&c| resident.get(c)).sum::<u64>();
    assert!(first < 2 * 128, "{first}");
}

/// ERRATA MMC50: a call or a return (laid out with `.many`) starts a stream that asks
/// the prefetch pipeline for the lines ahead of the demand fetch; lines the L1I lacks
/// take RAB entries, and a stream that finds the seven taken waits for one, longer
/// than the PVAB holds its addresses for when it is small.
#[test]
fn mmc50_calls_and_returns_stream_instruction_prefetches_into_the_rab() {
    use pmukit_sim::program::{DataStream, Memory, Op, Pattern};
    let run = |calls: bool, cfg: MontecitoConfig| {
        // A function of 6,000 instructions (32 KB of bundles: twice the L1I), called
        // each iteration, or the same code inline.
        let mut body = Vec::new();
        if calls {
            body.push(Op::Call { target: 0x4_0000, frame: 8 });
        }
        body.extend(std::iter::repeat_n(Op::Int, 6_000));
        if calls {
            body.push(Op::Return { to: 0x1_0004 });
        }
        body.push(Op::Branch { target: 0x1_0000, when: Pattern::Loop });
        let program = common::program_of(common::phase(body, 50, vec![DataStream::fixed(0x100_0000, Memory::Cacheable)]));
        // The prefetch pipeline takes one address a cycle: a stream's lines are asked
        // for over the cycles after its branch, never in one (L1I_PREFETCHES counts
        // one a cycle at most, Table 4-42).
        Totals::of(machine::montecito(cfg, program, Skipping::Off), u64::MAX, |span: &Span<MONTECITO>| {
            assert!(span.signals.get(Signal::L1iPrefetches) <= 1, "{span:?}");
            true
        })
    };
    let called = run(true, MontecitoConfig::new(1));
    let inline = run(false, MontecitoConfig::new(1));
    assert_eq!(inline.get(Signal::L1iStrmPrefetches), 0);
    // The stream follows the function's lines from its entry to its return, about one
    // request per line fetched.
    let (stream, reads) = (called.get(Signal::L1iStrmPrefetches), called.get(Signal::ICacheReads));
    assert!(stream > reads / 2 && stream <= reads + 8 * 100, "{stream} {reads}");
    // The function's lines miss the L1I: the stream fills the RAB's prefetch entries
    // and waits for one.
    assert!(called.get(Signal::PrefetchStall) > 0, "{}", called.get(Signal::PrefetchStall));
    assert!(called.get(Signal::RabLive) > inline.get(Signal::RabLive));
    // A stall for an entry outlasts the PVAB's four addresses, which ends the stream;
    // one that held a million would outlast every stall, memory's too.
    let large = run(true, MontecitoConfig { pvab_entries: 1 << 20, ..MontecitoConfig::new(1) });
    assert!(called.get(Signal::PvabOverflows) > 0);
    assert_eq!(large.get(Signal::PvabOverflows), 0);
    assert!(large.get(Signal::L1iStrmPrefetches) > stream, "streams that do not end ask for more");
}

/// ERRATA MMC51 (Table 4-89: "the fill states of I and P correspond to inflight snoop
/// vs. fill conflicts"; Table 4-91 P2_COV_SNP_FILL_NOSNP, "a snoop and a fill to the
/// same address reached the L2D within a 3 cycle window of each other"): the other
/// core's snoops in the last cycles of an iteration meet fills of `shared`'s lines
/// still on their way, which then fill Invalid (a read for ownership took the line)
/// or Pending (a read); a one-core package has no snoop to meet them.
#[test]
fn mmc51_snoops_meet_fills_on_their_way() {
    let t = totals("shared", 2, 20_000_000, Skipping::On);
    for s in [Signal::L2dFillsInvalid, Signal::L2dFillsPending] {
        assert!(t.get(s) > 0, "{s:?}");
    }
    // A snoop within three cycles of a fill is rare (the coverage matrix finds some;
    // `fills.rs` pins the window): at most one a snoop.
    assert!(t.get(Signal::L2dSnoopFillConflicts) <= t.get(Signal::PeerBrl) + t.get(Signal::PeerBril));
    let cfg = MontecitoConfig::new(2)
        .with_overrides(
            "[core]
cores = 1
",
            "m.toml",
        )
        .unwrap();
    let alone = Totals::of(machine::montecito(cfg, builtin::program("shared", 3, 2).unwrap(), Skipping::On), 20_000_000, |_| true);
    for s in [Signal::L2dFillsInvalid, Signal::L2dFillsPending, Signal::L2dSnoopFillConflicts] {
        assert_eq!(alone.get(s), 0, "{s:?}");
    }
    assert!(alone.get(Signal::L2dFillsExclusive) > 0);
}

/// ERRATA MMC71, L2D_FORCE_RECIRC.SNP_OR_L3 ("an existing OZQ entry is forced to
/// recirculate because an incoming snoop request matched its address"): a loop that
/// writes a new line of shared data each iteration, four stores to it, as a JIT
/// writes code. The first store's read for ownership goes to memory; the other three
/// wait in the OzQ for its fill, and the other core's write of the line, at the
/// iteration's end (MMC23), finds them there (and the first, when it is still being
/// passed to the L3). Private lines and a single core meet no snoop.
#[test]
fn mmc71_a_snoop_forces_the_requests_for_its_line_in_the_ozq_to_recirculate() {
    const ITERATIONS: u64 = 5_000;
    let run = |shared: bool, cores: u32| {
        let lines =
            DataStream { stride: 128, footprint: 64 << 20, page: 16 << 20, shared, ..DataStream::fixed(0x1000_0000, Memory::Cacheable) };
        let mut body: Vec<Op> =
            [0, 8, 16, 24].iter().map(|&offset| Op::Store(Access { stream: 0, offset, size: 8, use_next: false })).collect();
        body.extend([Op::Int, Op::Branch { target: 0x1_0000, when: pmukit_sim::program::Pattern::Loop }]);
        let cfg = MontecitoConfig::new(1).with_overrides(&format!("[core]\ncores = {cores}\n"), "m.toml").unwrap();
        let program = common::program_of(common::phase(body, ITERATIONS, vec![lines]));
        Totals::of(machine::montecito(cfg, program, Skipping::Off), u64::MAX, |_| true)
    };
    let t = run(true, 2);
    let forced = t.get(Signal::L2dSnoopRecirculates);
    assert!((3 * ITERATIONS..=4 * ITERATIONS).contains(&forced), "{forced} for {ITERATIONS} lines");
    assert_eq!(t.get(Signal::PeerBril), ITERATIONS, "the other core writes each line once");
    assert_eq!(run(false, 2).get(Signal::L2dSnoopRecirculates), 0, "no snoop of private lines");
    assert_eq!(run(true, 1).get(Signal::L2dSnoopRecirculates), 0, "no other core");
}

/// ERRATA MMC72, L2D_FORCE_RECIRC.TAG_NOTOK ("L2D hits caused by ... a pending mf.a")
/// and L2D_OZQ_CANCELS0.MISC_ORDER ("a sync.i or mf.a"): a driver's loop that rings
/// its adapter's doorbell under a lock. Linux's spin_unlock issues `mmiowb()`, `mf.a`
/// on Itanium, when the lock's holder wrote device memory: the release store, an L2D
/// hit, waits for the platform to accept the doorbell's write and is forced to
/// recirculate meanwhile; so does a device access after it. Without the doorbell, the
/// release is a plain `st.rel`.
#[test]
fn mmc72_a_lock_released_after_a_device_write_waits_for_its_mf_a() {
    use pmukit_sim::program::Pattern;
    const ITERATIONS: u64 = 2_000;
    let run = |doorbell: bool, read_after: bool| {
        let lock = DataStream::fixed(0x1000_0000, Memory::Cacheable);
        let device = DataStream::fixed(0xF000_0000, Memory::Device);
        let mut body = vec![Op::Atomic(Access { stream: 0, offset: 0, size: 4, use_next: true }), Op::Int];
        if doorbell {
            body.push(Op::Store(Access { stream: 1, offset: 0, size: 4, use_next: false }));
        }
        body.extend([Op::Int, Op::Barrier, Op::Store(Access { stream: 0, offset: 0, size: 4, use_next: false })]);
        if read_after {
            body.push(Op::Load(Access { stream: 1, offset: 8, size: 4, use_next: false }));
        }
        body.extend([Op::Int, Op::Branch { target: 0x1_0000, when: Pattern::Loop }]);
        let program = common::program_of(common::phase(body, ITERATIONS, vec![lock, device]));
        Totals::of(machine::montecito(MontecitoConfig::new(1), program, Skipping::Off), u64::MAX, |_| true)
    };
    // The doorbell's write is accepted at the end of its bus transaction, after the
    // next iteration's lock acquire: that hit waits too (but for the first iteration's).
    let fenced = run(true, false);
    assert_eq!(fenced.get(Signal::L2dTagNotOk), 2 * ITERATIONS - 1, "releases and the lock acquires after them");
    assert_eq!(fenced.get(Signal::L2dMiscOrderCancels), 2 * ITERATIONS - 1);
    // A device read after the release waits for the `mf.a` too, and the next acquire
    // then comes long after the write was accepted.
    let read = run(true, true);
    assert_eq!(read.get(Signal::L2dTagNotOk), ITERATIONS);
    assert_eq!(read.get(Signal::L2dMiscOrderCancels), 2 * ITERATIONS);
    assert!(read.cycles > run(false, true).cycles);
    let plain = run(false, false);
    assert_eq!(plain.get(Signal::L2dTagNotOk) + plain.get(Signal::L2dMiscOrderCancels), 0, "no device write: no mf.a");
}

/// A trace may call code in the address space's last line (found by the `trace`
/// harness): its stream has no line after it, and the machine runs on.
#[test]
fn mmc50_a_stream_stops_at_the_end_of_the_address_space() {
    use pmukit_sim::program::{DataStream, Memory, Op, Pattern};
    let top = u64::MAX - 15;
    let body = vec![
        Op::Call { target: top, frame: 8 },
        Op::Int,
        Op::Return { to: 0x1_0004 },
        Op::Branch { target: 0x1_0000, when: Pattern::Loop },
    ];
    let program = common::program_of(common::phase(body, 100, vec![DataStream::fixed(0x100_0000, Memory::Cacheable)]));
    let t = Totals::of(machine::montecito(MontecitoConfig::new(1), program, Skipping::Off), u64::MAX, |_| true);
    assert_eq!(t.get(Signal::Calls), 100);
}

/// ERRATA MMC1, L2D_FORCE_RECIRC.TAG_NOTOK ("stores with a sibling miss to the same
/// index"): a load that misses the L2D and a store of the same issue group that hits
/// a line of the miss's set. The fill may take the store's way, so the store is
/// forced to recirculate; a store to the next set is not.
#[test]
fn mmc1_a_store_hit_beside_a_miss_of_its_set_is_forced_to_recirculate() {
    use pmukit_sim::program::{Access, DataStream, Memory, Op, Pattern};
    const ITERATIONS: u64 = 20_000;
    let run = |offset: u32| {
        // A new line every iteration (64 MB), and a store to the line of the same set
        // in 32 KB (the L2D's 256 sets of 128-byte lines, one line a set), which stays.
        let misses = DataStream { stride: 128, footprint: 64 << 20, page: 16 << 20, ..DataStream::fixed(0x1000_0000, Memory::Cacheable) };
        let stored = DataStream { base: 0x3000_0000, footprint: 32 << 10, ..misses };
        let body = vec![
            Op::Load(Access { stream: 0, offset: 0, size: 8, use_next: false }),
            Op::Store(Access { stream: 1, offset, size: 8, use_next: false }),
            Op::Int,
            Op::Branch { target: 0x1_0000, when: Pattern::Loop },
        ];
        let program = common::program_of(common::phase(body, ITERATIONS, vec![misses, stored]));
        Totals::of(machine::montecito(MontecitoConfig::new(1), program, Skipping::Off), u64::MAX, |_| true)
    };
    // The first lap of 256 stores misses the L2D.
    let same = run(0).get(Signal::L2dTagNotOk);
    assert!((ITERATIONS - 256..=ITERATIONS).contains(&same), "{same}");
    assert_eq!(run(128).get(Signal::L2dTagNotOk), 0);
}

/// ERRATA MMC37 (Table 4-94's store matches): an FP load (always an L2D read) of the
/// 16 bytes a store wrote in its own issue group, or one, two or three cycles before,
/// finds the store in the L2D pipeline's L2A, L2M, L2D or L2C stage, is cancelled, and
/// hits once the store has left; four cycles on, or in other bytes, it does not meet
/// the store. In the store's group and to its word, both bypassing the empty OzQ, the
/// cancel is a late one too (LATE_BYP_EFFRELEASE, MMC1).
#[test]
fn mmc37_a_read_of_bytes_a_store_still_in_the_pipeline_writes_is_cancelled_by_its_stage() {
    use pmukit_sim::program::{ia64, Access, DataStream, Memory, Op, Pattern};
    let body = |ints: usize, offset: u32| {
        let mut body = vec![Op::Store(Access { stream: 0, offset: 0, size: 8, use_next: false })];
        body.extend(std::iter::repeat_n(Op::Int, ints));
        body.push(Op::FpLoad(Access { stream: 0, offset, size: 8, use_next: true }));
        body.extend([Op::Int, Op::Branch { target: 0x1_0000, when: Pattern::Loop }]);
        body
    };
    let run = |ints: usize, offset: u32| {
        let y = DataStream {
            base: 0x100_0000,
            stride: 32,
            footprint: 8 << 10,
            memory: Memory::Cacheable,
            page: 16 << 10,
            shared: false,
            nullable: false,
            fresh: false,
        };
        // Laid out in bundles, as `pmu stat` runs it and as `later` below counts.
        let program = ia64::compiled(common::program_of(common::phase(body(ints, offset), 20_000, vec![y])));
        Totals::of(machine::montecito(MontecitoConfig::new(1), program, Skipping::Off), u64::MAX, |_| true)
    };
    let stages = [Signal::L2dStoreMatchL2a, Signal::L2dStoreMatchL2m, Signal::L2dStoreMatchL2d, Signal::L2dStoreMatchL2c];
    // The first lap's stores miss the L2D (128-byte lines), and its loads wait for them.
    let hits = 20_000 - (8 << 10) / 128;
    for ints in 0..20 {
        // The store, at the loop's head, begins an issue group whose window ends two
        // bundles on (MMC64), the next ones six slots each, nops included (MMC1): the
        // load issues as many cycles later as windows lie between them as laid out.
        let laid = ia64::bundled(common::phase(body(ints, 8), 1, vec![]));
        let slot = |f: fn(&Op) -> bool| laid.body.iter().position(f).unwrap();
        let apart = slot(|op| matches!(op, Op::FpLoad(_))) - slot(|op| matches!(op, Op::Store(_)));
        let first = 6 - (0x1_0000 / pmukit_sim::program::INSN % 3) as usize;
        let later = if apart < first { 0 } else { 1 + (apart - first) / 6 };
        let (t, other, word) = (run(ints, 8), run(ints, 16), run(ints, 0));
        assert!(stages.iter().all(|&s| other.get(s) == 0), "{ints}: another 16 bytes");
        // Another word of the store's 16 bytes is no effective release; the store's
        // word, in its group, is.
        assert_eq!(t.get(Signal::L2dLateBypassReleases), 0, "{ints}");
        assert_eq!(word.get(Signal::L2dLateBypassReleases), if later == 0 { word.get(Signal::L2dStoreMatchL2a) } else { 0 }, "{ints}");
        match stages.get(later) {
            Some(&stage) => {
                assert!(stages.iter().all(|&s| t.get(s) == if s == stage { hits } else { 0 }), "{ints}: {stage:?}");
                // The load waits in the OzQ until the store has left the L2C stage; the
                // first lap's misses share the data bus, so where each lands on a bus
                // clock may differ by a clock a miss between the two programs.
                let wait = 4 - later as u64;
                let first_lap = (8 << 10) / 128 * MontecitoConfig::new(1).bus_ratio;
                assert!(t.cycles.abs_diff(other.cycles + hits * wait) <= first_lap, "{ints}: {stage:?}");
            }
            None => assert!(stages.iter().all(|&s| t.get(s) == 0), "{ints}: the store has left"),
        }
    }
}

/// MMC36: an L2D request that finds the OzQ empty bypasses it. Two FP loads of one
/// issue group that hit the L2D take the two bypass paths, unless they are to one bank
/// (16 banks of 16 bytes): then the second is cancelled and issues from the OzQ a
/// cycle later. Every bypassing hit's speculative L3 access is cancelled, and so is an
/// uncacheable request's; a bypassing miss the L3 serves keeps its.
#[test]
fn mmc36_hits_bypass_an_empty_ozq_by_two_paths_and_conflict_on_a_bank() {
    use pmukit_sim::program::{Access, DataStream, Memory, Op, Pattern};
    let lap = 8 << 10;
    // The second load's value is used at once: the next group finds the OzQ empty.
    let load = |stream, use_next| Op::FpLoad(Access { stream, offset: 0, size: 8, use_next });
    let run = |gap: u64, memory: Memory| {
        let x = DataStream {
            base: 0x100_0000,
            stride: 8,
            footprint: lap,
            memory,
            page: 16 << 10,
            shared: false,
            nullable: false,
            fresh: false,
        };
        let y = DataStream { base: 0x200_0000 + gap, ..x };
        let body = vec![load(0, false), load(1, true), Op::Int, Op::Branch { target: 0x1_0000, when: Pattern::Loop }];
        let program = common::program_of(common::phase(body, 100_000, vec![x, y]));
        Totals::of(machine::montecito(MontecitoConfig::new(1), program, Skipping::Off), u64::MAX, |_| true)
    };
    let (same, apart) = (run(0, Memory::Cacheable), run(16, Memory::Cacheable));
    // The first lap misses once per 128-byte L2D line.
    let hits = 100_000 - lap / 128;
    for t in [&same, &apart] {
        // Every x load but the first lap's misses and the secondaries that found a
        // miss of its line still outstanding (apart, x's lines start two loads after
        // y's, and the loop waits only for y's).
        let secondaries = t.get(Signal::L2dSecondaryL1w) + t.get(Signal::L2dSecondaryOzq) + t.get(Signal::L2dSecondaryFill);
        assert_eq!(t.get(Signal::L2dBypassL1d) + secondaries, hits);
        assert_eq!(t.get(Signal::L3BypassAttributeCancels), 0);
    }
    let (first, conflicts) = (same.get(Signal::L2dBypassL1d), same.get(Signal::L2dBankConflicts));
    assert_eq!((conflicts, same.get(Signal::L2dBypassL1w)), (first, 0), "every y load loses x's bank");
    assert_eq!(apart.get(Signal::L2dBankConflicts), 0);
    let (first, second) = (apart.get(Signal::L2dBypassL1d), apart.get(Signal::L2dBypassL1w));
    assert!(second <= first && second + lap / 128 >= first, "y's hits take the second path, its misses not: {first} {second}");
    // A reissued load costs a cycle (less the first lap's waits for x's secondaries,
    // which only the loads apart have).
    assert!(same.cycles > apart.cycles + conflicts * 9 / 10, "{} {}", same.cycles, apart.cycles);
    // The first lap's misses find the L3 empty: no L3 data bypass.
    assert_eq!(same.get(Signal::L3DataBypasses), 0);
    // A line a lap of 1 MB each: the L2D (256 KB) holds neither array, the L3 both,
    // so after the first lap every x load bypasses, misses the L2D and keeps the L3
    // access it began (L2D_BYPASS.L3_DATA1).
    let far = |base: u64| DataStream {
        base,
        stride: 128,
        footprint: 1 << 20,
        memory: Memory::Cacheable,
        page: 16 << 10,
        shared: false,
        nullable: false,
        fresh: false,
    };
    let body = vec![load(0, false), load(1, true), Op::Int, Op::Branch { target: 0x1_0000, when: Pattern::Loop }];
    let program = common::program_of(common::phase(body, 100_000, vec![far(0x100_0000), far(0x200_0000)]));
    let l3 = Totals::of(machine::montecito(MontecitoConfig::new(1), program, Skipping::Off), u64::MAX, |_| true);
    let later_laps = 100_000 - (1 << 20) / 128;
    assert!(l3.get(Signal::L3DataBypasses) >= later_laps * 9 / 10, "{} of {later_laps}", l3.get(Signal::L3DataBypasses));
    assert!(l3.get(Signal::L3DataBypasses) <= 100_000);
    let uncached = run(16, Memory::Device);
    assert_eq!(uncached.get(Signal::L3BypassAttributeCancels), 200_000, "the OzQ is always empty");
    assert_eq!(uncached.get(Signal::L2dBypassL1d) + uncached.get(Signal::L2dBypassL1w), 0);
}

/// MMC32: a short `if` whose condition depends on the data is predicated: no branch,
/// its instructions retire either way, squashed when the condition skips them. A long
/// one, or one whose condition never changes, stays a branch.
#[test]
fn mmc32_short_data_dependent_ifs_are_predicated() {
    use pmukit_sim::program::{Op, Pattern};
    let run = |over: u8, when: Pattern| {
        let mut body = vec![Op::Int, Op::Skip { over, when }];
        body.extend(std::iter::repeat_n(Op::Int, usize::from(over)));
        body.push(Op::Branch { target: 0x1_0000, when: Pattern::Loop });
        let program = one_phase(body, 6_400);
        Totals::of(machine::montecito(MontecitoConfig::new(1), program, Skipping::Off), u64::MAX, |_| true)
    };
    // Taken in 3 iterations of every 8: 2,400 of 6,400.
    let data = Pattern::Bits { bits: 0b1001_0010, len: 8 };
    let short = run(3, data);
    assert_eq!(short.get(Signal::Branches), 6_400, "only the loop's branch");
    assert_eq!(short.get(Signal::PredicatedOff), 3 * 2_400);
    assert_eq!(short.get(Signal::Instructions), 6_400 * 6, "squashed instructions retire");
    let long = run(4, data);
    assert_eq!(long.get(Signal::Branches), 2 * 6_400);
    assert_eq!(long.get(Signal::PredicatedOff), 0);
    assert_eq!(long.get(Signal::Instructions), 6_400 * 3 + 4 * 4_000, "skipped instructions do not issue");
    let constant = run(3, Pattern::Always);
    assert_eq!((constant.get(Signal::Branches), constant.get(Signal::PredicatedOff)), (2 * 6_400, 0));
}

/// §4.15 NOPS_RETIRED: "retired nop.i, nop.m, nop.b, nop.f instructions, excluding
/// nop instructions that were predicated off"; IA64_INST_RETIRED includes both (§4.2).
/// A nop in an if-converted block is squashed with it when the condition skips it.
#[test]
fn s4_15_nops_retire_and_predicated_off_ones_are_not_nops_retired() {
    use pmukit_sim::program::{Op, Pattern};
    // Taken in 3 iterations of every 8: 2,400 of 6,400.
    let when = Pattern::Bits { bits: 0b1001_0010, len: 8 };
    let body =
        vec![Op::Int, Op::Skip { over: 3, when }, Op::Int, Op::Nop, Op::Int, Op::Nop, Op::Branch { target: 0x1_0000, when: Pattern::Loop }];
    let t = Totals::of(machine::montecito(MontecitoConfig::new(1), one_phase(body, 6_400), Skipping::Off), u64::MAX, |_| true);
    assert_eq!(t.get(Signal::Instructions), 6_400 * 7);
    assert_eq!(t.get(Signal::Nops), 6_400 * 2 - 2_400, "the guarded nop of a skipping iteration is not counted");
    assert_eq!(t.get(Signal::PredicatedOff), 3 * 2_400);
}

/// MMC33: a load in a loop that stores to another data stream is advanced above the
/// store and checked; the check fails when the store wrote its bytes. A loop that
/// stores only to the load's own stream advances nothing.
#[test]
fn mmc33_advanced_loads_are_checked_in_the_alat() {
    use pmukit_sim::program::{Access, DataStream, Memory, Op, Pattern};
    let run = |store_stream: u8, load_base: u64| {
        let store = Op::Store(Access { stream: store_stream, offset: 0, size: 8, use_next: false });
        let load = Op::Load(Access { stream: 0, offset: 0, size: 8, use_next: false });
        let stream = |base| DataStream {
            base,
            stride: 8,
            footprint: 4096,
            memory: Memory::Cacheable,
            page: 16 << 10,
            shared: false,
            nullable: false,
            fresh: false,
        };
        let body = vec![store, load, Op::Int, Op::Branch { target: 0x1_0000, when: Pattern::Loop }];
        let program = common::program_of(common::phase(body, 1_000, vec![stream(load_base), stream(0x200_0000)]));
        let t = Totals::of(machine::montecito(MontecitoConfig::new(1), program, Skipping::Off), u64::MAX, |_| true);
        (t.get(Signal::AlatChecksInt), t.get(Signal::AlatFailedInt))
    };
    assert_eq!(run(1, 0x100_0000), (1_000, 0), "apart: every check passes");
    assert_eq!(run(1, 0x200_0000), (1_000, 1_000), "the same bytes through two streams: every check fails");
    assert_eq!(run(0, 0x100_0000), (0, 0), "its own stream: the compiler sees the addresses");
}

/// MD44: a switch's stall runs from the thread's last retirement to the event that
/// decided it. Two threads divide and then `hint@pause`: the hint decides the switch
/// after the divide's wait, however few cycles the iteration runs after it.
#[test]
fn md44_a_switch_stall_runs_to_the_event_that_decided_it() {
    use pmukit_sim::program::{DataStream, FpOp, Memory, Op, Pattern, Program};
    let thread = || {
        let body = vec![Op::Fp(FpOp::Div), Op::Pause, Op::Int, Op::Int, Op::Branch { target: 0x1_0000, when: Pattern::Loop }];
        common::one_phase(body, 1 << 16, DataStream::fixed(0x100_0000, Memory::Cacheable)).threads.remove(0)
    };
    // Stall classes (MD44): 1 + the thresholds 8, 16, 32, 64, ... the stall reaches.
    let class = |divide: u64| {
        let program = Program { threads: vec![thread(), thread()], timer: None };
        let cfg = MontecitoConfig { fp_divide_cycles: divide, ..MontecitoConfig::new(2) };
        let t = Totals::of(machine::montecito(cfg, program, Skipping::On), 1_000_000, |_| true);
        let switches = t.get(Signal::ThreadSwitchesHint);
        assert!(switches > 0);
        assert_eq!(t.get(Signal::ThreadSwitchStall) % switches, 0, "every switch has the same stall");
        t.get(Signal::ThreadSwitchStall) / switches
    };
    // The divide's cycles without a retirement, then the hint: 30 reaches 8 and 16,
    // 100 reaches 64 as well.
    assert_eq!(class(30), 3);
    assert_eq!(class(100), 5);
    assert_eq!(class(4), 1);
}

/// MMC25: prefetched instruction lines take their level's latency to arrive; fetches
/// that come first wait in the RAB, prefetches for a pending L2I line recirculate, and
/// hits during another line's fill are put off. Each is a kind of the requests that
/// contain it. (A demand fetch recirculates only when it outruns the prefetcher, which
/// the built-in programs do not: docs/montecito-model.md.)
#[test]
fn mmc25_instruction_requests_in_flight() {
    // A prefetch's L2I hit meets one of the 4-cycle fills now and then: seed 7's `os`
    // has a few in these 2×10^7 cycles, seeds 3 and 5 fewer.
    let program = builtin::program("os", 7, 2).unwrap();
    let t = Totals::of(machine::montecito(MontecitoConfig::new(2), program, Skipping::On), 20_000_000, |_| true);
    for s in [Signal::L1iFetchRabHits, Signal::L2iSpecAborts, Signal::L2iRecirculatesPrefetch] {
        assert!(t.get(s) > 0, "{s:?}");
    }
    // The cycles with a demand fetch's and with a prefetch's hit conflict (flags).
    let conflicts = |kind: u64| {
        let program = builtin::program("os", 7, 2).unwrap();
        let conflict = move |s: &Span<MONTECITO>| s.signals.get(Signal::L2iHitConflicts) & kind != 0;
        Totals::of(machine::montecito(MontecitoConfig::new(2), program, Skipping::On), 20_000_000, conflict).cycles
    };
    let (demand, prefetch) = (conflicts(0b01), conflicts(0b10));
    assert!(prefetch > 0);
    assert!(t.get(Signal::L2iSpecAborts) <= t.get(Signal::L1iFetchRabHits));
    let prefetches_out = t.get(Signal::L2iPrefetchHits) + t.get(Signal::L2iPrefetchMisses);
    assert!(t.get(Signal::L1iFetchRabHits) <= prefetches_out, "a RAB hit finds a prefetch that went out");
    assert!(t.get(Signal::L2iRecirculatesDemand) + demand <= t.get(Signal::L2InstructionHits));
    assert!(t.get(Signal::L2iRecirculatesPrefetch) + prefetch <= t.get(Signal::L2iPrefetchHits));
    // The waits cost time: a core whose prefetches arrived at once would do more.
    assert!(t.get(Signal::ICacheStallCycles) > 0);
}

/// What every Montecito selection counts over the built-in workloads, with one
/// hardware thread and two, at seeds 3 and 5 (fault injection on), `cycles` cycles
/// each: its name and count, in the table's order.
fn selection_counts(cycles: u64) -> Vec<(String, u64)> {
    let cat = pmukit_arch::Catalog::builtin();
    let pmu = cat.pmu("montecito").unwrap();
    let mut seen = HashMap::new();
    for (w, threads, seed) in WORKLOADS.iter().flat_map(|w| [(w, 1, 3), (w, 2, 3), (w, 1, 5), (w, 2, 5)]) {
        let program = ia64::compiled(builtin::program(w.name, seed, threads).unwrap());
        common::profile(
            machine::montecito(MontecitoConfig { fault_every: Some(1000), ..MontecitoConfig::new(threads) }, program, Skipping::On),
            cycles,
            // What counters and capture units can tell apart: the span without its
            // addresses.
            |s| {
                let d = s.detail;
                let fetch = d.fetch.map(|f| (f.latency, f.rab, f.tlb));
                let branch = s.branch.map(|b| (b.taken, b.mispredicted, d.branch_kind, d.path_mispredicted));
                (s.signals, s.mem.map(|m| m.write), s.privilege, d.data_latency, d.data_tlb, fetch, branch)
            },
            &mut seen,
        );
    }
    let spans: Vec<(Span<MONTECITO>, u64)> = seen
        .iter()
        .map(|(&(signals, mem, privilege, data_latency, data_tlb, fetch, branch), &c)| {
            let mut span = Span { signals, privilege, ..Span::new(1, 0) };
            span.mem = mem.map(|write| MemRef { addr: 0, stride: 0, size: 8, write });
            span.detail.data_latency = data_latency;
            span.detail.data_tlb = data_tlb;
            span.detail.fetch = fetch.map(|(latency, rab, tlb)| FetchMiss { addr: 0, latency, rab, tlb });
            if let Some((taken, mispredicted, kind, path)) = branch {
                span.branch = Some(Branch { target: 0, taken, mispredicted });
                span.detail.branch_kind = kind;
                span.detail.path_mispredicted = path;
            }
            (span, c)
        })
        .collect();
    let all = common::selections(pmu);
    let mut counts = Vec::new();
    for (name, code, umask) in &all {
        // A capture event counts what its unit captures as the event programs it.
        let capture: Vec<(&str, u64)> = cat
            .resolve(name, "montecito")
            .ok()
            .and_then(|sel| pmukit_arch::encode_set(pmu, &[sel]).ok())
            .map(|set| set.registers.into_iter().filter(|(r, _)| ["PMC37", "PMC39", "PMC40", "PMC42"].contains(r)).collect())
            .unwrap_or_default();
        let count: u64 = spans
            .iter()
            .map(|(span, c)| {
                let n = if capture.is_empty() {
                    montecito::per_cycle(*code as u8, *umask, span)
                } else {
                    u64::from(montecito::capture_units(&capture, span) != 0)
                };
                n * c
            })
            .sum();
        counts.push((name.clone(), count));
    }
    counts
}

/// Montecito event and unit-mask selections that count zero on every built-in
/// workload, with one hardware thread and two, at seeds 3 and 5 (fault injection on),
/// are exactly those docs/montecito-model.md lists with their reasons. Long enough for
/// timing coincidences that come every million cycles or two (a demand L2I hit while
/// another line's fill returns its data); `montecito_selections_over_long_runs` runs
/// the same matrix longer.
#[test]
fn montecito_selections_the_builtin_workloads_exercise() {
    let cat = pmukit_arch::Catalog::builtin();
    let all = common::selections(cat.pmu("montecito").unwrap());
    let counts = selection_counts(10_000_000);
    let zero: Vec<&str> = counts.iter().filter(|(_, c)| *c == 0).map(|(n, _)| n.as_str()).collect();
    let covered = |entries: &[String], name: &str| entries.iter().any(|e| covers(e, name));
    // Selections the spec says count nothing leave the denominator; the model must
    // not count them either.
    let cannot = documented("## Selections that cannot count");
    let zeros = documented("## Selections that count zero");
    // Rare selections count in the long job's runs (checked there), and at this length
    // may or may not: they are neither unreached nor in need of a reason.
    let rare = documented("## Selections that count only in long runs");
    for entry in &cannot {
        let names: Vec<&str> = all.iter().map(|(n, _, _)| n.as_str()).filter(|n| covers(entry, n)).collect();
        assert!(!names.is_empty(), "docs/montecito-model.md says `{entry}` cannot count, but it is no selection");
        let counting: Vec<&&str> = names.iter().filter(|n| !zero.contains(n)).collect();
        assert!(counting.is_empty(), "the spec says {counting:?} count nothing, but the model counts them");
        let twice: Vec<&&str> = names.iter().filter(|n| covered(&zeros, n) || covered(&rare, n)).collect();
        assert!(twice.is_empty(), "{twice:?} are in two tables of docs/montecito-model.md");
    }
    for entry in &rare {
        let names: Vec<&str> = all.iter().map(|(n, _, _)| n.as_str()).filter(|n| covers(entry, n)).collect();
        assert!(!names.is_empty(), "docs/montecito-model.md lists `{entry}`, which is no selection");
        let twice: Vec<&&str> = names.iter().filter(|n| covered(&zeros, n)).collect();
        assert!(twice.is_empty(), "{twice:?} are in two tables of docs/montecito-model.md");
    }
    let countable = all.iter().filter(|(n, _, _)| !covered(&cannot, n)).count();
    let unreached: Vec<&&str> = zero.iter().filter(|z| !covered(&cannot, z) && !covered(&rare, z)).collect();
    eprintln!(
        "{} of {} Montecito selections count zero; of the {countable} that can count, {} ({:.1} %)",
        zero.len(),
        all.len(),
        unreached.len(),
        100.0 * unreached.len() as f64 / countable as f64
    );
    let unexplained: Vec<&&&str> = unreached.iter().filter(|z| !covered(&zeros, z)).collect();
    assert!(unexplained.is_empty(), "count zero without a reason in docs/montecito-model.md: {unexplained:?}");
    // Issue 43's bar: at most 5 % of the selections that can count count zero.
    assert!(20 * unreached.len() <= countable, "{} of {countable} countable selections count zero", unreached.len());
    let mut counting = Vec::new();
    for entry in &zeros {
        let names: Vec<&str> = all.iter().map(|(n, _, _)| n.as_str()).filter(|n| covers(entry, n)).collect();
        assert!(!names.is_empty(), "docs/montecito-model.md lists `{entry}`, which is no selection");
        counting.extend(names.into_iter().filter(|n| !zero.contains(n)));
    }
    assert!(counting.is_empty(), "docs/montecito-model.md says {counting:?} count zero, but they count");
}

/// The same matrix as `montecito_selections_the_builtin_workloads_exercise`, each run
/// `PMUKIT_COVERAGE_CYCLES` cycles (2×10^8 unless set): the whole matrix issue 43's
/// coverage is measured on. The zero table's selections must count zero here too
/// (one that counts belongs in the table of rare ones), the rare table's must count,
/// and those the spec says count nothing must not.
/// `cargo test --release -p pmukit-sim --test machine_montecito -- --ignored long_runs
/// --nocapture` (about ten minutes on one core).
#[test]
#[ignore = "a long job: minutes of simulation"]
fn montecito_selections_over_long_runs() {
    let cycles = std::env::var("PMUKIT_COVERAGE_CYCLES").ok().and_then(|c| c.parse().ok()).unwrap_or(200_000_000);
    let counts = selection_counts(cycles);
    let cannot = documented("## Selections that cannot count");
    let zeros = documented("## Selections that count zero");
    let counting = |entries: &[String]| -> Vec<(String, u64)> {
        counts.iter().filter(|(n, c)| *c > 0 && entries.iter().any(|e| covers(e, n))).cloned().collect()
    };
    let counted = counting(&zeros);
    assert!(counted.is_empty(), "rare rather than unreachable in {cycles} cycles a run (the table of rare ones): {counted:#?}");
    let rare = documented("## Selections that count only in long runs");
    let found = counting(&rare);
    eprintln!("the rare selections' counts in {cycles} cycles a run: {found:#?}");
    let missing: Vec<&String> = rare.iter().filter(|r| !found.iter().any(|(n, _)| covers(r, n))).collect();
    assert!(missing.is_empty(), "docs/montecito-model.md calls these rare, but they count zero: {missing:?}");
    let impossible = counting(&cannot);
    assert!(impossible.is_empty(), "the spec says these count nothing: {impossible:?}");
}

#[test]
fn a_machine_config_overrides_parameters_and_refuses_bad_keys() {
    let base = MontecitoConfig::new(2);
    let cfg = base.with_overrides("[l3]\nsize = 6291456\n[core]\nswitch_cycles = 30\n", "m.toml").unwrap();
    assert_eq!((cfg.l3.size, cfg.switch_cycles), (6 << 20, 30));
    let err = |text: &str| base.with_overrides(text, "m.toml").unwrap_err().to_string();
    assert_eq!(err("[core]\nswitch_cycles = 0\n"), "m.toml: core.switch_cycles = 0: must be in 1..=1000");
    assert!(err("[l2d]\nline = 100\n").contains("[l2d]"));
    assert!(err("[icache]\nsize = 1\n").contains("unknown field `icache`"));
    assert_eq!(err("[core]\nzero_bubble = 0\n"), "m.toml: core.zero_bubble = 0: must be in 1..=64");
    assert_eq!(err("[core]\nresteer_cycles = 101\n"), "m.toml: core.resteer_cycles = 101: must be in 0..=100");
    assert_eq!(err("[core]\nthread_quantum = 63\n"), "m.toml: core.thread_quantum = 63: must be in 64..=4294967296");
    assert_eq!(base.with_overrides("[core]\nthread_quantum = 4096\n", "m.toml").unwrap().thread_quantum, 4096);
}

/// §2.1.2's zero-cycle branch predictor: with fewer entries, more taken branches cost
/// a resteer bubble (FE_BUBBLE.BUBBLE's cycles) and the program retires less.
#[test]
fn mmc18_taken_branches_the_zero_bubble_predictor_misses_cost_a_resteer() {
    let run = |text: &str| {
        let cfg = MontecitoConfig::new(2).with_overrides(text, "m.toml").unwrap();
        let program = builtin::program("branchy", 3, 2).unwrap();
        let t = Totals::of(machine::montecito(cfg, program, Skipping::On), 5_000_000, |_| true);
        (t.get(Signal::ResteerBubbleCycles), t.get(Signal::Instructions))
    };
    let (few, few_retired) = run("[core]\nzero_bubble = 1\n");
    let (many, many_retired) = run("[core]\nzero_bubble = 64\n");
    assert!(few > many && many_retired > few_retired, "1 entry: {few} bubbles, 64 entries: {many}");
    let (none, _) = run("[core]\nresteer_cycles = 0\n");
    assert_eq!(none, 0);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]

    /// Whatever a machine configuration says, it is refused with a reason or gives a
    /// machine that runs.
    #[test]
    fn arbitrary_machine_configs_are_refused_or_run(
        table in "(l1i|l1d|l2i|l2d|l3|l1_itlb|l2_dtlb|core|dcache)",
        key in "(size|ways|line|entries|replacement|write_allocate|switch_cycles|thread_quantum|memory_cycles|l3_cycles|return_stack|l2_tlb_cycles|zero_bubble|resteer_cycles)",
        value in "(0|1|3|8|16|64|100|4096|16384|65536|4194304|1073741824|99999999999|-1|true|\"lru\"|\"round-robin\"|\"fifo\"|1.5)",
    ) {
        let text = format!("[{table}]\n{key} = {value}\n");
        match MontecitoConfig::new(2).with_overrides(&text, "m.toml") {
            Err(e) => proptest::prop_assert!(e.to_string().starts_with("m.toml"), "{e}"),
            Ok(cfg) => {
                let program = builtin::program("mixed", 1, 2).unwrap();
                let t = Totals::of(machine::montecito(cfg, program, Skipping::On), 200_000, |_| true);
                proptest::prop_assert_eq!(t.cycles, 200_000);
            }
        }
    }
}

/// §2.4.1: "A thread switch on Montecito requires 15 cycles from initiation until the
/// background thread retires an instruction": every switch, by L3 miss or time-out,
/// spends exactly `switch_cycles` (15) cycles once it begins, which it does when the
/// leaving thread's L2D hits have returned their data (MD57).
#[test]
fn s2_4_1_every_thread_switch_takes_15_cycles() {
    let t = totals("chase", 2, 20_000_000, Skipping::On);
    let switches = t.get(Signal::ThreadSwitchesL3Miss) + t.get(Signal::ThreadSwitchesTimeout) + t.get(Signal::ThreadSwitchesHint);
    assert!(t.get(Signal::ThreadSwitchesL3Miss) > 0);
    // The run may end inside its last switch.
    let short = 15 * switches + t.get(Signal::ThreadSwitchL2dStall) - t.get(Signal::ThreadSwitchCycles);
    assert!(short <= 15, "{short} switch cycles missing");
}

/// MD57: a switch waits for the leaving thread's L2D hits to return their data. Each
/// iteration ends with an FP load (the L2D serves every one, in 6 cycles) that
/// nothing waits for, then a pause hint: the switch after it begins when the load's
/// data is back, a few cycles later (THREAD_SWITCH_CYCLE.L2D), and its 15 cycles
/// follow.
#[test]
fn md57_a_switch_waits_for_the_leaving_threads_l2d_returns() {
    use pmukit_sim::program::{Pattern, Program};
    let thread = || {
        let load = Op::FpLoad(Access { stream: 0, offset: 0, size: 8, use_next: false });
        let body = vec![Op::Int, load, Op::Pause, Op::Branch { target: 0x1_0000, when: Pattern::Loop }];
        common::one_phase(body, 1 << 16, DataStream::fixed(0x100_0000, Memory::Cacheable)).threads.remove(0)
    };
    let program = Program { threads: vec![thread(), thread()], timer: None };
    let t = Totals::of(machine::montecito(MontecitoConfig::new(2), program, Skipping::On), 1_000_000, |_| true);
    let (switches, waited) = (t.get(Signal::ThreadSwitchesHint), t.get(Signal::ThreadSwitchL2dStall));
    assert!(switches > 100);
    assert!(waited >= switches && waited < 6 * switches, "{waited} cycles waited in {switches} switches");
    assert!(15 * switches + waited - t.get(Signal::ThreadSwitchCycles) <= 15);
}

/// §2.4.1.2: `hint@pause` forces a switch to the other thread. The threads of `shared`
/// pause when they find the lock held; with one hardware thread nothing switches.
#[test]
fn s2_4_1_2_a_pause_hint_switches_threads() {
    let two = totals("shared", 2, 10_000_000, Skipping::On);
    assert!(two.get(Signal::ThreadSwitchesHint) > 0);
    assert_eq!(totals("shared", 1, 10_000_000, Skipping::On).get(Signal::ThreadSwitchesHint), 0);
}

/// ERRATA MMC17: two calls allocating 60 stacked registers each overflow the 96
/// physical ones by 24, spilled two a cycle; the inner return leaves the caller's frame
/// short of those 24, filled back two a cycle.
#[test]
fn mmc17_frames_beyond_96_stacked_registers_spill_and_fill_back() {
    use pmukit_sim::program::Op;
    let (a, b) = (0x1_0000, 0x2_0000);
    let body =
        vec![Op::Call { target: a, frame: 60 }, Op::Call { target: b, frame: 60 }, Op::Return { to: a + 4 }, Op::Return { to: 0x1_0008 }];
    let program = one_phase(body, 1);
    let t = Totals::of(machine::montecito(MontecitoConfig::new(1), program, Skipping::Off), u64::MAX, |_| true);
    assert_eq!((t.get(Signal::RseStores), t.get(Signal::RseSpillStallCycles)), (24, 12));
    assert_eq!((t.get(Signal::RseLoads), t.get(Signal::RseFillStallCycles)), (24, 12 + 3 * 5));
}

/// ERRATA MMC17 and §4.15 L1D_READ_MISSES.RSE_FILL: the fill of the 24 registers
/// reads their three 64-byte lines of the backing store through the L1D; the spill
/// wrote them through to the L2D, so each misses the L1D and waits the L2D's 5 cycles.
/// The next iteration's spill writes through the lines the fill brought, and its fill
/// hits them.
#[test]
fn mmc17_rse_fills_read_the_backing_store_through_the_l1d() {
    use pmukit_sim::program::Op;
    let (a, b) = (0x1_0000, 0x2_0000);
    let body =
        vec![Op::Call { target: a, frame: 60 }, Op::Call { target: b, frame: 60 }, Op::Return { to: a + 4 }, Op::Return { to: 0x1_0008 }];
    let t = Totals::of(machine::montecito(MontecitoConfig::new(1), one_phase(body, 2), Skipping::Off), u64::MAX, |_| true);
    assert_eq!(t.get(Signal::RseLoads), 48);
    assert_eq!(t.get(Signal::DCacheMisses), 3, "the first fill's three lines");
    assert_eq!(t.get(Signal::RseFillStallCycles), 2 * 12 + 3 * 5);
    let program = one_phase(vec![Op::Call { target: a, frame: 60 }, Op::Return { to: 0x1_0004 }], 2);
    let shallow = Totals::of(machine::montecito(MontecitoConfig::new(1), program, Skipping::Off), u64::MAX, |_| true);
    assert_eq!((shallow.get(Signal::RseLoads), shallow.get(Signal::DCacheMisses)), (0, 0), "96 registers hold one frame");
}

/// Table 2-8 note 4 and §4.15 L1D_READS_SET0: the L1D holds no floating-point data, so
/// an FP load is served by the L2D, M + 1 = 6 cycles for a hit (the machine's stall
/// cycles before the consumer; an integer L2D hit stalls it 5), where an integer load
/// that hits the L1D stalls its consumer none; an FP load neither misses the L1D nor
/// fills it.
#[test]
fn fp_loads_bypass_the_l1d_and_take_the_l2ds_latency_plus_one() {
    use pmukit_sim::program::{Access, Op, Pattern};
    let run = |load: fn(Access) -> Op| {
        let a = Access { stream: 0, offset: 0, size: 8, use_next: true };
        let program = one_phase(vec![load(a), Op::Int, Op::Branch { target: 0x1_0000, when: Pattern::Loop }], 10_000);
        Totals::of(machine::montecito(MontecitoConfig::new(1), program, Skipping::Off), u64::MAX, |_| true)
    };
    let (int, fp) = (run(Op::Load), run(Op::FpLoad));
    assert_eq!((fp.get(Signal::FpLoads), fp.get(Signal::Loads)), (10_000, 10_000));
    assert_eq!(fp.get(Signal::DCacheMisses), 0, "not an L1D miss");
    // The walk again after the loop's text faults in (MMC58) hits the L2D in both.
    assert_eq!(fp.get(Signal::L2DataHits), 9_999 + 1, "the first misses, the rest hit the L2D");
    assert_eq!(int.get(Signal::L2DataHits), 1, "the integer loads hit the L1D after the first");
    // Each FP load waits 6 cycles more than an L1D hit; the first misses in both.
    let extra = fp.cycles - int.cycles;
    assert_eq!(extra, 9_999 * 6 + 1, "{extra}");
}

/// ERRATA MMC64: the dispersal window is two bundles from the group's first slot, so a
/// group that starts where a load's stop left it inside a bundle holds 6 − its slot;
/// and dispersal splits after the bundle of a branch, taken or not (an implicit stop).
#[test]
fn mmc64_a_window_holds_two_bundles_and_a_branch_ends_it() {
    use pmukit_sim::program::{Access, DataStream, Memory, Op, Pattern};
    let run = |body: Vec<Op>| {
        let program = ia64::compiled(common::program_of(common::phase(body, 1000, vec![DataStream::fixed(0x100_0000, Memory::Cacheable)])));
        let mut groups = HashMap::new();
        let key = |s: &Span<MONTECITO>| {
            let g = |signal| s.signals.get(signal);
            let untaken = g(Signal::Branches) > 0 && g(Signal::BranchesTaken) == 0 && g(Signal::BranchMispredicts) == 0;
            (g(Signal::Instructions), g(Signal::LeadingSyllables) + g(Signal::ResteerSyllables), untaken, g(Signal::ImplicitStops))
        };
        common::profile(machine::montecito(MontecitoConfig::new(1), program, Skipping::Off), u64::MAX, key, &mut groups);
        groups
    };
    // A load whose value the next instruction uses, at the loop's head: its group
    // stops there, and the next starts at the slot after it, a window short.
    let load = Op::Load(Access { stream: 0, offset: 0, size: 8, use_next: true });
    let mut body = vec![load];
    body.extend(std::iter::repeat_n(Op::Int, 9));
    body.push(Op::Branch { target: 0x1_0000, when: Pattern::Loop });
    let groups = run(body);
    assert!(groups.keys().all(|&(issued, start, _, _)| issued == 0 || issued + start <= 6), "{groups:?}");
    let next = 0x1_0000 / pmukit_sim::program::INSN % 3 + 1;
    assert!(next < 3 && groups.contains_key(&(6 - next, next, false, 0)), "{groups:?}");
    // An instruction and a branch never taken end the loop head's bundle (its first
    // slot is other code); six more follow.
    let mut body = vec![Op::Int, Op::Branch { target: 0x2_0000, when: Pattern::Never }];
    body.extend(std::iter::repeat_n(Op::Int, 6));
    body.push(Op::Branch { target: 0x1_0000, when: Pattern::Loop });
    let groups = run(body);
    let with_branch: Vec<_> = groups.iter().filter(|(k, _)| k.2).collect();
    assert!(!with_branch.is_empty());
    for ((issued, start, _, implicit), cycles) in with_branch {
        assert_eq!((issued + start, *implicit), (3, 1), "{cycles} cycles: the group ends with the branch's bundle");
    }
}

/// ERRATA MD41, MMC79: ENCBR_MISPRED_DETAIL counts a group's branches "only if there is
/// a branch on port B0", and only a BBB bundle's first slot disperses a branch there
/// (Itanium 2's dispersal rules: an MIB's branch goes to B2, an MBB's to B1 and B2).
/// The layout gives branches their bundle's last slots, so three branches in a row,
/// a multiway branch, are a BBB: all three are encoded; one or two are not.
#[test]
fn md41_only_a_multiway_branchs_bbb_puts_a_branch_on_b0() {
    use pmukit_sim::program::{DataStream, Memory, Op, Pattern};
    let run = |branches: &[Op]| {
        let mut body = vec![Op::Int, Op::Int];
        body.extend_from_slice(branches);
        body.push(Op::Branch { target: 0x1_0000, when: Pattern::Loop });
        let program = ia64::compiled(common::program_of(common::phase(body, 1000, vec![DataStream::fixed(0x100_0000, Memory::Cacheable)])));
        let mut counts = HashMap::new();
        let key = |s: &Span<MONTECITO>| (s.signals.get(Signal::Branches), s.signals.get(Signal::EncodedBranches));
        common::profile(machine::montecito(MontecitoConfig::new(1), program, Skipping::Off), u64::MAX, key, &mut counts);
        counts.iter().fold((0, 0), |(all, encoded), (&(b, e), &cycles)| (all + b * cycles, encoded + e * cycles))
    };
    let never = |over| Op::Skip { over, when: Pattern::Never };
    // MIB: the loop's branch alone, on B2.
    assert_eq!(run(&[]), (1000, 0));
    // MBB: a test and the loop's branch, on B1 and B2.
    assert_eq!(run(&[never(1)]), (2000, 0));
    // BBB: two tests and the loop's branch; the first on B0.
    assert_eq!(run(&[never(2), never(1)]), (3000, 3000));
}
