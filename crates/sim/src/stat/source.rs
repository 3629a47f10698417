//! Where a simulated run's counts come from: the program (a built-in workload or a
//! trace) on the chip model of the run's PMUs, as the event stream the PMU models
//! count, and the driver that programs those PMUs.

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use pmukit_arch::montecito::pmu as montecito;
use pmukit_arch::sparc::{kt, niagara, t4};
use pmukit_arch::{self as arch, arm11, Catalog};
use pmukit_core::event_string::EventSel;
use pmukit_core::input::{io_message, Interruptible};
use pmukit_core::pmu::Pmu;

use super::{StatError, StatOptions};
use crate::drivers::arm11::Arm11Driver;
use crate::drivers::kt::KtDriver;
use crate::drivers::montecito::MontecitoDriver;
use crate::drivers::niagara::NiagaraDriver;
use crate::drivers::t4::T4Driver;
use crate::drivers::{AnyRuns, Runs};
use crate::machine::arm11::{Arm11Config, Arm11Core};
use crate::machine::montecito::MontecitoConfig;
use crate::machine::sparc::{SparcChip, SparcConfig};
use crate::machine::{self, run::Skipping};
use crate::program::trace::{self, TraceError, TraceStatus};
use crate::program::{builtin, ia64};
use crate::stream::{Block, Cursor, ARM11, EVERY, MONTECITO, SPARC};

/// An event stream of spans of family `F` (their signals' words).
pub type Blocks<const F: usize = EVERY> = Box<dyn Iterator<Item = Block<F>> + Send>;

/// A run's event stream, of its machine's family of spans.
pub enum Stream {
    Arm11(Blocks<ARM11>),
    Sparc(Blocks<SPARC>),
    Montecito(Blocks<MONTECITO>),
}

impl Stream {
    /// The stream with every span in the words of every signal: the same spans, for
    /// whatever reads them whatever the machine (tests, benchmarks).
    pub fn every(self) -> Blocks {
        match self {
            Stream::Arm11(b) => Box::new(b.map(Block::into_family)),
            Stream::Sparc(b) => Box::new(b.map(Block::into_family)),
            Stream::Montecito(b) => Box::new(b.map(Block::into_family)),
        }
    }

    /// The stream's cycles, counted up to `most`.
    pub fn cycles(self, most: u64) -> u64 {
        fn of<const F: usize>(blocks: Blocks<F>, most: u64) -> u64 {
            let mut run = 0u64;
            for block in blocks {
                run = run.saturating_add(block.cycles());
                if run >= most {
                    break;
                }
            }
            run.min(most)
        }
        match self {
            Stream::Arm11(b) => of(b, most),
            Stream::Sparc(b) => of(b, most),
            Stream::Montecito(b) => of(b, most),
        }
    }
}

/// Where a run stands in its stream, of its machine's family.
pub(super) enum Position {
    Arm11(Cursor<ARM11>),
    Sparc(Cursor<SPARC>),
    Montecito(Cursor<MONTECITO>),
}

impl Stream {
    /// The stream from its start.
    pub(super) fn start(self) -> Position {
        match self {
            Stream::Arm11(b) => Position::Arm11(Cursor::new(b)),
            Stream::Sparc(b) => Position::Sparc(Cursor::new(b)),
            Stream::Montecito(b) => Position::Montecito(Cursor::new(b)),
        }
    }
}

impl Position {
    /// `driver`'s machine runs `cycles` cycles of the stream from here
    /// ([`Runs::run`]).
    pub(super) fn run(&mut self, driver: &mut dyn AnyRuns, cycles: u64) -> u64 {
        match self {
            Position::Arm11(c) => Runs::<ARM11>::run(driver, c, cycles),
            Position::Sparc(c) => Runs::<SPARC>::run(driver, c, cycles),
            Position::Montecito(c) => Runs::<MONTECITO>::run(driver, c, cycles),
        }
    }
}

/// What the run's events read that a machine may leave out of its spans when none
/// does: Montecito's occupancies (`MontecitoConfig::occupancies`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reads {
    pub occupancies: bool,
}

impl Reads {
    /// Everything: the stream as the machine makes it for any event.
    pub const ALL: Reads = Reads { occupancies: true };

    /// What `sels` read (a code wider than Montecito's reads everything, as far as
    /// this goes).
    pub fn of(sels: &[EventSel]) -> Reads {
        let occupancies =
            sels.iter().any(|s| u8::try_from(s.code).map_or(true, |code| crate::models::montecito::reads_occupancies(code, s.umask)));
        Reads { occupancies }
    }
}

/// The event stream of the run, and the status of the trace it reads if any: the
/// program (a built-in workload or a trace) on the machine model of `pmus`, making
/// what `reads` asks for.
pub fn blocks(pmus: &[&Pmu], opts: &StatOptions, reads: Reads) -> Result<(Stream, Option<TraceStatus>), StatError> {
    let threads = threads(pmus, opts)?;
    if opts.fault_every == Some(0) {
        return Err(StatError::NoFaults);
    }
    let model = pmus[0].desc.model;
    let chip = match (Arm11Core::from_model(model), SparcChip::from_model(model)) {
        (Some(core), _) => Chip::Arm11(core),
        (None, Some(chip)) => Chip::Sparc(chip),
        _ => Chip::Montecito,
    };
    if let (Chip::Sparc(chip), Some(_)) = (&chip, opts.fault_every) {
        return Err(StatError::NoFaultModel { machine: chip.name() });
    }
    let (program, status) = match (&opts.trace, &opts.running) {
        (Some(path), _) => {
            let (program, status) = trace::program(open_trace(path, opts.stop.as_ref())?, &trace_name(path))?;
            (program, Some(status))
        }
        (None, Some(running)) => (running.take().ok_or(StatError::RunOnce)?, Some(running.status.clone())),
        (None, None) => (builtin::program(&opts.workload, opts.seed, threads)?, None),
    };
    let stream = match chip {
        Chip::Sparc(chip) => {
            let mut cfg = SparcConfig::new(chip);
            if let Some(file) = &opts.machine_config {
                cfg = cfg.with_overrides(&file.text, &file.origin)?;
            }
            Stream::Sparc(Box::new(machine::sparc(cfg, program, Skipping::On)))
        }
        Chip::Montecito => {
            // The built-in workloads as an Itanium compiler lays them out; a trace's
            // instructions are the ones it recorded.
            let program = if status.is_none() { ia64::compiled(program) } else { program };
            let cfg = MontecitoConfig { occupancies: reads.occupancies, ..montecito_config(threads, opts)? };
            Stream::Montecito(Box::new(machine::montecito(cfg, program, Skipping::On)))
        }
        Chip::Arm11(core) => {
            let mut cfg = Arm11Config { fault_every: opts.fault_every, ..Arm11Config::new(core) };
            if let Some(file) = &opts.machine_config {
                cfg = cfg.with_overrides(&file.text, &file.origin)?;
            }
            Stream::Arm11(Box::new(machine::arm11(cfg, program, Skipping::On)))
        }
    };
    Ok((stream, status))
}

/// The Montecito machine of the run: `threads` threads, the options' fault injection
/// and `--machine-config`.
pub(crate) fn montecito_config(threads: usize, opts: &StatOptions) -> Result<MontecitoConfig, StatError> {
    let cfg = MontecitoConfig { fault_every: opts.fault_every, ..MontecitoConfig::new(threads) };
    match &opts.machine_config {
        Some(file) => Ok(cfg.with_overrides(&file.text, &file.origin)?),
        None => Ok(cfg),
    }
}

/// The chips whose machine model runs programs.
enum Chip {
    Arm11(Arm11Core),
    Sparc(SparcChip),
    Montecito,
}

/// The trace's name in messages and reports: its path, or `standard input`.
pub fn trace_name(path: &Path) -> String {
    if path.as_os_str() == "-" {
        "standard input".to_string()
    } else {
        path.display().to_string()
    }
}

/// Whether the trace at `path` can be read again from its start: a regular file, not
/// standard input or a stream (a pipe, a FIFO, a device), which a first reading uses
/// up.
pub(crate) fn rereadable(path: &Path) -> bool {
    path.as_os_str() != "-" && std::fs::metadata(path).is_ok_and(|m| m.is_file())
}

/// A trace file, or standard input for `-`, buffered. A stream that can block (standard
/// input, a FIFO, a device) is read on a thread of its own when the run has a stop
/// flag, so that Ctrl-C ends the run while it waits (the trace then ends there).
fn open_trace(path: &Path, stop: Option<&Arc<AtomicBool>>) -> Result<Box<dyn BufRead + Send>, TraceError> {
    let origin = trace_name(path);
    let io = |e: std::io::Error| TraceError::Io { origin: origin.clone(), message: io_message(&e) };
    let buffered = |r: Box<dyn Read + Send>| -> Box<dyn BufRead + Send> { Box::new(BufReader::with_capacity(1 << 16, r)) };
    if path.as_os_str() == "-" {
        return Ok(match stop {
            Some(stop) => buffered(Box::new(Interruptible::new(|| Ok(std::io::stdin()), stop.clone()))),
            None => buffered(Box::new(std::io::stdin())),
        });
    }
    let meta = std::fs::metadata(path).map_err(io)?;
    if meta.is_dir() {
        return Err(TraceError::Io { origin, message: "it is a directory".to_string() });
    }
    match stop {
        Some(stop) if !meta.is_file() => {
            let path = path.to_path_buf();
            Ok(buffered(Box::new(Interruptible::new(move || File::open(path), stop.clone()))))
        }
        _ => Ok(buffered(Box::new(File::open(path).map_err(io)?))),
    }
}

/// The hardware threads of the run, checked against the machine's.
pub(crate) fn threads(pmus: &[&Pmu], opts: &StatOptions) -> Result<usize, StatError> {
    let shape = shape_of(pmus);
    let threads = opts.threads.unwrap_or(shape.default_threads);
    if !(1..=shape.max_threads).contains(&threads) {
        return Err(StatError::Threads { machine: shape.name, threads, max: shape.max_threads });
    }
    Ok(threads)
}

/// The machine that counts events of `pmus`.
pub(super) fn machine_for(catalog: &Catalog, pmus: &[&Pmu], opts: &StatOptions) -> Result<Box<dyn AnyRuns>, StatError> {
    if let Some(p) = pmus.iter().find(|p| !MODELLED.contains(&p.desc.family)) {
        let with_model: Vec<&str> =
            arch::FAMILIES.iter().filter(|f| MODELLED.contains(&f.name)).flat_map(|f| f.pmus.iter().map(|p| p.name)).collect();
        return Err(StatError::NoModel { pmu: p.name().to_string(), with_model: with_model.join(", ") });
    }
    // One machine per model: T4's strands and memory controllers count together, as do KT's.
    let model = pmus[0].desc.model;
    if pmus.iter().any(|p| p.desc.model != model) {
        return Err(StatError::MixedMachines { pmus: pmus.iter().map(|p| p.name()).collect::<Vec<_>>().join(", ") });
    }
    let threads = threads(pmus, opts)?;
    let driver: Box<dyn AnyRuns> = match pmus[0].desc.family {
        arm11::FAMILY => Box::new(Arm11Driver::new(model)),
        niagara::FAMILY => Box::new(NiagaraDriver::new(threads)),
        montecito::FAMILY => Box::new(MontecitoDriver::new(threads)),
        _ if model == kt::MODEL => Box::new(KtDriver::new(opts.kt.clone(), threads)?),
        _ => Box::new(T4Driver::new(catalog.pmu(t4::SPARC_T4.name)?, threads)),
    };
    Ok(driver)
}

/// A simulated machine's hardware threads (strands, vCPUs): how many run a workload
/// thread each by default, and at most.
struct Shape {
    name: &'static str,
    default_threads: usize,
    max_threads: usize,
}

fn shape_of(pmus: &[&Pmu]) -> Shape {
    let shape = |name, default_threads, max_threads| Shape { name, default_threads, max_threads };
    match pmus[0].desc.family {
        arm11::FAMILY => shape("ARM11", 1, 1),
        // One Niagara core: four strands.
        niagara::FAMILY => shape("Niagara", 4, 4),
        // Two threads per core (§2.4); `montecito-st` has Hyper-Threading disabled.
        montecito::FAMILY if pmus.iter().any(|p| p.name() == montecito::MONTECITO_ST.name) => shape("montecito-st", 1, 1),
        montecito::FAMILY => shape("Montecito", 2, 2),
        // A KT or T4 core: eight strands.
        _ if pmus[0].desc.model == kt::MODEL => shape("SPARC KT", 8, 8),
        _ => shape("SPARC T4", 8, 8),
    }
}

/// Families with a simulated model and driver.
const MODELLED: &[&str] = &[arm11::FAMILY, t4::FAMILY, t4::DRAM_FAMILY, niagara::FAMILY, kt::FAMILY, montecito::FAMILY];
