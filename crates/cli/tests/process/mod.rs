//! Running `pmu` as a hostile environment would (issue 39): standard streams that are
//! full, closed or endless, a Ctrl-C at a chosen moment, and the peak memory of the
//! process: the kernel's high-water mark of its resident memory since it started
//! `pmu` (VmHWM in /proc/PID/status), read every 5 ms while it runs. (wait4's
//! ru_maxrss would carry this test process's own peak: a spawned child runs on its
//! parent's memory until exec, and exec keeps that memory's high-water mark.)

use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What a standard input is.
pub enum Input {
    Bytes(Vec<u8>),
    File(PathBuf),
    /// A pipe that stays open and silent until the process ends.
    Silent,
}

/// Where a standard output or error goes.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Sink {
    /// Collected, and counted in full.
    Pipe,
    /// `/dev/full`: every write fails with ENOSPC.
    Full,
    /// A pipe whose reader is gone: every write fails with EPIPE.
    Closed,
}

pub struct Run {
    pub code: Option<i32>,
    pub signal: Option<i32>,
    /// What was written (at most the first 16 MB is kept), and how much in all.
    pub stdout: Vec<u8>,
    pub stdout_bytes: u64,
    pub stderr: String,
    pub stderr_bytes: u64,
    /// The process's peak resident memory, KB (the last high-water mark read).
    pub max_rss_kb: u64,
    pub elapsed: Duration,
    /// How long after the Ctrl-C it ended, when one was sent (not when the process
    /// had ended before it was due).
    pub after_interrupt: Option<Duration>,
}

impl Run {
    pub fn stdout_text(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }
}

/// The first words of the panic hook's line (`BUG` in main.rs).
pub const BUG: &str = "internal error";

const KEPT: usize = 16 << 20;

fn sink(kind: Sink) -> (Stdio, Option<std::io::PipeReader>) {
    match kind {
        Sink::Pipe => {
            let (r, w) = std::io::pipe().expect("pipe");
            (Stdio::from(w), Some(r))
        }
        Sink::Full => (Stdio::from(std::fs::OpenOptions::new().write(true).open("/dev/full").expect("/dev/full")), None),
        Sink::Closed => {
            let (r, w) = std::io::pipe().expect("pipe");
            drop(r);
            (Stdio::from(w), None)
        }
    }
}

/// Reads a pipe to its end on a thread: the first [`KEPT`] bytes and the count.
fn collect(r: Option<std::io::PipeReader>) -> std::thread::JoinHandle<(Vec<u8>, u64)> {
    std::thread::spawn(move || {
        let Some(mut r) = r else { return (Vec::new(), 0) };
        let (mut kept, mut total) = (Vec::new(), 0u64);
        let mut buf = [0u8; 1 << 16];
        while let Ok(n) = r.read(&mut buf) {
            if n == 0 {
                break;
            }
            total += n as u64;
            let room = KEPT.saturating_sub(kept.len()).min(n);
            kept.extend_from_slice(&buf[..room]);
        }
        (kept, total)
    })
}

/// Runs `pmu args` with `stdin`, `stdout` and `stderr` as given, in `dir`; sends
/// SIGINT after `interrupt` if given.
pub fn run_in(dir: Option<&Path>, args: &[OsString], stdin: Input, stdout: Sink, stderr: Sink, interrupt: Option<Duration>) -> Run {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pmu"));
    cmd.args(args);
    // Ctrl-C as a terminal sends it: a test run started in the background (`cmd &` in
    // a script) hands its children SIGINT ignored, and the Ctrl-C below would then
    // reach a command that keeps the default action as nothing.
    // SAFETY: signal(2) is async-signal-safe, and the closure touches nothing else.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut cmd, || {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            Ok(())
        });
    }
    if let Some(d) = dir {
        cmd.current_dir(d);
    }
    let mut feed = None;
    let mut silent = None;
    match stdin {
        Input::Bytes(b) => {
            cmd.stdin(Stdio::piped());
            feed = Some(b);
        }
        Input::File(p) => {
            cmd.stdin(Stdio::from(std::fs::File::open(p).expect("stdin file")));
        }
        Input::Silent => {
            let (r, w) = std::io::pipe().expect("pipe");
            cmd.stdin(Stdio::from(r));
            silent = Some(w);
        }
    }
    let (out, out_r) = sink(stdout);
    let (err, err_r) = sink(stderr);
    cmd.stdout(out).stderr(err);
    let started = Instant::now();
    // Reaped below by waitpid, so that the watcher reads its memory while it lives.
    #[allow(clippy::zombie_processes)]
    let mut child = cmd.spawn().expect("run pmu");
    // The parent's copies of the write ends must close for the readers to see the end.
    drop(cmd);
    let pid = child.id() as i32;
    let writer = feed.map(|bytes| {
        let mut stdin = child.stdin.take().expect("stdin");
        std::thread::spawn(move || {
            // A command that does not read its input closes the pipe: not an error.
            let _ = stdin.write_all(&bytes);
        })
    });
    let out_t = collect(out_r);
    let err_t = collect(err_r);
    // The Ctrl-C comes after `interrupt`, unless the process has ended by then.
    let (ended_tx, ended_rx) = std::sync::mpsc::channel::<()>();
    let sent = interrupt.map(|after| {
        std::thread::spawn(move || {
            if ended_rx.recv_timeout(after).is_ok() {
                return None;
            }
            // SAFETY: kill(2) on the child's pid, which the parent has not yet reaped.
            unsafe { libc::kill(pid, libc::SIGINT) };
            Some(Instant::now())
        })
    });
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let watch = {
        let done = done.clone();
        std::thread::spawn(move || {
            let mut most = 0;
            while !done.load(std::sync::atomic::Ordering::Relaxed) {
                if let Some(kb) = high_water_kb(pid) {
                    most = most.max(kb);
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            most
        })
    };
    let mut status = 0;
    // SAFETY: waits for this child only; `status` is valid for writes.
    let waited = unsafe { libc::waitpid(pid, &mut status, 0) };
    assert_eq!(waited, pid, "waitpid");
    let ended = Instant::now();
    let _ = ended_tx.send(());
    done.store(true, std::sync::atomic::Ordering::Relaxed);
    let max_rss_kb = watch.join().expect("memory watcher");
    drop(silent);
    if let Some(w) = writer {
        let _ = w.join();
    }
    let (stdout, stdout_bytes) = out_t.join().expect("stdout reader");
    let (stderr, stderr_bytes) = err_t.join().expect("stderr reader");
    let after_interrupt = sent.and_then(|t| t.join().expect("interrupter")).map(|at| ended.saturating_duration_since(at));
    let (code, signal) =
        if libc::WIFEXITED(status) { (Some(libc::WEXITSTATUS(status)), None) } else { (None, Some(libc::WTERMSIG(status))) };
    Run {
        code,
        signal,
        stdout,
        stdout_bytes,
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
        stderr_bytes,
        max_rss_kb,
        elapsed: started.elapsed(),
        after_interrupt,
    }
}

/// VmHWM of a running process, KB.
fn high_water_kb(pid: i32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// `run_in` from the current directory.
pub fn run(args: &[OsString], stdin: Input, stdout: Sink, stderr: Sink, interrupt: Option<Duration>) -> Run {
    run_in(None, args, stdin, stdout, stderr, interrupt)
}

/// Arguments as the OS takes them.
pub fn os(args: &[&str]) -> Vec<OsString> {
    args.iter().map(OsString::from).collect()
}

/// A fresh directory of this test process.
pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("pmukit-hostile-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch directory");
    dir
}
