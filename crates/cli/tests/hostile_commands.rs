//! Issue 39: whole commands with random options, hostile files (devices, FIFOs, links
//! that dangle, loop or lead to a device, directories, names that are not UTF-8,
//! random bytes) and standard streams that are full or closed. Whatever the mix, pmu
//! exits 0, 1, 2 or 130, never reaches its panic hook, never dies of a signal, holds
//! less than 300 MB and writes less than 64 KB of diagnostics; an endless input that
//! reads as valid (zeros, to the MMU statistics decoder) runs until Ctrl-C ends it.

#[allow(dead_code)]
mod process;

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use process::{run_in, scratch, Input, Sink, BUG};
use proptest::prelude::*;

/// The hostile files of one case, made fresh in `dir`: the FIFO is read from where
/// the command would write (`output`), and written to where it would read.
fn files(dir: &Path, bytes: &[u8], output: bool) -> Vec<PathBuf> {
    let random = dir.join("random");
    std::fs::write(&random, bytes).unwrap();
    let odd = dir.join(OsString::from_vec(b"name-\xff\xfe".to_vec()));
    std::fs::write(&odd, bytes).unwrap();
    let to_zero = dir.join("to-zero");
    std::os::unix::fs::symlink("/dev/zero", &to_zero).unwrap();
    let dangling = dir.join("dangling");
    std::os::unix::fs::symlink(dir.join("nothing"), &dangling).unwrap();
    let looped = dir.join("loop");
    std::os::unix::fs::symlink(&looped, &looped).unwrap();
    let fifo = dir.join("fifo");
    assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    // The FIFO's other end: the bytes and then the end for a reader, or a reader to
    // the end for a writer. One the command never opens leaves this thread waiting,
    // which ends with the test process.
    let (f, b) = (fifo.clone(), bytes.to_vec());
    std::thread::spawn(move || {
        if output {
            if let Ok(mut r) = std::fs::File::open(f) {
                let _ = std::io::copy(&mut r, &mut std::io::sink());
            }
        } else if let Ok(mut w) = std::fs::OpenOptions::new().write(true).open(f) {
            let _ = std::io::Write::write_all(&mut w, &b);
        }
    });
    vec![
        random,
        odd,
        "/dev/zero".into(),
        "/dev/null".into(),
        to_zero,
        dangling,
        looped,
        fifo,
        dir.to_path_buf(),
        dir.join("missing/x"),
        "-".into(),
    ]
}

/// The commands whose file argument is written, not read.
const WRITES: [usize; 4] = [7, 8, 9, 10];

/// A command of `kind` on `file` (the output files it writes go to `out`).
fn command(kind: usize, file: &Path, out: &Path, flag: bool) -> Vec<OsString> {
    let f = file.as_os_str().to_os_string();
    let o = out.as_os_str().to_os_string();
    let short = ["--cycles", "20000"];
    let mut args: Vec<OsString> = match kind {
        0 => vec!["stat".into(), "--trace".into(), f],
        1 => vec!["stat".into(), "--machine-config".into(), f],
        2 => vec!["list".into(), "--events-file".into(), f],
        3 => vec!["metrics".into(), f],
        4 => vec!["report".into(), f],
        5 => vec!["mmustat".into(), "decode".into(), f],
        6 => vec!["import".into(), "perf-json".into(), f, "--pmu".into(), "arm1176".into(), "-o".into(), o],
        7 => vec!["export".into(), "perf-json".into(), "arm1176".into(), f],
        8 => vec!["stat".into(), "-o".into(), f],
        9 => vec!["record".into(), "-o".into(), f, "--cycles".into(), "1e5".into()],
        10 => vec!["report".into(), "--svg".into(), f, "/nonexistent-pmukit".into()],
        11 => vec!["stat".into(), "-I".into(), "1".into(), "-x".into(), ",".into(), "-o".into(), o, "--trace".into(), f],
        _ => vec!["stat".into(), "-r".into(), "3".into(), "-M".into(), "ipc".into(), "--trace".into(), f],
    };
    if args.first().is_some_and(|a| a == "stat") {
        args.extend(short.iter().map(OsString::from));
    }
    if flag {
        args.push("--json".into());
    }
    args
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn whole_commands_in_a_hostile_environment(
        kind in 0usize..13,
        which in 0usize..11,
        bytes in proptest::collection::vec(any::<u8>(), 0..2048),
        stdout in prop_oneof![Just(Sink::Pipe), Just(Sink::Full), Just(Sink::Closed)],
        stderr in prop_oneof![Just(Sink::Pipe), Just(Sink::Full), Just(Sink::Closed)],
        json in any::<bool>(),
        stdin_zero in any::<bool>(),
    ) {
        let dir = scratch(&format!("cmd-{kind}-{which}"));
        let hostile = files(&dir, &bytes, WRITES.contains(&kind));
        let file = &hostile[which % hostile.len()];
        let args = command(kind, file, &dir.join("out.toml"), json);
        let stdin = if stdin_zero { Input::File("/dev/zero".into()) } else { Input::Bytes(bytes.clone()) };
        // An endless input that reads as valid (zeros are MMU statistics buffers) may
        // run until Ctrl-C, which must then end it; anything else has a deadline
        // against a hang, since no case needs more than seconds.
        let endless = kind == 5 && (which == 2 || which == 4 || (which == 10 && stdin_zero));
        let deadline = if endless { Duration::from_secs(2) } else { Duration::from_secs(60) };
        // Run in the scratch directory: a relative path such as `-` names a file there,
        // never one in the source tree.
        let r = run_in(Some(&dir), &args, stdin, stdout, stderr, Some(deadline));
        let shown: Vec<String> = args.iter().map(|a| a.to_string_lossy().chars().take(60).collect()).collect();
        prop_assert!(!r.stderr.contains(BUG) && !r.stderr.contains("panicked"), "{shown:?} panicked: {}", r.stderr);
        match r.after_interrupt {
            Some(after) if endless => {
                prop_assert!(after < Duration::from_secs(5), "{shown:?} went on {after:?} after Ctrl-C");
                prop_assert!(r.signal == Some(libc::SIGINT) || r.code == Some(130), "{shown:?} ended {:?} {:?}", r.code, r.signal);
                return Ok(());
            }
            Some(_) => prop_assert!(false, "{shown:?} ran to the deadline"),
            None => {}
        }
        prop_assert!(r.signal.is_none(), "{shown:?} died of signal {:?}: {}", r.signal, r.stderr);
        prop_assert!(matches!(r.code, Some(0 | 1 | 2 | 130)), "{shown:?} exited {:?}: {}", r.code, r.stderr);
        prop_assert!(r.max_rss_kb < 300_000, "{shown:?} held {} KB", r.max_rss_kb);
        prop_assert!(r.stderr_bytes < 64 << 10, "{shown:?} wrote {} bytes of diagnostics", r.stderr_bytes);
        if r.code == Some(0) || stderr != Sink::Pipe {
            return Ok(());
        }
        prop_assert!(!r.stderr.trim().is_empty(), "{shown:?} failed without a word");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
