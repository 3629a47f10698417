//! Counts read back from another tool's output: `perf stat -x SEP` (CSV), `perf stat -j`
//! (JSON lines) and `pmu stat --json`, for `pmu metrics`.
//!
//! perf's columns vary with its options and version, so a CSV line is read by its shape,
//! not by a fixed order: an optional interval time (`%16.9f`), an optional aggregation
//! column (`CPU3` for `-A`, `S0-D0-C1` plus a CPU count for `--per-core`, `S0` or `N0`
//! plus a count for `--per-socket` / `--per-node`, `comm-pid` for `--per-thread`), then
//! the count, its unit and the event, an optional variance (`1.09%`, `-r`), the run time,
//! the percentage running, and perf's own metric value and unit (ignored: `pmu metrics`
//! computes its own). A count is a number, `<not counted>` or `<not supported>`.
//!
//! Values are returned as perf's raw counts: perf prints the software clocks
//! (`task-clock`, `cpu-clock`) in `msec`, which are converted back to the nanoseconds
//! the kernel counts and metrics use.

// Input reaches every line of this module: no panicking operation is allowed in it.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic))]

use std::io::BufRead;

use serde::Serialize;
use serde_json::Value;
use thiserror::Error;

use crate::input::{self, InputError};

/// One count of one event.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Record {
    /// The end of its interval in seconds (`-I`), or `None` for the whole run.
    pub interval: Option<f64>,
    /// What the count is of when perf did not sum over the machine: `CPU3`,
    /// `S0-D0-C1`, `S0`, `sleep-4408`, `MCU1`; `None` for the whole machine.
    pub unit: Option<String>,
    /// The PMU, where the input says (`pmu stat --json`).
    pub pmu: Option<String>,
    /// The event as the input spells it: `instructions`, `r07`,
    /// `armv6_1176/event=0x7/u`, `INSTR_EXEC`.
    pub event: String,
    /// The count in the event's raw unit (nanoseconds for perf's clocks), or `None`
    /// when it was not counted.
    pub value: Option<f64>,
    pub status: Status,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Counted,
    /// perf's `<not counted>`: the event never ran.
    NotCounted,
    /// perf's `<not supported>`: the machine refused it.
    NotSupported,
}

/// Which tool and form an input is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    PerfCsv,
    PerfJson,
    PmuJson,
}

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ReadError {
    #[error("{origin}: empty: expected perf stat -x or -j output, or pmu stat --json output")]
    Empty { origin: String },
    #[error("{origin}: this is perf stat's table for people, not for programs: run perf stat with -x, (CSV) or -j (JSON)")]
    HumanOutput { origin: String },
    #[error("{origin} line {line}: {why}: '{text}'")]
    Line { origin: String, line: u64, text: String, why: String },
    #[error("{origin}: not pmu stat --json output: {why}")]
    PmuJson { origin: String, why: String },
    /// The input cannot be read, or is too large or not text.
    #[error(transparent)]
    Input(#[from] InputError),
}

impl ReadError {
    /// Whether the input could not be read at all (exit 1).
    pub fn is_unreadable(&self) -> bool {
        matches!(self, ReadError::Input(e) if e.is_unreadable())
    }
}

/// The separators tried when none is given, in order: perf's `-x` takes any string,
/// and these are the ones people use.
const SEPARATORS: [&str; 5] = [",", ";", "\t", "|", ":"];

/// Every record of one input held whole (see [`Reader`]).
pub fn read(text: &str, origin: &str, separator: Option<&str>) -> Result<(Format, Vec<Record>), ReadError> {
    let mut reader = Reader::new(text.as_bytes(), origin, separator);
    let mut records = Vec::new();
    while let Some(r) = reader.next_record()? {
        records.push(r);
    }
    Ok((reader.format().unwrap_or(Format::PerfCsv), records))
}

/// The records of one input, read as a stream: a line at a time for perf's `-x` and
/// `-j` outputs (each line at most `input::COUNTS_LINE` long), so that `perf stat -I
/// … | pmu metrics -` sees each interval as perf prints it; `pmu stat --json` output,
/// one document, whole within `input::COUNTS_JSON`. The format is told by the first
/// line that is not a comment, and a CSV's separator (`separator`, else the first of
/// [`SEPARATORS`] that reads that line) by the first line with a count.
pub struct Reader<R> {
    lines: input::Lines<R>,
    origin: String,
    separator: Option<String>,
    format: Option<Format>,
    /// Records of a `pmu stat --json` document not yet handed out, in reverse.
    queued: Vec<Record>,
    records: u64,
}

impl<R: BufRead> Reader<R> {
    pub fn new(reader: R, origin: &str, separator: Option<&str>) -> Reader<R> {
        Reader {
            lines: input::Lines::new(reader, origin, input::COUNTS_LINE),
            origin: origin.to_string(),
            separator: separator.map(str::to_string),
            format: None,
            queued: Vec::new(),
            records: 0,
        }
    }

    /// The input's format, once its first line has told it.
    pub fn format(&self) -> Option<Format> {
        self.format
    }

    /// Records read so far.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// The next record, `None` at the end (an input with no record at all is refused).
    pub fn next_record(&mut self) -> Result<Option<Record>, ReadError> {
        let record = self.next_inner()?;
        match &record {
            Some(_) => self.records += 1,
            None if self.records == 0 => return Err(ReadError::Empty { origin: self.origin.clone() }),
            None => {}
        }
        Ok(record)
    }

    fn next_inner(&mut self) -> Result<Option<Record>, ReadError> {
        if let Some(r) = self.queued.pop() {
            return Ok(Some(r));
        }
        loop {
            let origin = self.origin.clone();
            let Some((n, line)) = self.lines.next_line()? else { return Ok(None) };
            if is_comment(line) {
                continue;
            }
            let format = match self.format {
                Some(f) => f,
                None if line.trim_start().starts_with('{') => {
                    // perf's -j is an object a line; pmu stat --json one object over many.
                    let whole = serde_json::from_str::<Value>(line).ok();
                    match whole {
                        Some(v) if v.get("command").is_some() || v.get("schema").is_some() => {
                            self.format = Some(Format::PmuJson);
                            self.queued = pmu_json(&v, &origin)?;
                            self.queued.reverse();
                            return Ok(self.queued.pop());
                        }
                        Some(_) => Format::PerfJson,
                        None => {
                            let mut text = format!("{line}\n");
                            self.rest(&mut text)?;
                            let v: Value = serde_json::from_str(&text)
                                .map_err(|e| ReadError::PmuJson { origin: origin.clone(), why: format!("not JSON ({e})") })?;
                            self.format = Some(Format::PmuJson);
                            self.queued = pmu_json(&v, &origin)?;
                            self.queued.reverse();
                            return Ok(self.queued.pop());
                        }
                    }
                }
                None if line.contains("Performance counter stats for") => return Err(ReadError::HumanOutput { origin }),
                None => Format::PerfCsv,
            };
            self.format = Some(format);
            let record = match format {
                Format::PerfJson => perf_json_line(line, &origin, n)?,
                Format::PerfCsv => match self.separator.clone() {
                    Some(sep) => csv_line(line, &sep, &origin, n)?,
                    None => {
                        // The first separator that reads the line; a line of metrics alone
                        // (no count) does not tell.
                        let mut first_error = None;
                        let mut found = None;
                        for sep in SEPARATORS {
                            match csv_line(line, sep, &origin, n) {
                                Ok(Some(r)) => {
                                    found = Some((sep, r));
                                    break;
                                }
                                Ok(None) => {}
                                Err(e) => {
                                    first_error.get_or_insert(e);
                                }
                            }
                        }
                        match (found, first_error) {
                            (Some((sep, r)), _) => {
                                self.separator = Some(sep.to_string());
                                Some(r)
                            }
                            (None, Some(e)) if !SEPARATORS.iter().any(|sep| matches!(csv_line(line, sep, &origin, n), Ok(None))) => {
                                return Err(e)
                            }
                            _ => None,
                        }
                    }
                },
                Format::PmuJson => None,
            };
            if let Some(r) = record {
                return Ok(Some(r));
            }
        }
    }

    /// The rest of the input appended to `text`, within `input::COUNTS_JSON`.
    fn rest(&mut self, text: &mut String) -> Result<(), ReadError> {
        while let Some((_, line)) = self.lines.next_line()? {
            if (text.len() + line.len()) as u64 >= input::COUNTS_JSON.bytes {
                let limit = input::COUNTS_JSON;
                return Err(InputError::TooLarge { origin: self.origin.clone(), what: limit.what, bytes: limit.bytes }.into());
            }
            text.push_str(line);
            text.push('\n');
        }
        Ok(())
    }
}

/// Blank lines, and perf's `# started on …` and header lines.
fn is_comment(line: &str) -> bool {
    let t = line.trim();
    t.is_empty() || t.starts_with('#')
}

/// A count field: a number, or perf's markers.
fn count(field: &str) -> Option<(Option<f64>, Status)> {
    match field.trim() {
        "<not counted>" => Some((None, Status::NotCounted)),
        "<not supported>" => Some((None, Status::NotSupported)),
        t => t.parse::<f64>().ok().filter(|v| v.is_finite() && !t.starts_with('+')).map(|v| (Some(v), Status::Counted)),
    }
}

/// perf's counters are 64-bit: a count below 0 or at 2^64 or above is not one (a scaled
/// count may have a fraction; perf prints its clocks in milliseconds).
fn check_count(value: f64, field: &str) -> Result<f64, String> {
    if value < 0.0 {
        return Err(format!("{field} {value} is negative: a count is 0 to 2^64-1"));
    }
    if value >= 18_446_744_073_709_551_616.0 {
        return Err(format!("{field} {value} does not fit 64 bits: a count is 0 to 2^64-1"));
    }
    Ok(value)
}

/// perf's unit column: empty, or a word (`msec`, `ns`, `MiB`, `Joules`).
fn is_unit(field: &str) -> bool {
    field.chars().all(|c| c.is_ascii_alphabetic() || c == '/' || c == '%')
}

/// perf's interval time, `%16.9f`: digits, a point and nine decimals.
fn is_time(field: &str) -> bool {
    let t = field.trim();
    t.split_once('.').is_some_and(|(s, ns)| {
        !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) && ns.len() == 9 && ns.bytes().all(|b| b.is_ascii_digit())
    })
}

/// An aggregation column that is followed by a count of the CPUs aggregated:
/// `S0-D0-C1` (per core), `S0-D0` (per die), `S0` (per socket), `N0` (per node).
fn is_aggregate_with_count(field: &str) -> bool {
    let t = field.trim();
    let part = |p: &str, tag: char| p.strip_prefix(tag).is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    let parts: Vec<&str> = t.split('-').collect();
    match parts.as_slice() {
        [n] => part(n, 'S') || part(n, 'N'),
        [s, d] => part(s, 'S') && part(d, 'D'),
        [s, d, c] => part(s, 'S') && part(d, 'D') && part(c, 'C'),
        _ => false,
    }
}

/// `-A`'s `CPU3`, or `--per-thread`'s `comm-pid`.
fn is_single_aggregate(field: &str) -> bool {
    let t = field.trim();
    let cpu = t.strip_prefix("CPU").is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    let thread =
        t.rsplit_once('-').is_some_and(|(comm, pid)| !comm.is_empty() && !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()));
    cpu || thread
}

/// perf prints its clocks in milliseconds; metrics use the nanoseconds counted.
fn raw_value(value: f64, unit: &str) -> Result<f64, String> {
    let raw = match unit {
        "msec" => value * 1e6,
        "usec" => value * 1e3,
        _ => value,
    };
    if raw.is_finite() {
        Ok(raw)
    } else {
        Err(format!("count {value} {unit} is out of range"))
    }
}

/// One CSV line's count; `None` for the line perf adds for an event's second metric,
/// whose count, unit and event fields are empty.
fn csv_line(line: &str, sep: &str, origin: &str, n: u64) -> Result<Option<Record>, ReadError> {
    let fields: Vec<&str> = line.split(sep).collect();
    let err =
        |why: String| ReadError::Line { origin: origin.to_string(), line: n, text: input::excerpt(line, 2 * input::EXCERPT_CHARS), why };
    let lead = fields
        .iter()
        .take_while(|f| is_time(f) || is_single_aggregate(f) || is_aggregate_with_count(f) || f.trim().parse::<u64>().is_ok())
        .count();
    if fields.len() >= lead + 5 && fields.iter().skip(lead).take(3).all(|f| f.trim().is_empty()) {
        return Ok(None);
    }
    // perf's metric-group lines (`-M`, and the Topdown groups of a hybrid machine's
    // default run): no count, the group's run time and share, its name last.
    let group_line = fields.get(lead).is_some_and(|f| f.trim().is_empty())
        && fields.get(lead + 1).is_some_and(|f| f.trim().parse::<u64>().is_ok())
        && fields.last().is_some_and(|f| !f.trim().is_empty());
    if group_line {
        return Ok(None);
    }
    if fields.len() < 3 {
        return Err(err(format!("expected perf stat -x '{sep}' fields (count, unit, event, …), found {}", fields.len())));
    }
    // The prefixes perf can put before the count, longest first.
    let mut prefix = None;
    for c in (0..=3).rev() {
        let (Some(head), Some(&cnt), Some(&unit), Some(&event)) = (fields.get(..c), fields.get(c), fields.get(c + 1), fields.get(c + 2))
        else {
            continue;
        };
        if count(cnt).is_none() || !is_unit(unit.trim()) || event.trim().is_empty() {
            continue;
        }
        let explained = match head {
            [] => Some((None, None)),
            [t] if is_time(t) => Some((Some(*t), None)),
            [a] if is_single_aggregate(a) => Some((None, Some(*a))),
            [t, a] if is_time(t) && is_single_aggregate(a) => Some((Some(*t), Some(*a))),
            [a, nr] if is_aggregate_with_count(a) && nr.trim().parse::<u64>().is_ok() => Some((None, Some(*a))),
            [t, a, nr] if is_time(t) && is_aggregate_with_count(a) && nr.trim().parse::<u64>().is_ok() => Some((Some(*t), Some(*a))),
            _ => None,
        };
        if let Some((time, unit_of)) = explained {
            prefix = Some((c, time, unit_of));
            break;
        }
    }
    let Some((c, time, aggregate)) = prefix else {
        return Err(err(format!("no count, unit and event in the fields separated by '{sep}'")));
    };
    let (value, status) = fields.get(c).and_then(|f| count(f)).ok_or_else(|| err("no count".to_string()))?;
    let unit = fields.get(c + 1).map_or("", |u| u.trim());
    let event = fields.get(c + 2).map_or("", |e| e.trim());
    Ok(Some(Record {
        interval: time.and_then(|t| t.trim().parse().ok()),
        unit: aggregate.map(|a| a.trim().to_string()),
        pmu: None,
        event: event.to_string(),
        value: value.map(|v| check_count(v, "count").and_then(|v| raw_value(v, unit))).transpose().map_err(err)?,
        status,
    }))
}

/// One line of `perf stat -j`: an object per count, with `counter-value` a string
/// (perf 6.1; a number is accepted too). `None` for the objects that carry only a
/// metric (an event's second metric, 6.12's `metricgroup` headers).
fn perf_json_line(line: &str, origin: &str, n: u64) -> Result<Option<Record>, ReadError> {
    let err =
        |why: String| ReadError::Line { origin: origin.to_string(), line: n, text: input::excerpt(line, 2 * input::EXCERPT_CHARS), why };
    let v: Value = serde_json::from_str(line).map_err(|e| err(format!("not JSON ({e})")))?;
    if v.get("event").is_none() && v.get("counter-value").is_none() && (v.get("metric-value").is_some() || v.get("metricgroup").is_some()) {
        return Ok(None);
    }
    let event = v.get("event").and_then(Value::as_str).ok_or_else(|| err("no \"event\"".to_string()))?;
    let unit = v.get("unit").and_then(Value::as_str).unwrap_or("");
    let (value, status) = match v.get("counter-value") {
        Some(Value::String(s)) => count(s).ok_or_else(|| err(format!("\"counter-value\" '{s}' is not a count")))?,
        Some(Value::Number(x)) => (x.as_f64(), Status::Counted),
        _ => return Err(err("no \"counter-value\"".to_string())),
    };
    let aggregate = ["cpu", "core", "die", "socket", "node", "thread"].iter().find_map(|k| {
        v.get(*k).map(|a| match (k, a) {
            (&"cpu", Value::String(s)) => format!("CPU{s}"),
            (&"cpu", other) => format!("CPU{other}"),
            (_, Value::String(s)) => s.clone(),
            (_, other) => other.to_string(),
        })
    });
    Ok(Some(Record {
        interval: v.get("interval").and_then(Value::as_f64),
        unit: aggregate,
        pmu: None,
        event: event.to_string(),
        value: value.map(|x| check_count(x, "\"counter-value\"").and_then(|x| raw_value(x, unit))).transpose().map_err(err)?,
        status,
    }))
}

/// `pmu stat --json`: each event's count, each unit's with `-A`, each interval's with
/// `-I`, and the run's elapsed time as `duration_time` (nanoseconds, as perf counts it).
fn pmu_json(v: &Value, origin: &str) -> Result<Vec<Record>, ReadError> {
    let err = |why: &str| ReadError::PmuJson { origin: origin.to_string(), why: why.to_string() };
    if v.get("command").and_then(Value::as_str) != Some("stat") {
        return Err(err("its \"command\" is not \"stat\""));
    }
    let mut out = Vec::new();
    let mut push = |interval: Option<f64>, events: &Value, elapsed_ns: Option<f64>| -> Result<(), ReadError> {
        let events = events.as_array().ok_or_else(|| err("\"events\" is not an array"))?;
        for e in events {
            let name = e.get("name").and_then(Value::as_str).ok_or_else(|| err("an event has no \"name\""))?;
            let pmu = e.get("pmu").and_then(Value::as_str).map(str::to_string);
            let supported = e.get("supported").and_then(Value::as_bool).unwrap_or(true);
            let status_of = |count: Option<f64>| match (count, supported) {
                (Some(_), _) => Status::Counted,
                (None, true) => Status::NotCounted,
                (None, false) => Status::NotSupported,
            };
            let count_of = |v: &Value, what: &str| -> Result<Option<f64>, ReadError> {
                v.get("count")
                    .and_then(Value::as_f64)
                    .map(|c| check_count(c, &format!("the count of {what}")))
                    .transpose()
                    .map_err(|why| err(&why))
            };
            let count = count_of(e, &format!("event '{}'", input::excerpt(name, input::EXCERPT_CHARS)))?;
            out.push(Record { interval, unit: None, pmu: pmu.clone(), event: name.to_string(), value: count, status: status_of(count) });
            for u in e.get("units").and_then(Value::as_array).into_iter().flatten() {
                let unit = u.get("name").and_then(Value::as_str).ok_or_else(|| err("a unit has no \"name\""))?;
                let count = count_of(u, &format!("unit '{}'", input::excerpt(unit, input::EXCERPT_CHARS)))?;
                out.push(Record {
                    interval,
                    unit: Some(unit.to_string()),
                    pmu: pmu.clone(),
                    event: name.to_string(),
                    value: count,
                    status: status_of(count),
                });
            }
        }
        if let Some(ns) = elapsed_ns {
            out.push(Record {
                interval,
                unit: None,
                pmu: None,
                event: "duration_time".to_string(),
                value: Some(ns),
                status: Status::Counted,
            });
        }
        Ok(())
    };
    let intervals = v.get("intervals").and_then(Value::as_array).filter(|a| !a.is_empty());
    match intervals {
        None => {
            let elapsed = v
                .get("elapsed_ns")
                .and_then(Value::as_f64)
                .map(|ns| check_count(ns, "\"elapsed_ns\""))
                .transpose()
                .map_err(|why| err(&why))?;
            push(None, v.get("events").ok_or_else(|| err("no \"events\""))?, elapsed)?
        }
        Some(intervals) => {
            let mut before = 0.0;
            for iv in intervals {
                let end = iv.get("time_ns").and_then(Value::as_f64).ok_or_else(|| err("an interval has no \"time_ns\""))?;
                let end = check_count(end, "an interval's \"time_ns\"").map_err(|why| err(&why))?;
                if end < before {
                    return Err(err(&format!("an interval ends at {end} ns, before the one ahead of it ({before} ns)")));
                }
                push(Some(end * 1e-9), iv.get("events").ok_or_else(|| err("an interval has no \"events\""))?, Some(end - before))?;
                before = end;
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_line_and_each_prefix() {
        let line = |l: &str, sep: &str| csv_line(l, sep, "t", 1).unwrap().unwrap();
        let r = line("0.71,msec,task-clock,711852,100.00,0.014,CPUs utilized", ",");
        assert_eq!((r.interval, r.unit.as_deref(), r.event.as_str(), r.value), (None, None, "task-clock", Some(710_000.0)));
        let r = line("     0.020077258;76;;page-faults;611624;100.00;124.259;K/sec", ";");
        assert_eq!((r.interval, r.value), (Some(0.020077258), Some(76.0)));
        let r = line("S0-D0-C1,1,21,,context-switches,51434976,100.00,408.287,/sec", ",");
        assert_eq!((r.unit.as_deref(), r.value), (Some("S0-D0-C1"), Some(21.0)));
        let r = line("sleep-4408,<not counted>,,context-switches,0,100.00,,", ",");
        assert_eq!((r.unit.as_deref(), r.status), (Some("sleep-4408"), Status::NotCounted));
        let r = line("76,,page-faults,0.88%,695220,100.00,110.655,K/sec", ",");
        assert_eq!(r.value, Some(76.0));
        // perf 6.2+ prints the time unpadded; a second metric gets a line of its own.
        assert_eq!(line("0.100144309,0.93,msec,task-clock,931853,100.00,0.009,CPUs utilized", ",").interval, Some(0.100144309));
        assert_eq!(csv_line(",,,,,1.19,cpi", ",", "t", 1), Ok(None));
        assert_eq!(csv_line("0.100144309,CPU1,,,,,,1.19,cpi", ",", "t", 1), Ok(None));
    }
}
