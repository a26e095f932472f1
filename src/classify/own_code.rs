//! The main program's own code is user code: the one place that turns what the profile says
//! about the program (Go's module, [`super::go_module`]; the main binary's Rust crate,
//! [`super::rust_crate`]) into a `user` owner block, and names the guess for the report header
//! and `explain`, so a user can see it and override it (issue 3 item 4, issue 14).
//!
//! The block is placed after the user's `--user` and `--rules` and before every preset: a user
//! rule that claims the same frames wins, and a preset's own owners (std, known crates) are
//! never taken for the program's code because a guess excludes what the presets claim.

use super::glob::Glob;
use super::rules::{Matchers, Origin, OwnerBlock};
use super::{go_module, jvm_package, native_module, node_script, python_script, rust_crate};
use crate::model::{Category, Frame, Profile};

/// The program's own code as guessed from a profile.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OwnCode {
    /// What kind of unit was found: `go module`, `rust crate`.
    pub unit: &'static str,
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
            | Evidence::JvmOutermost { .. } => Strength::Medium,
            Evidence::GoMainFile { .. }
            | Evidence::GoPackageFile { .. }
            | Evidence::GoLocalPackage { .. }
            | Evidence::GoInternalPackage { .. }
            | Evidence::GoBinaryC { .. }
            | Evidence::RustMain { .. }
            | Evidence::PythonFiles { .. }
            | Evidence::NodeScripts { .. }
            | Evidence::Executable { .. }
            | Evidence::JvmEntryPoint { .. }
            | Evidence::JvmKotlinMain { .. }
            | Evidence::JvmMainClass { .. }
            | Evidence::None => Strength::Strong,
        }
    }
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

impl OwnCode {
    /// The top-priority-after-the-user's `user` block claiming [`OwnCode::prefixes`].
    pub fn user_block(&self) -> OwnerBlock {
        OwnerBlock {
            name: "user".into(),
            category: Category::User,
            transparent: Some(false),
            any: Matchers {
                prefix: self.prefixes.clone(),
                file: self.files.iter().map(|f| Glob::new(f)).collect(),
                module: self.modules.iter().map(|m| Glob::new(m)).collect(),
                ..Matchers::default()
            },
            all: (self.c_in_module.iter())
                .map(|module| Matchers {
                    module: vec![Glob::new(module)],
                    regex: vec![go_module::C_NAME.clone()],
                    ..Matchers::default()
                })
                .collect(),
            origin: Origin {
                file: format!("{} {}", self.unit, self.name).trim_end().into(),
                line: 0,
                guess: Some(Box::new(self.clone())),
            },
        }
    }
}

/// A guess not made although the profile shows the unit's code, and why (issue 29): the
/// header says so instead of naming a wrong unit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Declined {
    /// The kind of unit not guessed: `rust crate`.
    pub unit: &'static str,
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

/// What [`detect`] found: the guesses made, and those declined with their reason.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Guesses {
    pub found: Vec<OwnCode>,
    pub declined: Vec<Declined>,
}

impl Guesses {
    /// Keeps one ecosystem's guess: made, declined, or nothing.
    fn add(&mut self, guess: Guess) {
        match guess {
            Guess::Found(code) => self.found.push(code),
            Guess::Declined(declined) => self.declined.push(declined),
            Guess::Nothing => {}
        }
    }
}

/// The program's own code in `profiles`, for the loaded presets that know how to find it:
/// Go's module with the go preset, the main binary's crate with the rust preset, the
/// program's scripts with the node and python presets, its packages with the jvm or kotlin
/// preset, and, with the native preset and none of a language, the recorded executable.
/// `claimed_by_presets` says whether a preset block claims a frame (std, a known dependency).
pub fn detect(
    loaded_presets: &[String],
    profiles: &[Profile],
    claimed_by_presets: &dyn Fn(&Frame) -> bool,
) -> Guesses {
    let loaded = |name: &str| loaded_presets.iter().any(|p| p == name);
    let mut guesses = Guesses::default();
    if loaded("go") {
        if let Some(module) = go_module::own_code(profiles, claimed_by_presets) {
            guesses.found.push(module);
        }
        if let Some(c) = go_module::own_c_code(profiles, claimed_by_presets) {
            guesses.found.push(c);
        }
    }
    if loaded("node")
        && let Some(scripts) = node_script::own_code(profiles, claimed_by_presets)
    {
        guesses.found.push(scripts);
    }
    if loaded("python")
        && let Some(scripts) = python_script::own_code(profiles, claimed_by_presets)
    {
        guesses.found.push(scripts);
    }
    if loaded("rust") {
        guesses.add(rust_crate::own_code(profiles, claimed_by_presets));
    }
    if loaded("jvm") || loaded("kotlin") {
        guesses.add(jvm_package::own_code(profiles, claimed_by_presets));
    }
    // an executable's own code, where no language's guess names the program
    let language = native_module::LANGUAGE_PRESETS.iter().any(|p| loaded(p));
    if loaded("native")
        && !language
        && guesses.found.is_empty()
        && let Some(executable) = native_module::own_code(profiles, claimed_by_presets)
    {
        guesses.found.push(executable);
    }
    guesses
}

/// Every frame of `profiles` whose file `keep` accepts, with that file: where the script
/// guesses look for the program's own files.
pub fn frames_with_file<'a>(
    profiles: &'a [Profile],
    keep: impl Fn(&str) -> bool + 'a,
) -> impl Iterator<Item = (&'a Frame, &'a str)> + 'a {
    profiles
        .iter()
        .flat_map(Profile::frames)
        .filter_map(move |frame| {
            let file = frame.file.as_deref()?;
            keep(file).then_some((frame, file))
        })
}

/// The program's script files as `file` globs (issue 29): the common directory of `own`
/// (absolute paths, or the relative names py-spy shortens them to), one glob per entry below
/// it (`/app/src/*` for a directory, `/app/main.js` for a file), so that a file added to the
/// program's tree later is its code too. A glob that would also match one of `others` (the
/// profile's third-party or runtime files: `/app/node_modules/...`) is replaced by the exact
/// files of `own` under it. Returns the directory (empty when the files have none in common),
/// the globs, sorted, and the files' names; `None` without files of the program's own.
pub fn own_files<'a>(
    own: &std::collections::BTreeSet<&'a str>,
    others: std::collections::BTreeSet<&'a str>,
) -> Option<(String, Vec<String>, Vec<&'a str>)> {
    if own.is_empty() {
        return None;
    }
    let others: Vec<&str> = others.into_iter().collect();
    let (dir, files) = file_globs(own, &others);
    Some((dir, files, own.iter().copied().collect()))
}

/// The directory and the globs of [`own_files`].
pub fn file_globs<'a>(
    own: &std::collections::BTreeSet<&'a str>,
    others: &[&'a str],
) -> (String, Vec<String>) {
    let dirs: Vec<&str> = own
        .iter()
        .map(|f| f.rsplit_once('/').map_or("", |(d, _)| d))
        .collect();
    let mut common: Vec<&str> = dirs
        .first()
        .map_or_else(Vec::new, |d| d.split('/').collect());
    for d in &dirs[1.min(dirs.len())..] {
        let parts: Vec<&str> = d.split('/').collect();
        let same = common
            .iter()
            .zip(&parts)
            .take_while(|(a, b)| a == b)
            .count();
        common.truncate(same);
    }
    let dir = common.join("/");
    let mut globs = std::collections::BTreeSet::new();
    for f in own {
        let below = if dir.is_empty() && !f.starts_with('/') {
            *f
        } else {
            &f[(dir.len() + 1).min(f.len())..]
        };
        let glob = match below.split_once('/') {
            None => f.to_string(),
            Some((first, _)) if dir.is_empty() && !f.starts_with('/') => format!("{first}/*"),
            Some((first, _)) => format!("{dir}/{first}/*"),
        };
        let g = Glob::new(&glob);
        if glob.ends_with('*') && others.iter().any(|o| g.matches(o)) {
            globs.insert(f.to_string());
        } else {
            globs.insert(glob);
        }
    }
    let dir = if dir.is_empty() && own.iter().any(|f| f.starts_with('/')) {
        "/".to_string()
    } else {
        dir
    };
    (dir, globs.into_iter().collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[test]
    fn globs_cover_the_program_tree_but_not_its_dependencies() {
        let own: BTreeSet<&str> = ["/app/app.js", "/app/src/a.js", "/app/src/lib/b.js"].into();
        let (dir, globs) = file_globs(&own, &["/app/node_modules/p/index.js"]);
        assert_eq!(dir, "/app");
        assert_eq!(globs, ["/app/app.js", "/app/src/*"]);
        // a dependency inside a claimed directory: that directory's files one by one
        let (_, globs) = file_globs(&own, &["/app/src/node_modules/p/index.js"]);
        assert_eq!(globs, ["/app/app.js", "/app/src/a.js", "/app/src/lib/b.js"]);
        // py-spy's relative names
        let own: BTreeSet<&str> = ["app.py", "main.py", "pkg/x.py"].into();
        let (dir, globs) = file_globs(&own, &[]);
        assert_eq!(dir, "");
        assert_eq!(globs, ["app.py", "main.py", "pkg/*"]);
        let own: BTreeSet<&str> = ["/srv/a.py", "/home/u/b.py"].into();
        assert_eq!(
            file_globs(&own, &[]),
            ("/".into(), vec!["/home/*".into(), "/srv/*".into()])
        );
    }
}
