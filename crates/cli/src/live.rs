//! `pmu stat --live`: count a real command, or every CPU, through the kernel's
//! perf_event (pmukit-live), and print the report as a simulated run's.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use pmukit_arch::{metrics, Catalog};
use pmukit_core::pmu::Pmu;
use pmukit_live::events::Host;
use pmukit_live::sysfs;

use crate::failure::{runtime, usage, Failure};
use crate::output::Out;
use crate::stat::StatArgs;

/// The options of live counting.
#[derive(Args)]
#[command(next_help_heading = "Live counting (Linux perf_event; docs/perf.md)")]
pub struct LiveArgs {
    /// Count a real program through the kernel's perf_event instead of the simulated
    /// machine: the COMMAND after `--`, with every process and thread it starts (or
    /// with -a every CPU). Events are perf's generic ones (task-clock, cycles, …) and,
    /// where the machine's PMU is pmukit's (a Raspberry Pi's armv6_1176, a SPARC T4's
    /// cpu with --pmu sparc-t4), pmukit's own. pmu exits with the command's status.
    ///
    /// perf's generic events: cycles, instructions, cache-references, cache-misses,
    /// branches, branch-misses, bus-cycles, stalled-cycles-frontend,
    /// stalled-cycles-backend, ref-cycles (the core PMU's, mapped by its driver);
    /// task-clock, cpu-clock, page-faults, minor-faults, major-faults,
    /// context-switches, cpu-migrations, alignment-faults, emulation-faults (the
    /// kernel's). Also NAME/term=value,…/ for a PMU with format/ in sysfs, rHEX, and
    /// the modifiers :u, :k, :h.
    #[arg(long, conflicts_with_all = ["workload", "seed", "cycles", "mux_interval", "per_thread", "threads", "fault_rate", "trace", "trace_out", "machine_config", "kt_nodes", "kt_deny", "kt_deny_ht", "kt_l2_busy", "irange", "irange2", "drange", "opc_match32", "opc_match34", "inverse_irange", "no_qual_check", "etb_tm_tk", "etb_tm_ntk", "etb_ptm_correct", "etb_ptm_incorrect", "etb_ppm_correct", "etb_ppm_incorrect", "etb_brt_iprel", "etb_brt_ret", "etb_brt_ind"])]
    pub live: bool,
    /// Count every CPU (perf's -a) while COMMAND runs, or for --duration; -A splits
    /// the counts per CPU.
    #[arg(short = 'a', long = "all-cpus", requires = "live")]
    pub all_cpus: bool,
    /// With -a and no command: count for this many seconds (5, 0.5, 1e-1); without,
    /// until Ctrl-C.
    #[arg(long, value_name = "SECONDS", requires = "all_cpus", value_parser = parse_seconds)]
    pub duration: Option<Duration>,
    /// Read the machine's PMUs from this sysfs root instead of /sys (a recorded tree).
    #[arg(long, value_name = "ROOT", requires = "live")]
    pub sysfs: Option<PathBuf>,
    /// The program to count and its arguments, after `--` (any bytes the OS takes).
    /// With --live it runs on this machine; without, an ARM (ARM11 PMUs) or SPARC
    /// (SPARC PMUs) program runs under QEMU user-mode, driving the simulated machine
    /// as it executes (docs/binaries.md).
    #[arg(last = true, value_name = "COMMAND")]
    pub command: Vec<OsString>,
}

/// Seconds as a positive decimal number, at most a year.
fn parse_seconds(text: &str) -> Result<Duration, String> {
    match text.parse::<f64>().ok().filter(|_| !text.starts_with('+')) {
        Some(s) if s > 0.0 && s <= 31_536_000.0 => Ok(Duration::from_secs_f64(s)),
        _ => Err(format!("'{text}' is not a duration: expected seconds above 0 and at most a year, e.g. 5 or 0.5")),
    }
}

/// `pmu stat --live`.
pub fn run(catalog: &Catalog, pmu: Option<&str>, args: &StatArgs, out: &Out) -> Result<(), Failure> {
    let live = &args.live;
    let root = live.sysfs.clone().unwrap_or_else(|| PathBuf::from("/sys"));
    let machine = sysfs::read_machine(&root).map_err(|e| if e.is_unreadable() { runtime(e) } else { usage(e) })?;
    // SPARC's driver registers as `cpu`, as x86's does: on a SPARC build, it is the T4.
    let hint = pmu.or(cfg!(target_arch = "sparc64").then_some("sparc-t4"));
    let host = Host::new(machine, catalog, hint);
    if let Some(name) = pmu.filter(|n| !host.ours.iter().any(|(p, _)| p.name() == *n)) {
        let have: Vec<&str> = host.machine.pmus.iter().map(|p| p.name.as_str()).collect();
        return Err(usage(format!(
            "--pmu {name}: this machine has no {name} ({} lists {}); pmukit counts live on ARM1136/1176 (armv6_1136, armv6_1176) and SPARC T4 (cpu)",
            root.join("bus/event_source/devices").display(),
            have.join(", ")
        )));
    }
    if args.no_aggr && !live.all_cpus {
        return Err(usage("-A splits a system-wide count per CPU: give -a too (a command's counts are its own, not a CPU's)"));
    }
    if live.command.is_empty() && !live.all_cpus {
        return Err(usage(
            "--live counts a command: pmu stat --live [-e EVENTS] -- COMMAND [ARGS], or every CPU with -a [--duration SECONDS]",
        ));
    }
    let ours: Vec<&Pmu> = host.ours.iter().map(|(p, _)| *p).collect();
    let mut chosen: Vec<metrics::Metric> = Vec::new();
    for name in &args.metric_names {
        if ours.is_empty() {
            return Err(usage(format!("-M {name}: metrics are pmukit's PMUs', and this machine has none of them")));
        }
        for m in metrics::select(catalog, &ours, name.trim())? {
            if !chosen.iter().any(|c| std::ptr::eq(c.def, m.def) && c.pmu == m.pmu) {
                chosen.push(m);
            }
        }
    }
    let mut tokens = match (args.events().is_empty(), chosen.is_empty()) {
        (true, true) => host.default_events(),
        (true, false) => Vec::new(),
        (false, _) => args.events(),
    };
    // Each metric's events, added once, and opened in one group where they fit.
    let mut together = Vec::new();
    for m in &chosen {
        let mut set = Vec::new();
        for sel in &m.events {
            let name = format!("{}::{}", sel.pmu, sel.name());
            let at = match tokens
                .iter()
                .position(|t| host.resolve(catalog, t).ok().and_then(|e| e.ours).is_some_and(|(_, s)| s.name() == sel.name()))
            {
                Some(i) => i,
                None => {
                    tokens.push(name);
                    tokens.len() - 1
                }
            };
            set.push(at);
        }
        together.push(set);
    }
    let plan = host.plan(catalog, &tokens, &together)?;
    report(&host, &plan, &chosen, args, out)
}

#[cfg(all(target_os = "linux", feature = "live"))]
fn report(host: &Host, plan: &pmukit_live::events::Plan, chosen: &[metrics::Metric], args: &StatArgs, out: &Out) -> Result<(), Failure> {
    use std::io::Write as _;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    use pmukit_core::report::{
        evaluate_metrics, shadow_metrics, unit_metrics, Aggregation, Average, EventResult, LiveRun, MetricResult, StatReport,
    };
    use pmukit_live::count::{self, LiveError, Target};

    let live = &args.live;
    let cpus = if live.all_cpus {
        let online =
            host.machine.online.clone().unwrap_or_else(|| (0..std::thread::available_parallelism().map_or(1, |n| n.get())).collect());
        Some(online)
    } else {
        None
    };
    crate::stat::check_runs(args)?;
    // The output is made (and so checked) before the command runs.
    let mut printer = crate::printer::Printer::new(args)?;
    // Ctrl-C reaches the command too; pmu waits for it and prints what was counted.
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let _ = ctrlc::set_handler(move || flag.store(true, Ordering::Relaxed));
    let interval = args.interval.map(Duration::from_millis);
    let target = Target { command: &live.command, cpus, duration: live.duration, per_cpu: args.no_aggr, interval };
    let defs: Vec<_> = host
        .ours
        .iter()
        .flat_map(|(pmu, _)| pmukit_arch::family(pmu).metrics.metrics.iter())
        .filter(|d| chosen.is_empty() || chosen.iter().any(|m| std::ptr::eq(m.def, *d)))
        .cloned()
        .collect();
    // perf's shadow metrics of its generic and software events, then the PMU's.
    let metrics_of = |events: &[EventResult], wall_ns: u64, notes: &mut Vec<String>| -> Vec<MetricResult> {
        let mut metrics = shadow_metrics(events, wall_ns);
        metrics.extend(evaluate_metrics(&defs, None, events, &[], wall_ns, notes));
        metrics
    };
    let aggregation = if args.no_aggr && live.all_cpus { Aggregation::Cpu } else { Aggregation::Total };
    let command: Vec<String> = live.command.iter().map(|a| a.to_string_lossy().into_owned()).collect();
    // What an interval's head says of the run (perf prints no title over them).
    let frame = StatReport {
        pmu: Vec::new(),
        workload: if live.all_cpus { "system wide".to_string() } else { command.join(" ") },
        seed: 0,
        cycles: 0,
        elapsed_ns: 0,
        runs: 1,
        intervals: Vec::new(),
        aggregation,
        events: Vec::new(),
        metrics: Vec::new(),
        unit_metrics: Vec::new(),
        notes: Vec::new(),
        groups: Vec::new(),
        live: Some(LiveRun { command, system_wide: live.all_cpus, exit_status: None, user_ns: 0, sys_ns: 0, elapsed_noise_pct: None }),
    };
    let mut before = 0;
    let mut on_interval = |mut iv: pmukit_core::report::Interval| {
        let duration = iv.time_ns.saturating_sub(before);
        before = iv.time_ns;
        iv.metrics = metrics_of(&iv.events, duration, &mut Vec::new());
        if args.no_aggr {
            iv.unit_metrics = unit_metrics(&iv.events, |mine| metrics_of(mine, duration, &mut Vec::new()));
        }
        printer.interval(&frame, iv);
    };
    // -r runs the command again and again, as perf does, and averages the counts.
    let mut average = Average::new();
    let mut last = None;
    for _ in 0..args.repeat {
        let run = count::count(plan, &target, &stop, &mut on_interval).map_err(|e| match e {
            LiveError::Usage(_) => usage(e),
            _ => runtime(e),
        })?;
        last = run.live.as_ref().and_then(|l| l.exit_status);
        average.add(run);
        if stop.load(Ordering::Relaxed) {
            break;
        }
    }
    let mut report = average.finish().ok_or_else(|| usage("no run completed"))?;
    if let Some(live) = &mut report.live {
        live.exit_status = last;
    }
    report.metrics = metrics_of(&report.events, report.elapsed_ns, &mut report.notes);
    if args.no_aggr {
        report.unit_metrics = unit_metrics(&report.events, |mine| metrics_of(mine, report.elapsed_ns, &mut Vec::new()));
    }
    let status = report.live.as_ref().and_then(|l| l.exit_status);
    printer.finish(report, out)?;
    let _ = std::io::stdout().flush();
    // perf stat exits with the command's status; a system-wide count Ctrl-C ended says
    // so (128 + SIGINT), as a simulated run does.
    match status {
        Some(code) if code != 0 => crate::outfile::exit(code),
        None if stop.load(Ordering::Relaxed) => crate::outfile::exit(130),
        _ => Ok(()),
    }
}

#[cfg(not(all(target_os = "linux", feature = "live")))]
fn report(
    _host: &Host,
    _plan: &pmukit_live::events::Plan,
    _chosen: &[metrics::Metric],
    _args: &StatArgs,
    _out: &Out,
) -> Result<(), Failure> {
    Err(runtime("this pmu was built without live counting: it needs Linux and the `live` feature (cargo build --features live)"))
}
