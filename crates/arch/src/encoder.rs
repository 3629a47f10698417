//! Encoding at lookup speed, for programs that encode event strings in loops (a
//! profiler's or a test harness's, as libpfm4's `pfm_get_os_event_encoding` is used).
//!
//! Resolving an event string builds an `EventSel` that owns its text, names and
//! modifiers, and encoding it schedules and names the set: a microsecond or two a
//! string. But almost every string such a program encodes is one of the selections the
//! table names (`INSTR_EXEC`, `BE_L1D_FPU_BUBBLE.L1D_DCURECIR`), and a selection's
//! registers depend only on the table in force. An [`Encoder`] encodes each of them
//! once, through [`crate::encode_set`] itself, and afterwards finds them by name in a
//! hash map; every other string (modifiers, aliases, unit-mask combinations, raw
//! codes, errors) takes the same path `pmu encode` does. So there is one encoding,
//! and the map only remembers its answers.

use std::borrow::Cow;

use hashbrown::HashTable;
use pmukit_core::event_string::EventError;
use pmukit_core::pmu::Pmu;
use thiserror::Error;

use crate::{encode_set, Catalog, CatalogError, EncodeError};

/// The register values that count one event string on its PMU's first counter that
/// takes it, as [`crate::EncodedSet::registers`] lists them.
pub type Registers = [(&'static str, u64)];

/// Why an event string does not encode: it does not resolve, or its event cannot be
/// programmed.
#[derive(Debug, Clone, Error)]
pub enum EncoderError {
    #[error(transparent)]
    Event(#[from] EventError),
    #[error(transparent)]
    Encode(#[from] EncodeError),
}

/// One PMU's selections, encoded in advance.
pub struct Encoder<'c> {
    catalog: &'c Catalog,
    pmu: &'c Pmu,
    /// Each selection's name, bare and behind `PMU::`, with its registers.
    encodings: HashTable<Encoded>,
}

struct Encoded {
    key: Key,
    /// The key's hash, kept for the table to grow by.
    hash: u64,
    registers: Box<Registers>,
}

/// Names longer than this are not looked up (the longest selection, with its PMU's
/// prefix, is 66 bytes): they take the resolving path.
const KEY_WORDS: usize = 9;

/// A name in upper case (names match case-insensitively), eight bytes to a word, the
/// last word padded with zeros: compared and hashed a word at a time.
struct Key {
    len: usize,
    /// In the entry itself, not behind a pointer: a lookup reads one place less.
    words: [u64; KEY_WORDS],
}

/// Each byte of `w` in ASCII upper case, as `u8::to_ascii_uppercase` makes it, all
/// eight at once: a byte whose low seven bits are at least `a` and at most `z` and
/// whose top bit is clear loses bit 5.
fn upper(w: u64) -> u64 {
    const LOW7: u64 = 0x7F7F_7F7F_7F7F_7F7F;
    const TOP: u64 = 0x8080_8080_8080_8080;
    let seven = w & LOW7;
    // Adding 0x80 - c to a seven-bit byte sets its top bit exactly when it is >= c.
    let at_least_a = seven + 0x1F1F_1F1F_1F1F_1F1F;
    let above_z = seven + 0x0505_0505_0505_0505;
    let lower = at_least_a & !above_z & !w & TOP;
    w - (lower >> 2)
}

/// `text` as a key's words in `buf`, with its hash; `None` when it is too long to be a
/// name.
fn words<'b>(text: &[u8], buf: &'b mut [u64; KEY_WORDS]) -> Option<(&'b [u64], u64)> {
    const K: u64 = 0xF135_7AEA_2E62_A9C5;
    let words = buf.get_mut(..text.len().div_ceil(8))?;
    let mut chunks = text.chunks_exact(8);
    // Whole words are read as they are. The last, short one is the eight bytes that end
    // the text shifted down (no copy of a variable length); only a text shorter than a
    // word is copied.
    let rest = chunks.remainder().len();
    let last = match text.len().checked_sub(8).and_then(|at| text.get(at..)) {
        Some(tail) if rest > 0 => u64::from_le_bytes(tail.try_into().unwrap_or_default()) >> (8 * (8 - rest)),
        _ => {
            let mut short = [0u8; 8];
            short[..rest].copy_from_slice(chunks.remainder());
            u64::from_le_bytes(short)
        }
    };
    // Each word turned by its position and summed: no word waits on the one before,
    // as it would in a chain of multiplications.
    let mut sum = text.len() as u64;
    for (i, w) in words.iter_mut().enumerate() {
        let word = chunks.next().map_or(last, |c| u64::from_le_bytes(c.try_into().unwrap_or_default()));
        *w = upper(word);
        sum = sum.wrapping_add(w.rotate_left(7 * i as u32));
    }
    // The table picks buckets by the low bits: fold the multiplication's high ones in.
    let h = sum.wrapping_mul(K);
    Some((words, h ^ h >> 29))
}

impl<'c> Encoder<'c> {
    /// Encodes every selection of `pmu`'s table in force in `catalog` (each event, and
    /// each unit mask of an event that has them) that encodes on its own. Costs what
    /// encoding them one by one costs (about 1.5 ms for Montecito's 645).
    pub fn new(catalog: &'c Catalog, pmu: &str) -> Result<Encoder<'c>, CatalogError> {
        let pmu = catalog.pmu(pmu)?;
        let mut encodings = HashTable::new();
        let mut buf = [0u64; KEY_WORDS];
        for name in pmu.selections() {
            let Ok(sel) = catalog.resolve(&name, pmu.name()) else { continue };
            let Ok(set) = encode_set(pmu, std::slice::from_ref(&sel)) else { continue };
            for text in [format!("{}::{name}", pmu.name()), name] {
                let Some((words, hash)) = words(text.as_bytes(), &mut buf) else { continue };
                let mut key = Key { len: text.len(), words: [0; KEY_WORDS] };
                key.words[..words.len()].copy_from_slice(words);
                let registers = set.registers.clone().into_boxed_slice();
                encodings.insert_unique(hash, Encoded { key, hash, registers }, |e| e.hash);
            }
        }
        Ok(Encoder { catalog, pmu, encodings })
    }

    pub fn pmu(&self) -> &'c Pmu {
        self.pmu
    }

    /// How many names are encoded in advance (each selection's, bare and behind its
    /// PMU's prefix).
    pub fn len(&self) -> usize {
        self.encodings.len()
    }

    pub fn is_empty(&self) -> bool {
        self.encodings.is_empty()
    }

    /// The registers that count `text` alone on this PMU: exactly what resolving it
    /// (this PMU when it names none) and [`crate::encode_set`] give, or their error.
    pub fn encode(&self, text: &str) -> Result<Cow<'_, Registers>, EncoderError> {
        if let Some(registers) = self.lookup(text.as_bytes()) {
            return Ok(Cow::Borrowed(registers));
        }
        let sel = self.catalog.resolve(text, self.pmu.name())?;
        Ok(Cow::Owned(encode_set(self.pmu, std::slice::from_ref(&sel))?.registers))
    }

    /// The registers of a selection named as the table names it, in any case, with or
    /// without this PMU's prefix.
    fn lookup(&self, text: &[u8]) -> Option<&Registers> {
        let mut buf = [0u64; KEY_WORDS];
        let (words, hash) = words(text, &mut buf)?;
        // Equal lengths make equal numbers of words; compared in line, not by `memcmp`.
        let same = |e: &&Encoded| e.key.len == text.len() && e.key.words.iter().zip(words).all(|(a, b)| a == b);
        self.encodings.find(hash, |e| same(&e)).map(|e| &*e.registers)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn upper_is_to_ascii_uppercase_of_each_byte(w in any::<u64>(), byte in any::<u8>(), at in 0..8usize) {
            // Every byte value in every position, beside arbitrary neighbours.
            let mut bytes = w.to_le_bytes();
            bytes[at] = byte;
            let expect = bytes.map(|b| b.to_ascii_uppercase());
            prop_assert_eq!(upper(u64::from_le_bytes(bytes)).to_le_bytes(), expect);
        }
    }

    /// The fast path answers every selection in any spelling: a key or hash computed
    /// wrongly would not give a wrong encoding (a miss takes the resolving path) but
    /// would lose the speed, so the lookups themselves are checked.
    #[test]
    fn every_selection_is_found_by_name_in_any_case_with_or_without_its_prefix() {
        let catalog = Catalog::builtin();
        for p in &catalog.pmus {
            let encoder = Encoder::new(&catalog, p.name()).unwrap();
            for name in p.selections() {
                if catalog.resolve(&name, p.name()).ok().and_then(|sel| encode_set(p, std::slice::from_ref(&sel)).ok()).is_none() {
                    continue;
                }
                for text in [
                    name.clone(),
                    name.to_ascii_lowercase(),
                    format!("{}::{name}", p.name()),
                    format!("{}::{name}", p.name()).to_ascii_uppercase(),
                ] {
                    assert!(encoder.lookup(text.as_bytes()).is_some(), "{}: {text} missed", p.name());
                }
            }
        }
    }

    #[test]
    fn every_selection_name_fits_a_key() {
        let catalog = Catalog::builtin();
        for p in &catalog.pmus {
            for e in p.events() {
                let umask = e.umasks.iter().map(|u| u.name.len() + 1).max().unwrap_or(0);
                let longest = p.name().len() + 2 + e.name.len() + umask;
                assert!(longest <= KEY_WORDS * 8, "{}: {} is {longest} bytes", p.name(), e.name);
            }
        }
    }
}
