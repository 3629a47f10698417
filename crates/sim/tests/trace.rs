//! `pmu stat --trace`: recorded programs (Valgrind Lackey and the native format) run
//! through the ARM11 machine, and every malformed trace is refused with its line and
//! column.

use pmukit_arch::Catalog;
use pmukit_sim::program::trace::TraceError;
use pmukit_sim::stat::{self, stat, StatError, StatOptions};
use pmukit_sim::stream::{Signal, Totals};

const LACKEY: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/traces/sum.lackey");
const NATIVE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/traces/loop.trace");

fn opts(trace: &str) -> StatOptions {
    StatOptions { trace: Some(trace.into()), ..StatOptions::default() }
}

/// Every signal of a trace run on the ARM1176 machine.
fn totals(trace: &str) -> Totals {
    let cat = Catalog::builtin();
    let (blocks, status) = stat::blocks(&[cat.pmu("arm1176").unwrap()], &opts(trace), stat::Reads::ALL).unwrap();
    let blocks = blocks.every();
    let t = Totals::of(blocks, u64::MAX, |_| true);
    assert_eq!(status.and_then(|s| s.error()), None);
    t
}

#[test]
fn a_lackey_trace_executes_each_instruction_and_infers_its_jumps() {
    let text = std::fs::read_to_string(LACKEY).unwrap();
    let instructions: Vec<(u64, u64)> = text
        .lines()
        .filter_map(|l| l.strip_prefix("I  "))
        .map(|l| {
            let (a, s) = l.split_once(',').unwrap();
            (u64::from_str_radix(a, 16).unwrap(), s.parse().unwrap())
        })
        .collect();
    // A jump is an instruction whose successor is not the next one in memory.
    let jumps = instructions.windows(2).filter(|w| w[1].0 != w[0].0 + w[0].1).count() as u64;
    let t = totals(LACKEY);
    assert_eq!(t.get(Signal::Instructions), instructions.len() as u64);
    assert_eq!(t.get(Signal::Branches), jumps);
    assert_eq!(t.get(Signal::BranchesTaken), jumps);
    let data = text.lines().filter(|l| l.starts_with(" L ") || l.starts_with(" S ") || l.starts_with(" M ")).count() as u64;
    assert!(t.get(Signal::Loads) + t.get(Signal::Stores) <= data);
    assert!(t.get(Signal::Loads) + t.get(Signal::Stores) > data / 2, "most instructions' first accesses are kept");
    assert!(t.get(Signal::ICacheMisses) > 0 && t.get(Signal::DCacheMisses) > 0);
    assert!(t.cycles > instructions.len() as u64);
}

#[test]
fn a_native_trace_gives_outcomes_calls_returns_privilege_and_threads() {
    let t = totals(NATIVE);
    assert_eq!(t.get(Signal::Instructions), 36);
    // Three loop branches (two taken), three calls, three returns and one kernel branch.
    assert_eq!(t.get(Signal::Branches), 10);
    assert_eq!(t.get(Signal::BranchesTaken), 9);
    assert_eq!((t.get(Signal::Calls), t.get(Signal::Returns), t.get(Signal::ReturnsPredicted)), (3, 3, 3));
    assert_eq!(t.get(Signal::ReturnsMispredicted), 0);
    // PC changes: the nine taken branches and the jump through a register.
    assert_eq!(t.get(Signal::PcChanges), 10);
    assert_eq!(t.get(Signal::Atomics), 0, "ARM11 has no atomics signal to count");
    assert_eq!(t.get(Signal::WriteBufferDrains), 1);
    assert!(t.kernel_cycles > 0 && t.user_cycles > 0);
}

#[test]
fn stat_counts_a_trace_and_names_it_in_the_report() {
    let cat = Catalog::builtin();
    let sels = vec![cat.resolve("INSTR_EXEC", "arm1176").unwrap()];
    let r = stat(&cat, &sels, &opts(NATIVE), &mut |_| {}).unwrap();
    assert_eq!(r.events[0].count, Some(36));
    assert_eq!(r.workload, format!("trace {NATIVE}"));
    // The run ends with the trace: its few instructions, after the page faults that
    // map its text in as it first runs (ERRATA MARM17).
    assert!(r.cycles < 10_000, "the run ends with the trace: {}", r.cycles);
}

/// A trace file with `text`, in this test run's temporary folder.
fn trace_file(name: &str, text: &str) -> String {
    let dir = std::env::temp_dir().join(format!("pmukit-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

fn stat_error(name: &str, text: &str) -> TraceError {
    let cat = Catalog::builtin();
    let sels = vec![cat.resolve("INSTR_EXEC", "arm1176").unwrap()];
    match stat(&cat, &sels, &opts(&trace_file(name, text)), &mut |_| {}) {
        Err(StatError::Trace(e)) => e,
        other => panic!("{name}: expected a trace error, got {other:?}"),
    }
}

#[test]
fn malformed_traces_name_the_line_and_column() {
    let native = |body: &str| format!("#pmukit-trace v1\n10000 int\n{body}\n");
    let cases: &[(&str, String, u64, usize, &str)] = &[
        ("bad-ip", native("1000g int"), 3, 1, "`1000g` is not a hexadecimal address"),
        ("no-class", native("10004"), 3, 6, "expected an instruction class"),
        ("class", native("10004 load 20000 4"), 3, 7, "unknown instruction class `load`; valid: int"),
        ("operands", native("10004 ld 20000"), 3, 7, "`ld` takes 2 operands, not 1"),
        ("size", native("10004 st 20000 0"), 3, 16, "`0` is not a size in bytes (1-255)"),
        ("outcome", native("10004 br 10000 maybe"), 3, 16, "`maybe` is not a branch outcome"),
        ("target", native("10004 call xyz"), 3, 12, "`xyz` is not a hexadecimal address"),
        ("thread", native("10004 int thread=300"), 3, 11, "`300` is not a thread number"),
        ("dma-direction", native("20000 dma x 64"), 3, 11, "`x` is not a transfer direction: r (the device reads) or w"),
        ("dma-bytes", native("20000 dma r 0"), 3, 13, "`0` is not a transfer size in bytes (1-65536)"),
        ("dma-too-big", native("20000 dma w 65537"), 3, 13, "`65537` is not a transfer size in bytes (1-65536)"),
        ("dma-operands", native("20000 dma r"), 3, 7, "`dma` takes 2 operands, not 1"),
        ("dma-options", native("20000 dma r 64 kernel"), 3, 16, "`dma` takes no options"),
        ("dma-first", "#pmukit-trace v1\n20000 dma r 64\n".to_string(), 2, 1, "none come before this one"),
        ("dma-many", native(&"20000 dma r 64\n".repeat(17)), 19, 1, "more than 16 device transfers one after another"),
        ("lackey-line", "==1== Lackey\nI  00401000,5\nX 1,2\n".to_string(), 3, 1, "expected `I  ADDR,SIZE`"),
        ("lackey-addr", "I  00401000,5\nI  0040z000,5\n".to_string(), 2, 4, "`0040z000` is not a hexadecimal address"),
        ("lackey-size", "I  00401000,5\n S 7ff0,eight\n".to_string(), 2, 9, "`eight` is not a size in bytes"),
        ("lackey-comma", "I  00401000,5\n L 7ff0\n".to_string(), 2, 4, "expected ADDR,SIZE"),
        ("lackey-orphan", "==1== Lackey\n L 7ff0,8\n".to_string(), 2, 2, "a data access before any instruction"),
    ];
    for (name, text, line, column, message) in cases {
        match stat_error(name, text) {
            TraceError::Syntax { line: l, column: c, message: m, .. } => {
                assert_eq!((l, c), (*line, *column), "{name}: {m}");
                assert!(m.contains(message), "{name}: {m}");
            }
            e => panic!("{name}: {e}"),
        }
    }
}

#[test]
fn a_native_trace_records_devices_transfers_after_the_instructions_before_them() {
    // A load and a store to a buffer, then a device writes it back to memory (the
    // driver cleans the line first: one maintenance instruction and its write-back on
    // ARM11, ERRATA MARM10), then the next instruction loads it again.
    let text = "#pmukit-trace v1\n10000 ld 20000 4\n10004 st 20000 4\n20000 dma r 32\n10008 ld 20000 4\n";
    let t = totals(&trace_file("dma.trace", text));
    assert_eq!(t.get(Signal::Instructions), 4);
    assert_eq!(t.get(Signal::DCacheWritebacks), 1);
    let written = "#pmukit-trace v1\n10000 ld 20000 4\n20000 dma w 32\n10004 ld 20000 4\n";
    assert_eq!(totals(&trace_file("dma-w.trace", written)).get(Signal::DCacheMisses), 2, "the device's write took the line");
}

#[test]
fn a_file_that_is_no_trace_or_is_missing_is_refused() {
    assert!(matches!(stat_error("csv", "time,event\n1,2\n"), TraceError::Format { .. }));
    assert!(matches!(stat_error("empty", ""), TraceError::Format { .. }));
    let cat = Catalog::builtin();
    let sels = vec![cat.resolve("INSTR_EXEC", "arm1176").unwrap()];
    let missing = stat(&cat, &sels, &opts("/no/such/trace"), &mut |_| {}).unwrap_err();
    assert!(missing.to_string().starts_with("/no/such/trace: "), "{missing}");
}

#[test]
fn every_machine_runs_traces() {
    let cat = Catalog::builtin();
    for (event, pmu) in
        [("INSTR.ALL", "sparc-t4"), ("DMMU_TSB_HITS", "niagara"), ("L2_MISSES", "sparc-kt"), ("IA64_INST_RETIRED", "montecito")]
    {
        let sels = vec![cat.resolve(event, pmu).unwrap()];
        let r = stat(&cat, &sels, &opts(NATIVE), &mut |_| {}).unwrap();
        assert!(r.events[0].count > Some(0), "{pmu} {event}");
    }
}

/// `fld` is a load into a floating-point register: on Montecito it goes to the L2D
/// (L2D_OPS_ISSUED.FP_LOAD), and only `ld` counts as an integer load (MMC27).
#[test]
fn an_fld_line_is_a_floating_point_load() {
    let cat = Catalog::builtin();
    let path = trace_file("fld.trace", "#pmukit-trace v1\n10000 fld 20000 8\n10004 fld 20008 8\n10008 ld 20010 8\n1000c fp\n");
    let sels: Vec<_> = ["L2D_OPS_ISSUED.FP_LOAD", "LOADS_RETIRED_INTG"].iter().map(|e| cat.resolve(e, "montecito").unwrap()).collect();
    let r = stat(&cat, &sels, &opts(&path), &mut |_| {}).unwrap();
    let counts: Vec<_> = r.events.iter().map(|e| e.count).collect();
    assert_eq!(counts, [Some(2), Some(1)]);
}

#[test]
fn an_error_deep_in_a_long_trace_still_fails_the_run() {
    // Far more than one phase of good lines, then a bad one: no partial report.
    let mut text = String::from("#pmukit-trace v1\n");
    for i in 0..20_000u64 {
        text.push_str(&format!("{:x} int\n", 0x10000 + 4 * (i % 64)));
    }
    text.push_str("10000 ld nowhere 4\n");
    match stat_error("late", &text) {
        TraceError::Syntax { line, .. } => assert_eq!(line, 20_002),
        e => panic!("{e}"),
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// Whatever the lines say, reading them gives counts or an error, never a panic.
    #[test]
    fn arbitrary_trace_lines_never_panic(
        native in proptest::prelude::any::<bool>(),
        lines in proptest::collection::vec("[ ILSMx0-9a-fA-F,=#kt.-]{0,24}|I  [0-9a-f]{1,17},[0-9]{1,4}| [LSM] [0-9a-f]{1,8},[0-9]{1,3}|[0-9a-f]{1,6} (int|ld|st|br|call|ret|jmp|bld|pf)( [0-9a-fx]{1,6}){0,3}( t| n| kernel| thread=[0-9]{1,4})?|[0-9a-f]{1,6} dma( r| w| x)?( [0-9]{1,6})?( kernel)?", 0..40),
    ) {
        let header = if native { "#pmukit-trace v1\n" } else { "==1== Lackey\n" };
        let text = format!("{header}{}\n", lines.join("\n"));
        let cat = Catalog::builtin();
        let sels = vec![cat.resolve("INSTR_EXEC", "arm1176").unwrap()];
        let path = trace_file("arbitrary", &text);
        match stat(&cat, &sels, &opts(&path), &mut |_| {}) {
            Ok(r) => proptest::prop_assert!(r.events[0].count.is_some()),
            Err(e) => proptest::prop_assert!(matches!(e, StatError::Trace(_)), "{e}"),
        }
    }
}

/// A reader that hands out at most `per_read` bytes a call, as a pipe may.
struct Trickle {
    text: std::io::Cursor<Vec<u8>>,
    per_read: usize,
}

impl std::io::Read for Trickle {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min(self.per_read);
        self.text.read(&mut buf[..n])
    }
}

/// Runs Lackey text that arrives `per_read` bytes at a time on the ARM1176 machine:
/// its totals and the error that stopped it.
fn through_buffer(text: &str, per_read: usize) -> (Totals, Option<TraceError>) {
    let trickle = Trickle { text: std::io::Cursor::new(text.as_bytes().to_vec()), per_read };
    let reader = std::io::BufReader::with_capacity(per_read, trickle);
    let (program, status) = pmukit_sim::program::trace::program(Box::new(reader), "buffered").unwrap();
    let cfg = pmukit_sim::machine::arm11::Arm11Config::new(pmukit_sim::machine::arm11::Arm11Core::Arm1176);
    let machine = pmukit_sim::machine::arm11(cfg, program, pmukit_sim::machine::run::Skipping::On);
    (Totals::of(machine, u64::MAX, |_| true), status.error())
}

/// The reader parses lines where they lie in its buffer and moves a line the buffer
/// splits to its front: wherever the reads end, the program and the errors are the
/// same.
#[test]
fn a_lackey_line_reads_the_same_wherever_the_readers_buffer_ends() {
    let good: String = std::fs::read_to_string(LACKEY).unwrap().lines().take(400).map(|l| format!("{l}\n")).collect();
    let bad = format!("{good}I  0400d7d4,8\r\n L 7ff0000a8,zz\n");
    let (whole, none) = through_buffer(&good, 1 << 16);
    assert_eq!(none, None);
    assert!(whole.get(Signal::Instructions) > 100);
    let (_, error) = through_buffer(&bad, 1 << 16);
    let Some(TraceError::Syntax { line, column, .. }) = error.clone() else { panic!("{error:?}") };
    assert_eq!((line, column), (bad.lines().count() as u64, 14), "the size's first column");
    for capacity in [1, 2, 7, 13, 29, 64, 1000] {
        let (t, e) = through_buffer(&good, capacity);
        assert_eq!(
            (t.cycles, t.get(Signal::Instructions), t.get(Signal::Loads), e),
            (whole.cycles, whole.get(Signal::Instructions), whole.get(Signal::Loads), None),
            "{capacity}"
        );
        assert_eq!(through_buffer(&bad, capacity).1, error, "{capacity}");
    }
}

/// A trace without line breaks is refused at its second megabyte, never held whole.
#[test]
fn a_line_longer_than_a_megabyte_is_an_error_naming_it() {
    let text = format!("I  0400d7d4,8\nI  {}", "0".repeat(3 << 20));
    let (_, error) = through_buffer(&text, 1 << 16);
    let Some(TraceError::Syntax { line, column, message, .. }) = error else { panic!("{error:?}") };
    assert_eq!((line, column), (2, 1));
    assert!(message.contains("longer than 1048576 bytes"), "{message}");
}
