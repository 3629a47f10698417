//! What the command-line tests share: running the `pmu` binary.

use std::ffi::OsStr;
use std::io::Write;
use std::process::{Command, Output, Stdio};

/// Run `pmu` with `args`, `stdin` on its standard input, and collect its output.
pub fn pmu_with_input<S: AsRef<OsStr>>(args: &[S], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_pmu"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run pmu");
    // A command that does not read its input closes the pipe: not an error here.
    let _ = child.stdin.take().expect("stdin").write_all(stdin);
    child.wait_with_output().expect("pmu output")
}
