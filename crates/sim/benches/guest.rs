//! A program under QEMU (`pmu stat -- PROG`), each of its two threads' work apart, on
//! a sort-shaped program made here: an insertion sort of 1,024 numbers as ARM code
//! would run it (blocks of three and four instructions, most ending at a branch,
//! a third of the instructions loads and stores, every element of the array a data address
//! of its own, so that phases end by their data streams as a real sort's do).
//!
//! - `baseline_accesses`: what the plugin's thread cannot do without, each executed
//!   block's instructions walked with their accesses summed (QEMU's callbacks
//!   themselves are not here: docs/PERFORMANCE.md measures them whole);
//! - `phases`: the plugin's thread, the same walk making phases (`guest::Executed`);
//! - `machine_*`: the machine's thread, those phases run on a chip's machine and its
//!   blocks' cycles summed (the PMU's counting, which is the engine's, apart).
//!
//! Run: `cargo bench -p pmukit-sim --bench guest`

use pmukit_arch::Catalog;
use pmukit_sim::program::guest::{Accesses, Class, Executed, Insn, Isa};
use pmukit_sim::program::trace::{Made, Running, TraceStatus};
use pmukit_sim::program::{Op, Phase};
use pmukit_sim::stat::{self, StatOptions};

fn main() {
    divan::main();
}

/// Elements sorted: about 2.7×10^5 passes of the inner loop, 1.6×10^6 instructions.
const ELEMENTS: u64 = 1024;
const ARRAY: u64 = 0x10_0000;

/// The sort's blocks, each a range of `Program::insns`.
const OUTER: usize = 0;
const INNER: usize = 1;
const SHIFT: usize = 2;
const EXIT: usize = 3;

/// A data access: the instruction's index in `Program::insns`, the address, the
/// bytes, whether a store.
type Access = (usize, u64, u32, bool);

struct Program {
    insns: Vec<Insn>,
    blocks: Vec<std::ops::Range<usize>>,
    /// The blocks in the order they executed.
    executed: Vec<usize>,
    /// Their accesses, in the order they were made.
    accesses: Vec<Access>,
}

impl Program {
    /// Sorts a pseudo-random array, noting each block it executes and each access.
    fn sort() -> Program {
        let load = Class::Memory { fp: false };
        let int = Class::Plain(Op::Int);
        // The blocks lie one after another from 0x8000, so that a branch not taken
        // goes on into the next: outer (three instructions), inner (three), shift
        // (three), exit (four).
        let (outer, inner, exit) = (0x8000, 0x800c, 0x8024);
        let code: [(u64, Vec<Class>); 4] = [
            // key = a[i]; j = i
            (outer, vec![load, int, int]),
            // if a[j - 1] <= key goto exit
            (inner, vec![load, int, Class::Branch { target: exit }]),
            // a[j] = a[j - 1]; if --j > 0 goto inner
            (0x8018, vec![load, int, Class::Branch { target: inner }]),
            // a[j] = key; if ++i < n goto outer
            (exit, vec![load, int, int, Class::Branch { target: outer }]),
        ];
        let (mut insns, mut blocks) = (Vec::new(), Vec::new());
        for (start, classes) in code {
            let first = insns.len();
            insns.extend(classes.into_iter().enumerate().map(|(i, class)| Insn { ip: start + 4 * i as u64, size: 4, class }));
            blocks.push(first..insns.len());
        }
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut a: Vec<u32> = (0..ELEMENTS)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                seed as u32
            })
            .collect();
        let at = |i: usize| ARRAY + 4 * i as u64;
        let (mut executed, mut accesses) = (Vec::new(), Vec::new());
        let mut run = |block: usize, access: (u64, bool), blocks: &[std::ops::Range<usize>]| {
            executed.push(block);
            accesses.push((blocks[block].start, access.0, 4, access.1));
        };
        for i in 1..a.len() {
            let key = a[i];
            run(OUTER, (at(i), false), &blocks);
            let mut j = i;
            loop {
                run(INNER, (at(j - 1), false), &blocks);
                if a[j - 1] <= key {
                    break;
                }
                a[j] = a[j - 1];
                run(SHIFT, (at(j), true), &blocks);
                j -= 1;
                if j == 0 {
                    break;
                }
            }
            a[j] = key;
            run(EXIT, (at(j), true), &blocks);
        }
        Program { insns, blocks, executed, accesses }
    }

    /// Walks the executed blocks as the plugin does when a block is over: each
    /// instruction with the sum of its accesses.
    fn walk<'p>(&'p self, mut each: impl FnMut(&'p Insn, Accesses)) {
        let mut next = self.accesses.iter().peekable();
        for &block in &self.executed {
            for i in self.blocks[block].clone() {
                let mut sum = Accesses::default();
                while let Some(&(_, address, bytes, store)) = next.next_if(|a| a.0 == i) {
                    sum.add(address, bytes, store);
                }
                each(&self.insns[i], sum);
            }
        }
    }

    /// The phases the walk makes, each handed to `each` as it ends.
    fn phases(&self, mut each: impl FnMut(Phase)) {
        let mut e = Executed::new(Isa::Arm, 0);
        self.walk(|insn, sum| {
            e.executed(insn, sum);
            if e.ended() > 0 {
                e.phases().into_iter().for_each(&mut each);
            }
        });
        e.finish();
        e.phases().into_iter().for_each(each);
    }
}

#[divan::bench(sample_count = 20)]
fn baseline_accesses(b: divan::Bencher) {
    let p = Program::sort();
    b.bench(|| {
        let mut bytes = 0u64;
        p.walk(|insn, sum| bytes = bytes.wrapping_add(insn.ip ^ u64::from(divan::black_box(sum) != Accesses::default())));
        bytes
    });
}

#[divan::bench(sample_count = 20)]
fn phases(b: divan::Bencher) {
    let p = Program::sort();
    // Each phase is dropped as it ends, as the machine frees it once run: kept, the
    // fresh pages they took would be most of the time.
    b.bench(|| {
        let mut n = 0;
        p.phases(|phase| n += phase.body.len());
        n
    });
}

/// The phases of the sort run on `pmu`'s machine, its blocks' cycles summed.
fn machine(b: divan::Bencher, pmu: &str) {
    let mut phases = Vec::new();
    Program::sort().phases(|p| phases.push(p));
    let cat = Catalog::builtin();
    let pmu = cat.pmu(pmu).unwrap();
    b.with_inputs(|| {
        let made = Made { thread: 0, phases: phases.clone() };
        let running = Running::new("sort".into(), std::iter::once(made), TraceStatus::default());
        StatOptions { running: Some(running), ..StatOptions::default() }
    })
    .bench_values(|opts| {
        let (blocks, _) = stat::blocks(&[pmu], &opts, stat::Reads::ALL).unwrap();
        blocks.cycles(u64::MAX)
    });
}

#[divan::bench(sample_count = 10)]
fn machine_arm1176(b: divan::Bencher) {
    machine(b, "arm1176");
}

#[divan::bench(sample_count = 10)]
fn machine_t4(b: divan::Bencher) {
    machine(b, "sparc-t4");
}
