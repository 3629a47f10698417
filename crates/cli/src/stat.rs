//! `pmu stat`: its options, and the run from event strings and metric names to the
//! printed report.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use clap::Args;
use pmukit_arch::sparc::kt;
use pmukit_arch::{self as arch, metrics, Catalog, DEFAULT_PMU};
use pmukit_core::input;
use pmukit_core::pmu::Pmu;
use pmukit_core::report::{Aggregation, Average, StatReport};
use pmukit_sim::models::kt::KtConfig;
use pmukit_sim::program::builtin as workloads;
use pmukit_sim::program::trace::TraceError;
use pmukit_sim::stat::{self, MachineFile, StatError, StatOptions, DEFAULT_MUX_INTERVAL};

use crate::failure::{runtime, usage, Failure};
use crate::outfile;
use crate::output::Out;
use crate::printer::Printer;
use crate::{parse_count, parse_rate, parse_u64, parse_usize, resolve_all, EventOpts, JsonOpt};

/// A workload's or trace's run without --cycles: a simulated second.
const DEFAULT_CYCLES: u64 = 1_000_000_000;

#[derive(Args)]
pub struct StatArgs {
    #[command(flatten)]
    pub opts: EventOpts,
    #[command(flatten)]
    pub json: JsonOpt,
    /// Events to count, comma-separated (commas inside `NAME/…/` stay) or repeated
    /// (default: cycles, instructions,
    /// branches, mispredicts, data cache accesses and misses; with --live, perf's
    /// default list, with the PMU's own events where the machine's is pmukit's).
    #[arg(short = 'e', long = "event", value_name = "EVENTS")]
    events: Vec<String>,
    /// Built-in workload to run (see `pmu workloads`).
    #[arg(short, long, default_value = workloads::DEFAULT_WORKLOAD, value_parser = crate::names::workloads(), hide_possible_values = true)]
    workload: String,
    /// Seed of the workload's deterministic event stream (the number forms of
    /// --cycles: 1e3, 0x10, 1_000).
    #[arg(long, default_value_t = 1, value_parser = parse_count)]
    seed: u64,
    /// Length of the run in simulated cycles (1 GHz clock); accepts 1e9, 1_000_000,
    /// 0x…. A workload or trace runs 1e9 cycles by default (a trace less when it ends
    /// sooner), a program after -- to its end.
    #[arg(long, value_parser = parse_count)]
    cycles: Option<u64>,
    /// Cycles each multiplexing group counts before the next takes the counters.
    /// Without it, perf's 4 ms (4,000,000 cycles), shortened when the run or trace is
    /// too short to give every group 8 turns (at least 1,000 cycles)
    #[arg(long, value_parser = parse_count)]
    mux_interval: Option<u64>,
    /// CSV-like output as `perf stat -x SEP`: count, unit, event, run time, % running,
    /// metric value, metric unit.
    #[arg(short = 'x', long = "field-separator", value_name = "SEP", conflicts_with = "json", value_parser = parse_separator)]
    pub separator: Option<String>,
    /// Count what these derived metrics or metric groups need and print them
    /// (comma-separated or repeated; `pmu list --metrics` names them). Each metric's
    /// events are counted at the same time when the counters allow.
    #[arg(short = 'M', long = "metrics", value_name = "METRIC|GROUP", value_delimiter = ',')]
    pub metric_names: Vec<String>,
    /// Print only the derived metrics, as columns (perf's --metric-only).
    #[arg(long, conflicts_with = "no_metrics")]
    pub metric_only: bool,
    /// Do not print derived metrics.
    #[arg(long)]
    pub no_metrics: bool,
    /// Run N times, with seeds SEED, SEED+1, … (with --live, the command N times),
    /// and print the mean counts with perf's variance column (the standard deviation
    /// of the mean, in percent).
    #[arg(short = 'r', long = "repeat", value_name = "N", default_value_t = 1, value_parser = parse_u64)]
    pub repeat: u64,
    /// Print the counts of every MS milliseconds of simulated time (1 ms = 10^6
    /// cycles; with --live, of real time, each interval as it ends), each line led
    /// by its time, as `perf stat -I`.
    #[arg(short = 'I', long = "interval-print", value_name = "MS", value_parser = parse_count)]
    pub interval: Option<u64>,
    /// Count each hardware thread apart (strand, virtual CPU, Montecito thread; memory
    /// controllers each on their own) and print a line per thread, led by perf's
    /// `CPU0` column, with each thread's metrics (perf's --no-aggr).
    #[arg(short = 'A', long = "no-aggr", conflicts_with = "per_thread")]
    pub no_aggr: bool,
    /// As -A, with perf's --per-thread labels: the workload's name and thread number
    /// (workload thread N runs on hardware thread N).
    #[arg(long)]
    per_thread: bool,
    /// Print counts without thousands separators.
    #[arg(long)]
    pub no_big_num: bool,
    /// Write the report to FILE instead of standard output (`-` is standard output;
    /// notes of -x output still go to standard error). FILE is made before the run and
    /// replaced whole after it.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Hardware threads of the machine: 1-8 strands on SPARC T4/KT (default 8), 1-4 on
    /// Niagara (4), 1-2 on Montecito (2), 1 on ARM11. Workloads run a software thread
    /// per hardware thread (`os` eight processes, `shared` four threads).
    #[arg(long, value_name = "N", value_parser = parse_usize)]
    threads: Option<usize>,
    /// Inject hardware errors at this rate, e.g. 1e-4; off by default. ARM11: parity
    /// and TCM errors per access to each cache and TCM (events 0x30-0x35, 0x38);
    /// Montecito: ECC errors per write into the bus's write data queue
    /// (SI_WDQ_ECC_ERRORS) and tag errors per snoop of the L2D
    /// (L2D_L3ACCESS_CANCEL.P2_COV_SNP_TEM). SPARC has no error events.
    #[arg(long, value_name = "RATE", value_parser = parse_rate)]
    fault_rate: Option<f64>,
    /// Run a recorded program instead of the workload: Valgrind Lackey
    /// `--trace-mem=yes` output or a native trace (docs/workloads.md); `-` reads
    /// standard input. Every machine runs traces.
    #[arg(long, value_name = "FILE", conflicts_with = "workload")]
    trace: Option<PathBuf>,
    /// With a program after --: write its run as a native trace to FILE as well, to
    /// replay with --trace or share (docs/binaries.md). FILE is replaced whole
    /// after the run.
    #[arg(long, value_name = "FILE", requires = "command")]
    trace_out: Option<PathBuf>,
    /// A TOML file overriding the simulated machine's parameters (cache and TLB
    /// geometry and replacement, predictors, latencies; docs/machines.md lists every
    /// machine's keys, docs/assumptions.md the values no public source gives).
    #[arg(long, value_name = "FILE")]
    machine_config: Option<PathBuf>,
    /// Montecito's event qualification, for every group of the run.
    #[command(flatten)]
    pub qualify: crate::qualify::QualifyOpts,
    /// Counting a real program (--live): last among the options, as its heading would
    /// otherwise carry over to the options after it.
    #[command(flatten)]
    pub live: crate::live::LiveArgs,
    /// SPARC KT: nodes (sockets) of the simulated machine, 1-4 [default: 2]; the
    /// strands are spread over them, so misses to another node's memory count as
    /// remote.
    #[arg(long, value_name = "N", value_parser = parse_usize, help_heading = "SPARC KT machine (--pmu sparc-kt)")]
    kt_nodes: Option<usize>,
    /// SPARC KT: a PerfReg# this guest may not access (kt_get/set_perfreg answer
    /// ENOACCESS); repeat or comma-separate for several.
    #[arg(long, value_name = "PERFREG", value_delimiter = ',', value_parser = parse_u64, help_heading = "SPARC KT machine (--pmu sparc-kt)")]
    kt_deny: Vec<u64>,
    /// SPARC KT: this guest may not set the SPARC PCR's HT bit (ENOACCESS).
    #[arg(long, help_heading = "SPARC KT machine (--pmu sparc-kt)")]
    kt_deny_ht: bool,
    /// SPARC KT: another strand is propagating PERF_CONFIG for the whole run, so
    /// PerfReg# 1 answers EWOULDBLOCK.
    #[arg(long, help_heading = "SPARC KT machine (--pmu sparc-kt)")]
    kt_l2_busy: bool,
}

/// `pmu stat`: resolve the events and metrics, count them on the simulated machine of
/// `pmu` (or the default PMU), and print the report.
pub fn run(catalog: &Catalog, pmu: Option<&str>, args: &StatArgs, out: &Out) -> Result<(), Failure> {
    if args.live.live {
        return crate::live::run(catalog, pmu, args, out);
    }
    let pmu = catalog.pmu(pmu.unwrap_or(DEFAULT_PMU))?;
    let machine: Vec<&Pmu> = arch::machine_pmus(pmu).into_iter().map(|n| catalog.pmu(n)).collect::<Result<_, _>>()?;
    // The KT machine's options describe a machine no other PMU runs on.
    let kt_options = [
        ("--kt-nodes", args.kt_nodes.is_some()),
        ("--kt-deny", !args.kt_deny.is_empty()),
        ("--kt-deny-ht", args.kt_deny_ht),
        ("--kt-l2-busy", args.kt_l2_busy),
    ];
    if let Some((option, _)) = kt_options.iter().find(|(_, given)| *given).filter(|_| pmu.desc.model != kt::MODEL) {
        return Err(usage(format!("{option} describes the SPARC KT machine (--pmu sparc-kt or sparc-kt-dram), not {}'s", pmu.name())));
    }
    let mut chosen: Vec<metrics::Metric> = Vec::new();
    for name in &args.metric_names {
        for m in metrics::select(catalog, &machine, name.trim())? {
            if !chosen.iter().any(|c| std::ptr::eq(c.def, m.def) && c.pmu == m.pmu) {
                chosen.push(m);
            }
        }
    }
    let events = match (args.events.is_empty(), chosen.is_empty()) {
        (true, true) => arch::default_events(pmu),
        (true, false) => Vec::new(),
        (false, _) => args.events(),
    };
    let mut sels = if events.is_empty() { Vec::new() } else { resolve_all(catalog, &events, pmu.name())? };
    // Each metric's events, added once, and counted at the same time where they fit.
    let mut together = Vec::new();
    for m in &chosen {
        let mut set = Vec::new();
        for sel in &m.events {
            let at = match sels.iter().position(|s| s.pmu == sel.pmu && s.name() == sel.name()) {
                Some(i) => i,
                None => {
                    sels.push(sel.clone());
                    sels.len() - 1
                }
            };
            set.push(at);
        }
        together.push(set);
    }
    let kt = KtConfig {
        nodes: args.kt_nodes.unwrap_or(2),
        denied_get: args.kt_deny.clone(),
        denied_set: args.kt_deny.clone(),
        ht_allowed: !args.kt_deny_ht,
        l2_busy: args.kt_l2_busy,
    };
    let mut opts = StatOptions {
        workload: args.workload.clone(),
        seed: args.seed,
        // A running program ends when it ends.
        cycles: args.cycles.unwrap_or(if crate::guest::running().is_some() { u64::MAX } else { DEFAULT_CYCLES }),
        mux_interval: args.mux_interval.unwrap_or(DEFAULT_MUX_INTERVAL),
        fit_mux: args.mux_interval.is_none(),
        kt,
        threads: args.threads,
        fault_every: args.fault_rate.map(|r| (1.0 / r).round() as u64),
        machine_config: machine_file(args.machine_config.as_deref())?,
        trace: args.trace.clone(),
        running: crate::guest::running(),
        together,
        metrics: if chosen.is_empty() { None } else { Some(chosen.iter().map(|m| m.def.name.to_string()).collect()) },
        interval: args.interval.map(|ms| ms.saturating_mul(stat::CLOCK_HZ / 1000)),
        stop: None,
        aggregation: match (args.no_aggr, args.per_thread) {
            (true, _) => Aggregation::Cpu,
            (_, true) => Aggregation::Thread,
            _ => Aggregation::Total,
        },
        set_options: args.qualify.set_options(),
    };
    check_runs(args)?;
    if args.repeat > 1 && args.seed.checked_add(args.repeat - 1).is_none() {
        return Err(usage(format!(
            "--seed {} with -r {}: the runs' seeds {0}, {0}+1, … would pass 2^64-1; give --seed {} or less",
            args.seed,
            args.repeat,
            u64::MAX - (args.repeat - 1)
        )));
    }
    if args.repeat > 1 && args.trace.is_some() {
        return Err(usage(format!(
            "-r {}: the number of runs must be 1 with --trace: a trace is the same program every run (-r varies the workload's seed)",
            args.repeat
        )));
    }
    let program = &args.live.command;
    if !program.is_empty() {
        if args.trace.is_some() {
            return Err(usage("--trace and a program after --: give one program to count"));
        }
        if args.repeat > 1 {
            return Err(usage(format!("-r {}: a program after -- is counted once, as it runs", args.repeat)));
        }
        // Outside QEMU, with every option checked (the trace's file can be made):
        // start the program under QEMU, where this command runs again and counts it.
        if opts.running.is_none() {
            if let Some(path) = &args.trace_out {
                drop(outfile::Output::create(path, "--trace-out")?);
            }
            return crate::guest::run(pmu, program);
        }
    }
    // The trace of a running program, written as it runs and put in place after.
    let trace_out = match (&args.trace_out, &opts.running) {
        (Some(path), Some(running)) => {
            let shared = Arc::new(std::sync::Mutex::new(outfile::Output::create(path, "--trace-out")?));
            running.write_to(Box::new(SharedOutput(shared.clone())), path.display().to_string());
            Some(shared)
        }
        _ => None,
    };
    // The output is made (and so checked) before any work.
    let mut printer = Printer::new(args)?;
    // Ctrl-C ends the run and prints the counts so far, as perf does; a second one
    // exits at once. Inside QEMU the signal is the program's.
    let stop = if opts.running.is_some() { Arc::new(AtomicBool::new(false)) } else { stop_on_ctrl_c() };
    opts.stop = Some(stop.clone());
    let frame = StatReport {
        pmu: sels.iter().fold(Vec::new(), |mut names: Vec<String>, s| {
            if !names.iter().any(|n| n == s.pmu) {
                names.push(s.pmu.to_string());
            }
            names
        }),
        workload: opts.program_name(),
        seed: opts.seed,
        cycles: opts.cycles,
        elapsed_ns: 0,
        runs: 1,
        intervals: Vec::new(),
        aggregation: opts.aggregation,
        events: Vec::new(),
        metrics: Vec::new(),
        unit_metrics: Vec::new(),
        notes: Vec::new(),
        groups: Vec::new(),
        live: None,
    };
    // Runs are averaged as they end (`-r`): only the sums are kept.
    let mut average = Average::new();
    for k in 0..args.repeat {
        // A bar for runs of about a second or more: Montecito simulates some 5x10^7
        // cycles a second, the other machines 10^8 to 10^9.
        // A running program's length is unknown: no bar.
        let cycles = if opts.running.is_some() { 0 } else { opts.cycles };
        let bar = progress_bar(cycles, if pmu.desc.family == pmukit_arch::montecito::pmu::FAMILY { 20_000_000 } else { 500_000_000 });
        let run = StatOptions { seed: args.seed + k, ..opts.clone() };
        let report = stat::stat_with(
            catalog,
            &sels,
            &run,
            &mut |done| {
                if let Some(b) = &bar {
                    b.set_position(done);
                }
            },
            &mut |iv| printer.interval(&frame, iv),
        )
        .map_err(run_failure)?;
        if let Some(b) = bar {
            b.finish_and_clear();
        }
        let interrupted = stop.load(Ordering::Relaxed);
        // A run cut short by Ctrl-C counts only when it is the only one.
        if !interrupted || average.runs() == 0 {
            average.add(report);
        }
        if interrupted {
            break;
        }
    }
    // A count that ended before its program (--cycles) reports after it, as perf does.
    if let Some(running) = &opts.running {
        running.wait_for_end();
    }
    if let Some(shared) = trace_out {
        // The run has dropped its program, and with it the trace's writer.
        let output = Arc::try_unwrap(shared).ok().and_then(|m| m.into_inner().ok());
        output.ok_or_else(|| runtime("the trace's writer outlived the run"))?.commit()?;
    }
    let mut report = average.finish().ok_or_else(|| usage("no run completed"))?;
    // Metrics come from the (mean) counts, as perf derives them.
    stat::evaluate(catalog, &opts, &mut report);
    printer.finish(report, out)?;
    if stop.load(Ordering::Relaxed) {
        // Interrupted: the report is printed, and the exit status says so (128 + SIGINT).
        outfile::exit(130);
    }
    Ok(())
}

/// An output the running program's trace writer and the command share: the writer
/// writes, the command commits it after the run.
struct SharedOutput(Arc<std::sync::Mutex<outfile::Output>>);

impl std::io::Write for SharedOutput {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().map_err(|_| std::io::Error::other("poisoned"))?.write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.lock().map_err(|_| std::io::Error::other("poisoned"))?.flush()
    }
}

/// The checks of `-I` and `-r` a simulated and a live run share.
pub fn check_runs(args: &StatArgs) -> Result<(), Failure> {
    if args.interval == Some(0) {
        return Err(usage("-I 0: the interval must be at least 1 ms"));
    }
    if args.interval.is_some() && args.repeat > 1 {
        return Err(usage("-I and -r together: -r averages whole runs and -I reports one run's intervals; give one of them"));
    }
    if args.repeat == 0 {
        return Err(usage("-r 0: the number of runs must be at least 1"));
    }
    Ok(())
}

impl StatArgs {
    /// The events given, as [`split_events`] splits them.
    pub fn events(&self) -> Vec<String> {
        split_events(&self.events)
    }
}

/// The `--machine-config` file's text, read once (within its size limit).
pub fn machine_file(path: Option<&Path>) -> Result<Option<MachineFile>, Failure> {
    let Some(file) = path else { return Ok(None) };
    let text = input::read_named(file, &format!("machine configuration {}", file.display()), input::MACHINE_CONFIG)?;
    Ok(Some(MachineFile { origin: file.display().to_string(), text }))
}

/// A flag Ctrl-C sets, so that a simulated run ends early with what it has, as perf
/// does; a second Ctrl-C exits at once (128 + SIGINT).
pub fn stop_on_ctrl_c() -> Arc<AtomicBool> {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let _ = ctrlc::set_handler(move || {
        if flag.swap(true, Ordering::Relaxed) {
            crate::outfile::exit(130);
        }
    });
    stop
}

/// A simulated run's failure: a trace that cannot be read or a recording that cannot
/// be written is the run's (exit 1), anything else the command line's (exit 2).
pub fn run_failure(e: StatError) -> Failure {
    if matches!(e, StatError::Trace(TraceError::Io { .. }) | StatError::Write(_)) {
        runtime(e)
    } else {
        usage(e)
    }
}

/// The events of `-e` options, each split at its commas, as perf splits them: a comma
/// between the slashes of `NAME/term=1,term=2/` separates terms, not events.
pub fn split_events(args: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for arg in args {
        let mut start = 0;
        let mut inside = false;
        for (i, c) in arg.char_indices() {
            match c {
                '/' => inside = !inside,
                ',' if !inside => {
                    out.push(arg[start..i].to_string());
                    start = i + 1;
                }
                _ => {}
            }
        }
        out.push(arg[start..].to_string());
    }
    out
}

/// A progress bar on stderr for runs of `cycles` in a terminal, when they are at least
/// `least` (a few seconds of simulation).
pub fn progress_bar(cycles: u64, least: u64) -> Option<indicatif::ProgressBar> {
    if cycles < least || !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = indicatif::ProgressBar::new(cycles);
    // One line at any width: the bar takes what the text leaves of the terminal's width.
    let style = indicatif::ProgressStyle::with_template("{spinner} {percent:>3}% of {human_len} cycles {wide_bar} {eta} left")
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
    bar.set_style(style);
    Some(bar)
}

/// `-x SEP`: an empty separator would run the fields together.
fn parse_separator(s: &str) -> Result<String, String> {
    if s.is_empty() {
        return Err("the field separator is empty, which would run the fields together: give one, such as -x , or -x ';'".to_string());
    }
    Ok(s.to_string())
}
