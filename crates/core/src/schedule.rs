//! Counter assignment under per-event counter restrictions and a family's rules, and
//! multiplexing groups.
//!
//! Each event may use a set of counters (a bit mask). Without rules, assignment is a
//! bipartite matching, found with augmenting paths, so it succeeds whenever any
//! assignment exists; a refusal names a set of events that together can use fewer
//! counters than there are events (Hall's condition). A family may add [`Rules`] that
//! relate events and counters (Montecito: "one L1D event must be on PMC5", "L1D events
//! of one set only"); [`solve`] then searches every placement of the events the rules
//! involve, matching the others onto what is left, so it too finds an assignment
//! whenever one exists, and a refusal names a minimal set of events and the rules
//! they break. The search cuts a branch as soon as the events still unplaced cannot
//! be matched onto the counters left, and places events the rules treat alike in
//! increasing counter order only (six unit masks of one L1D event are one choice of
//! six counters, not 720 orders of it). It is bounded all the same
//! ([`SEARCH_LIMIT`]): rules are arbitrary code, and a tool must not hang on a set.

use smallvec::SmallVec;
use thiserror::Error;

/// The search's per-member lists, on the stack: a placement search has no more
/// members than the PMU has counters (twelve on Montecito); longer lists spill to the
/// heap.
pub type Few<T> = SmallVec<[T; 16]>;

/// The events of a [`Violation`]: a few, on the stack, as the search meets thousands
/// of violations and keeps almost none.
pub type ViolationEvents = SmallVec<[usize; 8]>;

/// What [`Rules::reserved`] gives: per rule that reserves counters, its violation and
/// the counters each member keeps.
pub type Reservations = SmallVec<[(Violation, Few<u64>); 2]>;

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ScheduleError {
    #[error("event {event} cannot be counted on any counter of this PMU")]
    NoCounter { event: usize },
    #[error("events {events:?} can only use counters {counters:?}: {n_events} events for {n_counters} counters")]
    Conflict { events: Vec<usize>, counters: Vec<usize>, n_events: usize, n_counters: usize },
    /// No placement of `events` (a minimal such set) satisfies the family's rules.
    #[error("events {events:?} break rules: {}", rules.join("; "))]
    Rules { events: Vec<usize>, rules: Vec<String> },
    /// The placement search for `events` stopped after [`SEARCH_LIMIT`] placements
    /// without finding one or proving there is none.
    #[error("events {events:?}: no placement found in {SEARCH_LIMIT} tries")]
    SearchLimit { events: Vec<usize> },
}

/// Partial placements the rules' search tries before giving up on a set. Random
/// Montecito sets stay far below it (docs/ROBUSTNESS.md, "Placement search").
pub const SEARCH_LIMIT: usize = 200_000;

/// A rule that a placement breaks: which rule, in the family's own numbering, and the
/// events (indices into the event list) that break it. The search meets thousands of
/// violations and shows none of them; [`Rules::describe`] words only those a refusal
/// shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    pub rule: u32,
    pub events: ViolationEvents,
}

/// A family's placement rules beyond each event's counter mask. Events are named by
/// their index in the caller's list; a check looks at the events of `members` only
/// (the set being placed), `placed[i]` being the counter of `members[i]`.
pub trait Rules {
    /// Whether event `event` takes part in any rule; the others only need a counter.
    fn involves(&self, event: usize) -> bool;
    /// Whether swapping the counters of involved events `a` and `b` (which may use the
    /// same counters) can never change a check's verdict. The search then tries only
    /// the placements that put such events in increasing counter order.
    fn interchangeable(&self, a: usize, b: usize) -> bool;
    /// `placed[i]` is `members[i]`'s counter, or `None` while it is not placed. Report
    /// only a violation that no placement of the unplaced members can repair: the
    /// search prunes on it.
    fn check(&self, members: &[usize], placed: &[Option<usize>]) -> Result<(), Violation>;
    /// The rule a violation of [`Rules::check`] breaks, in the spec's words.
    fn describe(&self, violation: &Violation) -> String;
    /// Counters the rules reserve: for each rule that takes counters from some of
    /// `members` (whatever their masks), the violation a placement using one would be,
    /// and per member the counters it keeps (`u64::MAX` for all). No placement that
    /// satisfies the rules may use a counter taken; the search then starts from masks
    /// narrowed so, and when those cannot be matched, names the rules that suffice
    /// to make it so (all of them when none does alone).
    fn reserved(&self, _members: &[usize]) -> Reservations {
        Reservations::new()
    }
}

/// No rules: counter masks alone decide.
pub struct NoRules;

impl Rules for NoRules {
    fn involves(&self, _event: usize) -> bool {
        false
    }

    fn interchangeable(&self, _a: usize, _b: usize) -> bool {
        true
    }

    fn check(&self, _members: &[usize], _placed: &[Option<usize>]) -> Result<(), Violation> {
        Ok(())
    }

    fn describe(&self, violation: &Violation) -> String {
        format!("rule {}", violation.rule)
    }
}

/// Assign a counter to every event under its mask and `rules`, or explain why none
/// exists. Returns the counter index of each event.
pub fn solve(allowed: &[u64], rules: &dyn Rules) -> Result<Vec<usize>, ScheduleError> {
    solve_members(allowed, &(0..allowed.len()).collect::<Vec<_>>(), rules)
}

/// [`solve`] for the events `members` of a longer list; errors name list indices.
fn solve_members(allowed: &[u64], members: &[usize], rules: &dyn Rules) -> Result<Vec<usize>, ScheduleError> {
    let masks: Few<u64> = members.iter().map(|&e| allowed[e]).collect();
    let matched = assign(&masks).map_err(|e| match e {
        ScheduleError::NoCounter { event } => ScheduleError::NoCounter { event: members[event] },
        ScheduleError::Conflict { events, counters, n_events, n_counters } => {
            ScheduleError::Conflict { events: events.iter().map(|&e| members[e]).collect(), counters, n_events, n_counters }
        }
        other => other,
    })?;
    match place(&masks, matched, members, rules) {
        Outcome::Found(found) => Ok(found),
        Outcome::Impossible => Err(explain_rules(allowed, members, rules)),
        Outcome::GaveUp => Err(ScheduleError::SearchLimit { events: members.to_vec() }),
    }
}

/// A placement of `members` under the rules, starting from `matched` (a matching under
/// the masks alone, which most sets take as it is), without explaining a refusal.
fn place(masks: &[u64], matched: Vec<usize>, members: &[usize], rules: &dyn Rules) -> Outcome {
    match keeping_rules(matched, members, rules) {
        Some(found) => Outcome::Found(found),
        None => search(masks, members, rules, None),
    }
}

/// `matched` (a counter for each of `members`) if it keeps every rule.
fn keeping_rules(matched: Vec<usize>, members: &[usize], rules: &dyn Rules) -> Option<Vec<usize>> {
    let placed: Few<Option<usize>> = matched.iter().map(|&c| Some(c)).collect();
    rules.check(members, &placed).is_ok().then_some(matched)
}

/// What the rules' search ended with.
enum Outcome {
    Found(Vec<usize>),
    /// Every placement breaks a rule.
    Impossible,
    /// [`SEARCH_LIMIT`] reached first.
    GaveUp,
}

/// Every placement of the members the rules involve (most constrained first), the
/// others matched onto the counters left. Violations met are collected in `seen`
/// when it is given (only an explanation needs them).
fn search(masks: &[u64], members: &[usize], rules: &dyn Rules, seen: Option<&mut Vec<Violation>>) -> Outcome {
    let reserved = rules.reserved(members);
    let keeping = |kept: &[&Few<u64>]| narrow(masks, kept);
    let narrowed = keeping(&reserved.iter().map(|(_, keep)| keep).collect::<Few<_>>());
    if !reserved.is_empty() && !has_matching(narrowed.len(), narrowed.iter().copied()) {
        if let Some(seen) = seen {
            let alone: Vec<&Violation> =
                reserved.iter().filter(|(_, keep)| !has_matching(masks.len(), keeping(&[keep]).into_iter())).map(|(v, _)| v).collect();
            match alone.is_empty() {
                true => seen.extend(reserved.into_iter().map(|(v, _)| v)),
                false => seen.extend(alone.into_iter().cloned()),
            }
        }
        return Outcome::Impossible;
    }
    let masks = narrowed.as_slice();
    // A matching of every member within the reservations: where no explanation is
    // asked for, it is tried whole first, and it most often keeps every rule (the L1D
    // event on PMD5, an L2D event on the PMD4 or PMD6 reserved for it), and no search
    // is needed. Else the search keeps a matching of the events not yet placed, from
    // this one, up to date as it places them.
    let start = matching(members.len(), masks.iter().copied());
    if let (None, Some(owner)) = (&seen, &start) {
        if let Some(found) = keeping_rules(counters_of(owner, members.len()), members, rules) {
            return Outcome::Found(found);
        }
    }
    let mut involved: Few<usize> = (0..members.len()).filter(|&i| rules.involves(members[i])).collect();
    involved.sort_by_key(|&i| masks[i].count_ones());
    let free: Few<usize> = (0..members.len()).filter(|&i| !rules.involves(members[i])).collect();
    // For each involved event, the last one before it in placement order that it may
    // swap with: it goes on a higher counter than that one.
    let twin: Few<Option<usize>> = (0..involved.len())
        .map(|k| {
            let i = involved[k];
            involved[..k].iter().rposition(|&j| masks[j] == masks[i] && rules.interchangeable(members[j], members[i]))
        })
        .collect();
    let mut search = Search {
        masks,
        members,
        rules,
        involved: &involved,
        twin: &twin,
        free: &free,
        placed: smallvec::smallvec![None; members.len()],
        seen,
        tries: 0,
    };
    match search.place(0, 0, &start.unwrap_or([NO_OWNER; 64]), start.is_some()) {
        Some(found) => Outcome::Found(found),
        None if search.tries > SEARCH_LIMIT => Outcome::GaveUp,
        None => Outcome::Impossible,
    }
}

/// The masks with the counters of the reservations `kept` took away.
fn narrow(masks: &[u64], kept: &[&Few<u64>]) -> Few<u64> {
    masks.iter().enumerate().map(|(i, &m)| kept.iter().fold(m, |m, keep| m & keep.get(i).copied().unwrap_or(u64::MAX))).collect()
}

/// Where the rules' reservations leave `members` without a matching: a Hall violator
/// of the narrowed masks (events wanting fewer counters than they are) with the
/// events the reservations are for, in list order. Usually far smaller than the set,
/// it is where shrinking a refusal starts.
fn reserved_conflict(allowed: &[u64], members: &[usize], rules: &dyn Rules) -> Option<Vec<usize>> {
    let reserved = rules.reserved(members);
    if reserved.is_empty() {
        return None;
    }
    let masks: Few<u64> = members.iter().map(|&e| allowed[e]).collect();
    let narrowed = narrow(&masks, &reserved.iter().map(|(_, keep)| keep).collect::<Few<_>>());
    let positions = match assign(&narrowed) {
        Ok(_) => return None,
        Err(ScheduleError::Conflict { events, .. }) => events,
        Err(ScheduleError::NoCounter { event }) => vec![event],
        Err(_) => return None,
    };
    let core: Vec<usize> = positions
        .iter()
        .filter_map(|&p| members.get(p).copied())
        .chain(reserved.iter().flat_map(|(v, _)| v.events.iter().copied()))
        .collect();
    Some(members.iter().copied().filter(|e| core.contains(e)).collect())
}

struct Search<'a> {
    masks: &'a [u64],
    members: &'a [usize],
    rules: &'a dyn Rules,
    involved: &'a [usize],
    twin: &'a [Option<usize>],
    free: &'a [usize],
    placed: Few<Option<usize>>,
    seen: Option<&'a mut Vec<Violation>>,
    tries: usize,
}

impl Search<'_> {
    fn note(&mut self, v: Violation) {
        if let Some(seen) = self.seen.as_deref_mut().filter(|seen| !seen.contains(&v)) {
            seen.push(v);
        }
    }

    /// Place involved event `k` onward, the counters in `used` taken. `rest` matches
    /// the events not yet placed (the involved from `k` on and the free) to distinct
    /// counters outside `used`, and `matchable` says whether there is such a matching:
    /// when there is none, no placement of them is possible.
    fn place(&mut self, k: usize, used: u64, rest: &[u32; 64], matchable: bool) -> Option<Vec<usize>> {
        self.tries += 1;
        if self.tries > SEARCH_LIMIT || !matchable {
            return None;
        }
        if k == self.involved.len() {
            let owner = matching(self.free.len(), self.free.iter().map(|&i| self.masks[i] & !used))?;
            for (c, &o) in owner.iter().enumerate() {
                if let Some(&i) = self.free.get(o as usize) {
                    self.placed[i] = Some(c);
                }
            }
            let result = self.rules.check(self.members, &self.placed);
            let out = result.as_ref().ok().map(|_| self.placed.iter().map(|c| c.unwrap_or(0)).collect());
            for &i in self.free {
                self.placed[i] = None;
            }
            if let Err(v) = result {
                self.note(v);
            }
            return out;
        }
        let i = self.involved[k];
        let above = self.twin[k].and_then(|t| self.placed[self.involved[t]]).map_or(0, |c| c + 1);
        let mask = self.masks[i] & !used & u64::MAX.checked_shl(above as u32).unwrap_or(0);
        for c in (0..64).filter(|c| mask >> c & 1 == 1) {
            self.placed[i] = Some(c);
            match self.rules.check(self.members, &self.placed) {
                Ok(()) => {
                    let (next, matchable) = self.without(rest, i, c, used);
                    if let Some(found) = self.place(k + 1, used | 1 << c, &next, matchable) {
                        return Some(found);
                    }
                }
                Err(v) => self.note(v),
            }
            self.placed[i] = None;
            if self.tries > SEARCH_LIMIT {
                break;
            }
        }
        None
    }

    /// `rest` once member `i` is placed on counter `c`: `i` leaves it, and the event
    /// that held `c` looks for an augmenting path around `c` and `used` (Kuhn's step).
    /// Every other event keeps its counter, so the matching costs one path, not a
    /// matching from scratch; when there is no such path the events left have no
    /// matching at all (the one that held `c` is the only one unmatched).
    fn without(&self, rest: &[u32; 64], i: usize, c: usize, used: u64) -> ([u32; 64], bool) {
        let mut next = *rest;
        if let Some(slot) = next.iter_mut().find(|o| **o as usize == i) {
            *slot = NO_OWNER;
        }
        let Some(&held) = next.get(c) else { return (next, false) };
        if held == NO_OWNER {
            return (next, true);
        }
        next[c] = NO_OWNER;
        let mut seen = used | 1 << c;
        let matched = augment(held as usize, self.masks, &mut next, &mut seen);
        (next, matched)
    }
}

/// Shrink an unsatisfiable set to a minimal unsatisfiable subset and name the rules
/// its placements break. A subset whose search gives up counts as satisfiable, so the
/// set named may then be larger than minimal but is never wrong.
fn explain_rules(allowed: &[u64], members: &[usize], rules: &dyn Rules) -> ScheduleError {
    let unsatisfiable = |set: &[usize], seen: Option<&mut Vec<Violation>>| {
        let masks: Few<u64> = set.iter().map(|&e| allowed[e]).collect();
        !has_matching(masks.len(), masks.iter().copied()) || matches!(search(&masks, set, rules, seen), Outcome::Impossible)
    };
    // Shrinking takes a search per event of the set it starts from. Where the
    // reservations refute the set, their conflict is a smaller start; else the events
    // of a rule the placements break may be unsatisfiable on their own (two events of
    // different L1D sets), the smallest first.
    let from_violations = || {
        let mut seen = Vec::new();
        unsatisfiable(members, Some(&mut seen));
        seen.sort_by_key(|v| v.events.len());
        seen.into_iter()
            .map(|v| members.iter().copied().filter(|e| v.events.contains(e)).collect::<Vec<_>>())
            .find(|c| unsatisfiable(c, None))
    };
    let mut set = reserved_conflict(allowed, members, rules)
        .filter(|c| unsatisfiable(c, None))
        .or_else(from_violations)
        .unwrap_or_else(|| members.to_vec());
    let mut i = 0;
    while i < set.len() {
        let without: Vec<usize> = set.iter().copied().filter(|&e| e != set[i]).collect();
        if !without.is_empty() && unsatisfiable(&without, None) {
            set = without;
        } else {
            i += 1;
        }
    }
    let mut seen = Vec::new();
    unsatisfiable(&set, Some(&mut seen));
    let mut words: Vec<String> = Vec::new();
    for v in &seen {
        let rule = rules.describe(v);
        if !words.contains(&rule) {
            words.push(rule);
        }
    }
    ScheduleError::Rules { events: set, rules: words }
}

/// Whether the `n` events of `allowed` (counter masks) can all get distinct counters:
/// [`assign`]'s question without its answer, and without allocating (every search and
/// every explanation step asks it).
fn has_matching(n: usize, allowed: impl Iterator<Item = u64>) -> bool {
    matching(n, allowed).is_some()
}

/// A distinct counter for each of the `n` events of `allowed`, as [`assign`] gives
/// them, in a table of each counter's event ([`NO_OWNER`] for none) on the stack.
fn matching(n: usize, allowed: impl Iterator<Item = u64>) -> Option<[u32; 64]> {
    // More events than counters never match; the rest fit a buffer on the stack.
    if n > 64 {
        return None;
    }
    let mut masks = [0u64; 64];
    for (m, a) in masks.iter_mut().zip(allowed) {
        *m = a;
    }
    let masks = masks.get(..n).unwrap_or_default();
    let mut owner = [NO_OWNER; 64];
    (0..n).all(|event| masks[event] != 0 && augment(event, masks, &mut owner, &mut 0)).then_some(owner)
}

/// An unowned counter in [`augment`]'s table of owners.
const NO_OWNER: u32 = u32::MAX;

/// The counters of a mask, lowest first.
fn bits(mask: u64) -> impl Iterator<Item = usize> {
    let mut rest = mask;
    std::iter::from_fn(move || {
        let c = rest.trailing_zeros() as usize;
        rest &= rest.wrapping_sub(1);
        (c < 64).then_some(c)
    })
}

/// Assign a distinct counter to every event. `allowed[i]` is event i's counter mask.
/// Returns the counter index of each event.
pub fn assign(allowed: &[u64]) -> Result<Vec<usize>, ScheduleError> {
    if let Some(event) = allowed.iter().position(|&m| m == 0) {
        return Err(ScheduleError::NoCounter { event });
    }
    let mut owner = [NO_OWNER; 64];
    for event in 0..allowed.len() {
        let mut seen = 0u64;
        if !augment(event, allowed, &mut owner, &mut seen) {
            // `seen` holds every counter reachable from `event` by alternating paths;
            // their owners plus `event` form the Hall violator.
            let counters: Vec<usize> = bits(seen).collect();
            let mut events: Vec<usize> = counters.iter().map(|&c| owner[c]).filter(|&o| o != NO_OWNER).map(|o| o as usize).collect();
            events.push(event);
            events.sort_unstable();
            return Err(ScheduleError::Conflict { n_events: events.len(), n_counters: counters.len(), events, counters });
        }
    }
    Ok(counters_of(&owner, allowed.len()))
}

/// The counter of each of `n` events in a table of each counter's event.
fn counters_of(owner: &[u32; 64], n: usize) -> Vec<usize> {
    let mut out = vec![0; n];
    for (c, &o) in owner.iter().enumerate() {
        if let Some(e) = out.get_mut(o as usize) {
            *e = c;
        }
    }
    out
}

/// An augmenting path for `event` (Kuhn's algorithm): `owner[c]` is the event holding
/// counter `c`; events are numbered below [`NO_OWNER`] (a list that long could never
/// be placed on 64 counters, and is refused by then).
fn augment(event: usize, allowed: &[u64], owner: &mut [u32; 64], seen: &mut u64) -> bool {
    let mask = allowed[event] & !*seen;
    let Ok(id) = u32::try_from(event) else { return false };
    // A free counter first, so that events keep the counters they were given in order.
    if let Some(c) = bits(mask).find(|&c| owner[c] == NO_OWNER) {
        *seen |= 1 << c;
        owner[c] = id;
        return true;
    }
    for c in bits(mask) {
        if *seen >> c & 1 == 1 {
            continue;
        }
        *seen |= 1 << c;
        let other = owner[c];
        if other != NO_OWNER && augment(other as usize, allowed, owner, seen) {
            owner[c] = id;
            return true;
        }
    }
    false
}

/// Multiplexing groups, and the requests to count events together that could not be
/// honoured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grouping {
    pub groups: Vec<Vec<usize>>,
    /// Indices into `together` of the sets whose events cannot all be placed at once
    /// (with the sets they overlap); their events were grouped one by one.
    pub apart: Vec<usize>,
}

/// Split events into groups that can each be counted together, for multiplexing.
/// Events keep their order; each goes into the first group it fits, as perf's
/// rotation does, and an event with a counter of its own is also in every other
/// group it fits. Each set in `together` (a metric's events, say) stays in one group
/// when it can be placed at once: merged with the sets it overlaps when they all fit
/// at once, else on its own, its shared events then counted in each of their groups
/// (as perf opens a metric's events again for a group of its own). An event that
/// cannot be counted even alone is an error.
pub fn groups(allowed: &[u64], together: &[Vec<usize>], rules: &dyn Rules) -> Result<Grouping, ScheduleError> {
    let n = allowed.len();
    // The units events are placed in: the together sets (an event may be in several),
    // each with the placement that showed it can be placed at once.
    let mut units: Vec<(Vec<usize>, Vec<usize>)> = Vec::new();
    let mut apart = Vec::new();
    for (k, set) in together.iter().enumerate() {
        let mut members: Vec<usize> = set.iter().copied().filter(|&e| e < n).collect();
        members.sort_unstable();
        members.dedup();
        if members.len() < 2 || units.iter().any(|(u, _)| members.iter().all(|e| u.contains(e))) {
            continue;
        }
        let overlapping: Vec<usize> = (0..units.len()).filter(|&u| units[u].0.iter().any(|e| members.contains(e))).collect();
        let mut merged = members.clone();
        for &u in &overlapping {
            merged.extend(units[u].0.iter().copied());
        }
        merged.sort_unstable();
        merged.dedup();
        if !overlapping.is_empty() {
            if let Ok(placed) = solve_members(allowed, &merged, rules) {
                for &u in overlapping.iter().rev() {
                    units.remove(u);
                }
                units.push((merged, placed));
                continue;
            }
        }
        match solve_members(allowed, &members, rules) {
            Ok(placed) => units.push((members, placed)),
            Err(_) => apart.push(k),
        }
    }
    // Each group with a placement that satisfies the rules, unit by unit in the order
    // of their first events: a unit joins a group most cheaply by taking counters the
    // placement leaves free, and needs none for its events the group already has.
    let mut out: Vec<(Vec<usize>, Vec<usize>)> = Vec::new();
    for i in 0..n {
        let mut starting: Vec<(Vec<usize>, Vec<usize>)> = units.iter().filter(|(u, _)| u.first() == Some(&i)).cloned().collect();
        if starting.is_empty() && !units.iter().any(|(u, _)| u.contains(&i)) {
            // An event alone is refused here when it cannot be counted even alone.
            starting.push((vec![i], solve_members(allowed, &[i], rules)?));
        }
        for (unit, alone) in starting {
            let found = out.iter_mut().find_map(|(g, placed)| {
                let more: Vec<usize> = unit.iter().copied().filter(|e| !g.contains(e)).collect();
                let found = if more.is_empty() { placed.clone() } else { joined(allowed, g, placed, &more, rules)? };
                Some((found, more, g, placed))
            });
            match found {
                Some((found, more, g, placed)) => {
                    g.extend(more);
                    *placed = found;
                }
                None => out.push((unit, alone)),
            }
        }
    }
    // An event with a counter no other event may use (ARM11's cycle counter CCNT)
    // would leave that counter idle in every group but its own: it joins every group
    // it fits, and so counts all the time.
    if out.len() > 1 {
        for e in (0..n).filter(|&e| has_own_counter(allowed, e)) {
            for (g, placed) in out.iter_mut().filter(|(g, _)| !g.contains(&e)) {
                if let Some(found) = joined(allowed, g, placed, &[e], rules) {
                    g.push(e);
                    *placed = found;
                }
            }
        }
    }
    Ok(Grouping { groups: out.into_iter().map(|(g, _)| g).collect(), apart })
}

/// A placement of `group` (placed on `placed`, which satisfies the rules) with `more`
/// beside it, if there is one: first the group's placement kept and a single event on
/// a counter it leaves free (a check per counter), else the whole search.
fn joined(allowed: &[u64], group: &[usize], placed: &[usize], more: &[usize], rules: &dyn Rules) -> Option<Vec<usize>> {
    let members: Few<usize> = group.iter().chain(more).copied().collect();
    if let [e] = more {
        let used = placed.iter().fold(0u64, |u, &c| u | 1u64.checked_shl(c as u32).unwrap_or(0));
        let mut trial: Few<Option<usize>> = placed.iter().map(|&c| Some(c)).chain([None]).collect();
        for c in bits(allowed[*e] & !used) {
            trial[group.len()] = Some(c);
            if rules.check(&members, &trial).is_ok() {
                return Some(trial.iter().map(|c| c.unwrap_or(0)).collect());
            }
        }
    }
    let masks: Few<u64> = members.iter().map(|&e| allowed[e]).collect();
    match place(&masks, assign(&masks).ok()?, &members, rules) {
        Outcome::Found(found) => Some(found),
        _ => None,
    }
}

/// Whether event `e` may use a counter no other event may (ARM11's CCNT beside
/// events that only use PMN0-1).
pub fn has_own_counter(allowed: &[u64], e: usize) -> bool {
    let others = allowed.iter().enumerate().filter(|&(f, _)| f != e).fold(0, |m, (_, a)| m | a);
    allowed.get(e).is_some_and(|a| a & !others != 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The search's allocation-free question agrees with the matching it stands
        /// for, on up to 70 events (past the 64 counters), masks of about eight
        /// counters each.
        #[test]
        fn has_matching_answers_as_assign_does(masks in prop::collection::vec(any::<u64>().prop_map(|m| m & (m >> 7) & (m >> 13)), 0..70)) {
            prop_assert_eq!(has_matching(masks.len(), masks.iter().copied()), assign(&masks).is_ok());
        }
    }
}
