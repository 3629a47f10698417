//! Itanium 2 "Montecito" event table (data/montecito/events.toml) pinned to chapter 4
//! of the "Dual-Core Update to the Intel Itanium 2 Processor Reference Manual"
//! (shared/spec/itanium2-montecito-performance-monitoring.md): the 171 monitors of
//! section 4.14 Table 4-42, the section 4.15 entries and every "Unit Masks for ..."
//! table, the L1D sets of section 4.8.2.x, the L2D sets of section 4.8.4.x, Table 4-19's
//! ".all capable" column and Table 4-31's MESI filtering capability.
//!
//! The expected values below are transcribed from the spec text, not from the TOML.
//! Where the sources disagree the decision is a row of docs/ERRATA.md (ME ids), named
//! in the comment or doc comment of the test that pins it.
//!
//! The table is loaded with pmukit-core only: the arch crate's Montecito family may not
//! exist yet.

use std::collections::{BTreeMap, BTreeSet};

use pmukit_core::table::{Combinations, EventDef, EventTable, InvalidKind, TableRules};

const MONTECITO_TOML: &str = include_str!("../../../data/montecito/events.toml");

/// The spec's monitors: the table without the capture subevents pfmon and libpfm3
/// name (DATA_EAR_CACHE_LAT4 ...), which chapter 4 does not list; those are pinned by
/// `capture_subevents_program_their_capture_register`.
fn table() -> EventTable {
    let mut t = full_table();
    t.events = t.events.iter().filter(|e| !is_capture_subevent(e)).cloned().collect::<Vec<_>>().into();
    t
}

fn full_table() -> EventTable {
    EventTable::from_toml(MONTECITO_TOML, "montecito").unwrap_or_else(|e| panic!("{e}"))
}

fn is_capture_subevent(e: &EventDef) -> bool {
    !e.subevent_of.is_empty() && attr(e, "capture").is_some()
}

fn event<'a>(t: &'a EventTable, name: &str) -> &'a EventDef {
    t.events.iter().find(|e| e.name == name).unwrap_or_else(|| panic!("event {name} missing"))
}

fn attr<'a>(e: &'a EventDef, key: &str) -> Option<&'a str> {
    e.attrs.iter().find(|a| a.key == key).map(|a| a.value.as_ref())
}

/// Events carrying attribute `key`, with its value.
fn with_attr(t: &EventTable, key: &str) -> BTreeMap<String, String> {
    t.events.iter().filter_map(|e| attr(e, key).map(|v| (e.name.to_string(), v.to_string()))).collect()
}

/// One row of a 4.15 "Unit Masks for ..." table: (Extension, PMC.umask[19:16] pattern,
/// the Description for "---" rows -- the invalid selections -- and "" for named rows).
type Row = (&'static str, &'static str, &'static str);

/// The (value, don't-care mask) pairs a pattern selects: `bxx01` is (0x1, 0xc); a range
/// `b1001-b1111` is one pair per value; `00xx` (no `b`) as `b00xx`; the one-bit patterns
/// `b0`/`b1` of the "PMC.umask [16]" tables are bit 16 with bits 19:17 don't-care (ME33).
fn expand(pattern: &str) -> Vec<(u64, u64)> {
    let p: String = pattern.chars().filter(|c| !c.is_whitespace()).collect();
    let (lo, hi) = p.split_once('-').unwrap_or((&p, &p));
    let bits = |s: &str| {
        let s = s.trim_start_matches('b');
        let s = if s.len() == 1 { format!("xxx{s}") } else { s.to_string() };
        assert_eq!(s.len(), 4, "pattern {pattern}");
        let ignored = s.chars().fold(0, |m, c| m << 1 | u64::from(c == 'x'));
        let value = s.chars().fold(0, |m, c| m << 1 | u64::from(c == '1'));
        (value, ignored)
    };
    let ((v0, ign), (v1, ign1)) = (bits(lo), bits(hi));
    assert_eq!(ign, ign1, "pattern {pattern}: both ends need the same x bits");
    (v0..=v1).filter(|v| v & ign == 0).map(|v| (v, ign)).collect()
}

/// The invalid-selection kind of a "---" row, from its words.
fn kind_of(note: &str) -> InvalidKind {
    match note {
        "(* nothing will be counted *)" | "None is counted" => InvalidKind::Nothing,
        "(* illegal selection *)" | "(*illegal selection*)" => InvalidKind::Illegal,
        "(* count is undefined *)" => InvalidKind::Undefined,
        _ => panic!("unknown invalid-selection wording {note:?}"),
    }
}

/// Check one event's unit masks and invalid selections against its transcribed 4.15
/// table: names verbatim, values and don't-care bits, in table order; the default is
/// the unit mask named ALL, else THIS, else none.
fn check_umask_table(t: &EventTable, name: &str, rows: &[Row]) {
    let e = event(t, name);
    let mut named = Vec::new();
    let mut invalid = Vec::new();
    for &(ext, pattern, note) in rows {
        let vals = expand(pattern);
        if ext == "---" {
            invalid.extend(vals.into_iter().map(|(v, ign)| (v, ign, kind_of(note), note.to_string())));
        } else {
            assert_eq!(vals.len(), 1, "{name}.{ext}: a named row selects one pattern");
            named.push((ext.to_string(), vals[0].0, vals[0].1));
        }
    }
    let got: Vec<_> = e.umasks.iter().map(|u| (u.name.to_string(), u.value, u.ignored)).collect();
    assert_eq!(got, named, "{name}: unit masks (name, value, don't-care bits)");
    let got: Vec<_> = e.invalid_umasks.iter().map(|b| (b.value, b.ignored, b.kind, b.note.to_string())).collect();
    assert_eq!(got, invalid, "{name}: invalid selections (value, don't-care bits, kind, words)");
    let default = ["ALL", "THIS"].into_iter().find(|d| e.umasks.iter().any(|u| u.name == *d));
    let got: Vec<_> = e.umasks.iter().filter(|u| u.default).map(|u| u.name.as_ref()).collect();
    assert_eq!(got, default.into_iter().collect::<Vec<_>>(), "{name}: default unit mask");
}

fn check_group(group: &[(&str, &[Row])]) {
    let t = table();
    for &(name, rows) in group {
        check_umask_table(&t, name, rows);
    }
}

/// Section 4.14 Table 4-42 "All Performance Monitors Ordered by Code" (sheets 1-7), in
/// its order: (Symbol Name as printed in Table 4-42, Event Code, our event name, IAR DAR
/// OPC, Max Inc/Cyc, Type). Where our value differs from Table 4-42's, or from section
/// 4.15's, the comment names the ERRATA row.
const TABLE_4_42: &[(&str, u64, &str, &str, &str, &str)] = &[
    ("BACK_END_BUBBLE", 0x00, "BACK_END_BUBBLE", "NNN", "1", "A"),
    ("BE_RSE_BUBBLE", 0x01, "BE_RSE_BUBBLE", "NNN", "1", "A"),
    ("BE_EXE_BUBBLE", 0x02, "BE_EXE_BUBBLE", "NNN", "1", "A"),
    ("FP_TRUE_SIRSTALL", 0x03, "FP_TRUE_SIRSTALL", "YNN", "1", "A"),
    ("BE_FLUSH_BUBBLE", 0x04, "BE_FLUSH_BUBBLE", "NNN", "1", "A"),
    ("FP_FALSE_SIRSTALL", 0x05, "FP_FALSE_SIRSTALL", "YNN", "1", "A"),
    ("FP_FAILED_FCHKF", 0x06, "FP_FAILED_FCHKF", "YNN", "1", "A"),
    ("IA64_INST_RETIRED", 0x08, "IA64_INST_RETIRED", "YNY", "6", "A"),
    ("IA64_TAGGED_INST_RETIRED", 0x08, "IA64_TAGGED_INST_RETIRED", "YNY", "6", "A"),
    ("FP_OPS_RETIRED", 0x09, "FP_OPS_RETIRED", "YNN", "6", "A"),
    ("FP_FLUSH_TO_ZERO", 0x0b, "FP_FLUSH_TO_ZERO", "YNN", "2", "A"),
    ("THREAD_SWITCH_EVENTS", 0x0c, "THREAD_SWITCH_EVENTS", "NNN", "1", "A"),
    ("THREAD_SWITCH_GATED", 0x0d, "THREAD_SWITCH_GATED", "NNN", "1", "A"),
    ("THREAD_SWITCH_CYCLE", 0x0e, "THREAD_SWITCH_CYCLE", "NNN", "1", "A"),
    ("THREAD_SWITCH_STALLS", 0x0f, "THREAD_SWITCH_STALL", "NNN", "1", "A"), // ME7: 4.15 and Table 4-41 say STALL
    ("BRANCH_EVENT", 0x11, "BRANCH_EVENT", "YNY", "1", "A"),                // ME3: 4.15 calls it ETB_EVENT
    ("CPU_OP_CYCLES", 0x12, "CPU_OP_CYCLES", "YNY", "1", "C"),
    ("CPU_CPL_CHANGES", 0x13, "CPU_CPL_CHANGES", "NNN", "1", "A"),
    ("CPU_OP_CYCLES_HALTED", 0x18, "CPU_OP_CYCLES_HALTED", "NNN", "1", "C"), // ME4: Table 4-42 says 7; 4.15 and Table 4-33 say 1
    ("RSE_REFERENCES_RETIRED", 0x20, "RSE_REFERENCES_RETIRED", "YYY", "2", "A"),
    ("RSE_DIRTY_REGS_6", 0x24, "RSE_DIRTY_REGS_6", "NNN", "1", "A"),
    ("RSE_CURRENT_REGS_6", 0x26, "RSE_CURRENT_REGS_6", "NNN", "1", "A"),
    ("RSE_DIRTY_REGS_5_TO_3", 0x28, "RSE_DIRTY_REGS_5_TO_3", "NNN", "7", "A"),
    ("RSE_DIRTY_REGS_2_TO_0", 0x29, "RSE_DIRTY_REGS_2_TO_0", "NNN", "7", "A"),
    ("RSE_CURRENT_REGS_5_TO_3", 0x2a, "RSE_CURRENT_REGS_5_TO_3", "NNN", "7", "A"),
    ("RSE_CURRENT_REGS_2_TO_0", 0x2b, "RSE_CURRENT_REGS_2_TO_0", "NNN", "7", "A"),
    ("HPW_DATA_REFERENCES", 0x2d, "HPW_DATA_REFERENCES", "YYY", "4", "A"), // ME10: 4.15 says N/N/N
    ("RSE_EVENT_RETIRED", 0x32, "RSE_EVENT_RETIRED", "NNN", "1", "A"),
    ("L1I_READS", 0x40, "L1I_READS", "YNN", "1", "A"),
    ("L1I_FILLS", 0x41, "L1I_FILLS", "YNN", "1", "F"),
    ("L2I_DEMAND_READS", 0x42, "L2I_DEMAND_READS", "YNN", "1", "A"),
    ("L1I_EAR_EVENTS", 0x43, "L1I_EAR_EVENTS", "YNN", "1", "F"),
    ("L1I_PREFETCHES", 0x44, "L1I_PREFETCHES", "YNN", "1", "A"),
    ("L2I_PREFETCHES", 0x45, "L2I_PREFETCHES", "YNN", "1", "A"),
    ("ISB_BUNPAIRS_IN", 0x46, "ISB_BUNPAIRS_IN", "YNN", "1", "F"),
    ("ITLB_MISSES_FETCH", 0x47, "ITLB_MISSES_FETCH", "YNN", "1", "A"),
    ("L1ITLB_INSERTS_HPWW", 0x48, "L1ITLB_INSERTS_HPW", "YNN", "1", "A"), // ME7: typo
    ("DISP_STALLED", 0x49, "DISP_STALLED", "NNN", "1", "A"),
    ("L1I_SNOOP", 0x4a, "L1I_SNOOP", "YYY", "1", "C"),
    ("L1I_PURGE", 0x4b, "L1I_PURGE", "YNN", "1", "C"),
    ("INST_DISPERSED", 0x4d, "INST_DISPERSED", "YNN", "6", "A"),
    ("SYLL_NOT_DISPERSED", 0x4e, "SYLL_NOT_DISPERSED", "YNN", "5", "A"),
    ("SYLL_OVERCOUNT", 0x4f, "SYLL_OVERCOUNT", "YNN", "2", "A"),
    ("NOPS_RETIRED", 0x50, "NOPS_RETIRED", "YNY", "6", "A"), // ME9: 4.15 says "YN/Y"
    ("PREDICATE_SQUASHED_RETIRED", 0x51, "PREDICATE_SQUASHED_RETIRED", "YNY", "6", "A"),
    ("DATA_DEBUG_REGISTER_FAULT", 0x52, "DATA_DEBUG_REGISTER_FAULT", "NNN", "1", "A"),
    ("SERIALIZATION_EVENTS", 0x53, "SERIALIZATION_EVENTS", "NNN", "1", "A"),
    ("BR_PATH_PRED", 0x54, "BR_PATH_PRED", "YNY", "3", "A"),
    ("INST_FAILED_CHKS_RETIRED", 0x55, "INST_FAILED_CHKS_RETIRED", "NNN", "1", "A"),
    ("INST_CHKA_LDC_ALAT", 0x56, "INST_CHKA_LDC_ALAT", "YYY", "2", "A"),
    ("INST_FAILED_CHKA_LDC_ALAT", 0x57, "INST_FAILED_CHKA_LDC_ALAT", "YYY", "1", "A"),
    ("ALAT_CAPACITY_MISS", 0x58, "ALAT_CAPACITY_MISS", "YYY", "2", "A"),
    ("BR_MISPRED_DETAIL", 0x5b, "BR_MISPRED_DETAIL", "YNY", "3", "A"),
    ("L1I_STRM_PREFETCHES", 0x5f, "L1I_STRM_PREFETCHES", "YNN", "1", "A"),
    ("L1I_RAB_FULL", 0x60, "L1I_RAB_FULL", "NNN", "1", "C"),
    ("BE_BR_MISPRED_DETAIL", 0x61, "BE_BR_MISPRED_DETAIL", "YNY", "1", "A"),
    ("ENCBR_MISPRED_DETAIL", 0x63, "ENCBR_MISPRED_DETAIL", "YNY", "3", "A"),
    ("L1I_RAB_ALMOST_FULL", 0x64, "L1I_RAB_ALMOST_FULL", "NNN", "1", "C"),
    ("L1I_FETCH_RAB_HIT", 0x65, "L1I_FETCH_RAB_HIT", "YNN", "1", "A"),
    ("L1I_FETCH_ISB_HIT", 0x66, "L1I_FETCH_ISB_HIT", "YNN", "1", "A"),
    ("L1I_PREFETCH_STALL", 0x67, "L1I_PREFETCH_STALL", "NNN", "1", "A"),
    ("BR_MISPRED_DETAIL2", 0x68, "BR_MISPRED_DETAIL2", "YNY", "2", "A"),
    ("L1I_PVAB_OVERFLOW", 0x69, "L1I_PVAB_OVERFLOW", "NNN", "1", "A"),
    ("BR_PATH_PRED2", 0x6a, "BR_PATH_PRED2", "YNY", "2", "A"),
    ("FE_LOST_BW", 0x70, "FE_LOST_BW", "NNN", "2", "A"),
    ("FE_BUBBLE", 0x71, "FE_BUBBLE", "NNN", "1", "A"),
    ("BE_LOST_BW_DUE_TO_FE", 0x72, "BE_LOST_BW_DUE_TO_FE", "NNN", "2", "A"),
    ("IDEAL_BE_LOST_BW_DUE_TO_FE", 0x73, "IDEAL_BE_LOST_BW_DUE_TO_FE", "NNN", "2", "A"),
    ("L2I_READS", 0x78, "L2I_READS", "YNY", "1", "F"),       // ME11: 4.15 says Y/N/N
    ("L2I_UC_READS", 0x79, "L2I_UC_READS", "YNY", "1", "F"), // ME11: 4.15 says Y/N/N
    ("L2I_VICTIMIZATIONS", 0x7a, "L2I_VICTIMIZATIONS", "YNY", "1", "F"), // ME5: 4.15 calls it L2I_VICTIMIZATION; ME11: 4.15 says Y/N/N
    ("L2I_RECIRCULATES", 0x7b, "L2I_RECIRCULATES", "YNY", "1", "F"), // ME11: 4.15 says Y/N/N
    ("L2I_L3_REJECTS", 0x7c, "L2I_L3_REJECTS", "YNY", "1", "F"), // ME11: 4.15 says Y/N/N
    ("L2I_HIT_CONFLICTS", 0x7d, "L2I_HIT_CONFLICTS", "YNY", "1", "F"), // ME11: 4.15 says Y/N/N
    ("L2I_SPEC_ABORTS", 0x7e, "L2I_SPEC_ABORTS", "YNY", "1", "F"), // ME11: 4.15 says Y/N/N
    ("L2I_SNOOP_HITS", 0x7f, "L2I_SNOOP_HITS", "NNN", "1", "C"), // ME11: Table 4-42 says YNY
    ("BUS_RD_HIT", 0x80, "BUS_RD_HIT", "NNN", "1", "S"),
    ("BUS_RD_HITM", 0x81, "BUS_RD_HITM", "NNN", "1", "S"),
    ("BUS_RD_INVAL_HITM", 0x82, "BUS_RD_INVALID_HITM", "NNN", "1", "S"), // ME6
    ("BUS_RD_INVAL_ALL_HITM", 0x83, "BUS_RD_INVALID_BST_HITM", "NNN", "1", "S"), // ME6
    ("BUS_HITM", 0x84, "BUS_HITM", "NNN", "1", "S"),
    ("BUS_ALL", 0x87, "BUS_ALL", "NNN", "1", "S"),
    ("BUS_DATA_CYCLE", 0x88, "BUS_DATA_CYCLE", "NNN", "1", "C"),
    ("MEM_READ_CURRENT", 0x89, "MEM_READ_CURRENT", "NNN", "1", "C"),
    ("BUS_MEMORY", 0x8a, "BUS_MEMORY", "NNN", "1", "S"),
    ("BUS_MEM_READ", 0x8b, "BUS_MEM_READ", "NNN", "1", "S"),
    ("BUS_RD_DATA", 0x8c, "BUS_RD_DATA", "NNN", "1", "S"),
    ("BUS_RD_PRTL", 0x8d, "BUS_RD_PRTL", "NNN", "1", "S"),
    ("SI_CYCLES", 0x8e, "SI_CYCLES", "NNN", "1", "C"),
    ("BUS_SNOOP_STALL_CYCLES", 0x8f, "BUS_SNOOP_STALL_CYCLES", "NNN", "1", "S"), // ME17: Table 4-42 says F
    ("BUS_IO", 0x90, "BUS_IO", "NNN", "1", "S"),
    ("BUS_RD_IO", 0x91, "BUS_RD_IO", "NNN", "1", "S"),
    ("BUS_WR_WB", 0x92, "BUS_WR_WB", "NNN", "1", "S"),
    ("BUS_B2B_DATA_CYCLES", 0x93, "BUS_B2B_DATA_CYCLES", "NNN", "1", "C"),
    ("SI_IOQ_LIVE_REQ_LO", 0x97, "SI_IOQ_LIVE_REQ_LO", "NNN", "7", "C"), // ME12: 4.15 says 3
    ("SI_IOQ_LIVE_REQ_HI", 0x98, "SI_IOQ_LIVE_REQ_HI", "NNN", "1", "C"), // ME12: 4.15 says 2
    ("SI_L3T_TRACE_CACHE", 0x9d, "SI_L3T_TRACE_CACHE", "NNN", "n/a", "F"), // ME2: no 4.15 entry; Max Inc/Cyc n/a
    ("SI_RQ_INSERTS", 0x9e, "SI_RQ_INSERTS", "NNN", "2", "S"),
    ("SI_RQ_LIVE_REQ_LO", 0x9f, "SI_RQ_LIVE_REQ_LO", "NNN", "7", "C"),
    ("SI_RQ_LIVE_REQ_HI", 0xa0, "SI_RQ_LIVE_REQ_HI", "NNN", "1", "C"),
    ("SI_WRITEQ_INSERTS", 0xa1, "SI_WRITEQ_INSERTS", "NNN", "2", "S"),
    ("SI_WRITEQ_LIVE_REQ_LO", 0xa2, "SI_WRITEQ_LIVE_REQ_LO", "NNN", "7", "C"),
    ("SI_WRITEQ_LIVE_REQ_HI", 0xa3, "SI_WRITEQ_LIVE_REQ_HI", "NNN", "1", "C"),
    ("SI_WAQ_COLLISIONS", 0xa4, "SI_WAQ_COLLISIONS", "NNN", "1", "S"), // ME17: Table 4-42 says C
    ("SI_CCQ_INSERTS", 0xa5, "SI_CCQ_INSERTS", "NNN", "2", "S"),
    ("SI_CCQ_LIVE_REQ_LO", 0xa6, "SI_CCQ_LIVE_REQ_LO", "NNN", "7", "C"),
    ("SI_CCQ_LIVE_REQ_HI", 0xa7, "SI_CCQ_LIVE_REQ_HI", "NNN", "1", "C"),
    ("SI_CCQ_COLLISIONS", 0xa8, "SI_CCQ_COLLISIONS", "NNN", "1", "C"), // ME12: 4.15 says 2
    ("SI_IOQ_COLLISIONS", 0xaa, "SI_IOQ_COLLISIONS", "NNN", "1", "C"), // ME12: 4.15 says 2
    ("SI_SCB_INSERTS", 0xab, "SI_SCB_INSERTS", "NNN", "1", "C"),       // ME12: 4.15 says 4
    ("SI_SCB_LIVE_REQ_LO", 0xac, "SI_SCB_LIVE_REQ_LO", "NNN", "7", "C"),
    ("SI_SCB_LIVE_REQ_HI", 0xad, "SI_SCB_LIVE_REQ_HI", "NNN", "1", "C"),
    ("SI_SCB_SIGNOFFS", 0xae, "SI_SCB_SIGNOFFS", "NNN", "1", "C"),
    ("SI_WDQ_ECC_ERRORS", 0xaf, "SI_WDQ_ECC_ERRORS", "NNN", "1", "S"), // ME17: Table 4-42 says C; ME12: 4.15 says Max 2
    ("L2D_INSERT_MISSES", 0xb0, "L2D_INSERT_MISSES", "YYY", "4", "F"), // ME27: Table 4-42 says NNN
    ("L2D_INSERT_HITS", 0xb1, "L2D_INSERT_HITS", "YYY", "4", "F"),     // ME27: Table 4-42 says NNN
    ("ER_MEM_READ_OUT_HI", 0xb4, "ER_MEM_READ_OUT_HI", "NNN", "2", "F"),
    ("ER_MEM_READ_OUT_LO", 0xb5, "ER_MEM_READ_OUT_LO", "NNN", "7", "F"),
    ("ER_SNOOPQ_REQ_HI", 0xb6, "ER_SNOOPQ_REQ_HI", "NNN", "1", "C"), // ME12: 4.15 says 2
    ("ER_SNOOPQ_REQ_LO", 0xb7, "ER_SNOOPQ_REQ_LO", "NNN", "7", "C"),
    ("ER_BRQ_LIVE_REQ_HI", 0xb8, "ER_BRQ_LIVE_REQ_HI", "NNN", "2", "C"),
    ("ER_BRQ_LIVE_REQ_LO", 0xb9, "ER_BRQ_LIVE_REQ_LO", "NNN", "7", "C"),
    ("ER_BRQ_REQ_INSERTED", 0xba, "ER_BRQ_REQ_INSERTED", "NNN", "1", "F"),
    ("ER_BKSNP_ME_ACCEPTED", 0xbb, "ER_BKSNP_ME_ACCEPTED", "NNN", "1", "C"), // ME12: 4.15 says 2
    ("ER_REJECT_ALL_L1_REQ", 0xbc, "ER_REJECT_ALL_L1_REQ", "NNN", "1", "C"),
    ("ER_REJECT_ALL_L1D_REQ", 0xbd, "ER_REJECT_ALL_L1D_REQ", "NNN", "1", "C"),
    ("ER_REJECT_ALL_L1I_REQ", 0xbe, "ER_REJECT_ALL_L1I_REQ", "NNN", "1", "C"),
    ("L1DTLB_TRANSFER", 0xc0, "L1DTLB_TRANSFER", "YYY", "1", "A"),
    ("L2DTLB_MISSES", 0xc1, "L2DTLB_MISSES", "YYY", "4", "A"),
    ("L1D_READS_SET0", 0xc2, "L1D_READS_SET0", "YYY", "2", "A"),
    ("DATA_REFERENCES_SET0", 0xc3, "DATA_REFERENCES_SET0", "YYY", "4", "A"),
    ("L1D_READS_SET1", 0xc4, "L1D_READS_SET1", "YYY", "2", "A"),
    ("DATA_REFERENCES_SET1", 0xc5, "DATA_REFERENCES_SET1", "YYY", "4", "A"),
    ("DATA_DEBUG_REGISTER_MATCHES", 0xc6, "DATA_DEBUG_REGISTER_MATCHES", "YYY", "1", "A"),
    ("L1D_READ_MISSES", 0xc7, "L1D_READ_MISSES", "YYY", "2", "A"),
    ("DATA_EAR_EVENTS", 0xc8, "DATA_EAR_EVENTS", "YYY", "1", "F"),
    ("DTLB_INSERTS_HPW", 0xc9, "DTLB_INSERTS_HPW", "YYY", "4", "F"), // ME10: 4.15 says N/N/N
    ("BE_L1D_FPU_BUBBLE", 0xca, "BE_L1D_FPU_BUBBLE", "NNN", "1", "A"),
    ("L2D_MISSES", 0xcb, "L2D_MISSES", "YYY", "1", "F"), // ME17: Type blank in Table 4-42
    ("LOADS_RETIRED", 0xcd, "LOADS_RETIRED", "YYY", "4", "A"),
    ("MISALIGNED_LOADS_RETIRED", 0xce, "MISALIGNED_LOADS_RETIRED", "YYY", "4", "A"),
    ("UC_LOADS_RETIRED", 0xcf, "UC_LOADS_RETIRED", "YYY", "4", "A"),
    ("UC_STORES_RETIRED", 0xd0, "UC_STORES_RETIRED", "YYY", "2", "A"),
    ("STORES_RETIRED", 0xd1, "STORES_RETIRED", "YYY", "2", "A"),
    ("MISALIGNED_STORES_RETIRED", 0xd2, "MISALIGNED_STORES_RETIRED", "YYY", "2", "A"),
    ("LOADS_RETIRED_INTG", 0xd8, "LOADS_RETIRED_INTG", "YYY", "2", "A"),
    ("SPEC_LOADS_NATTED", 0xd9, "SPEC_LOADS_NATTED", "YYY", "2", "A"), // ME10: 4.15 says Y/Y/N
    ("L3_INSERTS", 0xda, "L3_INSERTS", "YYY", "1", "F"),
    ("L3_REFERENCES", 0xdb, "L3_REFERENCES", "YYY", "1", "F"),
    ("L3_MISSES", 0xdc, "L3_MISSES", "YYY", "1", "F"),
    ("L3_READS", 0xdd, "L3_READS", "YYY", "1", "F"),
    ("L3_WRITES", 0xde, "L3_WRITES", "YYY", "1", "F"),
    ("L3_LINES_REPLACED", 0xdf, "L3_LINES_REPLACED", "NNN", "1", "F"),
    ("L2D_OZQ_CANCELS0", 0xe0, "L2D_OZQ_CANCELS0", "YYY", "4", "F"),
    ("L2D_OZQ_CANCELS1", 0xe2, "L2D_OZQ_CANCELS1", "YYY", "4", "F"),
    ("L2D_OZQ_FULL", 0xe1, "L2D_OZQ_FULL", "NNN", "1", "F"), // ME8: Table 4-42 says "0xe1 0xe3"
    ("L2D_BYPASS", 0xe4, "L2D_BYPASS", "YYY", "4", "F"),     // ME26: Table 4-19 says 1
    ("L2D_OZQ_RELEASE", 0xe5, "L2D_OZQ_RELEASE", "NNN", "1", "F"),
    ("L2D_REFERENCES", 0xe6, "L2D_REFERENCES", "YYY", "4", "F"),
    ("L2D_L3ACCESS_CANCEL", 0xe8, "L2D_L3ACCESS_CANCEL", "YYY", "1", "F"),
    ("L2D_OZDB_FULL", 0xe9, "L2D_OZDB_FULL", "NNN", "1", "F"),
    ("L2D_FORCE_RECIRC", 0xea, "L2D_FORCE_RECIRC", "YYY", "4", "F"),
    ("L2D_ISSUED_RECIRC_OZQ_ACC", 0xeb, "L2D_ISSUED_RECIRC_OZQ_ACC", "YYY", "1", "F"),
    ("L2D_BAD_LINES_SELECTED", 0xec, "L2D_BAD_LINES_SELECTED", "YYY", "4", "F"),
    ("L2D_STORE_HIT_SHARED", 0xed, "L2D_STORE_HIT_SHARED", "YYY", "2", "F"),
    ("TAGGED_L2D_RETURN_PORT", 0xee, "TAGGED_L2D_RETURN_PORT", "YYY", "1", "F"), // ME2: no 4.15 entry
    ("L2D_OZQ_ACQUIRE", 0xef, "L2D_OZQ_ACQUIRE", "NNN", "1", "F"),
    ("L2D_OPS_ISSUED", 0xf0, "L2D_OPS_ISSUED", "YYY", "4", "F"),
    ("L2D_FILLB_FULL", 0xf1, "L2D_FILLB_FULL", "NNN", "1", "F"),
    ("L2D_FILL_MESI_STATE", 0xf2, "L2D_FILL_MESI_STATE", "YYY", "1", "F"), // ME10: 4.15 says N/N/N
    ("L2D_VICTIMB_FULL", 0xf3, "L2D_VICTIMB_FULL", "NNN", "1", "F"),
];

/// Sections 4.3 and 4.5 (basic and instruction execution events): Tables 4-72, 4-77,
/// 4-78, 4-43, 4-76, 4-80, 4-81, 4-82 and 4-125 of section 4.15.
const BASIC_AND_EXECUTION: &[(&str, &[Row])] = &[
    ("CPU_OP_CYCLES", &[("ALL", "bxxx0", ""), ("QUAL", "bxxx1", "")]),
    ("IA64_INST_RETIRED", &[("THIS", "bxx00", "")]),
    (
        "IA64_TAGGED_INST_RETIRED",
        &[
            ("IBRP0_PMC32_33", "bxx00", ""),
            ("IBRP1_PMC34_35", "bxx01", ""),
            ("IBRP2_PMC32_33", "bxx10", ""),
            ("IBRP3_PMC34_35", "bxx11", ""),
        ],
    ),
    (
        "ALAT_CAPACITY_MISS",
        &[("---", "bxx00", "(* nothing will be counted *)"), ("INT", "bxx01", ""), ("FP", "bxx10", ""), ("ALL", "bxx11", "")],
    ),
    ("FP_FLUSH_TO_ZERO", &[("FTZ_Real", "b0", ""), ("FTZ_Poss", "b1", "")]),
    (
        "INST_CHKA_LDC_ALAT",
        &[("---", "bxx00", "(* nothing will be counted *)"), ("INT", "bxx01", ""), ("FP", "bxx10", ""), ("ALL", "bxx11", "")],
    ),
    (
        "INST_FAILED_CHKA_LDC_ALAT",
        &[("---", "bxx00", "(* nothing will be counted *)"), ("INT", "bxx01", ""), ("FP", "bxx10", ""), ("ALL", "bxx11", "")],
    ),
    (
        "INST_FAILED_CHKS_RETIRED",
        &[("---", "bxx00", "(* nothing will be counted *)"), ("INT", "bxx01", ""), ("FP", "bxx10", ""), ("ALL", "bxx11", "")],
    ),
    (
        "SPEC_LOADS_NATTED",
        &[
            ("ALL", "b0000", ""),
            ("VHPT_MISS", "b0001", ""),
            ("DEF_TLB_MISS", "b0010", ""),
            ("DEF_TLB_FAULT", "b0011", ""),
            ("NAT_CNSM", "b0100", ""),
            ("DEF_PSR_ED", "b0101", ""),
        ],
    ),
];

/// Section 4.4 (instruction dispersal events): Tables 4-126 and 4-127.
const DISPERSAL: &[(&str, &[Row])] = &[
    (
        "SYLL_NOT_DISPERSED",
        &[("EXPL", "bxxx1", ""), ("IMPL", "bxx1x", ""), ("FE", "bx1xx", ""), ("MLX", "b1xxx", ""), ("ALL", "b1111", "")],
    ),
    (
        "SYLL_OVERCOUNT",
        &[("---", "bxx00", "(* nothing will be counted *)"), ("EXPL", "bxx01", ""), ("IMPL", "bxx10", ""), ("ALL", "bxx11", "")],
    ),
];

/// Section 4.6 (stall events): Tables 4-44, 4-46, 4-47, 4-48, 4-49, 4-50, 4-74, 4-75
/// and 4-79.
const STALL: &[(&str, &[Row])] = &[
    (
        "BACK_END_BUBBLE",
        &[("ALL", "bxx00", ""), ("FE", "bxx01", ""), ("L1D_FPU_RSE", "bxx10", ""), ("---", "bxx11", "(* nothing will be counted *)")],
    ),
    (
        "BE_EXE_BUBBLE",
        &[
            ("ALL", "b0000", ""),
            ("GRALL", "b0001", ""),
            ("FRALL", "b0010", ""),
            ("PR", "b0011", ""),
            ("ARCR", "b0100", ""),
            ("GRGR", "b0101", ""),
            ("CANCEL", "b0110", ""),
            ("BANK_SWITCH", "b0111", ""),
            ("ARCR_PR_CANCEL_BANK", "b1000", ""),
            ("---", "b1001-b1111", "(* nothing will be counted *)"),
        ],
    ),
    (
        "BE_FLUSH_BUBBLE",
        &[("ALL", "bxx00", ""), ("BRU", "bxx01", ""), ("XPN", "bxx10", ""), ("---", "bxx11", "(* nothing will be counted *)")],
    ),
    (
        "BE_L1D_FPU_BUBBLE",
        &[
            ("ALL", "b0000", ""),
            ("FPU", "b0001", ""),
            ("L1D", "b0010", ""),
            ("L1D_FULLSTBUF", "b0011", ""),
            ("L1D_PIPE_RECIRC", "b0100", ""),
            ("L1D_HPW", "b0101", ""),
            ("---", "b0110", "(* count is undefined *)"),
            ("L1D_FILLCONF", "b0111", ""),
            ("L1D_AR_CR", "b1000", ""),
            ("L1D_L2BPRESS", "b1001", ""),
            ("L1D_TLB", "b1010", ""),
            ("L1D_LDCONF", "b1011", ""),
            ("L1D_LDCHK", "b1100", ""),
            ("L1D_NAT", "b1101", ""),
            ("L1D_STBUFRECIR", "b1110", ""),
            ("L1D_NATCONF", "b1111", ""),
        ],
    ),
    (
        "BE_LOST_BW_DUE_TO_FE",
        &[
            ("ALL", "b0000", ""),
            ("FEFLUSH", "b0001", ""),
            ("---", "b0010", "(* illegal selection *)"),
            ("---", "b0011", "(* illegal selection *)"),
            ("UNREACHED", "b0100", ""),
            ("IBFULL", "b0101", ""),
            ("IMISS", "b0110", ""),
            ("TLBMISS", "b0111", ""),
            ("FILL_RECIRC", "b1000", ""),
            ("BI", "b1001", ""),
            ("BRQ", "b1010", ""),
            ("PLP", "b1011", ""),
            ("BR_ILOCK", "b1100", ""),
            ("BUBBLE", "b1101", ""),
            ("---", "b1110-b1111", "(* illegal selection *)"),
        ],
    ),
    (
        "BE_RSE_BUBBLE",
        &[
            ("ALL", "bx000", ""),
            ("BANK_SWITCH", "bx001", ""),
            ("AR_DEP", "bx010", ""),
            ("OVERFLOW", "bx011", ""),
            ("UNDERFLOW", "bx100", ""),
            ("LOADRS", "bx101", ""),
            ("---", "bx110-bx111", "(* nothing will be counted *)"),
        ],
    ),
    (
        "FE_BUBBLE",
        &[
            ("ALL", "b0000", ""),
            ("FEFLUSH", "b0001", ""),
            ("---", "b0010", "(*illegal selection*)"),
            ("GROUP1", "b0011", ""),
            ("GROUP2", "b0100", ""),
            ("IBFULL", "b0101", ""),
            ("IMISS", "b0110", ""),
            ("TLBMISS", "b0111", ""),
            ("FILL_RECIRC", "b1000", ""),
            ("BRANCH", "b1001", ""),
            ("GROUP3", "b1010", ""),
            ("ALLBUT_FEFLUSH_BUBBLE", "b1011", ""),
            ("ALLBUT_IBFULL", "b1100", ""),
            ("BUBBLE", "b1101", ""),
            ("---", "b1110-b1111", "(* illegal selection *)"),
        ],
    ),
    (
        "FE_LOST_BW",
        &[
            ("ALL", "b0000", ""),
            ("FEFLUSH", "b0001", ""),
            ("---", "b0010", "(* illegal selection *)"),
            ("---", "b0011", "(* illegal selection *)"),
            ("UNREACHED", "b0100", ""),
            ("IBFULL", "b0101", ""),
            ("IMISS", "b0110", ""),
            ("TLBMISS", "b0111", ""),
            ("FILL_RECIRC", "b1000", ""),
            ("BI", "b1001", ""),
            ("BRQ", "b1010", ""),
            ("PLP", "b1011", ""),
            ("BR_ILOCK", "b1100", ""),
            ("BUBBLE", "b1101", ""),
            // ME16: the spec says b1101-b1111, overlapping BUBBLE (b1101).
            ("---", "b1110-b1111", "(* illegal selection *)"),
        ],
    ),
    (
        "IDEAL_BE_LOST_BW_DUE_TO_FE",
        &[
            ("ALL", "b0000", ""),
            ("FEFLUSH", "b0001", ""),
            ("---", "b0010", "(* illegal selection *)"),
            ("---", "b0011", "(* illegal selection *)"),
            ("UNREACHED", "b0100", ""),
            ("IBFULL", "b0101", ""),
            ("IMISS", "b0110", ""),
            ("TLBMISS", "b0111", ""),
            ("FILL_RECIRC", "b1000", ""),
            ("BI", "b1001", ""),
            ("BRQ", "b1010", ""),
            ("PLP", "b1011", ""),
            ("BR_ILOCK", "b1100", ""),
            ("BUBBLE", "b1101", ""),
            // ME16: the spec says b1101-b1111, overlapping BUBBLE (b1101).
            ("---", "b1110-b1111", "(* illegal selection *)"),
        ],
    ),
];

/// Section 4.7 (branch events): Tables 4-45, 4-51, 4-52, 4-53, 4-54 and 4-73.
const BRANCH: &[(&str, &[Row])] = &[
    ("BE_BR_MISPRED_DETAIL", &[("ANY", "bxx00", ""), ("STG", "bxx01", ""), ("ROT", "bxx10", ""), ("PFS", "bxx11", "")]),
    (
        "BR_MISPRED_DETAIL",
        &[
            ("ALL.ALL_PRED", "b0000", ""),
            ("ALL.CORRECT_PRED", "b0001", ""),
            ("ALL.WRONG_PATH", "b0010", ""),
            ("ALL.WRONG_TARGET", "b0011", ""),
            ("IPREL.ALL_PRED", "b0100", ""),
            ("IPREL.CORRECT_PRED", "b0101", ""),
            ("IPREL.WRONG_PATH", "b0110", ""),
            ("IPREL.WRONG_TARGET", "b0111", ""),
            ("RETURN.ALL_PRED", "b1000", ""),
            ("RETURN.CORRECT_PRED", "b1001", ""),
            ("RETURN.WRONG_PATH", "b1010", ""),
            ("RETURN.WRONG_TARGET", "b1011", ""),
            ("NRETIND.ALL_PRED", "b1100", ""),
            ("NRETIND.CORRECT_PRED", "b1101", ""),
            ("NRETIND.WRONG_PATH", "b1110", ""),
            ("NRETIND.WRONG_TARGET", "b1111", ""),
        ],
    ),
    (
        "BR_MISPRED_DETAIL2",
        &[
            ("ALL.ALL_UNKNOWN_PRED", "b0000", ""),
            ("ALL.UNKNOWN_PATH_CORRECT_PRED", "b0001", ""),
            ("ALL.UNKNOWN_PATH_WRONG_PATH", "b0010", ""),
            ("---", "b0011", "(* nothing will be counted *)"),
            ("IPREL.ALL_UNKNOWN_PRED", "b0100", ""),
            ("IPREL.UNKNOWN_PATH_CORRECT_PRED", "b0101", ""),
            ("IPREL.UNKNOWN_PATH_WRONG_PATH", "b0110", ""),
            ("---", "b0111", "(* nothing will be counted *)"),
            // ME15: the spec's Extension reads RETURN.ALL_UNKNOWN_PATH_CORRECT_PRED.
            ("RETURN.ALL_UNKNOWN_PRED", "b1000", ""),
            ("RETURN.UNKNOWN_PATH_CORRECT_PRED", "b1001", ""),
            ("RETURN.UNKNOWN_PATH_WRONG_PATH", "b1010", ""),
            ("---", "b1011", "(* nothing will be counted *)"),
            // ME15: the spec's Extension reads NRETIND.ALL_UNKNOWN_PATH_CORRECT_PRED.
            ("NRETIND.ALL_UNKNOWN_PRED", "b1100", ""),
            ("NRETIND.UNKNOWN_PATH_CORRECT_PRED", "b1101", ""),
            ("NRETIND.UNKNOWN_PATH_WRONG_PATH", "b1110", ""),
            ("---", "b1111", "(* nothing will be counted *)"),
        ],
    ),
    (
        "BR_PATH_PRED",
        &[
            ("ALL.MISPRED_NOTTAKEN", "b0000", ""),
            ("ALL.MISPRED_TAKEN", "b0001", ""),
            ("ALL.OKPRED_NOTTAKEN", "b0010", ""),
            ("ALL.OKPRED_TAKEN", "b0011", ""),
            ("IPREL.MISPRED_NOTTAKEN", "b0100", ""),
            ("IPREL.MISPRED_TAKEN", "b0101", ""),
            ("IPREL.OKPRED_NOTTAKEN", "b0110", ""),
            ("IPREL.OKPRED_TAKEN", "b0111", ""),
            ("RETURN.MISPRED_NOTTAKEN", "b1000", ""),
            ("RETURN.MISPRED_TAKEN", "b1001", ""),
            ("RETURN.OKPRED_NOTTAKEN", "b1010", ""),
            ("RETURN.OKPRED_TAKEN", "b1011", ""),
            ("NRETIND.MISPRED_NOTTAKEN", "b1100", ""),
            ("NRETIND.MISPRED_TAKEN", "b1101", ""),
            ("NRETIND.OKPRED_NOTTAKEN", "b1110", ""),
            ("NRETIND.OKPRED_TAKEN", "b1111", ""),
        ],
    ),
    (
        "BR_PATH_PRED2",
        &[
            ("ALL.UNKNOWNPRED_NOTTAKEN", "b00x0", ""),
            ("ALL.UNKNOWNPRED_TAKEN", "b00x1", ""),
            ("IPREL.UNKNOWNPRED_NOTTAKEN", "b01x0", ""),
            ("IPREL.UNKNOWNPRED_TAKEN", "b01x1", ""),
            ("RETURN.UNKNOWNPRED_NOTTAKEN", "b10x0", ""),
            ("RETURN.UNKNOWNPRED_TAKEN", "b10x1", ""),
            ("NRETIND.UNKNOWNPRED_NOTTAKEN", "b11x0", ""),
            ("NRETIND.UNKNOWNPRED_TAKEN", "b11x1", ""),
        ],
    ),
    (
        "ENCBR_MISPRED_DETAIL",
        &[
            ("ALL.ALL_PRED", "b0000", ""),
            ("ALL.CORRECT_PRED", "b0001", ""),
            ("ALL.WRONG_PATH", "b0010", ""),
            ("ALL.WRONG_TARGET", "b0011", ""),
            ("---", "b0100", "(* nothing will be counted *)"),
            ("---", "b0101", "(* nothing will be counted *)"),
            ("---", "b0110", "(* nothing will be counted *)"),
            ("---", "b0111", "(* nothing will be counted *)"),
            ("OVERSUB.ALL_PRED", "b1000", ""),
            ("OVERSUB.CORRECT_PRED", "b1001", ""),
            ("OVERSUB.WRONG_PATH", "b1010", ""),
            ("OVERSUB.WRONG_TARGET", "b1011", ""),
            ("ALL2.ALL_PRED", "b1100", ""),
            ("ALL2.CORRECT_PRED", "b1101", ""),
            ("ALL2.WRONG_PATH", "b1110", ""),
            ("ALL2.WRONG_TARGET", "b1111", ""),
        ],
    ),
];

/// Sections 4.8.1 and 4.8.3 (L1I and L2I events): Tables 4-85, 4-102, 4-104, 4-103,
/// 4-101 and 4-100.
const INSTRUCTION_CACHE: &[(&str, &[Row])] = &[
    ("L1I_PREFETCH_STALL", &[("---", "bxx00-bxx01", "(* nothing will be counted *)"), ("FLOW", "bxx10", ""), ("ALL", "bxx11", "")]),
    (
        "L2I_READS",
        &[
            ("---", "00xx", "None is counted"),
            ("HIT.NONE", "0100", ""),
            ("HIT.DMND", "0101", ""),
            ("HIT.PFTCH", "0110", ""),
            ("HIT.ALL", "0111", ""),
            ("MISS.NONE", "1000", ""),
            ("MISS.DMND", "1001", ""),
            ("MISS.PFTCH", "1010", ""),
            ("MISS.ALL", "1011", ""),
            ("ALL.NONE", "1100", ""),
            ("ALL.DMND", "1101", ""),
            ("ALL.PFTCH", "1110", ""),
            ("ALL.ALL", "1111", ""),
        ],
    ),
    (
        "L2I_UC_READS",
        &[
            ("---", "00xx", "None is counted"),
            ("HIT.NONE", "0100", ""),
            ("HIT.DMND", "0101", ""),
            ("HIT.PFTCH", "0110", ""),
            ("HIT.ALL", "0111", ""),
            ("MISS.NONE", "1000", ""),
            ("MISS.DMND", "1001", ""),
            ("MISS.PFTCH", "1010", ""),
            ("MISS.ALL", "1011", ""),
            ("ALL.NONE", "1100", ""),
            ("ALL.DMND", "1101", ""),
            ("ALL.PFTCH", "1110", ""),
            ("ALL.ALL", "1111", ""),
        ],
    ),
    (
        "L2I_RECIRCULATES",
        &[
            ("---", "00xx", "None is counted"),
            ("HIT.NONE", "0100", ""),
            ("HIT.DMND", "0101", ""),
            ("HIT.PFTCH", "0110", ""),
            ("HIT.ALL", "0111", ""),
            ("MISS.NONE", "1000", ""),
            ("MISS.DMND", "1001", ""),
            ("MISS.PFTCH", "1010", ""),
            ("MISS.ALL", "1011", ""),
            ("ALL.NONE", "1100", ""),
            ("ALL.DMND", "1101", ""),
            ("ALL.PFTCH", "1110", ""),
            ("ALL.ALL", "1111", ""),
        ],
    ),
    (
        "L2I_L3_REJECTS",
        &[
            ("---", "00xx", "None is counted"),
            ("HIT.NONE", "0100", ""),
            ("HIT.DMND", "0101", ""),
            ("HIT.PFTCH", "0110", ""),
            ("HIT.ALL", "0111", ""),
            ("MISS.NONE", "1000", ""),
            ("MISS.DMND", "1001", ""),
            ("MISS.PFTCH", "1010", ""),
            ("MISS.ALL", "1011", ""),
            ("ALL.NONE", "1100", ""),
            ("ALL.DMND", "1101", ""),
            ("ALL.PFTCH", "1110", ""),
            ("ALL.ALL", "1111", ""),
        ],
    ),
    (
        "L2I_HIT_CONFLICTS",
        &[
            ("---", "00xx", "None is counted"),
            ("HIT.NONE", "0100", ""),
            ("HIT.DMND", "0101", ""),
            ("HIT.PFTCH", "0110", ""),
            ("HIT.ALL", "0111", ""),
            ("MISS.NONE", "1000", ""),
            ("MISS.DMND", "1001", ""),
            ("MISS.PFTCH", "1010", ""),
            ("MISS.ALL", "1011", ""),
            ("ALL.NONE", "1100", ""),
            ("ALL.DMND", "1101", ""),
            ("ALL.PFTCH", "1110", ""),
            ("ALL.ALL", "1111", ""),
        ],
    ),
];

/// Sections 4.8.2 and 4.8.5 (L1D and L3 events): Tables 4-84, 4-105 and 4-106.
const L1D_AND_L3: &[(&str, &[Row])] = &[
    ("L1D_READ_MISSES", &[("ALL", "bxxx0", ""), ("RSE_FILL", "bxxx1", "")]),
    (
        "L3_READS",
        &[
            ("---", "b0000", "(* nothing will be counted *)"),
            ("DINST_FETCH.HIT", "b0001", ""),
            ("DINST_FETCH.MISS", "b0010", ""),
            ("DINST_FETCH.ALL", "b0011", ""),
            ("---", "b0100", "(* nothing will be counted *)"),
            ("INST_FETCH.HIT", "b0101", ""),
            ("INST_FETCH.MISS", "b0110", ""),
            ("INST_FETCH.ALL", "b0111", ""),
            ("---", "b1000", "(* nothing will be counted *)"),
            ("DATA_READ.HIT", "b1001", ""),
            ("DATA_READ.MISS", "b1010", ""),
            ("DATA_READ.ALL", "b1011", ""),
            ("---", "b1100", "(* nothing will be counted *)"),
            ("ALL.HIT", "b1101", ""),
            ("ALL.MISS", "b1110", ""),
            ("ALL.ALL", "b1111", ""),
        ],
    ),
    (
        "L3_WRITES",
        &[
            ("---", "b00xx", "(* nothing will be counted *)"),
            ("---", "b0100", "(* nothing will be counted *)"),
            ("DATA_WRITE.HIT", "b0101", ""),
            ("DATA_WRITE.MISS", "b0110", ""),
            ("DATA_WRITE.ALL", "b0111", ""),
            ("---", "b1000", "(* nothing will be counted *)"),
            ("L2_WB.HIT", "b1001", ""),
            ("L2_WB.MISS", "b1010", ""),
            ("L2_WB.ALL", "b1011", ""),
            ("---", "b1100", "(* nothing will be counted *)"),
            ("ALL.HIT", "b1101", ""),
            ("ALL.MISS", "b1110", ""),
            ("ALL.ALL", "b1111", ""),
        ],
    ),
];

/// Section 4.8.4 (L2D events): Tables 4-94, 4-96, 4-95, 4-87, 4-97, 4-91, 4-93, 4-90,
/// 4-86, 4-98, 4-92, 4-88, 4-89 and 4-99.
const L2D: &[(&str, &[Row])] = &[
    (
        "L2D_OZQ_CANCELS0",
        &[
            ("RECIRC", "b0000", ""),
            ("CANC_L2M_TO_L2C_ST", "b0001", ""),
            ("L2A_ST_MAT", "b0010", ""),
            ("L2M_ST_MAT", "b0011", ""),
            ("L2D_ST_MAT", "b0100", ""),
            ("L2C_ST_MAT", "b0101", ""),
            ("ACQ", "b0110", ""),
            ("REL", "b0111", ""),
            ("BANK_CONF", "b1000", ""),
            ("SEMA", "b1001", ""),
            ("OVER_SUB", "b1010", ""),
            ("OZQ_PREEMPT", "b1011", ""),
            ("WB_CONF", "b1100", ""),
            ("MISC_ORDER", "b1101", ""),
            ("FILL_ST_CONF", "b1110", ""),
            ("OZDATA_CONF", "b1111", ""),
        ],
    ),
    ("L2D_OZQ_FULL", &[("THIS", "b0000", ""), ("---", "b0001-b1111", "(* count is undefined *)")]),
    (
        "L2D_OZQ_CANCELS1",
        &[("ANY", "bxx00", ""), ("LATE_SPEC_BYP", "bxx01", ""), ("SIBLING_ACQ_REL", "bxx10", ""), ("LATE_BYP_EFFRELEASE", "bxx11", "")],
    ),
    (
        "L2D_BYPASS",
        &[
            ("L2_DATA1", "bxx00", ""),
            ("L2_DATA2", "bxx01", ""),
            ("L3_DATA1", "bxx10", ""),
            ("---", "bxx11", "(* nothing will be counted *)"),
        ],
    ),
    (
        "L2D_REFERENCES",
        &[("---", "bxx00", "(* nothing will be counted *)"), ("READS", "bxx01", ""), ("WRITES", "bxx10", ""), ("ALL", "bxx11", "")],
    ),
    (
        "L2D_L3ACCESS_CANCEL",
        &[
            ("INV_L3_BYP", "bx000", ""),
            ("SPEC_L3_BYP", "bx001", ""),
            ("ANY", "bx010", ""),
            ("ER_REJECT", "bx011", ""),
            ("P2_COV_SNP_TEM", "bx100", ""),
            ("P2_COV_SNP_VIC", "bx101", ""),
            ("P2_COV_SNP_FILL_NOSNP", "bx110", ""),
            ("TAIL_TRANS_DIS", "bx111", ""),
        ],
    ),
    ("L2D_OZDB_FULL", &[("THIS", "b0000", ""), ("---", "b0001-b1111", "(* count is undefined *)")]),
    (
        "L2D_FORCE_RECIRC",
        &[
            ("RECIRC", "b00x0", ""),
            ("LIMBO", "b00x1", ""),
            ("TAG_NOTOK", "b0100", ""),
            ("TRAN_PREF", "b0101", ""),
            ("SNP_OR_L3", "b0110", ""),
            ("TAG_OK", "b0111", ""),
            ("FILL_HIT", "b1000", ""),
            ("FRC_RECIRC", "b1001", ""),
            ("SAME_INDEX", "b1010", ""),
            ("OZQ_MISS", "b1011", ""),
            ("L1W", "b1100", ""),
            ("SECONDARY_READ", "b1101", ""),
            ("SECONDARY_WRITE", "b1110", ""),
            ("SECONDARY_ALL", "b1111", ""),
        ],
    ),
    ("L2D_BAD_LINES_SELECTED", &[("ANY", "b0xxx", "")]),
    ("L2D_STORE_HIT_SHARED", &[("ANY", "b0xxx", "")]),
    (
        "L2D_OPS_ISSUED",
        &[
            ("INT_LOAD", "bx000", ""),
            ("FP_LOAD", "bx001", ""),
            ("RMW", "bx010", ""),
            ("STORE", "bx011", ""),
            ("LFETCH", "bx1x0", ""),
            ("OTHER", "bx1x1", ""),
        ],
    ),
    ("L2D_FILLB_FULL", &[("THIS", "b0000", ""), ("---", "b0001-b1111", "(* count is undefined *)")]),
    ("L2D_FILL_MESI_STATE", &[("M", "bx000", ""), ("E", "bx001", ""), ("S", "bx010", ""), ("I", "bx011", ""), ("P", "bx1xx", "")]),
    ("L2D_VICTIMB_FULL", &[("THIS", "b0000", ""), ("---", "b0001-b1111", "(* count is undefined *)")]),
];

/// Sections 4.9, 4.10 and 4.12 (system, TLB and RSE events): Tables 4-71, 4-83 and
/// 4-108.
const SYSTEM_TLB_RSE: &[(&str, &[Row])] = &[
    (
        "CPU_CPL_CHANGES",
        &[
            ("---", "b0000", "(* nothing will be counted *)"),
            ("LVL0", "b0001", ""),
            ("LVL1", "b0010", ""),
            ("LVL2", "b0100", ""),
            ("LVL3", "b1000", ""),
            ("ALL", "b1111", ""),
        ],
    ),
    (
        "ITLB_MISSES_FETCH",
        &[("---", "bxx00", "(* nothing will be counted *)"), ("L1ITLB", "bxx01", ""), ("L2ITLB", "bxx10", ""), ("ALL", "bxx11", "")],
    ),
    (
        "RSE_REFERENCES_RETIRED",
        &[("---", "bxx00", "(* nothing will be counted *)"), ("LOAD", "bxx01", ""), ("STORE", "bxx10", ""), ("ALL", "bxx11", "")],
    ),
];

/// Section 4.11 (system bus events, BUS_* and MEM_READ_CURRENT): Tables 4-55 ... 4-70
/// and 4-107.
const BUS: &[(&str, &[Row])] = &[
    ("BUS_ALL", &[("EITHER", "bxx00", ""), ("IO", "bxx01", ""), ("SELF", "bxx10", ""), ("ANY", "bxx11", "")]),
    ("BUS_B2B_DATA_CYCLES", &[("EITHER", "bxx00", ""), ("IO", "bxx01", ""), ("SELF", "bxx10", ""), ("ANY", "bxx11", "")]),
    ("BUS_DATA_CYCLE", &[("EITHER", "bxx00", ""), ("IO", "bxx01", ""), ("SELF", "bxx10", ""), ("ANY", "bxx11", "")]),
    ("BUS_HITM", &[("EITHER", "bxx00", ""), ("IO", "bxx01", ""), ("SELF", "bxx10", ""), ("ANY", "bxx11", "")]),
    ("BUS_IO", &[("EITHER", "bxx00", ""), ("IO", "bxx01", ""), ("SELF", "bxx10", ""), ("ANY", "bxx11", "")]),
    (
        "BUS_MEMORY",
        &[
            ("---", "b00xx", "(* nothing will be counted *)"),
            ("EQ_128BYTE.EITHER", "b0100", ""),
            ("EQ_128BYTE.IO", "b0101", ""),
            ("EQ_128BYTE.SELF", "b0110", ""),
            ("EQ_128BYTE.ANY", "b0111", ""),
            ("LT_128BYTE.EITHER", "b1000", ""),
            ("LT_128BYTE.IO", "b1001", ""),
            ("LT_128BYTE.SELF", "b1010", ""),
            ("LT_128BYTE.ANY", "b1011", ""),
            ("ALL.EITHER", "b1100", ""),
            ("ALL.IO", "b1101", ""),
            ("ALL.SELF", "b1110", ""),
            ("ALL.ANY", "b1111", ""),
        ],
    ),
    (
        "BUS_MEM_READ",
        &[
            ("BIL.EITHER", "b0000", ""),
            ("BIL.IO", "b0001", ""),
            ("BIL.SELF", "b0010", ""),
            ("BIL.ANY", "b0011", ""),
            ("BRL.EITHER", "b0100", ""),
            ("BRL.IO", "b0101", ""),
            ("BRL.SELF", "b0110", ""),
            ("BRL.ANY", "b0111", ""),
            ("BRIL.EITHER", "b1000", ""),
            ("BRIL.IO", "b1001", ""),
            ("BRIL.SELF", "b1010", ""),
            ("BRIL.ANY", "b1011", ""),
            ("ALL.EITHER", "b1100", ""),
            ("ALL.IO", "b1101", ""),
            ("ALL.SELF", "b1110", ""),
            ("ALL.ANY", "b1111", ""),
        ],
    ),
    ("BUS_RD_DATA", &[("EITHER", "bxx00", ""), ("IO", "bxx01", ""), ("SELF", "bxx10", ""), ("ANY", "bxx11", "")]),
    ("BUS_RD_HIT", &[("EITHER", "bxx00", ""), ("IO", "bxx01", ""), ("SELF", "bxx10", ""), ("ANY", "bxx11", "")]),
    ("BUS_RD_HITM", &[("EITHER", "bxx00", ""), ("IO", "bxx01", ""), ("SELF", "bxx10", ""), ("ANY", "bxx11", "")]),
    ("BUS_RD_INVALID_BST_HITM", &[("EITHER", "bxx00", ""), ("IO", "bxx01", ""), ("SELF", "bxx10", ""), ("ANY", "bxx11", "")]),
    ("BUS_RD_INVALID_HITM", &[("EITHER", "bxx00", ""), ("IO", "bxx01", ""), ("SELF", "bxx10", ""), ("ANY", "bxx11", "")]),
    ("BUS_RD_IO", &[("EITHER", "bxx00", ""), ("IO", "bxx01", ""), ("SELF", "bxx10", ""), ("ANY", "bxx11", "")]),
    ("BUS_RD_PRTL", &[("EITHER", "bxx00", ""), ("IO", "bxx01", ""), ("SELF", "bxx10", ""), ("ANY", "bxx11", "")]),
    (
        "BUS_SNOOP_STALL_CYCLES",
        &[("EITHER", "bxx00", ""), ("---", "bxx01", "(* illegal selection *)"), ("SELF", "bxx10", ""), ("ANY", "bxx11", "")],
    ),
    (
        "BUS_WR_WB",
        &[
            ("---", "b00xx", "(* nothing will be counted *)"),
            ("EQ_128BYTE.EITHER", "b0100", ""),
            ("EQ_128BYTE.IO", "b0101", ""),
            ("EQ_128BYTE.SELF", "b0110", ""),
            ("EQ_128BYTE.ANY", "b0111", ""),
            ("CCASTOUT.EITHER", "b1000", ""),
            ("---", "b1001", "(* illegal selection *)"),
            ("CCASTOUT.SELF", "b1010", ""),
            ("CCASTOUT.ANY", "b1011", ""),
            ("ALL.EITHER", "b1100", ""),
            ("ALL.IO", "b1101", ""),
            ("ALL.SELF", "b1110", ""),
            ("ALL.ANY", "b1111", ""),
        ],
    ),
    (
        "MEM_READ_CURRENT",
        &[
            ("---", "bxx00", "(* illegal selection *)"),
            ("IO", "bxx01", ""),
            ("---", "bxx10", "(* illegal selection *)"),
            ("ANY", "bxx11", ""),
        ],
    ),
];

/// Section 4.11 (system interface events, SI_*): Tables 4-109 ... 4-124.
const SYSTEM_INTERFACE: &[(&str, &[Row])] = &[
    ("SI_CCQ_COLLISIONS", &[("EITHER", "bxxx0", ""), ("SELF", "bxxx1", "")]),
    ("SI_CCQ_INSERTS", &[("EITHER", "bxxx0", ""), ("SELF", "bxxx1", "")]),
    ("SI_CCQ_LIVE_REQ_HI", &[("EITHER", "bxxx0", ""), ("SELF", "bxxx1", "")]),
    ("SI_CCQ_LIVE_REQ_LO", &[("EITHER", "bxxx0", ""), ("SELF", "bxxx1", "")]),
    ("SI_RQ_INSERTS", &[("EITHER", "bxxx0", ""), ("SELF", "bxxx1", "")]),
    ("SI_RQ_LIVE_REQ_HI", &[("EITHER", "bxxx0", ""), ("SELF", "bxxx1", "")]),
    ("SI_RQ_LIVE_REQ_LO", &[("EITHER", "bxxx0", ""), ("SELF", "bxxx1", "")]),
    (
        "SI_SCB_INSERTS",
        &[
            ("MISS.EITHER", "b00x0", ""),
            ("MISS.SELF", "b00x1", ""),
            ("HIT.EITHER", "b01x0", ""),
            ("HIT.SELF", "b01x1", ""),
            ("HITM.EITHER", "b10x0", ""),
            ("HITM.SELF", "b10x1", ""),
            ("ALL.EITHER", "b11x0", ""),
            ("ALL.SELF", "b11x1", ""),
        ],
    ),
    ("SI_SCB_LIVE_REQ_HI", &[("EITHER", "bxxx0", ""), ("SELF", "bxxx1", "")]),
    ("SI_SCB_LIVE_REQ_LO", &[("EITHER", "bxxx0", ""), ("SELF", "bxxx1", "")]),
    ("SI_SCB_SIGNOFFS", &[("MISS", "b00xx", ""), ("HIT", "b01xx", ""), ("HITM", "b10xx", ""), ("ALL", "b11xx", "")]),
    ("SI_WAQ_COLLISIONS", &[("EITHER", "bxxx0", ""), ("SELF", "bxxx1", "")]),
    (
        "SI_WDQ_ECC_ERRORS",
        &[
            ("SGL.EITHER", "b00x0", ""),
            ("SGL.SELF", "b00x1", ""),
            ("DBL.EITHER", "b01x0", ""),
            ("DBL.SELF", "b01x1", ""),
            ("ALL.EITHER", "b1xx0", ""),
            ("ALL.SELF", "b1xx1", ""),
        ],
    ),
    (
        "SI_WRITEQ_INSERTS",
        &[
            ("ALL.EITHER", "b0000", ""),
            ("ALL.SELF", "b0001", ""),
            ("IWB.EITHER", "b0010", ""),
            ("IWB.SELF", "b0011", ""),
            ("EWB.EITHER", "b0100", ""),
            ("EWB.SELF", "b0101", ""),
            ("WC1_8A.EITHER", "b0110", ""),
            ("WC1_8A.SELF", "b0111", ""),
            ("WC16.EITHER", "b1000", ""),
            ("WC16.SELF", "b1001", ""),
            ("WC32.EITHER", "b1010", ""),
            ("WC32.SELF", "b1011", ""),
            ("NEWB.EITHER", "b1100", ""),
            ("NEWB.SELF", "b1101", ""),
            ("WC1_8B.EITHER", "b1110", ""),
            ("WC1_8B.SELF", "b1111", ""),
        ],
    ),
    ("SI_WRITEQ_LIVE_REQ_HI", &[("EITHER", "bxxx0", ""), ("SELF", "bxxx1", "")]),
    ("SI_WRITEQ_LIVE_REQ_LO", &[("EITHER", "bxxx0", ""), ("SELF", "bxxx1", "")]),
];

/// Section 4.13 (Hyper-Threading events): Tables 4-129, 4-130, 4-128 and 4-131.
const THREAD_SWITCH: &[(&str, &[Row])] = &[
    (
        "THREAD_SWITCH_EVENTS",
        &[
            ("MISSED", "bx000", ""),
            ("L3MISS", "bx001", ""),
            ("TIMER", "bx010", ""),
            ("HINT", "bx011", ""),
            ("LP", "bx100", ""),
            ("DBG", "bx101", ""),
            ("---", "bx110", "(* count is undefined *)"),
            ("ALL", "bx111", ""),
        ],
    ),
    (
        "THREAD_SWITCH_GATED",
        &[
            ("---", "bx000", "(* nothing will be counted *)"),
            ("LP", "bx001", ""),
            ("---", "bx010", "(* nothing will be counted *)"),
            ("---", "bx011", "(* nothing will be counted *)"),
            ("PIPE", "bx100", ""),
            ("FWDPRO", "bx101", ""),
            ("---", "bx110", "(* nothing will be counted *)"),
            ("ALL", "bx111", ""),
        ],
    ),
    (
        "THREAD_SWITCH_CYCLE",
        &[
            ("---", "bx000", "(* nothing will be counted *)"),
            ("CRAB", "bx001", ""),
            ("L2D", "bx010", ""),
            ("ANYSTALL", "bx011", ""),
            ("PCR", "bx100", ""),
            ("---", "bx101", "(* nothing will be counted *)"),
            ("ALL_GATED", "bx110", ""),
            ("TOTAL", "bx111", ""),
        ],
    ),
    (
        "THREAD_SWITCH_STALL",
        &[
            ("GTE_4", "b0000", ""),
            ("GTE_8", "b0001", ""),
            ("GTE_16", "b0010", ""),
            ("GTE_32", "b0011", ""),
            ("GTE_64", "b0100", ""),
            ("GTE_128", "b0101", ""),
            ("GTE_256", "b0110", ""),
            ("GTE_512", "b0111", ""),
            ("GTE_1024", "b1000", ""),
            ("GTE_2048", "b1001", ""),
            ("GTE_4096", "b1010", ""),
            // ME16: the spec says "b1010 -b1111", overlapping GTE_4096 (b1010).
            ("---", "b1011-b1111", "(* nothing will be counted *)"),
        ],
    ),
];

/// Section 4.14 Table 4-42 lists 171 monitors; section 4.15 has 169 entries (its
/// headings are at three levels or bold, ME1). SI_L3T_TRACE_CACHE and
/// TAGGED_L2D_RETURN_PORT are only in Table 4-42 and have no title or category (ME2).
#[test]
fn section_4_14_table_4_42_has_171_monitors_and_section_4_15_has_169_entries() {
    let t = table();
    assert_eq!(TABLE_4_42.len(), 171);
    assert_eq!(t.events.len(), 171);
    let untitled: Vec<_> = t.events.iter().filter(|e| attr(e, "title").is_none()).map(|e| e.name.as_ref()).collect();
    assert_eq!(untitled, ["SI_L3T_TRACE_CACHE", "TAGGED_L2D_RETURN_PORT"]);
    for name in untitled {
        let e = event(&t, name);
        assert!(attr(e, "category").is_none() && e.umasks.is_empty(), "{name}");
        assert!(e.description.ends_with("(Table 4-42 only; no entry in section 4.15)"), "{name}");
    }
    assert_eq!(attr(event(&t, "SI_L3T_TRACE_CACHE"), "max_inc"), None, "ME2: Max Inc/Cyc n/a");
}

/// Section 4.14 Table 4-42: every (name, event code) pair, and nothing else. Names
/// follow ME3-ME7, codes ME8.
#[test]
fn section_4_14_table_4_42_every_name_and_code() {
    let t = table();
    let want: BTreeSet<(String, u64)> = TABLE_4_42.iter().map(|&(_, code, name, ..)| (name.to_string(), code)).collect();
    let got: BTreeSet<(String, u64)> = t.events.iter().map(|e| (e.name.to_string(), e.code)).collect();
    assert_eq!(got, want);
    for &(printed, code, name, ..) in TABLE_4_42 {
        let by_code = t.by_code(code, "montecito").unwrap_or_else(|| panic!("Table 4-42 {printed}: code {code:#04x} missing"));
        let want = if name == "IA64_INST_RETIRED" { "IA64_TAGGED_INST_RETIRED" } else { name };
        assert_eq!(by_code.name, want, "Table 4-42 {printed} ({code:#04x})");
    }
}

/// Section 4.14 Table 4-42 (IAR, DAR, OPC, Max Inc/Cyc, Type) cross-checked with section
/// 4.15 and the per-category tables, for every event: ME4, ME9-ME12, ME17, ME26, ME27.
#[test]
fn section_4_14_table_4_42_iar_dar_opc_max_inc_and_mt_type_of_every_event() {
    let t = table();
    for &(printed, _, name, flags, max_inc, mt) in TABLE_4_42 {
        let e = event(&t, name);
        let got = format!("{}{}{}", attr(e, "iar").unwrap(), attr(e, "dar").unwrap(), attr(e, "opc").unwrap());
        assert_eq!(got, flags, "{printed}: IAR/DAR/OPC");
        let want_max = if max_inc == "n/a" { None } else { Some(max_inc) };
        assert_eq!(attr(e, "max_inc"), want_max, "{printed}: Max Inc/Cyc");
        assert_eq!(attr(e, "mt"), Some(mt), "{printed}: MT type");
    }
}

/// Section 4.2.1: the MT capture types are A(ctive), F(loating), S(elf floating) and
/// C(ausal); a Self Floating event is Floating with its .SELF unit mask, so every S
/// event has one (which supports 4.15's S for SI_WAQ_COLLISIONS and SI_WDQ_ECC_ERRORS,
/// ME17).
#[test]
fn section_4_2_1_mt_types_and_self_floating_events_have_a_self_unit_mask() {
    let t = table();
    let mut count = BTreeMap::new();
    for e in t.events.iter() {
        let mt = attr(e, "mt").unwrap_or_else(|| panic!("{}: no mt", e.name));
        assert!(["A", "F", "S", "C"].contains(&mt), "{}: mt {mt}", e.name);
        *count.entry(mt).or_insert(0) += 1;
        if mt == "S" {
            assert!(e.umasks.iter().any(|u| u.name.ends_with("SELF")), "{}: Self Floating without a SELF unit mask", e.name);
        }
    }
    assert_eq!(count, BTreeMap::from([("A", 76), ("C", 33), ("F", 43), ("S", 19)]));
}

/// Names spelled differently in section 4.15, Table 4-42 and the category tables: the
/// name we use and the other spellings kept as aliases (ME3 BRANCH_EVENT/ETB_EVENT, ME4
/// CPU_OP_CYCLES_HALTED/CYCLES_HALTED, ME5 L2I_VICTIMIZATIONS, ME6 BUS_RD_INVALID_*,
/// ME7 one-table spellings). Typos and BUS_RD_INVAL_ALL_HITM (Table 4-38's derived
/// BUS_RD_INVALID_ALL_HITM counts BIL and BRIL) are not aliases.
#[test]
fn me3_to_me7_other_spellings_of_event_names_are_aliases_and_typos_are_not() {
    let t = table();
    let got: BTreeMap<String, Vec<String>> = t
        .events
        .iter()
        .filter(|e| !e.aliases.is_empty())
        .map(|e| (e.name.to_string(), e.aliases.iter().map(|a| a.to_string()).collect()))
        .collect();
    let want: BTreeMap<String, Vec<String>> = [
        ("BRANCH_EVENT", "ETB_EVENT"),
        ("BUS_RD_INVALID_BST_HITM", "BUS_RD_INVAL_BST_HITM"),
        ("BUS_RD_INVALID_HITM", "BUS_RD_INVAL_HITM"),
        ("CPU_OP_CYCLES_HALTED", "CYCLES_HALTED"),
        ("L2D_L3ACCESS_CANCEL", "L2D_L3_ACCESS_CANCEL"),
        ("L2I_VICTIMIZATIONS", "L2I_VICTIMIZATION"),
        ("THREAD_SWITCH_STALL", "THREAD_SWITCH_STALLS"),
    ]
    .into_iter()
    .map(|(n, a)| (n.to_string(), vec![a.to_string()]))
    .collect();
    assert_eq!(got, want);
    for typo in ["L1ITLB_INSERTS_HPWW", "L2DBAD_LINES_SELECTED", "L2D_OZQ_CANCEL0", "L2D_OZQ_CANCEL1", "BUS_RD_INVAL_ALL_HITM"] {
        assert!(t.find(typo).is_none(), "{typo}");
    }
    assert_eq!(t.find("etb_event").map(|e| e.code), Some(0x11));
}

/// ME8: Tables 4-19, 4-21 and 4-42 give L2D_OZQ_FULL the codes "0xe1 0xe3"; section
/// 4.15 gives 0xe1. The event is 0xe1 and no event has code 0xe3.
#[test]
fn me8_l2d_ozq_full_0xe1_0xe3_is_code_0xe1() {
    let t = table();
    assert_eq!(event(&t, "L2D_OZQ_FULL").code, 0xe1);
    assert!(t.by_code(0xe3, "montecito").is_none());
}

/// Section 4.15 IA64_INST_RETIRED: "This is a sub event of IA64_TAGGED_INST_RETIRED":
/// the same code 0x08, and its only unit mask THIS (bxx00) is IBRP0_PMC32_33's (ME34).
#[test]
fn section_4_15_ia64_inst_retired_is_a_sub_event_of_ia64_tagged_inst_retired() {
    let t = table();
    let sub = event(&t, "IA64_INST_RETIRED");
    let parent = event(&t, "IA64_TAGGED_INST_RETIRED");
    assert_eq!(sub.subevent_of, "IA64_TAGGED_INST_RETIRED");
    assert_eq!((sub.code, parent.code), (0x08, 0x08));
    let this = sub.umask("THIS").unwrap();
    let ibrp0 = parent.umask("IBRP0_PMC32_33").unwrap();
    assert_eq!((this.value, this.ignored), (ibrp0.value, ibrp0.ignored));
    assert!(this.default && !parent.umasks.iter().any(|u| u.default));
    let subs: Vec<_> = t.events.iter().filter(|e| !e.subevent_of.is_empty()).map(|e| e.name.as_ref()).collect();
    assert_eq!(subs, ["IA64_INST_RETIRED"]);
}

/// Sections 4.3 and 4.5 (Tables 4-72, 4-76, 4-77, 4-78, 4-43, 4-80, 4-81, 4-82, 4-125):
/// the "PMC.umask [16]" tables of CPU_OP_CYCLES and FP_FLUSH_TO_ZERO use bit 16 alone
/// (ME33); FP_FLUSH_TO_ZERO and IA64_TAGGED_INST_RETIRED have no ALL or THIS, so no
/// default unit mask.
#[test]
fn sections_4_3_and_4_5_basic_and_instruction_execution_unit_masks() {
    check_group(BASIC_AND_EXECUTION);
    let t = table();
    let ftz = event(&t, "FP_FLUSH_TO_ZERO");
    assert_eq!(
        ftz.umasks.iter().map(|u| (u.name.as_ref(), u.value, u.ignored)).collect::<Vec<_>>(),
        [("FTZ_Real", 0, 0xe), ("FTZ_Poss", 1, 0xe)]
    );
    assert!(ftz.umasks.iter().all(|u| !u.default));
    let cycles = event(&t, "CPU_OP_CYCLES");
    assert!(cycles.umask("QUAL").unwrap().matches(0xf) && cycles.umask("ALL").unwrap().matches(0xe));
}

/// Section 4.4 (Tables 4-126, 4-127): SYLL_NOT_DISPERSED's unit masks are independent
/// bits ("NOTE: Any combination b0000-b1111 is valid."), so its combinations are "any"
/// with the spec's words as umask_note (ME19).
#[test]
fn section_4_4_instruction_dispersal_unit_masks() {
    check_group(DISPERSAL);
    let t = table();
    let e = event(&t, "SYLL_NOT_DISPERSED");
    assert_eq!(e.umask_combinations, Combinations::Any);
    assert_eq!(e.umask_note, "NOTE: Any combination b0000-b1111 is valid.");
    assert!(e.umask("EXPL").unwrap().matches(0b0101) && e.umask("FE").unwrap().matches(0b0101));
}

/// Section 4.6 (Tables 4-44, 4-46 ... 4-50, 4-74, 4-75, 4-79). ME16: FE_LOST_BW's and
/// IDEAL_BE_LOST_BW_DUE_TO_FE's "b1101-b1111 illegal" overlaps BUBBLE (b1101) and is
/// b1110-b1111. ME29: IBFULL is "(* meaningless for this event *)" in
/// BE_LOST_BW_DUE_TO_FE and IDEAL_BE_LOST_BW_DUE_TO_FE but has a name, so it stays a
/// unit mask with those words. ME30: BACK_END_BUBBLE.L1D_FPU_RSE has no description.
#[test]
fn section_4_6_stall_unit_masks() {
    check_group(STALL);
    let t = table();
    for name in ["FE_LOST_BW", "IDEAL_BE_LOST_BW_DUE_TO_FE"] {
        let e = event(&t, name);
        assert_eq!(e.umask("BUBBLE").unwrap().value, 0xd);
        assert!(!e.invalid_umasks.iter().any(|b| b.matches(0xd)), "{name}");
    }
    for name in ["BE_LOST_BW_DUE_TO_FE", "IDEAL_BE_LOST_BW_DUE_TO_FE"] {
        assert_eq!(event(&t, name).umask("IBFULL").unwrap().description, "(* meaningless for this event *)");
    }
    assert_eq!(event(&t, "FE_LOST_BW").umask("IBFULL").unwrap().description, "only if caused by instruction buffer full stall");
    assert_eq!(event(&t, "BACK_END_BUBBLE").umask("L1D_FPU_RSE").unwrap().description, "(no description in the spec's table)");
}

/// Section 4.7 (Tables 4-45, 4-51 ... 4-54, 4-73). ME15: Table 4-52's b1000 and b1100
/// rows read RETURN/NRETIND.ALL_UNKNOWN_PATH_CORRECT_PRED but describe "branches with
/// unknown path prediction", like ALL/IPREL.ALL_UNKNOWN_PRED: they are
/// RETURN.ALL_UNKNOWN_PRED and NRETIND.ALL_UNKNOWN_PRED. BR_PATH_PRED2's bit 17 is a
/// don't-care (b00x0).
#[test]
fn section_4_7_branch_unit_masks() {
    check_group(BRANCH);
    let t = table();
    let e = event(&t, "BR_MISPRED_DETAIL2");
    assert!(e.umask("RETURN.ALL_UNKNOWN_PATH_CORRECT_PRED").is_none());
    assert_eq!(e.umask("RETURN.ALL_UNKNOWN_PRED").unwrap().description, "Only return type branches, branches with unknown path prediction");
    assert!(event(&t, "BR_PATH_PRED2").umask("RETURN.UNKNOWNPRED_TAKEN").unwrap().matches(0b1011));
    assert!(event(&t, "BR_MISPRED_DETAIL").umasks.iter().all(|u| !u.default), "no ALL or THIS unit mask");
}

/// Sections 4.8.1 and 4.8.3 (Tables 4-85, 4-100 ... 4-104). ME28: the L2I tables'
/// "00xx None is counted" rows are invalid selections (nothing), while HIT.NONE,
/// MISS.NONE and ALL.NONE, also "None is counted", have names and stay unit masks.
#[test]
fn sections_4_8_1_and_4_8_3_instruction_cache_unit_masks() {
    check_group(INSTRUCTION_CACHE);
    let t = table();
    for name in ["L2I_READS", "L2I_UC_READS", "L2I_RECIRCULATES", "L2I_L3_REJECTS", "L2I_HIT_CONFLICTS"] {
        let e = event(&t, name);
        assert_eq!(e.umask("MISS.NONE").unwrap().description, "None is counted", "{name}");
        assert!(e.invalid_umasks.iter().all(|b| b.kind == InvalidKind::Nothing && b.note == "None is counted"), "{name}");
        assert!(e.umasks.iter().all(|u| !u.default), "{name}: ALL.ALL is not named ALL");
    }
}

/// Sections 4.8.2 and 4.8.5 (Tables 4-84, 4-105, 4-106).
#[test]
fn sections_4_8_2_and_4_8_5_l1d_and_l3_unit_masks() {
    check_group(L1D_AND_L3);
    let t = table();
    assert!(event(&t, "L1D_READ_MISSES").umask("RSE_FILL").unwrap().matches(0xf));
    assert!(event(&t, "L3_WRITES").invalid_umasks.iter().any(|b| b.value == 0 && b.ignored == 0x3));
}

/// Section 4.8.4 (Tables 4-86 ... 4-99). L2D_FILL_MESI_STATE.P is bx1xx; L2D_OPS_ISSUED's
/// LFETCH and OTHER are bx1x0 and bx1x1.
#[test]
fn section_4_8_4_l2d_unit_masks() {
    check_group(L2D);
    let t = table();
    let p = event(&t, "L2D_FILL_MESI_STATE").umask("P").unwrap();
    assert_eq!((p.value, p.ignored), (0x4, 0xb));
    let other = event(&t, "L2D_OPS_ISSUED").umask("OTHER").unwrap();
    assert_eq!((other.value, other.ignored), (0x5, 0xa));
}

/// Sections 4.9, 4.10 and 4.12 (Tables 4-71, 4-83, 4-108). ME31: CPU_CPL_CHANGES' masks
/// are one bit per privilege level plus ALL (b1111); other combinations are not listed
/// and are refused (combinations "listed").
#[test]
fn sections_4_9_4_10_and_4_12_system_tlb_and_rse_unit_masks() {
    check_group(SYSTEM_TLB_RSE);
    let t = table();
    let e = event(&t, "CPU_CPL_CHANGES");
    assert_eq!(e.umask_combinations, Combinations::Listed);
    assert!(!e.umasks.iter().any(|u| u.matches(0b0011)));
}

/// Section 4.11, bus events (Tables 4-55 ... 4-70, 4-107): initiator masks EITHER, IO,
/// SELF, ANY; no ALL, so no default.
#[test]
fn section_4_11_bus_unit_masks() {
    check_group(BUS);
    let t = table();
    for &(name, _) in BUS {
        assert!(event(&t, name).umasks.iter().all(|u| !u.default), "{name}");
    }
    let wb = event(&t, "BUS_WR_WB");
    assert_eq!(
        wb.invalid_umasks.iter().map(|b| (b.value, b.ignored, b.kind)).collect::<Vec<_>>(),
        [(0x0, 0x3, InvalidKind::Nothing), (0x9, 0x0, InvalidKind::Illegal)]
    );
}

/// Section 4.11, system interface events (Tables 4-109 ... 4-124). Table 4-120, titled
/// "Unit Masks for SI_CCQ_COLLISIONS", is SI_WAQ_COLLISIONS' table (ME14);
/// SI_IOQ_COLLISIONS has no table.
#[test]
fn section_4_11_system_interface_unit_masks() {
    check_group(SYSTEM_INTERFACE);
    let t = table();
    assert_eq!(event(&t, "SI_WAQ_COLLISIONS").umasks.len(), 2);
    assert!(event(&t, "SI_IOQ_COLLISIONS").umasks.is_empty());
    let all_self = event(&t, "SI_WDQ_ECC_ERRORS").umask("ALL.SELF").unwrap();
    assert_eq!((all_self.value, all_self.ignored), (0x9, 0x6));
}

/// Section 4.13 (Tables 4-128 ... 4-131). ME16: THREAD_SWITCH_STALL's "b1010 -b1111
/// nothing" overlaps GTE_4096 (b1010) and is b1011-b1111. Bit 19 is a don't-care in
/// the other three (bx000).
#[test]
fn section_4_13_thread_switch_unit_masks() {
    check_group(THREAD_SWITCH);
    let t = table();
    let e = event(&t, "THREAD_SWITCH_STALL");
    assert_eq!(e.umask("GTE_4096").unwrap().value, 0xa);
    assert_eq!(e.invalid_umasks.iter().map(|b| b.value).collect::<Vec<_>>(), [0xb, 0xc, 0xd, 0xe, 0xf]);
    assert!(event(&t, "THREAD_SWITCH_EVENTS").umask("ALL").unwrap().matches(0xf));
}

/// Section 4.15: every "Unit Masks for ..." table (89 events, 527 named rows and 66
/// "---" rows, which expand to 138 invalid selections) is transcribed in one of the
/// groups above, and no other event has unit masks.
#[test]
fn section_4_15_every_unit_mask_table_is_transcribed() {
    let t = table();
    let groups = [
        BASIC_AND_EXECUTION,
        DISPERSAL,
        STALL,
        BRANCH,
        INSTRUCTION_CACHE,
        L1D_AND_L3,
        L2D,
        SYSTEM_TLB_RSE,
        BUS,
        SYSTEM_INTERFACE,
        THREAD_SWITCH,
    ];
    let transcribed: BTreeSet<&str> = groups.iter().flat_map(|g| g.iter().map(|&(n, _)| n)).collect();
    assert_eq!(transcribed.len(), 89);
    let with_masks: BTreeSet<&str> =
        t.events.iter().filter(|e| !e.umasks.is_empty() || !e.invalid_umasks.is_empty()).map(|e| e.name.as_ref()).collect();
    assert_eq!(with_masks, transcribed);
    let rows: Vec<Row> = groups.iter().flat_map(|g| g.iter().flat_map(|&(_, r)| r.iter().copied())).collect();
    assert_eq!(rows.iter().filter(|r| r.0 != "---").count(), 527);
    assert_eq!(rows.iter().filter(|r| r.0 == "---").count(), 66);
    assert_eq!(t.events.iter().map(|e| e.umasks.len()).sum::<usize>(), 527);
    assert_eq!(t.events.iter().map(|e| e.invalid_umasks.len()).sum::<usize>(), 138);
}

/// Section 4.15 "---" rows: "(* nothing will be counted *)" (and the L2I tables' "None
/// is counted"), "(* illegal selection *)" and "(* count is undefined *)", per event,
/// with ranges expanded to one entry per value. No invalid selection overlaps a unit
/// mask.
#[test]
fn section_4_15_invalid_selections_nothing_illegal_undefined() {
    let t = table();
    let mut by_kind: BTreeMap<String, (usize, BTreeSet<&str>)> = BTreeMap::new();
    for e in t.events.iter() {
        for b in e.invalid_umasks.iter() {
            let k = by_kind.entry(format!("{:?}", b.kind)).or_default();
            k.0 += 1;
            k.1.insert(e.name.as_ref());
            assert!(!e.umasks.iter().any(|u| u.matches(b.value) || b.matches(u.value)), "{}: {:#x} overlaps", e.name, b.value);
        }
    }
    let illegal = [
        "BE_LOST_BW_DUE_TO_FE",
        "BUS_SNOOP_STALL_CYCLES",
        "BUS_WR_WB",
        "FE_BUBBLE",
        "FE_LOST_BW",
        "IDEAL_BE_LOST_BW_DUE_TO_FE",
        "MEM_READ_CURRENT",
    ];
    let undefined = ["BE_L1D_FPU_BUBBLE", "L2D_FILLB_FULL", "L2D_OZDB_FULL", "L2D_OZQ_FULL", "L2D_VICTIMB_FULL", "THREAD_SWITCH_EVENTS"];
    assert_eq!(by_kind["Illegal"], (19, illegal.into_iter().collect()));
    assert_eq!(by_kind["Undefined"], (62, undefined.into_iter().collect()));
    assert_eq!(by_kind["Nothing"].0, 57);
    assert_eq!(by_kind["Nothing"].1.len(), 29);
    // b0001-b1111 "(* count is undefined *)": fifteen entries.
    for name in ["L2D_FILLB_FULL", "L2D_OZDB_FULL", "L2D_OZQ_FULL", "L2D_VICTIMB_FULL"] {
        let values: Vec<u64> = event(&t, name).invalid_umasks.iter().map(|b| b.value).collect();
        assert_eq!(values, (1..=15).collect::<Vec<_>>(), "{name}");
    }
}

/// Section 4.15: the default unit mask is the one named ALL, else THIS, else none; every
/// event with unit masks has combinations "listed" except SYLL_NOT_DISPERSED (ME19).
#[test]
fn section_4_15_default_unit_mask_and_combinations() {
    let t = table();
    let mut defaults = 0;
    for e in t.events.iter().filter(|e| !e.umasks.is_empty()) {
        let want = ["ALL", "THIS"].into_iter().find(|d| e.umask(d).is_some());
        let got: Vec<&str> = e.umasks.iter().filter(|u| u.default).map(|u| u.name.as_ref()).collect();
        assert_eq!(got, want.into_iter().collect::<Vec<_>>(), "{}", e.name);
        defaults += got.len();
        let want = if e.name == "SYLL_NOT_DISPERSED" { Combinations::Any } else { Combinations::Listed };
        assert_eq!(e.umask_combinations, want, "{}", e.name);
    }
    assert_eq!(defaults, 31);
    assert!(t.events.iter().filter(|e| e.umasks.is_empty()).all(|e| e.umask_combinations == Combinations::Any));
}

/// Section 4.8.2 and its set tables 4-11 ... 4-16 (4.8.2.1 ... 4.8.2.6): the L1D sets 0,
/// 1, 2, 3, 4 and 6 (set 5 is reserved). DATA_EAR_EVENTS is in Table 4-10 but in no set
/// (ME35); LOADS_RETIRED_INTG is in set 6 although its 4.15 category said set 3 (ME13).
#[test]
fn section_4_8_2_l1d_set_membership() {
    let t = table();
    let want: BTreeMap<String, String> = [
        ("L1DTLB_TRANSFER", "0"),
        ("L2DTLB_MISSES", "0"),
        ("L1D_READS_SET0", "0"),
        ("DATA_REFERENCES_SET0", "0"),
        ("L1D_READS_SET1", "1"),
        ("DATA_REFERENCES_SET1", "1"),
        ("L1D_READ_MISSES", "1"),
        ("BE_L1D_FPU_BUBBLE", "2"),
        ("LOADS_RETIRED", "3"),
        ("MISALIGNED_LOADS_RETIRED", "3"),
        ("UC_LOADS_RETIRED", "3"),
        ("MISALIGNED_STORES_RETIRED", "4"),
        ("STORES_RETIRED", "4"),
        ("UC_STORES_RETIRED", "4"),
        ("LOADS_RETIRED_INTG", "6"),
        ("SPEC_LOADS_NATTED", "6"),
    ]
    .into_iter()
    .map(|(n, s)| (n.to_string(), s.to_string()))
    .collect();
    assert_eq!(with_attr(&t, "l1d_set"), want);
    assert_eq!(attr(event(&t, "DATA_EAR_EVENTS"), "l1d_set"), None);
    // The 4.15 category names the set where it names one.
    for e in t.events.iter() {
        if let Some(cat) = attr(e, "category").and_then(|c| c.split("L1D Cache Set ").nth(1)) {
            assert_eq!(attr(e, "l1d_set"), Some(cat), "{}", e.name);
        }
    }
}

/// Section 4.8.4 and its set tables 4-21 ... 4-29 (4.8.4.1 ... 4.8.4.9): "Most L2D events
/// have been divided into 8 sets", but the tables number nine, 0-8 (ME18). L2D_MISSES,
/// L2D_INSERT_MISSES and L2D_INSERT_HITS are "Not Set Restricted" (4.8.4.10, Table 4-30).
/// TAGGED_L2D_RETURN_PORT (0xee, Table 4-42 only) is inferred to be in set 6 with 0xef
/// (ME2).
#[test]
fn section_4_8_4_l2d_set_membership() {
    let t = table();
    let want: BTreeMap<String, String> = [
        ("L2D_OZQ_FULL", "0"),
        ("L2D_OZQ_CANCELS0", "0"),
        ("L2D_OZQ_CANCELS1", "0"),
        ("L2D_BYPASS", "1"),
        ("L2D_OZQ_RELEASE", "1"),
        ("L2D_REFERENCES", "2"),
        ("L2D_L3ACCESS_CANCEL", "3"),
        ("L2D_OZDB_FULL", "3"),
        ("L2D_FORCE_RECIRC", "4"),
        ("L2D_ISSUED_RECIRC_OZQ_ACC", "4"),
        ("L2D_BAD_LINES_SELECTED", "5"),
        ("L2D_STORE_HIT_SHARED", "5"),
        ("TAGGED_L2D_RETURN_PORT", "6"),
        ("L2D_OZQ_ACQUIRE", "6"),
        ("L2D_OPS_ISSUED", "7"),
        ("L2D_FILLB_FULL", "7"),
        ("L2D_FILL_MESI_STATE", "8"),
        ("L2D_VICTIMB_FULL", "8"),
    ]
    .into_iter()
    .map(|(n, s)| (n.to_string(), s.to_string()))
    .collect();
    assert_eq!(with_attr(&t, "l2d_set"), want);
    for name in ["L2D_MISSES", "L2D_INSERT_MISSES", "L2D_INSERT_HITS"] {
        assert_eq!(attr(event(&t, name), "l2d_set"), None, "{name}");
    }
    for e in t.events.iter() {
        if let Some(cat) = attr(e, "category").and_then(|c| c.split("L2 Data Cache Set ").nth(1)) {
            assert_eq!(attr(e, "l2d_set"), Some(cat), "{}", e.name);
        }
    }
}

/// Section 4.8.5 Table 4-31 "MESI filtering capability" and the 4.15 notes "This event
/// may be qualified by MESI": the four L3 events, and no others.
#[test]
fn section_4_8_5_table_4_31_mesi_capable_events() {
    let t = table();
    let got: Vec<&str> = t.events.iter().filter(|e| e.modifiers.iter().any(|m| m == "mesi")).map(|e| e.name.as_ref()).collect();
    assert_eq!(got, ["L3_INSERTS", "L3_READS", "L3_WRITES", "L3_LINES_REPLACED"]);
    assert!(t.events.iter().all(|e| e.modifiers.iter().all(|m| m == "mesi")));
}

/// Section 4.8.4 Table 4-19 ".all capable" (with the 4.8.4.x notes and the 4.15 notes),
/// plus CPU_OP_CYCLES ("CPU_OP_CYCLES{all} is supported", ME23). The events whose ".all
/// field is ignored" (ER_*) have no all_capable (ME23). L2D_BYPASS and L2D_FORCE_RECIRC
/// are "Y/N": Y, with their unit masks' own notes as overrides (ME22, ME26).
#[test]
fn section_4_8_4_table_4_19_all_capable() {
    let t = table();
    let want: BTreeMap<String, String> = [
        ("CPU_OP_CYCLES", "Y"),
        ("L2D_OZQ_CANCELS0", "Y"),
        ("L2D_OZQ_FULL", "N"),
        ("L2D_OZQ_CANCELS1", "Y"),
        ("L2D_BYPASS", "Y"),
        ("L2D_OZQ_RELEASE", "N"),
        ("L2D_REFERENCES", "Y"),
        ("L2D_L3ACCESS_CANCEL", "N"),
        ("L2D_OZDB_FULL", "Y"),
        ("L2D_FORCE_RECIRC", "Y"),
        ("L2D_ISSUED_RECIRC_OZQ_ACC", "Y"),
        ("L2D_BAD_LINES_SELECTED", "Y"),
        ("L2D_STORE_HIT_SHARED", "Y"),
        ("L2D_OZQ_ACQUIRE", "Y"),
        ("L2D_OPS_ISSUED", "N"),
        ("L2D_FILLB_FULL", "N"),
        ("L2D_FILL_MESI_STATE", "Y"),
        ("L2D_VICTIMB_FULL", "Y"),
        ("L2D_MISSES", "Y"),
        ("L2D_INSERT_HITS", "Y"),
        ("L2D_INSERT_MISSES", "Y"),
    ]
    .into_iter()
    .map(|(n, s)| (n.to_string(), s.to_string()))
    .collect();
    assert_eq!(with_attr(&t, "all_capable"), want);
    // Per unit mask (Tables 4-87 and 4-90: "NOTE: Not .all capable." / "Is .all capable.").
    let per_umask = |name: &str| -> Vec<(String, String)> {
        let e = event(&t, name);
        e.umasks.iter().map(|u| (u.name.to_string(), e.attr_with("all_capable", Some(u)).unwrap().to_string())).collect()
    };
    let s = |v: &[(&str, &str)]| v.iter().map(|&(a, b)| (a.to_string(), b.to_string())).collect::<Vec<_>>();
    assert_eq!(per_umask("L2D_BYPASS"), s(&[("L2_DATA1", "N"), ("L2_DATA2", "N"), ("L3_DATA1", "Y")]));
    assert_eq!(
        per_umask("L2D_FORCE_RECIRC"),
        s(&[
            ("RECIRC", "Y"),
            ("LIMBO", "Y"),
            ("TAG_NOTOK", "N"),
            ("TRAN_PREF", "N"),
            ("SNP_OR_L3", "N"),
            ("TAG_OK", "N"),
            ("FILL_HIT", "Y"),
            ("FRC_RECIRC", "Y"),
            ("SAME_INDEX", "Y"),
            ("OZQ_MISS", "Y"),
            ("L1W", "Y"),
            ("SECONDARY_READ", "Y"),
            ("SECONDARY_WRITE", "Y"),
            ("SECONDARY_ALL", "Y"),
        ])
    );
    for e in t.events.iter().filter(|e| e.name != "L2D_BYPASS" && e.name != "L2D_FORCE_RECIRC") {
        assert!(e.umasks.iter().all(|u| u.attrs.iter().all(|a| a.key != "all_capable")), "{}", e.name);
    }
    for name in ["ER_BKSNP_ME_ACCEPTED", "ER_BRQ_LIVE_REQ_HI", "ER_REJECT_ALL_L1_REQ", "ER_SNOOPQ_REQ_LO"] {
        assert_eq!(attr(event(&t, name), "all_capable"), None, "{name}");
    }
}

/// Section 4.8.4: each L2D count is ActiveTrue, ActiveApprox or TrueThrd, from the 4.15
/// notes and the set tables. ME20: L2D_BYPASS ("Active thread is the true thread",
/// Table 4-22 "TrueThread") is ActiveTrue; L2D_OZQ_ACQUIRE (4.15 "active thread as an
/// approximation", Table 4-27 "TrueThrd") is ActiveApprox. ME21: L2D_L3ACCESS_CANCEL is
/// TrueThrd, its umasks bx100-bx111 ActiveApprox. ME22: L2D_FORCE_RECIRC is ActiveTrue,
/// TRAN_PREF and SNP_OR_L3 ActiveApprox.
#[test]
fn section_4_8_4_l2d_thread_attribution() {
    let t = table();
    let want: BTreeMap<String, String> = [
        ("L2D_OZQ_CANCELS0", "TrueThrd"),
        ("L2D_OZQ_FULL", "ActiveApprox"),
        ("L2D_OZQ_CANCELS1", "TrueThrd"),
        ("L2D_BYPASS", "ActiveTrue"),
        ("L2D_OZQ_RELEASE", "ActiveApprox"),
        ("L2D_REFERENCES", "ActiveTrue"),
        ("L2D_L3ACCESS_CANCEL", "TrueThrd"),
        ("L2D_OZDB_FULL", "ActiveApprox"),
        ("L2D_FORCE_RECIRC", "ActiveTrue"),
        ("L2D_ISSUED_RECIRC_OZQ_ACC", "TrueThrd"),
        ("L2D_BAD_LINES_SELECTED", "ActiveApprox"),
        ("L2D_STORE_HIT_SHARED", "ActiveApprox"),
        ("L2D_OZQ_ACQUIRE", "ActiveApprox"),
        ("L2D_OPS_ISSUED", "TrueThrd"),
        ("L2D_FILLB_FULL", "ActiveApprox"),
        ("L2D_FILL_MESI_STATE", "TrueThrd"),
        ("L2D_VICTIMB_FULL", "ActiveApprox"),
        ("L2D_MISSES", "TrueThrd"),
        ("L2D_INSERT_MISSES", "ActiveTrue"),
        ("L2D_INSERT_HITS", "ActiveTrue"),
    ]
    .into_iter()
    .map(|(n, s)| (n.to_string(), s.to_string()))
    .collect();
    assert_eq!(with_attr(&t, "thread"), want);
    let mut overrides = Vec::new();
    for e in t.events.iter() {
        for u in e.umasks.iter() {
            if let Some(a) = u.attrs.iter().find(|a| a.key == "thread") {
                overrides.push(format!("{}.{}={}", e.name, u.name, a.value));
            }
        }
    }
    assert_eq!(
        overrides,
        [
            "L2D_L3ACCESS_CANCEL.P2_COV_SNP_TEM=ActiveApprox",
            "L2D_L3ACCESS_CANCEL.P2_COV_SNP_VIC=ActiveApprox",
            "L2D_L3ACCESS_CANCEL.P2_COV_SNP_FILL_NOSNP=ActiveApprox",
            "L2D_L3ACCESS_CANCEL.TAIL_TRANS_DIS=ActiveApprox",
            "L2D_FORCE_RECIRC.TRAN_PREF=ActiveApprox",
            "L2D_FORCE_RECIRC.SNP_OR_L3=ActiveApprox",
        ]
    );
}

/// Section 4.15 L2D_OZQ_CANCELS0/1: "Only 1 of the 2 L2D_OZQ_CANCEL events may be
/// measured at any given time" -- each excludes the other (ME32); no other event
/// excludes anything.
#[test]
fn section_4_15_l2d_ozq_cancels0_and_cancels1_exclude_each_other() {
    let t = table();
    let want: BTreeMap<String, String> = [("L2D_OZQ_CANCELS0", "L2D_OZQ_CANCELS1"), ("L2D_OZQ_CANCELS1", "L2D_OZQ_CANCELS0")]
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .into();
    assert_eq!(with_attr(&t, "excludes"), want);
}

/// Section 4.15 Title and Category of every entry, in the spec's words; two garbled
/// categories mended (ME13: LOADS_RETIRED_INTG "…/L1D Cache Set 3" is set 6,
/// SPEC_LOADS_NATTED "Sphdeculation event").
#[test]
fn section_4_15_titles_and_categories() {
    let t = table();
    let pinned = [
        ("ALAT_CAPACITY_MISS", "ALAT Entry Replaced", "Instruction Execution"),
        ("BE_L1D_FPU_BUBBLE", "Full Pipe Bubbles in Main Pipe due to FP or L1D Cache", "Stall Events/L1D Cache Set 2"),
        ("BUS_MEM_READ", "Full Cache Line D/I Memory RD, RD Invalidate, and BRIL", "Front-Side Bus"),
        ("CPU_OP_CYCLES_HALTED", "CPU Operating Cycles Halted", "System Event"),
        ("INST_CHKA_LDC_ALAT", "Retired chk.a and ld.c Instructions", "Instruction Execution"),
        ("L2D_FILL_MESI_STATE", "L2D Cache Fills with MESI state", "L2 Data Cache Set 8"),
        ("L2D_MISSES", "L2D Misses", "L2 Data Cache"),
        ("L2I_SNOOP_HITS", "L2I snoop hits", "L2 Instruction Cache and Prefetch"),
        ("LOADS_RETIRED_INTG", "Integer loads retired", "Instruction Execution/L1D Cache Set 6"),
        ("SPEC_LOADS_NATTED", "Number of speculative inter loads that are NaT'd", "Speculation event"),
        ("THREAD_SWITCH_STALL", "Thread Switch Stall", "Thread Switch Events"),
    ];
    for (name, title, category) in pinned {
        let e = event(&t, name);
        assert_eq!((attr(e, "title"), attr(e, "category")), (Some(title), Some(category)), "{name}");
    }
    let categories: BTreeSet<&str> = t.events.iter().filter_map(|e| attr(e, "category")).collect();
    assert_eq!(categories.len(), 34, "{categories:?}");
}

/// Descriptions, titles and unit-mask descriptions are the spec's words without the
/// conversion's markdown and HTML; conversion artifacts are mended (ME24).
#[test]
fn descriptions_are_the_spec_words_without_markdown() {
    let t = table();
    let mut texts: Vec<(&str, &str)> = Vec::new();
    for e in t.events.iter() {
        texts.push((&e.name, &e.description));
        texts.extend(e.attrs.iter().map(|a| (e.name.as_ref(), a.value.as_ref())));
        texts.extend(e.umasks.iter().map(|u| (e.name.as_ref(), u.description.as_ref())));
        assert!(!e.description.trim().is_empty(), "{}", e.name);
    }
    for (name, text) in texts {
        for bad in ["\\_", "**", "`", "<b>", "<sup>", "](#)", "ldc . c", "chk . a", "BAhalted", "lfet ch", "  "] {
            assert!(!text.contains(bad), "{name}: {bad:?} in {text:?}");
        }
    }
    assert_eq!(event(&t, "CPU_OP_CYCLES_HALTED").description, "Counts the number of core clock cycles the thread is halted.");
    assert!(event(&t, "INST_FAILED_CHKA_LDC_ALAT").description.contains("advanced check load (chk.a) and check load (ld.c)"));
    assert_eq!(event(&t, "L2D_FILLB_FULL").umask("THIS").unwrap().description, "L2D Fill buffer is full. NOTE: Not .all capable.");
}

/// The table passes the core's validation with the Montecito selector widths: PMC.es
/// is 8 bits (15:8), PMC.umask 4 bits (19:16); the only modifier an event adds is mesi.
#[test]
fn table_validates_with_montecito_field_widths() {
    let t = table();
    let rules =
        TableRules { family: "montecito", models: &["montecito"], counters: &[], modifiers: &["mesi"], max_code: 0xff, max_umask: 0xf };
    t.validate(&rules, "data/montecito/events.toml").unwrap_or_else(|e| panic!("{e}"));
    assert!(t.events.iter().all(|e| e.counters.is_empty() && e.umask_ignored == 0));
}

/// pfmon's and libpfm3's capture events (issue 13): subevents of L1I_EAR_EVENTS (0x43)
/// and DATA_EAR_EVENTS (0xc8), each naming the capture register it programs; and
/// BRANCH_EVENT (ETB_EVENT) programming PMC39 to capture every branch (Table 3-26).
#[test]
fn capture_subevents_program_their_capture_register() {
    let t = full_table();
    let subs: BTreeMap<String, (String, u64, String)> = t
        .events
        .iter()
        .filter(|e| is_capture_subevent(e))
        .map(|e| (e.name.to_string(), (e.subevent_of.to_string(), e.code, attr(e, "capture").unwrap().to_string())))
        .collect();
    assert_eq!(subs.len(), 11 + 7 + 1 + 10 + 7);
    // Table 3-21: thresholds 4 << umask.
    for (n, lat) in [4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096].into_iter().enumerate() {
        let (parent, code, capture) = &subs[&format!("DATA_EAR_CACHE_LAT{lat}")];
        assert_eq!((parent.as_str(), *code, capture.as_str()), ("DATA_EAR_EVENTS", 0xc8, format!("PMC40 mode=00 umask={n:04b}").as_str()));
    }
    // Table 3-23 (umask 19:16, bit 16 unused) and Table 3-18 (umask 7:5).
    for (kind, dtlb, itlb) in [("ALL", "111x", "111"), ("FAULT", "1xxx", "1xx"), ("VHPT_OR_FAULT", "11xx", "11x")] {
        assert_eq!(subs[&format!("DATA_EAR_TLB_{kind}")].2, format!("PMC40 mode=01 umask={dtlb}"));
        let itlb_name = format!("L1I_EAR_TLB_{}", kind.replace("L2DTLB", "L2TLB"));
        assert_eq!(subs[&itlb_name].2, format!("PMC37 ct=00 umask={itlb}"));
    }
    assert_eq!(subs["DATA_EAR_TLB_L2DTLB"].2, "PMC40 mode=01 umask=xx1x");
    assert_eq!(subs["L1I_EAR_TLB_L2TLB"].2, "PMC37 ct=00 umask=xx1");
    assert_eq!(subs["DATA_EAR_ALAT"].2, "PMC40 mode=1x");
    // Table 3-16.
    for (name, bits) in [("LAT0", "01xxxxxx"), ("LAT4", "11111111"), ("LAT128", "11110000"), ("LAT4096", "10000000"), ("RAB", "00000000")] {
        let (parent, code, capture) = &subs[&format!("L1I_EAR_CACHE_{name}")];
        assert_eq!((parent.as_str(), *code, capture.as_str()), ("L1I_EAR_EVENTS", 0x43, format!("PMC37 ct=1x umask={bits}").as_str()));
    }
    assert_eq!(attr(event(&t, "BRANCH_EVENT"), "capture"), Some("PMC39 tm=11 ptm=11 ppm=11 brt=00"));
}
