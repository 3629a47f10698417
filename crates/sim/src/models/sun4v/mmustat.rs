//! Reading Niagara MMU statistics buffers back: the §2.3 layout of a dump, decoded into
//! slots with warnings for reserved fields that are not zero.

use std::fmt;

use pmukit_arch::sparc::niagara::{self, Context, FieldKind, Mmu, PageSize, Quantity, BUFFER_BYTES, COUNTER_BYTES, LAYOUT};
use serde::Serialize;
use thiserror::Error;

/// The counters of one MMU × context × page size slot of a buffer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MmuStatSlot {
    pub mmu: Mmu,
    pub context: Context,
    pub page_size: PageSize,
    pub hits: u64,
    pub ticks: u64,
    /// `ticks / hits`; `None` when there were no hits.
    pub average_ticks_per_hit: Option<f64>,
}

/// One decoded 0x200-byte buffer.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MmuStatBuffer {
    /// Position in the input, from 0.
    pub index: usize,
    /// Byte offset of the buffer in the input.
    pub offset: usize,
    /// Every slot, in §2.3 order (IMMU before DMMU, ctx0 before ctxnon0, small pages
    /// first).
    pub slots: Vec<MmuStatSlot>,
}

impl MmuStatBuffer {
    pub fn slot(&self, mmu: Mmu, context: Context, page_size: PageSize) -> Option<&MmuStatSlot> {
        self.slots.iter().find(|s| s.mmu == mmu && s.context == context && s.page_size == page_size)
    }
}

/// A reserved field that is not zero. Not an error: the hypervisor never writes there,
/// so it is the guest's own data or a buffer that was not cleared (§2.1: "The initial
/// contents of the buffer should be zero").
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReservedWarning {
    pub buffer: usize,
    /// Offset of the reserved field within its buffer, and its size.
    pub offset: usize,
    pub size: usize,
    /// Offset of the field in the input.
    pub input_offset: usize,
}

impl fmt::Display for ReservedWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "buffer {}: reserved field at offset {:#x} ({} bytes, input byte {:#x}) is not zero (Niagara MMU statistics §2.3)",
            self.buffer, self.offset, self.size, self.input_offset
        )
    }
}

/// Decoded MMU statistics buffers.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MmuStatDump {
    pub buffers: Vec<MmuStatBuffer>,
    pub warnings: Vec<ReservedWarning>,
}

/// Input that is not a whole number of buffers.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DecodeError {
    #[error("empty input: an MMU statistics dump is one or more {BUFFER_BYTES:#x}-byte ({BUFFER_BYTES}-byte) buffers (Niagara MMU statistics §2.3)")]
    Empty,
    #[error(
        "input is {size} bytes ({size:#x}), not a whole number of {BUFFER_BYTES:#x}-byte MMU statistics buffers (Niagara MMU statistics §2.3): \
         valid sizes are multiples of {BUFFER_BYTES} ({BUFFER_BYTES:#x}, {:#x}, {:#x}, ...); this is {} whole buffer(s) and {} byte(s) over",
        2 * BUFFER_BYTES,
        3 * BUFFER_BYTES,
        size / BUFFER_BYTES,
        size % BUFFER_BYTES
    )]
    Size { size: usize },
}

/// Decode one or more concatenated MMU statistics buffers: big-endian 64-bit fields at
/// the §2.3 offsets.
pub fn decode_mmustat(bytes: &[u8]) -> Result<MmuStatDump, DecodeError> {
    if bytes.is_empty() {
        return Err(DecodeError::Empty);
    }
    if !bytes.len().is_multiple_of(BUFFER_BYTES) {
        return Err(DecodeError::Size { size: bytes.len() });
    }
    let mut dump = MmuStatDump { buffers: Vec::new(), warnings: Vec::new() };
    for (index, buffer) in bytes.chunks_exact(BUFFER_BYTES).enumerate() {
        let offset = index * BUFFER_BYTES;
        let field = |at: usize| {
            let mut value = [0; COUNTER_BYTES];
            value.copy_from_slice(&buffer[at..at + COUNTER_BYTES]);
            u64::from_be_bytes(value)
        };
        let mut slots = Vec::new();
        for mmu in Mmu::ALL {
            for context in Context::ALL {
                for page_size in PageSize::ALL {
                    let hits = field(niagara::offset(mmu, context, page_size, Quantity::Hits));
                    let ticks = field(niagara::offset(mmu, context, page_size, Quantity::Ticks));
                    let average_ticks_per_hit = (hits != 0).then(|| ticks as f64 / hits as f64);
                    slots.push(MmuStatSlot { mmu, context, page_size, hits, ticks, average_ticks_per_hit });
                }
            }
        }
        for f in LAYOUT.iter().filter(|f| f.kind == FieldKind::Reserved) {
            if buffer[f.offset..f.offset + f.size].iter().any(|&b| b != 0) {
                dump.warnings.push(ReservedWarning { buffer: index, offset: f.offset, size: f.size, input_offset: offset + f.offset });
            }
        }
        dump.buffers.push(MmuStatBuffer { index, offset, slots });
    }
    Ok(dump)
}
