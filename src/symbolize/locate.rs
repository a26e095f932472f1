//! Finding the files of a recorded module: the binary (for its program headers and symbols)
//! and a debug file (full symbol table, DWARF), by build id and by path, the way perf and
//! pprof users expect:
//!
//! 1. `--binary-path DIR` (like PPROF_BINARY_PATH): `DIR/BUILDID/NAME`, `DIR/BUILDID`,
//!    `DIR/.build-id/xx/rest[.debug]`, `DIR/NAME`, `DIR/<recorded path>`;
//! 2. the recorded path, under `--symfs DIR` when given (perf's root prefix);
//! 3. perf's build-id cache `~/.debug/.build-id/xx/rest/{elf,debug}`, and what
//!    `debuginfod-find` fetched into `~/.cache/debuginfod_client/ID/{debuginfo,executable}`;
//! 4. `/usr/lib/debug/.build-id/xx/rest.debug` (under `--symfs`);
//! 5. the binary's `.gnu_debuglink`: next to it, in its `.debug/`, under `/usr/lib/debug/`.
//!
//! A candidate whose build id differs from the recording's is never used (its addresses
//! would point into different code) and is reported. Lookups only read ELF headers through a
//! memory map, so probing a dozen candidates is cheap.

use super::SymbolOptions;
use super::hex;
use memmap2::Mmap;
use object::{Object, ObjectSection, ObjectSegment, SectionKind};
use std::fs::File;
use std::path::{Path, PathBuf};

/// What one candidate file offers.
#[derive(Debug, Clone, Default)]
pub struct Candidate {
    pub path: PathBuf,
    /// Executable segments with file contents: usable for offset → address mapping.
    pub has_code: bool,
    pub has_symtab: bool,
    pub has_dwarf: bool,
}

/// The files found for one module.
#[derive(Debug, Clone, Default)]
pub struct Located {
    /// The binary itself (program headers with real file offsets).
    pub code: Option<Candidate>,
    /// The best file for symbols and DWARF (may be the binary).
    pub debug: Option<Candidate>,
    /// Files that exist but have another build id.
    pub mismatched: Vec<(PathBuf, String)>,
    /// Every path looked at, for the "not found" message.
    pub tried: Vec<PathBuf>,
}

impl Located {
    pub fn found(&self) -> bool {
        self.code.is_some() || self.debug.is_some()
    }
}

/// Searches for `recorded` (with the recording's build id, if any).
pub fn locate(recorded: &str, build_id: Option<&[u8]>, options: &SymbolOptions) -> Located {
    let mut located = Located::default();
    let name = recorded.rsplit('/').next().unwrap_or(recorded);
    let id = build_id.map(hex);
    let mut candidates: Vec<PathBuf> = Vec::new();
    for dir in &options.binary_path {
        if let Some(id) = &id {
            candidates.push(dir.join(id).join(name));
            candidates.push(dir.join(id));
            candidates.extend(build_id_dir_paths(dir, id));
        }
        candidates.push(dir.join(name));
        candidates.push(dir.join(recorded.trim_start_matches('/')));
    }
    candidates.push(under_symfs(options, recorded));
    if let Some(id) = &id {
        candidates.extend(debug_paths_by_id(id, options));
    }
    for path in candidates {
        consider(&mut located, path, build_id);
    }
    if build_id.is_none()
        && let Some(own) = located.code.as_ref().and_then(|c| own_build_id(&c.path))
        && !located
            .debug
            .as_ref()
            .is_some_and(|d| d.has_symtab || d.has_dwarf)
    {
        // the recording did not say, but the binary found by path does: its debug file
        // carries the same id
        let id = hex(&own);
        for path in debug_paths_by_id(&id, options) {
            consider(&mut located, path, Some(&own));
        }
    }
    if let Some(code) = located.code.clone()
        && !located
            .debug
            .as_ref()
            .is_some_and(|d| d.has_symtab || d.has_dwarf)
    {
        for path in debuglink_paths(&code.path, recorded, options) {
            consider(&mut located, path, build_id);
        }
    }
    located
}

/// perf's build-id cache and the distribution's debug directory, by build id.
fn debug_paths_by_id(id: &str, options: &SymbolOptions) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if id.len() < 3 {
        return out;
    }
    if let Some(home) = std::env::var_os("HOME") {
        let cache = Path::new(&home)
            .join(".debug/.build-id")
            .join(&id[..2])
            .join(&id[2..]);
        out.push(cache.join("elf"));
        out.push(cache.join("debug"));
        out.push(cache);
        // what `debuginfod-find debuginfo|executable ID` fetched (its default cache)
        let debuginfod = Path::new(&home).join(".cache/debuginfod_client").join(id);
        out.push(debuginfod.join("debuginfo"));
        out.push(debuginfod.join("executable"));
    }
    out.push(under_symfs(
        options,
        &format!("/usr/lib/debug/.build-id/{}/{}.debug", &id[..2], &id[2..]),
    ));
    for dir in &options.binary_path {
        out.extend(build_id_dir_paths(dir, id));
    }
    out
}

/// The build id a file declares.
pub fn own_build_id(path: &Path) -> Option<Vec<u8>> {
    let map = map_file(path).ok()?;
    let file = object::File::parse(&*map).ok()?;
    file.build_id().ok()?.map(<[u8]>::to_vec)
}

/// `DIR/.build-id/xx/rest.debug` and `DIR/.build-id/xx/rest` (a file or perf's directory).
fn build_id_dir_paths(dir: &Path, id: &str) -> Vec<PathBuf> {
    if id.len() < 3 {
        return Vec::new();
    }
    let base = dir.join(".build-id").join(&id[..2]);
    vec![
        base.join(format!("{}.debug", &id[2..])),
        base.join(&id[2..]).join("elf"),
        base.join(&id[2..]).join("debug"),
        base.join(&id[2..]),
    ]
}

/// `path` on this machine: under `--symfs` when given (perf's root prefix).
pub fn under_symfs(options: &SymbolOptions, path: &str) -> PathBuf {
    match &options.symfs {
        Some(root) => root.join(path.trim_start_matches('/')),
        None => PathBuf::from(path),
    }
}

/// Where gdb and perf look for a `.gnu_debuglink` target.
fn debuglink_paths(code: &Path, recorded: &str, options: &SymbolOptions) -> Vec<PathBuf> {
    let Some(link) = read_debuglink(code) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if let Some(dir) = code.parent() {
        out.push(dir.join(&link));
        out.push(dir.join(".debug").join(&link));
    }
    if let Some((dir, _)) = recorded.rsplit_once('/') {
        out.push(under_symfs(options, &format!("/usr/lib/debug{dir}/{link}")));
    }
    out
}

fn read_debuglink(path: &Path) -> Option<String> {
    let map = map_file(path).ok()?;
    let file = object::File::parse(&*map).ok()?;
    let (name, _crc) = file.gnu_debuglink().ok()??;
    let name = std::str::from_utf8(name).ok()?;
    (!name.contains('/') && !name.is_empty()).then(|| name.to_string())
}

/// Looks at one path: skipped when absent or not ELF; recorded as mismatched when its build
/// id differs; else it may become the code file and/or the debug file.
fn consider(located: &mut Located, path: PathBuf, build_id: Option<&[u8]>) {
    if located.tried.contains(&path) {
        return;
    }
    located.tried.push(path.clone());
    if !path.is_file() {
        return;
    }
    let Ok(map) = map_file(&path) else {
        return;
    };
    let Ok(file) = object::File::parse(&*map) else {
        return;
    };
    if let Some(want) = build_id {
        match file.build_id() {
            Ok(Some(have)) if have == want => {}
            Ok(Some(have)) => {
                located.mismatched.push((path, hex(have)));
                return;
            }
            // no build id in the file: cannot verify, so do not trust it
            _ => {
                located.mismatched.push((path, "none".to_string()));
                return;
            }
        }
    }
    let candidate = describe(&file, path);
    if candidate.has_code && located.code.is_none() {
        located.code = Some(candidate.clone());
    }
    let better_debug = match &located.debug {
        None => candidate.has_symtab || candidate.has_dwarf || candidate.has_code,
        Some(d) => {
            (candidate.has_symtab as u8 + candidate.has_dwarf as u8)
                > (d.has_symtab as u8 + d.has_dwarf as u8)
        }
    };
    if better_debug {
        located.debug = Some(candidate);
    }
}

fn describe(file: &object::File<'_>, path: PathBuf) -> Candidate {
    let has_code = file.segments().any(|s| {
        let (_, size) = s.file_range();
        size > 0 && matches!(s.flags(), object::SegmentFlags::Elf { p_flags } if p_flags & object::elf::PF_X != 0)
    });
    let has_data = |name: &str| {
        file.section_by_name(name).is_some_and(|s| {
            s.kind() != SectionKind::UninitializedData && s.file_range().is_some_and(|(_, n)| n > 0)
        })
    };
    Candidate {
        path,
        has_code,
        has_symtab: has_data(".symtab"),
        has_dwarf: has_data(".debug_info"),
    }
}

/// Turns a read of a mapped file that was cut short under us into an error message and exit
/// 2, instead of death by signal. A file truncated in place while mapped (`cp` over a
/// perf.data or a binary being read, a file system that drops the file) raises SIGBUS at the
/// first read past its new end; no Rust code can return an error from there, so the handler
/// says what happened and exits. Installed once, before any file is mapped.
pub fn exit_cleanly_on_sigbus() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        extern "C" fn on_sigbus(_: libc::c_int) {
            const MESSAGE: &[u8] = b"whose: error: a file whose maps (the perf.data, or a \
                binary or debug file it symbolises) was cut short while being read (SIGBUS: \
                truncated in place by another program?); read it again once it is whole\n";
            // SAFETY: write(2) and _exit(2) are async-signal-safe; nothing else runs here
            unsafe {
                libc::write(2, MESSAGE.as_ptr().cast(), MESSAGE.len());
                libc::_exit(2);
            }
        }
        let handler: extern "C" fn(libc::c_int) = on_sigbus;
        // SAFETY: a zeroed sigaction with only the handler set is valid, and the handler does
        // only async-signal-safe things
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = handler as libc::sighandler_t;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(libc::SIGBUS, &action, std::ptr::null_mut());
        }
    }
}

/// Maps a binary or debug file read-only: the one place whose maps files (symbolisation
/// here, unwinding in `unwind::image`). Only ELF headers and the sections asked for are paged
/// in, which is why probing candidates and reading DWARF is cheap.
pub fn map_file(path: &Path) -> std::io::Result<Mmap> {
    let file = File::open(path)?;
    // SAFETY: `Mmap::map` is a read-only *shared* mapping (MAP_SHARED): the bytes behind the
    // returned slice are the file's page cache, so if another process writes the file in
    // place while whose runs, the slice changes under Rust's feet (and truncation turns a
    // read past the new end into SIGBUS, which `exit_cleanly_on_sigbus` makes an exit 2). The code assumes no one rewrites the binaries and
    // debug files it reads for the few seconds it runs. That is acceptable because those are
    // installed or built files: package managers, linkers and `cp` onto a new name replace
    // them by rename, which leaves our mapping on the old inode; rewriting a binary in place
    // would also break the process that was profiled. perf, addr2line and samply map the same
    // way. A private mapping would not help (its pages still show the file until copied), and
    // reading instead would cost the whole of multi-hundred-megabyte debug files.
    unsafe { Mmap::map(&file) }
}
