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
//! Each ecosystem says how its units are found ([`super::ecosystem`]); they are asked in the
//! table's order, the first that names a unit winning:
//! - a file (or, for JavaScript frames that carry it in the name, the name) under
//!   `node_modules/`: the npm package after the last `node_modules/` (`express`,
//!   `@scope/name`);
//! - a Java/Kotlin method (`com.fasterxml.jackson.databind.ObjectMapper.readValue`) of a
//!   package under a namespace the presets list as a vendor's ([`super::ecosystem::vendors`]: `io.netty.`,
//!   `scala.`, `org.apache.`...): that namespace's product (`io.netty`, `scala`,
//!   `org.apache.kafka`); else under a reverse domain (`com.`, `org.`, `io.`, a country
//!   code...): the package's first two segments (`de.example`). Other packages
//!   (`bench.MainKt`, `demo.app.Main`) are as likely the program's own, and the JDK's
//!   (`java.`, `jdk.`, `sun.`, `com.sun.`) are the runtime's: no unit, so they stay for the
//!   presets and the program's own-code guess;
//! - a Go function of a module path (`github.com/foo/bar/pkg.Func`): the module, three
//!   segments on the code hosts that name repositories by owner and name (`github.com`,
//!   `gitlab.com`, `bitbucket.org`, `codeberg.org`, `golang.org/x`), two elsewhere
//!   (`go.uber.org/zap`), with a major-version suffix (`/v2`) kept;
//! - a Rust path (`flate2::zio::Writer::write`), when the Rust preset is loaded: its crate.
//!   Without the preset the same shape is a C++ namespace, which says nothing about who
//!   shipped it;
//! - a file under `site-packages/` or `dist-packages/`: the first path segment after it, less
//!   a module file's extension (`simplejson`, `six` for `six.py`);
//! - a file under a Ruby gem's directory (`gems/rack-3.0.8/lib/...`, Debian's
//!   `rubygems-integration/all/gems/...`): the gem, version less (`rack`);
//! - a BEAM function of a known hex package's module: its application;
//! - a native frame of a shared library (`libfoo.so.1`): the library, version less
//!   (`libfoo.so`). Never the kernel, perf maps, JIT dumps or a module whose name has no
//!   `.so` (the main executable).

use super::ecosystem::ECOSYSTEMS;
#[cfg(doc)]
use super::match_key;
pub use super::unit::{Unit, UnitContext as Context};
use crate::model::{Frame, FrameKind};

/// Preset owners that lump every third-party package of an ecosystem together (the python
/// preset's `python-packages` and `python-extensions`), from each ecosystem's row: their
/// frames go to their package's guessed owner, which says more; a frame without a unit stays
/// the umbrella's. Only the presets' blocks of these names: a user's rule of the same name is
/// kept as written.
pub fn is_umbrella_owner(name: &str) -> bool {
    ECOSYSTEMS.iter().any(|e| e.umbrella_owners.contains(&name))
}

/// The third-party unit `frame` belongs to, if it has one: the first ecosystem's, in the
/// table's order, that names one. `key` is the frame's [`match_key::match_key`].
pub fn unit(frame: &Frame, key: &str, context: Context) -> Option<Unit> {
    if matches!(
        frame.kind,
        FrameKind::Kernel | FrameKind::Unknown | FrameKind::AllocType
    ) {
        return None;
    }
    // every unit needs a file, a module, or a `/`, `.` or `:` in the name: a C function of
    // folded text (`fn_123`) is none, found by one byte scan instead of the searches (400
    // instructions a frame on a million distinct frames; issue 24)
    let punctuated = |text: &str| text.bytes().any(|b| matches!(b, b'/' | b'.' | b':'));
    if frame.file.is_none()
        && frame.module.is_none()
        && !punctuated(&frame.name)
        && !punctuated(key)
    {
        return None;
    }
    (ECOSYSTEMS.iter())
        .filter_map(|e| e.unit_of)
        .find_map(|unit_of| unit_of(frame, key, context))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classify::ecosystem::detectors::*;
    use crate::classify::match_key;
    use crate::classify::unit::UnitKind;
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
