//! Writing phases instruction by instruction, following the program counter so that
//! calls know their return addresses and loops their entry.

use super::{Access, DataStream, Dma, FpOp, FpValues, Masks, Op, Pattern, Phase, Table, INSN};
use crate::stream::Privilege;

/// A phase under construction.
pub struct Body {
    phase: Phase,
    /// The address of the next instruction.
    ip: u64,
    /// Return addresses of the calls not yet returned from, newest last.
    calls: Vec<u64>,
}

impl Body {
    pub fn new(privilege: Privilege, context: u32, entry: u64) -> Body {
        let phase = Phase {
            privilege,
            context,
            masks: Masks::default(),
            entry,
            code_page: None,
            uncached_code: false,
            guest: false,
            body: Vec::new(),
            iterations: 1,
            streams: Vec::new(),
            tables: Vec::new(),
            addresses: Vec::new(),
            dma: Vec::new(),
            watch: None,
            fp: Default::default(),
        };
        Body { phase, ip: entry, calls: Vec::new() }
    }

    pub fn ip(&self) -> u64 {
        self.ip
    }

    /// Maps the code with pages of `page` bytes.
    pub fn code_page(&mut self, page: u64) -> &mut Self {
        self.phase.code_page = Some(page);
        self
    }

    /// Puts the code in memory no cache holds (`Phase::uncached_code`).
    pub fn uncached_code(&mut self) -> &mut Self {
        self.phase.uncached_code = true;
        self
    }

    /// What the floating-point arithmetic computes ([`FpValues`]).
    pub fn fp_values(&mut self, fp: FpValues) -> &mut Self {
        self.phase.fp = fp;
        self
    }

    pub fn masks(&mut self, masks: Masks) -> &mut Self {
        self.phase.masks = masks;
        self
    }

    /// Adds a data stream; returns its number for accesses.
    pub fn stream(&mut self, s: DataStream) -> u8 {
        self.phase.streams.push(s);
        (self.phase.streams.len() - 1) as u8
    }

    /// A device's transfer at the end of each iteration ([`Dma`]).
    pub fn dma(&mut self, stream: u8, bytes: u32, write: bool) -> &mut Self {
        self.phase.dma.push(Dma { stream, bytes, write });
        self
    }

    pub fn table(&mut self, targets: Vec<u64>) -> u8 {
        self.phase.tables.push(Table { targets });
        (self.phase.tables.len() - 1) as u8
    }

    fn push(&mut self, op: Op) -> &mut Self {
        self.phase.body.push(op);
        self.ip += INSN;
        self
    }

    pub fn int(&mut self, n: u64) -> &mut Self {
        for _ in 0..n {
            self.push(Op::Int);
        }
        self
    }

    pub fn fp(&mut self, op: FpOp, n: u64) -> &mut Self {
        for _ in 0..n {
            self.push(Op::Fp(op));
        }
        self
    }

    pub fn load(&mut self, stream: u8, offset: u32, size: u8, use_next: bool) -> &mut Self {
        self.push(Op::Load(Access { stream, offset, size, use_next }))
    }

    pub fn fp_load(&mut self, stream: u8, offset: u32, size: u8, use_next: bool) -> &mut Self {
        self.push(Op::FpLoad(Access { stream, offset, size, use_next }))
    }

    pub fn store(&mut self, stream: u8, offset: u32, size: u8) -> &mut Self {
        self.push(Op::Store(Access { stream, offset, size, use_next: false }))
    }

    pub fn op(&mut self, op: Op) -> &mut Self {
        debug_assert!(!op.is_control() || matches!(op, Op::Skip { .. } | Op::Syscall | Op::ExceptionReturn));
        self.push(op)
    }

    /// A forward branch over the next `over` instructions, taken when `when` says.
    pub fn skip(&mut self, over: u8, when: Pattern) -> &mut Self {
        self.push(Op::Skip { over, when })
    }

    /// A branch to `target`; the body goes on at `target` (taken) or after it.
    pub fn branch(&mut self, target: u64, when: Pattern) -> &mut Self {
        self.phase.body.push(Op::Branch { target, when });
        self.ip = if when == Pattern::Never { self.ip + INSN } else { target };
        self
    }

    pub fn call(&mut self, target: u64, frame: u8) -> &mut Self {
        self.phase.body.push(Op::Call { target, frame });
        self.calls.push(self.ip + INSN);
        self.ip = target;
        self
    }

    /// Returns to the caller; `unwind` instructions past the call's return address
    /// when it unwinds (longjmp, an exception).
    pub fn ret(&mut self, unwind: u64) -> &mut Self {
        let to = self.calls.pop().unwrap_or(self.phase.entry) + unwind * INSN;
        self.phase.body.push(Op::Return { to });
        self.ip = to;
        self
    }

    /// Returns to `to`, a caller outside this phase.
    pub fn return_to(&mut self, to: u64) -> &mut Self {
        self.phase.body.push(Op::Return { to });
        self.ip = to;
        self
    }

    /// An indirect jump through `table`; the body goes on at the table's targets.
    pub fn jump(&mut self, table: u8, via: Option<Access>) -> &mut Self {
        self.phase.body.push(Op::Jump { table, via });
        self.ip = self.phase.tables[usize::from(table)].targets[0];
        self
    }

    /// Moves to `ip` without an instruction (the next phase starts elsewhere).
    pub fn goto(&mut self, ip: u64) -> &mut Self {
        self.ip = ip;
        self
    }

    /// Closes the loop with its back edge and gives the phase.
    pub fn close_loop(mut self, iterations: u64) -> Phase {
        let entry = self.phase.entry;
        self.branch(entry, Pattern::Loop);
        self.phase.iterations = iterations.max(1);
        self.phase
    }

    /// The body run once, as straight-line code.
    pub fn once(self) -> Phase {
        self.phase
    }
}
