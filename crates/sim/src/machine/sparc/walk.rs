//! TLB misses: which TLB a walk serves, the address space it translates in, and the
//! walk itself, by the hardware walker or the hypervisor's handler, with the kernel's
//! fill trap when the TSB lacks the entry.

use super::memory::Level;
use super::Sparc;
use super::{Out, Signals};
use crate::machine::ALIAS;
use crate::program::Phase;
use crate::stream::{Privilege, Signal};

/// Which TLB a walk serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Side {
    Instruction,
    Data,
}

impl Side {
    fn fills(self) -> [Signal; 5] {
        match self {
            Side::Instruction => Signal::ITLB_FILLS,
            Side::Data => Signal::DTLB_FILLS,
        }
    }

    fn walk_cycles(self) -> [Signal; 5] {
        match self {
            Side::Instruction => Signal::ITLB_WALK_CYCLES,
            Side::Data => Signal::DTLB_WALK_CYCLES,
        }
    }

    /// The walk's reference by serving level (TABLE 10-2 sl 10).
    fn reference(self, level: Level) -> Signal {
        match (self, level) {
            (Side::Instruction, Level::L2) => Signal::ITlbWalkRefsL2,
            (Side::Instruction, Level::L3) => Signal::ITlbWalkRefsL3,
            (Side::Instruction, _) => Signal::ITlbWalkRefsMemory,
            (Side::Data, Level::L2) => Signal::DTlbWalkRefsL2,
            (Side::Data, Level::L3) => Signal::DTlbWalkRefsL3,
            (Side::Data, _) => Signal::DTlbWalkRefsMemory,
        }
    }

    /// What the strand waits with: no fetch, or loads and stores held at pick.
    fn waiting(self) -> Signal {
        match self {
            Side::Instruction => Signal::NoFetchCycles,
            Side::Data => Signal::DTlbMissWaitCycles,
        }
    }
}

/// The address space a phase's accesses translate in: the nucleus (0) for privileged
/// code, the process's context for user code.
pub(super) fn context(phase: &Phase) -> u32 {
    if phase.privilege.is_user() {
        phase.context
    } else {
        0
    }
}

/// Kernel text is mapped with 4 MB pages, user text with 8 KB pages (as Solaris does),
/// unless the program maps its text with other pages.
pub(super) fn code_page(phase: &Phase) -> u64 {
    match phase.code_page {
        Some(page) => page,
        None if phase.privilege == Privilege::USER => 8 << 10,
        None => 4 << 20,
    }
}

impl Sparc {
    /// A TLB miss: the TTE is read from the TSB (by the hardware walker, or by the
    /// hypervisor's handler on Niagara). When the TSB lacks it (`first_touch`: memory
    /// a stream walks for the first time is not mapped yet) the walk traps and the
    /// kernel fills the TSB and the TLB.
    pub(super) fn walk(&mut self, out: &mut Out, addr: u64, class: usize, context: u32, first_touch: bool, side: Side) {
        let page = self.cfg.page_sizes[class];
        // The TTE is cached as a line of its own at an alias of its page, so that the
        // runner moves it with the page (ERRATA MSP3).
        let tte = ALIAS | (addr & !(page - 1)) | (u64::from(context % 8) * 64);
        let mut s = Signals::default().with(
            match side {
                Side::Instruction => Signal::ITlbMisses,
                Side::Data => Signal::DTlbMisses,
            },
            1,
        );
        let reach = self.mem.access(tte, false, false, &mut s);
        s.set(side.reference(reach.level), 1);
        let mut cycles = self.mem.latency(reach) + self.cfg.walk_trap_cycles;
        if first_touch {
            s.set(
                match side {
                    Side::Instruction => Signal::ITlbFillTraps,
                    Side::Data => Signal::DTlbFillTraps,
                },
                1,
            );
            self.carry(out, addr, s.with(side.waiting(), 1));
            self.wait(out, addr, cycles + self.cfg.fill_trap_cycles - 1, Some(side.waiting()));
            return;
        }
        s.set(side.fills()[class], 1);
        let walking = Signals::default().with(side.walk_cycles()[class], 1).with(side.waiting(), 1);
        self.carry(out, addr, s.union(walking));
        cycles -= 1;
        self.elapse(cycles);
        out.emit(addr, cycles, walking);
    }
}
