//! The JFR reader on arbitrary bytes: a profile or an error, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use whose::InputFormat;

fuzz_target!(|data: &[u8]| {
    let _ = whose_fuzz::read(data, &whose_fuzz::options(InputFormat::Jfr));
});
