//! `pmu report`: read a recording (`pmu record`, docs/record.md) and print what
//! `pmukit_sim::record::report` makes of it, as text, JSON or an SVG drawing. The
//! recording is decoded as it is read: memory does not grow with its samples.

use std::io::{Read, Write};
use std::path::PathBuf;

use clap::Args;
use pmukit_core::input::io_message;
use pmukit_sim::record::report::Analyser;
use pmukit_sim::record::{self, ReadError};

use crate::failure::{runtime, usage, Failure};
use crate::outfile::Output;
use crate::output::Out;
use crate::record::DEFAULT_FILE;
use crate::{parse_usize, JsonOpt};

#[derive(Args)]
pub struct ReportArgs {
    /// The recording to read; `-` reads standard input.
    #[arg(default_value = DEFAULT_FILE)]
    file: PathBuf,
    /// Rows of each list of hot addresses and branches.
    #[arg(long, value_name = "N", default_value_t = 10, value_parser = parse_usize)]
    top: usize,
    /// Also draw the latency histograms as an SVG file (`-` writes the drawing to
    /// standard output instead of the report).
    #[arg(long, value_name = "FILE")]
    svg: Option<PathBuf>,
    #[command(flatten)]
    pub json: JsonOpt,
}

/// `pmu report`.
pub fn run(args: &ReportArgs, out: &Out) -> Result<(), Failure> {
    let stdin = args.file.as_os_str() == "-";
    let name = if stdin { "standard input".to_string() } else { args.file.display().to_string() };
    // The drawing's file is made (and so checked) before the recording is read.
    let mut svg = args.svg.as_deref().map(|p| Output::create(p, "--svg")).transpose()?;
    let svg_to_stdout = svg.as_ref().is_some_and(Output::is_stdout);
    // The recording is read twice (its members may come in any order): standard input
    // is kept in an unnamed temporary file first, within the size a recording may have.
    let mut input = if stdin {
        // A recording is a JSON object: input that does not start as one is refused
        // before it is kept.
        let mut first = [0u8; 1];
        let mut lock = std::io::stdin().lock();
        loop {
            match lock.read(&mut first) {
                Ok(1) if first[0].is_ascii_whitespace() => continue,
                Ok(1) if first[0] == b'{' => break,
                Ok(0) => return Err(usage(format!("{name}: {}", ReadError::NotJson("empty input".to_string())))),
                Ok(_) => {
                    return Err(usage(format!(
                        "{name}: {}",
                        ReadError::NotJson(format!("it starts with byte {:#04x}, not a JSON object's {{", first[0]))
                    )))
                }
                Err(e) => return Err(runtime(format!("cannot read the recording {name}: {}", io_message(&e)))),
            }
        }
        let mut spool = tempfile::tempfile().map_err(|e| runtime(format!("cannot keep standard input: {}", io_message(&e))))?;
        let limit = pmukit_core::input::RECORDING;
        spool.write_all(b"{").map_err(|e| runtime(format!("cannot keep standard input: {}", io_message(&e))))?;
        let copied = 1 + std::io::copy(&mut lock.take(limit.bytes), &mut spool)
            .map_err(|e| runtime(format!("cannot read the recording {name}: {}", io_message(&e))))?;
        if copied > limit.bytes {
            return Err(usage(format!(
                "{name}: {}",
                ReadError::TooLarge(pmukit_core::input::InputError::TooLarge {
                    origin: "the recording".into(),
                    what: limit.what,
                    bytes: limit.bytes
                })
            )));
        }
        spool
    } else {
        let cannot = |e: std::io::Error| runtime(format!("cannot read the recording {name}: {}", io_message(&e)));
        let file = std::fs::File::open(&args.file).map_err(cannot)?;
        let meta = file.metadata().map_err(cannot)?;
        if !meta.is_file() {
            return Err(runtime(format!(
                "cannot read the recording {name}: it is not a regular file (give a recording, or - for standard input)"
            )));
        }
        file
    };
    let mut analyser: Option<Analyser> = None;
    let tail = record::read(&mut input, &mut |head, sample| analyser.get_or_insert_with(|| Analyser::new(head)).add(&sample))
        .map_err(|e: ReadError| if e.is_unreadable() { runtime(format!("{name}: {e}")) } else { usage(format!("{name}: {e}")) })?;
    let analysis = analyser.unwrap_or_else(|| Analyser::new(&tail)).finish(&tail, &name, args.top);
    if let Some(svg) = &mut svg {
        svg.write_all(crate::output::chart::svg(&analysis).as_bytes())?;
    }
    if let Some(svg) = svg {
        svg.commit()?;
    }
    if svg_to_stdout {
        return Ok(());
    }
    if out.is_json() {
        return out.json(&serde_json::to_value(&analysis).unwrap_or_default());
    }
    out.text(&crate::output::report::text(&analysis))
}
