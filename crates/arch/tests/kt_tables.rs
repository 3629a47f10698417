//! `pmukit_arch::sparc::kt` against "KT performance registers"
//! (`shared/spec/sparc-kt-performance-registers-hv-api.txt`): every number is written
//! out from the text here, with its section. docs/kt.md's TK rows name the readings.

use pmukit_arch::sparc::kt::{
    self, perfreg, perfregs, DramReg, GlobalAddress, PerfReg, Scope, Target, DRAM_PERF_COUNT01, DRAM_PERF_COUNT23, DRAM_PERF_CTL, HT,
    L2_CONTROL, L2_CONTROL_VIRTUAL, L2_PERF_CONFIG, PERF_CONFIG, SAMPLE, SPARC_PCR,
};
use pmukit_arch::sparc::sun4v::{group, ApiGroup, Function, Trap, KT_GET_PERFREG, KT_SET_PERFREG};
use pmukit_arch::sparc::t4;

/// §3.1, one node's rows as the table writes them: name suffix and local address.
const NODE_ROWS: [(&str, u64); 6] = [
    ("MCU0_PCR", 0x84_0000_0408),
    ("MCU0_PIC01", 0x84_0000_0410),
    ("MCU0_PIC23", 0x84_0000_0418),
    ("MCU1_PCR", 0x84_0000_1408),
    ("MCU1_PIC01", 0x84_0000_1410),
    ("MCU1_PIC23", 0x84_0000_1418),
];

#[test]
fn s3_1_every_perfreg_row_for_one_to_four_nodes() {
    for nodes in 1..=4usize {
        let rows = perfregs(nodes).unwrap();
        assert_eq!(rows.len(), 2 + 6 * nodes, "{nodes} nodes");
        assert_eq!(
            rows[0],
            PerfReg {
                number: 0,
                scope: Scope::Local,
                name: "SPARC PCR",
                target: Target::SparcPcr,
                local_address: None,
                global_address: None
            }
        );
        assert_eq!(
            rows[1],
            PerfReg {
                number: 1,
                scope: Scope::Local,
                name: "all L2 Bank CRs",
                target: Target::L2Control,
                local_address: None,
                global_address: None
            }
        );
        for i in 0..nodes {
            for (k, (suffix, address)) in NODE_ROWS.iter().enumerate() {
                let number = 2 + i * 6 + k;
                let row = rows[number];
                assert_eq!(row.number, number as u64);
                assert_eq!(row.scope, Scope::Node(i));
                assert_eq!(row.name, format!("NODE{i}_{suffix}"));
                assert_eq!(row.target, Target::Dram { node: i, mcu: k / 3, reg: DramReg::ALL[k % 3] });
                assert_eq!(row.local_address, Some(*address), "local addresses are the same on every node (TK3)");
                let global = row.global_address.unwrap();
                assert_eq!(global, GlobalAddress { node: i, offset: address & 0xFFFF_FFFF });
                assert_eq!(global.to_string(), format!("DRAM{i}.0000.{:04x}", address & 0xFFFF));
                assert_eq!(perfreg(number as u64), Some(&row));
            }
        }
    }
    assert_eq!(perfregs(0), None);
    assert_eq!(perfregs(5), None, "§2.0: at most four-way");
}

#[test]
fn s3_1_the_last_perfreg_is_2_plus_4_times_6_minus_1() {
    assert_eq!(kt::PERFREG_LIMIT, 26);
    assert_eq!(perfreg(25).unwrap().name, "NODE3_MCU1_PIC23");
    assert_eq!(perfreg(26), None);
    assert_eq!(perfreg(u64::MAX), None);
}

#[test]
fn s3_2_function_numbers_and_group() {
    assert_eq!(
        (KT_GET_PERFREG.trap, KT_GET_PERFREG.number, KT_GET_PERFREG.group, KT_GET_PERFREG.args),
        (Trap::Fast, 0x122, Some(0x209), 1)
    );
    assert_eq!(
        (KT_SET_PERFREG.trap, KT_SET_PERFREG.number, KT_SET_PERFREG.group, KT_SET_PERFREG.args),
        (Trap::Fast, 0x123, Some(0x209), 2)
    );
    assert_eq!(group::KT_CPU, 0x209);
    let kt_group = ApiGroup::by_number(0x209).unwrap();
    assert_eq!(kt_group.functions().map(|f| f.number).collect::<Vec<_>>(), [0x122, 0x123]);
    assert_eq!(Function::by_number(Trap::Fast, 0x122), Some(&KT_GET_PERFREG));
}

#[test]
fn s2_3_perf_config_is_bits_1_0_virtual_and_37_36_in_every_bank() {
    assert_eq!((PERF_CONFIG.msb, PERF_CONFIG.lsb), (1, 0));
    assert_eq!((L2_PERF_CONFIG.msb, L2_PERF_CONFIG.lsb), (37, 36));
    for config in 0..4u64 {
        assert_eq!(kt::bank_with_virtual(0, config), config << 36);
        assert_eq!(kt::virtual_of_bank(config << 36), config);
        // Only bits 37:36 of the bank change; the hypervisor's other bits stay.
        assert_eq!(kt::bank_with_virtual(u64::MAX, config), !(3 << 36) | config << 36);
    }
    assert_eq!(kt::virtual_of_bank(!(3u64 << 36)), 0, "no other bank bit is exposed");
    // "The PERF_CONFIG bits are the only bits that are exposed": 63:2 reserved (TK7).
    assert_eq!(L2_CONTROL_VIRTUAL.reserved_mask(), !3);
    assert_eq!(L2_CONTROL_VIRTUAL.read(u64::MAX), 3);
}

#[test]
fn s3_0_perf_config_values_in_the_texts_order_default_all_misses() {
    assert_eq!(kt::PERF_CONFIG_ALL_MISSES, 0, "default mode: all L2 misses");
    assert_eq!(kt::PERF_CONFIG_LOCAL, 1);
    assert_eq!(kt::PERF_CONFIG_REMOTE, 2);
    assert_eq!(kt::PERF_CONFIG_CACHE_TO_CACHE, 3);
    assert_eq!(L2_CONTROL.reset, 0);
    assert_eq!(L2_PERF_CONFIG.get(L2_CONTROL.reset), kt::PERF_CONFIG_ALL_MISSES);
}

#[test]
fn s2_2_s2_3_addresses() {
    for (n, base) in [(0usize, 0x84_0000_0000u64), (1, 0x84_0000_1000)] {
        assert_eq!(kt::dram_local_address(n, DramReg::Pcr), base + 0x408, "0x84.0000.n408");
        assert_eq!(kt::dram_local_address(n, DramReg::Pic01), base + 0x410, "0x84.0000.n410");
        assert_eq!(kt::dram_local_address(n, DramReg::Pic23), base + 0x418, "0x84.0000.n418");
    }
    assert_eq!(kt::MCUS_PER_NODE, 2, "§2.2: n is 0 through 1");
    assert_eq!(kt::L2_CONTROL_ADDRESS, 0xA9_0000_0000, "§2.3");
    assert_eq!((kt::PCR_ASR, kt::PIC_ASR), (0x10, 0x11), "§2.1");
    assert_eq!(kt::MAX_NODES, 4, "§2.0");
    assert_eq!(kt::L2_BANKS_PER_NODE, 16, "§2.2: two MCUs, each fed by 8 L2 banks (TK9)");
}

#[test]
fn s2_1_pcr_sample_bit_32_and_ht_bit_3() {
    assert_eq!((SAMPLE.msb, SAMPLE.lsb), (32, 32), "§2.1: sample mode, bit 32");
    assert_eq!((HT.msb, HT.lsb), (3, 3), "TK5: the Niagara 2 position");
    // Every other bit is opaque, stored as written: no reserved bits.
    assert_eq!(SPARC_PCR.reserved_mask(), 0);
    assert_eq!(SPARC_PCR.apply_write(0, u64::MAX).stored, u64::MAX);
}

#[test]
fn s2_2_dram_registers_use_the_t4_layout() {
    // TK4: the fields are T4's (T4 Supplement TABLES 10-4 to 10-6).
    assert_eq!(DRAM_PERF_CTL.fields.as_ref(), t4::DRAM_PERF_CTL.fields.as_ref());
    assert_eq!(DRAM_PERF_COUNT01.fields.as_ref(), t4::DRAM_PERF_COUNT01.fields.as_ref());
    assert_eq!(DRAM_PERF_COUNT23.fields.as_ref(), t4::DRAM_PERF_COUNT23.fields.as_ref());
    assert_eq!(DramReg::ALL.map(|r| r.register().name), ["DRAM_PERF_CTL", "DRAM_PERF_COUNT01", "DRAM_PERF_COUNT23"]);
}

/// TK16: the user and privileged trace bits the CLC counting needs sit where the
/// Niagara 2 PCR has them (UT bit 2, ST bit 1), beside §2.1's HT (bit 3).
#[test]
fn tk16_pcr_ut_bit_2_st_bit_1() {
    assert_eq!((kt::UT.msb, kt::UT.lsb), (2, 2));
    assert_eq!((kt::ST.msb, kt::ST.lsb), (1, 1));
    assert_eq!(SPARC_PCR.encode(&[("ut", 1), ("st", 1), ("ht", 1)]).unwrap(), 0b1110);
}

/// §2.1: the PIC is ASR 0x11, read and written directly by privileged code; TK16: its
/// lower 32 bits (pic0) count the CLC events, the upper half is stored as written.
#[test]
fn s2_1_tk16_pic_is_asr_0x11_with_pic0_in_bits_31_0() {
    assert_eq!(kt::PIC_ASR, 0x11);
    assert_eq!((kt::PIC0.msb, kt::PIC0.lsb), (31, 0));
    assert_eq!((kt::PIC1.msb, kt::PIC1.lsb), (63, 32));
    assert_eq!(kt::SPARC_PIC.reserved_mask(), 0);
}

/// §3.0 and TK6: one CLC event per PERF_CONFIG value, in the text's order, the default
/// (all misses) at 0.
#[test]
fn s3_0_clc_events_are_the_perf_config_values() {
    let cat = pmukit_arch::Catalog::builtin();
    let pmu = cat.pmu("sparc-kt").unwrap();
    let events: Vec<(&str, u64)> = pmu.events().map(|e| (e.name.as_ref(), e.code)).collect();
    assert_eq!(
        events,
        [
            ("L2_MISSES", kt::PERF_CONFIG_ALL_MISSES),
            ("L2_MISSES_LOCAL", kt::PERF_CONFIG_LOCAL),
            ("L2_MISSES_REMOTE", kt::PERF_CONFIG_REMOTE),
            ("L2_MISSES_CACHE_TO_CACHE", kt::PERF_CONFIG_CACHE_TO_CACHE),
        ]
    );
    // Placing an event writes its code to PERF_CONFIG (PerfReg# 1) and the trace bits
    // of the privilege modifiers to the PCR (user and privileged by default).
    let sel = cat.resolve("L2_MISSES_REMOTE", "sparc-kt").unwrap();
    let set = pmukit_arch::encode_set(pmu, &[sel]).unwrap();
    assert_eq!(set.registers, vec![("SPARC_PCR", 0b0110), ("L2_CONTROL_VIRTUAL", kt::PERF_CONFIG_REMOTE)]);
}

/// §2.2 with TK4 and TK11: the KT memory controllers use TABLE 10-7's select codes on
/// all four counters, in the KT registers.
#[test]
fn s2_2_kt_dram_uses_table_10_7_on_all_four_counters() {
    let cat = pmukit_arch::Catalog::builtin();
    let kt_dram = cat.pmu("sparc-kt-dram").unwrap();
    let t4_dram = cat.pmu("sparc-t4-dram").unwrap();
    let codes = |p: &pmukit_core::pmu::Pmu| p.events().map(|e| (e.name.to_string(), e.code)).collect::<Vec<_>>();
    assert_eq!(codes(kt_dram), codes(t4_dram));
    let sels: Vec<_> = ["READS", "WRITES", "ALL_READS", "ALL_WRITES"].iter().map(|e| cat.resolve(e, "sparc-kt-dram").unwrap()).collect();
    let set = pmukit_arch::encode_set(kt_dram, &sels).unwrap();
    assert_eq!(set.registers, vec![("DRAM_PERF_CTL", 0xA810)]);
}
