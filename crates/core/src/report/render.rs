//! A run's three renderings, laid out as `perf stat` 6.1 lays them out: the human
//! table, `-x SEP` separated values (each also `--metric-only`), and JSON. Split counts
//! (`-A`, `--per-thread`) print a line per unit, led by perf's CPU or thread column.

use std::fmt::Write as _;

use super::{Aggregation, Count, EventResult, Interval, MetricResult, StatReport, Unit, UnitMetrics};

/// `1234567` → `1,234,567`, as perf prints counts.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

impl EventResult {
    fn is_clock(&self) -> bool {
        self.unit.as_deref() == Some("ns")
    }

    /// The name the text outputs print: as typed, perf's way.
    fn shown_name(&self) -> &str {
        self.input.as_deref().unwrap_or(&self.name)
    }

    /// perf's unit column: `msec` for a clock, else empty.
    fn unit_column(&self) -> &'static str {
        if self.is_clock() {
            "msec"
        } else {
            ""
        }
    }
}

impl MetricResult {
    /// The number alone, as perf's `-x` and `--metric-only` outputs print it.
    pub fn value_text(&self) -> String {
        format!("{:.*}", self.format.decimals, self.value)
    }

    /// The number as the text outputs show it: a count whole and grouped, `~` before
    /// an estimate.
    pub fn marked_text(&self) -> String {
        let number = if self.format.count && self.value.is_finite() {
            let whole = thousands(self.value.abs().round() as u64);
            if self.value < -0.5 {
                format!("-{whole}")
            } else {
                whole
            }
        } else {
            self.value_text()
        };
        if self.estimate {
            format!("~{number}")
        } else {
            number
        }
    }

    /// perf's metric unit column: `UNIT  NAME` (two spaces), or the name alone.
    pub fn unit_text(&self) -> String {
        if self.unit.is_empty() {
            self.name.clone()
        } else {
            format!("{}  {}", self.unit, self.name)
        }
    }
}

/// The count column: the count, or perf's `<not counted>` (never ran) or
/// `<not supported>` (refused). A clock's nanoseconds show as perf's milliseconds,
/// `%.2f` and never grouped.
fn count_text(e: &EventResult, count: Option<u64>, digits: fn(u64) -> String) -> String {
    match (count, e.supported) {
        (Some(c), _) if e.is_clock() => format!("{:.2}", c as f64 / 1e6),
        (Some(c), _) => digits(c),
        (None, true) => "<not counted>".to_string(),
        (None, false) => "<not supported>".to_string(),
    }
}

/// perf's `# VALUE UNIT  NAME` beside an event line.
fn metric_text(m: &MetricResult) -> String {
    let f = m.format;
    format!("# {:>w$}{} {}", m.marked_text(), f.suffix, m.unit_text(), w = f.width)
}

/// An interval's time as perf's `-I` prints it: seconds, `%16.9f`.
fn interval_time(iv: &Interval) -> String {
    format!("{:>16.9}", iv.time_ns as f64 / 1e9)
}

/// How a run is printed: `pmu stat`'s renderings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style<'a> {
    /// perf's table; `big_num` groups digits by thousands (`--no-big-num` turns it off).
    Human { big_num: bool },
    /// `--metric-only`, its columns wrapped to `width` (0: one row however wide, as
    /// `-I` runs keep it).
    MetricOnly { width: usize },
    /// `-x SEP`.
    Separated(&'a str),
    /// `--metric-only -x SEP`.
    MetricOnlySeparated(&'a str),
}

/// perf's narrowest column in `--metric-only` output (METRIC_ONLY_LEN).
const METRIC_ONLY_LEN: usize = 20;

/// The counts of the whole run or of one interval.
struct Counts<'a> {
    /// The interval's time, or empty for the whole run.
    time: String,
    events: &'a [EventResult],
    metrics: &'a [MetricResult],
    unit_metrics: &'a [UnitMetrics],
}

/// One line's worth of an event: the whole machine's count or one unit's.
struct Row<'a> {
    unit: Option<&'a Unit>,
    count: Option<u64>,
    /// The row's times: the event's, or the unit's own.
    times: Count,
    metrics: Vec<&'a MetricResult>,
}

impl<'a> Counts<'a> {
    /// Event `i`'s rows: one per unit when the counts are split, else the total.
    fn rows(&self, i: usize) -> Vec<Row<'a>> {
        let e = &self.events[i];
        let mine = |metrics: &'a [MetricResult]| metrics.iter().filter(|m| m.anchor == i).collect();
        if e.units.is_empty() {
            let times = Count { raw: e.raw, enabled: e.enabled, running: e.running };
            return vec![Row { unit: None, count: e.count, times, metrics: mine(self.metrics) }];
        }
        e.units
            .iter()
            .map(|u| {
                let metrics = self.unit_metrics.iter().find(|m| m.unit == u.unit).map_or_else(Vec::new, |m| mine(&m.metrics));
                Row { unit: Some(&u.unit), count: u.count, times: Count { raw: u.raw, enabled: u.enabled, running: u.running }, metrics }
            })
            .collect()
    }
}

impl StatReport {
    /// The run's counts, or each interval's.
    fn counts(&self) -> Vec<Counts<'_>> {
        if self.intervals.is_empty() {
            return vec![Counts { time: String::new(), events: &self.events, metrics: &self.metrics, unit_metrics: &self.unit_metrics }];
        }
        self.intervals
            .iter()
            .map(|iv| Counts { time: interval_time(iv), events: &iv.events, metrics: &iv.metrics, unit_metrics: &iv.unit_metrics })
            .collect()
    }

    /// The name perf's `--per-thread` puts before a thread number: the workload's, or
    /// `trace` for a recorded program.
    fn comm(&self) -> &str {
        if self.workload.starts_with("trace ") {
            "trace"
        } else {
            &self.workload
        }
    }

    /// The unit column: perf's `CPU%-7d` (`-A`) or `%16s-%-8d` comm-thread
    /// (`--per-thread`) and a space, or the bare label and `sep` in `-x` output. A
    /// shared unit (a memory controller) shows its name in the same width.
    fn unit_label(&self, unit: Option<&Unit>, sep: Option<&str>) -> String {
        let Some(u) = unit else { return String::new() };
        let name = match (self.aggregation, u.thread) {
            (Aggregation::Thread, Some(t)) if sep.is_some() => format!("{}-{t}", self.comm()),
            (Aggregation::Thread, Some(t)) => format!("{:>16}-{t:<8}", self.comm()),
            _ => u.name.clone(),
        };
        match sep {
            Some(sep) => format!("{name}{sep}"),
            None if self.aggregation == Aggregation::Thread => format!("{name:>25} "),
            None => format!("{name:<10} "),
        }
    }

    /// The whole run in `style`.
    pub fn render(&self, style: Style) -> String {
        let intervals = !self.intervals.is_empty();
        if let Style::MetricOnly { width } = style {
            if !intervals && width > 0 {
                return format!("{}{}{}", self.title(), self.metric_only_wrapped(width), self.tail(style, false));
            }
        }
        format!("{}{}{}", self.head(style, intervals), self.body(&self.counts(), style), self.tail(style, intervals))
    }

    /// `--metric-only` of a whole run whose columns do not fit `width`: the header and
    /// rows again for each run of columns that does.
    fn metric_only_wrapped(&self, width: usize) -> String {
        let widths = self.metric_only_widths();
        let prefix = self.unit_label(self.unit_metrics.first().map(|m| &m.unit), None).chars().count();
        let counts = self.counts();
        let rows: Vec<(Option<&Unit>, Vec<String>)> = counts.iter().flat_map(|c| self.metric_rows(c, MetricResult::marked_text)).collect();
        let heads: Vec<String> = self.metrics_shown().iter().map(|m| m.unit_text()).collect();
        let mut out = String::new();
        let mut start = 0;
        while start < widths.len() {
            let mut end = start + 1;
            let mut used = prefix + 1 + widths[start];
            while end < widths.len() && used + 1 + widths[end] <= width {
                used += 1 + widths[end];
                end += 1;
            }
            if start > 0 {
                out.push('\n');
            }
            out.push_str(&self.metric_only_cells(&" ".repeat(prefix), &heads, start..end));
            for (unit, values) in &rows {
                out.push_str(&self.metric_only_cells(&self.unit_label(*unit, None), values, start..end));
            }
            start = end;
        }
        out
    }

    /// An `-I` run printed as its intervals end (perf's way): what comes before the
    /// first interval. `self` is the run as its first interval leaves it, whose
    /// metrics are those `--metric-only` has columns for.
    pub fn interval_head(&self, style: Style) -> String {
        self.head(style, true)
    }

    /// The lines of one interval, in `style`.
    pub fn interval_lines(&self, iv: &Interval, style: Style) -> String {
        let counts = Counts { time: interval_time(iv), events: &iv.events, metrics: &iv.metrics, unit_metrics: &iv.unit_metrics };
        self.body(&[counts], style)
    }

    /// What follows the last interval: the elapsed time and notes of a simulated run
    /// (perf prints nothing after a live run's intervals).
    pub fn interval_tail(&self, style: Style) -> String {
        self.tail(style, true)
    }

    /// The title and column headers. perf's `-I` output of a real run has no title.
    fn head(&self, style: Style, intervals: bool) -> String {
        let title = if intervals && self.live.is_some() { String::new() } else { self.title() };
        match style {
            Style::Human { .. } if intervals => format!("{title}{}", self.interval_header()),
            Style::Human { .. } => title,
            Style::MetricOnly { .. } => format!("{title}{}", self.metric_only_header(intervals)),
            Style::Separated(_) => String::new(),
            Style::MetricOnlySeparated(sep) => self.metric_only_separated_header(sep),
        }
    }

    fn body(&self, counts: &[Counts], style: Style) -> String {
        match style {
            Style::Human { big_num } => self.human_lines(counts, big_num),
            Style::MetricOnly { .. } => self.metric_only_lines(counts),
            Style::Separated(sep) => self.separated_lines(counts, sep),
            Style::MetricOnlySeparated(sep) => self.metric_only_separated_lines(counts, sep),
        }
    }

    fn tail(&self, style: Style, intervals: bool) -> String {
        match style {
            Style::Human { .. } | Style::MetricOnly { .. } if !(intervals && self.live.is_some()) => self.footer(),
            _ => String::new(),
        }
    }

    /// perf's header over `-I` lines.
    fn interval_header(&self) -> &'static str {
        match self.aggregation {
            Aggregation::Total => "#           time             counts unit events\n",
            Aggregation::Cpu => "#           time CPU                    counts unit events\n",
            Aggregation::Thread => "#           time             comm-pid                  counts unit events\n",
        }
    }

    /// The human table's lines, laid out like `perf stat`; `big_num` groups digits by
    /// thousands (perf's default; `--no-big-num` turns it off). Each interval's lines
    /// start with its time.
    fn human_lines(&self, all: &[Counts], big_num: bool) -> String {
        let digits: fn(u64) -> String = if big_num { thousands } else { |c| c.to_string() };
        let mut out = String::new();
        for counts in all {
            let time = if counts.time.is_empty() { String::new() } else { format!("{} ", counts.time) };
            for (i, e) in counts.events.iter().enumerate() {
                for row in counts.rows(i) {
                    let lead = format!("{time}{}", self.unit_label(row.unit, None));
                    let count = count_text(e, row.count, digits);
                    let mut metrics = row.metrics.into_iter();
                    let first = metrics.next().map(metric_text).unwrap_or_default();
                    let mut line = format!("{lead}{count:>18} {:<4} {:<30} {first:<40}", e.unit_column(), e.shown_name());
                    // An event never enabled (a live interval the command slept through) has no
                    // share of time to show, as in perf.
                    if e.supported && (row.times.is_scaled() || row.count.is_none()) && row.times.enabled > 0 {
                        let _ = write!(line, " ({:.2}%)", row.times.running_pct());
                    }
                    if let (Some(pct), None) = (e.noise_pct, row.unit) {
                        let _ = write!(line, "  ( +-{pct:6.2}% )");
                    }
                    out.push_str(line.trim_end());
                    out.push('\n');
                    for m in metrics {
                        let _ = writeln!(out, "{lead}{:>18}      {:<30} {}", "", "", metric_text(m));
                    }
                }
            }
        }
        out
    }

    fn title(&self) -> String {
        let runs = if self.runs > 1 { format!(" ({} runs)", self.runs) } else { String::new() };
        if self.live.is_some() {
            return format!("\n Performance counter stats for '{}'{runs}:\n\n", self.workload);
        }
        let seeds = match self.runs {
            0 | 1 => format!("seed {}", self.seed),
            n => format!("seeds {}-{}", self.seed, self.seed.saturating_add(n - 1)),
        };
        format!(
            "\n Performance counter stats for workload '{}' ({seeds}, {} cycles) on {}{runs}:\n\n",
            self.workload,
            thousands(self.cycles),
            self.pmu.join(",")
        )
    }

    /// The elapsed time and the notes.
    fn footer(&self) -> String {
        let seconds = |ns: u64| ns as f64 / 1e9;
        let mut out = match &self.live {
            // Repeated runs: perf's mean and the standard deviation of the mean, shown
            // to two digits past the deviation's first (stat-display.c's print_footer).
            Some(live) if live.elapsed_noise_pct.is_some() => {
                let pct = live.elapsed_noise_pct.unwrap_or(0.0);
                let mean = seconds(self.elapsed_ns);
                let sd = mean * pct / 100.0;
                let precision = if sd > 1.0 || sd <= 0.0 { 2 } else { (-sd.log10()).ceil() as usize + 2 };
                format!("\n {mean:>17.precision$} +- {sd:.precision$} seconds time elapsed  ( +-{pct:6.2}% )\n")
            }
            // perf gives a command's CPU times, not a system-wide count's.
            Some(live) if !live.system_wide => format!(
                "\n {:>17.9} seconds time elapsed\n\n {:>17.9} seconds user\n {:>17.9} seconds sys\n",
                seconds(self.elapsed_ns),
                seconds(live.user_ns),
                seconds(live.sys_ns)
            ),
            Some(_) => format!("\n {:>17.9} seconds time elapsed\n", seconds(self.elapsed_ns)),
            None => format!("\n {:>17.9} seconds time elapsed (simulated)\n", seconds(self.elapsed_ns)),
        };
        for n in &self.notes {
            let _ = writeln!(out, "\n note: {n}");
        }
        out
    }

    /// `perf stat -x SEP` lines, in perf 6.1's column order: [time,] [CPU or thread,]
    /// count, unit, event, [variance,] run time, % running, metric value, metric unit.
    /// Extra metrics of one line follow on lines whose leading fields are empty.
    fn separated_lines(&self, all: &[Counts], sep: &str) -> String {
        let mut out = String::new();
        for counts in all {
            let time = if counts.time.is_empty() { String::new() } else { format!("{}{sep}", counts.time) };
            for (i, e) in counts.events.iter().enumerate() {
                for row in counts.rows(i) {
                    let lead = format!("{time}{}", self.unit_label(row.unit, Some(sep)));
                    let mut metrics = row.metrics.into_iter();
                    let (mv, mu) = metrics.next().map_or((String::new(), String::new()), |m| (m.value_text(), m.unit_text()));
                    let mut fields = vec![
                        count_text(e, row.count, |c| c.to_string()),
                        e.unit_column().to_string(),
                        e.shown_name().to_string(),
                        row.times.running.to_string(),
                        format!("{:.2}", row.times.running_pct()),
                        mv,
                        mu,
                    ];
                    // Repeated runs add perf's variance column after the event (the
                    // machine's; a unit's line leaves it empty).
                    if let Some(pct) = e.noise_pct {
                        fields.insert(3, if row.unit.is_none() { format!("{pct:.2}%") } else { String::new() });
                    }
                    let _ = writeln!(out, "{lead}{}", fields.join(sep));
                    for m in metrics {
                        let empty = if e.noise_pct.is_some() { 6 } else { 5 };
                        let fields: Vec<String> =
                            std::iter::repeat_n(String::new(), empty).chain([m.value_text(), m.unit_text()]).collect();
                        let _ = writeln!(out, "{lead}{}", fields.join(sep));
                    }
                }
            }
        }
        out
    }

    /// The rows of `--metric-only` output: the units (one unlabelled row when the
    /// counts are summed), and each one's metrics.
    fn metric_rows<'a>(&'a self, counts: &Counts<'a>, text: fn(&MetricResult) -> String) -> Vec<(Option<&'a Unit>, Vec<String>)> {
        if self.aggregation == Aggregation::Total {
            return vec![(None, self.metric_values(counts.metrics, text))];
        }
        // Every unit of the run, also where an interval has no metric for one.
        self.unit_metrics
            .iter()
            .map(|um| {
                let metrics = counts.unit_metrics.iter().find(|m| m.unit == um.unit).map_or(&[][..], |m| &m.metrics[..]);
                (Some(&um.unit), self.metric_values(metrics, text))
            })
            .collect()
    }

    /// `--metric-only`: a header of metric units and names, then their values (a row
    /// per unit when split), each right-aligned in a column at least
    /// [`METRIC_ONLY_LEN`] wide, as perf lays it out.
    fn metric_only_header(&self, intervals: bool) -> String {
        let time_head = match (intervals, self.unit_metrics.is_empty()) {
            (true, true) => "#           time",
            (true, false) => "#           time ",
            (false, _) => "",
        };
        let unit_head = " ".repeat(self.unit_label(self.unit_metrics.first().map(|m| &m.unit), None).len());
        self.metric_only_row(&format!("{time_head}{unit_head}"), self.metrics_shown().iter().map(|m| m.unit_text()).collect())
    }

    fn metric_only_lines(&self, all: &[Counts]) -> String {
        let mut out = String::new();
        for counts in all {
            for (unit, values) in self.metric_rows(counts, MetricResult::marked_text) {
                // The time, when there is one, is a column of its own before the unit's.
                let time = if counts.time.is_empty() || unit.is_none() { counts.time.clone() } else { format!("{} ", counts.time) };
                out.push_str(&self.metric_only_row(&format!("{time}{}", self.unit_label(unit, None)), values));
            }
        }
        out
    }

    fn metric_only_row(&self, prefix: &str, cells: Vec<String>) -> String {
        self.metric_only_cells(prefix, &cells, 0..cells.len())
    }

    /// Each `--metric-only` column's width: its header's, at least perf's.
    fn metric_only_widths(&self) -> Vec<usize> {
        self.metrics_shown().into_iter().map(|m| m.unit_text().chars().count().max(METRIC_ONLY_LEN)).collect()
    }

    /// A `--metric-only` line of the columns `columns` of `cells`.
    fn metric_only_cells(&self, prefix: &str, cells: &[String], columns: std::ops::Range<usize>) -> String {
        let widths = self.metric_only_widths();
        let mut line = prefix.to_string();
        for (c, w) in cells.iter().zip(&widths).skip(columns.start).take(columns.len()) {
            let _ = write!(line, " {c:>w$}");
        }
        format!("{}\n", line.trim_end())
    }

    /// The metrics `--metric-only` has columns for: the run's, or with split counts
    /// every metric some unit has, in order of first appearance; as perf's
    /// `valid_only_metric`, never rates per second or CPUs utilized.
    fn metrics_shown(&self) -> Vec<&MetricResult> {
        let valid = |m: &&MetricResult| {
            let unit = m.unit_text();
            !unit.contains("/sec") && !unit.contains("CPUs utilized")
        };
        let mut shown: Vec<&MetricResult> = self.metrics.iter().filter(valid).collect();
        for m in self.unit_metrics.iter().flat_map(|u| &u.metrics).filter(valid) {
            if !shown.iter().any(|have| have.name == m.name) {
                shown.push(m);
            }
        }
        shown
    }

    /// The values in `metrics` (the run's, an interval's or a unit's) of the metrics
    /// shown, in their order; empty where `metrics` lacks one.
    fn metric_values(&self, metrics: &[MetricResult], text: fn(&MetricResult) -> String) -> Vec<String> {
        self.metrics_shown().iter().map(|m| metrics.iter().find(|x| x.name == m.name).map(text).unwrap_or_default()).collect()
    }

    /// `--metric-only -x SEP`: the metric units and names, then the values, each
    /// field followed by the separator, as perf prints them; with intervals, a line
    /// of values per interval after its time; with split counts, perf's `cpu` (or
    /// `thread`) column first.
    fn metric_only_separated_header(&self, sep: &str) -> String {
        let mut out = match self.aggregation {
            Aggregation::Total => String::new(),
            Aggregation::Cpu => format!("cpu{sep}"),
            Aggregation::Thread => format!("thread{sep}"),
        };
        out.extend(self.metrics_shown().iter().map(|m| format!("{}{sep}", m.unit_text())));
        out.push('\n');
        out
    }

    fn metric_only_separated_lines(&self, all: &[Counts], sep: &str) -> String {
        let mut out = String::new();
        for counts in all {
            let time = if counts.time.is_empty() { String::new() } else { format!("{}{sep}", counts.time) };
            for (unit, values) in self.metric_rows(counts, MetricResult::value_text) {
                let values: String = values.iter().map(|v| format!("{v}{sep}")).collect();
                let _ = writeln!(out, "{time}{}{values}", self.unit_label(unit, Some(sep)));
            }
        }
        out
    }
}
