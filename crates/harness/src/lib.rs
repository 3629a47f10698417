//! Fuzz harnesses: one function per input surface of pmukit, each taking arbitrary
//! bytes and panicking only when pmukit is wrong (a panic inside pmukit, or a broken
//! property such as a refused register write that changed the model).
//!
//! The cargo-fuzz targets in `fuzz/` call these functions under libFuzzer; the smoke
//! test in `tests/smoke.rs` calls them on stable Rust in CI, over the committed corpora
//! and a few thousand generated inputs each, so a regression fails CI without a
//! nightly toolchain. docs/ROBUSTNESS.md records the fuzzing runs.

mod files;
mod live;
mod models;
mod strings;

pub use files::{elf_program, events_file, guest_code, machine_config, mmustat, perf_json, perf_stat, recording, sysfs, trace};
pub use live::live_events;
pub use models::{arm11_model, hypercalls, montecito_model, t4_dram_model, t4_model};
pub use strings::{describe, event_strings, metric_expressions, qualify, schedule};

/// A harness: arbitrary bytes in, a panic only when pmukit is wrong.
pub type Harness = fn(&[u8]);

/// Every harness by the name of its fuzz target (`fuzz/fuzz_targets/NAME.rs`) and
/// corpus folder (`fuzz/corpus/NAME`).
pub const TARGETS: &[(&str, Harness)] = &[
    ("event_strings", event_strings),
    ("describe", describe),
    ("metric_expressions", metric_expressions),
    ("schedule", schedule),
    ("qualify", qualify),
    ("events_file", events_file),
    ("machine_config", machine_config),
    ("trace", trace),
    ("elf_program", elf_program),
    ("guest_code", guest_code),
    ("mmustat", mmustat),
    ("recording", recording),
    ("perf_stat", perf_stat),
    ("perf_json", perf_json),
    ("sysfs", sysfs),
    ("live_events", live_events),
    ("arm11_model", arm11_model),
    ("t4_model", t4_model),
    ("t4_dram_model", t4_dram_model),
    ("hypercalls", hypercalls),
    ("montecito_model", montecito_model),
];
