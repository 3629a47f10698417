//! The address map every built-in program uses: one user program per thread in its
//! own address space, the C library, the kernel, and the devices.

use std::ops::Range;

use crate::program::rng::Rng;
use crate::program::{DataStream, Memory, INSN};

/// Each workload's code in its own part of the user text, plus the C library.
pub const USER_TEXT: Range<u64> = 0x0001_0000..0x0010_0000;
pub const COMPUTE_TEXT: Range<u64> = 0x0001_0000..0x0004_0000;
pub const BRANCHY_TEXT: Range<u64> = 0x0004_0000..0x000C_0000;
pub const STREAM_TEXT: Range<u64> = 0x000C_0000..0x000F_0000;
pub const LIBC_TEXT: Range<u64> = 0x000F_0000..0x0010_0000;
/// The programs' globals (their data and bss), 64 KB a thread.
pub const GLOBALS: Range<u64> = 0x0010_0000..0x0020_0000;
pub const GLOBALS_BYTES: u64 = 64 << 10;
/// A managed runtime's code cache (`shared`): methods its JIT compiled, which it
/// patches as it runs.
pub const JIT_TEXT: Range<u64> = 0x0020_0000..0x0030_0000;
/// A database server's text, the large binary of `os`: its transaction paths, one
/// every `SERVER_PATH_BYTES`.
pub const SERVER_TEXT: Range<u64> = 0x0040_0000..0x0060_0000;
pub const SERVER_PATH_BYTES: u64 = 16 << 10;
pub const KERNEL_TEXT: Range<u64> = 0xC000_8000..0xC040_0000;
/// The kernel's exception entry and exit code (hot, small), then everything else.
pub const ENTRY_TEXT: Range<u64> = 0xC000_8000..0xC001_8000;
pub const SERVICE_TEXT: Range<u64> = 0xC001_8000..0xC040_0000;
/// The gate page's light-weight system calls (Linux's `fsys` on Itanium), which every
/// process calls at the same address: the entry text's last page, past the code
/// `code_address` draws there.
pub const GATE_TEXT: u64 = ENTRY_TEXT.end - PAGE;
pub const HEAP: Range<u64> = 0x0100_0000..0x4000_0000;
/// User-mapped, non-cacheable.
pub const FRAME_BUFFER: Range<u64> = 0x4000_0000..0x4100_0000;
/// One megabyte per thread, growing down from the top.
pub const STACKS: Range<u64> = 0xBE00_0000..0xBF00_0000;
pub const STACK_BYTES: u64 = 1 << 20;
pub const KERNEL_DATA: Range<u64> = 0xC100_0000..0xC800_0000;
/// The kernel's time of day: its sequence lock's word, and the clock's fields
/// (seconds, nanoseconds, the counter's value at the last tick), separate variables
/// a line apart.
pub const TIME_DATA: u64 = KERNEL_DATA.start + 0x4_0000;
pub const CLOCK_DATA: u64 = TIME_DATA + 128;
/// The network stack's socket buffers (part of the kernel data): the most recently
/// freed are reused first (the slab allocator's per-CPU caches), so packets sent and
/// received take their turns in the same lines.
pub const SOCKET_BUFFERS: Range<u64> = 0xC7E0_0000..0xC800_0000;
/// Strongly-ordered device registers.
pub const DEVICES: Range<u64> = 0xF800_0000..0xF810_0000;
/// The real-time clock's CMOS ports, index then data: legacy I/O port space, which
/// Itanium maps into memory (the ports 0x70 and 0x71).
pub const RTC_PORTS: u64 = DEVICES.start + 0xF_0070;
/// The firmware's runtime code (EFI runtime services), in memory its memory map marks
/// uncacheable.
pub const FIRMWARE_TEXT: Range<u64> = 0xFE00_0000..0xFE10_0000;
/// The exception vectors (ARM high vectors): reset, undefined, SWI, prefetch abort,
/// data abort, unused, IRQ, FIQ, one instruction each.
pub const VECTORS: u64 = 0xFFFF_0000;
pub const SWI_VECTOR: u64 = VECTORS + 0x08;
pub const IRQ_VECTOR: u64 = VECTORS + 0x18;
pub const FIQ_VECTOR: u64 = VECTORS + 0x1C;

pub const LINE: u64 = 32;
pub const PAGE: u64 = 4 << 10;
/// Buffers are mapped with 1 MB sections, as an embedded system maps its DMA and
/// frame buffers; stacks, code and kernel data with 4 KB pages.
pub const SECTION: u64 = 1 << 20;
/// Room after a code address for the longest straight run a body executes from it.
const CODE_ROOM: u64 = 16 << 10;

/// A function entry point in `text`, with room for the code that runs from it.
pub fn code_address(rng: &mut Rng, text: &Range<u64>) -> u64 {
    let slots = (text.end - text.start - CODE_ROOM) / LINE;
    text.start + rng.below(slots) * LINE
}

/// A section-aligned buffer of `bytes` somewhere in `region`.
pub fn buffer(rng: &mut Rng, region: &Range<u64>, bytes: u64) -> u64 {
    let slots = (region.end - region.start).saturating_sub(bytes) / SECTION;
    region.start + rng.below(slots.max(1)) * SECTION
}

/// The current stack frame of a thread: 256 words somewhere below the top.
pub fn stack_frame(rng: &mut Rng, thread: usize) -> DataStream {
    let top = STACKS.end - thread as u64 * STACK_BYTES;
    DataStream::fixed(top - INSN * rng.range(256, 1024), Memory::Cacheable)
}

/// The kernel stack of a thread.
pub fn kernel_stack(thread: usize) -> DataStream {
    DataStream::fixed(KERNEL_DATA.start + (thread as u64 + 1) * 0x2000 - 0x100, Memory::Cacheable)
}

/// `lines` whole lines walked one per iteration from `base`, in sections.
pub fn line_stream(base: u64, lines: u64, memory: Memory) -> DataStream {
    DataStream { base, stride: LINE as i64, footprint: lines * LINE, memory, page: SECTION, shared: false, nullable: false, fresh: false }
}
