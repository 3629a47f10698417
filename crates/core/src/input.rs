//! Untrusted input, read within limits. Everything pmukit reads whole (events files,
//! machine configurations, perf output, pmu-events JSON, sysfs attributes,
//! recordings) goes through [`read_text`], which checks the size while reading: a
//! `/dev/zero`, an endless pipe or a huge file stops at its limit, not at the memory
//! limit. Line-oriented input goes through [`Lines`], which bounds each line instead.
//! Messages quote input only through [`excerpt`] and [`window`], so that an error
//! never repeats a huge input back.
//!
//! [`Interruptible`] reads a stream on a thread of its own, so that a read that
//! blocks (a pipe whose writer is slow, a FIFO nobody opened) cannot hold up Ctrl-C.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic))]

use std::io::{self, BufRead, Read};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::time::Duration;

/// How much of one kind of input is read: `what` names it in the refusal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit {
    pub what: &'static str,
    pub bytes: u64,
}

/// `--events-file`: the largest built-in table (Montecito's) is 205 KB.
pub const EVENTS_FILE: Limit = Limit { what: "an events file", bytes: 16 << 20 };
/// `--machine-config`: a few tables of a few keys each.
pub const MACHINE_CONFIG: Limit = Limit { what: "a machine configuration", bytes: 1 << 20 };
/// A JSON document of counts (`pmu stat --json`, or `perf stat -j` read whole).
pub const COUNTS_JSON: Limit = Limit { what: "a JSON document of counts", bytes: 64 << 20 };
/// One line of `perf stat -x` or `-j` output, read as a stream.
pub const COUNTS_LINE: Limit = Limit { what: "a line of perf stat output", bytes: 64 << 10 };
/// One pmu-events JSON file: Linux's largest (x86 uncore tables) are a few MB.
pub const PMU_EVENTS_JSON: Limit = Limit { what: "a pmu-events JSON file", bytes: 64 << 20 };
/// A sysfs attribute: the kernel's `show` functions write at most a page.
pub const SYSFS_FILE: Limit = Limit { what: "a sysfs attribute", bytes: 4096 };
/// A `pmu record` recording (the cap `pmu record` itself writes within).
pub const RECORDING: Limit = Limit { what: "a recording", bytes: 256 << 20 };

/// Why an input could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InputError {
    /// The input cannot be read at all (missing, a directory, no permission).
    #[error("cannot read {origin}: {why}")]
    Unreadable { origin: String, why: String },
    #[error("{origin} is larger than {limit}, the most {what} may hold (docs/ROBUSTNESS.md lists the limits)", limit = size(*bytes))]
    TooLarge { origin: String, what: &'static str, bytes: u64 },
    #[error("{origin} is not UTF-8 text: byte {offset} starts an invalid sequence")]
    NotText { origin: String, offset: usize },
}

impl InputError {
    /// Whether the input could not be read at all (exit 1), rather than read and
    /// found wrong (exit 2).
    pub fn is_unreadable(&self) -> bool {
        matches!(self, InputError::Unreadable { .. })
    }

    pub fn unreadable(origin: impl Into<String>, e: &io::Error) -> InputError {
        InputError::Unreadable { origin: origin.into(), why: io_message(e) }
    }
}

/// An I/O error as a message: the OS's words without Rust's "(os error N)".
pub fn io_message(e: &io::Error) -> String {
    let text = e.to_string();
    match text.find(" (os error") {
        Some(at) => text[..at].to_string(),
        None => text,
    }
}

/// A size as people read it: `1000 bytes`, `64 KiB`, `16 MiB`, `2.5 GiB` (one
/// decimal where the unit does not divide it).
pub fn size(bytes: u64) -> String {
    const UNITS: [(u64, &str); 3] = [(1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")];
    match UNITS.iter().find(|(unit, _)| bytes >= *unit) {
        Some((unit, name)) if bytes.is_multiple_of(*unit) => format!("{} {name}", bytes / unit),
        Some((unit, name)) => format!("{:.1} {name}", bytes as f64 / *unit as f64),
        None => format!("{bytes} bytes"),
    }
}

/// The whole of `reader` as text, refusing it once it holds more than `limit`
/// (checked while reading) or when it is not UTF-8.
pub fn read_text(reader: impl Read, origin: &str, limit: Limit) -> Result<String, InputError> {
    let mut bytes = Vec::new();
    reader.take(limit.bytes.saturating_add(1)).read_to_end(&mut bytes).map_err(|e| InputError::unreadable(origin, &e))?;
    if bytes.len() as u64 > limit.bytes {
        return Err(InputError::TooLarge { origin: origin.to_string(), what: limit.what, bytes: limit.bytes });
    }
    String::from_utf8(bytes).map_err(|e| InputError::NotText { origin: origin.to_string(), offset: e.utf8_error().valid_up_to() })
}

/// The file at `path` as text, within `limit` (its origin in messages is the path).
pub fn read_file(path: &Path, limit: Limit) -> Result<String, InputError> {
    read_named(path, &path.display().to_string(), limit)
}

/// The file at `path` as text, within `limit`, named `origin` in messages (`events
/// file a.toml`).
pub fn read_named(path: &Path, origin: &str, limit: Limit) -> Result<String, InputError> {
    let file = std::fs::File::open(path).map_err(|e| InputError::unreadable(origin, &e))?;
    read_text(file, origin, limit)
}

/// Characters of input a message quotes at most.
pub const EXCERPT_CHARS: usize = 80;

/// `text` as a message may quote it: at most `max` characters, control characters
/// escaped, and what was left out said.
pub fn excerpt(text: &str, max: usize) -> String {
    let mut out = String::new();
    for (shown, (at, c)) in text.char_indices().enumerate() {
        if shown == max {
            out.push_str(&format!("… ({} more bytes)", text.len() - at));
            return out;
        }
        push_visible(&mut out, c);
    }
    out
}

/// A window of at most `max` characters of `line` around its 1-based character
/// `column` (where a caret points), and the column within the window: a long line is
/// cut on both sides, each cut marked with `…`.
pub fn window(line: &str, column: usize, max: usize) -> (String, usize) {
    let chars: Vec<char> = line.chars().collect();
    let max = max.max(8);
    let at = column.saturating_sub(1).min(chars.len());
    let (start, end) = if chars.len() <= max {
        (0, chars.len())
    } else {
        let start = at.saturating_sub(max / 2).min(chars.len() - max);
        (start, start + max)
    };
    let mut out = String::new();
    if start > 0 {
        out.push('…');
    }
    // The caret's column counts what the window shows before it, escapes included.
    let mut col = 0;
    for (i, &c) in chars.iter().enumerate().take(end).skip(start) {
        if i == at {
            col = out.chars().count() + 1;
        }
        push_visible(&mut out, c);
    }
    if col == 0 {
        col = out.chars().count() + 1;
    }
    if end < chars.len() {
        out.push('…');
    }
    (out, col)
}

/// A TOML error as a message: its line and column (the toml crate reports a span),
/// the toml crate's words, and a window of the line with a caret under the column,
/// never the whole line (a one-line file of 100 MB would be repeated back).
pub fn toml_message(text: &str, e: &toml::de::Error) -> String {
    let words: Vec<String> = e.message().trim().lines().map(|l| excerpt(l, 4 * EXCERPT_CHARS)).collect();
    let words = words.join("\n");
    let Some(span) = e.span() else { return words };
    let before = text.get(..span.start.min(text.len())).unwrap_or_default();
    let line_no = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = before.get(line_start..).unwrap_or_default().chars().count() + 1;
    let line = text.get(line_start..).unwrap_or_default();
    let line = line.get(..line.find('\n').unwrap_or(line.len())).unwrap_or_default();
    let (shown, at) = window(line.trim_end_matches('\r'), column, EXCERPT_CHARS);
    format!("line {line_no}, column {column}: {words}\n    {shown}\n    {}^", " ".repeat(at - 1))
}

/// A character as a message shows it: control characters escaped, so that input can
/// neither break a line nor send a terminal escape.
fn push_visible(out: &mut String, c: char) {
    if c.is_control() {
        out.extend(c.escape_default());
    } else {
        out.push(c);
    }
}

/// Lines of a stream, each at most `limit` bytes long (without its line break): a
/// stream with no line breaks is refused at the limit, not held whole.
pub struct Lines<R> {
    reader: R,
    origin: String,
    limit: Limit,
    line: u64,
    buf: Vec<u8>,
}

impl<R: BufRead> Lines<R> {
    pub fn new(reader: R, origin: &str, limit: Limit) -> Lines<R> {
        Lines { reader, origin: origin.to_string(), limit, line: 0, buf: Vec::new() }
    }

    /// The next line (its number and its text, without `\n` or `\r\n`), `None` at the end.
    pub fn next_line(&mut self) -> Result<Option<(u64, &str)>, InputError> {
        self.buf.clear();
        let cap = self.limit.bytes.saturating_add(2);
        let n = (&mut self.reader).take(cap).read_until(b'\n', &mut self.buf).map_err(|e| InputError::unreadable(&self.origin, &e))?;
        if n == 0 {
            return Ok(None);
        }
        self.line += 1;
        if self.buf.last() == Some(&b'\n') {
            self.buf.pop();
            if self.buf.last() == Some(&b'\r') {
                self.buf.pop();
            }
        }
        if self.buf.len() as u64 > self.limit.bytes {
            return Err(InputError::TooLarge {
                origin: format!("{} line {}", self.origin, self.line),
                what: self.limit.what,
                bytes: self.limit.bytes,
            });
        }
        let line = self.line;
        let text = std::str::from_utf8(&self.buf)
            .map_err(|e| InputError::NotText { origin: format!("{} line {line}", self.origin), offset: e.valid_up_to() })?;
        Ok(Some((line, text)))
    }
}

/// What a read of an [`Interruptible`] stream gives once its stop flag is set: the
/// input ends there on purpose, and what was read of a line is not a line.
#[derive(Debug)]
pub struct Stopped;

impl std::fmt::Display for Stopped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("stopped (Ctrl-C)")
    }
}

impl std::error::Error for Stopped {}

/// Whether `e` is an interruptible stream's [`Stopped`].
pub fn is_stopped(e: &io::Error) -> bool {
    e.get_ref().is_some_and(|inner| inner.is::<Stopped>())
}

/// Bytes the reading thread hands over at a time, and how many such chunks may wait:
/// what an interruptible stream holds at most.
const CHUNK: usize = 1 << 16;
const CHUNKS_WAITING: usize = 4;
/// How often a reader waiting for data looks at the stop flag.
const POLL: Duration = Duration::from_millis(20);

/// A stream read on a thread of its own, whose reads fail with [`Stopped`] within
/// 20 ms of `stop` being set, even while the stream itself is blocked. The
/// stream is opened on that thread too, since opening a FIFO blocks until a writer
/// comes; an error opening it is the first read's.
pub struct Interruptible {
    chunks: Receiver<io::Result<Vec<u8>>>,
    chunk: Vec<u8>,
    at: usize,
    stop: Arc<AtomicBool>,
    done: bool,
}

impl Interruptible {
    pub fn new<R: Read>(open: impl FnOnce() -> io::Result<R> + Send + 'static, stop: Arc<AtomicBool>) -> Interruptible {
        let (tx, chunks) = mpsc::sync_channel(CHUNKS_WAITING);
        // The thread ends at the end of the stream, at an error, or when the reader is
        // dropped; a thread blocked on a stream that never ends lasts as the process does.
        std::thread::spawn(move || {
            let mut stream = match open() {
                Ok(s) => s,
                Err(e) => {
                    let _ = tx.send(Err(e));
                    return;
                }
            };
            loop {
                let mut buf = vec![0; CHUNK];
                match stream.read(&mut buf) {
                    Ok(0) => return,
                    Ok(n) => {
                        buf.truncate(n);
                        if tx.send(Ok(buf)).is_err() {
                            return;
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => {
                        let _ = tx.send(Err(e));
                        return;
                    }
                }
            }
        });
        Interruptible { chunks, chunk: Vec::new(), at: 0, stop, done: false }
    }
}

impl Read for Interruptible {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        while self.at == self.chunk.len() {
            if self.stop.load(Ordering::Relaxed) {
                return Err(io::Error::other(Stopped));
            }
            if self.done {
                return Ok(0);
            }
            match self.chunks.recv_timeout(POLL) {
                Ok(Ok(chunk)) => (self.chunk, self.at) = (chunk, 0),
                Ok(Err(e)) => {
                    self.done = true;
                    return Err(e);
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => self.done = true,
            }
        }
        let n = out.len().min(self.chunk.len() - self.at);
        out.get_mut(..n).unwrap_or_default().copy_from_slice(self.chunk.get(self.at..self.at + n).unwrap_or_default());
        self.at += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: Limit = Limit { what: "a test input", bytes: 10 };

    #[test]
    fn a_limit_is_checked_while_reading() {
        assert_eq!(read_text(&b"0123456789"[..], "x", SMALL).unwrap(), "0123456789");
        let endless = io::repeat(b'a');
        let e = read_text(endless, "endless", SMALL).unwrap_err();
        assert_eq!(e.to_string(), "endless is larger than 10 bytes, the most a test input may hold (docs/ROBUSTNESS.md lists the limits)");
        assert!(!e.is_unreadable());
    }

    #[test]
    fn text_must_be_utf8() {
        let e = read_text(&b"ab\xffc"[..], "f", SMALL).unwrap_err();
        assert_eq!(e, InputError::NotText { origin: "f".into(), offset: 2 });
    }

    #[test]
    fn a_directory_is_unreadable() {
        let e = read_file(Path::new("/"), SMALL).unwrap_err();
        assert!(e.is_unreadable(), "{e}");
        assert_eq!(e.to_string(), "cannot read /: Is a directory");
    }

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(size(4096), "4 KiB");
        assert_eq!(size(16 << 20), "16 MiB");
        assert_eq!(size(1 << 30), "1 GiB");
        assert_eq!(size(1000), "1000 bytes");
        assert_eq!(size(5 << 29), "2.5 GiB");
    }

    #[test]
    fn excerpts_are_bounded_and_escaped() {
        assert_eq!(excerpt("short", 80), "short");
        assert_eq!(excerpt("a\nb\x1b", 80), "a\\nb\\u{1b}");
        let long = "x".repeat(1000);
        assert_eq!(excerpt(&long, 5), "xxxxx… (995 more bytes)");
    }

    #[test]
    fn a_window_keeps_the_caret_on_its_character() {
        let line: String = (0..200).map(|i| char::from(b'a' + (i % 26) as u8)).collect();
        let (w, col) = window(&line, 150, 40);
        assert!(w.chars().count() <= 42, "{w}");
        assert_eq!(w.chars().nth(col - 1), line.chars().nth(149));
        let (w, col) = window("short line", 3, 40);
        assert_eq!((w.as_str(), col), ("short line", 3));
        let (w, col) = window(&line, 1, 40);
        assert_eq!(w.chars().next(), Some('a'));
        assert_eq!(col, 1);
        let (w, col) = window(&line, 201, 40);
        assert_eq!(w.chars().count(), 41);
        assert_eq!(col, 42, "the end of the line, past its last character");
    }

    #[test]
    fn lines_are_bounded() {
        let mut lines = Lines::new(&b"one\r\ntwo\n0123456789ab\n"[..], "in", SMALL);
        assert_eq!(lines.next_line().unwrap(), Some((1, "one")));
        assert_eq!(lines.next_line().unwrap(), Some((2, "two")));
        let e = lines.next_line().unwrap_err();
        assert_eq!(
            e.to_string(),
            "in line 3 is larger than 10 bytes, the most a test input may hold (docs/ROBUSTNESS.md lists the limits)"
        );
        let mut endless = Lines::new(io::BufReader::new(io::repeat(b'z')), "zeros", SMALL);
        assert!(endless.next_line().is_err());
    }

    #[test]
    fn an_interruptible_read_ends_when_stopped() {
        let stop = Arc::new(AtomicBool::new(false));
        // A stream that blocks for ever: the read end of a channel nobody writes.
        let (_keep, rx) = mpsc::channel::<()>();
        let blocked = move || -> io::Result<io::Empty> {
            let _ = rx.recv();
            Ok(io::empty())
        };
        let mut r = Interruptible::new(blocked, stop.clone());
        let flag = stop.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(30));
            flag.store(true, Ordering::Relaxed);
        });
        let started = std::time::Instant::now();
        assert!(is_stopped(&r.read(&mut [0; 8]).unwrap_err()));
        assert!(started.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn an_interruptible_stream_reads_through() {
        let stop = Arc::new(AtomicBool::new(false));
        let data: Vec<u8> = (0..200_000u32).map(|i| i as u8).collect();
        let copy = data.clone();
        let mut r = Interruptible::new(move || Ok(io::Cursor::new(copy)), stop);
        let mut got = Vec::new();
        r.read_to_end(&mut got).unwrap();
        assert_eq!(got, data);
        let failing =
            Interruptible::new(|| -> io::Result<io::Empty> { Err(io::Error::other("no such file")) }, Arc::new(AtomicBool::new(false)));
        assert!(io::read_to_string(failing).is_err());
    }
}
