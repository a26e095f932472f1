//! The `gate --require` grammar on arbitrary text. A requirement that parses prints as text
//! that parses again to the same requirement.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    if let Ok(requirement) = whose::fuzzing::parse_requirement(text) {
        let printed = requirement.canonical();
        let again = whose::fuzzing::parse_requirement(&printed).unwrap_or_else(|e| {
            panic!("`{text}` parsed, printed as `{printed}`, which does not: {e}")
        });
        assert_eq!(again.canonical(), printed, "`{text}`");
    }
});
