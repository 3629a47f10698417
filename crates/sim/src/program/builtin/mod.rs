//! The built-in programs, deterministic for a name and a seed.
//!
//! `compute`, `branchy`, `stream` and `mixed` describe what software does: loops of
//! instructions and data streams, system calls and interrupt handlers. Which accesses
//! miss, which branches mispredict and how long anything stalls is for a machine model
//! to compute (`docs/workloads.md`).

pub mod kernel;
pub mod layout;
pub mod user;

use std::collections::VecDeque;

use self::kernel::Interrupt;
use self::user::Thread;
use super::rng::Rng;
use super::{Phase, Program, Timer};
use crate::workloads::UnknownWorkload;

/// Timer interrupt period of `mixed`, in cycles of a hardware thread: 100 Hz at
/// 400 MHz.
pub const TICK_CYCLES: u64 = 4_000_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Compute,
    Branchy,
    Stream,
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
            _ => Err(UnknownWorkload::new(name)),
        }
    }
}

/// The program `name` with `threads` software threads, each a process of its own.
pub fn program(name: &str, seed: u64, threads: usize) -> Result<Program, UnknownWorkload> {
    let workload = Workload::parse(name)?;
    // Each thread draws from its own generator, seeded from the workload seed.
    let mut seeds = Rng(seed);
    let streams: Vec<Box<dyn Iterator<Item = Phase> + Send>> = (0..threads.max(1))
        .map(|index| {
            let t = Thread { index, context: index as u32 + 1 };
            Box::new(Phases { workload, thread: t, rng: Rng(seeds.next_u64()), queue: VecDeque::new() }) as _
        })
        .collect();
    let timer = (workload == Workload::Mixed).then(|| {
        let mut rng = Rng(seeds.next_u64());
        Timer { period: TICK_CYCLES, handler: kernel::interrupt(&mut rng, Thread { index: 0, context: 1 }, Interrupt::Timer) }
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
        }
        if self.workload != Workload::Mixed {
            return;
        }
        for _ in 0..rng.below(3) {
            self.queue.extend(kernel::syscall(rng, t));
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
