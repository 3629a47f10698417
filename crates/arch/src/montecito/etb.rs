//! The execution trace buffer's data registers (§3.3.10): PMD48-63 and their extension
//! PMD39, in ETB mode (PMC42.mode = 000: branches, Tables 3-27, 3-29) and IP-EAR mode
//! (PMC42.mode = 1xx: retired IPs, Tables 3-31, 3-33). PMD39 holds four more bits of
//! each entry, in the order PMD48, PMD56, PMD49, PMD57, …, PMD55, PMD63 (a nibble
//! each). They hold valid data only while monitoring is frozen (§3.3.10.1.2).

use pmukit_core::register::{Access, Field, NamedValue, Register, Values};

const IGNORED: Access = Access::Reserved { unpredictable_read: false };

/// The PMD39 nibble (its lowest bit) that extends trace buffer entry PMD`index`.
pub const fn extension_bit(index: usize) -> u32 {
    let k = index - 48;
    (4 * (2 * (k % 8) + k / 8)) as u32
}

// Table 3-27: PMD48-63 in ETB mode.
/// Bit 0: the entry is a source (branch, rfi, exception, failed chk).
pub const ETB_S: Field = Field::new("s", 0, 0, "Source: 1 the address of a captured event, 0 a target").with_values(Values::Named(&[
    NamedValue { value: 0, name: "0", meaning: "a target (or undefined with PMC39.ds = 1)" },
    NamedValue { value: 1, name: "1", meaning: "the source of a captured branch, rfi, exception or failed chk" },
]));
/// Bit 1: with s, a misprediction (or a valid target); s = mp = 0 is an invalid entry.
pub const ETB_MP: Field =
    Field::new("mp", 1, 1, "Mispredict: s=1 mispredicted (1) or predicted (0); s=0 valid target (1) or invalid entry (0)");
/// Bits 3:2: with s = 1, the slot of the first taken event; 11 not taken.
pub const ETB_SLOT: Field =
    Field::new("slot", 3, 2, "With s = 1: the slot of the first taken event; 11 a not-taken event").with_values(Values::Named(&[
        NamedValue { value: 0b00, name: "00", meaning: "slot 0" },
        NamedValue { value: 0b01, name: "01", meaning: "slot 1" },
        NamedValue { value: 0b10, name: "10", meaning: "slot 2" },
        NamedValue { value: 0b11, name: "11", meaning: "a not-taken event" },
    ]));
/// Bits 63:4: the bundle address of the source, or of the target.
pub const ETB_ADDRESS: Field = Field::new("address", 63, 4, "Bundle address (bits 63:4) of the source (s = 1) or the target (s = 0)");
/// Table 3-27: PMD48-63 in ETB mode.
pub const PMD48_ETB: Register = Register::new(
    "PMD48",
    64,
    0,
    "Execution trace buffer entry in ETB mode, PMC42.mode = 000 (Table 3-27)",
    &[ETB_ADDRESS, ETB_SLOT, ETB_MP, ETB_S],
)
.with_aliases(ENTRIES);

// Table 3-31: PMD48-63 in IP-EAR mode.
/// Bits 63:60: the four low bits of the 6-bit saturating elapsed cycle count.
pub const IPEAR_CYCL: Field = Field::new("cycl", 63, 60, "Elapsed cycles since the previous retired IP: the four low bits of six");
/// Bits 59:8: bits 63:12 of the retired IP.
pub const IPEAR_IP: Field = Field::new("ip", 59, 8, "Retired IP, bits 63:12");
/// Bits 7:0: bits 11:4 of the retired IP, or with ef = 1 the rest of the delay count.
pub const IPEAR_DELAY: Field = Field::new("delay", 7, 0, "Retired IP bits 11:4; with ef = 1 (PMD39), the remainder of the delay count");
/// Table 3-31: PMD48-63 in IP-EAR mode.
pub const PMD48_IPEAR: Register =
    Register::new("PMD48", 64, 0, "IP-EAR entry, PMC42.mode = 1xx (Table 3-31)", &[IPEAR_CYCL, IPEAR_IP, IPEAR_DELAY])
        .with_aliases(ENTRIES);

/// PMD48-63: one layout for the sixteen entries.
pub const ENTRIES: &[&str] = &[
    "PMD49", "PMD50", "PMD51", "PMD52", "PMD53", "PMD54", "PMD55", "PMD56", "PMD57", "PMD58", "PMD59", "PMD60", "PMD61", "PMD62", "PMD63",
];

/// Table 3-29: PMD39 in ETB mode.
pub const PMD39_ETB: Register = Register::new(
    "PMD39",
    64,
    0,
    "Execution trace buffer extension in ETB mode: each entry's b1 and brflush (Table 3-29)",
    &[
        Field::new("pmd63_ig", 63, 62, "PMD63: reads zero; writes ignored").with_access(IGNORED),
        Field::new("pmd63_brflush", 61, 61, "PMD63: with bits 1:0 = 11, the back end mispredicted the branch and flushed the pipeline"),
        Field::new("pmd63_b1", 60, 60, "PMD63: with s = 1, the branch is in bundle 1: add 0x1 to bits 63:4"),
        Field::new("pmd55_ig", 59, 58, "PMD55: reads zero; writes ignored").with_access(IGNORED),
        Field::new("pmd55_brflush", 57, 57, "PMD55: with bits 1:0 = 11, the back end mispredicted the branch and flushed the pipeline"),
        Field::new("pmd55_b1", 56, 56, "PMD55: with s = 1, the branch is in bundle 1: add 0x1 to bits 63:4"),
        Field::new("pmd62_ig", 55, 54, "PMD62: reads zero; writes ignored").with_access(IGNORED),
        Field::new("pmd62_brflush", 53, 53, "PMD62: with bits 1:0 = 11, the back end mispredicted the branch and flushed the pipeline"),
        Field::new("pmd62_b1", 52, 52, "PMD62: with s = 1, the branch is in bundle 1: add 0x1 to bits 63:4"),
        Field::new("pmd54_ig", 51, 50, "PMD54: reads zero; writes ignored").with_access(IGNORED),
        Field::new("pmd54_brflush", 49, 49, "PMD54: with bits 1:0 = 11, the back end mispredicted the branch and flushed the pipeline"),
        Field::new("pmd54_b1", 48, 48, "PMD54: with s = 1, the branch is in bundle 1: add 0x1 to bits 63:4"),
        Field::new("pmd61_ig", 47, 46, "PMD61: reads zero; writes ignored").with_access(IGNORED),
        Field::new("pmd61_brflush", 45, 45, "PMD61: with bits 1:0 = 11, the back end mispredicted the branch and flushed the pipeline"),
        Field::new("pmd61_b1", 44, 44, "PMD61: with s = 1, the branch is in bundle 1: add 0x1 to bits 63:4"),
        Field::new("pmd53_ig", 43, 42, "PMD53: reads zero; writes ignored").with_access(IGNORED),
        Field::new("pmd53_brflush", 41, 41, "PMD53: with bits 1:0 = 11, the back end mispredicted the branch and flushed the pipeline"),
        Field::new("pmd53_b1", 40, 40, "PMD53: with s = 1, the branch is in bundle 1: add 0x1 to bits 63:4"),
        Field::new("pmd60_ig", 39, 38, "PMD60: reads zero; writes ignored").with_access(IGNORED),
        Field::new("pmd60_brflush", 37, 37, "PMD60: with bits 1:0 = 11, the back end mispredicted the branch and flushed the pipeline"),
        Field::new("pmd60_b1", 36, 36, "PMD60: with s = 1, the branch is in bundle 1: add 0x1 to bits 63:4"),
        Field::new("pmd52_ig", 35, 34, "PMD52: reads zero; writes ignored").with_access(IGNORED),
        Field::new("pmd52_brflush", 33, 33, "PMD52: with bits 1:0 = 11, the back end mispredicted the branch and flushed the pipeline"),
        Field::new("pmd52_b1", 32, 32, "PMD52: with s = 1, the branch is in bundle 1: add 0x1 to bits 63:4"),
        Field::new("pmd59_ig", 31, 30, "PMD59: reads zero; writes ignored").with_access(IGNORED),
        Field::new("pmd59_brflush", 29, 29, "PMD59: with bits 1:0 = 11, the back end mispredicted the branch and flushed the pipeline"),
        Field::new("pmd59_b1", 28, 28, "PMD59: with s = 1, the branch is in bundle 1: add 0x1 to bits 63:4"),
        Field::new("pmd51_ig", 27, 26, "PMD51: reads zero; writes ignored").with_access(IGNORED),
        Field::new("pmd51_brflush", 25, 25, "PMD51: with bits 1:0 = 11, the back end mispredicted the branch and flushed the pipeline"),
        Field::new("pmd51_b1", 24, 24, "PMD51: with s = 1, the branch is in bundle 1: add 0x1 to bits 63:4"),
        Field::new("pmd58_ig", 23, 22, "PMD58: reads zero; writes ignored").with_access(IGNORED),
        Field::new("pmd58_brflush", 21, 21, "PMD58: with bits 1:0 = 11, the back end mispredicted the branch and flushed the pipeline"),
        Field::new("pmd58_b1", 20, 20, "PMD58: with s = 1, the branch is in bundle 1: add 0x1 to bits 63:4"),
        Field::new("pmd50_ig", 19, 18, "PMD50: reads zero; writes ignored").with_access(IGNORED),
        Field::new("pmd50_brflush", 17, 17, "PMD50: with bits 1:0 = 11, the back end mispredicted the branch and flushed the pipeline"),
        Field::new("pmd50_b1", 16, 16, "PMD50: with s = 1, the branch is in bundle 1: add 0x1 to bits 63:4"),
        Field::new("pmd57_ig", 15, 14, "PMD57: reads zero; writes ignored").with_access(IGNORED),
        Field::new("pmd57_brflush", 13, 13, "PMD57: with bits 1:0 = 11, the back end mispredicted the branch and flushed the pipeline"),
        Field::new("pmd57_b1", 12, 12, "PMD57: with s = 1, the branch is in bundle 1: add 0x1 to bits 63:4"),
        Field::new("pmd49_ig", 11, 10, "PMD49: reads zero; writes ignored").with_access(IGNORED),
        Field::new("pmd49_brflush", 9, 9, "PMD49: with bits 1:0 = 11, the back end mispredicted the branch and flushed the pipeline"),
        Field::new("pmd49_b1", 8, 8, "PMD49: with s = 1, the branch is in bundle 1: add 0x1 to bits 63:4"),
        Field::new("pmd56_ig", 7, 6, "PMD56: reads zero; writes ignored").with_access(IGNORED),
        Field::new("pmd56_brflush", 5, 5, "PMD56: with bits 1:0 = 11, the back end mispredicted the branch and flushed the pipeline"),
        Field::new("pmd56_b1", 4, 4, "PMD56: with s = 1, the branch is in bundle 1: add 0x1 to bits 63:4"),
        Field::new("pmd48_ig", 3, 2, "PMD48: reads zero; writes ignored").with_access(IGNORED),
        Field::new("pmd48_brflush", 1, 1, "PMD48: with bits 1:0 = 11, the back end mispredicted the branch and flushed the pipeline"),
        Field::new("pmd48_b1", 0, 0, "PMD48: with s = 1, the branch is in bundle 1: add 0x1 to bits 63:4"),
    ],
);

/// Table 3-33: PMD39 in IP-EAR mode.
pub const PMD39_IPEAR: Register = Register::new(
    "PMD39",
    64,
    0,
    "IP-EAR extension: each entry's high cycle bits, flush and early freeze (Table 3-33)",
    &[
        Field::new("pmd63_cycl", 63, 62, "PMD63: the two high bits of the 6-bit elapsed cycle count"),
        Field::new("pmd63_f", 61, 61, "PMD63: a pipeline flush since the previous entry"),
        Field::new("pmd63_ef", 60, 60, "PMD63: early freeze (PSR disabled the IP-EAR, or a thread switch)"),
        Field::new("pmd55_cycl", 59, 58, "PMD55: the two high bits of the 6-bit elapsed cycle count"),
        Field::new("pmd55_f", 57, 57, "PMD55: a pipeline flush since the previous entry"),
        Field::new("pmd55_ef", 56, 56, "PMD55: early freeze (PSR disabled the IP-EAR, or a thread switch)"),
        Field::new("pmd62_cycl", 55, 54, "PMD62: the two high bits of the 6-bit elapsed cycle count"),
        Field::new("pmd62_f", 53, 53, "PMD62: a pipeline flush since the previous entry"),
        Field::new("pmd62_ef", 52, 52, "PMD62: early freeze (PSR disabled the IP-EAR, or a thread switch)"),
        Field::new("pmd54_cycl", 51, 50, "PMD54: the two high bits of the 6-bit elapsed cycle count"),
        Field::new("pmd54_f", 49, 49, "PMD54: a pipeline flush since the previous entry"),
        Field::new("pmd54_ef", 48, 48, "PMD54: early freeze (PSR disabled the IP-EAR, or a thread switch)"),
        Field::new("pmd61_cycl", 47, 46, "PMD61: the two high bits of the 6-bit elapsed cycle count"),
        Field::new("pmd61_f", 45, 45, "PMD61: a pipeline flush since the previous entry"),
        Field::new("pmd61_ef", 44, 44, "PMD61: early freeze (PSR disabled the IP-EAR, or a thread switch)"),
        Field::new("pmd53_cycl", 43, 42, "PMD53: the two high bits of the 6-bit elapsed cycle count"),
        Field::new("pmd53_f", 41, 41, "PMD53: a pipeline flush since the previous entry"),
        Field::new("pmd53_ef", 40, 40, "PMD53: early freeze (PSR disabled the IP-EAR, or a thread switch)"),
        Field::new("pmd60_cycl", 39, 38, "PMD60: the two high bits of the 6-bit elapsed cycle count"),
        Field::new("pmd60_f", 37, 37, "PMD60: a pipeline flush since the previous entry"),
        Field::new("pmd60_ef", 36, 36, "PMD60: early freeze (PSR disabled the IP-EAR, or a thread switch)"),
        Field::new("pmd52_cycl", 35, 34, "PMD52: the two high bits of the 6-bit elapsed cycle count"),
        Field::new("pmd52_f", 33, 33, "PMD52: a pipeline flush since the previous entry"),
        Field::new("pmd52_ef", 32, 32, "PMD52: early freeze (PSR disabled the IP-EAR, or a thread switch)"),
        Field::new("pmd59_cycl", 31, 30, "PMD59: the two high bits of the 6-bit elapsed cycle count"),
        Field::new("pmd59_f", 29, 29, "PMD59: a pipeline flush since the previous entry"),
        Field::new("pmd59_ef", 28, 28, "PMD59: early freeze (PSR disabled the IP-EAR, or a thread switch)"),
        Field::new("pmd51_cycl", 27, 26, "PMD51: the two high bits of the 6-bit elapsed cycle count"),
        Field::new("pmd51_f", 25, 25, "PMD51: a pipeline flush since the previous entry"),
        Field::new("pmd51_ef", 24, 24, "PMD51: early freeze (PSR disabled the IP-EAR, or a thread switch)"),
        Field::new("pmd58_cycl", 23, 22, "PMD58: the two high bits of the 6-bit elapsed cycle count"),
        Field::new("pmd58_f", 21, 21, "PMD58: a pipeline flush since the previous entry"),
        Field::new("pmd58_ef", 20, 20, "PMD58: early freeze (PSR disabled the IP-EAR, or a thread switch)"),
        Field::new("pmd50_cycl", 19, 18, "PMD50: the two high bits of the 6-bit elapsed cycle count"),
        Field::new("pmd50_f", 17, 17, "PMD50: a pipeline flush since the previous entry"),
        Field::new("pmd50_ef", 16, 16, "PMD50: early freeze (PSR disabled the IP-EAR, or a thread switch)"),
        Field::new("pmd57_cycl", 15, 14, "PMD57: the two high bits of the 6-bit elapsed cycle count"),
        Field::new("pmd57_f", 13, 13, "PMD57: a pipeline flush since the previous entry"),
        Field::new("pmd57_ef", 12, 12, "PMD57: early freeze (PSR disabled the IP-EAR, or a thread switch)"),
        Field::new("pmd49_cycl", 11, 10, "PMD49: the two high bits of the 6-bit elapsed cycle count"),
        Field::new("pmd49_f", 9, 9, "PMD49: a pipeline flush since the previous entry"),
        Field::new("pmd49_ef", 8, 8, "PMD49: early freeze (PSR disabled the IP-EAR, or a thread switch)"),
        Field::new("pmd56_cycl", 7, 6, "PMD56: the two high bits of the 6-bit elapsed cycle count"),
        Field::new("pmd56_f", 5, 5, "PMD56: a pipeline flush since the previous entry"),
        Field::new("pmd56_ef", 4, 4, "PMD56: early freeze (PSR disabled the IP-EAR, or a thread switch)"),
        Field::new("pmd48_cycl", 3, 2, "PMD48: the two high bits of the 6-bit elapsed cycle count"),
        Field::new("pmd48_f", 1, 1, "PMD48: a pipeline flush since the previous entry"),
        Field::new("pmd48_ef", 0, 0, "PMD48: early freeze (PSR disabled the IP-EAR, or a thread switch)"),
    ],
);

/// The trace buffer's registers in the mode a PMC42 value selects: IP-EAR for mode
/// 1xx, ETB otherwise (Table 3-30 defines 000 and 100).
pub fn layout(register: &str, pmc42: u64) -> Option<Register> {
    let ipear = super::capture::ip_ear_mode(pmc42);
    let entry = register.strip_prefix("PMD").and_then(|n| n.parse::<usize>().ok()).is_some_and(|n| (48..=63).contains(&n));
    Some(match (register, ipear) {
        ("PMD39", false) => PMD39_ETB,
        ("PMD39", true) => PMD39_IPEAR,
        (_, false) if entry => PMD48_ETB,
        (_, true) if entry => PMD48_IPEAR,
        _ => return None,
    })
}

/// A frozen trace buffer (§3.3.10): PMD38, PMD39 and the sixteen entries PMD48-63.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Snapshot {
    pub pmd38: u64,
    pub pmd39: u64,
    pub entries: [u64; 16],
}

impl Snapshot {
    /// The entries written, oldest first, as PMD indices (48-63): from `ebi` round
    /// the buffer when it has wrapped (`full`), else PMD48 up to the one before `ebi`
    /// (Tables 3-28, 3-32).
    pub fn order(&self) -> Vec<usize> {
        let ebi = (self.pmd38 & 0xf) as usize;
        if self.pmd38 >> 5 & 1 == 1 {
            (0..16).map(|k| 48 + (ebi + k) % 16).collect()
        } else {
            (48..48 + ebi).collect()
        }
    }

    fn entry(&self, index: usize) -> u64 {
        self.entries[index - 48]
    }

    /// Entry `index`'s four PMD39 bits.
    fn extension(&self, index: usize) -> u64 {
        self.pmd39 >> extension_bit(index) & 0xf
    }
}

/// One event of an execution trace (ETB mode), oldest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Traced {
    /// A captured branch, rfi, exception or failed chk, with the target recorded after
    /// it. None when the next entry is another source (§3.3.10: when the target bundle
    /// holds a captured branch the buffer may record only that branch, so the target
    /// is probably its bundle; but an excepting branch records no target either,
    /// footnote 1 of §3.3.10.1.2, so the decoder does not guess) or at the end.
    Source {
        /// The bundle address, corrected to the second bundle when PMD39's b1 says so.
        bundle: u64,
        /// The slot of the first taken event; `None` for a not-taken event (slot 11).
        slot: Option<u8>,
        mispredicted: bool,
        /// The back end mispredicted it and flushed the pipeline (PMD39 brflush).
        flushed: bool,
        target: Option<u64>,
    },
    /// A target whose source is not in the buffer (overwritten after a wrap).
    Target { bundle: u64 },
}

/// The branch trace in a frozen buffer in ETB mode (Tables 3-27, 3-29): each source
/// with its target, in the order they were recorded; invalid entries (s = mp = 0)
/// skipped.
pub fn branch_trace(snapshot: &Snapshot) -> Vec<Traced> {
    let mut out: Vec<Traced> = Vec::new();
    for index in snapshot.order() {
        let entry = snapshot.entry(index);
        let ext = snapshot.extension(index);
        let (s, mp) = (entry & 1 == 1, entry >> 1 & 1 == 1);
        let bundle = entry & !0xf;
        match (s, mp) {
            (true, _) => {
                // b1: the branch is in the second bundle of the pair, 16 bytes on.
                let bundle = if ext & 1 == 1 { bundle.wrapping_add(0x10) } else { bundle };
                let slot = (entry >> 2 & 0b11) as u8;
                out.push(Traced::Source {
                    bundle,
                    slot: (slot != 0b11).then_some(slot),
                    mispredicted: mp,
                    flushed: mp && ext >> 1 & 1 == 1,
                    target: None,
                });
            }
            (false, true) => match out.last_mut() {
                Some(Traced::Source { target: t @ None, .. }) => *t = Some(bundle),
                _ => out.push(Traced::Target { bundle }),
            },
            (false, false) => {}
        }
    }
    out
}

/// One retired IP of an IP-EAR history (Tables 3-31, 3-33), oldest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Retired {
    /// The IP; with `early_freeze` only bits 63:12 are known.
    pub ip: u64,
    /// Cycles since the previous retired IP, saturating at 63.
    pub cycles: u8,
    /// A pipeline flush happened since the previous entry.
    pub flush: bool,
    /// The entry was taken at an early freeze (PSR disabled the IP-EAR, a thread
    /// switch); `delay` is then the rest of the freeze delay.
    pub early_freeze: bool,
    pub delay: Option<u8>,
}

/// The retired-IP history in a frozen buffer in IP-EAR mode. The youngest entry of a
/// normal freeze (ef = 0) may not be an IP that retired (§3.3.10.2.1).
pub fn ip_history(snapshot: &Snapshot) -> Vec<Retired> {
    snapshot
        .order()
        .into_iter()
        .map(|index| {
            let entry = snapshot.entry(index);
            let ext = snapshot.extension(index);
            let early_freeze = ext & 1 == 1;
            let high = (entry >> 8 & ((1 << 52) - 1)) << 12;
            let low = entry & 0xff;
            Retired {
                ip: if early_freeze { high } else { high | low << 4 },
                cycles: ((ext >> 2 & 0b11) << 4 | entry >> 60) as u8,
                flush: ext >> 1 & 1 == 1,
                early_freeze,
                delay: early_freeze.then_some(low as u8),
            }
        })
        .collect()
}

/// The kind of a branch, as PMC39.brt filters it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum BranchKind {
    /// A branch to an address relative to its own (calls included).
    #[default]
    IpRelative,
    Return,
    /// An indirect branch other than a return.
    Indirect,
}

/// An execution flow change the trace buffer may capture (§3.3.10).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlowChange {
    /// An Itanium branch: taken or not, whether its path (taken / not taken) and its
    /// target were predicted correctly.
    Branch {
        kind: BranchKind,
        taken: bool,
        path_predicted: bool,
        target_predicted: bool,
    },
    Rfi,
    /// An exception (not an asynchronous interrupt).
    Exception,
    /// A failed, silently restarted chk.
    FailedChk,
}

/// The PSR fields the capture depends on (Figure 3-10).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PsrView {
    /// PSR.is: executing IA-32 code.
    pub ia32: bool,
    pub cpl: u8,
    pub up: bool,
    pub pp: bool,
}

/// Whether the trace buffer, configured by `pmc39` in ETB mode, captures `change`
/// (§3.3.10.1.1, Table 3-26). Every event passes the plm and pm filters (the monitor
/// is on at the current privilege level and enabled by PSR.up, or PSR.pp with pm = 1);
/// only branches pass tm, ptm, ppm, brt and ds: the equation of §3.3.10.1.1, where a
/// branch whose path was mispredicted has no target prediction recorded (it counts as
/// a correctly predicted target, so that ptm = 01 with ppm = 11 captures target
/// mispredictions but not path mispredictions: "but not both").
pub fn captures(pmc39: u64, change: FlowChange, psr: PsrView) -> bool {
    let plm = pmc39 & 0xf;
    let pm = pmc39 >> 6 & 1 == 1;
    let monitored = plm >> (psr.cpl & 3) & 1 == 1 && if pm { psr.pp } else { psr.up };
    if !monitored {
        return false;
    }
    let FlowChange::Branch { kind, taken, path_predicted, target_predicted } = change else { return true };
    let bits = |f: &pmukit_core::register::Field| f.get(pmc39);
    let (ds, tm, ptm, ppm, brt) = (
        bits(&super::capture::ETB_DS),
        bits(&super::capture::ETB_TM),
        bits(&super::capture::ETB_PTM),
        bits(&super::capture::ETB_PPM),
        bits(&super::capture::ETB_BRT),
    );
    let target_predicted = target_predicted || !path_predicted;
    let on = |mask: u64, good: bool| if good { mask & 0b10 != 0 } else { mask & 0b01 != 0 };
    let kind_ok = match brt {
        0b00 => true,
        0b01 => kind == BranchKind::IpRelative,
        0b10 => kind == BranchKind::Return,
        _ => kind == BranchKind::Indirect,
    };
    !psr.ia32
        && on(tm, taken)
        && on(ptm, target_predicted)
        && on(ppm, path_predicted)
        && !(ptm == 0b01 && ppm == 0b01)
        && ds == 0
        && kind_ok
}
