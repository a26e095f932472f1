//! The kinds of code unit whose names: a third-party unit that becomes a guessed owner (a Rust
//! crate, a gem, an npm package, a shared library), and the program's own code as a guess
//! names it (a Go module, Python files, an executable). One enum for both, so that no
//! decision compares a unit's words; the words themselves are here too, since the JSON names
//! them and `render` only places them.

use std::fmt;

/// The kind of a unit of code: a third-party unit (an auto-owner's) or the program's own code
/// (a guess's, [`crate::classify::own_code`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum UnitKind {
    RustCrate,
    JavaPackage,
    PythonPackage,
    NpmPackage,
    GoModule,
    SharedLibrary,
    /// A Ruby gem (`gems/rack-3.0.8/` → `rack`).
    RubyGem,
    /// An OTP application of the BEAM (a hex package: `phoenix`, `cowboy`), or the program's
    /// own modules under their common root (`Shop`, `inventory`).
    BeamApplication,
    /// The program's packages on the JVM (any JVM language; a vendor's namespace is a
    /// [`UnitKind::JavaPackage`]).
    JvmPackage,
    /// The C code cgo compiled into a Go program's binary.
    GoBinaryC,
    /// The program's script files: a language whose code has no package name of its own.
    PythonFiles,
    NodeScripts,
    RubyFiles,
    /// A native program's recorded executable.
    #[default]
    Executable,
}

impl UnitKind {
    /// In words, singular: `rust crate`.
    pub fn as_str(self) -> &'static str {
        match self {
            UnitKind::RustCrate => "rust crate",
            UnitKind::JavaPackage => "java package",
            UnitKind::PythonPackage => "python package",
            UnitKind::NpmPackage => "npm package",
            UnitKind::GoModule => "go module",
            UnitKind::SharedLibrary => "shared library",
            UnitKind::RubyGem => "ruby gem",
            UnitKind::BeamApplication => "beam application",
            UnitKind::JvmPackage => "jvm package",
            UnitKind::GoBinaryC => "c code of the go binary",
            UnitKind::PythonFiles => "python files",
            UnitKind::NodeScripts => "node scripts",
            UnitKind::RubyFiles => "ruby files",
            UnitKind::Executable => "executable",
        }
    }

    /// In words, plural: `rust crates`.
    pub fn plural(self) -> &'static str {
        match self {
            UnitKind::RustCrate => "rust crates",
            UnitKind::JavaPackage => "java packages",
            UnitKind::PythonPackage => "python packages",
            UnitKind::NpmPackage => "npm packages",
            UnitKind::GoModule => "go modules",
            UnitKind::SharedLibrary => "shared libraries",
            UnitKind::RubyGem => "ruby gems",
            UnitKind::BeamApplication => "beam applications",
            UnitKind::JvmPackage => "jvm packages",
            UnitKind::GoBinaryC => "c code of go binaries",
            UnitKind::PythonFiles => "python files",
            UnitKind::NodeScripts => "node scripts",
            UnitKind::RubyFiles => "ruby files",
            UnitKind::Executable => "executables",
        }
    }

    /// In a word, for `explain`'s narrow rule column: `crate`.
    pub fn short(self) -> &'static str {
        match self {
            UnitKind::RustCrate => "crate",
            UnitKind::JavaPackage
            | UnitKind::PythonPackage
            | UnitKind::NpmPackage
            | UnitKind::JvmPackage => "package",
            UnitKind::GoModule => "module",
            UnitKind::SharedLibrary => "library",
            UnitKind::RubyGem => "gem",
            UnitKind::BeamApplication => "application",
            UnitKind::GoBinaryC => "c code",
            UnitKind::PythonFiles | UnitKind::NodeScripts | UnitKind::RubyFiles => "files",
            UnitKind::Executable => "executable",
        }
    }

    /// The JSON name: `rust-crate`.
    pub fn id(self) -> &'static str {
        match self {
            UnitKind::RustCrate => "rust-crate",
            UnitKind::JavaPackage => "java-package",
            UnitKind::PythonPackage => "python-package",
            UnitKind::NpmPackage => "npm-package",
            UnitKind::GoModule => "go-module",
            UnitKind::SharedLibrary => "shared-library",
            UnitKind::RubyGem => "ruby-gem",
            UnitKind::BeamApplication => "beam-application",
            UnitKind::JvmPackage => "jvm-package",
            UnitKind::GoBinaryC => "go-binary-c",
            UnitKind::PythonFiles => "python-files",
            UnitKind::NodeScripts => "node-scripts",
            UnitKind::RubyFiles => "ruby-files",
            UnitKind::Executable => "executable",
        }
    }
}

impl fmt::Display for UnitKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One third-party unit: what kind, and its name, which is the guessed owner's name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Unit {
    pub kind: UnitKind,
    pub name: String,
}

impl fmt::Display for Unit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.kind.as_str(), self.name)
    }
}

/// What a frame's unit depends on beyond the frame itself.
#[derive(Debug, Clone, Copy, Default)]
pub struct UnitContext {
    /// The Rust preset is loaded and the program's own crate was not declined for want of
    /// call chains: `a::b` names are then Rust paths whose first segment is a crate. Without
    /// call chains whose cannot tell the program's crate from its dependencies
    /// (`own_code::DeclineReason::NoCallChains`), so no crate is called a library: the
    /// program's own would be among them.
    pub rust: bool,
}
