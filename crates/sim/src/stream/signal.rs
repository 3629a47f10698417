//! The architecture-neutral signals a machine computes in each cycle and every PMU
//! model maps its events onto.

/// Defines `Signal` and, from the same list, `Signal::ALL` (every signal in
/// discriminant order) and `Signal::COUNT`, so the two cannot drift apart.
macro_rules! signals {
    ($(#[$meta:meta])* pub enum Signal { $($(#[$doc:meta])* $name:ident,)* }) => {
        $(#[$meta])*
        pub enum Signal {
            $($(#[$doc])* $name,)*
        }

        impl Signal {
            pub const COUNT: usize = [$(stringify!($name)),*].len();
            /// Every signal, in discriminant order (`Signal::ALL[s as usize] == s`).
            pub const ALL: [Signal; Signal::COUNT] = [$(Signal::$name),*];
        }
    };
}

signals! {
/// Architecture-neutral things that happen in a cycle. Each PMU model maps its event
/// codes onto these.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u16)]
pub enum Signal {
    // SPARC's own (T4, KT, Niagara).
    /// Accesses to internal registers over a special-register path: ASI loads and
    /// stores to control registers and writes to state registers (SPARC T4 "SPR ring
    /// ops", TABLE 10-2 footnote 8).
    SprRingOps,
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
    /// Cycles in which no hardware thread of the core fetches (SPARC T4 fetch-0-all,
    /// TABLE 10-2 sl 8 mask 02): on a span group's primary.
    NoFetchAllCycles,
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
    /// Software prefetches dropped because the line was already in the L1 data cache,
    /// and because the miss buffer was full while other strands were running (T4).
    SwPrefetchDropsCacheHit,
    SwPrefetchDropsMissBufferFull,
    /// Hardware (next-line) prefetches dropped because the line was already in the L1
    /// data cache.
    HwPrefetchDropsCacheHit,
    /// Loads that read all their bytes from a store still in the store buffer.
    StoreBufferFullRawHits,
    /// Loads that overlap a buffered store without being covered by it.
    StoreBufferPartialRawHits,
    /// The same for a committed store waiting in the store queue to be written (no
    /// store in the store buffer overlapping the load).
    StoreQueueFullRawHits,
    StoreQueuePartialRawHits,
    /// Software prefetches into the L2 whose line was in another socket's memory (the
    /// other places it can be are shared with Montecito, below).
    L2PrefetchRemoteMemory,
    /// Stores reaching the L2 (a write-through L1 sends every store there) whose line
    /// was in the L2, and those whose line was in another socket's memory (the
    /// others are shared with Montecito, below).
    StoresHitL2,
    StoresRemoteMemory,
    /// Lines leaving the L2, clean or to be written back.
    L2CleanEvictions,
    L2DirtyEvictions,
    /// L2 misses that found every entry of the L2's miss buffer taken.
    L2MissBufferFull,
    /// L2 misses that found every entry of the L2's fill buffer taken.
    L2FillBufferFull,
    /// Fills whose displaced dirty line found every entry of the L2's write-back
    /// buffer taken.
    L2WritebackBufferFull,
    /// Requests that waited in front of the L2's pipeline for a fill holding it.
    L2PipeStalls,
    /// Software prefetches into the L2 dropped because its miss buffer was full.
    L2PrefetchDrops,
    /// L1 lines invalidated because the inclusive L2 evicted them.
    ICacheEvictionInvalidations,
    DCacheEvictionInvalidations,
    /// Cycles a store waits for a free store-buffer entry.
    StoreBufferWaitCycles,
    /// Of those, the cycles in which the oldest store in the buffer has committed and
    /// waits for a free store-queue entry.
    StoreQueueWaitCycles,
    /// Cycles correct-path instructions wait for a mispredicted branch to commit.
    SelPipeDrainCycles,
    /// Hardware thread (strand) k was ready to issue in the cycle but the core picked
    /// another (SPARC sel-0-ready, TABLE 10-2 sl 1 mask 04): on the span group's
    /// primary, so that a cycle of eight ready strands is one span. Not a count: 0, or
    /// 1 + the code of the strand's privilege level (`Privilege::code`), the mode its
    /// ready cycle counts in.
    StrandReady0,
    StrandReady1,
    StrandReady2,
    StrandReady3,
    StrandReady4,
    StrandReady5,
    StrandReady6,
    StrandReady7,
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
    /// SPARC L1 instruction lines another core's store or a device's write took.
    ICacheSnoopInvalidations,
    /// L1 data cache lines another core's store invalidated (a snoop).
    DCacheSnoopInvalidations,
    /// L2 misses served by another core's cache (a cache-to-cache transfer), and the
    /// stores among them, from a core of this socket or of another.
    CacheToCacheFills,
    StoresLocalC2c,
    StoresRemoteC2c,
    // ARM11's and SPARC's: ahead of SPARC's and Montecito's, so that Montecito's
    // span (which ends in its own) leaves them out; ARM11's then spans SPARC's and
    // Montecito's ten too, and still fits its three words.
    /// Software writes to the PC without a mode change (taken branches included).
    PcChanges,
    /// Returns whose address was predicted from the return stack and followed.
    ReturnsPredicted,
    // SPARC's and Montecito's.
    /// Floating-point, graphics and crypto arithmetic instructions executed (SPARC T4
    /// counts them together, TABLE 10-2 sl 3 mask 02).
    FguCryptoInstructions,
    /// Atomic read-modify-write instructions (compare-and-swap, test-and-set, swap).
    Atomics,
    /// Indirect branches whose target the indirect-target table predicted wrongly.
    IndirectMispredicts,
    /// Software prefetches into the L2, by where the line was: the L2, the L3, this
    /// socket's memory (another socket's memory is SPARC's own, above).
    L2PrefetchHitsL2,
    L2PrefetchHitsL3,
    L2PrefetchLocalMemory,
    /// Stores reaching the L2 whose line was in the L3 or this socket's memory (on
    /// Montecito: a store's or semaphore's L2D read for ownership, by whether the L3
    /// held the line).
    StoresHitL3,
    StoresLocalMemory,
    /// Cycles loads and stores wait for a data-TLB miss to be served.
    DTlbMissWaitCycles,
    /// Cycles the front end stalls behind a stalled back end: its instruction buffer
    /// is full; on Montecito, flags: the buffer full ([`IBUF_FULL`]), or the branch
    /// retirement queue ([`IBUF_BRQ_FULL`], ERRATA MMC78).
    IBufFullCycles,
    // Every family's.
    /// Cycles the thread is halted: an idle loop's wait for an interrupt
    /// (`program::Op::Halt`: ARM's WFI, Itanium's PAL_HALT_LIGHT, sun4v's cpu_yield),
    /// in which it executes nothing until the next timer tick. Each PMU model decides
    /// what its counters do in them (most stop: the clocks are gated).
    HaltedCycles,
    /// Instructions reaching execute (ARM11 counts condition-failed ones too).
    Instructions,
    /// Branch instructions executed, taken or not.
    Branches,
    /// Branches that changed program flow.
    BranchesTaken,
    /// Branches mispredicted (each flushes the pipeline).
    BranchMispredicts,
    /// Procedure returns that pop the return stack.
    Returns,
    /// Returns whose predicted address was wrong.
    ReturnsMispredicted,
    /// Instruction cache misses to cacheable locations.
    ICacheMisses,
    /// Cycles stalled on a data dependency.
    DataDepStallCycles,
    /// Instruction micro-TLB misses.
    ITlbMisses,
    /// Data micro-TLB misses.
    DTlbMisses,
    /// Data accesses that miss the cache and DTCM and go to the external bus.
    DCacheMisses,
    /// Load instructions executed.
    Loads,
    /// Store instructions executed.
    Stores,
    /// Memory (DRAM) read transactions: line fills that miss every cache level, data or
    /// instruction, and non-cacheable reads of memory (not of device registers).
    MemoryReads,
    /// Memory (DRAM) write transactions: dirty lines written back, and stores that
    /// bypass the cache (non-cacheable, write-through, or write misses that do not
    /// allocate) to memory (not to device registers).
    MemoryWrites,
    // ARM11's and Montecito's.
    /// Procedure calls that push the return stack.
    Calls,
    /// Cycles in which the instruction buffer cannot deliver an instruction.
    IBufStallCycles,
    /// Cycles stalled because the load/store unit's request queue is full.
    LsuFullStallCycles,
    /// Main TLB misses (page-table walks).
    MainTlbMisses,
    /// Non-sequential data cache line accesses to cacheable locations (and TCM).
    DCacheAccessesCacheable,
    /// Non-sequential data cache line accesses, cacheable or not.
    DCacheAccesses,
    /// Half-lines (four words) written back from the data cache.
    DCacheWritebacks,
    // ARM11's own.
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
    // Montecito's own.
    /// Loads of a floating-point register (Montecito's L1D does not serve them).
    FpLoads,
    /// Floating-point results that are subnormal (`program::FpValues`): flushed to
    /// zero by a thread in flush-to-zero mode, or, without it, delivered by the
    /// software-assist trap its Safe Instruction Recognition stall leads to, and the
    /// cycles of that stall (ERRATA MMC53).
    FpFlushedToZero,
    FpSubnormalResults,
    FpSirStallsTrapping,
    /// Safe Instruction Recognition stalls that lead to no trap: an operation reading
    /// a subnormal operand whose own result is normal (Montecito's FP_FALSE_SIRSTALL;
    /// ERRATA MMC61).
    FpSirStallsFalse,
    FpuStallCycles,
    /// Memory reads (lines) of the thread that is *not* the span's: a background
    /// thread's L3 misses completing while the other thread runs, which Montecito counts
    /// as Floating events (Montecito §4.2.1). Only a switch-on-event core has them.
    BackgroundMemoryReads,
    /// Thread switches (switch-on-event multithreading), by cause: an L3 miss, a
    /// time-out, a pause hint; counted by the thread switched out, in the first
    /// switch cycle.
    ThreadSwitchesL3Miss,
    ThreadSwitchesTimeout,
    ThreadSwitchesHint,
    /// A switch away from a thread that halted (PAL_HALT_LIGHT) while the other had
    /// work (Montecito's low-power switch).
    ThreadSwitchesLowPower,
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
    /// Montecito's interruption entry and exit (ERRATA MMC39): cycles the RSE waits
    /// for its application registers (ar.bspstore moves), for `loadrs`, and for a
    /// register bank switch (`bsw.0` on exit); cycles execution waits for one (`bsw.1`
    /// on entry).
    RseArDepStallCycles,
    RseLoadrsStallCycles,
    RseBankSwitchStallCycles,
    BankSwitchStallCycles,
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
    /// A change of privilege level (a system call, an interrupt, a return from one):
    /// the level left and the level entered, as bits 0-3 for levels 0-3 (the unit
    /// mask of Montecito's CPU_CPL_CHANGES).
    PrivilegeChange,
    /// Instruction-cache reads: fetches from a new line, hit or miss.
    ICacheReads,
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
    /// Front-end stall cycles in which a counted loop's first `br.cloop` waits for the
    /// loop count its perfect-loop prediction reads (Montecito's PLP, ERRATA MMC43).
    LoopCountStallCycles,
    /// Montecito switch events gated for forward progress (ERRATA MMC46): an L3 miss
    /// that would switch threads before the thread switched in has retired anything;
    /// and the cycles from a switch-in until that first retirement, in which every
    /// switch is gated.
    ThreadSwitchesGated,
    ThreadSwitchGatedCycles,
    /// Switch events (an L3 miss, a hint, a time-out) while the other thread is halted
    /// in low power: the switch is gated (Montecito's THREAD_SWITCH_GATED.LP).
    ThreadSwitchesGatedLowPower,
    /// Front-end stall cycles in which a return waits for the link register its
    /// function restores right before it (Montecito's BR_ILOCK, ERRATA MMC45).
    BranchInterlockCycles,
    /// Front-end stall cycles in which a counted loop's entry initializes the
    /// prediction of its back edge (`brp.loop.imp`; Montecito's BI, ERRATA MMC65).
    BranchInitCycles,
    /// Bundles a taken branch leaves unreached in its fetched pair (the rest of the
    /// pair after it, and a target's pair entered in its second bundle).
    UnreachedBundles,
    /// Branches whose path prediction the hardware never made: later branches of a
    /// bundle behind one predicted taken, forced to "predicted not taken" (Montecito
    /// §4.7), that turned out not taken, and taken.
    UnknownPredNotTaken,
    UnknownPredTaken,
    /// Montecito returns predicated on a condition (ERRATA MMC40): those whose
    /// predicate was false (each also one of `Returns`), those predicted not taken and
    /// taken, those predicted taken and not, and those an earlier branch of their
    /// bundle forced to "predicted not taken" that were not taken (§4.7).
    ReturnsNotTaken,
    ReturnMispredictsTaken,
    ReturnMispredictsNotTaken,
    UnknownReturnsNotTaken,
    /// Montecito indirect jumps predicated on a condition (ERRATA MMC41), as the
    /// returns above: predicate false (each also one of `IndirectBranches`), predicted
    /// not taken and taken, predicted taken and not, forced and not taken.
    IndirectNotTaken,
    IndirectMispredictsTaken,
    IndirectMispredictsNotTaken,
    UnknownIndirectNotTaken,
    /// Montecito branches of an issue group whose port B0 holds a branch: a BBB
    /// bundle's first slot, a multiway branch (Itanium 2 dispersal rules, ERRATA MD41:
    /// an MIB's, MFB's or MMB's branch goes to B2, an MBB's to B1 and B2).
    EncodedBranches,
    /// Montecito branch bundles whose effect on the register frame the front end
    /// predicted wrongly while predicting their path rightly, as flags (ERRATA MD61):
    /// bit 0 ([`BE_STAGE`]) a loop branch's stage, bit 1 ([`BE_ROTATE`]) its rotation,
    /// bit 2 ([`BE_FRAME`]) a taken return's restored frame (BE_BR_MISPRED_DETAIL).
    BackEndMispredicts,
    /// Montecito integer speculative loads (`ld.s`, ERRATA MMC42) that returned a NaT,
    /// as flags of why: bit 0 ([`SPEC_NAT_PSR_ED`]) the operating system deferred the
    /// load's fault (PSR.ed), bit 1 ([`SPEC_NAT_CONSUMED`]) its address was a NaT, bit 2
    /// ([`SPEC_NAT_TLB_FAULT`]) the hardware deferred its page's fault (DCR, MMC55).
    SpecNat,
    /// Montecito speculation checks that failed, as flags: a `chk.s` whose load
    /// returned a NaT, bit 0 ([`FAILED_CHECK_INT`]) an integer load's, bit 1
    /// ([`FAILED_CHECK_FP`]) a floating-point load's (INST_FAILED_CHKS_RETIRED, MMC55);
    /// bit 2 ([`FAILED_CHECK_FCHKF`]) an `fchkf` whose speculated operations raised a
    /// flag the main status field lacks (FP_FAILED_FCHKF, MMC80).
    FailedChecks,
    /// Montecito accesses at a misaligned address that the hardware performed (ERRATA
    /// MMC56): those that read (loads, semaphores: MISALIGNED_LOADS_RETIRED) and those
    /// that write (stores, semaphores: MISALIGNED_STORES_RETIRED). A semaphore is both;
    /// an issue group may hold loads and stores (MMC1).
    MisalignedReads,
    MisalignedWrites,
    /// Montecito data accesses to memory no cache holds (non-cacheable memory, device
    /// registers): those that read, that write, FP loads and semaphores among them,
    /// each counted as it issues, so that an issue group mixing them with cacheable
    /// ones (MMC1) counts each where it belongs (UC_LOADS_RETIRED, UC_STORES_RETIRED,
    /// and the L1D's and L2D's cacheable references).
    UncachedLoads,
    UncachedStores,
    UncachedFpLoads,
    UncachedAtomics,
    /// Montecito stall cycles waiting for a load the L2D cancelled and issued again
    /// (ERRATA MMC47).
    CancelledLoadCycles,
    /// Why Montecito's L1D pipeline holds an access back, in each of its stall cycles:
    /// an [`L1dConflict`] (ERRATA MMC42, MMC44).
    L1dConflict,
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
    /// Syllables an issue group leaves behind because the front end re-steered into
    /// the middle of a bundle (a mispredicted branch's fall-through, an interruption's
    /// return): the group starts at that slot (Montecito's SYLL_NOT_DISPERSED.MLX).
    ResteerSyllables,
    /// Syllables an issue group leaves behind because its window starts where the
    /// group before it stopped, inside a bundle (ERRATA MMC64), and whether that group
    /// ended at an architected stop (SYLL_NOT_DISPERSED.EXPL's, else IMPL's, MD38).
    LeadingSyllables,
    LeadingExplicit,
    /// Issue groups ended by an implicit stop: a third load or store for the L1D's two
    /// ports of each (MMC1), or the end of the bundle of a branch (MMC64) (Montecito's
    /// SYLL_NOT_DISPERSED.IMPL).
    ImplicitStops,
    /// Cycles the pipeline waits for a floating-point register's value, and for an
    /// application or control register's (Montecito's BE_EXE_BUBBLE.FRALL, ARCR).
    FrDepStallCycles,
    ArCrStallCycles,
    /// Cycles the pipeline waits for a predicate an FP instruction writes: frcpa's
    /// and frsqrta's, which qualify the next step of a divide or square root
    /// (Montecito's BE_EXE_BUBBLE.PR).
    PrDepStallCycles,
    /// Cycles the pipeline waits for a general register's value from a producer
    /// slower than the ALU's one cycle: `getf`'s (Montecito's BE_EXE_BUBBLE.GRGR).
    GrGrStallCycles,
    /// Instruction serializations (Itanium `srlz.i`) after a privileged processor-state
    /// move.
    InstructionSerializations,
    /// Instructions retired with a false qualifying predicate (Itanium if-conversion).
    PredicatedOff,
    /// Nops retired with a true predicate (the slots of Itanium bundles no
    /// instruction fills).
    Nops,
    /// Itanium check loads of advanced loads, integer and FP: all, those that failed,
    /// and those whose ALAT entry a later advanced load displaced.
    AlatChecksInt,
    AlatChecksFp,
    AlatFailedInt,
    AlatFailedFp,
    AlatDisplacedInt,
    AlatDisplacedFp,
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
    /// Demand fetches of a line a prefetch is still bringing (Montecito's RAB hits),
    /// and those whose change to a demand request the L2I aborts: the prefetch's
    /// lookup was already done.
    L1iFetchRabHits,
    L2iSpecAborts,
    /// L2I requests, demand and prefetch, for a line whose miss is still pending there
    /// (they recirculate until its fill); and flags of hits the L2I abandons because
    /// another line's fill is returning its data, bit 0 a demand fetch's, bit 1 a
    /// prefetch's (their event counts one a cycle).
    L2iRecirculatesDemand,
    L2iRecirculatesPrefetch,
    L2iHitConflicts,
    /// Valid L2I lines a fill replaces.
    L2iVictims,
    /// Montecito's reads of code in uncacheable memory, which the L2I reads from the
    /// bus (L2I_UC_READS; ERRATA MMC57, MMC76): flags, a demand fetch's and a
    /// prefetch's ([`UNCACHED_DEMAND`], [`UNCACHED_PREFETCH`]).
    UncachedFetches,
    /// Cycles an L2D request waits for an OzQ entry or an L2D miss for one of the 16
    /// request buffers (Montecito's L2D back pressure).
    L2dBackPressureCycles,
    /// Montecito L2D secondary misses (a request for a line whose miss is outstanding)
    /// by where they found it: one cycle ahead in the pipeline, still in the OzQ, or
    /// passed to the L3 with its fill on the way; and by direction (a semaphore both).
    L2dSecondaryL1w,
    L2dSecondaryOzq,
    L2dSecondaryFill,
    L2dSecondaryReads,
    L2dSecondaryWrites,
    /// L2D misses inserted beside another of the same set in the same issue group, and
    /// while a request forced to recirculate was in the OzQ.
    L2dSameIndex,
    L2dMissWhileForced,
    /// Forced recirculates of the L2D's OzQ that issued (one a cycle) and that were
    /// cancelled.
    L2dRecirculates,
    L2dRecirculateCancels,
    /// L2D requests that found the OzQ's 32 entries taken, and L2D misses that found
    /// the 16 request buffers taken.
    L2dOzqFull,
    L2dFillBufferFull,
    /// Montecito L2D requests that found the OzQ empty and bypassed it (ERRATA
    /// MMC36): hits by the first path of their cycle (L1D to L2A) and by the second
    /// (L1W to L2I), hits cancelled for the bank of the cycle's first, and misses the
    /// L3 served; and uncacheable requests whose speculative L3 access the L2D
    /// cancelled for their memory attribute.
    L2dBypassL1d,
    L2dBypassL1w,
    L2dBankConflicts,
    L3DataBypasses,
    L3BypassAttributeCancels,
    /// Montecito L2D reads cancelled because a store to their 16 bytes was still in
    /// the L2D pipeline, by the store's stage: L2A, L2M, L2D, L2C (ERRATA MMC37).
    L2dStoreMatchL2a,
    L2dStoreMatchL2m,
    L2dStoreMatchL2d,
    L2dStoreMatchL2c,
    /// Montecito semaphores and release stores cancelled because older requests of
    /// their thread were still in the L2D's OzQ (ERRATA MMC38).
    L2dSemaphoreCancels,
    L2dReleaseCancels,
    /// Montecito `sync.i`s cancelled while the `fc` before them was in the L2D's
    /// OzQ (ERRATA MMC38).
    L2dMiscOrderCancels,
    /// Montecito L2D requests cancelled while an older acquire load of their thread
    /// was in the OzQ or beyond, and those of them in the acquire's own issue group
    /// (late cancels; ERRATA MMC48).
    L2dAcquireCancels,
    L2dSiblingAcquireCancels,
    /// Montecito L2D reads cancelled in L2A by a store of their issue group to their
    /// 4-byte word, both having bypassed the empty OzQ: late cancels of an effective
    /// release (a subset of `L2dStoreMatchL2a`; ERRATA MMC1).
    L2dLateBypassReleases,
    /// Montecito L2D store hits forced to recirculate by a miss of their issue group
    /// to their set (L2D_FORCE_RECIRC.TAG_NOTOK; ERRATA MMC1).
    L2dTagNotOk,
    /// Montecito OzQ entries forced to recirculate because a snoop of the other core
    /// matched their line (L2D_FORCE_RECIRC.SNP_OR_L3; ERRATA MMC71).
    L2dSnoopRecirculates,
    /// Montecito L2D misses that reached the L2D behind an acquire of their thread
    /// that missed it, transformed into prefetches of their lines (L2D_FORCE_RECIRC.
    /// TRAN_PREF; ERRATA MMC74).
    L2dTransformedPrefetches,
    /// Montecito L2D hits cancelled while the data array wrote a fill (a read's,
    /// OZQ_PREEMPT; a store's, FILL_ST_CONF; a store's when the fill merges stores'
    /// data, OZDATA_CONF) or read a dirty victim out (WB_CONF), and reads that met a
    /// store the L2D had cancelled (CANC_L2M_TO_L2C_ST) (ERRATA MMC49).
    L2dFillPreempts,
    L2dFillStoreConflicts,
    L2dOzDataConflicts,
    L2dWritebackConflicts,
    L2dCancelledStoreMatches,
    /// Montecito's streaming instruction prefetches, and the PVAB's overflows (ERRATA
    /// MMC50).
    L1iStrmPrefetches,
    PvabOverflows,
    /// ECC errors in writes entering the system interface's write data queue, single-
    /// and double-bit (Montecito, under fault injection).
    WdqEccSingle,
    WdqEccDouble,
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
    /// The other core's transactions on the bus for the lines both run on (BRL,
    /// BRIL), and this core's snoop answers to them: a clean copy (HIT) or a modified
    /// one (HITM, written back implicitly).
    PeerBrl,
    PeerBril,
    PeerBrlHit,
    PeerBrlHitm,
    PeerBrilHit,
    PeerBrilHitm,
    /// The system's I/O bridge on the bus for devices' DMA (a non-CPU priority agent):
    /// line reads it prefetches (BRL), single-line reads of the current data (BRC),
    /// partial reads (BRP), invalidations of lines it writes whole (BIL) and reads for
    /// ownership of lines it writes in part (BRIL), each followed by the line's write
    /// (BWL).
    IoBrl,
    IoBrc,
    IoBrp,
    IoBil,
    IoBril,
    IoBwl,
    /// This core's snoop answers to the bridge: HIT and HITM to its line reads (BRL);
    /// HIT to its other transactions; HITM to its BRIL, its BIL, and its other reads
    /// (BRC, BRP).
    IoBrlHit,
    IoBrlHitm,
    IoOtherHit,
    IoBrilHitm,
    IoBilHitm,
    IoReadHitm,
    /// Lines of code made coherent with fetch (`fc`): each a snoop of the Montecito
    /// L1I; and L2I lines that another agent's snoop or an `fc` invalidated.
    CodeFlushes,
    L2iSnoopHits,
    /// Montecito's register stack as a call or return retires: the registers of the
    /// current frame, and the older frames' registers not yet spilled (dirty), each in
    /// bits 2:0, 5:3 and 6 (the RSE_CURRENT_REGS and RSE_DIRTY_REGS counters).
    RseCurrentLow,
    RseCurrentMid,
    RseCurrentHigh,
    RseDirtyLow,
    RseDirtyMid,
    RseDirtyHigh,
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
    /// The BRQ's forward progress (Montecito's ER_REJECT_ALL_*, ERRATA MMC73): bit 0
    /// while it rejects every L1D request because an L1I request waits for a request
    /// buffer, bit 1 while it rejects every L1I request because an L1D request waits,
    /// bit 2 while it rejects every L1 request because a write waits for a write
    /// buffer.
    BrqRejecting,
    /// Release stores in the L2D's OzQ (ERRATA MMC38), laid over the cycles like the
    /// system interface's queues.
    L2dOzqReleaseLive,
    /// Acquires in the L2D's OzQ, a semaphore's or a load's, from their request to
    /// their data (ERRATA MMC29, MMC48), laid over the cycles the same way.
    L2dOzqAcquireLive,
    /// Cycles the L2D's OzQ data buffer is full: every entry holds a write's data
    /// (Montecito's L2D_OZDB_FULL, ERRATA MMC69), laid over the cycles the same way.
    L2dOzdbFull,
    /// Montecito's RAB entries taken (a demand miss's, the prefetches'), and the cycles
    /// its prefetch pipeline is stalled for one: 1, or 2 while it stalls with its
    /// stream no further ahead than the demand fetch's next line (ERRATA MMC50).
    RabLive,
    PrefetchStall,
    /// L2D fills by the state they leave their line in, each in the cycle its data is
    /// back, laid the same way (ERRATA MMC51): Modified (a store's line), Exclusive,
    /// Shared (the other core holds it too), Invalid (a snoop in flight took it),
    /// Pending (a snoop in flight read it).
    L2dFillsModified,
    L2dFillsExclusive,
    L2dFillsShared,
    L2dFillsInvalid,
    L2dFillsPending,
    /// This core's writes that found all 8 write buffers taken (§2.3.3.4: "A modified
    /// L2D victim or partial write may be allocated to one of 8 write buffers"), in
    /// the cycle each was made (ERRATA MMC52).
    L2dVictimBufferFull,
    /// Valid L2D lines a fill replaced while their set had an invalid way: the L2D's
    /// recency order ignores invalidations (Montecito's L2D_BAD_LINES_SELECTED, ERRATA
    /// MMC66).
    L2dBadLinesSelected,
    /// This core's bus transactions whose request phase met one of its own for the
    /// same line in the in-order queue: an `fc`'s BIL and the write-back of its
    /// modified line (ERRATA MMC35).
    SiIoqCollisions,
    /// This core's transactions whose request phase met its own write of the same line
    /// in the write address queue: an `fc`'s BIL and its line's write-back (MMC35).
    SiWaqCollisions,
    /// Bus clocks (1 in a bus clock's first cycle) carrying data, data that follows
    /// another transfer's, and snoop stalls; of both cores' transactions and of this
    /// core's (`Self`).
    BusDataClocks,
    BusDataClocksSelf,
    BusB2bClocks,
    BusB2bClocksSelf,
    BusSnoopStallClocks,
    BusSnoopStallClocksSelf,
    /// Bus clocks carrying the I/O bridge's data, and those of them back to back.
    BusDataClocksIo,
    BusB2bClocksIo,
    /// L2I misses whose request the L3 and bus controller rejected at first, every
    /// request buffer being taken: bit 0 a demand fetch's, bit 1 a prefetch's (the
    /// unit-mask bits 1:0 of Montecito's L2I_L3_REJECTS).
    L2iL3Rejects,
    /// Secondary L2D misses woken by their line's fill beyond the four the L2D issues
    /// a clock: cancelled for oversubscription (Montecito's
    /// L2D_OZQ_CANCELS0.OVER_SUB).
    L2dOversubscribed,
    /// Cycles a thread switch waits for the leaving thread's L2D hits to return their
    /// data (Montecito's THREAD_SWITCH_CYCLE.L2D).
    ThreadSwitchL2dStall,
    /// Accesses a data breakpoint matched, and the data debug faults they took
    /// (Montecito's DATA_DEBUG_REGISTER_MATCHES and _FAULT).
    DataDebugMatches,
    DataDebugFaults,
    /// Snoops that reached the L2D within three cycles of a fill of their line
    /// (Montecito's L2D_L3ACCESS_CANCEL.P2_COV_SNP_FILL_NOSNP; ERRATA MMC51).
    L2dSnoopFillConflicts,
    /// Snoops that found an error in the L2D's tags, under fault injection (Montecito's
    /// L2D_L3ACCESS_CANCEL.P2_COV_SNP_TEM, "A snoop saw an L2D tag error and missed";
    /// ERRATA MMC67).
    L2dSnoopTagErrors,
    /// This core's BILs (an `fc`) the other core answered HITM (Montecito's
    /// BUS_RD_INVALID_HITM.SELF).
    BilHitm,
}
}

impl Signal {
    /// The I/O bridge's transactions and this core's answers to them.
    pub const IO_BRIDGE: [Signal; 12] = {
        use Signal::*;
        [IoBrl, IoBrc, IoBrp, IoBil, IoBril, IoBwl, IoBrlHit, IoBrlHitm, IoOtherHit, IoBrilHitm, IoBilHitm, IoReadHitm]
    };

    /// `StrandReady0` to `StrandReady7`, by strand.
    pub const STRAND_READY: [Signal; 8] = {
        use Signal::*;
        [StrandReady0, StrandReady1, StrandReady2, StrandReady3, StrandReady4, StrandReady5, StrandReady6, StrandReady7]
    };

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
}

/// The values of [`Signal::L1dConflict`]: what Montecito's L1D pipeline holds an
/// access back for (BE_L1D_FPU_BUBBLE's reasons).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum L1dConflict {
    /// A speculative load's return recirculates to generate its NaT (L1D_NAT, MMC42).
    Nat = 1,
    /// A load's miss recirculates until one of the eight fills is free
    /// (L1D_PIPE_RECIRC, MMC44).
    Recirculate,
    /// A store waits for a fill of its line (L1D_FILLCONF).
    Fill,
    /// A load waits for a store to its bytes to be written (L1D_LDCONF).
    Store,
    /// An advanced load's check load does so (L1D_LDCHK).
    Check,
    /// A read of ar.unat waits for the NaT bits of the registers spilled before it
    /// (L1D_AR_CR, MMC68).
    ArCr,
}

/// [`Signal::SpecNat`]'s flags: a speculative load the operating system deferred
/// (PSR.ed), and one whose address was a NaT.
pub const SPEC_NAT_PSR_ED: u8 = 0b01;
pub const SPEC_NAT_CONSUMED: u8 = 0b10;
/// [`Signal::SpecNat`]'s flag of a load whose page was not present, a fault the
/// hardware defers (DCR.dp).
pub const SPEC_NAT_TLB_FAULT: u8 = 0b100;
/// [`Signal::SpecNat`]'s flag of a load whose Data TLB fault (a walk that found no
/// translation) the hardware defers (DCR.dm, which a hypervisor sets for its guests).
pub const SPEC_NAT_TLB_MISS: u8 = 0b1000;

/// [`Signal::IBufFullCycles`]' flags on Montecito: the instruction buffer is full, or
/// the fetch stopped short of filling it, its next branch finding the branch
/// retirement queue full.
pub const IBUF_FULL: u8 = 0b01;
pub const IBUF_BRQ_FULL: u8 = 0b10;

/// [`Signal::UncachedFetches`]' flags: a demand fetch's read of uncacheable code, and
/// the next-line prefetcher's.
pub const UNCACHED_DEMAND: u8 = 0b01;
pub const UNCACHED_PREFETCH: u8 = 0b10;

/// [`Signal::BackEndMispredicts`]' flags: a stage, a rotation, a frame (pfs).
pub const BE_STAGE: u8 = 0b001;
pub const BE_ROTATE: u8 = 0b010;
pub const BE_FRAME: u8 = 0b100;

/// [`Signal::FailedChecks`]' flags: an integer `chk.s`, a floating-point one, an
/// `fchkf`.
pub const FAILED_CHECK_INT: u8 = 0b001;
pub const FAILED_CHECK_FP: u8 = 0b010;
pub const FAILED_CHECK_FCHKF: u8 = 0b100;
