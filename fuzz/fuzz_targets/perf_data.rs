//! The perf.data reader (file and pipe mode, symbolisation and DWARF unwinding) on arbitrary
//! bytes. Binaries are looked up only in fixtures/perf/bin (the fixtures' own, so the ELF,
//! DWARF and unwinding paths run on real files) and under an empty --symfs, never on this
//! machine's own files, and no kallsyms is read: what a run does depends on its bytes alone.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::path::PathBuf;
use std::sync::OnceLock;
use whose::{InputFormat, ReadOptions};

fn options() -> &'static ReadOptions {
    static OPTIONS: OnceLock<ReadOptions> = OnceLock::new();
    OPTIONS.get_or_init(|| {
        let fixtures = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fixtures/perf");
        let empty = std::env::temp_dir().join(format!("whose-fuzz-{}.empty", std::process::id()));
        std::fs::create_dir_all(&empty).expect("an empty directory for --symfs");
        let mut options = whose_fuzz::options(InputFormat::PerfData);
        options.symbols.binary_path = vec![fixtures.join("bin")];
        options.symbols.symfs = Some(empty.clone());
        options.symbols.jit_map_dir = vec![empty.clone()];
        options.symbols.kallsyms = Some(empty.join("no-kallsyms"));
        options
    })
}

fuzz_target!(|data: &[u8]| {
    let _ = whose_fuzz::read(data, options());
});
