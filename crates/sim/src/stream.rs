//! The event stream that drives every simulated PMU.
//!
//! A workload is an endless sequence of [`Block`]s. A block is a short body of
//! [`Span`]s repeated many times; a span is a run of identical cycles. Each cycle of a
//! span carries, for every architecture-neutral [`Signal`], how much it increments in
//! that cycle (so thresholds such as Montecito's "cycles in which more than N events
//! occurred" can be evaluated), plus the privilege level, the hardware thread, the
//! instruction address, an optional data reference and an optional branch outcome.
//!
//! Repetition makes billions of cycles cheap: a model advances a whole block at once
//! when no counter can overflow within it, and steps span by span only around an
//! overflow.

/// Architecture-neutral things that happen in a cycle. Each PMU model maps its event
/// codes onto these.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Signal {
    /// Instructions reaching execute (ARM11 counts condition-failed ones too).
    Instructions,
    /// Branch instructions executed, taken or not.
    Branches,
    /// Branches that changed program flow.
    BranchesTaken,
    /// Branches mispredicted (each flushes the pipeline).
    BranchMispredicts,
    /// Software writes to the PC without a mode change (taken branches included).
    PcChanges,
    /// Procedure calls that push the return stack.
    Calls,
    /// Procedure returns that pop the return stack.
    Returns,
    /// Returns whose address was predicted from the return stack and followed.
    ReturnsPredicted,
    /// Returns whose predicted address was wrong.
    ReturnsMispredicted,
    /// Instruction cache misses to cacheable locations.
    ICacheMisses,
    /// Cycles in which the instruction buffer cannot deliver an instruction.
    IBufStallCycles,
    /// Cycles stalled on a data dependency.
    DataDepStallCycles,
    /// Cycles stalled because the load/store unit's request queue is full.
    LsuFullStallCycles,
    /// Instruction micro-TLB misses.
    ITlbMisses,
    /// Data micro-TLB misses.
    DTlbMisses,
    /// Main TLB misses (page-table walks).
    MainTlbMisses,
    /// Non-sequential data cache line accesses to cacheable locations (and TCM).
    DCacheAccessesCacheable,
    /// Non-sequential data cache line accesses, cacheable or not.
    DCacheAccesses,
    /// Data accesses that miss the cache and DTCM and go to the external bus.
    DCacheMisses,
    /// Half-lines (four words) written back from the data cache.
    DCacheWritebacks,
    /// Explicit external data or peripheral accesses (refills, non-cacheable and
    /// write-through accesses).
    ExternalDataAccesses,
    /// Write-buffer drains (DSB or strongly-ordered access).
    WriteBufferDrains,
    /// Cycles with FIQ disabled.
    FiqDisabledCycles,
    /// Cycles with IRQ disabled.
    IrqDisabledCycles,
    /// Cycles with the `ETMEXTOUT[0]` signal asserted.
    EtmExtOut0,
    /// Cycles with the `ETMEXTOUT[1]` signal asserted.
    EtmExtOut1,
    /// Instruction cache tag or valid RAM parity errors.
    ICacheTagParityErrors,
    /// Instruction cache data RAM parity errors.
    ICacheDataParityErrors,
    /// Data cache tag or valid RAM parity errors.
    DCacheTagParityErrors,
    /// Data cache data RAM parity errors.
    DCacheDataParityErrors,
    /// Data cache dirty RAM parity errors.
    DCacheDirtyParityErrors,
    /// Instruction TCM errors.
    ItcmErrors,
    /// Data TCM errors.
    DtcmErrors,
    /// Load instructions executed.
    Loads,
    /// Store instructions executed.
    Stores,
    /// Floating-point, graphics and crypto arithmetic instructions executed (SPARC T4
    /// counts them together, TABLE 10-2 sl 3 mask 02).
    FguCryptoInstructions,
    /// Accesses to internal registers over a special-register path: ASI loads and
    /// stores to control registers and writes to state registers (SPARC T4 "SPR ring
    /// ops", TABLE 10-2 footnote 8).
    SprRingOps,
    /// Atomic read-modify-write instructions (compare-and-swap, test-and-set, swap).
    Atomics,
    /// Software prefetch instructions.
    SoftwarePrefetches,
    /// Block load and block store instructions (whole-line transfers).
    BlockLoadsStores,
    /// Serializing instructions that execute only once they are next to commit (SPARC
    /// T4 TABLE 10-1 footnote 1: crypto, atomics, I/O and internal-register accesses,
    /// privileged register reads and writes).
    NextToCommit,
    /// Cycles in which no valid instruction is fetched.
    NoFetchCycles,
    /// Memory (DRAM) read transactions: line fills that miss every cache level, data or
    /// instruction, and non-cacheable reads of memory (not of device registers).
    MemoryReads,
    /// Memory (DRAM) write transactions: dirty lines written back, and stores that
    /// bypass the cache (non-cacheable, write-through, or write misses that do not
    /// allocate) to memory (not to device registers).
    MemoryWrites,
    /// Memory reads (lines) of the thread that is *not* the span's: a background
    /// thread's L3 misses completing while the other thread runs, which Montecito counts
    /// as Floating events (Montecito §4.2.1). Only a switch-on-event core has them.
    BackgroundMemoryReads,
    /// Instruction-cache misses filled from a cache of this socket: the L2, another
    /// core's L2 (cache to cache) or the L3.
    ICacheFillsFromCache,
    /// Instruction-cache misses filled from this socket's memory.
    ICacheFillsFromLocalMemory,
    /// Instruction-cache misses filled from another socket's L3 or memory.
    ICacheFillsFromRemote,
    /// Load misses in the L1 data cache filled from a cache of this socket (block
    /// loads, prefetches and atomics are not loads here).
    DCacheFillsFromCache,
    /// Load misses in the L1 data cache filled from this socket's memory.
    DCacheFillsFromLocalMemory,
    /// Load misses in the L1 data cache filled from another socket's L3 or memory.
    DCacheFillsFromRemote,
    /// Instruction-TLB fills by a table walk, by page-size class: the chip's page
    /// sizes, smallest first (SPARC: 8 KB, 64 KB, 4 MB, 256 MB, 2 GB).
    ITlbFillsSize0,
    ITlbFillsSize1,
    ITlbFillsSize2,
    ITlbFillsSize3,
    ITlbFillsSize4,
    /// Data-TLB fills by a table walk, by page-size class.
    DTlbFillsSize0,
    DTlbFillsSize1,
    DTlbFillsSize2,
    DTlbFillsSize3,
    DTlbFillsSize4,
    /// Cycles spent handling instruction-TLB misses that end in a fill of each page-size
    /// class (the walk, or the trap handler where software walks).
    ITlbWalkCyclesSize0,
    ITlbWalkCyclesSize1,
    ITlbWalkCyclesSize2,
    ITlbWalkCyclesSize3,
    ITlbWalkCyclesSize4,
    /// Cycles spent handling data-TLB misses, by page-size class of the fill.
    DTlbWalkCyclesSize0,
    DTlbWalkCyclesSize1,
    DTlbWalkCyclesSize2,
    DTlbWalkCyclesSize3,
    DTlbWalkCyclesSize4,
    /// Table walks that found no translation (the TSB misses): a trap to software.
    ITlbFillTraps,
    DTlbFillTraps,
    /// Table-walk memory references for instruction-TLB misses, by the level that
    /// served them: the L2, the L3 (or another L2), or memory.
    ITlbWalkRefsL2,
    ITlbWalkRefsL3,
    ITlbWalkRefsMemory,
    /// Table-walk memory references for data-TLB misses, by serving level.
    DTlbWalkRefsL2,
    DTlbWalkRefsL3,
    DTlbWalkRefsMemory,
    /// Taken branches whose target the branch target cache did not hold.
    BtcMisses,
    /// Taken branches whose target the branch target cache predicted wrongly.
    BtcTargetIncorrect,
    /// Indirect branches whose target the indirect-target table predicted wrongly.
    IndirectMispredicts,
    /// Software prefetches dropped because the line was already in the L1 data cache.
    SwPrefetchDropsCacheHit,
    /// Hardware (next-line) prefetches dropped because the line was already in the L1
    /// data cache.
    HwPrefetchDropsCacheHit,
    /// Loads that read all their bytes from a store still in the store buffer.
    StoreBufferFullRawHits,
    /// Loads that overlap a buffered store without being covered by it.
    StoreBufferPartialRawHits,
    /// Software prefetches into the L2, by where the line was: the L2, the L3, this
    /// socket's memory, another socket's memory.
    L2PrefetchHitsL2,
    L2PrefetchHitsL3,
    L2PrefetchLocalMemory,
    L2PrefetchRemoteMemory,
    /// Stores reaching the L2 (a write-through L1 sends every store there), by where
    /// the line was (on Montecito: a store's or semaphore's L2D read for ownership,
    /// by whether the L3 held the line).
    StoresHitL2,
    StoresHitL3,
    StoresLocalMemory,
    StoresRemoteMemory,
    /// Lines leaving the L2, clean or to be written back.
    L2CleanEvictions,
    L2DirtyEvictions,
    /// L1 lines invalidated because the inclusive L2 evicted them.
    ICacheEvictionInvalidations,
    DCacheEvictionInvalidations,
    /// Cycles loads and stores wait for a data-TLB miss to be served.
    DTlbMissWaitCycles,
    /// Cycles a store waits for a free store-buffer entry.
    StoreBufferWaitCycles,
    /// Cycles correct-path instructions wait for a mispredicted branch to commit.
    SelPipeDrainCycles,
    /// Cycles the instruction buffer is full while the back end stalls.
    IBufFullCycles,
    /// Thread switches (switch-on-event multithreading), by cause: an L3 miss, a
    /// time-out; counted by the thread switched out, in the first switch cycle.
    ThreadSwitchesL3Miss,
    ThreadSwitchesTimeout,
    /// Cycles from a thread switch's start until the other thread runs.
    ThreadSwitchCycles,
    /// Register stack engine loads (fills) and stores (spills) of stacked registers.
    RseLoads,
    RseStores,
    /// Cycles the pipeline waits while the register stack engine spills (a call's
    /// frame overflows the physical stacked registers) or fills (a return finds its
    /// caller's frame spilled).
    RseSpillStallCycles,
    RseFillStallCycles,
    /// Data-side lookups (loads, stores, prefetches, page walks) that miss the L2
    /// data cache.
    L2DataMisses,
    /// L3 lookups by kind and outcome: instruction fetches from the L2I, data reads
    /// from the L2D (loads, prefetches, walks, stores' line fills), and the L2D's
    /// write-backs; a miss goes to memory (or, for a write-back, allocates).
    L3InstructionHits,
    L3InstructionMisses,
    L3DataReadHits,
    L3DataReadMisses,
    L3WritebackHits,
    L3WritebackMisses,
    /// Changes of privilege level (a system call, an interrupt, a return from one).
    PrivilegeChanges,
    /// Instruction-cache reads: fetches from a new line, hit or miss.
    ICacheReads,
    /// Instruction-cache way prediction by microtag (a hash of virtual address bits
    /// kept per way): no way's microtag matched; a way's matched but the line is not
    /// there; the matching way was not the one holding the line.
    MicrotagMisses,
    MicrotagFalseHits,
    MicrotagWayMismatches,
    /// Cycles instructions wait for a reorder-buffer entry (the buffer is full behind
    /// an outstanding load miss), and for a load-buffer entry (all hold outstanding
    /// loads).
    RobWaitCycles,
    LoadBufferWaitCycles,
    /// Lookups that hit the L2 data cache, and instruction fetches that hit the L2
    /// instruction cache (Montecito's split L2).
    L2DataHits,
    L2InstructionHits,
    /// IP-relative branches whose path (taken or not) was predicted wrongly: taken
    /// but predicted not taken, and not taken but predicted taken.
    PathMispredictsTaken,
    PathMispredictsNotTaken,
    /// Indirect branches other than returns.
    IndirectBranches,
    /// Front-end stall cycles by cause (Montecito's FE_BUBBLE causes, one per cycle):
    /// a translation the I-TLBs miss, an instruction-cache miss, the recirculate that
    /// fills the missed line, and a taken branch's resteer bubble.
    ITlbStallCycles,
    ICacheStallCycles,
    ICacheFillRecircCycles,
    ResteerBubbleCycles,
    /// Bundles a taken branch leaves unreached in its fetched pair (the rest of the
    /// pair after it, and a target's pair entered in its second bundle).
    UnreachedBundles,
    /// Branches whose path prediction the hardware never made: later branches of a
    /// bundle behind one predicted taken, forced to "predicted not taken" (Montecito
    /// §4.7), that turned out not taken, and taken.
    UnknownPredNotTaken,
    UnknownPredTaken,
    /// Instruction fetches that miss the L1I and find their line in the instruction
    /// streaming buffer, and 32-byte bundle pairs written into that buffer from the
    /// L2I and beyond (Montecito).
    IsbHits,
    IsbBundlePairsIn,
    /// Cycles the pipeline refills after an exception or interruption (a system
    /// call, an exception return) (Montecito's BE_FLUSH_BUBBLE.XPN).
    ExceptionFlushCycles,
    /// Cycles loads and stores wait for the hardware page walker (Montecito).
    HpwStallCycles,
    /// Issue groups ended by an architected stop: the next instruction consumes a
    /// result not yet there (Montecito's SYLL_NOT_DISPERSED.EXPL).
    ExplicitStops,
    /// Cycles the pipeline waits for a floating-point register's value, and for an
    /// application or control register's (Montecito's BE_EXE_BUBBLE.FRALL, ARCR).
    FrDepStallCycles,
    ArCrStallCycles,
    /// A thread switch's stall class: 1 for any switch, one more for each of 8, 16,
    /// …, 4096 that the cycles the pipeline had retired nothing before the switch
    /// reach (Montecito's THREAD_SWITCH_STALL thresholds), on the switch's first cycle.
    ThreadSwitchStall,
    /// Switch opportunities not taken: an L3 miss of the foreground thread while the
    /// other thread was not more urgent (Montecito).
    ThreadSwitchesMissed,
    /// Instruction prefetch requests (Montecito's next-line prefetcher): issued, hit or
    /// miss in the L1I; those the L2I serves, and those that miss it; and their L3
    /// lookups by outcome.
    L1iPrefetches,
    L2iPrefetchHits,
    L2iPrefetchMisses,
    L3InstructionPrefetchHits,
    L3InstructionPrefetchMisses,
    /// The memory reads that are partial-line bus transactions (Montecito BRP):
    /// non-cacheable reads of memory.
    PartialMemoryReads,
    /// Uncacheable reads and writes of device registers that travel on the system bus
    /// as partial transactions (Montecito BRP, BWP); they are not memory traffic.
    DeviceReads,
    DeviceWrites,
    /// Clean lines the last-level cache evicts and announces on the bus with a 0-byte
    /// write (Montecito's clean castouts).
    CleanCastouts,
    /// Memory writes out of the write-coalescing buffers: whole lines, and the pieces
    /// of a line flushed before it filled by size (aligned 32 or 16 bytes, 1-8 bytes in
    /// the low or the high half of a 16-byte chunk). Each is one of `MemoryWrites`.
    WcLines,
    Wc32,
    Wc16,
    Wc8Low,
    Wc8High,
    /// The other core's snoop answers to this core's line reads (BRL) and reads for
    /// ownership (BRIL) on the bus: a clean copy (HIT) or a modified one (HITM), which
    /// it writes back (Montecito's two cores, ERRATA MMC23).
    BrlHit,
    BrlHitm,
    BrilHit,
    BrilHitm,
    /// 0-byte invalidations (BIL): a store to a line this core shares with the other
    /// core, which drops its copy; and the stores that found their line shared.
    BusInvalidates,
    StoresHitShared,
    /// L2D fills in the Modified (a store's line) or Shared (another core holds it too)
    /// state; the other fills are Exclusive.
    L2dFillsModified,
    L2dFillsShared,
    /// The other core's transactions on the bus for the lines both run on (BRL,
    /// BRIL), and this core's snoop answers to them: a clean copy (HIT) or a modified
    /// one (HITM, written back implicitly).
    PeerBrl,
    PeerBril,
    PeerBrlHit,
    PeerBrlHitm,
    PeerBrilHit,
    PeerBrilHitm,
    /// Montecito's register stack as a call or return retires: the registers of the
    /// current frame, and the older frames' registers not yet spilled (dirty), each in
    /// bits 2:0, 5:3 and 6 (the RSE_CURRENT_REGS and RSE_DIRTY_REGS counters).
    RseCurrentLow,
    RseCurrentMid,
    RseCurrentHigh,
    RseDirtyLow,
    RseDirtyMid,
    RseDirtyHigh,
    /// L1 data cache lines another core's store invalidated (a snoop).
    DCacheSnoopInvalidations,
    /// L2 misses served by another core's cache (a cache-to-cache transfer), and the
    /// stores among them, from a core of this socket or of another.
    CacheToCacheFills,
    StoresLocalC2c,
    StoresRemoteC2c,
    /// Montecito's system interface (its timeline, ERRATA MMC24): the entries live in
    /// the cycle in each queue (up to 15): the arbiter's read, write and clean-castout
    /// queues, this core's and both cores' (`Both`), the bus's in-order queue, the
    /// snoop coalescing buffer (this core's transactions, both cores'), this core's
    /// snoop queue, the BRQ, and the reads outstanding on the bus.
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
    /// Bus clocks (1 in a bus clock's first cycle) carrying data, data that follows
    /// another transfer's, and snoop stalls; of both cores' transactions and of this
    /// core's (`Self`).
    BusDataClocks,
    BusDataClocksSelf,
    BusB2bClocks,
    BusB2bClocksSelf,
    BusSnoopStallClocks,
    BusSnoopStallClocksSelf,
    /// Memory reads of L3 misses the thread switched away from: issued now, counted as
    /// the thread's `MemoryReads` when they return (`BackgroundMemoryReads`).
    DeferredMemoryReads,
}

impl Signal {
    /// Fills and walk cycles of each TLB by page-size class, smallest first.
    pub const ITLB_FILLS: [Signal; 5] =
        [Signal::ITlbFillsSize0, Signal::ITlbFillsSize1, Signal::ITlbFillsSize2, Signal::ITlbFillsSize3, Signal::ITlbFillsSize4];
    pub const DTLB_FILLS: [Signal; 5] =
        [Signal::DTlbFillsSize0, Signal::DTlbFillsSize1, Signal::DTlbFillsSize2, Signal::DTlbFillsSize3, Signal::DTlbFillsSize4];
    pub const ITLB_WALK_CYCLES: [Signal; 5] = [
        Signal::ITlbWalkCyclesSize0,
        Signal::ITlbWalkCyclesSize1,
        Signal::ITlbWalkCyclesSize2,
        Signal::ITlbWalkCyclesSize3,
        Signal::ITlbWalkCyclesSize4,
    ];
    pub const DTLB_WALK_CYCLES: [Signal; 5] = [
        Signal::DTlbWalkCyclesSize0,
        Signal::DTlbWalkCyclesSize1,
        Signal::DTlbWalkCyclesSize2,
        Signal::DTlbWalkCyclesSize3,
        Signal::DTlbWalkCyclesSize4,
    ];

    pub const COUNT: usize = Signal::DeferredMemoryReads as usize + 1;

    pub const ALL: [Signal; Signal::COUNT] = [
        Signal::Instructions,
        Signal::Branches,
        Signal::BranchesTaken,
        Signal::BranchMispredicts,
        Signal::PcChanges,
        Signal::Calls,
        Signal::Returns,
        Signal::ReturnsPredicted,
        Signal::ReturnsMispredicted,
        Signal::ICacheMisses,
        Signal::IBufStallCycles,
        Signal::DataDepStallCycles,
        Signal::LsuFullStallCycles,
        Signal::ITlbMisses,
        Signal::DTlbMisses,
        Signal::MainTlbMisses,
        Signal::DCacheAccessesCacheable,
        Signal::DCacheAccesses,
        Signal::DCacheMisses,
        Signal::DCacheWritebacks,
        Signal::ExternalDataAccesses,
        Signal::WriteBufferDrains,
        Signal::FiqDisabledCycles,
        Signal::IrqDisabledCycles,
        Signal::EtmExtOut0,
        Signal::EtmExtOut1,
        Signal::ICacheTagParityErrors,
        Signal::ICacheDataParityErrors,
        Signal::DCacheTagParityErrors,
        Signal::DCacheDataParityErrors,
        Signal::DCacheDirtyParityErrors,
        Signal::ItcmErrors,
        Signal::DtcmErrors,
        Signal::Loads,
        Signal::Stores,
        Signal::FguCryptoInstructions,
        Signal::SprRingOps,
        Signal::Atomics,
        Signal::SoftwarePrefetches,
        Signal::BlockLoadsStores,
        Signal::NextToCommit,
        Signal::NoFetchCycles,
        Signal::MemoryReads,
        Signal::MemoryWrites,
        Signal::BackgroundMemoryReads,
        Signal::ICacheFillsFromCache,
        Signal::ICacheFillsFromLocalMemory,
        Signal::ICacheFillsFromRemote,
        Signal::DCacheFillsFromCache,
        Signal::DCacheFillsFromLocalMemory,
        Signal::DCacheFillsFromRemote,
        Signal::ITlbFillsSize0,
        Signal::ITlbFillsSize1,
        Signal::ITlbFillsSize2,
        Signal::ITlbFillsSize3,
        Signal::ITlbFillsSize4,
        Signal::DTlbFillsSize0,
        Signal::DTlbFillsSize1,
        Signal::DTlbFillsSize2,
        Signal::DTlbFillsSize3,
        Signal::DTlbFillsSize4,
        Signal::ITlbWalkCyclesSize0,
        Signal::ITlbWalkCyclesSize1,
        Signal::ITlbWalkCyclesSize2,
        Signal::ITlbWalkCyclesSize3,
        Signal::ITlbWalkCyclesSize4,
        Signal::DTlbWalkCyclesSize0,
        Signal::DTlbWalkCyclesSize1,
        Signal::DTlbWalkCyclesSize2,
        Signal::DTlbWalkCyclesSize3,
        Signal::DTlbWalkCyclesSize4,
        Signal::ITlbFillTraps,
        Signal::DTlbFillTraps,
        Signal::ITlbWalkRefsL2,
        Signal::ITlbWalkRefsL3,
        Signal::ITlbWalkRefsMemory,
        Signal::DTlbWalkRefsL2,
        Signal::DTlbWalkRefsL3,
        Signal::DTlbWalkRefsMemory,
        Signal::BtcMisses,
        Signal::BtcTargetIncorrect,
        Signal::IndirectMispredicts,
        Signal::SwPrefetchDropsCacheHit,
        Signal::HwPrefetchDropsCacheHit,
        Signal::StoreBufferFullRawHits,
        Signal::StoreBufferPartialRawHits,
        Signal::L2PrefetchHitsL2,
        Signal::L2PrefetchHitsL3,
        Signal::L2PrefetchLocalMemory,
        Signal::L2PrefetchRemoteMemory,
        Signal::StoresHitL2,
        Signal::StoresHitL3,
        Signal::StoresLocalMemory,
        Signal::StoresRemoteMemory,
        Signal::L2CleanEvictions,
        Signal::L2DirtyEvictions,
        Signal::ICacheEvictionInvalidations,
        Signal::DCacheEvictionInvalidations,
        Signal::DTlbMissWaitCycles,
        Signal::StoreBufferWaitCycles,
        Signal::SelPipeDrainCycles,
        Signal::IBufFullCycles,
        Signal::ThreadSwitchesL3Miss,
        Signal::ThreadSwitchesTimeout,
        Signal::ThreadSwitchCycles,
        Signal::RseLoads,
        Signal::RseStores,
        Signal::RseSpillStallCycles,
        Signal::RseFillStallCycles,
        Signal::L2DataMisses,
        Signal::L3InstructionHits,
        Signal::L3InstructionMisses,
        Signal::L3DataReadHits,
        Signal::L3DataReadMisses,
        Signal::L3WritebackHits,
        Signal::L3WritebackMisses,
        Signal::PrivilegeChanges,
        Signal::ICacheReads,
        Signal::MicrotagMisses,
        Signal::MicrotagFalseHits,
        Signal::MicrotagWayMismatches,
        Signal::RobWaitCycles,
        Signal::LoadBufferWaitCycles,
        Signal::L2DataHits,
        Signal::L2InstructionHits,
        Signal::PathMispredictsTaken,
        Signal::PathMispredictsNotTaken,
        Signal::IndirectBranches,
        Signal::ITlbStallCycles,
        Signal::ICacheStallCycles,
        Signal::ICacheFillRecircCycles,
        Signal::ResteerBubbleCycles,
        Signal::UnreachedBundles,
        Signal::UnknownPredNotTaken,
        Signal::UnknownPredTaken,
        Signal::IsbHits,
        Signal::IsbBundlePairsIn,
        Signal::ExceptionFlushCycles,
        Signal::HpwStallCycles,
        Signal::ExplicitStops,
        Signal::FrDepStallCycles,
        Signal::ArCrStallCycles,
        Signal::ThreadSwitchStall,
        Signal::ThreadSwitchesMissed,
        Signal::L1iPrefetches,
        Signal::L2iPrefetchHits,
        Signal::L2iPrefetchMisses,
        Signal::L3InstructionPrefetchHits,
        Signal::L3InstructionPrefetchMisses,
        Signal::PartialMemoryReads,
        Signal::DeviceReads,
        Signal::DeviceWrites,
        Signal::CleanCastouts,
        Signal::WcLines,
        Signal::Wc32,
        Signal::Wc16,
        Signal::Wc8Low,
        Signal::Wc8High,
        Signal::BrlHit,
        Signal::BrlHitm,
        Signal::BrilHit,
        Signal::BrilHitm,
        Signal::BusInvalidates,
        Signal::StoresHitShared,
        Signal::L2dFillsModified,
        Signal::L2dFillsShared,
        Signal::PeerBrl,
        Signal::PeerBril,
        Signal::PeerBrlHit,
        Signal::PeerBrlHitm,
        Signal::PeerBrilHit,
        Signal::PeerBrilHitm,
        Signal::RseCurrentLow,
        Signal::RseCurrentMid,
        Signal::RseCurrentHigh,
        Signal::RseDirtyLow,
        Signal::RseDirtyMid,
        Signal::RseDirtyHigh,
        Signal::DCacheSnoopInvalidations,
        Signal::CacheToCacheFills,
        Signal::StoresLocalC2c,
        Signal::StoresRemoteC2c,
        Signal::SiRqLive,
        Signal::SiRqLiveBoth,
        Signal::SiWriteqLive,
        Signal::SiWriteqLiveBoth,
        Signal::SiCcqLive,
        Signal::SiIoqLive,
        Signal::SiScbLive,
        Signal::SiScbLiveBoth,
        Signal::ErSnoopqLive,
        Signal::ErBrqLive,
        Signal::ErMemReadOut,
        Signal::BusDataClocks,
        Signal::BusDataClocksSelf,
        Signal::BusB2bClocks,
        Signal::BusB2bClocksSelf,
        Signal::BusSnoopStallClocks,
        Signal::BusSnoopStallClocksSelf,
        Signal::DeferredMemoryReads,
    ];
}

/// Privilege of a span of execution. Itanium's four levels (CPL 0 most privileged),
/// plus hyperprivileged for SPARC; ARM11 distinguishes only user and privileged.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Privilege {
    Hyper,
    Cpl0,
    Cpl1,
    Cpl2,
    #[default]
    Cpl3,
}

impl Privilege {
    pub const KERNEL: Privilege = Privilege::Cpl0;
    pub const USER: Privilege = Privilege::Cpl3;

    pub fn is_user(self) -> bool {
        self == Privilege::Cpl3
    }
}

/// A data reference made in each cycle of a span; in iteration `k` of its block the
/// address is `addr + k * stride`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemRef {
    pub addr: u64,
    pub stride: i64,
    pub size: u8,
    pub write: bool,
}

/// The outcome of the branch that ends a span.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Branch {
    pub target: u64,
    pub taken: bool,
    pub mispredicted: bool,
}

/// Words of sixteen signals each: comparing spans (to merge them) compares these.
/// Bits of one signal's per-cycle increment, and the largest increment: no signal of
/// any modelled chip counts more than 15 in one cycle (Montecito retires at most six
/// instructions, §4.3; memory transactions are a few per access).
const SIGNAL_BITS: usize = 4;
pub const MAX_PER_CYCLE: u8 = (1 << SIGNAL_BITS) - 1;
const PER_WORD: usize = 64 / SIGNAL_BITS;
const SIGNAL_WORDS: usize = Signal::COUNT.div_ceil(PER_WORD);

/// Per-cycle increments of every signal, four bits each, sixteen to a 64-bit word.
/// Machines compare every cycle's signals with the span before to merge them, and
/// spans are copied into blocks: whole words, as few as possible, keep both cheap.
#[derive(Debug, Clone, Copy, Eq, Default)]
pub struct Signals([u64; SIGNAL_WORDS]);

impl PartialEq for Signals {
    fn eq(&self, other: &Signals) -> bool {
        // OR of the XORs: no early exit and no call to memcmp.
        self.0.iter().zip(&other.0).fold(0, |acc, (x, y)| acc | (x ^ y)) == 0
    }
}

impl std::hash::Hash for Signals {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.hash(state);
    }
}

impl Signals {
    pub fn get(&self, s: Signal) -> u64 {
        let i = s as usize;
        (self.0[i / PER_WORD] >> (SIGNAL_BITS * (i % PER_WORD))) & u64::from(MAX_PER_CYCLE)
    }

    /// Sets a signal's per-cycle increment, at most [`MAX_PER_CYCLE`] (machines never
    /// produce more; debug builds check it).
    pub fn set(&mut self, s: Signal, per_cycle: u8) -> &mut Self {
        debug_assert!(per_cycle <= MAX_PER_CYCLE, "{s:?} counts {per_cycle} in one cycle");
        let (i, shift) = (s as usize / PER_WORD, SIGNAL_BITS * (s as usize % PER_WORD));
        let mask = u64::from(MAX_PER_CYCLE) << shift;
        self.0[i] = (self.0[i] & !mask) | (u64::from(per_cycle.min(MAX_PER_CYCLE)) << shift);
        self
    }

    pub fn with(mut self, s: Signal, per_cycle: u8) -> Self {
        self.set(s, per_cycle);
        self
    }

    /// Calls `f` with the index (`Signal as usize`) and increment of every signal that
    /// counts, skipping whole words of signals that do not.
    pub fn each_nonzero(&self, mut f: impl FnMut(usize, u64)) {
        let max = u64::from(MAX_PER_CYCLE);
        for (w, &word) in self.0.iter().enumerate() {
            let mut bits = word;
            while bits != 0 {
                let slot = bits.trailing_zeros() as usize / SIGNAL_BITS;
                f(PER_WORD * w + slot, (word >> (SIGNAL_BITS * slot)) & max);
                bits &= !(max << (SIGNAL_BITS * slot));
            }
        }
    }

    /// Both sets of signals, which must not share a signal (each one's increments
    /// are kept as they are).
    pub fn union(self, other: Signals) -> Signals {
        debug_assert!(self.0.iter().zip(&other.0).all(|(a, b)| a & b == 0), "{self:?} and {other:?} share a signal");
        Signals(std::array::from_fn(|i| self.0[i] | other.0[i]))
    }
}

/// What the memory transactions of a span's cycle met in the memory controller: each
/// transaction's whole wait is credited to the cycle that carries it (its
/// `MemoryReads` or `MemoryWrites`), since the cycles it waits through may belong to
/// other spans. Zero on machines without a memory-controller model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MemoryQueues {
    /// Cycles read transactions spent queued before they issued to their bank.
    pub read_cycles: u32,
    /// Cycles write transactions spent queued before they issued.
    pub write_cycles: u32,
    /// Cycles with requests queued and none able to issue for bank conflicts.
    pub bank_stall_cycles: u32,
    /// Reads deferred because they conflicted with a queued write.
    pub writeback_hits: u8,
    /// Times the queued writes starved and had to be drained ahead of reads.
    pub writes_starved: u8,
}

impl MemoryQueues {
    pub fn is_empty(&self) -> bool {
        *self == MemoryQueues::default()
    }
}

/// A run of identical cycles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub cycles: u64,
    pub thread: u8,
    pub privilege: Privilege,
    /// Address of the instructions executed in the span.
    pub ip: u64,
    pub mem: Option<MemRef>,
    pub branch: Option<Branch>,
    pub signals: Signals,
    /// Per cycle of the span.
    pub queues: MemoryQueues,
}

impl Span {
    /// `cycles` cycles of user code on thread 0 at `ip`, with no signals yet.
    pub fn new(cycles: u64, ip: u64) -> Span {
        Span {
            cycles,
            thread: 0,
            privilege: Privilege::USER,
            ip,
            mem: None,
            branch: None,
            signals: Signals::default(),
            queues: MemoryQueues::default(),
        }
    }

    pub fn with(mut self, s: Signal, per_cycle: u8) -> Span {
        self.signals.set(s, per_cycle);
        self
    }

    /// Total of a signal over the span.
    pub fn total(&self, s: Signal) -> u64 {
        self.signals.get(s) * self.cycles
    }
}

/// A body of spans repeated `repeat` times.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    pub body: Vec<Span>,
    pub repeat: u64,
}

impl Block {
    pub fn cycles_per_iteration(&self) -> u64 {
        self.body.iter().map(|s| s.cycles).sum()
    }

    pub fn cycles(&self) -> u64 {
        self.cycles_per_iteration().saturating_mul(self.repeat)
    }
}

/// Where a consumer stands in a stream: which block, how many whole iterations of
/// it are done, and how far into the current iteration.
pub struct Cursor {
    blocks: Box<dyn Iterator<Item = Block> + Send>,
    pub block: Option<Block>,
    /// Whole iterations of `block` consumed.
    pub iteration: u64,
    /// Span of the current iteration, and cycles of it consumed.
    pub span: usize,
    pub offset: u64,
}

impl Cursor {
    pub fn new(blocks: Box<dyn Iterator<Item = Block> + Send>) -> Cursor {
        let mut c = Cursor { blocks, block: None, iteration: 0, span: 0, offset: 0 };
        c.next_block();
        c
    }

    /// Move to the next non-empty block; `false` when the stream has ended.
    pub fn next_block(&mut self) -> bool {
        self.iteration = 0;
        self.span = 0;
        self.offset = 0;
        self.block = self.blocks.by_ref().find(|b| b.repeat > 0 && b.cycles_per_iteration() > 0);
        self.block.is_some()
    }

    /// Is the cursor at the start of an iteration (so whole iterations may be skipped)?
    pub fn at_iteration_start(&self) -> bool {
        self.span == 0 && self.offset == 0
    }
}

/// Exact totals over the first cycles of a stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Totals {
    pub cycles: u64,
    /// Indexed by `Signal as usize`.
    pub signals: [u64; Signal::COUNT],
    pub user_cycles: u64,
    pub kernel_cycles: u64,
}

impl Totals {
    pub fn get(&self, s: Signal) -> u64 {
        self.signals[s as usize]
    }

    pub(crate) fn zero() -> Totals {
        Totals { cycles: 0, signals: [0; Signal::COUNT], user_cycles: 0, kernel_cycles: 0 }
    }

    /// Counts `cycles` cycles of `span`.
    pub(crate) fn add(&mut self, span: &Span, cycles: u64) {
        self.cycles += cycles;
        if span.privilege.is_user() {
            self.user_cycles += cycles;
        } else {
            self.kernel_cycles += cycles;
        }
        // No overflow: a signal counts at most 15 per cycle, and cycles are far below 2^59.
        span.signals.each_nonzero(|i, per_cycle| self.signals[i] += per_cycle * cycles);
    }

    /// Exact totals of the spans `keep` accepts over the first `cycles` cycles of
    /// `blocks` (`cycles` measures the whole stream; `Totals::cycles` the cycles kept).
    ///
    /// Block-wise: whole iterations are multiplied out, only the last partial iteration
    /// is walked span by span, so the cost grows with the number of blocks, not with
    /// the cycles.
    pub fn of(blocks: impl IntoIterator<Item = Block>, cycles: u64, keep: impl Fn(&Span) -> bool) -> Totals {
        let mut totals = Totals::zero();
        let mut left = cycles;
        for block in blocks {
            if left == 0 {
                break;
            }
            let per_iteration = block.cycles_per_iteration();
            if per_iteration == 0 {
                continue;
            }
            let whole = block.repeat.min(left / per_iteration);
            for span in block.body.iter().filter(|s| keep(s)) {
                totals.add(span, span.cycles * whole);
            }
            left -= whole * per_iteration;
            if whole < block.repeat {
                // Less than an iteration is left: it ends inside this one.
                for span in &block.body {
                    let run = span.cycles.min(left);
                    if keep(span) {
                        totals.add(span, run);
                    }
                    left -= run;
                }
            }
        }
        totals
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn each_nonzero_visits_exactly_the_signals_that_count(values in prop::collection::vec(0u8..4, Signal::COUNT)) {
            let mut s = Signals::default();
            for (sig, &v) in Signal::ALL.iter().zip(&values) {
                s.set(*sig, v);
            }
            let mut seen = vec![0u64; Signal::COUNT];
            s.each_nonzero(|i, v| seen[i] += v);
            let expected: Vec<u64> = values.iter().map(|&v| u64::from(v)).collect();
            prop_assert_eq!(seen, expected);
            for (sig, &v) in Signal::ALL.iter().zip(&values) {
                prop_assert_eq!(s.get(*sig), u64::from(v));
            }
        }

        #[test]
        fn a_union_keeps_both_sets(a in 0usize..Signal::COUNT, b in 0usize..Signal::COUNT, x in 1u8..8, y in 1u8..8) {
            prop_assume!(a != b);
            let u = Signals::default().with(Signal::ALL[a], x).union(Signals::default().with(Signal::ALL[b], y));
            prop_assert_eq!((u.get(Signal::ALL[a]), u.get(Signal::ALL[b])), (u64::from(x), u64::from(y)));
        }
    }
}
