//! Register-level model of the ARM11 performance monitor (ARM DAI 0195B).
//!
//! Software reaches it only through [`Arm11Pmu::mrc`] and [`Arm11Pmu::mcr`], the
//! CP15 c15 register accesses of §2. The outputs a system sees are modelled too: the
//! nPMUIRQ line (and nPMUFIQ on ARM1156), the EVNTBUS export enabled by PMCR.X, and a
//! log of every programming whose behaviour the spec calls unpredictable.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic))]

use std::collections::BTreeMap;

use pmukit_arch::arm11::{self, Cp15, CCNT_IDX, CP15_MAP, PMN0_IDX, PMN1_IDX};
use pmukit_core::register::Register;
use thiserror::Error;

use crate::engine::{Counters, Counting};
use crate::models::Reports;
use crate::stream::{Signal, Span, Totals};

/// An MRC/MCR to a CP15 register the PMU does not implement: the core takes the
/// Undefined Instruction exception.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
#[error("undefined instruction: no performance monitor register at p15, {}, c{}, c{}, {}", .0.opc1, .0.crn, .0.crm, .0.opc2)]
pub struct Undefined(pub Cp15);

/// What an event counter's selector makes it count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    Cycles,
    Signal(Signal),
    /// Event 0x22: both ETMEXTOUT lines, two when both are asserted.
    EtmBoth,
    /// An event the spec marks unused on this core: nothing is counted.
    Nothing,
    /// A reserved selector: the behaviour is unpredictable; the model counts nothing
    /// and logs it.
    Reserved,
}

/// The ARM11 PMU of one core.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Arm11Pmu {
    model: &'static str,
    pmcr_layout: Register,
    pmcr: u64,
    ccnt: u32,
    /// Cycles since CCNT last advanced while PMCR.D = 1 (0..63).
    prescaler: u8,
    pmn: [u32; 2],
    sources: [Source; 2],
    /// What EVNTBUS has carried while PMCR.X was set: its cycles, and the totals of
    /// the signals an exported code reads (`read`), from which each code's count is
    /// worked out when read ([`expected`]). Asking every exported code of every span
    /// cost a twentieth of counting a recorded program.
    exported: Box<Totals>,
    /// Whether an exported code reads each signal (by `Signal as usize`): only those
    /// are kept, so that what the model holds is what it can export.
    read: Box<[bool; Signal::COUNT]>,
    /// The codes EVNTBUS exports on this core and what each counts, worked out once:
    /// asking all 256 selectors cost more than the counting.
    exports: Vec<(u8, Source)>,
    unpredictable: Reports,
}

fn pmcr_flag(f: &pmukit_core::register::Field, pmcr: u64) -> bool {
    f.get(pmcr) == 1
}

impl Arm11Pmu {
    /// A PMU in its reset state (all registers zero) for core `model`
    /// (`arm1136`, `arm1156` or `arm1176`).
    pub fn new(model: &'static str) -> Arm11Pmu {
        let layout = arm11::PMCR.for_model(model);
        let mut pmu = Arm11Pmu {
            model,
            pmcr: layout.reset,
            pmcr_layout: layout,
            ccnt: arm11::CCNT.reset as u32,
            prescaler: 0,
            pmn: [arm11::PMN0.reset as u32, arm11::PMN1.reset as u32],
            sources: [Source::Nothing; 2],
            exported: Box::new(Totals::zero()),
            read: Box::new([false; Signal::COUNT]),
            exports: EXPORTED
                .map(|code| (code, source_of(u64::from(code), model)))
                .filter(|(_, s)| !matches!(s, Source::Nothing | Source::Reserved))
                .collect(),
            unpredictable: Reports::default(),
        };
        pmu.sources = [pmu.source(0), pmu.source(1)];
        for &(_, source) in &pmu.exports {
            let read: &[Signal] = match source {
                Source::Signal(ref s) => std::slice::from_ref(s),
                Source::EtmBoth => &[Signal::EtmExtOut0, Signal::EtmExtOut1],
                Source::Cycles | Source::Nothing | Source::Reserved => &[],
            };
            for &s in read {
                if let Some(r) = pmu.read.get_mut(s as usize) {
                    *r = true;
                }
            }
        }
        pmu
    }

    pub fn model(&self) -> &'static str {
        self.model
    }

    fn register_at(cp: Cp15) -> Result<&'static Register, Undefined> {
        CP15_MAP.iter().find(|(c, _)| *c == cp).map(|(_, r)| *r).ok_or(Undefined(cp))
    }

    /// MRC p15: read a performance monitor register.
    pub fn mrc(&self, cp: Cp15) -> Result<u32, Undefined> {
        let reg = Self::register_at(cp)?;
        Ok(match reg.name {
            "PMCR" => self.pmcr_layout.read(self.pmcr) as u32,
            "CCNT" => self.ccnt,
            "PMN0" => self.pmn[0],
            _ => self.pmn[1],
        })
    }

    /// MCR p15: write a performance monitor register.
    pub fn mcr(&mut self, cp: Cp15, value: u32) -> Result<(), Undefined> {
        let reg = Self::register_at(cp)?;
        match reg.name {
            "PMCR" => self.write_pmcr(value as u64),
            "CCNT" => self.ccnt = value,
            "PMN0" => self.pmn[0] = value,
            _ => self.pmn[1] = value,
        }
        Ok(())
    }

    fn write_pmcr(&mut self, written: u64) {
        let layout = &self.pmcr_layout;
        if let Err(e) = layout.check_write(written) {
            self.unpredictable.push(format!("PMCR write {written:#010x}: {e} (Table 1: unpredictable)"));
        }
        let effect = layout.apply_write(self.pmcr, written);
        let mut next = effect.stored;
        // §1, Table 1 bit 0: "Must be set to clear interrupt request": a write that
        // leaves E clear does not clear the overflow flags (docs/ERRATA.md).
        if !pmcr_flag(&arm11::E, written) {
            next |= effect.cleared;
        }
        self.pmcr = next;
        for action in effect.actions {
            match action {
                "C" => {
                    self.ccnt = 0;
                    self.prescaler = 0;
                }
                _ => self.pmn = [0, 0],
            }
        }
        let sources = [self.source(0), self.source(1)];
        for (n, s) in sources.iter().enumerate() {
            if *s == Source::Reserved {
                let code = self.evt_count(n);
                self.unpredictable.push(format!(
                    "PMN{n} selects event {code:#04x}, reserved on {} (Table 2: 'Reserved. Unpredictable behaviour'); the model counts nothing",
                    self.model
                ));
            }
        }
        self.sources = sources;
    }

    fn evt_count(&self, n: usize) -> u64 {
        if n == 0 {
            arm11::EVT_COUNT0.get(self.pmcr)
        } else {
            arm11::EVT_COUNT1.get(self.pmcr)
        }
    }

    /// Table 2: what selector `EvtCountN` makes PMNn count on this core.
    fn source(&self, n: usize) -> Source {
        source_of(self.evt_count(n), self.model)
    }

    /// nPMUIRQ is asserted (driven low) while an overflow flag and its interrupt
    /// enable are both set (§1, Table 1).
    pub fn irq_asserted(&self) -> bool {
        [(&arm11::OCC, &arm11::ECC), (&arm11::OC1, &arm11::EC1), (&arm11::OC0, &arm11::EC0)]
            .iter()
            .any(|(flag, enable)| pmcr_flag(flag, self.pmcr) && pmcr_flag(enable, self.pmcr))
    }

    /// nPMUFIQ (ARM1156 only) is asserted while an overflow flag and its FIQ enable
    /// (FCC/FC1/FC0) are both set.
    pub fn fiq_asserted(&self) -> bool {
        if !arm11::FCC.only_on.contains(&self.model) {
            return false;
        }
        [(&arm11::OCC, &arm11::FCC), (&arm11::OC1, &arm11::FC1), (&arm11::OC0, &arm11::FC0)]
            .iter()
            .any(|(flag, enable)| pmcr_flag(flag, self.pmcr) && pmcr_flag(enable, self.pmcr))
    }

    /// Events exported on EVNTBUS while PMCR.X was set: occurrences per event code.
    pub fn evntbus(&self) -> BTreeMap<u8, u64> {
        let count = |code: u8| expected(u64::from(code), self.model, &self.exported);
        self.exports.iter().map(|&(code, _)| (code, count(code))).filter(|&(_, n)| n > 0).collect()
    }

    /// Every programming whose behaviour the spec calls unpredictable, in order.
    pub fn unpredictable(&self) -> &Reports {
        &self.unpredictable
    }

    fn enabled(&self) -> bool {
        pmcr_flag(&arm11::E, self.pmcr)
    }

    fn divided(&self) -> bool {
        pmcr_flag(&arm11::D, self.pmcr)
    }

    fn set_overflow(&mut self, counter: usize) -> bool {
        self.pmcr = arm11::overflow_flag(counter).set(self.pmcr, 1);
        self.irq_asserted() || self.fiq_asserted()
    }
}

/// Table 2 for one core: the signal behind each event code.
fn source_of(code: u64, model: &str) -> Source {
    use Signal::*;
    let only = |m: &str, s: Signal| if model == m { Source::Signal(s) } else { Source::Reserved };
    let unused_on_1156 = |s: Signal| if model == "arm1156" { Source::Nothing } else { Source::Signal(s) };
    match code {
        0x00 => Source::Signal(ICacheMisses),
        0x01 => Source::Signal(IBufStallCycles),
        0x02 => Source::Signal(DataDepStallCycles),
        0x03 => unused_on_1156(ITlbMisses),
        0x04 => unused_on_1156(DTlbMisses),
        0x05 => Source::Signal(Branches),
        0x06 => Source::Signal(BranchMispredicts),
        0x07 => Source::Signal(Instructions),
        0x09 => Source::Signal(DCacheAccessesCacheable),
        0x0A => Source::Signal(DCacheAccesses),
        0x0B => Source::Signal(DCacheMisses),
        0x0C => Source::Signal(DCacheWritebacks),
        0x0D => Source::Signal(PcChanges),
        0x0F => unused_on_1156(MainTlbMisses),
        0x10 => Source::Signal(ExternalDataAccesses),
        0x11 => Source::Signal(LsuFullStallCycles),
        0x12 => Source::Signal(WriteBufferDrains),
        0x13 => only("arm1156", FiqDisabledCycles),
        0x14 => only("arm1156", IrqDisabledCycles),
        0x20 => Source::Signal(EtmExtOut0),
        0x21 => Source::Signal(EtmExtOut1),
        0x22 => Source::EtmBoth,
        0x23 => only("arm1176", Calls),
        0x24 => only("arm1176", Returns),
        0x25 => only("arm1176", ReturnsPredicted),
        0x26 => only("arm1176", ReturnsMispredicted),
        0x30 => only("arm1156", ICacheTagParityErrors),
        0x31 => only("arm1156", ICacheDataParityErrors),
        0x32 => only("arm1156", DCacheTagParityErrors),
        0x33 => only("arm1156", DCacheDataParityErrors),
        0x34 => only("arm1156", ItcmErrors),
        0x35 => only("arm1156", DtcmErrors),
        0x36 => only("arm1156", ReturnsPredicted),
        0x37 => only("arm1156", ReturnsMispredicted),
        0x38 => only("arm1156", DCacheDirtyParityErrors),
        0xFF => Source::Cycles,
        _ => Source::Reserved,
    }
}

fn per_cycle<const F: usize>(source: Source, span: &Span<F>) -> u64 {
    if halted(span) {
        return 0;
    }
    match source {
        Source::Cycles => 1,
        Source::Signal(s) => span.signals.get(s),
        Source::EtmBoth => span.signals.get(Signal::EtmExtOut0) + span.signals.get(Signal::EtmExtOut1),
        Source::Nothing | Source::Reserved => 0,
    }
}

/// Whether the core is in standby in the span: a WFI's wait for an interrupt, which
/// "disables most of the clocks" (ARM1176JZF-S TRM, ARM DDI 0301H §10.2.2), the
/// cycle counter's and the events' among them: nothing counts.
fn halted<const F: usize>(span: &Span<F>) -> bool {
    span.signals.get(Signal::HaltedCycles) > 0
}

/// What event `code` counts on `model` in a cycle of `span`.
pub fn per_span(code: u64, model: &str, span: &Span) -> u64 {
    per_cycle(source_of(code, model), span)
}

/// What event `code` counts on `model` over a stream whose signal totals are
/// `totals`: the ground truth a counter programmed with it must reach.
pub fn expected(code: u64, model: &str, totals: &Totals) -> u64 {
    match source_of(code, model) {
        // Standby (WFI) stops the core's clock (`halted`).
        Source::Cycles => totals.cycles - totals.get(Signal::HaltedCycles),
        Source::Signal(s) => totals.get(s),
        Source::EtmBoth => totals.get(Signal::EtmExtOut0) + totals.get(Signal::EtmExtOut1),
        Source::Nothing | Source::Reserved => 0,
    }
}

/// Event codes exported on EVNTBUS, in code order.
const EXPORTED: std::ops::RangeInclusive<u8> = 0x00..=0xFF;

impl Counters for Arm11Pmu {
    fn counters(&self) -> usize {
        3
    }

    fn headroom(&self, i: usize) -> u64 {
        match i {
            // With the divider, CCNT and its prescaler form one 38-bit counter.
            CCNT_IDX if self.divided() => (1u64 << 38) - ((self.ccnt as u64) << 6 | self.prescaler as u64),
            CCNT_IDX => (1u64 << 32) - self.ccnt as u64,
            PMN0_IDX => (1u64 << 32) - self.pmn[0] as u64,
            _ => (1u64 << 32) - self.pmn[1] as u64,
        }
    }

    fn add(&mut self, i: usize, n: u64) -> bool {
        let overflowed = match i {
            CCNT_IDX if self.divided() => {
                let total = ((self.ccnt as u64) << 6 | self.prescaler as u64) + n;
                self.ccnt = (total >> 6) as u32;
                self.prescaler = (total & 63) as u8;
                total >> 38 != 0
            }
            CCNT_IDX => {
                let total = self.ccnt as u64 + n;
                self.ccnt = total as u32;
                total >> 32 != 0
            }
            _ => {
                let [pmn0, pmn1] = &mut self.pmn;
                let pmn = if i == PMN1_IDX { pmn1 } else { pmn0 };
                let total = *pmn as u64 + n;
                *pmn = total as u32;
                total >> 32 != 0
            }
        };
        overflowed && self.set_overflow(i)
    }
}

impl<const F: usize> Counting<F> for Arm11Pmu {
    fn rate(&self, i: usize, span: &Span<F>) -> u64 {
        if !self.enabled() || halted(span) {
            return 0;
        }
        match i {
            CCNT_IDX => 1,
            PMN0_IDX => per_cycle(self.sources[0], span),
            _ => per_cycle(self.sources[1], span),
        }
    }

    /// [`Counting::rate`]'s sums in one pass over the block: the engine's per-span
    /// calls were a sixth of the machine's time on a program's records.
    fn grow(&self, body: &[Span<F>], by: &mut [u64]) {
        if !self.enabled() {
            return;
        }
        let [pmn0, pmn1] = self.sources;
        let (mut ccnt, mut n0, mut n1) = (0u64, 0u64, 0u64);
        for s in body.iter().filter(|s| !halted(s)) {
            ccnt = ccnt.saturating_add(s.cycles);
            n0 = n0.saturating_add(per_cycle(pmn0, s).saturating_mul(s.cycles));
            n1 = n1.saturating_add(per_cycle(pmn1, s).saturating_mul(s.cycles));
        }
        for (i, n) in [(CCNT_IDX, ccnt), (PMN0_IDX, n0), (PMN1_IDX, n1)] {
            if let Some(b) = by.get_mut(i) {
                *b = b.saturating_add(n);
            }
        }
    }

    fn executed(&mut self, span: &Span<F>, cycles: u64, _iteration: u64) {
        if !pmcr_flag(&arm11::X, self.pmcr) || halted(span) {
            return;
        }
        // Every span's cycles: the core has one lane, so no span is an overlay.
        self.exported.cycles += cycles;
        span.signals.each_nonzero(|i, n| {
            if let (Some(total), Some(true)) = (self.exported.signals.get_mut(i), self.read.get(i)) {
                *total += n * cycles;
            }
        });
    }
}
