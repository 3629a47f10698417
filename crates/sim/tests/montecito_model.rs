//! The Montecito core model, driven only through its registers (`mov pmc`, `mov pmd`,
//! PSR, cr73, PAL_PERF_MON_INFO) and engine runs: one rule of chapter 3 (or one decision
//! of docs/montecito-model.md, MDn) per test.

use pmukit_arch::montecito::pal::{self, mask_has};
use pmukit_arch::montecito::registers::{PMC_GENERIC, PMV, PSR};
use pmukit_sim::engine::{self, Exit};
use pmukit_sim::models::montecito::{line_state, mapped_event, EventType, Montecito, MontecitoError, EVENTS};
use pmukit_sim::stream::{Block, Cursor, MemRef, Privilege, Signal, Span, IBUF_BRQ_FULL, IBUF_FULL};

const USER: Privilege = Privilege::USER;
const KERNEL: Privilege = Privilege::KERNEL;

// Event codes (Table 4-42).
const BACK_END_BUBBLE: u64 = 0x00;
const IA64_INST_RETIRED: u64 = 0x08;
const BRANCH_EVENT: u64 = 0x11;
const CPU_OP_CYCLES: u64 = 0x12;
const CPU_OP_CYCLES_HALTED: u64 = 0x18;
const ITLB_MISSES_FETCH: u64 = 0x47;
const BR_MISPRED_DETAIL: u64 = 0x5b;
const BUS_HITM: u64 = 0x84;
const BUS_MEMORY: u64 = 0x8a;
const BUS_MEM_READ: u64 = 0x8b;
const BUS_RD_DATA: u64 = 0x8c;
const BUS_RD_PRTL: u64 = 0x8d;
const BUS_WR_WB: u64 = 0x92;
const SI_CYCLES: u64 = 0x8e;
const SI_RQ_INSERTS: u64 = 0x9e;
const SI_WRITEQ_INSERTS: u64 = 0xa1;
const SI_CCQ_INSERTS: u64 = 0xa5;
const ER_BRQ_REQ_INSERTED: u64 = 0xba;
const L1DTLB_TRANSFER: u64 = 0xc0;
const L2DTLB_MISSES: u64 = 0xc1;
const DATA_REFERENCES_SET1: u64 = 0xc5;
const L1D_READ_MISSES: u64 = 0xc7;
const L2D_MISSES: u64 = 0xcb;
const LOADS_RETIRED: u64 = 0xcd;
const UC_STORES_RETIRED: u64 = 0xd0;
const STORES_RETIRED: u64 = 0xd1;
const L3_REFERENCES: u64 = 0xdb;
const L3_MISSES: u64 = 0xdc;
const L3_READS: u64 = 0xdd;
const L3_WRITES: u64 = 0xde;
const L2D_REFERENCES: u64 = 0xe6;

// Bus agent unit masks (bits 1:0) with "all transactions" (bits 3:2 = 11).
const ALL_EITHER: u64 = 0b1100;
const ALL_IO: u64 = 0b1101;
const ALL_SELF: u64 = 0b1110;

/// 2^47: the count wraps here (Table 3-7).
const WRAP: u64 = 1 << 47;

fn pmc(fields: &[(&str, u64)]) -> u64 {
    PMC_GENERIC.encode(fields).unwrap()
}

/// PMCn counting `es.umask` at every privilege level as a user monitor with ism '10,
/// plus `more` fields.
fn counting(es: u64, umask: u64, more: &[(&str, u64)]) -> u64 {
    let mut fields = vec![("es", es), ("umask", umask), ("plm", 0xF), ("ism", 0b10)];
    fields.extend_from_slice(more);
    pmc(&fields)
}

fn psr(fields: &[(&str, u64)]) -> u64 {
    PSR.encode(fields).unwrap()
}

/// A core after reset with PSR.up and PSR.pp set on both threads, at CPL 0.
fn core() -> Montecito {
    let mut m = Montecito::new();
    for t in 0..2 {
        m.set_psr(t, psr(&[("up", 1), ("pp", 1)])).unwrap();
    }
    m
}

/// `core()` with PMCn of `thread` set to `value`.
fn core_with(thread: usize, n: usize, value: u64) -> Montecito {
    let mut m = core();
    m.write_pmc(thread, n, value).unwrap();
    m
}

fn set_cpl(m: &mut Montecito, thread: usize, cpl: u64) {
    let old = m.psr(thread).unwrap();
    m.set_psr(thread, pmukit_arch::montecito::registers::PSR_CPL.set(old, cpl)).unwrap();
}

fn pmd(m: &Montecito, thread: usize, n: usize) -> u64 {
    m.read_pmd(thread, n).unwrap()
}

fn pmc0(m: &Montecito, thread: usize) -> u64 {
    m.read_pmc(thread, 0).unwrap()
}

/// `cycles` cycles of `thread` at `privilege`, with no signals yet.
fn span(thread: u8, privilege: Privilege, cycles: u64) -> Span {
    Span { thread, privilege, ..Span::new(cycles, 0x4_0000) }
}

/// A span whose data reference is at `addr` (a read unless `write`).
fn at(s: Span, addr: u64, write: bool) -> Span {
    Span { mem: Some(MemRef { addr, stride: 0, size: 8, write }), ..s }
}

/// Each span once, in order.
fn once(spans: Vec<Span>) -> Cursor {
    Cursor::new(Box::new(spans.into_iter().map(|s| Block { body: vec![s], repeat: 1 })))
}

/// `body` repeated for ever.
fn stream(body: Vec<Span>) -> Cursor {
    Cursor::new(Box::new(std::iter::repeat(Block { body, repeat: 1_000_000 })))
}

/// Run every span once; returns the cycles run and why the run stopped.
fn run(m: &mut Montecito, spans: Vec<Span>) -> (u64, Exit) {
    let total = spans.iter().map(|s| s.cycles).sum::<u64>();
    engine::run(m, &mut once(spans), total)
}

/// PMD4 of thread 0 after `spans`, counting `value` in PMC4.
fn count4(value: u64, spans: Vec<Span>) -> u64 {
    let mut m = core_with(0, 4, value);
    run(&mut m, spans);
    pmd(&m, 0, 4)
}

/// One cycle per privilege level 0..3, lasting 1, 10, 100 and 1000 cycles.
fn every_level() -> Vec<Span> {
    vec![span(0, KERNEL, 1), span(0, Privilege::Cpl1, 10), span(0, Privilege::Cpl2, 100), span(0, USER, 1000)]
}

// ------------------------------------------------------------------- registers

#[test]
fn s3_3_2_each_thread_has_its_own_pmu() {
    // §3.3.2: "The PMUs are not shared between hardware threads."
    let mut m = core();
    m.write_pmc(0, 4, counting(CPU_OP_CYCLES, 0, &[])).unwrap();
    m.write_pmd(1, 4, 77).unwrap();
    assert_eq!(m.read_pmc(1, 4).unwrap(), 0, "thread 1's PMC4 is untouched");
    assert_eq!(pmd(&m, 0, 4), 0, "thread 0's PMD4 is untouched");
    run(&mut m, vec![span(0, USER, 10), span(1, USER, 20)]);
    assert_eq!((pmd(&m, 0, 4), pmd(&m, 1, 4)), (10, 77));
}

#[test]
fn table_3_8_pmc0_ignored_bits_read_zero() {
    // Table 3-8: only PMC0[15:4,0] are populated; bits 3:1 and 63:16 read 0.
    let mut m = core();
    m.write_pmc(0, 0, u64::MAX).unwrap();
    assert_eq!(pmc0(&m, 0), 0xFFF1);
}

#[test]
fn table_3_8_software_may_set_and_clear_overflow_bits() {
    // Table 3-8 overflow: "Software may also set these bits."
    let mut m = core();
    m.write_pmc(0, 0, 0x8030).unwrap();
    assert_eq!(pmc0(&m, 0), 0x8030);
    m.write_pmc(0, 0, 0).unwrap();
    assert_eq!(pmc0(&m, 0), 0);
    assert_eq!(m.interrupt_pending(0), Ok(false), "a software-set bit raises no interrupt (MD35)");
}

#[test]
fn table_3_8_pmc1_to_3_read_zero_and_ignore_writes() {
    // Table 3-8: PMC1,2,3 ig 63:0, "Read zero, Writes ignored."
    let mut m = core();
    for n in 1..=3 {
        m.write_pmc(0, n, u64::MAX).unwrap();
        assert_eq!(m.read_pmc(0, n), Ok(0), "PMC{n}");
    }
}

#[test]
fn table_3_6_ignored_bits_read_zero() {
    // Table 3-6: bits 7, 23 and 63:31 read zero; writes ignored.
    let mut m = core();
    m.write_pmc(0, 7, u64::MAX).unwrap();
    assert_eq!(m.read_pmc(0, 7), Ok(0x7F7F_FF7F));
}

#[test]
fn table_3_7_reads_return_bit_46_in_bits_63_to_47() {
    // Table 3-7 sxt47 and ov: "Reads return the value of bit 46".
    let mut m = core();
    m.write_pmd(0, 5, 1 << 46).unwrap();
    assert_eq!(pmd(&m, 0, 5), 0xFFFF_C000_0000_0000);
    m.write_pmd(0, 5, (1 << 46) - 1).unwrap();
    assert_eq!(pmd(&m, 0, 5), (1 << 46) - 1);
}

#[test]
fn table_3_7_writes_to_bits_63_to_48_are_ignored() {
    // Table 3-7 sxt47: "Writes are ignored".
    let mut m = core();
    m.write_pmd(0, 6, 0xABCD_0000_0000_1234).unwrap();
    assert_eq!(pmd(&m, 0, 6), 0x1234);
}

#[test]
fn table_3_7_a_1_written_to_bit_47_is_dropped_and_noted() {
    // Table 3-7 ov: "always write 0 to this bit". MD6: the model drops it and notes it.
    let mut m = core();
    m.write_pmd(0, 6, (1 << 47) | 5).unwrap();
    assert_eq!(pmd(&m, 0, 6), 5);
    assert_eq!(m.unpredictable().len(), 1);
    assert!(m.unpredictable()[0].contains("PMD6"), "{:?}", m.unpredictable());
    // The dropped bit plays no part in the next wrap: 2^47 - 5 more events wrap it.
    m.write_pmc(0, 6, counting(CPU_OP_CYCLES, 0, &[])).unwrap();
    run(&mut m, vec![span(0, USER, 4)]);
    assert_eq!((pmd(&m, 0, 6), pmc0(&m, 0)), (9, 0));
}

#[test]
fn figure_3_10_psr_is_set_by_a_method_and_reserved_bits_are_refused() {
    // Figure 3-10: up 2, sp 20, pp 21, cpl 33:32, is 34 (MD33); reserved bits are 0.
    let mut m = Montecito::new();
    let value = psr(&[("up", 1), ("pp", 1), ("sp", 1), ("cpl", 3), ("is", 1)]);
    assert_eq!(value, 1 << 2 | 1 << 20 | 1 << 21 | 3 << 32 | 1 << 34);
    m.set_psr(1, value).unwrap();
    assert_eq!((m.psr(1), m.thread(1).unwrap().cpl()), (Ok(value), 3));
    let before = m.clone();
    let err = m.set_psr(1, 1 << 16).unwrap_err();
    assert!(matches!(err, MontecitoError::ReservedPsrBits { thread: 1, .. }), "{err}");
    assert!(err.to_string().contains("PSR"), "{err}");
    assert_eq!(m, before);
}

// ------------------------------------------------------------------- monitor enable

#[test]
fn s3_3_1_plm_selects_the_privilege_levels_counted() {
    // §3.3.1: PMC.plm[PSR.cpl]; the level is the span's (MD2).
    for (plm, expected) in [(0b0001, 1), (0b0010, 10), (0b0100, 100), (0b1000, 1000), (0b1001, 1001), (0, 0)] {
        let value = pmc(&[("es", CPU_OP_CYCLES), ("plm", plm), ("ism", 0b10)]);
        assert_eq!(count4(value, every_level()), expected, "plm {plm:04b}");
    }
}

#[test]
fn s3_3_1_hyperprivileged_spans_count_as_cpl_0() {
    // MD3: the stream's Privilege::Hyper is taken as CPL 0.
    let value = pmc(&[("es", CPU_OP_CYCLES), ("plm", 0b0001), ("ism", 0b10)]);
    assert_eq!(count4(value, vec![span(0, Privilege::Hyper, 7), span(0, USER, 5)]), 7);
}

#[test]
fn s3_3_1_ism_must_be_10() {
    // §3.3.1: (PMC.ism = '10) (MD34: the text's 'i10'); Table 3-5: "Undefined behavior
    // with other values". MD5: the monitor counts nothing and the programming is noted.
    for ism in [0b00, 0b01, 0b11] {
        let mut m = core_with(0, 4, pmc(&[("es", CPU_OP_CYCLES), ("plm", 0xF), ("ism", ism)]));
        run(&mut m, vec![span(0, USER, 10)]);
        assert_eq!(pmd(&m, 0, 4), 0, "ism {ism:02b}");
        assert!(m.unpredictable().iter().any(|s| s.contains("ism")), "{:?}", m.unpredictable());
    }
    assert_eq!(count4(counting(CPU_OP_CYCLES, 0, &[]), vec![span(0, USER, 10)]), 10);
}

/// PMD4 after 10 user cycles with PMC4.pm = `pm` and the given PSR.up / PSR.pp.
fn enabled_by(pm: u64, up: u64, pp: u64) -> u64 {
    let mut m = core_with(0, 4, counting(CPU_OP_CYCLES, 0, &[("pm", pm)]));
    m.set_psr(0, psr(&[("up", up), ("pp", pp)])).unwrap();
    run(&mut m, vec![span(0, USER, 10)]);
    pmd(&m, 0, 4)
}

#[test]
fn s3_3_1_user_monitors_are_enabled_by_psr_up() {
    // §3.3.1: (not PMC.pm and PSR.up).
    assert_eq!([enabled_by(0, 1, 0), enabled_by(0, 1, 1), enabled_by(0, 0, 1), enabled_by(0, 0, 0)], [10, 10, 0, 0]);
}

#[test]
fn s3_3_1_privileged_monitors_are_enabled_by_psr_pp() {
    // §3.3.1: (PMC.pm and PSR.pp).
    assert_eq!([enabled_by(1, 0, 1), enabled_by(1, 1, 1), enabled_by(1, 1, 0), enabled_by(1, 0, 0)], [10, 10, 0, 0]);
}

#[test]
fn s3_3_1_pmc0_fr_freezes_every_counter_of_its_thread_only() {
    // §3.3.1: (not PMC0.fr); §3.3.2: the other thread's PMU is its own.
    let mut m = core();
    for t in 0..2 {
        m.write_pmc(t, 4, counting(CPU_OP_CYCLES, 0, &[])).unwrap();
        m.write_pmc(t, 12, counting(CPU_OP_CYCLES, 0, &[])).unwrap();
    }
    m.write_pmc(0, 0, 1).unwrap();
    run(&mut m, vec![span(0, USER, 10), span(1, USER, 20)]);
    assert_eq!([pmd(&m, 0, 4), pmd(&m, 0, 12), pmd(&m, 1, 4), pmd(&m, 1, 12)], [0, 0, 20, 20]);
}

#[test]
fn s3_3_1_a_background_thread_is_at_its_psr_cpl() {
    // MD2, MD31: a thread's counter seeing the other thread's cycles (.all) uses its own
    // PSR and its own CPL, which in the background is PSR.cpl.
    let user_only = pmc(&[("es", CPU_OP_CYCLES), ("plm", 0b1000), ("ism", 0b10), ("all", 1)]);
    let mut m = core_with(1, 4, user_only);
    run(&mut m, vec![span(0, USER, 10)]);
    assert_eq!(pmd(&m, 1, 4), 0, "thread 1 rests at CPL 0");
    set_cpl(&mut m, 1, 3);
    run(&mut m, vec![span(0, KERNEL, 10)]);
    assert_eq!(pmd(&m, 1, 4), 10, "thread 1 rests at CPL 3, whatever thread 0 runs at");
}

// ------------------------------------------------------------------- threads and event types

#[test]
fn s3_3_2_duplicated_counters_count_their_floating_events_in_the_background() {
    // §3.3.2: "duplicated counters can increment when their thread is in the background".
    // MD12: thread 0's background reads are the `BackgroundMemoryReads` of thread 1's spans.
    let mut m = core_with(0, 4, counting(L3_MISSES, 0, &[]));
    run(&mut m, vec![span(1, USER, 20).with(Signal::BackgroundMemoryReads, 1)]);
    assert_eq!(pmd(&m, 0, 4), 20);
}

#[test]
fn s3_3_2_banked_counters_count_only_in_the_foreground() {
    // §3.3.2: "These PMDs cannot increment when their thread is in the background."
    // MD28: a Floating event in a banked counter counts its thread's foreground events.
    let mut m = core_with(0, 10, counting(L3_MISSES, 0, &[]));
    let foreground = span(0, USER, 5).with(Signal::MemoryReads, 1).with(Signal::L3DataReadMisses, 1);
    run(&mut m, vec![span(1, USER, 20).with(Signal::BackgroundMemoryReads, 1), foreground]);
    assert_eq!(pmd(&m, 0, 10), 5);
}

#[test]
fn table_3_6_all_counts_both_threads_on_duplicated_counters() {
    // Table 3-6 all: "If 1, events from both threads are monitored; If 0, only self".
    let spans = || vec![span(0, USER, 10).with(Signal::Instructions, 2), span(1, USER, 30).with(Signal::Instructions, 1)];
    let mut m = core();
    m.write_pmc(0, 4, counting(IA64_INST_RETIRED, 0, &[])).unwrap();
    m.write_pmc(0, 5, counting(IA64_INST_RETIRED, 0, &[("all", 1)])).unwrap();
    run(&mut m, spans());
    assert_eq!((pmd(&m, 0, 4), pmd(&m, 0, 5)), (20, 50));
}

#[test]
fn table_3_6_all_is_ignored_by_banked_counters() {
    // Table 3-6 all: "applicable only for Duplicated counters (PMC4-9)". MD29: stored,
    // read back, ignored.
    let value = counting(IA64_INST_RETIRED, 0, &[("all", 1)]);
    let mut m = core_with(0, 11, value);
    assert_eq!(m.read_pmc(0, 11), Ok(value));
    run(&mut m, vec![span(0, USER, 10).with(Signal::Instructions, 2), span(1, USER, 30).with(Signal::Instructions, 1)]);
    assert_eq!(pmd(&m, 0, 11), 20);
}

#[test]
fn s4_2_1_active_events_belong_to_the_running_thread_and_never_float() {
    // §4.2.1 Active: "can only occur when the thread that generated it is active".
    let mut m = core_with(0, 4, counting(IA64_INST_RETIRED, 0, &[]));
    // Thread 1's spans carry thread 0's background reads; an Active event ignores them.
    run(
        &mut m,
        vec![
            span(1, USER, 10).with(Signal::Instructions, 1).with(Signal::BackgroundMemoryReads, 3),
            span(0, USER, 4).with(Signal::Instructions, 2),
        ],
    );
    assert_eq!(pmd(&m, 0, 4), 8);
}

#[test]
fn s4_2_1_causal_events_are_assigned_to_the_active_thread() {
    // §4.2.1 Causal: "does not belong to a thread. It is assigned to the active thread."
    // Thread 0's outstanding reads land while thread 1 runs: BUS_MEMORY.ALL.EITHER is
    // Causal, so thread 1's counter gets them and thread 0's does not.
    let mut m = core();
    for t in 0..2 {
        m.write_pmc(t, 4, counting(BUS_MEMORY, ALL_EITHER, &[])).unwrap();
        m.write_pmc(t, 5, counting(CPU_OP_CYCLES, 0, &[])).unwrap();
    }
    run(&mut m, vec![span(1, USER, 20).with(Signal::BackgroundMemoryReads, 1), span(0, USER, 3)]);
    assert_eq!([pmd(&m, 0, 4), pmd(&m, 1, 4)], [0, 20]);
    assert_eq!([pmd(&m, 0, 5), pmd(&m, 1, 5)], [3, 20], "CPU_OP_CYCLES is Causal too");
}

#[test]
fn s4_2_1_self_floating_events_with_self_float_and_others_are_causal() {
    // §4.2.1 Self Floating: "If this event was monitored with the .SELF umask, it is a
    // Floating event. If any other umask is used it is considered Causal."
    let mut m = core();
    for t in 0..2 {
        m.write_pmc(t, 4, counting(BUS_MEMORY, ALL_SELF, &[])).unwrap();
    }
    run(&mut m, vec![span(1, USER, 20).with(Signal::BackgroundMemoryReads, 1)]);
    assert_eq!([pmd(&m, 0, 4), pmd(&m, 1, 4)], [20, 0], "thread 0's own transactions, counted in the background");
}

#[test]
fn bus_agent_unit_masks_split_this_core_the_other_and_the_io_bridge() {
    // MD14, MMC34: SELF this core's transactions, EITHER both cores', IO the bridge's,
    // ANY all of them.
    // One transaction per cycle: the event counts at most one.
    let spans = || [Signal::MemoryReads, Signal::PeerBrl, Signal::IoBrl, Signal::IoBwl].map(|s| span(0, USER, 10).with(s, 1)).to_vec();
    assert_eq!(count4(counting(BUS_MEMORY, ALL_SELF, &[]), spans()), 10);
    assert_eq!(count4(counting(BUS_MEMORY, ALL_EITHER, &[]), spans()), 20);
    assert_eq!(count4(counting(BUS_MEMORY, ALL_IO, &[]), spans()), 20);
    assert_eq!(count4(counting(BUS_MEMORY, 0b1111, &[]), spans()), 40, "ANY");
    // MEM_READ_CURRENT: BRC, which only the bridge issues (IO 01, ANY 11).
    let brc = || vec![span(0, USER, 10).with(Signal::IoBrc, 1).with(Signal::MemoryReads, 1)];
    assert_eq!(count4(counting(0x89, 0b01, &[]), brc()), 10);
    assert_eq!(count4(counting(0x89, 0b11, &[]), brc()), 10);
    // BUS_RD_INVALID_HITM: the bridge's BIL that met a modified line here.
    let bil = || vec![span(0, USER, 10).with(Signal::IoBil, 1).with(Signal::IoBilHitm, 1)];
    assert_eq!(count4(counting(0x82, 0b01, &[]), bil()), 10);
    assert_eq!(count4(counting(0x82, 0b10, &[]), bil()), 0);
}

#[test]
fn me23_er_queue_events_count_both_threads_whatever_all_says() {
    // ER_SNOOPQ_REQ, ER_BRQ_LIVE_REQ and ER_REJECT_ALL_L1(D/I)_REQ: "The .all field is
    // ignored for this event. The event will count as if .all is set." A Causal SI
    // event without that note counts only the thread's own foreground cycles.
    let spans = || {
        let span = span(1, USER, 10).with(Signal::ErSnoopqLive, 3).with(Signal::ErBrqLive, 9);
        vec![span.with(Signal::SiScbLiveBoth, 2).with(Signal::BrqRejecting, 0b10)]
    };
    assert_eq!(count4(counting(0xb7, 0, &[]), spans()), 30, "ER_SNOOPQ_REQ_LO on thread 0");
    assert_eq!(count4(counting(0xb8, 0, &[]), spans()), 10, "ER_BRQ_LIVE_REQ_HI: bits 4:3 of 9");
    assert_eq!(count4(counting(0xbe, 0, &[]), spans()), 10, "ER_REJECT_ALL_L1I_REQ");
    assert_eq!(count4(counting(0xac, 0, &[]), spans()), 0, "SI_SCB_LIVE_REQ_LO.EITHER");
    assert_eq!(count4(counting(0xac, 0, &[("all", 1)]), spans()), 20);
}

#[test]
fn s3_3_2_spans_of_a_thread_the_core_lacks_count_nothing() {
    // MD36.
    let value = counting(CPU_OP_CYCLES, 0, &[("all", 1)]);
    assert_eq!(count4(value, vec![span(2, USER, 10), span(0, USER, 1)]), 1);
}

// ------------------------------------------------------------------- threshold and max increment

#[test]
fn table_3_6_threshold_0_sums_the_event_values() {
    // Table 3-6: "When threshold is zero, the counter sums up all observed event values."
    let spans = vec![span(0, USER, 10).with(Signal::Instructions, 3), span(0, USER, 5).with(Signal::Instructions, 1)];
    assert_eq!(count4(counting(IA64_INST_RETIRED, 0, &[]), spans), 35);
}

#[test]
fn table_3_6_threshold_n_counts_cycles_whose_value_exceeds_n() {
    // Table 3-6: "increments by one in every cycle in which the observed event value
    // exceeds the threshold".
    let spans = || (0..=6).map(|k| span(0, USER, 10).with(Signal::Instructions, k)).collect::<Vec<_>>();
    for (threshold, cycles) in [(1, 50), (2, 40), (5, 10), (6, 0), (7, 0)] {
        assert_eq!(count4(counting(IA64_INST_RETIRED, 0, &[("threshold", threshold)]), spans()), cycles, "threshold {threshold}");
    }
}

#[test]
fn table_4_42_a_cycle_never_adds_more_than_the_events_max_increment() {
    // MD11: Max Inc/Cyc clamps a cycle's value: 6 for IA64_INST_RETIRED, 1 for
    // ER_BRQ_REQ_INSERTED (two L2D misses of one cycle enter the BRQ as one here).
    let wide = vec![span(0, USER, 10).with(Signal::Instructions, 8)];
    assert_eq!(count4(counting(IA64_INST_RETIRED, 0, &[]), wide.clone()), 60);
    assert_eq!(count4(counting(IA64_INST_RETIRED, 0, &[("threshold", 6)]), wide), 0, "the clamped value is thresholded");
    let misses = vec![span(0, USER, 10).with(Signal::L2DataMisses, 2)];
    assert_eq!(count4(counting(ER_BRQ_REQ_INSERTED, 0, &[]), misses), 10);
}

#[test]
fn md11_every_bus_transaction_of_a_cycle_counts() {
    // MD11: the bus takes a cycle's transactions a request phase apart, so a fill and
    // its victim's write-back made in one cycle are two BUS_MEMORY transactions, and
    // BUS_HITM counts a BRL's and a BRIL's HITM alike (its NOTE: BUS_RD_HITM +
    // BUS_RD_INVALID_BST_HITM; SELF).
    let victim = vec![span(0, USER, 10).with(Signal::MemoryReads, 1).with(Signal::MemoryWrites, 1).with(Signal::DCacheWritebacks, 2)];
    assert_eq!(count4(counting(BUS_MEMORY, ALL_EITHER, &[]), victim), 20);
    let hitms = vec![span(0, USER, 10)
        .with(Signal::MemoryReads, 2)
        .with(Signal::StoresLocalMemory, 1)
        .with(Signal::BrlHitm, 1)
        .with(Signal::BrilHitm, 1)];
    assert_eq!(count4(counting(BUS_HITM, 0b10, &[]), hitms), 20);
}

// ------------------------------------------------------------------- MESI

/// Four 10-cycle spans reading lines in states I, S, E and M (MD13), one memory read per
/// cycle, with L3_READS.ALL.ALL and the given MESI filter.
fn l3_reads_by_state(mesi: u64) -> u64 {
    let spans = (0..4u64)
        .map(|state| {
            let addr = 0x10_0000 + (state << 7);
            assert_eq!(line_state(addr), state);
            at(span(0, USER, 10).with(Signal::MemoryReads, 1).with(Signal::L3DataReadMisses, 1), addr, false)
        })
        .collect();
    count4(counting(L3_READS, 0b1111, &[("MESI", mesi)]), spans)
}

#[test]
fn table_3_6_mesi_counts_only_the_states_whose_bit_is_set() {
    // Table 3-6 MESI: [27] I, [28] S, [29] E, [30] M.
    assert_eq!(l3_reads_by_state(0b0001), 10, "I");
    assert_eq!(l3_reads_by_state(0b0010), 10, "S");
    assert_eq!(l3_reads_by_state(0b1010), 20, "S and M");
    assert_eq!(l3_reads_by_state(0b0111), 30, "I, S and E");
    assert_eq!(l3_reads_by_state(0), 0, "no state");
}

#[test]
fn table_3_6_mesi_1111_counts_every_state() {
    // Table 3-6: "if a user wishes to simply captured all occurrences of the event the
    // filter must be set to b1111".
    assert_eq!(l3_reads_by_state(0b1111), 40);
}

#[test]
fn table_3_6_mesi_applies_only_to_events_with_the_capability() {
    // Table 3-6: "Only the events with this capability are affected." L3_MISSES has
    // none (Table 4-31).
    let spans = vec![at(span(0, USER, 10).with(Signal::MemoryReads, 1).with(Signal::L3DataReadMisses, 1), 0x80, false)];
    assert_eq!(count4(counting(L3_MISSES, 0, &[("MESI", 0)]), spans), 10);
}

#[test]
fn background_events_have_no_known_line_state() {
    // MD13: a background floating event concerns no known line: only b1111 counts it.
    for (mesi, expected) in [(0b1111, 20), (0b0001, 0), (0b1110, 0)] {
        let mut m = core_with(0, 4, counting(L3_READS, 0b1111, &[("MESI", mesi)]));
        run(&mut m, vec![span(1, USER, 20).with(Signal::BackgroundMemoryReads, 1)]);
        assert_eq!(pmd(&m, 0, 4), expected, "MESI {mesi:04b}");
    }
}

// ------------------------------------------------------------------- overflow and interrupts

/// `core()` with PMV.m = 0 and vector 0xD2 on both threads.
fn unmasked() -> Montecito {
    let mut m = core();
    for t in 0..2 {
        m.write_pmv(t, PMV.encode(&[("vector", 0xD2), ("m", 0)]).unwrap()).unwrap();
    }
    m
}

#[test]
fn table_3_7_the_count_wraps_at_2_47_and_sets_pmc0_whatever_oi() {
    // Table 3-7: overflow is the carry out of bit 46; Table 3-8: the PMC0 bit is set
    // "regardless of the state of the PMC.oi bit"; without oi, fr is unchanged.
    let mut m = unmasked();
    m.write_pmc(0, 9, counting(CPU_OP_CYCLES, 0, &[])).unwrap();
    m.write_pmd(0, 9, WRAP - 5).unwrap();
    assert_eq!(run(&mut m, vec![span(0, USER, 10)]), (10, Exit::Budget));
    assert_eq!((pmd(&m, 0, 9), pmc0(&m, 0)), (5, 1 << 9));
    assert_eq!(m.take_interrupt(0), Ok(None));
}

#[test]
fn s3_3_11_preloading_2_47_minus_n_interrupts_on_the_nth_event() {
    // §3.3.2: "Software can force an external interruption ... after N events by
    // preloading the monitor with a count value of 2^47 - N"; the engine stops on that
    // cycle (3 instructions per cycle: the 1000th is in cycle 334).
    let mut m = unmasked();
    m.write_pmc(0, 4, counting(IA64_INST_RETIRED, 0, &[("oi", 1)])).unwrap();
    m.write_pmd(0, 4, WRAP - 1000).unwrap();
    let mut s = stream(vec![span(0, USER, 7).with(Signal::Instructions, 3), span(1, USER, 5)]);
    let (cycles, exit) = engine::run(&mut m, &mut s, 1_000_000);
    assert_eq!(exit, Exit::Overflow);
    assert_eq!(cycles, 334 + 47 * 5, "47 whole iterations of the other thread's span precede it");
    assert_eq!(pmd(&m, 0, 4), 2, "1002 instructions in 334 cycles");
    assert_eq!(pmc0(&m, 0), 1 << 4 | 1, "overflow bit 4 and fr");
    assert_eq!(m.take_interrupt(0), Ok(Some(0xD2)));
    assert_eq!(m.take_interrupt(0), Ok(None));
}

#[test]
fn table_3_6_oi_sets_fr_which_freezes_every_counter_of_the_thread() {
    // Table 3-6 oi: "the performance monitor freeze bit (PMC0.fr) is set when the
    // monitor overflows".
    let mut m = unmasked();
    m.write_pmc(0, 4, counting(CPU_OP_CYCLES, 0, &[("oi", 1)])).unwrap();
    m.write_pmd(0, 4, WRAP - 5).unwrap();
    m.write_pmc(0, 13, counting(CPU_OP_CYCLES, 0, &[])).unwrap();
    m.write_pmc(1, 4, counting(CPU_OP_CYCLES, 0, &[])).unwrap();
    assert_eq!(run(&mut m, vec![span(0, USER, 10)]), (5, Exit::Overflow));
    m.take_interrupt(0).unwrap();
    // Running on: thread 0 stays frozen until software clears fr; thread 1 counts.
    engine::run(&mut m, &mut once(vec![span(0, USER, 5), span(1, USER, 20)]), 1000);
    assert_eq!([pmd(&m, 0, 4), pmd(&m, 0, 13), pmd(&m, 1, 4)], [0, 5, 20]);
    m.write_pmc(0, 0, 0).unwrap();
    run(&mut m, vec![span(0, USER, 3)]);
    assert_eq!([pmd(&m, 0, 4), pmd(&m, 0, 13)], [3, 8]);
}

#[test]
fn s3_3_11_one_interrupt_however_many_counters_overflow() {
    // §3.3.11: "there is only one interrupt line that will be raised regardless of which
    // PMC/PMD set meets this condition". Table 3-8: "multiple bits may be set".
    let mut m = unmasked();
    for n in [5, 14] {
        m.write_pmc(0, n, counting(CPU_OP_CYCLES, 0, &[("oi", 1)])).unwrap();
        m.write_pmd(0, n, WRAP - 8).unwrap();
    }
    assert_eq!(run(&mut m, vec![span(0, USER, 10)]), (8, Exit::Overflow));
    assert_eq!(pmc0(&m, 0), 1 << 5 | 1 << 14 | 1);
    assert_eq!(m.take_interrupt(0), Ok(Some(0xD2)));
    assert_eq!(m.take_interrupt(0), Ok(None));
}

#[test]
fn table_3_8_overflow_bits_are_sticky() {
    // Table 3-8: "These bits are sticky": later counting and overflows keep them.
    let mut m = core();
    m.write_pmc(0, 4, counting(CPU_OP_CYCLES, 0, &[])).unwrap();
    m.write_pmc(0, 7, counting(CPU_OP_CYCLES, 0, &[])).unwrap();
    m.write_pmd(0, 4, WRAP - 2).unwrap();
    m.write_pmd(0, 7, WRAP - 6).unwrap();
    run(&mut m, vec![span(0, USER, 4)]);
    assert_eq!(pmc0(&m, 0), 1 << 4);
    run(&mut m, vec![span(0, USER, 4)]);
    assert_eq!(pmc0(&m, 0), 1 << 4 | 1 << 7);
}

#[test]
fn s3_3_12_pmv_m_keeps_the_interrupt_from_being_pended() {
    // §3.3.12: PMV.m is 1 after reset; §3.3.11: the interrupt is recognised only with
    // PMV.m = 0. MD25: the overflow still sets fr, the interrupt is lost, the run goes on.
    let mut m = core();
    assert_eq!(m.read_pmv(0), Ok(1 << 16));
    m.write_pmc(0, 4, counting(CPU_OP_CYCLES, 0, &[("oi", 1)])).unwrap();
    m.write_pmd(0, 4, WRAP - 5).unwrap();
    assert_eq!(run(&mut m, vec![span(0, USER, 10)]), (10, Exit::Budget));
    assert_eq!((pmd(&m, 0, 4), pmc0(&m, 0)), (0, 1 << 4 | 1));
    assert_eq!(m.take_interrupt(0), Ok(None));
}

#[test]
fn engine_skipping_and_stepping_count_alike() {
    // The engine skips whole iterations or steps span by span; the counts agree with the
    // stream's totals either way.
    let body = || {
        vec![
            span(0, USER, 3).with(Signal::Instructions, 4),
            span(1, KERNEL, 2).with(Signal::Instructions, 1).with(Signal::MemoryReads, 1).with(Signal::L3DataReadMisses, 1),
            span(0, KERNEL, 1),
        ]
    };
    let setup = || {
        let mut m = unmasked();
        m.write_pmc(0, 4, counting(IA64_INST_RETIRED, 0, &[("all", 1)])).unwrap();
        m.write_pmc(0, 10, counting(CPU_OP_CYCLES, 0, &[])).unwrap();
        m.write_pmc(1, 6, counting(L3_MISSES, 0, &[("oi", 1)])).unwrap();
        m.write_pmd(1, 6, WRAP - 1_000_001).unwrap();
        m
    };
    let mut skipped = setup();
    let (cycles, exit) = engine::run(&mut skipped, &mut stream(body()), 6_000_000);
    assert_eq!(exit, Exit::Overflow, "thread 1's 1_000_001st memory read");
    assert_eq!(cycles, 500_000 * 6 + 3 + 1);
    let mut stepped = setup();
    let mut s = stream(body());
    let mut done = 0;
    while done < cycles {
        done += engine::run(&mut stepped, &mut s, 997.min(cycles - done)).0;
    }
    assert_eq!(stepped, skipped);
    assert_eq!(pmd(&skipped, 0, 4), 500_000 * 14 + 12 + 1, "all instructions of both threads");
    assert_eq!(pmd(&skipped, 0, 10), 500_000 * 4 + 3);
}

// ------------------------------------------------------------------- privilege

#[test]
fn table_3_5_privileged_monitors_read_0_at_cpl_1_to_3() {
    // Table 3-5 pm: "Any read of the PMD by non-privileged software in this case will
    // return 0."
    let mut m = core_with(0, 8, counting(CPU_OP_CYCLES, 0, &[("pm", 1)]));
    m.write_pmd(0, 8, 42).unwrap();
    for cpl in 1..=3 {
        set_cpl(&mut m, 0, cpl);
        assert_eq!(m.read_pmd(0, 8), Ok(0), "CPL {cpl}");
    }
    set_cpl(&mut m, 0, 0);
    assert_eq!(m.read_pmd(0, 8), Ok(42));
}

#[test]
fn user_monitors_are_readable_at_every_cpl() {
    // Table 3-5 pm = 0: a user monitor. MD8: plm plays no part in reads ("See plm" in
    // Table 3-7 is read as pointing at pm).
    let mut m = core_with(0, 8, pmc(&[("es", CPU_OP_CYCLES), ("plm", 0b0001), ("ism", 0b10)]));
    m.write_pmd(0, 8, 42).unwrap();
    set_cpl(&mut m, 0, 3);
    assert_eq!(m.read_pmd(0, 8), Ok(42));
}

#[test]
fn psr_sp_secures_pmd_reads_at_cpl_1_to_3() {
    // §3.3.1 names PSR.sp; MD8: with PSR.sp = 1, PMD reads at CPL != 0 return 0.
    let mut m = core();
    m.write_pmd(0, 9, 42).unwrap();
    m.write_pmd(0, 33, 43).unwrap();
    m.set_psr(0, psr(&[("up", 1), ("sp", 1), ("cpl", 3)])).unwrap();
    assert_eq!((m.read_pmd(0, 9), m.read_pmd(0, 33)), (Ok(0), Ok(0)));
    m.set_psr(0, psr(&[("up", 1), ("sp", 1), ("cpl", 0)])).unwrap();
    assert_eq!((m.read_pmd(0, 9), m.read_pmd(0, 33)), (Ok(42), Ok(43)));
}

#[test]
fn pmc_writes_at_cpl_1_to_3_fault_and_change_nothing() {
    // MD7: a privileged operation fault; nothing changes.
    let mut m = core();
    set_cpl(&mut m, 1, 2);
    let before = m.clone();
    let err = m.write_pmc(1, 4, counting(CPU_OP_CYCLES, 0, &[])).unwrap_err();
    assert_eq!(err, MontecitoError::PrivilegedOperation { thread: 1, instruction: "mov pmc[4]=r".into(), cpl: 2 });
    assert!(err.to_string().contains("mov pmc[4]=r") && err.to_string().contains("CPL 2"), "{err}");
    assert_eq!(m, before);
}

#[test]
fn pmc_reads_pmd_writes_and_cr73_accesses_fault_at_cpl_1_to_3() {
    // MD7: Itanium SDM Vol. 2 §7.2: PMC reads and PMD writes are privileged too; so are
    // control register accesses.
    let mut m = core();
    set_cpl(&mut m, 0, 3);
    let before = m.clone();
    assert!(matches!(m.read_pmc(0, 4), Err(MontecitoError::PrivilegedOperation { .. })));
    assert!(matches!(m.write_pmd(0, 4, 1), Err(MontecitoError::PrivilegedOperation { .. })));
    assert!(matches!(m.write_pmv(0, 0), Err(MontecitoError::PrivilegedOperation { .. })));
    assert!(matches!(m.read_pmv(0), Err(MontecitoError::PrivilegedOperation { .. })));
    assert_eq!(m, before);
}

#[test]
fn the_privilege_check_comes_before_the_index_check() {
    // MD7: "regardless of the register address".
    let mut m = core();
    set_cpl(&mut m, 0, 3);
    assert!(matches!(m.write_pmc(0, 20, 0), Err(MontecitoError::PrivilegedOperation { .. })));
    assert_eq!(m.read_pmd(0, 20), Err(MontecitoError::NoSuchPmd { index: 20 }), "PMD reads are not privileged");
}

// ------------------------------------------------------------------- reset

#[test]
fn s3_3_12_reset_values() {
    // §3.3.12: oi and ev of every PMC are 0, PMV.m = 1, PAL's PMC32-36/38/41 values,
    // PMC32-36 from Tables 3-11 to 3-13 where §3.3.12 disagrees (ERRATA MA9, MA10);
    // MD4: every other register starts at 0.
    let m = Montecito::new();
    for t in 0..2 {
        // Table 3-11: mask all ones, b f i m, inv and ig_ad one; Table 3-12: match all ones.
        for (n, value) in [(32, 0x030f_01ff_ffff_ffff), (33, 0x1ff_ffff_ffff), (34, 0x000f_01ff_ffff_ffff), (35, 0x1ff_ffff_ffff)] {
            assert_eq!(m.read_pmc(t, n), Ok(value), "thread {t} PMC{n}");
        }
        // Table 3-13: channels opcode-constrained (0), rsv 31:4 all ones.
        assert_eq!(m.read_pmc(t, 36), Ok(0xffff_fff0));
        assert_eq!(m.read_pmc(t, 38), Ok(0xdb6));
        assert_eq!(m.read_pmc(t, 41), Ok(0x2078_fefe_fefe));
        for n in [37, 39, 40, 42] {
            assert_eq!(m.read_pmc(t, n), Ok(0), "thread {t} PMC{n}");
        }
        for n in 0..=15 {
            assert_eq!(m.read_pmc(t, n), Ok(0), "thread {t} PMC{n}: oi and ev 0");
        }
        for n in (4..=15).chain(32..=39).chain(48..=63) {
            assert_eq!(m.read_pmd(t, n), Ok(0), "thread {t} PMD{n}");
        }
        assert_eq!(m.read_pmv(t), Ok(1 << 16), "PMV.m = 1");
        assert_eq!(m.psr(t), Ok(0));
        assert_eq!(m.interrupt_pending(t), Ok(false));
    }
}

#[test]
fn register_accesses_take_no_cycles_and_count_nothing() {
    // MD30: accesses are not stream cycles; only engine runs count.
    let mut m = core_with(0, 4, counting(CPU_OP_CYCLES, 0, &[("all", 1)]));
    for t in 0..2 {
        m.write_pmc(t, 6, counting(IA64_INST_RETIRED, 0, &[])).unwrap();
        m.write_pmd(t, 6, 3).unwrap();
        m.read_pmd(t, 6).unwrap();
        m.read_pmc(t, 0).unwrap();
        m.write_pmv(t, 0).unwrap();
    }
    assert_eq!((pmd(&m, 0, 4), pmd(&m, 0, 6), pmd(&m, 1, 6)), (0, 3, 3));
}

#[test]
fn table_3_5_a_pmd_keeps_its_value_while_plm_is_0() {
    // Table 3-5 plm: with all bits 0 "the Montecito processor will not preserve the value
    // of the corresponding PMD register(s)". MD9: the model keeps it.
    let mut m = core();
    m.write_pmd(0, 4, 99).unwrap();
    m.write_pmc(0, 4, pmc(&[("es", CPU_OP_CYCLES), ("ism", 0b10)])).unwrap();
    run(&mut m, vec![span(0, USER, 10)]);
    assert_eq!(pmd(&m, 0, 4), 99);
}

// ------------------------------------------------------------------- PAL_PERF_MON_INFO

#[test]
fn table_3_34_pal_retired_and_pal_cycles_are_the_event_codes() {
    // MD20: as printed, and they select the events they name.
    let info = Montecito::new().pal_perf_mon_info();
    assert_eq!((info.retired, info.cycles), (0x08, 0x12));
    assert_eq!((info.retired, info.cycles), (pal::TABLE_3_34.retired, pal::TABLE_3_34.cycles));
    let spans = || vec![span(0, USER, 10).with(Signal::Instructions, 2)];
    assert_eq!(count4(counting(u64::from(info.retired), 0, &[]), spans()), 20);
    assert_eq!(count4(counting(u64::from(info.cycles), 0, &[]), spans()), 10);
}

#[test]
fn table_3_34_pal_width_is_47_not_48() {
    // MD21: Table 3-7 counts in bits 46:0 and overflows on the carry out of bit 46.
    let info = Montecito::new().pal_perf_mon_info();
    assert_eq!((info.width, pal::TABLE_3_34.width), (47, 48));
    let mut m = core_with(0, 4, counting(CPU_OP_CYCLES, 0, &[]));
    m.write_pmd(0, 4, (1 << info.width) - 1).unwrap();
    run(&mut m, vec![span(0, USER, 1)]);
    assert_eq!((pmd(&m, 0, 4), pmc0(&m, 0)), (0, 1 << 4), "2^width - 1 plus one event wraps");
}

#[test]
fn table_3_34_generic_pairs_are_12_not_4() {
    // MD22: §3.3.2, "its own set of 12 generic performance counter (PMC/PMD4-15) pairs".
    let info = Montecito::new().pal_perf_mon_info();
    assert_eq!((info.generic_pm_pairs, pal::TABLE_3_34.generic_pm_pairs), (12, 4));
    let mut m = core();
    for n in 4..4 + usize::from(info.generic_pm_pairs) {
        m.write_pmc(0, n, counting(CPU_OP_CYCLES, 0, &[])).unwrap();
    }
    run(&mut m, vec![span(0, USER, 3)]);
    assert!((4..=15).all(|n| pmd(&m, 0, n) == 3));
}

#[test]
fn table_3_34_pmc_and_pmd_masks_follow_table_3_4() {
    // MD23: PMC0-15, PMC32-42; PMD4-15, PMD32-39, PMD48-63, exactly the registers the
    // model implements.
    let info = Montecito::new().pal_perf_mon_info();
    assert_eq!(info.pmc_mask, [0x7FF_0000_FFFF, 0, 0, 0]);
    assert_eq!(info.pmd_mask, [0xFFFF_00FF_0000_FFF0, 0, 0, 0]);
    assert_eq!((pal::TABLE_3_34.pmc_mask[0], pal::TABLE_3_34.pmd_mask[0]), (0x3FFF, 0x3FFFF));
    let mut m = core();
    for n in 0..256 {
        assert_eq!(m.read_pmc(0, n).is_ok(), mask_has(&info.pmc_mask, n), "PMC{n}");
        assert_eq!(m.write_pmd(0, n, 0).is_ok(), mask_has(&info.pmd_mask, n), "PMD{n}");
    }
}

#[test]
fn table_3_34_cycles_and_retired_masks_cover_every_generic_counter() {
    // MD24: §4.2.1, CPU_OP_CYCLES "can be measured in both types of counters";
    // IA64_INST_RETIRED is Active, which "either type of monitor can" count.
    let info = Montecito::new().pal_perf_mon_info();
    assert_eq!((info.cycles_mask, info.retired_mask), ([0xFFF0, 0, 0, 0], [0xFFF0, 0, 0, 0]));
    assert_eq!(pal::TABLE_3_34.cycles_mask[0], 0xF0);
    for (code, mask) in [(info.cycles, info.cycles_mask), (info.retired, info.retired_mask)] {
        for n in 4..=15 {
            let counted = count_in(n, counting(u64::from(code), 0, &[]), vec![span(0, USER, 5).with(Signal::Instructions, 1)]);
            assert_eq!(counted == 5, mask_has(&mask, n), "event {code:#x} in PMD{n}");
        }
    }
}

/// PMDn of thread 0 after `spans`, counting `value` in PMCn.
fn count_in(n: usize, value: u64, spans: Vec<Span>) -> u64 {
    let mut m = core_with(0, n, value);
    run(&mut m, spans);
    pmd(&m, 0, n)
}

// ------------------------------------------------------------------- bad input

#[test]
fn threads_other_than_0_and_1_are_refused() {
    let mut m = core();
    let before = m.clone();
    let err = MontecitoError::NoSuchThread { thread: 2 };
    assert_eq!(m.write_pmc(2, 4, 0), Err(err.clone()));
    assert_eq!(m.read_pmd(2, 4), Err(err.clone()));
    assert_eq!(m.set_psr(2, 0), Err(err.clone()));
    assert_eq!(m.take_interrupt(2), Err(err.clone()));
    assert!(err.to_string().contains("threads 0 and 1"), "{err}");
    assert_eq!(m, before);
}

#[test]
fn unimplemented_registers_are_refused_naming_table_3_4() {
    // MD10: hardware reads 0 and ignores writes; the model refuses them.
    let mut m = core();
    let before = m.clone();
    for n in [16, 31, 43, 255, 256, usize::MAX] {
        assert_eq!(m.write_pmc(0, n, 1), Err(MontecitoError::NoSuchPmc { index: n }));
        assert_eq!(m.read_pmc(0, n), Err(MontecitoError::NoSuchPmc { index: n }));
    }
    for n in [0, 3, 16, 40, 47, 64, 1000] {
        assert_eq!(m.write_pmd(0, n, 1), Err(MontecitoError::NoSuchPmd { index: n }));
        assert_eq!(m.read_pmd(0, n), Err(MontecitoError::NoSuchPmd { index: n }));
    }
    let msg = MontecitoError::NoSuchPmd { index: 40 }.to_string();
    assert!(msg.contains("PMD40") && msg.contains("Table 3-4"), "{msg}");
    assert_eq!(m, before);
}

// ------------------------------------------------------------------- event mapping

#[test]
fn s4_6_cpu_op_cycles_is_back_end_bubble_all_plus_retiring_cycles() {
    // §4.6: CPU_OP_CYCLES = BACK_END_BUBBLE.all + (IA64_INST_RETIRED >= 1).
    let spans = || (0..4).map(|k| span(0, USER, 10 + k).with(Signal::Instructions, k as u8)).collect::<Vec<_>>();
    let cycles = count4(counting(CPU_OP_CYCLES, 0, &[]), spans());
    let bubbles = count4(counting(BACK_END_BUBBLE, 0, &[]), spans());
    let retiring = count4(counting(IA64_INST_RETIRED, 0, &[("threshold", 0)]), spans());
    let retiring_cycles = count4(counting(IA64_INST_RETIRED, 0, &[("threshold", 1)]), spans()) + 11;
    assert_eq!((cycles, bubbles, retiring), (46, 10, 11 + 24 + 39));
    assert_eq!(cycles, bubbles + retiring_cycles);
}

#[test]
fn br_mispred_detail_splits_branches_by_prediction_and_type() {
    // MD18: per cycle an IP-relative branch taken against its predicted path, a return
    // to a wrong predicted target and an indirect branch predicted rightly.
    let s = span(0, USER, 10)
        .with(Signal::Branches, 3)
        .with(Signal::BranchMispredicts, 2)
        .with(Signal::PathMispredictsTaken, 1)
        .with(Signal::Returns, 1)
        .with(Signal::ReturnsMispredicted, 1)
        .with(Signal::IndirectBranches, 1);
    let counts: Vec<u64> = (0..16).map(|u| count4(counting(BR_MISPRED_DETAIL, u, &[]), vec![s])).collect();
    // ALL, IPREL, RETURN, NRETIND x ALL_PRED, CORRECT_PRED, WRONG_PATH, WRONG_TARGET.
    assert_eq!(counts, [30, 10, 10, 10, 10, 0, 10, 0, 10, 0, 0, 10, 10, 10, 0, 0]);
    // BRANCH_EVENT counts what the trace buffer captures (MD54), and these spans end
    // in no branch outcome for it to capture (montecito_capture.rs counts captures).
    assert_eq!(count4(counting(BRANCH_EVENT, 0, &[]), vec![s]), 0, "BRANCH_EVENT without a branch outcome");
}

#[test]
fn loads_stores_and_data_references() {
    let loads = at(span(0, USER, 10).with(Signal::Loads, 2), 0, false);
    let uc_store = at(span(0, USER, 5).with(Signal::Stores, 1).with(Signal::UncachedStores, 1), 0x4000_0000, true);
    let spans = || vec![loads, uc_store];
    assert_eq!(count4(counting(LOADS_RETIRED, 0, &[]), spans()), 20);
    assert_eq!(count4(counting(STORES_RETIRED, 0, &[]), spans()), 5);
    assert_eq!(count4(counting(UC_STORES_RETIRED, 0, &[]), spans()), 5);
    assert_eq!(count4(counting(DATA_REFERENCES_SET1, 0, &[]), spans()), 25);
    // An issue group of a cacheable load and a store to a frame buffer (MMC1): each
    // access counts by its own memory attribute.
    let mixed = || vec![at(span(0, USER, 10).with(Signal::Loads, 1).with(Signal::Stores, 1).with(Signal::UncachedStores, 1), 0, false)];
    assert_eq!(count4(counting(UC_STORES_RETIRED, 0, &[]), mixed()), 10);
    assert_eq!(count4(counting(0xc2, 0, &[]), mixed()), 10, "L1D_READS_SET0: the cacheable load");
    assert_eq!(count4(counting(L2D_REFERENCES, 0b10, &[]), mixed()), 0, "L2D_REFERENCES.WRITES: no cacheable store");
    // §4.15: L1D_READS counts "RSE loads", DATA_REFERENCES "RSE operations"; the RSE's
    // fills and spills are no retired loads or stores (MMC17).
    let fills = span(0, USER, 3).with(Signal::RseLoads, 2).with(Signal::RseFillStallCycles, 1);
    let spills = span(0, USER, 4).with(Signal::RseStores, 2).with(Signal::RseSpillStallCycles, 1);
    let rse = || vec![loads, fills, spills];
    assert_eq!(count4(counting(0xc2, 0, &[]), rse()), 20 + 6, "L1D_READS_SET0");
    assert_eq!(count4(counting(DATA_REFERENCES_SET1, 0, &[]), rse()), 20 + 6 + 8);
    assert_eq!(count4(counting(LOADS_RETIRED, 0, &[]), rse()), 20);
    assert_eq!(count4(counting(STORES_RETIRED, 0, &[]), rse()), 0);
    // L1D_READ_MISSES (0xc7): ALL counts every read miss, RSE_FILL those of the cycles
    // the RSE fills in (MMC17).
    let missed = span(0, USER, 2).with(Signal::RseFillStallCycles, 1).with(Signal::DCacheMisses, 1);
    let load_miss = span(0, USER, 7).with(Signal::Loads, 1).with(Signal::DCacheMisses, 1);
    assert_eq!([0, 1].map(|u| count4(counting(0xc7, u, &[]), vec![missed, load_miss])), [9, 2], "L1D_READ_MISSES ALL, RSE_FILL");
}

#[test]
fn tlb_events_split_l1_and_l2_misses() {
    let itlb = span(0, USER, 10).with(Signal::ITlbMisses, 1);
    let walk = span(0, USER, 5).with(Signal::ITlbMisses, 1).with(Signal::MainTlbMisses, 1);
    let dtlb = span(0, USER, 7).with(Signal::DTlbMisses, 1);
    let dwalk = span(0, USER, 3).with(Signal::DTlbMisses, 1).with(Signal::MainTlbMisses, 1);
    let spans = || vec![itlb, walk, dtlb, dwalk];
    let itlb_by_umask: Vec<u64> = (0..4).map(|u| count4(counting(ITLB_MISSES_FETCH, u, &[]), spans())).collect();
    assert_eq!(itlb_by_umask, [0, 15, 5, 15], "nothing, L1ITLB, L2ITLB, ALL");
    assert_eq!(count4(counting(L2DTLB_MISSES, 0, &[]), spans()), 3);
    assert_eq!(count4(counting(L1DTLB_TRANSFER, 0, &[]), spans()), 7);
}

#[test]
fn l1d_read_misses_leave_out_write_misses() {
    // L1D_READ_MISSES: "L1 Data Cache is write through; therefore write misses are not
    // counted."
    let read = at(span(0, USER, 10).with(Signal::DCacheMisses, 1), 0x100, false);
    let write = at(span(0, USER, 4).with(Signal::DCacheMisses, 1), 0x100, true);
    assert_eq!(count4(counting(L1D_READ_MISSES, 0, &[]), vec![read, write]), 10);
    assert_eq!(count4(counting(L1D_READ_MISSES, 1, &[]), vec![read, write]), 0, "RSE_FILL: no RSE");
}

/// A cacheable read miss to memory, a store (hit), a read miss to memory whose L2D
/// victim is written back into the L3 (which writes one of its own to memory), a
/// non-cacheable read and an instruction fetch miss to memory, each 10 cycles.
fn memory_mix() -> Vec<Span> {
    // A load that misses the L1D, the L2D and the L3, as the machine signals it.
    let read_miss = || {
        span(0, USER, 10)
            .with(Signal::Loads, 1)
            .with(Signal::DCacheMisses, 1)
            .with(Signal::MemoryReads, 1)
            .with(Signal::L2DataMisses, 1)
            .with(Signal::L3DataReadMisses, 1)
    };
    vec![
        at(read_miss(), 0, false),
        at(span(0, USER, 10).with(Signal::Stores, 1), 0x80, true),
        at(read_miss().with(Signal::L3WritebackHits, 1).with(Signal::MemoryWrites, 1).with(Signal::DCacheWritebacks, 2), 0x100, false),
        at(
            span(0, USER, 10)
                .with(Signal::Loads, 1)
                .with(Signal::UncachedLoads, 1)
                .with(Signal::MemoryReads, 1)
                .with(Signal::PartialMemoryReads, 1),
            0x4000_0000,
            false,
        ),
        span(0, USER, 10).with(Signal::ICacheMisses, 1).with(Signal::MemoryReads, 1).with(Signal::L3InstructionMisses, 1),
    ]
}

#[test]
fn l2d_and_l3_events_count_the_machines_lookups() {
    // MD19: L2D and L3 events count the machine's L2D misses and L3 lookups by kind and
    // outcome; non-cacheable accesses bypass the caches.
    let c = |code, umask, more: &[(&str, u64)]| count4(counting(code, umask, more), memory_mix());
    assert_eq!(c(L2D_MISSES, 0, &[]), 20);
    assert_eq!([c(L2D_REFERENCES, 1, &[]), c(L2D_REFERENCES, 2, &[]), c(L2D_REFERENCES, 3, &[])], [20, 10, 30]);
    assert_eq!(c(L3_MISSES, 0, &[]), 30);
    assert_eq!(c(L3_REFERENCES, 0, &[]), 30, "a read miss and a write-back in one cycle count once (max 1)");
    let all = [("MESI", 0b1111)];
    assert_eq!(
        [c(L3_READS, 0b0111, &all), c(L3_READS, 0b1011, &all), c(L3_READS, 0b1111, &all), c(L3_READS, 0b1101, &all)],
        [10, 20, 30, 0]
    );
    assert_eq!([c(L3_WRITES, 0b1011, &all), c(L3_WRITES, 0b0111, &all), c(L3_WRITES, 0b1111, &all)], [10, 0, 10]);
}

#[test]
fn bus_events_split_full_line_and_partial_transactions() {
    // MD15: the machine names each transaction's type; a non-cacheable read is a
    // partial one (BRP), the rest of this mix are lines; a read miss and its victim's
    // write-back of one cycle are two transactions (MD11).
    let c = |code, umask| count4(counting(code, umask, &[]), memory_mix());
    assert_eq!([c(BUS_MEMORY, 0b0100), c(BUS_MEMORY, 0b1000), c(BUS_MEMORY, 0b1100)], [40, 10, 50]);
    assert_eq!([c(BUS_MEM_READ, 0b0110), c(BUS_MEM_READ, 0b1110), c(BUS_MEM_READ, 0b0010)], [30, 30, 0], "BRL, ALL, BIL");
    assert_eq!(c(BUS_RD_DATA, 0b10), 20);
    assert_eq!(c(BUS_RD_PRTL, 0b10), 10);
    assert_eq!([c(BUS_WR_WB, 0b0110), c(BUS_WR_WB, 0b1010)], [10, 0], "write-backs, clean castouts");
}

#[test]
fn md46_coalesced_writes_uncacheable_accesses_and_castouts_are_their_own_transactions() {
    // Per 10-cycle span: a device read and write (BRP, BWP), a coalesced line (BWL) and
    // two 32-byte pieces of another (BWP), a clean castout (0-byte BWL), a write-back.
    let spans = || {
        vec![
            span(0, USER, 10).with(Signal::DeviceReads, 1),
            span(0, USER, 10).with(Signal::DeviceWrites, 1),
            span(0, USER, 10).with(Signal::MemoryWrites, 1).with(Signal::WcLines, 1),
            span(0, USER, 10).with(Signal::MemoryWrites, 2).with(Signal::Wc32, 2),
            span(0, USER, 10).with(Signal::CleanCastouts, 1),
            span(0, USER, 10).with(Signal::MemoryWrites, 1).with(Signal::DCacheWritebacks, 1),
        ]
    };
    let c = |code, umask| count4(counting(code, umask, &[]), spans());
    assert_eq!(c(BUS_RD_PRTL, 0b10), 10, "the device read");
    assert_eq!([c(BUS_MEMORY, 0b0110), c(BUS_MEMORY, 0b1010), c(BUS_MEMORY, 0b1110)], [20, 50, 70], "the two pieces are two (MD11)");
    assert_eq!([c(BUS_WR_WB, 0b0110), c(BUS_WR_WB, 0b1010), c(BUS_WR_WB, 0b1110)], [20, 10, 30]);
    // Table 4-122: SI_WRITEQ_INSERTS bits 3:1 ALL, EWB, WC32, WC16; bit 0 SELF (MD14).
    assert_eq!([c(SI_WRITEQ_INSERTS, 0b0001), c(SI_WRITEQ_INSERTS, 0b0101), c(SI_WRITEQ_INSERTS, 0b1011)], [50, 10, 20]);
    assert_eq!(c(SI_WRITEQ_INSERTS, 0b1001), 0, "no 16-byte piece");
    assert_eq!([c(SI_CCQ_INSERTS, 1), c(SI_RQ_INSERTS, 1), c(SI_CYCLES, 0)], [10, 10, 60]);
}

#[test]
fn mmc23_snoop_answers_count_by_agent_and_by_core() {
    // Per 10-cycle span: this core's BRL answered HITM by the other core; the other
    // core's BRIL answered HITM by this one (an implicit write-back); this core's BIL;
    // the other's BRL answered HIT; L2D fills in M, S and E, and two the other core's
    // snoops met on their way, I and P (MMC51).
    let spans = || {
        vec![
            span(0, USER, 10).with(Signal::MemoryReads, 1).with(Signal::L3DataReadMisses, 1).with(Signal::BrlHitm, 1),
            span(0, USER, 10).with(Signal::PeerBril, 1).with(Signal::PeerBrilHitm, 1),
            span(0, USER, 10).with(Signal::Stores, 1).with(Signal::BusInvalidates, 1).with(Signal::StoresHitShared, 1),
            span(0, USER, 10).with(Signal::PeerBrl, 1).with(Signal::PeerBrlHit, 1),
            span(0, USER, 10)
                .with(Signal::L2DataMisses, 3)
                .with(Signal::L2dFillsModified, 1)
                .with(Signal::L2dFillsShared, 1)
                .with(Signal::L2dFillsExclusive, 1),
            span(0, USER, 10).with(Signal::L2dFillsInvalid, 1).with(Signal::L2dFillsPending, 1),
        ]
    };
    let c = |code, umask| count4(counting(code, umask, &[]), spans());
    // Table 4-40 remote responses: SELF (b10) this core's transactions, EITHER (b00)
    // both cores'.
    assert_eq!([c(0x80, 0b10), c(0x80, 0b00)], [0, 10], "BUS_RD_HIT");
    assert_eq!([c(0x81, 0b10), c(0x81, 0b00)], [10, 10], "BUS_RD_HITM");
    assert_eq!([c(0x83, 0b10), c(0x83, 0b00)], [0, 10], "BUS_RD_INVALID_BST_HITM");
    assert_eq!([c(0x84, 0b10), c(0x84, 0b00)], [10, 20], "BUS_HITM");
    assert_eq!([c(BUS_MEM_READ, 0b0010), c(BUS_MEM_READ, 0b0110), c(BUS_MEM_READ, 0b0100), c(BUS_MEM_READ, 0b1000)], [10, 10, 20, 10]);
    // Table 4-122 IWB: this core's implicit write-backs (SELF), both cores' (EITHER).
    assert_eq!([c(SI_WRITEQ_INSERTS, 0b0011), c(SI_WRITEQ_INSERTS, 0b0010)], [10, 20]);
    // Table 4-116: raw answers, this core's (SELF: MISS to its own transactions) and
    // both cores' (at most one a cycle).
    let scb = |umask| c(0xab, umask);
    assert_eq!([scb(0b1101), scb(0b1001), scb(0b0101), scb(0b0001)], [40, 10, 10, 20], "SELF ALL, HITM, HIT, MISS");
    assert_eq!([scb(0b1100), scb(0b1000), scb(0b0100), scb(0b0000)], [40, 20, 20, 40], "EITHER ALL, HITM, HIT, MISS");
    // Table 4-119: the final answer, one per transaction.
    assert_eq!([c(0xae, 0b1100), c(0xae, 0b1000), c(0xae, 0b0100), c(0xae, 0b0000)], [40, 20, 20, 0]);
    assert_eq!(c(0xed, 0), 10, "L2D_STORE_HIT_SHARED");
    let fills = [0b000, 0b001, 0b010, 0b011, 0b100, 0b111].map(|u| c(0xf2, u));
    assert_eq!(fills, [10, 10, 10, 10, 10, 10], "L2D_FILL_MESI_STATE M, E, S, I, P (1xx)");
}

#[test]
fn s3_3_3_cycles_halted_counts_nothing_and_belongs_in_pmd10() {
    // The stream has no halted cycles; §3.3.3: "can only be monitored in PMD10. If
    // measured by any other PMD, the count value is undefined" (MD27: noted).
    let mut m = core_with(0, 10, counting(CPU_OP_CYCLES_HALTED, 0, &[]));
    run(&mut m, vec![span(0, USER, 10)]);
    assert_eq!((pmd(&m, 0, 10), m.unpredictable().len()), (0, 0));
    m.write_pmc(0, 11, counting(CPU_OP_CYCLES_HALTED, 0, &[])).unwrap();
    assert!(m.unpredictable()[0].contains("PMD10"), "{:?}", m.unpredictable());
}

#[test]
fn s3_3_3_er_si_l2d_events_count_nothing_in_banked_counters() {
    // §3.3.3: event codes 8x, 9x, ax, bx, ex, fx "can only be monitored using PMD4-9".
    // MD27: in PMD10-15 they count nothing, and the programming is noted.
    let spans = || vec![span(0, USER, 10).with(Signal::MemoryReads, 1)];
    assert_eq!(count_in(9, counting(BUS_MEMORY, ALL_SELF, &[]), spans()), 10);
    let mut m = core_with(0, 10, counting(BUS_MEMORY, ALL_SELF, &[]));
    run(&mut m, spans());
    assert_eq!(pmd(&m, 0, 10), 0);
    assert!(m.unpredictable()[0].contains("PMD4-9"), "{:?}", m.unpredictable());
    // §4.8.4 (ERRATA MA8): L2D_MISSES, outside those codes, neither.
    let spans = || vec![span(0, USER, 10).with(Signal::L2DataMisses, 1)];
    assert_eq!(count_in(9, counting(L2D_MISSES, 0, &[]), spans()), 10);
    assert_eq!(count_in(10, counting(L2D_MISSES, 0, &[]), spans()), 0);
}

#[test]
fn unmapped_events_count_nothing() {
    // Codes Table 4-42 gives no event.
    let everything = Signal::ALL.iter().fold(span(0, USER, 10), |s, &sig| s.with(sig, 1));
    for code in [0x21, 0xff] {
        assert!(mapped_event(code as u8).is_none(), "{code:#x}");
        assert_eq!(count4(counting(code, 0, &[]), vec![everything]), 0, "{code:#x}");
    }
}

#[test]
fn table_4_42_types_and_max_increments_are_kept_with_the_mapping() {
    // Spot checks against Table 4-42, and MD26's two corrections.
    let row = |code: u8| mapped_event(code).unwrap();
    for (code, ty, max) in [
        (0x08, EventType::Active, 6),
        (0x12, EventType::Causal, 1),
        (0x5b, EventType::Active, 3),
        (0x8a, EventType::SelfFloating, 1),
        (0xc1, EventType::Active, 4),
        (0xe6, EventType::Floating, 4),
        (0xcb, EventType::Floating, 1),
        (0x18, EventType::Causal, 1),
    ] {
        assert_eq!((row(code).ty, row(code).max_inc), (ty, max), "{}", row(code).name);
    }
    let mut codes: Vec<u8> = EVENTS.iter().map(|e| e.code).collect();
    codes.dedup();
    assert_eq!(codes.len(), EVENTS.len(), "one row per code, in code order");
    assert!(codes.windows(2).all(|w| w[0] < w[1]));
}

#[test]
fn a_built_in_workload_counts_its_own_totals_on_each_thread() {
    // Two threads of `mixed` on the Montecito machine: each thread's duplicated and
    // banked counters see its own instructions and cycles, whatever the other does.
    let cycles = 3_000_000;
    let cat = pmukit_arch::Catalog::builtin();
    let opts = pmukit_sim::stat::StatOptions { workload: "mixed".into(), seed: 11, threads: Some(2), ..Default::default() };
    let blocks = || pmukit_sim::stat::blocks(&[cat.pmu("montecito").unwrap()], &opts, pmukit_sim::stat::Reads::ALL).unwrap().0.every();
    let mut m = core();
    for t in 0..2 {
        m.write_pmc(t, 4, counting(IA64_INST_RETIRED, 0, &[])).unwrap();
        m.write_pmc(t, 12, counting(CPU_OP_CYCLES, 0, &[])).unwrap();
        m.write_pmc(t, 5, counting(CPU_OP_CYCLES, 0, &[("all", 1)])).unwrap();
    }
    let mut s = Cursor::new(blocks());
    assert_eq!(engine::run(&mut m, &mut s, cycles), (cycles, Exit::Budget));
    for t in 0..2u8 {
        let totals = pmukit_sim::stream::Totals::of(blocks(), cycles, |s| s.thread == t);
        assert!(totals.cycles > 0);
        let n = usize::from(t);
        assert_eq!(pmd(&m, n, 4), totals.get(Signal::Instructions), "thread {t}");
        assert_eq!(pmd(&m, n, 12), totals.cycles, "thread {t}");
        assert_eq!(pmd(&m, n, 5), cycles, "thread {t}: .all sees both threads' cycles");
    }
}

// ------------------------------------------------------------------- any traffic

#[derive(Debug, Clone)]
enum Op {
    WritePmc(usize, usize, u64),
    ReadPmc(usize, usize),
    WritePmd(usize, usize, u64),
    ReadPmd(usize, usize),
    SetPsr(usize, u64),
    WritePmv(usize, u64),
    TakeInterrupt(usize),
    Run(u16),
}

fn op() -> impl proptest::strategy::Strategy<Value = Op> {
    use proptest::prelude::*;
    let thread = 0usize..3;
    let index = prop_oneof![0usize..16, 30usize..66, any::<usize>()];
    // PMC values: mapped events with random ev, oi, pm and all, or anything.
    let codes: Vec<u64> = EVENTS.iter().map(|e| u64::from(e.code)).collect();
    let value = prop_oneof![
        (proptest::sample::select(codes), 0u64..16, 0u64..8, 0u64..16, 0u64..16).prop_map(|(es, umask, threshold, mesi, low)| {
            counting(es, umask, &[("threshold", threshold), ("MESI", mesi)]) | (low & 0b111) << 4 | (low >> 3 & 1) << 26
        }),
        prop_oneof![Just(u64::MAX), Just((1 << 47) - 3), Just(1 << 47), Just(1)],
        any::<u64>(),
    ];
    let psr_value = prop_oneof![
        (0u64..4, 0u64..2, 0u64..2, 0u64..2).prop_map(|(cpl, up, pp, sp)| psr(&[("cpl", cpl), ("up", up), ("pp", pp), ("sp", sp)])),
        any::<u64>(),
    ];
    prop_oneof![
        (thread.clone(), index.clone(), value.clone()).prop_map(|(t, i, v)| Op::WritePmc(t, i, v)),
        (thread.clone(), index.clone()).prop_map(|(t, i)| Op::ReadPmc(t, i)),
        (thread.clone(), index.clone(), value.clone()).prop_map(|(t, i, v)| Op::WritePmd(t, i, v)),
        (thread.clone(), index).prop_map(|(t, i)| Op::ReadPmd(t, i)),
        (thread.clone(), psr_value).prop_map(|(t, v)| Op::SetPsr(t, v)),
        (thread.clone(), value).prop_map(|(t, v)| Op::WritePmv(t, v)),
        thread.prop_map(Op::TakeInterrupt),
        (1u16..3000).prop_map(Op::Run),
    ]
}

/// Every signal, on both threads, at every privilege level, with data references.
fn everything() -> Cursor {
    let all = |s: Span| Signal::ALL.iter().fold(s, |s, &sig| s.with(sig, 1)).with(Signal::Instructions, 7);
    stream(vec![
        at(all(span(0, USER, 13)), 0x180, false),
        span(1, Privilege::Hyper, 7),
        at(all(span(1, KERNEL, 5)), 0x4000_0080, true),
        all(span(0, Privilege::Cpl2, 3)),
        span(3, USER, 2),
    ])
}

proptest::proptest! {
    /// Any sequence of register accesses (any thread, index, value, CPL), PSR and PMV
    /// changes, runs and interrupt takes never panics; a failing access changes nothing;
    /// PMD reads always copy bit 46 into bits 63:47.
    #[test]
    fn any_register_traffic_is_safe(ops in proptest::collection::vec(op(), 1..60)) {
        let mut m = core();
        let mut s = everything();
        for op in ops {
            let before = m.clone();
            let failed = match op {
                Op::WritePmc(t, i, v) => m.write_pmc(t, i, v).is_err(),
                Op::ReadPmc(t, i) => m.read_pmc(t, i).is_err(),
                Op::WritePmd(t, i, v) => m.write_pmd(t, i, v).is_err(),
                Op::ReadPmd(t, i) => match m.read_pmd(t, i) {
                    Ok(v) => {
                        if (4..=15).contains(&i) {
                            let high = v >> 46;
                            proptest::prop_assert!(high == 0 || high == (1 << 18) - 1, "{:#x}", v);
                        }
                        false
                    }
                    Err(_) => true,
                },
                Op::SetPsr(t, v) => m.set_psr(t, v).is_err(),
                Op::WritePmv(t, v) => m.write_pmv(t, v).is_err(),
                Op::TakeInterrupt(t) => m.take_interrupt(t).is_err(),
                Op::Run(n) => {
                    engine::run(&mut m, &mut s, u64::from(n));
                    false
                }
            };
            if failed {
                proptest::prop_assert_eq!(&m, &before, "a failing operation changes nothing");
            }
        }
    }
}

/// The model's mapping agrees with the event table (data/montecito/events.toml) on
/// every mapped event's name, code, MT type, maximum increment and MESI capability, so
/// the two transcriptions of Table 4-42 cannot drift apart.
#[test]
fn the_models_event_facts_match_the_event_table() {
    let cat = pmukit_arch::Catalog::builtin();
    let pmu = cat.pmu("montecito").unwrap();
    for m in pmukit_sim::models::montecito::EVENTS {
        let e = pmu.table.find(m.name).unwrap_or_else(|| panic!("{} is not in the table", m.name));
        assert_eq!(e.code, u64::from(m.code), "{}", m.name);
        assert_eq!(e.attr("mt"), Some(m.ty.letter().to_string().as_str()), "{} type", m.name);
        assert_eq!(e.attr("max_inc").and_then(|v| v.parse::<u8>().ok()), Some(m.max_inc), "{} max inc", m.name);
        assert_eq!(e.modifiers.iter().any(|x| x == "mesi"), m.mesi, "{} MESI", m.name);
    }
}

#[test]
fn tables_4_87_4_91_4_94_4_95_bypasses_and_their_cancels() {
    // One cycle with two bypassing hits (first and second path), one that lost its
    // bank, a bypassing miss the L3 served, and an uncacheable request's cancelled
    // L3 access (MMC36), 10 cycles long.
    let s = span(0, USER, 10)
        .with(Signal::L2dBypassL1d, 1)
        .with(Signal::L2dBypassL1w, 1)
        .with(Signal::L2dBankConflicts, 1)
        .with(Signal::L3DataBypasses, 1)
        .with(Signal::L3BypassAttributeCancels, 1)
        .with(Signal::L2dRecirculateCancels, 1);
    const L2D_BYPASS: u64 = 0xe4;
    const L2D_L3ACCESS_CANCEL: u64 = 0xe8;
    const L2D_OZQ_CANCELS0: u64 = 0xe0;
    const L2D_OZQ_CANCELS1: u64 = 0xe2;
    let count = |es, umask| count4(counting(es, umask, &[]), vec![s]);
    // Table 4-87: bits 1:0 L2_DATA1, L2_DATA2, L3_DATA1; 11 counts nothing.
    assert_eq!([0b00, 0b01, 0b10, 0b11].map(|u| count(L2D_BYPASS, u)), [10, 10, 10, 0]);
    // Table 4-91 (max 1 a cycle): INV_L3_BYP the bypassing hits' L3 accesses,
    // SPEC_L3_BYP the uncacheable one's, ANY either; ER_REJECT and the snoop cases 0.
    assert_eq!([0b000, 0b001, 0b010, 0b011, 0b100, 0b111].map(|u| count(L2D_L3ACCESS_CANCEL, u)), [10, 10, 10, 0, 0, 0]);
    // P2_COV_SNP_TEM a snoop's tag error (MMC67), P2_COV_SNP_FILL_NOSNP a snoop beside
    // its line's fill (MMC51): neither is an L3 access of a bypass (ANY).
    let snoops = span(0, USER, 7).with(Signal::L2dSnoopTagErrors, 1).with(Signal::L2dSnoopFillConflicts, 1);
    let by_snoops = |umask| count4(counting(L2D_L3ACCESS_CANCEL, umask, &[]), vec![snoops]);
    assert_eq!([0b100, 0b110, 0b010, 0b101, 0b111].map(by_snoops), [7, 7, 0, 0, 0]);
    // Table 4-94: RECIRC and BANK_CONF; Table 4-95: ANY is every cancel (max 4), the
    // uncacheable request's speculative bypass among them, which LATE_SPEC_BYP counts
    // alone (MMC70).
    assert_eq!([0b0000, 0b1000, 0b0110].map(|u| count(L2D_OZQ_CANCELS0, u)), [10, 10, 0]);
    assert_eq!([0b00, 0b01].map(|u| count(L2D_OZQ_CANCELS1, u)), [30, 10]);
}

/// Table 4-94's store matches by stage (MMC37) and ordering cancels (REL, SEMA,
/// MISC_ORDER; MMC38), with Table 4-95's ANY counting them among every cancel; and
/// L2D_OZQ_RELEASE, the cycles a release is in the OzQ however many are (§4.15,
/// max 1).
#[test]
fn tables_4_94_4_95_store_matches_and_ordering_cancels() {
    const L2D_OZQ_CANCELS0: u64 = 0xe0;
    const L2D_OZQ_CANCELS1: u64 = 0xe2;
    const L2D_OZQ_RELEASE: u64 = 0xe5;
    let s = span(0, USER, 10)
        .with(Signal::L2dStoreMatchL2m, 1)
        .with(Signal::L2dStoreMatchL2c, 1)
        .with(Signal::L2dReleaseCancels, 1)
        .with(Signal::L2dSemaphoreCancels, 1)
        .with(Signal::L2dMiscOrderCancels, 1)
        .with(Signal::L2dOzqReleaseLive, 2);
    let count = |es, umask| count4(counting(es, umask, &[]), vec![s]);
    // RECIRC, CANC_L2M_TO_L2C_ST, L2A/L2M/L2D/L2C_ST_MAT, ACQ, REL, BANK_CONF, SEMA,
    // OVER_SUB, OZQ_PREEMPT, WB_CONF, MISC_ORDER, FILL_ST_CONF, OZDATA_CONF.
    let by_reason: Vec<u64> = (0..16).map(|u| count(L2D_OZQ_CANCELS0, u)).collect();
    assert_eq!(by_reason, [0, 0, 0, 10, 0, 10, 0, 10, 0, 10, 0, 0, 0, 10, 0, 0]);
    assert_eq!(count(L2D_OZQ_CANCELS1, 0b00), 40, "ANY: the five cancels of each cycle, at most 4 (its maximum increment)");
    assert_eq!(count(L2D_OZQ_RELEASE, 0), 10, "two releases in the OzQ are one cycle with a release");
}

/// Table 4-46 (MMC47): a wait for a load the L2D cancelled is a GRALL bubble and a
/// CANCEL one, which ARCR_PR_CANCEL_BANK holds too; GRGR and PR have none.
#[test]
fn table_4_46_a_cancelled_loads_wait_is_cancel() {
    const BE_EXE_BUBBLE: u64 = 0x02;
    let wait = |cycles| span(0, USER, cycles).with(Signal::DataDepStallCycles, 1);
    let spans = vec![wait(10), wait(100).with(Signal::CancelledLoadCycles, 1)];
    let count = |umask| count4(counting(BE_EXE_BUBBLE, umask, &[]), spans.clone());
    // ALL, GRALL, PR, GRGR, CANCEL, ARCR_PR_CANCEL_BANK.
    assert_eq!([0b0000, 0b0001, 0b0011, 0b0101, 0b0110, 0b1000].map(count), [110, 110, 0, 0, 100, 100]);
}

/// Tables 4-46 and 4-50: an interruption's bank switches, its RSE AR dependency and
/// `loadrs` (MMC39) count under their own unit masks, each bubble cycle once.
#[test]
fn tables_4_46_4_50_bank_switches_ar_dependencies_and_loadrs() {
    const BE_RSE_BUBBLE: u64 = 0x01;
    const BE_EXE_BUBBLE: u64 = 0x02;
    let stall = |signal, cycles| span(0, KERNEL, cycles).with(signal, 1);
    let spans = vec![
        stall(Signal::BankSwitchStallCycles, 1),
        stall(Signal::RseArDepStallCycles, 10),
        stall(Signal::RseLoadrsStallCycles, 100),
        stall(Signal::RseBankSwitchStallCycles, 1000),
    ];
    let count = |es, umask| count4(counting(es, umask, &[]), spans.clone());
    // BE_RSE_BUBBLE: ALL, BANK_SWITCH, AR_DEP, OVERFLOW, UNDERFLOW, LOADRS.
    assert_eq!([0b000, 0b001, 0b010, 0b011, 0b100, 0b101].map(|u| count(BE_RSE_BUBBLE, u)), [1110, 1000, 10, 0, 0, 100]);
    // BE_EXE_BUBBLE: ALL, ARCR, BANK_SWITCH, ARCR_PR_CANCEL_BANK.
    assert_eq!([0b0000, 0b0100, 0b0111, 0b1000].map(|u| count(BE_EXE_BUBBLE, u)), [1, 0, 1, 1]);
}

/// Tables 4-74, 4-75, 4-79 and 4-49 for the perfect-loop prediction's wait (MMC43),
/// the branch-register interlock (MMC45) and a loop entry's branch initialization
/// (MMC65): a front-end stall for the loop count is FE_BUBBLE's BRANCH (in GROUP1 and
/// GROUP3) and PLP at the instruction buffer's entrance and exit and at the back end,
/// two bundles a cycle, one for the link register BRANCH and BR_ILOCK, one for a
/// `brp.loop.imp` BRANCH and BI; a cycle with an instruction-cache stall too is
/// IMISS's, and one with the loop count's wait too PLP's, which §4.15's order puts
/// first.
#[test]
fn tables_4_74_and_4_75_branch_recirculates_are_plp_br_ilock_and_bi() {
    let plp = span(0, USER, 7).with(Signal::IBufStallCycles, 1).with(Signal::LoopCountStallCycles, 1);
    let both = span(0, USER, 100).with(Signal::IBufStallCycles, 1).with(Signal::LoopCountStallCycles, 1).with(Signal::ICacheStallCycles, 1);
    let ilock = span(0, USER, 1000).with(Signal::IBufStallCycles, 1).with(Signal::BranchInterlockCycles, 1);
    let bi = span(0, USER, 10_000).with(Signal::IBufStallCycles, 1).with(Signal::BranchInitCycles, 1);
    let bi_plp =
        span(0, USER, 100_000).with(Signal::IBufStallCycles, 1).with(Signal::BranchInitCycles, 1).with(Signal::LoopCountStallCycles, 1);
    let count = |es, umask| count4(counting(es, umask, &[]), vec![plp, both, ilock, bi, bi_plp]);
    // FE_BUBBLE: ALL, GROUP1, IMISS, BRANCH, GROUP3, ALLBUT_FEFLUSH_BUBBLE, BUBBLE.
    assert_eq!([0x0, 0x3, 0x6, 0x9, 0xa, 0xb, 0xd].map(|u| count(0x71, u)), [111_107, 111_007, 100, 111_007, 111_007, 111_107, 0]);
    // FE_LOST_BW, BE_LOST_BW_DUE_TO_FE, IDEAL_BE_LOST_BW_DUE_TO_FE: PLP (b1011),
    // BR_ILOCK (b1100, MMC45), BI (b1001, MMC65), and BRQ (b1010) none.
    for es in [0x70, 0x72, 0x73] {
        assert_eq!([0xb, 0xc, 0x9, 0xa].map(|u| count(es, u)), [200_014, 2000, 20_000, 0], "{es:#x}");
    }
}

/// Tables 4-74, 4-75, 4-79 and 4-49 for the branch retirement queue (MMC78): behind
/// a stalled back end (an L1D stall counting LsuFullStallCycles), cycles the front end
/// stops for the queue (`IBufFullCycles` = IBUF_BRQ_FULL) are FE_BUBBLE's BRANCH (in
/// GROUP1, GROUP3 and ALLBUT_IBFULL) and FE_LOST_BW's BRQ, two bundles a cycle; the
/// buffer holds the bundles fetched, so IDEAL_BE_LOST_BW_DUE_TO_FE and
/// BE_LOST_BW_DUE_TO_FE lose none, as for a full buffer (IBUF_FULL: FE_BUBBLE's and
/// FE_LOST_BW's IBFULL).
#[test]
fn tables_4_74_and_4_75_the_branch_retirement_queue_stalls_behind_the_back_end() {
    let stalled = |flag: u8, cycles| {
        span(0, USER, cycles).with(Signal::LsuFullStallCycles, 1).with(Signal::IBufStallCycles, 1).with(Signal::IBufFullCycles, flag)
    };
    let count = |es, umask| count4(counting(es, umask, &[]), vec![stalled(IBUF_BRQ_FULL, 7), stalled(IBUF_FULL, 100)]);
    // FE_BUBBLE: ALL, GROUP1, IBFULL, BRANCH, GROUP3, ALLBUT_IBFULL.
    assert_eq!([0x0, 0x3, 0x5, 0x9, 0xa, 0xc].map(|u| count(0x71, u)), [107, 7, 100, 7, 7, 7]);
    // FE_LOST_BW: ALL, BRQ (b1010), IBFULL (b0101).
    assert_eq!([0x0, 0xa, 0x5].map(|u| count(0x70, u)), [214, 14, 200]);
    for es in [0x72, 0x73] {
        assert_eq!([0x0, 0xa].map(|u| count(es, u)), [0, 0], "{es:#x}");
    }
}

/// Table 4-86 (MMC66): L2D_BAD_LINES_SELECTED counts the valid lines L2D fills
/// replaced while their set had an invalid way, up to Max Inc/Cyc 4 a cycle, under
/// ANY (b0xxx); b1xxx is not defined.
#[test]
fn table_4_86_bad_lines_selected() {
    const L2D_BAD_LINES_SELECTED: u64 = 0xec;
    let spans = vec![
        span(0, USER, 10).with(Signal::Instructions, 1).with(Signal::L2dBadLinesSelected, 1),
        span(0, USER, 1).with(Signal::Instructions, 2).with(Signal::L2dBadLinesSelected, 2),
    ];
    let count = |umask| count4(counting(L2D_BAD_LINES_SELECTED, umask, &[]), spans.clone());
    assert_eq!([0b0000, 0b0111].map(count), [12, 12]);
}

/// Table 4-48 (MMC68): a bubble cycle the L1D holds an ar.unat read in counts under
/// ALL, L1D and L1D_AR_CR, and under none of the pipeline's other conflicts.
#[test]
fn table_4_48_ar_cr_stalls() {
    use pmukit_sim::stream::L1dConflict;
    const BE_L1D_FPU_BUBBLE: u64 = 0xca;
    let spans = vec![
        span(0, KERNEL, 3).with(Signal::LsuFullStallCycles, 1).with(Signal::L1dConflict, L1dConflict::ArCr as u8),
        span(0, KERNEL, 1).with(Signal::Instructions, 1),
    ];
    let count = |umask| count4(counting(BE_L1D_FPU_BUBBLE, umask, &[]), spans.clone());
    assert_eq!([0b0000, 0b0010, 0b1000, 0b0100, 0b0111, 0b1011].map(count), [3, 3, 3, 0, 0, 0]);
}

/// Table 4-93 (MMC69): L2D_OZDB_FULL counts the cycles the OzQ's data buffer is full
/// under THIS (b0000); the other unit masks' count is undefined and counts nothing.
#[test]
fn table_4_93_ozdb_full() {
    const L2D_OZDB_FULL: u64 = 0xe9;
    let spans = vec![span(0, USER, 7).with(Signal::L2dOzdbFull, 2), span(0, USER, 3).with(Signal::Instructions, 1)];
    let count = |umask| count4(counting(L2D_OZDB_FULL, umask, &[]), spans.clone());
    assert_eq!([0b0000, 0b0001, 0b1111].map(count), [7, 0, 0]);
}

/// Table 4-42 (MMC73): ER_REJECT_ALL_L1D_REQ counts the cycles the BRQ rejects L1D
/// requests for an L1I request's forward progress, ER_REJECT_ALL_L1I_REQ the other
/// way round (both when requests of both L1s wait), and ER_REJECT_ALL_L1_REQ (the
/// "Big Hammer") the cycles it rejects every L1 request for the writes' progress.
#[test]
fn table_4_42_er_reject_all() {
    let [l1, l1d, l1i]: [u64; 3] = [0xbc, 0xbd, 0xbe];
    let spans = vec![
        span(0, USER, 2).with(Signal::BrqRejecting, 0b001),
        span(0, USER, 3).with(Signal::BrqRejecting, 0b010),
        span(0, USER, 5).with(Signal::BrqRejecting, 0b011),
        span(0, USER, 11).with(Signal::BrqRejecting, 0b100),
        span(0, USER, 13).with(Signal::BrqRejecting, 0b101),
        span(0, USER, 7).with(Signal::Instructions, 1),
    ];
    let count = |event| count4(counting(event, 0, &[]), spans.clone());
    assert_eq!([l1d, l1i, l1].map(count), [2 + 5 + 13, 3 + 5, 11 + 13]);
}

/// Table 4-91 (MMC75): L2D_L3ACCESS_CANCEL.TAIL_TRANS_DIS counts the cycles the BRQ
/// rejects L1 requests for forward progress, for any kind of wait, once a cycle, and
/// no other mask counts them.
#[test]
fn table_4_91_tail_trans_dis() {
    const L2D_L3ACCESS_CANCEL: u64 = 0xe8;
    let spans = vec![
        span(0, USER, 2).with(Signal::BrqRejecting, 0b001),
        span(0, USER, 3).with(Signal::BrqRejecting, 0b010),
        span(0, USER, 5).with(Signal::BrqRejecting, 0b111),
        span(0, USER, 11).with(Signal::BrqRejecting, 0b100),
        span(0, USER, 7).with(Signal::Instructions, 1),
    ];
    let count = |umask| count4(counting(L2D_L3ACCESS_CANCEL, umask, &[]), spans.clone());
    assert_eq!([0b111, 0b000, 0b010, 0b011, 0b110].map(count), [2 + 3 + 5 + 11, 0, 0, 0, 0]);
}

/// Table 4-90 (MMC74): L2D_FORCE_RECIRC.TRAN_PREF counts the misses transformed into
/// prefetches, and no other mask counts them.
#[test]
fn table_4_90_transformed_prefetches() {
    const L2D_FORCE_RECIRC: u64 = 0xea;
    let spans = vec![span(0, USER, 3).with(Signal::L2dTransformedPrefetches, 2)];
    let count = |umask| count4(counting(L2D_FORCE_RECIRC, umask, &[]), spans.clone());
    assert_eq!([0b0101, 0b0000, 0b0100, 0b0110, 0b1111].map(count), [6, 0, 0, 0, 0]);
}

/// Table 4-90 (MMC71): L2D_FORCE_RECIRC.SNP_OR_L3 counts the OzQ's requests a snoop
/// forced to recirculate, four a cycle at most (Table 4-42's Max Inc/Cyc), and no
/// other mask counts them.
#[test]
fn table_4_90_snoops_force_recirculates() {
    const L2D_FORCE_RECIRC: u64 = 0xea;
    let spans = vec![span(0, USER, 1).with(Signal::L2dSnoopRecirculates, 3), span(0, USER, 1).with(Signal::L2dSnoopRecirculates, 6)];
    let count = |umask| count4(counting(L2D_FORCE_RECIRC, umask, &[]), spans.clone());
    assert_eq!([0b0110, 0b0000, 0b0100, 0b0101, 0b1111].map(count), [7, 0, 0, 0, 0]);
}

/// Table 4-42 (MD59): TAGGED_L2D_RETURN_PORT counts the cycles the L2D returns data
/// to the core, one a cycle: an integer load's the L1D missed, a cacheable FP load's,
/// a cacheable semaphore's; not a store's, an L1D hit's or an uncacheable load's.
#[test]
fn table_4_42_tagged_l2d_return_port() {
    const TAGGED_L2D_RETURN_PORT: u64 = 0xee;
    let spans = vec![
        at(span(0, USER, 2).with(Signal::Loads, 2).with(Signal::DCacheMisses, 2), 0x1000, false),
        span(0, USER, 3).with(Signal::FpLoads, 2).with(Signal::Atomics, 1),
        span(0, USER, 4).with(Signal::FpLoads, 1).with(Signal::UncachedFpLoads, 1),
        at(span(0, USER, 5).with(Signal::Loads, 1), 0x1000, false),
        at(span(0, USER, 6).with(Signal::Stores, 1), 0x1000, true),
    ];
    assert_eq!(count4(counting(TAGGED_L2D_RETURN_PORT, 0, &[]), spans), 5);
}

/// SPEC_LOADS_NATTED (Table 4-125) over `spans` under each of its masks: ALL,
/// VHPT_MISS, DEF_TLB_MISS, DEF_TLB_FAULT, NAT_CNSM, DEF_PSR_ED.
fn natted(spans: &[Span]) -> [u64; 6] {
    const SPEC_LOADS_NATTED: u64 = 0xd9;
    [0b0000, 0b0001, 0b0010, 0b0011, 0b0100, 0b0101].map(|umask| count4(counting(SPEC_LOADS_NATTED, umask, &[]), spans.to_vec()))
}

/// Table 4-125 (MMC42): SPEC_LOADS_NATTED counts the integer speculative loads that
/// returned a NaT, by cause: the OS's PSR.ed (DEF_PSR_ED) and a NaT address (NAT_CNSM);
/// the hardware deferrals (VHPT_MISS, DEF_TLB_MISS, DEF_TLB_FAULT) count none.
#[test]
fn table_4_125_spec_loads_natted() {
    use pmukit_sim::stream::{SPEC_NAT_CONSUMED, SPEC_NAT_PSR_ED};
    let spans = vec![
        span(0, USER, 1).with(Signal::Instructions, 2).with(Signal::Loads, 2).with(Signal::SpecNat, SPEC_NAT_PSR_ED | SPEC_NAT_CONSUMED),
        span(0, USER, 10).with(Signal::Instructions, 1).with(Signal::Loads, 1).with(Signal::SpecNat, SPEC_NAT_PSR_ED),
        span(0, USER, 100).with(Signal::Instructions, 1).with(Signal::Loads, 1),
    ];
    // A span's signals count in each of its cycles.
    assert_eq!(natted(&spans), [12, 0, 0, 0, 1, 11]);
}

/// Table 4-125's DEF_TLB_MISS (a NaT the hardware deferred for a walk that found no
/// translation, under a hypervisor's DCR.dm, MMC77) beside a NaT address; VHPT_MISS
/// counts none.
#[test]
fn table_4_125_def_tlb_miss() {
    use pmukit_sim::stream::{SPEC_NAT_CONSUMED, SPEC_NAT_TLB_MISS};
    let spans = vec![
        span(0, USER, 1).with(Signal::Instructions, 2).with(Signal::Loads, 2).with(Signal::SpecNat, SPEC_NAT_TLB_MISS | SPEC_NAT_CONSUMED),
        span(0, USER, 10).with(Signal::Instructions, 1).with(Signal::Loads, 1).with(Signal::SpecNat, SPEC_NAT_TLB_MISS),
    ];
    assert_eq!(natted(&spans), [12, 0, 11, 0, 1, 0]);
}

/// Table 4-125's DEF_TLB_FAULT (a NaT the hardware deferred for a page not present,
/// MMC55) beside the other flags, and Table 4-82's INST_FAILED_CHKS_RETIRED masks
/// (bits 1:0: INT, FP, ALL; bxx00 counts nothing).
#[test]
fn table_4_125_def_tlb_fault_and_table_4_82_failed_checks() {
    use pmukit_sim::stream::{FAILED_CHECK_FP, FAILED_CHECK_INT, SPEC_NAT_CONSUMED, SPEC_NAT_TLB_FAULT};
    const INST_FAILED_CHKS_RETIRED: u64 = 0x55;
    let spans = vec![
        span(0, USER, 1).with(Signal::Instructions, 2).with(Signal::Loads, 2).with(Signal::SpecNat, SPEC_NAT_TLB_FAULT | SPEC_NAT_CONSUMED),
        span(0, USER, 10).with(Signal::Instructions, 1).with(Signal::FailedChecks, FAILED_CHECK_INT),
        span(0, USER, 100).with(Signal::Instructions, 1).with(Signal::FailedChecks, FAILED_CHECK_FP),
    ];
    assert_eq!(natted(&spans), [2, 0, 0, 1, 1, 0]);
    let failed = |umask| count4(counting(INST_FAILED_CHKS_RETIRED, umask, &[]), spans.clone());
    assert_eq!([0b0000, 0b0001, 0b0010, 0b0011].map(failed), [0, 10, 100, 110]);
}

/// Table 4-104, L2I_UC_READS (MMC57, MMC76): uncacheable demand fetches count under
/// MISS and ALL with DMND or ALL, the next-line prefetcher's reads with PFTCH or ALL,
/// one a cycle; no cache holds them (HIT); L2I_DEMAND_READS counts the demand fetches
/// with the L1I's misses.
#[test]
fn table_4_104_uncacheable_code_reads() {
    use pmukit_sim::stream::{UNCACHED_DEMAND, UNCACHED_PREFETCH};
    const L2I_UC_READS: u64 = 0x79;
    const L2I_DEMAND_READS: u64 = 0x42;
    let spans = vec![
        span(0, KERNEL, 1).with(Signal::UncachedFetches, UNCACHED_DEMAND).with(Signal::ICacheStallCycles, 1),
        span(0, KERNEL, 3).with(Signal::UncachedFetches, UNCACHED_PREFETCH),
        span(0, KERNEL, 5).with(Signal::UncachedFetches, UNCACHED_DEMAND | UNCACHED_PREFETCH),
        span(0, KERNEL, 10).with(Signal::ICacheMisses, 1).with(Signal::ICacheStallCycles, 1),
    ];
    let uc = |umask| count4(counting(L2I_UC_READS, umask, &[]), spans.clone());
    // HIT.DMND, HIT.PFTCH, HIT.ALL, MISS.DMND, MISS.PFTCH, MISS.ALL, ALL.DMND, ALL.PFTCH, ALL.ALL.
    let masks = [0b0101, 0b0110, 0b0111, 0b1001, 0b1010, 0b1011, 0b1101, 0b1110, 0b1111];
    assert_eq!(masks.map(uc), [0, 0, 0, 1 + 5, 3 + 5, 1 + 3 + 5, 1 + 5, 3 + 5, 1 + 3 + 5]);
    assert_eq!(count4(counting(L2I_DEMAND_READS, 0, &[]), spans), 1 + 5 + 10);
}

/// §4.15 MISALIGNED_LOADS_RETIRED and MISALIGNED_STORES_RETIRED (MMC56): the
/// misaligned reads and writes the hardware performed, however a cycle's group mixes
/// loads and stores (MMC1); a semaphore is both; a trapped one is not counted (the
/// machine sets no signal for it).
#[test]
fn s4_15_misaligned_accesses_count_as_reads_and_writes() {
    const MISALIGNED_LOADS_RETIRED: u64 = 0xce;
    const MISALIGNED_STORES_RETIRED: u64 = 0xd2;
    let spans = vec![
        span(0, USER, 1).with(Signal::Instructions, 2).with(Signal::Loads, 2).with(Signal::MisalignedReads, 1),
        span(0, USER, 10).with(Signal::Instructions, 1).with(Signal::Stores, 1).with(Signal::MisalignedWrites, 1),
        // A semaphore.
        span(0, USER, 100)
            .with(Signal::Instructions, 1)
            .with(Signal::Loads, 1)
            .with(Signal::Stores, 1)
            .with(Signal::MisalignedReads, 1)
            .with(Signal::MisalignedWrites, 1),
        // An aligned load beside a misaligned store.
        span(0, USER, 1000).with(Signal::Instructions, 2).with(Signal::Loads, 1).with(Signal::Stores, 1).with(Signal::MisalignedWrites, 1),
    ];
    assert_eq!(count4(counting(MISALIGNED_LOADS_RETIRED, 0, &[]), spans.clone()), 101);
    assert_eq!(count4(counting(MISALIGNED_STORES_RETIRED, 0, &[]), spans), 1110);
}

/// Tables 4-51 to 4-54 for indirect jumps predicated on a condition (MMC41), the
/// NRETIND masks: in one cycle a predicated-off jump predicted taken, forced in the
/// next (an unknown prediction that was right), a jump predicted not taken that was
/// taken, and one predicted rightly to a wrong target.
#[test]
fn tables_4_51_to_4_54_predicated_indirect_jumps() {
    const BR_PATH_PRED: u64 = 0x54;
    const BR_MISPRED_DETAIL2: u64 = 0x68;
    const BR_PATH_PRED2: u64 = 0x6a;
    let off = span(0, USER, 10)
        .with(Signal::Branches, 1)
        .with(Signal::IndirectBranches, 1)
        .with(Signal::IndirectNotTaken, 1)
        .with(Signal::IndirectMispredictsNotTaken, 1)
        .with(Signal::BranchMispredicts, 1);
    let forced = span(0, USER, 100)
        .with(Signal::Branches, 1)
        .with(Signal::IndirectBranches, 1)
        .with(Signal::IndirectNotTaken, 1)
        .with(Signal::UnknownIndirectNotTaken, 1);
    let late = span(0, USER, 1000)
        .with(Signal::Branches, 1)
        .with(Signal::BranchesTaken, 1)
        .with(Signal::IndirectBranches, 1)
        .with(Signal::IndirectMispredictsTaken, 1)
        .with(Signal::BranchMispredicts, 1);
    let target = span(0, USER, 10000)
        .with(Signal::Branches, 1)
        .with(Signal::BranchesTaken, 1)
        .with(Signal::IndirectBranches, 1)
        .with(Signal::IndirectMispredicts, 1)
        .with(Signal::BranchMispredicts, 1);
    let count = |es, umask| count4(counting(es, umask, &[]), vec![off, forced, late, target]);
    // BR_PATH_PRED.NRETIND: MISPRED_NOTTAKEN, MISPRED_TAKEN, OKPRED_NOTTAKEN, OKPRED_TAKEN;
    // ALL the same, IPREL and RETURN none of them.
    assert_eq!([0b1100, 0b1101, 0b1110, 0b1111].map(|u| count(BR_PATH_PRED, u)), [10, 1000, 100, 10000]);
    assert_eq!([0b0000, 0b0001, 0b0010, 0b0011].map(|u| count(BR_PATH_PRED, u)), [10, 1000, 100, 10000]);
    assert_eq!([0b0100, 0b0101, 0b0110, 0b0111, 0b1000, 0b1001, 0b1010, 0b1011].map(|u| count(BR_PATH_PRED, u)), [0; 8]);
    // BR_MISPRED_DETAIL.NRETIND: ALL_PRED, CORRECT_PRED, WRONG_PATH, WRONG_TARGET.
    assert_eq!([0b1100, 0b1101, 0b1110, 0b1111].map(|u| count(BR_MISPRED_DETAIL, u)), [11110, 100, 1010, 10000]);
    // BR_MISPRED_DETAIL2.NRETIND: ALL_UNKNOWN_PRED, UNKNOWN_PATH_CORRECT_PRED,
    // UNKNOWN_PATH_WRONG_PATH; BR_PATH_PRED2.NRETIND: UNKNOWNPRED_NOTTAKEN, _TAKEN.
    assert_eq!([0b1100, 0b1101, 0b1110].map(|u| count(BR_MISPRED_DETAIL2, u)), [100, 100, 0]);
    assert_eq!([0b1100, 0b1101].map(|u| count(BR_PATH_PRED2, u)), [100, 0]);
    // ALL_UNKNOWN_PRED and UNKNOWNPRED_NOTTAKEN of every type include it.
    assert_eq!([count(BR_MISPRED_DETAIL2, 0b0000), count(BR_PATH_PRED2, 0b0000)], [100, 100]);
}

/// Tables 4-51 to 4-54 for returns predicated on a condition (MMC40): in one cycle a
/// predicated-off return predicted taken, forced in the next (an unknown prediction
/// that was right), and a return predicted not taken that was taken.
#[test]
fn tables_4_51_to_4_54_predicated_returns() {
    const BR_PATH_PRED: u64 = 0x54;
    const BR_MISPRED_DETAIL2: u64 = 0x68;
    const BR_PATH_PRED2: u64 = 0x6a;
    let off = span(0, USER, 10)
        .with(Signal::Branches, 1)
        .with(Signal::Returns, 1)
        .with(Signal::ReturnsNotTaken, 1)
        .with(Signal::ReturnMispredictsNotTaken, 1)
        .with(Signal::BranchMispredicts, 1);
    let forced = span(0, USER, 100)
        .with(Signal::Branches, 1)
        .with(Signal::Returns, 1)
        .with(Signal::ReturnsNotTaken, 1)
        .with(Signal::UnknownReturnsNotTaken, 1);
    let late = span(0, USER, 1000)
        .with(Signal::Branches, 1)
        .with(Signal::BranchesTaken, 1)
        .with(Signal::Returns, 1)
        .with(Signal::ReturnMispredictsTaken, 1)
        .with(Signal::BranchMispredicts, 1);
    let count = |es, umask| count4(counting(es, umask, &[]), vec![off, forced, late]);
    // BR_PATH_PRED.RETURN: MISPRED_NOTTAKEN, MISPRED_TAKEN, OKPRED_NOTTAKEN, OKPRED_TAKEN;
    // ALL the same, IPREL none of them.
    assert_eq!([0b1000, 0b1001, 0b1010, 0b1011].map(|u| count(BR_PATH_PRED, u)), [10, 1000, 100, 0]);
    assert_eq!([0b0000, 0b0001, 0b0010, 0b0011].map(|u| count(BR_PATH_PRED, u)), [10, 1000, 100, 0]);
    assert_eq!([0b0100, 0b0101, 0b0110, 0b0111].map(|u| count(BR_PATH_PRED, u)), [0; 4]);
    // BR_MISPRED_DETAIL.RETURN: ALL_PRED, CORRECT_PRED, WRONG_PATH, WRONG_TARGET.
    assert_eq!([0b1000, 0b1001, 0b1010, 0b1011].map(|u| count(BR_MISPRED_DETAIL, u)), [1110, 100, 1010, 0]);
    // BR_MISPRED_DETAIL2.RETURN: ALL_UNKNOWN_PRED, UNKNOWN_PATH_CORRECT_PRED,
    // UNKNOWN_PATH_WRONG_PATH; BR_PATH_PRED2.RETURN: UNKNOWNPRED_NOTTAKEN, _TAKEN.
    assert_eq!([0b1000, 0b1001, 0b1010].map(|u| count(BR_MISPRED_DETAIL2, u)), [100, 100, 0]);
    assert_eq!([0b1000, 0b1001].map(|u| count(BR_PATH_PRED2, u)), [100, 0]);
}

/// Table 4-126: a re-steer to slot `k` of a bundle costs the issue group `k` syllables
/// (MLX, ERRATA MMC60), which come before the group's other losses; a window that
/// starts where the last group stopped inside a bundle loses the slots before it to
/// that stop's bucket (MMC64); a stop is charged by the bundle it is in, "a 6-syllable
/// (3-syllable) hit" inside the first (second) bundle, 3 at the first's end, and
/// Table 4-127's SYLL_OVERCOUNT counts what the charge, cut to keep the cycle within Max Inc/Cyc 5,
/// exceeds the loss by (MD38). The masks combine their reasons.
#[test]
fn table_4_126_charges_syllables_by_reason_and_table_4_127_counts_the_overcount() {
    const SYLL_NOT_DISPERSED: u64 = 0x4e;
    const SYLL_OVERCOUNT: u64 = 0x4f;
    let spans = vec![
        // Two skipped, three instructions, an architected stop inside the second
        // bundle: 2 MLX, 3 EXPL for a loss of 1, an overcount of 2.
        span(0, USER, 1).with(Signal::Instructions, 3).with(Signal::ResteerSyllables, 2).with(Signal::ExplicitStops, 1),
        // One skipped, a taken branch leaving a bundle unreached: 1 MLX, 3 FE, 1 IMPL.
        span(0, USER, 10).with(Signal::Instructions, 1).with(Signal::ResteerSyllables, 1).with(Signal::UnreachedBundles, 1),
        // A full group: nothing lost.
        span(0, USER, 100).with(Signal::Instructions, 6),
        // A stop inside the first bundle: 6 EXPL, cut to 5, for a loss of 4.
        span(0, USER, 1000).with(Signal::Instructions, 2).with(Signal::ExplicitStops, 1),
        // An implicit stop at the first bundle's end (a branch's bundle): 3 IMPL.
        span(0, USER, 10_000).with(Signal::Instructions, 3).with(Signal::ImplicitStops, 1),
        // A window starting a slot in, after an architected stop: 1 EXPL.
        span(0, USER, 100_000).with(Signal::Instructions, 5).with(Signal::LeadingSyllables, 1).with(Signal::LeadingExplicit, 1),
    ];
    let syll = |mask| count4(counting(SYLL_NOT_DISPERSED, mask, &[]), spans.clone());
    assert_eq!(syll(0b1000), 2 + 10);
    assert_eq!(syll(0b0001), 3 + 5000 + 100_000);
    assert_eq!(syll(0b0100), 30);
    assert_eq!(syll(0b0010), 10 + 30_000);
    assert_eq!(syll(0b1001), 5 + 10 + 5000 + 100_000);
    assert_eq!(syll(0b1111), 5 + 50 + 5000 + 30_000 + 100_000);
    assert_eq!(syll(0b0000), 0);
    let over = |mask| count4(counting(SYLL_OVERCOUNT, mask, &[]), spans.clone());
    assert_eq!([0b00, 0b01, 0b10, 0b11].map(over), [0, 2 + 1000, 0, 2 + 1000]);
    // §4.4: 6 × cycles that dispersed = INST_DISPERSED + SYLL_NOT_DISPERSED.ALL −
    // SYLL_OVERCOUNT.ALL.
    let dispersed = count4(counting(0x4d, 0, &[]), spans.clone());
    assert_eq!(6 * 111_111, dispersed + syll(0b1111) - over(0b11));
}
