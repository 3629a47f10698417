//! Advances a PMU model through an event stream, fast.
//!
//! A model exposes its counters as "virtual counters": a value that grows by a fixed
//! amount per cycle of a span and overflows after a known headroom. The engine skips
//! whole iterations of a block while no counter can overflow, and otherwise steps to
//! the exact cycle of the next overflow, so an interrupt stops execution where the
//! hardware would raise it.

use crate::stream::{Cursor, Span};

/// The view of a PMU model that the engine drives.
pub trait Counting {
    /// Number of virtual counters.
    fn counters(&self) -> usize;
    /// Increment of counter `i` in each cycle of `span` (0 when it does not count).
    fn rate(&self, i: usize, span: &Span) -> u64;
    /// How much counter `i` can grow before it overflows; at least 1.
    fn headroom(&self, i: usize) -> u64;
    /// Add `n` to counter `i`; `n` exceeds the headroom by less than one cycle's
    /// rate, so at most one overflow happens. Returns whether execution must stop:
    /// the overflow raised an interrupt, or (a counter without one) software must read
    /// it before it can wrap again.
    fn add(&mut self, i: usize, n: u64) -> bool;
    /// `cycles` cycles of `span` have executed (for outputs beyond the counters).
    fn executed(&mut self, _span: &Span, _cycles: u64) {}
}

/// Why a run stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// The cycle budget was used up.
    Budget,
    /// An overflow raised an interrupt, or wrapped a counter software must read.
    Overflow,
    /// The stream ended.
    EndOfStream,
}

/// Run `model` over the stream at `cursor` for at most `budget` cycles.
/// Returns the cycles executed and why it stopped.
pub fn run(model: &mut dyn Counting, cursor: &mut Cursor, budget: u64) -> (u64, Exit) {
    let mut done = 0u64;
    // Each counter's rate in the current span, computed once per step.
    let mut rates = vec![0u64; model.counters()];
    while done < budget {
        if cursor.at_iteration_start() {
            let skipped = skip_iterations(model, cursor, budget - done);
            if skipped > 0 {
                done += skipped;
                continue;
            }
        }
        let Some(block) = cursor.block.as_ref() else {
            return (done, Exit::EndOfStream);
        };
        let span = block.body[cursor.span];
        let mut m = (span.cycles - cursor.offset).min(budget - done);
        for (i, r) in rates.iter_mut().enumerate() {
            *r = model.rate(i, &span);
            if *r > 0 {
                m = m.min(model.headroom(i).div_ceil(*r));
            }
        }
        let mut stop = false;
        if m > 0 {
            for (i, &r) in rates.iter().enumerate() {
                if r > 0 {
                    stop |= model.add(i, r * m);
                }
            }
            model.executed(&span, m);
        }
        advance(cursor, m);
        done += m;
        if stop {
            return (done, Exit::Overflow);
        }
    }
    (done, Exit::Budget)
}

/// Skip as many whole iterations as fit the budget without any counter overflowing.
fn skip_iterations(model: &mut dyn Counting, cursor: &mut Cursor, budget: u64) -> u64 {
    let Some(block) = cursor.block.as_ref() else { return 0 };
    let per_iteration = block.cycles_per_iteration();
    let mut k = (block.repeat - cursor.iteration).min(budget / per_iteration);
    if k == 0 {
        return 0;
    }
    let n = model.counters();
    let mut growth = vec![0u64; n];
    for (i, g) in growth.iter_mut().enumerate() {
        *g = block.body.iter().fold(0u64, |acc, s| acc.saturating_add(model.rate(i, s).saturating_mul(s.cycles)));
        // Strictly below the headroom: the overflow itself is stepped exactly.
        if let Some(fit) = (model.headroom(i) - 1).checked_div(*g) {
            k = k.min(fit);
        }
    }
    if k == 0 {
        return 0;
    }
    for (i, g) in growth.iter().enumerate() {
        if *g > 0 {
            model.add(i, g * k);
        }
    }
    for s in &block.body {
        model.executed(s, s.cycles * k);
    }
    cursor.iteration += k;
    if cursor.iteration == block.repeat {
        cursor.next_block();
    }
    k * per_iteration
}

/// Move the cursor `m` cycles forward within the current span.
fn advance(cursor: &mut Cursor, m: u64) {
    let Some(block) = cursor.block.as_ref() else { return };
    cursor.offset += m;
    if cursor.offset >= block.body[cursor.span].cycles {
        cursor.offset = 0;
        cursor.span += 1;
        if cursor.span == block.body.len() {
            cursor.span = 0;
            cursor.iteration += 1;
            if cursor.iteration == block.repeat {
                cursor.next_block();
            }
        }
    }
}
