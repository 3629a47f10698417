//! Labelled assumptions (docs/assumptions.md): a machine's values that no public
//! source gives, each a `--machine-config` key, and what each shapes first-hand: the
//! signals of the structure it sizes or times. An event depends on an assumption when
//! it reads one of those signals, which [`reads`] works out from what the event counts
//! in a cycle; `pmu describe` names them.

use crate::stream::{Signal, Signals, Span, MAX_PER_CYCLE};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assumption {
    /// The `--machine-config` table and key, `[core] mispredict_cycles`.
    pub table: &'static str,
    pub key: &'static str,
    /// The machine's value, as the configuration file writes it.
    pub value: String,
    /// The signals the value shapes first-hand: the misses of a structure it sizes,
    /// the stall cycles of a wait it times. Signals that follow from those (the
    /// cycles, the instructions a run retires) are not listed: every timing moves
    /// them.
    pub shapes: Vec<Signal>,
    /// Whether it shapes the memory controllers' queues, whose waits the DRAM events
    /// read ([`crate::stream::MemoryQueues`]) rather than a signal.
    pub queues: bool,
    /// Whose waits for their lines it shapes ([`DATA_LATENCY`], [`FETCH_LATENCY`]),
    /// which the event address registers' latency modes read
    /// ([`crate::stream::Detail`]) rather than a signal.
    pub latency: u8,
}

/// The latencies an assumption shapes or an event reads: data references' that the
/// L1D did not serve, instruction fetches' that the L1I did not.
pub const DATA_LATENCY: u8 = 0b01;
pub const FETCH_LATENCY: u8 = 0b10;

impl Assumption {
    pub fn new(table: &'static str, key: &'static str, value: impl ToString, shapes: &[Signal]) -> Assumption {
        Assumption { table, key, value: value.to_string(), shapes: shapes.to_vec(), queues: false, latency: 0 }
    }

    /// The assumption shapes the memory controllers' queues, as well as `shapes`.
    pub fn queues(self) -> Assumption {
        Assumption { queues: true, ..self }
    }

    /// The assumption shapes how long the misses of `sides` (`DATA_LATENCY`,
    /// `FETCH_LATENCY`) wait for their lines, as well as `shapes`.
    pub fn latency(self, sides: u8) -> Assumption {
        Assumption { latency: sides, ..self }
    }

    /// `[table] key`, as docs/assumptions.md names it.
    pub fn name(&self) -> String {
        format!("[{}] {}", self.table, self.key)
    }
}

/// Which of `asked` (signals of `family`, their discriminants:
/// `stream::family_signals`) change what `count` gives for a cycle. Each is probed with
/// every value it can take in a cycle, alone and beside each signal of the family at 1
/// (a pair that counts other than either alone reads both); then, from each cycle
/// found to count only with a pair, once more. Events that weigh one signal against
/// another (a cause counted only when no higher-priority one is there, a difference of
/// two counts, a code read under a flag) read all of them.
pub fn reads(family: impl Iterator<Item = usize>, asked: &[Signal], count: impl Fn(&Span) -> u64) -> Vec<Signal> {
    let signals: Vec<Signal> = family.filter_map(|i| Signal::ALL.get(i).copied()).collect();
    let signals = signals.as_slice();
    let asked: Vec<Signal> = signals.iter().copied().filter(|s| asked.contains(s)).collect();
    let at = |signals: Signals| count(&Span { signals, ..Span::new(1, 0) });
    let values = 1..=MAX_PER_CYCLE;
    let nothing = at(Signals::default());
    let mut read = vec![false; asked.len()];
    // What a signal alone counts, at each value.
    let alone = |s: Signal| -> Vec<u64> { values.clone().map(|v| at(Signals::default().with(s, v))).collect() };
    let asked_alone: Vec<Vec<u64>> = asked.iter().map(|&s| alone(s)).collect();
    for (r, counts) in read.iter_mut().zip(&asked_alone) {
        *r |= counts.iter().any(|&c| c != nothing);
    }
    // Cycles that count only with a pair of signals, probed once more.
    let mut counting: Vec<Signals> = Vec::new();
    for &beside in signals {
        let base = Signals::default().with(beside, 1);
        let at_base = at(base);
        let mine = asked.iter().position(|&s| s == beside);
        for (i, &s) in asked.iter().enumerate().filter(|&(_, &s)| s != beside) {
            for (v, &single) in values.clone().zip(&asked_alone[i]) {
                let both = at(base.with(s, v));
                read[i] |= both != at_base;
                if let Some(m) = mine {
                    read[m] |= both != single;
                }
                if both != 0 && at_base == 0 && single == 0 && counting.len() < PROBED_CYCLES {
                    counting.push(base.with(s, v));
                }
            }
        }
    }
    for &cycle in &counting {
        let was = at(cycle);
        for (r, &s) in read.iter_mut().zip(&asked).filter(|(r, _)| !**r) {
            *r = values.clone().any(|v| cycle.get(s) != u64::from(v) && at(cycle.with(s, v)) != was);
        }
    }
    asked.iter().zip(read).filter(|&(_, r)| r).map(|(&s, _)| s).collect()
}

/// Cycles that count a pair of signals probed again at most: a few per event's
/// unit mask, far more than any needs.
const PROBED_CYCLES: usize = 256;

/// Whether `count` counts a stalled cycle with no signal, and not the same cycle
/// retiring an instruction: an event that counts stalled cycles as such (all of them,
/// or those with no cause of their own, as a mispredicted branch's refill), which
/// every assumed size and timing moves.
pub fn counts_bare_bubbles(count: impl Fn(&Span) -> u64) -> bool {
    let span = |signals: Signals| Span { signals, ..Span::new(1, 0) };
    count(&span(Signals::default())) > 0 && count(&span(Signals::default().with(Signal::Instructions, 1))) == 0
}
