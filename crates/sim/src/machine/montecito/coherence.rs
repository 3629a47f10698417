//! The other core of the Montecito package (§2.5: two cores share the system
//! interface; "no core to core bypasses": a line one core modified reaches the other
//! over the bus, by a snoop), where it meets this core (`machine::peer`, ERRATA
//! MMC23): its turn after each iteration, and this core's answers to its snoops.

use super::group::bundle_address;
use super::Montecito;
use super::{Signals, Span};
use crate::machine::peer::{Answer, Request};
use crate::stream::{Signal, MAX_PER_CYCLE};

impl Montecito {
    /// A snoop that invalidates `line` reaches the instruction side too: the code the
    /// program wrote there is fetched as bundles (`bundle_address`, MMC35), and their
    /// L2I copies (each an `L2iSnoopHits` in `s`) and L1I lines go.
    fn take_code(&mut self, line: u64, s: &mut Signals) {
        let (l2i, l1i) = (self.cfg.l2i.line, self.cfg.l1i.line);
        let first = bundle_address(line);
        let last = bundle_address(line + self.cfg.l3.line - 1);
        for l in (self.cfg.l2i.line_of(first)..=last).step_by(l2i as usize) {
            if self.outer[0].invalidate(l).is_some() {
                s.bump(Signal::L2iSnoopHits);
            }
            for a in (l..l + l2i).step_by(l1i as usize) {
                self.l1i.invalidate(a);
                if a == self.fetch_line {
                    self.fetch_line = u64::MAX;
                }
            }
        }
    }

    /// This core's `fc` of `line` (MMC35): every copy goes as for another agent's
    /// invalidation, a modified one written back, and the BIL it puts on the bus is a
    /// snoop of the L1I (`CodeFlushes`). A line of `shared` data the other core
    /// modified answers the BIL HITM (`BilHitm`, BUS_RD_INVALID_HITM.SELF): its copy
    /// goes to memory (MMC34).
    pub(super) fn flush_line(&mut self, line: u64, shared: bool, now: u64, s: &mut Signals) {
        let mut written = None;
        if self.answer(line, Effect::Take, s) == Answer::Hitm {
            written = Some(self.write_back(now));
            s.bump(Signal::MemoryWrites);
            self.write_data(s);
        }
        if shared && self.cfg.cores > 1 && self.peer.snoop(line, true) == Answer::Hitm {
            s.bump(Signal::BilHitm);
        }
        s.bump(Signal::CodeFlushes);
        let bil = self.bus_invalidate(now);
        // The BIL and the write-back are of one line: the later one's request phase
        // meets the earlier one in the in-order queue (SI_IOQ_COLLISIONS), and the
        // BIL's may meet the write waiting in the write address queue
        // (SI_WAQ_COLLISIONS).
        if let Some(w) = written {
            if let Some(at) = w.meets(bil) {
                self.si.hold(Signal::SiIoqCollisions, at, at + 1);
            }
            if w.in_write_queue(bil) {
                self.si.hold(Signal::SiWaqCollisions, bil.ads, bil.ads + 1);
            }
        }
    }
}

/// What a snoop does to this core's copies of a line: takes them (a write, a read
/// for ownership, an invalidation), leaves them clean and shared (a read: a modified
/// line is written back), or leaves them as they are (a read of the current data, BRC).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Effect {
    Take,
    Clean,
    Keep,
}

impl Montecito {
    /// The other core's turn at the end of an iteration, which ends at `end`: it accesses
    /// each shared line this core touched, as this core did. Returns what it sends on
    /// the bus, and this core's answers, an item per request, which the iteration's
    /// last cycles count from its last (`out::spread`). A snoop that meets its line's
    /// fill changes the state the fill leaves, and the fills back by the iteration's
    /// end are laid (MMC51); the requests for its line it finds in the OzQ are forced
    /// to recirculate (MMC71).
    pub(super) fn peer_turn(&mut self, end: u64) -> Vec<Signals> {
        let mut peer = std::mem::take(&mut self.peer);
        // One answer (and its item's signals) per request sent, in order.
        let mut items = Vec::new();
        let sent = peer.turn(|line, write| {
            let mut s = Signals::default();
            let at = self.turn_cycle(end, items.len());
            if self.fills.snoop(line, at, write) {
                s.bump(Signal::L2dSnoopFillConflicts);
            }
            self.snoop_queue(line, at, &mut s);
            let answer = self.answer(line, if write { Effect::Take } else { Effect::Clean }, &mut s);
            items.push(s);
            answer
        });
        self.peer = peer;
        for (state, ready) in self.fills.settle(end) {
            self.si.hold(state, ready, ready + 1);
        }
        for ((request, answer), s) in sent.into_iter().zip(&mut items) {
            let (txn, hit, hitm) = match request {
                Request::Read => (Signal::PeerBrl, Signal::PeerBrlHit, Signal::PeerBrlHitm),
                Request::ReadOwn => (Signal::PeerBril, Signal::PeerBrilHit, Signal::PeerBrilHitm),
            };
            s.bump(txn);
            match answer {
                Answer::Miss => {}
                Answer::Hit => s.bump(hit),
                Answer::Hitm => {
                    // The modified line goes out through this core's write data queue.
                    s.bump(hitm);
                    self.write_data(s);
                }
            }
        }
        items
    }

    /// The end of the iteration whose spans are `out[from..]`, in whose last cycles
    /// the other agents take their turn (`turn_cycle`).
    pub(super) fn turn_end(&self, out: &[Span], from: usize) -> u64 {
        self.started + out[from..].iter().map(|s| s.cycles).sum::<u64>()
    }

    /// The cycle of the turn's `i`-th request, of an iteration that ends at `end`:
    /// `out::spread` gives it the `i`-th cycle from the end.
    pub(super) fn turn_cycle(&self, end: u64, i: usize) -> u64 {
        end.saturating_sub(1 + i as u64).max(self.started)
    }

    /// Another agent's snoop of `line` reaching the L2D at `at` forces the requests
    /// for the line the OzQ holds then to recirculate (L2D_FORCE_RECIRC.SNP_OR_L3:
    /// "an existing OZQ entry is forced to recirculate because an incoming snoop
    /// request matched its address"; MMC71), counted in `s`.
    pub(super) fn snoop_queue(&self, line: u64, at: u64, s: &mut Signals) {
        let held = self.ozq.holding(line, at);
        s.set(Signal::L2dSnoopRecirculates, u8::try_from(held).unwrap_or(MAX_PER_CYCLE).min(MAX_PER_CYCLE));
    }

    /// This core's answer to another agent's snoop of `line`: a modified copy (in the
    /// L2D or the L3; the L1D writes through) answers HITM and hands its data over;
    /// `effect` says what becomes of the copies. What the snoop finds in the L2I
    /// counts in `s`.
    pub(super) fn answer(&mut self, line: u64, effect: Effect, s: &mut Signals) -> Answer {
        // Under fault injection every `fault_every`-th snoop finds an error in the L2D's
        // tags; it is counted only, as the write data queue's are (MMC67, MMC26).
        if self.tag_faults.as_mut().and_then(|f| f.access(&[Signal::L2dSnoopTagErrors])).is_some() {
            s.bump(Signal::L2dSnoopTagErrors);
        }
        let bytes = self.cfg.l3.line;
        let l1d = self.cfg.l1d.line;
        if effect == Effect::Take {
            self.take_code(line, s);
        }
        let dirty = self.outer[1..].iter().any(|c| c.dirty(line));
        let held = dirty
            || self.outer[1..].iter().any(|c| c.contains(line))
            || (0..bytes).step_by(l1d as usize).any(|o| self.l1d.contains(line + o));
        match effect {
            Effect::Take => {
                for c in &mut self.outer[1..] {
                    c.invalidate(line);
                }
                for o in (0..bytes).step_by(l1d as usize) {
                    self.l1d.invalidate(line + o);
                }
            }
            Effect::Clean => {
                for c in &mut self.outer[1..] {
                    c.clean(line);
                }
            }
            Effect::Keep => {}
        }
        match (held, dirty) {
            (_, true) => Answer::Hitm,
            (true, false) => Answer::Hit,
            (false, false) => Answer::Miss,
        }
    }
}
