//! Event-table files: malformed input is an error with a position, never a panic.

use pmukit_core::table::{EventTable, TableError, TableRules};

const RULES: TableRules =
    TableRules { family: "toy", models: &["a", "b"], counters: &["C0"], modifiers: &["d"], max_code: 0xFF, max_umask: 0xF };

fn check(text: &str) -> Result<(), TableError> {
    EventTable::from_toml(text, "t.toml")?.validate(&RULES, "t.toml")
}

#[test]
fn syntax_errors_give_line_and_column() {
    let err = check("family = \"toy\"\n[[event]]\nname = \"X\"\ncode = \n").unwrap_err().to_string();
    assert!(err.starts_with("t.toml: line 4, column 8"), "{err}");
}

#[test]
fn unknown_keys_are_refused() {
    let err = check("family = \"toy\"\n[[event]]\nname = \"X\"\ncode = 1\ndescription = \"x\"\ncolour = 3\n").unwrap_err().to_string();
    assert!(err.contains("colour"), "{err}");
}

#[test]
fn each_rule_names_the_event() {
    let ev = |extra: &str| format!("family = \"toy\"\n[[event]]\nname = \"X\"\ncode = 1\ndescription = \"x\"\n{extra}");
    for (extra, needle) in [
        ("counters = [\"C9\"]", "unknown counter 'C9'"),
        ("modifiers = [\"q\"]", "unknown modifier 'q'"),
        ("only_on = [\"z\"]", "unknown model 'z'"),
        ("umasks = [ { name = \"A\", value = 0x10 } ]", "exceeds the maximum 0xf"),
        ("umasks = [ { name = \"A\", value = 1 }, { name = \"a\", value = 2 } ]", "appears twice"),
        ("aliases = [\"X\"]", "already used"),
        ("umask_ignored = 0x10", "umask_ignored"),
        // An event string cannot write an empty word between dots (found by the
        // events_file fuzz target: `SIZE_..4M` was accepted and then unwritable).
        ("umasks = [ { name = \"A..B\", value = 1 } ]", "unit mask 'A..B'"),
        ("umasks = [ { name = \".A\", value = 1 } ]", "between two words"),
        ("umasks = [ { name = \"A.\", value = 1 } ]", "between two words"),
    ] {
        let err = check(&ev(extra)).unwrap_err().to_string();
        assert!(err.contains("event 'X'") && err.contains(needle), "{extra}: {err}");
    }
    let err = check("family = \"toy\"\n[[event]]\nname = \"X\"\ncode = 0x100\ndescription = \"x\"\n").unwrap_err().to_string();
    assert!(err.contains("exceeds the selector's maximum"), "{err}");
    let err = check("family = \"toy\"\n[[event]]\nname = \"9X\"\ncode = 1\ndescription = \"x\"\n").unwrap_err().to_string();
    assert!(err.contains("start with a letter"), "{err}");
    let err = check("family = \"toy\"\n[[event]]\nname = \"X\"\ncode = 1\ndescription = \" \"\n").unwrap_err().to_string();
    assert!(err.contains("description is empty"), "{err}");
    let err = check("family = \"other\"\nevent = []\n").unwrap_err().to_string();
    assert!(err.contains("expected 'toy'"), "{err}");
}

#[test]
fn codes_may_repeat_only_on_disjoint_models() {
    let two = |a: &str, b: &str| {
        format!("family = \"toy\"\n[[event]]\nname = \"X\"\ncode = 1\ndescription = \"x\"\n{a}\n[[event]]\nname = \"Y\"\ncode = 1\ndescription = \"y\"\n{b}\n")
    };
    assert!(check(&two("only_on = [\"a\"]", "only_on = [\"b\"]")).is_ok());
    assert!(check(&two("", "only_on = [\"b\"]")).unwrap_err().to_string().contains("also event 'X' on b"));
}

proptest::proptest! {
    #[test]
    fn arbitrary_text_never_panics(text in "\\PC{0,200}") {
        let _ = check(&text);
    }

    #[test]
    fn toml_like_text_never_panics(text in "(family = \"toy\"\n)?(\\[\\[event\\]\\]\n(name|code|description|umasks|only_on) = [\"a-zA-Z0-9_{}=, \\[\\]]{0,20}\n){0,5}") {
        let _ = check(&text);
    }
}

/// What `find` and `find_umask_alias` answered before the index: the first match in
/// table order, names compared without regard to ASCII case.
fn scan<'a>(t: &'a EventTable, name: &str) -> Option<&'a str> {
    t.events
        .iter()
        .find(|e| e.name.eq_ignore_ascii_case(name) || e.aliases.iter().any(|a| a.eq_ignore_ascii_case(name)))
        .map(|e| e.name.as_ref())
}

fn scan_alias<'a>(t: &'a EventTable, name: &str) -> Option<(&'a str, &'a str)> {
    t.events.iter().find_map(|e| {
        e.umasks.iter().find(|u| u.aliases.iter().any(|a| a.eq_ignore_ascii_case(name))).map(|u| (e.name.as_ref(), u.name.as_ref()))
    })
}

proptest::proptest! {
    /// The name indexes answer as a scan in table order does, for any names (repeated
    /// ones too, which only validation refuses) and any query, in any case.
    #[test]
    fn index_lookups_equal_a_scan_in_table_order(
        events in proptest::collection::vec(("[a-cA-C_é]{1,3}", proptest::collection::vec("[a-cA-C]{1,3}", 0..3), proptest::collection::vec("[a-cA-C]{1,3}", 0..3)), 1..12),
        queries in proptest::collection::vec("[a-cA-C_é]{0,4}", 1..20),
    ) {
        let mut text = String::from("family = \"toy\"\n");
        for (i, (name, aliases, umask_aliases)) in events.iter().enumerate() {
            text.push_str(&format!("[[event]]\nname = \"{name}\"\ncode = {i}\ndescription = \"x\"\naliases = {aliases:?}\n"));
            text.push_str(&format!("umasks = [ {{ name = \"U{i}\", value = 1, aliases = {umask_aliases:?} }} ]\n"));
        }
        let t = EventTable::from_toml(&text, "t.toml").unwrap();
        let names = events.iter().flat_map(|(n, a, u)| std::iter::once(n).chain(a).chain(u));
        for q in queries.iter().chain(names).flat_map(|q| [q.clone(), q.to_ascii_lowercase(), q.to_ascii_uppercase()]) {
            proptest::prop_assert_eq!(t.find(&q).map(|e| e.name.as_ref()), scan(&t, &q), "find {}", q);
            proptest::prop_assert_eq!(t.find_umask_alias(&q).map(|(e, u)| (e.name.as_ref(), u.name.as_ref())), scan_alias(&t, &q), "alias {}", q);
        }
    }
}
