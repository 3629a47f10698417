//! The capture registers a set's events program: BRANCH_EVENT (ETB_EVENT) arms the
//! execution trace buffer (PMC39), and the capture subevents pfmon and libpfm3 name
//! (DATA_EAR_CACHE_LAT4, L1I_EAR_TLB_ALL, ...) arm the data or instruction EAR (PMC40,
//! PMC37). Each says so in its table attribute `capture`, "PMCnn field=bits ...", the
//! bits as the spec's tables print them (x read as 0). The EAR and ETB have one
//! configuration each: the placement rules keep events that would program one
//! differently, or the ETB beside a D-EAR in TLB or ALAT mode, out of one set.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic))]

use pmukit_core::event_string::EventSel;
use pmukit_core::register::Register;

use super::capture::{DEAR_MODE, ETB_BRT, ETB_PPM, ETB_PTM, ETB_TM, IPEAR_DELAY, PMC37_CACHE, PMC37_TLB, PMC39, PMC40, PMC42};
use super::pmu::{attr, plm, DATA_EAR_EVENTS, L1I_EAR_EVENTS};
use super::qualify::{Programmed, Refusal};
use super::registers::ISM_PROPER;

/// DATA_EAR_EVENTS and L1I_EAR_EVENTS: they count the captures of whatever PMC40 and
/// PMC37 hold.
const EAR_COUNTS: [(u64, &str, &str); 2] =
    [(DATA_EAR_EVENTS, "PMC40", "DATA_EAR_CACHE_LAT4"), (L1I_EAR_EVENTS, "PMC37", "L1I_EAR_CACHE_LAT4")];

/// The layout and field values of a `capture` attribute, or why it is malformed.
fn parse(spec: &str) -> Result<(Register, Vec<(String, u64)>), String> {
    let mut words = spec.split_whitespace();
    let register = words.next().unwrap_or("");
    let mut fields = Vec::new();
    for word in words {
        let (name, bits) = word.split_once('=').ok_or_else(|| format!("'{word}' is not FIELD=BITS"))?;
        if bits.is_empty() || bits.len() > 16 {
            return Err(format!("'{word}': BITS is 1 to 16 of 0, 1 and x"));
        }
        let mut value = 0;
        for c in bits.chars() {
            let bit = match c {
                '0' | 'x' => 0,
                '1' => 1,
                _ => return Err(format!("'{word}': '{c}' is not a bit (0, 1 or x)")),
            };
            value = value << 1 | bit;
        }
        fields.push((name.to_string(), value));
    }
    let layout = match register {
        // Table 3-15: ct = 1x is cache mode, where the layout's ct is bit 13 alone.
        "PMC37" => match fields.iter_mut().find(|(n, _)| n == "ct") {
            Some((_, ct)) if *ct >> 1 == 1 => {
                *ct = 1;
                PMC37_CACHE
            }
            _ => PMC37_TLB,
        },
        "PMC39" => PMC39,
        "PMC40" => PMC40,
        _ => return Err(format!("'{register}' is not a capture register (PMC37, PMC39 or PMC40)")),
    };
    Ok((layout, fields))
}

/// Which branches the execution trace buffer captures: PMC39's taken, predicted-target,
/// predicted-path and branch-type masks (Table 3-26), each `None` to capture all, as
/// pfmon's `--etb-tm-tk` … `--etb-brt-ind` set them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct EtbFilter {
    pub tm: Option<u64>,
    pub ptm: Option<u64>,
    pub ppm: Option<u64>,
    pub brt: Option<u64>,
}

impl EtbFilter {
    pub fn is_empty(&self) -> bool {
        *self == EtbFilter::default()
    }

    /// PMC39 with the filter's masks in place of the event's.
    fn apply(&self, pmc39: u64) -> u64 {
        let mut v = pmc39;
        for (field, value) in [(&ETB_TM, self.tm), (&ETB_PTM, self.ptm), (&ETB_PPM, self.ppm), (&ETB_BRT, self.brt)] {
            if let Some(value) = value {
                v = field.set(v, value);
            }
        }
        v
    }
}

/// The capture registers `sels` program, with PMC42 = 0 when the trace buffer is armed
/// (§3.3.10: "PMC42.mode must be set to 000 to enable normal branch trace capture"),
/// or in IP-EAR mode with `ip_ear`'s freeze delay (§3.3.10.2, Table 3-30), at the
/// union of the events' privilege levels; the trace buffer filtered by `etb`.
pub fn program(sels: &[EventSel], ip_ear: Option<u64>, etb: &EtbFilter) -> Result<Programmed, Refusal> {
    let mut armed: Vec<(&'static str, u64)> = Vec::new();
    let mut notes = Vec::new();
    for sel in sels {
        let Some(spec) = attr(sel, "capture") else {
            if let Some((_, reg, alias)) =
                EAR_COUNTS.iter().find(|(code, ..)| *code == sel.code && sel.event.as_ref().is_some_and(|e| e.subevent_of.is_empty()))
            {
                notes.push(format!(
                    "'{}' counts the captures {reg} is programmed for, and pmu writes {reg} only for a capture event such as {alias}",
                    sel.name()
                ));
            }
            continue;
        };
        let malformed = |why: String| Refusal { what: sel.name(), why: format!("its capture attribute '{spec}' is malformed: {why}") };
        let (layout, fields) = parse(spec).map_err(malformed)?;
        let mut values: Vec<(&str, u64)> = fields.iter().map(|(n, v)| (n.as_str(), *v)).collect();
        values.extend([("plm", plm(sel)), ("pm", 0)]);
        if layout.name == PMC40.name {
            values.push(("ism", ISM_PROPER));
        }
        let value = layout.encode(&values).map_err(|e| malformed(e.to_string()))?;
        // Two events arming one register differently are never placed together
        // (`placement`'s capture rule), so the first configuration is every one's.
        if !armed.iter().any(|(r, _)| *r == layout.name) {
            armed.push((layout.name, value));
        }
    }
    let trace_buffer = armed.iter().any(|(r, _)| *r == PMC39.name);
    if !etb.is_empty() {
        let what = "--etb-* filters".to_string();
        if !trace_buffer {
            return Err(Refusal { what, why: "they choose the branches the trace buffer captures: count ETB_EVENT with them".to_string() });
        }
        if etb.ptm == Some(0b01) && etb.ppm == Some(0b01) {
            return Err(Refusal {
                what,
                why: "--etb-ptm-incorrect with --etb-ppm-incorrect captures nothing: a branch whose path is mispredicted records no target prediction (§3.3.10.1.1)".to_string(),
            });
        }
        for (r, v) in &mut armed {
            if *r == PMC39.name {
                *v = etb.apply(*v);
            }
        }
    }
    // §3.3.9.2, §3.3.9.3: "PMC39 must be 0" while the D-EAR is in TLB or ALAT mode; the
    // simulator's driver resets it, but a register list copied onto a real machine
    // must say so.
    let dear_not_cache = armed.iter().any(|&(r, v)| r == PMC40.name && DEAR_MODE.get(v) != 0);
    if dear_not_cache && !trace_buffer {
        armed.push((PMC39.name, 0));
    }
    let mut registers = armed;
    registers.sort_by_key(|&(r, _)| r);
    match ip_ear {
        Some(delay) => registers.push((PMC42.name, ip_ear_register(sels, delay, trace_buffer)?)),
        None if trace_buffer => registers.push((PMC42.name, 0)),
        None => {}
    }
    Ok(Programmed { registers, notes })
}

/// PMC42 in IP-EAR mode (Table 3-30: mode 100, delay 18:11), or why not.
fn ip_ear_register(sels: &[EventSel], delay: u64, trace_buffer: bool) -> Result<u64, Refusal> {
    let what = format!("--ip-ear {delay}");
    if delay > IPEAR_DELAY.max() {
        return Err(Refusal { what, why: format!("PMC42.delay is 8 bits (Table 3-30): give 0 to {} cycles", IPEAR_DELAY.max()) });
    }
    if trace_buffer {
        let etb = sels.iter().find(|s| attr(s, "capture").is_some_and(|c| c.starts_with("PMC39"))).map(EventSel::name).unwrap_or_default();
        return Err(Refusal {
            what,
            why: format!(
                "the IP-EAR takes the trace buffer from '{etb}': with PMC42.mode 100 the buffer records retired IPs and PMC39 is ignored (§3.3.10.2); record one or the other"
            ),
        });
    }
    let plm = sels.iter().map(plm).fold(0, |a, b| a | b);
    PMC42.encode(&[("plm", plm), ("pm", 0), ("mode", 0b100), ("delay", delay)]).map_err(|e| Refusal { what, why: e.to_string() })
}
