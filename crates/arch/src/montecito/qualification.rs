//! The event qualification registers of §3.3.5-§3.3.7: the opcode matchers PMC32-35
//! (Tables 3-11 and 3-12) and their channel configuration PMC36 (Table 3-13), the
//! instruction address range configuration PMC38 (Table 3-10) and the memory pipeline
//! event constraints PMC41 (Table 3-14). Bits the tables do not list hold the
//! "predetermined" reset values of §3.3.5.2, §3.3.6.2 and §3.3.7 ("if software modifies
//! any bits not listed ... processor behavior is not defined"): they are fields whose
//! proper value is that, so decoding another value warns.

use pmukit_core::register::{Access, Field, NamedValue, Register, Values};

const IGNORED: Access = Access::Reserved { unpredictable_read: false };

const ONE_MATCHES: &[NamedValue] = &[
    NamedValue { value: 0, name: "0", meaning: "this slot type does not match" },
    NamedValue { value: 1, name: "1", meaning: "match instructions of this slot type" },
];

// Table 3-11: PMC32 and PMC34, opcode matchers 0 and 1 (OpCM0, OpCM1).
/// Bits 40:0: a 1 leaves the corresponding bit of the 41-bit encoding out of the match.
pub const OPC_MASK: Field = Field::new("mask", 40, 0, "Opcode bits left out of the match: bit n set ignores encoding bit n");
/// Bit 48: match B-slot instructions.
pub const OPC_B: Field = Field::new("b", 48, 48, "Match B-slot (branch) instructions").with_values(Values::Named(ONE_MATCHES));
/// Bit 49: match F-slot instructions.
pub const OPC_F: Field = Field::new("f", 49, 49, "Match F-slot (floating-point) instructions").with_values(Values::Named(ONE_MATCHES));
/// Bit 50: match I-slot instructions.
pub const OPC_I: Field = Field::new("i", 50, 50, "Match I-slot (integer) instructions").with_values(Values::Named(ONE_MATCHES));
/// Bit 51: match M-slot instructions (with bit 50, A-slot instructions).
pub const OPC_M: Field =
    Field::new("m", 51, 51, "Match M-slot (memory) instructions; A-slot needs m and i").with_values(Values::Named(ONE_MATCHES));
/// Bit 56 of PMC32: invert IBRP0's address range for tag channel 0 (when ig_ad is 0).
pub const OPC_INV: Field = Field::new("inv", 56, 56, "Invert tag channel 0's IBRP0 address range (effective only with ig_ad = 0)")
    .with_values(Values::Named(&[
        NamedValue { value: 0, name: "0", meaning: "count inside the range" },
        NamedValue { value: 1, name: "1", meaning: "count outside the range" },
    ]));
/// Bit 57 of PMC32: ignore the instruction address range check of tag channel 0.
pub const OPC_IG_AD: Field =
    Field::new("ig_ad", 57, 57, "Ignore tag channel 0's instruction address range check (IBRP0)").with_values(Values::Named(&[
        NamedValue { value: 0, name: "0", meaning: "IBRP0 constrains channel 0" },
        NamedValue { value: 1, name: "1", meaning: "every instruction address counts" },
    ]));
/// Bits 57:56 of PMC34: "This bit is ignored in PMC34" (Table 3-11), for inv and ig_ad.
pub const OPC1_IGNORED: Field =
    Field::new("inv_ig_ad", 57, 56, "inv and ig_ad apply to PMC32 only: ignored in PMC34 (Table 3-11)").with_access(IGNORED);

/// Table 3-11's reset value of PMC32 and PMC34: mask all ones, m, i, f, b, inv and
/// ig_ad one (every opcode matches, no address constraint). §3.3.12 says PAL writes
/// 0xffffffffffff, which would set ignored bits 47:41 and clear mifb: ERRATA MA9.
pub const PMC32_34_RESET: u64 = 0x030f_01ff_ffff_ffff;
/// PMC34's: the same, less inv and ig_ad, which "PMC34 ignores" (Table 3-11; ERRATA
/// MA9): a value pmukit writes or reports never sets bits the register ignores.
pub const PMC34_RESET: u64 = PMC32_34_RESET & !(0b11 << 56);
/// Table 3-12's reset value of PMC33 and PMC35: match all ones.
pub const PMC33_35_RESET: u64 = 0x1ff_ffff_ffff;

const OPC_IG_HIGH: Field = Field::new("ig", 63, 58, "Reads zero; writes ignored").with_access(IGNORED);
const OPC_IG_MID: Field = Field::new("ig", 55, 52, "Reads zero; writes ignored").with_access(IGNORED);
const OPC_IG_LOW: Field = Field::new("ig", 47, 41, "Reads zero; writes ignored").with_access(IGNORED);

/// Table 3-11: PMC32, opcode matcher 0, whose inv and ig_ad also configure tag
/// channel 0's address range.
pub const PMC32: Register = Register::new(
    "PMC32",
    64,
    PMC32_34_RESET,
    "Opcode match register of OpCM0: slot types, mask, and tag channel 0's address range switches (Table 3-11, §3.3.6.1)",
    &[OPC_IG_HIGH, OPC_IG_AD, OPC_INV, OPC_IG_MID, OPC_M, OPC_I, OPC_F, OPC_B, OPC_IG_LOW, OPC_MASK],
);
/// Table 3-11: PMC34, opcode matcher 1.
pub const PMC34: Register = Register::new(
    "PMC34",
    64,
    PMC34_RESET,
    "Opcode match register of OpCM1: slot types and mask (Table 3-11, §3.3.6.1)",
    &[OPC_IG_HIGH, OPC1_IGNORED, OPC_IG_MID, OPC_M, OPC_I, OPC_F, OPC_B, OPC_IG_LOW, OPC_MASK],
);

/// Table 3-12: bits 40:0, the encoding bits to match.
pub const OPC_MATCH: Field = Field::new("match", 40, 0, "Opcode bits to match against the 41-bit instruction encoding");
/// Table 3-12: PMC33 (OpCM0) and PMC35 (OpCM1).
pub const PMC33_35: Register = Register::new(
    "PMC33",
    64,
    PMC33_35_RESET,
    "Opcode match register: the encoding bits OpCM0 (PMC33) or OpCM1 (PMC35) matches (Table 3-12, §3.3.6.1)",
    &[Field::new("ig", 63, 41, "Ignored").with_access(IGNORED), OPC_MATCH],
)
.with_aliases(&["PMC35"]);

// Table 3-13: PMC36.
const CHANNEL_OPC: &[NamedValue] = &[
    NamedValue { value: 0, name: "0", meaning: "the channel's events are opcode constrained" },
    NamedValue { value: 1, name: "1", meaning: "no opcode constraint" },
];
/// PMC36 bit n (n = 0-3): tag channel n ignores its opcode matcher (OpCM0 for 0 and 2,
/// OpCM1 for 1 and 3).
pub const CH_IG_OPC: [Field; 4] = [
    Field::new("ch0_ig_opc", 0, 0, "Tag channel 0 ignores OpCM0").with_values(Values::Named(CHANNEL_OPC)),
    Field::new("ch1_ig_opc", 1, 1, "Tag channel 1 ignores OpCM1").with_values(Values::Named(CHANNEL_OPC)),
    Field::new("ch2_ig_opc", 2, 2, "Tag channel 2 ignores OpCM0").with_values(Values::Named(CHANNEL_OPC)),
    Field::new("ch3_ig_opc", 3, 3, "Tag channel 3 ignores OpCM1").with_values(Values::Named(CHANNEL_OPC)),
];
/// PMC36 bits 31:4: reserved, all ones at reset, not to be changed.
pub const PMC36_RSV: Field = Field::new("rsv", 31, 4, "Reserved: keep the reset value, all ones (§3.3.6.2)").with_proper(0xfff_ffff);
/// Table 3-13's reset value of PMC36: channels opcode constrained (0), rsv all ones.
/// §3.3.12 says 0xfffff0, which leaves bits 31:24 of rsv zero: ERRATA MA10.
pub const PMC36_RESET: u64 = 0xffff_fff0;
/// Table 3-13: PMC36.
pub const PMC36: Register = Register::new(
    "PMC36",
    64,
    PMC36_RESET,
    "Opcode match configuration: which tag channels the opcode matchers constrain (Table 3-13, §3.3.6.2)",
    &[Field::new("ig", 63, 32, "Ignored").with_access(IGNORED), PMC36_RSV, CH_IG_OPC[3], CH_IG_OPC[2], CH_IG_OPC[1], CH_IG_OPC[0]],
);

// Table 3-10: PMC38.
const IG_IBRP: &[NamedValue] = &[
    NamedValue { value: 0, name: "0", meaning: "the IBR pair's address range constrains" },
    NamedValue { value: 1, name: "1", meaning: "no constraint" },
];
/// PMC38 bits 1, 4, 7, 10: address range n (IBRPn) ignored.
pub const IG_IBRP_FIELDS: [Field; 4] = [
    Field::new("ig_ibrp0", 1, 1, "Ignore address range 0 (IBRP0: IBR0-1)").with_values(Values::Named(IG_IBRP)),
    Field::new("ig_ibrp1", 4, 4, "Ignore address range 1 (IBRP1: IBR2-3)").with_values(Values::Named(IG_IBRP)),
    Field::new("ig_ibrp2", 7, 7, "Ignore address range 2 (IBRP2: IBR4-5)").with_values(Values::Named(IG_IBRP)),
    Field::new("ig_ibrp3", 10, 10, "Ignore address range 3 (IBRP3: IBR6-7)").with_values(Values::Named(IG_IBRP)),
];
/// PMC38 bit 13: fine mode, IBRP0/2 and IBRP1/3 pairing into two arbitrary ranges.
pub const FINE: Field =
    Field::new("fine", 13, 13, "Fine mode: IBRP0,2 and IBRP1,3 bound two ranges within a 64 KB page").with_values(Values::Named(&[
        NamedValue { value: 0, name: "0", meaning: "normal mode: four power-of-two ranges" },
        NamedValue { value: 1, name: "1", meaning: "fine mode: ranges 0 and 1 bounded by IBRP0/2 and IBRP1/3" },
    ]));
/// §3.3.5.1 and §3.3.5.2: PMC38 "must contain the predetermined value 0x0db6".
pub const PMC38_RESET: u64 = 0xdb6;
const PRESET: &str = "Not listed in Table 3-10: keep 0xdb6's bits (§3.3.5.2: other values are undefined behaviour)";
/// Table 3-10: PMC38, the bits it does not list holding 0xdb6's values.
pub const PMC38: Register = Register::new(
    "PMC38",
    64,
    PMC38_RESET,
    "Instruction address range configuration (Table 3-10, §3.3.5.1); reset 0xdb6 (§3.3.12)",
    &[
        Field::new("rsv", 63, 14, PRESET).with_proper(0),
        FINE,
        Field::new("rsv", 12, 11, PRESET).with_proper(0b01),
        IG_IBRP_FIELDS[3],
        Field::new("rsv", 9, 8, PRESET).with_proper(0b01),
        IG_IBRP_FIELDS[2],
        Field::new("rsv", 6, 5, PRESET).with_proper(0b01),
        IG_IBRP_FIELDS[1],
        Field::new("rsv", 3, 2, PRESET).with_proper(0b01),
        IG_IBRP_FIELDS[0],
        Field::new("rsv", 0, 0, PRESET).with_proper(0),
    ],
);

// Table 3-14: PMC41.
const CFGDTAG: &[NamedValue] = &[
    NamedValue { value: 0b00, name: "00", meaning: "IBR/Opc/DBR: IBRPn, OpCM and DBRPn constrain" },
    NamedValue { value: 0b01, name: "01", meaning: "IBR/Opc: IBRPn and OpCM constrain" },
    NamedValue { value: 0b10, name: "10", meaning: "DBR: only DBRPn constrains" },
    NamedValue { value: 0b11, name: "11", meaning: "no constraints" },
];
/// PMC41's cfgdtag0-3 (bits 4:3, 12:11, 20:19, 28:27): how DBRPn constrains memory
/// pipeline events. Table 3-14 gives cfgdtag3 as "48,28:27"; bit 48 is en_dbrp3
/// (ERRATA MA11).
pub const CFGDTAG_FIELDS: [Field; 4] = [
    Field::new("cfgdtag0", 4, 3, "How DBRP0 (with IBRP0/OpCM0) constrains memory pipeline events").with_values(Values::Named(CFGDTAG)),
    Field::new("cfgdtag1", 12, 11, "How DBRP1 (with IBRP1/OpCM1) constrains memory pipeline events").with_values(Values::Named(CFGDTAG)),
    Field::new("cfgdtag2", 20, 19, "How DBRP2 (with IBRP2/OpCM0) constrains memory pipeline events").with_values(Values::Named(CFGDTAG)),
    Field::new("cfgdtag3", 28, 27, "How DBRP3 (with IBRP3/OpCM1) constrains memory pipeline events").with_values(Values::Named(CFGDTAG)),
];
const EN_DBRP: &[NamedValue] = &[
    NamedValue { value: 0, name: "0", meaning: "no constraints" },
    NamedValue { value: 1, name: "1", meaning: "constraints as set by cfgdtag" },
];
/// PMC41 bits 45-48: enable DBRPn's constraint. Table 3-14 names all four `en_dbrp0`
/// (ERRATA MA11).
pub const EN_DBRP_FIELDS: [Field; 4] = [
    Field::new("en_dbrp0", 45, 45, "Apply cfgdtag0's constraints").with_values(Values::Named(EN_DBRP)),
    Field::new("en_dbrp1", 46, 46, "Apply cfgdtag1's constraints").with_values(Values::Named(EN_DBRP)),
    Field::new("en_dbrp2", 47, 47, "Apply cfgdtag2's constraints").with_values(Values::Named(EN_DBRP)),
    Field::new("en_dbrp3", 48, 48, "Apply cfgdtag3's constraints").with_values(Values::Named(EN_DBRP)),
];
/// §3.3.7: PMC41 "must contain the predetermined value 0x2078fefefefe".
pub const PMC41_RESET: u64 = 0x2078_fefe_fefe;
const PRESET41: &str = "Not listed in Table 3-14: keep 0x2078fefefefe's bits (§3.3.7: other values are undefined behaviour)";
/// Table 3-14: PMC41, the bits it does not list holding 0x2078fefefefe's values.
pub const PMC41: Register = Register::new(
    "PMC41",
    64,
    PMC41_RESET,
    "Memory pipeline event constraints: data address range checking with the DBR pairs (Table 3-14, §3.3.7); reset 0x2078fefefefe (§3.3.12)",
    &[
        Field::new("rsv", 63, 49, PRESET41).with_proper(0),
        EN_DBRP_FIELDS[3],
        EN_DBRP_FIELDS[2],
        EN_DBRP_FIELDS[1],
        EN_DBRP_FIELDS[0],
        Field::new("rsv", 44, 29, PRESET41).with_proper(0x3c7),
        CFGDTAG_FIELDS[3],
        Field::new("rsv", 26, 21, PRESET41).with_proper(0x37),
        CFGDTAG_FIELDS[2],
        Field::new("rsv", 18, 13, PRESET41).with_proper(0x37),
        CFGDTAG_FIELDS[1],
        Field::new("rsv", 10, 5, PRESET41).with_proper(0x37),
        CFGDTAG_FIELDS[0],
        Field::new("rsv", 2, 0, PRESET41).with_proper(0b110),
    ],
);

// The Itanium architecture's breakpoint registers (Software Developer's Manual, volume
// 2, Table 7-1), which §3.3.5 and §3.3.7 borrow for address ranges: an even register
// holds the address, the odd one after it the mask and privilege levels.
/// Bits 55:0 of an odd IBR or DBR: a 1 compares that address bit (bits 63:56 always are).
pub const BP_MASK: Field = Field::new("mask", 55, 0, "Address bits compared: a 1 compares the bit (address bits 63:56 always are)");
/// Bits 59:56: the privilege levels the pair matches at (ignored when a DBR pair qualifies
/// events, §3.3.7).
pub const BP_PLM: Field = Field::new("plm", 59, 56, "Privilege levels matched: bit n matches at level n");
const BP_ADDR: &[Field] = &[Field::new("addr", 63, 0, "Match address (IBRs: bits 3:0 are not compared for instruction fetches)")];
/// IBR0, 2, 4, 6: the address an instruction breakpoint pair matches.
pub const IBR_ADDRESS: Register =
    Register::new("IBR0", 64, 0, "Instruction breakpoint pair address (SDM vol. 2 Table 7-1): IBR0-1 are IBRP0 ... IBR6-7 IBRP3", BP_ADDR)
        .with_aliases(&["IBR2", "IBR4", "IBR6"]);
/// DBR0, 2, 4, 6: the address a data breakpoint pair matches.
pub const DBR_ADDRESS: Register =
    Register::new("DBR0", 64, 0, "Data breakpoint pair address (SDM vol. 2 Table 7-1): DBR0-1 are DBRP0 ... DBR6-7 DBRP3", BP_ADDR)
        .with_aliases(&["DBR2", "DBR4", "DBR6"]);
/// IBR1, 3, 5, 7: the pair's mask, privilege levels and x (x must be 0 for the PMU to
/// use the pair, §3.3.5.1).
pub const IBR_MASK: Register = Register::new(
    "IBR1",
    64,
    0,
    "Instruction breakpoint pair mask (SDM vol. 2 Table 7-1); the PMU uses the pair only while x is 0 (§3.3.5.1)",
    &[
        Field::new("x", 63, 63, "Execute breakpoint (debugging): while set, the PMU ignores this pair").with_values(Values::Named(&[
            NamedValue { value: 0, name: "0", meaning: "free for event qualification" },
            NamedValue { value: 1, name: "1", meaning: "armed for debugging: the PMU ignores the pair" },
        ])),
        Field::new("ig", 62, 60, "Ignored").with_access(IGNORED),
        BP_PLM,
        BP_MASK,
    ],
)
.with_aliases(&["IBR3", "IBR5", "IBR7"]);
/// DBR1, 3, 5, 7: the pair's mask, privilege levels, w and r (r and w "should be
/// cleared to 0" for the PMU's pairs, §3.3.7).
pub const DBR_MASK: Register = Register::new(
    "DBR1",
    64,
    0,
    "Data breakpoint pair mask (SDM vol. 2 Table 7-1); r, w and plm are ignored for event qualification, r and w should be 0 (§3.3.7)",
    &[
        Field::new("r", 63, 63, "Read breakpoint (debugging); keep 0 for a pair that qualifies events").with_proper(0),
        Field::new("w", 62, 62, "Write breakpoint (debugging); keep 0 for a pair that qualifies events").with_proper(0),
        Field::new("ig", 61, 60, "Ignored").with_access(IGNORED),
        BP_PLM,
        BP_MASK,
    ],
)
.with_aliases(&["DBR3", "DBR5", "DBR7"]);
