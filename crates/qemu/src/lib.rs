//! pmukit's QEMU plugin (`libpmukit_qemu.so`): loaded into QEMU user-mode by
//! `pmu stat -- PROG`, it runs that command inside QEMU, on a thread of its own, with
//! the program's instructions as the simulated machine's program. QEMU calls the
//! plugin as it translates code (each instruction's class is decoded once, from its
//! bytes), as each translated block starts and at each memory access; the
//! instructions become records ([`pmukit_sim::program::guest::Executed`]) and the
//! records phases on the guest thread's own host thread ([`thread`]), which pass to
//! the machine's thread in batches, with no text and no pipe between.
//!
//! QEMU's plugin API (version 1, QEMU 4.2 to 8.x) is declared here from its
//! documentation, so that no GPL header is built in.

use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_uint, c_void, CStr, OsString};
use std::os::unix::ffi::OsStringExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::sync_channel;
use std::sync::{Mutex, OnceLock};
use std::thread::JoinHandle;

use pmukit_sim::program::guest::{Insn, Isa};
use pmukit_sim::program::trace::{Running, TraceStatus};

mod api;
mod tally;
mod thread;

use api::*;
use thread::{Block, Threads};

/// The plugin API version this plugin is built against.
#[no_mangle]
pub static qemu_plugin_version: c_int = 1;

/// Batches waiting for the machine: when the machine falls behind, QEMU waits.
const QUEUE: usize = 4;

/// The plugin's state, made at installation.
struct Plugin {
    isa: Isa,
    /// The status file `pmu` reads the command's exit status from.
    status: OsString,
    /// Where the tally goes, when asked.
    tally: Option<OsString>,
    threads: Threads,
    machine: Mutex<Option<JoinHandle<u8>>>,
    /// The program the machine's thread counts, told when it ends.
    running: Running,
    /// Translated instructions, by address and bytes, and blocks, by their
    /// instructions, so that code QEMU translates again reuses them.
    translations: Mutex<Translations>,
}

#[derive(Default)]
struct Translations {
    insns: HashMap<(u64, u32), &'static Insn>,
    blocks: HashMap<Box<[usize]>, &'static Block>,
}

static PLUGIN: OnceLock<Plugin> = OnceLock::new();

/// Set in a process the program forked: QEMU runs the child with a copy of this
/// plugin, but the machine's thread, the channel's reader and any lock another thread
/// held at the fork are the parent's. The child runs unmeasured, and its exit tells
/// `pmu` nothing.
static FORKED: AtomicBool = AtomicBool::new(false);

extern "C" fn forked() {
    FORKED.store(true, Ordering::Relaxed);
}

extern "C" {
    fn pthread_atfork(prepare: Option<extern "C" fn()>, parent: Option<extern "C" fn()>, child: Option<extern "C" fn()>) -> c_int;
}

/// The plugin, in the process `pmu` started; `None` in a forked child.
fn plugin() -> Option<&'static Plugin> {
    if FORKED.load(Ordering::Relaxed) {
        return None;
    }
    PLUGIN.get()
}

/// `name=value` arguments of `-plugin`.
fn argument<'a>(args: &'a [&'a str], name: &str) -> Option<&'a str> {
    args.iter().find_map(|a| a.strip_prefix(name).and_then(|rest| rest.strip_prefix('=')))
}

/// Writes `text` to `path` whole, so `pmu` (or a test) reading it never sees part of it.
fn replace(path: &OsString, text: &str) {
    if let Err(e) = pmukit_cli::guest::write_whole(std::path::Path::new(path), text.as_bytes()) {
        say(&e);
    }
}

fn say(message: &str) {
    eprintln!("pmu: error: {message}");
}

/// # Safety
/// Called by QEMU with its own `info` and `argc` strings in `argv`.
#[no_mangle]
pub unsafe extern "C" fn qemu_plugin_install(id: QemuPluginId, info: *const QemuInfo, argc: c_int, argv: *const *const c_char) -> c_int {
    let args: Vec<&str> = (0..usize::try_from(argc).unwrap_or(0))
        .filter_map(|i| unsafe { argv.add(i).read().as_ref() }.map(|p| unsafe { CStr::from_ptr(p) }))
        .filter_map(|s| s.to_str().ok())
        .collect();
    let target = unsafe { info.as_ref() }.and_then(|i| unsafe { i.target_name.as_ref() }).map(|p| unsafe { CStr::from_ptr(p) });
    let isa = match target.and_then(|t| t.to_str().ok()) {
        Some("arm") => Isa::Arm,
        Some(t) if t.starts_with("sparc") => Isa::Sparc,
        other => {
            say(&format!("pmukit's QEMU plugin runs ARM and SPARC programs, not {}", other.unwrap_or("this target")));
            return 1;
        }
    };
    let (Some(command), Some(status)) = (argument(&args, "args"), argument(&args, "status")) else {
        say("pmukit's QEMU plugin is started by `pmu stat -- PROG`, which gives it args= and status=");
        return 1;
    };
    let command = match std::fs::read(command) {
        Ok(bytes) => bytes.split(|b| *b == 0).filter(|a| !a.is_empty()).map(|a| OsString::from_vec(a.to_vec())).collect::<Vec<_>>(),
        Err(e) => {
            say(&format!("{command}: {e}"));
            return 1;
        }
    };
    let (tx, rx) = sync_channel(QUEUE);
    let program = command.iter().skip_while(|a| a.as_os_str() != "--").skip(1).map(|a| a.to_string_lossy()).collect::<Vec<_>>();
    let name = format!("program {}", program.join(" "));
    let running = Running::new(name, rx.into_iter(), TraceStatus::default());
    let counted = running.clone();
    let machine =
        std::thread::Builder::new().name("pmukit machine".into()).spawn(move || pmukit_cli::guest::count_in_qemu(command, counted));
    let Ok(machine) = machine else {
        say("cannot start the simulated machine's thread");
        return 1;
    };
    let plugin = Plugin {
        isa,
        status: OsString::from(status),
        tally: argument(&args, "tally").map(OsString::from),
        threads: Threads::new(isa, tx),
        machine: Mutex::new(Some(machine)),
        running,
        translations: Mutex::default(),
    };
    if plugin.tally.is_some() {
        if let Ok(mut t) = tally::TALLY.lock() {
            *t = Some(tally::Tally::default());
        }
    }
    if PLUGIN.set(plugin).is_err() {
        return 1;
    }
    if unsafe { pthread_atfork(None, None, Some(forked)) } != 0 {
        say("cannot watch for the program's forks");
        return 1;
    }
    unsafe {
        qemu_plugin_register_vcpu_tb_trans_cb(id, translated);
        qemu_plugin_register_vcpu_exit_cb(id, thread::vcpu_ended);
        qemu_plugin_register_vcpu_syscall_cb(id, system_call);
        qemu_plugin_register_atexit_cb(id, exited, std::ptr::null_mut());
    }
    0
}

/// QEMU translated a block: class each instruction and ask to hear of the block's
/// execution and of each instruction's memory accesses.
unsafe extern "C" fn translated(_id: QemuPluginId, tb: *mut QemuPluginTb) {
    let Some(plugin) = plugin() else { return };
    let Ok(mut t) = plugin.translations.lock() else { return };
    let tallied = plugin.tally.is_some();
    let n = unsafe { qemu_plugin_tb_n_insns(tb) };
    let mut insns = Vec::with_capacity(n);
    // Whether the instruction before was a window instruction QEMU may stop.
    let mut after_window = false;
    for i in 0..n {
        let insn = unsafe { qemu_plugin_tb_get_insn(tb, i) };
        let ip = unsafe { qemu_plugin_insn_vaddr(insn) };
        let size = unsafe { qemu_plugin_insn_size(insn) };
        let data = unsafe { qemu_plugin_insn_data(insn) } as *const u8;
        // ARM's kernel helpers come without bytes.
        let bytes: &[u8] = if data.is_null() || size == 0 { &[] } else { unsafe { std::slice::from_raw_parts(data, size) } };
        let word = bytes.iter().take(4).fold(0u32, |w, b| w << 8 | u32::from(*b));
        let entry: &'static Insn = t.insns.entry((ip, word)).or_insert_with(|| {
            let class = plugin.isa.decode(ip, bytes);
            Box::leak(Box::new(Insn { ip, size: size as u64, class }))
        });
        insns.push(entry);
        let udata = entry as *const Insn as *mut c_void;
        let window = plugin.isa.restarts(bytes);
        unsafe {
            if after_window {
                qemu_plugin_register_vcpu_insn_exec_cb(insn, thread::window_passed, QEMU_PLUGIN_CB_NO_REGS, std::ptr::null_mut());
            }
            if window {
                qemu_plugin_register_vcpu_insn_exec_cb(insn, thread::window_started, QEMU_PLUGIN_CB_NO_REGS, udata);
            }
            qemu_plugin_register_vcpu_mem_cb(insn, thread::accessed, QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_RW, udata);
            if tallied {
                tally::watch(insn, udata);
            }
        }
        after_window = window;
    }
    let key: Box<[usize]> = insns.iter().map(|i| *i as *const Insn as usize).collect();
    let block: &'static Block = t.blocks.entry(key).or_insert_with(|| Box::leak(Box::new(Block { insns: insns.into_boxed_slice() })));
    let udata = block as *const Block as *mut c_void;
    unsafe { qemu_plugin_register_vcpu_tb_exec_cb(tb, thread::block_started, QEMU_PLUGIN_CB_NO_REGS, udata) };
}

/// The program has ended: the last instructions go to the machine, which finishes the
/// count and prints the report; `pmu` learns the command's exit status from the file.
unsafe extern "C" fn exited(_id: QemuPluginId, _udata: *mut c_void) {
    if let Some(plugin) = plugin() {
        finish(plugin);
    }
}

/// The system calls that replace the program (ARM EABI's and SPARC's `execve` and
/// `execveat`).
fn replaces_program(isa: Isa, number: i64) -> bool {
    match isa {
        Isa::Arm => matches!(number, 11 | 387),
        Isa::Sparc => matches!(number, 59 | 350),
    }
}

/// A system call starts. Before `execve` replaces the program (with one QEMU does
/// not run under this plugin), the count ends there and the report is printed, as
/// the program's own exit would; the new program's exit status is the command's. With
/// other threads running, their records cannot be taken safely, and the count is lost
/// with them.
#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn system_call(
    _id: QemuPluginId,
    _vcpu: c_uint,
    number: i64,
    _: u64,
    _: u64,
    _: u64,
    _: u64,
    _: u64,
    _: u64,
    _: u64,
    _: u64,
) {
    let Some(plugin) = plugin() else { return };
    if replaces_program(plugin.isa, number) && plugin.threads.alone() {
        finish(plugin);
    }
}

/// Ends the count, once: every thread's last records go to the machine, the report is
/// printed, and the status file says how the count went. If `execve` fails after the
/// count has ended, the program goes on uncounted.
fn finish(plugin: &Plugin) {
    let Some(machine) = plugin.machine.lock().ok().and_then(|mut m| m.take()) else { return };
    plugin.threads.exited();
    if let Some(path) = &plugin.tally {
        if let Ok(Some(t)) = tally::TALLY.lock().as_deref_mut().map(Option::as_mut) {
            replace(path, &t.json());
        }
    }
    plugin.running.end();
    let code = machine.join().unwrap_or(1);
    replace(&plugin.status, &format!("{code}\n"));
}
