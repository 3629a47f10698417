//! What users read (event, unit-mask and metric descriptions, a metric's source) says
//! what the hardware does, not what went wrong in the spec's text: those notes live in
//! docs/ERRATA.md and in the tables' attributes (`footnote_missing`,
//! `footnote_marker_lost`, `source`).

use pmukit_arch::{family, Catalog};

/// Phrases of transcription notes: a description that says one of them is telling the
/// user about the document, not the PMU.
const NOTES: &[&str] =
    &["missing from the spec", "marker is lost", "the text lost", "lost in the text", "garbled", "transcri", "the pdf", "conversion"];

fn note_in(text: &str) -> Option<&'static str> {
    let lower = text.to_lowercase();
    NOTES.iter().copied().find(|n| lower.contains(n))
}

#[test]
fn descriptions_carry_no_transcription_notes() {
    let catalog = Catalog::builtin();
    let mut found = Vec::new();
    for pmu in &catalog.pmus {
        for e in pmu.events() {
            if let Some(n) = note_in(&e.description) {
                found.push(format!("{}::{}: '{n}'", pmu.name(), e.name));
            }
            for u in e.umasks.iter() {
                if let Some(n) = note_in(&u.description) {
                    found.push(format!("{}::{}.{}: '{n}'", pmu.name(), e.name, u.name));
                }
            }
        }
        for m in family(pmu).metrics.metrics.iter() {
            if let Some(n) = note_in(&m.description).or_else(|| note_in(&m.source)) {
                found.push(format!("{} metric {}: '{n}'", pmu.name(), m.name));
            }
        }
    }
    assert!(found.is_empty(), "transcription notes in user-facing text:\n{}", found.join("\n"));
}

/// The notes moved out of the T4 descriptions are kept as attributes (ERRATA T2, T5).
#[test]
fn the_notes_are_kept_as_attributes() {
    let catalog = Catalog::builtin();
    let t4 = catalog.pmu("sparc-t4").unwrap();
    let fgu = t4.table.find("INSTR").unwrap().umask("FGU_CRYPTO").unwrap();
    assert!(fgu.attrs.iter().any(|a| a.key == "footnote_missing" && a.value == "5"));
    for name in ["SEL", "PICK", "COMMIT"] {
        assert_eq!(t4.table.find(name).unwrap().attr("footnote_marker_lost"), Some("12"), "{name}");
    }
}
