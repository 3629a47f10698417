//! The counting driver for the SPARC T4 model, written as hyperprivileged software
//! would be: every action is an STXA/LDXA to ASI 0x64 (PCR) or 0xB0 (PIC).
//!
//! Events are counted on every strand (like `perf stat -a`) and summed. Each PCR is
//! programmed with §10.2's reliable sequence (disable, reset the PIC, enable); overflow
//! traps (PCR.toe) and a periodic poll read the counters, and the 64-bit totals grow by
//! the difference modulo 2^32 since the previous read. The poll interval keeps that
//! difference below 2^32 even where no trap comes: §10.3 says a precise trap is lost
//! in hyperprivileged mode and never raised with PCR.ht = 1, and advises polling.

use pmukit_arch::sparc::t4::{self as arch_t4, counter_va, OV, PCR_ASI, PIC_ASI};
use pmukit_arch::EncodedSet;
use pmukit_core::pmu::Pmu;

use crate::drivers::Driver;
use crate::engine::{self, Exit};
use crate::models::t4::{T4Core, PICS};
use crate::stream::{Cursor, Privilege};

/// At most 2^28 cycles between reads: at the widest per-cycle rate of any T4 event
/// (a few per cycle) a PIC cannot advance 2^32 in that time.
const POLL_CYCLES: u64 = 1 << 28;

const HYPER: Privilege = Privilege::Hyper;

pub struct T4Driver {
    core: T4Core,
    /// PCR value and PIC of each event of the running set, in set order.
    programmed: Vec<(usize, u64)>,
    /// Last PIC value read and the 64-bit total since start, per strand and PIC.
    last: Vec<[u32; PICS]>,
    total: Vec<[u64; PICS]>,
    interrupts: u64,
    /// Cycles run since the counters were last read.
    since_poll: u64,
    /// Accesses the model refused: a driver bug, reported rather than ignored.
    faults: Vec<String>,
}

impl T4Driver {
    pub fn new(pmu: &Pmu, strands: usize) -> T4Driver {
        let core = T4Core::with_pmu(pmu, strands);
        let n = core.strands();
        T4Driver {
            core,
            programmed: Vec::new(),
            last: vec![[0; PICS]; n],
            total: vec![[0; PICS]; n],
            interrupts: 0,
            since_poll: 0,
            faults: Vec::new(),
        }
    }

    pub fn model(&self) -> &T4Core {
        &self.core
    }

    fn stxa(&mut self, strand: usize, asi: u8, n: usize, value: u64) {
        if let Err(t) = self.core.stxa(strand, asi, counter_va(n), value, HYPER) {
            self.faults.push(format!("STXA to ASI {asi:#x} PIC/PCR{n} on strand {strand} trapped: {t}"));
        }
    }

    fn ldxa(&mut self, strand: usize, asi: u8, n: usize) -> u64 {
        self.core.ldxa(strand, asi, counter_va(n), HYPER).unwrap_or_else(|t| {
            self.faults.push(format!("LDXA from ASI {asi:#x} PIC/PCR{n} on strand {strand} trapped: {t}"));
            0
        })
    }

    /// Read PICn of a strand into its total. Counting stops for the read, as §10.2's
    /// Programming Note asks for a reliable ov: the stopping write keeps ov and ntc
    /// (writing 1 to a sticky bit leaves it as it is), so ov then tells exactly whether
    /// the PIC wrapped since the last read; the restarting write clears them.
    fn sample(&mut self, strand: usize, n: usize, config: u64) {
        let stopped = [&arch_t4::UT, &arch_t4::ST, &arch_t4::HT].iter().fold(config, |v, f| f.set(v, 0));
        self.stxa(strand, PCR_ASI, n, OV.set(arch_t4::NTC.set(stopped, 1), 1));
        let wrapped = OV.get(self.ldxa(strand, PCR_ASI, n)) == 1;
        let now = self.ldxa(strand, PIC_ASI, n);
        self.total[strand][n] += (now + if wrapped { 1 << 32 } else { 0 }).wrapping_sub(u64::from(self.last[strand][n]));
        self.last[strand][n] = now as u32;
        self.stxa(strand, PCR_ASI, n, config);
    }

    fn sample_all(&mut self) {
        for strand in 0..self.core.strands() {
            for (n, config) in self.programmed.clone() {
                self.sample(strand, n, config);
            }
        }
    }

    /// Deliver every pending performance trap and service it.
    fn service_traps(&mut self) {
        for strand in 0..self.core.strands() {
            while let Some(trap) = self.core.take_trap(strand) {
                self.interrupts += 1;
                let pic = match trap {
                    crate::models::t4::Trap::PrecisePerformanceEvent { pic }
                    | crate::models::t4::Trap::DisruptingPerformanceEvent { pic } => pic,
                    other => {
                        self.faults.push(format!("unexpected trap on strand {strand}: {other}"));
                        break;
                    }
                };
                match self.programmed.iter().find(|(n, _)| *n == pic).copied() {
                    Some((n, config)) => self.sample(strand, n, config),
                    // A trap from a PIC this set does not use: disable it so it stops.
                    None => self.stxa(strand, PCR_ASI, pic, 0),
                }
            }
        }
    }
}

impl Driver for T4Driver {
    fn start(&mut self, set: &EncodedSet) {
        self.since_poll = 0;
        self.programmed = set.events.iter().zip(&set.assignment).map(|(e, &n)| (n, e.registers.first().map_or(0, |r| r.1))).collect();
        for strand in 0..self.core.strands() {
            for (n, config) in self.programmed.clone() {
                // §10.2: disable, reset the PIC, then enable the new event.
                self.stxa(strand, PCR_ASI, n, 0);
                self.stxa(strand, PIC_ASI, n, 0);
                self.stxa(strand, PCR_ASI, n, config);
                self.last[strand][n] = self.ldxa(strand, PIC_ASI, n) as u32;
                self.total[strand][n] = 0;
            }
        }
    }

    fn run(&mut self, cursor: &mut Cursor, cycles: u64) -> u64 {
        let mut done = 0;
        while done < cycles {
            let (n, exit) = engine::run(&mut self.core, cursor, (cycles - done).min(POLL_CYCLES - self.since_poll));
            done += n;
            self.since_poll += n;
            match exit {
                Exit::Interrupt => self.service_traps(),
                Exit::Budget if self.since_poll >= POLL_CYCLES => {
                    self.sample_all();
                    self.since_poll = 0;
                }
                Exit::Budget => {}
                Exit::EndOfStream => break,
            }
        }
        done
    }

    fn stop(&mut self, _pmu: &str) -> Vec<u64> {
        self.sample_all();
        for strand in 0..self.core.strands() {
            for (n, _) in self.programmed.clone() {
                self.stxa(strand, PCR_ASI, n, 0);
            }
        }
        self.programmed.iter().map(|&(n, _)| self.total.iter().map(|t| t[n]).sum()).collect()
    }

    fn interrupts(&self) -> u64 {
        self.interrupts
    }

    fn notes(&self) -> Vec<String> {
        self.core.unpredictable().iter().chain(&self.faults).cloned().collect()
    }
}
