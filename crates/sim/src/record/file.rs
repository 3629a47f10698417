//! The recording file (docs/record.md), written and read as a stream: `pmu record`
//! writes each sample as it is taken and `pmu report` decodes each as it is read, so
//! neither holds a recording whole. The file is one JSON object whose head (format,
//! version, how it was made, the registers and levels) comes before the samples and
//! whose tail (the cycles and each event's count) after them. Reading checks the head
//! as it comes, each sample against it, and the tail against the samples, within the
//! size a recording may have (`pmukit_core::input::RECORDING`).

use std::cell::RefCell;
use std::fmt;
use std::io::{self, Read, Seek, SeekFrom, Write};

use pmukit_core::input::{self, InputError};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Serialize;

use super::{Armed, RecordedEvent, Recording, Sample, Sink, TraceRegisters, FORMAT, MAX_EVENTS, MAX_PERIOD, VERSION};

/// Why a recording cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadError {
    /// The input cannot be read (exit 1); every other error is its content's (exit 2).
    #[error("cannot read the recording: {0}")]
    Io(String),
    #[error(transparent)]
    TooLarge(InputError),
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
    Event { sample: u64, event: usize, events: usize },
    #[error("sample {sample} is of thread {thread}, but the recording ran {threads} thread(s)")]
    Thread { sample: u64, thread: usize, threads: usize },
    /// A field out of its range, or contradicting another.
    #[error("malformed recording: \"{field}\": {why}")]
    Field { field: &'static str, why: String },
}

impl ReadError {
    pub fn is_unreadable(&self) -> bool {
        matches!(self, ReadError::Io(_))
    }

    fn field(field: &'static str, why: impl Into<String>) -> ReadError {
        ReadError::Field { field, why: why.into() }
    }
}

/// Writes a recording as `pmu record` makes it: the head, each sample on a line of
/// its own, then the tail (`finish`).
pub struct Writer<W: Write> {
    out: W,
    samples: u64,
}

impl<W: Write> Writer<W> {
    pub fn new(out: W) -> Writer<W> {
        Writer { out, samples: 0 }
    }

    /// Samples written so far.
    pub fn samples(&self) -> u64 {
        self.samples
    }

    /// Ends the file with the recording's cycles and its events' counts.
    pub fn finish(mut self, recording: &Recording) -> io::Result<W> {
        write!(self.out, "\n],\"cycles\":{},\"events\":{}}}\n", recording.cycles, json(&recording.events)?)?;
        self.out.flush()?;
        Ok(self.out)
    }
}

fn json(v: &impl Serialize) -> io::Result<String> {
    serde_json::to_string(v).map_err(io::Error::other)
}

/// The head as the file starts, up to the opening of the samples.
fn head_text(h: &Recording) -> io::Result<String> {
    Ok(format!(
        "{{\"format\":{},\"version\":{},\"pmu\":{},\"program\":{},\"seed\":{},\"threads\":{},\"period\":{},\"registers\":{},\"levels\":{},\"samples\":[",
        json(&h.format)?,
        h.version,
        json(&h.pmu)?,
        json(&h.program)?,
        h.seed,
        h.threads,
        h.period,
        json(&h.registers)?,
        json(&h.levels)?,
    ))
}

impl<W: Write> Sink for Writer<W> {
    fn capacity(&self, head: &Recording, armed: Armed) -> Option<u64> {
        Some(max_samples(head, armed))
    }

    fn head(&mut self, head: &Recording) -> io::Result<()> {
        self.out.write_all(head_text(head)?.as_bytes())
    }

    fn sample(&mut self, sample: &Sample) -> io::Result<()> {
        let sep = if self.samples == 0 { "\n" } else { ",\n" };
        write!(self.out, "{sep}{}", json(sample)?)?;
        self.samples += 1;
        Ok(())
    }
}

/// How many samples of the units `armed` a recording of `head` may hold within
/// `input::RECORDING`: the file's size less its head and largest tail, over the
/// largest sample's size (every number at its widest).
fn max_samples(head: &Recording, armed: Armed) -> u64 {
    let widest = Sample {
        cycle: u64::MAX,
        thread: usize::MAX,
        events: vec![MAX_EVENTS; MAX_EVENTS],
        ip: u64::MAX,
        dear: armed.dear.then_some([u64::MAX; 3]),
        iear: armed.iear.then_some([u64::MAX; 2]),
        trace: armed.trace.then_some(TraceRegisters { pmd38: u64::MAX, pmd39: u64::MAX, entries: [u64::MAX; 16] }),
    };
    let per_sample = json(&widest).map_or(1024, |s| s.len() as u64 + 2);
    let events: Vec<RecordedEvent> = head.events.iter().map(|e| RecordedEvent { count: u64::MAX, ..e.clone() }).collect();
    let tail = json(&events).map_or(4096, |s| s.len() as u64) + 64;
    let fixed = head_text(head).map_or(1 << 16, |s| s.len() as u64) + tail;
    input::RECORDING.bytes.saturating_sub(fixed) / per_sample
}

impl Recording {
    /// The recording in `text` with its samples, checked as [`read`] checks one.
    pub fn read(text: &str) -> Result<Recording, ReadError> {
        let mut samples = Vec::new();
        let r = read(&mut io::Cursor::new(text.as_bytes()), &mut |_, s| samples.push(s))?;
        Ok(Recording { samples, ..r })
    }
}

/// Counts what passes through, so that a read cut at the size limit is told from a
/// file that ends early.
struct Counted<R> {
    inner: R,
    read: u64,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        Ok(n)
    }
}

/// Reads a recording from `input`, handing each sample (with the whole head and
/// tail) to `on_sample` as it is read, and returns the recording without its samples.
///
/// Its members may come in any order (a tool that sorts a JSON object's keys keeps a
/// recording readable), so it is read twice: first every member but the samples,
/// checked (the format and version first, so that another version is named as such,
/// then each field's range: threads 1 or 2, a period the 47-bit counters take, 1 to
/// Montecito's 12 events, bounded registers and levels); then the samples alone, each
/// checked against the rest (its thread, its events, its capture registers, cycles
/// that never go back or pass the last) and decoded as it comes; last each event's
/// count against its samples. Neither pass holds the samples.
pub fn read<R: Read + Seek>(input: &mut R, on_sample: &mut dyn FnMut(&Recording, Sample)) -> Result<Recording, ReadError> {
    let found = RefCell::new(None);
    let rewind = |input: &mut R| input.seek(SeekFrom::Start(0)).map(|_| ()).map_err(|e| ReadError::Io(input::io_message(&e)));
    rewind(input)?;
    let head = pass(input, Head::default(), &found)?.finish()?;
    rewind(input)?;
    let mut seen = Seen::default();
    pass(input, SamplesOnly { head: &head, seen: &mut seen, on_sample, found: &found }, &found)?;
    tail(&head, &seen)?;
    Ok(head)
}

/// One pass over the file with `visitor`, within the size limit; a check that failed
/// inside it gives the error it left in `found`.
fn pass<R: Read, V: for<'de> Visitor<'de>>(
    input: &mut R,
    visitor: V,
    found: &RefCell<Option<ReadError>>,
) -> Result<<V as Visitor<'static>>::Value, ReadError> {
    let limit = input::RECORDING;
    let mut reader = io::BufReader::new(Counted { inner: input.take(limit.bytes + 1), read: 0 });
    let result = {
        let mut de = serde_json::Deserializer::from_reader(&mut reader);
        de.deserialize_map(visitor).and_then(|r| de.end().map(|()| r))
    };
    if reader.get_ref().read > limit.bytes {
        return Err(ReadError::TooLarge(InputError::TooLarge { origin: "the recording".into(), what: limit.what, bytes: limit.bytes }));
    }
    match (result, found.borrow_mut().take()) {
        (_, Some(e)) => Err(e),
        (Ok(r), None) => Ok(r),
        (Err(e), None) if e.is_io() => Err(ReadError::Io(e.to_string())),
        (Err(e), None) if e.is_syntax() || e.is_eof() => Err(ReadError::NotJson(e.to_string())),
        (Err(e), None) => Err(ReadError::Malformed(e.to_string())),
    }
}

/// Every field, and the most registers (PMC32-42, eight IBRs, eight DBRs) and levels
/// a recording may list.
const FIELDS: &[&str] =
    &["format", "version", "pmu", "program", "seed", "threads", "cycles", "period", "events", "registers", "levels", "samples"];
const MAX_REGISTERS: usize = 64;
const MAX_LEVELS: usize = 8;

/// The first pass: every member as JSON, the samples skipped.
#[derive(Default)]
struct Head {
    members: Vec<(&'static str, serde_json::Value)>,
    samples: bool,
}

impl<'de> Visitor<'de> for Head {
    type Value = Head;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a pmu recording (a JSON object)")
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<Head, A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            let field = FIELDS.iter().copied().find(|f| *f == key).ok_or_else(|| de::Error::unknown_field(&key, FIELDS))?;
            if self.members.iter().any(|(f, _)| *f == field) || (field == "samples" && self.samples) {
                return Err(de::Error::duplicate_field(field));
            }
            if field == "samples" {
                map.next_value::<de::IgnoredAny>()?;
                self.samples = true;
            } else {
                self.members.push((field, map.next_value()?));
            }
        }
        Ok(self)
    }
}

impl Head {
    fn member<T: serde::de::DeserializeOwned>(&mut self, field: &'static str) -> Result<T, ReadError> {
        let at =
            self.members.iter().position(|(f, _)| *f == field).ok_or_else(|| ReadError::Malformed(format!("missing field `{field}`")))?;
        let (_, v) = self.members.swap_remove(at);
        serde_json::from_value(v).map_err(|e| ReadError::field(field, input::excerpt(&e.to_string(), 4 * input::EXCERPT_CHARS)))
    }

    /// The recording the members make, checked: the format and version first.
    fn finish(mut self) -> Result<Recording, ReadError> {
        let format: String = self.member("format").map_err(|_| ReadError::Format(String::new()))?;
        if format != FORMAT {
            return Err(ReadError::Format(input::excerpt(&format, input::EXCERPT_CHARS)));
        }
        let version: u64 = self.member("version").map_err(|_| ReadError::Version(0))?;
        if version != u64::from(VERSION) {
            return Err(ReadError::Version(version));
        }
        let pmu: String = self.member("pmu")?;
        if !matches!(pmu.as_str(), "montecito" | "montecito-st") {
            return Err(ReadError::Pmu(input::excerpt(&pmu, input::EXCERPT_CHARS)));
        }
        let r = Recording {
            format,
            version: VERSION,
            pmu,
            program: self.member("program")?,
            seed: self.member("seed")?,
            threads: self.member("threads")?,
            cycles: self.member("cycles")?,
            period: self.member("period")?,
            events: self.member("events")?,
            registers: self.member("registers")?,
            levels: self.member("levels")?,
            samples: Vec::new(),
        };
        if !self.samples {
            return Err(ReadError::Malformed("missing field `samples`".to_string()));
        }
        if !(1..=2).contains(&r.threads) {
            return Err(ReadError::field("threads", format!("{} threads; a Montecito core has 1 or 2", r.threads)));
        }
        if !(1..=MAX_PERIOD).contains(&r.period) {
            let why = format!("{}; a period is 1 to {MAX_PERIOD} events (a count from -period fits the 47-bit counters)", r.period);
            return Err(ReadError::field("period", why));
        }
        if r.events.is_empty() || r.events.len() > MAX_EVENTS {
            return Err(ReadError::field(
                "events",
                format!("{} events; a recording samples 1 to {MAX_EVENTS} (Montecito's PMC4-15)", r.events.len()),
            ));
        }
        if r.registers.len() > MAX_REGISTERS {
            return Err(ReadError::field(
                "registers",
                format!("{} registers; the set-wide ones are at most {MAX_REGISTERS}", r.registers.len()),
            ));
        }
        if r.levels.len() > MAX_LEVELS {
            return Err(ReadError::field("levels", format!("{} levels; at most {MAX_LEVELS}", r.levels.len())));
        }
        Ok(r)
    }
}

/// What the samples tell of the events, checked against the tail.
#[derive(Default)]
struct Seen {
    samples: u64,
    wraps: [u64; MAX_EVENTS],
    last_cycle: u64,
}

/// Each event's count against its samples: at least a period for each wrap, and
/// less than two more per thread (a counter short of its next wrap, or wrapped as the
/// run ended).
fn tail(r: &Recording, seen: &Seen) -> Result<(), ReadError> {
    for (e, &wraps) in r.events.iter().zip(&seen.wraps) {
        let least = u128::from(wraps) * u128::from(r.period);
        let most = (u128::from(wraps) + 2 * r.threads as u128) * u128::from(r.period);
        if !(least..most).contains(&u128::from(e.count)) {
            let why = format!(
                "{} counted {}, but its {wraps} sample(s) of period {} mean {least} to {} events",
                input::excerpt(&e.name, input::EXCERPT_CHARS),
                e.count,
                r.period,
                most - 1
            );
            return Err(ReadError::field("events", why));
        }
    }
    Ok(())
}

/// The second pass: the samples alone, each checked against the head and handed on.
struct SamplesOnly<'a, 'f> {
    head: &'a Recording,
    seen: &'a mut Seen,
    on_sample: &'a mut (dyn FnMut(&Recording, Sample) + 'f),
    found: &'a RefCell<Option<ReadError>>,
}

impl<'de> Visitor<'de> for SamplesOnly<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a pmu recording (a JSON object)")
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<String>()? {
            if key == "samples" {
                map.next_value_seed(&mut self)?;
            } else {
                map.next_value::<de::IgnoredAny>()?;
            }
        }
        Ok(())
    }
}

impl<'de> DeserializeSeed<'de> for &mut SamplesOnly<'_, '_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for &mut SamplesOnly<'_, '_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of samples")
    }

    fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<(), S::Error> {
        let head = self.head;
        while let Some(s) = seq.next_element::<Sample>()? {
            if let Err(e) = check(head, self.seen, &s) {
                return Err(fail(self.found, e));
            }
            (self.on_sample)(head, s);
        }
        Ok(())
    }
}

fn fail<E: de::Error>(found: &RefCell<Option<ReadError>>, e: ReadError) -> E {
    let text = e.to_string();
    found.borrow_mut().get_or_insert(e);
    E::custom(text)
}

/// A sample against the recording's head: its thread, its events (each that wrapped,
/// in order, once), when it was taken, and the capture registers the head arms.
fn check(head: &Recording, seen: &mut Seen, s: &Sample) -> Result<(), ReadError> {
    let n = seen.samples;
    if s.thread >= head.threads {
        return Err(ReadError::Thread { sample: n, thread: s.thread, threads: head.threads });
    }
    if let Some(&event) = s.events.iter().find(|&&e| e >= head.events.len()) {
        return Err(ReadError::Event { sample: n, event, events: head.events.len() });
    }
    if s.events.is_empty() || s.events.windows(2).any(|w| w.first() >= w.get(1)) {
        let why = format!("sample {n} lists {:?}: a sample names the events that wrapped, at least one, in order, each once", s.events);
        return Err(ReadError::field("samples", why));
    }
    if s.cycle < seen.last_cycle || s.cycle > head.cycles {
        let why = format!(
            "sample {n} at cycle {}: samples come in order ({} before it) within the recording's {} cycles",
            s.cycle, seen.last_cycle, head.cycles
        );
        return Err(ReadError::field("samples", why));
    }
    let armed = Armed::of(head.registers.iter().map(|(n, v)| (n.as_str(), *v)));
    let units = [
        ("dear", s.dear.is_some(), armed.dear, "PMC40 (the data EAR)"),
        ("iear", s.iear.is_some(), armed.iear, "PMC37 (the instruction EAR)"),
        ("trace", s.trace.is_some(), armed.trace, "PMC39 or PMC42 (the trace buffer)"),
    ];
    if let Some((unit, has, _, register)) = units.iter().find(|(_, has, armed, _)| has != armed) {
        let why = if *has {
            format!("sample {n} holds {unit} registers, but {register} is not armed")
        } else {
            format!("sample {n} lacks the {unit} registers that {register} arms")
        };
        return Err(ReadError::field("samples", why));
    }
    for &e in &s.events {
        if let Some(w) = seen.wraps.get_mut(e) {
            *w += 1;
        }
    }
    seen.last_cycle = s.cycle;
    seen.samples += 1;
    Ok(())
}
