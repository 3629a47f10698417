//! The parts of QEMU's plugin API (`include/qemu/qemu-plugin.h`, version 1) this
//! plugin uses, declared from the API's documentation. QEMU's executable provides the
//! functions; the plugin is loaded into it.

#![allow(non_camel_case_types)]

use std::ffi::{c_char, c_int, c_uint, c_void};

pub type QemuPluginId = u64;
/// `qemu_plugin_meminfo_t`: an access's size, sign, endianness and direction.
pub type QemuPluginMeminfo = u32;

/// `qemu_info_t`: what QEMU tells a plugin at installation; only the fields up to the
/// target's name are read.
#[repr(C)]
pub struct QemuInfo {
    pub target_name: *const c_char,
    pub version_min: c_int,
    pub version_cur: c_int,
    pub system_emulation: bool,
}

/// Opaque handles.
#[repr(C)]
pub struct QemuPluginTb {
    _private: [u8; 0],
}
#[repr(C)]
pub struct QemuPluginInsn {
    _private: [u8; 0],
}

/// `enum qemu_plugin_cb_flags`: the callback reads no registers.
pub const QEMU_PLUGIN_CB_NO_REGS: c_int = 0;
/// `enum qemu_plugin_mem_rw`: loads and stores.
pub const QEMU_PLUGIN_MEM_RW: c_int = 3;

pub type TbTransCb = unsafe extern "C" fn(QemuPluginId, *mut QemuPluginTb);
pub type VcpuUdataCb = unsafe extern "C" fn(c_uint, *mut c_void);
pub type VcpuMemCb = unsafe extern "C" fn(c_uint, QemuPluginMeminfo, u64, *mut c_void);
pub type VcpuSimpleCb = unsafe extern "C" fn(QemuPluginId, c_uint);
pub type VcpuSyscallCb = unsafe extern "C" fn(QemuPluginId, c_uint, i64, u64, u64, u64, u64, u64, u64, u64, u64);
pub type UdataCb = unsafe extern "C" fn(QemuPluginId, *mut c_void);

extern "C" {
    pub fn qemu_plugin_register_vcpu_tb_trans_cb(id: QemuPluginId, cb: TbTransCb);
    pub fn qemu_plugin_register_atexit_cb(id: QemuPluginId, cb: UdataCb, userdata: *mut c_void);
    pub fn qemu_plugin_tb_n_insns(tb: *const QemuPluginTb) -> usize;
    pub fn qemu_plugin_tb_get_insn(tb: *const QemuPluginTb, idx: usize) -> *mut QemuPluginInsn;
    pub fn qemu_plugin_insn_data(insn: *const QemuPluginInsn) -> *const c_void;
    pub fn qemu_plugin_insn_size(insn: *const QemuPluginInsn) -> usize;
    pub fn qemu_plugin_insn_vaddr(insn: *const QemuPluginInsn) -> u64;
    pub fn qemu_plugin_register_vcpu_syscall_cb(id: QemuPluginId, cb: VcpuSyscallCb);
    pub fn qemu_plugin_register_vcpu_exit_cb(id: QemuPluginId, cb: VcpuSimpleCb);
    pub fn qemu_plugin_register_vcpu_tb_exec_cb(tb: *mut QemuPluginTb, cb: VcpuUdataCb, flags: c_int, userdata: *mut c_void);
    pub fn qemu_plugin_register_vcpu_insn_exec_cb(insn: *mut QemuPluginInsn, cb: VcpuUdataCb, flags: c_int, userdata: *mut c_void);
    pub fn qemu_plugin_register_vcpu_mem_cb(insn: *mut QemuPluginInsn, cb: VcpuMemCb, flags: c_int, rw: c_int, userdata: *mut c_void);
    pub fn qemu_plugin_mem_size_shift(info: QemuPluginMeminfo) -> c_uint;
    pub fn qemu_plugin_mem_is_store(info: QemuPluginMeminfo) -> bool;
}
