//! Frames: one function activation as the input names it, after name normalisation.

use arcstr::ArcStr;
use compact_str::CompactString;
use std::fmt;

/// How the frame's code was running. Readers set it from what the input says (async-profiler
/// suffixes, perf's kernel context, DWARF inline records); rules may match on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum FrameKind {
    #[default]
    Native,
    Jit,
    Interpreted,
    Inlined,
    Kernel,
    /// An address no symbol was found for.
    Unknown,
    /// async-profiler's allocated-class leaf (`byte[]_[i]`): *what* was allocated, not who.
    AllocType,
}

impl FrameKind {
    pub const ALL: [FrameKind; 7] = [
        FrameKind::Native,
        FrameKind::Jit,
        FrameKind::Interpreted,
        FrameKind::Inlined,
        FrameKind::Kernel,
        FrameKind::Unknown,
        FrameKind::AllocType,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            FrameKind::Native => "native",
            FrameKind::Jit => "jit",
            FrameKind::Interpreted => "interpreted",
            FrameKind::Inlined => "inlined",
            FrameKind::Kernel => "kernel",
            FrameKind::Unknown => "unknown",
            FrameKind::AllocType => "alloc-type",
        }
    }

    pub fn parse(s: &str) -> Option<FrameKind> {
        FrameKind::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

impl fmt::Display for FrameKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The name of a frame, or a module, nobody could name: what perf prints for an address
/// without a symbol or a mapping, and what every reader of whose writes for one.
pub const UNKNOWN: &str = "[unknown]";

/// The text `convert --to folded` and `flame --folded` write for a sample without frames
/// (a pprof sample with no locations, py-spy's idle samples), read back as an empty stack. A
/// folded line needs a frame for inferno and FlameGraph to draw it (inferno ignores py-spy's
/// frameless ` 3` as a bad line), so this keeps the weight in their graphs too, as one
/// bracketed pseudo-frame like perf's `[unknown]`.
pub const NO_FRAMES: &str = "[no frames]";

/// One distinct frame. Two samples share a `FrameId` exactly when every field is equal.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Frame {
    /// Normalised function name (docs/design.md "Frame names"). Held inline up to 24 bytes (most
    /// names of C, Go, Python and short Rust frames): a million distinct frames are not a
    /// million allocations of a 32-byte heap chunk each (issue 24: 23 MB of 179 on a million
    /// distinct stacks).
    pub name: CompactString,
    /// DSO path, jar, crate or package: whatever the input knows; rules match its basename.
    /// A thin shared string (8 bytes, clones share one copy): the frames of one module or
    /// file are many, their names few (issue 24: Frame 64 -> 48 bytes).
    pub module: Option<ArcStr>,
    /// Source file, where the input has it (pprof, DWARF, py-spy).
    pub file: Option<ArcStr>,
    /// Source line; every input means "unknown" by line 0, so it is none here, and the
    /// niche keeps it in the frame's padding.
    pub line: Option<std::num::NonZeroU32>,
    pub kind: FrameKind,
}

const _: () = assert!(std::mem::size_of::<Frame>() == 48);

impl Frame {
    pub fn named(name: impl Into<CompactString>, kind: FrameKind) -> Frame {
        Frame {
            name: name.into(),
            kind,
            ..Frame::default()
        }
    }

    /// The module's file name, which is what `module` globs match.
    pub fn module_basename(&self) -> Option<&str> {
        self.module
            .as_deref()
            .map(|m| m.rsplit('/').next().unwrap_or(m))
    }
}

impl fmt::Display for Frame {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)?;
        if let Some(m) = &self.module {
            write!(f, " ({m})")?;
        }
        Ok(())
    }
}
