//! A sun4v hypervisor, as far as a guest's performance tools meet it: hypervisor calls
//! (FAST_TRAP and the CORE_TRAP version negotiation) on a configurable machine, and the
//! Niagara MMU statistics the hypervisor keeps while it services TLB misses from the
//! guest's TSB ("Hypervisor API for Niagara MMU statistics collection").
//!
//! A [`Hypervisor`] holds one state per virtual CPU, the guest's real memory (mapped
//! ranges, with holes between them) and the negotiated API group versions. Calls go
//! through [`Hypervisor::fast_trap`] and [`Hypervisor::core_trap`]; the engine
//! ([`crate::engine`]) drives the statistics through [`Counting`]. [`decode_mmustat`]
//! reads buffers back. Every number comes from `pmukit_arch::sparc::{sun4v, niagara}`;
//! `docs/sun4v.md` describes the model and its readings of the spec (entries TN1-TN27).
//! On KT the KT performance register calls reach a [`Kt`] (`crate::models::kt`,
//! `docs/kt.md`).

// Guests reach this module through hypercall arguments and guest memory.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic))]

use std::collections::BTreeMap;
use std::fmt;

use pmukit_arch::sparc::niagara::{self, Context, Mmu, PageSize, Quantity, BUFFER_ALIGN, BUFFER_BYTES, COUNTER_BYTES};
pub use pmukit_arch::sparc::sun4v::Status;
use pmukit_arch::sparc::sun4v::{
    group, ApiGroup, Function, Trap, API_GET_VERSION, API_SET_VERSION, KT_GET_PERFREG, KT_SET_PERFREG, MAX_ARGS, NIAGARA_MMUSTAT_CONF,
    NIAGARA_MMUSTAT_INFO,
};
use serde::Serialize;
use thiserror::Error;

use crate::engine::{Counters, Counting};
use crate::models::kt::{Kt, KtConfig, KtConfigError};
use crate::stream::{Privilege, Signal, Span};

mod mmustat;

pub use mmustat::{decode_mmustat, DecodeError, MmuStatBuffer, MmuStatDump, MmuStatReader, MmuStatSlot, ReservedWarning};

/// The most virtual CPUs: a stream addresses at most 256 threads (`Span::thread` is a
/// `u8`), so more could never run.
pub const MAX_VCPUS: usize = 256;

/// Bytes of guest memory stored together; all-zero lines are not stored.
const LINE: usize = 64;
/// The machine's counters per vCPU: hits and ticks of every §2.3 slot (IMMU and DMMU,
/// context 0 and non-zero, four page sizes).
const COUNTERS_PER_VCPU: usize = Mmu::ALL.len() * Context::ALL.len() * PageSize::ALL.len() * Quantity::ALL.len();

/// The processor the hypervisor runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Processor {
    /// UltraSPARC T1: the only one with Niagara MMU statistics (§2.1, §2.2).
    Niagara1,
    /// SPARC T3.
    Kt,
    /// SPARC T4.
    T4,
}

impl Processor {
    pub const ALL: [Processor; 3] = [Processor::Niagara1, Processor::Kt, Processor::T4];

    pub const fn name(self) -> &'static str {
        match self {
            Processor::Niagara1 => "niagara1",
            Processor::Kt => "kt",
            Processor::T4 => "t4",
        }
    }

    /// The API groups a hypervisor on this processor offers by default: the sun4v and
    /// core groups everywhere, the Niagara group on Niagara 1, the KT group on KT.
    pub fn default_groups(self) -> Vec<u64> {
        match self {
            Processor::Niagara1 => vec![group::SUN4V, group::CORE, group::NIAGARA],
            Processor::Kt => vec![group::SUN4V, group::CORE, group::KT_CPU],
            Processor::T4 => vec![group::SUN4V, group::CORE],
        }
    }

    /// The default groups already negotiated when the guest starts: all but the KT
    /// group, which the guest's performance driver negotiates itself before its first
    /// call, as Linux's `pcr.c` does (`sun4v_hvapi_register(HV_GRP_KT_CPU, ...)`) (TK1).
    pub fn boot_groups(self) -> Vec<u64> {
        self.default_groups().into_iter().filter(|&g| g != group::KT_CPU).collect()
    }

    /// Can a hypervisor on this processor offer `group`? The KT group only on KT: its
    /// registers exist nowhere else.
    fn models(self, group: u64) -> bool {
        MODELLED_GROUPS.contains(&group) || (group == group::KT_CPU && self == Processor::Kt)
    }
}

impl fmt::Display for Processor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A mapped range of guest real memory, `[base, base + size)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct MemRange {
    pub base: u64,
    pub size: u64,
}

impl MemRange {
    /// One past the last byte; `None` when it would pass 2^64.
    pub fn end(&self) -> Option<u64> {
        self.base.checked_add(self.size)
    }

    fn contains(&self, ra: u64) -> bool {
        ra >= self.base && ra - self.base < self.size
    }
}

impl fmt::Display for MemRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#x}+{:#x}", self.base, self.size)
    }
}

/// The machine a [`Hypervisor`] simulates.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Config {
    pub processor: Processor,
    /// Virtual CPUs 0..vcpus; `Span::thread` n runs on vCPU n.
    pub vcpus: usize,
    /// Mapped guest real memory; every address outside is a hole.
    pub memory: Vec<MemRange>,
    /// API groups the hypervisor offers (`api_set_version` knows them).
    pub offered: Vec<u64>,
    /// Offered groups already negotiated, at their newest version, when the guest
    /// starts (as a boot loader would leave them). Calls of any other group return
    /// EBADTRAP until `api_set_version` enables it.
    pub negotiated: Vec<u64>,
    /// KT only: the nodes and what this guest may access through the KT calls.
    pub kt: KtConfig,
}

impl Config {
    /// `vcpus` virtual CPUs on `processor`, 256 MiB of guest memory at real address
    /// 0x1000_0000 (nothing is mapped at 0, the "disable" address), the processor's
    /// default groups offered and its boot groups negotiated, and the default KT machine
    /// (one node, every access allowed).
    pub fn new(processor: Processor, vcpus: usize) -> Config {
        Config {
            processor,
            vcpus,
            memory: vec![MemRange { base: 0x1000_0000, size: 0x1000_0000 }],
            offered: processor.default_groups(),
            negotiated: processor.boot_groups(),
            kt: KtConfig::default(),
        }
    }
}

/// Why a [`Config`] cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ConfigError {
    #[error("a machine needs 1 to {MAX_VCPUS} virtual CPUs, not {0} (a stream addresses at most {MAX_VCPUS} threads)")]
    Vcpus(usize),
    #[error("memory range {0} is empty")]
    EmptyRange(MemRange),
    #[error("memory range {0} runs past the end of the 64-bit real address space")]
    RangeOverflow(MemRange),
    #[error("memory ranges {0} and {1} overlap")]
    Overlap(MemRange, MemRange),
    #[error("unknown API group {0:#x}; known groups: {known}", known = known_groups())]
    UnknownGroup(u64),
    #[error("API group {group:#x} ({name}) is not modelled on this processor: its calls have no implementation here")]
    NotModelled { group: u64, name: &'static str },
    #[error("API group {0:#x} is listed twice")]
    Duplicate(u64),
    #[error("API group {0:#x} is negotiated but not offered")]
    NotOffered(u64),
    #[error(transparent)]
    Kt(#[from] KtConfigError),
}

fn known_groups() -> String {
    pmukit_arch::sparc::sun4v::GROUPS.iter().map(|g| format!("{:#x} {}", g.number, g.name)).collect::<Vec<_>>().join(", ")
}

/// The groups whose every call the model implements on every processor; these, and the
/// KT group on KT, may be offered.
const MODELLED_GROUPS: [u64; 3] = [group::SUN4V, group::CORE, group::NIAGARA];

/// What a hypervisor call returns: the status in `%o0` and the values it defines in
/// `%o1` and `%o2`. A value the call does not define (any value, on an error) is `None`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct HvResult {
    pub status: Status,
    pub ret1: Option<u64>,
    pub ret2: Option<u64>,
}

impl HvResult {
    fn error(status: Status) -> HvResult {
        HvResult { status, ret1: None, ret2: None }
    }

    fn ok(ret1: Option<u64>, ret2: Option<u64>) -> HvResult {
        HvResult { status: Status::EOK, ret1, ret2 }
    }

    pub fn is_ok(&self) -> bool {
        self.status == Status::EOK
    }
}

/// A guest memory access that is not entirely within mapped memory.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("guest real addresses {ra:#x}..+{len:#x} are not all mapped")]
pub struct MemoryError {
    pub ra: u64,
    pub len: usize,
}

/// Guest real memory: the mapped ranges, and the bytes written to them. Bytes never
/// written read as zero; lines that are all zero are not stored, so two memories with
/// the same contents compare equal however they got there.
#[derive(Debug, Clone, PartialEq, Eq)]
struct GuestMemory {
    ranges: Vec<MemRange>,
    lines: BTreeMap<u64, [u8; LINE]>,
}

impl GuestMemory {
    /// Is every byte of `[ra, ra + len)` mapped? Ranges may adjoin.
    fn mapped(&self, ra: u64, len: u64) -> bool {
        let Some(end) = ra.checked_add(len) else { return false };
        let mut at = ra;
        while at < end {
            match self.ranges.iter().find(|r| r.contains(at)).and_then(MemRange::end) {
                Some(next) => at = next,
                None => return false,
            }
        }
        true
    }

    fn check(&self, ra: u64, len: usize) -> Result<(), MemoryError> {
        if self.mapped(ra, len as u64) {
            Ok(())
        } else {
            Err(MemoryError { ra, len })
        }
    }

    fn read(&self, ra: u64, len: usize) -> Result<Vec<u8>, MemoryError> {
        self.check(ra, len)?;
        Ok((0..len as u64).map(|i| self.byte(ra + i)).collect())
    }

    fn write(&mut self, ra: u64, bytes: &[u8]) -> Result<(), MemoryError> {
        self.check(ra, bytes.len())?;
        // A line at a time: the first and last may be partial.
        let mut done = 0;
        while done < bytes.len() {
            let at = ra + done as u64;
            let n = (LINE - (at % LINE as u64) as usize).min(bytes.len() - done);
            let piece = bytes.get(done..done + n).unwrap_or_default();
            self.update(at, n, |line, from| {
                if let Some(to) = line.get_mut(from..from + piece.len()) {
                    to.copy_from_slice(piece);
                }
            });
            done += n;
        }
        Ok(())
    }

    fn byte(&self, ra: u64) -> u8 {
        self.lines.get(&(ra & !(LINE as u64 - 1))).and_then(|line| line.get((ra % LINE as u64) as usize)).copied().unwrap_or(0)
    }

    /// Add `by` (wrapping) to the big-endian 64-bit value at `ra`, which the caller has
    /// checked is mapped and 8-byte aligned (so it lies within one line).
    fn add_u64(&mut self, ra: u64, by: u64) {
        self.update(ra, COUNTER_BYTES, |line, at| {
            if let Some(field) = line.get_mut(at..at + COUNTER_BYTES) {
                let mut value = [0; COUNTER_BYTES];
                value.copy_from_slice(field);
                field.copy_from_slice(&u64::from_be_bytes(value).wrapping_add(by).to_be_bytes());
            }
        });
    }

    /// Apply `change` to the line holding `[ra, ra + len)`, dropping it if it ends up
    /// all zero.
    fn update(&mut self, ra: u64, len: usize, change: impl FnOnce(&mut [u8; LINE], usize)) {
        let base = ra & !(LINE as u64 - 1);
        let at = (ra - base) as usize;
        debug_assert!(at + len <= LINE, "an access within one line");
        let mut line = self.lines.get(&base).copied().unwrap_or([0; LINE]);
        change(&mut line, at);
        if line == [0; LINE] {
            self.lines.remove(&base);
        } else {
            self.lines.insert(base, line);
        }
    }
}

/// One virtual CPU's hypervisor state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Vcpu {
    /// Real address of the MMU statistics buffer; 0 when collection is disabled.
    mmustat: u64,
}

/// The negotiated version of an offered group; major 0 is "not negotiated".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Version {
    group: &'static ApiGroup,
    major: u64,
    minor: u64,
}

/// The simulated hypervisor. `Clone` and `PartialEq` cover everything a guest can
/// observe: every vCPU's configuration, the negotiated versions, all guest memory and,
/// on KT, the performance registers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hypervisor {
    processor: Processor,
    vcpus: Vec<Vcpu>,
    memory: GuestMemory,
    versions: Vec<Version>,
    /// The KT performance registers: `Some` on KT only.
    kt: Option<Kt>,
}

impl Hypervisor {
    pub fn new(config: Config) -> Result<Hypervisor, ConfigError> {
        if config.vcpus == 0 || config.vcpus > MAX_VCPUS {
            return Err(ConfigError::Vcpus(config.vcpus));
        }
        for (i, r) in config.memory.iter().enumerate() {
            if r.size == 0 {
                return Err(ConfigError::EmptyRange(*r));
            }
            let end = r.end().ok_or(ConfigError::RangeOverflow(*r))?;
            if let Some(other) = config.memory.iter().take(i).find(|o| o.base < end && r.base < o.end().unwrap_or(u64::MAX)) {
                return Err(ConfigError::Overlap(*other, *r));
            }
        }
        let mut versions: Vec<Version> = Vec::new();
        for &number in &config.offered {
            let group = ApiGroup::by_number(number).ok_or(ConfigError::UnknownGroup(number))?;
            if !config.processor.models(number) {
                return Err(ConfigError::NotModelled { group: number, name: group.name });
            }
            if versions.iter().any(|v| v.group.number == number) {
                return Err(ConfigError::Duplicate(number));
            }
            versions.push(Version { group, major: 0, minor: 0 });
        }
        for &number in &config.negotiated {
            let v = versions.iter_mut().find(|v| v.group.number == number).ok_or(ConfigError::NotOffered(number))?;
            (v.major, v.minor) = (v.group.major, v.group.minor);
        }
        let kt = match config.processor {
            Processor::Kt => Some(Kt::new(&config.kt, config.vcpus)?),
            Processor::Niagara1 | Processor::T4 => None,
        };
        Ok(Hypervisor {
            processor: config.processor,
            vcpus: vec![Vcpu::default(); config.vcpus],
            memory: GuestMemory { ranges: config.memory, lines: BTreeMap::new() },
            versions,
            kt,
        })
    }

    /// The KT performance registers; `None` on other processors.
    pub fn kt(&self) -> Option<&Kt> {
        self.kt.as_ref()
    }

    /// The KT performance registers, to start or end an L2 propagation on "another
    /// strand" ([`Kt::set_l2_busy`]); `None` on other processors.
    pub fn kt_mut(&mut self) -> Option<&mut Kt> {
        self.kt.as_mut()
    }

    pub fn processor(&self) -> Processor {
        self.processor
    }

    pub fn vcpus(&self) -> usize {
        self.vcpus.len()
    }

    /// The real address of `vcpu`'s MMU statistics buffer (0: collection disabled);
    /// `None` for a vCPU that does not exist.
    pub fn mmustat_buffer(&self, vcpu: usize) -> Option<u64> {
        self.vcpus.get(vcpu).map(|v| v.mmustat)
    }

    /// The negotiated (major, minor) of an offered group, (0, 0) when not negotiated;
    /// `None` when the group is not offered.
    pub fn version(&self, group: u64) -> Option<(u64, u64)> {
        self.versions.iter().find(|v| v.group.number == group).map(|v| (v.major, v.minor))
    }

    /// The guest's view of its memory: `len` bytes at real address `ra`.
    pub fn read_guest(&self, ra: u64, len: usize) -> Result<Vec<u8>, MemoryError> {
        self.memory.read(ra, len)
    }

    /// A guest store of `bytes` at real address `ra`; nothing is written unless every
    /// byte is mapped.
    pub fn write_guest(&mut self, ra: u64, bytes: &[u8]) -> Result<(), MemoryError> {
        self.memory.write(ra, bytes)
    }

    /// `ta FAST_TRAP` on `vcpu` with `function` in `%o5` and `args` in `%o0` up.
    ///
    /// EBADTRAP for a function number the model does not know or whose group is not
    /// offered and negotiated; EINVAL when `args` has more than the five argument
    /// registers or fewer than the function takes; ENOCPU when `vcpu` does not exist.
    /// None of these changes anything.
    pub fn fast_trap(&mut self, vcpu: usize, function: u64, args: &[u64]) -> HvResult {
        if vcpu >= self.vcpus.len() {
            return HvResult::error(Status::ENOCPU);
        }
        let Some(f) = Function::by_number(Trap::Fast, function) else { return HvResult::error(Status::EBADTRAP) };
        if !f.group.is_some_and(|g| self.negotiated(g)) {
            return HvResult::error(Status::EBADTRAP);
        }
        if args.len() > MAX_ARGS || args.len() < f.args {
            return HvResult::error(Status::EINVAL);
        }
        // Argument `i`, which the count check above guarantees the function has.
        let arg = |i: usize| args.get(i).copied().unwrap_or(0);
        if *f == NIAGARA_MMUSTAT_CONF {
            self.mmustat_conf(vcpu, arg(0))
        } else if *f == NIAGARA_MMUSTAT_INFO {
            self.mmustat_info(vcpu)
        } else if *f == KT_GET_PERFREG {
            self.kt_get_perfreg(vcpu, arg(0))
        } else if *f == KT_SET_PERFREG {
            self.kt_set_perfreg(vcpu, arg(0), arg(1))
        } else {
            // A known function of a group that cannot be offered (`MODELLED_GROUPS`).
            HvResult::error(Status::EBADTRAP)
        }
    }

    /// `ta CORE_TRAP` on `vcpu`: the unversioned API negotiation calls. Same argument
    /// rules as [`Hypervisor::fast_trap`]; the other core-trap functions (putchar, exit)
    /// are not modelled and return EBADTRAP.
    pub fn core_trap(&mut self, vcpu: usize, function: u64, args: &[u64]) -> HvResult {
        if vcpu >= self.vcpus.len() {
            return HvResult::error(Status::ENOCPU);
        }
        let Some(f) = Function::by_number(Trap::Core, function) else { return HvResult::error(Status::EBADTRAP) };
        if args.len() > MAX_ARGS || args.len() < f.args {
            return HvResult::error(Status::EINVAL);
        }
        let arg = |i: usize| args.get(i).copied().unwrap_or(0);
        if *f == API_SET_VERSION {
            self.api_set_version(arg(0), arg(1), arg(2))
        } else if *f == API_GET_VERSION {
            self.api_get_version(arg(0))
        } else {
            // A core-trap function in the tables that the model does not implement.
            HvResult::error(Status::EBADTRAP)
        }
    }

    fn negotiated(&self, group: u64) -> bool {
        self.version(group).is_some_and(|(major, _)| major != 0)
    }

    /// EINVAL for a group not offered, ENOTSUPPORTED for a major version the group does
    /// not have; major 0 disables the group; a minor above the newest is lowered to it.
    fn api_set_version(&mut self, group: u64, major: u64, minor: u64) -> HvResult {
        let Some(v) = self.versions.iter_mut().find(|v| v.group.number == group) else { return HvResult::error(Status::EINVAL) };
        if major == 0 {
            (v.major, v.minor) = (0, 0);
        } else if major == v.group.major {
            (v.major, v.minor) = (major, minor.min(v.group.minor));
        } else {
            return HvResult::error(Status::ENOTSUPPORTED);
        }
        HvResult::ok(Some(v.minor), None)
    }

    fn api_get_version(&self, group: u64) -> HvResult {
        match self.version(group) {
            Some((major, minor)) => HvResult::ok(Some(major), Some(minor)),
            None => HvResult::error(Status::EINVAL),
        }
    }

    /// §2.1. On ENORADDR or EBADALIGN the vCPU ends with collection disabled: "If an
    /// error is returned no statistics are collected (equivalent to passing an raddr of
    /// zero)" (TN5). EBADTRAP changes nothing: no statistics exist on that processor.
    fn mmustat_conf(&mut self, vcpu: usize, raddr: u64) -> HvResult {
        if self.processor != Processor::Niagara1 {
            return HvResult::error(Status::EBADTRAP);
        }
        let status = if !raddr.is_multiple_of(BUFFER_ALIGN) {
            Status::EBADALIGN
        } else if raddr != 0 && !self.memory.mapped(raddr, BUFFER_BYTES as u64) {
            Status::ENORADDR
        } else {
            Status::EOK
        };
        // The trap entry checked the vCPU.
        let Some(v) = self.vcpus.get_mut(vcpu) else { return HvResult::error(Status::ENOCPU) };
        if status == Status::EOK {
            let previous = std::mem::replace(&mut v.mmustat, raddr);
            return HvResult::ok(Some(previous), None);
        }
        v.mmustat = 0;
        HvResult::error(status)
    }

    /// KT performance registers §3.2.1. The group is offered on KT only, so `kt` is
    /// there; EBADTRAP otherwise keeps the function unreachable elsewhere.
    fn kt_get_perfreg(&self, vcpu: usize, perfreg: u64) -> HvResult {
        match self.kt.as_ref().map(|kt| kt.get(vcpu, perfreg)) {
            Some(Ok(value)) => HvResult::ok(Some(value), None),
            Some(Err(status)) => HvResult::error(status),
            None => HvResult::error(Status::EBADTRAP),
        }
    }

    /// KT performance registers §3.2.2: ret0 only.
    fn kt_set_perfreg(&mut self, vcpu: usize, perfreg: u64, value: u64) -> HvResult {
        match self.kt.as_mut().map(|kt| kt.set(vcpu, perfreg, value)) {
            Some(Ok(())) => HvResult::ok(None, None),
            Some(Err(status)) => HvResult::error(status),
            None => HvResult::error(Status::EBADTRAP),
        }
    }

    /// §2.2: idempotent, changes nothing.
    fn mmustat_info(&self, vcpu: usize) -> HvResult {
        if self.processor != Processor::Niagara1 {
            return HvResult::error(Status::EBADTRAP);
        }
        match self.vcpus.get(vcpu) {
            Some(v) => HvResult::ok(Some(v.mmustat), None),
            None => HvResult::error(Status::ENOCPU),
        }
    }
}

impl Hypervisor {
    /// MMU statistics exist on Niagara only (§2.1: EBADTRAP elsewhere).
    fn mmu_counters(&self) -> usize {
        match self.processor {
            Processor::Niagara1 => self.vcpus.len() * COUNTERS_PER_VCPU,
            _ => 0,
        }
    }

    /// The KT model and its counter number, for a virtual counter past the MMU ones.
    fn kt_counter(&self, i: usize) -> Option<(&Kt, usize)> {
        let k = i.checked_sub(self.mmu_counters())?;
        self.kt.as_ref().map(|kt| (kt, k))
    }
}

/// Virtual counter `i` is one quantity of one slot of vCPU `i / COUNTERS_PER_VCPU`'s
/// buffer. Every index is taken modulo its array's length.
#[allow(clippy::indexing_slicing)]
fn counter_of(i: usize) -> (usize, Mmu, Context, PageSize, Quantity) {
    let slot = i % COUNTERS_PER_VCPU;
    let (quantity, slot) = (Quantity::ALL[slot % 2], slot / 2);
    let (size, slot) = (PageSize::ALL[slot % PageSize::ALL.len()], slot / PageSize::ALL.len());
    (i / COUNTERS_PER_VCPU, Mmu::ALL[slot / Context::ALL.len()], Context::ALL[slot % Context::ALL.len()], size, quantity)
}

/// The signal MMU-statistics counter `i` (of any vCPU) adds: the machine's fills of
/// its MMU and page-size class, or their walk cycles (TN10, TN13, TN17). The signal
/// tables have an entry for every page-size class.
#[allow(clippy::indexing_slicing)]
pub fn mmustat_signal(i: usize) -> Signal {
    let (_, mmu, _, size, quantity) = counter_of(i);
    let class = size as usize;
    match (mmu, quantity) {
        (Mmu::Immu, Quantity::Hits) => Signal::ITLB_FILLS[class],
        (Mmu::Immu, Quantity::Ticks) => Signal::ITLB_WALK_CYCLES[class],
        (Mmu::Dmmu, Quantity::Hits) => Signal::DTLB_FILLS[class],
        (Mmu::Dmmu, Quantity::Ticks) => Signal::DTLB_WALK_CYCLES[class],
    }
}

/// The context a span's translations use: the nucleus context 0 for privileged code,
/// a user context otherwise; `None` for hyperprivileged code, which runs untranslated
/// (TN11, TN12).
fn context_of(privilege: Privilege) -> Option<Context> {
    match privilege {
        Privilege::Hyper => None,
        p if p.is_user() => Some(Context::CtxNon0),
        _ => Some(Context::Ctx0),
    }
}

/// The first `mmu_counters()` virtual counters are the MMU statistics (Niagara only);
/// on KT the KT counters follow (`Kt`'s counter `i - mmu_counters()`).
impl Counters for Hypervisor {
    fn counters(&self) -> usize {
        self.mmu_counters() + self.kt.as_ref().map_or(0, Counters::counters)
    }

    /// The buffer fields are 64-bit and wrap; they never interrupt (TN14).
    fn headroom(&self, i: usize) -> u64 {
        self.kt_counter(i).map_or(u64::MAX, |(kt, k)| kt.headroom(k))
    }

    /// `n` more hits or ticks in the vCPU's buffer.
    fn add(&mut self, i: usize, n: u64) -> bool {
        let mmu_counters = self.mmu_counters();
        if let Some(kt) = self.kt.as_mut().filter(|_| i >= mmu_counters) {
            return kt.add(i - mmu_counters, n);
        }
        let (vcpu, mmu, context, size, quantity) = counter_of(i);
        let Some(&Vcpu { mmustat: base @ 1.. }) = self.vcpus.get(vcpu) else { return false };
        self.memory.add_u64(base + niagara::offset(mmu, context, size, quantity) as u64, n);
        false
    }
}

impl<const F: usize> Counting<F> for Hypervisor {
    /// The hypervisor's TSB hits of the counter's vCPU, MMU, context and page size, and
    /// the cycles it spent on them, while collection is on ([`mmustat_signal`]).
    fn rate(&self, i: usize, span: &Span<F>) -> u64 {
        if let Some((kt, k)) = self.kt_counter(i) {
            return kt.rate(k, span);
        }
        let (vcpu, _, context, _, _) = counter_of(i);
        let enabled = self.vcpus.get(vcpu).is_some_and(|v| v.mmustat != 0);
        if !enabled || usize::from(span.thread) != vcpu || context_of(span.privilege) != Some(context) {
            return 0;
        }
        span.signals.get(mmustat_signal(i))
    }

    /// The MMU statistics do not depend on addresses; the KT's counters do.
    fn address_class(&self, span: &Span<F>) -> u64 {
        self.kt.as_ref().map_or(0, |kt| kt.address_class(span))
    }
}
