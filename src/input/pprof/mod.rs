//! pprof: the protobuf `Profile` of `src/pprof_wire/profile.proto` (Go's runtime, pprof-rs,
//! @datadog/pprof, async-profiler's converter, Pyroscope, Parca), gzip-compressed or raw.
//!
//! Mapping to the model, as `go tool pprof` reads the same file:
//! - every sample type is kept; the default is `default_sample_type`, else the last type;
//! - a `Location` with several `Line`s is a chain of inlined calls: `line[0]` is the innermost
//!   (the leaf), the last line the physical frame it was inlined into; all but the last are
//!   kind `inlined`. A location without lines is an unsymbolized address: `[unknown]`, kind
//!   `unknown`, with its mapping's module (docs/design.md "Frame names");
//! - `Mapping` file → frame module; `Function` name (else system name), file name and the
//!   line's number → frame name, file, line;
//! - `drop_frames`/`keep_frames` prune stacks exactly like pprof's `Profile.Prune`;
//! - string labels naming a thread (`thread`, `thread_name`, `goroutine`...) become the
//!   thread dimension; other labels are not part of the model (`whose convert` keeps them
//!   when it writes pprof from pprof, see [`Decoded`]);
//! - `period`, `duration_nanos`, `comment`, the main binary and its build id go to the
//!   profile's notes.
//!
//! Everything the file refers to is checked (string indices, location, mapping and function
//! ids, value counts), so bad input is an error naming the file, the byte offset of the
//! top-level field at fault and the problem, never a panic.
//!
//! Samples are decoded one at a time as they are folded, never held as a decoded list: a
//! `Sample` costs about 150 bytes decoded against 10 to 20 encoded, so a 10 M-sample profile
//! (436 KB gzipped) that decoded whole took more than 2 GB. The tables are decoded first (a
//! `Profile`'s fields come in any order), then the samples in a second pass over the bytes.

mod build;
mod prune;
mod wire;

use super::name_memo::NameMemo;
use super::options::{Probe, ReadOptions};
use super::source::Source;
use crate::error::{Error, Position, Result, quote};
use crate::model::{
    Frame, FrameId, FrameKind, Notice, Profile, SampleType, StackId, ThreadId, UNKNOWN, Unit,
    Utf8Place, perf,
};
use crate::pprof_wire as pb;
use arcstr::ArcStr;
use build::Builder;
use compact_str::CompactString;
use hashbrown::HashTable;
use prost::Message;
use rustc_hash::FxHashMap;
use std::cell::Cell;
use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use wire::{decode_tables, varint};

/// String label keys whose value names the thread (or goroutine) a sample ran on.
const THREAD_LABELS: &[&str] = &[
    "thread",
    "thread_name",
    "thread.name",
    "threadname",
    "goroutine",
    "goroutine_name",
];

/// The decoded file beside the model, for writers that want to keep every field of the
/// input (numeric labels, addresses, mappings): `sample_stacks[i]` is the stack sample `i`
/// was folded into.
pub struct Decoded {
    /// Every field but the string table, which is in `strings`.
    pub proto: pb::Profile,
    pub strings: StringTable,
    pub sample_stacks: Vec<StackId>,
}

/// pprof's string table, held compactly: the texts back to back in one buffer and an end
/// offset each. As a `Vec<String>` each entry cost 24 bytes beside its text, so a profile of
/// 100 M empty strings (852 KB gzipped, 200 MB raw, under `--max-decompressed`) needed 2.4 GB
/// and aborted under a 2 GB limit (issue 23); here an entry costs 4 bytes.
#[derive(Debug, Clone, Default)]
pub struct StringTable {
    text: String,
    /// `ends[i]` is where string `i` ends in `text`.
    ends: Vec<u32>,
}

impl StringTable {
    /// Appends `s`; false (and nothing appended) when the texts would pass 4 GiB, which the
    /// `u32` offsets cannot name.
    pub fn push(&mut self, s: &str) -> bool {
        let Some(end) = u32::try_from(self.text.len() + s.len()).ok() else {
            return false;
        };
        self.text.push_str(s);
        self.ends.push(end);
        true
    }

    pub fn get(&self, i: usize) -> Option<&str> {
        let end = *self.ends.get(i)? as usize;
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        Some(&self.text[start..end])
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn iter(&self) -> impl Iterator<Item = &str> {
        (0..self.len()).filter_map(|i| self.get(i))
    }
}

/// Whether `head` (the first decompressed bytes) starts like a pprof `Profile`: its first
/// fields (up to 8, or to the end of `head`) have the field numbers and wire types of the
/// schema, and there is a control byte early on, which text formats never have.
pub fn probe(head: &[u8]) -> Probe {
    if looks_like_pprof(head) {
        Probe::Yes
    } else {
        Probe::No
    }
}

/// Whether `head` (the first decompressed bytes) starts like a pprof `Profile` ([`probe`]).
pub fn looks_like_pprof(head: &[u8]) -> bool {
    if !head.iter().take(256).any(|&b| b < 0x09) {
        return false;
    }
    let mut pos = 0;
    let mut fields = 0;
    while pos < head.len() && fields < 8 {
        let Some(tag) = varint(head, &mut pos) else {
            break;
        };
        let (field, wire) = (tag >> 3, tag & 7);
        let expected: &[u64] = match field {
            1..=6 | 11 => &[2],
            13 => &[0, 2],
            7..=10 | 12 | 14 => &[0],
            _ => return false,
        };
        if !expected.contains(&wire) {
            return false;
        }
        fields += 1;
        let Some(value) = varint(head, &mut pos) else {
            break;
        };
        if wire == 2 {
            pos = pos.saturating_add(value as usize);
        }
    }
    fields > 0
}

/// What a profile in one of pprof's pre-protobuf formats is, from its first bytes, or `None`:
/// the text formats of gperftools/tcmalloc and Go's `debug=1` endpoints (`heap profile: …`,
/// `--- contention:`, `goroutine profile: total 4`, `--- threadz 1 ---`) and the binary CPU
/// profile of gperftools, whose header is the machine words 0, 3, 0, period, 0. They are told
/// apart here only to be refused with the conversion that reads them (`go tool pprof`
/// does): read as perf script or folded text they gave exit 0 and wrong numbers.
pub fn legacy_kind(head: &[u8]) -> Option<&'static str> {
    match legacy_cpu_header(head) {
        Some(0) => return Some("legacy pprof binary CPU profile (gperftools)"),
        // pprof's `javaCPUProfile` (google/pprof `legacy_java_profile.go`), issue 28
        Some(_) => return Some("legacy pprof Java CPU profile"),
        None => {}
    }
    let first = head.split(|&b| b == b'\n').next()?;
    let first = std::str::from_utf8(first).ok()?.trim();
    let count_profile = first
        .split_once(" profile: total ")
        .is_some_and(|(name, n)| {
            !name.is_empty()
                && !name.contains(char::is_whitespace)
                && !n.is_empty()
                && n.bytes().all(|b| b.is_ascii_digit())
        });
    let text = first.starts_with("heap profile:")
        || count_profile
        || [
            "--- contention",
            "--- mutex",
            "--- threadz",
            "--- heapz",
            "--- growthz",
        ]
        .iter()
        .any(|p| first.starts_with(p));
    text.then_some("legacy pprof text format")
}

/// gperftools' binary CPU profile header: words 0 (header count), 3 (header words), the
/// version (0; 1 for the Java CPU profiles pprof also reads), the sampling period in µs
/// (non-zero), 0 (padding), as 32- or 64-bit words of either byte order, as pprof's
/// `legacy_profile.go` accepts them. The version, when the header is one.
fn legacy_cpu_header(head: &[u8]) -> Option<u64> {
    for size in [4usize, 8] {
        if head.len() < 5 * size {
            continue;
        }
        for big in [false, true] {
            let word = |i: usize| {
                let bytes = &head[i * size..(i + 1) * size];
                let fold = |acc: u64, &b: &u8| (acc << 8) | u64::from(b);
                if big {
                    bytes.iter().fold(0, fold)
                } else {
                    bytes.iter().rev().fold(0, fold)
                }
            };
            if (word(0), word(1), word(4)) == (0, 3, 0) && word(2) <= 1 && word(3) != 0 {
                return Some(word(2));
            }
        }
    }
    None
}

/// Reads a pprof input into a profile; samples are folded as they are decoded.
pub fn read(mut source: Source, options: &ReadOptions) -> Result<Profile> {
    let bytes = read_capped(&mut source, options)?;
    decode(&source.path, &bytes, false, options.names.as_deref()).map(|(profile, _)| profile)
}

/// Reads a pprof input, returning the decoded file too (every sample held decoded: for
/// `convert`, which writes them back).
pub fn read_keeping_samples(
    mut source: Source,
    options: &ReadOptions,
) -> Result<(Profile, Decoded)> {
    let bytes = read_capped(&mut source, options)?;
    decode(&source.path, &bytes, true, options.names.as_deref())
}

/// The tables, then the samples (held in `Decoded` only when `keep_samples`); function names
/// looked up in `names` when the run shares one.
fn decode(
    path: &Path,
    bytes: &[u8],
    keep_samples: bool,
    names: Option<&NameMemo>,
) -> Result<(Profile, Decoded)> {
    let mut warnings = Vec::new();
    let (mut proto, strings, offsets) = decode_tables(path, bytes, &mut warnings)?;
    let (mut profile, sample_stacks, samples) =
        Builder::new(path, &proto, &strings, &offsets)?.build(bytes, keep_samples, names)?;
    profile.meta.warnings.splice(0..0, warnings);
    proto.sample = samples;
    Ok((
        profile,
        Decoded {
            proto,
            strings,
            sample_stacks,
        },
    ))
}

/// The whole (decompressed) input, capped as every in-memory reader is; pprof has nothing to
/// say about an empty one.
fn read_capped(source: &mut Source, options: &ReadOptions) -> Result<Vec<u8>> {
    let bytes = source.read_capped(options.max_decompressed)?;
    if bytes.is_empty() {
        return Err(Error::input(
            &source.path,
            Position::Whole,
            "empty input: no samples",
        ));
    }
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::prune::*;
    use super::wire::*;
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn recognises_pprof_whatever_its_first_field() {
        // Go's CPU profile starts with time_nanos, its heap profile with period_type
        assert!(looks_like_pprof(&[
            0x48, 0xb6, 0xb0, 0xed, 0x82, 0xeb, 0xc0, 0xa6, 0xf6, 0x18, 0x0a, 0x04, 0x08, 0x01
        ]));
        assert!(looks_like_pprof(&[
            0x5a, 0x04, 0x08, 0x01, 0x10, 0x02, 0x60, 0x80
        ]));
        assert!(looks_like_pprof(&[0x0a, 0x04, 0x08, 0x01, 0x10, 0x02]));
        assert!(!looks_like_pprof(b"main;foo 3\n"));
        assert!(!looks_like_pprof(b"\nmain;foo 3\n"));
        assert!(!looks_like_pprof(&[0x00, 0x01, 0x02]));
        assert!(!looks_like_pprof(&[0x7f, 0x45, 0x4c, 0x46, 0x02, 0x01]));
    }

    #[test]
    fn simplifies_function_names_like_pprof() {
        assert_eq!(simplify_func("net/http.(*conn).serve"), "net/http.");
        assert_eq!(simplify_func("foo(int)"), "foo");
        assert_eq!(
            simplify_func("(anonymous namespace)::f(int)"),
            "(anonymous namespace)::f"
        );
        assert_eq!(simplify_func("A::operator()(int)"), "A::operator()");
        assert_eq!(simplify_func(".ppc_func"), "ppc_func");
        assert_eq!(simplify_func("plain"), "plain");
    }

    /// The strings of [`arb_profile`]'s table: the sample type's, a thread label's, and names
    /// that `drop_frames` regexes match or fail to compile from.
    const STRINGS: [&str; 9] = [
        "",
        "cpu",
        "nanoseconds",
        "thread",
        "main.f",
        "a(b",
        "main\\..*",
        "t1",
        "[",
    ];

    /// A string index, now and then negative or past the table.
    fn arb_idx() -> impl Strategy<Value = i64> + Clone {
        prop_oneof![9 => 0i64..9, 1 => -2i64..12]
    }

    /// An id, now and then 0 or past the table.
    fn arb_id() -> impl Strategy<Value = u64> + Clone {
        prop_oneof![9 => 1u64..5, 1 => 0u64..7]
    }

    fn arb_location() -> impl Strategy<Value = pb::Location> {
        let line = (arb_id(), -1i64..3).prop_map(|(f, l)| pb::Line {
            function_id: f,
            line: l,
        });
        (
            arb_id(),
            prop_oneof![3 => Just(0u64), 1 => arb_id()],
            prop::collection::vec(line, 0..3),
        )
            .prop_map(|(i, m, l)| pb::Location {
                id: i,
                mapping_id: m,
                line: l,
                ..Default::default()
            })
    }

    fn arb_function() -> impl Strategy<Value = pb::Function> {
        (arb_id(), arb_idx(), arb_idx(), arb_idx()).prop_map(|(i, n, s, f)| pb::Function {
            id: i,
            name: n,
            system_name: s,
            filename: f,
            start_line: 0,
        })
    }

    fn arb_mapping() -> impl Strategy<Value = pb::Mapping> {
        (arb_id(), arb_idx(), arb_idx()).prop_map(|(i, f, b)| pb::Mapping {
            id: i,
            filename: f,
            build_id: b,
            ..Default::default()
        })
    }

    /// A sample of mostly two values (the two sample types), sometimes of a wrong count.
    fn arb_sample() -> impl Strategy<Value = pb::Sample> {
        let label = (arb_idx(), arb_idx(), -3i64..3).prop_map(|(k, s, n)| pb::Label {
            key: k,
            str: s,
            num: n,
            num_unit: 0,
        });
        let values = prop_oneof![
            9 => prop::collection::vec(0i64..100, 2..=2),
            1 => prop::collection::vec(-1i64..100, 0..4),
        ];
        (
            prop::collection::vec(arb_id(), 0..5),
            values,
            prop::collection::vec(label, 0..2),
        )
            .prop_map(|(l, v, lb)| pb::Sample {
                location_id: l,
                value: v,
                label: lb,
            })
    }

    /// [`STRINGS`] in order, now and then a table of some of them in any order.
    fn arb_strings() -> impl Strategy<Value = Vec<String>> {
        prop_oneof![
            9 => Just(STRINGS.iter().map(|s| s.to_string()).collect::<Vec<_>>()),
            1 => prop::collection::vec(prop::sample::select(STRINGS.to_vec()), 0..9)
                .prop_map(|v| v.into_iter().map(String::from).collect()),
        ]
    }

    /// Ids 1..=n in order, one replaced by an arbitrary one when `broken`.
    fn renumber(n: usize, broken: Option<(usize, u64)>) -> Vec<u64> {
        let mut ids: Vec<u64> = (1..=n as u64).collect();
        if let Some((i, id)) = broken {
            ids[i % n] = id;
        }
        ids
    }

    /// Small profiles that are mostly well-formed, with any reference sometimes wrong: ids
    /// and string indices now and then 0, negative or past their tables.
    fn arb_profile() -> impl Strategy<Value = pb::Profile> {
        let value_type =
            (arb_idx(), arb_idx()).prop_map(|(t, u)| pb::ValueType { r#type: t, unit: u });
        let rare_idx = || prop_oneof![6 => Just(0i64), 1 => arb_idx()];
        let broken = || prop::option::weighted(0.1, (0usize..4, 0u64..7));
        (
            prop::collection::vec(value_type, 2..=2),
            prop::collection::vec(arb_sample(), 1..5),
            prop::collection::vec(arb_mapping(), 1..=1),
            prop::collection::vec(arb_location(), 4..=4),
            prop::collection::vec(arb_function(), 4..=4),
            arb_strings(),
            (rare_idx(), rare_idx(), rare_idx()),
            (broken(), broken(), broken()),
        )
            .prop_map(
                move |(st, sa, mut ma, mut lo, mut fu, strings, (drop, keep, def), bad)| {
                    let ids = renumber(ma.len(), bad.0);
                    ma.iter_mut().zip(ids).for_each(|(m, id)| m.id = id);
                    let ids = renumber(lo.len(), bad.1);
                    lo.iter_mut().zip(ids).for_each(|(l, id)| l.id = id);
                    let ids = renumber(fu.len(), bad.2);
                    fu.iter_mut().zip(ids).for_each(|(f, id)| f.id = id);
                    pb::Profile {
                        sample_type: st,
                        sample: sa,
                        mapping: ma,
                        location: lo,
                        function: fu,
                        string_table: strings,
                        drop_frames: drop,
                        keep_frames: keep,
                        default_sample_type: def,
                        ..Default::default()
                    }
                },
            )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        /// Whatever the references, reading returns a valid profile or an error; never a
        /// panic.
        #[test]
        fn arbitrary_references_never_panic(p in arb_profile()) {
            let path = Path::new("arb.pb");
            if let Ok((profile, decoded)) = decode(path, &p.encode_to_vec(), true, None) {
                prop_assert!(profile.validate().is_ok());
                // samples of the same locations and labels are merged (issue 23): one stack
                // per kept sample, never more kept samples than the input has
                prop_assert_eq!(decoded.sample_stacks.len(), decoded.proto.sample.len());
                prop_assert!(decoded.proto.sample.len() <= p.sample.len());
            }
        }

        /// Arbitrary bytes are an error or a profile, never a panic.
        #[test]
        fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
            let _ = decode(Path::new("arb.pb"), &bytes, true, None);
        }

        /// The fast sample decode takes every sample a writer makes and gives what prost
        /// gives: ids and values of any size (negative values are ten-byte varints), labels.
        #[test]
        fn the_sample_decode_takes_real_samples_as_prost_does(
            location_id in prop::collection::vec(any::<u64>(), 0..40),
            value in prop::collection::vec(any::<i64>(), 0..4),
            label in prop::collection::vec((any::<i64>(), any::<i64>(), any::<i64>()), 0..3),
        ) {
            let label = label
                .into_iter()
                .map(|(key, str, num)| pb::Label { key, str, num, num_unit: 0 })
                .collect();
            let sample = pb::Sample { location_id, value, label };
            let mut fast = pb::Sample { location_id: vec![7], ..Default::default() };
            prop_assert!(decode_sample(&sample.encode_to_vec(), &mut fast));
            prop_assert_eq!(fast, sample);
        }

        /// On any bytes, the fast sample decode either declines or gives what prost gives.
        #[test]
        fn the_sample_decode_declines_or_agrees_with_prost(
            bytes in prop::collection::vec(any::<u8>(), 0..64),
        ) {
            let mut fast = pb::Sample::default();
            if decode_sample(&bytes, &mut fast) {
                prop_assert_eq!(pb::Sample::decode(&bytes[..]).ok(), Some(fast));
            }
        }
    }

    proptest! {
        /// The table decodes take every location and function a writer makes, as prost.
        #[test]
        fn the_table_decodes_take_real_entries_as_prost_does(
            ids in (any::<u64>(), any::<u64>(), any::<u64>(), any::<bool>()),
            lines in prop::collection::vec((any::<u64>(), any::<i64>()), 0..4),
            function in (any::<u64>(), any::<i64>(), any::<i64>(), any::<i64>(), any::<i64>()),
        ) {
            let line = lines
                .into_iter()
                .map(|(function_id, line)| pb::Line { function_id, line })
                .collect();
            let (id, mapping_id, address, is_folded) = ids;
            let location = pb::Location { id, mapping_id, address, line, is_folded };
            prop_assert_eq!(decode_location(&location.encode_to_vec()), Some(location));
            let (id, name, system_name, filename, start_line) = function;
            let function = pb::Function { id, name, system_name, filename, start_line };
            prop_assert_eq!(decode_function(&function.encode_to_vec()), Some(function));
        }

        /// On any bytes, the table decodes decline or give what prost gives.
        #[test]
        fn the_table_decodes_decline_or_agree_with_prost(
            bytes in prop::collection::vec(any::<u8>(), 0..48),
        ) {
            if let Some(location) = decode_location(&bytes) {
                prop_assert_eq!(pb::Location::decode(&bytes[..]).ok(), Some(location));
            }
            if let Some(function) = decode_function(&bytes) {
                prop_assert_eq!(pb::Function::decode(&bytes[..]).ok(), Some(function));
            }
        }
    }

    #[test]
    fn the_sample_decode_takes_unpacked_fields_and_declines_the_rest() {
        // location_id 3 and 4 one by one, value 5, as a writer without packing writes them
        let unpacked = [0x08, 3, 0x08, 4, 0x10, 5];
        let mut s = pb::Sample::default();
        assert!(decode_sample(&unpacked, &mut s));
        assert_eq!((s.location_id, s.value), (vec![3, 4], vec![5]));
        // field 4 (unknown to Sample), a fixed64 location id, an eleven-byte varint
        let eleven_bytes = [
            0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
        ];
        for other in [
            &[0x20, 1][..],
            &[0x09, 0, 0, 0, 0, 0, 0, 0, 0],
            &eleven_bytes,
        ] {
            assert!(!decode_sample(other, &mut pb::Sample::default()));
        }
    }

    fn loc(prune: bool, beneath: bool) -> Loc {
        Loc {
            start: 0,
            end: 0,
            prune,
            prune_beneath: beneath,
        }
    }

    #[test]
    fn prunes_samples_like_pprof() {
        // leaf first: [malloc (dropped), helper (partially dropped), main (user)]
        let s = [loc(true, true), loc(false, true), loc(false, false)];
        assert_eq!(prune_sample(&s).len(), 2);
        let s = [loc(false, false), loc(true, true), loc(false, false)];
        assert_eq!(prune_sample(&s).len(), 1);
        // a dropped root is kept: nothing user-like above it
        let s = [loc(false, false), loc(true, true)];
        assert_eq!(prune_sample(&s).len(), 2);
    }
}
