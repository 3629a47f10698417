//! How Montecito's dispersal events charge a cycle's syllables (§4.4, Table 4-126,
//! ERRATA MD38): the syllables of its two-bundle window that it did not disperse, by
//! reason, charged as the hardware charges a stop, by the bundle it is in, and the
//! overcount that charge makes (SYLL_OVERCOUNT).
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic))]

use super::cycle::Cycle;
use crate::stream::Signal;

/// SYLL_NOT_DISPERSED's reasons, as its unit mask's bits (Table 4-126); SYLL_OVERCOUNT
/// uses the first two (Table 4-127).
pub(super) const SYLL_EXPL: u8 = 0b0001;
pub(super) const SYLL_IMPL: u8 = 0b0010;
pub(super) const SYLL_FE: u8 = 0b0100;
pub(super) const SYLL_MLX: u8 = 0b1000;

/// Syllables Montecito disperses per cycle: two bundles of three (§4.4).
const WIDTH: u64 = 6;

/// SYLL_NOT_DISPERSED's Max Inc/Cyc (Table 4-42): a stop's charge is cut to keep a
/// cycle's charges within it (MD11) before the overcount is taken.
const MAX_CHARGED: u64 = 5;

/// A cycle's charges by reason (EXPL, IMPL, FE, MLX, in `SYLL_*` order) and the
/// overcount among the EXPL and IMPL ones.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Charges {
    by_reason: [(u8, u64); 4],
    overcount: (u8, u64),
}

impl Charges {
    /// What a cycle is charged: nothing when it dispersed nothing (DISP_STALLED's).
    /// Its lost syllables (6 − dispersed) are, in order, the slots a re-steer skipped
    /// (MLX, MMC60), the slots its window starts past after a group that stopped
    /// inside a bundle (the bucket of that stop), three per unreached bundle (FE), and
    /// the rest. When the group ended at a stop (EXPL: architected; IMPL: a third load
    /// or store, a branch's bundle), the stop is charged by where it is in the window,
    /// as Table 4-126 charges one: 6 inside the first bundle, 3 at its end or inside
    /// the second, none at the second's end, within the cycle's 5. Otherwise the rest
    /// is IMPL's.
    pub(super) fn of(c: &Cycle) -> Charges {
        let dispersed = c.get(Signal::Instructions);
        if dispersed == 0 {
            return Charges::default();
        }
        let lost = WIDTH.saturating_sub(dispersed);
        let mlx = c.get(Signal::ResteerSyllables).min(lost);
        let lead = c.get(Signal::LeadingSyllables).min(lost - mlx);
        let fe = (3 * c.get(Signal::UnreachedBundles)).min(lost - mlx - lead);
        let rest = lost - mlx - lead - fe;
        let explicit = c.get(Signal::ExplicitStops) > 0;
        let stopped = explicit || c.get(Signal::ImplicitStops) > 0;
        // Where dispersal stopped: the window's syllables up to it.
        let at = WIDTH - rest;
        let hit = match at {
            _ if !stopped => rest,
            1 | 2 => 6,
            3..=5 => 3,
            _ => 0,
        };
        // Within the cycle's Max Inc/Cyc, so that the reasons add up to ALL; never
        // below what the stop cost (`rest` fits: at least one syllable dispersed).
        let charged = hit.min(MAX_CHARGED.saturating_sub(mlx + lead + fe)).max(rest);
        let (lead_expl, lead_impl) = if c.get(Signal::LeadingExplicit) > 0 { (lead, 0) } else { (0, lead) };
        let (expl, impl_) = if explicit { (lead_expl + charged, lead_impl) } else { (lead_expl, lead_impl + charged) };
        let over = charged - rest;
        let stop = if explicit { SYLL_EXPL } else { SYLL_IMPL };
        Charges { by_reason: [(SYLL_EXPL, expl), (SYLL_IMPL, impl_), (SYLL_FE, fe), (SYLL_MLX, mlx)], overcount: (stop, over) }
    }

    /// SYLL_NOT_DISPERSED with the reasons `mask` selects.
    pub(super) fn charged(&self, mask: u8) -> u64 {
        self.by_reason.iter().filter(|&&(bit, _)| mask & bit != 0).map(|&(_, n)| n).sum()
    }

    /// SYLL_OVERCOUNT with the buckets `mask` selects.
    pub(super) fn overcount(&self, mask: u8) -> u64 {
        let (bit, n) = self.overcount;
        if mask & bit != 0 {
            n
        } else {
            0
        }
    }
}
