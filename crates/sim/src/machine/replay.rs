//! Structures the runner replays instead of comparing (`run.rs`): a core's caches and
//! TLBs record their operations, and a period found on the rest of the core is
//! performed on them again elsewhere in the stream, operation by operation, each
//! checked to return what it returned in the period, so that a skip is exact without
//! their whole state having to repeat. Comparing it would need a stream to move a
//! multiple of every structure's set span between two equal states (a megabyte for
//! Montecito's L3), and a large TLB or cache to have forgotten everything older than
//! the loop before its state repeats.

use super::sets::Journal;
use super::Moves;

/// A structure whose operations can be recorded and replayed.
pub trait Replayed {
    /// Starts (`on`) or stops recording its operations; stopping forgets them.
    fn record(&mut self, on: bool);
    /// How many operations are recorded.
    fn recorded(&self) -> usize;
    /// Forgets the first `n` recorded operations.
    fn forget(&mut self, n: usize);
    /// Performs the recorded operations `range` again, every line address moved by
    /// `to.line` and every page address by `to.page` (addresses they leave alone
    /// stay), checking that each returns what it returned then (any address it
    /// returns moved alike). When one returns something else, everything is undone
    /// and `None` returned; otherwise what undoes the replay.
    fn replay(&mut self, range: std::ops::Range<usize>, to: &Moves) -> Option<Undo>;
    /// Puts back what a replay changed.
    fn undo(&mut self, undo: Undo);
    /// Whether the replay that `undo` undoes left the structure as it found it.
    fn unchanged(&self, undo: &Undo) -> bool;
    /// Whether `to` moves an address of a recorded operation of `range`: otherwise
    /// every repetition performs the very same operations.
    fn moves(&self, range: std::ops::Range<usize>, to: &Moves) -> bool;
}

/// What a successful replay changed: the sets it touched, as they were.
#[derive(Debug)]
pub enum Undo {
    Lines(Journal<1>),
    Pages(Journal<2>),
}

/// A structure's recorded operations: a cell, since the queries that take `&self`
/// are recorded too, and a flag, so that not recording costs one test of a field.
#[derive(Debug, Clone)]
pub(crate) struct Log<T> {
    ops: std::cell::RefCell<Option<Vec<T>>>,
    on: bool,
}

impl<T> Default for Log<T> {
    fn default() -> Self {
        Log { ops: std::cell::RefCell::new(None), on: false }
    }
}

impl<T> Log<T> {
    /// Records an operation, when recording.
    #[inline]
    pub fn note(&self, op: impl FnOnce() -> T) {
        if self.on {
            if let Some(ops) = self.ops.borrow_mut().as_mut() {
                ops.push(op());
            }
        }
    }

    pub fn record(&mut self, on: bool) {
        let ops = self.ops.get_mut();
        match (on, ops.is_some()) {
            (true, false) => *ops = Some(Vec::new()),
            (false, true) => *ops = None,
            _ => {}
        }
        self.on = on;
    }

    /// Whether any recorded operation of `range` satisfies `f`.
    pub fn any(&self, range: std::ops::Range<usize>, f: impl Fn(&T) -> bool) -> bool {
        self.ops.borrow().as_ref().is_some_and(|ops| ops[range].iter().any(f))
    }

    pub fn recorded(&self) -> usize {
        self.ops.borrow().as_ref().map_or(0, Vec::len)
    }

    pub fn forget(&mut self, n: usize) {
        if let Some(ops) = self.ops.get_mut() {
            ops.drain(..n.min(ops.len()));
        }
    }

    /// The operations, taken out while they are replayed (so that replaying records
    /// nothing); `put_back` returns them.
    pub fn take(&mut self) -> Option<Vec<T>> {
        self.on = false;
        self.ops.get_mut().take()
    }

    pub fn put_back(&mut self, ops: Option<Vec<T>>) {
        self.on = ops.is_some();
        *self.ops.get_mut() = ops;
    }
}
