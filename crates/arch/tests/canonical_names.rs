//! Issue 10: `sel.name()` always re-resolves to the same selection, for every event of
//! every built-in PMU, written bare and with each of its unit masks.

use pmukit_arch::{Catalog, FAMILIES};
use pmukit_core::table::EventTable;

/// The build bakes each table's name indexes with it: they are the ones its events
/// make, so every name and alias is found (issue 14's sorted index).
#[test]
fn built_in_tables_carry_the_index_of_their_events() {
    for f in FAMILIES {
        let t = f.events;
        assert_eq!(&EventTable::new(t.family.clone(), t.source.clone(), t.events.clone()), t, "{}", f.name);
        for e in t.events.iter() {
            for n in std::iter::once(&e.name).chain(e.aliases.iter()) {
                assert_eq!(t.find(&n.to_ascii_lowercase()).map(|x| &x.name), Some(&e.name), "{}: {n}", f.name);
            }
        }
    }
}

#[test]
fn every_selections_canonical_name_resolves_to_it() {
    let catalog = Catalog::builtin();
    let mut checked = 0;
    for pmu in &catalog.pmus {
        for e in pmu.table.events.iter().filter(|e| e.exists_on(pmu.desc.model)) {
            let inputs = std::iter::once(e.name.to_string()).chain(e.umasks.iter().map(|u| format!("{}.{}", e.name, u.name)));
            for input in inputs {
                let written = format!("{}::{input}", pmu.name());
                let Ok(sel) = catalog.resolve(&written, pmu.name()) else { continue };
                let canonical = format!("{}::{}", pmu.name(), sel.name());
                let again = catalog.resolve(&canonical, pmu.name()).unwrap_or_else(|e| panic!("{written} is {canonical}, refused: {e}"));
                assert_eq!((again.code, again.umask, again.name()), (sel.code, sel.umask, sel.name()), "{written}");
                checked += 1;
            }
        }
    }
    assert!(checked > 900, "only {checked} selections resolved");
}

/// Issue 10: encode → decode → encode is the identity, for every event and unit mask
/// of every built-in PMU, bare and with each modifier it takes (numbers at both ends of
/// their range) and with all its flags at once: every register value an encoding
/// produces decodes field by field, the fields encode back to the same bits, and the
/// selection's canonical name encodes to the same registers again.
#[test]
fn every_selection_encodes_decodes_and_encodes_back_to_the_same_bits() {
    use pmukit_core::pmu::ModifierKind;
    use pmukit_core::register::Access;
    let catalog = Catalog::builtin();
    let mut checked = 0;
    for pmu in &catalog.pmus {
        let mut suffixes = vec![String::new()];
        let mut flags = Vec::new();
        for m in pmu.desc.modifiers.iter().chain(pmu.desc.event_modifiers) {
            match m.kind {
                ModifierKind::Flag => {
                    suffixes.push(format!(":{}", m.name));
                    flags.push(format!(":{}", m.name));
                }
                ModifierKind::Number { min, max } => {
                    suffixes.push(format!(":{}={min}", m.name));
                    suffixes.push(format!(":{}={max}", m.name));
                }
            }
        }
        suffixes.push(flags.concat());
        for e in pmu.table.events.iter().filter(|e| e.exists_on(pmu.desc.model)) {
            let selections = std::iter::once(e.name.to_string()).chain(e.umasks.iter().map(|u| format!("{}.{}", e.name, u.name)));
            for selection in selections {
                for suffix in &suffixes {
                    let written = format!("{}::{selection}{suffix}", pmu.name());
                    // Not every modifier applies to every event: those are refused.
                    let Ok(sel) = catalog.resolve(&written, pmu.name()) else { continue };
                    let Ok(set) = pmukit_arch::encode_set(pmu, std::slice::from_ref(&sel)) else { continue };
                    for &(register, value) in &set.registers {
                        let decoded =
                            pmukit_arch::decode(pmu, register, value).unwrap_or_else(|e| panic!("{written}: {register} {value:#x}: {e}"));
                        // The layout the value is read in (PMC37's by its own ct).
                        let (layout, _) = pmukit_arch::register_for(pmu, register, value, &[]).unwrap();
                        // Reserved fields are not written by name: an encoding leaves them 0.
                        let mut fields = Vec::new();
                        for (f, d) in layout.fields.iter().zip(&decoded.fields) {
                            if matches!(f.access, Access::Reserved { .. }) {
                                assert_eq!(d.value, 0, "{written}: {register} {value:#x} sets reserved bits {}", d.bits);
                            } else {
                                fields.push((d.name.as_str(), d.value));
                            }
                        }
                        let again = layout.encode(&fields).unwrap_or_else(|e| panic!("{written}: {register}: {e}"));
                        assert_eq!(again, value, "{written}: {register} {value:#x} decodes to fields that encode to {again:#x}");
                    }
                    let canonical = catalog.resolve(&format!("{}::{}", pmu.name(), sel.name()), pmu.name()).unwrap();
                    let set_again = pmukit_arch::encode_set(pmu, std::slice::from_ref(&canonical)).unwrap();
                    assert_eq!(set_again.registers, set.registers, "{written} and its canonical name {} encode differently", sel.name());
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 3000, "only {checked} selections encoded");
}
