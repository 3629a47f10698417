//! What each PMU's Linux perf driver expects and prints: the name it registers, how its
//! `perf_event_attr.config` encodes an event, and perf's spellings of our events
//! (`r07`, `armv6_1176/config=0x7/`, `cpu/config=0xc40000/`, `instructions:u`).
//!
//! - ARM11: `arch/arm/kernel/perf_event_v6.c` (Linux 6.11 and later:
//!   `drivers/perf/arm_v6_pmu.c`) registers `armv6_1136`, `armv6_1156` (until 6.11) and
//!   `armv6_1176`; `config & 0xFF` is the event number, higher bits are dropped
//!   unchecked.
//! - SPARC T4: `arch/sparc/kernel/perf_event.c` registers `cpu` as `PERF_TYPE_RAW`; a raw
//!   config is `(sl << 22) | (mask << 16)`, the PCR's (sl << 6) | mask shifted up by 16,
//!   and bits outside 16-26 would land in other PCR fields, unchecked.
//! - Niagara's MMU statistics, KT's hypervisor performance registers, the memory
//!   controllers and Montecito have no Linux perf driver.

use pmukit_core::event_string::EventSel;
use pmukit_core::pmu::Pmu;

use crate::sparc::t4;
use crate::{arm11, Catalog};

/// pmukit's raw event code for a `config` value of `pmu`'s Linux driver, or why
/// there is none.
pub fn raw_code(pmu: &Pmu, config: u64) -> Result<u64, String> {
    match pmu.desc.family {
        arm11::FAMILY if config <= 0xFF => Ok(config),
        arm11::FAMILY => {
            Err(format!("config {config:#x} does not fit ARMv6's 8-bit event number (the driver would drop the bits above 0xff)"))
        }
        t4::FAMILY if config & !(0x7FF << 16) == 0 => Ok(config >> 16),
        t4::FAMILY => Err(format!(
            "config {config:#x} has bits outside 16-26 ((sl << 22) | (mask << 16)), which the driver would OR into other PCR fields"
        )),
        _ => Err(format!("{} has no Linux perf driver", pmu.name())),
    }
}

/// The `config` that `pmu`'s Linux driver takes for an event pmukit resolved.
pub fn config(pmu: &Pmu, sel: &EventSel) -> Option<u64> {
    match pmu.desc.family {
        arm11::FAMILY => Some(sel.code),
        t4::FAMILY => Some(((sel.code << 6) | sel.umask) << 16),
        _ => None,
    }
}

/// perf's name for an event, as `perf stat` prints it, resolved on one of `pmus`:
/// pmukit's own names and perf's generic names as the driver maps them (on the first
/// of `pmus`), a raw `rNNN` (a config of the first PMU's driver), or
/// `NAME/config=N/` / `NAME/event=N/` for the PMU whose driver registers NAME, each
/// with perf's modifiers after a colon where the PMU takes them. `None` when it names
/// none of these.
pub fn resolve(catalog: &Catalog, pmus: &[&Pmu], spelling: &str) -> Option<EventSel> {
    let first = pmus.first()?;
    let (base, modifiers) = match spelling.rsplit_once(':') {
        Some((b, m)) if !b.ends_with(':') && !b.is_empty() && m.chars().all(|c| "ukhGHpPS".contains(c)) => (b, Some(m)),
        _ => (spelling, None),
    };
    let with = |text: String, pmu: &Pmu| {
        let mods: String = modifiers.map(|m| m.chars().map(|c| format!(":{c}")).collect()).unwrap_or_default();
        // A count with modifiers the PMU cannot take (ARM11 filters no privilege level)
        // is not the unmodified event's count: it maps to nothing.
        let sel = catalog.resolve(&format!("{}::{text}{mods}", pmu.name()), pmu.name()).ok()?;
        // A raw code's unit mask by its name, as pmukit's metrics spell it.
        let named = sel.event.as_ref().and_then(|e| e.umask_for(sel.umask).map(|u| format!("{}.{}", e.name, u.name)));
        match named.filter(|n| !sel.name().starts_with(n.as_str())) {
            Some(n) => catalog.resolve(&format!("{}::{n}{mods}", pmu.name()), pmu.name()).ok().or(Some(sel)),
            None => Some(sel),
        }
    };
    if let Some((driver, terms)) = base.strip_suffix('/').and_then(|b| b.split_once('/')) {
        let pmu = pmus.iter().find(|p| p.desc.linux_pmu.is_some_and(|n| n.eq_ignore_ascii_case(driver)))?;
        let value = terms.split(',').find_map(|t| t.strip_prefix("config=").or_else(|| t.strip_prefix("event=")))?;
        let config = pmukit_core::number::parse_u64(value).ok()?;
        return with(format!("r{:x}", raw_code(pmu, config).ok()?), pmu);
    }
    // `rNNN` as typed, or `raw 0xNNN`, perf's own name for a raw event without one.
    let raw = base.strip_prefix("raw 0x").or_else(|| base.strip_prefix("r0x")).or_else(|| base.strip_prefix('r'));
    if let Some(hex) = raw.filter(|h| !h.is_empty() && h.bytes().all(|b| b.is_ascii_hexdigit())) {
        let config = u64::from_str_radix(hex, 16).ok()?;
        if first.desc.linux_pmu.is_some() {
            return with(format!("r{:x}", raw_code(first, config).ok()?), first);
        }
    }
    // pmukit's names, `pmu::NAME`, and perf's generic names.
    if let Ok(sel) = catalog.resolve(base, first.name()) {
        if pmus.iter().any(|p| p.name() == sel.pmu) {
            let pmu = pmus.iter().find(|p| p.name() == sel.pmu)?;
            return with(sel.name(), pmu);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn perf_spellings_resolve_to_our_events() {
        let catalog = Catalog::builtin();
        let arm = [catalog.pmu("arm1176").unwrap()];
        let name = |pmus: &[&Pmu], s: &str| resolve(&catalog, pmus, s).map(|sel| sel.name());
        assert_eq!(name(&arm, "r07").as_deref(), Some("INSTR_EXEC"));
        assert_eq!(name(&arm, "raw 0x7").as_deref(), Some("INSTR_EXEC"));
        assert_eq!(name(&arm, "r0x7").as_deref(), Some("INSTR_EXEC"));
        assert_eq!(name(&arm, "cycles").as_deref(), Some("CPU_CYCLES"));
        assert_eq!(name(&arm, "armv6_1176/config=0x7/").as_deref(), Some("INSTR_EXEC"));
        assert_eq!(name(&arm, "armv6_1176/event=0xff/").as_deref(), Some("CPU_CYCLES"));
        assert_eq!(name(&arm, "instructions").as_deref(), Some("INSTR_EXEC"));
        assert_eq!(name(&arm, "branch-misses").as_deref(), Some("BR_MISPREDICT"));
        assert_eq!(name(&arm, "INSTR_EXEC").as_deref(), Some("INSTR_EXEC"));
        assert_eq!(name(&arm, "task-clock"), None);
        assert_eq!(name(&arm, "instructions:u"), None, "ARM11 counts every mode: a user-only count is another quantity");
        assert_eq!(name(&arm, "r100"), None, "ARMv6 events are 8 bits");
        let t4 = [catalog.pmu("sparc-t4").unwrap(), catalog.pmu("sparc-t4-dram").unwrap()];
        assert_eq!(name(&t4, "cpu/config=0x6800000/").as_deref(), Some("CYCLES"));
        assert_eq!(name(&t4, "r00ff0000").as_deref(), Some("INSTR.ALL"));
        assert_eq!(name(&t4, "instructions:u").as_deref(), Some("INSTR.ALL:u"));
        assert_eq!(name(&t4, "sparc-t4-dram::ALL_READS").as_deref(), Some("ALL_READS"));
        assert_eq!(name(&t4, "r8000000"), None, "bit 27 is not the T4's");
        let sel = resolve(&catalog, &t4, "INSTR.LOADS").unwrap();
        assert_eq!(config(t4[0], &sel), Some(0xc40000));
    }
}
