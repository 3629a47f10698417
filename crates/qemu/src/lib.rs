//! pmukit's QEMU plugin (`libpmukit_qemu.so`): loaded into QEMU user-mode by
//! `pmu stat -- PROG`, it runs that command inside QEMU, on a thread of its own, with
//! the program's instructions as the simulated machine's program. QEMU calls the
//! plugin as it translates code (each instruction's class is decoded once, from its
//! bytes), as each instruction starts and at each memory access; the instructions
//! become records ([`pmukit_sim::program::guest::Executed`]) that pass to the machine's
//! thread in batches, with no text and no pipe between.
//!
//! QEMU's plugin API (version 1, QEMU 4.2 to 8.x) is declared here from its
//! documentation, so that no GPL header is built in.

use std::ffi::{c_char, c_int, c_uint, c_void, CStr, OsString};
use std::os::unix::ffi::OsStringExt;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Mutex, OnceLock};
use std::thread::JoinHandle;

use pmukit_sim::program::guest::{Class, Executed, Isa};
use pmukit_sim::program::trace::{Line, Record, Running, Source, TraceError, TraceStatus};

mod api;

use api::*;

/// The plugin API version this plugin is built against.
#[no_mangle]
pub static qemu_plugin_version: c_int = 1;

/// Records handed to the machine at a time: enough to make the hand-over cheap.
const BATCH: usize = 1 << 14;
/// Batches waiting for the machine: when the machine falls behind, QEMU waits.
const QUEUE: usize = 4;

/// An instruction as translated: where it is and what it does. Kept for the life of
/// the process, since QEMU calls back with it for as long as the code stays
/// translated.
struct Insn {
    ip: u64,
    size: u64,
    class: Class,
}

/// The plugin's state, made at installation.
struct Plugin {
    isa: Isa,
    /// The status file `pmu` reads the command's exit status from.
    status: OsString,
    /// Where the tally goes, when asked.
    tally: Option<OsString>,
    recorder: Mutex<Recorder>,
    machine: Mutex<Option<JoinHandle<u8>>>,
    /// The program the machine's thread counts, told when it ends.
    running: Running,
    /// Translated instructions, by address and bytes, so that code QEMU translates
    /// again reuses them.
    insns: Mutex<std::collections::HashMap<(u64, u32), &'static Insn>>,
}

/// The threads' instructions as they execute, and the batch being filled.
struct Recorder {
    threads: Vec<Executed>,
    batch: Vec<Line>,
    /// `None` once the machine has stopped taking records (its run ended early).
    to_machine: Option<SyncSender<Vec<Line>>>,
    /// What QEMU's callbacks themselves showed, when asked (`tally=FILE`).
    tally: Option<Tally>,
}

/// QEMU's own view of the run, from its callbacks alone, for the tests that hold the
/// simulated counts to it: instructions (execution callbacks), the instructions that
/// loaded only, stored only, or did both (memory callbacks), and the executions of
/// instructions the decoder classes as branches (B, BL, BLX, BX, Bicc, CALL, …),
/// calls, returns, jumps (SPARC's JMPL, ARM's other writes of the PC) and barriers.
#[derive(Default)]
struct Tally {
    instructions: u64,
    loads: u64,
    stores: u64,
    atomics: u64,
    branches: u64,
    calls: u64,
    returns: u64,
    jumps: u64,
    barriers: u64,
    /// Each thread's running instruction's accesses: (loaded, stored).
    current: Vec<(bool, bool)>,
}

impl Tally {
    fn close(&mut self, vcpu: usize) {
        if let Some(flags) = self.current.get_mut(vcpu) {
            match std::mem::take(flags) {
                (true, true) => self.atomics += 1,
                (true, false) => self.loads += 1,
                (false, true) => self.stores += 1,
                (false, false) => {}
            }
        }
    }

    fn flags(&mut self, vcpu: usize) -> &mut (bool, bool) {
        if self.current.len() <= vcpu {
            self.current.resize(vcpu + 1, (false, false));
        }
        &mut self.current[vcpu]
    }

    fn json(&self) -> String {
        format!(
            "{{\"instructions\": {}, \"loads\": {}, \"stores\": {}, \"atomics\": {}, \"branches\": {}, \"calls\": {}, \"returns\": {}, \"jumps\": {}, \"barriers\": {}}}\n",
            self.instructions, self.loads, self.stores, self.atomics, self.branches, self.calls, self.returns, self.jumps, self.barriers
        )
    }
}

impl Recorder {
    fn thread(&mut self, isa: Isa, vcpu: c_uint) -> &mut Executed {
        let i = vcpu as usize;
        while self.threads.len() <= i {
            let n = u8::try_from(self.threads.len()).unwrap_or(u8::MAX);
            self.threads.push(Executed::new(isa, n));
        }
        &mut self.threads[i]
    }

    fn flush(&mut self) {
        if self.batch.is_empty() {
            return;
        }
        let batch = std::mem::replace(&mut self.batch, Vec::with_capacity(BATCH));
        if let Some(tx) = &self.to_machine {
            if tx.send(batch).is_err() {
                self.to_machine = None;
            }
        }
    }
}

static PLUGIN: OnceLock<Plugin> = OnceLock::new();

/// The records, as the machine's program reads them.
struct Batches {
    rx: Receiver<Vec<Line>>,
    batch: std::vec::IntoIter<Line>,
    status: TraceStatus,
    name: String,
}

impl Source for Batches {
    fn line(&mut self) -> Option<Line> {
        loop {
            if let Some(line) = self.batch.next() {
                return Some(line);
            }
            self.batch = self.rx.recv().ok()?.into_iter();
        }
    }

    fn fail(&mut self, message: String) {
        if let Ok(mut slot) = self.status.error.lock() {
            slot.get_or_insert(TraceError::Io { origin: self.name.clone(), message });
        }
    }

    fn one_process(&self) -> bool {
        true
    }
}

/// `name=value` arguments of `-plugin`.
fn argument<'a>(args: &'a [&'a str], name: &str) -> Option<&'a str> {
    args.iter().find_map(|a| a.strip_prefix(name).and_then(|rest| rest.strip_prefix('=')))
}

/// Writes `text` to `path` whole: into a file beside it, then renamed into place, so
/// `pmu` (or a test) reading `path` never sees part of it.
fn replace(path: &OsString, text: &str) {
    let mut part = path.clone();
    part.push(".part");
    if let Err(e) = std::fs::write(&part, text).and_then(|()| std::fs::rename(&part, path)) {
        say(&format!("{}: {e}", path.to_string_lossy()));
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
    let status_of_trace = TraceStatus::default();
    let source = Batches { rx, batch: Vec::new().into_iter(), status: status_of_trace.clone(), name: name.clone() };
    let running = Running::new(name, source, status_of_trace);
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
        recorder: Mutex::new(Recorder {
            threads: Vec::new(),
            batch: Vec::with_capacity(BATCH),
            to_machine: Some(tx),
            tally: argument(&args, "tally").map(|_| Tally::default()),
        }),
        machine: Mutex::new(Some(machine)),
        running,
        insns: Mutex::new(std::collections::HashMap::new()),
    };
    if PLUGIN.set(plugin).is_err() {
        return 1;
    }
    unsafe {
        qemu_plugin_register_vcpu_tb_trans_cb(id, translated);
        qemu_plugin_register_atexit_cb(id, exited, std::ptr::null_mut());
    }
    0
}

/// QEMU translated a block: class each instruction and ask to hear of its execution
/// and memory accesses.
unsafe extern "C" fn translated(_id: QemuPluginId, tb: *mut QemuPluginTb) {
    let Some(plugin) = PLUGIN.get() else { return };
    let Ok(mut insns) = plugin.insns.lock() else { return };
    for i in 0..unsafe { qemu_plugin_tb_n_insns(tb) } {
        let insn = unsafe { qemu_plugin_tb_get_insn(tb, i) };
        let ip = unsafe { qemu_plugin_insn_vaddr(insn) };
        let size = unsafe { qemu_plugin_insn_size(insn) };
        let data = unsafe { qemu_plugin_insn_data(insn) } as *const u8;
        // ARM's kernel helpers come without bytes.
        let bytes: &[u8] = if data.is_null() || size == 0 { &[] } else { unsafe { std::slice::from_raw_parts(data, size) } };
        let word = bytes.iter().take(4).fold(0u32, |w, b| w << 8 | u32::from(*b));
        let entry = insns.entry((ip, word)).or_insert_with(|| {
            let class = plugin.isa.decode(ip, bytes);
            Box::leak(Box::new(Insn { ip, size: size as u64, class }))
        });
        let udata = *entry as *const Insn as *mut c_void;
        unsafe {
            qemu_plugin_register_vcpu_insn_exec_cb(insn, executed, QEMU_PLUGIN_CB_NO_REGS, udata);
            qemu_plugin_register_vcpu_mem_cb(insn, accessed, QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_RW, udata);
        }
    }
}

unsafe extern "C" fn executed(vcpu: c_uint, udata: *mut c_void) {
    let Some(plugin) = PLUGIN.get() else { return };
    let Some(insn) = (unsafe { (udata as *const Insn).as_ref() }) else { return };
    let Ok(mut r) = plugin.recorder.lock() else { return };
    if r.to_machine.is_none() {
        return;
    }
    let r = &mut *r;
    if let Some(t) = &mut r.tally {
        t.close(vcpu as usize);
        t.flags(vcpu as usize);
        t.instructions += 1;
        let class = insn.class;
        t.branches += u64::from(matches!(class, Class::Branch { .. } | Class::Call | Class::Return | Class::IndirectBranch));
        t.calls += u64::from(class == Class::Call);
        t.returns += u64::from(class == Class::Return);
        t.jumps += u64::from(class == Class::Jump);
        t.barriers += u64::from(class == Class::Plain(pmukit_sim::program::Op::Barrier));
    }
    let mut out = std::mem::take(&mut r.batch);
    r.thread(plugin.isa, vcpu).start(insn.ip, insn.size, insn.class, &mut |rec: Record| out.push(Line::Instruction(rec)));
    r.batch = out;
    if r.batch.len() >= BATCH {
        r.flush();
    }
}

unsafe extern "C" fn accessed(vcpu: c_uint, info: QemuPluginMeminfo, vaddr: u64, _udata: *mut c_void) {
    let Some(plugin) = PLUGIN.get() else { return };
    let Ok(mut r) = plugin.recorder.lock() else { return };
    let bytes = 1u32 << unsafe { qemu_plugin_mem_size_shift(info) };
    let store = unsafe { qemu_plugin_mem_is_store(info) };
    if let Some(t) = &mut r.tally {
        let flags = t.flags(vcpu as usize);
        flags.0 |= !store;
        flags.1 |= store;
    }
    r.thread(plugin.isa, vcpu).access(vaddr, bytes, store);
}

/// The program has ended: the last instructions go to the machine, which finishes the
/// count and prints the report; `pmu` learns the command's exit status from the file.
unsafe extern "C" fn exited(_id: QemuPluginId, _udata: *mut c_void) {
    let Some(plugin) = PLUGIN.get() else { return };
    if let Ok(mut r) = plugin.recorder.lock() {
        let r = &mut *r;
        let mut out = std::mem::take(&mut r.batch);
        for t in &mut r.threads {
            t.finish(&mut |rec: Record| out.push(Line::Instruction(rec)));
        }
        r.batch = out;
        r.flush();
        r.to_machine = None;
        if let (Some(t), Some(path)) = (&mut r.tally, &plugin.tally) {
            for vcpu in 0..t.current.len() {
                t.close(vcpu);
            }
            replace(path, &t.json());
        }
    }
    plugin.running.end();
    let machine = plugin.machine.lock().ok().and_then(|mut m| m.take());
    let code = machine.and_then(|m| m.join().ok()).unwrap_or(1);
    replace(&plugin.status, &format!("{code}\n"));
}
