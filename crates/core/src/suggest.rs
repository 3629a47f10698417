//! "Did you mean …?": the names nearest a mistyped one, by Jaro-Winkler similarity.
//!
//! Every refusal of an unknown name computes them, against every name it could have
//! been (over a thousand for Montecito's events), so they are most of the cost of a
//! refused event string. A bound from the letters two names share skips, without
//! changing the answer, the candidates that cannot come close enough.

// Input reaches every line of this module: no panicking operation is allowed in it.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic))]

/// A candidate is suggested when its similarity (plus the containment bonus) is above
/// this.
const THRESHOLD: f64 = 0.7;
/// Added when one name contains the other (`L2_MISSES` for `MISSES`).
const CONTAINS_BONUS: f64 = 0.1;

/// Up to three names from `candidates` closest to `wanted`, case-insensitively, best
/// first (ties in name order).
pub fn nearest<'a>(wanted: &str, candidates: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    // Bytes, not chars: names are ASCII (table validation), and decoding UTF-8 inside
    // the similarity's quadratic loop doubled its cost.
    let wanted = wanted.to_ascii_uppercase().into_bytes();
    let mut letters = Letters::of(&wanted);
    let mut up = Vec::new();
    let mut scored: Vec<(f64, &str)> = Vec::new();
    for c in candidates {
        // A name less than half or more than twice as long as the token is never a
        // likely typo of it; skipping those keeps a long garbage token (10^5
        // characters) from costing a similarity against every name.
        if c.len() * 2 + 2 < wanted.len() || wanted.len() * 2 + 2 < c.len() {
            continue;
        }
        up.clear();
        up.extend(c.bytes().map(|b| b.to_ascii_uppercase()));
        let bound = jaro_bound(letters.common(&up), wanted.len(), up.len());
        // Containment is looked for only where it could decide: it costs a comparison
        // at every offset.
        if bound + CONTAINS_BONUS <= THRESHOLD {
            continue;
        }
        let bonus = if contains(&up, &wanted) || contains(&wanted, &up) { CONTAINS_BONUS } else { 0.0 };
        if bound + bonus <= THRESHOLD {
            continue;
        }
        let score = strsim::generic_jaro_winkler(&wanted, &up) + bonus;
        if score > THRESHOLD {
            scored.push((score, c));
        }
    }
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
    scored.dedup_by(|a, b| a.1 == b.1);
    scored.into_iter().take(3).map(|(_, c)| c).collect()
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    needle.is_empty() || haystack.windows(needle.len()).any(|w| w == needle)
}

/// The most Jaro similarity two strings of these lengths sharing `common` letters
/// (as multisets) can have: Jaro's matches are at most the shared letters and its
/// transposition term at most 1, and each term of it is monotone in the matches, in
/// floating point too, so a computed Jaro never exceeds this computed bound.
///
/// Jaro-Winkler is Jaro itself up to 0.7 (its prefix boost applies only above), so
/// `bound + bonus <= 0.7` means the candidate's score cannot pass the threshold
/// either. An empty string is left to the similarity itself.
fn jaro_bound(common: usize, a_len: usize, b_len: usize) -> f64 {
    if a_len == 0 || b_len == 0 {
        return 1.0;
    }
    let m = common as f64;
    (m / a_len as f64 + m / b_len as f64 + 1.0) / 3.0
}

/// How many times each byte occurs in the token: with a candidate's bytes, the size of
/// their multiset intersection, in one pass over the candidate.
struct Letters {
    count: [u32; 256],
    taken: Vec<u8>,
}

impl Letters {
    fn of(bytes: &[u8]) -> Letters {
        let mut count = [0u32; 256];
        for &b in bytes {
            if let Some(n) = count.get_mut(usize::from(b)) {
                *n = n.saturating_add(1);
            }
        }
        Letters { count, taken: Vec::new() }
    }

    /// The letters `other` shares with the token, each counted as often as both have
    /// it; the counts are restored before returning.
    fn common(&mut self, other: &[u8]) -> usize {
        self.taken.clear();
        for &b in other {
            if let Some(n) = self.count.get_mut(usize::from(b)).filter(|n| **n > 0) {
                *n -= 1;
                self.taken.push(b);
            }
        }
        for &b in &self.taken {
            if let Some(n) = self.count.get_mut(usize::from(b)) {
                *n += 1;
            }
        }
        self.taken.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The similarity of every plausible candidate, with no bound: what `nearest`
    /// answered before the bound, and must still answer.
    fn nearest_unbounded<'a>(wanted: &str, candidates: &[&'a str]) -> Vec<&'a str> {
        let wanted = wanted.to_ascii_uppercase().into_bytes();
        let mut scored: Vec<(f64, &str)> = candidates
            .iter()
            .filter(|c| c.len() * 2 + 2 >= wanted.len() && wanted.len() * 2 + 2 >= c.len())
            .map(|&c| {
                let up = c.to_ascii_uppercase().into_bytes();
                let mut score = strsim::generic_jaro_winkler(&wanted, &up);
                if contains(&up, &wanted) || contains(&wanted, &up) {
                    score += 0.1;
                }
                (score, c)
            })
            .filter(|(s, _)| *s > 0.7)
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
        scored.dedup_by(|a, b| a.1 == b.1);
        scored.into_iter().take(3).map(|(_, c)| c).collect()
    }

    #[test]
    fn typos_find_their_names() {
        let names = ["INSTR_EXEC", "L2_MISSES", "L2_REFERENCES", "CPU_CYCLES", "BR_MISPREDICT"];
        assert_eq!(nearest("instr_exe", names), ["INSTR_EXEC"]);
        assert_eq!(nearest("L2_MISES", names)[0], "L2_MISSES");
        assert_eq!(nearest("MISSES", names), ["L2_MISSES"], "contained in a name");
        assert!(nearest("QQQQQQ", names).is_empty());
    }

    #[test]
    fn shared_letters_are_counted_as_multisets_and_restored() {
        let mut letters = Letters::of(b"AAB");
        assert_eq!(letters.common(b"ABBA"), 3);
        assert_eq!(letters.common(b"ABBA"), 3, "the counts are back after each candidate");
        assert_eq!(letters.common(b"XYZ"), 0);
    }

    fn name() -> impl Strategy<Value = String> {
        // Letters from a small alphabet so that names share many of them.
        "[A-F_2][A-F_2a-c]{0,14}"
    }

    proptest! {
        #[test]
        fn the_bound_changes_no_answer(wanted in "[A-F_2a-c]{0,16}", names in prop::collection::vec(name(), 0..40)) {
            let candidates: Vec<&str> = names.iter().map(String::as_str).collect();
            prop_assert_eq!(nearest(&wanted, candidates.iter().copied()), nearest_unbounded(&wanted, &candidates));
        }

        #[test]
        fn the_bound_is_above_every_similarity(a in "[A-D]{0,12}", b in "[A-D]{0,12}") {
            let common = Letters::of(a.as_bytes()).common(b.as_bytes());
            let jaro = strsim::generic_jaro(&a.as_bytes().to_vec(), &b.as_bytes().to_vec());
            prop_assert!(jaro <= jaro_bound(common, a.len(), b.len()), "{} > bound", jaro);
        }
    }
}
