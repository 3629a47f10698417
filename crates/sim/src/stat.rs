//! `pmu stat` on the simulated machine: schedule the events, program the model
//! through its driver, run a workload, multiplex when the events do not fit the
//! counters together, and report perf-style counts and derived metrics.

use pmukit_arch::sparc::t4;
use pmukit_arch::{self as arch, arm11, Catalog, CatalogError, EncodeError, EncodedSet};
use pmukit_core::count::Count;
use pmukit_core::event_string::EventSel;
use pmukit_core::pmu::Pmu;
use pmukit_core::report::{evaluate_metrics, EventResult, StatReport};
use pmukit_core::schedule;
use thiserror::Error;

use crate::drivers::arm11::Arm11Driver;
use crate::drivers::t4::T4Driver;
use crate::drivers::Driver;
use crate::stream::Cursor;
use crate::workloads::{self, Profile, UnknownWorkload};

/// The simulated clock: 1 GHz, so one cycle is one nanosecond of enabled/running time.
pub const CLOCK_HZ: u64 = 1_000_000_000;

/// Shorter rotation slices would spend the run reprogramming counters.
pub const MIN_MUX_INTERVAL: u64 = 1000;

/// perf's default multiplexing interval (perf_event_mux_interval_ms = 4), in cycles.
pub const DEFAULT_MUX_INTERVAL: u64 = 4 * CLOCK_HZ / 1000;

#[derive(Debug, Clone)]
pub struct StatOptions {
    pub workload: String,
    pub seed: u64,
    /// Length of the run in simulated cycles.
    pub cycles: u64,
    /// Cycles each multiplexing group counts before the next one takes the counters.
    pub mux_interval: u64,
}

impl Default for StatOptions {
    fn default() -> Self {
        StatOptions {
            workload: workloads::DEFAULT_WORKLOAD.to_string(),
            seed: 1,
            cycles: 1_000_000_000,
            mux_interval: DEFAULT_MUX_INTERVAL,
        }
    }
}

#[derive(Debug, Clone, Error)]
pub enum StatError {
    #[error(transparent)]
    Encode(#[from] EncodeError),
    #[error(transparent)]
    Workload(#[from] UnknownWorkload),
    #[error(transparent)]
    Catalog(#[from] CatalogError),
    #[error("{pmu} has no simulated model yet; `pmu stat` can count on: {with_model}")]
    NoModel { pmu: String, with_model: String },
    #[error("no events to count")]
    NoEvents,
    #[error("{pmus} are PMUs of different machines and cannot be counted in one run")]
    MixedMachines { pmus: String },
    #[error("--cycles must be at least 1")]
    NoCycles,
    #[error("the multiplexing interval must be at least {MIN_MUX_INTERVAL} cycles (1 µs at the simulated 1 GHz; perf's default is 4 ms), not {0}")]
    ShortInterval(u64),
}

/// The machine that counts events of `pmus`, with the workload profile that fits it.
fn machine_for(catalog: &Catalog, pmus: &[&Pmu]) -> Result<(Box<dyn Driver>, Profile), StatError> {
    let families: Vec<&str> = pmus.iter().map(|p| p.desc.family).collect();
    let no_model = |pmu: &Pmu| {
        let with_model: Vec<&str> =
            arch::FAMILIES.iter().filter(|f| MODELLED.contains(&f.name)).flat_map(|f| f.pmus.iter().map(|p| p.name)).collect();
        StatError::NoModel { pmu: pmu.name().to_string(), with_model: with_model.join(", ") }
    };
    if let Some(p) = pmus.iter().find(|p| !MODELLED.contains(&p.desc.family)) {
        return Err(no_model(p));
    }
    match families.as_slice() {
        [arm11::FAMILY] => Ok((Box::new(Arm11Driver::new(pmus[0].desc.model)), Profile::ARM11)),
        f if f.iter().all(|f| [t4::FAMILY, t4::DRAM_FAMILY].contains(f)) => {
            let core = catalog.pmu(t4::FAMILY).map_err(|_| no_model(pmus[0]))?;
            Ok((Box::new(T4Driver::new(core, T4_STRANDS)), T4_PROFILE))
        }
        _ => Err(StatError::MixedMachines { pmus: pmus.iter().map(|p| p.name()).collect::<Vec<_>>().join(", ") }),
    }
}

/// Families with a simulated model and driver.
const MODELLED: &[&str] = &[arm11::FAMILY, t4::FAMILY, t4::DRAM_FAMILY];

/// Strands of the simulated T4 core: all eight, one workload thread each.
const T4_STRANDS: usize = 8;

/// A T4 core selects up to two instructions per cycle (TABLE 10-2, sl 1: Sel-2).
const T4_PROFILE: Profile = Profile { issue_width: 2, threads: T4_STRANDS as u8 };

/// The events a run counts when none are given: cycles, instructions, branches and
/// misses, which need multiplexing on these PMUs.
pub fn default_events(pmu: &Pmu) -> Vec<String> {
    let names: &[&str] = match pmu.desc.family {
        arm11::FAMILY => &["CPU_CYCLES", "INSTR_EXEC", "BR_EXEC", "BR_MISPREDICT", "DCACHE_HIT", "DCACHE_MISS"],
        t4::FAMILY => &["CYCLES", "INSTR.ALL", "INSTR.BRANCHES", "BR_MISPREDICT.ALL", "DC_MISS_ASYNC.ANY", "IC_MISS_ASYNC.ANY"],
        t4::DRAM_FAMILY => &["ALL_READS", "ALL_WRITES"],
        _ => &[],
    };
    let mut events: Vec<String> = names.iter().map(|n| format!("{}::{n}", pmu.name())).collect();
    // The strand counters and the memory controllers count one run together.
    if pmu.desc.family == t4::FAMILY {
        events.extend(["ALL_READS", "ALL_WRITES"].map(|n| format!("{}::{n}", t4::SPARC_T4_DRAM.name)));
    }
    events
}

/// One PMU's share of a run: its events, their multiplexing groups and encodings.
struct Plan<'a> {
    pmu: &'a Pmu,
    groups: Vec<Vec<usize>>,
    sets: Vec<EncodedSet>,
    turn: usize,
    running: bool,
}

impl<'a> Plan<'a> {
    fn new(pmu: &'a Pmu, sels: &[EventSel], events: Vec<usize>) -> Result<Plan<'a>, StatError> {
        let mine: Vec<EventSel> = events.iter().map(|&i| sels[i].clone()).collect();
        let allowed = arch::allowed_counters(pmu, &mine);
        let local: Vec<Vec<usize>> = match schedule::assign(&allowed) {
            Ok(_) => vec![(0..mine.len()).collect()],
            Err(_) => schedule::groups(&allowed)
                .map_err(|e| EncodeError::Unschedulable { pmu: pmu.name().to_string(), why: arch::explain(pmu, &mine, &allowed, &e) })?,
        };
        let sets = local
            .iter()
            .map(|g| arch::encode_set(pmu, &g.iter().map(|&i| mine[i].clone()).collect::<Vec<_>>()))
            .collect::<Result<Vec<_>, _>>()?;
        let groups = local.iter().map(|g| g.iter().map(|&i| events[i]).collect()).collect();
        Ok(Plan { pmu, groups, sets, turn: 0, running: false })
    }

    fn rotates(&self) -> bool {
        self.sets.len() > 1
    }
}

/// Count `sels` on the simulated machine of their PMUs. `progress` is told the cycles
/// done so far.
pub fn stat(catalog: &Catalog, sels: &[EventSel], opts: &StatOptions, progress: &mut dyn FnMut(u64)) -> Result<StatReport, StatError> {
    if opts.cycles == 0 {
        return Err(StatError::NoCycles);
    }
    if opts.mux_interval < MIN_MUX_INTERVAL {
        return Err(StatError::ShortInterval(opts.mux_interval));
    }
    if sels.is_empty() {
        return Err(StatError::NoEvents);
    }
    // Events of each PMU, in order of first appearance.
    let mut by_pmu: Vec<(&Pmu, Vec<usize>)> = Vec::new();
    for (i, s) in sels.iter().enumerate() {
        let pmu =
            catalog.pmu(s.pmu).map_err(|e| StatError::Encode(EncodeError::Unschedulable { pmu: s.pmu.to_string(), why: e.to_string() }))?;
        match by_pmu.iter_mut().find(|(p, _)| p.name() == pmu.name()) {
            Some((_, v)) => v.push(i),
            None => by_pmu.push((pmu, vec![i])),
        }
    }
    let pmus: Vec<&Pmu> = by_pmu.iter().map(|(p, _)| *p).collect();
    let (mut driver, profile) = machine_for(catalog, &pmus)?;
    let mut plans = by_pmu.into_iter().map(|(p, events)| Plan::new(p, sels, events)).collect::<Result<Vec<_>, _>>()?;
    let mut cursor = Cursor::new(workloads::blocks(&opts.workload, opts.seed, profile)?);

    let mut counts = vec![Count { raw: 0, enabled: 0, running: 0 }; sels.len()];
    let mut counters: Vec<Vec<String>> = vec![Vec::new(); sels.len()];
    // A PMU with several groups rotates them every interval, as perf does per PMU.
    let slice = if plans.iter().any(Plan::rotates) { opts.mux_interval } else { 1 << 26 };
    let mut elapsed = 0;
    while elapsed < opts.cycles {
        for plan in plans.iter_mut().filter(|p| !p.running) {
            driver.start(&plan.sets[plan.turn]);
            plan.running = true;
        }
        let ran = driver.run(&mut cursor, slice.min(opts.cycles - elapsed));
        elapsed += ran;
        let last = elapsed >= opts.cycles || ran == 0;
        for plan in plans.iter_mut() {
            let g = plan.turn;
            for &event in &plan.groups[g] {
                counts[event].running += ran;
            }
            if plan.rotates() || last {
                let values = driver.stop(plan.pmu.name());
                for ((&event, value), placed) in plan.groups[g].iter().zip(values).zip(&plan.sets[g].events) {
                    counts[event].raw += value;
                    if !counters[event].iter().any(|c| c == placed.counter) {
                        counters[event].push(placed.counter.to_string());
                    }
                }
                plan.running = false;
                plan.turn = (plan.turn + 1) % plan.sets.len();
            }
        }
        for c in counts.iter_mut() {
            c.enabled += ran;
        }
        progress(elapsed);
        if ran == 0 {
            break;
        }
    }

    let events: Vec<EventResult> = sels.iter().zip(&counts).zip(counters).map(|((s, c), ctr)| EventResult::new(s.name(), c, ctr)).collect();
    let mut notes: Vec<String> = sels.iter().flat_map(|s| s.warnings.iter().cloned()).collect();
    notes.extend(driver.notes());
    for plan in plans.iter().filter(|p| p.rotates()) {
        notes.push(format!(
            "{} events need {} counter groups on {}: multiplexed every {} cycles; scaled counts are estimates (count x enabled / running)",
            plan.groups.iter().map(Vec::len).sum::<usize>(),
            plan.sets.len(),
            plan.pmu.name(),
            opts.mux_interval
        ));
    }
    if sels.iter().any(|s| s.modifier("d") == Some(1)) {
        notes.push("CPU_CYCLES:d counts CCNT with PMCR.D set: one count per 64 cycles".to_string());
    }
    let mut metrics = Vec::new();
    for pmu in &pmus {
        metrics.extend(evaluate_metrics(&arch::family(pmu).metrics.metrics, &events, elapsed, &mut notes));
    }
    Ok(StatReport {
        pmu: pmus.iter().map(|p| p.name()).collect::<Vec<_>>().join(","),
        workload: opts.workload.clone(),
        seed: opts.seed,
        cycles: elapsed,
        elapsed_ns: elapsed * (1_000_000_000 / CLOCK_HZ),
        events,
        metrics,
        notes,
    })
}
