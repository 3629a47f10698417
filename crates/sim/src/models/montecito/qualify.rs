//! Event qualification in the model (§3.2.3.1, §3.3.5-§3.3.7): a thread's IBR and DBR
//! pairs with its PMC32-36, PMC38 and PMC41 decide whether an event that can be
//! qualified counts in a span, through `montecito::tags`, the hardware's computation.
//!
//! A span is a run of instructions at one address (its issue group's) with at most one
//! data reference: the range tags are computed from the span's IP and CPL, the data
//! range from its data address (MD50). The simulated programs carry no instruction
//! encodings, so opcode matching is not modelled: the model counts as if every
//! instruction matched, and says so where a write asks for a pattern (MD51).

use pmukit_arch::montecito::pmu::FAMILY;
use pmukit_arch::montecito::qualification::{CFGDTAG_FIELDS, CH_IG_OPC, EN_DBRP_FIELDS, IG_IBRP_FIELDS, OPC_IG_AD, OPC_MASK};
use pmukit_arch::montecito::qualify::tag_channels;
use pmukit_arch::montecito::tags::Qualification;

/// The breakpoint register files event qualification borrows (SDM vol. 2 §7.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Breakpoint {
    /// Instruction breakpoint registers, IBR0-7.
    Ibr,
    /// Data breakpoint registers, DBR0-7.
    Dbr,
}

impl std::fmt::Display for Breakpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Breakpoint::Ibr => "IBR",
            Breakpoint::Dbr => "DBR",
        })
    }
}

/// How qualification reaches the event a PMC selects (section 4.15's IAR and DAR
/// columns and the table's `ibrp`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct Reach {
    iar: bool,
    dar: bool,
    /// The tag channels its instructions are tagged on, a bit each.
    channels: u8,
}

impl Reach {
    pub(super) fn of(code: u8, umask: u64) -> Reach {
        let table = pmukit_arch::FAMILIES.iter().find(|f| f.name == FAMILY).map(|f| f.events);
        let Some(event) = table.and_then(|t| t.by_code(u64::from(code), FAMILY)) else { return Reach::default() };
        let attr = |key: &str| event.attr_with(key, event.umask_for(umask));
        let channels = tag_channels(u64::from(code), umask, attr("ibrp"));
        Reach { iar: attr("iar") == Some("Y"), dar: attr("dar") == Some("Y"), channels }
    }
}

/// A thread's qualification registers, and whether they constrain anything.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Qualifier {
    pub(super) state: Qualification,
    /// Some IBR range or DBR pair is in use (PMC32.ig_ad or a PMC38.ig_ibrp clear, or a
    /// DBR pair enabled with a constraint): without, nothing is gated.
    active: bool,
}

impl Qualifier {
    pub(super) fn new(specific_pmc: &[u64], ibr: [u64; 8], dbr: [u64; 8]) -> Qualifier {
        // PMC32-42 at indices 0-10.
        let pmc = |n: usize| specific_pmc.get(n - 32).copied().unwrap_or(0);
        let state = Qualification {
            pmc32: pmc(32),
            pmc33: pmc(33),
            pmc34: pmc(34),
            pmc35: pmc(35),
            pmc36: pmc(36),
            pmc38: pmc(38),
            pmc41: pmc(41),
            ibr,
            dbr,
        };
        let ranges = OPC_IG_AD.get(state.pmc32) == 0 || IG_IBRP_FIELDS.iter().any(|f| f.get(state.pmc38) == 0);
        let data = (0..4).any(|j| {
            EN_DBRP_FIELDS.get(j).is_some_and(|f| f.get(state.pmc41) == 1)
                && CFGDTAG_FIELDS.get(j).is_some_and(|f| f.get(state.pmc41) != 0b11)
        });
        Qualifier { state, active: ranges || data }
    }

    /// MD51: a channel asked to match opcodes with a pattern that does not match every
    /// instruction, which the model cannot evaluate.
    pub(super) fn unmodelled_opcodes(&self) -> Option<String> {
        let q = &self.state;
        // Every slot type, every encoding bit left out of the match.
        let everything = |cfg: u64| cfg >> 48 & 0xf == 0xf && OPC_MASK.get(cfg) == OPC_MASK.mask();
        let matchers = [everything(q.pmc32), everything(q.pmc34)];
        let channel0_free = OPC_IG_AD.get(q.pmc32) == 1;
        let asked = (0..4).find(|&c| {
            CH_IG_OPC.get(c).is_some_and(|f| f.get(q.pmc36) == 0)
                && !matchers.get(c & 1).copied().unwrap_or(true)
                && !(c == 0 && channel0_free)
        })?;
        Some(format!(
            "tag channel {asked} is opcode constrained (PMC36, PMC{}), which the model does not evaluate: its programs carry no instruction encodings, so it counts as if every instruction matched (MD51)",
            if asked & 1 == 0 { "32/33" } else { "34/35" }
        ))
    }

    /// The tags rates depend on for a span at `ip` and `cpl` with data address `data`:
    /// a bit per tag channel's range tag, and bit 4 for the data range constraint.
    pub(super) fn tags(&self, ip: u64, cpl: u8, data: Option<u64>) -> u64 {
        if !self.active {
            return 0x1f;
        }
        let q = &self.state;
        let ranges = (0..4).fold(0, |bits, c| bits | u64::from(q.range_tag(c, ip, cpl)) << c);
        let memory = q.memory_event_counts_with(|j| ranges >> j & 1 == 1, data);
        ranges | u64::from(memory) << 4
    }
}

/// Does an event that qualification reaches as `reach` count, given a span's `tags`
/// (`Qualifier::tags`)? Channel 0's tag qualifies "all downstream pipeline events" and a
/// memory pipeline event also passes PMC41's constraint (§3.2.3.1).
pub(super) fn passes(reach: Reach, tags: u64) -> bool {
    let range = !reach.iar || tags & u64::from(reach.channels) != 0;
    let data = !reach.dar || tags >> 4 & 1 == 1;
    range && data
}
