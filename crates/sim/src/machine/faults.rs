//! Fault injection (`pmu stat --fault-rate`): every `every`-th access to a structure
//! raises an error, the kinds of error the structure can have taking turns (ERRATA
//! MARM7, MMC26). Deterministic, so runs stay reproducible and skipping stays exact.

/// One structure's countdown to its next error, and which kind comes next.
#[derive(Debug, Clone, Copy)]
pub struct Countdown {
    every: u64,
    left: u64,
    turn: usize,
}

impl Countdown {
    pub fn new(every: u64) -> Countdown {
        Countdown { every, left: every, turn: 0 }
    }

    /// One more access: the kind of error it raises, of `kinds` in turn, if it is the
    /// one.
    pub fn access<T: Copy>(&mut self, kinds: &[T]) -> Option<T> {
        self.left -= 1;
        if self.left > 0 {
            return None;
        }
        self.left = self.every;
        let kind = kinds[self.turn % kinds.len()];
        self.turn = (self.turn + 1) % kinds.len();
        Some(kind)
    }

    /// Its state: accesses left, and whose turn it is.
    pub fn canonical(&self, out: &mut Vec<u64>) {
        out.extend([self.left, self.turn as u64]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_nth_access_errs_and_the_kinds_take_turns() {
        let mut c = Countdown::new(3);
        let errors: Vec<Option<char>> = (0..9).map(|_| c.access(&['a', 'b'])).collect();
        assert_eq!(errors, [None, None, Some('a'), None, None, Some('b'), None, None, Some('a')]);
    }
}
