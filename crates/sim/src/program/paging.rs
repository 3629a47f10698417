//! Demand paging: a stream of freshly mapped memory (`DataStream::fresh`) has no page
//! present until the program touches it. Whether a page is present is the program's
//! doing, the same on every machine: the first access that executes in a page maps
//! it (the machine takes the fault and the kernel maps the page), and an access
//! executes unless a skip passes over it. A speculative load that a compiler hoisted
//! above such a skip (Itanium's `ld.s`) executes in every iteration, but maps nothing:
//! it finds the page as the program left it.

use super::{Op, Pattern, Phase, PhaseError};

impl Phase {
    /// Whether the page that the access to fresh stream `stream` reads or writes in
    /// iteration `k` is present: some earlier iteration executed the access in the
    /// same page. Always true for a stream that is not fresh. `Phase::check` makes one
    /// instruction the fresh stream's only access, walking forward a page at most an
    /// iteration, without wrapping.
    pub fn present(&self, stream: u8, k: u64) -> bool {
        let Some(s) = self.streams.get(usize::from(stream)).filter(|s| s.fresh) else { return true };
        let Some(index) = self.body.iter().position(|op| op.access().is_some_and(|a| a.stream == stream)) else { return true };
        let step = s.stride.unsigned_abs().max(1);
        let page_of = |j: u64| s.position(j) / s.page;
        let page = page_of(k);
        // The iterations before `k` in the same page, latest first: one skip period of
        // them says whether any executed the access, as the skips repeat after it.
        let period = self.skip_period(index);
        let in_page = (s.position(k) % s.page) / step;
        (1..=in_page.min(period).min(k)).map(|back| k - back).any(|j| page_of(j) == page && self.executes(index, j))
    }

    /// Whether instruction `index` executes in iteration `k`: no skip that passes over
    /// it is taken.
    pub fn executes(&self, index: usize, k: u64) -> bool {
        !self.skips_over(index).any(|when| when.taken(k, self.iterations))
    }

    /// The patterns of the skips that pass over instruction `index`.
    fn skips_over(&self, index: usize) -> impl Iterator<Item = Pattern> + '_ {
        self.body.iter().take(index).enumerate().filter_map(move |(at, op)| match *op {
            Op::Skip { over, when } if at + usize::from(over) >= index => Some(when),
            _ => None,
        })
    }

    /// Iterations after which whether instruction `index` executes repeats.
    fn skip_period(&self, index: usize) -> u64 {
        self.skips_over(index).fold(1, |p, when| super::lcm(p, when.period()))
    }

    /// Iterations in which a fresh stream's position crosses a whole number of pages
    /// (1 for a phase without one): when the pages its accesses map repeat.
    pub(super) fn paging_period(&self) -> u64 {
        self.streams.iter().filter(|s| s.fresh && s.stride > 0).fold(1, |p, s| super::lcm(p, s.page / s.stride as u64))
    }

    /// `Phase::check`'s rules for fresh streams: what makes `present` exact.
    pub(super) fn check_fresh(&self) -> Result<(), PhaseError> {
        for (stream, s) in self.streams.iter().enumerate().filter(|(_, s)| s.fresh) {
            let fault = |why| Err(PhaseError::Fresh { stream, why });
            if s.stride <= 0 || s.page % s.stride as u64 != 0 {
                return fault("must move forward by a whole fraction of its page each iteration");
            }
            if self.iterations.saturating_mul(s.stride as u64) > s.footprint {
                return fault("must not wrap within the phase's iterations (its footprint holds them all)");
            }
            let mut accesses = self.body.iter().filter(|op| op.access().is_some_and(|a| usize::from(a.stream) == stream));
            let one = accesses.next().filter(|op| !matches!(op, Op::Prefetch(_))).is_some() && accesses.next().is_none();
            if !one || self.dma.iter().any(|d| usize::from(d.stream) == stream) {
                return fault("must be accessed by exactly one instruction, no prefetch, and no device transfer");
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::build::Body;
    use crate::program::{Access, DataStream, Memory};
    use crate::stream::Privilege;

    /// A phase that tests a flag (`when`) and skips a load from a fresh stream of
    /// `stride`-byte records in 4 KB pages.
    fn phase(stride: i64, when: Pattern, iterations: u64) -> Phase {
        let mut b = Body::new(Privilege::USER, 1, 0x1_0000);
        let file = b.stream(DataStream {
            stride,
            footprint: 1 << 20,
            page: 4 << 10,
            fresh: true,
            ..DataStream::fixed(0x10_0000, Memory::Cacheable)
        });
        b.skip(2, when).load(file, 0, 4, true).int(1);
        b.close_loop(iterations)
    }

    #[test]
    fn the_first_access_that_executes_in_a_page_maps_it() {
        // 1 KB records: four to a page.
        let p = phase(1024, Pattern::Never, 16);
        let absent: Vec<u64> = (0..16).filter(|&k| !p.present(0, k)).collect();
        assert_eq!(absent, vec![0, 4, 8, 12]);
        // Skipped in iterations 0-1 and 4-6 (bits 0, 1, 4, 5, 6 of a pattern of 8):
        // their pages stay absent until an iteration runs the load.
        let p = phase(1024, Pattern::Bits { bits: 0b0111_0011, len: 8 }, 16);
        let absent: Vec<u64> = (0..16).filter(|&k| !p.present(0, k)).collect();
        assert_eq!(absent, vec![0, 1, 2, 4, 5, 6, 7, 8, 9, 10, 12, 13, 14, 15]);
        assert!(!p.executes(1, 0) && p.executes(1, 2) && !p.executes(2, 4) && p.executes(0, 4));
    }

    #[test]
    fn a_stream_that_is_not_fresh_is_always_present() {
        let mut p = phase(1024, Pattern::Never, 16);
        p.streams[0].fresh = false;
        assert!((0..16).all(|k| p.present(0, k)));
        assert_eq!(p.paging_period(), 1);
    }

    #[test]
    fn fresh_streams_walk_forward_once_through_one_instruction() {
        let ok = phase(1024, Pattern::Never, 16);
        assert_eq!(ok.check_fresh(), Ok(()));
        assert_eq!(ok.paging_period(), 4);
        let mut back = ok.clone();
        back.streams[0].stride = -1024;
        let mut wraps = ok.clone();
        wraps.iterations = 2000;
        let mut twice = ok.clone();
        twice.body.insert(2, Op::Load(Access { stream: 0, offset: 8, size: 4, use_next: false }));
        for (p, why) in [(back, "forward"), (wraps, "wrap"), (twice, "exactly one")] {
            let e = p.check_fresh().unwrap_err();
            assert!(matches!(e, PhaseError::Fresh { stream: 0, .. }) && e.to_string().contains(why), "{e}");
        }
    }
}
