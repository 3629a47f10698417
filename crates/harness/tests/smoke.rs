//! The fuzz targets on stable Rust, as ordinary tests: every committed corpus entry
//! (fuzz/corpus/NAME) is replayed, then a few thousand inputs are generated from it by
//! the mutations a fuzzer makes (bit flips, interesting bytes, insertions, deletions,
//! splices, grammar tokens), with a fixed seed so a failure reproduces. A harness
//! panics when pmukit is wrong; so does this test.

use std::path::PathBuf;

/// Tokens of the input grammars, inserted by the mutations, as a fuzzer's dictionary
/// would (the fuzz/dict/*.dict files hold the same kinds of tokens).
const TOKENS: &[&str] = &[
    "::",
    ".",
    ":",
    "=",
    ",",
    "\n",
    "r",
    "0x",
    "0b",
    "_",
    "u",
    "k",
    "h",
    "d",
    "fiq",
    "thresh",
    "ALL",
    "(",
    ")",
    "/",
    "*",
    "+",
    "-",
    " if ",
    " else ",
    "d_ratio(",
    "min(",
    "max(",
    "#smt_on",
    "#num_cpus_online",
    "duration_time",
    "\"EventName\": ",
    "\"EventCode\": \"0x",
    "\"ConfigCode\": ",
    "\"UMask\": ",
    "\"ArchStdEvent\": ",
    "config:0-7",
    "config1:1,6-10",
    "1000000",
    "<not counted>",
    "<not supported>",
    "msec",
    "CPU0",
    "S0-D0-C1",
    "\"counter-value\" : ",
    "\"event\" : ",
    "\"interval\" : ",
    "1e9",
    "[[event]]",
    "\"format\":\"pmukit-record\"",
    "\"version\":1",
    "\"samples\":",
    "\"dear\":[",
    "\"trace\":{",
    "[\"PMC42\",",
    "18446744073709551615",
    "[[event.umasks]]",
    "name = ",
    "code = ",
    "umasks = ",
    "default = true",
    "umask_combinations = \"listed\"",
    "invalid_umasks = ",
    "[core]",
    "[l2]",
    "[dcache]",
    "size = ",
    "ways = ",
    "line = ",
    "replacement = ",
    "entries = ",
    "I  0400d7d4,4\n",
    " L 1ffefffd80,8\n",
    " S ",
    " M ",
    "#pmukit-trace v1\n",
    "0x1000 ld 0x2000 8\n",
    "0x1004 br 0x1000 t\n",
    "\u{0}",
    "\u{ff}",
    "é",
    "💥",
    "IA64_INST_RETIRED",
    "L1D_READS_SET0",
    "0x4000-0x4400",
    "mi:0x0:0x1ffffffffff",
    "inverse",
    "nocheck",
];

/// A small fixed-seed generator (xorshift64*): the inputs must be the same in every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn corpus(target: &str) -> Vec<Vec<u8>> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus").join(target);
    let mut entries: Vec<_> =
        std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())).flatten().map(|e| e.path()).collect();
    entries.sort();
    entries.iter().map(|p| std::fs::read(p).expect("corpus entry")).collect()
}

fn mutate(rng: &mut Rng, input: &mut Vec<u8>, other: &[u8]) {
    for _ in 0..1 + rng.below(4) {
        let at = rng.below(input.len() + 1);
        match rng.below(7) {
            0 if !input.is_empty() => {
                let i = rng.below(input.len());
                input[i] ^= 1 << rng.below(8);
            }
            1 if !input.is_empty() => {
                let i = rng.below(input.len());
                input[i] = [0, 0xff, 0x7f, 0x80, b'0', b'9', b' '][rng.below(7)];
            }
            2 => {
                let bytes: Vec<u8> = (0..1 + rng.below(8)).map(|_| rng.next() as u8).collect();
                input.splice(at..at, bytes);
            }
            3 if !input.is_empty() => {
                let end = (at + 1 + rng.below(16)).min(input.len());
                input.drain(at.min(end)..end);
            }
            4 if !other.is_empty() => {
                let from = rng.below(other.len());
                let piece = &other[from..(from + 1 + rng.below(64)).min(other.len())];
                input.splice(at..at, piece.iter().copied());
            }
            5 => input.truncate(at),
            _ => {
                let token = TOKENS[rng.below(TOKENS.len())];
                input.splice(at..at, token.bytes());
            }
        }
    }
}

/// Replays the corpus and `generated` mutated or random inputs through `harness`.
fn smoke(target: &str, generated: usize) {
    let (_, harness) = pmukit_harness::TARGETS.iter().find(|(name, _)| *name == target).expect("a target");
    let seeds = corpus(target);
    assert!(!seeds.is_empty(), "{target} has no corpus");
    for seed in &seeds {
        harness(seed);
    }
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ target.len() as u64);
    for i in 0..generated {
        let mut input =
            if i % 8 == 7 { (0..rng.below(512)).map(|_| rng.next() as u8).collect() } else { seeds[rng.below(seeds.len())].clone() };
        let other = &seeds[rng.below(seeds.len())];
        mutate(&mut rng, &mut input, other);
        harness(&input);
    }
}

macro_rules! smoke_tests {
    ($($name:ident: $generated:expr,)*) => {
        $(
            #[test]
            fn $name() {
                smoke(stringify!($name), $generated);
            }
        )*

        /// Every target has its smoke test.
        #[test]
        fn every_target_is_smoked() {
            let smoked = [$(stringify!($name)),*];
            for (name, _) in pmukit_harness::TARGETS {
                assert!(smoked.contains(name), "{name} has no smoke test");
            }
        }
    };
}

smoke_tests! {
    event_strings: 10_000,
    describe: 1_000,
    metric_expressions: 20_000,
    schedule: 5_000,
    qualify: 5_000,
    events_file: 1_000,
    machine_config: 2_000,
    trace: 2_000,
    elf_program: 5_000,
    guest_code: 5_000,
    mmustat: 20_000,
    recording: 2_000,
    perf_stat: 5_000,
    perf_json: 2_000,
    sysfs: 1_000,
    live_events: 5_000,
    arm11_model: 20_000,
    t4_model: 20_000,
    t4_dram_model: 20_000,
    hypercalls: 20_000,
    montecito_model: 20_000,
}
