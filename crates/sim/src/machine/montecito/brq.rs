//! The front end's branch retirement queue (§4.15 FE_LOST_BW: "BRQ: only if caused
//! by branch retirement queue stall", one of FE_BUBBLE's "4 branch recirculates";
//! ERRATA MMC78). Each branch the front end fetches takes an entry for its prediction
//! until it retires. Behind a stalled back end the front end fetches ahead into the
//! instruction buffer (MMC18); where the bundles ahead hold more branches than the
//! queue has entries, the fetch stops at the first bundle whose branches find it
//! full, short of filling the buffer, and the front end stalls for the queue rather
//! than for the full buffer.

use super::group::IB_BUNDLES;
use crate::program::{ia64, Op, Pattern, Phase, INSN};

/// Whether the instruction at `i` of `phase`'s body is a branch the front end
/// predicts: a conditional or loop branch (taken or not: a skip the compiler kept as
/// a branch, not the compare of an if-converted one, MMC32), a call, a return, an
/// indirect jump. `epc`, `rfi` and the idle loop's call of PAL go to other code than
/// the front end predicts.
fn predicted(phase: &Phase, i: usize) -> bool {
    match phase.body[i] {
        Op::Skip { over, when } => !ia64::if_converted(&phase.body, i, over, when),
        op => matches!(op, Op::Branch { .. } | Op::Call { .. } | Op::Return { .. } | Op::Jump { .. }),
    }
}

/// For each instruction of `phase`'s body, into `out`, how many bundles the front end
/// can fetch past its bundle, the instruction buffer's at most (`IB_BUNDLES`), before
/// a branch finds the queue's `entries` taken: the branches of the instruction's
/// bundle hold entries, and so does each bundle fetched after it. The bundles are the
/// ones execution passes through, a taken branch ending one (the layout gives its
/// target a bundle of its own); past the body's end the fetch follows a loop's back
/// edge to its start, and finds no branch after a phase that runs once. A recorded
/// phase's instructions are where it recorded them (`Phase::addresses`). `bundles` is
/// scratch space, kept by the caller to spare an allocation a phase.
pub(super) fn room(phase: &Phase, entries: usize, out: &mut Vec<u8>, bundles: &mut Vec<Bundle>) {
    bundles.clear();
    let mut ip = phase.entry;
    let mut current = None;
    for (i, op) in phase.body.iter().enumerate() {
        if let Some(&recorded) = phase.addresses.get(i) {
            ip = recorded;
        }
        let at = ip / (3 * INSN);
        if current != Some(at) {
            bundles.push(Bundle::default());
            current = Some(at);
        }
        if let Some(last) = bundles.last_mut() {
            last.instructions += 1;
            last.branches += usize::from(predicted(phase, i));
        }
        let next = match *op {
            Op::Call { target, .. } => Some(target),
            Op::Return { to } => Some(to),
            Op::Branch { target, when } if when != Pattern::Never => Some(target),
            Op::Jump { table, .. } => phase.tables.get(usize::from(table)).and_then(|t| t.targets.first().copied()),
            _ => None,
        };
        match next {
            Some(target) => {
                ip = target;
                current = None;
            }
            None => ip = ip.wrapping_add(INSN),
        }
    }
    let n = bundles.len();
    let wraps = phase.iterations > 1;
    let branches = |j: usize| match bundles.get(j) {
        Some(b) => b.branches,
        None if wraps && n > 0 => bundles.get(j % n).map_or(0, |b| b.branches),
        None => 0,
    };
    let fits = |j: usize| -> u8 {
        let Some(free) = entries.checked_sub(branches(j)) else { return 0 };
        let mut taken = 0;
        for ahead in 1..=IB_BUNDLES {
            taken += branches(j + usize::from(ahead));
            if taken > free {
                return ahead - 1;
            }
        }
        IB_BUNDLES
    };
    out.clear();
    for (j, b) in bundles.iter().enumerate() {
        let r = fits(j);
        out.extend(std::iter::repeat_n(r, b.instructions));
    }
}

/// A bundle execution passes through: its instructions, and the branches among them
/// (three at most in a laid-out program; a recorded one may give any number of
/// instructions one bundle's address).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Bundle {
    instructions: usize,
    branches: usize,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::{Access, Table};
    use crate::stream::Privilege;

    fn phase(body: Vec<Op>, iterations: u64) -> Phase {
        Phase {
            privilege: Privilege::USER,
            context: 1,
            masks: Default::default(),
            entry: ENTRY,
            code_page: None,
            uncached_code: false,
            guest: false,
            body,
            iterations,
            streams: Vec::new(),
            tables: vec![Table { targets: vec![0x2_0000] }],
            addresses: Vec::new(),
            dma: Vec::new(),
            watch: None,
            fp: Default::default(),
        }
    }

    /// A bundle's address: three instructions of `INSN` bytes from a multiple of 12.
    const ENTRY: u64 = 0xc000;
    const LOAD: Op = Op::Load(Access { stream: 0, offset: 0, size: 8, use_next: false });

    fn rooms(p: &Phase, entries: usize) -> Vec<u8> {
        let mut out = vec![9; 3];
        room(p, entries, &mut out, &mut Vec::new());
        out
    }

    /// A loop of one bundle whose branch goes back to it: each bundle fetched ahead
    /// holds a branch, so a queue of 8 takes the instruction's own and seven more;
    /// of 9 or more, the buffer fills first.
    #[test]
    fn a_one_bundle_loop_fills_the_queue_before_the_buffer() {
        let p = phase(vec![LOAD, Op::Int, Op::Branch { target: ENTRY, when: Pattern::Loop }], 100);
        assert_eq!(rooms(&p, 8), [7, 7, 7]);
        assert_eq!(rooms(&p, 9), [8, 8, 8]);
        assert_eq!(rooms(&p, 1), [0, 0, 0]);
    }

    /// A loop of two bundles, one branch between them: eight bundles ahead hold four
    /// branches, so a queue of eight never stops the fetch, one of three does; a
    /// phase that runs once finds no branch past its end.
    #[test]
    fn sparser_branches_leave_the_buffer_to_fill() {
        let body = vec![LOAD, Op::Int, Op::Int, LOAD, Op::Int, Op::Branch { target: ENTRY, when: Pattern::Loop }];
        let p = phase(body.clone(), 100);
        assert_eq!(rooms(&p, 8), [8; 6]);
        assert_eq!(rooms(&p, 3), [6, 6, 6, 5, 5, 5], "the first bundle holds no branch, the second one");
        assert_eq!(rooms(&p, 1), [2, 2, 2, 1, 1, 1]);
        assert_eq!(rooms(&phase(body, 1), 1), [8; 6]);
    }

    /// A recorded phase's bundles are where its instructions were recorded: two
    /// branches 12 bytes apart are in two bundles, four bytes apart in one.
    #[test]
    fn a_recorded_phases_bundles_are_its_addresses() {
        let branch = Op::Branch { target: ENTRY, when: Pattern::Never };
        let mut p = phase(vec![branch, branch], 1);
        p.addresses = vec![ENTRY, ENTRY + 3 * INSN];
        assert_eq!(rooms(&p, 1), [0, 8]);
        p.addresses = vec![ENTRY, ENTRY + INSN];
        assert_eq!(rooms(&p, 1), [0, 0], "one bundle of two branches finds one entry");
    }

    /// A recorded phase may give hundreds of instructions one bundle's address: each
    /// gets the bundle's room.
    #[test]
    fn any_number_of_instructions_may_share_a_recorded_bundle() {
        let mut p = phase(vec![Op::Branch { target: ENTRY, when: Pattern::Never }; 300], 2);
        p.addresses = vec![ENTRY; 300];
        assert_eq!(rooms(&p, 8), [0; 300]);
    }

    /// A call and its return end their bundles; an indirect jump goes to its table's
    /// target; a never-taken branch and an if-converted skip (a compare, MMC32) do not
    /// end a bundle, and only the first holds an entry.
    #[test]
    fn calls_returns_jumps_and_untaken_branches_hold_entries() {
        let body = vec![
            Op::Branch { target: 0x9_0000, when: Pattern::Never },
            Op::Skip { over: 0, when: Pattern::Bits { bits: 0b10, len: 2 } },
            Op::Call { target: 0x3_0000, frame: 8 },
            Op::Return { to: ENTRY + 3 * INSN },
            Op::Jump { table: 0, via: None },
        ];
        // Three bundles: the first holds two branches, the return's and the jump's one
        // each.
        let p = phase(body, 1);
        assert_eq!(rooms(&p, 2), [0, 0, 0, 8, 8]);
        assert_eq!(rooms(&p, 3), [1, 1, 1, 8, 8]);
    }

    /// A skip the compiler keeps as a branch (its condition always goes one way, or
    /// its block holds more than integer instructions) is a conditional branch, and
    /// holds an entry: in a loop of one bundle, each bundle fetched ahead holds one.
    /// An if-converted one is a compare, and holds none.
    #[test]
    fn a_skip_kept_as_a_branch_holds_an_entry() {
        let kept = phase(vec![Op::Skip { over: 1, when: Pattern::Always }, LOAD, Op::Int], 100);
        assert_eq!(rooms(&kept, 1), [0, 0, 0]);
        assert_eq!(rooms(&kept, 2), [1, 1, 1]);
        let compare = phase(vec![Op::Skip { over: 1, when: Pattern::Bits { bits: 0b10, len: 2 } }, Op::Int, LOAD], 100);
        assert_eq!(rooms(&compare, 1), [8, 8, 8]);
    }
}
