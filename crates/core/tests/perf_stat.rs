//! Reading `perf stat` output back: the files in `data/perf-stat/` were recorded with
//! perf 6.1 (Debian 6.1.187) on the 2-CPU VM this project is built on, which has
//! software events only, so `instructions`, `cycles` and `r07` are `<not supported>`:
//!
//! ```text
//! perf stat -x, -e task-clock,context-switches,page-faults,instructions,cycles -- sleep 0.05
//! perf stat -x';' -I 20 -e (the same) -- sleep 0.07
//! perf stat -x, -a -A -e task-clock,context-switches -- sleep 0.05
//! perf stat -x, -r 3 -e (the same five) -- sleep 0.02
//! perf stat -x, -a --per-core / --per-socket -e task-clock[,context-switches] -- sleep 0.05
//! perf stat -x, --per-thread -p PID -e task-clock,context-switches -- sleep 0.2
//! perf stat -x, -I 20 -a -A -e task-clock -- sleep 0.05
//! perf stat -x, -e duration_time,task-clock,r07 -- sleep 0.03
//! perf stat -j (and -j -I 20, -j -a -A, -j -r 3, -j -a --per-core, -j --per-thread,
//!              -j -e duration_time,task-clock)
//! ```

use pmukit_core::perf_stat::{read, Format, ReadError, Record, Status};

fn fixture(name: &str) -> (Format, Vec<Record>) {
    let path = format!("{}/tests/data/perf-stat/{name}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    read(&text, name, None).unwrap_or_else(|e| panic!("{e}"))
}

fn find<'a>(records: &'a [Record], event: &str, unit: Option<&str>) -> &'a Record {
    records.iter().find(|r| r.event == event && r.unit.as_deref() == unit).unwrap_or_else(|| panic!("{event} {unit:?}"))
}

#[test]
fn plain_csv_and_json_read_alike() {
    for (name, format) in [("csv-plain.txt", Format::PerfCsv), ("json-plain.txt", Format::PerfJson)] {
        let (f, r) = fixture(name);
        assert_eq!(f, format);
        assert_eq!(r.len(), 5, "{name}");
        assert!(r.iter().all(|r| r.interval.is_none() && r.unit.is_none()));
        let clock = find(&r, "task-clock", None);
        assert!(clock.value.unwrap() > 500_000.0 && clock.value.unwrap() < 1_000_000.0, "msec read back as ns: {:?}", clock.value);
        assert_eq!(find(&r, "page-faults", None).status, Status::Counted);
        assert_eq!((find(&r, "instructions", None).value, find(&r, "instructions", None).status), (None, Status::NotSupported));
    }
}

#[test]
fn intervals_carry_their_time_and_other_separators_are_found() {
    let (_, r) = fixture("csv-interval-semicolon.txt");
    assert_eq!(r.len(), 20);
    let times: Vec<f64> = r.iter().filter(|r| r.event == "task-clock").map(|r| r.interval.unwrap()).collect();
    assert_eq!(times, [0.020077258, 0.040293667, 0.060433539, 0.071288546]);
    assert_eq!(r.iter().filter(|r| r.status == Status::NotCounted).count(), 6);
    let (_, j) = fixture("json-interval.txt");
    assert_eq!(j.len(), 20);
    assert_eq!(j[0].interval, Some(0.020112843));
}

#[test]
fn per_cpu_core_socket_and_thread_prefixes() {
    let (_, r) = fixture("csv-per-cpu.txt");
    assert_eq!(find(&r, "context-switches", Some("CPU1")).value, Some(8.0));
    let (_, r) = fixture("json-per-cpu.txt");
    assert_eq!(find(&r, "context-switches", Some("CPU0")).value, Some(46.0));
    let (_, r) = fixture("csv-per-core.txt");
    assert_eq!(find(&r, "context-switches", Some("S0-D0-C1")).value, Some(8.0));
    let (_, r) = fixture("json-per-core.txt");
    assert!(find(&r, "task-clock", Some("S0-D0-C0")).value.is_some());
    let (_, r) = fixture("csv-per-socket.txt");
    assert!(find(&r, "task-clock", Some("S0")).value.unwrap() > 1e8);
    let (_, r) = fixture("csv-per-thread.txt");
    assert_eq!(find(&r, "task-clock", Some("sleep-4408")).status, Status::NotCounted);
    let (_, r) = fixture("json-per-thread.txt");
    assert_eq!(r[0].unit.as_deref(), Some("sleep-4462"));
    let (_, r) = fixture("csv-interval-per-cpu.txt");
    assert_eq!(r.len(), 4);
    assert_eq!((r[3].interval, r[3].unit.as_deref()), (Some(0.054499154), Some("CPU1")));
}

#[test]
fn the_repeat_variance_column_is_skipped() {
    for name in ["csv-repeat.txt", "json-repeat.txt"] {
        let (_, r) = fixture(name);
        assert_eq!(find(&r, "context-switches", None).value, Some(1.0), "{name}");
        assert_eq!(find(&r, "page-faults", None).value.map(|v| v > 70.0), Some(true), "{name}");
    }
}

#[test]
fn duration_time_and_raw_events() {
    let (_, r) = fixture("csv-duration-raw.txt");
    assert_eq!(find(&r, "duration_time", None).value, Some(35_922_951.0), "nanoseconds, as perf counts it");
    assert_eq!(find(&r, "r07", None).status, Status::NotSupported);
    let (_, r) = fixture("json-duration.txt");
    assert_eq!(find(&r, "duration_time", None).value, Some(31_155_657.0));
}

#[test]
fn malformed_input_is_refused_with_its_line() {
    let human = "\n Performance counter stats for 'sleep 0.1':\n\n          0.51 msec task-clock\n";
    assert!(matches!(read(human, "h", None), Err(ReadError::HumanOutput { .. })));
    assert!(matches!(read("  \n# started on Sat\n", "e", None), Err(ReadError::Empty { .. })));
    let e = read("1,,cycles,5,100.00,,\nnonsense\n", "f", None).unwrap_err().to_string();
    assert!(e.contains("f line 2") && e.contains("nonsense"), "{e}");
    let e = read("{\"event\": \"cycles\"}\n", "j", None).unwrap_err().to_string();
    assert!(e.contains("counter-value"), "{e}");
    let e = read("{\"command\": \"list\", \"schema\": 1}", "p", None).unwrap_err().to_string();
    assert!(e.contains("not \"stat\""), "{e}");
    // A given separator is the only one tried.
    assert!(read("1;;cycles;5;100.00;;\n", "s", Some(",")).is_err());
    assert!(read("1;;cycles;5;100.00;;\n", "s", Some(";")).is_ok());
}
