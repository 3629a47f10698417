//! pmukit-sim: the simulated machine.
//!
//! Programs (built-in workloads and traces, [`program`]) run on a machine model per chip
//! ([`machine`]), which computes the event stream ([`stream`]); register-level PMU
//! models count it; the counting backend programs the models through their register
//! interface, as a kernel driver would, and reports perf-style counts.

pub mod drivers;
pub mod engine;
pub mod hvcall;
pub mod machine;
pub mod models;
pub mod program;
pub mod stat;
pub mod stream;
