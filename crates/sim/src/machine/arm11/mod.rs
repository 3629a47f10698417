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
mod overrides;

pub use config::{Arm11Config, Arm11Core};
pub use overrides::MachineConfigError;

use crate::machine::cache::Cache;
use crate::machine::predict::{ReturnStack, TargetCache};
use crate::machine::tlb::Tlb;
use crate::machine::{Core, Keys, Moves, Quantum};
use crate::program::{lcm, DataStream, Phase};
use crate::stream::{Signal, Signals, Span};

/// The translation structures of an MMU core.
struct Tlbs {
    micro_i: Tlb,
    micro_d: Tlb,
    main: Tlb,
}

/// Fault injection: accesses left before the next error in each structure, and which
/// kind of error comes next.
#[derive(Debug, Clone, Copy, Default)]
struct Faults {
    every: u64,
    /// I-cache, D-cache, ITCM, DTCM.
    left: [u64; 4],
    turn: [u8; 4],
}

pub struct Arm11 {
    cfg: Arm11Config,
    icache: Cache,
    dcache: Cache,
    tlbs: Option<Tlbs>,
    btac: TargetCache,
    return_stack: ReturnStack,
    /// Cycles until each buffered write has drained, oldest first.
    write_buffer: Vec<u64>,
    /// Cycles until an outstanding line fill that nothing waited for completes.
    fill_busy: u64,
    ip: u64,
    /// The line addresses of the last fetch and the last data access (AN195 §8: only
    /// non-sequential line accesses count); `u64::MAX` for none.
    fetch_line: u64,
    data_line: u64,
    faults: Option<Faults>,
    /// The addresses from the lowest ETM comparator to the highest.
    etm_span: std::ops::RangeInclusive<u64>,
}

impl Arm11 {
    /// A core with cold structures. `cfg` must have passed [`Arm11Config::check`].
    pub fn new(cfg: Arm11Config) -> Arm11 {
        let tlbs =
            cfg.mmu.as_ref().map(|m| Tlbs { micro_i: Tlb::new(m.micro_itlb), micro_d: Tlb::new(m.micro_dtlb), main: Tlb::new(m.main_tlb) });
        let faults = cfg.fault_every.map(|every| Faults { every, left: [every; 4], turn: [0; 4] });
        let comparators = cfg.etm_out0.iter().chain(&cfg.etm_out1);
        let etm_span = comparators.clone().copied().min().unwrap_or(1)..=comparators.copied().max().unwrap_or(0);
        Arm11 {
            icache: Cache::new(cfg.icache),
            dcache: Cache::new(cfg.dcache),
            tlbs,
            btac: TargetCache::new(cfg.btac),
            return_stack: ReturnStack::new(cfg.return_stack),
            write_buffer: Vec::with_capacity(cfg.write_buffer),
            fill_busy: 0,
            ip: 0,
            fetch_line: u64::MAX,
            data_line: u64::MAX,
            faults,
            etm_span,
            cfg,
        }
    }
}

/// The cycles of one iteration, as spans: consecutive cycles that count the same are
/// one span. The span being built is kept here, not read back from the vector, and
/// spans never merge across iterations, so each iteration's spans are its own.
struct Out<'a> {
    spans: &'a mut Vec<Span>,
    template: Span,
    /// The span being built, if any; `open` says whether later cycles may join it.
    current: Option<Span>,
    open: bool,
}

impl Out<'_> {
    fn new<'a>(spans: &'a mut Vec<Span>, phase: &Phase) -> Out<'a> {
        let mut template = Span::new(0, phase.entry);
        template.privilege = phase.privilege;
        template
            .signals
            .set(Signal::IrqDisabledCycles, u8::from(phase.masks.irq))
            .set(Signal::FiqDisabledCycles, u8::from(phase.masks.fiq));
        Out { spans, template, current: None, open: false }
    }

    /// The phase's interrupt masks hold in every cycle.
    fn masked(&self, mut signals: Signals) -> Signals {
        for mask in [Signal::IrqDisabledCycles, Signal::FiqDisabledCycles] {
            signals.set(mask, self.template.signals.get(mask) as u8);
        }
        signals
    }

    /// Starts a new span, handing the one before to the vector.
    fn start(&mut self, span: Span, open: bool) -> &mut Span {
        if let Some(done) = self.current.replace(span) {
            self.spans.push(done);
        }
        self.open = open;
        self.current.get_or_insert(span)
    }

    /// `cycles` cycles at `ip` counting `signals`, merged with the span before when
    /// every cycle counts the same.
    fn emit(&mut self, ip: u64, cycles: u64, signals: Signals) {
        let signals = self.masked(signals);
        if let Some(cur) = self.current.as_mut().filter(|c| c.signals == signals) {
            if self.open {
                cur.cycles += cycles;
                return;
            }
        }
        self.start(Span { ip, cycles, signals, ..self.template }, true);
    }

    /// An instruction's own cycle, a span of its own so that its data reference or
    /// branch outcome can be attached.
    fn issue(&mut self, ip: u64, signals: Signals) -> &mut Span {
        let signals = self.masked(signals.with(Signal::Instructions, 1));
        self.start(Span { ip, cycles: 1, signals, ..self.template }, false)
    }

    /// Cycles in which nothing issues, counting `stall` if any.
    fn stall(&mut self, ip: u64, cycles: u64, stall: Option<Signal>) {
        if cycles > 0 {
            let mut s = Signals::default();
            if let Some(sig) = stall {
                s.set(sig, 1);
            }
            self.emit(ip, cycles, s);
        }
    }

    /// Hands the last span to the vector: the iteration is over.
    fn finish(mut self) {
        if let Some(done) = self.current.take() {
            self.spans.push(done);
        }
    }
}

impl Core for Arm11 {
    fn enter(&mut self, phase: &Phase) {
        self.ip = phase.entry;
    }

    fn iterate(&mut self, phase: &Phase, k: u64, out: &mut Vec<Span>) {
        let mut out = Out::new(out, phase);
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
        out.finish();
    }

    fn quantum(&self, stream: &DataStream) -> Quantum {
        let mut pages = stream.page;
        if let Some(m) = &self.cfg.mmu {
            pages = lcm(pages, lcm(m.main_tlb.set_span(stream.page), m.micro_dtlb.set_span(stream.page)));
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
        out.extend_from_slice(&self.write_buffer);
        out.push(u64::MAX);
        out.extend([self.fill_busy, key(self.ip), key(self.fetch_line), key(self.data_line)]);
        if let Some(f) = &self.faults {
            out.extend(f.left);
            out.extend(f.turn.map(u64::from));
        }
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
