//! Sampling on counter overflow with Montecito's capture hardware (`pmu record`), as
//! pfmon's sampling module does it: every event counts from −period, so that its
//! counter wraps after `period` events; the wrap freezes the thread and interrupts
//! (oi = 1, §3.3.11), and the handler reads the capture registers while monitoring is
//! frozen (the only time they hold valid data, §3.3.8-§3.3.10), clears their valid
//! bits and the trace buffer index, re-arms the counter and resumes. The recording
//! keeps the raw register values; `pmu report` decodes them (`docs/record.md` gives
//! the file format).

pub mod report;

use serde::{Deserialize, Serialize};

use pmukit_arch::montecito::capture::{ip_ear_mode, IPEAR_DELAY};
use pmukit_arch::montecito::registers::{FR, OI, OVERFLOW, PMV_M, PMV_VECTOR};
use pmukit_arch::{self as arch, Catalog, EncodedSet};
use pmukit_core::event_string::EventSel;

use crate::drivers::montecito::{kernel_psr, write_set_registers, PMI_VECTOR};
use crate::engine::{self, Exit};
use crate::models::montecito::{itanium_ip, Montecito, COUNT_BITS};
use crate::stat::{self, StatError, StatOptions};
use crate::stream::Cursor;

/// What a recording file says it is (its `format`), and the version this build writes
/// and reads.
pub const FORMAT: &str = "pmukit-record";
pub const VERSION: u32 = 1;

const COUNT_MODULUS: u64 = 1 << COUNT_BITS;
/// The counters' largest period: a count from −period must fit the 47 bits.
pub const MAX_PERIOD: u64 = COUNT_MODULUS - 1;
/// Cycles the engine runs between looks at the stop flag and the progress callback.
const CHUNK: u64 = 1 << 24;

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
    /// what `pmu report` sorts captured latencies into levels by.
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

/// Why a recording cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadError {
    #[error("not a pmu recording: {0}")]
    NotJson(String),
    #[error("not a pmu recording: its \"format\" is {0:?}, expected \"{FORMAT}\" (`pmu record` writes them)")]
    Format(String),
    #[error("a version {0} recording; this pmu reads version {VERSION} (docs/record.md)")]
    Version(u64),
    #[error("malformed recording: {0}")]
    Malformed(String),
    #[error("a recording of {0}, but only Montecito's capture registers are recorded")]
    Pmu(String),
    #[error("sample {sample} names event {event}, but the recording has {events} (0-{})", events.saturating_sub(1))]
    Event { sample: usize, event: usize, events: usize },
    #[error("sample {sample} is of thread {thread}, but the recording ran {threads} thread(s)")]
    Thread { sample: usize, thread: usize, threads: usize },
}

impl Recording {
    /// The recording in `text`, checked: its format and version first (so that another
    /// version is named as such), then its fields, and every sample's event indices and
    /// thread within the recording's.
    pub fn read(text: &str) -> Result<Recording, ReadError> {
        let head: serde_json::Value = serde_json::from_str(text).map_err(|e| ReadError::NotJson(e.to_string()))?;
        let format = head.get("format").and_then(|f| f.as_str()).unwrap_or("");
        if format != FORMAT {
            return Err(ReadError::Format(format.to_string()));
        }
        let version = head.get("version").and_then(|v| v.as_u64()).unwrap_or(0);
        if version != u64::from(VERSION) {
            return Err(ReadError::Version(version));
        }
        let r: Recording = serde_json::from_value(head).map_err(|e| ReadError::Malformed(e.to_string()))?;
        if !r.pmu.starts_with("montecito") {
            return Err(ReadError::Pmu(r.pmu));
        }
        for (sample, s) in r.samples.iter().enumerate() {
            if let Some(&event) = s.events.iter().find(|&&e| e >= r.events.len()) {
                return Err(ReadError::Event { sample, event, events: r.events.len() });
            }
            if s.thread >= r.threads {
                return Err(ReadError::Thread { sample, thread: s.thread, threads: r.threads });
            }
        }
        Ok(r)
    }
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

/// Records `sels` (Montecito events, placed together) sampling every `period` events
/// on the machine of `opts`. `progress` hears the cycles done.
pub fn record(
    catalog: &Catalog,
    sels: &[EventSel],
    period: u64,
    opts: &StatOptions,
    progress: &mut dyn FnMut(u64),
) -> Result<Recording, StatError> {
    let first = sels.first().ok_or(StatError::Encode(arch::EncodeError::Empty))?;
    let pmu = catalog
        .pmu(first.pmu)
        .map_err(|e| StatError::Encode(arch::EncodeError::Unschedulable { pmu: first.pmu.to_string(), why: e.to_string() }))?;
    if pmu.desc.family != arch::montecito::pmu::FAMILY {
        return Err(StatError::NoCapture { pmu: pmu.name().to_string() });
    }
    if !(1..=MAX_PERIOD).contains(&period) {
        return Err(StatError::Period { period, max: MAX_PERIOD });
    }
    let set = arch::encode_set_with(pmu, sels, &opts.set_options)?;
    let threads = stat::threads(&[pmu], opts)?;
    let cfg = stat::montecito_config(threads, opts)?;
    let (blocks, _) = stat::blocks(&[pmu], opts)?;
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
    let mut wraps = vec![0u64; counters.len()];
    let mut samples = Vec::new();
    let mut done = 0;
    while done < opts.cycles {
        if opts.stop.as_ref().is_some_and(|s| s.load(std::sync::atomic::Ordering::Relaxed)) {
            break;
        }
        let (ran, exit) = engine::run(&mut core, &mut cursor, (opts.cycles - done).min(CHUNK));
        done += ran;
        progress(done);
        match exit {
            Exit::EndOfStream => break,
            Exit::Budget => {}
            Exit::Overflow => {
                for t in 0..threads {
                    if core.take_interrupt(t)?.is_some() {
                        done += settle(&mut core, &mut cursor, armed, opts.cycles - done);
                        samples.push(service(&mut core, t, done, &cursor, &counters, armed, start, &mut wraps)?);
                    }
                }
            }
        }
    }
    let mut events = Vec::new();
    for ((sel, &(n, pmc)), &w) in sels.iter().zip(&counters).zip(&wraps) {
        let mut count = w * period;
        for t in 0..threads {
            count += (core.read_pmd(t, n)? & MAX_PERIOD).wrapping_sub(start) & MAX_PERIOD;
        }
        events.push(RecordedEvent { name: sel.name(), pmc: format!("PMC{n}"), value: pmc, count });
    }
    Ok(Recording {
        format: FORMAT.to_string(),
        version: VERSION,
        pmu: pmu.name().to_string(),
        program: opts.trace.clone().unwrap_or_else(|| opts.workload.clone()),
        seed: opts.seed,
        threads,
        cycles: done,
        period,
        events,
        registers: set.registers.iter().map(|(r, v)| (r.to_string(), *v)).collect(),
        levels: vec![("L2".to_string(), cfg.l2d_cycles), ("L3".to_string(), cfg.l3_cycles), ("memory".to_string(), cfg.memory_cycles)],
        samples,
    })
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
fn settle(core: &mut Montecito, cursor: &mut Cursor, armed: Armed, left: u64) -> u64 {
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
    cursor: &Cursor,
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
