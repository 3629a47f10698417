//! Numbers a user can trust (issue 41, item 1), from the command line: each metric's
//! events share a group where they fit, a metric from counts of different groups is
//! marked as an estimate, a value outside its metric's domain is never printed, and
//! `-r` metrics come from the mean counts.

use std::process::{Command, Output};

use serde_json::Value;

fn pmu(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pmu")).args(args).output().expect("run pmu")
}

fn ok(args: &[&str]) -> String {
    let out = pmu(args);
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

fn json(args: &[&str]) -> Value {
    let mut with = args.to_vec();
    with.push("--json");
    serde_json::from_str(&ok(&with)).expect("JSON")
}

fn metric<'a>(v: &'a Value, name: &str) -> Option<&'a Value> {
    v["metrics"].as_array().unwrap().iter().find(|m| m["name"] == name)
}

fn notes(v: &Value) -> Vec<String> {
    v["notes"].as_array().unwrap().iter().map(|n| n.as_str().unwrap().to_string()).collect()
}

/// ARM1176 has two event counters: `noncacheable_accesses` (DCACHE_ACCESS -
/// DCACHE_HIT) shares a group of its own with DCACHE_HIT counted there too, so it is
/// never negative; the three-event `dcache_cacheable_miss_ratio_estimate` cannot fit
/// and is an estimate; no note claims that a pair that fits cannot be counted at once.
#[test]
fn arm1176_cache_metrics_keep_their_events_together_or_say_they_are_estimates() {
    let v = json(&["stat", "-w", "compute", "-M", "cache", "--cycles", "4e7"]);
    let hit = v["events"].as_array().unwrap().iter().find(|e| e["name"] == "DCACHE_HIT").unwrap();
    let access = v["events"].as_array().unwrap().iter().find(|e| e["name"] == "DCACHE_ACCESS").unwrap();
    assert!(hit["running"].as_u64() > access["running"].as_u64(), "DCACHE_HIT counts in two groups: {hit} {access}");
    let nc = metric(&v, "noncacheable_accesses").expect("noncacheable_accesses printed");
    assert!(nc["value"].as_f64().unwrap() >= 0.0 && nc.get("estimate").is_none(), "{nc}");
    let notes = notes(&v);
    // An estimate: printed as one, or, outside its domain, left out with a note.
    match metric(&v, "dcache_cacheable_miss_ratio_estimate") {
        Some(m) => assert_eq!(m["estimate"], true, "{m}"),
        None => assert!(notes.iter().any(|n| n.starts_with("metric dcache_cacheable_miss_ratio_estimate is not shown")), "{notes:?}"),
    }
    let estimates = v["metrics"].as_array().unwrap().iter().any(|m| m["estimate"] == true);
    assert_eq!(notes.iter().any(|n| n.starts_with("~ marks an estimate")), estimates, "{notes:?}");
    assert!(!notes.iter().any(|n| n.starts_with("DCACHE_ACCESS, DCACHE_HIT cannot")), "{notes:?}");
    let mut unique = notes.clone();
    unique.dedup();
    assert_eq!(unique.len(), notes.len(), "no note twice: {notes:?}");
    // KT's shares always come from different groups: `~` marks them in the text.
    let text = ok(&["stat", "--pmu", "sparc-kt", "--cycles", "1e8"]);
    let shown = text.lines().filter(|l| l.contains("_share") && l.contains('#')).collect::<Vec<_>>();
    assert!(shown.iter().all(|l| l.contains("~")), "{text}");
}

/// KT's L2 miss kinds share one PERF_CONFIG: the shares are estimates, and one
/// outside 0-100 % is left out with a note naming its value, domain and the events'
/// running shares.
#[test]
fn kt_shares_are_estimates_and_never_printed_beyond_one_hundred_percent() {
    let v = json(&["stat", "--pmu", "sparc-kt", "--cycles", "2e7"]);
    for name in ["l2_miss_remote_share", "l2_miss_local_share"] {
        match metric(&v, name) {
            Some(m) => {
                assert_eq!(m["estimate"], true, "{m}");
                assert!((0.0..=100.0).contains(&m["value"].as_f64().unwrap()), "{m}");
            }
            None => assert!(
                notes(&v).iter().any(|n| n.starts_with(&format!("metric {name} is not shown")) && n.contains("0% to 100%")),
                "{:?}",
                notes(&v)
            ),
        }
    }
}

/// perf derives `-r` metrics from the mean counts, per CPU too: IPC × CPI is 1.
#[test]
fn repeated_runs_derive_metrics_from_mean_counts_per_cpu_too() {
    // Long enough for every strand's software thread to have had its turns (MSP1).
    let v = json(&["stat", "--pmu", "sparc-t4", "-r", "3", "-A", "--cycles", "4e7", "-e", "CYCLES,INSTR.ALL"]);
    let units = v["unit_metrics"].as_array().unwrap();
    let mut checked = 0;
    for u in units {
        let value = |name: &str| u["metrics"].as_array().unwrap().iter().find(|m| m["name"] == name).map(|m| m["value"].as_f64().unwrap());
        if let (Some(ipc), Some(cpi)) = (value("ipc"), value("cpi")) {
            assert!((ipc * cpi - 1.0).abs() < 1e-9, "{u}");
            checked += 1;
        }
    }
    assert!(checked >= 4, "{units:?}");
    let ipc = metric(&v, "ipc").unwrap()["value"].as_f64().unwrap();
    let cpi = metric(&v, "cpi").unwrap()["value"].as_f64().unwrap();
    assert!((ipc * cpi - 1.0).abs() < 1e-9);
}
