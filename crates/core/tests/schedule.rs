//! Counter assignment finds a matching whenever one exists, and explains refusals.

use pmukit_core::schedule::{assign, groups, solve, Grouping, NoRules, Rules, ScheduleError, Violation};
use proptest::prelude::*;

/// Exhaustive search: is there any assignment of distinct counters?
fn exists(allowed: &[u64], used: u64) -> bool {
    match allowed.split_first() {
        None => true,
        Some((&m, rest)) => (0..8).any(|c| m >> c & 1 == 1 && used >> c & 1 == 0 && exists(rest, used | 1 << c)),
    }
}

proptest! {
    #[test]
    fn assign_succeeds_exactly_when_an_assignment_exists(masks in prop::collection::vec(0u64..256, 0..8)) {
        match assign(&masks) {
            Ok(a) => {
                for (i, &c) in a.iter().enumerate() {
                    prop_assert!(masks[i] >> c & 1 == 1, "event {i} on a counter it may not use");
                }
                let mut sorted = a.clone();
                sorted.sort_unstable();
                sorted.dedup();
                prop_assert_eq!(sorted.len(), a.len(), "two events share a counter");
            }
            Err(ScheduleError::Conflict { events, counters, .. }) => {
                prop_assert!(!exists(&masks, 0));
                // The named events really are confined to the named counters.
                let union = events.iter().fold(0u64, |u, &e| u | masks[e]);
                prop_assert_eq!(union.count_ones() as usize, counters.len());
                prop_assert!(events.len() > counters.len());
            }
            Err(ScheduleError::NoCounter { event }) => prop_assert_eq!(masks[event], 0),
            Err(e @ (ScheduleError::Rules { .. } | ScheduleError::SearchLimit { .. })) => prop_assert!(false, "no rules, yet {e}"),
        }
    }

    #[test]
    fn groups_cover_every_event_once_and_each_group_fits(masks in prop::collection::vec(1u64..8, 1..10)) {
        let gs = groups(&masks, &[], &NoRules).unwrap().groups;
        let mut all: Vec<usize> = gs.iter().flatten().copied().collect();
        all.sort_unstable();
        // Only an event with a counter no other event may use is in several groups.
        let private = |e: usize| masks[e] & !masks.iter().enumerate().filter(|&(f, _)| f != e).fold(0, |m, (_, a)| m | a) != 0;
        let mut once = all.clone();
        once.dedup();
        prop_assert_eq!(&once, &(0..masks.len()).collect::<Vec<_>>());
        for e in 0..masks.len() {
            let n = all.iter().filter(|&&x| x == e).count();
            prop_assert!(n == 1 || private(e), "event {e} in {n} groups: {gs:?}");
        }
        for g in &gs {
            let m: Vec<u64> = g.iter().map(|&e| masks[e]).collect();
            prop_assert!(assign(&m).is_ok());
        }
    }
}

#[test]
fn assignment_moves_an_earlier_event_to_make_room() {
    // Event 0 may use counters 0 or 1, event 1 only counter 0.
    assert_eq!(assign(&[0b11, 0b01]).unwrap(), vec![1, 0]);
}

#[test]
fn refusal_names_the_events_competing_for_too_few_counters() {
    let err = assign(&[0b110, 0b110, 0b001, 0b110]).unwrap_err();
    assert_eq!(err, ScheduleError::Conflict { events: vec![0, 1, 3], counters: vec![1, 2], n_events: 3, n_counters: 2 });
}

#[test]
fn an_event_with_no_counter_is_refused() {
    assert_eq!(assign(&[0b1, 0]), Err(ScheduleError::NoCounter { event: 1 }));
    assert!(groups(&[0], &[], &NoRules).is_err());
}

/// Test rules: forbidden pairs of placements, and "if any event of `class` is counted,
/// counter `anchor` must hold one of them" (the shape of Montecito's PMC5 rule).
#[derive(Debug, Clone)]
struct TestRules {
    forbidden: Vec<(usize, usize, usize, usize)>,
    class: Vec<usize>,
    anchor: usize,
}

impl Rules for TestRules {
    fn involves(&self, event: usize) -> bool {
        self.class.contains(&event) || self.forbidden.iter().any(|&(a, _, b, _)| a == event || b == event)
    }

    /// Class events that no forbidden pair names are alike.
    fn interchangeable(&self, a: usize, b: usize) -> bool {
        let plain = |e: usize| self.forbidden.iter().all(|&(x, _, y, _)| x != e && y != e);
        plain(a) && plain(b) && self.class.contains(&a) == self.class.contains(&b)
    }

    fn check(&self, members: &[usize], placed: &[Option<usize>]) -> Result<(), Violation> {
        let at = |e: usize| members.iter().position(|&m| m == e).and_then(|i| placed[i]);
        for (k, &(a, ca, b, cb)) in self.forbidden.iter().enumerate() {
            if at(a) == Some(ca) && at(b) == Some(cb) {
                return Err(Violation { rule: k as u32, events: [a, b].into_iter().collect() });
            }
        }
        let class: Vec<usize> = (0..members.len()).filter(|&i| self.class.contains(&members[i])).collect();
        if class.is_empty() {
            return Ok(());
        }
        let broken = match placed.iter().position(|&c| c == Some(self.anchor)) {
            Some(i) => !class.contains(&i),
            None => class.iter().all(|&i| placed[i].is_some()),
        };
        if broken {
            return Err(Violation { rule: ANCHOR_RULE, events: class.iter().map(|&i| members[i]).collect() });
        }
        Ok(())
    }

    fn describe(&self, v: &Violation) -> String {
        match self.forbidden.get(v.rule as usize) {
            Some((a, ca, b, cb)) => format!("e{a} on c{ca} excludes e{b} on c{cb}"),
            None => format!("counter c{} must hold a class event", self.anchor),
        }
    }
}

/// [`TestRules`]' class rule; a forbidden pair's rule is its position.
const ANCHOR_RULE: u32 = u32::MAX;

/// Exhaustive search under rules: every injective placement, checked whole.
fn exists_with(allowed: &[u64], rules: &dyn Rules, placed: &mut Vec<Option<usize>>) -> bool {
    let k = placed.iter().position(Option::is_none);
    let Some(k) = k else { return rules.check(&(0..placed.len()).collect::<Vec<_>>(), placed).is_ok() };
    for c in 0..8 {
        if allowed[k] >> c & 1 == 1 && !placed.contains(&Some(c)) {
            placed[k] = Some(c);
            if exists_with(allowed, rules, placed) {
                placed[k] = None;
                return true;
            }
            placed[k] = None;
        }
    }
    false
}

fn rules_strategy() -> impl Strategy<Value = (Vec<u64>, TestRules)> {
    (
        prop::collection::vec(1u64..64, 1..7),
        prop::collection::vec((0usize..6, 0usize..6, 0usize..6, 0usize..6), 0..5),
        prop::collection::vec(0usize..6, 0..3),
        0usize..6,
    )
        .prop_map(|(masks, forbidden, class, anchor)| (masks, TestRules { forbidden, class, anchor }))
}

proptest! {
    /// The solver under rules never refuses a satisfiable set and never returns a
    /// placement that breaks a mask or a rule (cross-checked by exhaustive search).
    #[test]
    fn solve_succeeds_exactly_when_a_placement_satisfies_the_rules((masks, rules) in rules_strategy()) {
        let mut placed = vec![None; masks.len()];
        let possible = exists_with(&masks, &rules, &mut placed);
        match solve(&masks, &rules) {
            Ok(a) => {
                prop_assert!(possible);
                let placed: Vec<Option<usize>> = a.iter().map(|&c| Some(c)).collect();
                prop_assert!(rules.check(&(0..placed.len()).collect::<Vec<_>>(), &placed).is_ok());
                for (i, &c) in a.iter().enumerate() {
                    prop_assert!(masks[i] >> c & 1 == 1);
                }
                let mut sorted = a.clone();
                sorted.sort_unstable();
                sorted.dedup();
                prop_assert_eq!(sorted.len(), a.len());
            }
            Err(ScheduleError::Rules { events, rules: broken }) => {
                prop_assert!(!possible);
                prop_assert!(!broken.is_empty(), "a refusal names the rules");
                prop_assert!(!events.is_empty());
                // The events named cannot be placed together (exhaustive search). Where
                // the rules are monotone (forbidden pairs only: fewer events, fewer
                // constraints), they are a minimal such set: without any one of them the
                // rest can be placed. The class rule is not (a class event that cannot
                // take the anchor may be placeable beside one that can).
                prop_assert!(!placeable(&masks, &events, &rules), "{:?} can be placed", events);
                for e in events.iter().filter(|_| rules.class.is_empty()) {
                    let rest: Vec<usize> = events.iter().copied().filter(|f| f != e).collect();
                    prop_assert!(rest.is_empty() || placeable(&masks, &rest, &rules), "{:?} is not minimal: {:?} cannot be placed", events, rest);
                }
            }
            Err(_) => prop_assert!(!possible),
        }
    }
}

#[test]
fn a_refusal_under_rules_names_a_minimal_set_and_the_rule() {
    // Events 0 and 2 are class events, so counter 1 must hold one of them; event 1 can
    // only use counter 1. Event 0 and the innocent event 3 are dropped from the
    // explanation: {1, 2} already cannot be placed.
    let rules = TestRules { forbidden: vec![], class: vec![0, 2], anchor: 1 };
    let err = solve(&[0b0011, 0b0010, 0b0110, 0b1111], &rules).unwrap_err();
    assert_eq!(err, ScheduleError::Rules { events: vec![1, 2], rules: vec!["counter c1 must hold a class event".to_string()] });
}

#[test]
fn groups_under_rules_split_what_cannot_share_the_counters() {
    let rules = TestRules { forbidden: vec![(0, 0, 1, 1)], class: vec![], anchor: 7 };
    let gs = groups(&[0b01, 0b10], &[], &rules).unwrap();
    assert_eq!(gs.groups, vec![vec![0], vec![1]]);
}

proptest! {
    /// A set asked to be counted together ends up in one group whenever it can be
    /// placed at once, and is reported apart otherwise; every event is still grouped
    /// exactly once.
    #[test]
    fn together_sets_share_a_group_when_they_fit(
        masks in prop::collection::vec(1u64..16, 2..10),
        sets in prop::collection::vec(prop::collection::vec(0usize..10, 2..4), 0..3),
    ) {
        let g = groups(&masks, &sets, &NoRules).unwrap();
        let mut all: Vec<usize> = g.groups.iter().flatten().copied().collect();
        all.sort_unstable();
        all.dedup();
        prop_assert_eq!(all, (0..masks.len()).collect::<Vec<_>>());
        for (k, set) in sets.iter().enumerate() {
            let mut members: Vec<usize> = set.iter().copied().filter(|&e| e < masks.len()).collect();
            members.sort_unstable();
            members.dedup();
            let fits = assign(&members.iter().map(|&e| masks[e]).collect::<Vec<_>>()).is_ok();
            let shared = g.groups.iter().any(|grp| members.iter().all(|e| grp.contains(e)));
            if !fits {
                prop_assert!(g.apart.contains(&k) && !shared || members.len() < 2);
            }
            if !g.apart.contains(&k) {
                prop_assert!(shared, "set {k} {members:?} is split: {:?}", g.groups);
            }
        }
    }
}

/// Exhaustive search for `members` of a longer list (the rules see their list
/// indices): whether some injective placement within the masks satisfies the rules.
fn placeable(allowed: &[u64], members: &[usize], rules: &dyn Rules) -> bool {
    fn go(allowed: &[u64], members: &[usize], rules: &dyn Rules, placed: &mut Vec<Option<usize>>) -> bool {
        let Some(k) = placed.iter().position(Option::is_none) else { return rules.check(members, placed).is_ok() };
        for c in 0..8 {
            if allowed[members[k]] >> c & 1 == 0 || placed.contains(&Some(c)) {
                continue;
            }
            placed[k] = Some(c);
            let found = go(allowed, members, rules, placed);
            placed[k] = None;
            if found {
                return true;
            }
        }
        false
    }
    go(allowed, members, rules, &mut vec![None; members.len()])
}

proptest! {
    /// Grouping under rules is first fit by exhaustive search: each event joins the
    /// first group it can be placed beside (the groups keep a placement and try the
    /// event on the counters it leaves free before searching again), an event with a
    /// counter of its own then joins every other group it fits, and an event that
    /// cannot be counted alone is refused.
    #[test]
    fn groups_under_rules_are_first_fit_by_exhaustive_search((masks, rules) in rules_strategy()) {
        let n = masks.len();
        let mut reference: Vec<Vec<usize>> = Vec::new();
        let mut alone = true;
        for e in 0..n {
            if !placeable(&masks, &[e], &rules) {
                alone = false;
                break;
            }
            let with = |g: &Vec<usize>| placeable(&masks, &g.iter().copied().chain([e]).collect::<Vec<_>>(), &rules);
            match reference.iter().position(with) {
                Some(g) => reference[g].push(e),
                None => reference.push(vec![e]),
            }
        }
        match groups(&masks, &[], &rules) {
            Ok(g) => {
                prop_assert!(alone);
                if reference.len() > 1 {
                    for e in (0..n).filter(|&e| pmukit_core::schedule::has_own_counter(&masks, e)) {
                        for grp in reference.iter_mut().filter(|g| !g.contains(&e)) {
                            if placeable(&masks, &grp.iter().copied().chain([e]).collect::<Vec<_>>(), &rules) {
                                grp.push(e);
                            }
                        }
                    }
                }
                prop_assert_eq!(g.groups, reference);
            }
            Err(_) => prop_assert!(!alone),
        }
    }
}

#[test]
fn an_event_with_a_counter_of_its_own_counts_in_every_group() {
    // ARM11: CPU_CYCLES may use CCNT (counter 0) or PMN0-1; five other events share
    // PMN0-1. Without this, CCNT would idle in two of the three groups.
    let masks = [0b111, 0b110, 0b110, 0b110, 0b110, 0b110];
    let g = groups(&masks, &[], &NoRules).unwrap();
    assert_eq!(g.groups, vec![vec![0, 1, 2], vec![3, 4, 0], vec![5, 0]]);
}

#[test]
fn a_set_that_fits_together_is_not_split_by_first_fit() {
    // Without the request, first fit puts events 0 and 1 together and 2 in a second
    // group; asking for {1, 2} together keeps them in one group.
    let masks = [0b01, 0b11, 0b10];
    assert_eq!(groups(&masks, &[], &NoRules).unwrap().groups, vec![vec![0, 1], vec![2]]);
    let g = groups(&masks, &[vec![1, 2]], &NoRules).unwrap();
    assert_eq!(g, Grouping { groups: vec![vec![0], vec![1, 2]], apart: vec![] });
    // Three events for two counters cannot be together: reported, and grouped alone.
    let g = groups(&[0b11, 0b11, 0b11], &[vec![0, 1, 2]], &NoRules).unwrap();
    assert_eq!(g.apart, vec![0]);
    assert_eq!(g.groups, vec![vec![0, 1], vec![2]]);
}

/// Rules that no partial placement breaks and every complete one does, over events
/// the rules tell apart: only trying every placement proves there is none.
struct Adversary;

impl Rules for Adversary {
    fn involves(&self, _event: usize) -> bool {
        true
    }

    fn interchangeable(&self, _a: usize, _b: usize) -> bool {
        false
    }

    fn check(&self, _members: &[usize], placed: &[Option<usize>]) -> Result<(), Violation> {
        match placed.iter().all(Option::is_some) {
            true => Err(Violation { rule: 0, events: Default::default() }),
            false => Ok(()),
        }
    }

    fn describe(&self, _v: &Violation) -> String {
        "never".into()
    }
}

#[test]
fn a_search_past_the_limit_stops_and_says_so() {
    // 12! placements: the search stops after SEARCH_LIMIT of them.
    let err = solve(&[0xfff; 12], &Adversary).unwrap_err();
    assert_eq!(err, ScheduleError::SearchLimit { events: (0..12).collect() });
    // Small sets are searched to the end.
    assert!(matches!(solve(&[0b111; 3], &Adversary), Err(ScheduleError::Rules { .. })));
}

/// Two sets sharing an event that do not fit together (ARM11's DCACHE_MISS/HIT and
/// DCACHE_ACCESS/HIT on two counters) each keep a group of their own, the shared
/// event counted in both, as perf opens a metric's events again; neither is apart.
#[test]
fn overlapping_sets_that_do_not_fit_together_share_their_event_across_groups() {
    let masks = [0b11, 0b11, 0b11];
    let g = groups(&masks, &[vec![0, 1], vec![2, 1]], &NoRules).unwrap();
    assert!(g.apart.is_empty(), "{g:?}");
    assert!(g.groups.iter().any(|grp| grp.contains(&0) && grp.contains(&1)), "{g:?}");
    assert!(g.groups.iter().any(|grp| grp.contains(&2) && grp.contains(&1)), "{g:?}");
    assert!(g.groups.iter().all(|grp| grp.len() <= 2), "{g:?}");
    // Sets that fit together merge into one group, as before.
    let g = groups(&[0b111; 3], &[vec![0, 1], vec![2, 1]], &NoRules).unwrap();
    assert_eq!(g.groups, [vec![0, 1, 2]]);
}
