//! Montecito's bypass latencies beyond a load's (Table 2-8): the predicate a divide's
//! frcpa writes (ERRATA MMC10) and a `getf`'s result (MMC54), in the machine's
//! signals and in BE_EXE_BUBBLE's unit masks.

mod common;

use pmukit_arch::Catalog;
use pmukit_sim::machine::montecito::MontecitoConfig;
use pmukit_sim::machine::run::Skipping;
use pmukit_sim::machine::{self};
use pmukit_sim::program::{ia64, DataStream, FpOp, Memory, Op, Pattern};
use pmukit_sim::stat::{self, StatOptions};
use pmukit_sim::stream::{Signal, Totals};

const ITERATIONS: u64 = 500;

/// One thread's run of a loop of `ops`, then an integer operation and the loop branch.
fn run(ops: &[Op]) -> Totals {
    let mut body = ops.to_vec();
    body.extend([Op::Int, Op::Branch { target: 0x1_0000, when: Pattern::Loop }]);
    let phase = common::phase(body, ITERATIONS, vec![DataStream::fixed(0x100_0000, Memory::Cacheable)]);
    let program = ia64::compiled(common::program_of(phase));
    Totals::of(machine::montecito(MontecitoConfig::new(1), program, Skipping::Off), u64::MAX, |_| true)
}

/// One counter's count of `event` on the `fp` workload, one thread, seed 3.
fn count(event: &str) -> u64 {
    let cat = Catalog::builtin();
    let sel = cat.resolve(event, "montecito").unwrap();
    let opts = StatOptions { workload: "fp".into(), seed: 3, cycles: 10_000_000, threads: Some(1), ..StatOptions::default() };
    stat::stat(&cat, std::slice::from_ref(&sel), &opts, &mut |_| {}).unwrap().events[0].count.unwrap()
}

/// Table 2-8: frcpa's predicate qualifies the divide's next step 2 cycles after it,
/// its result 4: the first cycle after it waits for both, and BE_EXE_BUBBLE counts
/// it under PR and FRALL alike (§4.15: "they all should be counted").
#[test]
fn mmc10_a_divide_waits_one_cycle_for_frcpas_predicate() {
    let cfg = MontecitoConfig::new(1);
    for op in [FpOp::Div, FpOp::Sqrt] {
        let t = run(&[Op::Fp(op)]);
        assert_eq!(t.get(Signal::PrDepStallCycles), ITERATIONS, "{op:?}");
        assert_eq!(t.get(Signal::FrDepStallCycles), ITERATIONS * cfg.fp_divide_cycles, "{op:?}");
    }
    assert_eq!(run(&[Op::Fp(FpOp::Fma)]).get(Signal::PrDepStallCycles), 0, "no predicate to wait for");
    let pr = count("BE_EXE_BUBBLE.PR");
    assert!(pr > 0);
    assert!(count("BE_EXE_BUBBLE.ARCR_PR_CANCEL_BANK") >= pr);
    assert!(count("BE_EXE_BUBBLE.FRALL") >= pr * cfg.fp_divide_cycles, "every PR cycle begins a divide's wait");
}

/// Table 2-8: a `getf` result reaches its ALU consumer 5 cycles after the `getf`
/// issues: the consumer's group waits 4 cycles, GR/GR dependency cycles, which
/// GRALL counts too. A conversion that stays on the FP side has no such wait.
#[test]
fn mmc54_getf_makes_its_consumer_wait_table_2_8s_latency() {
    let to_int = run(&[Op::Fp(FpOp::Convert), Op::Fp(FpOp::ToInt)]);
    let converted = run(&[Op::Fp(FpOp::Convert), Op::Fp(FpOp::Convert)]);
    assert_eq!(to_int.get(Signal::GrGrStallCycles), 4 * ITERATIONS);
    assert_eq!(converted.get(Signal::GrGrStallCycles), 0);
    assert!(to_int.cycles >= converted.cycles + 4 * ITERATIONS, "{} against {}", to_int.cycles, converted.cycles);
    // §4.15 FP_OPS_RETIRED: its weights name `fcvt.fx` (1 op) and not `getf`.
    assert_eq!(to_int.get(Signal::FguCryptoInstructions) + ITERATIONS, converted.get(Signal::FguCryptoInstructions));
    // `getf` is an M-unit instruction: the bundles give it an M slot.
    assert_eq!(ia64::units(&Op::Fp(FpOp::ToInt)), &[ia64::Unit::M]);
    let grgr = count("BE_EXE_BUBBLE.GRGR");
    assert!(grgr > 0 && grgr.is_multiple_of(4), "{grgr}: four cycles a getf");
    assert!(count("BE_EXE_BUBBLE.GRALL") > grgr, "GRALL counts the loads' waits too");
}
