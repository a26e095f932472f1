//! The rule-file parser (TOML, owner blocks, globs and regexes) on arbitrary text: a rule
//! file or an error with a position, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let _ = whose::fuzzing::parse_rules(text, "fuzz.toml");
});
