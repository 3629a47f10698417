//! SPARC families: T4 (strand counters and DRAM counters).

pub mod kt;
pub mod niagara;
pub mod sun4v;
pub mod t4;
