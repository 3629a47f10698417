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
/// Instructions per phase of a running program ([`Maker::running`]): a phase costs
/// the machine's thread some microseconds whatever its length (its check, its
/// allocations, freed on the other thread), and a running program's phases are as
/// many as its instructions need; twice the length was as fast as four times.
const RUNNING_RECORDS: usize = 2048;
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

/// Phases of one software thread of a program recorded as it runs, made where its
/// records are (the QEMU plugin's host thread that runs it), in order.
#[derive(Debug)]
pub struct Made {
    pub thread: u8,
    pub phases: Vec<Phase>,
}

/// What a running program hands over: its threads' phases, batch by batch, in the
/// order they ran.
type Batches = Box<dyn Iterator<Item = Made> + Send>;

/// A program recorded as it runs (a binary under QEMU, `pmu stat -- PROG`), which a
/// run takes once: it cannot be read again. Clones share it.
#[derive(Clone)]
pub struct Running {
    /// The command, as the report names the workload.
    pub name: String,
    batches: Arc<Mutex<Option<Batches>>>,
    pub status: TraceStatus,
    /// Set when the program has ended, which a count that ended sooner (`--cycles`)
    /// waits for before it reports, as perf reports after the command.
    ended: Arc<(Mutex<bool>, std::sync::Condvar)>,
}

impl Running {
    /// The program whose phases come in `batches`, with the status its errors go to.
    pub fn new(name: String, batches: impl Iterator<Item = Made> + Send + 'static, status: TraceStatus) -> Running {
        Running { name, batches: Arc::new(Mutex::new(Some(Box::new(batches)))), status, ended: Arc::default() }
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

    /// The program, the first time; `None` after. Its threads' phases run as one
    /// software thread, in the order the batches came.
    pub fn take(&self) -> Option<Program> {
        let batches = self.batches.lock().ok().and_then(|mut s| s.take())?;
        Some(Program { threads: vec![Box::new(batches.flat_map(|m| m.phases))], timer: None })
    }

    /// Writes the program as a native trace to `out` as it runs (`--trace-out`):
    /// replayed with `--trace`, it is the same program. `origin` names `out` in
    /// errors, which end the run.
    pub fn write_to(&self, out: Box<dyn std::io::Write + Send>, origin: String) {
        if let Ok(mut slot) = self.batches.lock() {
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

/// Batches that are also written, as a native trace.
struct Tee {
    inner: Batches,
    out: std::io::BufWriter<Box<dyn std::io::Write + Send>>,
    origin: String,
    /// The header, until it is written with the first batch.
    header: Option<String>,
    status: TraceStatus,
}

impl Tee {
    /// Keeps the first error, naming the file.
    fn failed(&self, e: &std::io::Error) {
        let e = TraceError::Io { origin: self.origin.clone(), message: pmukit_core::input::io_message(e) };
        if let Ok(mut slot) = self.status.error.lock() {
            slot.get_or_insert(e);
        }
    }

    fn write(&mut self, made: &Made) -> std::io::Result<()> {
        use std::io::Write;
        if let Some(header) = self.header.take() {
            self.out.write_all(header.as_bytes())?;
        }
        for phase in &made.phases {
            for line in lines(phase, made.thread) {
                writeln!(self.out, "{}", native::native_text(&line))?;
            }
        }
        Ok(())
    }
}

impl Iterator for Tee {
    type Item = Made;

    fn next(&mut self) -> Option<Made> {
        use std::io::Write;
        let Some(made) = self.inner.next() else {
            if let Err(e) = self.out.flush() {
                self.failed(&e);
            }
            return None;
        };
        match self.write(&made) {
            Ok(()) => Some(made),
            Err(e) => {
                self.failed(&e);
                None
            }
        }
    }
}

impl std::fmt::Debug for Running {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Running").field("name", &self.name).finish_non_exhaustive()
    }
}

/// The program of a recording: one software thread whose phases are chunks of it.
pub fn recorded(source: impl Source + 'static) -> Program {
    let maker = Maker::new(source.one_process());
    Program { threads: vec![Box::new(Phases { source, maker, next: None, ended: false })], timer: None }
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

/// A recording read here made into phases ([`Maker`]), each ended early by device
/// transfers.
struct Phases<S> {
    source: S,
    maker: Maker,
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
        loop {
            match self.line() {
                None => return self.maker.take(),
                Some(Line::Instruction(r)) => {
                    if let Some(done) = self.maker.push(r) {
                        return Some(done);
                    }
                }
                Some(Line::Transfer(t)) => {
                    let Some(mut phase) = self.maker.take() else {
                        self.fail("a device transfer ends the instructions before it, and none come before this one");
                        return None;
                    };
                    self.transfers(&mut phase, t);
                    return Some(phase);
                }
            }
        }
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

/// Records made into phases one at a time: up to `PHASE_RECORDS` instructions of
/// one thread at one privilege level each. Recordings read here use it, and so do the
/// QEMU plugin's threads, each making its own guest thread's phases as it runs
/// ([`Maker::running`]).
pub struct Maker {
    /// Whether the threads are one process's (address space 1), or each its own.
    one_process: bool,
    shape: Shape,
    phase: Option<Phase>,
    /// The thread of `phase`.
    thread: u8,
    /// The stream of each data address of `phase`, kept between phases so that its
    /// table is allocated once.
    streams: Streams,
}

impl Maker {
    pub fn new(one_process: bool) -> Maker {
        let shape = Shape { records: PHASE_RECORDS, window_bits: 0 };
        Maker {
            one_process,
            shape,
            phase: None,
            thread: 0,
            streams: HashMap::with_capacity_and_hasher(2 * PHASE_STREAMS, Default::default()),
        }
    }

    /// The maker of a running program's phases (the QEMU plugin's, one per guest
    /// thread, whose threads are one process's): its data references name one stream
    /// per 4 GB of addresses, the address within it their offset, and its phases are
    /// up to `RUNNING_RECORDS` instructions long. A trace's stream per distinct address
    /// ended a phase at every 239th, some 700 instructions of a sort, and each phase
    /// costs the machine's thread some microseconds. The ARM and SPARC machines, the
    /// only ones that run programs, count an access by its address, its stream's
    /// memory type, page size and sharing, which every stream of a recording has
    /// alike, so the counts are the same (`tests/running_phases.rs`). A trace keeps its
    /// stream per address: Montecito's ALAT, and SPARC's prefetches (which a running
    /// program does not make: QEMU reports no access for one), tell data apart by
    /// stream.
    pub fn running() -> Maker {
        Maker { shape: Shape { records: RUNNING_RECORDS, window_bits: 32 }, ..Maker::new(true) }
    }

    /// Adds `r` to the phase being made, or to a new one when it is another thread's
    /// or privilege's, or the phase is full: then returns the phase it ended.
    #[inline]
    pub fn push(&mut self, r: Record) -> Option<Phase> {
        let thread = self.thread;
        let shape = self.shape;
        if let Some(p) = self.phase.as_mut().filter(|p| joins(p, shape, thread, r.thread, r.privilege)) {
            add(p, &mut self.streams, shape, r);
            return None;
        }
        self.begin(r)
    }

    /// [`Maker::push`] of an instruction whose operation names no data stream or jump
    /// table (`Kind::Plain(*op)`, which goes into the phase as it is): a plain one, a
    /// branch, a call, a return. A running program's plain instructions come here from
    /// their translations: the operation is copied from where it was decoded, never
    /// built field by field and read back whole (which stalled on the store buffer).
    #[inline]
    pub fn push_op(&mut self, thread: u8, privilege: Privilege, ip: u64, op: &Op) -> Option<Phase> {
        let current = self.thread;
        let shape = self.shape;
        if let Some(p) = self.phase.as_mut().filter(|p| joins(p, shape, current, thread, privilege)) {
            p.body.push(*op);
            p.addresses.push(ip);
            return None;
        }
        self.begin(Record { thread, privilege, ip, op: Kind::Plain(*op) })
    }

    /// [`Maker::push`] of a data reference (`Kind::Mem(kind, at, bytes)`).
    #[inline]
    pub fn push_mem(&mut self, thread: u8, privilege: Privilege, ip: u64, kind: MemKind, at: u64, bytes: u8) -> Option<Phase> {
        let current = self.thread;
        let shape = self.shape;
        if let Some(p) = self.phase.as_mut().filter(|p| joins(p, shape, current, thread, privilege)) {
            let op = reference(p, &mut self.streams, shape, kind, at, bytes);
            p.body.push(op);
            p.addresses.push(ip);
            return None;
        }
        self.begin(Record { thread, privilege, ip, op: Kind::Mem(kind, at, bytes) })
    }

    /// Ends the phase being made and starts one with `r`.
    #[cold]
    fn begin(&mut self, r: Record) -> Option<Phase> {
        let ended = self.take();
        self.start(r);
        ended
    }

    /// A new phase, whose first instruction is `r`.
    fn start(&mut self, r: Record) {
        let phase = self.phase.insert(Phase {
            privilege: r.privilege,
            context: if self.one_process { 1 } else { u32::from(r.thread) + 1 },
            masks: Default::default(),
            entry: r.ip,
            code_page: None,
            uncached_code: false,
            guest: false,
            body: Vec::with_capacity(self.shape.records),
            iterations: 1,
            streams: Vec::new(),
            tables: Vec::new(),
            addresses: Vec::with_capacity(self.shape.records),
            dma: Vec::new(),
            watch: None,
            fp: Default::default(),
        });
        self.thread = r.thread;
        add(phase, &mut self.streams, self.shape, r);
    }

    /// The phase being made, ended here; `None` when no record has come since the
    /// last.
    pub fn take(&mut self) -> Option<Phase> {
        self.streams.clear();
        self.phase.take()
    }
}

/// What phases a [`Maker`] makes: how many instructions each holds at most, and the
/// addresses one data stream covers, `2^window_bits` from a multiple of that (0: a
/// stream per address, 32: per 4 GB, each address its offset, which is 32 bits).
#[derive(Debug, Clone, Copy)]
struct Shape {
    records: usize,
    window_bits: u32,
}

/// Whether an instruction of `thread` at `privilege` can join `p`, a phase of
/// `current`'s: the same thread and privilege, and room for an instruction and the
/// streams it may take.
#[inline]
fn joins(p: &Phase, shape: Shape, current: u8, thread: u8, privilege: Privilege) -> bool {
    p.body.len() < shape.records
        && p.streams.len() + p.tables.len() < PHASE_STREAMS - PHASE_TRANSFERS
        && p.privilege == privilege
        && current == thread
}

/// The stream of each data address of a phase. One lookup per record must be cheap:
/// FxHash, not SipHash (which took a fifth of reading a Lackey trace); a trace that
/// collides its addresses on purpose only slows itself down.
type Streams = rustc_hash::FxHashMap<u64, u8>;

/// Appends one instruction to a phase.
#[inline]
fn add(phase: &mut Phase, streams: &mut Streams, shape: Shape, r: Record) {
    let op = match r.op {
        Kind::Plain(op) => op,
        Kind::Mem(kind, at, bytes) => reference(phase, streams, shape, kind, at, bytes),
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

/// A data reference's operation, giving each window of the phase's data addresses
/// (each distinct address, or each 4 GB: [`Shape`]) a fixed stream in 4 KB pages (a
/// trace says nothing of page sizes).
#[inline]
fn reference(phase: &mut Phase, streams: &mut Streams, shape: Shape, kind: MemKind, at: u64, bytes: u8) -> Op {
    let base = at >> shape.window_bits << shape.window_bits;
    let offset = (at - base) as u32;
    let stream = *streams.entry(base).or_insert_with(|| {
        phase.streams.push(DataStream::fixed(base, Memory::Cacheable));
        (phase.streams.len() - 1) as u8
    });
    let a = Access { stream, offset, size: bytes, use_next: false };
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

/// The lines a phase made by [`Maker`] was made of, `thread`'s: its instructions,
/// then its device transfers. What `--trace-out` writes.
pub fn lines(phase: &Phase, thread: u8) -> impl Iterator<Item = Line> + '_ {
    let at = |a: &Access| phase.streams.get(usize::from(a.stream)).map_or(0, |s| s.base) + u64::from(a.offset);
    let instructions = phase.body.iter().zip(&phase.addresses).map(move |(op, &ip)| {
        let mem = |kind, a: &Access| Kind::Mem(kind, at(a), a.size);
        let op = match op {
            Op::Load(a) => mem(MemKind::Load, a),
            Op::FpLoad(a) => mem(MemKind::FpLoad, a),
            Op::Store(a) => mem(MemKind::Store, a),
            Op::Modify(a) => mem(MemKind::Modify, a),
            Op::Atomic(a) => mem(MemKind::Atomic, a),
            Op::Prefetch(a) => mem(MemKind::Prefetch, a),
            Op::BlockLoad(a) => mem(MemKind::BlockLoad, a),
            Op::BlockStore(a) => mem(MemKind::BlockStore, a),
            Op::FlushCode(a) => mem(MemKind::FlushCode, a),
            Op::Branch { target, when } => Kind::Branch(*target, when.taken(0, phase.iterations)),
            Op::Call { target, .. } => Kind::Call(*target),
            Op::Return { to } => Kind::Return(*to),
            Op::Jump { table, .. } => {
                Kind::Jump(phase.tables.get(usize::from(*table)).and_then(|t| t.targets.first()).copied().unwrap_or_default())
            }
            other => Kind::Plain(*other),
        };
        Line::Instruction(Record { thread, privilege: phase.privilege, ip, op })
    });
    let transfers = phase.dma.iter().map(move |d| {
        let at = phase.streams.get(usize::from(d.stream)).map_or(0, |s| s.base);
        Line::Transfer(Transfer { at, bytes: d.bytes, write: d.write })
    });
    instructions.chain(transfers)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// What `--trace-out` writes of a running program's phases is the records
        /// they were made of, in order, whichever phase each landed in (thousands of
        /// data addresses end phases early, a change of privilege ends one).
        #[test]
        fn phases_give_back_the_records_they_were_made_of(
            thread in any::<u8>(),
            records in proptest::collection::vec((any::<u64>(), native::tests::op(), 0u8..8), 1..3000),
        ) {
            let records: Vec<Record> = records
                .into_iter()
                .map(|(ip, op, p)| Record { thread, privilege: if p == 0 { Privilege::KERNEL } else { Privilege::USER }, ip, op })
                .collect();
            let mut maker = Maker::new(true);
            let mut phases: Vec<Phase> = records.iter().filter_map(|&r| maker.push(r)).collect();
            phases.extend(maker.take());
            prop_assert!(maker.take().is_none());
            for p in &phases {
                prop_assert!(p.body.len() <= PHASE_RECORDS && p.streams.len() + p.tables.len() <= PHASE_STREAMS - PHASE_TRANSFERS);
                prop_assert!(p.check().is_ok());
            }
            let back: Vec<Line> = phases.iter().flat_map(|p| lines(p, thread)).collect();
            let records: Vec<Line> = records.into_iter().map(Line::Instruction).collect();
            prop_assert_eq!(back, records);
        }

        /// The shortcuts a running program takes into a phase (`push_op`, `push_mem`)
        /// make the phases `push`, the reference, makes of the same records: the
        /// same instructions, streams, tables and phase boundaries.
        #[test]
        fn pushing_operations_makes_the_phases_records_make(
            records in proptest::collection::vec((0u8..3, any::<u64>(), native::tests::op(), 0u8..8), 1..3000),
        ) {
            let records: Vec<Record> = records
                .into_iter()
                .map(|(thread, ip, op, p)| Record { thread, privilege: if p == 0 { Privilege::KERNEL } else { Privilege::USER }, ip, op })
                .collect();
            let (mut reference, mut shortcut) = (Maker::new(false), Maker::new(false));
            let (mut expected, mut made) = (Vec::new(), Vec::new());
            for &r in &records {
                expected.extend(reference.push(r));
                let Record { thread, privilege, ip, op } = r;
                let taken = |yes: bool| if yes { Pattern::Always } else { Pattern::Never };
                made.extend(match op {
                    Kind::Plain(op) => shortcut.push_op(thread, privilege, ip, &op),
                    Kind::Branch(target, yes) => shortcut.push_op(thread, privilege, ip, &Op::Branch { target, when: taken(yes) }),
                    Kind::Call(target) => shortcut.push_op(thread, privilege, ip, &Op::Call { target, frame: 0 }),
                    Kind::Return(to) => shortcut.push_op(thread, privilege, ip, &Op::Return { to }),
                    Kind::Mem(kind, at, bytes) => shortcut.push_mem(thread, privilege, ip, kind, at, bytes),
                    Kind::Jump(_) => shortcut.push(r),
                });
            }
            expected.extend(reference.take());
            made.extend(shortcut.take());
            prop_assert_eq!(made, expected);
        }
    }
}
