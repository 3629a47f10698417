//! `pmu stat` on the simulated machine: schedule the events, program the model
//! through its driver, run a workload, multiplex when the events do not fit the
//! counters together, and report perf-style counts and derived metrics.

use pmukit_arch::{self as arch, arm11, EncodeError};
use pmukit_core::count::Count;
use pmukit_core::event_string::EventSel;
use pmukit_core::pmu::Pmu;
use pmukit_core::report::{evaluate_metrics, EventResult, StatReport};
use pmukit_core::schedule;
use thiserror::Error;

use crate::drivers::arm11::Arm11Driver;
use crate::drivers::Driver;
use crate::stream::Cursor;
use crate::workloads::{self, Profile, UnknownWorkload};

/// The simulated clock: 1 GHz, so one cycle is one nanosecond of enabled/running time.
pub const CLOCK_HZ: u64 = 1_000_000_000;

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
    #[error("{pmu} has no simulated model yet; `pmu stat` can count on: {with_model}")]
    NoModel { pmu: String, with_model: String },
    #[error("no events to count")]
    NoEvents,
    #[error("--cycles must be at least 1")]
    NoCycles,
    #[error("the multiplexing interval must be at least 1 cycle")]
    NoInterval,
}

/// Families with a simulated model and driver.
const MODELLED: &[&str] = &[arm11::FAMILY];

fn driver_for(pmu: &Pmu) -> Result<(Box<dyn Driver>, Profile), StatError> {
    match pmu.desc.family {
        arm11::FAMILY => Ok((Box::new(Arm11Driver::new(pmu.desc.model)), Profile::ARM11)),
        _ => {
            let with_model: Vec<&str> =
                arch::FAMILIES.iter().filter(|f| MODELLED.contains(&f.name)).flat_map(|f| f.pmus.iter().map(|p| p.name)).collect();
            Err(StatError::NoModel { pmu: pmu.name().to_string(), with_model: with_model.join(", ") })
        }
    }
}

/// The events a run counts when none are given: cycles, instructions, branches and
/// misses, which need multiplexing on a two-counter PMU.
pub fn default_events(pmu: &Pmu) -> Vec<String> {
    match pmu.desc.family {
        arm11::FAMILY => ["CPU_CYCLES", "INSTR_EXEC", "BR_EXEC", "BR_MISPREDICT", "DCACHE_HIT", "DCACHE_MISS"].map(String::from).to_vec(),
        _ => Vec::new(),
    }
}

/// Count `sels` on the simulated `pmu`. `progress` is told the cycles done so far.
pub fn stat(pmu: &Pmu, sels: &[EventSel], opts: &StatOptions, progress: &mut dyn FnMut(u64)) -> Result<StatReport, StatError> {
    if opts.cycles == 0 {
        return Err(StatError::NoCycles);
    }
    if opts.mux_interval == 0 {
        return Err(StatError::NoInterval);
    }
    let (mut driver, profile) = driver_for(pmu)?;
    if sels.is_empty() {
        return Err(StatError::NoEvents);
    }
    let allowed = arch::allowed_counters(pmu, sels);
    let groups: Vec<Vec<usize>> = match schedule::assign(&allowed) {
        Ok(_) => vec![(0..sels.len()).collect()],
        Err(_) => schedule::groups(&allowed)
            .map_err(|e| EncodeError::Unschedulable { pmu: pmu.name().to_string(), why: arch::explain(pmu, sels, &allowed, &e) })?,
    };
    let sets = groups
        .iter()
        .map(|g| arch::encode_set(pmu, &g.iter().map(|&i| sels[i].clone()).collect::<Vec<_>>()))
        .collect::<Result<Vec<_>, _>>()?;
    let mut cursor = Cursor::new(workloads::blocks(&opts.workload, opts.seed, profile)?);

    let mut counts = vec![Count { raw: 0, enabled: 0, running: 0 }; sels.len()];
    let mut counters: Vec<Vec<String>> = vec![Vec::new(); sels.len()];
    // One group runs the whole time; several take turns, as perf rotates them.
    let slice = if sets.len() == 1 { 1 << 26 } else { opts.mux_interval };
    let mut elapsed = 0;
    let mut turn = 0;
    let mut started: Option<usize> = None;
    while elapsed < opts.cycles {
        let g = turn % sets.len();
        if started != Some(g) {
            driver.start(&sets[g]);
            started = Some(g);
        }
        let ran = driver.run(&mut cursor, slice.min(opts.cycles - elapsed));
        let last_slice = sets.len() > 1 || elapsed + ran >= opts.cycles || ran == 0;
        if last_slice {
            let values = driver.stop();
            started = None;
            for ((&event, value), placed) in groups[g].iter().zip(values).zip(&sets[g].events) {
                counts[event].raw += value;
                if !counters[event].iter().any(|c| c == placed.counter) {
                    counters[event].push(placed.counter.to_string());
                }
            }
        }
        for &event in &groups[g] {
            counts[event].running += ran;
        }
        for c in counts.iter_mut() {
            c.enabled += ran;
        }
        elapsed += ran;
        turn += 1;
        progress(elapsed);
        if ran == 0 {
            break;
        }
    }

    let events: Vec<EventResult> = sels.iter().zip(&counts).zip(counters).map(|((s, c), ctr)| EventResult::new(s.name(), c, ctr)).collect();
    let mut notes: Vec<String> = sels.iter().flat_map(|s| s.warnings.iter().cloned()).collect();
    notes.extend(driver.notes());
    if sets.len() > 1 {
        notes.push(format!(
            "{} events need {} counter groups on {}: multiplexed every {} cycles; scaled counts are estimates (count x enabled / running)",
            sels.len(),
            sets.len(),
            pmu.name(),
            opts.mux_interval
        ));
    }
    if sels.iter().any(|s| s.modifier("d") == Some(1)) {
        notes.push("CPU_CYCLES:d counts CCNT with PMCR.D set: one count per 64 cycles".to_string());
    }
    let metrics = evaluate_metrics(&arch::family(pmu).metrics.metrics, &events, &[], &mut notes);
    Ok(StatReport {
        pmu: pmu.name().to_string(),
        workload: opts.workload.clone(),
        seed: opts.seed,
        cycles: elapsed,
        elapsed_ns: elapsed * (1_000_000_000 / CLOCK_HZ),
        events,
        metrics,
        notes,
    })
}
