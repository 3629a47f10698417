//! Writes the seed corpora of the fuzz targets into `fuzz/corpus/NAME/` from the
//! project's own data: every event name and metric expression of the built-in tables,
//! the event tables, the documented machine configurations, the shipped traces, MMU
//! statistics buffers, and register traffic for the models.
//!
//! `cargo run -p pmukit-harness --example seed_corpora` (from the repository root).

use std::path::Path;

use pmukit_arch::{Catalog, FAMILIES};

fn write(target: &str, name: &str, bytes: &[u8]) {
    let dir = Path::new("fuzz/corpus").join(target);
    std::fs::create_dir_all(&dir).expect("create the corpus folder");
    std::fs::write(dir.join(format!("seed-{name}")), bytes).expect("write a seed");
}

fn main() {
    let catalog = Catalog::builtin();
    for (p, pmu) in catalog.pmus.iter().enumerate() {
        // Event strings: every event of the PMU, with a unit mask and a modifier where
        // it has them, as lines after the PMU's byte.
        let mut lines = Vec::new();
        for e in pmu.events() {
            let umask = e.umasks.first().map(|u| format!(".{}", u.name)).unwrap_or_default();
            let modifier = pmu.desc.modifiers.first().map(|m| format!(":{}", m.name)).unwrap_or_default();
            lines.push(format!("{}::{}{umask}{modifier}", pmu.name(), e.name));
        }
        lines.push(format!("{}::r1", pmu.name()));
        for (i, chunk) in lines.chunks(12).enumerate() {
            let mut bytes = vec![p as u8];
            bytes.extend(chunk.join("\n").as_bytes());
            write("event_strings", &format!("{}-{i}", pmu.name()), &bytes);
        }
        // The encoder's fast path: selections as the table names them, in lower case,
        // and behind the PMU's prefix, six lines (what the target reads) to a seed.
        let selections = pmu.events().take(6).map(|e| match e.umasks.last() {
            Some(u) => format!("{}.{}", e.name, u.name),
            None => e.name.to_string(),
        });
        let forms: Vec<String> = selections.flat_map(|n| [n.to_ascii_lowercase(), format!("{}::{n}", pmu.name()), n]).collect();
        for (i, chunk) in forms.chunks(6).enumerate() {
            let mut bytes = vec![p as u8];
            bytes.extend(chunk.join("\n").as_bytes());
            write("event_strings", &format!("{}-names-{i}", pmu.name()), &bytes);
        }
        // Sets to schedule: the first events of the table, two bytes each.
        let set: Vec<u8> = std::iter::once(p as u8).chain((0..12u8).flat_map(|i| [i, i])).collect();
        write("schedule", pmu.name(), &set);
    }
    for family in FAMILIES {
        for m in family.metrics.metrics.iter() {
            write("metric_expressions", &format!("{}-{}", family.name, m.name), m.expr.as_bytes());
        }
    }
    for dir in std::fs::read_dir("data").expect("data/").flatten() {
        let events = dir.path().join("events.toml");
        if let Ok(text) = std::fs::read(&events) {
            write("events_file", &dir.file_name().to_string_lossy(), &text);
        }
    }
    let configs: [(&str, u8, &str); 4] = [
        ("arm11", 2, "[dcache]\nreplacement = \"lru\"\n[core]\nmemory_cycles = 60\n"),
        ("arm11-tlb", 0, "[icache]\nsize = 32768\nways = 4\nline = 32\n[main_tlb]\nentries = 64\nways = 2\n"),
        ("sparc", 3, "[l2]\nsize = 131072\n[core]\nsockets = 2\nstore_buffer = 4\n[memory]\nbanks = 4\n"),
        ("montecito", 6, "[l3]\nsize = 1048576\n[core]\nswitch_cycles = 20\ncores = 2\n"),
    ];
    for (name, machine, text) in configs {
        write("machine_config", name, &[&[machine][..], text.as_bytes()].concat());
    }
    for (name, machine) in [("loop.trace", 2u8), ("sum.lackey", 6)] {
        let text = std::fs::read(Path::new("data/traces").join(name)).expect("data/traces");
        // The Lackey trace's first 200 lines: a seed, not a workload.
        let head: Vec<u8> = text.split(|&b| b == b'\n').take(200).collect::<Vec<_>>().join(&b'\n');
        write("trace", name, &[&[machine][..], &head].concat());
    }
    // Lines where the Lackey reader's fast pass hands over to the general one
    // (upper-case hex, a carriage return, leading zeros, sixteen digits, a `==` line
    // in the middle), and a data access before any instruction, which is refused.
    let edges = "I  0040A000,3\n S 7FF000,4\r\n M 00001000,2\nI  00000000FFFFF000,4\n==1== note\nI  00400004,2\n";
    write("trace", "lackey-edges", &[&[0u8][..], b"==1== Lackey\n", edges.as_bytes()].concat());
    write("trace", "lackey-data-first", &[&[0u8][..], b"==1== Lackey\n L 0402b000,8\nI  00400000,4\n"].concat());
    let mut buffers = vec![0u8; 0x400];
    buffers[0x7] = 4;
    buffers[0x208..0x210].copy_from_slice(&400u64.to_be_bytes());
    buffers[0x20] = 1;
    write("mmustat", "two-buffers", &buffers);
    write("mmustat", "partial", &buffers[..0x300]);
    // Register traffic: bytes that Unstructured turns into a few operations each.
    for target in ["arm11_model", "t4_model", "t4_dram_model", "hypercalls", "montecito_model"] {
        for seed in 0u8..4 {
            let bytes: Vec<u8> = (0..256u32).map(|i| (i as u8).wrapping_mul(37).wrapping_add(seed.wrapping_mul(101))).collect();
            write(target, &seed.to_string(), &bytes);
        }
    }
}
