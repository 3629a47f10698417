//! `pmu stat -- PROG` on real ARMv6 and SPARC programs under QEMU (issue 42): the
//! simulated counts of instructions, loads, stores and branches equal what QEMU's own
//! callbacks saw, and the program's output and exit status pass through.
//!
//! These need QEMU user-mode and the cross compilers (Debian: qemu-user,
//! gcc-arm-linux-gnueabi, gcc-sparc64-linux-gnu) and the plugin built beside `pmu`
//! (`cargo build -p pmukit-qemu`): they run with `--features qemu-tests`, which
//! `.ci/run` gives after installing them, and fail when any is missing.
#![cfg(feature = "qemu-tests")]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

const PMU: &str = env!("CARGO_BIN_EXE_pmu");
const PROGRAMS: [&str; 8] = ["loop", "list", "calls", "predicated", "threads", "fork", "exec", "crash"];
/// The programs the exactness tests count: `exec` and `crash` have tests of their own.
const EXACT: [&str; 6] = ["loop", "list", "calls", "predicated", "threads", "fork"];

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
enum Isa {
    Arm,
    Sparc,
}

/// The directory the programs are built in, and each program's file.
type Built = (tempfile::TempDir, HashMap<(String, Isa), PathBuf>);

/// The test programs, compiled once for each instruction set into a directory that
/// lasts the test run.
fn program(name: &str, isa: Isa) -> PathBuf {
    static BUILT: OnceLock<Built> = OnceLock::new();
    let (_, built) = BUILT.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs");
        let mut built = HashMap::new();
        for p in PROGRAMS {
            for (isa, cc, flags) in [
                (
                    Isa::Arm,
                    "arm-linux-gnueabi-gcc",
                    &["-march=armv6kz", "-mtune=arm1176jzf-s", "-mfpu=vfp", "-mfloat-abi=softfp", "-marm"][..],
                ),
                (Isa::Sparc, "sparc64-linux-gnu-gcc", &["-mcpu=niagara2"][..]),
            ] {
                let out = dir.path().join(format!("{p}-{isa:?}"));
                let status = Command::new(cc)
                    .args(["-O2", "-static", "-pthread"])
                    .args(flags)
                    .arg(source.join(format!("{p}.c")))
                    .arg("-o")
                    .arg(&out)
                    .status()
                    .unwrap_or_else(|e| panic!("{cc}: {e} (install gcc-arm-linux-gnueabi and gcc-sparc64-linux-gnu)"));
                assert!(status.success(), "{cc} {p}.c");
                built.insert((p.to_string(), isa), out);
            }
        }
        (dir, built)
    });
    built[&(name.to_string(), isa)].clone()
}

fn plugin() -> PathBuf {
    let plugin = Path::new(PMU).with_file_name("libpmukit_qemu.so");
    assert!(plugin.is_file(), "{} is missing: cargo build -p pmukit-qemu", plugin.display());
    plugin
}

/// Counts `events` on `pmu` while QEMU runs `prog`, beside what QEMU's callbacks saw
/// (the plugin's `tally=`): QEMU is started as `pmu stat -- PROG` starts it.
fn counted(pmu: &str, events: &str, prog: &Path) -> (HashMap<String, u64>, serde_json::Value) {
    let dir = tempfile::tempdir().unwrap();
    let mut args = Vec::new();
    for a in ["pmu", "stat", "--pmu", pmu, "-x,", "-o", &dir.path().join("counts").to_string_lossy(), "-e", events, "--"] {
        args.extend_from_slice(a.as_bytes());
        args.push(0);
    }
    args.extend_from_slice(prog.to_string_lossy().as_bytes());
    args.push(0);
    std::fs::write(dir.path().join("args"), args).unwrap();
    let (qemu, cpu) = if pmu.starts_with("arm") { ("qemu-arm", "arm1176") } else { ("qemu-sparc64", "Sun UltraSparc T2") };
    let option = format!(
        "{},args={},status={},tally={}",
        plugin().display(),
        dir.path().join("args").display(),
        dir.path().join("status").display(),
        dir.path().join("tally").display()
    );
    let out = Command::new(qemu)
        .args(["-cpu", cpu, "-plugin", &option])
        .arg(prog)
        .output()
        .unwrap_or_else(|e| panic!("{qemu}: {e} (install qemu-user)"));
    assert_eq!(std::fs::read_to_string(dir.path().join("status")).unwrap().trim(), "0", "{}", String::from_utf8_lossy(&out.stderr));
    let csv = std::fs::read_to_string(dir.path().join("counts")).unwrap();
    let counts = csv
        .lines()
        // Event lines; a metric's own line has no count.
        .filter(|l| !l.is_empty() && !l.starts_with('#') && !l.starts_with(','))
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (f[2].to_string(), f[0].parse::<u64>().unwrap_or_else(|_| panic!("{l}")))
        })
        .collect();
    let tally = serde_json::from_str(&std::fs::read_to_string(dir.path().join("tally")).unwrap()).unwrap();
    (counts, tally)
}

fn t(tally: &serde_json::Value, key: &str) -> u64 {
    tally[key].as_u64().unwrap()
}

/// ARM1176 (the ARM11 spec, Table 2): 0x7 counts every instruction executed, those
/// that fail their condition too (QEMU calls back for them as well); 0x5 branch
/// instructions (B, BL, BLX, BX and returns), not other writes of the PC; 0x23 and
/// 0x24 calls and returns.
#[test]
fn arm1176_counts_what_qemu_executed() {
    for p in EXACT {
        let prog = program(p, Isa::Arm);
        let (c, tally) = counted("arm1176", "INSTR_EXEC,BR_EXEC", &prog);
        assert_eq!(c["INSTR_EXEC"], t(&tally, "instructions"), "{p}: {tally}");
        assert_eq!(c["BR_EXEC"], t(&tally, "branches"), "{p}: {tally}");
        let (c, tally) = counted("arm1176", "PROC_CALL_EXEC,PROC_RET_EXEC", &prog);
        assert_eq!(c["PROC_CALL_EXEC"], t(&tally, "calls"), "{p}: {tally}");
        assert_eq!(c["PROC_RET_EXEC"], t(&tally, "returns"), "{p}: {tally}");
        assert!(t(&tally, "instructions") > 100_000, "{p} ran: {tally}");
    }
}

/// SPARC T4 (Table 10-1): sl 3's loads and stores (MEMBAR counts as a store, footnote
/// 7), every instruction; sl 4's branches (JMPL and RETURN among them) and atomics.
#[test]
fn sparc_t4_counts_what_qemu_executed() {
    for p in EXACT {
        let prog = program(p, Isa::Sparc);
        let (c, tally) = counted("sparc-t4", "INSTR.ALL,INSTR.LOADS,INSTR.STORES,INSTR_SPECIAL.BRANCHES", &prog);
        assert_eq!(c["INSTR.ALL"], t(&tally, "instructions"), "{p}: {tally}");
        assert_eq!(c["INSTR.LOADS"], t(&tally, "loads"), "{p}: {tally}");
        assert_eq!(c["INSTR.STORES"], t(&tally, "stores") + t(&tally, "barriers"), "{p}: {tally}");
        assert_eq!(c["INSTR_SPECIAL.BRANCHES"], t(&tally, "branches") + t(&tally, "jumps"), "{p}: {tally}");
        let (c, tally) = counted("sparc-t4", "INSTR_SPECIAL.ATOMICS", &prog);
        assert_eq!(c["INSTR_SPECIAL.ATOMICS"], t(&tally, "atomics"), "{p}: {tally}");
    }
}

/// `pmu stat -- PROG` as a user runs it: the program's output and exit status pass
/// through, and the report names the program.
#[test]
fn a_program_runs_under_pmu_stat_with_its_output_and_status() {
    for (pmu, isa) in [("arm1176", Isa::Arm), ("sparc-t4", Isa::Sparc)] {
        let out = Command::new(PMU).args(["stat", "--pmu", pmu, "--"]).arg(program("loop", isa)).output().unwrap();
        let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert_eq!(out.status.code(), Some(3), "{stderr}");
        // The program's output, then the report (standard output, as with --live).
        assert!(stdout.starts_with("loop "), "{stdout}");
        assert!(stdout.contains("Performance counter stats for workload 'program ") && stdout.contains(&format!("on {pmu}")), "{stdout}");
        // --cycles caps the count; the program still runs to its end.
        let out = Command::new(PMU).args(["stat", "--pmu", pmu, "--cycles", "1e5", "--"]).arg(program("loop", isa)).output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(3));
        assert!(stdout.starts_with("loop ") && stdout.contains("(seed 1, 100,000 cycles)"), "{stdout}");
    }
}

/// A program that forks runs to its end: QEMU runs the child with a copy of the plugin,
/// which must neither wait for the parent's machine nor report, so the child runs
/// unmeasured and the parent is counted (the exactness tests count it too).
#[test]
fn a_program_that_forks_runs_to_its_end_with_its_child_unmeasured() {
    for (pmu, isa) in [("arm1176", Isa::Arm), ("sparc-t4", Isa::Sparc)] {
        let mut run = Command::new(PMU)
            .args(["stat", "--pmu", pmu, "--"])
            .arg(program("fork", isa))
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        // A child that waits for the parent's machine would hang: give up after a minute.
        let started = std::time::Instant::now();
        while run.try_wait().unwrap().is_none() {
            if started.elapsed() > std::time::Duration::from_secs(60) {
                run.kill().unwrap();
                panic!("{pmu}: a forking program did not end");
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let out = run.wait_with_output().unwrap();
        let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert_eq!(out.status.code(), Some(0), "{stderr}");
        assert!(stdout.contains("child 1799970000\n") && stdout.contains("parent 1799970000, child 3\n"), "{stdout}");
        assert_eq!(stdout.matches("Performance counter stats").count(), 1, "{stdout}");
    }
}

/// A program that replaces itself with `execve` is counted up to the call, the report
/// printed before the new program runs, whose exit status is the command's.
#[test]
fn a_program_that_execs_is_counted_up_to_the_exec() {
    for (pmu, isa) in [("arm1176", Isa::Arm), ("sparc-t4", Isa::Sparc)] {
        let out = Command::new(PMU).args(["stat", "--pmu", pmu, "--"]).arg(program("exec", isa)).output().unwrap();
        let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert_eq!(out.status.code(), Some(5), "{stderr}");
        let report = stdout.find("Performance counter stats").unwrap_or_else(|| panic!("{stdout}"));
        assert!(stdout.starts_with("exec 49995000\n") && stdout[report..].contains("replaced\n"), "{stdout}");
    }
}

/// A program killed by a signal ends QEMU without the plugin's exit: pmu has no count
/// and says why, after the program's own output.
#[test]
fn a_program_killed_by_a_signal_has_no_count_and_pmu_says_why() {
    for (pmu, isa) in [("arm1176", Isa::Arm), ("sparc-t4", Isa::Sparc)] {
        let out = Command::new(PMU).args(["stat", "--pmu", pmu, "--"]).arg(program("crash", isa)).output().unwrap();
        let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert_ne!(out.status.code(), Some(0), "{stderr}");
        assert_eq!(stdout, "crash\n");
        assert!(
            stderr.contains("ended on signal 11 before pmukit's plugin could count the program") && stderr.contains("killed by a signal"),
            "{stderr}"
        );
    }
}

/// A program for the other instruction set, or T4 code QEMU cannot run, is refused
/// before it runs, naming the mismatch.
#[test]
fn programs_of_another_instruction_set_are_refused() {
    let refused = |pmu: &str, prog: &Path| {
        let out = Command::new(PMU).args(["stat", "--pmu", pmu, "--"]).arg(prog).output().unwrap();
        assert_eq!(out.status.code(), Some(2));
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let e = refused("arm1176", &program("loop", Isa::Sparc));
    assert!(e.contains("is a 64-bit SPARC V9 program; --pmu arm1176 runs 32-bit ARM programs"), "{e}");
    let e = refused("sparc-t4", &program("loop", Isa::Arm));
    assert!(e.contains("is a 32-bit ARM program; --pmu sparc-t4 runs 64-bit SPARC V9"), "{e}");
    let dir = tempfile::tempdir().unwrap();
    let n4 = dir.path().join("loop-niagara4");
    let status = Command::new("sparc64-linux-gnu-gcc")
        .args(["-O2", "-static", "-mcpu=niagara4"])
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/programs/loop.c"))
        .arg("-o")
        .arg(&n4)
        .status()
        .unwrap();
    assert!(status.success());
    let e = refused("sparc-t4", &n4);
    assert!(e.contains("CBCOND") && e.contains("-mcpu=niagara2"), "{e}");
}

/// `--trace-out` writes the run as a native trace that `--trace` replays to the same
/// counts: the same instructions, threads in one address space.
#[test]
fn a_programs_trace_replays_to_the_same_counts() {
    let dir = tempfile::tempdir().unwrap();
    for (pmu, isa, events) in
        [("arm1176", Isa::Arm, "INSTR_EXEC,DCACHE_MISS"), ("sparc-t4", Isa::Sparc, "INSTR.ALL,INSTR.LOADS,DC_MISS_ASYNC.ANY,CYCLES")]
    {
        let trace = dir.path().join(format!("{pmu}.trace"));
        let run = |extra: &[&std::ffi::OsStr]| {
            let out = Command::new(PMU).args(["stat", "--pmu", pmu, "-x,", "--no-metrics", "-e", events]).args(extra).output().unwrap();
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            String::from_utf8_lossy(&out.stdout).lines().filter(|l| l.contains(",,")).map(str::to_string).collect::<Vec<_>>()
        };
        let prog = program("list", isa);
        let live = run(&["--trace-out".as_ref(), trace.as_os_str(), "--".as_ref(), prog.as_os_str()]);
        let replayed = run(&["--trace".as_ref(), trace.as_os_str()]);
        assert!(!live.is_empty() && live == replayed, "{live:?} / {replayed:?}");
        assert!(std::fs::read_to_string(&trace).unwrap().starts_with("#pmukit-trace v1 process\n"));
    }
}
