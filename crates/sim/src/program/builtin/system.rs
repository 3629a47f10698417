//! Operating-system-shaped programs: many processes with mixed page sizes and system
//! calls, and one multi-threaded process sharing memory.

use super::kernel;
use super::layout::*;
use super::user::{self, Thread};
use crate::program::build::Body;
use crate::program::rng::Rng;
use crate::program::{Access, DataStream, FpOp, Memory, Op, Pattern, Phase, INSN};
use crate::stream::Privilege;

/// Salt of `shared`'s side generator (`Rng::side`).
const SHARED_SIDE: u64 = 0x7368_6172_6564_5f31;

/// Processes of `os`, and threads of `shared`.
pub const PROCESSES: usize = 8;
pub const SHARED_THREADS: usize = 4;
/// The read-mostly table of `shared`: 32 MB, more than Montecito's 12 MB L3 and T4's
/// 4 MB, looked up a line and a kilobyte apart (a hash table's buckets are scattered).
pub const SHARED_TABLE_BYTES: u64 = 32 << 20;
const SHARED_TABLE_STRIDE: i64 = 1024 + 64;
/// `os` switches processes at 1 kHz (a 400 MHz core).
pub const OS_TICK_CYCLES: u64 = 400_000;

/// Page sizes of ARM's short descriptors (small, large, section, supersection), and
/// the 256 MB and 2 GB pages of a database's shared segment on SPARC (Solaris ISM);
/// a machine maps each to the largest page size it has that is not larger.
const PAGE_SIZES: [u64; 6] = [4 << 10, 64 << 10, 1 << 20, 16 << 20, 256 << 20, 2 << 30];

/// A short piece of a process's work: a loop, its text on base, 64 KB, 4 MB, 256 MB or
/// 2 GB pages, over a buffer mapped with one of the six page sizes, then one or two
/// system calls whose module text and kernel buffers are on one of them too.
pub fn os(rng: &mut Rng, t: Thread) -> Vec<Phase> {
    let page = PAGE_SIZES[rng.below(6) as usize];
    let bytes = rng.log_range(16 << 10, 32 << 20);
    // Large binaries' text on large pages, as the OS maps it when it can (Solaris's
    // MPSS for vnodes, Linux's huge-page text): base pages, 64 KB, 4 MB, or 256 MB
    // and 2 GB (a database server in its own large-page text segment, which first
    // runs a transaction through its text).
    let text = [None, Some(64 << 10), Some(4 << 20), Some(256 << 20), Some(2 << 30)][rng.below(5) as usize];
    let mut phases = match text {
        Some(page) if page >= 256 << 20 => transaction(rng, t, page),
        _ => Vec::new(),
    };
    let mut b = Body::new(Privilege::USER, t.context, code_address(rng, &COMPUTE_TEXT));
    if let Some(page) = text {
        b.code_page(page);
    }
    let base = match buffer(rng, &HEAP, bytes) / page * page {
        // A page larger than the heap's start: one of the whole pages inside it.
        0 => HEAP.start.next_multiple_of(page),
        base => base,
    };
    // A sparse walk, one access per 1-4 KB, so that the TLBs rather than the caches feel it.
    let stride = 1 << rng.range(10, 12);
    let data = b.stream(DataStream {
        base,
        stride,
        // Whole strides: the walk comes back to the buffer's start, its accesses
        // aligned.
        footprint: bytes / stride as u64 * stride as u64,
        memory: Memory::Cacheable,
        page,
        shared: false,
        nullable: false,
        fresh: false,
    });
    // Choices added later come from `mix`, so the rest of the program stays as it was.
    let mut mix = rng.side(OS_MIX);
    let frame = b.stream(stack_frame(&mut mix, t.index));
    b.load(data, 0, 4, true);
    let work = rng.range(4, 16);
    user::statements(&mut b, &mut mix, [frame, frame], work);
    b.store(data, 4, 4);
    phases.push(b.close_loop(rng.log_range(64, 8192)));
    for _ in 0..rng.range(1, 2) {
        // Kernels map loadable modules' text and their heap with large pages where
        // the MMU has them (Solaris's segkmem large pages, Linux's linear map): the
        // service routine is in some module, its buffers in some part of the heap.
        let map = kernel::Mapping { module_text: Some(PAGE_SIZES[rng.below(6) as usize]), heap: Some(PAGE_SIZES[rng.below(6) as usize]) };
        phases.extend(kernel::syscall(rng, t, map));
    }
    let mut files = rng.side(OS_FILES);
    if files.chance(500) {
        phases.push(mapped_file(&mut files, t));
    }
    let mut clock = rng.side(OS_CLOCK);
    if clock.chance(100) {
        phases.extend(read_clock(&mut clock, t));
    }
    let mut time = rng.side(OS_TIME);
    if time.chance(300) {
        phases.extend(time_of_day(&mut time, t));
    }
    phases
}

/// Salt of the generator of `os`'s reads of the time of day (`Rng::side`).
const OS_TIME: u64 = 0x6f73_5f74_696d_6531;

/// A process reads the time of day (`gettimeofday`, `clock_gettime`: a database
/// stamps its transactions) without a trap. Linux on Itanium answers in the gate
/// page's light-weight system call (`fsys`: `epc` raises the privilege level without
/// an interruption), which reads the kernel's time under its sequence lock
/// (arch/ia64/kernel/fsys.S): the sequence with an acquire load (`ld4.acq`), the
/// clock's fields, the interval time counter and the arithmetic that scales it, and
/// the sequence again, compared with the first; then it returns to the process.
fn time_of_day(rng: &mut Rng, t: Thread) -> Vec<Phase> {
    let mut call = Body::new(Privilege::USER, t.context, code_address(rng, &LIBC_TEXT));
    call.int(rng.range(2, 5));
    let back = call.ip() + INSN;
    call.call(GATE_TEXT, 8);
    let mut fsys = Body::new(Privilege::KERNEL, t.context, GATE_TEXT);
    let lock = fsys.stream(DataStream::fixed(TIME_DATA, Memory::Cacheable));
    let clock = fsys.stream(DataStream::fixed(CLOCK_DATA, Memory::Cacheable));
    // The acquire, then the fields, which it orders after it (C11's
    // memory_order_acquire: a fence after the load).
    fsys.load(lock, 0, 4, false).op(Op::Barrier);
    for offset in [0, 8, 16] {
        fsys.load(clock, offset, 8, false);
    }
    fsys.int(rng.range(6, 10)).load(lock, 0, 4, true).int(1).return_to(back);
    let mut resume = Body::new(Privilege::USER, t.context, back);
    resume.int(rng.range(1, 4));
    vec![call.once(), fsys.once(), resume.once()]
}

/// Salt of `os`'s side generator (`Rng::side`).
const OS_MIX: u64 = 0x6f73_5f6d_6978_3031;
/// Salt of the generator of `os`'s mapped files (`Rng::side`).
const OS_FILES: u64 = 0x6f73_5f66_696c_6531;

/// Salt of the generator of `os`'s clock reads (`Rng::side`).
const OS_CLOCK: u64 = 0x6f73_5f63_6c6f_6331;

/// Now and then the kernel reads the real-time clock (`hwclock`, the periodic
/// synchronisation of the clock with the system time) through the firmware's runtime
/// service, as Linux's `rtc-efi` driver calls EFI GetTime on Itanium. The firmware's
/// code is in memory its memory map marks uncacheable, which the kernel maps so
/// (`Phase::uncached_code`): every fetch of it reads memory. The service reads the
/// clock's ten registers through the CMOS ports, an index written and a value read
/// each, converts each from BCD, and writes the time into the caller's structure.
fn read_clock(rng: &mut Rng, t: Thread) -> Vec<Phase> {
    let mut call = Body::new(Privilege::KERNEL, t.context, code_address(rng, &SERVICE_TEXT));
    let stack = call.stream(kernel_stack(t.index));
    let work = rng.range(10, 30);
    user::statements(&mut call, rng, [stack, stack], work);
    // The ioctl's path calls the driver, which calls the service.
    let (driver, service) = (code_address(rng, &SERVICE_TEXT), code_address(rng, &FIRMWARE_TEXT));
    let outer = call.ip() + INSN;
    call.call(driver, 16).int(rng.range(2, 6));
    let back = call.ip() + INSN;
    call.call(service, 8);
    let mut read = Body::new(Privilege::KERNEL, t.context, service);
    read.uncached_code();
    let index = read.stream(DataStream::fixed(RTC_PORTS, Memory::Device));
    let value = read.stream(DataStream::fixed(RTC_PORTS + 1, Memory::Device));
    read.store(index, 0, 1).load(value, 0, 1, true).int(rng.range(3, 6));
    let mut done = Body::new(Privilege::KERNEL, t.context, service + 0x100);
    done.uncached_code();
    let time = done.stream(kernel_stack(t.index));
    for offset in [16, 18, 19, 20, 21, 22, 24] {
        done.store(time, offset, 1);
    }
    done.int(rng.range(2, 6)).return_to(back);
    // The driver converts the firmware's time to the kernel's and returns.
    let mut convert = Body::new(Privilege::KERNEL, t.context, back);
    let stack = convert.stream(kernel_stack(t.index));
    let work = rng.range(6, 16);
    user::statements(&mut convert, rng, [stack, stack], work);
    convert.return_to(outer);
    vec![call.once(), read.close_loop(10), done.once(), convert.once()]
}

/// A process reads a file it has just mapped (`mmap`, as a database reads its data
/// file or a search tool its input): for each of 64-1,024 entries of an index it
/// holds, a flag says whether the entry's record (256 bytes to 1 KB, in the file's
/// order) is wanted, and the record is read only then: its length, or in one file of
/// two a value in floating point (`if (idx->live) n += rec->len`, `sum +=
/// rec->price`). The file's pages are not present until touched (`DataStream::fresh`):
/// the first read in each page faults and the kernel maps it from the page cache. An
/// Itanium compiler hoists the record's read above the test (`ld.s`, ERRATA MMC42),
/// which a page not yet present NaTs: the check fails when the record is wanted
/// (MMC55).
fn mapped_file(rng: &mut Rng, t: Thread) -> Phase {
    let records = rng.log_range(64, 1024);
    let record = 256 << rng.below(3);
    let mut b = Body::new(Privilege::USER, t.context, code_address(rng, &COMPUTE_TEXT));
    let entries = DataStream { stride: 8, footprint: records * 8, ..DataStream::fixed(buffer(rng, &HEAP, records * 8), Memory::Cacheable) };
    let index = b.stream(entries);
    let bytes = records * record;
    let file = b.stream(DataStream {
        base: buffer(rng, &HEAP, bytes) / PAGE * PAGE,
        stride: record as i64,
        footprint: bytes,
        fresh: true,
        ..DataStream::fixed(0, Memory::Cacheable)
    });
    b.load(index, 0, 4, true);
    b.skip(3, Pattern::Bits { bits: rng.bits(64, 400), len: 64 });
    if rng.chance(500) {
        b.load(file, 0, 4, true).int(2);
    } else {
        b.fp_load(file, 8, 8, true).fp(FpOp::Add, 1).int(1);
    }
    b.int(rng.range(2, 6));
    b.close_loop(records)
}

/// Transaction paths of the database server: how many its text has, how many blocks of
/// code each runs, and how many paths a transaction takes.
const SERVER_PATHS: u64 = (SERVER_TEXT.end - SERVER_TEXT.start) / SERVER_PATH_BYTES;
const PATH_BLOCKS: u64 = 256;
const PATHS_PER_TRANSACTION: u64 = 4;
/// Seeds a path's code with its index, so that a path is the same code each time.
const PATH_SEED: u64 = 0x5E_4E_E4;

/// A database transaction: a few of the server's paths (parse, plan, execute, commit),
/// each one pass down about 2,500 instructions of branchy straight-line code. Its 128
/// paths hold about 1.3 MB of text, more than most instruction caches and second
/// levels hold: the instruction footprint that makes OLTP servers miss in them. A
/// path's code is the same each time it runs (it is drawn from its index); its text
/// is on `page`.
fn transaction(rng: &mut Rng, t: Thread, page: u64) -> Vec<Phase> {
    let rows = DataStream::fixed(buffer(rng, &HEAP, SECTION), Memory::Cacheable);
    (0..PATHS_PER_TRANSACTION)
        .map(|_| {
            let path = rng.below(SERVER_PATHS);
            let mut code = Rng(PATH_SEED ^ path);
            let mut b = Body::new(Privilege::USER, t.context, SERVER_TEXT.start + path * SERVER_PATH_BYTES);
            b.code_page(page);
            let row = b.stream(rows);
            let mut mix = code.side(OS_MIX);
            let frame = b.stream(stack_frame(&mut mix, t.index));
            for block in 0..PATH_BLOCKS {
                let work = code.range(4, 8);
                user::statements(&mut b, &mut mix, [frame, row], work);
                b.load(row, (block % 32) as u32 * 8, 8, false);
                b.skip(2, Pattern::Never).int(2);
            }
            b.once()
        })
        .collect()
}

/// One step of a thread of a shared-memory program (all threads in address space 1):
/// take a lock with an atomic swap, update shared counters that sit in one cache line
/// (false sharing), produce into or consume from a shared ring buffer (its head index
/// published with a release store and read with an acquire load), release the lock,
/// and do some private work.
pub fn shared(rng: &mut Rng, t: Thread, region: u64, table: u64) -> Vec<Phase> {
    // Choices added later come from `side`, so the rest of the program stays as it was.
    let mut side = rng.side(SHARED_SIDE);
    let process = Thread { index: t.index, context: 1 };
    let mut b = Body::new(Privilege::USER, 1, code_address(rng, &COMPUTE_TEXT));
    let lock = b.stream(DataStream { shared: true, ..DataStream::fixed(region, Memory::Cacheable) });
    // The counters are an object of their own, two pages on.
    let counters = b.stream(DataStream { shared: true, ..DataStream::fixed(region + 2 * PAGE, Memory::Cacheable) });
    let head = b.stream(DataStream { shared: true, ..DataStream::fixed(region + 3 * PAGE, Memory::Cacheable) });
    let ring_bytes = 64 << 10;
    let ring = b.stream(DataStream {
        base: region + 4 * PAGE,
        stride: LINE as i64,
        footprint: ring_bytes,
        memory: Memory::Cacheable,
        page: PAGE,
        shared: true,
        nullable: false,
        fresh: false,
    });
    // Spin until the swap returns 0: the lock is mostly free, sometimes held, and
    // then the thread pauses (a spin-wait hint) before it tries again.
    b.op(Op::Atomic(Access { stream: lock, offset: 0, size: 4, use_next: true }));
    b.skip(3, Pattern::Bits { bits: rng.bits(64, 900), len: 64 }).int(1).op(Op::Pause).op(Op::Barrier);
    // Each thread's counter is a word of the same line.
    let mine = 4 * t.index as u32;
    b.load(counters, mine, 4, true).int(1).store(counters, mine, 4);
    if t.index.is_multiple_of(2) {
        // The producer prefetches the slots it will write next.
        b.op(Op::Prefetch(Access { stream: ring, offset: 4 * LINE as u32, size: 8, use_next: false }));
        b.op(Op::BlockStore(Access { stream: ring, offset: 0, size: LINE as u8, use_next: false }));
        // and publishes the new head index, a word on a page of its own, with a
        // release store (C11's memory_order_release: a fence before the store).
        b.op(Op::Barrier).store(head, 0, 4);
    } else {
        // The consumer reads the head index with an acquire load (memory_order_acquire:
        // a fence after the load), then the slot it points to.
        b.load(head, 0, 4, false).op(Op::Barrier);
        b.load(ring, 0, 8, true);
    }
    b.op(Op::Barrier).store(lock, 0, 4);
    b.int(rng.range(8, 64));
    // A lookup in a read-mostly table every thread shares (a routing table, a
    // dictionary), larger than any cache here and written by none of them: a line this
    // core lost may still be in the other core's caches, clean.
    let lookups = b.stream(DataStream {
        base: table,
        stride: SHARED_TABLE_STRIDE,
        footprint: SHARED_TABLE_BYTES,
        memory: Memory::Cacheable,
        page: PAGE,
        shared: true,
        nullable: false,
        fresh: false,
    });
    b.load(lookups, 0, 8, true);
    // A method of the runtime's code cache, which every thread calls; once in 64
    // iterations a producer's JIT patches a call site in it (an inline cache) and
    // makes the line coherent with instruction fetch (`fc`, FLUSH).
    let method = JIT_TEXT.start;
    let site = b.stream(DataStream { shared: true, ..DataStream::fixed(method, Memory::Cacheable) });
    if t.index.is_multiple_of(2) {
        let patch = Access { stream: site, offset: 0, size: 8, use_next: false };
        b.skip(2, Pattern::Bits { bits: !1, len: 64 }).op(Op::Store(patch)).op(Op::FlushCode(patch));
    }
    b.call(method, 8).int(rng.range(6, 12)).ret(0);
    // Then one of the many other methods the runtime compiled into its code cache,
    // whose call site the producer's JIT patches in the same iteration as the first.
    let other = code_address(&mut side, &JIT_TEXT);
    let other_site = b.stream(DataStream { shared: true, ..DataStream::fixed(other, Memory::Cacheable) });
    if t.index.is_multiple_of(2) {
        let patch = Access { stream: other_site, offset: 0, size: 8, use_next: false };
        b.skip(2, Pattern::Bits { bits: !1, len: 64 }).op(Op::Store(patch)).op(Op::FlushCode(patch));
    }
    b.call(other, 8).int(side.range(6, 12)).ret(0);
    let mut phases = vec![b.close_loop(rng.log_range(256, 16384))];
    if t.index.is_multiple_of(2) && side.chance(250) {
        // Now and then the producer's JIT compiles a method into the code cache: it
        // writes the method's code a line at a time, then makes the range coherent with
        // instruction fetch, an `fc` (FLUSH, a clean and invalidate) a line, as a
        // runtime's flush of a code range does once the code is written.
        let lines = side.range(8, 63);
        let base = code_address(&mut side, &JIT_TEXT);
        let method = DataStream {
            base,
            stride: LINE as i64,
            footprint: lines * LINE,
            memory: Memory::Cacheable,
            page: PAGE,
            shared: true,
            nullable: false,
            fresh: false,
        };
        let mut emit = Body::new(Privilege::USER, 1, code_address(&mut side, &COMPUTE_TEXT));
        let code = emit.stream(method);
        emit.int(side.range(4, 12));
        for offset in [0, 8, 16, 24] {
            emit.store(code, offset, 8);
        }
        phases.push(emit.close_loop(lines));
        let mut flush = Body::new(Privilege::USER, 1, code_address(&mut side, &COMPUTE_TEXT));
        let code = flush.stream(method);
        flush.op(Op::FlushCode(Access { stream: code, offset: 0, size: 8, use_next: false })).int(1);
        phases.push(flush.close_loop(lines));
    }
    // Between critical sections, some work of its own.
    phases.push(user::compute(rng, process));
    phases
}

/// Iterations of `idle`'s work on a request: from a few thousand cycles to most of
/// a tick (`OS_TICK_CYCLES`), depending on the machine.
const REQUEST_WORK: (u64, u64) = (32, 4096);

/// One request of a lightly loaded server (`idle`), which arrives with the timer's
/// tick: the network adapter's interrupt, the server's work on the request (a short
/// piece of `compute`), its reply or its next read by system call; then the idle
/// loop, which finds the run queue empty and waits for the next interrupt.
pub fn served(rng: &mut Rng, t: Thread) -> Vec<Phase> {
    let mut phases = kernel::interrupt(rng, t, kernel::Interrupt::Device);
    let mut work = user::compute(rng, t);
    work.iterations = rng.log_range(REQUEST_WORK.0, REQUEST_WORK.1);
    phases.push(work);
    phases.extend(kernel::syscall(rng, t, kernel::Mapping::BASE));
    phases.push(idle_loop(rng, t));
    phases
}

/// The kernel's idle loop: it reads the run queue's flag, finds nothing to run,
/// completes its memory accesses (ARMv6's DSB before WFI, Linux's `cpu_do_idle`) and
/// waits for an interrupt (`Op::Halt`: WFI, PAL_HALT_LIGHT, sun4v's CPU_YIELD).
fn idle_loop(rng: &mut Rng, t: Thread) -> Phase {
    let mut b = Body::new(Privilege::KERNEL, t.context, code_address(rng, &SERVICE_TEXT));
    let run_queue = b.stream(DataStream::fixed(KERNEL_DATA.start + 0x100 * t.index as u64, Memory::Cacheable));
    b.load(run_queue, 0, 4, true).int(rng.range(1, 3)).op(Op::Barrier).op(Op::Halt);
    b.once()
}
