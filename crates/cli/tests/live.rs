//! `pmu stat --live`: counting real programs through the kernel's perf_event. This VM
//! has no hardware PMU, so these count the kernel's software events for real (and see
//! `<not supported>` for the hardware ones, as perf does here); the mapping of
//! pmukit's events onto the Raspberry Pi's and SPARC T4's drivers is tested on recorded
//! sysfs trees in crates/live/tests/events.rs.
#![cfg(all(target_os = "linux", feature = "live"))]

mod common;

use std::process::Output;

use common::pmu_with_input;
use serde_json::Value;

fn pmu(args: &[&str]) -> Output {
    pmu_with_input(args, b"")
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn json(args: &[&str]) -> Value {
    let out = pmu(args);
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    serde_json::from_slice(&out.stdout).expect("JSON")
}

/// An event of a JSON report by name; under perf_event_paranoid 2 an unprivileged
/// user's counts are user space only and named NAME:u, as perf names them.
fn event<'v>(report: &'v Value, name: &str) -> &'v Value {
    report["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == name || e["name"] == format!("{name}:u"))
        .unwrap_or_else(|| panic!("no {name} in {report}"))
}

#[test]
fn true_is_counted_with_perfs_default_events() {
    let out = pmu(&["stat", "--live", "--", "true"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains(" Performance counter stats for 'true':"), "{text}");
    for name in ["task-clock", "context-switches", "cpu-migrations", "page-faults", "cycles", "instructions", "branches", "branch-misses"] {
        assert!(text.lines().any(|l| l.contains(name)), "{name} missing from\n{text}");
    }
    assert!(text.contains(" msec task-clock"), "task-clock in milliseconds, as perf prints it:\n{text}");
    assert!(text.contains("seconds time elapsed\n") && !text.contains("simulated"), "{text}");
    assert!(text.contains(" seconds user\n") && text.contains(" seconds sys\n"), "{text}");
}

#[test]
fn sleep_counts_its_own_page_faults_and_cpu_time_not_its_wall_time() {
    let report = json(&["stat", "--live", "--json", "-e", "task-clock,page-faults", "--", "sleep", "0.1"]);
    assert_eq!(report["command"], "stat");
    assert_eq!(report["live"]["command"], serde_json::json!(["sleep", "0.1"]));
    assert_eq!(report["live"]["exit_status"], 0);
    let elapsed = report["elapsed_ns"].as_u64().unwrap();
    assert!(elapsed >= 100_000_000, "sleep 0.1 took {elapsed} ns");
    let clock = event(&report, "task-clock");
    assert_eq!(clock["unit"], "ns");
    let ns = clock["count"].as_u64().unwrap();
    assert!(ns > 0 && ns < elapsed / 2, "sleep sleeps: {ns} ns of CPU in {elapsed} ns");
    let faults = event(&report, "page-faults");
    assert!(faults["count"].as_u64().unwrap() > 10, "loading sleep faults pages in: {faults}");
    // Software events are never multiplexed: enabled and running times agree.
    assert_eq!(faults["enabled"], faults["running"]);
    assert_eq!(faults["scaled"], false);
}

#[test]
fn children_are_counted_with_the_command() {
    // The shell's child, pmu simulating 2e8 cycles, does the work; without inherit the
    // count would be the shell's alone, a millisecond or two.
    let pmu_bin = env!("CARGO_BIN_EXE_pmu");
    let script = format!("{pmu_bin} stat --pmu sparc-t4 --cycles 2e8 -o /dev/null");
    let report = json(&["stat", "--live", "--json", "-e", "task-clock", "--", "sh", "-c", &script]);
    let clock = event(&report, "task-clock")["count"].as_u64().unwrap();
    let cpu = report["live"]["user_ns"].as_u64().unwrap() + report["live"]["sys_ns"].as_u64().unwrap();
    assert!(cpu > 20_000_000, "the child ran for {cpu} ns of CPU");
    assert!(clock * 2 > cpu, "task-clock {clock} ns is the children's CPU time {cpu} ns, not the shell's alone");
}

#[test]
fn the_commands_exit_status_is_pmus() {
    let out = pmu(&["stat", "--live", "-x,", "-e", "task-clock", "--", "sh", "-c", "exit 3"]);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let line = stdout(&out);
    let fields: Vec<&str> = line.trim().split(',').collect();
    assert_eq!(fields.len(), 7, "perf's -x columns: {line}");
    assert_eq!(fields[1], "msec");
    assert!(fields[2].starts_with("task-clock"));
    assert_eq!(fields[4], "100.00");
    let killed = pmu(&["stat", "--live", "-e", "task-clock", "--", "sh", "-c", "kill -TERM $$"]);
    assert_eq!(killed.status.code(), Some(128 + 15), "a signal's status, as a shell gives it");
}

#[test]
fn unsupported_hardware_events_print_as_perf_prints_them() {
    // This VM has no PMU: the kernel answers ENOENT for hardware events.
    let out = pmu(&["stat", "--live", "-x,", "-e", "cycles,task-clock", "--", "true"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.starts_with("<not supported>,,cycles,0,100.00,,\n"), "{text}");
}

#[test]
fn every_cpu_is_counted_for_a_duration_or_the_refusal_says_why() {
    let out = pmu(&["stat", "--live", "-a", "-A", "--duration", "0.1", "--json", "-e", "cpu-clock"]);
    if !out.status.success() {
        // Counting every CPU needs CAP_PERFMON or perf_event_paranoid 0.
        assert!(stderr(&out).contains("perf_event_paranoid"), "{}", stderr(&out));
        return;
    }
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["workload"], "system wide");
    assert_eq!(report["live"]["system_wide"], true);
    let clock = event(&report, "cpu-clock");
    let units = clock["units"].as_array().unwrap();
    assert!(!units.is_empty() && units[0]["name"] == "CPU0", "{clock}");
    for u in units {
        let ns = u["count"].as_u64().unwrap();
        assert!((90_000_000..200_000_000).contains(&ns), "a CPU's clock runs the whole 0.1 s: {u}");
    }
}

#[test]
fn bad_live_requests_are_usage_errors_naming_the_problem() {
    let cases: &[(&[&str], &str)] = &[
        (&["stat", "--live", "-e", "task-clok", "--", "true"], "unknown event 'task-clok'"),
        (&["stat", "--live", "-e", "cycles:p", "--", "true"], "modifier 'p'"),
        (&["stat", "--live", "-e", "nosuch/event=1/", "--", "true"], "no PMU 'nosuch'"),
        (&["stat", "--live", "-e", "msr/event=1,bogus=2/", "--", "true"], "no term 'bogus'"),
        (&["stat", "--live"], "counts a command"),
        (&["stat", "--live", "-A", "--", "true"], "-A splits a system-wide count"),
        (&["stat", "--live", "-a", "--duration", "1", "--", "true"], "--duration times a system-wide count"),
        (&["stat", "--live", "-a", "--duration", "0", "-e", "cs"], "not a duration"),
        (&["stat", "--live", "--cycles", "5", "--", "true"], "cannot be used with"),
        (&["stat", "--live", "--pmu", "arm1176", "--", "true"], "this machine has no arm1176"),
        (&["stat", "--live", "-M", "ipc", "--", "true"], "none of them"),
        (&["stat", "--", "true"], "--live"),
    ];
    for (args, expect) in cases {
        let out = pmu(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(expect), "{args:?}: {}", stderr(&out));
    }
    // The Pi's sysfs tree: its PMU cannot filter privilege levels.
    let pi = format!("{}/../live/tests/data/sysfs/raspberry-pi-zero", env!("CARGO_MANIFEST_DIR"));
    let out = pmu(&["stat", "--live", "--sysfs", &pi, "-e", "cycles:u", "--", "true"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("PERF_PMU_CAP_NO_EXCLUDE"), "{}", stderr(&out));
    // A JSON error carries the token and its column.
    let out = pmu(&["stat", "--live", "--json", "-e", "task-clok", "--", "true"]);
    let e: Value = serde_json::from_slice(&out.stderr).unwrap();
    let e = &e["error"];
    assert_eq!((e["token"].as_str(), e["column"].as_u64()), (Some("task-clok"), Some(1)));
    assert_eq!(e["suggestions"][0], "task-clock");
}

#[test]
fn a_program_that_cannot_run_is_a_runtime_error() {
    let out = pmu(&["stat", "--live", "--", "/nonexistent/program"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("cannot run '/nonexistent/program'"), "{}", stderr(&out));
}

#[test]
fn pmu_metrics_reads_a_live_reports_json() {
    let out = pmu(&["stat", "--live", "--json", "-e", "page-faults", "--", "true"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let metrics = pmu_with_input(&["metrics", "--json", "--expr", "page\\-faults / duration_time", "-"], &out.stdout);
    assert!(metrics.status.success(), "{}", stderr(&metrics));
    let v: Value = serde_json::from_slice(&metrics.stdout).unwrap();
    let rate = v["results"][0]["metrics"][0]["value"].as_f64().unwrap();
    assert!(rate > 0.0, "page faults per second of the run: {v}");
    assert_eq!(v["pmu"], serde_json::json!([]), "software events name no PMU of pmukit's");
}

#[test]
fn repeated_runs_are_averaged_with_perfs_variance() {
    let out = pmu(&["stat", "--live", "-r", "3", "-e", "page-faults", "--", "true"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("Performance counter stats for 'true' (3 runs):"), "{text}");
    assert!(text.lines().any(|l| l.contains("page-faults") && l.contains("( +-")), "{text}");
    // perf's footer: the mean, +- the deviation of the mean, and it in percent.
    let footer = text.lines().find(|l| l.contains("seconds time elapsed")).unwrap();
    let words: Vec<&str> = footer.split_whitespace().collect();
    assert_eq!((words[1], words[3..6].join(" ").as_str(), words[6]), ("+-", "seconds time elapsed", "("), "{footer}");
    assert!(!text.contains("seconds user"), "perf leaves out CPU times over runs");
    let report = json(&["stat", "--live", "--json", "-r", "2", "-e", "page-faults", "--", "true"]);
    assert_eq!(report["runs"], 2);
    assert!(report["live"]["elapsed_noise_pct"].as_f64().is_some(), "{report}");
    assert!(event(&report, "page-faults")["noise_pct"].as_f64().is_some());
}

#[test]
fn intervals_print_as_they_end_and_add_up_to_the_run() {
    let out = pmu(&["stat", "--live", "-I", "100", "-e", "task-clock,page-faults", "--", "sleep", "0.25"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("#           time             counts unit events"), "{text}");
    let times: Vec<f64> = lines.map(|l| l.split_whitespace().next().unwrap().parse().unwrap()).collect();
    assert!(times.len() >= 6 && times.windows(2).all(|w| w[0] <= w[1]), "two events an interval, in time order: {text}");
    assert!(*times.last().unwrap() >= 0.25, "the last, partial interval ends with the command: {text}");
    // The intervals' counts add up exactly to the run's.
    let report = json(&["stat", "--live", "--json", "-I", "50", "-e", "page-faults", "--", "sleep", "0.2"]);
    let intervals = report["intervals"].as_array().unwrap();
    assert!(intervals.len() >= 4, "{report}");
    let sum: u64 = intervals.iter().map(|iv| iv["events"][0]["count"].as_u64().unwrap_or(0)).sum();
    assert_eq!(sum, event(&report, "page-faults")["count"].as_u64().unwrap(), "{report}");
    for (args, expect) in [
        (&["stat", "--live", "-I", "0", "--", "true"][..], "-I 0"),
        (&["stat", "--live", "-I", "10", "-r", "2", "--", "true"][..], "-I and -r together"),
    ] {
        let out = pmu(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(stderr(&out).contains(expect), "{}", stderr(&out));
    }
}

#[test]
fn perfs_shadow_metrics_are_printed_beside_the_software_events() {
    // `-x,`: count, unit, event, run time, % running, metric value, metric unit, as
    // `perf stat -x, -- true` prints them (perf 6.1).
    let out = pmu(&["stat", "--live", "-x,", "-e", "task-clock,page-faults,cs,cycles", "--", "true"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let rows: Vec<Vec<&str>> = text.lines().map(|l| l.split(',').collect()).collect();
    let (clock, faults) = (&rows[0], &rows[1]);
    assert_eq!((clock[1], clock[2], clock[6]), ("msec", "task-clock", "CPUs utilized"), "{text}");
    let utilized: f64 = clock[5].parse().unwrap();
    assert!(utilized > 0.0 && utilized < 3.0, "a share of the elapsed time on a 2-CPU machine: {text}");
    // The page-fault rate is per second of task-clock, in K/sec past 1000.
    let (ms, n): (f64, f64) = (clock[0].parse().unwrap(), faults[0].parse().unwrap());
    let rate = n / (ms / 1e3);
    let (want, unit) = if rate > 1e6 {
        (rate / 1e6, "M/sec")
    } else if rate > 1e3 {
        (rate / 1e3, "K/sec")
    } else {
        (rate, "/sec")
    };
    assert_eq!(faults[6], unit, "{text}");
    let shown: f64 = faults[5].parse().unwrap();
    // task-clock is printed to 10 µs: the rate agrees to that precision.
    assert!((shown - want).abs() / want < 0.02, "{shown} {unit} against {want} from the printed counts: {text}");
    assert_eq!(rows[3][..3], ["<not supported>", "", "cycles"], "{text}");
    assert_eq!(rows[3][5..], ["", ""], "no GHz for a count the kernel refused: {text}");
    // --metric-only leaves rates and CPUs utilized out, as perf's does.
    let only = stdout(&pmu(&["stat", "--live", "--metric-only", "-x,", "-e", "task-clock,page-faults", "--", "true"]));
    assert!(!only.contains("/sec") && !only.contains("CPUs utilized"), "{only}");
    // The JSON names the event each is of; the PMU's metrics name none.
    let report = json(&["stat", "--live", "--json", "-e", "task-clock,page-faults", "--", "true"]);
    let metrics = report["metrics"].as_array().unwrap();
    let of = |event: &str| metrics.iter().find(|m| m["event"] == event).unwrap_or_else(|| panic!("no metric of {event}: {report}"));
    assert_eq!(of("task-clock")["name"], "CPUs utilized");
    assert!(of("page-faults")["name"].as_str().unwrap().ends_with("/sec"), "{report}");
    // --no-metrics drops them too.
    let none = stdout(&pmu(&["stat", "--live", "--no-metrics", "-x,", "-e", "task-clock", "--", "true"]));
    assert!(none.trim_end().ends_with(",,"), "{none}");
}
