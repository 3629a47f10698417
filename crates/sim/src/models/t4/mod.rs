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

use pmukit_arch::sparc::t4::{self, counter_va, HT, MASK, NTC, OV, PCR, PCR_ASI, PIC, PICNHT, PICNPT, PIC_ASI, SL, ST, TOE, UT};
use pmukit_arch::Catalog;
use pmukit_core::pmu::Pmu;
use thiserror::Error;

use crate::engine::Counting;
use crate::models::Reports;
use crate::stream::{Privilege, Signal, Signals, Span};

mod events;

pub use events::per_cycle;
use events::{groups, Group, Program};

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
fn access_span(strand: usize, mode: Privilege) -> Span {
    let signals = Signals::default().with(Signal::Instructions, 1).with(Signal::SprRingOps, 1).with(Signal::NextToCommit, 1);
    Span { thread: strand as u8, privilege: mode, signals, ..Span::new(1, 0) }
}

/// A register `ldxa`/`stxa` reach.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reg {
    Pcr(usize),
    Pic(usize),
}

/// One virtual processor: PCR0-3, PIC0-3, its mode and its pending precise traps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct T4Strand {
    pcr: [u64; PICS],
    pic: [u32; PICS],
    programs: [Program; PICS],
    /// The mode the strand is in while the stream runs other strands' spans: that of
    /// its last `ldxa`/`stxa`, or of [`T4Core::set_mode`]. Hyperprivileged at reset.
    mode: Privilege,
    precise_pending: [bool; PICS],
    /// Cycles left in each PCR's sl 28 window, when one is open.
    commit_window: [Option<u64>; PICS],
}

impl T4Strand {
    /// TABLE 10-1 and 10-3: every register resets to zero.
    fn new() -> T4Strand {
        T4Strand {
            pcr: [PCR.reset; PICS],
            pic: [PIC.reset as u32; PICS],
            programs: Default::default(),
            mode: Privilege::Hyper,
            precise_pending: [false; PICS],
            commit_window: [None; PICS],
        }
    }

    /// The mode the strand is in between its own spans.
    pub fn mode(&self) -> Privilege {
        self.mode
    }

    /// Traps waiting for the hypervisor: precise ones (until taken) and disrupting ones
    /// (while PCRn.ov AND PCRn.toe), in PIC order, precise first.
    pub fn pending_traps(&self) -> Vec<Trap> {
        let precise = (0..PICS).filter(|&n| self.precise_pending[n]).map(|pic| Trap::PrecisePerformanceEvent { pic });
        precise.chain(self.disrupting()).collect()
    }

    /// TABLE 10-1 toe: "Hardware ANDs the value of toe with ov to produce a trap";
    /// asynchronous groups trap as disrupting_performance_event for as long as both are
    /// set (Programming Note: the handler must clear ov).
    fn disrupting(&self) -> impl Iterator<Item = Trap> + '_ {
        (0..PICS)
            .filter(|&n| OV.get(self.pcr[n]) == 1 && TOE.get(self.pcr[n]) == 1 && !self.programs[n].precise)
            .map(|pic| Trap::DisruptingPerformanceEvent { pic })
    }

    /// Precise traps first (they belong to an instruction), then disrupting ones, which
    /// stay pending.
    fn take_trap(&mut self) -> Option<Trap> {
        if let Some(n) = self.precise_pending.iter().position(|&p| p) {
            self.precise_pending[n] = false;
            return Some(Trap::PrecisePerformanceEvent { pic: n });
        }
        self.disrupting().next()
    }

    /// Per-cycle increment of PICn of strand `strand` (this one) in a cycle of `span`.
    /// Footnote 13: subevents that cross strands count in other strands' cycles, by
    /// this strand's own mode; so does sel-0-ready, this strand waiting (MSP1).
    fn rate(&self, n: usize, span: &Span, strand: usize) -> u64 {
        let program = &self.programs[n];
        let own = usize::from(span.thread) == strand;
        let (atoms, mode) = if own { (&program.own, span.privilege) } else { (&program.shared, self.mode) };
        if atoms.is_empty() || !counts_in(self.pcr[n], mode) {
            return 0;
        }
        atoms.iter().map(|a| a.per_cycle(span, strand)).sum()
    }

    /// TABLE 10-3: PICn is a 32-bit counter. Returns whether it wrapped.
    fn advance(&mut self, n: usize, by: u64) -> bool {
        let total = u64::from(self.pic[n]) + by;
        self.pic[n] = total as u32;
        total >> 32 != 0
    }

    /// §10.2, §10.3: PICn wrapped from 2^32 - 1 to 0. Sets ov and raises the trap toe
    /// asks for; returns whether one was raised. `hpriv`: the overflow happened in
    /// hyperprivileged mode.
    fn overflow(&mut self, n: usize, hpriv: bool) -> bool {
        self.pcr[n] = OV.set(self.pcr[n], 1);
        if TOE.get(self.pcr[n]) == 0 {
            return false;
        }
        if !self.programs[n].precise {
            return true;
        }
        // Footnote 2, §10.3: no precise trap in hyperprivileged mode ("the trap is
        // lost") nor while ht = 1.
        let delivered = !hpriv && HT.get(self.pcr[n]) == 0;
        self.precise_pending[n] |= delivered;
        delivered
    }

    /// §10.2: a PCR write updates every field but ntc and ov, which it can only clear.
    fn write_pcr(&mut self, n: usize, value: u64, groups: &[Group; GROUPS]) {
        let pcr = PCR.apply_write(self.pcr[n], value).stored;
        let group = &groups[SL.get(pcr) as usize];
        self.pcr[n] = pcr;
        self.programs[n] = Program::new(SL.get(pcr), MASK.get(pcr), group);
        self.commit_window[n] = opens_commit_window(pcr, group).then_some(COMMIT_WINDOW_CYCLES);
    }

    /// Programming Note (sl 28): a PCR write inside the window: the increments land
    /// now, and the write overwrites the ov they were about to set.
    fn race_commit_window(&mut self, n: usize) {
        if self.commit_window[n].take().is_some() {
            self.pic[n] = self.pic[n].wrapping_add(COMMIT_LATE_INCREMENTS);
        }
    }

    /// `cycles` cycles pass: windows that end land their increments. They belong to
    /// the drain after a hyperprivileged PCR write, so they raise no precise trap; a
    /// disrupting one is taken at the next stop.
    fn tick(&mut self, cycles: u64) {
        for n in 0..PICS {
            match self.commit_window[n] {
                Some(left) if left > cycles => self.commit_window[n] = Some(left - cycles),
                Some(_) => {
                    self.commit_window[n] = None;
                    if self.advance(n, u64::from(COMMIT_LATE_INCREMENTS)) {
                        self.overflow(n, true);
                    }
                }
                None => {}
            }
        }
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
        let catalog = Catalog::builtin();
        T4Core::with_pmu(catalog.pmu(t4::FAMILY).expect("sparc-t4 is a built-in PMU"), strands)
    }

    /// A core counting by `pmu`'s event table (for example one loaded with
    /// `Catalog::load_events_file`): its precise, cross_strand and ignored-bit data.
    pub fn with_pmu(pmu: &Pmu, strands: usize) -> T4Core {
        let n = strands.clamp(1, STRANDS_PER_CORE);
        T4Core { strands: vec![T4Strand::new(); n], groups: groups(pmu), wrapped: Vec::new(), unpredictable: Reports::default() }
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
        let s = &self.strands[strand];
        let value = match reg {
            Reg::Pcr(n) => PCR.read(s.pcr[n]),
            Reg::Pic(n) => u64::from(s.pic[n]),
        };
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
    fn store_pcr(&mut self, span: &Span, n: usize, value: u64) {
        let strand = usize::from(span.thread);
        // PCRn's precise (instruction) events count the write at retirement, by the old
        // setting; its asynchronous ones see the new setting at once, below.
        let asynchronous = !self.strands[strand].programs[n].precise;
        let wrapped = self.retire(span, asynchronous.then_some(n));
        self.strands[strand].race_commit_window(n);
        self.tick(1);
        self.write_pcr(strand, n, value);
        let s = &mut self.strands[strand];
        let now = !s.programs[n].precise && s.advance(n, s.rate(n, span, strand));
        // Programming Note after TABLE 10-1: the write's own overflow lands after the
        // write, so hardware re-writes ov (and ntc) to one, and the new setting decides
        // the trap. PCR writes run in hyperprivileged mode.
        if wrapped.contains(&n) || now {
            s.pcr[n] = NTC.set(s.pcr[n], 1);
            s.overflow(n, true);
        }
    }

    /// A PICn write by the access `span`: the instruction counts, then the PIC takes the
    /// low 32 bits (TABLE 10-3: bits 63:32 are reserved).
    fn store_pic(&mut self, span: &Span, n: usize, value: u64) {
        self.retire(span, None);
        self.tick(1);
        let s = &mut self.strands[usize::from(span.thread)];
        s.pic[n] = PIC.apply_write(u64::from(s.pic[n]), value).stored as u32;
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
        let n = (0..PICS).find(|&n| counter_va(n) == va).ok_or(Trap::DataAccessException)?;
        if asi == PCR_ASI {
            return Ok(Reg::Pcr(n));
        }
        // TABLE 10-1 picnht/picnpt, §10.3.
        let pcr = s.pcr[n];
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
        self.strands[strand].write_pcr(n, value, &self.groups);
        let sl = SL.get(self.strands[strand].pcr[n]);
        if sl != 0 && !self.groups[sl as usize].defined {
            self.unpredictable
                .push(format!("strand {strand} PCR{n}: sl {sl} is reserved or undocumented (TABLE 10-2); PIC{n} counts nothing"));
        }
    }

    /// Count an access (`access_span`) on every counter but PIC `skip` of its strand;
    /// the strand is in the access's mode from now on. Returns the PICs of the strand
    /// it wrapped.
    fn retire(&mut self, span: &Span, skip: Option<usize>) -> Vec<usize> {
        let strand = usize::from(span.thread);
        self.strands[strand].mode = span.privilege;
        for i in 0..self.counters() {
            let (s, n) = (i / PICS, i % PICS);
            let r = self.rate(i, span);
            if r > 0 && (s, Some(n)) != (strand, skip) {
                // Each strand counts by its own mode, the access's for this one (footnote 13).
                let hpriv = self.strands[s].mode == Privilege::Hyper;
                self.count(s, n, r, hpriv);
            }
        }
        let wrapped = std::mem::take(&mut self.wrapped);
        self.mark_next_to_commit(span, &wrapped);
        wrapped.into_iter().filter(|i| i / PICS == strand).map(|i| i % PICS).collect()
    }

    /// Add `by` to PICn of strand `s`; returns whether an overflow raised a trap.
    fn count(&mut self, s: usize, n: usize, by: u64, hpriv: bool) -> bool {
        let strand = &mut self.strands[s];
        if !strand.advance(n, by) {
            return false;
        }
        self.wrapped.push(s * PICS + n);
        strand.overflow(n, hpriv)
    }

    /// `cycles` core cycles pass (sl 28 windows run out).
    fn tick(&mut self, cycles: u64) {
        self.strands.iter_mut().for_each(|s| s.tick(cycles));
    }

    /// TABLE 10-1 ntc and footnote 1: counters that wrapped in a cycle that carries a
    /// next-to-commit instruction set ntc with ov.
    fn mark_next_to_commit(&mut self, span: &Span, wrapped: &[usize]) {
        if span.signals.get(Signal::NextToCommit) == 0 {
            return;
        }
        for &i in wrapped {
            let pcr = &mut self.strands[i / PICS].pcr[i % PICS];
            *pcr = NTC.set(*pcr, 1);
        }
    }
}

/// Virtual counter `strand × 4 + n` is PICn of that strand.
impl Counting for T4Core {
    fn counters(&self) -> usize {
        self.strands.len() * PICS
    }

    fn rate(&self, i: usize, span: &Span) -> u64 {
        let s = i / PICS;
        self.strands[s].rate(i % PICS, span, s)
    }

    fn headroom(&self, i: usize) -> u64 {
        (1u64 << 32) - u64::from(self.strands[i / PICS].pic[i % PICS])
    }

    fn add(&mut self, i: usize, n: u64) -> bool {
        // A count with ht = 0 happened outside hyperprivileged mode (`counts_in`), and
        // with ht = 1 `overflow` raises no precise trap anyway: hpriv adds nothing here.
        self.count(i / PICS, i % PICS, n, false)
    }

    fn executed(&mut self, span: &Span, cycles: u64) {
        let wrapped = std::mem::take(&mut self.wrapped);
        self.mark_next_to_commit(span, &wrapped);
        self.tick(cycles);
    }
}
