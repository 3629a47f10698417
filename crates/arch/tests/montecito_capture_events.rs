//! The capture events pfmon and libpfm3 name (issue 13): each selects its counting
//! event and programs the capture register (Tables 3-15 to 3-26), and sets that would
//! program one capture register two ways, or the trace buffer beside a D-EAR in TLB or
//! ALAT mode (§3.3.9.2, §3.3.9.3), are refused as one set and multiplexed by a schedule.

use pmukit_arch::montecito::capture::{
    DEAR_MODE, DEAR_UMASK, ETB_BRT, ETB_PPM, ETB_PTM, ETB_TM, IEAR_CACHE_UMASK, IEAR_CT, IEAR_TLB_UMASK,
};
use pmukit_arch::montecito::registers::{ES, ISM, PLM};
use pmukit_arch::{decode, encode_set, Catalog, EncodedSet};

fn encode(catalog: &Catalog, names: &[&str]) -> Result<EncodedSet, String> {
    let pmu = catalog.pmu("montecito").unwrap();
    let sels: Vec<_> = names.iter().map(|n| catalog.resolve(&format!("montecito::{n}"), "montecito").unwrap()).collect();
    encode_set(pmu, &sels).map_err(|e| e.to_string())
}

fn register(set: &EncodedSet, name: &str) -> Option<u64> {
    set.registers.iter().find(|(r, _)| *r == name).map(|&(_, v)| v)
}

#[test]
fn table_3_21_and_3_23_data_ear_names_program_pmc40() {
    let catalog = Catalog::builtin();
    let set = encode(&catalog, &["DATA_EAR_CACHE_LAT8:u"]).unwrap();
    // The counter counts DATA_EAR_EVENTS (0xc8).
    assert_eq!(ES.get(set.events[0].registers[0].1), 0xc8);
    let pmc40 = register(&set, "PMC40").unwrap();
    assert_eq!((DEAR_MODE.get(pmc40), DEAR_UMASK.get(pmc40), PLM.get(pmc40), ISM.get(pmc40)), (0b00, 0b0001, 0b1000, 0b10));
    let pmu = catalog.pmu("montecito").unwrap();
    let d = decode(pmu, "PMC40", pmc40).unwrap();
    assert!(d.fields.iter().any(|f| f.name == "umask" && f.meaning.contains("latency >= 8 cycles")), "{d:?}");
    for (name, mode, umask) in [
        ("DATA_EAR_CACHE_LAT4096", 0b00, 0b1010),
        ("DATA_EAR_TLB_ALL", 0b01, 0b1110),
        ("DATA_EAR_TLB_L2DTLB_OR_FAULT", 0b01, 0b1010),
        ("DATA_EAR_ALAT", 0b10, 0),
    ] {
        let set = encode(&catalog, &[name]).unwrap();
        let pmc40 = register(&set, "PMC40").unwrap();
        assert_eq!((DEAR_MODE.get(pmc40), DEAR_UMASK.get(pmc40), PLM.get(pmc40)), (mode, umask, 0b1001), "{name}");
        // §3.3.9.2, §3.3.9.3: "PMC39 must be 0 in this mode", written out for a real
        // machine; cache mode leaves PMC39 alone.
        assert_eq!(register(&set, "PMC39"), (mode != 0).then_some(0), "{name}");
    }
}

#[test]
fn tables_3_16_and_3_18_instruction_ear_names_program_pmc37() {
    let catalog = Catalog::builtin();
    let pmu = catalog.pmu("montecito").unwrap();
    for (name, umask) in [
        ("L1I_EAR_CACHE_LAT0", 0b0100_0000),
        ("L1I_EAR_CACHE_LAT4", 0xff),
        ("L1I_EAR_CACHE_LAT4096", 0b1000_0000),
        ("L1I_EAR_CACHE_RAB", 0),
    ] {
        let set = encode(&catalog, &[name]).unwrap();
        assert_eq!(ES.get(set.events[0].registers[0].1), 0x43, "{name} counts L1I_EAR_EVENTS");
        let pmc37 = register(&set, "PMC37").unwrap();
        assert_eq!((IEAR_CT.get(pmc37) >> 1, IEAR_CACHE_UMASK.get(pmc37)), (1, umask), "{name}");
        // Decoded in cache mode, by its own ct.
        let d = decode(pmu, "PMC37", pmc37).unwrap();
        assert!(d.fields.iter().any(|f| f.name == "umask" && f.bits == "12:5"), "{name}: {d:?}");
    }
    for (name, umask) in [("L1I_EAR_TLB_ALL", 0b111), ("L1I_EAR_TLB_L2TLB", 0b001), ("L1I_EAR_TLB_VHPT_OR_FAULT", 0b110)] {
        let pmc37 = register(&encode(&catalog, &[name]).unwrap(), "PMC37").unwrap();
        assert_eq!((IEAR_CT.get(pmc37), IEAR_TLB_UMASK.get(pmc37)), (0b00, umask), "{name}");
    }
}

#[test]
fn table_3_26_etb_event_arms_the_trace_buffer_for_every_branch() {
    let catalog = Catalog::builtin();
    for name in ["ETB_EVENT", "BRANCH_EVENT:k"] {
        let set = encode(&catalog, &[name]).unwrap();
        let pmc39 = register(&set, "PMC39").unwrap();
        assert_eq!((ETB_TM.get(pmc39), ETB_PTM.get(pmc39), ETB_PPM.get(pmc39), ETB_BRT.get(pmc39)), (0b11, 0b11, 0b11, 0b00), "{name}");
        // §3.3.10: PMC42.mode 000 for branch capture.
        assert_eq!(register(&set, "PMC42"), Some(0), "{name}");
    }
    assert_eq!(PLM.get(register(&encode(&catalog, &["BRANCH_EVENT:k"]).unwrap(), "PMC39").unwrap()), 0b0001);
}

#[test]
fn one_configuration_per_capture_register() {
    let catalog = Catalog::builtin();
    let e = encode(&catalog, &["DATA_EAR_CACHE_LAT4", "DATA_EAR_CACHE_LAT8"]).unwrap_err();
    assert!(e.contains("'DATA_EAR_CACHE_LAT8'") && e.contains("both program PMC40 differently, and it holds one configuration"), "{e}");
    // Its privilege levels are part of the configuration.
    assert!(encode(&catalog, &["DATA_EAR_CACHE_LAT4:u", "DATA_EAR_CACHE_LAT4:k"]).is_err());
    // The same configuration twice is one configuration.
    assert!(encode(&catalog, &["DATA_EAR_CACHE_LAT4", "DATA_EAR_CACHE_LAT4"]).is_ok());
    // The I-EAR and D-EAR are separate.
    let set = encode(&catalog, &["DATA_EAR_TLB_ALL", "L1I_EAR_TLB_ALL"]).unwrap();
    assert!(register(&set, "PMC37").is_some() && register(&set, "PMC40").is_some());
    // §3.3.9.2 and §3.3.9.3: PMC39 must be 0 with the D-EAR in TLB or ALAT mode.
    for dear in ["DATA_EAR_TLB_ALL", "DATA_EAR_ALAT"] {
        let e = encode(&catalog, &[dear, "ETB_EVENT"]).unwrap_err();
        assert!(
            e.contains("PMC39 (the trace buffer) must be 0 while the D-EAR is in TLB or ALAT mode") && e.contains("BRANCH_EVENT"),
            "{e}"
        );
    }
    assert!(encode(&catalog, &["DATA_EAR_CACHE_LAT4", "ETB_EVENT"]).is_ok());
}

#[test]
fn counting_an_ear_event_bare_says_what_it_counts() {
    let catalog = Catalog::builtin();
    let set = encode(&catalog, &["DATA_EAR_EVENTS"]).unwrap();
    assert!(register(&set, "PMC40").is_none());
    assert!(set.notes.iter().any(|n| n.contains("PMC40") && n.contains("DATA_EAR_CACHE_LAT4")), "{:?}", set.notes);
}

#[test]
fn a_malformed_capture_attribute_in_an_events_file_is_refused_naming_the_event() {
    let table = include_str!("../../../data/montecito/events.toml")
        .replace("\"PMC40 mode=00 umask=0001\"", "\"PMC40 mode=00 umask=0021\"")
        .replace("\"PMC40 mode=00 umask=0010\"", "\"PMC41 mode=00\"");
    let path = std::env::temp_dir().join(format!("pmukit-capture-{}.toml", std::process::id()));
    std::fs::write(&path, table).unwrap();
    let mut catalog = Catalog::builtin();
    catalog.load_events_file(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    let e = encode(&catalog, &["DATA_EAR_CACHE_LAT8"]).unwrap_err();
    assert!(
        e.starts_with("DATA_EAR_CACHE_LAT8: its capture attribute 'PMC40 mode=00 umask=0021' is malformed")
            && e.contains("'2' is not a bit"),
        "{e}"
    );
    let e = encode(&catalog, &["DATA_EAR_CACHE_LAT16"]).unwrap_err();
    assert!(e.contains("'PMC41' is not a capture register"), "{e}");
}

#[test]
fn conflicting_captures_are_multiplexed_not_refused_by_a_schedule() {
    let catalog = Catalog::builtin();
    let pmu = catalog.pmu("montecito").unwrap();
    let sels: Vec<_> = ["DATA_EAR_CACHE_LAT4", "DATA_EAR_TLB_ALL", "ETB_EVENT"]
        .iter()
        .map(|n| catalog.resolve(&format!("montecito::{n}"), "montecito").unwrap())
        .collect();
    let schedule = pmukit_arch::schedule(pmu, &sels, &[], &Default::default()).unwrap();
    assert!(schedule.why.as_deref().is_some_and(|w| w.contains("cannot be counted together")), "{:?}", schedule.why);
    assert!(schedule.groups.len() >= 2);
    for g in &schedule.groups {
        let pmc40: Vec<_> = g.set.registers.iter().filter(|(r, _)| *r == "PMC40").collect();
        assert!(pmc40.len() <= 1);
    }
}

/// pfmon's `--etb-*` filters set PMC39's masks (Table 3-26); without a trace buffer
/// event, or asking for an empty buffer (§3.3.10.1.1), they are refused.
#[test]
fn table_3_26_etb_filters_set_pmc39s_masks() {
    use pmukit_arch::montecito::capture_events::EtbFilter;
    use pmukit_arch::{encode_set_with, SetOptions};
    let catalog = Catalog::builtin();
    let pmu = catalog.pmu("montecito").unwrap();
    let sel = |n: &str| catalog.resolve(&format!("montecito::{n}"), "montecito").unwrap();
    let with = |names: &[&str], etb: EtbFilter| {
        let sels: Vec<_> = names.iter().map(|n| sel(n)).collect();
        encode_set_with(pmu, &sels, &SetOptions { etb, ..SetOptions::default() }).map_err(|e| e.to_string())
    };
    let taken_returns = EtbFilter { tm: Some(0b10), brt: Some(0b10), ..EtbFilter::default() };
    let pmc39 = register(&with(&["ETB_EVENT"], taken_returns).unwrap(), "PMC39").unwrap();
    assert_eq!((ETB_TM.get(pmc39), ETB_PTM.get(pmc39), ETB_PPM.get(pmc39), ETB_BRT.get(pmc39)), (0b10, 0b11, 0b11, 0b10));
    let err = with(&["IA64_INST_RETIRED"], taken_returns).unwrap_err();
    assert!(err.contains("count ETB_EVENT"), "{err}");
    let empty = EtbFilter { ptm: Some(0b01), ppm: Some(0b01), ..EtbFilter::default() };
    assert!(with(&["ETB_EVENT"], empty).unwrap_err().contains("captures nothing"));
}
