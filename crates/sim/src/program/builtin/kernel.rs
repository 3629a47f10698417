//! The kernel's share of `mixed`: system calls, device and fast interrupts, and the
//! timer interrupt's handler, each entered through its exception vector.

use super::driver::{self, Direction, PACKET};
use super::layout::*;
use super::user::{self, zero_line, Thread};
use crate::program::build::Body;
use crate::program::rng::Rng;
use crate::program::{Access, DataStream, Masks, Memory, Op, Pattern, Phase, INSN};
use crate::stream::Privilege;

fn kernel(t: Thread, entry: u64) -> Body {
    Body::new(Privilege::KERNEL, t.context, entry)
}

/// Stacked registers a kernel service routine allocates.
const SERVICE_FRAME: u8 = 24;

/// How the kernel maps the code and data a system call's service routine uses.
#[derive(Debug, Clone, Copy)]
pub struct Mapping {
    /// The page size of the service routine's text (it lives in a loadable module);
    /// `None`: the machine's usual kernel text mapping.
    pub module_text: Option<u64>,
    /// The page size of the kernel heap its buffers come from; `None`: a copy's
    /// source in 1 MB sections (a DMA buffer), a hash chain in base pages.
    pub heap: Option<u64>,
}

impl Mapping {
    /// Modules mapped like the kernel's own text, buffers as they usually are.
    pub const BASE: Mapping = Mapping { module_text: None, heap: None };
}

/// Salt of the critical section's side generator (`Rng::side`).
const LOCKED_MIX: u64 = 0x6c6f_636b_6d69_7831;

const IRQ_OFF: Masks = Masks { irq: true, fiq: false };
const ALL_OFF: Masks = Masks { irq: true, fiq: true };

/// The vector branches to the handler, which saves the registers on the kernel
/// stack and writes a state register.
fn entry(rng: &mut Rng, t: Thread, vector: u64, masks: Masks) -> Body {
    let mut b = kernel(t, vector);
    b.masks(masks);
    b.branch(code_address(rng, &ENTRY_TEXT), Pattern::Always);
    let stack = b.stream(kernel_stack(t.index));
    b.op(Op::BlockStore(Access { stream: stack, offset: 0, size: LINE as u8, use_next: false }));
    // It sets the processor state for kernel code (SPARC wrpr %pstate, ARM msr), then
    // reads the current thread's state from its stack and the kernel's globals.
    b.op(Op::SpecialReg);
    let mut mix = rng.side(ENTRY_MIX);
    let globals = b.stream(DataStream::fixed(KERNEL_DATA.start + INSN * mix.below(512), Memory::Cacheable));
    let work = rng.range(4, 12);
    user::statements(&mut b, &mut mix, [stack, globals], work);
    b
}

/// Salt of the entry sequence's side generator (`Rng::side`).
const ENTRY_MIX: u64 = 0x656e_7472_796d_6978;

/// A system call: the C library stub traps, the kernel copies data to user space or
/// looks something up, takes a lock with IRQs disabled, and returns to user mode.
/// The service routine's code and buffers are mapped as `map` says.
pub fn syscall(rng: &mut Rng, t: Thread, map: Mapping) -> Vec<Phase> {
    let mut stub = Body::new(Privilege::USER, t.context, code_address(rng, &LIBC_TEXT));
    stub.int(rng.range(2, 6)).op(Op::Syscall);
    let resume = stub.ip();

    let mut enter = entry(rng, t, SWI_VECTOR, Masks::default());
    let table = enter.stream(DataStream::fixed(KERNEL_DATA.start + INSN * rng.below(512), Memory::Cacheable));
    enter.load(table, 0, 4, true);
    let service = code_address(rng, &SERVICE_TEXT);
    let back = enter.ip() + INSN;
    enter.call(service, SERVICE_FRAME);

    // read() from the page cache or a socket, write() to a socket or sendfile(),
    // mmap() of fresh memory, a lookup (stat(), open()).
    let (before, mut work, after) = match rng.below(6) {
        0 | 1 => (None, copy_to_user(rng, t, service, map.heap, None), None),
        2 => {
            // recv(): the adapter has written the packets into socket buffers.
            let n = rng.range(1, 8);
            let buffers = buffer(rng, &SOCKET_BUFFERS, n * PACKET);
            let receive = driver::packets(rng, t, buffers, n, Direction::Receive);
            (Some(receive), copy_to_user(rng, t, service, map.heap, Some((buffers, n * PACKET / LINE))), None)
        }
        3 => {
            // send() copies the user's data into socket buffers, sendfile() reads the
            // file's cached pages (to checksum them); the adapter sends them.
            let n = rng.range(1, 8);
            let (work, buffers) = if rng.chance(500) {
                let buffers = buffer(rng, &SOCKET_BUFFERS, n * PACKET);
                (copy_from_user(rng, t, service, buffers, n * PACKET / LINE), buffers)
            } else {
                let pages = buffer(rng, &KERNEL_DATA, n * PACKET);
                (checksum(rng, t, service, pages, n * PACKET / LINE), pages)
            };
            (None, work, Some(driver::packets(rng, t, buffers, n, Direction::Send)))
        }
        4 => (None, clear_pages(rng, t, service, map.heap), None),
        _ => (None, lookup(rng, t, service, map.heap), None),
    };
    work.code_page = map.module_text;
    let mut leave = kernel(t, work.entry + work.body.len() as u64 * INSN);
    if let Some(page) = map.module_text {
        leave.code_page(page);
    }
    leave.int(rng.range(2, 6)).return_to(back).int(rng.range(1, 4));
    // spin_lock_irqsave .. spin_unlock_irqrestore
    let mut locked = kernel(t, leave.ip());
    locked.masks(IRQ_OFF);
    let lock = locked.stream(DataStream::fixed(KERNEL_DATA.start + INSN * rng.below(512), Memory::Cacheable));
    locked.op(Op::Atomic(Access { stream: lock, offset: 0, size: 4, use_next: true }));
    // The data the lock protects, beside it, and the kernel stack; choices added later
    // come from `mix`, so the rest of the program stays as it was.
    let mut mix = rng.side(LOCKED_MIX);
    let stack = locked.stream(kernel_stack(t.index));
    let held = rng.range(10, 60);
    user::statements(&mut locked, &mut mix, [stack, lock], held);
    locked.store(lock, 0, 4);
    let mut exit = kernel(t, locked.ip());
    exit.int(1).op(Op::ExceptionReturn).goto(resume);
    let mut phases = vec![stub.once(), enter.once()];
    phases.extend(before);
    phases.push(work);
    phases.extend(after);
    phases.extend([leave.once(), locked.once(), exit.once()]);
    phases
}

/// Copies a kernel buffer (on `heap` pages, if given) to user space line by line, across the
/// user's 4 KB pages: a buffer of the page cache, or `lines` of the one at `from`.
fn copy_to_user(rng: &mut Rng, t: Thread, start: u64, heap: Option<u64>, from: Option<(u64, u64)>) -> Phase {
    let (base, lines) = match from {
        Some(buffer) => buffer,
        None => {
            let lines = rng.log_range(4, 512);
            (buffer(rng, &KERNEL_DATA, lines * LINE), lines)
        }
    };
    let from = DataStream { page: heap.unwrap_or(SECTION), ..line_stream(base, lines, Memory::Cacheable) };
    let to = DataStream { page: PAGE, ..line_stream(buffer(rng, &HEAP, lines * LINE), lines, Memory::Cacheable) };
    copy(rng, t, start, from, to, lines)
}

/// Copies `lines` of user data into the kernel buffer at `to`.
fn copy_from_user(rng: &mut Rng, t: Thread, start: u64, to: u64, lines: u64) -> Phase {
    let from = DataStream { page: PAGE, ..line_stream(buffer(rng, &HEAP, lines * LINE), lines, Memory::Cacheable) };
    copy(rng, t, start, from, line_stream(to, lines, Memory::Cacheable), lines)
}

/// The kernel's copy loop: a whole line loaded from `from` and stored to `to` each
/// iteration.
fn copy(rng: &mut Rng, t: Thread, start: u64, from: DataStream, to: DataStream, lines: u64) -> Phase {
    let mut b = kernel(t, start);
    let (from, to) = (b.stream(from), b.stream(to));
    b.op(Op::BlockLoad(Access { stream: from, offset: 0, size: LINE as u8, use_next: true }));
    b.op(Op::BlockStore(Access { stream: to, offset: 0, size: LINE as u8, use_next: false }));
    b.int(rng.range(1, 3));
    b.close_loop(lines)
}

/// Sums `lines` of the cached file pages at `at` (the Internet checksum of what
/// sendfile() sends), a word at a time.
fn checksum(rng: &mut Rng, t: Thread, start: u64, at: u64, lines: u64) -> Phase {
    let mut b = kernel(t, start);
    let pages = b.stream(line_stream(at, lines, Memory::Cacheable));
    b.op(Op::BlockLoad(Access { stream: pages, offset: 0, size: LINE as u8, use_next: true }));
    b.int(rng.range(8, 12));
    b.close_loop(lines)
}

/// Zeroes fresh 4 KB page frames for the process (anonymous memory it maps populated,
/// a read from /dev/zero) through the kernel's linear map (on `heap` pages, if given),
/// as `clear_page` does: 16-byte stores that nothing waits for (Itanium Linux spills
/// f0, arch/ia64/lib/clear_page.S), two a 32-byte step.
fn clear_pages(rng: &mut Rng, t: Thread, start: u64, heap: Option<u64>) -> Phase {
    let lines = rng.range(1, 4) * (PAGE / LINE);
    let mut b = kernel(t, start);
    let frames = b.stream(DataStream {
        page: heap.unwrap_or(SECTION),
        ..line_stream(buffer(rng, &KERNEL_DATA, lines * LINE) / PAGE * PAGE, lines, Memory::Cacheable)
    });
    zero_line(&mut b, frames);
    b.int(1);
    b.close_loop(lines)
}

/// Follows a hash chain through kernel data (on `heap` pages, if given).
fn lookup(rng: &mut Rng, t: Thread, start: u64, heap: Option<u64>) -> Phase {
    let links = rng.log_range(2, 64);
    let mut b = kernel(t, start);
    let chain = b.stream(DataStream {
        base: buffer(rng, &KERNEL_DATA, links << 12),
        stride: (LINE * rng.range(3, 97)) as i64,
        footprint: links << 12,
        memory: Memory::Cacheable,
        page: heap.unwrap_or(PAGE),
        shared: false,
        nullable: false,
        fresh: false,
    });
    b.load(chain, 0, 4, true).int(rng.range(2, 6));
    b.load(chain, 4, 4, true);
    b.skip(1, Pattern::Never).int(1);
    b.close_loop(links)
}

/// Which interrupt a handler serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interrupt {
    Timer,
    Device,
    Fast,
}

/// An interrupt handler: reads the device's status register, drains its FIFO into
/// a kernel buffer, acknowledges the interrupt, and returns to the interrupted code.
/// `resume` is where that code goes on (the timer's handler returns wherever it hit).
pub fn interrupt(rng: &mut Rng, t: Thread, source: Interrupt) -> Vec<Phase> {
    let (vector, masks) = match source {
        Interrupt::Fast => (FIQ_VECTOR, ALL_OFF),
        _ => (IRQ_VECTOR, IRQ_OFF),
    };
    let device = DEVICES.start + 0x1000 * rng.below(16);
    let mut enter = entry(rng, t, vector, masks);
    let regs = enter.stream(DataStream::fixed(device, Memory::Device));
    enter.load(regs, 0, 4, true);
    let drain_start = code_address(rng, &SERVICE_TEXT);
    let back = enter.ip() + INSN;
    enter.call(drain_start, 0);

    let words = match source {
        Interrupt::Timer => 1,
        Interrupt::Device => rng.log_range(1, 64),
        Interrupt::Fast => rng.range(1, 8),
    };
    let mut drain = kernel(t, drain_start);
    drain.masks(masks);
    let fifo = drain.stream(DataStream::fixed(device + 8, Memory::Device));
    let buf = drain.stream(DataStream {
        stride: INSN as i64,
        footprint: words * INSN,
        ..DataStream::fixed(buffer(rng, &KERNEL_DATA, words * INSN), Memory::Cacheable)
    });
    drain.load(fifo, 0, 4, true).store(buf, 0, 4).int(rng.range(1, 3));
    let drain = drain.close_loop(words);

    let mut leave = kernel(t, drain.entry + drain.body.len() as u64 * INSN);
    leave.masks(masks);
    let regs = leave.stream(DataStream::fixed(device + 4, Memory::Device));
    leave.return_to(back).store(regs, 0, 4).int(rng.range(2, 8)).op(Op::ExceptionReturn);
    vec![enter.once(), drain, leave.once()]
}
