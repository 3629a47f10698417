//! The placement rules between Montecito events (§4.8.2 L1D sets, §4.8.4 L2D sets,
//! the mutually exclusive events of §4.15, one configuration per capture register of
//! §3.3.8-§3.3.10), as the scheduler asks them. What the rules
//! read of each event (its sets, unit mask, `.all`, the events it excludes) is looked
//! up once per event list: the scheduler's search checks a placement many times.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic))]

use pmukit_core::event_string::EventSel;
use pmukit_core::pmu::Pmu;
use pmukit_core::schedule::{Rules, Violation};

use super::pmu::{attr, index, plm, PMC_NAMES, PMD_NAMES};

/// The §4.8.4 groups: an anchor counter and the counters that share its L2D set and
/// unit mask.
const L2D_GROUPS: [(usize, [usize; 2]); 2] = [(index(4), [index(5), index(8)]), (index(6), [index(7), index(9)])];

/// What the rules read of one event.
#[derive(Debug, PartialEq, Eq)]
struct Facts<'a> {
    name: &'a str,
    /// Its L1D set (§4.8.2.x).
    l1d: Option<&'a str>,
    /// Its L2D set (§4.8.4.x), unit mask and `.all`: §4.8.4 compares all three.
    l2d: Option<(&'a str, u64, Option<u64>)>,
    /// The capture register it programs (its `capture` attribute), with its privilege
    /// levels, which the register takes too.
    capture: Option<(&'a str, u64)>,
}

/// The capture register a `capture` attribute programs.
fn capture_register(spec: &str) -> &str {
    spec.split_whitespace().next().unwrap_or("")
}

/// §3.3.9.2, §3.3.9.3: a D-EAR configuration in TLB or ALAT mode, which needs PMC39 = 0.
fn dear_needs_no_etb(spec: &str) -> bool {
    capture_register(spec) == "PMC40" && spec.split_whitespace().any(|w| w.strip_prefix("mode=").is_some_and(|m| m != "00"))
}

/// The rules over one list of events.
pub struct Placement<'a> {
    /// Per event of the list: `None` for an event no rule involves.
    facts: Vec<Option<Facts<'a>>>,
    /// Per event of the list: the events of the list it excludes (§4.15), with the
    /// name its note gives them.
    excludes: Vec<Vec<(usize, &'a str)>>,
}

/// The rules over `sels`, for `schedule::solve` and `schedule::groups`.
pub fn rules<'a>(_pmu: &'a Pmu, sels: &'a [EventSel]) -> Box<dyn Rules + 'a> {
    let excludes: Vec<Vec<(usize, &str)>> = sels
        .iter()
        .map(|sel| {
            let names = attr(sel, "excludes").into_iter().flat_map(|v| v.split(',')).map(str::trim).filter(|s| !s.is_empty());
            names
                .flat_map(|name| {
                    let named =
                        sels.iter().enumerate().filter(move |(_, b)| b.event.as_ref().is_some_and(|e| e.name.eq_ignore_ascii_case(name)));
                    named.map(move |(b, _)| (b, name))
                })
                .collect()
        })
        .collect();
    // An event whose exclusions name no event of the list is bound by no §4.15 rule here.
    let facts = sels
        .iter()
        .zip(&excludes)
        .map(|(sel, excluded)| {
            let l1d = attr(sel, "l1d_set");
            let l2d = attr(sel, "l2d_set").map(|set| (set, sel.umask, sel.modifier("all")));
            let capture = attr(sel, "capture").map(|spec| (spec, plm(sel)));
            let involved = l1d.is_some() || l2d.is_some() || capture.is_some() || !excluded.is_empty();
            involved.then(|| Facts { name: sel.event.as_ref().map_or("", |e| e.name.as_ref()), l1d, l2d, capture })
        })
        .collect();
    Box::new(Placement { facts, excludes })
}

impl Placement<'_> {
    fn facts(&self, event: usize) -> Option<&Facts<'_>> {
        self.facts.get(event).and_then(Option::as_ref)
    }
}

impl Rules for Placement<'_> {
    fn involves(&self, event: usize) -> bool {
        self.facts(event).is_some()
    }

    /// Events of one name (so with the same exclusions) and the same sets, unit mask
    /// and `.all` where §4.8.4 compares them: unit masks of one L1D event are alike.
    fn interchangeable(&self, a: usize, b: usize) -> bool {
        self.facts(a) == self.facts(b)
    }

    fn check(&self, members: &[usize], placed: &[Option<usize>]) -> Result<(), Violation> {
        let n = members.len();
        let facts = |i: usize| members.get(i).and_then(|&e| self.facts(e));
        let l1d = |i: usize| facts(i).and_then(|f| f.l1d);
        let l2d = |i: usize| facts(i).and_then(|f| f.l2d);
        let at = |i: usize| placed.get(i).copied().flatten();
        let violation = |rule: String, events: Vec<usize>| {
            Err(Violation { rule, events: events.iter().filter_map(|&i| members.get(i).copied()).collect() })
        };

        // Mutually exclusive events (their notes in §4.15).
        for (a, &event) in members.iter().enumerate() {
            for &(excluded, name) in self.excludes.get(event).into_iter().flatten() {
                if let Some(b) = members.iter().position(|&m| m == excluded) {
                    let ea = facts(a).map_or("", |f| f.name);
                    return violation(format!("§4.15 {ea}: only one of {ea} and {name} may be measured at a time"), vec![a, b]);
                }
            }
        }

        // §3.3.8-§3.3.10: each EAR and the trace buffer hold one configuration; PMC39
        // must be 0 while the D-EAR is in TLB or ALAT mode.
        let captures: Vec<(usize, &str, u64)> = (0..n).filter_map(|i| facts(i).and_then(|f| f.capture).map(|(s, p)| (i, s, p))).collect();
        for (k, &(a, spec_a, plm_a)) in captures.iter().enumerate() {
            for &(b, spec_b, plm_b) in captures.iter().skip(k + 1) {
                let (reg_a, reg_b) = (capture_register(spec_a), capture_register(spec_b));
                if reg_a == reg_b && (spec_a, plm_a) != (spec_b, plm_b) {
                    return violation(
                        format!("§3.3.8-§3.3.10: both program {reg_a} differently, and it holds one configuration"),
                        vec![a, b],
                    );
                }
                let etb_beside_dear = (dear_needs_no_etb(spec_a) && reg_b == "PMC39") || (dear_needs_no_etb(spec_b) && reg_a == "PMC39");
                if etb_beside_dear {
                    return violation(
                        "§3.3.9.2, §3.3.9.3: PMC39 (the trace buffer) must be 0 while the D-EAR is in TLB or ALAT mode".into(),
                        vec![a, b],
                    );
                }
            }
        }

        // §4.8.2: one L1D set at a time, selected by the event on PMD5.
        let l1d_events: Vec<usize> = (0..n).filter(|&i| l1d(i).is_some()).collect();
        if let Some(&first) = l1d_events.first() {
            if let Some(&other) = l1d_events.iter().find(|&&i| l1d(i) != l1d(first)) {
                return violation(
                    format!(
                        "§4.8.2: events of different L1D sets (set {} and set {}) cannot be measured at the same time",
                        l1d(first).unwrap_or("?"),
                        l1d(other).unwrap_or("?")
                    ),
                    vec![first, other],
                );
            }
            let on_pmd5 = (0..n).find(|&i| at(i) == Some(index(5)));
            let broken = match on_pmd5 {
                Some(i) => !l1d_events.contains(&i),
                None => l1d_events.iter().all(|&i| at(i).is_some()),
            };
            if broken {
                let mut events = l1d_events.clone();
                events.extend(on_pmd5.filter(|i| !l1d_events.contains(i)));
                return violation("§4.8.2: one of the L1D events must be measured by PMD5 (PMC5 selects the L1D set)".into(), events);
            }
        }

        // §4.8.4: PMD5/8 count PMC4's L2D set with PMC4's umask and .all; PMD7/9 PMC6's.
        for (anchor, followers) in L2D_GROUPS {
            let on = |c: usize| (0..n).find(|&i| at(i) == Some(c));
            for follower in followers {
                let Some((f, wanted)) = on(follower).and_then(|f| Some((f, l2d(f)?))) else { continue };
                let same = |a: usize| l2d(a) == Some(wanted);
                let fine = match on(anchor) {
                    Some(a) => same(a),
                    None => (0..n).any(|a| at(a).is_none() && same(a)),
                };
                if !fine {
                    let mut events = vec![f];
                    events.extend(on(anchor));
                    let name = |names: &[&'static str; 12], c: usize| names.get(c).copied().unwrap_or("?");
                    let (pmd, pmd_anchor, pmc_anchor) = (name(&PMD_NAMES, follower), name(&PMD_NAMES, anchor), name(&PMC_NAMES, anchor));
                    return violation(
                        format!(
                            "§4.8.4: an L2D event on {pmd} needs an L2D event of the same set, unit mask and .all on {pmd_anchor} ({pmd} shares {pmc_anchor}'s set and umask)"
                        ),
                        events,
                    );
                }
            }
        }
        Ok(())
    }
}
