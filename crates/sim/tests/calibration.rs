//! Issue 42 item 4: the built-in workloads that stand for real programs land within
//! stated tolerances of those programs, as docs/validation.md ("Real programs beside
//! the built-in workloads") states them. The programs' figures were measured under
//! QEMU with `tools/calibration.sh` (the programs are `crates/cli/benches/programs/`,
//! built for SPARC with `-O2 -static -mcpu=niagara2`), on the SPARC T4 model, whose
//! counters give every figure: they are constants here, so this test needs no QEMU.

use pmukit_arch::Catalog;
use pmukit_sim::stat::{stat, StatOptions};

/// A program's figures: loads, stores and branches per 100 instructions, taken
/// branches per 100 branches, mispredicts and D-cache misses per 1,000 instructions.
#[derive(Debug, Clone, Copy)]
struct Figures {
    loads: f64,
    stores: f64,
    branches: f64,
    taken: f64,
    mispredicts: f64,
    dcache_misses: f64,
}

/// Each workload and the program it stands for (its description in `pmu workloads`),
/// with that program's figures from docs/validation.md.
const PAIRS: [(&str, &str, Figures); 4] = [
    ("compute", "compress", Figures { loads: 13.4, stores: 0.1, branches: 20.2, taken: 64.1, mispredicts: 6.44, dcache_misses: 0.02 }),
    ("branchy", "sort", Figures { loads: 11.0, stores: 4.1, branches: 17.8, taken: 66.6, mispredicts: 46.34, dcache_misses: 4.35 }),
    ("fp", "matmul", Figures { loads: 24.8, stores: 12.5, branches: 12.5, taken: 99.3, mispredicts: 0.81, dcache_misses: 15.60 }),
    ("chase", "chase", Figures { loads: 21.3, stores: 4.3, branches: 20.2, taken: 100.0, mispredicts: 0.01, dcache_misses: 184.32 }),
];

/// docs/validation.md's tolerances: the mix within 10 points of the program's, the
/// taken share within 25, mispredicts and D-cache misses per 1,000 instructions within
/// a factor of 3 (or both below 1 per 1,000).
const MIX_POINTS: f64 = 10.0;
const TAKEN_POINTS: f64 = 25.0;
const RATE_FACTOR: f64 = 3.0;

fn measured(workload: &str) -> Figures {
    let cat = Catalog::builtin();
    let count = |events: [&str; 4]| -> Vec<f64> {
        let sels: Vec<_> = events.iter().map(|e| cat.resolve(e, "sparc-t4").unwrap()).collect();
        let opts = StatOptions { workload: workload.to_string(), seed: 1, cycles: 100_000_000, threads: Some(1), ..StatOptions::default() };
        let r = stat(&cat, &sels, &opts, &mut |_| {}).unwrap();
        r.events.iter().map(|e| e.count.unwrap() as f64).collect()
    };
    let a = count(["INSTR.ALL", "INSTR.LOADS", "INSTR.STORES", "INSTR_SPECIAL.BRANCHES"]);
    let b = count(["INSTR.ALL", "INSTR_SPECIAL.TAKEN_BRANCHES", "BR_MISPREDICT.ALL", "DC_MISS_ASYNC.ANY"]);
    assert_eq!(a[0], b[0], "{workload}: the two runs are one execution");
    let i = a[0];
    Figures {
        loads: 100.0 * a[1] / i,
        stores: 100.0 * a[2] / i,
        branches: 100.0 * a[3] / i,
        taken: 100.0 * b[1] / a[3],
        mispredicts: 1000.0 * b[2] / i,
        dcache_misses: 1000.0 * b[3] / i,
    }
}

fn within_factor(a: f64, b: f64) -> bool {
    (a < 1.0 && b < 1.0) || (a.max(b) <= RATE_FACTOR * a.min(b))
}

#[test]
fn the_workloads_land_within_the_stated_tolerances_of_the_programs_they_stand_for() {
    for (workload, program, p) in PAIRS {
        let w = measured(workload);
        let why = format!("workload {workload} {w:?} beside program {program} {p:?}");
        for (name, a, b) in [("loads", w.loads, p.loads), ("stores", w.stores, p.stores), ("branches", w.branches, p.branches)] {
            assert!((a - b).abs() <= MIX_POINTS, "{name}: {why}");
        }
        assert!((w.taken - p.taken).abs() <= TAKEN_POINTS, "taken: {why}");
        assert!(within_factor(w.mispredicts, p.mispredicts), "mispredicts: {why}");
        assert!(within_factor(w.dcache_misses, p.dcache_misses), "D-cache misses: {why}");
    }
}
