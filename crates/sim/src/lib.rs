//! pmukit-sim: the simulated machine.
//!
//! Programs (built-in workloads and traces, [`program`]) run on a machine model per chip
//! ([`machine`]), which computes the event stream ([`stream`]); register-level PMU
//! models count it; the counting backend programs the models through their register
//! interface, as a kernel driver would, and reports perf-style counts; [`record`] samples
//! Montecito's capture registers on counter overflow.

pub mod drivers;
pub mod engine;
pub mod hvcall;
pub mod machine;
pub mod models;
pub mod program;
pub mod record;
pub mod stat;
pub mod stream;
