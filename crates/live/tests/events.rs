//! Event strings turned into `perf_event_attr` fields and groups, on the recorded and
//! driver-derived sysfs trees of `data/sysfs/` (see tests/sysfs.rs for how each was
//! made). The encodings are the Linux drivers': ARMv6 takes the event number as
//! `config` on its dynamic type (arch/arm/kernel/perf_event_v6.c, `config & 0xff`);
//! SPARC T4 takes `(sl << 22) | (mask << 16)` on PERF_TYPE_RAW
//! (arch/sparc/kernel/perf_event.c); generic events are PERF_TYPE_HARDWARE and
//! PERF_TYPE_SOFTWARE with the numbers of include/uapi/linux/perf_event.h.

use std::path::Path;
use std::time::Duration;

use pmukit_arch::Catalog;
use pmukit_live::events::{Exclude, Host, PERF_TYPE_HARDWARE, PERF_TYPE_RAW, PERF_TYPE_SOFTWARE};
use pmukit_live::sysfs::{cpu_list, read_machine, SysPmu};

fn host<'c>(catalog: &'c Catalog, tree: &str, hint: Option<&str>) -> Host<'c> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/sysfs").join(tree);
    Host::new(read_machine(&root).unwrap(), catalog, hint)
}

fn tokens(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

#[test]
fn a_pis_arm1176_events_take_the_drivers_type_and_event_number() {
    let catalog = Catalog::builtin();
    let pi = host(&catalog, "raspberry-pi-zero", None);
    let at = |s: &str| {
        let e = pi.resolve(&catalog, s).unwrap();
        (e.name, e.pmu, e.kind, e.config)
    };
    let instr = ("INSTR_EXEC".to_string(), "arm1176".to_string(), 10, 0x07);
    assert_eq!(at("INSTR_EXEC"), instr);
    assert_eq!(at("r07"), instr, "perf's raw spelling names pmukit's event");
    assert_eq!(at("armv6_1176/event=0x7/"), instr);
    assert_eq!(at("arm1176::INSTR_EXEC"), instr);
    assert_eq!(at("armv6_1176/config=0xff/").3, 0xff, "CPU_CYCLES is 0xff (CCNT)");
    // perf's generic names go to the kernel as such; the driver maps them.
    let cycles = pi.resolve(&catalog, "cycles").unwrap();
    assert_eq!((cycles.kind, cycles.config, cycles.pmu.as_str()), (PERF_TYPE_HARDWARE, 0, "arm1176"));
    assert_eq!(cycles.ours.unwrap().1.name(), "CPU_CYCLES");
    assert_eq!(cycles.cpus, Some(vec![0]), "the PMU's cpus file");
    let clock = pi.resolve(&catalog, "task-clock").unwrap();
    assert_eq!((clock.kind, clock.config, clock.clock, clock.cpus), (PERF_TYPE_SOFTWARE, 1, true, None));
}

#[test]
fn privilege_filters_on_armv6_are_refused_with_the_drivers_reason() {
    let catalog = Catalog::builtin();
    let pi = host(&catalog, "raspberry-pi-zero", None);
    for s in ["cycles:u", "INSTR_EXEC:k", "r07:h", "armv6_1176/event=7/:u"] {
        let e = pi.resolve(&catalog, s).unwrap_err();
        assert!(e.message.contains("no event filter"), "{s}: {e}");
        assert!(e.help.as_deref().unwrap().contains("PERF_PMU_CAP_NO_EXCLUDE"), "{s}: {e}");
        assert_eq!(e.token(), s[s.rfind(':').unwrap()..], "{s}: the caret is under the modifier");
    }
    // Software events are the kernel's: they filter.
    let e = pi.resolve(&catalog, "task-clock:u").unwrap();
    assert_eq!(e.exclude, Exclude { user: false, kernel: true, hv: true });
}

#[test]
fn a_t4s_events_are_raw_configs_on_cpu_with_privilege_in_the_exclusion_bits() {
    let catalog = Catalog::builtin();
    let t4 = host(&catalog, "sparc-t4", Some("sparc-t4"));
    let loads = t4.resolve(&catalog, "INSTR.LOADS").unwrap();
    assert_eq!((loads.kind, loads.config, loads.pmu.as_str()), (PERF_TYPE_RAW, 0xc40000, "sparc-t4"));
    assert_eq!(t4.resolve(&catalog, "cpu/config=0xc40000/").unwrap().name, "INSTR.LOADS");
    assert_eq!(t4.resolve(&catalog, "r00ff0000").unwrap().name, "INSTR.ALL");
    // The driver sets PCR.ut/st/ht from exclude_*: the modifier is not in config.
    let user = t4.resolve(&catalog, "INSTR.ALL:u").unwrap();
    assert_eq!((user.config, user.exclude, user.name.as_str()), (0xff0000, Exclude { user: false, kernel: true, hv: true }, "INSTR.ALL:u"));
    let generic = t4.resolve(&catalog, "instructions:k").unwrap();
    assert_eq!((generic.kind, generic.config, generic.exclude.user), (PERF_TYPE_HARDWARE, 1, true));
    // Without the hint, `cpu` is not taken for a T4: INSTR.LOADS is unknown there.
    let bare = host(&catalog, "sparc-t4", None);
    assert!(bare.resolve(&catalog, "INSTR.LOADS").unwrap_err().message.contains("unknown event"));
    assert_eq!(bare.resolve(&catalog, "r1234").unwrap().kind, PERF_TYPE_RAW, "a raw event of a core PMU not ours");
}

#[test]
fn groups_fit_the_counters_and_metrics_stay_together() {
    let catalog = Catalog::builtin();
    let pi = host(&catalog, "raspberry-pi-zero", None);
    // Two event counters and CCNT (§3.2 of the ARM1176 TRM as pmukit's table has it).
    let plan = pi.plan(&catalog, &tokens(&["CPU_CYCLES", "INSTR_EXEC", "DCACHE_MISS", "BR_EXEC", "task-clock"]), &[]).unwrap();
    assert_eq!(plan.groups, [vec![0, 1, 2], vec![3], vec![4]]);
    // BR_EXEC and DCACHE_MISS as one metric's events: one group.
    let plan = pi.plan(&catalog, &tokens(&["INSTR_EXEC", "DCACHE_MISS", "BR_EXEC"]), &[vec![1, 2]]).unwrap();
    assert_eq!(plan.groups, [vec![0], vec![1, 2]]);
    let t4 = host(&catalog, "sparc-t4", Some("sparc-t4"));
    let six = tokens(&["CYCLES", "INSTR.ALL", "INSTR.BRANCHES", "BR_MISPREDICT.ALL", "DC_MISS_ASYNC.ANY", "cs"]);
    let plan = t4.plan(&catalog, &six, &[]).unwrap();
    assert_eq!(plan.groups, [vec![0, 1, 2, 3], vec![4], vec![5]], "four PICs");
    assert_eq!(plan.poll, None);
}

#[test]
fn the_pis_counters_are_polled_at_half_their_wrap_time() {
    let catalog = Catalog::builtin();
    let pi = host(&catalog, "raspberry-pi-zero", None);
    let plan = pi.plan(&catalog, &tokens(&["instructions", "task-clock"]), &[]).unwrap();
    assert_eq!(plan.poll, Some(Duration::from_nanos(2_147_483_648)), "2^32 cycles at 1 GHz, halved");
    assert!(plan.notes[0].contains("read every 2.15 s"), "{:?}", plan.notes);
    // Software events alone need no polling.
    assert_eq!(pi.plan(&catalog, &tokens(&["task-clock"]), &[]).unwrap().poll, None);
}

#[test]
fn format_terms_place_a_values_bits_in_the_fields_bits() {
    let catalog = Catalog::builtin();
    let vm = host(&catalog, "vm", None);
    let msr = vm.resolve(&catalog, "msr/event=0x3/").unwrap();
    assert_eq!((msr.kind, msr.config, msr.pmu.as_str()), (vm.machine.pmu("msr").unwrap().kind, 3, "msr"));
    // A field split over two ranges, lowest bits first (perf's parse-events does so).
    let mut machine = vm.machine.clone();
    machine.pmus.push(SysPmu {
        name: "uncore".to_string(),
        kind: 42,
        cpus: Some("0".to_string()),
        format: vec![("event".to_string(), "config:0-7".to_string()), ("split".to_string(), "config1:0-3,32-35".to_string())],
        mux_interval_ms: None,
    });
    let host = Host::new(machine, &catalog, None);
    let e = host.resolve(&catalog, "uncore/event=0x12,split=0xa5/").unwrap();
    assert_eq!((e.kind, e.config, e.config1, e.cpus.clone()), (42, 0x12, 0xa_0000_0005, Some(vec![0])));
    let e = host.resolve(&catalog, "uncore/split=0x100/").unwrap_err();
    assert!(e.message.contains("does not fit split's 8 bits"), "{e}");
    let e = host.resolve(&catalog, "uncore/event=1,umask=2/").unwrap_err();
    assert_eq!((e.token(), e.help.as_deref()), ("umask=2".to_string(), Some("its terms are event, split, config, config1, config2")));
    let e = host.resolve(&catalog, "uncore/event=zz/").unwrap_err();
    assert!(e.message.contains("'zz' is not a number"), "{e}");
}

#[test]
fn unknown_events_and_modifiers_name_the_token_and_what_is_valid() {
    let catalog = Catalog::builtin();
    let vm = host(&catalog, "vm", None);
    let e = vm.resolve(&catalog, "task-clok").unwrap_err();
    assert_eq!(e.token(), "task-clok");
    assert_eq!(e.suggestions.first().map(String::as_str), Some("task-clock"));
    assert!(e.help.unwrap().contains("none of pmukit's PMUs"));
    let e = vm.resolve(&catalog, "cycles:p").unwrap_err();
    assert_eq!((e.token().as_str(), e.column), ("p", 8));
    let e = vm.resolve(&catalog, "nosuch/event=1/").unwrap_err();
    assert!(e.help.unwrap().contains("msr"), "the machine's PMUs are listed");
    assert!(vm.resolve(&catalog, "  ").unwrap_err().message.contains("empty"));
    assert!(vm.resolve(&catalog, "INSTR_EXEC").is_err(), "no ARM1176 on this machine");
    let pi = host(&catalog, "raspberry-pi-zero", None);
    let e = pi.resolve(&catalog, "INSTR_EXC").unwrap_err();
    assert!(e.suggestions.contains(&"INSTR_EXEC".to_string()), "{:?}", e.suggestions);
}

#[test]
fn cpu_lists_read_as_the_kernel_writes_them() {
    assert_eq!(cpu_list("0"), Some(vec![0]));
    assert_eq!(cpu_list("0-3,6\n"), Some(vec![0, 1, 2, 3, 6]));
    assert_eq!(cpu_list("3-1"), None);
    assert_eq!(cpu_list(""), None);
    assert_eq!(cpu_list("0-99999"), None, "beyond 4096 CPUs");
    let catalog = Catalog::builtin();
    assert_eq!(host(&catalog, "vm", None).machine.online, Some(vec![0, 1]));
    assert_eq!(host(&catalog, "sparc-t4", None).machine.online.map(|c| c.len()), Some(64), "8 cores of 8 strands");
}

#[test]
fn default_events_are_perfs_or_the_pmus_own() {
    let catalog = Catalog::builtin();
    let vm = host(&catalog, "vm", None);
    assert_eq!(
        vm.default_events(),
        ["task-clock", "context-switches", "cpu-migrations", "page-faults", "cycles", "instructions", "branches", "branch-misses"],
        "perf 6.1's default list"
    );
    let pi = host(&catalog, "raspberry-pi-zero", None);
    let events = pi.default_events();
    assert_eq!(&events[..5], ["task-clock", "context-switches", "cpu-migrations", "page-faults", "arm1176::CPU_CYCLES"]);
    let plan = pi.plan(&catalog, &events, &[]).unwrap();
    assert!(plan.events[4..].iter().all(|e| e.kind == 10), "pmukit's ARM1176 events on the driver's type");
    let t4 = host(&catalog, "sparc-t4", Some("sparc-t4"));
    assert!(t4.default_events().iter().all(|e| !e.contains("dram")), "the memory controllers have no Linux driver");
    assert!(t4.plan(&catalog, &t4.default_events(), &[]).is_ok());
}

#[test]
fn perfs_names_are_lower_case_and_a_bare_colon_is_refused() {
    // Found by the live_events fuzzer: on a T4, `cycles:` resolved to pmukit's CYCLES
    // and `CYCLES` to perf's generic cycles, so the printed name meant another event.
    let catalog = Catalog::builtin();
    let t4 = host(&catalog, "sparc-t4", Some("sparc-t4"));
    let own = t4.resolve(&catalog, "CYCLES").unwrap();
    assert_eq!((own.kind, own.config, own.name.as_str()), (PERF_TYPE_RAW, 0x680_0000, "CYCLES"), "T4's own CYCLES (sl 0x1a)");
    assert_eq!(t4.resolve(&catalog, "cycles").unwrap().kind, PERF_TYPE_HARDWARE);
    let e = t4.resolve(&catalog, "cycles:").unwrap_err();
    assert_eq!((e.column, e.message.as_str()), (7, "nothing after ':'"));
    assert!(t4.resolve(&catalog, "sparc-t4::CYCLES").is_ok(), "`::` is not a modifier colon");
    // pmukit's modifier syntax (case-insensitive, and ARM11's :d) is not perf's: the
    // driver would never see it, so it is refused rather than dropped.
    let e = t4.resolve(&catalog, "INSTR.ALL:K").unwrap_err();
    assert!(e.message.contains("no Linux perf equivalent"), "{e}");
    let pi = host(&catalog, "raspberry-pi-zero", None);
    assert!(pi.resolve(&catalog, "CPU_CYCLES:d").is_err(), "CCNT's divider is PMCR.D, which the driver leaves 0");
}
