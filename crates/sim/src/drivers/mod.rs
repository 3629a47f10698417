//! Counting drivers: they program a PMU model only through its register interface,
//! exactly as a kernel driver programs the hardware.

pub mod arm11;
pub mod kt;
pub mod montecito;
pub mod niagara;
pub mod t4;

use pmukit_arch::EncodedSet;
use pmukit_core::report::Unit;

use crate::stream::{Cursor, ARM11, EVERY, MONTECITO, SPARC};

/// One event's exact counts since `start`, one for each unit that counted it (an index
/// into [`Driver::units`]); `None` when the machine let no unit count it (the driver's
/// notes say why).
pub type Reading = Option<Vec<(usize, u64)>>;

/// Each reading's total over its units.
pub fn totals(readings: &[Reading]) -> Vec<Option<u64>> {
    readings.iter().map(|r| r.as_ref().map(|units| units.iter().map(|&(_, n)| n).sum())).collect()
}

pub trait Driver {
    /// Program an encoded set of events of one of the machine's PMUs (`set.pmu`) and
    /// start counting it from zero.
    fn start(&mut self, set: &EncodedSet);
    /// The parts of the machine that count `pmu`'s events on their own: its hardware
    /// threads (strands, virtual CPUs), or shared units such as memory controllers.
    fn units(&self, pmu: &str) -> Vec<Unit>;
    /// Stop counting `pmu`'s set and return each event's reading, in set order.
    fn stop(&mut self, pmu: &str) -> Vec<Reading>;
    /// Overflow interrupts serviced so far.
    fn interrupts(&self) -> u64;
    /// What the model reported as unpredictable.
    fn notes(&self) -> Vec<String>;
}

/// A driver's machine running a stream of spans of family `F` (their signals' words).
pub trait Runs<const F: usize = EVERY>: Driver {
    /// Let the machine run `cycles` cycles of the stream, servicing overflow
    /// interrupts; returns the cycles run (fewer only if the stream ended).
    fn run(&mut self, cursor: &mut Cursor<F>, cycles: u64) -> u64;
}

/// A driver that runs a stream of any family's spans: whichever the run's machine
/// makes (every driver is one).
pub trait AnyRuns: Runs<ARM11> + Runs<SPARC> + Runs<MONTECITO> {}

impl<T: Runs<ARM11> + Runs<SPARC> + Runs<MONTECITO>> AnyRuns for T {}
