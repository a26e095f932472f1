//! DWARF unwinding of `perf record --call-graph dwarf` samples.
//!
//! Such a sample carries the user registers and a copy of the top of the user stack instead
//! of a user callchain (its callchain holds the kernel frames and then only the user ip). This
//! stage turns registers + stack bytes into the user return addresses with framehop, from the
//! modules' `.eh_frame` (indexed by `.eh_frame_hdr`) or `.debug_frame`. It produces addresses
//! only: the perf.data reader puts them where the user callchain would be, and symbolisation
//! treats them exactly like frame-pointer addresses (`address - 1` for return addresses).
//!
//! The reader feeds the same process events it tracks itself (executable MMAP/MMAP2, FORK,
//! exec COMM) to [`DwarfUnwinder`], so each process gets its own module list; the files are
//! found by the caller-supplied locator (the symbolize stage's, by build id and path).
//! Modules are loaded once per (path, build id); framehop's rule cache per process makes the
//! cost per distinct address rather than per sample.
//!
//! A stack that stops early keeps the frames found; [`UnwindStats`] counts why (stack copy
//! exhausted, a module without usable unwind information, an address outside every mapping,
//! missing registers) so the report can give the truncated share, the modules responsible and,
//! when the copy size was the cause, suggest a larger `--call-graph dwarf,SIZE`.

pub mod image;
pub mod perf;
mod process;

use crate::model::{ModuleProblem, Notice, UnwindCause, UnwindFailure};
use image::Image;
use process::Process;
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

/// perf's register numbers on x86_64 (`arch/x86/include/uapi/asm/perf_regs.h`), which
/// index the bits of `sample_regs_user` and, in mask order, the sampled values.
pub const PERF_REG_X86_BP: u64 = 6;
pub const PERF_REG_X86_SP: u64 = 7;
pub const PERF_REG_X86_IP: u64 = 8;

/// Deeper than any real stack; stops a (theoretically) cycling unwind.
const MAX_FRAMES: usize = 1024;

/// The three registers framehop needs on x86_64.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UserRegs {
    pub ip: u64,
    pub sp: u64,
    pub bp: u64,
}

impl UserRegs {
    /// Picks ip, sp and bp out of a sample's user registers; `None` when the recording's
    /// register mask lacks one of them.
    pub fn from_perf(regs: &linux_perf_data::linux_perf_event_reader::Regs<'_>) -> Option<Self> {
        Some(UserRegs {
            ip: regs.get(PERF_REG_X86_IP)?,
            sp: regs.get(PERF_REG_X86_SP)?,
            bp: regs.get(PERF_REG_X86_BP)?,
        })
    }
}

/// An executable mapping of a file into a process, as MMAP/MMAP2 records describe it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mapping {
    pub start: u64,
    pub end: u64,
    pub page_offset: u64,
    /// The path perf recorded (`/usr/lib/x86_64-linux-gnu/libc.so.6`, `[vdso]`, `//anon`).
    pub path: String,
    pub build_id: Option<Vec<u8>>,
}

/// The files of a module, as the symbolize stage's locator found them.
#[derive(Debug, Clone, Default)]
pub struct ModuleFiles {
    /// The binary itself (loaded sections: `.eh_frame`, `.eh_frame_hdr`).
    pub code: Option<PathBuf>,
    /// A separate debug file (may hold `.debug_frame`).
    pub debug: Option<PathBuf>,
    /// Why nothing usable was found (for the report); `None` is read as not found.
    pub missing: Option<ModuleProblem>,
}

/// Finds a module's files from its recorded path and build id.
pub type Locator = Box<dyn Fn(&str, Option<&[u8]>) -> ModuleFiles + Send + Sync>;

/// The symbolize stage's search (build id, `--binary-path`, `--symfs`, perf's build-id
/// cache, debuglink), so unwinding and symbols always use the same files.
pub fn symbolize_locator(options: crate::symbolize::SymbolOptions) -> Locator {
    Box::new(move |path, build_id| {
        let located = crate::symbolize::locate::locate(path, build_id, &options);
        let missing = (!located.found()).then(|| match located.mismatched.first() {
            Some((file, id)) => ModuleProblem::OtherBuildId {
                file: file.display().to_string(),
                id: id.clone(),
            },
            None => ModuleProblem::NotFound,
        });
        ModuleFiles {
            code: located.code.map(|c| c.path),
            debug: located.debug.map(|d| d.path),
            missing,
        }
    })
}

/// An unwinder when the recording has DWARF call graphs (some event samples user registers
/// and a user stack), else `None`: frame-pointer recordings are read exactly as before.
pub fn for_recording(
    attrs: &[linux_perf_data::AttributeDescription],
    options: &crate::symbolize::SymbolOptions,
) -> Option<DwarfUnwinder> {
    use linux_perf_data::linux_perf_event_reader::SampleFormat;
    let dwarf = attrs.iter().find(|a| {
        a.attr.sample_format.contains(SampleFormat::STACK_USER)
            && a.attr.sample_format.contains(SampleFormat::REGS_USER)
    })?;
    Some(DwarfUnwinder::new(
        symbolize_locator(options.clone()),
        Some(u64::from(dwarf.attr.sample_stack_user)),
    ))
}

/// Why a user stack ends where it ends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StackEnd {
    /// The unwind information says this is the outermost frame (`_start`, `clone3`).
    Complete,
    /// The next frame would be read from beyond the copied stack bytes.
    StackExhausted,
    /// The frame's module has no usable unwind information (binary not found, no CFI, corrupt
    /// CFI); the module's recorded path.
    NoUnwindInfo(String),
    /// An address outside every executable mapping (JIT code, or garbage).
    Unmapped,
    /// The sample lacks ip/sp/bp or the stack copy.
    MissingRegisters,
    /// The record's user-stack size was larger than the record; the stack was dropped.
    BadRecord,
    /// framehop stopped: the message.
    Failed(UnwindFailure),
}

impl StackEnd {
    pub fn is_truncated(&self) -> bool {
        *self != StackEnd::Complete
    }
}

/// Per-recording counts of how user stacks ended, in samples.
#[derive(Debug, Clone, Default)]
pub struct UnwindStats {
    /// Samples that carried a user stack to unwind.
    pub stacks: u64,
    pub truncated: u64,
    /// Truncated because the copy ran out while the thread's stack went on (the kernel copied
    /// the whole requested size): a larger `dwarf,SIZE` would have helped.
    pub copy_exhausted: u64,
    /// Truncated because the copy ran out although the kernel copied less than requested.
    pub stack_exhausted_short: u64,
    /// Truncated in a module without usable unwind information, per module path.
    pub by_module: BTreeMap<String, u64>,
    pub unmapped: u64,
    pub missing_registers: u64,
    /// Other unwinder failures, per message.
    pub failed: BTreeMap<UnwindFailure, u64>,
    /// Samples whose dynamic stack size exceeded the bytes copied (only those were used).
    pub bad_sizes: u64,
    /// Samples whose record declared a user stack larger than itself (stack dropped).
    pub bad_records: u64,
    /// The stack copy size the recording asked for (`sample_stack_user`).
    pub copy_size: Option<u64>,
    /// Why a module could not be used, per module path.
    pub module_problems: BTreeMap<String, ModuleProblem>,
    /// Total frames found by unwinding (for the mean depth in the note).
    pub frames: u64,
    /// Time spent unwinding (module loading included), for `WHOSE_TIMINGS`.
    pub elapsed: std::time::Duration,
}

impl UnwindStats {
    fn count(&mut self, end: &StackEnd, full_copy: bool) {
        self.stacks += 1;
        if !end.is_truncated() {
            return;
        }
        self.truncated += 1;
        match end {
            StackEnd::Complete => {}
            StackEnd::StackExhausted if full_copy => self.copy_exhausted += 1,
            StackEnd::StackExhausted => self.stack_exhausted_short += 1,
            StackEnd::NoUnwindInfo(module) => {
                *self.by_module.entry(module.clone()).or_default() += 1;
            }
            StackEnd::Unmapped => self.unmapped += 1,
            StackEnd::MissingRegisters => self.missing_registers += 1,
            StackEnd::BadRecord => self.bad_records += 1,
            StackEnd::Failed(msg) => *self.failed.entry(msg.clone()).or_default() += 1,
        }
    }

    /// The counts the recording-quality figures carry (`model::Recording::dwarf`).
    pub fn truncated_stacks(&self) -> crate::model::TruncatedStacks {
        let no_unwind_info = (self.modules_by_weight().into_iter())
            .map(|(m, n)| (m.clone(), n, self.module_problems.get(m).cloned()))
            .collect();
        let ran_past = (UnwindCause::RanPastCopy, self.stack_exhausted_short);
        let mut other: Vec<(UnwindCause, u64)> = std::iter::once(ran_past)
            .chain(self.causes_past_modules())
            .filter(|(_, n)| *n > 0)
            .collect();
        other.sort_by_key(|c| std::cmp::Reverse(c.1));
        crate::model::TruncatedStacks {
            stacks: self.stacks,
            truncated: self.truncated,
            copy_exhausted: self.copy_exhausted,
            no_unwind_info,
            other,
        }
    }

    /// Percentage of user stacks that stopped early.
    pub fn truncated_share(&self) -> f64 {
        if self.stacks == 0 {
            0.0
        } else {
            self.truncated as f64 * 100.0 / self.stacks as f64
        }
    }

    /// The report header's notices: one note always (so the share is visible even when it
    /// is zero), warnings for what a user can fix.
    pub fn report(&self) -> (Vec<Notice>, Vec<Notice>) {
        let mut notes = Vec::new();
        let mut warnings = Vec::new();
        if self.stacks == 0 {
            return (notes, warnings);
        }
        let percent = |n: u64| n as f64 * 100.0 / self.stacks as f64;
        notes.push(Notice::DwarfTruncated {
            truncated: self.truncated,
            stacks: self.stacks,
            causes: self.causes(),
        });
        if self.copy_exhausted > 0 {
            let copy = Notice::StackCopyTooSmall {
                percent: percent(self.copy_exhausted),
                size: self.copy_size.unwrap_or(8192),
            };
            // a warning from 1 % of the stacks on, a note below
            if percent(self.copy_exhausted) >= 1.0 {
                warnings.push(copy);
            } else {
                notes.push(copy);
            }
        }
        for (module, n) in self.modules_by_weight() {
            warnings.push(Notice::UnwindStopped {
                module: module.clone(),
                percent: percent(n),
                problem: self.module_problems.get(module).cloned(),
            });
        }
        if self.missing_registers > 0 {
            let samples = self.missing_registers;
            warnings.push(Notice::MissingRegisters { samples });
        }
        if self.bad_sizes > 0 {
            let samples = self.bad_sizes;
            warnings.push(Notice::OversizedDynamicSize { samples });
        }
        if self.bad_records > 0 {
            let samples = self.bad_records;
            warnings.push(Notice::OversizedStackCopy { samples });
        }
        (notes, warnings)
    }

    /// Why stacks stopped early, each with its count, in the note's order: the copy, the
    /// modules without unwind information (heaviest first), then the rest.
    fn causes(&self) -> Vec<(UnwindCause, u64)> {
        let modules = self.modules_by_weight().into_iter();
        [
            (UnwindCause::CopyExhausted, self.copy_exhausted),
            (UnwindCause::RanPastCopy, self.stack_exhausted_short),
        ]
        .into_iter()
        .chain(modules.map(|(m, n)| (UnwindCause::NoUnwindInfo(m.clone()), n)))
        .chain(self.causes_past_modules())
        .filter(|(_, n)| *n > 0)
        .collect()
    }

    /// The causes the note lists after the modules, zero counts included.
    fn causes_past_modules(&self) -> impl Iterator<Item = (UnwindCause, u64)> + '_ {
        [
            (UnwindCause::Unmapped, self.unmapped),
            (UnwindCause::MissingRegisters, self.missing_registers),
            (UnwindCause::BadRecord, self.bad_records),
        ]
        .into_iter()
        .chain((self.failed.iter()).map(|(why, n)| (UnwindCause::Failed(why.clone()), *n)))
    }

    /// The modules without unwind information, heaviest first.
    fn modules_by_weight(&self) -> Vec<(&String, u64)> {
        let mut modules: Vec<(&String, u64)> =
            self.by_module.iter().map(|(m, n)| (m, *n)).collect();
        modules.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        modules
    }
}

/// `WHOSE_TIMINGS=1`: stage times on stderr, for the benchmark (bench/dwarf.sh).
pub fn print_timings(unwinder: Option<&DwarfUnwinder>, symbolize: std::time::Duration) {
    if let Some(u) = unwinder {
        eprintln!(
            "whose: timings: unwinding {:.3} s ({} stacks, {} frames)",
            u.stats.elapsed.as_secs_f64(),
            u.stats.stacks,
            u.stats.frames
        );
    }
    eprintln!(
        "whose: timings: symbolisation {:.3} s",
        symbolize.as_secs_f64()
    );
}

/// A module as loaded: its unwind image, or why there is none.
struct LoadedModule {
    image: Option<Arc<Image>>,
    problem: Option<ModuleProblem>,
}

/// The unwinding state of a whole recording: modules (shared across processes) and one
/// framehop unwinder per process.
pub struct DwarfUnwinder {
    locate: Locator,
    modules: FxHashMap<(String, Option<Vec<u8>>), Arc<LoadedModule>>,
    processes: FxHashMap<i32, Process>,
    pub stats: UnwindStats,
    /// Measure the time spent (`WHOSE_TIMINGS`); two clock reads per sample otherwise saved.
    timed: bool,
}

impl DwarfUnwinder {
    /// `copy_size` is the recording's `sample_stack_user`, for the suggestion.
    pub fn new(locate: Locator, copy_size: Option<u64>) -> DwarfUnwinder {
        DwarfUnwinder {
            locate,
            modules: FxHashMap::default(),
            processes: FxHashMap::default(),
            stats: UnwindStats {
                copy_size,
                ..UnwindStats::default()
            },
            timed: std::env::var_os("WHOSE_TIMINGS").is_some(),
        }
    }

    /// An executable mapping appeared in `pid`; it replaces what it overlaps.
    pub fn add_mapping(&mut self, pid: i32, mapping: Mapping) {
        self.processes.entry(pid).or_default().add(mapping);
    }

    /// `child` starts as a copy of `parent` (threads of one process share one entry).
    pub fn fork(&mut self, parent: i32, child: i32) {
        if parent == child {
            return;
        }
        let copy = self
            .processes
            .get(&parent)
            .map(Process::fork)
            .unwrap_or_default();
        self.processes.insert(child, copy);
    }

    /// `pid` called exec: its old mappings are gone.
    pub fn exec(&mut self, pid: i32) {
        self.processes.remove(&pid);
    }

    /// Counts a sample whose record declared a user stack larger than itself (the perf.data
    /// decoder drops such a stack and keeps the rest); its user part is the ip perf recorded.
    pub fn bad_record(&mut self) -> StackEnd {
        let end = StackEnd::BadRecord;
        self.stats.count(&end, false);
        end
    }

    /// Unwinds one sample's user stack into `out` (ip first, then return addresses) and
    /// counts how it ended. `regs` is `None` when the sample lacks ip/sp/bp.
    pub fn unwind(
        &mut self,
        pid: i32,
        regs: Option<UserRegs>,
        stack: StackCopy<'_>,
        out: &mut Vec<u64>,
    ) -> StackEnd {
        if !self.timed {
            return self.unwind_timed(pid, regs, stack, out);
        }
        let started = std::time::Instant::now();
        let end = self.unwind_timed(pid, regs, stack, out);
        self.stats.elapsed += started.elapsed();
        end
    }

    fn unwind_timed(
        &mut self,
        pid: i32,
        regs: Option<UserRegs>,
        stack: StackCopy<'_>,
        out: &mut Vec<u64>,
    ) -> StackEnd {
        out.clear();
        let Some(regs) = regs else {
            let end = StackEnd::MissingRegisters;
            self.stats.count(&end, false);
            return end;
        };
        if stack.dynamic_size > stack.size {
            self.stats.bad_sizes += 1;
        }
        let valid = stack.valid_len();
        // the kernel copies less than asked only when the thread's stack ends first
        let full_copy = stack.size > 0 && valid == stack.size;
        let bytes = &stack.bytes[..stack.bytes.len().min(valid as usize)];
        let process = self.processes.entry(pid).or_default();
        let modules = &mut self.modules;
        let locate = &self.locate;
        let problems = &mut self.stats.module_problems;
        process.prepare(|mapping| load_module(modules, locate, problems, mapping));
        let end = process.unwind(regs, bytes, MAX_FRAMES, out);
        self.stats.frames += out.len() as u64;
        self.stats.count(&end, full_copy);
        end
    }
}

/// A sample's copy of the top of its user stack (`PERF_SAMPLE_STACK_USER`).
#[derive(Debug, Clone, Copy)]
pub struct StackCopy<'a> {
    /// The bytes from the sampled stack pointer up: all that were copied, or only the valid
    /// ones (the perf.data reader hands on no more than those).
    pub bytes: &'a [u8],
    /// How many bytes the record copied (`size`: what `dwarf,SIZE` asked for, at most).
    pub size: u64,
    /// How many of them the kernel filled (`dyn_size`): the rest is past the stack's end.
    pub dynamic_size: u64,
}

impl<'a> StackCopy<'a> {
    /// A copy whose bytes are all there, as the record holds them.
    pub fn whole(bytes: &'a [u8], dynamic_size: u64) -> StackCopy<'a> {
        StackCopy {
            bytes,
            size: bytes.len() as u64,
            dynamic_size,
        }
    }

    /// How many bytes the unwinder may read: the filled ones, never more than were copied
    /// (a `dyn_size` of 0 means nothing was copied).
    pub fn valid_len(&self) -> u64 {
        valid_stack_len(self.size, self.dynamic_size)
    }
}

/// Of a stack copy of `size` bytes whose record says `dynamic_size` were filled, how many
/// are real stack: the rule the perf.data decoder copies by and the unwinder reads by.
pub fn valid_stack_len(size: u64, dynamic_size: u64) -> u64 {
    dynamic_size.min(size)
}

/// The module for a mapping, loaded once per (path, build id).
fn load_module(
    modules: &mut FxHashMap<(String, Option<Vec<u8>>), Arc<LoadedModule>>,
    locate: &Locator,
    problems: &mut BTreeMap<String, ModuleProblem>,
    mapping: &Mapping,
) -> Option<Arc<Image>> {
    let key = (mapping.path.clone(), mapping.build_id.clone());
    let loaded = modules.entry(key).or_insert_with(|| {
        let loaded = load(locate, mapping);
        if let Some(p) = &loaded.problem {
            problems.insert(mapping.path.clone(), p.clone());
        }
        Arc::new(loaded)
    });
    loaded.image.clone()
}

fn load(locate: &Locator, mapping: &Mapping) -> LoadedModule {
    let files = locate(&mapping.path, mapping.build_id.as_deref());
    // without the binary, a debug file's .debug_frame may still do
    let Some(code) = files.code.as_deref().or(files.debug.as_deref()) else {
        return LoadedModule {
            image: None,
            problem: Some(files.missing.unwrap_or(ModuleProblem::NotFound)),
        };
    };
    match Image::load(code, files.debug.as_deref()) {
        Ok(image) => {
            let problem = image.problem.clone();
            LoadedModule {
                image: image.can_unwind().then(|| Arc::new(image)),
                problem,
            }
        }
        Err(e) => LoadedModule {
            image: None,
            problem: Some(e),
        },
    }
}

#[cfg(test)]
mod tests;
