//! `pmu stat` on the simulated machine: schedule the events, program the model
//! through its driver, run a workload, multiplex when the events do not fit the
//! counters together, and report perf-style counts and derived metrics.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use pmukit_arch::{self as arch, Catalog, CatalogError, EncodeError, EncodedSet, SetOptions};
use pmukit_core::count::Count;
use pmukit_core::event_string::EventSel;
use pmukit_core::pmu::Pmu;
use pmukit_core::report::{evaluate_metrics, evaluate_unit_metrics, Aggregation, CountGroup, EventResult, Interval, StatReport, Unit};
use thiserror::Error;

use crate::machine::overrides::MachineConfigError;
use crate::models::kt::KtConfig;
use crate::models::sun4v::ConfigError;
use crate::program::builtin::{UnknownWorkload, DEFAULT_WORKLOAD};
use crate::program::trace::{Running, TraceError, TraceStatus};

pub mod assumed;
mod metrics;
mod source;

pub use metrics::evaluate;
pub use source::{blocks, trace_name, Blocks, Reads, Stream};
pub(crate) use source::{montecito_config, threads};

use source::machine_for;

/// The simulated clock: 1 GHz, so one cycle is one nanosecond of enabled/running time.
pub const CLOCK_HZ: u64 = 1_000_000_000;

/// Simulated cycles as nanoseconds of simulated time.
fn nanoseconds(cycles: u64) -> u64 {
    cycles * (1_000_000_000 / CLOCK_HZ)
}

/// Shorter rotation slices would spend the run reprogramming counters.
pub const MIN_MUX_INTERVAL: u64 = 1000;

/// Multiplexing rotations a run may make: each reprograms the counters through the
/// driver (about 13 µs measured: 10^6 rotations added 13 s to a 10^9-cycle ARM1176
/// run), so this bounds that overhead at about two minutes. perf at its 4 ms interval
/// rotates this often in eleven hours.
pub const MAX_ROTATIONS: u64 = 10_000_000;

/// The longest stretch of cycles a run simulates before it looks at its stop flag
/// (Ctrl-C): a millisecond of simulated time, which the slowest machine (Montecito on
/// `stream`, about 10^7 cycles a second) runs in about 0.1 s.
pub(crate) const STOP_CHECK: u64 = 1 << 20;

/// perf's default multiplexing interval (perf_event_mux_interval_ms = 4), in cycles.
pub const DEFAULT_MUX_INTERVAL: u64 = 4 * CLOCK_HZ / 1000;

/// The multiplexing interval of a running program (`pmu stat -- PROG`), or of a trace
/// read from standard input or a pipe, without `--mux-interval`: its length is
/// unknown until it ends, so the interval is one a
/// program of 10^6 cycles (a millisecond) still gives a few turns to each of several
/// groups, whose rotations (about 13 µs each) cost 0.13 s per 10^9 cycles.
pub const RUNNING_MUX_INTERVAL: u64 = 100_000;

/// Turns each multiplexing group gets at least when the interval fits the run
/// (`StatOptions::fit_mux`), as far as `MIN_MUX_INTERVAL` allows.
pub const MIN_TURNS: u64 = 8;

#[derive(Debug, Clone)]
pub struct StatOptions {
    pub workload: String,
    pub seed: u64,
    /// Length of the run in simulated cycles.
    pub cycles: u64,
    /// Cycles each multiplexing group counts before the next one takes the counters.
    pub mux_interval: u64,
    /// `mux_interval` is the longest: a run (or trace) too short to give every group
    /// `MIN_TURNS` turns of it rotates them sooner (`pmu stat` without
    /// `--mux-interval`).
    pub fit_mux: bool,
    /// The SPARC KT machine and this guest's rights (`--pmu sparc-kt`).
    pub kt: KtConfig,
    /// Hardware threads (strands, vCPUs) running the workload; `None` for the
    /// machine's own number.
    pub threads: Option<usize>,
    /// Fault injection on machines that model it (ARM11): one parity or TCM error per
    /// this many accesses to each structure; `None` for none.
    pub fault_every: Option<u64>,
    /// A machine configuration file's text and where it came from
    /// (`--machine-config`), overriding the machine's parameters.
    pub machine_config: Option<MachineFile>,
    /// A recorded program to run instead of the workload (`--trace`): a file, or `-`
    /// for standard input.
    pub trace: Option<PathBuf>,
    /// A program counted as it runs (`pmu stat -- PROG` under QEMU), instead of the
    /// workload: a run takes it once, so it cannot be repeated or run ahead to fit the
    /// multiplexing interval.
    pub running: Option<Running>,
    /// Sets of events (indices into the events counted) to count at the same time,
    /// such as a metric's events (`-M`): each stays in one multiplexing group when the
    /// counters allow.
    pub together: Vec<Vec<usize>>,
    /// The derived metrics to compute, by name; `None` for every metric of the PMUs'
    /// tables whose events were counted.
    pub metrics: Option<Vec<String>>,
    /// Report counts every this many cycles as well (`-I`); `None` for totals only.
    pub interval: Option<u64>,
    /// Set (by a Ctrl-C handler, say) to end the run early: the counts so far are
    /// reported, with their enabled and running times.
    pub stop: Option<Arc<AtomicBool>>,
    /// Whether to report each hardware thread's (or shared unit's) counts and metrics
    /// as well as the totals (`-A`, `--per-thread`).
    pub aggregation: Aggregation,
    /// What every set of events counted asks beyond its events: Montecito's event
    /// qualification (`--irange`, `--drange`, `--opc-match32/34`).
    pub set_options: SetOptions,
}

/// The text of a `--machine-config` file.
#[derive(Debug, Clone)]
pub struct MachineFile {
    pub origin: String,
    pub text: String,
}

impl StatOptions {
    /// What the run counts, as the report names it: the trace, the running program or
    /// the workload.
    pub fn program_name(&self) -> String {
        match (&self.trace, &self.running) {
            (Some(path), _) => format!("trace {}", trace_name(path)),
            (None, Some(running)) => running.name.clone(),
            (None, None) => self.workload.clone(),
        }
    }
}

impl Default for StatOptions {
    fn default() -> Self {
        StatOptions {
            workload: DEFAULT_WORKLOAD.to_string(),
            seed: 1,
            cycles: 1_000_000_000,
            mux_interval: DEFAULT_MUX_INTERVAL,
            fit_mux: false,
            kt: KtConfig::default(),
            threads: None,
            fault_every: None,
            machine_config: None,
            trace: None,
            running: None,
            together: Vec::new(),
            metrics: None,
            interval: None,
            stop: None,
            aggregation: Aggregation::Total,
            set_options: SetOptions::default(),
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
    #[error("cannot build the simulated machine: {0}")]
    Machine(#[from] ConfigError),
    #[error("{machine} runs 1 to {max} hardware threads, not {threads}{}", if *machine == "montecito-st" { " (use --pmu montecito for two threads)" } else { "" })]
    Threads { machine: &'static str, threads: usize, max: usize },
    #[error("--cycles must be at least 1")]
    NoCycles,
    #[error("a running program is counted once, as it runs: it cannot be run again (-r) or ahead of the count")]
    RunOnce,
    #[error(transparent)]
    MachineConfig(#[from] MachineConfigError),
    #[error(transparent)]
    Trace(#[from] TraceError),
    #[error("faults cannot be injected every 0 accesses: give a rate above 0 and at most 1")]
    NoFaults,
    #[error("the {machine} machine has no hardware errors to inject (--fault-rate works on ARM11: parity and TCM errors, and Montecito: write data queue ECC errors)")]
    NoFaultModel { machine: &'static str },
    #[error("the multiplexing interval must be at least {MIN_MUX_INTERVAL} cycles (1 µs at the simulated 1 GHz; perf's default is 4 ms), not {0}")]
    ShortInterval(u64),
    #[error(
        "the events need multiplexing, and --cycles / --mux-interval would rotate their groups {rotations} times: at most {MAX_ROTATIONS} \
         (each rotation reprograms the counters, about 13 µs); give --mux-interval {least} or more, or fewer --cycles"
    )]
    TooManyRotations { rotations: u64, least: u64 },
    #[error(
        "{pmu} has no event address registers or trace buffer: `pmu record` samples with Montecito's (--pmu montecito or montecito-st)"
    )]
    NoCapture { pmu: String },
    #[error("the sampling period must be 1 to {max} events (a count from -period must fit the 47-bit counters), not {period}")]
    Period { period: u64, max: u64 },
    #[error("the Montecito model refused the recording driver: {0}")]
    Model(#[from] crate::models::montecito::MontecitoError),
    #[error(
        "-c {period} over {cycles} cycles could take up to {bound} samples (each event's wraps at its most per cycle, Table 4-42, on \
         every thread), more than the {cap} a recording holds ({size}, docs/record.md); give -c {fits} or more, or fewer --cycles"
    )]
    TooManySamples { period: u64, cycles: u64, bound: u128, cap: u64, size: String, fits: u128 },
    #[error("cannot write the recording: {0}")]
    Write(String),
}

/// One PMU's share of a run: its events, their multiplexing groups and encodings.
struct Plan<'a> {
    pmu: &'a Pmu,
    groups: Vec<Vec<usize>>,
    sets: Vec<EncodedSet>,
    /// How many events the groups hold (one may be in several).
    events: usize,
    turn: usize,
    running: bool,
    /// Cycles the current group has counted since it started.
    ran: u64,
    /// The parts of the machine that count this PMU's events apart.
    units: Vec<Unit>,
}

impl<'a> Plan<'a> {
    /// The plan for `events` (indices into `sels`) of `pmu`; `together` are sets of
    /// indices into `sels` to keep in one group. Also gives the sets that could not be.
    fn new(
        pmu: &'a Pmu,
        sels: &[EventSel],
        events: Vec<usize>,
        together: &[Vec<usize>],
        opts: &StatOptions,
    ) -> Result<(Plan<'a>, Vec<usize>), StatError> {
        let mine: Vec<EventSel> = events.iter().map(|&i| sels[i].clone()).collect();
        // This PMU's part of each set, as positions in `mine`.
        let local: Vec<Vec<usize>> =
            together.iter().map(|set| set.iter().filter_map(|g| events.iter().position(|e| e == g)).collect()).collect();
        let schedule = arch::schedule(pmu, &mine, &local, &opts.set_options)?;
        let groups = schedule.groups.iter().map(|g| g.events.iter().map(|&i| events[i]).collect()).collect();
        let sets = schedule.groups.into_iter().map(|g| g.set).collect();
        Ok((Plan { pmu, groups, sets, events: schedule.events, turn: 0, running: false, ran: 0, units: Vec::new() }, schedule.apart))
    }

    fn rotates(&self) -> bool {
        self.sets.len() > 1
    }
}

/// Each event's count on each unit of its PMU, `None` until the unit counts it.
type UnitCounts = Vec<Vec<Option<u64>>>;

/// Count `sels` on the simulated machine of their PMUs, keeping each interval (`-I`)
/// in the report. `progress` is told the cycles done so far.
pub fn stat(catalog: &Catalog, sels: &[EventSel], opts: &StatOptions, progress: &mut dyn FnMut(u64)) -> Result<StatReport, StatError> {
    let mut intervals = Vec::new();
    let mut report = stat_with(catalog, sels, opts, progress, &mut |iv| intervals.push(iv))?;
    report.intervals = intervals;
    evaluate(catalog, opts, &mut report);
    Ok(report)
}

/// Count `sels` on the simulated machine of their PMUs, handing each interval (`-I`)
/// to `on_interval` as it ends instead of keeping it: memory does not grow with the
/// number of intervals. `progress` is told the cycles done so far.
pub fn stat_with(
    catalog: &Catalog,
    sels: &[EventSel],
    opts: &StatOptions,
    progress: &mut dyn FnMut(u64),
    on_interval: &mut dyn FnMut(Interval),
) -> Result<StatReport, StatError> {
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
    let names: Vec<&str> = pmus.iter().map(|p| p.name()).collect();
    let defs = metrics::definitions(catalog, &names);
    // Each metric's events are counted in one group where they fit.
    let together = metrics::together(&defs, sels, opts);
    let mut plans = Vec::new();
    let mut apart: Vec<usize> = Vec::new();
    for (p, events) in by_pmu {
        let (plan, split) = Plan::new(p, sels, events, &together, opts)?;
        plans.push(plan);
        // Only the sets `-M` asked for are worth a note: the others' metrics say
        // they are estimates.
        apart.extend(split.into_iter().filter(|&k| k < opts.together.len()));
    }
    apart.sort_unstable();
    apart.dedup();
    let turns = plans.iter().map(|p| p.sets.len() as u64).max().unwrap_or(1);
    let mux_interval = if opts.fit_mux && turns > 1 { fitted_interval(&pmus, opts, turns)? } else { opts.mux_interval };
    // A running program's rotations are bounded by its length, which only it knows.
    let rotations = opts.cycles / mux_interval;
    if plans.iter().any(Plan::rotates) && rotations > MAX_ROTATIONS && opts.running.is_none() {
        return Err(StatError::TooManyRotations { rotations, least: opts.cycles.div_ceil(MAX_ROTATIONS) });
    }
    let mut driver = machine_for(catalog, &pmus, opts)?;
    for plan in &mut plans {
        plan.units = driver.units(plan.pmu.name());
    }
    let (stream, trace) = blocks(&pmus, opts, Reads::of(sels))?;
    let mut position = stream.start();

    let split = opts.aggregation != Aggregation::Total;
    let mut counts = vec![Count { raw: 0, enabled: 0, running: 0 }; sels.len()];
    // With split counts, each event's count per unit of its PMU (`None` until a unit
    // counts it), and the PMU's plan.
    let mut unit_raw: UnitCounts = vec![Vec::new(); sels.len()];
    let mut plan_of = vec![0; sels.len()];
    let mut counters: Vec<Vec<String>> = vec![Vec::new(); sels.len()];
    // Whether the event's group had a turn, and whether the machine accepted it then.
    let mut tried = vec![false; sels.len()];
    let mut programmed = vec![false; sels.len()];
    // A PMU with several groups rotates them every interval, as perf does per PMU.
    let slice = if plans.iter().any(Plan::rotates) { mux_interval } else { u64::MAX };
    let interval = opts.interval.filter(|&i| i > 0);
    // What each group counted in its turns: its events' raw counts and its time.
    let mut groups: Vec<CountGroup> =
        plans.iter().flat_map(|p| p.groups.iter().map(|g| CountGroup { events: g.clone(), raw: vec![0; g.len()], running: 0 })).collect();
    let first_group: Vec<usize> = plans.iter().scan(0, |at, p| Some(std::mem::replace(at, *at + p.groups.len()))).collect();
    // The cumulative counts at the end of the interval before (`-I`).
    let mut before = (0, vec![Count { raw: 0, enabled: 0, running: 0 }; sels.len()], vec![Vec::new(); sels.len()], groups.clone());
    let mut next_boundary = interval.unwrap_or(u64::MAX);
    // Cycles since the groups last rotated.
    let mut since_rotation = 0;
    let mut interrupted = false;
    let mut elapsed = 0;
    while elapsed < opts.cycles {
        for plan in plans.iter_mut().filter(|p| !p.running) {
            driver.start(&plan.sets[plan.turn]);
            plan.running = true;
        }
        // The run stops at least every STOP_CHECK cycles to look at the stop flag.
        let want = (slice - since_rotation).min(opts.cycles - elapsed).min(next_boundary - elapsed).min(STOP_CHECK);
        let ran = position.run(&mut *driver, want);
        elapsed += ran;
        since_rotation += ran;
        let stopped = opts.stop.as_ref().is_some_and(|s| s.load(Ordering::Relaxed));
        let last = elapsed >= opts.cycles || ran == 0 || stopped;
        let rotate = since_rotation >= slice;
        let boundary = elapsed >= next_boundary;
        if rotate {
            since_rotation = 0;
        }
        for (p, plan) in plans.iter_mut().enumerate() {
            let g = plan.turn;
            plan.ran += ran;
            // Counts are read when the groups rotate, at an interval's end and at the
            // end of the run; only a rotation moves to the next group.
            if (plan.rotates() && rotate) || boundary || last {
                let values = driver.stop(plan.pmu.name());
                let group = &mut groups[first_group[p] + g];
                group.running += plan.ran;
                // An event the machine refused to count was not running.
                for (((&event, value), placed), in_group) in plan.groups[g].iter().zip(values).zip(&plan.sets[g].events).zip(&mut group.raw)
                {
                    tried[event] = true;
                    plan_of[event] = p;
                    let Some(value) = value else { continue };
                    programmed[event] = true;
                    let sum = value.iter().map(|&(_, n)| n).sum::<u64>();
                    counts[event].raw += sum;
                    *in_group += sum;
                    if split {
                        let mine = &mut unit_raw[event];
                        mine.resize(plan.units.len(), None);
                        for (u, n) in value {
                            *mine[u].get_or_insert(0) += n;
                        }
                    }
                    counts[event].running += plan.ran;
                    // On shared counters an event reads every counter it may use.
                    let used = if plan.pmu.desc.shared_counters { &placed.counters[..] } else { std::slice::from_ref(&placed.counter) };
                    for c in used {
                        if !counters[event].iter().any(|have| have == c) {
                            counters[event].push(c.to_string());
                        }
                    }
                }
                plan.ran = 0;
                plan.running = false;
                if plan.rotates() && rotate {
                    plan.turn = (plan.turn + 1) % plan.sets.len();
                }
            }
        }
        for c in counts.iter_mut() {
            c.enabled += ran;
        }
        if let Some(every) = interval.filter(|_| boundary || last) {
            // Each interval: the counts since the one before, scaled by its own enabled
            // and running times, and its metrics (their notes would repeat the run's).
            let events: Vec<EventResult> = (0..sels.len())
                .map(|i| {
                    let (now, was) = (&counts[i], &before.1[i]);
                    let delta = Count { raw: now.raw - was.raw, enabled: now.enabled - was.enabled, running: now.running - was.running };
                    let units: Vec<Option<u64>> = unit_raw[i]
                        .iter()
                        .enumerate()
                        .map(|(u, now)| now.map(|n| n - before.2[i].get(u).copied().flatten().unwrap_or(0)))
                        .collect();
                    let e = event_result(&sels[i], &delta, counters[i].clone(), programmed[i] || !tried[i]);
                    if split {
                        e.with_units(units_of(&plans[plan_of[i]].units, &units))
                    } else {
                        e
                    }
                })
                .collect();
            let since: Vec<CountGroup> = groups
                .iter()
                .zip(&before.3)
                .map(|(now, was)| CountGroup {
                    events: now.events.clone(),
                    raw: now.raw.iter().zip(&was.raw).map(|(n, w)| n - w).collect(),
                    running: now.running - was.running,
                })
                .collect();
            let duration = nanoseconds(elapsed - before.0);
            let only = opts.metrics.as_deref();
            let metrics = evaluate_metrics(&defs, only, &events, &since, duration, &mut Vec::new());
            let unit_metrics = if split { evaluate_unit_metrics(&defs, only, &events, duration) } else { Vec::new() };
            on_interval(Interval { time_ns: nanoseconds(elapsed), events, metrics, unit_metrics });
            before = (elapsed, counts.clone(), unit_raw.clone(), groups.clone());
            next_boundary = next_boundary.saturating_add(every);
        }
        progress(elapsed);
        if ran == 0 || stopped {
            interrupted = stopped && elapsed < opts.cycles;
            break;
        }
    }

    // A trace that turned out malformed part-way gives no report, only the error.
    if let Some(e) = trace.as_ref().and_then(TraceStatus::error) {
        return Err(StatError::Trace(e));
    }
    // An event whose group never had a turn is "not counted"; one the machine refused
    // whenever its group had one is "not supported".
    let result = |i: usize, count: &Count, raw: &[Option<u64>], counters: Vec<String>, supported: bool| {
        let e = event_result(&sels[i], count, counters, supported);
        if split {
            e.with_units(units_of(&plans[plan_of[i]].units, raw))
        } else {
            e
        }
    };
    let events: Vec<EventResult> =
        counters.into_iter().enumerate().map(|(i, ctr)| result(i, &counts[i], &unit_raw[i], ctr, programmed[i] || !tried[i])).collect();
    let mut notes: Vec<String> = sels.iter().flat_map(|s| s.warnings.iter().cloned()).collect();
    if interrupted {
        notes.push(format!("interrupted after {elapsed} of {} cycles: the counts are those of the cycles run", opts.cycles));
    }
    notes.extend(driver.notes());
    // What each set's set-wide registers do (qualification, capture), once each.
    for note in plans.iter().flat_map(|p| p.sets.iter().flat_map(|s| s.notes.iter())) {
        if !notes.contains(note) {
            notes.push(note.clone());
        }
    }
    for plan in plans.iter().filter(|p| p.rotates()) {
        notes.push(format!(
            "{} events need {} counter groups on {}: multiplexed every {} cycles; scaled counts are estimates (count x enabled / running)",
            plan.events,
            plan.sets.len(),
            plan.pmu.name(),
            mux_interval
        ));
    }
    // Groups the run ended before: their events say `<not counted>`, and why.
    let unturned: Vec<String> = groups
        .iter()
        .filter(|g| g.running == 0)
        .flat_map(|g| g.events.iter().filter(|&&e| !tried[e]).filter_map(|&e| sels.get(e)).map(EventSel::name))
        .fold(Vec::new(), |mut names, n| {
            if !names.contains(&n) {
                names.push(n);
            }
            names
        });
    if !unturned.is_empty() && !interrupted {
        notes.push(format!(
            "{} not counted: the run's {elapsed} cycles ended before their group's turn (groups take turns of {mux_interval} cycles); \
             a shorter --mux-interval (at least {MIN_MUX_INTERVAL}) or a longer run gives every group a turn",
            unturned.join(", ") + if unturned.len() == 1 { " was" } else { " were" }
        ));
    }
    for &k in &apart {
        let names: Vec<String> = opts.together.get(k).into_iter().flatten().filter_map(|&i| sels.get(i)).map(EventSel::name).collect();
        let note = format!(
            "{} cannot be counted at the same time (too few counters, or the PMU's rules): metrics over them are estimates",
            names.join(", ")
        );
        if !notes.contains(&note) {
            notes.push(note);
        }
    }
    if sels.iter().any(|s| s.modifier("d") == Some(1)) {
        notes.push("CPU_CYCLES:d counts CCNT with PMCR.D set: one count per 64 cycles".to_string());
    }
    Ok(StatReport {
        pmu: pmus.iter().map(|p| p.name().to_string()).collect(),
        workload: opts.program_name(),
        seed: opts.seed,
        cycles: elapsed,
        elapsed_ns: nanoseconds(elapsed),
        runs: 1,
        intervals: Vec::new(),
        aggregation: opts.aggregation,
        events,
        // Derived from the counts by `evaluate`, after `-r`'s runs are averaged.
        metrics: Vec::new(),
        unit_metrics: Vec::new(),
        notes,
        groups,
        live: None,
    })
}

/// The multiplexing interval that gives each of `turns` groups `MIN_TURNS` turns in
/// the run (at most `mux_interval`, at least `MIN_MUX_INTERVAL`): a trace's run is as
/// long as the trace, which the machine runs once without counting to learn.
fn fitted_interval(pmus: &[&Pmu], opts: &StatOptions, turns: u64) -> Result<u64, StatError> {
    let cycles = match (&opts.trace, &opts.running) {
        (Some(path), _) if source::rereadable(path) => blocks(pmus, opts, Reads::ALL)?.0.cycles(opts.cycles),
        // A running program's length is known only at its end, and so is that of a
        // trace from a pipe, which the first pass would use up.
        (Some(_), _) | (None, Some(_)) => return Ok(RUNNING_MUX_INTERVAL.min(opts.mux_interval)),
        (None, None) => opts.cycles,
    };
    Ok((cycles / (turns * MIN_TURNS)).clamp(MIN_MUX_INTERVAL, opts.mux_interval.max(MIN_MUX_INTERVAL)))
}

/// An event's result, with the event as typed where that is not its name (`r7`).
fn event_result(sel: &EventSel, count: &Count, counters: Vec<String>, supported: bool) -> EventResult {
    let mut e = EventResult::new(sel.pmu, sel.name(), count, counters, supported);
    let typed = sel.input.trim();
    let typed = typed.split_once("::").filter(|(pmu, _)| pmu.eq_ignore_ascii_case(sel.pmu)).map_or(typed, |(_, rest)| rest);
    if !typed.eq_ignore_ascii_case(&e.name) {
        e.input = Some(typed.to_string());
    }
    e
}

/// An event's units and their counts: those that counted it, or, if none did, every
/// hardware thread of its PMU (every unit of one with none, such as a memory
/// controller's) with no count.
fn units_of(units: &[Unit], raw: &[Option<u64>]) -> Vec<(Unit, Option<u64>)> {
    if raw.iter().any(Option::is_some) {
        return units.iter().zip(raw).filter(|(_, r)| r.is_some()).map(|(u, &r)| (u.clone(), r)).collect();
    }
    let threads = units.iter().any(|u| u.thread.is_some());
    units.iter().filter(|u| !threads || u.thread.is_some()).map(|u| (u.clone(), None)).collect()
}
