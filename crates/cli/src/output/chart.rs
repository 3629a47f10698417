//! `pmu report --svg`: the latency histograms of a recording as SVG bar charts, one per
//! EAR, with labelled axes: latency on a logarithmic axis (each power-of-two bucket
//! at its own place, empty ones as gaps), samples on a linear one with its ticks,
//! each level in a colour of its own. What a recording holds no histogram of (an EAR
//! in TLB or ALAT mode, the trace buffer, the IP-EAR) is named in the chart with the
//! reason, so no chart is silently empty.

use std::fmt::Write;

use pmukit_core::report::thousands;
use pmukit_sim::record::report::{Analysis, EarReport};

const WIDTH: u64 = 640;
const HEIGHT: u64 = 260;
/// Room for the samples axis on the left and the latency axis below.
const LEFT: u64 = 70;
const RIGHT: u64 = 20;
const TOP: u64 = 30;
const BOTTOM: u64 = 70;

/// A level's colour, by name, whatever other levels a recording has.
fn colour(level: &str) -> &'static str {
    match level {
        "L2" | "L2D" | "L2I" => "#4e79a7",
        "L3" => "#f28e2b",
        "memory" => "#e15759",
        _ => "#76b7b2",
    }
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// The units a recording armed that have no histogram, and why.
fn without_histogram(a: &Analysis) -> Vec<String> {
    let mut why = Vec::new();
    for (unit, e) in [("data EAR", a.dear.as_ref()), ("instruction EAR", a.iear.as_ref())] {
        if let Some(e) = e.filter(|e| e.latency.is_empty()) {
            why.push(format!(
                "the {unit} in {} mode records no latencies (the text report has its {} samples)",
                e.mode,
                thousands(e.samples)
            ));
        }
    }
    if let Some(b) = &a.branches {
        why.push(format!("the trace buffer's {} branch traces have no latencies (the text report lists them)", thousands(b.samples)));
    }
    if let Some(ip) = &a.ip_ear {
        why.push(format!("the IP-EAR's {} retired-IP histories have no latencies (the text report lists them)", thousands(ip.samples)));
    }
    why
}

/// One EAR's chart, its top at `top`.
fn chart(out: &mut String, title: &str, file: &str, e: &EarReport, top: u64) {
    let plot_w = WIDTH - LEFT - RIGHT;
    let plot_h = HEIGHT - TOP - BOTTOM;
    let (x0, y0) = (LEFT, top + TOP + plot_h);
    let _ = writeln!(out, "<text x=\"10\" y=\"{}\" font-size=\"13\">{} ({})</text>", top + 18, escape(title), escape(file));
    let buckets: Vec<(&str, u64, u64, u64)> =
        e.latency.iter().flat_map(|l| l.buckets.iter().map(move |b| (l.level.as_str(), b.from, b.to, b.samples))).collect();
    // Power-of-two buckets: a bucket's place on the log axis is log2 of its start.
    let place = |from: u64| u64::from(from.max(1).ilog2());
    let (first, last) = match (buckets.iter().map(|b| place(b.1)).min(), buckets.iter().map(|b| place(b.1)).max()) {
        (Some(f), Some(l)) => (f, l),
        _ => {
            let _ = writeln!(out, "<text x=\"{x0}\" y=\"{}\">no samples fell in any level</text>", top + TOP + plot_h / 2);
            return;
        }
    };
    let slots = last - first + 1;
    let slot = plot_w / slots;
    let most = buckets.iter().map(|b| b.3).max().unwrap_or(1).max(1);
    // Axes, the samples axis's ticks at 0, half and the fullest bucket.
    let _ = writeln!(out, "<line x1=\"{x0}\" y1=\"{y0}\" x2=\"{}\" y2=\"{y0}\" stroke=\"black\"/>", x0 + plot_w);
    let _ = writeln!(out, "<line x1=\"{x0}\" y1=\"{}\" x2=\"{x0}\" y2=\"{y0}\" stroke=\"black\"/>", top + TOP);
    for tick in [0, most / 2, most] {
        let y = y0 - tick * plot_h / most;
        let _ = writeln!(out, "<line x1=\"{}\" y1=\"{y}\" x2=\"{x0}\" y2=\"{y}\" stroke=\"black\"/>", x0 - 4);
        let _ = writeln!(out, "<text x=\"{}\" y=\"{}\" text-anchor=\"end\" font-size=\"9\">{}</text>", x0 - 6, y + 3, thousands(tick));
    }
    let _ = writeln!(
        out,
        "<text x=\"14\" y=\"{}\" transform=\"rotate(-90 14 {0})\" text-anchor=\"middle\">samples</text>",
        top + TOP + plot_h / 2
    );
    for k in 0..slots {
        let x = x0 + k * slot;
        let _ = writeln!(out, "<text x=\"{x}\" y=\"{}\" font-size=\"9\">{}</text>", y0 + 12, 1u64 << (first + k));
    }
    let _ = writeln!(
        out,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">load latency, cycles (logarithmic: a bar per power of two)</text>",
        x0 + plot_w / 2,
        y0 + 28
    );
    for &(level, from, to, n) in &buckets {
        let bar = (n * plot_h).div_ceil(most);
        let x = x0 + (place(from) - first) * slot;
        let _ = writeln!(
            out,
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{bar}\" fill=\"{}\"><title>{level}: {from}-{} cycles, {} samples</title></rect>",
            x + 1,
            y0 - bar,
            slot.saturating_sub(2).max(1),
            colour(level),
            to - 1,
            thousands(n)
        );
    }
    for (i, l) in e.latency.iter().enumerate() {
        let _ = writeln!(
            out,
            "<text x=\"{}\" y=\"{}\" fill=\"{}\">{}: {} samples</text>",
            x0 + 170 * i as u64,
            y0 + 46,
            colour(&l.level),
            escape(&l.level),
            thousands(l.samples)
        );
    }
}

/// The recording's histograms, one chart per EAR in cache mode, and a line for each
/// unit it armed that has none.
pub fn svg(a: &Analysis) -> String {
    let charts: Vec<(&str, &EarReport)> = [("Data EAR latency", a.dear.as_ref()), ("Instruction EAR latency", a.iear.as_ref())]
        .into_iter()
        .filter_map(|(t, e)| Some((t, e?)))
        .filter(|(_, e)| !e.latency.is_empty())
        .collect();
    let notes = without_histogram(a);
    let height = HEIGHT * charts.len() as u64 + 20 * notes.len() as u64 + 20;
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{height}\" font-family=\"sans-serif\" font-size=\"11\">\n"
    );
    for (k, (title, e)) in charts.iter().enumerate() {
        chart(&mut out, title, &a.file, e, HEIGHT * k as u64);
    }
    let below = HEIGHT * charts.len() as u64;
    for (i, why) in notes.iter().enumerate() {
        let _ = writeln!(out, "<text x=\"10\" y=\"{}\">No histogram: {}.</text>", below + 16 + 20 * i as u64, escape(why));
    }
    out.push_str("</svg>\n");
    out
}
