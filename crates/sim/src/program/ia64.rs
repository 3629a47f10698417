//! A program as an Itanium compiler lays it out: each phase's instructions in bundles
//! of three slots, whose execution units one of the architecture's templates gives,
//! with a `nop` in every slot no instruction fits, and every branch target at the
//! start of a bundle (Intel Itanium Architecture Software Developer's Manual, Vol. 1
//! §3.3 and Table 3-10, "Template Field Encoding and Instruction Slots Mapping";
//! Vol. 3 §4.1: a taken branch's target is a bundle).
//!
//! Program addresses keep counting `INSN` bytes a slot, nops included, so that a
//! bundle is three consecutive slots starting at a multiple of `3 * INSN`, as the
//! Montecito machine maps them (ERRATA MMC2). The layout is greedy, in program order,
//! as a list scheduler emits an issue group: each instruction takes the first slot a
//! template still possible for its bundle gives its unit; slots it passes over get
//! nops. Branches are the exception: a bundle's branches take its last slots, with
//! the nops before them, as compilers emit them (GCC's `nop.m; nop.i; br.ret` in an
//! MIB), so a BBB holds a branch in its first slot only for three branches in a row, a
//! multiway branch (ERRATA MMC79). An if-converted skip is a compare, which an M or I
//! slot takes (MMC32). Stops are not placed: the machine ends issue groups where a
//! result is not ready (MMC1).

use super::{FpOp, Op, Pattern, Phase, Program, INSN};

/// An execution-unit type of a slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    M,
    I,
    F,
    B,
}

use Unit::{B, F, I, M};

/// The templates, by the units of their slots (Table 3-10; each with and without
/// stops). MLX, whose second and third slots hold one long immediate (`movl`), is left
/// out: the programs carry no 64-bit constants.
pub const TEMPLATES: [[Unit; 3]; 9] = [[M, I, I], [M, M, I], [M, F, I], [M, M, F], [M, I, B], [M, B, B], [B, B, B], [M, M, B], [M, F, B]];

/// All templates, as a set of indices into `TEMPLATES`.
const ANY: u16 = (1 << TEMPLATES.len()) - 1;

/// The units an instruction can issue on: integer ALU instructions (A-type) on an M
/// or an I unit, memory and system-register instructions on M, floating point on F,
/// branches, calls, returns, system calls (`epc`, `break.b`), `rfi` and the idle
/// loop's call of PAL_HALT_LIGHT on B. A nop fits any slot.
pub fn units(op: &Op) -> &'static [Unit] {
    match op {
        Op::Int | Op::Pause => &[M, I],
        Op::Nop => &[M, I, F, B],
        // getf is an M-unit instruction (performed by the L2D, Table 2-8 note 2).
        Op::Fp(FpOp::ToInt) => &[M],
        Op::Fp(_) => &[F],
        Op::Load(_)
        | Op::FpLoad(_)
        | Op::Store(_)
        | Op::Atomic(_)
        | Op::Modify(_)
        | Op::Prefetch(_)
        | Op::BlockLoad(_)
        | Op::BlockStore(_)
        | Op::Barrier
        | Op::SpecialReg
        | Op::FlushCode(_) => &[M],
        Op::Branch { .. }
        | Op::Skip { .. }
        | Op::Call { .. }
        | Op::Return { .. }
        | Op::Jump { .. }
        | Op::Syscall
        | Op::ExceptionReturn
        | Op::Halt => &[B],
    }
}

/// The longest `if` the compiler predicates instead of branching around it: one
/// bundle (ERRATA MMC32).
pub const PREDICATED_IF: u8 = 3;

/// Whether the skip at `i` of `body` over `over` instructions, taken as `when` says,
/// is if-converted (MMC32): a short one over integer instructions only, which
/// predication can guard, whose condition depends on the data, and which no other
/// skip enters (a block with a side entrance is no hammock); a profile shows a
/// condition that always goes one way, and the compiler keeps its branch, which the
/// predictor gets right. The same before the layout and after it: the layout puts no
/// nop among a compare's guarded integer instructions but before a skip's landing
/// point, and lands nothing right after them.
pub fn if_converted(body: &[Op], i: usize, over: u8, when: Pattern) -> bool {
    let block = i + 1..=i + usize::from(over);
    matches!(when, Pattern::Bits { .. })
        && over <= PREDICATED_IF
        && body.get(i + 1..).is_some_and(|rest| rest.iter().take(usize::from(over)).all(|op| matches!(op, Op::Int | Op::Nop)))
        && !body[..i].iter().enumerate().any(|(j, op)| matches!(op, Op::Skip { over, .. } if block.contains(&(j + usize::from(*over) + 1))))
}

/// Whether the compiler modulo-schedules the loop `body` closes (ERRATA MMC81): a
/// counted loop (its last instruction, nops aside, the `Loop` back edge, which is then
/// `br.ctop`) whose body is one basic block, with no other branch, call, return, jump
/// or system call, its skips if-converted, and no halt.
pub fn modulo_scheduled(body: &[Op]) -> bool {
    let Some(last) = body.iter().rposition(|op| *op != Op::Nop) else { return false };
    matches!(body[last], Op::Branch { when: Pattern::Loop, .. })
        && body[..last].iter().enumerate().all(|(i, op)| match *op {
            Op::Skip { over, when } => if_converted(body, i, over, when),
            Op::Halt => false,
            op => !op.is_control(),
        })
}

/// The units the instruction at `i` of `body` can issue on where it stands: an
/// if-converted skip is a compare (an A-type instruction), anything else as `units`
/// says.
fn slot_units(body: &[Op], i: usize) -> &'static [Unit] {
    match body[i] {
        Op::Skip { over, when } if if_converted(body, i, over, when) => &[M, I],
        op => units(&op),
    }
}

/// Whether the layout goes on elsewhere after `op`: a call's, a return's, a taken
/// branch's and an indirect jump's target.
fn moves(op: &Op) -> bool {
    matches!(op, Op::Call { .. } | Op::Return { .. } | Op::Jump { .. }) || matches!(op, Op::Branch { when, .. } if *when != Pattern::Never)
}

/// How many branches from `i` on share a bundle's last slots: up to three in a row,
/// none but the first landed on by a skip and none but the last sending the layout
/// elsewhere.
fn branches_from(body: &[Op], i: usize, lands: &[bool]) -> usize {
    let mut n = 0;
    while n < 3 && i + n < body.len() && slot_units(body, i + n) == [B] && (n == 0 || !lands[i + n]) {
        n += 1;
        if moves(&body[i + n - 1]) {
            break;
        }
    }
    n
}

/// The slot (0-2) of the instruction at program address `addr` in its bundle.
fn slot(addr: u64) -> usize {
    (addr / INSN % 3) as usize
}

/// The templates of `set` that give slot `s` one of `units`.
fn giving(set: u16, s: usize, units: &[Unit]) -> u16 {
    (0..TEMPLATES.len()).filter(|&t| set >> t & 1 == 1 && units.contains(&TEMPLATES[t][s])).fold(0, |m, t| m | 1 << t)
}

/// The body being laid out: the instructions so far, the address of the next slot,
/// and the templates the bundle being filled can still have.
struct Layout {
    body: Vec<Op>,
    addr: u64,
    open: u16,
}

impl Layout {
    fn nop(&mut self) {
        self.body.push(Op::Nop);
        self.next();
    }

    fn next(&mut self) {
        self.addr = self.addr.wrapping_add(INSN);
        if slot(self.addr) == 0 {
            self.open = ANY;
        }
    }

    /// Fills the rest of the bundle with nops.
    fn finish(&mut self) {
        while slot(self.addr) != 0 {
            self.nop();
        }
    }

    /// Execution goes on at `addr`, in a bundle whose earlier slots are other code.
    fn jump(&mut self, addr: u64) {
        self.addr = addr;
        self.open = ANY;
    }

    /// Places `op`, which issues on `units`, in the first slot a template still open
    /// gives its unit, after nops in the slots before; in the next bundle when none
    /// does. With `from`, no sooner than that slot, and in the next bundle when this
    /// one is past it. Returns its address.
    fn place(&mut self, op: Op, units: &[Unit], from: Option<usize>) -> u64 {
        if let Some(from) = from {
            if slot(self.addr) > from {
                self.finish();
            }
            while slot(self.addr) < from && giving(self.open, from, units) != 0 {
                self.nop();
            }
        }
        loop {
            let s = slot(self.addr);
            let here = giving(self.open, s, units);
            if here != 0 {
                self.open = here;
                let at = self.addr;
                self.body.push(op);
                self.next();
                return at;
            }
            let later = (s + 1..3).fold(0, |m, q| m | giving(self.open, q, units));
            if later == 0 {
                self.finish();
            } else {
                self.open = later;
                self.nop();
            }
        }
    }
}

/// The most instructions past its call's return address a return unwinds to (the
/// builder's `ret(unwind)`); a return further away goes to a caller outside the body.
const MAX_UNWIND: u64 = 64;

/// `phase` laid out in bundles. A recorded phase (with addresses of its own) is as it
/// was recorded; so is one whose laid-out skips would pass over more than 255
/// instructions.
pub fn bundled(phase: Phase) -> Phase {
    if !phase.addresses.is_empty() || phase.body.is_empty() {
        return phase;
    }
    let n = phase.body.len();
    // The instructions taken skips land on begin bundles; an if-converted skip is a
    // compare, and lands nowhere.
    let mut lands = vec![false; n + 1];
    for (i, op) in phase.body.iter().enumerate() {
        if let Op::Skip { over, when } = *op {
            if !if_converted(&phase.body, i, over, when) {
                lands[(i + usize::from(over) + 1).min(n)] = true;
            }
        }
    }
    let mut out = Layout { body: Vec::with_capacity(2 * n), addr: phase.entry, open: ANY };
    // Where each instruction is in the laid-out body, and where the bundle a skip
    // landing on it lands begins (nops may precede it in its bundle).
    let mut at = Vec::with_capacity(n + 1);
    let mut lands_at = vec![0; n + 1];
    // The calls of the body not yet returned from: where each returned to before the
    // layout, and the bundle after the call, where it returns now.
    let mut calls: Vec<(u64, u64)> = Vec::new();
    // The address the instruction had before the layout.
    let mut was = phase.entry;
    for (i, &op) in phase.body.iter().enumerate() {
        if lands[i] {
            out.finish();
            lands_at[i] = out.body.len();
        }
        let units = slot_units(&phase.body, i);
        // A bundle's branches take its last slots, in a bundle of their own when the
        // code before has taken those.
        let from = (units == [B]).then(|| 3 - branches_from(&phase.body, i, &lands));
        let addr = out.place(op, units, from);
        at.push(out.body.len() - 1);
        match op {
            Op::Call { target, .. } => {
                // The rest of the call's bundle is never executed: the callee's code
                // follows in the body.
                calls.push((was.wrapping_add(INSN), (addr / (3 * INSN) + 1).wrapping_mul(3 * INSN)));
                was = target;
                out.jump(target);
            }
            Op::Return { to } => {
                // A return to its call's bundle; one that unwinds lands as far past it.
                let now = match calls.pop() {
                    Some((before, after)) if to >= before && to - before <= MAX_UNWIND * INSN => after + (to - before),
                    _ => to,
                };
                out.body[at[i]] = Op::Return { to: now };
                was = to;
                out.jump(now);
            }
            Op::Branch { target, when } if when != super::Pattern::Never => {
                was = target;
                out.jump(target);
            }
            Op::Jump { table, .. } => {
                let target = phase.tables[usize::from(table)].targets[0];
                was = target;
                out.jump(target);
            }
            _ => was = was.wrapping_add(INSN),
        }
    }
    at.push(out.body.len());
    lands_at[n] = out.body.len();
    let mut body = out.body;
    for i in 0..n {
        if let Op::Skip { over, when } = phase.body[i] {
            let land = (i + usize::from(over) + 1).min(n);
            // An if-converted skip guards the instructions right after it.
            let to = if if_converted(&phase.body, i, over, when) { at[land - 1] + 1 } else { lands_at[land] };
            let Ok(over) = u8::try_from(to - at[i] - 1) else { return phase };
            body[at[i]] = Op::Skip { over, when };
        }
    }
    Phase { body, ..phase }
}

/// `program` with every phase laid out in bundles (`bundled`): the built-in
/// workloads as an Itanium compiler emits them.
pub fn compiled(program: Program) -> Program {
    let threads = program.threads.into_iter().map(|t| Box::new(t.map(bundled)) as Box<dyn Iterator<Item = Phase> + Send>).collect();
    let timer = program.timer.map(|mut t| {
        t.handler = t.handler.into_iter().map(bundled).collect();
        t
    });
    Program { threads, timer }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::builtin::{self, WORKLOADS};
    use crate::program::{Access, FpOp, Pattern};
    use proptest::prelude::*;

    fn phase(body: Vec<Op>, entry: u64) -> Phase {
        Phase {
            privilege: crate::stream::Privilege::USER,
            context: 1,
            masks: Default::default(),
            entry,
            code_page: None,
            uncached_code: false,
            guest: false,
            body,
            iterations: 10,
            streams: Vec::new(),
            tables: Vec::new(),
            addresses: Vec::new(),
            dma: Vec::new(),
            watch: None,
            fp: Default::default(),
        }
    }

    /// The address each instruction of `p` runs at when every skip falls through and
    /// every other branch goes where it leads, as the machines compute it.
    fn addresses(p: &Phase) -> Vec<u64> {
        let mut ip = p.entry;
        p.body
            .iter()
            .map(|op| {
                let here = ip;
                ip = match *op {
                    Op::Call { target, .. } => target,
                    Op::Return { to } => to,
                    Op::Branch { target, when } if when != Pattern::Never => target,
                    Op::Jump { table, .. } => p.tables[usize::from(table)].targets[0],
                    _ => ip + INSN,
                };
                here
            })
            .collect()
    }

    /// Every bundle the layout fills from its first slot holds what one template's
    /// units take; the program's instructions are the original ones, in order; every
    /// skip lands where it did, at the start of a bundle; a return to its call comes
    /// back to the bundle after the call's.
    fn check(before: &Phase) {
        let after = bundled(before.clone());
        let originals: Vec<Op> = after.body.iter().filter(|op| **op != Op::Nop).copied().collect();
        assert_eq!(originals.len(), before.body.len());
        for (a, b) in originals.iter().zip(&before.body) {
            match (a, b) {
                (Op::Skip { when: x, .. }, Op::Skip { when: y, .. }) => assert_eq!(x, y),
                (Op::Return { .. }, Op::Return { .. }) => {}
                _ => assert_eq!(a, b),
            }
        }
        let addrs = addresses(&after);
        // A bundle as execution passes through it: consecutive instructions of one
        // bundle, in rising slots (a body may come back to the same code), each with
        // the units it can issue on there.
        let mut bundles: Vec<Vec<(usize, Op, &[Unit])>> = Vec::new();
        let mut last: Option<u64> = None;
        for (i, (op, &a)) in after.body.iter().zip(&addrs).enumerate() {
            let here = (slot(a), *op, slot_units(&after.body, i));
            match bundles.last_mut() {
                Some(b) if last.is_some_and(|l| l / (3 * INSN) == a / (3 * INSN) && slot(l) < slot(a)) => b.push(here),
                _ => bundles.push(vec![here]),
            }
            last = Some(a);
        }
        for ops in &bundles {
            let fits = (0..TEMPLATES.len()).any(|t| ops.iter().all(|(s, _, units)| units.contains(&TEMPLATES[t][*s])));
            assert!(fits, "{ops:?} fits no template");
            // A branch is followed in its bundle by branches only.
            let first = ops.iter().position(|(_, _, u)| *u == [B]);
            if let Some(f) = first {
                assert!(ops[f..].iter().all(|(_, op, u)| *u == [B] || *op == Op::Nop), "{ops:?}: a branch before other code");
            }
        }
        let index: Vec<usize> = after.body.iter().enumerate().filter(|(_, op)| **op != Op::Nop).map(|(i, _)| i).collect();
        for (j, op) in before.body.iter().enumerate() {
            if let Op::Skip { over, when } = *op {
                let Op::Skip { over: now, .. } = after.body[index[j]] else { panic!("not a skip") };
                let land = j + usize::from(over) + 1;
                let lands = index[j] + usize::from(now) + 1;
                let first = after.body[lands..].iter().position(|op| *op != Op::Nop).map_or(after.body.len(), |p| lands + p);
                assert_eq!(first, index.get(land).copied().unwrap_or(after.body.len()), "skip {j} lands elsewhere");
                // A compare guards instructions in place; a branch's target is a bundle.
                let compare = if_converted(&before.body, j, over, when);
                assert_eq!(compare, if_converted(&after.body, index[j], now, when), "skip {j} changed kind");
                if let (Some(&a), false) = (addrs.get(lands), compare) {
                    assert_eq!(slot(a), 0, "skip {j} lands inside a bundle");
                }
            }
        }
    }

    /// Itanium code: `ld8; ld8; add; fma; br` fills MMI, then MFB with a nop.m ahead
    /// of the FP instruction (Table 3-10). 0x1200 starts a bundle (MMC2).
    #[test]
    fn table_3_10_two_loads_an_add_an_fma_and_a_branch_make_mmi_mfb() {
        let load = Op::Load(Access { stream: 0, offset: 0, size: 8, use_next: false });
        let br = Op::Branch { target: 0x1200, when: Pattern::Loop };
        let body = vec![load, load, Op::Int, Op::Fp(FpOp::Fma), br];
        assert_eq!(bundled(phase(body.clone(), 0x1200)).body, vec![load, load, Op::Int, Op::Nop, Op::Fp(FpOp::Fma), br]);
        check(&phase(body, 0x1200));
    }

    /// A branch takes its bundle's last slot, after nops, as compilers emit it (ERRATA
    /// MMC79: `nop.m; nop.i; br` in an MIB): here an MIB of the add, a nop.i and the
    /// skip; the instruction the skip lands on starts a bundle, so the store's holds
    /// two nops after it, which the skip passes over too.
    #[test]
    fn mmc79_a_branch_takes_its_bundles_last_slot() {
        let store = Op::Store(Access { stream: 0, offset: 0, size: 8, use_next: false });
        let skip = Op::Skip { over: 1, when: Pattern::Never };
        let body = vec![Op::Int, skip, store, Op::Int];
        let p = bundled(phase(body.clone(), 0x1200));
        assert_eq!(p.body, vec![Op::Int, Op::Nop, Op::Skip { over: 3, when: Pattern::Never }, store, Op::Nop, Op::Nop, Op::Int]);
        check(&phase(body, 0x1200));
    }

    /// Three branches in a row are a multiway branch: a BBB, its first branch in the
    /// first slot (B0, ERRATA MD41); two share an MBB's last slots, in the next bundle
    /// when the code before took them; one after a skip's landing point starts no run
    /// with the branch before it.
    #[test]
    fn mmc79_branches_in_a_row_share_a_bundles_last_slots() {
        let skip = |over| Op::Skip { over, when: Pattern::Never };
        let table = Op::Jump { table: 0, via: None };
        let mut p = phase(vec![Op::Int, Op::Int, Op::Int, skip(2), skip(1), table], 0x1200);
        p.tables = vec![crate::program::Table { targets: vec![0x3000] }];
        let laid = bundled(p.clone());
        assert_eq!(laid.body, vec![Op::Int, Op::Int, Op::Int, skip(2), skip(1), table]);
        check(&p);
        let body = vec![Op::Int, skip(1), skip(0)];
        assert_eq!(bundled(phase(body.clone(), 0x1200)).body, body);
        check(&phase(body, 0x1200));
        // Two integer instructions leave one slot: the branches take the next bundle's.
        let body = vec![Op::Int, Op::Int, skip(1), skip(0)];
        assert_eq!(bundled(phase(body.clone(), 0x1200)).body, vec![Op::Int, Op::Int, Op::Nop, Op::Nop, skip(1), skip(0)]);
        check(&phase(body, 0x1200));
        // The first skip lands on the second: each a bundle's last slot.
        let body = vec![skip(0), skip(0), Op::Int];
        let laid = bundled(phase(body.clone(), 0x1200));
        assert_eq!(laid.body, vec![Op::Nop, Op::Nop, skip(0), Op::Nop, Op::Nop, skip(0), Op::Int]);
        check(&phase(body, 0x1200));
    }

    /// An if-converted skip is a compare: an M or I slot takes it, and the integer
    /// instructions it guards follow it in place, no bundle begun for the code after
    /// them (MMC32).
    #[test]
    fn an_if_converted_skip_is_a_compare_in_an_integer_slot() {
        let load = Op::Load(Access { stream: 0, offset: 0, size: 8, use_next: false });
        let skip = Op::Skip { over: 2, when: Pattern::Bits { bits: 0b1010, len: 4 } };
        let body = vec![load, skip, Op::Int, Op::Int, load];
        let laid = bundled(phase(body.clone(), 0x1200));
        assert_eq!(laid.body, body);
        check(&phase(body, 0x1200));
    }

    /// A call's return comes back to the bundle after the call's, where the caller's
    /// code goes on.
    #[test]
    fn a_return_comes_back_to_the_bundle_after_its_call() {
        let body = vec![Op::Int, Op::Call { target: 0x8000, frame: 8 }, Op::Int, Op::Return { to: 0x1208 }, Op::Int];
        let p = bundled(phase(body.clone(), 0x1200));
        let ret = p.body.iter().find(|op| matches!(op, Op::Return { .. }));
        assert_eq!(ret, Some(&Op::Return { to: 0x120c }));
        check(&phase(body, 0x1200));
    }

    #[test]
    fn every_builtin_workload_lays_out_in_templates() {
        for w in WORKLOADS {
            let program = builtin::program(w.name, 3, 2).unwrap();
            for t in program.threads {
                for p in t.take(64) {
                    check(&p);
                }
            }
        }
    }

    fn op() -> impl Strategy<Value = Op> {
        let a = Access { stream: 0, offset: 0, size: 8, use_next: false };
        prop_oneof![
            Just(Op::Int),
            Just(Op::Fp(FpOp::Add)),
            Just(Op::Load(a)),
            Just(Op::Store(a)),
            Just(Op::Barrier),
            (0u8..4).prop_map(|over| Op::Skip { over, when: Pattern::Always }),
            (0u8..5).prop_map(|over| Op::Skip { over, when: Pattern::Bits { bits: 0b0110, len: 4 } }),
            Just(Op::Branch { target: 0x3000, when: Pattern::Never }),
            Just(Op::Syscall),
        ]
    }

    proptest! {
        #[test]
        fn any_body_lays_out_in_templates(mut body in proptest::collection::vec(op(), 1..40), entry in 0u64..64) {
            // A skip lands within the body or right after it (`Phase::check`).
            let n = body.len();
            for (i, op) in body.iter_mut().enumerate() {
                if let Op::Skip { over, .. } = op {
                    *over = (*over).min(u8::try_from(n - 1 - i).unwrap_or(u8::MAX));
                }
            }
            check(&phase(body, 0x1000 + 4 * entry));
        }
    }

    /// MMC81: a counted loop of one block is modulo-scheduled, if-converted skips and
    /// the layout's nops included; a loop with any other branch, a call or a halt in
    /// it, or one that no `Loop` back edge closes, is not.
    #[test]
    fn mmc81_a_counted_loop_of_one_block_is_modulo_scheduled() {
        let back = Op::Branch { target: 0x1_0000, when: Pattern::Loop };
        let predicated = Op::Skip { over: 1, when: Pattern::Bits { bits: 5, len: 8 } };
        assert!(modulo_scheduled(&[Op::Int, Op::Fp(FpOp::Fma), back]));
        assert!(modulo_scheduled(&[Op::Int, predicated, Op::Int, Op::Nop, back, Op::Nop]));
        let never = Op::Branch { target: 0x1_0000, when: Pattern::Never };
        for body in [
            vec![Op::Int, Op::Skip { over: 1, when: Pattern::Bits { bits: 5, len: 8 } }, Op::Fp(FpOp::Div), back],
            vec![Op::Call { target: 0x2_0000, frame: 0 }, Op::Return { to: 0x1_0004 }, back],
            vec![never, Op::Int, back],
            vec![Op::Int, Op::Halt, back],
            vec![Op::Int, Op::Branch { target: 0x1_0000, when: Pattern::Always }],
            vec![],
        ] {
            assert!(!modulo_scheduled(&body), "{body:?}");
        }
    }
}
