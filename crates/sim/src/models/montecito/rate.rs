//! What a span makes each generic counter count (§3.3.1-§3.3.3, §4.2.1): the span's
//! facts every counter reads alike, its cycles as the event programs read them, and
//! one counter's per-cycle rate from its program.

use super::cycle::Cycle;
use super::events::{line_state, EventType};
use super::program::Program;
use super::qualify::passes;
use super::{span_cpl, MontecitoThread, THREADS};
use crate::stream::{Signal, Signals, Span, MONTECITO};

/// `Montecito::rate_of` of the counter of thread `t` (`thread`) whose PMC made
/// `program`, in a cycle of the span `cycles` was made of. Inlined into the loop over
/// every counter, where its calls' saving and restoring of registers were a third of
/// its cost.
#[inline(always)]
pub(super) fn program_rate(t: usize, thread: &MontecitoThread, program: &Program, cycles: &SpanCycles) -> u64 {
    let fg = cycles.fg;
    // §3.3.2: banked counters count only in the foreground and ignore .all; some
    // ER events count "as if .all is set" (ME23).
    let (banked, all) = (program.banked, program.both_threads);
    let sees = |owner: usize| if owner == t { !banked || t == fg } else { all };
    // A background thread's counter that sees neither the span's events nor its own
    // floating ones counts nothing: settled before the PMC's privilege fields.
    if t != fg && !all && program.ty != EventType::Floating {
        return 0;
    }
    // MD2: a thread's CPL is its span's while it runs, its PSR.cpl in the background.
    let cpl = if t == fg { cycles.cpl } else { u64::from(thread.cpl()) };
    if !thread.enabled(program, cpl) {
        return 0;
    }
    // §3.3.12: "PAL_LIGHT_HALT freezes event monitoring prior to powering down the
    // processor": a halted cycle counts only CPU_OP_CYCLES_HALTED, "the number of core
    // clock cycles the thread is halted".
    if cycles.halted {
        return u64::from(program.halted);
    }
    let mesi = program.mesi;
    let mut value = 0;
    // The span's own events belong to (or are assigned to) the foreground thread,
    // and are qualified by its tags, as the Causal events credited to it are (MD50).
    let qualified = passes(program.reach, cycles.tags);
    if sees(fg) && qualified {
        value += program.value(&cycles.own, mesi);
    }
    // The background thread's floating events (§4.2.1): Floating ones stay its own;
    // Causal ones are assigned to the foreground thread; Active ones cannot happen.
    let bg = 1 - fg;
    let owner = match program.ty {
        EventType::Floating => Some(bg),
        EventType::Causal => Some(fg),
        _ => None,
    };
    if owner.is_some_and(sees) && (qualified || program.ty == EventType::Floating) {
        let c = Cycle { signals: cycles.background, write: false, state: None, captured: 0 };
        value += program.value(&c, mesi);
    }
    // MD11: never above the event's maximum increment; Table 3-6 threshold.
    let value = value.min(program.max_inc);
    match program.threshold {
        0 => value,
        threshold => u64::from(value > threshold),
    }
}

/// A cycle of a span as every counter's program reads it, made once per span: its
/// thread and privilege level, its qualification tags, the cycle of its own events
/// and that of the background thread's.
pub(super) struct SpanCycles {
    fg: usize,
    cpl: u64,
    tags: u64,
    own: Cycle,
    /// The thread is halted (PAL_HALT_LIGHT) in the span.
    halted: bool,
    /// MD12: a span's `BackgroundMemoryReads` are the other thread's reads, each an
    /// L3 data-read miss.
    background: Signals<MONTECITO>,
}

impl SpanCycles {
    /// `None` for a span of a thread the core lacks: nothing of this core runs. The
    /// captures are the span's whatever the program: only a program that counts
    /// them reads them (`Program::captures`).
    pub(super) fn of<const F: usize>(span: &Span<F>, facts: &SpanFacts) -> Option<SpanCycles> {
        let fg = usize::from(span.thread);
        if fg >= THREADS {
            return None;
        }
        let state = Some(line_state(span.address()));
        let own = Cycle { signals: span.signals.into_family(), write: span.mem.is_some_and(|m| m.write), state, captured: facts.captured };
        let b = span.signals.get(Signal::BackgroundMemoryReads) as u8;
        let background = Signals::default().with(Signal::MemoryReads, b).with(Signal::L3DataReadMisses, b);
        let halted = span.signals.get(Signal::HaltedCycles) > 0;
        Some(SpanCycles { fg, cpl: span_cpl(span.privilege), tags: facts.tags, own, halted, background })
    }
}

/// What a span gives every counter alike (`Montecito::facts`).
pub(super) struct SpanFacts {
    pub(super) tags: u64,
    pub(super) captured: u8,
}

impl SpanFacts {
    /// The facts and the line's MESI state as an address class: the state in bits
    /// 1:0, the tags in 6:2, the captures from bit 7.
    pub(super) fn class(&self, state: u64) -> u64 {
        state | self.tags << 2 | u64::from(self.captured) << 7
    }

    /// The facts an address class holds. Its MESI state only keeps spans of different
    /// states from sharing a cached rate: the rate reads the state from the address.
    pub(super) fn from_class(class: u64) -> SpanFacts {
        SpanFacts { tags: class >> 2 & 0x1f, captured: (class >> 7) as u8 }
    }
}
