//! SPARC T4 register layouts pinned to TABLES 10-1 and 10-3 to 10-6.

use pmukit_arch::sparc::t4::{self, DRAM_MAP, DRAM_PERF_COUNT01, DRAM_PERF_COUNT23, DRAM_PERF_CTL, PCR, PIC};
use pmukit_core::register::{Access, Register};

fn layout(r: &Register) -> Vec<(&'static str, String, Access)> {
    r.fields.iter().map(|f| (f.name, f.bits(), f.access)).collect()
}

const RSVD0: Access = Access::Reserved { unpredictable_read: false };

#[test]
fn table_10_1_pcr_fields_bits_and_access() {
    let expect = [
        ("RSVD", "63:19", RSVD0),
        ("ntc", "18", Access::Sticky),
        ("picnht", "17", Access::ReadWrite),
        ("picnpt", "16", Access::ReadWrite),
        ("sl", "15:11", Access::ReadWrite),
        ("mask", "10:5", Access::ReadWrite),
        ("ht", "4", Access::ReadWrite),
        ("st", "3", Access::ReadWrite),
        ("ut", "2", Access::ReadWrite),
        ("toe", "1", Access::ReadWrite),
        ("ov", "0", Access::Sticky),
    ];
    let got = layout(&PCR);
    assert_eq!(got.len(), expect.len());
    for (g, (n, b, a)) in got.iter().zip(expect) {
        assert_eq!((g.0, g.1.as_str(), g.2), (n, b, a));
    }
    assert_eq!((PCR.width, PCR.reset), (64, 0), "TABLE 10-1: every initial value is 0");
}

#[test]
fn s10_2_ntc_and_ov_can_be_cleared_but_never_written_to_one() {
    let set = t4::OV.set(t4::NTC.set(0, 1), 1);
    assert_eq!(PCR.apply_write(0, set).stored, 0, "writing 1 does not set them");
    assert_eq!(PCR.apply_write(set, set).stored, set, "writing 1 keeps them");
    assert_eq!(PCR.apply_write(set, 0).stored, 0, "writing 0 clears them");
}

#[test]
fn s10_2_all_other_fields_are_updated_on_every_write() {
    let v = PCR.encode(&[("sl", 3), ("mask", 0x3F), ("ut", 1), ("st", 1), ("ht", 1), ("toe", 1), ("picnht", 1), ("picnpt", 1)]).unwrap();
    assert_eq!(PCR.apply_write(0, v).stored, v);
    assert_eq!(PCR.apply_write(v, 0).stored, 0);
}

#[test]
fn table_10_1_pcrs_are_at_asi_0x64_vas_0_to_0x18() {
    assert_eq!(t4::PCR_ASI, 0x64);
    assert_eq!((0..4).map(t4::counter_va).collect::<Vec<_>>(), [0x00, 0x08, 0x10, 0x18]);
}

#[test]
fn table_10_3_pic_is_a_32_bit_counter_in_a_64_bit_register() {
    let expect = [("RSVD", "63:32", RSVD0), ("counter", "31:0", Access::ReadWrite)];
    let got = layout(&PIC);
    for (g, (n, b, a)) in got.iter().zip(expect) {
        assert_eq!((g.0, g.1.as_str(), g.2), (n, b, a));
    }
    assert_eq!(t4::PIC_ASI, 0xB0);
    assert!(PIC.check_write(0x1_0000_0000).is_err(), "upper bits are reserved");
}

#[test]
fn table_10_4_dram_perf_ctl_select_fields() {
    let expect = [("RSVD", "63:16"), ("sel3", "15:12"), ("sel2", "11:8"), ("sel1", "7:4"), ("sel0", "3:0")];
    let got = layout(&DRAM_PERF_CTL);
    for (g, (n, b)) in got.iter().zip(expect) {
        assert_eq!((g.0, g.1.as_str()), (n, b));
    }
    assert!(matches!(got[0].2, Access::Reserved { unpredictable_read: true }), "initial value X");
}

#[test]
fn tables_10_5_and_10_6_dram_counters_are_31_bits_with_a_sticky_overflow_bit() {
    for (reg, names) in [
        (&DRAM_PERF_COUNT01, ["sticky0", "counter0", "sticky1", "counter1"]),
        (&DRAM_PERF_COUNT23, ["sticky3", "counter3", "sticky2", "counter2"]),
    ] {
        let got = layout(reg);
        let bits: Vec<&str> = got.iter().map(|g| g.1.as_str()).collect();
        assert_eq!(bits, ["63", "62:32", "31", "30:0"]);
        let got_names: Vec<&str> = got.iter().map(|g| g.0).collect();
        assert_eq!(got_names, names);
        assert_eq!(got[0].2, Access::Sticky);
        assert_eq!(reg.fields[1].width(), 31);
    }
}

#[test]
fn tables_10_4_to_10_6_addresses_counts_and_step() {
    let got: Vec<(&str, u64, u32)> = DRAM_MAP.iter().map(|(r, a, c)| (r.name, *a, *c)).collect();
    assert_eq!(
        got,
        [
            ("DRAM_PERF_CTL_REG", 0xF804_0000_0408, 4),
            ("DRAM_PERF_COUNT01_REG", 0xF804_0000_0410, 4),
            ("DRAM_PERF_COUNT23_REG", 0xF804_0000_0418, 2)
        ]
    );
    assert_eq!(t4::DRAM_STEP, 4096);
}

/// TABLE 10-2 marks sl 12-15 and 27 "Reserved"; sl 29-31 fall on its missing last page
/// (ERRATA T1), so decoding says they are undocumented, not reserved.
#[test]
fn table_10_2_decode_calls_only_the_marked_sl_values_reserved() {
    let catalog = pmukit_arch::Catalog::builtin();
    let pmu = catalog.pmu("sparc-t4").unwrap();
    let sl_meaning = |sl: u64| {
        let d = pmukit_arch::decode(pmu, "PCR", t4::SL.set(0, sl)).unwrap();
        d.fields.iter().find(|f| f.name == "sl").unwrap().meaning.clone()
    };
    for sl in [12, 13, 14, 15, 27] {
        assert_eq!(sl_meaning(sl), format!("sl {sl}: reserved"));
    }
    for sl in [29, 30, 31] {
        let meaning = sl_meaning(sl);
        assert!(meaning.contains("undocumented") && !meaning.contains("reserved"), "sl {sl}: {meaning}");
    }
    assert_eq!(sl_meaning(28), "COMMIT");
}
