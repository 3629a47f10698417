//! Encoding and decoding speed, per PMU, over its whole event list.
//!
//! `encode` takes every selection `pmu list` offers (each event, and each of its
//! unit masks) as a string, resolves it and computes the register values that
//! count it on its first counter: what `pmu encode` does per event, and what
//! libpfm4's `pfm_get_os_event_encoding` does. `encoder` answers the same strings
//! through an `Encoder` (the selections encoded in advance, found by name), and
//! `encoder_new` is what building one costs. `decode` turns each of those register
//! values back into fields. The baseline reads the same strings byte by byte (a sum
//! of their bytes), so its ratio carries over between machines.
//!
//! Run: `cargo bench -p pmukit-arch --bench encode`

use pmukit_arch::encoder::Encoder;
use pmukit_arch::{decode, encode_set, Catalog};

fn main() {
    divan::main();
}

const PMUS: &[&str] = &["arm1176", "sparc-t4", "sparc-t4-dram", "niagara", "sparc-kt", "sparc-kt-dram", "montecito"];
/// Niagara's MMU statistics are programmed by hypercall, not by register values.
const REGISTER_PMUS: &[&str] = &["arm1176", "sparc-t4", "sparc-t4-dram", "sparc-kt", "sparc-kt-dram", "montecito"];

/// Every event and unit-mask selection of `pmu` that encodes on its own, as strings.
fn selections(cat: &Catalog, pmu: &str) -> Vec<String> {
    let p = cat.pmu(pmu).unwrap();
    let mut out = Vec::new();
    for n in p.selections() {
        let text = format!("{pmu}::{n}");
        let Ok(sel) = cat.resolve(&text, pmu) else { continue };
        if encode_set(p, &[sel]).is_ok() {
            out.push(text);
        }
    }
    assert!(!out.is_empty(), "{pmu}: no selection encodes");
    out
}

#[divan::bench(args = PMUS)]
fn baseline_read_strings(b: divan::Bencher, pmu: &str) {
    let strings = selections(&Catalog::builtin(), pmu);
    b.counter(divan::counter::ItemsCount::new(strings.len()))
        .bench(|| divan::black_box(&strings).iter().map(|s| s.bytes().map(u64::from).sum::<u64>()).sum::<u64>());
}

#[divan::bench(args = PMUS)]
fn encode(b: divan::Bencher, pmu: &str) {
    let cat = Catalog::builtin();
    let strings = selections(&cat, pmu);
    let p = cat.pmu(pmu).unwrap();
    b.counter(divan::counter::ItemsCount::new(strings.len())).bench(|| {
        let mut acc = 0u64;
        for s in divan::black_box(&strings) {
            let sel = cat.resolve(s, pmu).unwrap();
            let set = encode_set(p, std::slice::from_ref(&sel)).unwrap();
            acc ^= set.registers.iter().fold(0, |a, (_, v)| a ^ v);
        }
        acc
    });
}

#[divan::bench(args = PMUS)]
fn encoder(b: divan::Bencher, pmu: &str) {
    let cat = Catalog::builtin();
    let strings = selections(&cat, pmu);
    let encoder = Encoder::new(&cat, pmu).unwrap();
    b.counter(divan::counter::ItemsCount::new(strings.len())).bench(|| {
        let mut acc = 0u64;
        for s in divan::black_box(&strings) {
            acc ^= encoder.encode(s).unwrap().iter().fold(0, |a, (_, v)| a ^ v);
        }
        acc
    });
}

#[divan::bench(args = PMUS)]
fn encoder_new(b: divan::Bencher, pmu: &str) {
    let cat = Catalog::builtin();
    b.bench(|| Encoder::new(&cat, divan::black_box(pmu)).unwrap().len());
}

#[divan::bench(args = REGISTER_PMUS)]
fn decode_registers(b: divan::Bencher, pmu: &str) {
    let cat = Catalog::builtin();
    let p = cat.pmu(pmu).unwrap();
    let values: Vec<(&'static str, u64)> =
        selections(&cat, pmu).iter().flat_map(|s| encode_set(p, &[cat.resolve(s, pmu).unwrap()]).unwrap().registers).collect();
    b.counter(divan::counter::ItemsCount::new(values.len()))
        .bench(|| divan::black_box(&values).iter().map(|(reg, v)| decode(p, reg, *v).unwrap().fields.len()).sum::<usize>());
}
