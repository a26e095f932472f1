//! The V8 CPU profile (`.cpuprofile`) reader on arbitrary bytes: a profile or an error, never
//! a panic (call trees with cycles, two parents, unknown ids, negative time deltas).
#![no_main]

use libfuzzer_sys::fuzz_target;
use whose::InputFormat;

fuzz_target!(|data: &[u8]| {
    let _ = whose_fuzz::read(data, &whose_fuzz::options(InputFormat::Cpuprofile));
});
