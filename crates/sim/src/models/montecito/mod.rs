//! Register-level model of the performance monitors of one Montecito core with its two
//! hardware threads ("Dual-Core Update to the Intel Itanium 2 Processor Reference
//! Manual", chapter 3, cited as §n; events from chapter 4).
//!
//! Each thread has its own PMU (§3.3.2): PMC0-3 (Table 3-8), the twelve generic pairs
//! PMC/PMD4-15 (Tables 3-5 to 3-7), the model-specific PMC32-42, PMD32-39 and PMD48-63
//! (stored only), its PSR (Figure 3-10) and its PMV (cr73). Software reaches them only
//! through [`Montecito::write_pmc`] (`mov pmc[i]=r`), [`Montecito::read_pmc`],
//! [`Montecito::write_pmd`], [`Montecito::read_pmd`] (`mov r=pmd[i]`),
//! [`Montecito::set_psr`], [`Montecito::write_pmv`] (`mov cr73=r`) and
//! [`Montecito::pal_perf_mon_info`]. Each access executes on one thread at that thread's
//! PSR.cpl. The engine ([`crate::engine`]) drives the counters through [`Counting`]; an
//! overflow interrupt is read with [`Montecito::take_interrupt`].
//! `docs/montecito-model.md` describes the model, its event mapping and every reading
//! of the spec it makes (decisions MD1...).
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic))]

use pmukit_arch::montecito::pal::{self, PerfMonInfo};
use pmukit_arch::montecito::pmu;
use pmukit_arch::montecito::registers::{
    pmc_populated, pmc_reset, pmd_populated, COUNT, FR, GENERIC, OI, PLM, PM, PMC0, PMC_GENERIC, PMV, PMV_M, PMV_VECTOR, PSR, PSR_CPL,
    PSR_PP, PSR_SP, PSR_UP,
};
use pmukit_core::register::{Field, RegisterError};
use thiserror::Error;

use crate::engine::{Counters, Counting};
use crate::models::Reports;
use crate::stream::{Privilege, Span};

mod bus;
mod bus_masks;
mod capture;
mod cycle;
mod dispersal;
mod events;
mod frontend;
mod frontend_masks;
mod l2_masks;
mod program;
mod qualify;
mod rate;
mod table;

pub use capture::{capture_units, itanium_ip};
pub use events::{line_state, Agent, EventType, MappedEvent};
pub use program::{counter, mapped_event, per_cycle, reads_occupancies};
use program::{Program, Reads};
pub use qualify::Breakpoint;
use qualify::Qualifier;
use rate::{program_rate, SpanCycles, SpanFacts};
pub use table::EVENTS;

/// Hardware threads of a Montecito core (§2.4, §3.3.2).
pub const THREADS: usize = 2;
/// Generic counter pairs per thread, PMC/PMD4-15 (§3.3.2).
pub const COUNTERS_PER_THREAD: usize = 12;
/// Table 3-7: the count field is bits 46:0; it overflows on the carry out of bit 46.
pub const COUNT_BITS: u32 = 47;
const COUNT_MODULUS: u64 = 1 << COUNT_BITS;
/// Bits 63:47 of a PMD read: copies of bit 46 (Table 3-7 sxt47 and ov).
const SIGN_EXTENSION: u64 = !(COUNT_MODULUS - 1);
/// Table 3-7: bit 47, "always write 0".
const PMD_OV_BIT: u64 = 1 << 47;

/// Why an access failed. A failed access changes nothing.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum MontecitoError {
    /// The core has threads 0 and 1 only.
    #[error("hardware thread {thread} does not exist: a Montecito core runs threads 0 and 1, each with its own PMU (§3.3.2)")]
    NoSuchThread { thread: usize },
    /// Table 3-4 does not populate this PMC.
    #[error("PMC{index} is not implemented on Montecito: the populated PMCs are PMC0-15 and PMC32-42 (Table 3-4)")]
    NoSuchPmc { index: usize },
    /// Table 3-4 does not populate this PMD.
    #[error("PMD{index} is not implemented on Montecito: the populated PMDs are PMD4-15, PMD32-39 and PMD48-63 (Table 3-4)")]
    NoSuchPmd { index: usize },
    /// PMC reads and writes, PMD writes and cr73 accesses need CPL 0 (Itanium SDM Vol. 2
    /// §7.2: "At non-zero privilege levels, these operations result in a Privileged
    /// Operation fault, regardless of the register address").
    #[error("`{instruction}` on thread {thread} at CPL {cpl}: privileged operation fault (PMC reads and writes, PMD writes and cr73 accesses need CPL 0)")]
    PrivilegedOperation { thread: usize, instruction: String, cpl: u8 },
    /// Montecito has IBR0-7 and DBR0-7.
    #[error("{kind}{index} does not exist: a Montecito thread has {kind}0-7, four pairs (§3.3.5, §3.3.7)")]
    NoSuchBreakpoint { kind: Breakpoint, index: usize },
    /// Figure 3-10 reserved PSR bits must be written 0.
    #[error("PSR write on thread {thread} rejected: {source}")]
    ReservedPsrBits { thread: usize, source: RegisterError },
}

/// The CPL a span runs at. MD3: `Privilege::Hyper` (SPARC's hyperprivileged mode) is
/// taken as CPL 0, Itanium's most privileged level.
fn span_cpl(p: Privilege) -> u64 {
    match p {
        Privilege::Hyper | Privilege::Cpl0 => 0,
        Privilege::Cpl1 => 1,
        Privilege::Cpl2 => 2,
        Privilege::Cpl3 => 3,
    }
}

/// A generic PMC/PMD pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Pair {
    pmc: u64,
    /// The 47-bit count (Table 3-7 bits 46:0).
    count: u64,
    program: Option<Program>,
}

/// Where an index lands among one thread's registers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pmc {
    Status(usize),
    Generic(usize),
    Specific(usize),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pmd {
    Generic(usize),
    Specific(usize),
}

const SPECIFIC_PMCS: usize = 11; // PMC32-42
/// IBR0-7 and DBR0-7: four pairs each, the ones §3.3.5 and §3.3.7 use.
pub const BREAKPOINTS: usize = 8;
const SPECIFIC_PMDS: usize = 64 - 32; // PMD32-63 (PMD40-47 unpopulated, never reached)

/// The performance monitors of one hardware thread (§3.3.2: "The PMUs are not shared
/// between hardware threads").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MontecitoThread {
    /// PMC0 (Table 3-8); PMC1-3 read 0 and ignore writes.
    pmc0: u64,
    pairs: [Pair; COUNTERS_PER_THREAD],
    /// PMC32-42, stored as written.
    specific_pmc: [u64; SPECIFIC_PMCS],
    /// PMD32-39 and PMD48-63, stored as written.
    specific_pmd: [u64; SPECIFIC_PMDS],
    /// The instruction and data breakpoint registers IBR0-7, DBR0-7 (SDM vol. 2 §7.1).
    ibr: [u64; BREAKPOINTS],
    dbr: [u64; BREAKPOINTS],
    /// PMC32-36, 38, 41 with the breakpoints, as qualification reads them.
    qualifier: Qualifier,
    /// How qualification reaches the capture units, and the trace buffer's state.
    reaches: capture::Reaches,
    trace: capture::Trace,
    /// PMC0.fr was set by an overflow in the cycles last executed, which ran before it.
    just_froze: bool,
    psr: u64,
    pmv: u64,
    /// The performance monitor interrupt is pended (§3.3.11: one line).
    interrupt: bool,
}

impl MontecitoThread {
    /// §3.3.12: oi and ev of every PMC are 0 and PMV.m is 1; PAL loads PMC32-36, 38 and
    /// 41; everything else is undefined and starts at 0 here (MD4).
    fn reset() -> MontecitoThread {
        let specific_pmc = std::array::from_fn(|i| pmc_reset(32 + i).unwrap_or(0));
        MontecitoThread {
            pmc0: PMC0.reset,
            pairs: [Pair { pmc: PMC_GENERIC.reset, ..Pair::default() }; COUNTERS_PER_THREAD],
            specific_pmc,
            specific_pmd: [0; SPECIFIC_PMDS],
            ibr: [0; BREAKPOINTS],
            dbr: [0; BREAKPOINTS],
            qualifier: Qualifier::new(&specific_pmc, [0; BREAKPOINTS], [0; BREAKPOINTS]),
            reaches: capture::Reaches::new(),
            trace: capture::Trace::default(),
            just_froze: false,
            psr: PSR.reset,
            pmv: PMV.reset,
            interrupt: false,
        }
    }

    pub fn psr(&self) -> u64 {
        self.psr
    }

    /// The CPL this thread's accesses execute at, and rests at in the background.
    pub fn cpl(&self) -> u8 {
        PSR_CPL.get(self.psr) as u8
    }

    pub fn interrupt_pending(&self) -> bool {
        self.interrupt
    }

    pub fn frozen(&self) -> bool {
        FR.get(self.pmc0) == 1
    }

    /// The pair of PMCn/PMDn, `n` in 4..=15.
    fn pair(&self, n: usize) -> Option<&Pair> {
        self.pairs.get(n.checked_sub(*GENERIC.start())?)
    }

    fn pair_mut(&mut self, n: usize) -> Option<&mut Pair> {
        self.pairs.get_mut(n.checked_sub(*GENERIC.start())?)
    }

    /// Rebuild the qualifier after a qualification register or breakpoint changed.
    fn requalify(&mut self, notes: &mut Vec<String>, thread: usize) {
        let before = self.qualifier.unmodelled_opcodes();
        self.qualifier = Qualifier::new(&self.specific_pmc, self.ibr, self.dbr);
        notes.extend(self.qualifier.unmodelled_opcodes().filter(|n| before.as_ref() != Some(n)).map(|n| format!("thread {thread}: {n}")));
    }

    /// §3.3.1: (not PMC0.fr) and PMC.plm[cpl] and (PMC.ism = '10) and ((not PMC.pm and
    /// PSR.up) or (PMC.pm and PSR.pp)), for the PMC `program` was made from.
    fn enabled(&self, program: &Program, cpl: u64) -> bool {
        !self.frozen() && program.ism_proper && self.monitored(program.plm, program.pm, cpl)
    }

    /// The plm and pm part of §3.3.1 for a PMC whose pm is the field `pm` (Table 3-5's
    /// bit 6, which the capture registers share but for PMC37's bit 4, Table 3-15).
    fn monitors(&self, pmc: u64, pm: &Field, cpl: u64) -> bool {
        self.monitored(PLM.get(pmc), pm.get(pmc) == 1, cpl)
    }

    /// §3.3.1's plm and pm part from the fields' values.
    fn monitored(&self, plm: u64, pm: bool, cpl: u64) -> bool {
        let enable = if pm { PSR_PP } else { PSR_UP };
        plm >> (cpl & 3) & 1 == 1 && enable.get(self.psr) == 1
    }

    /// PMDn wrapped, PMCn holding `pmc`: Table 3-8 sets PMC0 bit n whatever oi says;
    /// with oi, Table 3-6 sets fr and raises the interrupt, which PMV.m keeps from being
    /// pended (§3.3.11). Returns whether an interrupt was raised.
    fn overflow(&mut self, n: usize, pmc: u64) -> bool {
        self.pmc0 |= 1 << n;
        if OI.get(pmc) == 0 {
            return false;
        }
        self.just_froze |= !self.frozen();
        self.pmc0 = FR.set(self.pmc0, 1);
        if PMV_M.get(self.pmv) == 1 {
            return false;
        }
        self.interrupt = true;
        true
    }
}

/// One Montecito core: two hardware threads, each with its own PMU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Montecito {
    threads: [MontecitoThread; THREADS],
    /// What of a span's address some counter's program reads (`Reads::of`), kept by
    /// `write_pmc`, the one place programs change.
    reads: Reads,
    unpredictable: Reports,
}

impl Default for Montecito {
    fn default() -> Self {
        Montecito::new()
    }
}

impl Montecito {
    /// A core after processor reset (§3.3.12).
    pub fn new() -> Montecito {
        let threads = [MontecitoThread::reset(), MontecitoThread::reset()];
        Montecito { reads: Reads::of(&threads), threads, unpredictable: Reports::default() }
    }

    pub fn thread(&self, thread: usize) -> Result<&MontecitoThread, MontecitoError> {
        self.threads.get(thread).ok_or(MontecitoError::NoSuchThread { thread })
    }

    fn thread_mut(&mut self, thread: usize) -> Result<&mut MontecitoThread, MontecitoError> {
        self.threads.get_mut(thread).ok_or(MontecitoError::NoSuchThread { thread })
    }

    /// Every programming the spec leaves undefined, in order (ism other than '10,
    /// ER/SI/L2D events in banked counters, CPU_OP_CYCLES_HALTED outside PMD10, a PMD
    /// write with bit 47 set).
    pub fn unpredictable(&self) -> &Reports {
        &self.unpredictable
    }

    /// Virtual counter of PMDn (4..=15) of `thread` for [`Counting`].
    pub fn counter_index(thread: usize, n: usize) -> Option<usize> {
        (thread < THREADS && GENERIC.contains(&n)).then(|| thread * COUNTERS_PER_THREAD + n - GENERIC.start())
    }

    /// The thread, checked to exist and to run at CPL 0 (for privileged operations).
    fn privileged(&self, thread: usize, instruction: impl FnOnce() -> String) -> Result<&MontecitoThread, MontecitoError> {
        let t = self.thread(thread)?;
        match t.cpl() {
            0 => Ok(t),
            cpl => Err(MontecitoError::PrivilegedOperation { thread, instruction: instruction(), cpl }),
        }
    }

    fn pmc_slot(index: usize) -> Result<Pmc, MontecitoError> {
        match index {
            0..=3 => Ok(Pmc::Status(index)),
            i if GENERIC.contains(&i) => Ok(Pmc::Generic(i)),
            i if pmc_populated(i) => Ok(Pmc::Specific(i - 32)),
            _ => Err(MontecitoError::NoSuchPmc { index }),
        }
    }

    fn pmd_slot(index: usize) -> Result<Pmd, MontecitoError> {
        match index {
            i if GENERIC.contains(&i) => Ok(Pmd::Generic(i)),
            i if pmd_populated(i) => Ok(Pmd::Specific(i - 32)),
            _ => Err(MontecitoError::NoSuchPmd { index }),
        }
    }

    /// `mov pmc[index]=value` on `thread`. Privileged: a fault at CPL != 0 whatever the
    /// index (MD7). Ignored bits are dropped (Tables 3-6, 3-8, and PMC32-42's); PMC1-3
    /// ignore the write.
    pub fn write_pmc(&mut self, thread: usize, index: usize, value: u64) -> Result<(), MontecitoError> {
        self.privileged(thread, || format!("mov pmc[{index}]=r"))?;
        let slot = Self::pmc_slot(index)?;
        let no_such_pmc = MontecitoError::NoSuchPmc { index };
        let mut notes = Vec::new();
        let t = self.thread_mut(thread)?;
        match slot {
            Pmc::Status(0) => t.pmc0 = PMC0.apply_write(t.pmc0, value).stored,
            Pmc::Status(_) => {}
            Pmc::Generic(n) => {
                let pair = t.pair_mut(n).ok_or(no_such_pmc)?;
                pair.pmc = PMC_GENERIC.apply_write(pair.pmc, value).stored;
                pair.program = Program::new(n, pair.pmc, |s| notes.push(format!("thread {thread} {s}")));
            }
            Pmc::Specific(i) => {
                // Their ignored bits read zero (Tables 3-10 to 3-15, 3-20, 3-26, 3-30).
                let layout = pmu::specific_pmc(32 + i, value).ok_or(no_such_pmc.clone())?;
                let slot = t.specific_pmc.get_mut(i).ok_or(no_such_pmc)?;
                *slot = layout.apply_write(*slot, value).stored;
                t.requalify(&mut notes, thread);
            }
        }
        self.reads = Reads::of(&self.threads);
        self.unpredictable.extend(notes);
        Ok(())
    }

    /// `mov r=pmc[index]` on `thread`. Privileged (MD7). Ignored bits read 0.
    pub fn read_pmc(&self, thread: usize, index: usize) -> Result<u64, MontecitoError> {
        let t = self.privileged(thread, || format!("mov r=pmc[{index}]"))?;
        Ok(match Self::pmc_slot(index)? {
            Pmc::Status(0) => PMC0.read(t.pmc0),
            Pmc::Status(_) => 0,
            Pmc::Generic(n) => PMC_GENERIC.read(t.pair(n).ok_or(MontecitoError::NoSuchPmc { index })?.pmc),
            Pmc::Specific(i) => *t.specific_pmc.get(i).ok_or(MontecitoError::NoSuchPmc { index })?,
        })
    }

    /// `mov pmd[index]=value` on `thread`. Privileged (MD7). PMD4-15 keep bits 46:0:
    /// bits 63:48 are ignored (Table 3-7) and so is bit 47 (MD6, noted in
    /// [`Montecito::unpredictable`] when set).
    pub fn write_pmd(&mut self, thread: usize, index: usize, value: u64) -> Result<(), MontecitoError> {
        self.privileged(thread, || format!("mov pmd[{index}]=r"))?;
        let slot = Self::pmd_slot(index)?;
        let no_such_pmd = MontecitoError::NoSuchPmd { index };
        let t = self.thread_mut(thread)?;
        match slot {
            Pmd::Generic(n) => {
                t.pair_mut(n).ok_or(no_such_pmd)?.count = COUNT.get(value);
                if value & PMD_OV_BIT != 0 {
                    self.unpredictable.push(format!(
                        "thread {thread} PMD{n}: written with bit 47 (ov) set; software must write 0 (Table 3-7); the bit is dropped"
                    ));
                }
            }
            Pmd::Specific(i) => *t.specific_pmd.get_mut(i).ok_or(no_such_pmd)? = value,
        }
        Ok(())
    }

    /// `mov r=pmd[index]` on `thread`, at its PSR.cpl. PMD4-15 read the count with bits
    /// 63:47 copying bit 46 (Table 3-7). At CPL != 0 a read returns 0 when the PMC has
    /// pm = 1 (Table 3-5) or PSR.sp = 1 (MD8).
    pub fn read_pmd(&self, thread: usize, index: usize) -> Result<u64, MontecitoError> {
        let t = self.thread(thread)?;
        let slot = Self::pmd_slot(index)?;
        let secured = t.cpl() != 0 && PSR_SP.get(t.psr) == 1;
        Ok(match slot {
            Pmd::Generic(n) => {
                let pair = t.pair(n).ok_or(MontecitoError::NoSuchPmd { index })?;
                if secured || (t.cpl() != 0 && PM.get(pair.pmc) == 1) {
                    0
                } else if pair.count >> (COUNT_BITS - 1) & 1 == 1 {
                    pair.count | SIGN_EXTENSION
                } else {
                    pair.count
                }
            }
            Pmd::Specific(_) if secured => 0,
            Pmd::Specific(i) => *t.specific_pmd.get(i).ok_or(MontecitoError::NoSuchPmd { index })?,
        })
    }

    /// `mov ibr[index]=value` or `mov dbr[index]=value` on `thread`: privileged, like
    /// every debug register write (SDM vol. 2 §7.1).
    pub fn write_breakpoint(&mut self, thread: usize, kind: Breakpoint, index: usize, value: u64) -> Result<(), MontecitoError> {
        self.privileged(thread, || format!("mov {}[{index}]=r", kind.to_string().to_lowercase()))?;
        let mut notes = Vec::new();
        let t = self.thread_mut(thread)?;
        let regs = match kind {
            Breakpoint::Ibr => &mut t.ibr,
            Breakpoint::Dbr => &mut t.dbr,
        };
        *regs.get_mut(index).ok_or(MontecitoError::NoSuchBreakpoint { kind, index })? = value;
        t.requalify(&mut notes, thread);
        self.unpredictable.extend(notes);
        Ok(())
    }

    /// `mov r=ibr[index]` or `mov r=dbr[index]` on `thread`. Privileged.
    pub fn read_breakpoint(&self, thread: usize, kind: Breakpoint, index: usize) -> Result<u64, MontecitoError> {
        let t = self.privileged(thread, || format!("mov r={}[{index}]", kind.to_string().to_lowercase()))?;
        let regs = match kind {
            Breakpoint::Ibr => &t.ibr,
            Breakpoint::Dbr => &t.dbr,
        };
        regs.get(index).copied().ok_or(MontecitoError::NoSuchBreakpoint { kind, index })
    }

    /// Set `thread`'s PSR (Figure 3-10): up, pp, sp, cpl, is and the other fields. Not a
    /// PMU access, so not privileged here (`rum`/`sum`/`ssm`/`rsm`/`rfi` stand behind it).
    /// Reserved bits must be 0. PSR.cpl is the level the thread's accesses execute at
    /// and the level it rests at in the background; a span's privilege overrides it
    /// while the thread runs the span (MD2).
    pub fn set_psr(&mut self, thread: usize, value: u64) -> Result<(), MontecitoError> {
        let t = self.thread_mut(thread)?;
        PSR.check_write(value).map_err(|source| MontecitoError::ReservedPsrBits { thread, source })?;
        t.psr = value;
        Ok(())
    }

    /// `thread`'s PSR.
    pub fn psr(&self, thread: usize) -> Result<u64, MontecitoError> {
        Ok(self.thread(thread)?.psr)
    }

    /// `mov cr73=value` on `thread`: the Performance Monitor Vector (§3.3.11).
    /// Privileged; ignored bits are dropped.
    pub fn write_pmv(&mut self, thread: usize, value: u64) -> Result<(), MontecitoError> {
        self.privileged(thread, || "mov cr73=r".to_string())?;
        let t = self.thread_mut(thread)?;
        t.pmv = PMV.apply_write(t.pmv, value).stored;
        Ok(())
    }

    /// `mov r=cr73` on `thread`. Privileged.
    pub fn read_pmv(&self, thread: usize) -> Result<u64, MontecitoError> {
        let t = self.privileged(thread, || "mov r=cr73".to_string())?;
        Ok(PMV.read(t.pmv))
    }

    /// Is `thread`'s performance monitor interrupt pended?
    pub fn interrupt_pending(&self, thread: usize) -> Result<bool, MontecitoError> {
        Ok(self.thread(thread)?.interrupt)
    }

    /// Take `thread`'s pended performance monitor interrupt, as reading IVR does: its
    /// vector (PMV.vector), or `None` when none is pended. One overflow interrupt is
    /// pended however many counters overflowed (§3.3.11).
    pub fn take_interrupt(&mut self, thread: usize) -> Result<Option<u8>, MontecitoError> {
        let t = self.thread_mut(thread)?;
        Ok(std::mem::take(&mut t.interrupt).then(|| PMV_VECTOR.get(t.pmv) as u8))
    }

    /// PAL_PERF_MON_INFO (Table 3-34, checked against chapter 3: MD20-MD24).
    pub fn pal_perf_mon_info(&self) -> PerfMonInfo {
        pal::PERF_MON_INFO
    }

    /// The qualification tags of `span`'s instructions, by its thread's registers.
    fn tags<const F: usize>(&self, span: &Span<F>) -> u64 {
        let Some(t) = self.threads.get(usize::from(span.thread)) else { return 0 };
        t.qualifier.tags(span.ip, span_cpl(span.privilege) as u8, span.mem.map(|m| m.addr))
    }

    /// The capture units the foreground thread's `span`, with qualification `tags`,
    /// gives an event to (`capture::DEAR`...), by that thread's registers.
    fn captured<const F: usize>(&self, span: &Span<F>, tags: u64) -> u8 {
        let Some(t) = self.threads.get(usize::from(span.thread)) else { return 0 };
        t.captured(span, span_cpl(span.privilege), tags)
    }

    /// What `span` gives every counter alike: its qualification tags, and the capture
    /// units it gives an event to (asked only when some counter counts captures).
    fn facts<const F: usize>(&self, span: &Span<F>) -> SpanFacts {
        let tags = self.tags(span);
        SpanFacts { tags, captured: if self.reads.captures { self.captured(span, tags) } else { 0 } }
    }

    /// Per-cycle increment of PMDn of thread `t` in a cycle of `span`, whose facts are
    /// `facts`.
    fn rate_of<const F: usize>(&self, t: usize, n: usize, span: &Span<F>, facts: &SpanFacts) -> u64 {
        let Some(thread) = self.threads.get(t) else { return 0 };
        let Some(program) = thread.pair(n).and_then(|p| p.program.as_ref()) else { return 0 };
        SpanCycles::of(span, facts).map_or(0, |cycles| program_rate(t, thread, program, &cycles))
    }
}

/// Virtual counter `thread × 12 + (n − 4)` is PMDn of that thread.
impl Counters for Montecito {
    fn counters(&self) -> usize {
        THREADS * COUNTERS_PER_THREAD
    }

    fn headroom(&self, i: usize) -> u64 {
        let pair = self.threads.get(i / COUNTERS_PER_THREAD).and_then(|t| t.pairs.get(i % COUNTERS_PER_THREAD));
        COUNT_MODULUS - pair.map_or(0, |p| p.count)
    }

    /// Table 3-7: the count wraps at 2^47 (carry out of bit 46).
    fn add(&mut self, i: usize, n: u64) -> bool {
        let (t, k) = (i / COUNTERS_PER_THREAD, i % COUNTERS_PER_THREAD);
        let Some(thread) = self.threads.get_mut(t) else { return false };
        let Some(pair) = thread.pairs.get_mut(k) else { return false };
        let total = u128::from(pair.count) + u128::from(n);
        pair.count = (total % u128::from(COUNT_MODULUS)) as u64;
        let pmc = pair.pmc;
        total >= u128::from(COUNT_MODULUS) && thread.overflow(GENERIC.start() + k, pmc)
    }
}

impl<const F: usize> Counting<F> for Montecito {
    fn rate(&self, i: usize, span: &Span<F>) -> u64 {
        self.rate_of(i / COUNTERS_PER_THREAD, GENERIC.start() + i % COUNTERS_PER_THREAD, span, &self.facts(span))
    }

    /// The span's tags and captures, worked out once for all 24 counters, are read
    /// from its address class.
    fn each_rate(&self, span: &Span<F>, class: u64, f: &mut dyn FnMut(usize, u64)) {
        let Some(cycles) = SpanCycles::of(span, &SpanFacts::from_class(class)) else { return };
        // The pairs walked in place; an unprogrammed one costs a test.
        for (t, thread) in self.threads.iter().enumerate() {
            for (k, pair) in thread.pairs.iter().enumerate() {
                let Some(program) = &pair.program else { continue };
                let r = program_rate(t, thread, program, &cycles);
                if r > 0 {
                    f(t * COUNTERS_PER_THREAD + k, r);
                }
            }
        }
    }

    /// MD13: the line's MESI state, which PMC.MESI qualifies by, comes from its address;
    /// MD50: the tags qualification gives the span's instruction and data addresses;
    /// MD53: what the span gives the capture units, whose events count it. The state
    /// and the captures only while some counter reads them (`Reads`).
    fn address_class(&self, span: &Span<F>) -> u64 {
        let state = if self.reads.mesi { line_state(span.address()) } else { 0 };
        self.facts(span).class(state)
    }

    /// The capture units latch what the cycles left (before a freeze in them, and
    /// the IP-EAR's delayed freeze after).
    fn executed(&mut self, span: &Span<F>, cycles: u64, iteration: u64) {
        self.latch(span, cycles, iteration);
    }

    /// Only the last iterations leave anything in the capture registers
    /// (`Montecito::latch_iterations`).
    fn iterated(&mut self, body: &[Span<F>], k: u64, from: u64) {
        self.latch_iterations(body, k, from);
    }
}
