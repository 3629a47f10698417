//! A running program's phases (`trace::Maker::running`, the QEMU plugin's) count as
//! the same instructions made into a trace's phases (`Maker::new`): every machine that
//! runs programs gives the same totals of every signal, though a running program's
//! data references share a stream per 4 GB where a trace's have one per address, and
//! its phases end elsewhere (at 2,048 instructions, never at the 239th address).

use pmukit_sim::machine::arm11::{Arm11Config, Arm11Core};
use pmukit_sim::machine::run::Skipping;
use pmukit_sim::machine::sparc::{SparcChip, SparcConfig};
use pmukit_sim::machine::{self};
use pmukit_sim::program::trace::{Kind, Maker, MemKind, Record};
use pmukit_sim::program::{FpOp, Op, Phase, Program};
use pmukit_sim::stream::{Privilege, Totals};
use proptest::prelude::*;

fn program(phases: Vec<Phase>) -> Program {
    Program { threads: vec![Box::new(phases.into_iter())], timer: None }
}

fn phases(mut maker: Maker, records: &[Record]) -> Vec<Phase> {
    let mut phases: Vec<Phase> = records.iter().filter_map(|&r| maker.push(r)).collect();
    phases.extend(maker.take());
    phases
}

/// Every signal's total on each machine that runs programs.
fn totals(phases: &[Phase]) -> Vec<Totals> {
    let mut all = Vec::new();
    for core in [Arm11Core::Arm1176, Arm11Core::Arm1136] {
        all.push(Totals::of(machine::arm11(Arm11Config::new(core), program(phases.to_vec()), Skipping::On), u64::MAX, |_| true));
    }
    for chip in [SparcChip::T4, SparcChip::Kt, SparcChip::Niagara] {
        all.push(Totals::of(machine::sparc(SparcConfig::new(chip), program(phases.to_vec()), Skipping::On), u64::MAX, |_| true));
    }
    all
}

/// A data address: in the low 4 GB most (32-bit ARM, and SPARC's heap), in the next
/// window and at the top of the address space (SPARC's stack) some, and from runs of
/// thousands of distinct addresses, which end a trace's phases.
fn address() -> impl Strategy<Value = u64> {
    prop_oneof![
        4 => (0u64..4096).prop_map(|i| 0x4000_0000 + 8 * i),
        2 => (0u64..64).prop_map(|i| 0x1_0000 + 4 * i),
        1 => (0u64..64).prop_map(|i| 0x1_0000_0000 + 64 * i),
        1 => (0u64..64).prop_map(|i| 0x7ff_ffff_f000 - 8 * i),
        1 => (0u64..16).prop_map(|i| 0xffff_fff0 + i),
    ]
}

/// What an instruction does; where control goes is decided in `records`.
#[derive(Debug, Clone, Copy)]
enum Step {
    Plain(Op),
    Mem(MemKind, u64, u8),
    Branch(bool),
    Call,
    Return,
    Jump,
}

fn step() -> impl Strategy<Value = Step> {
    // The kinds a running program's accesses make (`guest::memory`): QEMU reports no
    // access for a prefetch, and SPARC's machine tells a trace's prefetches for writes
    // by the stores to their stream, which only a trace's streams can answer.
    let kind = prop_oneof![
        Just(MemKind::Load),
        Just(MemKind::Store),
        Just(MemKind::FpLoad),
        Just(MemKind::Atomic),
        Just(MemKind::BlockLoad),
        Just(MemKind::BlockStore),
    ];
    prop_oneof![
        6 => prop_oneof![Just(Op::Int), Just(Op::Fp(FpOp::Add)), Just(Op::Fp(FpOp::Div)), Just(Op::Barrier)].prop_map(Step::Plain),
        5 => (kind, address(), prop_oneof![Just(1u8), Just(4), Just(8), Just(32)]).prop_map(|(k, a, b)| Step::Mem(k, a, b)),
        3 => any::<bool>().prop_map(Step::Branch),
        1 => Just(Step::Call),
        1 => Just(Step::Return),
        1 => Just(Step::Jump),
    ]
}

/// The steps as one thread's records, code in a few places (a loop's back edge, a
/// called function, a jump's target) so that the caches and predictors see repeats.
fn records(steps: &[Step]) -> Vec<Record> {
    let targets = [0x8000u64, 0x8400, 0x9000, 0x2_0000];
    let mut ip = 0x8000u64;
    steps
        .iter()
        .enumerate()
        .map(|(i, &s)| {
            let target = targets[i % targets.len()];
            let (op, next) = match s {
                Step::Plain(op) => (Kind::Plain(op), ip + 4),
                Step::Mem(kind, at, bytes) => (Kind::Mem(kind, at, bytes), ip + 4),
                Step::Branch(taken) => (Kind::Branch(target, taken), if taken { target } else { ip + 4 }),
                Step::Call => (Kind::Call(target), target),
                Step::Return => (Kind::Return(ip + 0x40), ip + 0x40),
                Step::Jump => (Kind::Jump(target), target),
            };
            let r = Record { thread: 0, privilege: Privilege::USER, ip, op };
            ip = next;
            r
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn a_running_programs_phases_count_as_a_traces(steps in proptest::collection::vec(step(), 1..6000)) {
        let records = records(&steps);
        let (trace, running) = (phases(Maker::new(true), &records), phases(Maker::running(), &records));
        prop_assert!(running.len() <= trace.len());
        prop_assert_eq!(totals(&running), totals(&trace));
    }
}

/// The two shapes differ where they should: thousands of distinct addresses end a
/// trace's phases at the 239th, and a running program's only at its length.
#[test]
fn a_running_programs_phases_end_by_their_length_alone() {
    let records: Vec<Record> = (0..5000u64)
        .map(|i| Record {
            thread: 0,
            privilege: Privilege::USER,
            ip: 0x8000 + 4 * i,
            op: Kind::Mem(MemKind::Load, 0x4000_0000 + 64 * i, 4),
        })
        .collect();
    let trace = phases(Maker::new(true), &records);
    let running = phases(Maker::running(), &records);
    assert_eq!(trace.iter().map(|p| p.body.len()).max(), Some(239));
    assert_eq!(running.iter().map(|p| p.body.len()).collect::<Vec<_>>(), [2048, 2048, 904]);
    assert!(running.iter().all(|p| p.streams.len() == 1 && p.check().is_ok()));
}
