//! Counting drivers: they program a PMU model only through its register interface,
//! exactly as a kernel driver programs the hardware.

pub mod arm11;

use pmukit_arch::EncodedSet;

use crate::stream::Cursor;

pub trait Driver {
    /// Program an encoded set of events and start counting from zero.
    fn start(&mut self, set: &EncodedSet);
    /// Let the machine run `cycles` cycles of the stream, servicing overflow
    /// interrupts; returns the cycles run (fewer only if the stream ended).
    fn run(&mut self, cursor: &mut Cursor, cycles: u64) -> u64;
    /// Stop counting and return each event's exact count since `start`, in set order.
    fn stop(&mut self) -> Vec<u64>;
    /// Overflow interrupts serviced so far.
    fn interrupts(&self) -> u64;
    /// What the model reported as unpredictable.
    fn notes(&self) -> Vec<String>;
}
