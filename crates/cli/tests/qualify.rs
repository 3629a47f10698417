//! `pmu encode` with Montecito's qualification options (§3.2.3.1, §3.3.5-§3.3.7):
//! every register the request writes, its notes, and its refusals.

use std::process::{Command, Output};

use serde_json::Value;

fn pmu(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pmu")).args(args).env("COLUMNS", "80").output().expect("run pmu")
}

fn ok(args: &[&str]) -> String {
    let out = pmu(args);
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("UTF-8")
}

fn usage_error(args: &[&str]) -> String {
    let out = pmu(args);
    assert_eq!(out.status.code(), Some(2), "{args:?}: stdout {}", String::from_utf8_lossy(&out.stdout));
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn encode_json_shows_every_register_the_request_writes() {
    let args = [
        "encode",
        "montecito::DATA_REFERENCES_SET0",
        "montecito::L1D_READS_SET0",
        "--irange",
        "0x4000-0x4400",
        "--drange",
        "0x10000-0x20000",
        "--json",
    ];
    let v: Value = serde_json::from_str(&ok(&args)).unwrap();
    let regs = &v["registers"];
    // Table 3-3 "Instruction and Data Address Range Check": ig_ad 0, ig_ibrp0 0,
    // Ch0_ig_OPC 1, PMC41 [1,00]; IBRP0 holds the 1 KB block, DBRP0 the 64 KB one.
    assert_eq!(regs["PMC32"], "0xf01ffffffffff", "{v}");
    assert_eq!(regs["PMC36"], "0xffffffff");
    assert_eq!(regs["PMC38"], "0xdb4");
    assert_eq!(regs["PMC41"], "0x2078fefefee6");
    assert_eq!((&regs["IBR0"], &regs["IBR1"]), (&Value::from("0x4000"), &Value::from("0x9fffffffffffc00")));
    assert_eq!((&regs["DBR0"], &regs["DBR1"]), (&Value::from("0x10000"), &Value::from("0xffffffffff0000")));
    assert!(regs["PMC4"].is_string() && regs["PMC5"].is_string());
}

#[test]
fn encode_text_fits_80_columns_and_says_what_fine_mode_does() {
    let text = ok(&["encode", "montecito::IA64_INST_RETIRED", "montecito::L1I_PREFETCHES", "--irange", "0x4010-0x4400"]);
    assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
    assert!(text.contains("IBR7 = ") && text.contains("note: fine mode: IBRP1 and IBRP3 bound the range"), "{text}");
}

#[test]
fn contradictory_or_impossible_requests_are_usage_errors() {
    for (args, says) in [
        (&["encode", "montecito::CPU_CPL_CHANGES", "montecito::IA64_INST_RETIRED", "--irange", "0x4000-0x4400"][..], "--no-qual-check"),
        (&["encode", "montecito::IA64_INST_RETIRED", "--irange", "0x4008-0x4400"], "16-byte bundles"),
        (&["encode", "montecito::IA64_INST_RETIRED", "--opc-match34", "m:0:0"], "constrains no event"),
        (&["encode", "montecito::L1I_PREFETCHES", "--irange", "0x4000-0x4400", "--inverse-irange"], "inverts tag channel 0 only"),
        (&["encode", "arm1176::INSTR_EXEC", "--drange", "0x0-0x10"], "arm1176 has no qualification registers"),
        (&["encode", "montecito::L1D_READS_SET0", "--drange", "0x1-0x20"], "at most four aligned blocks"),
    ] {
        let e = usage_error(args);
        assert!(e.contains(says), "{args:?}: {e}");
    }
    // Malformed option values name the option and the text.
    let e = usage_error(&["encode", "montecito::IA64_INST_RETIRED", "--irange", "0x4400-0x4000"]);
    assert!(e.contains("--irange") && e.contains("'0x4400-0x4000'"), "{e}");
    let e = usage_error(&["encode", "montecito::IA64_INST_RETIRED", "--opc-match32", "mx:0:0"]);
    assert!(e.contains("--opc-match32") && e.contains("unknown slot type 'x'"), "{e}");
    let e = usage_error(&["encode", "montecito::IA64_INST_RETIRED", "--inverse-irange"]);
    assert!(e.contains("--irange"), "{e}");
}

#[test]
fn no_qual_check_counts_the_unreachable_event_with_a_note() {
    let args =
        ["encode", "montecito::CPU_CPL_CHANGES", "montecito::IA64_INST_RETIRED", "--irange", "0x4000-0x4400", "--no-qual-check", "--json"];
    let v: Value = serde_json::from_str(&ok(&args)).unwrap();
    assert!(v["notes"][0].as_str().unwrap().contains("'CPU_CPL_CHANGES.ALL' cannot be constrained"), "{v}");
}

#[test]
fn capture_event_names_show_the_capture_register_they_program() {
    let v: Value = serde_json::from_str(&ok(&["encode", "montecito::DATA_EAR_CACHE_LAT64", "montecito::ETB_EVENT", "--json"])).unwrap();
    // Table 3-21: umask 0100 is >= 64 cycles; mode 00, plm 1001, ism 10.
    assert_eq!(v["registers"]["PMC40"], "0x2040009", "{v}");
    assert_eq!(v["registers"]["PMC39"], "0x3f09");
    assert_eq!(v["registers"]["PMC42"], "0x0");
    let e = usage_error(&["encode", "montecito::DATA_EAR_ALAT", "montecito::ETB_EVENT"]);
    assert!(e.contains("PMC39 (the trace buffer) must be 0"), "{e}");
}

#[test]
fn stat_counts_only_what_the_range_tags_and_its_inverse_the_rest() {
    let run = |extra: &[&str]| -> u64 {
        let mut args = vec!["stat", "--pmu", "montecito", "-e", "IA64_INST_RETIRED", "-w", "compute", "--cycles", "2e6", "-x,"];
        args.extend_from_slice(extra);
        let out = pmu(&args);
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        let text = String::from_utf8(out.stdout).unwrap();
        text.lines().find(|l| l.contains("IA64_INST_RETIRED")).and_then(|l| l.split(',').next()).unwrap().parse().unwrap()
    };
    let all = run(&[]);
    let inside = run(&["--irange", "0x10000-0x20000"]);
    let outside = run(&["--irange", "0x10000-0x20000", "--inverse-irange"]);
    assert!(inside > 0 && outside > 0 && inside + outside == all, "{inside} + {outside} vs {all}");
}

#[test]
fn describe_shows_the_capture_register_a_capture_event_writes() {
    let text = ok(&["describe", "montecito::DATA_EAR_CACHE_LAT64"]);
    assert!(text.contains("encoding       on PMD4: PMC4=0x0200c829 PMC40=0x02040009"), "{text}");
}
