//! `--machine-config FILE`: what every machine's TOML configuration shares: the error,
//! the keys of a cache and of a TLB, and range checks that name the key
//! (`docs/machines.md` documents every machine's keys). Each machine's own file lists
//! its tables; nothing changes unless every key is valid.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic))]

use std::ops::RangeInclusive;

use serde::de::DeserializeOwned;
use serde::Deserialize;

use crate::machine::cache::{CacheConfig, Replacement};
use crate::machine::predict::{DirectionConfig, TargetCacheConfig};
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
    #[error("{origin}: [{table}]: {machine} has no such structure ({why})")]
    Absent { origin: String, table: &'static str, machine: &'static str, why: &'static str },
    #[error(
        "{origin}: {keys}: the machine's caches and TLBs would hold {entries} entries ({largest}), about {} of simulator state; at most {} is allowed (docs/machines.md): make them smaller or their lines longer",
        size(*bytes),
        size(STATE_BUDGET)
    )]
    Budget { origin: String, keys: String, entries: u64, largest: String, bytes: u64 },
}

/// The simulator state a machine configuration may ask for: what `pmu stat` holds of
/// a machine's caches and TLBs, at [`STATE_BYTES_PER_ENTRY`] an entry.
pub const STATE_BUDGET: u64 = 1 << 30;

/// The memory one cache line or TLB entry costs a run at most: the structure's own
/// word, and the copies of the machine's canonical state the period search keeps
/// (`run::finder` and `run::turns` hold up to 16 snapshots each, with the outer
/// caches' state) and their recordings. Measured: a KT with an 8-byte-line 64 MB L2
/// (8,388,608 lines) peaks at 2.66 GB over 10^9 cycles, 317 bytes a line above the
/// default machine's 108 MB.
pub const STATE_BYTES_PER_ENTRY: u64 = 320;

fn size(bytes: u64) -> String {
    pmukit_core::input::size(bytes)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CacheKeys {
    size: Option<u64>,
    ways: Option<u32>,
    line: Option<u64>,
    replacement: Option<Replacement>,
    write_allocate: Option<bool>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TlbKeys {
    entries: Option<u32>,
    ways: Option<u32>,
    replacement: Option<Replacement>,
}

/// A branch target cache's keys (ARM11's BTAC, T4's BTC, an indirect-target table).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetKeys {
    entries: Option<u32>,
    ways: Option<u32>,
}

/// A direction predictor's keys.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DirectionKeys {
    entries: Option<u32>,
    history_bits: Option<u8>,
}

/// Applies one file's keys, naming the file in every refusal.
pub struct Overrides<'a> {
    pub origin: &'a str,
}

impl Overrides<'_> {
    /// The file's tables, or the syntax error with its line and column.
    pub fn parse<T: DeserializeOwned>(&self, text: &str) -> Result<T, MachineConfigError> {
        toml::from_str(text)
            .map_err(|e| MachineConfigError::Syntax { origin: self.origin.into(), message: pmukit_core::input::toml_message(text, &e) })
    }

    /// A cache's keys over `cache`, its geometry checked and its size within `sizes`.
    pub fn cache(
        &self,
        table: &'static str,
        keys: &Option<CacheKeys>,
        cache: &mut CacheConfig,
        sizes: RangeInclusive<u64>,
    ) -> Result<(), MachineConfigError> {
        let Some(k) = keys else { return Ok(()) };
        *cache = CacheConfig {
            size: k.size.unwrap_or(cache.size),
            ways: k.ways.unwrap_or(cache.ways),
            line: k.line.unwrap_or(cache.line),
            replacement: k.replacement.unwrap_or(cache.replacement),
            write_allocate: k.write_allocate.unwrap_or(cache.write_allocate),
        };
        cache.check().map_err(|why| self.geometry(table, why))?;
        // A bound on the size keeps the machine's state small enough to compare.
        self.value(&format!("{table}.size"), Some(cache.size), *sizes.start(), *sizes.end())?;
        Ok(())
    }

    /// A target cache's keys over `target`, its geometry checked.
    pub fn target(&self, table: &'static str, keys: &Option<TargetKeys>, target: &mut TargetCacheConfig) -> Result<(), MachineConfigError> {
        let Some(k) = keys else { return Ok(()) };
        *target = TargetCacheConfig { entries: k.entries.unwrap_or(target.entries), ways: k.ways.unwrap_or(target.ways) };
        target.check().map_err(|why| self.geometry(table, why))
    }

    /// A direction predictor's keys over `direction`, its geometry checked.
    pub fn direction(
        &self,
        table: &'static str,
        keys: &Option<DirectionKeys>,
        direction: &mut DirectionConfig,
    ) -> Result<(), MachineConfigError> {
        let Some(k) = keys else { return Ok(()) };
        *direction = DirectionConfig {
            entries: k.entries.unwrap_or(direction.entries),
            history_bits: k.history_bits.unwrap_or(direction.history_bits),
        };
        direction.check().map_err(|why| self.geometry(table, why))
    }

    /// A TLB's keys over `tlb`, its geometry checked.
    pub fn tlb(&self, table: &'static str, keys: &Option<TlbKeys>, tlb: &mut TlbConfig) -> Result<(), MachineConfigError> {
        let Some(k) = keys else { return Ok(()) };
        *tlb = TlbConfig {
            entries: k.entries.unwrap_or(tlb.entries),
            ways: k.ways.unwrap_or(tlb.ways),
            replacement: k.replacement.unwrap_or(tlb.replacement),
        };
        tlb.check().map_err(|why| self.geometry(table, why))
    }

    pub fn geometry(&self, table: &'static str, why: String) -> MachineConfigError {
        MachineConfigError::Geometry { origin: self.origin.into(), table, why }
    }

    /// `value` when it lies in `min..=max`; the key's refusal otherwise.
    pub fn value(&self, key: &str, value: Option<u64>, min: u64, max: u64) -> Result<Option<u64>, MachineConfigError> {
        match value {
            Some(v) if !(min..=max).contains(&v) => {
                Err(MachineConfigError::Range { origin: self.origin.into(), key: key.to_string(), value: v, min, max })
            }
            v => Ok(v),
        }
    }

    /// Sets `into` to the `[core]` key's value when given and in range.
    pub fn core(&self, key: &str, value: Option<u64>, into: &mut u64, min: u64, max: u64) -> Result<(), MachineConfigError> {
        if let Some(v) = self.value(&format!("core.{key}"), value, min, max)? {
            *into = v;
        }
        Ok(())
    }

    /// Sets a count of entries (`into`) to the `[core]` key's value when given and in
    /// range.
    pub fn core_entries(&self, key: &str, value: Option<u64>, into: &mut usize, min: u64, max: u64) -> Result<(), MachineConfigError> {
        if let Some(v) = self.value(&format!("core.{key}"), value, min, max)? {
            *into = v as usize;
        }
        Ok(())
    }

    /// Refuses a machine whose structures (each table's name, its entries: cache
    /// lines, TLB entries, and whether the file sets it) would cost more simulator
    /// state than [`STATE_BUDGET`], naming the largest tables the file sets.
    pub fn budget(&self, structures: &[(&'static str, u64, bool)]) -> Result<(), MachineConfigError> {
        let entries: u64 = structures.iter().map(|(_, n, _)| n).sum();
        let bytes = entries.saturating_mul(STATE_BYTES_PER_ENTRY);
        if bytes <= STATE_BUDGET {
            return Ok(());
        }
        let mut by_size: Vec<&(&str, u64, bool)> = structures.iter().collect();
        by_size.sort_by_key(|s| std::cmp::Reverse(s.1));
        let largest: Vec<String> = by_size.iter().take(3).map(|(t, n, _)| format!("{t} {n}")).collect();
        let keys: Vec<String> = by_size.iter().filter(|(_, _, given)| *given).take(3).map(|(t, _, _)| format!("[{t}]")).collect();
        Err(MachineConfigError::Budget { origin: self.origin.into(), keys: keys.join(", "), entries, largest: largest.join(", "), bytes })
    }

    /// Refuses a table the machine has no structure for.
    pub fn absent(&self, table: &'static str, given: bool, machine: &'static str, why: &'static str) -> Result<(), MachineConfigError> {
        if given {
            return Err(MachineConfigError::Absent { origin: self.origin.into(), table, machine, why });
        }
        Ok(())
    }
}
