//! `pmu export perf-json` and `pmu import perf-json`: a PMU's tables in Linux perf's
//! pmu-events layout, and such a directory read back into an events file
//! (`pmukit_arch::perf_json`).

use std::path::{Path, PathBuf};

use clap::Subcommand;
use pmukit_arch::{perf_json, Catalog};
use serde_json::json;

use crate::failure::{runtime, usage, Failure};
use crate::outfile::Output;
use crate::output::{diag, Out};
use crate::{JsonOpt, TableOpts};
use pmukit_core::input::{self, io_message};

#[derive(Subcommand)]
pub enum ExportFormat {
    /// perf's pmu-events JSON: DIR/ARCH/mapfile.csv and DIR/ARCH/VENDOR/PMU/*.json (a
    /// file per topic and metrics.json), ready to copy into
    /// tools/perf/pmu-events/arch/ (docs/perf.md).
    PerfJson {
        /// The PMU whose events and metrics to write.
        #[arg(value_parser = crate::names::pmus(), hide_possible_values = true)]
        pmu: String,
        /// The directory to write into (created if missing; files already there are
        /// replaced, each whole, and listed as replaced). A link inside it is refused.
        dir: PathBuf,
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
        dir: PathBuf,
        /// The PMU whose family and encoding the events are for.
        #[arg(long, value_name = "PMU", required = true, value_parser = crate::names::pmus(), hide_possible_values = true)]
        pmu: String,
        /// Write the events file here instead of standard output (made before the
        /// import, replaced whole after it).
        #[arg(short = 'o', long = "output", value_name = "FILE")]
        output: Option<PathBuf>,
        #[command(flatten)]
        json: JsonOpt,
    },
}

pub fn export(catalog: &Catalog, format: &ExportFormat, out: &Out) -> Result<(), Failure> {
    let ExportFormat::PerfJson { pmu, dir, .. } = format;
    let pmu = catalog.pmu(pmu)?;
    let (files, notes) = perf_json::export(catalog, pmu);
    let root = dir.as_path();
    if root.as_os_str().is_empty() {
        return Err(usage("the export directory is empty: give a directory to write into (created if missing)"));
    }
    if root.exists() && !root.is_dir() {
        return Err(usage(format!("{} is not a directory: give a directory to write into", root.display())));
    }
    // Everything is checked before anything is written: no link below the root is
    // followed (one planted there would send a write elsewhere), and each file's
    // directories are directories.
    let mut replaced = Vec::new();
    for f in &files {
        let mut at = root.to_path_buf();
        let parts: Vec<&str> = f.path.split('/').collect();
        for (i, part) in parts.iter().enumerate() {
            at.push(part);
            let Ok(meta) = at.symlink_metadata() else { break };
            let last = i + 1 == parts.len();
            if meta.file_type().is_symlink() {
                return Err(usage(format!("{} is a symbolic link: pmu export writes only files and directories it makes itself; remove it or give another directory", at.display())));
            }
            if !last && !meta.is_dir() {
                return Err(usage(format!("{} is not a directory, but the export needs it as one", at.display())));
            }
            if last {
                if !meta.is_file() {
                    return Err(usage(format!("{} is not a regular file: the export would replace it", at.display())));
                }
                replaced.push(at.display().to_string());
            }
        }
    }
    for f in &files {
        let path = root.join(&f.path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| runtime(format!("cannot create {}: {}", parent.display(), io_message(&e))))?;
        }
        let mut file = Output::create(&path, "an export file")?;
        file.write_all(f.text.as_bytes())?;
        file.commit()?;
    }
    if !out.is_json() {
        for n in &notes {
            diag(&format!("pmu: note: {n}"));
        }
    }
    let paths: Vec<String> = files.iter().map(|f| root.join(&f.path).display().to_string()).collect();
    if out.is_json() {
        return out.json(&json!({"pmu": pmu.name(), "files": paths, "replaced": replaced, "notes": notes}));
    }
    let listed: Vec<String> = paths.iter().map(|p| if replaced.contains(p) { format!("{p} (replaced)") } else { p.clone() }).collect();
    let again = if replaced.is_empty() { String::new() } else { format!(", {} of them replacing files already there", replaced.len()) };
    out.text(&format!("{}: wrote {} files{again}\n{}\n", pmu.name(), paths.len(), listed.join("\n")))
}

/// The *.json files directly in `dir` (directories so named aside), sorted, as
/// (path, text). Each is read whole within its size limit; one that cannot be read
/// (exit 1), or is not a regular file or not text (exit 2), is refused: its events
/// would otherwise be lost without a word.
fn json_files(dir: &Path) -> Result<Vec<(String, String)>, Failure> {
    let entries = std::fs::read_dir(dir).map_err(|e| runtime(format!("cannot read {}: {}", dir.display(), io_message(&e))))?;
    let mut paths: Vec<PathBuf> =
        entries.filter_map(Result::ok).map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "json")).collect();
    paths.sort();
    let mut files = Vec::new();
    for p in paths {
        let meta = std::fs::metadata(&p).map_err(|e| runtime(format!("cannot read {}: {}", p.display(), io_message(&e))))?;
        if meta.is_dir() {
            continue;
        }
        if !meta.is_file() {
            return Err(usage(format!("{} is not a regular file (a FIFO or a device): refused", p.display())));
        }
        files.push((p.display().to_string(), input::read_file(&p, input::PMU_EVENTS_JSON)?));
    }
    Ok(files)
}

pub fn import(catalog: &Catalog, format: &ImportFormat, out: &Out) -> Result<(), Failure> {
    let ImportFormat::PerfJson { dir, pmu, output, .. } = format;
    let pmu = catalog.pmu(pmu)?;
    // The events file is made (and so checked) before the import.
    let output = output.as_deref().filter(|p| p.as_os_str() != "-");
    let mut written = output.map(|p| Output::create(p, "-o")).transpose()?;
    let dir = dir.as_path();
    let files = json_files(dir)?;
    if files.is_empty() {
        return Err(usage(format!(
            "{} holds no .json files: give a pmu-events model directory such as arch/arm64/arm/cortex-a53",
            dir.display()
        )));
    }
    let mut standard = Vec::new();
    // The directories above hold the architecture's standard events; one that cannot
    // be listed has none to give, but a file in one that cannot be read is refused.
    for up in [dir.parent(), dir.parent().and_then(Path::parent)].into_iter().flatten() {
        if up.as_os_str().is_empty() || std::fs::read_dir(up).is_err() {
            continue;
        }
        standard.extend(json_files(up)?);
    }
    // pmukit's own export carries its whole table beside perf's files.
    let companion_path = dir.join(perf_json::COMPANION);
    let companion = match std::fs::metadata(&companion_path) {
        Ok(meta) if meta.is_file() => Some((companion_path.display().to_string(), input::read_file(&companion_path, input::EVENTS_FILE)?)),
        _ => None,
    };
    let companion = companion.as_ref().map(|(origin, text)| (origin.as_str(), text.as_str()));
    let (table, notes) = perf_json::import(pmu, &files, &standard, companion).map_err(usage)?;
    let text = toml::to_string(&table).map_err(|e| runtime(format!("cannot write the events file: {e}")))?;
    if let Some(file) = &mut written {
        file.write_all(text.as_bytes())?;
    }
    if let Some(file) = written {
        file.commit()?;
    }
    if !out.is_json() {
        for n in &notes {
            diag(&format!("pmu: note: {n}"));
        }
    }
    let umasks: usize = table.events.iter().map(|e| e.umasks.len()).sum();
    if out.is_json() {
        return out.json(&json!({"family": table.family, "events": table.events.len(), "umasks": umasks, "notes": notes, "toml": text}));
    }
    match output {
        Some(path) => out.text(&format!(
            "{}: {} events ({umasks} unit masks) for {} written to {}\n",
            dir.display(),
            table.events.len(),
            table.family,
            path.display()
        )),
        None => out.text(&text),
    }
}
