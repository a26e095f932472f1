//! What a guess of the program's own code is: the code found with how it was found
//! ([`Evidence`]) and how much that says, where its block goes, or why it was declined.
//! Every ecosystem's guess makes these, the dispatcher collects them, `render` words them,
//! and the `user` block a guess becomes carries one in its rules' origin: so they stand
//! below all of those, and name nothing of theirs.

use super::unit::UnitKind;
use rustc_hash::FxHashSet;

/// The program's own code as guessed from a profile.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OwnCode {
    /// What kind of unit was found: a Go module, a Rust crate.
    pub unit: UnitKind,
    /// Its name: `whose/gosvc`, `logcrunch`; empty for Python files named relative to
    /// sys.path, which have no directory to be named by.
    pub name: String,
    /// The match-key prefixes the `user` block claims.
    pub prefixes: Vec<String>,
    /// The source-file globs it claims (a script language's program files: node's, Python's).
    pub files: Vec<String>,
    /// The module globs it claims (a native program's executable: `churn`).
    pub modules: Vec<String>,
    /// A module whose C functions it claims (a Go binary's cgo code), not its Go ones.
    pub c_in_module: Option<String>,
    /// Where its block goes among the rules.
    pub placement: Placement,
    /// How it was found (`render` words it: `the main package's file whose/gosvc/main.go`).
    pub evidence: Evidence,
}

/// Where a guess's `user` block goes: a guess by name or file excludes what the presets claim
/// when it is made, so it goes before them and wins over a preset's broader rule; a guess by
/// module (a native executable) cannot exclude the presets' frames of that module (C++'s
/// `std::` inlined into it, a static libc), so it goes after them and takes only what they
/// leave.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Placement {
    #[default]
    BeforePresets,
    AfterPresets,
}

/// A guess not made although the profile shows the unit's code, and why (issue 29): the
/// header says so instead of naming a wrong unit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Declined {
    /// The kind of unit not guessed: a Rust crate.
    pub unit: UnitKind,
    pub reason: DeclineReason,
}

/// Why a guess was not made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeclineReason {
    /// Stacks of one frame each (recorded without `-g`): the outermost frame is the sampled
    /// one, so the crate that would have been guessed, `heaviest` (outermost on `weight` of
    /// `total`), is where the CPU was, as often a dependency as the program.
    NoCallChains {
        heaviest: String,
        weight: u128,
        total: u128,
    },
    /// The heaviest candidate, `heaviest` (outermost on `weight` of `total`, `method` one of
    /// its frames), is called by nothing the presets know: stacks cut short, or code a
    /// framework the presets do not know runs. Too weak a sign to call it the program's
    /// (issue 53): a vendor's code there would be taken for the user's.
    WeakEvidence {
        heaviest: String,
        method: String,
        weight: u128,
        total: u128,
    },
    /// No frame of the language at all, only its runtime's native code (`runtime`, the
    /// module, in stacks of `weight` of `total`): perf without rbspy or a JIT map sees a Ruby
    /// or BEAM program as its interpreter's C code, where no share of the program's own can
    /// be read. The gate refuses a verdict on user code then.
    NoLanguageFrames {
        runtime: String,
        weight: u128,
        total: u128,
    },
}

/// The guesses of an ecosystem that finds its own code or nothing (never declines).
pub fn found(code: Option<OwnCode>) -> Vec<Guess> {
    code.map(Guess::Found).into_iter().collect()
}

impl Declined {
    /// The runtime whose native code alone the recording shows, when that is why no guess
    /// was made ([`DeclineReason::NoLanguageFrames`]).
    pub fn runtime_only(&self) -> Option<&str> {
        match &self.reason {
            DeclineReason::NoLanguageFrames { runtime, .. } => Some(runtime),
            _ => None,
        }
    }
}

/// The weight of `profiles`' stacks that hold a frame of module `runtime` (by file name), and
/// their total weight: what a [`DeclineReason::NoLanguageFrames`] says.
pub fn runtime_weight(
    profiles: &[crate::model::Profile],
    is_runtime: &dyn Fn(&crate::model::Frame) -> bool,
) -> Option<(String, u128, u128)> {
    let mut module: Option<String> = None;
    let (mut weight, mut total) = (0u128, 0u128);
    for p in profiles {
        let runtime: Vec<bool> = p.frames().map(is_runtime).collect();
        for row in p.rows() {
            let w = row.values[p.default_sample_type];
            total += w;
            if let Some(f) = p.stack(row.stack).iter().find(|f| runtime[f.0 as usize]) {
                weight += w;
                if module.is_none() {
                    module = p.frame(*f).module_basename().map(str::to_string);
                }
            }
        }
    }
    Some((module?, weight, total)).filter(|(_, w, _)| *w > 0)
}

/// What one ecosystem's guess found (the JVM's and Rust's, which can decline).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Guess {
    /// The program's own code, with its evidence.
    Found(OwnCode),
    /// Its units were seen, but nothing sound names the program's: why.
    Declined(Declined),
    /// No candidate at all.
    Nothing,
}

/// How a guess of the program's own code was found, in data.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Evidence {
    /// Go: the main package's `file`, whose directory names the module.
    GoMainFile { file: String },
    /// Go: `function` of a non-main package in `file`, under the main package's directory.
    GoPackageFile { function: String, file: String },
    /// Go: `function` of a package whose path has no domain, which only the main module's
    /// can have (`inventory/internal/report.Render`).
    GoLocalPackage { function: String },
    /// Go: `function` of an `internal` package the main package calls, which only its own
    /// module may import.
    GoInternalPackage { function: String },
    /// Go: C code in the program's binary `module`, claimed by no preset (`function` one of
    /// its functions): the program's own C, compiled in by cgo.
    GoBinaryC { function: String, module: String },
    /// Rust: the crate's `main` function, in the main binary `module` when known.
    RustMain {
        function: String,
        module: Option<String>,
    },
    /// Rust: the crate of the outermost crate frames on `weight` of `total`.
    RustOutermost {
        weight: u128,
        total: u128,
        module: Option<String>,
    },
    /// Python: `count` files outside the standard library and site-packages, under `dir`
    /// (empty: named relative to sys.path), some of them `names`; `not_packages` are
    /// shortened paths of packages seen installed elsewhere in the profile.
    PythonFiles {
        count: usize,
        dir: String,
        names: Vec<String>,
        not_packages: Vec<String>,
    },
    /// Node: `count` script files outside node_modules/ and node's own code, under `dir`.
    NodeScripts {
        count: usize,
        dir: String,
        names: Vec<String>,
    },
    /// A native program: its recorded file `module`, the module of `main` (`by_main`) or the
    /// outermost program file on the most weight.
    Executable { module: String, by_main: bool },
    /// JVM: the heaviest sampled `main` method of a candidate class.
    JvmEntryPoint { method: String },
    /// JVM: the heaviest frame of a Kotlin `main` file's class.
    JvmKotlinMain { method: String },
    /// JVM: a task the JDK's threads run, outermost on `weight` of `total`.
    JvmThreadTask {
        method: String,
        weight: u128,
        total: u128,
    },
    /// JVM: the main class the recording names (`jdk.JVMInformation`'s Java arguments, the
    /// command perf recorded), `class`.
    JvmMainClass { class: String },
    /// JVM: the outermost frames not of the JDK or a listed vendor, called from code the
    /// presets know (a framework, the JDK, the VM), on `weight` of `total` (`method` one of
    /// them, `caller` the frame that called it).
    JvmOutermost {
        method: String,
        caller: String,
        weight: u128,
        total: u128,
    },
    /// Ruby: `count` files outside the interpreter's library and every gem, under `dir`, some
    /// of them `names`.
    RubyFiles {
        count: usize,
        dir: String,
        names: Vec<String>,
    },
    /// BEAM: the module the recorded command starts (`erl -s inventory`, `elixir -e
    /// 'Shop.main()'`), `module`.
    BeamCommand { module: String },
    /// BEAM: the outermost modules no rule claims, called from OTP, on `weight` of `total`
    /// (`function` one of them).
    BeamOutermost {
        function: String,
        weight: u128,
        total: u128,
    },
    /// Not found from a profile (a value made by hand).
    #[default]
    None,
}

/// How much a guess's evidence says (issue 53). A guess is made on strong or medium
/// evidence only; weaker signs are declined ([`DeclineReason::WeakEvidence`]) and the weight
/// stays unclassified, where the gate's `--max-unclassified` guard names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Strength {
    /// A sign only the program's own code gives: the entry point, the main package or file,
    /// the main class the recording names, files outside every package directory.
    Strong,
    /// A sign confirmed by a second: code outside every vendor list, called from code the
    /// presets know (a framework's handler, a task of the JDK's threads).
    Medium,
}

impl Strength {
    pub fn as_str(self) -> &'static str {
        match self {
            Strength::Strong => "strong",
            Strength::Medium => "medium",
        }
    }
}

impl Evidence {
    /// How much this evidence says: the one place each sign is ranked.
    pub fn strength(&self) -> Strength {
        match self {
            Evidence::RustOutermost { .. }
            | Evidence::JvmThreadTask { .. }
            | Evidence::JvmOutermost { .. }
            | Evidence::BeamOutermost { .. } => Strength::Medium,
            Evidence::GoMainFile { .. }
            | Evidence::GoPackageFile { .. }
            | Evidence::GoLocalPackage { .. }
            | Evidence::GoInternalPackage { .. }
            | Evidence::GoBinaryC { .. }
            | Evidence::RustMain { .. }
            | Evidence::PythonFiles { .. }
            | Evidence::NodeScripts { .. }
            | Evidence::RubyFiles { .. }
            | Evidence::BeamCommand { .. }
            | Evidence::Executable { .. }
            | Evidence::JvmEntryPoint { .. }
            | Evidence::JvmKotlinMain { .. }
            | Evidence::JvmMainClass { .. }
            | Evidence::None => Strength::Strong,
        }
    }
}

/// The units that other units call but that never call them back, over stacks given as their
/// units from the outermost in: a program's dependencies, never the program itself, even where
/// one is outermost on some stacks. The JVM's and Rust's outermost-unit guesses share it.
pub fn dependencies<'u, S>(stacks: impl IntoIterator<Item = S>) -> FxHashSet<&'u str>
where
    S: AsRef<[&'u str]>,
{
    let mut calls: FxHashSet<(&str, &str)> = FxHashSet::default();
    for stack in stacks {
        let units = stack.as_ref();
        for (i, caller) in units.iter().enumerate() {
            for callee in &units[i + 1..] {
                if callee != caller {
                    calls.insert((caller, callee));
                }
            }
        }
    }
    calls
        .iter()
        .filter(|(caller, callee)| !calls.contains(&(*callee, *caller)))
        .map(|(_, callee)| *callee)
        .collect()
}
