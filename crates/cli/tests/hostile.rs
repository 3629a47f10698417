//! Issue 39: each failure found by using pmu as a careless or hostile user would, with
//! whole commands, pinned as it now behaves (docs/ROBUSTNESS.md, "Hostile use"): no
//! panic from the environment, memory and time bounded, output files whole, input
//! read for meaning. Sizes are kept small where a limit allows; peak memory is the
//! kernel's measure of the process.

#[allow(dead_code)]
mod process;

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::Path;
use std::time::Duration;

use process::{os, run, run_in, scratch, Input, Run, Sink, BUG};
use serde_json::Value;

fn plain(args: &[&str]) -> Run {
    run(&os(args), Input::Bytes(Vec::new()), Sink::Pipe, Sink::Pipe, None)
}

/// `pmu args` with a silent standard input, Ctrl-C'd after `after`.
fn interrupted(args: &[&str], after: Duration) -> Run {
    run(&os(args), Input::Silent, Sink::Pipe, Sink::Pipe, Some(after))
}

/// A pmu-events model directory `arch/arm64/vendor/model` under `dir` holding
/// `events.json`, and its path.
fn model(dir: &Path, events_json: &str) -> std::path::PathBuf {
    let model = dir.join("arch/arm64/vendor/model");
    std::fs::create_dir_all(&model).unwrap();
    std::fs::write(model.join("events.json"), events_json).unwrap();
    model
}

fn exits(r: &Run, code: i32, what: &str) {
    assert!(!r.stderr.contains(BUG), "{what}: {}", r.stderr);
    assert_eq!(r.code, Some(code), "{what}: signal {:?}, stderr {}", r.signal, r.stderr);
}

/// Row 1: arguments are read as the OS gives them.
#[test]
fn a_non_utf8_argument_is_named_not_a_panic() {
    let bad = OsString::from_vec(b"\xff".to_vec());
    let r = run(&[OsString::from("list"), bad.clone()], Input::Bytes(Vec::new()), Sink::Pipe, Sink::Pipe, None);
    exits(&r, 2, "pmu list \\xff");
    assert!(r.stderr.contains("argument 2") && r.stderr.contains("not UTF-8 text"), "{}", r.stderr);
    // A file name may be any bytes: a trace under such a name runs.
    let dir = scratch("utf8");
    let trace = dir.join(OsString::from_vec(b"loop-\xff.trace".to_vec()));
    std::fs::copy(concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/traces/loop.trace"), &trace).unwrap();
    let r = run(
        &[OsString::from("stat"), "--trace".into(), trace.into(), "-e".into(), "INSTR_EXEC".into()],
        Input::Silent,
        Sink::Pipe,
        Sink::Pipe,
        None,
    );
    exits(&r, 0, "a trace with a non-UTF-8 name");
    assert!(r.stdout_text().contains("36      INSTR_EXEC"), "{}", r.stdout_text());
}

/// Row 2: a standard error that cannot be written loses the diagnostic, never the
/// process (eprintln! panicked, and the panic hook's own eprintln! aborted).
#[test]
fn an_unwritable_stderr_is_no_abort() {
    for stderr in [Sink::Full, Sink::Closed] {
        let r = run(&os(&["list", "nosuch"]), Input::Bytes(Vec::new()), Sink::Pipe, stderr, None);
        assert_eq!(r.code, Some(2), "{stderr:?}: signal {:?}", r.signal);
    }
    // `pmu import … -o out.toml 2>&1 | head -1`: the notes go nowhere, the file is written.
    let dir = scratch("import-stderr");
    let model = model(&dir, r#"[{"EventName": "A", "EventCode": "0x1", "BriefDescription": "a"}, {"EventName": "B"}]"#);
    let out = dir.join("out.toml");
    let args =
        [OsString::from("import"), "perf-json".into(), model.into(), "--pmu".into(), "arm1176".into(), "-o".into(), out.clone().into()];
    let r = run(&args, Input::Bytes(Vec::new()), Sink::Pipe, Sink::Closed, None);
    assert_eq!(r.code, Some(0), "signal {:?}", r.signal);
    assert!(std::fs::read_to_string(&out).unwrap().contains("name = \"A\""));
}

/// Row 3: -r keeps running sums, not runs.
#[test]
fn repeating_for_ever_takes_constant_memory_and_ctrl_c_ends_it() {
    let r = interrupted(&["stat", "-r", "18446744073709551615", "--cycles", "1", "-e", "INSTR_EXEC"], Duration::from_secs(3));
    exits(&r, 130, "pmu stat -r 2^64-1");
    assert!(r.stdout_text().contains("runs):"), "{}", r.stdout_text());
    assert!(r.max_rss_kb < 100_000, "{} KB after thousands of runs", r.max_rss_kb);
}

/// Row 4: a recording is written as it is made and read the same way.
#[test]
fn recordings_stream_and_a_period_too_small_is_refused_up_front() {
    let dir = scratch("record");
    let file = dir.join("r.json");
    let f = file.display().to_string();
    let r = plain(&["record", "-c", "1", "-o", &f]);
    exits(&r, 2, "record -c 1");
    assert!(r.stderr.contains("could take up to 200000000 samples") && r.stderr.contains("give -c "), "{}", r.stderr);
    assert!(!file.exists(), "nothing written");
    let r = plain(&["record", "-e", "CPU_OP_CYCLES,DATA_EAR_CACHE_LAT4", "-c", "200", "--cycles", "2e7", "-w", "stream", "-o", &f]);
    exits(&r, 0, "a recording of many samples");
    let size = std::fs::metadata(&file).unwrap().len();
    assert!(size > 4 << 20, "{size} bytes");
    assert!(r.max_rss_kb < 120_000, "record holds no samples: {} KB for a {size}-byte recording", r.max_rss_kb);
    let r = plain(&["report", &f]);
    exits(&r, 0, "report");
    assert!(r.max_rss_kb < 60_000, "report holds no samples: {} KB for a {size}-byte recording", r.max_rss_kb);
    // Recording again keeps the first as FILE.old, as perf keeps perf.data.old.
    let before = std::fs::read(&file).unwrap();
    exits(&plain(&["record", "--cycles", "1e6", "-o", &f]), 0, "again");
    assert_eq!(std::fs::read(dir.join("r.json.old")).unwrap(), before);
}

/// Row 5: a machine's state is costed before it is built.
#[test]
fn a_machine_config_over_the_state_budget_is_refused_naming_its_table() {
    let dir = scratch("budget");
    let cfg = dir.join("big.toml");
    std::fs::write(&cfg, "[l2]\nsize = 67108864\nways = 64\nline = 8\n").unwrap();
    let r = plain(&["stat", "--pmu", "sparc-kt", "--machine-config", &cfg.display().to_string(), "--cycles", "1e9"]);
    exits(&r, 2, "an 8-byte-line 64 MB L2");
    assert!(r.stderr.contains("[l2]") && r.stderr.contains("at most 1 GiB"), "{}", r.stderr);
}

/// Row 6: every whole read stops at its limit.
#[test]
fn endless_inputs_stop_at_their_limits() {
    for args in [vec!["stat", "--machine-config", "/dev/zero"], vec!["list", "--events-file", "/dev/zero"], vec!["metrics", "/dev/zero"]] {
        let r = plain(&args);
        exits(&r, 2, &args.join(" "));
        assert!(r.stderr.contains("is larger than"), "{args:?}: {}", r.stderr);
        assert!(r.max_rss_kb < 100_000, "{args:?}: {} KB", r.max_rss_kb);
    }
    for args in [vec!["metrics", "-"], vec!["report", "-"], vec!["stat", "--trace", "-"]] {
        let r = run(&os(&args), Input::File("/dev/zero".into()), Sink::Pipe, Sink::Pipe, None);
        exits(&r, 2, &format!("{} < /dev/zero", args.join(" ")));
        assert!(r.max_rss_kb < 100_000, "{args:?}: {} KB", r.max_rss_kb);
    }
    // A JSON file beside an import larger than any pmu-events file.
    let dir = scratch("import-big");
    let model = model(&dir, r#"[{"EventName": "A", "EventCode": "0x1", "BriefDescription": "a"}]"#);
    std::fs::File::create(dir.join("arch/arm64/huge.json")).unwrap().set_len(100 << 20).unwrap();
    let r = plain(&["import", "perf-json", &model.display().to_string(), "--pmu", "arm1176"]);
    exits(&r, 2, "a 100 MB JSON file among the standard events");
    assert!(r.stderr.contains("huge.json is larger than 64 MiB"), "{}", r.stderr);
}

/// Row 7: pmu metrics reads a stream in linear time and prints each interval as it ends.
#[test]
fn metrics_print_each_interval_while_the_input_flows() {
    use std::io::{BufRead, BufReader, Write};
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_pmu"))
        .args(["metrics", "--pmu", "arm1176", "-M", "ipc", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let interval = |t: &str| format!("{t},1000,,CPU_CYCLES,1000,100.00,,\n{t},500,,INSTR_EXEC,1000,100.00,,\n");
    stdin.write_all(interval("1.000000000").as_bytes()).unwrap();
    stdin.write_all(interval("2.000000000").as_bytes()).unwrap();
    stdin.flush().unwrap();
    // The first interval is complete once the second begins: it is printed while the
    // input is still open.
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut seen = Vec::new();
    while !seen.iter().any(|l: &String| l.contains("1.000000000")) {
        seen.push(lines.next().expect("a line before the input ends").unwrap());
    }
    assert!(seen.iter().any(|l| l.contains("ipc") && l.contains("0.50")), "{seen:?}");
    drop(stdin);
    let rest: Vec<String> = lines.map(Result::unwrap).collect();
    assert!(rest.iter().any(|l| l.contains("2.000000000")), "{rest:?}");
    assert!(child.wait().unwrap().success());
    // Many CPUs and intervals: read in one pass with hashed lookups.
    let mut text = String::new();
    for i in 1..=50 {
        for cpu in 0..200 {
            text.push_str(&format!(
                "{i}.000000000,CPU{cpu},1000,,CPU_CYCLES,1000,100.00,,\n{i}.000000000,CPU{cpu},{},,INSTR_EXEC,1000,100.00,,\n",
                400 + cpu
            ));
        }
    }
    let r = run(
        &os(&["metrics", "--pmu", "arm1176", "-M", "ipc", "--json", "-"]),
        Input::Bytes(text.into_bytes()),
        Sink::Pipe,
        Sink::Pipe,
        None,
    );
    exits(&r, 0, "20,000 rows");
    let v: Value = serde_json::from_slice(&r.stdout).expect("one JSON document");
    assert_eq!(v["results"].as_array().unwrap().len(), 50 * 200);
    assert_eq!(v["results"][201]["unit"], "CPU1");
    assert_eq!(v["results"][201]["metrics"][0]["value"], 0.401);
}

/// Row 8: errors quote bounded excerpts.
#[test]
fn an_error_never_repeats_a_huge_input() {
    let dir = scratch("excerpt");
    let cfg = dir.join("long.toml");
    std::fs::write(&cfg, format!("[core]\nmemory_cycles = \"{}\"\n", "9".repeat(900_000))).unwrap();
    let r = plain(&["stat", "--machine-config", &cfg.display().to_string()]);
    exits(&r, 2, "a 900 KB TOML value");
    assert!(r.stderr_bytes < 4096, "{} bytes of stderr", r.stderr_bytes);
    assert!(r.stderr.contains("line 2, column 17"), "{}", r.stderr);
    let long_event = format!("{}X", "A".repeat(100_000));
    let r = plain(&["encode", &long_event]);
    exits(&r, 2, "a 100,000-character event");
    assert!(r.stderr_bytes < 4096, "{} bytes of stderr", r.stderr_bytes);
    // Montecito's dotted unit-mask names (`ALL.ALL_PRED`) are put back together from
    // the tokens: 60,000 bytes of dotted tokens are refused at once, not after the
    // minutes a search over every run of tokens took (found by the `describe` target).
    let dotted = format!("montecito::ENCBR_MISPRED_DETAIL.{}X", "A.".repeat(30_000));
    let r = plain(&["encode", &dotted]);
    exits(&r, 2, "60,000 bytes of dotted unit masks");
    assert!(r.elapsed < Duration::from_secs(10), "{:?}", r.elapsed);
}

/// Row 9: Ctrl-C while the input is blocked, and while the machine runs.
#[test]
fn ctrl_c_is_honoured_while_input_blocks() {
    let r = interrupted(&["stat", "--trace", "-", "-e", "INSTR_EXEC"], Duration::from_millis(500));
    exits(&r, 130, "a silent standard input");
    assert!(r.after_interrupt.unwrap() < Duration::from_secs(5), "{:?}", r.after_interrupt);
    assert!(r.stdout_text().contains("INSTR_EXEC"), "the counts so far are printed: {}", r.stdout_text());
    let dir = scratch("fifo");
    let fifo = dir.join("trace");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let r = interrupted(&["stat", "--trace", &fifo.display().to_string()], Duration::from_millis(500));
    exits(&r, 130, "a FIFO nobody writes");
    let r = interrupted(&["stat", "--pmu", "montecito", "-w", "stream", "--cycles", "1e12"], Duration::from_millis(500));
    exits(&r, 130, "a long run");
    assert!(r.stdout_text().contains("interrupted after"), "{}", r.stdout_text());
}

/// Row 10: output files are written whole, never interleaved.
#[test]
fn concurrent_writers_leave_one_whole_file() {
    let dir = scratch("concurrent");
    let out = dir.join("same.out").display().to_string();
    let runs: Vec<_> = (1..=12)
        .map(|i| {
            let out = out.clone();
            std::thread::spawn(move || plain(&["stat", "--json", "-o", &out, "--cycles", &format!("{}e5", i * 3), "-e", "INSTR_EXEC"]))
        })
        .collect();
    for r in runs {
        exits(&r.join().unwrap(), 0, "a concurrent writer");
    }
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).expect("whole JSON");
    assert_eq!(v["command"], "stat");
    let left: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(left, [OsString::from("same.out")], "no temporary file is left");
}

/// Rows 11-13: export writes only what it makes, under safe and distinct names.
#[test]
fn export_refuses_links_empty_paths_and_name_collisions() {
    let dir = scratch("export");
    let victim = dir.join("victim");
    std::fs::write(&victim, "keep").unwrap();
    std::fs::create_dir_all(dir.join("out/arm")).unwrap();
    std::os::unix::fs::symlink(&victim, dir.join("out/arm/mapfile.csv")).unwrap();
    let r = plain(&["export", "perf-json", "arm1176", &dir.join("out").display().to_string()]);
    exits(&r, 2, "a planted link");
    assert!(r.stderr.contains("mapfile.csv is a symbolic link"), "{}", r.stderr);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
    assert!(!dir.join("out/arm/arm").exists(), "nothing written");
    std::fs::create_dir_all(dir.join("elsewhere")).unwrap();
    std::fs::create_dir_all(dir.join("out2")).unwrap();
    std::os::unix::fs::symlink(dir.join("elsewhere"), dir.join("out2/arm")).unwrap();
    exits(&plain(&["export", "perf-json", "arm1176", &dir.join("out2").display().to_string()]), 2, "a linked directory");
    assert_eq!(std::fs::read_dir(dir.join("elsewhere")).unwrap().count(), 0);
    exits(&plain(&["export", "perf-json", "arm1176", &victim.display().to_string()]), 2, "a file as the directory");
    // Categories named `Metrics` and `!!!` get files of their own.
    let table = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../data/arm11/events.toml")).unwrap();
    let mut n = 0;
    let table: String = table
        .lines()
        .map(|l| {
            if l.starts_with("code = ") {
                n += 1;
                format!("{l}\nattrs = [{{ key = \"category\", value = \"{}\" }}]", if n % 2 == 0 { "Metrics" } else { "!!!" })
            } else {
                l.to_string()
            }
        })
        .filter(|l| !l.starts_with("attrs = [") || l.contains("category"))
        .collect::<Vec<_>>()
        .join("\n");
    let events = dir.join("categories.toml");
    std::fs::write(&events, table).unwrap();
    let r = plain(&[
        "export",
        "perf-json",
        "arm1176",
        &dir.join("out3").display().to_string(),
        "--events-file",
        &events.display().to_string(),
        "--json",
    ]);
    exits(&r, 0, "categories that would collide");
    let v: Value = serde_json::from_slice(&r.stdout).unwrap();
    let names: Vec<&str> = v["files"].as_array().unwrap().iter().map(|f| f.as_str().unwrap().rsplit('/').next().unwrap()).collect();
    assert!(names.contains(&"metrics-events.json") && names.contains(&"other.json") && names.contains(&"metrics.json"), "{names:?}");
    // Exporting again says what it replaced.
    let again =
        plain(&["export", "perf-json", "arm1176", &dir.join("out3").display().to_string(), "--events-file", &events.display().to_string()]);
    exits(&again, 0, "again");
    assert!(again.stdout_text().contains("(replaced)"), "{}", again.stdout_text());
}

/// Row 14: an import refuses a JSON file it cannot use instead of dropping its events.
#[test]
fn import_refuses_an_unusable_json_file_naming_it() {
    let dir = scratch("import");
    let model = model(&dir, r#"[{"ArchStdEvent": "L1D_CACHE"}]"#);
    std::fs::write(dir.join("arch/arm64/armv8-common-and-microarch.json"), b"[\xff]").unwrap();
    let r = plain(&["import", "perf-json", &model.display().to_string(), "--pmu", "arm1176"]);
    exits(&r, 2, "a non-UTF-8 standard events file");
    assert!(r.stderr.contains("armv8-common-and-microarch.json is not UTF-8 text"), "{}", r.stderr);
    std::fs::remove_file(dir.join("arch/arm64/armv8-common-and-microarch.json")).unwrap();
    std::os::unix::fs::symlink(dir.join("gone"), dir.join("arch/arm64/dangling.json")).unwrap();
    let r = plain(&["import", "perf-json", &model.display().to_string(), "--pmu", "arm1176"]);
    exits(&r, 1, "a JSON file that cannot be read");
    assert!(r.stderr.contains("dangling.json"), "{}", r.stderr);
}

/// Row 15: sysfs discovery stays inside its tree.
#[test]
fn sysfs_links_out_of_the_tree_and_odd_files_are_refused() {
    let dir = scratch("sysfs");
    let pmu = dir.join("bus/event_source/devices/armv6_1176");
    std::fs::create_dir_all(&pmu).unwrap();
    let secret = dir.join("secret");
    std::fs::write(&secret, "root:$6$hash").unwrap();
    let outside = scratch("sysfs-outside").join("shadow");
    std::fs::write(&outside, "root:$6$hash").unwrap();
    std::os::unix::fs::symlink(&outside, pmu.join("type")).unwrap();
    let live = |root: &Path| plain(&["stat", "--live", "--sysfs", &root.display().to_string(), "--", "true"]);
    let r = live(&dir);
    exits(&r, 1, "a link out of the tree");
    assert!(r.stderr.contains("outside the sysfs root") && !r.stderr.contains("$6$"), "{}", r.stderr);
    std::fs::remove_file(pmu.join("type")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", pmu.join("type")).unwrap();
    exits(&live(&dir), 1, "a device as an attribute");
    std::fs::remove_file(pmu.join("type")).unwrap();
    std::fs::write(pmu.join("type"), "7".repeat(50_000)).unwrap();
    let r = live(&dir);
    exits(&r, 2, "a 50 KB attribute");
    assert!(r.stderr_bytes < 2048, "{}", r.stderr);
}

/// Row 16: what looked like success was not.
#[test]
fn misleading_successes_are_errors_or_do_what_they_say() {
    let dir = scratch("misleading");
    let r =
        run_in(Some(&dir), &os(&["stat", "-o", "-", "--cycles", "1e6", "-e", "INSTR_EXEC"]), Input::Silent, Sink::Pipe, Sink::Pipe, None);
    exits(&r, 0, "-o -");
    assert!(r.stdout_text().contains("INSTR_EXEC") && !dir.join("-").exists());
    // A device or a link is written through, never replaced by a file.
    exits(&plain(&["stat", "-o", "/dev/null", "--cycles", "1e6"]), 0, "-o /dev/null");
    exits(&plain(&["record", "-o", "/dev/null", "--cycles", "1e6"]), 0, "record -o /dev/null");
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::metadata("/dev/null").unwrap().file_type().is_char_device(), "/dev/null is still the device");
    assert!(!Path::new("/dev/null.old").exists());
    let real = dir.join("real.txt");
    std::fs::write(&real, "old").unwrap();
    let link = dir.join("link.txt");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    exits(&plain(&["stat", "-o", &link.display().to_string(), "--cycles", "1e6", "-e", "INSTR_EXEC"]), 0, "-o a link");
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "the link stays a link");
    assert!(std::fs::read_to_string(&real).unwrap().contains("INSTR_EXEC"), "its file has the report");
    let r = plain(&["stat", "-o", "/nonexistent-pmukit/x", "--cycles", "1e12"]);
    exits(&r, 1, "-o into a missing directory");
    assert!(r.elapsed < Duration::from_secs(10), "checked before the run");
    let r = plain(&["stat", "--seed", "18446744073709551615", "-r", "3", "--cycles", "1e5"]);
    exits(&r, 2, "seeds that would wrap");
    assert!(r.stderr.contains("--seed 18446744073709551613 or less"), "{}", r.stderr);
    let r = plain(&["metrics", "--expr", "A * B", "A=1e308", "B=1e308", "--json"]);
    exits(&r, 0, "an overflow");
    let v: Value = serde_json::from_slice(&r.stdout).unwrap();
    assert!(v["notes"][0].as_str().unwrap().contains("overflows"), "{v}");
    for (count, why) in [("-5", "is negative"), ("18446744073709551616", "does not fit 64 bits")] {
        let csv = dir.join("counts.csv");
        std::fs::write(&csv, format!("{count},,INSTR_EXEC,1000,100.00,,\n1000,,CPU_CYCLES,1000,100.00,,\n")).unwrap();
        let r = plain(&["metrics", "--pmu", "arm1176", &csv.display().to_string()]);
        exits(&r, 2, count);
        assert!(r.stderr.contains(why), "{}", r.stderr);
    }
    let r = plain(&["mmustat", "decode", &dir.display().to_string()]);
    exits(&r, 1, "a directory as a dump");
}

/// Row 16: recordings whose fields contradict each other.
#[test]
fn contradictory_recordings_are_refused_naming_the_field() {
    let dir = scratch("recordings");
    let file = dir.join("good.json");
    exits(&plain(&["record", "--cycles", "1e6", "-c", "500", "-w", "stream", "-o", &file.display().to_string()]), 0, "record");
    let good: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let report = |v: &Value| run(&os(&["report", "-"]), Input::Bytes(v.to_string().into_bytes()), Sink::Pipe, Sink::Pipe, None);
    let mut threads = good.clone();
    threads["threads"] = u64::MAX.into();
    let mut period = good.clone();
    period["period"] = 0.into();
    let mut events = good.clone();
    events["events"] = Value::Array(vec![good["events"][0].clone(); 100_000]);
    let mut counts = good.clone();
    counts["events"][0]["count"] = 1.into();
    for (v, field) in [(threads, "\"threads\""), (period, "\"period\""), (events, "\"events\": 100000 events"), (counts, "\"events\"")] {
        let r = report(&v);
        exits(&r, 2, field);
        assert!(r.stderr.contains(field), "{field}: {}", r.stderr);
    }
    // A sorted copy (jq -S) is still a recording.
    exits(&report(&good), 0, "members in alphabetical order");
}

/// Row 9: a Ctrl-C sent to pmu alone while it counts a command is passed on to the
/// command, whose status pmu then exits with.
#[test]
fn ctrl_c_reaches_a_live_command() {
    let r = interrupted(&["stat", "--live", "-e", "task-clock", "--", "sleep", "30"], Duration::from_millis(500));
    exits(&r, 130, "pmu stat --live -- sleep 30, Ctrl-C");
    assert!(r.after_interrupt.unwrap() < Duration::from_secs(5), "{:?}", r.after_interrupt);
    assert!(r.stdout_text().contains("task-clock"), "{}", r.stdout_text());
}

/// Row 16: a system-wide live count ended by Ctrl-C says so.
#[test]
fn a_system_wide_count_ended_by_ctrl_c_exits_130() {
    let r = interrupted(&["stat", "--live", "-a", "-e", "cpu-clock"], Duration::from_millis(300));
    if r.stderr.contains("cannot open") {
        // perf_event_paranoid forbids a system-wide count to this user.
        return;
    }
    exits(&r, 130, "pmu stat --live -a, Ctrl-C");
    assert!(r.stdout_text().contains("cpu-clock"), "{}", r.stdout_text());
}
