//! Register-level model of the SPARC T4 memory-controller (DRAM) performance counters
//! (SPARC T4 Supplement, chapter 10, §10.5, TABLES 10-4 to 10-7).
//!
//! A [`T4Dram`] holds the DRAM_PERF_CTL_REG, DRAM_PERF_COUNT01_REG and
//! DRAM_PERF_COUNT23_REG of every MCU. Software reaches them only by physical address,
//! through [`T4Dram::read`] and [`T4Dram::write`], each made by one of the two
//! [`Owner`]s §10.5 assigns the counters to. The engine ([`crate::engine`]) drives the
//! counters through [`Counting`]. Which MCU, COU port and memory channel a memory
//! transaction reaches is decided by [`route`]. `docs/t4-dram-model.md` describes the
//! model and every reading of the spec it makes (entries TD1-TD14).
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic))]

use std::fmt;

use pmukit_arch::sparc::t4::{DRAM_COUNTERS, DRAM_MAP, DRAM_PERF_COUNT01, DRAM_PERF_CTL, DRAM_STEP};
use pmukit_core::register::{Field, Register, RegisterError};
use thiserror::Error;

use crate::engine::{Counters, Counting};
use crate::models::Reports;
use crate::stream::{MemoryQueues, Signal, Span};

/// MCUs with DRAM performance registers: the largest "Count" of TABLES 10-4 to 10-6
/// (DRAM_PERF_CTL_REG and DRAM_PERF_COUNT01_REG exist on 4).
pub const MCUS: usize = mcus();
/// §10.5: "The memory controller has four performance counters", one per COU port.
pub const COUNTERS_PER_MCU: usize = DRAM_COUNTERS.len();
/// Bytes per memory transaction: the T4 L2/L3 line. The address bits above it select
/// MCU, COU port and channel ([`route`]).
pub const LINE_BYTES: u64 = 64;

/// TABLE 10-7, 1000₂: "both the memory channels, 0 and 1".
const CHANNELS: usize = 2;
const LINE_SHIFT: u32 = LINE_BYTES.trailing_zeros();
/// Line-address bits `[1:0]` select the MCU (`PA[7:6]`), `[3:2]` the COU port (`PA[9:8]`),
/// `[4]` the memory channel (`PA[10]`).
const MCU_BITS: u32 = MCUS.trailing_zeros();
const PORT_BITS: u32 = COUNTERS_PER_MCU.trailing_zeros();
const CHANNEL_BITS: u32 = CHANNELS.trailing_zeros();
// Bit-field interleaving needs power-of-two counts of each.
const _: () = assert!(MCUS.is_power_of_two() && COUNTERS_PER_MCU.is_power_of_two() && CHANNELS.is_power_of_two());

/// Index into `DRAM_MAP` (and each MCU's register array) of DRAM_PERF_CTL_REG, and of
/// the register holding each counter. Resolved at compile time from the arch tables.
const CTL: usize = {
    // A `&'static` to the register, as DRAM_MAP holds it (a temporary would need a drop).
    const REGISTER: &Register = &DRAM_PERF_CTL;
    slot_of(REGISTER)
};
const COUNT_SLOT: [usize; COUNTERS_PER_MCU] = {
    let [c0, c1, c2, c3] = DRAM_COUNTERS;
    [slot_of(c0.3), slot_of(c1.3), slot_of(c2.3), slot_of(c3.3)]
};
// A register missing from DRAM_MAP fails the build here rather than counting nothing.
const _: () = {
    let [c0, c1, c2, c3] = COUNT_SLOT;
    let end = DRAM_MAP.len();
    assert!(CTL < end && c0 < end && c1 < end && c2 < end && c3 < end, "register missing from DRAM_MAP");
};

const fn mcus() -> usize {
    let mut most = 0;
    let mut rest: &[(&Register, u64, u32)] = &DRAM_MAP;
    while let [(_, _, count), tail @ ..] = rest {
        if *count > most {
            most = *count;
        }
        rest = tail;
    }
    most as usize
}

/// Position of `register` in `DRAM_MAP`; for a register missing from it,
/// `DRAM_MAP.len()`, which every lookup misses (and the assertion above rejects).
const fn slot_of(register: &Register) -> usize {
    let (mut slot, mut rest): (usize, &[(&Register, u64, u32)]) = (0, &DRAM_MAP);
    while let [(candidate, _, _), tail @ ..] = rest {
        if same_name(candidate.name, register.name) {
            break;
        }
        (slot, rest) = (slot + 1, tail);
    }
    slot
}

const fn same_name(a: &str, b: &str) -> bool {
    let (mut a, mut b) = (a.as_bytes(), b.as_bytes());
    while let ([x, a_tail @ ..], [y, b_tail @ ..]) = (a, b) {
        if *x != *y {
            return false;
        }
        (a, b) = (a_tail, b_tail);
    }
    a.is_empty() && b.is_empty()
}

/// DRAM counter `n`'s counter field, its sticky bit and the `DRAM_MAP` index of the
/// register holding both.
fn counter(n: usize) -> Option<(&'static Field, &'static Field, usize)> {
    let &(_, counter, sticky, _) = DRAM_COUNTERS.get(n)?;
    Some((counter, sticky, *COUNT_SLOT.get(n)?))
}

/// The two pieces of software §10.5 assigns the DRAM counters to: "Solaris has been
/// assigned DRAM_PERF_COUNT01_REG … The Power Management (PM) Software has been
/// assigned DRAM_PERF_COUNT23_REG".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Owner {
    Solaris,
    PowerManagement,
}

impl Owner {
    /// The owner of DRAM counter `n` (0-3): the owner of the register that holds it.
    pub fn of_counter(n: usize) -> Option<Owner> {
        DRAM_COUNTERS.get(n).map(|(_, _, _, register)| Owner::of_register(register))
    }

    fn of_register(register: &Register) -> Owner {
        if register.name == DRAM_PERF_COUNT01.name {
            Owner::Solaris
        } else {
            Owner::PowerManagement
        }
    }
}

impl fmt::Display for Owner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Owner::Solaris => "Solaris",
            Owner::PowerManagement => "the power management software",
        })
    }
}

/// Why a register access was refused. A refused access changes nothing.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DramError {
    /// The registers are 64 bits wide; the spec gives no narrower access.
    #[error("physical address {pa:#x} is not 8-byte aligned: the DRAM performance registers are 64-bit (TABLES 10-4 to 10-6)")]
    Misaligned { pa: u64 },
    /// No DRAM performance register at this address.
    #[error("no DRAM performance register at physical address {pa:#x} (TABLES 10-4 to 10-6: 0xF804_0000_0408, 0410, 0418 + 4096 × MCU)")]
    Unmapped { pa: u64 },
    /// The address is `register`'s slot in an MCU beyond the table's Count.
    #[error("{register} exists on MCUs 0 to {} only (Count {count}); physical address {pa:#x} would be MCU {mcu}'s", count - 1)]
    NoSuchRegister { pa: u64, register: &'static str, mcu: usize, count: u32 },
    /// The written value sets reserved bits.
    #[error("write of {value:#x} to physical address {pa:#x} refused: {source}")]
    Reserved { pa: u64, value: u64, source: RegisterError },
    /// §10.5: the register, or the select field `field` of DRAM_PERF_CTL_REG, belongs to
    /// the other owner.
    #[error("{owner} may not change MCU {mcu} {register}{}: §10.5 assigns it to {holder} (reads are allowed)", dotted(.field))]
    NotOwner { owner: Owner, mcu: usize, register: &'static str, field: Option<&'static str>, holder: Owner },
}

fn dotted(field: &Option<&'static str>) -> String {
    field.map(|f| format!(".{f}")).unwrap_or_default()
}

/// Reads, writes or both (TABLE 10-7).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Traffic {
    Reads,
    Writes,
    ReadsWrites,
}

impl Traffic {
    fn of(self, reads: u64, writes: u64) -> u64 {
        match self {
            Traffic::Reads => reads,
            Traffic::Writes => writes,
            Traffic::ReadsWrites => reads + writes,
        }
    }
}

/// What a select code measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Measure {
    /// One per transaction (0000₂-0010₂, 1000₂, 1010₂-1100₂).
    Transactions(Traffic),
    /// n per cycle, n the transactions in the queue (0100₂-0110₂): the cycles each
    /// transaction spent queued, as the machine's memory controllers timed it.
    QueueLatency(Traffic),
    /// Cycles with requests queued and none able to issue for bank conflicts (0011₂).
    BankBusyStalls,
    /// Reads deferred behind a queued write of their line (0111₂).
    WritebackBufferHits,
    /// Writes that starved (1001₂).
    WritesStarved,
}

impl Measure {
    /// What the measure counts in a cycle carrying `reads` and `writes` transactions
    /// that met `queues` in the memory controllers.
    pub fn count(self, reads: u64, writes: u64, queues: &MemoryQueues) -> u64 {
        match self {
            Measure::Transactions(t) => t.of(reads, writes),
            Measure::QueueLatency(t) => t.of(u64::from(queues.read_cycles), u64::from(queues.write_cycles)),
            Measure::BankBusyStalls => u64::from(queues.bank_stall_cycles),
            Measure::WritebackBufferHits => u64::from(queues.writeback_hits),
            Measure::WritesStarved => u64::from(queues.writes_starved),
        }
    }
}

/// Which transactions of its MCU a counter sees (the event table's `scope`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Those of its own COU port: counter n, port n (TABLE 10-4).
    Port,
    /// All four COU ports, both channels.
    Combined,
    /// Those issued to one memory channel.
    Channel(usize),
}

/// The meaning of one TABLE 10-7 select code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Select {
    pub measure: Measure,
    pub scope: Scope,
}

/// TABLE 10-7: what select code `code` counts; `None` for the reserved codes 1101₂ and
/// 111x₂ (and anything wider than the 4-bit field).
pub fn select(code: u64) -> Option<Select> {
    use Measure::*;
    use Traffic::*;
    let (measure, scope) = match code {
        0x0 => (Transactions(Reads), Scope::Port),
        0x1 => (Transactions(Writes), Scope::Port),
        0x2 => (Transactions(ReadsWrites), Scope::Port),
        0x3 => (BankBusyStalls, Scope::Port),
        0x4 => (QueueLatency(Reads), Scope::Port),
        0x5 => (QueueLatency(Writes), Scope::Port),
        0x6 => (QueueLatency(ReadsWrites), Scope::Port),
        0x7 => (WritebackBufferHits, Scope::Port),
        0x8 => (Transactions(Reads), Scope::Combined),
        0x9 => (WritesStarved, Scope::Port),
        0xA => (Transactions(Writes), Scope::Combined),
        0xB => (Transactions(ReadsWrites), Scope::Channel(0)),
        0xC => (Transactions(ReadsWrites), Scope::Channel(1)),
        _ => return None,
    };
    Some(Select { measure, scope })
}

/// Where a memory transaction goes: MCU, COU port (0-3, counter n's port is n: 0 cou0
/// port0, 1 cou0 port1, 2 cou1 port0, 3 cou1 port1) and memory channel (0-1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Route {
    pub mcu: usize,
    pub port: usize,
    pub channel: usize,
}

impl Route {
    /// The route as an address class: MCU, port and channel a byte each.
    fn class(self) -> u64 {
        self.mcu as u64 | (self.port as u64) << 8 | (self.channel as u64) << 16
    }

    /// The route an address class holds.
    fn from_class(class: u64) -> Route {
        Route { mcu: (class & 0xff) as usize, port: (class >> 8 & 0xff) as usize, channel: (class >> 16 & 0xff) as usize }
    }
}

/// The model's interleaving (the spec gives none): consecutive 64-byte lines go to
/// consecutive MCUs (`PA[7:6]`), every fourth line to the next COU port (`PA[9:8]`), and
/// every sixteenth to the other channel (`PA[10]`). Port and channel are independent
/// bits, so each MCU's traffic splits over all four ports and both channels.
pub fn route(pa: u64) -> Route {
    let line = pa >> LINE_SHIFT;
    let bits = |lsb: u32, width: u32| ((line >> lsb) & ((1 << width) - 1)) as usize;
    Route { mcu: bits(0, MCU_BITS), port: bits(MCU_BITS, PORT_BITS), channel: bits(MCU_BITS + PORT_BITS, CHANNEL_BITS) }
}

/// Physical address of `register` in `mcu`, or `None` where the table's Count says the
/// MCU does not have it.
pub fn register_pa(register: &Register, mcu: usize) -> Option<u64> {
    let (_, base, count) = DRAM_MAP.iter().find(|(r, _, _)| r.name == register.name)?;
    (mcu < *count as usize).then(|| base + DRAM_STEP * mcu as u64)
}

/// The memory controllers' DRAM performance registers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct T4Dram {
    /// Per MCU, the value of each `DRAM_MAP` register, in `DRAM_MAP` order. Registers the
    /// MCU does not have stay at their reset value and are never reached.
    regs: [[u64; DRAM_MAP.len()]; MCUS],
    unpredictable: Reports,
}

impl Default for T4Dram {
    fn default() -> Self {
        T4Dram::new()
    }
}

impl T4Dram {
    /// Counter `n` of MCU `mcu`'s rate in `span`, whose transactions route `to`.
    fn routed_rate<const F: usize>(&self, mcu: usize, n: usize, span: &Span<F>, to: Route) -> u64 {
        let Some(Select { measure, scope }) = self.program(mcu, n) else { return 0 };
        let seen = match scope {
            Scope::Port => to.port == n,
            Scope::Combined => true,
            Scope::Channel(c) => to.channel == c,
        };
        if to.mcu != mcu || !seen {
            return 0;
        }
        // The whole wait of a transaction is credited in its arrival cycle: the span
        // after it may route elsewhere, and a span's rate must be constant.
        let (reads, writes) = (span.signals.get(Signal::MemoryReads), span.signals.get(Signal::MemoryWrites));
        measure.count(reads, writes, &span.queues)
    }

    /// Every register at its reset value: TABLES 10-4 to 10-6 give 0 for every field
    /// (10-4's reserved bits are "X", and read as 0 here).
    pub fn new() -> T4Dram {
        let reset = DRAM_MAP.map(|(register, _, _)| register.reset);
        T4Dram { regs: [reset; MCUS], unpredictable: Reports::default() }
    }

    /// Every programming whose effect the spec leaves undefined (reserved select codes),
    /// in order.
    pub fn unpredictable(&self) -> &Reports {
        &self.unpredictable
    }

    /// A 64-bit load from physical address `pa` by `owner`. Both owners may read every
    /// register: §10.5 divides who *uses* the counters, and reading changes nothing.
    pub fn read(&self, pa: u64, _owner: Owner) -> Result<u64, DramError> {
        let (mcu, slot, register) = decode(pa)?;
        // `decode` found the register, so the MCU has its slot.
        let value = self.reg(mcu, slot).ok_or(DramError::Unmapped { pa })?;
        Ok(register.read(value))
    }

    /// A 64-bit store of `value` to physical address `pa` by `owner`. Refused, changing
    /// nothing, when the address is not a register, the value sets reserved bits, or
    /// the write would change a select field or a counter register of the other owner
    /// (a write to DRAM_PERF_CTL_REG must carry the other owner's select fields as read).
    pub fn write(&mut self, pa: u64, value: u64, owner: Owner) -> Result<(), DramError> {
        let (mcu, slot, register) = decode(pa)?;
        register.check_write(value).map_err(|source| DramError::Reserved { pa, value, source })?;
        // `decode` found the register, so the MCU has its slot.
        let stored = self.regs.get_mut(mcu).and_then(|regs| regs.get_mut(slot)).ok_or(DramError::Unmapped { pa })?;
        if let Some((field, holder)) = trespass(slot, owner, *stored, value) {
            return Err(DramError::NotOwner { owner, mcu, register: register.name, field, holder });
        }
        // Counter fields are RW; sticky bits can be cleared, never set (docs/ERRATA.md T32).
        *stored = register.apply_write(*stored, value).stored;
        if slot == CTL {
            self.log_reserved_selects(mcu, owner);
        }
        Ok(())
    }

    /// TABLE 10-7: "1101₂ Reserved", "111x₂ Reserved": the counter counts nothing. Every
    /// DRAM_PERF_CTL_REG write that leaves one of the writer's own fields reserved is
    /// logged (the other owner's fields are its business).
    fn log_reserved_selects(&mut self, mcu: usize, owner: Owner) {
        let Some(ctl) = self.reg(mcu, CTL) else { return };
        for (n, (sel, _, _, register)) in DRAM_COUNTERS.iter().enumerate() {
            let code = sel.get(ctl);
            if Owner::of_register(register) == owner && select(code).is_none() {
                self.unpredictable.push(format!(
                    "MCU {mcu} DRAM_PERF_CTL_REG.{}: select code {code:#06b} is reserved (TABLE 10-7); counter {n} counts nothing",
                    sel.name
                ));
            }
        }
    }

    /// The select in force for counter `n` of `mcu`, if the counter exists and the code
    /// is not reserved.
    fn program(&self, mcu: usize, n: usize) -> Option<Select> {
        if !has_counter(mcu, n) {
            return None;
        }
        let (sel, _, _, _) = DRAM_COUNTERS.get(n)?;
        select(sel.get(self.reg(mcu, CTL)?))
    }

    /// MCU `mcu`'s register at `DRAM_MAP` index `slot`.
    fn reg(&self, mcu: usize, slot: usize) -> Option<u64> {
        self.regs.get(mcu)?.get(slot).copied()
    }
}

/// Does MCU `mcu` have counter `n`? Not counters 2-3 of MCUs 2-3 (TABLE 10-6,
/// DRAM_PERF_COUNT23_REG: Count 2).
fn has_counter(mcu: usize, n: usize) -> bool {
    COUNT_SLOT.get(n).and_then(|&slot| DRAM_MAP.get(slot)).is_some_and(|(_, _, count)| mcu < *count as usize)
}

/// The MCU, `DRAM_MAP` index and register at `pa`.
fn decode(pa: u64) -> Result<(usize, usize, &'static Register), DramError> {
    if !pa.is_multiple_of(8) {
        return Err(DramError::Misaligned { pa });
    }
    for (slot, (register, base, count)) in DRAM_MAP.iter().enumerate() {
        let Some(offset) = pa.checked_sub(*base).filter(|o| o.is_multiple_of(DRAM_STEP)) else { continue };
        let mcu = offset / DRAM_STEP;
        if mcu < u64::from(*count) {
            return Ok((mcu as usize, slot, register));
        }
        // An MCU that has the other registers but not this one: name the gap.
        if mcu < MCUS as u64 {
            return Err(DramError::NoSuchRegister { pa, register: register.name, mcu: mcu as usize, count: *count });
        }
    }
    Err(DramError::Unmapped { pa })
}

/// §10.5 as a policy: the other owner's select fields of DRAM_PERF_CTL_REG must keep
/// their value, and its counter register may not be written at all. Returns what the
/// write would trespass on (the whole register, or a select field) and whose it is.
fn trespass(slot: usize, owner: Owner, old: u64, value: u64) -> Option<(Option<&'static str>, Owner)> {
    for ((sel, _, _, counts), &count_slot) in DRAM_COUNTERS.iter().zip(&COUNT_SLOT) {
        let holder = Owner::of_register(counts);
        if holder == owner {
            continue;
        }
        if slot == count_slot {
            return Some((None, holder));
        }
        if slot == CTL && sel.get(old) != sel.get(value) {
            return Some((Some(sel.name), holder));
        }
    }
    None
}

/// Virtual counter `mcu × 4 + n` is DRAM counter n of that MCU. The counters raise no
/// interrupt (§10.5 describes none): a wrap sets the sticky bit, and `add` returns true
/// only so that the engine stops there and a driver reads the counter before it can
/// wrap again (standing for a driver that polls often enough; TD15).
impl Counters for T4Dram {
    fn counters(&self) -> usize {
        MCUS * COUNTERS_PER_MCU
    }

    fn headroom(&self, i: usize) -> u64 {
        let (mcu, n) = (i / COUNTERS_PER_MCU, i % COUNTERS_PER_MCU);
        // `n` is below COUNTERS_PER_MCU; a counter that did not exist would never wrap.
        let Some((counter, _, slot)) = counter(n) else { return u64::MAX };
        counter.max() + 1 - self.reg(mcu, slot).map_or(0, |v| counter.get(v))
    }

    /// TABLES 10-5, 10-6: a 31-bit counter wraps to 0 and sets its sticky bit.
    fn add(&mut self, i: usize, by: u64) -> bool {
        let (mcu, n) = (i / COUNTERS_PER_MCU, i % COUNTERS_PER_MCU);
        if !has_counter(mcu, n) {
            return false;
        }
        let Some((counter, sticky, slot)) = counter(n) else { return false };
        let Some(reg) = self.regs.get_mut(mcu).and_then(|regs| regs.get_mut(slot)) else { return false };
        let total = counter.get(*reg) + by;
        *reg = counter.set(*reg, total);
        let wrapped = total > counter.max();
        if wrapped {
            *reg = sticky.set(*reg, 1);
        }
        wrapped
    }
}

impl<const F: usize> Counting<F> for T4Dram {
    fn rate(&self, i: usize, span: &Span<F>) -> u64 {
        let (reads, writes) = (span.signals.get(Signal::MemoryReads), span.signals.get(Signal::MemoryWrites));
        if reads + writes == 0 {
            return 0;
        }
        self.routed_rate(i / COUNTERS_PER_MCU, i % COUNTERS_PER_MCU, span, route(span.address()))
    }

    /// [`Counting::rate`] of only the counters of the MCU the span's transactions
    /// route to, which its address class holds: no other counter sees them.
    fn each_rate(&self, span: &Span<F>, class: u64, f: &mut dyn FnMut(usize, u64)) {
        if span.signals.get(Signal::MemoryReads) + span.signals.get(Signal::MemoryWrites) == 0 {
            return;
        }
        let to = Route::from_class(class);
        for n in 0..COUNTERS_PER_MCU {
            let r = self.routed_rate(to.mcu, n, span, to);
            if r > 0 {
                f(to.mcu * COUNTERS_PER_MCU + n, r);
            }
        }
    }

    /// The MCU, port and channel a span's memory transactions route to (`each_rate`
    /// reads them back). A span without transactions counts nothing wherever its
    /// address is: every such span is of one class, so the engine asks for their rates
    /// once a kind rather than once an address.
    fn address_class(&self, span: &Span<F>) -> u64 {
        if span.signals.get(Signal::MemoryReads) + span.signals.get(Signal::MemoryWrites) == 0 {
            return 0;
        }
        route(span.address()).class()
    }
}
