//! Another core running the same program, followed only where it meets the simulated
//! core: the lines of the program's shared data (`DataStream::shared`). After each
//! iteration of the simulated core it accesses every shared line that iteration
//! touched, as the simulated core did (a write if it wrote the line), keeping a MESI
//! state per line; its private work never touches the simulated core's lines. Each
//! machine decides what the two cores' meetings do to its caches and which signals
//! they raise (Montecito ERRATA MMC23, SPARC MSP17).

use std::collections::BTreeMap;

use crate::machine::{Keys, Moves};

/// The other core's copy of a line (MESI; no entry: Invalid).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Held {
    Shared,
    Exclusive,
    Modified,
}

/// A snoop answer: no copy, a clean copy, or a modified one (which the holder hands
/// over, writing it back).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    Miss,
    Hit,
    Hitm,
}

/// What the other core sends to get a line: a read (BRL) or a read for ownership
/// (BRIL). It never upgrades a shared copy: a line the simulated core wrote in the
/// iteration lost every other copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Request {
    Read,
    ReadOwn,
}

/// The other core's copies of the shared lines, and the shared lines the simulated
/// core touched in the iteration (with whether it wrote them).
#[derive(Debug, Clone, Default)]
pub struct Peer {
    lines: BTreeMap<u64, Held>,
    touched: Vec<(u64, bool)>,
}

impl Peer {
    /// The simulated core reads (or, `write`, writes) shared `line`: the other core's
    /// answer, had the access asked it (it does when the line is not in the simulated
    /// core's caches). After a read it keeps a shared copy, after a write none. The
    /// line is remembered for the other core's turn.
    pub fn snoop(&mut self, line: u64, write: bool) -> Answer {
        match self.touched.iter_mut().find(|(l, _)| *l == line) {
            Some((_, w)) => *w |= write,
            None => self.touched.push((line, write)),
        }
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

    /// Whether the other core holds `line`.
    pub fn holds(&self, line: u64) -> bool {
        self.lines.contains_key(&line)
    }

    /// The other core's turn: it accesses each line the simulated core touched since
    /// the last turn. For each request it sends, `answer` gives the simulated core's
    /// answer (and does to its caches what the request does); returns the requests,
    /// each with its answer.
    pub fn turn(&mut self, mut answer: impl FnMut(u64, bool) -> Answer) -> Vec<(Request, Answer)> {
        let mut sent = Vec::new();
        for (line, write) in std::mem::take(&mut self.touched) {
            let request = match (self.lines.contains_key(&line), write) {
                (true, false) => continue,
                (false, false) => Request::Read,
                (_, true) => Request::ReadOwn,
            };
            let a = answer(line, write);
            let next = match (write, a) {
                (true, _) => Held::Modified,
                (false, Answer::Miss) => Held::Exclusive,
                (false, _) => Held::Shared,
            };
            self.lines.insert(line, next);
            sent.push((request, a));
        }
        sent
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_written_by_both_cores_bounces_modified() {
        let mut p = Peer::default();
        assert_eq!(p.snoop(0x80, true), Answer::Miss);
        // The other core writes it: the simulated core held it modified.
        assert_eq!(p.turn(|_, _| Answer::Hitm), [(Request::ReadOwn, Answer::Hitm)]);
        assert_eq!(p.snoop(0x80, true), Answer::Hitm, "the simulated core's next write");
        assert!(!p.holds(0x80));
    }

    #[test]
    fn a_read_shares_a_line_and_a_write_takes_it() {
        let mut p = Peer::default();
        p.snoop(0x100, false);
        assert_eq!(p.turn(|_, _| Answer::Hit), [(Request::Read, Answer::Hit)]);
        assert!(p.holds(0x100));
        p.snoop(0x100, true);
        assert_eq!(p.turn(|_, _| Answer::Hit), [(Request::ReadOwn, Answer::Hit)], "the simulated core's write took its copy");
        p.snoop(0x100, false);
        assert_eq!(p.turn(|_, _| unreachable!("a read of a line it holds asks nobody")), []);
    }
}
