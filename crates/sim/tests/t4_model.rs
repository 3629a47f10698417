//! The SPARC T4 strand counter model, driven only through LDXA/STXA and engine runs,
//! one rule of the SPARC T4 Supplement chapter 10 per test: access control, counting
//! and overflow (`t4_hazards.rs` holds the driver hazards and the robustness checks).

mod common;

use common::t4::*;
use pmukit_arch::sparc::t4::{NTC, OV, PCR_ASI, PIC_ASI};
use pmukit_sim::engine::{Counters, Counting, Exit};
use pmukit_sim::models::t4::{T4Core, Trap};
use pmukit_sim::stream::{Privilege, Signal, Span};
use proptest::prelude::*;

// ---------------------------------------------------------------- access control

#[test]
fn s10_1_pcrs_are_reachable_in_hyperprivileged_mode_only() {
    // §10.1 item 4: "Access to the PCRs is via hyperprivileged ASIs only".
    let mut core = T4Core::default();
    let value = pcr(&[("sl", 3), ("mask", 0x3F), ("ut", 1)]);
    for mode in [PRIV, USER, Privilege::Cpl1, Privilege::Cpl2] {
        let before = core.clone();
        assert_eq!(core.stxa(0, PCR_ASI, 0, value, mode), Err(Trap::PrivilegedAction), "{mode:?}");
        assert_eq!(core.ldxa(0, PCR_ASI, 0, mode), Err(Trap::PrivilegedAction), "{mode:?}");
        assert_eq!(core, before, "a trapped access changes nothing");
    }
    assert_eq!(core.stxa(0, PCR_ASI, 0, value, HYPER), Ok(()));
    assert_eq!(core.ldxa(0, PCR_ASI, 0, HYPER), Ok(value));
}

/// Table 10-1 picnht/picnpt: can `mode` reach PIC0 under each combination?
fn pic_access(mode: Privilege) -> Vec<((u64, u64), bool)> {
    let mut out = Vec::new();
    for picnht in 0..2 {
        for picnpt in 0..2 {
            let mut core = core_with(pcr(&[("picnht", picnht), ("picnpt", picnpt)]), 0);
            let before = core.clone();
            let read = core.ldxa(0, PIC_ASI, 0, mode);
            let write = core.stxa(0, PIC_ASI, 0, 7, mode);
            assert_eq!(read.is_ok(), write.is_ok());
            if let Err(trap) = write {
                assert_eq!(trap, Trap::PrivilegedAction);
                assert_eq!(core, before, "a trapped access changes nothing");
            }
            out.push(((picnht, picnpt), write.is_ok()));
        }
    }
    out
}

#[test]
fn s10_3_hyperprivileged_software_always_reaches_the_pics() {
    // §10.3 and Table 10-1: picnht and picnpt restrict privileged and non-privileged
    // software only.
    assert!(pic_access(HYPER).iter().all(|(_, ok)| *ok));
}

#[test]
fn table_10_1_privileged_software_reaches_a_pic_only_with_picnht_0() {
    // Table 10-1 picnht: "Privileged software can access the PIC only if picnht = 0".
    let expected = vec![((0, 0), true), ((0, 1), true), ((1, 0), false), ((1, 1), false)];
    assert_eq!(pic_access(PRIV), expected);
}

#[test]
fn table_10_1_nonprivileged_software_reaches_a_pic_only_with_picnht_and_picnpt_0() {
    // Table 10-1 picnht, picnpt: "only when picnht = 0 and picnpt = 0".
    let expected = vec![((0, 0), true), ((0, 1), false), ((1, 0), false), ((1, 1), false)];
    assert_eq!(pic_access(USER), expected);
}

#[test]
fn other_asis_and_vas_are_data_access_exceptions() {
    // Tables 10-1 and 10-3 define VAs 00, 08, 10, 18 of ASIs 64 and B0 only; the trap
    // for anything else is our choice (docs/t4-model.md).
    let mut core = T4Core::default();
    let before = core.clone();
    for (asi, va) in [(PCR_ASI, 0x04), (PCR_ASI, 0x20), (PIC_ASI, 0x09), (PIC_ASI, u64::MAX), (0x63, 0), (0x00, 0x08), (0xB1, 0)] {
        assert_eq!(core.ldxa(0, asi, va, HYPER), Err(Trap::DataAccessException), "{asi:#x}/{va:#x}");
        assert_eq!(core.stxa(0, asi, va, 1, HYPER), Err(Trap::DataAccessException), "{asi:#x}/{va:#x}");
    }
    assert_eq!(core, before);
}

#[test]
fn s10_1_privileged_action_comes_before_the_va_check_on_the_pcr_asi() {
    // §10.1 item 4: the whole PCR ASI is hyperprivileged, whatever the VA.
    let mut core = T4Core::default();
    assert_eq!(core.ldxa(0, PCR_ASI, 0x40, USER), Err(Trap::PrivilegedAction));
}

#[test]
fn accesses_to_a_strand_the_core_lacks_are_refused() {
    let mut core = T4Core::new(2);
    let before = core.clone();
    assert_eq!(core.ldxa(2, PIC_ASI, 0, HYPER), Err(Trap::NoSuchStrand { strand: 2 }));
    assert_eq!(core.stxa(9, PCR_ASI, 0, 1, HYPER), Err(Trap::NoSuchStrand { strand: 9 }));
    assert_eq!(core.set_mode(5, USER), Err(Trap::NoSuchStrand { strand: 5 }));
    assert_eq!(core, before);
}

#[test]
fn table_10_3_pic_writes_keep_the_low_32_bits() {
    // Table 10-3: bits 63:32 are reserved; the counter is 32 bits.
    let mut core = T4Core::default();
    set_pic(&mut core, 0, 2, 0xDEAD_BEEF_1234_5678);
    assert_eq!(read_pic(&mut core, 0, 2), 0x1234_5678);
}

#[test]
fn table_10_1_reserved_bits_read_as_zero() {
    // Table 10-1: bits 63:19 are reserved, read-only, 0.
    let mut core = T4Core::default();
    set_pcr(&mut core, 0, 1, u64::MAX);
    let value = read_pcr(&mut core, 0, 1);
    assert_eq!(value >> 19, 0);
    assert_eq!(value, 0x3_FFFE, "every field but ntc and ov is written");
}

#[test]
fn table_10_1_each_pcr_controls_only_its_own_pic() {
    // §10.1 item 2: "Each PCR controls only one PIC."
    let mut core = T4Core::default();
    set_pcr(&mut core, 0, 2, pcr(&[("sl", 26), ("ut", 1)]));
    run(&mut core, &mut stream(vec![busy(0, USER, 10)]), 100);
    let pics: Vec<u64> = (0..4).map(|n| read_pic(&mut core, 0, n)).collect();
    assert_eq!(pics, [0, 0, 100, 0]);
}

// ---------------------------------------------------------------- counting

/// PIC0 after 100 user, 200 privileged and 400 hyperprivileged cycles, counting cycles
/// (sl 26) with the given privilege bits.
fn cycles_counted(bits: &[(&str, u64)]) -> u64 {
    let mut fields = vec![("sl", 26)];
    fields.extend_from_slice(bits);
    let mut core = core_with(pcr(&fields), 0);
    let (done, _) = run(&mut core, &mut stream(vec![busy(0, USER, 100), busy(0, PRIV, 200), busy(0, HYPER, 400)]), 700);
    assert_eq!(done, 700);
    read_pic(&mut core, 0, 0)
}

#[test]
fn table_10_1_ut_counts_user_mode_only() {
    assert_eq!(cycles_counted(&[("ut", 1)]), 100);
}

#[test]
fn table_10_1_st_counts_privileged_mode_only() {
    assert_eq!(cycles_counted(&[("st", 1)]), 200);
}

#[test]
fn table_10_1_ht_counts_hyperprivileged_mode_only() {
    assert_eq!(cycles_counted(&[("ht", 1)]), 400);
}

#[test]
fn table_10_2_sl_26_counts_cycles_in_the_enabled_modes_whatever_the_mask() {
    // Table 10-2 sl 26: "The mask field is ignored."
    assert_eq!(cycles_counted(&[("ut", 1), ("st", 1), ("ht", 1), ("mask", 0x15)]), 700);
}

#[test]
fn table_10_2_sl_0_counts_nothing() {
    // Table 10-2 sl 0: "no events are counted ... mask bits are ignored".
    let mut core = core_with(pcr(&[("sl", 0), ("mask", 0x3F), ("ut", 1), ("st", 1), ("ht", 1)]), 0);
    run(&mut core, &mut stream(vec![busy(0, USER, 10)]), 1000);
    assert_eq!(read_pic(&mut core, 0, 0), 0);
    assert!(core.unpredictable().is_empty(), "sl 0 is defined: disabled");
}

#[test]
fn table_10_2_reserved_sl_values_count_nothing_and_are_logged() {
    // Table 10-2: sl 12-15 and 27 are reserved; 29-31 are on the missing page 8.
    for sl in [12, 13, 14, 15, 27, 29, 30, 31] {
        let mut core = core_with(pcr(&[("sl", sl), ("mask", 0x3F), ("ut", 1), ("st", 1), ("ht", 1)]), 0);
        run(&mut core, &mut stream(vec![busy(0, USER, 10).with(Signal::NoFetchCycles, 1)]), 1000);
        assert_eq!(read_pic(&mut core, 0, 0), 0, "sl {sl}");
        assert_eq!(core.unpredictable().len(), 1, "sl {sl}");
        assert!(core.unpredictable()[0].contains(&format!("sl {sl}")), "{:?}", core.unpredictable());
    }
}

#[test]
fn table_10_2_sl_3_mask_3f_counts_every_instruction() {
    // Table 10-2 sl 3: "3F counts all instructions"; footnote 9 takes the rest.
    let span = span(0, USER, 10)
        .with(Signal::Instructions, 4)
        .with(Signal::Loads, 1)
        .with(Signal::Branches, 1)
        .with(Signal::FguCryptoInstructions, 1);
    let mut core = core_with(pcr(&[("sl", 3), ("mask", 0x3F), ("ut", 1)]), 0);
    set_pcr(&mut core, 0, 1, pcr(&[("sl", 3), ("mask", 0x20), ("ut", 1)]));
    run(&mut core, &mut stream(vec![span]), 100);
    assert_eq!(read_pic(&mut core, 0, 0), 400);
    assert_eq!(read_pic(&mut core, 0, 1), 100, "other instructions: 4 - 3 classified");
}

#[test]
fn table_10_2_mask_bits_count_the_union_of_their_subevents() {
    // §10.2: "Setting multiple mask bits at the same time can lead to multiple events
    // being counted as one event." sl 25 mask 0F ("Branch mispredict") counts each
    // mispredict once, though return-stack mispredicts are in both 02 and 08.
    let span = span(0, USER, 10).with(Signal::Instructions, 1).with(Signal::BranchMispredicts, 1).with(Signal::ReturnsMispredicted, 1);
    let mut core = core_with(pcr(&[("sl", 25), ("mask", 0x0F), ("ut", 1)]), 0);
    set_pcr(&mut core, 0, 1, pcr(&[("sl", 25), ("mask", 0x08), ("ut", 1)]));
    run(&mut core, &mut stream(vec![span]), 100);
    assert_eq!(read_pic(&mut core, 0, 0), 100);
    assert_eq!(read_pic(&mut core, 0, 1), 100);
}

#[test]
fn footnote_13_cross_strand_events_count_by_each_strands_own_mode() {
    // Footnote 13's example: strands 0 and 1 active, PCR0 counting fetch-0-all (sl 8,
    // mask 02) in user and privileged modes, strand 1 in hyperprivileged mode, and
    // neither strand fetching: the cycle counts in strand 0's PCR.
    let mut core = T4Core::new(2);
    let fetch_0_all = pcr(&[("sl", 8), ("mask", 0x02), ("ut", 1), ("st", 1)]);
    set_pcr(&mut core, 0, 0, fetch_0_all);
    set_pcr(&mut core, 1, 0, fetch_0_all);
    set_pcr(&mut core, 1, 1, pcr(&[("sl", 8), ("mask", 0x02), ("ht", 1)]));
    // Fetch-0 (mask 01) is virtual-processor specific: strand 1's cycles are not strand 0's.
    set_pcr(&mut core, 0, 1, pcr(&[("sl", 8), ("mask", 0x01), ("ut", 1), ("st", 1)]));
    core.set_mode(0, USER).unwrap();
    let no_fetch = span(1, HYPER, 100).with(Signal::NoFetchCycles, 1).with(Signal::NoFetchAllCycles, 1);
    run(&mut core, &mut stream(vec![no_fetch]), 1000);
    assert_eq!(read_pic(&mut core, 0, 0), 1000, "strand 0 is in user mode");
    assert_eq!(read_pic(&mut core, 1, 0), 0, "strand 1 is in hyperprivileged mode, which its PCR0 ignores");
    assert_eq!(read_pic(&mut core, 1, 1), 1000, "strand 1's PCR1 counts hyperprivileged mode");
    assert_eq!(read_pic(&mut core, 0, 1), 0, "fetch-0 of strand 0 does not cross strands");
}

/// TABLE 10-2 sl 1 mask 04, ERRATA MSP1: sel-0-ready, "Cycles a strand was ready to
/// be selected but another strand was selected instead", counts for a strand the
/// cycles the machine marks it ready on another strand's span (`STRAND_READY`, which
/// carries the mode it is ready in: its own mode counts, not the running strand's);
/// never in its own spans. Those cycles are the strand's too: its CYCLES (sl 26),
/// pick-0 and commit-0 count them, its sel-0-wait does not.
#[test]
fn table_10_2_sl_1_sel_0_ready_counts_the_cycles_other_strands_run_while_this_one_waits() {
    let mut core = T4Core::new(3);
    let sel_0_ready = pcr(&[("sl", 1), ("mask", 0x04), ("ut", 1)]);
    for strand in 0..3 {
        set_pcr(&mut core, strand, 0, sel_0_ready);
        set_pcr(&mut core, strand, 1, pcr(&[("sl", 26), ("ut", 1)]));
        set_pcr(&mut core, strand, 2, pcr(&[("sl", 1), ("mask", 0x02), ("ut", 1)]));
        set_pcr(&mut core, strand, 3, pcr(&[("sl", 28), ("mask", 0x01), ("ut", 1)]));
    }
    // Strand 0 runs while strand 1 waits, ready, in user mode; strand 2 has no work.
    let ready = |mode: Privilege| busy(0, USER, 100).with(Signal::StrandReady1, 1 + mode.code());
    let pic = |core: &mut T4Core, strand, n| read_pic(core, strand, n);
    // sl 28's count starts late after its PCR is written (the Programming Note).
    let commits = pic(&mut core, 1, 3);
    run(&mut core, &mut stream(vec![ready(USER)]), 1000);
    assert_eq!([pic(&mut core, 0, 0), pic(&mut core, 1, 0), pic(&mut core, 2, 0)], [0, 1000, 0], "only the ready strand");
    assert_eq!([pic(&mut core, 0, 1), pic(&mut core, 1, 1), pic(&mut core, 2, 1)], [1000, 1000, 0], "CYCLES of both");
    assert_eq!(pic(&mut core, 1, 2), 0, "ready is not sel-0-wait");
    assert_eq!(pic(&mut core, 1, 3) - commits, 1000, "a ready strand commits nothing");
    run(&mut core, &mut stream(vec![ready(PRIV)]), 1000);
    assert_eq!(pic(&mut core, 1, 0), 1000, "ready in privileged mode, which its PCR ignores");
}

/// Footnote 13, ERRATA MSP1: the core's cycles (fetch-0-all, commit-0-all, the tag
/// waits of sl 9) count once per cycle for every strand, in the primary of a span
/// group: a stalled strand's overlay in the same cycles adds nothing to them, while
/// its own fetch-0 and sel-0-wait count in it.
#[test]
fn footnote_13_the_cores_cycles_count_once_a_cycle_in_the_primary() {
    let mut core = T4Core::new(2);
    for strand in 0..2 {
        set_pcr(&mut core, strand, 0, pcr(&[("sl", 28), ("mask", 0x02), ("ut", 1), ("ht", 1)]));
        set_pcr(&mut core, strand, 1, pcr(&[("sl", 9), ("mask", 0x02), ("ut", 1), ("ht", 1)]));
        set_pcr(&mut core, strand, 2, pcr(&[("sl", 8), ("mask", 0x01), ("ut", 1)]));
        set_pcr(&mut core, strand, 3, pcr(&[("sl", 1), ("mask", 0x02), ("ut", 1)]));
    }
    let stalled = |strand| span(strand, USER, 10).with(Signal::RobWaitCycles, 1).with(Signal::NoFetchCycles, 1);
    let group = vec![stalled(0), Span { overlay: true, ..stalled(1) }];
    let pic = |core: &mut T4Core, strand, n| read_pic(core, strand, n);
    // sl 28's count starts late after its PCR is written (the Programming Note).
    let commits = [pic(&mut core, 0, 0), pic(&mut core, 1, 0)];
    run(&mut core, &mut stream(group), 1000);
    assert_eq!([pic(&mut core, 0, 0) - commits[0], pic(&mut core, 1, 0) - commits[1]], [1000, 1000], "commit-0-all: once a cycle");
    assert_eq!([pic(&mut core, 0, 1), pic(&mut core, 1, 1)], [1000, 1000], "ROB tag wait: once a cycle");
    assert_eq!([pic(&mut core, 0, 2), pic(&mut core, 1, 2)], [1000, 1000], "each strand's own fetch-0");
    assert_eq!([pic(&mut core, 0, 3), pic(&mut core, 1, 3)], [1000, 1000], "each strand's own sel-0-wait");
}

#[test]
fn engine_skipping_and_stepping_count_alike() {
    // The engine's fast path (whole iterations) must agree with small steps, across
    // strands, modes and cross-strand events.
    let body = vec![
        busy(0, USER, 7).with(Signal::NoFetchCycles, 1),
        busy(1, HYPER, 5),
        span(2, PRIV, 3).with(Signal::NoFetchCycles, 1),
        busy(0, PRIV, 11).with(Signal::NextToCommit, 1),
    ];
    let program = |core: &mut T4Core| {
        for s in 0..3 {
            set_pcr(core, s, 0, pcr(&[("sl", 8), ("mask", 0x03), ("ut", 1), ("st", 1)]));
            set_pcr(core, s, 1, pcr(&[("sl", 3), ("mask", 0x3F), ("ut", 1), ("st", 1), ("ht", 1)]));
            set_pcr(core, s, 2, pcr(&[("sl", 26), ("ut", 1)]));
        }
        core.set_mode(1, USER).unwrap();
    };
    let mut fast = T4Core::new(3);
    let mut slow = T4Core::new(3);
    program(&mut fast);
    program(&mut slow);
    run(&mut fast, &mut stream(body.clone()), 7 * 30_000);
    let mut cursor = stream(body);
    for _ in 0..30_000 {
        run(&mut slow, &mut cursor, 7);
    }
    assert_eq!(fast, slow);
}

// ---------------------------------------------------------------- overflow

#[test]
fn table_10_1_ov_is_set_when_the_pic_wraps() {
    // Table 10-1 ov: "Set to 1 when PIC wraps from 2^32 - 1 to 0."
    let mut core = core_with(pcr(&[("sl", 26), ("ut", 1)]), minus(0x10));
    run(&mut core, &mut stream(vec![busy(0, USER, 10)]), 0x20);
    assert_eq!(read_pic(&mut core, 0, 0), 0x10);
    let value = read_pcr(&mut core, 0, 0);
    assert_eq!((OV.get(value), NTC.get(value)), (1, 0), "no next-to-commit instruction wrapped it");
}

#[test]
fn table_10_1_ntc_is_set_when_a_next_to_commit_instruction_wraps_the_pic() {
    // Table 10-1 ntc and footnote 1 (CAS{X}A, LDSTUB, SWAP, ... are next-to-commit).
    let atomic = span(0, USER, 10).with(Signal::Instructions, 1).with(Signal::Atomics, 1).with(Signal::NextToCommit, 1);
    let mut core = core_with(pcr(&[("sl", 4), ("mask", 0x08), ("ut", 1)]), minus(5));
    run(&mut core, &mut stream(vec![atomic]), 10);
    let value = read_pcr(&mut core, 0, 0);
    assert_eq!((OV.get(value), NTC.get(value)), (1, 1));
}

#[test]
fn s10_2_software_can_clear_ov_and_ntc_but_never_set_them() {
    // §10.2: "ntc and ov can be reset by software but can never be written to 1."
    let mut core = core_with(pcr(&[("ov", 1), ("ntc", 1), ("sl", 3), ("mask", 0x3F), ("ut", 1)]), minus(1));
    assert_eq!(read_pcr(&mut core, 0, 0) & 0x4_0001, 0, "not set by a write");
    let nc = span(0, USER, 1).with(Signal::Instructions, 1).with(Signal::NextToCommit, 1);
    run(&mut core, &mut stream(vec![nc]), 1);
    let set = read_pcr(&mut core, 0, 0);
    assert_eq!(set & 0x4_0001, 0x4_0001, "hardware sets them");
    set_pcr(&mut core, 0, 0, set);
    assert_eq!(read_pcr(&mut core, 0, 0), set, "writing 1 keeps them");
    set_pcr(&mut core, 0, 0, set & !0x4_0001);
    assert_eq!(read_pcr(&mut core, 0, 0) & 0x4_0001, 0, "writing 0 clears them");
}

#[test]
fn s10_3_precise_group_overflow_raises_a_precise_trap_with_no_skid() {
    // §10.3, Table 10-1 toe, §10.1 item 7 ("Precise performance counter overflows have
    // no skid"): sl 16 is Precise in Table 10-2.
    let mut core = core_with(pcr(&[("sl", 16), ("mask", 0x07), ("ut", 1), ("toe", 1)]), minus(10));
    let (cycles, exit) = run(&mut core, &mut stream(vec![busy(0, USER, 3)]), 1000);
    assert_eq!((cycles, exit), (10, Exit::Overflow), "execution stops on the overflowing miss");
    assert_eq!(core.take_trap(0), Some(Trap::PrecisePerformanceEvent { pic: 0 }));
    assert_eq!(core.take_trap(0), None, "a precise trap is taken once");
    assert_eq!(OV.get(read_pcr(&mut core, 0, 0)), 1);
}

#[test]
fn s10_3_asynchronous_group_overflow_raises_a_disrupting_trap() {
    // §10.3: "If the event is asynchronous, a disrupting_performance_event trap is
    // generated"; sl 23 (the non-precise twin of sl 16) is not Precise.
    let mut core = core_with(pcr(&[("sl", 23), ("mask", 0x07), ("ut", 1), ("toe", 1)]), minus(10));
    let (cycles, exit) = run(&mut core, &mut stream(vec![busy(0, USER, 3)]), 1000);
    assert_eq!((cycles, exit), (10, Exit::Overflow));
    assert_eq!(core.take_trap(0), Some(Trap::DisruptingPerformanceEvent { pic: 0 }));
}

#[test]
fn table_10_1_toe_0_raises_no_trap() {
    // Table 10-1 toe: "Hardware ANDs the value of toe with ov to produce a trap."
    let mut core = core_with(pcr(&[("sl", 16), ("mask", 0x07), ("ut", 1)]), minus(10));
    assert_eq!(run(&mut core, &mut stream(vec![busy(0, USER, 3)]), 100), (100, Exit::Budget));
    assert!(core.strand(0).unwrap().pending_traps().is_empty());
    assert_eq!(OV.get(read_pcr(&mut core, 0, 0)), 1);
}

#[test]
fn s10_3_ht_1_prevents_any_precise_trap() {
    // §10.3: "setting PCR.ht == 1 prevents any precise_performance_event trap";
    // footnote 2. The overflow below happens in user mode.
    let mut core = core_with(pcr(&[("sl", 16), ("mask", 0x07), ("ut", 1), ("ht", 1), ("toe", 1)]), minus(10));
    assert_eq!(run(&mut core, &mut stream(vec![busy(0, USER, 3)]), 100), (100, Exit::Budget));
    assert!(core.strand(0).unwrap().pending_traps().is_empty(), "no precise trap, and a precise group raises no disrupting one");
    assert_eq!(OV.get(read_pcr(&mut core, 0, 0)), 1, "the hypervisor has to poll");
}

#[test]
fn s10_3_no_precise_trap_in_hyperprivileged_mode_even_with_ht_0() {
    // §10.3: "If HPSTATE.hpriv == 1, the trap is lost, even if PCR.ht == 0." The PCR
    // write below runs in hyperprivileged mode, is counted by the old setting (sl 3,
    // ht = 1) and wraps PIC0. The overflow lands after the write (Programming Note after
    // Table 10-1), so the new setting, Precise sl 3 with ht = 0 and toe = 1, decides the
    // trap: none, because the strand is in hyperprivileged mode.
    let mut core = core_with(pcr(&[("sl", 3), ("mask", 0x3F), ("ht", 1), ("toe", 1)]), minus(1));
    set_pcr(&mut core, 0, 0, pcr(&[("sl", 3), ("mask", 0x3F), ("ut", 1), ("toe", 1)]));
    assert_eq!(OV.get(read_pcr(&mut core, 0, 0)), 1, "the PIC did wrap");
    assert!(core.strand(0).unwrap().pending_traps().is_empty());
}

#[test]
fn footnote_1_a_precise_trap_on_a_next_to_commit_instruction_sets_ntc() {
    // Footnote 1: the overflowing instruction has executed; ntc tells the handler to
    // DONE. A user LDXA of a PIC is an SPR ring op (footnote 8) and next-to-commit.
    let mut core = core_with(pcr(&[("sl", 3), ("mask", 0x10), ("ut", 1), ("toe", 1)]), minus(1));
    assert_eq!(core.ldxa(0, PIC_ASI, 0, USER), Ok(minus(1)), "the load reads the PIC before its own count");
    assert_eq!(core.take_trap(0), Some(Trap::PrecisePerformanceEvent { pic: 0 }));
    let value = read_pcr(&mut core, 0, 0);
    assert_eq!((OV.get(value), NTC.get(value)), (1, 1));
}

#[test]
fn programming_note_the_disrupting_trap_handler_must_clear_ov() {
    // Programming Note: "The trap handler for a disrupting_performance_event trap must
    // clear PCRx.ov, otherwise hardware may continuously trigger a trap."
    let counting = pcr(&[("sl", 26), ("ut", 1), ("toe", 1)]);
    let mut core = core_with(counting, minus(5));
    assert_eq!(run(&mut core, &mut stream(vec![busy(0, USER, 10)]), 100), (5, Exit::Overflow));
    assert_eq!(core.take_trap(0), Some(Trap::DisruptingPerformanceEvent { pic: 0 }));
    assert_eq!(core.take_trap(0), Some(Trap::DisruptingPerformanceEvent { pic: 0 }), "ov still set: it triggers again");
    set_pcr(&mut core, 0, 0, counting);
    assert_eq!(core.take_trap(0), None, "the handler cleared ov");
}

#[test]
fn programming_note_simultaneous_overflows_set_both_ov_bits() {
    // Programming Note: "PIC0 may overflow due to an ITLB miss event and PIC1 may
    // simultaneously overflow due to a data cache miss event. Both PCR0.ov and PCR1.ov
    // will be set."
    let misses = span(0, USER, 4)
        .with(Signal::Instructions, 1)
        .with(Signal::ITlbMisses, 1)
        .with(Signal::DCacheMisses, 1)
        .with(Signal::DCacheFillsFromCache, 1);
    let mut core = core_with(pcr(&[("sl", 5), ("mask", 0x10), ("ut", 1), ("toe", 1)]), minus(7));
    set_pic(&mut core, 0, 1, minus(7));
    set_pcr(&mut core, 0, 1, pcr(&[("sl", 16), ("mask", 0x01), ("ut", 1), ("toe", 1)]));
    assert_eq!(run(&mut core, &mut stream(vec![misses]), 100), (7, Exit::Overflow));
    assert_eq!(OV.get(read_pcr(&mut core, 0, 0)), 1);
    assert_eq!(OV.get(read_pcr(&mut core, 0, 1)), 1);
    assert_eq!(
        core.strand(0).unwrap().pending_traps(),
        [Trap::PrecisePerformanceEvent { pic: 0 }, Trap::PrecisePerformanceEvent { pic: 1 }]
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Issue 14: `each_rate` walks the strands in place; every PIC's rate is still
    /// exactly `rate`'s, with any PCR values on any strands (a write the model refuses
    /// leaves its PCR as it was) and spans of any strand (some beyond the core's), mode
    /// and signals.
    #[test]
    fn each_rate_answers_as_rate_does(
        strands in 1usize..=8,
        pcrs in prop::collection::vec((0usize..8, 0usize..4, any::<u64>(), 0u64..32, 1u64..64), 1..24),
        spans in prop::collection::vec((0u8..10, 0usize..4, prop::collection::vec((0..Signal::COUNT, 1u8..4), 0..8)), 1..24),
    ) {
        let mut core = T4Core::new(strands);
        for (strand, n, any, sl, mask) in pcrs {
            // Half the values are well-formed events counting in every mode.
            let value = if any & 1 == 0 { any } else { pcr(&[("sl", sl), ("mask", mask), ("ut", 1), ("st", 1), ("ht", 1)]) };
            let _ = core.stxa(strand, PCR_ASI, pmukit_arch::sparc::t4::counter_va(n), value, HYPER);
        }
        let modes = [HYPER, PRIV, USER, Privilege::Cpl1];
        // The mode each strand is in while others run decides what crosses to it.
        for strand in 0..strands {
            core.set_mode(strand, modes[strand % 4]).unwrap();
        }
        for (strand, mode, signals) in spans {
            let mut s = span(strand, modes[mode], 3);
            for (k, v) in signals {
                s.signals.set(Signal::ALL[k], v);
            }
            let mut each = Vec::new();
            core.each_rate(&s, core.address_class(&s), &mut |i, r| each.push((i, r)));
            let one: Vec<(usize, u64)> = (0..core.counters()).map(|i| (i, core.rate(i, &s))).filter(|&(_, r)| r > 0).collect();
            prop_assert_eq!(each, one);
        }
    }
}
