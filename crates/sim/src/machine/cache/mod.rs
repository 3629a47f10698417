//! A set-associative, write-back cache of tags (no data).
//!
//! This is the simulator's hot path: entries live in the flat store of `super::sets`,
//! and an access allocates nothing.

mod replay;

pub use super::sets::Replacement;
use super::sets::Sets;
use replay::Logged;

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
    /// Lines the cache holds (0 for a geometry `check` refuses).
    pub fn lines(&self) -> u64 {
        self.sets() * u64::from(self.ways)
    }

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
    /// Its set had an invalid way it was chosen over (`Replacement::LruByUse`).
    pub passed_invalid: bool,
}

/// What the core does with the address of a line the cache evicts, and so what a
/// replay (`machine::replay`) must find again: a victim whose address goes nowhere
/// may be any line, so long as there is one and it is as dirty. A cache that is still
/// turning over lines an earlier loop left (a stream evicting them one by one) evicts
/// other lines than the period did, and the skip is exact all the same.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Victims {
    /// Every victim's address is used: written back to it, or invalidated in the
    /// caches inside (an inclusive cache).
    #[default]
    Named,
    /// A dirty victim's address is used (it is written back into the next level);
    /// a clean one's is not.
    DirtyNamed,
    /// No victim's address is used: a victim is counted, and a dirty one written
    /// back wherever it belongs.
    Unnamed,
}

impl Victims {
    /// `v` as far as the core tells victims apart.
    fn named(self, v: Victim) -> Victim {
        match self {
            Victims::Named => v,
            Victims::DirtyNamed if v.dirty => v,
            _ => Victim { line: 0, ..v },
        }
    }
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
    (old != 0).then_some(Victim { line: old & !FLAGS, dirty: halves > 0, halves, passed_invalid: false })
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
    /// The operations and what they returned, while recording (`machine::replay`).
    log: super::replay::Log<Logged>,
    /// What the core uses of the lines it evicts: only a replay looks.
    victims: Victims,
}

impl Cache {
    /// An empty cache; `config` must have passed `check`.
    pub fn new(config: CacheConfig) -> Cache {
        debug_assert_eq!(config.check(), Ok(()));
        let sets = config.sets();
        let ways = Sets::new(sets as usize, config.ways as usize, config.replacement);
        Cache {
            config,
            line_bits: config.line.trailing_zeros(),
            set_mask: sets.wrapping_sub(1),
            sets: ways,
            last: None,
            log: Default::default(),
            victims: Victims::Named,
        }
    }

    /// The cache whose core uses its victims' addresses as `victims` says.
    pub fn with_victims(self, victims: Victims) -> Cache {
        Cache { victims, ..self }
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
        // Only under `LruByUse` can a valid line go while an invalid way is left.
        let passed = self.config.replacement == Replacement::LruByUse && self.sets.holds_invalid(set);
        let [old] = self.sets.insert(set, [(probe & !DIRTY) | dirty]);
        victim(old).map(|v| Victim { passed_invalid: passed, ..v })
    }

    /// [`Cache::access`], unrecorded.
    #[inline]
    fn do_access(&mut self, addr: u64, write: bool) -> Lookup {
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

    /// `addr`'s bits above its set index: `addr / set_span()`, as a shift (sets and
    /// lines are powers of two; the division was a twelfth of a SPARC fetch).
    pub fn tag(&self, addr: u64) -> u64 {
        addr >> (self.line_bits + self.set_mask.count_ones())
    }

    /// The lines of the set `addr` indexes, way by way (under LRU most recent first),
    /// `None` for an invalid way; no state changes.
    pub fn set_lines(&self, addr: u64) -> impl Iterator<Item = Option<u64>> + '_ {
        let (set, _) = self.locate(addr);
        self.sets.set(set).iter().map(|&[word]| (word != 0).then_some(word & !FLAGS))
    }

    /// [`Cache::contains`], unrecorded.
    #[inline]
    fn do_contains(&self, addr: u64) -> bool {
        let (set, probe) = self.locate(addr);
        self.find(set, probe).is_some()
    }

    /// [`Cache::fill`], unrecorded.
    #[inline]
    fn do_fill(&mut self, addr: u64, dirty: bool) -> Option<Victim> {
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

    /// [`Cache::invalidate`], unrecorded.
    #[inline]
    fn do_invalidate(&mut self, addr: u64) -> Option<Victim> {
        let (set, probe) = self.locate(addr);
        let way = self.find(set, probe)?;
        self.last = None;
        let [old] = self.sets.remove(set, way);
        victim(old)
    }

    /// [`Cache::dirty`], unrecorded.
    fn do_dirty(&self, addr: u64) -> bool {
        let (set, probe) = self.locate(addr);
        self.find(set, probe).is_some_and(|way| self.sets.set(set)[way][0] & DIRTY != 0)
    }

    /// [`Cache::clean`], unrecorded.
    fn do_clean(&mut self, addr: u64) -> u8 {
        let (set, probe) = self.locate(addr);
        let Some(way) = self.find(set, probe) else { return 0 };
        let word = &mut self.sets.get_mut(set, way)[0];
        let halves = victim(*word).map_or(0, |v| v.halves);
        *word &= !DIRTY;
        halves
    }

    /// Look up the line holding `addr`. A hit updates replacement state (LRU: most recent)
    /// and, for a write, marks the half of the line `addr` is in dirty. A read miss
    /// allocates, evicting per the policy (an invalid way is always used first); a write
    /// miss allocates the line (that half dirty) only under write allocation, else the
    /// cache is unchanged.
    #[inline]
    pub fn access(&mut self, addr: u64, write: bool) -> Lookup {
        let out = self.do_access(addr, write);
        self.log.note(|| Logged::Access { addr, write, out });
        out
    }

    /// Whether the line holding `addr` is present; no state changes.
    #[inline]
    pub fn contains(&self, addr: u64) -> bool {
        let out = self.do_contains(addr);
        self.log.note(|| Logged::Contains { addr, out });
        out
    }

    /// Bring a line in without an access (a prefetch, or an inner level's write-back of
    /// the whole line): when present only `dirty` (both halves) ORs into it; otherwise it
    /// is allocated like a miss, and the victim returned.
    #[inline]
    pub fn fill(&mut self, addr: u64, dirty: bool) -> Option<Victim> {
        let out = self.do_fill(addr, dirty);
        self.log.note(|| Logged::Fill { addr, dirty, out });
        out
    }

    /// Remove the line holding `addr` (coherence invalidation, inclusion, a parity
    /// error): the line that left, when it was present.
    #[inline]
    pub fn invalidate(&mut self, addr: u64) -> Option<Victim> {
        let out = self.do_invalidate(addr);
        self.log.note(|| Logged::Invalidate { addr, out });
        out
    }

    /// Whether the line holding `addr` is present with a dirty half; no state changes.
    pub fn dirty(&self, addr: u64) -> bool {
        let out = self.do_dirty(addr);
        self.log.note(|| Logged::Dirty { addr, out });
        out
    }

    /// Clear the dirty bits of the line holding `addr`, keeping it (a coherence
    /// downgrade, or a clean, that wrote its data back): the halves that were dirty.
    pub fn clean(&mut self, addr: u64) -> u8 {
        let out = self.do_clean(addr);
        self.log.note(|| Logged::Clean { addr, out });
        out
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
mod tests;
