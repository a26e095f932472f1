//! Where `-o FILE` and `--split DIR` write, without ever destroying what is not theirs.
//!
//! whose runs as root in CI pipelines, so "write a temporary file and rename it over the
//! target" must only ever replace a regular file: renaming over `/dev/full` replaces the
//! device node, over `/dev/stdout` the symlink, over the input the data just read. The rules:
//! - a new path, or an existing regular file (not a symlink): written to a temporary file in the
//!   same directory and renamed into place, so a reader never sees half a file and a failed
//!   write leaves the old file as it was;
//! - anything else (device, FIFO, socket, `/dev/fd/N` from `>(cmd)`, a symlink): opened and
//!   written directly, like a shell's `>` does, with write errors reported;
//! - an output that is one of the inputs is refused before anything is written;
//! - temporary files and folders are removed on error and on SIGINT, SIGTERM and SIGHUP (see
//!   [`Cleanup`]).

use crate::error::{Error, Result};
use std::fs::{File, OpenOptions};
use std::io::{IsTerminal, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Mutex, Once, OnceLock};

use crate::render::{ColorChoice, Terminal};

/// `--color`, set once from the command line before the command runs (see [`choose_color`]).
static COLOR_CHOICE: OnceLock<ColorChoice> = OnceLock::new();

/// Records `--color`; the first call wins (main calls it once, before running the plan).
pub fn choose_color(choice: ColorChoice) {
    let _ = COLOR_CHOICE.set(choice);
}

/// The width of a layout when nothing says otherwise: a classic terminal.
pub const DEFAULT_WIDTH: usize = 80;
/// Narrower than this, tables cannot shorten their names usefully; `COLUMNS=20` is taken as 40.
const MIN_WIDTH: usize = 40;

/// How standard output or a file is written: colour and width, decided once.
///
/// Colour on standard output follows `--color` and, with `auto`, the environment exactly as
/// cargo does (anstream's rules): `NO_COLOR` turns it off, `CLICOLOR_FORCE` on (so
/// `whose report … | less -R` keeps it), `CLICOLOR=0` off, and otherwise a terminal that is
/// not `TERM=dumb` gets it. A file (`-o`) gets colour only with `--color always`.
///
/// Width: `COLUMNS` when set (the usual override), else the terminal's width when standard
/// output is one, else [`DEFAULT_WIDTH`].
pub fn terminal(to_file: bool) -> Terminal {
    let choice = COLOR_CHOICE.get().copied().unwrap_or_default();
    let stdout = std::io::stdout();
    let color = match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto if to_file => false,
        ColorChoice::Auto => anstream::AutoStream::choice(&stdout) != anstream::ColorChoice::Never,
    };
    let from_env = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|&c| c > 0);
    let from_tty = (!to_file && stdout.is_terminal())
        .then(|| terminal_size::terminal_size_of(&stdout))
        .flatten()
        .map(|(w, _)| w.0 as usize);
    Terminal {
        color,
        truecolor: color && crate::render::palette::terminal_truecolor(),
        width: from_env
            .or(from_tty)
            .unwrap_or(DEFAULT_WIDTH)
            .max(MIN_WIDTH),
    }
}

/// Prints `whose: warning: MESSAGE` on standard error, wrapped to the width when standard
/// error is a terminal (`COLUMNS`, else the terminal's own); into a pipe or a log each warning
/// stays one line, for grep.
pub fn warn(message: &str) {
    say(&format!("warning: {message}"));
}

/// Prints `whose: LINE` on standard error as [`warn`] does (a finding's `warning: ...` or
/// `hint: ...` line, say).
pub fn say(line: &str) {
    let line = format!("whose: {line}");
    let stderr = std::io::stderr();
    let width = stderr.is_terminal().then(|| {
        std::env::var("COLUMNS")
            .ok()
            .and_then(|c| c.trim().parse::<usize>().ok())
            .filter(|&c| c > 0)
            .or_else(|| terminal_size::terminal_size_of(&stderr).map(|(w, _)| w.0 as usize))
            .unwrap_or(DEFAULT_WIDTH)
    });
    let lines = match width {
        Some(w) => crate::render::wrap(&line, w.max(MIN_WIDTH)),
        None => vec![line],
    };
    let mut lock = stderr.lock();
    for l in lines {
        let _ = writeln!(lock, "{l}");
    }
}

/// Writes to `-o FILE` or standard output, laid out for it (see [`terminal`]).
pub fn write_output(
    path: Option<&Path>,
    write: impl FnOnce(&mut dyn Write, Terminal) -> std::io::Result<()>,
) -> Result<()> {
    match path {
        Some(p) => {
            let term = terminal(true);
            write_file(p, |w| write(w, term))
        }
        None => {
            let term = terminal(false);
            let stdout = std::io::stdout();
            let mut lock = std::io::BufWriter::new(stdout.lock());
            write(&mut lock, term)
                .and_then(|_| lock.flush())
                .map_err(|e| Error::io("<stdout>", e))
        }
    }
}

/// Refuses to write a binary or markup document (an SVG) to a terminal, where it would only
/// scroll by as noise: the reader wants `-o FILE` or a pipe.
pub fn refuse_terminal(path: Option<&Path>, what: &str, hint: &str) -> Result<()> {
    if path.is_none() && std::io::stdout().is_terminal() {
        return Err(Error::Usage(format!(
            "standard output is a terminal: not writing {what} there; {hint}"
        )));
    }
    Ok(())
}

/// Writes one output file by the rules of this module (temporary file and rename for regular
/// files and new paths, directly otherwise).
pub fn write_file(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_file() => replace_file(path, Some(meta), write),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => replace_file(path, None, write),
        Err(e) => Err(Error::io(path, e)),
        // a device, FIFO, socket, `/dev/fd/N` or a symlink: never renamed over
        Ok(_) => {
            let file = OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .open(path)
                .map_err(|e| Error::io(path, e))?;
            let mut out = std::io::BufWriter::new(file);
            write(&mut out)
                .and_then(|_| out.flush())
                .map_err(|e| Error::io(path, e))
        }
    }
}

/// A regular file or a new path: written beside it and renamed into place.
fn replace_file(
    path: &Path,
    old: Option<std::fs::Metadata>,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<()> {
    let tmp = Temporary::file_beside(path)?;
    let result = (|| {
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(tmp.path())?;
        if let Some(old) = &old {
            // the replacement keeps the permissions of the file it replaces
            file.set_permissions(old.permissions())?;
        }
        let mut out = std::io::BufWriter::new(file);
        write(&mut out)?;
        let file: File = out.into_inner().map_err(|e| e.into_error())?;
        file.sync_data().or_else(ignore_unsupported)?;
        drop(file);
        std::fs::rename(tmp.path(), path)
    })();
    match result {
        Ok(()) => {
            tmp.keep();
            Ok(())
        }
        Err(e) => Err(Error::io(path, e)),
    }
}

/// `fsync` is not possible on every file system (some FUSE mounts); the data is written anyway.
fn ignore_unsupported(e: std::io::Error) -> std::io::Result<()> {
    match e.kind() {
        std::io::ErrorKind::Unsupported | std::io::ErrorKind::InvalidInput => Ok(()),
        _ => Err(e),
    }
}

/// Refuses an output that is one of the inputs (`-o`), or a folder that holds one
/// (`--split DIR` replaces DIR as a whole): writing it would replace the profile being read.
/// Files are compared by device and inode, so `./x` and `x`, hard links and symlinks to the
/// input are all caught.
pub fn refuse_input_as_output(output: Option<&Path>, inputs: &[&Path]) -> Result<()> {
    let Some(output) = output else {
        return Ok(());
    };
    let Ok(out) = std::fs::metadata(output) else {
        return Ok(()); // a new path is no input
    };
    let folder = out.is_dir().then(|| output.canonicalize().ok()).flatten();
    for &input in inputs.iter().filter(|p| p.as_os_str() != "-") {
        let Ok(meta) = std::fs::metadata(input) else {
            continue; // reading it will say why
        };
        let same_file = out.is_file() && meta.dev() == out.dev() && meta.ino() == out.ino();
        let inside = folder.as_ref().is_some_and(|dir| {
            input
                .canonicalize()
                .is_ok_and(|canonical| canonical.starts_with(dir))
        });
        if same_file || inside {
            return Err(Error::Usage(format!(
                "{}: {} the input {}; writing it would replace the profile being read \
                 (choose another output)",
                output.display(),
                if same_file {
                    "that is"
                } else {
                    "that folder holds"
                },
                input.display()
            )));
        }
    }
    Ok(())
}

/// A temporary file or folder beside a target, removed when dropped unless [`keep`]
/// (Temporary::keep) is called, and removed by the signal handler (SIGINT, SIGTERM, SIGHUP)
/// while it exists.
pub struct Temporary {
    path: PathBuf,
}

impl Temporary {
    /// A free name `.NAME.whose-tmp-PID[-N]` beside `target` (hidden, and never the name of a
    /// file the user has: `create_new` fails rather than reuse one).
    pub fn file_beside(target: &Path) -> Result<Temporary> {
        Ok(Temporary::register(beside(target, "whose-tmp")?))
    }

    /// A new empty folder beside `target`, created here: listed and created under the
    /// cleanup lock, so a SIGINT finds it listed once it exists, and cannot remove it just
    /// before it is created (which left it behind: issue 23).
    pub fn folder_beside(target: &Path) -> Result<Temporary> {
        let path = beside(target, "whose-tmp")?;
        Cleanup::install();
        critical(|listed| {
            std::fs::create_dir(&path).map_err(|e| Error::io(&path, e))?;
            listed.push(path.clone());
            Ok(Temporary { path })
        })
    }

    fn register(path: PathBuf) -> Temporary {
        Cleanup::install();
        Cleanup::paths().push(path.clone());
        Temporary { path }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The temporary was renamed into place: nothing is left to remove.
    pub fn keep(self) {
        Cleanup::forget(&self.path);
        std::mem::forget(self);
    }
}

impl Drop for Temporary {
    fn drop(&mut self) {
        Cleanup::forget(&self.path);
        remove(&self.path);
    }
}

/// Runs `f` with the list of temporaries locked: the SIGINT handler waits for it, so what `f`
/// renames, creates or lists is done as a whole before the handler looks (a `--split` commit
/// swaps two folders in here).
pub fn critical<R>(f: impl FnOnce(&mut Vec<PathBuf>) -> R) -> R {
    f(&mut Cleanup::paths())
}

/// `DIR/.NAME.TAG-PID` for a target `DIR/NAME`.
pub fn beside(target: &Path, tag: &str) -> Result<PathBuf> {
    let name = target
        .file_name()
        .ok_or_else(|| Error::Usage(format!("{}: not a file name", target.display())))?
        .to_string_lossy();
    let parent = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    Ok(parent.join(format!(".{name}.{tag}-{}", std::process::id())))
}

fn remove(path: &Path) {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => {
            let _ = std::fs::remove_dir_all(path);
        }
        Ok(_) => {
            let _ = std::fs::remove_file(path);
        }
        Err(_) => {}
    }
}

/// The temporaries alive in this process, for the signal handler: an interrupted or
/// terminated `flame -o`, `convert -o` or `--split` (SIGINT, and SIGTERM and SIGHUP, which
/// `timeout`, systemd, `docker stop` and CI runners send) leaves nothing behind, and exits
/// 128+N as a shell reports a command a signal ended (130, 143, 129; issue 61).
struct Cleanup;

static TEMPORARIES: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
static HANDLER: Once = Once::new();
/// The write end of the pipe the signal handler tells the cleanup thread through.
static SIGNAL_PIPE: AtomicI32 = AtomicI32::new(-1);

/// The signals that end whose with a cleanup.
const ENDING_SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// The signal handler: only what is async-signal-safe, one `write` of the signal's number
/// to the pipe the cleanup thread waits on.
extern "C" fn on_ending_signal(signal: libc::c_int) {
    let fd = SIGNAL_PIPE.load(Ordering::Relaxed);
    let byte = signal as u8;
    // SAFETY: write(2) is async-signal-safe; the buffer is one byte on this stack
    unsafe { libc::write(fd, (&byte as *const u8).cast(), 1) };
}

impl Cleanup {
    fn install() {
        HANDLER.call_once(|| {
            // Without the pipe, the thread or the handlers a signal still ends the process;
            // only the cleanup is lost, so an error here is not fatal.
            let mut fds = [0 as libc::c_int; 2];
            // SAFETY: pipe2 writes two descriptors into the two-element array
            if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
                return;
            }
            SIGNAL_PIPE.store(fds[1], Ordering::Relaxed);
            let waiter = std::thread::Builder::new()
                .name("whose-signals".into())
                .spawn(move || Cleanup::wait_for_signal(fds[0]));
            if waiter.is_err() {
                return;
            }
            let handler: extern "C" fn(libc::c_int) = on_ending_signal;
            for signal in ENDING_SIGNALS {
                // SAFETY: a zeroed sigaction with only the handler and SA_RESTART set is
                // valid, and the handler does only a write(2)
                unsafe {
                    let mut action: libc::sigaction = std::mem::zeroed();
                    action.sa_sigaction = handler as libc::sighandler_t;
                    action.sa_flags = libc::SA_RESTART;
                    libc::sigemptyset(&mut action.sa_mask);
                    libc::sigaction(signal, &action, std::ptr::null_mut());
                }
            }
        });
    }

    /// The cleanup thread: waits for a signal's number, removes the temporaries and exits
    /// 128+N.
    fn wait_for_signal(fd: libc::c_int) {
        let mut byte = 0u8;
        loop {
            // SAFETY: read(2) of one byte into a one-byte buffer
            let n = unsafe { libc::read(fd, (&mut byte as *mut u8).cast(), 1) };
            if n == 1 {
                break;
            }
            if n == 0 || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
                return;
            }
        }
        // the lock is held to the exit, so no temporary is listed, renamed or created
        // meanwhile; the main thread may still be writing a file into a listed folder
        // (remove_dir_all then fails on it) or creating a listed file, so each is removed
        // until it stays gone
        let mut listed = Cleanup::paths();
        for _ in 0..50 {
            listed.iter().for_each(|path| remove(path));
            std::thread::sleep(std::time::Duration::from_millis(2));
            listed.retain(|path| std::fs::symlink_metadata(path).is_ok());
            if listed.is_empty() {
                break;
            }
        }
        std::process::exit(128 + i32::from(byte));
    }

    fn paths() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
        TEMPORARIES
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn forget(path: &Path) {
        Cleanup::paths().retain(|p| p != path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::cases::temp_file;

    #[test]
    fn a_regular_file_is_replaced_and_keeps_its_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let (dir, path) = temp_file("out.txt", "old");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
        write_file(&path, |w| w.write_all(b"new")).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o640);
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            1,
            "no temporary left"
        );
    }

    #[test]
    fn a_failed_write_leaves_the_old_file_and_no_temporary() {
        let (dir, path) = temp_file("out.txt", "old");
        let err = write_file(&path, |w| {
            w.write_all(b"half")?;
            Err(std::io::Error::other("disk on fire"))
        })
        .unwrap_err();
        assert!(err.to_string().contains("disk on fire"), "{err}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "old");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_symlink_is_written_through_not_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.txt");
        let link = dir.path().join("link.txt");
        std::fs::write(&real, "old").unwrap();
        std::os::unix::fs::symlink(&real, &link).unwrap();
        write_file(&link, |w| w.write_all(b"new")).unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "new");
    }

    #[test]
    fn a_device_is_written_directly_and_its_errors_reported() {
        // /dev/null takes the bytes and stays a device
        write_file(Path::new("/dev/null"), |w| w.write_all(b"x")).unwrap();
        assert!(!std::fs::metadata("/dev/null").unwrap().is_file());
        if Path::new("/dev/full").exists() {
            let err =
                write_file(Path::new("/dev/full"), |w| w.write_all(&[0; 100_000])).unwrap_err();
            assert!(err.to_string().starts_with("/dev/full: "), "{err}");
            assert!(!std::fs::metadata("/dev/full").unwrap().is_file());
        }
    }

    #[test]
    fn an_output_that_is_an_input_is_refused_also_through_a_symlink() {
        let dir = tempfile::tempdir().unwrap();
        let input = dir.path().join("in.folded");
        std::fs::write(&input, "a;b 1\n").unwrap();
        let link = dir.path().join("alias");
        std::os::unix::fs::symlink(&input, &link).unwrap();
        let other = dir.path().join("other.txt");
        std::fs::write(&other, "").unwrap();
        let inputs = [input.as_path()];
        assert!(refuse_input_as_output(Some(&input), &inputs).is_err());
        assert!(refuse_input_as_output(Some(&link), &inputs).is_err());
        assert!(refuse_input_as_output(Some(&other), &inputs).is_ok());
        assert!(refuse_input_as_output(Some(&dir.path().join("new")), &inputs).is_ok());
        assert!(refuse_input_as_output(None, &inputs).is_ok());
        // a folder that --split would replace, holding the input
        assert!(refuse_input_as_output(Some(dir.path()), &inputs).is_err());
        assert!(refuse_input_as_output(Some(Path::new("/dev/null")), &inputs).is_ok());
    }
}
