//! `--machine-config FILE`: a TOML file that overrides any parameter of the ARM11
//! machine, so users can model other variants of these cores (`docs/machines.md`
//! documents every key).

use serde::Deserialize;

use super::config::{Arm11Config, Mmu};
use crate::machine::cache::{CacheConfig, Replacement};
use crate::machine::predict::TargetCacheConfig;
use crate::machine::tlb::TlbConfig;

/// Why a machine configuration was refused; every message names the file and the key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MachineConfigError {
    #[error("{origin}: {message}")]
    Syntax { origin: String, message: String },
    #[error("{origin}: {key} = {value}: must be in {min}..={max}")]
    Range { origin: String, key: String, value: u64, min: u64, max: u64 },
    #[error("{origin}: [{table}]: {why}")]
    Geometry { origin: String, table: &'static str, why: String },
    #[error("{origin}: [{table}] describes a TLB, but {core} has an MPU and no TLBs")]
    NoMmu { origin: String, table: &'static str, core: &'static str },
}

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
    btac: Option<BtacKeys>,
    core: Option<CoreKeys>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CacheKeys {
    size: Option<u64>,
    ways: Option<u32>,
    line: Option<u64>,
    replacement: Option<Replacement>,
    write_allocate: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct TlbKeys {
    entries: Option<u32>,
    ways: Option<u32>,
    replacement: Option<Replacement>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct BtacKeys {
    entries: Option<u32>,
    ways: Option<u32>,
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
    micro_refill_cycles: Option<u64>,
    walk_level_cycles: Option<u64>,
}

impl Arm11Config {
    /// This configuration with the keys of the TOML `text` (from `origin`, for
    /// messages) applied. Nothing is changed unless every key is valid.
    pub fn with_overrides(&self, text: &str, origin: &str) -> Result<Arm11Config, MachineConfigError> {
        let file: File = toml::from_str(text).map_err(|e| MachineConfigError::Syntax { origin: origin.into(), message: e.to_string() })?;
        let mut cfg = self.clone();
        let geometry = |table, why| MachineConfigError::Geometry { origin: origin.into(), table, why };
        for (table, keys, cache) in [("icache", &file.icache, &mut cfg.icache), ("dcache", &file.dcache, &mut cfg.dcache)] {
            if let Some(k) = keys {
                *cache = cache_with(*cache, k);
                cache.check().map_err(|why| geometry(table, why))?;
                // ARM11's L1 caches are 4-64 KB; 1 KB to 1 MB leaves room to experiment
                // while keeping the machine's state small enough to compare.
                if !(MIN_L1..=MAX_L1).contains(&cache.size) {
                    let key = format!("{table}.size");
                    return Err(MachineConfigError::Range { origin: origin.into(), key, value: cache.size, min: MIN_L1, max: MAX_L1 });
                }
            }
        }
        let core = self.core.name();
        match &mut cfg.mmu {
            Some(mmu) => tlbs_with(mmu, &file, &geometry)?,
            None => {
                let tlb = [("micro_itlb", &file.micro_itlb), ("micro_dtlb", &file.micro_dtlb), ("main_tlb", &file.main_tlb)];
                if let Some((table, _)) = tlb.iter().find(|(_, k)| k.is_some()) {
                    return Err(MachineConfigError::NoMmu { origin: origin.into(), table, core });
                }
            }
        }
        if let Some(b) = &file.btac {
            cfg.btac = TargetCacheConfig { entries: b.entries.unwrap_or(cfg.btac.entries), ways: b.ways.unwrap_or(cfg.btac.ways) };
            cfg.btac.check().map_err(|why| geometry("btac", why))?;
        }
        if let Some(c) = &file.core {
            core_with(&mut cfg, c, origin)?;
        }
        Ok(cfg)
    }
}

fn cache_with(c: CacheConfig, k: &CacheKeys) -> CacheConfig {
    CacheConfig {
        size: k.size.unwrap_or(c.size),
        ways: k.ways.unwrap_or(c.ways),
        line: k.line.unwrap_or(c.line),
        replacement: k.replacement.unwrap_or(c.replacement),
        write_allocate: k.write_allocate.unwrap_or(c.write_allocate),
    }
}

fn tlbs_with(mmu: &mut Mmu, file: &File, geometry: &dyn Fn(&'static str, String) -> MachineConfigError) -> Result<(), MachineConfigError> {
    for (table, keys, tlb) in [
        ("micro_itlb", &file.micro_itlb, &mut mmu.micro_itlb),
        ("micro_dtlb", &file.micro_dtlb, &mut mmu.micro_dtlb),
        ("main_tlb", &file.main_tlb, &mut mmu.main_tlb),
    ] {
        if let Some(k) = keys {
            *tlb = TlbConfig {
                entries: k.entries.unwrap_or(tlb.entries),
                ways: k.ways.unwrap_or(tlb.ways),
                replacement: k.replacement.unwrap_or(tlb.replacement),
            };
            tlb.check().map_err(|why| geometry(table, why))?;
        }
    }
    Ok(())
}

/// The `[core]` keys, each with the range the model accepts.
fn core_with(cfg: &mut Arm11Config, c: &CoreKeys, origin: &str) -> Result<(), MachineConfigError> {
    let check = |key: &str, value: Option<u64>, min: u64, max: u64| match value {
        Some(v) if !(min..=max).contains(&v) => {
            Err(MachineConfigError::Range { origin: origin.into(), key: format!("core.{key}"), value: v, min, max })
        }
        v => Ok(v),
    };
    let set = |into: &mut u64, v: Option<u64>| *into = v.unwrap_or(*into);
    if let Some(v) = check("return_stack", c.return_stack, 0, 64)? {
        cfg.return_stack = v as usize;
    }
    if let Some(v) = check("write_buffer", c.write_buffer, 1, 64)? {
        cfg.write_buffer = v as usize;
    }
    set(&mut cfg.mispredict_cycles, check("mispredict_cycles", c.mispredict_cycles, 1, 1000)?);
    set(&mut cfg.write_cycles, check("write_cycles", c.write_cycles, 1, 1000)?);
    set(&mut cfg.load_use_cycles, check("load_use_cycles", c.load_use_cycles, 0, 100)?);
    set(&mut cfg.memory_cycles, check("memory_cycles", c.memory_cycles, 1, 100_000)?);
    set(&mut cfg.device_cycles, check("device_cycles", c.device_cycles, 1, 100_000)?);
    set(&mut cfg.fp_divide_cycles, check("fp_divide_cycles", c.fp_divide_cycles, 0, 1000)?);
    set(&mut cfg.block_cycles, check("block_cycles", c.block_cycles, 0, 100)?);
    set(&mut cfg.exception_cycles, check("exception_cycles", c.exception_cycles, 0, 1000)?);
    let refill = check("micro_refill_cycles", c.micro_refill_cycles, 1, 100)?;
    let walk = check("walk_level_cycles", c.walk_level_cycles, 1, 10_000)?;
    if let Some(mmu) = &mut cfg.mmu {
        set(&mut mmu.micro_refill_cycles, refill);
        set(&mut mmu.walk_level_cycles, walk);
    }
    Ok(())
}
