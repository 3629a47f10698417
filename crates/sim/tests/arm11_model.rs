//! The ARM11 model, driven only through MRC/MCR, one rule of ARM DAI 0195B per test.

use pmukit_arch::arm11::{self, CCNT_CP, PMCR_CP, PMN0_CP, PMN1_CP};
use pmukit_sim::engine::{self, Exit};
use pmukit_sim::models::arm11::Arm11Pmu;
use pmukit_sim::stream::{Block, Cursor, Signal, Span};

/// A stream repeating one span forever.
fn stream(span: Span) -> Cursor {
    Cursor::new(Box::new(std::iter::repeat(Block { body: vec![span], repeat: 1_000_000 })))
}

/// Instructions every cycle, a branch every cycle and both ETMEXTOUT lines.
fn busy() -> Cursor {
    stream(
        Span::new(10, 0x8000)
            .with(Signal::Instructions, 1)
            .with(Signal::Branches, 1)
            .with(Signal::EtmExtOut0, 1)
            .with(Signal::EtmExtOut1, 1)
            .with(Signal::ITlbMisses, 1)
            .with(Signal::FiqDisabledCycles, 1),
    )
}

fn pmcr(fields: &[(&str, u64)]) -> u32 {
    arm11::PMCR.for_model("arm1156").encode(fields).unwrap() as u32
}

fn run(pmu: &mut Arm11Pmu, cursor: &mut Cursor, cycles: u64) -> (u64, Exit) {
    engine::run(pmu, cursor, cycles)
}

fn pmu_with(model: &'static str, value: u32) -> Arm11Pmu {
    let mut pmu = Arm11Pmu::new(model);
    pmu.mcr(PMCR_CP, value).unwrap();
    pmu
}

#[test]
fn s1_ccnt_counts_every_cycle() {
    let mut pmu = pmu_with("arm1176", pmcr(&[("E", 1)]));
    run(&mut pmu, &mut busy(), 1000);
    assert_eq!(pmu.mrc(CCNT_CP).unwrap(), 1000);
}

#[test]
fn table_1_d_makes_ccnt_count_every_64th_cycle() {
    let mut pmu = pmu_with("arm1176", pmcr(&[("E", 1), ("D", 1)]));
    let mut s = busy();
    run(&mut pmu, &mut s, 63);
    assert_eq!(pmu.mrc(CCNT_CP).unwrap(), 0, "63 cycles: not yet");
    run(&mut pmu, &mut s, 1);
    assert_eq!(pmu.mrc(CCNT_CP).unwrap(), 1, "the 64th cycle");
    run(&mut pmu, &mut s, 64 * 99);
    assert_eq!(pmu.mrc(CCNT_CP).unwrap(), 100);
}

#[test]
fn table_1_e_clear_stops_all_counters() {
    let mut pmu = pmu_with("arm1176", pmcr(&[("EvtCount0", 7)]));
    run(&mut pmu, &mut busy(), 1000);
    assert_eq!([pmu.mrc(CCNT_CP).unwrap(), pmu.mrc(PMN0_CP).unwrap()], [0, 0]);
}

#[test]
fn table_1_evtcount_selects_what_pmn0_and_pmn1_count() {
    let mut pmu = pmu_with("arm1176", pmcr(&[("E", 1), ("EvtCount0", 0x7), ("EvtCount1", 0x22)]));
    run(&mut pmu, &mut busy(), 1000);
    assert_eq!(pmu.mrc(PMN0_CP).unwrap(), 1000, "0x7 instructions executed");
    assert_eq!(pmu.mrc(PMN1_CP).unwrap(), 2000, "Table 2, 0x22: both ETMEXTOUT lines count two");
}

#[test]
fn s1_counters_are_32_bit_and_wrap_to_zero() {
    let mut pmu = pmu_with("arm1176", pmcr(&[("E", 1), ("EvtCount0", 0x7)]));
    pmu.mcr(PMN0_CP, 0xFFFF_FFF0).unwrap();
    run(&mut pmu, &mut busy(), 0x20);
    assert_eq!(pmu.mrc(PMN0_CP).unwrap(), 0x10);
}

#[test]
fn s1_writing_2_pow_32_minus_n_overflows_after_n_events() {
    let mut pmu = pmu_with("arm1176", pmcr(&[("E", 1), ("EvtCount1", 0x7), ("EC1", 1)]));
    pmu.mcr(PMN1_CP, (1u64 << 32).wrapping_sub(1000) as u32).unwrap();
    let (cycles, exit) = run(&mut pmu, &mut busy(), 10_000);
    assert_eq!((cycles, exit), (1000, Exit::Overflow), "the interrupt stops execution on the overflow cycle");
    assert_eq!(pmu.mrc(PMN1_CP).unwrap(), 0);
}

#[test]
fn table_1_overflow_sets_the_counters_flag() {
    for (counter, flag) in [(CCNT_CP, &arm11::OCC), (PMN0_CP, &arm11::OC0), (PMN1_CP, &arm11::OC1)] {
        let mut pmu = pmu_with("arm1176", pmcr(&[("E", 1), ("EvtCount0", 0x7), ("EvtCount1", 0x7)]));
        pmu.mcr(counter, u32::MAX).unwrap();
        run(&mut pmu, &mut busy(), 1);
        let value = pmu.mrc(PMCR_CP).unwrap() as u64;
        assert_eq!(flag.get(value), 1, "{}", flag.name);
        assert_eq!((arm11::OCC.get(value) + arm11::OC0.get(value) + arm11::OC1.get(value)), 1, "only {}", flag.name);
    }
}

fn overflowed_pmn0(extra: &[(&str, u64)]) -> Arm11Pmu {
    let mut fields = vec![("E", 1), ("EvtCount0", 0x7)];
    fields.extend_from_slice(extra);
    let mut pmu = pmu_with("arm1176", pmcr(&fields));
    pmu.mcr(PMN0_CP, u32::MAX).unwrap();
    run(&mut pmu, &mut busy(), 1);
    pmu
}

#[test]
fn table_1_writing_one_clears_the_flag() {
    let mut pmu = overflowed_pmn0(&[]);
    pmu.mcr(PMCR_CP, pmcr(&[("E", 1), ("EvtCount0", 0x7), ("OC0", 1)])).unwrap();
    assert_eq!(arm11::OC0.get(pmu.mrc(PMCR_CP).unwrap() as u64), 0);
}

#[test]
fn table_1_writing_zero_to_a_flag_has_no_effect() {
    let mut pmu = overflowed_pmn0(&[]);
    pmu.mcr(PMCR_CP, pmcr(&[("E", 1), ("EvtCount0", 0x7)])).unwrap();
    assert_eq!(arm11::OC0.get(pmu.mrc(PMCR_CP).unwrap() as u64), 1);
}

#[test]
fn table_1_e_must_be_set_to_clear_the_interrupt_request() {
    let mut pmu = overflowed_pmn0(&[("EC0", 1)]);
    pmu.mcr(PMCR_CP, pmcr(&[("EvtCount0", 0x7), ("EC0", 1), ("OC0", 1)])).unwrap();
    assert_eq!(arm11::OC0.get(pmu.mrc(PMCR_CP).unwrap() as u64), 1, "E clear: flag stays");
    assert!(pmu.irq_asserted());
    pmu.mcr(PMCR_CP, pmcr(&[("E", 1), ("EvtCount0", 0x7), ("EC0", 1), ("OC0", 1)])).unwrap();
    assert!(!pmu.irq_asserted());
}

#[test]
fn s1_npmuirq_is_asserted_while_a_flag_and_its_enable_are_set() {
    assert!(!overflowed_pmn0(&[]).irq_asserted(), "flag without enable");
    let mut pmu = overflowed_pmn0(&[("EC0", 1)]);
    assert!(pmu.irq_asserted());
    // Disabling the enable deasserts the line; the flag remains.
    pmu.mcr(PMCR_CP, pmcr(&[("E", 1), ("EvtCount0", 0x7)])).unwrap();
    assert!(!pmu.irq_asserted());
    assert_eq!(arm11::OC0.get(pmu.mrc(PMCR_CP).unwrap() as u64), 1);
}

#[test]
fn s1_enable_without_overflow_raises_no_interrupt() {
    let mut pmu = pmu_with("arm1176", pmcr(&[("E", 1), ("EvtCount0", 0x7), ("ECC", 1), ("EC0", 1), ("EC1", 1)]));
    run(&mut pmu, &mut busy(), 1000);
    assert!(!pmu.irq_asserted());
}

#[test]
fn s1_npmufiq_on_arm1156_follows_flag_and_fc_bit() {
    let mut pmu = pmu_with("arm1156", pmcr(&[("E", 1), ("EvtCount0", 0x7), ("FC0", 1)]));
    pmu.mcr(PMN0_CP, u32::MAX).unwrap();
    let (_, exit) = run(&mut pmu, &mut busy(), 10);
    assert_eq!(exit, Exit::Overflow);
    assert!(pmu.fiq_asserted());
    assert!(!pmu.irq_asserted(), "EC0 clear: no IRQ");
}

#[test]
fn table_1_fc_bits_are_sbz_and_raise_no_fiq_on_arm1176() {
    let mut pmu = pmu_with("arm1176", pmcr(&[("E", 1), ("EvtCount0", 0x7), ("FC0", 1)]));
    pmu.mcr(PMN0_CP, u32::MAX).unwrap();
    let (_, exit) = run(&mut pmu, &mut busy(), 10);
    assert_eq!(exit, Exit::Budget);
    assert!(!pmu.fiq_asserted());
    assert_eq!(pmu.mrc(PMCR_CP).unwrap() & 0x7000_0000, 0, "SBZ bits are not stored");
    assert!(pmu.unpredictable().iter().any(|u| u.contains("FC0")), "{:?}", pmu.unpredictable());
}

#[test]
fn table_1_p_resets_both_event_counters_not_ccnt() {
    let mut pmu = pmu_with("arm1176", pmcr(&[("E", 1), ("EvtCount0", 7), ("EvtCount1", 7)]));
    run(&mut pmu, &mut busy(), 100);
    pmu.mcr(PMCR_CP, pmcr(&[("E", 1), ("EvtCount0", 7), ("EvtCount1", 7), ("P", 1)])).unwrap();
    assert_eq!([pmu.mrc(PMN0_CP).unwrap(), pmu.mrc(PMN1_CP).unwrap(), pmu.mrc(CCNT_CP).unwrap()], [0, 0, 100]);
}

#[test]
fn table_1_c_resets_ccnt_only() {
    let mut pmu = pmu_with("arm1176", pmcr(&[("E", 1), ("EvtCount0", 7)]));
    run(&mut pmu, &mut busy(), 100);
    pmu.mcr(PMCR_CP, pmcr(&[("E", 1), ("EvtCount0", 7), ("C", 1)])).unwrap();
    assert_eq!([pmu.mrc(CCNT_CP).unwrap(), pmu.mrc(PMN0_CP).unwrap()], [0, 100]);
}

#[test]
fn table_1_p_and_c_read_as_zero() {
    let pmu = pmu_with("arm1176", pmcr(&[("E", 1), ("P", 1), ("C", 1)]));
    assert_eq!(pmu.mrc(PMCR_CP).unwrap(), 1);
}

#[test]
fn s2_pmcr_reads_back_what_was_written() {
    let value = pmcr(&[("E", 1), ("EvtCount0", 0x26), ("EvtCount1", 0xFF), ("X", 1), ("ECC", 1), ("D", 1)]);
    assert_eq!(pmu_with("arm1176", value).mrc(PMCR_CP).unwrap(), value);
}

#[test]
fn s1_x_exports_events_on_evntbus() {
    let mut pmu = pmu_with("arm1176", pmcr(&[("X", 1)]));
    run(&mut pmu, &mut busy(), 100);
    assert_eq!(pmu.evntbus().get(&0x07), Some(&100));
    assert_eq!(pmu.evntbus().get(&0x22), Some(&200));
    let mut quiet = pmu_with("arm1176", pmcr(&[("E", 1)]));
    run(&mut quiet, &mut busy(), 100);
    assert!(quiet.evntbus().is_empty(), "X clear: nothing exported");
}

#[test]
fn table_2_reserved_event_numbers_are_flagged_unpredictable_and_count_nothing() {
    let mut pmu = pmu_with("arm1176", pmcr(&[("E", 1), ("EvtCount0", 0x8)]));
    run(&mut pmu, &mut busy(), 100);
    assert_eq!(pmu.mrc(PMN0_CP).unwrap(), 0);
    assert!(pmu.unpredictable().iter().any(|u| u.contains("0x08") && u.contains("Unpredictable")), "{:?}", pmu.unpredictable());
}

#[test]
fn table_2_arm1156_only_events_are_reserved_on_other_cores() {
    let mut pmu = pmu_with("arm1136", pmcr(&[("E", 1), ("EvtCount0", 0x13)]));
    run(&mut pmu, &mut busy(), 100);
    assert_eq!(pmu.mrc(PMN0_CP).unwrap(), 0);
    assert_eq!(pmu.unpredictable().len(), 1);
    let mut on_1156 = pmu_with("arm1156", pmcr(&[("E", 1), ("EvtCount0", 0x13)]));
    run(&mut on_1156, &mut busy(), 100);
    assert_eq!(on_1156.mrc(PMN0_CP).unwrap(), 100);
}

#[test]
fn table_2_events_unused_on_arm1156_count_nothing_there() {
    let mut pmu = pmu_with("arm1156", pmcr(&[("E", 1), ("EvtCount0", 0x3)]));
    run(&mut pmu, &mut busy(), 100);
    assert_eq!(pmu.mrc(PMN0_CP).unwrap(), 0);
    assert!(pmu.unpredictable().is_empty(), "unused, not reserved");
    let mut on_1176 = pmu_with("arm1176", pmcr(&[("E", 1), ("EvtCount0", 0x3)]));
    run(&mut on_1176, &mut busy(), 100);
    assert_eq!(on_1176.mrc(PMN0_CP).unwrap(), 100);
}

#[test]
fn s2_other_cp15_c15_registers_are_undefined_instructions() {
    let mut pmu = Arm11Pmu::new("arm1176");
    let bad = arm11::Cp15 { opc1: 0, crn: 15, crm: 12, opc2: 4 };
    assert!(pmu.mrc(bad).is_err());
    assert!(pmu.mcr(bad, 1).is_err());
    assert_eq!(pmu.mrc(PMCR_CP).unwrap(), 0, "state unchanged");
}

#[test]
fn table_1_reset_state_is_all_zero() {
    let pmu = Arm11Pmu::new("arm1156");
    for cp in [PMCR_CP, CCNT_CP, PMN0_CP, PMN1_CP] {
        assert_eq!(pmu.mrc(cp).unwrap(), 0);
    }
    assert!(!pmu.irq_asserted() && !pmu.fiq_asserted());
}

#[test]
fn ccnt_with_divider_overflows_after_2_pow_38_cycles() {
    let mut pmu = pmu_with("arm1176", pmcr(&[("E", 1), ("D", 1), ("ECC", 1)]));
    pmu.mcr(CCNT_CP, u32::MAX).unwrap();
    let (cycles, exit) = run(&mut pmu, &mut busy(), 1000);
    assert_eq!((cycles, exit), (64, Exit::Overflow));
    assert_eq!(pmu.mrc(CCNT_CP).unwrap(), 0);
}

#[derive(Debug, Clone)]
enum Op {
    Write(u8, u32),
    Run(u16),
}

fn op() -> impl proptest::strategy::Strategy<Value = Op> {
    use proptest::prelude::*;
    prop_oneof![(0u8..5, any::<u32>()).prop_map(|(r, v)| Op::Write(r, v)), (1u16..2000).prop_map(Op::Run)]
}

proptest::proptest! {
    /// Any sequence of MCR writes (including to an unimplemented register) and runs
    /// leaves PMCR with its should-be-zero and action bits clear, and never panics.
    #[test]
    fn any_register_traffic_keeps_reserved_bits_clear(model in 0usize..3, ops in proptest::collection::vec(op(), 1..40)) {
        let core = ["arm1136", "arm1156", "arm1176"][model];
        let mut pmu = Arm11Pmu::new(core);
        let mut s = busy();
        let regs = [PMCR_CP, CCNT_CP, PMN0_CP, PMN1_CP, arm11::Cp15 { opc1: 0, crn: 15, crm: 12, opc2: 7 }];
        for op in ops {
            match op {
                Op::Write(r, v) => {
                    let before = pmu.mrc(PMCR_CP).unwrap();
                    let undefined = pmu.mcr(regs[r as usize], v).is_err();
                    if undefined {
                        proptest::prop_assert_eq!(pmu.mrc(PMCR_CP).unwrap(), before, "an undefined access changes nothing");
                    }
                }
                Op::Run(n) => {
                    run(&mut pmu, &mut s, n as u64);
                }
            }
            let pmcr = pmu.mrc(PMCR_CP).unwrap();
            let reserved = if core == "arm1156" { 0x8000_0086 } else { 0xF000_0086 };
            proptest::prop_assert_eq!(pmcr & reserved, 0, "PMCR {:#x}", pmcr);
        }
    }
}

/// Issue 10: an emulator's guest may repeat an unpredictable write for ever; the model
/// keeps the first reports and counts the rest instead of growing without bound.
#[test]
fn repeated_unpredictable_writes_are_counted_not_kept() {
    let mut pmu = Arm11Pmu::new("arm1176");
    for _ in 0..100_000 {
        pmu.mcr(PMCR_CP, 0x8000_0000).unwrap();
    }
    let reports = pmu.unpredictable();
    assert_eq!(reports.len(), pmukit_sim::models::Reports::KEPT);
    assert_eq!(reports.more(), 100_000 - pmukit_sim::models::Reports::KEPT as u64);
    let notes: Vec<String> = reports.notes().collect();
    assert!(notes.last().unwrap().starts_with("99936 more unpredictable operations"), "{:?}", notes.last());
}

proptest::proptest! {
    /// The model sums a block in one pass (`Counting::grow`, which the engine asks a
    /// model of three counters for): the same sums as each span's rates times its
    /// cycles, for any events, enabled or not, on every core.
    #[test]
    fn a_blocks_growth_is_the_sum_of_its_spans_rates(
        model in proptest::sample::select(vec!["arm1136", "arm1156", "arm1176"]),
        enabled in proptest::bool::ANY,
        codes in (0u64..0x40, 0u64..0x40),
        spans in proptest::collection::vec((1u64..1000, proptest::collection::vec((0usize..Signal::COUNT, 0u8..16), 0..6)), 0..20),
    ) {
        use pmukit_sim::engine::{Counters, Counting};
        let pmu = pmu_with(model, pmcr(&[("E", u64::from(enabled)), ("EvtCount0", codes.0), ("EvtCount1", codes.1)]));
        let body: Vec<Span> = spans
            .into_iter()
            .map(|(cycles, signals)| signals.into_iter().fold(Span::new(cycles, 0x8000), |s, (i, n)| s.with(Signal::ALL[i], n)))
            .collect();
        let mut by = vec![0; pmu.counters()];
        pmu.grow(&body, &mut by);
        let each: Vec<u64> = (0..pmu.counters()).map(|i| body.iter().map(|s| pmu.rate(i, s) * s.cycles).sum()).collect();
        proptest::prop_assert_eq!(by, each);
    }
}
