//! Montecito branches (§2.1.2, §4.7): the direction predictor's path predictions,
//! forced "predicted not taken" predictions behind a wrongly taken branch of a bundle
//! (ERRATA MD40), predicated returns and indirect jumps (MMC40, MMC41), and what a
//! branch does to its issue group and to fetch.

use super::group::{bundle_address, fe_stall, slot, Group, Port};
use super::renamer;
use super::Montecito;
use super::{Out, Signals};
use crate::program::INSN;
use crate::stream::{Branch, Detail, Signal};
use pmukit_arch::montecito::etb::BranchKind;

/// Whether a conditional branch's prediction signals say its path was mispredicted.
pub(super) fn is_wrong(s: Signals) -> bool {
    s.get(Signal::PathMispredictsTaken) + s.get(Signal::PathMispredictsNotTaken) > 0
}

/// The signals of a kind of predicated branch: those whose predicate was false, those
/// predicted not taken and taken, those predicted taken and not, and those forced to
/// "predicted not taken" that were not taken.
struct Predicated {
    not_taken: Signal,
    mispredicts_taken: Signal,
    mispredicts_not_taken: Signal,
    unknown_not_taken: Signal,
}

/// Predicated returns (MMC40).
const RETURN: Predicated = Predicated {
    not_taken: Signal::ReturnsNotTaken,
    mispredicts_taken: Signal::ReturnMispredictsTaken,
    mispredicts_not_taken: Signal::ReturnMispredictsNotTaken,
    unknown_not_taken: Signal::UnknownReturnsNotTaken,
};

/// Predicated indirect jumps (MMC41).
const INDIRECT: Predicated = Predicated {
    not_taken: Signal::IndirectNotTaken,
    mispredicts_taken: Signal::IndirectMispredictsTaken,
    mispredicts_not_taken: Signal::IndirectMispredictsNotTaken,
    unknown_not_taken: Signal::UnknownIndirectNotTaken,
};

impl Montecito {
    /// A return predicated on a condition (`(p) br.ret`, MMC40) at `ip`, `taken` or
    /// not: its predicate is predicted like a conditional branch's, and taken, its
    /// target by the return stack, which a predicated-off return leaves as it is.
    pub(super) fn predicated_return(&mut self, ip: u64, taken: bool, to: u64, g: &mut Group, out: &mut Out) {
        let base = self.rse_registers().with(Signal::Returns, 1);
        let (mut s, wrong) = self.predicated(ip, taken, &RETURN, base, |m| {
            let target = m.return_stacks[m.thread].pop();
            (Signal::ReturnsMispredicted, target != Some(to))
        });
        if taken {
            s.set(Signal::BackEndMispredicts, self.restore_frame(ip, wrong));
        }
        self.branch(g, out, ip, s, taken, wrong, if taken { to } else { ip.wrapping_add(INSN) });
        if taken {
            self.rse_return(out);
        }
    }

    /// An indirect jump predicated on a condition (`(p) br.cond b6`, MMC41) at `ip`,
    /// `taken` (to `target`) or not: its predicate is predicted like a conditional
    /// branch's, and taken, its target by the indirect predictor, which learns only
    /// from jumps that are taken.
    pub(super) fn predicated_jump(&mut self, ip: u64, taken: bool, target: u64, g: &mut Group, out: &mut Out) {
        let base = Signals::default().with(Signal::IndirectBranches, 1);
        let (s, wrong) = self.predicated(ip, taken, &INDIRECT, base, |m| {
            let predicted = m.indirect.resolve(ip, true, target).map(|e| e.target);
            (Signal::IndirectMispredicts, predicted != Some(target))
        });
        self.branch(g, out, ip, s, taken, wrong, target);
    }

    /// What a predicated branch of `kind` at `ip` signals, `taken` or not, and whether
    /// it was mispredicted: its predicate is predicted by the direction predictor (not
    /// at all when an earlier branch of its bundle forces it, §4.7); taken, and
    /// predicted so, `target` says which signal a wrong target counts and whether the
    /// target was wrong (only a taken branch consults its target predictor).
    fn predicated(
        &mut self,
        ip: u64,
        taken: bool,
        kind: &Predicated,
        base: Signals,
        target: impl FnOnce(&mut Self) -> (Signal, bool),
    ) -> (Signals, bool) {
        let forced = self.forced(ip);
        let predicted = !forced && self.direction.predict(ip);
        self.direction.update(ip, taken);
        self.forced = (!taken && (predicted || forced)).then_some(ip);
        let mut s = base;
        let wrong = if taken {
            let (signal, wrong_target) = target(self);
            if forced {
                s.set(Signal::UnknownPredTaken, 1);
                true
            } else if !predicted {
                s.set(kind.mispredicts_taken, 1);
                true
            } else {
                s.set(signal, u8::from(wrong_target));
                wrong_target
            }
        } else {
            s.set(kind.not_taken, 1);
            if forced {
                s.set(kind.unknown_not_taken, 1);
            }
            s.set(kind.mispredicts_not_taken, u8::from(predicted));
            predicted
        };
        (s, wrong)
    }

    /// A taken return at `ip` restores its caller's frame: the flags of the front
    /// end's prediction of it (MD61), none when its path was `wrong`.
    pub(super) fn restore_frame(&mut self, ip: u64, wrong: bool) -> u8 {
        let frames = &self.rse[self.thread].frames;
        let caller = frames.len().checked_sub(2).map_or(0, |i| frames[i]);
        self.renamer.resolve(ip, renamer::restored(caller), wrong)
    }

    /// Whether the branch at `ip` is one the front end never predicted: a later
    /// branch of the bundle whose earlier branch was predicted taken and was not
    /// (§4.7: "all the higher number ports are forced to a predicted not taken mode").
    pub(super) fn forced(&self, ip: u64) -> bool {
        self.forced.is_some_and(|at| bundle_address(at) == bundle_address(ip) && ip > at)
    }

    /// For an always-taken branch (call, return, indirect jump) at `ip`: when it was
    /// forced to "predicted not taken", the signals of that unknown, wrong prediction.
    /// A taken branch leaves no later branch of its bundle to force.
    pub(super) fn forced_taken(&mut self, ip: u64) -> Option<Signals> {
        let forced = self.forced(ip);
        self.forced = None;
        forced.then(|| Signals::default().with(Signal::UnknownPredTaken, 1))
    }

    /// An IP-relative conditional branch's path prediction: the signals of a wrong
    /// one (BR_PATH_PRED) and of one never made (a forced "not taken", §4.7); the
    /// predictor learns the outcome.
    pub(super) fn predict_path(&mut self, ip: u64, taken: bool) -> Signals {
        let forced = self.forced(ip);
        let predicted = !forced && self.direction.predict(ip);
        self.direction.update(ip, taken);
        // This branch, predicted taken and not, or forced and not taken, forces the
        // rest of its bundle.
        self.forced = (!taken && (predicted || forced)).then_some(ip);
        let mut s = match (predicted == taken, taken) {
            (true, _) => Signals::default(),
            (false, true) => Signals::default().with(Signal::PathMispredictsTaken, 1),
            (false, false) => Signals::default().with(Signal::PathMispredictsNotTaken, 1),
        };
        if forced {
            s.set(if taken { Signal::UnknownPredTaken } else { Signal::UnknownPredNotTaken }, 1);
        }
        s
    }

    /// A branch joins the group; taken, it ends it; mispredicted, the pipeline flushes.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn branch(&mut self, g: &mut Group, out: &mut Out, ip: u64, s: Signals, taken: bool, wrong: bool, target: u64) {
        self.join(g, out, ip, Port::None);
        g.signals.bump(Signal::Branches);
        // A branch in a bundle's first slot (a BBB's) is on B0, and makes the group's
        // branches, which its bundle holds, encoded (MD41).
        if slot(ip) == 0 || g.signals.get(Signal::EncodedBranches) > 0 {
            g.signals.bump(Signal::EncodedBranches);
        }
        for (signal, on) in [(Signal::BranchesTaken, taken), (Signal::BranchMispredicts, wrong)] {
            if on {
                g.signals.bump(signal);
            }
        }
        g.signals.add(&s);
        let resteer = taken && !wrong && {
            // A taken branch predicted so: the fetch pair after it is unreached, and so
            // is the target pair's first bundle when the target is its second (§4.15
            // FE_LOST_BW); without the zero-bubble predictor's entry, fetch resteers.
            let unreached = u8::from(bundle_address(ip) & 16 == 0) + u8::from(bundle_address(target) & 16 != 0);
            g.signals.set(Signal::UnreachedBundles, unreached);
            let hit = self.zero_bubble.resolve(ip, true, target).is_some_and(|e| e.target == target);
            !hit
        };
        let outcome = Branch { target, taken, mispredicted: wrong };
        // The branch's own signals say what it was and what its prediction got wrong.
        let path = [
            Signal::PathMispredictsTaken,
            Signal::PathMispredictsNotTaken,
            Signal::ReturnMispredictsTaken,
            Signal::ReturnMispredictsNotTaken,
            Signal::IndirectMispredictsTaken,
            Signal::IndirectMispredictsNotTaken,
            Signal::UnknownPredTaken,
            Signal::UnknownPredNotTaken,
        ];
        let branch_kind = if s.get(Signal::Returns) > 0 {
            BranchKind::Return
        } else if s.get(Signal::IndirectBranches) > 0 {
            BranchKind::Indirect
        } else {
            BranchKind::IpRelative
        };
        let path_mispredicted = wrong && path.iter().any(|&p| s.get(p) > 0);
        // The frame's effects mispredicted beside a right path (MD61): the back end
        // flushes the bundles renamed after it, as for a mispredict.
        let refetch = wrong || s.get(Signal::BackEndMispredicts) > 0;
        self.ip = if taken { target } else { ip.wrapping_add(INSN) };
        g.branch = Some(outcome);
        g.detail = Detail { branch_ip: ip, branch_kind, path_mispredicted, ..g.detail };
        if taken || refetch {
            // The group, which the branch joined, issues with it; the stream that was
            // running asks in its cycle, before a taken branch redirects it.
            self.close(g, out);
        } else {
            // Dispersal splits after a bundle that holds a branch (MMC64).
            g.split = Some(bundle_address(ip));
        }
        if taken {
            self.redirect(target, s.get(Signal::Calls) + s.get(Signal::Returns) > 0);
        }
        if refetch {
            out.stall(ip, self.cfg.mispredict_cycles, None);
            // Fetch resumes at the right path: the target, or the slot after a branch
            // wrongly predicted taken.
            g.resteered = true;
        } else if resteer {
            fe_stall(out, target, self.cfg.resteer_cycles, Signals::default(), Signal::ResteerBubbleCycles);
        }
    }
}
