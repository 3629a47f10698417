//! The counting driver for the SPARC T4 model, written as hyperprivileged software
//! would be: every action is an STXA/LDXA to ASI 0x64 (PCR) or 0xB0 (PIC), or a load
//! or store to a memory controller's DRAM registers (§10.5), made as Solaris, which
//! owns DRAM counters 0 and 1.
//!
//! Events are counted on every strand (like `perf stat -a`), each strand's apart. Each PCR is
//! programmed with §10.2's reliable sequence (disable, reset the PIC, enable); overflow
//! traps (PCR.toe) and a periodic poll read the counters, and the 64-bit totals grow by
//! the difference modulo 2^32 since the previous read. The poll interval keeps that
//! difference below 2^32 even where no trap comes: §10.3 says a precise trap is lost
//! in hyperprivileged mode and never raised with PCR.ht = 1, and advises polling.
//!
//! DRAM counters raise no interrupt: they are polled often enough that a 31-bit
//! counter wraps at most once between reads, and the sticky bit says whether it did.

use pmukit_arch::sparc::t4::{self as arch_t4, counter_va, DRAM_COUNTERS, DRAM_PERF_CTL, OV, PCR_ASI, PIC_ASI};
use pmukit_arch::EncodedSet;
use pmukit_core::pmu::Pmu;
use pmukit_core::register::Register;
use pmukit_core::report::Unit;

use crate::drivers::{Driver, Reading, Runs};
use crate::engine::{self, Counters, Counting, Exit};
use crate::models::t4::{T4Core, Trap, PICS};
use crate::models::t4_dram::{register_pa, Owner, T4Dram, COUNTERS_PER_MCU, MCUS};
use crate::stream::{Cursor, Privilege, Span};

/// At most 2^21 cycles between reads: a PIC cannot advance 2^32 in that time (a cycle
/// adds at most 15 to it, the stream's per-cycle bound). A DRAM counter's queue
/// latencies can grow faster, so the driver also reads the DRAM counters whenever one
/// wraps (the model stops the engine there: TD15).
const POLL_CYCLES: u64 = 1 << 21;
const _: () = assert!(POLL_CYCLES * 15 < 1 << 32);

/// The chip the driver counts on: the core's strands and the memory controllers.
/// Its counters are the strands' PICs followed by the MCUs' DRAM counters.
struct Chip {
    core: T4Core,
    dram: T4Dram,
}

impl Counters for Chip {
    fn counters(&self) -> usize {
        self.core.counters() + self.dram.counters()
    }

    fn headroom(&self, i: usize) -> u64 {
        match i.checked_sub(self.core.counters()) {
            None => self.core.headroom(i),
            Some(d) => self.dram.headroom(d),
        }
    }

    fn add(&mut self, i: usize, n: u64) -> bool {
        match i.checked_sub(self.core.counters()) {
            None => self.core.add(i, n),
            Some(d) => self.dram.add(d, n),
        }
    }
}

impl<const F: usize> Counting<F> for Chip {
    fn rate(&self, i: usize, span: &Span<F>) -> u64 {
        match i.checked_sub(self.core.counters()) {
            None => self.core.rate(i, span),
            Some(d) => self.dram.rate(d, span),
        }
    }

    /// The class is the memory controllers' (the core's is always 0).
    fn each_rate(&self, span: &Span<F>, class: u64, f: &mut dyn FnMut(usize, u64)) {
        self.core.each_rate(span, 0, f);
        let pics = self.core.counters();
        self.dram.each_rate(span, class, &mut |d, r| f(pics + d, r));
    }

    fn address_class(&self, span: &Span<F>) -> u64 {
        self.dram.address_class(span)
    }

    fn executed(&mut self, span: &Span<F>, cycles: u64, iteration: u64) {
        self.core.executed(span, cycles, iteration);
        self.dram.executed(span, cycles, iteration);
    }

    fn iterated(&mut self, body: &[Span<F>], k: u64, from: u64) {
        self.core.iterated(body, k, from);
        self.dram.iterated(body, k, from);
    }
}

/// The DRAM events being counted: the counter of each, in set order.
#[derive(Default)]
struct DramSet {
    counters: Vec<usize>,
    /// Last value read and total per MCU and counter.
    last: [[u64; COUNTERS_PER_MCU]; MCUS],
    total: [[u64; COUNTERS_PER_MCU]; MCUS],
}

const HYPER: Privilege = Privilege::Hyper;

pub struct T4Driver {
    chip: Chip,
    dram: Option<DramSet>,
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
            chip: Chip { core, dram: T4Dram::new() },
            dram: None,
            programmed: Vec::new(),
            last: vec![[0; PICS]; n],
            total: vec![[0; PICS]; n],
            interrupts: 0,
            since_poll: 0,
            faults: Vec::new(),
        }
    }

    pub fn model(&self) -> &T4Core {
        &self.chip.core
    }

    pub fn dram_model(&self) -> &T4Dram {
        &self.chip.dram
    }

    fn stxa(&mut self, strand: usize, asi: u8, n: usize, value: u64) {
        if let Err(t) = self.chip.core.stxa(strand, asi, counter_va(n), value, HYPER) {
            self.faults.push(format!("STXA to ASI {asi:#x} PIC/PCR{n} on strand {strand} trapped: {t}"));
        }
    }

    fn ldxa(&mut self, strand: usize, asi: u8, n: usize) -> u64 {
        self.chip.core.ldxa(strand, asi, counter_va(n), HYPER).unwrap_or_else(|t| {
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
        for strand in 0..self.chip.core.strands() {
            for (n, config) in self.programmed.clone() {
                self.sample(strand, n, config);
            }
        }
        self.sample_dram();
    }

    fn dram_read(&mut self, register: &Register, mcu: usize) -> u64 {
        let Some(pa) = register_pa(register, mcu) else { return 0 };
        self.chip.dram.read(pa, Owner::Solaris).unwrap_or_else(|e| {
            self.faults.push(format!("read of {} on MCU {mcu} failed: {e}", register.name));
            0
        })
    }

    fn dram_write(&mut self, register: &Register, mcu: usize, value: u64) {
        let Some(pa) = register_pa(register, mcu) else { return };
        if let Err(e) = self.chip.dram.write(pa, value, Owner::Solaris) {
            self.faults.push(format!("write of {} on MCU {mcu} failed: {e}", register.name));
        }
    }

    /// Read every DRAM counter in use into its total: the difference since the last
    /// read, plus 2^31 when the sticky bit says it wrapped; then clear the sticky bits
    /// by writing the register back with them zero (they are clear-only).
    fn sample_dram(&mut self) {
        let Some(mut set) = self.dram.take() else { return };
        for mcu in 0..MCUS {
            for register in counter_registers(&set.counters) {
                let value = self.dram_read(register, mcu);
                let mut cleared = value;
                for &n in set.counters.iter().filter(|&&n| DRAM_COUNTERS[n].3.name == register.name) {
                    let (_, counter, sticky, _) = DRAM_COUNTERS[n];
                    let now = counter.get(value);
                    let wrapped = sticky.get(value) << counter.width();
                    set.total[mcu][n] += (now + wrapped).wrapping_sub(set.last[mcu][n]);
                    set.last[mcu][n] = now;
                    cleared = sticky.set(cleared, 0);
                }
                if cleared != value {
                    self.dram_write(register, mcu, cleared);
                }
            }
        }
        self.dram = Some(set);
    }

    /// Select the events of a DRAM set on every MCU (read-modify-write of the control
    /// register, leaving power management's fields alone) and zero the counters.
    fn start_dram(&mut self, set: &EncodedSet) {
        // The counters start from zero, so the first difference is from zero.
        let dram = DramSet { counters: set.assignment.clone(), ..DramSet::default() };
        for mcu in 0..MCUS {
            let mut ctl = self.dram_read(&DRAM_PERF_CTL, mcu);
            for (event, &n) in set.events.iter().zip(&set.assignment) {
                ctl = DRAM_COUNTERS[n].0.set(ctl, event.code);
            }
            self.dram_write(&DRAM_PERF_CTL, mcu, ctl);
            for register in counter_registers(&set.assignment) {
                let value = self.dram_read(register, mcu);
                let zeroed = set.assignment.iter().filter(|&&n| DRAM_COUNTERS[n].3.name == register.name).fold(value, |v, &n| {
                    let (_, counter, sticky, _) = DRAM_COUNTERS[n];
                    sticky.set(counter.set(v, 0), 0)
                });
                self.dram_write(register, mcu, zeroed);
            }
        }
        self.dram = Some(dram);
    }

    /// Deliver every pending performance trap and service it.
    fn service_traps(&mut self) {
        for strand in 0..self.chip.core.strands() {
            while let Some(trap) = self.chip.core.take_trap(strand) {
                self.interrupts += 1;
                let pic = match trap {
                    Trap::PrecisePerformanceEvent { pic } | Trap::DisruptingPerformanceEvent { pic } => pic,
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

/// The DRAM counter registers holding `counters`, each once.
fn counter_registers(counters: &[usize]) -> Vec<&'static Register> {
    let mut registers: Vec<&'static Register> = counters.iter().map(|&n| DRAM_COUNTERS[n].3).collect();
    registers.sort_by_key(|r| r.name);
    registers.dedup_by_key(|r| r.name);
    registers
}

impl Driver for T4Driver {
    fn start(&mut self, set: &EncodedSet) {
        if set.pmu == arch_t4::SPARC_T4_DRAM.name {
            return self.start_dram(set);
        }
        self.since_poll = 0;
        self.programmed = set.events.iter().zip(&set.assignment).map(|(e, &n)| (n, e.registers.first().map_or(0, |r| r.1))).collect();
        for strand in 0..self.chip.core.strands() {
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

    fn units(&self, pmu: &str) -> Vec<Unit> {
        if pmu == arch_t4::SPARC_T4_DRAM.name {
            return (0..MCUS).map(|m| Unit::shared(format!("MCU{m}"))).collect();
        }
        (0..self.chip.core.strands()).map(Unit::cpu).collect()
    }

    fn stop(&mut self, pmu: &str) -> Vec<Reading> {
        if pmu == arch_t4::SPARC_T4_DRAM.name {
            // DRAM counters cannot be disabled (every select code counts something):
            // stopping is a last read.
            self.sample_dram();
            return self.dram.take().map_or_else(Vec::new, |set| {
                set.counters.iter().map(|&n| Some(set.total.iter().map(|t| t[n]).enumerate().collect())).collect()
            });
        }
        self.sample_all();
        for strand in 0..self.chip.core.strands() {
            for (n, _) in self.programmed.clone() {
                self.stxa(strand, PCR_ASI, n, 0);
            }
        }
        self.programmed.iter().map(|&(n, _)| Some(self.total.iter().map(|t| t[n]).enumerate().collect())).collect()
    }

    fn interrupts(&self) -> u64 {
        self.interrupts
    }

    fn notes(&self) -> Vec<String> {
        self.chip.core.unpredictable().notes().chain(self.chip.dram.unpredictable().notes()).chain(self.faults.iter().cloned()).collect()
    }
}

impl<const F: usize> Runs<F> for T4Driver {
    fn run(&mut self, cursor: &mut Cursor<F>, cycles: u64) -> u64 {
        let mut done = 0;
        while done < cycles {
            let (n, exit) = engine::run(&mut self.chip, cursor, (cycles - done).min(POLL_CYCLES - self.since_poll));
            done += n;
            self.since_poll += n;
            match exit {
                Exit::Overflow => {
                    self.service_traps();
                    self.sample_dram();
                }
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
}
