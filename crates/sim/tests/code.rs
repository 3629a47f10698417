//! Programs that write code and make it coherent with instruction fetch
//! (`Op::FlushCode`) on every machine (ARM11, SPARC ERRATA MSP22, Montecito MMC35).

mod common;

use pmukit_sim::machine::arm11::{Arm11Config, Arm11Core};
use pmukit_sim::machine::montecito::MontecitoConfig;
use pmukit_sim::machine::run::Skipping;
use pmukit_sim::machine::sparc::{SparcChip, SparcConfig};
use pmukit_sim::machine::{self};
use pmukit_sim::program::{Access, DataStream, Memory, Op, Pattern, Program};
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
