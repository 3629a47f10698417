//! The KT performance register calls through the sun4v hypervisor model: one rule of
//! "KT performance registers" (§2-§3.2) or of docs/kt.md's TK rows per test. Numbers are
//! written out from the text here.

mod common;

use pmukit_arch::sparc::kt::DramReg;
use pmukit_sim::models::kt::{KtConfig, KtConfigError};
use pmukit_sim::models::sun4v::{Config, ConfigError, HvResult, Hypervisor, Processor, Status};
use pmukit_sim::stream::{MemRef, Signal, Span};
use proptest::prelude::*;

/// §3.2.
const GET: u64 = 0x122;
const SET: u64 = 0x123;
const KT_CPU: u64 = 0x209;
/// CORE_TRAP api_set_version.
const SET_VERSION: u64 = 0x00;
/// §3.1.
const SPARC_PCR: u64 = 0;
const L2_CR: u64 = 1;
const fn dram(node: u64, mcu: u64, reg: u64) -> u64 {
    2 + node * 6 + mcu * 3 + reg
}
/// §2.1: HT (TK5) and sample mode.
const HT: u64 = 1 << 3;
const SAMPLE: u64 = 1 << 32;
/// §2.3: PERF_CONFIG in a bank's L2 control register.
const BANK_PERF_CONFIG: u64 = 3 << 36;

/// A KT machine with the KT group negotiated, as a guest's perf driver leaves it.
fn kt_machine(vcpus: usize, kt: KtConfig) -> Hypervisor {
    let mut config = Config::new(Processor::Kt, vcpus);
    config.kt = kt;
    let mut hv = Hypervisor::new(config).unwrap();
    assert_eq!(hv.core_trap(0, SET_VERSION, &[KT_CPU, 1, 0]), HvResult { status: Status::EOK, ret1: Some(0), ret2: None });
    hv
}

fn nodes(n: usize) -> KtConfig {
    KtConfig { nodes: n, ..KtConfig::default() }
}

fn get(hv: &mut Hypervisor, vcpu: usize, reg: u64) -> HvResult {
    hv.fast_trap(vcpu, GET, &[reg])
}

fn set(hv: &mut Hypervisor, vcpu: usize, reg: u64, value: u64) -> HvResult {
    hv.fast_trap(vcpu, SET, &[reg, value])
}

fn value(v: u64) -> HvResult {
    HvResult { status: Status::EOK, ret1: Some(v), ret2: None }
}

const DONE: HvResult = HvResult { status: Status::EOK, ret1: None, ret2: None };

fn err(status: Status) -> HvResult {
    HvResult { status, ret1: None, ret2: None }
}

/// Assert that `call` fails with `status` and changes nothing.
fn refused(hv: &mut Hypervisor, status: Status, call: impl FnOnce(&mut Hypervisor) -> HvResult) {
    let before = hv.clone();
    assert_eq!(call(hv), err(status));
    assert_eq!(*hv, before);
}

#[test]
fn s3_2_the_sparc_pcr_round_trips_whole() {
    let mut hv = kt_machine(1, KtConfig::default());
    assert_eq!(get(&mut hv, 0, SPARC_PCR), value(0));
    // §3.1: "operates on the entire register": every bit, HT and sample mode included.
    for v in [SAMPLE | HT | 0x7, u64::MAX, 0x1234_5678_9ABC_DEF0] {
        assert_eq!(set(&mut hv, 0, SPARC_PCR, v), DONE);
        assert_eq!(get(&mut hv, 0, SPARC_PCR), value(v));
    }
}

#[test]
fn s3_2_the_virtual_l2_control_register_round_trips_perf_config_only() {
    let mut hv = kt_machine(1, KtConfig::default());
    for config in 0..4 {
        assert_eq!(set(&mut hv, 0, L2_CR, config), DONE);
        assert_eq!(get(&mut hv, 0, L2_CR), value(config));
    }
    // Bits 63:2 are not exposed: ignored when written, read as 0 (TK7).
    assert_eq!(set(&mut hv, 0, L2_CR, 0xFFFF_FFFF_FFFF_FFF6), DONE);
    assert_eq!(get(&mut hv, 0, L2_CR), value(2));
}

#[test]
fn s3_2_every_dram_register_of_every_node_round_trips() {
    let mut hv = kt_machine(1, nodes(4));
    // Values inside each register's fields, sticky bits clear (TK10).
    let sample = [0xFEDC, 0x7654_3210_0765_4321, 0x1111_1111_2222_2222];
    for node in 0..4 {
        for mcu in 0..2 {
            for (reg, v) in sample.iter().enumerate() {
                let v = v ^ (node << 8 | mcu << 4);
                assert_eq!(set(&mut hv, 0, dram(node, mcu, reg as u64), v), DONE);
                assert_eq!(get(&mut hv, 0, dram(node, mcu, reg as u64)), value(v), "node {node} mcu {mcu} reg {reg}");
                assert_eq!(hv.kt().unwrap().dram(node as usize, mcu as usize, DramReg::ALL[reg]), Some(v));
            }
        }
    }
}

#[test]
fn tk10_dram_reserved_bits_are_ignored_and_sticky_bits_never_set() {
    let mut hv = kt_machine(1, KtConfig::default());
    assert_eq!(set(&mut hv, 0, dram(0, 0, 0), u64::MAX), DONE);
    assert_eq!(get(&mut hv, 0, dram(0, 0, 0)), value(0xFFFF), "DRAM_PERF_CTL 63:16 reserved");
    assert_eq!(set(&mut hv, 0, dram(0, 0, 1), u64::MAX), DONE);
    assert_eq!(get(&mut hv, 0, dram(0, 0, 1)), value(0x7FFF_FFFF_7FFF_FFFF), "sticky bits 63 and 31 cannot be set");
}

#[test]
fn s3_1_perfreg_0_is_the_calling_strands_pcr() {
    let mut hv = kt_machine(3, KtConfig::default());
    assert_eq!(set(&mut hv, 1, SPARC_PCR, 0x11), DONE);
    assert_eq!(set(&mut hv, 2, SPARC_PCR, 0x22), DONE);
    assert_eq!(get(&mut hv, 0, SPARC_PCR), value(0));
    assert_eq!(get(&mut hv, 1, SPARC_PCR), value(0x11));
    assert_eq!(get(&mut hv, 2, SPARC_PCR), value(0x22));
    assert_eq!(hv.kt().unwrap().pcr(1), Some(0x11));
}

#[test]
fn s2_3_perf_config_goes_to_bits_37_36_of_every_bank_default_all_misses() {
    let mut hv = kt_machine(2, nodes(3));
    let kt = hv.kt().unwrap();
    // §3.0: "In default mode all L2 misses are counted" (PERF_CONFIG 0, TK6).
    assert!((0..3).all(|node| (0..16).all(|bank| kt.l2_bank(node, bank) == Some(0))));
    assert_eq!(get(&mut hv, 0, L2_CR), value(0));
    // Written from any strand, every bank of every node changes (TK8).
    assert_eq!(set(&mut hv, 1, L2_CR, 2), DONE);
    let kt = hv.kt().unwrap();
    for node in 0..3 {
        for bank in 0..16 {
            assert_eq!(kt.l2_bank(node, bank), Some(2 << 36), "node {node} bank {bank}");
        }
    }
    assert_eq!(kt.l2_bank(0, 16), None, "16 banks per node (TK9)");
    assert_eq!(kt.l2_bank(3, 0), None);
    assert_eq!(set(&mut hv, 0, L2_CR, u64::MAX), DONE);
    assert!(hv.kt().unwrap().l2_bank(2, 15).is_some_and(|b| b == BANK_PERF_CONFIG));
}

#[test]
fn s3_2_a_perfreg_beyond_25_is_einval_and_changes_nothing() {
    for n in 1..=4 {
        let mut hv = kt_machine(1, nodes(n));
        for reg in [26, 27, 0x100, u64::MAX] {
            refused(&mut hv, Status::EINVAL, |hv| get(hv, 0, reg));
            refused(&mut hv, Status::EINVAL, |hv| set(hv, 0, reg, 1));
        }
    }
}

#[test]
fn s3_2_a_perfreg_of_a_node_the_machine_lacks_is_enotsupported() {
    for n in 1..4u64 {
        let mut hv = kt_machine(1, nodes(n as usize));
        for reg in 2 + 6 * n..26 {
            refused(&mut hv, Status::ENOTSUPPORTED, |hv| get(hv, 0, reg));
            refused(&mut hv, Status::ENOTSUPPORTED, |hv| set(hv, 0, reg, 1));
        }
        assert!(get(&mut hv, 0, 1 + 6 * n).is_ok(), "the last register of node {}", n - 1);
    }
}

#[test]
fn s3_2_a_register_the_guest_may_not_access_is_enoaccess() {
    let config = KtConfig { nodes: 2, denied_get: vec![dram(1, 0, 1)], denied_set: vec![L2_CR, dram(0, 1, 0)], ..KtConfig::default() };
    let mut hv = kt_machine(1, config);
    refused(&mut hv, Status::ENOACCESS, |hv| get(hv, 0, dram(1, 0, 1)));
    assert_eq!(set(&mut hv, 0, dram(1, 0, 1), 5), DONE, "reading is denied, writing is not");
    refused(&mut hv, Status::ENOACCESS, |hv| set(hv, 0, L2_CR, 3));
    refused(&mut hv, Status::ENOACCESS, |hv| set(hv, 0, dram(0, 1, 0), 3));
    assert_eq!(get(&mut hv, 0, L2_CR), value(0));
    assert_eq!(get(&mut hv, 0, dram(0, 1, 0)), value(0));
}

#[test]
fn s3_0_setting_the_ht_bit_may_be_denied_with_enoaccess() {
    let mut hv = kt_machine(1, KtConfig { ht_allowed: false, ..KtConfig::default() });
    refused(&mut hv, Status::ENOACCESS, |hv| set(hv, 0, SPARC_PCR, HT));
    refused(&mut hv, Status::ENOACCESS, |hv| set(hv, 0, SPARC_PCR, u64::MAX));
    // The rest of the PCR stays writable: a driver handles the failure "gracefully" by
    // retrying without HT.
    assert_eq!(set(&mut hv, 0, SPARC_PCR, !HT), DONE);
    assert_eq!(get(&mut hv, 0, SPARC_PCR), value(!HT));
    // Allowed by default.
    let mut hv = kt_machine(1, KtConfig::default());
    assert_eq!(set(&mut hv, 0, SPARC_PCR, HT), DONE);
}

#[test]
fn s3_2_the_l2_register_during_another_strands_propagation_is_ewouldblock() {
    let mut hv = kt_machine(2, KtConfig::default());
    assert_eq!(set(&mut hv, 0, L2_CR, 1), DONE);
    hv.kt_mut().unwrap().set_l2_busy(true);
    refused(&mut hv, Status::EWOULDBLOCK, |hv| get(hv, 1, L2_CR));
    refused(&mut hv, Status::EWOULDBLOCK, |hv| set(hv, 1, L2_CR, 3));
    // Only PerfReg# 1 waits for the propagation (TK12).
    assert_eq!(set(&mut hv, 1, dram(0, 0, 0), 1), DONE);
    assert_eq!(get(&mut hv, 1, SPARC_PCR), value(0));
    hv.kt_mut().unwrap().set_l2_busy(false);
    assert_eq!(get(&mut hv, 1, L2_CR), value(1));
    // Also as the guest finds the machine at start.
    let mut hv = kt_machine(1, KtConfig { l2_busy: true, ..KtConfig::default() });
    refused(&mut hv, Status::EWOULDBLOCK, |hv| get(hv, 0, L2_CR));
}

#[test]
fn tk2_checks_run_in_order_number_access_busy() {
    let config = KtConfig { nodes: 1, denied_set: vec![L2_CR], l2_busy: true, ..KtConfig::default() };
    let mut hv = kt_machine(1, config);
    refused(&mut hv, Status::ENOTSUPPORTED, |hv| set(hv, 0, 8, 0));
    refused(&mut hv, Status::ENOACCESS, |hv| set(hv, 0, L2_CR, 0));
    refused(&mut hv, Status::EWOULDBLOCK, |hv| get(hv, 0, L2_CR));
}

#[test]
fn the_kt_calls_are_ebadtrap_on_every_other_processor() {
    for processor in [Processor::Niagara1, Processor::T4] {
        let mut hv = Hypervisor::new(Config::new(processor, 1)).unwrap();
        assert!(hv.kt().is_none());
        // The group is not offered there, so it cannot be negotiated either.
        refused(&mut hv, Status::EINVAL, |hv| hv.core_trap(0, SET_VERSION, &[KT_CPU, 1, 0]));
        refused(&mut hv, Status::EBADTRAP, |hv| get(hv, 0, SPARC_PCR));
        refused(&mut hv, Status::EBADTRAP, |hv| set(hv, 0, SPARC_PCR, 0));
        let mut config = Config::new(processor, 1);
        config.offered.push(KT_CPU);
        assert_eq!(Hypervisor::new(config).err(), Some(ConfigError::NotModelled { group: KT_CPU, name: "kt_cpu" }));
    }
}

#[test]
fn tk1_kt_offers_the_group_and_the_guest_negotiates_it() {
    let mut hv = Hypervisor::new(Config::new(Processor::Kt, 1)).unwrap();
    assert_eq!(hv.version(KT_CPU), Some((0, 0)), "offered, not negotiated at boot");
    refused(&mut hv, Status::EBADTRAP, |hv| get(hv, 0, SPARC_PCR));
    assert!(hv.core_trap(0, SET_VERSION, &[KT_CPU, 1, 0]).is_ok());
    assert_eq!(get(&mut hv, 0, SPARC_PCR), value(0));
    // Too few arguments: EINVAL before the call (sun4v TN15).
    refused(&mut hv, Status::EINVAL, |hv| hv.fast_trap(0, SET, &[SPARC_PCR]));
}

#[test]
fn a_kt_machine_that_cannot_exist_is_refused() {
    let build = |kt: KtConfig| {
        let mut config = Config::new(Processor::Kt, 1);
        config.kt = kt;
        Hypervisor::new(config).err()
    };
    assert_eq!(build(nodes(0)), Some(ConfigError::Kt(KtConfigError::Nodes(0))));
    assert_eq!(build(nodes(5)), Some(ConfigError::Kt(KtConfigError::Nodes(5))));
    let denied = KtConfig { denied_get: vec![8], ..KtConfig::default() };
    assert_eq!(build(denied), Some(ConfigError::Kt(KtConfigError::NoSuchPerfReg { number: 8, nodes: 1 })));
    // Other processors have no KT registers: their KT configuration is not looked at.
    let mut config = Config::new(Processor::T4, 1);
    config.kt = nodes(0);
    assert!(Hypervisor::new(config).is_ok());
}

/// Runs `span` to its end; returns how many times a DRAM counter's wrap stopped the
/// engine on the way (TD15).
fn run(hv: &mut Hypervisor, span: Span) -> usize {
    common::run_to_end(hv, vec![span])
}

fn memory_span(addr: u64, reads: u8, writes: u8, cycles: u64) -> Span {
    Span { mem: Some(MemRef { addr, stride: 0, size: 8, write: false }), ..Span::new(cycles, 0x1_0000) }
        .with(Signal::MemoryReads, reads)
        .with(Signal::MemoryWrites, writes)
}

#[test]
fn tk11_dram_counters_count_the_streams_memory_traffic() {
    let mut hv = kt_machine(1, nodes(2));
    // Counter 0 (sel0, 3:0) counts the MCU's reads, counter 1 (sel1, 7:4) its writes
    // (T4 select codes 1000₂ and 1010₂: all ports).
    assert_eq!(set(&mut hv, 0, dram(1, 0, 0), 0xA8), DONE);
    // Line 2 goes to node 1's MCU 0 on a two-node machine (TK13).
    run(&mut hv, memory_span(2 * 64, 2, 1, 100));
    // Counter 0 in PIC01 bits 62:32, counter 1 in bits 30:0.
    assert_eq!(get(&mut hv, 0, dram(1, 0, 1)), value(200 << 32 | 100));
    // Another MCU's traffic is not counted.
    run(&mut hv, memory_span(3 * 64, 2, 1, 100));
    assert_eq!(get(&mut hv, 0, dram(1, 0, 1)), value(200 << 32 | 100));
    assert_eq!(get(&mut hv, 0, dram(0, 0, 1)), value(0), "node 0 was never programmed");
}

#[test]
fn tk11_a_dram_counter_wraps_at_2_pow_31_and_sets_its_sticky_bit() {
    let mut hv = kt_machine(1, KtConfig::default());
    assert_eq!(set(&mut hv, 0, dram(0, 0, 0), 0x8), DONE);
    assert_eq!(set(&mut hv, 0, dram(0, 0, 1), 0x7FFF_FFFE << 32), DONE);
    assert_eq!(run(&mut hv, memory_span(0, 1, 0, 3)), 1, "the engine stops at the wrap, for the driver to read");
    assert_eq!(get(&mut hv, 0, dram(0, 0, 1)), value((1 << 63) | (1 << 32)));
}

/// One random KT call.
#[derive(Debug, Clone)]
enum Op {
    Get { vcpu: usize, reg: u64 },
    Set { vcpu: usize, reg: u64, value: u64 },
    Busy(bool),
    Run { addr: u64, reads: u8, writes: u8, cycles: u64 },
}

fn reg() -> impl Strategy<Value = u64> {
    prop_oneof![4 => 0u64..30, 1 => any::<u64>()]
}

fn value_strategy() -> impl Strategy<Value = u64> {
    prop_oneof![Just(0u64), Just(HT), Just(u64::MAX), 0u64..16, 0u64..0x1_0000, any::<u64>()]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0usize..3, reg()).prop_map(|(vcpu, reg)| Op::Get { vcpu, reg }),
        4 => (0usize..3, reg(), value_strategy()).prop_map(|(vcpu, reg, value)| Op::Set { vcpu, reg, value }),
        1 => any::<bool>().prop_map(Op::Busy),
        1 => (0u64..0x4000, 0u8..3, 0u8..3, 1u64..50).prop_map(|(addr, reads, writes, cycles)| Op::Run { addr, reads, writes, cycles }),
    ]
}

fn kt_config() -> impl Strategy<Value = KtConfig> {
    (1usize..=4, any::<bool>(), any::<bool>(), prop::collection::vec(0u64..8, 0..3), prop::collection::vec(0u64..8, 0..3))
        .prop_map(|(nodes, ht_allowed, l2_busy, denied_get, denied_set)| KtConfig { nodes, denied_get, denied_set, ht_allowed, l2_busy })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// No KT call sequence panics, and a call that fails leaves the whole model as it was.
    #[test]
    fn random_kt_calls_never_panic_and_errors_change_nothing(
        vcpus in 1usize..3,
        kt in kt_config(),
        ops in prop::collection::vec(op(), 1..40),
    ) {
        let mut hv = kt_machine(vcpus, kt);
        for op in ops {
            let before = hv.clone();
            let result = match op {
                Op::Get { vcpu, reg } => get(&mut hv, vcpu, reg),
                Op::Set { vcpu, reg, value } => set(&mut hv, vcpu, reg, value),
                Op::Busy(busy) => {
                    hv.kt_mut().unwrap().set_l2_busy(busy);
                    continue;
                }
                Op::Run { addr, reads, writes, cycles } => {
                    run(&mut hv, memory_span(addr, reads, writes, cycles));
                    continue;
                }
            };
            if result.is_ok() {
                continue;
            }
            prop_assert_eq!(result.ret1, None);
            prop_assert_eq!(&hv, &before, "{:?} -> {:?}", op, result);
        }
    }
}
