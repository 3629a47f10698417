//! The sun4v hypervisor API as data: status codes, trap numbers, the function numbers
//! pmukit knows and the API groups they belong to (FWARC 2005/116, the sun4v core API,
//! as the OpenSPARC hypervisor `sun4v/hypervisor` and Linux `arch/sparc` define it; the
//! Niagara MMU statistics and KT performance register API documents). No behaviour:
//! `pmukit_sim::models::sun4v` simulates the calls. `docs/sun4v.md` cites the source of
//! every number.

use serde::Serialize;

/// Software trap number of the "fast trap" hypervisor calls: function number in `%o5`,
/// arguments in `%o0`-`%o4`, status back in `%o0`, results in `%o1`-`%o4`.
pub const FAST_TRAP: u64 = 0x80;
/// Software trap number of the core calls (API version negotiation). They are
/// unversioned: available before any API group is negotiated.
pub const CORE_TRAP: u64 = 0xff;
/// Argument registers `%o0`-`%o4`: no call takes more.
pub const MAX_ARGS: usize = 5;

/// Hypervisor call status, returned in `%o0` (ret0). The variants carry the spec's
/// names so code and the API documents can be read side by side.
#[allow(clippy::upper_case_acronyms)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[repr(u64)]
pub enum Status {
    EOK = 0,
    ENOCPU = 1,
    ENORADDR = 2,
    ENOINTR = 3,
    EBADPGSZ = 4,
    EBADTSB = 5,
    EINVAL = 6,
    EBADTRAP = 7,
    EBADALIGN = 8,
    EWOULDBLOCK = 9,
    ENOACCESS = 10,
    EIO = 11,
    ECPUERROR = 12,
    ENOTSUPPORTED = 13,
    ENOMAP = 14,
    ETOOMANY = 15,
    ECHANNEL = 16,
}

impl Status {
    /// Every status, in numeric order.
    pub const ALL: [Status; 17] = [
        Status::EOK,
        Status::ENOCPU,
        Status::ENORADDR,
        Status::ENOINTR,
        Status::EBADPGSZ,
        Status::EBADTSB,
        Status::EINVAL,
        Status::EBADTRAP,
        Status::EBADALIGN,
        Status::EWOULDBLOCK,
        Status::ENOACCESS,
        Status::EIO,
        Status::ECPUERROR,
        Status::ENOTSUPPORTED,
        Status::ENOMAP,
        Status::ETOOMANY,
        Status::ECHANNEL,
    ];

    /// The value returned in `%o0`.
    pub const fn number(self) -> u64 {
        self as u64
    }

    /// The spec's name (`EOK`, `EBADTRAP`, ...).
    pub const fn name(self) -> &'static str {
        match self {
            Status::EOK => "EOK",
            Status::ENOCPU => "ENOCPU",
            Status::ENORADDR => "ENORADDR",
            Status::ENOINTR => "ENOINTR",
            Status::EBADPGSZ => "EBADPGSZ",
            Status::EBADTSB => "EBADTSB",
            Status::EINVAL => "EINVAL",
            Status::EBADTRAP => "EBADTRAP",
            Status::EBADALIGN => "EBADALIGN",
            Status::EWOULDBLOCK => "EWOULDBLOCK",
            Status::ENOACCESS => "ENOACCESS",
            Status::EIO => "EIO",
            Status::ECPUERROR => "ECPUERROR",
            Status::ENOTSUPPORTED => "ENOTSUPPORTED",
            Status::ENOMAP => "ENOMAP",
            Status::ETOOMANY => "ETOOMANY",
            Status::ECHANNEL => "ECHANNEL",
        }
    }

    /// What the status means, as the hypervisor header's comment says it.
    pub const fn description(self) -> &'static str {
        match self {
            Status::EOK => "no error",
            Status::ENOCPU => "invalid CPU id",
            Status::ENORADDR => "invalid real address",
            Status::ENOINTR => "invalid interrupt id",
            Status::EBADPGSZ => "invalid page size encoding",
            Status::EBADTSB => "invalid TSB description",
            Status::EINVAL => "invalid argument",
            Status::EBADTRAP => "invalid function number",
            Status::EBADALIGN => "invalid address alignment",
            Status::EWOULDBLOCK => "call would block",
            Status::ENOACCESS => "no access to resource",
            Status::EIO => "I/O error",
            Status::ECPUERROR => "CPU is in error state",
            Status::ENOTSUPPORTED => "function or request is not supported",
            Status::ENOMAP => "no mapping found",
            Status::ETOOMANY => "hard resource limit exceeded",
            Status::ECHANNEL => "illegal LDC channel",
        }
    }

    pub fn from_number(number: u64) -> Option<Status> {
        Status::ALL.into_iter().find(|s| s.number() == number)
    }

    /// By name, ignoring case (`ebadtrap`, `EBADTRAP`).
    pub fn from_name(name: &str) -> Option<Status> {
        Status::ALL.into_iter().find(|s| s.name().eq_ignore_ascii_case(name))
    }

    /// By name or by number (decimal or `0x` hex), for the command line.
    pub fn lookup(key: &str) -> Option<Status> {
        Status::from_name(key).or_else(|| pmukit_core::number::parse_u64(key).ok().and_then(Status::from_number))
    }
}

/// The software trap a function is reached through.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Trap {
    /// [`FAST_TRAP`]: versioned calls, grouped into API groups.
    Fast,
    /// [`CORE_TRAP`]: the unversioned negotiation calls.
    Core,
}

impl Trap {
    /// The software trap number (`ta` operand).
    pub const fn number(self) -> u64 {
        match self {
            Trap::Fast => FAST_TRAP,
            Trap::Core => CORE_TRAP,
        }
    }
}

/// A hypervisor call: its trap, function number (`%o5`), API group and register use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Function {
    /// Lower-case name, as the API documents title the calls (`niagara_mmustat_conf`).
    pub name: &'static str,
    pub trap: Trap,
    pub number: u64,
    /// The API group that must be negotiated to call it; `None` for the core-trap calls.
    pub group: Option<u64>,
    /// Arguments taken from `%o0` up.
    pub args: usize,
    /// Values returned from `%o1` up, besides the status in `%o0`.
    pub rets: usize,
    pub summary: &'static str,
}

/// API group numbers, as negotiated with [`API_SET_VERSION`].
pub mod group {
    /// Selects the set of CPU errata the guest works around; holds no calls.
    pub const SUN4V: u64 = 0x000;
    /// The core API (FWARC 2005/116).
    pub const CORE: u64 = 0x001;
    /// Niagara (UltraSPARC T1) performance registers and MMU statistics.
    pub const NIAGARA: u64 = 0x200;
    /// KT (SPARC T3) performance counters.
    pub const KT_CPU: u64 = 0x209;
}

/// CORE_TRAP 0x00: select the version of an API group. arg0 group, arg1 major,
/// arg2 minor; ret1 the minor actually granted.
pub const API_SET_VERSION: Function = Function {
    name: "api_set_version",
    trap: Trap::Core,
    number: 0x00,
    group: None,
    args: 3,
    rets: 1,
    summary: "negotiate the version of an API group (major 0 disables it)",
};
/// CORE_TRAP 0x03: the negotiated version of an API group. arg0 group; ret1 major,
/// ret2 minor.
pub const API_GET_VERSION: Function = Function {
    name: "api_get_version",
    trap: Trap::Core,
    number: 0x03,
    group: None,
    args: 1,
    rets: 2,
    summary: "the negotiated version of an API group (0.0 when not negotiated)",
};
/// Niagara MMU statistics §2.1.
pub const NIAGARA_MMUSTAT_CONF: Function = Function {
    name: "niagara_mmustat_conf",
    trap: Trap::Fast,
    number: 0x102,
    group: Some(group::NIAGARA),
    args: 1,
    rets: 1,
    summary: "enable MMU statistics into the buffer at real address arg0 (0 disables); ret1 the previous buffer",
};
/// Niagara MMU statistics §2.2.
pub const NIAGARA_MMUSTAT_INFO: Function = Function {
    name: "niagara_mmustat_info",
    trap: Trap::Fast,
    number: 0x103,
    group: Some(group::NIAGARA),
    args: 0,
    rets: 1,
    summary: "the real address of the current MMU statistics buffer, or 0",
};
/// KT performance registers §3.2.1.
pub const KT_GET_PERFREG: Function = Function {
    name: "kt_get_perfreg",
    trap: Trap::Fast,
    number: 0x122,
    group: Some(group::KT_CPU),
    args: 1,
    rets: 1,
    summary: "read KT performance register PerfReg# arg0",
};
/// KT performance registers §3.2.2.
pub const KT_SET_PERFREG: Function = Function {
    name: "kt_set_perfreg",
    trap: Trap::Fast,
    number: 0x123,
    group: Some(group::KT_CPU),
    args: 2,
    rets: 0,
    summary: "write arg1 to KT performance register PerfReg# arg0",
};

/// Every function pmukit knows.
pub const FUNCTIONS: [Function; 6] =
    [API_SET_VERSION, API_GET_VERSION, NIAGARA_MMUSTAT_CONF, NIAGARA_MMUSTAT_INFO, KT_GET_PERFREG, KT_SET_PERFREG];

impl Function {
    pub fn by_number(trap: Trap, number: u64) -> Option<&'static Function> {
        FUNCTIONS.iter().find(|f| f.trap == trap && f.number == number)
    }

    /// By name, ignoring case (so the headers' `NIAGARA_MMUSTAT_CONF` works too).
    pub fn by_name(name: &str) -> Option<&'static Function> {
        FUNCTIONS.iter().find(|f| f.name.eq_ignore_ascii_case(name))
    }

    /// By name or number, for the command line. A number is looked up among the
    /// FAST_TRAP functions first, then the CORE_TRAP ones.
    pub fn lookup(key: &str) -> Option<&'static Function> {
        Function::by_name(key).or_else(|| {
            let n = pmukit_core::number::parse_u64(key).ok()?;
            Function::by_number(Trap::Fast, n).or_else(|| Function::by_number(Trap::Core, n))
        })
    }

    /// The group the function belongs to.
    pub fn api_group(&self) -> Option<&'static ApiGroup> {
        self.group.and_then(ApiGroup::by_number)
    }
}

/// An API group and the newest version of it pmukit knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ApiGroup {
    pub number: u64,
    /// Lower-case name (`niagara`).
    pub name: &'static str,
    pub description: &'static str,
    pub major: u64,
    pub minor: u64,
}

/// Every API group pmukit knows.
pub const GROUPS: [ApiGroup; 4] = [
    ApiGroup { number: group::SUN4V, name: "sun4v", description: "sun4v architecture errata level (no calls)", major: 1, minor: 0 },
    ApiGroup { number: group::CORE, name: "core", description: "sun4v core API (FWARC 2005/116)", major: 1, minor: 1 },
    ApiGroup {
        number: group::NIAGARA,
        name: "niagara",
        description: "Niagara performance registers and MMU statistics",
        major: 1,
        minor: 0,
    },
    ApiGroup { number: group::KT_CPU, name: "kt_cpu", description: "KT performance counters", major: 1, minor: 0 },
];

impl ApiGroup {
    pub fn by_number(number: u64) -> Option<&'static ApiGroup> {
        GROUPS.iter().find(|g| g.number == number)
    }

    /// By name, ignoring case.
    pub fn by_name(name: &str) -> Option<&'static ApiGroup> {
        GROUPS.iter().find(|g| g.name.eq_ignore_ascii_case(name))
    }

    /// By name or number, for the command line.
    pub fn lookup(key: &str) -> Option<&'static ApiGroup> {
        ApiGroup::by_name(key).or_else(|| pmukit_core::number::parse_u64(key).ok().and_then(ApiGroup::by_number))
    }

    /// The functions of the group: those whose `group` names it (membership is written
    /// once, on the function).
    pub fn functions(&self) -> impl Iterator<Item = &'static Function> + '_ {
        FUNCTIONS.iter().filter(move |f| f.group == Some(self.number))
    }
}
