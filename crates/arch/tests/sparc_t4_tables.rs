//! SPARC T4 event tables pinned to the SPARC T4 Supplement (Draft D0.4), chapter 10:
//! every row of §10.2 TABLE 10-2 "sl Field Settings" (pages 1-7 of 8; page 8 is missing
//! and sl 28 comes from the Solaris T4 PCBE) and every select code of §10.5 TABLE 10-7.
//! The departures from the text are docs/ERRATA.md's T-ids; tests that pin one say so.

use std::collections::HashSet;

use pmukit_core::table::{Combinations, EventDef, EventTable, TableRules, UmaskDef};

const T4_TOML: &str = include_str!("../../../data/sparc-t4/events.toml");
const DRAM_TOML: &str = include_str!("../../../data/sparc-t4-dram/events.toml");

fn t4() -> EventTable {
    EventTable::from_toml(T4_TOML, "data/sparc-t4/events.toml").unwrap_or_else(|e| panic!("{e}"))
}

fn dram() -> EventTable {
    EventTable::from_toml(DRAM_TOML, "data/sparc-t4-dram/events.toml").unwrap_or_else(|e| panic!("{e}"))
}

fn group(t: &EventTable, sl: u64) -> &EventDef {
    t.by_code(sl, "sparc-t4").unwrap_or_else(|| panic!("T4 §10.2 Table 10-2: sl {sl} missing"))
}

fn umask_by_value(e: &EventDef, mask: u64) -> Option<&UmaskDef> {
    e.umasks.iter().find(|u| u.value == mask)
}

/// The event groups: (sl, our name, page k of TABLE 10-2's 8 pages).
const GROUPS: &[(u64, &str, u32)] = &[
    (1, "SEL", 1),
    (2, "PICK", 1),
    (3, "INSTR", 1),
    (4, "INSTR_SPECIAL", 2),
    (5, "IC_MISS_PRECISE", 2),
    (6, "ITLB_FILL", 2),
    (7, "IC_MTAG", 3),
    (8, "FETCH", 3),
    (9, "TAG_WAIT", 3),
    (10, "HWTW", 4),
    (11, "IC_MISS_ASYNC", 4),
    (16, "DC_MISS_PRECISE", 4),
    (17, "DTLB_FILL", 5),
    (18, "PREFETCH_DROP", 5),
    (19, "RAW_HIT", 5),
    (20, "L1_INVALIDATION", 6),
    (21, "DATA_PREFETCH", 6),
    (22, "STORE_HIT", 6),
    (23, "DC_MISS_ASYNC", 7),
    (24, "L2_EVENT", 7),
    (25, "BR_MISPREDICT", 7),
    (26, "CYCLES", 7),
    (28, "COMMIT", 8),
];

/// Every (sl, mask) row of TABLE 10-2 with its unit-mask name, page by page. Rows that
/// list several values ("03₁₆, 05₁₆, 06₁₆") are one unit mask per value; sl 1's 06 and
/// 18 are the two useful multi-bit settings its "Any other value" row names.
const ROWS: &[(u64, u64, &str)] = &[
    // T4 §10.2 Table 10-2 (1 of 8)
    (1, 0x01, "PIPE_DRAIN_CYCLES"),
    (1, 0x02, "SEL_0_WAIT"),
    (1, 0x04, "SEL_0_READY"),
    (1, 0x08, "SEL_1"),
    (1, 0x10, "SEL_2"),
    (1, 0x06, "SEL_0"),
    (1, 0x18, "SEL_1_OR_2"),
    (2, 0x01, "PICK_0"),
    (2, 0x02, "PICK_1"),
    (2, 0x04, "PICK_2"),
    (2, 0x08, "PICK_3"),
    (2, 0x0E, "ANY"),
    (3, 0x01, "BRANCHES"),
    (3, 0x02, "FGU_CRYPTO"),
    (3, 0x04, "LOADS"),
    (3, 0x08, "STORES"),
    (3, 0x10, "SPR_RING_OPS"),
    (3, 0x20, "OTHER"),
    (3, 0x3F, "ALL"),
    // T4 §10.2 Table 10-2 (2 of 8)
    (4, 0x01, "BRANCHES"),
    (4, 0x02, "TAKEN_BRANCHES"),
    (4, 0x04, "SW_COUNT"),
    (4, 0x08, "ATOMICS"),
    (4, 0x10, "SW_PREFETCH"),
    (4, 0x20, "BLOCK_LD_ST"),
    (5, 0x01, "L2_L3_HIT"),
    (5, 0x02, "LOCAL_MEM_HIT"),
    (5, 0x04, "REMOTE_HIT"),
    (5, 0x03, "L2_L3_OR_LOCAL_MEM_HIT"),
    (5, 0x05, "L2_L3_OR_REMOTE_HIT"),
    (5, 0x06, "LOCAL_MEM_OR_REMOTE_HIT"),
    (5, 0x07, "ANY"),
    (5, 0x08, "BTC_MISS"),
    (5, 0x10, "ITLB_MISS"),
    (6, 0x01, "PAGE_8KB"),
    (6, 0x02, "PAGE_64KB"),
    (6, 0x04, "PAGE_4MB"),
    (6, 0x08, "PAGE_256MB"),
    (6, 0x10, "PAGE_2GB"),
    (6, 0x20, "TRAP"),
    (6, 0x3F, "ALL"),
    // T4 §10.2 Table 10-2 (3 of 8)
    (7, 0x01, "MTAG_MISS"),
    (7, 0x02, "MTAG_MISS_PTAG_HIT"),
    (7, 0x04, "MTAG_HIT_PTAG_MISS"),
    (7, 0x08, "WAY_MISMATCH"),
    (7, 0x05, "MTAG_OR_PTAG_MISS"),
    (7, 0x06, "MTAG_PTAG_DISAGREE"),
    (7, 0x09, "MTAG_MISS_OR_WAY_MISMATCH"),
    (7, 0x0A, "MTAG_MISS_PTAG_HIT_OR_WAY_MISMATCH"),
    (7, 0x0C, "MTAG_HIT_PTAG_MISS_OR_WAY_MISMATCH"),
    (7, 0x0D, "MTAG_OR_PTAG_MISS_OR_WAY_MISMATCH"),
    (7, 0x0E, "MTAG_PTAG_DISAGREE_OR_WAY_MISMATCH"),
    (8, 0x01, "FETCH_0"),
    (8, 0x02, "FETCH_0_ALL"),
    (8, 0x04, "IBUF_FULL"),
    (8, 0x08, "BTC_TARGET_INCORRECT"),
    (9, 0x01, "PQ"),
    (9, 0x02, "ROB"),
    (9, 0x04, "LB"),
    (9, 0x08, "SB"),
    (9, 0x06, "ROB_LB"),
    (9, 0x0A, "ROB_SB"),
    (9, 0x0C, "LB_SB"),
    (9, 0x0E, "ROB_LB_SB"),
    (9, 0x10, "DTLB_MISS"),
    // T4 §10.2 Table 10-2 (4 of 8)
    (10, 0x01, "ITLB_L2_HIT"),
    (10, 0x02, "ITLB_L3_HIT"),
    (10, 0x04, "ITLB_L3_MISS"),
    (10, 0x07, "ITLB_ALL"),
    (10, 0x08, "DTLB_L2_HIT"),
    (10, 0x10, "DTLB_L3_HIT"),
    (10, 0x20, "DTLB_L3_MISS"),
    (10, 0x38, "DTLB_ALL"),
    (11, 0x01, "L2_L3_HIT"),
    (11, 0x02, "LOCAL_MEM_OR_REMOTE_HIT"),
    (11, 0x03, "ANY"),
    (16, 0x01, "L2_L3_HIT"),
    (16, 0x02, "LOCAL_MEM_HIT"),
    (16, 0x04, "REMOTE_HIT"),
    (16, 0x07, "ANY"),
    // T4 §10.2 Table 10-2 (5 of 8)
    (17, 0x01, "PAGE_8KB"),
    (17, 0x02, "PAGE_64KB"),
    (17, 0x04, "PAGE_4MB"),
    (17, 0x08, "PAGE_256MB"),
    (17, 0x10, "PAGE_2GB"),
    (17, 0x20, "TRAP"),
    (17, 0x3F, "ALL"),
    (18, 0x01, "HW_DC_HIT"),
    (18, 0x02, "SW_DC_HIT"),
    (18, 0x04, "SW_BUFFER_FULL"),
    (18, 0x06, "SW_ALL"),
    (19, 0x01, "FULL_ST_BUF"),
    (19, 0x02, "PARTIAL_ST_BUF"),
    (19, 0x03, "ST_BUF"),
    (19, 0x04, "FULL_ST_Q"),
    (19, 0x08, "PARTIAL_ST_Q"),
    (19, 0x0C, "ST_Q"),
    // T4 §10.2 Table 10-2 (6 of 8)
    (20, 0x01, "IC_EVICT"),
    (20, 0x02, "IC_SNOOP"),
    (20, 0x03, "IC_ALL"),
    (20, 0x04, "DC_EVICT"),
    (20, 0x08, "DC_SNOOP"),
    (20, 0x0C, "DC_ALL"),
    (20, 0x0A, "SNOOP"),
    (20, 0x0F, "ALL"),
    (20, 0x10, "ST_Q_TAG_WAIT"),
    (21, 0x01, "L2_HIT"),
    (21, 0x02, "L2_DROP"),
    (21, 0x04, "L3_HIT"),
    (21, 0x08, "LOCAL_MEM_HIT"),
    (21, 0x10, "REMOTE_MEM_HIT"),
    (21, 0x20, "L3_DROP"),
    (22, 0x01, "L2_HIT"),
    (22, 0x02, "L3_HIT"),
    (22, 0x04, "L2_LOCAL_C2C"),
    (22, 0x08, "L2_REMOTE_C2C"),
    (22, 0x10, "LOCAL_MEM"),
    (22, 0x20, "REMOTE_MEM"),
    // T4 §10.2 Table 10-2 (7 of 8)
    (23, 0x01, "L2_L3_HIT"),
    (23, 0x02, "LOCAL_MEM_HIT"),
    (23, 0x04, "REMOTE_HIT"),
    (23, 0x07, "ANY"),
    (24, 0x01, "CLEAN_EVICT"),
    (24, 0x02, "DIRTY_EVICT"),
    (24, 0x04, "FILL_BUF_FULL"),
    (24, 0x08, "WB_BUF_FULL"),
    (24, 0x10, "MISS_BUF_FULL"),
    (24, 0x20, "PIPE_STALL"),
    (25, 0x01, "DIRECTION"),
    (25, 0x02, "TARGET_FAR_TABLE"),
    (25, 0x04, "TARGET_INDIRECT_TABLE"),
    (25, 0x08, "TARGET_RETURN_STACK"),
    (25, 0x0E, "TARGET"),
    (25, 0x0F, "ALL"),
    // T4 §10.2 Table 10-2 (8 of 8) is missing from the spec text: sl 28 from the Solaris
    // T4 PCBE (ERRATA T1).
    (28, 0x01, "COMMIT_0"),
    (28, 0x02, "COMMIT_0_ALL"),
    (28, 0x04, "COMMIT_1"),
    (28, 0x08, "COMMIT_2"),
    (28, 0x0C, "COMMIT_1_OR_2"),
];

/// The Solaris T4 PCBE names and encodings (emask = sl << 6 | mask), as Solaris has
/// them, except Atomics (see `solaris_atomics_follows_the_spec_mask_08_not_0x118`).
const SOLARIS: &[(&str, u64)] = &[
    ("Sel_pipe_drain_cycles", 0x041),
    ("Sel_0_wait", 0x042),
    ("Sel_0_ready", 0x044),
    ("Sel_1", 0x048),
    ("Sel_2", 0x050),
    ("Pick_0", 0x081),
    ("Pick_1", 0x082),
    ("Pick_2", 0x084),
    ("Pick_3", 0x088),
    ("Pick_any", 0x08e),
    ("Branches", 0x0c1),
    ("Instr_FGU_crypto", 0x0c2),
    ("Instr_ld", 0x0c4),
    ("Instr_st", 0x0c8),
    ("SPR_ring_ops", 0x0d0),
    ("Instr_other", 0x0e0),
    ("Instr_all", 0x0ff),
    ("Br_taken", 0x102),
    ("Sw_count_intr", 0x104),
    ("SW_prefetch", 0x110),
    ("Block_ld_st", 0x120),
    ("IC_miss_L2_L3_hit_nospec", 0x141),
    ("IC_miss_local_hit_nospec", 0x142),
    ("IC_miss_remote_hit_nospec", 0x144),
    ("IC_miss_nospec", 0x147),
    ("BTC_miss", 0x148),
    ("ITLB_miss", 0x150),
    ("ITLB_fill_8KB", 0x181),
    ("ITLB_fill_64KB", 0x182),
    ("ITLB_fill_4MB", 0x184),
    ("ITLB_fill_256MB", 0x188),
    ("ITLB_fill_2GB", 0x190),
    ("ITLB_fill_trap", 0x1a0),
    ("ITLB_miss_asynch", 0x1bf),
    ("IC_mtag_miss", 0x1c1),
    ("IC_mtag_miss_ptag_hit", 0x1c2),
    ("IC_mtag_miss_ptag_miss", 0x1c4),
    ("IC_mtag_miss_ptag_hit_way_mismatch", 0x1c8),
    ("Fetch_0", 0x201),
    ("Fetch_0_all", 0x202),
    ("Instr_buffer_full", 0x204),
    ("BTC_targ_incorrect", 0x208),
    ("PQ_tag_wait", 0x241),
    ("ROB_tag_wait", 0x242),
    ("LB_tag_wait", 0x244),
    ("ROB_LB_tag_wait", 0x246),
    ("SB_tag_wait", 0x248),
    ("ROB_SB_tag_wait", 0x24a),
    ("LB_SB_tag_wait", 0x24c),
    ("RB_LB_SB_tag_wait", 0x24e),
    ("DTLB_miss_tag_wait", 0x250),
    ("ITLB_HWTW_L2_hit", 0x281),
    ("ITLB_HWTW_L3_hit", 0x282),
    ("ITLB_HWTW_L3_miss", 0x284),
    ("ITLB_HWTW_all", 0x287),
    ("DTLB_HWTW_L2_hit", 0x288),
    ("DTLB_HWTW_L3_hit", 0x290),
    ("DTLB_HWTW_L3_miss", 0x2a0),
    ("DTLB_HWTW_all", 0x2b8),
    ("IC_miss_L2_L3_hit", 0x2c1),
    ("IC_miss_local_remote_remL3_hit", 0x2c2),
    ("IC_miss", 0x2c3),
    ("DC_miss_L2_L3_hit_nospec", 0x401),
    ("DC_miss_local_hit_nospec", 0x402),
    ("DC_miss_remote_L3_hit_nospec", 0x404),
    ("DC_miss_nospec", 0x407),
    ("DTLB_fill_8KB", 0x441),
    ("DTLB_fill_64KB", 0x442),
    ("DTLB_fill_4MB", 0x444),
    ("DTLB_fill_256MB", 0x448),
    ("DTLB_fill_2GB", 0x450),
    ("DTLB_fill_trap", 0x460),
    ("DTLB_miss_asynch", 0x47f),
    ("DC_pref_drop_DC_hit", 0x481),
    ("SW_pref_drop_DC_hit", 0x482),
    ("SW_pref_drop_buffer_full", 0x484),
    ("SW_pref_drop", 0x486),
    ("Full_RAW_hit_st_buf", 0x4c1),
    ("Partial_RAW_hit_st_buf", 0x4c2),
    ("RAW_hit_st_buf", 0x4c3),
    ("Full_RAW_hit_st_q", 0x4c4),
    ("Partial_RAW_hit_st_q", 0x4c8),
    ("RAW_hit_st_q", 0x4cc),
    ("IC_evict_invalid", 0x501),
    ("IC_snoop_invalid", 0x502),
    ("IC_invalid_all", 0x503),
    ("DC_evict_invalid", 0x504),
    ("DC_snoop_invalid", 0x508),
    ("DC_invalid_all", 0x50c),
    ("L1_snoop_invalid", 0x50a),
    ("L1_invalid_all", 0x50f),
    ("St_q_tag_wait", 0x510),
    ("Data_pref_hit_L2", 0x541),
    ("Data_pref_drop_L2", 0x542),
    ("Data_pref_hit_L3", 0x544),
    ("Data_pref_hit_local", 0x548),
    ("Data_pref_hit_remote", 0x550),
    ("Data_pref_drop_L3", 0x560),
    ("St_hit_L2", 0x581),
    ("St_hit_L3", 0x582),
    ("St_L2_local_C2C", 0x584),
    ("St_L2_remote_C2C", 0x588),
    ("St_local", 0x590),
    ("St_remote", 0x5a0),
    ("DC_miss_L2_L3_hit", 0x5c1),
    ("DC_miss_local_hit", 0x5c2),
    ("DC_miss_remote_L3_hit", 0x5c4),
    ("DC_miss", 0x5c7),
    ("L2_clean_evict", 0x601),
    ("L2_dirty_evict", 0x602),
    ("L2_fill_buf_full", 0x604),
    ("L2_wb_buf_full", 0x608),
    ("L2_miss_buf_full", 0x610),
    ("L2_pipe_stall", 0x620),
    ("Br_dir_mispred", 0x641),
    ("Br_trg_mispred_far_tbl", 0x642),
    ("Br_trg_mispred_indir_tbl", 0x644),
    ("Br_trg_mispred_ret_stk", 0x648),
    ("Br_trg_mispred", 0x64e),
    ("Br_mispred", 0x64f),
    ("Commit_0", 0x701),
    ("Commit_0_all", 0x702),
    ("Commit_1", 0x704),
    ("Commit_2", 0x708),
    ("Commit_1_or_2", 0x70c),
];

/// The Solaris driver's emask_valid per sl: the mask bits it accepts.
const SOLARIS_EMASK_VALID: &[(u64, u64)] = &[
    (1, 0x1f),
    (2, 0x0f),
    (3, 0x3f),
    (4, 0x3f),
    (5, 0x1f),
    (6, 0x3f),
    (7, 0x0f),
    (8, 0x0f),
    (9, 0x1f),
    (10, 0x3f),
    (11, 0x03),
    (16, 0x07),
    (17, 0x3f),
    (18, 0x07),
    (19, 0x0f),
    (20, 0x07),
    (21, 0x3f),
    (22, 0x3f),
    (23, 0x07),
    (24, 0x3f),
    (25, 0x0f),
    (26, 0x07),
    (28, 0x0f),
];

const PIC_COUNTERS: &[&str] = &["PIC0", "PIC1", "PIC2", "PIC3"];
const DRAM_COUNTERS: &[&str] = &["DRAM0", "DRAM1", "DRAM2", "DRAM3"];

#[test]
fn both_tables_pass_the_events_file_validation() {
    // T4 §10.2 Table 10-1: sl is 5 bits (15:11), mask 6 bits (10:5).
    let rules =
        TableRules { family: "sparc-t4", models: &["sparc-t4"], counters: PIC_COUNTERS, modifiers: &[], max_code: 31, max_umask: 0x3F };
    t4().validate(&rules, "data/sparc-t4/events.toml").unwrap();
    // §10.5 Table 10-4: each sel field is 4 bits; the DRAM counters have no unit mask.
    let rules = TableRules {
        family: "sparc-t4-dram",
        models: &["sparc-t4-dram"],
        counters: DRAM_COUNTERS,
        modifiers: &[],
        max_code: 0xF,
        max_umask: 0,
    };
    dram().validate(&rules, "data/sparc-t4-dram/events.toml").unwrap();
}

#[test]
fn table_10_2_every_group_has_its_sl_and_name() {
    // T4 §10.2 Table 10-2 (1 of 8) to (7 of 8); sl 28 from (8 of 8), which is missing.
    let t = t4();
    for &(sl, name, page) in GROUPS {
        assert_eq!(group(&t, sl).name, name, "T4 §10.2 Table 10-2 ({page} of 8): sl {sl}");
    }
    assert_eq!(t.events.len(), GROUPS.len(), "T4 §10.2 Table 10-2: exactly these groups are events");
}

#[test]
fn table_10_2_every_row_is_a_unit_mask_with_its_mask_value() {
    // T4 §10.2 Table 10-2 (1 of 8) to (7 of 8), row by row; (8 of 8) from Solaris.
    let t = t4();
    for &(sl, mask, name) in ROWS {
        let e = group(&t, sl);
        let u = e.umask(name).unwrap_or_else(|| panic!("T4 §10.2 Table 10-2: {}.{name} (sl {sl}) missing", e.name));
        assert_eq!(u.value, mask, "T4 §10.2 Table 10-2: sl {sl} {}.{name}", e.name);
    }
    for e in t.events.iter() {
        let rows = ROWS.iter().filter(|r| r.0 == e.code).count();
        assert_eq!(e.umasks.len(), rows, "T4 §10.2 Table 10-2: {} has exactly the spec's rows", e.name);
        let values: HashSet<u64> = e.umasks.iter().map(|u| u.value).collect();
        assert_eq!(values.len(), e.umasks.len(), "T4 §10.2 Table 10-2: {} lists each mask value once", e.name);
    }
}

#[test]
fn table_10_2_precise_event_column_per_group() {
    // T4 §10.2 Table 10-2 "Precise Event": Yes for sl 3, 4, 5, 16, 25 (pages 1, 2, 4, 7).
    let t = t4();
    let precise = [3, 4, 5, 16, 25];
    for e in t.events.iter() {
        let want = if precise.contains(&e.code) { "yes" } else { "no" };
        assert_eq!(e.attr("precise"), Some(want), "T4 §10.2 Table 10-2: precise column of sl {} ({})", e.code, e.name);
        for u in e.umasks.iter() {
            assert_eq!(
                e.attr_with("precise", Some(u)),
                Some(want),
                "T4 §10.2 Table 10-2: {}.{} has its group's precise flag",
                e.name,
                u.name
            );
        }
    }
}

#[test]
fn table_10_2_vp_specific_column_per_row() {
    // T4 §10.2 Table 10-2 "Virtual processor-specific": No for sl 9 (3 of 8), 20 (6 of 8)
    // and 24 (7 of 8); within sl 8 (3 of 8) only Fetch-0-all (02) is No; within sl 18
    // (5 of 8) only mask 01 is No. sl 28 mask 02 (Commit-0-all) is our inference (T1).
    let t = t4();
    let whole_group_no = [9, 20, 24];
    let row_no = [(8, 0x02), (18, 0x01), (28, 0x02)];
    for e in t.events.iter() {
        let group_want = if whole_group_no.contains(&e.code) { "no" } else { "yes" };
        assert_eq!(e.attr("vp_specific"), Some(group_want), "T4 §10.2 Table 10-2: VP-specific column of sl {}", e.code);
        for u in e.umasks.iter() {
            let want = if row_no.contains(&(e.code, u.value)) { "no" } else { group_want };
            assert_eq!(
                e.attr_with("vp_specific", Some(u)),
                Some(want),
                "T4 §10.2 Table 10-2: VP-specific of sl {} mask {:#04x}",
                e.code,
                u.value
            );
        }
    }
}

#[test]
fn footnote_13_cross_strand_applies_to_the_rows_that_are_not_vp_specific() {
    // T4 §10.2 Table 10-2 footnote 13 ("These events cross strands"; example fetch-0-all,
    // sl 8 mask 02, page 3 of 8). Its markers are lost: we apply it to every row whose
    // VP-specific column is No (ERRATA T6).
    let t = t4();
    for e in t.events.iter() {
        let rows: Vec<Option<&UmaskDef>> = if e.umasks.is_empty() { vec![None] } else { e.umasks.iter().map(Some).collect() };
        for u in rows {
            let vp = e.attr_with("vp_specific", u);
            let cross = e.attr_with("cross_strand", u);
            let what = format!("{}.{}", e.name, u.map_or("-", |u| u.name.as_ref()));
            match vp {
                Some("no") => assert_eq!(cross, Some("yes"), "T4 §10.2 Table 10-2 footnote 13: {what}"),
                _ => assert_eq!(cross, None, "T4 §10.2 Table 10-2 footnote 13 does not apply to {what}"),
            }
        }
    }
    let fetch = group(&t, 8);
    assert!(fetch.umask("FETCH_0_ALL").unwrap().description.contains("These events cross strands"));
}

#[test]
fn table_10_2_ignored_mask_bits_per_group() {
    // T4 §10.2 Table 10-2 "mask[n] is ignored" statements, page by page. sl 11 (4 of 8):
    // "Any other value: Ignored", read as mask[5:2] (ERRATA T15). sl 20 (6 of 8) says
    // mask[5:3] but its rows use bits 3 and 4: only bit 5 (ERRATA T14). sl 26 (7 of 8):
    // "The mask field is ignored." sl 28 (8 of 8, missing): Solaris's emask_valid (T1).
    let want: &[(u64, u64)] = &[
        (1, 0x20),  // 1 of 8: mask[5] is ignored
        (2, 0x30),  // 1 of 8: mask[5:4] is ignored
        (3, 0x00),  // 1 of 8: all six bits are instruction classes
        (4, 0x00),  // 2 of 8
        (5, 0x20),  // 2 of 8: mask bit 5 is ignored
        (6, 0x00),  // 2 of 8
        (7, 0x30),  // 3 of 8: mask[5:4] is ignored
        (8, 0x30),  // 3 of 8: mask[5:4] is ignored
        (9, 0x20),  // 3 of 8: mask[5] is ignored
        (10, 0x00), // 4 of 8
        (11, 0x3C), // 4 of 8: Any other value: Ignored
        (16, 0x38), // 4 of 8: mask[5:3] is ignored
        (17, 0x00), // 5 of 8
        (18, 0x38), // 5 of 8: mask[5:3] is ignored
        (19, 0x30), // 5 of 8: mask[5:4] is ignored
        (20, 0x20), // 6 of 8: see above
        (21, 0x00), // 6 of 8
        (22, 0x00), // 6 of 8
        (23, 0x38), // 7 of 8: mask[5:3] is ignored
        (24, 0x00), // 7 of 8
        (25, 0x30), // 7 of 8: mask[5:4] is ignored
        (26, 0x3F), // 7 of 8: the mask field is ignored
        (28, 0x30), // 8 of 8 (missing): Solaris emask_valid 0x0f
    ];
    let t = t4();
    for &(sl, ignored) in want {
        let e = group(&t, sl);
        assert_eq!(e.umask_ignored, ignored, "T4 §10.2 Table 10-2: ignored mask bits of sl {sl} ({})", e.name);
        for u in e.umasks.iter() {
            assert_eq!(u.value & ignored, 0, "T4 §10.2 Table 10-2: {}.{} uses only bits the group does not ignore", e.name, u.name);
        }
    }
    assert_eq!(want.len(), t.events.len());
}

#[test]
fn table_10_2_combination_rule_per_group() {
    // T4 §10.2 Table 10-2 "Any other value" rows. Listed: sl 1 (1 of 8, "the only useful
    // mask settings with multiple bits set are 6 and 18") and sl 7 (3 of 8, mutually
    // exclusive bits). Meaningless: sl 2 ("May provide meaningless data"), 5 ("may be
    // meaningless"), 8 and 9 ("Not useful"), 20 ("Not meaningful"). Any: every bit adds
    // its events. sl 28 (8 of 8, missing) is our inference (T1).
    let t = t4();
    let listed = [1, 7];
    let meaningless = [2, 5, 8, 9, 20];
    for e in t.events.iter() {
        let want = if listed.contains(&e.code) {
            Combinations::Listed
        } else if meaningless.contains(&e.code) {
            Combinations::Meaningless
        } else {
            Combinations::Any
        };
        assert_eq!(e.umask_combinations, want, "T4 §10.2 Table 10-2: combination rule of sl {} ({})", e.code, e.name);
    }
}

#[test]
fn table_10_2_sl_1_lists_the_single_bits_and_only_06_and_18_as_multi_bit_settings() {
    // T4 §10.2 Table 10-2 (1 of 8): "the only useful mask settings with multiple bits set
    // are 6₁₆ and 18₁₆".
    let t = t4();
    let e = group(&t, 1);
    let multi: Vec<u64> = e.umasks.iter().map(|u| u.value).filter(|v| v.count_ones() > 1).collect();
    assert_eq!(multi, [0x06, 0x18], "T4 §10.2 Table 10-2 (1 of 8)");
    assert!(e.umask_note.contains("the only useful mask settings with multiple bits set are 6₁₆ and 18₁₆"));
}

#[test]
fn table_10_2_sl_7_lists_exactly_the_combinations_of_mutually_exclusive_bits() {
    // T4 §10.2 Table 10-2 (3 of 8): "mask[0] and mask[1] events are not mutually
    // exclusive. mask bits [1], [2], and [3] are mutually exclusive, as are mask bits
    // [0], [2], and [3]": the listed combinations are the multi-bit values without both
    // bits 0 and 1.
    let t = t4();
    let e = group(&t, 7);
    let multi: Vec<u64> = e.umasks.iter().map(|u| u.value).filter(|v| v.count_ones() > 1).collect();
    assert_eq!(multi, [0x05, 0x06, 0x09, 0x0A, 0x0C, 0x0D, 0x0E], "T4 §10.2 Table 10-2 (3 of 8)");
    let exclusive: Vec<u64> = (1..=0x0Fu64).filter(|v| v.count_ones() > 1 && v & 0x03 != 0x03).collect();
    assert_eq!(multi, exclusive);
}

#[test]
fn table_10_2_umask_notes_are_the_any_other_value_text() {
    // T4 §10.2 Table 10-2 "Any other value" rows, verbatim (pages 1, 2, 3, 4, 6, 7 of 8).
    let t = t4();
    let want: &[(u64, &str)] = &[
        (2, "mask[5:4] is ignored. May provide meaningless data."),
        (3, "e.g., 3F₁₆ counts all instructions."),
        (5, "so setting multiple mask bits may be meaningless; mask bit 5 is ignored."),
        (6, "sl=5, mask=10₁₆ must be used to count ITLB misses synchronously."),
        (8, "setting multiple mask bits is not useful. mask[5:4] is ignored."),
        (9, "other mask bit settings are not useful. mask[5] is ignored."),
        (11, "Ignored"),
        (17, "Unlike the ITLB, there is no way to count DTLB misses synchronously."),
        (19, "Store buffer RAW hits supercede store queue RAW hits. mask[5:4] is ignored."),
        (20, "Not meaningful. mask[5:3] is ignored."),
        (22, "Different store prefetches"),
        (25, "mask bits 3, 2, and 1 can be combined to detect multiple combinations of branch target mispredicts. mask[5:4] is ignored."),
    ];
    for &(sl, text) in want {
        let e = group(&t, sl);
        assert!(e.umask_note.contains(text), "T4 §10.2 Table 10-2: sl {sl} note {:?} lacks {text:?}", e.umask_note);
    }
}

#[test]
fn table_10_2_reserved_and_unknown_sl_values_are_not_events() {
    // T4 §10.2 Table 10-2 (1 of 8) sl 0 "Disabled"; (4 of 8) 12-15 "Reserved"; (7 of 8)
    // 27 "Reserved"; (8 of 8) 29-31 are on the missing page (T1).
    let t = t4();
    for sl in [0, 12, 13, 14, 15, 27, 29, 30, 31] {
        assert!(t.by_code(sl, "sparc-t4").is_none(), "T4 §10.2 Table 10-2: sl {sl} is not an event");
    }
}

#[test]
fn table_10_2_sl_26_counts_cycles_by_mode_and_has_no_unit_masks() {
    // T4 §10.2 Table 10-2 (7 of 8): sl 26 "Any value", "The mask field is ignored."
    let t = t4();
    let e = group(&t, 26);
    assert!(e.umasks.is_empty());
    assert_eq!(e.umask_ignored, 0x3F);
    for text in ["If PCRx.ht is set, count cycles in hyperprivileged mode", "If PCRx.ut is set, count cycles in user mode"] {
        assert!(e.description.contains(text), "T4 §10.2 Table 10-2 (7 of 8): {text}");
    }
}

#[test]
fn solaris_names_resolve_to_their_sl_and_mask() {
    // Solaris T4 PCBE: emask = sl << 6 | mask, checked against T4 §10.2 Table 10-2
    // (1 of 8) to (7 of 8) and, for sl 28, the missing (8 of 8).
    let t = t4();
    for &(name, emask) in SOLARIS {
        let (sl, mask) = (emask >> 6, emask & 0x3F);
        let (e, u) = t.find_umask_alias(name).unwrap_or_else(|| panic!("Solaris name {name} is no alias"));
        assert_eq!((e.code, u.value), (sl, mask), "Solaris {name} = {emask:#05x}");
    }
    // Cycles_user (0x680): sl 26 has no unit masks, so it names the event.
    assert_eq!(t.find("Cycles_user").map(|e| e.code), Some(26), "Solaris Cycles_user = 0x680");
}

#[test]
fn solaris_atomics_follows_the_spec_mask_08_not_0x118() {
    // T4 §10.2 Table 10-2 (2 of 8): sl 4 mask 08 is atomics, 10 software prefetch.
    // Solaris encodes Atomics as 0x118 (mask 18 = both); we follow the spec (ERRATA T9).
    let t = t4();
    let (e, u) = t.find_umask_alias("Atomics").unwrap();
    assert_eq!((e.code, u.value), (4, 0x08));
    assert_ne!(0x118 & 0x3F, u.value, "Solaris's 0x118 is not what the spec says");
}

#[test]
fn solaris_names_cover_every_alias_and_aliases_are_unique() {
    // Every unit-mask alias is a Solaris name (plus Atomics); none repeats, none is an
    // event name (the names share one case-insensitive namespace).
    let t = t4();
    let solaris: HashSet<String> =
        SOLARIS.iter().map(|s| s.0.to_ascii_uppercase()).chain(["ATOMICS".to_string(), "CYCLES_USER".to_string()]).collect();
    let events: HashSet<String> = t.events.iter().map(|e| e.name.to_ascii_uppercase()).collect();
    let mut seen = HashSet::new();
    for e in t.events.iter() {
        let aliases = e.aliases.iter().chain(e.umasks.iter().flat_map(|u| u.aliases.iter()));
        for a in aliases {
            let up = a.to_ascii_uppercase();
            assert!(seen.insert(up.clone()), "alias {a} repeats");
            assert!(!events.contains(&up), "alias {a} is an event name");
            if a != "BR_AND_SPECIAL" {
                assert!(solaris.contains(&up), "alias {a} is not a Solaris name");
            }
        }
    }
    assert_eq!(seen.len(), solaris.len() + 1, "every Solaris name is an alias");
}

#[test]
fn solaris_emask_valid_is_the_complement_of_the_ignored_bits_except_sl_20_and_26() {
    // Solaris's emask_valid against T4 §10.2 Table 10-2's "mask[n] is ignored". They
    // agree except: sl 20 (6 of 8), where Solaris accepts 0x07 (as the spec's "mask[5:3]
    // is ignored" says) yet names 0x08-0x10 itself, and we follow the rows (ERRATA T14);
    // sl 26 (7 of 8), where the spec ignores the whole mask and Solaris accepts 0x07
    // (ERRATA T13).
    let t = t4();
    for &(sl, valid) in SOLARIS_EMASK_VALID {
        let e = group(&t, sl);
        match sl {
            20 => assert_eq!(e.umask_ignored, 0x20, "T4 §10.2 Table 10-2 (6 of 8)"),
            26 => assert_eq!(e.umask_ignored, 0x3F, "T4 §10.2 Table 10-2 (7 of 8)"),
            _ => assert_eq!(e.umask_ignored, !valid & 0x3F, "sl {sl}: Solaris emask_valid {valid:#04x}"),
        }
    }
    assert_eq!(SOLARIS_EMASK_VALID.len(), t.events.len());
}

#[test]
fn solaris_ic_mtag_names_disagree_with_the_spec_rows_and_we_name_them_as_the_spec() {
    // T4 §10.2 Table 10-2 (3 of 8): mask 04 "microtag hit, ptag miss", 08 "microtag hit,
    // ptag hit, way mismatch"; Solaris calls them IC_mtag_miss_ptag_miss and
    // IC_mtag_miss_ptag_hit_way_mismatch. Same encodings, spec's names (ERRATA T10).
    let t = t4();
    let e = group(&t, 7);
    assert_eq!(e.umask("MTAG_HIT_PTAG_MISS").unwrap().description, "Instruction cache microtag hit, ptag miss");
    assert_eq!(t.find_umask_alias("IC_mtag_miss_ptag_miss").unwrap().1.name, "MTAG_HIT_PTAG_MISS");
    assert_eq!(t.find_umask_alias("IC_mtag_miss_ptag_hit_way_mismatch").unwrap().1.name, "WAY_MISMATCH");
}

#[test]
fn footnotes_6_to_9_instruction_lists_are_on_their_unit_masks() {
    // T4 §10.2 Table 10-2 (1 of 8) sl 3 masks 04, 08, 10, 20; footnotes 6-9 (7 of 8).
    let t = t4();
    let e = group(&t, 3);
    let want: &[(&str, &str, &str, usize)] = &[
        ("LOADS", "LDD", "RDY", 149),
        ("STORES", "FLUSH", "STXA_0XFB", 110),
        ("SPR_RING_OPS", "LDXA_0X20", "WRY", 42),
        ("OTHER", "ADD", "XORcc", 56),
    ];
    for &(name, first, last, count) in want {
        let u = e.umask(name).unwrap();
        let list = e.attr_with("instructions", Some(u)).unwrap_or_else(|| panic!("INSTR.{name} has no instructions"));
        let items: Vec<&str> = list.split(", ").collect();
        assert_eq!(items.first(), Some(&first), "T4 Table 10-2 footnote of INSTR.{name}: first mnemonic");
        assert_eq!(items.last(), Some(&last), "T4 Table 10-2 footnote of INSTR.{name}: last mnemonic");
        assert_eq!(items.len(), count, "T4 Table 10-2 footnote of INSTR.{name}: mnemonics");
        assert!(!list.contains(" and ") || name == "STORES", "INSTR.{name}: the list drops only the final 'and'");
    }
    let stores = e.attr_with("instructions", e.umask("STORES")).unwrap();
    assert!(stores.contains("MEMBAR except MEMBAR #Lookaside and MEMBAR #LoadStore"), "footnote 7's MEMBAR item is verbatim");
}

#[test]
fn missing_footnotes_1_to_5_are_marked_on_their_rows() {
    // T4 §10.2 Table 10-2: markers ¹ on sl 11 (4 of 8), ² on sl 18 (5 of 8), ³ on sl 23
    // (7 of 8), ⁴ on the wait-cycle rows (3 and 6 of 8), ⁵ on sl 3 mask 02 (1 of 8);
    // their texts are missing (ERRATA T2).
    let t = t4();
    let on = |sl: u64, mask: Option<u64>| {
        let e = group(&t, sl);
        let u = mask.map(|m| umask_by_value(e, m).unwrap());
        e.attr_with("footnote_missing", u).map(str::to_string)
    };
    assert_eq!(on(11, None).as_deref(), Some("1"));
    assert_eq!(on(18, None).as_deref(), Some("2"));
    assert_eq!(on(23, None).as_deref(), Some("3"));
    assert_eq!(on(8, Some(0x02)).as_deref(), Some("4"));
    assert_eq!(on(9, None).as_deref(), Some("4"));
    assert_eq!(on(20, Some(0x10)).as_deref(), Some("4"));
    assert_eq!(on(3, Some(0x02)).as_deref(), Some("5"));
    let fgu = group(&t, 3).umask("FGU_CRYPTO").unwrap();
    assert!(fgu.description.contains("(footnote 5)"), "the row cites its footnote");
    assert!(fgu.attrs.iter().all(|a| a.key != "instructions"), "no list is invented for footnote 5");
}

#[test]
fn footnotes_10_to_12_are_in_the_descriptions_that_reference_them() {
    // T4 §10.2 Table 10-2 (1 of 8) sl 1 mask 01 cites footnote 10; (2 of 8) sl 5 cites
    // footnote 11; footnote 12 (micro-ops) has lost its marker: sl 1, 2 and 28 (ERRATA T5).
    let t = t4();
    let drain = group(&t, 1).umask("PIPE_DRAIN_CYCLES").unwrap();
    assert!(drain.description.contains("waiting on commit to catch up to the mispredicted branch"));
    assert!(group(&t, 5).description.contains("SPARC T4 does not count duplicate I-cache misses but does count duplicate D-cache misses."));
    for sl in [1, 2, 28] {
        assert!(group(&t, sl).description.contains("block loads and stores, which have 8 micro-ops each"), "sl {sl}: footnote 12");
        assert_eq!(group(&t, sl).attr("footnote_marker_lost"), Some("12"), "sl {sl}: the lost marker is recorded");
    }
}

#[test]
fn sl_28_commit_is_reconstructed_from_solaris_and_says_so() {
    // T4 §10.2 Table 10-2 (8 of 8) is missing; the sl 28 programming note names "Commit
    // micro-ops" and masks 01, 02, 03. Rows from the Solaris T4 PCBE (ERRATA T1).
    let t = t4();
    let e = group(&t, 28);
    let source = "Solaris T4 PCBE; Table 10-2 page 8 is missing from the spec text";
    assert_eq!(e.attr("source"), Some(source));
    assert!(e.description.starts_with("RECONSTRUCTED"));
    for u in e.umasks.iter() {
        assert_eq!(u.attrs.iter().find(|a| a.key == "source").map(|a| a.value.as_ref()), Some(source), "COMMIT.{}", u.name);
        assert!(u.description.starts_with("RECONSTRUCTED"), "COMMIT.{}", u.name);
    }
    assert!(e.attr("inferred").is_some(), "the inferred flags are declared");
}

#[test]
fn table_10_2_sl_6_garbled_rows_are_rebuilt_as_the_sl_17_twin() {
    // T4 §10.2 Table 10-2 (2 of 8): sl 6's rows are shifted into wrong columns in the
    // text; they mirror sl 17 (5 of 8) with ITLB for DTLB (ERRATA T4).
    let t = t4();
    let (itlb, dtlb) = (group(&t, 6), group(&t, 17));
    assert_eq!(itlb.umasks.len(), dtlb.umasks.len());
    for (i, d) in itlb.umasks.iter().zip(dtlb.umasks.iter()) {
        assert_eq!((i.name.as_ref(), i.value), (d.name.as_ref(), d.value), "T4 §10.2 Table 10-2 (2 of 8) vs (5 of 8)");
        if i.value != 0x3F {
            assert_eq!(i.description.replace("ITLB", "DTLB"), d.description, "T4 §10.2 Table 10-2 (2 of 8): ITLB_FILL.{}", i.name);
        }
    }
    assert_eq!((itlb.attr("precise"), itlb.attr("vp_specific")), (Some("no"), Some("yes")), "T4 §10.2 Table 10-2 (2 of 8): No, Yes");
}

#[test]
fn table_10_2_precise_groups_5_and_16_have_non_precise_twins_11_and_23() {
    // T4 §10.2 Table 10-2: sl 16 (4 of 8, precise) and sl 23 (7 of 8, not precise) have
    // the same rows; sl 11 (4 of 8, not precise) counts sl 5's (2 of 8) instruction cache
    // misses in two sources instead of three (ERRATA T12).
    let t = t4();
    let (p, a) = (group(&t, 16), group(&t, 23));
    let rows = |e: &EventDef| e.umasks.iter().map(|u| (u.name.to_string(), u.value)).collect::<Vec<_>>();
    assert_eq!(rows(p), rows(a));
    assert_eq!((p.attr("precise"), a.attr("precise")), (Some("yes"), Some("no")));
    let (ip, ia) = (group(&t, 5), group(&t, 11));
    assert_eq!((ip.attr("precise"), ia.attr("precise")), (Some("yes"), Some("no")));
    assert_eq!(ip.umask("ANY").unwrap().value, 0x07);
    assert_eq!(ia.umask("ANY").unwrap().value, 0x03);
}

#[test]
fn table_10_7_every_select_code_0_to_c_with_its_name_and_scope() {
    // §10.5 Table 10-7: 0000₂-0111₂ and 1001₂ count the counter's own COU port (per
    // §10.5, ERRATA T20), 1000₂ and 1010₂ all four ports, 1011₂ and 1100₂ one channel.
    let want: &[(u64, &str, &str)] = &[
        (0x0, "READS", "port"),
        (0x1, "WRITES", "port"),
        (0x2, "READS_WRITES", "port"),
        (0x3, "BANK_BUSY_STALLS", "port"),
        (0x4, "READ_QUEUE_LATENCY", "port"),
        (0x5, "WRITE_QUEUE_LATENCY", "port"),
        (0x6, "QUEUE_LATENCY", "port"),
        (0x7, "WRITEBACK_BUFFER_HITS", "port"),
        (0x8, "ALL_READS", "combined"),
        (0x9, "WRITE_STARVED", "port"),
        (0xA, "ALL_WRITES", "combined"),
        (0xB, "CHANNEL0_READS_WRITES", "channel"),
        (0xC, "CHANNEL1_READS_WRITES", "channel"),
    ];
    let t = dram();
    for &(code, name, scope) in want {
        let e = t.by_code(code, "sparc-t4-dram").unwrap_or_else(|| panic!("§10.5 Table 10-7: select {code:#x} missing"));
        assert_eq!(e.name, name, "§10.5 Table 10-7: select {code:#x}");
        assert_eq!(e.attr("scope"), Some(scope), "§10.5 Table 10-7: scope of {name}");
        assert!(e.umasks.is_empty(), "§10.5 Table 10-7: {name} has no unit masks");
    }
    assert_eq!(t.events.len(), want.len());
}

#[test]
fn table_10_7_increment_is_n_per_cycle_only_for_queue_latency() {
    // §10.5 Table 10-7: 0100₂-0110₂ are "incremented by n each cycle".
    for e in dram().events.iter() {
        let want = if (0x4..=0x6).contains(&e.code) { "n per cycle" } else { "1 per event" };
        assert_eq!(e.attr("increment"), Some(want), "§10.5 Table 10-7: {}", e.name);
    }
}

#[test]
fn table_10_7_descriptions_are_the_spec_text() {
    // §10.5 Table 10-7, verbatim (typos included, ERRATA T19).
    let t = dram();
    let d = |code: u64| t.by_code(code, "sparc-t4-dram").unwrap().description.to_string();
    assert_eq!(d(0x0), "Read transactions. The counter will count reads from its respective COU port only.");
    assert_eq!(d(0x1), "Write transactions. The counter will counter writes from its respective COU port only.");
    assert_eq!(d(0x9), "The number of times a write starved.");
    assert!(d(0xC).contains("Solaris must program one of it's two counters with this select value"));
}

#[test]
fn table_10_7_reserved_select_codes_d_to_f_are_not_events() {
    // §10.5 Table 10-7: 1101₂ and 111x₂ are Reserved.
    let t = dram();
    for code in [0xD, 0xE, 0xF] {
        assert!(t.by_code(code, "sparc-t4-dram").is_none(), "§10.5 Table 10-7: select {code:#x} is reserved");
    }
}
