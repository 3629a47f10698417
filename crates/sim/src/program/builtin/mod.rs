//! The built-in programs, deterministic for a name and a seed.
//!
//! `compute`, `branchy`, `stream` and `mixed` describe what software does: loops of
//! instructions and data streams, system calls and interrupt handlers. Which accesses
//! miss, which branches mispredict and how long anything stalls is for a machine model
//! to compute (`docs/workloads.md`).

pub mod driver;
pub mod kernel;
pub mod layout;
pub mod numeric;
pub mod services;
pub mod system;
pub mod user;

use std::collections::VecDeque;

use self::kernel::Interrupt;
use self::layout::{buffer, HEAP};
use self::user::Thread;
use super::rng::Rng;
use super::{Phase, Program, Timer};
use pmukit_core::suggest::nearest;

/// A built-in workload, for listings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkloadInfo {
    pub name: &'static str,
    pub description: &'static str,
}

/// The built-in workloads, in display order.
pub const WORKLOADS: &[WorkloadInfo] = &[
    WorkloadInfo {
        name: "mixed",
        description:
            "phases of compute, branchy and stream, with system calls (network I/O by DMA among them), interrupt handlers and timer ticks",
    },
    WorkloadInfo {
        name: "compute",
        description: "integer code as in compression or a compiler (SPECint's gzip, gcc): a quarter of it loads, a tenth stores, \
                      well-predicted branches, data in the L1",
    },
    WorkloadInfo {
        name: "branchy",
        description: "a sort, an interpreter or a game-tree search (SPECint's perlbench, gobmk): data-dependent branches on \
                      loaded data, deep call chains, jump tables, many mispredicts",
    },
    WorkloadInfo {
        name: "stream",
        description: "memory streaming: line misses, write-backs, LSU and data stalls, TLB misses, non-cacheable writes",
    },
    WorkloadInfo {
        name: "fp",
        description: "dense linear algebra (matrix multiply, daxpy with prefetches, LU steps) in floating point, in-place updates through aliasing pointers, batches of small products, audio filters decaying into subnormal numbers, grouped averages that skip the divide for empty groups",
    },
    WorkloadInfo { name: "chase", description: "pointer-chasing latency test over 4 KB to 64 MB: every load waits for the one before" },
    WorkloadInfo {
        name: "os",
        description: "eight processes time-sliced at 1 kHz, data on 4 KB to 2 GB pages, text on large pages too, system \
                      calls, a database server's 1.3 MB of transaction code, files read as they are mapped (page faults), \
                      clock reads through uncacheable firmware code, time-of-day reads under a sequence lock: TLB and \
                      instruction-cache pressure",
    },
    WorkloadInfo {
        name: "services",
        description: "system services layered as OpenVMS layers them: a command interpreter at privilege level 2 calls record \
                      services at level 1, which copy records between buffers and read their fields misaligned (levels 1 \
                      and 2 are privileged mode on ARM11 and SPARC); the program draws each record as text into the frame \
                      buffer",
    },
    WorkloadInfo {
        name: "guest",
        description: "`services` in a hardware virtual machine: a Xen VT-i domain on Montecito, whose hypervisor takes the \
                      guest's interruptions and its kernel's rfi first, and has the hardware defer a speculative load's \
                      TLB miss outside the guest's kernel (DCR.dm); chips without virtualization run it as `services`",
    },
    WorkloadInfo {
        name: "idle",
        description: "a lightly loaded server: a request with each 1 kHz timer tick (the adapter's interrupt, a little work, a \
                      reply by system call), then the idle loop halts until the next tick (WFI, PAL_HALT_LIGHT, CPU_YIELD)",
    },
    WorkloadInfo {
        name: "shared",
        description: "four threads of one process: locks, atomics, false sharing, producer/consumer, a read-mostly table, \
                      a JIT patching shared code",
    },
];

pub const DEFAULT_WORKLOAD: &str = "mixed";

/// A workload name that is not built in.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown workload `{name}`{}; valid workloads: {}", suggestion(.nearest), valid_names())]
pub struct UnknownWorkload {
    pub name: String,
    /// The valid name most like `name`, if any is close: the likely intended one.
    pub nearest: Option<&'static str>,
}

fn suggestion(nearest: &Option<&'static str>) -> String {
    nearest.map(|n| format!(" (did you mean `{n}`?)")).unwrap_or_default()
}

fn valid_names() -> String {
    WORKLOADS.iter().map(|w| w.name).collect::<Vec<_>>().join(", ")
}

impl UnknownWorkload {
    fn new(name: &str) -> UnknownWorkload {
        // The same similarity measure as event names, so suggestions feel alike.
        let nearest = nearest(name, WORKLOADS.iter().map(|w| w.name)).first().copied();
        UnknownWorkload { name: name.to_string(), nearest }
    }
}

/// Timer interrupt period of `mixed`, in cycles of a hardware thread: 100 Hz at
/// 400 MHz.
pub const TICK_CYCLES: u64 = 4_000_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Compute,
    Branchy,
    Stream,
    Fp,
    Chase,
    Os,
    Services,
    /// `Services` in a hardware virtual machine (`Phase::guest`).
    Guest,
    Idle,
    /// Threads of one process sharing the memory at `region` and a read-mostly table
    /// at `table`.
    Shared {
        region: u64,
        table: u64,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Workload {
    Mixed,
    Only(Kind),
}

impl Workload {
    fn parse(name: &str) -> Result<Workload, UnknownWorkload> {
        match name {
            "mixed" => Ok(Workload::Mixed),
            "compute" => Ok(Workload::Only(Kind::Compute)),
            "branchy" => Ok(Workload::Only(Kind::Branchy)),
            "stream" => Ok(Workload::Only(Kind::Stream)),
            "fp" => Ok(Workload::Only(Kind::Fp)),
            "chase" => Ok(Workload::Only(Kind::Chase)),
            "os" => Ok(Workload::Only(Kind::Os)),
            "services" => Ok(Workload::Only(Kind::Services)),
            "guest" => Ok(Workload::Only(Kind::Guest)),
            "idle" => Ok(Workload::Only(Kind::Idle)),
            "shared" => Ok(Workload::Only(Kind::Shared { region: 0, table: 0 })),
            _ => Err(UnknownWorkload::new(name)),
        }
    }
}

/// The program `name` for a machine with `threads` hardware threads: one software
/// thread (a process of its own) per hardware thread, except `os` (eight processes)
/// and `shared` (four threads of one process), which the timer time-slices.
pub fn program(name: &str, seed: u64, threads: usize) -> Result<Program, UnknownWorkload> {
    let mut workload = Workload::parse(name)?;
    // Each thread draws from its own generator, seeded from the workload seed.
    let mut seeds = Rng(seed);
    let (software, period) = match workload {
        Workload::Only(Kind::Os) => (system::PROCESSES, Some(system::OS_TICK_CYCLES)),
        Workload::Only(Kind::Idle) => (threads.max(1), Some(system::OS_TICK_CYCLES)),
        Workload::Only(Kind::Shared { .. }) => {
            const REGION_BYTES: u64 = 1 << 20;
            let mut draw = Rng(seed);
            let region = buffer(&mut draw, &HEAP, REGION_BYTES);
            // The table is drawn again until it keeps clear of the region.
            let table = loop {
                let t = buffer(&mut draw, &HEAP, system::SHARED_TABLE_BYTES);
                if t + system::SHARED_TABLE_BYTES <= region || t >= region + REGION_BYTES {
                    break t;
                }
            };
            workload = Workload::Only(Kind::Shared { region, table });
            (system::SHARED_THREADS, Some(TICK_CYCLES))
        }
        Workload::Mixed => (threads.max(1), Some(TICK_CYCLES)),
        Workload::Only(_) => (threads.max(1), None),
    };
    let streams: Vec<Box<dyn Iterator<Item = Phase> + Send>> = (0..software)
        .map(|index| {
            let t = Thread { index, context: index as u32 + 1 };
            Box::new(Phases { workload, thread: t, rng: Rng(seeds.next_u64()), queue: VecDeque::new() }) as _
        })
        .collect();
    let timer = period.map(|period| {
        let mut rng = Rng(seeds.next_u64());
        Timer { period, handler: kernel::interrupt(&mut rng, Thread { index: 0, context: 1 }, Interrupt::Timer) }
    });
    Ok(Program { threads: streams, timer })
}

/// The phases of one software thread.
struct Phases {
    workload: Workload,
    thread: Thread,
    rng: Rng,
    queue: VecDeque<Phase>,
}

impl Phases {
    fn refill(&mut self) {
        let (rng, t) = (&mut self.rng, self.thread);
        let kind = match self.workload {
            Workload::Only(kind) => kind,
            Workload::Mixed => match rng.below(8) {
                0..=2 => Kind::Compute,
                3..=5 => Kind::Branchy,
                _ => Kind::Stream,
            },
        };
        match kind {
            Kind::Compute => self.queue.push_back(user::compute(rng, t)),
            Kind::Branchy => self.queue.push_back(user::branchy(rng, t)),
            Kind::Stream => self.queue.extend(user::stream(rng, t)),
            Kind::Fp => self.queue.extend(numeric::fp(rng, t)),
            Kind::Chase => self.queue.push_back(numeric::chase(rng, t)),
            Kind::Os => self.queue.extend(system::os(rng, t)),
            Kind::Services => self.queue.extend(services::request(rng, t)),
            Kind::Guest => self.queue.extend(services::request(rng, t).into_iter().map(|p| Phase { guest: true, ..p })),
            Kind::Idle => self.queue.extend(system::served(rng, t)),
            Kind::Shared { region, table } => self.queue.extend(system::shared(rng, t, region, table)),
        }
        if self.workload != Workload::Mixed {
            return;
        }
        for _ in 0..rng.below(3) {
            self.queue.extend(kernel::syscall(rng, t, kernel::Mapping::BASE));
        }
        if rng.chance(150) {
            self.queue.extend(kernel::interrupt(rng, t, Interrupt::Device));
        }
        if rng.chance(100) {
            self.queue.extend(kernel::interrupt(rng, t, Interrupt::Fast));
        }
    }
}

impl Iterator for Phases {
    type Item = Phase;

    fn next(&mut self) -> Option<Phase> {
        if self.queue.is_empty() {
            self.refill();
        }
        self.queue.pop_front()
    }
}
