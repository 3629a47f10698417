//! `pmu export perf-json` and `pmu import perf-json`: a PMU's tables in Linux perf's
//! pmu-events layout, and such a directory read back into an events file
//! (`pmukit_arch::perf_json`).

use std::path::{Path, PathBuf};

use clap::Subcommand;
use pmukit_arch::{perf_json, Catalog};
use serde_json::json;

use crate::failure::{runtime, usage, Failure};
use crate::output::Out;
use crate::{JsonOpt, TableOpts};

#[derive(Subcommand)]
pub enum ExportFormat {
    /// perf's pmu-events JSON: DIR/ARCH/mapfile.csv and DIR/ARCH/VENDOR/PMU/*.json (a
    /// file per topic and metrics.json), ready to copy into
    /// tools/perf/pmu-events/arch/ (docs/perf.md).
    PerfJson {
        /// The PMU whose events and metrics to write.
        pmu: String,
        /// The directory to write into (created if missing; files are replaced).
        dir: String,
        #[command(flatten)]
        table: TableOpts,
        #[command(flatten)]
        json: JsonOpt,
    },
}

#[derive(Subcommand)]
pub enum ImportFormat {
    /// Read a pmu-events model directory (its *.json; ArchStdEvent entries are
    /// completed from the *.json of the two directories above it) into an events file
    /// for PMU's family, usable with --events-file.
    PerfJson {
        /// The model directory, e.g. tools/perf/pmu-events/arch/arm64/arm/cortex-a53.
        dir: String,
        /// The PMU whose family and encoding the events are for.
        #[arg(long, value_name = "PMU", required = true)]
        pmu: String,
        /// Write the events file here instead of standard output.
        #[arg(short = 'o', long = "output", value_name = "FILE")]
        output: Option<String>,
        #[command(flatten)]
        json: JsonOpt,
    },
}

pub fn export(catalog: &Catalog, format: &ExportFormat, out: &Out) -> Result<(), Failure> {
    let ExportFormat::PerfJson { pmu, dir, .. } = format;
    let pmu = catalog.pmu(pmu)?;
    let (files, notes) = perf_json::export(catalog, pmu);
    let root = Path::new(dir);
    for f in &files {
        let path = root.join(&f.path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| runtime(format!("cannot create {}: {e}", parent.display())))?;
        }
        std::fs::write(&path, &f.text).map_err(|e| runtime(format!("cannot write {}: {e}", path.display())))?;
    }
    if !out.is_json() {
        for n in &notes {
            eprintln!("pmu: note: {n}");
        }
    }
    let paths: Vec<String> = files.iter().map(|f| root.join(&f.path).display().to_string()).collect();
    if out.is_json() {
        return out.json(&json!({"pmu": pmu.name(), "files": paths, "notes": notes}));
    }
    out.text(&format!("{}: wrote {} files\n{}\n", pmu.name(), paths.len(), paths.join("\n")))
}

/// The *.json files directly in `dir`, sorted, as (path, text).
fn json_files(dir: &Path) -> Result<Vec<(String, String)>, Failure> {
    let entries = std::fs::read_dir(dir).map_err(|e| runtime(format!("cannot read {}: {e}", dir.display())))?;
    let mut paths: Vec<PathBuf> =
        entries.filter_map(Result::ok).map(|e| e.path()).filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "json")).collect();
    paths.sort();
    paths
        .into_iter()
        .map(|p| {
            let text = std::fs::read_to_string(&p).map_err(|e| runtime(format!("cannot read {}: {e}", p.display())))?;
            Ok((p.display().to_string(), text))
        })
        .collect()
}

pub fn import(catalog: &Catalog, format: &ImportFormat, out: &Out) -> Result<(), Failure> {
    let ImportFormat::PerfJson { dir, pmu, output, .. } = format;
    let pmu = catalog.pmu(pmu)?;
    let dir = Path::new(dir);
    let files = json_files(dir)?;
    if files.is_empty() {
        return Err(usage(format!(
            "{} holds no .json files: give a pmu-events model directory such as arch/arm64/arm/cortex-a53",
            dir.display()
        )));
    }
    let mut standard = Vec::new();
    for up in [dir.parent(), dir.parent().and_then(Path::parent)].into_iter().flatten() {
        if up.as_os_str().is_empty() {
            continue;
        }
        standard.extend(json_files(up).unwrap_or_default());
    }
    let (table, notes) = perf_json::import(pmu, &files, &standard).map_err(usage)?;
    let text = toml::to_string(&table).map_err(|e| runtime(format!("cannot write the events file: {e}")))?;
    if !out.is_json() {
        for n in &notes {
            eprintln!("pmu: note: {n}");
        }
    }
    if let Some(path) = output {
        std::fs::write(path, &text).map_err(|e| runtime(format!("cannot write {path}: {e}")))?;
    }
    let umasks: usize = table.events.iter().map(|e| e.umasks.len()).sum();
    if out.is_json() {
        return out.json(&json!({"family": table.family, "events": table.events.len(), "umasks": umasks, "notes": notes, "toml": text}));
    }
    match output {
        Some(path) => out.text(&format!(
            "{}: {} events ({umasks} unit masks) for {} written to {path}\n",
            dir.display(),
            table.events.len(),
            table.family
        )),
        None => out.text(&text),
    }
}
