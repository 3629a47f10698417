//! Operating-system-shaped programs: many processes with mixed page sizes and system
//! calls, and one multi-threaded process sharing memory.

use super::kernel;
use super::layout::*;
use super::user::{self, Thread};
use crate::program::build::Body;
use crate::program::rng::Rng;
use crate::program::{Access, DataStream, Memory, Op, Pattern, Phase};
use crate::stream::Privilege;

/// Processes of `os`, and threads of `shared`.
pub const PROCESSES: usize = 8;
pub const SHARED_THREADS: usize = 4;
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
    let mut b = Body::new(Privilege::USER, t.context, code_address(rng, &COMPUTE_TEXT));
    // Large binaries' text on large pages, as the OS maps it when it can (Solaris's
    // MPSS for vnodes, Linux's huge-page text): base pages, 64 KB, 4 MB, or 256 MB
    // and 2 GB (a database binary in its own large-page text segment).
    match rng.below(5) {
        1 => b.code_page(64 << 10),
        2 => b.code_page(4 << 20),
        3 => b.code_page(256 << 20),
        4 => b.code_page(2 << 30),
        _ => &mut b,
    };
    let base = match buffer(rng, &HEAP, bytes) / page * page {
        // A page larger than the heap's start: one of the whole pages inside it.
        0 => HEAP.start.next_multiple_of(page),
        base => base,
    };
    // A sparse walk, one access per 1-4 KB, so that the TLBs rather than the caches feel it.
    let stride = 1 << rng.range(10, 12);
    let data = b.stream(DataStream { base, stride, footprint: bytes, memory: Memory::Cacheable, page, shared: false });
    b.load(data, 0, 4, true).int(rng.range(4, 16)).store(data, 4, 4);
    let mut phases = vec![b.close_loop(rng.log_range(64, 8192))];
    for _ in 0..rng.range(1, 2) {
        // Kernels map loadable modules' text and their heap with large pages where
        // the MMU has them (Solaris's segkmem large pages, Linux's linear map): the
        // service routine is in some module, its buffers in some part of the heap.
        let map = kernel::Mapping { module_text: Some(PAGE_SIZES[rng.below(6) as usize]), heap: Some(PAGE_SIZES[rng.below(6) as usize]) };
        phases.extend(kernel::syscall(rng, t, map));
    }
    phases
}

/// One step of a thread of a shared-memory program (all threads in address space 1):
/// take a lock with an atomic swap, update shared counters that sit in one cache line
/// (false sharing), produce into or consume from a shared ring buffer, release the
/// lock, and do some private work.
pub fn shared(rng: &mut Rng, t: Thread, region: u64) -> Vec<Phase> {
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
        // and publishes the new head index, a word on a page of its own.
        b.store(head, 0, 4);
    } else {
        b.load(ring, 0, 8, true);
    }
    b.op(Op::Barrier).store(lock, 0, 4);
    b.int(rng.range(8, 64));
    let mut phases = vec![b.close_loop(rng.log_range(256, 16384))];
    // Between critical sections, some work of its own.
    phases.push(user::compute(rng, process));
    phases
}
