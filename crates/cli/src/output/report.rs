//! `pmu report`'s text (80 columns, histograms drawn with block characters) and its
//! optional SVG drawing of the latency histograms.

use std::fmt::Write;

use pmukit_arch::montecito::etb::Traced;
use pmukit_core::report::thousands;

use pmukit_sim::record::report::{Analysis, EarReport, Hot, LevelHistogram};

/// The widest bar of a histogram, in characters.
const BAR: u64 = 40;

fn percent(part: u64, whole: u64) -> String {
    if whole == 0 {
        "-".to_string()
    } else {
        format!("{:.1}%", 100.0 * part as f64 / whole as f64)
    }
}

/// The hottest addresses, `what` each counts (samples, entries) and its share of `of`,
/// all of them, not only the rows shown.
fn hot(out: &mut String, title: &str, what: &str, rows: &[Hot], of: u64) {
    if rows.is_empty() {
        return;
    }
    let _ = writeln!(out, "  {title:<34} {what:>9} {:>7}", "%");
    for h in rows {
        let _ = writeln!(out, "    {:<32} {:>9} {:>7}", format!("{:#x}", h.address), thousands(h.samples), percent(h.samples, of));
    }
}

/// One histogram per level: a line per power-of-two bucket with its bar, scaled to the
/// fullest bucket of any level.
fn histograms(out: &mut String, levels: &[LevelHistogram]) {
    let most = levels.iter().flat_map(|l| &l.buckets).map(|b| b.samples).max().unwrap_or(0).max(1);
    let _ = writeln!(out, "  latency (cycles) by level");
    for l in levels {
        let _ = writeln!(out, "    {} (load-to-use {} cycles): {} samples", l.level, l.cycles, thousands(l.samples));
        for b in &l.buckets {
            let width = (b.samples * BAR).div_ceil(most) as usize;
            let _ = writeln!(out, "      {:>5}-{:<5} {:>9} {}", b.from, b.to - 1, thousands(b.samples), "█".repeat(width));
        }
    }
}

fn ear(out: &mut String, title: &str, e: &EarReport, lines: &str) {
    let _ = writeln!(out, "\n{title}, {} mode: {}", e.mode, e.captures);
    let _ = writeln!(out, "  {} samples, {} holding a capture", thousands(e.samples), thousands(e.valid));
    hot(out, lines, "samples", &e.instructions, e.valid);
    hot(out, "hot data (64-byte lines)", "samples", &e.data, e.valid);
    if !e.latency.is_empty() {
        histograms(out, &e.latency);
    }
    for (served, n) in &e.served {
        let _ = writeln!(out, "  served by {served:<24} {:>9} {:>7}", thousands(*n), percent(*n, e.valid));
    }
}

fn traced(t: &Traced) -> String {
    match t {
        Traced::Source { bundle, slot, mispredicted, flushed, target } => {
            let at = slot.map_or_else(|| format!("{bundle:#x} not taken"), |s| format!("{:#x}", bundle | u64::from(s)));
            let to = target.map_or_else(|| "?".to_string(), |t| format!("{t:#x}"));
            let how = match (mispredicted, flushed) {
                (true, true) => "  mispredicted, flushed",
                (true, false) => "  mispredicted",
                _ => "",
            };
            format!("{at} -> {to}{how}")
        }
        Traced::Target { bundle } => format!("(source overwritten) -> {bundle:#x}"),
    }
}

/// The report as text.
pub fn text(a: &Analysis) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{}:", a.file);
    let _ = writeln!(out, "  {} running '{}' (seed {}), {} thread(s), {} cycles", a.pmu, a.program, a.seed, a.threads, thousands(a.cycles));
    let _ = writeln!(out, "  {:<34} {:>14} {:>9}  period {}", "event", "counted", "samples", thousands(a.period));
    for e in &a.events {
        let _ = writeln!(out, "  {:<34} {:>14} {:>9}", e.name, thousands(e.count), thousands(e.samples));
    }
    if let Some(d) = &a.dear {
        ear(&mut out, "Data EAR", d, "hot instructions (bundle + slot)");
    }
    if let Some(i) = &a.iear {
        ear(&mut out, "Instruction EAR", i, "hot instruction lines (32 bytes)");
    }
    if let Some(b) = &a.branches {
        let _ = writeln!(out, "\nExecution trace buffer: {} samples", thousands(b.samples));
        if !b.branches.is_empty() {
            let _ = writeln!(out, "  {:<24} {:>9} {:>9} {:>12}", "branch bundle", "captured", "taken", "mispredicted");
            for h in &b.branches {
                let _ = writeln!(
                    out,
                    "    {:<22} {:>9} {:>9} {:>12}",
                    format!("{:#x}", h.bundle),
                    thousands(h.captured),
                    percent(h.taken, h.captured),
                    percent(h.mispredicted, h.captured)
                );
            }
        }
        let _ = writeln!(out, "  the last sample's trace, oldest first:");
        for t in &b.last {
            let _ = writeln!(out, "    {}", traced(t));
        }
    }
    if let Some(ip) = &a.ip_ear {
        let _ = writeln!(out, "\nIP-EAR: {} samples, {} retired-IP entries", thousands(ip.samples), thousands(ip.entries));
        hot(&mut out, "hot retired IPs (bundles)", "entries", &ip.ips, ip.entries);
        let _ = writeln!(out, "  the last sample's history, oldest first:");
        for r in &ip.last {
            let what = match (r.early_freeze, r.delay) {
                (true, Some(d)) => format!("  early freeze, {d} cycles of delay left"),
                _ => String::new(),
            };
            let flush = if r.flush { "  after a flush" } else { "" };
            let _ = writeln!(out, "    {:#x}  +{} cycles{flush}{what}", r.ip, r.cycles);
        }
    }
    out
}
