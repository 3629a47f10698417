//! `--machine-config FILE` for the SPARC machines: the caches, TLBs, predictors and
//! timings of `SparcConfig`, and its memory controllers (`docs/machines.md` lists every key and its range).
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic))]

use serde::Deserialize;

use super::config::SparcConfig;
use crate::machine::overrides::{CacheKeys, DirectionKeys, MachineConfigError, Overrides, TargetKeys, TlbKeys};

/// L1 lines an L2 or L3 line may cover (see `SparcConfig::with_overrides`).
const L1_LINES_PER_OUTER: u64 = 4;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    icache: Option<CacheKeys>,
    dcache: Option<CacheKeys>,
    l2: Option<CacheKeys>,
    l3: Option<CacheKeys>,
    itlb: Option<TlbKeys>,
    dtlb: Option<TlbKeys>,
    direction: Option<DirectionKeys>,
    btc: Option<TargetKeys>,
    indirect: Option<TargetKeys>,
    core: Option<CoreKeys>,
    memory: Option<MemoryKeys>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct MemoryKeys {
    banks: Option<u64>,
    bank_cycles: Option<u64>,
    row_hit_cycles: Option<u64>,
    write_queue: Option<u64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct CoreKeys {
    sockets: Option<u64>,
    cores: Option<u64>,
    store_buffer: Option<u64>,
    store_queue: Option<u64>,
    store_commit_cycles: Option<u64>,
    l2_miss_buffer: Option<u64>,
    l2_fill_buffer: Option<u64>,
    l2_writeback_buffer: Option<u64>,
    mispredict_cycles: Option<u64>,
    btc_miss_cycles: Option<u64>,
    load_use_cycles: Option<u64>,
    l2_cycles: Option<u64>,
    l3_cycles: Option<u64>,
    memory_cycles: Option<u64>,
    remote_cycles: Option<u64>,
    walk_trap_cycles: Option<u64>,
    fill_trap_cycles: Option<u64>,
    fp_cycles: Option<u64>,
    fp_divide_cycles: Option<u64>,
    subnormal_cycles: Option<u64>,
    page_fault_cycles: Option<u64>,
    unaligned_cycles: Option<u64>,
    trap_cycles: Option<u64>,
    block_cycles: Option<u64>,
    strands_at_once: Option<bool>,
    return_stack: Option<u64>,
}

/// L1 caches of 1 KB to 1 MB, outer caches of 16 KB to 64 MB: room to model other
/// variants while the machine's state stays small enough to compare.
const L1_SIZES: std::ops::RangeInclusive<u64> = 1 << 10..=1 << 20;
const OUTER_SIZES: std::ops::RangeInclusive<u64> = 16 << 10..=64 << 20;

impl SparcConfig {
    /// This configuration with the keys of the TOML `text` (from `origin`, for
    /// messages) applied. Nothing is changed unless every key is valid.
    pub fn with_overrides(&self, text: &str, origin: &str) -> Result<SparcConfig, MachineConfigError> {
        let o = Overrides { origin };
        let file: File = o.parse(text)?;
        let mut cfg = self.clone();
        o.cache("icache", &file.icache, &mut cfg.icache, L1_SIZES)?;
        o.cache("dcache", &file.dcache, &mut cfg.dcache, L1_SIZES)?;
        o.cache("l2", &file.l2, &mut cfg.l2, OUTER_SIZES)?;
        match &mut cfg.l3 {
            Some(l3) => o.cache("l3", &file.l3, l3, OUTER_SIZES)?,
            None => o.absent("l3", file.l3.is_some(), self.chip.name(), "its L2 is the last level")?,
        }
        o.tlb("itlb", &file.itlb, &mut cfg.itlb)?;
        o.tlb("dtlb", &file.dtlb, &mut cfg.dtlb)?;
        // T4's predictors; KT and Niagara predict every branch not taken (MSP2).
        let none = "it predicts every branch not taken";
        match &mut cfg.direction {
            Some(d) => o.direction("direction", &file.direction, d)?,
            None => o.absent("direction", file.direction.is_some(), self.chip.name(), none)?,
        }
        for (table, keys, target) in [("btc", &file.btc, &mut cfg.btc), ("indirect", &file.indirect, &mut cfg.indirect)] {
            match target {
                Some(t) => o.target(table, keys, t)?,
                None => o.absent(table, keys.is_some(), self.chip.name(), none)?,
            }
        }
        if let Some(c) = &file.core {
            o.core_entries("store_buffer", c.store_buffer, &mut cfg.store_buffer, 1, 64)?;
            match &mut cfg.store_queue {
                Some(q) => {
                    o.core_entries("store_queue", c.store_queue, &mut q.entries, 1, 64)?;
                    o.core("store_commit_cycles", c.store_commit_cycles, &mut q.commit_cycles, 0, 100)?;
                }
                None => {
                    let given = c.store_queue.is_some() || c.store_commit_cycles.is_some();
                    o.absent("core.store_queue", given, self.chip.name(), "its store buffer holds stores until they are written")?;
                }
            }
            match &mut cfg.l2_buffers {
                Some(b) => {
                    o.core_entries("l2_miss_buffer", c.l2_miss_buffer, &mut b.miss, 1, 64)?;
                    o.core_entries("l2_fill_buffer", c.l2_fill_buffer, &mut b.fill, 1, 64)?;
                    o.core_entries("l2_writeback_buffer", c.l2_writeback_buffer, &mut b.writeback, 1, 64)?;
                }
                None => {
                    for (key, given) in [
                        ("core.l2_miss_buffer", c.l2_miss_buffer),
                        ("core.l2_fill_buffer", c.l2_fill_buffer),
                        ("core.l2_writeback_buffer", c.l2_writeback_buffer),
                    ] {
                        o.absent(key, given.is_some(), self.chip.name(), "its L2's buffers are not modelled")?;
                    }
                }
            }
            o.core("sockets", c.sockets, &mut cfg.sockets, 1, 8)?;
            o.core("cores", c.cores, &mut cfg.cores, 1, 64)?;
            o.core("mispredict_cycles", c.mispredict_cycles, &mut cfg.mispredict_cycles, 1, 1000)?;
            o.core("btc_miss_cycles", c.btc_miss_cycles, &mut cfg.btc_miss_cycles, 0, 100)?;
            o.core("load_use_cycles", c.load_use_cycles, &mut cfg.load_use_cycles, 0, 100)?;
            o.core("l2_cycles", c.l2_cycles, &mut cfg.l2_cycles, 1, 10_000)?;
            o.core("l3_cycles", c.l3_cycles, &mut cfg.l3_cycles, 1, 10_000)?;
            o.core("memory_cycles", c.memory_cycles, &mut cfg.memory_cycles, 1, 100_000)?;
            o.core("remote_cycles", c.remote_cycles, &mut cfg.remote_cycles, 1, 100_000)?;
            o.core("walk_trap_cycles", c.walk_trap_cycles, &mut cfg.walk_trap_cycles, 0, 10_000)?;
            o.core("fill_trap_cycles", c.fill_trap_cycles, &mut cfg.fill_trap_cycles, 1, 100_000)?;
            o.core("fp_cycles", c.fp_cycles, &mut cfg.fp_cycles, 1, 1000)?;
            o.core("fp_divide_cycles", c.fp_divide_cycles, &mut cfg.fp_divide_cycles, 0, 1000)?;
            o.core("subnormal_cycles", c.subnormal_cycles, &mut cfg.subnormal_cycles, 0, 100_000)?;
            o.core("page_fault_cycles", c.page_fault_cycles, &mut cfg.page_fault_cycles, 0, 1_000_000)?;
            o.core("unaligned_cycles", c.unaligned_cycles, &mut cfg.unaligned_cycles, 0, 1_000_000)?;
            o.core("trap_cycles", c.trap_cycles, &mut cfg.trap_cycles, 0, 10_000)?;
            o.core("block_cycles", c.block_cycles, &mut cfg.block_cycles, 0, 100)?;
            if cfg.return_stack > 0 {
                o.core_entries("return_stack", c.return_stack, &mut cfg.return_stack, 1, 64)?;
            } else {
                o.absent("core.return_stack", c.return_stack.is_some(), self.chip.name(), none)?;
            }
            if let Some(v) = c.strands_at_once {
                cfg.strands_at_once = v;
            }
        }
        if let Some(m) = &file.memory {
            if let Some(banks) = o.value("memory.banks", m.banks, 1, 64)? {
                if !banks.is_power_of_two() {
                    return Err(o.geometry(
                        "memory",
                        format!("banks = {banks}: must be a power of two in 1..=64 (the bank is chosen by address bits)"),
                    ));
                }
                cfg.mcu.banks = banks;
            }
            if let Some(v) = o.value("memory.bank_cycles", m.bank_cycles, 0, 10_000)? {
                cfg.mcu.bank_cycles = v;
            }
            if let Some(v) = o.value("memory.row_hit_cycles", m.row_hit_cycles, 0, 10_000)? {
                cfg.mcu.row_hit_cycles = v;
            }
            if let Some(v) = o.value("memory.write_queue", m.write_queue, 1, 64)? {
                cfg.mcu.write_queue = v as usize;
            }
        }
        // An L2 line evicted, or a coherence line snooped, invalidates in one cycle
        // every L1 line it covers, and a cycle's signals carry at most MAX_PER_CYCLE
        // of each count; a load can fill two L2 lines in its cycle (its own and the
        // hardware prefetch's next). So an outer line covers at most 4 L1 lines (KT's
        // and T1's 64-byte L2 lines over 16-byte L1 data lines are 4).
        let outer = std::iter::once(("l2", cfg.l2.line)).chain(cfg.l3.as_ref().map(|l3| ("l3", l3.line)));
        for (table, line) in outer {
            for (l1, l1_line) in [("icache", cfg.icache.line), ("dcache", cfg.dcache.line)] {
                if line > L1_LINES_PER_OUTER * l1_line {
                    return Err(o.geometry(
                        table,
                        format!(
                            "line = {line}: at most {L1_LINES_PER_OUTER} times {l1}.line = {l1_line} ({}), as one evicted or snooped line invalidates every {l1} line it covers in a cycle",
                            L1_LINES_PER_OUTER * l1_line
                        ),
                    ));
                }
            }
        }
        let mut tables = vec![
            ("icache", cfg.icache.lines(), file.icache.is_some()),
            ("dcache", cfg.dcache.lines(), file.dcache.is_some()),
            ("l2", cfg.l2.lines(), file.l2.is_some()),
            ("itlb", u64::from(cfg.itlb.entries), file.itlb.is_some()),
            ("dtlb", u64::from(cfg.dtlb.entries), file.dtlb.is_some()),
        ];
        tables.extend(cfg.l3.as_ref().map(|l3| ("l3", l3.lines(), file.l3.is_some())));
        o.budget(&tables)?;
        Ok(cfg)
    }
}
