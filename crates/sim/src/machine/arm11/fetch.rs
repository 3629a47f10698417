//! The ARM11 instruction side: a fetch from a new line through the micro-TLB, the main
//! TLB or a page walk, and the I-cache or ITCM, and the waits for what they miss.

use super::exec::{arm_page, walk_levels, Part};
use super::{Arm11, Out, Signals};
use crate::program::Phase;
use crate::stream::Signal;

/// Where an instruction fetch's translation was found.
enum Translated {
    /// In the micro-TLB, or with no MMU.
    Micro,
    /// In the main TLB, after a micro-TLB miss.
    Main,
    /// By a page-table walk of this many levels; `true` when it found the page not
    /// yet mapped (MARM17).
    Walk(u64, bool),
}

/// What a fetch's look-ups found when it starts a new line.
enum Fetched {
    /// The tightly coupled memory, with the error an injected fault raises.
    Itcm(Option<Signal>),
    Cached {
        /// Where the translation was found.
        translated: Translated,
        /// The error an injected fault raises (the line is fetched again).
        fault: Option<Signal>,
        hit: bool,
        /// The code is in memory no cache holds: the line is read, not looked up.
        uncached: bool,
    },
}

impl Arm11 {
    /// The instruction side: a fetch from a new line looks up the micro-TLB (and the
    /// main TLB behind it) and the I-cache or ITCM, and waits for what they miss.
    pub(super) fn fetch(&mut self, phase: &Phase, out: &mut Out) {
        let ip = self.ip;
        let line = self.icache.config().line_of(ip);
        if line == self.fetch_line {
            return;
        }
        self.fetch_line = line;
        match self.fetch_lookups(phase, ip) {
            Fetched::Itcm(fault) => {
                if let Some(e) = fault {
                    out.emit(ip, 1, Signals::default().with(e, 1));
                }
            }
            Fetched::Cached { translated, fault, hit, uncached } => {
                let m = self.cfg.mmu.as_ref().map_or((0, 0), |m| (m.micro_refill_cycles, m.walk_level_cycles));
                match translated {
                    Translated::Micro => {}
                    Translated::Main => {
                        out.emit(ip, 1, Signals::default().with(Signal::ITlbMisses, 1).with(Signal::IBufStallCycles, 1));
                        self.wait(out, ip, m.0 - 1, Some(Signal::IBufStallCycles));
                    }
                    Translated::Walk(levels, unmapped) => {
                        // §4: a page-table walk counts as a main TLB miss, not as a stall.
                        out.emit(ip, 1, Signals::default().with(Signal::ITlbMisses, 1).with(Signal::MainTlbMisses, 1));
                        self.wait(out, ip, levels * m.1 - 1, None);
                        if unmapped {
                            // A process's text not yet mapped (MARM17): the prefetch
                            // abort's entry and return and the kernel's page fault
                            // handler, then the walk again.
                            let fault = 2 * self.cfg.exception_cycles + self.cfg.page_fault_cycles;
                            self.wait(out, ip, fault + levels * m.1, None);
                        }
                    }
                }
                if let Some(e) = fault {
                    out.emit(ip, 1, Signals::default().with(e, 1));
                }
                if uncached {
                    // Non-cacheable code (MARM16): the prefetch unit reads the line
                    // from memory, and the I-cache neither looks it up nor fills it.
                    out.emit(ip, 1, Signals::default().with(Signal::IBufStallCycles, 1).with(Signal::MemoryReads, 1));
                    self.wait(out, ip, self.cfg.memory_cycles - 1, Some(Signal::IBufStallCycles));
                } else if !hit {
                    // §3: each miss fills a line from external memory; the instruction
                    // buffer runs dry every cycle until it arrives (0x1).
                    let s = Signals::default().with(Signal::ICacheMisses, 1).with(Signal::IBufStallCycles, 1);
                    out.emit(ip, 1, s.with(Signal::MemoryReads, 1));
                    self.wait(out, ip, self.cfg.memory_cycles - 1, Some(Signal::IBufStallCycles));
                }
            }
        }
    }

    /// The look-ups of a fetch from a new line at `ip`.
    fn fetch_lookups(&mut self, phase: &Phase, ip: u64) -> Fetched {
        if self.cfg.itcm.as_ref().is_some_and(|r| r.contains(&ip)) {
            return Fetched::Itcm(self.faults.as_mut().and_then(|f| f.access(Part::Itcm)));
        }
        let (page, context) = self.code_mapping(phase, ip);
        let translated = self.tlbs.as_mut().map_or(Translated::Micro, |t| {
            if t.micro_i.access(ip, page, context) {
                Translated::Micro
            } else if t.main.access(ip, page, context) {
                Translated::Main
            } else {
                // A process's text on small or large pages is mapped as it first runs
                // (demand paging); sections are mapped with their mapping.
                let unmapped = phase.privilege.is_user() && page < 1 << 20 && self.mapped_code.insert((context, ip & !(page - 1)));
                Translated::Walk(walk_levels(page), unmapped)
            }
        });
        if phase.uncached_code {
            return Fetched::Cached { translated, fault: None, hit: false, uncached: true };
        }
        let fault = self.faults.as_mut().and_then(|f| f.access(Part::ICache));
        if fault.is_some() {
            // A parity error invalidates the line; it is fetched again.
            self.icache.invalidate(ip);
        }
        let hit = self.icache.access(ip, false).hit;
        Fetched::Cached { translated, fault, hit, uncached: false }
    }

    /// Page size and ASID of code at `ip`: the kernel's is global and mapped with
    /// sections, user code with 4 KB pages or the pages the program chose.
    fn code_mapping(&self, phase: &Phase, ip: u64) -> (u64, u32) {
        match &self.cfg.mmu {
            Some(m) if ip >= m.kernel_base => (1 << 20, 0),
            _ => (phase.code_page.map_or(4 << 10, arm_page), phase.context),
        }
    }
}
