//! `pmu stat -- PROG` refuses, before anything runs, a program the PMU's machine
//! cannot run under QEMU: another instruction set, a file that is no program, a
//! machine QEMU has no target for. None of this needs QEMU; tests/binaries.rs runs
//! real programs.

use std::process::Command;

const PMU: &str = env!("CARGO_BIN_EXE_pmu");

fn refused(args: &[&str]) -> String {
    let out = Command::new(PMU).args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stdout));
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn a_program_of_this_machine_is_refused_on_a_simulated_arm11() {
    // The test binary itself: an x86-64 (or whatever this host is) ELF program.
    let me = std::env::current_exe().unwrap();
    let e = refused(&["stat", "--pmu", "arm1176", "--", me.to_str().unwrap()]);
    assert!(e.contains(" program; --pmu arm1176 runs 32-bit ARM programs"), "{e}");
    #[cfg(target_arch = "x86_64")]
    assert!(e.contains("is a x86-64 program") && e.contains("give --live"), "{e}");
}

#[test]
fn files_that_are_no_program_and_machines_without_qemu_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("notes.txt");
    std::fs::write(&text, "not a program\n").unwrap();
    let e = refused(&["stat", "--", text.to_str().unwrap()]);
    assert!(e.contains("not an ELF program"), "{e}");
    let e = refused(&["stat", "--", "surely-no-such-program-here"]);
    assert!(e.contains("surely-no-such-program-here: no such program"), "{e}");
    let e = refused(&["stat", "--pmu", "montecito", "--", text.to_str().unwrap()]);
    assert!(e.contains("QEMU cannot run") && e.contains("--trace"), "{e}");
    // --trace-out writes a program's run: without one it is refused.
    let e = refused(&["stat", "--trace-out", text.to_str().unwrap()]);
    assert!(e.contains("COMMAND"), "{e}");
    // Options that describe another run are refused with a program too.
    let e = refused(&["stat", "-r", "2", "--", text.to_str().unwrap()]);
    assert!(e.contains("counted once"), "{e}");
}

/// The ELF reading on small programs of each machine (the fuzz target's seeds): the
/// machine, static linking, and T4's CBCOND found at its address.
#[test]
fn elf_programs_are_read_for_their_machine_and_unrunnable_code() {
    use pmukit_cli::guest::inspect_elf;
    let arm = inspect_elf(include_bytes!("../../../fuzz/corpus/elf_program/seed-arm")).unwrap();
    assert_eq!((arm.machine, arm.dynamic, arm.unrunnable), (40, false, None));
    let sparc = inspect_elf(include_bytes!("../../../fuzz/corpus/elf_program/seed-sparc64")).unwrap();
    assert_eq!((sparc.machine, sparc.unrunnable), (43, None));
    let t4 = inspect_elf(include_bytes!("../../../fuzz/corpus/elf_program/seed-sparc64-cbcond")).unwrap();
    assert!(t4.unrunnable.is_some_and(|(at, what)| at % 4 == 0 && what.starts_with("CBCOND")), "{t4:?}");
}

/// Malformed ELF files are refused with the reason, never a panic.
#[test]
fn malformed_elf_files_are_refused() {
    use pmukit_cli::guest::inspect_elf;
    let good = include_bytes!("../../../fuzz/corpus/elf_program/seed-arm").to_vec();
    for cut in [4, 20, 51, 60] {
        let e = inspect_elf(&good[..cut]).unwrap_err();
        assert!(e.contains("not an ELF program") || e.contains("malformed ELF"), "{cut}: {e}");
    }
    // Section headers said to lie far past the end of the file (e_shoff, ELF32 offset 32).
    let mut far = good.clone();
    far[32..36].copy_from_slice(&0x7fff_fff0u32.to_le_bytes());
    let e = inspect_elf(&far).unwrap_err();
    assert!(e.contains("malformed ELF"), "{e}");
    // A code section whose address runs past 2^64 (found by the fuzzer): where its
    // CBCOND lies is no address.
    let e = inspect_elf(include_bytes!("../../../fuzz/corpus/elf_program/regress-section-past-the-address-space")).unwrap_err();
    assert!(e.contains("malformed ELF file: a code section at") && e.contains("past the end of the address space"), "{e}");
    // Through the command: the file is named.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cut");
    std::fs::write(&file, &good[..60]).unwrap();
    let e = refused(&["stat", "--", file.to_str().unwrap()]);
    assert!(e.contains("cut: a malformed ELF file"), "{e}");
}
