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
/// The vector is kept between recordings, and operations forgotten from its front
/// are removed in bulk: a period's search forgets often, and shifting the rest down
/// each time cost more than recording.
#[derive(Debug, Clone)]
pub(crate) struct Log<T> {
    ops: std::cell::RefCell<Vec<T>>,
    /// Operations at the front already forgotten.
    base: usize,
    on: bool,
}

impl<T> Default for Log<T> {
    fn default() -> Self {
        Log { ops: std::cell::RefCell::new(Vec::new()), base: 0, on: false }
    }
}

/// The operations taken out of a log while they are replayed (so that replaying
/// records nothing).
pub(crate) struct Taken<T> {
    ops: Vec<T>,
    base: usize,
    on: bool,
}

impl<T> Taken<T> {
    /// The recorded operations `range`.
    pub fn ops(&self, range: std::ops::Range<usize>) -> &[T] {
        &self.ops[self.base + range.start..self.base + range.end]
    }
}

impl<T> Log<T> {
    /// Records an operation, when recording.
    #[inline]
    pub fn note(&self, op: impl FnOnce() -> T) {
        if self.on {
            self.ops.borrow_mut().push(op());
        }
    }

    /// Starts or stops recording; stopping forgets everything.
    pub fn record(&mut self, on: bool) {
        if !on {
            self.ops.get_mut().clear();
            self.base = 0;
        }
        self.on = on;
    }

    /// Whether any recorded operation of `range` satisfies `f`.
    pub fn any(&self, range: std::ops::Range<usize>, f: impl Fn(&T) -> bool) -> bool {
        self.ops.borrow()[self.base + range.start..self.base + range.end].iter().any(f)
    }

    pub fn recorded(&self) -> usize {
        self.ops.borrow().len() - self.base
    }

    pub fn forget(&mut self, n: usize) {
        let ops = self.ops.get_mut();
        self.base = (self.base + n).min(ops.len());
        if self.base > 4096 && self.base > ops.len() / 2 {
            ops.drain(..self.base);
            self.base = 0;
        }
    }

    pub fn take(&mut self) -> Taken<T> {
        let on = std::mem::replace(&mut self.on, false);
        Taken { ops: std::mem::take(self.ops.get_mut()), base: self.base, on }
    }

    pub fn put_back(&mut self, taken: Taken<T>) {
        self.on = taken.on;
        *self.ops.get_mut() = taken.ops;
    }
}
