//! Sampling on counter overflow with Montecito's capture hardware (`pmu record`), as
//! pfmon's sampling module does it: every event counts from −period, so that its
//! counter wraps after `period` events; the wrap freezes the thread and interrupts
//! (oi = 1, §3.3.11), and the handler reads the capture registers while monitoring is
//! frozen (the only time they hold valid data, §3.3.8-§3.3.10), clears their valid
//! bits and the trace buffer index, re-arms the counter and resumes. The recording
//! keeps the raw register values; `pmu report` decodes them (`docs/record.md` gives
//! the file format).

mod file;
pub mod report;

pub use file::{read, ReadError, Writer};

use serde::{Deserialize, Serialize};

use pmukit_arch::montecito::capture::{ip_ear_mode, IPEAR_DELAY};
use pmukit_arch::montecito::registers::{FR, OI, OVERFLOW, PMV_M, PMV_VECTOR};
use pmukit_arch::{self as arch, Catalog, EncodedSet};
use pmukit_core::event_string::EventSel;

use crate::drivers::montecito::{kernel_psr, write_set_registers, PMI_VECTOR};
use crate::engine::{self, Exit};
use crate::models::montecito::{itanium_ip, Montecito, COUNT_BITS};
use crate::stat::{self, StatError, StatOptions};
use crate::stream::{Cursor, MONTECITO};

/// What a recording file says it is (its `format`), and the version this build writes
/// and reads.
pub const FORMAT: &str = "pmukit-record";
pub const VERSION: u32 = 1;

const COUNT_MODULUS: u64 = 1 << COUNT_BITS;
/// The counters' largest period: a count from −period must fit the 47 bits.
pub const MAX_PERIOD: u64 = COUNT_MODULUS - 1;
/// Montecito's generic counters (PMC4-15): the most events a recording can sample.
pub const MAX_EVENTS: usize = 12;

/// A recording: how it was made, the registers it programmed, each event's total, and
/// the samples.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Recording {
    pub format: String,
    pub version: u32,
    pub pmu: String,
    /// The built-in workload, or the trace file the program came from.
    pub program: String,
    pub seed: u64,
    pub threads: usize,
    /// Cycles simulated.
    pub cycles: u64,
    /// Events between samples.
    pub period: u64,
    pub events: Vec<RecordedEvent>,
    /// The set-wide registers written on each thread (PMC32-42, IBRs, DBRs) by name.
    pub registers: Vec<(String, u64)>,
    /// The machine's load-to-use latencies by level, in cycles, lowest level first:
    /// what `pmu report` sorts captured latencies into levels by; `L2` is the data
    /// side's, `L2I` the instruction side's (a recording may lack it: the I-EAR then
    /// sorts by the data side's levels).
    pub levels: Vec<(String, u64)>,
    pub samples: Vec<Sample>,
}

/// An event sampled: its name, the counter and value programmed, and its total count
/// over the run (every thread).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordedEvent {
    pub name: String,
    pub pmc: String,
    pub value: u64,
    pub count: u64,
}

/// One overflow interrupt: when, on which thread, which events' counters wrapped
/// (indices into `events`), where execution resumes (its Itanium address), and the capture registers as the
/// handler read them (only those of units the set armed).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sample {
    pub cycle: u64,
    pub thread: usize,
    pub events: Vec<usize>,
    pub ip: u64,
    /// PMD32, PMD33, PMD36.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dear: Option<[u64; 3]>,
    /// PMD34, PMD35.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iear: Option<[u64; 2]>,
    /// PMD38, PMD39, PMD48-63.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<TraceRegisters>,
}

/// The trace buffer's registers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceRegisters {
    pub pmd38: u64,
    pub pmd39: u64,
    pub entries: [u64; 16],
}

/// Which capture units a set arms, from its PMC37, 39, 40 and 42 (a plm bit set).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Armed {
    pub dear: bool,
    pub iear: bool,
    pub trace: bool,
    /// The IP-EAR's freeze delay, in IP-EAR mode (PMC42.mode = 1xx).
    pub ip_ear_delay: Option<u64>,
}

impl Armed {
    /// What `registers` (name, value) arm.
    pub fn of<'a>(registers: impl IntoIterator<Item = (&'a str, u64)>) -> Armed {
        let mut a = Armed::default();
        for (name, value) in registers {
            let on = value & 0xf != 0;
            match name {
                "PMC37" => a.iear = on,
                "PMC39" => a.trace |= on,
                "PMC40" => a.dear = on,
                "PMC42" if on && ip_ear_mode(value) => {
                    a.trace = true;
                    a.ip_ear_delay = Some(IPEAR_DELAY.get(value));
                }
                _ => {}
            }
        }
        a
    }
}

/// What receives a recording as it is made: its head (everything but the samples, the
/// cycles and the events' counts) once the machine is programmed, then each sample as
/// it is taken, so that nothing grows with the recording's length.
pub trait Sink {
    /// The most samples of the units `armed` it takes after `head`, if it has a limit.
    fn capacity(&self, head: &Recording, armed: Armed) -> Option<u64>;
    fn head(&mut self, head: &Recording) -> std::io::Result<()>;
    fn sample(&mut self, sample: &Sample) -> std::io::Result<()>;
}

/// The samples kept in memory, as many as the caller chose to run.
impl Sink for Vec<Sample> {
    fn capacity(&self, _: &Recording, _: Armed) -> Option<u64> {
        None
    }

    fn head(&mut self, _: &Recording) -> std::io::Result<()> {
        Ok(())
    }

    fn sample(&mut self, sample: &Sample) -> std::io::Result<()> {
        self.push(sample.clone());
        Ok(())
    }
}

/// Records `sels` sampling every `period` events on the machine of `opts`, keeping
/// the samples in the recording (see [`record_to`]).
pub fn record(
    catalog: &Catalog,
    sels: &[EventSel],
    period: u64,
    opts: &StatOptions,
    progress: &mut dyn FnMut(u64),
) -> Result<Recording, StatError> {
    let mut samples = Vec::new();
    let recording = record_to(catalog, sels, period, opts, progress, &mut samples)?;
    Ok(Recording { samples, ..recording })
}

/// Whether `pmu` has what `pmu record` samples with: Montecito's event address
/// registers and trace buffer.
pub fn has_capture_hardware(pmu: &pmukit_core::pmu::Pmu) -> Result<(), StatError> {
    if pmu.desc.family == arch::montecito::pmu::FAMILY {
        Ok(())
    } else {
        Err(StatError::NoCapture { pmu: pmu.name().to_string() })
    }
}

/// Records `sels` (Montecito events, placed together) sampling every `period` events
/// on the machine of `opts`, handing the head and each sample to `sink`; returns the
/// recording without its samples. `progress` hears the cycles done. A period that
/// could take more samples than the sink takes (a file, a recording's size) is
/// refused before the run.
pub fn record_to(
    catalog: &Catalog,
    sels: &[EventSel],
    period: u64,
    opts: &StatOptions,
    progress: &mut dyn FnMut(u64),
    sink: &mut dyn Sink,
) -> Result<Recording, StatError> {
    let first = sels.first().ok_or(StatError::Encode(arch::EncodeError::Empty))?;
    let pmu = catalog
        .pmu(first.pmu)
        .map_err(|e| StatError::Encode(arch::EncodeError::Unschedulable { pmu: first.pmu.to_string(), why: e.to_string() }))?;
    has_capture_hardware(pmu)?;
    if !(1..=MAX_PERIOD).contains(&period) {
        return Err(StatError::Period { period, max: MAX_PERIOD });
    }
    let set = arch::encode_set_with(pmu, sels, &opts.set_options)?;
    let threads = stat::threads(&[pmu], opts)?;
    let cfg = stat::montecito_config(threads, opts)?;
    let (stat::Stream::Montecito(blocks), _) = stat::blocks(&[pmu], opts, stat::Reads::of(sels))? else {
        return Err(StatError::NoCapture { pmu: pmu.name().to_string() });
    };
    let mut cursor = Cursor::new(blocks);
    let mut core = Montecito::new();
    let start = COUNT_MODULUS - period;
    let counters = counters(&set);
    for t in 0..threads {
        core.set_psr(t, kernel_psr())?;
        core.write_pmc(t, 0, FR.set(0, 1))?;
        write_set_registers(&mut core, t, &set);
        for &(n, pmc) in &counters {
            core.write_pmc(t, n, OI.set(pmc, 1))?;
            core.write_pmd(t, n, start)?;
        }
        core.write_pmv(t, PMV_M.set(PMV_VECTOR.set(0, PMI_VECTOR), 0))?;
        core.write_pmc(t, 0, 0)?;
    }
    let armed = Armed::of(set.registers.iter().map(|(r, v)| (*r, *v)));
    let mut head = Recording {
        format: FORMAT.to_string(),
        version: VERSION,
        pmu: pmu.name().to_string(),
        program: opts.trace.as_deref().map_or_else(|| opts.workload.clone(), stat::trace_name),
        seed: opts.seed,
        threads,
        cycles: 0,
        period,
        events: sels
            .iter()
            .zip(&counters)
            .map(|(sel, &(n, pmc))| RecordedEvent { name: sel.name(), pmc: format!("PMC{n}"), value: pmc, count: 0 })
            .collect(),
        registers: set.registers.iter().map(|(r, v)| (r.to_string(), *v)).collect(),
        // Each side's L2 (§2.1.2: L2D 5 cycles, L2I 7), then what they share; `pmu
        // report` sorts each EAR's latencies by its own side's.
        levels: vec![
            (report::DATA_L2.to_string(), cfg.l2d_cycles),
            (report::INSTRUCTION_L2.to_string(), cfg.l2i_cycles),
            ("L3".to_string(), cfg.l3_cycles),
            ("memory".to_string(), cfg.memory_cycles),
        ],
        samples: Vec::new(),
    };
    // Each event wraps at most max_inc x cycles / period times on each thread (twice
    // that with .all, which counts both threads' events); a recording holds a bounded
    // number of samples of the units armed.
    let bound: u128 = sels
        .iter()
        .map(|s| {
            let both = if s.modifier("all") == Some(1) { 2 } else { 1 };
            u128::from(opts.cycles) * u128::from(arch::montecito::pmu::max_inc(s)) * both * threads as u128
        })
        .sum();
    if let Some(cap) = sink.capacity(&head, armed).filter(|&cap| bound / u128::from(period) > u128::from(cap)) {
        return Err(StatError::TooManySamples {
            period,
            cycles: opts.cycles,
            bound: bound / u128::from(period),
            cap,
            size: pmukit_core::input::size(pmukit_core::input::RECORDING.bytes),
            fits: bound.div_ceil(u128::from(cap.max(1))),
        });
    }
    let write = |e: std::io::Error| StatError::Write(pmukit_core::input::io_message(&e));
    sink.head(&head).map_err(write)?;
    let mut wraps = vec![0u64; counters.len()];
    let mut done = 0;
    while done < opts.cycles {
        if opts.stop.as_ref().is_some_and(|s| s.load(std::sync::atomic::Ordering::Relaxed)) {
            break;
        }
        let (ran, exit) = engine::run(&mut core, &mut cursor, (opts.cycles - done).min(stat::STOP_CHECK));
        done += ran;
        progress(done);
        match exit {
            Exit::EndOfStream => break,
            Exit::Budget => {}
            Exit::Overflow => {
                for t in 0..threads {
                    if core.take_interrupt(t)?.is_some() {
                        done += settle(&mut core, &mut cursor, armed, opts.cycles - done);
                        let sample = service(&mut core, t, done, &cursor, &counters, armed, start, &mut wraps)?;
                        sink.sample(&sample).map_err(write)?;
                    }
                }
            }
        }
    }
    for ((e, &(n, _)), &w) in head.events.iter_mut().zip(&counters).zip(&wraps) {
        e.count = w * period;
        for t in 0..threads {
            e.count += (core.read_pmd(t, n)? & MAX_PERIOD).wrapping_sub(start) & MAX_PERIOD;
        }
    }
    head.cycles = done;
    Ok(head)
}

/// Each event's counter (PMC index) and PMC value, in the set's order.
fn counters(set: &EncodedSet) -> Vec<(usize, u64)> {
    set.events
        .iter()
        .filter_map(|e| {
            let (reg, pmc) = *e.registers.first()?;
            Some((reg.trim_start_matches("PMC").parse().ok()?, pmc))
        })
        .collect()
}

/// In IP-EAR mode the trace buffer freezes `delay` cycles after the PMU (§3.3.10.2):
/// the handler runs once they have passed. Returns the cycles run.
fn settle(core: &mut Montecito, cursor: &mut Cursor<MONTECITO>, armed: Armed, left: u64) -> u64 {
    match armed.ip_ear_delay {
        Some(delay) if delay > 0 => engine::run(core, cursor, (delay + 1).min(left)).0,
        _ => 0,
    }
}

/// §3.3.11 on thread `t`: the counters that wrapped (PMC0), the capture registers,
/// cleared for the next capture; the wrapped counters re-armed with what they counted
/// past the wrap; PMC0 cleared to resume.
#[allow(clippy::too_many_arguments)]
fn service(
    core: &mut Montecito,
    t: usize,
    cycle: u64,
    cursor: &Cursor<MONTECITO>,
    counters: &[(usize, u64)],
    armed: Armed,
    start: u64,
    wraps: &mut [u64],
) -> Result<Sample, StatError> {
    let wrapped = OVERFLOW.get(core.read_pmc(t, 0)?) << OVERFLOW.lsb;
    let mut events = Vec::new();
    for (i, &(n, _)) in counters.iter().enumerate() {
        if wrapped >> n & 1 == 1 {
            events.push(i);
            if let Some(w) = wraps.get_mut(i) {
                *w += 1;
            }
            let past = core.read_pmd(t, n)? & MAX_PERIOD;
            core.write_pmd(t, n, (start + past) & MAX_PERIOD)?;
        }
    }
    let read = |n: usize| core.read_pmd(t, n);
    let dear = if armed.dear { Some([read(32)?, read(33)?, read(36)?]) } else { None };
    let iear = if armed.iear { Some([read(34)?, read(35)?]) } else { None };
    let trace = if armed.trace {
        let mut entries = [0; 16];
        for (k, e) in entries.iter_mut().enumerate() {
            *e = read(48 + k)?;
        }
        Some(TraceRegisters { pmd38: read(38)?, pmd39: read(39)?, entries })
    } else {
        None
    };
    // "These bits should be cleared before the EAR is reused" (Tables 3-17, 3-22).
    for n in [33, 36, 34, 38] {
        core.write_pmd(t, n, 0)?;
    }
    core.write_pmc(t, 0, 0)?;
    let ip = cursor.block.as_ref().and_then(|b| b.body.get(cursor.span)).map_or(0, |s| itanium_ip(s.ip));
    Ok(Sample { cycle, thread: t, events, ip, dear, iear, trace })
}
