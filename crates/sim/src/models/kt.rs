//! The SPARC KT (T3) performance registers behind the sun4v `kt_get_perfreg` /
//! `kt_set_perfreg` calls ("KT performance registers" §3): every strand's SPARC PCR,
//! the L2 control register of every bank behind one virtualized register, and the DRAM
//! registers of both MCUs of every node.
//!
//! A [`Kt`] is built from a [`KtConfig`] (nodes, what this guest may access, whether an
//! L2 propagation is in flight) and reached through [`Kt::get`] and [`Kt::set`], which
//! [`crate::models::sun4v::Hypervisor`] calls for FAST_TRAP 0x122 and 0x123. The engine
//! ([`crate::engine`]) drives the DRAM counters through [`Counting`]. Every number comes
//! from `pmukit_arch::sparc::kt`; `docs/kt.md` describes the model and its readings of
//! the text (entries TK1 up).
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic))]

use std::collections::BTreeSet;

use pmukit_arch::sparc::kt::{
    bank_with_virtual, perfreg, perfregs, virtual_of_bank, DramReg, Target, DRAM_COUNTERS, HT, L2_BANKS_PER_NODE, L2_CONTROL,
    L2_CONTROL_VIRTUAL, L2_PERF_CONFIG, MAX_NODES, MCUS_PER_NODE, PERF_CONFIG_ALL_MISSES, PERF_CONFIG_CACHE_TO_CACHE, PERF_CONFIG_LOCAL,
    PERF_CONFIG_REMOTE, PIC0, SPARC_PCR, SPARC_PIC, ST, UT,
};
use pmukit_arch::sparc::sun4v::Status;
use serde::Serialize;
use thiserror::Error;

use crate::engine::{Counters, Counting};
use crate::models::t4_dram::{select, Scope, Select};
use crate::stream::{Privilege, Signal, Span};

/// DRAM counters per MCU (§2.2: "four performance counters").
pub const COUNTERS_PER_MCU: usize = DRAM_COUNTERS.len();
/// Bytes per memory transaction, the L2 line; the line address routes it ([`route`]).
pub const LINE_BYTES: u64 = 64;
/// COU ports per MCU, one per counter (the T4 layout's "cou0 port0" ... "cou1 port1").
const PORTS: u64 = COUNTERS_PER_MCU as u64;
/// Memory channels per MCU (the T4 layout's select codes 1011₂, 1100₂).
const CHANNELS: u64 = 2;

/// What a guest's KT performance registers look like: the machine and the guest's rights.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct KtConfig {
    /// Nodes (sockets) 0..nodes, 1 to [`MAX_NODES`] (§2.0).
    pub nodes: usize,
    /// PerfReg#s this guest may not read: `kt_get_perfreg` answers ENOACCESS (§3.2).
    pub denied_get: Vec<u64>,
    /// PerfReg#s this guest may not write: `kt_set_perfreg` answers ENOACCESS.
    pub denied_set: Vec<u64>,
    /// May this guest set the SPARC PCR's HT bit? If not, a `kt_set_perfreg` of PerfReg# 0
    /// with HT set answers ENOACCESS (§3.0).
    pub ht_allowed: bool,
    /// Another strand is propagating PERF_CONFIG to the L2 banks when the guest starts:
    /// PerfReg# 1 answers EWOULDBLOCK until [`Kt::set_l2_busy`] clears it (TK12).
    pub l2_busy: bool,
}

impl Default for KtConfig {
    /// A one-node machine (a SPARC T3-1) whose guest may read and write every register,
    /// HT bit included, with no propagation in flight.
    fn default() -> Self {
        KtConfig { nodes: 1, denied_get: Vec::new(), denied_set: Vec::new(), ht_allowed: true, l2_busy: false }
    }
}

/// Why a [`KtConfig`] cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum KtConfigError {
    #[error("a KT machine has 1 to {MAX_NODES} nodes (KT performance registers §2.0: up to four-way glueless), not {0}")]
    Nodes(usize),
    #[error("PerfReg# {number} is denied, but a {nodes}-node KT machine has PerfReg# 0 to {last} only (§3.1)", last = 1 + nodes * 6)]
    NoSuchPerfReg { number: u64, nodes: usize },
}

/// One node's DRAM registers: per MCU, in `DramReg::ALL` order.
type NodeDram = [[u64; DramReg::ALL.len()]; MCUS_PER_NODE];

/// The KT performance registers of one machine, as a guest may observe them through the
/// calls, plus the configuration that decides which calls succeed. `PartialEq` compares
/// all of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kt {
    nodes: usize,
    /// Per strand (vCPU), the SPARC PCR.
    pcr: Vec<u64>,
    /// Per strand, the SPARC PIC (ASR 0x11).
    pic: Vec<u64>,
    /// Per node, per bank (node × 16 + bank), the L2 control register.
    l2_banks: Vec<u64>,
    /// Per node, the DRAM registers of its MCUs.
    dram: Vec<NodeDram>,
    denied_get: BTreeSet<u64>,
    denied_set: BTreeSet<u64>,
    ht_allowed: bool,
    l2_busy: bool,
}

impl Kt {
    /// Every register at its reset value (0: the text gives none; PERF_CONFIG 0 is the
    /// default "all L2 misses", TK6) for `strands` strands.
    pub fn new(config: &KtConfig, strands: usize) -> Result<Kt, KtConfigError> {
        let nodes = config.nodes;
        let present = perfregs(nodes).ok_or(KtConfigError::Nodes(nodes))?;
        if let Some(&number) = config.denied_get.iter().chain(&config.denied_set).find(|&&n| !present.iter().any(|r| r.number == n)) {
            return Err(KtConfigError::NoSuchPerfReg { number, nodes });
        }
        let reset_mcu = DramReg::ALL.map(|r| r.register().reset);
        Ok(Kt {
            nodes,
            pcr: vec![SPARC_PCR.reset; strands],
            pic: vec![SPARC_PIC.reset; strands],
            l2_banks: vec![L2_CONTROL.reset; nodes * L2_BANKS_PER_NODE],
            dram: vec![[reset_mcu; MCUS_PER_NODE]; nodes],
            denied_get: config.denied_get.iter().copied().collect(),
            denied_set: config.denied_set.iter().copied().collect(),
            ht_allowed: config.ht_allowed,
            l2_busy: config.l2_busy,
        })
    }

    pub fn nodes(&self) -> usize {
        self.nodes
    }

    /// `kt_get_perfreg(perfreg)` on `strand` (§3.2.1): the register's value, or the
    /// status of the first check that fails (docs/kt.md, "Errors"). Changes nothing.
    pub fn get(&self, strand: usize, perfreg: u64) -> Result<u64, Status> {
        let target = self.resolve(perfreg)?;
        if self.denied_get.contains(&perfreg) {
            return Err(Status::ENOACCESS);
        }
        match target {
            Target::SparcPcr => self.pcr.get(strand).map(|&v| SPARC_PCR.read(v)).ok_or(Status::ENOCPU),
            Target::L2Control => {
                if self.l2_busy {
                    return Err(Status::EWOULDBLOCK);
                }
                // Every bank holds the same PERF_CONFIG (only `set` writes it, to all).
                Ok(L2_CONTROL_VIRTUAL.read(self.l2_banks.first().map_or(0, |&bank| virtual_of_bank(bank))))
            }
            // `resolve` refused the nodes this machine lacks: the register exists.
            Target::Dram { node, mcu, reg } => self.dram(node, mcu, reg).map(|v| reg.register().read(v)).ok_or(Status::ENOTSUPPORTED),
        }
    }

    /// `kt_set_perfreg(perfreg, value)` on `strand` (§3.2.2). On an error nothing changes.
    pub fn set(&mut self, strand: usize, perfreg: u64, value: u64) -> Result<(), Status> {
        let target = self.resolve(perfreg)?;
        if self.denied_set.contains(&perfreg) {
            return Err(Status::ENOACCESS);
        }
        match target {
            Target::SparcPcr => {
                // §3.0: "The access to write to the HT bit can be denied, in which case
                // the sun4v API returns ENOACCESS."
                if !self.ht_allowed && HT.get(value) != 0 {
                    return Err(Status::ENOACCESS);
                }
                let pcr = self.pcr.get_mut(strand).ok_or(Status::ENOCPU)?;
                *pcr = SPARC_PCR.apply_write(*pcr, value).stored;
            }
            Target::L2Control => {
                if self.l2_busy {
                    return Err(Status::EWOULDBLOCK);
                }
                // Bits 63:2 are not exposed: ignored (TK7).
                let virtual_value = L2_CONTROL_VIRTUAL.apply_write(0, value).stored;
                for bank in &mut self.l2_banks {
                    *bank = bank_with_virtual(*bank, virtual_value);
                }
            }
            Target::Dram { node, mcu, reg } => {
                // `resolve` refused the nodes this machine lacks: the register exists.
                let stored = self.dram.get_mut(node).and_then(|d| d.get_mut(mcu)?.get_mut(reg.index())).ok_or(Status::ENOTSUPPORTED)?;
                // Reserved bits are ignored, sticky bits can be cleared, never set (TK10).
                *stored = reg.register().apply_write(*stored, value).stored;
            }
        }
        Ok(())
    }

    /// EINVAL beyond the §3.1 table (PerfReg# 26 up); ENOTSUPPORTED for a row of a node
    /// this machine does not have (TK2).
    fn resolve(&self, number: u64) -> Result<Target, Status> {
        let row = perfreg(number).ok_or(Status::EINVAL)?;
        match row.target {
            Target::Dram { node, .. } if node >= self.nodes => Err(Status::ENOTSUPPORTED),
            target => Ok(target),
        }
    }

    /// Is another strand propagating PERF_CONFIG to the L2 banks (TK12)?
    pub fn l2_busy(&self) -> bool {
        self.l2_busy
    }

    /// Start (`true`) or end another strand's PERF_CONFIG propagation: the model's
    /// stand-in for the concurrency a single-threaded simulation does not have.
    pub fn set_l2_busy(&mut self, busy: bool) {
        self.l2_busy = busy;
    }

    /// `rd %pic` on `strand`: privileged code reads the PIC directly (§2.1).
    pub fn rd_pic(&self, strand: usize) -> Option<u64> {
        self.pic.get(strand).copied()
    }

    /// `wr %pic` on `strand` (§2.1); `false` for a strand that does not exist.
    pub fn wr_pic(&mut self, strand: usize, value: u64) -> bool {
        self.pic.get_mut(strand).map(|pic| *pic = SPARC_PIC.apply_write(*pic, value).stored).is_some()
    }

    /// The node a strand belongs to: strands are spread evenly, in order, over the nodes.
    pub fn node_of(&self, strand: usize) -> usize {
        strand * self.nodes / self.pcr.len().max(1)
    }

    /// The SPARC PCR of `strand`, as stored.
    pub fn pcr(&self, strand: usize) -> Option<u64> {
        self.pcr.get(strand).copied()
    }

    /// Bank `bank` (0-15) of node `node`'s L2 control register, as stored.
    pub fn l2_bank(&self, node: usize, bank: usize) -> Option<u64> {
        if node >= self.nodes || bank >= L2_BANKS_PER_NODE {
            return None;
        }
        self.l2_banks.get(node * L2_BANKS_PER_NODE + bank).copied()
    }

    /// DRAM register `reg` of MCU `mcu` of node `node`, as stored.
    pub fn dram(&self, node: usize, mcu: usize, reg: DramReg) -> Option<u64> {
        self.dram.get(node)?.get(mcu)?.get(reg.index()).copied()
    }

    /// The TABLE 10-7 meaning of counter `n`'s select code in node `node`'s MCU `mcu`
    /// (TK11); `None` for a reserved code.
    fn program(&self, node: usize, mcu: usize, n: usize) -> Option<Select> {
        let ctl = self.dram(node, mcu, DramReg::Pcr)?;
        select(DRAM_COUNTERS.get(n)?.0.get(ctl))
    }
}

/// Where a memory transaction goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Route {
    pub node: usize,
    pub mcu: usize,
    /// COU port 0-3: counter n's port is n.
    pub port: usize,
    pub channel: usize,
}

/// The model's interleaving on a `nodes`-node machine (the text gives none, TK13):
/// consecutive 64-byte lines go round every MCU of every node (node-major: line L to
/// MCU `L mod 2` of node `(L / 2) mod nodes`), then every `2 × nodes` lines to the next
/// COU port and every `8 × nodes` to the other channel. Modulo, not bit fields: a
/// machine may have three nodes.
pub fn route(pa: u64, nodes: usize) -> Route {
    let line = pa / LINE_BYTES;
    let mcus = (nodes.max(1) * MCUS_PER_NODE) as u64;
    let g = line % mcus;
    let rest = line / mcus;
    Route {
        node: (g / MCUS_PER_NODE as u64) as usize,
        mcu: (g % MCUS_PER_NODE as u64) as usize,
        port: (rest % PORTS) as usize,
        channel: (rest / PORTS % CHANNELS) as usize,
    }
}

impl Kt {
    fn dram_counters(&self) -> usize {
        self.nodes * MCUS_PER_NODE * COUNTERS_PER_MCU
    }

    /// Does `strand`'s PCR count in `privilege` (ht, st, ut: TK5, TK16)?
    fn traces(&self, strand: usize, privilege: Privilege) -> bool {
        let Some(&pcr) = self.pcr.get(strand) else { return false };
        match privilege {
            Privilege::Hyper => HT.get(pcr) == 1,
            p if p.is_user() => UT.get(pcr) == 1,
            _ => ST.get(pcr) == 1,
        }
    }

    /// L2 misses per cycle of `span` on `strand` that its L2 bank's PERF_CONFIG selects:
    /// those served by memory, local or remote by the line's home node, and those
    /// another node's cache served (`CacheToCacheFills`, TK17).
    fn clc_rate<const F: usize>(&self, strand: usize, span: &Span<F>) -> u64 {
        if usize::from(span.thread) != strand || !self.traces(strand, span.privilege) {
            return 0;
        }
        let (memory, c2c) = (span.signals.get(Signal::MemoryReads), span.signals.get(Signal::CacheToCacheFills));
        if memory + c2c == 0 {
            return 0;
        }
        let addr = span.address();
        let node = self.node_of(strand);
        let bank = (addr / LINE_BYTES % L2_BANKS_PER_NODE as u64) as usize;
        let local = route(addr, self.nodes).node == node;
        // The strand exists (`traces`), so its node does.
        let Some(control) = self.l2_bank(node, bank) else { return 0 };
        match L2_PERF_CONFIG.get(control) {
            PERF_CONFIG_ALL_MISSES => memory + c2c,
            PERF_CONFIG_LOCAL if local => memory,
            PERF_CONFIG_REMOTE if !local => memory,
            PERF_CONFIG_CACHE_TO_CACHE => c2c,
            _ => 0,
        }
    }
}

/// Virtual counter `(node × 2 + mcu) × 4 + n` is DRAM counter n of that MCU; the
/// strands' pic0 follow, strand s at `nodes × 8 + s`. No counter raises an interrupt
/// (the text describes none): a DRAM counter's wrap sets its sticky bit, pic0 wraps
/// silently (TK16).
impl Counters for Kt {
    fn counters(&self) -> usize {
        self.dram_counters() + self.pic.len()
    }

    fn headroom(&self, i: usize) -> u64 {
        if let Some(strand) = i.checked_sub(self.dram_counters()) {
            return PIC0.max() + 1 - self.pic.get(strand).map_or(0, |&v| PIC0.get(v));
        }
        let (node, mcu, n) = (i / (MCUS_PER_NODE * COUNTERS_PER_MCU), i / COUNTERS_PER_MCU % MCUS_PER_NODE, i % COUNTERS_PER_MCU);
        // `n` is below COUNTERS_PER_MCU; a counter that did not exist would never wrap.
        let Some(&(_, counter, _, reg)) = DRAM_COUNTERS.get(n) else { return u64::MAX };
        counter.max() + 1 - self.dram(node, mcu, reg).map_or(0, |v| counter.get(v))
    }

    /// A 31-bit counter wraps to 0 and sets its sticky bit (T4 TABLES 10-5, 10-6; TK4).
    fn add(&mut self, i: usize, by: u64) -> bool {
        if let Some(strand) = i.checked_sub(self.dram_counters()) {
            if let Some(pic) = self.pic.get_mut(strand) {
                *pic = PIC0.set(*pic, PIC0.get(*pic).wrapping_add(by) & PIC0.max());
            }
            return false;
        }
        let (node, mcu, n) = (i / (MCUS_PER_NODE * COUNTERS_PER_MCU), i / COUNTERS_PER_MCU % MCUS_PER_NODE, i % COUNTERS_PER_MCU);
        let Some(&(_, counter, sticky, reg)) = DRAM_COUNTERS.get(n) else { return false };
        let Some(value) = self.dram.get_mut(node).and_then(|d| d.get_mut(mcu)?.get_mut(reg.index())) else { return false };
        let total = counter.get(*value) + by;
        *value = counter.set(*value, total);
        // A wrap stops the engine so that the driver reads the counter (TD15).
        let wrapped = total > counter.max();
        if wrapped {
            *value = sticky.set(*value, 1);
        }
        wrapped
    }
}

impl<const F: usize> Counting<F> for Kt {
    fn rate(&self, i: usize, span: &Span<F>) -> u64 {
        if let Some(strand) = i.checked_sub(self.dram_counters()) {
            return self.clc_rate(strand, span);
        }
        let (reads, writes) = (span.signals.get(Signal::MemoryReads), span.signals.get(Signal::MemoryWrites));
        if reads + writes == 0 {
            return 0;
        }
        let (node, mcu, n) = (i / (MCUS_PER_NODE * COUNTERS_PER_MCU), i / COUNTERS_PER_MCU % MCUS_PER_NODE, i % COUNTERS_PER_MCU);
        let Some(Select { measure, scope }) = self.program(node, mcu, n) else { return 0 };
        // The first iteration's data address (else the instruction fetch), so the rate is
        // constant over the span.
        let to = route(span.address(), self.nodes);
        let seen = match scope {
            Scope::Port => to.port == n,
            Scope::Combined => true,
            Scope::Channel(c) => to.channel == c,
        };
        if to.node != node || to.mcu != mcu || !seen {
            return 0;
        }
        measure.count(reads, writes, &span.queues)
    }

    /// Where a span's memory transactions route (node, MCU, port, channel) and the L2
    /// bank its line is in. A span without a memory transaction or a cache-to-cache
    /// fill counts nothing wherever its address is: every such span is of one class,
    /// so the engine asks for their rates once a kind rather than once an address.
    fn address_class(&self, span: &Span<F>) -> u64 {
        let moved = [Signal::MemoryReads, Signal::MemoryWrites, Signal::CacheToCacheFills];
        if moved.iter().all(|&s| span.signals.get(s) == 0) {
            return 0;
        }
        let addr = span.address();
        let to = route(addr, self.nodes);
        let bank = addr / LINE_BYTES % L2_BANKS_PER_NODE as u64;
        to.node as u64 | (to.mcu as u64) << 16 | (to.port as u64) << 24 | (to.channel as u64) << 32 | bank << 40
    }
}
