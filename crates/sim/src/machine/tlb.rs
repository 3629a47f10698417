//! A translation lookaside buffer: which (address space, page) translations are cached.
//!
//! Only presence is modelled, not the physical address, because the counters a TLB
//! drives (misses, walks) depend on nothing else. It shares its set-and-way store, and
//! so its replacement policies, with the caches.

use super::replay::{Log, Replayed, Undo};
use super::sets::{Replacement, Sets};
use super::Moves;

/// The geometry and replacement policy of a TLB.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TlbConfig {
    pub entries: u32,
    /// `entries == ways` means fully associative.
    pub ways: u32,
    pub replacement: Replacement,
}

impl TlbConfig {
    /// Number of sets (0 for ways = 0, which `check` refuses, rather than a division by zero).
    pub fn sets(&self) -> u64 {
        u64::from(self.entries.checked_div(self.ways).unwrap_or(0))
    }

    /// Bytes between two addresses of `page`-sized pages that index the same set: sets * page.
    pub fn set_span(&self, page: u64) -> u64 {
        self.sets().saturating_mul(page)
    }

    /// Refuse a geometry the model cannot hold; the message names the field and the valid range.
    pub fn check(&self) -> Result<(), String> {
        let Self { entries, ways, .. } = *self;
        if !(1..=4096).contains(&entries) {
            return Err(format!("TLB entries = {entries}: must be in 1..=4096"));
        }
        if ways == 0 || entries % ways != 0 {
            return Err(format!("TLB ways = {ways}: must be at least 1 and divide entries = {entries}"));
        }
        let sets = self.sets();
        if !sets.is_power_of_two() {
            return Err(format!("TLB sets = entries / ways = {sets}: must be a power of two"));
        }
        Ok(())
    }
}

/// The valid flag in an entry's second word, which also holds log2(page size) in bits
/// 32..39 and the context in bits 0..32; the first word is the page base address.
const VALID: u64 = 1 << 63;

/// The page size an entry's second word records (0 for the log2 of 64 that a page size of 0 leaves).
fn page_size(meta: u64) -> u64 {
    1u64.checked_shl((meta >> 32) as u32 & 0x7f).unwrap_or(0)
}

/// A TLB: translations of (context, page-aligned virtual address, page size).
#[derive(Debug, Clone)]
pub struct Tlb {
    config: TlbConfig,
    set_mask: u64,
    sets: Sets<2>,
    /// The entry the last access found or inserted: it is present, and hitting it
    /// again changes nothing (under LRU it is already its set's most recent), so a
    /// run of accesses to one page looks the set up once. All zero for none.
    last: [u64; 2],
    /// The operations and what they returned, while recording (`machine::replay`).
    log: Log<Logged>,
}

/// One operation on a TLB and what it returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Logged {
    Access { addr: u64, page: u64, context: u32, out: bool },
    Contains { addr: u64, page: u64, context: u32, out: bool },
    FlushContext { context: u32, out: usize },
    Flush,
}

impl Tlb {
    /// An empty TLB; `config` must have passed `check`.
    pub fn new(config: TlbConfig) -> Tlb {
        debug_assert_eq!(config.check(), Ok(()));
        let sets = config.sets();
        Tlb {
            config,
            set_mask: sets.wrapping_sub(1),
            sets: Sets::new(sets as usize, config.ways as usize, config.replacement),
            last: [0; 2],
            log: Log::default(),
        }
    }

    pub fn config(&self) -> &TlbConfig {
        &self.config
    }

    /// The set and the entry of the translation of `addr`. `page` must be a power of two;
    /// anything else still gives some set and entry rather than a panic.
    #[inline]
    fn locate(&self, addr: u64, page: u64, context: u32) -> (usize, [u64; 2]) {
        debug_assert!(page.is_power_of_two(), "page size {page} is not a power of two");
        let bits = page.trailing_zeros();
        let set = (addr.checked_shr(bits).unwrap_or(0) & self.set_mask) as usize;
        (set, [addr & !page.wrapping_sub(1), VALID | (u64::from(bits) << 32) | u64::from(context)])
    }

    /// Look up the translation of `addr` in a page of `page` bytes (a power of two) of
    /// address space `context`, inserting it on a miss (replacement as for caches, invalid
    /// entries first). Returns whether it hit. The set is `(addr / page) % sets`.
    #[inline]
    pub fn access(&mut self, addr: u64, page: u64, context: u32) -> bool {
        let out = self.lookup(addr, page, context);
        self.log.note(|| Logged::Access { addr, page, context, out });
        out
    }

    #[inline]
    fn lookup(&mut self, addr: u64, page: u64, context: u32) -> bool {
        let (set, entry) = self.locate(addr, page, context);
        if entry == self.last {
            return true;
        }
        self.last = entry;
        match self.sets.find(set, |e| *e == entry) {
            Some(way) => {
                self.sets.touch(set, way);
                true
            }
            None => {
                self.sets.insert(set, entry);
                false
            }
        }
    }

    /// Whether the translation is present; no state changes.
    #[inline]
    pub fn contains(&self, addr: u64, page: u64, context: u32) -> bool {
        let (set, entry) = self.locate(addr, page, context);
        let out = self.sets.find(set, |e| *e == entry).is_some();
        self.log.note(|| Logged::Contains { addr, page, context, out });
        out
    }

    /// Drop every entry of `context` (an address-space switch without ASIDs, or a flush of
    /// one ASID): returns how many were dropped.
    pub fn flush_context(&mut self, context: u32) -> usize {
        self.last = [0; 2];
        let out = self.sets.retain(|[_, meta]| *meta as u32 != context);
        self.log.note(|| Logged::FlushContext { context, out });
        out
    }

    /// Drop every entry.
    pub fn flush(&mut self) {
        self.last = [0; 2];
        self.sets.retain(|_| false);
        self.log.note(|| Logged::Flush);
    }

    /// Number of valid entries.
    pub fn occupancy(&self) -> usize {
        self.sets.occupancy()
    }

    /// As [`Cache::canonical`](super::cache::Cache::canonical), per entry: `key(page base
    /// address)`, page size, context, or `u64::MAX, 0, 0` when invalid, in the same
    /// canonical order.
    pub fn canonical(&self, key: &dyn Fn(u64) -> u64, out: &mut Vec<u64>) {
        self.sets.canonical(out, |&[base, meta], out| match meta {
            0 => out.extend([u64::MAX, 0, 0]),
            _ => out.extend([key(base), page_size(meta), u64::from(meta as u32)]),
        });
    }

    /// As [`Cache::relocate`](super::cache::Cache::relocate), on page base addresses: the
    /// caller guarantees each move is a multiple of `set_span(page)` of the entry's page.
    pub fn relocate(&mut self, to: &dyn Fn(u64) -> Option<u64>) {
        self.last = [0; 2];
        let config = self.config;
        for [base, meta] in self.sets.valid_mut() {
            if let Some(moved) = to(*base) {
                let span = config.set_span(page_size(*meta));
                debug_assert_eq!(moved.wrapping_sub(*base) % span.max(1), 0, "relocating {base:#x} to {moved:#x} changes its set");
                *base = moved;
            }
        }
    }
}

impl Replayed for Tlb {
    fn record(&mut self, on: bool) {
        self.log.record(on);
    }

    fn recorded(&self) -> usize {
        self.log.recorded()
    }

    fn forget(&mut self, n: usize) {
        self.log.forget(n);
    }

    fn replay(&mut self, range: std::ops::Range<usize>, to: &Moves) -> Option<Undo> {
        let ops = self.log.take();
        let moved = |a: u64| (to.page)(a).unwrap_or(a);
        self.sets.begin();
        let mut same = true;
        for op in ops.ops(range) {
            same = match *op {
                Logged::Access { addr, page, context, out } | Logged::Contains { addr, page, context, out } => {
                    let addr = moved(addr);
                    let now = if matches!(op, Logged::Access { .. }) {
                        self.access(addr, page, context)
                    } else {
                        self.contains(addr, page, context)
                    };
                    now == out
                }
                Logged::FlushContext { context, out } => self.flush_context(context) == out,
                Logged::Flush => {
                    self.flush();
                    true
                }
            };
            if !same {
                break;
            }
        }
        self.log.put_back(ops);
        let journal = Undo::Pages(self.sets.end());
        if same {
            Some(journal)
        } else {
            self.undo(journal);
            None
        }
    }

    fn undo(&mut self, undo: Undo) {
        self.last = [0; 2];
        if let Undo::Pages(journal) = undo {
            self.sets.undo(journal);
        }
    }

    fn unchanged(&self, undo: &Undo) -> bool {
        matches!(undo, Undo::Pages(journal) if self.sets.unchanged(journal))
    }

    fn moves(&self, range: std::ops::Range<usize>, to: &Moves) -> bool {
        self.log.any(range, |op| match *op {
            Logged::Access { addr, .. } | Logged::Contains { addr, .. } => (to.page)(addr).is_some(),
            Logged::FlushContext { .. } | Logged::Flush => false,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Replacement::Lru;

    const PAGE: u64 = 4096;
    const HUGE: u64 = 1 << 21;

    fn tlb(entries: u32, ways: u32) -> Tlb {
        Tlb::new(TlbConfig { entries, ways, replacement: Lru })
    }

    fn state(tlb: &Tlb) -> Vec<u64> {
        let mut out = Vec::new();
        tlb.canonical(&|a| a, &mut out);
        out
    }

    #[test]
    fn geometry_follows_the_config() {
        let config = TlbConfig { entries: 64, ways: 4, replacement: Lru };
        assert_eq!((config.sets(), config.set_span(PAGE)), (16, 16 * PAGE));
    }

    #[test]
    fn a_translation_hits_only_in_its_context() {
        let mut t = tlb(8, 8);
        assert!(!t.access(0x1000, PAGE, 1));
        assert!(t.access(0x1abc, PAGE, 1));
        assert!(!t.access(0x1000, PAGE, 2));
        assert!(t.contains(0x1000, PAGE, 1) && t.contains(0x1000, PAGE, 2) && !t.contains(0x1000, PAGE, 3));
    }

    #[test]
    fn a_translation_hits_only_with_its_page_size() {
        let mut t = tlb(8, 8);
        assert!(!t.access(0x1000, PAGE, 0));
        assert!(!t.access(0x1000, HUGE, 0));
        assert!(t.access(0x1fff, PAGE, 0));
        assert!(t.access(0x1f_f000, HUGE, 0));
        assert!(!t.contains(0x2000, PAGE, 0));
    }

    #[test]
    fn the_set_is_the_page_number_modulo_sets() {
        let mut t = tlb(2, 1);
        for page in [0, 1] {
            t.access(page * PAGE, PAGE, 0);
        }
        assert_eq!(t.occupancy(), 2);
        t.access(2 * PAGE, PAGE, 0);
        assert!(!t.contains(0, PAGE, 0) && t.contains(PAGE, PAGE, 0));
    }

    #[test]
    fn a_full_set_evicts_its_least_recently_used_entry() {
        let mut t = tlb(4, 4);
        for page in [0, 1, 2, 3, 0, 4] {
            t.access(page * PAGE, PAGE, 0);
        }
        assert!(t.contains(0, PAGE, 0) && !t.contains(PAGE, PAGE, 0));
    }

    #[test]
    fn flush_context_drops_only_that_context() {
        let mut t = tlb(8, 2);
        for (page, context) in [(0, 1), (1, 2), (2, 1), (3, 1), (4, 2)] {
            t.access(page * PAGE, PAGE, context);
        }
        assert_eq!(t.flush_context(1), 3);
        assert_eq!(t.occupancy(), 2);
        assert!(t.contains(PAGE, PAGE, 2) && t.contains(4 * PAGE, PAGE, 2));
    }

    #[test]
    fn flush_context_keeps_the_survivors_recency() {
        let mut t = tlb(4, 4);
        for (page, context) in [(0, 1), (1, 2), (2, 1), (3, 2)] {
            t.access(page * PAGE, PAGE, context);
        }
        t.flush_context(1);
        let invalid = [u64::MAX, 0, 0];
        assert_eq!(state(&t), [[3 * PAGE, PAGE, 2], [PAGE, PAGE, 2], invalid, invalid].concat());
    }

    #[test]
    fn flush_drops_everything() {
        let mut t = tlb(4, 2);
        t.access(0, PAGE, 0);
        t.access(HUGE, HUGE, 3);
        t.flush();
        assert_eq!(t.occupancy(), 0);
    }

    #[test]
    fn relocating_by_set_spans_keeps_translations_in_their_sets() {
        let mut t = tlb(8, 2);
        let span = t.config().set_span(PAGE);
        for page in [0, 1, 4] {
            t.access(page * PAGE, PAGE, 0);
        }
        t.relocate(&|base| (base != PAGE).then_some(base + 3 * span));
        assert!(t.access(3 * span, PAGE, 0) && t.access(PAGE, PAGE, 0) && t.access(4 * PAGE + 3 * span, PAGE, 0));
        assert_eq!(t.occupancy(), 3);
    }

    #[test]
    fn check_names_each_bad_field() {
        let good = TlbConfig { entries: 64, ways: 4, replacement: Lru };
        assert_eq!(good.check(), Ok(()));
        for (bad, field) in [
            (TlbConfig { entries: 0, ..good }, "entries"),
            (TlbConfig { entries: 8192, ..good }, "entries"),
            (TlbConfig { ways: 0, ..good }, "ways"),
            (TlbConfig { ways: 5, ..good }, "ways"),
            (TlbConfig { entries: 48, ways: 4, ..good }, "sets"),
        ] {
            let message = bad.check().expect_err(field);
            assert!(message.contains(field), "{message:?} does not name {field}");
        }
    }

    /// machine::replay: pages a period looked up, replayed a stream's move later, are
    /// the period's pages moved; a page the TLB answers otherwise undoes the replay.
    #[test]
    fn a_replay_moves_pages_and_undoes_a_different_answer() {
        let shift = |a: u64| (a >= 0x10_0000).then_some(a + 2 * PAGE);
        let none = |_| None;
        let to = Moves { line: &none, page: &shift };
        let mut t = tlb(8, 2);
        t.access(0x10_0000, PAGE, 1);
        let mut moved = t.clone();
        moved.access(0x10_2000, PAGE, 1);
        t.record(true);
        // A hit on the page present, a miss on the next one.
        assert!(t.access(0x10_0000, PAGE, 1));
        assert!(!t.access(0x10_1000, PAGE, 1));
        let mut expected = moved.clone();
        expected.access(0x10_2000, PAGE, 1);
        expected.access(0x10_3000, PAGE, 1);
        std::mem::swap(&mut moved.log, &mut t.log);
        let undo = moved.replay(0..2, &to).expect("the same answers two pages on");
        assert_eq!(state(&moved), state(&expected));
        moved.undo(undo);
        // Now the first page moved is absent: the recorded hit is a miss.
        let before = state(&moved);
        moved.flush();
        let flushed = state(&moved);
        assert!(moved.replay(0..2, &to).is_none());
        assert_ne!(before, flushed);
        assert_eq!(state(&moved), flushed);
    }
}
