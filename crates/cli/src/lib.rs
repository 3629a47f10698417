//! `pmu`: list, describe, encode, decode and count PMU events.
//!
//! Each subcommand is a thin layer over the library; output is a human table by
//! default and JSON with `--json`. Exit codes: 0 ok, 1 runtime failure, 2 usage error.
//! The command is a library as well as the `pmu` executable, so that pmukit's QEMU
//! plugin runs `pmu stat -- PROG` itself, inside QEMU, beside the program
//! (`guest`).

mod counts;
mod failure;
pub mod guest;
mod lazy;
mod live;
mod names;
mod outfile;
mod output;
mod pmu_events;
mod printer;
mod qualify;
mod record;
mod report;
mod stat;

use std::ffi::OsString;
use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, CommandFactory, Parser, Subcommand};
use pmukit_arch::metrics;
use pmukit_arch::sparc::niagara::BUFFER_BYTES;
use pmukit_arch::{self as arch, Catalog, DEFAULT_PMU};
use pmukit_core::event_string::{self, EventSel};
use pmukit_core::number;
use pmukit_core::pmu::Pmu;
use pmukit_sim::hvcall;
use pmukit_sim::models::sun4v::{DecodeError, MmuStatReader};

use crate::failure::{clap_failure, runtime, usage, Failure};
use crate::lazy::Lazy;
use crate::output::{Filter, Out};

#[derive(Parser)]
#[command(
    name = "pmu",
    version,
    about = "Hardware performance counters, to the bit: event tables, register encodings and a simulated PMU",
    long_about = "Hardware performance counters, to the bit.\n\n\
pmu knows the performance monitoring units of ARM11 (arm1136, arm1156, arm1176), SPARC T4 \
(sparc-t4, sparc-t4-dram), SPARC KT and Niagara through their sun4v hypervisor calls \
(sparc-kt, sparc-kt-dram, niagara) and Itanium 2 Montecito (montecito, montecito-st): \
their event tables, the encoding of every control register and the counter restrictions, \
and register-level models that `pmu stat` drives exactly as a kernel driver would.\n\n\
Events are written as in libpfm4 and perf: [pmu::]EVENT[.UMASK...][:MOD[=VALUE]...], \
case-insensitive, or raw as pmu::r<hex> / pmu::0x<hex>.",
    after_help = "Examples:\n  pmu stat\n  pmu stat -e CPU_CYCLES,INSTR_EXEC --workload branchy --cycles 2e9\n  pmu list arm1156\n  pmu describe arm1176::BR_MISPREDICT\n  pmu encode INSTR_EXEC BR_EXEC\n  pmu schedule --pmu montecito L1D_READS_SET0 LOADS_RETIRED CPU_OP_CYCLES\n  pmu stat --pmu montecito --workload stream\n  pmu decode arm1176 PMCR 0x00706071"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// The event table a command reads.
#[derive(Args)]
pub(crate) struct TableOpts {
    /// Replace the built-in event table of the family this TOML file names
    /// (schema: docs/event-tables.md).
    #[arg(long, value_name = "FILE")]
    events_file: Option<PathBuf>,
}

/// The options of the commands that read event strings.
#[derive(Args)]
struct EventOpts {
    /// PMU of the event strings that name none [default: arm1176].
    #[arg(long, value_name = "PMU", value_parser = crate::names::pmus(), hide_possible_values = true)]
    pmu: Option<String>,
    #[command(flatten)]
    table: TableOpts,
}

impl EventOpts {
    fn default_pmu(&self) -> &str {
        self.pmu.as_deref().unwrap_or(DEFAULT_PMU)
    }
}

#[derive(Args)]
pub(crate) struct JsonOpt {
    /// Print JSON instead of a human table (one schema for every command:
    /// docs/json.md); errors too, on standard error.
    #[arg(long)]
    json: bool,
}

#[derive(Subcommand)]
enum Command {
    /// List the events of every PMU, or of the PMUs named, that match a filter; with
    /// --metrics, the derived metrics instead.
    #[command(after_help = "A filter with * or ? is a glob over names (events, aliases, EVENT.UMASK, metrics, metric groups); \
any other word is looked for in names and descriptions. Case is ignored.\n\n\
Examples:\n  pmu list arm1156\n  pmu list 'L2D*'\n  pmu list --pmu montecito cache\n  pmu list -v sparc-t4 INSTR\n  pmu list --metrics montecito l3")]
    List {
        /// PMU names, and at most one filter.
        #[arg(value_name = "PMU|FILTER")]
        targets: Vec<String>,
        /// List derived metrics and their groups instead of events.
        #[arg(long)]
        metrics: bool,
        /// Show unit masks, aliases, modifiers and whole descriptions (or metric
        /// expressions).
        #[arg(short, long)]
        verbose: bool,
        /// A PMU to list, as a PMU argument does.
        #[arg(long, value_name = "PMU", value_parser = crate::names::pmus(), hide_possible_values = true)]
        pmu: Option<String>,
        #[command(flatten)]
        table: TableOpts,
        #[command(flatten)]
        json: JsonOpt,
    },
    /// Show everything known about one event or derived metric: code, counters, unit
    /// masks and their rules, modifiers, availability; a metric's expression, unit,
    /// events and source.
    Describe {
        /// Event string (arm1176::INSTR_EXEC, montecito::BR_MISPRED_DETAIL) or metric
        /// name (branch_prediction_ratio, or arm1176::branch_prediction_ratio).
        event: String,
        #[command(flatten)]
        opts: EventOpts,
        #[command(flatten)]
        json: JsonOpt,
    },
    /// Encode events as one set counted together: the counters they get and the
    /// register values that program them. Fails (exit 2) when they cannot share the PMU.
    Encode {
        /// Event strings.
        #[arg(required = true)]
        events: Vec<String>,
        #[command(flatten)]
        opts: EventOpts,
        #[command(flatten)]
        json: JsonOpt,
        #[command(flatten)]
        qualify: qualify::QualifyOpts,
    },
    /// Show how events would be placed on counters: together, or, when the counters
    /// and the PMU's rules do not allow it, the multiplexing groups `pmu stat` would use
    /// and the reason (the events and the rule that conflict).
    Schedule {
        /// Event strings.
        #[arg(required = true)]
        events: Vec<String>,
        #[command(flatten)]
        opts: EventOpts,
        #[command(flatten)]
        json: JsonOpt,
        #[command(flatten)]
        qualify: qualify::QualifyOpts,
    },
    /// Decode a register value field by field, with the spec's bit diagram.
    Decode {
        /// PMU whose register layout applies (layouts differ between cores).
        #[arg(value_name = "PMU", value_parser = crate::names::pmus(), hide_possible_values = true)]
        target: String,
        /// Register name, e.g. PMCR, CCNT, PMN0.
        register: String,
        /// Value: 0x… hex, 0b… binary or decimal.
        value: String,
        /// The value of a register that selects this one's layout, e.g. PMC40=0x80 for
        /// Montecito's D-EAR PMD32-33 in TLB mode (PMC37 for PMD34-35, PMC42 for
        /// PMD39 and PMD48-63); without it the selecting register's reset value is
        /// assumed, with a warning. Repeat for several.
        #[arg(long, value_name = "REGISTER=VALUE")]
        with: Vec<String>,
        /// The table that names the events of selector fields.
        #[command(flatten)]
        table: TableOpts,
        #[command(flatten)]
        json: JsonOpt,
    },
    /// Count events on the simulated machine, or a real program with --live, like
    /// `perf stat`.
    Stat(Lazy<stat::StatArgs>),
    /// Sample Montecito's event address registers and trace buffer on counter
    /// overflow into a recording file, as pfmon does (`pmu report` reads it).
    #[command(
        after_help = "Every event counts from -PERIOD; its wrap freezes the thread, and the handler reads each capture register the events armed, clears it and resumes. The file (JSON, docs/record.md) keeps the raw registers.\n\n\
Examples:\n  pmu record -e DATA_EAR_CACHE_LAT64 -c 1000 --workload stream\n  pmu record -e ETB_EVENT -c 5000 --workload branchy -o branches.json\n  pmu record -e L1I_EAR_CACHE_LAT0,DATA_EAR_TLB_ALL --irange 0x10000-0x20000\n  pmu record -e CPU_OP_CYCLES -c 100000 --ip-ear 20"
    )]
    Record(Lazy<record::RecordArgs>),
    /// Summarise a recording: hot instruction and data addresses, latency histograms
    /// per level of the memory hierarchy, branch traces and retired-IP histories.
    #[command(
        after_help = "Examples:\n  pmu report\n  pmu report branches.json --top 20\n  pmu report --svg latency.svg\n  pmu report --json pmu.record.json"
    )]
    Report(Lazy<report::ReportArgs>),
    /// Compute derived metrics over counts made elsewhere: `perf stat -x SEP` or `-j`
    /// output (from a real machine), `pmu stat --json` output, or NAME=VALUE counts.
    #[command(
        after_help = "Examples:\n  perf stat -x, -e cycles,instructions -o counts.csv -- ./prog\n  pmu metrics --pmu arm1176 -M ipc counts.csv\n  perf stat -j -I 1000 -a -A ... 2>&1 | pmu metrics --pmu sparc-t4 -\n  pmu metrics --expr 'FOO / BAR' FOO=1 BAR=2"
    )]
    Metrics(Lazy<counts::MetricsArgs>),
    /// Write a PMU's events and metrics in another tool's format: Linux perf's
    /// pmu-events JSON.
    Export {
        #[command(subcommand)]
        format: pmu_events::ExportFormat,
    },
    /// Read another tool's event tables into an events file (--events-file): Linux
    /// perf's pmu-events JSON.
    Import {
        #[command(subcommand)]
        format: pmu_events::ImportFormat,
    },
    /// List the built-in workloads.
    Workloads {
        #[command(flatten)]
        json: JsonOpt,
    },
    /// Run sun4v hypercalls in order against one fresh hypervisor model and show each
    /// call's status and results. Guest real memory is 256 MiB at 0x10000000.
    #[command(
        after_help = "Example:\n  pmu hv --machine niagara 'niagara_mmustat_conf 0x10000000' niagara_mmustat_info 'niagara_mmustat_conf 0'"
    )]
    Hv {
        /// Machine: niagara (UltraSPARC T1), kt (SPARC T3) or t4.
        #[arg(long, default_value = "niagara")]
        machine: String,
        /// Virtual CPUs of the machine.
        #[arg(long, default_value_t = 4, value_parser = parse_usize)]
        vcpus: usize,
        /// Virtual CPU that makes the calls.
        #[arg(long, default_value_t = 0, value_parser = parse_usize)]
        vcpu: usize,
        /// Calls, one argument each: a function name or number, then its arguments
        /// (decimal or 0x hex).
        #[arg(required = true, value_name = "CALL")]
        calls: Vec<String>,
        #[command(flatten)]
        json: JsonOpt,
    },
    /// Niagara MMU statistics buffers (NIAGARA_MMUSTAT_CONF).
    Mmustat {
        #[command(subcommand)]
        action: MmustatAction,
    },
    /// Print a shell completion script, e.g. `pmu completions bash > /etc/bash_completion.d/pmu`.
    Completions {
        /// The shell: bash, elvish, fish, powershell or zsh.
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff), e.g. `pmu man > pmu.1; man ./pmu.1`, or a
    /// subcommand's (`pmu man stat`, `pmu man mmustat decode`); `--dir DIR` writes
    /// every page (pmu.1, pmu-stat.1, …) into DIR, for `MANPATH`.
    Man {
        /// The subcommand whose page to print.
        #[arg(value_name = "SUBCOMMAND")]
        command: Vec<String>,
        /// Write every page into this directory instead (each replaced whole).
        #[arg(long, value_name = "DIR", conflicts_with = "command")]
        dir: Option<PathBuf>,
    },
}

#[derive(Subcommand)]
enum MmustatAction {
    /// Decode a raw dump of one or more 512-byte statistics buffers (one per CPU):
    /// hits, ticks and average ticks per hit per MMU, context and page size.
    Decode {
        /// The dump file; `-` reads standard input. Read as it is decoded, so a dump
        /// of any size takes constant memory.
        file: PathBuf,
        #[command(flatten)]
        json: JsonOpt,
    },
}

/// Command-line numbers go through pmukit's one strict parser (`pmukit_core::number`),
/// not clap's, which takes `+5`.
fn parse_count(text: &str) -> Result<u64, String> {
    number::parse_count(text).map_err(|e| e.to_string())
}

fn parse_u64(text: &str) -> Result<u64, String> {
    number::parse_u64(text).map_err(|e| e.to_string())
}

fn parse_usize(text: &str) -> Result<usize, String> {
    let n = parse_u64(text)?;
    usize::try_from(n).map_err(|_| format!("'{text}' is too large"))
}

/// Parse a probability per access: above 0, at most 1.
fn parse_rate(text: &str) -> Result<f64, String> {
    match text.parse::<f64>().ok().filter(|_| !text.starts_with('+')) {
        Some(r) if r > 0.0 && r <= 1.0 => Ok(r),
        _ => Err(format!("'{text}' is not a rate per access: expected a number above 0 and at most 1, e.g. 1e-4")),
    }
}

/// The line a panic prints instead of a backtrace. Tests look for it: every input
/// must give a usage error or a runtime failure, never this.
const BUG: &str = "pmu: internal error, a bug in pmu";

/// `pmu` with the process's arguments.
pub fn main() -> ExitCode {
    ExitCode::from(main_with(std::env::args_os().collect()))
}

/// `pmu` with these arguments (the first is the program's name): its exit status.
pub fn main_with(args: Vec<OsString>) -> u8 {
    // The hook writes without `eprintln!`, which panics when standard error cannot be
    // written (a panic inside the hook aborts); what it cannot write is lost.
    std::panic::set_hook(Box::new(|info| {
        let at = info.location().map(|l| format!(" at {}:{}", l.file(), l.line())).unwrap_or_default();
        let what = info.payload().downcast_ref::<&str>().copied().or_else(|| info.payload().downcast_ref::<String>().map(String::as_str));
        let mut err = std::io::stderr().lock();
        let _ = writeln!(
            err,
            "{BUG}{at}: {}. Please report it with the command that caused it (RUST_BACKTRACE=1 shows where).",
            what.unwrap_or("panic")
        );
        if std::env::var_os("RUST_BACKTRACE").is_some() {
            let _ = writeln!(err, "{}", std::backtrace::Backtrace::force_capture());
        }
        outfile::exit(1);
    }));
    // Arguments are read as the OS gives them: file names and a command to run may be
    // any bytes; arguments that must be text are checked where clap reads them.
    let json = args.iter().any(|a| a == "--json");
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(e) if e.kind() == clap::error::ErrorKind::InvalidUtf8 => {
            let f = not_text(&args);
            Out::new(json, "").error(&f);
            return f.code;
        }
        // Help and the version are not failures; a refused command line with --json
        // anywhere on it is reported as JSON, as every other error is.
        Err(e) if !e.use_stderr() || !json => {
            let _ = e.print();
            return if e.use_stderr() { 2 } else { 0 };
        }
        Err(e) => {
            let f = clap_failure(&e);
            Out::new(true, command_named(&args)).error(&f);
            return f.code;
        }
    };
    let (json, command) = cli.command.output();
    let out = Out::new(json, command);
    match run(&cli, &out) {
        Ok(()) => 0,
        Err(f) => {
            out.error(&f);
            f.code
        }
    }
}

/// `pmu man`: pmu's page, a subcommand's, or every page into a directory.
fn man(path: &[String], dir: Option<&std::path::Path>, out: &Out) -> Result<(), Failure> {
    // Built, so that each subcommand knows its page's name (pmu-stat).
    let mut cmd = Cli::command().disable_help_subcommand(true);
    cmd.build();
    let render = |c: &clap::Command| {
        let mut page = Vec::new();
        clap_mangen::Man::new(c.clone()).render(&mut page).map_err(|e| runtime(format!("cannot render the man page: {e}")))?;
        Ok::<_, Failure>(page)
    };
    if let Some(dir) = dir {
        let mut pages = Vec::new();
        let mut stack = vec![cmd.clone()];
        while let Some(c) = stack.pop() {
            stack.extend(c.get_subcommands().filter(|s| !s.is_hide_set()).cloned());
            let name = format!("{}.1", c.get_display_name().unwrap_or_else(|| c.get_name()));
            let mut file = outfile::Output::create(&dir.join(&name), "--dir")?;
            file.write_all(&render(&c)?)?;
            file.commit()?;
            pages.push(name);
        }
        pages.sort();
        return out.text(&format!("wrote {} man pages to {}: {}", pages.len(), dir.display(), pages.join(", ")));
    }
    let mut page = &cmd;
    for name in path {
        let valid: Vec<&str> = page.get_subcommands().map(|c| c.get_name()).collect();
        page = page.find_subcommand(name).ok_or_else(|| {
            let whose = page.get_display_name().unwrap_or_else(|| page.get_name()).replace('-', " ");
            let list = if valid.is_empty() { "none".to_string() } else { valid.join(", ") };
            usage(format!("'{name}' is not a subcommand of {whose}: its subcommands are {list}"))
        })?;
    }
    out.text(&String::from_utf8_lossy(&render(page)?))
}

/// The subcommand a refused command line names (its first argument that is one), for
/// the JSON error's `command`; empty when it names none.
fn command_named(args: &[OsString]) -> &'static str {
    let cli = Cli::command();
    let names: Vec<&str> = cli.get_subcommands().map(|c| c.get_name()).collect();
    let found = args.iter().skip(1).filter_map(|a| a.to_str()).find(|a| names.contains(a));
    // Named once, on the way out of a process that fails.
    found.map_or("", |name| Box::leak(name.to_string().into_boxed_str()))
}

/// The usage error for an argument that is not UTF-8 where text is needed (clap says
/// only that some argument is not), naming the first such argument.
fn not_text(args: &[OsString]) -> Failure {
    let Some((at, arg)) = args.iter().enumerate().skip(1).find(|(_, a)| a.to_str().is_none()) else {
        return usage("an argument is not UTF-8 text: names, events and numbers must be text");
    };
    let shown = pmukit_core::input::excerpt(&arg.to_string_lossy(), pmukit_core::input::EXCERPT_CHARS);
    usage(format!(
        "argument {at} ('{shown}', invalid bytes shown as U+FFFD) is not UTF-8 text: names, events and numbers must be text; file names and the command after -- may be any bytes"
    ))
}

impl Command {
    /// Whether the command prints JSON, and its name there (`command`).
    fn output(&self) -> (bool, &'static str) {
        match self {
            Command::List { json, .. } => (json.json, "list"),
            Command::Describe { json, .. } => (json.json, "describe"),
            Command::Encode { json, .. } => (json.json, "encode"),
            Command::Schedule { json, .. } => (json.json, "schedule"),
            Command::Decode { json, .. } => (json.json, "decode"),
            Command::Stat(args) => (args.json.json, "stat"),
            Command::Record(args) => (args.json.json, "record"),
            Command::Report(args) => (args.json.json, "report"),
            Command::Metrics(args) => (args.json.json, "metrics"),
            Command::Workloads { json } => (json.json, "workloads"),
            Command::Hv { json, .. } => (json.json, "hv"),
            Command::Mmustat { action: MmustatAction::Decode { json, .. } } => (json.json, "mmustat decode"),
            Command::Export { format: pmu_events::ExportFormat::PerfJson { json, .. } } => (json.json, "export"),
            Command::Import { format: pmu_events::ImportFormat::PerfJson { json, .. } } => (json.json, "import"),
            Command::Completions { .. } => (false, "completions"),
            Command::Man { .. } => (false, "man"),
        }
    }
}

/// The built-in event tables, or with `--events-file` one family's replaced. A file
/// that cannot be read is a runtime failure; one that can, but is wrong, a usage error.
pub(crate) fn catalog(table: &TableOpts) -> Result<Catalog, Failure> {
    let mut catalog = Catalog::builtin();
    if let Some(path) = &table.events_file {
        catalog.load_events_file(path)?;
    }
    Ok(catalog)
}

fn run(cli: &Cli, out: &Out) -> Result<(), Failure> {
    match &cli.command {
        Command::List { targets, metrics, verbose, pmu, table, .. } => {
            let catalog = catalog(table)?;
            let (pmus, filter) = list_targets(&catalog, targets, pmu.as_deref())?;
            if *metrics {
                out.list_metrics(&catalog, &pmus, filter.as_ref(), *verbose)
            } else {
                out.list(&pmus, filter.as_ref(), *verbose)
            }
        }
        Command::Describe { event, opts, .. } => describe(&catalog(&opts.table)?, event, opts.default_pmu(), out),
        Command::Encode { events, opts, qualify, .. } => {
            let catalog = catalog(&opts.table)?;
            let default_pmu = opts.default_pmu();
            let sels = resolve_all(&catalog, events, default_pmu)?;
            let pmu = catalog.pmu(first_pmu(&sels, default_pmu))?;
            let set = arch::encode_set_with(pmu, &sels, &qualify.set_options()).map_err(usage)?;
            out.encode(&set)
        }
        Command::Schedule { events, opts, qualify, .. } => {
            let catalog = catalog(&opts.table)?;
            let default_pmu = opts.default_pmu();
            let sels = resolve_all(&catalog, events, default_pmu)?;
            let pmu = catalog.pmu(first_pmu(&sels, default_pmu))?;
            if let Some(other) = sels.iter().find(|s| s.pmu != pmu.name()) {
                return Err(usage(format!(
                    "'{}' is on {}, not {}: schedule one PMU's events at a time",
                    other.input,
                    other.pmu,
                    pmu.name()
                )));
            }
            out.schedule(&arch::schedule(pmu, &sels, &[], &qualify.set_options()).map_err(usage)?)
        }
        Command::Decode { target, register, value, with, table, .. } => {
            let catalog = catalog(table)?;
            let pmu = catalog.pmu(target)?;
            let value = number::parse_u64(value).map_err(|e| usage(format!("register value {e}")))?;
            let mut given = Vec::new();
            for w in with {
                let (name, v) = w.split_once('=').ok_or_else(|| usage(format!("--with {w}: expected REGISTER=VALUE, e.g. PMC40=0x80")))?;
                let reg = arch::register(pmu, name.trim()).map_err(usage)?;
                let v = number::parse_u64(v.trim()).map_err(|e| usage(format!("--with {w}: {e}")))?;
                given.push((reg.name.to_string(), v));
            }
            let decoded = arch::decode_with(pmu, register, value, &given).map_err(usage)?;
            let (layout, _) = arch::register_for(pmu, register, value, &given).map_err(usage)?;
            out.decode(pmu.name(), value, &decoded, &layout.diagram(Some(value), usize::from(output::width())))
        }
        Command::Stat(args) => stat::run(&catalog(&args.opts.table)?, args.opts.pmu.as_deref(), args, out),
        Command::Record(args) => record::run(args, out),
        Command::Report(args) => report::run(args, out),
        Command::Metrics(args) => counts::run(&catalog(&args.opts.table)?, args, out),
        Command::Workloads { .. } => out.workloads(),
        Command::Export { format } => {
            let pmu_events::ExportFormat::PerfJson { table, .. } = format;
            pmu_events::export(&catalog(table)?, format, out)
        }
        Command::Import { format } => pmu_events::import(&Catalog::builtin(), format, out),
        Command::Completions { shell } => {
            let mut script = Vec::new();
            clap_complete::generate(*shell, &mut Cli::command(), "pmu", &mut script);
            out.text(&String::from_utf8_lossy(&script))
        }
        Command::Man { command, dir } => man(command, dir.as_deref(), out),
        Command::Hv { machine, vcpus, vcpu, calls, .. } => {
            let processor = hvcall::machine(machine).map_err(usage)?;
            out.hv(&hvcall::run(processor, *vcpus, *vcpu, calls).map_err(usage)?)
        }
        Command::Mmustat { action: MmustatAction::Decode { file, .. } } => {
            let stdin = file.as_os_str() == "-";
            let origin = if stdin { "standard input".to_string() } else { file.display().to_string() };
            let input: Box<dyn std::io::Read> = if stdin {
                Box::new(std::io::stdin().lock())
            } else {
                let cannot = |e: std::io::Error| runtime(format!("cannot read {origin}: {}", pmukit_core::input::io_message(&e)));
                let f = std::fs::File::open(file).map_err(cannot)?;
                let meta = f.metadata().map_err(cannot)?;
                if meta.is_dir() {
                    return Err(runtime(format!("cannot read {origin}: it is a directory")));
                }
                // A regular file's size is known: a partial dump is refused before
                // anything is printed.
                if let Some(size) = Some(meta).filter(|m| m.is_file()).map(|m| m.len()) {
                    let bad = match size {
                        0 => Some(DecodeError::Empty),
                        _ if !size.is_multiple_of(BUFFER_BYTES as u64) => Some(DecodeError::Size { size }),
                        _ => None,
                    };
                    if let Some(e) = bad {
                        return Err(usage(format!("{origin}: {e}")));
                    }
                }
                Box::new(f)
            };
            let decode_error = |f: Failure| if f.code == 2 { Failure { message: format!("{origin}: {}", f.message), ..f } } else { f };
            out.mmustat(MmuStatReader::new(input)).map_err(decode_error)
        }
    }
}

/// Resolve event strings, at least one and none blank; the spec's warnings about
/// valid but questionable choices (meaningless unit-mask combinations) go to stderr.
fn resolve_all(catalog: &Catalog, events: &[String], default_pmu: &str) -> Result<Vec<EventSel>, Failure> {
    let example = "an event string such as arm1176::INSTR_EXEC (`pmu list` shows every PMU's events)";
    if events.is_empty() {
        return Err(usage(format!("no event given: expected {example}")));
    }
    if let Some(i) = events.iter().position(|e| e.trim().is_empty()) {
        return Err(usage(format!("event {} of {} is blank: expected {example}", i + 1, events.len())));
    }
    let sels: Vec<EventSel> = events.iter().map(|e| catalog.resolve(e.trim(), default_pmu)).collect::<Result<_, _>>()?;
    for w in sels.iter().flat_map(|s| &s.warnings) {
        crate::output::diag(&format!("pmu: warning: {w}"));
    }
    Ok(sels)
}

/// The PMUs `pmu list` shows and its filter: each argument that names a PMU selects
/// it, one other argument is the filter; `--pmu` also selects.
fn list_targets<'a>(catalog: &'a Catalog, targets: &[String], pmu: Option<&str>) -> Result<(Vec<&'a Pmu>, Option<Filter>), Failure> {
    let mut pmus: Vec<&Pmu> = Vec::new();
    if let Some(name) = pmu {
        pmus.push(catalog.pmu(name)?);
    }
    let mut filter: Option<&str> = None;
    for t in targets {
        match catalog.pmu(t) {
            Ok(p) => pmus.push(p),
            Err(_) if filter.is_none() && !t.trim().is_empty() => filter = Some(t),
            Err(e) => {
                let why =
                    if t.trim().is_empty() { "is blank".to_string() } else { format!("is a second filter (give one) and not a PMU: {e}") };
                return Err(usage(format!("list argument '{t}' {why}")));
            }
        }
    }
    if pmus.is_empty() {
        pmus = catalog.pmus.iter().collect();
    }
    Ok((pmus, filter.map(Filter::new)))
}

/// `pmu describe`: an event string that resolves; else an event that needs a unit
/// mask, named bare; else a derived metric; else the event string's error.
fn describe(catalog: &Catalog, input: &str, default_pmu: &str, out: &Out) -> Result<(), Failure> {
    let text = input.trim();
    if text.is_empty() {
        return Err(usage("event 1 of 1 is blank: expected an event string such as arm1176::INSTR_EXEC or a metric name (`pmu list` and `pmu list --metrics` show them)"));
    }
    let err = match catalog.resolve(text, default_pmu) {
        Ok(sel) => {
            for w in &sel.warnings {
                crate::output::diag(&format!("pmu: warning: {w}"));
            }
            let pmu = catalog.pmu(sel.pmu)?;
            return match &sel.event {
                Some(e) => out.describe_event(pmu, e, Some(&sel)),
                None => out.describe_raw(pmu, &sel),
            };
        }
        Err(e) => e,
    };
    if let Ok(spec) = event_string::parse(text) {
        let pmu = catalog.pmu(spec.pmu.as_ref().map_or(default_pmu, |t| t.text.as_str())).ok();
        if let (Some(pmu), true) = (pmu, spec.umasks.is_empty() && spec.modifiers.is_empty()) {
            if let Some(e) = pmu.table.find(&spec.event.text).filter(|e| e.exists_on(pmu.desc.model)) {
                return out.describe_event(pmu, e, None);
            }
        }
    }
    let (only, name) = match text.split_once("::") {
        Some((pmu, name)) => (Some(catalog.pmu(pmu)?.desc.family), name),
        None => (None, text),
    };
    let found: Vec<_> = metrics::by_name(catalog, name)
        .into_iter()
        .filter(|(m, _)| only.is_none_or(|f| catalog.pmu(m.pmu).is_ok_and(|p| p.desc.family == f)))
        .collect();
    if found.is_empty() {
        return Err(err.into());
    }
    out.describe_metrics(&found)
}

/// The PMU of the first event (`resolve_all` gives at least one).
fn first_pmu<'a>(sels: &'a [EventSel], default_pmu: &'a str) -> &'a str {
    sels.first().map_or(default_pmu, |s| s.pmu)
}
