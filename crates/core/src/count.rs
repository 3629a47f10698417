//! Counts as perf reports them: a 64-bit value with the time the event was enabled
//! and the time it was actually on a counter, scaled when it was multiplexed.

use serde::Serialize;

/// One event's result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Count {
    /// Exact count while the event was on a counter.
    pub raw: u64,
    /// Time (ns) the event was enabled.
    pub enabled: u64,
    /// Time (ns) the event was counting on a counter.
    pub running: u64,
}

impl Count {
    /// Whether the event shared counters with others and was not always counting.
    pub fn is_scaled(&self) -> bool {
        self.running < self.enabled
    }

    /// perf's estimate: raw × enabled / running, rounded to nearest; `None` when the
    /// event never ran.
    pub fn scaled(&self) -> Option<u64> {
        if self.running == 0 {
            return (self.enabled == 0).then_some(self.raw);
        }
        if !self.is_scaled() {
            return Some(self.raw);
        }
        let est = (self.raw as u128 * self.enabled as u128 + self.running as u128 / 2) / self.running as u128;
        Some(u64::try_from(est).unwrap_or(u64::MAX))
    }

    /// Percentage of enabled time the event was running.
    pub fn running_pct(&self) -> f64 {
        if self.enabled == 0 {
            100.0
        } else {
            self.running as f64 * 100.0 / self.enabled as f64
        }
    }
}
