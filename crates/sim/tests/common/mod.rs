//! Helpers shared by the machine tests.

// Each test file uses part of them.
#![allow(dead_code)]

pub mod t4;

use std::collections::HashMap;
use std::hash::Hash;

use pmukit_core::pmu::Pmu;
use pmukit_sim::stream::{Block, Span};

/// The cycles of a stream's first `cycles` cycles, grouped by `key` of their span:
/// what any per-cycle function of the spans counts is a sum over these groups.
pub fn profile<K: Hash + Eq, const F: usize>(
    blocks: impl IntoIterator<Item = Block<F>>,
    cycles: u64,
    key: impl Fn(&Span<F>) -> K,
    out: &mut HashMap<K, u64>,
) {
    let mut left = cycles;
    for block in blocks {
        let per = block.cycles_per_iteration();
        if left == 0 {
            break;
        }
        if per == 0 {
            continue;
        }
        let whole = block.repeat.min(left / per);
        for s in &block.body {
            *out.entry(key(s)).or_default() += s.cycles * whole;
        }
        left -= whole * per;
        if whole < block.repeat {
            for s in &block.body {
                let run = s.cycles.min(left);
                *out.entry(key(s)).or_default() += run;
                left -= run;
            }
        }
    }
}

/// Every event and unit-mask selection of `pmu`: its name, event code and unit mask
/// (an event without unit masks is one selection with mask 0).
pub fn selections(pmu: &Pmu) -> Vec<(String, u64, u64)> {
    let mut out = Vec::new();
    for e in pmu.events() {
        if e.umasks.is_empty() {
            out.push((e.name.to_string(), e.code, 0));
        }
        out.extend(e.umasks.iter().map(|u| (format!("{}.{}", e.name, u.name), e.code, u.value)));
    }
    out
}

/// Runs `model` over `spans`, each once, to the end of the stream; returns how many
/// times an overflow stopped the engine on the way (a DRAM counter's wrap, TD15).
pub fn run_to_end(model: &mut dyn pmukit_sim::engine::Counting, spans: Vec<Span>) -> usize {
    use pmukit_sim::engine::{self, Exit};
    let total: u64 = spans.iter().map(|s| s.cycles).sum();
    let mut cursor = pmukit_sim::stream::Cursor::new(Box::new(spans.into_iter().map(|s| Block { body: vec![s], repeat: 1 })));
    let (mut done, mut stops) = (0, 0);
    loop {
        let (ran, exit) = engine::run(model, &mut cursor, total + 1 - done);
        done += ran;
        match exit {
            Exit::Overflow => stops += 1,
            Exit::EndOfStream => break,
            Exit::Budget => unreachable!("the budget outlasts the stream"),
        }
    }
    assert_eq!(done, total);
    stops
}

/// A user-mode phase at 0x1_0000 of `iterations` of `body`, over `streams`.
pub fn phase(
    body: Vec<pmukit_sim::program::Op>,
    iterations: u64,
    streams: Vec<pmukit_sim::program::DataStream>,
) -> pmukit_sim::program::Phase {
    pmukit_sim::program::Phase {
        privilege: pmukit_sim::stream::Privilege::USER,
        context: 1,
        masks: Default::default(),
        entry: 0x1_0000,
        code_page: None,
        uncached_code: false,
        guest: false,
        body,
        iterations,
        streams,
        tables: Vec::new(),
        addresses: Vec::new(),
        dma: Vec::new(),
        watch: None,
        fp: Default::default(),
    }
}

/// A program of one thread running one `phase`.
pub fn program_of(phase: pmukit_sim::program::Phase) -> pmukit_sim::program::Program {
    pmukit_sim::program::Program { threads: vec![Box::new(std::iter::once(phase))], timer: None }
}

/// A program of one user-mode phase at 0x1_0000 of `iterations` of `body`, over one
/// data stream.
pub fn one_phase(
    body: Vec<pmukit_sim::program::Op>,
    iterations: u64,
    stream: pmukit_sim::program::DataStream,
) -> pmukit_sim::program::Program {
    program_of(phase(body, iterations, vec![stream]))
}
