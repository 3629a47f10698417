//! What a generic PMC makes its PMD count, derived when the PMC is written: the
//! event's atoms and type, and the PMC fields every span's count reads (§3.3.1-§3.3.3,
//! Tables 3-5 and 3-6); and what of a span's address the programs read (`Reads`).

use pmukit_arch::montecito::pmu::{self, er_si_l2d};
use pmukit_arch::montecito::registers::{ALL, BANKED, ES, ISM, ISM_PROPER, MESI, PLM, PM, THRESHOLD, UMASK};

use super::cycle::Cycle;
use super::events::{Atom, EventType, MappedEvent};
use super::qualify::Reach;
use super::table::EVENTS;
use super::MontecitoThread;
use crate::machine::montecito::OCCUPANCIES;
use crate::stream::{Signals, Span};

/// A MESI filter that selects every state (Table 3-6: "must be set to b1111").
pub(super) const MESI_ALL: u64 = 0b1111;
/// §3.3.3: "CYCLES_HALTED event can only be monitored in PMD10".
pub(super) const CYCLES_HALTED: u8 = pmu::CYCLES_HALTED as u8;

/// What PMCn selects, derived when the PMC is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Program {
    pub(super) atoms: &'static [Atom],
    /// Resolved type: Active, Causal or Floating (Self Floating resolved by the umask).
    pub(super) ty: EventType,
    /// The most a cycle adds (MD11).
    pub(super) max_inc: u64,
    pub(super) mesi_capable: bool,
    /// §3.3.2: it counts the other thread's events too: .all on a duplicated counter,
    /// or an event that counts as if .all were set (ME23); never on a banked counter.
    pub(super) both_threads: bool,
    /// How qualification reaches it.
    pub(super) reach: Reach,
    /// It counts what the capture units capture.
    pub(super) captures: bool,
    /// It is CPU_OP_CYCLES_HALTED: the one event a halted cycle counts (§3.3.12).
    pub(super) halted: bool,
    /// The PMC's fields the count reads in every span, decoded once at the write.
    pub(super) plm: u64,
    pub(super) pm: bool,
    pub(super) ism_proper: bool,
    pub(super) banked: bool,
    pub(super) mesi: u64,
    pub(super) threshold: u64,
}

impl Program {
    /// What PMCn (`n` in 4..=15) counts with `pmc`, or `None` for nothing; `note` hears
    /// why a programming is undefined.
    pub(super) fn new(n: usize, pmc: u64, mut note: impl FnMut(String)) -> Option<Program> {
        let code = ES.get(pmc) as u8;
        let umask = UMASK.get(pmc);
        if PLM.get(pmc) != 0 && ISM.get(pmc) != ISM_PROPER {
            note(format!("PMC{n}: ism = {:02b}: undefined behaviour (Table 3-5); the monitor counts nothing (§3.3.1)", ISM.get(pmc)));
        }
        if code == CYCLES_HALTED && n != pmu::CYCLES_HALTED_PMD {
            note(format!("PMC{n}: CPU_OP_CYCLES_HALTED outside PMD10 has an undefined count (§3.3.3); PMD{n} counts nothing"));
            return None;
        }
        if BANKED.contains(&n) && er_si_l2d(u64::from(code)) {
            note(format!("PMC{n}: event {code:#04x} (ER/SI/L2D) can only be monitored in PMD4-9 (§3.3.3, §4.8.4); PMD{n} counts nothing"));
            return None;
        }
        let event = mapped_event(code)?;
        let atoms = (event.select)(umask)?;
        let ty = event.resolved_type(umask);
        let reach = Reach::of(code, umask);
        let captures = atoms.iter().any(|a| matches!(a, Atom::Captured(_)));
        let banked = BANKED.contains(&n);
        Some(Program {
            atoms,
            ty,
            max_inc: event.clamp(),
            mesi_capable: event.mesi,
            both_threads: !banked && (ALL.get(pmc) == 1 || event.all),
            reach,
            captures,
            halted: code == CYCLES_HALTED,
            plm: PLM.get(pmc),
            pm: PM.get(pmc) == 1,
            ism_proper: ISM.get(pmc) == ISM_PROPER,
            banked,
            mesi: MESI.get(pmc),
            threshold: THRESHOLD.get(pmc),
        })
    }

    /// The event's value in one cycle, before clamping and thresholding. `mesi` is the
    /// PMC's filter (Table 3-6).
    pub(super) fn value(&self, c: &Cycle, mesi: u64) -> u64 {
        if self.mesi_capable && mesi != MESI_ALL {
            // MD13: a known state counts when its bit is set; an unknown one only with b1111.
            match c.state {
                Some(state) if mesi >> state & 1 == 1 => {}
                _ => return 0,
            }
        }
        self.atoms.iter().map(|a| a.value(c)).sum()
    }
}

/// Whether some generic counter filters by MESI state (MD13) and whether some counts
/// what the capture units capture (MD53): the address class leaves out what no
/// counter reads, so that spans differing only there share the engine's rates.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Reads {
    pub(super) mesi: bool,
    pub(super) captures: bool,
}

impl Reads {
    pub(super) fn of(threads: &[MontecitoThread]) -> Reads {
        let programs = || threads.iter().flat_map(|t| &t.pairs).filter_map(|p| p.program.as_ref());
        Reads { mesi: programs().any(|g| g.mesi_capable && g.mesi != MESI_ALL), captures: programs().any(|g| g.captures) }
    }
}

/// The mapped event with this code, if any.
pub fn mapped_event(code: u8) -> Option<&'static MappedEvent> {
    EVENTS.iter().find(|e| e.code == code)
}

/// Whether event `code` with `umask` reads what the system interface lays over the
/// spans ([`OCCUPANCIES`]): a run whose events none do need not lay them
/// (`MontecitoConfig::occupancies`). Unknown codes and unit masks read nothing.
pub fn reads_occupancies(code: u8, umask: u64) -> bool {
    let atoms = mapped_event(code).and_then(|e| (e.select)(umask)).unwrap_or_default();
    atoms.iter().filter_map(|a| a.chosen()).any(|s| Signals::default().with(s, 1).counts_any(&OCCUPANCIES))
}

/// What event `code` with `umask` counts in a cycle of `span`, on the thread that runs
/// it, with every MESI state and no threshold (the span's own events; for listing what
/// the machine exercises, and for tests).
pub fn per_cycle<const F: usize>(code: u8, umask: u64, span: &Span<F>) -> u64 {
    counter(code, umask)(span)
}

/// [`per_cycle`] of one selection, its atoms looked up once: for asking many spans.
pub fn counter<const F: usize>(code: u8, umask: u64) -> impl Fn(&Span<F>) -> u64 {
    let selected = mapped_event(code).and_then(|e| Some(((e.select)(umask)?, e.clamp())));
    move |span| {
        let Some((atoms, max_inc)) = selected else { return 0 };
        let captured = super::capture::reachable(span);
        let c = Cycle { signals: span.signals.into_family(), write: span.mem.is_some_and(|m| m.write), state: None, captured };
        atoms.iter().map(|a| a.value(&c)).sum::<u64>().min(max_inc)
    }
}
