//! Recorded programs: instructions as something recorded them, one at a time, made
//! into phases, so a recording of any length streams through a machine without being
//! held whole. The recordings are Valgrind Lackey `--trace-mem=yes` output and
//! pmukit's native trace format (`docs/workloads.md`), read line by line (`text`), and
//! a program running under QEMU, whose plugin hands its instructions over as records
//! ([`Source`]).

// Trace bytes reach every line here: positions in the buffer are read with `get`.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic))]

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

mod lackey;
mod native;
mod text;

use super::{Access, DataStream, Dma, Memory, Op, Pattern, Phase, Program, Table};
use crate::stream::Privilege;
pub use text::program;

/// The first line of a native trace.
pub const NATIVE_HEADER: &str = "#pmukit-trace v1";
/// The word after the header that says the trace's threads are one process's, in
/// one address space.
pub const PROCESS: &str = "process";

/// Instructions per phase: enough to amortise a phase, small enough to stream.
const PHASE_RECORDS: usize = 1024;
/// Data streams and jump tables a phase can name (their indices are bytes), of which
/// the instructions may take all but those kept for the device transfers that end it.
const PHASE_STREAMS: usize = 255;
/// Device transfers one after another in a trace: they all end the phase before them.
const PHASE_TRANSFERS: usize = 16;

/// A trace that cannot be read, with where and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TraceError {
    #[error("{origin}:{line}:{column}: {message}")]
    Syntax { origin: String, line: u64, column: usize, message: String },
    #[error("{origin}: {message}")]
    Io { origin: String, message: String },
    #[error("{origin}: not a trace: the first line is neither Valgrind Lackey output (`==PID==`, `I  ADDR,SIZE`) nor `{NATIVE_HEADER}`")]
    Format { origin: String },
}

/// What the run learns of the trace as it reads it: the first error, and how many
/// instructions it read.
#[derive(Debug, Clone, Default)]
pub struct TraceStatus {
    pub error: Arc<Mutex<Option<TraceError>>>,
}

impl TraceStatus {
    pub fn error(&self) -> Option<TraceError> {
        self.error.lock().map(|e| e.clone()).unwrap_or(None)
    }
}

/// One instruction as it was recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record {
    /// The software thread that ran it (0-255); each runs in an address space of its
    /// own, thread + 1.
    pub thread: u8,
    pub privilege: Privilege,
    pub ip: u64,
    pub op: Kind,
}

/// What a recorded instruction did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// An instruction without a data reference or a change of flow.
    Plain(Op),
    /// A data reference: its kind, address and bytes.
    Mem(MemKind, u64, u8),
    /// A conditional or direct branch to the address, taken or not.
    Branch(u64, bool),
    /// A call to the address.
    Call(u64),
    /// A return to the address.
    Return(u64),
    /// An indirect jump to the address.
    Jump(u64),
}

/// A device's transfer of `bytes` at address `at`, a write when set; not an
/// instruction: it ends the instructions before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Transfer {
    pub at: u64,
    pub bytes: u32,
    pub write: bool,
}

/// What a recording holds next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Line {
    Instruction(Record),
    Transfer(Transfer),
}

/// Where a recorded program's instructions come from, one at a time.
pub trait Source: Send {
    /// The next instruction or transfer; `None` at the end, or after an error.
    fn line(&mut self) -> Option<Line>;
    /// The recording breaks a rule of programs (see [`Phases`]): keep the error,
    /// naming where the source is, and end.
    fn fail(&mut self, message: String);
    /// Whether the recording's threads are one process's, sharing its address space
    /// (address space 1); otherwise thread N runs in address space N + 1.
    fn one_process(&self) -> bool {
        false
    }
}

/// A program recorded as it runs (a binary under QEMU, `pmu stat -- PROG`), which a
/// run takes once: it cannot be read again. Clones share it.
#[derive(Clone)]
pub struct Running {
    /// The command, as the report names the workload.
    pub name: String,
    source: Arc<Mutex<Option<Box<dyn Source>>>>,
    pub status: TraceStatus,
    /// Set when the program has ended, which a count that ended sooner (`--cycles`)
    /// waits for before it reports, as perf reports after the command.
    ended: Arc<(Mutex<bool>, std::sync::Condvar)>,
}

impl Running {
    /// The program `source` records, with the status its errors go to.
    pub fn new(name: String, source: impl Source + 'static, status: TraceStatus) -> Running {
        Running { name, source: Arc::new(Mutex::new(Some(Box::new(source)))), status, ended: Arc::default() }
    }

    /// The program has ended.
    pub fn end(&self) {
        let (flag, signal) = &*self.ended;
        if let Ok(mut ended) = flag.lock() {
            *ended = true;
            signal.notify_all();
        }
    }

    /// Waits until the program has ended.
    pub fn wait_for_end(&self) {
        let (flag, signal) = &*self.ended;
        let Ok(mut ended) = flag.lock() else { return };
        while !*ended {
            match signal.wait(ended) {
                Ok(e) => ended = e,
                Err(_) => return,
            }
        }
    }

    /// The program, the first time; `None` after.
    pub fn take(&self) -> Option<Program> {
        let source = self.source.lock().ok().and_then(|mut s| s.take())?;
        Some(recorded(source))
    }

    /// Writes the program as a native trace to `out` as it runs (`--trace-out`):
    /// replayed with `--trace`, it is the same program. `origin` names `out` in
    /// errors, which end the run.
    pub fn write_to(&self, out: Box<dyn std::io::Write + Send>, origin: String) {
        if let Ok(mut slot) = self.source.lock() {
            if let Some(inner) = slot.take() {
                let header = format!("{NATIVE_HEADER} {PROCESS}\n");
                *slot = Some(Box::new(Tee {
                    inner,
                    out: std::io::BufWriter::new(out),
                    origin,
                    header: Some(header),
                    status: self.status.clone(),
                }));
            }
        }
    }
}

impl Source for Box<dyn Source> {
    fn line(&mut self) -> Option<Line> {
        (**self).line()
    }

    fn fail(&mut self, message: String) {
        (**self).fail(message)
    }

    fn one_process(&self) -> bool {
        (**self).one_process()
    }
}

/// A source whose lines are also written, as a native trace.
struct Tee {
    inner: Box<dyn Source>,
    out: std::io::BufWriter<Box<dyn std::io::Write + Send>>,
    origin: String,
    /// The header, until it is written with the first line.
    header: Option<String>,
    status: TraceStatus,
}

impl Tee {
    fn write(&mut self, text: &str) -> bool {
        use std::io::Write;
        match self.out.write_all(text.as_bytes()) {
            Ok(()) => true,
            Err(e) => {
                let e = TraceError::Io { origin: self.origin.clone(), message: pmukit_core::input::io_message(&e) };
                if let Ok(mut slot) = self.status.error.lock() {
                    slot.get_or_insert(e);
                }
                false
            }
        }
    }
}

impl Source for Tee {
    fn line(&mut self) -> Option<Line> {
        if let Some(header) = self.header.take() {
            if !self.write(&header) {
                return None;
            }
        }
        let Some(line) = self.inner.line() else {
            use std::io::Write;
            if let Err(e) = self.out.flush() {
                let e = TraceError::Io { origin: self.origin.clone(), message: pmukit_core::input::io_message(&e) };
                if let Ok(mut slot) = self.status.error.lock() {
                    slot.get_or_insert(e);
                }
            }
            return None;
        };
        let text = native::native_text(&line) + "\n";
        self.write(&text).then_some(line)
    }

    fn fail(&mut self, message: String) {
        self.inner.fail(message)
    }

    fn one_process(&self) -> bool {
        self.inner.one_process()
    }
}

impl std::fmt::Debug for Running {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Running").field("name", &self.name).finish_non_exhaustive()
    }
}

/// The program of a recording: one software thread whose phases are chunks of it.
pub fn recorded(source: impl Source + 'static) -> Program {
    let phases =
        Phases { source, streams: HashMap::with_capacity_and_hasher(2 * PHASE_STREAMS, Default::default()), next: None, ended: false };
    Program { threads: vec![Box::new(phases)], timer: None }
}

/// The kind of data reference of a recorded instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemKind {
    Load,
    FpLoad,
    Store,
    Modify,
    Atomic,
    Prefetch,
    BlockLoad,
    BlockStore,
    FlushCode,
}

/// A recording made into phases: up to `PHASE_RECORDS` instructions of one thread
/// at one privilege level each, ended early by device transfers.
struct Phases<S> {
    source: S,
    /// The stream of each data address of the phase being made, kept between phases
    /// so that its table is allocated once.
    streams: Streams,
    /// A line read that belongs to the next phase.
    next: Option<Line>,
    ended: bool,
}

impl<S: Source> Phases<S> {
    fn line(&mut self) -> Option<Line> {
        if let Some(l) = self.next.take() {
            return Some(l);
        }
        if self.ended {
            return None;
        }
        let line = self.source.line();
        self.ended = line.is_none();
        line
    }

    fn fail(&mut self, message: impl Into<String>) {
        self.source.fail(message.into());
        self.ended = true;
    }
}

impl<S: Source> Iterator for Phases<S> {
    type Item = Phase;

    fn next(&mut self) -> Option<Phase> {
        let first = match self.line()? {
            Line::Instruction(r) => r,
            Line::Transfer(_) => {
                self.fail("a device transfer ends the instructions before it, and none come before this one");
                return None;
            }
        };
        let mut phase = Phase {
            privilege: first.privilege,
            context: if self.source.one_process() { 1 } else { u32::from(first.thread) + 1 },
            masks: Default::default(),
            entry: first.ip,
            code_page: None,
            body: Vec::with_capacity(PHASE_RECORDS),
            iterations: 1,
            streams: Vec::new(),
            tables: Vec::new(),
            addresses: Vec::with_capacity(PHASE_RECORDS),
            dma: Vec::new(),
        };
        let mut streams = std::mem::take(&mut self.streams);
        streams.clear();
        let mut r = first;
        loop {
            add(&mut phase, &mut streams, r);
            let next = match self.line() {
                None => break,
                Some(Line::Transfer(t)) => {
                    self.transfers(&mut phase, t);
                    break;
                }
                Some(Line::Instruction(next)) => next,
            };
            let full = phase.body.len() == PHASE_RECORDS || phase.streams.len() + phase.tables.len() >= PHASE_STREAMS - PHASE_TRANSFERS;
            // A new thread or privilege starts a new phase.
            if full || next.thread != first.thread || next.privilege != first.privilege {
                self.next = Some(Line::Instruction(next));
                break;
            }
            r = next;
        }
        self.streams = streams;
        Some(phase)
    }
}

impl<S: Source> Phases<S> {
    /// The device transfers from `first` on, which end `phase`: at the end of it the
    /// device moves the bytes, each transfer from a stream of its own.
    fn transfers(&mut self, phase: &mut Phase, first: Transfer) {
        let mut t = first;
        loop {
            if phase.dma.len() == PHASE_TRANSFERS {
                self.fail(format!("more than {PHASE_TRANSFERS} device transfers one after another"));
                return;
            }
            phase.streams.push(DataStream::fixed(t.at, Memory::Cacheable));
            phase.dma.push(Dma { stream: (phase.streams.len() - 1) as u8, bytes: t.bytes, write: t.write });
            match self.line() {
                Some(Line::Transfer(next)) => t = next,
                Some(line) => {
                    self.next = Some(line);
                    return;
                }
                None => return,
            }
        }
    }
}

/// The stream of each data address of a phase. One lookup per record must be cheap:
/// FxHash, not SipHash (which took a fifth of reading a Lackey trace); a trace that
/// collides its addresses on purpose only slows itself down.
type Streams = rustc_hash::FxHashMap<u64, u8>;

/// Appends one instruction to a phase, giving each distinct data address a fixed
/// stream in 4 KB pages (a trace says nothing of page sizes).
fn add(phase: &mut Phase, streams: &mut Streams, r: Record) {
    let mut stream = |addr: u64| {
        *streams.entry(addr).or_insert_with(|| {
            phase.streams.push(DataStream::fixed(addr, Memory::Cacheable));
            (phase.streams.len() - 1) as u8
        })
    };
    let op = match r.op {
        Kind::Plain(op) => op,
        Kind::Mem(kind, addr, size) => {
            let a = Access { stream: stream(addr), offset: 0, size, use_next: false };
            match kind {
                MemKind::Load => Op::Load(a),
                MemKind::FpLoad => Op::FpLoad(a),
                MemKind::Store => Op::Store(a),
                MemKind::Modify => Op::Modify(a),
                MemKind::Atomic => Op::Atomic(a),
                MemKind::Prefetch => Op::Prefetch(a),
                MemKind::BlockLoad => Op::BlockLoad(a),
                MemKind::BlockStore => Op::BlockStore(a),
                MemKind::FlushCode => Op::FlushCode(a),
            }
        }
        Kind::Branch(target, taken) => Op::Branch { target, when: if taken { Pattern::Always } else { Pattern::Never } },
        Kind::Call(target) => Op::Call { target, frame: 0 },
        Kind::Return(to) => Op::Return { to },
        Kind::Jump(target) => {
            phase.tables.push(Table { targets: vec![target] });
            Op::Jump { table: (phase.tables.len() - 1) as u8, via: None }
        }
    };
    phase.body.push(op);
    phase.addresses.push(r.ip);
}
