//! The Montecito derived metrics (`data/montecito/metrics.toml`): one metric per row of
//! the "Derived Monitors" tables of chapter 4 of the "Dual-Core Update to the Intel
//! Itanium 2 Processor Reference Manual", in perf's MetricExpr syntax. Decisions are the
//! MM rows of `docs/ERRATA.md`; the tests that pin one name it.

use std::collections::{BTreeMap, HashSet};

use pmukit_core::metric::{MetricContext, MetricExpr};
use pmukit_core::report::{evaluate_metrics, EventResult, DURATION_TIME};
use pmukit_core::table::{EventTable, MetricDef, MetricTable};

const METRICS: &str = include_str!("../../../data/montecito/metrics.toml");
const EVENTS: &str = include_str!("../../../data/montecito/events.toml");

/// Rows of each Derived Monitors table (both sheets of the two-sheet ones), in the
/// order the file lists them.
const ROWS_PER_TABLE: [(&str, usize); 10] = [
    ("4-2", 1),   // Basic Events (section 4.3)
    ("4-5", 3),   // Instruction Execution Events (4.5)
    ("4-9", 6),   // L1 Instruction Cache and Prefetch Events (4.8.1)
    ("4-18", 6),  // L2I Cache, sheet 1: 4 rows, sheet 2: 2 rows (4.8.3)
    ("4-20", 5),  // L2 Data Cache Events (4.8.4)
    ("4-32", 23), // L3 Unified Cache Events (4.8.5)
    ("4-34", 1),  // System Events (4.9)
    ("4-36", 7),  // TLB Events (4.10)
    ("4-38", 26), // System Bus Events, sheet 1: 16 rows, sheet 2: 10 rows (4.11)
    ("4-40", 7),  // RSE Events (4.12)
];

const GROUPS: [&str; 10] = ["basic", "execution", "l1i", "l2i", "l2d", "l3", "system", "tlb", "bus", "rse"];

fn table() -> MetricTable {
    MetricTable::from_toml(METRICS, "data/montecito/metrics.toml").unwrap_or_else(|e| panic!("{e}"))
}

fn metric(name: &str) -> MetricDef {
    table().metrics.iter().find(|m| m.name == name).unwrap_or_else(|| panic!("no metric {name}")).clone()
}

fn parsed(m: &MetricDef) -> MetricExpr {
    MetricExpr::parse(&m.expr).unwrap_or_else(|e| panic!("metric {}: {e}", m.name))
}

/// "Table 4-38 (sheet 1 of 2), row …" → "4-38".
fn table_of(m: &MetricDef) -> &str {
    let rest = m.source.strip_prefix("Table ").unwrap_or_else(|| panic!("{}: source must start with 'Table 4-n'", m.name));
    rest.split([' ', ',']).next().unwrap_or_default()
}

#[test]
fn the_file_is_the_montecito_family() {
    let t = table();
    assert_eq!(t.family, "montecito");
    assert!(t.source.contains("chapter 4"));
}

#[test]
fn every_metric_parses() {
    for m in table().metrics.iter() {
        parsed(m);
    }
}

#[test]
fn one_metric_per_row_of_each_derived_monitors_table_in_order() {
    let t = table();
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    let mut order: Vec<&str> = Vec::new();
    for m in t.metrics.iter() {
        let table = table_of(m);
        *counts.entry(table).or_default() += 1;
        if order.last() != Some(&table) {
            order.push(table);
        }
    }
    let expected: Vec<&str> = ROWS_PER_TABLE.iter().map(|(t, _)| *t).collect();
    assert_eq!(order, expected, "tables out of order or interleaved");
    for (table, rows) in ROWS_PER_TABLE {
        assert_eq!(counts.get(table).copied().unwrap_or(0), rows, "Table {table}");
    }
    assert_eq!(t.metrics.len(), ROWS_PER_TABLE.iter().map(|(_, n)| n).sum::<usize>());
    assert_eq!(t.metrics.len(), 85);
}

#[test]
fn names_are_the_symbol_names_in_lower_case_and_unique() {
    let t = table();
    let mut seen = HashSet::new();
    for m in t.metrics.iter() {
        assert_eq!(m.name, m.name.to_lowercase(), "{}", m.name);
        assert!(m.name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'), "{}", m.name);
        assert!(seen.insert(m.name.to_string()), "duplicate {}", m.name);
        // The source cites the row by its Symbol Name.
        assert!(m.source.contains(&format!("row {}:", m.name.to_uppercase())), "{}: {}", m.name, m.source);
        assert!(!m.description.trim().is_empty(), "{}", m.name);
        assert!(GROUPS.contains(&m.group.as_ref()), "{}: group {}", m.name, m.group);
    }
}

/// MM9, MM10, MM15: "Percentage …" descriptions are ratios without a factor.
#[test]
fn percentage_rows_and_only_they_scale_by_100() {
    let mut percentages = Vec::new();
    for m in table().metrics.iter() {
        let percentage = m.description.starts_with("Percentage");
        assert_eq!(m.scale_unit == "100%", percentage, "{}", m.name);
        if percentage {
            percentages.push(m.name.to_string());
        }
    }
    assert_eq!(percentages, ["l2i_miss_ratio", "l2i_hit_ratio", "l2d_miss_ratio", "l2d_hit_ratio", "l3_miss_ratio"]);
}

/// MM1: pmukit evaluates a metric over counted events only, so no metric may name another.
#[test]
fn no_metric_names_another_metric() {
    let t = table();
    let names: HashSet<String> = t.metrics.iter().map(|m| m.name.to_uppercase()).collect();
    for m in t.metrics.iter() {
        for id in parsed(m).identifiers() {
            assert!(!names.contains(&id.to_uppercase()), "{} names metric {id}", m.name);
        }
    }
}

/// Identifiers are `EVENT` or `EVENT.EXTENSION`: upper case, no modifiers, no LaTeX left (MM13).
#[test]
fn identifiers_are_event_names_with_extensions() {
    for m in table().metrics.iter() {
        assert!(!m.expr.contains('$') && !m.expr.contains('\\'), "{}", m.name);
        for id in parsed(m).identifiers() {
            let ok = id
                .split('.')
                .all(|part| !part.is_empty() && part.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'));
            assert!(ok, "{}: identifier {id}", m.name);
        }
    }
}

#[test]
fn spot_checks_of_exact_expressions() {
    for (name, expr) in [
        // Table 4-2.
        ("ia64_ipc", "IA64_INST_RETIRED.THIS / CPU_OP_CYCLES.ALL"),
        // Table 4-5, MM6: chk.s is selected by the opcode matcher behind IBRP0/PMC32-33.
        ("ctrl_spec_miss_ratio", "INST_FAILED_CHKS_RETIRED.ALL / IA64_TAGGED_INST_RETIRED.IBRP0_PMC32_33"),
        // Table 4-9, MM1: L1I_MISSES inlined.
        ("l1i_miss_ratio", "(L2I_DEMAND_READS + L2I_PREFETCHES) / (L1I_READS + L1I_PREFETCHES)"),
        ("isb_lines_in", "ISB_BUNPAIRS_IN / 4"),
        // Table 4-18, MM8 and MM9.
        ("l2i_snoops", "L1I_SNOOP"),
        ("l2i_fills", "L2I_READS.MISS.DMND + L2I_READS.MISS.PFTCH"),
        ("l2i_miss_ratio", "L2I_READS.MISS.ALL / L2I_READS.ALL.ALL"),
        // Table 4-20, MM10 and MM11.
        ("l2d_miss_ratio", "L2D_INSERT_MISSES / L2D_REFERENCES.ALL"),
        ("l2d_recirc_attempts", "L2D_ISSUED_RECIRC_OZQ_ACC + L2D_OZQ_CANCELS0.RECIRC"),
        // Table 4-32, MM12.
        ("l3_read_hits", "L3_READS.ALL.HIT"),
        (
            "l3_data_miss_ratio",
            "(L3_READS.DATA_READ.MISS + L3_WRITES.DATA_WRITE.MISS) / (L3_READS.DATA_READ.ALL + L3_WRITES.DATA_WRITE.ALL)",
        ),
        // Table 4-34, MM7.
        ("code_debug_register_matches", "IA64_TAGGED_INST_RETIRED.IBRP0_PMC32_33"),
        // Table 4-36, MM5: set 0, the set of L2DTLB_MISSES and L1DTLB_TRANSFER.
        ("l2dtlb_miss_ratio", "L2DTLB_MISSES / DATA_REFERENCES_SET0"),
        ("l1dtlb_for_l1d_miss_ratio", "L1DTLB_TRANSFER / L1D_READS_SET0"),
        ("l1itlb_miss_ratio", "ITLB_MISSES_FETCH.L1ITLB / L1I_READS"),
        // Table 4-38, MM3, MM4, MM17.
        ("bil_ratio", "BUS_MEM_READ.BIL.ANY / BUS_MEMORY.ALL.ANY"),
        ("bil_hitm_line_ratio", "BUS_RD_INVALID_HITM.ANY / BUS_MEMORY.ALL.ANY"),
        ("bus_addr_bpri", "BUS_MEMORY.ALL.IO"),
        ("bus_brq_live_req", "ER_BRQ_LIVE_REQ_HI * 8 + ER_BRQ_LIVE_REQ_LO"),
        ("bus_hits_ratio", "BUS_RD_HIT.ANY / BUS_MEM_READ.BRL.ANY"),
        ("bus_rd_instructions", "BUS_MEM_READ.BRL.ANY - BUS_RD_DATA.ANY"),
        ("cacheable_read_ratio", "(BUS_MEM_READ.BRL.ANY + BUS_MEM_READ.BRIL.ANY) / BUS_MEMORY.ALL.ANY"),
        // Table 4-40, MM1.
        ("rse_avg_load_latency", "BE_RSE_BUBBLE.UNDERFLOW / RSE_REFERENCES_RETIRED.LOAD"),
        ("rse_current_regs", "RSE_CURRENT_REGS_6 * 64 + RSE_CURRENT_REGS_5_TO_3 * 8 + RSE_CURRENT_REGS_2_TO_0"),
    ] {
        assert_eq!(metric(name).expr, expr, "{name}");
    }
}

struct Counts(Vec<(&'static str, f64)>);

impl MetricContext for Counts {
    fn value(&self, name: &str) -> Option<f64> {
        self.0.iter().find(|(n, _)| *n == name).map(|(_, v)| *v)
    }
    fn literal(&self, _: &str) -> Option<f64> {
        None
    }
}

/// Table 4-40 and MM23: the bit-split counters recombine with weights 64, 8 and 1, and
/// the average invalid registers are 96 minus the average dirty and current ones.
#[test]
fn rse_register_counts_recombine_their_bit_fields() {
    let ctx = Counts(vec![
        ("RSE_CURRENT_REGS_6", 1.0),
        ("RSE_CURRENT_REGS_5_TO_3", 20.0),
        ("RSE_CURRENT_REGS_2_TO_0", 30.0),
        ("RSE_DIRTY_REGS_6", 0.0),
        ("RSE_DIRTY_REGS_5_TO_3", 10.0),
        ("RSE_DIRTY_REGS_2_TO_0", 6.0),
        ("RSE_EVENT_RETIRED", 8.0),
    ]);
    let eval = |name: &str| parsed(&metric(name)).eval(&ctx).unwrap();
    assert_eq!(eval("rse_current_regs"), 64.0 + 160.0 + 30.0);
    assert_eq!(eval("rse_dirty_regs"), 86.0);
    assert_eq!(eval("rse_avg_current_regs"), 31.75);
    assert_eq!(eval("rse_avg_dirty_regs"), 10.75);
    assert_eq!(eval("rse_avg_invalid_regs"), 96.0 - 31.75 - 10.75);
}

/// Every metric is printed by `pmu stat` once the events it names are counted under
/// those (canonical) names: nothing else is needed.
#[test]
fn every_metric_evaluates_from_counted_events() {
    let t = table();
    let mut names: Vec<String> = Vec::new();
    for m in t.metrics.iter() {
        for id in parsed(m).identifiers() {
            if id != DURATION_TIME && !names.iter().any(|n| n == id) {
                names.push(id.to_string());
            }
        }
    }
    // Distinct counts, large enough for every difference to stay positive.
    let events: Vec<EventResult> = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let count = 1000 + 7 * i as u64;
            EventResult {
                pmu: "montecito".to_string(),
                input: None,
                name: name.clone(),
                count: Some(count),
                raw: count,
                enabled: 1,
                running: 1,
                scaled: false,
                unit: None,
                counters: vec![],
                supported: true,
                noise_pct: None,
                units: vec![],
            }
        })
        .collect();
    let mut notes = Vec::new();
    // The made-up counts keep no domain (a part may exceed its whole): unbounded here.
    let unbounded: Vec<MetricDef> = t.metrics.iter().map(|m| MetricDef { min: "".into(), max: "".into(), ..m.clone() }).collect();
    let results = evaluate_metrics(&unbounded, None, &events, &[], 1_000_000, &mut notes);
    assert!(notes.is_empty(), "{notes:?}");
    assert_eq!(results.len(), t.metrics.len());
    let l2i = results.iter().find(|r| r.name == "l2i_miss_ratio").unwrap();
    assert_eq!(l2i.unit, "%");
}

/// Every identifier resolves to an event of `data/montecito/events.toml` and, when it
/// has an extension, to one of that event's unit masks, matched case-insensitively as
/// event strings are. Both must be the canonical names (not aliases), which are the
/// names `pmu stat` gives counted events and so the ones a metric is evaluated with.
#[test]
fn every_identifier_is_an_event_and_unit_mask_of_the_event_table() {
    let events = EventTable::from_toml(EVENTS, "data/montecito/events.toml").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(events.family, "montecito");
    for m in table().metrics.iter() {
        for id in parsed(m).identifiers() {
            if id == DURATION_TIME {
                continue;
            }
            let (event, ext) = id.split_once('.').unwrap_or((id, ""));
            let e = events.find(event).unwrap_or_else(|| panic!("{}: no event {event} in events.toml", m.name));
            // Counted events carry canonical names, so an alias would never match one.
            assert!(e.name.eq_ignore_ascii_case(event), "{}: {event} is an alias of {}", m.name, e.name);
            if ext.is_empty() {
                // MM2: an event with unit masks is always written with one.
                assert!(e.umasks.is_empty(), "{}: {event} has unit masks; name one", m.name);
            } else {
                assert!(
                    e.umask(ext).is_some(),
                    "{}: event {} has no unit mask {ext}; it has {:?}",
                    m.name,
                    e.name,
                    e.umasks.iter().map(|u| u.name.as_ref()).collect::<Vec<_>>()
                );
            }
        }
    }
}
