//! The precomputed encoder (`pmukit_arch::encoder`) answers every string exactly as
//! resolving it and `encode_set` do: the same registers, or the same error.

use pmukit_arch::encoder::{Encoder, EncoderError};
use pmukit_arch::{encode_set, Catalog};
use proptest::prelude::*;
use std::sync::LazyLock;

static CATALOG: LazyLock<Catalog> = LazyLock::new(Catalog::builtin);
static ENCODERS: LazyLock<Vec<Encoder<'static>>> = LazyLock::new(|| PMUS.iter().map(|p| Encoder::new(&CATALOG, p).unwrap()).collect());

/// What `pmu encode` makes of `text` alone on `pmu`: registers, or the error's text.
fn reference(catalog: &Catalog, pmu: &str, text: &str) -> Result<Vec<(&'static str, u64)>, String> {
    let p = catalog.pmu(pmu).unwrap();
    let sel = catalog.resolve(text, pmu).map_err(|e| EncoderError::from(e).to_string())?;
    encode_set(p, std::slice::from_ref(&sel)).map(|s| s.registers).map_err(|e| EncoderError::from(e).to_string())
}

fn fast(encoder: &Encoder, text: &str) -> Result<Vec<(&'static str, u64)>, String> {
    encoder.encode(text).map(|r| r.into_owned()).map_err(|e| e.to_string())
}

/// Every name a selection string may start from: each event, and each event with each
/// of its unit masks, of every PMU.
fn names(catalog: &Catalog, pmu: &str) -> Vec<String> {
    let p = catalog.pmu(pmu).unwrap();
    p.events()
        .flat_map(|e| std::iter::once(e.name.to_string()).chain(e.umasks.iter().map(move |u| format!("{}.{}", e.name, u.name))))
        .collect()
}

#[test]
fn every_selection_of_every_pmu_is_encoded_in_advance_as_the_reference_encodes_it() {
    let catalog = Catalog::builtin();
    let mut ahead = 0;
    for p in &catalog.pmus {
        let encoder = Encoder::new(&catalog, p.name()).unwrap();
        for name in names(&catalog, p.name()) {
            for text in [name.clone(), name.to_ascii_lowercase(), format!("{}::{name}", p.name())] {
                assert_eq!(fast(&encoder, &text), reference(&catalog, p.name(), &text), "{}: {text}", p.name());
            }
        }
        ahead += encoder.len();
    }
    // Every selection `pmu list` shows that encodes on its own (900 over the seven
    // PMUs; Niagara's are programmed by hypercall and encode too).
    assert!(ahead >= 900, "only {ahead} selections encoded in advance");
}

const PMUS: &[&str] = &["arm1176", "arm1136", "arm1156", "sparc-t4", "sparc-t4-dram", "niagara", "sparc-kt", "sparc-kt-dram", "montecito"];

proptest! {
    #![proptest_config(ProptestConfig { cases: 2_000, ..ProptestConfig::default() })]

    /// Strings near the selection names: any case, any PMU's prefix, a modifier or
    /// garbage after, cut anywhere.
    #[test]
    fn the_encoder_answers_every_string_as_the_reference_does(
        pmu in prop::sample::select(PMUS),
        other in prop::sample::select(PMUS),
        pick in any::<prop::sample::Index>(),
        case in any::<u64>(),
        prefix in 0..4u8,
        suffix in prop::sample::select(&["", ":u", ":k=0", ":thresh=3", ":", ".", "X", " ", ".ALL", "::"][..]),
        cut in any::<prop::sample::Index>(),
        cut_it in any::<bool>(),
    ) {
        let catalog = &*CATALOG;
        let encoder = ENCODERS.iter().find(|e| e.pmu().name() == pmu).unwrap();
        let list = names(catalog, pmu);
        let name: String = pick.get(&list).chars().enumerate()
            .map(|(i, c)| if case >> (i % 64) & 1 == 1 { c.to_ascii_lowercase() } else { c })
            .collect();
        let head = match prefix {
            0 => String::new(),
            1 => format!("{pmu}::"),
            2 => format!("{}::", pmu.to_ascii_uppercase()),
            _ => format!("{other}::"),
        };
        let mut text = format!("{head}{name}{suffix}");
        if cut_it {
            let at = cut.index(text.len() + 1);
            text.truncate(at);
        }
        prop_assert_eq!(fast(encoder, &text), reference(catalog, pmu, &text), "{}: {:?}", pmu, text);
    }
}

#[test]
fn an_unknown_pmu_has_no_encoder() {
    let catalog = Catalog::builtin();
    let err = Encoder::new(&catalog, "arm1177").err().unwrap();
    assert!(err.to_string().contains("unknown PMU 'arm1177'"), "{err}");
}
