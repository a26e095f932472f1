//! Kotlin, on the JVM and native. On the JVM its rules come before the JVM's (its preset
//! extends jvm), and the program's own code is the JVM's guess ([`super::jvm`]), made once
//! the jvm preset is loaded with it. Kotlin/Native binaries have no own-code guess of their
//! own: their symbols (`kfun:com.example#main(){}`) are named by `names::kotlin_native_name`.

use super::row::Ecosystem;

pub const KOTLIN: Ecosystem = Ecosystem {
    language: true,
    ..Ecosystem::rules_only("kotlin", include_str!("../../../rules/kotlin.toml"))
};

pub const KOTLIN_NATIVE: Ecosystem = Ecosystem {
    language: true,
    ..Ecosystem::rules_only(
        "kotlin-native",
        include_str!("../../../rules/kotlin-native.toml"),
    )
};
