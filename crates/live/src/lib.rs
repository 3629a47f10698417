//! pmukit-live: counting on a real machine through Linux perf_event. This first part
//! reads what the kernel exposes: the PMUs under `/sys/bus/event_source/devices`
//! (`sysfs`), which of them are pmukit's (by the name each Linux driver registers), and
//! how often a counter that raises no overflow interrupt must be read so that no wrap
//! goes unseen (`poll`). The sysfs root is a parameter, so tests run on recorded trees.

pub mod poll;
pub mod sysfs;
