//! Register-level PMU models.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic))]

pub mod arm11;
pub mod kt;
pub mod montecito;
pub mod sun4v;
pub mod t4;
pub mod t4_dram;

/// What a model reports as unpredictable (programming the spec leaves undefined): the
/// first [`Reports::KEPT`] reports in full, the rest only counted, so that software
/// repeating an undefined access millions of times (an emulator's guest) cannot grow
/// the model without bound. Reads as the slice of the reports kept.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reports {
    kept: Vec<String>,
    more: u64,
}

impl Reports {
    pub const KEPT: usize = 64;

    pub fn push(&mut self, report: String) {
        if self.kept.len() < Self::KEPT {
            self.kept.push(report);
        } else {
            self.more = self.more.saturating_add(1);
        }
    }

    pub fn extend(&mut self, reports: impl IntoIterator<Item = String>) {
        for report in reports {
            self.push(report);
        }
    }

    /// Reports made after the first [`Reports::KEPT`].
    pub fn more(&self) -> u64 {
        self.more
    }

    /// The reports as notes for a run: those kept, and a line counting the rest.
    pub fn notes(&self) -> impl Iterator<Item = String> + '_ {
        let more = (self.more > 0).then(|| format!("{} more unpredictable operations like these (not listed)", self.more));
        self.kept.iter().cloned().chain(more)
    }
}

impl std::ops::Deref for Reports {
    type Target = [String];

    fn deref(&self) -> &[String] {
        &self.kept
    }
}
