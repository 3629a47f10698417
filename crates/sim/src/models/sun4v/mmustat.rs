//! Reading Niagara MMU statistics buffers back: the §2.3 layout of a dump, decoded into
//! slots with warnings for reserved fields that are not zero.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic))]
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

/// Input that is not a whole number of buffers, or could not be read.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum DecodeError {
    #[error("empty input: an MMU statistics dump is one or more {BUFFER_BYTES:#x}-byte ({BUFFER_BYTES}-byte) buffers (Niagara MMU statistics §2.3)")]
    Empty,
    #[error(
        "input is {size} bytes ({size:#x}), not a whole number of {BUFFER_BYTES:#x}-byte MMU statistics buffers (Niagara MMU statistics §2.3): \
         valid sizes are multiples of {BUFFER_BYTES} ({BUFFER_BYTES:#x}, {:#x}, {:#x}, ...); this is {} whole buffer(s) and {} byte(s) over",
        2 * BUFFER_BYTES,
        3 * BUFFER_BYTES,
        size / BUFFER_BYTES as u64,
        size % BUFFER_BYTES as u64
    )]
    Size { size: u64 },
    #[error("cannot read the dump at byte {at}: {message}")]
    Io { at: u64, message: String },
}

/// Decode one or more concatenated MMU statistics buffers held in memory: big-endian
/// 64-bit fields at the §2.3 offsets.
pub fn decode_mmustat(bytes: &[u8]) -> Result<MmuStatDump, DecodeError> {
    let mut dump = MmuStatDump { buffers: Vec::new(), warnings: Vec::new() };
    for item in MmuStatReader::new(bytes) {
        let (buffer, warnings) = item?;
        dump.buffers.push(buffer);
        dump.warnings.extend(warnings);
    }
    Ok(dump)
}

/// Buffers decoded one at a time from a reader, so that a dump of any size is read in
/// constant memory. A dump that ends inside a buffer (or holds none) ends with an
/// error after the whole buffers before it.
pub struct MmuStatReader<R> {
    input: R,
    index: usize,
    done: bool,
}

impl<R: std::io::Read> MmuStatReader<R> {
    pub fn new(input: R) -> MmuStatReader<R> {
        MmuStatReader { input, index: 0, done: false }
    }

    /// Fills `chunk` as far as the input goes; the bytes read.
    fn fill(&mut self, chunk: &mut [u8]) -> Result<usize, DecodeError> {
        let mut filled = 0;
        while filled < chunk.len() {
            match self.input.read(chunk.get_mut(filled..).unwrap_or_default()) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(DecodeError::Io { at: (self.index * BUFFER_BYTES + filled) as u64, message: e.to_string() }),
            }
        }
        Ok(filled)
    }
}

impl<R: std::io::Read> Iterator for MmuStatReader<R> {
    type Item = Result<(MmuStatBuffer, Vec<ReservedWarning>), DecodeError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let mut chunk = [0u8; BUFFER_BYTES];
        let filled = match self.fill(&mut chunk) {
            Ok(n) => n,
            Err(e) => {
                self.done = true;
                return Some(Err(e));
            }
        };
        let before = (self.index * BUFFER_BYTES) as u64;
        if filled < BUFFER_BYTES {
            self.done = true;
            return match (filled, self.index) {
                (0, 0) => Some(Err(DecodeError::Empty)),
                (0, _) => None,
                _ => Some(Err(DecodeError::Size { size: before + filled as u64 })),
            };
        }
        let decoded = decode_buffer(self.index, &chunk);
        self.index += 1;
        Some(Ok(decoded))
    }
}

/// One buffer, the `index`-th of its input, and the reserved fields in it that are
/// not zero.
fn decode_buffer(index: usize, buffer: &[u8; BUFFER_BYTES]) -> (MmuStatBuffer, Vec<ReservedWarning>) {
    let offset = index * BUFFER_BYTES;
    // The §2.3 offsets lie inside the buffer (LAYOUT's own test pins them).
    let field = |at: usize| {
        let bytes = buffer.get(at..at + COUNTER_BYTES).and_then(|b| <[u8; COUNTER_BYTES]>::try_from(b).ok());
        bytes.map_or(0, u64::from_be_bytes)
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
    let warnings = LAYOUT
        .iter()
        .filter(|f| f.kind == FieldKind::Reserved && buffer.get(f.offset..f.offset + f.size).is_some_and(|b| b.iter().any(|&b| b != 0)))
        .map(|f| ReservedWarning { buffer: index, offset: f.offset, size: f.size, input_offset: offset + f.offset })
        .collect();
    (MmuStatBuffer { index, offset, slots }, warnings)
}
