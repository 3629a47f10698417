//! The other cores of a SPARC machine where they meet this one: the program's shared
//! lines (`machine::peer`, ERRATA MSP17). The core sharing a line sits on the socket
//! its memory is homed on. Its stores take this core's copies: the L1 data lines
//! (snoop invalidations), and the L2 where the L2 is the core's own (T4) or the line's
//! home is another socket, whose core then hands the modified line over cache to
//! cache when this core wants it back.

use super::memory::Level;
use super::Sparc;
use super::{Signals, Span};
use crate::machine::out::spread;
use crate::machine::peer::Answer;
use crate::program::{DataStream, Memory, Phase};
use crate::stream::Signal;

impl Sparc {
    /// Whether the other core that shares `line` is on another socket: shared memory
    /// is spread over the sockets page by page (MSP4).
    fn home_remote(&self, line: u64) -> bool {
        self.cfg.sockets > 1 && !(line / self.cfg.page_sizes[0]).is_multiple_of(self.cfg.sockets)
    }

    /// Whether this core's L2 is apart from the other core's for `line`: the L2 is
    /// per core where an L3 is shared behind it (T4), per chip otherwise.
    fn apart(&self, remote: bool) -> bool {
        remote || self.cfg.l3.is_some()
    }

    /// This core is about to access `addr` of `stream` (`write`: a store, atomic or
    /// block store): when the other core holds the line modified in a cache apart
    /// from this core's, an L2 miss gets the line from there (`Hierarchy::supplier`).
    pub(super) fn snoop(&mut self, stream: &DataStream, addr: u64, write: bool) {
        self.mem.supplier = None;
        if !stream.shared || stream.memory != Memory::Cacheable || self.cfg.cores * self.cfg.sockets < 2 {
            return;
        }
        let line = self.mem.coherence_line(addr);
        let remote = self.home_remote(line);
        if self.peer.snoop(line, write) == Answer::Hitm && self.apart(remote) {
            self.mem.supplier = Some((line, if remote { Level::RemoteC2c } else { Level::LocalC2c }));
        }
    }

    /// The other core's turn at the end of an iteration (`out[from..]`): its stores
    /// invalidate this core's copies (code lines too), its reads take a modified
    /// line's data; each line's L1 invalidations count in a cycle of their own, from
    /// the last.
    pub(super) fn peer_turn(&mut self, out: &mut Vec<Span>, from: usize, template: Span) {
        let mut peer = std::mem::take(&mut self.peer);
        let mut items = Vec::new();
        peer.turn(|line, write| {
            let remote = self.home_remote(line);
            let (l1, code, held, dirty) = self.mem.snooped(line, write, self.apart(remote), remote);
            if l1 + code > 0 {
                items.push(Signals::default().with(Signal::DCacheSnoopInvalidations, l1).with(Signal::ICacheSnoopInvalidations, code));
            }
            match (held, dirty) {
                (_, true) => Answer::Hitm,
                (true, false) => Answer::Hit,
                (false, false) => Answer::Miss,
            }
        });
        self.peer = peer;
        spread(out, from, template, &items);
        self.keep_waiting(&mut out[from..], &items);
    }

    /// The devices' transfers at the end of an iteration (`out[from..]`), line by
    /// line as `Hierarchy::device` serves them (ERRATA MSP20); each line's L1
    /// invalidations count in a cycle of their own, from the last.
    pub(super) fn dma(&mut self, phase: &Phase, k: u64, out: &mut Vec<Span>, from: usize, template: Span) {
        let (own_l2, line) = (self.cfg.l3.is_some(), self.mem.line_bytes());
        let mut items = Vec::new();
        for d in &phase.dma {
            for (l, _) in d.lines(&phase.streams[usize::from(d.stream)], k, line) {
                let (l1, code) = self.mem.device(l, d.write, own_l2);
                if l1 + code > 0 {
                    items.push(Signals::default().with(Signal::DCacheSnoopInvalidations, l1).with(Signal::ICacheSnoopInvalidations, code));
                }
            }
        }
        spread(out, from, template, &items);
    }

    /// A cycle `spread` added for `items` carries only its item: it is a cycle of this
    /// strand's too, in which the others with work wait for their turn (MSP1).
    fn keep_waiting(&self, spans: &mut [Span], items: &[Signals]) {
        if items.is_empty() || self.waiting == Signals::default() {
            return;
        }
        for span in spans {
            for &w in &Signal::STRAND_READY {
                if span.signals.get(w) == 0 {
                    span.signals.set(w, self.waiting.get(w) as u8);
                }
            }
        }
    }
}
