//! Counts scale like perf's: count x enabled / running.

use pmukit_core::count::Count;

#[test]
fn unscaled_when_always_running() {
    let c = Count { raw: 123, enabled: 1000, running: 1000 };
    assert!(!c.is_scaled());
    assert_eq!(c.scaled(), Some(123));
}

#[test]
fn scaled_by_enabled_over_running_rounded() {
    let c = Count { raw: 100, enabled: 3000, running: 1000 };
    assert!(c.is_scaled());
    assert_eq!(c.scaled(), Some(300));
    assert_eq!(Count { raw: 1, enabled: 3, running: 2 }.scaled(), Some(2));
    assert!((c.running_pct() - 33.333).abs() < 0.01);
}

#[test]
fn never_running_is_not_counted() {
    assert_eq!(Count { raw: 0, enabled: 10, running: 0 }.scaled(), None);
}

#[test]
fn scaling_does_not_overflow_64_bits() {
    let c = Count { raw: u64::MAX / 2, enabled: u64::MAX, running: u64::MAX / 4 };
    assert_eq!(c.scaled(), Some(u64::MAX));
}
