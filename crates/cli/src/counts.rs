//! `pmu metrics`: derived metrics over counts made elsewhere: `perf stat -x SEP` or
//! `-j` output, `pmu stat --json` output, or `NAME=VALUE` arguments. perf's spellings
//! of events are mapped onto pmukit's (`pmukit_arch::linux`), each interval and each
//! CPU (or core, socket, thread) is evaluated on its own counts, and the metrics follow
//! perf's MetricExpr semantics (`pmukit_core::metric_group`).
//!
//! Input is read as a stream (`pmukit_core::perf_stat::Reader`): an interval is
//! evaluated and printed as soon as the next one begins, so `perf stat -I 1000 … |
//! pmu metrics -` prints as perf does, in memory that does not grow with the intervals;
//! counts are found by hash, so a large per-CPU input reads in linear time.

use std::borrow::Cow;
use std::collections::HashMap;
use std::ffi::OsString;
use std::io::{BufRead, BufReader};

use clap::Args;
use pmukit_arch::{self as arch, linux, metrics, Catalog};
use pmukit_core::input::{self, io_message};
use pmukit_core::metric_group::{Counts, Evaluator, MetricError, DURATION_TIME};
use pmukit_core::perf_stat::{Format, Reader, Record};
use pmukit_core::pmu::Pmu;
use pmukit_core::report::outside_domain;
use pmukit_core::table::MetricDef;
use serde::Serialize;

use crate::failure::{runtime, usage, Failure};
use crate::output::Out;
use crate::{EventOpts, JsonOpt};

#[derive(Args)]
pub struct MetricsArgs {
    /// Counts to evaluate: a file holding `perf stat -x SEP` or `perf stat -j` output
    /// or `pmu stat --json` output (`-` reads standard input), or NAME=VALUE (an
    /// event's count; `#NAME=VALUE` sets a literal such as #smt_on, `duration_time=NS`
    /// the run's time in nanoseconds).
    #[arg(value_name = "INPUT", required = true)]
    inputs: Vec<OsString>,
    /// The derived metrics or metric groups to compute (`pmu list --metrics`);
    /// default: every metric of the PMU whose events are in the input.
    #[arg(short = 'M', long = "metrics", value_name = "METRIC|GROUP", value_delimiter = ',')]
    metric_names: Vec<String>,
    /// An expression in perf's MetricExpr language to compute instead, over the
    /// input's events (pmukit's names or perf's, with `-` written `\-`).
    #[arg(long, value_name = "EXPR", conflicts_with = "metric_names")]
    expr: Option<String>,
    /// The separator of `perf stat -x SEP` input, when it is not one of , ; tab | :
    #[arg(long, value_name = "SEP")]
    separator: Option<String>,
    #[command(flatten)]
    pub opts: EventOpts,
    #[command(flatten)]
    pub json: JsonOpt,
}

/// What `pmu metrics` read and computed besides the results (which are printed as
/// each interval ends).
#[derive(Serialize)]
pub struct MetricsReport {
    /// The PMUs whose events and metrics the input was read against.
    pub pmu: Vec<String>,
    pub inputs: Vec<InputRead>,
    pub notes: Vec<String>,
}

#[derive(Serialize)]
pub struct InputRead {
    pub origin: String,
    /// `perf_csv`, `perf_json`, `pmu_json` or `arguments`.
    pub format: String,
    pub records: u64,
}

#[derive(Serialize)]
pub struct GroupResult {
    /// The interval's end in seconds (`-I`), or `null` for the whole run.
    pub interval: Option<f64>,
    /// `CPU3`, `S0-D0-C1`, `S0`, `comm-pid`, `MCU1`, or `null` for the whole machine.
    pub unit: Option<String>,
    pub metrics: Vec<MetricValue>,
}

#[derive(Serialize)]
pub struct MetricValue {
    pub name: String,
    /// Scaled by the metric's ScaleUnit; `null` when undefined here (perf's NaN).
    pub value: Option<f64>,
    pub unit: String,
    pub description: String,
}

/// One interval and unit's counts, each at the index its lowercase name has in the
/// session's `Names` (`None` where the group has no such count; `Some(None)` where it
/// was not counted). An event is found under its spelling and under pmukit's name for
/// it.
#[derive(Default)]
struct Group {
    interval: Option<f64>,
    unit: Option<String>,
    counts: Vec<Option<Option<f64>>>,
    duration_ns: Option<f64>,
}

impl Group {
    fn set(&mut self, id: usize, value: Option<f64>) {
        if self.counts.len() <= id {
            self.counts.resize(id + 1, None);
        }
        if let Some(slot) = self.counts.get_mut(id) {
            slot.get_or_insert(value);
        }
    }

    fn get(&self, id: usize) -> Option<Option<f64>> {
        self.counts.get(id).copied().flatten()
    }
}

/// Every name counts are found under, lowercase, numbered.
#[derive(Default)]
struct Names(HashMap<String, usize>);

impl Names {
    fn id(&mut self, name: &str) -> usize {
        let next = self.0.len();
        *self.0.entry(name.to_ascii_lowercase()).or_insert(next)
    }
}

/// What the metrics look names up in: a group's counts, then the arguments'.
struct Lookup<'a> {
    names: &'a Names,
    group: &'a Group,
    arguments: &'a Group,
    literals: &'a [(String, f64)],
}

impl Counts for Lookup<'_> {
    fn count(&self, name: &str) -> Option<Option<f64>> {
        let id = *self.names.0.get(&name.to_ascii_lowercase())?;
        self.group.get(id).or_else(|| self.arguments.get(id))
    }

    fn literal(&self, name: &str) -> Option<f64> {
        self.literals.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| *v)
    }

    fn duration_s(&self) -> Option<f64> {
        self.group.duration_ns.or(self.arguments.duration_ns).map(|ns| ns * 1e-9)
    }
}

/// An input of the command line: a file (or `-`), or a count given as NAME=VALUE.
enum Input {
    File(OsString),
    Count(String, f64),
}

fn classify(input: &OsString) -> Result<Input, Failure> {
    if input == "-" || std::path::Path::new(input).exists() {
        return Ok(Input::File(input.clone()));
    }
    let text = input.to_str().ok_or_else(|| {
        usage(format!(
            "input '{}' is neither a file nor NAME=VALUE (it is not text)",
            input::excerpt(&input.to_string_lossy(), input::EXCERPT_CHARS)
        ))
    })?;
    let shown = input::excerpt(text, input::EXCERPT_CHARS);
    let Some((name, value)) = text.split_once('=') else {
        return Err(usage(format!(
            "input '{shown}' is neither a file nor NAME=VALUE: give perf stat -x/-j output, pmu stat --json output, - for standard input, or a count such as INSTR_EXEC=1000"
        )));
    };
    let v: f64 = value
        .trim()
        .parse()
        .ok()
        .filter(|v: &f64| v.is_finite() && !value.trim().starts_with('+'))
        .ok_or_else(|| usage(format!("input '{shown}': '{}' is not a number", input::excerpt(value, input::EXCERPT_CHARS))))?;
    let name = name.trim();
    if name.is_empty() {
        return Err(usage(format!("input '{shown}' names nothing before '='")));
    }
    Ok(Input::Count(name.to_string(), v))
}

/// What the metrics are evaluated with, settled when the first counts are complete:
/// the PMUs, every metric of theirs (one may use another) and those to compute.
struct Setup<'c> {
    pmus: Vec<&'c Pmu>,
    all: Vec<MetricDef>,
    chosen: Vec<MetricDef>,
    /// Whether the metrics were asked for (-M, --expr), so that one whose events the
    /// input lacks is a note rather than left out.
    asked: bool,
}

/// The evaluation as the records come.
struct Session<'c, 'a> {
    catalog: &'c Catalog,
    args: &'a MetricsArgs,
    out: &'a Out,
    arguments: Group,
    literals: Vec<(String, f64)>,
    setup: Option<Setup<'c>>,
    /// What the records said of their PMU (`hint`).
    hint: Option<String>,
    /// The interval being read (`None` before its first record; `Some(None)` for the
    /// whole run), its groups in order of their first record, and where each unit's is.
    interval: Option<Option<f64>>,
    groups: Vec<Group>,
    index: HashMap<Option<String>, usize>,
    names: Names,
    /// Each spelling of the groups read and the name it was counted under.
    spelled: HashMap<String, usize>,
    /// pmukit's name of each spelling met, once.
    resolved: HashMap<String, Option<String>>,
    /// Each unit's last interval end, for an interval's length.
    last_end: HashMap<Option<String>, f64>,
    notes: Vec<String>,
    notes_dropped: u64,
    computed: u64,
    flushed: bool,
    printed: u64,
    json_open: bool,
}

/// Notes kept at most; more are counted.
const MAX_NOTES: usize = 64;
/// Groups evaluated and printed at a time.
const PRINT_CHUNK: usize = 1024;

impl<'c> Session<'c, '_> {
    /// What a record says of the PMU to read the input against, kept from the first
    /// that says anything: a PMU of pmukit's that `pmu stat --json` names (a live run
    /// also names `software` and `hardware`), else the one whose Linux driver name
    /// perf's spelling carries.
    fn hint(&mut self, r: &Record) {
        if self.hint.is_some() {
            return;
        }
        let catalog = self.catalog;
        self.hint = r.pmu.clone().filter(|p| catalog.pmu(p).is_ok()).or_else(|| {
            let (driver, _) = r.event.split_once('/')?;
            // `cpu` is x86's core PMU as well as SPARC's: not evidence of a T4.
            let pmu = catalog.pmus.iter().find(|p| p.desc.linux_pmu == Some(driver) && driver != "cpu")?;
            Some(pmu.name().to_string())
        });
        // pmu's own `-x` output names events as its tables do, without a PMU: an event
        // of one family's table says whose it is (the default PMU where it is one).
        if self.hint.is_none() {
            let owners: Vec<&Pmu> = catalog.pmus.iter().filter(|p| p.table.find(&r.event).is_some()).collect();
            let one_family = owners.windows(2).all(|w| w[0].desc.family == w[1].desc.family);
            if one_family {
                let default = owners.iter().find(|p| p.name() == pmukit_arch::DEFAULT_PMU).or(owners.first());
                self.hint = default.map(|p| p.name().to_string());
            }
        }
    }

    /// The metrics to compute, settled at the first evaluation: the PMUs are `--pmu`'s
    /// machine, else the hint's.
    fn setup(&mut self) -> Result<(), Failure> {
        if self.setup.is_some() {
            return Ok(());
        }
        let catalog = self.catalog;
        let pmus: Vec<&Pmu> = match self.args.opts.pmu.clone().or_else(|| self.hint.clone()) {
            Some(name) => arch::machine_pmus(catalog.pmu(&name)?).into_iter().filter_map(|n| catalog.pmu(n).ok()).collect(),
            None => Vec::new(),
        };
        // Every metric of the PMUs, so that one metric may use another.
        let mut all: Vec<MetricDef> = pmus.iter().flat_map(|p| arch::family(p).metrics.metrics.iter().cloned()).collect();
        all.dedup_by(|a, b| a.name == b.name);
        let (chosen, asked) = match (&self.args.expr, self.args.metric_names.is_empty()) {
            (Some(expr), _) => {
                let def = MetricDef {
                    name: Cow::Owned(expr.clone()),
                    expr: Cow::Owned(expr.clone()),
                    description: Cow::Borrowed(""),
                    group: Cow::Borrowed(""),
                    scale_unit: Cow::Borrowed(""),
                    source: Cow::Borrowed(""),
                    min: Cow::Borrowed(""),
                    max: Cow::Borrowed(""),
                };
                (vec![def], true)
            }
            (None, false) => {
                if pmus.is_empty() {
                    return Err(usage("-M needs to know whose metrics: give --pmu (the input names no PMU pmukit knows)"));
                }
                let mut chosen: Vec<MetricDef> = Vec::new();
                for name in &self.args.metric_names {
                    for m in metrics::select(catalog, &pmus, name.trim())? {
                        if !chosen.iter().any(|c| c.name == m.def.name) {
                            chosen.push(m.def.clone());
                        }
                    }
                }
                (chosen, true)
            }
            (None, true) => (all.clone(), false),
        };
        self.setup = Some(Setup { pmus, all, chosen, asked });
        Ok(())
    }

    /// A record read, into its unit's group: of the interval being read, or the
    /// first of the next (which completes the one before).
    fn record(&mut self, r: Record) -> Result<(), Failure> {
        if r.interval.is_some() && self.interval.is_some_and(|i| i != r.interval) {
            self.flush()?;
        }
        self.interval = Some(r.interval);
        self.hint(&r);
        let at = match self.index.get(&r.unit) {
            Some(&at) => at,
            None => {
                self.index.insert(r.unit.clone(), self.groups.len());
                self.groups.push(Group { interval: r.interval, unit: r.unit.clone(), ..Group::default() });
                self.groups.len() - 1
            }
        };
        let Some(g) = self.groups.get_mut(at) else { return Ok(()) };
        if r.event == DURATION_TIME {
            g.duration_ns = r.value;
            return Ok(());
        }
        let id = self.names.id(&r.event);
        g.set(id, r.value);
        // pmu stat --json names events on their own PMU: pmukit's name is looked for
        // under the PMU the record gives.
        let spelled = match &r.pmu {
            Some(p) if self.catalog.pmu(p).is_ok() => format!("{p}::{}", r.event),
            _ => r.event,
        };
        self.spelled.entry(spelled).or_insert(id);
        Ok(())
    }

    fn note(&mut self, n: String) {
        if self.notes.contains(&n) {
            return;
        }
        if self.notes.len() < MAX_NOTES {
            self.notes.push(n);
        } else {
            self.notes_dropped += 1;
        }
    }

    /// Evaluates and prints the groups read: one interval's, or the whole run's.
    fn flush(&mut self) -> Result<(), Failure> {
        self.flushed = true;
        self.setup()?;
        let Some(setup) = self.setup.take() else { return Ok(()) };
        let mut groups = std::mem::take(&mut self.groups);
        self.index.clear();
        self.interval = None;
        // Each spelling's pmukit name, worked out once for the whole input.
        for (spelled, id) in std::mem::take(&mut self.spelled) {
            let catalog = self.catalog;
            let ours = self
                .resolved
                .entry(spelled)
                .or_insert_with_key(|spelled| linux::resolve(catalog, &setup.pmus, spelled).map(|sel| sel.name().to_ascii_lowercase()))
                .clone();
            let Some(name) = ours else { continue };
            let alias = self.names.id(&name);
            for g in &mut groups {
                if let Some(v) = g.get(id) {
                    g.set(alias, v);
                }
            }
        }
        // An interval's time is its own length where the input gives no duration_time.
        for g in &mut groups {
            let Some(end) = g.interval else { continue };
            let start = self.last_end.get(&g.unit).copied().unwrap_or(0.0);
            g.duration_ns = g.duration_ns.or(Some((end - start) * 1e9));
            self.last_end.insert(g.unit.clone(), end);
        }
        if groups.is_empty() {
            groups.push(Group::default());
        }
        // Printed a chunk at a time: a run of many units holds no more than a chunk's
        // results.
        for chunk in groups.chunks(PRINT_CHUNK) {
            let mut results = Vec::new();
            let mut notes = Vec::new();
            // A unit without a metric's events (a memory controller beside strands)
            // is no news when another unit computes it: said only when none does.
            let mut missing: Vec<(String, String)> = Vec::new();
            for g in chunk {
                let lookup = Lookup { names: &self.names, group: g, arguments: &self.arguments, literals: &self.literals };
                let evaluator = Evaluator::new(&setup.all, &lookup);
                let mut values = Vec::new();
                for def in &setup.chosen {
                    let where_ = place(g);
                    match evaluator.value(def) {
                        Ok(v) => {
                            let (factor, unit) = def.scale();
                            let outside = v.is_finite().then(|| outside_domain(&evaluator, def, v)).flatten();
                            if let Some(range) = &outside {
                                notes.push(format!(
                                    "metric {} is not shown{where_}: its value {}{unit} lies outside its domain, {range}: its events' counts \
                                     contradict its definition (counted in different multiplexing groups, or not counted together)",
                                    def.name,
                                    v * factor
                                ));
                            } else if v.is_nan() {
                                notes.push(format!(
                                    "metric {} is undefined{where_}: perf's NaN (a zero denominator, or infinities that cancel)",
                                    def.name
                                ));
                            } else if v.is_infinite() {
                                notes.push(format!(
                                    "metric {} is undefined{where_}: its value overflows the largest number (perf's inf)",
                                    def.name
                                ));
                            }
                            values.push(MetricValue {
                                name: def.name.to_string(),
                                value: (v.is_finite() && outside.is_none()).then_some(v * factor),
                                unit: unit.to_string(),
                                description: def.description.to_string(),
                            });
                        }
                        // Metrics not asked for whose events the input lacks do not apply.
                        Err(MetricError::Missing { .. } | MetricError::NoDuration { .. }) if !setup.asked => {}
                        Err(e @ MetricError::Missing { .. }) => missing.push((def.name.to_string(), format!("{e}{where_}"))),
                        Err(e) => notes.push(format!("{e}{where_}")),
                    }
                }
                self.computed += values.len() as u64;
                results.push(GroupResult { interval: g.interval, unit: g.unit.clone(), metrics: values });
            }
            let computed = |name: &str| results.iter().any(|r| r.metrics.iter().any(|m| m.name == name));
            notes.extend(missing.into_iter().filter(|(name, _)| !computed(name)).map(|(_, note)| note));
            for n in notes {
                self.note(n);
            }
            if let Err(f) = self.print(&results) {
                self.setup = Some(setup);
                return Err(f);
            }
        }
        self.setup = Some(setup);
        Ok(())
    }

    fn print(&mut self, results: &[GroupResult]) -> Result<(), Failure> {
        let shown: Vec<&GroupResult> = results.iter().filter(|g| !g.metrics.is_empty()).collect();
        if shown.is_empty() {
            return Ok(());
        }
        let text = if self.out.is_json() {
            let mut text = if self.json_open {
                String::new()
            } else {
                self.json_open = true;
                format!("{{\n  \"schema\": {},\n  \"command\": \"metrics\",\n  \"results\": [\n    ", crate::output::SCHEMA)
            };
            for g in shown {
                if self.printed > 0 {
                    text.push_str(",\n    ");
                }
                let v = serde_json::to_string_pretty(g).unwrap_or_default();
                text.push_str(&v.replace('\n', "\n    "));
                self.printed += 1;
            }
            text
        } else {
            let text = self.out.metrics_table(&shown, self.printed == 0);
            self.printed += shown.len() as u64;
            text
        };
        self.out.text_raw(&text)
    }

    /// The end: what the run's report says besides the results.
    fn finish(mut self, inputs: Vec<InputRead>) -> Result<(), Failure> {
        if !self.groups.is_empty() || !self.flushed {
            self.flush()?;
        }
        if self.computed == 0 {
            let why = self.notes.first().cloned().unwrap_or_else(|| {
                let whose = match &self.setup {
                    Some(s) if !s.pmus.is_empty() => s.pmus.iter().map(|p| p.name()).collect::<Vec<_>>().join(", "),
                    _ => "none: give --pmu, -M or --expr".to_string(),
                };
                format!("no metric can be computed from the input's events (metrics of {whose})")
            });
            return Err(usage(why));
        }
        if self.notes_dropped > 0 {
            let n = format!("{} more notes are not shown", self.notes_dropped);
            self.notes.push(n);
        }
        let pmu = self.setup.as_ref().map_or_else(Vec::new, |s| s.pmus.iter().map(|p| p.name().to_string()).collect());
        let report = MetricsReport { pmu, inputs, notes: self.notes };
        if self.out.is_json() {
            let mut rest = String::from("\n  ]");
            if let serde_json::Value::Object(members) = serde_json::to_value(&report).unwrap_or_default() {
                for (k, v) in members {
                    let v = serde_json::to_string_pretty(&v).unwrap_or_default().replace('\n', "\n  ");
                    rest.push_str(&format!(",\n  \"{k}\": {v}"));
                }
            }
            return self.out.text_raw(&(rest + "\n}\n"));
        }
        self.out.metrics_notes(&report.notes)
    }
}

pub fn run(catalog: &Catalog, args: &MetricsArgs, out: &Out) -> Result<(), Failure> {
    let mut files = Vec::new();
    let mut names = Names::default();
    let mut arguments = Group::default();
    let mut literals = Vec::new();
    let mut given = 0;
    for input in &args.inputs {
        match classify(input)? {
            Input::File(f) => {
                if f == "-" && files.iter().any(|g: &OsString| g == "-") {
                    return Err(usage("standard input (-) is given twice"));
                }
                files.push(f);
            }
            Input::Count(name, v) => {
                given += 1;
                match name.strip_prefix('#') {
                    Some(lit) => literals.push((lit.to_string(), v)),
                    None if name == DURATION_TIME => arguments.duration_ns = Some(v),
                    None => {
                        let id = names.id(&name);
                        arguments.set(id, Some(v));
                    }
                }
            }
        }
    }
    let mut session = Session {
        catalog,
        args,
        out,
        arguments,
        literals,
        setup: None,
        hint: None,
        interval: None,
        groups: Vec::new(),
        index: HashMap::new(),
        names,
        spelled: HashMap::new(),
        resolved: HashMap::new(),
        last_end: HashMap::new(),
        notes: Vec::new(),
        notes_dropped: 0,
        computed: 0,
        flushed: false,
        printed: 0,
        json_open: false,
    };
    let mut inputs = Vec::new();
    for f in &files {
        let stdin = f == "-";
        let origin = if stdin { "standard input".to_string() } else { std::path::Path::new(f).display().to_string() };
        let reader: Box<dyn BufRead> = if stdin {
            Box::new(BufReader::new(std::io::stdin().lock()))
        } else {
            let cannot = |e: std::io::Error| runtime(format!("cannot read {origin}: {}", io_message(&e)));
            let file = std::fs::File::open(f).map_err(cannot)?;
            if file.metadata().map_err(cannot)?.is_dir() {
                return Err(runtime(format!("cannot read {origin}: it is a directory")));
            }
            Box::new(BufReader::new(file))
        };
        let mut reader = Reader::new(reader, &origin, args.separator.as_deref());
        let fail = |e: pmukit_core::perf_stat::ReadError| if e.is_unreadable() { runtime(e) } else { usage(e) };
        while let Some(r) = reader.next_record().map_err(fail)? {
            session.record(r)?;
        }
        let format = match reader.format() {
            Some(Format::PerfJson) => "perf_json",
            Some(Format::PmuJson) => "pmu_json",
            _ => "perf_csv",
        };
        inputs.push(InputRead { origin, format: format.to_string(), records: reader.records() });
    }
    if given > 0 {
        inputs.push(InputRead { origin: "arguments".to_string(), format: "arguments".to_string(), records: given });
    }
    session.finish(inputs)
}

/// " at 0.020 s on CPU1", for notes.
fn place(g: &Group) -> String {
    let mut s = String::new();
    if let Some(t) = g.interval {
        s.push_str(&format!(" at {t:.9} s"));
    }
    if let Some(u) = &g.unit {
        s.push_str(&format!(" on {u}"));
    }
    s
}
