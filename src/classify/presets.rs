//! The presets shipped in `rules/`, compiled into the binary so `whose` works from any
//! directory, and the guess of which presets a profile needs when the user names none.

use super::block_index::{BlockIndex, LOOKUPS_BEFORE_INDEX};
use super::ecosystem::{self, ECOSYSTEMS, Ecosystem};
use super::match_key;
use super::probe::first_in_order;
use super::rules::{self, Detect, RuleFile};
use crate::error::Result;
use crate::model::{Frame, Profile};
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use std::sync::Mutex;

/// The rules of preset `name`: its ecosystem's `rules/NAME.toml` ([`ECOSYSTEMS`], whose order
/// is the presets' precedence).
pub fn text(name: &str) -> Option<&'static str> {
    ecosystem::by_name(name).map(|e| e.rules)
}

/// The text of preset `name`, or a usage error that lists the presets.
pub fn text_or_error(name: &str) -> Result<&'static str> {
    text(name).ok_or_else(|| {
        crate::error::Error::Usage(format!(
            "unknown preset `{name}`; presets are: {}",
            names().collect::<Vec<_>>().join(", ")
        ))
    })
}

/// Preset `name` parsed, its regexes compiled, once per process: a run builds several rule
/// sets from the same presets (`report` guesses the program's code against the presets alone
/// before it builds the full set; `report --each` builds one per distinct detection), and
/// compiling a preset's regexes costs more than classifying a small input (issue 24).
pub fn parsed(name: &str) -> Result<RuleFile> {
    static PARSED: Mutex<Vec<(&'static str, RuleFile)>> = Mutex::new(Vec::new());
    let text = text_or_error(name)?;
    let cached = |parsed: &[(&str, RuleFile)]| {
        (parsed.iter())
            .find(|(n, _)| *n == name)
            .map(|(_, file)| file.clone())
    };
    // a panic elsewhere while the lock was held leaves whole entries only: they are used
    if let Some(file) = cached(&PARSED.lock().unwrap_or_else(|e| e.into_inner())) {
        return Ok(file);
    }
    let file = rules::parse(text, &origin(name))?;
    let mut parsed = PARSED.lock().unwrap_or_else(|e| e.into_inner());
    if cached(&parsed).is_none()
        && let Some(static_name) = ecosystem::by_name(name).map(|e| e.name)
    {
        parsed.push((static_name, file.clone()));
    }
    Ok(file)
}

/// How the rules and messages name a preset's text: `preset go` ([`Ecosystem::origin_of`]).
pub fn origin(name: &str) -> String {
    Ecosystem::origin_of(name)
}

pub fn names() -> impl Iterator<Item = &'static str> {
    ECOSYSTEMS.iter().map(|e| e.name)
}

/// The presets in use as every output names them: `jvm, kotlin`, or `none`.
pub fn display_list(names: &[String]) -> String {
    if names.is_empty() {
        "none".to_string()
    } else {
        names.join(", ")
    }
}

/// The position of a preset in [`ECOSYSTEMS`], used to order an auto-detected selection.
pub fn rank(name: &str) -> usize {
    ECOSYSTEMS
        .iter()
        .position(|e| e.name == name)
        .unwrap_or(usize::MAX)
}

/// Which presets the frames of `profiles` look like they need, in [`ECOSYSTEMS`] order: those
/// whose `detect` table (in the preset's TOML) matches a frame. One hit is enough, since a
/// wrong extra preset only claims frames that would otherwise be unclassified.
pub fn detect(profiles: &[Profile], memo: Option<&DetectMemo>) -> Result<Vec<&'static str>> {
    let signatures = signatures()?;
    if let Some(memo) = memo {
        return Ok(memo.detect(profiles, &signatures));
    }
    let mut found: Vec<&'static str> = Vec::new();
    // each core looks through its share of the frames with its own compiled signatures
    let parts = rayon::current_num_threads().max(1);
    for profile in profiles {
        let frames = profile.frame_slice();
        let rest: Vec<(&'static str, Detect)> = (signatures.iter())
            .filter(|(name, _)| !found.contains(name))
            .cloned()
            .collect();
        if rest.is_empty() {
            break;
        }
        // a part small enough to try the signatures in order gains nothing from a core
        let part = frames.len().div_ceil(parts).max(LOOKUPS_BEFORE_INDEX);
        let found_in_parts: Vec<Vec<&'static str>> = frames
            .par_chunks(part)
            .map(|part| detect_in(part, rest.clone()))
            .collect();
        for name in found_in_parts.into_iter().flatten() {
            if !found.contains(&name) {
                found.push(name);
            }
        }
    }
    found.sort_by_key(|n| rank(n));
    Ok(found)
}

/// Which presets' signatures each frame matches, remembered across the inputs of a run
/// (`report --each`): a fleet's inputs repeat their frames, and trying ten signatures' module
/// globs and regexes on every frame of every input cost a third of a run without `--preset`
/// (issue 24). At most [`DetectMemo::CAPACITY`] frames; past it, new frames are tried each
/// time, so memory stays bounded.
#[derive(Default)]
pub struct DetectMemo {
    /// Bit `i`: the frame matches the `i`-th signature of [`signatures`].
    matched: Mutex<FxHashMap<Frame, u16>>,
}

impl DetectMemo {
    /// Frames remembered at most (some 120 bytes each: about 30 MB).
    pub const CAPACITY: usize = 1 << 18;

    /// What [`detect`] finds in `profiles`, each frame looked up first: the presets whose
    /// signature some frame matches.
    fn detect(
        &self,
        profiles: &[Profile],
        signatures: &[(&'static str, Detect)],
    ) -> Vec<&'static str> {
        const _: () = assert!(ECOSYSTEMS.len() <= 16, "a frame's matches are 16 bits");
        let mut found = 0u16;
        for profile in profiles {
            let mut known: Vec<Option<u16>> = {
                let matched = self.matched.lock().unwrap_or_else(|e| e.into_inner());
                profile.frames().map(|f| matched.get(f).copied()).collect()
            };
            let mut learned = Vec::new();
            for (frame, mask) in profile.frames().zip(&mut known) {
                let mask = *mask.get_or_insert_with(|| {
                    let m = signature_matches(frame, signatures);
                    learned.push((frame, m));
                    m
                });
                found |= mask;
            }
            if !learned.is_empty() {
                let mut matched = self.matched.lock().unwrap_or_else(|e| e.into_inner());
                let room = Self::CAPACITY.saturating_sub(matched.len());
                matched.extend(learned.into_iter().take(room).map(|(f, m)| (f.clone(), m)));
            }
        }
        let mut names: Vec<&'static str> = (signatures.iter().enumerate())
            .filter(|(i, _)| found & (1 << i) != 0)
            .map(|(_, (name, _))| *name)
            .collect();
        names.sort_by_key(|n| rank(n));
        names
    }
}

/// The signatures `frame` matches, as bits of their positions.
fn signature_matches(frame: &Frame, signatures: &[(&'static str, Detect)]) -> u16 {
    let key = match_key::match_key(&frame.name);
    let mut mask = 0u16;
    for (i, (_, d)) in signatures.iter().enumerate() {
        if first_in_order([(&d.any, d.all.as_slice())], frame, &key).is_some() {
            mask |= 1 << i;
        }
    }
    mask
}

/// Every preset's `detect` table, parsed once per process: `report --each` detects the
/// presets of each input, and parsing the ten presets' TOML and compiling their regexes cost
/// more than a small input's whole report (issue 24).
fn signatures() -> Result<Vec<(&'static str, Detect)>> {
    static PARSED: Mutex<Option<Vec<(&'static str, Detect)>>> = Mutex::new(None);
    // a panic elsewhere while the lock was held leaves it unset or whole: either is used
    if let Some(signatures) = &*PARSED.lock().unwrap_or_else(|e| e.into_inner()) {
        return Ok(signatures.clone());
    }
    let mut signatures: Vec<(&'static str, Detect)> = Vec::new();
    for &Ecosystem {
        name, rules: text, ..
    } in ECOSYSTEMS
    {
        if let Some(detect) = rules::parse_detect(text, &origin(name))? {
            signatures.push((name, detect));
        }
    }
    *PARSED.lock().unwrap_or_else(|e| e.into_inner()) = Some(signatures.clone());
    Ok(signatures)
}

/// The presets of `signatures` some frame of `frames` matches. The signatures not found yet
/// are compiled together; a hit takes its signature out and the rest are compiled again (at
/// most once per preset), so each frame is looked up once.
fn detect_in(frames: &[Frame], signatures: Vec<(&'static str, Detect)>) -> Vec<&'static str> {
    let mut found = Vec::new();
    // compiling costs more than trying the signatures in order on a few thousand frames
    let compile = frames.len() >= LOOKUPS_BEFORE_INDEX;
    let mut index = SignatureIndex::new(signatures, compile);
    for frame in frames {
        let key = match_key::match_key(&frame.name);
        while let Some(name) = index.first(frame, &key) {
            found.push(name);
            index.remove(name);
            if index.is_empty() {
                return found;
            }
        }
    }
    found
}

/// The presets' `detect` tables not matched yet, compiled for lookup.
struct SignatureIndex {
    signatures: Vec<(&'static str, Detect)>,
    /// Whether to compile them (else they are tried in order).
    compile: bool,
    index: Option<BlockIndex>,
}

impl SignatureIndex {
    fn new(signatures: Vec<(&'static str, Detect)>, compile: bool) -> SignatureIndex {
        let index = compile
            .then(|| BlockIndex::new(signatures.iter().map(|(_, d)| (&d.any, d.all.as_slice()))))
            .flatten();
        SignatureIndex {
            signatures,
            compile,
            index,
        }
    }

    /// The first preset whose signature matches `frame`.
    fn first(&self, frame: &Frame, key: &str) -> Option<&'static str> {
        let i = match &self.index {
            Some(index) => index.first(frame, key)?,
            None => {
                let matchers = self
                    .signatures
                    .iter()
                    .map(|(_, d)| (&d.any, d.all.as_slice()));
                first_in_order(matchers, frame, key)?
            }
        };
        Some(self.signatures[i].0)
    }

    fn remove(&mut self, name: &str) {
        let rest = std::mem::take(&mut self.signatures);
        let rest = rest.into_iter().filter(|(n, _)| *n != name).collect();
        *self = SignatureIndex::new(rest, self.compile);
    }

    fn is_empty(&self) -> bool {
        self.signatures.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Frame, FrameKind, SampleType};

    fn detected(frames: &[Frame]) -> Vec<&'static str> {
        let mut profile = Profile::new(vec![SampleType::samples()]);
        for frame in frames {
            let id = profile.intern_frame(frame.clone());
            let stack = profile.intern_stack(&[id]);
            profile.add_sample(stack, None, &[1]);
        }
        let profiles = [profile];
        let found = detect(&profiles, None).unwrap();
        // remembered across inputs (`report --each`): the same, learned and then looked up
        let memo = DetectMemo::default();
        for _ in 0..2 {
            assert_eq!(detect(&profiles, Some(&memo)).unwrap(), found);
        }
        found
    }

    fn framed(name: &str, module: Option<&str>, file: Option<&str>, kind: FrameKind) -> Frame {
        Frame {
            name: name.into(),
            module: module.map(Into::into),
            file: file.map(Into::into),
            line: None,
            kind,
        }
    }

    #[test]
    fn every_preset_but_allocators_declares_when_it_applies() {
        for &Ecosystem {
            name, rules: text, ..
        } in ECOSYSTEMS
        {
            let detect = rules::parse_detect(text, name).unwrap();
            assert_eq!(detect.is_some(), name != "allocators", "{name}");
        }
    }

    #[test]
    fn frames_select_presets_by_their_toml() {
        let n = |name| framed(name, None, None, FrameKind::Native);
        let m = |name, module| framed(name, Some(module), None, FrameKind::Native);
        assert_eq!(detected(&[n("io.ktor.server.A.b")]), ["kotlin"]);
        assert_eq!(detected(&[n("kotlinx.atomicfu.A.b")]), ["kotlin"]);
        assert_eq!(detected(&[n("java.lang.Thread.run")]), ["jvm"]);
        assert_eq!(
            detected(&[framed("x", Some("/tmp/perf-7.map"), None, FrameKind::Jit)]),
            ["jvm"]
        );
        assert_eq!(detected(&[n("runtime.mallocgc")]), ["go"]);
        assert_eq!(
            detected(&[n("<core::cell::RefCell<T> as Clone>::clone")]),
            ["rust"]
        );
        // C++ has `std::` too: only Rust's runtime entry says Rust; C++ and C allocation
        // names say native, as its libraries' modules do
        assert_eq!(
            detected(&[n("std::thread::_State_impl::_M_run")]),
            ["native"]
        );
        assert_eq!(detected(&[n("std::rt::lang_start")]), ["rust", "native"]);
        assert_eq!(detected(&[n("malloc")]), ["native"]);
        assert_eq!(detected(&[n("operator new(unsigned long)")]), ["native"]);
        assert!(detected(&[n("mallocx_wrapper"), n("Index::build")]).is_empty());
        assert_eq!(detected(&[m("f", "/usr/lib/libstdc++.so.6")]), ["native"]);
        assert_eq!(
            detected(&[m("JVM_Sleep", "/opt/jdk/lib/server/libjvm.so")]),
            ["jvm"]
        );
        assert_eq!(
            detected(&[m(
                "_PyEval_EvalFrameDefault",
                "/usr/lib/libpython3.11.so.1.0"
            )]),
            ["python"]
        );
        assert_eq!(detected(&[m("main", "/usr/bin/python3.11")]), ["python"]);
        assert_eq!(
            detected(&[framed(
                "run",
                None,
                Some("/usr/lib/python3.12/json/decoder.py"),
                FrameKind::Interpreted
            )]),
            ["python"]
        );
        assert!(detected(&[framed("run", None, Some("a.py"), FrameKind::Native)]).is_empty());
        assert_eq!(
            detected(&[framed(
                "f",
                Some("/usr/lib/libc.so.6"),
                None,
                FrameKind::Native
            )]),
            ["native"]
        );
        assert_eq!(
            detected(&[framed("f", Some("[vdso]"), None, FrameKind::Native)]),
            ["kernel"]
        );
        assert_eq!(
            detected(&[n("io.ktor.A.b"), framed("k", None, None, FrameKind::Kernel)]),
            ["kotlin", "kernel"]
        );
    }
}
