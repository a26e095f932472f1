//! Folded output: `root;...;leaf N` lines in one metric, from any input, for inferno,
//! FlameGraph, speedscope and `whose` itself.

use crate::input::folded;
use crate::model::{Frame, FrameKind, Profile};
use crate::names;
use rustc_hash::FxHashMap;
use std::io::Write;

/// Writes one line per distinct stack text (rows that differ only by thread, or with `plain`
/// by what the names-only text leaves out, are summed), sorted, skipping zero weights. Kernel
/// and JIT frames get inferno's `_[k]` / `_[j]` suffixes and allocated-class leaves
/// async-profiler's `_[i]`, so the folded reader gives them back their kinds, and a sample
/// without frames is [`folded::NO_FRAMES`]. By default frames also carry their module (as
/// perf script prints it), frames known by a source file and no module (py-spy's Python
/// frames) py-spy's `func (file.py:LINE)`, and other interpreted frames `_[0]`: reading the
/// file back gives the same owners (tests/it/roundtrip.rs), and inferno still draws it. With
/// `plain` (`convert --plain`) the text is names only, as inferno's collapsers write it.
/// Returns the number of lines.
pub fn write(
    profile: &Profile,
    metric: usize,
    plain: bool,
    out: &mut dyn Write,
) -> std::io::Result<usize> {
    let mut texts: Vec<Option<String>> = vec![None; profile.stack_count()];
    let mut lines: FxHashMap<String, u128> = FxHashMap::default();
    for row in profile.rows() {
        let w = row.values[metric];
        if w == 0 {
            continue;
        }
        let text = texts[row.stack.0 as usize]
            .get_or_insert_with(|| stack_text(profile, row.stack, plain))
            .clone();
        *lines.entry(text).or_default() += w;
    }
    let mut lines: Vec<(String, u128)> = lines.into_iter().collect();
    lines.sort_unstable();
    for (text, w) in &lines {
        writeln!(out, "{text} {w}")?;
    }
    Ok(lines.len())
}

fn stack_text(profile: &Profile, stack: crate::model::StackId, plain: bool) -> String {
    let frames = profile.stack(stack);
    if frames.is_empty() {
        return folded::NO_FRAMES.to_string();
    }
    let mut text = String::new();
    for (i, &f) in frames.iter().rev().enumerate() {
        if i > 0 {
            text.push(';');
        }
        let frame = profile.frame(f);
        if !plain && let Some(source) = source_text(frame) {
            text.push_str(&source);
            continue;
        }
        let name = clean(&frame.name);
        let module = frame.module.as_deref().filter(|_| !plain).map(clean);
        match (frame.kind, module) {
            (FrameKind::Kernel | FrameKind::AllocType, _) | (_, None) => text.push_str(&name),
            (kind, Some(module)) => {
                // stackcollapse-perf's `[libc.so.6]` for an unnamed frame of a known module,
                // else perf script's `name (module)`: whichever the reader takes back whole
                let bracketed = format!("[{module}]");
                let with_module = format!("{name} ({module})");
                if kind == FrameKind::Unknown
                    && folded::bracketed_module(&bracketed) == Some(module.as_str())
                {
                    text.push_str(&bracketed);
                } else if folded::split_module_suffix(&with_module)
                    == Some((name.as_str(), module.as_str()))
                {
                    text.push_str(&with_module);
                } else {
                    text.push_str(&name);
                }
            }
        }
        text.push_str(match frame.kind {
            FrameKind::Kernel => "_[k]",
            FrameKind::Jit => "_[j]",
            // not Inlined: `strings.ToLower_[i]` would read back as an allocated class
            FrameKind::AllocType => "_[i]",
            FrameKind::Interpreted if !plain => "_[0]",
            _ => "",
        });
    }
    text
}

/// py-spy's `func (FILE:LINE)` for a frame known by its source file and no module (a Python
/// frame, or with `py-spy --native` a C frame with debug info), when the folded reader gives
/// exactly this frame back ([`folded::source_frame`]): the python preset matches on the file.
/// A Python frame's name is `module.func` with the module derived from the file, so the text
/// carries `func` only.
fn source_text(frame: &Frame) -> Option<String> {
    if frame.module.is_some() || !matches!(frame.kind, FrameKind::Interpreted | FrameKind::Native) {
        return None;
    }
    let file = clean(frame.file.as_deref()?);
    let func = match frame.kind {
        FrameKind::Interpreted => frame
            .name
            .strip_prefix(&names::python_module(&file))?
            .strip_prefix('.')?,
        _ => &frame.name,
    };
    let text = match frame.line {
        Some(line) => format!("{} ({file}:{line})", clean(func)),
        None => format!("{} ({file})", clean(func)),
    };
    (folded::source_frame(&text).as_ref() == Some(frame)).then_some(text)
}

/// A frame name or module that stays within one frame when read back: `;` separates
/// frames and a line is one stack.
fn clean(name: &str) -> String {
    name.chars()
        .map(|c| match c {
            ';' => ':',
            '\n' | '\r' => ' ',
            c => c,
        })
        .collect()
}
