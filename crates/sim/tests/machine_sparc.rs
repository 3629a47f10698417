//! The SPARC machines (T4, KT, Niagara) running programs: exact skipping, the
//! hierarchy's relations, and which T4 events the built-in workloads exercise.

mod common;

use std::collections::HashMap;

use pmukit_arch::Catalog;
use pmukit_sim::machine::run::Skipping;
use pmukit_sim::machine::sparc::{SparcChip, SparcConfig};
use pmukit_sim::machine::{self};
use pmukit_sim::models::t4;
use pmukit_sim::program::builtin;
use pmukit_sim::stream::{Signal, Signals, Totals, SPARC};

const WORKLOADS: [&str; 8] = ["compute", "branchy", "stream", "mixed", "fp", "chase", "os", "shared"];
const CHIPS: [SparcChip; 3] = [SparcChip::T4, SparcChip::Kt, SparcChip::Niagara];

fn totals(chip: SparcChip, workload: &str, threads: usize, cycles: u64, skipping: Skipping) -> Totals {
    let program = builtin::program(workload, 3, threads).unwrap();
    Totals::of(machine::sparc(SparcConfig::new(chip), program, skipping), cycles, |_| true)
}

/// Skipping proven repetition gives exactly the counts of simulating every iteration.
#[test]
fn skipping_is_exact_on_every_builtin_workload() {
    for chip in CHIPS {
        for workload in WORKLOADS {
            let threads = if workload == "mixed" { 2 } else { 1 };
            let on = totals(chip, workload, threads, 3_000_000, Skipping::On);
            let off = totals(chip, workload, threads, 3_000_000, Skipping::Off);
            assert_eq!(on, off, "{chip:?} {workload}");
        }
    }
}

/// Every miss is served by exactly one level; every walk ends in a fill or a trap and
/// makes one reference; memory reads cover the misses served by memory.
#[test]
fn the_hierarchys_relations_hold() {
    for chip in CHIPS {
        for workload in WORKLOADS {
            let t = totals(chip, workload, 1, 20_000_000, Skipping::On);
            let sum = |s: &[Signal]| s.iter().map(|&s| t.get(s)).sum::<u64>();
            let ctx = format!("{chip:?} {workload}");
            assert_eq!(
                t.get(Signal::ICacheMisses),
                sum(&[Signal::ICacheFillsFromCache, Signal::ICacheFillsFromLocalMemory, Signal::ICacheFillsFromRemote]),
                "{ctx}"
            );
            assert_eq!(
                t.get(Signal::DCacheMisses),
                sum(&[Signal::DCacheFillsFromCache, Signal::DCacheFillsFromLocalMemory, Signal::DCacheFillsFromRemote]),
                "{ctx}"
            );
            assert_eq!(t.get(Signal::ITlbMisses), sum(&Signal::ITLB_FILLS) + t.get(Signal::ITlbFillTraps), "{ctx}");
            assert_eq!(t.get(Signal::DTlbMisses), sum(&Signal::DTLB_FILLS) + t.get(Signal::DTlbFillTraps), "{ctx}");
            assert_eq!(
                t.get(Signal::ITlbMisses),
                sum(&[Signal::ITlbWalkRefsL2, Signal::ITlbWalkRefsL3, Signal::ITlbWalkRefsMemory]),
                "{ctx}"
            );
            assert_eq!(
                t.get(Signal::DTlbMisses),
                sum(&[Signal::DTlbWalkRefsL2, Signal::DTlbWalkRefsL3, Signal::DTlbWalkRefsMemory]),
                "{ctx}"
            );
            let from_memory = sum(&[
                Signal::ICacheFillsFromLocalMemory,
                Signal::ICacheFillsFromRemote,
                Signal::DCacheFillsFromLocalMemory,
                Signal::DCacheFillsFromRemote,
                Signal::ITlbWalkRefsMemory,
                Signal::DTlbWalkRefsMemory,
                Signal::StoresLocalMemory,
                Signal::StoresRemoteMemory,
                Signal::L2PrefetchLocalMemory,
                Signal::L2PrefetchRemoteMemory,
            ]);
            // Lines from memory or from another socket's cache (MSP17) are at most the
            // memory reads and the cache-to-cache transfers.
            let reads = t.get(Signal::MemoryReads) + t.get(Signal::CacheToCacheFills);
            assert!(reads >= from_memory, "{ctx}: {reads} < {from_memory}");
            assert!(t.get(Signal::StoresLocalC2c) + t.get(Signal::StoresRemoteC2c) <= t.get(Signal::CacheToCacheFills), "{ctx}");
            // Stores that reach the L2 are at most the stores (membars count as stores
            // and reach nothing; a block store counts once).
            let at_l2 = sum(&[
                Signal::StoresHitL2,
                Signal::StoresHitL3,
                Signal::StoresLocalC2c,
                Signal::StoresRemoteC2c,
                Signal::StoresLocalMemory,
                Signal::StoresRemoteMemory,
            ]);
            assert!(at_l2 <= t.get(Signal::Stores) + t.get(Signal::Atomics), "{ctx}");
            assert!(t.get(Signal::DCacheMisses) <= t.get(Signal::Loads), "{ctx}");
        }
    }
}

/// T4 selections no system counts, by the words of the specification (PRM 10.1,
/// Table 10-2): they leave the denominator of the coverage below (issue 43).
const T4_CANNOT: &[(&str, &str)] = &[(
    "PICK.PICK_3",
    "sl 1: \"Sel-0-wait, sel-0-ready, sel-1, and sel-2 form a disjoint set of events whose union encompasses all cycles\": select sends at most two instructions a cycle towards pick",
)];

/// T4 selections that can count but count nothing on any built-in workload, with the
/// reason (docs/t4-model.md lists the same).
const T4_NEVER: &[(&str, &str)] = &[
    ("INSTR_SPECIAL.SW_COUNT", "the program model has no software count marker (sethi %hi(fc000), %g0), so no program uses one"),
    ("IC_MTAG.MTAG_MISS_PTAG_HIT", "needs two virtual addresses of one line; the program model maps every address to itself"),
    ("IC_MTAG.WAY_MISMATCH", "needs two lines of a set with one microtag, the older one fetched: the programs' code has none"),
    ("IC_MTAG.MTAG_MISS_PTAG_HIT_OR_WAY_MISMATCH", "both of the above"),
    ("TAG_WAIT.PQ", "the core issues in order: nothing waits in a pick queue (MSP11)"),
    ("DATA_PREFETCH.L3_DROP", "the L3's queues serve eight cores; one core has at most 8 misses outstanding (its L2 fill buffer, MSP23)"),
];

#[test]
fn t4_selections_the_builtin_workloads_exercise() {
    let cat = Catalog::builtin();
    let pmu = cat.pmu("sparc-t4").unwrap();
    let mut seen = HashMap::new();
    // Eight strands, as `pmu stat` runs a T4 core: their code and data share the
    // core's TLBs and caches.
    for workload in WORKLOADS {
        let program = builtin::program(workload, 3, 8).unwrap();
        let key = |s: &pmukit_sim::stream::Span<{ pmukit_sim::stream::SPARC }>| (s.thread, s.signals);
        common::profile(machine::sparc(SparcConfig::new(SparcChip::T4), program, Skipping::On), 20_000_000, key, &mut seen);
    }
    let all = common::selections(pmu);
    let span = |thread, signals| pmukit_sim::stream::Span { thread, signals, ..pmukit_sim::stream::Span::new(1, 0) };
    let mut zero = Vec::new();
    for (name, code, mask) in &all {
        // What the strand running a span counts, and another (the others with work
        // count alike: they wait for their turn).
        let strands = |&(thread, signals): &(u8, Signals<SPARC>)| {
            let other = usize::from(thread == 0);
            t4::per_cycle(pmu, *code, *mask, usize::from(thread), &span(thread, signals))
                + t4::per_cycle(pmu, *code, *mask, other, &span(thread, signals))
        };
        let count: u64 = seen.iter().map(|(key, c)| strands(key) * c).sum();
        if count == 0 {
            zero.push(name.clone());
        }
    }
    eprintln!("{} of {} T4 selections count zero: {zero:#?}", zero.len(), all.len());
    let cannot: Vec<&str> = T4_CANNOT.iter().map(|(n, _)| *n).collect();
    let impossible: Vec<&&str> = cannot.iter().filter(|c| !zero.iter().any(|z| z == *c)).collect();
    assert!(impossible.is_empty(), "the specification says {impossible:?} count nothing, but the model counts them");
    // Issue 43's bar: at most 5 % of the selections that can count count zero.
    let countable = all.len() - cannot.len();
    assert!(20 * (zero.len() - cannot.len()) <= countable, "{} of {countable} countable selections count zero", zero.len() - cannot.len());
    let known: Vec<&str> = T4_NEVER.iter().chain(T4_CANNOT).map(|(n, _)| *n).collect();
    let unexplained: Vec<&String> = zero.iter().filter(|z| !known.contains(&z.as_str())).collect();
    assert!(unexplained.is_empty(), "count zero without a documented reason: {unexplained:?}");
    let stale: Vec<&&str> = known.iter().filter(|k| !zero.iter().any(|z| z == *k)).collect();
    assert!(stale.is_empty(), "documented as never counting, but counts: {stale:?}");
}

#[test]
fn a_machine_config_overrides_parameters_and_the_machine_follows() {
    let base = SparcConfig::new(SparcChip::T4);
    let cfg = base.with_overrides("[l2]\nsize = 262144\n[core]\nmemory_cycles = 500\nsockets = 4\nstore_queue = 4\n", "t4.toml").unwrap();
    assert_eq!((cfg.l2.size, cfg.memory_cycles, cfg.sockets), (262_144, 500, 4));
    assert_eq!(cfg.store_queue.map(|q| (q.entries, q.commit_cycles)), Some((4, 8)));
    assert_eq!(cfg.l3, base.l3, "tables not given keep their values");
    let run = |cfg: SparcConfig| {
        let program = builtin::program("chase", 3, 1).unwrap();
        Totals::of(machine::sparc(cfg, program, Skipping::On), 20_000_000, |_| true)
    };
    let slow = base.with_overrides("[core]\nmemory_cycles = 2000\nremote_cycles = 3000\n", "t").unwrap();
    assert!(run(slow).get(Signal::Instructions) < run(base).get(Signal::Instructions), "slower memory, fewer instructions");
}

#[test]
fn a_bad_machine_config_names_the_key_and_the_valid_range() {
    let err = |chip, text: &str| SparcConfig::new(chip).with_overrides(text, "m.toml").unwrap_err().to_string();
    assert_eq!(err(SparcChip::T4, "[core]\nsockets = 9\n"), "m.toml: core.sockets = 9: must be in 1..=8");
    assert_eq!(err(SparcChip::T4, "[l2]\nsize = 8192\n"), "m.toml: l2.size = 8192: must be in 16384..=67108864");
    assert!(err(SparcChip::T4, "[dtlb]\nways = 3\n").contains("[dtlb]: TLB ways = 3"));
    assert_eq!(err(SparcChip::Niagara, "[l3]\nways = 4\n"), "m.toml: [l3]: niagara has no such structure (its L2 is the last level)");
    assert!(err(SparcChip::Kt, "[micro_itlb]\nentries = 4\n").contains("unknown field `micro_itlb`"));
    assert!(err(SparcChip::T4, "[core\n").contains("line 1"));
    assert_eq!(err(SparcChip::T4, "[memory]\nwrite_queue = 0\n"), "m.toml: memory.write_queue = 0: must be in 1..=64");
    assert_eq!(
        err(SparcChip::Kt, "[memory]\nbanks = 6\n"),
        "m.toml: [memory]: banks = 6: must be a power of two in 1..=64 (the bank is chosen by address bits)"
    );
    assert!(err(SparcChip::Niagara, "[memory]\nranks = 2\n").contains("unknown field `ranks`"));
    assert_eq!(err(SparcChip::T4, "[core]\nstore_queue = 0\n"), "m.toml: core.store_queue = 0: must be in 1..=64");
    // An outer line covers at most 4 L1 lines: its eviction or snoop invalidates
    // them in one cycle (a 4096-byte L2 line counted 16 invalidations in one).
    assert_eq!(
        err(SparcChip::T4, "[l2]\nline = 4096\n"),
        "m.toml: [l2]: line = 4096: at most 4 times icache.line = 32 (128), as one evicted or snooped line invalidates every icache line it covers in a cycle"
    );
    assert!(err(SparcChip::Kt, "[dcache]\nline = 8\n").contains("[l2]: line = 64: at most 4 times dcache.line = 8 (32)"));
    assert!(err(SparcChip::T4, "[l3]\nline = 256\n").starts_with("m.toml: [l3]: line = 256"));
    assert!(SparcConfig::new(SparcChip::Kt).with_overrides("[l2]\nsize = 6291456\nline = 64\n", "m.toml").is_ok());
    let not_a_switch = err(SparcChip::T4, "[core]\nstrands_at_once = 3\n");
    assert!(not_a_switch.contains("expected a boolean") && not_a_switch.contains("strands_at_once = 3"), "{not_a_switch}");
    assert_eq!(
        err(SparcChip::Kt, "[core]\nstore_commit_cycles = 4\n"),
        "m.toml: [core.store_queue]: sparc-kt has no such structure (its store buffer holds stores until they are written)"
    );
}

/// The memory controllers: a stream that misses to memory waits longer for its banks
/// when each access must open a row, and the reads' latencies grow by the waits.
#[test]
fn memory_banks_that_take_longer_slow_a_stream_down() {
    use pmukit_sim::program::{Access, DataStream, Memory, Op, Pattern};
    let base = SparcConfig::new(SparcChip::T4);
    let run = |text: &str| {
        let cfg = base.with_overrides(text, "m.toml").unwrap();
        // A read a line over 64 MB, none waited for: every one misses to memory, the
        // misses overlap, and the lines of a bank's row come back to it in turn.
        let lines = DataStream {
            base: 0x1000_0000,
            stride: 64,
            footprint: 64 << 20,
            memory: Memory::Cacheable,
            page: 4 << 20,
            shared: false,
            nullable: false,
            fresh: false,
        };
        let load = Op::Load(Access { stream: 0, offset: 0, size: 8, use_next: false });
        let program = common::one_phase(vec![load, Op::Int, Op::Branch { target: 0x1_0000, when: Pattern::Loop }], 1 << 20, lines);
        Totals::of(machine::sparc(cfg, program, Skipping::On), 20_000_000, |_| true).get(Signal::Instructions)
    };
    let open_rows = run("[memory]\nrow_hit_cycles = 21\n");
    let closed_rows = run("[memory]\nrow_hit_cycles = 144\n");
    assert!(closed_rows < open_rows, "{closed_rows} instructions with every access opening a row, {open_rows} with open rows");
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]

    /// Whatever a machine configuration says, it is refused with a reason or gives a
    /// machine that runs.
    #[test]
    fn arbitrary_machine_configs_are_refused_or_run(
        table in "(icache|dcache|l2|l3|itlb|dtlb|core|memory|btac)",
        key in "(size|ways|line|entries|replacement|write_allocate|sockets|store_buffer|memory_cycles|l2_cycles|fp_cycles|fill_trap_cycles|mispredict_cycles|banks|bank_cycles|row_hit_cycles|write_queue)",
        value in "(0|1|3|8|16|64|100|4096|16384|65536|4194304|1073741824|99999999999|-1|true|\"lru\"|\"random\"|\"fifo\"|1.5)",
        chip in 0usize..3,
    ) {
        let text = format!("[{table}]\n{key} = {value}\n");
        match SparcConfig::new(CHIPS[chip]).with_overrides(&text, "m.toml") {
            Err(e) => proptest::prop_assert!(e.to_string().starts_with("m.toml"), "{e}"),
            Ok(cfg) => {
                let program = builtin::program("mixed", 1, 2).unwrap();
                let t = Totals::of(machine::sparc(cfg, program, Skipping::On), 200_000, |_| true);
                proptest::prop_assert_eq!(t.cycles, 200_000);
            }
        }
    }
}

/// MSP14: what the memory controllers report rides on the cycles that carry memory
/// transactions, and never exceeds them: a read's bank wait only with a read, a
/// writeback-buffer hit per read at most, a starved write per write at most.
#[test]
fn memory_controller_waits_ride_on_their_transactions() {
    for workload in ["stream", "fp", "os"] {
        let program = builtin::program(workload, 3, 1).unwrap();
        let mut left = 20_000_000u64;
        let (mut read_waits, mut reads) = (0u64, 0u64);
        for block in machine::sparc(SparcConfig::new(SparcChip::T4), program, Skipping::On) {
            for span in &block.body {
                let q = span.queues;
                let (r, w) = (span.signals.get(Signal::MemoryReads), span.signals.get(Signal::MemoryWrites));
                assert!(q.read_cycles == 0 || r > 0, "{workload}: a read wait without a read: {span:?}");
                assert!(q.write_cycles == 0 || w > 0, "{workload}: a write wait without a write: {span:?}");
                assert!(u64::from(q.writeback_hits) <= r && u64::from(q.writes_starved) <= w, "{workload}: {span:?}");
                read_waits += u64::from(q.read_cycles) * span.cycles * block.repeat;
                reads += r * span.cycles * block.repeat;
            }
            left = left.saturating_sub(block.cycles_per_iteration() * block.repeat);
            if left == 0 {
                break;
            }
        }
        assert!(reads > 0, "{workload}");
        if workload == "stream" {
            assert!(read_waits > 0, "streaming reads meet busy banks");
        }
    }
}

/// MSP17: another core shares the `shared` program's lines. On T4 its stores snoop
/// this core's L1 data lines away and take the line into its own L2, from which this
/// core's next store gets it cache to cache, from this socket or (for a line homed on
/// the other socket) from there. On T3 (KT) the L2 is the chip's: only lines of the
/// other node come cache to cache. One core alone has none of it.
#[test]
fn msp17_another_core_snoops_and_hands_over_shared_lines() {
    let run = |chip, text: &str| {
        let cfg = SparcConfig::new(chip).with_overrides(text, "m.toml").unwrap();
        Totals::of(machine::sparc(cfg, builtin::program("shared", 3, 1).unwrap(), Skipping::On), 20_000_000, |_| true)
    };
    let t4 = run(SparcChip::T4, "");
    for s in [Signal::DCacheSnoopInvalidations, Signal::StoresLocalC2c, Signal::StoresRemoteC2c, Signal::CacheToCacheFills] {
        assert!(t4.get(s) > 0, "T4 {s:?}");
    }
    let kt = run(SparcChip::Kt, "");
    assert!(kt.get(Signal::CacheToCacheFills) > 0 && kt.get(Signal::DCacheSnoopInvalidations) > 0);
    assert_eq!(kt.get(Signal::StoresLocalC2c), 0, "a shared L2 hands nothing over within the chip");
    let alone = run(SparcChip::T4, "[core]\ncores = 1\nsockets = 1\n");
    let met: u64 = [Signal::DCacheSnoopInvalidations, Signal::CacheToCacheFills].iter().map(|&s| alone.get(s)).sum();
    assert_eq!(met, 0);
    assert!(alone.get(Signal::Instructions) > t4.get(Signal::Instructions), "bouncing lines cost time");
}

/// A loop that stores 8 bytes, runs `between` integer instructions and loads them back,
/// on `chip`, 1000 times.
fn store_then_load(chip: SparcChip, between: usize) -> Totals {
    store_then_wider_load(chip, between, 8)
}

/// A loop that stores `stored` bytes at offset 1 of a word, runs `between` integer
/// instructions and loads the 8-byte word holding them, on `chip`, 1000 times.
fn store_then_wider_load(chip: SparcChip, between: usize, stored: u8) -> Totals {
    use pmukit_sim::program::{Access, DataStream, Memory, Op, Pattern};
    let offset = u32::from(stored < 8);
    let store = Access { stream: 0, offset, size: stored, use_next: false };
    let mut body = vec![Op::Store(store)];
    body.extend(std::iter::repeat_n(Op::Int, between));
    body.push(Op::Load(Access { offset: 0, size: 8, use_next: true, ..store }));
    body.push(Op::Branch { target: 0x1_0000, when: Pattern::Always });
    let program = common::one_phase(body, 1000, DataStream::fixed(0x100_0000, Memory::Cacheable));
    Totals::of(machine::sparc(SparcConfig::new(chip), program, Skipping::Off), u64::MAX, |_| true)
}

/// MSP18: on T4 a load finds the store it reads in the store buffer until the store
/// commits, 8 cycles after it issued, and in the store queue from then until it is
/// written; KT's store buffer holds a store until it is written.
#[test]
fn msp18_a_load_finds_a_committed_store_in_the_store_queue() {
    let hits = |t: &Totals| [Signal::StoreBufferFullRawHits, Signal::StoreQueueFullRawHits].map(|s| t.get(s));
    assert_eq!(hits(&store_then_load(SparcChip::T4, 2)), [1000, 0], "one cycle after the store");
    // 15 cycles after it: every load but the first, whose code's fetch misses outlast
    // the store's write.
    assert_eq!(hits(&store_then_load(SparcChip::T4, 30)), [0, 999], "15 cycles after it");
    // KT issues one instruction a cycle and has no store queue: 8 cycles after it the
    // store is still in the store buffer, being written.
    assert_eq!(hits(&store_then_load(SparcChip::Kt, 8)), [1000, 0], "KT");
}

/// MSP18, TABLE 10-2 sl 19 mask 08 ("Partial RAW hit in store queue"): a load that
/// overlaps a store without being covered by it (a word read after a byte of it was
/// set) partially hits the store buffer while the store has not committed, and the
/// store queue once it has and waits there to be written; either way it waits for the
/// store to be written, then reads the cache.
#[test]
fn msp18_a_wider_load_after_its_store_committed_partially_hits_the_store_queue() {
    let hits = |t: &Totals| [Signal::StoreBufferPartialRawHits, Signal::StoreQueuePartialRawHits].map(|s| t.get(s));
    assert_eq!(hits(&store_then_wider_load(SparcChip::T4, 2, 1)), [1000, 0], "one cycle after the store");
    // 15 cycles after it: every load but the first, whose code's fetch misses outlast
    // the store's write.
    assert_eq!(hits(&store_then_wider_load(SparcChip::T4, 30, 1)), [0, 999], "15 cycles after it");
    assert_eq!(hits(&store_then_wider_load(SparcChip::Kt, 8, 1)), [1000, 0], "KT has no store queue");
}

/// MSP18: stores to memory fill the store queue, then the store buffer behind it;
/// select then waits for a buffer entry, and, the oldest buffered store having
/// committed, for a queue entry.
#[test]
fn msp18_select_waits_for_the_store_queue_behind_a_full_store_buffer() {
    use pmukit_sim::program::{Access, DataStream, Memory, Op};
    let store = |offset| Op::Store(Access { stream: 0, offset, size: 8, use_next: false });
    // Four stores a line over a 64 MB buffer: every line misses to memory.
    let lines = DataStream { stride: 64, footprint: 64 << 20, ..DataStream::fixed(0x1000_0000, Memory::Cacheable) };
    let program = common::one_phase(vec![store(0), store(8), store(16), store(24), Op::Int], 100_000, lines);
    let t = Totals::of(machine::sparc(SparcConfig::new(SparcChip::T4), program, Skipping::Off), u64::MAX, |_| true);
    let (sb, stq) = (t.get(Signal::StoreBufferWaitCycles), t.get(Signal::StoreQueueWaitCycles));
    assert!(stq > t.cycles / 2, "the queue is the bottleneck: {stq} of {} cycles", t.cycles);
    assert!(stq <= sb, "queue waits are select's buffer waits: {stq} > {sb}");
    let kt = Totals::of(
        machine::sparc(SparcConfig::new(SparcChip::Kt), common::one_phase(vec![store(0), Op::Int], 10_000, lines), Skipping::Off),
        u64::MAX,
        |_| true,
    );
    assert!(kt.get(Signal::StoreBufferWaitCycles) > 0);
    assert_eq!(kt.get(Signal::StoreQueueWaitCycles), 0, "KT has no store queue");
}

/// MSP19: loads that miss to memory and that nothing waits for fill the T4 L2's miss
/// buffer (16 entries): further misses wait for an entry, and a prefetch into the L2
/// that would miss then is dropped, as is one into the L1 while other strands run. A
/// larger buffer (a machine config) fills less. The fill buffer is made as large as
/// the miss buffer, so that the miss buffer alone holds misses back (with its 8
/// entries it would hold them first, MSP23).
#[test]
fn msp19_a_full_l2_miss_buffer_holds_misses_back_and_drops_l2_prefetches() {
    use pmukit_sim::program::{Access, DataStream, Memory, Op, Pattern};
    let at = |stream, offset| Access { stream, offset, size: 8, use_next: false };
    let far = |base| DataStream { stride: 64, footprint: 64 << 20, ..DataStream::fixed(base, Memory::Cacheable) };
    // Loads of one stream, and the stores of another, prefetched for writing ahead.
    let body =
        vec![Op::Load(at(0, 0)), Op::Prefetch(at(1, 256)), Op::Store(at(1, 0)), Op::Branch { target: 0x1_0000, when: Pattern::Always }];
    let run = |cfg: SparcConfig| {
        let program = common::program_of(common::phase(body.clone(), 20_000, vec![far(0x1000_0000), far(0x5000_0000)]));
        Totals::of(machine::sparc(cfg, program, Skipping::Off), u64::MAX, |_| true)
    };
    let t4 = SparcConfig::new(SparcChip::T4).with_overrides("[core]\nl2_fill_buffer = 16\n", "t").unwrap();
    let small = run(t4.clone());
    let (full, drops) = (small.get(Signal::L2MissBufferFull), small.get(Signal::L2PrefetchDrops));
    assert!(full > 1000 && drops > 1000, "full {full}, drops {drops}");
    let large = run(t4.with_overrides("[core]\nl2_miss_buffer = 64\nl2_fill_buffer = 64\n", "t").unwrap());
    assert!(large.get(Signal::L2PrefetchDrops) < drops, "a larger buffer drops fewer");
    assert!(large.cycles < small.cycles, "and waits less");
    let kt = run(SparcConfig::new(SparcChip::Kt));
    assert_eq!((kt.get(Signal::L2MissBufferFull), kt.get(Signal::L2PrefetchDrops)), (0, 0), "KT: not modelled");
    // A prefetch into the L1 (of a stream nothing stores to) is dropped too, but only
    // while other strands run (TABLE 10-2 sl 18 mask 04).
    let reads = vec![Op::Load(at(0, 0)), Op::Prefetch(at(0, 256)), Op::Branch { target: 0x1_0000, when: Pattern::Always }];
    let run_reads = |cfg: SparcConfig| {
        let program = common::program_of(common::phase(reads.clone(), 20_000, vec![far(0x1000_0000)]));
        Totals::of(machine::sparc(cfg, program, Skipping::Off), u64::MAX, |_| true)
    };
    let eight = run_reads(t4.clone());
    assert!(eight.get(Signal::SwPrefetchDropsMissBufferFull) > 1000, "{}", eight.get(Signal::SwPrefetchDropsMissBufferFull));
    assert_eq!(eight.get(Signal::L2PrefetchDrops), 0, "not a prefetch into the L2");
    let alone = run_reads(SparcConfig { strands: 1, ..t4 });
    assert_eq!(alone.get(Signal::SwPrefetchDropsMissBufferFull), 0, "one strand: never dropped");
}

/// MSP21: a process's first fetch of each code page (base pages) traps (demand
/// paging); its later ones, and the kernel's and large pages', find the TTE in the TSB.
#[test]
fn msp21_a_processs_first_fetch_of_a_code_page_traps_once() {
    use pmukit_sim::program::{DataStream, Memory, Op, Pattern, Phase, Program};
    use pmukit_sim::stream::Privilege;
    // Straight-line code over three 8 KB pages, then back to the start.
    let mut body = vec![Op::Int; 3 * 2048 + 10];
    body.push(Op::Branch { target: 0x1_0000, when: Pattern::Always });
    let user = common::phase(body, 2, vec![DataStream::fixed(0x100_0000, Memory::Cacheable)]);
    let kernel = Phase { privilege: Privilege::KERNEL, ..user.clone() };
    let traps = |phases: Vec<Phase>| {
        let program = Program { threads: vec![Box::new(phases.into_iter())], timer: None };
        Totals::of(machine::sparc(SparcConfig::new(SparcChip::T4), program, Skipping::Off), u64::MAX, |_| true).get(Signal::ITlbFillTraps)
    };
    assert_eq!(traps(vec![user.clone(), user.clone()]), 4, "the four pages the code touches, once");
    assert_eq!(traps(vec![Phase { context: 2, ..user.clone() }, user.clone()]), 8, "each address space maps its own");
    assert_eq!(traps(vec![kernel]), 0);
    assert_eq!(traps(vec![Phase { code_page: Some(4 << 20), ..user }]), 0);
}

/// Loads of `lines` lines 64 bytes apart over a 64 MB buffer, four an iteration that
/// nothing waits for (each misses to memory), after `dirtying` iterations of stores
/// to another 256 KB buffer, on the T4 with `text` as its machine config.
fn misses_after_stores(text: &str, dirtying: u64, lines: u64) -> Totals {
    use pmukit_sim::program::{Access, DataStream, Memory, Op, Program};
    let at = |stream, offset| Access { stream, offset, size: 8, use_next: false };
    let over = |base, footprint| DataStream { stride: 64, footprint, ..DataStream::fixed(base, Memory::Cacheable) };
    let mut phases = Vec::new();
    if dirtying > 0 {
        let stores = vec![Op::Store(at(0, 0)), Op::Store(at(0, 32)), Op::Int];
        phases.push(common::phase(stores, dirtying, vec![over(0x2000_0000, 256 << 10)]));
    }
    let loads = vec![Op::Load(at(0, 0)), Op::Load(at(0, 64)), Op::Load(at(0, 128)), Op::Load(at(0, 192)), Op::Int];
    let far = DataStream { stride: 256, ..over(0x1000_0000, 64 << 20) };
    phases.push(common::phase(loads, lines / 4, vec![far]));
    let program = Program { threads: vec![Box::new(phases.into_iter())], timer: None };
    let cfg = SparcConfig::new(SparcChip::T4).with_overrides(text, "t").unwrap();
    Totals::of(machine::sparc(cfg, program, Skipping::Off), u64::MAX, |_| true)
}

/// MSP15: a write-back holds an entry of its MCU's write queue until its bank takes
/// it; one that finds every entry taken waits for the first to free, and the L2 miss
/// whose victim it is waits with it. Niagara's L2 (no L3) full of dirty lines, then
/// loads that displace them: with one entry and slow banks the loads take longer than
/// with 64 entries, and the writes starve; the same run counts the same instructions.
#[test]
fn msp15_a_full_write_queue_holds_back_the_misses_whose_victims_wait_for_it() {
    use pmukit_sim::program::{Access, DataStream, Memory, Op, Program};
    let run = |text: &str| {
        let at = |offset| Access { stream: 0, offset, size: 8, use_next: false };
        let over = |base, footprint| DataStream { stride: 64, footprint, ..DataStream::fixed(base, Memory::Cacheable) };
        let stores = common::phase(vec![Op::Store(at(0)), Op::Int], 65_536, vec![over(0x2000_0000, 4 << 20)]);
        let loads = common::phase(vec![Op::Load(at(0)), Op::Int], 65_536, vec![over(0x1000_0000, 64 << 20)]);
        let program = Program { threads: vec![Box::new(vec![stores, loads].into_iter())], timer: None };
        let cfg = SparcConfig::new(SparcChip::Niagara).with_overrides(text, "m").unwrap();
        let mut starved = 0;
        let blocks = machine::sparc(cfg, program, Skipping::Off).inspect(|b| {
            starved += b.body.iter().map(|s| u64::from(s.queues.writes_starved)).sum::<u64>() * b.repeat;
        });
        let t = Totals::of(blocks, u64::MAX, |_| true);
        (t, starved)
    };
    let (one, starved) = run("[memory]\nwrite_queue = 1\nbank_cycles = 1000\n");
    let (many, none) = run("[memory]\nwrite_queue = 64\nbank_cycles = 1000\n");
    assert_eq!(one.get(Signal::Instructions), many.get(Signal::Instructions));
    assert!(one.get(Signal::MemoryWrites) > 10_000, "{}", one.get(Signal::MemoryWrites));
    assert!(starved > 1_000 && none == 0, "starved {starved}, {none}");
    assert!(one.cycles > many.cycles + starved * 100, "{} cycles against {}", one.cycles, many.cycles);
}

/// MSP23: an L2 miss holds one of the fill buffer's 8 entries from its request to the
/// L3 until its line is in the L2; the ninth miss outstanding finds them taken (TABLE
/// 10-2 sl 24 mask 04, "L2 fill buffer full") and its request waits for the first to
/// free while it holds its miss-buffer entry. A fill buffer as large as the miss
/// buffer never fills before it.
#[test]
fn msp23_the_ninth_miss_outstanding_finds_the_l2_fill_buffer_full() {
    let eight = misses_after_stores("", 0, 20_000);
    let full = eight.get(Signal::L2FillBufferFull);
    assert!(full > 10_000, "most misses wait for a fill entry: {full}");
    let sixteen = misses_after_stores("[core]\nl2_fill_buffer = 16\n", 0, 20_000);
    assert_eq!(sixteen.get(Signal::L2FillBufferFull), 0);
    assert!(sixteen.get(Signal::L2MissBufferFull) > 0, "then the miss buffer holds them back");
    assert!(sixteen.cycles < eight.cycles, "twice the misses in flight");
}

/// MSP24: the dirty line a miss displaces leaves the L2 when the miss looks it up and
/// holds one of the 8 write-back buffer entries until the L3 has taken it (45
/// cycles); misses that each displace a dirty line, more than 8 within that time,
/// find them all taken (TABLE 10-2 sl 24 mask 08) and wait. Clean victims take none.
#[test]
fn msp24_misses_displacing_dirty_lines_in_a_burst_find_the_write_back_buffer_full() {
    // 8,192 store iterations: the L2's 4,096 lines all hold dirty data of the buffer.
    let dirty = misses_after_stores("", 8192, 4096);
    let full = dirty.get(Signal::L2WritebackBufferFull);
    assert!(full > 100, "the loads' misses come 16 at a time: {full}");
    assert!(full <= dirty.get(Signal::L2DirtyEvictions));
    assert_eq!(misses_after_stores("", 0, 4096).get(Signal::L2WritebackBufferFull), 0, "clean victims");
    assert_eq!(misses_after_stores("[core]\nl2_writeback_buffer = 64\n", 8192, 4096).get(Signal::L2WritebackBufferFull), 0);
}

/// MSP25: a fill holds the L2's pipeline for its last 2 cycles, ahead of the core's
/// requests; a request arriving then waits for it, a pipeline stall (TABLE 10-2 sl 24
/// mask 20). Without fills nothing stalls; KT's L2 is not modelled.
#[test]
fn msp25_a_request_arriving_while_a_fill_holds_the_l2_pipeline_stalls() {
    use pmukit_sim::program::{Access, DataStream, Memory, Op};
    let at = |stream, offset| Access { stream, offset, size: 8, use_next: false };
    let over = |base, stride, footprint| DataStream { stride, footprint, ..DataStream::fixed(base, Memory::Cacheable) };
    // Loads of two streams that nothing waits for, and a store to the second (its L1
    // is write-through: every store reaches the L2). `far` streams miss the L3.
    let run = |chip, far: bool| {
        let footprint = if far { 8 << 20 } else { 16 << 10 };
        let body = vec![Op::Load(at(0, 0)), Op::Load(at(1, 0)), Op::Store(at(1, 8)), Op::Int];
        let streams = vec![over(0x1000_0000, 32, footprint), over(0x2000_0000, 40, footprint / 4)];
        let program = common::program_of(common::phase(body, 100_000, streams));
        Totals::of(machine::sparc(SparcConfig::new(chip), program, Skipping::Off), u64::MAX, |_| true)
    };
    let t4 = run(SparcChip::T4, true);
    let stalls = t4.get(Signal::L2PipeStalls);
    assert!(stalls > 100 && stalls <= t4.get(Signal::Stores) + t4.get(Signal::DCacheMisses), "{stalls}");
    // Streams that stay in the L1 and the L2 fill lines in their first lap only.
    let near = run(SparcChip::T4, false);
    assert!(near.get(Signal::L2PipeStalls) * 100 < stalls, "{} stalls with fills in the first lap only", near.get(Signal::L2PipeStalls));
    assert_eq!(run(SparcChip::Kt, true).get(Signal::L2PipeStalls), 0, "KT: not modelled");
}

/// TABLE 10-2 sl 24: each L2 event counts its own signal, and a mask of several bits
/// their sum ("Not all events are mutually exclusive": a miss may find several buffers
/// full and stall the pipeline too).
#[test]
fn table_10_2_sl_24_counts_each_l2_buffer_and_the_pipeline_stalls() {
    let cat = Catalog::builtin();
    let pmu = cat.pmu("sparc-t4").unwrap();
    let signals = [
        (0x04, Signal::L2FillBufferFull),
        (0x08, Signal::L2WritebackBufferFull),
        (0x10, Signal::L2MissBufferFull),
        (0x20, Signal::L2PipeStalls),
    ];
    let mut all: Signals = Signals::default();
    for (mask, signal) in signals {
        all.set(signal, 1);
        let span: pmukit_sim::stream::Span =
            pmukit_sim::stream::Span { signals: Signals::default().with(signal, 1), ..pmukit_sim::stream::Span::new(1, 0) };
        for (other, _) in signals {
            assert_eq!(t4::per_cycle(pmu, 24, other, 0, &span), u64::from(other == mask), "{signal:?} under mask {other:#x}");
        }
    }
    let span = pmukit_sim::stream::Span { signals: all, ..pmukit_sim::stream::Span::new(1, 0) };
    assert_eq!(t4::per_cycle(pmu, 24, 0x3C, 0, &span), 4);
}

/// MSP26, TABLE 10-2 sl 5 mask 04 ("Icache miss and remote L3 cache or remote memory
/// hit"): code on a page the phase also maps as shared data (a JIT's code cache) is
/// shared memory, its 8 KB pages spread over the sockets (MSP4); on a page of another
/// socket an I-cache miss is served from remote memory. Other code, and every page on
/// one socket, is local.
#[test]
fn msp26_code_in_shared_memory_on_another_socket_is_fetched_from_remote_memory() {
    use pmukit_sim::program::{DataStream, Memory, Op, Pattern, Phase};
    let remote_fills = |entry: u64, shared: bool, text: &str| {
        let mut body = vec![Op::Int; 600];
        body.push(Op::Branch { target: entry, when: Pattern::Always });
        let code_cache = DataStream { shared, ..DataStream::fixed(entry, Memory::Cacheable) };
        let phase = Phase { entry, ..common::phase(body, 100, vec![code_cache]) };
        let cfg = SparcConfig::new(SparcChip::T4).with_overrides(text, "t").unwrap();
        let t = Totals::of(machine::sparc(cfg, common::program_of(phase), Skipping::Off), u64::MAX, |_| true);
        (t.get(Signal::ICacheFillsFromRemote), t.get(Signal::ICacheMisses))
    };
    // 8 KB page 9 is on socket 1 of two, page 8 on socket 0. Each 64-byte L3 line
    // comes from remote memory once; its other 32-byte half is then an L3 hit.
    let (remote, misses) = remote_fills(9 << 13, true, "");
    assert!(remote >= misses / 2 && remote > 30, "{remote} of {misses}");
    assert_eq!(remote_fills(8 << 13, true, "").0, 0, "this socket's page");
    assert_eq!(remote_fills(9 << 13, false, "").0, 0, "private memory is local");
    assert_eq!(remote_fills(9 << 13, true, "[core]\nsockets = 1\n").0, 0, "one socket");
}

/// MSP1, TABLE 10-2 sl 1 mask 04: strands take turns, so in every cycle of a strand's
/// turn each other strand that has a software thread waits ready (`StrandReadyN`,
/// sel-0-ready, in the mode of the phase it last ran); a strand without one never does. Over a run each strand with work
/// waits exactly the cycles the others run.
#[test]
fn msp1_a_strand_with_work_waits_ready_while_another_strand_runs() {
    let run = |threads| {
        let program = builtin::program("compute", 3, threads).unwrap();
        let mut by_strand = HashMap::new();
        let blocks = machine::sparc(SparcConfig::new(SparcChip::T4), program, Skipping::On);
        common::profile(blocks, 20_000_000, |s| (s.thread, Signal::STRAND_READY.map(|w| u64::from(s.signals.get(w) > 0))), &mut by_strand);
        by_strand
    };
    let three = run(3);
    let ran = |strand: u8| three.iter().filter(|((t, _), _)| *t == strand).map(|(_, c)| c).sum::<u64>();
    let waited = |strand: usize| three.iter().map(|((_, w), c)| w[strand] * c).sum::<u64>();
    assert!(ran(0) > 0 && ran(1) > 0 && ran(2) > 0);
    for strand in 0..3u8 {
        assert_eq!(waited(usize::from(strand)), 20_000_000 - ran(strand), "strand {strand}");
    }
    assert_eq!((3..8).map(waited).sum::<u64>(), 0, "strands without work never wait");
    let alone = run(1);
    assert!(alone.keys().all(|(_, w)| w.iter().all(|&n| n == 0)), "one strand: nobody waits");
}

/// A store the virtual-address watchpoint covers traps each time, which costs a
/// trap's cycles (the store buffer drains meanwhile, so the stores that waited for it
/// without the watch no longer do).
#[test]
fn a_watched_store_traps_to_the_debugger() {
    use pmukit_sim::program::{Access, DataStream, Memory, Op, Pattern, Phase, Watch};
    let cycles = |watch: Option<Watch>| {
        let at = |offset| Access { stream: 0, offset, size: 4, use_next: false };
        let body = vec![Op::Load(at(0)), Op::Store(at(0)), Op::Branch { target: 0x1_0000, when: Pattern::Loop }];
        let phase = Phase { watch, ..common::phase(body, 1000, vec![DataStream::fixed(0x100_0000, Memory::Cacheable)]) };
        Totals::of(machine::sparc(SparcConfig::new(SparcChip::T4), common::program_of(phase), Skipping::On), u64::MAX, |_| true).cycles
    };
    let trap = SparcConfig::new(SparcChip::T4).trap_cycles;
    let (plain, watched) = (cycles(None), cycles(Some(Watch { addr: 0x100_0000, bytes: 4, writes: true })));
    assert!(watched > plain && watched >= 1000 * (trap + 2), "{watched} cycles watched, {plain} not");
    assert_eq!(cycles(Some(Watch { addr: 0x100_0004, bytes: 4, writes: true })), plain, "a watch beside the store");
}
