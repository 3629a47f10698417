//! `pmu metrics` over per-CPU `perf stat -x,` output (issue 39: reading it was
//! quadratic in the rows), as a whole process reading a file, against `wc -l` of the
//! same file as the baseline: the ratio is what evaluating a row costs beyond reading
//! it. Inputs of 20,000 and 200,000 rows show whether the time grows with the rows
//! alone.
//!
//! Run: `cargo bench -p pmukit-cli --bench metrics`

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::LazyLock;

fn main() {
    divan::main();
}

/// A `perf stat -A -x,` log of `rows` rows: two events on each of rows / 2 CPUs.
fn input(rows: usize) -> PathBuf {
    let path = std::env::temp_dir().join(format!("pmukit-bench-metrics-{rows}.csv"));
    let mut text = String::new();
    for cpu in 0..rows / 2 {
        text.push_str(&format!("CPU{cpu},1000,,cycles,1000,100.00,,\nCPU{cpu},{},,instructions,1000,100.00,,\n", 400 + cpu % 100));
    }
    std::fs::write(&path, text).expect("bench input");
    path
}

static SMALL: LazyLock<PathBuf> = LazyLock::new(|| input(20_000));
static LARGE: LazyLock<PathBuf> = LazyLock::new(|| input(200_000));

fn run(program: &str, args: &[&str]) -> usize {
    let out = Command::new(program).args(args).stdin(Stdio::null()).stderr(Stdio::null()).output().expect("runs");
    assert!(out.status.success(), "{program} {args:?}: {}", out.status);
    out.stdout.len()
}

fn metrics(file: &std::path::Path) -> usize {
    let f = file.display().to_string();
    run(env!("CARGO_BIN_EXE_pmu"), &["metrics", "--pmu", "arm1176", "--expr", "instructions / cycles", "--json", &f])
}

#[divan::bench]
fn baseline_wc_20k_rows() -> usize {
    run("wc", &["-l", &SMALL.display().to_string()])
}

#[divan::bench]
fn baseline_wc_200k_rows() -> usize {
    run("wc", &["-l", &LARGE.display().to_string()])
}

#[divan::bench]
fn pmu_metrics_20k_rows() -> usize {
    metrics(&SMALL)
}

#[divan::bench]
fn pmu_metrics_200k_rows() -> usize {
    metrics(&LARGE)
}
