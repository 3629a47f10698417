//! Event qualification as the hardware computes it (§3.2.3.1, §3.3.5-§3.3.7): the
//! instruction address range tag of each IBR pair, the opcode matchers, the four tag
//! channels they combine into, and the data address range constraint of memory
//! pipeline events. Pure functions of register values, for the model and for checking
//! requests.
//!
//! The IBR and DBR fields are the Itanium architecture's (Software Developer's Manual,
//! volume 2, Table 7-1), which §3.3.5 uses without restating: an even register holds
//! the address, an odd one the mask (55:0; a 1 compares the address bit, and bits 63:56
//! are always compared), the privilege level mask (59:56) and, in an IBR, the x bit
//! (63). For Itanium instruction fetches IBR address bits 3:0 are not compared.

use super::qualification::{CFGDTAG_FIELDS, CH_IG_OPC, EN_DBRP_FIELDS, FINE, IG_IBRP_FIELDS, OPC_IG_AD, OPC_INV, OPC_MASK, OPC_MATCH};

/// The instruction's slot type, as the opcode matchers' m, i, f, b bits select it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlotType {
    M,
    I,
    F,
    B,
}

/// The four instruction breakpoint register pairs, IBR0-7.
pub type Ibrs = [u64; 8];
/// The four data breakpoint register pairs, DBR0-7.
pub type Dbrs = [u64; 8];

const MASK_BITS: u64 = (1 << 56) - 1;

/// Table 7-1: whether `address` matches a breakpoint pair's address and mask, address
/// bits below `ignored_low` left out.
pub fn address_match(address: u64, pair_address: u64, pair_mask: u64, ignored_low: u32) -> bool {
    let compared = (pair_mask & MASK_BITS | !MASK_BITS) & !((1u64 << ignored_low) - 1);
    (address ^ pair_address) & compared == 0
}

/// Table 7-1: the odd register's privilege level mask allows `cpl`.
pub fn plm_allows(pair_mask: u64, cpl: u8) -> bool {
    pair_mask >> (56 + u32::from(cpl & 3)) & 1 == 1
}

/// Table 7-1: the IBR pair is armed for debugging (x = 1), so the PMU does not use it
/// (§3.3.5.1: the range is considered "only if ... IBRPi x-bits are all 0s").
fn debug_armed(pair_mask: u64) -> bool {
    pair_mask >> 63 == 1
}

/// The registers that configure qualification.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Qualification {
    pub pmc32: u64,
    pub pmc33: u64,
    pub pmc34: u64,
    pub pmc35: u64,
    pub pmc36: u64,
    pub pmc38: u64,
    pub pmc41: u64,
    pub ibr: Ibrs,
    pub dbr: Dbrs,
}

impl Default for Qualification {
    /// The reset state (§3.3.12, ERRATA MA9-MA10) with cleared breakpoint registers:
    /// nothing is constrained.
    fn default() -> Qualification {
        use super::registers::pmc_reset;
        let reset = |i| pmc_reset(i).unwrap_or(0);
        Qualification {
            pmc32: reset(32),
            pmc33: reset(33),
            pmc34: reset(34),
            pmc35: reset(35),
            pmc36: reset(36),
            pmc38: reset(38),
            pmc41: reset(41),
            ibr: [0; 8],
            dbr: [0; 8],
        }
    }
}

/// One Itanium instruction as qualification sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Instruction {
    /// The bundle address (IP).
    pub ip: u64,
    pub slot: SlotType,
    /// The 41-bit instruction encoding.
    pub encoding: u64,
    /// PSR.cpl when it executes.
    pub cpl: u8,
}

impl Qualification {
    /// The state `writes` leave from reset, by register name: PMC32-36, PMC38, PMC41,
    /// IBR0-7 and DBR0-7 (an encoded set's registers; others are not qualification's).
    pub fn after(writes: &[(&str, u64)]) -> Qualification {
        let mut q = Qualification::default();
        for &(name, value) in writes {
            let index = |prefix: &str| name.strip_prefix(prefix).and_then(|n| n.parse::<usize>().ok());
            let slot = match name {
                "PMC32" => Some(&mut q.pmc32),
                "PMC33" => Some(&mut q.pmc33),
                "PMC34" => Some(&mut q.pmc34),
                "PMC35" => Some(&mut q.pmc35),
                "PMC36" => Some(&mut q.pmc36),
                "PMC38" => Some(&mut q.pmc38),
                "PMC41" => Some(&mut q.pmc41),
                _ => match (index("IBR"), index("DBR")) {
                    (Some(i), _) => q.ibr.get_mut(i),
                    (_, Some(i)) => q.dbr.get_mut(i),
                    _ => None,
                },
            };
            if let Some(slot) = slot {
                *slot = value;
            }
        }
        q
    }

    /// §3.3.5.1-§3.3.5.4: the instruction address range tag of IBR pair `i` (0-3).
    /// In fine mode, ranges 0 and 1 are bounded by IBRP0/2 and IBRP1/3 within one
    /// 64 KB page (exclusive bounds, as the spec's formula has them); ranges 2 and 3
    /// are "not defined" there and never match.
    pub fn range_tag(&self, i: usize, ip: u64, cpl: u8) -> bool {
        let ignored = IG_IBRP_FIELDS[i & 3].get(self.pmc38) == 1 || (i == 0 && OPC_IG_AD.get(self.pmc32) == 1);
        let (address, mask) = (self.ibr[2 * (i & 3)], self.ibr[2 * (i & 3) + 1]);
        if ignored || debug_armed(mask) {
            return true;
        }
        let fine = FINE.get(self.pmc38) == 1;
        let inside = match (fine, i) {
            (false, _) => address_match(ip, address, mask, 4),
            (true, 0 | 1) => {
                let upper = self.ibr[2 * (i + 2)];
                let low = |v: u64| v & 0xffff;
                address_match(ip, address, mask & !0xffff, 16) && low(ip) > low(address) && low(ip) < low(upper)
            }
            (true, _) => false,
        };
        // PMC32.inv inverts channel 0's range (effective only with ig_ad = 0, which
        // holds here).
        let inside = if i == 0 && OPC_INV.get(self.pmc32) == 1 { !inside } else { inside };
        inside && plm_allows(mask, cpl)
    }

    /// §3.3.6.2: whether opcode matcher `m` (0: PMC32/33, 1: PMC34/35) matches.
    pub fn opcode_match(&self, m: usize, slot: SlotType, encoding: u64) -> bool {
        let (cfg, bits) = if m & 1 == 0 { (self.pmc32, self.pmc33) } else { (self.pmc34, self.pmc35) };
        let slot_bit = match slot {
            SlotType::B => 48,
            SlotType::F => 49,
            SlotType::I => 50,
            SlotType::M => 51,
        };
        let mask = OPC_MASK.get(cfg);
        let differing = (encoding ^ OPC_MATCH.get(bits)) & !mask & OPC_MATCH.mask();
        cfg >> slot_bit & 1 == 1 && differing == 0
    }

    /// §3.3.6.2: tag channel `i`'s tag: its address range tag and, unless PMC36 says
    /// otherwise, its opcode matcher (OpCM0 for channels 0 and 2, OpCM1 for 1 and 3).
    /// PMC32.ig_ad set leaves channel 0 wholly unconstrained: Table 3-3's first row
    /// ("Unconstrained Monitoring, channel 0 (all events)") has ig_ad 1 with PMC36 and
    /// the opcode matcher "x" (ERRATA MA17).
    pub fn channel_tag(&self, i: usize, insn: &Instruction) -> bool {
        if i & 3 == 0 && OPC_IG_AD.get(self.pmc32) == 1 {
            return true;
        }
        let opcode = CH_IG_OPC[i & 3].get(self.pmc36) == 1 || self.opcode_match(i & 1, insn.slot, insn.encoding);
        opcode && self.range_tag(i & 3, insn.ip, insn.cpl)
    }

    /// §3.3.7, Table 3-14: whether a memory pipeline event of `insn` at data address
    /// `data` counts. Each enabled DBR pair j constrains as its cfgdtag says (00 IBRPj,
    /// OpCM and DBRPj; 01 IBRPj and OpCM; 10 DBRPj; 11 nothing); the matches of the DBR
    /// pairs in use (enabled, cfgdtag 00 or 10: "the address match is further qualified
    /// by ... PMC41 before being distributed") are ORed into one (§3.3.7, ERRATA MA18),
    /// and so are the enabled pairs' constraints. The DBRs' r, w and plm are ignored
    /// for monitoring (§3.3.7).
    pub fn memory_event_counts(&self, insn: &Instruction, data: u64) -> bool {
        self.memory_event_counts_with(|j| self.channel_tag(j, insn), Some(data))
    }

    /// [`Qualification::memory_event_counts`] with the tag channels' tags given
    /// (`channel_tag(j)`), for a caller that knows them otherwise, and the data address
    /// unknown (`None`: no DBR pair matches).
    pub fn memory_event_counts_with(&self, channel_tag: impl Fn(usize) -> bool, data: Option<u64>) -> bool {
        let mut enabled = (0..4).filter(|&j| EN_DBRP_FIELDS[j].get(self.pmc41) == 1).peekable();
        if enabled.peek().is_none() {
            return true;
        }
        let uses_dbr = |j: usize| EN_DBRP_FIELDS[j].get(self.pmc41) == 1 && CFGDTAG_FIELDS[j].get(self.pmc41) & 1 == 0;
        let dbr_match =
            data.is_some_and(|data| (0..4).any(|j| uses_dbr(j) && address_match(data, self.dbr[2 * j], self.dbr[2 * j + 1], 0)));
        enabled.any(|j| match CFGDTAG_FIELDS[j].get(self.pmc41) {
            0b00 => channel_tag(j) && dbr_match,
            0b01 => channel_tag(j),
            0b10 => dbr_match,
            _ => true,
        })
    }
}
