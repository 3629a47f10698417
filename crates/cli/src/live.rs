//! `pmu stat --live`: count a real command, or every CPU, through the kernel's
//! perf_event (pmukit-live), and print the report as a simulated run's.

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
    #[arg(long, conflicts_with_all = ["workload", "seed", "cycles", "mux_interval", "per_thread", "threads", "fault_rate", "trace", "machine_config", "kt_nodes", "kt_deny", "kt_deny_ht", "kt_l2_busy", "irange", "drange", "opc_match32", "opc_match34", "inverse_irange", "no_qual_check"])]
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
    /// The program to count and its arguments, after `--`.
    #[arg(last = true, value_name = "COMMAND", requires = "live")]
    pub command: Vec<String>,
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
    let machine = sysfs::read_machine(&root).map_err(runtime)?;
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
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;

    use pmukit_core::report::{
        evaluate_metrics, shadow_metrics, unit_metrics, Aggregation, EventResult, Interval, MetricResult, StatReport,
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
    // Ctrl-C reaches the command too; pmu waits for it and prints what was counted.
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let _ = ctrlc::set_handler(move || flag.store(true, std::sync::atomic::Ordering::Relaxed));
    if args.repeat == 0 {
        return Err(usage("-r 0: the number of runs must be at least 1"));
    }
    match args.interval {
        Some(0) => return Err(usage("-I 0: the interval must be at least 1 ms")),
        Some(_) if args.repeat > 1 => {
            return Err(usage("-I and -r together: -r averages whole runs and -I reports one run's intervals; give one of them"))
        }
        _ => {}
    }
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
        metrics.extend(evaluate_metrics(&defs, events, wall_ns, notes));
        metrics
    };
    // Each interval is printed as it ends, as perf prints it; JSON, -o FILE and
    // --metric-only take the whole run at the end.
    let progressive = interval.is_some() && !args.json.json && args.output.is_none() && !args.metric_only;
    let aggregation = if args.no_aggr && live.all_cpus { Aggregation::Cpu } else { Aggregation::Total };
    let mut before = 0;
    let mut printed = false;
    let mut on_interval = |iv: &mut Interval| {
        let duration = iv.time_ns.saturating_sub(before);
        before = iv.time_ns;
        if !args.no_metrics {
            iv.metrics = metrics_of(&iv.events, duration, &mut Vec::new());
            if args.no_aggr {
                iv.unit_metrics = unit_metrics(&iv.events, |mine| metrics_of(mine, duration, &mut Vec::new()));
            }
        }
        if progressive {
            let view = StatReport {
                pmu: Vec::new(),
                workload: String::new(),
                seed: 0,
                cycles: 0,
                elapsed_ns: 0,
                runs: 1,
                intervals: vec![iv.clone()],
                aggregation,
                events: Vec::new(),
                metrics: Vec::new(),
                unit_metrics: Vec::new(),
                notes: Vec::new(),
                live: None,
            };
            let text = match &args.separator {
                Some(sep) => view.to_separated(sep),
                None if printed => view.to_human_lines(!args.no_big_num),
                None => format!("{}{}", view.interval_header(), view.to_human_lines(!args.no_big_num)),
            };
            printed = true;
            let mut stdout = std::io::stdout().lock();
            let _ = stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush());
        }
    };
    // -r runs the command again and again, as perf does, and averages the counts.
    let mut runs = Vec::new();
    for _ in 0..args.repeat {
        let run = count::count(plan, &target, &stop, &mut on_interval).map_err(|e| match e {
            LiveError::Usage(_) => usage(e),
            _ => runtime(e),
        })?;
        runs.push(run);
        if stop.load(std::sync::atomic::Ordering::Relaxed) {
            break;
        }
    }
    let last = runs.last().and_then(|r| r.live.as_ref()).and_then(|l| l.exit_status);
    let mut report =
        if runs.len() > 1 { pmukit_core::report::average(&runs) } else { runs.pop() }.ok_or_else(|| usage("no run completed"))?;
    if let Some(live) = &mut report.live {
        live.exit_status = last;
    }
    report.metrics = metrics_of(&report.events, report.elapsed_ns, &mut report.notes);
    if args.no_aggr {
        report.unit_metrics = unit_metrics(&report.events, |mine| metrics_of(mine, report.elapsed_ns, &mut Vec::new()));
    }
    let status = report.live.as_ref().and_then(|l| l.exit_status);
    if progressive {
        // The intervals are out; perf prints nothing after them, and notes are not data.
        for n in &report.notes {
            eprintln!("pmu: note: {n}");
        }
    } else {
        crate::stat::print(report, args, out)?;
    }
    // perf stat exits with the command's status.
    if let Some(code) = status.filter(|&c| c != 0) {
        let _ = std::io::stdout().flush();
        std::process::exit(code);
    }
    Ok(())
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
