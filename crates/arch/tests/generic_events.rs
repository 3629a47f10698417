//! perf's generic event names map to each PMU's events as its Linux driver maps them
//! (issue 11), and are refused, with the reason, where the driver maps none.

use pmukit_arch::Catalog;
use pmukit_core::pmu::GENERIC_EVENTS;

/// `(PMU, generic name, the driver's value)`: ARMv6 event numbers from
/// arch/arm/kernel/perf_event_v6.c (armv6_perf_map), and `(sl << 6) | mask` from
/// arch/sparc/kernel/perf_event.c (niagara4_perfmon_event_map).
const DRIVER_MAPS: &[(&str, &str, u64)] = &[
    ("arm1136", "cycles", 0xFF),
    ("arm1156", "instructions", 0x07),
    ("arm1176", "branches", 0x05),
    ("arm1176", "branch-instructions", 0x05),
    ("arm1176", "branch-misses", 0x06),
    ("arm1176", "stalled-cycles-frontend", 0x01),
    ("arm1176", "idle-cycles-backend", 0x11),
    ("sparc-t4", "cycles", 26 << 6),
    ("sparc-t4", "instructions", 3 << 6 | 0x3f),
    ("sparc-t4", "cache-references", 3 << 6 | 0x04),
    ("sparc-t4", "cache-misses", 16 << 6 | 0x07),
    ("sparc-t4", "branch-instructions", 4 << 6 | 0x01),
    ("sparc-t4", "branch-misses", 25 << 6 | 0x0f),
];

#[test]
fn generic_names_select_what_the_linux_driver_programs() {
    let cat = Catalog::builtin();
    for &(pmu, name, value) in DRIVER_MAPS {
        let sel = cat.resolve(name, pmu).unwrap_or_else(|e| panic!("{pmu}::{name}: {e}"));
        let bits = cat.pmu(pmu).unwrap().desc.raw_umask_bits;
        assert_eq!(sel.code << bits | sel.umask, value, "{pmu}::{name} is {}", sel.name());
        assert_eq!(sel.input, name, "the input is kept for messages");
    }
    // A name the PMU's own table gives an event keeps it: on T4, `Branches` is the
    // spec's (cpustat's) name for INSTR.BRANCHES, sl 3.
    assert_eq!(cat.resolve("branches", "sparc-t4").unwrap().name(), "INSTR.BRANCHES");
    // Modifiers carry over.
    let sel = cat.resolve("sparc-t4::cycles:u", "arm1176").unwrap();
    assert_eq!((sel.name().as_str(), sel.modifier("u")), ("CYCLES:u", Some(1)));
    // A modifier the PMU lacks is refused where the input has it.
    let err = cat.resolve("branch-misses:u", "arm1176").unwrap_err();
    assert_eq!((err.input.as_str(), err.column), ("branch-misses:u", 15), "{err}");
}

#[test]
fn generic_names_a_pmu_lacks_are_refused_with_the_drivers_reason() {
    let cat = Catalog::builtin();
    for pmu in &cat.pmus {
        for names in GENERIC_EVENTS {
            let mapped = pmu.desc.generic.events.iter().any(|(g, _)| g == &names[0]);
            for name in names.iter() {
                match cat.resolve(name, pmu.name()) {
                    Ok(sel) => assert!(mapped || pmu.table.find(name).is_some(), "{}::{name} resolved to {}", pmu.name(), sel.name()),
                    Err(e) => {
                        assert!(!mapped, "{}::{name}: {e}", pmu.name());
                        assert!(e.message.contains("generic event") && e.message.contains(pmu.desc.generic.source), "{e}");
                    }
                }
            }
        }
    }
    let err = cat.resolve("cache-misses", "arm1176").unwrap_err();
    assert!(err.message.contains("armv6_perf_map") && err.help.unwrap().contains("branch-misses"));
    assert!(cat.resolve("montecito::cycles", "arm1176").unwrap_err().message.contains("perfmon"));
}

#[test]
fn a_generic_name_refused_on_one_pmu_names_the_pmus_that_take_it() {
    let cat = Catalog::builtin();
    // T4's memory controllers: the strands of the same chip come first.
    let err = cat.resolve("branch-misses", "sparc-t4-dram").unwrap_err();
    let help = err.help.unwrap();
    assert!(help.starts_with("'branch-misses' is BR_MISPREDICT.ALL on sparc-t4; BR_MISPREDICT on arm1136, arm1156, arm1176"), "{help}");
    assert!(help.contains("give --pmu sparc-t4, or write sparc-t4::branch-misses. Or use sparc-t4-dram's own events"), "{help}");
    assert_eq!(err.suggestions[0], "sparc-t4::branch-misses");
    // Every suggestion resolves to the event the help names.
    for s in &err.suggestions {
        cat.resolve(s, "sparc-t4-dram").unwrap_or_else(|e| panic!("{s}: {e}"));
    }
    // A name no driver maps keeps the PMU's own advice.
    let err = cat.resolve("ref-cycles", "montecito").unwrap_err();
    assert!(err.suggestions.is_empty() && err.help.unwrap().contains("pmu list montecito"));
}
