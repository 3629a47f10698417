//! The event-string grammar and its resolution against a PMU's table, on a
//! synthetic two-model family.

use std::borrow::Cow;

use pmukit_core::event_string::{parse, resolve};
use pmukit_core::pmu::{CounterDesc, ModifierDef, ModifierKind, Pmu, PmuDesc};
use pmukit_core::table::EventTable;

const TABLE: &str = r#"
family = "toy"
[[event]]
name = "INSTR_EXEC"
code = 0x07
description = "instructions"
[[event]]
name = "BR_MISPRED_DETAIL"
code = 0x5B
description = "branches"
umasks = [ { name = "ALL", value = 0x0 }, { name = "ALL_PRED", value = 0x1 }, { name = "TAKEN", value = 0x4 } ]
[[event]]
name = "MODEL_B_ONLY"
code = 0x30
description = "b only"
only_on = ["b"]
[[event]]
name = "CYCLES"
code = 0xFF
description = "cycles"
modifiers = ["d"]
"#;

const COUNTERS: &[CounterDesc] =
    &[CounterDesc { name: "C0", width: 32, description: "" }, CounterDesc { name: "C1", width: 32, description: "" }];
const MODS: &[ModifierDef] = &[
    ModifierDef { name: "u", kind: ModifierKind::Flag, description: "user" },
    ModifierDef { name: "thresh", kind: ModifierKind::Number { min: 0, max: 7 }, description: "threshold" },
];
const EVMODS: &[ModifierDef] = &[ModifierDef { name: "d", kind: ModifierKind::Flag, description: "divide" }];

static A: PmuDesc = PmuDesc {
    name: "toya",
    family: "toy",
    model: "a",
    description: "",
    counters: COUNTERS,
    general_counters: &["C0", "C1"],
    modifiers: MODS,
    event_modifiers: EVMODS,
    max_code: 0xFF,
    max_umask: 0xF,
    raw_outside_table: None,
};
static B: PmuDesc = PmuDesc { name: "toyb", model: "b", raw_outside_table: Some("reserved by the spec"), ..A };

fn pmus() -> Vec<Pmu> {
    let table = EventTable::from_toml(TABLE, "toy").unwrap();
    vec![Pmu { desc: &A, table: Cow::Owned(table.clone()) }, Pmu { desc: &B, table: Cow::Owned(table) }]
}

#[test]
fn full_syntax_splits_into_tokens_with_columns() {
    let s = parse("toya::BR_MISPRED_DETAIL.ALL.TAKEN:u:thresh=3").unwrap();
    assert_eq!(s.pmu.unwrap().text, "toya");
    assert_eq!((s.event.text.as_str(), s.event.column), ("BR_MISPRED_DETAIL", 7));
    assert_eq!(s.umasks.iter().map(|t| t.text.as_str()).collect::<Vec<_>>(), ["ALL", "TAKEN"]);
    assert_eq!(s.modifiers[1].1.as_ref().unwrap().text, "3");
}

#[test]
fn names_are_case_insensitive_and_default_pmu_applies() {
    let sel = resolve("instr_exec", &pmus(), "toya").unwrap();
    assert_eq!((sel.pmu, sel.code, sel.name()), ("toya", 7, "INSTR_EXEC".to_string()));
    let sel = resolve("TOYB::Instr_Exec", &pmus(), "toya").unwrap();
    assert_eq!(sel.pmu, "toyb");
}

#[test]
fn unit_masks_or_together() {
    let sel = resolve("BR_MISPRED_DETAIL.ALL_PRED.TAKEN", &pmus(), "toya").unwrap();
    assert_eq!(sel.umask, 0x5);
    assert_eq!(sel.name(), "BR_MISPRED_DETAIL.ALL_PRED.TAKEN");
}

#[test]
fn flattened_unit_mask_names_are_accepted() {
    let sel = resolve("BR_MISPRED_DETAIL_ALL_PRED", &pmus(), "toya").unwrap();
    assert_eq!((sel.umask, sel.umask_names.clone()), (1, vec!["ALL_PRED".to_string()]));
}

#[test]
fn event_with_unit_masks_and_no_default_needs_one() {
    let err = resolve("BR_MISPRED_DETAIL", &pmus(), "toya").unwrap_err();
    assert!(err.message.contains("needs a unit mask") && err.help.unwrap().contains("ALL_PRED"));
}

#[test]
fn unknown_event_suggests_the_nearest_name_with_its_column() {
    let err = resolve("toya::INSTR_EXE", &pmus(), "toya").unwrap_err();
    assert_eq!(err.column, 7);
    assert!(err.message.contains("'INSTR_EXE'"));
    assert!(err.help.as_deref().unwrap().contains("INSTR_EXEC"), "{err}");
    assert!(err.to_string().contains("^^^^^^^^^"), "{err}");
}

#[test]
fn unknown_unit_mask_lists_the_valid_ones() {
    let err = resolve("BR_MISPRED_DETAIL.TAKN", &pmus(), "toya").unwrap_err();
    assert_eq!(err.column, 19);
    let help = err.help.unwrap();
    assert!(help.contains("TAKEN") && help.contains("ALL_PRED"), "{help}");
}

#[test]
fn event_of_another_model_is_refused_with_where_it_exists() {
    let err = resolve("MODEL_B_ONLY", &pmus(), "toya").unwrap_err();
    assert!(err.message.contains("not available on toya"), "{}", err.message);
    assert!(err.help.unwrap().contains("b"));
    assert!(resolve("toyb::MODEL_B_ONLY", &pmus(), "toya").is_ok());
}

#[test]
fn raw_codes_resolve_to_table_events_or_stay_raw() {
    let sel = resolve("toya::r7", &pmus(), "toya").unwrap();
    assert_eq!(sel.event.unwrap().name, "INSTR_EXEC");
    let sel = resolve("0x42", &pmus(), "toya").unwrap();
    assert_eq!((sel.event.is_none(), sel.code, sel.name()), (true, 0x42, "r42".to_string()));
    assert!(resolve("r100", &pmus(), "toya").unwrap_err().message.contains("does not fit"));
}

#[test]
fn raw_codes_outside_the_table_are_refused_where_the_spec_reserves_them() {
    let err = resolve("toyb::r42", &pmus(), "toya").unwrap_err();
    assert!(err.message.contains("reserved") && err.message.contains("reserved by the spec"), "{}", err.message);
}

#[test]
fn modifiers_are_checked_by_kind_and_range() {
    let sel = resolve("INSTR_EXEC:u:thresh=0x3", &pmus(), "toya").unwrap();
    assert_eq!(sel.modifiers, vec![("u", 1), ("thresh", 3)]);
    assert!(resolve("INSTR_EXEC:thresh=8", &pmus(), "toya").unwrap_err().help.unwrap().contains("0 to 7"));
    assert!(resolve("INSTR_EXEC:thresh", &pmus(), "toya").unwrap_err().message.contains("needs a value"));
    assert!(resolve("INSTR_EXEC:u=2", &pmus(), "toya").unwrap_err().message.contains("0 or 1"));
    assert!(resolve("INSTR_EXEC:u:u", &pmus(), "toya").unwrap_err().message.contains("twice"));
    let err = resolve("INSTR_EXEC:k", &pmus(), "toya").unwrap_err();
    assert_eq!(err.column, 12);
    assert!(err.help.unwrap().contains("u, thresh"));
}

#[test]
fn event_specific_modifiers_apply_only_to_their_events() {
    assert!(resolve("CYCLES:d", &pmus(), "toya").is_ok());
    let err = resolve("INSTR_EXEC:d", &pmus(), "toya").unwrap_err();
    assert!(err.message.contains("does not apply"), "{}", err.message);
}

#[test]
fn unknown_pmu_lists_the_valid_ones() {
    let err = resolve("toyc::INSTR_EXEC", &pmus(), "toya").unwrap_err();
    assert_eq!(err.column, 1);
    assert!(err.help.unwrap().contains("toya, toyb"));
}

#[test]
fn syntax_errors_point_at_the_column() {
    for (input, column) in [("", 1), ("toya::", 7), ("EV.", 4), ("EV:", 4), ("EV:u=", 6), ("EV u", 3), ("EV/x", 3)] {
        let err = parse(input).unwrap_err();
        assert_eq!(err.column, column, "{input:?}: {err}");
    }
}

proptest::proptest! {
    #[test]
    fn resolve_never_panics(s in "\\PC{0,40}") {
        let _ = resolve(&s, &pmus(), "toya");
    }

    #[test]
    fn resolve_never_panics_on_grammar_like_input(s in "[a-zA-Z_:.=0-9]{0,30}") {
        let _ = resolve(&s, &pmus(), "toya");
    }
}
