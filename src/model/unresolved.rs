//! Why a module's addresses have no symbol (issue 14): found out by symbolisation (perf.data)
//! or told by the module's name (a JIT map, an address perf could not map), carried in the
//! profile so the quality figures can say, per module, the cause and the fix.

use super::UNKNOWN;
use super::perf;

/// The cause of addresses without a symbol in one module.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unresolved {
    /// JIT code whose `perf-PID.map` was not found or could not be read.
    JitMapMissing { detail: String },
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
    BuildIdMismatch { found: Vec<String>, want: String },
    /// No file for the module was found where whose looks.
    NotFound { build_id: Option<String> },
    /// The file has a symbol table, but no symbol covers the addresses (padding, PLT, code
    /// generated at run time into the file's mapping).
    NoSymbol { path: String },
    /// Found but unusable (unreadable, not placeable), or the kernel's symbols are missing.
    Other { detail: String },
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

impl Unresolved {
    /// The reason for a module symbolisation did not diagnose: what its name tells.
    pub fn from_module_name(module: Option<&str>) -> Unresolved {
        match module {
            None => Unresolved::NoModule,
            Some(UNKNOWN) => Unresolved::Unmapped,
            Some(m) if m == "//anon" || m.starts_with("[anon") => Unresolved::Unmapped,
            Some(m) if perf::is_jit_module(m.rsplit('/').next().unwrap_or(m)) => {
                Unresolved::JitMapMissing {
                    detail: "no entry for these addresses".into(),
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

    /// The cause in words.
    pub fn cause(&self) -> String {
        match self {
            Unresolved::JitMapMissing { detail } => {
                format!("JIT code without its perf map: {detail}")
            }
            Unresolved::Stripped {
                path, by_name_only, ..
            } => format!(
                "binary stripped: {path} has no .symtab and its .dynsym does not cover the \
                 addresses{}",
                if *by_name_only {
                    " (this machine's file of that name: the input names no build id)"
                } else {
                    ""
                }
            ),
            Unresolved::BuildIdMismatch { found, want } => format!(
                "build id mismatch: {} has another build id than the recording's {want}",
                found.join(", ")
            ),
            Unresolved::NotFound { .. } => "binary not found".to_string(),
            Unresolved::NoSymbol { path } => {
                format!("{path} has a symbol table, but no symbol covers the addresses")
            }
            Unresolved::Other { detail } => detail.clone(),
            Unresolved::Unmapped => {
                "addresses in no mapped file (anonymous memory, or a frame-pointer chain cut \
                 short)"
                    .to_string()
            }
            Unresolved::NotSymbolizedByPerf => {
                "the profiler's text names no symbol here (`[unknown]` from perf script, an \
                 address from py-spy --native) and does not say why"
                    .to_string()
            }
            Unresolved::NoModule => {
                "frames without a symbol or a module (the input does not say where or why)"
                    .to_string()
            }
        }
    }

    /// What to do about it.
    pub fn fix(&self) -> String {
        let fetch = |build_id: &Option<String>| match build_id {
            Some(id) => format!(
                "or set DEBUGINFOD_URLS and run `debuginfod-find debuginfo {id}` (whose looks \
                 in ~/.cache/debuginfod_client)"
            ),
            None => "or set DEBUGINFOD_URLS and fetch them with debuginfod-find".to_string(),
        };
        match self {
            Unresolved::JitMapMissing { .. } => "give the JIT's perf-PID.map (--jit-map-dir DIR; \
                 -XX:+DumpPerfMapAtExit, perf-map-agent, node --perf-basic-prof)"
                .to_string(),
            Unresolved::Stripped {
                path,
                build_id,
                package: Some(package),
                ..
            } => format!(
                "{path} is from package {package}: install {package}-dbgsym (Debian/Ubuntu \
                 debug symbol archive), {}",
                fetch(build_id)
            ),
            Unresolved::Stripped {
                path,
                build_id,
                package: None,
                ..
            } => format!(
                "install the debug symbols for {path} (e.g. its -dbgsym/-debuginfo package), \
                 {}, or --binary-path DIR with an unstripped build",
                fetch(build_id)
            ),
            Unresolved::BuildIdMismatch { .. } => {
                "point --binary-path DIR (or --symfs) at the binary that ran".to_string()
            }
            Unresolved::NotFound { build_id } => format!(
                "point --binary-path DIR or --symfs DIR at it ({})",
                build_id
                    .as_ref()
                    .map_or("searched by name".to_string(), |id| format!(
                        "searched by build id {id} and by name"
                    ))
            ),
            Unresolved::NoSymbol { .. } | Unresolved::Other { .. } => {
                "--binary-path DIR with a build that has its symbols".to_string()
            }
            Unresolved::Unmapped => {
                "record with --call-graph dwarf if stacks are cut short; JIT code needs its perf \
                 map"
                .to_string()
            }
            Unresolved::NotSymbolizedByPerf => {
                "symbolize where the binaries and their debug symbols are (perf script on the \
                 recording machine; py-spy needs the libraries' symbols), or give whose the \
                 perf.data (it says why per module)"
                    .to_string()
            }
            Unresolved::NoModule => "give whose the recording itself (perf.data, pprof with \
                 mappings), which says why per module"
                .to_string(),
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
