//! `pmu record` and `pmu report` (issue 13): a recording written, read back and
//! summarised; the IP-EAR option's encoding; and every malformed recording refused
//! with the reason, never a panic.

mod common;

use std::path::PathBuf;
use std::process::Output;

use serde_json::Value;

fn pmu_with(args: &[&str], stdin: &[u8]) -> Output {
    common::pmu_with_input(args, stdin)
}

fn ok(args: &[&str]) -> String {
    let out = pmu_with(args, b"");
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("UTF-8")
}

fn usage_error(args: &[&str], stdin: &[u8]) -> String {
    let out = pmu_with(args, stdin);
    assert_eq!(out.status.code(), Some(2), "{args:?}: stdout {}", String::from_utf8_lossy(&out.stdout));
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("pmukit-record-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// A small recording of the data EAR on `stream`, and its path.
fn recording(name: &str, extra: &[&str]) -> (PathBuf, Value) {
    let path = temp(name);
    let file = path.display().to_string();
    let mut args = vec!["record", "-o", &file];
    args.extend(extra);
    // The defaults of these tests where `extra` gives none.
    for (option, value) in [("--workload", "stream"), ("--cycles", "2e6"), ("-c", "500")] {
        if !extra.contains(&option) {
            args.extend([option, value]);
        }
    }
    let summary = ok(&args);
    assert!(summary.contains("samples") && summary.contains(&file), "{summary}");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    (path, v)
}

#[test]
fn a_recording_is_versioned_and_keeps_the_raw_registers() {
    let (_, v) = recording("dear.json", &["-e", "DATA_EAR_CACHE_LAT8"]);
    assert_eq!((v["format"].as_str(), v["version"].as_u64()), (Some("pmukit-record"), Some(1)));
    assert_eq!(v["events"][0]["name"], "DATA_EAR_CACHE_LAT8");
    // PMC40: plm 1001, mode 00, umask 0001 (latency >= 8), ism 10.
    let pmc40 = v["registers"].as_array().unwrap().iter().find(|r| r[0] == "PMC40").unwrap()[1].as_u64().unwrap();
    assert_eq!(pmc40, 0b10 << 24 | 0b0001 << 16 | 0b1001);
    let samples = v["samples"].as_array().unwrap();
    assert!(samples.len() > 10, "{}", samples.len());
    assert!(samples.iter().all(|s| s["dear"].as_array().is_some_and(|d| d.len() == 3) && s.get("trace").is_none()));
}

#[test]
fn report_shows_hot_addresses_and_a_latency_histogram_per_level() {
    let (path, _) = recording("report.json", &[]);
    let file = path.display().to_string();
    let svg = temp("latency.svg");
    let text = ok(&["report", &file, "--top", "3", "--svg", &svg.display().to_string()]);
    for want in ["Data EAR, cache mode", "hot instructions", "hot data (64-byte lines)", "latency (cycles) by level", "█"] {
        assert!(text.contains(want), "{want}: {text}");
    }
    assert!(text.lines().all(|l| l.chars().count() <= 80), "80 columns:\n{text}");
    let drawing = std::fs::read_to_string(&svg).unwrap();
    assert!(drawing.starts_with("<svg") && drawing.contains("<rect"), "{drawing}");
    // A real chart: labelled axes, a log latency axis, counts, a colour per level name.
    for want in ["samples</text>", "logarithmic", "<line", "fill=\"#e15759\""] {
        assert!(drawing.contains(want), "{want}: {drawing}");
    }
    let v: Value = serde_json::from_str(&ok(&["report", &file, "--json"])).unwrap();
    assert_eq!(v["command"], "report");
    let dear = &v["dear"];
    assert_eq!(dear["mode"], "cache");
    assert_eq!(dear["samples"], dear["valid"], "the handler reads every sample's capture while frozen");
    let levels: u64 = dear["latency"].as_array().unwrap().iter().map(|l| l["samples"].as_u64().unwrap()).sum();
    assert_eq!(levels, dear["valid"].as_u64().unwrap(), "every cache-mode capture has a latency");
    // Standard input reads the same.
    let stdin = pmu_with(&["report", "-", "--json"], &std::fs::read(&path).unwrap());
    assert_eq!(serde_json::from_slice::<Value>(&stdin.stdout).unwrap()["dear"], *dear);
}

#[test]
fn branch_traces_and_ip_histories_are_reported() {
    let (path, _) = recording("etb.json", &["-e", "ETB_EVENT", "--workload", "branchy"]);
    let text = ok(&["report", &path.display().to_string()]);
    assert!(text.contains("Execution trace buffer") && text.contains("the last sample's trace") && text.contains(" -> "), "{text}");
    // The chart of a recording without latencies says why it has none.
    let svg = temp("etb.svg");
    ok(&["report", &path.display().to_string(), "--svg", &svg.display().to_string()]);
    let drawing = std::fs::read_to_string(&svg).unwrap();
    assert!(drawing.contains("No histogram: the trace buffer"), "{drawing}");
    let (path, v) = recording("ipear.json", &["-e", "CPU_OP_CYCLES", "--ip-ear", "12", "-c", "50000"]);
    let pmc42 = v["registers"].as_array().unwrap().iter().find(|r| r[0] == "PMC42").unwrap()[1].as_u64().unwrap();
    // Table 3-30: plm 1001, mode 100, delay 12.
    assert_eq!(pmc42, 12 << 11 | 0b100 << 8 | 0b1001);
    let v: Value = serde_json::from_str(&ok(&["report", &path.display().to_string(), "--json"])).unwrap();
    let last = v["ip_ear"]["last"].as_array().unwrap();
    assert_eq!(last.len(), 16, "the buffer holds 16 retired IPs: {last:?}");
}

#[test]
fn the_ip_ear_replaces_the_branch_trace_and_has_an_8_bit_delay() {
    let e = usage_error(&["encode", "montecito::ETB_EVENT", "--ip-ear", "4"], b"");
    assert!(e.contains("--ip-ear 4") && e.contains("PMC39 is ignored") && e.contains("BRANCH_EVENT"), "{e}");
    assert!(usage_error(&["encode", "montecito::CPU_OP_CYCLES", "--ip-ear", "256"], b"").contains("give 0 to 255"));
    assert!(usage_error(&["encode", "arm1176::CPU_CYCLES", "--ip-ear", "1"], b"").contains("has no IP event address register"));
    let v: Value = serde_json::from_str(&ok(&["encode", "montecito::CPU_OP_CYCLES", "--ip-ear", "255", "--json"])).unwrap();
    assert_eq!(v["registers"]["PMC42"], "0x7fc09", "plm 1001, mode 100, delay 255");
}

#[test]
fn record_refuses_what_it_cannot_do() {
    assert!(usage_error(&["record", "--pmu", "arm1176", "-e", "CPU_CYCLES", "--cycles", "1e5", "-o", "/dev/null"], b"")
        .contains("no event address registers"));
    assert!(usage_error(&["record", "-c", "0", "--cycles", "1e5", "-o", "/dev/null"], b"").contains("sampling period must be 1 to"));
    // A program, as `pmu stat -- PROG` takes one (issue 42): named, with what does
    // count it, whichever PMU was asked for; nothing is written.
    for pmu in ["montecito", "arm1176", "sparc-t4"] {
        let e = usage_error(&["record", "--pmu", pmu, "-o", "/nonexistent-pmukit/r.json", "--", "./prog", "-x"], b"");
        assert!(e.contains("cannot sample `./prog`") && e.contains("pmu stat [--pmu PMU] -- PROG") && e.contains("--trace FILE"), "{e}");
    }
    let json = pmu_with(&["record", "--json", "--", "./prog"], b"");
    let v: Value = serde_json::from_slice(&json.stderr).expect("a JSON error on standard error");
    assert_eq!((v["error"]["token"].as_str(), v["error"]["exit_code"].as_u64()), (Some("./prog"), Some(2)), "{v}");
    // The file is made before the run: a long run is not wasted on a path that
    // cannot be written.
    let started = std::time::Instant::now();
    let out = pmu_with(&["record", "--cycles", "1e12", "-c", "1e9", "-o", "/nonexistent-pmukit/r.json"], b"");
    assert_eq!(out.status.code(), Some(1), "a file that cannot be written is a runtime failure");
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot create /nonexistent-pmukit/r.json"));
    assert!(started.elapsed() < std::time::Duration::from_secs(10), "refused before running");
    // A period that could write more samples than a recording holds is refused up
    // front, with the period that fits.
    let e = usage_error(&["record", "-c", "1", "--cycles", "1e9", "-o", "/dev/null"], b"");
    assert!(e.contains("-c 1 over 1000000000 cycles could take up to 2000000000 samples") && e.contains("give -c "), "{e}");
}

#[test]
fn malformed_recordings_are_refused_with_the_reason() {
    let (path, v) = recording("good.json", &["--cycles", "5e5"]);
    let good = std::fs::read_to_string(&path).unwrap();
    let report = |text: &str| usage_error(&["report", "-"], text.as_bytes());
    assert!(report("").contains("not a pmu recording"));
    assert!(report("{\"format\": \"perf\"}").contains("its \"format\" is \"perf\", expected \"pmukit-record\""));
    let mut newer = v.clone();
    newer["version"] = 2.into();
    assert!(report(&newer.to_string()).contains("a version 2 recording; this pmu reads version 1"));
    let mut bad_event = v.clone();
    bad_event["samples"][0]["events"] = serde_json::json!([7]);
    assert!(report(&bad_event.to_string()).contains("sample 0 names event 7, but the recording has 1"));
    let mut bad_thread = v.clone();
    bad_thread["samples"][0]["thread"] = 5.into();
    assert!(report(&bad_thread.to_string()).contains("sample 0 is of thread 5"));
    let mut unknown = v.clone();
    unknown["extra"] = 1.into();
    assert!(report(&unknown.to_string()).contains("unknown field `extra`"));
    let mut arm = v;
    arm["pmu"] = "arm1176".into();
    assert!(report(&arm.to_string()).contains("only Montecito's capture registers"));
    assert!(report(&good[..good.len() / 2]).contains("not a pmu recording"), "truncated");
    let missing = pmu_with(&["report", "/nonexistent-pmukit/r.json"], b"");
    assert_eq!(missing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("cannot read the recording"));
}
