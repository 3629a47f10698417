//! Event-string handling. The baseline tokenises only (`parse`); `resolve` adds the
//! table lookup and every check, so its ratio to the baseline is the cost of validation.
//!
//! Run: `cargo bench -p pmukit-core --bench event_string`

use std::borrow::Cow;

use pmukit_core::event_string::{parse, resolve};
use pmukit_core::pmu::{CounterDesc, GenericMap, ModifierDef, ModifierKind, Pmu, PmuDesc};
use pmukit_core::table::EventTable;

fn main() {
    divan::main();
}

static DESC: PmuDesc = PmuDesc {
    name: "bench",
    family: "bench",
    model: "bench",
    description: "",
    counters: &[CounterDesc { name: "C0", width: 32, description: "" }],
    general_counters: &["C0"],
    modifiers: &[ModifierDef { name: "u", kind: ModifierKind::Flag, description: "" }],
    event_modifiers: &[],
    max_code: 0xFFFF,
    max_umask: 0xFF,
    raw_umask_bits: 0,
    raw_outside_table: None,
    shared_counters: false,
    generic: GenericMap { events: &[], source: "" },
    linux_pmu: None,
};

/// A table of 200 events, the size of the largest family.
fn pmu() -> Pmu {
    let mut text = String::from("family = \"bench\"\n");
    for i in 0..200 {
        text.push_str(&format!("[[event]]\nname = \"EVENT_NUMBER_{i}\"\ncode = {i}\ndescription = \"event {i}\"\n"));
        text.push_str("umasks = [ { name = \"ALL\", value = 0 }, { name = \"SOME\", value = 1 } ]\n");
    }
    Pmu { desc: &DESC, table: Cow::Owned(EventTable::from_toml(&text, "bench").unwrap()) }
}

const INPUT: &str = "bench::event_number_150.SOME:u";

#[divan::bench]
fn baseline_parse() -> usize {
    parse(divan::black_box(INPUT)).unwrap().umasks.len()
}

#[divan::bench]
fn resolve_against_200_events(b: divan::Bencher) {
    let pmus = vec![pmu()];
    b.bench(|| resolve(divan::black_box(INPUT), &pmus, "bench").unwrap().code);
}
