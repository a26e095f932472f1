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
//! The sample's owner is decided by the very code the report uses ([`super::FactCache`]),
//! so a flame graph split by owner adds up to exactly the report's owner view.
//!
//! Lines are built once per distinct stack (threads merged) and each distinct frame text once.

use super::FactCache;
use crate::classify::{Classification, RuleSet};
use crate::model::{FrameId, FrameKind, OwnerId, Profile, StackId};
use rustc_hash::FxHashMap;
use std::io::Write;

/// Which owner a frame's colour (and annotation) follows; also the values of `--color-by`,
/// named by the view they follow (`self`, `owner`; the variant docs stay out of `--help`).
///
/// The default is the owner view, whose's headline number: each sample's stack is one colour,
/// so the width a colour covers is that owner's owner-view share, which is the number the
/// legend shows and what inferno's search for the owner reports as "Matched".
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ColorBy {
    /// The frame's own owner, from the rules.
    #[value(name = "self", help = None::<&str>)]
    Frame,
    /// The owner of the sample the frame is part of (owner view).
    #[default]
    #[value(name = "owner", help = None::<&str>)]
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

/// One distinct stack: where its folded line is in [`FlameLines::text`], its weight and owner.
#[derive(Debug, Clone, Copy)]
pub struct FlameStack {
    /// Byte range of `root;…;leaf weight` in [`FlameLines::text`].
    pub start: usize,
    pub end: usize,
    pub weight: u128,
    /// The sample's owner (owner view).
    pub owner: OwnerId,
    /// Range in [`FlameLines::stack_colors`] of the owners this line's frames are coloured by.
    colors: (u32, u32),
}

/// Every distinct stack of one profile as folded lines, and the owner each frame text's
/// colour follows.
///
/// The lines live in one buffer: a large profile has hundreds of thousands of distinct
/// stacks, and one allocation per line cost more (allocating, faulting pages in, freeing)
/// than building the lines did.
#[derive(Debug, Clone, Default)]
pub struct FlameLines {
    /// Every line, one after the other (no separators; see [`FlameStack`]'s range).
    pub text: String,
    /// In stack order of the profile (flame graph tools sort them themselves).
    pub stacks: Vec<FlameStack>,
    /// Each distinct frame text and the owner whose colour it takes.
    pub frame_owners: Vec<(String, OwnerId)>,
    /// The distinct colour owners of each line, back to back (ranges in [`FlameStack`]).
    stack_colors: Vec<OwnerId>,
    pub total: u128,
}

impl FlameLines {
    /// The folded line of one stack, `root;…;leaf weight`.
    pub fn line(&self, stack: &FlameStack) -> &str {
        &self.text[stack.start..stack.end]
    }

    /// The lines, all or only those of samples `owner` owns (owner view).
    pub fn lines(&self, owner: Option<OwnerId>) -> impl Iterator<Item = &str> {
        self.stacks
            .iter()
            .filter(move |s| owner.is_none_or(|o| s.owner == o))
            .map(|s| self.line(s))
    }

    /// The owners whose colours the lines of `owner` (or all lines) show: what a legend of
    /// that graph needs to list.
    pub fn color_owners(&self, owner: Option<OwnerId>) -> Vec<OwnerId> {
        let mut out: Vec<OwnerId> = Vec::new();
        for s in self
            .stacks
            .iter()
            .filter(|s| owner.is_none_or(|o| s.owner == o))
        {
            for o in &self.stack_colors[s.colors.0 as usize..s.colors.1 as usize] {
                if !out.contains(o) {
                    out.push(*o);
                }
            }
        }
        out.sort();
        out
    }

    /// Total weight of the samples `owner` owns (or of all).
    #[cfg(test)]
    pub fn total_of(&self, owner: Option<OwnerId>) -> u128 {
        self.stacks
            .iter()
            .filter(|s| owner.is_none_or(|o| s.owner == o))
            .map(|s| s.weight)
            .sum()
    }

    /// Appends the lines of another profile drawn with the same rules: `flame A B C` draws
    /// their sum (inferno adds up equal stacks). Frame texts carry their owner, so a text
    /// seen in both takes the same colour; it is listed once.
    pub fn append(&mut self, other: FlameLines) {
        let offset = self.text.len();
        let colors_offset = self.stack_colors.len() as u32;
        self.text.push_str(&other.text);
        self.stacks
            .extend(other.stacks.into_iter().map(|s| FlameStack {
                start: s.start + offset,
                end: s.end + offset,
                colors: (s.colors.0 + colors_offset, s.colors.1 + colors_offset),
                ..s
            }));
        self.stack_colors.extend(other.stack_colors);
        let known: rustc_hash::FxHashSet<String> =
            self.frame_owners.iter().map(|(t, _)| t.clone()).collect();
        self.frame_owners.extend(
            other
                .frame_owners
                .into_iter()
                .filter(|(t, _)| !known.contains(t)),
        );
        self.total = self.total.saturating_add(other.total);
    }

    /// Writes the lines as folded text, sorted, equal stack texts summed (stacks that differ
    /// only by line numbers or modules read the same), as inferno's collapsers do. Returns
    /// the number of lines written.
    pub fn write_folded(
        &self,
        owner: Option<OwnerId>,
        out: &mut dyn Write,
    ) -> std::io::Result<usize> {
        let mut summed: FxHashMap<&str, u128> = FxHashMap::default();
        for s in self
            .stacks
            .iter()
            .filter(|s| owner.is_none_or(|o| s.owner == o))
        {
            let line = self.line(s);
            let text = line.rsplit_once(' ').map_or(line, |(text, _)| text);
            *summed.entry(text).or_default() += s.weight;
        }
        let mut lines: Vec<(&str, u128)> = summed.into_iter().collect();
        lines.sort_unstable();
        for (text, weight) in &lines {
            writeln!(out, "{text} {weight}")?;
        }
        Ok(lines.len())
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
    let mut weights = vec![0u128; profile.stack_count()];
    for row in profile.rows() {
        let w = &mut weights[row.stack.0 as usize];
        *w = w.saturating_add(row.values[options.metric]);
    }
    let mut builder = Builder {
        profile,
        rules,
        classes,
        options,
        // each stack once: nothing to keep
        facts: FactCache::new(profile, rules, classes, options.types_as_frames, Vec::new()),
        texts: FxHashMap::default(),
        frame_owners: Vec::new(),
        roots: FxHashMap::default(),
    };
    let mut out = FlameLines::default();
    for (i, &w) in weights.iter().enumerate() {
        if w == 0 {
            continue;
        }
        let stack = builder.stack(StackId(i as u32), w, &mut out);
        out.stacks.push(stack);
        out.total = out.total.saturating_add(w);
    }
    out.frame_owners = builder.frame_owners;
    out
}

struct Builder<'a> {
    profile: &'a Profile,
    rules: &'a RuleSet,
    classes: &'a Classification,
    options: &'a FlameOptions,
    facts: FactCache<'a>,
    /// (frame, owner the colour follows) → index into `frame_owners`.
    texts: FxHashMap<(FrameId, OwnerId), u32>,
    frame_owners: Vec<(String, OwnerId)>,
    /// Sample owner → index of its `[owner: NAME]` text in `frame_owners`.
    roots: FxHashMap<OwnerId, u32>,
}

impl Builder<'_> {
    /// Appends the folded line of `stack` to `text`.
    fn stack(&mut self, stack: StackId, weight: u128, out: &mut FlameLines) -> FlameStack {
        let color_start = out.stack_colors.len();
        let text = &mut out.text;
        let colors = &mut out.stack_colors;
        let mut color = |o: OwnerId| {
            if !colors[color_start..].contains(&o) {
                colors.push(o);
            }
        };
        let owner = self.facts.get(stack).owner;
        let mut frames = self.profile.stack(stack);
        if !self.options.types_as_frames {
            let types = frames
                .iter()
                .take_while(|&&f| self.profile.frame(f).kind == FrameKind::AllocType)
                .count();
            frames = &frames[types..];
        }
        let start = text.len();
        if self.options.owner_root {
            let i = self.root(owner);
            text.push_str(&self.frame_owners[i as usize].0);
            color(self.frame_owners[i as usize].1);
        }
        for &f in frames.iter().rev() {
            if text.len() > start {
                text.push(';');
            }
            let i = self.frame(f, owner);
            text.push_str(&self.frame_owners[i as usize].0);
            color(self.frame_owners[i as usize].1);
        }
        if text.len() == start {
            // A sample without frames still has weight; keep it visible under a name.
            let i = self.no_frames(owner);
            text.push_str(&self.frame_owners[i as usize].0);
            color(self.frame_owners[i as usize].1);
        }
        use std::fmt::Write as _;
        let _ = write!(text, " {weight}");
        FlameStack {
            start,
            end: text.len(),
            weight,
            owner,
            colors: (color_start as u32, colors.len() as u32),
        }
    }

    /// The text standing in for an empty stack, coloured by its owner.
    fn no_frames(&mut self, owner: OwnerId) -> u32 {
        let text = match self.options.annotate {
            None => crate::input::folded::NO_FRAMES.to_string(),
            Some(_) => format!(
                "{} [{}]",
                crate::input::folded::NO_FRAMES,
                folded_name(&self.rules.owner(owner).name)
            ),
        };
        if let Some(i) = self.frame_owners.iter().position(|(t, _)| *t == text) {
            return i as u32;
        }
        self.frame_owners.push((text, owner));
        self.frame_owners.len() as u32 - 1
    }

    fn root(&mut self, owner: OwnerId) -> u32 {
        if let Some(&i) = self.roots.get(&owner) {
            return i;
        }
        let text = owner_root_frame(&self.rules.owner(owner).name);
        let i = self.frame_owners.len() as u32;
        self.frame_owners.push((text, owner));
        self.roots.insert(owner, i);
        i
    }

    /// The text of frame `f` in a sample `sample_owner` owns, interned.
    fn frame(&mut self, f: FrameId, sample_owner: OwnerId) -> u32 {
        let own = self.classes.owner_of(f);
        let color_owner = match self.options.annotate {
            Some(ColorBy::Sample) => sample_owner,
            _ => own,
        };
        if let Some(&i) = self.texts.get(&(f, color_owner)) {
            return i;
        }
        let name = folded_name(&self.profile.frame(f).name);
        let owner_name = |o: OwnerId| folded_name(&self.rules.owner(o).name).into_owned();
        let text = match self.options.annotate {
            None => name.into_owned(),
            Some(ColorBy::Sample) if own != sample_owner => {
                format!(
                    "{name} [{} → {}]",
                    owner_name(own),
                    owner_name(sample_owner)
                )
            }
            Some(_) => format!("{name} [{}]", owner_name(own)),
        };
        let i = self.frame_owners.len() as u32;
        self.frame_owners.push((text, color_owner));
        self.texts.insert((f, color_owner), i);
        i
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classify::RuleOptions;
    use crate::model::{Frame, SampleType};

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
        let dir = tempfile::tempdir().unwrap();
        let rules_path = dir.path().join("r.toml");
        std::fs::write(
            &rules_path,
            "[[owner]]\nname = \"app\"\ncategory = \"user\"\nprefix = [\"app.\"]\n\
             [[owner]]\nname = \"lib\"\ncategory = \"library\"\nprefix = [\"lib.\"]\n\
             [[owner]]\nname = \"libc\"\ncategory = \"allocator\"\nprefix = [\"malloc\"]\n",
        )
        .unwrap();
        let options = RuleOptions {
            rule_files: vec![rules_path],
            no_presets: true,
            ..RuleOptions::default()
        };
        let rules = RuleSet::build(&options, std::slice::from_ref(&p)).unwrap();
        let classes = rules.classify(&p);
        (p, rules, classes)
    }

    fn sorted(lines: &FlameLines, owner: Option<OwnerId>) -> Vec<String> {
        let mut v: Vec<String> = lines.lines(owner).map(str::to_string).collect();
        v.sort();
        v
    }

    #[test]
    fn annotates_frames_with_their_owner_root_first() {
        let (p, rules, classes) = profile();
        let options = FlameOptions {
            annotate: Some(ColorBy::Frame),
            ..FlameOptions::default()
        };
        let lines = flame_lines(&p, &rules, &classes, &options);
        assert_eq!(lines.total, 9);
        assert_eq!(
            sorted(&lines, None),
            [
                "main [unclassified];app.handle [app];lib.parse,x [lib];malloc [libc] 5",
                "main [unclassified];app.idle [app] 4",
            ]
        );
        let owner_of = |t: &str| {
            let (_, o) = lines.frame_owners.iter().find(|(x, _)| x == t).unwrap();
            rules.owner(*o).name.clone()
        };
        assert_eq!(owner_of("malloc [libc]"), "libc");
        assert_eq!(owner_of("main [unclassified]"), "unclassified");
    }

    #[test]
    fn colour_by_sample_owner_keys_frames_by_both_owners() {
        let (p, rules, classes) = profile();
        let options = FlameOptions {
            annotate: Some(ColorBy::Sample),
            ..FlameOptions::default()
        };
        let lines = flame_lines(&p, &rules, &classes, &options);
        // malloc is transparent, so `lib` owns the first stack; `app` owns the second.
        assert_eq!(
            sorted(&lines, None),
            [
                "main [unclassified → app];app.idle [app] 4",
                "main [unclassified → lib];app.handle [app → lib];lib.parse,x [lib];malloc [libc → lib] 5",
            ]
        );
        assert!(
            lines
                .frame_owners
                .iter()
                .filter(|(t, _)| t.contains(" → lib]") || t == "lib.parse,x [lib]")
                .all(|(_, o)| rules.owner(*o).name == "lib")
        );
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
            lines
                .frame_owners
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
