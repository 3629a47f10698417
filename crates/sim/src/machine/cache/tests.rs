//! The cache's replacement, write and relocation rules.

use proptest::prelude::*;

use super::*;
use Replacement::{Lru, LruByUse, Random, RoundRobin};

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

proptest! {
    /// An address's tag is its bits above the set index, `addr / set_span()`, for
    /// every geometry `check` accepts (12 and 16 ways included: T4's L2 and L3).
    #[test]
    fn a_tag_is_the_address_over_the_set_span(addr in any::<u64>(), line_bits in 3u32..13, ways in 1u32..=64, set_bits in 0u32..12) {
        let line = 1u64 << line_bits;
        let c = CacheConfig { size: (line << set_bits) * u64::from(ways), ways, line, replacement: Lru, write_allocate: true };
        prop_assert_eq!(c.check(), Ok(()));
        prop_assert_eq!(Cache::new(c).tag(addr), addr / c.set_span());
    }
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

/// `LruByUse` (Montecito's L2D, ERRATA MMC66): an invalidated way keeps its place in
/// the recency order, so the next fill replaces the least recently used valid line
/// and says it passed an invalid way; the invalid way is used once it is the least
/// recent. Plain LRU uses the invalid way at once.
#[test]
fn lru_by_use_keeps_an_invalidated_ways_place() {
    let fill = |replacement| {
        let mut c = Cache::new(config(64, 4, replacement));
        victims(&mut c, &[0, 16, 32, 48]);
        // Recency: 48, 32, 16, 0; then 32 goes.
        c.invalidate(32);
        let v = [64, 80, 96].map(|a| c.access(a, false).victim.map(|v| (v.line, v.passed_invalid)));
        (v, state(&c))
    };
    assert_eq!(fill(Lru), ([None, Some((0, false)), Some((16, false))], vec![96, 0, 80, 0, 64, 0, 48, 0]));
    // 0 and 16 go while 32's way is free, then the free way is the least recent.
    assert_eq!(fill(LruByUse), ([Some((0, true)), Some((16, true)), None], vec![96, 0, 80, 0, 64, 0, 48, 0]));
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
    assert_eq!(c.invalidate(0), Some(Victim { line: 0, dirty: true, halves: 1, passed_invalid: false }));
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
    assert_eq!(c.access(64, false).victim, Some(Victim { line: 0, dirty: true, halves: 1, passed_invalid: false }));
    assert_eq!(c.access(96, false).victim, Some(Victim { line: 32, dirty: false, halves: 0, passed_invalid: false }));
}

#[test]
fn filling_a_present_line_ors_dirty_and_keeps_recency() {
    let mut c = small(Lru);
    victims(&mut c, &[0, 32]);
    assert_eq!(c.fill(0, true), None);
    assert_eq!(c.fill(0, false), None);
    assert_eq!(c.access(64, false).victim, Some(Victim { line: 0, dirty: true, halves: 2, passed_invalid: false }));
}

#[test]
fn filling_an_absent_line_allocates_like_a_miss() {
    let mut c = small(Lru);
    assert_eq!((c.fill(0, false), c.fill(32, true)), (None, None));
    assert_eq!(c.fill(64, false), Some(Victim { line: 0, dirty: false, halves: 0, passed_invalid: false }));
    assert_eq!(c.fill(96, false), Some(Victim { line: 32, dirty: true, halves: 2, passed_invalid: false }));
}

#[test]
fn each_half_of_a_line_has_its_dirty_bit() {
    // 16-byte lines: bytes 0-7 are the first half, 8-15 the second.
    let mut c = small(Lru);
    c.access(4, true);
    c.access(32, false);
    c.access(32 + 12, true);
    c.access(32 + 2, true);
    assert_eq!(c.access(64, false).victim, Some(Victim { line: 0, dirty: true, halves: 1, passed_invalid: false }));
    assert_eq!(c.access(96, false).victim, Some(Victim { line: 32, dirty: true, halves: 2, passed_invalid: false }));
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
    (prop_oneof![Just(Lru), Just(LruByUse), Just(RoundRobin), Just(Random)], any::<bool>())
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

/// Performs mixed operations on `c`: `op` 0 access, 1 fill, 2 invalidate, 3 clean, 4
/// contains, 5 dirty.
fn perform(c: &mut Cache, ops: &[(u8, u64, bool)]) {
    for &(op, addr, flag) in ops {
        match op {
            0 => drop(c.access(addr, flag)),
            1 => drop(c.fill(addr, flag)),
            2 => drop(c.invalidate(addr)),
            3 => drop(c.clean(addr)),
            4 => drop(c.contains(addr)),
            _ => drop(c.dirty(addr)),
        }
    }
}

fn operations() -> impl Strategy<Value = Vec<(u8, u64, bool)>> {
    proptest::collection::vec((0..6u8, 0..4096u64, any::<bool>()), 0..120)
}

proptest! {
    /// machine::replay: a replay that meets every recorded answer leaves the cache as
    /// performing the operations would; one that meets another answer leaves it as it
    /// was, and so does undoing a successful one.
    #[test]
    fn a_replay_is_the_operations_or_nothing(
        config in configs(),
        before in operations(),
        period in operations(),
        other in operations(),
        same in any::<bool>(),
        victims in prop_oneof![Just(Victims::Named), Just(Victims::DirtyNamed), Just(Victims::Unnamed)],
    ) {
        use crate::machine::replay::Replayed;
        let none = |_| None;
        let to = crate::machine::Moves { line: &none, page: &none };
        // Recorded on one cache, replayed on a cache that went through `other` first, or
        // through the same operations, where every answer must be the same.
        let mut recorded = Cache::new(config).with_victims(victims);
        perform(&mut recorded, &before);
        recorded.record(true);
        perform(&mut recorded, &period);
        let mut target = Cache::new(config).with_victims(victims);
        perform(&mut target, if same { &before } else { &other });
        let mut performed = target.clone();
        perform(&mut performed, &period);
        let was = state(&target);
        std::mem::swap(&mut target.log, &mut recorded.log);
        let replayed = target.replay(0..period.len(), &to);
        prop_assert!(replayed.is_some() || !same);
        match replayed {
            Some(undo) => {
                prop_assert_eq!(state(&target), state(&performed));
                target.undo(undo);
                prop_assert_eq!(state(&target), was);
            }
            None => prop_assert_eq!(state(&target), was),
        }
    }
}

/// A replay finds again what the core tells apart of each victim (`Victims`): a
/// stream that turns over lines an earlier loop left evicts other lines than the
/// period did, which matters only where the core uses their addresses.
#[test]
fn a_replay_compares_victims_as_far_as_the_core_uses_them() {
    use crate::machine::replay::Replayed;
    let none = |_| None;
    let to = crate::machine::Moves { line: &none, page: &none };
    // Set 0 of `small` holds two lines; the period reads 0 into it, evicting the
    // older one. Recorded with 32 and 64 there (64 the older, clean or dirty),
    // replayed with 96 in its place.
    let replays = |victims: Victims, dirty_then: bool, dirty_now: bool| {
        let fill = |c: &mut Cache, old: u64, dirty: bool| {
            c.access(old, dirty);
            c.access(32, false);
        };
        let mut recorded = small(Lru).with_victims(victims);
        fill(&mut recorded, 64, dirty_then);
        recorded.record(true);
        recorded.access(0, false);
        let mut target = small(Lru).with_victims(victims);
        fill(&mut target, 96, dirty_now);
        std::mem::swap(&mut target.log, &mut recorded.log);
        target.replay(0..1, &to).is_some()
    };
    assert!(!replays(Victims::Named, false, false), "another line's address");
    assert!(replays(Victims::DirtyNamed, false, false), "a clean victim's address goes nowhere");
    assert!(!replays(Victims::DirtyNamed, true, true), "a dirty one's is written back to");
    assert!(replays(Victims::Unnamed, true, true));
    assert!(!replays(Victims::Unnamed, false, true), "a dirty victim where a clean one was");
}

/// `Replayed::unchanged`: re-reading lines that are alone in their sets changes no
/// replacement state; bringing in another line does.
#[test]
fn rereading_lines_alone_in_their_sets_changes_nothing() {
    use crate::machine::replay::Replayed;
    let none = |_| None;
    let to = crate::machine::Moves { line: &none, page: &none };
    for replacement in [Lru, LruByUse, RoundRobin, Random] {
        let mut c = small(replacement);
        c.access(0, false);
        c.access(16, false);
        let mut other = c.clone();
        c.record(true);
        for a in [0, 16, 0] {
            c.access(a, false);
        }
        let undo = c.replay(0..3, &to).expect("the same answers");
        assert!(c.unchanged(&undo), "{replacement:?}");
        // A line the other cache lacks: the same miss there, which changes it.
        c.record(false);
        c.record(true);
        c.access(32, false);
        std::mem::swap(&mut other.log, &mut c.log);
        let undo = other.replay(0..1, &to).expect("the same miss");
        assert!(!other.unchanged(&undo), "{replacement:?}");
    }
}
