//! Qualification requests (§3.2.3.1, §3.3.5-§3.3.7): an instruction address range, a
//! data address range and opcode patterns asked for a set of events, turned into every
//! register that must be written (PMC32-36, PMC38, PMC41 and the IBRs and DBRs), or
//! refused with the rule that forbids them.
//!
//! The hardware qualifies through four tag channels, not event by event: channel 0
//! (IBRP0 with OpCM0) qualifies every event that can be qualified, prefetch events go
//! through channel 1 (§3.3.5.2) and IA64_TAGGED_INST_RETIRED picks its channel by unit
//! mask (§3.3.5.3). A request therefore constrains every event of the set it reaches,
//! and an event it cannot reach would count unconstrained beside them: that is refused
//! unless asked for (`no_check`, as pfmon's --no-qual-check).

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic))]

use std::fmt;

use pmukit_core::event_string::EventSel;
use pmukit_core::number;
use serde::Serialize;

use super::pmu::{attr, plm as event_plm};
use super::qualification::{
    CFGDTAG_FIELDS, CH_IG_OPC, EN_DBRP_FIELDS, FINE, IG_IBRP_FIELDS, OPC_B, OPC_F, OPC_I, OPC_IG_AD, OPC_INV, OPC_M, OPC_MASK, OPC_MATCH,
    PMC32, PMC33_35, PMC34, PMC36, PMC38, PMC41,
};
use crate::RegisterValues;

/// IA64_TAGGED_INST_RETIRED (and IA64_INST_RETIRED, its unit mask 0): the event whose
/// unit mask selects the tag channel.
const TAGGED_RETIRED: u64 = super::pal::IA64_INST_RETIRED as u64;
/// IBR and DBR mask bits 55:0; address bits 63:56 are always compared (ERRATA MA16).
const MASK_BITS: u64 = (1 << 56) - 1;
/// The largest aligned block one breakpoint pair can describe.
const MAX_BLOCK_LOG2: u32 = 56;
/// An Itanium bundle: IPs are multiples of 16 and IBRs do not compare bits 3:0.
const BUNDLE: u64 = 16;
/// Fine mode bounds a range within one 64 KB page (Table 3-10).
const PAGE_BITS: u32 = 16;

/// An address range, `start` included and `end` excluded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Range {
    pub start: u64,
    pub end: u64,
}

impl Range {
    /// `START-END`, END excluded (pfmon's --irange and --drange syntax).
    pub fn parse(text: &str) -> Result<Range, String> {
        let (a, b) =
            text.split_once('-').ok_or_else(|| format!("'{text}': expected START-END, for example 0x4000-0x4400 (END excluded)"))?;
        let start = number::parse_u64(a).map_err(|e| format!("'{text}': start {e}"))?;
        let end = number::parse_u64(b).map_err(|e| format!("'{text}': end {e}"))?;
        if end <= start {
            return Err(format!("'{text}': the end {end:#x} must lie above the start {start:#x} (END is excluded)"));
        }
        Ok(Range { start, end })
    }

    pub fn contains(&self, address: u64) -> bool {
        (self.start..self.end).contains(&address)
    }

    /// The fewest aligned power-of-two blocks that make up the range, as (base, log2
    /// of the size), stopping once there are more than `most`.
    fn blocks(&self, most: usize) -> Vec<(u64, u32)> {
        let mut blocks = Vec::new();
        let mut at = self.start;
        while at < self.end && blocks.len() <= most {
            let mut k = at.trailing_zeros().min(MAX_BLOCK_LOG2);
            while k > 0 && at.checked_add(1 << k).is_none_or(|next| next > self.end) {
                k -= 1;
            }
            blocks.push((at, k));
            match at.checked_add(1 << k) {
                Some(next) => at = next,
                None => break,
            }
        }
        blocks
    }

    /// The smallest aligned power-of-two block holding the range (for suggestions).
    fn covering_block(&self) -> Range {
        let last = self.end - 1;
        let k = 64 - (self.start ^ last).leading_zeros();
        let base = if k == 64 { 0 } else { self.start & !((1u64 << k) - 1) };
        let end = if k == 64 { u64::MAX } else { base.saturating_add(1 << k) };
        Range { start: base, end }
    }
}

impl fmt::Display for Range {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#x}-{:#x}", self.start, self.end)
    }
}

/// One opcode matcher's pattern (§3.3.6.2): the slot types it matches and the 41-bit
/// encoding bits, `mask` bits set leaving a bit out of the match (Table 3-11).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Opcode {
    pub m: bool,
    pub i: bool,
    pub f: bool,
    pub b: bool,
    pub pattern: u64,
    pub mask: u64,
}

impl Opcode {
    /// `[mifb]:MATCH:MASK` (pfmon's --opc-match32/--opc-match34 syntax): the slot types
    /// (none given: all four), then the encoding bits and the bits left out of the match.
    pub fn parse(text: &str) -> Result<Opcode, String> {
        let syntax = || format!("'{text}': expected [mifb]:MATCH:MASK, for example m:0x0:0x1ffffffffff (MASK bits set are left out)");
        let mut parts = text.split(':');
        let (Some(slots), Some(pattern), Some(mask), None) = (parts.next(), parts.next(), parts.next(), parts.next()) else {
            return Err(syntax());
        };
        let mut op = Opcode { m: slots.is_empty(), i: slots.is_empty(), f: slots.is_empty(), b: slots.is_empty(), pattern: 0, mask: 0 };
        for c in slots.chars() {
            let slot = match c.to_ascii_lowercase() {
                'm' => &mut op.m,
                'i' => &mut op.i,
                'f' => &mut op.f,
                'b' => &mut op.b,
                _ => {
                    return Err(format!(
                        "'{text}': unknown slot type '{c}'; slot types are m, i, f and b (an A-slot instruction needs m and i)"
                    ))
                }
            };
            if *slot {
                return Err(format!("'{text}': slot type '{c}' is given twice"));
            }
            *slot = true;
        }
        let limit = OPC_MATCH.mask();
        for (name, field, value) in [("MATCH", &mut op.pattern, pattern), ("MASK", &mut op.mask, mask)] {
            *field = number::parse_u64(value).map_err(|e| format!("'{text}': {name} {e}"))?;
            if *field & !limit != 0 {
                return Err(format!("'{text}': {name} {:#x} is wider than an instruction's 41 bits (at most {limit:#x})", *field));
            }
        }
        Ok(op)
    }
}

impl fmt::Display for Opcode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (on, c) in [(self.m, 'm'), (self.i, 'i'), (self.f, 'f'), (self.b, 'b')] {
            if on {
                write!(f, "{c}")?;
            }
        }
        write!(f, ":{:#x}:{:#x}", self.pattern, self.mask)
    }
}

/// What a set of events asks to be qualified by.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Request {
    /// Count only instructions fetched from this range: on every tag channel, or with
    /// `irange2` on channels 0 and 2 (Table 3-10's range 0).
    pub irange: Option<Range>,
    /// A second instruction range, for tag channels 1 and 3 (Table 3-10's range 1):
    /// prefetch events and IA64_TAGGED_INST_RETIRED.IBRP1/IBRP3. Needs `irange`.
    pub irange2: Option<Range>,
    /// Count only instructions outside `irange` (PMC32.inv; tag channel 0 only).
    pub inverse: bool,
    /// Count memory pipeline events only for data addresses in this range.
    pub drange: Option<Range>,
    /// Opcode matchers OpCM0 (PMC32/33) and OpCM1 (PMC34/35).
    pub opcode: [Option<Opcode>; 2],
    /// Let events the request cannot reach count unconstrained, with a note.
    pub no_check: bool,
}

impl Request {
    pub fn is_empty(&self) -> bool {
        self.irange.is_none() && self.irange2.is_none() && !self.inverse && self.drange.is_none() && self.opcode.iter().all(Option::is_none)
    }
}

/// The registers a request writes, and what the user should know about them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Programmed {
    pub registers: RegisterValues,
    pub notes: Vec<String>,
}

/// Why a request cannot be programmed: the part of it at fault and the rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub what: String,
    pub why: String,
}

fn refuse<T>(what: impl Into<String>, why: impl Into<String>) -> Result<T, Refusal> {
    Err(Refusal { what: what.into(), why: why.into() })
}

const IBR_NAMES: [&str; 8] = ["IBR0", "IBR1", "IBR2", "IBR3", "IBR4", "IBR5", "IBR6", "IBR7"];
const DBR_NAMES: [&str; 8] = ["DBR0", "DBR1", "DBR2", "DBR3", "DBR4", "DBR5", "DBR6", "DBR7"];

/// The tag channels (a bit each) an event with `code` and `umask` reaches the
/// qualification logic through: IA64_TAGGED_INST_RETIRED's unit mask names its channel
/// (§3.3.5.3); by the table's `ibrp` attribute (the 4.15 notes), prefetch events use
/// IBRP1 and the demand-or-prefetch ones either of IBRP0 and IBRP1; every other event
/// channel 0. The encoder and the simulated core both ask this.
pub fn tag_channels(code: u64, umask: u64, ibrp: Option<&str>) -> u8 {
    if code == TAGGED_RETIRED {
        return 1 << (umask & 3);
    }
    match ibrp {
        Some("1") => 0b10,
        Some("0,1") => 0b11,
        _ => 0b01,
    }
}

fn channels(sel: &EventSel) -> u8 {
    tag_channels(sel.code, sel.umask, attr(sel, "ibrp"))
}

fn capable(sel: &EventSel, key: &str) -> bool {
    attr(sel, key) == Some("Y")
}

/// The opcode matcher of tag channel `c`: OpCM0 for channels 0 and 2, OpCM1 for 1 and 3.
fn matcher(c: usize) -> usize {
    c & 1
}

fn opcode_label(m: usize) -> &'static str {
    if m & 1 == 0 {
        "opcode matcher 0 (PMC32/PMC33)"
    } else {
        "opcode matcher 1 (PMC34/PMC35)"
    }
}

/// Every channel of `mask`, lowest first.
fn each(mask: u8) -> impl Iterator<Item = usize> {
    (0..4).filter(move |c| mask >> c & 1 == 1)
}

/// The breakpoint pair mask register for a block of 2^`k` bytes: compare every address
/// bit from `k` up, count at privilege levels `plm` (IBR; a DBR's plm, r and w are
/// ignored for monitoring and left 0, §3.3.7).
fn block_mask(k: u32, plm: u64) -> u64 {
    (MASK_BITS & !((1u64 << k) - 1)) | plm << 56
}

/// Program `request` for `sels`, starting from the registers' reset values.
pub fn program(sels: &[EventSel], request: &Request) -> Result<Programmed, Refusal> {
    if request.is_empty() {
        return Ok(Programmed::default());
    }
    // The channels each kind of constraint acts on.
    let iar_channels: u8 =
        if request.irange.is_some() { sels.iter().filter(|s| capable(s, "iar")).fold(0, |m, s| m | channels(s)) } else { 0 };
    let opc_channels: u8 = sels
        .iter()
        .filter(|s| capable(s, "opc"))
        .flat_map(|s| each(channels(s)))
        .filter(|&c| request.opcode.get(matcher(c)).is_some_and(Option::is_some))
        .fold(0, |m, c| m | 1 << c);
    for (m, op) in request.opcode.iter().enumerate() {
        let Some(op) = op else { continue };
        if each(opc_channels).all(|c| matcher(c) != m) {
            let through = if m == 0 {
                "tag channels 0 and 2: every opcode-capable event (OPC Y in section 4.15), and IA64_TAGGED_INST_RETIRED.IBRP0_PMC32_33 or .IBRP2_PMC32_33"
            } else {
                "tag channels 1 and 3 only: IA64_TAGGED_INST_RETIRED.IBRP1_PMC34_35 or .IBRP3_PMC34_35 (section 3.3.6.1)"
            };
            return refuse(format!("{} {op}", opcode_label(m)), format!("constrains no event of the set: it qualifies {through}"));
        }
    }
    if let Some(r) = request.irange.filter(|_| iar_channels == 0) {
        return refuse(
            format!("instruction range {r}"),
            "constrains no event of the set: none can be qualified by instruction address (IAR Y in section 4.15)",
        );
    }
    let ranges = instruction_ranges(request, iar_channels)?;
    if let Some(r) = request.drange.filter(|_| !sels.iter().any(|s| capable(s, "dar"))) {
        return refuse(
            format!("data range {r}"),
            "constrains no event of the set: none can be qualified by data address (DAR Y in section 4.15: L1D, L2D and data TLB events)",
        );
    }
    let mut notes = Vec::new();
    check_reach(sels, request, &mut notes)?;
    if request.inverse {
        let Some(range) = request.irange else {
            return refuse("inverse range", "inverts the instruction address range, and none is given");
        };
        // With a second range, channels 1 and 3 follow it and are not inverted.
        let not_inverted = if request.irange2.is_some() { 0b0100 } else { 0b1110 };
        let other = sels.iter().filter(|s| capable(s, "iar")).find_map(|s| each(channels(s) & not_inverted).next().map(|c| (s, c)));
        if let Some((s, c)) = other {
            return refuse(
                format!("inverse instruction range {range}"),
                format!(
                    "'{}' is qualified through IBRP{c} (tag channel {c}), which cannot be inverted: PMC32.inv inverts tag channel 0 only (Table 3-11); count it in another run",
                    s.name()
                ),
            );
        }
    }
    let plm = sels.iter().fold(0, |m, s| m | event_plm(s));
    let mut registers: RegisterValues = Vec::new();
    let mut pmc32 = PMC32.reset;
    let mut pmc36 = PMC36.reset;
    let mut pmc38 = PMC38.reset;
    let mut pmc41 = PMC41.reset;
    // Channel 0 carries a tag when a range or opcode constrains it: PMC32.ig_ad = 0,
    // and inv as asked (Table 3-3 note 1: "inv must be set to 0 if address range
    // inversion is not needed").
    let channel0 = (iar_channels | opc_channels) & 1 == 1;
    if channel0 {
        pmc32 = OPC_INV.set(OPC_IG_AD.set(pmc32, 0), u64::from(request.inverse));
    }
    let mut ibr = [None; 8];
    if !ranges.is_empty() {
        let fine = ibrs(&ranges, plm, &mut ibr, &mut notes)?;
        // Table 3-10: fine mode range 0 needs ig_ibrp0 and ig_ibrp2 clear, range 1
        // ig_ibrp1 and ig_ibrp3.
        let pairs = if fine { iar_channels | iar_channels << 2 } else { iar_channels };
        for (c, field) in IG_IBRP_FIELDS.iter().enumerate() {
            if pairs >> c & 1 == 1 {
                pmc38 = field.set(pmc38, 0);
            }
        }
        pmc38 = FINE.set(pmc38, u64::from(fine));
    }
    // Table 3-13: a channel ignores its opcode matcher unless one is asked for it.
    for (c, field) in CH_IG_OPC.iter().enumerate() {
        pmc36 = field.set(pmc36, u64::from(opc_channels >> c & 1 == 0));
    }
    let mut dbr = [None; 8];
    if let Some(range) = request.drange {
        pmc41 = dbrs(range, channel0, &mut dbr, pmc41)?;
    } else if channel0 {
        // Table 3-3's IBR and opcode rows enable DBRP0 with cfgdtag0 01 (IBR/Opc), and
        // §3.3.5.2 makes it illegal to clear both ig_ad and ig_ibrp0 with no DBR pair
        // enabled. ERRATA MA17: Table 3-3's "range check only" row says 00, which
        // would also apply DBRP0's (unprogrammed) data range.
        pmc41 = CFGDTAG_FIELDS[0].set(EN_DBRP_FIELDS[0].set(pmc41, 1), 0b01);
    }
    if let Some(op) = request.opcode[0] {
        pmc32 = opcode_config(pmc32, &op);
    }
    registers.push(("PMC32", pmc32));
    if let Some(op) = request.opcode[0] {
        registers.push(("PMC33", OPC_MATCH.set(PMC33_35.reset, op.pattern)));
    }
    if let Some(op) = request.opcode[1] {
        registers.push(("PMC34", opcode_config(PMC34.reset, &op)));
        registers.push(("PMC35", OPC_MATCH.set(PMC33_35.reset, op.pattern)));
    }
    registers.push(("PMC36", pmc36));
    registers.push(("PMC38", pmc38));
    registers.push(("PMC41", pmc41));
    registers.extend(IBR_NAMES.iter().zip(ibr).filter_map(|(&n, v)| Some((n, v?))));
    registers.extend(DBR_NAMES.iter().zip(dbr).filter_map(|(&n, v)| Some((n, v?))));
    Ok(Programmed { registers, notes })
}

/// PMC32 or PMC34 with an opcode pattern's slot types and mask.
fn opcode_config(reg: u64, op: &Opcode) -> u64 {
    let reg = OPC_MASK.set(reg, op.mask);
    let reg = OPC_M.set(reg, u64::from(op.m));
    let reg = OPC_I.set(reg, u64::from(op.i));
    let reg = OPC_F.set(reg, u64::from(op.f));
    OPC_B.set(reg, u64::from(op.b))
}

/// Refuse an event the request cannot reach, or note that it counts unconstrained.
fn check_reach(sels: &[EventSel], request: &Request, notes: &mut Vec<String>) -> Result<(), Refusal> {
    let asked_opcode = request.opcode.iter().any(Option::is_some);
    for s in sels {
        let mut missed = Vec::new();
        if let Some(r) = request.irange {
            if !capable(s, "iar") {
                missed.push((format!("instruction range {r}"), "an instruction address range (IAR N in section 4.15)".to_string()));
            }
        }
        if let Some(r) = request.drange {
            if !capable(s, "dar") {
                missed.push((format!("data range {r}"), "a data address range (DAR N in section 4.15)".to_string()));
            }
        }
        if asked_opcode {
            let reached = capable(s, "opc") && each(channels(s)).all(|c| request.opcode.get(matcher(c)).is_some_and(Option::is_some));
            if !reached {
                let why = if capable(s, "opc") {
                    let c = each(channels(s)).find(|&c| request.opcode.get(matcher(c)).is_some_and(Option::is_none)).unwrap_or(0);
                    format!("an opcode pattern for tag channel {c}, which {} serves", opcode_label(matcher(c)))
                } else {
                    "an opcode pattern (OPC N in section 4.15)".to_string()
                };
                let (m, op) = request.opcode.iter().enumerate().find_map(|(m, op)| Some((m, (*op)?))).unwrap_or((0, Opcode::default()));
                missed.push((format!("{} {op}", opcode_label(m)), why));
            }
        }
        for (what, how) in missed {
            if request.no_check {
                notes.push(format!("'{}' cannot be constrained by {how}: it counts unconstrained", s.name()));
            } else {
                return refuse(
                    what,
                    format!(
                        "'{}' cannot be constrained by {how}, so it would count unconstrained beside the events that are; count it in another run, or allow it with --no-qual-check",
                        s.name()
                    ),
                );
            }
        }
    }
    Ok(())
}

/// The instruction ranges asked for and the tag channels each qualifies: `irange` on
/// every channel the set reaches, or with `irange2` channels 0 and 2 for the first and
/// 1 and 3 for the second (fine mode's pairing, Table 3-10, and the opcode matchers').
fn instruction_ranges(request: &Request, iar_channels: u8) -> Result<Vec<(Range, u8)>, Refusal> {
    let (Some(first), Some(second)) = (request.irange, request.irange2) else {
        if let Some(r) = request.irange2 {
            return refuse(
                format!("second instruction range {r}"),
                "is the range of tag channels 1 and 3 beside --irange's; give --irange too",
            );
        }
        return Ok(request.irange.map(|r| vec![(r, iar_channels)]).unwrap_or_default());
    };
    if iar_channels & 0b0101 == 0 {
        return refuse(
            format!("instruction range {first}"),
            "constrains no event of the set: beside a second range it qualifies tag channels 0 and 2 (IBRP0 and IBRP2), and every IAR Y event of the set goes through channel 1 or 3",
        );
    }
    if iar_channels & 0b1010 == 0 {
        return refuse(
            format!("second instruction range {second}"),
            "constrains no event of the set: it qualifies tag channels 1 and 3 only (IBRP1 and IBRP3): prefetch events (IBRP1 in section 4.15) and IA64_TAGGED_INST_RETIRED.IBRP1_PMC34_35 or .IBRP3_PMC34_35",
        );
    }
    Ok(vec![(first, iar_channels & 0b0101), (second, iar_channels & 0b1010)])
}

/// Program the instruction ranges into the IBR pairs of their channels; returns whether
/// fine mode is used. Normal mode takes one aligned power-of-two block per pair; fine
/// mode (Table 3-10, §3.3.5.4) bounds ranges 0 and 1 within one 64 KB page by IBRP0/2
/// and IBRP1/3. PMC38.fine is one bit: when one range needs it, both are fine.
fn ibrs(ranges: &[(Range, u8)], plm: u64, ibr: &mut [Option<u64>; 8], notes: &mut Vec<String>) -> Result<bool, Refusal> {
    // The ranges by their place: `irange`'s first, `irange2`'s second.
    let what = |i: usize, range: &Range| {
        if i == 1 {
            format!("second instruction range {range}")
        } else {
            format!("instruction range {range}")
        }
    };
    for (i, (range, _)) in ranges.iter().enumerate() {
        if !range.start.is_multiple_of(BUNDLE) || !range.end.is_multiple_of(BUNDLE) {
            return refuse(
                what(i, range),
                "instructions come in 16-byte bundles: both ends must be multiples of 0x10 (IBRs do not compare IP bits 3:0)",
            );
        }
    }
    let mut set = |pair: usize, address: u64, mask: u64| {
        if let Some(slot) = ibr.get_mut(2 * pair) {
            *slot = Some(address);
        }
        if let Some(slot) = ibr.get_mut(2 * pair + 1) {
            *slot = Some(mask);
        }
    };
    let blocks: Vec<Option<(u64, u32)>> =
        ranges.iter().map(|(r, _)| if let [b] = r.blocks(1).as_slice() { Some(*b) } else { None }).collect();
    if blocks.iter().all(Option::is_some) {
        for ((_, channels), block) in ranges.iter().zip(blocks) {
            let Some((base, k)) = block else { continue };
            for c in each(*channels) {
                set(c, base, block_mask(k, plm));
            }
        }
        return Ok(false);
    }
    // The range that needs fine mode, for the messages of the other.
    let needs = ranges.iter().zip(&blocks).enumerate().find(|(_, (_, b))| b.is_none()).map(|(i, ((r, _), _))| (i, *r));
    for (i, (range, channels)) in ranges.iter().enumerate() {
        let because = match needs {
            Some((n, r)) if n != i => format!(" (fine mode, because {} needs it and PMC38.fine serves both ranges)", what(n, &r)),
            _ => String::new(),
        };
        let page = range.start >> PAGE_BITS;
        let low = |a: u64| a & ((1 << PAGE_BITS) - 1);
        let cover = range.covering_block();
        if page != (range.end - 1) >> PAGE_BITS {
            return refuse(
                what(i, range),
                format!(
                    "it is neither one aligned power-of-two block (an IBR pair's mask, normal mode) nor inside one 64 KB page (fine mode, Table 3-10){because}; the smallest block holding it is {cover}"
                ),
            );
        }
        if low(range.start) == 0 {
            return refuse(
                what(i, range),
                format!(
                    "fine mode's lower bound is exclusive (§3.3.5.1: IP(15:0) > IBR(15:0)), so a range starting on a 64 KB boundary must be one aligned power-of-two block{because}; the smallest block holding it is {cover}"
                ),
            );
        }
        if let Some(c) = each(*channels).find(|&c| c >= 2) {
            return refuse(
                what(i, range),
                format!(
                    "it needs fine mode{because}, where IBRP2 and IBRP3 bound ranges 0 and 1 and tag channel {c} is not defined (Table 3-10); use an aligned power-of-two range such as {cover}, or IBRP0/IBRP1"
                ),
            );
        }
        // Exclusive bounds: one bundle below the start, and the end (or the page's last
        // byte when the range runs to the end of the page, keeping bits 63:16 equal).
        let lower = range.start - BUNDLE;
        let upper = if low(range.end) == 0 { range.start | ((1 << PAGE_BITS) - 1) } else { range.end };
        let mask = block_mask(PAGE_BITS, plm);
        for c in each(*channels) {
            set(c, lower, mask);
            set(c + 2, upper, mask);
            notes.push(format!("fine mode: IBRP{c} and IBRP{} bound the range ({lower:#x} < IP < {upper:#x})", c + 2));
        }
    }
    Ok(true)
}

/// Program the data range into DBR pairs and PMC41. Alone, it may take up to four
/// aligned blocks (the pairs' matches are ORed, §3.3.7) with cfgdtag 10; combined with
/// an instruction range or opcode on channel 0 it is DBRP0's one block, cfgdtag0 00
/// (Table 3-3).
fn dbrs(range: Range, channel0: bool, dbr: &mut [Option<u64>; 8], pmc41: u64) -> Result<u64, Refusal> {
    let pairs = if channel0 { 1 } else { 4 };
    let blocks = range.blocks(pairs);
    if blocks.len() > pairs {
        let why = if channel0 {
            "with an instruction range or opcode pattern only DBRP0 combines with tag channel 0 (cfgdtag0 00, Table 3-3), so the range must be one aligned power-of-two block (DBR masks are powers of two, §3.3.7)".to_string()
        } else {
            "DBR masks are powers of two (§3.3.7) and the four DBR pairs hold at most four aligned blocks".to_string()
        };
        return refuse(format!("data range {range}"), format!("{why}; the smallest block holding it is {}", range.covering_block()));
    }
    let mut pmc41 = pmc41;
    for (j, &(base, k)) in blocks.iter().enumerate() {
        if let Some(slot) = dbr.get_mut(2 * j) {
            *slot = Some(base);
        }
        if let Some(slot) = dbr.get_mut(2 * j + 1) {
            *slot = Some(block_mask(k, 0));
        }
        let (en, cfg) = (EN_DBRP_FIELDS.get(j), CFGDTAG_FIELDS.get(j));
        if let (Some(en), Some(cfg)) = (en, cfg) {
            pmc41 = cfg.set(en.set(pmc41, 1), if channel0 { 0b00 } else { 0b10 });
        }
    }
    Ok(pmc41)
}
