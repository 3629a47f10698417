//! Itanium 2 "Montecito" (dual-core Itanium 2) performance monitoring: chapter 3
//! (registers, restrictions) and chapter 4 (events) of the "Dual-Core Update to the
//! Intel Itanium 2 Processor Reference Manual".

pub mod capture;
pub mod capture_events;
pub mod ear;
pub mod etb;
pub mod pal;
pub mod placement;
pub mod pmu;
pub mod qualification;
pub mod qualify;
pub mod registers;
pub mod tags;
