//! Register-level model of the SPARC T4 strand performance counters (SPARC T4
//! Supplement, chapter 10, §10.1-§10.3).
//!
//! A [`T4Core`] holds the strands (virtual processors) of one core, each a [`T4Strand`]
//! with PCR0-3 and PIC0-3. Software reaches the registers only through
//! [`T4Core::ldxa`] and [`T4Core::stxa`], the alternate-space loads and stores of
//! §10.2 and §10.3, each executed by one strand in one privilege mode. The engine
//! ([`crate::engine`]) drives the counters through [`Counting`]; overflow traps are read
//! with [`T4Core::take_trap`] and [`T4Strand::pending_traps`]. `docs/t4-model.md`
//! describes the model, its signal mapping and every reading of the spec it makes.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic))]

use pmukit_arch::sparc::t4::{self, counter_va, HT, MASK, NTC, OV, PCR, PCR_ASI, PIC, PICNHT, PICNPT, PIC_ASI, SL, ST, TOE, UT};
use pmukit_arch::Catalog;
use pmukit_core::pmu::Pmu;
use thiserror::Error;

use crate::engine::{Counters, Counting};
use crate::models::Reports;
use crate::stream::{Privilege, Signal, Signals, Span, SPARC};

mod events;

pub use events::{counter, per_cycle};
use events::{group, groups, Group, Program};

/// §10.1 item 1: four PCR/PIC pairs per virtual processor.
pub const PICS: usize = 4;
/// Strands of a SPARC T4 core; [`T4Core::new`] takes its argument as 1..=8.
pub const STRANDS_PER_CORE: usize = 8;
/// PCR.sl selects one of 32 event groups (TABLE 10-1).
pub(super) const GROUPS: usize = SL.max() as usize + 1;

/// Programming Note (sl 28): with the PIC at -1, -2 or -3 and PCR.mask 01, 02 or 03,
/// "the PIC increments within two cycles after the PCR is set".
const COMMIT_SL: u64 = 28;
/// The two cycles of that window.
const COMMIT_WINDOW_CYCLES: u64 = 2;
/// Increments landing at the end of the window: enough to wrap from -3, the edge of
/// the range the note warns about.
const COMMIT_LATE_INCREMENTS: u32 = 3;

/// A trap the model raises. `ldxa`/`stxa` return the access traps; the performance
/// event traps are read with [`T4Core::take_trap`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum Trap {
    /// §10.1 item 4: PCRs are reachable in hyperprivileged mode only; TABLE 10-1 and
    /// §10.3: a PIC access that picnht/picnpt forbid.
    #[error("privileged_action")]
    PrivilegedAction,
    /// An ASI other than 0x64/0xB0, or a VA other than 0x00/0x08/0x10/0x18. The spec
    /// names no trap for these; data_access_exception is our choice.
    #[error("data_access_exception")]
    DataAccessException,
    /// §10.3: a Precise group's PIC overflowed with toe = 1, ht = 0, outside
    /// hyperprivileged mode. PCR.ntc tells the handler whether to DONE or RETRY.
    #[error("precise_performance_event (PIC{pic})")]
    PrecisePerformanceEvent { pic: usize },
    /// §10.3: ov AND toe on an asynchronous group; pending until software clears ov.
    #[error("disrupting_performance_event (PIC{pic})")]
    DisruptingPerformanceEvent { pic: usize },
    /// Not a SPARC trap: the caller named a strand this core does not have.
    #[error("strand {strand} does not exist on this core")]
    NoSuchStrand { strand: usize },
}

/// TABLE 10-1 ut/st/ht: does the PCR count events in `mode`? CPL 1 and 2, which SPARC
/// does not have, count as privileged.
fn counts_in(pcr: u64, mode: Privilege) -> bool {
    let enable = match mode {
        Privilege::Hyper => HT,
        Privilege::Cpl3 => UT,
        _ => ST,
    };
    enable.get(pcr) == 1
}

/// Programming Note (sl 28): does this PCR value start the late-increment window?
fn opens_commit_window(pcr: u64, group: &Group) -> bool {
    let mask = MASK.get(pcr) & !group.ignored;
    SL.get(pcr) == COMMIT_SL && (1..=3).contains(&mask) && [UT, ST, HT].iter().any(|f| f.get(pcr) == 1)
}

/// An `ldxa`/`stxa` as the one-cycle instruction it is: an SPR ring op (footnote 8:
/// LDXA_0X64, LDXA_0XB0, STXA_0X64, STXA_0XB0) and a next-to-commit instruction
/// (footnote 1: a non-translating alternate-space access).
fn access_span(strand: usize, mode: Privilege) -> Span<SPARC> {
    let signals = Signals::default().with(Signal::Instructions, 1).with(Signal::SprRingOps, 1).with(Signal::NextToCommit, 1);
    Span { thread: strand as u8, privilege: mode, signals, ..Span::new(1, 0) }
}

/// A register `ldxa`/`stxa` reach.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reg {
    Pcr(usize),
    Pic(usize),
}

/// One PCR/PIC pair of a strand, with what the model derives from the PCR.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Counter {
    pcr: u64,
    pic: u32,
    program: Program,
    precise_pending: bool,
    /// Cycles left in the PCR's sl 28 window, when one is open.
    commit_window: Option<u64>,
}

impl Counter {
    /// TABLE 10-1 and 10-3: both registers reset to zero.
    fn new() -> Counter {
        Counter { pcr: PCR.reset, pic: PIC.reset as u32, program: Program::default(), precise_pending: false, commit_window: None }
    }

    /// Per-cycle increment of the PIC of strand `strand` in a cycle of `span`, the
    /// strand being in `mode` between its own spans.
    fn rate<const F: usize>(&self, span: &Span<F>, strand: usize, mode: Privilege) -> u64 {
        self.program.per_cycle(span, strand, mode, |m| counts_in(self.pcr, m))
    }

    /// TABLE 10-3: the PIC is a 32-bit counter. Returns whether it wrapped.
    fn advance(&mut self, by: u64) -> bool {
        let total = u64::from(self.pic) + by;
        self.pic = total as u32;
        total >> 32 != 0
    }

    /// §10.2, §10.3: the PIC wrapped from 2^32 - 1 to 0. Sets ov and raises the trap toe
    /// asks for; returns whether one was raised. `hpriv`: the overflow happened in
    /// hyperprivileged mode.
    fn overflow(&mut self, hpriv: bool) -> bool {
        self.pcr = OV.set(self.pcr, 1);
        if TOE.get(self.pcr) == 0 {
            return false;
        }
        if !self.program.precise {
            return true;
        }
        // Footnote 2, §10.3: no precise trap in hyperprivileged mode ("the trap is
        // lost") nor while ht = 1.
        let delivered = !hpriv && HT.get(self.pcr) == 0;
        self.precise_pending |= delivered;
        delivered
    }

    /// §10.2: a PCR write updates every field but ntc and ov, which it can only clear.
    fn write_pcr(&mut self, value: u64, groups: &[Group; GROUPS]) {
        let pcr = PCR.apply_write(self.pcr, value).stored;
        let group = group(groups, SL.get(pcr));
        self.pcr = pcr;
        self.program = Program::new(SL.get(pcr), MASK.get(pcr), &group);
        self.commit_window = opens_commit_window(pcr, &group).then_some(COMMIT_WINDOW_CYCLES);
    }

    /// Programming Note (sl 28): a PCR write inside the window: the increments land
    /// now, and the write overwrites the ov they were about to set.
    fn race_commit_window(&mut self) {
        if self.commit_window.take().is_some() {
            self.pic = self.pic.wrapping_add(COMMIT_LATE_INCREMENTS);
        }
    }

    /// `cycles` cycles pass: a window that ends lands its increments. They belong to
    /// the drain after a hyperprivileged PCR write, so they raise no precise trap; a
    /// disrupting one is taken at the next stop.
    fn tick(&mut self, cycles: u64) {
        match self.commit_window {
            Some(left) if left > cycles => self.commit_window = Some(left - cycles),
            Some(_) => {
                self.commit_window = None;
                if self.advance(u64::from(COMMIT_LATE_INCREMENTS)) {
                    self.overflow(true);
                }
            }
            None => {}
        }
    }
}

/// One virtual processor: PCR0-3, PIC0-3, its mode and its pending precise traps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct T4Strand {
    /// PCRn/PICn at index n.
    counters: [Counter; PICS],
    /// The mode the strand is in while the stream runs other strands' spans: that of
    /// its last `ldxa`/`stxa`, or of [`T4Core::set_mode`]. Hyperprivileged at reset.
    mode: Privilege,
}

impl T4Strand {
    /// Every register at its reset value, in hyperprivileged mode.
    fn new() -> T4Strand {
        T4Strand { counters: std::array::from_fn(|_| Counter::new()), mode: Privilege::Hyper }
    }

    /// The mode the strand is in between its own spans.
    pub fn mode(&self) -> Privilege {
        self.mode
    }

    /// Traps waiting for the hypervisor: precise ones (until taken) and disrupting ones
    /// (while PCRn.ov AND PCRn.toe), in PIC order, precise first.
    pub fn pending_traps(&self) -> Vec<Trap> {
        let precise = self.counters.iter().enumerate().filter(|(_, c)| c.precise_pending);
        precise.map(|(pic, _)| Trap::PrecisePerformanceEvent { pic }).chain(self.disrupting()).collect()
    }

    /// TABLE 10-1 toe: "Hardware ANDs the value of toe with ov to produce a trap";
    /// asynchronous groups trap as disrupting_performance_event for as long as both are
    /// set (Programming Note: the handler must clear ov).
    fn disrupting(&self) -> impl Iterator<Item = Trap> + '_ {
        self.counters
            .iter()
            .enumerate()
            .filter(|(_, c)| OV.get(c.pcr) == 1 && TOE.get(c.pcr) == 1 && !c.program.precise)
            .map(|(pic, _)| Trap::DisruptingPerformanceEvent { pic })
    }

    /// Precise traps first (they belong to an instruction), then disrupting ones, which
    /// stay pending.
    fn take_trap(&mut self) -> Option<Trap> {
        if let Some((pic, c)) = self.counters.iter_mut().enumerate().find(|(_, c)| c.precise_pending) {
            c.precise_pending = false;
            return Some(Trap::PrecisePerformanceEvent { pic });
        }
        self.disrupting().next()
    }

    /// Per-cycle increment of PICn of strand `strand` (this one) in a cycle of `span`.
    /// Footnote 13: subevents that cross strands count in other strands' cycles, by
    /// this strand's own mode, and so do the core's cycles in every primary span.
    fn rate<const F: usize>(&self, n: usize, span: &Span<F>, strand: usize) -> u64 {
        self.counters.get(n).map_or(0, |c| c.rate(span, strand, self.mode))
    }
}

/// The strands of one SPARC T4 core, with the event table in force.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct T4Core {
    strands: Vec<T4Strand>,
    groups: [Group; GROUPS],
    /// Counters (strand × 4 + PIC) that wrapped in the engine step under way; the
    /// step's span, seen in `executed`, says whether the instruction was next-to-commit.
    wrapped: Vec<usize>,
    /// Bit `strand × 4 + n` for each PIC whose events count in other strands' spans
    /// (cross-strand subevents, the core's cycles): with its own strand's PICs, the only ones
    /// a span can move. Kept by `write_pcr`, the one place programs change.
    crossing: u64,
    /// Whether a PIC may have a commit window open (sl 28): set by `write_pcr`, cleared
    /// by `tick` once none has. Only then does the passing of cycles concern the PICs,
    /// and `tick` need not visit every one in each span.
    windows: bool,
    unpredictable: Reports,
}

impl Default for T4Core {
    fn default() -> Self {
        T4Core::new(STRANDS_PER_CORE)
    }
}

impl T4Core {
    /// A core in its reset state with `strands` strands (taken as 1..=8), counting by
    /// the built-in sparc-t4 event table.
    pub fn new(strands: usize) -> T4Core {
        // The built-in catalog always has sparc-t4 (`pmukit_arch::FAMILIES` lists it);
        // without it every group would be undefined and the core would count nothing.
        let groups = Catalog::builtin().pmu(t4::FAMILY).map_or([Group::default(); GROUPS], groups);
        T4Core::with_groups(groups, strands)
    }

    /// A core counting by `pmu`'s event table (for example one loaded with
    /// `Catalog::load_events_file`): its precise, cross_strand and ignored-bit data.
    pub fn with_pmu(pmu: &Pmu, strands: usize) -> T4Core {
        T4Core::with_groups(groups(pmu), strands)
    }

    fn with_groups(groups: [Group; GROUPS], strands: usize) -> T4Core {
        let n = strands.clamp(1, STRANDS_PER_CORE);
        T4Core {
            strands: vec![T4Strand::new(); n],
            groups,
            wrapped: Vec::new(),
            crossing: 0,
            windows: false,
            unpredictable: Reports::default(),
        }
    }

    pub fn strands(&self) -> usize {
        self.strands.len()
    }

    pub fn strand(&self, strand: usize) -> Option<&T4Strand> {
        self.strands.get(strand)
    }

    /// Put a strand in `mode` between its own spans, as software running on it would.
    pub fn set_mode(&mut self, strand: usize, mode: Privilege) -> Result<(), Trap> {
        self.strands.get_mut(strand).ok_or(Trap::NoSuchStrand { strand })?.mode = mode;
        Ok(())
    }

    /// Deliver the next pending performance trap of a strand: a precise one is
    /// consumed; a disrupting one stays pending until software clears PCRn.ov, so
    /// taking it again without clearing ov delivers it again.
    pub fn take_trap(&mut self, strand: usize) -> Option<Trap> {
        self.strands.get_mut(strand)?.take_trap()
    }

    /// Every PCR programming the spec leaves undefined (reserved sl values), in order.
    pub fn unpredictable(&self) -> &Reports {
        &self.unpredictable
    }

    /// LDXA from ASI `asi`, VA `va`, executed by `strand` in `mode`. Returns the value
    /// before the load's own event is counted (it counts when it commits).
    pub fn ldxa(&mut self, strand: usize, asi: u8, va: u64, mode: Privilege) -> Result<u64, Trap> {
        let reg = self.decode(strand, asi, va, mode)?;
        let value = match reg {
            Reg::Pcr(n) => self.counter(strand, n).map(|c| PCR.read(c.pcr)),
            Reg::Pic(n) => self.counter(strand, n).map(|c| u64::from(c.pic)),
        };
        // `decode` found the register; a miss would be decode's own refusal.
        let value = value.ok_or(Trap::DataAccessException)?;
        self.retire(&access_span(strand, mode), None);
        self.tick(1);
        Ok(value)
    }

    /// STXA of `value` to ASI `asi`, VA `va`, executed by `strand` in `mode`. The store
    /// is itself an instruction (footnote 8: STXA_0X64 and STXA_0XB0 are SPR ring ops),
    /// counted under the configuration in force before the write, except that a PCR
    /// write changes its own PIC's asynchronous count at once (Programming Note: "STXA
    /// %pcr ... affect an asynchronous count immediately").
    pub fn stxa(&mut self, strand: usize, asi: u8, va: u64, value: u64, mode: Privilege) -> Result<(), Trap> {
        let reg = self.decode(strand, asi, va, mode)?;
        let span = access_span(strand, mode);
        match reg {
            Reg::Pcr(n) => self.store_pcr(&span, n, value),
            Reg::Pic(n) => self.store_pic(&span, n, value),
        }
        Ok(())
    }

    /// A PCRn write by the access `span`, with the events of its own instruction.
    /// `decode` checked the strand and `n`, so the lookups here always hit.
    fn store_pcr<const F: usize>(&mut self, span: &Span<F>, n: usize, value: u64) {
        let strand = usize::from(span.thread);
        // PCRn's precise (instruction) events count the write at retirement, by the old
        // setting; its asynchronous ones see the new setting at once, below.
        let asynchronous = self.counter(strand, n).is_some_and(|c| !c.program.precise);
        let wrapped = self.retire(span, asynchronous.then_some(n));
        if let Some(c) = self.counter_mut(strand, n) {
            c.race_commit_window();
        }
        self.tick(1);
        self.write_pcr(strand, n, value);
        let Some(s) = self.strands.get_mut(strand) else { return };
        let mode = s.mode;
        let Some(c) = s.counters.get_mut(n) else { return };
        let now = !c.program.precise && c.advance(c.rate(span, strand, mode));
        // Programming Note after TABLE 10-1: the write's own overflow lands after the
        // write, so hardware re-writes ov (and ntc) to one, and the new setting decides
        // the trap. PCR writes run in hyperprivileged mode.
        if wrapped.contains(&n) || now {
            c.pcr = NTC.set(c.pcr, 1);
            c.overflow(true);
        }
    }

    /// A PICn write by the access `span`: the instruction counts, then the PIC takes the
    /// low 32 bits (TABLE 10-3: bits 63:32 are reserved).
    fn store_pic<const F: usize>(&mut self, span: &Span<F>, n: usize, value: u64) {
        self.retire(span, None);
        self.tick(1);
        // `decode` checked the strand and `n`.
        if let Some(c) = self.counter_mut(usize::from(span.thread), n) {
            c.pic = PIC.apply_write(u64::from(c.pic), value).stored as u32;
        }
    }

    /// The register an access reaches, or the trap it takes. Nothing changes here.
    fn decode(&self, strand: usize, asi: u8, va: u64, mode: Privilege) -> Result<Reg, Trap> {
        let s = self.strands.get(strand).ok_or(Trap::NoSuchStrand { strand })?;
        if asi != PCR_ASI && asi != PIC_ASI {
            return Err(Trap::DataAccessException);
        }
        // §10.1 item 4: the PCRs' ASI is hyperprivileged; its trap comes before the
        // VA is looked at.
        if asi == PCR_ASI && mode != Privilege::Hyper {
            return Err(Trap::PrivilegedAction);
        }
        let (n, c) = s.counters.iter().enumerate().find(|&(n, _)| counter_va(n) == va).ok_or(Trap::DataAccessException)?;
        if asi == PCR_ASI {
            return Ok(Reg::Pcr(n));
        }
        // TABLE 10-1 picnht/picnpt, §10.3.
        let pcr = c.pcr;
        let allowed = match mode {
            Privilege::Hyper => true,
            Privilege::Cpl3 => PICNHT.get(pcr) == 0 && PICNPT.get(pcr) == 0,
            _ => PICNHT.get(pcr) == 0,
        };
        if allowed {
            Ok(Reg::Pic(n))
        } else {
            Err(Trap::PrivilegedAction)
        }
    }

    fn write_pcr(&mut self, strand: usize, n: usize, value: u64) {
        let Some(c) = self.strands.get_mut(strand).and_then(|s| s.counters.get_mut(n)) else { return };
        c.write_pcr(value, &self.groups);
        self.windows |= c.commit_window.is_some();
        let bit = 1 << (strand * PICS + n);
        self.crossing = if c.program.reaches_others() { self.crossing | bit } else { self.crossing & !bit };
        let sl = SL.get(c.pcr);
        if sl != 0 && !group(&self.groups, sl).defined {
            self.unpredictable
                .push(format!("strand {strand} PCR{n}: sl {sl} is reserved or undocumented (TABLE 10-2); PIC{n} counts nothing"));
        }
    }

    /// Count an access (`access_span`) on every counter but PIC `skip` of its strand;
    /// the strand is in the access's mode from now on. Returns the PICs of the strand
    /// it wrapped.
    fn retire<const F: usize>(&mut self, span: &Span<F>, skip: Option<usize>) -> Vec<usize> {
        let strand = usize::from(span.thread);
        if let Some(s) = self.strands.get_mut(strand) {
            s.mode = span.privilege;
        }
        for i in 0..self.counters() {
            let (s, n) = (i / PICS, i % PICS);
            let r = self.rate(i, span);
            if r > 0 && (s, Some(n)) != (strand, skip) {
                // Each strand counts by its own mode, the access's for this one (footnote 13).
                let hpriv = self.strands.get(s).is_some_and(|s| s.mode == Privilege::Hyper);
                self.count(s, n, r, hpriv);
            }
        }
        let wrapped = std::mem::take(&mut self.wrapped);
        self.mark_next_to_commit(span, &wrapped);
        wrapped.into_iter().filter(|i| i / PICS == strand).map(|i| i % PICS).collect()
    }

    /// Add `by` to PICn of strand `s`; returns whether an overflow raised a trap.
    fn count(&mut self, s: usize, n: usize, by: u64, hpriv: bool) -> bool {
        let Some(c) = self.strands.get_mut(s).and_then(|s| s.counters.get_mut(n)) else { return false };
        if !c.advance(by) {
            return false;
        }
        self.wrapped.push(s * PICS + n);
        c.overflow(hpriv)
    }

    /// PCRn/PICn of strand `s`, if the core has them.
    fn counter(&self, s: usize, n: usize) -> Option<&Counter> {
        self.strands.get(s)?.counters.get(n)
    }

    fn counter_mut(&mut self, s: usize, n: usize) -> Option<&mut Counter> {
        self.strands.get_mut(s)?.counters.get_mut(n)
    }

    /// `cycles` core cycles pass (sl 28 windows run out).
    fn tick(&mut self, cycles: u64) {
        if self.windows {
            let counters = self.strands.iter_mut().flat_map(|s| &mut s.counters);
            self.windows = counters.fold(false, |open, c| {
                c.tick(cycles);
                open | c.commit_window.is_some()
            });
        }
    }

    /// TABLE 10-1 ntc and footnote 1: counters that wrapped in a cycle that carries a
    /// next-to-commit instruction set ntc with ov.
    fn mark_next_to_commit<const F: usize>(&mut self, span: &Span<F>, wrapped: &[usize]) {
        if span.signals.get(Signal::NextToCommit) == 0 {
            return;
        }
        for &i in wrapped {
            if let Some(c) = self.counter_mut(i / PICS, i % PICS) {
                c.pcr = NTC.set(c.pcr, 1);
            }
        }
    }
}

/// Virtual counter `strand × 4 + n` is PICn of that strand.
impl Counters for T4Core {
    fn counters(&self) -> usize {
        self.strands.len() * PICS
    }

    fn headroom(&self, i: usize) -> u64 {
        (1u64 << 32) - u64::from(self.counter(i / PICS, i % PICS).map_or(0, |c| c.pic))
    }

    fn add(&mut self, i: usize, n: u64) -> bool {
        // A count with ht = 0 happened outside hyperprivileged mode (`counts_in`), and
        // with ht = 1 `overflow` raises no precise trap anyway: hpriv adds nothing here.
        self.count(i / PICS, i % PICS, n, false)
    }
}

impl<const F: usize> Counting<F> for T4Core {
    fn rate(&self, i: usize, span: &Span<F>) -> u64 {
        let s = i / PICS;
        self.strands.get(s).map_or(0, |strand| strand.rate(i % PICS, span, s))
    }

    /// [`Counting::rate`] of only the PICs a span can move: its own strand's, and the
    /// others' whose events cross strands (`crossing`), in counter order.
    fn each_rate(&self, span: &Span<F>, _class: u64, f: &mut dyn FnMut(usize, u64)) {
        // A span of a strand the core does not have moves only crossing PICs.
        let own = 0b1111u64.checked_shl(u32::from(span.thread) * PICS as u32).unwrap_or(0);
        let movable = self.crossing | own;
        let mut bits = movable & u64::MAX.checked_shr(64 - (self.strands.len() * PICS) as u32).unwrap_or(u64::MAX);
        while bits != 0 {
            let i = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            let Some(strand) = self.strands.get(i / PICS) else { break };
            let r = strand.counters.get(i % PICS).map_or(0, |c| c.rate(span, i / PICS, strand.mode));
            if r > 0 {
                f(i, r);
            }
        }
    }

    fn executed(&mut self, span: &Span<F>, cycles: u64, _iteration: u64) {
        let wrapped = std::mem::take(&mut self.wrapped);
        self.mark_next_to_commit(span, &wrapped);
        // An overlay's cycles are its primary's: they pass once.
        if !span.overlay {
            self.tick(cycles);
        }
    }

    /// [`Counting::executed`] for each span, which does nothing while no counter has
    /// wrapped in the step under way and no commit window is open: most blocks, each
    /// of whose spans the engine would otherwise visit.
    fn iterated(&mut self, body: &[Span<F>], k: u64, from: u64) {
        if self.wrapped.is_empty() && !self.windows {
            return;
        }
        for s in body {
            self.executed(s, s.cycles * k, from + k - 1);
        }
    }
}
