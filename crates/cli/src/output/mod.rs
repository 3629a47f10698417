//! Rendering of each subcommand's result: a human table, or JSON with `--json`.

pub mod chart;
mod describe;
pub(crate) mod layout;
mod list;
mod metrics;
pub mod report;

pub use layout::{width, wrap};
pub use list::Filter;

use std::io::{IsTerminal, Write};

use pmukit_arch::{EncodedSet, Schedule};
use pmukit_core::register::Decoded;
use pmukit_core::report::{thousands, StatReport};
use pmukit_sim::hvcall::Outcome;
use pmukit_sim::models::sun4v::{DecodeError, MmuStatBuffer, ReservedWarning};
use pmukit_sim::program::builtin::WORKLOADS;
use serde_json::{json, Value};

use crate::failure::{runtime, usage, Failure};

pub struct Out {
    json: bool,
    /// The command's name in its JSON.
    command: &'static str,
}

/// The version of the JSON every command prints, as `schema` (docs/json.md).
pub const SCHEMA: u32 = 1;

fn hex(v: u64) -> String {
    format!("{v:#x}")
}

/// A register's value in JSON: a hex string, always, as registers are up to 64 bits
/// wide and a JSON reader holding numbers as doubles would round those above 2^53.
fn register_value(v: u64) -> Value {
    Value::String(hex(v))
}

/// A table as wide as the terminal (see [`layout::width`]).
fn table(header: &[&str]) -> comfy_table::Table {
    layout::table(header, layout::width())
}

fn registers_json(regs: &[(&'static str, u64)]) -> Value {
    Value::Object(regs.iter().map(|(r, v)| (r.to_string(), register_value(*v))).collect())
}

/// Characters of one line of an error message at most: the messages quote input
/// through bounded excerpts, and this bounds whatever else might repeat it.
const MESSAGE_LINE: usize = 4096;

/// `message` with each line cut to [`MESSAGE_LINE`] characters.
fn bounded(message: &str) -> String {
    if message.lines().all(|l| l.len() <= MESSAGE_LINE) {
        return message.to_string();
    }
    message.lines().map(|l| pmukit_core::input::excerpt(l, MESSAGE_LINE)).collect::<Vec<_>>().join("\n")
}

/// An error's prose lines wrapped to `width` for a terminal, continuations indented
/// two spaces under their line; the lines that quote the input and the caret under it (indented
/// four spaces) stay whole, so the caret keeps its column. A pipe or a file gets the
/// lines whole, for grep.
fn wrap_error(text: &str, width: u16) -> String {
    let lines = text.lines().map(|line| {
        let lead = line.len() - line.trim_start().len();
        if lead >= 4 || line.chars().count() <= usize::from(width) {
            return line.to_string();
        }
        let more = 2;
        let room = width.saturating_sub(u16::try_from(lead).unwrap_or(u16::MAX));
        layout::wrap(line.trim_start(), room, more).lines().map(|l| format!("{}{l}", " ".repeat(lead))).collect::<Vec<_>>().join("\n")
    });
    lines.collect::<Vec<_>>().join("\n")
}

/// A line on standard error. `eprintln!` panics when standard error cannot be written
/// (closed, or a full disk); a diagnostic that cannot be written is lost instead.
pub fn diag(line: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

impl Out {
    pub fn new(json: bool, command: &'static str) -> Out {
        Out { json, command }
    }

    /// Print text to stdout, ending in a line break. A reader that stops early (`|
    /// head`) is not a failure; any other write error is a runtime failure (exit 1).
    pub fn text(&self, s: &str) -> Result<(), Failure> {
        if s.ends_with('\n') {
            self.text_raw(s)
        } else {
            self.text_raw(&format!("{s}\n"))
        }
    }

    /// Print text to stdout as it is (a part of the output written as it is made).
    pub fn text_raw(&self, s: &str) -> Result<(), Failure> {
        let mut stdout = std::io::stdout().lock();
        match stdout.write_all(s.as_bytes()).and_then(|_| stdout.flush()) {
            Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                Err(runtime(format!("cannot write output: {}", pmukit_core::input::io_message(&e))))
            }
            _ => Ok(()),
        }
    }

    pub fn is_json(&self) -> bool {
        self.json
    }

    /// Print a command's JSON: `body`'s members after `schema` and `command`.
    pub(crate) fn json(&self, body: &Value) -> Result<(), Failure> {
        self.text(&serde_json::to_string_pretty(&self.envelope(body)).unwrap_or_default())
    }

    fn envelope(&self, body: &Value) -> Value {
        let mut v = json!({"schema": SCHEMA, "command": self.command});
        if let (Some(all), Value::Object(members)) = (v.as_object_mut(), body) {
            all.extend(members.clone());
        }
        v
    }

    /// A failure on stderr: `pmu: error: …`, or with `--json` one JSON object whose
    /// `error` holds the message and, where known, the offending token, its column and
    /// what would be valid.
    pub fn error(&self, f: &Failure) {
        if !self.json {
            let text = format!("pmu: error: {}", bounded(&f.message));
            let on_terminal = std::io::stderr().is_terminal();
            diag(&if on_terminal { wrap_error(&text, layout::stderr_width()) } else { text });
            return;
        }
        let d = &f.detail;
        let error = json!({
            "message": bounded(d.message.as_deref().unwrap_or(&f.message)),
            "exit_code": f.code,
            "input": d.input,
            "token": d.token,
            "column": d.column,
            "suggestions": d.suggestions,
            "help": d.help,
        });
        let mut v = json!({"schema": SCHEMA, "error": error});
        if !self.command.is_empty() {
            v["command"] = json!(self.command);
        }
        diag(&v.to_string());
    }

    pub fn stat(&self, report: &StatReport) -> Value {
        self.envelope(&serde_json::to_value(report).unwrap_or_default())
    }

    pub fn encode(&self, set: &EncodedSet) -> Result<(), Failure> {
        let events: Vec<Value> = set
            .events
            .iter()
            .map(|e| {
                json!({
                    "pmu": set.pmu, "input": e.input, "name": e.name, "code": e.code, "umask": e.umask,
                    "counters": e.counters, "counter": e.counter, "registers": registers_json(&e.registers),
                })
            })
            .collect();
        if self.json {
            let mut doc = json!({"pmu": set.pmu, "events": events, "registers": registers_json(&set.registers)});
            if !set.notes.is_empty() {
                doc["notes"] = json!(set.notes);
            }
            return self.json(&doc);
        }
        let cols = width();
        let width = usize::from(cols);
        let mut t = table(&["input", "event", "code", "counter", "allowed", "registers"]);
        for e in &set.events {
            let regs: Vec<String> = e.registers.iter().map(|(r, v)| format!("{r}={v:#010x}")).collect();
            t.add_row(vec![
                e.input.clone(),
                e.name.clone(),
                hex(e.code),
                e.counter.to_string(),
                layout::ranges(&e.counters).join(" "),
                regs.join(" "),
            ]);
        }
        let rendered = layout::render(t, &[0, 1, 2, 3]);
        // Long event names (Montecito's) leave no room for a table, whose cells would
        // wrap onto more lines than its header, rule and a row per event: one block each.
        let unwrapped = rendered.lines().count() <= set.events.len() + 2;
        let events = if unwrapped && rendered.lines().all(|l| l.chars().count() <= width) {
            rendered
        } else {
            set.events
                .iter()
                .map(|e| {
                    let regs: String = e.registers.iter().map(|(r, v)| format!("  {r} = {v:#010x}\n")).collect();
                    let allowed = layout::ranges(&e.counters).join(" ");
                    // The input matters only where it is not the name, or a default's
                    // short form, with its PMU.
                    let given = e.input.rsplit("::").next().unwrap_or(&e.input);
                    let from =
                        if e.name.eq_ignore_ascii_case(given) || e.name.to_lowercase().starts_with(&format!("{}.", given.to_lowercase())) {
                            String::new()
                        } else {
                            format!(", from {}", e.input)
                        };
                    format!("{} (code {}{from})\n  counter {} (allowed {allowed})\n{regs}", e.name, hex(e.code), e.counter)
                })
                .collect::<Vec<_>>()
                .join("")
        };
        let writes: Vec<String> = set.registers.iter().map(|(r, v)| format!("{r} = {v:#010x}")).collect();
        let start = if set.registers.is_empty() {
            "no register writes: the events read what the hardware collects anyway".to_string()
        } else if "start counting with: ".len() + writes.join(", ").len() <= width {
            format!("start counting with: {}", writes.join(", "))
        } else {
            format!("start counting with:\n{}", writes.iter().map(|w| format!("  {w}")).collect::<Vec<_>>().join("\n"))
        };
        let notes: String = set.notes.iter().map(|n| format!("{}\n", layout::wrap(&format!("note: {n}"), cols, 6))).collect();
        self.text(&format!("{}:\n{}\n{start}\n{notes}", set.pmu, events.trim_end()))
    }

    pub fn schedule(&self, schedule: &Schedule) -> Result<(), Failure> {
        if self.json {
            let groups: Vec<Value> = schedule
                .groups
                .iter()
                .map(|g| {
                    let events: Vec<Value> = g
                        .set
                        .events
                        .iter()
                        .zip(&g.events)
                        .map(|(e, &i)| {
                            json!({"pmu": schedule.pmu, "index": i, "input": e.input, "name": e.name, "counter": e.counter, "counters": e.counters})
                        })
                        .collect();
                    json!({"events": events, "registers": registers_json(&g.set.registers)})
                })
                .collect();
            return self.json(&json!({"pmu": schedule.pmu, "together": schedule.why.is_none(), "why": schedule.why, "groups": groups}));
        }
        let n = schedule.events;
        let mut out = match &schedule.why {
            None => format!("{}: the {n} event(s) fit the counters together\n", schedule.pmu),
            // A sentence as long as its conflict: wrapped to the output's width.
            Some(why) => format!(
                "{}\n{}\n",
                wrap(&format!("{}: the {n} events cannot be counted together: {why}", schedule.pmu), width(), 2),
                wrap(&format!("`pmu stat` multiplexes them in {} groups, each counting in its turn:", schedule.groups.len()), width(), 2)
            ),
        };
        let mut t = table(&["group", "event", "counter", "allowed"]);
        for (k, g) in schedule.groups.iter().enumerate() {
            for e in &g.set.events {
                t.add_row(vec![(k + 1).to_string(), e.name.clone(), e.counter.to_string(), layout::ranges(&e.counters).join(" ")]);
            }
        }
        out.push_str(&layout::render(t, &[0, 1, 2]));
        out.push('\n');
        self.text(&out)
    }

    pub fn decode(&self, pmu: &str, value: u64, d: &Decoded, diagram: &str) -> Result<(), Failure> {
        if self.json {
            let mut v = serde_json::to_value(d).unwrap_or_default();
            v["pmu"] = json!(pmu);
            v["value"] = register_value(value);
            v["diagram"] = Value::String(diagram.to_string());
            return self.json(&v);
        }
        let mut t = table(&["field", "bits", "value", "meaning"]);
        for f in &d.fields {
            t.add_row(vec![f.name.clone(), f.bits.clone(), hex(f.value), f.meaning.clone()]);
        }
        let mut s = format!("{} = {}\n\n{diagram}\n{}\n", d.register, d.value, layout::render(t, &[0, 1, 2]));
        for w in &d.warnings {
            s.push_str(&format!("{}\n", layout::wrap(&format!("warning: {w}"), layout::width(), 2)));
        }
        self.text(&s)
    }

    pub fn hv(&self, outcomes: &[Outcome]) -> Result<(), Failure> {
        if self.json {
            let calls: Vec<Value> = outcomes
                .iter()
                .map(|o| {
                    let mut v = serde_json::to_value(o).unwrap_or_default();
                    // Arguments and results are 64-bit registers (%o0-%o5).
                    v["args"] = Value::Array(o.args.iter().map(|&a| register_value(a)).collect());
                    for (key, r) in [("ret1", o.ret1), ("ret2", o.ret2)] {
                        v[key] = r.map_or(Value::Null, register_value);
                    }
                    v
                })
                .collect();
            return self.json(&json!({"calls": calls}));
        }
        let mut t = table(&["call", "trap", "function", "status", "ret1", "ret2"]);
        for o in outcomes {
            let ret = |r: Option<u64>| r.map_or("-".to_string(), hex);
            t.add_row(vec![
                o.call.clone(),
                hex(o.trap),
                format!("{:#x}{}", o.function, o.name.map(|n| format!(" {n}")).unwrap_or_default()),
                format!("{} ({})", o.status_name, o.status),
                ret(o.ret1),
                ret(o.ret2),
            ]);
        }
        self.text(&format!("{}\n", layout::render(t, &[0, 1, 2, 3, 4, 5])))
    }

    /// Decoded MMU statistics buffers, written as they are read so that a dump of any
    /// size takes constant memory: a table per buffer, or with `--json` one object per
    /// line inside `{"buffers": [...], "warnings": N}`. The first few reserved-field
    /// warnings go to stderr as they come, the rest as a count at the end. A dump that
    /// ends inside a buffer fails after the buffers before it (the JSON still closes,
    /// with an `"error"` member).
    pub fn mmustat(
        &self,
        buffers: impl Iterator<Item = Result<(MmuStatBuffer, Vec<ReservedWarning>), DecodeError>>,
    ) -> Result<(), Failure> {
        let mut w = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
        let mut warnings = 0u64;
        let mut failure = None;
        let mut written =
            if self.json { writeln!(w, "{{\"schema\": {SCHEMA}, \"command\": \"{}\", \"buffers\": [", self.command) } else { Ok(()) };
        for (n, item) in buffers.enumerate() {
            let (buffer, found) = match item {
                Ok(decoded) => decoded,
                Err(e) => {
                    failure = Some(e);
                    break;
                }
            };
            for warning in &found {
                warnings += 1;
                if warnings <= WARNINGS_SHOWN {
                    diag(&format!("pmu: warning: {warning}"));
                }
            }
            written = written.and_then(|_| {
                if self.json {
                    let mut v = serde_json::to_value(&buffer).unwrap_or_default();
                    v["warnings"] = serde_json::to_value(&found).unwrap_or_default();
                    write!(w, "{}{v}", if n == 0 { "" } else { ",\n" })
                } else {
                    write!(w, "{}", mmustat_table(&buffer))
                }
            });
            if written.is_err() {
                break;
            }
        }
        if self.json {
            let error = failure.as_ref().map(|f| format!(", \"error\": {}", Value::String(f.to_string()))).unwrap_or_default();
            written = written.and_then(|_| writeln!(w, "\n], \"warnings\": {warnings}{error}}}"));
        }
        written = written.and_then(|_| w.flush());
        if warnings > WARNINGS_SHOWN {
            diag(&format!(
                "pmu: warning: {} more reserved fields are not zero (not shown; --json lists every one)",
                warnings - WARNINGS_SHOWN
            ));
        }
        match (written, failure) {
            // A dump that cannot be read is the run's failure; one that reads wrong, the input's.
            (_, Some(e @ DecodeError::Io { .. })) => Err(runtime(e)),
            (_, Some(e)) => Err(usage(e)),
            (Err(e), None) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(runtime(format!("cannot write output: {e}"))),
            _ => Ok(()),
        }
    }

    pub fn workloads(&self) -> Result<(), Failure> {
        if self.json {
            let v: Vec<Value> = WORKLOADS.iter().map(|w| json!({"name": w.name, "description": w.description})).collect();
            return self.json(&json!({"workloads": v}));
        }
        let mut t = table(&["workload", "description"]);
        for w in WORKLOADS {
            t.add_row(vec![w.name, w.description]);
        }
        self.text(&format!("{}\n", layout::render(t, &[0])))
    }
}

/// Warnings of one kind printed before the rest are only counted: a damaged dump can
/// have millions.
const WARNINGS_SHOWN: u64 = 5;

fn mmustat_table(b: &MmuStatBuffer) -> String {
    let mut t = table(&["MMU", "context", "page", "hits", "ticks", "ticks/hit"]);
    for slot in &b.slots {
        let avg = slot.average_ticks_per_hit.map_or("-".to_string(), |a| format!("{a:.1}"));
        t.add_row(vec![
            slot.mmu.name().to_string(),
            slot.context.name().to_string(),
            slot.page_size.name().to_string(),
            thousands(slot.hits),
            thousands(slot.ticks),
            avg,
        ]);
    }
    format!("buffer {} (CPU {0}, input offset {:#x}):\n{}\n\n", b.index, b.offset, layout::render(t, &[0, 1, 2, 3, 4, 5]))
}

#[cfg(test)]
mod tests {
    use super::wrap_error;

    #[test]
    fn errors_wrap_their_prose_and_keep_the_input_and_caret_whole() {
        let text = "pmu: error: perf's generic event 'cache-misses' has no arm1176 equivalent: nothing maps to it (column 1)\n    cache-misses with a long tail of input that runs past the width\n    ^^^^^^^^^^^^\n  'cache-misses' is DC_MISS_PRECISE.ANY on sparc-t4: give --pmu sparc-t4, or write sparc-t4::cache-misses";
        let wrapped = wrap_error(text, 60);
        let lines: Vec<&str> = wrapped.lines().collect();
        assert!(lines.iter().all(|l| l.chars().count() <= 60 || l.starts_with("    ")), "{wrapped}");
        // The quoted input and the caret are the lines they were.
        assert!(lines.contains(&"    cache-misses with a long tail of input that runs past the width"));
        assert!(lines.contains(&"    ^^^^^^^^^^^^"));
        // Continuations sit two spaces under their line: the message's at two, the help's at four.
        assert!(lines[1].starts_with("  ") && !lines[1].starts_with("   "), "{wrapped}");
        assert!(lines.last().is_some_and(|l| l.starts_with("    ") && !l.starts_with("     ")), "{wrapped}");
        // Nothing is lost: the words are the same.
        assert_eq!(wrapped.split_whitespace().collect::<Vec<_>>(), text.split_whitespace().collect::<Vec<_>>());
    }
}
