//! The presets shipped in `rules/`, compiled into the binary so `whose` works from any
//! directory, and the guess of which presets a profile needs when the user names none.

use crate::model::{Frame, FrameKind, Profile};

/// Every preset, in the order they apply when several are selected: the more specific
/// ecosystems first, so e.g. Kotlin's `kotlin.reflect.` claims frames before the JVM's rules.
pub const PRESETS: &[(&str, &str)] = &[
    ("kotlin", include_str!("../../rules/kotlin.toml")),
    (
        "kotlin-native",
        include_str!("../../rules/kotlin-native.toml"),
    ),
    ("jvm", include_str!("../../rules/jvm.toml")),
    ("go", include_str!("../../rules/go.toml")),
    ("rust", include_str!("../../rules/rust.toml")),
    ("python", include_str!("../../rules/python.toml")),
    ("native", include_str!("../../rules/native.toml")),
    ("allocators", include_str!("../../rules/allocators.toml")),
    ("kernel", include_str!("../../rules/kernel.toml")),
];

pub fn text(name: &str) -> Option<&'static str> {
    PRESETS.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}

pub fn names() -> impl Iterator<Item = &'static str> {
    PRESETS.iter().map(|(n, _)| *n)
}

/// The presets in use as every output names them: `jvm, kotlin`, or `none`.
pub fn display_list(names: &[String]) -> String {
    if names.is_empty() {
        "none".to_string()
    } else {
        names.join(", ")
    }
}

/// The position of a preset in [`PRESETS`], used to order an auto-detected selection.
pub fn rank(name: &str) -> usize {
    PRESETS
        .iter()
        .position(|(n, _)| *n == name)
        .unwrap_or(usize::MAX)
}

/// Which presets the frames of `profile` look like they need. Each test is a cheap look at
/// a name or module; one hit is enough, since a wrong extra preset only claims frames that
/// would otherwise be unclassified.
pub fn detect(profile: &Profile) -> Vec<&'static str> {
    let mut found: Vec<&'static str> = Vec::new();
    for frame in profile.frames() {
        for preset in detect_frame(frame) {
            if !found.contains(&preset) {
                found.push(preset);
            }
        }
        if found.len() == PRESETS.len() {
            break;
        }
    }
    found.sort_by_key(|n| rank(n));
    found
}

fn detect_frame(frame: &Frame) -> Vec<&'static str> {
    let name = &*frame.name;
    let module = frame.module_basename().unwrap_or("");
    let mut out = Vec::new();
    if name.starts_with("kotlin.") || name.starts_with("kotlinx.") || name.starts_with("io.ktor.") {
        out.push("kotlin");
    }
    if name.starts_with("Kotlin_") || name.starts_with("kotlin::") || name.starts_with("konan::") {
        out.push("kotlin-native");
    }
    if name.starts_with("java.")
        || name.starts_with("jdk.")
        || name.starts_with("sun.")
        || module == "libjvm.so"
        || (module.starts_with("perf-") && module.ends_with(".map"))
    {
        out.push("jvm");
    }
    if name.starts_with("runtime.") || name == "runtime.goexit" || name.starts_with("runtime/") {
        out.push("go");
    }
    if name.starts_with("core::")
        || name.starts_with("alloc::")
        || name.starts_with("<core::")
        || name.starts_with("<alloc::")
        || name.starts_with("__rust_")
        || name.starts_with("std::rt::")
    {
        out.push("rust");
    }
    if frame.kind == FrameKind::Interpreted
        && frame
            .file
            .as_deref()
            .is_some_and(|f| f.ends_with(".py") || f.starts_with("<frozen "))
    {
        out.push("python");
    }
    if module.starts_with("libc.so")
        || module.starts_with("ld-linux")
        || module.starts_with("libstdc++")
        || name.starts_with("__libc_")
        || name.starts_with("_int_malloc")
        || name.starts_with("__GI_")
    {
        out.push("native");
    }
    if frame.kind == FrameKind::Kernel || module.starts_with("[kernel.") || module == "[vdso]" {
        out.push("kernel");
    }
    out
}
