//! The Montecito core's parameters. The spec's chapter 2 gives the caches (§2.3.3,
//! Table 2-9: size, ways, line, latency), the memory latency (Table 2-8 note 4: M ≈
//! 180-225 cycles), the thread-switch cost (§2.4.1: 15 cycles) and the switch policy
//! (§2.4.1.1-§2.4.1.3); the rest are assumptions, `docs/ERRATA.md` MMC*, each a row of
//! `docs/assumptions.md` and a `--machine-config` key.

use crate::machine::assumption::{Assumption, DATA_LATENCY, FETCH_LATENCY};
use crate::machine::cache::{CacheConfig, Replacement};
use crate::machine::predict::{DirectionConfig, TargetCacheConfig};
use crate::machine::tlb::TlbConfig;
use crate::stream::Signal;

/// The page sizes the Itanium 2 processors implement (Intel Itanium 2 Processor
/// Reference Manual, "Supported page sizes"; ERRATA MMC7).
pub(super) const PAGE_SIZES: [u64; 12] =
    [4 << 10, 8 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20, 4 << 20, 16 << 20, 64 << 20, 256 << 20, 1 << 30, 4 << 30];

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MontecitoConfig {
    /// Hardware threads of the core (2; 1 with Hyper-Threading off).
    pub threads: usize,
    /// Instructions dispersed per cycle: two bundles of three (§2.3.1), of which at
    /// most `memory_ports` loads and as many stores: §2.1's L1D is "dual-ported to
    /// support two integer loads and two stores".
    pub issue_width: u8,
    pub memory_ports: u8,
    /// Table 2-9: L1D write-through, 16 KB 4-way 64-byte lines; L1I 16 KB 4-way 64-byte
    /// lines; L2D 256 KB 8-way 128-byte lines, write-back; L2I 1 MB 8-way 128-byte
    /// lines; L3 12 MB 12-way 128-byte lines, write-back, unified.
    pub l1i: CacheConfig,
    pub l1d: CacheConfig,
    pub l2i: CacheConfig,
    pub l2d: CacheConfig,
    pub l3: CacheConfig,
    /// First- and second-level TLBs (§2.4.3.1: L1I TLB, L1D TLB, L2 TLBs); a second-
    /// level miss is served by the hardware page walker from the VHPT.
    pub l1_itlb: TlbConfig,
    pub l2_itlb: TlbConfig,
    pub l1_dtlb: TlbConfig,
    pub l2_dtlb: TlbConfig,
    /// Cycles a first-level TLB miss that hits the second level costs.
    pub l2_tlb_cycles: u64,
    /// Linux/ia64's base page (16 KB): smaller program pages are mapped with it.
    pub base_page: u64,
    /// Table 2-9 latencies (integer): L2D 5, L2I 7, L3 14; memory M ≈ 180-225
    /// (Table 2-8 note 4).
    pub l2d_cycles: u64,
    pub l2i_cycles: u64,
    pub l3_cycles: u64,
    pub memory_cycles: u64,
    /// The direction predictor and the indirect-target cache (ERRATA MMC9: sizes the
    /// chapter does not give).
    pub direction: DirectionConfig,
    pub indirect: TargetCacheConfig,
    /// The return stack buffer, one per thread (§2.4).
    pub return_stack: usize,
    pub mispredict_cycles: u64,
    /// §2.1.2: "a 0 cycle branch predictor": taken branches whose target it holds
    /// (`zero_bubble` entries, ERRATA MMC18) redirect fetch at once; the others cost
    /// `resteer_cycles` of front-end bubble.
    pub zero_bubble: u32,
    pub resteer_cycles: u64,
    /// §2.4.1: 15 cycles from a switch until the other thread retires.
    pub switch_cycles: u64,
    /// §2.4.1.1: the thread-quantum counters' time-out, cycles a thread holds the
    /// pipeline before the other gets it (ERRATA MMC14: an assumption).
    pub thread_quantum: u64,
    /// Extra cycles of an FP divide or square root (a software sequence of
    /// frcpa/frsqrta and fma on Itanium), which the next instruction waits for.
    pub fp_divide_cycles: u64,
    /// Cycles of a system call (break/epc and the kernel's entry) and of rfi.
    pub trap_cycles: u64,
    /// Cycles of the operating system's handler of a data TLB fault that finds no
    /// mapping (Linux's `ia64_do_page_fault`), which defers a speculative load (PSR.ed)
    /// rather than signal the process (ERRATA MMC42: an assumption).
    pub fault_handler_cycles: u64,
    /// Cycles the L1D recirculates a speculative load's return to generate its NaT
    /// (BE_L1D_FPU_BUBBLE.L1D_NAT; MMC42: an assumption, one pass).
    pub nat_recirculate_cycles: u64,
    /// How many L1I lines the streaming prefetcher runs ahead of the demand fetch, and
    /// how many addresses its PVAB holds while the prefetch pipeline stalls (ERRATA
    /// MMC50: assumptions).
    pub stream_lines: u64,
    pub pvab_entries: u64,
    /// Cycles a return whose function restored its link register right before it
    /// waits in the front end (FE_LOST_BW.BR_ILOCK; ERRATA MMC45: an assumption).
    pub br_interlock_cycles: u64,
    /// Cycles the front end takes to write a counted loop's back edge into the
    /// zero-bubble predictor for the `brp.loop.imp` at the loop's entry, fetching
    /// nothing meanwhile (FE_LOST_BW.BI; ERRATA MMC65: an assumption).
    pub branch_init_cycles: u64,
    /// Entries of the front end's branch retirement queue, which holds each fetched
    /// branch's prediction until the branch retires: a fetch whose branch finds it
    /// full waits (FE_LOST_BW.BRQ; ERRATA MMC78: an assumption, as deep as the
    /// instruction buffer).
    pub brq_entries: usize,
    /// Cycles from a store's issue until its bytes are in the L1D, in which a load of
    /// them waits (BE_L1D_FPU_BUBBLE.L1D_LDCONF; ERRATA MMC44: an assumption, the
    /// store's write in the stage after the one a load reads in).
    pub store_write_cycles: u64,
    /// Entries of the L2D's OzQ data buffer, which holds the data of the writes
    /// (stores, semaphores) in the OzQ; a write that finds them all taken waits for
    /// one (L2D_OZDB_FULL; ERRATA MMC69: an assumption, one per OzQ entry).
    pub ozq_data_entries: usize,
    /// Cycles a floating-point operation with a subnormal result stalls the pipeline in
    /// Safe Instruction Recognition until the FPU knows it traps (FP_TRUE_SIRSTALL),
    /// and the cycles of the software-assist trap that delivers the result beyond the
    /// trap's own (ERRATA MMC53: assumptions).
    pub sir_cycles: u64,
    pub fp_assist_cycles: u64,
    /// Cycles of the operating system's handler of a page fault that maps a page of
    /// freshly mapped memory (`DataStream::fresh`: a minor fault) beyond the trap's
    /// own (ERRATA MMC55: an assumption).
    pub page_fault_cycles: u64,
    /// Cycles from a device register read's request until the device's data is back
    /// at the bus, the chipset and the I/O bus between (ERRATA MMC59: an assumption).
    pub device_cycles: u64,
    /// Device reads the chipset has outstanding on the I/O bus at once; a read that
    /// finds them all taken waits for the first device to answer (ERRATA MMC63: an
    /// assumption).
    pub device_reads: usize,
    /// Cycles of the operating system's handler that performs a misaligned access the
    /// hardware refused, beyond the fault's `trap_cycles` (ERRATA MMC56: an assumption).
    pub unaligned_cycles: u64,
    /// Cycles after a miss's L2D lookup that the data array starts reading its dirty
    /// victim out (L2D_OZQ_CANCELS1.WB_CONF; ERRATA MMC49: an assumption, at once).
    pub victim_read_delay: u64,
    /// Table 2-8 note 5: "EC and LC accesses are 2 cycles": a counted loop's first
    /// branch waits this long after the loop's entry for the count the front end's
    /// perfect-loop prediction reads (ERRATA MMC43).
    pub lc_cycles: u64,
    /// Table 2-8 note 5: a move to or from a control register takes C = 10-12 cycles
    /// ("FPSR and CR accesses"); its consumer waits for it (ERRATA MMC20).
    pub cr_cycles: u64,
    /// Whether the L3 announces the clean lines it evicts on the system bus (a 0-byte
    /// write, BUS_WR_WB.CCASTOUT), for a chipset that tracks which lines each
    /// processor holds (ERRATA MMC22).
    pub clean_castouts: bool,
    /// Cores in the package (the 9000 series has two, the 9010 one, §2.5). The other
    /// core is modelled where it meets this one, on shared data (ERRATA MMC23).
    pub cores: usize,
    /// The system bus (ERRATA MMC24): core cycles per bus clock (a 1.6 GHz core on a
    /// 266 MHz bus), data bus clocks per 128-byte line (a 128-bit bus, two transfers a
    /// clock), bus clocks from a transaction's request phase to its snoop result, and
    /// the stall clocks a HITM answer adds.
    pub bus_ratio: u64,
    pub line_clocks: u64,
    pub snoop_clocks: u64,
    pub hitm_clocks: u64,
    /// Fault injection (`pmu stat --fault-rate`): every `fault_every`-th write into the
    /// system interface's write data queue has an ECC error, single- and double-bit in
    /// turn (ERRATA MMC26), and every `fault_every`-th snoop of the L2D's tags finds an
    /// error there (MMC67); `None`: no errors.
    pub fault_every: Option<u64>,
    /// Whether the system interface lays its occupancies
    /// ([`OCCUPANCIES`](super::OCCUPANCIES): the entries live in each cycle, the bus's
    /// clocks) over the spans, splitting them where one changes. A run none of whose
    /// events reads them (`models::montecito::reads_occupancies`) turns this off: its
    /// counts are the same, with fewer spans to make and count.
    pub occupancies: bool,
}

const fn cache(size: u64, ways: u32, line: u64, write_allocate: bool) -> CacheConfig {
    CacheConfig { size, ways, line, replacement: Replacement::Lru, write_allocate }
}

const fn fully_associative(entries: u32) -> TlbConfig {
    TlbConfig { entries, ways: entries, replacement: Replacement::Lru }
}

impl MontecitoConfig {
    pub fn new(threads: usize) -> MontecitoConfig {
        MontecitoConfig {
            threads,
            issue_width: 6,
            memory_ports: 2,
            l1i: cache(16 << 10, 4, 64, false),
            l1d: cache(16 << 10, 4, 64, false),
            l2i: cache(1 << 20, 8, 128, true),
            // An invalidated L2D line keeps its place in the recency order (MMC66).
            l2d: CacheConfig { replacement: Replacement::LruByUse, ..cache(256 << 10, 8, 128, true) },
            l3: cache(12 << 20, 12, 128, true),
            l1_itlb: fully_associative(32),
            l2_itlb: fully_associative(128),
            l1_dtlb: fully_associative(32),
            l2_dtlb: fully_associative(128),
            l2_tlb_cycles: 2,
            base_page: 16 << 10,
            l2d_cycles: 5,
            l2i_cycles: 7,
            l3_cycles: 14,
            memory_cycles: 200,
            direction: DirectionConfig { entries: 4096, history_bits: 8 },
            indirect: TargetCacheConfig { entries: 64, ways: 1 },
            return_stack: 8,
            mispredict_cycles: 6,
            zero_bubble: 4,
            resteer_cycles: 1,
            switch_cycles: 15,
            thread_quantum: 1 << 18,
            fp_divide_cycles: 30,
            trap_cycles: 20,
            fault_handler_cycles: 400,
            sir_cycles: 4,
            fp_assist_cycles: 1000,
            page_fault_cycles: 2000,
            device_cycles: 1600,
            device_reads: 1,
            unaligned_cycles: 1000,
            nat_recirculate_cycles: 1,
            lc_cycles: 2,
            store_write_cycles: 2,
            ozq_data_entries: super::ozq::OZQ_ENTRIES,
            victim_read_delay: 0,
            br_interlock_cycles: 1,
            branch_init_cycles: 1,
            brq_entries: 8,
            stream_lines: 8,
            pvab_entries: 4,
            cr_cycles: 10,
            clean_castouts: true,
            cores: 2,
            bus_ratio: 6,
            line_clocks: 4,
            snoop_clocks: 4,
            hitm_clocks: 2,
            fault_every: None,
            occupancies: true,
        }
    }

    /// The page size a mapping of `page` bytes uses: at least the base page, and one
    /// the processor has, the largest not larger (ERRATA MMC7).
    pub fn page(&self, page: u64) -> u64 {
        let page = page.max(self.base_page);
        PAGE_SIZES.iter().rev().copied().find(|&s| s <= page).unwrap_or(page)
    }

    /// The labelled assumptions among these parameters (docs/assumptions.md), each
    /// with the signals it shapes first-hand, and whether it times what a miss waits
    /// for (the bus, a device, the L2D's data array, the instruction prefetcher that
    /// brings lines ahead of their fetch), which the EARs' latencies read.
    pub fn assumptions(&self) -> Vec<Assumption> {
        use Signal::*;
        const ITLB: &[Signal] = &[ITlbMisses, MainTlbMisses, ITlbStallCycles];
        const DTLB: &[Signal] = &[DTlbMisses, MainTlbMisses, DTlbMissWaitCycles, HpwStallCycles];
        // The system interface's timeline (`si.rs`): its occupancies and bus clocks.
        const BUS: &[Signal] = &[
            SiRqLive,
            SiRqLiveBoth,
            SiWriteqLive,
            SiWriteqLiveBoth,
            SiCcqLive,
            SiIoqLive,
            SiScbLive,
            SiScbLiveBoth,
            ErSnoopqLive,
            ErBrqLive,
            ErMemReadOut,
            BusDataClocks,
            BusDataClocksSelf,
            BusB2bClocks,
            BusB2bClocksSelf,
            BusSnoopStallClocks,
            BusSnoopStallClocksSelf,
            BusDataClocksIo,
            BusB2bClocksIo,
        ];
        const SNOOP: &[Signal] = &[SiScbLive, SiScbLiveBoth, ErSnoopqLive, BusSnoopStallClocks, BusSnoopStallClocksSelf];
        let a = |table, key, value: &dyn ToString, shapes| Assumption::new(table, key, value.to_string(), shapes);
        vec![
            a("l1_itlb", "entries", &self.l1_itlb.entries, &ITLB[..1]),
            a("l1_dtlb", "entries", &self.l1_dtlb.entries, &DTLB[..1]),
            a("l2_itlb", "entries", &self.l2_itlb.entries, ITLB),
            a("l2_dtlb", "entries", &self.l2_dtlb.entries, DTLB),
            a("core", "l2_tlb_cycles", &self.l2_tlb_cycles, &[ITlbStallCycles, DTlbMissWaitCycles, HpwStallCycles]),
            a("core", "base_page", &self.base_page, &[ITlbMisses, DTlbMisses, MainTlbMisses]),
            a(
                "direction",
                "entries",
                &self.direction.entries,
                &[BranchMispredicts, PathMispredictsTaken, PathMispredictsNotTaken, BackEndMispredicts],
            ),
            a(
                "direction",
                "history_bits",
                &self.direction.history_bits,
                &[BranchMispredicts, PathMispredictsTaken, PathMispredictsNotTaken],
            ),
            a("indirect", "entries", &self.indirect.entries, &[BranchMispredicts, IndirectMispredicts]),
            a("core", "return_stack", &self.return_stack, &[BranchMispredicts, ReturnsMispredicted]),
            a("core", "mispredict_cycles", &self.mispredict_cycles, &[LoopCountStallCycles]),
            a("core", "fp_divide_cycles", &self.fp_divide_cycles, &[FrDepStallCycles]),
            a("core", "trap_cycles", &self.trap_cycles, &[ExceptionFlushCycles, LsuFullStallCycles, HpwStallCycles]),
            a("core", "fault_handler_cycles", &self.fault_handler_cycles, &[LsuFullStallCycles, HpwStallCycles]),
            a("core", "sir_cycles", &self.sir_cycles, &[FpuStallCycles]),
            a("core", "fp_assist_cycles", &self.fp_assist_cycles, &[ExceptionFlushCycles]),
            a("core", "page_fault_cycles", &self.page_fault_cycles, &[ExceptionFlushCycles]),
            a("core", "unaligned_cycles", &self.unaligned_cycles, &[ExceptionFlushCycles]),
            a("core", "device_cycles", &self.device_cycles, &[DataDepStallCycles]).latency(DATA_LATENCY),
            a("core", "device_reads", &self.device_reads, &[DataDepStallCycles, ThreadSwitchStall]).latency(DATA_LATENCY),
            a("core", "br_interlock_cycles", &self.br_interlock_cycles, &[BranchInterlockCycles]),
            a("core", "branch_init_cycles", &self.branch_init_cycles, &[BranchInitCycles]),
            a("core", "brq_entries", &self.brq_entries, &[IBufFullCycles]),
            a("core", "store_write_cycles", &self.store_write_cycles, &[LsuFullStallCycles, L1dConflict]),
            a("core", "ozq_data_entries", &self.ozq_data_entries, &[L2dOzdbFull, L2dBackPressureCycles]),
            a("core", "victim_read_delay", &self.victim_read_delay, &[L2dWritebackConflicts]).latency(DATA_LATENCY),
            a("core", "nat_recirculate_cycles", &self.nat_recirculate_cycles, &[LsuFullStallCycles, L1dConflict]),
            a("core", "thread_quantum", &self.thread_quantum, &[ThreadSwitchesTimeout, ThreadSwitchCycles]),
            a("core", "stream_lines", &self.stream_lines, &[L1iStrmPrefetches, RabLive, PrefetchStall, PvabOverflows])
                .latency(FETCH_LATENCY),
            a("core", "pvab_entries", &self.pvab_entries, &[PvabOverflows, L1iStrmPrefetches]).latency(FETCH_LATENCY),
            a("core", "zero_bubble", &self.zero_bubble, &[ResteerBubbleCycles]),
            a("core", "resteer_cycles", &self.resteer_cycles, &[ResteerBubbleCycles]),
            a("core", "clean_castouts", &self.clean_castouts, &[CleanCastouts, SiCcqLive]),
            a("core", "bus_ratio", &self.bus_ratio, BUS).latency(DATA_LATENCY | FETCH_LATENCY),
            a("core", "line_clocks", &self.line_clocks, BUS).latency(DATA_LATENCY | FETCH_LATENCY),
            a("core", "snoop_clocks", &self.snoop_clocks, SNOOP).latency(DATA_LATENCY | FETCH_LATENCY),
            a("core", "hitm_clocks", &self.hitm_clocks, SNOOP).latency(DATA_LATENCY | FETCH_LATENCY),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Table 2-8 note 5: "EC and LC accesses are 2 cycles, FPSR and CR accesses are
    /// 10-12 cycles": a counted loop's first branch waits 2 cycles for `mov ar.lc`
    /// (MMC43), a control-register move the best case of 10 (MMC20).
    #[test]
    fn table_2_8_note_5_gives_the_ar_and_cr_move_latencies() {
        let cfg = MontecitoConfig::new(2);
        assert_eq!((cfg.lc_cycles, cfg.cr_cycles), (2, 10));
    }

    /// ERRATA MMC7: mappings below the 16 KB base page use it; larger ones the largest
    /// Itanium 2 page size not larger.
    #[test]
    fn mmc7_a_mapping_uses_the_largest_itanium_page_not_larger() {
        let cfg = MontecitoConfig::new(2);
        let page = |bytes: u64| cfg.page(bytes);
        assert_eq!(page(4 << 10), 16 << 10, "the base page");
        assert_eq!(page(64 << 10), 64 << 10);
        assert_eq!(page(16 << 20), 16 << 20);
        assert_eq!(page(256 << 20), 256 << 20);
        assert_eq!(page(2 << 30), 1 << 30, "no 2 GB page: 1 GB");
        assert_eq!(page(32 << 10), 16 << 10, "no 32 KB page: 16 KB");
    }
}
