//! Niagara (UltraSPARC T1) MMU statistics buffer, "Hypervisor API for Niagara MMU
//! statistics collection" §2.3, as data.
//!
//! [`LAYOUT`] transcribes the §2.3 table row by row and is the only place a buffer
//! offset is written: [`offset`], [`BUFFER_BYTES`] and everything in the simulator and
//! decoder derive from it, and a compile-time check proves the rows tile the buffer.
//! Every field is a 64-bit big-endian value (SPARC is big-endian).

use pmukit_core::event_string::EventSel;
use pmukit_core::pmu::{CounterDesc, GenericMap, Pmu, PmuDesc};
use pmukit_core::register::{Field as RegField, Register, RegisterError};
use serde::Serialize;

use crate::RegisterValues;

/// Which MMU took the miss.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum Mmu {
    Immu,
    Dmmu,
}

/// The context of the missing translation: the nucleus context 0, or any other.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum Context {
    Ctx0,
    CtxNon0,
}

/// Page size of the TTE found in the TSB.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum PageSize {
    #[serde(rename = "8K")]
    Size8K,
    #[serde(rename = "64K")]
    Size64K,
    #[serde(rename = "4M")]
    Size4M,
    #[serde(rename = "256M")]
    Size256M,
}

/// The two counters §2.3 keeps per slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum Quantity {
    /// TSB hits: TLB misses the hypervisor satisfied from the TSB.
    Hits,
    /// Cumulative `%tick` deltas spent handling those hits.
    Ticks,
}

impl Mmu {
    pub const ALL: [Mmu; 2] = [Mmu::Immu, Mmu::Dmmu];
    pub const fn name(self) -> &'static str {
        match self {
            Mmu::Immu => "IMMU",
            Mmu::Dmmu => "DMMU",
        }
    }
}

impl Context {
    pub const ALL: [Context; 2] = [Context::Ctx0, Context::CtxNon0];
    pub const fn name(self) -> &'static str {
        match self {
            Context::Ctx0 => "ctx0",
            Context::CtxNon0 => "ctxnon0",
        }
    }
}

impl PageSize {
    pub const ALL: [PageSize; 4] = [PageSize::Size8K, PageSize::Size64K, PageSize::Size4M, PageSize::Size256M];
    pub const fn name(self) -> &'static str {
        match self {
            PageSize::Size8K => "8kb",
            PageSize::Size64K => "64kb",
            PageSize::Size4M => "4mb",
            PageSize::Size256M => "256mb",
        }
    }
}

impl Quantity {
    pub const ALL: [Quantity; 2] = [Quantity::Hits, Quantity::Ticks];
    pub const fn name(self) -> &'static str {
        match self {
            Quantity::Hits => "hits",
            Quantity::Ticks => "ticks",
        }
    }
}

/// What a §2.3 row holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum FieldKind {
    /// A 64-bit counter.
    Counter { mmu: Mmu, context: Context, page_size: PageSize, quantity: Quantity },
    /// Reserved space.
    Reserved,
}

/// One row of §2.3: offset and size in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Field {
    pub offset: usize,
    pub size: usize,
    pub kind: FieldKind,
}

/// Bytes per counter.
pub const COUNTER_BYTES: usize = 8;
/// §2.1: "EBADALIGN raddr not aligned on 64-byte boundary".
pub const BUFFER_ALIGN: u64 = 64;

const fn counter(offset: usize, mmu: Mmu, context: Context, page_size: PageSize, quantity: Quantity) -> Field {
    Field { offset, size: COUNTER_BYTES, kind: FieldKind::Counter { mmu, context, page_size, quantity } }
}

const fn reserved(offset: usize, size: usize) -> Field {
    Field { offset, size, kind: FieldKind::Reserved }
}

use Context::{Ctx0, CtxNon0};
use Mmu::{Dmmu, Immu};
use PageSize::{Size256M, Size4M, Size64K, Size8K};
use Quantity::{Hits, Ticks};

/// §2.3 "MMU statistic buffer format", in table order.
pub const LAYOUT: [Field; 44] = [
    counter(0x0, Immu, Ctx0, Size8K, Hits),
    counter(0x8, Immu, Ctx0, Size8K, Ticks),
    counter(0x10, Immu, Ctx0, Size64K, Hits),
    counter(0x18, Immu, Ctx0, Size64K, Ticks),
    reserved(0x20, 0x10),
    counter(0x30, Immu, Ctx0, Size4M, Hits),
    counter(0x38, Immu, Ctx0, Size4M, Ticks),
    reserved(0x40, 0x10),
    counter(0x50, Immu, Ctx0, Size256M, Hits),
    counter(0x58, Immu, Ctx0, Size256M, Ticks),
    reserved(0x60, 0x20),
    counter(0x80, Immu, CtxNon0, Size8K, Hits),
    counter(0x88, Immu, CtxNon0, Size8K, Ticks),
    counter(0x90, Immu, CtxNon0, Size64K, Hits),
    counter(0x98, Immu, CtxNon0, Size64K, Ticks),
    reserved(0xA0, 0x10),
    counter(0xB0, Immu, CtxNon0, Size4M, Hits),
    counter(0xB8, Immu, CtxNon0, Size4M, Ticks),
    reserved(0xC0, 0x10),
    counter(0xD0, Immu, CtxNon0, Size256M, Hits),
    counter(0xD8, Immu, CtxNon0, Size256M, Ticks),
    reserved(0xE0, 0x20),
    counter(0x100, Dmmu, Ctx0, Size8K, Hits),
    counter(0x108, Dmmu, Ctx0, Size8K, Ticks),
    counter(0x110, Dmmu, Ctx0, Size64K, Hits),
    counter(0x118, Dmmu, Ctx0, Size64K, Ticks),
    reserved(0x120, 0x10),
    counter(0x130, Dmmu, Ctx0, Size4M, Hits),
    counter(0x138, Dmmu, Ctx0, Size4M, Ticks),
    reserved(0x140, 0x10),
    counter(0x150, Dmmu, Ctx0, Size256M, Hits),
    counter(0x158, Dmmu, Ctx0, Size256M, Ticks),
    reserved(0x160, 0x20),
    counter(0x180, Dmmu, CtxNon0, Size8K, Hits),
    counter(0x188, Dmmu, CtxNon0, Size8K, Ticks),
    counter(0x190, Dmmu, CtxNon0, Size64K, Hits),
    counter(0x198, Dmmu, CtxNon0, Size64K, Ticks),
    reserved(0x1A0, 0x10),
    counter(0x1B0, Dmmu, CtxNon0, Size4M, Hits),
    counter(0x1B8, Dmmu, CtxNon0, Size4M, Ticks),
    reserved(0x1C0, 0x10),
    counter(0x1D0, Dmmu, CtxNon0, Size256M, Hits),
    counter(0x1D8, Dmmu, CtxNon0, Size256M, Ticks),
    reserved(0x1E0, 0x20),
];

/// Size of one buffer: where the last row ends (0x200).
pub const BUFFER_BYTES: usize = tiled_size();

/// The rows must follow each other with no gap or overlap, counters must be 8 bytes
/// and 8-byte aligned, and every MMU × context × page size × quantity must appear
/// exactly once; otherwise the build fails.
const fn tiled_size() -> usize {
    let mut end = 0;
    let mut i = 0;
    while i < LAYOUT.len() {
        let f = LAYOUT[i];
        assert!(f.offset == end, "LAYOUT rows must tile the buffer in order");
        if let FieldKind::Counter { .. } = f.kind {
            assert!(f.size == COUNTER_BYTES && f.offset.is_multiple_of(COUNTER_BYTES), "counters are aligned 64-bit fields");
        }
        end = f.offset + f.size;
        i += 1;
    }
    end
}

/// Offset of every counter, `[mmu][context][page size][quantity]`, resolved from
/// [`LAYOUT`] at compile time.
const OFFSETS: [[[[usize; 2]; 4]; 2]; 2] = offsets();

const fn offsets() -> [[[[usize; 2]; 4]; 2]; 2] {
    // usize::MAX marks "not seen yet"; every entry must be filled exactly once.
    let mut table = [[[[usize::MAX; 2]; 4]; 2]; 2];
    let mut i = 0;
    while i < LAYOUT.len() {
        if let FieldKind::Counter { mmu, context, page_size, quantity } = LAYOUT[i].kind {
            let slot = &mut table[mmu as usize][context as usize][page_size as usize][quantity as usize];
            assert!(*slot == usize::MAX, "a counter appears twice in LAYOUT");
            *slot = LAYOUT[i].offset;
        }
        i += 1;
    }
    let mut n = 0;
    while n < 32 {
        assert!(table[n / 16][n / 8 % 2][n / 2 % 4][n % 2] != usize::MAX, "a counter is missing from LAYOUT");
        n += 1;
    }
    table
}

/// Byte offset of a counter within the buffer.
pub const fn offset(mmu: Mmu, context: Context, page_size: PageSize, quantity: Quantity) -> usize {
    OFFSETS[mmu as usize][context as usize][page_size as usize][quantity as usize]
}

/// The family of the MMU statistics buffer, counted as events by `pmu stat`.
pub const FAMILY: &str = "niagara";

/// One counter per buffer field, in [`LAYOUT`] order: counter `n` is MMU `n / 16`,
/// context `n / 8 % 2`, page size `n / 2 % 4`, quantity `n % 2`.
const SLOT_COUNTERS: &[CounterDesc] = &[
    CounterDesc { name: "IMMU_CTX0_8K_HITS", width: 64, description: "IMMU context 0, 8K pages: TSB hits" },
    CounterDesc { name: "IMMU_CTX0_8K_TICKS", width: 64, description: "IMMU context 0, 8K pages: %tick cycles spent servicing TSB hits" },
    CounterDesc { name: "IMMU_CTX0_64K_HITS", width: 64, description: "IMMU context 0, 64K pages: TSB hits" },
    CounterDesc { name: "IMMU_CTX0_64K_TICKS", width: 64, description: "IMMU context 0, 64K pages: %tick cycles spent servicing TSB hits" },
    CounterDesc { name: "IMMU_CTX0_4M_HITS", width: 64, description: "IMMU context 0, 4M pages: TSB hits" },
    CounterDesc { name: "IMMU_CTX0_4M_TICKS", width: 64, description: "IMMU context 0, 4M pages: %tick cycles spent servicing TSB hits" },
    CounterDesc { name: "IMMU_CTX0_256M_HITS", width: 64, description: "IMMU context 0, 256M pages: TSB hits" },
    CounterDesc {
        name: "IMMU_CTX0_256M_TICKS",
        width: 64,
        description: "IMMU context 0, 256M pages: %tick cycles spent servicing TSB hits",
    },
    CounterDesc { name: "IMMU_CTXNON0_8K_HITS", width: 64, description: "IMMU non-zero contexts, 8K pages: TSB hits" },
    CounterDesc {
        name: "IMMU_CTXNON0_8K_TICKS",
        width: 64,
        description: "IMMU non-zero contexts, 8K pages: %tick cycles spent servicing TSB hits",
    },
    CounterDesc { name: "IMMU_CTXNON0_64K_HITS", width: 64, description: "IMMU non-zero contexts, 64K pages: TSB hits" },
    CounterDesc {
        name: "IMMU_CTXNON0_64K_TICKS",
        width: 64,
        description: "IMMU non-zero contexts, 64K pages: %tick cycles spent servicing TSB hits",
    },
    CounterDesc { name: "IMMU_CTXNON0_4M_HITS", width: 64, description: "IMMU non-zero contexts, 4M pages: TSB hits" },
    CounterDesc {
        name: "IMMU_CTXNON0_4M_TICKS",
        width: 64,
        description: "IMMU non-zero contexts, 4M pages: %tick cycles spent servicing TSB hits",
    },
    CounterDesc { name: "IMMU_CTXNON0_256M_HITS", width: 64, description: "IMMU non-zero contexts, 256M pages: TSB hits" },
    CounterDesc {
        name: "IMMU_CTXNON0_256M_TICKS",
        width: 64,
        description: "IMMU non-zero contexts, 256M pages: %tick cycles spent servicing TSB hits",
    },
    CounterDesc { name: "DMMU_CTX0_8K_HITS", width: 64, description: "DMMU context 0, 8K pages: TSB hits" },
    CounterDesc { name: "DMMU_CTX0_8K_TICKS", width: 64, description: "DMMU context 0, 8K pages: %tick cycles spent servicing TSB hits" },
    CounterDesc { name: "DMMU_CTX0_64K_HITS", width: 64, description: "DMMU context 0, 64K pages: TSB hits" },
    CounterDesc { name: "DMMU_CTX0_64K_TICKS", width: 64, description: "DMMU context 0, 64K pages: %tick cycles spent servicing TSB hits" },
    CounterDesc { name: "DMMU_CTX0_4M_HITS", width: 64, description: "DMMU context 0, 4M pages: TSB hits" },
    CounterDesc { name: "DMMU_CTX0_4M_TICKS", width: 64, description: "DMMU context 0, 4M pages: %tick cycles spent servicing TSB hits" },
    CounterDesc { name: "DMMU_CTX0_256M_HITS", width: 64, description: "DMMU context 0, 256M pages: TSB hits" },
    CounterDesc {
        name: "DMMU_CTX0_256M_TICKS",
        width: 64,
        description: "DMMU context 0, 256M pages: %tick cycles spent servicing TSB hits",
    },
    CounterDesc { name: "DMMU_CTXNON0_8K_HITS", width: 64, description: "DMMU non-zero contexts, 8K pages: TSB hits" },
    CounterDesc {
        name: "DMMU_CTXNON0_8K_TICKS",
        width: 64,
        description: "DMMU non-zero contexts, 8K pages: %tick cycles spent servicing TSB hits",
    },
    CounterDesc { name: "DMMU_CTXNON0_64K_HITS", width: 64, description: "DMMU non-zero contexts, 64K pages: TSB hits" },
    CounterDesc {
        name: "DMMU_CTXNON0_64K_TICKS",
        width: 64,
        description: "DMMU non-zero contexts, 64K pages: %tick cycles spent servicing TSB hits",
    },
    CounterDesc { name: "DMMU_CTXNON0_4M_HITS", width: 64, description: "DMMU non-zero contexts, 4M pages: TSB hits" },
    CounterDesc {
        name: "DMMU_CTXNON0_4M_TICKS",
        width: 64,
        description: "DMMU non-zero contexts, 4M pages: %tick cycles spent servicing TSB hits",
    },
    CounterDesc { name: "DMMU_CTXNON0_256M_HITS", width: 64, description: "DMMU non-zero contexts, 256M pages: TSB hits" },
    CounterDesc {
        name: "DMMU_CTXNON0_256M_TICKS",
        width: 64,
        description: "DMMU non-zero contexts, 256M pages: %tick cycles spent servicing TSB hits",
    },
];

/// The statistics as a PMU: an event code names an MMU and a quantity
/// (`code = mmu × 2 + quantity`), and each unit-mask bit one context × page size slot
/// (`bit = context × 4 + page size`). The buffer collects every slot at once, so
/// events never compete for counters: an event reads the slots of its unit mask.
pub static NIAGARA: PmuDesc = PmuDesc {
    name: "niagara",
    family: FAMILY,
    model: "niagara1",
    description: "UltraSPARC T1 (Niagara) MMU statistics: TSB hits and %tick cycles per MMU, context and page size, \
                  collected by the hypervisor into a buffer per virtual CPU (niagara_mmustat_conf, §2.3)",
    counters: SLOT_COUNTERS,
    general_counters: &[],
    modifiers: &[],
    event_modifiers: &[],
    max_code: 3,
    max_umask: 0xFF,
    raw_umask_bits: 8,
    raw_outside_table: Some("§2.3 defines four quantities only: IMMU and DMMU TSB hits and ticks"),
    shared_counters: true,
    generic: GenericMap {
        events: &[],
        source:
            "niagara is the hypervisor's MMU statistics buffer (niagara_mmustat_conf), not a perf_events PMU: no generic name maps to it",
    },
    linux_pmu: None,
};

/// The buffer field counter `n` of [`NIAGARA`] stands for.
pub const fn slot(n: usize) -> (Mmu, Context, PageSize, Quantity) {
    (Mmu::ALL[n / 16 % 2], Context::ALL[n / 8 % 2], PageSize::ALL[n / 2 % 4], Quantity::ALL[n % 2])
}

/// The counters (buffer fields) an event reads: one per unit-mask bit.
pub fn allowed(_pmu: &Pmu, sel: &EventSel) -> u64 {
    let (mmu, quantity) = ((sel.code / 2 % 2) as u32, (sel.code % 2) as u32);
    (0..8).filter(|bit| sel.umask >> bit & 1 == 1).fold(0, |mask, bit| mask | 1 << (mmu * 16 + bit / 4 * 8 + bit % 4 * 2 + quantity))
}

/// The buffer is not programmed per event: one niagara_mmustat_conf per virtual CPU
/// collects everything.
pub fn placement(_pmu: &Pmu, _sel: &EventSel, _counter: usize) -> Result<RegisterValues, RegisterError> {
    Ok(Vec::new())
}

pub fn start(_placed: &RegisterValues, _counters: &[usize]) -> RegisterValues {
    Vec::new()
}

/// No registers: the statistics live in guest memory (`pmu mmustat decode` reads them).
pub fn registers(_pmu: &Pmu) -> Vec<Register> {
    Vec::new()
}

pub fn explain(_pmu: &Pmu, _field: &RegField, _register: u64) -> Option<String> {
    None
}
