//! Issue 10: `sel.name()` always re-resolves to the same selection, for every event of
//! every built-in PMU, written bare and with each of its unit masks.

use pmukit_arch::Catalog;

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
