//! `pmu list` and `pmu describe` (issue 11): every listed name can be described, at
//! 80 columns nothing is split or too wide, filters and `-v` find what they should.

use std::process::{Command, Output};

use serde_json::Value;

fn pmu_at(columns: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pmu")).env("COLUMNS", columns).args(args).output().expect("run pmu")
}

fn ok(args: &[&str]) -> String {
    let out = pmu_at("80", args);
    assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

fn json(args: &[&str]) -> Value {
    let mut with = args.to_vec();
    with.push("--json");
    let v: Value = serde_json::from_str(&ok(&with)).expect("JSON output");
    assert_eq!(v["schema"], 1, "{args:?}");
    v
}

/// Every line fits 80 columns.
fn fits(text: &str, what: &str) {
    for line in text.lines() {
        assert!(line.chars().count() <= 80, "{what}: a line of {} columns:\n{line}", line.chars().count());
    }
}

fn pmus() -> Vec<String> {
    let v = json(&["list"]);
    let mut names: Vec<String> = v["events"].as_array().unwrap().iter().map(|e| e["pmu"].as_str().unwrap().to_string()).collect();
    names.dedup();
    names
}

#[test]
fn every_name_list_prints_can_be_described_within_80_columns() {
    let mut described = 0;
    for p in pmus() {
        let listing = ok(&["list", &p]);
        fits(&listing, &format!("pmu list {p}"));
        let v = json(&["list", &p]);
        for e in v["events"].as_array().unwrap() {
            let name = e["name"].as_str().unwrap();
            assert!(listing.lines().any(|l| l.split_whitespace().next() == Some(name)), "pmu list {p}: {name} not whole on a line");
            let aliases = e["aliases"].as_array().unwrap().iter().map(|a| a.as_str().unwrap());
            for n in std::iter::once(name).chain(aliases) {
                let full = format!("{p}::{n}");
                let text = ok(&["describe", &full]);
                fits(&text, &full);
                assert!(text.starts_with(&format!("{p}::{name}")), "{full}:\n{text}");
                let d = json(&["describe", &full]);
                assert_eq!(d["event"]["name"], name, "{full}");
                assert_eq!(d["event"]["umasks"], e["umasks"], "{full}");
                described += 1;
            }
        }
    }
    assert!(described > 474, "{described} names described");
}

#[test]
fn every_metric_can_be_listed_and_described() {
    let v = json(&["list", "--metrics"]);
    let metrics = v["metrics"].as_array().unwrap();
    let mut names: Vec<&str> = metrics.iter().map(|m| m["name"].as_str().unwrap()).collect();
    names.sort_unstable();
    names.dedup();
    assert!(names.len() >= 110, "{} metrics", names.len());
    fits(&ok(&["list", "--metrics"]), "pmu list --metrics");
    for m in metrics {
        let (name, pmu) = (m["name"].as_str().unwrap(), m["pmus"][0].as_str().unwrap());
        let text = ok(&["describe", &format!("{pmu}::{name}")]);
        fits(&text, name);
        assert!(text.contains(m["expr"].as_str().unwrap().split_whitespace().next().unwrap()), "{name}:\n{text}");
        let d = json(&["describe", &format!("{pmu}::{name}")]);
        let found = d["metrics"].as_array().unwrap();
        assert_eq!(found.len(), 1, "{name}");
        assert_eq!(found[0]["expr"], m["expr"]);
        assert!(found[0]["pmus"].as_array().unwrap().iter().any(|p| p == pmu));
        assert!(!found[0]["groups"].as_array().unwrap().is_empty(), "{name} has a group");
    }
}

#[test]
fn an_event_that_needs_a_unit_mask_is_described_with_all_of_them() {
    // Issue 11: these stopped with "needs a unit mask".
    let text = ok(&["describe", "--pmu", "montecito", "BR_MISPRED_DETAIL"]);
    for u in [".ALL.ALL_PRED", ".NRETIND.WRONG_TARGET", "only the listed values", "PMD4-15", "choose a unit mask"] {
        assert!(text.contains(u), "{u}:\n{text}");
    }
    let v = json(&["describe", "sparc-t4::SEL"]);
    assert_eq!(v["event"]["needs_umask"], true);
    assert_eq!(v["event"]["umasks"].as_array().unwrap().len(), 7);
    assert_eq!(v["event"]["umask_rules"]["ignored_bits"], 0x20);
    assert!(v["event"].get("encoding").is_none());
}

#[test]
fn list_filters_by_glob_or_word_and_v_shows_unit_masks() {
    let v = json(&["list", "L2D*"]);
    let events = v["events"].as_array().unwrap();
    assert!(!events.is_empty() && events.iter().all(|e| e["pmu"].as_str().unwrap().starts_with("montecito")));
    assert!(events.iter().all(|e| e["name"].as_str().unwrap().starts_with("L2D")));
    // A word is looked for in descriptions too: Montecito's cache events have no
    // "cache" in their names.
    let v = json(&["list", "--pmu", "montecito", "cache"]);
    let events = v["events"].as_array().unwrap();
    assert!(events.iter().any(|e| e["name"] == "L1I_READS") && events.iter().all(|e| e["pmu"] == "montecito"));
    // `EVENT.UMASK` names match globs.
    let v = json(&["list", "sparc-t4", "*.sel_1"]);
    assert_eq!(v["events"].as_array().unwrap().iter().map(|e| e["name"].as_str().unwrap()).collect::<Vec<_>>(), ["SEL"]);
    let verbose = ok(&["list", "-v", "sparc-t4", "SEL"]);
    fits(&verbose, "pmu list -v sparc-t4 SEL");
    assert!(verbose.contains(".SEL_0_WAIT") && verbose.contains("0x1f") == verbose.contains("0x1f"), "{verbose}");
    assert!(verbose.contains(":u count in user mode"), "{verbose}");
    // Without -v no unit masks; piped (as here), every description whole, wrapped, as
    // perf list keeps them (a terminal gets one line an event).
    let brief = ok(&["list", "sparc-t4", "SEL"]);
    fits(&brief, "pmu list sparc-t4 SEL");
    assert!(!brief.contains(".SEL_0_WAIT") && brief.lines().any(|l| l.starts_with(" SEL ")) && !brief.contains('…'), "{brief}");
}

#[test]
fn counters_are_written_as_ranges() {
    let text = ok(&["list", "montecito", "L1D_READS_SET0"]);
    assert!(text.lines().any(|l| l.starts_with(" counters:") && l.ends_with("PMD4-15 (47-bit)")), "{text}");
    let text = ok(&["list", "arm1176", "CPU_CYCLES"]);
    assert!(text.contains("CCNT (32-bit), PMN0-1 (32-bit)"), "{text}");
}

#[test]
fn a_filter_that_matches_nothing_is_a_usage_error_that_suggests_a_pmu() {
    let out = pmu_at("80", &["list", "arm1167"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("matches 'arm1167'") && err.contains("arm1176"), "{err}");
    let out = pmu_at("80", &["list", "one", "two"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("'two' is a second filter"));
}

#[test]
fn every_register_decodes_within_80_columns() {
    let catalog = pmukit_arch::Catalog::builtin();
    let mut registers = 0;
    for p in &catalog.pmus {
        for r in pmukit_arch::registers(p) {
            registers += 1;
            let ones = if r.width >= 64 { u64::MAX } else { (1u64 << r.width) - 1 };
            // Zero decodes everywhere; the pattern sets every other bit (reserved ones
            // too, for the warnings) where the register takes it.
            for value in [0, ones & 0x5555_5555_5555_5555] {
                let value = format!("{value:#x}");
                let out = pmu_at("80", &["decode", p.name(), r.name, &value]);
                if value != "0x0" && out.status.code() == Some(2) {
                    continue;
                }
                assert!(out.status.success(), "pmu decode {} {} {value}: {}", p.name(), r.name, String::from_utf8_lossy(&out.stderr));
                fits(&String::from_utf8(out.stdout).unwrap(), &format!("pmu decode {} {} {value}", p.name(), r.name));
            }
        }
    }
    assert!(registers > 30, "{registers} registers");
}
