//! ELF modules: symbol tables (`.symtab`, else `.dynsym`) for the function an address is in,
//! DWARF (through `addr2line` over the units the addresses are in, compressed sections
//! included: [`super::dwarf`]) for the functions inlined at that address.
//!
//! Symbol choice follows perf, so that reports agree with `perf script`: functions only
//! (`STT_FUNC`, `STT_GNU_IFUNC`) in executable sections; among aliases at one address the
//! non-weak, then global, then the one with fewer leading underscores, then the longest name;
//! a zero-size symbol extends to the next one; an address in no symbol's range has none.

use super::SymbolOptions;
use super::debug_package;
use super::dwarf::{DwarfFile, DwarfFrame, Lookup};
use super::locate::{self, Candidate, Located, map_file};
use super::{ModuleResult, all_unknown, hex, unknown_frame};
use crate::model::{Frame, FrameKind, Notice, OtherWhy, Unresolved, perf};
use crate::names;
use arcstr::ArcStr;
use compact_str::CompactString;
use object::{Object, ObjectSection, ObjectSegment, ObjectSymbol, ObjectSymbolTable};
use rustc_hash::FxHashMap;
use std::num::NonZeroU32;
use std::path::PathBuf;

/// A module's files found and loaded (symbol table sorted, DWARF opened): the part of
/// symbolisation that does not depend on the addresses, so it can start while the recording
/// is still being read.
pub struct Loaded {
    path: String,
    symbolizer: Result<Symbolizer, Unresolved>,
    warnings: Vec<Notice>,
}

impl Loaded {
    /// Resolves `offsets` (ascending); `exec_pgoff` places them when only a debug file
    /// without code was found.
    pub fn resolve(self, exec_pgoff: Option<u64>, offsets: &[u64]) -> ModuleResult {
        let mut warnings = self.warnings;
        let mut result = match self.symbolizer {
            Ok(mut symbolizer) => match symbolizer.placement.with_pgoff(exec_pgoff) {
                Ok(()) => symbolizer.resolve_all(offsets),
                Err(detail) => all_unknown(
                    &self.path,
                    offsets.len(),
                    Unresolved::Other {
                        why: OtherWhy::Error(detail),
                    },
                ),
            },
            Err(reason) => all_unknown(&self.path, offsets.len(), reason),
        };
        warnings.append(&mut result.warnings);
        result.warnings = warnings;
        result
    }
}

/// Finds and loads the files of the module recorded as `path`.
pub fn load(path: &str, build_id: Option<&[u8]>, options: &SymbolOptions) -> Loaded {
    let located = locate::locate(path, build_id, options);
    let warnings: Vec<Notice> = located
        .mismatched
        .iter()
        .map(|(p, have)| Notice::BuildIdDiffers {
            file: p.clone(),
            found: have.to_string(),
            want: build_id.map(hex).unwrap_or_default(),
            module: path.to_string(),
        })
        .collect();
    let symbolizer = if !located.found() {
        Err(if located.mismatched.is_empty() {
            Unresolved::NotFound {
                build_id: build_id.map(hex),
            }
        } else {
            Unresolved::BuildIdMismatch {
                found: located
                    .mismatched
                    .iter()
                    .map(|(p, have)| (p.display().to_string(), have.clone()))
                    .collect(),
                want: build_id.map(hex).unwrap_or_default(),
            }
        })
    } else {
        Symbolizer::new(path, build_id, &located, options).map_err(|detail| Unresolved::Other {
            why: OtherWhy::Error(detail),
        })
    };
    Loaded {
        path: path.to_string(),
        symbolizer,
        warnings,
    }
}

/// One function symbol: `[start, end)` in the file's virtual addresses.
#[derive(Debug, Clone, Copy)]
struct Sym {
    start: u64,
    end: u64,
    name: u32,
}

/// File offset → virtual address (SVMA) in the ELF's own address space.
enum Placement {
    /// Loadable segments with their file ranges: exact.
    Segments(Vec<(u64, u64, u64)>),
    /// Only a debug file (no file contents): the executable segment's page starts where the
    /// recorded executable mapping's page offset does (known once the recording is read).
    ExecPage { vaddr_page: u64, pgoff: Option<u64> },
}

impl Placement {
    fn svma(&self, offset: u64) -> Option<u64> {
        match self {
            Placement::Segments(segments) => segments
                .iter()
                .find(|(off, size, _)| offset >= *off && offset < off + size)
                .map(|(off, _, vaddr)| offset - off + vaddr),
            Placement::ExecPage { vaddr_page, pgoff } => {
                offset.checked_sub((*pgoff)?).map(|d| d + vaddr_page)
            }
        }
    }

    fn with_pgoff(&mut self, exec_pgoff: Option<u64>) -> Result<(), String> {
        if let Placement::ExecPage { pgoff, .. } = self {
            *pgoff = Some(exec_pgoff.ok_or("the recording has no executable mapping for it")?);
        }
        Ok(())
    }
}

pub struct Symbolizer {
    module: ArcStr,
    symbols: Vec<Sym>,
    /// Raw symbol names; normalised (demangled) only when an address hits them, once each:
    /// a large C++ library has far more symbols than a profile touches.
    names: Vec<Box<str>>,
    normalized: Vec<Option<CompactString>>,
    placement: Placement,
    dwarf: Option<DwarfFile>,
    /// Whether the functions DWARF says were inlined at an address become frames.
    inline: bool,
    /// Whether frames carry the source line DWARF places the address at (`explain --lines`).
    lines: bool,
    /// DWARF that could not be read (a corrupt or absurd compressed section): how many
    /// addresses lost their inlined frames to it, and the first error, for the warning.
    dwarf_failures: u64,
    dwarf_error: Option<String>,
    /// Jit for the ELF images `perf inject --jit` writes (`jitted-PID-N.so`), else native.
    kind: FrameKind,
    /// The file the symbols come from and whether it has a `.symtab`, to say why an address
    /// found no symbol (stripped, or just not covered).
    symbol_file: Option<(PathBuf, bool)>,
    /// The recording's build id, for the debuginfod hint.
    build_id: Option<String>,
    /// Where the recorded path is on this machine (under `--symfs`), to ask the package
    /// manager about a stripped system binary only when that is the file used.
    system_path: PathBuf,
    symfs: Option<PathBuf>,
}

impl Symbolizer {
    fn new(
        module: &str,
        build_id: Option<&[u8]>,
        located: &Located,
        options: &SymbolOptions,
    ) -> Result<Symbolizer, String> {
        let inline = options.inline.unwrap_or(false);
        let lines = options.lines;
        let placement = match (&located.code, &located.debug) {
            (Some(code), _) => segments_of(code)?,
            (None, Some(debug)) => exec_page_of(debug)?,
            (None, None) => return Err("binary not found".into()),
        };
        let symbol_file = located
            .debug
            .as_ref()
            .filter(|d| d.has_symtab)
            .or(located.code.as_ref())
            .or(located.debug.as_ref());
        let (symbols, names) = match symbol_file {
            Some(c) => load_symbols(c)?,
            None => (Vec::new(), Vec::new()),
        };
        let dwarf_file = [located.debug.as_ref(), located.code.as_ref()]
            .into_iter()
            .flatten()
            .find(|c| c.has_dwarf);
        let mut dwarf_error = None;
        let dwarf =
            dwarf_file
                .filter(|_| inline || lines)
                .and_then(|c| match DwarfFile::open(&c.path) {
                    Ok(file) => Some(file),
                    Err(e) => {
                        dwarf_error = Some(format!("{}: {e}", c.path.display()));
                        None
                    }
                });
        let basename = module.rsplit('/').next().unwrap_or(module);
        let kind = if perf::is_jit_module(basename) {
            FrameKind::Jit
        } else {
            FrameKind::Native
        };
        Ok(Symbolizer {
            symbol_file: symbol_file.map(|c| (c.path.clone(), c.has_symtab)),
            build_id: build_id.map(hex),
            system_path: locate::under_symfs(options, module),
            symfs: options.symfs.clone(),
            kind,
            module: module.into(),
            symbols,
            normalized: vec![None; names.len()],
            names,
            placement,
            dwarf,
            inline,
            lines,
            // a loader that failed as a whole costs every address its inlined frames
            dwarf_failures: u64::from(dwarf_error.is_some()),
            dwarf_error,
        })
    }

    fn resolve_all(mut self, offsets: &[u64]) -> ModuleResult {
        let mut result = ModuleResult::default();
        let mut inline_names: FxHashMap<String, CompactString> = FxHashMap::default();
        // DWARF read over the units these addresses are in
        let mut dwarf = self.dwarf.take();
        let mut lookup = dwarf.as_mut().and_then(|file| {
            let probes: Vec<u64> = (offsets.iter())
                .filter_map(|&offset| self.placement.svma(offset))
                .collect();
            let path = file.path().display().to_string();
            file.lookup(&probes)
                .map_err(|e| {
                    // a file that failed as a whole costs every address its inlined frames
                    self.dwarf_error = Some(format!("{path}: {e}"));
                    self.dwarf_failures = 1;
                })
                .ok()
        });
        for &offset in offsets {
            let frames = self.resolve(offset, lookup.as_mut(), &mut inline_names);
            if frames.is_empty() {
                result.unresolved += 1;
                result.frames.push(vec![unknown_frame(&self.module)]);
            } else {
                result.frames.push(frames);
            }
        }
        if result.unresolved > 0 {
            result.reason = Some(self.why_unresolved());
        }
        if let Some(error) = &self.dwarf_error {
            let lost = (lookup.is_some()).then_some((self.dwarf_failures, offsets.len()));
            result.warnings.push(Notice::DwarfUnreadable {
                module: self.module.to_string(),
                error: error.to_string(),
                lost,
            });
        }
        result
    }

    /// Why some addresses found no symbol: no `.symtab` (stripped; with the package that
    /// installed the file when it is this machine's and the package manager knows it), or a
    /// symbol table that does not cover them.
    fn why_unresolved(&self) -> Unresolved {
        match &self.symbol_file {
            Some((path, true)) => Unresolved::NoSymbol {
                path: path.display().to_string(),
            },
            Some((path, false)) => Unresolved::Stripped {
                path: path.display().to_string(),
                build_id: self.build_id.clone(),
                package: (*path == self.system_path)
                    .then(|| debug_package::installed_by(self.symfs.as_deref(), &self.module))
                    .flatten(),
                by_name_only: false,
            },
            None => Unresolved::Other {
                why: OtherWhy::NoSymbolFile,
            },
        }
    }

    /// The frames at one offset, leaf first: inlined functions (DWARF), then the function
    /// the symbol table names. Empty when neither knows the address.
    fn resolve(
        &mut self,
        offset: u64,
        dwarf: Option<&mut Lookup<'_>>,
        inline_names: &mut FxHashMap<String, CompactString>,
    ) -> Vec<Frame> {
        let Some(svma) = self.placement.svma(offset) else {
            return Vec::new();
        };
        let symbol = self.symbol_at(svma);
        let mut dwarf_frames: Vec<DwarfFrame> = Vec::new();
        if let Some(lookup) = dwarf
            && let Err(e) = lookup.frames(svma, &mut dwarf_frames)
        {
            // counted and warned about: the address keeps its symbol-table function
            dwarf_frames.clear();
            self.dwarf_failures += 1;
            self.dwarf_error.get_or_insert(e);
        }
        let mut frames = Vec::with_capacity(dwarf_frames.len().max(1));
        // the physical function's own entry: its line is where, in its body, the address (or
        // the inlined calls leading to it) is
        let outer = dwarf_frames.pop();
        let (inline, lines) = (self.inline, self.lines);
        let line_of = |line: Option<u32>| line.filter(|_| lines);
        for (name, file, line) in dwarf_frames.into_iter().filter(|_| inline) {
            let Some(name) = name else { continue };
            let normal = inline_names
                .entry(name)
                .or_insert_with_key(|n| names::normalize_symbol(n).into())
                .clone();
            frames.push(Frame {
                name: normal,
                module: Some(self.module.clone()),
                file: file.map(Into::into),
                line: line_of(line).and_then(NonZeroU32::new),
                kind: FrameKind::Inlined,
            });
        }
        let outer_name = match (symbol, &outer) {
            (Some(s), _) => Some(self.symbol_name(s.name)),
            (None, Some((Some(n), _, _))) => Some(
                inline_names
                    .entry(n.clone())
                    .or_insert_with_key(|n| names::normalize_symbol(n).into())
                    .clone(),
            ),
            _ => None,
        };
        let (outer_file, outer_line) = outer.map_or((None, None), |(_, f, l)| (f, l));
        match outer_name {
            Some(name) => frames.push(Frame {
                name,
                module: Some(self.module.clone()),
                file: outer_file.map(Into::into),
                line: line_of(outer_line).and_then(NonZeroU32::new),
                kind: self.kind,
            }),
            // inlined frames without their function would mislead: all or nothing
            None => frames.clear(),
        }
        frames
    }

    fn symbol_name(&mut self, index: u32) -> CompactString {
        let i = index as usize;
        self.normalized[i]
            .get_or_insert_with(|| names::normalize_symbol(&self.names[i]).into())
            .clone()
    }

    fn symbol_at(&self, svma: u64) -> Option<Sym> {
        let i = self.symbols.partition_point(|s| s.start <= svma);
        let s = *self.symbols.get(i.checked_sub(1)?)?;
        (svma < s.end).then_some(s)
    }
}

fn segments_of(code: &Candidate) -> Result<Placement, String> {
    let map = map_file(&code.path).map_err(|_| format!("{}: cannot read", code.path.display()))?;
    let file = object::File::parse(&*map).map_err(|e| format!("{}: {e}", code.path.display()))?;
    let segments = file
        .segments()
        .filter_map(|s| {
            let (off, size) = s.file_range();
            (size > 0).then_some((off, size, s.address()))
        })
        .collect();
    Ok(Placement::Segments(segments))
}

fn exec_page_of(debug: &Candidate) -> Result<Placement, String> {
    let map =
        map_file(&debug.path).map_err(|_| format!("{}: cannot read", debug.path.display()))?;
    let file = object::File::parse(&*map).map_err(|e| format!("{}: {e}", debug.path.display()))?;
    let exec = file
        .segments()
        .find(|s| matches!(s.flags(), object::SegmentFlags::Elf { p_flags } if p_flags & object::elf::PF_X != 0))
        .ok_or("debug file has no executable segment")?;
    Ok(Placement::ExecPage {
        vaddr_page: exec.address() & !0xfff,
        pgoff: None,
    })
}

/// A candidate symbol before alias selection.
struct RawSym<'a> {
    start: u64,
    size: u64,
    name: &'a str,
    weak: bool,
    global: bool,
}

fn load_symbols(candidate: &Candidate) -> Result<(Vec<Sym>, Vec<Box<str>>), String> {
    let map = map_file(&candidate.path)
        .map_err(|_| format!("{}: cannot read", candidate.path.display()))?;
    let file =
        object::File::parse(&*map).map_err(|e| format!("{}: {e}", candidate.path.display()))?;
    let mut raw: Vec<RawSym<'_>> = Vec::new();
    let table: Vec<_> = if file.symbols().next().is_some() {
        file.symbols().collect()
    } else {
        file.dynamic_symbols().collect()
    };
    for s in table {
        if s.kind() != object::SymbolKind::Text || s.is_undefined() {
            continue;
        }
        let Ok(name) = s.name() else { continue };
        if name.is_empty() {
            continue;
        }
        let executable = s
            .section_index()
            .and_then(|i| file.section_by_index(i).ok())
            .is_some_and(|sec| {
                matches!(sec.flags(), object::SectionFlags::Elf { sh_flags } if sh_flags & u64::from(object::elf::SHF_EXECINSTR) != 0)
            });
        if !executable {
            continue;
        }
        raw.push(RawSym {
            start: s.address(),
            size: s.size(),
            name,
            weak: s.is_weak(),
            global: s.is_global() && !s.is_weak(),
        });
    }
    let plt = plt_symbols(&file);
    raw.extend(plt.iter().map(|(start, size, name)| RawSym {
        start: *start,
        size: *size,
        name,
        weak: false,
        global: true,
    }));
    // stable: among equally good aliases perf keeps the first in table order
    raw.sort_by_key(|s| s.start);
    let mut chosen: Vec<&RawSym<'_>> = Vec::new();
    for s in &raw {
        match chosen.last_mut() {
            Some(last) if last.start == s.start => {
                if better(s, last) {
                    *last = s;
                }
            }
            _ => chosen.push(s),
        }
    }
    let mut symbols = Vec::with_capacity(chosen.len());
    let mut names = Vec::with_capacity(chosen.len());
    let mut name_index: FxHashMap<&str, u32> = FxHashMap::default();
    for (i, s) in chosen.iter().enumerate() {
        let end = if s.size > 0 {
            s.start + s.size
        } else {
            chosen.get(i + 1).map_or(s.start, |n| n.start)
        };
        let name = *name_index.entry(s.name).or_insert_with(|| {
            names.push(Box::<str>::from(s.name));
            (names.len() - 1) as u32
        });
        symbols.push(Sym {
            start: s.start,
            end,
            name,
        });
    }
    Ok((symbols, names))
}

/// perf's `choose_best_symbol`: is `a` a better name than `b` for the same address?
fn better(a: &RawSym<'_>, b: &RawSym<'_>) -> bool {
    if (a.size > 0) != (b.size > 0) {
        return a.size > 0;
    }
    if a.weak != b.weak {
        return !a.weak;
    }
    if a.global != b.global {
        return a.global;
    }
    let underscores = |s: &str| s.bytes().take_while(|&c| c == b'_').count();
    let (ua, ub) = (underscores(a.name), underscores(b.name));
    if ua != ub {
        return ua < ub;
    }
    a.name.len() > b.name.len()
}

/// `name@plt` symbols for the PLT stubs, as perf synthesises them (a sample in `malloc@plt`
/// is the allocator's, not the caller's): the i-th `.rela.plt` entry is the i-th 16-byte
/// stub, after the PLT header (x86-64: 16 bytes, arm64: 32) or in `.plt.sec` (IBT, no
/// header). Only for 64-bit little-endian files, whose layout this knows; others get none.
fn plt_symbols(file: &object::File<'_>) -> Vec<(u64, u64, String)> {
    let header = match file.architecture() {
        object::Architecture::X86_64 => 16,
        object::Architecture::Aarch64 => 32,
        _ => return Vec::new(),
    };
    if !file.is_little_endian() || !file.is_64() {
        return Vec::new();
    }
    let (base, entries) = match file.section_by_name(".plt.sec") {
        Some(sec) => (sec.address(), sec),
        None => match file.section_by_name(".plt") {
            Some(sec) => (sec.address() + header, sec),
            None => return Vec::new(),
        },
    };
    let Some(rela) = file.section_by_name(".rela.plt") else {
        return Vec::new();
    };
    let Ok(data) = rela.data() else {
        return Vec::new();
    };
    let Some(dynsym) = file.dynamic_symbol_table() else {
        return Vec::new();
    };
    let end = entries.address() + entries.size();
    let mut out = Vec::new();
    for (i, entry) in data.chunks_exact(24).enumerate() {
        let start = base + 16 * i as u64;
        if start + 16 > end {
            break;
        }
        let info = u64::from_le_bytes(entry[8..16].try_into().unwrap_or_default());
        let index = (info >> 32) as usize;
        if index == 0 {
            continue;
        }
        if let Ok(sym) = dynsym.symbol_by_index(object::SymbolIndex(index))
            && let Ok(name) = sym.name()
            && !name.is_empty()
        {
            out.push((start, 16, format!("{name}@plt")));
        }
    }
    out
}
