//! pmu-events JSON: every PMU's export uses only keys perf's jevents.py maps, with string
//! values, and reads back (`import`) into the same events: names, codes, unit masks and
//! descriptions. A directory in the style of an upstream arm64 one (written here from
//! perf's format: EventCode-only entries, ArchStdEvent references to the arch root,
//! a metrics file) imports too.

use pmukit_arch::perf_json::{export, import, File};
use pmukit_arch::Catalog;
use serde_json::Value;

/// The keys jevents.py (perf 6.1 to 7.2) maps for events and for metrics.
const EVENT_KEYS: &[&str] = &["EventName", "EventCode", "UMask", "ConfigCode", "BriefDescription", "PublicDescription"];
const METRIC_KEYS: &[&str] = &["MetricName", "MetricExpr", "MetricGroup", "ScaleUnit", "BriefDescription", "PublicDescription"];

fn json_files(files: &[File]) -> Vec<(String, String)> {
    files.iter().filter(|f| f.path.ends_with(".json")).map(|f| (f.path.clone(), f.text.clone())).collect()
}

#[test]
fn every_pmus_export_uses_only_jevents_keys_as_strings() {
    let catalog = Catalog::builtin();
    for pmu in &catalog.pmus {
        let (files, _) = export(&catalog, pmu);
        let mapfile = files.iter().find(|f| f.path.ends_with("mapfile.csv")).unwrap_or_else(|| panic!("{}: mapfile", pmu.name()));
        assert!(mapfile.text.starts_with("Family-model,Version,Filename,EventType\n"), "{}", mapfile.text);
        assert!(mapfile.text.lines().nth(1).unwrap().ends_with(&format!("/{},core", pmu.name())));
        for f in files.iter().filter(|f| f.path.ends_with(".json")) {
            let entries: Vec<Value> = serde_json::from_str(&f.text).unwrap();
            let keys = if f.path.ends_with("metrics.json") { METRIC_KEYS } else { EVENT_KEYS };
            for e in &entries {
                for (k, v) in e.as_object().unwrap() {
                    assert!(keys.contains(&k.as_str()), "{}: {k} is not a key jevents.py maps", f.path);
                    assert!(v.is_string(), "{}: {k} must be a string", f.path);
                }
                // jevents.py: int(x, 0) of the code keys.
                for k in ["EventCode", "UMask", "ConfigCode"] {
                    if let Some(v) = e.get(k) {
                        let s = v.as_str().unwrap();
                        assert!(s.starts_with("0x") && u64::from_str_radix(&s[2..], 16).is_ok(), "{k} {s}");
                    }
                }
            }
        }
    }
}

#[test]
fn every_pmu_round_trips() {
    let catalog = Catalog::builtin();
    for pmu in &catalog.pmus {
        let (files, _) = export(&catalog, pmu);
        let (table, notes) = import(pmu, &json_files(&files), &[], None).unwrap_or_else(|e| panic!("{}: {e}", pmu.name()));
        assert!(notes.is_empty(), "{}: {notes:?}", pmu.name());
        let mut originals: Vec<_> = pmu.events().filter(|e| e.exists_on(pmu.desc.model) && e.subevent_of.is_empty()).collect();
        originals.sort_by(|a, b| a.name.cmp(&b.name));
        let mut events: Vec<_> = table.events.iter().collect();
        events.sort_by(|a, b| a.name.cmp(&b.name));
        assert_eq!(events.len(), originals.len(), "{}", pmu.name());
        for (got, want) in events.iter().zip(&originals) {
            assert_eq!((got.name.as_ref(), got.code), (want.name.as_ref(), want.code), "{}", pmu.name());
            let umasks = |e: &pmukit_core::table::EventDef| e.umasks.iter().map(|u| (u.name.to_string(), u.value)).collect::<Vec<_>>();
            assert_eq!(umasks(got), umasks(want), "{} {}", pmu.name(), want.name);
            if want.umasks.is_empty() {
                assert_eq!(got.description, want.description, "{} {}", pmu.name(), want.name);
            }
        }
    }
}

#[test]
fn the_drivers_config_is_what_perf_gets() {
    let catalog = Catalog::builtin();
    let entry = |pmu: &str, name: &str| -> Value {
        let (files, _) = export(&catalog, catalog.pmu(pmu).unwrap());
        files
            .iter()
            .filter(|f| f.path.ends_with(".json"))
            .flat_map(|f| serde_json::from_str::<Vec<Value>>(&f.text).unwrap())
            .find(|e| e["EventName"] == name)
            .unwrap_or_else(|| panic!("{pmu} {name}"))
    };
    // ARMv6: config = the event number (perf_event_v6.c); no format/ for event=.
    assert_eq!(entry("arm1176", "INSTR_EXEC")["ConfigCode"], "0x7");
    // T4: (sl << 22) | (mask << 16) (arch/sparc/kernel/perf_event.c).
    assert_eq!(entry("sparc-t4", "INSTR.LOADS")["ConfigCode"], "0xc40000");
    // No Linux driver: perf's generic EventCode and UMask.
    let e = entry("montecito", "BR_MISPRED_DETAIL.ALL.WRONG_PATH");
    assert_eq!((e["EventCode"].as_str(), e["UMask"].as_str()), (Some("0x5b"), Some("0x2")));
    assert!(e.get("ConfigCode").is_none());
}

#[test]
fn an_upstream_style_directory_imports_with_its_standard_events() {
    let catalog = Catalog::builtin();
    let pmu = catalog.pmu("arm1176").unwrap();
    let standard = vec![(
        "common.json".to_string(),
        r#"[{"EventCode": "0x07", "EventName": "INST_EXECUTED", "BriefDescription": "Instruction executed"},
            {"EventCode": "0x05", "EventName": "BR_EXEC", "BriefDescription": "Branch executed"}]"#
            .to_string(),
    )];
    let files = vec![
        (
            "pipeline.json".to_string(),
            r#"[{"ArchStdEvent": "INST_EXECUTED"},
                {"EventCode": "0x06", "EventName": "BR_MISP", "PublicDescription": "Branch mispredicted."},
                {"EventCode": "0x1FF", "EventName": "TOO_WIDE"},
                {"ArchStdEvent": "NOT_IN_ROOT", "EventName": "LOST"}]"#
                .to_string(),
        ),
        ("metrics.json".to_string(), r#"[{"MetricName": "ipc", "MetricExpr": "INST_EXECUTED / CPU_CYCLES"}]"#.to_string()),
    ];
    let (table, notes) = import(pmu, &files, &standard, None).unwrap();
    let names: Vec<(&str, u64)> = table.events.iter().map(|e| (e.name.as_ref(), e.code)).collect();
    assert_eq!(names, [("INST_EXECUTED", 7), ("BR_MISP", 6)]);
    assert_eq!(table.events[0].description, "Instruction executed", "from the standard event");
    assert!(notes.iter().any(|n| n.contains("TOO_WIDE") && n.contains("do not fit")), "{notes:?}");
    assert!(notes.iter().any(|n| n.contains("LOST") && n.contains("arch root")), "{notes:?}");
    // What perf would refuse to build is refused with the file and entry.
    let bad = vec![("x.json".to_string(), "{\"EventName\": 1}".to_string())];
    assert!(import(pmu, &bad, &[], None).unwrap_err().to_string().contains("x.json"));
    let none = vec![("m.json".to_string(), "[]".to_string())];
    assert!(import(pmu, &none, &[], None).is_err());
    // Outside perf's tree the directories above the model may hold any JSON: it is not
    // read for standard events, with a note, and the model still imports.
    let mut stray = standard.clone();
    stray.push(("/container_info.json".to_string(), r#"{"image": "x"}"#.to_string()));
    let (again, notes) = import(pmu, &files, &stray, None).unwrap();
    assert_eq!(again, table);
    assert!(notes.iter().any(|n| n.contains("/container_info.json") && n.contains("not read for ArchStdEvent")), "{notes:?}");
}

/// perf resolves a metric's events among the events a directory holds: no exported
/// metric names an event the export left out (Montecito's sub-events), and each one
/// left out for that is named in a note.
#[test]
fn no_exported_metric_names_an_event_the_export_left_out() {
    let catalog = Catalog::builtin();
    for pmu in &catalog.pmus {
        let (files, notes) = export(&catalog, pmu);
        let entries = |metrics: bool| -> Vec<Value> {
            files
                .iter()
                .filter(|f| f.path.ends_with(".json") && f.path.ends_with("metrics.json") == metrics)
                .flat_map(|f| serde_json::from_str::<Vec<Value>>(&f.text).unwrap())
                .collect()
        };
        let events: Vec<String> = entries(false).iter().map(|e| e["EventName"].as_str().unwrap().to_ascii_uppercase()).collect();
        for m in entries(true) {
            let expr = pmukit_core::metric::MetricExpr::parse(m["MetricExpr"].as_str().unwrap()).unwrap();
            for id in expr.identifiers().into_iter().filter(|id| *id != "duration_time") {
                assert!(events.contains(&id.to_ascii_uppercase()), "{}: metric {} names {id}, not exported", pmu.name(), m["MetricName"]);
            }
        }
        if pmu.name() == "montecito" {
            assert!(notes.iter().any(|n| n.starts_with("metric ia64_ipc is not exported: its event IA64_INST_RETIRED.THIS")), "{notes:?}");
        }
    }
}

/// pmukit's own export reads back losslessly (issue 41 item 3): with its companion
/// table, every PMU's import is the table exported, aliases, availability per core,
/// counter restrictions, modifiers and sub-events included; a companion perf's
/// entries disagree with, or a malformed one, is refused naming the file.
#[test]
fn every_pmus_export_imports_back_to_the_same_table() {
    use pmukit_arch::perf_json::COMPANION;
    let catalog = Catalog::builtin();
    for pmu in &catalog.pmus {
        let (files, _) = export(&catalog, pmu);
        let companion = files.iter().find(|f| f.path.ends_with(COMPANION)).unwrap_or_else(|| panic!("{}: companion", pmu.name()));
        let (table, notes) = import(pmu, &json_files(&files), &[], Some(("c.toml", &companion.text))).unwrap();
        assert_eq!(&table, pmu.table.as_ref(), "{}", pmu.name());
        assert!(notes.iter().any(|n| n.contains("imported whole")), "{notes:?}");
    }
    let pmu = catalog.pmu("arm1176").unwrap();
    let (files, _) = export(&catalog, pmu);
    let companion = &files.iter().find(|f| f.path.ends_with(COMPANION)).unwrap().text;
    let changed = companion.replacen("name = \"INSTR_EXEC\"", "name = \"INSTR_EXECUTED\"", 1);
    assert_ne!(&changed, companion);
    let err = import(pmu, &json_files(&files), &[], Some(("c.toml", &changed))).unwrap_err().to_string();
    assert!(err.starts_with("c.toml: perf's entry") && err.contains("remove pmukit-events.toml"), "{err}");
    let err = import(pmu, &json_files(&files), &[], Some(("c.toml", "family = ["))).unwrap_err().to_string();
    assert!(err.starts_with("c.toml"), "{err}");
}
