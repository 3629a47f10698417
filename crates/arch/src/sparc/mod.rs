//! SPARC families: T4 (strand counters and DRAM counters), KT (the same DRAM layout
//! and the CLC counters behind sun4v calls), Niagara (MMU statistics).

pub mod kt;
pub mod niagara;
pub mod sun4v;
pub mod t4;

use pmukit_core::event_string::EventSel;
use pmukit_core::pmu::Pmu;
use pmukit_core::register::{Register, RegisterError};

use crate::RegisterValues;

/// The DRAM registers of a memory-controller PMU: T4's, or KT's at the same offsets
/// with the same layout (KT §2.2, TK4).
pub fn dram_registers(pmu: &Pmu) -> Vec<Register> {
    if pmu.desc.model == kt::MODEL {
        vec![kt::DRAM_PERF_CTL, kt::DRAM_PERF_COUNT01, kt::DRAM_PERF_COUNT23]
    } else {
        vec![t4::DRAM_PERF_CTL, t4::DRAM_PERF_COUNT01, t4::DRAM_PERF_COUNT23]
    }
}

/// A DRAM event's select code in its counter's sel field (T4 TABLE 10-4).
pub fn dram_placement(pmu: &Pmu, sel: &EventSel, counter: usize) -> Result<RegisterValues, RegisterError> {
    let ctl = &dram_registers(pmu)[0];
    let value = ctl.encode(&[(t4::DRAM_COUNTERS[counter].0.name, sel.code)])?;
    Ok(vec![(ctl.name, value)])
}
