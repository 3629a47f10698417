//! The idle loop's halt (`program::Op::Halt`) on every machine: it waits for the next
//! timer tick, and each PMU counts it as its chip does (Montecito ERRATA MMC15, ARM11
//! MARM12, SPARC MSP27).

mod common;

use pmukit_arch::Catalog;
use pmukit_sim::machine::arm11::{Arm11Config, Arm11Core};
use pmukit_sim::machine::montecito::MontecitoConfig;
use pmukit_sim::machine::run::Skipping;
use pmukit_sim::machine::sparc::{SparcChip, SparcConfig};
use pmukit_sim::machine::{self};
use pmukit_sim::program::{builtin, ia64, DataStream, Memory, Op, Pattern, Phase, PhaseError, Program, Timer};
use pmukit_sim::stat::{self, StatOptions};
use pmukit_sim::stream::{Privilege, Signal, Totals};

const PERIOD: u64 = 20_000;
const TICKS: u64 = 5;

/// The kernel's idle loop: a little work, then a halt, `iterations` times.
fn idle(iterations: u64) -> Phase {
    let stream = DataStream::fixed(0x100_0000, Memory::Cacheable);
    let load = pmukit_sim::program::Access { stream: 0, offset: 0, size: 4, use_next: true };
    Phase { privilege: Privilege::KERNEL, ..common::phase(vec![Op::Load(load), Op::Int, Op::Halt], iterations, vec![stream]) }
}

/// `threads` software threads each running the idle loop, with a timer of `PERIOD`
/// cycles (without a handler's phases) or none.
fn program(threads: usize, timer: bool) -> Program {
    Program {
        threads: (0..threads).map(|_| Box::new(std::iter::once(idle(TICKS))) as _).collect(),
        timer: timer.then(|| Timer { period: PERIOD, handler: Vec::new() }),
    }
}

/// Every machine's run of `program`: its name, whether its hardware threads take
/// turns at the ticks (one tick's turn at a time), and its totals.
fn everywhere(program: &dyn Fn() -> Program) -> Vec<(&'static str, bool, Totals)> {
    let all = |run: &mut dyn Iterator<Item = _>| Totals::of(run, u64::MAX, |_| true);
    let arm = Totals::of(machine::arm11(Arm11Config::new(Arm11Core::Arm1176), program(), Skipping::Off), u64::MAX, |_| true);
    let threads = program().threads.len();
    let mut runs = vec![("arm1176", true, arm)];
    for (name, at_once) in [("t4 in turns", false), ("t4 at once", true)] {
        let cfg = SparcConfig { strands_at_once: at_once, ..SparcConfig::new(SparcChip::T4) };
        runs.push((name, !at_once, Totals::of(machine::sparc(cfg, program(), Skipping::Off), u64::MAX, |_| true)));
    }
    // Montecito's halted thread hands the core to the other, which halts in its turn.
    let mut mt = machine::montecito(MontecitoConfig::new(threads.min(2)), ia64::compiled(program()), Skipping::Off);
    runs.push(("montecito", false, all(&mut mt)));
    runs
}

#[test]
fn a_halt_must_end_the_loop_body() {
    let mut phase = idle(1);
    phase.body.push(Op::Int);
    assert_eq!(phase.check(), Err(PhaseError::HaltNotLast { index: 2, instructions: 4 }));
    assert_eq!(phase.check().unwrap_err().to_string(), "instruction 2 halts, but only the body's last instruction may (of 4)");
    assert_eq!(idle(1).check(), Ok(()));
}

/// Each iteration of the idle loop halts until the next tick, so `TICKS` iterations end
/// exactly at the `TICKS`th tick of each thread's turns, on every machine and runner;
/// the halted cycles are the rest of each tick.
#[test]
fn a_halt_waits_for_the_next_tick_on_every_machine() {
    for threads in [1, 2] {
        for (name, turns, t) in everywhere(&|| program(threads, true)) {
            let ticks = if turns { TICKS * threads as u64 } else { TICKS };
            assert_eq!(t.cycles, ticks * PERIOD, "{name}, {threads} threads");
            let halted = t.get(Signal::HaltedCycles);
            assert!(halted > ticks * PERIOD / 2 && halted < ticks * PERIOD * threads as u64, "{name}, {threads} threads: {halted} halted");
        }
    }
}

/// A program without a timer has no interrupt to wait for: its halts end at once.
#[test]
fn without_a_timer_a_halt_ends_at_once() {
    for (name, _, t) in everywhere(&|| program(1, false)) {
        assert_eq!(t.get(Signal::HaltedCycles), 0, "{name}");
        assert!(t.cycles < PERIOD, "{name}: {}", t.cycles);
    }
}

/// One counter's count of `event` on `pmu`, running `workload` for `cycles`.
fn count(pmu: &str, event: &str, workload: &str, threads: usize, cycles: u64) -> u64 {
    let cat = Catalog::builtin();
    let sel = cat.resolve(event, pmu).unwrap();
    let opts = StatOptions { workload: workload.into(), seed: 3, cycles, threads: Some(threads), ..StatOptions::default() };
    stat::stat(&cat, std::slice::from_ref(&sel), &opts, &mut |_| {}).unwrap().events[0].count.unwrap()
}

/// ERRATA MARM12: WFI's standby stops the core's clocks, CCNT's and the event
/// counters' among them, until the tick.
#[test]
fn marm12_wfi_stops_the_counters_until_the_tick() {
    const CYCLES: u64 = 3_000_000;
    let program = builtin::program("idle", 3, 1).unwrap();
    let t = Totals::of(machine::arm11(Arm11Config::new(Arm11Core::Arm1176), program, Skipping::On), CYCLES, |_| true);
    let halted = t.get(Signal::HaltedCycles);
    assert!(halted > CYCLES / 10, "{halted}");
    assert_eq!(count("arm1176", "CPU_CYCLES", "idle", 1, CYCLES), CYCLES - halted);
    assert_eq!(count("arm1176", "INSTR_EXEC", "idle", 1, CYCLES), t.get(Signal::Instructions));
}

/// MARM12 with the interrupts masked: the interrupt-mask cycles are counted by the
/// clocks standby stops, so the halted cycles count none of them, and every cycle
/// that is not halted counts both masks.
#[test]
fn marm12_a_halt_with_interrupts_masked_counts_no_masked_cycles() {
    let masked = || Program {
        threads: vec![Box::new(std::iter::once(Phase { masks: pmukit_sim::program::Masks { irq: true, fiq: true }, ..idle(TICKS) }))],
        timer: Some(Timer { period: PERIOD, handler: Vec::new() }),
    };
    let t = Totals::of(machine::arm11(Arm11Config::new(Arm11Core::Arm1176), masked(), Skipping::Off), u64::MAX, |_| true);
    let halted = t.get(Signal::HaltedCycles);
    assert!(halted > TICKS * PERIOD / 2, "{halted}");
    assert_eq!(t.get(Signal::IrqDisabledCycles), t.cycles - halted);
    assert_eq!(t.get(Signal::FiqDisabledCycles), t.cycles - halted);
}

/// §3.3.12: "PAL_LIGHT_HALT freezes event monitoring prior to powering down the
/// processor": with no thread awake, the core's halted cycles count only in
/// CPU_OP_CYCLES_HALTED, and CPU_OP_CYCLES and BACK_END_BUBBLE leave them out.
#[test]
fn s3_3_12_a_halted_core_counts_only_cpu_op_cycles_halted() {
    const CYCLES: u64 = 3_000_000;
    let program = ia64::compiled(builtin::program("idle", 3, 1).unwrap());
    let t = Totals::of(machine::montecito(MontecitoConfig::new(1), program, Skipping::On), CYCLES, |_| true);
    let halted = t.get(Signal::HaltedCycles);
    assert!(halted > CYCLES / 10, "{halted}");
    assert_eq!(count("montecito-st", "CPU_OP_CYCLES_HALTED", "idle", 1, CYCLES), halted);
    let cycles = count("montecito-st", "CPU_OP_CYCLES", "idle", 1, CYCLES);
    assert_eq!(cycles, CYCLES - halted);
    let bubbles = count("montecito-st", "BACK_END_BUBBLE.ALL", "idle", 1, CYCLES);
    assert!(bubbles < cycles, "{bubbles} of {cycles}");
    // A workload that never halts has no halted cycles to count.
    assert_eq!(count("montecito-st", "CPU_OP_CYCLES_HALTED", "compute", 1, CYCLES), 0);
}

/// ERRATA MMC15: a thread that halts while the other has work hands it the core (a
/// low-power switch), and is not switched back to until the tick: the other thread's
/// L3 misses that would switch are gated. With one thread the core halts instead.
#[test]
fn mmc15_a_halted_thread_hands_the_core_to_the_other_until_the_tick() {
    let halting = Phase { iterations: 1, ..idle(1) };
    let then = common::phase(vec![Op::Int, Op::Int, Op::Branch { target: 0x1_0000, when: Pattern::Loop }], 1 << 40, Vec::new());
    // Loads a line apart over 64 MB: every one misses the L3.
    let misses = DataStream { stride: 128, footprint: 64 << 20, ..DataStream::fixed(0x1000_0000, Memory::Cacheable) };
    let load = pmukit_sim::program::Access { stream: 0, offset: 0, size: 8, use_next: true };
    let busy = Phase {
        entry: 0x2_0000,
        ..common::phase(vec![Op::Load(load), Op::Int, Op::Branch { target: 0x2_0000, when: Pattern::Loop }], 1 << 40, vec![misses])
    };
    let program = Program {
        threads: vec![Box::new(vec![halting, then].into_iter()), Box::new(std::iter::repeat(busy))],
        timer: Some(Timer { period: 200_000, handler: Vec::new() }),
    };
    let run = machine::montecito(MontecitoConfig::new(2), ia64::compiled(program), Skipping::Off);
    let (mut now, mut lp_at, mut back_early, mut gated) = (0u64, None, 0u64, 0u64);
    for block in run {
        for _ in 0..block.repeat {
            for s in block.body.iter().filter(|s| !s.overlay) {
                if lp_at.is_none() && s.signals.get(Signal::ThreadSwitchesLowPower) > 0 {
                    lp_at = Some(now);
                }
                if lp_at.is_some() && now < 200_000 {
                    back_early += u64::from(s.thread == 0 && s.signals.get(Signal::Instructions) > 0) * s.cycles;
                    gated += s.signals.get(Signal::ThreadSwitchesGatedLowPower);
                }
                now += s.cycles;
            }
        }
        if now > 400_000 {
            break;
        }
    }
    assert!(lp_at.is_some_and(|at| at < 1000), "{lp_at:?}");
    assert_eq!(back_early, 0, "the halted thread ran before the tick");
    assert!(gated > 100, "{gated}");
    let one = Totals::of(
        machine::montecito(MontecitoConfig::new(1), ia64::compiled(builtin::program("idle", 3, 1).unwrap()), Skipping::On),
        3_000_000,
        |_| true,
    );
    assert_eq!((one.get(Signal::ThreadSwitchesLowPower), one.get(Signal::ThreadSwitchesGatedLowPower)), (0, 0));
    let two = Totals::of(
        machine::montecito(MontecitoConfig::new(2), ia64::compiled(builtin::program("idle", 3, 2).unwrap()), Skipping::On),
        3_000_000,
        |_| true,
    );
    assert!(two.get(Signal::ThreadSwitchesLowPower) > 0 && two.get(Signal::ThreadSwitchesGatedLowPower) > 0);
}
