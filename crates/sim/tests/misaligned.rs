//! Misaligned accesses (`Op::misaligned`): what each machine does with a load or store
//! at an address that is not a multiple of its size. Montecito performs a load within
//! an aligned 8 bytes and a store within an aligned 16 bytes of a write-back page, and
//! counts them (§4.15 MISALIGNED_LOADS_RETIRED, MISALIGNED_STORES_RETIRED; ERRATA
//! MMC56); ARMv6 performs words and halfwords (MARM15); SPARC performs none (MSP30).
//! What the hardware refuses traps to the kernel, which performs the access.

mod common;

use pmukit_sim::machine::arm11::{Arm11Config, Arm11Core};
use pmukit_sim::machine::montecito::MontecitoConfig;
use pmukit_sim::machine::run::Skipping;
use pmukit_sim::machine::sparc::{SparcChip, SparcConfig};
use pmukit_sim::machine::{self};
use pmukit_sim::program::{builtin, ia64, Access, DataStream, Memory, Op, Pattern, Phase, Program};
use pmukit_sim::stream::{Signal, Totals};

const N: u64 = 800;

/// A loop over packed 6-byte records (a 2-byte tag, then a 4-byte value), reading (or
/// writing, `store`) each record's value, `offset` bytes into it: at offset 2 the
/// values sit 2, 8, 14, 20, … bytes into the buffer.
fn records(store: bool, offset: u32, size: u8, memory: Memory) -> Program {
    let buffer = DataStream { stride: 6, footprint: 6 * N, ..DataStream::fixed(0x400_0000, memory) };
    let a = Access { stream: 0, offset, size, use_next: !store };
    let access = if store { Op::Store(a) } else { Op::Load(a) };
    let body = vec![access, Op::Int, Op::Int, Op::Branch { target: 0x1_0000, when: Pattern::Loop }];
    common::program_of(common::phase(body, N, vec![buffer]))
}

fn montecito(p: Program, skipping: Skipping) -> Totals {
    Totals::of(machine::montecito(MontecitoConfig::new(1), ia64::compiled(p), skipping), u64::MAX, |_| true)
}

/// The access's addresses, iteration by iteration.
fn addresses(offset: u64) -> impl Iterator<Item = u64> {
    (0..N).map(move |k| 0x400_0000 + 6 * k + offset)
}

#[test]
fn what_is_misaligned() {
    let a = |offset, size| Access { stream: 0, offset, size, use_next: false };
    assert!(Op::Load(a(0, 4)).misaligned(0x1002));
    assert!(!Op::Load(a(0, 2)).misaligned(0x1002));
    assert!(!Op::Load(a(0, 1)).misaligned(0x1003));
    assert!(Op::Store(a(0, 8)).misaligned(0x1004));
    assert!(Op::Atomic(a(0, 4)).misaligned(0x1001));
    // A 16-byte transfer wants 16; a 3-byte one (a trace's) the next power of two.
    assert!(Op::FpLoad(a(0, 16)).misaligned(0x1008));
    assert!(Op::Load(a(0, 3)).misaligned(0x1002));
    // Prefetches, line transfers and flushes are aligned by what they are.
    assert!(!Op::Prefetch(a(0, 8)).misaligned(0x1001));
    assert!(!Op::BlockLoad(a(0, 64)).misaligned(0x1008));
    assert!(!Op::FlushCode(a(0, 8)).misaligned(0x1001));
}

/// §4.15 MISALIGNED_LOADS_RETIRED: "PSR.ac = 0 and not crossing the 0-7 or 8-15 byte
/// boundary is the only time it will not trap". Of the values at 2, 8, 14, 20 mod 24,
/// the first is misaligned within its 8 bytes and performed, the third crosses (bytes
/// 6-9) and takes the Unaligned Data Reference fault; a faulted load is not counted.
#[test]
fn mmc56_a_misaligned_load_within_8_bytes_is_performed_and_one_across_traps() {
    let within = addresses(2).filter(|a| a % 4 != 0 && a % 8 + 4 <= 8).count() as u64;
    let across = addresses(2).filter(|a| a % 4 != 0 && a % 8 + 4 > 8).count() as u64;
    assert_eq!((within, across), (N / 4, N / 4));
    let cfg = MontecitoConfig::new(1);
    // The loop's text faults in as it first runs (MMC58).
    let text = cfg.trap_cycles + cfg.page_fault_cycles;
    for skipping in [Skipping::Off, Skipping::On] {
        let t = montecito(records(false, 2, 4, Memory::Cacheable), skipping);
        assert_eq!(t.get(Signal::MisalignedReads), within, "{skipping:?}");
        assert_eq!(t.get(Signal::ExceptionFlushCycles), text + across * (cfg.trap_cycles + cfg.unaligned_cycles), "{skipping:?}");
    }
    // The tags at 0, 6, 12, 18: aligned halfwords, nothing to count.
    let t = montecito(records(false, 0, 2, Memory::Cacheable), Skipping::Off);
    assert_eq!((t.get(Signal::MisalignedReads), t.get(Signal::ExceptionFlushCycles)), (0, text));
}

/// §4.15 MISALIGNED_STORES_RETIRED: "not crossing the 0-15 byte boundary of a WB page
/// is the only time it will not trap". Of the misaligned values (every other), one in
/// four crosses a 16-byte boundary; to uncacheable memory every one traps.
#[test]
fn mmc56_a_misaligned_store_within_16_bytes_of_a_write_back_page_is_performed() {
    let misaligned = addresses(2).filter(|a| a % 4 != 0).count() as u64;
    let across = addresses(2).filter(|a| a % 4 != 0 && a % 16 + 4 > 16).count() as u64;
    assert_eq!((misaligned, across), (N / 2, N / 8));
    let cfg = MontecitoConfig::new(1);
    let trap = cfg.trap_cycles + cfg.unaligned_cycles;
    // The loop's text faults in as it first runs (MMC58).
    let text = cfg.trap_cycles + cfg.page_fault_cycles;
    let t = montecito(records(true, 2, 4, Memory::Cacheable), Skipping::Off);
    assert_eq!(t.get(Signal::MisalignedWrites), misaligned - across);
    assert_eq!(t.get(Signal::ExceptionFlushCycles), text + across * trap);
    let t = montecito(records(true, 2, 4, Memory::NonCacheable), Skipping::Off);
    assert_eq!(t.get(Signal::MisalignedWrites), 0);
    assert_eq!(t.get(Signal::ExceptionFlushCycles), text + misaligned * trap);
}

/// MARM15: ARMv6 performs a misaligned word load (SCTLR.U, as Linux sets it) at the
/// cost of an aligned one; a doubleword needs a word-aligned address, and one that is
/// not takes an alignment fault whose handler performs it.
#[test]
fn marm15_armv6_performs_misaligned_words_and_faults_on_doublewords() {
    let cfg = Arm11Config::new(Arm11Core::Arm1176);
    let arm = |p| Totals::of(machine::arm11(cfg.clone(), p, Skipping::Off), u64::MAX, |_| true).cycles;
    // The tags: halfwords at even addresses.
    let aligned = arm(records(false, 0, 2, Memory::Cacheable));
    let words = arm(records(false, 2, 4, Memory::Cacheable));
    assert!(words.abs_diff(aligned) < N, "{words} against {aligned}");
    // Doublewords at 2, 8, 14, 20 mod 24: half are not word-aligned.
    let doubles = arm(records(false, 2, 8, Memory::Cacheable));
    let fault = 2 * cfg.exception_cycles + cfg.unaligned_cycles;
    assert!(doubles >= aligned + N / 2 * fault, "{doubles} against {aligned}");
    assert!(doubles < aligned + N / 2 * (fault + 20), "{doubles} against {aligned}");
}

/// MSP30: SPARC performs no misaligned access: each traps, and the kernel performs it.
#[test]
fn msp30_sparc_traps_on_every_misaligned_access() {
    let cfg = SparcConfig::new(SparcChip::T4);
    let t4 = |p| Totals::of(machine::sparc(cfg.clone(), p, Skipping::Off), u64::MAX, |_| true).cycles;
    let aligned = t4(records(false, 0, 2, Memory::Cacheable));
    let misaligned = t4(records(false, 2, 4, Memory::Cacheable));
    let trap = cfg.trap_cycles + cfg.unaligned_cycles;
    assert!(misaligned >= aligned + N / 2 * trap, "{misaligned} against {aligned}");
    assert!(misaligned < aligned + N / 2 * (trap + 20), "{misaligned} against {aligned}");
}

/// `services`' record services read a record's value past its 2-byte count and store
/// the status the same way: Montecito performs both (MISALIGNED_LOADS_RETIRED and
/// _STORES_ count), and takes no unaligned fault.
#[test]
fn services_misaligned_accesses_are_performed_on_montecito() {
    let t = Totals::of(
        machine::montecito(MontecitoConfig::new(1), ia64::compiled(builtin::program("services", 3, 1).unwrap()), Skipping::On),
        20_000_000,
        |_| true,
    );
    let (reads, writes) = (t.get(Signal::MisalignedReads), t.get(Signal::MisalignedWrites));
    assert!(reads > 0 && writes > 0 && reads + writes >= 10, "{reads} reads, {writes} writes");
}

/// Table 4-126, SYLL_NOT_DISPERSED.MLX: "re-steers to non-0 syllable. … Dispersal could
/// take 0-2 syllable hit depending on which syllable we re-steer to" (ERRATA MMC60).
/// With an add before it, each record's load is its bundle's second instruction; the
/// loads that cross 8 bytes take the Unaligned Data Reference fault, and the handler's
/// `rfi` goes back to that slot: the first issue group after it starts one syllable
/// into the bundle, and has one fewer to fill. The loop's text faults in at a branch
/// target, the first slot, which costs none.
#[test]
fn mmc60_a_faults_return_to_a_later_slot_leaves_the_slots_before_it() {
    // A bundle starts at every third instruction: 0x1_0008 is one.
    let entry = 0x1_0008;
    let buffer = DataStream { stride: 6, footprint: 6 * N, ..DataStream::fixed(0x400_0000, Memory::Cacheable) };
    let load = Op::Load(Access { stream: 0, offset: 2, size: 4, use_next: true });
    let body = vec![Op::Int, load, Op::Int, Op::Branch { target: entry, when: Pattern::Loop }];
    let p = || common::program_of(Phase { entry, ..common::phase(body.clone(), N, vec![buffer]) });
    let across = N / 4;
    for skipping in [Skipping::Off, Skipping::On] {
        let t = Totals::of(machine::montecito(MontecitoConfig::new(1), ia64::compiled(p()), skipping), u64::MAX, |_| true);
        assert_eq!(t.get(Signal::ResteerSyllables), across, "{skipping:?}");
    }
}
