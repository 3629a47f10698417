//! Compiles the event and metric tables under `data/` into static Rust tables, so
//! that nothing is parsed at start-up. A malformed table fails the build with the
//! parser's message (file, line and column).

use std::path::Path;

use databake::Bake;
use pmukit_core::metric::MetricExpr;
use pmukit_core::table::{EventTable, MetricTable};

const FAMILIES: &[&str] = &["arm11", "sparc-t4", "sparc-t4-dram", "niagara", "sparc-kt", "montecito"];

fn main() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data");
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    let ctx = databake::CrateEnv::default();
    for family in FAMILIES {
        let events_path = data.join(family).join("events.toml");
        let metrics_path = data.join(family).join("metrics.toml");
        println!("cargo::rerun-if-changed={}", events_path.display());
        println!("cargo::rerun-if-changed={}", metrics_path.display());
        let events = EventTable::from_toml(&read(&events_path), &events_path.display().to_string()).unwrap_or_else(|e| panic!("{e}"));
        // A family without derived metrics has no metrics file.
        let metrics = if metrics_path.exists() {
            MetricTable::from_toml(&read(&metrics_path), &metrics_path.display().to_string()).unwrap_or_else(|e| panic!("{e}"))
        } else {
            MetricTable { family: events.family.clone(), source: "".into(), metrics: Vec::new().into() }
        };
        for m in metrics.metrics.iter() {
            if let Err(e) = MetricExpr::parse(&m.expr) {
                panic!("{}: metric {}: {e}", metrics_path.display(), m.name);
            }
        }
        let code = format!(
            "pub static EVENTS: pmukit_core::table::EventTable = {};\npub static METRICS: pmukit_core::table::MetricTable = {};\n",
            events.bake(&ctx),
            metrics.bake(&ctx)
        );
        let file = Path::new(&out).join(format!("{}.rs", family.replace('-', "_")));
        std::fs::write(&file, code).unwrap_or_else(|e| panic!("cannot write {}: {e}", file.display()));
    }
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}
