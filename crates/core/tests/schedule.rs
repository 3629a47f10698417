//! Counter assignment finds a matching whenever one exists, and explains refusals.

use pmukit_core::schedule::{assign, groups, ScheduleError};
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
        }
    }

    #[test]
    fn groups_cover_every_event_once_and_each_group_fits(masks in prop::collection::vec(1u64..8, 1..10)) {
        let gs = groups(&masks).unwrap();
        let mut all: Vec<usize> = gs.iter().flatten().copied().collect();
        all.sort_unstable();
        prop_assert_eq!(all, (0..masks.len()).collect::<Vec<_>>());
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
    assert!(groups(&[0]).is_err());
}
