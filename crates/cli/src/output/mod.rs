//! Rendering of each subcommand's result: a human table, or JSON with `--json`.

mod describe;
mod layout;
mod list;

pub use layout::width;
pub use list::Filter;

use std::io::Write;

use pmukit_arch::{EncodedSet, Schedule};
use pmukit_core::register::Decoded;
use pmukit_core::report::thousands;
use pmukit_sim::hvcall::Outcome;
use pmukit_sim::models::sun4v::{DecodeError, MmuStatBuffer, ReservedWarning};
use pmukit_sim::program::builtin::WORKLOADS;
use serde_json::{json, Value};

use crate::Failure;

pub struct Out {
    json: bool,
}

/// The version of the JSON that `list` and `describe` carry as `schema`.
pub const SCHEMA: u32 = 1;

fn hex(v: u64) -> String {
    format!("{v:#x}")
}

/// A table as wide as the terminal (see [`layout::width`]).
fn table(header: &[&str]) -> comfy_table::Table {
    layout::table(header, layout::width())
}

fn registers_json(regs: &[(&'static str, u64)]) -> Value {
    Value::Object(regs.iter().map(|(r, v)| (r.to_string(), Value::String(format!("{v:#010x}")))).collect())
}

impl Out {
    pub fn new(json: bool) -> Out {
        Out { json }
    }

    /// Print text to stdout. A reader that stops early (`| head`) is not a failure;
    /// any other write error is a runtime failure (exit 1).
    pub fn text(&self, s: &str) -> Result<(), Failure> {
        let mut stdout = std::io::stdout().lock();
        match stdout
            .write_all(s.as_bytes())
            .and_then(|_| if s.ends_with('\n') { Ok(()) } else { stdout.write_all(b"\n") })
            .and_then(|_| stdout.flush())
        {
            Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(Failure { code: 1, message: format!("cannot write output: {e}") }),
            _ => Ok(()),
        }
    }

    fn json(&self, v: &Value) -> Result<(), Failure> {
        self.text(&serde_json::to_string_pretty(v).unwrap_or_default())
    }

    pub fn error(&self, message: &str) {
        if self.json {
            eprintln!("{}", json!({ "error": message }));
        } else {
            eprintln!("pmu: error: {message}");
        }
    }

    pub fn encode(&self, set: &EncodedSet) -> Result<(), Failure> {
        let events: Vec<Value> = set
            .events
            .iter()
            .map(|e| {
                json!({
                    "input": e.input, "name": e.name, "code": e.code, "umask": e.umask,
                    "counters": e.counters, "counter": e.counter, "registers": registers_json(&e.registers),
                })
            })
            .collect();
        if self.json {
            return self.json(&json!({"pmu": set.pmu, "events": events, "registers": registers_json(&set.registers)}));
        }
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
        let start = if set.registers.is_empty() {
            "no register writes: the events read what the hardware collects anyway".to_string()
        } else {
            let writes: Vec<String> = set.registers.iter().map(|(r, v)| format!("{r} = {v:#010x}")).collect();
            format!("start counting with: {}", writes.join(", "))
        };
        self.text(&format!("{}:\n{}\n{start}\n", set.pmu, layout::render(t, &[0, 1, 2, 3])))
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
                        .map(|(e, &i)| json!({"index": i, "input": e.input, "name": e.name, "counter": e.counter, "counters": e.counters}))
                        .collect();
                    json!({"events": events, "registers": registers_json(&g.set.registers)})
                })
                .collect();
            return self.json(&json!({"pmu": schedule.pmu, "together": schedule.why.is_none(), "why": schedule.why, "groups": groups}));
        }
        let n = schedule.events;
        let mut out = match &schedule.why {
            None => format!("{}: the {n} event(s) fit the counters together\n", schedule.pmu),
            Some(why) => format!(
                "{}: the {n} events cannot be counted together: {why}\n`pmu stat` multiplexes them in {} groups, each counting in its turn:\n",
                schedule.pmu,
                schedule.groups.len()
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

    pub fn decode(&self, d: &Decoded, diagram: &str) -> Result<(), Failure> {
        if self.json {
            let mut v = serde_json::to_value(d).unwrap_or_default();
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
            return self.json(&serde_json::to_value(outcomes).unwrap_or_default());
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
        let mut written = if self.json { w.write_all(b"{\"buffers\": [\n") } else { Ok(()) };
        for (n, item) in buffers.enumerate() {
            let (buffer, found) = match item {
                Ok(decoded) => decoded,
                Err(e) => {
                    failure = Some(e.to_string());
                    break;
                }
            };
            for warning in &found {
                warnings += 1;
                if warnings <= WARNINGS_SHOWN {
                    eprintln!("pmu: warning: {warning}");
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
            let error = failure.as_ref().map(|f| format!(", \"error\": {}", Value::String(f.clone()))).unwrap_or_default();
            written = written.and_then(|_| writeln!(w, "\n], \"warnings\": {warnings}{error}}}"));
        }
        written = written.and_then(|_| w.flush());
        if warnings > WARNINGS_SHOWN {
            eprintln!("pmu: warning: {} more reserved fields are not zero (not shown; --json lists every one)", warnings - WARNINGS_SHOWN);
        }
        match (written, failure) {
            (_, Some(message)) => Err(Failure { code: 2, message }),
            (Err(e), None) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                Err(Failure { code: 1, message: format!("cannot write output: {e}") })
            }
            _ => Ok(()),
        }
    }

    pub fn workloads(&self) -> Result<(), Failure> {
        if self.json {
            let v: Vec<Value> = WORKLOADS.iter().map(|w| json!({"name": w.name, "description": w.description})).collect();
            return self.json(&Value::Array(v));
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
