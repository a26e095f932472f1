//! Name normalisation seen from the outside (issue 12): every Java, Rust and C++ name form of
//! the issue, in small hand-written folded files, gives the frames and owners a user of that
//! ecosystem expects, with the presets whose detects from them.

use super::common::*;
use serde_json::Value;
use std::collections::BTreeMap;

/// `whose convert --to folded --plain` of a file: the stacks (names only, as inferno writes
/// them) and weights as whose read them, sorted.
pub fn stacks_of(path: &str, format_in: &str) -> Vec<String> {
    let out = whose_ok(&[
        "convert",
        "--to",
        "folded",
        "--plain",
        "--format-in",
        format_in,
        path,
    ]);
    let mut lines: Vec<String> = out.lines().map(str::to_string).collect();
    lines.sort();
    lines
}

/// (self, owner, anywhere) per owner, and the presets, from `whose report --format json`.
pub fn owners_of(args: &[&str]) -> (BTreeMap<String, [u64; 3]>, Vec<String>) {
    let mut full = vec!["report", "--format", "json"];
    full.extend_from_slice(args);
    let json: Value = serde_json::from_str(&whose_ok(&full)).unwrap();
    let owners = json["inputs"][0]["owners"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            let n = |view: &str| o[view].as_f64().unwrap() as u64;
            (
                o["name"].as_str().unwrap().to_string(),
                [n("self"), n("owner"), n("anywhere")],
            )
        })
        .collect();
    let presets = json["presets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap().to_string())
        .collect();
    (owners, presets)
}

#[test]
fn collapsed_java_forms_read_as_java_and_select_the_jvm_preset() {
    // as stackcollapse-perf/inferno write perf-map-agent names (`;` → `:`, `L` dropped for
    // java processes), with async-profiler's `_[j]`; and C++ frames of the VM itself
    let text = "\
java/lang/Thread:::run_[j];Lio/netty/X:::run_[j];io/netty/Baz:::qux_[j] 30
java/lang/Thread:::run_[j];pkg/Foo:.bar_[j] 20
start_thread;thread_native_entry;libjvm.so.Thread::call_run;thread_entry(JavaThread*, Thread*) 10
java/lang/Thread:::run_[j];Lorg/x/gen/File__123:_[j] 4
";
    let f = temp_file(text);
    let path = f.path().to_str().unwrap();
    assert_eq!(
        stacks_of(path, "folded"),
        [
            "java.lang.Thread.run_[j];io.netty.X.run_[j];io.netty.Baz.qux_[j] 30",
            "java.lang.Thread.run_[j];org.x.gen.File__123_[j] 4",
            "java.lang.Thread.run_[j];pkg.Foo.bar_[j] 20",
            "start_thread;thread_native_entry;Thread::call_run;thread_entry 10",
        ]
    );
    let (owners, presets) = owners_of(&[path]);
    assert!(presets.contains(&"jvm".to_string()), "{presets:?}");
    // netty owns its 30; the JDK's Thread.run is transparent (anywhere only); the VM's C++
    // thread entry is the VM's (`^thread_entry$` matches once the parameters are gone);
    // the application's pkg.Foo, the outermost package under a thread root that no preset
    // claims, is guessed as its own code; the generated class's package is under org.x,
    // nobody's unit: unclassified
    assert_eq!(owners["netty"], [30, 30, 30]);
    assert_eq!(owners["jdk"], [0, 0, 54]);
    assert_eq!(owners["jvm"], [10, 10, 10]);
    assert_eq!(owners["user"], [20, 20, 20]);
    assert_eq!(owners["unclassified"], [4, 4, 4]);
}

#[test]
fn half_demangled_rust_and_stubborn_cpp_manglings_are_read() {
    let relocate = "_ZSt14__relocate_a_1IN3idx7PostingES1_ENSt9enable_ifIXsrSt24__is_bitwise_relocatableIT_vE5valueEPS4_E4typeES6_S6_S6_RSaIT0_E";
    let text = format!(
        "main;_$LT$core..option..Option$LT$T$GT$$GT$::map 5\n\
         main;{relocate} 3\n\
         main;_ZN3idx5Index3addEv@plt 2\n"
    );
    let f = temp_file(text);
    let path = f.path().to_str().unwrap();
    assert_eq!(
        stacks_of(path, "folded"),
        [
            "main;<core::option::Option<T>>::map 5",
            "main;idx::Index::add@plt 2",
            "main;std::__relocate_a_1<idx::Posting, idx::Posting> 3",
        ]
    );
    let (owners, presets) = owners_of(&[path]);
    assert!(presets.contains(&"rust".to_string()), "{presets:?}");
    // `<core::option::Option<T>>::map` is the standard library's; the libstdc++ template and
    // the PLT stub (suffix kept) are claimed by the native preset
    assert_eq!(owners["rust-std"][0], 5);
    assert_eq!(owners["libstdc++"], [3, 3, 3]);
    assert_eq!(owners["ld.so"], [2, 2, 2]);
}

#[test]
fn frames_the_demangler_gives_up_on_are_counted_in_a_warning() {
    let text = "\
app 100 1.0: 1000 cpu-clock:
\t1234 _ZN3foo (/srv/app)
\t1300 _ZN3idx5Index3addEv (/srv/app)

app 100 1.1: 1000 cpu-clock:
\t1238 _ZN3foo (/srv/app)
\t1300 _ZZ9garbage (/srv/app)

";
    let f = temp_file(text);
    let out = whose(&["report", "--no-presets", f.path().to_str().unwrap()]);
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("2 frame name(s) are still mangled") && stderr.contains("`_ZN3foo`"),
        "{stderr}"
    );
}
