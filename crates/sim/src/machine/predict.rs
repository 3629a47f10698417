//! Branch prediction structures: a direction predictor of two-bit counters (bimodal or
//! gshare), a branch target cache, and a return-address stack.

use super::sets::{Replacement, Sets};

/// Move a two-bit saturating counter one step toward the outcome.
#[inline]
fn train(counter: u64, taken: bool) -> u64 {
    if taken {
        (counter + 1).min(3)
    } else {
        counter.saturating_sub(1)
    }
}

/// Two-bit saturating counters (0, 1 predict not taken; 2, 3 taken) indexed by the branch
/// address: a bimodal direction predictor, or gshare when `history_bits > 0`
/// (index = (pc / 4 ^ global history) % entries).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DirectionConfig {
    /// A power of two in 1..=1 << 20.
    pub entries: u32,
    /// Outcomes of the most recent branches folded into the index, 0..=20.
    pub history_bits: u8,
}

impl DirectionConfig {
    /// Refuse a table the model cannot hold; the message names the field and the valid range.
    pub fn check(&self) -> Result<(), String> {
        let Self { entries, history_bits } = *self;
        if !entries.is_power_of_two() || entries > 1 << 20 {
            return Err(format!("direction predictor entries = {entries}: must be a power of two in 1..=1048576"));
        }
        if history_bits > 20 {
            return Err(format!("direction predictor history_bits = {history_bits}: must be in 0..=20"));
        }
        Ok(())
    }
}

/// Every counter at 1 (weakly not taken), 32 counters to a word.
const WEAKLY_NOT_TAKEN: u64 = 0x5555_5555_5555_5555;

/// A table of two-bit counters with an optional global history.
#[derive(Debug, Clone)]
pub struct DirectionPredictor {
    /// Counter `i` is bits `2 * (i % 32)..` of word `i / 32`: packing keeps a large table's
    /// working set in the host's caches.
    counters: Vec<u64>,
    index_mask: u64,
    history_mask: u64,
    /// The most recent outcome in bit 0.
    history: u64,
}

impl DirectionPredictor {
    /// Counters at weakly not taken and an all-not-taken history; `config` must have passed `check`.
    pub fn new(config: DirectionConfig) -> Self {
        debug_assert_eq!(config.check(), Ok(()));
        DirectionPredictor {
            counters: vec![WEAKLY_NOT_TAKEN; config.entries.div_ceil(32) as usize],
            index_mask: u64::from(config.entries).wrapping_sub(1),
            history_mask: 1u64.checked_shl(config.history_bits.into()).map_or(u64::MAX, |bit| bit - 1),
            history: 0,
        }
    }

    /// The word and the bit offset of the counter that predicts the branch at `pc`.
    #[inline]
    fn slot(&self, pc: u64) -> (usize, u32) {
        let index = ((pc >> 2) ^ self.history) & self.index_mask;
        ((index >> 5) as usize, (index as u32 & 31) * 2)
    }

    /// Whether the branch at `pc` is predicted taken.
    #[inline]
    pub fn predict(&self, pc: u64) -> bool {
        let (word, shift) = self.slot(pc);
        ((self.counters[word] >> shift) & 3) >= 2
    }

    /// Train on the outcome, then shift it into the global history.
    #[inline]
    pub fn update(&mut self, pc: u64, taken: bool) {
        let (word, shift) = self.slot(pc);
        let bits = &mut self.counters[word];
        let counter = train((*bits >> shift) & 3, taken);
        *bits = (*bits & !(3 << shift)) | (counter << shift);
        self.history = ((self.history << 1) | u64::from(taken)) & self.history_mask;
    }

    /// The complete state: the packed counters, then the history.
    pub fn canonical(&self, out: &mut Vec<u64>) {
        out.extend(&self.counters);
        out.push(self.history);
    }
}

/// The geometry of a branch target cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TargetCacheConfig {
    pub entries: u32,
    pub ways: u32,
}

impl TargetCacheConfig {
    /// Refuse a geometry the model cannot hold; the message names the field and the valid
    /// range: entries 1..=65536, ways 1..=64 dividing entries, sets a power of two.
    pub fn check(&self) -> Result<(), String> {
        let Self { entries, ways } = *self;
        if !(1..=65536).contains(&entries) {
            return Err(format!("target cache entries = {entries}: must be in 1..=65536"));
        }
        if !(1..=64).contains(&ways) || entries % ways != 0 {
            return Err(format!("target cache ways = {ways}: must be in 1..=64 and divide entries = {entries}"));
        }
        let sets = entries / ways;
        if !sets.is_power_of_two() {
            return Err(format!("target cache sets = entries / ways = {sets}: must be a power of two"));
        }
        Ok(())
    }
}

/// What a target cache holds for a branch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TargetEntry {
    pub target: u64,
    /// Two-bit direction counter: 2 and 3 predict taken.
    pub counter: u8,
}

/// Valid flag in an entry's third word, above the counter.
const ENTRY_VALID: u64 = 1 << 8;

/// A branch target cache (ARM11's BTAC, T4's BTC, Itanium's target buffers):
/// set-associative, LRU, entries of (branch address, target, two-bit counter).
#[derive(Debug, Clone)]
pub struct TargetCache {
    set_mask: u64,
    /// Per entry: branch address, target, ENTRY_VALID | counter.
    sets: Sets<3>,
}

impl TargetCache {
    /// An empty target cache; `config` must have passed `check`.
    pub fn new(config: TargetCacheConfig) -> Self {
        debug_assert_eq!(config.check(), Ok(()));
        let sets = config.entries.checked_div(config.ways).unwrap_or(0);
        TargetCache { set_mask: u64::from(sets).wrapping_sub(1), sets: Sets::new(sets as usize, config.ways as usize, Replacement::Lru) }
    }

    /// The set of the branch at `pc` (`(pc / 4) % sets`) and its way, if cached.
    #[inline]
    fn locate(&self, pc: u64) -> (usize, Option<usize>) {
        let set = ((pc >> 2) & self.set_mask) as usize;
        (set, self.sets.find(set, |&[branch, _, meta]| branch == pc && meta != 0))
    }

    /// A branch at `pc` resolves `taken` (to `target`, when taken): returns what the
    /// cache held for it, as the fetch stage found it, and trains the cache, in one
    /// search of the set (a look-up and then an update searched it twice, a tenth of
    /// ARM1176's look-ups). A hit makes the entry the set's most recent, moves its
    /// counter toward the outcome and, when taken, replaces its target; an uncached
    /// branch is allocated, weakly taken, only when taken (a not-taken branch needs no
    /// target), evicting the least recently used way.
    #[inline]
    pub fn resolve(&mut self, pc: u64, taken: bool, target: u64) -> Option<TargetEntry> {
        match self.locate(pc) {
            (set, Some(way)) => {
                let way = self.sets.touch(set, way);
                let entry = self.sets.get_mut(set, way);
                let found = TargetEntry { target: entry[1], counter: (entry[2] & 3) as u8 };
                entry[2] = ENTRY_VALID | train(entry[2] & 3, taken);
                if taken {
                    entry[1] = target;
                }
                Some(found)
            }
            (set, None) => {
                if taken {
                    self.sets.insert(set, [pc, target, ENTRY_VALID | 2]);
                }
                None
            }
        }
    }

    /// The reference `resolve` must equal: a look-up, which alone touches recency, then
    /// an update of the entry found or an allocation.
    #[cfg(test)]
    fn lookup_then_update(&mut self, pc: u64, taken: bool, target: u64) -> Option<TargetEntry> {
        let (set, way) = self.locate(pc);
        let found = way.map(|way| {
            let way = self.sets.touch(set, way);
            let [_, target, meta] = *self.sets.get_mut(set, way);
            TargetEntry { target, counter: (meta & 3) as u8 }
        });
        match self.locate(pc) {
            (set, Some(way)) => {
                let entry = self.sets.get_mut(set, way);
                entry[2] = ENTRY_VALID | train(entry[2] & 3, taken);
                if taken {
                    entry[1] = target;
                }
            }
            (set, None) if taken => {
                self.sets.insert(set, [pc, target, ENTRY_VALID | 2]);
            }
            (_, None) => {}
        }
        found
    }

    /// Per set in index order, per way from most to least recently used: branch address,
    /// target and counter, or `u64::MAX, 0, 0` for an invalid way.
    pub fn canonical(&self, out: &mut Vec<u64>) {
        self.sets.canonical(out, |&[branch, target, meta], out| match meta {
            0 => out.extend([u64::MAX, 0, 0]),
            _ => out.extend([branch, target, meta & 3]),
        });
    }
}

/// A return-address stack of fixed depth: a push onto a full stack drops the oldest entry;
/// a pop of an empty stack gives `None`.
#[derive(Debug, Clone)]
pub struct ReturnStack {
    /// A ring: overwriting the oldest entry on overflow moves nothing.
    slots: Vec<u64>,
    /// The slot the next push writes.
    top: usize,
    len: usize,
}

impl ReturnStack {
    /// An empty stack of `depth` entries (1..=64, checked by the caller; a stack of depth 0
    /// holds nothing).
    pub fn new(depth: usize) -> Self {
        ReturnStack { slots: vec![0; depth], top: 0, len: 0 }
    }

    #[inline]
    pub fn push(&mut self, ret: u64) {
        if let Some(slot) = self.slots.get_mut(self.top) {
            *slot = ret;
            self.top = if self.top + 1 == self.slots.len() { 0 } else { self.top + 1 };
            self.len = (self.len + 1).min(self.slots.len());
        }
    }

    #[inline]
    pub fn pop(&mut self) -> Option<u64> {
        self.len = self.len.checked_sub(1)?;
        self.top = self.top.checked_sub(1).unwrap_or(self.slots.len() - 1);
        self.slots.get(self.top).copied()
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The complete state: the number of entries, then the entries from the newest down
    /// (slots below the bottom are never read again, so they are left out).
    pub fn canonical(&self, out: &mut Vec<u64>) {
        out.push(self.len as u64);
        let depth = self.slots.len();
        out.extend((1..=self.len).map(|back| self.slots[(self.top + depth - back) % depth]));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bimodal() -> DirectionPredictor {
        DirectionPredictor::new(DirectionConfig { entries: 64, history_bits: 0 })
    }

    #[test]
    fn counters_start_weakly_not_taken() {
        let mut p = bimodal();
        assert!(!p.predict(0x100));
        p.update(0x100, true);
        assert!(p.predict(0x100));
    }

    #[test]
    fn counters_saturate() {
        let mut p = bimodal();
        for taken in [true, false] {
            (0..5).for_each(|_| p.update(0x100, taken));
            p.update(0x100, !taken);
            assert_eq!(p.predict(0x100), taken, "one {} after many {taken}", !taken);
        }
    }

    #[test]
    fn a_loop_branch_mispredicts_only_its_exit_after_warm_up() {
        let mut p = bimodal();
        let mut mispredicted = Vec::new();
        for _ in 0..4 {
            for iteration in 0..8 {
                let taken = iteration < 7;
                mispredicted.push(p.predict(0x40) != taken);
                p.update(0x40, taken);
            }
        }
        let expected: Vec<bool> = (0..32).map(|i| i == 0 || i % 8 == 7).collect();
        assert_eq!(mispredicted, expected);
    }

    #[test]
    fn global_history_learns_an_alternating_branch() {
        let mut p = DirectionPredictor::new(DirectionConfig { entries: 64, history_bits: 2 });
        let taken = |i: usize| i.is_multiple_of(2);
        (0..16).for_each(|i| p.update(0x40, taken(i)));
        assert!((16..32).all(|i| {
            let hit = p.predict(0x40) == taken(i);
            p.update(0x40, taken(i));
            hit
        }));
    }

    #[test]
    fn direction_predictor_canonical_state_is_counters_then_history() {
        let mut p = DirectionPredictor::new(DirectionConfig { entries: 64, history_bits: 4 });
        p.update(0, true);
        let mut out = Vec::new();
        p.canonical(&mut out);
        assert_eq!(out, [WEAKLY_NOT_TAKEN ^ 3, WEAKLY_NOT_TAKEN, 1]);
    }

    #[test]
    fn direction_check_names_each_bad_field() {
        let good = DirectionConfig { entries: 1024, history_bits: 10 };
        assert_eq!(good.check(), Ok(()));
        for (bad, field) in [
            (DirectionConfig { entries: 0, ..good }, "entries"),
            (DirectionConfig { entries: 1000, ..good }, "entries"),
            (DirectionConfig { entries: 1 << 21, ..good }, "entries"),
            (DirectionConfig { history_bits: 21, ..good }, "history_bits"),
        ] {
            let message = bad.check().expect_err(field);
            assert!(message.contains(field), "{message:?} does not name {field}");
        }
    }

    fn target_cache(entries: u32, ways: u32) -> TargetCache {
        TargetCache::new(TargetCacheConfig { entries, ways })
    }

    #[test]
    fn a_target_cache_allocates_only_taken_branches() {
        let mut t = target_cache(8, 2);
        assert_eq!(t.resolve(0x100, false, 0x200), None);
        assert_eq!(t.resolve(0x100, true, 0x200), None);
        assert_eq!(t.resolve(0x100, true, 0x200), Some(TargetEntry { target: 0x200, counter: 2 }));
    }

    #[test]
    fn training_moves_the_counter_and_a_taken_branch_replaces_the_target() {
        let mut t = target_cache(8, 2);
        t.resolve(0x100, true, 0x200);
        t.resolve(0x100, true, 0x300);
        assert_eq!(t.resolve(0x100, true, 0x400), Some(TargetEntry { target: 0x300, counter: 3 }));
        (0..4).for_each(|_| {
            t.resolve(0x100, false, 0x500);
        });
        assert_eq!(t.resolve(0x100, false, 0x500), Some(TargetEntry { target: 0x400, counter: 0 }));
    }

    #[test]
    fn a_target_cache_evicts_the_least_recently_resolved_branch() {
        // 2 sets of 2 ways: branches 0x0, 0x8 and 0x10 share set 0.
        let mut t = target_cache(4, 2);
        t.resolve(0x0, true, 1);
        t.resolve(0x8, true, 2);
        t.resolve(0x0, true, 1);
        t.resolve(0x10, true, 3);
        let mut out = Vec::new();
        t.canonical(&mut out);
        assert_eq!(out, [0x10, 3, 2, 0x0, 1, 3, u64::MAX, 0, 0, u64::MAX, 0, 0]);
    }

    proptest::proptest! {
        /// One search of the set gives what a look-up and then an update give, and
        /// leaves the cache as they do.
        #[test]
        fn resolving_is_a_look_up_then_an_update(
            ways in proptest::sample::select(vec![1u32, 2, 4]),
            branches in proptest::collection::vec((0u64..64, proptest::bool::ANY, 0u64..4), 1..200),
        ) {
            let mut fast = target_cache(8, ways);
            let mut reference = fast.clone();
            for (pc, taken, target) in branches {
                let pc = pc * 4;
                proptest::prop_assert_eq!(fast.resolve(pc, taken, target), reference.lookup_then_update(pc, taken, target));
                let (mut a, mut b) = (Vec::new(), Vec::new());
                fast.canonical(&mut a);
                reference.canonical(&mut b);
                proptest::prop_assert_eq!(a, b);
            }
        }
    }

    #[test]
    fn target_cache_check_names_each_bad_field() {
        let good = TargetCacheConfig { entries: 128, ways: 2 };
        assert_eq!(good.check(), Ok(()));
        for (bad, field) in [
            (TargetCacheConfig { entries: 0, ..good }, "entries"),
            (TargetCacheConfig { ways: 0, ..good }, "ways"),
            (TargetCacheConfig { ways: 3, ..good }, "ways"),
            (TargetCacheConfig { entries: 96, ways: 2 }, "sets"),
        ] {
            let message = bad.check().expect_err(field);
            assert!(message.contains(field), "{message:?} does not name {field}");
        }
    }

    #[test]
    fn a_return_stack_overflow_drops_the_oldest_entry() {
        let mut s = ReturnStack::new(2);
        [1, 2, 3].into_iter().for_each(|ret| s.push(ret));
        assert_eq!(s.len(), 2);
        let mut out = Vec::new();
        s.canonical(&mut out);
        assert_eq!(out, [2, 3, 2]);
        assert_eq!([s.pop(), s.pop(), s.pop()], [Some(3), Some(2), None]);
    }

    #[test]
    fn popping_an_empty_return_stack_gives_none() {
        let mut s = ReturnStack::new(4);
        assert_eq!(s.pop(), None);
        s.push(7);
        assert_eq!((s.pop(), s.is_empty(), s.pop()), (Some(7), true, None));
    }

    #[test]
    fn a_return_stack_of_depth_zero_holds_nothing() {
        let mut s = ReturnStack::new(0);
        s.push(1);
        assert_eq!((s.len(), s.pop()), (0, None));
    }
}
