//! The command line's event qualification options (Montecito, §3.2.3), pfmon's
//! spellings parsed by the library so that every front end refuses the same text, and
//! the IP-EAR's (§3.3.10.2).

use clap::Args;
use pmukit_arch::montecito::capture_events::EtbFilter;
use pmukit_arch::montecito::qualify::{Opcode, Range, Request};
use pmukit_arch::SetOptions;

/// Qualification of the whole set of events, and the IP-EAR (Itanium 2 Montecito only).
#[derive(Args, Debug, Clone, Default)]
#[command(next_help_heading = "Event qualification and capture (montecito)")]
pub struct QualifyOpts {
    /// Count only instructions fetched from [START, END): IBR pairs and PMC38,
    /// bundle-aligned (multiples of 0x10), END excluded. With --irange2, the range
    /// of tag channels 0 and 2 (Table 3-10's range 0).
    #[arg(long, value_name = "START-END", value_parser = Range::parse)]
    irange: Option<Range>,
    /// A second instruction range, for tag channels 1 and 3 (IBRP1/IBRP3, Table
    /// 3-10's range 1): prefetch events and IA64_TAGGED_INST_RETIRED.IBRP1_PMC34_35
    /// or .IBRP3_PMC34_35 count in it while the rest count in --irange.
    #[arg(long, value_name = "START-END", value_parser = Range::parse, requires = "irange")]
    irange2: Option<Range>,
    /// Count only instructions outside --irange (PMC32.inv, tag channel 0).
    #[arg(long, requires = "irange")]
    inverse_irange: bool,
    /// Count memory pipeline events only for data addresses in [START, END): DBR
    /// pairs and PMC41, END excluded.
    #[arg(long, value_name = "START-END", value_parser = Range::parse)]
    drange: Option<Range>,
    /// Opcode matcher 0 (PMC32/PMC33): slot types (none: all), the encoding bits to
    /// match, and the bits left out of the match; e.g. m:0x0:0x1ffffffffff.
    #[arg(long = "opc-match32", value_name = "[mifb]:MATCH:MASK", value_parser = Opcode::parse)]
    opc_match32: Option<Opcode>,
    /// Opcode matcher 1 (PMC34/PMC35), for IA64_TAGGED_INST_RETIRED's channels 1
    /// and 3.
    #[arg(long = "opc-match34", value_name = "[mifb]:MATCH:MASK", value_parser = Opcode::parse)]
    opc_match34: Option<Opcode>,
    /// Let events the qualification cannot reach count unconstrained (with a note)
    /// instead of refusing the set.
    #[arg(long)]
    no_qual_check: bool,
    /// Put the trace buffer in IP-EAR mode (PMC42): it records the IPs the thread
    /// retires and the cycles between them, and freezes DELAY cycles (0-255) after
    /// the counters do. Not with BRANCH_EVENT, whose trace it replaces.
    #[arg(long, value_name = "DELAY", value_parser = crate::parse_u64)]
    ip_ear: Option<u64>,
    /// With ETB_EVENT: capture taken branches only (PMC39.tm = 10; pfmon's option).
    #[arg(long, conflicts_with = "etb_tm_ntk")]
    etb_tm_tk: bool,
    /// With ETB_EVENT: capture not-taken branches only (tm = 01).
    #[arg(long)]
    etb_tm_ntk: bool,
    /// With ETB_EVENT: capture branches whose target was predicted (ptm = 10).
    #[arg(long, conflicts_with = "etb_ptm_incorrect")]
    etb_ptm_correct: bool,
    /// With ETB_EVENT: capture branches whose target was mispredicted (ptm = 01).
    #[arg(long)]
    etb_ptm_incorrect: bool,
    /// With ETB_EVENT: capture branches whose path was predicted (ppm = 10).
    #[arg(long, conflicts_with = "etb_ppm_incorrect")]
    etb_ppm_correct: bool,
    /// With ETB_EVENT: capture branches whose path was mispredicted (ppm = 01).
    #[arg(long)]
    etb_ppm_incorrect: bool,
    /// With ETB_EVENT: capture IP-relative branches only (brt = 01).
    #[arg(long, conflicts_with_all = ["etb_brt_ret", "etb_brt_ind"])]
    etb_brt_iprel: bool,
    /// With ETB_EVENT: capture returns only (brt = 10).
    #[arg(long, conflicts_with = "etb_brt_ind")]
    etb_brt_ret: bool,
    /// With ETB_EVENT: capture non-return indirect branches only (brt = 11).
    #[arg(long)]
    etb_brt_ind: bool,
}

impl QualifyOpts {
    pub fn set_options(&self) -> SetOptions {
        SetOptions {
            qualification: Request {
                irange: self.irange,
                irange2: self.irange2,
                inverse: self.inverse_irange,
                drange: self.drange,
                opcode: [self.opc_match32, self.opc_match34],
                no_check: self.no_qual_check,
            },
            ip_ear: self.ip_ear,
            etb: EtbFilter {
                tm: pick(&[(self.etb_tm_tk, 0b10), (self.etb_tm_ntk, 0b01)]),
                ptm: pick(&[(self.etb_ptm_correct, 0b10), (self.etb_ptm_incorrect, 0b01)]),
                ppm: pick(&[(self.etb_ppm_correct, 0b10), (self.etb_ppm_incorrect, 0b01)]),
                brt: pick(&[(self.etb_brt_iprel, 0b01), (self.etb_brt_ret, 0b10), (self.etb_brt_ind, 0b11)]),
            },
        }
    }
}

/// The mask value of the one flag given among `flags` (clap keeps them exclusive).
fn pick(flags: &[(bool, u64)]) -> Option<u64> {
    flags.iter().find(|(on, _)| *on).map(|&(_, value)| value)
}
