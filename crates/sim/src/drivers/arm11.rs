//! The counting driver for the ARM11 model, written as a kernel driver would be:
//! every action is an MRC or MCR to the CP15 c15 registers.
//!
//! Counts stay exact across 32-bit wrap because every counter's overflow interrupt is
//! enabled: the handler reads each counter, adds the difference from the previous
//! read to a 64-bit total (plus 2^32 when the counter's overflow flag says it wrapped,
//! which also covers a full 2^32 advance that a modular difference would lose), and
//! clears the flags by writing them back.

use pmukit_arch::arm11::{self, COUNTER_CP, PMCR_CP};
use pmukit_arch::EncodedSet;

use pmukit_core::report::Unit;

use crate::drivers::{Driver, Reading, Runs};
use crate::engine::{self, Exit};
use crate::models::arm11::Arm11Pmu;
use crate::stream::Cursor;

pub struct Arm11Driver {
    pmu: Arm11Pmu,
    /// Counter of each event of the running set, in set order.
    counters: Vec<usize>,
    /// Last value read from each counter, and the 64-bit totals since start.
    last: [u32; 3],
    total: [u64; 3],
    interrupts: u64,
}

impl Arm11Driver {
    pub fn new(model: &'static str) -> Arm11Driver {
        Arm11Driver { pmu: Arm11Pmu::new(model), counters: Vec::new(), last: [0; 3], total: [0; 3], interrupts: 0 }
    }

    /// The model, for inspection.
    pub fn model(&self) -> &Arm11Pmu {
        &self.pmu
    }

    fn mrc(&self, cp: arm11::Cp15) -> u32 {
        // The driver only names registers of CP15_MAP, which the model implements.
        self.pmu.mrc(cp).unwrap_or(0)
    }

    fn mcr(&mut self, cp: arm11::Cp15, value: u32) {
        let _ = self.pmu.mcr(cp, value);
    }

    /// Read every counter in use and fold the difference into its 64-bit total;
    /// `pmcr` is the value read before, whose flags tell which counters wrapped.
    fn accumulate(&mut self, pmcr: u32) {
        for c in self.counters.clone() {
            let now = self.mrc(COUNTER_CP[c]);
            let wrapped = arm11::overflow_flag(c).get(pmcr as u64) == 1;
            self.total[c] += (now as u64 + if wrapped { 1 << 32 } else { 0 }) - self.last[c] as u64;
            self.last[c] = now;
        }
    }

    /// The overflow interrupt handler: accumulate, then write the flags back as read,
    /// which clears them (write 1 to clear, with E still set, §1).
    fn service(&mut self) {
        self.interrupts += 1;
        let pmcr = self.mrc(PMCR_CP);
        self.accumulate(pmcr);
        self.mcr(PMCR_CP, pmcr);
    }
}

impl Driver for Arm11Driver {
    fn start(&mut self, set: &EncodedSet) {
        let pmcr = set.registers.iter().find(|(r, _)| *r == arm11::PMCR.name).map_or(0, |(_, v)| *v);
        self.counters = set.assignment.clone();
        self.last = [0; 3];
        self.total = [0; 3];
        // One write programs the selectors, enables the interrupts, clears the flags,
        // resets all counters (P, C) and sets E.
        self.mcr(PMCR_CP, pmcr as u32);
    }

    fn units(&self, _pmu: &str) -> Vec<Unit> {
        vec![Unit::cpu(0)]
    }

    fn stop(&mut self, _pmu: &str) -> Vec<Reading> {
        let pmcr = self.mrc(PMCR_CP);
        // Clear E (and write 0 to the flags, which leaves them alone) to stop counting.
        let stopped = [&arm11::E, &arm11::OCC, &arm11::OC1, &arm11::OC0].iter().fold(pmcr as u64, |v, f| f.set(v, 0));
        self.mcr(PMCR_CP, stopped as u32);
        self.accumulate(pmcr);
        self.counters.iter().map(|&c| Some(vec![(0, self.total[c])])).collect()
    }

    fn interrupts(&self) -> u64 {
        self.interrupts
    }

    fn notes(&self) -> Vec<String> {
        self.pmu.unpredictable().notes().collect()
    }
}

impl<const F: usize> Runs<F> for Arm11Driver {
    fn run(&mut self, cursor: &mut Cursor<F>, cycles: u64) -> u64 {
        let mut done = 0;
        while done < cycles {
            let (n, exit) = engine::run(&mut self.pmu, cursor, cycles - done);
            done += n;
            match exit {
                Exit::Overflow => self.service(),
                Exit::Budget => {}
                Exit::EndOfStream => break,
            }
        }
        done
    }
}
