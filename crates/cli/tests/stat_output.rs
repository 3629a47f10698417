//! `pmu stat` output as perf prints it (issue 11): metrics chosen with `-M`,
//! `--metric-only`, and `-x` columns in perf 6.1's order with notes on stderr.

use std::process::{Command, Output};

use serde_json::Value;

fn pmu(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pmu")).args(args).output().expect("run pmu")
}

fn ok(args: &[&str]) -> (String, String) {
    let out = pmu(args);
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    (String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap())
}

fn json(args: &[&str]) -> Value {
    let mut with = args.to_vec();
    with.push("--json");
    serde_json::from_str(&ok(&with).0).expect("JSON")
}

fn names(v: &Value, key: &str) -> Vec<String> {
    v[key].as_array().unwrap().iter().map(|e| e["name"].as_str().unwrap().to_string()).collect()
}

#[test]
fn dash_m_counts_what_a_metric_needs_and_prints_only_it() {
    let v = json(&["stat", "--cycles", "2e7", "-M", "branch_prediction_ratio"]);
    assert_eq!(names(&v, "events"), ["BR_MISPREDICT", "BR_EXEC"]);
    assert_eq!(names(&v, "metrics"), ["branch_prediction_ratio"]);
    // A group names all its metrics; names and groups ignore case.
    let v = json(&["stat", "--cycles", "2e7", "-M", "BRANCH"]);
    let got = names(&v, "metrics");
    assert!(got.contains(&"branch_misprediction_ratio".to_string()) && got.contains(&"return_prediction_ratio".to_string()), "{got:?}");
    // -e events are counted beside them.
    let v = json(&["stat", "--cycles", "2e7", "-e", "DCACHE_MISS", "-M", "ipc"]);
    assert_eq!(names(&v, "events"), ["DCACHE_MISS", "INSTR_EXEC", "CPU_CYCLES"]);
    assert_eq!(names(&v, "metrics"), ["ipc"]);
}

#[test]
fn a_metrics_events_are_counted_at_the_same_time() {
    // Five events for two general counters: first fit would put BR_EXEC with
    // INSTR_EXEC and BR_MISPREDICT in a later group; -M keeps the ratio's two events
    // in one group, so they ran for exactly the same time.
    let v = json(&["stat", "--cycles", "4e7", "-e", "INSTR_EXEC,BR_EXEC,DCACHE_HIT,DCACHE_MISS", "-M", "branch_misprediction_ratio"]);
    let events = v["events"].as_array().unwrap();
    let running = |n: &str| events.iter().find(|e| e["name"] == n).unwrap()["running"].as_u64().unwrap();
    assert_eq!(running("BR_EXEC"), running("BR_MISPREDICT"));
    assert!(running("BR_EXEC") < 40_000_000);
}

#[test]
fn an_unknown_metric_is_a_usage_error_with_suggestions() {
    let out = pmu(&["stat", "-M", "branch_predicton_ratio"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unknown metric or metric group 'branch_predicton_ratio'") && err.contains("branch_prediction_ratio"), "{err}");
}

#[test]
fn separated_output_has_perfs_columns_and_notes_go_to_stderr() {
    let (out, err) = ok(&["stat", "--cycles", "2e7", "-x", ",", "-M", "branch_prediction_ratio,ipc", "-e", "DCACHE_HIT"]);
    let lines: Vec<Vec<&str>> = out.lines().map(|l| l.split(',').collect()).collect();
    assert!(lines.iter().all(|f| f.len() == 7), "{out}");
    // count, unit, event, run time, % running, metric value, metric unit.
    let mispredict = lines.iter().find(|f| f[2] == "BR_MISPREDICT").unwrap();
    assert!(mispredict[0].parse::<u64>().is_ok() && mispredict[1].is_empty());
    assert!(mispredict[3].parse::<u64>().is_ok() && mispredict[4].parse::<f64>().is_ok());
    assert!(mispredict[5].parse::<f64>().is_ok() && mispredict[5].split('.').nth(1).unwrap().len() == 1, "{out}");
    assert_eq!(mispredict[6], "%  branch_prediction_ratio");
    let ipc = lines.iter().find(|f| f[6] == "ipc").unwrap();
    assert_eq!(ipc[5].split('.').nth(1).unwrap().len(), 2, "no unit: two decimals, as perf");
    assert!(!out.contains("note") && err.contains("pmu: note:") && err.contains("multiplexed"), "{err}");
}

#[test]
fn refused_events_print_not_supported_and_unscheduled_ones_not_counted() {
    let (out, _) = ok(&["stat", "--pmu", "sparc-kt", "--cycles", "1e7", "--kt-l2-busy", "-x,", "-e", "L2_MISSES,sparc-kt-dram::ALL_READS"]);
    let first: Vec<&str> = out.lines().next().unwrap().split(',').collect();
    assert_eq!((first[0], first[2]), ("<not supported>", "L2_MISSES"), "{out}");
    let (human, _) = ok(&["stat", "--pmu", "sparc-kt", "--cycles", "1e7", "--kt-l2-busy", "-e", "L2_MISSES"]);
    assert!(human.contains("<not supported>"), "{human}");
}

#[test]
fn metric_only_prints_metric_columns_alone() {
    let (out, _) = ok(&["stat", "--cycles", "2e7", "--metric-only", "-M", "branch"]);
    assert!(!out.contains("BR_EXEC"), "{out}");
    let head = out.lines().find(|l| l.contains("branch_prediction_ratio")).unwrap();
    assert!(head.contains("%  branch_misprediction_ratio"), "{out}");
    let (csv, _) = ok(&["stat", "--cycles", "2e7", "--metric-only", "-x;", "-M", "branch_prediction_ratio,ipc"]);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], "%  branch_prediction_ratio;ipc;");
    let values: Vec<&str> = lines[1].split(';').collect();
    assert_eq!(values.len(), 3);
    assert!(values[0].parse::<f64>().is_ok() && values[1].parse::<f64>().is_ok() && values[2].is_empty());
    let v = json(&["stat", "--cycles", "2e7", "--metric-only", "-M", "ipc"]);
    assert!(v["events"].as_array().unwrap().is_empty() && names(&v, "metrics") == ["ipc"]);
}

#[test]
fn cycles_count_on_the_cycle_counter_the_whole_run() {
    // Issue 11: the default ARM11 run had CPU_CYCLES in one of three groups (33%
    // running) while CCNT idled in the others.
    let v = json(&["stat", "--cycles", "2e7"]);
    let cycles = &v["events"][0];
    assert_eq!(cycles["name"], "CPU_CYCLES");
    assert_eq!((cycles["running"].as_u64(), cycles["scaled"].as_bool()), (Some(20_000_000), Some(false)));
    assert_eq!(cycles["counters"], serde_json::json!(["CCNT"]));
}

#[test]
fn dash_r_averages_runs_with_perfs_variance_column() {
    let v = json(&["stat", "--cycles", "1e7", "-r", "3", "-e", "CPU_CYCLES,INSTR_EXEC"]);
    assert_eq!(v["runs"], 3);
    let single: Vec<u64> = (1..=3)
        .map(|seed| {
            json(&["stat", "--cycles", "1e7", "--seed", &seed.to_string(), "-e", "CPU_CYCLES,INSTR_EXEC"])["events"][1]["count"]
                .as_u64()
                .unwrap()
        })
        .collect();
    let mean = single.iter().sum::<u64>() as f64 / 3.0;
    assert_eq!(v["events"][1]["count"].as_u64().unwrap(), mean.round() as u64);
    let sd = (single.iter().map(|&c| (c as f64 - mean).powi(2)).sum::<f64>() / 2.0 / 3.0).sqrt();
    assert!((v["events"][1]["noise_pct"].as_f64().unwrap() - 100.0 * sd / mean).abs() < 1e-9);
    assert_eq!(v["events"][0]["noise_pct"], 0.0, "cycles are the same every run");
    let (human, _) = ok(&["stat", "--cycles", "1e7", "-r", "3", "-e", "CPU_CYCLES,INSTR_EXEC"]);
    assert!(human.contains("(seeds 1-3, 10,000,000 cycles) on arm1176 (3 runs)") && human.contains("( +-  0.00% )"), "{human}");
    // -x: the variance follows the event name, as perf 6.1 prints it.
    let (csv, _) = ok(&["stat", "--cycles", "1e7", "-r", "2", "-x,", "-e", "CPU_CYCLES"]);
    assert!(csv.starts_with("10000000,,CPU_CYCLES,0.00%,10000000,100.00,"), "{csv}");
}

#[test]
fn dash_i_prints_each_intervals_counts() {
    let v = json(&["stat", "--cycles", "2.5e7", "-I", "10", "-e", "CPU_CYCLES,INSTR_EXEC,BR_EXEC,BR_MISPREDICT"]);
    let intervals = v["intervals"].as_array().unwrap();
    let times: Vec<u64> = intervals.iter().map(|i| i["time_ns"].as_u64().unwrap()).collect();
    assert_eq!(times, [10_000_000, 20_000_000, 25_000_000]);
    // The intervals add up to the run: raw counts and times exactly.
    for (k, total) in v["events"].as_array().unwrap().iter().enumerate() {
        for field in ["raw", "enabled", "running"] {
            let sum: u64 = intervals.iter().map(|i| i["events"][k][field].as_u64().unwrap()).sum();
            assert_eq!(sum, total[field].as_u64().unwrap(), "{} {field}", total["name"]);
        }
    }
    let (csv, _) = ok(&["stat", "--cycles", "2e7", "-I", "10", "-x,", "-e", "CPU_CYCLES"]);
    assert_eq!(csv.lines().next().unwrap(), "     0.010000000,10000000,,CPU_CYCLES,10000000,100.00,,");
    let (human, _) = ok(&["stat", "--cycles", "2e7", "-I", "10", "-e", "CPU_CYCLES"]);
    // perf 6.1 here: `     0.050117270                 20      context-switches`, the
    // time, a space, then the count in 18 columns.
    assert!(
        human.contains("#           time             counts unit events\n     0.010000000         10,000,000      CPU_CYCLES"),
        "{human}"
    );
    assert_eq!(pmu(&["stat", "-I", "10", "-r", "2"]).status.code(), Some(2));
}

#[test]
fn dash_o_writes_the_report_to_a_file_and_no_big_num_drops_separators() {
    let path = std::env::temp_dir().join(format!("pmu-stat-o-{}.txt", std::process::id()));
    let (out, _) = ok(&["stat", "--cycles", "1e7", "-e", "CPU_CYCLES", "--no-big-num", "-o", path.to_str().unwrap()]);
    assert!(out.is_empty());
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert!(text.contains("10000000      CPU_CYCLES"), "{text}");
    let out = pmu(&["stat", "--cycles", "1e7", "-o", "/nonexistent/dir/out.txt"]);
    assert_eq!(out.status.code(), Some(1), "an unwritable file is a runtime failure");
}

#[test]
fn ctrl_c_prints_the_counts_so_far() {
    let child = Command::new(env!("CARGO_BIN_EXE_pmu"))
        .args(["stat", "--cycles", "1e13", "--json"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("run pmu");
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let kill = Command::new("kill").args(["-INT", &child.id().to_string()]).status().expect("kill");
    assert!(kill.success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "128 + SIGINT");
    let v: Value = serde_json::from_slice(&out.stdout).expect("the report, as JSON");
    let cycles = v["cycles"].as_u64().unwrap();
    assert!(cycles > 0 && cycles < 10_000_000_000_000);
    assert_eq!(v["events"][0]["count"].as_u64(), Some(cycles), "CPU_CYCLES counted up to the interruption");
    assert!(v["events"].as_array().unwrap().iter().all(|e| e["enabled"].as_u64() == Some(cycles)));
    assert!(v["notes"].as_array().unwrap().iter().any(|n| n.as_str().unwrap().starts_with("interrupted after")));
}

/// `-A` / `--per-thread`: a line per hardware thread in every rendering, led by perf's
/// column (`CPU0`, or `comm-N`), and each thread's counts in the JSON.
#[test]
fn dash_a_and_per_thread_split_the_counts_by_thread() {
    let base = ["stat", "--pmu", "sparc-t4", "--threads", "2", "--cycles", "1e7", "-e", "CYCLES,INSTR.ALL"];
    let with = |extra: &[&'static str]| [&base[..], extra].concat();
    let (human, _) = ok(&with(&["-A"]));
    let lines: Vec<&str> = human.lines().filter(|l| l.contains("INSTR.ALL")).collect();
    assert!(lines.len() == 2 && lines[0].starts_with("CPU0 ") && lines[1].starts_with("CPU1 "), "{human}");
    let (csv, _) = ok(&with(&["-A", "-x,"]));
    assert!(csv.lines().any(|l| l.starts_with("CPU1,") && l.contains(",INSTR.ALL,")), "{csv}");
    let (threads, _) = ok(&with(&["--per-thread", "-x;"]));
    assert!(threads.lines().any(|l| l.starts_with("mixed-1;") && l.contains(";CYCLES;")), "{threads}");
    let v = json(&with(&["-A"]));
    assert_eq!(v["aggregation"], "cpu");
    let units = v["events"][1]["units"].as_array().unwrap();
    let sum: u64 = units.iter().map(|u| u["count"].as_u64().unwrap()).sum();
    assert_eq!(sum, v["events"][1]["count"].as_u64().unwrap());
    assert_eq!(v["unit_metrics"][1]["name"], "CPU1");
    // The two are one choice.
    assert_eq!(pmu(&with(&["-A", "--per-thread"])).status.code(), Some(2));
}
