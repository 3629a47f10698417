//! Whole-process start-up: the `pmu` binary run as a user runs it, from `exec` to
//! exit, output to a pipe that is drained. The baseline runs `true`, the smallest
//! dynamically linked program there is, so the ratio is what `pmu` adds to starting
//! any process on the machine.
//!
//! Run: `cargo bench -p pmukit-cli --bench startup`

use std::process::{Command, Stdio};

fn main() {
    divan::main();
}

fn run(program: &str, args: &[&str]) -> usize {
    let out = Command::new(program).args(args).stdin(Stdio::null()).stderr(Stdio::null()).output().expect("runs");
    assert!(out.status.success(), "{program} {args:?}: {}", out.status);
    out.stdout.len()
}

#[divan::bench]
fn baseline_true() -> usize {
    run("true", &[])
}

#[divan::bench]
fn pmu_list_arm1176() -> usize {
    run(env!("CARGO_BIN_EXE_pmu"), &["list", "arm1176"])
}

#[divan::bench]
fn pmu_encode_one_event() -> usize {
    run(env!("CARGO_BIN_EXE_pmu"), &["encode", "arm1176::INSTR_EXEC"])
}

#[divan::bench]
fn pmu_encode_twelve_montecito_events() -> usize {
    let events = [
        "CPU_OP_CYCLES",
        "IA64_INST_RETIRED",
        "BACK_END_BUBBLE.ALL",
        "BACK_END_BUBBLE.FE",
        "BE_EXE_BUBBLE.ALL",
        "BE_FLUSH_BUBBLE.ALL",
        "BR_MISPRED_DETAIL.ALL.ALL_PRED",
        "INST_DISPERSED",
        "DISP_STALLED",
        "SYLL_NOT_DISPERSED.ALL",
        "L3_MISSES",
        "L2D_MISSES",
    ];
    run(env!("CARGO_BIN_EXE_pmu"), &[&["encode", "--pmu", "montecito"][..], &events].concat())
}
