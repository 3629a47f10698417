//! `pmu metrics`: derived metrics over counts made elsewhere: `perf stat -x SEP` or
//! `-j` output, `pmu stat --json` output, or `NAME=VALUE` arguments. perf's spellings
//! of events are mapped onto pmukit's (`pmukit_arch::linux`), each interval and each
//! CPU (or core, socket, thread) is evaluated on its own counts, and the metrics follow
//! perf's MetricExpr semantics (`pmukit_core::metric_group`).

use std::borrow::Cow;
use std::io::Read;

use clap::Args;
use pmukit_arch::{self as arch, linux, metrics, Catalog};
use pmukit_core::metric_group::{Counts, Evaluator, MetricError, DURATION_TIME};
use pmukit_core::perf_stat::{self, Format, Record};
use pmukit_core::pmu::Pmu;
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
    inputs: Vec<String>,
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

/// Everything `pmu metrics` found and computed.
#[derive(Serialize)]
pub struct MetricsReport {
    /// The PMUs whose events and metrics the input was read against.
    pub pmu: Vec<String>,
    pub inputs: Vec<InputRead>,
    /// One per interval and CPU (or core, socket, thread) of the input, in order.
    pub results: Vec<GroupResult>,
    pub notes: Vec<String>,
}

#[derive(Serialize)]
pub struct InputRead {
    pub origin: String,
    /// `perf_csv`, `perf_json`, `pmu_json` or `arguments`.
    pub format: String,
    pub records: usize,
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
    /// Scaled by the metric's ScaleUnit; `null` when undefined here (a zero
    /// denominator: perf's NaN).
    pub value: Option<f64>,
    pub unit: String,
    pub description: String,
}

/// One interval and unit's counts.
struct Group {
    interval: Option<f64>,
    unit: Option<String>,
    /// (lowercase name, count or `None` if not counted); an event appears under its
    /// spelling and under pmukit's name for it.
    counts: Vec<(String, Option<f64>)>,
    duration_ns: Option<f64>,
}

/// What the metrics look names up in: a group's counts, then the arguments'.
struct Lookup<'a> {
    group: &'a Group,
    arguments: &'a Group,
    literals: &'a [(String, f64)],
}

impl Counts for Lookup<'_> {
    fn count(&self, name: &str) -> Option<Option<f64>> {
        let key = name.to_ascii_lowercase();
        let find = |g: &Group| g.counts.iter().find(|(n, _)| *n == key).map(|(_, v)| *v);
        find(self.group).or_else(|| find(self.arguments))
    }

    fn literal(&self, name: &str) -> Option<f64> {
        self.literals.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| *v)
    }

    fn duration_s(&self) -> Option<f64> {
        self.group.duration_ns.or(self.arguments.duration_ns).map(|ns| ns * 1e-9)
    }
}

/// What the inputs hold: records from files and standard input, counts and literals
/// from NAME=VALUE.
struct Inputs {
    read: Vec<InputRead>,
    records: Vec<Record>,
    arguments: Group,
    literals: Vec<(String, f64)>,
}

fn read_inputs(args: &MetricsArgs) -> Result<Inputs, Failure> {
    let mut inputs = Vec::new();
    let mut records = Vec::new();
    let mut arguments = Group { interval: None, unit: None, counts: Vec::new(), duration_ns: None };
    let mut literals = Vec::new();
    let mut stdin_used = false;
    for input in &args.inputs {
        let is_file = input == "-" || std::path::Path::new(input).exists();
        if !is_file {
            let Some((name, value)) = input.split_once('=') else {
                return Err(usage(format!(
                    "input '{input}' is neither a file nor NAME=VALUE: give perf stat -x/-j output, pmu stat --json output, - for standard input, or a count such as INSTR_EXEC=1000"
                )));
            };
            let v: f64 = value
                .trim()
                .parse()
                .ok()
                .filter(|v: &f64| v.is_finite() && !value.trim().starts_with('+'))
                .ok_or_else(|| usage(format!("input '{input}': '{value}' is not a number")))?;
            let name = name.trim();
            if name.is_empty() {
                return Err(usage(format!("input '{input}' names nothing before '='")));
            }
            match name.strip_prefix('#') {
                Some(lit) => literals.push((lit.to_string(), v)),
                None if name == DURATION_TIME => arguments.duration_ns = Some(v),
                None => arguments.counts.push((name.to_ascii_lowercase(), Some(v))),
            }
            continue;
        }
        let text = if input == "-" {
            if stdin_used {
                return Err(usage("standard input (-) is given twice"));
            }
            stdin_used = true;
            let mut text = String::new();
            std::io::stdin().read_to_string(&mut text).map_err(|e| runtime(format!("cannot read standard input: {e}")))?;
            text
        } else {
            std::fs::read_to_string(input).map_err(|e| runtime(format!("cannot read {input}: {e}")))?
        };
        let origin = if input == "-" { "standard input".to_string() } else { input.clone() };
        let (format, read) = perf_stat::read(&text, &origin, args.separator.as_deref()).map_err(usage)?;
        let format = match format {
            Format::PerfCsv => "perf_csv",
            Format::PerfJson => "perf_json",
            Format::PmuJson => "pmu_json",
        };
        inputs.push(InputRead { origin, format: format.to_string(), records: read.len() });
        records.extend(read);
    }
    if !arguments.counts.is_empty() || arguments.duration_ns.is_some() || !literals.is_empty() {
        let n = arguments.counts.len() + literals.len() + usize::from(arguments.duration_ns.is_some());
        inputs.push(InputRead { origin: "arguments".to_string(), format: "arguments".to_string(), records: n });
    }
    Ok(Inputs { read: inputs, records, arguments, literals })
}

/// The PMUs to read the input against: `--pmu`'s machine, else the first of pmukit's
/// that `pmu stat --json` names (a live run also names `software` and `hardware`),
/// else the one whose Linux driver name perf's spellings carry.
fn pmus<'a>(catalog: &'a Catalog, args: &MetricsArgs, records: &[Record]) -> Result<Vec<&'a Pmu>, Failure> {
    let ours = || records.iter().filter_map(|r| r.pmu.clone()).find(|p| catalog.pmu(p).is_ok());
    let named = args.opts.pmu.clone().or_else(ours).or_else(|| {
        records.iter().find_map(|r| {
            let (driver, _) = r.event.split_once('/')?;
            // `cpu` is x86's core PMU as well as SPARC's: not evidence of a T4.
            let pmu = catalog.pmus.iter().find(|p| p.desc.linux_pmu == Some(driver) && driver != "cpu")?;
            Some(pmu.name().to_string())
        })
    });
    let Some(name) = named else { return Ok(Vec::new()) };
    let pmu = catalog.pmu(&name)?;
    Ok(arch::machine_pmus(pmu).into_iter().filter_map(|n| catalog.pmu(n).ok()).collect())
}

/// The records in groups of one interval and unit, in input order; each count under
/// its spelling and pmukit's name.
fn groups(catalog: &Catalog, pmus: &[&Pmu], records: &[Record]) -> Vec<Group> {
    let mut out: Vec<Group> = Vec::new();
    for r in records {
        let at = match out.iter().position(|g| g.interval == r.interval && g.unit == r.unit) {
            Some(i) => i,
            None => {
                out.push(Group { interval: r.interval, unit: r.unit.clone(), counts: Vec::new(), duration_ns: None });
                out.len() - 1
            }
        };
        let Some(g) = out.get_mut(at) else { continue };
        if r.event == DURATION_TIME {
            g.duration_ns = r.value;
            continue;
        }
        let mut names = vec![r.event.to_ascii_lowercase()];
        // pmu stat --json names events on their own PMU.
        let spelled = match &r.pmu {
            Some(p) if catalog.pmu(p).is_ok() => format!("{p}::{}", r.event),
            _ => r.event.clone(),
        };
        if let Some(sel) = linux::resolve(catalog, pmus, &spelled) {
            names.push(sel.name().to_ascii_lowercase());
        }
        for n in names {
            if !g.counts.iter().any(|(have, _)| *have == n) {
                g.counts.push((n, r.value));
            }
        }
    }
    // An interval's time is its own length where the input gives no duration_time.
    let mut last_end: Vec<(Option<String>, f64)> = Vec::new();
    for g in &mut out {
        let Some(end) = g.interval else { continue };
        let start = last_end.iter().find(|(u, _)| *u == g.unit).map_or(0.0, |(_, t)| *t);
        g.duration_ns = g.duration_ns.or(Some((end - start) * 1e9));
        match last_end.iter_mut().find(|(u, _)| *u == g.unit) {
            Some(slot) => slot.1 = end,
            None => last_end.push((g.unit.clone(), end)),
        }
    }
    out
}

pub fn run(catalog: &Catalog, args: &MetricsArgs, out: &Out) -> Result<(), Failure> {
    let Inputs { read: inputs, records, arguments, literals } = read_inputs(args)?;
    let pmus = pmus(catalog, args, &records)?;
    // Every metric of the PMUs, so that one metric may use another.
    let mut all: Vec<MetricDef> = pmus.iter().flat_map(|p| arch::family(p).metrics.metrics.iter().cloned()).collect();
    all.dedup_by(|a, b| a.name == b.name);
    let (chosen, asked): (Vec<MetricDef>, bool) = match (&args.expr, args.metric_names.is_empty()) {
        (Some(expr), _) => {
            let def = MetricDef {
                name: Cow::Owned(expr.clone()),
                expr: Cow::Owned(expr.clone()),
                description: Cow::Borrowed(""),
                group: Cow::Borrowed(""),
                scale_unit: Cow::Borrowed(""),
                source: Cow::Borrowed(""),
            };
            (vec![def], true)
        }
        (None, false) => {
            if pmus.is_empty() {
                return Err(usage("-M needs to know whose metrics: give --pmu (the input names no PMU pmukit knows)"));
            }
            let mut chosen: Vec<MetricDef> = Vec::new();
            for name in &args.metric_names {
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
    let mut groups = groups(catalog, &pmus, &records);
    if groups.is_empty() {
        groups.push(Group { interval: None, unit: None, counts: Vec::new(), duration_ns: None });
    }
    let mut notes: Vec<String> = Vec::new();
    let mut results = Vec::new();
    for g in &groups {
        let lookup = Lookup { group: g, arguments: &arguments, literals: &literals };
        let evaluator = Evaluator::new(&all, &lookup);
        let mut values = Vec::new();
        for def in &chosen {
            let where_ = place(g);
            match evaluator.value(def) {
                Ok(v) => {
                    let (factor, unit) = def.scale();
                    if !v.is_finite() {
                        notes.push(format!("metric {} is undefined{where_} (a zero denominator: perf's NaN)", def.name));
                    }
                    values.push(MetricValue {
                        name: def.name.to_string(),
                        value: v.is_finite().then_some(v * factor),
                        unit: unit.to_string(),
                        description: def.description.to_string(),
                    });
                }
                // Metrics not asked for whose events the input lacks do not apply.
                Err(MetricError::Missing { .. } | MetricError::NoDuration { .. }) if !asked => {}
                Err(e) => notes.push(format!("{e}{where_}")),
            }
        }
        results.push(GroupResult { interval: g.interval, unit: g.unit.clone(), metrics: values });
    }
    let computed = results.iter().map(|r| r.metrics.len()).sum::<usize>();
    if computed == 0 {
        let why = notes.first().cloned().unwrap_or_else(|| {
            let whose = if pmus.is_empty() { "none: give --pmu, -M or --expr".to_string() } else { pmu_names(&pmus) };
            format!("no metric can be computed from the input's events (metrics of {whose})")
        });
        return Err(usage(why));
    }
    let report = MetricsReport { pmu: pmus.iter().map(|p| p.name().to_string()).collect(), inputs, results, notes };
    out.metrics(&report)
}

fn pmu_names(pmus: &[&Pmu]) -> String {
    pmus.iter().map(|p| p.name()).collect::<Vec<_>>().join(", ")
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
