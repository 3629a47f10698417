//! ARM11 data pinned to ARM DAI 0195B: every Table 2 event and every Table 1 field.

use pmukit_arch::{arm11, decode, encode_set, Catalog, EncodeError, FAMILIES};
use pmukit_core::register::{Access, RegisterError};

fn catalog() -> Catalog {
    Catalog::builtin()
}

/// Table 2, row by row: code, our name, and the cores it exists on
/// ("ARM1156 only", "ARM1176 only", "unused on ARM1156").
const TABLE_2: &[(u64, &str, &[&str])] = &[
    (0x00, "ICACHE_MISS", &["arm1136", "arm1156", "arm1176"]),
    (0x01, "IBUF_STALL", &["arm1136", "arm1156", "arm1176"]),
    (0x02, "DDEP_STALL", &["arm1136", "arm1156", "arm1176"]),
    (0x03, "ITLB_MISS", &["arm1136", "arm1176"]),
    (0x04, "DTLB_MISS", &["arm1136", "arm1176"]),
    (0x05, "BR_EXEC", &["arm1136", "arm1156", "arm1176"]),
    (0x06, "BR_MISPREDICT", &["arm1136", "arm1156", "arm1176"]),
    (0x07, "INSTR_EXEC", &["arm1136", "arm1156", "arm1176"]),
    (0x09, "DCACHE_HIT", &["arm1136", "arm1156", "arm1176"]),
    (0x0A, "DCACHE_ACCESS", &["arm1136", "arm1156", "arm1176"]),
    (0x0B, "DCACHE_MISS", &["arm1136", "arm1156", "arm1176"]),
    (0x0C, "DCACHE_WBACK", &["arm1136", "arm1156", "arm1176"]),
    (0x0D, "SW_PC_CHANGE", &["arm1136", "arm1156", "arm1176"]),
    (0x0F, "MAIN_TLB_MISS", &["arm1136", "arm1176"]),
    (0x10, "EXPL_D_ACCESS", &["arm1136", "arm1156", "arm1176"]),
    (0x11, "LSU_FULL_STALL", &["arm1136", "arm1156", "arm1176"]),
    (0x12, "WBUF_DRAINED", &["arm1136", "arm1156", "arm1176"]),
    (0x13, "FIQ_DISABLED_CYCLES", &["arm1156"]),
    (0x14, "IRQ_DISABLED_CYCLES", &["arm1156"]),
    (0x20, "ETMEXTOUT_0", &["arm1136", "arm1156", "arm1176"]),
    (0x21, "ETMEXTOUT_1", &["arm1136", "arm1156", "arm1176"]),
    (0x22, "ETMEXTOUT", &["arm1136", "arm1156", "arm1176"]),
    (0x23, "PROC_CALL_EXEC", &["arm1176"]),
    (0x24, "PROC_RET_EXEC", &["arm1176"]),
    (0x25, "PROC_RET_EXEC_PRED", &["arm1176"]),
    (0x26, "PROC_RET_EXEC_PRED_INCORRECT", &["arm1176"]),
    (0x30, "ICACHE_TAG_PARITY_ERROR", &["arm1156"]),
    (0x31, "ICACHE_DATA_PARITY_ERROR", &["arm1156"]),
    (0x32, "DCACHE_TAG_PARITY_ERROR", &["arm1156"]),
    (0x33, "DCACHE_DATA_PARITY_ERROR", &["arm1156"]),
    (0x34, "ITCM_ERROR", &["arm1156"]),
    (0x35, "DTCM_ERROR", &["arm1156"]),
    (0x36, "PROC_RET_POP", &["arm1156"]),
    (0x37, "PROC_RET_POP_MISPREDICT", &["arm1156"]),
    (0x38, "DCACHE_DIRTY_PARITY_ERROR", &["arm1156"]),
    (0xFF, "CPU_CYCLES", &["arm1136", "arm1156", "arm1176"]),
];

#[test]
fn table_2_every_event_type_has_its_code_and_core_availability() {
    let cat = catalog();
    for core in ["arm1136", "arm1156", "arm1176"] {
        let pmu = cat.pmu(core).unwrap();
        for &(code, name, cores) in TABLE_2 {
            let e = pmu.table.find(name).unwrap_or_else(|| panic!("{name} missing"));
            assert_eq!(e.code, code, "Table 2: {name}");
            assert_eq!(e.exists_on(core), cores.contains(&core), "Table 2 availability of {name} on {core}");
        }
        assert_eq!(pmu.table.events.len(), TABLE_2.len(), "Table 2 has exactly these rows");
    }
}

#[test]
fn table_2_descriptions_are_the_spec_text() {
    let cat = catalog();
    let t = &cat.pmu("arm1176").unwrap().table;
    assert!(t.find("DCACHE_WBACK").unwrap().description.contains("once for each half line of four words"));
    assert!(t.find("ETMEXTOUT").unwrap().description.contains("incremented by two"));
    assert!(t.find("CPU_CYCLES").unwrap().description.contains("An increment each cycle"));
}

#[test]
fn table_2_other_values_are_reserved_and_refused() {
    let cat = catalog();
    for raw in ["arm1176::r8", "arm1176::0xe", "arm1176::r15", "arm1176::r27", "arm1176::rfe", "arm1136::r13", "arm1176::r30"] {
        let err = cat.resolve(raw, "arm1176").unwrap_err();
        assert!(err.message.contains("reserved") && err.message.contains("Unpredictable"), "{raw}: {}", err.message);
    }
}

#[test]
fn table_2_raw_codes_of_defined_events_resolve_to_them() {
    let sel = catalog().resolve("arm1176::r7", "arm1176").unwrap();
    assert_eq!(sel.event.unwrap().name, "INSTR_EXEC");
}

#[test]
fn linux_names_and_spec_aliases_are_accepted() {
    let cat = catalog();
    assert_eq!(cat.resolve("dcache_cacheable_access", "arm1176").unwrap().code, 0x9);
    assert_eq!(cat.resolve("cycles", "arm1176").unwrap().code, 0xFF);
}

#[test]
fn builtin_tables_pass_the_same_validation_as_events_files() {
    for f in FAMILIES {
        f.validate(f.events, "built-in").unwrap();
    }
}

#[test]
fn builtin_metrics_parse_and_name_only_known_events() {
    let cat = catalog();
    for f in FAMILIES {
        for m in f.metrics.metrics.iter() {
            let expr = pmukit_core::metric::MetricExpr::parse(&m.expr).unwrap();
            for id in expr.identifiers().into_iter().filter(|id| *id != pmukit_core::report::DURATION_TIME) {
                let known = f.pmus.iter().any(|p| cat.resolve(id, p.name).is_ok());
                assert!(known, "{} metric {} names unknown event {id}", f.name, m.name);
            }
            assert!(!m.source.is_empty(), "metric {} cites no source", m.name);
        }
    }
}

/// Every metric carries its domain (docs/metrics.md, "Domains and estimates"): a
/// bound is a MetricExpr over numbers, the events the metric itself reads and the
/// family's metrics, and the whole of a part is a metric of the same table.
#[test]
fn builtin_metrics_carry_a_domain_over_their_own_events_and_metrics() {
    for f in FAMILIES {
        let table = &f.metrics.metrics;
        for m in table.iter() {
            assert!(!(m.min.is_empty() && m.max.is_empty()), "{} metric {} has no domain", f.name, m.name);
            let own = pmukit_core::metric::MetricExpr::parse(&m.expr).unwrap();
            for bound in [&m.min, &m.max].into_iter().filter(|b| !b.is_empty()) {
                let expr = pmukit_core::metric::MetricExpr::parse(bound).unwrap_or_else(|e| panic!("{}: bound {bound}: {e}", m.name));
                for id in expr.identifiers() {
                    let known = own.identifiers().contains(&id) || table.iter().any(|d| d.name == id && d.name != m.name);
                    assert!(known, "{} metric {}: bound {bound} names {id}, neither its event nor a metric", f.name, m.name);
                }
            }
        }
    }
}

/// Table 1: every PMCR field with its bits and access.
#[test]
fn table_1_pmcr_fields_bits_and_access() {
    let expect: &[(&str, &str, Access)] = &[
        ("SBZ", "31", Access::Reserved { unpredictable_read: true }),
        ("FCC", "30", Access::ReadWrite),
        ("FC1", "29", Access::ReadWrite),
        ("FC0", "28", Access::ReadWrite),
        ("EvtCount0", "27:20", Access::ReadWrite),
        ("EvtCount1", "19:12", Access::ReadWrite),
        ("X", "11", Access::ReadWrite),
        ("OCC", "10", Access::WriteOneToClear),
        ("OC1", "9", Access::WriteOneToClear),
        ("OC0", "8", Access::WriteOneToClear),
        ("SBZ", "7", Access::Reserved { unpredictable_read: true }),
        ("ECC", "6", Access::ReadWrite),
        ("EC1", "5", Access::ReadWrite),
        ("EC0", "4", Access::ReadWrite),
        ("D", "3", Access::ReadWrite),
        ("C", "2", Access::Action),
        ("P", "1", Access::Action),
        ("E", "0", Access::ReadWrite),
    ];
    let got: Vec<(&str, String, Access)> = arm11::PMCR.fields.iter().map(|f| (f.name, f.bits(), f.access)).collect();
    assert_eq!(got.len(), expect.len());
    for ((n, b, a), (en, eb, ea)) in got.iter().zip(expect) {
        assert_eq!((*n, b.as_str(), *a), (*en, *eb, *ea));
    }
    assert_eq!(arm11::PMCR.width, 32);
    assert_eq!(arm11::PMCR.reserved_mask(), 0x8000_0080);
}

#[test]
fn table_1_reset_values_are_zero() {
    // Table 1 gives the flags' reset value (0 = no overflow); the rest reset to zero too.
    for r in [&arm11::PMCR, &arm11::CCNT, &arm11::PMN0, &arm11::PMN1] {
        assert_eq!(r.reset, 0, "{}", r.name);
    }
}

#[test]
fn table_1_fiq_enables_exist_only_on_arm1156() {
    let on_1156 = arm11::PMCR.for_model("arm1156");
    assert_eq!(on_1156.encode(&[("FCC", 1), ("FC1", 1), ("FC0", 1)]).unwrap(), 0x7000_0000);
    for core in ["arm1136", "arm1176"] {
        let pmcr = arm11::PMCR.for_model(core);
        for f in ["FCC", "FC1", "FC0"] {
            assert!(matches!(pmcr.encode(&[(f, 1)]), Err(RegisterError::AbsentField { .. })), "{f} on {core}");
        }
        assert!(pmcr.check_write(0x1000_0000).is_err(), "bit 28 is SBZ on {core}");
    }
}

#[test]
fn section_2_cp15_numbers_of_the_registers() {
    assert_eq!(arm11::PMCR_CP, arm11::Cp15 { opc1: 0, crn: 15, crm: 12, opc2: 0 });
    assert_eq!([arm11::CCNT_CP.opc2, arm11::PMN0_CP.opc2, arm11::PMN1_CP.opc2], [1, 2, 3]);
}

#[test]
fn encode_places_cycles_on_ccnt_and_events_on_pmn0_pmn1() {
    let cat = catalog();
    let sels: Vec<_> = ["CPU_CYCLES", "INSTR_EXEC", "BR_MISPREDICT"].iter().map(|e| cat.resolve(e, "arm1176").unwrap()).collect();
    let set = encode_set(cat.pmu("arm1176").unwrap(), &sels).unwrap();
    let counters: Vec<&str> = set.events.iter().map(|e| e.counter).collect();
    assert_eq!(counters, ["CCNT", "PMN0", "PMN1"]);
    assert_eq!(set.events[1].registers, vec![("PMCR", 0x0070_0000)]);
    assert_eq!(set.events[2].registers, vec![("PMCR", 0x0000_6000)]);
    // Selectors, ECC|EC1|EC0, OCC|OC1|OC0 (write 1 to clear), C, P and E.
    assert_eq!(set.registers, vec![("PMCR", 0x0070_6777)]);
}

#[test]
fn encode_refuses_three_events_for_two_event_counters_naming_them() {
    let cat = catalog();
    let sels: Vec<_> = ["INSTR_EXEC", "BR_EXEC", "DCACHE_MISS"].iter().map(|e| cat.resolve(e, "arm1176").unwrap()).collect();
    let err = encode_set(cat.pmu("arm1176").unwrap(), &sels).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, EncodeError::Unschedulable { .. }));
    for needle in ["INSTR_EXEC", "BR_EXEC", "DCACHE_MISS", "PMN0, PMN1"] {
        assert!(msg.contains(needle), "{msg}");
    }
}

#[test]
fn cycle_divider_modifier_pins_cycles_to_ccnt_and_sets_d() {
    let cat = catalog();
    let sel = cat.resolve("CPU_CYCLES:d", "arm1176").unwrap();
    let set = encode_set(cat.pmu("arm1176").unwrap(), &[sel]).unwrap();
    assert_eq!(set.events[0].counter, "CCNT");
    assert_eq!(set.events[0].registers, vec![("PMCR", 0x8)]);
    assert!(cat.resolve("INSTR_EXEC:d", "arm1176").is_err(), "only CPU_CYCLES takes :d");
}

#[test]
fn fiq_modifier_sets_the_counters_fc_bit_on_arm1156_only() {
    let cat = catalog();
    let sels = vec![cat.resolve("arm1156::CPU_CYCLES:fiq", "arm1176").unwrap(), cat.resolve("arm1156::INSTR_EXEC:fiq", "arm1176").unwrap()];
    let set = encode_set(cat.pmu("arm1156").unwrap(), &sels).unwrap();
    assert_eq!(set.events[0].registers, vec![("PMCR", 0x4000_0000)]);
    assert_eq!(set.events[1].registers, vec![("PMCR", 0x1070_0000)]);
    // The other cores refuse the modifier itself (issue 11: describe offered it).
    let err = cat.resolve("arm1176::INSTR_EXEC:fiq", "arm1176").unwrap_err();
    assert!(err.message.contains("modifier 'fiq' exists only on arm1156, not on arm1176"), "{err}");
}

#[test]
fn decode_names_each_pmcr_field_and_the_selected_events() {
    let cat = catalog();
    let d = decode(cat.pmu("arm1176").unwrap(), "PMCR", 0x0070_6071).unwrap();
    let field = |n: &str| d.fields.iter().find(|f| f.name == n).unwrap().clone();
    assert_eq!(field("EvtCount0").meaning, "INSTR_EXEC");
    assert_eq!(field("EvtCount1").meaning, "BR_MISPREDICT");
    assert_eq!(field("ECC").meaning, "enabled");
    assert_eq!(field("E").value, 1);
    assert!(d.warnings.is_empty());
}

#[test]
fn decode_warns_about_sbz_bits_and_fiq_bits_on_other_cores() {
    let cat = catalog();
    let d = decode(cat.pmu("arm1136").unwrap(), "PMCR", 0x4000_0080).unwrap();
    assert_eq!(d.warnings.len(), 2, "{:?}", d.warnings);
    assert!(d.warnings.iter().any(|w| w.contains("FCC")));
    let d = decode(cat.pmu("arm1156").unwrap(), "PMCR", 0x4000_0000).unwrap();
    assert!(d.warnings.is_empty());
}

#[test]
fn decode_reserved_selector_says_so() {
    let cat = catalog();
    let d = decode(cat.pmu("arm1176").unwrap(), "PMCR", 0x0080_0000).unwrap();
    assert!(d.fields.iter().any(|f| f.name == "EvtCount0" && f.meaning.contains("reserved")));
}

#[test]
fn decode_accepts_the_notes_counter_names_and_rejects_others() {
    let cat = catalog();
    let pmu = cat.pmu("arm1176").unwrap();
    assert_eq!(decode(pmu, "pmnc0", 5).unwrap().register, "PMN0");
    let err = decode(pmu, "PMN2", 5).unwrap_err().to_string();
    assert!(err.contains("PMCR, CCNT, PMN0, PMN1"), "{err}");
    assert!(decode(pmu, "CCNT", 1 << 32).is_err(), "CCNT is 32 bits");
}
