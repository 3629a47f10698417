//! The user-mode loops of the built-in programs: integer compute, branchy
//! interpreter-like code, and the memory-streaming kernels.

use super::layout::*;
use crate::program::build::Body;
use crate::program::rng::Rng;
use crate::program::{Access, DataStream, Memory, Op, Pattern, Phase, INSN};
use crate::stream::Privilege;

/// Where a thread's user code runs.
#[derive(Debug, Clone, Copy)]
pub struct Thread {
    pub index: usize,
    /// Its address space: one process per thread.
    pub context: u32,
}

fn user(t: Thread, entry: u64) -> Body {
    Body::new(Privilege::USER, t.context, entry)
}

/// Integer work as compiled loops have it (compression, hashing, a compiler's passes:
/// SPECint's gzip, bzip2, gcc): statements that load their operands from the stack
/// frame and the program's globals, compute and store results (`statements`), forward
/// branches and leaf calls that are easy to predict, and data that stays in the L1.
pub fn compute(rng: &mut Rng, t: Thread) -> Phase {
    // Choices added later come from `side` and `mix`, so the rest of the program stays
    // as it was.
    let mut side = rng.side(COMPUTE_SIDE);
    let mut mix = rng.side(COMPUTE_MIX);
    let mut b = user(t, code_address(rng, &COMPUTE_TEXT));
    let frame = b.stream(stack_frame(rng, t.index));
    let slots = (GLOBALS.end - GLOBALS.start) / GLOBALS_BYTES;
    let globals = GLOBALS.start + t.index as u64 % slots * GLOBALS_BYTES;
    let globals = b.stream(DataStream::fixed(globals + LINE * mix.below(64), Memory::Cacheable));
    for _ in 0..rng.range(2, 6) {
        statements(&mut b, &mut mix, [frame, globals], rng.range(6, 48));
        if rng.chance(400) {
            let offset = 4 * rng.below(64) as u32;
            if rng.chance(400) {
                b.store(frame, offset, 4);
            } else {
                b.load(frame, offset, 4, rng.chance(300));
            }
        }
        if rng.chance(100) {
            // A flag byte set, then the word holding it read back.
            let offset = 4 * rng.below(64) as u32;
            b.store(frame, offset + 1, 1).load(frame, offset, 4, true);
        }
        if side.chance(100) {
            // A status word built a field at a time: a flag byte set, some work, then
            // the whole word read back and tested.
            let offset = 4 * side.below(64) as u32;
            b.store(frame, offset + 2, 1);
            let work = side.range(16, 40);
            statements(&mut b, &mut mix, [frame, globals], work);
            b.load(frame, offset, 4, true);
        }
        if rng.chance(250) {
            // An if whose condition is the same every time round.
            let over = rng.range(1, 4);
            b.skip(over as u8, if rng.chance(300) { Pattern::Always } else { Pattern::Never });
            b.int(over);
        }
        if rng.chance(80) {
            let leaf = code_address(rng, &COMPUTE_TEXT);
            b.call(leaf, 0);
            let work = rng.range(2, 6);
            statements(&mut b, &mut mix, [frame, globals], work);
            b.ret(0);
        }
    }
    b.close_loop(rng.log_range(16, 100_000))
}

/// Salt of `compute`'s side generators (`Rng::side`).
const COMPUTE_SIDE: u64 = 0x636f_6d70_7574_6531;
const COMPUTE_MIX: u64 = 0x636f_6d70_6d69_7831;

/// `ints` integer instructions as compiled statements surround them: each few load an
/// operand (from the stack frame or the globals, `data`; a third of them used at
/// once), some store a result, and some are guarded by a test whose outcome does not
/// change: in turn one whose statement runs (the test falls through to it) and one
/// whose statement is for a case that does not arise (the test jumps over it, as
/// compilers lay out `if (c) s;`). Loads and stores are then about a third of the
/// instructions, two loads to a store, as in SPECint2006 and commercial code (IBM
/// RC25126: 40 % on average), branches over a tenth, and half or more of the branches
/// are taken, as in compiled programs under QEMU (docs/validation.md: 64-100 %).
pub fn statements(b: &mut Body, mix: &mut Rng, data: [u8; 2], ints: u64) {
    let mut left = ints;
    let mut jumps = false;
    while left > 0 {
        let n = mix.range(2, 4).min(left);
        let stream = data[usize::from(mix.chance(400))];
        b.load(stream, 4 * mix.below(64) as u32, 4, mix.chance(300));
        if mix.chance(350) {
            b.load(data[0], 4 * mix.below(64) as u32, 4, false);
        }
        b.int(n);
        if mix.chance(600) {
            b.store(data[0], 4 * mix.below(64) as u32, 4);
        }
        if mix.chance(750) {
            // `if (x) y = ...;`: one instruction guarded. A test whose outcome varied
            // would make the loop's branch pattern repeat only every 64 iterations:
            // the runner could skip few of the short loops (`branchy` has those tests).
            b.skip(1, if jumps { Pattern::Always } else { Pattern::Never });
            b.int(1);
            jumps = !jumps;
        }
        left -= n;
    }
}

/// Decisions on loaded data that the predictor often gets wrong, call chains deeper
/// than a small return stack, unwinding returns, jump-table dispatch to handlers
/// scattered over a large text, and a linked-list walk.
pub fn branchy(rng: &mut Rng, t: Thread) -> Phase {
    // Choices added later come from `side`, so the rest of the program stays as it was.
    let mut side = rng.side(BRANCHY_SIDE);
    let trips = rng.log_range(16, 50_000);
    let taken_per_mille = rng.range(200, 800);
    let mut b = user(t, code_address(rng, &BRANCHY_TEXT));
    let frame = b.stream(stack_frame(rng, t.index));
    // A power of two of nodes, as allocators and benchmarks size their pools.
    let nodes = 1 << rng.range(6, 16);
    let list = b.stream(DataStream {
        base: buffer(rng, &HEAP, nodes * 4 * LINE),
        stride: 4 * LINE as i64,
        footprint: nodes * 4 * LINE,
        memory: Memory::Cacheable,
        page: PAGE,
        shared: false,
        nullable: false,
        fresh: false,
    });
    let mut mix = rng.side(BRANCHY_MIX);
    for _ in 0..rng.range(3, 5) {
        b.int(rng.range(1, 6));
        if mix.chance(600) {
            b.load(frame, 4 * mix.below(64) as u32, 4, false);
        }
        if rng.chance(500) {
            b.load(frame, 4 * rng.below(64) as u32, 4, true);
        }
        // The datum the test below reads, and the block's operand.
        b.load(frame, 4 * mix.below(64) as u32, 4, true);
        // A data-dependent if: its outcomes repeat only every 64 iterations.
        let over = rng.range(1, 6);
        b.skip(over as u8 + 1, Pattern::Bits { bits: rng.bits(64, taken_per_mille), len: 64 });
        b.load(frame, 4 * mix.below(64) as u32, 4, false);
        b.int(over);
        b.store(frame, 4 * mix.below(64) as u32, 4);
        if side.chance(250) {
            // Two tests of one datum in a row (`if (c != ' ' && c != '\t') { ... }`):
            // either one skips the block, so the second is reached only when the first
            // falls through. The block is longer than compilers predicate.
            let block = side.range(4, 8);
            b.skip(block as u8 + 1, Pattern::Bits { bits: side.bits(64, taken_per_mille / 2), len: 64 });
            b.skip(block as u8, Pattern::Bits { bits: side.bits(64, taken_per_mille / 2), len: 64 });
            b.int(block);
        }
        if rng.chance(250) {
            let depth = rng.range(1, 4);
            call_chain(&mut b, rng, &mut side, frame, depth);
        }
        if rng.chance(100) {
            // The next list node: the branch after it waits for the load.
            b.load(list, 0, 4, true);
        }
    }
    // Dispatch through a jump table in memory to one of 4-48 handlers; each handler
    // ends with the back edge. The opcodes dispatched repeat every 64 iterations.
    if rng.chance(500) {
        let handlers: Vec<u64> = (0..rng.range(4, 48)).map(|_| code_address(rng, &BRANCHY_TEXT)).collect();
        let opcodes: Vec<u64> = (0..64).map(|_| handlers[rng.below(handlers.len() as u64) as usize]).collect();
        let entries = b.stream(DataStream {
            stride: INSN as i64,
            footprint: opcodes.len() as u64 * INSN,
            ..DataStream::fixed(buffer(rng, &HEAP, PAGE), Memory::Cacheable)
        });
        let table = b.table(opcodes);
        // The switch's range check: an opcode past the table (one in sixteen) goes
        // to the default case, which runs the code after the jump.
        b.skip(1, Pattern::Bits { bits: side.bits(64, 62), len: 64 });
        b.jump(table, Some(Access { stream: entries, offset: 0, size: 4, use_next: false }));
        b.int(rng.range(4, 24));
    }
    b.close_loop(trips)
}

/// Salt of `branchy`'s side generators (`Rng::side`).
const BRANCHY_SIDE: u64 = 0x6272_616e_6368_7931;
const BRANCHY_MIX: u64 = 0x6272_616e_6d69_7831;

/// Calls nested `depth` deep, each returning to its caller unless it unwinds; now and
/// then (`side`) a function's last instructions are guarded by one or two tests of its
/// arguments that skip to its return.
fn call_chain(b: &mut Body, rng: &mut Rng, side: &mut Rng, frame: u8, depth: u64) {
    // Each function allocates its locals and outgoing arguments: 8-40 stacked
    // registers on Itanium (a register window on SPARC, nothing on ARM).
    let registers = rng.range(8, 40) as u8;
    b.call(code_address(rng, &BRANCHY_TEXT), registers);
    // It reads an argument passed on the stack.
    b.load(frame, 4 * (depth as u32 % 64), 4, false);
    if depth > 1 {
        // A function that calls saves its link register on the stack, and reloads it
        // before it returns.
        let slot = 4 * rng.below(64) as u32;
        b.store(frame, slot, 4);
        b.int(rng.range(1, 4));
        call_chain(b, rng, side, frame, depth - 1);
        b.load(frame, slot, 4, false);
    }
    let tail = rng.range(2, 6);
    if side.chance(300) {
        // `if (x && !y) { ... } return;`: one or two tests that skip to the return.
        if side.chance(500) {
            b.skip(tail as u8 + 1, Pattern::Bits { bits: side.bits(64, 300), len: 64 });
        }
        b.skip(tail as u8, Pattern::Bits { bits: side.bits(64, 500), len: 64 });
    }
    b.int(tail);
    b.ret(if rng.chance(50) { 4 } else { 0 });
}

/// One of six streaming kernels.
pub fn stream(rng: &mut Rng, t: Thread) -> Vec<Phase> {
    match rng.below(12) {
        0..=1 => vec![copy(rng, t)],
        2..=3 => vec![sum_field(rng, t)],
        4..=5 => vec![update(rng, t)],
        6..=7 => vec![column(rng, t)],
        8..=9 => vec![clear(rng, t)],
        _ => fill(rng, t),
    }
}

/// How far ahead of a streaming loop's accesses compilers place its software
/// prefetches: a few hundred bytes, so the line is there when the loop reaches it.
const STREAM_PREFETCH_AHEAD: u32 = 512;

/// Whether a streaming loop of `size` elements was compiled with software prefetches:
/// half of them are (as code built with and without the compiler's prefetch option
/// is), told apart by a draw the loop has made already (an odd size), so that
/// the choice changes no other draw of the programs, whose seeds stay as they were.
fn prefetching(size: u64) -> bool {
    !size.is_multiple_of(2)
}

/// memset of a cacheable buffer as compilers unroll it: 16-byte stores that nothing
/// waits for, two a 32-byte step, so a line's stores queue behind its miss; compiled
/// with prefetches, each line is prefetched for writing ahead.
fn clear(rng: &mut Rng, t: Thread) -> Phase {
    let lines = rng.log_range(1 << 10, 1 << 16);
    let mut b = user(t, code_address(rng, &STREAM_TEXT));
    let data = b.stream(line_stream(buffer(rng, &HEAP, lines * LINE), lines, Memory::Cacheable));
    if prefetching(lines) {
        b.op(Op::Prefetch(Access { stream: data, offset: STREAM_PREFETCH_AHEAD, size: 8, use_next: false }));
    }
    zero_line(&mut b, data);
    b.int(1);
    b.close_loop(lines)
}

/// The stores that zero one line of `stream` as memset and clear_page do: 16 bytes at
/// a time (Itanium Linux spills f0), nothing waiting for them.
pub fn zero_line(b: &mut Body, stream: u8) {
    for chunk in 0..(LINE / 16) as u32 {
        b.store(stream, chunk * 16, 16);
    }
}

/// memcpy by whole lines: each block load misses, the block store waits for its data.
fn copy(rng: &mut Rng, t: Thread) -> Phase {
    let lines = rng.log_range(1 << 10, 1 << 17);
    let mut b = user(t, code_address(rng, &STREAM_TEXT));
    let src = b.stream(line_stream(buffer(rng, &HEAP, lines * LINE), lines, Memory::Cacheable));
    let dst = b.stream(line_stream(buffer(rng, &HEAP, lines * LINE), lines, Memory::Cacheable));
    b.op(Op::BlockLoad(Access { stream: src, offset: 0, size: LINE as u8, use_next: true }));
    b.op(Op::BlockStore(Access { stream: dst, offset: 0, size: LINE as u8, use_next: false }));
    b.int(rng.range(1, 3));
    b.close_loop(lines)
}

/// In-place update of a buffer: each line is loaded, worked on and written back.
fn update(rng: &mut Rng, t: Thread) -> Phase {
    let lines = rng.log_range(1 << 10, 1 << 17);
    let mut b = user(t, code_address(rng, &STREAM_TEXT));
    let data = b.stream(line_stream(buffer(rng, &HEAP, lines * LINE), lines, Memory::Cacheable));
    b.op(Op::BlockLoad(Access { stream: data, offset: 0, size: LINE as u8, use_next: true }));
    b.int(rng.range(8, 16));
    b.op(Op::BlockStore(Access { stream: data, offset: 0, size: LINE as u8, use_next: false }));
    b.close_loop(lines)
}

/// Sums one 8-byte field of an array of 64-byte records, unrolled four ways as
/// compilers do: four independent loads a record apart (compiled with prefetches,
/// each record prefetched for reading ahead first), then the four adds, so the loads'
/// misses overlap where the core lets them.
fn sum_field(rng: &mut Rng, t: Thread) -> Phase {
    const RECORD: u64 = 64;
    let records = rng.log_range(1 << 10, 1 << 19);
    let mut b = user(t, code_address(rng, &STREAM_TEXT));
    let table = b.stream(DataStream {
        base: buffer(rng, &HEAP, records * RECORD),
        stride: 4 * RECORD as i64,
        footprint: records * RECORD,
        memory: Memory::Cacheable,
        page: SECTION,
        shared: false,
        nullable: false,
        fresh: false,
    });
    if prefetching(records) {
        for r in 0..4 {
            let ahead = STREAM_PREFETCH_AHEAD + r * RECORD as u32;
            b.op(Op::Prefetch(Access { stream: table, offset: ahead, size: 8, use_next: false }));
        }
    }
    for r in 0..4 {
        b.load(table, r * RECORD as u32, 8, false);
    }
    b.int(4);
    b.close_loop(records / 4)
}

/// Walks down a column of a row-major matrix on 4 KB pages: every row is on a new
/// page.
fn column(rng: &mut Rng, t: Thread) -> Phase {
    let rows = rng.log_range(1 << 6, 1 << 14);
    let pitch = PAGE + LINE * rng.range(1, 8);
    let mut b = user(t, code_address(rng, &STREAM_TEXT));
    let col = b.stream(DataStream {
        base: buffer(rng, &HEAP, rows * pitch) + INSN * rng.below(LINE / INSN),
        stride: pitch as i64,
        footprint: rows * pitch,
        memory: Memory::Cacheable,
        page: PAGE,
        shared: false,
        nullable: false,
        fresh: false,
    });
    b.load(col, 0, 4, true);
    b.int(2);
    b.close_loop(rows)
}

/// Fills a non-cacheable frame buffer, writes the frame's descriptor after it (a
/// 16-byte header, an 8-byte timestamp and an 8-byte status word), then a barrier
/// drains the write buffer.
fn fill(rng: &mut Rng, t: Thread) -> Vec<Phase> {
    let lines = rng.log_range(1 << 8, 1 << 15);
    let mut b = user(t, code_address(rng, &STREAM_TEXT));
    let base = buffer(rng, &FRAME_BUFFER, lines * LINE);
    let pixels = b.stream(line_stream(base, lines, Memory::NonCacheable));
    b.int(rng.range(1, 4));
    b.op(Op::BlockStore(Access { stream: pixels, offset: 0, size: LINE as u8, use_next: false }));
    let exit = b.ip() + INSN;
    let lp = b.close_loop(lines);
    let mut tail = user(t, exit);
    let descriptor = tail.stream(DataStream::fixed((base + lines * LINE).next_multiple_of(DESCRIPTOR), Memory::NonCacheable));
    tail.store(descriptor, 0, 16).store(descriptor, 16, 8).store(descriptor, 40, 8);
    tail.op(Op::Barrier).int(rng.range(2, 6));
    vec![lp, tail.once()]
}

/// Alignment of a frame descriptor.
const DESCRIPTOR: u64 = 128;
