//! Each reader's output on a real fixture, as the model's canonical dump, against a committed
//! golden file. A missing or different golden fails; set `WHOSE_BLESS=1` to rewrite them
//! after checking the difference is intended.

use super::common::fixture;
use whose::Unit;
use whose::{ReadOptions, read_profile};

fn golden(name: &str, dump: &str) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    if std::env::var_os("WHOSE_BLESS").is_some() {
        std::fs::write(&path, dump).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path).unwrap_or_else(|_| {
        panic!(
            "missing golden {}; run with WHOSE_BLESS=1 to create it",
            path.display()
        )
    });
    assert!(
        want == dump,
        "{} differs from the reader's dump; run with WHOSE_BLESS=1 if intended",
        path.display()
    );
}

#[test]
fn folded_async_profiler_alloc_stacks() {
    let options = ReadOptions {
        unit: Some(Unit::Bytes),
        ..Default::default()
    };
    let p = read_profile(&fixture("folded/seed-ktor-alloc.txt"), &options).unwrap();
    golden("seed-ktor-alloc.dump", &p.dump());
}

#[test]
fn py_spy_raw() {
    let p = read_profile(&fixture("folded/py-app.folded"), &ReadOptions::default()).unwrap();
    golden("py-app.dump", &p.dump());
}
