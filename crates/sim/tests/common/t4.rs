//! The T4 strand counter model's test harness: spans of a strand, streams, and the
//! LDXA/STXA accesses a test drives the model through.

use pmukit_arch::sparc::t4::{self, counter_va, PCR_ASI, PIC_ASI};
use pmukit_sim::engine::{self, Exit};
use pmukit_sim::models::t4::T4Core;
use pmukit_sim::stream::{Block, Cursor, Privilege, Signal, Span};

pub const HYPER: Privilege = Privilege::Hyper;
pub const PRIV: Privilege = Privilege::KERNEL;
pub const USER: Privilege = Privilege::USER;

pub fn pcr(fields: &[(&str, u64)]) -> u64 {
    t4::PCR.encode(fields).unwrap()
}

/// `cycles` cycles of `strand` in `privilege`, with no signals yet.
pub fn span(strand: u8, privilege: Privilege, cycles: u64) -> Span {
    Span { thread: strand, privilege, ..Span::new(cycles, 0x1_0000) }
}

/// One instruction per cycle, a load and an L1 data cache miss (served by the L2)
/// with it.
pub fn busy(strand: u8, privilege: Privilege, cycles: u64) -> Span {
    span(strand, privilege, cycles)
        .with(Signal::Instructions, 1)
        .with(Signal::Loads, 1)
        .with(Signal::DCacheMisses, 1)
        .with(Signal::DCacheFillsFromCache, 1)
}

/// A stream repeating `body` for ever.
pub fn stream(body: Vec<Span>) -> Cursor {
    Cursor::new(Box::new(std::iter::repeat(Block { body, repeat: 1_000_000 })))
}

/// A stream running each span once, in order.
pub fn once(spans: Vec<Span>) -> Cursor {
    Cursor::new(Box::new(spans.into_iter().map(|s| Block { body: vec![s], repeat: 1 })))
}

pub fn run(core: &mut T4Core, cursor: &mut Cursor, cycles: u64) -> (u64, Exit) {
    engine::run(core, cursor, cycles)
}

pub fn set_pcr(core: &mut T4Core, strand: usize, n: usize, value: u64) {
    core.stxa(strand, PCR_ASI, counter_va(n), value, HYPER).unwrap();
}

pub fn set_pic(core: &mut T4Core, strand: usize, n: usize, value: u64) {
    core.stxa(strand, PIC_ASI, counter_va(n), value, HYPER).unwrap();
}

pub fn read_pcr(core: &mut T4Core, strand: usize, n: usize) -> u64 {
    core.ldxa(strand, PCR_ASI, counter_va(n), HYPER).unwrap()
}

pub fn read_pic(core: &mut T4Core, strand: usize, n: usize) -> u64 {
    core.ldxa(strand, PIC_ASI, counter_va(n), HYPER).unwrap()
}

/// PCR0 of strand 0 set to `value`, then PIC0 to `pic` (whatever the accesses count
/// lands before the PIC write overwrites it).
pub fn core_with(value: u64, pic: u64) -> T4Core {
    let mut core = T4Core::default();
    set_pcr(&mut core, 0, 0, value);
    set_pic(&mut core, 0, 0, pic);
    core
}

/// 2^32 - n: a PIC that overflows after n events.
pub fn minus(n: u64) -> u64 {
    (1u64 << 32) - n
}
