//! Auto-owners (issue 29 item 2): a frame no rule names but that belongs to an identifiable
//! third-party unit — a Rust crate, a Java/Kotlin package under its vendor's prefix, a Python
//! `site-packages` package, an npm package, a Go module, a shared library — is owned by an
//! owner named after that unit (category `library`, marked as guessed) instead of
//! `unclassified`, so that a profile's owner view says whose code it is without a rules file.
//! `unclassified` is left for frames that have no unit (the program's own code not guessed,
//! names without a namespace).
//!
//! Everything here is a pure function of one frame; which frames are asked (only those no
//! block of the rule set matches, so the user's rules, `--user` and the presets always win)
//! and how owners are made from the units is [`super::RuleSet`]'s.
//!
//! The rules, in the order they are tried:
//! - a file (or, for JavaScript frames that carry it in the name, the name) under
//!   `node_modules/`: the npm package after the last `node_modules/` (`express`,
//!   `@scope/name`);
//! - a file under `site-packages/` or `dist-packages/`: the first path segment after it, less
//!   a module file's extension (`simplejson`, `six` for `six.py`);
//! - a Go function of a module path (`github.com/foo/bar/pkg.Func`): the module, three
//!   segments on the code hosts that name repositories by owner and name (`github.com`,
//!   `gitlab.com`, `bitbucket.org`, `codeberg.org`, `golang.org/x`), two elsewhere
//!   (`go.uber.org/zap`), with a major-version suffix (`/v2`) kept;
//! - a Java/Kotlin method (`com.fasterxml.jackson.databind.ObjectMapper.readValue`) of a
//!   package under a namespace the presets list as a vendor's ([`super::vendors`]: `io.netty.`,
//!   `scala.`, `org.apache.`...): that namespace's product (`io.netty`, `scala`,
//!   `org.apache.kafka`); else under a reverse domain (`com.`, `org.`, `io.`, a country
//!   code...): the package's first two segments (`de.example`). Other packages
//!   (`bench.MainKt`, `demo.app.Main`) are as likely the program's own, and the JDK's
//!   (`java.`, `jdk.`, `sun.`, `com.sun.`) are the runtime's: no unit, so they stay for the
//!   presets and the program's own-code guess;
//! - a Rust path (`flate2::zio::Writer::write`), when the Rust preset is loaded: its crate.
//!   Without the preset the same shape is a C++ namespace, which says nothing about who
//!   shipped it;
//! - a native frame of a shared library (`libfoo.so.1`): the library, version less
//!   (`libfoo.so`). Never the kernel, perf maps, JIT dumps or a module whose name has no
//!   `.so` (the main executable).

use super::match_key;
use crate::model::{Frame, FrameKind};
use std::fmt;

/// The kind of third-party unit a frame belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum UnitKind {
    RustCrate,
    JavaPackage,
    PythonPackage,
    NpmPackage,
    GoModule,
    SharedLibrary,
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
        }
    }

    /// In a word, for `explain`'s narrow rule column: `crate`.
    pub fn short(self) -> &'static str {
        match self {
            UnitKind::RustCrate => "crate",
            UnitKind::JavaPackage | UnitKind::PythonPackage | UnitKind::NpmPackage => "package",
            UnitKind::GoModule => "module",
            UnitKind::SharedLibrary => "library",
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
        }
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

/// First segments of reverse-domain package names that are not a two-letter country code:
/// generic top-level domains seen in Java packages.
const DOMAIN_ROOTS: &[&str] = &[
    "com", "org", "net", "io", "dev", "edu", "gov", "app", "info", "biz", "tech", "cloud", "xyz",
    "software",
];

/// Package prefixes of the JDK itself: the runtime's (the jvm preset's), never a vendor's.
const JDK_PREFIXES: &[&str] = &[
    "java.",
    "javax.",
    "jdk.",
    "sun.",
    "com.sun.",
    "jakarta.servlet.",
];

/// Preset owners that lump every third-party package of an ecosystem together (the python
/// preset's `python-packages`, all of `site-packages`, and `python-extensions`, every C
/// extension module): their frames go to their package's
/// guessed owner, which says more; a frame without a unit stays the umbrella's. Only the
/// presets' blocks of these names: a user's rule of the same name is kept as written.
pub const UMBRELLA_OWNERS: &[&str] = &["python-packages", "python-extensions"];

/// What a frame's unit depends on beyond the frame itself.
#[derive(Debug, Clone, Copy, Default)]
pub struct Context {
    /// The Rust preset is loaded and the program's own crate was not declined for want of
    /// call chains: `a::b` names are then Rust paths whose first segment is a crate (see the
    /// module doc). Without call chains whose cannot tell the program's crate from its
    /// dependencies (`own_code::DeclineReason::NoCallChains`), so no crate is called a
    /// library: the program's own would be among them.
    pub rust: bool,
}

/// The third-party unit `frame` belongs to, if it has one. `key` is the frame's
/// [`match_key::match_key`].
pub fn unit(frame: &Frame, key: &str, context: Context) -> Option<Unit> {
    if matches!(
        frame.kind,
        FrameKind::Kernel | FrameKind::Unknown | FrameKind::AllocType
    ) {
        return None;
    }
    // every unit below needs a file, a module, or a `/`, `.` or `:` in the name: a C
    // function of folded text (`fn_123`) is none, found by one byte scan instead of the
    // searches (400 instructions a frame on a million distinct frames; issue 24)
    let punctuated = |text: &str| text.bytes().any(|b| matches!(b, b'/' | b'.' | b':'));
    if frame.file.is_none()
        && frame.module.is_none()
        && !punctuated(&frame.name)
        && !punctuated(key)
    {
        return None;
    }
    let file = frame.file.as_deref();
    let found = |kind, name: Option<String>| name.map(|name| Unit { kind, name });
    if let Some(u) = found(
        UnitKind::NpmPackage,
        file.and_then(npm_package)
            .or_else(|| npm_package(&frame.name)),
    ) {
        return Some(u);
    }
    // a C extension's module path names its package too (`.../site-packages/markupsafe/
    // _speedups.cpython-312-x86_64-linux-gnu.so`)
    let python = file
        .and_then(python_package)
        .or_else(|| frame.module.as_deref().and_then(python_package));
    if let Some(u) = found(UnitKind::PythonPackage, python) {
        return Some(u);
    }
    if let Some(u) = found(UnitKind::GoModule, go_module(&frame.name)) {
        return Some(u);
    }
    if let Some(u) = found(UnitKind::JavaPackage, java_vendor(&frame.name)) {
        return Some(u);
    }
    if context.rust
        && let Some(krate) = match_key::rust_crate(key)
    {
        return Some(Unit {
            kind: UnitKind::RustCrate,
            name: krate.to_string(),
        });
    }
    if matches!(frame.kind, FrameKind::Native | FrameKind::Inlined) {
        return found(
            UnitKind::SharedLibrary,
            frame.module_basename().and_then(shared_library),
        );
    }
    None
}

/// `/app/node_modules/@scope/name/lib/x.js` → `@scope/name`; the last `node_modules/` is the
/// package's own (pnpm and nested installs put packages inside others).
pub fn npm_package(path: &str) -> Option<String> {
    // most names asked have no `/` at all, found without building a substring searcher
    if memchr::memchr(b'/', path.as_bytes()).is_none() || !path.contains("node_modules/") {
        return None;
    }
    let (_, rest) = path.rsplit_once("node_modules/")?;
    let mut parts = rest.split('/');
    let first = parts.next().filter(|p| is_path_name(p))?;
    let name = if first.starts_with('@') {
        let second = parts.next().filter(|p| is_path_name(p))?;
        format!("{first}/{second}")
    } else {
        first.to_string()
    };
    // `node_modules/.bin`, `.pnpm` (without the package after it) are no package
    (!name.starts_with('.')).then_some(name)
}

/// `/usr/lib/python3/dist-packages/simplejson/encoder.py` → `simplejson`;
/// `site-packages/six.py` → `six`; an extension module `_cffi_backend.cpython-311-….so` →
/// `_cffi_backend`.
pub fn python_package(path: &str) -> Option<String> {
    let rest = ["site-packages/", "dist-packages/"]
        .iter()
        .filter_map(|marker| path.rsplit_once(marker).map(|(_, rest)| rest))
        .min_by_key(|rest| rest.len())?;
    let (first, below) = match rest.split_once('/') {
        Some((first, below)) => (first, Some(below)),
        None => (rest, None),
    };
    let name = if below.is_none() {
        // a module file directly in site-packages: the module's name
        first.split('.').next().unwrap_or(first)
    } else {
        first
    };
    // `foo-1.0.dist-info`, `foo.egg-info`, `__pycache__` hold no code of a package
    let plain = name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    (plain && !name.is_empty() && name != "__pycache__").then(|| name.to_string())
}

/// A path segment that can be a package's name: not empty, no spaces or colons (a `:line`).
fn is_path_name(s: &str) -> bool {
    !s.is_empty() && !s.contains([' ', ':', '(', ')'])
}

/// Code hosts whose module paths are `HOST/OWNER/REPO`.
const THREE_SEGMENT_HOSTS: &[&str] = &[
    "github.com",
    "gitlab.com",
    "bitbucket.org",
    "codeberg.org",
    "golang.org",
];

/// `github.com/foo/bar/pkg.(*T).Method` → `github.com/foo/bar`; `go.uber.org/zap.(*Logger).Info`
/// → `go.uber.org/zap`; `gopkg.in/yaml.v3.(*decoder).unmarshal` → `gopkg.in/yaml.v3`.
pub fn go_module(name: &str) -> Option<String> {
    let (host, _) = name.split_once('/')?;
    // a domain: dotted, lowercase, nothing a C++ or Java name would have
    let domain = host.contains('.')
        && !host.starts_with('.')
        && host
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '.' || c == '-');
    if !domain {
        return None;
    }
    let package = go_package(name)?;
    let segments: Vec<&str> = package.split('/').collect();
    let take = if THREE_SEGMENT_HOSTS.contains(&host) {
        3
    } else {
        2
    };
    if segments.len() < take || segments.iter().any(|s| s.is_empty()) {
        return None;
    }
    let mut module = segments[..take].join("/");
    if let Some(major) = segments.get(take)
        && major.len() > 1
        && major.starts_with('v')
        && major[1..].chars().all(|c| c.is_ascii_digit())
    {
        module.push('/');
        module.push_str(major);
    }
    Some(module)
}

/// The package path of a Go function name: up to the first `.` after the last `/`, or past a
/// gopkg.in-style version (`yaml.v3`) that is part of the path.
fn go_package(name: &str) -> Option<&str> {
    let slash = name[..name.find(['(', ' ']).unwrap_or(name.len())].rfind('/')?;
    let last = &name[slash + 1..];
    let dot = last.find('.')?;
    let after = &last[dot + 1..];
    let version = after
        .strip_prefix('v')
        .map(|v| v.len() - v.trim_start_matches(|c: char| c.is_ascii_digit()).len())
        .filter(|&digits| digits > 0 && after[1 + digits..].starts_with('.'));
    let end = match version {
        Some(digits) => slash + 1 + dot + 2 + digits,
        None => slash + 1 + dot,
    };
    Some(&name[..end])
}

/// `com.fasterxml.jackson.databind.ObjectMapper.readValue` → `com.fasterxml.jackson`;
/// `io.netty.channel.nio.NioEventLoop.run` → `io.netty`;
/// `kotlin.reflect.jvm.internal.KClassImpl.getMembers` → `kotlin.reflect`.
pub fn java_vendor(name: &str) -> Option<String> {
    // a JVM name has no spaces, `::`, `/` or parentheses before its method (a lambda's
    // `$$Lambda` and inner classes' `$` are part of the class)
    // a package, a class and a method: two dots at least (checked first, in the one pass
    // that finds the parameters, as most names asked are no Java method)
    let mut dots = 0;
    let head_len = name
        .bytes()
        .position(|b| {
            dots += usize::from(b == b'.');
            b == b'('
        })
        .unwrap_or(name.len());
    if dots < 2 {
        return None;
    }
    let head = &name[..head_len];
    if head.contains("::") || head.contains(['/', ' ']) {
        return None;
    }
    let segments: Vec<&str> = head.split('.').collect();
    // packages are lowercase identifiers up to the class, which starts with a capital
    let class = segments
        .iter()
        .position(|s| s.starts_with(|c: char| c.is_ascii_uppercase()))?;
    if class + 1 >= segments.len() {
        return None; // no method after the class: not a method name
    }
    let packages = &segments[..class];
    let is_package = |s: &&str| {
        !s.is_empty()
            && s.starts_with(|c: char| c.is_ascii_lowercase())
            && s.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
    };
    if packages.is_empty()
        || !packages.iter().all(is_package)
        || JDK_PREFIXES.iter().any(|p| head.starts_with(p))
    {
        return None;
    }
    // a listed vendor's product, even one package deep (`scala.Option.map`); others need
    // two segments to be under a domain
    if let Some(product) = super::vendors::jvm_product(head) {
        return Some(product);
    }
    if packages.len() < 2 {
        return None;
    }
    let root = packages[0];
    let domain = root.len() == 2 || DOMAIN_ROOTS.contains(&root);
    domain.then(|| packages[..2].join("."))
}

/// `libfoo.so.1.2` → `libfoo.so`; `_json.cpython-311-x86_64-linux-gnu.so` → itself; `None` for
/// what is no shared library (`[kernel.kallsyms]`, `perf-123.map`, `jitted-12-3.so`, an
/// executable).
pub fn shared_library(basename: &str) -> Option<String> {
    if basename.starts_with('[')
        || basename.starts_with("perf-")
        || basename.starts_with("jitted-")
        || basename.ends_with(".map")
    {
        return None;
    }
    let end = basename
        .find(".so.")
        .map(|i| i + 3)
        .or_else(|| basename.ends_with(".so").then_some(basename.len()))?;
    (end > 3).then(|| basename[..end].to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::cases::assert_named;

    fn frame(name: &str) -> Frame {
        Frame::named(name, FrameKind::Native)
    }

    fn unit_of(frame: &Frame, rust: bool) -> Option<(UnitKind, String)> {
        let key = match_key::match_key(&frame.name);
        unit(frame, &key, Context { rust }).map(|u| (u.kind, u.name))
    }

    fn of(kind: UnitKind, name: &str) -> Option<(UnitKind, String)> {
        Some((kind, name.to_string()))
    }

    #[test]
    fn rust_crates_with_the_rust_preset_only() {
        let f = frame("miniz_oxide::deflate::core::compress_inner");
        assert_eq!(unit_of(&f, true), of(UnitKind::RustCrate, "miniz_oxide"));
        // a trait impl is the self type's crate
        let f = frame("<flate2::ffi::miniz_oxide::Deflate as flate2::ffi::DeflateBackend>::make");
        assert_eq!(unit_of(&f, true), of(UnitKind::RustCrate, "flate2"));
        // the same shape in a C++ program is a namespace, no unit
        let f = frame("boost::asio::detail::scheduler::run");
        assert_eq!(unit_of(&f, false), None);
        assert_eq!(unit_of(&frame("main"), true), None);
    }

    #[test]
    fn java_packages_under_their_vendor() {
        assert_named(
            java_vendor,
            &[
                (
                    "com.fasterxml.jackson.databind.ObjectMapper.readValue",
                    Some("com.fasterxml.jackson"),
                ),
                ("io.netty.channel.nio.NioEventLoop.run", Some("io.netty")),
                (
                    "org.vertx.java.core.impl.DefaultVertx$1.run",
                    Some("org.vertx"),
                ),
                (
                    "kotlin.reflect.jvm.internal.KClassImpl.getMembers",
                    Some("kotlin.reflect"),
                ),
                ("scala.collection.immutable.List.map", Some("scala")),
                ("scala.Option.map", Some("scala")),
                (
                    "com.google.common.collect.Lists.newArrayList",
                    Some("com.google.common"),
                ),
                (
                    "org.apache.kafka.clients.producer.KafkaProducer.send",
                    Some("org.apache.kafka"),
                ),
                // a multi-product vendor's class right under its domain: no product, the
                // domain's two segments
                ("com.google.Foo.bar", Some("com.google")),
                // one package segment, or a root that is neither a domain nor a known
                // library's: as likely the program's own as a third party's
                ("bench.MainKt$main$1.invoke", None),
                ("demo.jfrmix.Work.run", None),
                ("de.example.shop.Cart.add", Some("de.example")),
                // the JDK is the runtime's
                ("java.util.HashMap.get", None),
                ("com.sun.net.httpserver.HttpServer.start", None),
                (
                    "kotlinx.coroutines.DispatchedTask.run",
                    Some("kotlinx.coroutines"),
                ),
                // no class, or no method after it; C names with GCC clone suffixes; Python
                // names
                ("foo.bar.baz", None),
                ("com.example.Main", None),
                ("memcpy.part.0", None),
                ("JSONEncoder.encode", None),
                ("std::vec::Vec<T>::push", None),
            ],
        );
    }

    #[test]
    fn python_packages_after_site_packages() {
        assert_named(
            python_package,
            &[
                (
                    "/venv/lib/python3.12/site-packages/simplejson/encoder.py",
                    Some("simplejson"),
                ),
                (
                    "/usr/lib/python3/dist-packages/requests/api.py",
                    Some("requests"),
                ),
                ("/v/site-packages/six.py", Some("six")),
                (
                    "/v/site-packages/_cffi_backend.cpython-311-x86_64-linux-gnu.so",
                    Some("_cffi_backend"),
                ),
                ("/usr/lib/python3.12/json/encoder.py", None),
                ("/v/site-packages/foo-1.0.dist-info/RECORD", None),
            ],
        );
        let mut f = frame("encode");
        f.kind = FrameKind::Interpreted;
        f.file = Some("/venv/lib/python3.12/site-packages/simplejson/encoder.py".into());
        assert_eq!(
            unit_of(&f, false),
            of(UnitKind::PythonPackage, "simplejson")
        );
    }

    #[test]
    fn npm_packages_after_the_last_node_modules() {
        assert_named(
            npm_package,
            &[
                (
                    "/app/node_modules/express/lib/router/index.js",
                    Some("express"),
                ),
                (
                    "file:///app/node_modules/@fastify/busboy/lib/main.js",
                    Some("@fastify/busboy"),
                ),
                (
                    "/app/node_modules/.pnpm/debug@4.3.4/node_modules/debug/src/node.js",
                    Some("debug"),
                ),
                ("/app/src/server.js", None),
                ("/app/node_modules/.bin/x", None),
            ],
        );
        // a JavaScript frame that carries its file in the name
        let f = frame("LazyCompile:*handle /app/node_modules/express/lib/router/layer.js:95");
        assert_eq!(unit_of(&f, false), of(UnitKind::NpmPackage, "express"));
    }

    #[test]
    fn go_modules_by_host() {
        assert_named(
            go_module,
            &[
                (
                    "github.com/foo/bar/pkg.(*T).Method",
                    Some("github.com/foo/bar"),
                ),
                ("github.com/foo/bar.Func", Some("github.com/foo/bar")),
                (
                    "github.com/jackc/pgx/v5/pgconn.(*PgConn).Exec",
                    Some("github.com/jackc/pgx/v5"),
                ),
                (
                    "golang.org/x/net/http2.(*Framer).ReadFrame",
                    Some("golang.org/x/net"),
                ),
                ("go.uber.org/zap.(*Logger).Info", Some("go.uber.org/zap")),
                (
                    "google.golang.org/grpc/internal/transport.(*http2Client).reader",
                    Some("google.golang.org/grpc"),
                ),
                (
                    "gopkg.in/yaml.v3.(*decoder).unmarshal",
                    Some("gopkg.in/yaml.v3"),
                ),
                // the standard library has no domain; a short path is no module
                ("net/http.(*conn).serve", None),
                ("runtime.mallocgc", None),
                ("github.com/foo.Bar", None),
            ],
        );
    }

    #[test]
    fn shared_libraries_by_module() {
        let mut f = frame("SHA256_Update");
        f.module = Some("/usr/lib/x86_64-linux-gnu/libcrypto.so.3".into());
        assert_eq!(
            unit_of(&f, false),
            of(UnitKind::SharedLibrary, "libcrypto.so")
        );
        assert_eq!(shared_library("libfoo.so").as_deref(), Some("libfoo.so"));
        assert_eq!(
            shared_library("libpython3.12.so.1.0").as_deref(),
            Some("libpython3.12.so")
        );
        for none in [
            "[kernel.kallsyms]",
            "[vdso]",
            "[unknown]",
            "perf-22048.map",
            "jitted-1234-5.so",
            "packsum",
            ".so",
        ] {
            assert_eq!(shared_library(none), None, "{none}");
        }
        // a JIT frame or a kernel frame is never its module's
        f.kind = FrameKind::Jit;
        assert_eq!(unit_of(&f, false), None);
        f.kind = FrameKind::Kernel;
        assert_eq!(unit_of(&f, false), None);
        f.kind = FrameKind::Unknown;
        assert_eq!(unit_of(&f, false), None);
    }

    #[test]
    fn a_crate_wins_over_the_library_it_is_in() {
        // a Rust frame in a cdylib: the crate says more than the file
        let mut f = frame("serde_json::de::from_str");
        f.module = Some("libplugin.so".into());
        assert_eq!(unit_of(&f, true), of(UnitKind::RustCrate, "serde_json"));
        assert_eq!(
            unit_of(&f, false),
            of(UnitKind::SharedLibrary, "libplugin.so")
        );
    }
}
