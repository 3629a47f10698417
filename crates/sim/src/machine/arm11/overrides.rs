//! `--machine-config FILE`: a TOML file that overrides any parameter of the ARM11
//! machine, so users can model other variants of these cores (`docs/machines.md`
//! documents every key).
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic))]

use serde::Deserialize;

use super::config::Arm11Config;
use crate::machine::overrides::{CacheKeys, MachineConfigError, Overrides, TargetKeys, TlbKeys};

/// The L1 cache sizes a configuration may give an ARM11 core.
const MIN_L1: u64 = 1 << 10;
const MAX_L1: u64 = 1 << 20;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    icache: Option<CacheKeys>,
    dcache: Option<CacheKeys>,
    micro_itlb: Option<TlbKeys>,
    micro_dtlb: Option<TlbKeys>,
    main_tlb: Option<TlbKeys>,
    btac: Option<TargetKeys>,
    core: Option<CoreKeys>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct CoreKeys {
    return_stack: Option<u64>,
    mispredict_cycles: Option<u64>,
    write_buffer: Option<u64>,
    write_cycles: Option<u64>,
    load_use_cycles: Option<u64>,
    memory_cycles: Option<u64>,
    device_cycles: Option<u64>,
    fp_divide_cycles: Option<u64>,
    block_cycles: Option<u64>,
    exception_cycles: Option<u64>,
    vfp_support_cycles: Option<u64>,
    page_fault_cycles: Option<u64>,
    unaligned_cycles: Option<u64>,
    micro_refill_cycles: Option<u64>,
    walk_level_cycles: Option<u64>,
}

impl Arm11Config {
    /// This configuration with the keys of the TOML `text` (from `origin`, for
    /// messages) applied. Nothing is changed unless every key is valid.
    pub fn with_overrides(&self, text: &str, origin: &str) -> Result<Arm11Config, MachineConfigError> {
        let o = Overrides { origin };
        let file: File = o.parse(text)?;
        let mut cfg = self.clone();
        // ARM11's L1 caches are 4-64 KB; 1 KB to 1 MB leaves room to experiment.
        o.cache("icache", &file.icache, &mut cfg.icache, MIN_L1..=MAX_L1)?;
        o.cache("dcache", &file.dcache, &mut cfg.dcache, MIN_L1..=MAX_L1)?;
        let tlbs = [("micro_itlb", &file.micro_itlb), ("micro_dtlb", &file.micro_dtlb), ("main_tlb", &file.main_tlb)];
        match &mut cfg.mmu {
            Some(mmu) => {
                o.tlb("micro_itlb", &file.micro_itlb, &mut mmu.micro_itlb)?;
                o.tlb("micro_dtlb", &file.micro_dtlb, &mut mmu.micro_dtlb)?;
                o.tlb("main_tlb", &file.main_tlb, &mut mmu.main_tlb)?;
            }
            // ARM1156 has an MPU and no TLBs.
            None => {
                for (table, keys) in tlbs {
                    o.absent(table, keys.is_some(), self.core.name(), "it has an MPU and no TLBs")?;
                }
            }
        }
        o.target("btac", &file.btac, &mut cfg.btac)?;
        if let Some(c) = &file.core {
            core_with(&mut cfg, c, &o)?;
        }
        let mut tables = vec![("icache", cfg.icache.lines(), file.icache.is_some()), ("dcache", cfg.dcache.lines(), file.dcache.is_some())];
        if let Some(mmu) = &cfg.mmu {
            tables.extend([
                ("micro_itlb", u64::from(mmu.micro_itlb.entries), file.micro_itlb.is_some()),
                ("micro_dtlb", u64::from(mmu.micro_dtlb.entries), file.micro_dtlb.is_some()),
                ("main_tlb", u64::from(mmu.main_tlb.entries), file.main_tlb.is_some()),
            ]);
        }
        o.budget(&tables)?;
        Ok(cfg)
    }
}

/// The `[core]` keys, each with the range the model accepts.
fn core_with(cfg: &mut Arm11Config, c: &CoreKeys, o: &Overrides) -> Result<(), MachineConfigError> {
    o.core_entries("return_stack", c.return_stack, &mut cfg.return_stack, 0, 64)?;
    o.core_entries("write_buffer", c.write_buffer, &mut cfg.write_buffer, 1, 64)?;
    o.core("mispredict_cycles", c.mispredict_cycles, &mut cfg.mispredict_cycles, 1, 1000)?;
    o.core("write_cycles", c.write_cycles, &mut cfg.write_cycles, 1, 1000)?;
    o.core("load_use_cycles", c.load_use_cycles, &mut cfg.load_use_cycles, 0, 100)?;
    o.core("memory_cycles", c.memory_cycles, &mut cfg.memory_cycles, 1, 100_000)?;
    o.core("device_cycles", c.device_cycles, &mut cfg.device_cycles, 1, 100_000)?;
    o.core("fp_divide_cycles", c.fp_divide_cycles, &mut cfg.fp_divide_cycles, 0, 1000)?;
    o.core("block_cycles", c.block_cycles, &mut cfg.block_cycles, 0, 100)?;
    o.core("exception_cycles", c.exception_cycles, &mut cfg.exception_cycles, 0, 1000)?;
    o.core("vfp_support_cycles", c.vfp_support_cycles, &mut cfg.vfp_support_cycles, 0, 100_000)?;
    o.core("page_fault_cycles", c.page_fault_cycles, &mut cfg.page_fault_cycles, 0, 1_000_000)?;
    o.core("unaligned_cycles", c.unaligned_cycles, &mut cfg.unaligned_cycles, 0, 1_000_000)?;
    if cfg.mmu.is_none() {
        // ARM1156's MPU has no TLBs to refill or walk: a timing of them would be ignored.
        for (key, value) in [("micro_refill_cycles", c.micro_refill_cycles), ("walk_level_cycles", c.walk_level_cycles)] {
            if let Some(v) = value {
                return Err(o.geometry("core", format!("{key} = {v}: {} has an MPU and no TLBs to refill or walk", cfg.core.name())));
            }
        }
    }
    let (mut refill, mut walk) = cfg.mmu.as_ref().map_or((0, 0), |m| (m.micro_refill_cycles, m.walk_level_cycles));
    o.core("micro_refill_cycles", c.micro_refill_cycles, &mut refill, 1, 100)?;
    o.core("walk_level_cycles", c.walk_level_cycles, &mut walk, 1, 10_000)?;
    if let Some(mmu) = &mut cfg.mmu {
        (mmu.micro_refill_cycles, mmu.walk_level_cycles) = (refill, walk);
    }
    Ok(())
}
