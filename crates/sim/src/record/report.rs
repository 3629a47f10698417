//! What `pmu report` says of a recording: every sample's capture registers decoded
//! with `pmukit_arch::montecito::{ear, etb}` and summarised (hot instruction and data
//! addresses, a latency histogram per level of the memory hierarchy, branch traces and
//! retired-IP histories). The command line draws it (`crates/cli/src/output/report.rs`).

use std::collections::HashMap;

use pmukit_arch::montecito::capture::{dear_threshold, iear_cache_mode, iear_captures, tlb_kinds, DEAR_MODE, DEAR_UMASK};
use pmukit_arch::montecito::ear::{self, Miss, Served};
use pmukit_arch::montecito::etb::{self, Retired, Snapshot, Traced};
use serde::Serialize;

use super::{Armed, Recording};

/// Everything the report says.
#[derive(Debug, Serialize)]
pub struct Analysis {
    pub file: String,
    pub pmu: String,
    pub program: String,
    pub seed: u64,
    pub threads: usize,
    pub cycles: u64,
    pub period: u64,
    pub events: Vec<EventLine>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dear: Option<EarReport>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iear: Option<EarReport>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub branches: Option<BranchReport>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ip_ear: Option<IpEarReport>,
}

#[derive(Debug, Serialize)]
pub struct EventLine {
    pub name: String,
    pub count: u64,
    pub samples: u64,
}

/// An address and how many samples hold it.
#[derive(Debug, Serialize)]
pub struct Hot {
    pub address: u64,
    pub samples: u64,
}

/// A data or instruction EAR's captures.
#[derive(Debug, Serialize)]
pub struct EarReport {
    /// cache, tlb or alat, and what the unit mask captures.
    pub mode: &'static str,
    pub captures: String,
    pub samples: u64,
    /// Samples whose registers held a capture.
    pub valid: u64,
    /// Instructions (Itanium address: bundle + slot; the I-EAR's 32-byte lines).
    pub instructions: Vec<Hot>,
    /// Data addresses, 64-byte lines (D-EAR cache and TLB modes).
    pub data: Vec<Hot>,
    /// Cache mode: per level of the hierarchy.
    pub latency: Vec<LevelHistogram>,
    /// TLB mode: where the misses were served.
    pub served: Vec<(String, u64)>,
}

/// The latencies of one level: those at least its load-to-use latency and below the
/// next level's, in power-of-two buckets.
#[derive(Debug, Serialize)]
pub struct LevelHistogram {
    pub level: String,
    pub cycles: u64,
    pub samples: u64,
    pub buckets: Vec<Bucket>,
}

/// Latencies in [from, to).
#[derive(Debug, Serialize)]
pub struct Bucket {
    pub from: u64,
    pub to: u64,
    pub samples: u64,
}

#[derive(Debug, Serialize)]
pub struct BranchReport {
    pub samples: u64,
    /// Branches by source, most captured first.
    pub branches: Vec<HotBranch>,
    /// The last sample's trace, oldest first.
    pub last: Vec<Traced>,
}

#[derive(Debug, Serialize)]
pub struct HotBranch {
    pub bundle: u64,
    pub captured: u64,
    pub taken: u64,
    pub mispredicted: u64,
}

#[derive(Debug, Serialize)]
pub struct IpEarReport {
    pub samples: u64,
    pub ips: Vec<Hot>,
    /// The last sample's history, oldest first.
    pub last: Vec<Retired>,
}

/// The `n` most frequent keys of `counts`, then by address.
fn top(counts: HashMap<u64, u64>, n: usize) -> Vec<Hot> {
    let mut v: Vec<Hot> = counts.into_iter().map(|(address, samples)| Hot { address, samples }).collect();
    v.sort_by(|a, b| b.samples.cmp(&a.samples).then(a.address.cmp(&b.address)));
    v.truncate(n);
    v
}

/// Latencies into the recording's levels, in power-of-two buckets: each goes to the
/// level whose load-to-use latency is nearest on a logarithmic scale (a miss that
/// found its line already on its way from memory waits less than memory's latency, but
/// far more than the L3's).
fn histograms(latencies: &[u64], levels: &[(String, u64)]) -> Vec<LevelHistogram> {
    let mut out: Vec<LevelHistogram> = levels
        .iter()
        .map(|(level, cycles)| LevelHistogram { level: level.clone(), cycles: *cycles, samples: 0, buckets: Vec::new() })
        .collect();
    let distance = |l: u64, c: u64| ((l.max(1) as f64).ln() - (c.max(1) as f64).ln()).abs();
    for &l in latencies {
        let nearest =
            out.iter().enumerate().min_by(|(_, a), (_, b)| distance(l, a.cycles).total_cmp(&distance(l, b.cycles))).map(|(i, _)| i);
        let Some(h) = nearest.and_then(|i| out.get_mut(i)) else { continue };
        h.samples += 1;
        let from = if l < 4 { 0 } else { 1 << (63 - l.leading_zeros()) };
        let to = if from == 0 { 4 } else { from * 2 };
        match h.buckets.iter_mut().find(|b| b.from == from) {
            Some(b) => b.samples += 1,
            None => h.buckets.push(Bucket { from, to, samples: 1 }),
        }
    }
    for h in &mut out {
        h.buckets.sort_by_key(|b| b.from);
    }
    out.retain(|h| h.samples > 0);
    out
}

fn served_name(s: Served) -> &'static str {
    match s {
        Served::L2Tlb => "L2 TLB",
        Served::Vhpt => "VHPT (hardware walk)",
        Served::Fault => "TLB miss fault",
    }
}

fn register(r: &Recording, name: &str) -> u64 {
    r.registers.iter().find(|(n, _)| n == name).map_or(0, |&(_, v)| v)
}

/// Decode and summarise every sample.
pub fn analyse(r: &Recording, file: &str, n: usize) -> Analysis {
    let armed = Armed::of(r.registers.iter().map(|(n, v)| (n.as_str(), *v)));
    let mut samples = vec![0u64; r.events.len()];
    for s in &r.samples {
        for &e in &s.events {
            if let Some(c) = samples.get_mut(e) {
                *c += 1;
            }
        }
    }
    let events = r.events.iter().zip(samples).map(|(e, samples)| EventLine { name: e.name.clone(), count: e.count, samples }).collect();
    Analysis {
        file: file.to_string(),
        pmu: r.pmu.clone(),
        program: r.program.clone(),
        seed: r.seed,
        threads: r.threads,
        cycles: r.cycles,
        period: r.period,
        events,
        dear: armed.dear.then(|| dear(r, n)),
        iear: armed.iear.then(|| iear(r, n)),
        branches: (armed.trace && armed.ip_ear_delay.is_none()).then(|| branches(r, n)),
        ip_ear: armed.ip_ear_delay.map(|_| ip_ear(r, n)),
    }
}

/// What one EAR's samples hold, gathered as they are decoded.
#[derive(Default)]
struct Tally {
    samples: u64,
    valid: u64,
    instructions: HashMap<u64, u64>,
    data: HashMap<u64, u64>,
    latencies: Vec<u64>,
    served: HashMap<&'static str, u64>,
}

impl Tally {
    /// A sample's capture, `None` when its registers held none.
    fn add(&mut self, instruction: Option<u64>, data: Option<u64>, miss: Option<Miss>) {
        self.samples += 1;
        let Some(miss) = miss else { return };
        self.valid += 1;
        if let Some(i) = instruction {
            *self.instructions.entry(i).or_default() += 1;
        }
        if let Some(d) = data {
            *self.data.entry(d & !0x3f).or_default() += 1;
        }
        match miss {
            Miss::Cache { latency, .. } => self.latencies.push(latency),
            Miss::Tlb { served } => *self.served.entry(served_name(served)).or_default() += 1,
            Miss::Alat => {}
        }
    }

    fn report(self, mode: &'static str, captures: String, levels: &[(String, u64)], n: usize) -> EarReport {
        let mut served: Vec<(String, u64)> = self.served.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
        served.sort();
        EarReport {
            mode,
            captures,
            samples: self.samples,
            valid: self.valid,
            instructions: top(self.instructions, n),
            data: top(self.data, n),
            latency: histograms(&self.latencies, levels),
            served,
        }
    }
}

fn dear(r: &Recording, n: usize) -> EarReport {
    let pmc40 = register(r, "PMC40");
    let mut tally = Tally::default();
    for [a, b, c] in r.samples.iter().filter_map(|s| s.dear) {
        let d = ear::dear_sample(pmc40, a, b, c);
        tally.add(d.and_then(|d| d.instruction).map(|(bundle, slot)| bundle | u64::from(slot)), d.and_then(|d| d.data), d.map(|d| d.miss));
    }
    let (mode, captures) = match DEAR_MODE.get(pmc40) {
        0b00 => (
            "cache",
            dear_threshold(DEAR_UMASK.get(pmc40))
                .map_or_else(|| "nothing (umask 1011-1111)".to_string(), |t| format!("load misses of latency >= {t} cycles")),
        ),
        0b01 => ("tlb", tlb_kinds(DEAR_UMASK.get(pmc40) >> 1)),
        _ => ("alat", "failed ALAT checks (chk.a, ld.c)".to_string()),
    };
    tally.report(mode, captures, &r.levels, n)
}

fn iear(r: &Recording, n: usize) -> EarReport {
    let pmc37 = register(r, "PMC37");
    let mut tally = Tally::default();
    for [a, b] in r.samples.iter().filter_map(|s| s.iear) {
        let d = ear::iear_sample(pmc37, a, b);
        tally.add(d.map(|d| d.line), None, d.map(|d| d.miss));
    }
    let mode = if iear_cache_mode(pmc37) { "cache" } else { "tlb" };
    tally.report(mode, iear_captures(pmc37), &r.levels, n)
}

fn snapshots(r: &Recording) -> impl Iterator<Item = Snapshot> + '_ {
    r.samples.iter().filter_map(|s| s.trace).map(|t| Snapshot { pmd38: t.pmd38, pmd39: t.pmd39, entries: t.entries })
}

fn branches(r: &Recording, n: usize) -> BranchReport {
    let mut by: HashMap<u64, HotBranch> = HashMap::new();
    let (mut samples, mut last) = (0, Vec::new());
    for snap in snapshots(r) {
        samples += 1;
        last = etb::branch_trace(&snap);
        for t in &last {
            if let Traced::Source { bundle, slot, mispredicted, .. } = *t {
                let b = by.entry(bundle).or_insert(HotBranch { bundle, captured: 0, taken: 0, mispredicted: 0 });
                b.captured += 1;
                b.taken += u64::from(slot.is_some());
                b.mispredicted += u64::from(mispredicted);
            }
        }
    }
    let mut branches: Vec<HotBranch> = by.into_values().collect();
    branches.sort_by(|a, b| b.captured.cmp(&a.captured).then(a.bundle.cmp(&b.bundle)));
    branches.truncate(n);
    BranchReport { samples, branches, last }
}

fn ip_ear(r: &Recording, n: usize) -> IpEarReport {
    let mut ips = HashMap::new();
    let (mut samples, mut last) = (0, Vec::new());
    for snap in snapshots(r) {
        samples += 1;
        last = etb::ip_history(&snap);
        for retired in last.iter().filter(|x| !x.early_freeze) {
            *ips.entry(retired.ip).or_default() += 1;
        }
    }
    IpEarReport { samples, ips: top(ips, n), last }
}
