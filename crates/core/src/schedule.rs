//! Counter assignment under per-event counter restrictions, and multiplexing groups.
//!
//! Each event may use a set of counters (a bit mask). Assignment is a bipartite
//! matching, found with augmenting paths, so it succeeds whenever any assignment
//! exists. A refusal names a smallest-known conflict: a set of events that together
//! can use fewer counters than there are events (Hall's condition).

use thiserror::Error;

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ScheduleError {
    #[error("event {event} cannot be counted on any counter of this PMU")]
    NoCounter { event: usize },
    #[error("events {events:?} can only use counters {counters:?}: {n_events} events for {n_counters} counters")]
    Conflict { events: Vec<usize>, counters: Vec<usize>, n_events: usize, n_counters: usize },
}

/// Assign a distinct counter to every event. `allowed[i]` is event i's counter mask.
/// Returns the counter index of each event.
pub fn assign(allowed: &[u64]) -> Result<Vec<usize>, ScheduleError> {
    if let Some(event) = allowed.iter().position(|&m| m == 0) {
        return Err(ScheduleError::NoCounter { event });
    }
    let mut owner: [Option<usize>; 64] = [None; 64];
    for event in 0..allowed.len() {
        let mut seen = 0u64;
        if !augment(event, allowed, &mut owner, &mut seen) {
            // `seen` holds every counter reachable from `event` by alternating paths;
            // their owners plus `event` form the Hall violator.
            let counters: Vec<usize> = (0..64).filter(|c| seen >> c & 1 == 1).collect();
            let mut events: Vec<usize> = counters.iter().filter_map(|&c| owner[c]).collect();
            events.push(event);
            events.sort_unstable();
            return Err(ScheduleError::Conflict { n_events: events.len(), n_counters: counters.len(), events, counters });
        }
    }
    let mut out = vec![0; allowed.len()];
    for (c, o) in owner.iter().enumerate() {
        if let Some(e) = o {
            out[*e] = c;
        }
    }
    Ok(out)
}

fn augment(event: usize, allowed: &[u64], owner: &mut [Option<usize>; 64], seen: &mut u64) -> bool {
    let mask = allowed[event] & !*seen;
    let counters = || (0..64).filter(move |c| mask >> c & 1 == 1);
    // A free counter first, so that events keep the counters they were given in order.
    if let Some(c) = counters().find(|&c| owner[c].is_none()) {
        *seen |= 1 << c;
        owner[c] = Some(event);
        return true;
    }
    for c in counters() {
        if *seen >> c & 1 == 1 {
            continue;
        }
        *seen |= 1 << c;
        if let Some(other) = owner[c] {
            if augment(other, allowed, owner, seen) {
                owner[c] = Some(event);
                return true;
            }
        }
    }
    false
}

/// Split events into groups that can each be counted together, for multiplexing.
/// Events keep their order; each goes into the first group it fits, as perf's
/// rotation does. An event that fits no counter at all is an error.
pub fn groups(allowed: &[u64]) -> Result<Vec<Vec<usize>>, ScheduleError> {
    let mut out: Vec<Vec<usize>> = Vec::new();
    for (i, &mask) in allowed.iter().enumerate() {
        if mask == 0 {
            return Err(ScheduleError::NoCounter { event: i });
        }
        let fits = |g: &Vec<usize>| {
            let masks: Vec<u64> = g.iter().chain(std::iter::once(&i)).map(|&e| allowed[e]).collect();
            assign(&masks).is_ok()
        };
        match out.iter_mut().find(|g| fits(g)) {
            Some(g) => g.push(i),
            None => out.push(vec![i]),
        }
    }
    Ok(out)
}
