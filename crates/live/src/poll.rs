//! How often a counter must be read when its PMU raises no overflow interrupt.
//!
//! Linux folds a counter into its 64-bit count only when something reads it (a
//! `read()`, a context switch, a multiplexing rotation); the difference is taken modulo
//! the counter's width, so the count is exact as long as fewer than 2^width events
//! happen between two reads. With an overflow interrupt the kernel reads it at every
//! wrap; without one (the Raspberry Pi's BCM2835 gives the ARM1176 PMU no interrupt
//! line: arch/arm/boot/dts/broadcom/bcm2835.dtsi, and the kernel logs "no irqs for PMU,
//! sampling events not supported") nothing does, and a counter that wraps twice
//! between reads loses 2^width events silently.

use std::time::Duration;

use pmukit_arch::arm11;
use pmukit_core::pmu::Pmu;

/// Whether `pmu`'s Linux driver may run without an overflow interrupt. sysfs does not
/// say whether the PMU got one, so ARMv6 is always polled (its Pi has none; a board
/// that has one loses nothing by the reads); SPARC T4 takes overflows as NMIs.
pub fn needs_polling(pmu: &Pmu) -> bool {
    pmu.desc.family == arm11::FAMILY
}

/// The most a counter of `pmu` can advance in one cycle: each ARM11 event is a one-bit
/// signal per cycle, so one.
fn max_per_cycle(pmu: &Pmu) -> u64 {
    match pmu.desc.family {
        arm11::FAMILY => 1,
        _ => 15,
    }
}

/// How long `pmu`'s narrowest counter takes to wrap at the fastest it can count on a
/// `clock_hz` core, halved so that a late read still comes before a second wrap.
pub fn interval(pmu: &Pmu, clock_hz: u64) -> Duration {
    let width = pmu.desc.counters.iter().map(|c| c.width).min().unwrap_or(32).min(63);
    let per_second = u128::from(clock_hz.max(1)) * u128::from(max_per_cycle(pmu));
    let wrap_ns = (1u128 << width) * 1_000_000_000 / per_second;
    Duration::from_nanos(u64::try_from(wrap_ns / 2).unwrap_or(u64::MAX))
}

/// The clock to assume when cpufreq does not give one: the fastest the chip shipped at
/// (ARM1176: 1 GHz on the Raspberry Pi Zero; SPARC T4: 3.0 GHz), so that the interval
/// errs on the short side.
pub fn fastest_clock_hz(pmu: &Pmu) -> u64 {
    match pmu.desc.family {
        arm11::FAMILY => 1_000_000_000,
        _ => 3_000_000_000,
    }
}

/// The note `pmu stat --live` prints: why and how often it reads.
pub fn note(pmu: &Pmu, clock_hz: u64, from_cpufreq: bool) -> String {
    let every = interval(pmu, clock_hz);
    format!(
        "{} raises no overflow interrupt on boards such as the Raspberry Pi: its counters are read every {:.2} s, half the time a {}-bit counter takes to wrap at {:.2} GHz ({})",
        pmu.name(),
        every.as_secs_f64(),
        pmu.desc.counters.iter().map(|c| c.width).min().unwrap_or(32),
        clock_hz as f64 / 1e9,
        if from_cpufreq { "cpuinfo_max_freq" } else { "the fastest such chip, as cpufreq gives none" }
    )
}
