//! Numeric and latency programs: dense linear algebra in floating point, and a
//! pointer-chasing latency test.

use super::layout::*;
use super::user::Thread;
use crate::program::build::Body;
use crate::program::rng::Rng;
use crate::program::{Access, DataStream, FpOp, FpValues, Memory, Op, Pattern, Phase, INSN};
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

/// One phase of the `fp` workload: a kernel of dense linear algebra (`dense`), now
/// and then followed by an in-place update through aliasing pointers (`aliased`) or a
/// batch of small products (`blocks`).
pub fn fp(rng: &mut Rng, t: Thread) -> Vec<Phase> {
    // The kernels added later (`aliased`, `blocks`) come from `side`, so the rest of
    // the program stays as it was.
    let mut side = rng.side(FP_SIDE);
    let mut phases = dense(rng, t);
    if side.chance(400) {
        phases.extend(if side.chance(500) { aliased(&mut side, t) } else { blocks(&mut side, t) });
    }
    let mut audio = rng.side(FILTER_SIDE);
    if audio.chance(500) {
        phases.extend(filter(&mut audio, t));
    }
    let mut grouped = rng.side(MEANS_SIDE);
    if grouped.chance(250) {
        phases.extend(means(&mut grouped, t));
    }
    phases
}

/// Salt of the generator of `fp`'s grouped means (`Rng::side`).
const MEANS_SIDE: u64 = 0x6d65_616e_735f_3031;

/// The last step of a grouped average (SQL's `AVG` with `GROUP BY` over a fixed set of
/// groups, a histogram's mean per bin): for each of 256-2,048 groups, its sum over its
/// count, for the groups that have any (`mean[g] = n[g] != 0 ? sum[g] / n[g] : 0`).
/// The sum is loaded, the count loaded and converted to floating point (Itanium
/// `setf.sig`, `fcvt.xf`), the test passes over the divide for an empty group, and the
/// mean is stored either way. 10-40 % of the groups are empty, in a pattern that
/// repeats every 64. An Itanium compiler starts the divide's long sequence ahead of
/// the test (ERRATA MMC80), which for an empty group divides by zero.
fn means(rng: &mut Rng, t: Thread) -> Vec<Phase> {
    called(rng, t, |rng, b| {
        let groups = 1 << rng.range(8, 11);
        let mut column = |rng: &mut Rng| {
            let base = buffer(rng, &HEAP, groups * DOUBLE);
            b.stream(DataStream { stride: DOUBLE as i64, footprint: groups * DOUBLE, ..DataStream::fixed(base, Memory::Cacheable) })
        };
        let (sums, counts, means) = (column(rng), column(rng), column(rng));
        b.fp_load(sums, 0, 8, false).load(counts, 0, 8, true).fp(FpOp::Convert, 1);
        let empty = rng.range(100, 400);
        b.skip(1, Pattern::Bits { bits: rng.bits(64, empty), len: 64 }).fp(FpOp::Div, 1);
        b.store(means, 0, 8).int(1);
        b.fp_values(FpValues { zero_divisors: true, ..FpValues::default() });
        groups
    })
}

/// Salt of the generator of `fp`'s audio filters (`Rng::side`).
const FILTER_SIDE: u64 = 0x6669_6c74_6572_5f31;

/// An audio filter (a biquad section: `y = b0 x + b1 x1 + b2 x2 - a1 y1 - a2 y2`) over
/// a block of 256-2,048 16-bit PCM samples whose input has gone quiet. Each sample is
/// loaded and moved to the FP side (Itanium `setf`, then `fcvt.xf`), filtered, and
/// converted back (`fcvt.fx`, `getf`) for the clamp to 16 bits (a compare and a
/// select) and the store. The filter's state decays towards zero, and in the last 4-15
/// of every 64 samples its results are subnormal, the classic slowdown of audio code
/// on silence. The second process's program (and every other one after it) is built
/// with flush-to-zero (a compiler's fast-math options), which makes those results
/// zero.
fn filter(rng: &mut Rng, t: Thread) -> Vec<Phase> {
    called(rng, t, |rng, b| {
        let n = 1 << rng.range(8, 11);
        let samples = buffer(rng, &HEAP, 2 * n * SAMPLE);
        let block = DataStream { stride: SAMPLE as i64, footprint: n * SAMPLE, ..DataStream::fixed(samples, Memory::Cacheable) };
        let input = b.stream(block);
        let output = b.stream(DataStream { base: samples + n * SAMPLE, ..block });
        b.load(input, 0, SAMPLE as u8, true).fp(FpOp::Convert, 2).fp(FpOp::Mul, 1).fp(FpOp::Fma, 4);
        b.fp(FpOp::Convert, 1).fp(FpOp::ToInt, 1).int(2).store(output, 0, SAMPLE as u8).int(1);
        let quiet = rng.range(4, 15);
        b.fp_values(FpValues {
            tiny: Pattern::Bits { bits: u64::MAX << (64 - quiet), len: 64 },
            flush: t.index % 2 == 1,
            zero_divisors: false,
        });
        n
    })
}

/// Bytes of a 16-bit PCM sample.
const SAMPLE: u64 = 2;

/// Salt of `fp`'s side generator (`Rng::side`).
const FP_SIDE: u64 = 0x6670_5f6b_6572_6e31;

/// A kernel's call, its loop, and its return: the three phases of a call to a
/// function with a large frame (`KERNEL_FRAMES`) whose loop `kernel` builds.
fn called(rng: &mut Rng, t: Thread, kernel: impl FnOnce(&mut Rng, &mut Body) -> u64) -> Vec<Phase> {
    let mut caller = Body::new(Privilege::USER, t.context, code_address(rng, &COMPUTE_TEXT));
    caller.int(rng.range(2, 6));
    let back = caller.ip() + INSN;
    let entry = code_address(rng, &COMPUTE_TEXT);
    caller.call(entry, rng.range(*KERNEL_FRAMES.start(), *KERNEL_FRAMES.end()) as u8);
    let mut b = Body::new(Privilege::USER, t.context, entry);
    let iterations = kernel(rng, &mut b);
    let body = b.close_loop(iterations);
    let mut leave = Body::new(Privilege::USER, t.context, body.entry + body.body.len() as u64 * INSN);
    leave.return_to(back).int(rng.range(1, 4));
    vec![caller.once(), body, leave.once()]
}

/// An in-place update through two pointers the compiler cannot tell apart
/// (`add(a + 1, a, n)`: `dst[i] = src[i] + c`, here with `dst` one element past
/// `src`), of integers or doubles, unrolled by two: the second element's load reads
/// what the first element's store just wrote. An Itanium compiler advances the loads
/// above the stores and checks them (ERRATA MMC33), and every second check fails.
fn aliased(rng: &mut Rng, t: Thread) -> Vec<Phase> {
    called(rng, t, |rng, b| {
        let n = 1 << rng.range(10, 16);
        let base = buffer(rng, &HEAP, (n + 1) * DOUBLE);
        let from = DataStream {
            base,
            stride: 2 * DOUBLE as i64,
            footprint: n * DOUBLE,
            memory: Memory::Cacheable,
            page: PAGE,
            shared: false,
            nullable: false,
            fresh: false,
        };
        let src = b.stream(from);
        let dst = b.stream(DataStream { base: base + DOUBLE, ..from });
        let float = rng.chance(500);
        for e in 0..2 {
            let offset = (e * DOUBLE) as u32;
            if float {
                b.fp_load(src, offset, 8, true).fp(FpOp::Add, 1);
            } else {
                b.load(src, offset, 8, true).int(1);
            }
            b.store(dst, offset, 8);
        }
        b.int(1);
        n / 2
    })
}

/// One kernel of dense linear algebra on an `n` x `n` matrix of doubles (n a power of
/// two, 64-512, as blocked codes choose), called with a large frame and returning: a
/// matrix multiply's inner product (a row of A against a column of B: a unit-stride
/// and an `n`-stride stream), a daxpy (`y += a * x`, with software prefetches), or an
/// LU elimination step (a divide by the pivot, then row updates).
fn dense(rng: &mut Rng, t: Thread) -> Vec<Phase> {
    let n = 1 << rng.range(6, 9);
    called(rng, t, |rng, b| {
        let row = |base: u64| DataStream {
            base,
            stride: DOUBLE as i64,
            footprint: n * n * DOUBLE,
            memory: Memory::Cacheable,
            page: PAGE,
            shared: false,
            nullable: false,
            fresh: false,
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
                // Prefetches four lines ahead, as compilers schedule them: x for
                // reading, y for writing.
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
        n * n / 4
    })
}

/// Small dense products in batches, too many loads for the ALAT: each iteration
/// transforms one block, an 8 x 8 block of 16-bit coefficients by an integer inverse
/// DCT (a JPEG or MPEG decoder: its 64 coefficients loaded, eight rows of integer
/// work, 64 results stored) or a 6-vector of doubles by its 6 x 6 matrix (a finite-
/// element code's element matrices: 42 loads, 36 multiply-adds, 6 results stored).
/// The output is another buffer, so an Itanium compiler advances the loads above the
/// stores of the iteration before, and those past the ALAT's 32 entries displace the
/// first (ALAT_CAPACITY_MISS, ERRATA MMC33).
fn blocks(rng: &mut Rng, t: Thread) -> Vec<Phase> {
    called(rng, t, |rng, b| {
        let count = 1 << rng.range(8, 14);
        let stream = |base: u64, bytes: u64| DataStream {
            base,
            stride: bytes as i64,
            footprint: count * bytes,
            memory: Memory::Cacheable,
            page: PAGE,
            shared: false,
            nullable: false,
            fresh: false,
        };
        if rng.chance(500) {
            const BLOCK: u64 = 64 * 2;
            let input = b.stream(stream(buffer(rng, &HEAP, count * BLOCK), BLOCK));
            let output = b.stream(stream(buffer(rng, &HEAP, count * BLOCK), BLOCK));
            for c in 0..64 {
                b.load(input, 2 * c, 2, false);
            }
            for r in 0..8 {
                b.int(12);
                for c in 0..8 {
                    b.store(output, 16 * r + 2 * c, 2);
                }
            }
        } else {
            const MATRIX: u64 = 36 * DOUBLE;
            const VECTOR: u64 = 6 * DOUBLE;
            let matrices = b.stream(stream(buffer(rng, &HEAP, count * MATRIX), MATRIX));
            let vectors = b.stream(stream(buffer(rng, &HEAP, count * VECTOR), VECTOR));
            let results = b.stream(stream(buffer(rng, &HEAP, count * VECTOR), VECTOR));
            for i in 0..6 {
                b.fp_load(vectors, 8 * i, 8, false);
            }
            for r in 0..6 {
                for c in 0..6 {
                    b.fp_load(matrices, 8 * (6 * r + c), 8, false).fp(FpOp::Fma, 1);
                }
                b.store(results, 8 * r, 8);
            }
        }
        b.int(2);
        count
    })
}

/// lmbench-style memory latency: a loop of loads, each of which the next needs,
/// walking a buffer of 4 KB to 64 MB with a 64-256-byte stride, lap after lap. The
/// time per load shows each level of the memory system. Each step is the compiled
/// walk's four instructions (`crates/cli/benches/programs/chase.c` under GCC: load,
/// scale the index, count down, branch), so the load is a quarter of them.
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
        nullable: false,
        fresh: false,
    });
    b.load(chain, 0, 4, true).int(2);
    b.close_loop((size / stride as u64) * rng.range(2, 8))
}
