//! The capture hardware of one thread (§3.3.8-§3.3.10): the instruction EAR (PMC37,
//! PMD34-35), the data EAR (PMC40, PMD32, PMD33, PMD36) and the execution trace buffer
//! (PMC39 and PMC42, PMD38, PMD39, PMD48-63) in its two modes, latching what the
//! machine's spans say (`stream::Detail`) into the data registers, in the formats of
//! `pmukit_arch::montecito::{ear, etb}`.
//!
//! One function, [`MontecitoThread::captured`], decides what a span gives each unit:
//! the counters of DATA_EAR_EVENTS, L1I_EAR_EVENTS and BRANCH_EVENT count it, and
//! [`MontecitoThread::capture`] latches it, so that a count is the number of captures.
//! Addresses are Itanium ones: a program address `a` is slot `a / 4 mod 3` of bundle
//! `(a / 12) × 16` (ERRATA MMC2). The readings of the spec this makes are ERRATA MD52-MD56.

use pmukit_arch::montecito::capture::{
    dear_threshold, iear_capture, ip_ear_mode, IearCapture, DEAR_MODE, DEAR_UMASK, IEAR_CACHE_UMASK, IEAR_CT, IEAR_PM, IEAR_TLB_UMASK,
    IPEAR_DELAY, IPEAR_MODE,
};
use pmukit_arch::montecito::etb::{self, extension_bit, FlowChange, PsrView};
use pmukit_arch::montecito::pmu;
use pmukit_arch::montecito::registers::{ISM, ISM_PROPER, PM, PSR_IS, PSR_PP, PSR_UP};

use super::qualify::{passes, Reach};
use super::{span_cpl, Montecito, MontecitoThread, THREADS};
use crate::machine::montecito::{bundle_address, slot};
use crate::program::INSN;
use crate::stream::{Signal, Span};

/// The units a span gives an event to, a bit each.
pub(super) const DEAR: u8 = 1;
pub(super) const IEAR: u8 = 2;
pub(super) const ETB: u8 = 4;
/// The IP-EAR records the span's retirement (MD54: BRANCH_EVENT counts it).
pub(super) const IPEAR: u8 = 8;

/// PMC37, 39, 40, 42 among PMC32-42.
const PMC37: usize = 37 - 32;
const PMC39: usize = 39 - 32;
const PMC40: usize = 40 - 32;
const PMC42: usize = 42 - 32;
/// PMD32-36, 38, 39 and 48 among PMD32-63.
const PMD32: usize = 0;
const PMD33: usize = 1;
const PMD34: usize = 2;
const PMD35: usize = 3;
const PMD36: usize = 4;
const PMD38: usize = 6;
const PMD39: usize = 7;
const PMD48: usize = 16;
/// The trace buffer's entries (Table 3-28: ebi 0-15).
const ENTRIES: u64 = 16;
/// PMD33 in data cache mode: latency 12:0, overflow 13, stat 15:14 (Table 3-22).
const DEAR_LATENCY_BITS: u32 = 13;
/// PMD35 in cache mode: latency 11:0, overflow 12 (Table 3-17).
const IEAR_LATENCY_BITS: u32 = 12;
/// The IP-EAR's elapsed-cycle count saturates at six bits (Table 3-31).
const CYCL_MAX: u64 = 63;

/// The counting events of the capture units (chapter 4): what their counters count.
pub(super) const BRANCH_EVENT: u8 = pmu::BRANCH_EVENT as u8;
pub(super) const L1I_EAR_EVENTS: u8 = pmu::L1I_EAR_EVENTS as u8;
pub(super) const DATA_EAR_EVENTS: u8 = pmu::DATA_EAR_EVENTS as u8;

/// How qualification reaches each unit: as it reaches the unit's counting event (MD53).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Reaches {
    dear: Reach,
    iear: Reach,
    etb: Reach,
}

impl Reaches {
    pub(super) fn new() -> Reaches {
        Reaches { dear: Reach::of(DATA_EAR_EVENTS, 0), iear: Reach::of(L1I_EAR_EVENTS, 0), etb: Reach::of(BRANCH_EVENT, 0) }
    }
}

/// How a span ran as a thread sees it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Ran {
    /// On this thread (else on the other).
    pub(super) own: bool,
    /// Monitoring was not frozen.
    pub(super) live: bool,
    /// The thread's privilege level.
    pub(super) cpl: u64,
    /// The span's qualification tags (`Qualifier::tags`).
    pub(super) tags: u64,
}

/// The trace buffer's state beyond its registers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct Trace {
    /// Cycles since the thread last retired an instruction (the IP-EAR's cycl).
    since: u64,
    /// A pipeline flush since the IP-EAR's last entry (PMD39 f).
    flushed: bool,
    /// Once the PMU froze, the cycles the IP-EAR captures on before it freezes too
    /// (PMC42.delay, §3.3.10.2); `Some(0)`: frozen. `None` while the PMU runs.
    delay_left: Option<u64>,
    /// The IP of the thread's last retiring span: what an entry written in another
    /// thread's cycle holds (Table 3-31, "Retired IP value").
    last_ip: u64,
}

/// What a span gives the data EAR: PMD33.stat, the latency (cache mode).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct DearEvent {
    stat: u64,
    latency: Option<u16>,
}

/// The Itanium address (bundle address plus slot) of the instruction at program
/// address `ip` (ERRATA MMC2): what the capture registers report it as.
pub fn itanium_ip(ip: u64) -> u64 {
    bundle_address(ip) | slot(ip)
}

/// The first bundle of the two-bundle dispersal window the span's group issued from,
/// and whether the instruction at `ip` is in its second bundle (PMD36.bn, PMD39.b1).
fn window<const F: usize>(span: &Span<F>, ip: u64) -> (u64, bool) {
    let first = bundle_address(span.ip);
    let own = bundle_address(ip);
    if own == first.wrapping_add(16) {
        (first, true)
    } else {
        (own, false)
    }
}

/// A latency in a field of `bits` bits with its overflow bit above: the counter wraps.
fn latency_field(latency: u16, bits: u32) -> u64 {
    let l = u64::from(latency);
    (l & ((1 << bits) - 1)) | u64::from(l >> bits != 0) << bits
}

/// The span's data reference is an advanced load's check that failed (§3.3.9.3).
fn alat_failed<const F: usize>(span: &Span<F>) -> bool {
    span.signals.get(Signal::AlatFailedInt) + span.signals.get(Signal::AlatFailedFp) > 0
}

/// The units (`DEAR` 1, `IEAR` 2, `ETB` 4, `IPEAR` 8) that `span` gives an event to on a
/// thread whose capture registers hold `registers` (PMC37, 39, 40, 42 by name, as an
/// encoding gives them; the others at reset), with PSR.up and PSR.pp set and no
/// qualification: what a capture event counts in the span, for listings and tests.
pub fn capture_units<const F: usize>(registers: &[(&str, u64)], span: &Span<F>) -> u8 {
    let mut t = MontecitoThread::reset();
    for &(name, value) in registers {
        let index = name.strip_prefix("PMC").and_then(|n| n.parse::<usize>().ok()).and_then(|n| n.checked_sub(32));
        if let Some(slot) = index.and_then(|i| t.specific_pmc.get_mut(i)) {
            *slot = value;
        }
    }
    t.psr = PSR_UP.set(PSR_PP.set(t.psr, 1), 1);
    t.captured(span, span_cpl(span.privilege), 0x1f)
}

/// What `span` could give each unit programmed to take everything it can (for listing
/// what the machine exercises, `events::per_cycle`).
pub(super) fn reachable<const F: usize>(span: &Span<F>) -> u8 {
    let d = &span.detail;
    let mut bits = 0;
    if span.mem.is_some() && (d.data_latency > 0 || d.data_tlb.is_some() || alat_failed(span)) {
        bits |= DEAR;
    }
    if d.fetch.is_some() {
        bits |= IEAR;
    }
    if span.branch.is_some() {
        bits |= ETB;
    }
    if span.signals.get(Signal::Instructions) > 0 {
        bits |= IPEAR;
    }
    bits
}

impl MontecitoThread {
    fn spmc(&self, i: usize) -> u64 {
        self.specific_pmc.get(i).copied().unwrap_or(0)
    }

    fn set_pmd(&mut self, i: usize, value: u64) {
        if let Some(r) = self.specific_pmd.get_mut(i) {
            *r = value;
        }
    }

    fn pmd(&self, i: usize) -> u64 {
        self.specific_pmd.get(i).copied().unwrap_or(0)
    }

    /// §3.3.9: what `span` gives the data EAR as PMC40 programs it.
    fn dear_event<const F: usize>(&self, span: &Span<F>, cpl: u64) -> Option<DearEvent> {
        let pmc40 = self.spmc(PMC40);
        if span.mem.is_none() || !self.monitors(pmc40, &PM, cpl) || ISM.get(pmc40) != ISM_PROPER {
            return None;
        }
        let d = &span.detail;
        let umask = DEAR_UMASK.get(pmc40);
        match DEAR_MODE.get(pmc40) {
            // §3.3.9.1: load misses at least as long as the threshold (Table 3-21).
            0b00 => {
                let least = dear_threshold(umask)?;
                (d.data_latency > 0 && u64::from(d.data_latency) >= least)
                    .then_some(DearEvent { stat: 0b01, latency: Some(d.data_latency) })
            }
            // §3.3.9.2, Table 3-23: bit 1 L2DTLB, bit 2 VHPT, bit 3 FAULT.
            0b01 => {
                let stat = d.data_tlb?.stat();
                (umask >> stat & 1 == 1).then_some(DearEvent { stat, latency: None })
            }
            // §3.3.9.3: a failing check of an advanced load.
            _ => alat_failed(span).then_some(DearEvent { stat: 0b01, latency: None }),
        }
    }

    /// §3.3.8: what `span`'s fetch gives the instruction EAR as PMC37 programs it:
    /// PMD34.stat and the latency (cache mode).
    fn iear_event<const F: usize>(&self, span: &Span<F>, cpl: u64) -> Option<(u64, Option<u16>)> {
        let pmc37 = self.spmc(PMC37);
        let fetch = span.detail.fetch?;
        if !self.monitors(pmc37, &IEAR_PM, cpl) {
            return None;
        }
        match IEAR_CT.get(pmc37) {
            // §3.3.8.1, Table 3-16: demand misses (and RAB hits) by latency.
            0b10 | 0b11 => {
                let hit = match iear_capture(IEAR_CACHE_UMASK.get(pmc37)) {
                    IearCapture::Latency(least) => fetch.latency > 0 && u64::from(fetch.latency) >= least,
                    IearCapture::Rab => fetch.rab,
                    IearCapture::Undefined => false,
                };
                hit.then_some((0b01, Some(fetch.latency)))
            }
            // §3.3.8.2, Table 3-18: bit 0 L2TLB, bit 1 VHPT, bit 2 FAULT.
            0b00 => {
                let stat = fetch.tlb?.stat();
                (IEAR_TLB_UMASK.get(pmc37) >> (stat - 1) & 1 == 1).then_some((stat, None))
            }
            _ => None,
        }
    }

    /// §3.3.10.1.1: whether the trace buffer in ETB mode captures `span`'s branch.
    fn etb_event<const F: usize>(&self, span: &Span<F>, cpl: u64) -> bool {
        let Some(branch) = span.branch else { return false };
        if IPEAR_MODE.get(self.spmc(PMC42)) != 0 {
            return false;
        }
        let d = &span.detail;
        let change = FlowChange::Branch {
            kind: d.branch_kind,
            taken: branch.taken,
            path_predicted: !d.path_mispredicted,
            target_predicted: !branch.mispredicted || d.path_mispredicted,
        };
        let psr = PsrView { ia32: PSR_IS.get(self.psr) == 1, cpl: cpl as u8, up: PSR_UP.get(self.psr) == 1, pp: PSR_PP.get(self.psr) == 1 };
        etb::captures(self.spmc(PMC39), change, psr)
    }

    /// Whether any capture unit is armed: a plm bit set in PMC37, 39, 40 or 42.
    pub(super) fn arms_capture(&self) -> bool {
        [PMC37, PMC39, PMC40, PMC42].iter().any(|&i| self.spmc(i) & 0xf != 0)
    }

    /// After a PMU freeze, the IP-EAR has cycles to capture still (§3.3.10.2).
    pub(super) fn ip_ear_pending(&self) -> bool {
        ip_ear_mode(self.spmc(PMC42)) && self.trace.delay_left != Some(0)
    }

    /// The trace buffer entries this thread writes in the spans of `body` it runs,
    /// given each span's tags.
    pub(super) fn entries<const F: usize>(&self, body: &[Span<F>], t: usize, tags: impl Fn(&Span<F>) -> u64) -> u64 {
        body.iter()
            .filter(|s| usize::from(s.thread) == t)
            .map(|s| {
                let cpl = span_cpl(s.privilege);
                let bits = self.captured(s, cpl, tags(s));
                2 * u64::from(bits & ETB != 0) + if bits & IPEAR != 0 { s.cycles } else { 0 }
            })
            .fold(0, u64::saturating_add)
    }

    /// `n` trace buffer entries written whose contents later ones overwrite: only the
    /// index and the full bit move (Table 3-28).
    pub(super) fn skip_entries(&mut self, n: u64) {
        let pmd38 = self.pmd(PMD38);
        let total = (pmd38 & 0xf).saturating_add(n);
        let full = pmd38 >> 5 & 1 | u64::from(total >= ENTRIES);
        self.set_pmd(PMD38, (total % ENTRIES) | (full << 5));
    }

    /// The units `span` (run by this thread at `cpl`, with qualification `tags`) gives
    /// an event to, whether or not monitoring is frozen: DEAR, IEAR, ETB, IPEAR bits.
    pub(super) fn captured<const F: usize>(&self, span: &Span<F>, cpl: u64, tags: u64) -> u8 {
        // Off the counting path's way when nothing is armed, as in most runs.
        if !self.arms_capture() {
            return 0;
        }
        let r = &self.reaches;
        let mut bits = 0;
        if passes(r.dear, tags) && self.dear_event(span, cpl).is_some() {
            bits |= DEAR;
        }
        if passes(r.iear, tags) && self.iear_event(span, cpl).is_some() {
            bits |= IEAR;
        }
        if passes(r.etb, tags) && self.etb_event(span, cpl) {
            bits |= ETB;
        }
        let pmc42 = self.spmc(PMC42);
        if ip_ear_mode(pmc42) && self.monitors(pmc42, &PM, cpl) && span.signals.get(Signal::Instructions) > 0 {
            bits |= IPEAR;
        }
        bits
    }

    /// `cycles` cycles of `span`, the last in iteration `iteration` of its block, ran
    /// as `how` says: latch what they leave in the capture registers.
    pub(super) fn capture<const F: usize>(&mut self, span: &Span<F>, cycles: u64, iteration: u64, how: Ran) {
        let Ran { own, live, cpl, tags } = how;
        if own && live {
            let bits = self.captured(span, cpl, tags);
            if bits & DEAR != 0 {
                self.latch_dear(span, iteration, cpl);
            }
            if bits & IEAR != 0 {
                self.latch_iear(span, cpl);
            }
            if bits & ETB != 0 {
                self.trace_branch(span);
            }
        }
        self.ip_ear(span, cycles, own, live, cpl);
    }

    /// Tables 3-22, 3-24, 3-25: PMD32 the data address (not in ALAT mode), PMD33 the
    /// latency and status, PMD36 the instruction's window, bundle and slot.
    fn latch_dear<const F: usize>(&mut self, span: &Span<F>, iteration: u64, cpl: u64) {
        let (Some(event), Some(mem)) = (self.dear_event(span, cpl), span.mem) else { return };
        let alat = DEAR_MODE.get(self.spmc(PMC40)) >> 1 == 1;
        if !alat {
            self.set_pmd(PMD32, mem.addr.wrapping_add(iteration.wrapping_mul(mem.stride as u64)));
        }
        let latency = event.latency.map_or(0, |l| latency_field(l, DEAR_LATENCY_BITS));
        // Bits 25:16 and 63:26 read 0 (ERRATA MA15).
        self.set_pmd(PMD33, latency | event.stat << 14);
        let ip = span.detail.data_ip;
        let (first, second) = window(span, ip);
        self.set_pmd(PMD36, first | 1 << 3 | u64::from(second) << 2 | slot(ip));
    }

    /// Tables 3-17, 3-19: PMD34 the line and status; PMD35 the latency in cache mode
    /// (undefined in TLB mode: left as it was).
    fn latch_iear<const F: usize>(&mut self, span: &Span<F>, cpl: u64) {
        let (Some((stat, latency)), Some(fetch)) = (self.iear_event(span, cpl), span.detail.fetch) else { return };
        self.set_pmd(PMD34, (fetch.addr & !0x1f) | stat);
        if let Some(l) = latency {
            self.set_pmd(PMD35, latency_field(l, IEAR_LATENCY_BITS));
        }
    }

    /// Writes one trace buffer entry and its PMD39 nibble at PMD38.ebi, and moves ebi
    /// on; wrapping from PMD63 to PMD48 sets the sticky full bit (Table 3-28).
    fn push_entry(&mut self, entry: u64, extension: u64) {
        let pmd38 = self.pmd(PMD38);
        let ebi = pmd38 & 0xf;
        let index = 48 + ebi as usize;
        self.set_pmd(PMD48 + ebi as usize, entry);
        let shift = extension_bit(index);
        self.set_pmd(PMD39, (self.pmd(PMD39) & !(0xf << shift)) | (extension & 0xf) << shift);
        let next = (ebi + 1) % ENTRIES;
        let full = pmd38 >> 5 & 1 | u64::from(next == 0);
        self.set_pmd(PMD38, next | full << 5);
    }

    /// Table 3-27: the branch as a source entry (its window's first bundle, the slot
    /// of a taken branch or 11, mp; PMD39's b1 and brflush), then its target (s = 0,
    /// mp = 1): taken, the branch target; not taken, the next instruction's bundle.
    fn trace_branch<const F: usize>(&mut self, span: &Span<F>) {
        let Some(branch) = span.branch else { return };
        let ip = span.detail.branch_ip;
        let (first, second) = window(span, ip);
        let slot = if branch.taken { slot(ip) } else { 0b11 };
        let mp = u64::from(branch.mispredicted);
        // Every misprediction here is found at execution and flushes the pipeline.
        self.push_entry(first | slot << 2 | mp << 1 | 1, mp << 1 | u64::from(second));
        let to = if branch.taken { branch.target } else { ip.wrapping_add(INSN) };
        self.push_entry(bundle_address(to) | 0b10, 0);
    }

    /// §3.3.10.2, Tables 3-31, 3-33: in IP-EAR mode, each cycle that retires
    /// instructions records the span's IP with the cycles since the last one; once the
    /// PMU froze, PMC42.delay cycles more, then a last entry (ef = 0), or an early
    /// freeze entry (ef = 1, the delay's rest) when the thread stops running or PSR
    /// disables the IP-EAR first (MD55).
    fn ip_ear<const F: usize>(&mut self, span: &Span<F>, cycles: u64, own: bool, live: bool, cpl: u64) {
        let pmc42 = self.spmc(PMC42);
        if !ip_ear_mode(pmc42) {
            return;
        }
        let enabled = own && self.monitors(pmc42, &PM, cpl);
        if own && span.signals.get(Signal::Instructions) > 0 {
            self.trace.last_ip = span.ip;
        }
        // This thread's IP: the other thread's span says nothing of it.
        let ip = if own { span.ip } else { self.trace.last_ip };
        if live {
            self.trace.delay_left = None;
        } else if self.trace.delay_left.is_none() {
            let delay = IPEAR_DELAY.get(pmc42);
            self.trace.delay_left = Some(delay);
            if delay == 0 {
                self.push_ip(ip, self.trace.since, None);
                return;
            }
        }
        let mut run = cycles;
        if let Some(left) = self.trace.delay_left {
            if left == 0 {
                return;
            }
            if !enabled {
                self.trace.delay_left = Some(0);
                self.push_ip(ip, self.trace.since, Some(left));
                return;
            }
            run = cycles.min(left);
        }
        if enabled && span.signals.get(Signal::Instructions) > 0 {
            // Only the buffer's worth of entries survive.
            for k in run.saturating_sub(ENTRIES)..run {
                let since = if k == 0 { self.trace.since.saturating_add(1) } else { 1 };
                self.push_ip(span.ip, since, None);
            }
            self.trace.since = 0;
        } else {
            self.trace.since = self.trace.since.saturating_add(run);
        }
        if enabled && (span.branch.is_some_and(|b| b.mispredicted) || span.signals.get(Signal::ExceptionFlushCycles) > 0) {
            self.trace.flushed = true;
        }
        if let Some(left) = self.trace.delay_left {
            let left = left - run;
            self.trace.delay_left = Some(left);
            if left == 0 {
                // §3.3.10.2.1: the last entry, whatever the thread was retiring.
                self.push_ip(ip, self.trace.since, None);
            }
        }
    }

    /// Records an IP-EAR entry for `ip`, `since` cycles after the previous one: cycl
    /// (saturating at 63) has its four low bits in the entry and its two high in
    /// PMD39 beside f and ef; `delay`, an early freeze's rest of the delay count, takes
    /// the place of IP bits 11:4.
    fn push_ip(&mut self, ip: u64, since: u64, delay: Option<u64>) {
        let bundle = bundle_address(ip);
        let cycl = since.min(CYCL_MAX);
        let low = delay.map_or(bundle >> 4 & 0xff, |d| d.min(0xff));
        let entry = (cycl & 0xf) << 60 | (bundle >> 12) << 8 | low;
        let flushed = std::mem::take(&mut self.trace.flushed);
        self.push_entry(entry, (cycl >> 4) << 2 | u64::from(flushed) << 1 | u64::from(delay.is_some()));
    }
}

impl Montecito {
    /// `cycles` cycles of `span` ran, the last in iteration `iteration` of its block:
    /// each thread's capture units latch what they left (before a freeze in them, and
    /// the IP-EAR's delayed freeze after).
    pub(super) fn latch<const F: usize>(&mut self, span: &Span<F>, cycles: u64, iteration: u64) {
        if !self.threads.iter().any(MontecitoThread::arms_capture) {
            return;
        }
        let tags = self.tags(span);
        for (t, thread) in self.threads.iter_mut().enumerate() {
            let own = usize::from(span.thread) == t;
            let live = !thread.frozen() || std::mem::take(&mut thread.just_froze);
            let cpl = if own { span_cpl(span.privilege) } else { u64::from(thread.cpl()) };
            thread.capture(span, cycles, iteration, Ran { own, live, cpl, tags });
        }
    }

    /// Only the last iterations can leave anything in the capture registers (the EARs
    /// hold the last capture, the trace buffer its last sixteen entries, and each
    /// iteration captures the same but for its data addresses): those run span by
    /// span, the earlier ones only move the trace buffer's index on. A frozen thread
    /// whose IP-EAR has its delay to run (at most 255 cycles) needs at most 256.
    pub(super) fn latch_iterations<const F: usize>(&mut self, body: &[Span<F>], k: u64, from: u64) {
        if !self.threads.iter().any(MontecitoThread::arms_capture) {
            return;
        }
        // One iteration runs literally whatever its entries: they are counted only for
        // more.
        let literal = if k > 1 { self.skip_early_iterations(body, k) } else { 1 };
        for j in 0..literal {
            for s in body {
                self.latch(s, s.cycles, from + k - literal + j);
            }
        }
    }

    /// How many of `k` iterations of `body` must run span by span for the capture
    /// registers to end as running all would leave them; the trace buffers' indices
    /// are moved past the entries of the others.
    fn skip_early_iterations<const F: usize>(&mut self, body: &[Span<F>], k: u64) -> u64 {
        let mut entries = [0u64; THREADS];
        let mut literal = 1u64;
        for (t, thread) in self.threads.iter().enumerate() {
            let need = if thread.frozen() {
                if thread.ip_ear_pending() {
                    256
                } else {
                    1
                }
            } else {
                let e = thread.entries(body, t, |s| self.tags(s));
                if let Some(slot) = entries.get_mut(t) {
                    *slot = e;
                }
                if e == 0 {
                    1
                } else {
                    16u64.div_ceil(e) + 1
                }
            };
            literal = literal.max(need);
        }
        let literal = literal.min(k);
        for (thread, &e) in self.threads.iter_mut().zip(&entries) {
            thread.skip_entries((k - literal).saturating_mul(e));
        }
        literal
    }
}
