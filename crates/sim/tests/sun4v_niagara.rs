//! The sun4v hypervisor model, driven only through hypervisor calls, guest memory
//! accesses and engine runs: one rule of "Hypervisor API for Niagara MMU statistics
//! collection" (§2.1-§2.3) or of the sun4v core API per test. Function numbers and
//! offsets are written out from the documents here; docs/sun4v.md's TN rows name the
//! readings the tests pin.

use pmukit_arch::sparc::niagara::{Context, Mmu, PageSize};
use pmukit_sim::engine::{self, Counters, Exit};
use pmukit_sim::models::sun4v::{
    decode_mmustat, Config, ConfigError, DecodeError, HvResult, Hypervisor, MemRange, MemoryError, Processor, ReservedWarning, Status,
    MAX_VCPUS,
};
use pmukit_sim::stream::{Block, Cursor, Privilege, Signal, Span};
use proptest::prelude::*;

/// §2.1 NIAGARA_MMUSTAT_CONF, §2.2 NIAGARA_MMUSTAT_INFO.
const CONF: u64 = 0x102;
const INFO: u64 = 0x103;
/// KT performance registers §3.2.
const KT_GET_PERFREG: u64 = 0x122;
/// CORE_TRAP functions (Linux hypervisor.h HV_CORE_SET_VER, HV_CORE_GET_VER).
const SET_VERSION: u64 = 0x00;
const GET_VERSION: u64 = 0x03;
/// API groups: core 0x001, Niagara 0x200, KT 0x209.
const CORE: u64 = 0x001;
const NIAGARA: u64 = 0x200;
const KT_CPU: u64 = 0x209;
/// §2.3: a buffer is 0x200 bytes.
const BUFFER: usize = 0x200;

/// `Config::new`'s guest memory: 256 MiB at real address 0x1000_0000.
const RAM: u64 = 0x1000_0000;
const RAM_END: u64 = 0x2000_0000;

fn niagara(vcpus: usize) -> Hypervisor {
    Hypervisor::new(Config::new(Processor::Niagara1, vcpus)).unwrap()
}

fn conf(hv: &mut Hypervisor, vcpu: usize, raddr: u64) -> HvResult {
    hv.fast_trap(vcpu, CONF, &[raddr])
}

fn info(hv: &mut Hypervisor, vcpu: usize) -> HvResult {
    hv.fast_trap(vcpu, INFO, &[])
}

fn ok(ret1: u64) -> HvResult {
    HvResult { status: Status::EOK, ret1: Some(ret1), ret2: None }
}

fn err(status: Status) -> HvResult {
    HvResult { status, ret1: None, ret2: None }
}

/// The big-endian 64-bit field at `offset` of the buffer at `buffer`.
fn field(hv: &Hypervisor, buffer: u64, offset: u64) -> u64 {
    let bytes = hv.read_guest(buffer + offset, 8).unwrap();
    u64::from_be_bytes(bytes.try_into().unwrap())
}

/// `cycles` cycles on `thread` at `privilege`, each with `per_cycle` of `signal`.
/// Cycles of the miss handler per TSB hit in these spans: the machine computes them;
/// here each fill of a span brings this many walk cycles with it.
const TICKS_PER_TSB_HIT: u64 = 5;

/// `cycles` cycles counting `signal`; a TLB fill also counts its handler's cycles.
fn span(thread: u8, privilege: Privilege, signal: Signal, per_cycle: u8, cycles: u64) -> Span {
    let mut span = Span { thread, privilege, ..Span::new(cycles, 0x1_0000).with(signal, per_cycle) };
    for (fills, walks) in [(Signal::ITLB_FILLS, Signal::ITLB_WALK_CYCLES), (Signal::DTLB_FILLS, Signal::DTLB_WALK_CYCLES)] {
        if let Some(class) = fills.iter().position(|&f| f == signal) {
            span.signals.set(walks[class], per_cycle * TICKS_PER_TSB_HIT as u8);
        }
    }
    span
}

fn run(hv: &mut Hypervisor, spans: Vec<Span>) {
    let total: u64 = spans.iter().map(|s| s.cycles).sum();
    let mut cursor = Cursor::new(Box::new(spans.into_iter().map(|s| Block { body: vec![s], repeat: 1 })));
    assert_eq!(engine::run(hv, &mut cursor, total + 1), (total, Exit::EndOfStream));
}

#[test]
fn s2_1_conf_returns_the_previous_buffer_and_zero_the_first_time() {
    let mut hv = niagara(1);
    assert_eq!(conf(&mut hv, 0, RAM), ok(0));
    assert_eq!(conf(&mut hv, 0, RAM + 0x1000), ok(RAM));
    assert_eq!(conf(&mut hv, 0, RAM + 0x2000), ok(RAM + 0x1000));
    assert_eq!(info(&mut hv, 0), ok(RAM + 0x2000));
}

#[test]
fn s2_1_conf_with_raddr_zero_disables_collection_and_the_old_buffer_is_no_longer_accessed() {
    let mut hv = niagara(1);
    conf(&mut hv, 0, RAM);
    run(&mut hv, vec![span(0, Privilege::USER, Signal::DTlbFillsSize0, 1, 5)]);
    assert_eq!(conf(&mut hv, 0, 0), ok(RAM));
    assert_eq!(info(&mut hv, 0), ok(0));
    assert_eq!(conf(&mut hv, 0, 0), ok(0), "disabling again returns the 0 now configured");
    let before = hv.read_guest(RAM, BUFFER).unwrap();
    run(&mut hv, vec![span(0, Privilege::USER, Signal::DTlbFillsSize0, 1, 5)]);
    assert_eq!(hv.read_guest(RAM, BUFFER).unwrap(), before);
}

#[test]
fn s2_1_a_buffer_not_entirely_in_mapped_memory_is_enoraddr() {
    // TN3: all 0x200 bytes must be mapped; ranges may adjoin.
    let mut config = Config::new(Processor::Niagara1, 1);
    config.memory = vec![
        MemRange { base: 0x1000, size: 0x1000 },
        MemRange { base: 0x2000, size: 0x100 },
        MemRange { base: 0x4000, size: 0x1000 },
        MemRange { base: 0xFFFF_FFFF_FFFF_F000, size: 0xFFF },
    ];
    let mut hv = Hypervisor::new(config).unwrap();
    assert_eq!(conf(&mut hv, 0, 0x3000), err(Status::ENORADDR), "in the hole");
    assert_eq!(conf(&mut hv, 0, 0x2000), err(Status::ENORADDR), "runs off the end of a range into the hole");
    assert_eq!(conf(&mut hv, 0, 0x4E40), err(Status::ENORADDR), "last 0x1C0 bytes of a range");
    assert_eq!(conf(&mut hv, 0, 0xFFFF_FFFF_FFFF_FE00), err(Status::ENORADDR), "would end past 2^64 - 1");
    assert_eq!(conf(&mut hv, 0, 0x1F00), ok(0), "spans two adjoining ranges");
    assert_eq!(conf(&mut hv, 0, 0x4E00), ok(0x1F00), "exactly the last 0x200 bytes of a range");
}

#[test]
fn s2_1_a_buffer_not_on_a_64_byte_boundary_is_ebadalign() {
    let mut hv = niagara(1);
    for raddr in [RAM + 8, RAM + 0x20, RAM + 0x3F, 1] {
        assert_eq!(conf(&mut hv, 0, raddr), err(Status::EBADALIGN), "{raddr:#x}");
    }
    // TN4: alignment is checked before the range.
    assert_eq!(conf(&mut hv, 0, RAM_END + 8), err(Status::EBADALIGN));
    assert_eq!(conf(&mut hv, 0, RAM + 0x40), ok(0), "64-byte aligned is enough");
}

#[test]
fn s2_1_s2_2_the_calls_are_ebadtrap_on_every_processor_but_niagara_1() {
    for processor in [Processor::Kt, Processor::T4] {
        // By default the Niagara group is not offered there.
        let mut hv = Hypervisor::new(Config::new(processor, 1)).unwrap();
        assert_eq!(conf(&mut hv, 0, RAM), err(Status::EBADTRAP), "{processor}");
        assert_eq!(info(&mut hv, 0), err(Status::EBADTRAP), "{processor}");
        // Even a machine that offers the group refuses them (TN7).
        let mut config = Config::new(processor, 1);
        config.offered.push(NIAGARA);
        config.negotiated.push(NIAGARA);
        let mut hv = Hypervisor::new(config).unwrap();
        let before = hv.clone();
        assert_eq!(conf(&mut hv, 0, RAM), err(Status::EBADTRAP), "{processor}");
        assert_eq!(info(&mut hv, 0), err(Status::EBADTRAP), "{processor}");
        assert_eq!(hv, before);
    }
}

#[test]
fn s2_1_an_error_means_no_statistics_are_collected() {
    // TN5: a failed conf is "equivalent to passing an raddr of zero".
    for bad in [RAM + 8, RAM_END] {
        let mut hv = niagara(1);
        conf(&mut hv, 0, RAM);
        run(&mut hv, vec![span(0, Privilege::USER, Signal::ITlbFillsSize0, 1, 3)]);
        let memory = hv.read_guest(RAM, BUFFER).unwrap();
        let status = conf(&mut hv, 0, bad).status;
        assert_ne!(status, Status::EOK);
        assert_eq!(info(&mut hv, 0), ok(0), "TN6: info then reports no buffer");
        run(&mut hv, vec![span(0, Privilege::USER, Signal::ITlbFillsSize0, 1, 3)]);
        assert_eq!(hv.read_guest(RAM, BUFFER).unwrap(), memory, "the old buffer is no longer written");
        assert_eq!(conf(&mut hv, 0, RAM), ok(0), "the next conf returns 0 as the previous buffer");
    }
}

#[test]
fn s2_2_info_is_idempotent() {
    let mut hv = niagara(2);
    assert_eq!(info(&mut hv, 0), ok(0));
    conf(&mut hv, 0, RAM + 0x40);
    let before = hv.clone();
    let first = info(&mut hv, 0);
    let second = info(&mut hv, 0);
    assert_eq!((first, second), (ok(RAM + 0x40), ok(RAM + 0x40)));
    assert_eq!(hv, before, "info changes nothing");
}

#[test]
fn s2_1_each_virtual_cpu_has_its_own_buffer() {
    let mut hv = niagara(3);
    assert_eq!(conf(&mut hv, 1, RAM + 0x200), ok(0));
    assert_eq!((info(&mut hv, 0), info(&mut hv, 1), info(&mut hv, 2)), (ok(0), ok(RAM + 0x200), ok(0)));
    assert_eq!(conf(&mut hv, 0, RAM), ok(0), "vCPU 0's first conf, whatever vCPU 1 did");
    run(
        &mut hv,
        vec![
            span(0, Privilege::USER, Signal::DTlbFillsSize0, 1, 2),
            span(1, Privilege::USER, Signal::DTlbFillsSize0, 1, 7),
            span(2, Privilege::USER, Signal::DTlbFillsSize0, 1, 11),
        ],
    );
    // 0x180: DMMU TSB hit ctxnon0, 8kb TTE.
    assert_eq!((field(&hv, RAM, 0x180), field(&hv, RAM + 0x200, 0x180)), (2, 7));
    assert_eq!(hv.mmustat_buffer(2), Some(0));
}

#[test]
fn an_unknown_function_number_is_ebadtrap_and_changes_nothing() {
    // Linux hypervisor.h: "If ... the fast trap function number is invalid, HV_EBADTRAP
    // will be returned"; sun4v/hypervisor hcall.s ends its dispatch with EBADTRAP.
    let mut hv = niagara(1);
    conf(&mut hv, 0, RAM);
    let before = hv.clone();
    for function in [0x00, 0x101, 0x104, 0xFFFF, u64::MAX] {
        assert_eq!(hv.fast_trap(0, function, &[RAM + 0x40]), err(Status::EBADTRAP), "{function:#x}");
    }
    for function in [0x01, 0x02, 0x04, u64::MAX] {
        assert_eq!(hv.core_trap(0, function, &[]), err(Status::EBADTRAP), "core {function:#x}");
    }
    assert_eq!(hv, before);
}

#[test]
fn a_call_of_a_group_not_offered_or_not_negotiated_is_ebadtrap() {
    // KT_GET_PERFREG's group 0x209 is offered on KT but not negotiated at boot (TK1).
    let mut hv = Hypervisor::new(Config::new(Processor::Kt, 1)).unwrap();
    assert_eq!(hv.fast_trap(0, KT_GET_PERFREG, &[0]), err(Status::EBADTRAP));
    // Offered, not negotiated: EBADTRAP until api_set_version enables the group (TN8).
    let mut config = Config::new(Processor::Niagara1, 1);
    config.negotiated.clear();
    let mut hv = Hypervisor::new(config).unwrap();
    let before = hv.clone();
    assert_eq!(conf(&mut hv, 0, RAM), err(Status::EBADTRAP));
    assert_eq!(hv, before);
    assert_eq!(hv.core_trap(0, SET_VERSION, &[NIAGARA, 1, 0]), ok(0));
    assert_eq!(conf(&mut hv, 0, RAM), ok(0));
    // Major 0 disables the group again; the configured buffer stays (TN9).
    assert_eq!(hv.core_trap(0, SET_VERSION, &[NIAGARA, 0, 0]), ok(0));
    assert_eq!(info(&mut hv, 0), err(Status::EBADTRAP));
    assert_eq!(hv.mmustat_buffer(0), Some(RAM));
}

#[test]
fn api_set_version_negotiates_offered_groups_only() {
    let mut config = Config::new(Processor::Niagara1, 1);
    config.negotiated.clear();
    let mut hv = Hypervisor::new(config).unwrap();
    let version = |hv: &mut Hypervisor, group| hv.core_trap(0, GET_VERSION, &[group]);
    assert_eq!(version(&mut hv, NIAGARA), HvResult { status: Status::EOK, ret1: Some(0), ret2: Some(0) });
    assert_eq!(hv.core_trap(0, SET_VERSION, &[KT_CPU, 1, 0]), err(Status::EINVAL), "not offered");
    assert_eq!(hv.core_trap(0, SET_VERSION, &[0x123, 1, 0]), err(Status::EINVAL), "unknown");
    assert_eq!(hv.core_trap(0, SET_VERSION, &[NIAGARA, 2, 0]), err(Status::ENOTSUPPORTED), "no major 2");
    assert_eq!(hv.core_trap(0, SET_VERSION, &[CORE, 1, 6]), ok(1), "minor lowered to the newest, 1.1");
    assert_eq!(version(&mut hv, CORE), HvResult { status: Status::EOK, ret1: Some(1), ret2: Some(1) });
    assert_eq!(version(&mut hv, KT_CPU), err(Status::EINVAL));
    assert_eq!(hv.version(CORE), Some((1, 1)));
    assert_eq!(hv.version(KT_CPU), None);
}

#[test]
fn a_virtual_cpu_that_does_not_exist_is_enocpu_and_changes_nothing() {
    let mut hv = niagara(2);
    let before = hv.clone();
    assert_eq!(conf(&mut hv, 2, RAM), err(Status::ENOCPU));
    assert_eq!(info(&mut hv, usize::MAX), err(Status::ENOCPU));
    assert_eq!(hv.core_trap(5, SET_VERSION, &[NIAGARA, 0, 0]), err(Status::ENOCPU));
    assert_eq!(hv.mmustat_buffer(2), None);
    assert_eq!(hv, before);
}

#[test]
fn too_few_or_more_than_five_arguments_is_einval_and_changes_nothing() {
    // TN15: arguments travel in %o0-%o4.
    let mut hv = niagara(1);
    conf(&mut hv, 0, RAM);
    let before = hv.clone();
    assert_eq!(hv.fast_trap(0, CONF, &[]), err(Status::EINVAL));
    assert_eq!(hv.fast_trap(0, INFO, &[0; 6]), err(Status::EINVAL));
    assert_eq!(hv.core_trap(0, SET_VERSION, &[NIAGARA, 0]), err(Status::EINVAL));
    assert_eq!(hv, before);
    assert_eq!(hv.fast_trap(0, INFO, &[1, 2, 3, 4, 5]), ok(RAM), "unused argument registers are ignored");
}

#[test]
fn tlb_misses_count_in_the_slot_of_their_mmu_and_context() {
    // TN10-TN13: every miss a TSB hit of an 8K TTE; privileged code in context 0, user
    // code in a non-zero context; hyperprivileged code not at all.
    let mut hv = niagara(1);
    conf(&mut hv, 0, RAM);
    run(
        &mut hv,
        vec![
            span(0, Privilege::KERNEL, Signal::ITlbFillsSize0, 1, 3),
            span(0, Privilege::USER, Signal::ITlbFillsSize0, 2, 5),
            span(0, Privilege::KERNEL, Signal::DTlbFillsSize0, 1, 7),
            span(0, Privilege::USER, Signal::DTlbFillsSize0, 3, 11),
            span(0, Privilege::Hyper, Signal::DTlbFillsSize0, 1, 13),
            span(0, Privilege::USER, Signal::MainTlbMisses, 1, 17),
        ],
    );
    // §2.3 offsets of the 8kb TTE hits; ticks follow at +8.
    let expected = [(0x000, 3), (0x080, 10), (0x100, 7), (0x180, 33)];
    for (offset, hits) in expected {
        assert_eq!(field(&hv, RAM, offset), hits, "hits at {offset:#x}");
        assert_eq!(field(&hv, RAM, offset + 8), hits * TICKS_PER_TSB_HIT, "ticks at {:#x}", offset + 8);
    }
    let counted: Vec<u64> = expected.iter().flat_map(|&(o, _)| [o, o + 8]).collect();
    for offset in (0..BUFFER as u64).step_by(8).filter(|o| !counted.contains(o)) {
        assert_eq!(field(&hv, RAM, offset), 0, "offset {offset:#x}");
    }
}

#[test]
fn the_buffer_fields_are_big_endian_and_accumulate_on_what_the_guest_left_there() {
    let mut hv = niagara(1);
    hv.write_guest(RAM + 0x100, &[0, 0, 0, 0, 0, 0, 1, 0]).unwrap();
    conf(&mut hv, 0, RAM);
    run(&mut hv, vec![span(0, Privilege::KERNEL, Signal::DTlbFillsSize0, 1, 2)]);
    assert_eq!(hv.read_guest(RAM + 0x100, 8).unwrap(), [0, 0, 0, 0, 0, 0, 1, 2]);
    // TN14: the fields wrap at 2^64 and never interrupt.
    hv.write_guest(RAM + 0x100, &u64::MAX.to_be_bytes()).unwrap();
    run(&mut hv, vec![span(0, Privilege::KERNEL, Signal::DTlbFillsSize0, 1, 2)]);
    assert_eq!(field(&hv, RAM, 0x100), 1);
}

#[test]
fn threads_beyond_the_virtual_cpus_count_nowhere() {
    let mut hv = niagara(1);
    conf(&mut hv, 0, RAM);
    run(&mut hv, vec![span(1, Privilege::USER, Signal::DTlbFillsSize0, 1, 9)]);
    assert_eq!(hv.read_guest(RAM, BUFFER).unwrap(), vec![0; BUFFER]);
    assert_eq!(hv.counters(), 32, "hits and ticks of the 16 slots");
}

#[test]
fn statistics_survive_whole_iteration_skips() {
    let mut hv = niagara(2);
    conf(&mut hv, 1, RAM);
    let body = vec![span(1, Privilege::USER, Signal::ITlbFillsSize0, 1, 3), span(1, Privilege::KERNEL, Signal::DTlbFillsSize0, 2, 4)];
    let mut cursor = Cursor::new(Box::new(std::iter::once(Block { body, repeat: 1_000_000 })));
    assert_eq!(engine::run(&mut hv, &mut cursor, u64::MAX), (7_000_000, Exit::EndOfStream));
    assert_eq!((field(&hv, RAM, 0x80), field(&hv, RAM, 0x100)), (3_000_000, 8_000_000));
}

#[test]
fn the_decoder_reads_back_a_buffer_the_model_wrote() {
    let mut hv = niagara(1);
    conf(&mut hv, 0, RAM);
    run(&mut hv, vec![span(0, Privilege::USER, Signal::ITlbFillsSize0, 1, 4), span(0, Privilege::KERNEL, Signal::DTlbFillsSize0, 1, 6)]);
    let dump = decode_mmustat(&hv.read_guest(RAM, BUFFER).unwrap()).unwrap();
    assert!(dump.warnings.is_empty());
    let [buffer] = &dump.buffers[..] else { panic!("one buffer") };
    assert_eq!((buffer.index, buffer.offset, buffer.slots.len()), (0, 0, 16));
    let user_i = buffer.slot(Mmu::Immu, Context::CtxNon0, PageSize::Size8K).unwrap();
    assert_eq!((user_i.hits, user_i.ticks), (4, 4 * TICKS_PER_TSB_HIT));
    assert_eq!(user_i.average_ticks_per_hit, Some(TICKS_PER_TSB_HIT as f64));
    let kernel_d = buffer.slot(Mmu::Dmmu, Context::Ctx0, PageSize::Size8K).unwrap();
    assert_eq!((kernel_d.hits, kernel_d.ticks), (6, 6 * TICKS_PER_TSB_HIT));
    let idle = buffer.slot(Mmu::Dmmu, Context::CtxNon0, PageSize::Size256M).unwrap();
    assert_eq!((idle.hits, idle.ticks, idle.average_ticks_per_hit), (0, 0, None));
}

#[test]
fn the_decoder_reads_concatenated_buffers_at_the_s2_3_offsets() {
    let mut bytes = vec![0; 2 * BUFFER];
    // Second buffer: 0x1D0 DMMU ctxnon0 256mb hits = 4, 0x1D8 ticks = 10.
    bytes[BUFFER + 0x1D0..BUFFER + 0x1D8].copy_from_slice(&4u64.to_be_bytes());
    bytes[BUFFER + 0x1D8..BUFFER + 0x1E0].copy_from_slice(&10u64.to_be_bytes());
    let dump = decode_mmustat(&bytes).unwrap();
    assert_eq!(dump.buffers.len(), 2);
    assert_eq!(dump.buffers[1].offset, BUFFER);
    let slot = dump.buffers[1].slot(Mmu::Dmmu, Context::CtxNon0, PageSize::Size256M).unwrap();
    assert_eq!((slot.hits, slot.ticks, slot.average_ticks_per_hit), (4, 10, Some(2.5)));
    assert!(dump.buffers[0].slots.iter().all(|s| s.hits == 0 && s.ticks == 0));
}

#[test]
fn the_decoder_refuses_empty_input_and_partial_buffers() {
    assert_eq!(decode_mmustat(&[]), Err(DecodeError::Empty));
    assert!(DecodeError::Empty.to_string().contains("0x200"));
    let error = decode_mmustat(&[0; 700]).unwrap_err();
    assert_eq!(error, DecodeError::Size { size: 700 });
    let message = error.to_string();
    assert!(message.contains("700 bytes") && message.contains("multiples of 512") && message.contains("188 byte(s) over"), "{message}");
    assert!(decode_mmustat(&[0; 0x1FF]).is_err());
}

#[test]
fn the_decoder_warns_of_non_zero_reserved_fields_by_offset() {
    let mut bytes = vec![0; 2 * BUFFER];
    bytes[0x2F] = 1; // last byte of reserved 0x20 (0x10 bytes)
    bytes[BUFFER + 0x1E0] = 0xFF; // reserved 0x1E0 (0x20 bytes) of the second buffer
    let dump = decode_mmustat(&bytes).unwrap();
    assert_eq!(
        dump.warnings,
        [
            ReservedWarning { buffer: 0, offset: 0x20, size: 0x10, input_offset: 0x20 },
            ReservedWarning { buffer: 1, offset: 0x1E0, size: 0x20, input_offset: BUFFER + 0x1E0 }
        ]
    );
    assert!(dump.warnings[1].to_string().contains("offset 0x1e0"), "{}", dump.warnings[1]);
    assert_eq!(dump.buffers.len(), 2, "warnings, not errors");
}

#[test]
fn guest_memory_outside_the_mapped_ranges_is_refused() {
    let mut hv = niagara(1);
    assert_eq!(hv.write_guest(RAM_END - 4, &[1; 8]), Err(MemoryError { ra: RAM_END - 4, len: 8 }));
    assert_eq!(hv.read_guest(RAM_END - 4, 4).unwrap(), [0; 4], "nothing was written");
    assert!(hv.read_guest(0, 1).is_err());
    assert!(hv.read_guest(u64::MAX, 2).is_err());
}

#[test]
fn machines_that_cannot_exist_are_refused() {
    let build = |f: &dyn Fn(&mut Config)| {
        let mut c = Config::new(Processor::Niagara1, 1);
        f(&mut c);
        Hypervisor::new(c).err()
    };
    assert_eq!(build(&|c| c.vcpus = 0), Some(ConfigError::Vcpus(0)));
    assert_eq!(build(&|c| c.vcpus = MAX_VCPUS + 1), Some(ConfigError::Vcpus(MAX_VCPUS + 1)));
    let empty = MemRange { base: 0x1000, size: 0 };
    assert_eq!(build(&|c| c.memory = vec![empty]), Some(ConfigError::EmptyRange(empty)));
    let wraps = MemRange { base: u64::MAX, size: 2 };
    assert_eq!(build(&|c| c.memory = vec![wraps]), Some(ConfigError::RangeOverflow(wraps)));
    let (a, b) = (MemRange { base: 0x1000, size: 0x1000 }, MemRange { base: 0x1FFF, size: 1 });
    assert_eq!(build(&|c| c.memory = vec![a, b]), Some(ConfigError::Overlap(a, b)));
    assert_eq!(build(&|c| c.offered.push(0x7)), Some(ConfigError::UnknownGroup(0x7)));
    assert_eq!(build(&|c| c.offered.push(KT_CPU)), Some(ConfigError::NotModelled { group: KT_CPU, name: "kt_cpu" }));
    assert_eq!(build(&|c| c.offered.push(CORE)), Some(ConfigError::Duplicate(CORE)));
    assert_eq!(build(&|c| c.offered.retain(|&g| g != NIAGARA)), Some(ConfigError::NotOffered(NIAGARA)));
    assert_eq!(build(&|c| c.memory.clear()), None, "a guest with no memory can still make calls");
}

/// One step of a random guest.
#[derive(Debug, Clone)]
enum Op {
    Fast { vcpu: usize, function: u64, args: Vec<u64> },
    Core { vcpu: usize, function: u64, args: Vec<u64> },
    Store { ra: u64, value: u8 },
    Run { thread: u8, privilege: Privilege, itlb: u8, dtlb: u8, cycles: u64 },
}

/// Addresses around the edges of `machine()`'s memory.
fn address() -> impl Strategy<Value = u64> {
    prop_oneof![
        Just(0u64),
        Just(0x1000u64),
        Just(0x1F00u64),
        Just(0x2000u64),
        Just(0x3000u64),
        Just(0xFFFF_FFFF_FFFF_FE00u64),
        (0u64..0x80).prop_map(|k| 0x1000 + k * 0x40),
        (0u64..0x5000),
        any::<u64>(),
    ]
}

fn args() -> impl Strategy<Value = Vec<u64>> {
    prop::collection::vec(prop_oneof![address(), Just(NIAGARA), Just(CORE), Just(KT_CPU), 0u64..3], 0..7)
}

fn op() -> impl Strategy<Value = Op> {
    let vcpu = 0usize..4;
    let fast = prop_oneof![Just(CONF), Just(INFO), Just(KT_GET_PERFREG), Just(0x123u64), any::<u64>()];
    let core = prop_oneof![Just(SET_VERSION), Just(GET_VERSION), 0u64..8];
    let privilege = prop_oneof![Just(Privilege::USER), Just(Privilege::KERNEL), Just(Privilege::Hyper)];
    prop_oneof![
        4 => (vcpu.clone(), fast, args()).prop_map(|(vcpu, function, args)| Op::Fast { vcpu, function, args }),
        2 => (vcpu, core, args()).prop_map(|(vcpu, function, args)| Op::Core { vcpu, function, args }),
        1 => (0x1000u64..0x2100, any::<u8>()).prop_map(|(ra, value)| Op::Store { ra, value }),
        2 => (0u8..4, privilege, 0u8..3, 0u8..3, 1u64..50)
            .prop_map(|(thread, privilege, itlb, dtlb, cycles)| Op::Run { thread, privilege, itlb, dtlb, cycles }),
    ]
}

/// Two ranges with a hole, one of them too small for a buffer.
fn machine(processor: Processor, vcpus: usize, negotiated: bool) -> Hypervisor {
    let mut config = Config::new(processor, vcpus);
    config.memory = vec![MemRange { base: 0x1000, size: 0x1000 }, MemRange { base: 0x2000, size: 0x100 }];
    if !negotiated {
        config.negotiated.clear();
    }
    Hypervisor::new(config).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// No call panics, and a call that fails leaves every vCPU's configuration, the
    /// negotiated versions and all guest memory as they were, except that a conf
    /// failing with ENORADDR or EBADALIGN disables the caller's collection (§2.1, TN5).
    #[test]
    fn failed_calls_change_nothing_but_a_failed_conf_disables_collection(
        processor in prop_oneof![Just(Processor::Niagara1), Just(Processor::Kt), Just(Processor::T4)],
        vcpus in 1usize..4,
        negotiated in any::<bool>(),
        ops in prop::collection::vec(op(), 1..40),
    ) {
        let mut hv = machine(processor, vcpus, negotiated);
        for op in ops {
            let before = hv.clone();
            let (result, conf_by) = match &op {
                Op::Fast { vcpu, function, args } => (hv.fast_trap(*vcpu, *function, args), (*function == CONF).then_some(*vcpu)),
                Op::Core { vcpu, function, args } => (hv.core_trap(*vcpu, *function, args), None),
                Op::Store { ra, value } => {
                    let stored = hv.write_guest(*ra, &[*value]);
                    if stored.is_err() {
                        prop_assert_eq!(&hv, &before);
                    }
                    continue;
                }
                Op::Run { thread, privilege, itlb, dtlb, cycles } => {
                    let span = Span { thread: *thread, privilege: *privilege, ..Span::new(*cycles, 0) }
                        .with(Signal::ITlbFillsSize0, *itlb)
                        .with(Signal::DTlbFillsSize0, *dtlb);
                    run(&mut hv, vec![span]);
                    continue;
                }
            };
            if result.is_ok() {
                continue;
            }
            prop_assert_eq!(result.ret1, None);
            let mut expected = before;
            if let (Some(vcpu), Status::ENORADDR | Status::EBADALIGN) = (conf_by, result.status) {
                // "equivalent to passing an raddr of zero"
                prop_assert!(expected.fast_trap(vcpu, CONF, &[0]).is_ok());
            }
            prop_assert_eq!(&hv, &expected, "{:?} -> {:?}", op, result);
        }
    }
}
