//! Issue 10: every argument of every subcommand, given anything a person or a script
//! might pass, ends in success, a runtime failure (1) or a usage error (2) with a
//! message, and never in a panic. The binary's panic hook prints a bug-report line
//! instead of a backtrace; these tests fail if it ever appears.

mod common;

use std::process::Output;

use common::pmu_with_input;
use proptest::prelude::*;

/// The first words of the panic hook's line (`BUG` in main.rs).
const BUG: &str = "internal error";

fn pmu(args: &[&str]) -> Output {
    pmu_with_input(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>(), b"")
}

/// Exit 0, 1 or 2; a failure explains itself on stderr; nothing panics.
fn check(args: &[String], stdin: &[u8]) -> Result<(), TestCaseError> {
    let out = pmu_with_input(args, stdin);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let shown: Vec<String> = args.iter().map(|a| a.chars().take(60).collect()).collect();
    prop_assert!(!stderr.contains(BUG) && !stderr.contains("panicked"), "{shown:?} panicked: {stderr}");
    let code = out.status.code();
    prop_assert!(matches!(code, Some(0..=2)), "{shown:?} exited {code:?}: {stderr}");
    if code != Some(0) {
        prop_assert!(!stderr.trim().is_empty(), "{shown:?} failed without a message");
    }
    Ok(())
}

fn usage_error(args: &[&str]) -> String {
    let out = pmu(args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert!(!stderr.contains(BUG), "{args:?}: {stderr}");
    stderr
}

/// What people and scripts pass by mistake: nothing, blanks, signs, radix prefixes
/// gone wrong, huge numbers, other scripts, grammar-like noise and a 10^5-character
/// word.
fn any_word() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        Just(" ".to_string()),
        "\\PC{0,24}",
        "[0-9]{1,30}",
        "-[0-9]{1,8}",
        "[+-]?0[xXbB][0-9a-fA-F_+-]{0,10}",
        "[0-9]{1,3}[eE][+-]?[0-9]{1,4}",
        "\\p{Greek}{1,8}|\\p{Han}{1,4}",
        "[a-zA-Z_:.=/,0-9-]{0,40}",
        ("[A-Z]", 50_000usize..100_000).prop_map(|(c, n)| c.repeat(n)),
    ]
}

/// Arguments of `pmu stat` that keep a run short whatever else is given, so that a
/// value that happens to be valid costs milliseconds.
fn short_stat() -> Vec<String> {
    ["stat", "--cycles", "20000", "--mux-interval", "5000"].iter().map(|s| s.to_string()).collect()
}

/// A word that `--cycles` or `--mux-interval` would read as a long run is replaced by
/// a short one: the property is about bad input, not about waiting.
fn not_long(word: String) -> String {
    match pmukit_core::number::parse_count(&word) {
        Ok(n) if n > 1_000_000 => "1000000".into(),
        _ => word,
    }
}

fn string_args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn positional_arguments_of_every_subcommand(word in any_word(), which in 0usize..10) {
        let args = match which {
            0 => string_args(&["list", &word]),
            1 => string_args(&["describe", &word]),
            2 => string_args(&["encode", "INSTR_EXEC", &word]),
            3 => string_args(&["schedule", &word, "CPU_CYCLES"]),
            4 => string_args(&["decode", &word, "PMCR", "0"]),
            5 => string_args(&["decode", "arm1176", &word, "0"]),
            6 => string_args(&["decode", "montecito", "PMC4", &word]),
            7 => string_args(&["hv", &word]),
            8 => string_args(&["hv", "--machine", "kt", "api_set_version 0x209 1 0", &format!("kt_set_perfreg {word} 1")]),
            _ => string_args(&["mmustat", "decode", &word]),
        };
        check(&args, b"")?;
    }

    #[test]
    fn global_options_with_every_subcommand(word in any_word(), option in 0usize..2, command in 0usize..6, json in any::<bool>()) {
        let mut args = match command {
            0 => string_args(&["list"]),
            1 => string_args(&["describe", "CPU_CYCLES"]),
            2 => string_args(&["encode", "CPU_CYCLES"]),
            3 => string_args(&["schedule", "CPU_CYCLES"]),
            4 => string_args(&["workloads"]),
            _ => short_stat(),
        };
        args.extend(string_args(&[["--pmu", "--events-file"][option], &word]));
        if json {
            args.push("--json".into());
        }
        check(&args, b"")?;
    }

    #[test]
    fn every_option_of_stat(word in any_word(), option in 0usize..13) {
        let mut args = short_stat();
        let name = [
            "-e", "--workload", "--seed", "--cycles", "--mux-interval", "-x", "--threads", "--fault-rate",
            "--trace", "--machine-config", "--kt-nodes", "--kt-deny", "--pmu",
        ][option];
        let word = if matches!(name, "--cycles" | "--mux-interval") { not_long(word) } else { word };
        if name.starts_with("--kt") {
            args.extend(string_args(&["--pmu", "sparc-kt"]));
        }
        args.extend([name.to_string(), word]);
        check(&args, b"")?;
    }

    /// `pmu stat --live`'s own options and its COMMAND. The command is never a word
    /// that could name a real program: the word is `true`'s argument, or a program in
    /// a directory that does not exist; a duration that parses is kept short.
    #[cfg(all(target_os = "linux", feature = "live"))]
    #[test]
    fn every_option_of_live_stat(word in any_word(), option in 0usize..6) {
        let mut args = string_args(&["stat", "--live"]);
        let short = |w: String| if w.parse::<f64>().is_ok_and(|s| s > 0.05) { "0.05".to_string() } else { w };
        match option {
            0 => args.extend(string_args(&["-e", &word, "--", "true"])),
            1 => args.extend(string_args(&["-a", "-e", "cs", "--duration", &short(word)])),
            2 => args.extend(string_args(&["--sysfs", &word, "--", "true"])),
            3 => args.extend(string_args(&["--pmu", &word, "--", "true"])),
            4 => args.extend(string_args(&["-e", "task-clock", "--", "true", &word])),
            _ => args.extend(string_args(&["-e", "task-clock", "--", &format!("/nonexistent-pmukit/{word}")])),
        }
        check(&args, b"")?;
    }

    #[test]
    fn decodes_with_option(word in any_word(), register in 0usize..4) {
        let reg = ["PMD33", "PMD34", "PMD48", "PMC37"][register];
        check(&string_args(&["decode", "montecito", reg, "0x8000", "--with", &word]), b"")?;
        check(&string_args(&["decode", "montecito", reg, "0x8000", "--with", &format!("PMC40={word}")]), b"")?;
    }

    #[test]
    fn every_qualification_option(word in any_word(), option in 0usize..4) {
        let flag = ["--irange", "--drange", "--opc-match32", "--opc-match34"][option];
        check(&string_args(&["encode", "montecito::IA64_INST_RETIRED", "montecito::L1D_READS_SET0", flag, &word]), b"")?;
        check(&string_args(&["encode", "arm1176::INSTR_EXEC", flag, &word, "--inverse-irange", "--no-qual-check"]), b"")?;
        check(&string_args(&["stat", "--pmu", "montecito", "-e", "IA64_INST_RETIRED", "--cycles", "1e5", flag, &word]), b"")?;
        check(&string_args(&["schedule", "montecito::IA64_INST_RETIRED", flag, &word]), b"")?;
    }

    #[test]
    fn every_option_of_record(word in any_word(), option in 0usize..9) {
        let dir = std::env::temp_dir().join(format!("pmukit-record-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("r.json").display().to_string();
        let mut args = string_args(&["record", "--cycles", "1e5", "-o", &file]);
        let name = ["-e", "-c", "--workload", "--seed", "--cycles", "--threads", "--pmu", "--ip-ear", "--irange"][option];
        let word = if name == "--cycles" { not_long(word) } else { word };
        args.extend([name.to_string(), word]);
        check(&args, b"")?;
        check(&string_args(&["report", &file, "--top", "3"]), b"")?;
    }

    #[test]
    fn every_option_of_report(word in any_word(), option in 0usize..3) {
        let args = match option {
            0 => string_args(&["report", &word]),
            1 => string_args(&["report", "/nonexistent-pmukit/r.json", "--top", &word]),
            _ => string_args(&["report", "/nonexistent-pmukit/r.json", "--svg", &word]),
        };
        check(&args, b"")?;
    }

    #[test]
    fn every_option_of_hv(word in any_word(), option in 0usize..3) {
        let mut args = string_args(&["hv", [ "--machine", "--vcpus", "--vcpu"][option], &word]);
        args.push("niagara_mmustat_info".into());
        check(&args, b"")?;
    }

    /// Files of any content where a command reads one: the events file, the machine
    /// configuration, a trace, a recording and an MMU statistics dump, each given as
    /// standard input or a file.
    #[test]
    fn file_arguments_of_any_content(content in prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..2048),
        "\\PC{0,400}".prop_map(String::into_bytes),
        "([a-z_]{1,12} = [0-9\"a-z]{0,8}\n){0,12}".prop_map(String::into_bytes),
    ], which in 0usize..5, stdin in any::<bool>()) {
        let dir = std::env::temp_dir().join(format!("pmukit-bad-input-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("input-{which}"));
        std::fs::write(&path, &content).unwrap();
        let file = path.display().to_string();
        let mut args = short_stat();
        match which {
            0 => args = string_args(&["list", "--events-file", &file]),
            1 => args.extend(string_args(&["--machine-config", &file])),
            2 => args.extend(string_args(&["--trace", if stdin { "-" } else { &file }])),
            3 => args = string_args(&["report", if stdin { "-" } else { &file }]),
            _ => args = string_args(&["mmustat", "decode", if stdin { "-" } else { &file }]),
        }
        check(&args, &content)?;
    }
}

#[test]
fn blank_and_empty_event_strings_are_usage_errors_not_panics() {
    // Issue 10: these panicked (index out of bounds in main.rs) and exited 101.
    for args in [&["describe", ""][..], &["describe", " "], &["encode", " "], &["encode", ""], &["schedule", ""]] {
        let err = usage_error(args);
        assert!(err.contains("event 1 of 1 is blank") && err.contains("pmu list"), "{args:?}: {err}");
    }
    assert!(usage_error(&["encode", "INSTR_EXEC", ""]).contains("event 2 of 2 is blank"));
    assert!(usage_error(&["stat", "-e", "CPU_CYCLES,"]).contains("event 2 of 2 is blank"));
}

#[test]
fn every_command_reads_numbers_with_one_strict_parser() {
    // Issue 10: `--cycles 0XE` was refused while 0xE and 0X10 were accepted, and `+5`
    // and `0x+5` were read as 5.
    let out = pmu(&["stat", "--cycles", "0XE", "-e", "CPU_CYCLES", "-x,"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("14,"));
    // --seed takes the forms --cycles takes (issue 11).
    let seeded = |seed: &str| pmu(&["stat", "--cycles", "1e6", "--seed", seed, "-x,", "-e", "INSTR_EXEC"]).stdout;
    assert_eq!(seeded("1e3"), seeded("1000"));
    assert_eq!(seeded("0x3e8"), seeded("1_000"));
    for bad in ["+5", "0x+5", " 5", "5 ", "-1", "1e-3", "0x"] {
        // `=` and `--` hand a leading '-' to the parser rather than to clap.
        assert!(usage_error(&["stat", &format!("--cycles={bad}")]).contains("is not a count"), "{bad:?}");
        assert!(usage_error(&["stat", &format!("--seed={bad}")]).contains("is not a count"), "{bad:?}");
        assert!(usage_error(&["decode", "arm1176", "PMCR", "--", bad]).contains("is not a number"), "{bad:?}");
        if bad.trim() == bad {
            // A call's words are split at spaces.
            assert!(usage_error(&["hv", &format!("niagara_mmustat_conf {bad}")]).contains("is not a number"), "{bad:?}");
        }
    }
    assert!(usage_error(&["stat", "--threads", "+1"]).contains("is not a number"));
    assert!(usage_error(&["hv", "--vcpus", "+4", "niagara_mmustat_info"]).contains("is not a number"));
    assert!(usage_error(&["stat", "--fault-rate", "+0.1"]).contains("is not a rate"));
    assert!(usage_error(&["describe", "arm1176::r+7"]).contains("column"));
    let v: serde_json::Value = serde_json::from_slice(&pmu(&["decode", "arm1176", "PMCR", "0X7_0000", "--json"]).stdout).unwrap();
    assert_eq!(v["value"], "0x70000");
}

#[test]
fn mmustat_decode_streams_standard_input_and_summarises_warnings() {
    // Every buffer has two reserved fields that are not zero (§2.3 offsets 0x20, 0x1E0)
    // and 7 IMMU ctx0 8K hits.
    let mut buffer = vec![0u8; 0x200];
    buffer[0x20] = 1;
    buffer[0x1E0] = 1;
    buffer[0x7] = 7;
    let dump = buffer.repeat(40);
    let out = pmu_with_input(&string_args(&["mmustat", "decode", "-", "--json"]), &dump);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["buffers"].as_array().unwrap().len(), 40);
    assert_eq!(v["warnings"], 80);
    assert_eq!(v["buffers"][39]["slots"][0]["hits"], 7);
    assert_eq!(v["buffers"][39]["warnings"][1]["input_offset"], 39 * 0x200 + 0x1E0);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 6, "five warnings and a count: {stderr}");
    assert!(stderr.contains("75 more reserved fields are not zero"), "{stderr}");
    // A dump on standard input that ends inside a buffer: the whole buffers, then the
    // error, and the JSON still closes.
    let out = pmu_with_input(&string_args(&["mmustat", "decode", "-", "--json"]), &dump[..0x300]);
    assert_eq!(out.status.code(), Some(2));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["buffers"].as_array().unwrap().len(), 1);
    assert!(v["error"].as_str().unwrap().contains("768 bytes"), "{v}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("standard input: input is 768 bytes"));
    let out = pmu_with_input(&string_args(&["mmustat", "decode", "-"]), b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("empty input"));
}

#[test]
fn a_run_that_would_rotate_multiplexing_groups_without_end_is_refused() {
    // Issue 10: a huge --cycles with a tiny interval once ran for days (13 µs per
    // rotation). The bound names the interval that would do.
    let err = usage_error(&["stat", "--cycles", "1e12", "--mux-interval", "1000", "-e", "INSTR_EXEC,BR_EXEC,DCACHE_MISS"]);
    assert!(err.contains("1000000000 times") && err.contains("--mux-interval 100000 or more"), "{err}");
    // The same run at that interval is accepted (refused only for another reason here:
    // checked with a machine that cannot take the events, so that nothing runs).
    let err =
        usage_error(&["stat", "--cycles", "1e12", "--mux-interval", "100000", "-e", "INSTR_EXEC,BR_EXEC,DCACHE_MISS", "--threads", "2"]);
    assert!(!err.contains("rotate"), "{err}");
}
