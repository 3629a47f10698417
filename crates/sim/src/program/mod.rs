//! Programs: what software does, independent of any chip.
//!
//! A [`Program`] is one or more software threads, each an endless (or finite)
//! sequence of [`Phase`]s. A phase is a loop: a body of instructions ([`Op`]s, one
//! iteration in program order, control flow included) run `iterations` times in one
//! address space at one privilege level. Data comes from [`DataStream`]s: an access in
//! iteration `k` reads `base + offset + (k * stride mod footprint)`, in a mapping with
//! its own page size, cacheability and address space. Branches follow a [`Pattern`]
//! over the iterations; indirect branches pick their target from a table the same way.
//!
//! Nothing here is a signal: a machine model (`crate::machine`) runs the program
//! through its caches, TLBs and predictors and computes what each cycle counts. The
//! same program runs on every machine, so the built-in workloads ([`builtin`]) and
//! recorded traces mean the same thing on ARM11, SPARC and Itanium.

pub mod build;
pub mod builtin;
pub mod guest;
pub mod ia64;
mod paging;
pub mod rng;
pub mod trace;

use crate::stream::Privilege;

/// Bytes per instruction in program addresses. ARM and SPARC instructions are four
/// bytes; a machine with other encodings (Itanium bundles) maps these addresses.
pub const INSN: u64 = 4;

/// A program: its software threads, and the timer that interrupts them.
pub struct Program {
    /// One sequence of phases per software thread. A machine with fewer hardware
    /// threads than software threads time-slices them at timer interrupts.
    pub threads: Vec<Box<dyn Iterator<Item = Phase> + Send>>,
    /// The periodic timer interrupt, if the program runs under an operating system.
    pub timer: Option<Timer>,
}

/// A periodic interrupt: every `period` cycles of a hardware thread, the handler
/// runs at the next iteration boundary of whatever loop is running (an interrupt due
/// in kernel code waits for the return to user mode).
#[derive(Debug, Clone)]
pub struct Timer {
    pub period: u64,
    pub handler: Vec<Phase>,
}

/// A loop of the program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Phase {
    pub privilege: Privilege,
    /// Address space (ARM ASID, SPARC context, Itanium region ID); 0 is the kernel's.
    pub context: u32,
    /// Interrupts masked while the phase runs (CPSR I and F on ARM).
    pub masks: Masks,
    /// Address of the body's first instruction.
    pub entry: u64,
    /// The page size the code is mapped with, when the program chose one (a large
    /// binary whose text the OS maps with large pages); `None`: the machine's usual
    /// mapping for code of the phase's privilege.
    pub code_page: Option<u64>,
    /// Whether the code is in memory no cache holds (firmware whose memory map marks
    /// its code uncacheable): every fetch reads it from memory, or a prefetcher reads
    /// it ahead into a buffer that caches nothing (Montecito's, ERRATA MMC76).
    pub uncached_code: bool,
    /// Whether the phase runs in a hardware virtual machine: a guest operating
    /// system's or its processes' code under a hypervisor, which takes the guest's
    /// interruptions and privileged instructions first (Xen on Montecito's VT-i,
    /// ERRATA MMC77). Chips without hardware virtualization run it as any other.
    pub guest: bool,
    /// One iteration, in program order. Instructions follow each other `INSN` bytes
    /// apart; a taken branch, call, return or indirect jump continues at its target.
    pub body: Vec<Op>,
    pub iterations: u64,
    pub streams: Vec<DataStream>,
    /// Target tables of indirect branches ([`Op::Jump`]).
    pub tables: Vec<Table>,
    /// The address of each instruction of the body, for recorded programs whose
    /// instructions have other sizes than `INSN` (x86 under Lackey); empty when they
    /// follow each other `INSN` apart.
    pub addresses: Vec<u64>,
    /// Devices' transfers at the end of every iteration, in order (see [`Dma`]).
    pub dma: Vec<Dma>,
    /// A data breakpoint a debugger set for the phase's software thread, if any.
    pub watch: Option<Watch>,
    /// What its floating-point arithmetic computes: when results are subnormal, and
    /// whether the thread flushes them to zero.
    pub fp: FpValues,
}

/// The values a phase's floating-point arithmetic (`FpOp` Add, Mul, Fma, Div, Sqrt)
/// produces, as far as machines treat them differently: a subnormal ("tiny") result,
/// below the normal range of its format, is one many FPUs cannot deliver at full speed
/// (Itanium's software assist, ARM's VFP support code), unless the thread runs with
/// flush-to-zero, which makes it zero. Data, not instructions: like a branch's
/// `Pattern`, the iterations with tiny results repeat.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FpValues {
    /// The iterations whose arithmetic results are tiny: values decaying towards zero
    /// (an audio filter's state on silence, a converging iteration's residuals).
    pub tiny: Pattern,
    /// Flush-to-zero (Itanium's FPSR.sf0.ftz, ARM's FPSCR.FZ, SPARC's FSR.NS), as a
    /// compiler's fast-math options set it at the program's start.
    pub flush: bool,
    /// Whether a skip guards the divides of its block against a zero divisor (`if (n
    /// != 0) q = s / n`): in the iterations it passes over the block, the divisor is
    /// zero. Like a NULL-guarded pointer (`DataStream::nullable`), it matters only to
    /// a compiler that starts the divide ahead of the test (Itanium's, ERRATA MMC80).
    pub zero_divisors: bool,
}

impl Default for FpValues {
    fn default() -> FpValues {
        FpValues { tiny: Pattern::Never, flush: false, zero_divisors: false }
    }
}

impl FpValues {
    /// Whether `op`'s result is tiny in iteration `k` of `iterations`.
    pub fn tiny(&self, op: FpOp, k: u64, iterations: u64) -> bool {
        op.arithmetic() && self.tiny != Pattern::Never && self.tiny.taken(k, iterations)
    }
}

/// A debugger's data breakpoint (a watchpoint): an access of the thread to any of the
/// `bytes` at `addr` (a store only, with `writes`) faults to the debugger, which the
/// program's next phases are (Itanium's data breakpoint registers, ARM11's watchpoint
/// registers, SPARC's virtual-address watchpoint). Each machine counts and times the
/// fault; the access completes once the debugger lets the thread go on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Watch {
    pub addr: u64,
    pub bytes: u64,
    pub writes: bool,
}

impl Watch {
    /// Whether an access of `size` bytes at `addr` (a store when `write`) faults.
    pub fn hits(&self, addr: u64, size: u8, write: bool) -> bool {
        (write || !self.writes) && addr < self.addr.saturating_add(self.bytes) && self.addr < addr.saturating_add(u64::from(size.max(1)))
    }
}

/// A device's direct memory access, which the software of the phase started (a
/// network adapter sending a packet it was handed, a disk controller filling a
/// buffer): at the end of each iteration the device reads (or, `write`, writes)
/// `bytes` from the position of `stream` on, through the system's I/O bridge. It is no
/// instruction: each machine decides what the transfer does to its caches (its
/// coherence with I/O) and what its bus or memory counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dma {
    pub stream: u8,
    pub bytes: u32,
    pub write: bool,
}

impl Dma {
    /// The lines of `line` bytes the transfer touches in iteration `k`, each with
    /// whether the transfer covers it whole.
    pub fn lines(&self, stream: &DataStream, k: u64, line: u64) -> impl Iterator<Item = (u64, bool)> {
        let start = stream.position(k);
        let end = start + u64::from(self.bytes);
        (start / line * line..end).step_by(line as usize).map(move |l| (l, l >= start && l + line <= end))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Masks {
    pub irq: bool,
    pub fiq: bool,
}

/// One instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// An integer ALU instruction.
    Int,
    /// A floating-point instruction.
    Fp(FpOp),
    /// A load; with `use_next` the next instruction needs its value.
    Load(Access),
    /// A load into a floating-point register (ARM VFP, SPARC and Itanium FP loads).
    FpLoad(Access),
    Store(Access),
    /// An atomic read-modify-write (swap, compare-and-swap).
    Atomic(Access),
    /// A read-modify-write of memory that is not atomic (an x86 instruction with a
    /// memory operand, as Lackey's `M` records it).
    Modify(Access),
    /// A software prefetch: brings the line in, never stalls.
    Prefetch(Access),
    /// A whole-line load or store (ARM LDM/STM of eight words, SPARC block load/store).
    BlockLoad(Access),
    BlockStore(Access),
    /// A branch to `target`, taken in the iterations `when` says; execution goes on
    /// with the next instruction of the body, at `target` or falling through.
    Branch {
        target: u64,
        when: Pattern,
    },
    /// A forward branch over the next `over` instructions of the body: when taken they
    /// are not executed (an `if` without `else`).
    Skip {
        over: u8,
        when: Pattern,
    },
    /// A procedure call; the callee allocates `frame` stacked registers (Itanium's
    /// register stack engine; 0 elsewhere).
    Call {
        target: u64,
        frame: u8,
    },
    /// A procedure return to `to` (usually the call's fall-through; elsewhere when it
    /// unwinds).
    Return {
        to: u64,
    },
    /// An indirect jump whose target comes from `tables[table]`, entry `k mod len` in
    /// iteration `k`; it loads the entry through `via` when the table is in memory.
    Jump {
        table: u8,
        via: Option<Access>,
    },
    /// A system call (SWI, trap instruction): enters the kernel; the kernel's phases
    /// follow in the program.
    Syscall,
    /// Return from an exception or system call to the interrupted mode.
    ExceptionReturn,
    /// A barrier that drains the write buffer (DSB, MEMBAR #Sync).
    Barrier,
    /// A spin-wait hint: the thread has nothing to do until another thread changes
    /// memory (Itanium's `hint@pause`, which switches hardware threads; an ordinary
    /// instruction on chips without one).
    Pause,
    /// An access to an internal register (CP15, ASI, state register).
    SpecialReg,
    /// The idle loop's wait for an interrupt (ARM's WFI, Itanium's PAL_HALT_LIGHT,
    /// the sun4v `cpu_yield` hypervisor call): the thread executes nothing until the
    /// program's next timer tick, whose interrupt wakes it; without a timer no
    /// interrupt comes, and it goes on at once. It ends the loop body
    /// (`Phase::check`), and a phase with one may be interrupted in the kernel.
    Halt,
    /// Makes the line at the access coherent with instruction fetch after the program
    /// wrote code there (a JIT compiler, a patched call site): Itanium's `fc`, SPARC's
    /// FLUSH, ARM's clean of the data line and invalidation of the instruction line.
    FlushCode(Access),
    /// A no-operation filling a slot of an Itanium bundle that no instruction of the
    /// code fits (`nop.m`, `nop.i`, `nop.f`, `nop.b`): the compiler's, never the
    /// program's (`ia64::bundled`).
    Nop,
}

impl Op {
    pub fn access(&self) -> Option<Access> {
        match *self {
            Op::Load(a) | Op::Store(a) | Op::Atomic(a) | Op::Modify(a) | Op::Prefetch(a) | Op::BlockLoad(a) | Op::BlockStore(a) => Some(a),
            Op::FlushCode(a) => Some(a),
            Op::FpLoad(a) => Some(a),
            Op::Jump { via, .. } => via,
            _ => None,
        }
    }

    /// Whether the instruction writes memory.
    pub fn writes(&self) -> bool {
        matches!(self, Op::Store(_) | Op::Atomic(_) | Op::Modify(_) | Op::BlockStore(_))
    }

    /// Whether the instruction's access at `addr` is misaligned: a load, store or
    /// semaphore of `size` bytes at an address that is not a multiple of its size (of
    /// the next power of two, up to 16: wider transfers are bursts of aligned
    /// quadwords). Every machine's architecture wants them aligned; what one does with
    /// an access that is not differs (a cast of a byte pointer to a wider type, in code
    /// ported from a chip that allowed it, makes them). Prefetches, line transfers,
    /// flushes and jump-table reads are aligned by what they are.
    pub fn misaligned(&self, addr: u64) -> bool {
        match *self {
            Op::Load(a) | Op::FpLoad(a) | Op::Store(a) | Op::Atomic(a) | Op::Modify(a) => {
                addr & (u64::from(a.size).next_power_of_two().min(16) - 1) != 0
            }
            _ => false,
        }
    }

    /// Whether the instruction can change the flow of control.
    pub fn is_control(&self) -> bool {
        matches!(
            self,
            Op::Branch { .. } | Op::Skip { .. } | Op::Call { .. } | Op::Return { .. } | Op::Jump { .. } | Op::Syscall | Op::ExceptionReturn
        )
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FpOp {
    Add,
    Mul,
    /// Fused multiply-add.
    Fma,
    Div,
    Sqrt,
    /// Conversions, and moves from the integer side.
    Convert,
    /// A move of a floating-point register's value to an integer register (Itanium
    /// `getf`, VFP `fmrs`, VIS3 `movdtox`), which the next instruction uses: the
    /// output half of a conversion to an integer.
    ToInt,
}

impl FpOp {
    /// Whether it computes a rounded result (which may be tiny or inexact), rather
    /// than converting or moving one.
    pub fn arithmetic(self) -> bool {
        !matches!(self, FpOp::Convert | FpOp::ToInt)
    }
}

/// A data reference of one instruction: stream, byte offset from the stream's
/// position, bytes accessed, and whether the next instruction uses a loaded value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Access {
    pub stream: u8,
    pub offset: u32,
    pub size: u8,
    pub use_next: bool,
}

/// Iterations in which a branch is taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pattern {
    Always,
    Never,
    /// Taken in every iteration but the last: a loop's back edge.
    Loop,
    /// Taken in iteration `k` when bit `k mod len` of `bits` is set: a data-dependent
    /// branch whose outcomes repeat every `len` iterations (`len` 1..=64).
    Bits {
        bits: u64,
        len: u8,
    },
}

impl Pattern {
    pub fn taken(&self, k: u64, iterations: u64) -> bool {
        match *self {
            Pattern::Always => true,
            Pattern::Never => false,
            Pattern::Loop => k + 1 < iterations,
            Pattern::Bits { bits, len } => bits >> (k % u64::from(len.max(1))) & 1 == 1,
        }
    }

    /// Iterations after which the outcomes repeat (the loop exit aside).
    pub fn period(&self) -> u64 {
        match *self {
            Pattern::Bits { len, .. } => u64::from(len.max(1)),
            _ => 1,
        }
    }
}

/// Targets of an indirect branch, cycled through over the iterations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Table {
    pub targets: Vec<u64>,
}

impl Table {
    /// The target in iteration `k`: entry `k mod len` (`Phase::check` refuses an empty
    /// table).
    pub fn target(&self, k: u64) -> u64 {
        self.targets[(k % self.targets.len() as u64) as usize]
    }
}

/// How a mapping may be cached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Memory {
    /// Normal memory, write-back cacheable.
    Cacheable,
    /// Normal memory that no cache holds (a frame buffer, DMA buffers).
    NonCacheable,
    /// Device registers, strongly ordered: not memory, and every access drains the
    /// write buffer first.
    Device,
}

/// A run of addresses a phase walks through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DataStream {
    pub base: u64,
    /// Bytes the position advances per iteration (0 for a fixed location).
    pub stride: i64,
    /// The position wraps back to `base` after this many bytes (a buffer walked again).
    pub footprint: u64,
    pub memory: Memory,
    /// Page size of the mapping, in bytes (a power of two).
    pub page: u64,
    /// Whether other threads of the program access it too.
    pub shared: bool,
    /// Whether it is reached through a pointer the code tests before each use (`if (p)
    /// x = p->key`): in an iteration in which a skip passes over an access to it, the
    /// pointer is NULL, and the access would read page 0, which nothing maps. No
    /// program makes such an access; a compiler's speculative load hoisted above the
    /// test does (Itanium's `ld.s`, ERRATA MMC42).
    pub nullable: bool,
    /// Whether it is freshly mapped memory (a file just `mmap`ed, a heap just grown):
    /// no page is present until the program touches it, and the first access that
    /// executes in a page faults, for the kernel to map it (a minor fault, `[core]
    /// page_fault_cycles`; `Phase::present`). One instruction accesses it, and it
    /// walks forward through its pages once (`Phase::check`).
    pub fresh: bool,
}

impl DataStream {
    /// A fixed location (a stack slot, a lock, a device register) in 4 KB pages.
    pub fn fixed(base: u64, memory: Memory) -> DataStream {
        DataStream { base, stride: 0, footprint: 1, memory, page: 4 << 10, shared: false, nullable: false, fresh: false }
    }

    /// The stream's position in iteration `k`.
    pub fn position(&self, k: u64) -> u64 {
        self.base + self.distance(k)
    }

    /// Bytes from `base` in iteration `k`.
    pub fn distance(&self, k: u64) -> u64 {
        if self.stride == 0 {
            return 0;
        }
        let footprint = self.footprint.max(1);
        // Every access asks: 64-bit arithmetic when the product fits, which it does
        // but for absurd strides or iteration counts.
        if self.stride > 0 {
            if let Some(d) = k.checked_mul(self.stride as u64) {
                return d % footprint;
            }
        }
        (i128::from(k) * i128::from(self.stride)).rem_euclid(i128::from(footprint)) as u64
    }

    /// Iterations after which the position is the same again.
    pub fn cycle(&self) -> u64 {
        let footprint = self.footprint.max(1);
        footprint / gcd(footprint, self.stride.unsigned_abs() % footprint).max(1)
    }

    /// Iterations from `k` whose accesses (`reach` bytes from the position) all stay
    /// in the page that iteration `k` touches (0 when that access straddles two).
    pub fn in_page(&self, k: u64, reach: u64) -> u64 {
        let d = self.position(k) % self.page;
        if d + reach.max(1) > self.page {
            return 0;
        }
        match self.stride {
            0 => u64::MAX,
            s if s > 0 => (self.page - d - reach.max(1)) / s as u64 + 1,
            s => d / s.unsigned_abs() + 1,
        }
    }

    /// Iterations from `k` before the position wraps (`u64::MAX` if it never does).
    pub fn until_wrap(&self, k: u64) -> u64 {
        let d = self.distance(k);
        match self.stride {
            0 => u64::MAX,
            s if s > 0 => (self.footprint.max(1) - d).div_ceil(s as u64),
            s => (d / s.unsigned_abs()) + 1,
        }
    }
}

/// Why a program is malformed (a trace or a hand-written phase).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PhaseError {
    #[error("instruction {index} refers to data stream {stream}, but the phase has {streams}")]
    NoStream { index: usize, stream: u8, streams: usize },
    #[error("instruction {index} jumps through table {table}, but the phase has {tables}")]
    NoTable { index: usize, table: u8, tables: usize },
    #[error("table {table} is empty")]
    EmptyTable { table: usize },
    #[error("data stream {stream}: page size {page} is not a power of two of at least 1 KB")]
    Page { stream: usize, page: u64 },
    #[error("code page size {page} is not a power of two of at least 1 KB")]
    CodePage { page: u64 },
    #[error("the phase gives {addresses} instruction addresses for {instructions} instructions")]
    Addresses { addresses: usize, instructions: usize },
    #[error("instruction {index} skips {over} instructions, past the end of the body")]
    SkipPastEnd { index: usize, over: u8 },
    #[error("instruction {index}: branch pattern length {len} is outside 1..=64")]
    PatternLength { index: usize, len: u8 },
    #[error("device transfer {index} refers to data stream {stream}, but the phase has {streams}")]
    DmaStream { index: usize, stream: u8, streams: usize },
    #[error("device transfer {index} moves {bytes} bytes; valid: 1 to {max}")]
    DmaBytes { index: usize, bytes: u32, max: u32 },
    #[error("the data breakpoint covers {bytes} bytes; valid: 1 to {max}")]
    WatchBytes { bytes: u64, max: u64 },
    #[error("the floating-point values' pattern length {len} is outside 1..=64")]
    FpPatternLength { len: u8 },
    #[error("instruction {index} halts, but only the body's last instruction may (of {instructions})")]
    HaltNotLast { index: usize, instructions: usize },
    #[error("data stream {stream} is freshly mapped, so it {why}")]
    Fresh { stream: usize, why: &'static str },
}

/// The most bytes a [`Watch`] covers: a page, the largest range a pair of Itanium's
/// data breakpoint registers gives below a mask of whole pages.
pub const WATCH_MAX_BYTES: u64 = 4 << 10;

/// The longest transfer of a [`Dma`]: 64 KB, a large network or disk buffer.
pub const DMA_MAX_BYTES: u32 = 64 << 10;

impl Phase {
    /// Checks every reference inside the phase, so machines may index without
    /// further checks.
    pub fn check(&self) -> Result<(), PhaseError> {
        for (stream, s) in self.streams.iter().enumerate() {
            if !s.page.is_power_of_two() || s.page < 1024 {
                return Err(PhaseError::Page { stream, page: s.page });
            }
        }
        if let Some(page) = self.code_page.filter(|p| !p.is_power_of_two() || *p < 1024) {
            return Err(PhaseError::CodePage { page });
        }
        if !self.addresses.is_empty() && self.addresses.len() != self.body.len() {
            return Err(PhaseError::Addresses { addresses: self.addresses.len(), instructions: self.body.len() });
        }
        for (table, t) in self.tables.iter().enumerate() {
            if t.targets.is_empty() {
                return Err(PhaseError::EmptyTable { table });
            }
        }
        for (index, d) in self.dma.iter().enumerate() {
            if usize::from(d.stream) >= self.streams.len() {
                return Err(PhaseError::DmaStream { index, stream: d.stream, streams: self.streams.len() });
            }
            if !(1..=DMA_MAX_BYTES).contains(&d.bytes) {
                return Err(PhaseError::DmaBytes { index, bytes: d.bytes, max: DMA_MAX_BYTES });
            }
        }
        if let Pattern::Bits { len, .. } = self.fp.tiny {
            if !(1..=64).contains(&len) {
                return Err(PhaseError::FpPatternLength { len });
            }
        }
        if let Some(w) = self.watch.filter(|w| !(1..=WATCH_MAX_BYTES).contains(&w.bytes)) {
            return Err(PhaseError::WatchBytes { bytes: w.bytes, max: WATCH_MAX_BYTES });
        }
        self.check_fresh()?;
        let streams = self.streams.len();
        let no_stream = |index, a: Access| Err(PhaseError::NoStream { index, stream: a.stream, streams });
        // One match an operation: the machines check every phase a program hands
        // them, and a second dispatch on the operation (for its data reference) cost
        // as much again.
        for (index, op) in self.body.iter().enumerate() {
            match *op {
                Op::Load(a)
                | Op::FpLoad(a)
                | Op::Store(a)
                | Op::Atomic(a)
                | Op::Modify(a)
                | Op::Prefetch(a)
                | Op::BlockLoad(a)
                | Op::BlockStore(a)
                | Op::FlushCode(a)
                    if usize::from(a.stream) >= streams =>
                {
                    return no_stream(index, a)
                }
                Op::Jump { via: Some(a), .. } if usize::from(a.stream) >= streams => return no_stream(index, a),
                Op::Jump { table, .. } if usize::from(table) >= self.tables.len() => {
                    return Err(PhaseError::NoTable { index, table, tables: self.tables.len() })
                }
                Op::Branch { when: Pattern::Bits { len, .. }, .. } | Op::Skip { when: Pattern::Bits { len, .. }, .. }
                    if !(1..=64).contains(&len) =>
                {
                    return Err(PhaseError::PatternLength { index, len })
                }
                Op::Skip { over, .. } if index + usize::from(over) >= self.body.len() => {
                    return Err(PhaseError::SkipPastEnd { index, over })
                }
                Op::Halt if index + 1 != self.body.len() => return Err(PhaseError::HaltNotLast { index, instructions: self.body.len() }),
                _ => {}
            }
        }
        Ok(())
    }

    /// Whether an iteration ends in a wait for an interrupt (the idle loop).
    pub fn halts(&self) -> bool {
        self.body.last() == Some(&Op::Halt)
    }

    /// Whether the timer's interrupt may stop the phase at an iteration boundary: user
    /// code, and the idle loop, which takes its interrupt in the kernel (an interrupt
    /// due in other kernel code waits for the return to user mode).
    pub fn takes_ticks(&self) -> bool {
        self.privilege.is_user() || self.halts()
    }

    /// Iterations after which every branch pattern and table repeats, and the pages
    /// fresh streams map (`Phase::present`).
    pub fn control_period(&self) -> u64 {
        let mut p = lcm(self.fp.tiny.period(), self.paging_period());
        for op in &self.body {
            match op {
                Op::Branch { when, .. } | Op::Skip { when, .. } => p = lcm(p, when.period()),
                Op::Jump { table, .. } => p = lcm(p, self.tables[usize::from(*table)].targets.len() as u64),
                _ => {}
            }
        }
        p
    }
}

pub fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// Least common multiple, saturating at `u64::MAX`.
pub fn lcm(a: u64, b: u64) -> u64 {
    if a == 0 || b == 0 {
        return a.max(b);
    }
    (a / gcd(a, b)).saturating_mul(b)
}
