//! Every machine makes only its family's signals (docs/engine.md E7): a family's spans
//! may then hold only the words of those, and no model can read a signal its machine
//! would have made outside them. Checked on every built-in workload, one thread and the
//! machine's own number, with fault injection where the machine has it, SPARC strands
//! in turns and at once, and the shipped traces.

use pmukit_arch::Catalog;
use pmukit_sim::program::builtin::WORKLOADS;
use pmukit_sim::stat::{self, MachineFile, StatOptions};
use pmukit_sim::stream::{Family, Signal};

/// Each machine (by a PMU it counts for), its family, whether it injects faults, and a
/// machine configuration to run it with.
const MACHINES: [(&str, Family, bool, &str); 8] = [
    ("arm1136", Family::Arm11, true, ""),
    ("arm1156", Family::Arm11, true, ""),
    ("arm1176", Family::Arm11, true, ""),
    ("sparc-t4", Family::Sparc, false, ""),
    ("sparc-t4", Family::Sparc, false, "[core]\nstrands_at_once = true\n"),
    ("sparc-kt", Family::Sparc, false, ""),
    ("niagara", Family::Sparc, false, "[core]\nstrands_at_once = true\n"),
    ("montecito", Family::Montecito, true, ""),
];

/// The recorded programs shipped with pmukit.
const TRACES: [&str; 2] = [
    concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/traces/sum.lackey"),
    concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/traces/loop.trace"),
];

const CYCLES: u64 = 2_000_000;

/// Every signal `opts`' run on `pmu`'s machine makes in its first `CYCLES` cycles.
fn made(pmu: &str, opts: &StatOptions) -> Vec<Signal> {
    let cat = Catalog::builtin();
    let (blocks, _) = stat::blocks(&[cat.pmu(pmu).unwrap()], opts, stat::Reads::ALL).unwrap();
    let mut seen = [false; Signal::COUNT];
    let mut run = 0;
    for block in blocks {
        for span in &block.body {
            span.signals.each_nonzero(|i, _| seen[i] = true);
        }
        run += block.cycles_per_iteration() * block.repeat;
        if run >= CYCLES {
            break;
        }
    }
    Signal::ALL.into_iter().filter(|&s| seen[s as usize]).collect()
}

#[test]
fn every_machine_makes_only_its_familys_signals() {
    for (pmu, family, faults, config) in MACHINES {
        let machine_config = (!config.is_empty()).then(|| MachineFile { origin: "test".into(), text: config.into() });
        let base = StatOptions { seed: 3, machine_config, ..StatOptions::default() };
        let mut runs = Vec::new();
        for w in WORKLOADS {
            for threads in [Some(1), None] {
                runs.push(StatOptions { workload: w.name.into(), threads, ..base.clone() });
            }
            if faults {
                runs.push(StatOptions { workload: w.name.into(), fault_every: Some(1_000), ..base.clone() });
            }
        }
        for trace in TRACES {
            runs.push(StatOptions { trace: Some(trace.into()), ..base.clone() });
        }
        for opts in runs {
            let outside: Vec<Signal> = made(pmu, &opts).into_iter().filter(|&s| !family.makes(s)).collect();
            assert!(outside.is_empty(), "{pmu} ({config:?}) on {} made {outside:?}, outside {family:?}'s signals", opts.program_name());
        }
    }
}

/// The families' ranges cover every signal, and hold what the enum's order was
/// chosen for (docs/engine.md E7's word counts).
#[test]
fn the_families_cover_every_signal_in_few_words() {
    assert!(Signal::ALL.iter().all(|&s| Family::ALL.iter().any(|f| f.makes(s))));
    let words = |f: Family| f.signals().len().div_ceil(16);
    assert_eq!(Family::ALL.map(words), [3, 7, 13]);
}
