//! `pmu stat -- PROG`: a program of the simulated machine's instruction set (ARMv6 for
//! ARM11, SPARC for the SPARC machines) runs under QEMU user-mode with pmukit's
//! plugin (`crates/qemu`), and the plugin runs this same command inside QEMU, where
//! the program's instructions drive the simulated machine as they execute
//! (docs/binaries.md). Outside QEMU the command checks the program and starts QEMU;
//! inside, it counts.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use object::elf;
use object::read::elf::{ElfFile, FileHeader, ProgramHeader, SectionHeader};
use object::{Endianness, FileKind};
use pmukit_arch::{arm11, montecito, sparc};
use pmukit_core::pmu::Pmu;
use pmukit_sim::program::trace::Running;

use crate::failure::{runtime, usage, Failure};
use crate::outfile;

/// The plugin's file, beside the `pmu` executable (cargo builds both into one
/// directory).
pub const PLUGIN: &str = "libpmukit_qemu.so";

/// The program being counted, when this command runs inside QEMU.
static RUNNING: OnceLock<Running> = OnceLock::new();

/// The running program, inside QEMU; `None` in `pmu` itself.
pub fn running() -> Option<Running> {
    RUNNING.get().cloned()
}

/// Runs `pmu` with `args` inside QEMU, counting `running`: what the plugin calls on its
/// own thread. Returns the command's exit status.
pub fn count_in_qemu(args: Vec<OsString>, running: Running) -> u8 {
    if RUNNING.set(running).is_err() {
        return 1;
    }
    crate::main_with(args)
}

/// How QEMU runs a program for a PMU's machine.
struct Target {
    /// QEMU's user-mode emulator.
    qemu: &'static str,
    /// Its CPU model, when not its default.
    cpu: Option<&'static str>,
    /// The multiarch directory of the distribution's cross libraries, for
    /// dynamically linked programs (`-L`).
    sysroot: &'static str,
}

/// The instruction sets a PMU's machine runs, by ELF `e_machine`, with the QEMU that
/// runs each.
fn targets(pmu: &Pmu) -> Result<Vec<(u16, &'static str, Target)>, Failure> {
    let family = pmu.desc.family;
    if family == arm11::FAMILY {
        // QEMU models the ARM1136 and ARM1176, not the ARM1156 (ARMv6T2): its
        // programs run on the ARM1176, without Thumb-2.
        let cpu = if pmu.name() == "arm1136" { "arm1136" } else { "arm1176" };
        return Ok(vec![(elf::EM_ARM, "32-bit ARM", Target { qemu: "qemu-arm", cpu: Some(cpu), sysroot: "/usr/arm-linux-gnueabi" })]);
    }
    if family == montecito::pmu::FAMILY {
        return Err(usage(format!(
            "{} runs Itanium programs, which QEMU cannot run (it has no IA-64 target): count a recorded trace with --trace (docs/workloads.md)",
            pmu.name()
        )));
    }
    if [sparc::t4::FAMILY, sparc::t4::DRAM_FAMILY, sparc::kt::FAMILY, sparc::niagara::FAMILY].contains(&family) {
        // The UltraSPARC T2 is the newest sun4v CPU QEMU models.
        let t2 = Some("Sun UltraSparc T2");
        return Ok(vec![
            (elf::EM_SPARCV9, "64-bit SPARC V9", Target { qemu: "qemu-sparc64", cpu: t2, sysroot: "/usr/sparc64-linux-gnu" }),
            (elf::EM_SPARC32PLUS, "32-bit SPARC V8+", Target { qemu: "qemu-sparc32plus", cpu: t2, sysroot: "/usr/sparc-linux-gnu" }),
            (elf::EM_SPARC, "32-bit SPARC", Target { qemu: "qemu-sparc", cpu: None, sysroot: "/usr/sparc-linux-gnu" }),
        ]);
    }
    Err(usage(format!("{} has no simulated machine that runs programs", pmu.name())))
}

/// This machine's own programs' `e_machine`, which `--live` counts.
const HOST: Option<u16> = if cfg!(target_arch = "x86_64") {
    Some(elf::EM_X86_64)
} else if cfg!(target_arch = "aarch64") {
    Some(elf::EM_AARCH64)
} else if cfg!(target_arch = "arm") {
    Some(elf::EM_ARM)
} else if cfg!(target_arch = "sparc64") {
    Some(elf::EM_SPARCV9)
} else {
    None
};

/// The names of the machines a program may be for, for messages.
fn machine_name(machine: u16) -> String {
    match machine {
        elf::EM_X86_64 => "x86-64".to_string(),
        elf::EM_386 => "32-bit x86".to_string(),
        elf::EM_AARCH64 => "64-bit ARM (AArch64)".to_string(),
        elf::EM_ARM => "32-bit ARM".to_string(),
        elf::EM_SPARCV9 => "64-bit SPARC V9".to_string(),
        elf::EM_SPARC32PLUS | elf::EM_SPARC => "32-bit SPARC".to_string(),
        elf::EM_IA_64 => "Itanium".to_string(),
        elf::EM_RISCV => "RISC-V".to_string(),
        elf::EM_PPC | elf::EM_PPC64 => "PowerPC".to_string(),
        elf::EM_MIPS => "MIPS".to_string(),
        elf::EM_S390 => "s390".to_string(),
        other => format!("e_machine {other}"),
    }
}

/// What the parent learns of the program's file.
struct Program {
    path: PathBuf,
    elf: Elf,
}

/// What an ELF program's headers and code say about running it under QEMU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Elf {
    /// `e_machine`.
    pub machine: u16,
    /// It names an interpreter: a dynamically linked program.
    pub dynamic: bool,
    /// The address of an instruction QEMU cannot run, if any, and what it is.
    pub unrunnable: Option<(u64, &'static str)>,
}

/// The program's path as `execvp` would find it: as given when it holds a slash,
/// else the first match in `PATH`.
fn find(name: &OsStr) -> Option<PathBuf> {
    if name.as_bytes().contains(&b'/') {
        return Some(PathBuf::from(name));
    }
    std::env::split_paths(&std::env::var_os("PATH")?).map(|dir| dir.join(name)).find(|p| p.is_file())
}

fn inspect(name: &OsStr) -> Result<Program, Failure> {
    let shown = name.to_string_lossy();
    let path = find(name).ok_or_else(|| usage(format!("{shown}: no such program (not a path, and not in PATH)")))?;
    let data = std::fs::read(&path).map_err(|e| runtime(format!("{}: {}", path.display(), pmukit_core::input::io_message(&e))))?;
    let elf = inspect_elf(&data).map_err(|e| usage(format!("{}: {e}", path.display())))?;
    Ok(Program { path, elf })
}

/// An ELF program's machine, linking and any instruction QEMU cannot run; a file that
/// is no ELF program, or a malformed one, is refused with the reason.
pub fn inspect_elf(data: &[u8]) -> Result<Elf, String> {
    let not_elf = || "not an ELF program: pmu stat runs compiled ARM and SPARC programs under QEMU".to_string();
    // `object` reads the headers in place and refuses a misaligned one: a copy in a
    // fresh allocation (which the allocators here align to 16 bytes) reads wherever
    // the bytes came from.
    let data = data.to_vec();
    match FileKind::parse(&*data).map_err(|_| not_elf())? {
        FileKind::Elf32 => inspect_headers::<elf::FileHeader32<Endianness>>(&data),
        FileKind::Elf64 => inspect_headers::<elf::FileHeader64<Endianness>>(&data),
        _ => Err(not_elf()),
    }
}

fn inspect_headers<H: FileHeader<Endian = Endianness>>(data: &[u8]) -> Result<Elf, String> {
    let bad = |e: object::Error| format!("a malformed ELF file: {e}");
    let file = ElfFile::<H>::parse(data).map_err(bad)?;
    let (header, endian) = (file.elf_header(), file.endian());
    let machine = header.e_machine(endian);
    let dynamic = header.program_headers(endian, data).map_err(bad)?.iter().any(|p| p.p_type(endian) == elf::PT_INTERP);
    let mut unrunnable = None;
    if matches!(machine, elf::EM_SPARCV9 | elf::EM_SPARC32PLUS) {
        for section in header.sections(endian, data).map_err(bad)?.iter() {
            if section.sh_flags(endian).into() & u64::from(elf::SHF_EXECINSTR) == 0 {
                continue;
            }
            let Ok(code) = section.data(endian, data) else { continue };
            let at = code.chunks_exact(4).position(|w| w.try_into().is_ok_and(|w: [u8; 4]| is_cbcond(u32::from_be_bytes(w))));
            if let Some(i) = at {
                let start: u64 = section.sh_addr(endian).into();
                let Some(address) = start.checked_add(4 * i as u64) else {
                    return Err(format!("a malformed ELF file: a code section at {start:#x} runs past the end of the address space"));
                };
                unrunnable = Some((address, "CBCOND, SPARC T4's compare-and-branch (-mcpu=niagara4)"));
                break;
            }
        }
    }
    Ok(Elf { machine, dynamic, unrunnable })
}

/// SPARC T4's CBCOND (Oracle SPARC Architecture 2011, CWBcc/CXBcc): op 00, op2 011
/// with bit 28 set, where BPr has it clear.
fn is_cbcond(word: u32) -> bool {
    word >> 30 == 0 && (word >> 22) & 7 == 3 && (word >> 28) & 1 == 1
}

/// A program on `PATH` (`qemu-arm`), or where the user put it.
fn on_path(name: &str) -> Option<PathBuf> {
    find(OsStr::new(name))
}

/// Writes `bytes` to `path` whole, as pmu replaces every file it writes: into a file
/// beside it, then renamed into place, so that a reader (the plugin reading its
/// command, `pmu` reading the plugin's status) never sees part of it.
pub fn write_whole(path: &Path, bytes: &[u8]) -> Result<(), String> {
    let mut out = outfile::Output::create(path, "a file for QEMU's plugin").map_err(|f| f.message)?;
    out.write_all(bytes).map_err(|f| f.message)?;
    out.commit().map(|_| ()).map_err(|f| f.message)
}

/// The parent: checks the program against the PMU's machine, runs it under QEMU with
/// the plugin (which counts and prints the report), and exits as the program did.
pub fn run(pmu: &Pmu, command: &[OsString]) -> Result<(), Failure> {
    let Some(name) = command.first() else { return Err(usage("no program to run after --")) };
    let targets = targets(pmu)?;
    let program = inspect(name)?;
    let Some((_, _, target)) = targets.iter().find(|(m, _, _)| *m == program.elf.machine) else {
        let runs: Vec<&str> = targets.iter().map(|(_, n, _)| *n).collect();
        let live = if Some(program.elf.machine) == HOST { " (to count it on this machine, give --live)" } else { "" };
        return Err(usage(format!(
            "{} is a {} program; --pmu {} runs {} programs{live}",
            program.path.display(),
            machine_name(program.elf.machine),
            pmu.name(),
            runs.join(" or ")
        )));
    };
    if let Some((at, what)) = program.elf.unrunnable {
        return Err(usage(format!(
            "{} holds {what} at {at:#x}, which QEMU cannot run: build it for the T2 or T3 (-mcpu=niagara2 or -mcpu=niagara3)",
            program.path.display()
        )));
    }
    let qemu = on_path(target.qemu).ok_or_else(|| {
        usage(format!(
            "{} is not installed: pmu stat runs programs under QEMU user-mode (Debian: apt install qemu-user; docs/binaries.md)",
            target.qemu
        ))
    })?;
    let exe = std::env::current_exe().map_err(|e| runtime(format!("cannot find pmu's own executable: {e}")))?;
    let plugin = exe.with_file_name(PLUGIN);
    if !plugin.is_file() {
        return Err(runtime(format!(
            "pmukit's QEMU plugin is not beside pmu (expected {}): build it with `cargo build --release -p pmukit-qemu`",
            plugin.display()
        )));
    }
    // QEMU splits the plugin option at commas.
    let dir =
        tempfile::Builder::new().prefix("pmukit-qemu-").tempdir().map_err(|e| runtime(format!("cannot make a directory for QEMU: {e}")))?;
    for p in [plugin.as_path(), dir.path()] {
        if p.as_os_str().as_bytes().contains(&b',') {
            return Err(runtime(format!("{}: QEMU's -plugin option cannot take a path with a comma", p.display())));
        }
    }
    // The command line, for the plugin to run as it is: each argument's bytes, ended
    // by a NUL.
    let (args_file, status_file) = (dir.path().join("args"), dir.path().join("status"));
    let mut bytes = Vec::new();
    for a in std::env::args_os() {
        bytes.extend_from_slice(a.as_bytes());
        bytes.push(0);
    }
    // Written whole, then renamed into place: QEMU's plugin never reads a part of it.
    write_whole(&args_file, &bytes).map_err(runtime)?;
    let mut qemu_cmd = Command::new(&qemu);
    if let Some(cpu) = target.cpu {
        qemu_cmd.args(["-cpu", cpu]);
    }
    if program.elf.dynamic && std::env::var_os("QEMU_LD_PREFIX").is_none() && Path::new(target.sysroot).is_dir() {
        qemu_cmd.arg("-L").arg(target.sysroot);
    }
    let mut option = plugin.into_os_string();
    option.push(",args=");
    option.push(&args_file);
    option.push(",status=");
    option.push(&status_file);
    qemu_cmd.arg("-plugin").arg(option).arg(&program.path).args(&command[1..]);
    // Ctrl-C goes to QEMU and its program; pmu waits for the report.
    let _ = ctrlc::set_handler(|| {});
    let status = qemu_cmd.status().map_err(|e| runtime(format!("cannot start {}: {e}", qemu.display())))?;
    let counted = std::fs::read_to_string(&status_file).ok().and_then(|s| s.trim().parse::<u8>().ok());
    match (counted, status.code(), status.signal()) {
        // The count failed: the plugin said why.
        (Some(code), ..) if code != 0 => outfile::exit(i32::from(code)),
        (Some(_), Some(0), _) => Ok(()),
        (Some(_), Some(code), _) => outfile::exit(code),
        (Some(_), None, signal) => outfile::exit(128 + signal.unwrap_or(0)),
        (None, code, signal) => {
            // What ends QEMU without the plugin's exit (docs/binaries.md).
            let (how, why) = match (code, signal) {
                (Some(c), _) => (format!("with status {c}"), "a program that calls execve while other threads run takes the count with it"),
                (_, Some(s)) => (
                    format!("on signal {s}"),
                    "QEMU ends a program killed by a signal (a segmentation fault, an abort) without letting the plugin report",
                ),
                _ => ("early".to_string(), "QEMU did not let the plugin report"),
            };
            Err(runtime(format!("{} ended {how} before pmukit's plugin could count the program: {why}", qemu.display())))
        }
    }
}
