//! Requests with lifetimes (docs/engine.md, E3): the structures a miss occupies on its
//! way (miss and fill buffers, load and store buffers, request queues, write queues)
//! are [`Pool`]s of entries, and those that serve one request at a time (banks, buses,
//! pipelines) are [`Server`]s. A request takes an entry from the cycle it enters until
//! the cycle it leaves; a full pool makes it wait for the earliest entry to free, a
//! busy server for the one before it: latency grows with occupancy and conflicts, and
//! independent requests overlap as far as the entries and servers allow.
//!
//! Requests must be offered in the order of their arrival cycles, as the hardware sees
//! them (the engine processes every thread's events in global cycle order): both
//! structures then grant in arrival order, as the cycle-by-cycle reference
//! (`tests::reference_pool`) does, and that equality is tested.
//!
//! Each structure keeps the integral of its occupancy and its requests, so that
//! Little's law (mean occupancy = arrival rate × mean residence) can be checked on
//! every run, and answers how many entries are held at any cycle of its window.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic))]

/// What a structure saw: requests, the cycles they spent in it, the cycles they
/// waited to get in, and the most it held at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Occupancy {
    pub requests: u64,
    /// Σ over requests of the cycles each held an entry (or the server): the integral
    /// of the occupancy over time.
    pub residence: u64,
    /// Σ over requests of the cycles each waited before it got in.
    pub waited: u64,
    pub most: usize,
}

impl Occupancy {
    /// A request held an entry `residence` cycles after waiting `waited` for it, with
    /// `held` entries taken (its own among them) when it got one.
    pub fn add(&mut self, residence: u64, waited: u64, held: usize) {
        self.requests += 1;
        self.residence += residence;
        self.waited += waited;
        self.most = self.most.max(held);
    }
}

/// `size` entries, each held by a request for a stretch of cycles.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pool {
    size: usize,
    /// The stretches `[from, until)` of the requests that hold or will hold an entry,
    /// by `until`: entries free again at their `until`.
    held: Vec<(u64, u64)>,
    stats: Occupancy,
}

impl Pool {
    pub fn new(size: usize) -> Pool {
        Pool { size: size.max(1), held: Vec::new(), stats: Occupancy::default() }
    }

    pub fn size(&self) -> usize {
        self.size
    }

    /// The first cycle at or after `at` at which a request arriving at `at` gets an
    /// entry: `at` when one is free then, else when the earliest held one frees (the
    /// requests taken so far arrived no later).
    pub fn free_at(&self, at: u64) -> u64 {
        let busy = self.held.iter().filter(|&&(_, until)| until > at).count();
        if busy < self.size {
            return at;
        }
        // Entries free in the order of their `until`; the one this request gets is the
        // (busy - size + 1)-th to free after `at`.
        let mut untils: Vec<u64> = self.held.iter().map(|&(_, until)| until).filter(|&u| u > at).collect();
        untils.sort_unstable();
        untils.get(busy - self.size).copied().unwrap_or(at)
    }

    /// A request arriving at `at` takes an entry for `hold(start)` cycles from the
    /// cycle `start` it gets one; returns `start` and the cycle it frees the entry.
    pub fn take(&mut self, at: u64, hold: impl FnOnce(u64) -> u64) -> (u64, u64) {
        let start = self.free_at(at);
        let until = start + hold(start).max(1);
        // Stretches wholly before `at` are done with: no later request can meet them.
        self.held.retain(|&(_, u)| u > at);
        self.held.push((start, until));
        self.stats.add(until - start, start - at, self.held_at(start));
        (start, until)
    }

    /// Entries held at cycle `t` (of the stretches still kept: those that end after
    /// the latest arrival).
    pub fn held_at(&self, t: u64) -> usize {
        self.held.iter().filter(|&&(from, until)| from <= t && t < until).count()
    }

    pub fn occupancy(&self) -> Occupancy {
        self.stats
    }

    /// What decides the pool's future at cycle `now`, as the period search compares
    /// it: each held or reserved stretch's start and end relative to `now`, in order.
    pub fn canonical(&self, now: u64, out: &mut Vec<u64>) {
        let mut live: Vec<(u64, u64)> =
            self.held.iter().filter(|&&(_, until)| until > now).map(|&(from, until)| (from.saturating_sub(now), until - now)).collect();
        live.sort_unstable();
        out.push(live.len() as u64);
        out.extend(live.into_iter().flat_map(|(from, until)| [from, until]));
    }
}

/// One request at a time, each for its service time, in arrival order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Server {
    free: u64,
    stats: Occupancy,
}

impl Server {
    /// A request arriving at `at` is served for `service` cycles from when the server
    /// is free; returns when its service starts and ends.
    pub fn serve(&mut self, at: u64, service: u64) -> (u64, u64) {
        self.serve_from(at, at, service)
    }

    /// A request arriving at `at` is served for `service` cycles from `start`, or from
    /// when the server is free if later: a caller that keeps stretches of the server
    /// for requests served out of order places it. Returns when its service starts
    /// and ends.
    pub fn serve_from(&mut self, at: u64, start: u64, service: u64) -> (u64, u64) {
        let start = start.max(at).max(self.free);
        let end = start + service;
        self.free = end;
        self.stats.add(service, start - at, 1);
        (start, end)
    }

    /// A request arriving at `at` is served for `service` cycles from `start`, out of
    /// the arrival order: the requests after it are not held behind it (the caller
    /// keeps its stretch). Counted with the others.
    pub fn serve_aside(&mut self, at: u64, start: u64, service: u64) {
        self.stats.add(service, start.saturating_sub(at), 1);
    }

    /// The first cycle at or after `at` the server is free.
    pub fn free_at(&self, at: u64) -> u64 {
        at.max(self.free)
    }

    pub fn occupancy(&self) -> Occupancy {
        self.stats
    }

    /// The cycles until the server is free, from `now` (the period search's terms).
    pub fn canonical(&self, now: u64, out: &mut Vec<u64>) {
        out.push(self.free.saturating_sub(now));
    }
}

/// `size` entries that requests may reach out of their arrival order, by the few
/// cycles strands that run at once are apart (each reaches the structure at its own
/// cycle): each entry keeps the stretch of its latest holder, and a request takes the
/// entry free soonest, so no entry ever holds two requests at once, whatever the order.
/// Where requests come in order, a [`Pool`] says the same and keeps every stretch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entries {
    /// Each entry's latest stretch `[from, until)`.
    held: Vec<(u64, u64)>,
    stats: Occupancy,
}

impl Entries {
    pub fn new(size: usize) -> Entries {
        Entries { held: vec![(0, 0); size.max(1)], stats: Occupancy::default() }
    }

    pub fn size(&self) -> usize {
        self.held.len()
    }

    /// The entry free soonest, and the cycle it is free.
    pub fn first(&self) -> (usize, u64) {
        self.held.iter().map(|&(_, until)| until).enumerate().min_by_key(|&(_, until)| until).unwrap_or((0, 0))
    }

    /// A request that arrived at `at` holds `entry` from `from` (at or after `at`, and
    /// after the entry's last holder) until `until`.
    pub fn hold(&mut self, entry: usize, at: u64, from: u64, until: u64) {
        let until = until.max(from);
        if let Some(e) = self.held.get_mut(entry) {
            *e = (from, until);
        }
        let held = self.held.iter().filter(|&&(f, u)| f <= from && from < u).count();
        self.stats.add(until - from, from.saturating_sub(at), held);
    }

    /// The cycle each entry is free again.
    pub fn frees(&self) -> impl Iterator<Item = u64> + '_ {
        self.held.iter().map(|&(_, until)| until)
    }

    /// Whether a request arriving at `at` finds every entry taken.
    pub fn full_at(&self, at: u64) -> bool {
        self.first().1 > at
    }

    pub fn occupancy(&self) -> Occupancy {
        self.stats
    }

    /// Each entry's cycles until it is free, from `now`, shortest first (entries are
    /// alike).
    pub fn canonical(&self, now: u64, out: &mut Vec<u64>) {
        let at = out.len();
        out.extend(self.held.iter().map(|&(_, until)| until.saturating_sub(now)));
        if let Some(mine) = out.get_mut(at..) {
            mine.sort_unstable();
        }
    }
}

/// A structure a machine's requests pass through, by name, with its entries and what
/// it saw: the engine's invariants (docs/engine.md E6) are checked on these.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Queue {
    pub name: &'static str,
    /// Which of several alike it is (a strand's, an MCU's).
    pub unit: Option<usize>,
    pub size: usize,
    pub occupancy: Occupancy,
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The cycle-by-cycle reference of a pool: requests wait in arrival order; each
    /// cycle, entries whose holder leaves that cycle free, and the oldest waiting
    /// requests take the free ones. Returns each request's start.
    fn reference_pool(size: usize, requests: &[(u64, u64)]) -> Vec<u64> {
        let mut starts = vec![None; requests.len()];
        let mut holding: Vec<u64> = Vec::new();
        let mut next = 0;
        let mut waiting: std::collections::VecDeque<usize> = Default::default();
        let mut cycle = 0;
        while starts.iter().any(Option::is_none) {
            holding.retain(|&until| until > cycle);
            while next < requests.len() && requests[next].0 == cycle {
                waiting.push_back(next);
                next += 1;
            }
            while holding.len() < size {
                let Some(r) = waiting.pop_front() else { break };
                starts[r] = Some(cycle);
                holding.push(cycle + requests[r].1.max(1));
            }
            cycle += 1;
        }
        starts.into_iter().map(|s| s.unwrap()).collect()
    }

    /// Requests (arrival, hold) in arrival order.
    fn requests() -> impl Strategy<Value = Vec<(u64, u64)>> {
        proptest::collection::vec((0u64..6, 1u64..30), 1..60).prop_map(|gaps| {
            let mut at = 0;
            gaps.into_iter()
                .map(|(gap, hold)| {
                    at += gap;
                    (at, hold)
                })
                .collect()
        })
    }

    proptest! {
        /// docs/engine.md E3: the event-driven pool grants every request the cycle the
        /// cycle-by-cycle reference does.
        #[test]
        fn a_pool_grants_as_the_cycle_by_cycle_reference(size in 1usize..6, reqs in requests()) {
            let mut pool = Pool::new(size);
            let starts: Vec<u64> = reqs.iter().map(|&(at, hold)| pool.take(at, |_| hold).0).collect();
            prop_assert_eq!(starts, reference_pool(size, &reqs));
        }

        /// Occupancy never exceeds the size, and Little's law holds over the run: the
        /// integral of the occupancy, cycle by cycle, is the requests' residence.
        #[test]
        fn a_pool_holds_at_most_its_size_and_keeps_littles_law(size in 1usize..6, reqs in requests()) {
            let mut pool = Pool::new(size);
            let mut stretches = Vec::new();
            for &(at, hold) in &reqs {
                stretches.push(pool.take(at, |_| hold));
            }
            let end = stretches.iter().map(|s| s.1).max().unwrap_or(0);
            let mut integral = 0;
            for t in 0..end {
                let held = stretches.iter().filter(|&&(from, until)| from <= t && t < until).count();
                prop_assert!(held <= size, "{} held at cycle {}", held, t);
                integral += held as u64;
            }
            let o = pool.occupancy();
            prop_assert_eq!(o.residence, integral);
            prop_assert_eq!(o.requests, reqs.len() as u64);
            prop_assert!(o.most <= size);
            // Waiting: each start is its arrival plus its wait.
            let waited: u64 = stretches.iter().zip(&reqs).map(|(s, r)| s.0 - r.0).sum();
            prop_assert_eq!(o.waited, waited);
        }

        /// A server is a pool of one whose requests hold it for their service.
        #[test]
        fn a_server_is_a_pool_of_one(reqs in requests()) {
            let mut server = Server::default();
            let served: Vec<u64> = reqs.iter().map(|&(at, service)| server.serve(at, service).0).collect();
            prop_assert_eq!(served, reference_pool(1, &reqs));
        }
    }

    proptest! {
        /// Requests reaching entries out of order by a few cycles never make an entry
        /// hold two at once, and the residence is the integral of the occupancy.
        #[test]
        fn entries_never_hold_more_than_their_size_whatever_the_order(size in 1usize..6, reqs in requests(), jitter in proptest::collection::vec(0u64..8, 60)) {
            let mut entries = Entries::new(size);
            let mut stretches = Vec::new();
            for (&(at, hold), j) in reqs.iter().zip(&jitter) {
                let at = at.saturating_sub(*j);
                // The entry free soonest, from when it is free.
                let (entry, free) = entries.first();
                let start = at.max(free);
                entries.hold(entry, at, start, start + hold);
                stretches.push((at, (start, start + hold)));
            }
            let end = stretches.iter().map(|s| s.1 .1).max().unwrap_or(0);
            let mut integral = 0;
            for t in 0..end {
                let held = stretches.iter().filter(|&&(_, (from, until))| from <= t && t < until).count();
                prop_assert!(held <= size, "{} held at cycle {}", held, t);
                integral += held as u64;
            }
            let o = entries.occupancy();
            prop_assert_eq!(o.residence, integral);
            prop_assert_eq!(o.waited, stretches.iter().map(|&(at, (from, _))| from - at).sum::<u64>());
            prop_assert!(o.most <= size);
        }
    }

    #[test]
    fn pools_that_will_behave_alike_describe_themselves_alike() {
        // The same requests 1000 cycles later leave the same state, relative to now.
        let (mut a, mut b) = (Pool::new(2), Pool::new(2));
        for at in [0, 1, 2] {
            a.take(at, |_| 50);
            b.take(at + 1000, |_| 50);
        }
        let (mut x, mut y) = (Vec::new(), Vec::new());
        a.canonical(10, &mut x);
        b.canonical(1010, &mut y);
        assert_eq!(x, y);
        assert_eq!(x, [3, 0, 40, 0, 41, 40, 90]);
    }

    #[test]
    fn independent_requests_overlap_up_to_the_size() {
        // Four misses of 200 cycles issued a cycle apart into 2 entries: two overlap,
        // the third waits for the first.
        let mut pool = Pool::new(2);
        let done: Vec<u64> = (0..4).map(|at| pool.take(at, |_| 200).1).collect();
        assert_eq!(done, [200, 201, 400, 401]);
        assert_eq!(pool.occupancy().waited, 198 + 198);
        assert_eq!(pool.held_at(300), 2);
    }
}
