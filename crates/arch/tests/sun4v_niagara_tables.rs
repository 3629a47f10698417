//! The sun4v hypervisor API tables pinned to their sources: every row of the Niagara
//! MMU statistics buffer ("Hypervisor API for Niagara MMU statistics collection" §2.3),
//! the function and API group numbers, and every status code. The numbers are written
//! out here from the documents (docs/sun4v.md cites each), so these tests pin the arch
//! constants the simulator uses.

use pmukit_arch::sparc::niagara::{
    self, Context, Field, FieldKind, Mmu, PageSize, Quantity, BUFFER_ALIGN, BUFFER_BYTES, COUNTER_BYTES, LAYOUT,
};
use pmukit_arch::sparc::sun4v::{
    self, group, ApiGroup, Function, Status, Trap, API_GET_VERSION, API_SET_VERSION, CORE_TRAP, FAST_TRAP, FUNCTIONS, GROUPS,
    KT_GET_PERFREG, KT_SET_PERFREG, MAX_ARGS, NIAGARA_MMUSTAT_CONF, NIAGARA_MMUSTAT_INFO,
};

use Context::{Ctx0, CtxNon0};
use Mmu::{Dmmu, Immu};
use PageSize::{Size256M, Size4M, Size64K, Size8K};
use Quantity::{Hits, Ticks};

/// Niagara MMU statistics §2.3, "MMU statistic buffer format": (offset, size, field).
/// `None` is "reserved".
#[allow(clippy::type_complexity)]
const SECTION_2_3: [(usize, usize, Option<(Mmu, Context, PageSize, Quantity)>); 44] = [
    (0x0, 0x8, Some((Immu, Ctx0, Size8K, Hits))),
    (0x8, 0x8, Some((Immu, Ctx0, Size8K, Ticks))),
    (0x10, 0x8, Some((Immu, Ctx0, Size64K, Hits))),
    (0x18, 0x8, Some((Immu, Ctx0, Size64K, Ticks))),
    (0x20, 0x10, None),
    (0x30, 0x8, Some((Immu, Ctx0, Size4M, Hits))),
    (0x38, 0x8, Some((Immu, Ctx0, Size4M, Ticks))),
    (0x40, 0x10, None),
    (0x50, 0x8, Some((Immu, Ctx0, Size256M, Hits))),
    (0x58, 0x8, Some((Immu, Ctx0, Size256M, Ticks))),
    (0x60, 0x20, None),
    (0x80, 0x8, Some((Immu, CtxNon0, Size8K, Hits))),
    (0x88, 0x8, Some((Immu, CtxNon0, Size8K, Ticks))),
    (0x90, 0x8, Some((Immu, CtxNon0, Size64K, Hits))),
    (0x98, 0x8, Some((Immu, CtxNon0, Size64K, Ticks))),
    (0xA0, 0x10, None),
    (0xB0, 0x8, Some((Immu, CtxNon0, Size4M, Hits))),
    (0xB8, 0x8, Some((Immu, CtxNon0, Size4M, Ticks))),
    (0xC0, 0x10, None),
    (0xD0, 0x8, Some((Immu, CtxNon0, Size256M, Hits))),
    (0xD8, 0x8, Some((Immu, CtxNon0, Size256M, Ticks))),
    (0xE0, 0x20, None),
    (0x100, 0x8, Some((Dmmu, Ctx0, Size8K, Hits))),
    (0x108, 0x8, Some((Dmmu, Ctx0, Size8K, Ticks))),
    (0x110, 0x8, Some((Dmmu, Ctx0, Size64K, Hits))),
    (0x118, 0x8, Some((Dmmu, Ctx0, Size64K, Ticks))),
    (0x120, 0x10, None),
    (0x130, 0x8, Some((Dmmu, Ctx0, Size4M, Hits))),
    (0x138, 0x8, Some((Dmmu, Ctx0, Size4M, Ticks))),
    (0x140, 0x10, None),
    (0x150, 0x8, Some((Dmmu, Ctx0, Size256M, Hits))),
    (0x158, 0x8, Some((Dmmu, Ctx0, Size256M, Ticks))),
    (0x160, 0x20, None),
    (0x180, 0x8, Some((Dmmu, CtxNon0, Size8K, Hits))),
    (0x188, 0x8, Some((Dmmu, CtxNon0, Size8K, Ticks))),
    (0x190, 0x8, Some((Dmmu, CtxNon0, Size64K, Hits))),
    (0x198, 0x8, Some((Dmmu, CtxNon0, Size64K, Ticks))),
    (0x1A0, 0x10, None),
    (0x1B0, 0x8, Some((Dmmu, CtxNon0, Size4M, Hits))),
    (0x1B8, 0x8, Some((Dmmu, CtxNon0, Size4M, Ticks))),
    (0x1C0, 0x10, None),
    (0x1D0, 0x8, Some((Dmmu, CtxNon0, Size256M, Hits))),
    (0x1D8, 0x8, Some((Dmmu, CtxNon0, Size256M, Ticks))),
    (0x1E0, 0x20, None),
];

#[test]
fn s2_3_every_row_of_the_buffer_format_is_in_the_layout_in_order() {
    assert_eq!(LAYOUT.len(), SECTION_2_3.len());
    for (row, &(offset, size, field)) in LAYOUT.iter().zip(SECTION_2_3.iter()) {
        let kind = match field {
            Some((mmu, context, page_size, quantity)) => FieldKind::Counter { mmu, context, page_size, quantity },
            None => FieldKind::Reserved,
        };
        assert_eq!(*row, Field { offset, size, kind }, "Niagara MMU statistics §2.3 row at offset {offset:#x}");
    }
}

#[test]
fn s2_3_counter_offsets_resolve_to_the_table() {
    for &(offset, _, field) in &SECTION_2_3 {
        if let Some((mmu, context, page_size, quantity)) = field {
            assert_eq!(niagara::offset(mmu, context, page_size, quantity), offset, "§2.3 {mmu:?} {context:?} {page_size:?} {quantity:?}");
        }
    }
}

#[test]
fn s2_3_the_buffer_is_0x200_bytes_of_64_bit_counters() {
    assert_eq!(BUFFER_BYTES, 0x200);
    assert_eq!(COUNTER_BYTES, 8);
    let counters = LAYOUT.iter().filter(|f| matches!(f.kind, FieldKind::Counter { .. })).count();
    assert_eq!(counters, 2 * 2 * 4 * 2, "IMMU/DMMU × ctx0/ctxnon0 × 8K/64K/4M/256M × hits/ticks");
    let reserved: usize = LAYOUT.iter().filter(|f| f.kind == FieldKind::Reserved).map(|f| f.size).sum();
    assert_eq!(reserved, 0x200 - 32 * 8);
}

#[test]
fn s2_1_the_buffer_is_aligned_on_a_64_byte_boundary() {
    // §2.1: "EBADALIGN raddr not aligned on 64-byte boundary".
    assert_eq!(BUFFER_ALIGN, 64);
}

#[test]
fn s2_1_s2_2_function_numbers() {
    // §2.1 "NIAGARA_MMUSTAT_CONF (0x102)", §2.2 "NIAGARA_MMUSTAT_INFO (0x103)", both FAST_TRAP.
    assert_eq!((NIAGARA_MMUSTAT_CONF.trap, NIAGARA_MMUSTAT_CONF.number), (Trap::Fast, 0x102));
    assert_eq!((NIAGARA_MMUSTAT_INFO.trap, NIAGARA_MMUSTAT_INFO.number), (Trap::Fast, 0x103));
    // §2.1: arg0 raddr; ret1 raddr. §2.2: no argument; ret1 raddr.
    assert_eq!((NIAGARA_MMUSTAT_CONF.args, NIAGARA_MMUSTAT_CONF.rets), (1, 1));
    assert_eq!((NIAGARA_MMUSTAT_INFO.args, NIAGARA_MMUSTAT_INFO.rets), (0, 1));
}

#[test]
fn kt_s3_2_function_numbers_and_group() {
    // KT performance registers §3.2: "KT_GET_PERFREG 0x122, KT_SET_PERFREG 0x123 ... Group# 0x209".
    assert_eq!((KT_GET_PERFREG.trap, KT_GET_PERFREG.number, KT_GET_PERFREG.group), (Trap::Fast, 0x122, Some(0x209)));
    assert_eq!((KT_SET_PERFREG.trap, KT_SET_PERFREG.number, KT_SET_PERFREG.group), (Trap::Fast, 0x123, Some(0x209)));
    // §3.2.1 arg0 PerfReg#, ret1 value; §3.2.2 arg0 PerfReg#, arg1 value, no ret1.
    assert_eq!((KT_GET_PERFREG.args, KT_GET_PERFREG.rets), (1, 1));
    assert_eq!((KT_SET_PERFREG.args, KT_SET_PERFREG.rets), (2, 0));
    assert_eq!(group::KT_CPU, 0x209);
}

#[test]
fn trap_numbers() {
    // sun4v/hypervisor src/include/hypervisor.h: "FAST_TRAP 0x80", "CORE_TRAP 0xff";
    // Linux arch/sparc/include/asm/hypervisor.h HV_FAST_TRAP, HV_CORE_TRAP.
    assert_eq!(FAST_TRAP, 0x80);
    assert_eq!(CORE_TRAP, 0xff);
    assert_eq!((Trap::Fast.number(), Trap::Core.number()), (0x80, 0xff));
    // Arguments in %o0-%o4.
    assert_eq!(MAX_ARGS, 5);
}

#[test]
fn core_trap_version_calls() {
    // Linux hypervisor.h: HV_CORE_SET_VER 0x00, HV_CORE_GET_VER 0x03 (0x01 putchar, 0x02 exit);
    // sun4v/hypervisor src/greatlakes/common/src/hcall.s .core_table.
    assert_eq!((API_SET_VERSION.trap, API_SET_VERSION.number, API_SET_VERSION.group), (Trap::Core, 0x00, None));
    assert_eq!((API_GET_VERSION.trap, API_GET_VERSION.number, API_GET_VERSION.group), (Trap::Core, 0x03, None));
    // set: arg0 group, arg1 major, arg2 minor; ret1 actual minor. get: arg0 group; ret1 major, ret2 minor.
    assert_eq!((API_SET_VERSION.args, API_SET_VERSION.rets), (3, 1));
    assert_eq!((API_GET_VERSION.args, API_GET_VERSION.rets), (1, 2));
}

#[test]
fn api_group_numbers_and_members() {
    // Linux hypervisor.h HV_GRP_SUN4V 0x0000, HV_GRP_CORE 0x0001, HV_GRP_NIAG_PERF 0x0200,
    // HV_GRP_KT_CPU 0x0209; the Niagara group holds the MMU statistics calls
    // (sun4v/hypervisor src/greatlakes/ontario/src/hcall_groups.s, group niagara 1.0).
    let numbers: Vec<(u64, &str)> = GROUPS.iter().map(|g| (g.number, g.name)).collect();
    assert_eq!(numbers, [(0x000, "sun4v"), (0x001, "core"), (0x200, "niagara"), (0x209, "kt_cpu")]);
    let members = |n: u64| ApiGroup::by_number(n).unwrap().functions().map(|f| f.name).collect::<Vec<_>>();
    assert_eq!(members(0x200), ["niagara_mmustat_conf", "niagara_mmustat_info"]);
    assert_eq!(members(0x209), ["kt_get_perfreg", "kt_set_perfreg"]);
    assert!(members(0x000).is_empty() && members(0x001).is_empty());
    let niagara = ApiGroup::by_number(group::NIAGARA).unwrap();
    assert_eq!((niagara.major, niagara.minor), (1, 0));
    assert_eq!(NIAGARA_MMUSTAT_CONF.api_group(), Some(niagara));
}

/// sun4v/hypervisor src/include/hypervisor.h "Hypervisor call status codes" (0-15) and
/// its later revision / Linux arch/sparc/include/asm/hypervisor.h (ECHANNEL 16).
const STATUS_CODES: [(&str, u64); 17] = [
    ("EOK", 0),
    ("ENOCPU", 1),
    ("ENORADDR", 2),
    ("ENOINTR", 3),
    ("EBADPGSZ", 4),
    ("EBADTSB", 5),
    ("EINVAL", 6),
    ("EBADTRAP", 7),
    ("EBADALIGN", 8),
    ("EWOULDBLOCK", 9),
    ("ENOACCESS", 10),
    ("EIO", 11),
    ("ECPUERROR", 12),
    ("ENOTSUPPORTED", 13),
    ("ENOMAP", 14),
    ("ETOOMANY", 15),
    ("ECHANNEL", 16),
];

#[test]
fn every_status_code_number() {
    assert_eq!(Status::ALL.len(), STATUS_CODES.len());
    for (status, (name, number)) in Status::ALL.into_iter().zip(STATUS_CODES) {
        assert_eq!((status.name(), status.number()), (name, number));
        assert_eq!(Status::from_number(number), Some(status));
        assert_eq!(Status::from_name(name), Some(status));
    }
    assert_eq!(Status::from_number(17), None);
    assert_eq!(Status::EBADTRAP.description(), "invalid function number");
}

#[test]
fn lookups_take_names_in_any_case_or_numbers() {
    assert_eq!(Status::lookup("ebadalign"), Some(Status::EBADALIGN));
    assert_eq!(Status::lookup("0x8"), Some(Status::EBADALIGN));
    assert_eq!(Status::lookup("8"), Some(Status::EBADALIGN));
    assert_eq!(Status::lookup("EFOO"), None);
    assert_eq!(Function::lookup("NIAGARA_MMUSTAT_CONF"), Some(&NIAGARA_MMUSTAT_CONF));
    assert_eq!(Function::lookup("0x103"), Some(&NIAGARA_MMUSTAT_INFO));
    assert_eq!(Function::lookup("259"), Some(&NIAGARA_MMUSTAT_INFO));
    // No FAST_TRAP function 0x03 is known, so the number finds the CORE_TRAP one.
    assert_eq!(Function::lookup("3"), Some(&API_GET_VERSION));
    assert_eq!(Function::lookup("0x999"), None);
    assert_eq!(ApiGroup::lookup("NIAGARA").map(|g| g.number), Some(0x200));
    assert_eq!(ApiGroup::lookup("0x209").map(|g| g.name), Some("kt_cpu"));
    assert_eq!(Function::lookup("0X103"), Some(&NIAGARA_MMUSTAT_INFO));
    assert_eq!(Function::lookup("+259"), None, "no sign");
    assert_eq!(sun4v::Function::by_number(Trap::Fast, 0x00), None);
    assert_eq!(FUNCTIONS.len(), 6);
}

/// §2.3 as a PMU: counter n of `niagara` is the n-th counter field of the buffer, in
/// the table's order (IMMU before DMMU, ctx0 before ctxnon0, small pages first, hits
/// before ticks).
#[test]
fn s2_3_niagara_counters_are_the_buffer_fields_in_order() {
    let fields: Vec<(Mmu, Context, PageSize, Quantity)> = LAYOUT
        .iter()
        .filter_map(|f| match f.kind {
            FieldKind::Counter { mmu, context, page_size, quantity } => Some((mmu, context, page_size, quantity)),
            FieldKind::Reserved => None,
        })
        .collect();
    assert_eq!(niagara::NIAGARA.counters.len(), 32);
    for (n, &field) in fields.iter().enumerate() {
        assert_eq!(niagara::slot(n), field, "counter {n}");
        assert_eq!(niagara::NIAGARA.counters[n].width, 64);
    }
    assert_eq!(niagara::NIAGARA.counters[0].name, "IMMU_CTX0_8K_HITS");
    assert_eq!(niagara::NIAGARA.counters[31].name, "DMMU_CTXNON0_256M_TICKS");
}

/// The event codes name MMU and quantity; each unit-mask bit one context × page size;
/// an event reads exactly the fields of its mask.
#[test]
fn s2_3_niagara_events_read_the_fields_of_their_unit_masks() {
    let cat = pmukit_arch::Catalog::builtin();
    let pmu = cat.pmu("niagara").unwrap();
    let read = |event: &str| {
        let sel = cat.resolve(event, "niagara").unwrap();
        pmu.counter_names(niagara::allowed(pmu, &sel))
    };
    assert_eq!(read("IMMU_TSB_HITS.CTX0_8K"), ["IMMU_CTX0_8K_HITS"]);
    assert_eq!(read("IMMU_TSB_TICKS.CTXNON0_256M"), ["IMMU_CTXNON0_256M_TICKS"]);
    assert_eq!(read("DMMU_TSB_HITS.CTX0_64K"), ["DMMU_CTX0_64K_HITS"]);
    assert_eq!(read("DMMU_TSB_TICKS.SIZE_4M"), ["DMMU_CTX0_4M_TICKS", "DMMU_CTXNON0_4M_TICKS"]);
    assert_eq!(read("DMMU_TSB_HITS").len(), 8, "ALL is the default unit mask");
    for (event, code) in [("IMMU_TSB_HITS", 0), ("IMMU_TSB_TICKS", 1), ("DMMU_TSB_HITS", 2), ("DMMU_TSB_TICKS", 3)] {
        assert_eq!(cat.resolve(event, "niagara").unwrap().code, code);
    }
}
