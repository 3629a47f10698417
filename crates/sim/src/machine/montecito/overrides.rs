//! `--machine-config FILE` for the Montecito machine: the caches, TLBs and timings of
//! `MontecitoConfig` (`docs/machines.md` lists every key and its range).
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic))]

use serde::Deserialize;

use super::config::{MontecitoConfig, PAGE_SIZES};
use crate::machine::overrides::{CacheKeys, DirectionKeys, MachineConfigError, Overrides, TargetKeys, TlbKeys};

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    l1i: Option<CacheKeys>,
    l1d: Option<CacheKeys>,
    l2i: Option<CacheKeys>,
    l2d: Option<CacheKeys>,
    l3: Option<CacheKeys>,
    l1_itlb: Option<TlbKeys>,
    l2_itlb: Option<TlbKeys>,
    l1_dtlb: Option<TlbKeys>,
    l2_dtlb: Option<TlbKeys>,
    direction: Option<DirectionKeys>,
    indirect: Option<TargetKeys>,
    core: Option<CoreKeys>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct CoreKeys {
    return_stack: Option<u64>,
    l2_tlb_cycles: Option<u64>,
    l2d_cycles: Option<u64>,
    l2i_cycles: Option<u64>,
    l3_cycles: Option<u64>,
    memory_cycles: Option<u64>,
    mispredict_cycles: Option<u64>,
    zero_bubble: Option<u64>,
    resteer_cycles: Option<u64>,
    switch_cycles: Option<u64>,
    thread_quantum: Option<u64>,
    fp_divide_cycles: Option<u64>,
    trap_cycles: Option<u64>,
    fault_handler_cycles: Option<u64>,
    sir_cycles: Option<u64>,
    fp_assist_cycles: Option<u64>,
    page_fault_cycles: Option<u64>,
    device_cycles: Option<u64>,
    device_reads: Option<u64>,
    unaligned_cycles: Option<u64>,
    nat_recirculate_cycles: Option<u64>,
    lc_cycles: Option<u64>,
    store_write_cycles: Option<u64>,
    ozq_data_entries: Option<u64>,
    victim_read_delay: Option<u64>,
    br_interlock_cycles: Option<u64>,
    branch_init_cycles: Option<u64>,
    brq_entries: Option<u64>,
    stream_lines: Option<u64>,
    pvab_entries: Option<u64>,
    cr_cycles: Option<u64>,
    clean_castouts: Option<bool>,
    cores: Option<u64>,
    bus_ratio: Option<u64>,
    snoop_clocks: Option<u64>,
    hitm_clocks: Option<u64>,
    line_clocks: Option<u64>,
    base_page: Option<u64>,
}

const L1_SIZES: std::ops::RangeInclusive<u64> = 1 << 10..=1 << 20;
const OUTER_SIZES: std::ops::RangeInclusive<u64> = 16 << 10..=64 << 20;

impl MontecitoConfig {
    /// This configuration with the keys of the TOML `text` (from `origin`, for
    /// messages) applied. Nothing is changed unless every key is valid.
    pub fn with_overrides(&self, text: &str, origin: &str) -> Result<MontecitoConfig, MachineConfigError> {
        let o = Overrides { origin };
        let file: File = o.parse(text)?;
        let mut cfg = self.clone();
        o.cache("l1i", &file.l1i, &mut cfg.l1i, L1_SIZES)?;
        o.cache("l1d", &file.l1d, &mut cfg.l1d, L1_SIZES)?;
        o.cache("l2i", &file.l2i, &mut cfg.l2i, OUTER_SIZES)?;
        o.cache("l2d", &file.l2d, &mut cfg.l2d, OUTER_SIZES)?;
        o.cache("l3", &file.l3, &mut cfg.l3, OUTER_SIZES)?;
        o.tlb("l1_itlb", &file.l1_itlb, &mut cfg.l1_itlb)?;
        o.tlb("l2_itlb", &file.l2_itlb, &mut cfg.l2_itlb)?;
        o.tlb("l1_dtlb", &file.l1_dtlb, &mut cfg.l1_dtlb)?;
        o.tlb("l2_dtlb", &file.l2_dtlb, &mut cfg.l2_dtlb)?;
        o.direction("direction", &file.direction, &mut cfg.direction)?;
        o.target("indirect", &file.indirect, &mut cfg.indirect)?;
        if let Some(c) = &file.core {
            o.core_entries("return_stack", c.return_stack, &mut cfg.return_stack, 0, 64)?;
            o.core("l2_tlb_cycles", c.l2_tlb_cycles, &mut cfg.l2_tlb_cycles, 0, 100)?;
            o.core("l2d_cycles", c.l2d_cycles, &mut cfg.l2d_cycles, 1, 10_000)?;
            o.core("l2i_cycles", c.l2i_cycles, &mut cfg.l2i_cycles, 1, 10_000)?;
            o.core("l3_cycles", c.l3_cycles, &mut cfg.l3_cycles, 1, 10_000)?;
            o.core("memory_cycles", c.memory_cycles, &mut cfg.memory_cycles, 1, 100_000)?;
            o.core("mispredict_cycles", c.mispredict_cycles, &mut cfg.mispredict_cycles, 1, 1000)?;
            if let Some(v) = o.value("core.zero_bubble", c.zero_bubble, 1, 64)? {
                cfg.zero_bubble = v as u32;
            }
            o.core("resteer_cycles", c.resteer_cycles, &mut cfg.resteer_cycles, 0, 100)?;
            o.core("switch_cycles", c.switch_cycles, &mut cfg.switch_cycles, 1, 1000)?;
            o.core("thread_quantum", c.thread_quantum, &mut cfg.thread_quantum, 64, 1 << 32)?;
            o.core("fp_divide_cycles", c.fp_divide_cycles, &mut cfg.fp_divide_cycles, 0, 1000)?;
            o.core("trap_cycles", c.trap_cycles, &mut cfg.trap_cycles, 0, 10_000)?;
            o.core("fault_handler_cycles", c.fault_handler_cycles, &mut cfg.fault_handler_cycles, 0, 100_000)?;
            o.core("sir_cycles", c.sir_cycles, &mut cfg.sir_cycles, 0, 100)?;
            o.core("fp_assist_cycles", c.fp_assist_cycles, &mut cfg.fp_assist_cycles, 0, 100_000)?;
            o.core("page_fault_cycles", c.page_fault_cycles, &mut cfg.page_fault_cycles, 0, 1_000_000)?;
            o.core("device_cycles", c.device_cycles, &mut cfg.device_cycles, 1, 100_000)?;
            o.core_entries("device_reads", c.device_reads, &mut cfg.device_reads, 1, 16)?;
            o.core("unaligned_cycles", c.unaligned_cycles, &mut cfg.unaligned_cycles, 0, 1_000_000)?;
            o.core("nat_recirculate_cycles", c.nat_recirculate_cycles, &mut cfg.nat_recirculate_cycles, 0, 100)?;
            o.core("lc_cycles", c.lc_cycles, &mut cfg.lc_cycles, 1, 100)?;
            o.core("br_interlock_cycles", c.br_interlock_cycles, &mut cfg.br_interlock_cycles, 0, 100)?;
            o.core("branch_init_cycles", c.branch_init_cycles, &mut cfg.branch_init_cycles, 0, 100)?;
            o.core_entries("brq_entries", c.brq_entries, &mut cfg.brq_entries, 1, 64)?;
            o.core("stream_lines", c.stream_lines, &mut cfg.stream_lines, 1, 64)?;
            o.core("pvab_entries", c.pvab_entries, &mut cfg.pvab_entries, 1, 64)?;
            // The L1D pipeline remembers eight stores, one a cycle at most.
            o.core("store_write_cycles", c.store_write_cycles, &mut cfg.store_write_cycles, 0, 8)?;
            // At most one per OzQ entry: a write's data comes with its entry.
            o.core_entries("ozq_data_entries", c.ozq_data_entries, &mut cfg.ozq_data_entries, 1, 32)?;
            o.core("victim_read_delay", c.victim_read_delay, &mut cfg.victim_read_delay, 0, 1000)?;
            o.core("cr_cycles", c.cr_cycles, &mut cfg.cr_cycles, 1, 100)?;
            o.core_entries("cores", c.cores, &mut cfg.cores, 1, 2)?;
            o.core("bus_ratio", c.bus_ratio, &mut cfg.bus_ratio, 1, 32)?;
            o.core("snoop_clocks", c.snoop_clocks, &mut cfg.snoop_clocks, 1, 16)?;
            o.core("hitm_clocks", c.hitm_clocks, &mut cfg.hitm_clocks, 0, 16)?;
            // A partial transfer takes one clock: a line takes at least two, or one would read as the other.
            o.core("line_clocks", c.line_clocks, &mut cfg.line_clocks, 2, 64)?;
            if let Some(page) = c.base_page {
                if !PAGE_SIZES.contains(&page) {
                    let sizes: Vec<String> = PAGE_SIZES.iter().map(u64::to_string).collect();
                    let why = format!("base_page = {page}: must be a page size Itanium 2 implements, in bytes: {}", sizes.join(", "));
                    return Err(o.geometry("core", why));
                }
                cfg.base_page = page;
            }
            if let Some(on) = c.clean_castouts {
                cfg.clean_castouts = on;
            }
        }
        let tables = [
            ("l1i", cfg.l1i.lines(), file.l1i.is_some()),
            ("l1d", cfg.l1d.lines(), file.l1d.is_some()),
            ("l2i", cfg.l2i.lines(), file.l2i.is_some()),
            ("l2d", cfg.l2d.lines(), file.l2d.is_some()),
            ("l3", cfg.l3.lines(), file.l3.is_some()),
            ("l1_itlb", u64::from(cfg.l1_itlb.entries), file.l1_itlb.is_some()),
            ("l2_itlb", u64::from(cfg.l2_itlb.entries), file.l2_itlb.is_some()),
            ("l1_dtlb", u64::from(cfg.l1_dtlb.entries), file.l1_dtlb.is_some()),
            ("l2_dtlb", u64::from(cfg.l2_dtlb.entries), file.l2_dtlb.is_some()),
        ];
        o.budget(&tables)?;
        Ok(cfg)
    }
}
