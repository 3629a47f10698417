//! `pmu stat` through sun4v hypervisor calls: the Niagara MMU statistics buffer counted
//! as events ("Hypervisor API for Niagara MMU statistics collection" §2), and the KT
//! CLC and DRAM counters programmed with kt_set_perfreg and read with kt_get_perfreg
//! ("KT performance registers" §3), including the refusals §3.0 says to survive.

use pmukit_arch::sparc::kt::{self as arch_kt, L2_PERF_CONFIG, PERF_CONFIG_REMOTE, ST, UT};
use pmukit_arch::sparc::sun4v::group;
use pmukit_arch::{encode_set, Catalog};
use pmukit_core::event_string::EventSel;
use pmukit_core::report::StatReport;
use pmukit_sim::drivers::kt::KtDriver;
use pmukit_sim::drivers::niagara::NiagaraDriver;
use pmukit_sim::drivers::{totals, Driver, Runs};
use pmukit_sim::models::kt::KtConfig;
use pmukit_sim::stat::{self, stat, StatError, StatOptions};
use pmukit_sim::stream::{Block, Cursor, MemRef, Privilege, Signal, Span, Totals};
const SEED: u64 = 5;

fn sels(cat: &Catalog, pmu: &str, events: &[&str]) -> Vec<EventSel> {
    events.iter().map(|e| cat.resolve(e, pmu).unwrap()).collect()
}

fn run_with(pmu: &str, events: &[&str], workload: &str, cycles: u64, kt: KtConfig) -> StatReport {
    let cat = Catalog::builtin();
    let opts = StatOptions { workload: workload.to_string(), seed: SEED, cycles, kt, ..StatOptions::default() };
    stat(&cat, &sels(&cat, pmu, events), &opts, &mut |_| {}).unwrap()
}

fn run(pmu: &str, events: &[&str], workload: &str, cycles: u64) -> StatReport {
    run_with(pmu, events, workload, cycles, KtConfig { nodes: 2, ..KtConfig::default() })
}

fn count(r: &StatReport, name: &str) -> Option<u64> {
    r.events.iter().find(|e| e.name == name).unwrap_or_else(|| panic!("{name} not in the report")).count
}

/// The signals the machine of `pmu` computes for `workload` over `cycles`, in the
/// spans `keep` accepts: what the counts must equal.
fn truth(pmu: &str, workload: &str, cycles: u64, keep: impl Fn(&Span) -> bool) -> Totals {
    let cat = Catalog::builtin();
    let opts = StatOptions { workload: workload.to_string(), seed: SEED, cycles, ..StatOptions::default() };
    let (blocks, _) = stat::blocks(&[cat.pmu(pmu).unwrap()], &opts, stat::Reads::ALL).unwrap();
    let blocks = blocks.every();
    Totals::of(blocks, cycles, keep)
}

/// The machine's block stream of `workload` for `pmu`.
fn stream(pmu: &str, workload: &str) -> Cursor {
    let cat = Catalog::builtin();
    let opts = StatOptions { workload: workload.to_string(), seed: SEED, ..StatOptions::default() };
    Cursor::new(stat::blocks(&[cat.pmu(pmu).unwrap()], &opts, stat::Reads::ALL).unwrap().0.every())
}

fn sum(t: &Totals, signals: &[Signal]) -> u64 {
    signals.iter().map(|&s| t.get(s)).sum()
}

fn translated(s: &Span) -> bool {
    s.privilege != Privilege::Hyper
}

/// §2.0: "it is continuously updated (hits increased and ticks updated)": every TLB
/// fill the hypervisor makes from the TSB is a hit (TN10), and its ticks are the
/// cycles the machine spent on it (TN17).
#[test]
fn s2_niagara_buffer_counts_every_tsb_hit_of_the_run() {
    let cycles = 200_000_000;
    let r = run("niagara", &["IMMU_TSB_HITS", "IMMU_TSB_TICKS", "DMMU_TSB_HITS", "DMMU_TSB_TICKS"], "mixed", cycles);
    let t = truth("niagara", "mixed", cycles, translated);
    let (i, d) = (sum(&t, &Signal::ITLB_FILLS[..4]), sum(&t, &Signal::DTLB_FILLS[..4]));
    let (it, dt) = (sum(&t, &Signal::ITLB_WALK_CYCLES[..4]), sum(&t, &Signal::DTLB_WALK_CYCLES[..4]));
    assert!(i > 0 && d > 0, "the workload misses in both TLBs");
    assert!(it > i && dt > d, "a miss takes cycles");
    assert_eq!(count(&r, "IMMU_TSB_HITS.ALL"), Some(i));
    assert_eq!(count(&r, "IMMU_TSB_TICKS.ALL"), Some(it));
    assert_eq!(count(&r, "DMMU_TSB_HITS.ALL"), Some(d));
    assert_eq!(count(&r, "DMMU_TSB_TICKS.ALL"), Some(dt));
    assert!(r.metrics.iter().any(|m| m.name == "dmmu_ticks_per_tsb_hit" && m.value == dt as f64 / d as f64));
}

/// §2.3: ctx0 and ctxnon0 fields: privileged code translates in the nucleus context,
/// user code in its own (TN11).
#[test]
fn s2_3_niagara_contexts_follow_the_privilege_of_the_code() {
    let cycles = 200_000_000;
    let r = run("niagara", &["DMMU_TSB_HITS.CTX0", "DMMU_TSB_HITS.CTXNON0"], "mixed", cycles);
    let user = truth("niagara", "mixed", cycles, |s| s.privilege.is_user());
    let kernel = truth("niagara", "mixed", cycles, |s| translated(s) && !s.privilege.is_user());
    assert!(sum(&kernel, &Signal::DTLB_FILLS) > 0);
    assert_eq!(count(&r, "DMMU_TSB_HITS.CTX0"), Some(sum(&kernel, &Signal::DTLB_FILLS)));
    assert_eq!(count(&r, "DMMU_TSB_HITS.CTXNON0"), Some(sum(&user, &Signal::DTLB_FILLS)));
}

/// §2.3: one field per page size, filled by the page size of the TTE found; a unit
/// mask of several bits sums its fields.
#[test]
fn s2_3_niagara_unit_masks_sum_their_fields() {
    let r = run(
        "niagara",
        &[
            "DMMU_TSB_HITS.ALL",
            "DMMU_TSB_HITS.SIZE_8K",
            "DMMU_TSB_HITS.SIZE_64K",
            "DMMU_TSB_HITS.SIZE_4M",
            "DMMU_TSB_HITS.SIZE_256M",
            "DMMU_TSB_HITS.CTX0_8K.CTXNON0_64K",
            "DMMU_TSB_HITS.CTX0_8K",
            "DMMU_TSB_HITS.CTXNON0_64K",
        ],
        "os",
        50_000_000,
    );
    let c = |i: usize| r.events[i].count.unwrap();
    assert!(c(0) > 0);
    assert!(c(1) > 0 && c(2) > 0 && c(3) > 0, "the os workload maps 8K, 64K and 4M pages");
    assert_eq!(c(1) + c(2) + c(3) + c(4), c(0));
    assert_eq!(c(6) + c(7), c(5));
    assert_eq!(r.events[5].counters, ["DMMU_CTX0_8K_HITS", "DMMU_CTXNON0_64K_HITS"], "an event lists the fields it reads");
}

/// The buffer collects every field at once: any number of events read it together,
/// with no multiplexing.
#[test]
fn niagara_events_never_compete_for_counters() {
    let names: Vec<String> = ["IMMU_TSB_HITS", "IMMU_TSB_TICKS", "DMMU_TSB_HITS", "DMMU_TSB_TICKS"]
        .iter()
        .flat_map(|e| {
            ["ALL", "CTX0", "CTXNON0", "SIZE_8K", "CTX0_8K", "CTXNON0_8K", "CTX0_256M", "SIZE_4M", "CTXNON0"].map(|u| format!("{e}.{u}"))
        })
        .collect();
    let events: Vec<&str> = names.iter().map(String::as_str).collect();
    let r = run("niagara", &events, "mixed", 10_000_000);
    assert_eq!(r.events.len(), 36);
    assert!(r.events.iter().all(|e| !e.scaled && e.running == e.enabled), "nothing was multiplexed");
    assert!(!r.notes.iter().any(|n| n.contains("multiplexed")));
}

/// §2.1: the driver hands each vCPU a 64-byte-aligned buffer with niagara_mmustat_conf,
/// and a raddr of 0 disables collection when it stops.
#[test]
fn s2_1_niagara_driver_configures_every_vcpu_and_disables_at_stop() {
    let cat = Catalog::builtin();
    let pmu = cat.pmu("niagara").unwrap();
    let set = encode_set(pmu, &sels(&cat, "niagara", &["DMMU_TSB_HITS"])).unwrap();
    let mut driver = NiagaraDriver::new(4);
    driver.start(&set);
    let buffers: Vec<u64> = (0..4).map(|v| driver.hypervisor().mmustat_buffer(v).unwrap()).collect();
    assert!(buffers.iter().all(|&ra| ra != 0 && ra % 64 == 0), "{buffers:x?}");
    let mut unique = buffers.clone();
    unique.dedup();
    assert_eq!(unique.len(), 4, "one buffer per vCPU");
    let mut cursor = stream("niagara", "mixed");
    driver.run(&mut cursor, 1_000_000);
    assert_eq!(driver.stop("niagara").len(), 1);
    assert!((0..4).all(|v| driver.hypervisor().mmustat_buffer(v) == Some(0)));
    assert!(driver.notes().is_empty());
}

/// §3.0: "In default mode all L2 misses are counted": with PERF_CONFIG 0 every memory
/// read of the stream is an L2 miss (TK17), in the modes the PCR traces (u and k).
#[test]
fn s3_0_kt_default_perf_config_counts_all_l2_misses() {
    let cycles = 200_000_000;
    let r = run("sparc-kt", &["L2_MISSES"], "stream", cycles);
    let truth = truth("sparc-kt", "stream", cycles, translated);
    assert!(truth.get(Signal::MemoryReads) > 0);
    assert_eq!(count(&r, "L2_MISSES"), Some(truth.get(Signal::MemoryReads)));
}

/// §3.0: local-memory and remote-memory misses split all misses; no other cache holds
/// a line in the model, so no miss is a cache-to-cache transfer (TK17); on one node
/// nothing is remote.
#[test]
fn s3_0_kt_local_and_remote_misses_add_up_to_all_misses() {
    let cycles = 100_000_000;
    let each = |event: &str, nodes: usize| {
        count(&run_with("sparc-kt", &[event], "stream", cycles, KtConfig { nodes, ..KtConfig::default() }), event)
    };
    let all = each("L2_MISSES", 2).unwrap();
    let (local, remote) = (each("L2_MISSES_LOCAL", 2).unwrap(), each("L2_MISSES_REMOTE", 2).unwrap());
    assert!(local > 0 && remote > 0, "two nodes see both kinds: {local} {remote}");
    assert_eq!(local + remote, all);
    assert_eq!(each("L2_MISSES_CACHE_TO_CACHE", 2), Some(0));
    assert_eq!(each("L2_MISSES_REMOTE", 1), Some(0));
    assert_eq!(each("L2_MISSES_LOCAL", 1), Some(all));
}

/// TK8: one PERF_CONFIG serves the machine, so two kinds of miss take turns on the
/// strand counters, and perf-style scaling estimates each.
#[test]
fn tk8_two_kinds_of_miss_are_multiplexed() {
    let r = run("sparc-kt", &["L2_MISSES_LOCAL", "L2_MISSES_REMOTE"], "stream", 100_000_000);
    assert!(r.events.iter().all(|e| e.scaled && e.running > 0 && e.running < e.enabled));
    assert!(r.notes.iter().any(|n| n.contains("multiplexed")));
}

/// §2.2: the DRAM counters of every MCU of every node count all the memory traffic.
#[test]
fn s2_2_kt_dram_counters_count_every_mcus_traffic() {
    let cycles = 100_000_000;
    let r = run("sparc-kt", &["sparc-kt-dram::ALL_READS", "sparc-kt-dram::ALL_WRITES"], "stream", cycles);
    let truth = truth("sparc-kt", "stream", cycles, |_| true);
    assert_eq!(count(&r, "ALL_READS"), Some(truth.get(Signal::MemoryReads)));
    assert_eq!(count(&r, "ALL_WRITES"), Some(truth.get(Signal::MemoryWrites)));
}

/// §3.0, §3.2: the driver negotiates group 0x209 and programs through kt_set_perfreg:
/// PERF_CONFIG reaches every L2 bank, the trace bits every strand's PCR.
#[test]
fn s3_kt_driver_programs_through_kt_set_perfreg() {
    let cat = Catalog::builtin();
    let pmu = cat.pmu("sparc-kt").unwrap();
    let set = encode_set(pmu, &sels(&cat, "sparc-kt", &["L2_MISSES_REMOTE:u"])).unwrap();
    let mut driver = KtDriver::new(KtConfig { nodes: 2, ..KtConfig::default() }, 8).unwrap();
    assert_eq!(driver.hypervisor().version(group::KT_CPU), Some((1, 0)));
    driver.start(&set);
    let kt = driver.hypervisor().kt().unwrap();
    for (node, bank) in [(0, 0), (1, 15)] {
        assert_eq!(L2_PERF_CONFIG.get(kt.l2_bank(node, bank).unwrap()), PERF_CONFIG_REMOTE);
    }
    for strand in 0..8 {
        let pcr = kt.pcr(strand).unwrap();
        assert_eq!((UT.get(pcr), ST.get(pcr), arch_kt::HT.get(pcr)), (1, 0, 0));
    }
}

/// §3.2 EWOULDBLOCK and §3.0 "must handle such a failure gracefully": while another
/// strand propagates PERF_CONFIG the misses are not counted, the DRAM counters still are,
/// and a note says why.
#[test]
fn s3_2_kt_ewouldblock_leaves_the_misses_out_and_the_run_goes_on() {
    let kt = KtConfig { nodes: 2, l2_busy: true, ..KtConfig::default() };
    let r = run_with("sparc-kt", &["L2_MISSES", "sparc-kt-dram::ALL_READS"], "stream", 50_000_000, kt);
    assert_eq!(count(&r, "L2_MISSES"), None);
    assert!(count(&r, "ALL_READS") > Some(0));
    assert!(r.notes.iter().any(|n| n.contains("EWOULDBLOCK") && n.contains("L2_MISSES")), "{:?}", r.notes);
}

/// §3.2 EWOULDBLOCK is transient: once the other strand's propagation ends, the
/// driver's next start programs PERF_CONFIG and counts.
#[test]
fn s3_2_kt_ewouldblock_ends_with_the_propagation() {
    let cat = Catalog::builtin();
    let pmu = cat.pmu("sparc-kt").unwrap();
    let set = encode_set(pmu, &sels(&cat, "sparc-kt", &["L2_MISSES"])).unwrap();
    let mut driver = KtDriver::new(KtConfig { l2_busy: true, ..KtConfig::default() }, 8).unwrap();
    let mut cursor = stream("sparc-kt", "stream");
    driver.start(&set);
    driver.run(&mut cursor, 1_000_000);
    assert_eq!(totals(&driver.stop("sparc-kt")), vec![None]);
    driver.hypervisor_mut().kt_mut().unwrap().set_l2_busy(false);
    driver.start(&set);
    driver.run(&mut cursor, 10_000_000);
    assert!(totals(&driver.stop("sparc-kt"))[0] > Some(0));
}

/// §3.2 ENOACCESS: an MCU whose registers the guest may not access is left out; the
/// other MCUs are counted and the note names the register.
#[test]
fn s3_2_kt_enoaccess_on_one_mcu_counts_the_others() {
    let cycles = 100_000_000;
    // PerfReg# 5 is NODE0_MCU1_PCR (§3.1).
    let kt = KtConfig { nodes: 2, denied_set: vec![5], ..KtConfig::default() };
    let r = run_with("sparc-kt", &["sparc-kt-dram::ALL_READS"], "stream", cycles, kt);
    let full = run("sparc-kt", &["sparc-kt-dram::ALL_READS"], "stream", cycles);
    let (part, all) = (count(&r, "ALL_READS").unwrap(), count(&full, "ALL_READS").unwrap());
    assert!(part > 0 && part < all, "{part} of {all}");
    assert!(r.notes.iter().any(|n| n.contains("node 0 MCU1") && n.contains("PerfReg# 5") && n.contains("ENOACCESS")), "{:?}", r.notes);
}

/// ENOACCESS on a read (kt_get_perfreg) drops the MCU at the first read.
#[test]
fn s3_2_kt_enoaccess_on_every_read_leaves_dram_uncounted() {
    let kt = KtConfig { nodes: 1, denied_get: vec![3, 4, 6, 7], ..KtConfig::default() };
    let r = run_with("sparc-kt", &["sparc-kt-dram::ALL_READS"], "stream", 10_000_000, kt);
    assert_eq!(count(&r, "ALL_READS"), None);
    assert!(r.notes.iter().any(|n| n.contains("kt_get_perfreg") && n.contains("ENOACCESS")), "{:?}", r.notes);
}

/// §3.0: "The access to write to the HT bit can be denied, in which case the sun4v API
/// returns ENOACCESS": the driver writes the PCR without HT and counts the other modes.
#[test]
fn s3_0_kt_denied_ht_counts_the_other_modes() {
    let cycles = 50_000_000;
    let denied = KtConfig { nodes: 2, ht_allowed: false, ..KtConfig::default() };
    let r = run_with("sparc-kt", &["L2_MISSES:u:k:h"], "stream", cycles, denied);
    let uk = run("sparc-kt", &["L2_MISSES:u:k"], "stream", cycles);
    assert_eq!(count(&r, "L2_MISSES:u:k:h"), count(&uk, "L2_MISSES:u:k"));
    assert!(r.notes.iter().any(|n| n.contains("PCR.HT")), "{:?}", r.notes);
}

/// A stream of `reads` memory reads per cycle to one line, on strand 0 in user mode.
fn reads_cursor(reads: u8) -> Cursor {
    let mut span = Span::new(1000, 0x1_0000).with(Signal::MemoryReads, reads);
    span.mem = Some(MemRef { addr: 0, stride: 0, size: 64, write: false });
    Cursor::new(Box::new(std::iter::repeat(Block { body: vec![span], repeat: 1 << 20 })))
}

/// TK16: pic0 is 32 bits and raises no interrupt; polling keeps the 64-bit total exact
/// through several wraps.
#[test]
fn tk16_pic0_wraps_are_counted_exactly() {
    let cat = Catalog::builtin();
    let pmu = cat.pmu("sparc-kt").unwrap();
    let set = encode_set(pmu, &sels(&cat, "sparc-kt", &["L2_MISSES"])).unwrap();
    let mut driver = KtDriver::new(KtConfig::default(), 8).unwrap();
    let mut cursor = reads_cursor(8);
    driver.start(&set);
    let cycles = 1_200_000_000u64;
    assert_eq!(driver.run(&mut cursor, cycles), cycles);
    let expect = 8 * cycles;
    assert!(expect > 2 << 32, "pic0 wrapped twice");
    assert_eq!(totals(&driver.stop("sparc-kt")), vec![Some(expect)]);
}

/// TK11: a 31-bit DRAM counter wraps, setting its sticky bit; the driver's reads keep
/// the total exact.
#[test]
fn tk11_dram_wraps_are_counted_exactly() {
    let cat = Catalog::builtin();
    let pmu = cat.pmu("sparc-kt-dram").unwrap();
    let set = encode_set(pmu, &sels(&cat, "sparc-kt-dram", &["ALL_READS"])).unwrap();
    let mut driver = KtDriver::new(KtConfig::default(), 8).unwrap();
    let mut cursor = reads_cursor(8);
    driver.start(&set);
    let cycles = 600_000_000u64;
    driver.run(&mut cursor, cycles);
    assert!(8 * cycles > 2 << 31, "the counter wrapped twice");
    assert_eq!(totals(&driver.stop("sparc-kt-dram")), vec![Some(8 * cycles)]);
}

/// The KT machine's configuration is checked before anything runs.
#[test]
fn a_kt_machine_that_cannot_exist_is_a_clear_error() {
    let cat = Catalog::builtin();
    let opts = StatOptions { cycles: 1000, kt: KtConfig { nodes: 5, ..KtConfig::default() }, ..StatOptions::default() };
    let err = stat(&cat, &sels(&cat, "sparc-kt", &["L2_MISSES"]), &opts, &mut |_| {}).unwrap_err();
    assert!(matches!(err, StatError::Machine(_)), "{err}");
    assert!(err.to_string().contains("1 to 4 nodes"), "{err}");
}

/// T4 and KT memory controllers are different machines.
#[test]
fn kt_and_t4_pmus_cannot_share_a_run() {
    let cat = Catalog::builtin();
    let sels = vec![cat.resolve("sparc-kt::L2_MISSES", "sparc-kt").unwrap(), cat.resolve("sparc-t4-dram::ALL_READS", "sparc-kt").unwrap()];
    let err = stat(&cat, &sels, &StatOptions { cycles: 1000, ..StatOptions::default() }, &mut |_| {}).unwrap_err();
    assert!(matches!(err, StatError::MixedMachines { .. }), "{err}");
}
