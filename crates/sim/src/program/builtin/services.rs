//! `services`: system services layered between the kernel and the user, as OpenVMS
//! layers them on Integrity servers: a user program asks its command interpreter
//! (supervisor mode, privilege level 2), which calls the record management services
//! (executive mode, level 1) to move a record between the program's buffer and a
//! file's. Each layer is entered by a call that raises the privilege level (Itanium's
//! `epc`, a system call elsewhere) and left by a return to the level below. The program
//! then shows the record, drawing its text into the frame buffer, and counts it, under
//! a debugger that watches the count: each store to it faults to the debugger, which
//! reads the value and lets the program go on.
//!
//! On machines with two privilege levels (ARM11, SPARC), levels 1 and 2 run as their
//! privileged level: the program is what the software does, the machine how it runs.

use super::layout::*;
use super::user::{self, Thread};
use crate::program::build::Body;
use crate::program::rng::Rng;
use crate::program::{Access, DataStream, Memory, Op, Pattern, Phase, Watch, INSN};
use crate::stream::Privilege;

/// The command interpreter's level (OpenVMS supervisor mode) and the record
/// services' (executive mode).
const SUPERVISOR: Privilege = Privilege::Cpl2;
const EXECUTIVE: Privilege = Privilege::Cpl1;

/// One request: the user's own work, then the interpreter's parsing of the command,
/// the record services' copy, and the returns down the levels.
pub fn request(rng: &mut Rng, t: Thread) -> Vec<Phase> {
    let mut phases = vec![user::compute(rng, t)];

    // The user program's call into its command interpreter.
    let mut call = Body::new(Privilege::USER, t.context, code_address(rng, &LIBC_TEXT));
    call.int(rng.range(2, 6)).op(Op::Syscall);
    phases.push(call.once());

    // The interpreter (in the process's own space) parses the command a token at a
    // time: tests of each character, stores of the parsed fields.
    let mut mix = rng.side(SERVICES_MIX);
    let interpreter = code_address(rng, &LIBC_TEXT);
    let mut parse = Body::new(SUPERVISOR, t.context, interpreter);
    let frame = parse.stream(stack_frame(rng, t.index));
    let command = parse.stream(line_stream(buffer(rng, &HEAP, 4 * PAGE), 4, Memory::Cacheable));
    parse.load(command, 0, 1, true);
    parse.skip(2, Pattern::Bits { bits: rng.bits(64, 300), len: 64 }).int(2);
    user::statements(&mut parse, &mut mix, [frame, command], rng.range(6, 16));
    // Each token's class (a table of 64) dispatches to one of 4-11 handlers through
    // the lexer's jump table, behind its range check (one token in sixteen is past the
    // table: the code after the jump takes it), itself behind a test for the
    // command's end (`if (!end && class < n)`), either of which skips the jump.
    let mut lexer = rng.side(SERVICES_LEXER);
    let handlers: Vec<u64> = (0..lexer.range(4, 12)).map(|_| code_address(&mut lexer, &LIBC_TEXT)).collect();
    let classes = (0..64).map(|_| handlers[lexer.below(handlers.len() as u64) as usize]).collect();
    let table = parse.table(classes);
    let class = parse.stream(DataStream {
        stride: INSN as i64,
        footprint: 64 * INSN,
        ..DataStream::fixed(buffer(&mut lexer, &HEAP, PAGE), Memory::Cacheable)
    });
    parse.skip(2, Pattern::Bits { bits: lexer.bits(64, 250), len: 64 });
    parse.skip(1, Pattern::Bits { bits: lexer.bits(64, 62), len: 64 });
    parse.jump(table, Some(Access { stream: class, offset: 0, size: 4, use_next: false }));
    parse.int(lexer.range(2, 6));
    phases.push(parse.close_loop(rng.range(4, 40)));
    let mut dispatch = Body::new(SUPERVISOR, t.context, interpreter + 0x400);
    dispatch.int(rng.range(1, 4)).op(Op::Syscall);
    phases.push(dispatch.once());

    // The record services (shared system space) copy the record a line at a time
    // between the process's buffer and the file's.
    let services = code_address(rng, &SERVICE_TEXT);
    let lines = rng.range(2, 64);
    let mut copy = Body::new(EXECUTIVE, t.context, services);
    let (file, user) = (buffer(rng, &HEAP, lines * LINE), buffer(rng, &HEAP, lines * LINE));
    let from = copy.stream(line_stream(file, lines, Memory::Cacheable));
    let to = copy.stream(line_stream(user, lines, Memory::Cacheable));
    copy.load(from, 0, 4, false).load(from, 4, 4, true).store(to, 0, 4).store(to, 4, 4).int(rng.range(1, 4));
    phases.push(copy.close_loop(lines));
    // Before returning, the services check the record: a variable-length record
    // begins with a 2-byte count, so the longword after it is 2 bytes past an aligned
    // address, and they read it through a longword pointer, as code written for the
    // VAX (which allowed any alignment) does; the status goes the same way into the
    // caller's copy. Itanium performs both (within 8 and 16 bytes), ARMv6 too; SPARC
    // traps to the kernel, which performs them.
    let mut done = Body::new(EXECUTIVE, t.context, services + 0x400);
    let record = done.stream(DataStream::fixed(file, Memory::Cacheable));
    let copied = done.stream(DataStream::fixed(user, Memory::Cacheable));
    done.load(record, 0, 2, false).load(record, 2, 4, true).int(1).store(copied, 2, 4);
    done.int(rng.range(1, 4)).op(Op::ExceptionReturn);
    phases.push(done.once());

    // The interpreter stores the status and returns to the program.
    let mut status = Body::new(SUPERVISOR, t.context, interpreter + 0x800);
    let frame = status.stream(stack_frame(rng, t.index));
    status.store(frame, 0, 4).int(rng.range(1, 4)).op(Op::ExceptionReturn);
    phases.push(status.once());

    // The program shows the record: a line of text drawn into the frame buffer a glyph
    // row at a time, each glyph's 8 pixels read, blended with the glyph and written,
    // its first two over the last two of the glyph before (kerned text), which it
    // reads back a few dozen cycles after writing them.
    let glyphs = rng.range(16, 80);
    let mut draw = Body::new(Privilege::USER, t.context, code_address(rng, &LIBC_TEXT));
    let pixels = draw.stream(line_stream(buffer(rng, &FRAME_BUFFER, (glyphs + 2) * LINE), glyphs, Memory::NonCacheable));
    for offset in [24, 32, 40, 48, 56] {
        draw.load(pixels, offset, 8, false);
    }
    draw.int(rng.range(8, 16));
    for offset in [24, 32, 40, 48, 56] {
        draw.store(pixels, offset, 8);
    }
    phases.push(draw.close_loop(glyphs));

    // The program counts the request, in a global the debugger watches (a data
    // breakpoint on stores to its four bytes, as OpenVMS DEBUG's SET WATCH sets one):
    // the store faults, the kernel hands the exception to the debugger (which runs in
    // the process, in user mode), the debugger reads and reports the value and lets
    // the program go on with a system call, and the kernel returns to the store.
    let counter = requests_counted(t);
    let mut count = Body::new(Privilege::USER, t.context, code_address(rng, &COMPUTE_TEXT));
    let global = count.stream(DataStream::fixed(counter, Memory::Cacheable));
    count.load(global, 0, 4, true).int(1).store(global, 0, 4);
    phases.push(count.once());
    let mut dispatch = Body::new(Privilege::KERNEL, t.context, code_address(rng, &ENTRY_TEXT));
    let stack = dispatch.stream(kernel_stack(t.index));
    user::statements(&mut dispatch, &mut mix, [stack, stack], rng.range(20, 60));
    dispatch.op(Op::ExceptionReturn);
    phases.push(dispatch.once());
    // The debugger finds the watched location's symbol in its symbol table: it probes
    // 2-15 of the table's 64-4096 hash buckets, testing each bucket's first entry
    // before it reads the entry's name and the name's slot in its string cache (`if
    // (e) slot = names[e->name]`); an empty bucket's entry is NULL, and the test skips
    // the block.
    let mut symbols = rng.side(SERVICES_SYMBOLS);
    let buckets = 1 << symbols.range(6, 13);
    let mut find = Body::new(Privilege::USER, t.context, code_address(&mut symbols, &LIBC_TEXT));
    let entries = find.stream(DataStream {
        base: buffer(&mut symbols, &HEAP, buckets * 2 * LINE),
        stride: 2 * LINE as i64,
        footprint: buckets * 2 * LINE,
        memory: Memory::Cacheable,
        page: PAGE,
        shared: false,
        nullable: true,
        fresh: false,
    });
    let names = find.stream(DataStream::fixed(buffer(&mut symbols, &HEAP, PAGE), Memory::Cacheable));
    find.skip(3, Pattern::Bits { bits: symbols.bits(64, 300), len: 64 });
    find.load(entries, 0, 4, true).load(names, 4 * symbols.below(64) as u32, 4, true).int(1);
    phases.push(find.close_loop(symbols.range(2, 16)));
    let mut debugger = Body::new(Privilege::USER, t.context, code_address(rng, &LIBC_TEXT));
    let frame = debugger.stream(stack_frame(rng, t.index));
    let watched = debugger.stream(DataStream::fixed(counter, Memory::Cacheable));
    debugger.load(watched, 0, 4, true);
    user::statements(&mut debugger, &mut mix, [frame, watched], rng.range(40, 120));
    debugger.op(Op::Syscall);
    phases.push(debugger.once());
    let mut resume = Body::new(Privilege::KERNEL, t.context, code_address(rng, &ENTRY_TEXT));
    let stack = resume.stream(kernel_stack(t.index));
    user::statements(&mut resume, &mut mix, [stack, stack], rng.range(10, 30));
    resume.op(Op::ExceptionReturn);
    phases.push(resume.once());

    let watch = Watch { addr: counter, bytes: 4, writes: true };
    for phase in &mut phases {
        phase.watch = Some(watch);
    }
    phases
}

/// The global that counts a thread's requests: the last line of its 64 KB of globals,
/// which no other code of the program touches.
fn requests_counted(t: Thread) -> u64 {
    let slots = (GLOBALS.end - GLOBALS.start) / GLOBALS_BYTES;
    GLOBALS.start + (t.index as u64 % slots + 1) * GLOBALS_BYTES - LINE
}

/// Salts of the side generators (`Rng::side`): the interpreter's statements, its
/// lexer's dispatch, the debugger's symbol table.
const SERVICES_MIX: u64 = 0x7365_7276_6d69_7831;
const SERVICES_LEXER: u64 = 0x7365_7276_6c65_7831;
const SERVICES_SYMBOLS: u64 = 0x7365_7276_7379_6d31;
