//! The counting driver for the Montecito model, written as an Itanium kernel's
//! performance-monitor driver would be: `mov pmc[]=`, `mov pmd[]=`, `mov r=pmd[]` and
//! `mov cr73=` on each hardware thread at privilege level 0, nothing else.
//!
//! Events are counted on every thread of the core, each thread's apart, as `perf stat
//! -a` counts CPUs. An event with `.all` already counts both threads, so it is
//! programmed on thread 0 only, and its count is the core's. Programming follows §3.3.11 and Table 3-8: freeze (PMC0.fr), program
//! the PMCs, zero the PMDs, unmask the interrupt (PMV.m = 0), unfreeze. Every PMC has
//! oi set, so a 47-bit wrap freezes the thread and raises its one interrupt: the
//! handler reads PMC0 to see which counters wrapped, folds each PMD into a 64-bit total
//! (the difference modulo 2^47 since the last read), and clears PMC0 to resume.

use pmukit_arch::montecito::registers::{pmc_populated, pmc_reset, FR, OVERFLOW, PMV_M, PMV_VECTOR, PSR_CPL, PSR_PP, PSR_UP};
use pmukit_arch::EncodedSet;
use pmukit_core::report::Unit;

use crate::drivers::{Driver, Reading, Runs};
use crate::engine::{self, Exit};
use crate::models::montecito::{Breakpoint, Montecito, BREAKPOINTS, COUNT_BITS};
use crate::stream::Cursor;

/// The external interrupt vector the driver gives the performance monitor interrupt
/// (§3.3.11's example).
pub const PMI_VECTOR: u64 = 0xD2;
const COUNT_MASK: u64 = (1 << COUNT_BITS) - 1;

/// One programmed event: its PMC/PMD index, its PMC value, the threads it runs on,
/// its total on each thread, and whether it counts the whole core (`.all`).
#[derive(Debug, Clone)]
struct Placed {
    n: usize,
    pmc: u64,
    threads: Vec<usize>,
    totals: Vec<u64>,
    all: bool,
}

pub struct MontecitoDriver {
    core: Montecito,
    threads: usize,
    placed: Vec<Placed>,
    /// Each thread's PMDn value at the last read, indexed `[thread][n]`.
    last: Vec<[u64; 16]>,
    interrupts: u64,
}

/// A kernel's PSR: privilege level 0, user and privileged monitors enabled.
pub(crate) fn kernel_psr() -> u64 {
    PSR_PP.set(PSR_UP.set(PSR_CPL.set(0, 0), 1), 1)
}

/// The set-wide registers on thread `t`: PMC32-42 at their reset values but for
/// those the set writes (qualification, capture), and the IBRs and DBRs it writes
/// (`mov ibr[]=`, `mov dbr[]=`), so that nothing of an earlier set stays.
pub(crate) fn write_set_registers(core: &mut Montecito, t: usize, set: &EncodedSet) {
    let given = |name: &str| set.registers.iter().find(|(r, _)| *r == name).map(|&(_, v)| v);
    for n in (32..=42).filter(|&n| pmc_populated(n)) {
        let value = given(&format!("PMC{n}")).or(pmc_reset(n)).unwrap_or(0);
        core.write_pmc(t, n, value).expect("the driver runs at CPL 0 on an existing thread and PMC");
    }
    for (kind, prefix) in [(Breakpoint::Ibr, "IBR"), (Breakpoint::Dbr, "DBR")] {
        for n in 0..BREAKPOINTS {
            if let Some(value) = given(&format!("{prefix}{n}")) {
                core.write_breakpoint(t, kind, n, value).expect("the driver runs at CPL 0 on an existing thread");
            }
        }
    }
}

impl MontecitoDriver {
    /// A core running `threads` hardware threads (1 or 2).
    pub fn new(threads: usize) -> MontecitoDriver {
        let mut core = Montecito::new();
        for t in 0..threads {
            core.set_psr(t, kernel_psr()).expect("threads 0 and 1 exist and the kernel PSR has no reserved bits");
        }
        MontecitoDriver { core, threads, placed: Vec::new(), last: vec![[0; 16]; threads], interrupts: 0 }
    }

    /// The core, for tests that look at what the driver programmed.
    pub fn core(&self) -> &Montecito {
        &self.core
    }

    fn mov_to_pmc(&mut self, t: usize, n: usize, value: u64) {
        self.core.write_pmc(t, n, value).expect("the driver runs at CPL 0 on an existing thread and PMC");
    }

    fn mov_to_pmd(&mut self, t: usize, n: usize, value: u64) {
        self.core.write_pmd(t, n, value).expect("the driver runs at CPL 0 on an existing thread and PMD");
    }

    fn pmc0(&self, t: usize) -> u64 {
        self.core.read_pmc(t, 0).expect("the driver runs at CPL 0 on an existing thread")
    }

    /// Fold every programmed PMD of thread `t` into its total: the difference since the
    /// last read, plus 2^47 where PMC0 says the counter wrapped (an interrupt comes with
    /// every wrap, so at most one lies between reads).
    fn accumulate(&mut self, t: usize) {
        let wrapped = OVERFLOW.get(self.pmc0(t)) << OVERFLOW.lsb;
        for p in self.placed.iter_mut().filter(|p| p.threads.contains(&t)) {
            let now = self.core.read_pmd(t, p.n).expect("the driver runs at CPL 0") & COUNT_MASK;
            let carry = if wrapped >> p.n & 1 == 1 { 1 << COUNT_BITS } else { 0 };
            p.totals[t] += (now + carry).wrapping_sub(self.last[t][p.n]);
            self.last[t][p.n] = now;
        }
    }

    /// §3.3.11: read PMC0, fold the counters, clear every PMC0 bit to resume.
    fn service(&mut self, t: usize) {
        let Ok(Some(_vector)) = self.core.take_interrupt(t) else { return };
        self.interrupts += 1;
        let status = self.pmc0(t);
        debug_assert!(FR.get(status) == 1 && OVERFLOW.get(status) != 0, "an overflow interrupt freezes and says which counter");
        self.accumulate(t);
        self.mov_to_pmc(t, 0, 0);
    }
}

impl Driver for MontecitoDriver {
    fn start(&mut self, set: &EncodedSet) {
        self.placed = set
            .events
            .iter()
            .map(|e| {
                let (reg, pmc) = e.registers[0];
                let n = reg.trim_start_matches("PMC").parse().expect("Montecito placements name PMC4-15");
                let all = pmukit_arch::montecito::registers::ALL.get(pmc) == 1;
                // `.all` counts both threads already; count it once.
                let threads = if all { vec![0] } else { (0..self.threads).collect() };
                Placed { n, pmc, threads, totals: vec![0; self.threads], all }
            })
            .collect();
        for t in 0..self.threads {
            self.mov_to_pmc(t, 0, FR.set(0, 1));
            write_set_registers(&mut self.core, t, set);
            for i in 0..self.placed.len() {
                let Placed { n, pmc, ref threads, .. } = self.placed[i];
                if threads.contains(&t) {
                    self.mov_to_pmc(t, n, pmc);
                    self.mov_to_pmd(t, n, 0);
                    self.last[t][n] = 0;
                }
            }
            self.core.write_pmv(t, PMV_M.set(PMV_VECTOR.set(0, PMI_VECTOR), 0)).expect("CPL 0");
            self.mov_to_pmc(t, 0, 0);
        }
    }

    /// The threads, and with two of them the core (`CPU0-1`), which `.all` events count.
    fn units(&self, _pmu: &str) -> Vec<Unit> {
        let mut units: Vec<Unit> = (0..self.threads).map(Unit::cpu).collect();
        if self.threads > 1 {
            units.push(Unit::shared(format!("CPU0-{}", self.threads - 1)));
        }
        units
    }

    fn stop(&mut self, _pmu: &str) -> Vec<Reading> {
        for t in 0..self.threads {
            self.mov_to_pmc(t, 0, FR.set(0, 1));
            self.accumulate(t);
            let programmed: Vec<usize> = self.placed.iter().filter(|p| p.threads.contains(&t)).map(|p| p.n).collect();
            for n in programmed {
                // plm 0 disables the monitor (Table 3-5).
                self.mov_to_pmc(t, n, 0);
            }
        }
        let core = self.threads;
        self.placed
            .iter()
            .map(|p| {
                Some(if p.all && core > 1 { vec![(core, p.totals[0])] } else { p.threads.iter().map(|&t| (t, p.totals[t])).collect() })
            })
            .collect()
    }

    fn interrupts(&self) -> u64 {
        self.interrupts
    }

    fn notes(&self) -> Vec<String> {
        self.core.unpredictable().notes().collect()
    }
}

impl<const F: usize> Runs<F> for MontecitoDriver {
    fn run(&mut self, cursor: &mut Cursor<F>, cycles: u64) -> u64 {
        let mut done = 0;
        while done < cycles {
            let (ran, exit) = engine::run(&mut self.core, cursor, cycles - done);
            done += ran;
            match exit {
                Exit::Overflow => (0..self.threads).for_each(|t| self.service(t)),
                Exit::Budget => {}
                Exit::EndOfStream => break,
            }
        }
        done
    }
}
