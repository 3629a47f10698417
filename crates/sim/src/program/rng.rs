//! The workloads' deterministic randomness.

/// SplitMix64 (Steele, Lea and Flood, 2014), written out rather than taken from a
/// crate: a workload's program must never change, not with a dependency upgrade and
/// not across platforms. Only integer arithmetic is used, so every draw is
/// bit-identical everywhere.
#[derive(Debug, Clone)]
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` for `n >= 1`, by multiply-shift: no division, and a bias below
    /// n / 2^64 that no workload can notice.
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }

    pub fn chance(&mut self, per_mille: u64) -> bool {
        self.below(1000) < per_mille
    }

    /// Log-uniform in `lo..=hi` (`lo >= 1`): every power of two is equally likely, so
    /// most loops are short and a few run very long.
    pub fn log_range(&mut self, lo: u64, hi: u64) -> u64 {
        let bits = self.range(u64::from(lo.ilog2()), u64::from(hi.ilog2()));
        self.range(1 << bits, (2 << bits) - 1).clamp(lo, hi)
    }

    /// A second generator for choices a program gained after its seeds were in use:
    /// derived from this one's state without drawing from it, so every draw this one
    /// makes stays as it was (and with it every count measured before).
    pub fn side(&self, salt: u64) -> Rng {
        Rng(self.0 ^ salt)
    }

    /// `len` outcomes of which about `per_mille` in a thousand are taken.
    pub fn bits(&mut self, len: u8, per_mille: u64) -> u64 {
        (0..len).fold(0, |bits, i| bits | u64::from(self.chance(per_mille)) << i)
    }
}
