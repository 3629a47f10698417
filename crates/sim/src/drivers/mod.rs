//! Counting drivers: they program a PMU model only through its register interface,
//! exactly as a kernel driver programs the hardware.

pub mod arm11;
pub mod kt;
pub mod montecito;
pub mod niagara;
pub mod t4;

use pmukit_arch::EncodedSet;

use crate::stream::Cursor;

pub trait Driver {
    /// Program an encoded set of events of one of the machine's PMUs (`set.pmu`) and
    /// start counting it from zero.
    fn start(&mut self, set: &EncodedSet);
    /// Let the machine run `cycles` cycles of the stream, servicing overflow
    /// interrupts; returns the cycles run (fewer only if the stream ended).
    fn run(&mut self, cursor: &mut Cursor, cycles: u64) -> u64;
    /// Stop counting `pmu`'s set and return each event's exact count since `start`,
    /// in set order; `None` for an event the machine would not let it count (the
    /// driver's notes say why).
    fn stop(&mut self, pmu: &str) -> Vec<Option<u64>>;
    /// Overflow interrupts serviced so far.
    fn interrupts(&self) -> u64;
    /// What the model reported as unpredictable.
    fn notes(&self) -> Vec<String>;
}
