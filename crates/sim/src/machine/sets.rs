//! The sets and ways of every set-associative structure (caches, TLBs, target caches),
//! with the replacement policies, in one flat vector so that an access allocates
//! nothing. LRU keeps each set's ways in recency order (move to front), so the common
//! hit on the most recent entry is found first and the order needs no sorting.

use std::mem;

/// Which way a set gives up on a miss.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Replacement {
    /// The least recently used way.
    Lru,
    /// The least recently used way, by a recency order that only uses and fills
    /// change: an invalidated way keeps its place, so a fill may replace a valid line
    /// while an invalid way is nearer the front (Montecito's L2D, ERRATA MMC66).
    LruByUse,
    /// The way a per-set pointer names; the pointer advances on each eviction from a full set.
    RoundRobin,
    /// A way drawn from a deterministic generator, so runs are reproducible.
    Random,
}

/// Seed of the random-replacement generator (xorshift64). Any non-zero value works; a
/// constant one makes every run, on every platform, evict the same ways.
const SEED: u64 = 0x9E37_79B9_7F4A_7C15;

/// The sets and ways of a set-associative structure whose entries are `W` words. The
/// all-zero entry is an invalid way, so callers keep a valid flag in a valid entry.
#[derive(Debug, Clone)]
pub struct Sets<const W: usize> {
    /// Set `s` is `slots[s * ways..][..ways]`; under LRU in recency order, most recent
    /// first and invalid ways last, so the last way is always the one to replace.
    slots: Vec<[u64; W]>,
    /// Round-robin only: per set, the way the next eviction from a full set takes.
    next: Vec<u32>,
    /// Random only: the generator state.
    rng: u64,
    /// Invalid ways in all sets: once every set is full, as it stays after warm-up unless
    /// lines are invalidated, a miss need not look for an invalid way.
    empty: usize,
    ways: usize,
    replacement: Replacement,
    /// While a replay runs (`machine::replay`): the sets as they were before it changed
    /// them, to undo it.
    journal: Option<Journal<W>>,
}

impl<const W: usize> Sets<W> {
    const EMPTY: [u64; W] = [0; W];

    /// `sets * ways` invalid ways; `ways` must be at least 1.
    pub(super) fn new(sets: usize, ways: usize, replacement: Replacement) -> Self {
        let next = if replacement == Replacement::RoundRobin { vec![0; sets] } else { Vec::new() };
        Sets { slots: vec![Self::EMPTY; sets * ways], next, rng: SEED, empty: sets * ways, ways, replacement, journal: None }
    }

    /// The ways of `set`: under LRU in recency order, most recent first.
    #[inline]
    pub(super) fn set(&self, set: usize) -> &[[u64; W]] {
        &self.slots[set * self.ways..][..self.ways]
    }

    /// The ways of `set`, to change.
    #[inline]
    fn set_mut(&mut self, set: usize) -> &mut [[u64; W]] {
        self.keep(set);
        &mut self.slots[set * self.ways..][..self.ways]
    }

    /// A journal in progress keeps `set` as it is, before anything changes it. Only
    /// replays keep a journal: every other change pays for one test, inlined (a call
    /// per change was 3 % of ARM1176's machine thread).
    #[inline(always)]
    fn keep(&mut self, set: usize) {
        if self.journal.is_some() {
            self.keep_in_journal(set);
        }
    }

    #[cold]
    #[inline(never)]
    fn keep_in_journal(&mut self, set: usize) {
        if let Some(j) = &mut self.journal {
            if j.seen.insert(set) {
                j.kept.push((set, self.next.get(set).copied().unwrap_or(0)));
                j.ways.extend_from_slice(&self.slots[set * self.ways..][..self.ways]);
            }
        }
    }

    /// The way of `set` holding an entry that `matches`, without touching replacement state.
    #[inline]
    pub(super) fn find(&self, set: usize, matches: impl Fn(&[u64; W]) -> bool) -> Option<usize> {
        self.set(set).iter().position(matches)
    }

    /// Record a use of the entry at `way`; returns the way it is at afterwards (LRU moves it to the front).
    #[inline]
    pub(super) fn touch(&mut self, set: usize, way: usize) -> usize {
        if !matches!(self.replacement, Replacement::Lru | Replacement::LruByUse) || way == 0 {
            return way;
        }
        self.set_mut(set)[..=way].rotate_right(1);
        0
    }

    /// The entry at `way`, to update in place; it must stay valid (`remove` invalidates).
    #[inline]
    pub(super) fn get_mut(&mut self, set: usize, way: usize) -> &mut [u64; W] {
        &mut self.set_mut(set)[way]
    }

    /// Put `entry`, which is not in `set`, into it as its most recent entry: into an invalid
    /// way if there is one (the lowest), else over the way the policy picks. Returns the
    /// displaced entry, all zero when the way was invalid.
    #[inline]
    pub(super) fn insert(&mut self, set: usize, entry: [u64; W]) -> [u64; W] {
        self.keep(set);
        if matches!(self.replacement, Replacement::Lru | Replacement::LruByUse) {
            let ways = self.set_mut(set);
            ways.rotate_right(1);
            let old = mem::replace(&mut ways[0], entry);
            self.empty -= usize::from(old == Self::EMPTY);
            return old;
        }
        let free = if self.empty == 0 {
            None
        } else if self.replacement == Replacement::RoundRobin {
            // The first invalid way from the pointer on: round-robin then depends only on
            // the ways' order from the pointer, never on which way is numbered 0, so
            // `canonical` may describe a set from its pointer (see there).
            let start = self.next[set] as usize;
            let ways = self.set(set);
            (0..self.ways).map(|i| (start + i) % self.ways).find(|&w| ways[w] == Self::EMPTY)
        } else {
            self.set(set).iter().position(|e| *e == Self::EMPTY)
        };
        let way = match free {
            Some(way) => {
                self.empty -= 1;
                way
            }
            None if self.replacement == Replacement::RoundRobin => {
                let next = &mut self.next[set];
                let way = *next as usize;
                *next = if way + 1 == self.ways { 0 } else { *next + 1 };
                way
            }
            None => {
                self.rng ^= self.rng << 13;
                self.rng ^= self.rng >> 7;
                self.rng ^= self.rng << 17;
                // Multiply-high maps the state onto 0..ways without a division.
                ((u128::from(self.rng) * self.ways as u128) >> 64) as usize
            }
        };
        mem::replace(self.get_mut(set, way), entry)
    }

    /// Whether `set` has an invalid way.
    #[inline]
    pub(super) fn holds_invalid(&self, set: usize) -> bool {
        self.empty > 0 && self.set(set).contains(&Self::EMPTY)
    }

    /// Invalidate the entry at `way` and return it; under LRU the freed way becomes the
    /// last, under `LruByUse` it keeps its place.
    #[inline]
    pub(super) fn remove(&mut self, set: usize, way: usize) -> [u64; W] {
        let lru = self.replacement == Replacement::Lru;
        self.empty += 1;
        let ways = self.set_mut(set);
        let entry = mem::replace(&mut ways[way], Self::EMPTY);
        if lru {
            ways[way..].rotate_left(1);
        }
        entry
    }

    /// Invalidate every valid entry that `keep` refuses; returns how many.
    pub(super) fn retain(&mut self, keep: impl Fn(&[u64; W]) -> bool) -> usize {
        let lru = self.replacement == Replacement::Lru;
        let mut dropped = 0;
        for set in 0..self.slots.len() / self.ways {
            self.keep(set);
        }
        for ways in self.slots.chunks_exact_mut(self.ways) {
            let mut kept = 0;
            for way in 0..ways.len() {
                let entry = ways[way];
                if entry == Self::EMPTY {
                    continue;
                }
                if !keep(&entry) {
                    ways[way] = Self::EMPTY;
                    dropped += 1;
                } else if lru {
                    // Slide survivors up in their order so invalid ways stay last.
                    ways[way] = Self::EMPTY;
                    ways[kept] = entry;
                    kept += 1;
                }
            }
        }
        self.empty += dropped;
        dropped
    }

    /// The valid entries, in no particular order, for rewriting in place (they must stay valid).
    pub(super) fn valid_mut(&mut self) -> impl Iterator<Item = &mut [u64; W]> {
        self.slots.iter_mut().filter(|e| **e != Self::EMPTY)
    }

    pub(super) fn occupancy(&self) -> usize {
        self.slots.len() - self.empty
    }

    /// Starts keeping every set before it changes, so that the changes can be undone.
    pub(super) fn begin(&mut self) {
        self.journal = Some(Journal { kept: Vec::new(), ways: Vec::new(), seen: rustc_hash::FxHashSet::default(), rng: self.rng });
    }

    /// Stops keeping sets: what they were before the changes since `begin`.
    pub(super) fn end(&mut self) -> Journal<W> {
        self.journal.take().unwrap_or(Journal { kept: Vec::new(), ways: Vec::new(), seen: Default::default(), rng: self.rng })
    }

    /// Puts every set `journal` kept back as it was, and the generator.
    pub(super) fn undo(&mut self, journal: Journal<W>) {
        for (i, &(set, next)) in journal.kept.iter().enumerate() {
            let before = &journal.ways[i * self.ways..][..self.ways];
            let now = &mut self.slots[set * self.ways..][..self.ways];
            let invalid = |ways: &[[u64; W]]| ways.iter().filter(|e| **e == Self::EMPTY).count();
            self.empty = self.empty + invalid(before) - invalid(now);
            now.copy_from_slice(before);
            if let Some(n) = self.next.get_mut(set) {
                *n = next;
            }
        }
        self.rng = journal.rng;
    }

    /// Whether every set `journal` kept is as it was then, and the generator too: the
    /// changes since came back to where they started.
    pub(super) fn unchanged(&self, journal: &Journal<W>) -> bool {
        journal.rng == self.rng
            && journal.kept.iter().enumerate().all(|(i, &(set, next))| {
                self.set(set) == &journal.ways[i * self.ways..][..self.ways] && self.next.get(set).is_none_or(|&n| n == next)
            })
    }

    /// Per set in index order, `entry` writes each way in canonical order: LRU's recency
    /// order; round-robin's ways from the pointer on, cyclically (two sets whose ways are
    /// the same from their pointers behave the same, whichever way is numbered 0, so the
    /// pointer itself is left out); random's way order, with the generator's state once
    /// at the end. Nothing else influences what the structure does next.
    pub(super) fn canonical(&self, out: &mut Vec<u64>, mut entry: impl FnMut(&[u64; W], &mut Vec<u64>)) {
        for (set, ways) in self.slots.chunks_exact(self.ways).enumerate() {
            let start = self.next.get(set).map_or(0, |&p| p as usize);
            // Two plain loops, not a chained iterator: the compiler inlines `entry` into
            // these whatever else the build holds, and this runs for every way of every
            // set each time the period search describes a state.
            for e in &ways[start..] {
                entry(e, out);
            }
            for e in &ways[..start] {
                entry(e, out);
            }
        }
        if self.replacement == Replacement::Random {
            out.push(self.rng);
        }
    }
}

/// The sets a change touched, as they were before it, and the random generator's
/// state (`Sets::begin`).
#[derive(Debug, Clone)]
pub struct Journal<const W: usize> {
    /// Each set kept and its round-robin pointer; its ways are the next `ways` of
    /// `ways`.
    kept: Vec<(usize, u32)>,
    ways: Vec<[u64; W]>,
    seen: rustc_hash::FxHashSet<usize>,
    rng: u64,
}
