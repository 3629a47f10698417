//! QEMU's own view of the run (`tally=FILE`), from per-instruction callbacks alone,
//! for the tests that hold the simulated counts to it. It is independent of the
//! path the machine's records take (a callback per translated block, see
//! [`crate::thread`]), so the tests prove that path exact.

use std::ffi::{c_uint, c_void};
use std::sync::Mutex;

use pmukit_sim::program::guest::{Class, Insn};
use pmukit_sim::program::Op;

use crate::api::*;

/// Instructions (execution callbacks), the instructions that loaded only, stored
/// only, or did both (memory callbacks), and the executions of instructions the
/// decoder classes as branches (B, BL, BLX, BX, Bicc, CALL, …), calls, returns,
/// jumps (SPARC's JMPL, ARM's other writes of the PC) and barriers.
#[derive(Default)]
pub struct Tally {
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

    /// The tally as JSON, every thread's last instruction closed.
    pub fn json(&mut self) -> String {
        for vcpu in 0..self.current.len() {
            self.close(vcpu);
        }
        format!(
            "{{\"instructions\": {}, \"loads\": {}, \"stores\": {}, \"atomics\": {}, \"branches\": {}, \"calls\": {}, \"returns\": {}, \"jumps\": {}, \"barriers\": {}}}\n",
            self.instructions, self.loads, self.stores, self.atomics, self.branches, self.calls, self.returns, self.jumps, self.barriers
        )
    }
}

/// The tally, when one was asked for.
pub static TALLY: Mutex<Option<Tally>> = Mutex::new(None);

/// Asks QEMU to call back at the execution and the memory accesses of `insn`, whose
/// translation `udata` is.
///
/// # Safety
/// `insn` is an instruction QEMU is translating; `udata` points to an [`Insn`] that
/// lives as long as the process.
pub unsafe fn watch(insn: *mut QemuPluginInsn, udata: *mut c_void) {
    unsafe {
        qemu_plugin_register_vcpu_insn_exec_cb(insn, executed, QEMU_PLUGIN_CB_NO_REGS, udata);
        qemu_plugin_register_vcpu_mem_cb(insn, accessed, QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_RW, std::ptr::null_mut());
    }
}

unsafe extern "C" fn executed(vcpu: c_uint, udata: *mut c_void) {
    if crate::plugin().is_none() {
        return;
    }
    let Some(insn) = (unsafe { (udata as *const Insn).as_ref() }) else { return };
    let Ok(mut slot) = TALLY.lock() else { return };
    let Some(t) = slot.as_mut() else { return };
    t.close(vcpu as usize);
    t.flags(vcpu as usize);
    t.instructions += 1;
    let class = insn.class;
    t.branches += u64::from(matches!(class, Class::Branch { .. } | Class::Call | Class::Return | Class::IndirectBranch));
    t.calls += u64::from(class == Class::Call);
    t.returns += u64::from(class == Class::Return);
    t.jumps += u64::from(class == Class::Jump);
    t.barriers += u64::from(class == Class::Plain(Op::Barrier));
}

unsafe extern "C" fn accessed(vcpu: c_uint, info: QemuPluginMeminfo, _vaddr: u64, _udata: *mut c_void) {
    if crate::plugin().is_none() {
        return;
    }
    let store = unsafe { qemu_plugin_mem_is_store(info) };
    let Ok(mut slot) = TALLY.lock() else { return };
    if let Some(t) = slot.as_mut() {
        let flags = t.flags(vcpu as usize);
        flags.0 |= !store;
        flags.1 |= store;
    }
}
