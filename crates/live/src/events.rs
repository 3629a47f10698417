//! What `pmu stat --live` asks the kernel for: each event string turned into the
//! `perf_event_attr` fields that select it (`type`, `config`, `config1`, `config2`,
//! the exclusion bits), and the groups the events are opened in.
//!
//! An event string is, in the order tried: one of perf's generic software or hardware
//! events (`task-clock`, `cycles`; the numbers are `enum perf_sw_ids` and
//! `enum perf_hw_id` of include/uapi/linux/perf_event.h, the names perf's
//! tools/perf/util/parse-events.c gives them, the hardware ones
//! `pmukit_core::pmu::GENERIC_EVENTS` in that enum's order); `NAME/term=value,…/` for a PMU in sysfs
//! (pmukit's encoding for a PMU of ours, the PMU's `format/` otherwise); one of
//! pmukit's events for a PMU of ours the machine has (`INSTR_EXEC`, `r07`); or a raw
//! `rHEX` for a core PMU that is not ours. Each may end in perf's `:u`, `:k`, `:h`.

use std::time::Duration;

use pmukit_arch::{self as arch, linux, Catalog};
use pmukit_core::event_string::{EventError, EventSel};
use pmukit_core::pmu::{Pmu, GENERIC_EVENTS};
use pmukit_core::suggest::nearest;

use crate::poll;
use crate::sysfs::{Machine, SysPmu};

/// `perf_event_attr.type` of perf's generic hardware events.
pub const PERF_TYPE_HARDWARE: u32 = 0;
/// `perf_event_attr.type` of the kernel's software events.
pub const PERF_TYPE_SOFTWARE: u32 = 1;
/// `perf_event_attr.type` of a core PMU's raw events.
pub const PERF_TYPE_RAW: u32 = 4;

/// The kernel's software events: `enum perf_sw_ids` (cgroup-switches since 5.13).
const SOFTWARE: &[(&str, u64)] = &[
    ("cpu-clock", 0),
    ("task-clock", 1),
    ("page-faults", 2),
    ("faults", 2),
    ("context-switches", 3),
    ("cs", 3),
    ("cpu-migrations", 4),
    ("migrations", 4),
    ("minor-faults", 5),
    ("major-faults", 6),
    ("alignment-faults", 7),
    ("emulation-faults", 8),
    ("dummy", 9),
    ("bpf-output", 10),
    ("cgroup-switches", 11),
];

/// The events `perf stat` 6.1 counts when given none, in its order.
pub const PERF_DEFAULT: &[&str] =
    &["task-clock", "context-switches", "cpu-migrations", "page-faults", "cycles", "instructions", "branches", "branch-misses"];

/// Which privilege levels an event leaves out (perf's `:u`, `:k`, `:h`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Exclude {
    pub user: bool,
    pub kernel: bool,
    pub hv: bool,
}

impl Exclude {
    pub fn any(self) -> bool {
        self.user || self.kernel || self.hv
    }

    /// perf's suffix for these exclusions (`:u` for user only), empty for none.
    pub fn suffix(self) -> String {
        if !self.any() {
            return String::new();
        }
        let levels = [(!self.user, 'u'), (!self.kernel, 'k'), (!self.hv, 'h')];
        format!(":{}", levels.iter().filter(|(on, _)| *on).map(|(_, c)| c).collect::<String>())
    }
}

/// One event as the kernel is asked for it.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveEvent {
    /// The name the report prints: the string as given, perf's way.
    pub name: String,
    /// The PMU the report names: pmukit's (`arm1176`), `software`, `hardware` for
    /// perf's generic events on a core PMU that is not ours, or the sysfs name.
    pub pmu: String,
    pub kind: u32,
    pub config: u64,
    pub config1: u64,
    pub config2: u64,
    pub exclude: Exclude,
    /// Counts nanoseconds (`task-clock`, `cpu-clock`), printed as perf does in msec.
    pub clock: bool,
    /// The CPUs its PMU counts on (sysfs `cpus` or `cpumask`), where it says; a
    /// system-wide count opens the event on these only.
    pub cpus: Option<Vec<usize>>,
    /// Whether its PMU can leave privilege levels out (ARMv6's cannot), so that a
    /// refused kernel count may be retried in user space only.
    pub filters: bool,
    /// pmukit's event, when it is one of ours: the index of its PMU in
    /// [`Host::ours`], and the selection (for grouping by the counters it may use).
    pub ours: Option<(usize, EventSel)>,
}

/// The machine's PMUs, and which of them are pmukit's.
pub struct Host<'c> {
    pub machine: Machine,
    /// pmukit's PMUs the machine has, with their sysfs entries.
    pub ours: Vec<(&'c Pmu, SysPmu)>,
    /// Every name an event string may give here: the candidates of an unknown name's
    /// suggestions, made once.
    names: Vec<String>,
}

/// The events to open: each group opened together (its first event the leader), and
/// how often to read them when a PMU has no overflow interrupt.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub events: Vec<LiveEvent>,
    /// Indices into `events`; every event is in exactly one group.
    pub groups: Vec<Vec<usize>>,
    pub poll: Option<Duration>,
    pub notes: Vec<String>,
}

fn error(input: &str, column: usize, width: usize, message: String, help: Option<String>) -> EventError {
    EventError { input: input.to_string(), column, width, message, help, suggestions: Vec::new() }
}

impl<'c> Host<'c> {
    /// The PMUs of `machine`, matched to `catalog`'s (`hint` names the chip when the
    /// driver's name is not distinctive: SPARC's `cpu`).
    pub fn new(machine: Machine, catalog: &'c Catalog, hint: Option<&str>) -> Host<'c> {
        let ours: Vec<(&Pmu, SysPmu)> = machine.ours(catalog, hint).into_iter().map(|(p, s)| (p, s.clone())).collect();
        let hardware = GENERIC_EVENTS.iter().flat_map(|names| names.iter());
        let mut names: Vec<String> = SOFTWARE.iter().map(|(n, _)| *n).chain(hardware.copied()).map(str::to_string).collect();
        for (pmu, _) in &ours {
            names.extend(pmu.events().map(|e| e.name.to_string()));
        }
        Host { machine, ours, names }
    }

    /// The core PMU when it is ours: the one perf's generic hardware events go to.
    pub fn core(&self) -> Option<usize> {
        (!self.ours.is_empty()).then_some(0)
    }

    /// The events counted when none are given: perf's default list; on a machine
    /// whose PMU is pmukit's, perf's software events and pmukit's default events of
    /// that PMU (those its metrics read) instead of perf's generic hardware ones.
    pub fn default_events(&self) -> Vec<String> {
        let Some((pmu, _)) = self.ours.first() else { return PERF_DEFAULT.iter().map(|s| s.to_string()).collect() };
        let mut tokens: Vec<String> = PERF_DEFAULT[..4].iter().map(|s| s.to_string()).collect();
        let prefix = format!("{}::", pmu.name());
        tokens.extend(arch::default_events(pmu).into_iter().filter(|e| e.starts_with(&prefix)));
        tokens
    }

    fn pmus(&self) -> Vec<&'c Pmu> {
        self.ours.iter().map(|(p, _)| *p).collect()
    }

    /// The event string `token` (the `index`-th of the list, for messages) as the
    /// kernel takes it.
    pub fn resolve(&self, catalog: &Catalog, token: &str) -> Result<LiveEvent, EventError> {
        let text = token.trim();
        let lead = token.len() - token.trim_start().len() + 1;
        if text.is_empty() {
            return Err(error(
                token,
                1,
                token.len(),
                "empty event".to_string(),
                Some("give an event: task-clock, cycles, or one of `pmu list`'s for this machine's PMU".to_string()),
            ));
        }
        let (base, exclude) = split_modifiers(token, text, lead)?;
        let event = |pmu: &str, kind: u32, config: u64| LiveEvent {
            name: text.to_string(),
            pmu: pmu.to_string(),
            kind,
            config,
            config1: 0,
            config2: 0,
            exclude,
            clock: false,
            cpus: None,
            filters: true,
            ours: None,
        };
        // perf's symbolic names are lower case (its lexer matches them exactly);
        // `CYCLES` is SPARC T4's own event, not perf's `cycles`.
        if let Some(&(_, id)) = SOFTWARE.iter().find(|(n, _)| *n == base) {
            return Ok(LiveEvent { clock: id <= 1, ..event("software", PERF_TYPE_SOFTWARE, id) });
        }
        // perf's generic hardware names, in the order of `enum perf_hw_id`.
        if let Some(id) = GENERIC_EVENTS.iter().position(|names| names.contains(&base)).map(|i| i as u64) {
            let Some(core) = self.core() else { return Ok(event("hardware", PERF_TYPE_HARDWARE, id)) };
            let pmu = self.ours[core].0;
            self.check_exclude(pmu, token, exclude, lead)?;
            // The kernel maps the generic event on the driver's table, as pmukit's does.
            let sel = linux::resolve(catalog, &[pmu], base);
            return Ok(LiveEvent {
                ours: sel.map(|s| (core, s)),
                filters: filters(pmu),
                cpus: cpus_of(&self.ours[core].1),
                ..event(pmu.name(), PERF_TYPE_HARDWARE, id)
            });
        }
        if let Some((name, terms)) = base.strip_suffix('/').and_then(|b| b.split_once('/')) {
            return self.with_terms(catalog, token, lead, name, terms, exclude);
        }
        let pmus = self.pmus();
        if let Some(sel) = linux::resolve(catalog, &pmus, base) {
            return self.ours_event(sel, token, exclude, lead);
        }
        let raw = base.strip_prefix('r').filter(|h| !h.is_empty() && h.len() <= 16 && h.bytes().all(|b| b.is_ascii_hexdigit()));
        if let (Some(hex), None) = (raw, self.core()) {
            let config = u64::from_str_radix(hex, 16).unwrap_or(0);
            return Ok(event("cpu", PERF_TYPE_RAW, config));
        }
        Err(self.unknown(token, base, lead))
    }

    /// An event of one of our PMUs, with the config its driver takes.
    fn ours_event(&self, sel: EventSel, token: &str, exclude: Exclude, lead: usize) -> Result<LiveEvent, EventError> {
        let at = self.ours.iter().position(|(p, _)| p.name() == sel.pmu).unwrap_or(0);
        let (pmu, sys) = (self.ours[at].0, &self.ours[at].1);
        self.check_exclude(pmu, token, exclude, lead)?;
        // pmukit's own modifiers (`:K`, ARM11's `:d`) program register bits that the
        // Linux drivers take from perf_event_attr or not at all.
        if let Some((name, _)) = sel.modifiers.first() {
            let at = token.rfind(':').map_or(lead, |c| c + 1);
            return Err(error(
                token,
                at,
                token.len() + 1 - at,
                format!("pmukit's modifier '{name}' has no Linux perf equivalent here"),
                Some("live counting takes perf's lower-case u (user), k (kernel) and h (hypervisor)".to_string()),
            ));
        }
        let Some(config) = linux::config(pmu, &sel) else {
            return Err(error(token, lead, token.trim().len(), format!("{} has no Linux perf driver", pmu.name()), None));
        };
        Ok(LiveEvent {
            // The canonical name, as a simulated run prints it and metrics read it.
            name: format!("{}{}", sel.name(), exclude.suffix()),
            pmu: pmu.name().to_string(),
            kind: sys.kind,
            config,
            config1: 0,
            config2: 0,
            exclude,
            clock: false,
            cpus: cpus_of(sys),
            filters: filters(pmu),
            ours: Some((at, sel)),
        })
    }

    /// ARMv6's driver has no event filter: since Linux 5.1 the core refuses any
    /// exclusion on such a PMU (PERF_PMU_CAP_NO_EXCLUDE) with EINVAL.
    fn check_exclude(&self, pmu: &Pmu, token: &str, exclude: Exclude, lead: usize) -> Result<(), EventError> {
        if !exclude.any() || filters(pmu) {
            return Ok(());
        }
        let at = token.rfind(':').map_or(lead, |c| c + 1);
        Err(error(
            token,
            at,
            token.len() + 1 - at,
            format!("{} counts every privilege level: its Linux driver has no event filter", pmu.name()),
            Some("the kernel refuses exclude_user, exclude_kernel and exclude_hv on it with EINVAL (PERF_PMU_CAP_NO_EXCLUDE, Linux 5.1 and later); drop the modifier".to_string()),
        ))
    }

    /// `NAME/terms/`: pmukit's encoding for a PMU of ours, the PMU's `format/` else.
    fn with_terms(
        &self,
        catalog: &Catalog,
        token: &str,
        lead: usize,
        name: &str,
        terms: &str,
        exclude: Exclude,
    ) -> Result<LiveEvent, EventError> {
        let Some(sys) = self.machine.pmu(name) else {
            let have: Vec<&str> = self.machine.pmus.iter().map(|p| p.name.as_str()).collect();
            let mut e =
                error(token, lead, name.len(), format!("no PMU '{name}' on this machine"), Some(format!("sysfs has {}", have.join(", "))));
            e.suggestions = nearest(name, have.iter().copied()).into_iter().map(str::to_string).collect();
            return Err(e);
        };
        if self.ours.iter().any(|(_, s)| s.name == sys.name) {
            let pmus = self.pmus();
            return match linux::resolve(catalog, &pmus, &format!("{name}/{terms}/")) {
                Some(sel) => self.ours_event(sel, token, exclude, lead),
                None => Err(error(
                    token,
                    lead + name.len() + 1,
                    terms.len(),
                    format!("'{terms}' is not an event of {name}"),
                    Some("give config=N or event=N with an event number of the PMU (pmu list)".to_string()),
                )),
            };
        }
        let mut out = [0u64; 3];
        let mut column = lead + name.len() + 1;
        for term in terms.split(',') {
            encode_term(sys, term, &mut out).map_err(|(message, help)| error(token, column, term.len().max(1), message, help))?;
            column += term.len() + 1;
        }
        Ok(LiveEvent {
            name: token.trim().to_string(),
            pmu: sys.name.clone(),
            kind: sys.kind,
            config: out[0],
            config1: out[1],
            config2: out[2],
            exclude,
            clock: false,
            cpus: cpus_of(sys),
            filters: true,
            ours: None,
        })
    }

    fn unknown(&self, token: &str, base: &str, lead: usize) -> EventError {
        let ours: Vec<&str> = self.ours.iter().map(|(p, _)| p.name()).collect();
        let help = if ours.is_empty() {
            "this machine has none of pmukit's PMUs: give perf's generic events (pmu stat --live --help lists them), NAME/term=value/ for a PMU with format/ in sysfs, or rHEX".to_string()
        } else {
            format!("give perf's generic events, {}'s (pmu list {}), NAME/config=N/ or rHEX", ours.join(", "), ours[0])
        };
        let mut e = error(token, lead, base.len(), format!("unknown event '{base}' on this machine"), Some(help));
        e.suggestions = nearest(base, self.names.iter().map(String::as_str)).into_iter().map(str::to_string).collect();
        e
    }

    /// The events of `tokens` and their groups: pmukit's events of one PMU grouped so
    /// that each group fits its counters at once (the sets in `together`, a metric's
    /// events, kept in one group where they fit), everything else alone, as perf does.
    pub fn plan(&self, catalog: &Catalog, tokens: &[String], together: &[Vec<usize>]) -> Result<Plan, EventError> {
        let events: Vec<LiveEvent> = tokens.iter().map(|t| self.resolve(catalog, t)).collect::<Result<_, _>>()?;
        let mut group_of: Vec<Option<usize>> = vec![None; events.len()];
        let mut groups: Vec<Vec<usize>> = Vec::new();
        for (at, (pmu, _)) in self.ours.iter().enumerate() {
            let members: Vec<usize> = (0..events.len()).filter(|&i| events[i].ours.as_ref().is_some_and(|(p, _)| *p == at)).collect();
            if members.is_empty() {
                continue;
            }
            let sels: Vec<EventSel> = members.iter().filter_map(|&i| events[i].ours.as_ref().map(|(_, s)| s.clone())).collect();
            let local = |i: usize| members.iter().position(|&m| m == i);
            let sets: Vec<Vec<usize>> = together.iter().map(|s| s.iter().filter_map(|&i| local(i)).collect()).collect();
            let allowed = arch::allowed_counters(pmu, &sels);
            let grouping = arch::groups(pmu, &sels, &allowed, &sets).map_err(|e| {
                let at = members.first().map_or(0, |&m| m);
                error(&tokens[at], 1, tokens[at].len(), format!("cannot count these events of {}: {e}", pmu.name()), None)
            })?;
            for g in grouping.groups {
                // The kernel opens an event once: it stays in the first group it is in.
                let mine: Vec<usize> = g.into_iter().map(|l| members[l]).filter(|&i| group_of[i].is_none()).collect();
                if mine.is_empty() {
                    continue;
                }
                for &i in &mine {
                    group_of[i] = Some(groups.len());
                }
                groups.push(mine);
            }
        }
        for (i, g) in group_of.iter().enumerate() {
            if g.is_none() {
                groups.push(vec![i]);
            }
        }
        groups.sort_by_key(|g| g.iter().min().copied());
        let mut notes = Vec::new();
        let polled = self.ours.iter().enumerate().find(|(at, (pmu, _))| {
            poll::needs_polling(pmu)
                && events
                    .iter()
                    .any(|e| e.ours.as_ref().is_some_and(|(p, _)| p == at) || (e.kind == PERF_TYPE_HARDWARE && self.core() == Some(*at)))
        });
        let poll = polled.map(|(_, (pmu, _))| {
            let (hz, from_cpufreq) = match self.machine.cpu_max_hz {
                Some(hz) => (hz, true),
                None => (poll::fastest_clock_hz(pmu), false),
            };
            notes.push(poll::note(pmu, hz, from_cpufreq));
            poll::interval(pmu, hz)
        });
        Ok(Plan { events, groups, poll, notes })
    }
}

fn cpus_of(sys: &SysPmu) -> Option<Vec<usize>> {
    sys.cpus.as_deref().and_then(crate::sysfs::cpu_list)
}

/// Whether `pmu`'s Linux driver can leave privilege levels out: ARMv6's has no
/// event filter (set_event_filter), and the core refuses every exclude_* bit on it.
fn filters(pmu: &Pmu) -> bool {
    pmu.desc.family != arch::arm11::FAMILY
}

/// Split perf's modifiers off `text` (the trimmed `token`, which starts at column
/// `lead`): `cycles:u` is cycles without the kernel and hypervisor.
fn split_modifiers<'t>(token: &str, text: &'t str, lead: usize) -> Result<(&'t str, Exclude), EventError> {
    let Some((base, mods)) = text.rsplit_once(':') else { return Ok((text, Exclude::default())) };
    if mods.is_empty() && !base.is_empty() && !base.ends_with(':') {
        return Err(error(
            token,
            lead + text.len() - 1,
            1,
            "nothing after ':'".to_string(),
            Some("give perf's modifiers u (user), k (kernel) or h (hypervisor), or drop the ':'".to_string()),
        ));
    }
    // `pmu::EVENT` and names with colons are not modifiers.
    if base.is_empty() || base.ends_with(':') || mods.is_empty() || !mods.chars().all(|c| c.is_ascii_alphabetic()) {
        return Ok((text, Exclude::default()));
    }
    if !mods.chars().all(|c| "ukhGHpPSIDW".contains(c)) {
        return Ok((text, Exclude::default()));
    }
    if let Some(bad) = mods.chars().find(|c| !"ukh".contains(*c)) {
        let column = lead + base.len() + 1 + mods.find(bad).unwrap_or(0);
        return Err(error(
            token,
            column,
            1,
            format!("modifier '{bad}' does not apply to counting"),
            Some("pmu stat --live takes perf's u (user), k (kernel) and h (hypervisor)".to_string()),
        ));
    }
    let has = |c| mods.contains(c);
    Ok((base, Exclude { user: !has('u'), kernel: !has('k'), hv: !has('h') }))
}

/// One `term=value` of a `NAME/…/` spelling into `out` (config, config1, config2), the
/// way perf's parse-events places a value's bits, lowest first, into the term's
/// format bits; or the message and help of why not.
fn encode_term(sys: &SysPmu, term: &str, out: &mut [u64; 3]) -> Result<(), (String, Option<String>)> {
    let (key, value) = term.split_once('=').unwrap_or((term, "1"));
    let key = key.trim();
    let value = pmukit_core::number::parse_u64(value.trim())
        .map_err(|_| (format!("'{}' is not a number in '{term}'", value.trim()), Some("give 0x… hex or decimal".to_string())))?;
    let direct = ["config", "config1", "config2"].iter().position(|c| *c == key);
    if let Some(which) = direct {
        out[which] = value;
        return Ok(());
    }
    let Some((_, format)) = sys.format.iter().find(|(name, _)| name == key) else {
        let terms: Vec<&str> = sys.format.iter().map(|(n, _)| n.as_str()).chain(["config", "config1", "config2"]).collect();
        return Err((format!("{} has no term '{key}'", sys.name), Some(format!("its terms are {}", terms.join(", ")))));
    };
    // The reader accepted the file, so it parses; config3 has no perf_event_attr field
    // in the kernels pmu supports (it came with Linux 6.3).
    let Some((which @ 0..=2, bits)) = crate::sysfs::format_bits(format) else {
        return Err((
            format!("{}'s term '{key}' sets {format}, which pmu cannot program", sys.name),
            Some("give config=, config1= or config2= directly".to_string()),
        ));
    };
    if bits.len() < 64 && value >> bits.len() != 0 {
        return Err((format!("{value:#x} does not fit {key}'s {} bits ({format})", bits.len()), None));
    }
    for (k, bit) in bits.iter().enumerate() {
        if value >> k & 1 == 1 {
            out[which] |= 1 << bit;
        }
    }
    Ok(())
}
