//! Looking for the turns of several software threads repeating together. On a core
//! that switches threads every few iterations (Montecito's switch on an L3 miss, §2.4)
//! no phase runs alone long enough for a period of its own to be found, but the core
//! going round its threads, each in one phase, repeats: its state at the start of
//! thread 0's turn is the same once every thread's streams are taken relative to
//! where that thread stands. The iterations each thread ran in between are then a
//! period of them all, skipped as one block.

use std::collections::VecDeque;
use std::ops::Range;

use super::finder::{self, fingerprint, DENSE, SNAPSHOTS};
use super::frame::Frame;
use super::MAX_QUANTUM;
use crate::machine::{Core, Keys, Moves};
use crate::program::Phase;
use crate::stream::Span;

/// A snapshot at the start of thread 0's turn: where each thread stands, the core's
/// state, and where the spans and recorded operations since begin.
struct Snapshot {
    ks: Vec<u64>,
    hash: u64,
    state: Vec<u64>,
    spans: usize,
    logged: Vec<usize>,
}

/// A period of the threads' turns found: how many iterations each thread ran in it,
/// its spans (moved to stand for the next), their cycles, how many periods the
/// threads' phases and streams allow, and its operations on each replayed structure.
pub(super) struct Skip<const F: usize> {
    pub(super) deltas: Vec<u64>,
    pub(super) body: Vec<Span<F>>,
    pub(super) cycles: u64,
    pub(super) repeat: u64,
    pub(super) logs: Vec<Range<usize>>,
}

/// Looks for the threads' turns repeating while every thread stays in one phase.
pub(super) struct Turns<const F: usize> {
    /// Which phase of each software thread this was made for (its count of phases
    /// begun), and that phase's frame.
    generations: Vec<u64>,
    frames: Vec<Frame>,
    snapshots: Vec<Snapshot>,
    /// The spans since the oldest snapshot, each with its software thread.
    spans: VecDeque<(Span<F>, usize)>,
    /// Turns of thread 0 begun, snapshots taken since the search began, the turn of
    /// the next one, and how long a search that found nothing pauses.
    turns: u64,
    taken: u64,
    next: u64,
    pause: u64,
    /// Cycles simulated while recording since the search last paid.
    searched: u64,
}

/// Snapshots a search of the turns takes (one a turn, then at doubling distances)
/// before, having found no period that skipped, it pauses: recording every span and
/// operation to compare costs more than a search that fails saves.
const SEARCH: u64 = 16;
/// The first pause, in turns; each search that fails again doubles it, up to the
/// longest.
const PAUSE: u64 = 64;
const LONGEST_PAUSE: u64 = 8192;
/// The spans kept since the oldest snapshot: far fewer than a phase's search keeps,
/// since turns repeat within a few thousand spans or not at all, and a history of
/// megabytes, copied into span by span, costs its weight in cache misses.
const MAX_TURN_SPANS: usize = 1 << 13;

impl<const F: usize> Turns<F> {
    /// `None` when some thread's phase cannot be proved to repeat cheaply (its moving
    /// streams overlap, its quantum is too long) or the threads' addresses cannot be
    /// told apart.
    pub(super) fn new(phases: &[&Phase], generations: Vec<u64>, core: &dyn Core<F>) -> Option<Turns<F>> {
        let frames: Vec<Frame> = phases.iter().map(|p| Frame::new(p, core, true)).collect::<Option<_>>()?;
        if frames.iter().any(|f| f.quantum > MAX_QUANTUM) {
            return None;
        }
        for (i, f) in frames.iter().enumerate() {
            if frames[i + 1..].iter().any(|g| !f.apart(g)) {
                return None;
            }
        }
        Some(Turns {
            generations,
            frames,
            snapshots: Vec::new(),
            spans: VecDeque::new(),
            turns: 0,
            taken: 0,
            next: 1,
            pause: PAUSE,
            searched: 0,
        })
    }

    /// Whether this was made for the threads' phases of these generations.
    pub(super) fn made_for(&self, generations: &[u64]) -> bool {
        self.generations == generations
    }

    /// Forgets the snapshots (a timer tick came between, or a skip was made) and
    /// searches again from the next turn.
    pub(super) fn reset(&mut self, core: &mut dyn Core<F>) {
        self.stop(core);
        self.next = self.turns + 1;
    }

    /// A skip of `cycles` was made: searching pays when the cycles skipped outweigh
    /// those simulated while recording for it; otherwise the pauses go on growing.
    pub(super) fn skipped(&mut self, core: &mut dyn Core<F>, cycles: u64) {
        if cycles > self.searched {
            self.pause = PAUSE;
            self.searched = 0;
            self.reset(core);
        } else {
            self.stop(core);
            self.next = self.turns + self.pause;
            self.pause = (2 * self.pause).min(LONGEST_PAUSE);
        }
    }

    fn stop(&mut self, core: &mut dyn Core<F>) {
        if !self.snapshots.is_empty() {
            finder::record(core, false);
        }
        self.snapshots.clear();
        self.spans.clear();
        self.taken = 0;
    }

    /// The spans software thread `thread` just ran, while snapshots are kept.
    pub(super) fn record(&mut self, core: &mut dyn Core<F>, spans: &[Span<F>], thread: usize) {
        if self.snapshots.is_empty() {
            return;
        }
        self.searched += spans.iter().map(Span::duration).sum::<u64>();
        self.spans.extend(spans.iter().map(|&s| (s, thread)));
        while self.spans.len() > MAX_TURN_SPANS && !self.snapshots.is_empty() {
            self.forget_oldest(core);
        }
    }

    fn forget_oldest(&mut self, core: &mut dyn Core<F>) {
        self.snapshots.remove(0);
        let from = self.snapshots.first().map_or(self.spans.len(), |s| s.spans);
        self.spans.drain(..from);
        finder::forget(core, self.snapshots.first().map(|s| s.logged.clone()), self.snapshots.iter_mut().map(|s| &mut s.logged));
        for s in &mut self.snapshots {
            s.spans -= from;
        }
    }

    /// The thread whose moving streams hold `a`, with the address relative to that
    /// thread's position: thread, stream and offset.
    fn offset(&self, phases: &[&Phase], ks: &[u64], a: u64, page: bool) -> Option<(usize, usize, u64)> {
        self.frames.iter().enumerate().find_map(|(t, f)| f.offset(phases[t], ks[t], a, page).map(|(s, o)| (t, s, o)))
    }

    /// Where an address goes when each thread `t` skips `n(t)` iterations.
    fn moved(&self, phases: &[&Phase], n: impl Fn(usize) -> u64, a: u64, page: bool) -> Option<u64> {
        self.frames.iter().enumerate().find_map(|(t, f)| f.moved(phases[t], n(t), a, page))
    }

    /// The core's whole state with every thread's moving streams relative to where
    /// the thread stands (`ks`).
    fn describe(&self, phases: &[&Phase], ks: &[u64], core: &dyn Core<F>, out: &mut Vec<u64>) {
        let key = |a, page| match self.offset(phases, ks, a, page) {
            Some((t, stream, offset)) => (1 << 63) | (t as u64) << 59 | (stream as u64) << 51 | (offset & ((1 << 51) - 1)),
            None => a,
        };
        let (line, page) = (|a| key(a, false), |a| key(a, true));
        let keys = Keys { line: &line, page: &page };
        core.canonical(&keys, out);
        core.canonical_outer(&keys, out);
    }

    /// Thread 0 begins a turn with every thread at `ks`: a snapshot
    /// when one is due, and the skip when it equals an earlier one in a way that
    /// proves a period.
    pub(super) fn check(&mut self, phases: &[&Phase], ks: &[u64], core: &mut dyn Core<F>) -> Option<Skip<F>> {
        self.turns += 1;
        if self.turns < self.next {
            return None;
        }
        if self.snapshots.is_empty() {
            finder::record(core, true);
        }
        let logged = finder::recorded(core);
        let mut state = Vec::with_capacity(self.snapshots.last().map_or(0, |s| s.state.len() + 64));
        self.describe(phases, ks, core, &mut state);
        let hash = fingerprint(&state);
        self.taken += 1;
        self.next = self.turns + if self.taken < DENSE { 1 } else { 1 << (self.taken - DENSE).min(16) };
        // Each thread must have moved by whole quanta, so that its streams index the
        // core's structures as they did, and none may have wrapped round.
        let period = |s: &Snapshot| {
            s.hash == hash
                && s.state == state
                && self
                    .frames
                    .iter()
                    .enumerate()
                    .all(|(t, f)| (ks[t] - s.ks[t]).is_multiple_of(f.quantum) && f.unwrapped(phases[t], s.ks[t], ks[t]))
        };
        let found = self.snapshots.iter().rposition(period).map(|i| self.skip(phases, ks, i, &logged));
        // Kept even when it matched: should the replay fail (the earlier snapshot may
        // have been taken while the replayed structures were warming up), the next
        // match is this one, the latest.
        if self.snapshots.len() == SNAPSHOTS {
            // With a match, nothing recorded may be forgotten before the skip has used
            // it: the latest snapshot makes way instead.
            if found.is_some() {
                self.snapshots.pop();
            } else {
                self.forget_oldest(core);
            }
        }
        self.snapshots.push(Snapshot { ks: ks.to_vec(), hash, state, spans: self.spans.len(), logged: finder::recorded(core) });
        if found.is_none() && self.taken >= SEARCH {
            self.stop(core);
            self.next = self.turns + self.pause;
            self.pause = (2 * self.pause).min(LONGEST_PAUSE);
        }
        found
    }

    fn skip(&self, phases: &[&Phase], ks: &[u64], i: usize, logged: &[usize]) -> Skip<F> {
        let then = &self.snapshots[i];
        let deltas: Vec<u64> = ks.iter().zip(&then.ks).map(|(k, j)| k - j).collect();
        let body: Vec<Span<F>> = self
            .spans
            .range(then.spans..)
            .map(|&(mut s, t)| {
                let n = deltas[t] as i64;
                if let Some(mem) = s.mem.as_mut() {
                    mem.addr = mem.addr.wrapping_add_signed(mem.stride.wrapping_mul(n));
                    mem.stride = mem.stride.wrapping_mul(n);
                }
                s
            })
            .collect();
        // No thread may reach its loop's last iteration or run out of room for its
        // streams.
        let mut repeat = u64::MAX;
        for (t, &d) in deltas.iter().enumerate().filter(|&(_, &d)| d > 0) {
            let p = phases[t];
            repeat = repeat.min((p.iterations - 1).saturating_sub(ks[t]) / d).min(self.frames[t].room(p, then.ks[t], ks[t], d) / d);
        }
        let logs = then.logged.iter().zip(logged).map(|(&from, &to)| from..to).collect();
        let cycles = body.iter().map(Span::duration).sum();
        Skip { deltas, body, cycles, repeat, logs }
    }

    /// How many of `most` repetitions of `skip` the replayed structures answer as they
    /// did in the period, performing them.
    pub(super) fn repeat(&self, phases: &[&Phase], core: &mut dyn Core<F>, skip: &Skip<F>, most: u64) -> u64 {
        finder::repeat(core, &skip.logs, most, &|a, page, j| self.moved(phases, |t| skip.deltas[t] * j, a, page))
    }

    /// Moves the core's structures on as if each thread had run `n[t]` iterations.
    pub(super) fn relocate(&self, phases: &[&Phase], core: &mut dyn Core<F>, n: &[u64]) {
        core.relocate(&Moves { line: &|a| self.moved(phases, |t| n[t], a, false), page: &|a| self.moved(phases, |t| n[t], a, true) });
    }
}
