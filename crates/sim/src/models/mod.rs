//! Register-level PMU models.

pub mod arm11;
pub mod kt;
pub mod montecito;
pub mod sun4v;
pub mod t4;
pub mod t4_dram;
