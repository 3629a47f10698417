//! Counting through perf_event_open on this machine (a VM without a hardware PMU: the
//! kernel's software events), driving `count` with plans made by hand where the CLI
//! cannot make them here: the polling loop a Raspberry Pi's ARM1176 needs.
#![cfg(all(target_os = "linux", feature = "perf-event"))]

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use pmukit_arch::Catalog;
use pmukit_live::count::{count, Target};
use pmukit_live::events::{Host, Plan};
use pmukit_live::sysfs::Machine;

fn plan(events: &[&str], poll: Option<Duration>) -> Plan {
    let catalog = Catalog::builtin();
    let host = Host::new(Machine { pmus: Vec::new(), cpu_max_hz: None, online: None }, &catalog, None);
    let tokens: Vec<String> = events.iter().map(|s| s.to_string()).collect();
    Plan { poll, ..host.plan(&catalog, &tokens, &[]).unwrap() }
}

#[test]
fn polling_reads_while_the_command_runs_and_loses_nothing() {
    let command = ["sleep".into(), "0.25".into()];
    let target = Target { command: &command, cpus: None, duration: None, per_cpu: false, interval: None };
    let stop = AtomicBool::new(false);
    let polled = count(&plan(&["task-clock", "page-faults"], Some(Duration::from_millis(20))), &target, &stop, &mut |_| {}).unwrap();
    let plain = count(&plan(&["task-clock", "page-faults"], None), &target, &stop, &mut |_| {}).unwrap();
    assert!(polled.elapsed_ns >= 250_000_000, "the command ran to its end: {} ns", polled.elapsed_ns);
    let faults = |r: &pmukit_core::report::StatReport| r.events[1].count.unwrap();
    // The same program faults in about the same pages whether or not pmu reads meanwhile.
    let (a, b) = (faults(&polled), faults(&plain));
    assert!(a > 10 && a.abs_diff(b) * 4 < a.max(b), "page faults {a} polled, {b} not");
    assert_eq!(polled.live.as_ref().unwrap().exit_status, Some(0));
}

#[test]
fn a_system_wide_count_without_a_command_lasts_its_duration() {
    let target = Target { command: &[], cpus: Some(vec![0]), duration: Some(Duration::from_millis(100)), per_cpu: true, interval: None };
    let stop = AtomicBool::new(false);
    match count(&plan(&["cpu-clock"], None), &target, &stop, &mut |_| {}) {
        Ok(report) => {
            assert!((100_000_000..400_000_000).contains(&report.elapsed_ns), "{}", report.elapsed_ns);
            assert_eq!(report.events[0].units[0].unit.name, "CPU0");
            assert_eq!(report.workload, "system wide");
        }
        // Counting a CPU needs perf_event_paranoid 0 or CAP_PERFMON.
        Err(e) => assert!(e.to_string().contains("perf_event_paranoid"), "{e}"),
    }
}

#[test]
fn a_count_needs_a_command_or_every_cpu() {
    let target = Target { command: &[], cpus: None, duration: None, per_cpu: false, interval: None };
    let e = count(&plan(&["task-clock"], None), &target, &AtomicBool::new(false), &mut |_| {}).unwrap_err();
    assert!(e.to_string().contains("give a command"), "{e}");
}

#[test]
fn each_interval_is_handed_over_as_it_ends_and_they_add_up() {
    let command = ["sleep".into(), "0.15".into()];
    let target = Target { command: &command, cpus: None, duration: None, per_cpu: false, interval: Some(Duration::from_millis(40)) };
    let mut seen = Vec::new();
    let report = count(&plan(&["page-faults"], None), &target, &AtomicBool::new(false), &mut |iv| seen.push(iv)).unwrap();
    assert!(report.intervals.is_empty(), "intervals are handed over, not kept");
    assert!(
        seen.len() >= 4 && seen.windows(2).all(|w| w[0].time_ns < w[1].time_ns),
        "{:?}",
        seen.iter().map(|iv| iv.time_ns).collect::<Vec<_>>()
    );
    let sum: u64 = seen.iter().filter_map(|iv| iv.events[0].count).sum();
    assert_eq!(Some(sum), report.events[0].count);
}
