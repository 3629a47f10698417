//! Issue 10: every driver keeps exact 64-bit virtual counts across any number of
//! hardware overflows, for every counter width the PMUs have: 31 bits (the T4 and KT
//! DRAM counters, TABLES 10-5/10-6 and KT §2), 32 bits (ARM11 PMN0/1 and CCNT, §1;
//! T4 PIC, §10.3; KT pic0), 38 bits (ARM11 CCNT with its divider of 64, PMCR.D) and
//! 47 bits (Montecito PMD4-15, Table 3-7). Each case counts at least 2^40 events, at
//! a random rate, split into random run lengths, and must equal rate × cycles.

use pmukit_arch::{encode_set, Catalog};
use pmukit_sim::drivers::arm11::Arm11Driver;
use pmukit_sim::drivers::kt::KtDriver;
use pmukit_sim::drivers::montecito::MontecitoDriver;
use pmukit_sim::drivers::t4::T4Driver;
use pmukit_sim::drivers::{totals, Runs};
use pmukit_sim::models::kt::KtConfig;
use pmukit_sim::stream::{Block, Cursor, MemRef, Signal, Span};
use proptest::prelude::*;

/// One counter width and how to drive it.
#[derive(Debug, Clone, Copy)]
enum Case {
    /// arm1176 INSTR_EXEC in PMN0/PMN1: 32 bits.
    Arm11Pmn,
    /// arm1176 CPU_CYCLES in CCNT: 32 bits.
    Arm11Ccnt,
    /// arm1176 CPU_CYCLES:d: CCNT counts every 64th cycle, 38 bits of cycles.
    Arm11CcntDivided,
    /// sparc-t4 INSTR.ALL:u in a PIC: 32 bits, precise overflow traps.
    T4Pic,
    /// sparc-t4-dram READ_QUEUE_LATENCY: 31 bits, a sticky bit and no interrupt.
    T4Dram,
    /// sparc-kt L2_MISSES in pic0: 32 bits, polled.
    KtPic,
    /// sparc-kt-dram ALL_READS: 31 bits, polled.
    KtDram,
    /// montecito-st IA64_INST_RETIRED in a PMD: 47 bits.
    Montecito,
}

const CASES: [Case; 8] =
    [Case::Arm11Pmn, Case::Arm11Ccnt, Case::Arm11CcntDivided, Case::T4Pic, Case::T4Dram, Case::KtPic, Case::KtDram, Case::Montecito];

/// The count a run must give: `(rate, cycles) -> events`.
type Expect = fn(u64, u64) -> u64;

/// The driver, the event's PMU and name, the span of the stream (repeated), and the
/// count `cycles` cycles of it must give.
fn setup(case: Case, rate: u8) -> (Box<dyn Runs>, &'static str, &'static str, Span, Expect) {
    let per_cycle = |signal, r| Span::new(1000, 0x1_0000).with(signal, r);
    let reads = |r| {
        let mut span = per_cycle(Signal::MemoryReads, r);
        span.mem = Some(MemRef { addr: 0, stride: 0, size: 64, write: false });
        span
    };
    let cat = Catalog::builtin();
    let t4 = || Box::new(T4Driver::new(cat.pmu("sparc-t4").unwrap(), 8)) as Box<dyn Runs>;
    let kt = || Box::new(KtDriver::new(KtConfig::default(), 8).unwrap()) as Box<dyn Runs>;
    match case {
        Case::Arm11Pmn => {
            (Box::new(Arm11Driver::new("arm1176")), "arm1176", "INSTR_EXEC", per_cycle(Signal::Instructions, rate), |r, c| r * c)
        }
        Case::Arm11Ccnt => (Box::new(Arm11Driver::new("arm1176")), "arm1176", "CPU_CYCLES", Span::new(1000, 0x1_0000), |_, c| c),
        Case::Arm11CcntDivided => {
            (Box::new(Arm11Driver::new("arm1176")), "arm1176", "CPU_CYCLES:d", Span::new(1000, 0x1_0000), |_, c| c / 64)
        }
        Case::T4Pic => (t4(), "sparc-t4", "INSTR.ALL:u", per_cycle(Signal::Instructions, rate), |r, c| r * c),
        Case::T4Dram => {
            // Queue cycles per read: the latency counter grows by thousands a cycle.
            let mut span = reads(rate);
            span.queues.read_cycles = 3000;
            (t4(), "sparc-t4-dram", "READ_QUEUE_LATENCY", span, |_, c| 3000 * c)
        }
        Case::KtPic => (kt(), "sparc-kt", "L2_MISSES", reads(rate), |r, c| r * c),
        Case::KtDram => (kt(), "sparc-kt-dram", "ALL_READS", reads(rate), |r, c| r * c),
        Case::Montecito => {
            (Box::new(MontecitoDriver::new(1)), "montecito-st", "IA64_INST_RETIRED", per_cycle(Signal::Instructions, rate), |r, c| r * c)
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn counts_are_exact_across_any_number_of_wraps(
        case in 0usize..CASES.len(),
        rate in 1u8..=15,
        // Events counted: 2^40 to 2^43 (2^49 for the 47-bit counters, two wraps).
        events in (1u64 << 40)..(1u64 << 43),
        splits in proptest::collection::vec(1u64..1000, 1..4),
    ) {
        let case = CASES[case];
        // The drivers that poll (every 2^21 cycles on all eight strands) cost time in
        // proportion to cycles: they count 2^40 events at a high rate.
        let polled = matches!(case, Case::T4Pic | Case::KtPic | Case::KtDram);
        let (rate, events) = if polled { (8 + rate % 8, (1 << 40) + events % (1 << 36)) } else { (rate, events) };
        // Montecito retires at most six instructions a cycle (§4.3: its max_inc).
        let rate = if matches!(case, Case::Montecito) { 1 + rate % 6 } else { rate };
        let (mut driver, pmu_name, event, span, expect) = setup(case, rate);
        let cat = Catalog::builtin();
        let pmu = cat.pmu(pmu_name).unwrap();
        let set = encode_set(pmu, &[cat.resolve(event, pmu_name).unwrap()]).unwrap();
        // The count per cycle, to turn the events wanted into cycles.
        let per = expect(u64::from(rate), 1 << 20) as f64 / f64::from(1 << 20);
        let events = if matches!(case, Case::Montecito) { events << 6 } else { events };
        let cycles = ((events as f64 / per) as u64).max(1);
        let mut cursor = Cursor::new(Box::new(std::iter::repeat(Block { body: vec![span], repeat: 1 << 20 })));
        driver.start(&set);
        // The run in pieces, as perf's reads and multiplexing cut it.
        let total: u64 = splits.iter().sum();
        let mut ran = 0;
        for (i, part) in splits.iter().enumerate() {
            let n = if i + 1 == splits.len() { cycles - ran } else { cycles / total * part };
            prop_assert_eq!(driver.run(&mut cursor, n), n);
            ran += n;
        }
        let got = totals(&driver.stop(pmu_name));
        prop_assert_eq!(got, vec![Some(expect(u64::from(rate), cycles))], "{:?} at {} a cycle over {} cycles", case, rate, cycles);
    }
}
