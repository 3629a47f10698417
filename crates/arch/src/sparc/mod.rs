//! SPARC families: T4 (strand counters and DRAM counters).

pub mod t4;
