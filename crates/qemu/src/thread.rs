//! Each guest thread's instructions, made into phases on the host thread QEMU runs
//! it on. QEMU calls back once as each translated block starts and once at each
//! memory access; the block's instructions, which execute in order, go into the
//! machine's phases ([`Executed`]) when the next block starts, when their accesses
//! are known and where control went after the block's last instruction is too. Nothing on this path takes a lock or crosses threads
//! but the hand-over of a full batch of phases.
//!
//! A block can stop part way. QEMU's user mode stops SPARC's register-window
//! instructions to spill or fill a window and then runs them again from their start,
//! in a block of their own: such an instruction tells the plugin when it starts, and
//! the one after it when it starts too (see [`Threads::restartable`]), so a block
//! cut there keeps its instructions up to the stopped one, which runs again, as
//! QEMU's per-instruction callbacks show it. A block that a fault leaves part way (a
//! signal the program handles) counts as executed whole: QEMU gives a plugin no
//! cheaper way to know. The exactness tests hold these phases to QEMU's
//! per-instruction callbacks ([`crate::tally`]).

use std::cell::Cell;
use std::ffi::{c_uint, c_void};
use std::sync::mpsc::SyncSender;
use std::sync::Mutex;

use pmukit_sim::program::guest::{Accesses, Executed, Insn, Isa};
use pmukit_sim::program::trace::Made;

use crate::api::*;

/// Phases handed to the machine at a time (each of up to 1,024 instructions): enough
/// to make the hand-over cheap.
pub const BATCH: usize = 16;

/// A translated block's instructions, in order. Kept for the life of the process, as
/// QEMU calls back with it for as long as the code stays translated.
pub struct Block {
    pub insns: Box<[&'static Insn]>,
}

/// A memory access of the running block: the instruction's address, the access's.
#[derive(Clone, Copy)]
struct Access {
    ip: u64,
    address: u64,
    bytes: u32,
    store: bool,
}

/// One host thread's guest thread.
struct Local {
    vcpu: c_uint,
    executed: Executed<'static>,
    /// The block that started last, whose accesses are being collected.
    running: Option<&'static Block>,
    /// The address of a window instruction of the running block that has started and
    /// whose successor in the block has not; `u64::MAX` for none.
    restartable: u64,
    accesses: Vec<Access>,
    /// `None` once the machine has stopped taking phases (its run ended early) or
    /// the thread has ended.
    to_machine: Option<SyncSender<Made>>,
}

impl Local {
    /// The running block is over, and the block at `next` (if any) starts: the
    /// running block's instructions in order, each with its accesses, up to a window
    /// instruction that is run again at `next`.
    fn close(&mut self, next: Option<u64>) {
        let Some(block) = self.running.take() else { return };
        let mut insns = &block.insns[..];
        if next == Some(std::mem::replace(&mut self.restartable, u64::MAX)) {
            if let Some(k) = insns.iter().position(|i| Some(i.ip) == next) {
                insns = &insns[..=k];
            }
        }
        let mut next = self.accesses.iter().peekable();
        for insn in insns {
            let mut accesses = Accesses::default();
            while let Some(a) = next.next_if(|a| a.ip == insn.ip) {
                accesses.add(a.address, a.bytes, a.store);
            }
            self.executed.executed(insn, accesses);
        }
        self.accesses.clear();
        if self.executed.ended() >= BATCH {
            self.send();
        }
    }

    fn send(&mut self) {
        let phases = self.executed.phases();
        let thread = self.executed.thread();
        if let Some(tx) = &self.to_machine {
            if tx.send(Made { thread, phases }).is_err() {
                self.to_machine = None;
            }
        }
    }

    /// The thread has ended: its last instructions go to the machine.
    fn finish(&mut self) {
        self.close(None);
        self.executed.finish();
        if self.executed.ended() > 0 {
            self.send();
        }
        self.to_machine = None;
        self.accesses = Vec::new();
    }
}

/// A pointer to a thread's [`Local`], which lives as long as the process.
struct Shared(*mut Local);
// SAFETY: a `Local` is used by its own thread, and by another only where QEMU has
// stopped every vCPU (at exit) or after its thread has ended.
unsafe impl Send for Shared {}

/// Every thread's phases, and the channel new threads send theirs on.
pub struct Threads {
    isa: Isa,
    to_machine: Mutex<Option<SyncSender<Made>>>,
    /// The threads that have not ended.
    live: Mutex<Vec<Shared>>,
}

thread_local! {
    static LOCAL: Cell<*mut Local> = const { Cell::new(std::ptr::null_mut()) };
}

impl Threads {
    pub fn new(isa: Isa, to_machine: SyncSender<Made>) -> Threads {
        Threads { isa, to_machine: Mutex::new(Some(to_machine)), live: Mutex::new(Vec::new()) }
    }

    /// Calls `f` with this host thread's guest thread, made when it first runs, while
    /// the machine takes its phases.
    #[inline]
    fn local(&self, vcpu: c_uint, f: impl FnOnce(&mut Local)) {
        let mut p = LOCAL.get();
        if p.is_null() {
            p = self.first_run(vcpu);
            if p.is_null() {
                return;
            }
        }
        // SAFETY: `p` is this thread's own, live for the process (never freed).
        let local = unsafe { &mut *p };
        if local.to_machine.is_some() {
            f(local);
        }
    }

    /// This host thread's guest thread, made as it first runs (null when the machine
    /// has gone). Out of line: made inline, the `Local` took a frame of 648 bytes in
    /// each callback, whose set-up was a third of the memory callback's samples.
    #[cold]
    #[inline(never)]
    fn first_run(&self, vcpu: c_uint) -> *mut Local {
        let Some(to_machine) = self.to_machine.lock().ok().and_then(|tx| tx.clone()) else { return std::ptr::null_mut() };
        let thread = u8::try_from(vcpu).unwrap_or(u8::MAX);
        let local = Local {
            vcpu,
            executed: Executed::new(self.isa, thread),
            running: None,
            restartable: u64::MAX,
            accesses: Vec::with_capacity(64),
            to_machine: Some(to_machine),
        };
        let Ok(mut live) = self.live.lock() else { return std::ptr::null_mut() };
        let p = Box::into_raw(Box::new(local));
        live.push(Shared(p));
        LOCAL.set(p);
        p
    }

    /// A block starts on `vcpu`: the one before it is over.
    pub fn started(&self, vcpu: c_uint, block: &'static Block) {
        self.local(vcpu, |local| {
            local.close(block.insns.first().map(|i| i.ip));
            local.running = Some(block);
        });
    }

    /// A window instruction at `ip` starts (`Some`), or the instruction after it in
    /// its block does (`None`: it was not stopped).
    fn restartable(&self, vcpu: c_uint, ip: Option<u64>) {
        self.local(vcpu, |local| local.restartable = ip.unwrap_or(u64::MAX));
    }

    /// The running instruction at `ip` accesses memory.
    pub fn accessed(&self, vcpu: c_uint, ip: u64, address: u64, bytes: u32, store: bool) {
        self.local(vcpu, |local| local.accesses.push(Access { ip, address, bytes, store }));
    }

    /// Whether no thread but the calling one has run: its records are the program's.
    pub fn alone(&self) -> bool {
        let me = LOCAL.get();
        self.live.lock().is_ok_and(|live| live.iter().all(|s| s.0 == me))
    }

    /// The thread on `vcpu` has ended (QEMU calls this on that thread).
    pub fn ended(&self, vcpu: c_uint) {
        let Ok(mut live) = self.live.lock() else { return };
        if let Some(i) = live.iter().position(|s| unsafe { (*s.0).vcpu } == vcpu) {
            let s = live.swap_remove(i);
            // SAFETY: QEMU calls this on the ending thread itself, after its last block.
            unsafe { (*s.0).finish() };
        }
    }

    /// The program has ended, and QEMU has stopped every vCPU: every thread's last
    /// instructions go to the machine, and the channel closes.
    pub fn exited(&self) {
        if let Ok(mut tx) = self.to_machine.lock() {
            *tx = None;
        }
        let Ok(mut live) = self.live.lock() else { return };
        for s in live.drain(..) {
            // SAFETY: no vCPU runs any more (QEMU's exit holds them all stopped).
            unsafe { (*s.0).finish() };
        }
    }
}

/// The `udata` of a block's execution callback: the block.
pub unsafe extern "C" fn block_started(vcpu: c_uint, udata: *mut c_void) {
    let Some(plugin) = crate::plugin() else { return };
    let Some(block) = (unsafe { (udata as *const Block).as_ref() }) else { return };
    plugin.threads.started(vcpu, block);
}

/// The `udata` of a memory callback: the instruction.
pub unsafe extern "C" fn accessed(vcpu: c_uint, info: QemuPluginMeminfo, vaddr: u64, udata: *mut c_void) {
    let Some(plugin) = crate::plugin() else { return };
    let Some(insn) = (unsafe { (udata as *const Insn).as_ref() }) else { return };
    let bytes = 1u32 << unsafe { qemu_plugin_mem_size_shift(info) };
    let store = unsafe { qemu_plugin_mem_is_store(info) };
    plugin.threads.accessed(vcpu, insn.ip, vaddr, bytes, store);
}

/// The `udata` of a window instruction's execution callback: the instruction.
pub unsafe extern "C" fn window_started(vcpu: c_uint, udata: *mut c_void) {
    let Some(plugin) = crate::plugin() else { return };
    let Some(insn) = (unsafe { (udata as *const Insn).as_ref() }) else { return };
    plugin.threads.restartable(vcpu, Some(insn.ip));
}

/// The instruction after a window instruction in its block starts.
pub unsafe extern "C" fn window_passed(vcpu: c_uint, _udata: *mut c_void) {
    if let Some(plugin) = crate::plugin() {
        plugin.threads.restartable(vcpu, None);
    }
}

pub unsafe extern "C" fn vcpu_ended(_id: QemuPluginId, vcpu: c_uint) {
    if let Some(plugin) = crate::plugin() {
        plugin.threads.ended(vcpu);
    }
}
