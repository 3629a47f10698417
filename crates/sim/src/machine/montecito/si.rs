//! The system interface's timeline (§2.5, §4.11; ERRATA MMC24): the requests each
//! cycle makes (its transactions' signals) pass through the L2's BRQ, the arbiter's
//! queues (RQ, WRITEQ, CCQ), the bus's in-order queue, the snoop phase (SCB, the
//! snoop queue) and the data bus, each for a time the parameters below give. After
//! each iteration the SI lays the entries live in each cycle over the iteration's
//! spans as occupancy signals; entries still live carry over to the next iteration.
//! This core's reads and writes are timed when the core makes them, through the
//! structures they hold (`arbiter.rs`), and laid then; what the other core and the I/O
//! bridge do is laid from the signals of each iteration. The core lays one occupancy
//! of its own on the same timeline: the release stores waiting in the L2D's OzQ
//! (`hold`, MMC38).

use std::collections::BTreeMap;

use crate::stream::{Signal, MAX_PER_CYCLE};

use super::config::MontecitoConfig;
use super::{Signals, Span};

/// What an entry occupies; the signal that counts it.
const RQ: Signal = Signal::SiRqLive;
pub(super) const RQ_BOTH: Signal = Signal::SiRqLiveBoth;
const WRITEQ: Signal = Signal::SiWriteqLive;
pub(super) const WRITEQ_BOTH: Signal = Signal::SiWriteqLiveBoth;
const CCQ: Signal = Signal::SiCcqLive;
pub(super) const IOQ: Signal = Signal::SiIoqLive;
const SCB: Signal = Signal::SiScbLive;
const SCB_BOTH: Signal = Signal::SiScbLiveBoth;
const SNOOPQ: Signal = Signal::ErSnoopqLive;
pub(super) const BRQ: Signal = Signal::ErBrqLive;
pub(super) const READ_OUT: Signal = Signal::ErMemReadOut;
const DATA: Signal = Signal::BusDataClocks;
const DATA_SELF: Signal = Signal::BusDataClocksSelf;
const B2B: Signal = Signal::BusB2bClocks;
const B2B_SELF: Signal = Signal::BusB2bClocksSelf;
const STALL: Signal = Signal::BusSnoopStallClocks;
const STALL_SELF: Signal = Signal::BusSnoopStallClocksSelf;
const DATA_IO: Signal = Signal::BusDataClocksIo;
const B2B_IO: Signal = Signal::BusB2bClocksIo;

/// The counterpart of a both-cores signal that counts this core's entries only.
fn own_signal(signal: Signal) -> Option<Signal> {
    [(RQ_BOTH, RQ), (WRITEQ_BOTH, WRITEQ), (SCB_BOTH, SCB), (DATA, DATA_SELF), (B2B, B2B_SELF), (STALL, STALL_SELF)]
        .into_iter()
        .find(|&(both, _)| both == signal)
        .map(|(_, own)| own)
}

/// The occupancy signals: `Signal::SiRqLive` to `Signal::BusB2bClocksIo`, contiguous
/// in `Signal`.
const FIRST: usize = Signal::SiRqLive as usize;
const LIVE: usize = Signal::BusB2bClocksIo as usize + 1 - FIRST;

/// The occupancy signals, as a mask: what the SI lays over the spans.
pub const OCCUPANCIES: Signals = Signals::mask(Signal::ALL.split_at(FIRST).1.split_at(LIVE).0);

/// How the occupancies change in one cycle.
type Deltas = [i16; LIVE];

/// §2.5: "Each core has four clean castout queues."
const CASTOUT_ENTRIES: usize = 4;

/// Cycles ahead the calendar first holds; it grows when a request reaches further.
const FIRST_HORIZON: usize = 1024;
/// Cycles ahead the calendar grows to at most (4.5 MB of slots): a change further
/// ahead waits in `Si::far` until the calendar reaches its cycle. An iteration of a
/// machine whose memory answers in 10^5 cycles (`memory_cycles`' largest) can reach
/// 10^7 cycles ahead, which a calendar of that many slots held in gigabytes.
const MAX_HORIZON: usize = 1 << 16;

/// The timeline, as a calendar of the changes to come: an entry is a +1 in the cycle
/// it becomes live and a -1 in the cycle it leaves, a bus clock a pulse live in the
/// clock's first cycle. An iteration costs the cycles where something changes, not
/// the entries live across it (an L3 miss keeps a dozen live for hundreds of cycles,
/// over tens of iterations).
#[derive(Debug, Clone)]
pub struct Si {
    /// The first cycle not laid yet (counted from the machine's first simulated one).
    now: u64,
    /// How many entries of each occupancy signal are live at `now`, and as signals.
    live: Deltas,
    occupied: Signals,
    /// The changes of cycles `now..now + calendar.len()`, cycle `t` in slot
    /// `t % calendar.len()` (a power of two); `marked` has a bit set for each slot
    /// with a change.
    calendar: Vec<Deltas>,
    marked: Vec<u64>,
    /// The changes of cycles past the calendar's reach (it has grown to
    /// `MAX_HORIZON`), by cycle, and the first of their cycles (`u64::MAX` with
    /// none): kept apart so that a step of the timeline checks one number for them.
    far: BTreeMap<u64, Deltas>,
    far_first: u64,
    /// The data bus's transfers (their first and past their last bus clock) that a
    /// later one may follow back to back.
    transfers: Vec<(u64, u64)>,
    /// Scratch space of `overlay`, kept to spare an allocation per iteration.
    spans: Vec<Span>,
    /// When each of this core's four clean-castout queue entries (§2.5: "Each core has
    /// four clean castout queues") frees: the ADS of the castout it holds.
    castouts: [u64; CASTOUT_ENTRIES],
    /// Whether the occupancies are laid over the spans as signals
    /// (`MontecitoConfig::occupancies`). Without, the timeline still runs (the bus's
    /// clock edges and the snoops' answers time this core's requests, and the state
    /// is compared for periods), but the spans stay as the core made them.
    lays: bool,
}

impl Si {
    pub(super) fn new(lays: bool) -> Si {
        Si {
            now: 0,
            live: [0; LIVE],
            occupied: Signals::default(),
            calendar: vec![[0; LIVE]; FIRST_HORIZON],
            marked: vec![0; FIRST_HORIZON / 64],
            far: BTreeMap::new(),
            far_first: u64::MAX,
            transfers: Vec::new(),
            spans: Vec::new(),
            castouts: [0; CASTOUT_ENTRIES],
            lays,
        }
    }
}

/// A request of one kind made in one cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// This core's line read (BRL, BRIL) answered HITM (its own timing is the
    /// arbiter's, `arbiter.rs`): the answer stalls the snoop phase.
    Hitm,
    /// An L2 request the L3 served.
    L3Hit,
    /// A clean castout of this core: a 0-byte transaction (an invalidation, BIL, is
    /// the arbiter's: it takes a request-queue entry).
    CastOut,
    /// The other core's line read (BRL, BRIL), answered HITM by this core or not.
    PeerRead {
        hitm: bool,
    },
    /// The I/O bridge's read of `clocks` data bus clocks (BRL, BRC: a line; BRP: one),
    /// answered HITM by this core or not.
    IoRead {
        clocks: u64,
        hitm: bool,
    },
    /// The bridge's claim of a line it writes: BIL (no data but a HITM's) or BRIL (the
    /// line's data, from memory or the HITM); then its write of the line (BWL).
    IoOwn {
        data: bool,
        hitm: bool,
    },
    IoWrite,
}

impl Si {
    /// Lays the SI over the spans of one iteration, `out[from..]`: makes the requests
    /// of each cycle, and splits the spans where an occupancy changes, each piece
    /// carrying the occupancies live in it.
    pub fn overlay(&mut self, cfg: &MontecitoConfig, out: &mut Vec<Span>, from: usize) {
        let length: u64 = out[from..].iter().map(|s| s.cycles).sum();
        let end = self.now + length;
        let requesting = out[from..].iter().any(|s| s.signals.counts_any(&REQUESTING));
        if !self.lays && out[from..].iter().all(|s| s.branch.is_none() || s.cycles == 1) {
            // Nothing to lay, and no branch outcome a change would move to a piece of
            // its own (the core gives each its own cycle): the spans stay as they are,
            // and only the timeline runs.
            for span in &out[from..] {
                if !span.signals.counts_any(&REQUESTING) {
                    self.run_to(self.now + span.cycles);
                    continue;
                }
                let kinds = requests(cfg, &span.signals);
                for _ in 0..span.cycles {
                    for (kind, n) in kinds {
                        for _ in 0..n {
                            self.request(cfg, kind, self.now);
                        }
                    }
                    self.run_to(self.now + 1);
                }
            }
        } else if !requesting && self.next_change(self.now, end) == end {
            // Nothing changes during the iteration: every span gets the same.
            if self.lays && self.occupied != Signals::default() {
                for span in &mut out[from..] {
                    span.signals = span.signals.union(self.occupied);
                }
            }
            self.advance(end);
        } else {
            let mut spans = std::mem::take(&mut self.spans);
            spans.clear();
            spans.extend(out.drain(from..));
            for span in &spans {
                if !span.signals.counts_any(&REQUESTING) {
                    self.lay(out, span, span.cycles);
                    continue;
                }
                // A cycle's requests change the occupancies from that cycle on.
                let kinds = requests(cfg, &span.signals);
                for c in 0..span.cycles {
                    for (kind, n) in kinds {
                        for _ in 0..n {
                            self.request(cfg, kind, self.now);
                        }
                    }
                    let piece = Span { branch: span.branch.filter(|_| c + 1 == span.cycles), ..*span };
                    self.lay(out, &piece, 1);
                }
            }
            self.spans = spans;
        }
        debug_assert_eq!(self.now, end);
        // A transfer whose last clock ended a bus clock before now is no previous
        // clock of any later one.
        let r = cfg.bus_ratio;
        self.transfers.retain(|&(_, to)| to + r > end);
    }

    /// Applies the changes up to cycle `to`, laying nothing.
    fn run_to(&mut self, to: u64) {
        while self.now < to {
            self.pass();
            self.advance(self.next_change(self.now + 1, to));
        }
    }

    /// Lays `cycles` cycles of `span` from `now`, split where an occupancy changes.
    pub(super) fn lay(&mut self, out: &mut Vec<Span>, span: &Span, cycles: u64) {
        let stop = self.now + cycles;
        while self.now < stop {
            self.pass();
            let until = self.next_change(self.now + 1, stop);
            let mut piece = Span { cycles: until - self.now, ..*span };
            if until != stop {
                piece.branch = None;
            }
            if self.lays {
                piece.signals = piece.signals.union(self.occupied);
            }
            push(out, piece);
            self.advance(until);
        }
    }

    /// Applies the changes of cycle `now`.
    fn pass(&mut self) {
        let slot = self.slot(self.now);
        if self.marked[slot / 64] & 1 << (slot % 64) != 0 {
            self.marked[slot / 64] &= !(1 << (slot % 64));
            let deltas = std::mem::replace(&mut self.calendar[slot], [0; LIVE]);
            if !self.lays {
                for (n, d) in self.live.iter_mut().zip(deltas) {
                    *n += d;
                }
                return;
            }
            self.occupied = Signals::default();
            for (i, (n, d)) in self.live.iter_mut().zip(deltas).enumerate() {
                *n += d;
                if *n > 0 {
                    self.occupied.set(Signal::ALL[FIRST + i], u8::try_from(*n).unwrap_or(MAX_PER_CYCLE).min(MAX_PER_CYCLE));
                }
            }
        }
    }

    /// Moves `now` on to `t`, and the far changes the calendar then reaches into it,
    /// so that every change in `far` stays beyond the calendar's reach.
    fn advance(&mut self, t: u64) {
        self.now = t;
        if self.far_first < t + self.calendar.len() as u64 {
            self.reach_far();
        }
    }

    #[cold]
    #[inline(never)]
    fn reach_far(&mut self) {
        let reach = self.now + self.calendar.len() as u64;
        while let Some(entry) = self.far.first_entry().filter(|e| *e.key() < reach) {
            let (at, deltas) = entry.remove_entry();
            let slot = self.slot(at);
            self.marked[slot / 64] |= 1 << (slot % 64);
            for (c, d) in self.calendar[slot].iter_mut().zip(deltas) {
                *c += d;
            }
        }
        self.far_first = self.far.keys().next().copied().unwrap_or(u64::MAX);
    }

    fn slot(&self, t: u64) -> usize {
        (t as usize) & (self.calendar.len() - 1)
    }

    /// The first cycle in `from..to` with a change, or `to`. Past the calendar's
    /// reach the first far change is the only one.
    fn next_change(&self, from: u64, to: u64) -> u64 {
        let horizon = self.calendar.len() as u64;
        let last = to.min(self.now + horizon);
        let mut t = from;
        while t < last {
            let slot = self.slot(t);
            // The marks of this slot and the rest of its word.
            let word = self.marked[slot / 64] >> (slot % 64);
            if word != 0 {
                let found = t + u64::from(word.trailing_zeros());
                return if found < last { found } else { to.min(self.far_first) };
            }
            t += 64 - (slot % 64) as u64;
        }
        to.min(self.far_first)
    }

    /// Counts `delta` more entries of `signal` (and of its own counterpart, when
    /// `own`) live from cycle `at` on.
    fn change(&mut self, signal: Signal, own: bool, at: u64, delta: i16) {
        // Every request's entries begin at or after its cycle; were one to begin
        // earlier, it begins now rather than in a slot a whole calendar ahead.
        debug_assert!(at >= self.now);
        let at = at.max(self.now);
        while at - self.now >= self.calendar.len() as u64 && self.calendar.len() < MAX_HORIZON {
            self.grow();
        }
        if at - self.now >= self.calendar.len() as u64 {
            let deltas = self.far.entry(at).or_insert([0; LIVE]);
            deltas[signal as usize - FIRST] += delta;
            if let Some(own) = own_signal(signal).filter(|_| own) {
                deltas[own as usize - FIRST] += delta;
            }
            self.far_first = self.far_first.min(at);
            return;
        }
        let slot = self.slot(at);
        self.marked[slot / 64] |= 1 << (slot % 64);
        self.calendar[slot][signal as usize - FIRST] += delta;
        if let Some(own) = own_signal(signal).filter(|_| own) {
            self.calendar[slot][own as usize - FIRST] += delta;
        }
    }

    /// Doubles the calendar's reach, each change keeping its cycle.
    fn grow(&mut self) {
        let old = self.calendar.len();
        let mut calendar = vec![[0; LIVE]; old * 2];
        let mut marked = vec![0; old * 2 / 64];
        for ahead in 0..old as u64 {
            let (from, to) = (self.slot(self.now + ahead), ((self.now + ahead) as usize) & (old * 2 - 1));
            if self.marked[from / 64] & 1 << (from % 64) != 0 {
                calendar[to] = self.calendar[from];
                marked[to / 64] |= 1 << (to % 64);
            }
        }
        self.calendar = calendar;
        self.marked = marked;
    }

    /// The first bus clock edge at or after `t`.
    pub(super) fn edge(&self, cfg: &MontecitoConfig, t: u64) -> u64 {
        t.next_multiple_of(cfg.bus_ratio)
    }

    /// An entry of the core's own, live from `from` to `to` (a release store in the
    /// L2D's OzQ, MMC38; an acquire there, MMC48; the RAB's entries, MMC50): the machine knows its times when it
    /// makes the request. Nothing in the timeline waits for these, so a run whose
    /// events read no occupancy does not lay them.
    pub fn hold(&mut self, signal: Signal, from: u64, to: u64) {
        if self.lays {
            self.add(signal, false, from, to);
        }
    }

    /// A flag of `signal` set from `from` to `to`: the signal's value is the sum of
    /// the flags live, so a caller lays each flag over cycles it does not already
    /// cover (`Signal::BrqRejecting`, `Signal::PrefetchStall`: `InFlight` joins their
    /// waits).
    pub(super) fn flag(&mut self, signal: Signal, flag: u8, from: u64, to: u64) {
        if self.lays && from < to {
            self.change(signal, false, from, i16::from(flag));
            self.change(signal, false, to, -i16::from(flag));
        }
    }

    pub(super) fn add(&mut self, signal: Signal, own: bool, from: u64, to: u64) {
        if from < to {
            self.change(signal, own, from, 1);
            self.change(signal, own, to, -1);
        }
    }

    /// `clocks` bus clocks from edge `from`, a pulse in each clock's first cycle.
    fn clocks(&mut self, signal: Signal, own: bool, from: u64, clocks: u64, r: u64) {
        for pulse in (0..clocks).map(|i| from + i * r) {
            self.add(signal, own, pulse, pulse + 1);
        }
    }

    /// A transaction's data on the data bus: `clocks` bus clocks from edge `from`, of
    /// this core or the other; a transfer whose previous bus clock carried another's
    /// data is back to back. This core's transfers take the bus one at a time
    /// (`arbiter.rs`); the other agents' are laid as they come (clocks two transfers
    /// share count once).
    pub(super) fn data(&mut self, from: u64, clocks: u64, own: bool, r: u64) {
        self.transfer(from, clocks, (DATA, B2B), own, r);
    }

    /// The I/O bridge's transaction's data: counted apart from the cores' (`DATA_IO`).
    fn data_io(&mut self, from: u64, clocks: u64, r: u64) {
        self.transfer(from, clocks, (DATA_IO, B2B_IO), false, r);
    }

    fn transfer(&mut self, from: u64, clocks: u64, (data, b2b): (Signal, Signal), own: bool, r: u64) {
        let busy = from >= r && self.transfers.iter().any(|&(f, to)| f <= from - r && from - r < to);
        if busy {
            self.add(b2b, own, from, from + 1);
        }
        if clocks > 0 {
            self.transfers.push((from, from + (clocks - 1) * r + 1));
        }
        self.clocks(data, own, from, clocks, r);
    }

    /// The snoop phase of a transaction put on the bus at `ads`: the snoop queue and
    /// the SCB hold it from one bus clock after until the answer (a HITM answer adds
    /// stall clocks, §4.11.2).
    pub(super) fn snoop(&mut self, cfg: &MontecitoConfig, ads: u64, own: bool, hitm: bool) -> u64 {
        let r = cfg.bus_ratio;
        let answer = ads + cfg.snoop_clocks * r;
        let stall = if hitm { cfg.hitm_clocks } else { 0 };
        self.add(SNOOPQ, false, ads + r, answer);
        self.add(SCB_BOTH, own, ads + r, answer + stall * r);
        self.clocks(STALL, own, answer, stall, r);
        answer + stall * r
    }

    fn request(&mut self, cfg: &MontecitoConfig, kind: Kind, t0: u64) {
        let r = cfg.bus_ratio;
        let (m, l3) = (cfg.memory_cycles, cfg.l3_cycles);
        match kind {
            Kind::L3Hit => self.add(BRQ, false, t0, t0 + l3),
            Kind::Hitm => {
                // The other core's answer stalls the snoop phase of this core's read
                // (§4.11.2); its line comes from that core's implicit write-back
                // buffers, not a write queue (§2.5).
                let ads = self.edge(cfg, t0 + l3 + r);
                let answer = ads + cfg.snoop_clocks * r;
                self.add(SCB_BOTH, true, answer, answer + cfg.hitm_clocks * r);
                self.clocks(STALL, true, answer, cfg.hitm_clocks, r);
            }
            Kind::PeerRead { hitm } => {
                // The other core's read, from its turn; a HITM answer is this core's
                // implicit write-back (§2.5: its own data buffers, no write queue).
                let queued = t0 + 1;
                let ads = self.edge(cfg, queued + r);
                self.add(RQ_BOTH, false, queued, ads);
                let answered = self.snoop(cfg, ads, false, hitm);
                self.data(answered, cfg.line_clocks, false, r);
                self.add(IOQ, false, ads, answered + cfg.line_clocks * r);
            }
            Kind::IoRead { clocks, hitm } => {
                // The bridge's transactions go on the bus a bus clock after it has them;
                // the data comes from memory, or at once from this core's HITM (which
                // its write queue holds while the data goes out).
                let ads = self.edge(cfg, t0 + 1);
                let answered = self.snoop(cfg, ads, false, hitm);
                let data = if hitm { answered } else { self.edge(cfg, (t0 + m).saturating_sub(clocks * r)).max(answered) };
                self.data_io(data, clocks, r);
                let done = data + clocks * r;
                self.add(IOQ, false, ads, done);
            }
            Kind::IoOwn { data, hitm } => {
                let ads = self.edge(cfg, t0 + 1);
                let answered = self.snoop(cfg, ads, false, hitm);
                let mut done = answered;
                if data || hitm {
                    let lines = cfg.line_clocks;
                    let from = if hitm { answered } else { self.edge(cfg, (t0 + m).saturating_sub(lines * r)).max(answered) };
                    self.data_io(from, lines, r);
                    done = from + lines * r;
                }
                self.add(IOQ, false, ads, done);
            }
            Kind::IoWrite => {
                let ads = self.edge(cfg, t0 + 1 + r);
                let answered = self.snoop(cfg, ads, false, false);
                self.data_io(answered, cfg.line_clocks, r);
                self.add(IOQ, false, ads, answered + cfg.line_clocks * r);
            }
            Kind::CastOut => {
                // The castout takes the entry that frees first, waiting for it when all
                // four are live, and holds it until its ADS.
                let (entry, free) = self.castouts.iter().copied().enumerate().min_by_key(|&(_, at)| at).unwrap_or_default();
                let queued = (t0 + 1).max(free);
                let ads = self.edge(cfg, queued + r);
                self.castouts[entry] = ads;
                self.add(CCQ, false, queued, ads);
                let answered = self.snoop(cfg, ads, true, false);
                self.add(IOQ, false, ads, answered);
            }
        }
    }

    /// The live occupancies, the changes to come and the transfers relative to now,
    /// and the bus clock's phase.
    pub fn canonical(&self, cfg: &MontecitoConfig, out: &mut Vec<u64>) {
        let now = self.now;
        out.push(now % cfg.bus_ratio);
        out.extend(self.live.iter().map(|&n| n as u64));
        let mut t = now;
        let horizon = now + self.calendar.len() as u64;
        while let Some(at) = Some(self.next_change(t, horizon)).filter(|&at| at < horizon) {
            out.push(at - now);
            out.extend(self.calendar[self.slot(at)].iter().map(|&d| d as u64));
            t = at + 1;
        }
        // Every far change is past the calendar's reach, after those above.
        for (&at, deltas) in &self.far {
            out.push(at - now);
            out.extend(deltas.iter().map(|&d| d as u64));
        }
        // The castout entries still held, by how far ahead each frees.
        let mut held: Vec<u64> = self.castouts.iter().map(|&at| at.saturating_sub(now)).collect();
        held.sort_unstable();
        out.extend(held);
        out.push(u64::MAX - self.transfers.len() as u64);
        // Transfers that began before now: how far back (kept as wrapping offsets).
        out.extend(self.transfers.iter().flat_map(|&(from, to)| [from.wrapping_sub(now), to.wrapping_sub(now)]));
    }
}

/// The signals `requests` reads: the answers to this core's reads, the other core's
/// transactions and answers, and the I/O bridge's (this core's own reads and writes
/// are laid when the core makes them).
const REQUEST_SIGNALS: [Signal; 24] = {
    use Signal::*;
    let cores = [
        BrlHitm,
        BrilHitm,
        BilHitm,
        L3DataReadHits,
        StoresHitL3,
        L3InstructionHits,
        L3InstructionPrefetchHits,
        PeerBrlHitm,
        PeerBrilHitm,
        PeerBrl,
        PeerBril,
        CleanCastouts,
    ];
    let mut all = [BrlHitm; 24];
    let mut i = 0;
    while i < all.len() {
        all[i] = if i < cores.len() { cores[i] } else { Signal::IO_BRIDGE[i - cores.len()] };
        i += 1;
    }
    all
};

/// `REQUEST_SIGNALS` as a mask.
const REQUESTING: Signals = Signals::mask(&REQUEST_SIGNALS);

/// The requests a cycle with signals `s` makes, by kind.
fn requests(cfg: &MontecitoConfig, s: &Signals) -> [(Kind, u64); 14] {
    use Signal::*;
    let hitm = s.get(BrlHitm) + s.get(BrilHitm) + s.get(BilHitm);
    let l3_hits = s.get(L3DataReadHits) + s.get(StoresHitL3) + s.get(L3InstructionHits) + s.get(L3InstructionPrefetchHits);
    let peer_hitm = s.get(PeerBrlHitm) + s.get(PeerBrilHitm);
    let peer = s.get(PeerBrl) + s.get(PeerBril);
    // The bridge's HITM answers to BRC and BRP went to its BRC first (a cycle has one
    // line's transactions unless the iteration is shorter than its transfers).
    let (brc, brp, bil) = (s.get(IoBrc), s.get(IoBrp), s.get(IoBil));
    let reads_hitm = s.get(IoReadHitm);
    let brc_hitm = reads_hitm.min(brc);
    let brp_hitm = (reads_hitm - brc_hitm).min(brp);
    let bil_hitm = s.get(IoBilHitm).min(bil);
    let (brl, brl_hitm) = (s.get(IoBrl), s.get(IoBrlHitm).min(s.get(IoBrl)));
    let (bril, bril_hitm) = (s.get(IoBril), s.get(IoBrilHitm).min(s.get(IoBril)));
    let line = cfg.line_clocks;
    [
        (Kind::Hitm, hitm),
        (Kind::L3Hit, l3_hits),
        (Kind::CastOut, s.get(CleanCastouts)),
        (Kind::PeerRead { hitm: true }, peer_hitm.min(peer)),
        (Kind::PeerRead { hitm: false }, peer.saturating_sub(peer_hitm)),
        (Kind::IoRead { clocks: line, hitm: true }, brl_hitm + brc_hitm),
        (Kind::IoRead { clocks: line, hitm: false }, brl - brl_hitm + brc - brc_hitm),
        (Kind::IoRead { clocks: 1, hitm: true }, brp_hitm),
        (Kind::IoRead { clocks: 1, hitm: false }, brp - brp_hitm),
        (Kind::IoOwn { data: false, hitm: true }, bil_hitm),
        (Kind::IoOwn { data: false, hitm: false }, bil - bil_hitm),
        (Kind::IoOwn { data: true, hitm: true }, bril_hitm),
        (Kind::IoOwn { data: true, hitm: false }, bril - bril_hitm),
        (Kind::IoWrite, s.get(IoBwl)),
    ]
}

/// Appends `piece`, merged into the span before when they are the same.
fn push(out: &mut Vec<Span>, piece: Span) {
    if piece.cycles == 0 {
        return;
    }
    if let Some(last) = out.last_mut() {
        if last.branch.is_none() && (Span { cycles: last.cycles, ..piece }) == *last {
            last.cycles += piece.cycles;
            return;
        }
    }
    out.push(piece);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The overlay skips cycles none of whose signals is among `REQUEST_SIGNALS`: no
    /// other signal may change the requests a cycle makes.
    #[test]
    fn only_the_request_signals_make_requests() {
        let cfg = MontecitoConfig::new(2);
        // Every signal a Montecito makes: no other fits its spans.
        let ours = crate::stream::family_signals(crate::stream::MONTECITO);
        let all = |keep: &dyn Fn(Signal) -> bool| {
            ours.clone().map(|i| Signal::ALL[i]).filter(|&s| keep(s)).fold(Signals::default(), |s, sig| s.with(sig, 3))
        };
        let requesting = all(&|s| REQUEST_SIGNALS.contains(&s));
        assert!(requests(&cfg, &requesting).iter().any(|&(_, n)| n > 0));
        assert_eq!(requests(&cfg, &all(&|_| true)), requests(&cfg, &requesting));
        assert!(requests(&cfg, &all(&|s| !REQUEST_SIGNALS.contains(&s))).iter().all(|&(_, n)| n == 0));
    }

    /// Lays `cycles` cycles of an empty span and returns the pieces' lengths and
    /// their occupancy of `signal`.
    fn laid(si: &mut Si, cycles: u64, signal: Signal) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        si.lay(&mut out, &Span::new(cycles, 0), cycles);
        out.iter().map(|s| (s.cycles, s.signals.get(signal))).collect()
    }

    #[test]
    fn entries_and_bus_clocks_change_the_occupancy_in_their_cycles() {
        let mut si = Si::new(true);
        si.add(RQ_BOTH, true, 2, 5);
        si.add(RQ_BOTH, false, 4, 6);
        assert_eq!(laid(&mut si, 8, RQ_BOTH), [(2, 0), (2, 1), (1, 2), (1, 1), (2, 0)]);
        let mut si = Si::new(true);
        si.add(RQ_BOTH, true, 2, 5);
        assert_eq!(laid(&mut si, 8, RQ), [(2, 0), (3, 1), (3, 0)], "this core's own counterpart");
        // Three bus clocks of six cycles: a pulse in the first cycle of each.
        let mut si = Si::new(true);
        si.clocks(DATA, false, 6, 3, 6);
        assert_eq!(laid(&mut si, 24, DATA), [(6, 0), (1, 1), (5, 0), (1, 1), (5, 0), (1, 1), (5, 0)]);
    }

    /// §2.5: "Each core has four clean castout queues": a burst of castouts waits for
    /// entries, each held until its ADS, so no more than four are ever live and the
    /// last go on the bus later.
    #[test]
    fn s2_5_a_core_holds_four_clean_castouts_at_most() {
        let cfg = MontecitoConfig::new(2);
        let mut si = Si::new(true);
        for _ in 0..10 {
            si.request(&cfg, Kind::CastOut, 3);
        }
        let pieces = laid(&mut si, 200, CCQ);
        assert_eq!(pieces.iter().map(|&(_, n)| n).max(), Some(CASTOUT_ENTRIES as u64));
        // Four go on the bus at the first bus clock edge a bus clock after they queue
        // (cycle 12 of 6-cycle clocks), four a bus clock later, the last two after that.
        let mut t = 0;
        let mut end = 0;
        for &(c, n) in &pieces {
            t += c;
            if n > 0 {
                end = t;
            }
        }
        assert_eq!((cfg.bus_ratio, end), (6, 24), "three waves of castouts");
        assert_eq!(pieces.last().map(|&(_, n)| n), Some(0), "every castout reached its ADS");
    }

    #[test]
    fn the_calendar_grows_to_reach_every_change_and_keeps_the_others() {
        let mut si = Si::new(true);
        laid(&mut si, 1000, RQ_BOTH);
        si.add(RQ_BOTH, false, 1003, 1007);
        si.add(RQ_BOTH, false, 1010, 5000);
        assert_eq!(si.calendar.len(), 4096, "4,000 cycles ahead");
        assert_eq!(laid(&mut si, 5000, RQ_BOTH), [(3, 0), (4, 1), (3, 0), (3990, 1), (1000, 0)]);
    }

    #[test]
    fn changes_past_the_calendars_largest_reach_wait_aside_and_come_at_their_cycle() {
        let mut si = Si::new(true);
        let far = MAX_HORIZON as u64 * 3;
        si.add(RQ_BOTH, false, 10, 20);
        si.add(RQ_BOTH, false, far, far + 5);
        si.add(RQ_BOTH, false, far + 2, far + MAX_HORIZON as u64 * 2);
        assert_eq!(si.calendar.len(), MAX_HORIZON, "the calendar grows no further");
        assert_eq!((si.far.len(), si.far_first), (4, far));
        let pieces = laid(&mut si, far + MAX_HORIZON as u64 * 2 + 10, RQ_BOTH);
        let end = MAX_HORIZON as u64 * 2 - 2;
        assert_eq!(pieces, [(10, 0), (10, 1), (far - 20, 0), (2, 1), (3, 2), (end - 3, 1), (10, 0)]);
        assert_eq!((si.far.len(), si.far_first), (0, u64::MAX));
        // The same changes made from a later cycle, nearer, leave the same state.
        let canonical = |si: &Si| {
            let mut out = Vec::new();
            si.canonical(&MontecitoConfig::new(1), &mut out);
            out
        };
        let (mut a, mut b) = (Si::new(true), Si::new(true));
        laid(&mut a, far, RQ_BOTH);
        a.add(RQ_BOTH, false, far + 1000, far + MAX_HORIZON as u64 + 6);
        b.add(RQ_BOTH, false, far + 1000, far + MAX_HORIZON as u64 + 6);
        laid(&mut b, far, RQ_BOTH);
        assert_eq!((a.far.len(), b.far.len()), (1, 1), "the end beyond the reach");
        assert_eq!(canonical(&a), canonical(&b));
    }

    #[test]
    fn the_state_is_relative_to_now_and_the_bus_clock() {
        let cfg = MontecitoConfig::new(2);
        let state = |before: u64| {
            let mut si = Si::new(true);
            laid(&mut si, before, RQ_BOTH);
            si.add(RQ_BOTH, true, before + 3, before + 40);
            si.clocks(DATA, false, before + 6, 2, cfg.bus_ratio);
            laid(&mut si, 10, RQ_BOTH);
            let mut out = Vec::new();
            si.canonical(&cfg, &mut out);
            out
        };
        assert_eq!(state(12), state(12 + 6 * 50));
        assert_ne!(state(12), state(13), "another phase of the bus clock");
    }
}
