//! pmukit-live: counting on a real machine through Linux perf_event. It reads what the
//! kernel exposes: the PMUs under `/sys/bus/event_source/devices` (`sysfs`), which of
//! them are pmukit's (by the name each Linux driver registers), and how often a counter
//! that raises no overflow interrupt must be read so that no wrap goes unseen (`poll`);
//! turns event strings into the kernel's `perf_event_attr` fields and groups
//! (`events`); and counts a command or every CPU with them (`count`, Linux with the
//! `perf-event` feature). The sysfs root is a parameter, so tests run on recorded trees.

#[cfg(all(target_os = "linux", feature = "perf-event"))]
pub mod count;
pub mod events;
pub mod poll;
pub mod sysfs;
