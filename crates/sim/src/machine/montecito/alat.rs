//! Data speculation: the compiler's advanced loads and the ALAT that checks them
//! (ERRATA MMC33). Programs are chip-independent; an Itanium compiler advances a load
//! above the stores it cannot prove apart from it, those to other data streams of
//! its loop, before it in the iteration or, software-pipelined, in the iteration
//! before (`ld.a` there, a check load `ld.c` where the load was). The ALAT keeps an
//! entry for each advanced load until its check; a store to the entry's bytes
//! removes it, and a check that finds no entry fails and reloads. The stores checked
//! are the iteration's own before the load: those of the iteration before, a loop's
//! other streams, are taken to be apart from it. The ALAT is empty between
//! iterations. Accesses to non-cacheable memory are volatile: nothing moves across
//! them.

use crate::program::{Memory, Phase};

/// §2.4 names the ALAT per thread; its size is the Itanium 2's 32 entries (MMC33).
pub(super) const ALAT_ENTRIES: usize = 32;

/// What a check load found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Check {
    /// Its entry was there: the advanced load's value stands.
    Passed,
    /// A store to its bytes removed the entry: the check reloads.
    Stored,
    /// The entry was displaced by later advanced loads (ALAT_CAPACITY_MISS).
    Displaced,
}

/// The loop's stored streams, the iteration's cacheable stores, and its advanced
/// loads so far.
#[derive(Debug, Clone, Default)]
pub(super) struct Alat {
    /// Bit `s` (streams 0-63) for each data stream of cacheable memory the loop stores to.
    stored: u64,
    /// Each store's stream and bytes, their end as wide as it needs to be: a store
    /// at the top of the address space ends past it.
    stores: Vec<(u8, u64, u128)>,
    advanced: usize,
}

impl Alat {
    /// The loop `phase` (re)starts: which of its streams it stores to.
    pub(super) fn enter(&mut self, phase: &Phase) {
        self.stored = 0;
        for a in phase.body.iter().filter(|op| op.writes()).filter_map(|op| op.access()) {
            if phase.streams.get(usize::from(a.stream)).is_some_and(|s| s.memory == Memory::Cacheable) {
                self.stored |= 1u64.checked_shl(u32::from(a.stream)).unwrap_or(0);
            }
        }
        self.begin();
    }

    /// A new iteration: nothing is in flight.
    pub(super) fn begin(&mut self) {
        self.stores.clear();
        self.advanced = 0;
    }

    /// A cacheable store of `size` bytes at `addr` to data stream `stream`.
    pub(super) fn store(&mut self, stream: u8, addr: u64, size: u64) {
        self.stores.push((stream, addr, u128::from(addr) + u128::from(size)));
    }

    /// Whether a cacheable load from data stream `stream` is advanced: its loop stores
    /// to another stream.
    pub(super) fn advances(&self, stream: u8) -> bool {
        self.stored & !1u64.checked_shl(u32::from(stream)).unwrap_or(0) != 0
    }

    /// A cacheable load of `size` bytes at `addr` from data stream `stream`: `None`
    /// when it is not advanced, else what its check finds.
    pub(super) fn load(&mut self, stream: u8, addr: u64, size: u64) -> Option<Check> {
        if !self.advances(stream) {
            return None;
        }
        self.advanced += 1;
        let end = u128::from(addr) + u128::from(size);
        Some(if self.stores.iter().any(|&(s, from, to)| s != stream && u128::from(from) < end && u128::from(addr) < to) {
            Check::Stored
        } else if self.advanced > ALAT_ENTRIES {
            Check::Displaced
        } else {
            Check::Passed
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::{Access, DataStream, Op, Phase};

    /// A loop over data streams 0 and 1 (cacheable) that stores to `stores`.
    fn phase(stores: &[u8]) -> Phase {
        Phase {
            privilege: crate::stream::Privilege::USER,
            context: 1,
            masks: Default::default(),
            entry: 0x1_0000,
            code_page: None,
            uncached_code: false,
            guest: false,
            body: stores.iter().map(|&stream| Op::Store(Access { stream, offset: 0, size: 8, use_next: false })).collect(),
            iterations: 1,
            streams: vec![DataStream::fixed(0x1000, Memory::Cacheable), DataStream::fixed(0x2000, Memory::Cacheable)],
            tables: Vec::new(),
            addresses: Vec::new(),
            dma: Vec::new(),
            watch: None,
            fp: Default::default(),
        }
    }

    #[test]
    fn a_load_is_advanced_when_its_loop_stores_to_another_stream() {
        let mut a = Alat::default();
        a.enter(&phase(&[]));
        assert_eq!(a.load(0, 0x100, 8), None, "no store in the loop");
        a.enter(&phase(&[0]));
        assert_eq!(a.load(0, 0x100, 8), None, "the same stream: the compiler sees the addresses");
        a.enter(&phase(&[0, 1]));
        assert_eq!(a.load(0, 0x100, 8), Some(Check::Passed), "above the store to stream 1, here or pipelined");
        a.store(1, 0x300, 8);
        assert_eq!(a.load(0, 0x304, 4), Some(Check::Stored), "the other stream's store wrote its bytes");
        a.begin();
        assert_eq!(a.load(0, 0x304, 4), Some(Check::Passed), "a new iteration");
    }

    #[test]
    fn more_advanced_loads_than_entries_displace_each_other() {
        let mut a = Alat::default();
        a.enter(&phase(&[1]));
        for i in 0..ALAT_ENTRIES as u64 {
            assert_eq!(a.load(0, 0x1000 + 8 * i, 8), Some(Check::Passed));
        }
        assert_eq!(a.load(0, 0x2000, 8), Some(Check::Displaced));
    }
}
