//! A set-associative, write-back cache of tags (no data).
//!
//! This is the simulator's hot path: entries live in the flat store of `super::sets`,
//! and an access allocates nothing.

pub use super::sets::Replacement;
use super::sets::Sets;

/// The geometry and policies of a cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheConfig {
    /// Capacity in bytes.
    pub size: u64,
    pub ways: u32,
    /// Line size in bytes.
    pub line: u64,
    pub replacement: Replacement,
    /// A write miss allocates the line (else the write bypasses the cache).
    pub write_allocate: bool,
}

impl CacheConfig {
    /// Number of sets (0 for a geometry `check` refuses, rather than a division by zero).
    pub fn sets(&self) -> u64 {
        self.size.checked_div(self.line.saturating_mul(u64::from(self.ways))).unwrap_or(0)
    }

    /// Bytes between two addresses that index the same set: sets * line. Relocating lines by
    /// a multiple of it keeps every line in its set.
    pub fn set_span(&self) -> u64 {
        self.sets() * self.line
    }

    /// `addr` rounded down to its line.
    pub fn line_of(&self, addr: u64) -> u64 {
        addr & !self.line.wrapping_sub(1)
    }

    /// Refuse a geometry the model cannot hold; the message names the field and the valid range.
    pub fn check(&self) -> Result<(), String> {
        let Self { size, ways, line, .. } = *self;
        if !line.is_power_of_two() || !(8..=4096).contains(&line) {
            return Err(format!("cache line = {line} bytes: must be a power of two in 8..=4096"));
        }
        if !(1..=64).contains(&ways) {
            return Err(format!("cache ways = {ways}: must be in 1..=64"));
        }
        if size > 1 << 30 {
            return Err(format!("cache size = {size} bytes: must be at most 1 GiB"));
        }
        let way_bytes = line * u64::from(ways);
        if size % way_bytes != 0 {
            return Err(format!("cache size = {size} bytes: must be a multiple of line * ways = {way_bytes}"));
        }
        let sets = self.sets();
        if !sets.is_power_of_two() {
            return Err(format!("cache sets = size / (line * ways) = {sets}: must be a power of two"));
        }
        Ok(())
    }
}

/// A line leaving the cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Victim {
    /// Its address.
    pub line: u64,
    /// It must be written back.
    pub dirty: bool,
    /// How many of its halves are dirty (0-2): caches that keep a dirty bit per half
    /// line (ARM11, AN195 Table 2 0xC) write back only those.
    pub halves: u8,
}

/// The outcome of an access.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lookup {
    pub hit: bool,
    /// The line was allocated by this access.
    pub allocated: bool,
    /// The line the allocation displaced.
    pub victim: Option<Victim>,
}

/// Flags in a way's word; the rest is the line address, whose low three bits are zero
/// because a line is at least 8 bytes. Each half of a line has its dirty bit.
const DIRTY_LOW: u64 = 1;
const VALID: u64 = 2;
const DIRTY_HIGH: u64 = 4;
const DIRTY: u64 = DIRTY_LOW | DIRTY_HIGH;
const FLAGS: u64 = DIRTY | VALID;

/// The line leaving a way whose word was `old`, if the way was valid.
fn victim(old: u64) -> Option<Victim> {
    let halves = ((old & DIRTY_LOW) + ((old & DIRTY_HIGH) >> 2)) as u8;
    (old != 0).then_some(Victim { line: old & !FLAGS, dirty: halves > 0, halves })
}

/// A set-associative, write-back cache (tags only, no data).
#[derive(Debug, Clone)]
pub struct Cache {
    config: CacheConfig,
    /// log2(line): the line number of an address is `addr >> line_bits`.
    line_bits: u32,
    set_mask: u64,
    /// One word per way: line address | VALID | DIRTY, or 0 when invalid.
    sets: Sets<1>,
    /// The line (as `locate`'s probe) and way of the last access, when it hit:
    /// hitting it again changes nothing but its dirty bits (under LRU it is already
    /// its set's most recent), so a run of accesses to one line looks the set up once.
    /// Every other change to the cache forgets it.
    last: Option<(u64, usize)>,
}

impl Cache {
    /// An empty cache; `config` must have passed `check`.
    pub fn new(config: CacheConfig) -> Cache {
        debug_assert_eq!(config.check(), Ok(()));
        let sets = config.sets();
        let ways = Sets::new(sets as usize, config.ways as usize, config.replacement);
        Cache { config, line_bits: config.line.trailing_zeros(), set_mask: sets.wrapping_sub(1), sets: ways, last: None }
    }

    pub fn config(&self) -> &CacheConfig {
        &self.config
    }

    /// The set of `addr`, and the word of its line (valid and dirty, to compare with `| DIRTY`).
    #[inline]
    fn locate(&self, addr: u64) -> (usize, u64) {
        (((addr >> self.line_bits) & self.set_mask) as usize, self.config.line_of(addr) | FLAGS)
    }

    #[inline]
    fn find(&self, set: usize, probe: u64) -> Option<usize> {
        self.sets.find(set, |e| (e[0] | DIRTY) == probe)
    }

    /// The dirty bit of the half of its line that `addr` is in.
    #[inline]
    fn half(&self, addr: u64) -> u64 {
        if addr & (self.config.line >> 1) == 0 {
            DIRTY_LOW
        } else {
            DIRTY_HIGH
        }
    }

    /// Allocates the line `probe` with the dirty bits `dirty`.
    #[inline]
    fn allocate(&mut self, set: usize, probe: u64, dirty: u64) -> Option<Victim> {
        self.last = None;
        let [old] = self.sets.insert(set, [(probe & !DIRTY) | dirty]);
        victim(old)
    }

    /// Look up the line holding `addr`. A hit updates replacement state (LRU: most recent)
    /// and, for a write, marks the half of the line `addr` is in dirty. A read miss
    /// allocates, evicting per the policy (an invalid way is always used first); a write
    /// miss allocates the line (that half dirty) only under write allocation, else the
    /// cache is unchanged.
    #[inline]
    pub fn access(&mut self, addr: u64, write: bool) -> Lookup {
        let (set, probe) = self.locate(addr);
        let dirty = if write { self.half(addr) } else { 0 };
        let found = match self.last {
            Some((line, way)) if line == probe => Some(way),
            _ => self.find(set, probe).map(|way| self.sets.touch(set, way)),
        };
        if let Some(way) = found {
            self.last = Some((probe, way));
            self.sets.get_mut(set, way)[0] |= dirty;
            return Lookup { hit: true, allocated: false, victim: None };
        }
        self.last = None;
        if write && !self.config.write_allocate {
            return Lookup { hit: false, allocated: false, victim: None };
        }
        Lookup { hit: false, allocated: true, victim: self.allocate(set, probe, dirty) }
    }

    /// The lines of the set `addr` indexes, way by way (under LRU most recent first),
    /// `None` for an invalid way; no state changes.
    pub fn set_lines(&self, addr: u64) -> impl Iterator<Item = Option<u64>> + '_ {
        let (set, _) = self.locate(addr);
        self.sets.set(set).iter().map(|&[word]| (word != 0).then_some(word & !FLAGS))
    }

    /// Whether the line holding `addr` is present; no state changes.
    #[inline]
    pub fn contains(&self, addr: u64) -> bool {
        let (set, probe) = self.locate(addr);
        self.find(set, probe).is_some()
    }

    /// Bring a line in without an access (a prefetch, or an inner level's write-back of
    /// the whole line): when present only `dirty` (both halves) ORs into it; otherwise it
    /// is allocated like a miss, and the victim returned.
    #[inline]
    pub fn fill(&mut self, addr: u64, dirty: bool) -> Option<Victim> {
        let (set, probe) = self.locate(addr);
        let dirty = if dirty { DIRTY } else { 0 };
        match self.find(set, probe) {
            Some(way) => {
                self.sets.get_mut(set, way)[0] |= dirty;
                None
            }
            None => self.allocate(set, probe, dirty),
        }
    }

    /// Remove the line holding `addr` (coherence invalidation, inclusion, a parity
    /// error): the line that left, when it was present.
    #[inline]
    pub fn invalidate(&mut self, addr: u64) -> Option<Victim> {
        let (set, probe) = self.locate(addr);
        let way = self.find(set, probe)?;
        self.last = None;
        let [old] = self.sets.remove(set, way);
        victim(old)
    }

    /// Whether the line holding `addr` is present with a dirty half; no state changes.
    pub fn dirty(&self, addr: u64) -> bool {
        let (set, probe) = self.locate(addr);
        self.find(set, probe).is_some_and(|way| self.sets.set(set)[way][0] & DIRTY != 0)
    }

    /// Clear the dirty bits of the line holding `addr`, keeping it (a coherence
    /// downgrade, or a clean, that wrote its data back): the halves that were dirty.
    pub fn clean(&mut self, addr: u64) -> u8 {
        let (set, probe) = self.locate(addr);
        let Some(way) = self.find(set, probe) else { return 0 };
        let word = &mut self.sets.get_mut(set, way)[0];
        let halves = victim(*word).map_or(0, |v| v.halves);
        *word &= !DIRTY;
        halves
    }

    /// Number of valid lines.
    pub fn occupancy(&self) -> usize {
        self.sets.occupancy()
    }

    /// The complete replacement-relevant state as numbers, to prove two moments of a
    /// simulation equivalent: per set in index order, per way in canonical order (LRU: most
    /// to least recently used; round-robin: way order, then the set's pointer; random: way
    /// order, and once at the end the generator state), `key(line address)` and the dirty
    /// bits of its halves, or `u64::MAX, 0` for an invalid way. Caches with equal states under the same
    /// `key` behave identically from then on, for addresses that `key` maps injectively.
    pub fn canonical(&self, key: &dyn Fn(u64) -> u64, out: &mut Vec<u64>) {
        self.sets.canonical(out, |&[word], out| match word {
            0 => out.extend([u64::MAX, 0]),
            _ => out.extend([key(word & !FLAGS), word & DIRTY]),
        });
    }

    /// Move lines: every valid line address `a` for which `to(a)` is `Some(b)` becomes `b`,
    /// keeping its way, dirty bit and replacement position. The caller guarantees that
    /// `b - a` is a multiple of `set_span()`, so the set does not change, and that no two
    /// lines of a set end up equal.
    pub fn relocate(&mut self, to: &dyn Fn(u64) -> Option<u64>) {
        self.last = None;
        let span = self.config.set_span();
        for [word] in self.sets.valid_mut() {
            let line = *word & !FLAGS;
            if let Some(moved) = to(line) {
                debug_assert_eq!(moved.wrapping_sub(line) % span, 0, "relocating {line:#x} to {moved:#x} changes its set");
                *word = moved | (*word & FLAGS);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use Replacement::{Lru, Random, RoundRobin};

    fn config(size: u64, ways: u32, replacement: Replacement) -> CacheConfig {
        CacheConfig { size, ways, line: 16, replacement, write_allocate: true }
    }

    /// 2 sets of 2 ways of 16-byte lines: 0, 32, 64, 96 and 128 share set 0.
    fn small(replacement: Replacement) -> Cache {
        Cache::new(config(64, 2, replacement))
    }

    /// The victims of reading `addrs` in turn.
    fn victims(cache: &mut Cache, addrs: &[u64]) -> Vec<Option<u64>> {
        addrs.iter().map(|&a| cache.access(a, false).victim.map(|v| v.line)).collect()
    }

    fn state(cache: &Cache) -> Vec<u64> {
        let mut out = Vec::new();
        cache.canonical(&|a| a, &mut out);
        out
    }

    #[test]
    fn geometry_follows_the_config() {
        let c = CacheConfig { size: 32768, ways: 4, line: 64, replacement: Lru, write_allocate: false };
        assert_eq!((c.sets(), c.set_span(), c.line_of(0x1234)), (128, 8192, 0x1200));
    }

    #[test]
    fn lru_evicts_the_least_recently_used_way() {
        let mut c = small(Lru);
        assert_eq!(victims(&mut c, &[0, 32, 0, 64, 16, 0, 96]), [None, None, None, Some(32), None, None, Some(64)]);
    }

    #[test]
    fn lru_orders_four_ways_by_recency() {
        let mut c = Cache::new(config(64, 4, Lru));
        assert_eq!(victims(&mut c, &[0, 16, 32, 48, 16, 0, 64, 80]), [None, None, None, None, None, None, Some(32), Some(48)]);
        assert_eq!(state(&c), [80, 0, 64, 0, 0, 0, 16, 0]);
    }

    #[test]
    fn round_robin_evicts_ways_in_turn_per_set() {
        let mut c = small(RoundRobin);
        assert_eq!(
            victims(&mut c, &[0, 32, 0, 64, 96, 128, 16, 48, 80]),
            [None, None, None, Some(0), Some(32), Some(64), None, None, Some(16)]
        );
    }

    #[test]
    fn random_evicts_the_pinned_generator_choices() {
        let mut c = Cache::new(config(64, 4, Random));
        let expected = [None, None, None, None, Some(48), Some(16), Some(80), Some(0), Some(112), Some(32), Some(144), Some(64)];
        assert_eq!(victims(&mut c, &[0, 16, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176]), expected);
        assert_eq!(state(&c).last(), Some(&0xd9aa_792e_1af4_70ea));
    }

    #[test]
    fn an_invalid_way_is_filled_without_advancing_the_policy() {
        for replacement in [RoundRobin, Random] {
            let mut c = small(replacement);
            victims(&mut c, &[0, 32, 64]);
            let mut expected = state(&c);
            let freed = expected.iter().position(|&word| word == 64).expect("64 was just read");
            c.invalidate(64);
            assert_eq!(victims(&mut c, &[96]), [None]);
            // The line took the freed way, and no pointer or generator moved.
            expected[freed] = 96;
            assert_eq!(state(&c), expected, "{replacement:?}");
        }
    }

    #[test]
    fn a_write_miss_allocates_dirty_with_write_allocation() {
        let mut c = small(Lru);
        assert_eq!(c.access(0, true), Lookup { hit: false, allocated: true, victim: None });
        assert_eq!(c.invalidate(0), Some(Victim { line: 0, dirty: true, halves: 1 }));
    }

    #[test]
    fn a_write_miss_bypasses_without_write_allocation() {
        let mut c = Cache::new(CacheConfig { write_allocate: false, ..config(64, 2, Lru) });
        assert_eq!(c.access(0, true), Lookup { hit: false, allocated: false, victim: None });
        assert_eq!(c.occupancy(), 0);
    }

    #[test]
    fn a_written_line_leaves_dirty_and_a_read_one_clean() {
        let mut c = small(Lru);
        c.access(0, false);
        assert!(c.access(0, true).hit);
        c.access(32, false);
        assert_eq!(c.access(64, false).victim, Some(Victim { line: 0, dirty: true, halves: 1 }));
        assert_eq!(c.access(96, false).victim, Some(Victim { line: 32, dirty: false, halves: 0 }));
    }

    #[test]
    fn filling_a_present_line_ors_dirty_and_keeps_recency() {
        let mut c = small(Lru);
        victims(&mut c, &[0, 32]);
        assert_eq!(c.fill(0, true), None);
        assert_eq!(c.fill(0, false), None);
        assert_eq!(c.access(64, false).victim, Some(Victim { line: 0, dirty: true, halves: 2 }));
    }

    #[test]
    fn filling_an_absent_line_allocates_like_a_miss() {
        let mut c = small(Lru);
        assert_eq!((c.fill(0, false), c.fill(32, true)), (None, None));
        assert_eq!(c.fill(64, false), Some(Victim { line: 0, dirty: false, halves: 0 }));
        assert_eq!(c.fill(96, false), Some(Victim { line: 32, dirty: true, halves: 2 }));
    }

    #[test]
    fn each_half_of_a_line_has_its_dirty_bit() {
        // 16-byte lines: bytes 0-7 are the first half, 8-15 the second.
        let mut c = small(Lru);
        c.access(4, true);
        c.access(32, false);
        c.access(32 + 12, true);
        c.access(32 + 2, true);
        assert_eq!(c.access(64, false).victim, Some(Victim { line: 0, dirty: true, halves: 1 }));
        assert_eq!(c.access(96, false).victim, Some(Victim { line: 32, dirty: true, halves: 2 }));
    }

    #[test]
    fn invalidate_reports_whether_the_line_was_dirty() {
        let mut c = small(Lru);
        c.access(0, true);
        c.access(32, false);
        let dirty = |v: Option<Victim>| v.map(|v| v.dirty);
        assert_eq!((dirty(c.invalidate(0)), dirty(c.invalidate(32)), dirty(c.invalidate(0))), (Some(true), Some(false), None));
        assert_eq!(c.occupancy(), 0);
    }

    #[test]
    fn canonical_state_shows_invalid_ways_and_the_dirty_halves() {
        let mut c = small(RoundRobin);
        c.access(16, true);
        assert_eq!(state(&c), [u64::MAX, 0, u64::MAX, 0, 16, 1, u64::MAX, 0]);
    }

    #[test]
    fn round_robin_sets_equal_from_their_pointers_are_equal_and_behave_alike() {
        // Set 0 of each: a ends with ways [64, 32] and its pointer on way 1, b with
        // [32, 64] and its pointer on way 0: the same order from the pointer.
        let (mut a, mut b) = (small(RoundRobin), small(RoundRobin));
        victims(&mut a, &[0, 32, 64]);
        victims(&mut b, &[32, 64]);
        assert_eq!(state(&a), state(&b));
        let next = [96, 32, 0, 128, 64];
        assert_eq!(victims(&mut a, &next), victims(&mut b, &next));
        assert_eq!(state(&a), state(&b));
        // Invalid ways are filled from the pointer on, so invalidations keep them alike.
        a.invalidate(96);
        b.invalidate(96);
        a.invalidate(64);
        b.invalidate(64);
        assert_eq!(victims(&mut a, &[160, 192, 224]), victims(&mut b, &[160, 192, 224]));
        assert_eq!(state(&a), state(&b));
    }

    #[test]
    fn relocate_leaves_unmapped_lines_in_place() {
        let mut c = small(Lru);
        victims(&mut c, &[0, 32]);
        c.relocate(&|a| (a == 32).then_some(32 + 64));
        assert!(c.contains(0) && c.contains(96) && !c.contains(32));
    }

    #[test]
    fn check_names_each_bad_field() {
        let good = CacheConfig { size: 1 << 15, ways: 4, line: 64, replacement: Lru, write_allocate: true };
        assert_eq!(good.check(), Ok(()));
        for (bad, field) in [
            (CacheConfig { line: 48, ..good }, "line"),
            (CacheConfig { line: 2, ..good }, "line"),
            (CacheConfig { line: 8192, ..good }, "line"),
            (CacheConfig { ways: 0, ..good }, "ways"),
            (CacheConfig { ways: 65, ..good }, "ways"),
            (CacheConfig { size: 1000, ..good }, "size"),
            (CacheConfig { size: 2 << 30, ..good }, "size"),
            (CacheConfig { size: 3 * 256, ..good }, "sets"),
            (CacheConfig { size: 0, ..good }, "sets"),
        ] {
            let message = bad.check().expect_err(field);
            assert!(message.contains(field), "{message:?} does not name {field}");
        }
    }

    fn accesses() -> impl Strategy<Value = Vec<(u64, bool)>> {
        proptest::collection::vec((0..4096u64, any::<bool>()), 0..200)
    }

    fn configs() -> impl Strategy<Value = CacheConfig> {
        (prop_oneof![Just(Lru), Just(RoundRobin), Just(Random)], any::<bool>())
            .prop_map(|(replacement, write_allocate)| CacheConfig { write_allocate, ..config(512, 2, replacement) })
    }

    proptest! {
        #[test]
        fn relocating_by_set_spans_preserves_behaviour(config in configs(), before in accesses(), after in accesses(), spans in 1..1000u64) {
            let shift = spans * config.set_span();
            let mut a = Cache::new(config);
            for &(addr, write) in &before {
                a.access(addr, write);
            }
            let mut b = a.clone();
            b.relocate(&|line| Some(line + shift));
            for &(addr, write) in &after {
                let (x, y) = (a.access(addr, write), b.access(addr + shift, write));
                prop_assert_eq!(x, Lookup { victim: y.victim.map(|v| Victim { line: v.line - shift, ..v }), ..y });
            }
            let mut moved = Vec::new();
            b.canonical(&|line| line.wrapping_sub(shift), &mut moved);
            prop_assert_eq!(state(&a), moved);
        }

        #[test]
        fn the_same_accesses_give_equal_states(config in configs(), seq in accesses()) {
            let (mut a, mut b) = (Cache::new(config), Cache::new(config));
            for &(addr, write) in &seq {
                prop_assert_eq!(a.access(addr, write), b.access(addr, write));
            }
            prop_assert_eq!(state(&a), state(&b));
        }

        #[test]
        fn occupancy_counts_the_valid_lines(config in configs(), ops in proptest::collection::vec((0..3u8, 0..4096u64, any::<bool>()), 0..200)) {
            let mut c = Cache::new(config);
            for &(op, addr, flag) in &ops {
                match op {
                    0 => {
                        c.access(addr, flag);
                    }
                    1 => {
                        c.fill(addr, flag);
                    }
                    _ => {
                        c.invalidate(addr);
                    }
                }
            }
            let valid = (0..4096).step_by(16).filter(|&line| c.contains(line)).count();
            prop_assert_eq!(c.occupancy(), valid);
        }

        #[test]
        fn a_last_read_of_an_absent_line_changes_the_state(config in configs(), seq in accesses(), last in 0..4096u64) {
            let mut a = Cache::new(config);
            for &(addr, write) in &seq {
                a.access(addr, write);
            }
            let mut b = a.clone();
            a.access(last, false);
            b.access(1 << 20, false);
            prop_assert_ne!(state(&a), state(&b));
        }
    }
}
