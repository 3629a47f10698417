//! The `pmu` command: machine interface, exit codes and error messages.

use std::process::{Command, Output};

use serde_json::Value;

fn pmu(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pmu")).args(args).output().expect("run pmu")
}

fn ok_json(args: &[&str]) -> Value {
    let out = pmu(args);
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("JSON output")
}

/// Runs `pmu`, expects exit code 1 (a runtime failure, such as a missing file; issue
/// 11) and returns stderr.
fn runtime_error(args: &[&str]) -> String {
    let out = pmu(args);
    assert_eq!(out.status.code(), Some(1), "{args:?}: stderr {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Runs `pmu`, expects exit code 2 and returns stderr.
fn usage_error(args: &[&str]) -> String {
    let out = pmu(args);
    assert_eq!(out.status.code(), Some(2), "{args:?}: stdout {}", String::from_utf8_lossy(&out.stdout));
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn list_json_has_the_stable_fields() {
    let v = ok_json(&["list", "arm1176", "--json"]);
    assert_eq!(v["schema"], 1);
    let events = v["events"].as_array().unwrap();
    let e = events.iter().find(|e| e["name"] == "INSTR_EXEC").unwrap();
    assert_eq!(e["pmu"], "arm1176");
    assert_eq!(e["code"], 7);
    assert!(e["umasks"].is_array());
    assert!(e["description"].as_str().unwrap().contains("Instructions executed"));
    assert!(events.iter().all(|e| e["name"] != "FIQ_DISABLED_CYCLES"), "ARM1156-only events are not listed for arm1176");
    assert!(ok_json(&["list", "--json"])["events"].as_array().unwrap().len() > events.len());
}

#[test]
fn encode_json_has_the_stable_fields() {
    let v = ok_json(&["encode", "CPU_CYCLES", "arm1176::INSTR_EXEC", "--json"]);
    assert_eq!(v["pmu"], "arm1176");
    let e = &v["events"][1];
    assert_eq!(
        (e["input"].as_str(), e["name"].as_str(), e["code"].as_u64(), e["umask"].as_u64()),
        (Some("arm1176::INSTR_EXEC"), Some("INSTR_EXEC"), Some(7), Some(0))
    );
    assert_eq!(e["counters"], serde_json::json!(["PMN0", "PMN1"]));
    assert_eq!(e["registers"]["PMCR"], "0x700000");
    assert_eq!(v["events"][0]["counters"], serde_json::json!(["CCNT", "PMN0", "PMN1"]));
}

#[test]
fn encode_of_an_uncountable_set_exits_2_with_the_reason() {
    let err = usage_error(&["encode", "INSTR_EXEC", "BR_EXEC", "DCACHE_MISS"]);
    assert!(err.contains("PMN0, PMN1") && err.contains("multiplex"), "{err}");
}

#[test]
fn decode_json_has_the_stable_fields() {
    let v = ok_json(&["decode", "arm1176", "PMCR", "0x00706071", "--json"]);
    assert_eq!(v["register"], "PMCR");
    assert_eq!(v["value"], "0x706071");
    let f = v["fields"].as_array().unwrap().iter().find(|f| f["name"] == "EvtCount0").unwrap().clone();
    assert_eq!((f["bits"].as_str(), f["value"].as_u64(), f["meaning"].as_str()), (Some("27:20"), Some(7), Some("INSTR_EXEC")));
}

#[test]
fn decode_human_output_draws_the_register() {
    let out = pmu(&["decode", "arm1156", "PMCR", "0x40000001"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert!(text.contains("| FCC |") && text.contains("EvtCount0"), "{text}");
}

#[test]
fn stat_json_has_the_stable_fields() {
    let v = ok_json(&["stat", "-e", "CPU_CYCLES,INSTR_EXEC", "--cycles", "1e6", "--json"]);
    assert_eq!(v["pmu"], serde_json::json!(["arm1176"]));
    assert_eq!(v["workload"], "mixed");
    let e = &v["events"][0];
    assert_eq!(e["name"], "CPU_CYCLES");
    assert_eq!(e["count"], 1_000_000);
    assert_eq!((e["enabled"].as_u64(), e["running"].as_u64(), e["scaled"].as_bool()), (Some(1_000_000), Some(1_000_000), Some(false)));
    let m = v["metrics"].as_array().unwrap();
    assert!(m.iter().any(|m| m["name"] == "ipc" && m["value"].is_number()));
}

#[test]
fn stat_without_arguments_counts_the_default_set_with_multiplexing() {
    let out = pmu(&["stat", "--cycles", "2e7"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    for needle in ["Performance counter stats", "CPU_CYCLES", "INSTR_EXEC", "DCACHE_MISS", "seconds time elapsed", "%"] {
        assert!(text.contains(needle), "{needle} missing:\n{text}");
    }
}

#[test]
fn stat_csv_output_follows_perf_stat_x() {
    let out = pmu(&["stat", "-e", "CPU_CYCLES", "--cycles", "1000", "-x", ","]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.lines().next().unwrap(), "1000,,CPU_CYCLES,1000,100.00,,");
}

#[test]
fn workloads_json_lists_names_and_descriptions() {
    let v = ok_json(&["workloads", "--json"]);
    let names: Vec<&str> = v["workloads"].as_array().unwrap().iter().map(|w| w["name"].as_str().unwrap()).collect();
    for w in ["compute", "branchy", "stream", "mixed"] {
        assert!(names.contains(&w));
    }
}

#[test]
fn describe_shows_availability_and_encoding() {
    let v = ok_json(&["describe", "arm1156::FIQ_DISABLED_CYCLES", "--json"])["event"].clone();
    assert_eq!(v["available_on"], serde_json::json!(["arm1156"]));
    assert_eq!(v["encoding"]["registers"]["PMCR"], "0x1300000");
}

/// Issue 43, item 1: an event whose simulated count an assumed value shapes says so,
/// with the `--machine-config` key and its value (docs/assumptions.md).
#[test]
fn describe_names_the_assumptions_an_event_depends_on() {
    let v = ok_json(&["describe", "montecito::FE_LOST_BW.BR_ILOCK", "--json"])["event"].clone();
    let listed = v["assumptions"].as_array().unwrap();
    assert!(listed.contains(&serde_json::json!({"key": "[core] br_interlock_cycles", "value": "1"})), "{listed:?}");
    assert!(!listed.iter().any(|a| a["key"] == "[direction] entries"), "a predictor's size does not shape it: {listed:?}");
    // The text wraps at 80 columns.
    let words = |args: &[&str]| String::from_utf8_lossy(&pmu(args).stdout).split_whitespace().collect::<Vec<_>>().join(" ");
    let text = words(&["describe", "montecito::FE_LOST_BW.BR_ILOCK"]);
    assert!(text.contains("[core] br_interlock_cycles = 1") && text.contains("docs/assumptions.md"), "{text}");
    // Without a unit mask: what any of them depends on.
    let v = ok_json(&["describe", "montecito::FE_LOST_BW", "--json"])["event"].clone();
    let keys: Vec<&str> = v["assumptions"].as_array().unwrap().iter().map(|a| a["key"].as_str().unwrap()).collect();
    assert!(keys.contains(&"[core] br_interlock_cycles") && keys.contains(&"[core] resteer_cycles"), "{keys:?}");
    // Every cycle counts alike, whatever stalls it: no assumption shapes the cycle
    // counters first-hand.
    assert_eq!(ok_json(&["describe", "montecito::CPU_OP_CYCLES.ALL", "--json"])["event"]["assumptions"], serde_json::json!([]));
    let text = words(&["describe", "arm1176::CPU_CYCLES"]);
    assert!(text.contains("none: no labelled assumption"), "{text}");
    let text = words(&["describe", "montecito::BACK_END_BUBBLE.ALL"]);
    assert!(text.contains("all 37 labelled assumptions") && text.contains("stalled cycles"), "{text}");
}

#[test]
fn bad_input_unknown_event_suggests_the_nearest() {
    let err = usage_error(&["encode", "INSTR_EXE"]);
    assert!(err.contains("unknown event 'INSTR_EXE'") && err.contains("INSTR_EXEC") && err.contains("column 1"), "{err}");
}

#[test]
fn bad_input_event_not_available_on_this_core() {
    let err = usage_error(&["encode", "arm1136::PROC_CALL_EXEC"]);
    assert!(err.contains("not available on arm1136") && err.contains("arm1176"), "{err}");
    let err = usage_error(&["stat", "--pmu", "arm1156", "-e", "ITLB_MISS"]);
    assert!(err.contains("unused on arm1156"), "{err}");
}

#[test]
fn bad_input_reserved_event_number() {
    let err = usage_error(&["encode", "arm1176::r8"]);
    assert!(err.contains("reserved") && err.contains("Unpredictable"), "{err}");
}

#[test]
fn raw_codes_unused_on_arm1156_are_refused_as_table_2_says() {
    // Issue 11: the raw path called 0x3, 0x4 and 0xF "reserved"; Table 2 says "unused
    // on ARM1156", as the named path does.
    for code in ["r3", "r4", "rf"] {
        let err = usage_error(&["encode", &format!("arm1156::{code}")]);
        assert!(err.contains("the spec marks it unused on arm1156") && !err.contains("Reserved"), "{code}: {err}");
    }
    assert!(usage_error(&["encode", "arm1156::r16"]).contains("Reserved"), "0x16 is reserved on every core");
}

#[test]
fn a_pmu_with_one_colon_suggests_two() {
    // Issue 11: `arm1176:INSTR_EXEC` read as the event `arm1176` with a modifier.
    let err = usage_error(&["encode", "arm1176:INSTR_EXEC"]);
    assert!(err.contains("'arm1176' is a PMU") && err.contains("did you mean arm1176::INSTR_EXEC?"), "{err}");
    assert!(usage_error(&["encode", "sparc-t4:INSTR.ALL:u"]).contains("did you mean sparc-t4::INSTR.ALL:u?"));
}

#[test]
fn bad_input_bad_modifier() {
    let err = usage_error(&["encode", "arm1156::INSTR_EXEC:u"]);
    assert!(err.contains("unknown modifier 'u'") && err.contains("fiq"), "{err}");
    let err = usage_error(&["encode", "arm1176::INSTR_EXEC:fiq"]);
    assert!(err.contains("exists only on arm1156"), "{err}");
    // describe offers only what the PMU accepts.
    let out = pmu(&["describe", "arm1176::INSTR_EXEC"]);
    assert!(!String::from_utf8_lossy(&out.stdout).contains(":fiq"));
    assert!(String::from_utf8_lossy(&pmu(&["describe", "arm1156::INSTR_EXEC"]).stdout).contains(":fiq"));
}

#[test]
fn bad_input_malformed_register_value() {
    let err = usage_error(&["decode", "arm1176", "PMCR", "0xZZ"]);
    assert!(err.contains("0xZZ") && err.contains("hex"), "{err}");
    let err = usage_error(&["decode", "arm1176", "PMCR", "0x1_0000_0000"]);
    assert!(err.contains("32-bit"), "{err}");
    let err = usage_error(&["decode", "arm1176", "PMCX", "0"]);
    assert!(err.contains("PMCR, CCNT, PMN0, PMN1"), "{err}");
}

/// A file in this test run's temporary folder.
fn temp_file(name: &str, bytes: &[u8]) -> String {
    let dir = std::env::temp_dir().join(format!("pmukit-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path.display().to_string()
}

fn events_file(name: &str, text: &str) -> String {
    temp_file(name, text.as_bytes())
}

#[test]
fn bad_input_malformed_events_file() {
    let path = events_file("syntax.toml", "family = \"arm11\"\n[[event]]\nname = \"X\"\ncode = \n");
    let err = usage_error(&["list", "arm1176", "--events-file", &path]);
    assert!(err.contains("line 4"), "{err}");
    let path =
        events_file("model.toml", "family = \"arm11\"\n[[event]]\nname = \"X\"\ncode = 1\ndescription = \"x\"\nonly_on = [\"arm9\"]\n");
    let err = usage_error(&["list", "--events-file", &path]);
    assert!(err.contains("unknown model 'arm9'") && err.contains("arm1156"), "{err}");
    let path = events_file(
        "dup.toml",
        "family = \"arm11\"\n[[event]]\nname = \"X\"\ncode = 1\ndescription = \"x\"\n[[event]]\nname = \"Y\"\ncode = 1\ndescription = \"y\"\n",
    );
    assert!(usage_error(&["list", "--events-file", &path]).contains("code 0x1 is also event 'X'"));
    let path = events_file("family.toml", "family = \"sparc\"\n[[event]]\nname = \"X\"\ncode = 1\ndescription = \"x\"\n");
    assert!(usage_error(&["list", "--events-file", &path]).contains("unknown family 'sparc'"));
    assert!(runtime_error(&["list", "--events-file", "/nonexistent/events.toml"]).contains("cannot read"));
}

#[test]
fn events_file_replaces_the_family_table() {
    let path =
        events_file("good.toml", "family = \"arm11\"\n[[event]]\nname = \"MY_INSTR\"\ncode = 7\ndescription = \"instructions, renamed\"\n");
    let v = ok_json(&["list", "arm1136", "--events-file", &path, "--json"]);
    assert_eq!(v["events"].as_array().unwrap().len(), 1);
    assert_eq!(v["events"][0]["name"], "MY_INSTR");
}

#[test]
fn bad_input_unknown_pmu_and_workload() {
    assert!(usage_error(&["list", "arm1167"]).contains("arm1176"));
    assert!(usage_error(&["stat", "--workload", "streem"]).contains("stream"));
}

#[test]
fn bad_command_line_is_a_usage_error() {
    usage_error(&["frobnicate"]);
    usage_error(&["stat", "--cycles", "lots"]);
    usage_error(&["decode", "arm1176"]);
}

#[test]
fn errors_in_json_mode_are_json() {
    let out = pmu(&["encode", "NOPE", "--json"]);
    assert_eq!(out.status.code(), Some(2));
    let v: Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(v["schema"], 1);
    assert_eq!(v["command"], "encode");
    let e = &v["error"];
    assert_eq!(e["message"], "unknown event 'NOPE' for arm1176");
    assert_eq!((e["token"].as_str(), e["column"].as_u64(), e["exit_code"].as_u64()), (Some("NOPE"), Some(1), Some(2)));
    // The token, its column and what would be valid, each a field of its own.
    let out = pmu(&["encode", "--json", "INSTR_EXEC.X:u", "arm1176::CPU_CYCLE"]);
    let e: Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!((e["error"]["token"].as_str(), e["error"]["column"].as_u64()), (Some("X"), Some(12)), "{e}");
    let out = pmu(&["encode", "--json", "arm1176::CPU_CYCLE"]);
    let e: Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(e["error"]["token"], "CPU_CYCLE");
    assert_eq!(e["error"]["column"], 10);
    assert_eq!(e["error"]["suggestions"][0], "CPU_CYCLES", "{e}");
    // One the command line itself refuses, before any command runs.
    let out = pmu(&["stat", "--json", "--cycels", "5"]);
    assert_eq!(out.status.code(), Some(2));
    let e: Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!((e["error"]["token"].as_str(), e["error"]["suggestions"][0].as_str()), (Some("--cycels"), Some("--cycles")), "{e}");
}

#[test]
fn sparc_t4_list_encode_decode_and_stat_work_with_json() {
    let v = ok_json(&["list", "sparc-t4", "--json"]);
    let instr = v["events"].as_array().unwrap().iter().find(|e| e["name"] == "INSTR").unwrap().clone();
    assert_eq!(instr["code"], 3);
    assert!(instr["umasks"].as_array().unwrap().iter().any(|u| u["name"] == "LOADS" && u["value"] == 4));

    let v = ok_json(&["encode", "--pmu", "sparc-t4", "Instr_ld:u", "DC_MISS_PRECISE.ANY", "--json"]);
    assert_eq!(v["events"][0]["name"], "INSTR.LOADS:u");
    // sl 3, mask 0x04, ut, toe.
    assert_eq!(v["events"][0]["registers"]["PCR0"], "0x1886");
    assert_eq!(v["events"][1]["registers"]["PCR1"], "0x80ee");

    let v = ok_json(&["decode", "sparc-t4", "PCR", "0x1886", "--json"]);
    let f = |n: &str| v["fields"].as_array().unwrap().iter().find(|f| f["name"] == n).unwrap().clone();
    assert_eq!(f("sl")["meaning"], "INSTR");
    assert_eq!(f("mask")["meaning"], "INSTR.LOADS");

    let v = ok_json(&["stat", "--pmu", "sparc-t4", "-e", "INSTR.ALL,sparc-t4-dram::ALL_READS", "--cycles", "1e6", "--json"]);
    assert_eq!(v["pmu"], serde_json::json!(["sparc-t4", "sparc-t4-dram"]));
    assert!(v["events"][0]["count"].as_u64().unwrap() > 0);
}

#[test]
fn sparc_t4_bad_input_gets_the_specs_words() {
    // sl 12 is reserved (TABLE 10-2).
    assert!(usage_error(&["encode", "sparc-t4::r300"]).contains("reserved"));
    // sl 1: only 06 and 18 are useful multi-bit settings.
    let err = usage_error(&["encode", "--pmu", "sparc-t4", "SEL.PIPE_DRAIN_CYCLES.SEL_2"]);
    assert!(err.contains("not a meaningful setting"), "{err}");
    // TABLE 10-7: select 1101 is reserved.
    assert!(usage_error(&["encode", "sparc-t4-dram::rd"]).contains("reserved"));
    // sl 2: other values "may provide meaningless data": accepted with a warning.
    let out = pmu(&["encode", "--pmu", "sparc-t4", "PICK.PICK_0.PICK_1"]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("meaningless"));
}

#[test]
fn describe_shows_the_footnoted_instruction_lists() {
    let out = pmu(&["describe", "--pmu", "sparc-t4", "Instr_ld"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(".LOADS (selected)   0x4") && text.contains("instructions: LDD, LDDA_0X14"), "{text}");
    let v = ok_json(&["describe", "--pmu", "sparc-t4", "INSTR.STORES", "--json"])["event"].clone();
    let stores = v["umasks"].as_array().unwrap().iter().find(|u| u["name"] == "STORES").unwrap().clone();
    assert!(stores["attrs"]["instructions"].as_str().unwrap().starts_with("FLUSH"));
    assert_eq!(v["attrs"]["precise"], "yes");
}

#[test]
fn hv_runs_calls_in_order_and_reports_status_numbers() {
    let v = ok_json(&["hv", "--machine", "niagara", "niagara_mmustat_conf 0x10000000", "niagara_mmustat_info", "0x103", "--json"]);
    let calls = v["calls"].as_array().unwrap();
    assert_eq!(
        (calls[0]["function"].as_u64(), calls[0]["status"].as_u64(), calls[0]["ret1"].as_str()),
        (Some(0x102), Some(0), Some("0x0"))
    );
    assert_eq!(calls[0]["args"], serde_json::json!(["0x10000000"]), "arguments are 64-bit registers: hex strings");
    assert_eq!(calls[1]["ret1"], "0x10000000", "info returns the buffer conf supplied");
    assert_eq!(
        calls[2],
        calls[1]
            .as_object()
            .map(|o| {
                let mut o = o.clone();
                o.insert("call".into(), "0x103".into());
                serde_json::Value::Object(o)
            })
            .unwrap(),
        "by number, the same call"
    );
    let v = ok_json(&["hv", "--machine", "t4", "niagara_mmustat_conf 0x10000000", "--json"]);
    assert_eq!((v["calls"][0]["status"].as_u64(), v["calls"][0]["status_name"].as_str()), (Some(7), Some("EBADTRAP")), "Niagara 1 only");
}

#[test]
fn hv_bad_calls_are_usage_errors() {
    let err = usage_error(&["hv", "niagara_mmustat_cnf"]);
    assert!(err.contains("niagara_mmustat_conf"), "{err}");
    assert!(usage_error(&["hv", "niagara_mmustat_conf zero"]).contains("'zero' is not a number"));
    assert!(usage_error(&["hv", "--machine", "sparc64", "niagara_mmustat_info"]).contains("machines:"));
}

#[test]
fn mmustat_decode_reports_hits_ticks_and_average_per_slot() {
    // Two CPUs' buffers; CPU 1 has 4 IMMU ctx0 8K hits costing 400 ticks (§2.3 offsets 0x0, 0x8).
    let mut bytes = vec![0u8; 0x400];
    bytes[0x200..0x208].copy_from_slice(&4u64.to_be_bytes());
    bytes[0x208..0x210].copy_from_slice(&400u64.to_be_bytes());
    let path = temp_file("two.bin", &bytes);
    let v = ok_json(&["mmustat", "decode", &path, "--json"]);
    assert_eq!(v["buffers"].as_array().unwrap().len(), 2);
    let slot = &v["buffers"][1]["slots"][0];
    assert_eq!((slot["hits"].as_u64(), slot["ticks"].as_u64(), slot["average_ticks_per_hit"].as_f64()), (Some(4), Some(400), Some(100.0)));
    assert!(v["buffers"][0]["slots"][0]["average_ticks_per_hit"].is_null());
}

#[test]
fn mmustat_decode_bad_files() {
    let err = usage_error(&["mmustat", "decode", &temp_file("short.bin", &[0u8; 0x1ff])]);
    assert!(err.contains("511 bytes") && err.contains("multiples of 512"), "{err}");
    assert!(usage_error(&["mmustat", "decode", &temp_file("empty.bin", &[])]).contains("empty"));
    assert!(runtime_error(&["mmustat", "decode", "/nonexistent/dump.bin"]).contains("cannot read"));
    let mut bytes = vec![0u8; 0x200];
    bytes[0x20] = 1; // reserved field at 0x20 (§2.3)
    let out = pmu(&["mmustat", "decode", &temp_file("reserved.bin", &bytes)]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("0x20"), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn hv_reaches_the_kt_performance_registers_once_the_group_is_negotiated() {
    let calls = ["kt_get_perfreg 1", "api_set_version 0x209 1 0", "kt_set_perfreg 1 2", "kt_get_perfreg 1", "kt_get_perfreg 99"];
    let mut args = vec!["hv", "--machine", "kt", "--json"];
    args.extend(calls);
    let v = ok_json(&args);
    let status: Vec<&str> = v["calls"].as_array().unwrap().iter().map(|c| c["status_name"].as_str().unwrap()).collect();
    assert_eq!(status, ["EBADTRAP", "EOK", "EOK", "EOK", "EINVAL"]);
    assert_eq!(v["calls"][3]["ret1"], "0x2", "PERF_CONFIG reads back through the virtualized L2 control register");
}

#[test]
fn niagara_stat_counts_the_mmu_statistics_with_json() {
    let v = ok_json(&["stat", "--pmu", "niagara", "--cycles", "2e7", "--json"]);
    assert_eq!(v["pmu"], serde_json::json!(["niagara"]));
    let events = v["events"].as_array().unwrap();
    let hits = events.iter().find(|e| e["name"] == "DMMU_TSB_HITS.ALL").unwrap();
    assert!(hits["count"].as_u64().unwrap() > 0);
    assert_eq!(hits["counters"].as_array().unwrap().len(), 8, "ALL reads every DMMU hits field");
    assert!(v["metrics"].as_array().unwrap().iter().any(|m| m["name"] == "dmmu_ticks_per_tsb_hit"));
    let err = usage_error(&["stat", "--pmu", "niagara", "-e", "DMMU_TSB_HITZ"]);
    assert!(err.contains("DMMU_TSB_HITS"), "suggests the nearest name: {err}");
}

#[test]
fn sparc_kt_stat_counts_through_the_hypercalls_and_reports_refusals() {
    let v = ok_json(&["stat", "--pmu", "sparc-kt", "--cycles", "2e7", "--workload", "stream", "--json"]);
    assert_eq!(v["pmu"], serde_json::json!(["sparc-kt", "sparc-kt-dram"]));
    let names: Vec<&str> = v["events"].as_array().unwrap().iter().map(|e| e["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["L2_MISSES", "L2_MISSES_LOCAL", "L2_MISSES_REMOTE", "ALL_READS", "ALL_WRITES"]);
    assert!(v["events"].as_array().unwrap().iter().all(|e| e["count"].as_u64().unwrap() > 0));

    let busy =
        ok_json(&["stat", "--pmu", "sparc-kt", "--cycles", "1e7", "--kt-l2-busy", "--json", "-e", "L2_MISSES,sparc-kt-dram::ALL_READS"]);
    assert!(busy["events"][0]["count"].is_null(), "not counted: {}", busy["events"][0]);
    assert!(busy["events"][1]["count"].as_u64().unwrap() > 0);
    assert!(busy["notes"].as_array().unwrap().iter().any(|n| n.as_str().unwrap().contains("EWOULDBLOCK")));
    let human = pmu(&["stat", "--pmu", "sparc-kt", "--cycles", "1e7", "--kt-deny", "5", "-e", "sparc-kt-dram::ALL_READS"]);
    assert!(human.status.success());
    assert!(String::from_utf8_lossy(&human.stdout).contains("PerfReg# 5) returned ENOACCESS"));

    let err = usage_error(&["stat", "--pmu", "sparc-kt", "--kt-nodes", "9", "--cycles", "1000"]);
    assert!(err.contains("1 to 4 nodes"), "{err}");
}

#[test]
fn sparc_kt_encode_shows_perf_config_and_pcr() {
    let v = ok_json(&["encode", "--pmu", "sparc-kt", "L2_MISSES_LOCAL:u", "--json"]);
    assert_eq!(v["registers"]["SPARC_PCR"], "0x4", "ut only");
    assert_eq!(v["registers"]["L2_CONTROL_VIRTUAL"], "0x1", "PERF_CONFIG local");
    let d = ok_json(&["decode", "sparc-kt", "L2_CONTROL_VIRTUAL", "2", "--json"]);
    assert_eq!(d["fields"][1]["meaning"], "L2 misses serviced from remote memory");
    let err = usage_error(&["encode", "--pmu", "sparc-kt", "L2_MISSES_LOCAL", "L2_MISSES_REMOTE"]);
    assert!(err.contains("PIC0"), "{err}");
}

#[test]
fn schedule_shows_the_placement_or_the_groups_and_why() {
    let v = ok_json(&["schedule", "CPU_CYCLES", "INSTR_EXEC", "--json"]);
    assert_eq!(v["together"], true);
    assert_eq!(v["groups"].as_array().unwrap().len(), 1);
    assert_eq!(v["groups"][0]["events"][1]["counter"], "PMN0");
    let v =
        ok_json(&["schedule", "--pmu", "sparc-t4", "INSTR.ALL", "CYCLES", "INSTR.LOADS", "INSTR.STORES", "BR_MISPREDICT.ALL", "--json"]);
    assert_eq!(v["together"], false);
    assert!(v["why"].as_str().unwrap().contains("5 events"), "{}", v["why"]);
    let groups = v["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 2);
    assert_eq!(groups[1]["events"][0]["index"], 4, "the fifth event waits for the second turn");
    let human = pmu(&["schedule", "--pmu", "sparc-t4", "INSTR.ALL", "CYCLES", "INSTR.LOADS", "INSTR.STORES", "BR_MISPREDICT.ALL"]);
    assert!(String::from_utf8_lossy(&human.stdout).contains("multiplexes them in 2 groups"));
    let err = usage_error(&["schedule", "CPU_CYCLES", "sparc-t4::CYCLES"]);
    assert!(err.contains("one PMU"), "{err}");
}

#[test]
fn montecito_list_describe_encode_decode_schedule_and_stat_work_with_json() {
    let list = ok_json(&["list", "montecito", "--json"]);
    let events = list["events"].as_array().unwrap();
    // Table 4-42's 171 monitors and the 36 capture events pfmon names (DATA_EAR_CACHE_LAT4 ...).
    assert_eq!(events.len(), 171 + 36);
    let l2d = events.iter().find(|e| e["name"] == "L2D_REFERENCES").unwrap();
    assert_eq!(l2d["counters"].as_array().unwrap().len(), 6, "ER/SI/L2D events use PMD4-9 only");
    let d = ok_json(&["describe", "montecito::BR_MISPRED_DETAIL.ALL.WRONG_PATH", "--json"])["event"].clone();
    assert_eq!(d["selected_umasks"][0], "ALL.WRONG_PATH");
    assert_eq!(d["encoding"]["counter"], "PMD4");
    let e = ok_json(&["encode", "--pmu", "montecito", "L1D_READ_MISSES", "CPU_OP_CYCLES", "--json"]);
    assert_eq!(e["events"][0]["counter"], "PMD5", "§4.8.2: the L1D event goes on PMD5");
    let dec = ok_json(&["decode", "montecito", "PMC5", "0x0200c729", "--json"]);
    assert!(dec["fields"].as_array().unwrap().iter().any(|f| f["name"] == "es" && f["meaning"] == "L1D_READ_MISSES"));
    let s = ok_json(&["schedule", "--pmu", "montecito", "L1D_READS_SET0", "LOADS_RETIRED", "--json"]);
    assert_eq!(s["together"], false);
    assert!(s["why"].as_str().unwrap().contains("§4.8.2"), "{}", s["why"]);
    let st = ok_json(&["stat", "--pmu", "montecito", "--cycles", "1e7", "--json"]);
    assert_eq!(st["pmu"], serde_json::json!(["montecito"]));
    assert!(st["events"].as_array().unwrap().iter().all(|e| e["count"].as_u64().is_some()));
    assert!(st["metrics"].as_array().unwrap().iter().any(|m| m["name"] == "ia64_ipc"));
}

#[test]
fn montecito_bad_input_gets_clear_errors() {
    let err = usage_error(&["encode", "--pmu", "montecito", "L1D_READS_SET0", "LOADS_RETIRED"]);
    assert!(err.contains("'L1D_READS_SET0' and 'LOADS_RETIRED' cannot be counted together") && err.contains("§4.8.2"), "{err}");
    let err = usage_error(&["encode", "--pmu", "montecito", "CPU_OP_CYCLES:thresh=3"]);
    assert!(err.contains("threshold 3 is beyond"), "{err}");
    let err = usage_error(&["encode", "--pmu", "montecito", "CPU_OP_CYCLES:mesi=3"]);
    assert!(err.contains("mesi"), "{err}");
    let err = usage_error(&["encode", "--pmu", "montecito", "BACK_END_BUBBLE.0x3"]);
    assert!(err.contains("counts nothing"), "{err}");
    let err = usage_error(&["encode", "--pmu", "montecito", "L2D_REFERENCE"]);
    assert!(err.contains("did you mean") && err.contains("L2D_REFERENCES"), "{err}");
    let err = usage_error(&["stat", "--pmu", "montecito-st", "--threads", "2", "--cycles", "1000"]);
    assert!(err.contains("--pmu montecito"), "{err}");
}

#[test]
fn machine_config_and_fault_rate_change_the_simulated_machine() {
    let slow = temp_file("slow.toml", b"[core]\nmemory_cycles = 200\n");
    let count = |extra: &[&str]| {
        let mut args = vec!["stat", "-e", "INSTR_EXEC", "--workload", "stream", "--cycles", "1e7", "--json"];
        args.extend_from_slice(extra);
        ok_json(&args)["events"][0]["count"].as_u64().unwrap()
    };
    assert!(count(&["--machine-config", &slow]) < count(&[]), "a slower memory retires fewer instructions");
    let v = ok_json(&["stat", "--pmu", "arm1156", "-e", "ICACHE_TAG_PARITY_ERROR", "--fault-rate", "1e-2", "--cycles", "1e7", "--json"]);
    assert!(v["events"][0]["count"].as_u64().unwrap() > 0);
    let ecc = |extra: &[&str]| {
        let mut args = vec!["stat", "--pmu", "montecito", "-e", "SI_WDQ_ECC_ERRORS.ALL.SELF", "-w", "stream", "--cycles", "1e7", "--json"];
        args.extend_from_slice(extra);
        ok_json(&args)["events"][0]["count"].as_u64().unwrap()
    };
    assert!(ecc(&["--fault-rate", "1e-2"]) > 0);
    assert_eq!(ecc(&[]), 0, "no errors without injection");
}

#[test]
fn bad_input_machine_config_and_fault_rate() {
    let bad = temp_file("bad-machine.toml", b"[dcache]\nways = 0\n");
    let err = usage_error(&["stat", "--machine-config", &bad, "--cycles", "1e6"]);
    assert!(err.contains("bad-machine.toml: [dcache]: cache ways = 0: must be in 1..=64"), "{err}");
    let err = runtime_error(&["stat", "--machine-config", "/no/such/machine.toml"]);
    assert!(err.contains("cannot read machine configuration /no/such/machine.toml"), "{err}");
    // Each machine has its own tables: the KT has no L3, the T4 no BTAC table.
    let l3 = temp_file("l3-machine.toml", b"[l3]\nsize = 8388608\n");
    let err = usage_error(&["stat", "--pmu", "sparc-kt", "--machine-config", &l3, "--cycles", "1e6"]);
    assert!(err.contains("[l3]: sparc-kt has no such structure (its L2 is the last level)"), "{err}");
    let btac = temp_file("btac-machine.toml", b"[btac]\nentries = 64\n");
    let err = usage_error(&["stat", "--pmu", "sparc-t4", "--machine-config", &btac, "--cycles", "1e6"]);
    assert!(err.contains("unknown field `btac`"), "{err}");
    for rate in ["0", "1.5", "-1e-3", "x"] {
        let err = usage_error(&["stat", &format!("--fault-rate={rate}")]);
        assert!(err.contains("is not a rate per access"), "{rate}: {err}");
    }
    let err = usage_error(&["stat", "--pmu", "sparc-t4", "--fault-rate", "1e-3", "--cycles", "1e6"]);
    assert!(err.contains("the sparc-t4 machine has no hardware errors to inject"), "{err}");
}

/// `pmu ARGS` with `input` on its standard input.
fn piped(args: &[&str], input: &[u8]) -> std::process::Output {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_pmu"))
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn stat_runs_a_trace_from_a_file_or_standard_input() {
    let trace = concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/traces/loop.trace");
    let v = ok_json(&["stat", "--trace", trace, "-e", "INSTR_EXEC,BR_EXEC", "--json"]);
    assert_eq!(v["events"][0]["count"], 36);
    assert_eq!(v["events"][1]["count"], 10);
    let out = piped(&["stat", "--trace", "-", "-e", "INSTR_EXEC", "--json"], &std::fs::read(trace).unwrap());
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["events"][0]["count"], 36);
    assert_eq!(v["workload"], "trace standard input");
}

/// A trace from a pipe is read once: events that take turns on the counters, whose
/// interval a file's trace fits by a first reading, take a running program's.
#[test]
fn stat_multiplexes_a_trace_from_standard_input() {
    let trace = concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/traces/loop.trace");
    let events = "CPU_CYCLES,INSTR_EXEC,BR_EXEC,BR_MISPREDICT,DCACHE_HIT,DCACHE_MISS";
    let out = piped(&["stat", "--trace", "-", "-e", events, "--json"], &std::fs::read(trace).unwrap());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["events"].as_array().map(Vec::len), Some(6));
    assert_eq!(v["workload"], "trace standard input");
}

#[test]
fn bad_input_malformed_trace() {
    let bad = temp_file("bad.trace", b"#pmukit-trace v1\n10000 int\n10004 ld 20000\n");
    let err = usage_error(&["stat", "--trace", &bad]);
    assert!(err.contains("bad.trace:3:7: `ld` takes 2 operands, not 1"), "{err}");
    let err = runtime_error(&["stat", "--trace", "/no/such.trace"]);
    assert!(err.contains("/no/such.trace: "), "{err}");
    let err = usage_error(&["stat", "--trace", &bad, "--workload", "compute"]);
    assert!(err.contains("cannot be used with"), "{err}");
}

#[test]
fn completions_and_the_man_page_come_from_the_command_definitions() {
    for (shell, marker) in
        [("bash", "complete -F _pmu"), ("zsh", "#compdef pmu"), ("fish", "complete -c pmu"), ("elvish", "pmu"), ("powershell", "pmu")]
    {
        let out = pmu(&["completions", shell]);
        assert!(out.status.success(), "{shell}");
        let script = String::from_utf8_lossy(&out.stdout);
        assert!(script.contains(marker), "{shell}");
        for sub in ["describe", "metric-only", "interval-print"] {
            assert!(script.contains(sub), "{shell} completes {sub}");
        }
        // --pmu and --workload offer their names, not file names, where the shell's
        // script lists values (clap_complete's elvish and PowerShell scripts list none).
        for name in ["montecito-st", "sparc-kt-dram", "branchy", "shared"].iter().filter(|_| ["bash", "zsh", "fish"].contains(&shell)) {
            assert!(script.contains(name), "{shell} offers {name}");
        }
    }
    let bash = String::from_utf8(pmu(&["completions", "bash"]).stdout).unwrap();
    let pmu_option = bash.lines().skip_while(|l| !l.trim_start().starts_with("--pmu)")).nth(1).unwrap_or_default();
    assert!(pmu_option.contains("compgen -W") && pmu_option.contains("arm1176"), "{pmu_option}");
    assert_eq!(pmu(&["completions", "tcsh"]).status.code(), Some(2));
    let man = String::from_utf8(pmu(&["man"]).stdout).unwrap();
    assert!(man.starts_with(".ie") && man.contains(".TH pmu 1") && man.contains("describe") && man.contains("completions"), "{man}");
    // Each subcommand's page, which pmu(1) refers to, and every page into a directory.
    let stat = String::from_utf8(pmu(&["man", "stat"]).stdout).unwrap();
    assert!(stat.contains(".TH pmu-stat 1") && stat.contains("metric\\-only"), "{stat}");
    assert!(String::from_utf8(pmu(&["man", "mmustat", "decode"]).stdout).unwrap().contains(".TH pmu-mmustat-decode 1"));
    assert!(usage_error(&["man", "stats"]).contains("'stats' is not a subcommand of pmu"));
    let dir = std::env::temp_dir().join(format!("pmu-man-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    assert!(pmu(&["man", "--dir", dir.to_str().unwrap()]).status.success());
    for page in ["pmu.1", "pmu-stat.1", "pmu-record.1", "pmu-mmustat-decode.1"] {
        assert!(dir.join(page).is_file(), "{page}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Options that would do nothing are refused: a command is offered only the options it
/// uses, and the SPARC KT machine's options only with a KT PMU.
#[test]
fn options_that_do_nothing_are_refused() {
    for args in [
        &["workloads", "--pmu", "montecito"][..],
        &["hv", "--events-file", "x.toml", "niagara_mmustat_info"],
        &["decode", "--pmu", "arm1176", "arm1176", "PMCR", "0"],
        &["mmustat", "decode", "--pmu", "niagara", "-"],
        &["completions", "bash", "--json"],
    ] {
        assert!(usage_error(args).contains("unexpected argument"), "{args:?}");
    }
    for option in [&["--kt-nodes", "2"][..], &["--kt-deny", "0"], &["--kt-deny-ht"], &["--kt-l2-busy"]] {
        let args = [&["stat", "--pmu", "sparc-t4", "--cycles", "1e6"][..], option].concat();
        let message = usage_error(&args);
        assert!(message.contains(option[0]) && message.contains("sparc-kt") && message.contains("sparc-t4"), "{message}");
    }
    ok_json(&["stat", "--pmu", "sparc-kt-dram", "--kt-nodes", "1", "--cycles", "1e6", "--json"]);
}

/// `pmu export perf-json` writes perf's layout; `pmu import perf-json` reads it back into
/// an events file that `--events-file` takes, with the same events.
#[test]
fn perf_json_export_imports_back_as_an_events_file() {
    let dir = std::env::temp_dir().join(format!("pmukit-perf-json-{}", std::process::id()));
    let d = dir.display().to_string();
    let v = ok_json(&["export", "perf-json", "sparc-t4", &d, "--json"]);
    assert!(v["files"].as_array().unwrap().iter().any(|f| f.as_str().unwrap().ends_with("sparc/mapfile.csv")));
    let model = dir.join("sparc/oracle/sparc-t4").display().to_string();
    let toml = dir.join("t4.toml").display().to_string();
    let out = pmu(&["import", "perf-json", "--pmu", "sparc-t4", &model, "-o", &toml]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let listed = |extra: &[&str]| ok_json(&[&["list", "sparc-t4", "--json"][..], extra].concat())["events"].as_array().unwrap().len();
    assert_eq!(listed(&["--events-file", &toml]), listed(&[]));
    assert!(usage_error(&["import", "perf-json", "--pmu", "sparc-t4", &d]).contains("no .json files"));
    // Lossless (issue 41 item 3): ARM11's aliases, CCNT and `:d`, and each core's events
    // survive the round trip through pmukit's companion table.
    ok_json(&["export", "perf-json", "arm1176", &d, "--json"]);
    let model = dir.join("arm/arm/arm1176").display().to_string();
    let arm = dir.join("arm.toml").display().to_string();
    let out = pmu(&["import", "perf-json", "--pmu", "arm1176", &model, "-o", &arm]);
    assert!(
        out.status.success() && String::from_utf8_lossy(&out.stderr).contains("imported whole"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    ok_json(&["encode", "--events-file", &arm, "CPU_CYCLES:d", "INSTR_EXEC", "BR_EXEC", "--json"]);
    assert!(usage_error(&["encode", "--events-file", &arm, "--pmu", "arm1136", "PROC_CALL_EXEC"]).contains("not available on arm1136"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn montecitos_capture_registers_decode_in_the_layout_their_value_selects() {
    // Table 3-15: PMC37 with ct = 1x has an eight-bit threshold in 12:5 (Table 3-16);
    // with ct = 00, 13:12 is ct and the unit mask 7:5 (Table 3-18). The diagram and
    // the fields follow the value.
    let cache = ok_json(&["decode", "montecito", "PMC37", "0x3fe0", "--json"]);
    let umask = cache["fields"].as_array().unwrap().iter().find(|f| f["name"] == "umask").unwrap();
    assert_eq!((umask["bits"].as_str(), umask["meaning"].as_str()), (Some("12:5"), Some("latency >= 4 cycles")));
    assert!(cache["diagram"].as_str().unwrap().contains("12  5"), "{}", cache["diagram"]);
    let tlb = ok_json(&["decode", "montecito", "PMC37", "0xe0", "--json"]);
    let umask = tlb["fields"].as_array().unwrap().iter().find(|f| f["name"] == "umask").unwrap();
    assert_eq!(umask["bits"], "7:5");
    // Every model-specific PMC and the trace buffer index decode (Table 3-4).
    for reg in ["PMC32", "PMC33", "PMC34", "PMC35", "PMC36", "PMC38", "PMC39", "PMC40", "PMC41", "PMC42", "PMD38"] {
        ok_json(&["decode", "montecito", reg, "0", "--json"]);
    }
    // §3.3.5.2: PMC38's unlisted bits must keep 0xdb6's values.
    let out = pmu(&["decode", "montecito", "PMC38", "0xdb2"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("warning: PMC38 bits 3:2 (rsv) are 0x0, not 0x1"), "{text}");
}

#[test]
fn capture_data_registers_decode_in_the_mode_given_with_with() {
    // §3.3.9.2, Table 3-24: PMD33.stat in TLB mode says where the DTLB miss was served.
    let d = ok_json(&["decode", "montecito", "PMD33", "0x8000", "--with", "PMC40=0x80", "--json"]);
    let stat = d["fields"].as_array().unwrap().iter().find(|f| f["name"] == "stat").unwrap();
    assert_eq!(stat["meaning"], "VHPT hit");
    assert!(d["warnings"].as_array().unwrap().is_empty(), "{d}");
    // Without --with, the reset mode is assumed and a warning says which to give.
    let d = ok_json(&["decode", "montecito", "PMD33", "0x8000", "--json"]);
    assert!(d["warnings"][0].as_str().unwrap().contains("--with PMC40=VALUE"), "{d}");
    // Bad --with values are usage errors naming them.
    assert!(usage_error(&["decode", "montecito", "PMD33", "1", "--with", "PMC40"]).contains("expected REGISTER=VALUE"));
    assert!(usage_error(&["decode", "montecito", "PMD33", "1", "--with", "PMC99=1"]).contains("PMC99"));
    assert!(usage_error(&["decode", "montecito", "PMD33", "1", "--with", "PMC40=zz"]).contains("--with PMC40=zz"));
}
