//! The PMUs a Linux kernel exposes under `<root>/bus/event_source/devices/<name>/`:
//! `type` (the number `perf_event_attr.type` takes), `cpus` or `cpumask` (the CPUs it
//! counts on), `format/<term>` (how a `NAME/term=value/` spelling maps to `config` bits,
//! `config:0-7`), `perf_event_mux_interval_ms`; and the CPU's top clock from
//! `<root>/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq` (kHz) where cpufreq exists,
//! and the online CPUs from `<root>/devices/system/cpu/online`.
//! Documentation/ABI/testing/sysfs-bus-event_source-devices* describe the files.

use std::path::{Path, PathBuf};

use pmukit_arch::Catalog;
use pmukit_core::pmu::Pmu;
use thiserror::Error;

/// One PMU as sysfs shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SysPmu {
    /// The directory's name: the name the driver registered (`armv6_1176`, `cpu`).
    pub name: String,
    /// `type`: perf_event_attr.type for this PMU's events.
    pub kind: u32,
    /// `cpus` or `cpumask`, as written (`0`, `0-3`); `None` when it has neither.
    pub cpus: Option<String>,
    /// `format/*`: each term and the `config` bits it sets (`event` → `config:0-7`).
    pub format: Vec<(String, String)>,
    /// `perf_event_mux_interval_ms`: the kernel's multiplexing rotation.
    pub mux_interval_ms: Option<u64>,
}

/// What the machine's sysfs says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Machine {
    pub pmus: Vec<SysPmu>,
    /// `cpuinfo_max_freq`, in Hz.
    pub cpu_max_hz: Option<u64>,
    /// `devices/system/cpu/online`: the CPUs a system-wide count opens counters on.
    pub online: Option<Vec<usize>>,
}

/// A kernel CPU list (`0`, `0-3,6`, as `cpus`, `cpumask` and `online` are written),
/// or `None` if `text` is not one. Lists beyond 4096 CPUs are refused, as no machine
/// pmukit counts on has them and a huge range would be a huge allocation.
pub fn cpu_list(text: &str) -> Option<Vec<usize>> {
    let mut cpus = Vec::new();
    for part in text.trim().split(',') {
        let (lo, hi) = part.split_once('-').unwrap_or((part, part));
        let (lo, hi): (usize, usize) = (lo.parse().ok()?, hi.parse().ok()?);
        if lo > hi || hi >= 4096 {
            return None;
        }
        cpus.extend(lo..=hi);
    }
    cpus.sort_unstable();
    cpus.dedup();
    Some(cpus)
}

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SysfsError {
    #[error("{path}: cannot read it ({why}); is this a Linux sysfs root (give --sysfs ROOT)?")]
    Unreadable { path: String, why: String },
    #[error("{path}: '{text}' is not {what}")]
    Malformed { path: String, text: String, what: &'static str },
}

fn read(path: &Path) -> Result<Option<String>, SysfsError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text.trim().to_string())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(SysfsError::Unreadable { path: path.display().to_string(), why: e.to_string() }),
    }
}

fn number(path: &Path, what: &'static str) -> Result<Option<u64>, SysfsError> {
    match read(path)? {
        None => Ok(None),
        Some(text) => text.parse().map(Some).map_err(|_| SysfsError::Malformed { path: path.display().to_string(), text, what }),
    }
}

/// A `format/` file's value: `config`, `config1`, `config2` or `config3`, a colon,
/// and bits or ranges separated by commas (`config:0-7`, `config1:1,6-10,44`), as
/// the attribute it sets (0-3) and its bits, lowest first; `None` if `text` is not one.
pub fn format_bits(text: &str) -> Option<(usize, Vec<u8>)> {
    let (field, ranges) = text.split_once(':')?;
    let which = ["config", "config1", "config2", "config3"].iter().position(|f| *f == field)?;
    let mut bits = Vec::new();
    for r in ranges.split(',') {
        let (lo, hi) = r.split_once('-').unwrap_or((r, r));
        let (lo, hi): (u8, u8) = (lo.parse().ok()?, hi.parse().ok()?);
        if lo > hi || hi > 63 {
            return None;
        }
        bits.extend(lo..=hi);
    }
    Some((which, bits))
}

/// Read the PMUs and the CPU clock under `root` (`/sys` on a live machine).
pub fn read_machine(root: &Path) -> Result<Machine, SysfsError> {
    let devices = root.join("bus/event_source/devices");
    let entries =
        std::fs::read_dir(&devices).map_err(|e| SysfsError::Unreadable { path: devices.display().to_string(), why: e.to_string() })?;
    let mut dirs: Vec<PathBuf> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
    dirs.sort();
    let mut pmus = Vec::new();
    for dir in dirs {
        let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let type_path = dir.join("type");
        let Some(kind) = number(&type_path, "a PMU type number")? else { continue };
        let kind = u32::try_from(kind).map_err(|_| SysfsError::Malformed {
            path: type_path.display().to_string(),
            text: kind.to_string(),
            what: "a 32-bit PMU type",
        })?;
        let cpus = match read(&dir.join("cpus"))? {
            Some(c) => Some((c, "cpus")),
            None => read(&dir.join("cpumask"))?.map(|c| (c, "cpumask")),
        };
        if let Some((text, file)) = cpus.as_ref().filter(|(text, _)| cpu_list(text).is_none()) {
            return Err(SysfsError::Malformed {
                path: dir.join(file).display().to_string(),
                text: text.clone(),
                what: "a CPU list such as 0-3",
            });
        }
        let cpus = cpus.map(|(text, _)| text);
        let mut format = Vec::new();
        if let Ok(terms) = std::fs::read_dir(dir.join("format")) {
            let mut terms: Vec<PathBuf> = terms.filter_map(Result::ok).map(|e| e.path()).collect();
            terms.sort();
            for t in terms {
                let Some(text) = read(&t)? else { continue };
                if format_bits(&text).is_none() {
                    return Err(SysfsError::Malformed { path: t.display().to_string(), text, what: "a format such as config:0-7" });
                }
                format.push((t.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(), text));
            }
        }
        let mux_interval_ms = number(&dir.join("perf_event_mux_interval_ms"), "a number of milliseconds")?;
        pmus.push(SysPmu { name, kind, cpus, format, mux_interval_ms });
    }
    let freq = root.join("devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq");
    // Up to 100 GHz: beyond that the file is not a clock, and a polling interval from
    // it would be no interval at all.
    let cpu_max_hz = match number(&freq, "a frequency in kHz")? {
        Some(khz @ 1..=100_000_000) => Some(khz * 1000),
        Some(khz) => {
            return Err(SysfsError::Malformed {
                path: freq.display().to_string(),
                text: khz.to_string(),
                what: "a CPU clock in kHz (1 to 100,000,000)",
            })
        }
        None => None,
    };
    let online_path = root.join("devices/system/cpu/online");
    let online = match read(&online_path)? {
        Some(text) => Some(cpu_list(&text).ok_or_else(|| SysfsError::Malformed {
            path: online_path.display().to_string(),
            text,
            what: "a CPU list such as 0-3",
        })?),
        None => None,
    };
    Ok(Machine { pmus, cpu_max_hz, online })
}

impl Machine {
    pub fn pmu(&self, name: &str) -> Option<&SysPmu> {
        self.pmus.iter().find(|p| p.name == name)
    }

    /// pmukit's PMUs the machine has, each with its sysfs entry: those whose Linux
    /// driver name is a directory here. SPARC's `cpu` is pmukit's `sparc-t4` only when
    /// `hint` says so (x86 registers a `cpu` PMU too).
    pub fn ours<'c>(&self, catalog: &'c Catalog, hint: Option<&str>) -> Vec<(&'c Pmu, &SysPmu)> {
        catalog
            .pmus
            .iter()
            .filter_map(|p| {
                let name = p.desc.linux_pmu?;
                let sys = self.pmu(name)?;
                // A name as generic as `cpu` is not evidence of the chip by itself.
                let distinctive = name != "cpu";
                (distinctive || hint == Some(p.name())).then_some((p, sys))
            })
            .collect()
    }
}
