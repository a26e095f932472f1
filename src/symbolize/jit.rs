//! JIT code through `perf-PID.map` files (JVM `-XX:+DumpPerfMapAtExit`, perf-map-agent, Node
//! `--perf-basic-prof`): one `START SIZE name` line per compiled blob, hex with or without
//! `0x`. Searched in every `--jit-map-dir` (default `/tmp`, where the runtimes write them).
//!
//! Frames get kind jit and the map's file name as module, as `perf script` shows them, so one
//! `module = ["perf-*.map"]` rule also catches the VM's stubs (`Interpreter`, `StubRoutines`).
//! When blobs overlap (code cache reuse) the innermost, then the later line wins.

use super::SymbolOptions;
use super::{ModuleResult, all_unknown, unknown_frame};
use crate::model::{Frame, FrameKind, JitMapWhy, Notice, Unresolved};
use crate::names;
use rustc_hash::FxHashMap;
use std::num::NonZeroU32;
use std::path::{Path, PathBuf};

/// A parsed map: entries sorted by start, each `(start, end, line index, name index)`.
pub struct PerfMap {
    entries: Vec<(u64, u64, u32, u32)>,
    names: Vec<Box<str>>,
    pub bad_lines: Vec<u64>,
}

pub fn map_dirs(options: &SymbolOptions) -> Vec<PathBuf> {
    if options.jit_map_dir.is_empty() {
        vec![PathBuf::from("/tmp")]
    } else {
        options.jit_map_dir.clone()
    }
}

/// A process's JIT map, found and parsed before the addresses are known.
pub struct Loaded {
    module: String,
    map: Result<(PathBuf, PerfMap), JitMapWhy>,
}

pub fn load(pid: i32, options: &SymbolOptions) -> Loaded {
    let module = format!("perf-{pid}.map");
    let dirs = map_dirs(options);
    let map = match dirs.iter().map(|d| d.join(&module)).find(|p| p.is_file()) {
        None => {
            let dirs = dirs.iter().map(|d| d.display().to_string()).collect();
            Err(JitMapWhy::NotFound { dirs })
        }
        Some(path) => PerfMap::load(&path)
            .map(|m| (path.clone(), m))
            .map_err(|e| JitMapWhy::Unreadable {
                path: path.display().to_string(),
                error: e.to_string(),
            }),
    };
    Loaded { module, map }
}

impl Loaded {
    pub fn resolve(self, addrs: &[u64]) -> ModuleResult {
        let module = self.module;
        match self.map {
            Ok((path, map)) => resolve(&module, &path, &map, addrs),
            Err(why) => all_unknown(&module, addrs.len(), Unresolved::JitMapMissing { why }),
        }
    }
}

/// The frame of a perf map symbol in `module` (`perf-PID.map`, a jitdump image), for this
/// symboliser and the perf script reader alike: a node or CPython entry is a JavaScript frame
/// (kind `jit`) or a Python frame (kind `interpreted`, as py-spy's) with its source file and
/// line ([`names::perf_map_entry`]), so rules and guesses see the script's file; a BEAM entry
/// is an Erlang function (kind `jit`) named `Module:function/arity`. Such a frame
/// has no module: the map is the process's list of compiled code, not the code's unit (the
/// script file is), and a `perf-*.map` module is what says "JVM" to the jvm preset's
/// detection and stub rules, which must not take node, CPython or the BEAM for a JVM (issue
/// 29).
/// Anything else is read as a JVM's method, module the map.
pub fn map_frame(sym: &str, module: &str) -> Frame {
    match names::perf_map_entry(sym) {
        Some(entry) => Frame {
            name: entry.name.into(),
            module: None,
            file: entry.file.map(Into::into),
            line: entry.line.and_then(NonZeroU32::new),
            kind: match entry.language {
                names::MapLanguage::Python => FrameKind::Interpreted,
                names::MapLanguage::JavaScript
                | names::MapLanguage::V8Stub
                | names::MapLanguage::Erlang
                | names::MapLanguage::Ruby => FrameKind::Jit,
            },
        },
        None => Frame {
            name: names::java_perf_map_name(sym).into(),
            module: Some(module.into()),
            file: None,
            line: None,
            kind: FrameKind::Jit,
        },
    }
}

fn resolve(module: &str, path: &Path, map: &PerfMap, addrs: &[u64]) -> ModuleResult {
    let mut result = ModuleResult::default();
    if let Some(first) = map.bad_lines.first() {
        result.warnings.push(Notice::JitMapBadLines {
            path: path.to_path_buf(),
            count: map.bad_lines.len(),
            first_line: *first,
        });
    }
    let mut frames: FxHashMap<u32, Frame> = FxHashMap::default();
    for &a in addrs {
        match map.lookup(a) {
            Some(name_index) => {
                let frame = frames
                    .entry(name_index)
                    .or_insert_with(|| map_frame(&map.names[name_index as usize], module));
                result.frames.push(vec![frame.clone()]);
            }
            None => {
                result.unresolved += 1;
                result.frames.push(vec![unknown_frame(module)]);
            }
        }
    }
    if result.unresolved > 0 {
        result.reason = Some(Unresolved::JitMapMissing {
            why: JitMapWhy::Incomplete {
                path: path.display().to_string(),
                unresolved: result.unresolved,
                of: addrs.len(),
            },
        });
    }
    result
}

impl PerfMap {
    pub fn load(path: &Path) -> std::io::Result<PerfMap> {
        let bytes = std::fs::read(path)?;
        let text = String::from_utf8_lossy(&bytes);
        Ok(PerfMap::parse(&text))
    }

    pub fn parse(text: &str) -> PerfMap {
        let mut entries = Vec::new();
        let mut names = Vec::new();
        let mut bad_lines = Vec::new();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            match parse_line(line) {
                Some((start, size, name)) => {
                    names.push(name.into());
                    let end = start.saturating_add(size.max(1));
                    entries.push((start, end, i as u32, (names.len() - 1) as u32));
                }
                None => bad_lines.push(i as u64 + 1),
            }
        }
        entries.sort_unstable_by_key(|e| (e.0, e.2));
        PerfMap {
            entries,
            names,
            bad_lines,
        }
    }

    /// The name index of the blob containing `addr`: the one starting closest below it that
    /// contains it (innermost), the later line among equal starts.
    pub fn lookup(&self, addr: u64) -> Option<u32> {
        let i = self.entries.partition_point(|e| e.0 <= addr);
        self.entries[..i]
            .iter()
            .rev()
            .take(64)
            .find(|e| addr < e.1)
            .map(|e| e.3)
    }
}

fn parse_line(line: &str) -> Option<(u64, u64, &str)> {
    let (start, rest) = line.split_once(' ')?;
    let (size, name) = rest.split_once(' ')?;
    let hex = |s: &str| {
        let s = s.trim_start_matches("0x");
        (!s.is_empty())
            .then(|| u64::from_str_radix(s, 16).ok())
            .flatten()
    };
    let name = name.trim();
    (!name.is_empty()).then_some(())?;
    Some((hex(start)?, hex(size)?, name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_lines_and_finds_innermost_blob() {
        let map = PerfMap::parse(
            "7f00 100 Interpreter\n0x7f40 0x10 void a.B.c(int)\nnot a map line\n7f40 8 later\n",
        );
        assert_eq!(map.bad_lines, vec![3]);
        let name = |a| map.lookup(a).map(|i| map.names[i as usize].to_string());
        assert_eq!(name(0x7f10).as_deref(), Some("Interpreter"));
        assert_eq!(name(0x7f41).as_deref(), Some("later"));
        assert_eq!(name(0x7f49).as_deref(), Some("void a.B.c(int)"));
        assert_eq!(name(0x8000), None);
    }
}
