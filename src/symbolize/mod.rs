//! Symbolisation: addresses recorded by perf.data to frames.
//!
//! The reader hands over an [`AddressProfile`]: the modules (an ELF file, the kernel, a JIT
//! perf map) and the distinct addresses its samples hit in each, and the samples folded into
//! stacks of those addresses. [`to_profile`] finds each module's files ([`locate`]), resolves
//! each address once — ascending, so symbol tables and DWARF line programs are walked in order —
//! and builds the profile's stacks from their frames, leaf first (inlined functions before the
//! function they were inlined into). Modules are independent, so they are resolved in
//! parallel.
//!
//! Nothing is dropped: an address without a symbol becomes an `[unknown]` frame of kind
//! unknown that keeps its module, so module rules still classify it, and the module is
//! reported as missing with the reason. The diagnostics are this stage's: which modules have
//! no symbols and how many samples that costs, how many distinct addresses there were, and per
//! module why addresses found no symbol ([`crate::model::Unresolved`]: not found, another
//! build id, stripped, JIT map missing), which the quality figures show with the fix.

pub mod addresses;
pub mod debug_package;
mod dwarf;
pub mod elf;
pub mod jit;
pub mod kernel;
pub mod locate;
mod profile;

pub use addresses::{AddressProfile, ModuleId, NO_MODULE, RawFrame, RawStacks};
pub use profile::to_profile;

use crate::model::{CallGraph, Frame, FrameKind, Notice, OtherWhy, UNKNOWN, Unresolved, perf};
use rayon::prelude::*;
use std::path::PathBuf;

/// Where to find binaries, debug files, kernel and JIT symbols (perf.data input). Declared
/// here, by the stage that uses it, so that `unwind` and the readers take it from below.
#[derive(Debug, Clone, Default)]
pub struct SymbolOptions {
    pub binary_path: Vec<PathBuf>,
    pub symfs: Option<PathBuf>,
    pub kallsyms: Option<PathBuf>,
    pub jit_map_dir: Vec<PathBuf>,
    /// Expand functions inlined at each address into frames of their own (DWARF). `None`
    /// until a reader decides it ([`inline_for`]); symbolisation takes `None` as no.
    pub inline: Option<bool>,
    /// Give each frame its source file and line from the binary's DWARF line table
    /// (`explain --lines`): off otherwise, since every line of a function is then a frame of
    /// its own, which only a per-line listing wants.
    pub lines: bool,
}

/// Whether a recording's frames get inline frames when the command line does not say (issue
/// 29 item 4): whenever it has call chains (frame pointers, DWARF, LBR), and the binaries'
/// DWARF says what was inlined. perf 6.1 shows them for DWARF call chains only, but without
/// them a frame-pointer recording charges every inlined callee (an iterator, a crate's
/// `#[inline]` function, a `memset` wrapper) to the function it was inlined into, and its
/// owner view then disagrees with a DWARF recording of the same program by tens of points;
/// `--no-inline` gives perf's own view. Without call chains the views are the self view,
/// each sample one address, as perf shows it.
pub fn inline_for(asked: Option<bool>, call_graph: CallGraph) -> bool {
    asked.unwrap_or(call_graph != CallGraph::None)
}

/// What a module is, as far as the recording says.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ModuleKind {
    /// A mapped file (executable, shared library, `[vdso]`). Addresses are file offsets
    /// (`address - mapping start + mapping page offset`), which do not depend on where the
    /// file was loaded.
    Elf {
        path: String,
        build_id: Option<Vec<u8>>,
        /// Page offset of the executable mapping, to place addresses in a debug file that has
        /// no file contents (only program headers) when the binary itself is missing.
        exec_pgoff: Option<u64>,
    },
    /// The kernel; addresses are absolute. `text` is the address of `_text` at recording
    /// time (perf writes it as the kernel mapping's page offset), for relocating a kallsyms
    /// file taken after a reboot.
    Kernel {
        build_id: Option<Vec<u8>>,
        text: Option<u64>,
    },
    /// Anonymous executable memory of a process: JIT code, named by `perf-PID.map`.
    Jit { pid: i32 },
}

impl ModuleKind {
    /// The module name frames carry: the recorded path, `[kernel.kallsyms]`, `perf-PID.map`.
    pub fn display_name(&self) -> String {
        match self {
            ModuleKind::Elf { path, .. } => path.clone(),
            ModuleKind::Kernel { .. } => perf::KERNEL_MODULE.to_string(),
            ModuleKind::Jit { pid } => format!("perf-{pid}.map"),
        }
    }

    /// Whether both are loaded from the same files ([`preload`] does not look at the kernel's
    /// `_text` or an ELF file's executable page offset).
    pub fn same_files(&self, other: &ModuleKind) -> bool {
        match (self, other) {
            (
                ModuleKind::Elf {
                    path: a,
                    build_id: x,
                    ..
                },
                ModuleKind::Elf {
                    path: b,
                    build_id: y,
                    ..
                },
            ) => a == b && x == y,
            (ModuleKind::Kernel { build_id: x, .. }, ModuleKind::Kernel { build_id: y, .. }) => {
                x == y
            }
            (ModuleKind::Jit { pid: a }, ModuleKind::Jit { pid: b }) => a == b,
            _ => false,
        }
    }
}

/// One module and the distinct addresses to resolve in it (sorted ascending).
#[derive(Debug, Clone)]
pub struct ModuleRequest {
    pub kind: ModuleKind,
    pub addresses: Vec<u64>,
}

/// The frames of each requested address (same order), leaf first.
#[derive(Debug, Clone, Default)]
pub struct ModuleResult {
    pub frames: Vec<Vec<Frame>>,
    /// The module could not be symbolised at all (binary not found, wrong build id...):
    /// `reason` says why.
    pub missing: bool,
    /// How many of the addresses found no symbol.
    pub unresolved: usize,
    /// Why those addresses found none (set whenever `unresolved` > 0).
    pub reason: Option<Unresolved>,
    pub warnings: Vec<Notice>,
}

/// Resolves every module, in parallel across modules, with the files of those `ahead` holds.
pub fn symbolize(
    requests: &[ModuleRequest],
    options: &SymbolOptions,
    ahead: &LoadedAhead,
) -> Vec<ModuleResult> {
    requests
        .par_iter()
        .map(|r| {
            if r.addresses.is_empty() {
                return ModuleResult::default();
            }
            ahead
                .take(&r.kind)
                .unwrap_or_else(|| preload(&r.kind, options))
                .resolve(&r.kind, &r.addresses)
        })
        .collect()
}

/// Modules whose files are loaded ahead, while the input is still read (perf.data's early
/// loads): those loaded, and the one being loaded, which symbolisation waits for rather than
/// loading it a second time, so that the loads left when the input ends overlap
/// symbolisation's own instead of holding it up.
#[derive(Default)]
pub struct LoadedAhead {
    state: std::sync::Mutex<Ahead>,
    changed: std::sync::Condvar,
}

#[derive(Default)]
struct Ahead {
    loaded: Vec<(ModuleKind, Preloaded)>,
    loading: Option<ModuleKind>,
    closed: bool,
}

impl LoadedAhead {
    fn state(&self) -> std::sync::MutexGuard<'_, Ahead> {
        // a loader that panicked left no half-made state: the lists are still whole
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Marks `kind` as being loaded, unless loads are closed: whether it may start.
    pub fn start(&self, kind: &ModuleKind) -> bool {
        let mut state = self.state();
        if state.closed {
            return false;
        }
        state.loading = Some(kind.clone());
        true
    }

    /// The module being loaded is done: its files, or `None` when loading them failed
    /// (symbolisation then loads them itself).
    pub fn finish(&self, kind: ModuleKind, loaded: Option<Preloaded>) {
        let mut state = self.state();
        state.loading = None;
        if let Some(loaded) = loaded {
            state.loaded.push((kind, loaded));
        }
        self.changed.notify_all();
    }

    /// No load starts any more: what was not started is symbolisation's to load.
    pub fn close(&self) {
        self.state().closed = true;
    }

    /// The files of a module with the same files as `kind`, if loaded ahead, waiting for
    /// them while they are being loaded.
    pub fn take(&self, kind: &ModuleKind) -> Option<Preloaded> {
        let mut state = self.state();
        loop {
            if let Some(i) = state.loaded.iter().position(|(k, _)| k.same_files(kind)) {
                return Some(state.loaded.swap_remove(i).1);
            }
            if !state.loading.as_ref().is_some_and(|k| k.same_files(kind)) {
                return None;
            }
            state = self.changed.wait(state).unwrap_or_else(|e| e.into_inner());
        }
    }
}

/// A module's files, found and loaded: the part of symbolisation that does not depend on
/// the addresses (and that a DWARF unwinder needs too).
pub struct Preloaded {
    files: Files,
}

enum Files {
    Elf(Box<elf::Loaded>),
    Kernel(kernel::Loaded),
    Jit(jit::Loaded),
}

/// Finds and loads a module's files (the expensive part that does not need addresses).
pub fn preload(kind: &ModuleKind, options: &SymbolOptions) -> Preloaded {
    let files = match kind {
        ModuleKind::Elf { path, build_id, .. } => {
            Files::Elf(Box::new(elf::load(path, build_id.as_deref(), options)))
        }
        ModuleKind::Kernel { build_id, .. } => {
            Files::Kernel(kernel::KernelSource::new(options).load(build_id.as_deref()))
        }
        ModuleKind::Jit { pid } => Files::Jit(jit::load(*pid, options)),
    };
    Preloaded { files }
}

impl Preloaded {
    /// Resolves the module's distinct addresses (ascending), leaf-first frames for each.
    pub fn resolve(self, kind: &ModuleKind, addresses: &[u64]) -> ModuleResult {
        match (self.files, kind) {
            (Files::Elf(loaded), ModuleKind::Elf { exec_pgoff, .. }) => {
                loaded.resolve(*exec_pgoff, addresses)
            }
            (Files::Kernel(loaded), ModuleKind::Kernel { text, .. }) => {
                loaded.resolve(*text, addresses)
            }
            (Files::Jit(loaded), _) => loaded.resolve(addresses),
            // preload() made the files from this kind
            _ => all_unknown(
                &kind.display_name(),
                addresses.len(),
                Unresolved::Other {
                    why: OtherWhy::KindChanged,
                },
            ),
        }
    }
}

/// The frame for an address no symbol was found for.
pub fn unknown_frame(module: &str) -> Frame {
    Frame {
        name: UNKNOWN.into(),
        module: Some(module.into()),
        file: None,
        line: None,
        kind: FrameKind::Unknown,
    }
}

/// A result in which every address is unknown, with the reason.
pub fn all_unknown(module: &str, count: usize, reason: Unresolved) -> ModuleResult {
    let frame = unknown_frame(module);
    ModuleResult {
        frames: vec![vec![frame]; count],
        missing: true,
        unresolved: count,
        reason: Some(reason),
        warnings: Vec::new(),
    }
}

/// `1f2e...` for messages and build-id paths.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Why `perf script` text printed `[unknown]` in a file: perf had no symbol there, and the
/// text does not say why. It names no build id either, so this machine's file of that name is
/// looked at (`--binary-path`, the path under `--symfs`): when it has no `.symtab`, the binary
/// is most likely stripped where perf ran too, and the reason says it was judged by name only.
/// A file not found, or one with symbols (another build?), tells nothing: no reason then.
pub fn diagnose_printed_unknowns(
    profile: &crate::model::Profile,
    options: &SymbolOptions,
) -> Vec<crate::model::UnresolvedModule> {
    let mut modules: Vec<&str> = profile
        .frames()
        .filter(|f| f.kind == FrameKind::Unknown)
        .filter_map(|f| f.module.as_deref())
        .filter(|m| m.starts_with('/') && !perf::is_jit_module(m.rsplit('/').next().unwrap_or(m)))
        .collect();
    modules.sort_unstable();
    modules.dedup();
    modules
        .into_iter()
        .filter_map(|module| {
            let located = locate::locate(module, None, options);
            let file = located.debug.as_ref().or(located.code.as_ref())?;
            (!file.has_symtab).then(|| crate::model::UnresolvedModule {
                module: module.to_string(),
                reason: Unresolved::Stripped {
                    path: file.path.display().to_string(),
                    build_id: locate::own_build_id(&file.path).map(|id| hex(&id)),
                    package: (file.path == locate::under_symfs(options, module))
                        .then(|| debug_package::installed_by(options.symfs.as_deref(), module))
                        .flatten(),
                    by_name_only: true,
                },
            })
        })
        .collect()
}
