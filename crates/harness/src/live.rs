//! Event strings as `pmu stat --live` reads them, resolved against the PMUs of three
//! machines as their kernels show them: a Raspberry Pi Zero (pmukit's ARM1176 as
//! `armv6_1176`), a SPARC T4 (`cpu`) and a PC without a PMU of ours (a `format/` with a
//! split field, to exercise term encoding).

use std::sync::LazyLock;

use pmukit_live::events::Host;
use pmukit_live::sysfs::{Machine, SysPmu};

use crate::strings::CATALOG;

fn pmu(name: &str, kind: u32, cpus: Option<&str>, format: &[(&str, &str)]) -> SysPmu {
    SysPmu {
        name: name.to_string(),
        kind,
        cpus: cpus.map(str::to_string),
        format: format.iter().map(|(t, f)| (t.to_string(), f.to_string())).collect(),
        mux_interval_ms: Some(4),
    }
}

fn machine(pmus: Vec<SysPmu>, cpu_max_hz: Option<u64>) -> Machine {
    Machine { pmus, cpu_max_hz, online: Some(vec![0, 1]) }
}

static HOSTS: LazyLock<[Host<'static>; 3]> = LazyLock::new(|| {
    let catalog = &*CATALOG;
    let software = pmu("software", 1, None, &[]);
    [
        Host::new(machine(vec![pmu("armv6_1176", 10, Some("0"), &[]), software.clone()], Some(1_000_000_000)), catalog, None),
        Host::new(machine(vec![pmu("cpu", 4, None, &[]), software.clone()], None), catalog, Some("sparc-t4")),
        Host::new(
            machine(
                vec![
                    pmu("cpu", 4, Some("0-1"), &[("event", "config:0-7"), ("umask", "config:8-15"), ("split", "config1:0-3,32-35")]),
                    software,
                ],
                None,
            ),
            catalog,
            None,
        ),
    ]
});

/// The first byte picks the machine; the rest is up to six lines of event strings.
/// Each that resolves must resolve again to the same attributes by the name the
/// report prints (pmukit's canonical name, or the string as given), and the plan of
/// those that resolve puts each event in exactly one group.
pub fn live_events(data: &[u8]) {
    let Some((&first, rest)) = data.split_first() else { return };
    let catalog = &*CATALOG;
    let host = &HOSTS[usize::from(first) % HOSTS.len()];
    let text = String::from_utf8_lossy(rest);
    let mut good = Vec::new();
    for line in text.lines().take(6) {
        let Ok(event) = host.resolve(catalog, line) else { continue };
        let again =
            host.resolve(catalog, &event.name).unwrap_or_else(|e| panic!("{line:?} resolves as {}, which is refused: {e}", event.name));
        assert_eq!(
            (again.kind, again.config, again.config1, again.config2, again.exclude),
            (event.kind, event.config, event.config1, event.config2, event.exclude),
            "{line:?} resolves as {}, which resolves differently",
            event.name
        );
        good.push(line.to_string());
    }
    if let Ok(plan) = host.plan(catalog, &good, &[]) {
        let mut seen = vec![0; plan.events.len()];
        for g in &plan.groups {
            for &i in g {
                seen[i] += 1;
            }
        }
        assert!(seen.iter().all(|&n| n == 1), "{good:?}: an event in {seen:?} groups");
    }
}
