//! Subnormal floating-point results (`program::FpValues`) on every machine: Montecito
//! flushes them or stalls and traps for software assistance (ERRATA MMC53), ARM11's
//! VFP hands them to its support code (MARM13), SPARC's FGU delivers them (MSP28).

mod common;

use pmukit_arch::Catalog;
use pmukit_sim::machine::arm11::{Arm11Config, Arm11Core};
use pmukit_sim::machine::montecito::MontecitoConfig;
use pmukit_sim::machine::run::Skipping;
use pmukit_sim::machine::sparc::{SparcChip, SparcConfig};
use pmukit_sim::machine::{self};
use pmukit_sim::program::{ia64, DataStream, FpOp, FpValues, Memory, Op, Pattern, Phase, PhaseError, Program};
use pmukit_sim::stat::{self, StatOptions};
use pmukit_sim::stream::{Signal, Totals};

const ITERATIONS: u64 = 640;

/// A loop of a multiply and a fused multiply-add whose results are tiny in the last 16
/// of every 64 iterations, with flush-to-zero or without.
fn program(flush: bool, tiny: Pattern) -> Program {
    let body =
        vec![Op::Fp(FpOp::Mul), Op::Fp(FpOp::Fma), Op::Fp(FpOp::Convert), Op::Int, Op::Branch { target: 0x1_0000, when: Pattern::Loop }];
    let phase = common::phase(body, ITERATIONS, vec![DataStream::fixed(0x100_0000, Memory::Cacheable)]);
    common::program_of(Phase { fp: FpValues { tiny, flush, zero_divisors: false }, ..phase })
}

const QUIET: Pattern = Pattern::Bits { bits: 0xFFFF << 48, len: 64 };
/// Arithmetic results that are tiny: two a tiny iteration (a conversion is none).
const TINY: u64 = 2 * 16 * ITERATIONS / 64;

/// Arithmetic operations reading the last iteration's tiny results with a normal
/// result of their own: two in the first iteration after each quiet run but the last,
/// which ends the loop.
const UNSAFE: u64 = 2 * (ITERATIONS / 64 - 1);

fn montecito(p: Program) -> Totals {
    montecito_skipping(p, Skipping::Off)
}

fn montecito_skipping(p: Program, skipping: Skipping) -> Totals {
    Totals::of(machine::montecito(MontecitoConfig::new(1), ia64::compiled(p), skipping), u64::MAX, |_| true)
}

/// MMC61, FP_FALSE_SIRSTALL: "SIR stall is asserted and does not lead to a trap".
/// SIR judges an operation by its operands' exponents (US 5,257,216): the iteration
/// after a quiet run reads the run's subnormal results, stalls `sir_cycles` for each
/// arithmetic operation and traps for none, its results being normal. With
/// flush-to-zero the operands are zeros, which are safe. Exact with skipping on.
#[test]
fn mmc61_an_operation_reading_a_subnormal_operand_stalls_without_a_trap() {
    let cfg = MontecitoConfig::new(1);
    for skipping in [Skipping::Off, Skipping::On] {
        let t = montecito_skipping(program(false, QUIET), skipping);
        assert_eq!((t.get(Signal::FpSirStallsFalse), t.get(Signal::FpSirStallsTrapping)), (UNSAFE, TINY), "{skipping:?}");
        assert_eq!(t.get(Signal::FpuStallCycles), (TINY + UNSAFE) * cfg.sir_cycles, "{skipping:?}");
        let flushed = montecito_skipping(program(true, QUIET), skipping);
        assert_eq!(flushed.get(Signal::FpSirStallsFalse), 0, "{skipping:?}");
    }
}

#[test]
fn mmc53_subnormal_results_flush_to_zero_or_trap_for_software_assist() {
    let cfg = MontecitoConfig::new(1);
    let normal = montecito(program(false, Pattern::Never));
    let flushed = montecito(program(true, QUIET));
    let assisted = montecito(program(false, QUIET));
    assert_eq!((flushed.get(Signal::FpFlushedToZero), flushed.get(Signal::FpSubnormalResults)), (TINY, 0));
    assert_eq!(flushed.cycles, normal.cycles, "flushing costs nothing");
    assert_eq!((assisted.get(Signal::FpFlushedToZero), assisted.get(Signal::FpSubnormalResults)), (0, TINY));
    assert_eq!(assisted.get(Signal::FpSirStallsTrapping), TINY);
    assert_eq!(assisted.get(Signal::FpuStallCycles), (TINY + UNSAFE) * cfg.sir_cycles);
    let trap = cfg.trap_cycles + cfg.fp_assist_cycles;
    // And the loop's text faults in as it first runs (MMC58).
    assert_eq!(assisted.get(Signal::ExceptionFlushCycles), TINY * trap + cfg.trap_cycles + cfg.page_fault_cycles);
    assert!(assisted.cycles >= normal.cycles + TINY * (trap + cfg.sir_cycles), "{} against {}", assisted.cycles, normal.cycles);

    // ARM11: the support code's cycles, without flush-to-zero only.
    let arm = |p| Totals::of(machine::arm11(Arm11Config::new(Arm11Core::Arm1176), p, Skipping::Off), u64::MAX, |_| true);
    let a = Arm11Config::new(Arm11Core::Arm1176);
    let (normal, flushed, assisted) = (arm(program(false, Pattern::Never)), arm(program(true, QUIET)), arm(program(false, QUIET)));
    assert_eq!(flushed.cycles, normal.cycles);
    assert_eq!(assisted.cycles, normal.cycles + TINY * (a.exception_cycles + a.vfp_support_cycles));

    // SPARC: none by default; the key's cycles when set.
    let sparc = |cfg: SparcConfig, p| Totals::of(machine::sparc(cfg, p, Skipping::Off), u64::MAX, |_| true);
    let t4 = SparcConfig::new(SparcChip::T4);
    assert_eq!(sparc(t4.clone(), program(false, QUIET)).cycles, sparc(t4.clone(), program(false, Pattern::Never)).cycles);
    let slow = SparcConfig { subnormal_cycles: 100, ..t4.clone() };
    let extra = sparc(slow.clone(), program(false, QUIET)).cycles - sparc(slow, program(false, Pattern::Never)).cycles;
    assert_eq!(extra, TINY * 100);
}

/// The PMU counts the signals: FP_FLUSH_TO_ZERO's two masks, FP_TRUE_SIRSTALL,
/// FP_FALSE_SIRSTALL and BE_L1D_FPU_BUBBLE.FPU on the `fp` workload, whose second
/// process flushes.
#[test]
fn the_fp_workloads_audio_filters_count_on_montecito() {
    let cat = Catalog::builtin();
    let count = |event: &str, threads: usize| {
        let sel = cat.resolve(event, "montecito").unwrap();
        let opts = StatOptions { workload: "fp".into(), seed: 5, cycles: 10_000_000, threads: Some(threads), ..StatOptions::default() };
        stat::stat(&cat, std::slice::from_ref(&sel), &opts, &mut |_| {}).unwrap().events[0].count.unwrap()
    };
    assert!(count("FP_FLUSH_TO_ZERO.FTZ_Real", 2) > 0);
    assert_eq!(count("FP_FLUSH_TO_ZERO.FTZ_Real", 1), 0, "one process, built without flush-to-zero");
    let poss = count("FP_FLUSH_TO_ZERO.FTZ_Poss", 1);
    assert!(poss > 0);
    assert_eq!(count("FP_TRUE_SIRSTALL", 1), poss);
    // The iterations after a quiet run stall too, and trap for nothing (MMC61).
    let unsafe_operands = count("FP_FALSE_SIRSTALL", 1);
    assert!(unsafe_operands > 0);
    assert_eq!(count("BE_L1D_FPU_BUBBLE.FPU", 1), (poss + unsafe_operands) * MontecitoConfig::new(1).sir_cycles);
}

#[test]
fn a_values_pattern_must_have_a_length_of_1_to_64() {
    let mut phase = common::phase(vec![Op::Fp(FpOp::Add)], 1, Vec::new());
    phase.fp.tiny = Pattern::Bits { bits: 1, len: 65 };
    assert_eq!(phase.check(), Err(PhaseError::FpPatternLength { len: 65 }));
    phase.fp.tiny = Pattern::Bits { bits: 1, len: 64 };
    assert_eq!(phase.check(), Ok(()));
}
