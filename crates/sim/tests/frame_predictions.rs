//! The front end's predictions of what a branch bundle does to the register frame on
//! Montecito (ERRATA MD61, BE_BR_MISPRED_DETAIL): a modulo-scheduled loop's `br.ctop`
//! (MMC81) and a return, each predicted as its bundle last resolved.

mod common;

use pmukit_sim::machine::montecito::MontecitoConfig;
use pmukit_sim::machine::run::Skipping;
use pmukit_sim::machine::{self};
use pmukit_sim::program::{ia64, Access, DataStream, Memory, Op, Pattern, Phase, Program};
use pmukit_sim::stream::{Signal, Totals, BE_FRAME, BE_ROTATE, BE_STAGE, MONTECITO};

const ENTRY: u64 = 0x1_0000;

fn data() -> DataStream {
    DataStream { stride: 8, footprint: 8 << 10, ..DataStream::fixed(0x100_0000, Memory::Cacheable) }
}

/// `runs` executions of the same counted loop of `iterations`, one block: a load, the
/// work that uses it, the back edge (`br.ctop`).
fn loops(runs: usize, iterations: u64) -> Program {
    let body = vec![
        Op::Load(Access { stream: 0, offset: 0, size: 8, use_next: true }),
        Op::Int,
        Op::Int,
        Op::Branch { target: ENTRY, when: Pattern::Loop },
    ];
    let phase = common::phase(body, iterations, vec![data()]);
    Program { threads: vec![Box::new(std::iter::repeat_n(phase, runs))], timer: None }
}

/// MD61: each pass of the loop's branch whose path was predicted rightly counts its
/// stage when its pass (LC counted down, or the last) differs from the bundle's pass
/// before, and its rotation too when the bundle had none before. The branch's own
/// spans say what each pass was and whether its path was mispredicted; with the table
/// learning every pass, the flags follow from them. Each execution's first pass comes
/// after the last one's last: once the direction predictor has learned the re-entry,
/// every execution but the first few counts one.
#[test]
fn md61_a_ctop_loop_mispredicts_its_stage_where_its_pass_changes() {
    const RUNS: usize = 12;
    let blocks = machine::montecito(MontecitoConfig::new(1), ia64::compiled(loops(RUNS, 40)), Skipping::Off);
    let (mut before, mut counted, mut stages) = (None, 0, 0);
    for block in blocks {
        for _ in 0..block.repeat {
            for span in &block.body {
                let Some(b) = span.branch.filter(|b| b.target == ENTRY) else { continue };
                let expected = match before {
                    _ if b.mispredicted => 0,
                    None => BE_STAGE | BE_ROTATE,
                    Some(taken) if taken == b.taken => 0,
                    Some(_) => BE_STAGE,
                };
                assert_eq!(span.signals.get(Signal::BackEndMispredicts), u64::from(expected), "{b:?} after {before:?}");
                before = Some(b.taken);
                counted += 1;
                stages += u64::from(expected & BE_STAGE != 0);
            }
        }
    }
    assert_eq!(counted, RUNS * 40, "every pass of the branch seen");
    assert!(stages >= RUNS as u64 - 3, "a stage mispredict an execution once the re-entry is learned: {stages}");
}

/// A loop whose body is more than one block (a call in it) is no `br.ctop` (MMC81):
/// its branch has no effect on the frame, and nothing counts.
#[test]
fn mmc81_a_loop_with_a_call_is_not_modulo_scheduled() {
    let body = vec![
        Op::Call { target: 0x2_0000, frame: 0 },
        Op::Int,
        Op::Return { to: ENTRY + 4 },
        Op::Branch { target: ENTRY, when: Pattern::Loop },
    ];
    assert!(!ia64::modulo_scheduled(&body));
    let phase = common::phase(body, 40, vec![data()]);
    let t = Totals::of(
        machine::montecito(
            MontecitoConfig::new(1),
            Program { threads: vec![Box::new(std::iter::repeat_n(phase, 12))], timer: None },
            Skipping::Off,
        ),
        u64::MAX,
        |_| true,
    );
    // The return's frame is the same each time: only its first is mispredicted.
    assert_eq!(t.get(Signal::BackEndMispredicts), u64::from(BE_FRAME));
}

/// MD61: a function called from two callers whose frames differ (10 and 20 stacked
/// registers) restores the other one's frame each time it returns: its return's bundle
/// mispredicts the frame (PFS) every time, its path being the return stack's right
/// prediction. Each caller's own return restores the loop's frame every time: only
/// its first is mispredicted, from a bundle that held nothing. (The three returns'
/// bundles have entries of their own: the table has no tags, and F's at 0x5_0004
/// shares one with a return at 0x2_0004.)
#[test]
fn md61_a_return_to_callers_with_other_frames_mispredicts_its_frame() {
    const ITERATIONS: u64 = 500;
    const F: u64 = 0x5_0000;
    let body = vec![
        Op::Call { target: 0x2_4000, frame: 10 },
        Op::Call { target: F, frame: 2 },
        Op::Int,
        Op::Return { to: 0x2_4004 },
        Op::Return { to: ENTRY + 4 },
        Op::Call { target: 0x3_4000, frame: 20 },
        Op::Call { target: F, frame: 2 },
        Op::Int,
        Op::Return { to: 0x3_4004 },
        Op::Return { to: ENTRY + 8 },
        Op::Branch { target: ENTRY, when: Pattern::Loop },
    ];
    for skipping in [Skipping::Off, Skipping::On] {
        let phase: Phase = common::phase(body.clone(), ITERATIONS, vec![data()]);
        let t = Totals::of(machine::montecito(MontecitoConfig::new(1), common::program_of(phase), skipping), u64::MAX, |_| true);
        assert_eq!(t.get(Signal::ReturnsMispredicted), 0, "{skipping:?}: the return stack predicts every target");
        assert_eq!(t.get(Signal::BackEndMispredicts), (2 * ITERATIONS + 2) * u64::from(BE_FRAME), "{skipping:?}");
    }
}

/// The flags a span carries are a prediction's: a frame's never beside a loop pass's,
/// and a rotation's only with a stage's.
#[test]
fn md61_a_rotation_mispredict_comes_with_a_stage_mispredict() {
    let blocks = machine::montecito(MontecitoConfig::new(1), ia64::compiled(loops(4, 20)), Skipping::Off);
    let mut flags = std::collections::HashMap::new();
    common::profile::<_, MONTECITO>(blocks, u64::MAX, |s| s.signals.get(Signal::BackEndMispredicts), &mut flags);
    for &f in flags.keys() {
        assert!(f == 0 || f == u64::from(BE_FRAME) || f & u64::from(BE_STAGE) != 0, "{f:#b}");
    }
}
