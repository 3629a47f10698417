//! What `pmu report` says of a recording: every sample's capture registers decoded
//! with `pmukit_arch::montecito::{ear, etb}` and summarised (hot instruction and data
//! addresses, a latency histogram per level of the memory hierarchy, branch traces and
//! retired-IP histories). The command line draws it (`crates/cli/src/output/report.rs`).

use std::collections::HashMap;

use pmukit_arch::montecito::capture::{dear_threshold, iear_cache_mode, iear_captures, tlb_kinds, DEAR_MODE, DEAR_UMASK};
use pmukit_arch::montecito::ear::{self, Miss, Served};
use pmukit_arch::montecito::etb::{self, Retired, Snapshot, Traced};
use serde::Serialize;

use super::{Armed, Recording, Sample, MAX_EVENTS};

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
    /// The retired-IP entries of every sample's history (what `ips` count, and
    /// their percentages are of).
    pub entries: u64,
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

/// The names a recording gives the second level of each side (`Recording::levels`).
pub const DATA_L2: &str = "L2";
pub const INSTRUCTION_L2: &str = "L2I";

/// One EAR's levels: without the other side's L2 (`other`), unless the recording lacks
/// its own (`own`): an older one names only the data side's, which both then use.
fn side(levels: &[(String, u64)], other: &str, own: &str) -> Vec<(String, u64)> {
    if !levels.iter().any(|(l, _)| l == own) {
        return levels.to_vec();
    }
    levels.iter().filter(|(l, _)| l != other).cloned().collect()
}

/// Latencies into the recording's levels, in power-of-two buckets: each goes to the
/// level whose load-to-use latency is nearest on a logarithmic scale (a miss that
/// found its line already on its way from memory waits less than memory's latency, but
/// far more than the L3's).
struct Histograms(Vec<LevelHistogram>);

impl Histograms {
    fn new(levels: &[(String, u64)]) -> Histograms {
        Histograms(
            levels
                .iter()
                .map(|(level, cycles)| LevelHistogram { level: level.clone(), cycles: *cycles, samples: 0, buckets: Vec::new() })
                .collect(),
        )
    }

    fn add(&mut self, l: u64) {
        let distance = |l: u64, c: u64| ((l.max(1) as f64).ln() - (c.max(1) as f64).ln()).abs();
        let nearest =
            self.0.iter().enumerate().min_by(|(_, a), (_, b)| distance(l, a.cycles).total_cmp(&distance(l, b.cycles))).map(|(i, _)| i);
        let Some(h) = nearest.and_then(|i| self.0.get_mut(i)) else { return };
        h.samples += 1;
        let from = if l < 4 { 0 } else { 1 << (63 - l.leading_zeros()) };
        let to = if from == 0 { 4 } else { from * 2 };
        match h.buckets.iter_mut().find(|b| b.from == from) {
            Some(b) => b.samples += 1,
            None => h.buckets.push(Bucket { from, to, samples: 1 }),
        }
    }

    fn finish(mut self) -> Vec<LevelHistogram> {
        for h in &mut self.0 {
            h.buckets.sort_by_key(|b| b.from);
        }
        self.0.retain(|h| h.samples > 0);
        self.0
    }
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

/// Decode and summarise every sample of a recording held whole.
pub fn analyse(r: &Recording, file: &str, n: usize) -> Analysis {
    let mut a = Analyser::new(r);
    for s in &r.samples {
        a.add(s);
    }
    a.finish(r, file, n)
}

/// A report made as the samples are read: each decoded and tallied, none kept.
pub struct Analyser {
    armed: Armed,
    pmc40: u64,
    pmc37: u64,
    samples: [u64; MAX_EVENTS],
    dear: Tally,
    iear: Tally,
    branches: Branches,
    ip_ear: IpEar,
}

impl Analyser {
    /// For samples of the recording whose head is `head` (its registers and levels:
    /// each EAR sorts latencies by its own side's, `side`).
    pub fn new(head: &Recording) -> Analyser {
        Analyser {
            armed: Armed::of(head.registers.iter().map(|(n, v)| (n.as_str(), *v))),
            pmc40: register(head, "PMC40"),
            pmc37: register(head, "PMC37"),
            samples: [0; MAX_EVENTS],
            dear: Tally::new(&side(&head.levels, INSTRUCTION_L2, DATA_L2)),
            iear: Tally::new(&side(&head.levels, DATA_L2, INSTRUCTION_L2)),
            branches: Branches::default(),
            ip_ear: IpEar::default(),
        }
    }

    pub fn add(&mut self, s: &Sample) {
        for &e in &s.events {
            if let Some(c) = self.samples.get_mut(e) {
                *c += 1;
            }
        }
        if let Some([a, b, c]) = s.dear.filter(|_| self.armed.dear) {
            let d = ear::dear_sample(self.pmc40, a, b, c);
            self.dear.add(
                d.and_then(|d| d.instruction).map(|(bundle, slot)| bundle | u64::from(slot)),
                d.and_then(|d| d.data),
                d.map(|d| d.miss),
            );
        }
        if let Some([a, b]) = s.iear.filter(|_| self.armed.iear) {
            let d = ear::iear_sample(self.pmc37, a, b);
            self.iear.add(d.map(|d| d.line), None, d.map(|d| d.miss));
        }
        if let Some(t) = s.trace.filter(|_| self.armed.trace) {
            let snap = Snapshot { pmd38: t.pmd38, pmd39: t.pmd39, entries: t.entries };
            match self.armed.ip_ear_delay {
                Some(_) => self.ip_ear.add(&snap),
                None => self.branches.add(&snap),
            }
        }
    }

    /// The report, with the run's tail (`r`: cycles and counts) and the `n` hottest
    /// of each list.
    pub fn finish(self, r: &Recording, file: &str, n: usize) -> Analysis {
        let events = r
            .events
            .iter()
            .enumerate()
            .map(|(i, e)| EventLine { name: e.name.clone(), count: e.count, samples: self.samples.get(i).copied().unwrap_or(0) })
            .collect();
        let dear_mode = match DEAR_MODE.get(self.pmc40) {
            0b00 => (
                "cache",
                dear_threshold(DEAR_UMASK.get(self.pmc40))
                    .map_or_else(|| "nothing (umask 1011-1111)".to_string(), |t| format!("load misses of latency >= {t} cycles")),
            ),
            0b01 => ("tlb", tlb_kinds(DEAR_UMASK.get(self.pmc40) >> 1)),
            _ => ("alat", "failed ALAT checks (chk.a, ld.c)".to_string()),
        };
        let iear_mode = if iear_cache_mode(self.pmc37) { "cache" } else { "tlb" };
        Analysis {
            file: file.to_string(),
            pmu: r.pmu.clone(),
            program: r.program.clone(),
            seed: r.seed,
            threads: r.threads,
            cycles: r.cycles,
            period: r.period,
            events,
            dear: self.armed.dear.then(|| self.dear.report(dear_mode.0, dear_mode.1, n)),
            iear: self.armed.iear.then(|| self.iear.report(iear_mode, iear_captures(self.pmc37), n)),
            branches: (self.armed.trace && self.armed.ip_ear_delay.is_none()).then(|| self.branches.report(n)),
            ip_ear: self.armed.ip_ear_delay.map(|_| self.ip_ear.report(n)),
        }
    }
}

/// What one EAR's samples hold, gathered as they are decoded.
struct Tally {
    samples: u64,
    valid: u64,
    instructions: HashMap<u64, u64>,
    data: HashMap<u64, u64>,
    latencies: Histograms,
    served: HashMap<&'static str, u64>,
}

impl Tally {
    fn new(levels: &[(String, u64)]) -> Tally {
        Tally {
            samples: 0,
            valid: 0,
            instructions: HashMap::new(),
            data: HashMap::new(),
            latencies: Histograms::new(levels),
            served: HashMap::new(),
        }
    }

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
            Miss::Cache { latency, .. } => self.latencies.add(latency),
            Miss::Tlb { served } => *self.served.entry(served_name(served)).or_default() += 1,
            Miss::Alat => {}
        }
    }

    fn report(self, mode: &'static str, captures: String, n: usize) -> EarReport {
        let mut served: Vec<(String, u64)> = self.served.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
        served.sort();
        EarReport {
            mode,
            captures,
            samples: self.samples,
            valid: self.valid,
            instructions: top(self.instructions, n),
            data: top(self.data, n),
            latency: self.latencies.finish(),
            served,
        }
    }
}

/// The trace buffer's branch captures.
#[derive(Default)]
struct Branches {
    samples: u64,
    by: HashMap<u64, HotBranch>,
    last: Vec<Traced>,
}

impl Branches {
    fn add(&mut self, snap: &Snapshot) {
        self.samples += 1;
        self.last = etb::branch_trace(snap);
        for t in &self.last {
            if let Traced::Source { bundle, slot, mispredicted, .. } = *t {
                let b = self.by.entry(bundle).or_insert(HotBranch { bundle, captured: 0, taken: 0, mispredicted: 0 });
                b.captured += 1;
                b.taken += u64::from(slot.is_some());
                b.mispredicted += u64::from(mispredicted);
            }
        }
    }

    fn report(self, n: usize) -> BranchReport {
        let mut branches: Vec<HotBranch> = self.by.into_values().collect();
        branches.sort_by(|a, b| b.captured.cmp(&a.captured).then(a.bundle.cmp(&b.bundle)));
        branches.truncate(n);
        BranchReport { samples: self.samples, branches, last: self.last }
    }
}

/// The IP-EAR's retired-IP histories.
#[derive(Default)]
struct IpEar {
    samples: u64,
    entries: u64,
    ips: HashMap<u64, u64>,
    last: Vec<Retired>,
}

impl IpEar {
    fn add(&mut self, snap: &Snapshot) {
        self.samples += 1;
        self.last = etb::ip_history(snap);
        for retired in self.last.iter().filter(|x| !x.early_freeze) {
            *self.ips.entry(retired.ip).or_default() += 1;
            self.entries += 1;
        }
    }

    fn report(self, n: usize) -> IpEarReport {
        IpEarReport { samples: self.samples, entries: self.entries, ips: top(self.ips, n), last: self.last }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// §2.1.2: the L2D's load-to-use latency is 5 cycles, the L2I's 7; each EAR sorts
    /// by its own side's, and a recording without `L2I` by the data side's.
    #[test]
    fn each_ear_sorts_by_its_own_sides_l2() {
        let level = |n: &str, c: u64| (n.to_string(), c);
        let both = [level(DATA_L2, 5), level(INSTRUCTION_L2, 7), level("L3", 14), level("memory", 200)];
        let names = |v: Vec<(String, u64)>| v.into_iter().map(|(n, _)| n).collect::<Vec<_>>();
        assert_eq!(names(side(&both, INSTRUCTION_L2, DATA_L2)), ["L2", "L3", "memory"]);
        assert_eq!(names(side(&both, DATA_L2, INSTRUCTION_L2)), ["L2I", "L3", "memory"]);
        let older = [level(DATA_L2, 5), level("L3", 14), level("memory", 200)];
        assert_eq!(names(side(&older, DATA_L2, INSTRUCTION_L2)), ["L2", "L3", "memory"]);
    }
}
