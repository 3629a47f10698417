//! The SPARC T4 DRAM counter model, driven only through physical-address loads and
//! stores and engine runs, one rule of the SPARC T4 Supplement §10.5 (TABLES 10-4 to
//! 10-7) per test. Addresses and bit positions are written out from the tables here, so
//! the tests pin the arch constants the model uses.

mod common;

use pmukit_arch::sparc::t4::{DRAM_COUNTERS, DRAM_PERF_COUNT01, DRAM_PERF_COUNT23, DRAM_PERF_CTL};
use pmukit_arch::Catalog;
use pmukit_sim::engine::{self, Counters, Counting, Exit};
use pmukit_sim::models::t4_dram::{register_pa, route, select, DramError, Owner, Route, Scope, T4Dram, COUNTERS_PER_MCU, MCUS};
use pmukit_sim::stream::{Block, Cursor, MemRef, MemoryQueues, Privilege, Signal, Span};
use proptest::prelude::*;

const SOLARIS: Owner = Owner::Solaris;
const PM: Owner = Owner::PowerManagement;

// TABLES 10-4 to 10-6: "(F804 0000 0408₁₆) (Count 4 Step 4096)" and so on.
const CTL_PA: u64 = 0xF804_0000_0408;
const COUNT01_PA: u64 = 0xF804_0000_0410;
const COUNT23_PA: u64 = 0xF804_0000_0418;
const STEP: u64 = 4096;

/// TABLE 10-7 select codes used below.
const READS: u64 = 0x0;
const WRITES: u64 = 0x1;
const READS_WRITES: u64 = 0x2;
const ALL_READS: u64 = 0x8;
const ALL_WRITES: u64 = 0xA;
const CHANNEL0: u64 = 0xB;
const CHANNEL1: u64 = 0xC;

/// 2^31: the counters are 31 bits (TABLES 10-5, 10-6: 62:32 and 30:0).
const WRAP: u64 = 1 << 31;

fn ctl_pa(mcu: usize) -> u64 {
    CTL_PA + STEP * mcu as u64
}

/// The register holding counter n: DRAM_PERF_COUNT01_REG for 0-1, COUNT23 for 2-3.
fn count_pa(mcu: usize, n: usize) -> u64 {
    (if n < 2 { COUNT01_PA } else { COUNT23_PA }) + STEP * mcu as u64
}

/// TABLES 10-5, 10-6: counter 0 / 3 in 62:32 with sticky 63, counter 1 / 2 in 30:0 with
/// sticky 31.
fn counter_shift(n: usize) -> u32 {
    if n == 0 || n == 3 {
        32
    } else {
        0
    }
}

/// A line the documented interleave sends to `mcu`, COU `port` and `channel`:
/// PA[7:6] MCU, PA[9:8] port, PA[10] channel, above 64-byte lines.
fn line(mcu: u64, port: u64, channel: u64) -> u64 {
    0x4000_0000 | mcu << 6 | port << 8 | channel << 10
}

/// `cycles` cycles with `reads` memory reads and `writes` memory writes per cycle, all to
/// the line at `addr`.
fn traffic(addr: u64, reads: u8, writes: u8, cycles: u64) -> Span {
    let mem = MemRef { addr, stride: 0, size: 64, write: writes > 0 };
    Span { mem: Some(mem), ..Span::new(cycles, 0x1_0000).with(Signal::MemoryReads, reads).with(Signal::MemoryWrites, writes) }
}

/// Runs each span once, in order, to the end of the stream; returns how many times a
/// wrap stopped the engine on the way.
fn run(dram: &mut T4Dram, spans: Vec<Span>) -> usize {
    common::run_to_end(dram, spans)
}

/// `traffic` whose transactions met `queues` in the memory controller.
fn queued(addr: u64, reads: u8, writes: u8, cycles: u64, queues: MemoryQueues) -> Span {
    Span { queues, ..traffic(addr, reads, writes, cycles) }
}

/// Sets counter n's select field, as its owner would: read, modify its own field, write.
fn set_select(dram: &mut T4Dram, mcu: usize, n: usize, code: u64) {
    let owner = Owner::of_counter(n).unwrap();
    let old = dram.read(ctl_pa(mcu), owner).unwrap();
    dram.write(ctl_pa(mcu), DRAM_COUNTERS[n].0.set(old, code), owner).unwrap();
}

fn program(dram: &mut T4Dram, mcu: usize, codes: [u64; 4]) {
    for (n, code) in codes.into_iter().enumerate() {
        set_select(dram, mcu, n, code);
    }
}

fn count(dram: &T4Dram, mcu: usize, n: usize) -> u64 {
    (dram.read(count_pa(mcu, n), SOLARIS).unwrap() >> counter_shift(n)) & (WRAP - 1)
}

fn sticky(dram: &T4Dram, mcu: usize, n: usize) -> u64 {
    (dram.read(count_pa(mcu, n), SOLARIS).unwrap() >> (counter_shift(n) + 31)) & 1
}

fn counts(dram: &T4Dram, mcu: usize) -> [u64; 4] {
    std::array::from_fn(|n| count(dram, mcu, n))
}

/// Every port of MCU 0 gets traffic: port p reads 10 × (p + 1) lines and writes
/// 2 × (p + 1), half on each channel; MCU 1 gets traffic too, which MCU 0 must not see.
fn spread() -> Vec<Span> {
    let mut spans = Vec::new();
    for p in 0..4 {
        for ch in 0..2 {
            spans.push(traffic(line(0, p, ch), 1, 0, 5 * (p + 1)));
            spans.push(traffic(line(0, p, ch), 0, 1, p + 1));
        }
    }
    spans.push(traffic(line(1, 0, 0), 3, 2, 1000));
    spans
}

/// Reads per port in `spread`, and writes.
const SPREAD_READS: [u64; 4] = [10, 20, 30, 40];
const SPREAD_WRITES: [u64; 4] = [2, 4, 6, 8];

#[test]
fn table_10_4_dram_perf_ctl_reg_is_at_f804_0000_0408_step_4096_count_4() {
    let dram = T4Dram::new();
    for mcu in 0..4 {
        assert_eq!(register_pa(&DRAM_PERF_CTL, mcu), Some(CTL_PA + 4096 * mcu as u64));
        assert_eq!(dram.read(ctl_pa(mcu), SOLARIS), Ok(0), "MCU {mcu}: initial value 0");
    }
    assert_eq!(MCUS, 4);
    assert_eq!(register_pa(&DRAM_PERF_CTL, 4), None);
    assert_eq!(dram.read(ctl_pa(4), SOLARIS), Err(DramError::Unmapped { pa: ctl_pa(4) }));
}

#[test]
fn table_10_5_dram_perf_count01_reg_is_at_f804_0000_0410_step_4096_count_4() {
    let dram = T4Dram::new();
    for mcu in 0..4 {
        assert_eq!(register_pa(&DRAM_PERF_COUNT01, mcu), Some(COUNT01_PA + 4096 * mcu as u64));
        assert_eq!(dram.read(COUNT01_PA + STEP * mcu as u64, SOLARIS), Ok(0));
    }
    let beyond = COUNT01_PA + 4 * STEP;
    assert_eq!(dram.read(beyond, SOLARIS), Err(DramError::Unmapped { pa: beyond }));
}

#[test]
fn table_10_6_dram_perf_count23_reg_is_at_f804_0000_0418_count_2_so_mcus_2_and_3_have_none() {
    let mut dram = T4Dram::new();
    for mcu in 0..2 {
        assert_eq!(register_pa(&DRAM_PERF_COUNT23, mcu), Some(COUNT23_PA + 4096 * mcu as u64));
        assert_eq!(dram.read(COUNT23_PA + STEP * mcu as u64, PM), Ok(0));
    }
    for mcu in 2..4 {
        let pa = COUNT23_PA + STEP * mcu as u64;
        assert_eq!(register_pa(&DRAM_PERF_COUNT23, mcu), None);
        let absent = DramError::NoSuchRegister { pa, register: "DRAM_PERF_COUNT23_REG", mcu, count: 2 };
        assert_eq!(dram.read(pa, PM), Err(absent.clone()));
        let before = dram.clone();
        assert_eq!(dram.write(pa, 1, PM), Err(absent));
        assert_eq!(dram, before);
    }
    // sel2/sel3 exist in every MCU's DRAM_PERF_CTL_REG (Count 4) and read back, but MCUs
    // 2 and 3 have no counters 2 and 3 to count with (docs/t4-dram-model.md TD1).
    program(&mut dram, 2, [READS, READS, READS, READS]);
    assert_eq!(dram.read(ctl_pa(2), PM), Ok(0));
    program(&mut dram, 2, [ALL_READS, ALL_READS, ALL_READS, ALL_READS]);
    assert_eq!(dram.read(ctl_pa(2), PM), Ok(0x8888));
    assert_eq!(run(&mut dram, vec![traffic(line(2, 2, 0), 1, 0, 7)]), 0, "nothing wraps");
    assert_eq!(count(&dram, 2, 0), 7);
    assert_eq!(count(&dram, 2, 1), 7);
    // Virtual counters 2 × 4 + 2 and + 3 stand for counters MCU 2 does not have: untouched.
    assert_eq!([dram.headroom(10), dram.headroom(11)], [WRAP, WRAP]);
}

#[test]
fn misaligned_and_unmapped_addresses_are_refused_and_change_nothing() {
    let mut dram = T4Dram::new();
    program(&mut dram, 0, [ALL_READS, ALL_WRITES, CHANNEL0, CHANNEL1]);
    let before = dram.clone();
    for pa in [CTL_PA + 1, CTL_PA + 4, COUNT01_PA + 7, u64::MAX] {
        assert_eq!(dram.read(pa, SOLARIS), Err(DramError::Misaligned { pa }));
        assert_eq!(dram.write(pa, 0, SOLARIS), Err(DramError::Misaligned { pa }));
    }
    for pa in [0, CTL_PA - 8, COUNT23_PA + 8, CTL_PA + STEP / 2, 0xF804_0000_0000, ctl_pa(MCUS)] {
        assert_eq!(dram.read(pa, PM), Err(DramError::Unmapped { pa }));
        assert_eq!(dram.write(pa, 0, PM), Err(DramError::Unmapped { pa }));
    }
    assert_eq!(dram, before);
}

#[test]
fn table_10_4_reserved_bits_63_16_refuse_writes_and_change_nothing() {
    let mut dram = T4Dram::new();
    program(&mut dram, 1, [ALL_READS, ALL_WRITES, CHANNEL0, CHANNEL1]);
    let before = dram.clone();
    for bit in 16..64 {
        let value = before.read(ctl_pa(1), SOLARIS).unwrap() | 1 << bit;
        let err = dram.write(ctl_pa(1), value, SOLARIS).unwrap_err();
        assert!(matches!(err, DramError::Reserved { .. }), "bit {bit}: {err}");
        assert!(err.to_string().contains("63:16"), "{err}");
    }
    assert_eq!(dram, before);
    assert_eq!(dram.read(ctl_pa(1), SOLARIS), Ok(0xCBA8));
}

#[test]
fn table_10_4_counter_n_counts_its_own_cou_port() {
    // TABLE 10-4: counter 0 cou0 port0, 1 cou0 port1, 2 cou1 port0, 3 cou1 port1.
    let mut dram = T4Dram::new();
    program(&mut dram, 0, [READS; 4]);
    run(&mut dram, spread());
    assert_eq!(counts(&dram, 0), SPREAD_READS);
}

#[test]
fn table_10_7_codes_0_1_2_count_reads_writes_and_both_of_the_counters_port() {
    let mut dram = T4Dram::new();
    program(&mut dram, 0, [READS, WRITES, READS_WRITES, READS_WRITES]);
    run(&mut dram, spread());
    let [r, w] = [SPREAD_READS, SPREAD_WRITES];
    assert_eq!(counts(&dram, 0), [r[0], w[1], r[2] + w[2], r[3] + w[3]]);
}

#[test]
fn s10_5_the_sum_of_the_four_port_counters_is_the_mcu_total() {
    // "So the total number of reads to a MCU is the sum of all four counters."
    let mut ports = T4Dram::new();
    program(&mut ports, 0, [READS; 4]);
    run(&mut ports, spread());
    let mut combined = T4Dram::new();
    program(&mut combined, 0, [ALL_READS; 4]);
    run(&mut combined, spread());
    assert_eq!(counts(&ports, 0).iter().sum::<u64>(), count(&combined, 0, 0));
}

#[test]
fn table_10_7_codes_8_and_a_count_all_reads_and_all_writes_of_the_mcu_in_each_counter() {
    // "This field results in each counter independently counting the total read traffic."
    let mut dram = T4Dram::new();
    program(&mut dram, 0, [ALL_READS, ALL_WRITES, ALL_READS, ALL_WRITES]);
    run(&mut dram, spread());
    let (reads, writes) = (SPREAD_READS.iter().sum::<u64>(), SPREAD_WRITES.iter().sum::<u64>());
    assert_eq!(counts(&dram, 0), [reads, writes, reads, writes]);
}

#[test]
fn table_10_7_codes_b_and_c_count_reads_and_writes_issued_to_channels_0_and_1() {
    let mut dram = T4Dram::new();
    // "Solaris must program one of its two counters with this select field and its other
    // counter with select value = C."
    program(&mut dram, 0, [CHANNEL0, CHANNEL1, ALL_READS, ALL_WRITES]);
    let spans = vec![traffic(line(0, 1, 0), 2, 0, 10), traffic(line(0, 3, 0), 0, 1, 5), traffic(line(0, 2, 1), 1, 0, 7)];
    run(&mut dram, spans);
    let [ch0, ch1, reads, writes] = counts(&dram, 0);
    assert_eq!((ch0, ch1), (25, 7));
    assert_eq!(ch0 + ch1, reads + writes, "channels 0 and 1 together are the MCU's transactions");
}

/// Port p of MCU 0 gets a cycle with one read that waited 7 × (p + 1) cycles at a busy
/// bank, once a writeback-buffer hit; and a cycle with a write that waited 3 × (p + 1)
/// and found the write queue full. MCU 1 gets the same, which MCU 0 must not see.
fn waits() -> Vec<Span> {
    let mut spans = Vec::new();
    for mcu in 0..2 {
        for p in 0..4u32 {
            let read = MemoryQueues { read_cycles: 7 * (p + 1), bank_stall_cycles: 7 * (p + 1), writeback_hits: 1, ..Default::default() };
            let write = MemoryQueues { write_cycles: 3 * (p + 1), bank_stall_cycles: 3 * (p + 1), writes_starved: 1, ..Default::default() };
            spans.push(queued(line(mcu, u64::from(p), 0), 1, 0, 1, read));
            spans.push(queued(line(mcu, u64::from(p), 1), 0, 1, 1, write));
        }
    }
    spans
}

#[test]
fn table_10_7_queue_latency_codes_4_5_6_add_the_cycles_each_transaction_waited_in_the_queue() {
    let mut dram = T4Dram::new();
    program(&mut dram, 0, [0x4, 0x5, 0x6, 0x6]);
    run(&mut dram, waits());
    // Counter n sees port n: reads 7(n + 1), writes 3(n + 1).
    assert_eq!(counts(&dram, 0), [7, 3 * 2, 7 * 3 + 3 * 3, 7 * 4 + 3 * 4]);
}

#[test]
fn table_10_7_bank_busy_stalls_writeback_hits_and_write_starved_count_what_the_controller_met() {
    let mut dram = T4Dram::new();
    program(&mut dram, 0, [0x3, 0x7, 0x9, 0x3]);
    run(&mut dram, waits());
    assert_eq!(counts(&dram, 0), [7 + 3, 1, 1, 7 * 4 + 3 * 4]);
    assert!(dram.unpredictable().is_empty());
}

#[test]
fn table_10_7_reserved_select_codes_d_to_f_count_nothing_and_are_logged() {
    for code in [0xD, 0xE, 0xF] {
        let mut dram = T4Dram::new();
        program(&mut dram, 0, [code; 4]);
        assert_eq!(dram.read(ctl_pa(0), SOLARIS), Ok(code * 0x1111), "the field holds what was written");
        run(&mut dram, spread());
        assert_eq!(counts(&dram, 0), [0; 4]);
        // Each owner writes twice; each write logs the writer's reserved fields so far.
        assert_eq!(dram.unpredictable().len(), (1 + 2) * 2, "{:?}", dram.unpredictable());
        assert!(dram.unpredictable().iter().all(|l| l.contains("reserved (TABLE 10-7)")));
    }
}

#[test]
fn table_10_5_counters_are_31_bits_and_wrap_to_zero_setting_their_sticky_bit_without_an_interrupt() {
    let mut dram = T4Dram::new();
    program(&mut dram, 0, [ALL_READS, ALL_WRITES, ALL_READS, ALL_WRITES]);
    // counter0 (62:32) at 2^31 - 4, counter1 (30:0) untouched.
    dram.write(COUNT01_PA, (WRAP - 4) << 32, SOLARIS).unwrap();
    // counter2 (30:0) at 2^31 - 1.
    dram.write(COUNT23_PA, WRAP - 1, PM).unwrap();
    let stops = run(&mut dram, vec![traffic(line(0, 0, 0), 1, 0, 10)]);
    // §10.5 describes no overflow interrupt: the engine stops at each wrap only so that
    // a driver reads the counter before it wraps again (TD15).
    assert_eq!(stops, 2, "counters 0 and 2 wrap");
    assert_eq!((count(&dram, 0, 0), sticky(&dram, 0, 0)), (6, 1));
    assert_eq!((count(&dram, 0, 1), sticky(&dram, 0, 1)), (0, 0));
    assert_eq!((count(&dram, 0, 2), sticky(&dram, 0, 2)), (9, 1));
    assert_eq!(dram.read(COUNT01_PA, SOLARIS), Ok(1 << 63 | 6 << 32));
    assert_eq!(dram.read(COUNT23_PA, PM), Ok(1 << 31 | 9));
}

#[test]
fn table_10_6_counter3_is_the_upper_half_and_counter2_the_lower() {
    let mut dram = T4Dram::new();
    program(&mut dram, 0, [READS, READS, ALL_READS, ALL_WRITES]);
    run(&mut dram, vec![traffic(line(0, 0, 0), 2, 0, 3), traffic(line(0, 0, 1), 0, 1, 5)]);
    // counter3 (writes) in 62:32, counter2 (reads) in 30:0.
    assert_eq!(dram.read(COUNT23_PA, PM), Ok(5 << 32 | 6));
}

#[test]
fn tables_10_5_10_6_sticky_bits_are_cleared_by_software_but_never_set() {
    let mut dram = T4Dram::new();
    // Writing ones to sticky0/sticky1 from 0 leaves them 0; the counters take the value.
    dram.write(COUNT01_PA, 1 << 63 | 5 << 32 | 1 << 31 | 7, SOLARIS).unwrap();
    assert_eq!(dram.read(COUNT01_PA, SOLARIS), Ok(5 << 32 | 7));
    // A wrap sets sticky0; writing 1 keeps it, writing 0 clears it.
    program(&mut dram, 0, [ALL_READS, READS, READS, READS]);
    dram.write(COUNT01_PA, (WRAP - 1) << 32, SOLARIS).unwrap();
    run(&mut dram, vec![traffic(line(0, 1, 0), 1, 0, 1)]);
    assert_eq!(sticky(&dram, 0, 0), 1);
    dram.write(COUNT01_PA, 1 << 63 | 3 << 32, SOLARIS).unwrap();
    assert_eq!(dram.read(COUNT01_PA, SOLARIS), Ok(1 << 63 | 3 << 32));
    dram.write(COUNT01_PA, 3 << 32, SOLARIS).unwrap();
    assert_eq!(dram.read(COUNT01_PA, SOLARIS), Ok(3 << 32));
    // The same for DRAM_PERF_COUNT23_REG.
    dram.write(COUNT23_PA, 1 << 63 | 1 << 31, PM).unwrap();
    assert_eq!(dram.read(COUNT23_PA, PM), Ok(0));
}

#[test]
fn s10_5_solaris_may_not_change_sel2_sel3_nor_write_dram_perf_count23_reg() {
    let mut dram = T4Dram::new();
    program(&mut dram, 0, [ALL_READS, ALL_WRITES, CHANNEL0, CHANNEL1]);
    let before = dram.clone();
    for (value, field) in [(0x0BA8, Some("sel3")), (0xC0A8, Some("sel2")), (0x00A8, Some("sel2"))] {
        let err = dram.write(CTL_PA, value, SOLARIS).unwrap_err();
        let expected = DramError::NotOwner { owner: SOLARIS, mcu: 0, register: "DRAM_PERF_CTL_REG", field, holder: Owner::PowerManagement };
        assert_eq!(err, expected);
    }
    let err = dram.write(COUNT23_PA, 0, SOLARIS).unwrap_err();
    assert_eq!(
        err.to_string(),
        "Solaris may not change MCU 0 DRAM_PERF_COUNT23_REG: §10.5 assigns it to the power management software (reads are allowed)"
    );
    assert_eq!(dram, before);
}

#[test]
fn s10_5_power_management_may_not_change_sel0_sel1_nor_write_dram_perf_count01_reg() {
    let mut dram = T4Dram::new();
    program(&mut dram, 1, [ALL_READS, ALL_WRITES, CHANNEL0, CHANNEL1]);
    let before = dram.clone();
    for (value, field) in [(0xCBA0, Some("sel0")), (0xCB08, Some("sel1"))] {
        let err = dram.write(ctl_pa(1), value, PM).unwrap_err();
        assert_eq!(err, DramError::NotOwner { owner: PM, mcu: 1, register: "DRAM_PERF_CTL_REG", field, holder: SOLARIS });
    }
    let err = dram.write(COUNT01_PA + STEP, 0, PM).unwrap_err();
    assert_eq!(err, DramError::NotOwner { owner: PM, mcu: 1, register: "DRAM_PERF_COUNT01_REG", field: None, holder: SOLARIS });
    assert!(err.to_string().contains("Solaris"), "{err}");
    assert_eq!(dram, before);
}

#[test]
fn s10_5_each_owner_may_rewrite_dram_perf_ctl_reg_carrying_the_other_owners_fields() {
    let mut dram = T4Dram::new();
    dram.write(CTL_PA, 0x00A8, SOLARIS).unwrap();
    dram.write(CTL_PA, 0xCBA8, PM).unwrap();
    dram.write(CTL_PA, 0xCB12, SOLARIS).unwrap();
    assert_eq!(dram.read(CTL_PA, PM), Ok(0xCB12));
}

#[test]
fn s10_5_both_owners_may_read_every_register() {
    let mut dram = T4Dram::new();
    program(&mut dram, 0, [ALL_READS, ALL_WRITES, CHANNEL0, CHANNEL1]);
    run(&mut dram, spread());
    for pa in [CTL_PA, COUNT01_PA, COUNT23_PA] {
        let by_solaris = dram.read(pa, SOLARIS).unwrap();
        assert_eq!(dram.read(pa, PM), Ok(by_solaris));
        assert_ne!(by_solaris, 0, "{pa:#x}");
    }
}

#[test]
fn address_interleave_pa_7_6_selects_the_mcu_9_8_the_cou_port_and_10_the_channel() {
    assert_eq!(route(0), Route { mcu: 0, port: 0, channel: 0 });
    assert_eq!(route(0x3F), Route { mcu: 0, port: 0, channel: 0 }, "one 64-byte line");
    assert_eq!(route(0x40), Route { mcu: 1, port: 0, channel: 0 });
    assert_eq!(route(0xC0), Route { mcu: 3, port: 0, channel: 0 });
    assert_eq!(route(0x100), Route { mcu: 0, port: 1, channel: 0 });
    assert_eq!(route(0x300), Route { mcu: 0, port: 3, channel: 0 });
    assert_eq!(route(0x400), Route { mcu: 0, port: 0, channel: 1 });
    assert_eq!(route(0x800), Route { mcu: 0, port: 0, channel: 0 }, "bits above 10 do not route");
    for (m, p, c) in [(1, 2, 1), (3, 3, 0), (2, 1, 1)] {
        assert_eq!(route(line(m, p, c)), Route { mcu: m as usize, port: p as usize, channel: c as usize });
    }
    // Each MCU counts only its own lines.
    let mut dram = T4Dram::new();
    for mcu in 0..MCUS {
        program(&mut dram, mcu, [ALL_READS; 4]);
    }
    run(&mut dram, (0..4).map(|m| traffic(line(m, 0, 0), 1, 0, 10 * (m + 1))).collect());
    let got: Vec<u64> = (0..MCUS).map(|m| count(&dram, m, 0)).collect();
    assert_eq!(got, [10, 20, 30, 40]);
}

#[test]
fn a_span_routes_by_its_first_iterations_data_address_else_its_instruction_address() {
    let mut dram = T4Dram::new();
    program(&mut dram, 0, [ALL_READS; 4]);
    program(&mut dram, 1, [ALL_READS; 4]);
    // A striding reference that would reach MCU 1 in later iterations stays on MCU 0:
    // the route is constant over a span, so the engine's rates are.
    let striding = Span { mem: Some(MemRef { addr: line(0, 0, 0), stride: 64, size: 64, write: false }), ..traffic(0, 1, 0, 1) };
    let mut cursor = Cursor::new(Box::new(std::iter::once(Block { body: vec![striding], repeat: 8 })));
    engine::run(&mut dram, &mut cursor, 8);
    // An instruction fill has no data reference: it routes by its ip.
    let fill = Span::new(3, line(1, 2, 0)).with(Signal::MemoryReads, 1);
    run(&mut dram, vec![fill]);
    assert_eq!((count(&dram, 0, 0), count(&dram, 1, 0)), (8, 3));
}

#[test]
fn s10_5_the_mcu_counts_every_strand_and_privilege_level() {
    let mut dram = T4Dram::new();
    program(&mut dram, 0, [ALL_READS; 4]);
    let spans = (0..8u8)
        .zip([Privilege::USER, Privilege::KERNEL, Privilege::Hyper].into_iter().cycle())
        .map(|(thread, privilege)| Span { thread, privilege, ..traffic(line(0, 0, 0), 1, 0, 2) })
        .collect();
    run(&mut dram, spans);
    assert_eq!(count(&dram, 0, 0), 16);
}

#[test]
fn engine_skipping_and_stepping_count_alike() {
    let body = spread();
    let whole = |budget_steps: &[u64]| {
        let mut dram = T4Dram::new();
        program(&mut dram, 0, [READS_WRITES, ALL_WRITES, CHANNEL0, READS]);
        dram.write(COUNT01_PA, (WRAP - 1000) << 32, SOLARIS).unwrap();
        let mut cursor = Cursor::new(Box::new(std::iter::once(Block { body: body.clone(), repeat: 10_000 })));
        for &b in budget_steps {
            // A wrap stops the engine early (TD15): go on to the step's end.
            let mut left = b;
            while left > 0 {
                match engine::run(&mut dram, &mut cursor, left) {
                    (ran, Exit::Overflow) => left -= ran,
                    _ => break,
                }
            }
        }
        dram
    };
    let one_go = whole(&[u64::MAX]);
    let stepped = whole(&[1, 7, 333, 12_345, 1_000_001, u64::MAX]);
    assert_eq!(one_go, stepped);
    assert_eq!(sticky(&one_go, 0, 0), 1, "the run wraps counter 0");
}

#[test]
fn the_models_select_codes_match_the_event_table() {
    let catalog = Catalog::builtin();
    let pmu = catalog.pmu("sparc-t4-dram").unwrap();
    for code in 0..16 {
        let event = pmu.table.by_code(code, pmu.desc.model);
        assert_eq!(select(code).is_some(), event.is_some(), "code {code:#x}");
        let (Some(s), Some(e)) = (select(code), event) else { continue };
        let scope = match s.scope {
            Scope::Port => "port",
            Scope::Combined => "combined",
            Scope::Channel(_) => "channel",
        };
        assert_eq!(e.attr("scope"), Some(scope), "{}", e.name);
    }
    assert_eq!(select(0xB).map(|s| s.scope), Some(Scope::Channel(0)));
    assert_eq!(select(0xC).map(|s| s.scope), Some(Scope::Channel(1)));
    assert_eq!(COUNTERS_PER_MCU, 4);
    assert_eq!((1..4).map(Owner::of_counter).collect::<Vec<_>>(), [Some(SOLARIS), Some(PM), Some(PM)]);
    assert_eq!(Owner::of_counter(0), Some(SOLARIS));
    assert_eq!(Owner::of_counter(4), None);
}

#[test]
fn the_combined_counters_of_every_mcu_add_up_to_a_workloads_memory_traffic() {
    let cycles = 20_000_000;
    let cat = pmukit_arch::Catalog::builtin();
    let opts = pmukit_sim::stat::StatOptions { workload: "stream".into(), seed: 1, threads: Some(2), ..Default::default() };
    let blocks = || pmukit_sim::stat::blocks(&[cat.pmu("sparc-t4").unwrap()], &opts, pmukit_sim::stat::Reads::ALL).unwrap().0.every();
    let mut dram = T4Dram::new();
    for mcu in 0..MCUS {
        program(&mut dram, mcu, [ALL_READS, ALL_WRITES, CHANNEL0, CHANNEL1]);
    }
    let mut cursor = Cursor::new(blocks());
    assert_eq!(engine::run(&mut dram, &mut cursor, cycles), (cycles, Exit::Budget));
    let totals = pmukit_sim::stream::Totals::of(blocks(), cycles, |_| true);
    let sum = |n: usize| (0..MCUS).map(|m| count(&dram, m, n)).sum::<u64>();
    assert_eq!(sum(0), totals.get(Signal::MemoryReads));
    assert_eq!(sum(1), totals.get(Signal::MemoryWrites));
    assert!(sum(0) > 0 && sum(1) > 0);
    // The PM channel counters exist on MCUs 0 and 1: together they see those MCUs' traffic.
    for mcu in 0..2 {
        assert_eq!(count(&dram, mcu, 2) + count(&dram, mcu, 3), count(&dram, mcu, 0) + count(&dram, mcu, 1));
    }
}

/// A register access or a run.
#[derive(Debug, Clone)]
enum Op {
    Read(u64, Owner),
    Write(u64, u64, Owner),
    Run(Vec<Span>, u64, u64),
}

fn owner() -> impl Strategy<Value = Owner> {
    prop_oneof![Just(SOLARIS), Just(PM)]
}

/// Every register slot of MCUs 0-4 (absent and beyond included), misaligned neighbours
/// and anything at all.
fn address() -> impl Strategy<Value = u64> {
    let slot = (0u64..3, 0u64..5).prop_map(|(r, m)| CTL_PA + 8 * r + STEP * m);
    prop_oneof![4 => slot.clone(), 1 => (slot, 1u64..8).prop_map(|(a, d)| a + d), 1 => any::<u64>()]
}

fn value() -> impl Strategy<Value = u64> {
    prop_oneof![any::<u64>(), 0u64..0x1_0000, (0u64..0x1_0000, 0u64..0x1_0000).prop_map(|(a, b)| a << 48 | b << 16 | a)]
}

fn span() -> impl Strategy<Value = Span> {
    (0u64..0x800, 0u8..=8, 0u8..=8, 1u64..2000, any::<bool>()).prop_map(|(addr, r, w, cycles, data)| {
        let s = traffic(addr, r, w, cycles);
        if data {
            s
        } else {
            Span { mem: None, ip: addr, ..s }
        }
    })
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        1 => (address(), owner()).prop_map(|(a, o)| Op::Read(a, o)),
        3 => (address(), value(), owner()).prop_map(|(a, v, o)| Op::Write(a, v, o)),
        1 => (prop::collection::vec(span(), 1..5), 1u64..100_000, 1u64..10_000_000).prop_map(|(b, r, c)| Op::Run(b, r, c)),
    ]
}

/// The select fields and counter registers `owner` does not own, in every MCU.
fn not_owned_by(dram: &T4Dram, owner: Owner) -> Vec<Result<u64, DramError>> {
    let mut out = Vec::new();
    for mcu in 0..MCUS {
        let ctl = dram.read(ctl_pa(mcu), owner).unwrap();
        for (n, (sel, _, _, _)) in DRAM_COUNTERS.iter().enumerate() {
            if Owner::of_counter(n) != Some(owner) {
                out.push(Ok(sel.get(ctl)));
                out.push(dram.read(count_pa(mcu, n), owner));
            }
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// No input panics; a refused write changes nothing; an accepted write leaves the
    /// other owner's fields and counters alone (§10.5); counters stay within 31 bits.
    #[test]
    fn random_register_traffic_and_runs_are_safe(ops in prop::collection::vec(op(), 1..40)) {
        let mut dram = T4Dram::new();
        for op in ops {
            let before = dram.clone();
            match op {
                Op::Read(pa, o) => {
                    let _ = dram.read(pa, o);
                    prop_assert_eq!(&dram, &before);
                }
                Op::Write(pa, v, o) => {
                    let theirs = not_owned_by(&dram, o);
                    match dram.write(pa, v, o) {
                        Err(_) => prop_assert_eq!(&dram, &before),
                        Ok(()) => prop_assert_eq!(not_owned_by(&dram, o), theirs),
                    }
                }
                Op::Run(body, repeat, cycles) => {
                    let mut cursor = Cursor::new(Box::new(std::iter::once(Block { body, repeat })));
                    // Stops only where a counter wrapped (TD15), which sets its sticky bit.
                    if let (_, Exit::Overflow) = engine::run(&mut dram, &mut cursor, cycles) {
                        let stickies = (0..MCUS).flat_map(|m| (0..COUNTERS_PER_MCU).map(move |n| (m, n)));
                        prop_assert!(stickies.clone().any(|(m, n)| (m < 2 || n < 2) && sticky(&dram, m, n) == 1));
                    }
                }
            }
            for i in 0..dram.counters() {
                prop_assert!(dram.headroom(i) >= 1 && dram.headroom(i) <= WRAP);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Issue 14: `each_rate` asks only the counters of the MCU a span's transactions
    /// route to; every counter's rate is still exactly `rate`'s, whatever the selects.
    #[test]
    fn each_rate_answers_as_rate_does(ctl in prop::collection::vec((0..MCUS, value()), 1..8), spans in prop::collection::vec(span(), 1..24)) {
        let mut dram = T4Dram::new();
        for (mcu, v) in ctl {
            for o in [SOLARIS, PM] {
                let _ = dram.write(ctl_pa(mcu), v, o);
            }
        }
        for s in spans {
            let mut each = Vec::new();
            dram.each_rate(&s, dram.address_class(&s), &mut |i, r| each.push((i, r)));
            let one: Vec<(usize, u64)> = (0..dram.counters()).map(|i| (i, dram.rate(i, &s))).filter(|&(_, r)| r > 0).collect();
            prop_assert_eq!(each, one);
        }
    }
}
