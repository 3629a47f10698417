//! pmukit-core: the architecture-neutral layer of pmukit.
//!
//! Registers and their access semantics, the event-table schema, the event-string
//! grammar, counter scheduling, the metric-expression language and perf-style counts
//! and reports. No module here knows any PMU family; architectures build on these.

pub mod count;
pub mod event_string;
pub mod input;
pub mod metric;
pub mod metric_group;
pub mod number;
pub mod perf_stat;
pub mod pmu;
pub mod register;
pub mod report;
pub mod schedule;
pub mod suggest;
pub mod table;
