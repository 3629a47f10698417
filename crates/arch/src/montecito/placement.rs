//! The placement rules between Montecito events (§4.8.2 L1D sets, §4.8.4 L2D sets,
//! the mutually exclusive events of §4.15, one configuration per capture register of
//! §3.3.8-§3.3.10), as the scheduler asks them. What the rules
//! read of each event (its sets, unit mask, `.all`, the events it excludes) is looked
//! up once per event list: the scheduler's search checks a placement many times.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic))]

use pmukit_core::event_string::EventSel;
use pmukit_core::pmu::Pmu;
use pmukit_core::schedule::{Few, Reservations, Rules, Violation, ViolationEvents};

use super::pmu::{attr, index, plm, PMC_NAMES, PMD_NAMES};

/// The §4.8.4 groups: an anchor counter and the counters that share its L2D set and
/// unit mask.
const L2D_GROUPS: [(usize, [usize; 2]); 2] = [(index(4), [index(5), index(8)]), (index(6), [index(7), index(9)])];

/// The rules, as [`Violation::rule`] numbers them; an L2D follower's rule adds the
/// follower's counter to `L2D_FOLLOWS`.
const EXCLUDES: u32 = 0;
const CAPTURE_TWICE: u32 = 1;
const ETB_BESIDE_DEAR: u32 = 2;
const L1D_SETS: u32 = 3;
const L1D_ON_PMD5: u32 = 4;
const L2D_ALONE: u32 = 5;
const L2D_FOLLOWS: u32 = 16;

/// What the rules read of one event.
#[derive(Debug, PartialEq, Eq)]
struct Facts<'a> {
    name: &'a str,
    /// Its L1D set (§4.8.2.x).
    l1d: Option<&'a str>,
    /// Its L2D set (§4.8.4.x), unit mask and `.all`: §4.8.4 compares all three.
    l2d: Option<(&'a str, u64, Option<u64>)>,
    /// The capture register it programs and how (its `capture` attribute).
    capture: Option<Capture<'a>>,
}

/// An event's `capture` attribute, read once: the checks compare these, not text.
#[derive(Debug, PartialEq, Eq)]
struct Capture<'a> {
    /// The whole attribute and the privilege levels, which the register takes too:
    /// one register holds one of these.
    spec: &'a str,
    plm: u64,
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
    /// Per event of the list: its facts as numbers, which `check` compares.
    keys: Vec<Keys>,
    /// Which rules the list's events are bound by at all: whether any event excludes
    /// another, programs a capture register, or belongs to an L1D or L2D set.
    excluding: bool,
    capturing: bool,
    l1d_sets: bool,
    l2d_sets: bool,
}

/// What the checks compare of one event, each value numbered within the list (0 for
/// none): its L1D set; its L2D set with unit mask and `.all`; its capture register,
/// and that register's configuration with the privilege levels.
#[derive(Debug, Clone, Copy, Default)]
struct Keys {
    l1d: u32,
    l2d: u32,
    register: u32,
    capture: u32,
    needs_no_etb: bool,
    is_etb: bool,
}

/// Numbers values in order of first appearance, from 1.
struct Numbering<T>(Vec<T>);

impl<T: PartialEq> Numbering<T> {
    fn of(&mut self, value: Option<T>) -> u32 {
        let Some(value) = value else { return 0 };
        let at = self.0.iter().position(|v| *v == value).unwrap_or_else(|| {
            self.0.push(value);
            self.0.len() - 1
        });
        u32::try_from(at + 1).unwrap_or(u32::MAX)
    }
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
            let capture = attr(sel, "capture").map(|spec| Capture { spec, plm: plm(sel) });
            let involved = l1d.is_some() || l2d.is_some() || capture.is_some() || !excluded.is_empty();
            involved.then(|| Facts { name: sel.event.as_ref().map_or("", |e| e.name.as_ref()), l1d, l2d, capture })
        })
        .collect::<Vec<Option<Facts>>>();
    let (mut l1d, mut l2d, mut register, mut capture) =
        (Numbering(Vec::new()), Numbering(Vec::new()), Numbering(Vec::new()), Numbering(Vec::new()));
    let keys: Vec<Keys> = facts
        .iter()
        .map(|f| {
            let Some(f) = f else { return Keys::default() };
            let c = f.capture.as_ref();
            Keys {
                l1d: l1d.of(f.l1d),
                l2d: l2d.of(f.l2d),
                register: register.of(c.map(|c| capture_register(c.spec))),
                capture: capture.of(c.map(|c| (c.spec, c.plm))),
                needs_no_etb: c.is_some_and(|c| dear_needs_no_etb(c.spec)),
                is_etb: c.is_some_and(|c| capture_register(c.spec) == "PMC39"),
            }
        })
        .collect();
    let excluding = excludes.iter().any(|e| !e.is_empty());
    let any = |f: fn(&Keys) -> bool| keys.iter().any(f);
    let (capturing, l1d_sets, l2d_sets) = (any(|k| k.register != 0), any(|k| k.l1d != 0), any(|k| k.l2d != 0));
    Box::new(Placement { facts, excludes, keys, excluding, capturing, l1d_sets, l2d_sets })
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
        // Called for every placement the search tries: numbers compared, nothing
        // allocated until a rule is broken, and nothing worded (`describe` does that).
        let n = members.len();
        let key = |i: usize| members.get(i).and_then(|&e| self.keys.get(e)).copied().unwrap_or_default();
        let at = |i: usize| placed.get(i).copied().flatten();
        let violation = |rule: u32, events: &mut dyn Iterator<Item = usize>| {
            Err(Violation { rule, events: events.filter_map(|i| members.get(i).copied()).collect() })
        };

        // Mutually exclusive events (their notes in §4.15).
        if self.excluding {
            for (a, &event) in members.iter().enumerate() {
                for &(excluded, _) in self.excludes.get(event).into_iter().flatten() {
                    if let Some(b) = members.iter().position(|&m| m == excluded) {
                        return violation(EXCLUDES, &mut [a, b].into_iter());
                    }
                }
            }
        }

        // §3.3.8-§3.3.10: each EAR and the trace buffer hold one configuration; PMC39
        // must be 0 while the D-EAR is in TLB or ALAT mode.
        for a in (0..n).filter(|_| self.capturing) {
            let ka = key(a);
            if ka.register == 0 {
                continue;
            }
            for b in a + 1..n {
                let kb = key(b);
                if kb.register == 0 {
                    continue;
                }
                if ka.register == kb.register && ka.capture != kb.capture {
                    return violation(CAPTURE_TWICE, &mut [a, b].into_iter());
                }
                if (ka.needs_no_etb && kb.is_etb) || (kb.needs_no_etb && ka.is_etb) {
                    return violation(ETB_BESIDE_DEAR, &mut [a, b].into_iter());
                }
            }
        }

        // §4.8.2: one L1D set at a time, selected by the event on PMD5.
        let l1d = |i: usize| key(i).l1d;
        if let Some(first) = (0..n).filter(|_| self.l1d_sets).find(|&i| l1d(i) != 0) {
            if let Some(other) = (first + 1..n).find(|&i| l1d(i) != 0 && l1d(i) != l1d(first)) {
                return violation(L1D_SETS, &mut [first, other].into_iter());
            }
            let on_pmd5 = (0..n).find(|&i| at(i) == Some(index(5)));
            let broken = match on_pmd5 {
                Some(i) => l1d(i) == 0,
                None => (0..n).all(|i| l1d(i) == 0 || at(i).is_some()),
            };
            if broken {
                let l1d_events = (0..n).filter(|&i| l1d(i) != 0);
                return violation(L1D_ON_PMD5, &mut l1d_events.chain(on_pmd5.filter(|&i| l1d(i) == 0)));
            }
        }

        // §4.8.4: PMD5/8 count PMC4's L2D set with PMC4's umask and .all; PMD7/9 PMC6's.
        if !self.l2d_sets {
            return Ok(());
        }
        // The member on each of the twelve counters, looked up once.
        let mut on_counter = [None; 12];
        for (i, c) in placed.iter().enumerate().rev() {
            if let Some(slot) = c.and_then(|c| on_counter.get_mut(c)) {
                *slot = Some(i);
            }
        }
        let l2d = |i: usize| key(i).l2d;
        for (anchor, followers) in L2D_GROUPS {
            let on = |c: usize| on_counter.get(c).copied().flatten();
            for follower in followers {
                let Some(f) = on(follower).filter(|&f| l2d(f) != 0) else { continue };
                let fine = match on(anchor) {
                    Some(a) => l2d(a) == l2d(f),
                    None => (0..n).any(|a| at(a).is_none() && l2d(a) == l2d(f)),
                };
                if !fine {
                    return violation(L2D_FOLLOWS + follower as u32, &mut std::iter::once(f).chain(on(anchor)));
                }
            }
        }
        Ok(())
    }

    /// §4.8.2: while the list has L1D events, PMD5 holds one of them, so no other
    /// event may take it. §4.8.4: an L2D event that no other member matches in set,
    /// unit mask and `.all` cannot be on PMD5, 7, 8 or 9, whose anchor would have to.
    fn reserved(&self, members: &[usize]) -> Reservations {
        let key = |e: usize| self.keys.get(e).copied().unwrap_or_default();
        let mut out = Reservations::new();
        if self.l1d_sets && members.iter().any(|&e| key(e).l1d != 0) {
            let keep = members.iter().map(|&e| if key(e).l1d == 0 { !(1u64 << index(5)) } else { u64::MAX }).collect();
            let l1d = members.iter().copied().filter(|&e| key(e).l1d != 0).collect();
            out.push((Violation { rule: L1D_ON_PMD5, events: l1d }, keep));
        }
        if self.l2d_sets {
            let followers = L2D_GROUPS.iter().flat_map(|(_, f)| f).fold(0u64, |m, &c| m | 1 << c);
            let alone = |k: usize, e: usize| {
                let l2d = key(e).l2d;
                l2d != 0 && !members.iter().enumerate().any(|(j, &o)| j != k && key(o).l2d == l2d)
            };
            let keep: Few<u64> = members.iter().enumerate().map(|(k, &e)| if alone(k, e) { !followers } else { u64::MAX }).collect();
            let events: ViolationEvents = members.iter().enumerate().filter(|&(k, &e)| alone(k, e)).map(|(_, &e)| e).collect();
            if !events.is_empty() {
                out.push((Violation { rule: L2D_ALONE, events }, keep));
            }
        }
        out
    }

    fn describe(&self, v: &Violation) -> String {
        let facts = |k: usize| v.events.get(k).and_then(|&e| self.facts(e));
        let name = |k: usize| facts(k).map_or("", |f| f.name);
        match v.rule {
            EXCLUDES => {
                let excluded = v.events.get(1).copied();
                let entries = v.events.first().and_then(|&a| self.excludes.get(a)).into_iter().flatten();
                let other = entries.filter(|(b, _)| Some(*b) == excluded).map(|(_, n)| *n).next().unwrap_or("?");
                format!("§4.15 {0}: only one of {0} and {other} may be measured at a time", name(0))
            }
            CAPTURE_TWICE => {
                let reg = facts(0).and_then(|f| f.capture.as_ref()).map_or("?", |c| capture_register(c.spec));
                format!("§3.3.8-§3.3.10: both program {reg} differently, and it holds one configuration")
            }
            ETB_BESIDE_DEAR => "§3.3.9.2, §3.3.9.3: PMC39 (the trace buffer) must be 0 while the D-EAR is in TLB or ALAT mode".into(),
            L1D_SETS => {
                let set = |k: usize| facts(k).and_then(|f| f.l1d).unwrap_or("?");
                format!("§4.8.2: events of different L1D sets (set {} and set {}) cannot be measured at the same time", set(0), set(1))
            }
            L1D_ON_PMD5 => "§4.8.2: one of the L1D events must be measured by PMD5 (PMC5 selects the L1D set)".into(),
            L2D_ALONE => "§4.8.4: an L2D event whose set, unit mask and .all no other event shares can only be on PMD4 or PMD6 \
                          (PMD5 and PMD8 count with PMC4's, PMD7 and PMD9 with PMC6's)"
                .into(),
            rule => {
                let follower = rule.saturating_sub(L2D_FOLLOWS) as usize;
                let anchor = L2D_GROUPS.iter().find(|(_, f)| f.contains(&follower)).map_or(0, |(a, _)| *a);
                let name = |names: &[&'static str; 12], c: usize| names.get(c).copied().unwrap_or("?");
                let (pmd, pmd_anchor, pmc_anchor) = (name(&PMD_NAMES, follower), name(&PMD_NAMES, anchor), name(&PMC_NAMES, anchor));
                format!(
                    "§4.8.4: an L2D event on {pmd} needs an L2D event of the same set, unit mask and .all on {pmd_anchor} ({pmd} shares {pmc_anchor}'s set and umask)"
                )
            }
        }
    }
}
