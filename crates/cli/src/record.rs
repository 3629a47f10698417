//! `pmu record`: sample Montecito's capture registers on counter overflow into a
//! recording file (`pmukit_sim::record`, docs/record.md), as pfmon's sampling does.

use std::ffi::OsString;
use std::io::BufWriter;
use std::path::PathBuf;
use std::sync::atomic::Ordering;

use clap::Args;
use pmukit_core::report::thousands;
use pmukit_sim::program::builtin as workloads;
use pmukit_sim::record::{self, Recording, Writer};
use pmukit_sim::stat::StatOptions;
use serde_json::json;

use crate::failure::{runtime, usage, Failure};
use crate::outfile::{Output, Previous};
use crate::output::Out;
use crate::stat::{machine_file, progress_bar, run_failure, split_events, stop_on_ctrl_c};
use crate::{parse_count, parse_usize, resolve_all, JsonOpt, TableOpts};

/// The recording file when -o is not given.
pub const DEFAULT_FILE: &str = "pmu.record.json";
/// The event sampled when -e is not given: every L1D load miss the data EAR sees.
const DEFAULT_EVENT: &str = "DATA_EAR_CACHE_LAT4";
/// Runs this long show progress in a terminal (a few seconds of Montecito).
const PROGRESS_FROM: u64 = 20_000_000;

#[derive(Args)]
pub struct RecordArgs {
    /// Montecito PMU: montecito (two threads) or montecito-st.
    #[arg(long, value_name = "PMU", default_value = "montecito", value_parser = crate::names::pmus(), hide_possible_values = true)]
    pmu: String,
    #[command(flatten)]
    table: TableOpts,
    #[command(flatten)]
    pub json: JsonOpt,
    /// Events to sample, comma-separated or repeated: capture events such as
    /// DATA_EAR_CACHE_LAT64, L1I_EAR_TLB_ALL or ETB_EVENT arm their capture register,
    /// and each overflow of any event reads every armed one.
    #[arg(short = 'e', long = "event", value_name = "EVENTS", default_value = DEFAULT_EVENT)]
    events: Vec<String>,
    /// Events between samples: each counter counts from -PERIOD and interrupts when
    /// it wraps (the number forms of --cycles).
    #[arg(short = 'c', long = "count", value_name = "PERIOD", default_value = "10000", value_parser = parse_count)]
    period: u64,
    /// The recording file to write (made before the run, put in place after it; a file
    /// already there is kept as FILE.old, as perf keeps perf.data.old); `-` writes it
    /// to standard output.
    #[arg(short = 'o', long = "output", value_name = "FILE", default_value = DEFAULT_FILE)]
    output: PathBuf,
    /// Built-in workload to run (see `pmu workloads`).
    #[arg(short, long, default_value = workloads::DEFAULT_WORKLOAD, value_parser = crate::names::workloads(), hide_possible_values = true)]
    workload: String,
    /// Seed of the workload's event stream.
    #[arg(long, default_value_t = 1, value_parser = parse_count)]
    seed: u64,
    /// Length of the run in simulated cycles (1 GHz clock); accepts 1e8, 0x….
    #[arg(long, default_value = "1e8", value_parser = parse_count)]
    cycles: u64,
    /// Hardware threads: 1 or 2 (montecito-st: 1).
    #[arg(long, value_name = "N", value_parser = parse_usize)]
    threads: Option<usize>,
    /// Run a recorded program instead of the workload (docs/workloads.md); `-` reads
    /// standard input.
    #[arg(long, value_name = "FILE", conflicts_with = "workload")]
    trace: Option<PathBuf>,
    /// A TOML file overriding the machine's parameters (docs/machines.md).
    #[arg(long, value_name = "FILE")]
    machine_config: Option<PathBuf>,
    #[command(flatten)]
    qualify: crate::qualify::QualifyOpts,
    /// A program after `--`, as `pmu stat -- PROG` takes one: refused with the
    /// reason. Sampling needs Montecito's capture registers, and no Itanium program
    /// runs under QEMU; the PMUs whose programs do (ARM11, SPARC) have none.
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<OsString>,
}

/// `pmu record`: resolve the events, record, write the file and say what was written.
pub fn run(args: &RecordArgs, out: &Out) -> Result<(), Failure> {
    if let Some(program) = args.command.first() {
        let program = program.to_string_lossy().into_owned();
        let mut failure = usage(format!(
            "cannot sample `{program}`: `pmu record` samples with Montecito's event address registers and trace buffer, \
             and no Itanium program runs under QEMU; ARM and SPARC programs are counted with `pmu stat [--pmu PMU] -- \
             PROG` (docs/binaries.md), and an Itanium program is recorded from a trace (`pmu record --trace FILE`)"
        ));
        failure.detail.token = Some(program);
        return Err(failure);
    }
    let catalog = crate::catalog(&args.table)?;
    // A PMU without capture hardware is refused as such, before events it was never
    // asked for (the default is Montecito's) are looked up on it.
    record::has_capture_hardware(catalog.pmu(&args.pmu)?).map_err(run_failure)?;
    let sels = resolve_all(&catalog, &split_events(&args.events), &args.pmu)?;
    let machine_config = machine_file(args.machine_config.as_deref())?;
    // The file is made (and so checked) before the run.
    let mut output = Output::create(&args.output, "-o")?;
    let stop = stop_on_ctrl_c();
    let opts = StatOptions {
        workload: args.workload.clone(),
        seed: args.seed,
        cycles: args.cycles,
        threads: args.threads,
        machine_config,
        trace: args.trace.clone(),
        stop: Some(stop.clone()),
        set_options: args.qualify.set_options(),
        ..StatOptions::default()
    };
    let bar = progress_bar(args.cycles, PROGRESS_FROM);
    let name = output.name();
    // Samples go to the file as they are taken.
    let mut writer = Writer::new(BufWriter::with_capacity(1 << 16, &mut output));
    let progress = &mut |done| {
        if let Some(b) = &bar {
            b.set_position(done);
        }
    };
    let recording = record::record_to(&catalog, &sels, args.period, &opts, progress, &mut writer).map_err(run_failure)?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let samples = writer.samples();
    writer.finish(&recording).map_err(|e| runtime(format!("cannot write {name}: {}", pmukit_core::input::io_message(&e))))?;
    let stdout = output.is_stdout();
    let replaced = output.commit_keeping_old()?;
    let interrupted = stop.load(Ordering::Relaxed).then_some(args.cycles);
    if !stdout {
        summary(&recording, samples, &name, replaced, interrupted, out)?;
    } else if let Some(asked) = interrupted {
        // The file went to standard output: the interruption is said on the side.
        eprintln!(
            "pmu record: interrupted after {} of {} cycles: the recording holds the cycles run",
            thousands(recording.cycles),
            thousands(asked)
        );
    }
    if stop.load(Ordering::Relaxed) {
        crate::outfile::exit(130);
    }
    Ok(())
}

/// What was recorded, where, and what became of the file that was there; `interrupted`
/// holds the cycles asked for when Ctrl-C ended the run sooner.
fn summary(r: &Recording, samples: u64, path: &str, previous: Previous, interrupted: Option<u64>, out: &Out) -> Result<(), Failure> {
    let old = match &previous {
        Previous::KeptAs(old) => Some(old.display().to_string()),
        _ => None,
    };
    if out.is_json() {
        let events: Vec<_> = r.events.iter().map(|e| json!({"name": e.name, "count": e.count})).collect();
        return out.json(&json!({
            "file": path,
            "cycles": r.cycles,
            "period": r.period,
            "samples": samples,
            "events": events,
            "old": old,
            "interrupted": interrupted.is_some(),
        }));
    }
    let events: Vec<String> = r.events.iter().map(|e| format!("{} ({} counted)", e.name, thousands(e.count))).collect();
    let text = format!(
        "pmu record: {}{} samples, one every {} events of {}, in {} cycles of '{}' on {}; written to {path} (`pmu report {path}` reads it){}",
        interrupted.map_or_else(String::new, |asked| format!("interrupted after {} of {} cycles; ", thousands(r.cycles), thousands(asked))),
        thousands(samples),
        thousands(r.period),
        events.join(", "),
        thousands(r.cycles),
        r.program,
        r.pmu,
        old.map_or_else(String::new, |o| format!("; the file that was there is kept as {o}")),
    );
    out.text(&crate::output::wrap(&text, crate::output::width(), 2))
}
