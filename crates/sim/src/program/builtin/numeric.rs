//! Numeric and latency programs: dense linear algebra in floating point, and a
//! pointer-chasing latency test.

use super::layout::*;
use super::user::Thread;
use crate::program::build::Body;
use crate::program::rng::Rng;
use crate::program::{Access, DataStream, FpOp, Memory, Op, Phase, INSN};
use crate::stream::Privilege;

/// Bytes of a double.
const DOUBLE: u64 = 8;
/// How far ahead of its loads a daxpy prefetches: four lines.
const PREFETCH_AHEAD: u32 = 4 * LINE as u32;

fn matrix(rng: &mut Rng, n: u64) -> u64 {
    buffer(rng, &HEAP, n * n * DOUBLE)
}

/// Stacked registers of a kernel's frame: a software-pipelined loop rotates its
/// registers through a large frame, and Itanium compilers give such BLAS kernels 64 to
/// 96 of the 96 stacked registers (a frame size is the program's; machines without a
/// register stack ignore it).
const KERNEL_FRAMES: std::ops::RangeInclusive<u64> = 64..=96;

/// One kernel of dense linear algebra on an `n` x `n` matrix of doubles (n a power of
/// two, 64-512, as blocked codes choose), called with a large frame and returning: a
/// matrix multiply's inner product (a row of A against a column of B: a unit-stride
/// and an `n`-stride stream), a daxpy (`y += a * x`, with software prefetches), or an
/// LU elimination step (a divide by the pivot, then row updates).
pub fn fp(rng: &mut Rng, t: Thread) -> Vec<Phase> {
    let n = 1 << rng.range(6, 9);
    let mut caller = Body::new(Privilege::USER, t.context, code_address(rng, &COMPUTE_TEXT));
    caller.int(rng.range(2, 6));
    let back = caller.ip() + INSN;
    let kernel = code_address(rng, &COMPUTE_TEXT);
    caller.call(kernel, rng.range(*KERNEL_FRAMES.start(), *KERNEL_FRAMES.end()) as u8);
    let mut b = Body::new(Privilege::USER, t.context, kernel);
    let row = |base: u64| DataStream {
        base,
        stride: DOUBLE as i64,
        footprint: n * n * DOUBLE,
        memory: Memory::Cacheable,
        page: PAGE,
        shared: false,
    };
    match rng.below(3) {
        0 => {
            let a = b.stream(row(matrix(rng, n)));
            let col = b.stream(DataStream { stride: (n * DOUBLE) as i64, ..row(matrix(rng, n)) });
            b.fp_load(a, 0, 8, false).fp_load(col, 0, 8, true).fp(FpOp::Fma, 1).int(1);
        }
        1 => {
            let x = b.stream(row(matrix(rng, n)));
            let y = b.stream(row(matrix(rng, n)));
            // Prefetches four lines ahead, as compilers schedule them: x for reading,
            // y for writing.
            let ahead = |stream| Op::Prefetch(Access { stream, offset: PREFETCH_AHEAD, size: 8, use_next: false });
            b.op(ahead(x)).op(ahead(y));
            b.fp_load(x, 0, 8, false).fp_load(y, 0, 8, true).fp(FpOp::Fma, 1).store(y, 0, 8).int(1);
        }
        _ => {
            let pivot = b.stream(DataStream::fixed(matrix(rng, n), Memory::Cacheable));
            let r = b.stream(row(matrix(rng, n)));
            b.fp_load(pivot, 0, 8, true).fp(FpOp::Div, 1);
            for j in 0..4 {
                b.fp_load(r, 8 * j, 8, true).fp(FpOp::Fma, 1).store(r, 8 * j, 8);
            }
            b.fp(FpOp::Mul, 1).int(2);
        }
    }
    let body = b.close_loop(n * n / 4);
    let mut leave = Body::new(Privilege::USER, t.context, body.entry + body.body.len() as u64 * INSN);
    leave.return_to(back).int(rng.range(1, 4));
    vec![caller.once(), body, leave.once()]
}

/// lmbench-style memory latency: a loop of loads, each of which the next needs,
/// walking a buffer of 4 KB to 64 MB with a 64-256-byte stride, lap after lap. The
/// time per load shows each level of the memory system.
pub fn chase(rng: &mut Rng, t: Thread) -> Phase {
    let size = 1 << rng.range(12, 26);
    let stride = 1 << rng.range(6, 8);
    let mut b = Body::new(Privilege::USER, t.context, code_address(rng, &COMPUTE_TEXT));
    let chain = b.stream(DataStream {
        base: buffer(rng, &HEAP, size),
        stride,
        footprint: size,
        memory: Memory::Cacheable,
        page: PAGE,
        shared: false,
    });
    b.load(chain, 0, 4, true);
    b.close_loop((size / stride as u64) * rng.range(2, 8))
}
