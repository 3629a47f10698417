//! The ARM11 machine model: skipping repetition is exact, the relationships of AN195
//! and of the memory hierarchy hold on every workload and core, and every event counts
//! on some built-in workload.

mod common;

use pmukit_arch::Catalog;
use pmukit_sim::machine::arm11::{Arm11Config, Arm11Core};
use pmukit_sim::machine::{self, run::Skipping};
use pmukit_sim::models::arm11::expected;
use pmukit_sim::program::builtin::{self, layout};
use pmukit_sim::program::{Access, DataStream, Memory, Op, Pattern, Phase, Program, INSN};
use pmukit_sim::stream::{Block, Privilege, Signal, Totals, ARM11};
use proptest::prelude::*;

const WORKLOADS: [&str; 8] = ["compute", "branchy", "stream", "mixed", "fp", "chase", "os", "shared"];
const CORES: [Arm11Core; 3] = [Arm11Core::Arm1136, Arm11Core::Arm1156, Arm11Core::Arm1176];

fn config(core: Arm11Core, fault_every: Option<u64>) -> Arm11Config {
    Arm11Config { fault_every, ..Arm11Config::new(core) }
}

fn totals(core: Arm11Core, workload: &str, cycles: u64, skipping: Skipping) -> Totals {
    let program = builtin::program(workload, 3, 1).unwrap();
    Totals::of(machine::arm11(config(core, None), program, skipping), cycles, |_| true)
}

#[test]
fn skipping_repetition_gives_exactly_the_counts_of_simulating_every_iteration() {
    for (core, workload) in [
        (Arm11Core::Arm1176, "compute"),
        (Arm11Core::Arm1176, "stream"),
        (Arm11Core::Arm1156, "mixed"),
        (Arm11Core::Arm1176, "fp"),
        (Arm11Core::Arm1136, "chase"),
        (Arm11Core::Arm1176, "os"),
        (Arm11Core::Arm1176, "shared"),
    ] {
        let cycles = 3_000_000;
        assert_eq!(totals(core, workload, cycles, Skipping::On), totals(core, workload, cycles, Skipping::Off), "{core:?} {workload}");
    }
}

#[test]
fn skipping_is_exact_across_timer_interrupts_and_buffer_wraps() {
    // `mixed` on ARM1176 for longer than one timer period: ticks split loops.
    let cycles = 9_000_000;
    let on = totals(Arm11Core::Arm1176, "mixed", cycles, Skipping::On);
    assert_eq!(on, totals(Arm11Core::Arm1176, "mixed", cycles, Skipping::Off));
    assert!(on.kernel_cycles > 0);
}

/// A random loop: a few streams (moving, wrapping, fixed; cacheable or not; small and
/// large pages) and a body of loads, stores, line accesses, branches and calls.
fn phase() -> impl Strategy<Value = Phase> {
    let stride = prop_oneof![Just(0i64), Just(32i64), Just(64i64), 4i64..256, -128i64..-4, Just(4128i64)];
    let stream = (0u64..64, stride, 1u64..64, 0u8..3, prop::bool::ANY).prop_map(|(slot, stride, lines, kind, big)| DataStream {
        base: layout::HEAP.start + slot * layout::SECTION * 2,
        stride,
        footprint: lines * if big { 1 << 16 } else { 32 },
        memory: [Memory::Cacheable, Memory::NonCacheable, Memory::Device][usize::from(kind)],
        page: if big { layout::SECTION } else { layout::PAGE },
        shared: false,
        nullable: false,
        fresh: false,
    });
    let op = (0u8..9, 0u8..3, 0u32..64, any::<u64>(), prop::bool::ANY).prop_map(|(kind, stream, offset, bits, flag)| {
        let a = Access { stream, offset: offset * 4, size: 4, use_next: flag };
        match kind {
            0 | 1 => Op::Int,
            2 => Op::Load(a),
            3 => Op::Store(a),
            4 => Op::BlockLoad(Access { offset: 0, size: 32, ..a }),
            5 => Op::BlockStore(Access { offset: 0, size: 32, ..a }),
            // Outcome patterns of 1-64 iterations, mostly powers of two so that loops repeat.
            6 => Op::Skip { over: 1, when: Pattern::Bits { bits, len: if flag { 1 << (bits % 7) } else { 1 + (bits % 64) as u8 } } },
            7 => Op::Barrier,
            _ => Op::Fp(pmukit_sim::program::FpOp::Div),
        }
    });
    (prop::collection::vec(stream, 3), prop::collection::vec(op, 2..10), 1u64..60_000, 0u64..4096).prop_map(
        |(streams, mut body, iterations, at)| {
            let entry = layout::USER_TEXT.start + at * 64;
            body.push(Op::Int);
            body.push(Op::Branch { target: entry, when: Pattern::Loop });
            Phase { entry, ..common::phase(body, iterations, streams) }
        },
    )
}

#[test]
fn skipping_skips_a_loop_that_repeats() {
    // A loop over a large-page buffer with an 8-iteration branch pattern: it repeats
    // within each page, so most of it is skipped, with exactly the counts of every
    // iteration simulated.
    let entry = layout::USER_TEXT.start;
    let stream = DataStream {
        base: layout::HEAP.start,
        stride: 32,
        footprint: 1 << 22,
        memory: Memory::Cacheable,
        page: layout::SECTION,
        shared: false,
        nullable: false,
        fresh: false,
    };
    let a = Access { stream: 0, offset: 0, size: 4, use_next: true };
    let body = vec![
        Op::Load(a),
        Op::Skip { over: 1, when: Pattern::Bits { bits: 0b1011_0010, len: 8 } },
        Op::Int,
        Op::Store(a),
        Op::Branch { target: entry, when: Pattern::Loop },
    ];
    let phase = Phase {
        privilege: Privilege::USER,
        context: 1,
        masks: Default::default(),
        entry,
        code_page: None,
        uncached_code: false,
        guest: false,
        body,
        iterations: 100_000,
        streams: vec![stream],
        tables: Vec::new(),
        addresses: Vec::new(),
        dma: Vec::new(),
        watch: None,
        fp: Default::default(),
    };
    let cfg = Arm11Config::new(Arm11Core::Arm1176);
    let blocks: Vec<_> = machine::arm11(cfg.clone(), program(vec![phase.clone()]), Skipping::On).collect();
    let skipped: u64 = blocks.iter().filter(|b| b.repeat > 1).map(|b| b.cycles()).sum();
    let all: u64 = blocks.iter().map(|b| b.cycles()).sum();
    assert!(skipped * 10 > all * 9, "{skipped} of {all} cycles skipped");
    let off = Totals::of(machine::arm11(cfg, program(vec![phase]), Skipping::Off), u64::MAX, |_| true);
    assert_eq!(Totals::of(blocks, u64::MAX, |_| true), off);
}

fn program(phases: Vec<Phase>) -> Program {
    Program { threads: vec![Box::new(phases.into_iter())], timer: None }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn skipping_is_exact_on_random_programs(phases in prop::collection::vec(phase(), 1..4)) {
        let cfg = Arm11Config::new(Arm11Core::Arm1176);
        let on = Totals::of(machine::arm11(cfg.clone(), program(phases.clone()), Skipping::On), u64::MAX, |_| true);
        let off = Totals::of(machine::arm11(cfg, program(phases), Skipping::Off), u64::MAX, |_| true);
        prop_assert_eq!(on, off);
    }
}

/// The first `cycles` cycles of a workload on a core, as blocks.
fn blocks(core: Arm11Core, workload: &str, cycles: u64, fault_every: Option<u64>) -> Vec<Block<ARM11>> {
    let program = builtin::program(workload, 3, 1).unwrap();
    let mut done = 0;
    machine::arm11(config(core, fault_every), program, Skipping::On)
        .take_while(|b| {
            let more = done < cycles;
            done += b.cycles();
            more
        })
        .collect()
}

#[test]
fn every_span_keeps_the_per_cycle_relationships() {
    for core in CORES {
        for workload in WORKLOADS {
            for block in blocks(core, workload, 5_000_000, Some(997)) {
                for s in &block.body {
                    let g = |x: Signal| s.signals.get(x);
                    let at = format!("{core:?} {workload} span at {:#x}", s.ip);
                    // AN195 §4, §6: single issue; stalls are per cycle and a data
                    // dependency is never an instruction-buffer stall.
                    assert!(g(Signal::Instructions) <= 1, "{at}");
                    for stall in [Signal::IBufStallCycles, Signal::DataDepStallCycles, Signal::LsuFullStallCycles] {
                        assert!(g(stall) <= 1, "{at}");
                    }
                    assert!(g(Signal::IBufStallCycles) + g(Signal::DataDepStallCycles) <= 1, "{at}");
                    // Loads, stores and branches are instructions.
                    assert!(g(Signal::Loads) + g(Signal::Stores) <= g(Signal::Instructions), "{at}");
                    assert!(g(Signal::Branches) <= g(Signal::Instructions), "{at}");
                    // Every memory read is a line fill for an I-cache miss, an external
                    // data access or, in the firmware's uncacheable code, a fetch (not
                    // a cache miss: MARM16); a write-back is one or two dirty half
                    // lines and one memory write.
                    let fetch = u64::from(layout::FIRMWARE_TEXT.contains(&s.ip));
                    assert!(g(Signal::MemoryReads) <= g(Signal::ICacheMisses) + g(Signal::ExternalDataAccesses) + fetch, "{at}");
                    assert!(g(Signal::DCacheWritebacks) <= 2, "{at}");
                    assert!(g(Signal::DCacheWritebacks) == 0 || g(Signal::MemoryWrites) >= 1, "{at}");
                    // Only the kernel masks interrupts.
                    if s.privilege.is_user() {
                        assert_eq!(g(Signal::IrqDisabledCycles) + g(Signal::FiqDisabledCycles), 0, "{at}");
                    }
                    if core == Arm11Core::Arm1156 {
                        assert_eq!(g(Signal::ITlbMisses) + g(Signal::DTlbMisses) + g(Signal::MainTlbMisses), 0, "{at}: no MMU");
                    }
                }
            }
        }
    }
}

#[test]
fn totals_keep_the_hierarchy_and_branch_relationships() {
    for core in CORES {
        for workload in WORKLOADS {
            let t = totals(core, workload, 20_000_000, Skipping::On);
            let g = |x: Signal| t.get(x);
            let at = format!("{core:?} {workload}");
            // §7, §8: misses never exceed accesses; cacheable accesses are accesses.
            assert!(g(Signal::DCacheMisses) <= g(Signal::DCacheAccesses), "{at}");
            assert!(g(Signal::DCacheAccessesCacheable) <= g(Signal::DCacheAccesses), "{at}");
            assert!(g(Signal::DCacheMisses) <= g(Signal::ExternalDataAccesses), "{at}");
            // §5: mispredicts and taken branches are branches; PC changes include
            // taken branches. Table 2 0x23-0x26: returns balance the return stack.
            assert!(g(Signal::BranchMispredicts) <= g(Signal::Branches), "{at}");
            assert!(g(Signal::BranchesTaken) <= g(Signal::Branches), "{at}");
            assert!(g(Signal::PcChanges) >= g(Signal::BranchesTaken), "{at}");
            assert!(g(Signal::ReturnsMispredicted) <= g(Signal::ReturnsPredicted), "{at}");
            assert!(g(Signal::ReturnsPredicted) <= g(Signal::Returns), "{at}");
            // Micro-TLB misses go to the main TLB, whose misses are walks.
            assert!(g(Signal::MainTlbMisses) <= g(Signal::ITlbMisses) + g(Signal::DTlbMisses), "{at}");
            // Without fault injection there are no errors.
            for e in [Signal::ICacheTagParityErrors, Signal::DCacheDataParityErrors, Signal::ItcmErrors, Signal::DtcmErrors] {
                assert_eq!(g(e), 0, "{at}");
            }
        }
    }
}

#[test]
fn the_workloads_behave_as_their_names_say() {
    let core = Arm11Core::Arm1176;
    let ipc = |t: &Totals| t.get(Signal::Instructions) as f64 / t.cycles as f64;
    let compute = totals(core, "compute", 20_000_000, Skipping::On);
    let branchy = totals(core, "branchy", 20_000_000, Skipping::On);
    let stream = totals(core, "stream", 20_000_000, Skipping::On);
    // A quarter of compute's instructions are loads that hit, a third of them used at
    // once (a cycle's load-use stall on ARM1176).
    assert!(ipc(&compute) > 0.75, "compute keeps the single-issue pipeline busy: {}", ipc(&compute));
    let mispredicts = |t: &Totals| t.get(Signal::BranchMispredicts) as f64 / t.get(Signal::Branches) as f64;
    // Compiled programs under QEMU differ by ten times: `compress` mispredicts 2.6 % of
    // its branches on ARM1176, `sort` 26 % (docs/validation.md).
    assert!(mispredicts(&branchy) > 5.0 * mispredicts(&compute), "branchy mispredicts far more often");
    let misses = |t: &Totals| t.get(Signal::DCacheMisses) as f64 / t.get(Signal::DCacheAccesses).max(1) as f64;
    assert!(misses(&stream) > 0.5, "stream misses most accesses: {}", misses(&stream));
    assert!(ipc(&stream) < ipc(&compute) / 2.0);
    let chase = totals(core, "chase", 20_000_000, Skipping::On);
    assert!(ipc(&chase) < ipc(&stream), "every chased load waits for the one before: {}", ipc(&chase));
    // os: eight processes in four page sizes and many system calls thrash the TLBs.
    let os = totals(core, "os", 20_000_000, Skipping::On);
    let walks = |t: &Totals| t.get(Signal::MainTlbMisses) as f64 / t.cycles as f64;
    assert!(walks(&os) > 10.0 * walks(&compute), "{} vs {}", walks(&os), walks(&compute));
    assert!(os.kernel_cycles * 100 > os.cycles, "os spends more than 1% in the kernel");
    // shared: the lock's atomic swaps wait for their data; barriers drain the write buffer.
    let shared = totals(core, "shared", 20_000_000, Skipping::On);
    assert!(shared.get(Signal::WriteBufferDrains) > 1000);
}

/// What every event of `pmu` counts over a workload's first `cycles` cycles.
fn event_counts(cat: &Catalog, pmu: &str, core: Arm11Core, workload: &str, cycles: u64) -> Vec<(String, u64)> {
    let pmu = cat.pmu(pmu).unwrap();
    let program = builtin::program(workload, 3, 1).unwrap();
    // Fault injection: an error every 61 accesses to each cache and TCM.
    let t = Totals::of(machine::arm11(config(core, Some(61)), program, Skipping::On), cycles, |_| true);
    pmu.events().map(|e| (e.name.to_string(), expected(e.code, pmu.desc.model, &t))).collect()
}

/// Events that count nothing on a core by definition (docs/machines.md).
fn never_counts(pmu: &str, event: &str) -> bool {
    // AN195 Table 2: 0x3, 0x4 and 0xF are unused on ARM1156, which has an MPU.
    pmu == "arm1156" && matches!(event, "ITLB_MISS" | "DTLB_MISS" | "MAIN_TLB_MISS")
}

#[test]
fn every_event_counts_on_some_workload_with_fault_injection() {
    let cat = Catalog::builtin();
    for (pmu, core) in [("arm1136", Arm11Core::Arm1136), ("arm1156", Arm11Core::Arm1156), ("arm1176", Arm11Core::Arm1176)] {
        let mut seen: Vec<(String, u64)> = Vec::new();
        for workload in WORKLOADS {
            // `mixed` runs long enough to take fast interrupts.
            let cycles = if workload == "mixed" { 100_000_000 } else { 20_000_000 };
            for (name, n) in event_counts(&cat, pmu, core, workload, cycles) {
                match seen.iter_mut().find(|(s, _)| *s == name) {
                    Some((_, total)) => *total += n,
                    None => seen.push((name, n)),
                }
            }
        }
        let zero: Vec<&str> = seen.iter().filter(|(n, c)| *c == 0 && !never_counts(pmu, n)).map(|(n, _)| n.as_str()).collect();
        assert!(zero.is_empty(), "{pmu}: these events never count: {zero:?}");
        let by_definition = seen.iter().filter(|(n, _)| never_counts(pmu, n)).count();
        assert!(by_definition * 20 <= seen.len().max(20), "{pmu}: at most 5% of selections count nothing by definition");
    }
}

#[test]
fn code_runs_where_the_program_puts_it() {
    for block in blocks(Arm11Core::Arm1176, "mixed", 5_000_000, None) {
        for s in &block.body {
            let user = layout::USER_TEXT.contains(&s.ip);
            let kernel = layout::KERNEL_TEXT.contains(&s.ip) || s.ip >= layout::VECTORS;
            assert!(if s.privilege.is_user() { user } else { kernel }, "{:?} code at {:#x}", s.privilege, s.ip);
            assert_eq!(s.ip % INSN, 0);
        }
    }
}

#[test]
fn a_machine_config_overrides_parameters_and_the_machine_follows() {
    let base = Arm11Config::new(Arm11Core::Arm1176);
    let cfg = base.with_overrides("[dcache]\nsize = 65536\nreplacement = \"lru\"\n[core]\nmemory_cycles = 100\n", "test.toml").unwrap();
    assert_eq!((cfg.dcache.size, cfg.dcache.replacement, cfg.memory_cycles), (65536, pmukit_sim::machine::cache::Replacement::Lru, 100));
    assert_eq!(cfg.icache, base.icache, "keys not given keep their values");
    // A slower memory makes the same program take more cycles for the same work.
    let run = |cfg: Arm11Config| {
        let program = builtin::program("stream", 3, 1).unwrap();
        Totals::of(machine::arm11(cfg, program, Skipping::On), 10_000_000, |_| true)
    };
    let (fast, slow) = (run(base.clone()), run(base.with_overrides("[core]\nmemory_cycles = 100\n", "t").unwrap()));
    assert!(slow.get(Signal::Instructions) < fast.get(Signal::Instructions) / 2);
}

#[test]
fn a_bad_machine_config_names_the_key_and_the_valid_range() {
    let base = Arm11Config::new(Arm11Core::Arm1176);
    let err = |text: &str| base.with_overrides(text, "m.toml").unwrap_err().to_string();
    assert_eq!(err("[core]\nmemory_cycles = 0\n"), "m.toml: core.memory_cycles = 0: must be in 1..=100000");
    assert_eq!(err("[dcache]\nsize = 2097152\n"), "m.toml: dcache.size = 2097152: must be in 1024..=1048576");
    assert_eq!(err("[icache]\nsize = 512\nways = 1\n"), "m.toml: icache.size = 512: must be in 1024..=1048576");
    assert!(err("[dcache]\nways = 3\n").starts_with("m.toml: [dcache]: cache size = 16384 bytes: must be a multiple of line * ways"));
    assert!(err("[icache]\nline = 48\n").contains("line = 48 bytes: must be a power of two in 8..=4096"));
    assert!(err("[main_tlb]\nways = 3\n").contains("[main_tlb]: TLB ways = 3"));
    assert!(err("[btac]\nentries = 0\n").contains("[btac]"));
    assert!(err("[dcache]\nsizes = 1\n").contains("unknown field `sizes`, expected one of `size`"));
    assert!(err("[l2]\nsize = 1\n").contains("unknown field `l2`"));
    assert!(err("[dcache]\nreplacement = \"fifo\"\n").contains("expected one of `lru`, `lru-by-use`, `round-robin`, `random`"));
    assert!(err("[core]\nreturn_stack = -1\n").contains("line 2"), "{}", err("[core]\nreturn_stack = -1\n"));
    assert!(err("[core\n").contains("line 1"));
    let mpu = Arm11Config::new(Arm11Core::Arm1156);
    assert_eq!(
        mpu.with_overrides("[micro_dtlb]\nentries = 4\n", "m.toml").unwrap_err().to_string(),
        "m.toml: [micro_dtlb]: arm1156 has no such structure (it has an MPU and no TLBs)"
    );
}

#[test]
fn a_malformed_phase_ends_the_program_with_its_reason_and_never_runs() {
    let good = || Phase {
        privilege: Privilege::USER,
        context: 1,
        masks: Default::default(),
        entry: layout::USER_TEXT.start,
        code_page: None,
        uncached_code: false,
        guest: false,
        body: vec![Op::Int, Op::Load(Access { stream: 0, offset: 0, size: 4, use_next: false })],
        iterations: 10,
        streams: vec![DataStream::fixed(layout::HEAP.start, Memory::Cacheable)],
        tables: Vec::new(),
        addresses: Vec::new(),
        dma: Vec::new(),
        watch: None,
        fp: Default::default(),
    };
    let cases: Vec<(Phase, &str)> = vec![
        (Phase { streams: Vec::new(), ..good() }, "instruction 1 refers to data stream 0, but the phase has 0"),
        (Phase { body: vec![Op::Jump { table: 2, via: None }], ..good() }, "instruction 0 jumps through table 2, but the phase has 0"),
        // A jump's own data reference is checked before its table.
        (
            Phase { body: vec![Op::Jump { table: 2, via: Some(Access { stream: 1, offset: 0, size: 4, use_next: false }) }], ..good() },
            "instruction 0 refers to data stream 1, but the phase has 1",
        ),
        (
            Phase { body: vec![Op::Int, Op::FlushCode(Access { stream: 4, offset: 0, size: 4, use_next: false })], ..good() },
            "instruction 1 refers to data stream 4, but the phase has 1",
        ),
        (Phase { tables: vec![pmukit_sim::program::Table { targets: Vec::new() }], ..good() }, "table 0 is empty"),
        (Phase { streams: vec![DataStream { page: 3000, ..good().streams[0] }], ..good() }, "page size 3000 is not a power of two"),
        (Phase { code_page: Some(512), ..good() }, "code page size 512 is not a power of two"),
        (Phase { watch: Some(pmukit_sim::program::Watch { addr: 0x100, bytes: 0, writes: true }), ..good() }, "covers 0 bytes"),
        (Phase { watch: Some(pmukit_sim::program::Watch { addr: 0x100, bytes: 8192, writes: false }), ..good() }, "valid: 1 to 4096"),
        (Phase { body: vec![Op::Skip { over: 1, when: Pattern::Bits { bits: 1, len: 65 } }, Op::Int], ..good() }, "pattern length 65"),
        (Phase { body: vec![Op::Int, Op::Skip { over: 3, when: Pattern::Always }], ..good() }, "past the end of the body"),
        (Phase { addresses: vec![0x10000], ..good() }, "1 instruction addresses for 2 instructions"),
    ];
    for (bad, why) in cases {
        let mut runner = machine::arm11(Arm11Config::new(Arm11Core::Arm1176), program(vec![good(), bad]), Skipping::On);
        let cycles: u64 = runner.by_ref().map(|b| b.cycles()).sum();
        let error = runner.error().map(|e| e.to_string()).unwrap_or_default();
        assert!(error.contains(why), "{error}");
        assert_eq!(cycles, totals_of(vec![good()]), "the good phase ran, the bad one did not: {why}");
    }
    // A program with no threads is simply empty.
    let empty = Program { threads: Vec::new(), timer: None };
    assert_eq!(machine::arm11(Arm11Config::new(Arm11Core::Arm1176), empty, Skipping::On).count(), 0);
}

fn totals_of(phases: Vec<Phase>) -> u64 {
    Totals::of(machine::arm11(Arm11Config::new(Arm11Core::Arm1176), program(phases), Skipping::On), u64::MAX, |_| true).cycles
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Whatever a machine configuration says, it is refused with a reason or gives a
    /// machine that runs.
    #[test]
    fn arbitrary_machine_configs_are_refused_or_run(
        table in "(icache|dcache|micro_itlb|micro_dtlb|main_tlb|btac|core|l2)",
        key in "(size|ways|line|entries|replacement|write_allocate|return_stack|mispredict_cycles|write_buffer|write_cycles|memory_cycles|walk_level_cycles|block_cycles)",
        value in "(0|1|3|8|10|16|32|64|100|4096|16384|65536|1073741824|99999999999|-1|true|\"lru\"|\"lru-by-use\"|\"round-robin\"|\"random\"|\"fifo\"|1.5)",
        core in 0usize..3,
    ) {
        let text = format!("[{table}]\n{key} = {value}\n");
        match Arm11Config::new(CORES[core]).with_overrides(&text, "m.toml") {
            Err(e) => prop_assert!(e.to_string().starts_with("m.toml"), "{e}"),
            Ok(cfg) => {
                let program = builtin::program("mixed", 1, 1).unwrap();
                let t = Totals::of(machine::arm11(cfg, program, Skipping::On), 200_000, |_| true);
                prop_assert_eq!(t.cycles, 200_000);
            }
        }
    }
}

/// The totals of one run of `body` (straight-line code at the start of the user text)
/// over one data stream of 1 MB sections in the heap.
fn once(body: Vec<Op>) -> Totals {
    let phase = Phase {
        privilege: Privilege::USER,
        context: 1,
        masks: Default::default(),
        entry: layout::USER_TEXT.start,
        code_page: None,
        uncached_code: false,
        guest: false,
        body,
        iterations: 1,
        streams: vec![DataStream { page: layout::SECTION, ..DataStream::fixed(layout::HEAP.start, Memory::Cacheable) }],
        tables: Vec::new(),
        addresses: Vec::new(),
        dma: Vec::new(),
        watch: None,
        fp: Default::default(),
    };
    Totals::of(machine::arm11(Arm11Config::new(Arm11Core::Arm1176), program(vec![phase]), Skipping::Off), u64::MAX, |_| true)
}

#[test]
fn an195_s4_a_mispredict_costs_four_cycles_and_one_instruction_buffer_stall() {
    // A forward branch to the next instruction: static prediction says not taken.
    let next = layout::USER_TEXT.start + INSN;
    let taken = once(vec![Op::Branch { target: next, when: Pattern::Always }, Op::Int]);
    let not_taken = once(vec![Op::Branch { target: next, when: Pattern::Never }, Op::Int]);
    assert_eq!((taken.get(Signal::BranchMispredicts), not_taken.get(Signal::BranchMispredicts)), (1, 0));
    assert_eq!(taken.cycles, not_taken.cycles + 4);
    assert_eq!(taken.get(Signal::IBufStallCycles), not_taken.get(Signal::IBufStallCycles) + 1);
}

#[test]
fn an195_s8_accesses_to_the_line_of_the_previous_access_count_once() {
    let load = |offset| Op::Load(Access { stream: 0, offset, size: 4, use_next: false });
    let t = once(vec![load(0), load(4), load(8), load(64), load(68)]);
    assert_eq!(t.get(Signal::Loads), 5);
    assert_eq!(t.get(Signal::DCacheAccesses), 2);
    assert_eq!(t.get(Signal::DCacheMisses), 2, "each line misses once");
}

#[test]
fn an195_s4_page_table_walks_count_as_main_tlb_misses_not_stalls() {
    let t = once(vec![Op::Load(Access { stream: 0, offset: 0, size: 4, use_next: false })]);
    assert_eq!((t.get(Signal::DTlbMisses), t.get(Signal::MainTlbMisses) >= 1), (1, true));
    // The data walk stalls nothing that 0x2 or 0x11 counts; the fetch side's walk and
    // I-cache fill are the only instruction-buffer stalls.
    assert_eq!(t.get(Signal::DataDepStallCycles) + t.get(Signal::LsuFullStallCycles), 0);
}

/// MARM11 (§7: event 0xA is "cache hits plus cache misses"; 0xB counts every non-CP15
/// operation that misses and goes to AHB): a preload is looked up like a load, so one
/// that misses is an access (0x9, 0xA) and a miss (0xB), and it is no load.
#[test]
fn marm11_a_preload_that_misses_is_an_access_and_a_miss() {
    let stream = DataStream {
        base: 0x100_0000,
        stride: 32,
        footprint: 1 << 20,
        memory: Memory::Cacheable,
        page: 4096,
        shared: false,
        nullable: false,
        fresh: false,
    };
    let preload = Op::Prefetch(Access { stream: 0, offset: 0, size: 4, use_next: false });
    let phase = common::phase(vec![preload, Op::Int, Op::Branch { target: 0x1_0000, when: Pattern::Always }], 1000, vec![stream]);
    let t = Totals::of(machine::arm11(Arm11Config::new(Arm11Core::Arm1176), program(vec![phase]), Skipping::Off), u64::MAX, |_| true);
    // Each iteration preloads a new 32-byte line.
    assert_eq!(t.get(Signal::DCacheMisses), 1000);
    assert_eq!(t.get(Signal::DCacheAccesses), 1000);
    assert_eq!(t.get(Signal::DCacheAccessesCacheable), 1000);
    assert_eq!(t.get(Signal::Loads), 0);
}

/// ERRATA MARM4: a dirty victim's half lines leave through the write buffer, as a
/// store that misses does, and a full buffer stalls the access that needs an entry
/// (0x11). Loads and stores dirty the first half of each of the D-cache's 512 lines,
/// then loads of another buffer displace them all; with slow drains the loads wait
/// for the buffer. Clean victims take no entry.
#[test]
fn marm4_dirty_victims_leave_through_the_write_buffer() {
    let run = |dirty: bool| {
        let at = Access { stream: 0, offset: 0, size: 4, use_next: false };
        let over = |base| DataStream { stride: 32, footprint: 16 << 10, ..DataStream::fixed(base, Memory::Cacheable) };
        let first = if dirty { vec![Op::Load(at), Op::Store(at), Op::Int] } else { vec![Op::Load(at), Op::Int] };
        let phases = vec![
            common::phase(first, 512, vec![over(0x2000_0000)]),
            common::phase(vec![Op::Load(at), Op::Int], 512, vec![over(0x3000_0000)]),
        ];
        let program = Program { threads: vec![Box::new(phases.into_iter())], timer: None };
        let cfg = Arm11Config::new(Arm11Core::Arm1176).with_overrides("[core]\nwrite_cycles = 100\n", "m").unwrap();
        let mut r = machine::arm11(cfg, program, Skipping::Off);
        let t = Totals::of(&mut r, u64::MAX, |_| true);
        (t, r.queues()[0])
    };
    let (dirty, buffer) = run(true);
    assert_eq!(buffer.name, "write buffer");
    assert_eq!(dirty.get(Signal::DCacheWritebacks), 512, "one dirty half a line");
    assert_eq!(buffer.occupancy.requests, 512, "every victim took an entry");
    assert_eq!(buffer.occupancy.most, 8);
    let (clean, none) = run(false);
    assert_eq!((clean.get(Signal::DCacheWritebacks), none.occupancy.requests), (0, 0));
    // Both wait for the line-fill buffer between misses (0x11 too); only the dirty run
    // waits for the write buffer, about 200 cycles a victim once it is full.
    let waited = dirty.get(Signal::LsuFullStallCycles) - clean.get(Signal::LsuFullStallCycles);
    assert!(waited > 400 * 100, "{waited}");
}

/// A store a debugger's watchpoint covers takes a debug exception each time, which
/// costs the exception's cycles; a load of the watched bytes does not (the watch is on
/// stores), nor does a store beside them.
#[test]
fn a_watched_store_takes_a_debug_exception() {
    use pmukit_sim::program::Watch;
    let cycles = |watch: Option<Watch>| {
        let at = |offset| Access { stream: 0, offset, size: 4, use_next: false };
        let body = vec![Op::Load(at(0)), Op::Store(at(0)), Op::Store(at(8)), Op::Branch { target: 0x1_0000, when: Pattern::Loop }];
        let phase = Phase { watch, ..common::phase(body, 1000, vec![DataStream::fixed(0x100_0000, Memory::Cacheable)]) };
        let cfg = config(Arm11Core::Arm1176, None);
        (Totals::of(machine::arm11(cfg.clone(), common::program_of(phase), Skipping::On), u64::MAX, |_| true).cycles, cfg)
    };
    let (plain, cfg) = cycles(None);
    let (watched, _) = cycles(Some(Watch { addr: 0x100_0000, bytes: 4, writes: true }));
    assert_eq!(watched - plain, 1000 * cfg.exception_cycles);
    let (beside, _) = cycles(Some(Watch { addr: 0x100_0004, bytes: 4, writes: true }));
    assert_eq!(beside, plain);
}
