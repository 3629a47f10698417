//! The counting driver for SPARC KT, written as a sun4v guest's performance driver
//! would be ("KT performance registers" §3): it negotiates API group 0x209, programs
//! PERF_CONFIG, the strands' SPARC PCR and the DRAM registers with `kt_set_perfreg`,
//! reads the DRAM counters with `kt_get_perfreg`, and reads each strand's SPARC PIC
//! directly, as §2.1 lets privileged code do.
//!
//! §3.0 asks such code to handle refusals gracefully, and this one does: a register the
//! guest may not touch (ENOACCESS) leaves that register's share out, a PCR whose HT bit
//! the guest may not set is written without it, a PERF_CONFIG write that would block
//! (EWOULDBLOCK) is retried and then given up; the run goes on with what can be
//! counted, an event with nothing left is reported as not counted, and the notes say
//! what was lost and why.
//!
//! Nothing interrupts: the counters are read every [`POLL_CYCLES`], often enough that a
//! 32-bit pic0 wraps at most once between reads, and whenever a 31-bit DRAM counter
//! wraps (the model stops the engine there, TD15).

use pmukit_arch::sparc::kt::{
    DramReg, DRAM_COUNTERS, FIRST_NODE_PERFREG, HT, L2_CONTROL_PERFREG, L2_CONTROL_VIRTUAL, MCUS_PER_NODE, PERFREGS_PER_NODE, PIC0,
    SPARC_KT, SPARC_PCR, SPARC_PCR_PERFREG,
};
use pmukit_arch::sparc::sun4v::{group, Status, API_SET_VERSION, KT_GET_PERFREG, KT_SET_PERFREG};
use pmukit_arch::EncodedSet;
use pmukit_core::report::Unit;

use crate::drivers::{Driver, Reading, Runs};
use crate::engine::{self, Exit};
use crate::models::kt::KtConfig;
use crate::models::sun4v::{Config, ConfigError, Hypervisor, Processor};
use crate::stream::Cursor;

/// At most 2^21 cycles between reads, so that a 32-bit pic0 (at most 15 a cycle)
/// cannot wrap twice in between. A DRAM counter's queue latencies can grow faster: the
/// driver also reads whenever one wraps (the model stops the engine there: TD15).
pub const POLL_CYCLES: u64 = 1 << 21;
const _: () = assert!(POLL_CYCLES * 15 < 1 << 32);

/// Attempts at a PERF_CONFIG write that answers EWOULDBLOCK before giving up.
pub const L2_ATTEMPTS: usize = 3;

/// The strands' CLC counting: the one event a [`SPARC_KT`] set holds.
struct ClcSet {
    /// Strands whose PCR the driver could program.
    strands: Vec<usize>,
    /// pic0 of each strand at the previous read, and its total.
    last: Vec<u64>,
    total: Vec<u64>,
}

/// The MCUs' DRAM counting.
struct DramSet {
    /// DRAM counter of each event, in set order.
    counters: Vec<usize>,
    /// (node, MCU) pairs whose registers the driver could program and read.
    mcus: Vec<(usize, usize)>,
    /// Per (node × 2 + MCU), each counter's value at the previous read, and its total.
    last: Vec<[u64; 4]>,
    total: Vec<[u64; 4]>,
}

pub struct KtDriver {
    hv: Hypervisor,
    clc: Option<ClcSet>,
    dram: Option<DramSet>,
    since_poll: u64,
    faults: Vec<String>,
}

/// The PerfReg# of a DRAM register of one node's MCU (§3.1).
fn dram_perfreg(node: usize, mcu: usize, reg: DramReg) -> u64 {
    FIRST_NODE_PERFREG + (node * PERFREGS_PER_NODE + mcu * DramReg::ALL.len() + reg.index()) as u64
}

fn value_of(set: &EncodedSet, register: &str) -> u64 {
    set.registers.iter().find(|(r, _)| *r == register).map_or(0, |&(_, v)| v)
}

impl KtDriver {
    /// A KT guest of `strands` virtual CPUs on the machine `kt` describes; the driver
    /// negotiates the KT group first, as Linux's `pcr.c` does.
    pub fn new(kt: KtConfig, strands: usize) -> Result<KtDriver, ConfigError> {
        let mut config = Config::new(Processor::Kt, strands);
        config.kt = kt;
        let hv = Hypervisor::new(config)?;
        let mut driver = KtDriver { hv, clc: None, dram: None, since_poll: 0, faults: Vec::new() };
        let r = driver.hv.core_trap(0, API_SET_VERSION.number, &[group::KT_CPU, 1, 0]);
        if r.status != Status::EOK {
            driver.fault(format!(
                "api_set_version({:#x}, 1, 0) returned {}: no KT register can be reached",
                group::KT_CPU,
                r.status.name()
            ));
        }
        Ok(driver)
    }

    /// The hypervisor, for tests that check what the driver asked of it.
    pub fn hypervisor(&self) -> &Hypervisor {
        &self.hv
    }

    /// The hypervisor, to end another strand's PERF_CONFIG propagation mid-run.
    pub fn hypervisor_mut(&mut self) -> &mut Hypervisor {
        &mut self.hv
    }

    fn fault(&mut self, why: String) {
        if !self.faults.contains(&why) {
            self.faults.push(why);
        }
    }

    fn set(&mut self, strand: usize, perfreg: u64, value: u64) -> Status {
        self.hv.fast_trap(strand, KT_SET_PERFREG.number, &[perfreg, value]).status
    }

    fn get(&mut self, perfreg: u64) -> Result<u64, Status> {
        let r = self.hv.fast_trap(0, KT_GET_PERFREG.number, &[perfreg]);
        match r.status {
            Status::EOK => Ok(r.ret1.unwrap_or(0)),
            status => Err(status),
        }
    }

    /// PERF_CONFIG, then every strand's PCR, then every pic0 zeroed.
    fn start_clc(&mut self, set: &EncodedSet) {
        let perf_config = value_of(set, L2_CONTROL_VIRTUAL.name);
        let mut status = Status::EWOULDBLOCK;
        for _ in 0..L2_ATTEMPTS {
            status = self.set(0, L2_CONTROL_PERFREG, perf_config);
            if status != Status::EWOULDBLOCK {
                break;
            }
        }
        let event = set.events.first().map_or(String::new(), |e| e.name.clone());
        if status != Status::EOK {
            self.fault(format!(
                "{event}: kt_set_perfreg(PerfReg# {L2_CONTROL_PERFREG}, PERF_CONFIG {perf_config}) returned {}{}: not counted",
                status.name(),
                if status == Status::EWOULDBLOCK { format!(" {L2_ATTEMPTS} times") } else { String::new() }
            ));
            self.clc = Some(ClcSet { strands: Vec::new(), last: Vec::new(), total: Vec::new() });
            return;
        }
        let pcr = value_of(set, SPARC_PCR.name);
        let mut strands = Vec::new();
        for strand in 0..self.hv.vcpus() {
            let mut status = self.set(strand, SPARC_PCR_PERFREG, pcr);
            if status == Status::ENOACCESS && HT.get(pcr) == 1 {
                // §3.0: "The access to write to the HT bit can be denied".
                status = self.set(strand, SPARC_PCR_PERFREG, HT.set(pcr, 0));
                if status == Status::EOK {
                    self.fault(format!("{event}: the guest may not set SPARC PCR.HT (ENOACCESS): hyperprivileged misses are not counted"));
                }
            }
            if status != Status::EOK {
                self.fault(format!(
                    "{event}: kt_set_perfreg(PerfReg# 0) on strand {strand} returned {}: that strand is not counted",
                    status.name()
                ));
                continue;
            }
            if let Some(kt) = self.hv.kt_mut() {
                kt.wr_pic(strand, 0);
            }
            strands.push(strand);
        }
        if strands.is_empty() {
            self.fault(format!("{event}: no strand's PCR could be programmed: not counted"));
        }
        let last = vec![0; self.hv.vcpus()];
        self.clc = Some(ClcSet { strands, total: last.clone(), last });
    }

    /// Every MCU of every node: the select codes, then both counter registers zeroed.
    fn start_dram(&mut self, set: &EncodedSet) {
        let ctl = value_of(set, pmukit_arch::sparc::kt::DRAM_PERF_CTL.name);
        let nodes = self.hv.kt().map_or(0, |kt| kt.nodes());
        let mut mcus = Vec::new();
        for node in 0..nodes {
            for mcu in 0..MCUS_PER_NODE {
                let refused = DramReg::ALL
                    .iter()
                    .map(|&reg| (reg, self.set(0, dram_perfreg(node, mcu, reg), if reg == DramReg::Pcr { ctl } else { 0 })))
                    .find(|(_, status)| *status != Status::EOK);
                match refused {
                    None => mcus.push((node, mcu)),
                    Some((reg, status)) => self.fault(format!(
                        "node {node} MCU{mcu}: kt_set_perfreg(PerfReg# {}) returned {}: its memory traffic is not counted",
                        dram_perfreg(node, mcu, reg),
                        status.name()
                    )),
                }
            }
        }
        let counters = set.assignment.clone();
        let slots = nodes * MCUS_PER_NODE;
        self.dram = Some(DramSet { counters, mcus, last: vec![[0; 4]; slots], total: vec![[0; 4]; slots] });
    }

    fn sample(&mut self) {
        if let Some(mut clc) = self.clc.take() {
            for &strand in &clc.strands {
                let now = self.hv.kt().and_then(|kt| kt.rd_pic(strand)).map_or(0, |pic| PIC0.get(pic));
                clc.total[strand] += now.wrapping_sub(clc.last[strand]) & PIC0.max();
                clc.last[strand] = now;
            }
            self.clc = Some(clc);
        }
        if let Some(mut dram) = self.dram.take() {
            let mut kept = Vec::new();
            for (node, mcu) in std::mem::take(&mut dram.mcus) {
                match self.sample_mcu(&mut dram, node, mcu) {
                    Ok(()) => kept.push((node, mcu)),
                    Err((perfreg, status)) => self.fault(format!(
                        "node {node} MCU{mcu}: kt_get_perfreg(PerfReg# {perfreg}) returned {}: its memory traffic is not counted",
                        status.name()
                    )),
                }
            }
            dram.mcus = kept;
            self.dram = Some(dram);
        }
    }

    /// Read the counter registers the set uses; a counter's sticky bit says it wrapped
    /// since the previous read, and is cleared (T4 TABLES 10-5, 10-6; TK4, TK10).
    fn sample_mcu(&mut self, dram: &mut DramSet, node: usize, mcu: usize) -> Result<(), (u64, Status)> {
        let slot = node * MCUS_PER_NODE + mcu;
        for reg in [DramReg::Pic01, DramReg::Pic23] {
            let used: Vec<usize> = dram.counters.iter().copied().filter(|&n| DRAM_COUNTERS[n].3 == reg).collect();
            if used.is_empty() {
                continue;
            }
            let perfreg = dram_perfreg(node, mcu, reg);
            let value = self.get(perfreg).map_err(|s| (perfreg, s))?;
            let mut cleared = value;
            for n in used {
                let (_, counter, sticky, _) = DRAM_COUNTERS[n];
                let now = counter.get(value);
                let wrapped = sticky.get(value) << counter.width();
                dram.total[slot][n] += (now + wrapped).wrapping_sub(dram.last[slot][n]);
                dram.last[slot][n] = now;
                cleared = sticky.set(cleared, 0);
            }
            if cleared != value {
                let status = self.set(0, perfreg, cleared);
                if status != Status::EOK {
                    return Err((perfreg, status));
                }
            }
        }
        Ok(())
    }
}

impl Driver for KtDriver {
    fn start(&mut self, set: &EncodedSet) {
        if set.pmu == SPARC_KT.name {
            self.start_clc(set);
        } else {
            self.start_dram(set);
        }
    }

    /// The strands (virtual CPUs), or each node's memory controllers (`N1-MCU0`).
    fn units(&self, pmu: &str) -> Vec<Unit> {
        if pmu == SPARC_KT.name {
            return (0..self.hv.vcpus()).map(Unit::cpu).collect();
        }
        let nodes = self.hv.kt().map_or(0, |kt| kt.nodes());
        (0..nodes).flat_map(|node| (0..MCUS_PER_NODE).map(move |mcu| Unit::shared(format!("N{node}-MCU{mcu}")))).collect()
    }

    fn stop(&mut self, pmu: &str) -> Vec<Reading> {
        self.sample();
        if pmu == SPARC_KT.name {
            let Some(clc) = self.clc.take() else { return Vec::new() };
            for &strand in &clc.strands {
                self.set(strand, SPARC_PCR_PERFREG, 0);
            }
            return vec![(!clc.strands.is_empty()).then(|| clc.strands.iter().map(|&s| (s, clc.total[s])).collect())];
        }
        // DRAM counters cannot be disabled: stopping is the last read.
        let Some(dram) = self.dram.take() else { return Vec::new() };
        dram.counters
            .iter()
            .map(|&n| {
                (!dram.mcus.is_empty()).then(|| {
                    dram.mcus.iter().map(|&(node, mcu)| node * MCUS_PER_NODE + mcu).map(|slot| (slot, dram.total[slot][n])).collect()
                })
            })
            .collect()
    }

    fn interrupts(&self) -> u64 {
        0
    }

    fn notes(&self) -> Vec<String> {
        self.faults.clone()
    }
}

impl<const F: usize> Runs<F> for KtDriver {
    fn run(&mut self, cursor: &mut Cursor<F>, cycles: u64) -> u64 {
        let mut done = 0;
        while done < cycles {
            let (ran, exit) = engine::run(&mut self.hv, cursor, (cycles - done).min(POLL_CYCLES - self.since_poll));
            done += ran;
            self.since_poll += ran;
            if self.since_poll >= POLL_CYCLES || exit == Exit::Overflow {
                self.sample();
                self.since_poll = 0;
            }
            if exit == Exit::EndOfStream {
                break;
            }
        }
        done
    }
}
