//! Looking for the machine repeating itself while one phase runs, and replaying a
//! period found on the structures that are replayed rather than compared.
//!
//! The spans and the replayed structures' operations are recorded while the first
//! snapshots are taken, one quantum apart, so that a short period is skipped as soon
//! as two snapshots match. Later snapshots, at doubling distances, are compared
//! without recording: when two match, the next period is recorded while it is
//! simulated, and is the skip's body if the state at its end equals the state at its
//! start. A loop that never repeats thus does not copy every span it makes (a fifth
//! of a `pmu stat` run once went to that).

use std::ops::Range;

use super::frame::Frame;
use super::{Skipping, MAX_PERIOD_SPANS, MAX_QUANTUM};
use crate::machine::{Core, Keys, Moves};
use crate::program::Phase;
use crate::stream::Span;

/// Snapshots kept for comparison.
pub(super) const SNAPSHOTS: usize = 16;
/// Snapshots taken one quantum apart before the spacing starts doubling.
pub(super) const DENSE: u64 = 8;

/// A period found: the spans of one period, shifted to stand for the next, its
/// cycles, how many periods may be skipped as far as the streams are concerned, and
/// the period's operations on each replayed structure.
pub(super) struct Skip<const F: usize> {
    pub(super) period: u64,
    pub(super) body: Vec<Span<F>>,
    pub(super) cycles: u64,
    pub(super) repeat: u64,
    pub(super) logs: Vec<Range<usize>>,
}

/// A snapshot: iteration, hash and canonical state, and, when it was taken while
/// recording, where its iteration's spans and operations begin.
struct Snapshot {
    k: u64,
    hash: u64,
    state: Vec<u64>,
    /// The large structures' state (`Core::canonical_outer`), once the snapshot has
    /// matched an earlier one.
    outer: Option<Vec<u64>>,
    spans: usize,
    logged: Vec<usize>,
}

/// Looks for the machine repeating itself while a phase runs.
pub(super) struct Finder<const F: usize> {
    frame: Frame,
    snapshots: Vec<Snapshot>,
    /// The spans recorded.
    pub(super) spans: Vec<Span<F>>,
    /// The iteration the recording began at (a snapshot's), if it is on.
    recording: Option<u64>,
    taken: u64,
    next: u64,
}

impl<const F: usize> Finder<F> {
    /// `None` when the phase cannot be proved to repeat cheaply: skipping is off, a
    /// quantum is too long, or moving streams overlap each other or other data.
    pub(super) fn new(phase: &Phase, core: &dyn Core<F>, skipping: Skipping, spans: &mut Vec<Span<F>>) -> Option<Finder<F>> {
        if skipping == Skipping::Off || phase.iterations < 4 {
            return None;
        }
        let frame = Frame::new(phase, core, false)?;
        // Finding a period takes at least three quanta after the first (two to match,
        // one recorded): a shorter loop cannot gain, so it does not pay for snapshots.
        if frame.quantum > MAX_QUANTUM || phase.iterations < 4 * frame.quantum {
            return None;
        }
        let next = frame.quantum;
        Some(Finder { frame, snapshots: Vec::new(), spans: std::mem::take(spans), recording: None, taken: 0, next })
    }

    pub(super) fn due(&self, k: u64) -> bool {
        k >= self.next && k.is_multiple_of(self.frame.quantum)
    }

    pub(super) fn reset(&mut self, core: &mut dyn Core<F>, k: u64) {
        self.stop(core);
        self.snapshots.clear();
        self.taken = 0;
        self.next = k + self.frame.quantum;
    }

    /// Adds an iteration's spans to the period being recorded, if one is.
    pub(super) fn record(&mut self, core: &mut dyn Core<F>, spans: &[Span<F>]) {
        if self.recording.is_none() {
            return;
        }
        if self.spans.len() + spans.len() > MAX_PERIOD_SPANS {
            // Too long to be worth keeping.
            self.stop(core);
        } else {
            self.spans.extend_from_slice(spans);
        }
    }

    /// How many of `most` repetitions of `skip` the replayed structures answer as they
    /// did in the period, performing them (`repeat`).
    pub(super) fn repeat(&self, phase: &Phase, core: &mut dyn Core<F>, skip: &Skip<F>, most: u64) -> u64 {
        repeat(core, &skip.logs, most, &|a, page, j| self.frame.moved(phase, j * skip.period, a, page))
    }

    /// Moves the core's structures on by `n` iterations.
    pub(super) fn relocate(&self, core: &mut dyn Core<F>, phase: &Phase, n: u64) {
        core.relocate(&Moves { line: &|a| self.frame.moved(phase, n, a, false), page: &|a| self.frame.moved(phase, n, a, true) });
    }

    /// The canonical state of the core (`outer`: of its large structures) at
    /// iteration `k`: addresses of moving streams relative to their position.
    fn describe(&self, phase: &Phase, core: &dyn Core<F>, k: u64, outer: bool, out: &mut Vec<u64>) {
        let key = |a, page| match self.frame.offset(phase, k, a, page) {
            Some((stream, offset)) => (1 << 63) | (stream as u64) << 56 | (offset & ((1 << 56) - 1)),
            None => a,
        };
        let (line, page) = (|a| key(a, false), |a| key(a, true));
        let keys = Keys { line: &line, page: &page };
        if outer {
            core.canonical_outer(&keys, out);
        } else {
            core.canonical(&keys, out);
        }
    }

    /// Takes a snapshot at iteration `k`. When it equals an earlier one, the
    /// iterations between are a period: if they were recorded, they are the skip;
    /// otherwise the next period is recorded, to be confirmed at its end.
    pub(super) fn check(&mut self, phase: &Phase, core: &mut dyn Core<F>, k: u64) -> Option<Skip<F>> {
        if self.recording.is_none() && self.snapshots.is_empty() {
            // While the snapshots are dense, everything is recorded: a short period is
            // then skipped as soon as it is seen.
            self.start(core, k);
        }
        // The state is as long as the last one, give or take: no growing and copying.
        let mut state = Vec::with_capacity(self.snapshots.last().map_or(0, |s| s.state.len() + 64));
        self.describe(phase, core, k, false, &mut state);
        let hash = fingerprint(&state);
        self.taken += 1;
        let spacing = if self.taken < DENSE { 1 } else { 1 << (self.taken - DENSE).min(16) };
        self.next = k.saturating_add(spacing * self.frame.quantum);
        let (mut outer, mut found) = (None, None);
        let mut keep = self.taken < DENSE;
        // The latest match: the shortest period, and the one being recorded.
        if let Some(i) = self.snapshots.iter().rposition(|s| s.hash == hash && s.state == state && self.frame.unwrapped(phase, s.k, k)) {
            // The rest matches: now the large structures, which a snapshot records only
            // once it has matched.
            let mut o = Vec::new();
            self.describe(phase, core, k, true, &mut o);
            let then = &self.snapshots[i];
            let recorded = self.recording.is_some_and(|r| r <= then.k);
            if recorded && (o.is_empty() || then.outer.as_ref() == Some(&o)) {
                found = Some(self.skip(core, phase, k, i));
            } else {
                self.next = k + (k - then.k);
                self.start(core, k);
            }
            keep = true;
            outer = Some(o);
        }
        // Kept even when it matched: should the replay fail (the earlier snapshot may
        // have been taken while the replayed structures were warming up), the next
        // match is this one, the latest.
        if self.snapshots.len() == SNAPSHOTS {
            if found.is_some() {
                self.snapshots.pop();
            } else {
                self.snapshots.remove(0);
            }
        }
        self.snapshots.push(Snapshot { k, hash, state, outer, spans: self.spans.len(), logged: recorded(core) });
        if !keep {
            // Sparse snapshots record nothing until two match: a loop that never
            // repeats copies no spans.
            self.stop(core);
        }
        found
    }

    /// After a skip found at iteration `k` could not be repeated (the replayed
    /// structures answered otherwise, as they may while they warm up): the recording
    /// goes on, to try again a period later.
    pub(super) fn retry(&mut self, k: u64, period: u64) {
        self.next = k + period;
    }

    /// Begins recording at iteration `k`.
    fn start(&mut self, core: &mut dyn Core<F>, k: u64) {
        self.stop(core);
        record(core, true);
        self.recording = Some(k);
    }

    /// The skip from snapshot `i`, taken while recording, to iteration `k`, whose
    /// states are equal.
    fn skip(&self, core: &mut dyn Core<F>, phase: &Phase, k: u64, i: usize) -> Skip<F> {
        let then = &self.snapshots[i];
        let period = k - then.k;
        let mut body = self.spans[then.spans..].to_vec();
        for mem in body.iter_mut().filter_map(|s| s.mem.as_mut()) {
            mem.addr = mem.addr.wrapping_add_signed(mem.stride.wrapping_mul(period as i64));
            mem.stride = mem.stride.wrapping_mul(period as i64);
        }
        let cycles = body.iter().map(Span::duration).sum();
        let logs = then.logged.iter().zip(recorded(core)).map(|(&from, to)| from..to).collect();
        Skip { period, body, cycles, repeat: self.frame.room(phase, then.k, k, period) / period, logs }
    }

    /// Stops recording, forgetting what was recorded.
    pub(super) fn stop(&mut self, core: &mut dyn Core<F>) {
        record(core, false);
        self.spans.clear();
        self.recording = None;
    }
}

/// Starts or stops the replayed structures' recording (stopping forgets).
pub(super) fn record<const F: usize>(core: &mut dyn Core<F>, on: bool) {
    for r in core.replayed() {
        r.record(on);
    }
}

/// How many operations each replayed structure has recorded.
pub(super) fn recorded<const F: usize>(core: &mut dyn Core<F>) -> Vec<usize> {
    core.replayed().iter().map(|r| r.recorded()).collect()
}

/// Forgets what the replayed structures recorded before `first` (the oldest
/// snapshot kept; everything when none is), and counts the snapshots' marks from
/// there.
pub(super) fn forget<'a, const F: usize>(
    core: &mut dyn Core<F>,
    first: Option<Vec<usize>>,
    marks: impl Iterator<Item = &'a mut Vec<usize>>,
) {
    let mut forgotten = Vec::new();
    for (i, r) in core.replayed().into_iter().enumerate() {
        let n = first.as_ref().map_or(r.recorded(), |l| l[i]);
        r.forget(n);
        forgotten.push(n);
    }
    for m in marks {
        for (m, n) in m.iter_mut().zip(&forgotten) {
            *m -= n;
        }
    }
}

/// What a repetition of a period did to the replayed structures.
enum Replay {
    /// One answered an operation otherwise than in the period: nothing was done.
    Failed,
    Changed,
    /// It left every one as it was.
    Unchanged,
}

/// How many of `most` repetitions of a period whose operations on the replayed
/// structures are `logs` they answer as they did in it, performing them; `moved(a,
/// page, j)` is where address `a` (a line's, or a page's) goes in repetition `j`
/// (1-based). A repetition that changes none of them, when no repetition moves an
/// address they see, leaves them where the next one finds them the same: every
/// repetition after it is the same too.
pub(super) fn repeat<const F: usize>(
    core: &mut dyn Core<F>,
    logs: &[Range<usize>],
    most: u64,
    moved: &dyn Fn(u64, bool, u64) -> Option<u64>,
) -> u64 {
    let fixed = {
        let (line, page) = (|a| moved(a, false, 1), |a| moved(a, true, 1));
        let to = Moves { line: &line, page: &page };
        !core.replayed().iter().zip(logs).any(|(r, range)| r.moves(range.clone(), &to))
    };
    let mut done = 0;
    while done < most {
        let j = done + 1;
        let (line, page) = (|a| moved(a, false, j), |a| moved(a, true, j));
        match replay(core, logs, &Moves { line: &line, page: &page }) {
            Replay::Failed => break,
            Replay::Unchanged if fixed => return most,
            _ => done += 1,
        }
    }
    done
}

/// Replays a period's operations on the replayed structures, each address moved as
/// `to` says; nothing changes when one of them answers otherwise.
fn replay<const F: usize>(core: &mut dyn Core<F>, logs: &[Range<usize>], to: &Moves) -> Replay {
    let mut replayed = core.replayed();
    let mut undo = Vec::new();
    for (r, range) in replayed.iter_mut().zip(logs) {
        if range.is_empty() {
            continue;
        }
        match r.replay(range.clone(), to) {
            Some(u) => undo.push((r, u)),
            None => {
                for (r, u) in undo {
                    r.undo(u);
                }
                return Replay::Failed;
            }
        }
    }
    if undo.iter().all(|(r, u)| r.unchanged(u)) {
        Replay::Unchanged
    } else {
        Replay::Changed
    }
}

/// A 64-bit fingerprint of a state (FNV-1a over the words), to compare cheaply first.
pub(super) fn fingerprint(state: &[u64]) -> u64 {
    state.iter().fold(0xcbf2_9ce4_8422_2325, |h, &w| (h ^ w).wrapping_mul(0x0000_0100_0000_01B3))
}
