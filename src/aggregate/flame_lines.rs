//! Folded lines for flame graphs, with the owner of every frame and of every sample.
//!
//! A flame graph tool takes folded lines (`root;…;leaf weight`) and nothing else, so
//! everything the graph should know about owners has to travel in the frame text:
//!
//! - each frame is annotated with its owner, `name [ktor]`, which puts the owner in the
//!   tooltip and makes the text a unique key for the colour (inferno's palette is keyed by
//!   frame text only, and one function name can belong to two owners: two DSOs, two files);
//! - with colour by sample owner a frame is keyed by both, `name [jdk → ktor]` (a `jdk` frame
//!   in a sample `ktor` owns), because the same function then takes different colours;
//! - `owner_root` puts a synthetic `[owner: NAME]` frame under every stack, so the first
//!   level of the graph is the owner split (the sample's owner, owner view).
//!
//! The sample's owner is decided by the very code the report uses ([`super::StackWalk`]),
//! so a flame graph split by owner adds up to exactly the report's owner view.
//!
//! Lines are built once per distinct stack (threads merged) and each distinct frame text once.

use super::flame_stacks::TextStore;
pub use super::flame_stacks::{FlameLines, FrameTexts};
use super::{StackWalk, line_order};
use crate::classify::{Classification, RuleSet};
use crate::model::{FrameId, OwnerId, Profile, StackId, folded};
use rustc_hash::{FxBuildHasher, FxHashMap};
use std::hash::BuildHasher;
use std::io::Write;

/// Which owner a frame's colour (and annotation) follows; also the values of `--color-by`,
/// named by the view they follow (`self`, `owner`; the variant docs stay out of `--help`).
///
/// The default is the owner view, whose's headline number: each sample's stack is one colour,
/// so the width a colour covers is that owner's owner-view share, which is the number the
/// legend shows and what inferno's search for the owner reports as "Matched".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ColorBy {
    /// The frame's own owner, from the rules.
    Frame,
    /// The owner of the sample the frame is part of (owner view).
    #[default]
    Sample,
}

/// What to build. Built once from the command line.
#[derive(Debug, Clone, Default)]
pub struct FlameOptions {
    /// Index of the sample type to weigh by.
    pub metric: usize,
    /// As in [`super::AggregateOptions`]: keep async-profiler's allocated-class leaves
    /// (`byte[]`) as frames. By default they are left out, as in every view of the report:
    /// they say what was allocated, not who allocated it, and have no owner to be coloured by.
    pub types_as_frames: bool,
    /// Annotate each frame with the owner its colour follows; `None` leaves names bare (folded
    /// output for other tools, where the owner root alone carries the owner).
    pub annotate: Option<ColorBy>,
    /// A synthetic root frame `[owner: NAME]` per sample owner.
    pub owner_root: bool,
}

/// What reads the lines in `line_order`'s order (the text order inferno merges them in).
impl FlameLines {
    /// Sorts `order` (indexes into [`Self::stacks`]) as the lines sort as text, the order
    /// inferno merges them in.
    pub fn sort_as_text(&self, order: &mut [u32]) {
        line_order::sort(self, order, line_order::Weights::AsText);
    }

    /// Writes the lines as folded text, sorted, equal stack texts summed (stacks that differ
    /// only by line numbers or modules read the same), as inferno's collapsers do. Returns
    /// the number of lines written.
    pub fn write_folded(
        &self,
        owner: Option<OwnerId>,
        out: &mut dyn Write,
    ) -> std::io::Result<usize> {
        let mut order = self.select(owner);
        line_order::sort(self, &mut order, line_order::Weights::Ignored);
        let mut written = 0;
        let mut text = String::new();
        let mut i = 0;
        while i < order.len() {
            let first = &self.stacks[order[i] as usize];
            let mut weight = first.weight();
            let mut j = i + 1;
            while let Some(next) = order.get(j).map(|&k| &self.stacks[k as usize]) {
                if self.frames(next) != self.frames(first) {
                    break;
                }
                weight = weight.saturating_add(next.weight());
                j += 1;
            }
            text.clear();
            self.write_frames(first, first.len as usize, &mut text);
            folded::write_line(out, &text, weight)?;
            written += 1;
            i = j;
        }
        Ok(written)
    }
}

/// Frame text that folded lines can carry: `;` separates frames and the line ends with a
/// space and the weight, so `;` becomes `,` and control characters become spaces.
pub fn folded_name(name: &str) -> std::borrow::Cow<'_, str> {
    if name.bytes().any(|b| b == b';' || b.is_ascii_control()) {
        name.chars()
            .map(|c| match c {
                ';' => ',',
                c if c.is_control() => ' ',
                c => c,
            })
            .collect::<String>()
            .into()
    } else {
        name.into()
    }
}

/// The synthetic root frame of an owner (`--owner-root`).
pub fn owner_root_frame(owner: &str) -> String {
    format!("[owner: {}]", folded_name(owner))
}

/// Builds the folded lines of `profile` in the chosen metric.
pub fn flame_lines(
    profile: &Profile,
    rules: &RuleSet,
    classes: &Classification,
    options: &FlameOptions,
) -> FlameLines {
    lines_of(profile, rules, classes, options, PIPELINED_STACKS)
}

/// Profiles of this many stacks have their new texts written on another core
/// ([`TextWriter`]).
const PIPELINED_STACKS: usize = 1 << 16;

/// [`flame_lines`], with the texts written beside the lines from `pipelined_from` stacks on.
fn lines_of(
    profile: &Profile,
    rules: &RuleSet,
    classes: &Classification,
    options: &FlameOptions,
    pipelined_from: usize,
) -> FlameLines {
    let mut weights = vec![0u128; profile.stack_count()];
    for row in profile.rows() {
        let w = &mut weights[row.stack.0 as usize];
        *w = w.saturating_add(row.values[options.metric]);
    }
    let own_texts = OwnTexts::new(profile, rules, classes, options);
    let groups = own_text_groups(profile, &own_texts);
    let mut out = FlameLines::default();
    // about a text per frame; colouring by the sample's owner can make more
    out.texts.reserve(profile.frame_count() + 2);
    // room for every stack and its frames, which the lines take unless weightless (a Vec
    // that doubles as it grows holds up to twice what it needs, which counts against an
    // address-space limit; the exact room was a pass over a million stacks, 5 ms): a stack
    // without frames draws one, and `--owner-root` adds one to each
    let stacks = profile.stack_count();
    let per_stack = 1 + usize::from(options.owner_root);
    out.stacks.reserve_exact(stacks);
    out.frames
        .reserve_exact(profile.stack_frame_count() + stacks * per_stack);
    std::thread::scope(|scope| {
        let writer = (stacks >= pipelined_from)
            .then(|| TextWriter::start(scope, &own_texts, &mut out.texts))
            .flatten();
        let mut builder = Builder {
            profile,
            rules,
            options,
            walk: StackWalk {
                profile,
                rules,
                classes,
                types_as_frames: options.types_as_frames,
            },
            classes,
            groups,
            own_texts: &own_texts,
            writer,
            by_frame: vec![u32::MAX; profile.frame_count()],
            by_frame_and_owner: FxHashMap::default(),
            roots: FxHashMap::default(),
            no_frames: FxHashMap::default(),
            text: String::new(),
        };
        for (i, &w) in weights.iter().enumerate() {
            if w > 0 {
                builder.stack(StackId(i as u32), w, &mut out);
            }
        }
        builder.settle(&mut out.texts);
    });
    out
}

/// Writes the new own-colour texts of the lines on another core while they are built (a
/// million texts written one by one were a third of building the lines on one core): the
/// builder hands out each new text's id and sends the frame it is made of; the writer
/// appends the texts in that order. Until it is stopped ([`TextWriter::finish`]) the store
/// has the texts' owners but not their text, so nothing may be looked up.
struct TextWriter<'s> {
    /// Frames of the texts handed out and not sent yet.
    batch: Vec<u32>,
    send: std::sync::mpsc::SyncSender<Vec<u32>>,
    written: std::thread::ScopedJoinHandle<'s, TextStore>,
}

/// Frames a batch sent to the writer holds.
const WRITER_BATCH: usize = 1 << 12;

impl<'s> TextWriter<'s> {
    /// Takes `texts`' store, which holds no text yet (only the room made for them), to a
    /// writing thread; None (the texts are then written in line) when there are texts
    /// already or no thread can be had.
    fn start<'e: 's>(
        scope: &'s std::thread::Scope<'s, 'e>,
        own_texts: &'e OwnTexts<'e>,
        texts: &mut FrameTexts,
    ) -> Option<TextWriter<'s>> {
        if texts.count() > 0 {
            return None;
        }
        let mut store = texts.take_store();
        let (send, frames) = std::sync::mpsc::sync_channel::<Vec<u32>>(8);
        let written = std::thread::Builder::new()
            .name("whose-texts".into())
            .spawn_scoped(scope, move || {
                for batch in frames {
                    for f in batch {
                        own_texts.write(FrameId(f), &mut store.0);
                        store.1.push(store.0.len());
                    }
                }
                store
            })
            .ok()?;
        Some(TextWriter {
            batch: Vec::with_capacity(WRITER_BATCH),
            send,
            written,
        })
    }

    /// Hands out the id of a new text, to be made of frame `f`.
    fn hand_out(&mut self, texts: &mut FrameTexts, owner: OwnerId, f: FrameId) -> u32 {
        let id = texts.hand_out(owner);
        self.batch.push(f.0);
        if self.batch.len() == WRITER_BATCH {
            let full = std::mem::replace(&mut self.batch, Vec::with_capacity(WRITER_BATCH));
            // the writer stops only when this end is dropped
            let _ = self.send.send(full);
        }
        id
    }

    /// Waits for every text to be written and puts the store back into `texts`.
    fn finish(self, texts: &mut FrameTexts) {
        let TextWriter {
            batch,
            send,
            written,
        } = self;
        let _ = send.send(batch);
        drop(send);
        match written.join() {
            Ok(store) => texts.put_store(store),
            Err(panic) => std::panic::resume_unwind(panic),
        }
    }
}

struct Builder<'a> {
    profile: &'a Profile,
    rules: &'a RuleSet,
    classes: &'a Classification,
    options: &'a FlameOptions,
    walk: StackWalk<'a>,
    /// Frame → the first frame of its own-colour text ([`own_text_groups`]).
    groups: Vec<u32>,
    own_texts: &'a OwnTexts<'a>,
    /// Writes the new own-colour texts on another core, until a lookup needs them.
    writer: Option<TextWriter<'a>>,
    /// First frame of a text → the id of its text coloured by its own owner (`u32::MAX`: not
    /// seen yet): one slot per frame costs less than a map's entry, and most frames are in
    /// samples their owner owns.
    by_frame: Vec<u32>,
    /// (frame, sample owner) → its text's id, when colouring by the sample's owner and that
    /// is not the frame's own.
    by_frame_and_owner: FxHashMap<(FrameId, OwnerId), u32>,
    /// Sample owner → its `[owner: NAME]` text.
    roots: FxHashMap<OwnerId, u32>,
    /// Sample owner → the text standing in for a stack without frames.
    no_frames: FxHashMap<OwnerId, u32>,
    /// Where a frame's text is written before it is interned.
    text: String,
}

impl Builder<'_> {
    /// Appends the line of `stack` to `out`.
    fn stack(&mut self, stack: StackId, weight: u128, out: &mut FlameLines) {
        // the frames the owners are read from are the frames drawn (the allocated-class
        // leaf left out unless types are frames, as the facts were built)
        let frames = self.walk.owned_frames(stack);
        let owner = self.walk.walk(frames).0.owner;
        let start = out.frames.len();
        if self.options.owner_root {
            let id = self.root(owner, &mut out.texts);
            out.frames.push(id);
        }
        for &f in frames.iter().rev() {
            let id = self.frame(f, owner, &mut out.texts);
            out.frames.push(id);
        }
        if out.frames.len() == start {
            // A sample without frames still has weight; keep it visible under a name.
            let id = self.no_frames(owner, &mut out.texts);
            out.frames.push(id);
        }
        out.push_stack(start, owner, weight);
    }

    /// The text standing in for an empty stack, coloured by its owner.
    fn no_frames(&mut self, owner: OwnerId, texts: &mut FrameTexts) -> u32 {
        if let Some(&id) = self.no_frames.get(&owner) {
            return id;
        }
        let text = match self.options.annotate {
            None => crate::model::NO_FRAMES.to_string(),
            Some(_) => format!(
                "{} [{}]",
                crate::model::NO_FRAMES,
                folded_name(&self.rules.owner(owner).name)
            ),
        };
        self.settle(texts);
        let id = texts.intern(&text, owner);
        self.no_frames.insert(owner, id);
        id
    }

    fn root(&mut self, owner: OwnerId, texts: &mut FrameTexts) -> u32 {
        if let Some(&id) = self.roots.get(&owner) {
            return id;
        }
        self.settle(texts);
        let id = texts.intern(&owner_root_frame(&self.rules.owner(owner).name), owner);
        self.roots.insert(owner, id);
        id
    }

    /// The text of frame `f` in a sample `sample_owner` owns, interned.
    fn frame(&mut self, f: FrameId, sample_owner: OwnerId, texts: &mut FrameTexts) -> u32 {
        let own = self.classes.owner_of(f);
        let color_owner = match self.options.annotate {
            Some(ColorBy::Sample) => sample_owner,
            _ => own,
        };
        if color_owner == own {
            return self.own_text(f, own, texts);
        }
        if let Some(&id) = self.by_frame_and_owner.get(&(f, color_owner)) {
            return id;
        }
        let mut text = std::mem::take(&mut self.text);
        text.clear();
        text.push_str(&folded_name(&self.profile.frame(f).name));
        let owner_name = |o: OwnerId| folded_name(&self.rules.owner(o).name);
        let (from, to) = (owner_name(own), owner_name(sample_owner));
        for part in [" [", &from, " → ", &to, "]"] {
            text.push_str(part);
        }
        self.settle(texts);
        let id = texts.intern(&text, color_owner);
        self.text = text;
        self.by_frame_and_owner.insert((f, color_owner), id);
        id
    }

    /// The text of frame `f` coloured by its own owner `own`: one per group of frames of
    /// that text, pushed without a lookup when it is new ([`own_text_groups`]).
    fn own_text(&mut self, f: FrameId, own: OwnerId, texts: &mut FrameTexts) -> u32 {
        let slot = self.groups[f.0 as usize] as usize;
        if self.by_frame[slot] != u32::MAX {
            return self.by_frame[slot];
        }
        let id = match &mut self.writer {
            Some(writer) => writer.hand_out(texts, own, f),
            // written straight into the store: a new frame costs no allocation or copy of its own
            None => texts.push_distinct(own, |text| self.own_texts.write(f, text)),
        };
        self.by_frame[slot] = id;
        id
    }

    /// Stops the text writer, if it runs, with every text it was sent written: before a
    /// lookup among the texts, and at the end.
    fn settle(&mut self, texts: &mut FrameTexts) {
        if let Some(writer) = self.writer.take() {
            writer.finish(texts);
        }
    }
}

/// The text of a frame coloured by its own owner: its name, annotated with that owner unless
/// names stay bare. (A frame in a sample its own owner owns, with colour by sample owner,
/// reads the same.) Each owner's ` [NAME]` is made once: a million frame texts were a
/// million owner names searched and copied in three pieces.
struct OwnTexts<'a> {
    profile: &'a Profile,
    classes: &'a Classification,
    /// By `OwnerId`: what follows a frame's name (nothing when names stay bare).
    suffixes: Vec<String>,
}

impl<'a> OwnTexts<'a> {
    fn new(
        profile: &'a Profile,
        rules: &RuleSet,
        classes: &'a Classification,
        options: &FlameOptions,
    ) -> OwnTexts<'a> {
        let suffix = |name: &str| match options.annotate {
            Some(_) => format!(" [{}]", folded_name(name)),
            None => String::new(),
        };
        OwnTexts {
            profile,
            classes,
            suffixes: rules.owners().iter().map(|o| suffix(&o.name)).collect(),
        }
    }

    /// Appends the text of frame `f` to `text`.
    fn write(&self, f: FrameId, text: &mut String) {
        text.push_str(&folded_name(&self.profile.frame(f).name));
        text.push_str(&self.suffixes[self.classes.owner_of(f).0 as usize]);
    }
}

/// For every frame, the first frame (by id) of the same own-colour text
/// ([`OwnTexts`]): frames of one text share its id, found without a lookup per frame
/// in a map of every text. Texts are hashed on every core and grouped by sorting the hashes.
fn own_text_groups(profile: &Profile, own_texts: &OwnTexts<'_>) -> Vec<u32> {
    use rayon::prelude::*;
    let write = |f: FrameId, text: &mut String| {
        text.clear();
        own_texts.write(f, text);
    };
    let hashed = |text: &mut String, f: u32| {
        write(FrameId(f), text);
        super::heaviest::hash32(FxBuildHasher.hash_one(text.as_str()))
    };
    let count = profile.frame_count();
    let hashes: Vec<u32> = if count >= super::walk::PARALLEL_GROUPING {
        (0..count as u32)
            .into_par_iter()
            .map_init(String::new, hashed)
            .collect()
    } else {
        let mut text = String::new();
        (0..count as u32).map(|f| hashed(&mut text, f)).collect()
    };
    super::heaviest::first_of_each_key(super::heaviest::KeyHashes::OfEveryFrame(hashes), |f| {
        let mut text = String::new();
        write(f, &mut text);
        text
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classify::RuleOptions;
    use crate::model::cases::temp_file;
    use crate::model::{Frame, FrameKind, SampleType};

    /// `main → app.handle → lib.parse → malloc`, and `main → app.idle`.
    fn profile() -> (Profile, RuleSet, Classification) {
        let mut p = Profile::new(vec![SampleType::samples()]);
        let f = |p: &mut Profile, n: &str| p.intern_frame(Frame::named(n, FrameKind::Native));
        let (main, handle, parse, malloc, idle) = (
            f(&mut p, "main"),
            f(&mut p, "app.handle"),
            f(&mut p, "lib.parse;x"),
            f(&mut p, "malloc"),
            f(&mut p, "app.idle"),
        );
        let s1 = p.intern_stack(&[malloc, parse, handle, main]);
        let s2 = p.intern_stack(&[idle, main]);
        let t = p.intern_thread("t1");
        p.add_sample(s1, None, &[3]);
        p.add_sample(s1, Some(t), &[2]);
        p.add_sample(s2, None, &[4]);
        let (_dir, rules_path) = temp_file(
            "r.toml",
            "[[owner]]\nname = \"app\"\ncategory = \"user\"\nprefix = [\"app.\"]\n\
             [[owner]]\nname = \"lib\"\ncategory = \"library\"\nprefix = [\"lib.\"]\n\
             [[owner]]\nname = \"libc\"\ncategory = \"allocator\"\nprefix = [\"malloc\"]\n",
        );
        let options = RuleOptions {
            rule_files: vec![rules_path],
            no_presets: true,
            ..RuleOptions::default()
        };
        let rules = RuleSet::build(&options, std::slice::from_ref(&p)).unwrap();
        let classes = rules.classify(&p);
        (p, rules, classes)
    }

    /// The lines of `p` annotated as `annotate` says.
    fn annotated(
        p: &Profile,
        rules: &RuleSet,
        classes: &Classification,
        annotate: ColorBy,
    ) -> FlameLines {
        let options = FlameOptions {
            annotate: Some(annotate),
            ..FlameOptions::default()
        };
        flame_lines(p, rules, classes, &options)
    }

    /// Every distinct frame text and the owner whose colour it takes.
    fn text_owners(lines: &FlameLines) -> Vec<(String, OwnerId)> {
        (0..lines.texts.count() as u32)
            .map(|t| (lines.texts.text(t).to_string(), lines.texts.owner(t)))
            .collect()
    }

    fn sorted(lines: &FlameLines, owner: Option<OwnerId>) -> Vec<String> {
        let mut v: Vec<String> = lines.lines(owner).collect();
        v.sort();
        v
    }

    #[test]
    fn annotates_frames_with_their_owner_root_first() {
        let (p, rules, classes) = profile();
        let lines = annotated(&p, &rules, &classes, ColorBy::Frame);
        assert_eq!(lines.total, 9);
        assert_eq!(
            sorted(&lines, None),
            [
                "main [unclassified];app.handle [app];lib.parse,x [lib];malloc [libc] 5",
                "main [unclassified];app.idle [app] 4",
            ]
        );
        let owner_of = |t: &str| {
            let owners = text_owners(&lines);
            let (_, o) = owners.iter().find(|(x, _)| x == t).unwrap();
            rules.owner(*o).name.clone()
        };
        assert_eq!(owner_of("malloc [libc]"), "libc");
        assert_eq!(owner_of("main [unclassified]"), "unclassified");
    }

    #[test]
    fn frames_of_one_text_share_its_id_without_a_lookup() {
        let (mut p, rules, _) = profile();
        // more frames of texts there are: `lib.parse,x [lib]` in another module and from a
        // name that folds to it (`,` for `;`), and `app.idle [app]` of another kind
        let mut in_module = Frame::named("lib.parse;x", FrameKind::Native);
        in_module.module = Some("liblib.so".into());
        let in_module = p.intern_frame(in_module);
        let comma = p.intern_frame(Frame::named("lib.parse,x", FrameKind::Native));
        let kernel = p.intern_frame(Frame::named("app.idle", FrameKind::Kernel));
        let main = p.intern_frame(Frame::named("main", FrameKind::Native));
        for leaf in [in_module, comma, kernel] {
            let stack = p.intern_stack(&[leaf, main]);
            p.add_sample(stack, None, &[1]);
        }
        let classes = rules.classify(&p);
        let lines = annotated(&p, &rules, &classes, ColorBy::Frame);
        let texts: Vec<String> = text_owners(&lines).into_iter().map(|(t, _)| t).collect();
        let mut distinct = texts.clone();
        distinct.sort();
        distinct.dedup();
        assert_eq!(texts.len(), distinct.len(), "a text twice: {texts:?}");
        assert_eq!(texts.len(), 5, "{texts:?}");
        assert_eq!(
            sorted(&lines, None),
            [
                "main [unclassified];app.handle [app];lib.parse,x [lib];malloc [libc] 5",
                "main [unclassified];app.idle [app] 1",
                "main [unclassified];app.idle [app] 4",
                "main [unclassified];lib.parse,x [lib] 1",
                "main [unclassified];lib.parse,x [lib] 1",
            ]
        );
    }

    #[test]
    fn texts_pushed_as_distinct_are_found_once_a_lookup_builds_the_index() {
        let mut texts = FrameTexts::default();
        let (a, b) = (OwnerId(1), OwnerId(2));
        assert_eq!(texts.push_distinct(a, |t| t.push_str("x [a]")), 0);
        assert_eq!(texts.push_distinct(a, |t| t.push_str("y [a]")), 1);
        assert_eq!(texts.intern("y [a]", b), 1, "found, with its first owner");
        assert_eq!(texts.owner(1), a);
        assert_eq!(texts.intern("z [a → b]", b), 2);
        // once looked up, a text pushed as distinct is looked up too
        assert_eq!(texts.push_distinct(a, |t| t.push_str("z [a → b]")), 2);
        assert_eq!(texts.push_distinct(b, |t| t.push_str("w [b]")), 3);
        assert_eq!(texts.intern("w [b]", a), 3);
        assert_eq!(texts.count(), 4);
    }

    #[test]
    fn the_owners_all_lines_show_are_those_of_every_text() {
        let (p, rules, classes) = profile();
        for color_by in [ColorBy::Frame, ColorBy::Sample] {
            let lines = annotated(&p, &rules, &classes, color_by);
            let mut walked: Vec<OwnerId> = lines
                .stacks
                .iter()
                .flat_map(|s| lines.frames(s).iter().map(|&t| lines.texts.owner(t)))
                .collect();
            walked.sort();
            walked.dedup();
            assert!(walked.len() >= 2, "{walked:?}");
            assert_eq!(lines.color_owners(None), walked, "{color_by:?}");
        }
    }

    #[test]
    fn colour_by_sample_owner_keys_frames_by_both_owners() {
        let (p, rules, classes) = profile();
        let lines = annotated(&p, &rules, &classes, ColorBy::Sample);
        // malloc is transparent, so `lib` owns the first stack; `app` owns the second.
        assert_eq!(
            sorted(&lines, None),
            [
                "main [unclassified → app];app.idle [app] 4",
                "main [unclassified → lib];app.handle [app → lib];lib.parse,x [lib];malloc [libc → lib] 5",
            ]
        );
        assert!(
            text_owners(&lines)
                .iter()
                .filter(|(t, _)| t.contains(" → lib]") || t == "lib.parse,x [lib]")
                .all(|(_, o)| rules.owner(*o).name == "lib")
        );
    }

    #[test]
    fn texts_written_on_another_core_are_the_texts_written_in_line() {
        // more new texts than a batch, an empty stack after the first (a lookup stops the writer
        // there), colours by frame, by sample owner (lookups from the first stack on), bare
        let (mut p, rules, _) = profile();
        let main = p.intern_frame(Frame::named("main", FrameKind::Native));
        let bytes = p.intern_frame(Frame::named("byte[]", FrameKind::AllocType));
        for i in 0..(WRITER_BATCH + 900) as u32 {
            let prefix = ["app.", "lib.", "malloc", "other."][i as usize % 4];
            let leaf = p.intern_frame(Frame::named(
                format!("{prefix}f{}", i % 4800),
                FrameKind::Native,
            ));
            let stack = p.intern_stack(&[leaf, main]);
            p.add_sample(stack, None, &[1 + u128::from(i % 7)]);
            if i == WRITER_BATCH as u32 + 500 {
                let empty = p.intern_stack(&[bytes]);
                p.add_sample(empty, None, &[2]);
            }
        }
        let classes = rules.classify(&p);
        for annotate in [Some(ColorBy::Frame), Some(ColorBy::Sample), None] {
            for owner_root in [false, true] {
                let options = FlameOptions {
                    annotate,
                    owner_root,
                    ..FlameOptions::default()
                };
                let written = |from| {
                    let lines = lines_of(&p, &rules, &classes, &options, from);
                    (lines.lines(None).collect::<Vec<_>>(), text_owners(&lines))
                };
                let (beside, in_line) = (written(0), written(usize::MAX));
                assert!(in_line.1.len() > WRITER_BATCH, "{}", in_line.1.len());
                assert_eq!(beside, in_line, "{annotate:?} {owner_root}");
            }
        }
    }

    #[test]
    fn allocated_types_are_left_out_and_an_empty_stack_keeps_a_name() {
        let (mut p, rules, _) = profile();
        let main = p.intern_frame(Frame::named("main", FrameKind::Native));
        let bytes = p.intern_frame(Frame::named("byte[]", FrameKind::AllocType));
        let typed = p.intern_stack(&[bytes, main]);
        let only_type = p.intern_stack(&[bytes]);
        p.add_sample(typed, None, &[6]);
        p.add_sample(only_type, None, &[1]);
        let classes = rules.classify(&p);
        let annotate = Some(ColorBy::Frame);
        let lines = flame_lines(
            &p,
            &rules,
            &classes,
            &FlameOptions {
                annotate,
                ..FlameOptions::default()
            },
        );
        let all = sorted(&lines, None);
        assert!(
            all.contains(&"main [unclassified] 6".to_string()),
            "{all:?}"
        );
        assert!(
            all.contains(&"[no frames] [unsymbolized] 1".to_string()),
            "{all:?}"
        );
        assert!(
            text_owners(&lines)
                .iter()
                .any(|(t, o)| t == "[no frames] [unsymbolized]"
                    && rules.owner(*o).name == "unsymbolized")
        );
        let with_types = flame_lines(
            &p,
            &rules,
            &classes,
            &FlameOptions {
                annotate,
                types_as_frames: true,
                ..FlameOptions::default()
            },
        );
        let all = sorted(&with_types, None);
        assert!(
            all.contains(&"main [unclassified];byte[] [unclassified] 6".to_string()),
            "{all:?}"
        );
    }

    #[test]
    fn owner_root_and_owner_filter_partition_the_total() {
        let (p, rules, classes) = profile();
        let options = FlameOptions {
            owner_root: true,
            ..FlameOptions::default()
        };
        let lines = flame_lines(&p, &rules, &classes, &options);
        assert_eq!(
            sorted(&lines, None),
            [
                "[owner: app];main;app.idle 4",
                "[owner: lib];main;app.handle;lib.parse,x;malloc 5",
            ]
        );
        let lib = rules.owner_id("lib");
        let app = rules.owner_id("app");
        assert_eq!(lines.total_of(lib), 5);
        assert_eq!(lines.total_of(app), 4);
        assert_eq!(
            sorted(&lines, app),
            ["[owner: app];main;app.idle 4".to_string()]
        );
        let mut out = Vec::new();
        lines.write_folded(None, &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "[owner: app];main;app.idle 4\n[owner: lib];main;app.handle;lib.parse,x;malloc 5\n"
        );
    }
}
