//! Counting a [`Plan`] on the running kernel through `perf_event_open` (Linux, the
//! `perf-event` feature): a command and its children, or every CPU.
//!
//! A command is counted as perf counts it: the counters are opened disabled with
//! `enable_on_exec` and `inherit`, so that they start when the command's program
//! starts and follow every process and thread it creates. pmu opens them on itself
//! before it spawns the command; the command inherits them at fork and enables them at
//! exec, and pmu itself, which never execs, counts nothing. Reading pmu's counter
//! gives the command's count with every child's, live or exited (the kernel's
//! perf_event_read_value sums the inherited copies). Each event is read on its own
//! (no PERF_FORMAT_GROUP, which inherited counters refuse before Linux 4.13); groups
//! only make the kernel schedule their members together.

use std::ffi::OsString;
use std::io;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use perf_event::events::Raw;
use perf_event::{Builder, Counter};
use pmukit_core::count::Count;
use pmukit_core::report::{Aggregation, EventResult, Interval, LiveRun, StatReport, Unit};
use thiserror::Error;

use crate::events::{LiveEvent, Plan};

/// What to count.
pub struct Target<'a> {
    /// The command and its arguments (any bytes the OS takes); empty to count only for
    /// `duration`.
    pub command: &'a [OsString],
    /// Count every CPU (perf's `-a`), on these CPUs.
    pub cpus: Option<Vec<usize>>,
    /// Without a command: how long to count every CPU (until Ctrl-C if `None`).
    pub duration: Option<Duration>,
    /// Split the counts per CPU (perf's `-A`; with `cpus` only).
    pub per_cpu: bool,
    /// Read the counts at the end of every such interval too (perf's `-I`).
    pub interval: Option<Duration>,
}

#[derive(Debug, Error)]
pub enum LiveError {
    #[error("cannot open {event}: {why}")]
    Open { event: String, why: String },
    #[error("cannot run '{command}': {why}")]
    Spawn { command: String, why: io::Error },
    #[error("cannot read {event}: {why}")]
    Read { event: String, why: io::Error },
    #[error("{0}")]
    Usage(String),
}

/// The kernel's answer for an event it cannot count here.
fn unsupported(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ENOENT | libc::EOPNOTSUPP | libc::ENODEV))
}

fn denied(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EACCES | libc::EPERM))
}

fn paranoid() -> String {
    std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid").map_or_else(|_| "?".to_string(), |s| s.trim().to_string())
}

/// One event's counters: one for a command, one per CPU system-wide.
struct Opened {
    counters: Vec<(Option<usize>, Counter)>,
    /// False when the kernel does not support the event here (perf's `<not supported>`).
    supported: bool,
    /// Counted in user space only, after the kernel refused the kernel's share.
    user_only: bool,
}

fn builder<'a>(event: &LiveEvent, exclude_kernel: bool, cpu: Option<usize>) -> Builder<'a> {
    let mut b = Builder::new(Raw::new(event.config).config1(event.config1).config2(event.config2));
    b.attrs_mut().type_ = event.kind;
    b.exclude_user(event.exclude.user)
        .exclude_kernel(event.exclude.kernel || exclude_kernel)
        .exclude_hv(event.exclude.hv || exclude_kernel);
    match cpu {
        Some(cpu) => {
            b.any_pid().one_cpu(cpu);
        }
        None => {
            b.observe_self().inherit(true).enable_on_exec(true);
        }
    }
    b
}

/// Open every event of `plan` in its groups, for each CPU of `target` or for the
/// command; the notes say what was changed to make them open.
fn open(plan: &Plan, target: &Target, notes: &mut Vec<String>) -> Result<Vec<Opened>, LiveError> {
    let mut opened: Vec<Option<Opened>> = (0..plan.events.len()).map(|_| None).collect();
    let mut user_only_note = false;
    for group in &plan.groups {
        // A PMU that counts on some CPUs only (an uncore PMU's cpumask) is opened there.
        let places: Vec<Option<usize>> = match (&target.cpus, group.first().and_then(|&i| plan.events[i].cpus.as_ref())) {
            (Some(cpus), Some(only)) => cpus.iter().filter(|c| only.contains(c)).map(|&c| Some(c)).collect(),
            (Some(cpus), None) => cpus.iter().map(|&c| Some(c)).collect(),
            (None, _) => vec![None],
        };
        for &place in &places {
            let mut leader: Option<usize> = None;
            for &i in group {
                let event = &plan.events[i];
                let attempt = |exclude_kernel: bool, leader: Option<&mut Counter>| {
                    let b = builder(event, exclude_kernel, place);
                    match leader {
                        Some(l) => b.build_with_group(l),
                        None => b.build(),
                    }
                };
                let lead = leader.and_then(|l| opened[l].as_mut()).and_then(|o| o.counters.last_mut()).map(|(_, c)| c);
                let result = match attempt(false, lead) {
                    // An unprivileged user under perf_event_paranoid 2 may count user
                    // space only: perf then retries without the kernel, as here.
                    Err(e) if denied(&e) && target.cpus.is_none() && !event.exclude.kernel && event.filters => {
                        let lead = leader.and_then(|l| opened[l].as_mut()).and_then(|o| o.counters.last_mut()).map(|(_, c)| c);
                        attempt(true, lead).map(|c| (c, true))
                    }
                    other => other.map(|c| (c, false)),
                };
                let slot = opened[i].get_or_insert(Opened { counters: Vec::new(), supported: true, user_only: false });
                match result {
                    Ok((counter, user_only)) => {
                        slot.counters.push((place, counter));
                        slot.user_only |= user_only;
                        user_only_note |= user_only;
                        if leader.is_none() {
                            leader = Some(i);
                        }
                    }
                    Err(e) if unsupported(&e) => slot.supported = false,
                    Err(e) => return Err(open_error(event, &e, target)),
                }
            }
        }
    }
    if user_only_note {
        notes.push(format!(
            "perf_event_paranoid is {}: events marked :u count user space only; run as root or set /proc/sys/kernel/perf_event_paranoid to 1 or less to count the kernel too",
            paranoid()
        ));
    }
    Ok(opened.into_iter().map(|o| o.unwrap_or(Opened { counters: Vec::new(), supported: false, user_only: false })).collect())
}

fn open_error(event: &LiveEvent, e: &io::Error, target: &Target) -> LiveError {
    let why = if denied(e) {
        let need = if target.cpus.is_some() { "0 or less to count every CPU" } else { "1 or less to count the kernel" };
        format!("{e}: perf_event_paranoid is {}; run as root or set /proc/sys/kernel/perf_event_paranoid to {need}", paranoid())
    } else if e.raw_os_error() == Some(libc::EINVAL) {
        format!(
            "{e}: the kernel refused type {} config {:#x} (a config its driver does not take, or an option it cannot do)",
            event.kind, event.config
        )
    } else {
        e.to_string()
    };
    LiveError::Open { event: event.name.clone(), why }
}

/// One event's reading: its count and times summed over CPUs, and each CPU's (`None`
/// for a command's single counter).
type Reading = (Count, Vec<(Option<usize>, Count)>);

/// Read every counter.
fn read_all(plan: &Plan, opened: &mut [Opened]) -> Result<Vec<Reading>, LiveError> {
    let mut out = Vec::with_capacity(opened.len());
    for (event, o) in plan.events.iter().zip(opened.iter_mut()) {
        let mut total = Count { raw: 0, enabled: 0, running: 0 };
        let mut parts = Vec::new();
        for (place, counter) in &mut o.counters {
            let r = counter.read_count_and_time().map_err(|why| LiveError::Read { event: event.name.clone(), why })?;
            total.raw = total.raw.wrapping_add(r.count);
            total.enabled = total.enabled.saturating_add(r.time_enabled);
            total.running = total.running.saturating_add(r.time_running);
            parts.push((*place, Count { raw: r.count, enabled: r.time_enabled, running: r.time_running }));
        }
        out.push((total, parts));
    }
    Ok(out)
}

/// The CPU time of pmu's finished children (user, system), ns.
fn children_times() -> (u64, u64) {
    // SAFETY: getrusage writes into the struct it is given and nothing else.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage) } != 0 {
        return (0, 0);
    }
    let ns = |t: libc::timeval| (t.tv_sec as u64).saturating_mul(1_000_000_000).saturating_add(t.tv_usec as u64 * 1000);
    (ns(usage.ru_utime), ns(usage.ru_stime))
}

/// How a shell reports a status: the exit code, or 128 plus the signal.
fn shell_status(status: std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status.code().unwrap_or_else(|| 128 + status.signal().unwrap_or(0))
}

/// The readings a run takes while it waits: polls that keep a PMU without an overflow
/// interrupt from losing wraps, and `-I`'s intervals.
struct Clock<'p> {
    plan: &'p Plan,
    per_cpu: bool,
    start: Instant,
    /// When the next interval ends, with `-I`.
    next: Option<Instant>,
    every: Option<Duration>,
    /// The reading at the previous interval's end.
    last: Vec<Reading>,
}

impl Clock<'_> {
    /// How long to wait before the next reading (at most `idle`).
    fn wait(&self, idle: Duration) -> Duration {
        let interval = self.next.map_or(idle, |n| n.saturating_duration_since(Instant::now()));
        self.plan.poll.unwrap_or(idle).min(idle).min(interval)
    }

    /// Read what is due; with `last`, the run is over and a final, partial interval
    /// is taken as perf does.
    fn tick(&mut self, opened: &mut [Opened], on_interval: &mut dyn FnMut(Interval), last: bool) -> Result<(), LiveError> {
        let due = self.next.is_some_and(|n| Instant::now() >= n) || (last && self.next.is_some());
        if !due {
            if self.plan.poll.is_some() {
                read_all(self.plan, opened)?;
            }
            return Ok(());
        }
        let now = read_all(self.plan, opened)?;
        let delta: Vec<Reading> = now
            .iter()
            .zip(&self.last)
            .map(|((total, parts), (was, was_parts))| {
                let parts = parts.iter().zip(was_parts).map(|((cpu, c), (_, w))| (*cpu, minus(c, w))).collect();
                (minus(total, was), parts)
            })
            .collect();
        on_interval(Interval {
            time_ns: u64::try_from(self.start.elapsed().as_nanos()).unwrap_or(u64::MAX),
            events: results(self.plan, opened, delta, self.per_cpu, true),
            metrics: Vec::new(),
            unit_metrics: Vec::new(),
        });
        self.last = now;
        if let (Some(next), Some(every)) = (&mut self.next, self.every) {
            while *next <= Instant::now() {
                *next += every;
            }
        }
        Ok(())
    }
}

/// A command as messages and reports show it: its words, any bytes that are not text
/// shown as U+FFFD.
fn command_line(command: &[OsString]) -> String {
    command.iter().map(|a| a.to_string_lossy()).collect::<Vec<_>>().join(" ")
}

/// What a counter counted between two readings.
fn minus(now: &Count, was: &Count) -> Count {
    Count {
        raw: now.raw.wrapping_sub(was.raw),
        enabled: now.enabled.saturating_sub(was.enabled),
        running: now.running.saturating_sub(was.running),
    }
}

/// The report's events from a reading. In an interval, an event that was not enabled
/// at all (a sleeping command's) is perf's `<not counted>`.
fn results(plan: &Plan, opened: &[Opened], counts: Vec<Reading>, per_cpu: bool, interval: bool) -> Vec<EventResult> {
    plan.events
        .iter()
        .zip(opened)
        .zip(counts)
        .map(|((event, o), (count, parts))| {
            let name = if o.user_only { format!("{}:u", event.name) } else { event.name.clone() };
            let mut e = EventResult::new(&event.pmu, name, &count, Vec::new(), o.supported);
            if !o.supported || (interval && count.enabled == 0) {
                e.count = None;
            }
            e.unit = event.clock.then(|| "ns".to_string());
            if per_cpu {
                e = e.with_timed_units(parts.into_iter().filter_map(|(cpu, c)| {
                    let raw = (!interval || c.enabled > 0).then_some(c.raw);
                    Some((Unit::cpu(cpu?), raw, c.enabled, c.running))
                }));
            }
            e
        })
        .collect()
}

/// Count `plan` on `target`; `stop` (Ctrl-C) ends a system-wide count early. The
/// counters are read every `plan.poll` while the command runs when a PMU raises no
/// overflow interrupt, and with `target.interval` at the end of every interval, each
/// handed to `on_interval` (to print it) as it ends and not kept.
pub fn count(plan: &Plan, target: &Target, stop: &AtomicBool, on_interval: &mut dyn FnMut(Interval)) -> Result<StatReport, LiveError> {
    if target.cpus.is_none() && target.command.is_empty() {
        return Err(LiveError::Usage("give a command to count (pmu stat --live -- COMMAND) or -a to count every CPU".to_string()));
    }
    if target.duration.is_some() && !target.command.is_empty() {
        return Err(LiveError::Usage(
            "--duration times a system-wide count without a command; a command is counted until it ends".to_string(),
        ));
    }
    let mut notes = plan.notes.clone();
    let mut opened = open(plan, target, &mut notes)?;
    if target.cpus.is_some() {
        for o in &mut opened {
            for (_, c) in &mut o.counters {
                c.enable().map_err(|why| LiveError::Read { event: "a counter".to_string(), why })?;
            }
        }
    }
    let per_cpu = target.per_cpu && target.cpus.is_some();
    // getrusage sums every child pmu has waited for: this run's are the difference.
    let before = children_times();
    let start = Instant::now();
    let zero = plan.events.iter().zip(&opened).map(|(_, o)| {
        let none = Count { raw: 0, enabled: 0, running: 0 };
        (none.clone(), o.counters.iter().map(|(cpu, _)| (*cpu, none.clone())).collect())
    });
    let mut clock = Clock { plan, per_cpu, start, next: target.interval.map(|i| start + i), every: target.interval, last: zero.collect() };
    // The count wakes every 50 ms to see Ctrl-C (`stop`).
    let idle = Duration::from_millis(50);
    let mut exit_status = None;
    if let Some((program, args)) = target.command.split_first() {
        let mut child =
            Command::new(program).args(args).spawn().map_err(|why| LiveError::Spawn { command: command_line(target.command), why })?;
        let pid = i32::try_from(child.id()).unwrap_or(0);
        let mut passed_on = false;
        let (tx, rx) = mpsc::channel();
        let waiter = std::thread::spawn(move || {
            let status = child.wait();
            let _ = tx.send(());
            status
        });
        loop {
            match rx.recv_timeout(clock.wait(idle)) {
                Ok(()) | Err(mpsc::RecvTimeoutError::Disconnected) => break,
                Err(mpsc::RecvTimeoutError::Timeout) => clock.tick(&mut opened, on_interval, false)?,
            }
            // Ctrl-C at a terminal reaches the command too; a SIGINT sent to pmu alone is
            // passed on, once, and pmu goes on waiting for the command to end.
            if stop.load(Ordering::Relaxed) && !passed_on && pid > 0 {
                // SAFETY: kill(2) on the command's pid, which its waiter has not reaped
                // (the channel would have ended the loop).
                unsafe { libc::kill(pid, libc::SIGINT) };
                passed_on = true;
            }
        }
        let status = waiter.join().map_err(|_| LiveError::Usage("the thread waiting for the command failed".to_string()))?;
        let status = status.map_err(|why| LiveError::Spawn { command: command_line(target.command), why })?;
        exit_status = Some(shell_status(status));
    } else {
        let end = target.duration.unwrap_or(Duration::MAX);
        while start.elapsed() < end && !stop.load(Ordering::Relaxed) {
            std::thread::sleep(clock.wait(idle).min(end.saturating_sub(start.elapsed())));
            if start.elapsed() < end {
                clock.tick(&mut opened, on_interval, false)?;
            }
        }
    }
    let elapsed = start.elapsed();
    for o in &mut opened {
        for (_, c) in &mut o.counters {
            let _ = c.disable();
        }
    }
    clock.tick(&mut opened, on_interval, true)?;
    let counts = read_all(plan, &mut opened)?;
    let after = children_times();
    let (user_ns, sys_ns) = (after.0.saturating_sub(before.0), after.1.saturating_sub(before.1));
    let events = results(plan, &opened, counts, per_cpu, false);
    let mut pmus: Vec<String> = Vec::new();
    for e in &events {
        if !pmus.contains(&e.pmu) {
            pmus.push(e.pmu.clone());
        }
    }
    let system_wide = target.cpus.is_some();
    Ok(StatReport {
        pmu: pmus,
        workload: if system_wide { "system wide".to_string() } else { command_line(target.command) },
        seed: 0,
        cycles: 0,
        elapsed_ns: u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX),
        runs: 1,
        intervals: Vec::new(),
        aggregation: if per_cpu { Aggregation::Cpu } else { Aggregation::Total },
        events,
        metrics: Vec::new(),
        unit_metrics: Vec::new(),
        notes,
        groups: Vec::new(),
        live: Some(LiveRun {
            command: target.command.iter().map(|a| a.to_string_lossy().into_owned()).collect(),
            system_wide,
            exit_status,
            user_ns,
            sys_ns,
            elapsed_noise_pct: None,
        }),
    })
}
