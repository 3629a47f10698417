//! The other core of the Montecito package (§2.5: two cores share the system
//! interface; "no core to core bypasses": a line one core modified reaches the other
//! over the bus, by a snoop). The model follows it only where it meets this core: the
//! lines of the program's shared data, which it accesses as this core does, once per
//! iteration after it (ERRATA MMC23). Its private work never touches this core's lines
//! and is not modelled.

use std::collections::BTreeMap;

use super::Montecito;
use crate::machine::{Keys, Moves};
use crate::stream::{Signal, Signals, Span};

/// The other core's copy of a line (MESI; no entry: Invalid).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Held {
    Shared,
    Exclusive,
    Modified,
}

/// A snoop answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    Miss,
    /// A clean copy.
    Hit,
    /// A modified copy, which the holder writes back.
    Hitm,
}

/// The other core's copies of the shared lines, and the shared lines this core
/// touched in the iteration (with whether it wrote them), which it touches next.
#[derive(Debug, Clone, Default)]
pub struct Peer {
    lines: BTreeMap<u64, Held>,
    touched: Vec<(u64, bool)>,
}

impl Peer {
    /// This core's read (BRL) or read for ownership (BRIL) of `line` on the bus: the
    /// other core's answer. After a read it keeps a shared copy, after a read for
    /// ownership none.
    pub fn snoop(&mut self, line: u64, write: bool) -> Answer {
        let answer = match self.lines.get(&line) {
            None => return Answer::Miss,
            Some(Held::Modified) => Answer::Hitm,
            Some(_) => Answer::Hit,
        };
        if write {
            self.lines.remove(&line);
        } else {
            self.lines.insert(line, Held::Shared);
        }
        answer
    }

    /// A store of this core to `line`, which it holds: when the other core shares it,
    /// the invalidation (BIL) that takes its copy away.
    pub fn invalidate(&mut self, line: u64) -> bool {
        self.lines.remove(&line).is_some()
    }

    /// Whether the other core holds `line`.
    pub fn holds(&self, line: u64) -> bool {
        self.lines.contains_key(&line)
    }

    /// This core accessed shared `line` in the iteration.
    pub fn touch(&mut self, line: u64, write: bool) {
        match self.touched.iter_mut().find(|(l, _)| *l == line) {
            Some((_, w)) => *w |= write,
            None => self.touched.push((line, write)),
        }
    }

    pub fn canonical(&self, keys: &Keys, out: &mut Vec<u64>) {
        let mut lines: Vec<[u64; 2]> = self.lines.iter().map(|(&l, &h)| [(keys.line)(l), h as u64]).collect();
        lines.sort_unstable();
        out.push(u64::MAX - lines.len() as u64);
        out.extend(lines.into_iter().flatten());
    }

    pub fn relocate(&mut self, to: &Moves) {
        self.lines = std::mem::take(&mut self.lines).into_iter().map(|(l, h)| ((to.line)(l).unwrap_or(l), h)).collect();
    }
}

impl Montecito {
    /// The other core's turn at the end of an iteration: it accesses each shared line
    /// this core touched, as this core did. What it sends on the bus, and this core's
    /// answers, are counted in the iteration's last cycle (`out[from..]`).
    pub(super) fn peer_turn(&mut self, out: &mut Vec<Span>, from: usize) {
        let mut s = Signals::default();
        for (line, write) in std::mem::take(&mut self.peer.touched) {
            let held = self.peer.lines.get(&line).copied();
            let (txn, hit, hitm) = match (held, write) {
                (Some(_), false) | (Some(Held::Modified), true) => continue,
                (Some(Held::Exclusive), true) => {
                    self.peer.lines.insert(line, Held::Modified);
                    continue;
                }
                (Some(Held::Shared), true) => (Signal::PeerBil, Signal::PeerBilHit, Signal::PeerBilHit),
                (None, false) => (Signal::PeerBrl, Signal::PeerBrlHit, Signal::PeerBrlHitm),
                (None, true) => (Signal::PeerBril, Signal::PeerBrilHit, Signal::PeerBrilHitm),
            };
            bump(&mut s, txn);
            let answer = self.answer(line, write);
            match answer {
                Answer::Miss => {}
                Answer::Hit => bump(&mut s, hit),
                Answer::Hitm => bump(&mut s, hitm),
            }
            let next = match (write, answer) {
                (true, _) => Held::Modified,
                (false, Answer::Miss) => Held::Exclusive,
                (false, _) => Held::Shared,
            };
            self.peer.lines.insert(line, next);
        }
        if s == Signals::default() || out.len() == from {
            return;
        }
        let last = out.last_mut().expect("the iteration has spans");
        if last.cycles > 1 {
            let mut end = *last;
            last.cycles -= 1;
            last.branch = None;
            end.cycles = 1;
            out.push(end);
        }
        let last = out.last_mut().expect("the iteration has spans");
        last.signals = last.signals.union(s);
    }

    /// This core's answer to the other core's snoop of `line`: a modified copy (in the
    /// L2D or the L3; the L1D writes through) is written back; a write takes every
    /// copy away, a read leaves them clean and shared.
    fn answer(&mut self, line: u64, write: bool) -> Answer {
        let bytes = self.cfg.l3.line;
        let l1d = self.cfg.l1d.line;
        let dirty = self.outer[1..].iter().any(|c| c.dirty(line));
        let held = dirty
            || self.outer[1..].iter().any(|c| c.contains(line))
            || (0..bytes).step_by(l1d as usize).any(|o| self.l1d.contains(line + o));
        self.touched[1] = true;
        self.touched[2] = true;
        if write {
            for c in &mut self.outer[1..] {
                c.invalidate(line);
            }
            for o in (0..bytes).step_by(l1d as usize) {
                self.l1d.invalidate(line + o);
            }
        } else {
            for c in &mut self.outer[1..] {
                c.clean(line);
            }
        }
        match (held, dirty) {
            (_, true) => Answer::Hitm,
            (true, false) => Answer::Hit,
            (false, false) => Answer::Miss,
        }
    }
}

/// One more of `signal`.
fn bump(s: &mut Signals, signal: Signal) {
    let n = s.get(signal) as u8;
    s.set(signal, n.saturating_add(1).min(crate::stream::MAX_PER_CYCLE));
}
