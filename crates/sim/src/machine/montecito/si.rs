//! The system interface's timeline (§2.5, §4.11; ERRATA MMC24): the requests each
//! cycle makes (its transactions' signals) pass through the L2's BRQ, the arbiter's
//! queues (RQ, WRITEQ, CCQ), the bus's in-order queue, the snoop phase (SCB, the
//! snoop queue) and the data bus, each for a time the parameters below give. After
//! each iteration the SI lays the entries live in each cycle over the iteration's
//! spans as occupancy signals; entries still live carry over to the next iteration.
//! The SI only observes: no queue ever delays the core.

use crate::machine::Keys;
use crate::stream::{Signal, Signals, Span, MAX_PER_CYCLE};

use super::config::MontecitoConfig;

/// What an entry occupies; the signal that counts it.
const RQ: Signal = Signal::SiRqLive;
const RQ_BOTH: Signal = Signal::SiRqLiveBoth;
const WRITEQ: Signal = Signal::SiWriteqLive;
const WRITEQ_BOTH: Signal = Signal::SiWriteqLiveBoth;
const CCQ: Signal = Signal::SiCcqLive;
const IOQ: Signal = Signal::SiIoqLive;
const SCB: Signal = Signal::SiScbLive;
const SCB_BOTH: Signal = Signal::SiScbLiveBoth;
const SNOOPQ: Signal = Signal::ErSnoopqLive;
const BRQ: Signal = Signal::ErBrqLive;
const READ_OUT: Signal = Signal::ErMemReadOut;
const DATA: Signal = Signal::BusDataClocks;
const DATA_SELF: Signal = Signal::BusDataClocksSelf;
const B2B: Signal = Signal::BusB2bClocks;
const B2B_SELF: Signal = Signal::BusB2bClocksSelf;
const STALL: Signal = Signal::BusSnoopStallClocks;
const STALL_SELF: Signal = Signal::BusSnoopStallClocksSelf;
const DATA_IO: Signal = Signal::BusDataClocksIo;
const B2B_IO: Signal = Signal::BusB2bClocksIo;

/// One queue entry, live in cycles `from..to` of the iteration (times relative to its
/// first cycle), or bus clocks: live in the first cycle of every `every` from `from`
/// on, before `to`. Counted under `signal` (both cores'), and when `own` (this
/// core's) under its own counterpart too.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Entry {
    signal: u8,
    own: bool,
    every: u8,
    from: u64,
    to: u64,
}

/// The counterpart of a both-cores signal that counts this core's entries only.
fn own_signal(signal: u8) -> Option<Signal> {
    [(RQ_BOTH, RQ), (WRITEQ_BOTH, WRITEQ), (SCB_BOTH, SCB), (DATA, DATA_SELF), (B2B, B2B_SELF), (STALL, STALL_SELF)]
        .into_iter()
        .find(|(both, _)| *both as u8 == signal)
        .map(|(_, own)| own)
}

/// The timeline: entries live beyond the last iteration, and where in its bus clock
/// the next iteration starts.
#[derive(Debug, Clone, Default)]
pub struct Si {
    entries: Vec<Entry>,
    phase: u64,
    /// Scratch space of `lay`, kept to spare an allocation per iteration.
    changes: Vec<(u64, u8, i32)>,
    spans: Vec<Span>,
}

/// The occupancy signals: `Signal::SiRqLive` to `Signal::BusB2bClocksIo`, contiguous
/// in `Signal`.
const FIRST: usize = Signal::SiRqLive as usize;
const LIVE: usize = Signal::BusB2bClocksIo as usize + 1 - FIRST;

/// A request of one kind made in one cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A line read from memory by this core (BRL, BRIL), answered HITM or not.
    LineRead {
        hitm: bool,
    },
    /// An L2 request the L3 served.
    L3Hit,
    /// A partial read (BRP): uncacheable.
    PartialRead,
    /// A write of `clocks` data bus clocks: a write-back or coalesced line (4), a
    /// partial write (1).
    Write {
        clocks: u64,
    },
    /// A 0-byte transaction of this core: a clean castout, an invalidation (BIL).
    CastOut,
    Invalidate,
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
    /// Lays the SI over the spans of one iteration, `out[from..]`.
    pub fn overlay(&mut self, cfg: &MontecitoConfig, out: &mut Vec<Span>, from: usize) {
        let mut length = 0;
        for &Span { signals, cycles, .. } in &out[from..] {
            // Most cycles make no request: their signals are tested all at once.
            if !signals.counts_any(&REQUESTING) {
                length += cycles;
                continue;
            }
            let kinds = requests(cfg, &signals);
            if kinds.iter().any(|&(_, n)| n > 0) {
                for c in 0..cycles {
                    for (kind, n) in kinds {
                        for _ in 0..n {
                            self.request(cfg, kind, length + c);
                        }
                    }
                }
            }
            length += cycles;
        }
        if self.entries.iter().any(|e| e.from < length) {
            self.lay(out, from, length);
        }
        // What outlives the iteration carries over (in the order made: a period
        // repeats it); bus clocks keep their phase.
        self.entries.retain(|e| e.to > length);
        for e in &mut self.entries {
            if e.from < length && e.every > 0 {
                let every = u64::from(e.every);
                e.from += (length - e.from).div_ceil(every) * every;
            }
            e.from = e.from.saturating_sub(length);
            e.to -= length;
        }
        self.phase = (self.phase + length) % cfg.bus_ratio;
    }

    /// Splits the iteration's spans where an occupancy changes and adds the
    /// occupancies to each piece.
    fn lay(&mut self, out: &mut Vec<Span>, from: usize, length: u64) {
        let mut changes = std::mem::take(&mut self.changes);
        changes.clear();
        // Entries live from the first cycle start counted; the others are changes.
        let mut live = [0i32; LIVE];
        for e in self.entries.iter().filter(|e| e.from < length) {
            let signals = std::iter::once(e.signal).chain(own_signal(e.signal).filter(|_| e.own).map(|s| s as u8));
            for signal in signals {
                let mut edge = |from: u64, to: u64| {
                    if from == 0 {
                        live[usize::from(signal) - FIRST] += 1;
                    } else {
                        changes.push((from, signal, 1));
                    }
                    if to < length {
                        changes.push((to, signal, -1));
                    }
                };
                if e.every == 0 {
                    edge(e.from, e.to);
                } else {
                    for pulse in (e.from..e.to.min(length)).step_by(usize::from(e.every)) {
                        edge(pulse, pulse + 1);
                    }
                }
            }
        }
        changes.sort_unstable_by_key(|c| c.0);
        let mut spans = std::mem::take(&mut self.spans);
        spans.clear();
        spans.extend(out.drain(from..));
        let (mut next, mut t) = (0, 0);
        for span in &spans {
            let end = t + span.cycles;
            let mut at = t;
            while at < end {
                while let Some(&(_, signal, delta)) = changes.get(next).filter(|c| c.0 <= at) {
                    live[usize::from(signal) - FIRST] += delta;
                    next += 1;
                }
                let until = changes.get(next).map_or(end, |c| c.0.min(end));
                let mut piece = Span { cycles: until - at, ..*span };
                if until != end {
                    piece.branch = None;
                }
                for (i, &n) in live.iter().enumerate().filter(|(_, &n)| n > 0) {
                    piece.signals.set(Signal::ALL[FIRST + i], (n as u8).min(MAX_PER_CYCLE));
                }
                push(out, piece);
                at = until;
            }
            t = end;
        }
        self.spans = spans;
        self.changes = changes;
    }

    /// The first bus clock edge at or after `t`.
    fn edge(&self, cfg: &MontecitoConfig, t: u64) -> u64 {
        let r = cfg.bus_ratio;
        let late = (self.phase + t) % r;
        if late == 0 {
            t
        } else {
            t + r - late
        }
    }

    fn add(&mut self, signal: Signal, own: bool, from: u64, to: u64) {
        if from < to {
            self.entries.push(Entry { signal: signal as u8, own, every: 0, from, to });
        }
    }

    /// `clocks` bus clocks from edge `from`, a pulse in each clock's first cycle.
    fn clocks(&mut self, signal: Signal, own: bool, from: u64, clocks: u64, r: u64) {
        if clocks > 0 {
            self.entries.push(Entry { signal: signal as u8, own, every: r as u8, from, to: from + (clocks - 1) * r + 1 });
        }
    }

    /// A transaction's data on the data bus: `clocks` bus clocks from edge `from`, of
    /// this core or the other; a transfer whose previous bus clock carried another's
    /// data is back to back. Transfers are not serialized: the SI does not hold the
    /// core back, so the bus is not either (clocks two transfers share count once).
    fn data(&mut self, from: u64, clocks: u64, own: bool, r: u64) {
        self.transfer(from, clocks, (DATA, B2B), own, r);
    }

    /// The I/O bridge's transaction's data: counted apart from the cores' (`DATA_IO`).
    fn data_io(&mut self, from: u64, clocks: u64, r: u64) {
        self.transfer(from, clocks, (DATA_IO, B2B_IO), false, r);
    }

    fn transfer(&mut self, from: u64, clocks: u64, (data, b2b): (Signal, Signal), own: bool, r: u64) {
        let carries = |e: &Entry| e.signal == DATA as u8 || e.signal == DATA_IO as u8;
        let busy = from >= r && self.entries.iter().any(|e| carries(e) && e.from < from - r + 1 && from - r < e.to);
        if busy {
            self.add(b2b, own, from, from + 1);
        }
        self.clocks(data, own, from, clocks, r);
    }

    /// The snoop phase of a transaction put on the bus at `ads`: the snoop queue and
    /// the SCB hold it from one bus clock after until the answer (a HITM answer adds
    /// stall clocks, §4.11.2).
    fn snoop(&mut self, cfg: &MontecitoConfig, ads: u64, own: bool, hitm: bool) -> u64 {
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
            Kind::LineRead { hitm } | Kind::PeerRead { hitm } => {
                let own = matches!(kind, Kind::LineRead { .. });
                // This core's read leaves for the bus once the L3 missed; the other
                // core's, from its turn.
                let queued = if own { t0 + l3 } else { t0 + 1 };
                let ads = self.edge(cfg, queued + r);
                self.add(RQ_BOTH, own, queued, ads);
                if own {
                    self.add(BRQ, false, t0, t0 + m);
                }
                let answered = self.snoop(cfg, ads, own, hitm);
                let data = if own { self.edge(cfg, (t0 + m).saturating_sub(cfg.line_clocks * r)).max(answered) } else { answered };
                self.data(data, cfg.line_clocks, own, r);
                let done = data + cfg.line_clocks * r;
                self.add(IOQ, false, ads, done);
                if own {
                    // §4.11.2: Montecito counts "the core clock after a request is sent
                    // to the arbiter" until the first data is through it (a bus clock
                    // after it is on the bus), arbiter time included.
                    self.add(READ_OUT, false, queued + 1, data + r);
                }
                if hitm {
                    // The holder's implicit write-back: its write queue holds the data
                    // while it goes out (this core's when it answered the other's).
                    self.add(WRITEQ_BOTH, !own, answered, done);
                }
            }
            Kind::PartialRead => {
                let ads = self.edge(cfg, t0 + 1 + r);
                self.add(BRQ, false, t0, t0 + m);
                self.add(RQ_BOTH, true, t0 + 1, ads);
                let answered = self.snoop(cfg, ads, true, false);
                let data = self.edge(cfg, (t0 + m).saturating_sub(r)).max(answered);
                self.data(data, 1, true, r);
                self.add(IOQ, false, ads, data + r);
            }
            Kind::Write { clocks } => {
                let ads = self.edge(cfg, t0 + 1 + r);
                let answered = self.snoop(cfg, ads, true, false);
                self.data(answered, clocks, true, r);
                let done = answered + clocks * r;
                self.add(WRITEQ_BOTH, true, t0 + 1, done);
                self.add(IOQ, false, ads, done);
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
                if hitm {
                    self.add(WRITEQ_BOTH, true, answered, done);
                }
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
                if hitm {
                    self.add(WRITEQ_BOTH, true, answered, done);
                }
            }
            Kind::IoWrite => {
                let ads = self.edge(cfg, t0 + 1 + r);
                let answered = self.snoop(cfg, ads, false, false);
                self.data_io(answered, cfg.line_clocks, r);
                self.add(IOQ, false, ads, answered + cfg.line_clocks * r);
            }
            Kind::CastOut | Kind::Invalidate => {
                let ads = self.edge(cfg, t0 + 1 + r);
                if kind == Kind::CastOut {
                    self.add(CCQ, false, t0 + 1, ads);
                } else {
                    self.add(RQ_BOTH, true, t0 + 1, ads);
                }
                let answered = self.snoop(cfg, ads, true, false);
                self.add(IOQ, false, ads, answered);
            }
        }
    }

    /// The entries and the bus clock's phase.
    pub fn canonical(&self, _keys: &Keys, out: &mut Vec<u64>) {
        out.extend([u64::MAX - self.entries.len() as u64, self.phase]);
        out.extend(
            self.entries.iter().flat_map(|e| [u64::from(e.signal) | u64::from(e.own) << 8 | u64::from(e.every) << 16, e.from, e.to]),
        );
    }
}

/// The signals `requests` reads: the cores' transactions and answers, and the I/O
/// bridge's.
const REQUEST_SIGNALS: [Signal; 35] = {
    use Signal::*;
    let cores = [
        Wc32,
        Wc16,
        Wc8Low,
        Wc8High,
        MemoryWrites,
        MemoryReads,
        PartialMemoryReads,
        DeferredMemoryReads,
        BrlHitm,
        BrilHitm,
        L3DataReadHits,
        StoresHitL3,
        L3InstructionHits,
        L3InstructionPrefetchHits,
        PeerBrlHitm,
        PeerBrilHitm,
        PeerBrl,
        PeerBril,
        DeviceReads,
        DeviceWrites,
        CleanCastouts,
        BusInvalidates,
        CodeFlushes,
    ];
    let mut all = [Wc32; 35];
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
fn requests(cfg: &MontecitoConfig, s: &Signals) -> [(Kind, u64); 19] {
    use Signal::*;
    let pieces = s.get(Wc32) + s.get(Wc16) + s.get(Wc8Low) + s.get(Wc8High);
    let lines_written = s.get(MemoryWrites).saturating_sub(pieces);
    let line_reads = s.get(MemoryReads).saturating_sub(s.get(PartialMemoryReads)) + s.get(DeferredMemoryReads);
    let hitm = s.get(BrlHitm) + s.get(BrilHitm);
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
        (Kind::LineRead { hitm: true }, hitm.min(line_reads)),
        (Kind::LineRead { hitm: false }, line_reads.saturating_sub(hitm)),
        (Kind::L3Hit, l3_hits),
        (Kind::PartialRead, s.get(PartialMemoryReads) + s.get(DeviceReads)),
        (Kind::Write { clocks: cfg.line_clocks }, lines_written),
        (Kind::Write { clocks: 1 }, pieces + s.get(DeviceWrites)),
        (Kind::CastOut, s.get(CleanCastouts)),
        (Kind::Invalidate, s.get(BusInvalidates) + s.get(CodeFlushes)),
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
        let all =
            |keep: &dyn Fn(Signal) -> bool| Signal::ALL.into_iter().filter(|&s| keep(s)).fold(Signals::default(), |s, sig| s.with(sig, 3));
        let requesting = all(&|s| REQUEST_SIGNALS.contains(&s));
        assert!(requests(&cfg, &requesting).iter().any(|&(_, n)| n > 0));
        assert_eq!(requests(&cfg, &all(&|_| true)), requests(&cfg, &requesting));
        assert!(requests(&cfg, &all(&|s| !REQUEST_SIGNALS.contains(&s))).iter().all(|&(_, n)| n == 0));
    }
}
