//! The pprof reader through its gzip layer. The first byte chooses what the rest is: odd, a
//! gzip stream as it lies on disk (cut, corrupt, multi-member, a bomb against the cap); even,
//! a protobuf that the target gzips first, so mutations reach the parser behind a valid
//! stream whose CRC still holds.
#![no_main]

use flate2::{Compression, write::GzEncoder};
use libfuzzer_sys::fuzz_target;
use std::io::Write;
use whose::InputFormat;

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let options = whose_fuzz::options(InputFormat::Pprof);
    if mode & 1 == 1 {
        let _ = whose_fuzz::read(rest, &options);
    } else {
        let mut gz = GzEncoder::new(Vec::new(), Compression::fast());
        gz.write_all(rest).expect("gzip into memory");
        let _ = whose_fuzz::read(&gz.finish().expect("gzip into memory"), &options);
    }
});
