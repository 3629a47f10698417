//! A Montecito run whose events read none of the system interface's occupancies
//! leaves them out of its spans (`MontecitoConfig::occupancies`): every selection that
//! reads none must count the same in every cycle as on the stream that lays them.

mod common;

use std::collections::HashMap;

use pmukit_arch::Catalog;
use pmukit_sim::models::montecito::{per_cycle, reads_occupancies};
use pmukit_sim::stat::{self, Reads, StatOptions};
use pmukit_sim::stream::{Branch, Detail, MemRef, Signals, Span};

const CYCLES: u64 = 2_000_000;

/// What a selection's count in a cycle depends on: the signals, the data reference's
/// direction, the branch outcome's presence and what the capture units see.
type Kind = (Signals, Option<bool>, bool, Detail);

fn kind(s: &Span) -> Kind {
    (s.signals, s.mem.map(|m| m.write), s.branch.is_some(), s.detail)
}

/// A span of one cycle of `kind`.
fn span_of(&(signals, write, branch, detail): &Kind) -> Span {
    Span {
        signals,
        mem: write.map(|write| MemRef { addr: 0, stride: 0, size: 8, write }),
        branch: branch.then_some(Branch { target: 0, taken: true, mispredicted: false }),
        detail,
        ..Span::new(1, 0)
    }
}

/// Each selection's count over the first `CYCLES` cycles of `workload` on both
/// threads, its occupancies laid or not.
fn counts(workload: &str, selections: &[(String, u64, u64)], occupancies: bool) -> Vec<u64> {
    let cat = Catalog::builtin();
    let opts = StatOptions { workload: workload.to_string(), seed: 3, ..StatOptions::default() };
    let (blocks, _) = stat::blocks(&[cat.pmu("montecito").unwrap()], &opts, Reads { occupancies }).unwrap();
    let blocks = blocks.every();
    let mut kinds = HashMap::new();
    common::profile(blocks, CYCLES, kind, &mut kinds);
    let spans: Vec<(Span, u64)> = kinds.iter().map(|(k, &n)| (span_of(k), n)).collect();
    selections.iter().map(|&(_, code, umask)| spans.iter().map(|(s, n)| per_cycle(code as u8, umask, s) * n).sum()).collect()
}

#[test]
fn selections_that_read_no_occupancy_count_the_same_without_them() {
    let cat = Catalog::builtin();
    let all = common::selections(cat.pmu("montecito").unwrap());
    let (reading, other): (Vec<_>, Vec<_>) = all.into_iter().partition(|(_, code, umask)| reads_occupancies(*code as u8, *umask));
    let named = |list: &[(String, u64, u64)], name: &str| list.iter().any(|(n, ..)| n == name);
    assert!(named(&reading, "SI_RQ_LIVE_REQ_HI.SELF") && named(&reading, "BUS_DATA_CYCLE.SELF") && named(&reading, "L2D_OZQ_RELEASE"));
    assert!(named(&other, "CPU_OP_CYCLES.ALL") && named(&other, "BUS_ALL.SELF") && named(&other, "L3_MISSES"));
    // Workloads that keep the system interface busy: this core's misses and write-backs,
    // the other core's and the I/O bridge's transactions, snoops answered HITM.
    let mut missing = 0;
    for workload in ["stream", "shared", "os", "mixed"] {
        let (laid, left) = (counts(workload, &other, true), counts(workload, &other, false));
        for (i, (a, b)) in laid.iter().zip(&left).enumerate() {
            assert_eq!(a, b, "{workload}: {} counts {a} with the occupancies laid, {b} without", other[i].0);
        }
        // The stream without them lacks them indeed.
        let (laid, left) = (counts(workload, &reading, true), counts(workload, &reading, false));
        missing += laid.iter().zip(&left).filter(|(a, b)| a != b).count();
    }
    assert!(missing > 0);
}
