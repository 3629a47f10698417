//! Montecito's qualification and capture configuration registers, pinned to §3.3.5-
//! §3.3.10 of the "Dual-Core Update to the Intel Itanium 2 Processor Reference Manual":
//! field positions and reset values (Tables 3-10 to 3-16, 3-18, 3-20, 3-21, 3-23,
//! 3-26, 3-28, 3-30, 3-32), the predetermined bits PMC38 and PMC41 must keep, and the
//! layouts a value selects.

use pmukit_arch::montecito::capture::{self, dear_threshold, iear_threshold, last_written, pmc37_layout};
use pmukit_arch::montecito::pmu::specific_pmc;
use pmukit_arch::montecito::qualification as q;
use pmukit_arch::montecito::registers::pmc_reset;
use pmukit_arch::{decode, Catalog};
use pmukit_core::register::{Access, Register};

/// Each field's (name, msb, lsb), in the register's order (high bits first).
fn layout(r: &Register) -> Vec<(&'static str, u8, u8)> {
    r.fields.iter().map(|f| (f.name, f.msb, f.lsb)).collect()
}

fn ignored(r: &Register) -> Vec<(u8, u8)> {
    r.fields.iter().filter(|f| matches!(f.access, Access::Reserved { .. })).map(|f| (f.msb, f.lsb)).collect()
}

fn warnings(register: &str, value: u64) -> Vec<String> {
    let catalog = Catalog::builtin();
    decode(catalog.pmu("montecito").unwrap(), register, value).unwrap().warnings
}

fn meaning(register: &str, value: u64, field: &str) -> String {
    let catalog = Catalog::builtin();
    let d = decode(catalog.pmu("montecito").unwrap(), register, value).unwrap();
    d.fields.into_iter().find(|f| f.name == field).unwrap_or_else(|| panic!("{register} has no {field}")).meaning
}

#[test]
fn table_3_11_opcode_match_registers_pmc32_34() {
    assert_eq!(
        layout(&q::PMC32),
        [
            ("ig", 63, 58),
            ("ig_ad", 57, 57),
            ("inv", 56, 56),
            ("ig", 55, 52),
            ("m", 51, 51),
            ("i", 50, 50),
            ("f", 49, 49),
            ("b", 48, 48),
            ("ig", 47, 41),
            ("mask", 40, 0)
        ]
    );
    assert_eq!(ignored(&q::PMC32), [(63, 58), (55, 52), (47, 41)]);
    // "NOTE: This bit is ignored in PMC34", for inv and for ig_ad.
    assert_eq!(ignored(&q::PMC34), [(63, 58), (57, 56), (55, 52), (47, 41)]);
    // HW reset: mask all 1, b f i m 1, inv 1, ig_ad 1 (ERRATA MA9: not §3.3.12's value).
    assert_eq!(q::PMC32.reset, ((1 << 41) - 1) | (0xf << 48) | (1 << 56) | (1 << 57));
    // PMC34 less the bits it ignores: pmukit's value decodes without a warning.
    assert_eq!(q::PMC34.reset, q::PMC32.reset & !(0b11 << 56));
    assert_eq!((pmc_reset(32), pmc_reset(34)), (Some(q::PMC32.reset), Some(q::PMC34.reset)));
    let d = decode(Catalog::builtin().pmu("montecito").unwrap(), "PMC34", q::PMC34.reset).unwrap();
    assert!(d.warnings.is_empty(), "{:?}", d.warnings);
}

#[test]
fn table_3_12_opcode_match_registers_pmc33_35() {
    assert_eq!(layout(&q::PMC33_35), [("ig", 63, 41), ("match", 40, 0)]);
    assert!(q::PMC33_35.is_named("PMC33") && q::PMC33_35.is_named("PMC35"));
    assert_eq!((pmc_reset(33), pmc_reset(35)), (Some((1 << 41) - 1), Some((1 << 41) - 1)), "match: all 1s");
}

#[test]
fn table_3_13_pmc36_channels_and_its_reserved_ones() {
    assert_eq!(
        layout(&q::PMC36),
        [("ig", 63, 32), ("rsv", 31, 4), ("ch3_ig_opc", 3, 3), ("ch2_ig_opc", 2, 2), ("ch1_ig_opc", 1, 1), ("ch0_ig_opc", 0, 0)]
    );
    // Channels 0 (constrained) and rsv all ones: ERRATA MA10, not §3.3.12's 0xfffff0.
    assert_eq!(pmc_reset(36), Some(0xffff_fff0));
    assert!(warnings("PMC36", 0xffff_fff0).is_empty());
    assert!(warnings("PMC36", 0xffff_ffff).is_empty(), "every channel unconstrained is allowed");
    let w = warnings("PMC36", 0x00ff_fff0);
    assert!(w.iter().any(|w| w.contains("rsv")), "§3.3.6.2: users should not change rsv: {w:?}");
}

#[test]
fn table_3_10_pmc38_fields_and_its_predetermined_0xdb6() {
    let fields: Vec<(&str, u8)> = q::PMC38.fields.iter().filter(|f| f.name != "rsv").map(|f| (f.name, f.lsb)).collect();
    assert_eq!(fields, [("fine", 13), ("ig_ibrp3", 10), ("ig_ibrp2", 7), ("ig_ibrp1", 4), ("ig_ibrp0", 1)]);
    assert_eq!(pmc_reset(38), Some(0xdb6));
    assert!(warnings("PMC38", 0xdb6).is_empty());
    // Enabling ranges 0 and 2 in fine mode (§3.3.5.4) touches listed bits only.
    assert!(warnings("PMC38", 0xdb6 & !(1 << 1) & !(1 << 7) | 1 << 13).is_empty());
    // §3.3.5.2: modifying a bit Table 3-10 does not list is undefined behaviour.
    assert!(!warnings("PMC38", 0xdb6 & !(1 << 2)).is_empty());
    assert!(!warnings("PMC38", 0xdb6 | 1 << 20).is_empty());
}

#[test]
fn table_3_14_pmc41_fields_and_its_predetermined_0x2078fefefefe() {
    let fields: Vec<(&str, u8, u8)> = layout(&q::PMC41).into_iter().filter(|f| f.0 != "rsv").collect();
    assert_eq!(
        fields,
        [
            ("en_dbrp3", 48, 48),
            ("en_dbrp2", 47, 47),
            ("en_dbrp1", 46, 46),
            ("en_dbrp0", 45, 45),
            ("cfgdtag3", 28, 27),
            ("cfgdtag2", 20, 19),
            ("cfgdtag1", 12, 11),
            ("cfgdtag0", 4, 3)
        ]
    );
    assert_eq!(pmc_reset(41), Some(0x2078_fefe_fefe));
    assert!(warnings("PMC41", 0x2078_fefe_fefe).is_empty());
    // The reset value constrains nothing: every cfgdtag is 11.
    assert_eq!(meaning("PMC41", 0x2078_fefe_fefe, "cfgdtag2"), "no constraints");
    assert!(!warnings("PMC41", 0x2078_fefe_fefe ^ 1 << 1).is_empty(), "§3.3.7: unlisted bits keep their value");
}

#[test]
fn table_3_15_pmc37_reads_in_the_layout_its_ct_selects() {
    // ct = 1x: an eight-bit threshold in 12:5 (Table 3-16).
    let cache = pmc37_layout(0x2000);
    assert_eq!(layout(&cache), [("ignored", 63, 16), ("rsv", 15, 14), ("ct", 13, 13), ("umask", 12, 5), ("pm", 4, 4), ("plm", 3, 0)]);
    // ct = 00 or 01: 13:12 is ct, Table 3-18's umask is 7:5.
    let tlb = pmc37_layout(0x1000);
    assert_eq!(
        layout(&tlb),
        [("ignored", 63, 16), ("rsv", 15, 14), ("ct", 13, 12), ("umask_hi", 11, 8), ("umask", 7, 5), ("pm", 4, 4), ("plm", 3, 0)]
    );
    assert_eq!(meaning("PMC37", 0x2000 | 0xfe << 5, "umask"), "latency >= 8 cycles");
    assert_eq!(meaning("PMC37", 0x2000 | 0x45 << 5, "umask"), "latency > 0: every L1I miss", "01xxxxxx");
    assert_eq!(meaning("PMC37", 0x2000, "umask"), "RAB hit: every L1I miss that hit in the RAB");
    assert_eq!(meaning("PMC37", 0b111 << 5, "umask"), "L2TLB: hit the L2 TLB, VHPT: hit the VHPT, FAULT: a TLB miss fault");
    assert_eq!(meaning("PMC37", 0x1000, "ct"), "nothing monitored");
}

#[test]
fn table_3_16_iear_thresholds() {
    let table = [(0xff, 4), (0xfe, 8), (0xfc, 16), (0xf8, 32), (0xf0, 128), (0xe0, 256), (0xc0, 1024), (0x80, 4096)];
    for (umask, cycles) in table {
        assert_eq!(iear_threshold(umask), format!("latency >= {cycles} cycles"));
    }
    assert!(iear_threshold(0x81).starts_with("undefined"));
}

#[test]
fn table_3_20_pmc40_fields_and_its_unit_masks() {
    let fields: Vec<(&str, u8, u8)> = layout(&capture::PMC40).into_iter().filter(|f| f.0 != "ig").collect();
    assert_eq!(fields, [("ism", 25, 24), ("umask", 19, 16), ("mode", 8, 7), ("pm", 6, 6), ("plm", 3, 0)]);
    // Table 3-21: 0000 >= 4 cycles, doubling to 1010 >= 4096; 1011-1111 capture nothing.
    assert_eq!((0..=10).map(|u| dear_threshold(u).unwrap()).collect::<Vec<_>>(), [4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096]);
    assert_eq!(dear_threshold(0b1011), None);
    assert_eq!(meaning("PMC40", 0x0200_0000 | 0b0110 << 16, "umask"), "latency >= 256 cycles");
    // Table 3-23 (mode 01): bit 16 unused, 17 L2DTLB, 18 VHPT, 19 FAULT.
    assert_eq!(meaning("PMC40", 0x0200_0000 | 1 << 7 | 0b0010 << 16, "umask"), "L2TLB: hit the L2 TLB");
    assert_eq!(meaning("PMC40", 1 << 7 | 0b0001 << 16, "umask"), "disabled: nothing captured", "000x");
    assert_eq!(meaning("PMC40", 1 << 8, "mode"), "ALAT misses");
}

#[test]
fn table_3_26_pmc39_fields() {
    let fields: Vec<(&str, u8, u8)> = layout(&capture::PMC39).into_iter().filter(|f| f.0 != "ig").collect();
    assert_eq!(fields, [("brt", 15, 14), ("ppm", 13, 12), ("ptm", 11, 10), ("tm", 9, 8), ("ds", 7, 7), ("pm", 6, 6), ("plm", 3, 0)]);
    // "To capture all correctly predicted Itanium instruction branches": ds=0, tm=11,
    // ptm=10, ppm=10, brt=00.
    let v = 0b11 << 8 | 0b10 << 10 | 0b10 << 12;
    assert_eq!(meaning("PMC39", v, "ptm"), "target predicted correctly");
    assert!(!warnings("PMC39", 1 << 7).is_empty(), "ds = 1 is reserved");
}

#[test]
fn table_3_30_pmc42_fields() {
    let fields: Vec<(&str, u8, u8)> = layout(&capture::PMC42).into_iter().filter(|f| f.0 != "ig").collect();
    assert_eq!(fields, [("delay", 18, 11), ("mode", 10, 8), ("pm", 6, 6), ("plm", 3, 0)]);
    assert_eq!(meaning("PMC42", 0b100 << 8, "mode"), "IP-EAR mode: the trace buffer captures retired IPs");
}

/// ERRATA MA19: Table 3-30 defines modes 000 and 100; the others decode as what the
/// model does with them: bit 10 runs the IP-EAR (`capture::ip_ear_mode`), and any
/// mode but 000 leaves PMC39 ignored (§3.3.10), so 001-011 capture nothing.
#[test]
fn table_3_30_pmc42_modes_decode_as_the_model_runs_them() {
    for mode in 0..8u64 {
        let said = meaning("PMC42", mode << 8, "mode");
        let ip_ear = capture::ip_ear_mode(mode << 8);
        assert_eq!(ip_ear, mode >> 2 == 1);
        let expected = match mode {
            0 => "ETB mode",
            1..=3 => "captures nothing",
            _ => "IP-EAR",
        };
        assert!(said.contains(expected), "mode {mode:03b}: {said}");
        assert!(!said.contains("undefined"), "mode {mode:03b}: {said}");
    }
}

#[test]
fn tables_3_28_and_3_32_pmd38_index_and_the_last_written_entry() {
    assert_eq!(layout(&capture::PMD38), [("ig", 63, 6), ("full", 5, 5), ("ig", 4, 4), ("ebi", 3, 0)]);
    // §3.3.10.1.2: full and ebi both zero: nothing captured.
    assert_eq!(last_written(0), None);
    assert_eq!(last_written(3), Some(50), "ebi is the next entry: PMD50 was the last");
    assert_eq!(last_written(0x20), Some(63), "wrapped at PMD48: the last was PMD63");
    assert_eq!(last_written(0x25), Some(52));
}

#[test]
fn the_model_drops_what_pmc32_42_ignore() {
    for index in 32..=42 {
        let all = u64::MAX;
        let layout = specific_pmc(index, all).unwrap();
        let kept: u64 =
            layout.fields.iter().filter(|f| !matches!(f.access, Access::Reserved { .. })).map(|f| f.mask()).fold(0, |m, f| m | f);
        assert_eq!(layout.apply_write(0, all).stored, kept, "PMC{index}");
    }
    assert!(specific_pmc(43, 0).is_none());
}

fn decode_given(register: &str, value: u64, given: &[(&str, u64)]) -> pmukit_core::register::Decoded {
    let catalog = Catalog::builtin();
    let given: Vec<(String, u64)> = given.iter().map(|(n, v)| (n.to_string(), *v)).collect();
    pmukit_arch::decode_with(catalog.pmu("montecito").unwrap(), register, value, &given).unwrap()
}

fn fields_of(d: &pmukit_core::register::Decoded) -> Vec<(String, String)> {
    d.fields.iter().map(|f| (f.name.clone(), f.bits.clone())).collect()
}

fn named(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
}

#[test]
fn tables_3_17_and_3_19_iear_data_by_pmc37_ct() {
    // Cache mode (ct = 1x): stat x1 valid, line address 63:5; PMD35 latency 11:0, overflow 12.
    let d = decode_given("PMD34", 0x1234_5661, &[("PMC37", 0x2000)]);
    assert_eq!(fields_of(&d), named(&[("address", "63:5"), ("ig", "4:2"), ("stat", "1:0")]));
    assert_eq!(d.fields[2].meaning, "valid event data");
    assert!(d.warnings.is_empty());
    let d = decode_given("PMD35", 0x1fff, &[("PMC37", 0x2000)]);
    assert_eq!(fields_of(&d), named(&[("ig", "63:13"), ("overflow", "12"), ("latency", "11:0")]));
    // TLB mode (ct = 00): stat tells where the miss was served; the latency is undefined.
    let d = decode_given("PMD34", 0b10, &[("PMC37", 0)]);
    assert_eq!(d.fields[2].meaning, "L1 ITLB miss hit in the VHPT");
    let d = decode_given("PMD35", 0, &[("PMC37", 0)]);
    assert_eq!(d.fields[1].meaning, "Undefined in this mode");
    // Without PMC37, its reset value (0: TLB mode) is assumed, and a warning says so.
    let d = decode_given("PMD34", 0b10, &[]);
    assert!(d.warnings.iter().any(|w| w.contains("--with PMC37=VALUE")), "{:?}", d.warnings);
}

#[test]
fn tables_3_22_3_24_3_25_dear_data_by_pmc40_mode() {
    let cache = decode_given("PMD33", 0x4000 | 0x123, &[("PMC40", 0)]);
    assert_eq!(fields_of(&cache), named(&[("ig", "63:16"), ("stat", "15:14"), ("overflow", "13"), ("latency", "12:0")]));
    assert_eq!(cache.fields[3].value, 0x123);
    let tlb = decode_given("PMD33", 0xc000, &[("PMC40", 0b01 << 7)]);
    assert_eq!(tlb.fields[1].meaning, "the data TLB miss produced a fault");
    let alat = decode_given("PMD33", 0x4000, &[("PMC40", 0b10 << 7)]);
    assert_eq!(alat.fields[1].meaning, "valid information in PMD32-33, and perhaps PMD36");
    assert_eq!(decode_given("PMD32", 0, &[("PMC40", 0b11 << 7)]).fields[0].meaning, "Undefined in this mode", "ALAT: no data address");
    // PMD36: one layout in every mode.
    let d = decode_given("PMD36", 0x4000_0000_0000_100e, &[]);
    assert_eq!(fields_of(&d), named(&[("address", "63:4"), ("vl", "3"), ("bn", "2"), ("slot", "1:0")]));
    assert!(d.warnings.is_empty(), "PMD36 needs no mode");
}

#[test]
fn tables_3_27_and_3_31_trace_buffer_entries_by_pmc42_mode() {
    let etb = decode_given("PMD57", 0x4000_0000_0000_1235, &[("PMC42", 0)]);
    assert_eq!(fields_of(&etb), named(&[("address", "63:4"), ("slot", "3:2"), ("mp", "1"), ("s", "0")]));
    assert_eq!(etb.fields[0].value, 0x400_0000_0000_0123);
    let ipear = decode_given("PMD48", 0xf000_0000_0012_3456, &[("PMC42", 0b100 << 8)]);
    assert_eq!(fields_of(&ipear), named(&[("cycl", "63:60"), ("ip", "59:8"), ("delay", "7:0")]));
    assert_eq!((ipear.fields[0].value, ipear.fields[1].value, ipear.fields[2].value), (0xf, 0x1234, 0x56));
}

#[test]
fn tables_3_29_and_3_33_pmd39_interleaves_the_entries_nibbles() {
    use pmukit_arch::montecito::etb::extension_bit;
    // PMD48 at 3:0, PMD56 at 7:4, PMD49 at 11:8, PMD57 at 15:12, ..., PMD63 at 63:60.
    let order: Vec<(usize, u32)> = [48, 56, 49, 57, 50, 58, 55, 63].iter().map(|&i| (i, extension_bit(i))).collect();
    assert_eq!(order, [(48, 0), (56, 4), (49, 8), (57, 12), (50, 16), (58, 20), (55, 56), (63, 60)]);
    let etb = decode_given("PMD39", 0b0011 << 4, &[("PMC42", 0)]);
    let field = |d: &pmukit_core::register::Decoded, n: &str| d.fields.iter().find(|f| f.name == n).unwrap().clone();
    assert_eq!((field(&etb, "pmd56_b1").bits.as_str(), field(&etb, "pmd56_b1").value), ("4", 1));
    assert_eq!(field(&etb, "pmd56_brflush").value, 1);
    let ipear = decode_given("PMD39", 0b1101 << 60, &[("PMC42", 0b100 << 8)]);
    assert_eq!((field(&ipear, "pmd63_cycl").value, field(&ipear, "pmd63_f").value, field(&ipear, "pmd63_ef").value), (0b11, 0, 1));
}

#[test]
fn sections_3_3_8_and_3_3_9_captures_read_as_address_latency_and_source() {
    use pmukit_arch::montecito::ear::{dear_sample, iear_sample, DearSample, IearSample, Miss, Served};
    // I-EAR cache mode: stat x1 valid, line 63:5, latency 11:0, overflow 12 (Table 3-17).
    assert_eq!(
        iear_sample(0x2000, 0x4000_1fe1, 0x1_0123),
        Some(IearSample { line: 0x4000_1fe0, miss: Miss::Cache { latency: 0x123, overflow: false } })
    );
    assert_eq!(iear_sample(0x2000, 0x4000_1fe2, 0), None, "x0: nothing captured");
    // I-EAR TLB mode: stat 10 the VHPT (Table 3-19).
    assert_eq!(iear_sample(0, 0x8000_0002, 0).unwrap().miss, Miss::Tlb { served: Served::Vhpt });
    assert_eq!(iear_sample(0, 0x8000_0000, 0), None);
    // D-EAR data cache mode: address, latency and the instruction (bn adds 16, Table 3-22).
    assert_eq!(
        dear_sample(0, 0x6000_0000_0000_0040, 0x4000 | 0x2000 | 0x45, 0x4000_0000_0000_1000 | 0b1110),
        Some(DearSample {
            data: Some(0x6000_0000_0000_0040),
            instruction: Some((0x4000_0000_0000_1010, 2)),
            miss: Miss::Cache { latency: 0x45, overflow: true }
        })
    );
    assert_eq!(dear_sample(0, 1, 0, 0), None, "stat 00: no valid information");
    // TLB mode: an RSE load captures no instruction (vl 0, Table 3-24's note).
    let tlb = dear_sample(0b01 << 7, 0x9000, 0b11 << 14, 0).unwrap();
    assert_eq!((tlb.miss, tlb.instruction, tlb.data), (Miss::Tlb { served: Served::Fault }, None, Some(0x9000)));
    // ALAT mode: PMD32 is undefined (Table 3-25).
    assert_eq!(dear_sample(0b10 << 7, 0x9000, 0b01 << 14, 0x8).unwrap().data, None);
}
