//! Recorded programs: Valgrind Lackey `--trace-mem=yes` output and pmukit's native
//! trace format (`docs/workloads.md`), read line by line into phases, so a trace of
//! any length streams through a machine without being loaded whole.

// Trace bytes reach every line here: positions in the buffer are read with `get`.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic))]

use std::collections::HashMap;
use std::io::BufRead;
use std::sync::{Arc, Mutex};

mod lackey;
mod native;

use super::{Access, DataStream, Dma, Memory, Op, Pattern, Phase, Program, Table};
use crate::stream::Privilege;
use lackey::{lackey_line, lackey_record, Fast, Held};
use native::native_line;

/// The first line of a native trace.
pub const NATIVE_HEADER: &str = "#pmukit-trace v1";

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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Lackey,
    Native,
}

/// One instruction as the trace gives it.
#[derive(Debug, Clone, Copy)]
struct Record {
    thread: u8,
    privilege: Privilege,
    ip: u64,
    op: Kind,
}

#[derive(Debug, Clone, Copy)]
enum Kind {
    Plain(Op),
    Mem(MemKind, u64, u8),
    Branch(u64, bool),
    Call(u64),
    Return(u64),
    Jump(u64),
}

/// A device's transfer of `bytes` at address `at`, a write when set; not an
/// instruction: it ends the instructions before it.
#[derive(Debug, Clone, Copy)]
struct Transfer {
    at: u64,
    bytes: u32,
    write: bool,
}

/// What a line of a trace holds.
#[derive(Debug, Clone, Copy)]
enum Line {
    Instruction(Record),
    Transfer(Transfer),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MemKind {
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

/// The program a trace records: one software thread whose phases are chunks of the
/// trace. Reading errors end the program and are kept in the returned status.
pub fn program(mut reader: Box<dyn BufRead + Send>, origin: &str) -> Result<(Program, TraceStatus), TraceError> {
    let io = |e: std::io::Error| TraceError::Io { origin: origin.to_string(), message: pmukit_core::input::io_message(&e) };
    // The first line (at most 256 bytes of it) says the format: read whole, since a
    // pipe may hand its first bytes over a few at a time; it stays in the buffer in
    // front of the rest.
    let mut buf = Vec::with_capacity(READ_BYTES);
    // Ctrl-C before the first line: a program that does nothing.
    let stopped = match std::io::Read::take(&mut reader, 256).read_until(b'\n', &mut buf) {
        Err(e) if pmukit_core::input::is_stopped(&e) => true,
        r => r.map(|_| false).map_err(io)?,
    };
    let format = if stopped {
        buf.clear();
        Format::Native
    } else if buf.starts_with(NATIVE_HEADER.as_bytes()) {
        Format::Native
    } else if buf.starts_with(b"==") || buf.starts_with(b"I  ") {
        Format::Lackey
    } else {
        return Err(TraceError::Format { origin: origin.to_string() });
    };
    let status = TraceStatus::default();
    let end = buf.len();
    buf.resize(READ_BYTES.max(end), 0);
    let phases = Phases {
        reader,
        origin: origin.to_string(),
        format,
        buf,
        pos: 0,
        end,
        eof: false,
        line_no: 0,
        streams: HashMap::with_capacity_and_hasher(2 * PHASE_STREAMS, Default::default()),
        held: None,
        next: None,
        status: status.clone(),
        done: stopped,
    };
    Ok((Program { threads: vec![Box::new(phases)], timer: None }, status))
}

/// Bytes read from the trace at a time.
const READ_BYTES: usize = 1 << 16;
/// The longest line a trace may have: a file without line breaks is refused, not
/// held in memory whole.
const MAX_LINE: usize = 1 << 20;

struct Phases {
    reader: Box<dyn BufRead + Send>,
    origin: String,
    format: Format,
    /// Bytes read and not yet parsed are `buf[pos..end]`; lines are parsed where they
    /// lie (Lackey's are 20-odd bytes, and copying each cost more than parsing it).
    buf: Vec<u8>,
    pos: usize,
    end: usize,
    eof: bool,
    line_no: u64,
    /// The stream of each data address of the phase being read, kept between phases
    /// so that its table is allocated once.
    streams: Streams,
    /// Lackey: the instruction whose data lines may still follow, with its size and
    /// its first data access.
    held: Option<Held>,
    /// A line read that belongs to the next phase.
    next: Option<Line>,
    status: TraceStatus,
    done: bool,
}

impl Phases {
    fn fail(&mut self, e: TraceError) {
        if let Ok(mut slot) = self.status.error.lock() {
            slot.get_or_insert(e);
        }
        self.done = true;
    }

    fn syntax(&self, column: usize, message: impl Into<String>) -> TraceError {
        TraceError::Syntax { origin: self.origin.clone(), line: self.line_no, column, message: message.into() }
    }

    /// The next instruction or transfer, `None` at the end or on an error.
    fn record(&mut self) -> Option<Line> {
        if let Some(r) = self.next.take() {
            return Some(r);
        }
        while !self.done {
            if self.format == Format::Lackey {
                if let Fast::Line(n, record) = lackey::fast(self.buf.get(self.pos..self.end).unwrap_or_default(), &mut self.held) {
                    self.pos += n;
                    self.line_no += 1;
                    match record {
                        Some(r) => return Some(Line::Instruction(r)),
                        None => continue,
                    }
                }
            }
            match self.parse_line() {
                Ok(Some(r)) => return Some(r),
                Ok(None) => continue,
                Err(e) => self.fail(e),
            }
        }
        None
    }

    /// Parses the next line, `Ok(None)` for one that holds no record; at the end,
    /// Lackey's held instruction, which has no successor and falls through.
    fn parse_line(&mut self) -> Result<Option<Line>, TraceError> {
        let Some((start, end)) = self.line()? else {
            self.done = true;
            return Ok(self.held.take().map(|(ip, size, mem)| Line::Instruction(lackey_record(ip, size, mem, ip + size))));
        };
        self.line_no += 1;
        let line = self.buf.get(start..end).unwrap_or_default();
        let parsed = match self.format {
            Format::Lackey => lackey_line(line, &mut self.held).map(|r| r.map(Line::Instruction)),
            Format::Native => match std::str::from_utf8(line) {
                Ok(text) => native_line(text.trim_end()),
                Err(e) => Err((e.valid_up_to() + 1, "not UTF-8 text".to_string())),
            },
        };
        parsed.map_err(|(column, m)| self.syntax(column, m))
    }

    /// Where the next line lies in `buf` (without its line break), reading more of the
    /// trace as needed; `None` at the end.
    fn line(&mut self) -> Result<Option<(usize, usize)>, TraceError> {
        let mut searched = self.pos;
        loop {
            if let Some(n) = memchr::memchr(b'\n', self.buf.get(searched..self.end).unwrap_or_default()) {
                let start = self.pos;
                self.pos = searched + n + 1;
                return Ok(Some((start, searched + n)));
            }
            if self.eof {
                let start = self.pos;
                self.pos = self.end;
                return Ok((start < self.end).then_some((start, self.end)));
            }
            // Move the partial line to the front and read behind it.
            self.buf.copy_within(self.pos..self.end, 0);
            self.end -= self.pos;
            self.pos = 0;
            searched = self.end;
            if self.end == self.buf.len() {
                if self.end >= MAX_LINE {
                    self.line_no += 1;
                    return Err(self.syntax(1, format!("a line longer than {MAX_LINE} bytes: is this a trace?")));
                }
                self.buf.resize(2 * self.buf.len(), 0);
            }
            match self.reader.read(self.buf.get_mut(self.end..).unwrap_or_default()) {
                Ok(0) => self.eof = true,
                Ok(n) => self.end += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                // Ctrl-C ended the input: the program ends with the last whole line.
                Err(e) if pmukit_core::input::is_stopped(&e) => {
                    self.eof = true;
                    self.end = self.pos;
                }
                Err(e) => return Err(TraceError::Io { origin: self.origin.clone(), message: pmukit_core::input::io_message(&e) }),
            }
        }
    }
}

impl Iterator for Phases {
    type Item = Phase;

    fn next(&mut self) -> Option<Phase> {
        let first = match self.record()? {
            Line::Instruction(r) => r,
            Line::Transfer(_) => {
                let e = self.syntax(1, "a device transfer ends the instructions before it, and none come before this one");
                self.fail(e);
                return None;
            }
        };
        let mut phase = Phase {
            privilege: first.privilege,
            context: u32::from(first.thread) + 1,
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
            let next = match self.record() {
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

impl Phases {
    /// The device transfers from `first` on, which end `phase`: at the end of it the
    /// device moves the bytes, each transfer from a stream of its own.
    fn transfers(&mut self, phase: &mut Phase, first: Transfer) {
        let mut t = first;
        loop {
            if phase.dma.len() == PHASE_TRANSFERS {
                let e = self.syntax(1, format!("more than {PHASE_TRANSFERS} device transfers one after another"));
                self.fail(e);
                return;
            }
            phase.streams.push(DataStream::fixed(t.at, Memory::Cacheable));
            phase.dma.push(Dma { stream: (phase.streams.len() - 1) as u8, bytes: t.bytes, write: t.write });
            match self.record() {
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
