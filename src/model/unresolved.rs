//! Why a module's addresses have no symbol (issue 14): found out by symbolisation (perf.data)
//! or told by the module's name (a JIT map, an address perf could not map), carried in the
//! profile so the quality figures can say, per module, the cause and the fix.

use super::UNKNOWN;
use super::perf;

/// The cause of addresses without a symbol in one module.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unresolved {
    /// JIT code whose `perf-PID.map` was not found, could not be read or lacks the addresses.
    JitMapMissing { why: JitMapWhy },
    /// The binary was found, but without a symbol table (`.symtab`): its `.dynsym` names only
    /// exported functions and does not cover these addresses. `package` is the distribution
    /// package that installed it, where the system knows (Debian's dpkg).
    Stripped {
        path: String,
        build_id: Option<String>,
        package: Option<String>,
        /// Judged from this machine's file of that name, not one matched by build id (the
        /// input, `perf script` text, names none).
        by_name_only: bool,
    },
    /// Files of that name exist, but with another build id: other code at those addresses.
    /// `found` holds each file and its build id.
    BuildIdMismatch {
        found: Vec<(String, String)>,
        want: String,
    },
    /// No file for the module was found where whose looks.
    NotFound { build_id: Option<String> },
    /// The file has a symbol table, but no symbol covers the addresses (padding, PLT, code
    /// generated at run time into the file's mapping).
    NoSymbol { path: String },
    /// Found but unusable (unreadable, not placeable), or the kernel's symbols are missing.
    Other { why: OtherWhy },
    /// No module at all: an address perf could not place in any mapping (anonymous memory,
    /// or a garbage return address of a frame-pointer chain cut short).
    Unmapped,
    /// Profiler text (`perf script`'s `[unknown]`, py-spy's `0xADDR (LIB)`) gave no symbol, and
    /// the text does not say why.
    NotSymbolizedByPerf,
    /// A frame without a symbol or a module (folded text, pprof without mappings): the input
    /// does not say where the address was.
    NoModule,
}

/// Why a JIT's addresses found no symbol in its perf map.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JitMapWhy {
    /// No `perf-PID.map` in any of `dirs`.
    NotFound { dirs: Vec<String> },
    /// The map at `path` could not be read.
    Unreadable { path: String, error: String },
    /// The map at `path` has no entry for `unresolved` of the `of` addresses.
    Incomplete {
        path: String,
        unresolved: usize,
        of: usize,
    },
    /// The profiler's text names a JIT map module without a symbol.
    NoEntry,
}

/// Why a module other than a JIT's could not be used, or the kernel's symbols are missing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OtherWhy {
    /// The recording's kernel build id is not the running kernel's.
    KernelOtherBuild,
    /// No kallsyms was found for the recorded kernel.
    NoKallsyms,
    /// `--kallsyms PATH` could not be used (its warning says why).
    KallsymsUnusable { path: String },
    /// A kallsyms file (`path`) could not be read.
    Kallsyms { path: String, error: KallsymsError },
    /// The kernel's symbols cover none of the addresses.
    NoKernelSymbol,
    /// Neither the binary nor a debug file with symbols was found.
    NoSymbolFile,
    /// The module's files were loaded for another kind of module.
    KindChanged,
    /// The file could not be read or placed: the reader's error.
    Error(String),
}

/// Why a kallsyms file is of no use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KallsymsError {
    /// It could not be read.
    Io(String),
    /// Larger than 4 GiB.
    TooLarge,
    /// No text symbols (`t`, `T`, `w`, `W`).
    NoTextSymbols,
    /// Every address is 0 (`kernel.kptr_restrict`).
    AllZero,
}

impl Unresolved {
    /// The reason for a module symbolisation did not diagnose: what its name tells.
    pub fn from_module_name(module: Option<&str>) -> Unresolved {
        match module {
            None => Unresolved::NoModule,
            Some(UNKNOWN) => Unresolved::Unmapped,
            Some(m) if m == "//anon" || m.starts_with("[anon") => Unresolved::Unmapped,
            Some(m) if perf::is_jit_module(m.rsplit('/').next().unwrap_or(m)) => {
                Unresolved::JitMapMissing {
                    why: JitMapWhy::NoEntry,
                }
            }
            Some(_) => Unresolved::NotSymbolizedByPerf,
        }
    }

    /// A stable name for scripts (JSON `reason`).
    pub fn code(&self) -> &'static str {
        match self {
            Unresolved::JitMapMissing { .. } => "jit-map-missing",
            Unresolved::Stripped { .. } => "stripped",
            Unresolved::BuildIdMismatch { .. } => "build-id-mismatch",
            Unresolved::NotFound { .. } => "not-found",
            Unresolved::NoSymbol { .. } => "no-symbol",
            Unresolved::Other { .. } => "other",
            Unresolved::Unmapped => "unmapped",
            Unresolved::NotSymbolizedByPerf => "not-symbolized-by-perf",
            Unresolved::NoModule => "no-module",
        }
    }
}

/// One module's unresolved addresses and why, as symbolisation found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnresolvedModule {
    /// The module name frames carry (recorded path, `perf-PID.map`, `[kernel.kallsyms]`).
    pub module: String,
    pub reason: Unresolved,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_module_name_alone_tells_jit_unmapped_or_nothing() {
        let code = |m| Unresolved::from_module_name(m).code();
        assert_eq!(code(Some("perf-22048.map")), "jit-map-missing");
        assert_eq!(code(Some("/tmp/perf-7.map")), "jit-map-missing");
        assert_eq!(code(Some("[unknown]")), "unmapped");
        assert_eq!(code(Some("//anon")), "unmapped");
        assert_eq!(code(Some("/usr/bin/sort")), "not-symbolized-by-perf");
        assert_eq!(code(None), "no-module");
    }
}
