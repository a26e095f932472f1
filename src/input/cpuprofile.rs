//! V8 CPU profiles (`.cpuprofile`): what `node --cpu-prof` writes and Chrome DevTools saves,
//! the profile most Node.js users have (issue 29).
//!
//! The file is one JSON object: `nodes`, a call tree whose entries are `{id, callFrame:
//! {functionName, scriptId, url, lineNumber, columnNumber}, hitCount, children: [ids]}`, and
//! `startTime`, `endTime`, `samples` (the leaf node id of each sample, in time order) and
//! `timeDeltas` (µs from the previous sample; the first from `startTime`).
//!
//! Weight is time, as DevTools weighs it: sample `i` lasts until sample `i + 1` is taken
//! (`timeDeltas[i + 1]`), and the last one until `endTime`; a negative interval (V8 writes a
//! few when its clock and the sampler disagree) counts as zero and is counted in a warning.
//! The samples' count is a second sample type. A file without `samples` (some exporters keep
//! the tree alone) is read from each node's `hitCount`, in samples.
//!
//! Frames: `(root)` is the tree's root, not a frame. `(program)` (time in V8 outside any
//! script), `(idle)` and `(garbage collector)` are pseudo-frames with that name and nothing
//! else, for the node preset. A JavaScript function is a frame named by `functionName`
//! (`(anonymous)` when empty, as DevTools shows it), file its `url` without `file://`, line
//! 1-based (V8 counts from 0), kind `jit`. A function without a script (`scriptId` 0, no url:
//! V8's builtins and node's C++ bindings, `consoleCall`, `writeBuffer`) is native code of the
//! `node` executable, so its module is `node`, as perf names that executable's frames.
//!
//! Memory: frames are interned once each, and only the stacks of sampled nodes are built
//! (each distinct node once); the frame ids those stacks hold are capped at an eighth of
//! `--max-decompressed`, as speedscope's evented stacks are, so a deep adversarial tree is
//! refused rather than exhausting memory.

use super::options::{Probe, ReadOptions};
use super::source::Source;
use crate::error::{Error, Position, Result, quote};
use crate::model::{Frame, FrameId, FrameKind, Notice, Profile, SampleType, StackId, Unit};
use rustc_hash::FxHashMap;
use serde::Deserialize;
use std::path::Path;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct FileJson {
    nodes: Vec<NodeJson>,
    #[serde(default)]
    start_time: Option<i64>,
    #[serde(default)]
    end_time: Option<i64>,
    #[serde(default)]
    samples: Option<Vec<u64>>,
    #[serde(default)]
    time_deltas: Option<Vec<i64>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct NodeJson {
    id: u64,
    call_frame: CallFrameJson,
    #[serde(default)]
    hit_count: Option<u64>,
    #[serde(default)]
    children: Option<Vec<u64>>,
    /// Some writers give each node its parent instead of the children.
    #[serde(default)]
    parent: Option<u64>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct CallFrameJson {
    function_name: String,
    #[serde(default)]
    url: String,
    #[serde(default)]
    line_number: Option<i64>,
}

/// The share of `--max-decompressed` the sampled stacks' frame ids may take (an eighth).
const STACK_SHARE: u64 = 8;

/// No parent, in the parent table.
const NO_PARENT: u32 = u32::MAX;

pub fn read(mut source: Source, options: &ReadOptions) -> Result<Profile> {
    let path = source.path.clone();
    let bytes = source.read_capped(options.max_decompressed)?;
    let parsed: FileJson =
        serde_json::from_slice(&bytes).map_err(|e| json_error(&path, &bytes, &e))?;
    let cap = options
        .max_decompressed
        .unwrap_or(super::source::DEFAULT_MAX_DECOMPRESSED)
        / STACK_SHARE;
    build(&path, &bytes, parsed, cap)
}

/// serde_json's message without its " at line L column C", at the byte offset it names, with
/// the text around it quoted and what a `.cpuprofile` looks like.
fn json_error(path: &Path, bytes: &[u8], e: &serde_json::Error) -> Error {
    let message = e.to_string();
    let message = message
        .rsplit_once(" at line ")
        .map_or(message.as_str(), |(m, _)| m);
    let offset = offset_of(bytes, e.line(), e.column());
    let near = &bytes[offset.saturating_sub(30)..(offset + 30).min(bytes.len())];
    Error::input(
        path,
        Position::Offset(offset as u64),
        format!(
            "{message}, near {}: expected a V8 CPU profile ({{\"nodes\": [{{\"id\", \
             \"callFrame\", \"children\"}}...], \"samples\": [...], \"timeDeltas\": [...]}})",
            quote(near)
        ),
    )
}

/// The byte offset of serde_json's 1-based line and column (in bytes).
fn offset_of(bytes: &[u8], line: usize, column: usize) -> usize {
    let line_start: usize = bytes
        .split(|&b| b == b'\n')
        .take(line.saturating_sub(1))
        .map(|l| l.len() + 1)
        .sum();
    (line_start + column.saturating_sub(1)).min(bytes.len())
}

/// Where `KEY[INDEX]` (or `KEY` alone) starts in the text, for a message about it.
fn position(text: &[u8], key: &str, index: Option<usize>) -> Position {
    let mut at = super::speedscope::Walk { text, pos: 0 };
    let found = (|| {
        at.field(key)?;
        if let Some(i) = index {
            at.item(i)?;
        }
        at.peek()?;
        Some(at.pos)
    })();
    found.map_or(Position::Whole, |p| Position::Offset(p as u64))
}

/// Where messages about the input point: its path, and its text, in which a key's byte offset
/// is found ([`position`]).
#[derive(Clone, Copy)]
struct Input<'a> {
    path: &'a Path,
    text: &'a [u8],
}

impl Input<'_> {
    /// The error about `key` (its `index`th item when given), at its byte offset.
    fn error(&self, key: &str, index: Option<usize>, message: String) -> Error {
        Error::input(self.path, position(self.text, key, index), message)
    }
}

/// Node id → its index in `nodes`.
type NodeIndex = FxHashMap<u64, u32>;

/// A node's place in the input for a message: its name (`samples[3]`), and the key and item
/// it is at.
type NodeRef<'f> = &'f dyn Fn() -> (String, &'static str, usize);

fn build(path: &Path, text: &[u8], file: FileJson, cap: u64) -> Result<Profile> {
    let input = Input { path, text };
    if file.nodes.is_empty() {
        return Err(input.error("nodes", None, "no samples: `nodes` is empty".into()));
    }
    let index_of = node_index(input, &file.nodes)?;
    let parent = parents(input, &file.nodes, &index_of)?;
    let mut b = Builder {
        profile: Profile::new(vec![
            SampleType::new("time", Unit::Nanoseconds),
            SampleType::samples(),
        ]),
        frames: vec![None; file.nodes.len()],
        stacks: vec![None; file.nodes.len()],
        scratch: Vec::new(),
        stack_bytes: 0,
        cap,
    };
    let mut negative = 0u64;
    match (&file.samples, &file.time_deltas) {
        (Some(samples), Some(deltas)) => {
            negative = b.timed_samples(input, &file, &index_of, &parent, samples, deltas)?;
        }
        (None, None) => b.hit_counts(path, &file.nodes, &parent)?,
        (Some(_), None) => {
            return Err(input.error(
                "samples",
                None,
                "`samples` without `timeDeltas`: one time delta per sample expected".into(),
            ));
        }
        (None, Some(_)) => {
            return Err(input.error(
                "timeDeltas",
                None,
                "`timeDeltas` without `samples`: the sampled node of each delta expected".into(),
            ));
        }
    }
    if b.profile.rows().next().is_none() {
        return Err(Error::input(
            path,
            Position::Whole,
            "no samples: `samples` is empty and no node has a hitCount",
        ));
    }
    if let (Some(s), Some(e)) = (file.start_time, file.end_time)
        && e >= s
    {
        b.profile.meta.duration_nanos = Some((e - s).saturating_mul(1000));
    }
    if negative > 0 {
        b.profile.meta.warnings.push(Notice::NegativeIntervals {
            path: path.to_path_buf(),
            count: negative,
        });
    }
    Ok(b.profile)
}

/// Node id → index, refusing an id used twice.
fn node_index(input: Input<'_>, nodes: &[NodeJson]) -> Result<NodeIndex> {
    let mut index_of = NodeIndex::default();
    index_of.reserve(nodes.len());
    for (i, node) in nodes.iter().enumerate() {
        if index_of.insert(node.id, i as u32).is_some() {
            return Err(input.error(
                "nodes",
                Some(i),
                format!("nodes[{i}]: id {} is used by an earlier node", node.id),
            ));
        }
    }
    Ok(index_of)
}

/// The index of node `id`, which `what` refers to; an error there if no node has it.
fn find_node(input: Input<'_>, index_of: &NodeIndex, id: u64, what: NodeRef<'_>) -> Result<u32> {
    index_of.get(&id).copied().ok_or_else(|| {
        let (name, key, at) = what();
        input.error(
            key,
            Some(at),
            format!("{name}: node id {id} is not the id of any entry of `nodes`"),
        )
    })
}

/// Each node's parent ([`NO_PARENT`] for a root), from the children lists or the nodes' own
/// `parent`; two parents for one node is not a tree.
fn parents(input: Input<'_>, nodes: &[NodeJson], index_of: &NodeIndex) -> Result<Vec<u32>> {
    let mut parent = vec![NO_PARENT; nodes.len()];
    for (i, node) in nodes.iter().enumerate() {
        for &child in node.children.iter().flatten() {
            let what = || (format!("nodes[{i}].children"), "nodes", i);
            let c = find_node(input, index_of, child, &what)? as usize;
            if parent[c] != NO_PARENT && parent[c] != i as u32 {
                return Err(input.error(
                    "nodes",
                    Some(i),
                    format!(
                        "nodes[{i}]: its child node {} already has the parent node {}: not a tree",
                        nodes[c].id, nodes[parent[c] as usize].id
                    ),
                ));
            }
            parent[c] = i as u32;
        }
        if let Some(p) = node.parent {
            let what = || (format!("nodes[{i}].parent"), "nodes", i);
            let p = find_node(input, index_of, p, &what)?;
            if parent[i] != NO_PARENT && parent[i] != p {
                return Err(input.error(
                    "nodes",
                    Some(i),
                    format!("nodes[{i}]: `parent` disagrees with another node's `children`"),
                ));
            }
            parent[i] = p;
        }
    }
    Ok(parent)
}

impl Builder {
    /// Adds each of `samples` weighted by its interval: the time to the next sample's delta,
    /// the last one's to `endTime`. Returns how many intervals were negative (counted as 0).
    fn timed_samples(
        &mut self,
        input: Input<'_>,
        file: &FileJson,
        index_of: &NodeIndex,
        parent: &[u32],
        samples: &[u64],
        deltas: &[i64],
    ) -> Result<u64> {
        if samples.len() != deltas.len() {
            return Err(input.error(
                "timeDeltas",
                None,
                format!(
                    "`samples` has {} entries and `timeDeltas` {}: one time delta per sample \
                     expected",
                    samples.len(),
                    deltas.len()
                ),
            ));
        }
        let mut negative = 0;
        // sample i's time, in µs from startTime
        let mut at: i128 = 0;
        for (i, &id) in samples.iter().enumerate() {
            let what = || (format!("samples[{i}]"), "samples", i);
            let node = find_node(input, index_of, id, &what)?;
            at = if i == 0 {
                i128::from(deltas[0])
            } else {
                at + i128::from(deltas[i])
            };
            let micros: i128 = match deltas.get(i + 1) {
                Some(&next) => i128::from(next),
                None => match (file.start_time, file.end_time) {
                    (Some(s), Some(e)) => i128::from(e) - i128::from(s) - at,
                    _ => 0,
                },
            };
            if micros < 0 {
                negative += 1;
            }
            let nanos = (micros.max(0) as u128).saturating_mul(1000);
            let stack = self.stack(input.path, &file.nodes, parent, node)?;
            self.profile.add_sample(stack, None, &[nanos, 1]);
        }
        Ok(negative)
    }

    /// Without sampling arrays: each node's `hitCount` is its samples, the only sample type.
    fn hit_counts(&mut self, path: &Path, nodes: &[NodeJson], parent: &[u32]) -> Result<()> {
        self.profile.meta.notes.push(Notice::HitCountWeights);
        self.profile = {
            let mut p = Profile::new(vec![SampleType::samples()]);
            std::mem::swap(&mut p.meta, &mut self.profile.meta);
            p
        };
        for (i, node) in nodes.iter().enumerate() {
            let hits = node.hit_count.unwrap_or(0);
            if hits > 0 {
                let stack = self.stack(path, nodes, parent, i as u32)?;
                self.profile.add_sample(stack, None, &[u128::from(hits)]);
            }
        }
        Ok(())
    }
}

struct Builder {
    profile: Profile,
    /// Each node's frame, once made; `Some(None)` for `(root)`, which is no frame.
    frames: Vec<Option<Option<FrameId>>>,
    /// Each sampled node's stack, once built.
    stacks: Vec<Option<StackId>>,
    scratch: Vec<FrameId>,
    /// Bytes of frame ids the distinct stacks hold, and their cap.
    stack_bytes: u64,
    cap: u64,
}

impl Builder {
    /// The stack (leaf first) of node `leaf`: its frames and its ancestors', root excluded.
    fn stack(
        &mut self,
        path: &Path,
        nodes: &[NodeJson],
        parent: &[u32],
        leaf: u32,
    ) -> Result<StackId> {
        if let Some(stack) = self.stacks[leaf as usize] {
            return Ok(stack);
        }
        self.scratch.clear();
        let mut at = leaf;
        let mut steps = 0usize;
        while at != NO_PARENT {
            steps += 1;
            if steps > nodes.len() {
                return Err(Error::input(
                    path,
                    Position::Whole,
                    format!(
                        "node {}: its ancestors form a cycle, not a call tree",
                        nodes[leaf as usize].id
                    ),
                ));
            }
            let frame = match self.frames[at as usize] {
                Some(frame) => frame,
                None => {
                    let frame = node_frame(&nodes[at as usize].call_frame)
                        .map(|f| self.profile.intern_frame(f));
                    self.frames[at as usize] = Some(frame);
                    frame
                }
            };
            self.scratch.extend(frame);
            at = parent[at as usize];
        }
        self.stack_bytes = self
            .stack_bytes
            .saturating_add((self.scratch.len() * std::mem::size_of::<FrameId>()) as u64);
        if self.stack_bytes > self.cap {
            return Err(Error::input(
                path,
                Position::Whole,
                format!(
                    "the sampled stacks would hold more than {} bytes of frames (a call tree \
                     {} nodes deep at node {}); raise --max-decompressed to read it",
                    self.cap,
                    self.scratch.len(),
                    nodes[leaf as usize].id
                ),
            ));
        }
        let stack = self.profile.intern_stack(&self.scratch);
        self.stacks[leaf as usize] = Some(stack);
        Ok(stack)
    }
}

/// V8's names for time outside JavaScript, which are frames of their own.
const PSEUDO_FRAMES: &[&str] = &["(program)", "(idle)", "(garbage collector)"];

/// The frame of one call-tree node; `None` for the tree's `(root)`.
fn node_frame(call: &CallFrameJson) -> Option<Frame> {
    let name = call.function_name.as_str();
    if call.url.is_empty() {
        if name == "(root)" {
            return None;
        }
        if PSEUDO_FRAMES.contains(&name) {
            return Some(Frame::named(name, FrameKind::Native));
        }
    }
    Some(js_frame(
        name,
        &call.url,
        call.line_number
            .filter(|&l| (0..i64::from(u32::MAX)).contains(&l))
            .map(|l| l as u32 + 1),
    ))
}

/// A JavaScript function as whose names it, from a cpuprofile node or a perf map entry: name
/// (`(anonymous)` if empty), file the script's path (`file://` URLs as paths, `node:` and
/// other URLs as they are), 1-based line. A function without a script is the node
/// executable's native code.
pub fn js_frame(name: &str, url: &str, line: Option<u32>) -> Frame {
    let name = if name.is_empty() { "(anonymous)" } else { name };
    if url.is_empty() {
        return Frame {
            module: Some("node".into()),
            ..Frame::named(name, FrameKind::Native)
        };
    }
    Frame {
        name: name.into(),
        module: None,
        file: Some(file_of_url(url).into()),
        line: line.and_then(std::num::NonZeroU32::new),
        kind: FrameKind::Jit,
    }
}

/// `file:///app/src/a%20b.js` → `/app/src/a b.js`; other URLs (`node:fs`, `https://...`,
/// plain paths) unchanged.
fn file_of_url(url: &str) -> String {
    let Some(rest) = url.strip_prefix("file://") else {
        return url.to_string();
    };
    let bytes = rest.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%'
            && let (Some(h), Some(l)) = (
                bytes.get(i + 1).copied().and_then(hex),
                bytes.get(i + 2).copied().and_then(hex),
            )
        {
            out.push((h * 16 + l) as u8);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A V8 CPU profile ([`looks_like_cpuprofile`]), or the start of one cut short before the
/// head shows it: JSON whose first key is `nodes`, as V8 writes it.
pub fn probe(head: &[u8]) -> Probe {
    if looks_like_cpuprofile(head) {
        Probe::Yes
    } else {
        Probe::of_json_start(head, &["nodes"])
    }
}

/// A V8 CPU profile: a JSON object with `nodes` whose entries have a `callFrame`, and the
/// sampling arrays or the nodes' hit counts (V8 writes `nodes` first, so the head has it).
pub fn looks_like_cpuprofile(head: &[u8]) -> bool {
    let text = String::from_utf8_lossy(head);
    let trimmed = text.trim_start();
    trimmed.starts_with('{')
        && trimmed.contains("\"nodes\"")
        && trimmed.contains("\"callFrame\"")
        && (trimmed.contains("\"functionName\"") || trimmed.contains("\"samples\""))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::source::DEFAULT_MAX_DECOMPRESSED;
    use crate::model::cases::assert_cases;

    fn read_str(json: &str) -> Result<Profile> {
        let parsed: FileJson = serde_json::from_str(json)
            .map_err(|e| json_error(Path::new("t"), json.as_bytes(), &e))?;
        build(
            Path::new("t"),
            json.as_bytes(),
            parsed,
            DEFAULT_MAX_DECOMPRESSED / 8,
        )
    }

    fn node(id: u64, name: &str, url: &str, children: &[u64]) -> String {
        format!(
            r#"{{"id":{id},"callFrame":{{"functionName":"{name}","scriptId":"1","url":"{url}","lineNumber":4,"columnNumber":2}},"hitCount":1,"children":{children:?}}}"#
        )
    }

    /// root → main (app.js) → {work (app.js), parse (node_modules/p/index.js)}; gc at root.
    /// The profile of [`tree`]'s nodes with the other fields `rest` (JSON members).
    fn sampled(rest: &str) -> Profile {
        read_str(&format!(r#"{{"nodes":[{}],{rest}}}"#, tree())).unwrap()
    }

    fn tree() -> String {
        [
            node(1, "(root)", "", &[2, 5]),
            node(2, "main", "file:///app/app.js", &[3, 4]),
            node(3, "work", "file:///app/src/w.js", &[]),
            node(4, "", "file:///app/node_modules/p/index.js", &[]),
            node(5, "(garbage collector)", "", &[]),
        ]
        .join(",")
    }

    /// Stacks (root first, names joined) and their (time ns, samples).
    fn rows(p: &Profile) -> Vec<(String, Vec<u128>)> {
        let mut rows: Vec<(String, Vec<u128>)> = p
            .rows()
            .map(|r| {
                let names: Vec<&str> = p
                    .stack(r.stack)
                    .iter()
                    .rev()
                    .map(|&f| &*p.frame(f).name)
                    .collect();
                (crate::model::folded::join_frames(&names), r.values.to_vec())
            })
            .collect();
        rows.sort();
        rows
    }

    #[test]
    fn each_sample_lasts_until_the_next_and_the_last_until_end_time() {
        // samples at 100+10=110, 130, 160, 161 µs; end 200
        let p = sampled(
            r#""startTime":100,"endTime":200,"samples":[3,4,3,5],"timeDeltas":[10,20,30,1]"#,
        );
        assert_eq!(
            rows(&p),
            vec![
                ("(garbage collector)".to_string(), vec![39_000, 1]),
                ("main;(anonymous)".to_string(), vec![30_000, 1]),
                ("main;work".to_string(), vec![21_000, 2]),
            ]
        );
        assert_eq!(p.totals(), vec![90_000, 4]);
        assert_eq!(p.meta.duration_nanos, Some(100_000));
        let work = p.frames().find(|f| &*f.name == "work").unwrap();
        assert_eq!(work.file.as_deref(), Some("/app/src/w.js"));
        assert_eq!(work.line.map(u32::from), Some(5));
        assert_eq!(work.kind, FrameKind::Jit);
        assert!(p.frames().all(|f| &*f.name != "(root)"));
    }

    #[test]
    fn negative_intervals_count_as_zero_with_a_warning() {
        let p = sampled(r#""startTime":0,"endTime":50,"samples":[3,4],"timeDeltas":[10,-5]"#);
        // sample 0 lasts -5 → 0; sample 1 at 5 µs lasts until 50
        assert_eq!(p.totals(), vec![45_000, 2]);
        let negative = Notice::NegativeIntervals {
            path: "t".into(),
            count: 1,
        };
        assert_eq!(p.meta.warnings, [negative]);
    }

    #[test]
    fn without_samples_the_hit_counts_weigh() {
        let json = format!(r#"{{"nodes":[{}]}}"#, tree());
        let p = read_str(&json).unwrap();
        assert_eq!(p.sample_types(), &[SampleType::samples()]);
        // every node has hitCount 1, (root) included, whose stack is empty
        assert_eq!(p.totals(), vec![5]);
    }

    #[test]
    fn bad_trees_are_refused_with_where() {
        let e = |json: String| read_str(&json).unwrap_err().to_string();
        let bad_sample = format!(
            r#"{{"nodes":[{}],"samples":[3,9],"timeDeltas":[1,1]}}"#,
            tree()
        );
        let msg = e(bad_sample);
        assert!(msg.contains("samples[1]: node id 9 is not the id"), "{msg}");
        assert!(msg.starts_with("t at byte offset "), "{msg}");
        let msg = e(format!(
            r#"{{"nodes":[{}],"samples":[3],"timeDeltas":[1,1]}}"#,
            tree()
        ));
        assert!(msg.contains("one time delta per sample"), "{msg}");
        let cycle = [node(1, "a", "x.js", &[2]), node(2, "b", "x.js", &[1])].join(",");
        let msg = e(format!(
            r#"{{"nodes":[{cycle}],"samples":[1],"timeDeltas":[1]}}"#
        ));
        assert!(msg.contains("cycle"), "{msg}");
        let two_parents = [
            node(1, "a", "x.js", &[3]),
            node(2, "b", "x.js", &[3]),
            node(3, "c", "x.js", &[]),
        ]
        .join(",");
        let msg = e(format!(
            r#"{{"nodes":[{two_parents}],"samples":[3],"timeDeltas":[1]}}"#
        ));
        assert!(msg.contains("not a tree"), "{msg}");
        let msg = e(r#"{"nodes":[{"id":1}]}"#.to_string());
        assert!(msg.contains("missing field `callFrame`"), "{msg}");
        assert!(msg.contains("expected a V8 CPU profile"), "{msg}");
    }

    #[test]
    fn urls_become_paths() {
        assert_cases(
            file_of_url,
            &[
                ("file:///a/b%20c.js", "/a/b c.js".into()),
                ("node:internal/fs/utils", "node:internal/fs/utils".into()),
                ("file:///a/%zz.js", "/a/%zz.js".into()),
            ],
        );
        let f = js_frame("consoleCall", "", None);
        assert_eq!(f.module.as_deref(), Some("node"));
        assert_eq!(f.kind, FrameKind::Native);
    }

    #[test]
    fn detection_wants_nodes_with_call_frames() {
        assert!(looks_like_cpuprofile(
            br#"{"nodes":[{"id":1,"callFrame":{"functionName":"(root)""#
        ));
        assert!(!looks_like_cpuprofile(br#"{"profiles":[],"shared":{}}"#));
        assert!(!looks_like_cpuprofile(b"a;b 1\n"));
    }
}
