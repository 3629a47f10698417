//! docs/assumptions.md: every assumed value is a `--machine-config` key whose default
//! it is, and one the machine reads: another value counts differently.

use pmukit_sim::machine::arm11::{Arm11Config, Arm11Core};
use pmukit_sim::machine::assumption::Assumption;
use pmukit_sim::machine::montecito::MontecitoConfig;
use pmukit_sim::machine::run::Skipping;
use pmukit_sim::machine::sparc::{SparcChip, SparcConfig};
use pmukit_sim::machine::{self};
use pmukit_sim::program::builtin::{self, WORKLOADS};
use pmukit_sim::program::{ia64, DataStream, FpOp, FpValues, Memory, Op, Pattern, Phase, Program, Table};
use pmukit_sim::stat::assumed;
use pmukit_sim::stream::Signal;
use pmukit_sim::stream::{Span, Totals, SPARC};
use std::collections::HashMap;

mod common;

const DOC: &str = include_str!("../../../docs/assumptions.md");

/// A row of the table: machine, table, key and value.
struct Row {
    machine: String,
    table: String,
    key: String,
    value: String,
}

fn rows() -> Vec<Row> {
    DOC.lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| machine") && !l.starts_with("|---"))
        .map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            let (table, key) = cells[2].trim_matches('`').split_once(' ').unwrap_or_else(|| panic!("`[table] key`: {l}"));
            Row {
                machine: cells[1].to_string(),
                table: table.trim_matches(['[', ']']).to_string(),
                key: key.to_string(),
                value: cells[3].to_string(),
            }
        })
        .collect()
}

/// Other values of the key: a half, an eighth and twice a number (a few cycles for a
/// delay of 0; a page a fourth and four times: 4 KB and 64 KB are the page sizes
/// nearest 16 KB on either side), the other of a boolean. A structure the workloads do not fill counts alike when it
/// grows, and one that holds their whole footprint when it shrinks a little (the
/// code's pages fit in 64 L2 ITLB entries), so several are tried.
fn others(row: &Row) -> Vec<String> {
    match row.value.as_str() {
        "true" => vec!["false".to_string()],
        "false" => vec!["true".to_string()],
        v => {
            let n: u64 = v.parse().unwrap_or_else(|_| panic!("{}: {v} is no number", row.key));
            let by = if row.key == "base_page" { 4 } else { 2 };
            // A delay of none (`victim_read_delay`) has no half: a few cycles instead.
            let tried = if n == 0 { [1, 4, 16, 64] } else { [n / by, n * by, n / 8, n / 64] };
            tried.into_iter().filter(|&m| m > 0 && m != n).map(|m| m.to_string()).collect()
        }
    }
}

/// The default machine with `text`'s keys, or `None` when they are refused.
fn montecito(text: &str) -> Option<MontecitoConfig> {
    MontecitoConfig::new(2).with_overrides(text, "assumption.toml").ok()
}

fn totals(cfg: &MontecitoConfig, workload: &str) -> Totals {
    run(cfg, ia64::compiled(builtin::program(workload, 3, 2).unwrap()))
}

fn run(cfg: &MontecitoConfig, program: Program) -> Totals {
    Totals::of(machine::montecito(cfg.clone(), program, Skipping::On), 2_000_000, |_| true)
}

/// A program that shows a parameter no built-in workload does, for the rows that
/// name one (Montecito's and T4's indirect-target tables, the PVAB). The workloads dispatch
/// through one jump table at a time (`branchy`), so the table's size never matters to
/// them; a loop with two dispatch sites, each always going to its own handler, needs
/// two entries.
fn showing(row: &Row) -> Option<Program> {
    if row.key == "pvab_entries" {
        return Some(streaming());
    }
    if ["sir_cycles", "fp_assist_cycles", "vfp_support_cycles", "subnormal_cycles"].contains(&row.key.as_str()) {
        return Some(subnormals());
    }
    if row.key == "page_fault_cycles" {
        return Some(faulting());
    }
    if row.key == "unaligned_cycles" {
        return Some(misaligned());
    }
    (row.table == "indirect").then(|| {
        let entry = 0x1_0000;
        let body = vec![
            Op::Int,
            Op::Jump { table: 0, via: None },
            Op::Int,
            Op::Jump { table: 1, via: None },
            Op::Branch { target: entry, when: Pattern::Loop },
        ];
        let mut phase = common::phase(body, 10_000, vec![DataStream::fixed(0x100_0000, Memory::Cacheable)]);
        // The two sites, at 0x1_0004 and 0x2_0044, take different entries of the 64.
        phase.tables = vec![Table { targets: vec![0x2_0040] }, Table { targets: vec![0x3_0000] }];
        common::program_of(phase)
    })
}

/// A function of 6,000 instructions (32 KB of bundles, twice the L1I) called in a loop:
/// its call starts a stream of instruction prefetches that misses the L1I line after
/// line and waits for RAB entries (MMC50), as the workloads' short calls seldom do,
/// so that the PVAB's size shows.
fn streaming() -> Program {
    let mut body = vec![Op::Call { target: 0x4_0000, frame: 8 }];
    body.extend(std::iter::repeat_n(Op::Int, 6_000));
    body.extend([Op::Return { to: 0x1_0004 }, Op::Branch { target: 0x1_0000, when: Pattern::Loop }]);
    common::program_of(common::phase(body, 200, vec![DataStream::fixed(0x100_0000, Memory::Cacheable)]))
}

/// A loop whose floating-point results are all subnormal, without flush-to-zero: the
/// `fp` workload's audio filters have them in a quarter of their samples at most, and
/// not every run of the test's length reaches one.
fn subnormals() -> Program {
    let body = vec![Op::Fp(FpOp::Mul), Op::Fp(FpOp::Fma), Op::Int, Op::Branch { target: 0x1_0000, when: Pattern::Loop }];
    let phase = common::phase(body, 1000, vec![DataStream::fixed(0x100_0000, Memory::Cacheable)]);
    common::program_of(Phase { fp: FpValues { tiny: Pattern::Always, flush: false, zero_divisors: false }, ..phase })
}

/// A walk through a freshly mapped file, a page fault every eight iterations: `os`'s
/// mapped files come now and then, and not in every run of the test's length.
fn faulting() -> Program {
    let file = DataStream { stride: 512, footprint: 512 * 1000, fresh: true, ..DataStream::fixed(0x400_0000, Memory::Cacheable) };
    let load = Op::Load(pmukit_sim::program::Access { stream: 0, offset: 0, size: 8, use_next: true });
    let body = vec![load, Op::Int, Op::Branch { target: 0x1_0000, when: Pattern::Loop }];
    common::program_of(common::phase(body, 1000, vec![file]))
}

/// Doublewords read 2 bytes past an aligned address: every machine's hardware refuses
/// them (they cross Itanium's 8-byte chunks, ARMv6 wants doublewords word-aligned,
/// SPARC any access aligned), and the kernel performs each; `services`' misaligned
/// accesses the hardware performs, where it can.
fn misaligned() -> Program {
    let records = DataStream { stride: 16, footprint: 16 * 1000, ..DataStream::fixed(0x400_0000, Memory::Cacheable) };
    let load = Op::Load(pmukit_sim::program::Access { stream: 0, offset: 2, size: 8, use_next: true });
    let body = vec![load, Op::Int, Op::Branch { target: 0x1_0000, when: Pattern::Loop }];
    common::program_of(common::phase(body, 1000, vec![records]))
}

/// Whether two runs' totals differ in what `row`'s assumption shapes first-hand
/// (`assumptions()`, which `pmu describe` reads): its signals, or, for a wait no signal
/// marks (it shapes none), anything.
fn shaped(list: Vec<Assumption>, row: &Row) -> impl Fn(&Totals, &Totals) -> bool {
    let name = format!("[{}] {}", row.table, row.key);
    let a = list.into_iter().find(|a| a.name() == name).unwrap_or_else(|| panic!("{name} is not in the machine's assumptions()"));
    move |x, y| if a.shapes.is_empty() { x != y } else { a.shapes.iter().any(|&s| x.get(s) != y.get(s)) }
}

/// Checks `row` on the machine `name`: its value is the default, another value is
/// accepted and changes the configuration, and one of them counts differently
/// (`differs`). `at(value)` is the machine with the row's key set to `value`, `None`
/// when the value is refused.
fn check<C: PartialEq + std::fmt::Debug>(name: &str, row: &Row, default: &C, at: impl Fn(&str) -> Option<C>, differs: impl Fn(&C) -> bool) {
    let key = format!("{name}: [{}] {}", row.table, row.key);
    assert_eq!(at(&row.value).as_ref(), Some(default), "{key} = {} is not the default", row.value);
    let valid: Vec<C> = others(row).iter().filter_map(|v| at(v)).collect();
    assert!(!valid.is_empty(), "{key}: no other value is accepted");
    let moved = valid.iter().any(|changed| {
        assert_ne!(changed, default, "{key} changes nothing in the configuration");
        differs(changed)
    });
    assert!(moved, "{key}: other values count as {} does on every workload: the machine does not read it", row.value);
}

#[test]
fn every_assumed_value_is_a_machine_config_key_the_machine_reads() {
    let rows = rows();
    assert!(rows.len() >= 20, "the table has {} rows", rows.len());
    let default = MontecitoConfig::new(2);
    let baseline: Vec<Totals> = WORKLOADS.iter().map(|w| totals(&default, w.name)).collect();
    for row in rows.iter().filter(|r| r.machine == "montecito") {
        // The TLBs are fully associative: their ways follow their entries.
        let ways =
            |value: &str| if row.table.ends_with("tlb") && row.key == "entries" { format!("ways = {value}\n") } else { String::new() };
        let at = |value: &str| montecito(&format!("[{}]\n{} = {value}\n{}", row.table, row.key, ways(value)));
        let shaped = shaped(default.assumptions(), row);
        check("montecito", row, &default, at, |changed| {
            WORKLOADS.iter().zip(&baseline).any(|(w, base)| shaped(&totals(changed, w.name), base))
                || showing(row).zip(showing(row)).is_some_and(|(p, q)| shaped(&run(changed, p), &run(&default, q)))
        });
    }
    for core in [Arm11Core::Arm1136, Arm11Core::Arm1156, Arm11Core::Arm1176] {
        let default = Arm11Config::new(core);
        let totals = |cfg: &Arm11Config, workload: &str| {
            let program = builtin::program(workload, 3, 1).unwrap();
            Totals::of(machine::arm11(cfg.clone(), program, Skipping::On), 2_000_000, |_| true)
        };
        let baseline: Vec<Totals> = WORKLOADS.iter().map(|w| totals(&default, w.name)).collect();
        // `arm11` stands for every core; the MMU's timings name the cores that have one.
        let mine = |r: &&Row| r.machine == "arm11" || r.machine.split(", ").any(|m| m == core.name());
        for row in rows.iter().filter(mine) {
            let at = |value: &str| default.with_overrides(&format!("[{}]\n{} = {value}\n", row.table, row.key), "assumption.toml").ok();
            let shaped = shaped(default.assumptions(), row);
            let shown =
                |cfg: &Arm11Config, program: Program| Totals::of(machine::arm11(cfg.clone(), program, Skipping::On), 2_000_000, |_| true);
            check(core.name(), row, &default, at, |changed| {
                WORKLOADS.iter().zip(&baseline).any(|(w, base)| shaped(&totals(changed, w.name), base))
                    || showing(row).zip(showing(row)).is_some_and(|(p, q)| shaped(&shown(changed, p), &shown(&default, q)))
            });
        }
    }
    for chip in [SparcChip::T4, SparcChip::Kt, SparcChip::Niagara] {
        // The memory controllers' write queue sees writes once the last-level cache
        // evicts dirty lines, which its megabytes put off past these runs: its rows are
        // checked on small ones.
        let small = if chip == SparcChip::T4 { "[l2]\nsize = 32768\n[l3]\nsize = 65536\n" } else { "[l2]\nsize = 24576\n" };
        let context = |row: &Row| if row.key == "write_queue" { small } else { "" };
        let sparc = |text: &str| SparcConfig::new(chip).with_overrides(text, "assumption.toml").ok();
        let shown =
            |cfg: &SparcConfig, program: Program| Totals::of(machine::sparc(cfg.clone(), program, Skipping::On), 2_000_000, |_| true);
        let totals = |cfg: &SparcConfig, workload: &str| {
            // Two threads, as `pmu stat` runs more than one on these chips: their
            // phases interleave, so more of each program's kinds of phase come within
            // the run (one thread of `fp` meets no divide in 2×10^6 cycles on T4).
            let program = builtin::program(workload, 3, 2).unwrap();
            // The cycles of each kind of span, with what its memory transactions met
            // in the memory controllers (the write queue shows only there).
            let mut kinds = HashMap::new();
            let queues = |s: &Span<SPARC>| {
                let q = s.queues;
                (s.signals, q.read_cycles, q.write_cycles, q.bank_stall_cycles, q.writeback_hits, q.writes_starved)
            };
            common::profile(machine::sparc(cfg.clone(), program, Skipping::On), 2_000_000, queues, &mut kinds);
            let mut kinds: Vec<_> = kinds.into_iter().collect();
            kinds.sort_by_key(|(k, c)| (format!("{k:?}"), *c));
            kinds
        };
        let mut baselines = HashMap::new();
        for row in rows.iter().filter(|r| r.machine == chip.name()) {
            let default = sparc(context(row)).unwrap();
            let baseline =
                baselines.entry(context(row)).or_insert_with(|| WORKLOADS.iter().map(|w| totals(&default, w.name)).collect::<Vec<_>>());
            let at = |value: &str| sparc(&format!("{}[{}]\n{} = {value}\n", context(row), row.table, row.key));
            check(chip.name(), row, &default, at, |changed| {
                WORKLOADS.iter().zip(baseline.iter()).any(|(w, base)| totals(changed, w.name) != *base)
                    || showing(row).zip(showing(row)).is_some_and(|(p, q)| shown(changed, p) != shown(&default, q))
            });
        }
    }
    let known = ["montecito", "arm11", "arm1136, arm1176", "sparc-t4", "sparc-kt", "niagara"];
    let machines: Vec<&str> = rows.iter().map(|r| r.machine.as_str()).filter(|m| !known.contains(m)).collect();
    assert!(machines.is_empty(), "rows for machines this test does not check: {machines:?}");
}

/// The machines' own lists of their assumptions (`assumptions()`, which `pmu
/// describe` reads) are the table's rows, in its order, with its values.
#[test]
fn the_table_lists_each_machines_assumptions() {
    let rows = rows();
    let listed = |machine: &dyn Fn(&str) -> bool| -> Vec<(String, String)> {
        rows.iter().filter(|r| machine(&r.machine)).map(|r| (format!("[{}] {}", r.table, r.key), r.value.clone())).collect()
    };
    let own = |list: Vec<Assumption>| -> Vec<(String, String)> { list.iter().map(|a| (a.name(), a.value.clone())).collect() };
    assert_eq!(own(MontecitoConfig::new(2).assumptions()), listed(&|m| m == "montecito"));
    for core in [Arm11Core::Arm1136, Arm11Core::Arm1156, Arm11Core::Arm1176] {
        let mine = |m: &str| m == "arm11" || m.split(", ").any(|c| c == core.name());
        let mut expected = listed(&mine);
        let mut got = own(Arm11Config::new(core).assumptions());
        // The rows of all cores come first in the table; the config's order may differ.
        expected.sort();
        got.sort();
        assert_eq!(got, expected, "{}", core.name());
    }
    for chip in [SparcChip::T4, SparcChip::Kt, SparcChip::Niagara] {
        assert_eq!(own(SparcConfig::new(chip).assumptions()), listed(&|m| m == chip.name()), "{}", chip.name());
    }
}

/// What Montecito's `event` reads, and the names of the assumptions `pmu describe`
/// says it depends on.
fn montecito_reads(event: &str) -> (assumed::Inputs, Vec<String>) {
    let catalog = pmukit_arch::Catalog::builtin();
    let sel = catalog.resolve(event, "montecito").unwrap();
    let pmu = catalog.pmu(sel.pmu).unwrap();
    (
        assumed::inputs(pmu, &sel).unwrap(),
        assumed::depends_on(pmu, std::slice::from_ref(&sel)).unwrap().iter().map(Assumption::name).collect(),
    )
}

/// `pmu describe` names the assumptions whose shaped signals an event reads: the
/// probe finds what Montecito's events read, priorities included.
#[test]
fn an_event_reads_the_signals_its_count_weighs() {
    let read = montecito_reads;
    // An L1D bubble of a store conflict: the conflict's code, the L1D stall, and the
    // flush that outranks it (§4.6), of the signals assumptions shape.
    let (inputs, names) = read("montecito::BE_L1D_FPU_BUBBLE.L1D_LDCONF");
    for s in [Signal::L1dConflict, Signal::LsuFullStallCycles, Signal::ExceptionFlushCycles] {
        assert!(inputs.signals.contains(&s), "{s:?} not in {:?}", inputs.signals);
    }
    assert!(!inputs.signals.contains(&Signal::DataDepStallCycles), "an EXE stall ranks below the L1D's");
    assert!(names.contains(&"[core] store_write_cycles".to_string()), "{names:?}");
    assert!(!names.contains(&"[core] br_interlock_cycles".to_string()), "{names:?}");
    // Every cycle counts alike whatever stalls it: no assumption shapes it first-hand.
    let (inputs, names) = read("montecito::CPU_OP_CYCLES.ALL");
    assert!(inputs.signals.is_empty() && !inputs.bare_bubbles && names.is_empty(), "{inputs:?} {names:?}");
    // A mispredict's refill is a bubble no signal marks: the BRU bubbles count it.
    let (inputs, names) = read("montecito::BE_FLUSH_BUBBLE.BRU");
    assert!(inputs.bare_bubbles);
    assert!(names.contains(&"[core] mispredict_cycles".to_string()), "{names:?}");
    // A return's wait for its link register, unless a flush or a miss of the front end
    // outranks it (§4.15 FE_LOST_BW's priorities): not the predictors' sizes.
    let (_, names) = read("montecito::FE_LOST_BW.BR_ILOCK");
    for name in ["[core] br_interlock_cycles", "[core] trap_cycles", "[core] l2_tlb_cycles"] {
        assert!(names.contains(&name.to_string()), "{name} not in {names:?}");
    }
    assert!(!names.iter().any(|n| n.starts_with("[direction]") || n.starts_with("[indirect]")), "{names:?}");
}

/// A capture subevent reads what its event address register's mode captures (§3.3.8,
/// §3.3.9), which no signal carries: in cache mode the misses' latencies, which the
/// bus's, the devices' and (for data) the L2D data array's timings shape, and (for
/// fetches) the instruction prefetcher's reach; in TLB mode the translations' misses.
#[test]
fn an_ear_subevent_depends_on_what_its_mode_captures() {
    let names = |event: &str| montecito_reads(event).1;
    let data = names("montecito::DATA_EAR_CACHE_LAT1024");
    for name in ["[core] device_cycles", "[core] bus_ratio", "[core] victim_read_delay"] {
        assert!(data.contains(&name.to_string()), "{name} not in {data:?}");
    }
    assert!(!data.contains(&"[core] stream_lines".to_string()), "{data:?}");
    let fetch = names("montecito::L1I_EAR_CACHE_LAT4096");
    for name in ["[core] stream_lines", "[core] pvab_entries", "[core] line_clocks"] {
        assert!(fetch.contains(&name.to_string()), "{name} not in {fetch:?}");
    }
    assert!(!fetch.contains(&"[core] device_cycles".to_string()), "{fetch:?}");
    let tlb = names("montecito::DATA_EAR_TLB_ALL");
    assert!(tlb.contains(&"[l2_dtlb] entries".to_string()) && !tlb.contains(&"[core] bus_ratio".to_string()), "{tlb:?}");
    assert!(!tlb.contains(&"[l2_itlb] entries".to_string()), "{tlb:?}");
    let itlb = names("montecito::L1I_EAR_TLB_ALL");
    assert!(itlb.contains(&"[l1_itlb] entries".to_string()) && !itlb.contains(&"[l1_dtlb] entries".to_string()), "{itlb:?}");
}

#[test]
fn keys_refuse_what_their_structures_cannot_be() {
    let err = |text: &str| MontecitoConfig::new(2).with_overrides(text, "m.toml").unwrap_err().to_string();
    assert!(err("[direction]\nentries = 1000\n").contains("power of two"));
    assert!(err("[direction]\nhistory_bits = 21\n").contains("0..=20"));
    assert!(err("[indirect]\nentries = 64\nways = 3\n").contains("divide"));
    assert_eq!(err("[core]\nline_clocks = 1\n"), "m.toml: core.line_clocks = 1: must be in 2..=64");
    assert_eq!(err("[core]\nstream_lines = 0\n"), "m.toml: core.stream_lines = 0: must be in 1..=64");
    assert_eq!(err("[core]\npvab_entries = 65\n"), "m.toml: core.pvab_entries = 65: must be in 1..=64");
    // MMC63: the I/O bus takes at least one device read, or no device would answer.
    assert_eq!(err("[core]\ndevice_reads = 0\n"), "m.toml: core.device_reads = 0: must be in 1..=16");
    assert_eq!(err("[core]\ndevice_reads = 17\n"), "m.toml: core.device_reads = 17: must be in 1..=16");
    assert!(err("[core]\nbase_page = 32768\n").contains("base_page = 32768: must be a page size"));
    assert!(err("[direction]\nsize = 4\n").contains("unknown field `size`"));
    let arm1156 =
        Arm11Config::new(Arm11Core::Arm1156).with_overrides("[core]\nwalk_level_cycles = 20\n", "m.toml").unwrap_err().to_string();
    assert_eq!(arm1156, "m.toml: [core]: walk_level_cycles = 20: arm1156 has an MPU and no TLBs to refill or walk");
    let sparc = |chip, text: &str| SparcConfig::new(chip).with_overrides(text, "m.toml").unwrap_err().to_string();
    assert_eq!(
        sparc(SparcChip::Kt, "[direction]\nentries = 1024\n"),
        "m.toml: [direction]: sparc-kt has no such structure (it predicts every branch not taken)"
    );
    assert_eq!(
        sparc(SparcChip::Niagara, "[core]\nreturn_stack = 4\n"),
        "m.toml: [core.return_stack]: niagara has no such structure (it predicts every branch not taken)"
    );
    assert!(sparc(SparcChip::T4, "[btc]\nentries = 100\n").contains("must be a power of two"));
    assert!(sparc(SparcChip::T4, "[core]\nreturn_stack = 0\n").contains("core.return_stack = 0: must be in 1..=64"));
}
