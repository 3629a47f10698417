//! Programs that write code and make it coherent with instruction fetch
//! (`Op::FlushCode`) on every machine (ARM11, SPARC ERRATA MSP22, Montecito MMC35).

mod common;

use pmukit_sim::machine::arm11::{Arm11Config, Arm11Core};
use pmukit_sim::machine::montecito::MontecitoConfig;
use pmukit_sim::machine::run::Skipping;
use pmukit_sim::machine::sparc::{SparcChip, SparcConfig};
use pmukit_sim::machine::{self};
use pmukit_sim::program::{Access, DataStream, Memory, Op, Pattern, Program, INSN};
use pmukit_sim::stream::{Signal, Totals};

const ITERATIONS: u64 = 64;

/// A loop that patches its own first instruction and flushes the line each iteration
/// (`flush`), or only stores to it.
fn patching(flush: bool) -> Program {
    let patch = Access { stream: 0, offset: 0, size: 8, use_next: false };
    let mut body = vec![Op::Store(patch), Op::Int];
    if flush {
        body.push(Op::FlushCode(patch));
    }
    body.push(Op::Branch { target: 0x1_0000, when: Pattern::Always });
    common::one_phase(body, ITERATIONS, DataStream::fixed(0x1_0000, Memory::Cacheable))
}

#[test]
fn code_flushes_on_every_machine() {
    // ARM11 and SPARC: the instruction line goes, so the branch after the flush
    // fetches it again: once more than the first fetch per iteration.
    let arm = |p| Totals::of(machine::arm11(Arm11Config::new(Arm11Core::Arm1176), p, Skipping::On), u64::MAX, |_| true);
    assert_eq!(arm(patching(true)).get(Signal::ICacheMisses), 1 + ITERATIONS);
    assert_eq!(arm(patching(false)).get(Signal::ICacheMisses), 1);
    let t4 = |p| Totals::of(machine::sparc(SparcConfig::new(SparcChip::T4), p, Skipping::On), u64::MAX, |_| true);
    assert_eq!(t4(patching(true)).get(Signal::ICacheMisses), 1 + ITERATIONS);
    assert_eq!(t4(patching(false)).get(Signal::ICacheMisses), 1);
    // Montecito: each fc is a BIL whose snoop reaches the L1I, and finds the loop's
    // line (fetched at its bundle address) in the L2I when its refill from memory
    // has reached it.
    let cfg = MontecitoConfig { threads: 1, ..MontecitoConfig::new(1) };
    let m = Totals::of(machine::montecito(cfg, patching(true), Skipping::On), u64::MAX, |_| true);
    assert_eq!(m.get(Signal::CodeFlushes), ITERATIONS);
    assert!((1..=ITERATIONS).contains(&m.get(Signal::L2iSnoopHits)), "{}", m.get(Signal::L2iSnoopHits));
    assert_eq!(m.get(Signal::BusInvalidates), 0, "an fc's BIL is not a store's upgrade");
    // The store left the line modified: the fc writes it back, and its BIL meets the
    // write-back in the in-order queue (SI_IOQ_COLLISIONS) unless the write-back waits
    // for one of the two write data buffers (MMC24) until the BIL, whose request goes
    // out at once, has left the queue: the loop makes writes faster than the bus
    // takes them.
    assert_eq!(m.get(Signal::MemoryWrites), ITERATIONS);
    let met = m.get(Signal::SiIoqCollisions);
    assert!((ITERATIONS / 4..ITERATIONS).contains(&met), "{met}");
    // The BIL's request phase meets the write-back in the write address queue when the
    // write has its data buffer but not yet its own request phase (SI_WAQ_COLLISIONS).
    let waq = m.get(Signal::SiWaqCollisions);
    assert!((1..ITERATIONS).contains(&waq), "{waq}");
    let cfg = MontecitoConfig { threads: 1, ..MontecitoConfig::new(1) };
    let stores = Totals::of(machine::montecito(cfg, patching(false), Skipping::On), u64::MAX, |_| true);
    assert_eq!((stores.get(Signal::CodeFlushes), stores.get(Signal::L2iSnoopHits), stores.get(Signal::SiIoqCollisions)), (0, 0, 0));
}

/// A loop of twelve instructions (four bundles, 48 bytes of 4-byte instructions) whose
/// code is in uncacheable memory (`uncached`) or not.
fn firmware_loop(uncached: bool, iterations: u64) -> Program {
    let body: Vec<Op> = (0..11).map(|_| Op::Int).chain([Op::Branch { target: 0x1_0000, when: Pattern::Loop }]).collect();
    let mut p = common::phase(body, iterations, vec![DataStream::fixed(0x100_0000, Memory::Cacheable)]);
    p.uncached_code = uncached;
    common::program_of(p)
}

/// Uncacheable code (MARM16, MSP31, MMC57): no cache holds it, so every pass of the
/// loop reads its code from memory again, a line at a time on ARM11 and SPARC (two
/// 32-byte lines), a bundle pair at a time on Montecito (32 bytes), none of
/// it an instruction cache miss; Montecito's L2I reads it as uncacheable demand
/// reads (L2I_UC_READS) with partial bus reads, and the next-line prefetcher reads
/// the pair after each one fetched the same way (MMC76).
#[test]
fn uncached_code_is_read_from_memory_on_every_pass() {
    let arm = |p| Totals::of(machine::arm11(Arm11Config::new(Arm11Core::Arm1176), p, Skipping::On), u64::MAX, |_| true);
    let t4 = |p| Totals::of(machine::sparc(SparcConfig::new(SparcChip::T4), p, Skipping::On), u64::MAX, |_| true);
    for (name, run) in [("arm1176", &arm as &dyn Fn(Program) -> Totals), ("t4", &t4)] {
        let (uc, cached) = (run(firmware_loop(true, ITERATIONS)), run(firmware_loop(false, ITERATIONS)));
        // Each more pass reads the two lines again; the cached loop reads them once.
        let longer = run(firmware_loop(true, 2 * ITERATIONS));
        assert_eq!(longer.get(Signal::MemoryReads) - uc.get(Signal::MemoryReads), 2 * ITERATIONS, "{name}");
        assert_eq!((uc.get(Signal::ICacheMisses), cached.get(Signal::ICacheMisses)), (0, 2), "{name}");
        assert!(uc.cycles > cached.cycles + ITERATIONS * 20, "{name}: {} against {}", uc.cycles, cached.cycles);
    }
    // Montecito fetches bundles: the body's twelve instructions from 0x1_0000 are in
    // bundles 0x1_0000 / 12 to 0x1_002c / 12 (ERRATA MMC2), 16 bytes each.
    let mut pairs: Vec<u64> = (0..12).map(|i| (0x1_0000 + INSN * i) / (3 * INSN) * 16 / 32).collect();
    pairs.dedup();
    let pairs = pairs.len() as u64;
    assert_eq!(pairs, 3);
    for skipping in [Skipping::Off, Skipping::On] {
        let mt = Totals::of(machine::montecito(MontecitoConfig::new(1), firmware_loop(true, ITERATIONS), skipping), u64::MAX, |_| true);
        // Per pass: the first pair on demand; the next-line prefetcher reads the
        // second, and the third and the one after the loop as each pair before them
        // is fetched, and the fetches of the second and third find them in the RAB or
        // the streaming buffer (MMC76). Each read is one flag of UncachedFetches.
        let (flags, reads) = (mt.get(Signal::UncachedFetches), mt.get(Signal::PartialMemoryReads));
        let (demand, prefetched) = (2 * reads - flags, flags - reads);
        assert_eq!((demand, prefetched), (ITERATIONS, pairs * ITERATIONS), "{skipping:?}");
        assert_eq!(mt.get(Signal::L1iFetchRabHits) + mt.get(Signal::IsbHits), (pairs - 1) * ITERATIONS, "{skipping:?}");
        assert_eq!(mt.get(Signal::ICacheReads), pairs * ITERATIONS, "{skipping:?}");
        assert_eq!((mt.get(Signal::ICacheMisses), mt.get(Signal::L1iPrefetches)), (0, pairs * ITERATIONS), "{skipping:?}");
        // The second pair comes behind the first, the third a memory latency after
        // the second is fetched: two latencies a pass, where three demand reads took
        // three.
        let memory = MontecitoConfig::new(1).memory_cycles;
        assert!(mt.cycles < ITERATIONS * memory * 5 / 2, "{} cycles", mt.cycles);
    }
}

/// `os` now and then reads the real-time clock through the firmware, whose code is
/// uncacheable: Montecito counts its fetches (L2I_UC_READS).
#[test]
fn the_os_workloads_clock_reads_fetch_uncached_code() {
    let program = pmukit_sim::program::builtin::program("os", 3, 2).unwrap();
    let program = pmukit_sim::program::ia64::compiled(program);
    let mt = Totals::of(machine::montecito(MontecitoConfig::new(2), program, Skipping::On), 10_000_000, |_| true);
    assert!(mt.get(Signal::UncachedFetches) > 0);
}
