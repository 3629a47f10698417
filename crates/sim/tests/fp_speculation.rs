//! Floating-point control speculation on Montecito (ERRATA MMC80): the divide that
//! begins a block a skip passes over is hoisted above the skip into status field 2,
//! and the `fchkf.s2` left in its place fails when sf2 holds a flag sf0 lacks (Itanium
//! SDM Vol. 3 `fchkf`, every trap disabled); the recovery code divides again in sf0
//! and clears sf2.

mod common;

use pmukit_sim::machine::montecito::MontecitoConfig;
use pmukit_sim::machine::run::Skipping;
use pmukit_sim::machine::{self};
use pmukit_sim::program::{ia64, Access, DataStream, FpOp, FpValues, Memory, Op, Pattern, Phase, Program};
use pmukit_sim::stream::{Signal, Totals, FAILED_CHECK_FCHKF};

const ITERATIONS: u64 = 640;

/// The iterations (mod 64) whose group is empty, which the test passes over: runs of
/// one to eight, and iteration 0, so that the first divide is a skipped one.
const EMPTY: u64 = 0x8F00_0F01_E000_3001;

/// `mean[g] = n[g] != 0 ? sum[g] / n[g] : 0` over `ITERATIONS` groups, `empty` saying
/// which are empty (a set bit: the test skips the divide), with the divisors of the
/// skipped divides zero or not.
fn program(empty: u64, zero_divisors: bool) -> Program {
    let column = |base: u64| DataStream { stride: 8, footprint: 8 * ITERATIONS, ..DataStream::fixed(base, Memory::Cacheable) };
    let at = |stream: u8, use_next: bool| Access { stream, offset: 0, size: 8, use_next };
    let body = vec![
        Op::FpLoad(at(0, false)),
        Op::Load(at(1, true)),
        Op::Fp(FpOp::Convert),
        Op::Skip { over: 1, when: Pattern::Bits { bits: empty, len: 64 } },
        Op::Fp(FpOp::Div),
        Op::Store(at(2, false)),
        Op::Int,
        Op::Branch { target: 0x1_0000, when: Pattern::Loop },
    ];
    let phase = common::phase(body, ITERATIONS, vec![column(0x100_0000), column(0x200_0000), column(0x300_0000)]);
    common::program_of(Phase { fp: FpValues { zero_divisors, ..FpValues::default() }, ..phase })
}

fn run(p: Program, skipping: Skipping) -> Totals {
    Totals::of(machine::montecito(MontecitoConfig::new(1), ia64::compiled(p), skipping), u64::MAX, |_| true)
}

fn skipped(empty: u64, k: u64) -> bool {
    empty >> (k % 64) & 1 == 1
}

/// With zero divisors, every skipped divide raises Z in sf2, which no divide in sf0
/// ever does: the first running block after a skipped one fails its check, and so
/// does the very first running block, whose inexact quotient is the context's first
/// (sf0 has no flag yet). The recovery clears sf2, so a run of blocks fails once. The
/// divide is computed in every iteration, and again by each recovery.
#[test]
fn mmc80_a_divide_hoisted_above_its_zero_test_fails_the_next_check() {
    let failures = (0..ITERATIONS).filter(|&k| !skipped(EMPTY, k) && (k == 0 || skipped(EMPTY, k - 1))).count() as u64;
    assert!(failures > ITERATIONS / 64, "several runs of empty groups a lap");
    for skipping in [Skipping::Off, Skipping::On] {
        let t = run(program(EMPTY, true), skipping);
        assert_eq!(t.get(Signal::FailedChecks), failures * u64::from(FAILED_CHECK_FCHKF), "{skipping:?}");
        // A conversion and a divide an iteration, and a divide a recovery.
        assert_eq!(t.get(Signal::FguCryptoInstructions), 2 * ITERATIONS + failures, "{skipping:?}");
    }
}

/// Without zero divisors, sf2 only ever holds the inexact flag, and the first check
/// gives it to sf0: one failure, the context's first inexact result being a
/// speculated one. A block that always runs fails the same once; one that never runs
/// checks nothing.
#[test]
fn mmc80_only_a_contexts_first_inexact_result_fails_without_zero_divisors() {
    for (empty, failures) in [(EMPTY, 1), (0, 1), (u64::MAX, 0)] {
        let t = run(program(empty, false), Skipping::Off);
        assert_eq!(t.get(Signal::FailedChecks), failures * u64::from(FAILED_CHECK_FCHKF), "{empty:#x}");
    }
}

/// The counts are the SDM's `fchkf` rule applied iteration by iteration: sf2 gathers
/// the flags of every speculated divide (Z when it divides by zero, I otherwise), a
/// running block's check fails when sf2 has a flag sf0 lacks, and the recovery's
/// divide gives sf0 its I.
#[test]
fn mmc80_the_failures_follow_the_sticky_flags() {
    const Z: u8 = 1;
    const I: u8 = 2;
    for empty in [EMPTY, 0x5555_5555_5555_5555, 0xFFFF_0000_FFFF_0000, 1 << 63] {
        let (mut sf0, mut sf2, mut failures) = (0u8, 0u8, 0u64);
        for k in 0..ITERATIONS {
            let skip = skipped(empty, k);
            sf2 |= if skip { Z } else { I };
            if !skip && sf2 & !sf0 != 0 {
                failures += 1;
                sf2 = 0;
                sf0 |= I;
            }
        }
        let t = run(program(empty, true), Skipping::On);
        assert_eq!(t.get(Signal::FailedChecks), failures * u64::from(FAILED_CHECK_FCHKF), "{empty:#x}");
    }
}
