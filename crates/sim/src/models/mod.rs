//! Register-level PMU models.

pub mod arm11;
