//! Table-driven checks of the presets: for each, frames as readers produce them and the owner
//! the preset must give them. A wrong claim here (a Rust rule eating C++ frames, a JDK rule
//! eating the JDK's HTTP server) is a wrong report for every user of that ecosystem.

use super::common::*;
use serde_json::Value;
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
    // a JIT frame lives in the perf map too, but it is the method's owner's code; so is a
    // script Rhino compiled to a class (issue 28: it was claimed as a JVM stub)
    check(
        "jvm",
        &[
            (
                frame(
                    "shop.Render.render",
                    Some("perf-22048.map"),
                    None,
                    FrameKind::Jit,
                ),
                "unclassified",
            ),
            (
                frame(
                    "Lorg/mozilla/javascript/gen/file__home_app_js_1",
                    Some("perf-22048.map"),
                    None,
                    FrameKind::Jit,
                ),
                "unclassified",
            ),
            (m("I2C/C2I adapters", "perf-22048.map"), "jvm"),
        ],
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
            // the program's own files are not the preset's: the guess of the program's
            // files from a profile claims them (tests/it/node_python.rs)
            (py("app.make_events", "app.py"), "unclassified"),
            // the standard library's C modules and the libraries under them are the stdlib's
            (
                m("encoder_call", "_json.cpython-311-x86_64-linux-gnu.so"),
                "python-std-native",
            ),
            (
                m("deflate", "/usr/lib/x86_64-linux-gnu/libz.so.1"),
                "python-std-native",
            ),
            (
                m(
                    "PyArray_Foo",
                    "_multiarray_umath.cpython-311-x86_64-linux-gnu.so",
                ),
                "python-extensions",
            ),
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

// ---------------------------------------------------------------- presets and user code
// detected from what a profile shows (issue 14): hand-made inputs whose answer follows from
// the rules by hand.

/// The owners' (self, owner) weights of a `report --format json`, by name.
fn owner_weights(json: &Value) -> Vec<(String, u64, u64)> {
    json["inputs"][0]["owners"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["name"].as_str().unwrap().to_string(),
                o["self"].as_u64().unwrap(),
                o["owner"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn weight_of(json: &Value, owner: &str) -> (u64, u64) {
    owner_weights(json)
        .into_iter()
        .find(|(n, ..)| n == owner)
        .map_or((0, 0), |(_, s, o)| (s, o))
}

/// One `perf script` sample of `python3.11` (period 1000), frames leaf first as
/// `(symbol, module)`.
fn perf_script_sample(frames: &[(&str, &str)]) -> String {
    let mut s = String::from("python3.11 4242  100.000000:       1000 cpu-clock:ppp: \n");
    for (i, (sym, module)) in frames.iter().enumerate() {
        s.push_str(&format!(
            "\t{:>16x} {sym}+0x10 ({module})\n",
            0x1000 + i * 0x100
        ));
    }
    s.push('\n');
    s
}

#[test]
fn cpython_under_perf_is_detected_from_libpython_and_its_c_frames_are_the_interpreters() {
    let libpython = "/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0";
    let python = "/usr/bin/python3.11";
    let libc = "/usr/lib/x86_64-linux-gnu/libc.so.6";
    // every stack: the interpreter's loop under Py_RunMain, main (python3.11), libc's start
    let base = [
        ("_PyEval_EvalFrameDefault", libpython),
        ("PyEval_EvalCode", libpython),
        ("Py_RunMain", libpython),
        ("main", python),
        ("__libc_start_call_main", libc),
    ];
    let with_leaf = |leaf: Option<(&'static str, &'static str)>| {
        let mut frames: Vec<(&str, &str)> = leaf.into_iter().collect();
        frames.extend(base);
        perf_script_sample(&frames)
    };
    // 4 samples of 1000: the eval loop itself (cpython), pymalloc, glibc's malloc and the
    // cyclic GC, one each
    let text = [
        with_leaf(None),
        with_leaf(Some(("PyObject_Malloc", libpython))),
        with_leaf(Some(("malloc", libc))),
        with_leaf(Some(("gc_collect_main", libpython))),
    ]
    .concat();
    let dir = tempfile::tempdir().unwrap();
    let path = write_temp(dir.path(), "cpython.perf-script.txt", text);
    let json: Value = report_json(&[path.to_str().unwrap()]);
    assert_eq!(
        json["presets"],
        serde_json::json!(["python", "native", "allocators", "kernel"])
    );
    assert_eq!(json["presets_detected"], true);
    assert_eq!(json["inputs"][0]["total"], 4000);
    // by hand: each leaf's owner keeps its sample in the self view; every frame is transparent
    // (runtime, allocator, gc), so the owner view is the self view again
    assert_eq!(weight_of(&json, "cpython"), (1000, 1000));
    assert_eq!(weight_of(&json, "pymalloc"), (1000, 1000));
    assert_eq!(weight_of(&json, "glibc-malloc"), (1000, 1000));
    assert_eq!(weight_of(&json, "cpython-gc"), (1000, 1000));
    assert_eq!(weight_of(&json, "unclassified"), (0, 0));
}

#[test]
fn a_folded_cpp_stack_selects_the_native_preset_by_std_and_malloc() {
    let dir = tempfile::tempdir().unwrap();
    // no modules: only the names say C++ (`std::`) and C allocation (`malloc`)
    let path = write_temp(
        dir.path(),
        "cpp.folded",
        "main;Index::build;std::vector<int, std::allocator<int> >::_M_realloc_insert;operator new(unsigned long);malloc 6\n\
         main;Index::build;std::__introsort_loop<int*, long> 3\n\
         main;Index::build 1\n",
    );
    let json: Value = report_json(&[path.to_str().unwrap()]);
    assert_eq!(
        json["presets"],
        serde_json::json!(["native", "allocators", "kernel"])
    );
    // by hand: malloc (allocators' glibc-malloc, by name) 6, the introsort (libstdc++) 3, the
    // program's own `Index::build` 1 in the self view; in the owner view both transparent
    // stacks look through to `Index::build`, which no rule claims: unclassified 10
    assert_eq!(weight_of(&json, "glibc-malloc"), (6, 0));
    assert_eq!(weight_of(&json, "libstdc++"), (3, 0));
    assert_eq!(weight_of(&json, "unclassified"), (1, 10));
    let suggested = &json["inputs"][0]["suggested_user"];
    assert_eq!(suggested["prefix"], "Index::");
}

#[test]
fn a_rust_binarys_own_crate_is_guessed_as_user_code_and_named_in_the_header() {
    let dir = tempfile::tempdir().unwrap();
    // a worker thread of `crunch` calling serde (a known dependency) and itoa (unknown to the
    // presets, but called by crunch: never the outermost), and std's runtime around it
    let path = write_temp(
        dir.path(),
        "crunch.folded",
        "std::sys::thread::unix::Thread::new::thread_start;crunch::worker;serde_json::de::from_str 5\n\
         std::sys::thread::unix::Thread::new::thread_start;crunch::worker;itoa::Buffer::format 2\n\
         std::sys::thread::unix::Thread::new::thread_start;crunch::worker;crunch::Stats::add;alloc::raw_vec::RawVec<T,A>::grow_one;__rust_alloc 3\n",
    );
    let file = path.to_str().unwrap();
    let json: Value = report_json(&[file]);
    assert_eq!(
        json["user_code_guessed"],
        serde_json::json!([{
            "unit": "rust crate",
            "name": "crunch",
            "prefixes": ["crunch::"],
            "evidence": "outermost crate frames in 100.0% of the weight",
            "strength": "medium"
        }])
    );
    // by hand: user owns its own leaf nothing (crunch::Stats::add is not a leaf), and in the
    // owner view the 3 samples under rust-alloc and rust-std look through to crunch::Stats::add;
    // serde keeps its 5, and itoa, which no preset names, is its own guessed owner with 2
    // (issue 29: it was unclassified before auto-owners)
    assert_eq!(weight_of(&json, "user"), (0, 3));
    assert_eq!(weight_of(&json, "serde"), (5, 5));
    assert_eq!(weight_of(&json, "itoa"), (2, 2));
    assert_eq!(weight_of(&json, "unclassified"), (0, 0));
    let table = whose_ok(&["report", file]);
    assert!(
        table.contains(
            "user code guessed: rust crate crunch (`crunch::`), detected from outermost crate \
             frames in 100.0% of the weight (medium evidence); --user PREFIX adds more"
        ),
        "{table}"
    );
    let explain = whose_ok(&["explain", file]);
    assert!(
        explain.contains("user code guessed: rust crate crunch"),
        "{explain}"
    );
    assert!(
        explain
            .lines()
            .any(|l| l.contains("prefix \"crunch::\"") && l.contains("crunch::")),
        "{explain}"
    );
    assert!(
        explain
            .lines()
            .any(|l| l.starts_with("  user ") && l.contains("rust crate crunch (detected from")),
        "{explain}"
    );
    // a user rule that claims the crate otherwise wins over the guess
    let rules = write_temp(
        dir.path(),
        "r.toml",
        "[[owner]]\nname = \"crunch-lib\"\ncategory = \"library\"\nprefix = [\"crunch::\"]\n",
    );
    let json: Value = report_json(&[file, "--rules", rules.to_str().unwrap()]);
    assert_eq!(weight_of(&json, "crunch-lib"), (0, 3));
    assert_eq!(weight_of(&json, "user"), (0, 0));
}

/// CPython recorded here by perf: the interpreter's module selects the python preset, whose
/// `cpython`, `pymalloc` and `cpython-gc` owners then claim most of the samples (before, only
/// native was detected and the interpreter's frames were unclassified).
#[test]
#[ignore = "needs perf permitted to record and python3 with its symbols: .ci/run runs it where \
            perf records"]
fn live_cpython_under_perf_selects_the_python_preset() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("py.data");
    let perf = std::process::Command::new("perf")
        .args(["record", "-q", "-F", "999", "-g", "-o"])
        .arg(&data)
        .args([
            "--",
            "python3",
            "-c",
            "import json\nd=[{'a': i, 'b': str(i) * 3} for i in range(20000)]\n\
             for _ in range(10): json.loads(json.dumps(d))\n",
        ])
        .output()
        .expect("perf");
    assert!(
        perf.status.success(),
        "{}",
        String::from_utf8_lossy(&perf.stderr)
    );
    let json: Value = report_json(&[data.to_str().unwrap()]);
    assert_eq!(json["presets"][0], "python", "{}", json["presets"]);
    let total = json["inputs"][0]["total"].as_u64().unwrap() as f64;
    let interpreter: u64 = ["cpython", "pymalloc", "cpython-gc"]
        .iter()
        .map(|o| weight_of(&json, o).0)
        .sum();
    let share = interpreter as f64 * 100.0 / total;
    assert!(share > 40.0, "the interpreter's own frames: {share:.1}%");
}
