//! The ARM11 core (ARM1136, ARM1156, ARM1176): an in-order, single-issue pipeline
//! with L1 instruction and data caches, micro-TLBs and a main TLB (an MPU on ARM1156),
//! tightly coupled memories, a branch target address cache with static prediction, a
//! return stack and a write buffer. It runs a program one instruction per cycle plus
//! the stalls its structures cause, and says what every cycle counts in the
//! architecture-neutral signals of `crate::stream`, following ARM Application Note
//! 195 (AN195, the ARM11 performance monitor; cited as §n). `docs/machines.md`
//! describes the model.

pub mod config;
mod exec;
mod fetch;
mod overrides;

pub use config::{Arm11Config, Arm11Core};

use crate::machine::cache::Cache;
use crate::machine::faults::Countdown;
use crate::machine::mem::{Occupancy, Queue};
use crate::machine::predict::{ReturnStack, TargetCache};
use crate::machine::tlb::Tlb;
use crate::machine::{Core, Keys, Moves, Quantum};
use crate::program::{lcm, DataStream, Phase};
use crate::stream::{Signal, ARM11};

/// The spans, signals and span writer of this family's machines: its signals' words
/// only (docs/engine.md E7).
type Span = crate::stream::Span<ARM11>;
type Signals = crate::stream::Signals<ARM11>;
type Out<'a> = crate::machine::out::Out<'a, ARM11>;

/// The translation structures of an MMU core.
struct Tlbs {
    micro_i: Tlb,
    micro_d: Tlb,
    main: Tlb,
}

/// Fault injection: each structure's countdown to its next error (I-cache, D-cache,
/// ITCM, DTCM).
#[derive(Debug, Clone, Copy)]
struct Faults([Countdown; 4]);

pub struct Arm11 {
    cfg: Arm11Config,
    icache: Cache,
    dcache: Cache,
    tlbs: Option<Tlbs>,
    btac: TargetCache,
    return_stack: ReturnStack,
    /// The cycles the core has run: the buffers' times below are cycles of it, so
    /// that time passing changes no entry, as with SPARC's strands.
    clock: u64,
    /// When each buffered write has drained, oldest first: they drain in order.
    write_buffer: Vec<u64>,
    /// When an outstanding line fill that nothing waited for completes.
    fill_until: u64,
    /// What the write buffer and the line-fill buffer have held.
    written: Occupancy,
    filled: Occupancy,
    ip: u64,
    /// The line addresses of the last fetch and the last data access (AN195 §8: only
    /// non-sequential line accesses count); `u64::MAX` for none.
    fetch_line: u64,
    data_line: u64,
    /// The pages of user text mapped so far, by address space (MARM17).
    mapped_code: rustc_hash::FxHashSet<(u32, u64)>,
    faults: Option<Faults>,
    /// The addresses from the lowest ETM comparator to the highest.
    etm_span: std::ops::RangeInclusive<u64>,
    /// Cycles from the iteration's start until the next interrupt, which ends a WFI
    /// (`Core::interrupt_in`).
    wake: Option<u64>,
}

impl Arm11 {
    /// A core with cold structures. `cfg` must have passed [`Arm11Config::check`].
    pub fn new(cfg: Arm11Config) -> Arm11 {
        let tlbs =
            cfg.mmu.as_ref().map(|m| Tlbs { micro_i: Tlb::new(m.micro_itlb), micro_d: Tlb::new(m.micro_dtlb), main: Tlb::new(m.main_tlb) });
        let faults = cfg.fault_every.map(|every| Faults([Countdown::new(every); 4]));
        let comparators = cfg.etm_out0.iter().chain(&cfg.etm_out1);
        let etm_span = comparators.clone().copied().min().unwrap_or(1)..=comparators.copied().max().unwrap_or(0);
        Arm11 {
            icache: Cache::new(cfg.icache),
            dcache: Cache::new(cfg.dcache),
            tlbs,
            btac: TargetCache::new(cfg.btac),
            return_stack: ReturnStack::new(cfg.return_stack),
            clock: 0,
            write_buffer: Vec::with_capacity(cfg.write_buffer),
            fill_until: 0,
            written: Occupancy::default(),
            filled: Occupancy::default(),
            ip: 0,
            fetch_line: u64::MAX,
            data_line: u64::MAX,
            mapped_code: Default::default(),
            faults,
            etm_span,
            wake: None,
            cfg,
        }
    }
}

/// The phase's template span: its privilege, and its interrupt masks, which hold in
/// every cycle.
fn template(phase: &Phase) -> Span {
    let mut t = Span::new(0, phase.entry);
    t.privilege = phase.privilege;
    t.signals.set(Signal::IrqDisabledCycles, u8::from(phase.masks.irq)).set(Signal::FiqDisabledCycles, u8::from(phase.masks.fiq));
    t
}

impl Core<ARM11> for Arm11 {
    fn queues(&self) -> Vec<Queue> {
        vec![
            Queue { name: "write buffer", unit: None, size: self.cfg.write_buffer, occupancy: self.written },
            Queue { name: "line-fill buffer", unit: None, size: 1, occupancy: self.filled },
        ]
    }

    fn enter(&mut self, phase: &Phase, _thread: usize) {
        self.ip = phase.entry;
    }

    fn iterate(&mut self, phase: &Phase, k: u64, out: &mut Vec<Span>) {
        let mut out = Out::new(out, template(phase));
        let mut skip = 0u8;
        for (i, op) in phase.body.iter().enumerate() {
            if skip > 0 {
                skip -= 1;
                continue;
            }
            // A recorded program says where each instruction is.
            if let Some(&ip) = phase.addresses.get(i) {
                self.ip = ip;
            }
            skip = self.execute(phase, k, op, &mut out);
        }
        self.dma(phase, k, &mut out);
    }

    fn quantum(&self, stream: &DataStream) -> Quantum {
        let page = exec::arm_page(stream.page);
        let mut pages = stream.page;
        if let Some(m) = &self.cfg.mmu {
            pages = lcm(pages, lcm(m.main_tlb.set_span(page), m.micro_dtlb.set_span(page)));
        }
        Quantum { lines: self.cfg.dcache.set_span(), pages }
    }

    fn canonical(&self, keys: &Keys, out: &mut Vec<u64>) {
        let key = keys.line;
        self.icache.canonical(key, out);
        self.dcache.canonical(key, out);
        if let Some(t) = &self.tlbs {
            t.micro_i.canonical(keys.page, out);
            t.micro_d.canonical(keys.page, out);
            t.main.canonical(keys.page, out);
        }
        self.btac.canonical(out);
        self.return_stack.canonical(out);
        // Code pages are only ever added: the same count means none was since.
        out.push(u64::MAX - self.mapped_code.len() as u64);
        // The buffers' times from now, as the core will see them.
        out.extend(self.write_buffer.iter().map(|w| w.saturating_sub(self.clock)));
        out.push(u64::MAX);
        out.extend([self.fill_busy(), key(self.ip), key(self.fetch_line), key(self.data_line)]);
        for c in self.faults.iter().flat_map(|f| &f.0) {
            c.canonical(out);
        }
    }

    fn interrupt_in(&mut self, cycles: Option<u64>) {
        self.wake = cycles;
    }

    fn relocate(&mut self, to: &Moves) {
        self.icache.relocate(to.line);
        self.dcache.relocate(to.line);
        if let Some(t) = &mut self.tlbs {
            t.micro_i.relocate(to.page);
            t.micro_d.relocate(to.page);
            t.main.relocate(to.page);
        }
        self.data_line = (to.line)(self.data_line).unwrap_or(self.data_line);
    }
}
