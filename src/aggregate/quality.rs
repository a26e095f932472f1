//! How far a recording can support the views (issue 14): call chains present, stacks cut
//! short, addresses nobody could name. Measured on every input while it is aggregated, so the
//! report, `explain`, JSON and the gate's guards all read the same figures.
//!
//! - **Ownerless**: a stack whose every frame is transparent (runtime, libc, allocator,
//!   kernel ...) and resolved, although it reaches no thread or process root (`_start`, `start_thread`,
//!   `runtime.goexit` ...). The owner view hands such a stack to its leaf's owner, which is
//!   right for a runtime's own threads (they reach a root) and wrong for a stack that
//!   frame-pointer unwinding cut inside code built without frame pointers (glibc, most -O2
//!   C/C++, Rust's std): the caller that asked for the work is lost.
//! - **Unresolved**: an address without a symbol that nothing places: JIT memory whose perf
//!   map is missing, anonymous memory, or a file no rule claims by module (owner
//!   `unsymbolized`). An address without a symbol in a file a rule claims by module has a
//!   known owner: it is counted as "classified by module only", not as unresolved.

use crate::model::{Frame, FrameKind, OwnerId, perf};

/// Function names a complete stack ends in: process and thread entry points of C, the JVM,
/// Go, Python and the kernel. Compared without perf's `@GLIBC...` version suffixes.
const ROOTS: &[&str] = &[
    "_start",
    "__libc_start_main",
    "__libc_start_call_main",
    "start_thread",
    "clone",
    "clone3",
    "__clone",
    "__clone3",
    "thread_native_entry",
    "JavaMain",
    "java_start",
    "runtime.goexit",
    "runtime.main",
    "runtime.mstart",
    "runtime.rt0_go",
    "main",
    "ret_from_fork",
    "ret_from_fork_asm",
    "secondary_startup_64",
    "secondary_startup_64_no_verify",
    "x86_64_start_kernel",
    "<module>",
];

/// Whether `frame` is a process or thread entry point (a stack that reaches it is whole).
fn is_root(frame: &Frame) -> bool {
    let name = frame.name.split('@').next().unwrap_or(&frame.name);
    ROOTS.contains(&name)
}

/// Whether a stack of only transparent frames (`frames` with their owners, leaf first) was
/// cut short: it reaches no root. Go's unwinder never cuts a stack, and pprof drops
/// `runtime.goexit`, so an outermost `runtime.` frame (a GC worker, a system stack) is a root
/// too. A stack holding an unresolved frame of a known mapping (a JIT map, a binary not
/// found) is not judged: the missing symbols are the cause to report there, and the unresolved
/// figures do. An address perf could not even map (`[unknown]` without a module) is what a
/// cut frame-pointer chain leaves behind, so it does not excuse the stack.
pub fn is_cut_short(frames: &[(&Frame, OwnerId)]) -> bool {
    let Some((outermost, _)) = frames.last() else {
        return false;
    };
    let mapped = |f: &Frame| f.module.as_deref().is_some_and(|m| m != "[unknown]");
    !outermost.name.starts_with("runtime.")
        && !frames
            .iter()
            .any(|(f, o)| is_root(f) || (is_unresolved(f, *o) && mapped(f)))
}

/// Whether `frame`, owned by `owner`, is an address that nothing places (see the module doc).
pub fn is_unresolved(frame: &Frame, owner: OwnerId) -> bool {
    if frame.kind != FrameKind::Unknown {
        return false;
    }
    owner == OwnerId::UNSYMBOLIZED
        || frame.module.as_deref().is_none_or(|m| {
            let basename = m.rsplit('/').next().unwrap_or(m);
            perf::is_jit_module(basename) || m == "//anon" || m.starts_with("[anon")
        })
}

/// The recording-quality figures of one input, as weights in its metric.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Quality {
    /// The deepest weighted stack, in frames; 1 (or 0) means there are no call chains.
    pub max_depth: usize,
    /// Weight of stacks of only transparent frames that reach no root.
    pub ownerless: u128,
    /// Weight whose leaf frame is unresolved.
    pub unresolved_leaf: u128,
    /// Weight whose owner frame (the frame the owner view decides by) is unresolved.
    pub unresolved_owner: u128,
    /// Weight with some unresolved frame: what the anywhere view cannot place.
    pub unresolved_anywhere: u128,
    /// Weight whose leaf is an address without a symbol, owned through a module rule.
    pub module_only_leaf: u128,
    /// Unresolved leaf weight per module (`[unknown]` without one), heaviest first.
    pub unresolved_by_module: Vec<(String, u128)>,
}

impl Quality {
    /// Whether the input has call chains: without them the owner and anywhere views are the
    /// self view again.
    pub fn callchains(&self) -> bool {
        self.max_depth > 1
    }
}

/// The share (percent) of the weight above which a quality figure makes a view unfit: the
/// report warns, and the gate refuses a verdict by default.
pub const UNFIT_PERCENT: f64 = 5.0;

/// `part` as a percentage of `total` (0 for a total of 0).
pub fn percent(part: u128, total: u128) -> f64 {
    if total == 0 {
        0.0
    } else {
        part as f64 * 100.0 / total as f64
    }
}

impl Quality {
    pub fn ownerless_percent(&self, total: u128) -> f64 {
        percent(self.ownerless, total)
    }

    pub fn unresolved_leaf_percent(&self, total: u128) -> f64 {
        percent(self.unresolved_leaf, total)
    }

    pub fn unresolved_owner_percent(&self, total: u128) -> f64 {
        percent(self.unresolved_owner, total)
    }

    /// One line of figures for a report header.
    pub fn summary(&self, total: u128) -> String {
        let chains = if self.callchains() {
            format!("call chains up to {} frames", self.max_depth)
        } else {
            "no call chains".to_string()
        };
        format!(
            "quality: {chains}; ownerless {:.1}%; unresolved {:.1}% of leaves, {:.1}% of owner \
             frames; classified by module only {:.1}% of leaves",
            self.ownerless_percent(total),
            self.unresolved_leaf_percent(total),
            self.unresolved_owner_percent(total),
            percent(self.module_only_leaf, total)
        )
    }

    /// What the figures mean for the answer, with the cause and the fix: empty when the
    /// recording supports every view.
    pub fn findings(&self, total: u128) -> Vec<String> {
        let mut out = Vec::new();
        if total == 0 {
            return out;
        }
        if !self.callchains() {
            out.push(
                "no call chains (every stack is one frame): the owner and anywhere views are the \
                 self view again; record with `perf record -g` (or `--call-graph dwarf`)"
                    .to_string(),
            );
        }
        let ownerless = self.ownerless_percent(total);
        if ownerless > UNFIT_PERCENT {
            out.push(format!(
                "{ownerless:.1}% of the weight is in stacks of only transparent frames that \
                 reach no thread root (_start, start_thread, ...): stacks cut short, as \
                 frame-pointer unwinding does in code built without frame pointers (glibc, -O2 \
                 C/C++, Rust's std); the owner view gives that weight to the leaf's owner. \
                 Record with `--call-graph dwarf` (or `lbr`)"
            ));
        }
        let (leaf, owner) = (
            self.unresolved_leaf_percent(total),
            self.unresolved_owner_percent(total),
        );
        if leaf > UNFIT_PERCENT || owner > UNFIT_PERCENT {
            let modules: Vec<String> = self
                .unresolved_by_module
                .iter()
                .take(4)
                .map(|(m, w)| {
                    let why = if perf::is_jit_module(m.rsplit('/').next().unwrap_or(m)) {
                        ", JIT code without its perf map"
                    } else {
                        ""
                    };
                    format!("{m} {:.1}%{why}", percent(*w, total))
                })
                .collect();
            out.push(format!(
                "{leaf:.1}% of the leaves and {owner:.1}% of the owner frames are addresses \
                 without a symbol ({}): JIT code needs its perf-PID.map (--jit-map-dir; \
                 -XX:+DumpPerfMapAtExit or perf-map-agent), binaries their symbols \
                 (--binary-path, --symfs, the distribution's debug symbol package)",
                modules.join(", ")
            ));
        }
        out
    }
}

/// Package roots too broad to be one project's code on their own: a prefix starting with one
/// of them takes its second segment too (`io.ktor.`, `com.example.`).
const BROAD_ROOTS: &[&str] = &[
    "com", "org", "io", "net", "dev", "me", "edu", "uk", "de", "fr", "github", "gitlab",
];

/// The package or crate prefix of a function name (`bench.MainKt.main` → `bench.`,
/// `logcrunch::parse::line` → `logcrunch::`, `main.handle` → `main.`); `None` for a name
/// without one (a C function).
pub fn package_prefix(name: &str) -> Option<String> {
    let name = name.trim_start_matches(['<', '&', '*']);
    let separators = ["::", ".", "/"];
    let first = |s: &str| {
        separators
            .iter()
            .filter_map(|sep| s.find(sep).map(|at| (at, *sep)))
            .min()
    };
    let (at, sep) = first(name)?;
    let head = &name[..at];
    if head.is_empty()
        || !head
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '-')
    {
        return None;
    }
    let prefix_end = at + sep.len();
    // GCC's and LLVM's clone suffixes (`table_round.constprop.0`) are no package
    const CLONE_SUFFIXES: [&str; 7] = [
        "constprop",
        "isra",
        "part",
        "cold",
        "lto_priv",
        "localalias",
        "llvm",
    ];
    if sep == "."
        && CLONE_SUFFIXES
            .iter()
            .any(|c| name[prefix_end..].starts_with(c))
    {
        return None;
    }
    if BROAD_ROOTS.contains(&head) {
        let rest = &name[prefix_end..];
        let (at2, sep2) = first(rest)?;
        return Some(name[..prefix_end + at2 + sep2.len()].to_string());
    }
    Some(name[..prefix_end].to_string())
}

/// The `--user PREFIX` that would claim the heaviest unclassified frames, with the weight of
/// the heaviest frame it claims (a lower bound of what it would move): the prefix of the most
/// weight among `frames` (unclassified frames and their inclusive weights), when that weight is
/// at least 1 % of `total`.
pub fn suggest_user_prefix<'a>(
    frames: impl Iterator<Item = (&'a str, u128)>,
    total: u128,
) -> Option<(String, u128)> {
    // a map, not a list searched per frame: millions of distinct prefixes made that quadratic
    let mut by_prefix: rustc_hash::FxHashMap<String, u128> = Default::default();
    for (name, weight) in frames {
        let Some(prefix) = package_prefix(name) else {
            continue;
        };
        let w = by_prefix.entry(prefix).or_default();
        *w = (*w).max(weight);
    }
    by_prefix
        .into_iter()
        .max_by(|a, b| a.1.cmp(&b.1).then_with(|| b.0.cmp(&a.0)))
        .filter(|(_, w)| percent(*w, total) >= 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_prefixes_of_each_ecosystem() {
        assert_eq!(
            package_prefix("bench.MainKt$main$1.invoke").as_deref(),
            Some("bench.")
        );
        assert_eq!(
            package_prefix("io.ktor.server.Foo.bar").as_deref(),
            Some("io.ktor.")
        );
        assert_eq!(
            package_prefix("logcrunch::parse::line").as_deref(),
            Some("logcrunch::")
        );
        assert_eq!(
            package_prefix("main.handleOrders").as_deref(),
            Some("main.")
        );
        assert_eq!(
            package_prefix("<logcrunch::X as core::fmt::Display>::fmt").as_deref(),
            Some("logcrunch::")
        );
        assert_eq!(package_prefix("table_put"), None);
        assert_eq!(package_prefix("table_round.constprop.0"), None);
        assert_eq!(package_prefix("sort_files.isra.0"), None);
        assert_eq!(package_prefix("[unknown]"), None);
    }

    #[test]
    fn the_heaviest_prefix_is_suggested_above_one_percent() {
        let frames = [
            ("app.A.run", 60),
            ("app.B.go", 30),
            ("lib.X.y", 50),
            ("work", 90),
        ];
        assert_eq!(
            suggest_user_prefix(frames.into_iter(), 100),
            Some(("app.".to_string(), 60))
        );
        assert_eq!(
            suggest_user_prefix([("app.A.run", 1)].into_iter(), 1000),
            None
        );
    }
}
