//! The PMUs a Linux kernel exposes under `<root>/bus/event_source/devices/<name>/`:
//! `type` (the number `perf_event_attr.type` takes), `cpus` or `cpumask` (the CPUs it
//! counts on), `format/<term>` (how a `NAME/term=value/` spelling maps to `config` bits,
//! `config:0-7`), `perf_event_mux_interval_ms`; and the CPU's top clock from
//! `<root>/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq` (kHz) where cpufreq exists,
//! and the online CPUs from `<root>/devices/system/cpu/online`.
//! Documentation/ABI/testing/sysfs-bus-event_source-devices* describe the files.

use std::path::{Path, PathBuf};

use pmukit_arch::Catalog;
use pmukit_core::input;
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
    /// A link that leaves the root: sysfs's own links stay inside it.
    #[error("{path} leads to {target}, outside the sysfs root {root}: refused")]
    Outside { path: String, target: String, root: String },
    /// A FIFO, a device or a directory where an attribute file should be.
    #[error("{path} is not a regular file (a sysfs attribute is one): refused")]
    NotAFile { path: String },
    /// An attribute too large, or not text.
    #[error("{path}: {why}: refused")]
    NotAttribute { path: String, why: String },
}

impl SysfsError {
    /// Whether a file could not be read at all (missing, refused, outside the tree, not
    /// a regular file: exit 1), rather than read and found wrong (exit 2).
    pub fn is_unreadable(&self) -> bool {
        matches!(self, SysfsError::Unreadable { .. } | SysfsError::Outside { .. } | SysfsError::NotAFile { .. })
    }
}

/// The sysfs tree being read: every file is read only if it lies inside the root once
/// its links are followed, is a regular file, and holds at most a page of text
/// (`input::SYSFS_FILE`); what a message quotes of it is an excerpt.
struct Tree {
    root: PathBuf,
}

impl Tree {
    fn new(root: &Path) -> Result<Tree, SysfsError> {
        let root = std::fs::canonicalize(root).map_err(|e| unreadable(root, &e))?;
        Ok(Tree { root })
    }

    /// `path` with its links followed, if it lies inside the root; `None` if it does
    /// not exist.
    fn inside(&self, path: &Path) -> Result<Option<PathBuf>, SysfsError> {
        let real = match std::fs::canonicalize(path) {
            Ok(real) => real,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(unreadable(path, &e)),
        };
        if !real.starts_with(&self.root) {
            return Err(SysfsError::Outside {
                path: path.display().to_string(),
                target: real.display().to_string(),
                root: self.root.display().to_string(),
            });
        }
        Ok(Some(real))
    }

    fn read(&self, path: &Path) -> Result<Option<String>, SysfsError> {
        let Some(real) = self.inside(path)? else { return Ok(None) };
        let meta = std::fs::metadata(&real).map_err(|e| unreadable(path, &e))?;
        if !meta.is_file() {
            return Err(SysfsError::NotAFile { path: path.display().to_string() });
        }
        match input::read_file(&real, input::SYSFS_FILE) {
            Ok(text) => Ok(Some(text.trim().to_string())),
            Err(e) if e.is_unreadable() => Err(SysfsError::Unreadable { path: path.display().to_string(), why: why(&e) }),
            Err(e) => Err(SysfsError::NotAttribute { path: path.display().to_string(), why: why(&e) }),
        }
    }

    fn number(&self, path: &Path, what: &'static str) -> Result<Option<u64>, SysfsError> {
        match self.read(path)? {
            None => Ok(None),
            Some(text) => text.parse().map(Some).map_err(|_| malformed(path, &text, what)),
        }
    }

    /// The entries of a directory inside the root, sorted; `None` if it does not exist.
    fn list(&self, dir: &Path) -> Result<Option<Vec<PathBuf>>, SysfsError> {
        let Some(real) = self.inside(dir)? else { return Ok(None) };
        let entries = std::fs::read_dir(&real).map_err(|e| unreadable(dir, &e))?;
        let mut paths: Vec<PathBuf> = entries.filter_map(Result::ok).map(|e| dir.join(e.file_name())).collect();
        paths.sort();
        Ok(Some(paths))
    }
}

fn unreadable(path: &Path, e: &std::io::Error) -> SysfsError {
    SysfsError::Unreadable { path: path.display().to_string(), why: input::io_message(e) }
}

/// What of an input error a message says (its origin is the path already named).
fn why(e: &input::InputError) -> String {
    match e {
        input::InputError::Unreadable { why, .. } => why.clone(),
        input::InputError::TooLarge { what, bytes, .. } => format!("more than {}, the most {what} holds", input::size(*bytes)),
        input::InputError::NotText { offset, .. } => format!("not text (byte {offset})"),
    }
}

fn malformed(path: &Path, text: &str, what: &'static str) -> SysfsError {
    SysfsError::Malformed { path: path.display().to_string(), text: input::excerpt(text, input::EXCERPT_CHARS), what }
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

/// Read the PMUs and the CPU clock under `root` (`/sys` on a live machine), never
/// leaving it (a link out of it is refused) and reading only regular files.
pub fn read_machine(root: &Path) -> Result<Machine, SysfsError> {
    let tree = Tree::new(root)?;
    let devices = root.join("bus/event_source/devices");
    let dirs = tree
        .list(&devices)?
        .ok_or_else(|| SysfsError::Unreadable { path: devices.display().to_string(), why: "no such directory".to_string() })?;
    let mut pmus = Vec::new();
    for dir in dirs {
        let name = dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let type_path = dir.join("type");
        let Some(kind) = tree.number(&type_path, "a PMU type number")? else { continue };
        let kind = u32::try_from(kind).map_err(|_| malformed(&type_path, &kind.to_string(), "a 32-bit PMU type"))?;
        let cpus = match tree.read(&dir.join("cpus"))? {
            Some(c) => Some((c, "cpus")),
            None => tree.read(&dir.join("cpumask"))?.map(|c| (c, "cpumask")),
        };
        if let Some((text, file)) = cpus.as_ref().filter(|(text, _)| cpu_list(text).is_none()) {
            return Err(malformed(&dir.join(file), text, "a CPU list such as 0-3"));
        }
        let cpus = cpus.map(|(text, _)| text);
        let mut format = Vec::new();
        for t in tree.list(&dir.join("format"))?.unwrap_or_default() {
            let Some(text) = tree.read(&t)? else { continue };
            if format_bits(&text).is_none() {
                return Err(malformed(&t, &text, "a format such as config:0-7"));
            }
            format.push((t.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(), text));
        }
        let mux_interval_ms = tree.number(&dir.join("perf_event_mux_interval_ms"), "a number of milliseconds")?;
        pmus.push(SysPmu { name, kind, cpus, format, mux_interval_ms });
    }
    let freq = root.join("devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq");
    // Up to 100 GHz: beyond that the file is not a clock, and a polling interval from
    // it would be no interval at all.
    let cpu_max_hz = match tree.number(&freq, "a frequency in kHz")? {
        Some(khz @ 1..=100_000_000) => Some(khz * 1000),
        Some(khz) => return Err(malformed(&freq, &khz.to_string(), "a CPU clock in kHz (1 to 100,000,000)")),
        None => None,
    };
    let online_path = root.join("devices/system/cpu/online");
    let online = match tree.read(&online_path)? {
        Some(text) => Some(cpu_list(&text).ok_or_else(|| malformed(&online_path, &text, "a CPU list such as 0-3"))?),
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
