//! Where a `pmu stat` report goes, and when: a run's counts at its end, an `-I` run's
//! intervals as each ends (every rendering, JSON too, so memory does not grow with
//! the number of intervals and a pipe sees each interval at once), to standard output
//! or `-o FILE` (made before the run, renamed into place after it).

use pmukit_core::report::{Interval, StatReport, Style};
use serde_json::Value;

use crate::failure::Failure;
use crate::outfile::Output;
use crate::output::{diag, Out};
use crate::stat::StatArgs;

/// How `pmu stat`'s options print a run.
enum Rendering {
    Json,
    Human { big_num: bool },
    MetricOnly,
    Separated(String),
    MetricOnlySeparated(String),
}

impl Rendering {
    fn style(&self) -> Option<Style<'_>> {
        match self {
            Rendering::Json => None,
            Rendering::Human { big_num } => Some(Style::Human { big_num: *big_num }),
            Rendering::MetricOnly => Some(Style::MetricOnly { width: usize::from(crate::output::layout::width()) }),
            Rendering::Separated(sep) => Some(Style::Separated(sep)),
            Rendering::MetricOnlySeparated(sep) => Some(Style::MetricOnlySeparated(sep)),
        }
    }
}

pub struct Printer {
    out: Output,
    rendering: Rendering,
    no_metrics: bool,
    metric_only: bool,
    /// The run as its first interval found it (the head's title and the metrics
    /// `--metric-only` has columns for); `None` before the first interval.
    frame: Option<StatReport>,
    /// The first failure to write an interval, reported at the end.
    failed: Option<Failure>,
}

/// Pretty JSON of `v`, each line after the first indented by `indent` spaces.
fn indented(v: &Value, indent: usize) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default().replace('\n', &format!("\n{}", " ".repeat(indent)))
}

impl Printer {
    /// The printer of `args`, its output made now (so that `-o` is checked before any
    /// work is done).
    pub fn new(args: &StatArgs) -> Result<Printer, Failure> {
        let out = match &args.output {
            Some(path) => Output::create(path, "-o")?,
            None => Output::Stdout,
        };
        let rendering = match (&args.separator, args.metric_only) {
            _ if args.json.json => Rendering::Json,
            (Some(sep), true) => Rendering::MetricOnlySeparated(sep.clone()),
            (Some(sep), false) => Rendering::Separated(sep.clone()),
            (None, true) => Rendering::MetricOnly,
            (None, false) => Rendering::Human { big_num: !args.no_big_num },
        };
        Ok(Printer { out, rendering, no_metrics: args.no_metrics, metric_only: args.metric_only, frame: None, failed: None })
    }

    /// Prints an interval of the run `frame` describes (its PMUs, workload, split).
    pub fn interval(&mut self, frame: &StatReport, mut iv: Interval) {
        if self.no_metrics {
            iv.metrics.clear();
            iv.unit_metrics.clear();
        }
        if self.metric_only {
            iv.events.clear();
        }
        let mut text = String::new();
        if self.frame.is_none() {
            let mut first = frame.clone();
            first.metrics = iv.metrics.clone();
            first.unit_metrics = iv.unit_metrics.clone();
            text = match self.rendering.style() {
                Some(style) => first.interval_head(style),
                None => format!("{{\n  \"schema\": {},\n  \"command\": \"stat\",\n  \"intervals\": [\n    ", crate::output::SCHEMA),
            };
            self.frame = Some(first);
        } else if self.rendering.style().is_none() {
            text.push_str(",\n    ");
        }
        let Some(first) = &self.frame else { return };
        match self.rendering.style() {
            Some(style) => text.push_str(&first.interval_lines(&iv, style)),
            None => text.push_str(&indented(&serde_json::to_value(&iv).unwrap_or_default(), 4)),
        }
        self.write(&text);
    }

    fn write(&mut self, text: &str) {
        if self.failed.is_none() {
            if let Err(f) = self.out.write_all(text.as_bytes()) {
                self.failed = Some(f);
            }
        }
    }

    /// Prints the end of the run (all of it, without intervals) and puts the output
    /// in place.
    pub fn finish(mut self, mut report: StatReport, out: &Out) -> Result<(), Failure> {
        if self.no_metrics {
            report.metrics.clear();
            report.unit_metrics.clear();
        }
        if self.metric_only {
            report.events.clear();
        }
        // Separated lines are data: what a reader must know goes beside them, as it
        // does after a live run's intervals, whose end perf does not print.
        let notes_apart = matches!(self.rendering, Rendering::Separated(_) | Rendering::MetricOnlySeparated(_))
            || (self.frame.is_some() && report.live.is_some() && self.rendering.style().is_some());
        if notes_apart {
            for n in &report.notes {
                diag(&format!("pmu: note: {n}"));
            }
        }
        let text = match (self.rendering.style(), self.frame.is_some()) {
            (Some(style), true) => report.interval_tail(style),
            (Some(style), false) => report.render(style),
            (None, false) => serde_json::to_string_pretty(&out.stat(&report)).unwrap_or_default() + "\n",
            (None, true) => {
                // The intervals are out: the rest of the run's members follow them.
                let mut rest = String::from("\n  ]");
                if let Value::Object(members) = serde_json::to_value(&report).unwrap_or_default() {
                    for (k, v) in members.iter().filter(|(k, _)| *k != "intervals") {
                        rest.push_str(&format!(",\n  {}: {}", Value::String(k.clone()), indented(v, 2)));
                    }
                }
                rest + "\n}\n"
            }
        };
        self.write(&text);
        if let Some(f) = self.failed.take() {
            return Err(f);
        }
        self.out.commit().map(|_| ())
    }
}
