//! SPARC families: T4 (strand counters and DRAM counters).

pub mod niagara;
pub mod sun4v;
pub mod t4;
