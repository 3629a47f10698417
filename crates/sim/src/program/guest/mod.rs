//! Programs of the simulated instruction sets as they execute (a binary under QEMU):
//! each instruction's class from its bytes, decided once when it is translated
//! ([`arm`], [`sparc`]), and the instructions of a software thread made into phases
//! as they run ([`Executed`]): an instruction is complete once its memory accesses
//! have been seen, and a control transfer once where control went is known.

pub mod arm;
pub mod sparc;

use super::trace::{Kind, Maker, MemKind, Record};
use super::{Op, Pattern, Phase};
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

/// A SPARC delay slot that has executed, waiting for where its control transfer went.
/// It refers to its translation rather than copying it: a copy of the class, written
/// a field at a time and read back whole, stalled on the store buffer.
#[derive(Debug, Clone, Copy)]
struct Running<'a> {
    insn: &'a Insn,
    accesses: Accesses,
}

/// One software thread's instructions as they execute, made into phases in program
/// order ([`Maker`]). An instruction that transfers no control is complete as it
/// executes and goes into the phase at once; a control transfer waits for the next
/// instruction's address, and on SPARC, whose transfers' outcome is known only after
/// their delay slot (SPARC V9 §6.3.4), for the slot's successor, the slot following it.
pub struct Executed<'a> {
    isa: Isa,
    thread: u8,
    /// A control transfer whose outcome is not known yet. Its accesses (ARM's LDR pc
    /// makes one) are not kept: a transfer's operation has no data reference, and
    /// copying their sum, written a field at a time, stalled on the store buffer.
    held: Option<&'a Insn>,
    /// The delay slot of `held`, executed (SPARC).
    slot: Option<Running<'a>>,
    maker: Maker,
    /// Phases ended since [`Executed::phases`] last took them.
    ended: Vec<Phase>,
}

impl<'a> Executed<'a> {
    pub fn new(isa: Isa, thread: u8) -> Executed<'a> {
        // A program's threads are one process's, in one address space.
        Executed { isa, thread, held: None, slot: None, maker: Maker::running(), ended: Vec::new() }
    }

    /// The software thread whose instructions these are.
    pub fn thread(&self) -> u8 {
        self.thread
    }

    /// How many phases have ended since they were last taken.
    pub fn ended(&self) -> usize {
        self.ended.len()
    }

    /// The phases ended since the last call, in order.
    pub fn phases(&mut self) -> Vec<Phase> {
        std::mem::take(&mut self.ended)
    }

    /// `insn` executed, making `accesses`. The caller sums an instruction's accesses
    /// before it hands the instruction over, so each is written here once, whole.
    #[inline]
    pub fn executed(&mut self, insn: &'a Insn, accesses: Accesses) {
        if let Some(t) = self.held.take() {
            if let Some(slot) = self.slot.take() {
                // The delay slot of `t` is over: control went on at `insn`.
                self.resolve(t, insn.ip);
                self.resolve_slot(&slot);
            } else if self.isa == Isa::Sparc && insn.ip == t.ip + t.size {
                // `insn` is the delay slot; the outcome comes after it.
                self.held = Some(t);
                self.slot = Some(Running { insn, accesses });
                return;
            } else {
                // No delay slot (ARM), or one that was annulled.
                self.resolve(t, insn.ip);
            }
        }
        if insn.class.transfers_control() {
            self.held = Some(insn);
        } else {
            self.complete(insn, accesses);
        }
    }

    /// The thread ends: a transfer still waiting falls through, and the phase being
    /// made ends.
    pub fn finish(&mut self) {
        if let Some(t) = self.held.take() {
            let next = match (&self.slot, self.isa) {
                (Some(slot), _) => slot.insn.ip + slot.insn.size,
                (None, Isa::Sparc) => t.ip + 2 * t.size,
                (None, Isa::Arm) => t.ip + t.size,
            };
            self.resolve(t, next);
            if let Some(slot) = self.slot.take() {
                self.resolve_slot(&slot);
            }
        }
        self.ended.extend(self.maker.take());
    }

    /// An instruction that transfers no control, complete as it executes: its
    /// operation goes into the phase from its translation, or from its accesses,
    /// without a record between.
    #[inline]
    fn complete(&mut self, insn: &Insn, a: Accesses) {
        let (thread, ip) = (self.thread, insn.ip);
        let ended = match insn.class {
            Class::Plain(ref op) if a.count == 0 => self.maker.push_op(thread, Privilege::USER, ip, op),
            Class::Memory { .. } if a.count == 0 => self.maker.push_op(thread, Privilege::USER, ip, &Op::Int),
            Class::Memory { fp } => {
                let (kind, low, bytes) = memory(&a, fp);
                self.maker.push_mem(thread, Privilege::USER, ip, kind, low, bytes)
            }
            // A plain instruction that made accesses (code the decoder does not know,
            // ARM's kernel helpers); control transfers never come here.
            _ => {
                let (kind, low, bytes) = memory(&a, false);
                self.maker.push_mem(thread, Privilege::USER, ip, kind, low, bytes)
            }
        };
        self.ended.extend(ended);
    }

    /// A delay slot into the phase once its transfer is: a transfer itself (a
    /// SPARC DCTI couple) falls through.
    fn resolve_slot(&mut self, slot: &Running) {
        if !self.resolve(slot.insn, slot.insn.ip + slot.insn.size) {
            self.complete(slot.insn, slot.accesses);
        }
    }

    /// A control transfer into the phase, control having gone on at `next`; `false`,
    /// doing nothing, for an instruction that transfers no control. A transfer's
    /// operation is made where the phase keeps it, as a plain instruction's is; only
    /// a jump, which takes a table of its phase, goes in as a record.
    fn resolve(&mut self, insn: &Insn, next: u64) -> bool {
        let Insn { ip, size, class } = *insn;
        // Where control goes when a branch is not taken: past the delay slot on SPARC.
        let fallthrough = match self.isa {
            Isa::Sparc => ip + 2 * size,
            Isa::Arm => ip + size,
        };
        let taken = |yes: bool| if yes { Pattern::Always } else { Pattern::Never };
        let op = match class {
            Class::Branch { target } => Op::Branch { target, when: taken(next != fallthrough) },
            Class::Call => Op::Call { target: next, frame: 0 },
            Class::Return => Op::Return { to: next },
            Class::IndirectBranch => Op::Branch { target: next, when: Pattern::Always },
            Class::Jump => {
                let ended = self.maker.push(Record { thread: self.thread, privilege: Privilege::USER, ip, op: Kind::Jump(next) });
                self.ended.extend(ended);
                return true;
            }
            Class::Plain(_) | Class::Memory { .. } => return false,
        };
        let ended = self.maker.push_op(self.thread, Privilege::USER, ip, &op);
        self.ended.extend(ended);
        true
    }
}

/// A memory instruction's kind, lowest address and bytes from its accesses: a load
/// and a store together are atomic (SWP, LDSTUB, CAS), several accesses of a line or
/// more a block transfer.
#[inline]
fn memory(a: &Accesses, fp: bool) -> (MemKind, u64, u8) {
    let block = a.count > 1 && a.bytes >= BLOCK_BYTES;
    let kind = match (a.loads, a.stores) {
        (true, true) => MemKind::Atomic,
        (true, false) if block => MemKind::BlockLoad,
        (true, false) if fp => MemKind::FpLoad,
        (true, false) => MemKind::Load,
        _ if block => MemKind::BlockStore,
        _ => MemKind::Store,
    };
    (kind, a.low, u8::try_from(a.bytes).unwrap_or(u8::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An instruction's address, class and accesses (address, bytes, store).
    type Step<'a> = (u64, Class, &'a [(u64, u32, bool)]);

    fn run(isa: Isa, steps: &[Step]) -> Vec<Kind> {
        let insns: Vec<Insn> = steps.iter().map(|&(ip, class, _)| Insn { ip, size: 4, class }).collect();
        let mut e = Executed::new(isa, 0);
        for (insn, &(_, _, accesses)) in insns.iter().zip(steps) {
            let mut sum = Accesses::default();
            for &(a, b, s) in accesses {
                sum.add(a, b, s);
            }
            e.executed(insn, sum);
        }
        e.finish();
        let phases = e.phases();
        let lines = phases.iter().flat_map(|p| crate::program::trace::lines(p, 0));
        lines
            .filter_map(|l| match l {
                crate::program::trace::Line::Instruction(r) => Some(r.op),
                crate::program::trace::Line::Transfer(_) => None,
            })
            .collect()
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
