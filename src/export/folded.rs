//! Folded output: `root;...;leaf N` lines in one metric, from any input, for inferno,
//! FlameGraph, speedscope and `whose` itself.

use crate::input::folded;
use crate::model::folded::{SEPARATOR, write_differential_line, write_line};
use crate::model::{Frame, FrameKind, NO_FRAMES, Profile, StackId};
use crate::names;
use std::io::Write;

/// What [`write`] wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Written {
    pub lines: usize,
    /// The metric had negative weights (a pprof delta profile), so every line carries two
    /// counts, `stack BEFORE AFTER` (see [`write`]).
    pub differential: bool,
}

/// Writes one line per distinct stack text (rows that differ only by thread, or with `plain`
/// by what the names-only text leaves out, are summed), sorted, skipping zero weights. Kernel
/// and JIT frames get inferno's `_[k]` / `_[j]` suffixes and allocated-class leaves
/// async-profiler's `_[i]`, so the folded reader gives them back their kinds, and a sample
/// without frames is [`NO_FRAMES`]. By default frames also carry their module (as
/// perf script prints it), frames known by a source file and no module (py-spy's Python
/// frames) py-spy's `func (file.py:LINE)`, Ruby's rbspy's `name - file.rb:LINE`, and other
/// interpreted frames `_[0]`: reading the
/// file back gives the same owners (tests/it/roundtrip.rs), and inferno still draws it. With
/// `plain` (`convert --plain`) the text is names only, as inferno's collapsers write it.
///
/// A metric with negative weights (`go tool pprof -proto -diff_base`: the base's samples
/// negated) is written as a differential folded file, `stack BEFORE AFTER` with BEFORE the
/// magnitude of the negative part (the base) and AFTER the positive part (the new profile):
/// what difffolded.pl and inferno-diff-folded write and `inferno-flamegraph` draws as a
/// differential graph, so no weight is dropped. One signed count per line instead would be
/// read by neither inferno nor FlameGraph (they skip a line whose count is negative).
///
/// Memory: one weight per stack and the text of the stacks that have weight, back to back in
/// one buffer, sorted by index; no per-line `String` or hash map.
pub fn write(
    profile: &Profile,
    metric: usize,
    plain: bool,
    out: &mut dyn Write,
) -> std::io::Result<Written> {
    let mut after = vec![0u128; profile.stack_count()];
    for row in profile.rows() {
        let w = &mut after[row.stack.0 as usize];
        *w = w.saturating_add(row.values[metric]);
    }
    let differential = profile.negative.total(metric) > 0;
    let mut before = vec![0u128; if differential { after.len() } else { 0 }];
    if differential {
        for row in profile.negative.rows() {
            let w = &mut before[row.stack.0 as usize];
            *w = w.saturating_add(row.values.get(metric).copied().unwrap_or(0));
        }
    }
    let weighed = |s: usize| after[s] > 0 || before.get(s).is_some_and(|&b| b > 0);
    // the text of every stack with weight, back to back; `ends[i]` closes entry i
    let mut arena = String::new();
    let mut ends: Vec<usize> = Vec::new();
    let mut stacks: Vec<u32> = Vec::new();
    for s in (0..after.len()).filter(|&s| weighed(s)) {
        push_stack_text(profile, StackId(s as u32), plain, &mut arena);
        ends.push(arena.len());
        stacks.push(s as u32);
    }
    let text = |i: u32| -> &str {
        let i = i as usize;
        &arena[if i == 0 { 0 } else { ends[i - 1] }..ends[i]]
    };
    let mut order: Vec<u32> = (0..stacks.len() as u32).collect();
    order.sort_unstable_by(|&a, &b| text(a).cmp(text(b)));
    let mut lines = 0;
    let mut i = 0;
    while i < order.len() {
        let line = text(order[i]);
        let (mut b, mut a) = (0u128, 0u128);
        while i < order.len() && text(order[i]) == line {
            let s = stacks[order[i] as usize] as usize;
            a = a.saturating_add(after[s]);
            b = b.saturating_add(before.get(s).copied().unwrap_or(0));
            i += 1;
        }
        if differential {
            write_differential_line(out, line, b, a)?;
        } else {
            write_line(out, line, a)?;
        }
        lines += 1;
    }
    Ok(Written {
        lines,
        differential,
    })
}

/// Appends a stack's folded text (root first) to `text`.
fn push_stack_text(profile: &Profile, stack: StackId, plain: bool, text: &mut String) {
    let frames = profile.stack(stack);
    if frames.is_empty() {
        text.push_str(NO_FRAMES);
        return;
    }
    for (i, &f) in frames.iter().rev().enumerate() {
        if i > 0 {
            text.push(SEPARATOR);
        }
        let frame = profile.frame(f);
        let source = || {
            source_text(frame)
                .or_else(|| js_text(frame))
                .or_else(|| rbspy_text(frame))
        };
        if !plain && let Some(source) = source() {
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

/// A JavaScript frame (kind jit, a script file, no module: a `.cpuprofile`'s or a node perf
/// map's) as node's perf map names it, `JS:name FILE:LINE`, which the folded reader takes back
/// with its file ([`folded::folded_frame`]), so the guess of the program's scripts and rules
/// on files still apply; when it reads back as exactly this frame.
fn js_text(frame: &Frame) -> Option<String> {
    if frame.module.is_some() || frame.kind != FrameKind::Jit {
        return None;
    }
    let file = clean(frame.file.as_deref()?);
    let text = match frame.line {
        Some(line) => format!("JS:{} {file}:{line}", clean(&frame.name)),
        None => format!("JS:{} {file}", clean(&frame.name)),
    };
    (folded::folded_frame(&text) == *frame).then_some(text)
}

/// A Ruby frame (a method with its file and no module: rbspy's, YJIT's) as rbspy's collapsed
/// output names it, `name - FILE:LINE`, which the folded reader takes back with its file
/// ([`crate::names::rbspy_frame`]), so the ruby preset and the guess of the program's files
/// still apply; when it reads back with the same name, file and line (the kind read back is
/// `interpreted`, where speedscope's reader left `native`).
fn rbspy_text(frame: &Frame) -> Option<String> {
    if frame.module.is_some()
        || !matches!(
            frame.kind,
            FrameKind::Interpreted | FrameKind::Native | FrameKind::Jit
        )
    {
        return None;
    }
    let file = clean(frame.file.as_deref()?);
    let text = match frame.line {
        Some(line) => format!("{} - {file}:{line}", clean(&frame.name)),
        None => format!("{} - {file}", clean(&frame.name)),
    };
    let back = folded::folded_frame(&text);
    (back.name == frame.name && back.file == frame.file && back.line == frame.line).then_some(text)
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
