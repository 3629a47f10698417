//! The SPARC T4 strand counter model under the hazards a driver must avoid (§10.2's
//! programming notes), and whatever register traffic arrives: one rule per test.

mod common;

use common::t4::*;
use pmukit_arch::sparc::t4::{counter_va, NTC, OV, PCR_ASI, PIC_ASI};
use pmukit_sim::models::t4::T4Core;
use pmukit_sim::stream::{Block, Cursor, Privilege, Signal, Span};

// ---------------------------------------------------------------- driver hazards

#[test]
fn s10_2_changing_sl_without_resetting_the_pic_carries_the_old_count_over() {
    // §10.2: "changing a field in the PCR does not directly affect a PIC value".
    let mut core = core_with(pcr(&[("sl", 3), ("mask", 0x04), ("ut", 1)]), 0);
    let mut s = stream(vec![busy(0, USER, 10)]);
    run(&mut core, &mut s, 100);
    set_pcr(&mut core, 0, 0, pcr(&[("sl", 26), ("ut", 1)]));
    run(&mut core, &mut s, 50);
    assert_eq!(read_pic(&mut core, 0, 0), 150, "100 loads + 50 cycles");
}

#[test]
fn s10_2_the_three_step_sequence_starts_the_new_event_clean() {
    // §10.2 steps 1-3: disable (sl = 0, ut = ht = st = 0), reset the PIC, enable.
    let mut core = core_with(pcr(&[("sl", 3), ("mask", 0x04), ("ut", 1)]), 0);
    let mut s = stream(vec![busy(0, USER, 10)]);
    run(&mut core, &mut s, 100);
    set_pcr(&mut core, 0, 0, pcr(&[]));
    set_pic(&mut core, 0, 0, 0);
    set_pcr(&mut core, 0, 0, pcr(&[("sl", 26), ("ut", 1)]));
    run(&mut core, &mut s, 50);
    assert_eq!(read_pic(&mut core, 0, 0), 50);
}

/// PCR0 counting hyperprivileged instructions (sl 3, mask 3F, ht) with PIC0 at
/// FFFF_FFFF, as in the Programming Note after Table 10-1.
fn about_to_wrap_on_the_next_instruction() -> (T4Core, u64) {
    let counting = pcr(&[("sl", 3), ("mask", 0x3F), ("ht", 1)]);
    (core_with(counting, minus(1)), counting)
}

#[test]
fn programming_note_a_pcr_write_that_wraps_the_pic_rewrites_ov_to_1() {
    // Programming Note after Table 10-1: "if the PCR write sets PCR.ov to zero, hardware
    // re-writes PCR.ov to one."
    let (mut core, counting) = about_to_wrap_on_the_next_instruction();
    set_pcr(&mut core, 0, 0, counting);
    let value = read_pcr(&mut core, 0, 0);
    assert_eq!(OV.get(value), 1);
    assert_eq!(NTC.get(value), 1, "the STXA is a next-to-commit instruction");
}

#[test]
fn programming_note_disabling_first_then_writing_again_leaves_ov_clear() {
    // Same note: "disabling counting with the first PCR write, then writing the PCR a
    // second time to ensure PCR.ov remains set to 0."
    let (mut core, counting) = about_to_wrap_on_the_next_instruction();
    set_pcr(&mut core, 0, 0, pcr(&[]));
    set_pcr(&mut core, 0, 0, counting);
    assert_eq!(OV.get(read_pcr(&mut core, 0, 0)), 0);
}

/// Write PCR0 with sl 28 mask `mask` twice in a row with PIC0 at `pic`, let the window
/// pass, and return (PIC0, PCR0.ov).
fn sl28_write_twice(pic: u64, mask: u64) -> (u64, u64) {
    let commit_0 = pcr(&[("sl", 28), ("mask", mask), ("ut", 1), ("st", 1)]);
    let mut core = core_with(pcr(&[]), pic);
    set_pcr(&mut core, 0, 0, commit_0);
    set_pcr(&mut core, 0, 0, commit_0 | pcr(&[("toe", 1)]));
    read_pic(&mut core, 0, 0);
    read_pic(&mut core, 0, 0);
    (read_pic(&mut core, 0, 0), OV.get(read_pcr(&mut core, 0, 0)))
}

#[test]
fn programming_note_sl_28_a_pcr_write_in_the_window_loses_ov() {
    // Programming Note (sl 28): with the PIC at -1, -2 or -3 and mask 01/02/03 "the PIC
    // increments within two cycles after the PCR is set. If software also tries to
    // write to the PCR during this period, it will overwrite the about-to-be-set ov."
    for pic in [minus(1), minus(2), minus(3)] {
        for mask in [0x01, 0x02, 0x03] {
            let (after, ov) = sl28_write_twice(pic, mask);
            assert!(after < pic, "the PIC wrapped ({pic:#x} -> {after:#x})");
            assert_eq!(ov, 0, "but ov was lost (PIC {pic:#x}, mask {mask:#x})");
        }
    }
}

#[test]
fn programming_note_sl_28_without_a_second_write_ov_is_set() {
    // The same increments set ov when no PCR write falls in the window.
    let commit_0 = pcr(&[("sl", 28), ("mask", 0x01), ("ut", 1)]);
    let mut core = core_with(pcr(&[]), minus(1));
    set_pcr(&mut core, 0, 0, commit_0);
    assert_eq!(read_pic(&mut core, 0, 0), minus(1), "one cycle later: not yet");
    read_pic(&mut core, 0, 0);
    assert_eq!(read_pic(&mut core, 0, 0), 2, "landed after two cycles");
    assert_eq!(OV.get(read_pcr(&mut core, 0, 0)), 1);
}

#[test]
fn programming_note_sl_28_the_window_is_two_core_cycles_whatever_the_lanes() {
    // "within two cycles": core cycles. A cycle in which other strands stall too is a
    // primary span with overlays, and passes once.
    let commit_0 = pcr(&[("sl", 28), ("mask", 0x01), ("ut", 1)]);
    let mut core = core_with(pcr(&[]), minus(1));
    set_pcr(&mut core, 0, 0, commit_0);
    let primary = span(1, USER, 1);
    let lanes = vec![primary, primary.lane(2), primary.lane(3)];
    run(&mut core, &mut Cursor::new(Box::new(std::iter::once(Block { body: lanes, repeat: 1 }))), 1);
    // The read is the second cycle: it sees the PIC before the increments land.
    assert_eq!(read_pic(&mut core, 0, 0), minus(1), "one core cycle of three lanes: not yet");
    assert_eq!(read_pic(&mut core, 0, 0), 2, "landed after two");
}

#[test]
fn programming_note_sl_28_a_pic_outside_minus_1_to_minus_3_avoids_the_race() {
    // "To avoid this situation, software should set the PIC outside of the range
    // -1..-3 inclusive": then ov is set exactly when the PIC wraps.
    for pic in [minus(4), minus(5), minus(6), minus(100), 0] {
        let (after, ov) = sl28_write_twice(pic, 0x01);
        assert_eq!(ov, u64::from(after < pic), "PIC {pic:#x} -> {after:#x}");
    }
}

#[test]
fn programming_note_clearing_ov_while_counting_asynchronous_events_can_be_overwritten() {
    // Programming Note: "To reliably clear PCRx.ov when counting asynchronous events
    // software should stop counting ... Otherwise, hardware may overwrite PCRx.ov if the
    // associated PIC overflows." Here PIC0 counts cycles (sl 26) in every mode and
    // overflows on the very cycle of the write that clears ov.
    let counting = pcr(&[("sl", 26), ("ut", 1), ("st", 1), ("ht", 1)]);
    let mut core = core_with(counting, minus(3));
    run(&mut core, &mut stream(vec![busy(0, USER, 10)]), 3);
    assert_eq!(OV.get(read_pcr(&mut core, 0, 0)), 1, "a first overflow");
    set_pic(&mut core, 0, 0, minus(1));
    set_pcr(&mut core, 0, 0, counting);
    assert_eq!(OV.get(read_pcr(&mut core, 0, 0)), 1, "cleared and overwritten at once");
    // Stopping first: the stopping write already counts by the new setting (nothing),
    // so the clearing write that follows sticks.
    set_pic(&mut core, 0, 0, minus(1));
    set_pcr(&mut core, 0, 0, pcr(&[("sl", 26)]));
    set_pcr(&mut core, 0, 0, pcr(&[("sl", 26)]));
    assert_eq!(OV.get(read_pcr(&mut core, 0, 0)), 0);
    assert_eq!(read_pic(&mut core, 0, 0), minus(1), "nothing counted since");
}

#[test]
fn programming_note_a_pcr_write_changes_an_asynchronous_count_at_once() {
    // Programming Note: "STXA %pcr ... affect an asynchronous count immediately (before
    // the instruction changing the PCR ... has retired)". The write's own cycle counts
    // by the new setting for cycles (sl 26, asynchronous) ...
    let mut core = T4Core::default();
    set_pcr(&mut core, 0, 0, pcr(&[("sl", 26), ("ht", 1)]));
    assert_eq!(read_pic(&mut core, 0, 0), 1, "the enabling write's cycle counted");
    set_pcr(&mut core, 0, 0, pcr(&[]));
    assert_eq!(read_pic(&mut core, 0, 0), 2, "the read counted, the disabling write did not");
    // ... but by the old one for instructions (sl 3, precise), counted at retirement.
    let mut core = T4Core::default();
    set_pcr(&mut core, 0, 0, pcr(&[("sl", 3), ("mask", 0x3F), ("ht", 1)]));
    assert_eq!(read_pic(&mut core, 0, 0), 0, "the enabling write was not counted");
    set_pcr(&mut core, 0, 0, pcr(&[]));
    assert_eq!(read_pic(&mut core, 0, 0), 2, "the read and the disabling write were");
}

#[test]
fn programming_note_counters_with_ht_0_start_when_the_strand_leaves_hyperprivileged_mode() {
    // Programming Note on synchronizing counters: counters with ht = 0 "will not begin
    // counting until the virtual processor has transitioned out of hyperprivileged
    // mode", a barrier for starting several counters together.
    let mut core = core_with(pcr(&[("sl", 26), ("ut", 1), ("st", 1)]), 0);
    set_pcr(&mut core, 0, 1, pcr(&[("sl", 3), ("mask", 0x3F), ("ut", 1), ("st", 1)]));
    set_pcr(&mut core, 0, 3, pcr(&[("sl", 16), ("mask", 0x07), ("ut", 1), ("st", 1)]));
    let mut s = once(vec![busy(0, HYPER, 500), busy(0, PRIV, 100)]);
    run(&mut core, &mut s, 500);
    assert_eq!([read_pic(&mut core, 0, 0), read_pic(&mut core, 0, 1), read_pic(&mut core, 0, 3)], [0, 0, 0]);
    run(&mut core, &mut s, 100);
    assert_eq!([read_pic(&mut core, 0, 0), read_pic(&mut core, 0, 1), read_pic(&mut core, 0, 3)], [100, 100, 100]);
}

// ---------------------------------------------------------------- robustness

#[derive(Debug, Clone)]
enum Op {
    Load { strand: usize, asi: u8, va: u64, mode: Privilege },
    Store { strand: usize, asi: u8, va: u64, value: u64, mode: Privilege },
    Run(u16),
    TakeTrap(usize),
    SetMode(usize, Privilege),
}

fn op() -> impl proptest::strategy::Strategy<Value = Op> {
    use proptest::prelude::*;
    let strand = 0usize..4;
    let asi = prop_oneof![Just(PCR_ASI), Just(PIC_ASI), any::<u8>()];
    let va = prop_oneof![(0usize..4).prop_map(counter_va), any::<u64>()];
    let mode = prop_oneof![Just(HYPER), Just(PRIV), Just(USER), Just(Privilege::Cpl1)];
    // PCR values: random fields with the interesting sl values, or anything at all.
    let value = prop_oneof![
        (0u64..32, 0u64..64, 0u64..32, 0u64..8, any::<u32>()).prop_map(|(sl, mask, low, access, junk)| {
            sl << 11 | mask << 5 | low | (access & 3) << 16 | (access >> 2) << 18 | u64::from(junk) << 32
        }),
        prop_oneof![Just(u64::MAX), Just(0xFFFF_FFFF), Just(0xFFFF_FFFD)],
        any::<u64>(),
    ];
    prop_oneof![
        (strand.clone(), asi.clone(), va.clone(), mode.clone()).prop_map(|(strand, asi, va, mode)| Op::Load { strand, asi, va, mode }),
        (strand.clone(), asi, va, value, mode.clone()).prop_map(|(strand, asi, va, value, mode)| Op::Store {
            strand,
            asi,
            va,
            value,
            mode
        }),
        (1u16..3000).prop_map(Op::Run),
        strand.clone().prop_map(Op::TakeTrap),
        (strand, mode).prop_map(|(s, m)| Op::SetMode(s, m)),
    ]
}

/// Every signal the model maps, on three strands in every mode.
fn everything() -> Cursor {
    let all = |s: Span| Signal::ALL.iter().fold(s, |s, &sig| s.with(sig, 1)).with(Signal::Instructions, 3);
    stream(vec![all(span(0, USER, 13)), span(1, HYPER, 7), all(span(2, PRIV, 5)), busy(0, Privilege::Cpl2, 2)])
}

proptest::proptest! {
    /// Any sequence of LDXA/STXA (any ASI, VA, mode, value, on strands the core has or
    /// lacks), runs and trap deliveries never panics, a trapped access changes nothing,
    /// and registers never show reserved bits.
    #[test]
    fn any_register_traffic_is_safe(ops in proptest::collection::vec(op(), 1..60)) {
        let mut core = T4Core::new(3);
        let mut s = everything();
        for op in ops {
            let before = core.clone();
            let trapped = match op {
                Op::Load { strand, asi, va, mode } => match core.ldxa(strand, asi, va, mode) {
                    Ok(v) => {
                        let limit = if asi == PCR_ASI { 1 << 19 } else { 1 << 32 };
                        proptest::prop_assert!(v < limit, "{:#x}", v);
                        false
                    }
                    Err(_) => true,
                },
                Op::Store { strand, asi, va, value, mode } => core.stxa(strand, asi, va, value, mode).is_err(),
                Op::Run(n) => {
                    run(&mut core, &mut s, u64::from(n));
                    false
                }
                Op::TakeTrap(strand) => {
                    core.take_trap(strand);
                    false
                }
                Op::SetMode(strand, mode) => core.set_mode(strand, mode).is_err(),
            };
            if trapped {
                proptest::prop_assert_eq!(&core, &before, "a trapped access changes nothing");
            }
        }
    }
}
