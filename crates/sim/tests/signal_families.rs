//! Every machine makes only its family's signals (docs/engine.md E7): its spans hold
//! only that family's words, and in a debug build (the tests') `Signals::set` panics on
//! a signal of another family. This runs every machine on every built-in workload, one
//! thread and the machine's own number, with fault injection where the machine has
//! it, SPARC strands in turns and at once, and the shipped traces, so that any such
//! signal panics here; the spans, widened to every signal, carry none outside the
//! family either.

use pmukit_arch::{encode_set, Catalog};
use pmukit_sim::drivers::arm11::Arm11Driver;
use pmukit_sim::drivers::montecito::MontecitoDriver;
use pmukit_sim::drivers::t4::T4Driver;
use pmukit_sim::drivers::Runs;
use pmukit_sim::program::builtin::WORKLOADS;
use pmukit_sim::stat::{self, Blocks, MachineFile, StatOptions, Stream};
use pmukit_sim::stream::{family_has, Block, Cursor, Signal, ARM11, EVERY, MONTECITO, SPARC};

/// Each machine (by a PMU it counts for), its family, whether it injects faults, and a
/// machine configuration to run it with.
const MACHINES: [(&str, usize, bool, &str); 8] = [
    ("arm1136", ARM11, true, ""),
    ("arm1156", ARM11, true, ""),
    ("arm1176", ARM11, true, ""),
    ("sparc-t4", SPARC, false, ""),
    ("sparc-t4", SPARC, false, "[core]\nstrands_at_once = true\n"),
    ("sparc-kt", SPARC, false, ""),
    ("niagara", SPARC, false, "[core]\nstrands_at_once = true\n"),
    ("montecito", MONTECITO, true, ""),
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
    let blocks = blocks.every();
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
            let outside: Vec<Signal> = made(pmu, &opts).into_iter().filter(|&s| !family_has(family, s as usize)).collect();
            assert!(outside.is_empty(), "{pmu} ({config:?}) on {} made {outside:?}, outside its family's signals", opts.program_name());
        }
    }
}

/// The families' ranges cover every signal.
#[test]
fn the_families_cover_every_signal() {
    let families = [ARM11, SPARC, MONTECITO];
    assert!(Signal::ALL.iter().all(|&s| families.iter().any(|&f| family_has(f, s as usize))));
}

/// The reference path (docs/engine.md E7): a machine's stream counted in its family's
/// words and the same stream widened to every signal's give every selection of its
/// PMU the same counts and the drivers the same interrupts.
#[test]
fn every_selection_counts_the_same_in_its_familys_words_and_in_every_signals() {
    let cat = Catalog::builtin();
    for pmu in ["arm1176", "sparc-t4", "montecito"] {
        let p = cat.pmu(pmu).unwrap();
        let opts = StatOptions { workload: "mixed".into(), seed: 3, ..StatOptions::default() };
        match stat::blocks(&[p], &opts, stat::Reads::ALL).unwrap().0 {
            Stream::Arm11(b) => compare(&cat, pmu, b),
            Stream::Sparc(b) => compare(&cat, pmu, b),
            Stream::Montecito(b) => compare(&cat, pmu, b),
        }
    }
}

/// `pmu`'s driver, for a stream of family `F`.
fn driver<const F: usize>(cat: &Catalog, pmu: &str) -> Box<dyn Runs<F>> {
    match pmu {
        "arm1176" => Box::new(Arm11Driver::new("arm1176")),
        "sparc-t4" => Box::new(T4Driver::new(cat.pmu(pmu).unwrap(), 8)),
        _ => Box::new(MontecitoDriver::new(2)),
    }
}

fn compare<const F: usize>(cat: &Catalog, pmu: &str, blocks: Blocks<F>) {
    const COUNTED: u64 = 200_000;
    let mut run = 0;
    let ours: Vec<Block<F>> = blocks
        .take_while(|b| {
            let go = run < COUNTED;
            run += b.cycles();
            go
        })
        .collect();
    let every: Vec<Block> = ours.iter().cloned().map(Block::into_family).collect();
    let p = cat.pmu(pmu).unwrap();
    let names: Vec<String> = selections(p);
    let mut compared = 0;
    for chunk in names.chunks(2) {
        let sels: Vec<_> = chunk.iter().map(|n| cat.resolve(n, pmu).unwrap()).collect();
        let Ok(set) = encode_set(p, &sels) else { continue };
        let (mut a, mut b) = (driver::<F>(cat, pmu), driver::<EVERY>(cat, pmu));
        a.start(&set);
        b.start(&set);
        let ran = a.run(&mut Cursor::new(Box::new(ours.clone().into_iter())), COUNTED);
        assert_eq!(ran, b.run(&mut Cursor::new(Box::new(every.clone().into_iter())), COUNTED), "{pmu} {chunk:?}");
        assert_eq!(a.stop(pmu), b.stop(pmu), "{pmu} {chunk:?}");
        assert_eq!(a.interrupts(), b.interrupts(), "{pmu} {chunk:?}");
        compared += 1;
    }
    assert!(compared * 4 > names.len(), "{pmu}: only {compared} sets of {} selections could be placed", names.len());
}

/// Every selection of `pmu`: each event without unit masks, and each of the others'
/// masks.
fn selections(pmu: &pmukit_core::pmu::Pmu) -> Vec<String> {
    pmu.events()
        .flat_map(|e| {
            let masks: Vec<String> = e.umasks.iter().map(|u| format!("{}.{}", e.name, u.name)).collect();
            if masks.is_empty() {
                vec![e.name.to_string()]
            } else {
                masks
            }
        })
        .collect()
}
