//! The SPARC chips' parameters, each with where it comes from. `docs/machines.md`
//! lists the sources; what no public source gives is an assumption recorded in
//! `docs/ERRATA.md` (MSP*) and listed in `docs/assumptions.md`.
//!
//! Sources: [HC23] J. Shah et al., "SPARC T4: A Dynamically Threaded Server-on-a-Chip",
//! Hot Chips 23 (2011) and IEEE Micro 32(2), 2012; [T2] "OpenSPARC T2 Core
//! Microarchitecture Specification" (Sun, 2007), whose S2 core SPARC T3 (KT) reuses;
//! [T1] "OpenSPARC T1 Microarchitecture Specification" (Sun, 2006) and the OpenSPARC
//! T1 design's L2 (`sctag_fbctl.v`, `sctag_wbctl.v`, `sctag_arbctl.v`: its fill and
//! write-back buffers and its arbiter); [Solaris]
//! the Solaris Internals description of TSBs and lgroup memory placement; [DDR2],
//! [DDR3] the JEDEC DDR2 and DDR3 SDRAM standards (JESD79-2, JESD79-3): banks per
//! device and the row cycle time tRC of the speed grade the chip's memory runs at.

use super::buffers::L2BufferSizes;
use super::mcu::McuConfig;
use crate::machine::assumption::Assumption;
use crate::machine::cache::{CacheConfig, Replacement};
use crate::machine::predict::{DirectionConfig, TargetCacheConfig};
use crate::machine::tlb::TlbConfig;
use crate::stream::Signal;

/// Which chip.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SparcChip {
    /// SPARC T4 (S3 core): dual-issue, out of order, L3.
    T4,
    /// SPARC T3, "KT" (S2 core of the T2): single-issue per strand, no L3.
    Kt,
    /// UltraSPARC T1, "Niagara": single-issue, four strands, software TLB refill.
    Niagara,
}

/// The queue behind the store buffer (ERRATA MSP18): a store moves into it
/// `commit_cycles` after it issues, once it has a free entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoreQueue {
    pub entries: usize,
    pub commit_cycles: u64,
}

/// One core of the chip and the memory system behind it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SparcConfig {
    pub chip: SparcChip,
    /// Hardware strands of the core; software thread `i` runs on strand `i % strands`.
    pub strands: usize,
    /// Instructions issued per cycle at most, by one strand.
    pub issue_width: u8,
    /// Groups of strands that each pick one ready strand a cycle (`machine::run::lanes`):
    /// T4's select takes one strand a cycle ([HC23], TABLE 10-2 sl 1); the T3 keeps the
    /// T2's two groups of four, whose integer pipelines share the load/store and
    /// floating-point units ([T2]); the T1 picks one of its four a cycle ([T1]).
    pub thread_groups: usize,
    /// Whether a program's threads run on the strands at once, cycle by cycle
    /// (`machine::run::lanes`), rather than in turns (ERRATA MSP1): the reference
    /// engine, exact and 25 to 65 times slower; off until the fast engine equals it
    /// (docs/engine.md).
    pub strands_at_once: bool,
    pub icache: CacheConfig,
    /// Write-through, no write allocation ([T1], [T2], [HC23]): stores go to the L2.
    pub dcache: CacheConfig,
    /// Write-back, write-allocate, inclusive of the L1 caches.
    pub l2: CacheConfig,
    pub l3: Option<CacheConfig>,
    pub itlb: TlbConfig,
    pub dtlb: TlbConfig,
    /// Page sizes the TLBs hold, smallest first: the size classes of the fill signals.
    pub page_sizes: Vec<u64>,
    /// Hardware table walk ([T2], [HC23]); without it a TLB miss traps to the
    /// hypervisor, which searches the TSB in software ([T1]).
    pub hardware_walk: bool,
    /// Cycles of the hypervisor's TLB-miss handler around its TSB load (software walk).
    pub walk_trap_cycles: u64,
    /// Cycles of the kernel's handler when the TSB misses: it searches the page tables
    /// and writes the TSB and the TLB.
    pub fill_trap_cycles: u64,
    /// Direction predictor; without one, branches are predicted not taken ([T1], [T2]).
    pub direction: Option<DirectionConfig>,
    /// Branch target cache, and the indirect-target table ([HC23]).
    pub btc: Option<TargetCacheConfig>,
    pub indirect: Option<TargetCacheConfig>,
    pub return_stack: usize,
    /// Cycles lost on a mispredicted branch (until correct-path instructions issue).
    pub mispredict_cycles: u64,
    /// Cycles lost on a taken branch the BTC did not hold (target computed at decode).
    pub btc_miss_cycles: u64,
    /// Cycles a load's consumer waits on an L1 hit, and the load-to-use latency of a
    /// line from each level.
    pub load_use_cycles: u64,
    pub l2_cycles: u64,
    pub l3_cycles: u64,
    pub memory_cycles: u64,
    pub remote_cycles: u64,
    /// Store buffer entries: a store takes one when it issues (TABLE 10-2 sl 9 mask 08,
    /// "Select waits for a Store Buffer tag") and holds it until it is written to the
    /// L2, or, where the chip has a store queue, until it moves there.
    pub store_buffer: usize,
    /// The T4's store queue (ERRATA MSP18): committed stores wait in it to be written
    /// to the L2, in order. `None` (T1, T3): the store buffer holds them.
    pub store_queue: Option<StoreQueue>,
    /// Entries of the T4 L2's miss, fill and write-back buffers (ERRATA MSP19,
    /// MSP23, MSP24; `buffers.rs`). `None`: not modelled (KT and Niagara count nothing
    /// of them).
    pub l2_buffers: Option<L2BufferSizes>,
    /// Out-of-order execution (T4): instructions go on past a load miss nothing waits
    /// for until the reorder buffer fills behind it, and at most `load_buffer` such
    /// loads are outstanding. `None`: the in-order cores, which never limit them.
    pub reorder_buffer: Option<u64>,
    pub load_buffer: Option<usize>,
    /// The L1 data cache's hardware next-line prefetcher ([HC23]; the T4 event table
    /// counts its drops, TABLE 10-2 sl 18).
    pub hardware_prefetch: bool,
    /// Cycles an FP operation occupies the issue slot (1 when pipelined; the T1's single
    /// shared FPU makes every FP instruction wait for it), and extra cycles a divide or
    /// square root takes.
    pub fp_cycles: u64,
    pub fp_divide_cycles: u64,
    /// Cycles an FP operation with a subnormal result takes beyond its normal latency
    /// (ERRATA MSP28: an assumption, none).
    pub subnormal_cycles: u64,
    /// Cycles of the operating system's handler of a page fault that maps a page of
    /// freshly mapped memory (`DataStream::fresh`: a minor fault) beyond the trap's
    /// own (ERRATA MSP29: an assumption).
    pub page_fault_cycles: u64,
    /// Cycles of the operating system's handler that performs a misaligned access the
    /// hardware refused, beyond the trap's `trap_cycles` (ERRATA MSP30: an assumption).
    pub unaligned_cycles: u64,
    /// Cycles of a trap (Tcc) or DONE/RETRY, and of a block load or store beyond its
    /// issue.
    pub trap_cycles: u64,
    pub block_cycles: u64,
    /// Sockets of the machine; memory of shared mappings is spread over them.
    pub sockets: u64,
    /// Cores per socket: 8 on T4 [HC23] and T1 [T1], 16 on T3 [T2]. With more than
    /// one core in the machine, another core shares the program's shared data (MSP17).
    pub cores: u64,
    /// The memory controllers: banks, their busy time, the write queues.
    pub mcu: McuConfig,
}

/// Writes an MCU holds queued (ERRATA MSP15: no source we have gives the depth).
const WRITE_QUEUE: usize = 8;

/// SPARC TTE page sizes: 8 KB, 64 KB, 4 MB, 256 MB, 2 GB.
const PAGE_SIZES: [u64; 5] = [8 << 10, 64 << 10, 4 << 20, 256 << 20, 2 << 30];

const fn cache(size: u64, ways: u32, line: u64, write_allocate: bool) -> CacheConfig {
    CacheConfig { size, ways, line, replacement: Replacement::Lru, write_allocate }
}

const fn fully_associative(entries: u32) -> TlbConfig {
    TlbConfig { entries, ways: entries, replacement: Replacement::Lru }
}

impl SparcChip {
    /// The PMU model name the chip's machine serves, as `from_model` reads it back
    /// (the DRAM PMUs share their core's model).
    pub fn name(self) -> &'static str {
        match self {
            SparcChip::T4 => "sparc-t4",
            SparcChip::Kt => "sparc-kt",
            SparcChip::Niagara => "niagara",
        }
    }

    pub fn from_model(model: &str) -> Option<SparcChip> {
        match model {
            "sparc-t4" => Some(SparcChip::T4),
            "sparc-kt" => Some(SparcChip::Kt),
            "niagara1" => Some(SparcChip::Niagara),
            _ => None,
        }
    }
}

impl SparcConfig {
    pub fn new(chip: SparcChip) -> SparcConfig {
        match chip {
            // [HC23]: 16 KB L1 I and D, 128 KB L2 per core, 4 MB 16-way shared L3, a
            // 64-entry ITLB and 128-entry DTLB, both fully associative, dual issue, a
            // 16-stage integer pipeline; 2 GB pages are the T4's addition.
            SparcChip::T4 => SparcConfig {
                chip,
                strands: 8,
                issue_width: 2,
                thread_groups: 1,
                strands_at_once: false,
                icache: cache(16 << 10, 4, 32, false),
                dcache: cache(16 << 10, 4, 32, false),
                l2: cache(128 << 10, 8, 32, true),
                l3: Some(cache(4 << 20, 16, 64, true)),
                itlb: fully_associative(64),
                dtlb: fully_associative(128),
                page_sizes: PAGE_SIZES.to_vec(),
                hardware_walk: true,
                walk_trap_cycles: 0,
                fill_trap_cycles: 400,
                direction: Some(DirectionConfig { entries: 4096, history_bits: 8 }),
                btc: Some(TargetCacheConfig { entries: 256, ways: 1 }),
                indirect: Some(TargetCacheConfig { entries: 64, ways: 1 }),
                return_stack: 8,
                mispredict_cycles: 7,
                btc_miss_cycles: 2,
                load_use_cycles: 4,
                l2_cycles: 18,
                l3_cycles: 45,
                memory_cycles: 260,
                remote_cycles: 420,
                store_buffer: 16,
                store_queue: Some(StoreQueue { entries: 16, commit_cycles: 8 }),
                // [T2] gives the L2's miss buffer (16 entries a bank, MSP19), [T1] its
                // fill and write-back buffers (8 entries each a bank: MSP23, MSP24).
                l2_buffers: Some(L2BufferSizes { miss: 16, fill: 8, writeback: 8 }),
                reorder_buffer: Some(128),
                load_buffer: Some(32),
                hardware_prefetch: true,
                fp_cycles: 1,
                fp_divide_cycles: 24,
                subnormal_cycles: 0,
                page_fault_cycles: 2000,
                unaligned_cycles: 1000,
                trap_cycles: 20,
                block_cycles: 7,
                sockets: 2,
                cores: 8,
                // DDR3-1066 (MSP16): 8 banks, tRC 50.6 ns = 144 cycles at 2.85 GHz; a
                // line is a burst of 8 on a 64-bit channel, 7.5 ns = 21 cycles.
                mcu: McuConfig { line: 64, banks: 8, bank_cycles: 144, row_hit_cycles: 21, write_queue: WRITE_QUEUE },
            },
            // [T2]: 16 KB 8-way L1I with 32-byte lines, 8 KB 4-way L1D with 16-byte
            // lines, 64-entry ITLB, 128-entry DTLB, hardware table walk; the T3 has a
            // 6 MB 24-way L2 of 64-byte lines and no L3.
            SparcChip::Kt => SparcConfig {
                chip,
                strands: 8,
                issue_width: 1,
                thread_groups: 2,
                strands_at_once: false,
                icache: cache(16 << 10, 8, 32, false),
                dcache: cache(8 << 10, 4, 16, false),
                l2: cache(6 << 20, 24, 64, true),
                l3: None,
                itlb: fully_associative(64),
                dtlb: fully_associative(128),
                page_sizes: PAGE_SIZES[..4].to_vec(),
                hardware_walk: true,
                walk_trap_cycles: 0,
                fill_trap_cycles: 400,
                direction: None,
                btc: None,
                indirect: None,
                return_stack: 0,
                mispredict_cycles: 5,
                btc_miss_cycles: 0,
                load_use_cycles: 3,
                l2_cycles: 24,
                l3_cycles: 0,
                memory_cycles: 190,
                remote_cycles: 330,
                store_buffer: 8,
                store_queue: None,
                l2_buffers: None,
                reorder_buffer: None,
                load_buffer: None,
                hardware_prefetch: false,
                fp_cycles: 1,
                fp_divide_cycles: 30,
                subnormal_cycles: 0,
                page_fault_cycles: 2000,
                unaligned_cycles: 1000,
                trap_cycles: 20,
                block_cycles: 7,
                sockets: 2,
                cores: 16,
                // DDR3-1066 (MSP16): 8 banks, tRC 50.6 ns = 84 cycles at 1.65 GHz; a
                // line's burst, 7.5 ns = 12 cycles.
                mcu: McuConfig { line: 64, banks: 8, bank_cycles: 84, row_hit_cycles: 12, write_queue: WRITE_QUEUE },
            },
            // [T1]: four strands, single issue, 16 KB 4-way L1I (32-byte lines), 8 KB
            // 4-way write-through L1D (16-byte lines), 3 MB 12-way L2 (64-byte lines),
            // 64-entry fully associative ITLB and DTLB, one FPU for the chip with a
            // 40-cycle latency, TLB misses refilled by the hypervisor from the TSB.
            SparcChip::Niagara => SparcConfig {
                chip,
                strands: 4,
                issue_width: 1,
                thread_groups: 1,
                strands_at_once: false,
                icache: cache(16 << 10, 4, 32, false),
                dcache: cache(8 << 10, 4, 16, false),
                l2: cache(3 << 20, 12, 64, true),
                l3: None,
                itlb: fully_associative(64),
                dtlb: fully_associative(64),
                page_sizes: PAGE_SIZES[..4].to_vec(),
                hardware_walk: false,
                walk_trap_cycles: 40,
                fill_trap_cycles: 400,
                direction: None,
                btc: None,
                indirect: None,
                return_stack: 0,
                mispredict_cycles: 3,
                btc_miss_cycles: 0,
                load_use_cycles: 3,
                l2_cycles: 22,
                l3_cycles: 0,
                memory_cycles: 120,
                remote_cycles: 120,
                store_buffer: 8,
                store_queue: None,
                l2_buffers: None,
                reorder_buffer: None,
                load_buffer: None,
                hardware_prefetch: false,
                fp_cycles: 40,
                fp_divide_cycles: 40,
                subnormal_cycles: 0,
                page_fault_cycles: 2000,
                unaligned_cycles: 1000,
                trap_cycles: 20,
                block_cycles: 7,
                sockets: 1,
                cores: 8,
                // DDR2-533 ([T1]) of 512 Mb devices (MSP16): 4 banks, tRC 55 ns = 66
                // cycles at 1.2 GHz; a line is a burst of 4 on a 128-bit channel,
                // 7.5 ns = 9 cycles.
                mcu: McuConfig { line: 64, banks: 4, bank_cycles: 66, row_hit_cycles: 9, write_queue: WRITE_QUEUE },
            },
        }
    }

    /// The size class (index into `page_sizes`) a mapping of `page` bytes uses: the
    /// largest size the TLB holds that is not larger (a program's 4 KB page is an 8 KB
    /// TTE, its 1 MB section 64 KB TTEs, as Solaris maps them).
    pub fn size_class(&self, page: u64) -> usize {
        self.page_sizes.iter().rposition(|&s| s <= page).unwrap_or(0)
    }

    /// The labelled assumptions among these parameters (docs/assumptions.md), each
    /// with the signals it shapes first-hand: the rows of this chip.
    pub fn assumptions(&self) -> Vec<Assumption> {
        use Signal::*;
        // What a TSB-miss trap stalls: the fetch or the loads and stores.
        const TRAP: &[Signal] = &[NoFetchCycles, NoFetchAllCycles, DTlbMissWaitCycles];
        // The table walks' cycles by page size (T4 has a fifth size).
        const WALKS: &[Signal] = &[
            ITlbWalkCyclesSize0,
            ITlbWalkCyclesSize1,
            ITlbWalkCyclesSize2,
            ITlbWalkCyclesSize3,
            DTlbWalkCyclesSize0,
            DTlbWalkCyclesSize1,
            DTlbWalkCyclesSize2,
            DTlbWalkCyclesSize3,
        ];
        const WALKS_T4: &[Signal] = &[ITlbWalkCyclesSize4, DTlbWalkCyclesSize4];
        // A wait the data side's result stalls with.
        const DATA: &[Signal] = &[DataDepStallCycles, IBufFullCycles];
        // T4's store queue: the stores held in the buffer for it, where a load finds
        // the store it reads.
        const STORE_QUEUE: &[Signal] = &[
            StoreBufferWaitCycles,
            StoreQueueWaitCycles,
            StoreBufferFullRawHits,
            StoreBufferPartialRawHits,
            StoreQueueFullRawHits,
            StoreQueuePartialRawHits,
        ];
        // Where a line comes from: memory or another core's cache on this socket or
        // another, and the outer levels the other core's accesses reach (T4: the L3
        // too when the line's home is remote; KT: the L2 only then).
        const FILLS: &[Signal] = &[
            DCacheFillsFromCache,
            DCacheFillsFromLocalMemory,
            DCacheFillsFromRemote,
            ICacheFillsFromCache,
            ICacheFillsFromLocalMemory,
            ICacheFillsFromRemote,
            L2PrefetchLocalMemory,
            L2PrefetchRemoteMemory,
            StoresRemoteC2c,
            StoresLocalMemory,
            StoresRemoteMemory,
        ];
        const OUTER_T4: &[Signal] = &[L2PrefetchHitsL3, StoresHitL3, StoresLocalC2c];
        const OUTER_KT: &[Signal] = &[L2PrefetchHitsL2, StoresHitL2, CacheToCacheFills];
        let t4 = self.chip == SparcChip::T4;
        let niagara = self.chip == SparcChip::Niagara;
        // What waits for a line from a level: a load's consumer (a long wait fills the
        // instruction buffer), a fetch, a table walk, and a store's write (the store
        // buffer's entries, T4's store queue's), T4's outstanding misses too; and,
        // marked by no signal, a MEMBAR's wait for the stores to be written (``).
        let mut line = [DATA, TRAP, WALKS, &[StoreBufferWaitCycles]].concat();
        if t4 {
            line.extend(WALKS_T4.iter().chain(&[StoreQueueWaitCycles, RobWaitCycles, LoadBufferWaitCycles]));
        }
        let line = line.as_slice();
        let a = |table, key, value: &dyn ToString, shapes: &[Signal]| Assumption::new(table, key, value.to_string(), shapes);
        let mut v = vec![a("core", "load_use_cycles", &self.load_use_cycles, DATA), a("core", "l2_cycles", &self.l2_cycles, line)];
        if self.l3.is_some() {
            v.push(a("core", "l3_cycles", &self.l3_cycles, line));
        }
        v.push(a("core", "memory_cycles", &self.memory_cycles, line));
        if !niagara {
            v.push(a("core", "remote_cycles", &self.remote_cycles, line));
        }
        v.push(a("core", "mispredict_cycles", &self.mispredict_cycles, &[SelPipeDrainCycles]));
        if self.btc.is_some() {
            v.push(a("core", "btc_miss_cycles", &self.btc_miss_cycles, &[NoFetchCycles, NoFetchAllCycles]));
        }
        if let Some(d) = &self.direction {
            v.push(a("direction", "entries", &d.entries, &[BranchMispredicts]));
            v.push(a("direction", "history_bits", &d.history_bits, &[BranchMispredicts]));
        }
        if let Some(b) = &self.btc {
            v.push(a("btc", "entries", &b.entries, &[BtcMisses, BtcTargetIncorrect]));
        }
        if let Some(i) = &self.indirect {
            v.push(a("indirect", "entries", &i.entries, &[BranchMispredicts, IndirectMispredicts]));
        }
        if self.return_stack > 0 {
            v.push(a("core", "return_stack", &self.return_stack, &[BranchMispredicts, ReturnsPredicted, ReturnsMispredicted]));
        }
        let store_buffer: &'static [Signal] =
            if self.store_queue.is_some() { &[StoreBufferWaitCycles, StoreQueueWaitCycles] } else { &[StoreBufferWaitCycles] };
        v.push(a("core", "store_buffer", &self.store_buffer, store_buffer));
        if let Some(q) = &self.store_queue {
            v.push(a("core", "store_queue", &q.entries, STORE_QUEUE));
            v.push(a("core", "store_commit_cycles", &q.commit_cycles, STORE_QUEUE));
        }
        if let Some(b) = &self.l2_buffers {
            v.push(a("core", "l2_miss_buffer", &b.miss, &[L2MissBufferFull, L2PrefetchDrops, SwPrefetchDropsMissBufferFull]));
            v.push(a("core", "l2_fill_buffer", &b.fill, &[L2FillBufferFull]));
            v.push(a("core", "l2_writeback_buffer", &b.writeback, &[L2WritebackBufferFull]));
        }
        v.extend([
            a("core", "fp_divide_cycles", &self.fp_divide_cycles, DATA),
            a("core", "subnormal_cycles", &self.subnormal_cycles, &[]),
            a("core", "page_fault_cycles", &self.page_fault_cycles, &[]),
            a("core", "unaligned_cycles", &self.unaligned_cycles, &[]),
            a("core", "trap_cycles", &self.trap_cycles, &[]),
            a("core", "block_cycles", &self.block_cycles, &[]),
        ]);
        if niagara {
            // The hypervisor's handler times every walk, whether or not it traps on.
            let walk = [TRAP, WALKS].concat();
            v.push(a("core", "walk_trap_cycles", &self.walk_trap_cycles, &walk));
        }
        v.push(a("core", "fill_trap_cycles", &self.fill_trap_cycles, TRAP));
        if !niagara {
            let sockets = [FILLS, if t4 { OUTER_T4 } else { OUTER_KT }].concat();
            v.push(a("core", "sockets", &self.sockets, &sockets).queues());
        }
        // A write that finds the queue full waits where it is, and what waits on the
        // level that sent it waits too.
        v.push(a("memory", "write_queue", &self.mcu.write_queue, line).queues());
        v
    }
}
