//! Demand paging (`DataStream::fresh`, `Phase::present`): a page of freshly mapped
//! memory faults on the first access that executes in it, on every machine (ERRATA
//! MARM14, MSP29, MMC55), and Montecito's speculative loads of a page not present are
//! NaT'd, their checks failing when the block runs (MMC55).

mod common;

use pmukit_arch::Catalog;
use pmukit_sim::machine::arm11::{Arm11Config, Arm11Core};
use pmukit_sim::machine::montecito::MontecitoConfig;
use pmukit_sim::machine::run::Skipping;
use pmukit_sim::machine::sparc::{SparcChip, SparcConfig};
use pmukit_sim::machine::{self};
use pmukit_sim::program::{ia64, Access, DataStream, Memory, Op, Pattern, Phase, PhaseError, Program};
use pmukit_sim::stat::{self, StatOptions};
use pmukit_sim::stream::{Signal, Totals, FAILED_CHECK_FP, FAILED_CHECK_INT, SPEC_NAT_TLB_FAULT};

/// 4 KB pages of 512-byte records: eight records a page, 32 pages.
const RECORD: u64 = 512;
const RECORDS: u64 = 256;
const PAGES: u64 = RECORDS * RECORD / 4096;

/// A loop over a mapped file's records: a flag's load, a skip (`when`) over the
/// record's load and its use, and the loop branch. `fresh` says whether the file is
/// freshly mapped; `fp` whether the record's field is a double.
fn phase(fresh: bool, when: Pattern, fp: bool) -> Phase {
    let flags = DataStream { stride: 8, footprint: RECORDS * 8, ..DataStream::fixed(0x200_0000, Memory::Cacheable) };
    let file = DataStream { stride: RECORD as i64, footprint: RECORDS * RECORD, fresh, ..DataStream::fixed(0x400_0000, Memory::Cacheable) };
    let record = Access { stream: 1, offset: 0, size: 8, use_next: true };
    let read = if fp { Op::FpLoad(record) } else { Op::Load(record) };
    let body = vec![
        Op::Load(Access { stream: 0, offset: 0, size: 4, use_next: true }),
        Op::Skip { over: 3, when },
        read,
        Op::Int,
        Op::Int,
        Op::Int,
        Op::Branch { target: 0x1_0000, when: Pattern::Loop },
    ];
    common::phase(body, RECORDS, vec![flags, file])
}

fn everywhere(p: &dyn Fn() -> Program) -> Vec<(&'static str, Totals)> {
    let all = |run: &mut dyn Iterator<Item = _>| Totals::of(run, u64::MAX, |_| true);
    let arm = Totals::of(machine::arm11(Arm11Config::new(Arm11Core::Arm1176), p(), Skipping::On), u64::MAX, |_| true);
    let t4 = Totals::of(machine::sparc(SparcConfig::new(SparcChip::T4), p(), Skipping::On), u64::MAX, |_| true);
    let mut mt = machine::montecito(MontecitoConfig::new(1), ia64::compiled(p()), Skipping::On);
    vec![("arm1176", arm), ("t4", t4), ("montecito", all(&mut mt))]
}

/// Each page faults once, at the first access that executes in it; the fault costs
/// each machine its handler: ARM11's data abort (entry, handler, return), SPARC's
/// handler after its TSB miss's trap, Montecito's Data Page Not Present fault.
#[test]
fn a_fresh_page_faults_once_on_every_machine() {
    let p = phase(true, Pattern::Never, false);
    assert_eq!((0..RECORDS).filter(|&k| !p.present(1, k)).count() as u64, PAGES);
    let fresh = everywhere(&|| common::program_of(phase(true, Pattern::Never, false)));
    let mapped = everywhere(&|| common::program_of(phase(false, Pattern::Never, false)));
    let arm = Arm11Config::new(Arm11Core::Arm1176);
    let t4 = SparcConfig::new(SparcChip::T4);
    let mt = MontecitoConfig::new(1);
    for ((name, f), (_, m)) in fresh.iter().zip(&mapped) {
        let handler = match *name {
            "arm1176" => 2 * arm.exception_cycles + arm.page_fault_cycles,
            "t4" => t4.page_fault_cycles,
            _ => {
                let traps = f.get(Signal::ExceptionFlushCycles) - m.get(Signal::ExceptionFlushCycles);
                assert_eq!(traps, PAGES * (mt.trap_cycles + mt.page_fault_cycles), "{name}");
                mt.trap_cycles + mt.page_fault_cycles
            }
        };
        assert!(f.cycles >= m.cycles + PAGES * handler, "{name}: {} against {}", f.cycles, m.cycles);
        assert!(f.cycles < m.cycles + PAGES * (handler + 200), "{name}: {} against {}", f.cycles, m.cycles);
    }
}

/// MMC55: the record's load is hoisted above the test as an `ld.s`, which issues in
/// every iteration; in a page not yet present it returns a NaT, the fault deferred by
/// the hardware. Where the block runs, its `chk.s` fails and the recovery code takes
/// the page fault: once for each page some iteration of which runs the block.
#[test]
fn mmc55_a_speculative_load_of_a_page_not_present_is_natted_and_its_check_fails() {
    // The block runs in iterations 3, 7, 11, ... (a quarter), wanted records.
    let when = Pattern::Bits { bits: 0x7777_7777_7777_7777, len: 64 };
    for fp in [false, true] {
        let p = phase(true, when, fp);
        let natted = (0..RECORDS).filter(|&k| !p.present(1, k)).count() as u64;
        let failed = (0..RECORDS).filter(|&k| !p.present(1, k) && p.executes(2, k)).count() as u64;
        assert_eq!((natted, failed), (4 * PAGES, PAGES), "a page's iterations 0-3 NaT, the fourth runs the block and fails");
        let cfg = MontecitoConfig::new(1);
        let t = Totals::of(machine::montecito(cfg.clone(), ia64::compiled(common::program_of(p)), Skipping::Off), u64::MAX, |_| true);
        // Each signal here carries one flag: its total is the flag's count times it.
        let (nat, check) = if fp { (0, FAILED_CHECK_FP) } else { (natted, FAILED_CHECK_INT) };
        assert_eq!(t.get(Signal::SpecNat), nat * u64::from(SPEC_NAT_TLB_FAULT), "SPEC_LOADS_NATTED counts integer loads only (fp {fp})");
        assert_eq!(t.get(Signal::FailedChecks), failed * u64::from(check), "fp {fp}");
        // The loop's text faults in as it first runs (MMC58): one page.
        assert_eq!(t.get(Signal::ExceptionFlushCycles), (failed + 1) * (cfg.trap_cycles + cfg.page_fault_cycles), "fp {fp}");
    }
}

/// A record's read whose value is the address of the next hoisted load (a record's
/// pointer into a table): both are hoisted, the second NaT'd by the first's NaT. The
/// first's check fails and its recovery code loads both, so the second's passes.
#[test]
fn mmc55_the_recovery_code_reloads_the_loads_hoisted_with_the_failed_one() {
    let when = Pattern::Bits { bits: 0x7777_7777_7777_7777, len: 64 };
    let mut p = phase(true, when, false);
    p.streams.push(DataStream::fixed(0x600_0000, Memory::Cacheable));
    p.body[3] = Op::Load(Access { stream: 2, offset: 0, size: 8, use_next: true });
    let failed = (0..RECORDS).filter(|&k| !p.present(1, k) && p.executes(2, k)).count() as u64;
    let natted = (0..RECORDS).filter(|&k| !p.present(1, k)).count() as u64;
    let t =
        Totals::of(machine::montecito(MontecitoConfig::new(1), ia64::compiled(common::program_of(p)), Skipping::Off), u64::MAX, |_| true);
    assert_eq!(t.get(Signal::FailedChecks), failed * u64::from(FAILED_CHECK_INT), "one failure a page, not two");
    let consumed = u64::from(pmukit_sim::stream::SPEC_NAT_CONSUMED);
    assert_eq!(t.get(Signal::SpecNat), natted * (u64::from(SPEC_NAT_TLB_FAULT) + consumed));
}

/// MD44 counts a switch's stall from the thread's last retirement; the fault's
/// handler retires instructions the machine does not simulate, so a switch decided by
/// the faulting access's L3 miss counts from the handler's end, far short of the
/// handler's 2,000 cycles: no switch here reaches 1024 (THREAD_SWITCH_STALL.GTE_1024,
/// class 9), though each follows a fault.
#[test]
fn md44_a_switch_after_a_page_fault_counts_its_stall_from_the_handlers_end() {
    let thread = |base: u64| {
        let file = DataStream { stride: 4096, footprint: 4096 * 400, fresh: true, ..DataStream::fixed(base, Memory::Cacheable) };
        let body = vec![
            Op::Load(Access { stream: 0, offset: 0, size: 8, use_next: true }),
            Op::Int,
            Op::Int,
            Op::Branch { target: 0x1_0000, when: Pattern::Loop },
        ];
        common::program_of(common::phase(body, 400, vec![file])).threads.remove(0)
    };
    let program = ia64::compiled(Program { threads: vec![thread(0x400_0000), thread(0x800_0000)], timer: None });
    let mut classes = std::collections::HashMap::new();
    common::profile(
        machine::montecito(MontecitoConfig::new(2), program, Skipping::Off),
        u64::MAX,
        |s| s.signals.get(Signal::ThreadSwitchStall),
        &mut classes,
    );
    assert!(classes.keys().any(|&c| c > 0), "the faulting accesses' misses switch threads: {classes:?}");
    assert!(classes.keys().all(|&c| c < 9), "{classes:?}");
}

/// `Phase::check` refuses a fresh stream `present` could not answer for.
#[test]
fn a_fresh_stream_walks_forward_once_through_one_instruction() {
    let mut wraps = phase(true, Pattern::Never, false);
    wraps.iterations = RECORDS + 1;
    assert_eq!(
        wraps.check(),
        Err(PhaseError::Fresh { stream: 1, why: "must not wrap within the phase's iterations (its footprint holds them all)" })
    );
    assert_eq!(
        wraps.check().unwrap_err().to_string(),
        "data stream 1 is freshly mapped, so it must not wrap within the phase's iterations (its footprint holds them all)"
    );
    let mut odd = phase(true, Pattern::Never, false);
    odd.streams[1].stride = 768;
    odd.streams[1].footprint = 768 * RECORDS;
    assert!(matches!(odd.check(), Err(PhaseError::Fresh { stream: 1, .. })));
    let mut prefetched = phase(true, Pattern::Never, false);
    prefetched.body[2] = Op::Prefetch(Access { stream: 1, offset: 0, size: 8, use_next: false });
    assert!(matches!(prefetched.check(), Err(PhaseError::Fresh { stream: 1, .. })));
    assert_eq!(phase(true, Pattern::Never, false).check(), Ok(()));
}

/// `os`'s mapped files count INST_FAILED_CHKS_RETIRED's masks and DEF_TLB_FAULT on
/// Montecito.
#[test]
fn the_os_workloads_mapped_files_fail_checks_on_montecito() {
    let cat = Catalog::builtin();
    let count = |event: &str| {
        let sel = cat.resolve(event, "montecito").unwrap();
        let opts = StatOptions { workload: "os".into(), seed: 5, cycles: 10_000_000, ..StatOptions::default() };
        stat::stat(&cat, std::slice::from_ref(&sel), &opts, &mut |_| {}).unwrap().events[0].count.unwrap()
    };
    let (int, fp, all) =
        (count("INST_FAILED_CHKS_RETIRED.INT"), count("INST_FAILED_CHKS_RETIRED.FP"), count("INST_FAILED_CHKS_RETIRED.ALL"));
    assert!(int > 0 && fp > 0, "{int} {fp}");
    assert_eq!(all, int + fp);
    assert!(count("SPEC_LOADS_NATTED.DEF_TLB_FAULT") > int, "a page's NaTs before the record that is wanted");
}

/// MMC58: a process's text on base pages is mapped as it first runs, as SPARC's is
/// (MSP21): the first walk of each of its pages in an address space finds the page
/// not present, and the kernel maps it (`trap_cycles` + `page_fault_cycles`); the I-EAR
/// sees the walk fault. The kernel's text and text on large pages never fault.
#[test]
fn mmc58_a_processs_first_fetch_of_a_code_page_faults_once() {
    use pmukit_sim::program::INSN;
    use pmukit_sim::stream::Privilege;
    // Straight-line code over 12,298 instructions (48 KB of bundles, on five 16 KB
    // pages from the first's middle), then back to the start.
    let mut body = vec![Op::Int; 3 * 4096 + 10];
    body.push(Op::Branch { target: 0x1_0000, when: Pattern::Always });
    let user = common::phase(body.clone(), 2, vec![DataStream::fixed(0x100_0000, Memory::Cacheable)]);
    // The bundles of its instructions (ERRATA MMC2), and the pages they are on.
    let mut pages: Vec<u64> = (0..body.len() as u64).map(|i| (0x1_0000 + INSN * i) / (3 * INSN) * 16 / (16 << 10)).collect();
    pages.dedup();
    let pages = pages.len() as u64;
    assert_eq!(pages, 5);
    let cfg = MontecitoConfig::new(1);
    let faults = |phases: Vec<Phase>| {
        let program = Program { threads: vec![Box::new(phases.into_iter())], timer: None };
        let t = Totals::of(machine::montecito(cfg.clone(), program, Skipping::Off), u64::MAX, |_| true);
        t.get(Signal::ExceptionFlushCycles) / (cfg.trap_cycles + cfg.page_fault_cycles)
    };
    assert_eq!(faults(vec![user.clone(), user.clone()]), pages, "the pages the code touches, once");
    assert_eq!(faults(vec![Phase { context: 2, ..user.clone() }, user.clone()]), 2 * pages, "each address space maps its own");
    assert_eq!(faults(vec![Phase { privilege: Privilege::KERNEL, ..user.clone() }]), 0);
    assert_eq!(faults(vec![Phase { code_page: Some(4 << 20), ..user }]), 0);
}

/// MARM17: ARM11 maps a process's text on small pages as it first runs: the first
/// walk of each page in an address space takes the prefetch abort and the kernel's
/// handler; the kernel's text, on sections, never does.
#[test]
fn marm17_a_processs_first_fetch_of_a_code_page_faults_once() {
    use pmukit_sim::stream::Privilege;
    // Straight-line code over three 4 KB pages and into a fourth, then back.
    let text = |entry: u64| {
        let mut body = vec![Op::Int; 3 * 1024 + 10];
        body.push(Op::Branch { target: entry, when: Pattern::Always });
        Phase { entry, ..common::phase(body, 2, vec![DataStream::fixed(0x100_0000, Memory::Cacheable)]) }
    };
    let user = text(0x1_0000);
    let cfg = Arm11Config::new(Arm11Core::Arm1176);
    let cycles = |phases: Vec<Phase>| {
        let program = Program { threads: vec![Box::new(phases.into_iter())], timer: None };
        Totals::of(machine::arm11(cfg.clone(), program, Skipping::Off), u64::MAX, |_| true).cycles
    };
    let fault = 2 * cfg.exception_cycles + cfg.page_fault_cycles;
    let once = cycles(vec![user.clone()]);
    // The second run of the same text maps nothing more; another address space maps
    // its own four pages.
    let twice = cycles(vec![user.clone(), user.clone()]);
    let other = cycles(vec![user.clone(), Phase { context: 2, ..user.clone() }]);
    assert!(other - twice >= 4 * fault && other - twice < 4 * (fault + 100), "{other} {twice}");
    let kernel = Phase { privilege: Privilege::KERNEL, ..text(0xC001_0000) };
    let on_sections = cycles(vec![kernel]);
    assert!(once >= on_sections + 4 * fault, "{once} {on_sections}");
}
