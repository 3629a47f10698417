//! Output files. A regular file (or a name not yet taken) is written to a temporary
//! file in its directory and renamed into place at the end, so that a reader (or
//! another `pmu` writing the same name) never sees a partial or interleaved file, and
//! a failed run leaves the old file as it was; the temporary file is made before any
//! work starts, which checks that the target can be created. Anything else that
//! exists (a device such as /dev/null, a FIFO, a terminal) is written to as it is:
//! replacing it would replace the device. A link is followed to what it names; `-`
//! is standard output.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use pmukit_core::input::io_message;
use tempfile::NamedTempFile;

use crate::failure::{runtime, usage, Failure};

/// Temporary files not yet renamed into place: what an exit in the middle of a run
/// (a second Ctrl-C) removes.
static PENDING: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Ends the process with `code`, removing the temporary files of outputs not yet
/// committed (`process::exit` runs no destructors).
pub fn exit(code: i32) -> ! {
    if let Ok(pending) = PENDING.lock() {
        for p in pending.iter() {
            let _ = std::fs::remove_file(p);
        }
    }
    std::process::exit(code)
}

/// Where an output goes.
pub enum Output {
    Stdout,
    /// A regular file, written beside its place (`path`, a link's target) and renamed
    /// into it; `given` is the name it was given.
    File {
        given: PathBuf,
        path: PathBuf,
        temp: NamedTempFile,
    },
    /// A device, FIFO or other special file, written as it is.
    Special {
        path: PathBuf,
        file: File,
    },
}

/// What committing an output did to a file that was there before.
pub enum Previous {
    Absent,
    Replaced,
    /// Kept under this name (`pmu record`'s `.old`).
    KeptAs(PathBuf),
}

impl Output {
    /// The output `path` names: standard output for `-`; a special file opened for
    /// writing; else a temporary file beside the regular file it will replace, made
    /// now. `what` names the output in messages (`-o`, `--svg`).
    pub fn create(path: &Path, what: &str) -> Result<Output, Failure> {
        if path.as_os_str() == "-" {
            return Ok(Output::Stdout);
        }
        if path.as_os_str().is_empty() {
            return Err(usage(format!("{what} is empty: give a file name, or - for standard output")));
        }
        let cannot = |e: std::io::Error| runtime(format!("cannot create {}: {}", path.display(), io_message(&e)));
        // A link is followed: the file it names is the one replaced (or written).
        let target = match std::fs::canonicalize(path) {
            Ok(real) => real,
            Err(_) => path.to_path_buf(),
        };
        match std::fs::metadata(&target) {
            Ok(m) if m.is_dir() => return Err(usage(format!("{what} {} is a directory: give a file name", path.display()))),
            Ok(m) if !m.is_file() => {
                let file = std::fs::OpenOptions::new().write(true).open(&target).map_err(cannot)?;
                return Ok(Output::Special { path: path.to_path_buf(), file });
            }
            _ => {}
        }
        // A link that names nothing yet: the file is made where it points.
        if path.symlink_metadata().is_ok_and(|m| m.file_type().is_symlink()) && !target.exists() {
            let file = File::create(path).map_err(cannot)?;
            return Ok(Output::Special { path: path.to_path_buf(), file });
        }
        let name = target.file_name().ok_or_else(|| usage(format!("{what} {} names no file", path.display())))?;
        let dir = match target.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let mut builder = tempfile::Builder::new();
        let mut prefix = std::ffi::OsString::from(".");
        prefix.push(name);
        prefix.push(".");
        builder.prefix(&prefix).suffix(".tmp");
        // As a file made by open(2) with 0666 would be: the umask decides (tempfile's
        // own default is 0600).
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            builder.permissions(std::fs::Permissions::from_mode(0o666));
        }
        let temp = builder.tempfile_in(dir).map_err(cannot)?;
        if let Ok(mut pending) = PENDING.lock() {
            pending.push(temp.path().to_path_buf());
        }
        Ok(Output::File { given: path.to_path_buf(), path: target, temp })
    }

    pub fn is_stdout(&self) -> bool {
        matches!(self, Output::Stdout)
    }

    /// The target's name for messages.
    pub fn name(&self) -> String {
        match self {
            Output::Stdout => "standard output".to_string(),
            Output::File { given: path, .. } | Output::Special { path, .. } => path.display().to_string(),
        }
    }

    /// Writes `bytes`. Standard output closed early (`| head`) is not a failure.
    pub fn write_all(&mut self, bytes: &[u8]) -> Result<(), Failure> {
        let name = self.name();
        let result = match self {
            Output::Stdout => {
                let mut out = std::io::stdout().lock();
                match out.write_all(bytes).and_then(|()| out.flush()) {
                    Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
                    r => r,
                }
            }
            Output::File { temp, .. } => temp.as_file_mut().write_all(bytes),
            Output::Special { file, .. } => file.write_all(bytes),
        };
        result.map_err(|e| runtime(format!("cannot write {name}: {}", io_message(&e))))
    }

    /// Puts the file in place (standard output and special files: flushes them).
    pub fn commit(self) -> Result<Previous, Failure> {
        self.finish(false)
    }

    /// As `commit`, keeping a regular file already there as `FILE.old`, as perf keeps
    /// `perf.data.old`.
    pub fn commit_keeping_old(self) -> Result<Previous, Failure> {
        self.finish(true)
    }

    fn finish(self, keep_old: bool) -> Result<Previous, Failure> {
        let name = self.name();
        let fail = |e: std::io::Error| runtime(format!("cannot write {name}: {}", io_message(&e)));
        let (path, temp) = match self {
            Output::Stdout => {
                let _ = std::io::stdout().flush();
                return Ok(Previous::Absent);
            }
            Output::Special { mut file, .. } => {
                file.flush().map_err(fail)?;
                return Ok(Previous::Absent);
            }
            Output::File { path, temp, .. } => (path, temp),
        };
        temp.as_file().sync_all().map_err(fail)?;
        let existed = path.is_file();
        let mut previous = if existed { Previous::Replaced } else { Previous::Absent };
        if keep_old && existed {
            let mut old = path.clone().into_os_string();
            old.push(".old");
            let old = PathBuf::from(old);
            // A link keeps the old file readable under both names until the rename
            // replaces the first.
            let _ = std::fs::remove_file(&old);
            std::fs::hard_link(&path, &old).or_else(|_| std::fs::copy(&path, &old).map(|_| ())).map_err(fail)?;
            previous = Previous::KeptAs(old);
        }
        let temp_path = temp.path().to_path_buf();
        temp.persist(&path).map_err(|e| fail(e.error))?;
        if let Ok(mut pending) = PENDING.lock() {
            pending.retain(|p| *p != temp_path);
        }
        Ok(previous)
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self {
            Output::Stdout => std::io::stdout().write(buf),
            Output::File { temp, .. } => temp.as_file_mut().write(buf),
            Output::Special { file, .. } => file.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Output::Stdout => std::io::stdout().flush(),
            Output::File { temp, .. } => temp.as_file_mut().flush(),
            Output::Special { file, .. } => file.flush(),
        }
    }
}
