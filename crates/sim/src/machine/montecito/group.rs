//! What instruction execution, branches and the data side share: the issue group
//! being formed, adding signals, the stalls of the front and back ends, and where an
//! instruction sits in its bundle.

use super::{Montecito, Out, Signals};
use crate::program::{Phase, INSN};
use crate::stream::{Branch, Detail, MemRef, Signal, IBUF_BRQ_FULL, IBUF_FULL};

/// Itanium code: three instructions to a 16-byte bundle (ERRATA MMC2). Program
/// addresses count `INSN` bytes per instruction; the core fetches bundles. A trace may
/// give any 64-bit address, so the bundle address wraps as the address space does.
pub fn bundle_address(ip: u64) -> u64 {
    (ip / (3 * INSN)).wrapping_mul(16)
}

/// The slot (0-2) of the instruction at program address `ip` in its bundle.
pub fn slot(ip: u64) -> u64 {
    ip / INSN % 3
}

/// The address space a phase translates in: the kernel's region (0) for privileged
/// code, which every process shares, the process's own otherwise.
pub(super) fn address_space(phase: &Phase) -> u32 {
    if phase.privilege.is_user() {
        phase.context
    } else {
        0
    }
}

/// The memory port an instruction takes (ERRATA MMC1): none, a load's (the L1D's two
/// load ports, which semaphores, lfetches and `fc` take too) or a store's (its two
/// store ports).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Port {
    None,
    Load,
    Store,
}

/// The issue group being formed: its instructions' signals, how many, the loads and
/// the stores among them, and its data reference: the first read's, else the first
/// store's.
#[derive(Default)]
pub(super) struct Group {
    pub(super) ip: u64,
    pub(super) signals: Signals,
    pub(super) issued: u8,
    pub(super) loads: u8,
    pub(super) stores: u8,
    pub(super) mem: Option<MemRef>,
    /// What its data reference's and its fetch's misses were like.
    pub(super) detail: Detail,
    /// Its last branch, not taken and predicted so (one taken or mispredicted ends
    /// the group).
    pub(super) branch: Option<Branch>,
    /// The front end re-steered (a pipeline flush or an interruption's return), and
    /// the group starts where it went: its bundle's slots before are syllables not
    /// dispersed (SYLL_NOT_DISPERSED.MLX, ERRATA MMC60).
    pub(super) resteered: bool,
    /// The syllables of its first bundle it starts past: its two-bundle dispersal
    /// window holds 6 − `start` (MMC64).
    pub(super) start: u8,
    /// The group before it ended at an architected stop: the syllables it starts past
    /// without a re-steer are SYLL_NOT_DISPERSED.EXPL's, else IMPL's (MD38).
    pub(super) after_explicit: bool,
    /// The bundle of a branch it holds: dispersal splits after it (MMC64).
    pub(super) split: Option<u64>,
}

/// The instruction buffer's bundles (§2.1.2: "This 8 entry queue decouples the
/// front-end from the back-end"), which the front end fills two a cycle behind a
/// back end that stopped taking them (ERRATA MMC18).
pub(super) const IB_BUNDLES: u8 = 8;

impl Montecito {
    /// `cycles` cycles of a back-end stall counting `per_cycle`, `already` cycles into
    /// the stall: the front end fetches ahead, two bundles a cycle, and stalls too once
    /// it has filled the instruction buffer, or sooner, once the next bundle's branch
    /// finds the branch retirement queue full (`brq::room`, MMC78).
    pub(super) fn be_stall(&self, out: &mut Out, ip: u64, already: u64, cycles: u64, per_cycle: Signals) {
        let room = self.rooms.get(self.thread).and_then(|r| r.get(self.at)).copied().unwrap_or(IB_BUNDLES);
        let filling = u64::from(room.div_ceil(2)).saturating_sub(already).min(cycles);
        if filling > 0 {
            out.emit(ip, filling, per_cycle);
        }
        if cycles > filling {
            let why = if room < IB_BUNDLES { IBUF_BRQ_FULL } else { IBUF_FULL };
            out.emit(ip, cycles - filling, per_cycle.with(Signal::IBufFullCycles, why));
        }
    }
}

/// `cycles` cycles in which the front end delivers nothing for `cause`, the first
/// also counting `first`.
pub(super) fn fe_stall(out: &mut Out, ip: u64, cycles: u64, first: Signals, cause: Signal) {
    let per_cycle = Signals::default().with(Signal::IBufStallCycles, 1).with(cause, 1);
    if cycles > 0 {
        out.emit(ip, 1, first.union(per_cycle));
        out.emit(ip, cycles - 1, per_cycle);
    }
}
