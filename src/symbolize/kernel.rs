//! Kernel addresses through a kallsyms file: `--kallsyms FILE`, else perf's build-id cache
//! (`~/.debug/[kernel.kallsyms]/BUILDID/kallsyms`), else `/proc/kallsyms` when the running
//! kernel is the recorded one (same build id). A kallsyms taken after a reboot is relocated
//! by its `_text` against the `_text` address the recording holds (KASLR moves both).

use super::SymbolOptions;
use super::{ModuleResult, all_unknown, hex};
use crate::model::{Frame, FrameKind, KallsymsError, Notice, OtherWhy, Unresolved, perf};
use std::path::{Path, PathBuf};

pub struct KernelSource {
    explicit: Option<PathBuf>,
}

/// The kernel's text symbols, sorted by address; each one's range ends where the next one
/// starts. Names stay in the file's text (a kallsyms has some 100k symbols: one allocation,
/// not two per symbol).
struct KSyms {
    text: String,
    symbols: Vec<KSym>,
}

struct KSym {
    addr: u64,
    /// Byte ranges in `KSyms::text`; the module is empty for the kernel image itself.
    name: (u32, u32),
    module: (u32, u32),
}

impl KSyms {
    fn str(&self, (start, end): (u32, u32)) -> &str {
        &self.text[start as usize..end as usize]
    }
}

impl KernelSource {
    pub fn new(options: &SymbolOptions) -> KernelSource {
        KernelSource {
            explicit: options.kallsyms.clone(),
        }
    }

    /// Finds and parses the kallsyms for the recorded kernel.
    pub fn load(&self, build_id: Option<&[u8]>) -> Loaded {
        let mut warnings = Vec::new();
        let symbols = self.find(build_id, &mut warnings);
        Loaded { symbols, warnings }
    }
}

/// A kernel's symbols, loaded before the addresses are known.
pub struct Loaded {
    symbols: Result<KSyms, OtherWhy>,
    warnings: Vec<Notice>,
}

impl Loaded {
    /// Resolves absolute kernel addresses; `text` is the recording's `_text` for relocation.
    pub fn resolve(self, text: Option<u64>, addrs: &[u64]) -> ModuleResult {
        let module = perf::KERNEL_MODULE;
        let warnings = self.warnings;
        let symbols = match self.symbols {
            Ok(s) => s,
            Err(why) => {
                let mut r = all_unknown(module, addrs.len(), Unresolved::Other { why });
                r.warnings = warnings;
                return r;
            }
        };
        let ksyms = &symbols;
        let symbols = &ksyms.symbols;
        let delta = match (text, symbols.iter().find(|s| ksyms.str(s.name) == "_text")) {
            (Some(rec), Some(t)) => t.addr.wrapping_sub(rec),
            _ => 0,
        };
        let mut result = ModuleResult {
            warnings,
            ..ModuleResult::default()
        };
        for &a in addrs {
            let a = a.wrapping_add(delta);
            let i = symbols.partition_point(|s| s.addr <= a);
            match i.checked_sub(1).map(|i| &symbols[i]) {
                Some(s) if i < symbols.len() || a - s.addr < 1 << 20 => {
                    let in_module = ksyms.str(s.module);
                    result.frames.push(vec![Frame {
                        name: ksyms.str(s.name).into(),
                        module: Some(
                            if in_module.is_empty() {
                                module
                            } else {
                                in_module
                            }
                            .into(),
                        ),
                        file: None,
                        line: None,
                        kind: FrameKind::Kernel,
                    }]);
                }
                _ => {
                    result.unresolved += 1;
                    result.frames.push(vec![super::unknown_frame(module)]);
                }
            }
        }
        if result.unresolved > 0 {
            result.reason = Some(Unresolved::Other {
                why: OtherWhy::NoKernelSymbol,
            });
        }
        result
    }
}

impl KernelSource {
    fn find(&self, build_id: Option<&[u8]>, warnings: &mut Vec<Notice>) -> Result<KSyms, OtherWhy> {
        if let Some(path) = &self.explicit {
            return load(path).map_err(|e| {
                warnings.push(Notice::KallsymsUnreadable {
                    path: path.clone(),
                    error: e,
                });
                OtherWhy::KallsymsUnusable {
                    path: path.display().to_string(),
                }
            });
        }
        if let (Some(id), Some(home)) = (build_id, std::env::var_os("HOME")) {
            let id = hex(id);
            let home = Path::new(&home);
            for p in [
                home.join(".debug/[kernel.kallsyms]")
                    .join(&id)
                    .join("kallsyms"),
                home.join(".debug/.build-id")
                    .join(&id[..2])
                    .join(&id[2..])
                    .join("kallsyms"),
            ] {
                if let Ok(s) = load(&p) {
                    return Ok(s);
                }
            }
        }
        let running = running_kernel_build_id();
        match (build_id, running) {
            (Some(want), Some(have)) if want == have.as_slice() => {
                load(Path::new(PROC_KALLSYMS)).map_err(proc_kallsyms)
            }
            (Some(_), Some(_)) => Err(OtherWhy::KernelOtherBuild),
            // perf writes no kernel build id in some modes (e.g. `-z`): like perf, assume the
            // running kernel, and say so
            (None, _) => {
                let symbols = load(Path::new(PROC_KALLSYMS)).map_err(proc_kallsyms)?;
                warnings.push(Notice::NoKernelBuildId);
                Ok(symbols)
            }
            _ => Err(OtherWhy::NoKallsyms),
        }
    }
}

/// The running kernel's symbols.
const PROC_KALLSYMS: &str = "/proc/kallsyms";

/// Why the running kernel's symbols are of no use.
fn proc_kallsyms(error: KallsymsError) -> OtherWhy {
    OtherWhy::Kallsyms {
        path: PROC_KALLSYMS.to_string(),
        error,
    }
}

/// Text symbols (`t`/`T`/`w`/`W`) sorted by address; all-zero addresses (kptr_restrict) make
/// the file useless and are an error. Lines are `ADDRESS KIND NAME[\t[MODULE]]`.
fn load(path: &Path) -> Result<KSyms, KallsymsError> {
    let text = std::fs::read_to_string(path).map_err(|e| KallsymsError::Io(e.to_string()))?;
    if text.len() > u32::MAX as usize {
        return Err(KallsymsError::TooLarge);
    }
    // bytes, not chars: a kallsyms is some 100k lines of ASCII, and splitting each by char
    // patterns cost more than the rest of loading it
    let bytes = text.as_bytes();
    let mut symbols = Vec::new();
    let mut at = 0usize;
    while at < bytes.len() {
        let end = memchr::memchr(b'\n', &bytes[at..]).map_or(bytes.len(), |i| at + i);
        let line = (at, end);
        at = end + 1;
        if let Some(symbol) = text_symbol(&text, line) {
            symbols.push(symbol);
        }
    }
    if symbols.is_empty() {
        return Err(KallsymsError::NoTextSymbols);
    }
    if symbols.iter().all(|s| s.addr == 0) {
        return Err(KallsymsError::AllZero);
    }
    symbols.sort_by_key(|s| s.addr);
    Ok(KSyms { text, symbols })
}

/// The text symbol a kallsyms line `[start, end)` of `text` names, if it names one. The
/// kernel writes `%px %c %s`: 16 hex digits, a space, the kind, a space, the name; such lines
/// are read at those places, others field by field.
fn text_symbol(text: &str, (start, end): (usize, usize)) -> Option<KSym> {
    let bytes = text.as_bytes();
    let line = &bytes[start..end];
    let is_text = |kind: &[u8]| matches!(kind, b"t" | b"T" | b"w" | b"W");
    // sixteen hex digits have no gap: the fields are then where the fast path takes them
    let fast = match (line.get(16..19), line.get(..16).and_then(hex16)) {
        (Some([b' ', kind, b' ']), Some(addr)) => Some((addr, *kind)),
        _ => None,
    };
    let (addr, mut rest) = match fast {
        Some((addr, kind)) => {
            if !is_text(&[kind]) {
                return None;
            }
            (addr, Fields::of_line(bytes, start + 19, end))
        }
        None => {
            let mut rest = Fields::of_line(bytes, start, end);
            let (addr, kind) = (rest.next()?, rest.next()?);
            if !is_text(&bytes[kind.0..kind.1]) {
                return None;
            }
            // the fields end at ASCII separators: they are slices of `text` on char boundaries
            (u64::from_str_radix(&text[addr.0..addr.1], 16).ok()?, rest)
        }
    };
    let span = |(from, to): (usize, usize)| (from as u32, to as u32);
    let name = span(rest.next()?);
    let module = rest.next().map_or((0, 0), span);
    Some(KSym { addr, name, module })
}

/// Sixteen hex digits, as the kernel prints an address.
fn hex16(digits: &[u8]) -> Option<u64> {
    digits.iter().try_fold(0u64, |value, &c| {
        let digit = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            b'A'..=b'F' => c - b'A' + 10,
            _ => return None,
        };
        Some(value << 4 | u64::from(digit))
    })
}

/// The fields of a kallsyms line as byte ranges: runs of bytes between spaces and tabs, the
/// line's trailing `\r`s left out.
struct Fields<'t> {
    bytes: &'t [u8],
    at: usize,
    end: usize,
}

impl<'t> Fields<'t> {
    fn of_line(bytes: &'t [u8], start: usize, mut end: usize) -> Fields<'t> {
        while end > start && bytes[end - 1] == b'\r' {
            end -= 1;
        }
        Fields {
            bytes,
            at: start,
            end,
        }
    }
}

impl Iterator for Fields<'_> {
    type Item = (usize, usize);

    fn next(&mut self) -> Option<(usize, usize)> {
        let is_gap = |b: u8| b == b' ' || b == b'\t';
        while self.at < self.end && is_gap(self.bytes[self.at]) {
            self.at += 1;
        }
        let from = self.at;
        while self.at < self.end && !is_gap(self.bytes[self.at]) {
            self.at += 1;
        }
        (self.at > from).then_some((from, self.at))
    }
}

/// The running kernel's build id, from the ELF notes in `/sys/kernel/notes`.
pub fn running_kernel_build_id() -> Option<Vec<u8>> {
    let data = std::fs::read("/sys/kernel/notes").ok()?;
    parse_build_id_note(&data)
}

fn parse_build_id_note(mut data: &[u8]) -> Option<Vec<u8>> {
    let u32_at = |d: &[u8], i: usize| {
        d.get(i..i + 4)
            .map(|b| u32::from_le_bytes(b.try_into().unwrap()))
    };
    while data.len() >= 12 {
        let namesz = u32_at(data, 0)? as usize;
        let descsz = u32_at(data, 4)? as usize;
        let kind = u32_at(data, 8)?;
        let name_end = 12usize.checked_add(namesz.div_ceil(4) * 4)?;
        let desc_end = name_end.checked_add(descsz.div_ceil(4) * 4)?;
        if desc_end > data.len() {
            return None;
        }
        if kind == 3 && data.get(12..12 + namesz)?.starts_with(b"GNU") {
            return Some(data[name_end..name_end + descsz].to_vec());
        }
        data = &data[desc_end..];
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::cases::temp_file;

    #[test]
    fn text_symbols_resolve_with_their_modules_and_data_symbols_are_skipped() {
        let (_dir, path) = temp_file(
            "kallsyms",
            "ffffffff81000000 T _text\n\
             ffffffff81000100 t do_one\n\
             ffffffff81000180 D some_data\n\
             ffffffff81000200 W weak_one\n\
             not a line\n\
             ffffffffc0000000 t ext4_read\t[ext4]\r\n\
             ffffffffc0000100 \tT  spaced \r\r\n\
             ffffffffc0000200 T last",
        );
        let loaded = Loaded {
            symbols: load(&path).map_err(proc_kallsyms),
            warnings: Vec::new(),
        };
        let r = loaded.resolve(
            None,
            &[
                0xffffffff81000150,
                0xffffffff81000190,
                0xffffffffc0000010,
                0xffffffffc0000110,
                0xffffffffc0000210,
            ],
        );
        let named: Vec<(&str, &str)> = r
            .frames
            .iter()
            .map(|f| (&*f[0].name, f[0].module.as_deref().unwrap()))
            .collect();
        assert_eq!(
            named,
            [
                ("do_one", "[kernel.kallsyms]"),
                ("do_one", "[kernel.kallsyms]"),
                ("ext4_read", "[ext4]"),
                ("spaced", "[kernel.kallsyms]"),
                ("last", "[kernel.kallsyms]")
            ]
        );
    }
}
