//! Programs of the simulated instruction sets as they execute (a binary under QEMU):
//! each instruction's class from its bytes, decided once when it is translated
//! ([`arm`], [`sparc`]), and the instructions of a software thread made into records
//! as they run ([`Executed`]): an instruction is complete when the next one starts,
//! since by then its memory accesses have been seen and where control went is known.

pub mod arm;
pub mod sparc;

use super::trace::{Kind, MemKind, Record};
use super::Op;
use crate::stream::Privilege;

/// Bytes at or above which an instruction's accesses make a block transfer (ARM's
/// LDM/STM of eight words, SPARC's block loads and stores): a cache line of the
/// smallest line size here.
const BLOCK_BYTES: u32 = 32;

/// The instruction sets whose programs run this way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Isa {
    /// ARMv6 (ARM and 16-bit Thumb), for the ARM11 machines.
    Arm,
    /// SPARC V9, for the SPARC machines.
    Sparc,
}

impl Isa {
    pub fn decode(self, ip: u64, bytes: &[u8]) -> Class {
        match self {
            Isa::Arm => arm::decode(ip, bytes),
            Isa::Sparc => sparc::decode(ip, bytes),
        }
    }

    /// Whether QEMU's user mode may stop the instruction part way, do work of the
    /// operating system's for it, and run it again from its start: SPARC's register
    /// window spills and fills. Nothing ARM user code runs does this but faults.
    pub fn restarts(self, bytes: &[u8]) -> bool {
        self == Isa::Sparc && sparc::restarts(bytes)
    }
}

/// What an instruction does, as far as its bytes say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// No data reference and no change of flow, unless QEMU reports accesses for it
    /// (code the decoder does not know, or ARM's kernel helpers, which QEMU reports
    /// without bytes): then its accesses make it a memory instruction.
    Plain(Op),
    /// A load or store, its kind from the accesses it makes (none when an ARM
    /// condition fails); `fp` for a floating-point register's, whose load is an
    /// `FpLoad`.
    Memory {
        fp: bool,
    },
    /// A direct branch, conditional or not: taken when control goes on elsewhere
    /// than past it.
    Branch {
        target: u64,
    },
    /// A call, direct or through a register: recorded to where control went.
    Call,
    Return,
    /// A branch to an address in a register (ARM's BX): a branch instruction,
    /// recorded as a branch taken to where control went.
    IndirectBranch,
    /// Control goes where a register or memory says: SPARC's JMPL (a branch on
    /// SPARC), an ARM instruction that writes the PC without being a branch (MOV PC,
    /// LDR PC: ARM11 does not count it as one).
    Jump,
}

impl Class {
    /// Control goes elsewhere, or may: a delay slot follows on SPARC.
    pub fn transfers_control(&self) -> bool {
        matches!(self, Class::Branch { .. } | Class::Call | Class::Return | Class::IndirectBranch | Class::Jump)
    }
}

/// What an instruction's memory accesses came to: the lowest address accessed, the
/// bytes, and whether it loaded and stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Accesses {
    low: u64,
    bytes: u32,
    count: u32,
    loads: bool,
    stores: bool,
}

impl Default for Accesses {
    fn default() -> Accesses {
        Accesses { low: u64::MAX, bytes: 0, count: 0, loads: false, stores: false }
    }
}

impl Accesses {
    /// One more access, of `bytes` at `address`. Inlined into the plugin's loop, where
    /// the sum stays in registers: a call wrote it to memory a field at a time and the
    /// copy of it that followed stalled on the store buffer.
    #[inline]
    pub fn add(&mut self, address: u64, bytes: u32, store: bool) {
        self.low = self.low.min(address);
        self.bytes = self.bytes.saturating_add(bytes);
        self.count += 1;
        self.stores |= store;
        self.loads |= !store;
    }
}

/// An instruction as translated: where it is, its size and what it does. Made once
/// for code that runs many times (the QEMU plugin keeps one per translated
/// instruction for the life of the process).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Insn {
    pub ip: u64,
    pub size: u64,
    pub class: Class,
}

/// An instruction that has executed and is not yet a record: where control went after
/// it is not known yet. It refers to its translation rather than copying it: a copy
/// of the class, written a field at a time as each instruction ran and read back
/// whole as the next came, stalled on the store buffer (three fifths of the plugin's
/// block callback).
#[derive(Debug, Clone, Copy)]
struct Running<'a> {
    insn: &'a Insn,
    accesses: Accesses,
}

/// One software thread's instructions as they execute, made into [`Record`]s in
/// program order. On SPARC a control transfer's outcome is known only after its delay
/// slot (SPARC V9 §6.3.4): the transfer waits for the slot's successor, and the slot
/// follows it.
#[derive(Debug)]
pub struct Executed<'a> {
    isa: Isa,
    thread: u8,
    current: Option<Running<'a>>,
    /// A SPARC control transfer whose delay slot is running.
    waiting: Option<Running<'a>>,
}

impl<'a> Executed<'a> {
    pub fn new(isa: Isa, thread: u8) -> Executed<'a> {
        Executed { isa, thread, current: None, waiting: None }
    }

    /// The software thread whose instructions these are.
    pub fn thread(&self) -> u8 {
        self.thread
    }

    /// `insn` executed, making `accesses`; the one before it is complete. The caller
    /// sums an instruction's accesses before it hands the instruction over, so each
    /// is written here once, whole: building it up here field by field and copying it
    /// out whole stalled every copy on the store buffer.
    #[inline]
    pub fn executed(&mut self, insn: &'a Insn, accesses: Accesses, out: &mut impl FnMut(Record)) {
        let next = Running { insn, accesses };
        if let Some(done) = self.current.replace(next) {
            self.complete(done, insn.ip, out);
        }
    }

    /// The thread ends: its last instruction falls through.
    pub fn finish(&mut self, out: &mut impl FnMut(Record)) {
        if let Some(done) = self.current.take() {
            let next = done.insn.ip + done.insn.size;
            self.complete(done, next, out);
        }
        if let Some(t) = self.waiting.take() {
            let next = t.insn.ip + 2 * t.insn.size;
            out(self.record(&t, next));
        }
    }

    /// `done` is complete and the instruction at `next` runs after it.
    #[inline]
    fn complete(&mut self, done: Running<'a>, next: u64, out: &mut impl FnMut(Record)) {
        if self.isa != Isa::Sparc {
            out(self.record(&done, next));
            return;
        }
        if let Some(t) = self.waiting.take() {
            // `done` was `t`'s delay slot: control went on at `next`.
            out(self.record(&t, next));
            out(self.record(&done, done.insn.ip + done.insn.size));
        } else if done.insn.class.transfers_control() && next == done.insn.ip + done.insn.size {
            // The delay slot runs; the outcome comes after it.
            self.waiting = Some(done);
        } else {
            // No transfer, or one whose slot was annulled.
            out(self.record(&done, next));
        }
    }

    #[inline]
    fn record(&self, r: &Running, next: u64) -> Record {
        let Insn { ip, size, class } = *r.insn;
        // Where control goes when a branch is not taken: past the delay slot on SPARC.
        let fallthrough = match self.isa {
            Isa::Sparc => ip + 2 * size,
            Isa::Arm => ip + size,
        };
        let op = match class {
            Class::Branch { target, .. } => Kind::Branch(target, next != fallthrough),
            Class::Call => Kind::Call(next),
            Class::Return => Kind::Return(next),
            Class::IndirectBranch => Kind::Branch(next, true),
            Class::Jump => Kind::Jump(next),
            Class::Plain(op) if r.accesses.count == 0 => Kind::Plain(op),
            Class::Memory { .. } if r.accesses.count == 0 => Kind::Plain(Op::Int),
            Class::Memory { fp } => memory(r, fp),
            Class::Plain(_) => memory(r, false),
        };
        Record { thread: self.thread, privilege: Privilege::USER, ip, op }
    }
}

/// A memory instruction's record from its accesses: a load and a store together are
/// atomic (SWP, LDSTUB, CAS), several accesses of a line or more a block transfer.
#[inline]
fn memory(r: &Running, fp: bool) -> Kind {
    let a = &r.accesses;
    let block = a.count > 1 && a.bytes >= BLOCK_BYTES;
    let kind = match (a.loads, a.stores) {
        (true, true) => MemKind::Atomic,
        (true, false) if block => MemKind::BlockLoad,
        (true, false) if fp => MemKind::FpLoad,
        (true, false) => MemKind::Load,
        _ if block => MemKind::BlockStore,
        _ => MemKind::Store,
    };
    Kind::Mem(kind, a.low, u8::try_from(a.bytes).unwrap_or(u8::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An instruction's address, class and accesses (address, bytes, store).
    type Step<'a> = (u64, Class, &'a [(u64, u32, bool)]);

    fn run(isa: Isa, steps: &[Step]) -> Vec<Kind> {
        let insns: Vec<Insn> = steps.iter().map(|&(ip, class, _)| Insn { ip, size: 4, class }).collect();
        let mut e = Executed::new(isa, 0);
        let mut out = Vec::new();
        for (insn, &(_, _, accesses)) in insns.iter().zip(steps) {
            let mut sum = Accesses::default();
            for &(a, b, s) in accesses {
                sum.add(a, b, s);
            }
            e.executed(insn, sum, &mut |r| out.push(r));
        }
        e.finish(&mut |r| out.push(r));
        out.iter().map(|r| r.op).collect()
    }

    const LD: Class = Class::Memory { fp: false };
    const INT: Class = Class::Plain(Op::Int);

    #[test]
    fn arm_branches_are_taken_when_control_leaves_the_fallthrough() {
        let b = Class::Branch { target: 0x100 };
        let ops = run(Isa::Arm, &[(0x10, b, &[]), (0x14, b, &[]), (0x100, INT, &[])]);
        assert_eq!(ops, [Kind::Branch(0x100, false), Kind::Branch(0x100, true), Kind::Plain(Op::Int)]);
    }

    #[test]
    fn accesses_make_the_memory_kind_and_a_failed_condition_none() {
        let ops = run(
            Isa::Arm,
            &[
                (0, LD, &[(0x808, 4, false)]),
                (4, LD, &[]),
                (8, LD, &[(0x900, 4, false), (0x904, 4, true)]),
                (12, LD, &(0..8).map(|i| (0xa00 + 4 * i, 4, true)).collect::<Vec<_>>()),
                (16, Class::Memory { fp: true }, &[(0xb00, 8, false)]),
                (20, INT, &[(0xc00, 4, false)]),
            ],
        );
        assert_eq!(
            ops,
            [
                Kind::Mem(MemKind::Load, 0x808, 4),
                Kind::Plain(Op::Int),
                Kind::Mem(MemKind::Atomic, 0x900, 8),
                Kind::Mem(MemKind::BlockStore, 0xa00, 32),
                Kind::Mem(MemKind::FpLoad, 0xb00, 8),
                Kind::Mem(MemKind::Load, 0xc00, 4),
            ]
        );
    }

    #[test]
    fn sparc_transfers_wait_for_their_delay_slot() {
        let b = Class::Branch { target: 0x100 };
        // Taken, slot executed; not taken, slot executed; annulled (ba,a); a call.
        let ops = run(
            Isa::Sparc,
            &[
                (0x10, b, &[]),
                (0x14, LD, &[(0x800, 8, false)]),
                (0x100, b, &[]),
                (0x104, INT, &[]),
                (0x108, Class::Branch { target: 0x200 }, &[]),
                (0x200, Class::Call, &[]),
                (0x204, INT, &[]),
                (0x300, Class::Return, &[]),
                (0x304, INT, &[]),
                (0x208, INT, &[]),
            ],
        );
        assert_eq!(
            ops,
            [
                Kind::Branch(0x100, true),
                Kind::Mem(MemKind::Load, 0x800, 8),
                Kind::Branch(0x100, false),
                Kind::Plain(Op::Int),
                Kind::Branch(0x200, true),
                Kind::Call(0x300),
                Kind::Plain(Op::Int),
                Kind::Return(0x208),
                Kind::Plain(Op::Int),
                Kind::Plain(Op::Int),
            ]
        );
    }
}
