//! A cache's operations recorded and replayed (`machine::replay`).

use super::{Cache, Lookup, Victim};
use crate::machine::replay::{Replayed, Undo};
use crate::machine::Moves;

/// One operation on a cache and what it returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Logged {
    Access { addr: u64, write: bool, out: Lookup },
    Contains { addr: u64, out: bool },
    Dirty { addr: u64, out: bool },
    Fill { addr: u64, dirty: bool, out: Option<Victim> },
    Invalidate { addr: u64, out: Option<Victim> },
    Clean { addr: u64, out: u8 },
}

impl Logged {
    fn addr(&self) -> u64 {
        match *self {
            Logged::Access { addr, .. }
            | Logged::Contains { addr, .. }
            | Logged::Dirty { addr, .. }
            | Logged::Fill { addr, .. }
            | Logged::Invalidate { addr, .. }
            | Logged::Clean { addr, .. } => addr,
        }
    }
}

impl Replayed for Cache {
    fn record(&mut self, on: bool) {
        self.log.record(on);
    }

    fn recorded(&self) -> usize {
        self.log.recorded()
    }

    fn forget(&mut self, n: usize) {
        self.log.forget(n);
    }

    fn replay(&mut self, range: std::ops::Range<usize>, to: &Moves) -> Option<Undo> {
        let ops = self.log.take();
        let moved = |a: u64| (to.line)(a).unwrap_or(a);
        self.sets.begin();
        let mut same = true;
        // Victims are compared as far as the core tells them apart.
        let victims = self.victims;
        let named = |v: Option<Victim>| v.map(|v| victims.named(v));
        let lookup = |l: Lookup| Lookup { victim: named(l.victim), ..l };
        for op in ops.ops(range) {
            let addr = moved(op.addr());
            let victim = |v: Option<Victim>| named(v.map(|v| Victim { line: moved(v.line), ..v }));
            same = match *op {
                Logged::Access { write, out, .. } => lookup(self.access(addr, write)) == Lookup { victim: victim(out.victim), ..out },
                Logged::Contains { out, .. } => self.contains(addr) == out,
                Logged::Dirty { out, .. } => self.dirty(addr) == out,
                Logged::Fill { dirty, out, .. } => named(self.fill(addr, dirty)) == victim(out),
                Logged::Invalidate { out, .. } => named(self.invalidate(addr)) == victim(out),
                Logged::Clean { out, .. } => self.clean(addr) == out,
            };
            if !same {
                break;
            }
        }
        self.log.put_back(ops);
        let journal = Undo::Lines(self.sets.end());
        if same {
            Some(journal)
        } else {
            self.undo(journal);
            None
        }
    }

    fn undo(&mut self, undo: Undo) {
        self.last = None;
        if let Undo::Lines(journal) = undo {
            self.sets.undo(journal);
        }
    }

    fn unchanged(&self, undo: &Undo) -> bool {
        matches!(undo, Undo::Lines(journal) if self.sets.unchanged(journal))
    }

    fn moves(&self, range: std::ops::Range<usize>, to: &Moves) -> bool {
        self.log.any(range, |op| (to.line)(op.addr()).is_some())
    }
}
