//! Every command's `--json`, and its errors, match the one schema documented in
//! docs/json.md (`docs/pmu.schema.json`, JSON Schema 2020-12): an object with `schema`
//! and `command`, register values as hex strings, every event naming its PMU.

mod common;

use std::collections::BTreeSet;
use std::process::Output;

use serde_json::Value;

fn pmu(args: &[&str], stdin: &[u8]) -> Output {
    common::pmu_with_input(args, stdin)
}

fn validator() -> jsonschema::Validator {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/pmu.schema.json");
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).expect("docs/pmu.schema.json")).expect("the schema is JSON");
    jsonschema::validator_for(&schema).expect("a valid JSON Schema")
}

/// Check one document; returns its `command`.
fn check(v: &jsonschema::Validator, what: &str, text: &[u8]) -> String {
    let doc: Value = serde_json::from_slice(text).unwrap_or_else(|e| panic!("{what}: not JSON ({e}): {}", String::from_utf8_lossy(text)));
    let errors: Vec<String> = v.iter_errors(&doc).map(|e| format!("{} at {}", e, e.instance_path())).collect();
    assert!(errors.is_empty(), "{what} does not match docs/pmu.schema.json:\n{}", errors.join("\n"));
    doc["command"].as_str().unwrap_or_default().to_string()
}

#[test]
fn every_commands_json_matches_the_schema() {
    let v = validator();
    let mut buffer = vec![0u8; 512];
    buffer[8] = 7; // one IMMU hit count
    buffer[0x1f0] = 1; // a reserved field set: a warning
    let tmp = std::env::temp_dir().join(format!("pmukit-json-schema-{}", std::process::id()));
    let export_dir = tmp.display().to_string();
    let model_dir = tmp.join("arm/arm/arm1176").display().to_string();
    std::fs::create_dir_all(&tmp).unwrap();
    let recordings: Vec<String> =
        ["dear", "etb", "ipear", "iear"].iter().map(|n| tmp.join(format!("{n}.json")).display().to_string()).collect();
    // The recordings the report cases read, one per capture unit.
    for (file, events) in recordings.iter().zip([
        &["-e", "DATA_EAR_CACHE_LAT4", "--workload", "stream"][..],
        &["-e", "ETB_EVENT", "--workload", "branchy"],
        &["-e", "CPU_OP_CYCLES", "--ip-ear", "3"],
        &["-e", "L1I_EAR_TLB_ALL", "--workload", "mixed"],
    ]) {
        let mut args = vec!["record", "--cycles", "5e5", "-c", "50", "-o", file.as_str()];
        args.extend(events);
        assert!(pmu(&args, b"").status.success(), "{args:?}");
    }
    let cases: Vec<(Vec<&str>, Vec<u8>)> = vec![
        (vec!["list", "arm1156"], vec![]),
        (vec!["list", "-v", "--pmu", "montecito", "BR_MISPRED*"], vec![]),
        (vec!["list", "--metrics"], vec![]),
        (vec!["describe", "montecito::BR_MISPRED_DETAIL"], vec![]),
        (vec!["describe", "--pmu", "sparc-t4", "INSTR.ALL:u"], vec![]),
        (vec!["describe", "ipc"], vec![]),
        (vec!["encode", "--pmu", "montecito", "L2D_MISSES", "CPU_OP_CYCLES:all"], vec![]),
        (vec!["encode", "sparc-kt::L2_MISSES"], vec![]),
        (vec!["schedule", "--pmu", "arm1176", "CPU_CYCLES", "INSTR_EXEC", "BR_EXEC", "DCACHE_MISS"], vec![]),
        (vec!["decode", "montecito", "PMC4", "0xffffffff80000000"], vec![]),
        (vec!["decode", "sparc-t4", "PCR", "0x1886"], vec![]),
        (vec!["stat", "--cycles", "1e6"], vec![]),
        (vec!["stat", "--cycles", "1e6", "-r", "2", "-M", "ipc"], vec![]),
        (vec!["stat", "--pmu", "sparc-t4", "--threads", "2", "--cycles", "2e6", "-I", "1", "-A"], vec![]),
        (vec!["stat", "--pmu", "montecito", "--cycles", "1e6", "--per-thread", "-e", "CPU_OP_CYCLES:all"], vec![]),
        (vec!["stat", "--pmu", "sparc-kt", "--kt-deny", "0", "--cycles", "1e6"], vec![]),
        (vec!["stat", "--live", "-e", "task-clock,page-faults,cycles", "--", "true"], vec![]),
        (vec!["workloads"], vec![]),
        (vec!["hv", "--machine", "kt", "api_set_version 0x209 1 0", "kt_get_perfreg 1", "kt_get_perfreg 99"], vec![]),
        (vec!["metrics", "--expr", "A / B", "A=1", "B=2"], vec![]),
        (vec!["metrics", "--pmu", "arm1176", "-"], b"2000,,cycles,1,100.00,,\n500,,instructions,1,100.00,,\n".to_vec()),
        (vec!["metrics", "--expr", "A / B", "A=1", "B=0"], vec![]),
        (vec!["export", "perf-json", "arm1176", &export_dir], vec![]),
        (vec!["import", "perf-json", "--pmu", "arm1176", &model_dir], vec![]),
        (vec!["record", "--cycles", "2e5", "-c", "100", "-o", "/dev/null"], vec![]),
        (vec!["report", &recordings[0]], vec![]),
        (vec!["report", &recordings[1]], vec![]),
        (vec!["report", &recordings[2]], vec![]),
        (vec!["report", &recordings[3]], vec![]),
        (vec!["mmustat", "decode", "-"], buffer.clone()),
        (vec!["mmustat", "decode", "-"], buffer[..100].to_vec()),
    ];
    let mut commands = BTreeSet::new();
    for (args, stdin) in &cases {
        // Before a `--`, after which the arguments are the counted command's.
        let mut with = args.clone();
        with.insert(with.iter().position(|a| *a == "--").unwrap_or(with.len()), "--json");
        let out = pmu(&with, stdin);
        let what = format!("pmu {}", with.join(" "));
        // A dump that ends inside a buffer fails, after a closed JSON document saying so.
        assert!(out.status.success() || stdin.len() % 512 != 0, "{what}: {}", String::from_utf8_lossy(&out.stderr));
        commands.insert(check(&v, &what, &out.stdout));
    }
    // Every command that takes --json was checked (`pmu --help` lists them).
    let help = String::from_utf8(pmu(&["--help"], b"").stdout).unwrap();
    let listed: BTreeSet<String> = help
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| !l.is_empty())
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| !["completions", "man", "help"].contains(c))
        .map(|c| if c == "mmustat" { "mmustat decode".to_string() } else { c.to_string() })
        .collect();
    assert_eq!(commands, listed, "commands checked against the schema vs commands pmu has");
    let _ = std::fs::remove_dir_all(&tmp);
}

#[test]
fn every_error_is_json_with_its_parts() {
    let v = validator();
    let cases: &[&[&str]] = &[
        &["encode", "arm1176::INSTR_EXEC.X"],
        &["encode", "arm1176:INSTR_EXEC"],
        &["describe", "nosuchthing"],
        &["schedule", "--pmu", "nopmu", "X"],
        &["decode", "arm1176", "PMCR", "0xzz"],
        &["stat", "-M", "nosuchmetric"],
        &["stat", "--cycels", "5"],
        &["stat", "--trace", "/nonexistent/trace"],
        &["hv", "nosuchcall"],
        &["list", "nothing-matches-this-*"],
        &["mmustat", "decode", "/nonexistent/dump"],
        &["metrics", "--expr", "A / NOPE", "A=1"],
    ];
    for args in cases {
        let mut with = args.to_vec();
        with.push("--json");
        let out = pmu(&with, b"");
        let what = format!("pmu {}", with.join(" "));
        assert!(matches!(out.status.code(), Some(1 | 2)), "{what}: {:?}", out.status);
        assert!(out.stdout.is_empty(), "{what}: nothing on standard output");
        check(&v, &what, &out.stderr);
        let e: Value = serde_json::from_slice(&out.stderr).unwrap();
        assert_eq!(e["error"]["exit_code"].as_i64(), out.status.code().map(i64::from), "{what}");
    }
}
