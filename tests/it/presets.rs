//! Table-driven checks of the presets: for each, frames as readers produce them and the owner
//! the preset must give them. A wrong claim here (a Rust rule eating C++ frames, a JDK rule
//! eating the JDK's HTTP server) is a wrong report for every user of that ecosystem.

use whose::{Frame, FrameKind};
use whose::{RuleOptions, RuleSet};

fn frame(name: &str, module: Option<&str>, file: Option<&str>, kind: FrameKind) -> Frame {
    Frame {
        name: name.into(),
        module: module.map(Into::into),
        file: file.map(Into::into),
        line: None,
        kind,
    }
}

fn check(preset: &str, cases: &[(Frame, &str)]) {
    let rules = RuleSet::build(
        &RuleOptions {
            presets: vec![preset.to_string()],
            ..Default::default()
        },
        &[],
    )
    .unwrap();
    let mut wrong = Vec::new();
    for (f, want) in cases {
        let (owner, _) = rules.classify_frame(f);
        let got = &rules.owner(owner).name;
        if got != want {
            wrong.push(format!("{f}: got {got}, want {want}"));
        }
    }
    assert!(wrong.is_empty(), "preset {preset}:\n{}", wrong.join("\n"));
}

fn n(name: &str) -> Frame {
    frame(name, None, None, FrameKind::Native)
}

fn m(name: &str, module: &str) -> Frame {
    frame(name, Some(module), None, FrameKind::Native)
}

#[test]
fn kotlin_and_jvm() {
    check(
        "kotlin",
        &[
            (
                n("kotlin.reflect.jvm.internal.KClassImpl.toString"),
                "kotlin-reflect",
            ),
            (n("kotlin.collections.CollectionsKt.map"), "kotlin-stdlib"),
            (
                n("kotlinx.coroutines.DispatchedTask.run"),
                "kotlinx-coroutines",
            ),
            (
                n("io.ktor.server.engine.BaseApplicationEngine.execute"),
                "ktor",
            ),
            (n("java.util.HashMap.get"), "jdk"),
            (n("jdk.internal.misc.Unsafe.allocateInstance"), "jdk"),
            (
                n("sun.net.httpserver.ServerImpl$Exchange.run"),
                "jdk-httpserver",
            ),
            (
                n("com.sun.net.httpserver.Filter$Chain.doFilter"),
                "jdk-httpserver",
            ),
            (
                n("com.fasterxml.jackson.databind.ObjectMapper.readValue"),
                "jackson",
            ),
            (m("Interpreter", "perf-22048.map"), "jvm"),
            (m("StubRoutines (1)", "perf-22048.map"), "jvm"),
            (
                m("G1ParScanThreadState::trim_queue_partially", "libjvm.so"),
                "jvm-gc",
            ),
            (
                m("CompileBroker::compiler_thread_loop", "libjvm.so"),
                "jit-compiler",
            ),
            (m("__GI___libc_malloc", "libc.so.6"), "glibc-malloc"),
            (
                frame(
                    "do_syscall_64",
                    Some("[kernel.kallsyms]"),
                    None,
                    FrameKind::Kernel,
                ),
                "kernel",
            ),
        ],
    );
}

#[test]
fn jit_compiled_user_code_is_not_the_jvm() {
    // a JIT frame lives in the perf map too, but it is the method's owner's code
    check(
        "jvm",
        &[(
            frame(
                "shop.Render.render",
                Some("perf-22048.map"),
                None,
                FrameKind::Jit,
            ),
            "unclassified",
        )],
    );
}

#[test]
fn go() {
    check(
        "go",
        &[
            (n("main.handleOrders"), "user"),
            (n("net/http.(*conn).serve"), "net-http"),
            (n("net/http/pprof.Index"), "go-profiler"),
            (n("runtime/pprof.(*profileBuilder).build"), "go-profiler"),
            (n("runtime.mallocgc"), "go-alloc"),
            (n("runtime.gcBgMarkWorker"), "go-gc"),
            (n("runtime.scanobject"), "go-gc"),
            (n("runtime.schedule"), "go-runtime"),
            (n("aeshashbody"), "go-runtime"),
            (n("encoding/json.(*decodeState).object"), "go-std"),
            (n("net.(*conn).Read"), "go-std"),
            (n("google.golang.org/grpc.(*Server).Serve"), "grpc"),
        ],
    );
}

#[test]
fn rust() {
    check(
        "rust",
        &[
            (
                n(
                    "<&mut serde_json::de::Deserializer<R> as serde::de::Deserializer>::deserialize_map",
                ),
                "serde",
            ),
            (n("serde_json::de::from_str"), "serde"),
            (n("regex_automata::hybrid::search::find_fwd"), "regex"),
            (n("core::fmt::write"), "rust-std"),
            (n("<usize as core::fmt::Display>::fmt"), "rust-std"),
            (n("alloc::raw_vec::RawVec<T,A>::grow_one"), "rust-std"),
            (n("alloc::alloc::exchange_malloc"), "rust-alloc"),
            (n("__rust_alloc"), "rust-alloc"),
            (
                n("hashbrown::raw::RawTable<T,A>::reserve_rehash"),
                "rust-std",
            ),
            (n("tokio::runtime::task::raw::poll"), "tokio"),
            (
                n("hyper::proto::h1::dispatch::Dispatcher<D,Bs,I,T>::poll_loop"),
                "hyper",
            ),
            (m("_int_malloc", "libc.so.6"), "glibc-malloc"),
        ],
    );
}

#[test]
fn native_and_allocators() {
    check(
        "native",
        &[
            (m("_int_malloc", "libc.so.6"), "glibc-malloc"),
            (m("malloc", "libc.so.6"), "glibc-malloc"),
            (m("__memmove_avx_unaligned_erms", "libc.so.6"), "glibc"),
            (m("__vfprintf_internal", "libc.so.6"), "glibc"),
            (m("_dl_relocate_object", "ld-linux-x86-64.so.2"), "ld.so"),
            (m("je_malloc_default", "libjemalloc.so.2"), "jemalloc"),
            (m("mi_malloc", "libmimalloc.so.2"), "mimalloc"),
            (
                m(
                    "std::vector<int, std::allocator<int> >::push_back",
                    "libstdc++.so.6",
                ),
                "libstdc++",
            ),
            (m("idx::Index::add", "app"), "unclassified"),
        ],
    );
}

#[test]
fn python() {
    let py = |name: &str, file: &str| frame(name, None, Some(file), FrameKind::Interpreted);
    check(
        "python",
        &[
            (
                py("json.decoder.JSONDecoder.raw_decode", "json/decoder.py"),
                "python-std",
            ),
            (
                py(
                    "json.decoder.JSONDecoder.raw_decode",
                    "/usr/lib/python3.11/json/decoder.py",
                ),
                "python-std",
            ),
            (
                py(
                    "importlib._bootstrap._find_and_load",
                    "<frozen importlib._bootstrap>",
                ),
                "python-std",
            ),
            (
                py(
                    "requests.api.get",
                    "/usr/lib/python3/dist-packages/requests/api.py",
                ),
                "python-packages",
            ),
            (
                py(
                    "flask.app.Flask.wsgi_app",
                    "/venv/lib/python3.11/site-packages/flask/app.py",
                ),
                "flask",
            ),
            (m("_PyEval_EvalFrameDefault", "python3.11"), "cpython"),
            (py("app.make_events", "app.py"), "user"),
        ],
    );
}

#[test]
fn kotlin_native() {
    check(
        "kotlin-native",
        &[
            (n("io.ktor.utils.io.ByteChannel.readByte"), "ktor"),
            (n("kotlin.collections.HashMap.get"), "kotlin-stdlib"),
            (n("mi_malloc"), "kotlin-native-alloc"),
        ],
    );
}
