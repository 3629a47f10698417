//! Reading PMUs from sysfs, on three trees in `data/sysfs/`:
//!
//! - `vm`: recorded from this project's 2-CPU VM (Linux 6.x, no hardware PMU: software,
//!   tracepoint, breakpoint, msr, power and uprobe).
//! - `raspberry-pi-zero`: what a Raspberry Pi Zero's kernel exposes, written from the
//!   driver source (no board was at hand): `armv6_1176` (drivers/perf/arm_pmu.c gives it
//!   only `cpus`; perf's core adds `type`, dynamic, and `perf_event_mux_interval_ms`;
//!   no `format/`), `cpus` = 0, type 10 as the IDs fall on 6.5 and later kernels with
//!   kprobe and uprobe events, and cpufreq's 1 GHz top clock.
//! - `sparc-t4`: a SPARC T4's, from arch/sparc/kernel/perf_event.c: `cpu`, type 4
//!   (PERF_TYPE_RAW), no `format/`, no `cpus`; no cpufreq.

use std::path::{Path, PathBuf};
use std::time::Duration;

use pmukit_arch::Catalog;
use pmukit_live::poll;
use pmukit_live::sysfs::{read_machine, SysfsError};

fn tree(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/sysfs").join(name)
}

#[test]
fn the_vms_recorded_tree_reads_as_the_kernel_wrote_it() {
    let m = read_machine(&tree("vm")).unwrap();
    let names: Vec<&str> = m.pmus.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["breakpoint", "msr", "power", "software", "tracepoint", "uprobe"]);
    assert_eq!((m.pmu("software").unwrap().kind, m.pmu("tracepoint").unwrap().kind, m.pmu("breakpoint").unwrap().kind), (1, 2, 5));
    assert_eq!(m.pmu("msr").unwrap().format, [("event".to_string(), "config:0-63".to_string())]);
    assert_eq!(m.pmu("power").unwrap().cpus.as_deref(), Some("0"));
    assert_eq!(m.cpu_max_hz, None, "the VM has no cpufreq");
    assert!(m.ours(&Catalog::builtin(), None).is_empty(), "none of pmukit's PMUs");
}

#[test]
fn a_raspberry_pi_zero_has_pmukits_arm1176_polled_every_2_seconds() {
    let catalog = Catalog::builtin();
    let m = read_machine(&tree("raspberry-pi-zero")).unwrap();
    let ours = m.ours(&catalog, None);
    assert_eq!(ours.len(), 1);
    let (pmu, sys) = ours[0];
    assert_eq!((pmu.name(), sys.name.as_str(), sys.kind, sys.cpus.as_deref()), ("arm1176", "armv6_1176", 10, Some("0")));
    assert!(sys.format.is_empty(), "ARMv6 exports no format/: perf users write rNN or config=");
    assert_eq!(m.cpu_max_hz, Some(1_000_000_000));
    assert!(poll::needs_polling(pmu));
    // 2^32 events at one a cycle at 1 GHz take 4.295 s; half of that.
    assert_eq!(poll::interval(pmu, 1_000_000_000), Duration::from_nanos(2_147_483_648));
    // A Pi 1 at 700 MHz: 3.07 s.
    assert_eq!(poll::interval(pmu, 700_000_000).as_millis(), 3067);
    let note = poll::note(pmu, 1_000_000_000, true);
    assert!(note.contains("2.15 s") && note.contains("32-bit") && note.contains("cpuinfo_max_freq"), "{note}");
}

#[test]
fn a_sparc_t4_is_cpu_only_when_the_user_says_so() {
    let catalog = Catalog::builtin();
    let m = read_machine(&tree("sparc-t4")).unwrap();
    assert!(m.ours(&catalog, None).is_empty(), "`cpu` alone is every x86 too");
    let ours = m.ours(&catalog, Some("sparc-t4"));
    assert_eq!(ours.len(), 1);
    assert_eq!((ours[0].0.name(), ours[0].1.kind), ("sparc-t4", 4));
    assert!(!poll::needs_polling(ours[0].0), "T4 overflows are NMIs: nothing to poll");
    assert_eq!(m.cpu_max_hz, None);
    assert_eq!(poll::fastest_clock_hz(ours[0].0), 3_000_000_000);
}

#[test]
fn malformed_trees_are_refused_with_the_file() {
    let dir = std::env::temp_dir().join(format!("pmukit-sysfs-{}", std::process::id()));
    let pmu = dir.join("bus/event_source/devices/armv6_1176");
    std::fs::create_dir_all(pmu.join("format")).unwrap();
    std::fs::write(pmu.join("type"), "ten\n").unwrap();
    let e = read_machine(&dir).unwrap_err();
    assert!(matches!(e, SysfsError::Malformed { ref path, .. } if path.ends_with("armv6_1176/type")), "{e}");
    std::fs::write(pmu.join("type"), "10\n").unwrap();
    std::fs::write(pmu.join("format/event"), "config:7-0\n").unwrap();
    assert!(read_machine(&dir).unwrap_err().to_string().contains("config:7-0"));
    std::fs::write(pmu.join("format/event"), "config:0-7\n").unwrap();
    assert_eq!(read_machine(&dir).unwrap().pmus[0].format, [("event".to_string(), "config:0-7".to_string())]);
    assert!(matches!(read_machine(&dir.join("nothing")), Err(SysfsError::Unreadable { .. })));
    let freq = dir.join("devices/system/cpu/cpu0/cpufreq");
    std::fs::create_dir_all(&freq).unwrap();
    std::fs::write(freq.join("cpuinfo_max_freq"), "0\n").unwrap();
    assert!(read_machine(&dir).unwrap_err().to_string().contains("CPU clock"));
    let _ = std::fs::remove_dir_all(&dir);
}
