//! The event-string grammar and its resolution against a PMU's table, on a
//! synthetic two-model family.

use std::borrow::Cow;

use pmukit_core::event_string::{parse, resolve};
use pmukit_core::pmu::{CounterDesc, GenericMap, ModifierDef, ModifierKind, Pmu, PmuDesc};
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
    raw_umask_bits: 0,
    raw_outside_table: None,
    shared_counters: false,
    generic: GenericMap { events: &[("cpu-cycles", "CYCLES"), ("instructions", "INSTR.ALL")], source: "the toy driver's map" },
    linux_pmu: None,
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

/// A family with T4-like unit-mask rules: `sl << 6 | mask` raw codes.
mod combinations {
    use super::*;

    const TABLE: &str = r#"
family = "toy"
[[event]]
name = "SEL"
code = 1
description = "select"
umask_ignored = 0x20
umask_combinations = "listed"
umask_note = "the only useful settings with several bits are 6 and 18"
umasks = [
  { name = "WAIT", value = 0x2, aliases = ["Sel_0_wait"] },
  { name = "READY", value = 0x4 },
  { name = "WAIT_READY", value = 0x6 },
  { name = "ONE", value = 0x8 },
]
[[event]]
name = "PICK"
code = 2
description = "pick"
umask_combinations = "meaningless"
umask_note = "May provide meaningless data."
umasks = [ { name = "P0", value = 0x1 }, { name = "P1", value = 0x2 } ]
[[event]]
name = "INSTR"
code = 3
description = "instructions"
umasks = [ { name = "LD", value = 0x4 }, { name = "ST", value = 0x8 } ]
"#;

    static T4ISH: PmuDesc = PmuDesc { name: "t4ish", max_code: 31, max_umask: 0x3F, raw_umask_bits: 6, ..A };

    fn pmus() -> Vec<Pmu> {
        vec![Pmu { desc: &T4ISH, table: Cow::Owned(EventTable::from_toml(TABLE, "toy").unwrap()) }]
    }

    #[test]
    fn any_combination_ors_the_bits() {
        let sel = resolve("INSTR.LD.ST", &pmus(), "t4ish").unwrap();
        assert_eq!((sel.umask, sel.warnings.len()), (0xC, 0));
    }

    #[test]
    fn listed_combinations_refuse_unlisted_values_quoting_the_spec() {
        assert_eq!(resolve("SEL.WAIT.READY", &pmus(), "t4ish").unwrap().umask, 0x6, "6 is listed");
        let err = resolve("SEL.WAIT.ONE", &pmus(), "t4ish").unwrap_err();
        assert!(err.message.contains("0xa") && err.message.contains("only useful settings"), "{}", err.message);
        assert!(err.help.unwrap().contains("WAIT_READY (0x6)"));
    }

    #[test]
    fn meaningless_combinations_are_accepted_with_a_warning() {
        let sel = resolve("PICK.P0.P1", &pmus(), "t4ish").unwrap();
        assert_eq!(sel.umask, 0x3);
        assert!(sel.warnings[0].contains("meaningless"), "{:?}", sel.warnings);
    }

    #[test]
    fn ignored_bits_are_flagged() {
        let sel = resolve("SEL.WAIT.0x20", &pmus(), "t4ish").unwrap();
        assert_eq!(sel.umask, 0x22);
        assert!(sel.warnings.iter().any(|w| w.contains("ignored")), "{:?}", sel.warnings);
    }

    #[test]
    fn unit_mask_aliases_select_event_and_mask() {
        let sel = resolve("sel_0_WAIT", &pmus(), "t4ish").unwrap();
        assert_eq!((sel.code, sel.umask, sel.name()), (1, 0x2, "SEL.WAIT".to_string()));
    }

    #[test]
    fn raw_codes_split_into_selector_and_mask() {
        let sel = resolve("t4ish::r0c8", &pmus(), "t4ish").unwrap();
        assert_eq!((sel.code, sel.umask, sel.event.unwrap().name.as_ref()), (3, 0x8, "INSTR"));
        assert!(resolve("t4ish::r046", &pmus(), "t4ish").is_ok(), "SEL 0x6 is listed");
        assert!(resolve("t4ish::r04a", &pmus(), "t4ish").is_err(), "SEL 0xa is not");
    }

    #[test]
    fn numeric_unit_masks_beyond_the_field_are_refused() {
        let err = resolve("INSTR.0x40", &pmus(), "t4ish").unwrap_err();
        assert!(err.message.contains("does not fit"), "{}", err.message);
    }
}

/// Montecito-style unit masks: enumerated patterns with don't-care bits, names with
/// dots, invalid selections, and a sub event sharing its parent's code.
const PATTERNS: &str = r#"
family = "toy"
[[event]]
name = "TAGGED_RETIRED"
code = 0x08
description = "tagged"
umask_combinations = "listed"
umasks = [ { name = "IBRP0", value = 0x0, ignored = 0xc, default = true }, { name = "IBRP1", value = 0x1, ignored = 0xc } ]
[[event]]
name = "RETIRED"
code = 0x08
description = "a sub event of TAGGED_RETIRED"
subevent_of = "TAGGED_RETIRED"
[[event]]
name = "MISPRED"
code = 0x5B
description = "mispredictions"
umask_combinations = "listed"
umasks = [ { name = "ALL.ALL_PRED", value = 0x0, default = true }, { name = "ALL.CORRECT_PRED", value = 0x1 }, { name = "ALL", value = 0x2 } ]
invalid_umasks = [ { value = 0x3, ignored = 0xc, kind = "nothing", note = "(* nothing will be counted *)" } ]
"#;

fn pattern_pmu() -> Vec<Pmu> {
    let table = EventTable::from_toml(PATTERNS, "toy").unwrap();
    let models = ["a", "b"];
    table.validate(&A.rules(&models, &["C0", "C1"], &["u", "thresh", "d"]), "toy").unwrap();
    vec![Pmu { desc: &A, table: Cow::Owned(table) }]
}

#[test]
fn a_dotted_unit_mask_name_is_one_unit_mask() {
    let sel = resolve("MISPRED.ALL.CORRECT_PRED", &pattern_pmu(), "toya").unwrap();
    assert_eq!((sel.umask, sel.name()), (0x1, "MISPRED.ALL.CORRECT_PRED".to_string()));
    // The shorter name ALL is a unit mask too; the longest match wins.
    assert_eq!(resolve("MISPRED.ALL", &pattern_pmu(), "toya").unwrap().umask, 0x2);
    // pfmon's flattened form replaces the dots with '_'.
    assert_eq!(resolve("MISPRED_ALL_CORRECT_PRED", &pattern_pmu(), "toya").unwrap().umask, 0x1);
}

#[test]
fn a_raw_unit_mask_matches_a_pattern_with_dont_care_bits() {
    let sel = resolve("TAGGED_RETIRED.0x5", &pattern_pmu(), "toya").unwrap();
    assert_eq!(sel.umask, 0x5, "bxx01: 0x5 selects IBRP1");
    let err = resolve("TAGGED_RETIRED.0x2", &pattern_pmu(), "toya").unwrap_err();
    assert!(err.message.contains("not a meaningful setting"), "{err}");
}

#[test]
fn an_invalid_selection_is_refused_with_the_specs_words() {
    let err = resolve("MISPRED.0x7", &pattern_pmu(), "toya").unwrap_err();
    assert!(err.message.contains("counts nothing") && err.message.contains("(* nothing will be counted *)"), "{err}");
}

#[test]
fn a_sub_event_shares_its_parents_code_and_decodes_as_the_parent() {
    let pmus = pattern_pmu();
    assert_eq!(resolve("RETIRED", &pmus, "toya").unwrap().code, 0x08);
    assert_eq!(pmus[0].table.by_code(0x08, "a").unwrap().name, "TAGGED_RETIRED");
}

#[test]
fn table_validation_refuses_overlapping_invalid_selections_and_bad_sub_events() {
    let overlap = PATTERNS.replace("value = 0x3, ignored = 0xc", "value = 0x2, ignored = 0x0");
    let table = EventTable::from_toml(&overlap, "toy").unwrap();
    let err = table.validate(&A.rules(&["a", "b"], &["C0", "C1"], &["u", "thresh", "d"]), "toy").unwrap_err();
    assert!(err.to_string().contains("overlaps an invalid selection"), "{err}");
    let orphan = PATTERNS.replace("subevent_of = \"TAGGED_RETIRED\"", "subevent_of = \"MISPRED\"");
    let table = EventTable::from_toml(&orphan, "toy").unwrap();
    let err = table.validate(&A.rules(&["a", "b"], &["C0", "C1"], &["u", "thresh", "d"]), "toy").unwrap_err();
    assert!(err.to_string().contains("subevent_of"), "{err}");
}

/// An event with two default unit masks that allows only its listed values: `E` alone
/// would OR them into a value the table refuses.
const DEFAULTS: &str = r#"
family = "toy"
[[event]]
name = "E"
code = 0x01
description = "e"
umask_combinations = "listed"
umasks = [ { name = "A", value = 0x1, default = true }, { name = "B", value = 0x2, default = true } ]
"#;

/// Issue 10: an event written without a unit mask took the OR of its defaults unchecked,
/// so `E` was programmed while `E.A.B`, its own canonical name, was refused. Tables
/// whose defaults (or whose ignored bits) would do that are refused when loaded.
#[test]
fn defaults_that_event_strings_would_refuse_make_the_table_invalid() {
    let rules = A.rules(&["a", "b"], &["C0", "C1"], &["u", "thresh", "d"]);
    let check = |text: &str| EventTable::from_toml(text, "toy").unwrap().validate(&rules, "toy").map_err(|e| e.to_string());
    // Two defaults of an event that allows only its listed values.
    let err = check(DEFAULTS).unwrap_err();
    assert!(err.contains("default unit masks make 0x3") && err.contains("listed"), "{err}");
    // One default is fine, and so are two where combinations are allowed.
    check(&DEFAULTS.replace("value = 0x2, default = true", "value = 0x2")).unwrap();
    check(&DEFAULTS.replace("\"listed\"", "\"any\"")).unwrap();
    // A default that is an invalid selection.
    let invalid = DEFAULTS.replace("value = 0x2, default = true", "value = 0x2")
        + "invalid_umasks = [ { value = 0x1, ignored = 0x0, kind = \"nothing\", note = \"(* nothing *)\" } ]\n";
    let err = check(&invalid).unwrap_err();
    assert!(err.contains("overlaps an invalid selection") || err.contains("which event strings refuse"), "{err}");
    // A listed unit mask inside the event's ignored bits cannot be selected by name.
    let ignored = DEFAULTS
        .replace("value = 0x2, default = true", "value = 0x2")
        .replace("umask_combinations", "umask_ignored = 0x2\numask_combinations");
    let err = check(&ignored).unwrap_err();
    assert!(err.contains("overlaps the event's umask_ignored 0x2"), "{err}");
}

/// The same rules apply to defaults at resolution time, for tables built without the
/// validator (the property below covers the validated ones).
#[test]
fn an_event_without_unit_masks_is_checked_like_its_canonical_name() {
    let table = EventTable::from_toml(DEFAULTS, "toy").unwrap();
    let pmus = vec![Pmu { desc: &A, table: Cow::Owned(table) }];
    let bare = resolve("E", &pmus, "toya").unwrap_err();
    let named = resolve("E.A.B", &pmus, "toya").unwrap_err();
    assert_eq!(bare.message, named.message);
    assert_eq!(bare.column, 2, "points past the event name, where the unit masks would be");
}

proptest::proptest! {
    /// Every selection's canonical name resolves to the same selection, for every event
    /// and unit mask of the toy tables.
    #[test]
    fn canonical_names_resolve_to_the_same_selection(pick in 0usize..1000, umask_pick in 0usize..1000) {
        let mut all = pmus();
        all.extend(pattern_pmu());
        for pmu in &all {
            let events: Vec<_> = pmu.table.events.iter().filter(|e| e.exists_on(pmu.desc.model)).collect();
            let e = events[pick % events.len()];
            let written = match e.umasks.len() {
                0 => e.name.to_string(),
                n => format!("{}.{}", e.name, e.umasks[umask_pick % n].name),
            };
            for input in [e.name.to_string(), written] {
                if let Ok(sel) = resolve(&input, std::slice::from_ref(pmu), pmu.desc.name) {
                    let again = resolve(&sel.name(), std::slice::from_ref(pmu), pmu.desc.name);
                    proptest::prop_assert!(again.is_ok(), "{input} -> {} refused: {:?}", sel.name(), again.err());
                    let again = again.unwrap();
                    proptest::prop_assert_eq!((again.code, again.umask, again.name()), (sel.code, sel.umask, sel.name()));
                }
            }
        }
    }
}
