//! What the front end predicts a branch bundle does to the register frame (ERRATA
//! MD61). A modulo-scheduled loop's branch (`br.ctop`, MMC81) counts LC down and
//! writes 1 to the stage predicate p63, or on the loop's last pass counts EC down and
//! writes 0, and rotates the registers either way; a return restores its caller's
//! frame from ar.pfs. The registers of the bundles after the branch are renamed before
//! it executes, so the front end predicts these effects; §4.15 says only that "these
//! predictions are per bundle rather than per branch". The model keeps each bundle's
//! last effect in a table of as many entries as the direction predictor has counters
//! (`[direction] entries`), indexed by the bundle's address with no tag: a bundle
//! whose entry holds nothing, or another bundle's effect, is predicted to leave the
//! frame alone. A call needs no prediction: the renamer has the caller's frame marker
//! when the call reaches it. When the branch resolves with its path predicted rightly,
//! each effect predicted wrongly counts (BE_BR_MISPRED_DETAIL: "counted only if there
//! are no path mispredictions") and the pipeline is flushed as for a mispredicted
//! branch.

use super::group::bundle_address;
use crate::stream::{BE_FRAME, BE_ROTATE, BE_STAGE};

/// A bundle's effect as the table keeps it: nothing; a loop branch's pass that counted
/// LC down, or its last; a return's restored frame, as its size plus one.
const NOTHING: u8 = 0;
const LOOP_COUNTED: u8 = 0xFE;
const LOOP_LAST: u8 = 0xFF;

fn is_loop(effect: u8) -> bool {
    effect >= LOOP_COUNTED
}

/// A loop branch's effect: LC counted down while the branch is taken, EC on its last
/// pass.
pub(super) fn loop_pass(taken: bool) -> u8 {
    if taken {
        LOOP_COUNTED
    } else {
        LOOP_LAST
    }
}

/// A return's effect: the caller's frame of `frame` stacked registers restored.
pub(super) fn restored(frame: u8) -> u8 {
    frame.min(LOOP_COUNTED - 2) + 1
}

/// The flags of what a prediction of `predicted` got wrong of `actual`: a loop
/// branch's stage unless the same pass was predicted, and its rotation unless a loop
/// pass was; a return's frame unless the same frame was predicted.
fn mispredicted(predicted: u8, actual: u8) -> u8 {
    if predicted == actual {
        NOTHING
    } else if is_loop(actual) {
        BE_STAGE | if is_loop(predicted) { 0 } else { BE_ROTATE }
    } else {
        BE_FRAME
    }
}

#[derive(Debug, Clone)]
pub(super) struct Renamer {
    effects: Vec<u8>,
    mask: usize,
    /// The entries written so far, in the order they were first: only loop branches'
    /// and returns' bundles write any, and an entry once written stays so.
    written: Vec<u32>,
}

impl Renamer {
    /// A table of `entries` (a power of two) bundles' effects, all nothing.
    pub(super) fn new(entries: u32) -> Renamer {
        Renamer { effects: vec![NOTHING; entries as usize], mask: entries as usize - 1, written: Vec::new() }
    }

    /// The bundle at `ip` resolved with effect `actual`: the flags of what its
    /// prediction got wrong (none when its path was mispredicted: the events count
    /// only beside a right path), and the table learns it.
    pub(super) fn resolve(&mut self, ip: u64, actual: u8, path_wrong: bool) -> u8 {
        let entry = (bundle_address(ip) / 16) as usize & self.mask;
        let predicted = std::mem::replace(&mut self.effects[entry], actual);
        if predicted == NOTHING {
            self.written.push(entry as u32);
        }
        if path_wrong {
            NOTHING
        } else {
            mispredicted(predicted, actual)
        }
    }

    /// What the comparison of states sees: the entries written, each with its place.
    /// Two states with the same entries written wrote them in the same order (one
    /// run's table only gains entries), so the order is no difference.
    pub(super) fn canonical(&self, out: &mut Vec<u64>) {
        out.push(self.written.len() as u64);
        out.extend(self.written.iter().map(|&i| u64::from(i) << 8 | u64::from(self.effects[i as usize])));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_loop_pass_mispredicts_its_stage_and_without_a_loop_prediction_its_rotation() {
        assert_eq!(mispredicted(loop_pass(true), loop_pass(true)), 0);
        assert_eq!(mispredicted(loop_pass(true), loop_pass(false)), BE_STAGE);
        assert_eq!(mispredicted(NOTHING, loop_pass(true)), BE_STAGE | BE_ROTATE);
        assert_eq!(mispredicted(restored(8), loop_pass(false)), BE_STAGE | BE_ROTATE);
        assert_eq!(mispredicted(restored(8), restored(8)), 0);
        assert_eq!(mispredicted(restored(8), restored(0)), BE_FRAME);
        assert_eq!(mispredicted(loop_pass(true), restored(0)), BE_FRAME);
    }

    #[test]
    fn the_table_learns_each_bundles_effect_and_counts_none_beside_a_wrong_path() {
        let mut r = Renamer::new(4);
        assert_eq!(r.resolve(0, loop_pass(true), false), BE_STAGE | BE_ROTATE);
        assert_eq!(r.resolve(0, loop_pass(true), false), 0);
        assert_eq!(r.resolve(0, loop_pass(false), true), 0, "a path mispredict counts nothing");
        assert_eq!(r.resolve(0, loop_pass(true), false), BE_STAGE, "but the table learned the last pass");
        // Bundle 4 (48 bytes of program on) shares bundle 0's entry: no tag.
        assert_eq!(r.resolve(4 * 12, restored(3), false), BE_FRAME);
        assert_eq!(r.resolve(0, loop_pass(true), false), BE_STAGE | BE_ROTATE);
    }
}
