//! The rough edges a perf user meets (issue 41, items 4-7), each from the command
//! line: lookups across PMUs, errors that name only what was typed, perf's metric-group
//! lines and pmu's own `-x` output read back, output that fits the terminal, register
//! names as asked, capture registers a real machine needs.

mod common;

use common::pmu_with_input;
use serde_json::Value;

fn run(args: &[&str]) -> std::process::Output {
    pmu_with_input(args, b"")
}

fn stderr_of(args: &[&str]) -> String {
    let out = run(args);
    assert!(!out.status.success(), "{args:?} succeeded");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn stdout_of(args: &[&str]) -> String {
    let out = run(args);
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// An event of another PMU is offered as `PMU::NAME` with the `--pmu` that takes it.
#[test]
fn an_unknown_event_is_looked_up_on_every_pmu() {
    let err = stderr_of(&["describe", "L3_MISSES"]);
    assert!(err.contains("is an event of montecito") && err.contains("--pmu montecito") && err.contains("montecito::L3_MISSES"), "{err}");
    let out = run(&["encode", "L3_MISSES", "--json"]);
    let v: Value = serde_json::from_slice(&out.stderr).unwrap();
    assert!(v["error"]["suggestions"].as_array().unwrap().iter().any(|s| s == "montecito::L3_MISSES"), "{v}");
}

/// A name that is part of a metric's is offered; a generic name with no Montecito
/// mapping names the events that count it.
#[test]
fn metrics_and_generic_names_point_at_what_exists() {
    assert!(stderr_of(&["stat", "--pmu", "montecito", "-M", "ipc", "--cycles", "1e5"]).contains("ia64_ipc"));
    // A metric of another PMU names it.
    assert!(stderr_of(&["stat", "-M", "ia64_ipc", "--cycles", "1e5"])
        .contains("'ia64_ipc' is a metric of montecito, montecito-st: give --pmu montecito"));
    assert!(stderr_of(&["stat", "--pmu", "montecito", "-e", "cycles", "--cycles", "1e5"]).contains("CPU_OP_CYCLES.ALL"));
    // A generic name the PMU's driver lacks names the PMUs whose drivers map it.
    let err = stderr_of(&["stat", "-e", "cache-misses", "--cycles", "1e5"]);
    assert!(err.contains("'cache-misses' is DC_MISS_PRECISE.ANY on sparc-t4: give --pmu sparc-t4"), "{err}");
}

/// `pmu record` on a PMU without capture hardware says so, not that an event the
/// user never typed is unknown.
#[test]
fn record_refuses_a_pmu_without_capture_hardware_as_such() {
    let err = stderr_of(&["record", "--pmu", "arm1176", "--cycles", "1e5", "-o", "-"]);
    assert!(err.contains("no event address registers") && !err.contains("DATA_EAR"), "{err}");
}

#[test]
fn an_empty_field_separator_is_refused() {
    assert!(stderr_of(&["stat", "-x", "", "--cycles", "1e5"]).contains("separator is empty"));
}

/// An argument error under --json names its command, as every other error does.
#[test]
fn argument_errors_under_json_name_the_command() {
    let out = run(&["stat", "--json", "--cycles", "abc"]);
    let v: Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(v["command"], "stat", "{v}");
}

/// Registers of a set that shares a layout decode under their own names.
#[test]
fn decode_names_the_register_asked_for() {
    for reg in ["PMD55", "PMC35", "IBR3"] {
        let text = stdout_of(&["decode", "montecito", reg, "0x5"]);
        assert!(text.starts_with(&format!("{reg} = ")), "{text}");
    }
}

/// `--metric-only` lays Montecito's twenty L3 metrics out in 80 columns.
#[test]
fn metric_only_wraps_to_the_terminal() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_pmu"))
        .args(["stat", "--pmu", "montecito", "-M", "l3", "--metric-only", "--cycles", "2e6"])
        .env("COLUMNS", "80")
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    // The columns' lines: the title and the notes are sentences, as perf's.
    let mut table =
        text.lines().filter(|l| !l.trim_start().starts_with("Performance counter stats") && !l.trim_start().starts_with("note:"));
    assert!(table.all(|l| l.chars().count() <= 80), "{text}");
    assert!(text.contains("l3_store_references") && text.contains("l3_data_hits"), "{text}");
}

/// A count-valued metric prints as the counts do, whole and grouped.
#[test]
fn count_metrics_print_as_counts() {
    let text = stdout_of(&["stat", "-w", "os", "-M", "noncacheable_accesses", "--cycles", "2e7"]);
    let line = text.lines().find(|l| l.contains("noncacheable_accesses")).unwrap();
    assert!(!line.contains(".00"), "{line}");
}

/// perf's metric-group lines are skipped; pmu's own `-x` output names its PMU by its
/// events, so it needs no --pmu.
#[test]
fn metrics_reads_group_lines_and_pmus_own_csv() {
    let csv = "2000,,CPU_CYCLES,2000,100.00,,\n,2000,100.00,,,,TopdownL1 (cpu_core)\n1000,,INSTR_EXEC,2000,100.00,,\n,,,,,,%  tma_backend_bound\n";
    let out = pmu_with_input(&["metrics", "-M", "ipc", "--json", "-"], csv.as_bytes());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["pmu"][0], "arm1176", "{v}");
    let ipc = v["results"][0]["metrics"].as_array().unwrap().iter().find(|m| m["name"] == "ipc").unwrap()["value"].as_f64();
    assert_eq!(ipc, Some(0.5));
}

/// §3.3.9.2-3: a D-EAR in TLB mode writes PMC39 = 0 with its registers.
#[test]
fn encode_writes_pmc39_zero_beside_a_dear_in_tlb_mode() {
    let text = stdout_of(&["encode", "--pmu", "montecito", "DATA_EAR_TLB_ALL"]);
    assert!(text.lines().any(|l| l.contains("PMC39") && l.contains("0x0")), "{text}");
}

/// README's error example is what `pmu` prints, suggestions and all.
#[test]
fn the_readmes_error_example_is_the_real_output() {
    let readme = std::fs::read_to_string(format!("{}/../../README.md", env!("CARGO_MANIFEST_DIR"))).unwrap();
    let start = readme.find("$ pmu encode arm1176::INSTR_EXE\n").expect("the example") + "$ pmu encode arm1176::INSTR_EXE\n".len();
    let shown = &readme[start..start + readme[start..].find("```").unwrap()];
    let err = stderr_of(&["encode", "arm1176::INSTR_EXE"]);
    assert_eq!(shown.trim_end(), err.trim_end());
}

/// pfmon's trace-buffer filters, from the command line.
#[test]
fn etb_filters_program_pmc39_as_pfmon_named_them() {
    let text = stdout_of(&["encode", "--pmu", "montecito", "ETB_EVENT", "--etb-tm-tk", "--etb-brt-ret", "--json"]);
    let v: Value = serde_json::from_str(&text).unwrap();
    let pmc39 = v["registers"]["PMC39"].as_str().map(|s| u64::from_str_radix(s.trim_start_matches("0x"), 16).unwrap()).unwrap();
    assert_eq!((pmc39 >> 8 & 3, pmc39 >> 14 & 3), (0b10, 0b10), "{v}");
    assert!(stderr_of(&["encode", "--pmu", "montecito", "ETB_EVENT", "--etb-tm-tk", "--etb-tm-ntk"]).contains("cannot be used with"));
}

/// A second instruction range (Table 3-10's range 1) counts tag channel 1's events in
/// it while channel 0's count in the first; alone it is refused.
#[test]
fn a_second_instruction_range_qualifies_channel_1() {
    let events = "IA64_TAGGED_INST_RETIRED.IBRP0_PMC32_33,IA64_TAGGED_INST_RETIRED.IBRP1_PMC34_35";
    let stat = |ranges: &[&str]| -> Vec<u64> {
        let mut args = vec!["stat", "--pmu", "montecito", "-w", "compute", "--cycles", "1e6", "-e", events, "-x,"];
        args.extend_from_slice(ranges);
        let out = run(&args);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).lines().map(|l| l.split(',').next().unwrap().parse().unwrap()).collect()
    };
    let both = stat(&["--irange", "0x10000-0x20000", "--irange2", "0x20000-0x40000"]);
    // Each channel counts what its range alone gives it.
    assert_eq!(both[0], stat(&["--irange", "0x10000-0x20000"])[0]);
    assert_eq!(both[1], stat(&["--irange", "0x20000-0x40000"])[1]);
    assert!(both[0] > 0 && both[1] > 0 && both[0] != both[1], "{both:?}");
    let encode = stdout_of(&[
        "encode",
        "--pmu",
        "montecito",
        "IA64_TAGGED_INST_RETIRED.IBRP1_PMC34_35",
        "IA64_INST_RETIRED",
        "--irange",
        "0x10000-0x20000",
        "--irange2",
        "0x20000-0x40000",
    ]);
    assert!(encode.contains("IBR0 = 0x00010000") && encode.contains("IBR2 = 0x00020000"), "{encode}");
    assert!(stderr_of(&["stat", "--pmu", "montecito", "--irange2", "0x20000-0x40000"]).contains("--irange"));
}
