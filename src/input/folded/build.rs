//! The building half of the folded reader: the splitting half's batches ([`super::split`])
//! interned into the profile, then the file-wide decisions (decimal counts, process-name
//! roots) and the verdict on its bad lines.

use super::split::{Batch, LineStack, NewFrame, ParsedStack, Tally, text};
use super::{Count, looks_like_process_name, starts_a_process};
use crate::error::{Error, Position, Result};
use crate::input::options::InputFormat;
use crate::model::{FrameId, Notice, Profile, SampleType, StackId, ThreadId, Unit, Utf8Place};
use rustc_hash::{FxHashMap, FxHashSet};
use std::path::PathBuf;

/// A batch's made frames, taken in order, each a few frames after its index slot was
/// prefetched.
struct MadeFrames<'b> {
    frames: &'b mut [NewFrame],
    next: usize,
}

impl MadeFrames<'_> {
    /// How many frames ahead a slot is fetched: enough to cover a miss to memory at the tens
    /// of nanoseconds a frame takes.
    const AHEAD: usize = 8;

    fn next(&mut self, profile: &Profile) -> NewFrame {
        if let Some(NewFrame::Made { hash, .. }) = self.frames.get(self.next + Self::AHEAD) {
            profile.prefetch_frame(*hash);
        }
        let frame = std::mem::replace(&mut self.frames[self.next], NewFrame::Seen(0));
        self.next += 1;
        frame
    }
}

pub(super) struct Builder {
    path: PathBuf,
    format: InputFormat,
    profile: Profile,
    /// The stack and thread of each stack text the splitting half's line cache kept, by its
    /// id there.
    stack_texts: Vec<(StackId, Option<ThreadId>)>,
    /// The frame of each frame text its frame cache kept, by its id there.
    frame_texts: Vec<FrameId>,
    /// The frames of the last parsed line, root first, for the ones the next line shares.
    previous: Vec<FrameId>,
    frame_buf: Vec<FrameId>,
    /// Decimal places of the counts so far: every weight is stored times 10^this, so that
    /// fractional counts (`12.5`) are summed exactly.
    decimals: u32,
    /// The raw text of each root frame, for the process-name check at the end (the frame's
    /// name is normalised, the process name is wanted as written).
    root_texts: FxHashMap<FrameId, Box<str>>,
    /// `--keep-process-root`: a process-name root stays a frame.
    keep_process_root: bool,
}

impl Builder {
    pub fn new(path: PathBuf, format: InputFormat, unit: Unit, keep_process_root: bool) -> Self {
        let type_name = match unit {
            Unit::Count => "samples".to_string(),
            ref u => u.name().to_string(),
        };
        Builder {
            path,
            format,
            profile: Profile::new(vec![SampleType::new(type_name, unit)]),
            stack_texts: Vec::new(),
            frame_texts: Vec::new(),
            previous: Vec::new(),
            frame_buf: Vec::new(),
            decimals: 0,
            root_texts: FxHashMap::default(),
            keep_process_root,
        }
    }

    /// Adds a batch's lines to the profile; its frames are moved out.
    pub fn take(&mut self, batch: &mut Batch) {
        let Batch {
            lines,
            frames,
            texts,
        } = batch;
        let mut made = MadeFrames { frames, next: 0 };
        for line in lines.iter() {
            let weight = self.scaled(line.count);
            let (stack, thread) = match &line.stack {
                LineStack::Seen(id) => self.stack_texts[*id as usize],
                LineStack::Parsed(parsed) => self.build_stack(parsed, &mut made, texts),
            };
            self.profile.add_sample(stack, thread, &[weight]);
        }
        frames.clear();
    }

    /// The weight of a count at the profile's scale; a count with more decimal places than
    /// any before rescales what was read so far (at most [`super::MAX_DECIMALS`] times a
    /// file).
    fn scaled(&mut self, count: Count) -> u128 {
        if count.decimals > self.decimals {
            let factor = 10u128.pow(count.decimals - self.decimals);
            self.decimals = count.decimals;
            self.profile.scale_weights(factor);
        }
        count.value as u128 * 10u128.pow(self.decimals - count.decimals)
    }

    /// The stack and thread of a parsed line, its new frames taken from `made`.
    fn build_stack(
        &mut self,
        parsed: &ParsedStack,
        made: &mut MadeFrames,
        texts: &str,
    ) -> (StackId, Option<ThreadId>) {
        let profile = &mut self.profile;
        let thread = (parsed.thread.as_ref()).map(|name| profile.intern_thread(text(texts, name)));
        let frames_before = profile.frame_count();
        let ids = &mut self.previous;
        ids.truncate(parsed.shared as usize);
        let kept = ids.len();
        for _ in 0..parsed.new {
            ids.push(match made.next(profile) {
                NewFrame::Seen(text_id) => self.frame_texts[text_id as usize],
                NewFrame::Made {
                    frame,
                    hash,
                    text_id,
                } => {
                    let id = profile.intern_frame_hashed(hash, frame);
                    if text_id.is_some() {
                        debug_assert_eq!(text_id, Some(self.frame_texts.len() as u32));
                        self.frame_texts.push(id);
                    }
                    id
                }
            });
        }
        // made leaf first, kept root first
        ids[kept..].reverse();
        let frame_buf = &mut self.frame_buf;
        frame_buf.clear();
        frame_buf.extend(ids.iter().rev());
        if let Some(range) = &parsed.root_text
            && let Some(&root) = frame_buf.last()
        {
            (self.root_texts)
                .entry(root)
                .or_insert_with(|| text(texts, range).into());
        }
        // a frame first seen on this line is in no stack before it
        let stack = if frame_buf.iter().any(|f| f.0 as usize >= frames_before) {
            profile.push_new_stack(frame_buf)
        } else {
            profile.intern_stack(frame_buf)
        };
        if parsed.text_id.is_some() {
            debug_assert_eq!(parsed.text_id, Some(self.stack_texts.len() as u32));
            self.stack_texts.push((stack, thread));
        }
        (stack, thread)
    }

    /// Copies the profile into a new one with each root frame in `roots` taken out of its
    /// stacks and made the row's thread.
    fn rebuild(&mut self, roots: &FxHashMap<FrameId, Box<str>>) {
        let sample_types = self.profile.sample_types().to_vec();
        let old = std::mem::replace(&mut self.profile, Profile::new(sample_types));
        let new = &mut self.profile;
        new.default_sample_type = old.default_sample_type;
        new.meta = old.meta.clone();
        let frame_ids: Vec<Option<FrameId>> = (0..old.frame_count() as u32)
            .map(|i| {
                let id = FrameId(i);
                (!roots.contains_key(&id)).then(|| new.intern_frame(old.frame(id).clone()))
            })
            .collect();
        let mut frames = Vec::new();
        for row in old.rows() {
            let stack = old.stack(row.stack);
            let root_thread = stack.last().and_then(|root| roots.get(root));
            frames.clear();
            frames.extend(stack.iter().filter_map(|f| frame_ids[f.0 as usize]));
            let thread = match (root_thread, row.thread) {
                (Some(name), _) => Some(new.intern_thread(name)),
                (None, Some(t)) => Some(new.intern_thread(old.thread_name(t))),
                (None, None) => None,
            };
            let stack = new.intern_stack(&frames);
            new.add_sample(stack, thread, row.values);
        }
    }

    /// `stackcollapse-perf.pl` and inferno's collapse-perf put the process name at the root of
    /// every stack (`java;start_thread;...`). As a frame it would own every stack whose other
    /// frames are all transparent; it is the process, so it becomes the row's thread, as
    /// async-profiler's `-t` thread frames do. Decided once for the whole file, then applied
    /// to every stack alike (issue 28: `java;foo` kept `java` where `java;start_thread;foo`
    /// lost it, so a file with one truncated process's stacks kept every root): every root is
    /// a process-name text that starts no process itself, none appears anywhere but at a
    /// root, and some root is seen above a frame that starts a process or thread
    /// ([`starts_a_process`]), the mark of stackcollapse-perf's convention. The header says so;
    /// `--keep-process-root` keeps it a frame.
    fn take_process_roots(&mut self) {
        if self.format != InputFormat::Folded || self.root_texts.is_empty() {
            return;
        }
        let profile = &self.profile;
        // root frame → seen above a process or thread start
        let mut roots: FxHashMap<FrameId, bool> = FxHashMap::default();
        for row in profile.rows() {
            if row.thread.is_some() {
                return; // threads already given (async-profiler -t)
            }
            let stack = profile.stack(row.stack);
            let Some(&root) = stack.last() else { continue };
            let above_start =
                stack.len() >= 2 && starts_a_process(profile.frame(stack[stack.len() - 2]));
            *roots.entry(root).or_default() |= above_start;
        }
        let all_process_names = roots.keys().all(|root| {
            !starts_a_process(profile.frame(*root))
                && self
                    .root_texts
                    .get(root)
                    .is_some_and(|t| looks_like_process_name(t))
        });
        let convention = roots.values().any(|&above_start| above_start);
        if roots.is_empty() || !all_process_names || !convention {
            return;
        }
        let inside: FxHashSet<FrameId> = (0..profile.stack_count() as u32)
            .flat_map(|s| {
                let stack = profile.stack(StackId(s));
                &stack[..stack.len().saturating_sub(1)]
            })
            .copied()
            .filter(|f| roots.contains_key(f))
            .collect();
        if !inside.is_empty() {
            return;
        }
        let mut names: Vec<&str> = roots.keys().map(|r| &*self.root_texts[r]).collect();
        names.sort_unstable();
        let note = Notice::ProcessRoots {
            names: names.iter().map(|n| n.to_string()).collect(),
            kept: self.keep_process_root,
        };
        if !self.keep_process_root {
            let strip: FxHashMap<FrameId, Box<str>> = roots
                .keys()
                .map(|r| (*r, self.root_texts[r].clone()))
                .collect();
            self.rebuild(&strip);
        }
        self.profile.meta.notes.push(note);
    }

    /// The profile, with what the whole file showed: its bad lines' verdict (an error when
    /// no line was readable), decimal counts, process-name roots, text that was not UTF-8.
    pub fn finish(mut self, tally: Tally) -> Result<Profile> {
        // before the no-samples check: a file of bad lines says which line and why
        let skipped = tally.bad_lines.verdict(
            &self.path,
            tally.line_no,
            tally.samples,
            "not folded stacks",
            "lines of `frame;frame;... COUNT`",
        )?;
        if tally.samples == 0 {
            return Err(Error::input(
                &self.path,
                Position::Whole,
                "no samples: expected lines of `frame;frame;... COUNT`",
            ));
        }
        self.profile.meta.warnings.extend(skipped);
        if self.decimals > 0 {
            self.profile.meta.notes.push(Notice::DecimalCounts {
                decimals: self.decimals,
            });
        }
        self.take_process_roots();
        if tally.lossy_lines > 0 {
            let place = Utf8Place::FoldedLines {
                lines: tally.lossy_lines,
                first_line: tally.first_lossy_line,
            };
            let path = self.path.clone();
            self.profile
                .meta
                .warnings
                .push(Notice::NotUtf8 { path, place });
        }
        Ok(self.profile)
    }
}
