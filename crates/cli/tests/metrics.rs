//! `pmu metrics`: metrics over counts from recorded `perf stat` output (crates/core/
//! tests/data/perf-stat, perf 6.1 on this VM), from `pmu stat --json`, and from
//! NAME=VALUE arguments, with perf's MetricExpr semantics.

mod common;

use std::process::Output;

use common::pmu_with_input;
use serde_json::Value;

fn pmu(args: &[&str]) -> Output {
    pmu_with_input(args, b"")
}

fn fixture(name: &str) -> String {
    format!("{}/../core/tests/data/perf-stat/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn json(args: &[&str]) -> Value {
    let mut with = args.to_vec();
    with.push("--json");
    let out = pmu(&with);
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("JSON")
}

fn usage_error(args: &[&str]) -> String {
    let out = pmu(args);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {}", String::from_utf8_lossy(&out.stdout));
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Each result's (interval, unit, metric value).
fn values(v: &Value) -> Vec<(Option<f64>, Option<String>, Option<f64>)> {
    v["results"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|g| {
            g["metrics"]
                .as_array()
                .unwrap()
                .iter()
                .map(move |m| (g["interval"].as_f64(), g["unit"].as_str().map(str::to_string), m["value"].as_f64()))
        })
        .collect()
}

#[test]
fn an_expression_over_name_value_arguments() {
    let v = json(&["metrics", "--expr", "FOO / BAR", "FOO=1", "BAR=4"]);
    assert_eq!(v["schema"], 1);
    assert_eq!(values(&v), [(None, None, Some(0.25))]);
    // perf's literals are given the same way.
    let v = json(&["metrics", "--expr", "FOO * 2 if #smt_on else FOO", "FOO=3", "#smt_on=1"]);
    assert_eq!(values(&v)[0].2, Some(6.0));
}

#[test]
fn perf_csv_per_cpu_gives_each_cpus_metric() {
    let v = json(&["metrics", "--expr", r"context\-switches / (task\-clock * 1e-9)", &fixture("csv-per-cpu.txt")]);
    let got = values(&v);
    assert_eq!(got.len(), 2);
    // CPU1: 8 switches in 51.38 ms of task-clock (msec read back as nanoseconds).
    assert_eq!(got[1].1.as_deref(), Some("CPU1"));
    assert!((got[1].2.unwrap() - 8.0 / 0.05138).abs() < 0.5, "{got:?}");
    assert_eq!(v["inputs"][0]["format"], "perf_csv");
}

#[test]
fn intervals_use_their_own_length_as_duration_time() {
    // 76 page faults in the first 20.077258 ms interval.
    let v = json(&["metrics", "--expr", r"page\-faults / duration_time", &fixture("csv-interval-semicolon.txt")]);
    let got = values(&v);
    assert!((got[0].2.unwrap() - 76.0 / 0.020077258).abs() < 1e-6, "{got:?}");
    // The intervals whose counts perf could not give are notes, not numbers.
    assert!(v["notes"].as_array().unwrap().iter().any(|n| n.as_str().unwrap().contains("not counted")), "{v}");
    // perf's JSON lines read the same.
    let j = json(&["metrics", "--expr", r"page\-faults / duration_time", &fixture("json-interval.txt")]);
    assert!((values(&j)[0].2.unwrap() - 74.0 / 0.020112843).abs() < 1e-6);
}

#[test]
fn duration_time_from_perf_is_seconds_in_metrics() {
    // perf's CPUs-utilized metric: task-clock (ns) over duration_time (s) * 1e9.
    let v = json(&["metrics", "--expr", r"task\-clock / (duration_time * 1e9)", &fixture("csv-duration-raw.txt")]);
    let want = 867_375.0 / 35_922_951.0;
    assert!((values(&v)[0].2.unwrap() - want).abs() < 1e-3, "{v}");
    let e = usage_error(&["metrics", "--expr", "FOO / duration_time", "FOO=1"]);
    assert!(e.contains("duration_time"), "{e}");
}

#[test]
fn pmu_stat_json_gives_the_pmus_metrics_and_per_cpu_ones() {
    let stat = pmu(&["stat", "--pmu", "sparc-t4", "--threads", "2", "-A", "--cycles", "1e7", "-e", "CYCLES,INSTR.ALL", "--json"]);
    assert!(stat.status.success());
    let out = pmu_with_input(&["metrics", "-M", "ipc", "--json", "-"], &stat.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["pmu"][0], "sparc-t4", "the PMU comes from the input");
    let s: Value = serde_json::from_slice(&stat.stdout).unwrap();
    let got = values(&v);
    // The machine's ipc as pmu stat computed it, then each strand's.
    let want = s["metrics"].as_array().unwrap().iter().find(|m| m["name"] == "ipc").unwrap()["value"].as_f64().unwrap();
    assert!((got[0].2.unwrap() - want).abs() < 1e-9, "{got:?} vs {want}");
    assert_eq!(got.iter().filter(|g| g.1.is_some()).count(), 2, "{got:?}");
}

#[test]
fn perf_spellings_map_onto_the_pmus_events() {
    // A Raspberry Pi's perf stat -x, output, written from perf 6.1's format: raw events
    // typed as r07 and armv6_1176/config=0xff/ (ARMv6 has no format/ directory).
    let csv = "1000000,,armv6_1176/config=0xff/,1000000,100.00,,\n600000,,r07,1000000,100.00,,\n";
    let out = pmu_with_input(&["metrics", "-M", "ipc", "--json", "-"], csv.as_bytes());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["pmu"][0], "arm1176", "from the driver's name");
    assert_eq!(values(&v)[0].2, Some(0.6));
    // `cpu/…/` is x86's as well as SPARC's: it names no PMU by itself.
    let csv = "1000,,cpu/config=0x6800000/,1,100.00,,\n";
    assert!(String::from_utf8_lossy(&pmu_with_input(&["metrics", "-M", "ipc", "-"], csv.as_bytes()).stderr).contains("--pmu"));
    // perf's generic names, with --pmu.
    let csv = "2000,,cycles,1,100.00,,\n500,,instructions,1,100.00,,\n";
    let out = pmu_with_input(&["metrics", "--pmu", "arm1176", "-M", "cpi", "--json", "-"], csv.as_bytes());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(values(&v)[0].2, Some(4.0));
}

#[test]
fn undefined_and_refused_metrics_say_why() {
    // perf's `/` by zero is NaN: the metric is undefined, with a note.
    let v = json(&["metrics", "--expr", "A / B", "A=1", "B=0"]);
    assert_eq!(values(&v)[0].2, None);
    assert!(v["notes"][0].as_str().unwrap().contains("undefined"));
    assert!(usage_error(&["metrics", "--expr", "A / NOPE", "A=1"]).contains("NOPE"));
    assert!(usage_error(&["metrics", "--expr", "7 % B", "B=0"]).contains("division by zero"));
    assert!(usage_error(&["metrics", "--expr", "(A", "A=1"]).contains("column"));
    assert!(usage_error(&["metrics", "-M", "ipc", "A=1"]).contains("--pmu"));
    assert!(usage_error(&["metrics", "--pmu", "arm1176", "-M", "nosuch", "A=1"]).contains("nosuch"));
    assert!(usage_error(&["metrics", "--expr", "A", "A=x"]).contains("not a number"));
    assert!(usage_error(&["metrics", "--expr", "A", "nofile"]).contains("neither a file nor NAME=VALUE"));
    let out = pmu(&["metrics", "--expr", "A", "/nonexistent/dir/"]);
    assert!(matches!(out.status.code(), Some(1 | 2)));
    let human = "\n Performance counter stats for 'true':\n\n   0.51 msec task-clock\n";
    let out = pmu_with_input(&["metrics", "--expr", "A", "-"], human.as_bytes());
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("-x"), "{}", String::from_utf8_lossy(&out.stderr));
}
