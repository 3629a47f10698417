//! Files users supply: events files, machine configurations, traces, MMU statistics
//! dumps and recordings.

use std::borrow::Cow;
use std::io::Cursor;

use pmukit_arch::{Catalog, FAMILIES};
use pmukit_core::table::EventTable;
use pmukit_sim::machine::arm11::{Arm11Config, Arm11Core};
use pmukit_sim::machine::montecito::MontecitoConfig;
use pmukit_sim::machine::sparc::{SparcChip, SparcConfig};
use pmukit_sim::models::sun4v::{decode_mmustat, MmuStatReader};
use pmukit_sim::program::builtin::{DEFAULT_WORKLOAD, WORKLOADS};
use pmukit_sim::record::{report, Recording};
use pmukit_sim::stat::{self, MachineFile, StatOptions};

use crate::strings::{check_canonical, CATALOG};

/// An events file, loaded as `--events-file` loads one: parsed, validated against its
/// family's rules, and then used. Every event and unit mask of an accepted table must
/// resolve by its canonical name and encode or be refused with an error.
pub fn events_file(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let Ok(table) = EventTable::from_toml(&text, "fuzz.toml") else { return };
    let Some(family) = FAMILIES.iter().find(|f| f.name.eq_ignore_ascii_case(&table.family)) else { return };
    if family.validate(&table, "fuzz.toml").is_err() {
        return;
    }
    let mut catalog: Catalog = (*CATALOG).clone();
    for pmu in catalog.pmus.iter_mut().filter(|p| p.desc.family == family.name) {
        pmu.table = Cow::Owned(table.clone());
    }
    for pmu in catalog.pmus.iter().filter(|p| p.desc.family == family.name) {
        for e in pmu.events().take(64) {
            let inputs = std::iter::once(e.name.to_string()).chain(e.umasks.iter().take(8).map(|u| format!("{}.{}", e.name, u.name)));
            for input in inputs {
                if let Ok(sel) = catalog.resolve(&format!("{}::{input}", pmu.name()), pmu.name()) {
                    check_canonical(&catalog, pmu, &sel);
                    let _ = pmukit_arch::encode_set(pmu, std::slice::from_ref(&sel));
                }
            }
        }
    }
}

/// The PMUs whose machines a byte picks for the configuration and trace harnesses.
const MACHINES: [&str; 7] = ["arm1136", "arm1156", "arm1176", "sparc-t4", "sparc-kt", "niagara", "montecito"];

/// A short `pmu stat` run of the default events on the machine behind `pmu`, of
/// built-in workload `workload` (a trace takes its place).
fn short_run(pmu_name: &str, workload: &str, machine_config: Option<MachineFile>, trace: Option<std::path::PathBuf>, threads: usize) {
    let catalog = &*CATALOG;
    let Ok(pmu) = catalog.pmu(pmu_name) else { return };
    let sels: Vec<_> = pmukit_arch::default_events(pmu).iter().filter_map(|e| catalog.resolve(e, pmu.name()).ok()).collect();
    let workload = workload.to_string();
    let opts = StatOptions {
        workload,
        cycles: 20_000,
        mux_interval: 5_000,
        threads: Some(threads),
        machine_config,
        trace,
        ..StatOptions::default()
    };
    let _ = stat::stat(catalog, &sels, &opts, &mut |_| {});
}

/// A `--machine-config` file: applied to the parameters of an ARM11 core, a SPARC chip
/// and a Montecito that the first byte picks (a refusal leaves the configuration as it
/// was, and applying an accepted file twice changes nothing more); the first byte also
/// picks a machine that then runs with it, with one thread or two (SPARC's strands
/// at once, when the file asks for them), and the file's length picks the built-in
/// workload it runs, so every workload's paths meet hostile parameters.
pub fn machine_config(data: &[u8]) {
    let Some((&first, rest)) = data.split_first() else { return };
    let text = String::from_utf8_lossy(rest);
    // One variant of each family an input, not all eight: each application parses the
    // file again, and parsing it sixteen times was half the target's time.
    let pick = usize::from(first);
    let arm11 = [Arm11Core::Arm1136, Arm11Core::Arm1156, Arm11Core::Arm1176][pick % 3];
    if let Ok(cfg) = Arm11Config::new(arm11).with_overrides(&text, "fuzz.toml") {
        assert_eq!(cfg.with_overrides(&text, "fuzz.toml").as_ref(), Ok(&cfg), "applying a file twice");
    }
    let chip = [SparcChip::T4, SparcChip::Kt, SparcChip::Niagara][pick / 3 % 3];
    if let Ok(cfg) = SparcConfig::new(chip).with_overrides(&text, "fuzz.toml") {
        assert_eq!(cfg.with_overrides(&text, "fuzz.toml").as_ref(), Ok(&cfg), "applying a file twice");
    }
    if let Ok(cfg) = MontecitoConfig::new(1 + pick / 9 % 2).with_overrides(&text, "fuzz.toml") {
        assert_eq!(cfg.with_overrides(&text, "fuzz.toml").as_ref(), Ok(&cfg), "applying a file twice");
    }
    let pmu = MACHINES[pick % MACHINES.len()];
    let threads = if pick / 18 % 2 == 1 { 2 } else { 1 };
    let workload = WORKLOADS[rest.len() % WORKLOADS.len()].name;
    short_run(pmu, workload, Some(MachineFile { origin: "fuzz.toml".into(), text: text.into_owned() }), None, threads);
}

/// A trace (Lackey or native): every phase the reader gives passes the machines' own
/// check, and an accepted trace runs on the machine the first byte picks.
pub fn trace(data: &[u8]) {
    let Some((&first, rest)) = data.split_first() else { return };
    let Ok((program, _status)) = pmukit_sim::program::trace::program(Box::new(Cursor::new(rest.to_vec())), "fuzz") else {
        return;
    };
    for thread in program.threads {
        for phase in thread.take(10_000) {
            if let Err(e) = phase.check() {
                panic!("the trace reader made a phase its machines refuse: {e}");
            }
            made_again(&phase);
        }
    }
    // `--trace` takes a file: one per fuzzing thread, rewritten each time, in memory
    // where the system has a memory file system (writing it to disk took seven eighths
    // of the time, 500 executions a second instead of 4,000).
    let shm = std::path::Path::new("/dev/shm");
    let dir = if shm.is_dir() { shm.to_path_buf() } else { std::env::temp_dir() };
    let path = dir.join(format!("pmukit-fuzz-trace-{}-{:?}", std::process::id(), std::thread::current().id()));
    if std::fs::write(&path, rest).is_ok() {
        short_run(MACHINES[usize::from(first) % MACHINES.len()], DEFAULT_WORKLOAD, None, Some(path.clone()), 1);
    }
}

/// A phase's instructions as `--trace-out` gives them back (`trace::lines`) make, through
/// a trace's phase assembly (`trace::Maker`), the one phase they came from: the same
/// instructions, addresses, data streams and jump tables.
fn made_again(phase: &pmukit_sim::program::Phase) {
    use pmukit_sim::program::trace::{lines, Line, Maker};
    let mut maker = Maker::new(true);
    let mut again: Vec<_> = lines(phase, 0)
        .filter_map(|l| match l {
            Line::Instruction(r) => maker.push(r),
            Line::Transfer(_) => None,
        })
        .collect();
    again.extend(maker.take());
    let [one] = &again[..] else { panic!("one phase's instructions made {} phases", again.len()) };
    assert_eq!((&one.body, &one.addresses, &one.tables), (&phase.body, &phase.addresses, &phase.tables), "instructions made again");
    assert_eq!((one.privilege, one.entry), (phase.privilege, phase.entry));
    // The device transfers' streams follow the instructions'.
    assert_eq!(Some(&one.streams[..]), phase.streams.get(..one.streams.len()), "data streams made again");
}

/// perf stat output (`-x` CSV with any of the usual separators, `-j` JSON lines) or
/// `pmu stat --json` output, as `pmu metrics` reads it: the reader refuses the input or
/// gives at least one record, every count finite and within 64 bits, the same on a
/// second read and when the stream comes a byte at a time (as a pipe may hand it
/// over); perf's spelling of each event resolves, or not, on the ARM11 and T4 machines.
pub fn perf_stat(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let Ok((format, records)) = pmukit_core::perf_stat::read(&text, "fuzz", None) else { return };
    assert!(!records.is_empty(), "an accepted input has records");
    assert_eq!(pmukit_core::perf_stat::read(&text, "fuzz", None), Ok((format, records.clone())), "reading twice");
    let trickle = std::io::BufReader::with_capacity(1, text.as_bytes());
    let mut reader = pmukit_core::perf_stat::Reader::new(trickle, "fuzz", None);
    let mut again = Vec::new();
    while let Some(r) = reader.next_record().expect("a byte at a time reads as the whole") {
        again.push(r);
    }
    assert_eq!(again, records, "a byte at a time");
    let catalog = &*crate::strings::CATALOG;
    let arm = [catalog.pmu("arm1176").expect("built in")];
    let t4 = [catalog.pmu("sparc-t4").expect("built in"), catalog.pmu("sparc-t4-dram").expect("built in")];
    for r in &records {
        assert!(r.value.is_none_or(|v| v.is_finite() && v >= 0.0), "{r:?}");
        let _ = pmukit_arch::linux::resolve(catalog, &arm, &r.event);
        let _ = pmukit_arch::linux::resolve(catalog, &t4, &r.event);
    }
}

/// A pmu-events JSON file, as `pmu import perf-json` reads it, for the PMU the first
/// byte picks, with pmukit's companion table after a NUL byte when there is one: the
/// import refuses it or gives a table its family accepts, which exports and imports
/// again to the same events.
pub fn perf_json(data: &[u8]) {
    let Some((&first, rest)) = data.split_first() else { return };
    let catalog = &*crate::strings::CATALOG;
    let pmu = &catalog.pmus[usize::from(first) % catalog.pmus.len()];
    let (json, companion) = match rest.iter().position(|&b| b == 0) {
        Some(at) => (&rest[..at], Some(String::from_utf8_lossy(&rest[at + 1..]).into_owned())),
        None => (rest, None),
    };
    let files = [("fuzz.json".to_string(), String::from_utf8_lossy(json).into_owned())];
    let companion = companion.as_deref().map(|text| ("fuzz.toml", text));
    let Ok((table, _)) = pmukit_arch::perf_json::import(pmu, &files, &[], companion) else { return };
    assert!(pmukit_arch::family(pmu).validate(&table, "fuzz").is_ok(), "an imported table validates");
    let names =
        |t: &pmukit_core::table::EventTable| t.events.iter().map(|e| (e.name.to_string(), e.code, e.umasks.len())).collect::<Vec<_>>();
    // The PMU with the imported table, as --events-file would make it.
    let imported = pmukit_core::pmu::Pmu { desc: pmu.desc, table: std::borrow::Cow::Owned(table.clone()) };
    let (files, _) = pmukit_arch::perf_json::export(catalog, &imported);
    let json: Vec<(String, String)> =
        files.into_iter().filter(|f| f.path.ends_with(".json") && !f.path.ends_with("metrics.json")).map(|f| (f.path, f.text)).collect();
    let (back, _) = pmukit_arch::perf_json::import(pmu, &json, &[], None).expect("an export of an imported table imports");
    let (mut a, mut b) = (names(&table), names(&back));
    a.sort();
    b.sort();
    assert_eq!(a, b, "export and import again");
}

/// A sysfs tree, as `pmukit_live::sysfs` reads it: the input's lines are the files of
/// one `armv6_1176` PMU (`type`, `cpus`, `format/event`, `perf_event_mux_interval_ms`),
/// cpufreq's `cpuinfo_max_freq` and the online CPUs, written to a tree in memory where the system has
/// a memory file system. The reader refuses the tree or gives a PMU whose polling
/// interval is positive.
pub fn sysfs(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut lines = text.split('\n');
    let shm = std::path::Path::new("/dev/shm");
    let base = if shm.is_dir() { shm.to_path_buf() } else { std::env::temp_dir() };
    let root = base.join(format!("pmukit-fuzz-sysfs-{}-{:?}", std::process::id(), std::thread::current().id()));
    let pmu = root.join("bus/event_source/devices/armv6_1176");
    let cpu = root.join("devices/system/cpu");
    let freq = cpu.join("cpu0/cpufreq");
    if std::fs::create_dir_all(pmu.join("format")).is_err() || std::fs::create_dir_all(&freq).is_err() {
        return;
    }
    for file in [
        pmu.join("type"),
        pmu.join("cpus"),
        pmu.join("format/event"),
        pmu.join("perf_event_mux_interval_ms"),
        freq.join("cpuinfo_max_freq"),
        cpu.join("online"),
    ] {
        let _ = std::fs::write(file, lines.next().unwrap_or(""));
    }
    let catalog = &*crate::strings::CATALOG;
    if let Ok(machine) = pmukit_live::sysfs::read_machine(&root) {
        for p in &machine.pmus {
            let listed = p.cpus.as_deref().map(pmukit_live::sysfs::cpu_list);
            assert!(!matches!(listed, Some(None)), "{:?} was read as a CPU list", p.cpus);
        }
        for (pmu, _) in machine.ours(catalog, None) {
            let clock = machine.cpu_max_hz.unwrap_or_else(|| pmukit_live::poll::fastest_clock_hz(pmu));
            assert!(!pmukit_live::poll::interval(pmu, clock).is_zero(), "a zero interval at {clock} Hz");
            let _ = pmukit_live::poll::note(pmu, clock, machine.cpu_max_hz.is_some());
        }
    }
}

/// An MMU statistics dump: the streaming reader and the in-memory decoder agree,
/// buffer by buffer and on the error.
pub fn mmustat(data: &[u8]) {
    let whole = decode_mmustat(data);
    let mut buffers = Vec::new();
    let mut warnings = Vec::new();
    let mut error = None;
    for item in MmuStatReader::new(data) {
        match item {
            Ok((b, w)) => {
                buffers.push(b);
                warnings.extend(w);
            }
            Err(e) => error = Some(e),
        }
    }
    match whole {
        Ok(dump) => {
            assert_eq!(error, None);
            assert_eq!((dump.buffers, dump.warnings), (buffers, warnings));
        }
        Err(e) => assert_eq!(error, Some(e)),
    }
}

/// A recording (`pmu report`): read and checked; one that is read is summarised as the
/// report does, decoding every sample's registers, and reads back the same from its
/// JSON form and from the file `pmu record` writes of it (its head, each sample as it
/// comes, its tail).
pub fn recording(data: &[u8]) {
    use pmukit_sim::record::Sink;
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(r) = Recording::read(text) else { return };
    let summary = report::analyse(&r, "fuzz", 10);
    assert!(summary.events.len() == r.events.len());
    let again = serde_json::to_string(&r).expect("a recording read is written back");
    assert_eq!(Recording::read(&again), Ok(r.clone()));
    let mut writer = pmukit_sim::record::Writer::new(Vec::new());
    writer.head(&r).expect("in memory");
    for s in &r.samples {
        writer.sample(s).expect("in memory");
    }
    let streamed = writer.finish(&r).expect("in memory");
    assert_eq!(Recording::read(std::str::from_utf8(&streamed).expect("JSON is text")), Ok(r), "the file pmu record writes");
}

/// A program file `pmu stat -- PROG` inspects before QEMU runs it: any bytes are
/// refused with a reason or read, and the same bytes give the same answer.
pub fn elf_program(data: &[u8]) {
    let first = pmukit_cli::guest::inspect_elf(data);
    assert_eq!(first, pmukit_cli::guest::inspect_elf(data));
    if let Err(e) = &first {
        assert!(!e.is_empty());
    }
}

/// A guest thread's code as QEMU's plugin sees it run: an ISA byte, then per
/// instruction a size (0 for ARM's kernel helpers, which come without bytes, else 2
/// or 4), its bytes, where control goes next (on, or a jump by the next byte's
/// multiple of four) and up to three memory accesses. Each instruction is decoded
/// (`guest::Isa::decode`, twice: the same class) into a translation (`guest::Insn`)
/// and executed (`guest::Executed`), which makes the phases: every phase passes the
/// machines' check, every instruction executed is in them exactly once, in order,
/// and they are the phases their own records make through `trace::Maker::push`,
/// the path recordings read from files take.
pub fn guest_code(data: &[u8]) {
    use pmukit_sim::program::guest::{Accesses, Executed, Insn, Isa};
    use pmukit_sim::program::trace::{lines, Line, Maker};
    let Some((&isa, mut rest)) = data.split_first() else { return };
    let isa = if isa & 1 == 0 { Isa::Arm } else { Isa::Sparc };
    let (mut ip, mut insns, mut accesses) = (0x1_0000u64, Vec::new(), Vec::new());
    while let [size, jump, n, more @ ..] = rest {
        let size = [0usize, 2, 4][usize::from(*size % 3)];
        let Some((bytes, after)) = more.split_at_checked(size) else { break };
        let class = isa.decode(ip, bytes);
        assert_eq!(class, isa.decode(ip, bytes), "the same bytes, another class");
        insns.push(Insn { ip, size: size as u64, class });
        let (mut sum, mut left) = (Accesses::default(), after);
        for _ in 0..*n % 4 {
            let [a, b, store, tail @ ..] = left else { break };
            sum.add(0x8000_0000 + u64::from(*a) * 8, 1 << (b % 4), store & 1 == 1);
            left = tail;
        }
        accesses.push(sum);
        rest = left;
        ip = if jump % 4 == 0 { ip + size as u64 } else { ip.wrapping_add(u64::from(*jump) * 4) };
    }
    let mut executed = Executed::new(isa, 0);
    for (insn, &sum) in insns.iter().zip(&accesses) {
        executed.executed(insn, sum);
    }
    executed.finish();
    let phases = executed.phases();
    let mut records = Vec::new();
    for p in &phases {
        if let Err(e) = p.check() {
            panic!("a running program made a phase its machines refuse: {e}");
        }
        records.extend(lines(p, 0).filter_map(|l| match l {
            Line::Instruction(r) => Some(r),
            Line::Transfer(_) => None,
        }));
    }
    let ips: Vec<u64> = records.iter().map(|r| r.ip).collect();
    let expected: Vec<u64> = insns.iter().map(|i| i.ip).collect();
    assert_eq!(ips, expected, "each instruction executed, once, in order");
    let mut maker = Maker::running();
    let mut again: Vec<_> = records.iter().filter_map(|&r| maker.push(r)).collect();
    again.extend(maker.take());
    assert_eq!(again, phases, "the phases the records make one at a time");
}
