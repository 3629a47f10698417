//! The ARM11 cores' parameters, each with where it comes from (`docs/machines.md`
//! lists the sources; assumptions are rows of `docs/ERRATA.md`, MARM*, and of
//! `docs/assumptions.md`).

use crate::machine::assumption::Assumption;
use crate::machine::cache::{CacheConfig, Replacement};
use crate::machine::predict::TargetCacheConfig;
use crate::machine::tlb::TlbConfig;
use crate::stream::Signal;
use std::ops::Range;

use crate::program::builtin::layout::{ENTRY_TEXT, FIQ_VECTOR, IRQ_VECTOR, KERNEL_DATA, SWI_VECTOR};

/// Which ARM11 core.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arm11Core {
    Arm1136,
    /// Has an MPU instead of an MMU: no TLBs (AN195 Table 2: 0x3, 0x4, 0xF unused).
    Arm1156,
    Arm1176,
}

impl Arm11Core {
    pub fn name(self) -> &'static str {
        match self {
            Arm11Core::Arm1136 => "arm1136",
            Arm11Core::Arm1156 => "arm1156",
            Arm11Core::Arm1176 => "arm1176",
        }
    }

    pub fn from_model(model: &str) -> Option<Arm11Core> {
        match model {
            "arm1136" => Some(Arm11Core::Arm1136),
            "arm1156" => Some(Arm11Core::Arm1156),
            "arm1176" => Some(Arm11Core::Arm1176),
            _ => None,
        }
    }
}

/// The memory-management unit of ARM1136/ARM1176.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mmu {
    /// Instruction and data micro-TLBs: ten entries each, fully associative (ARM1136JF-S
    /// and ARM1176JZF-S TRMs, "MMU": MicroTLBs).
    pub micro_itlb: TlbConfig,
    pub micro_dtlb: TlbConfig,
    /// Main TLB: 64 entries, two-way set associative (the eight lockable entries are
    /// not used by Linux and not modelled).
    pub main_tlb: TlbConfig,
    /// Cycles a micro-TLB miss that hits the main TLB stalls.
    pub micro_refill_cycles: u64,
    /// Cycles of one level of a page-table walk (a first-level descriptor for a
    /// section, first and second level for a 4 KB page).
    pub walk_level_cycles: u64,
    /// Addresses at and above this are the kernel's, mapped global (not tagged with
    /// an ASID) as Linux/ARM maps everything above PAGE_OFFSET.
    pub kernel_base: u64,
}

/// One ARM11 core and its memory system.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Arm11Config {
    pub core: Arm11Core,
    /// L1 caches: 4-64 KB, four-way, 32-byte lines (AN195 §3: "a burst of four double
    /// words (8 words) to fill a cache line"); 16 KB each as on the BCM2835's
    /// ARM1176JZF-S. Round-robin replacement (CP15 c1 RR bit; the other choice is
    /// pseudo-random). Read-allocate only: a write miss goes to the write buffer.
    pub icache: CacheConfig,
    pub dcache: CacheConfig,
    pub mmu: Option<Mmu>,
    /// Tightly coupled memories (ARM1156 uses them in place of paging for its real-time
    /// code and data): accesses there never miss and are counted as cacheable (AN195
    /// §8).
    pub itcm: Option<Range<u64>>,
    pub dtcm: Option<Range<u64>>,
    /// The dynamic branch predictor: a 128-entry branch target address cache, direct
    /// mapped, with 2-bit history (ARM1136JF-S TRM, "Prefetch unit"). A branch it does
    /// not hold is predicted statically: backward taken, forward not taken.
    pub btac: TargetCacheConfig,
    /// The return stack: three entries (ARM1136JF-S TRM, "Return stack").
    pub return_stack: usize,
    /// AN195 §4: a mispredicted branch costs four cycles, one of them counted as an
    /// instruction-buffer stall (0x1).
    pub mispredict_cycles: u64,
    /// Write buffer entries, and cycles to drain each 64-bit beat of one to memory.
    pub write_buffer: usize,
    pub write_cycles: u64,
    /// Cycles from a load-use interlock on a cache hit.
    pub load_use_cycles: u64,
    /// Cycles a line fill from external memory takes, and a device register access.
    pub memory_cycles: u64,
    pub device_cycles: u64,
    /// Extra cycles of a VFP divide or square root, which the next instruction waits
    /// for.
    pub fp_divide_cycles: u64,
    /// Cycles of a whole-line LDM/STM beyond its first (two words per cycle over the
    /// 64-bit load/store path).
    pub block_cycles: u64,
    /// Cycles of exception entry or return (the pipeline refills).
    pub exception_cycles: u64,
    /// Cycles of the VFP support code that computes an operation whose result is
    /// subnormal, which VFP11 hands it (ERRATA MARM13: an assumption).
    pub vfp_support_cycles: u64,
    /// Cycles of the operating system's handler of a page fault that maps a page of
    /// freshly mapped memory (`DataStream::fresh`: a minor fault) beyond the trap's
    /// own (ERRATA MARM14: an assumption).
    pub page_fault_cycles: u64,
    /// Cycles of the operating system's handler that performs a misaligned access the
    /// hardware refused, beyond the alignment fault's entry and return (ERRATA MARM15: an assumption).
    pub unaligned_cycles: u64,
    /// Instruction addresses whose execution asserts ETMEXTOUT[0] / ETMEXTOUT[1]: the
    /// ETM's address comparators, here on the exception vectors.
    pub etm_out0: Vec<u64>,
    pub etm_out1: Vec<u64>,
    /// Fault injection: one parity or TCM error every this many accesses to each
    /// structure (off when `None`).
    pub fault_every: Option<u64>,
}

const fn l1(size: u64) -> CacheConfig {
    CacheConfig { size, ways: 4, line: 32, replacement: Replacement::RoundRobin, write_allocate: false }
}

impl Arm11Config {
    pub fn new(core: Arm11Core) -> Arm11Config {
        let mmu = (core != Arm11Core::Arm1156).then_some(Mmu {
            micro_itlb: TlbConfig { entries: 10, ways: 10, replacement: Replacement::RoundRobin },
            micro_dtlb: TlbConfig { entries: 10, ways: 10, replacement: Replacement::RoundRobin },
            main_tlb: TlbConfig { entries: 64, ways: 2, replacement: Replacement::RoundRobin },
            micro_refill_cycles: 2,
            walk_level_cycles: 10,
            kernel_base: 0xC000_0000,
        });
        // On ARM1156 the kernel keeps its exception entry code in the ITCM and its hot
        // data (stacks, tables) in the DTCM.
        let (itcm, dtcm) = match core {
            Arm11Core::Arm1156 => (Some(ENTRY_TEXT), Some(KERNEL_DATA.start..KERNEL_DATA.start + (64 << 10))),
            _ => (None, None),
        };
        Arm11Config {
            core,
            icache: l1(16 << 10),
            dcache: l1(16 << 10),
            mmu,
            itcm,
            dtcm,
            btac: TargetCacheConfig { entries: 128, ways: 1 },
            return_stack: 3,
            mispredict_cycles: 4,
            write_buffer: 8,
            write_cycles: 4,
            load_use_cycles: 1,
            memory_cycles: 24,
            device_cycles: 12,
            fp_divide_cycles: 14,
            block_cycles: 3,
            exception_cycles: 3,
            vfp_support_cycles: 500,
            page_fault_cycles: 2000,
            unaligned_cycles: 1000,
            etm_out0: vec![SWI_VECTOR, FIQ_VECTOR],
            etm_out1: vec![IRQ_VECTOR, FIQ_VECTOR],
            fault_every: None,
        }
    }

    /// The labelled assumptions among these parameters (docs/assumptions.md), each
    /// with the signals it shapes first-hand; the MMU's only on ARM1136 and ARM1176.
    pub fn assumptions(&self) -> Vec<Assumption> {
        use Signal::*;
        let a = |table, key, value: &dyn ToString, shapes| Assumption::new(table, key, value.to_string(), shapes);
        let mut v = Vec::new();
        if let Some(m) = &self.mmu {
            // Both the instruction side's and the data side's translations; only the
            // instruction side's main-TLB refill marks its wait.
            v.push(a("core", "walk_level_cycles", &m.walk_level_cycles, &[]));
            v.push(a("core", "micro_refill_cycles", &m.micro_refill_cycles, &[IBufStallCycles]));
        }
        v.extend([
            a("core", "write_buffer", &self.write_buffer, &[LsuFullStallCycles]),
            // A full buffer's wait, and the drains of a barrier and a strongly ordered access.
            a("core", "write_cycles", &self.write_cycles, &[LsuFullStallCycles]),
            a("core", "memory_cycles", &self.memory_cycles, &[IBufStallCycles, DataDepStallCycles, LsuFullStallCycles]),
            a("core", "device_cycles", &self.device_cycles, &[DataDepStallCycles, LsuFullStallCycles]),
            a("core", "load_use_cycles", &self.load_use_cycles, &[DataDepStallCycles]),
            a("core", "block_cycles", &self.block_cycles, &[]),
            a("core", "fp_divide_cycles", &self.fp_divide_cycles, &[DataDepStallCycles]),
            a("core", "exception_cycles", &self.exception_cycles, &[]),
            a("core", "vfp_support_cycles", &self.vfp_support_cycles, &[]),
            a("core", "page_fault_cycles", &self.page_fault_cycles, &[]),
            a("core", "unaligned_cycles", &self.unaligned_cycles, &[]),
        ]);
        v
    }
}
