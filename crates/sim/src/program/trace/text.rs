//! A trace's text: Valgrind Lackey `--trace-mem=yes` output or pmukit's native
//! format, read a buffer at a time and parsed where it lies, one record a line.

// Trace bytes reach every line here: positions in the buffer are read with `get`.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic))]

use std::io::BufRead;

use super::lackey::{self, lackey_line, lackey_record, Fast, Held};
use super::native::{self, native_line};
use super::{recorded, Line, Program, Source, TraceError, TraceStatus, NATIVE_HEADER, PROCESS};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Lackey,
    Native,
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
    // `#pmukit-trace v1 process`: the threads are one process's (a run of `pmu stat
    // -- PROG` written with --trace-out).
    let one_process = format == Format::Native
        && buf.split(|b| *b == b'\n').next().is_some_and(|first| first.split(|b| b.is_ascii_whitespace()).any(|w| w == PROCESS.as_bytes()));
    let status = TraceStatus::default();
    let end = buf.len();
    buf.resize(READ_BYTES.max(end), 0);
    let text = Text {
        reader,
        origin: origin.to_string(),
        format,
        buf,
        pos: 0,
        end,
        eof: false,
        line_no: 0,
        held: None,
        status: status.clone(),
        done: stopped,
        one_process,
    };
    Ok((recorded(text), status))
}

/// Bytes read from the trace at a time.
const READ_BYTES: usize = 1 << 16;
/// The longest line a trace may have: a file without line breaks is refused, not
/// held in memory whole.
const MAX_LINE: usize = 1 << 20;

/// A trace's text, read a buffer at a time and parsed line by line.
struct Text {
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
    /// Lackey: the instruction whose data lines may still follow, with its size and
    /// its first data access.
    held: Option<Held>,
    /// The header says the threads share one address space.
    one_process: bool,
    status: TraceStatus,
    done: bool,
}

impl Source for Text {
    fn line(&mut self) -> Option<Line> {
        self.record()
    }

    fn fail(&mut self, message: String) {
        let e = self.syntax(1, message);
        self.keep(e);
    }

    fn one_process(&self) -> bool {
        self.one_process
    }
}

impl Text {
    fn keep(&mut self, e: TraceError) {
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
        while !self.done {
            let unread = self.buf.get(self.pos..self.end).unwrap_or_default();
            match self.format {
                Format::Lackey => {
                    if let Fast::Line(n, record) = lackey::fast(unread, &mut self.held) {
                        self.pos += n;
                        self.line_no += 1;
                        match record {
                            Some(r) => return Some(Line::Instruction(r)),
                            None => continue,
                        }
                    }
                }
                Format::Native => {
                    if let Some((n, line)) = native::fast(unread) {
                        self.pos += n;
                        self.line_no += 1;
                        return Some(line);
                    }
                }
            }
            match self.parse_line() {
                Ok(Some(r)) => return Some(r),
                Ok(None) => continue,
                Err(e) => self.keep(e),
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
