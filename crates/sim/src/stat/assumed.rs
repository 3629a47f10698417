//! The labelled assumptions an event depends on (docs/assumptions.md): those of the
//! machine that counts the PMU's events whose shaped signals the event reads, worked
//! out from what the PMU's model counts in a cycle (`machine::assumption`).

use pmukit_arch::montecito::capture::{DEAR_MODE, IEAR_CT, PMC37_CACHE, PMC40};
use pmukit_arch::montecito::capture_events::{self, EtbFilter};
use pmukit_arch::montecito::pmu as montecito;
use pmukit_arch::sparc::{kt, niagara, t4};
use pmukit_arch::{arm11, encode_set};
use pmukit_core::event_string::EventSel;
use pmukit_core::pmu::Pmu;

use crate::machine::arm11::{Arm11Config, Arm11Core};
use crate::machine::assumption::{counts_bare_bubbles, reads, Assumption, DATA_LATENCY, FETCH_LATENCY};
use crate::machine::montecito::MontecitoConfig;
use crate::machine::sparc::{SparcChip, SparcConfig};
use crate::models::t4_dram::{self, Measure};
use crate::models::{arm11 as arm11_model, montecito as montecito_model, sun4v, t4 as t4_model};
use crate::stream::{family_signals, Signal, Span, ARM11, MONTECITO, SPARC};

/// What one selection reads of the machine: the signals, whether it counts stalled
/// cycles with no signal, whether it reads the memory controllers' queues, whether it
/// reads how long misses waited (an event address register's latency thresholds:
/// `assumption::DATA_LATENCY`, `FETCH_LATENCY`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Inputs {
    pub signals: Vec<Signal>,
    pub bare_bubbles: bool,
    pub queues: bool,
    pub latency: u8,
}

impl Inputs {
    fn probed(family: usize, asked: &[Signal], count: impl Fn(&Span) -> u64) -> Inputs {
        Inputs {
            signals: reads(family_signals(family), asked, &count),
            bare_bubbles: counts_bare_bubbles(&count),
            queues: false,
            latency: 0,
        }
    }

    fn of(signals: Vec<Signal>) -> Inputs {
        Inputs { signals, ..Inputs::default() }
    }

    /// Whether `a` shapes anything the selection reads: a stalled cycle counted as
    /// such depends on every assumption.
    fn depend_on(&self, a: &Assumption) -> bool {
        self.bare_bubbles || a.shapes.iter().any(|s| self.signals.contains(s)) || (a.queues && self.queues) || a.latency & self.latency != 0
    }
}

/// What `sel` (an event of `pmu`) reads on the machine that counts it, of the signals
/// its assumptions shape; `None` for a PMU no machine model counts.
pub fn inputs(pmu: &Pmu, sel: &EventSel) -> Option<Inputs> {
    let (code, umask, model) = (sel.code, sel.umask, pmu.desc.model);
    let mut asked: Vec<Signal> = assumptions(pmu)?.iter().flat_map(|a| a.shapes.iter().copied()).collect();
    asked.sort_by_key(|&s| s as usize);
    asked.dedup();
    let asked = &asked;
    Some(match pmu.desc.family {
        arm11::FAMILY => Inputs::probed(ARM11, asked, |span| arm11_model::per_span(code, model, span)),
        montecito::FAMILY => {
            let code = u8::try_from(code).ok()?;
            captured(sel, Inputs::probed(MONTECITO, asked, montecito_model::counter(code, umask)))
        }
        // A strand's own subevents and those it sees of the others'.
        t4::FAMILY => {
            let count = t4_model::counter(pmu, code, umask);
            Inputs::probed(SPARC, asked, |span| count(span, 0) + count(span, 1))
        }
        // PERF_CONFIG's modes: all L2 misses, those memory serves (local, remote), those
        // another node's cache does (KT §3.0).
        kt::FAMILY => Inputs::of(match code {
            0 => vec![Signal::MemoryReads, Signal::CacheToCacheFills],
            3 => vec![Signal::CacheToCacheFills],
            _ => vec![Signal::MemoryReads],
        }),
        t4::DRAM_FAMILY => {
            let measure = t4_dram::select(code)?.measure;
            let signals = match measure {
                Measure::Transactions(_) => vec![Signal::MemoryReads, Signal::MemoryWrites],
                _ => Vec::new(),
            };
            Inputs { signals, queues: !matches!(measure, Measure::Transactions(_)), ..Inputs::default() }
        }
        niagara::FAMILY => {
            let set = encode_set(pmu, std::slice::from_ref(sel)).ok()?;
            let counters = set.events.first()?.counters.iter().filter_map(|c| niagara::NIAGARA.counter_index(c));
            let mut signals: Vec<Signal> = counters.map(sun4v::mmustat_signal).collect();
            signals.dedup();
            Inputs::of(signals)
        }
        _ => return None,
    })
}

/// What a Montecito capture subevent (DATA_EAR_CACHE_LAT4, L1I_EAR_TLB_ALL, ...) reads
/// beside `probed`, by the mode it arms its event address register in (§3.3.8,
/// §3.3.9): in cache mode the misses' latencies, in TLB mode its side's translation
/// misses (the signal the TLBs' assumptions shape). Other events are as probed.
fn captured(sel: &EventSel, mut probed: Inputs) -> Inputs {
    let Ok(programmed) = capture_events::program(std::slice::from_ref(sel), None, &EtbFilter::default()) else { return probed };
    for &(register, value) in &programmed.registers {
        let (cache, tlb, side) = match register {
            r if r == PMC40.name => (DEAR_MODE.get(value) == 0b00, DEAR_MODE.get(value) == 0b01, DATA_LATENCY),
            r if r == PMC37_CACHE.name => (IEAR_CT.get(value) >> 1 == 1, IEAR_CT.get(value) == 0b00, FETCH_LATENCY),
            _ => continue,
        };
        if cache {
            probed.latency |= side;
        }
        if tlb {
            // The side's own misses: the main TLB's are both sides'.
            probed.signals.push(if register == PMC40.name { Signal::DTlbMisses } else { Signal::ITlbMisses });
        }
    }
    probed.signals.sort_by_key(|&s| s as usize);
    probed.signals.dedup();
    probed
}

/// The labelled assumptions of the machine that counts `pmu`'s events, at their
/// defaults; `None` for a PMU no machine model counts.
pub fn assumptions(pmu: &Pmu) -> Option<Vec<Assumption>> {
    let model = pmu.desc.model;
    if pmu.desc.family == montecito::FAMILY {
        return Some(MontecitoConfig::new(2).assumptions());
    }
    match (Arm11Core::from_model(model), SparcChip::from_model(model)) {
        (Some(core), _) => Some(Arm11Config::new(core).assumptions()),
        (None, Some(chip)) => Some(SparcConfig::new(chip).assumptions()),
        _ => None,
    }
}

/// The labelled assumptions any of `sels` (selections of one event of `pmu`) depends
/// on, in the machine's order; `None` for a PMU no machine model counts.
pub fn depends_on(pmu: &Pmu, sels: &[EventSel]) -> Option<Vec<Assumption>> {
    let all = assumptions(pmu)?;
    let inputs: Vec<Inputs> = sels.iter().filter_map(|s| inputs(pmu, s)).collect();
    Some(all.into_iter().filter(|a| inputs.iter().any(|i| i.depend_on(a))).collect())
}
