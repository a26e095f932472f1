//! Deterministic mutated inputs over every fixture format (issue 17): truncations, bit flips
//! and length-like fields set to 0, 1, 2^31, 2^32-1 and 2^63. Each run must end, within a
//! time bound, with exit 0 (read) or 2 (a clear error): never a panic, an abort or a hang.
//! The coverage-guided search for such inputs is the fuzz targets' job; this test keeps the
//! shapes they and the mutation campaign found from coming back, on every `cargo test`.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A seeded xorshift: the same mutations on every machine and run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn fixture_bytes(rel: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(rel);
    std::fs::read(path).unwrap()
}

fn gunzip(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(bytes)
        .read_to_end(&mut out)
        .unwrap();
    out
}

/// One small input per format the readers detect, as bytes.
fn seeds() -> Vec<(&'static str, Vec<u8>)> {
    let script = gunzip(&fixture_bytes("perf/c-malloc.perf.perf-script.txt.gz"));
    // the first few hundred samples: whole records, ending at a blank line
    let cut = script
        .windows(2)
        .enumerate()
        .filter(|(_, w)| w == b"\n\n")
        .nth(200)
        .map_or(script.len(), |(i, _)| i + 2);
    vec![
        ("folded", fixture_bytes("folded/flame-mini.folded")),
        (
            "pyspy",
            fixture_bytes("folded/py-app.folded")[..4000].to_vec(),
        ),
        ("perf-script", script[..cut].to_vec()),
        ("pprof-gz", fixture_bytes("pprof/heap.pb.gz")),
        ("pprof-raw", gunzip(&fixture_bytes("pprof/heap.pb.gz"))),
        ("perf-data", fixture_bytes("perf/c-malloc.perf.data")),
        (
            "perf-data-pipe",
            gunzip(&fixture_bytes("perf/c-malloc.perf.pipe.data.gz")),
        ),
    ]
}

/// The mutations of one seed: (what was done, the bytes).
fn mutations(seed: &[u8], rng: &mut Rng) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let len = seed.len();
    // prefixes of 1 to 7 bytes (too short to tell the format), and cuts spread over the file
    for cut in (1..8).chain((1..8).map(|k| len * k / 8)) {
        out.push((format!("cut at {cut}"), seed[..cut.min(len)].to_vec()));
    }
    for _ in 0..8 {
        let at = rng.below(len);
        let bit = rng.below(8);
        let mut m = seed.to_vec();
        m[at] ^= 1 << bit;
        out.push((format!("bit {bit} of byte {at} flipped"), m));
    }
    // header fields (perf.data: sizes and offsets in the first 104 bytes) and random places
    let places = [
        8,
        16,
        24 + 8 * rng.below(10),
        rng.below(len.saturating_sub(8)),
    ];
    for at in places {
        for value in [0u64, 1, 1 << 31, u32::MAX as u64, 1 << 63] {
            let mut m = seed.to_vec();
            let bytes = value.to_le_bytes();
            let end = (at + 8).min(len);
            if at < end {
                m[at..end].copy_from_slice(&bytes[..end - at]);
                out.push((format!("8 bytes at {at} set to {value}"), m));
            }
        }
    }
    out
}

/// Runs `whose report` on `path` and returns a complaint if it did not end in time with exit
/// 0 or 2, or printed a panic.
fn check(path: &Path, symfs: &Path) -> Option<String> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_whose"))
        .arg("report")
        .arg(path)
        .arg("--symfs")
        .arg(symfs)
        .env("HOME", symfs)
        .env("NO_COLOR", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            return Some("still running after 30 s".into());
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let mut stderr = String::new();
    let _ = child.stderr.take().unwrap().read_to_string(&mut stderr);
    if stderr.contains("panicked") {
        return Some(format!("panicked: {stderr}"));
    }
    match status.code() {
        Some(0 | 2) => None,
        code => Some(format!("ended with {code:?} ({status}): {stderr}")),
    }
}

#[test]
fn mutated_inputs_of_every_format_end_in_exit_0_or_2() {
    let dir = tempfile::tempdir().unwrap();
    let symfs = dir.path().join("symfs");
    std::fs::create_dir(&symfs).unwrap();
    let mut rng = Rng(0x005e_ed0f_3417);
    let mut cases = Vec::new();
    for (format, seed) in seeds() {
        for (what, bytes) in mutations(&seed, &mut rng) {
            let path = dir.path().join(format!("{format}-{}", cases.len()));
            std::fs::write(&path, bytes).unwrap();
            cases.push((format!("{format}: {what}"), path));
        }
    }
    let failures: Vec<String> = std::thread::scope(|scope| {
        let workers: Vec<_> = cases
            .chunks(cases.len().div_ceil(2))
            .map(|chunk| {
                let symfs = &symfs;
                scope.spawn(move || {
                    chunk
                        .iter()
                        .filter_map(|(what, path)| {
                            check(path, symfs).map(|e| format!("{what}: {e}"))
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap())
            .collect()
    });
    assert!(cases.len() > 200, "{} cases", cases.len());
    assert!(
        failures.is_empty(),
        "{} of {} mutated inputs misbehaved:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}
