//! `pmu report`: read a recording (`pmu record`, docs/record.md) and print what
//! `pmukit_sim::record::report` makes of it, as text, JSON or an SVG drawing.

use std::io::Read;

use clap::Args;
use pmukit_sim::record::report::analyse;
use pmukit_sim::record::Recording;

use crate::failure::{runtime, usage, Failure};
use crate::output::Out;
use crate::record::DEFAULT_FILE;
use crate::{parse_usize, JsonOpt};

#[derive(Args)]
pub struct ReportArgs {
    /// The recording to read; `-` reads standard input.
    #[arg(default_value = DEFAULT_FILE)]
    file: String,
    /// Rows of each list of hot addresses and branches.
    #[arg(long, value_name = "N", default_value_t = 10, value_parser = parse_usize)]
    top: usize,
    /// Also draw the latency histograms as an SVG file.
    #[arg(long, value_name = "FILE")]
    svg: Option<String>,
    #[command(flatten)]
    pub json: JsonOpt,
}

/// `pmu report`.
pub fn run(args: &ReportArgs, out: &Out) -> Result<(), Failure> {
    let text = read(&args.file)?;
    let name = if args.file == "-" { "standard input" } else { args.file.as_str() };
    let recording = parse(&text, name)?;
    let analysis = analyse(&recording, name, args.top);
    if let Some(path) = &args.svg {
        std::fs::write(path, crate::output::report::svg(&analysis)).map_err(|e| runtime(format!("cannot write {path}: {e}")))?;
    }
    if out.is_json() {
        return out.json(&serde_json::to_value(&analysis).unwrap_or_default());
    }
    out.text(&crate::output::report::text(&analysis))
}

fn read(path: &str) -> Result<String, Failure> {
    let mut text = String::new();
    let read =
        if path == "-" { std::io::stdin().read_to_string(&mut text).map(|_| ()) } else { std::fs::read_to_string(path).map(|t| text = t) };
    read.map_err(|e| runtime(format!("cannot read the recording {path}: {e}")))?;
    Ok(text)
}

/// The recording in `text` (`Recording::read`), its errors naming `origin`.
fn parse(text: &str, origin: &str) -> Result<Recording, Failure> {
    Recording::read(text).map_err(|e| usage(format!("{origin}: {e}")))
}
