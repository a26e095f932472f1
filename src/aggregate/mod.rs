//! Aggregation: (profile, classification, chosen metric) → weights per owner and category in
//! the three views (DESIGN "Semantics of the three views").
//!
//! For a stack `[f0 (leaf), …, fn]` with weight `w`:
//! - **self**: `w` goes to `owner(f0)`;
//! - **owner**: `w` goes to the first owner from the leaf that is not transparent, or to
//!   `owner(f0)` when every frame is transparent (the runtime owns its own work);
//! - **anywhere**: `w` goes once to every distinct owner on the stack.
//!
//! Everything that depends only on the stack is computed once per distinct stack
//! ([`StackFacts`]); the per-row loop is then additions. Weights are exact integers (u128), so
//! self and owner columns add up to the total exactly.

pub mod flame_lines;
pub mod functions;
pub mod interval;
mod line_order;
mod marks;
pub mod page;
pub mod quality;
pub mod report;
pub mod rows;
pub mod timeline;

use crate::classify::{Classification, RuleSet};
use crate::model::{
    Category, Frame, FrameId, FrameKind, OwnerId, Profile, StackId, UNKNOWN, hash_of,
};
use marks::Marks;
use quality::Quality;
use rustc_hash::FxHashMap;
use std::borrow::Cow;

/// What to aggregate. Built once from the command line.
#[derive(Debug, Clone)]
pub struct AggregateOptions {
    /// Index of the sample type to weigh by.
    pub metric: usize,
    /// Keep async-profiler's allocated-class leaves as ordinary frames (the seed harness did).
    pub types_as_frames: bool,
    /// Split by thread (pool numbers folded).
    pub threads: bool,
    /// How many heaviest frames to keep per list.
    pub top: usize,
    /// Build the sums the shares' error bars come from ([`Dispersion`]); without them the
    /// aggregate's dispersion is empty. A fifth of the pass over the rows on a million
    /// distinct stacks, for outputs (flame graphs) that show no interval.
    pub intervals: bool,
    /// Find [`Aggregate::suggested_user`] (a pass over every frame's name); without it, none.
    pub user_hint: bool,
}

/// Weights of one owner or category in the three views.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ViewWeights {
    pub self_: u128,
    pub owner: u128,
    pub anywhere: u128,
}

impl ViewWeights {
    /// Adds `other`'s weights, view by view (merging inputs, pooling time buckets).
    pub fn add(&mut self, other: &ViewWeights) {
        self.self_ += other.self_;
        self.owner += other.owner;
        self.anywhere += other.anywhere;
    }
}

/// A frame and its weight in some view, named for display.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameWeight {
    pub owner: String,
    pub frame: String,
    pub weight: u128,
}

/// Weight per allocated type (async-profiler allocation profiles), split by owner view.
#[derive(Debug, Clone)]
pub struct TypeWeight {
    pub name: String,
    pub weight: u128,
    /// Owner-view owners of this type's allocations, heaviest first.
    pub owners: Vec<(OwnerId, u128)>,
}

/// The attribution of one input (or one thread group of it).
#[derive(Debug, Clone, Default)]
pub struct Attribution {
    pub total: u128,
    /// The part of `total` in samples without a stack: in no owner or category, in every
    /// view (shown as [`crate::model::NO_STACK`]).
    pub stackless: u128,
    /// Indexed by `OwnerId`.
    pub owners: Vec<ViewWeights>,
    /// Indexed by `Category::ALL` position.
    pub categories: Vec<ViewWeights>,
}

/// Everything the report needs about one input.
#[derive(Debug, Clone, Default)]
pub struct Aggregate {
    pub all: Attribution,
    /// Heaviest leaf frames, at most `top` in total (as every `--top`: N rows, not N per
    /// owner).
    pub top_self: Vec<FrameWeight>,
    /// Heaviest owner frames (the first non-transparent frame itself).
    pub top_owner_frames: Vec<FrameWeight>,
    /// Heaviest unclassified frames by inclusive weight: the rules worth adding.
    pub unclassified_frames: Vec<FrameWeight>,
    pub types: Vec<TypeWeight>,
    /// Thread groups (when asked and known), heaviest first.
    pub threads: Vec<(String, Attribution)>,
    pub distinct_stacks: usize,
    /// How far the recording supports the views.
    pub quality: Quality,
    /// The `--user PREFIX` that would move the most weight to user code, and what it would
    /// move ([`quality::suggest_user_prefix`]).
    pub suggested_user: Option<quality::UserHint>,
    /// The negative part of a delta profile's values in the metric, attributed as the
    /// positive part is; shares are never computed from it (see `model::NegativeWeights`).
    pub negative: Attribution,
    /// What the sampling error of `all`'s shares needs (issue 25, see [`interval`]).
    pub dispersion: Dispersion,
    /// The owners per time bucket (`report --by time`), with the warm-up found in them.
    pub timeline: Option<timeline::OwnerTimeline>,
}

/// Sums of squared weights behind the shares of [`Aggregate::all`], for their intervals
/// ([`interval`] says what they estimate and what they assume). Per row `r` of weight `W_r`
/// standing for `n_r` samples, `q_r = W_r² / n_r`: the sum of its samples' squared weights
/// when they weigh alike.
#[derive(Debug, Clone, Default)]
pub struct Dispersion {
    /// Σ n_r: the samples behind the metric's weight, or the rows when `counted` is false.
    pub samples: u128,
    /// Whether the input says how many samples stand behind a row ([`Counting`]); without it
    /// every row is one sample, the fewest it can stand for (the widest honest interval).
    pub counted: bool,
    /// Q = Σ_r q_r over every weighed row.
    pub total_sq: f64,
    /// Σ q_r over the rows counted for each owner (by `OwnerId`), per view (self, owner,
    /// anywhere).
    pub owners: Vec<[f64; 3]>,
    /// The same per category (by `Category::ALL` position).
    pub categories: Vec<[f64; 3]>,
    /// Where the samples carry a time: the batch means over time buckets, per owner and
    /// view, and per category and view ([`interval::BlockSums`]).
    pub owner_blocks: Vec<[Option<interval::BlockSums>; 3]>,
    pub category_blocks: Vec<[Option<interval::BlockSums>; 3]>,
    /// The width of one time bucket, nanoseconds (0 without time).
    pub bucket_nanos: u64,
    /// The time the samples span (first to last sample, or the profile's declared
    /// duration), seconds: what "record longer" is said in.
    pub seconds: Option<f64>,
}

impl Dispersion {
    /// The sums for owner `owner` (or, with `category`, the category at that position) in
    /// `view` of `all`.
    pub fn sums(
        &self,
        all: &Attribution,
        index: usize,
        category: bool,
        view: report::View,
    ) -> interval::ShareSums {
        let v = view_slot(view);
        let (weights, sq, blocks) = if category {
            (&all.categories, &self.categories, &self.category_blocks)
        } else {
            (&all.owners, &self.owners, &self.owner_blocks)
        };
        let weight = weights.get(index).map_or(0, |w| view.of(w));
        interval::ShareSums {
            weight,
            total: all.total,
            owner_sq: sq.get(index).map_or(0.0, |s| s[v]),
            total_sq: self.total_sq,
            blocks: blocks.get(index).and_then(|b| b[v]),
        }
    }

    /// The sums of two independent inputs read as one (`report --merge`).
    pub fn merge(&mut self, other: &Dispersion) {
        self.samples += other.samples;
        self.counted &= other.counted;
        self.total_sq += other.total_sq;
        let add = |into: &mut Vec<[f64; 3]>, from: &[[f64; 3]]| {
            for (a, b) in into.iter_mut().zip(from) {
                for v in 0..3 {
                    a[v] += b[v];
                }
            }
        };
        add(&mut self.owners, &other.owners);
        add(&mut self.categories, &other.categories);
        // time blocks only where both inputs have them: else the merged share has none
        let blocks = |into: &mut Vec<[Option<interval::BlockSums>; 3]>,
                      from: &[[Option<interval::BlockSums>; 3]]| {
            if from.is_empty() {
                into.clear();
            }
            for (a, b) in into.iter_mut().zip(from) {
                for v in 0..3 {
                    a[v] = a[v].zip(b[v]).map(|(x, y)| x.merged(&y));
                }
            }
        };
        blocks(&mut self.owner_blocks, &other.owner_blocks);
        blocks(&mut self.category_blocks, &other.category_blocks);
        self.seconds = self.seconds.zip(other.seconds).map(|(a, b)| a + b);
    }
}

fn view_slot(view: report::View) -> usize {
    match view {
        report::View::Self_ => 0,
        report::View::Owner => 1,
        report::View::Anywhere => 2,
    }
}

/// How many samples stand behind a row's weight in the chosen metric: the one place that
/// decides it for every input format (issue 54: the interval counts samples, not rows or
/// distinct stacks).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Counting {
    /// A sample type counts them (`samples`, pprof's `sample`, JFR's event counts): its
    /// value in the row.
    Column(usize),
    /// The metric is a sum of periods (pprof's `cpu` beside its `period`): value / period.
    PerPeriod(f64),
    /// A Go heap profile: allocations sampled as a Poisson process of one sample per
    /// `period` bytes, each row's objects and bytes already scaled up to all allocations;
    /// the samples behind a row are `objects · (1 − e^(−size/period))` (`size` its mean
    /// object size), as `runtime/pprof` scaled them.
    Poisson {
        objects: usize,
        bytes: usize,
        period: f64,
    },
    /// Nothing says: every row is one sample.
    Rows,
}

impl Counting {
    /// How `profile`'s rows count samples in `metric`.
    pub fn of(profile: &Profile, metric: usize) -> Counting {
        use crate::model::Unit;
        let types = profile.sample_types();
        let named =
            |name: &str, unit: Unit| types.iter().position(|t| t.name == name && t.unit == unit);
        let chosen = &types[metric];
        // JFR and async-profiler name event counts `*-samples`; a metric that counts samples
        // is its own count
        if chosen.unit == Unit::Count
            && (chosen.name == "samples"
                || chosen.name == "sample"
                || chosen.name.ends_with("-samples"))
        {
            return Counting::Column(metric);
        }
        if let Some(i) = named("samples", Unit::Count).or_else(|| named("sample", Unit::Count)) {
            return Counting::Column(i);
        }
        // JFR's bytes beside the events they come from: alloc-bytes ↔ alloc-objects
        if let Some(stem) = chosen.name.strip_suffix("-bytes")
            && let Some(i) = named(&format!("{stem}-objects"), Unit::Count)
        {
            return Counting::Column(i);
        }
        let period = (profile.meta.period.as_ref()).map(|(p, t)| (*p, &t.unit));
        // Go's heap profiles: `alloc_space` beside `alloc_objects`, period in bytes
        if let Some((rate, _)) = period.filter(|&(r, u)| r > 0 && *u == Unit::Bytes)
            && let Some(stem) = chosen
                .name
                .strip_suffix("_space")
                .or_else(|| chosen.name.strip_suffix("_objects"))
            && let (Some(objects), Some(bytes)) = (
                named(&format!("{stem}_objects"), Unit::Count),
                named(&format!("{stem}_space"), Unit::Bytes),
            )
        {
            return Counting::Poisson {
                objects,
                bytes,
                period: rate as f64,
            };
        }
        match period {
            Some((p, unit)) if p > 0 && *unit == chosen.unit && chosen.unit != Unit::Count => {
                Counting::PerPeriod(p as f64)
            }
            _ => Counting::Rows,
        }
    }

    /// The samples behind a row of `values` weighing `w` in the metric (at least one).
    pub fn samples(&self, values: &[u128], w: u128) -> f64 {
        let n = match *self {
            Counting::Column(i) => values[i] as f64,
            Counting::PerPeriod(p) => w as f64 / p,
            Counting::Poisson {
                objects,
                bytes,
                period,
            } => {
                let (n, b) = (values[objects] as f64, values[bytes] as f64);
                if n > 0.0 {
                    n * -(-(b / n) / period).exp_m1()
                } else {
                    1.0
                }
            }
            Counting::Rows => 1.0,
        };
        n.max(1.0)
    }
}

/// Accumulates [`Dispersion`] row by row.
struct DispersionBuilder {
    d: Dispersion,
    counting: Counting,
    /// Σ n_r as a real: `value / period` and the Poisson counts are not integers.
    samples: f64,
}

impl DispersionBuilder {
    fn new(profile: &Profile, metric: usize, owners: usize) -> DispersionBuilder {
        let counting = Counting::of(profile, metric);
        DispersionBuilder {
            d: Dispersion {
                counted: counting != Counting::Rows,
                owners: vec![[0.0; 3]; owners],
                categories: vec![[0.0; 3]; Category::ALL.len()],
                seconds: profile
                    .meta
                    .duration_nanos
                    .filter(|&d| d > 0)
                    .map(|d| d as f64 / 1e9),
                ..Dispersion::default()
            },
            counting,
            samples: 0.0,
        }
    }

    fn add(
        &mut self,
        row: &crate::model::Row<'_>,
        facts: &StackFacts,
        cache: &FactCache<'_>,
        w: u128,
    ) {
        let n = self.counting.samples(row.values, w);
        self.samples += n;
        let q = (w as f64) * (w as f64) / n;
        self.d.total_sq += q;
        if facts.stackless {
            return;
        }
        let rules = cache.walk.rules;
        let cat = |o: OwnerId| category_index(rules.owner(o).category) as usize;
        let d = &mut self.d;
        d.owners[facts.self_owner.0 as usize][0] += q;
        d.owners[facts.owner.0 as usize][1] += q;
        d.categories[cat(facts.self_owner)][0] += q;
        d.categories[cat(facts.owner)][1] += q;
        let (a, b) = facts.anywhere;
        for o in &cache.owners_flat[a as usize..b as usize] {
            d.owners[o.0 as usize][2] += q;
        }
        let (a, b) = facts.categories;
        for &c in &cache.categories_flat[a as usize..b as usize] {
            d.categories[c as usize][2] += q;
        }
    }

    fn finish(mut self) -> Dispersion {
        self.d.samples = self.samples.round() as u128;
        self.d
    }
}

impl Aggregate {
    /// What the recording's quality means for the answer, then the `--user` hint: the one
    /// list every output renders (`render::findings`).
    pub fn findings(&self) -> Vec<quality::Finding> {
        let total = self.all.total;
        let mut findings = self.quality.findings(total);
        if let Some(bounds) = self.user_bounds() {
            findings.push(bounds);
        }
        if let Some(inlining) = self.jit_inlining() {
            findings.push(inlining);
        }
        if let Some(w) = self.timeline.as_ref().and_then(|t| t.warmup.as_ref()) {
            findings.push(w.finding());
        }
        if let Some(hint) = &self.suggested_user {
            findings.push(quality::Finding::UserPrefix {
                prefix: hint.prefix.clone(),
                owner: quality::percent(hint.owner, total),
                anywhere: quality::percent(hint.anywhere, total),
            });
        }
        findings
    }

    /// Where stacks cut short hold more than the gate's default guard: the range user
    /// code's owner-view share lies in whoever their weight belongs to — down by the part
    /// the owner view gave to user code, up by the rest (issue 54).
    pub fn user_bounds(&self) -> Option<quality::Finding> {
        let total = self.all.total;
        let q = &self.quality;
        let cut = q.ownerless_percent(total);
        if cut <= quality::UNFIT_PERCENT || !q.callchains() {
            return None;
        }
        let user = &self.all.categories[category_index(Category::User) as usize];
        if user.anywhere == 0 {
            return None;
        }
        let share = quality::percent(user.owner, total);
        let (down, up) = q.cut_short_bounds(q.ownerless_user);
        Some(quality::Finding::UserBounds {
            share,
            low: share - quality::percent(down, total),
            high: share + quality::percent(up, total),
            cut,
        })
    }

    /// A JVM recording named by a perf map in which user code owns little (under
    /// [`quality::JIT_INLINING_PERCENT`]): the share may be low by what the JIT inlined
    /// (issue 53; a Spark job's 2.4 % by perf against 9.6 % by JFR).
    pub fn jit_inlining(&self) -> Option<quality::Finding> {
        let total = self.all.total;
        let user = &self.all.categories[category_index(Category::User) as usize];
        let share = quality::percent(user.owner, total);
        (self.quality.jvm_perf_map && user.anywhere > 0 && share < quality::JIT_INLINING_PERCENT)
            .then_some(quality::Finding::JitInlining { user: share })
    }

    /// The percent of the weight that frames no rule, preset or guess names decide in `view`
    /// (the leaf for self, the owner frame for owner, any frame for anywhere): what the
    /// report's quality line shows and `--max-unclassified` guards (issue 29).
    pub fn unclassified_percent(&self, view: report::View) -> f64 {
        quality::percent(self.unclassified_weight(view), self.all.total)
    }

    /// The weight behind [`Aggregate::unclassified_percent`].
    pub fn unclassified_weight(&self, view: report::View) -> u128 {
        (self.all.owners)
            .get(OwnerId::UNCLASSIFIED.0 as usize)
            .map_or(0, |w| view.of(w))
    }
}

/// Facts about one distinct stack that do not depend on the row's weight.
#[derive(Debug, Clone)]
struct StackFacts {
    self_owner: OwnerId,
    owner: OwnerId,
    self_frame: Option<FrameId>,
    owner_frame: Option<FrameId>,
    alloc_type: Option<FrameId>,
    /// Ranges into the shared `flat` vectors of [`FactCache`].
    anywhere: (u32, u32),
    categories: (u32, u32),
    unclassified: (u32, u32),
    /// Frames in the stack (allocated-type leaves skipped unless they are frames).
    depth: usize,
    /// The sample had no frame at all (not even an allocated type).
    stackless: bool,
    /// Only transparent frames, and no root: a stack cut short (see [`quality`]).
    ownerless: bool,
    leaf_unresolved: bool,
    owner_unresolved: bool,
    /// Some frame (or the empty stack) is unresolved: what the anywhere view cannot place.
    any_unresolved: bool,
    /// The leaf is an address without a symbol, owned through a module rule.
    leaf_module_only: bool,
    /// Runs in CPython's interpreter with no Python function in it (see [`quality`]).
    interpreter_only: bool,
}

struct FactCache<'a> {
    /// What a stack's owners are read from, and how.
    walk: StackWalk<'a>,
    /// Facts of the stacks that more than one row refers to; every other stack's
    /// facts are computed once, used by its row and dropped, so that memory does not grow by
    /// a [`StackFacts`] per distinct stack (issue 17).
    facts: FxHashMap<StackId, StackFacts>,
    /// Per stack: how many weighed rows refer to it, saturating at 2; facts are kept for 2.
    /// Empty when each stack is asked for once.
    rows_per_stack: Vec<u8>,
    /// Lengths of the flat vectors that kept facts refer to; a stack that is not kept is
    /// computed past them, and its ranges stay valid until the next [`FactCache::get`].
    kept_lens: (usize, usize, usize),
    owners_flat: Vec<OwnerId>,
    categories_flat: Vec<u8>,
    frames_flat: Vec<FrameId>,
    /// Which owners, categories and unclassified frames the stack being computed has shown.
    owners_seen: Marks,
    categories_seen: Marks,
    frames_seen: Marks,
    /// What the facts ask of each distinct frame, by `FrameId`.
    traits: Vec<FrameTraits>,
}

/// What a stack's facts ask of one frame, judged once per distinct frame: a stack then reads
/// a few bytes per frame instead of the frame itself (cold memory on millions of distinct
/// frames) and its texts.
#[derive(Debug, Clone, Copy)]
struct FrameTraits {
    alloc_type: bool,
    /// An address without a symbol ([`FrameKind::Unknown`]).
    unknown: bool,
    /// Unresolved as its owner leaves it ([`quality::is_unresolved`]).
    unresolved: bool,
    python: quality::PythonRole,
}

impl FrameTraits {
    fn of(frame: &Frame, owner: OwnerId) -> FrameTraits {
        FrameTraits {
            alloc_type: frame.kind == FrameKind::AllocType,
            unknown: frame.kind == FrameKind::Unknown,
            unresolved: quality::is_unresolved(frame, owner),
            python: quality::PythonRole::of(frame),
        }
    }
}

/// How a stack is walked for its self-view and owner-view owners: what the facts, the
/// flame lines and [`stack_owners`] all read, which need nothing of each frame beforehand.
#[derive(Clone, Copy)]
pub(crate) struct StackWalk<'a> {
    pub profile: &'a Profile,
    pub rules: &'a RuleSet,
    pub classes: &'a Classification,
    pub types_as_frames: bool,
}

impl<'a> StackWalk<'a> {
    /// The frames of `stack` its owners are read from: the allocated-class leaf says *what*
    /// was allocated, not who, and is skipped unless types are frames.
    pub fn owned_frames(&self, stack: StackId) -> &'a [FrameId] {
        let profile = self.profile;
        self.owned_frames_by(stack, |f| profile.frame(f).kind == FrameKind::AllocType)
    }

    /// [`StackWalk::owned_frames`], with `is_type` telling an allocated type's frame.
    fn owned_frames_by(&self, stack: StackId, is_type: impl Fn(FrameId) -> bool) -> &'a [FrameId] {
        let all = self.profile.stack(stack);
        let skip = if self.types_as_frames {
            0
        } else {
            all.iter().take_while(|&&f| is_type(f)).count()
        };
        &all[skip..]
    }

    /// The owners of `frames` (a stack's [`StackWalk::owned_frames`]), and the owner frame
    /// with its position: the one place the self and owner views' walk is decided. The owner
    /// is the first non-transparent frame's from the leaf; a stack of transparent frames
    /// only stays with its leaf's owner.
    #[inline]
    pub fn walk(&self, frames: &[FrameId]) -> (StackOwners, Option<FrameId>, Option<usize>) {
        let owner_of = |f: FrameId| self.classes.owner_of(f);
        let self_owner = frames
            .first()
            .map_or(OwnerId::UNSYMBOLIZED, |&f| owner_of(f));
        let owner_pos = frames
            .iter()
            .position(|&f| !self.rules.owner(owner_of(f)).transparent);
        let (owner, owner_frame) = match owner_pos {
            Some(i) => (owner_of(frames[i]), Some(frames[i])),
            None => (self_owner, frames.first().copied()),
        };
        (StackOwners { self_owner, owner }, owner_frame, owner_pos)
    }

    /// The self and owner views' owners of `stack`, without the rest of its facts.
    fn owners(&self, stack: StackId) -> StackOwners {
        self.walk(self.owned_frames(stack)).0
    }
}

/// Every frame's [`FrameTraits`]: on every core past [`PARALLEL_GROUPING`] frames, each
/// read being cold memory on millions of distinct frames.
fn frame_traits(profile: &Profile, classes: &Classification) -> Vec<FrameTraits> {
    use rayon::prelude::*;
    let of = |(frame, &owner): (&Frame, &OwnerId)| FrameTraits::of(frame, owner);
    if profile.frame_count() >= PARALLEL_GROUPING {
        (profile.frame_slice().par_iter().zip(&classes.frame_owner))
            .map(of)
            .collect()
    } else {
        (profile.frames().zip(&classes.frame_owner))
            .map(of)
            .collect()
    }
}

impl<'a> FactCache<'a> {
    fn new(
        profile: &'a Profile,
        rules: &'a RuleSet,
        classes: &'a Classification,
        types_as_frames: bool,
        rows_per_stack: Vec<u8>,
    ) -> FactCache<'a> {
        let traits = frame_traits(profile, classes);
        FactCache::with_traits(
            profile,
            rules,
            classes,
            types_as_frames,
            rows_per_stack,
            traits,
        )
    }

    /// [`FactCache::new`] with the frames' traits made already.
    fn with_traits(
        profile: &'a Profile,
        rules: &'a RuleSet,
        classes: &'a Classification,
        types_as_frames: bool,
        rows_per_stack: Vec<u8>,
        traits: Vec<FrameTraits>,
    ) -> FactCache<'a> {
        FactCache {
            walk: StackWalk {
                profile,
                rules,
                classes,
                types_as_frames,
            },
            facts: FxHashMap::default(),
            rows_per_stack,
            kept_lens: (0, 0, 0),
            owners_flat: Vec::new(),
            categories_flat: Vec::new(),
            frames_flat: Vec::new(),
            owners_seen: Marks::new(rules.owners().len()),
            categories_seen: Marks::new(Category::ALL.len()),
            frames_seen: Marks::new(profile.frame_count()),
            traits,
        }
    }

    /// The facts of `stack`; their ranges into the flat vectors hold until the next call.
    fn get(&mut self, stack: StackId) -> StackFacts {
        if let Some(f) = self.facts.get(&stack) {
            return f.clone();
        }
        let (owners, categories, frames) = self.kept_lens;
        self.owners_flat.truncate(owners);
        self.categories_flat.truncate(categories);
        self.frames_flat.truncate(frames);
        let f = self.compute(stack);
        if self.rows_per_stack.get(stack.0 as usize) == Some(&2) {
            self.kept_lens = (
                self.owners_flat.len(),
                self.categories_flat.len(),
                self.frames_flat.len(),
            );
            self.facts.insert(stack, f.clone());
        }
        f
    }

    /// [`StackWalk::owned_frames`], with each frame's kind read from its traits.
    fn owned_frames(&self, stack: StackId) -> &'a [FrameId] {
        (self.walk).owned_frames_by(stack, |f| self.traits[f.0 as usize].alloc_type)
    }

    fn compute(&mut self, stack: StackId) -> StackFacts {
        let all = self.walk.profile.stack(stack);
        let alloc_type = all
            .first()
            .copied()
            .filter(|&f| self.traits[f.0 as usize].alloc_type);
        let frames = self.owned_frames(stack);
        let (StackOwners { self_owner, owner }, owner_frame, owner_pos) = self.walk.walk(frames);
        let (anywhere, categories, unclassified) = self.collect_owners(frames);
        let traits = |f: FrameId| self.traits[f.0 as usize];
        let owner_of = |f: FrameId| self.walk.classes.owner_of(f);
        let frame = |f: FrameId| self.walk.profile.frame(f);
        let unresolved = |f: Option<FrameId>| f.is_none_or(|f| traits(f).unresolved);
        let leaf_unresolved = unresolved(frames.first().copied());
        StackFacts {
            stackless: all.is_empty(),
            depth: frames.len(),
            ownerless: owner_pos.is_none()
                && !self.walk.profile.meta.recording.whole_stacks
                && quality::is_cut_short(
                    &frames
                        .iter()
                        .map(|&f| (frame(f), owner_of(f)))
                        .collect::<Vec<_>>(),
                ),
            leaf_unresolved,
            owner_unresolved: unresolved(owner_frame),
            any_unresolved: frames.is_empty() || frames.iter().any(|&f| traits(f).unresolved),
            interpreter_only: quality::is_interpreter_only(
                frames.iter().map(|&f| traits(f).python),
            ),
            leaf_module_only: !leaf_unresolved
                && frames.first().is_some_and(|&f| traits(f).unknown),
            self_owner,
            owner,
            self_frame: frames.first().copied(),
            owner_frame,
            alloc_type,
            anywhere,
            categories,
            unclassified,
        }
    }

    /// Appends the distinct owners, categories and unclassified frames of `frames` to the flat
    /// lists; their ranges there (an empty stack is the unsymbolized owner's).
    #[allow(clippy::type_complexity)]
    fn collect_owners(&mut self, frames: &[FrameId]) -> ((u32, u32), (u32, u32), (u32, u32)) {
        let start = self.owners_flat.len() as u32;
        let cat_start = self.categories_flat.len() as u32;
        let unc_start = self.frames_flat.len() as u32;
        if frames.is_empty() {
            self.owners_flat.push(OwnerId::UNSYMBOLIZED);
            self.categories_flat.push(category_index(Category::Unknown));
        }
        self.owners_seen.clear();
        self.categories_seen.clear();
        self.frames_seen.clear();
        for &f in frames {
            let o = self.walk.classes.owner_of(f);
            if self.owners_seen.insert(o.0 as usize) {
                self.owners_flat.push(o);
                let c = category_index(self.walk.rules.owner(o).category);
                if self.categories_seen.insert(c as usize) {
                    self.categories_flat.push(c);
                }
            }
            if o == OwnerId::UNCLASSIFIED && self.frames_seen.insert(f.0 as usize) {
                self.frames_flat.push(f);
            }
        }
        (
            (start, self.owners_flat.len() as u32),
            (cat_start, self.categories_flat.len() as u32),
            (unc_start, self.frames_flat.len() as u32),
        )
    }
}

/// The position of `c` in [`Category::ALL`]: the one order of categories, which indexes the
/// per-category weights, the `--by category` rows, the gate's category subjects and the
/// flame colours.
pub fn category_index(c: Category) -> u8 {
    // `Category::ALL` lists the categories in their declaration order (asserted below), so a
    // category's position is its discriminant: no search, on every row of a report
    c as u8
}

const _: () = {
    let mut i = 0;
    while i < Category::ALL.len() {
        assert!(Category::ALL[i] as usize == i);
        i += 1;
    }
};

impl Attribution {
    fn new(owners: usize) -> Attribution {
        Attribution {
            total: 0,
            stackless: 0,
            owners: vec![ViewWeights::default(); owners],
            categories: vec![ViewWeights::default(); Category::ALL.len()],
        }
    }

    fn add(&mut self, facts: &StackFacts, cache: &FactCache<'_>, w: u128, rules: &RuleSet) {
        self.total += w;
        if facts.stackless {
            self.stackless += w;
            return;
        }
        self.owners[facts.self_owner.0 as usize].self_ += w;
        self.owners[facts.owner.0 as usize].owner += w;
        let cat = |o: OwnerId| category_index(rules.owner(o).category) as usize;
        self.categories[cat(facts.self_owner)].self_ += w;
        self.categories[cat(facts.owner)].owner += w;
        let (a, b) = facts.anywhere;
        for o in &cache.owners_flat[a as usize..b as usize] {
            self.owners[o.0 as usize].anywhere += w;
        }
        let (a, b) = facts.categories;
        for &c in &cache.categories_flat[a as usize..b as usize] {
            self.categories[c as usize].anywhere += w;
        }
    }
}

/// Folds digit runs so that thread pools read as one: `worker-12` → `worker-*`.
pub fn thread_group(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut in_digits = false;
    for c in name.chars() {
        if c.is_ascii_digit() {
            if !in_digits {
                out.push('*');
            }
            in_digits = true;
        } else {
            out.push(c);
            in_digits = false;
        }
    }
    out
}

/// Attributes every sample of `profile` in the chosen metric: each row's stack facts once
/// ([`FactCache`]), handed to one accumulator per figure (the views, threads, quality,
/// frame lists and allocated types, dispersion), each finished into its part of the
/// [`Aggregate`].
pub fn aggregate(
    profile: &Profile,
    rules: &RuleSet,
    classes: &Classification,
    options: &AggregateOptions,
) -> Aggregate {
    // two passes over all that was read, cold memory on millions of distinct stacks: side
    // by side
    let (counted, traits) = rayon::join(
        || RowCounts::of(profile, options.metric),
        || frame_traits(profile, classes),
    );
    let mut cache = FactCache::with_traits(
        profile,
        rules,
        classes,
        options.types_as_frames,
        counted.rows_per_stack,
        traits,
    );
    let n_owners = rules.owners().len();
    let mut all = Attribution::new(n_owners);
    let mut threads = options.threads.then(|| ThreadGroups::new(n_owners));
    let mut frames = FrameAccumulator::new(profile.frame_count(), counted.total);
    let mut quality = QualityAccumulator::default();
    let mut dispersion =
        (options.intervals).then(|| DispersionBuilder::new(profile, options.metric, n_owners));
    for row in profile.rows() {
        let w = row.values[options.metric];
        if w == 0 {
            continue;
        }
        let facts = cache.get(row.stack);
        all.add(&facts, &cache, w, rules);
        if let Some(dispersion) = &mut dispersion {
            dispersion.add(&row, &facts, &cache, w);
        }
        if let Some(threads) = &mut threads {
            threads.add(profile, &row, &facts, &cache, w, rules);
        }
        // a sample without frames has nothing to judge the recording by, nothing to list
        if !facts.stackless {
            let user_owner = rules.owner(facts.owner).category == Category::User;
            quality.add(profile, row.stack, &facts, w, user_owner);
            frames.add(&facts, &cache, w);
        }
    }
    let negative = negative_attribution(profile, &mut cache, options.metric, rules);
    // the facts, marks and per-stack counts are done with: free them before the frame lists
    // build their indexes, which is when memory peaks on millions of distinct frames
    drop(cache);
    let quality = quality.finish(profile, &all);
    let types = type_weights(profile, std::mem::take(&mut frames.types));
    // the hint and the lists read the frame totals alike: on two cores
    let (suggested_user, lists) = rayon::join(
        || match options.user_hint {
            true => suggest_user(profile, rules, classes, &frames, &all, options.metric),
            false => None,
        },
        || frames.finish(profile, rules, classes, options.top, types),
    );
    Aggregate {
        all,
        top_self: lists.top_self,
        top_owner_frames: lists.top_owner_frames,
        unclassified_frames: lists.unclassified,
        types: lists.types,
        threads: threads.map(ThreadGroups::finish).unwrap_or_default(),
        quality,
        suggested_user,
        distinct_stacks: counted.distinct_stacks,
        negative,
        dispersion: dispersion.map_or_else(Dispersion::default, |d| {
            let mut d = d.finish();
            if let Some(t) = &profile.meta.timeline {
                add_time_blocks(&mut d, profile, t, rules, classes, options);
            }
            d
        }),
        timeline: None,
    }
}

/// Where the samples carry a time: the batch means over the timeline's buckets and the
/// time the samples span.
fn add_time_blocks(
    d: &mut Dispersion,
    profile: &Profile,
    t: &crate::model::Timeline,
    rules: &RuleSet,
    classes: &Classification,
    options: &AggregateOptions,
) {
    let blocks = timeline::time_blocks(
        profile,
        t,
        rules,
        classes,
        options.metric,
        options.types_as_frames,
    );
    d.owner_blocks = blocks.owners;
    d.category_blocks = blocks.categories;
    d.bucket_nanos = t.width();
    if let Some((first, last)) = t.span() {
        // the last sample's bucket counts in full: a sample stands for its period
        d.seconds = Some((last - first).saturating_add(t.width()) as f64 / 1e9);
    }
}

/// What one pass over the rows knows before any stack is attributed.
struct RowCounts {
    /// How many weighed rows refer to each stack, saturating at 2: a stack of one row needs
    /// its facts once.
    rows_per_stack: Vec<u8>,
    /// The metric's total (the frame lists' integer width is chosen from it).
    total: u128,
    /// Stacks with weight: the report's distinct stacks.
    distinct_stacks: usize,
}

impl RowCounts {
    fn of(profile: &Profile, metric: usize) -> RowCounts {
        let mut rows_per_stack = vec![0u8; profile.stack_count()];
        let mut total = 0u128;
        for row in profile.rows() {
            let w = row.values[metric];
            if w != 0 {
                let n = &mut rows_per_stack[row.stack.0 as usize];
                *n = (*n + 1).min(2);
                total = total.saturating_add(w);
            }
        }
        let distinct_stacks = rows_per_stack.iter().filter(|&&n| n > 0).count();
        RowCounts {
            rows_per_stack,
            total,
            distinct_stacks,
        }
    }
}

/// `--threads`: an attribution per thread group (pool numbers folded).
struct ThreadGroups {
    groups: FxHashMap<String, Attribution>,
    n_owners: usize,
}

impl ThreadGroups {
    fn new(n_owners: usize) -> ThreadGroups {
        ThreadGroups {
            groups: FxHashMap::default(),
            n_owners,
        }
    }

    fn add(
        &mut self,
        profile: &Profile,
        row: &crate::model::Row<'_>,
        facts: &StackFacts,
        cache: &FactCache<'_>,
        w: u128,
        rules: &RuleSet,
    ) {
        let name = row.thread.map_or_else(
            || "(no thread)".to_string(),
            |t| thread_group(profile.thread_name(t)),
        );
        self.groups
            .entry(name)
            .or_insert_with(|| Attribution::new(self.n_owners))
            .add(facts, cache, w, rules);
    }

    /// The groups, heaviest first.
    fn finish(self) -> Vec<(String, Attribution)> {
        let mut threads: Vec<(String, Attribution)> = self.groups.into_iter().collect();
        threads.sort_by(|a, b| b.1.total.cmp(&a.1.total).then(a.0.cmp(&b.0)));
        threads
    }
}

/// The recording-quality figures of [`Quality`], and the modules the unresolved leaves and
/// the cut-short stacks are in.
#[derive(Default)]
struct QualityAccumulator<'p> {
    quality: Quality,
    unresolved_modules: FxHashMap<Option<&'p str>, u128>,
    ownerless_modules: FxHashMap<Option<&'p str>, u128>,
}

impl<'p> QualityAccumulator<'p> {
    /// Adds a row of weight `w`; `user_owner` tells whether its owner-view owner is user
    /// code's (what the user's bounds take from, [`quality::Finding::UserBounds`]).
    fn add(
        &mut self,
        profile: &'p Profile,
        stack: StackId,
        facts: &StackFacts,
        w: u128,
        user_owner: bool,
    ) {
        let q = &mut self.quality;
        q.max_depth = q.max_depth.max(facts.depth);
        if facts.ownerless {
            q.ownerless += w;
            let owner = facts.owner.0 as usize;
            if q.ownerless_by_owner.len() <= owner {
                q.ownerless_by_owner.resize(owner + 1, 0);
            }
            q.ownerless_by_owner[owner] += w;
            if user_owner {
                q.ownerless_user += w;
            }
            let frames = profile.stack(stack).iter().map(|&f| profile.frame(f));
            *self
                .ownerless_modules
                .entry(quality::cut_in(frames))
                .or_default() += w;
        }
        if facts.leaf_unresolved {
            q.unresolved_leaf += w;
            let module = facts
                .self_frame
                .and_then(|f| profile.frame(f).module.as_deref());
            *self.unresolved_modules.entry(module).or_default() += w;
        }
        let flags = [
            (facts.owner_unresolved, &mut q.unresolved_owner),
            (facts.any_unresolved, &mut q.unresolved_anywhere),
            (facts.leaf_module_only, &mut q.module_only_leaf),
            (facts.interpreter_only, &mut q.interpreter_only),
        ];
        for (on, figure) in flags {
            if on {
                *figure += w;
            }
        }
    }

    fn finish(self, profile: &Profile, all: &Attribution) -> Quality {
        let mut quality = self.quality;
        let mut by_module: Vec<quality::UnresolvedWeight> = self
            .unresolved_modules
            .into_iter()
            .map(|(module, weight)| quality::UnresolvedWeight {
                module: module.unwrap_or(UNKNOWN).to_string(),
                weight,
                reason: quality::why_unresolved(profile, module),
            })
            .collect();
        by_module.sort_by(|a, b| {
            b.weight
                .cmp(&a.weight)
                .then_with(|| a.module.cmp(&b.module))
        });
        quality.unresolved_by_module = by_module;
        let mut ownerless_by_module: Vec<(String, u128)> = self
            .ownerless_modules
            .into_iter()
            .map(|(m, w)| (m.unwrap_or(UNKNOWN).to_string(), w))
            .collect();
        ownerless_by_module.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        quality.ownerless_by_module = ownerless_by_module;
        quality.recording = profile.meta.recording.clone();
        quality.jvm_perf_map = profile.frames().any(quality::is_perf_map_java);
        quality.unclassified_owner = all
            .owners
            .get(OwnerId::UNCLASSIFIED.0 as usize)
            .map_or(0, |w| w.owner);
        quality
    }
}

/// Weight per self frame, owner frame and unclassified frame (each frame's owner is its
/// own, so these are per frame), and per allocated type and owner.
struct FrameAccumulator {
    self_frames: FrameTotals,
    owner_frames: FrameTotals,
    unclassified: FrameTotals,
    types: FxHashMap<FrameId, FxHashMap<OwnerId, u128>>,
}

/// The frame lists of an [`Aggregate`].
struct FrameLists {
    top_self: Vec<FrameWeight>,
    top_owner_frames: Vec<FrameWeight>,
    unclassified: Vec<FrameWeight>,
    types: Vec<TypeWeight>,
}

impl FrameAccumulator {
    fn new(frames: usize, total: u128) -> FrameAccumulator {
        FrameAccumulator {
            self_frames: FrameTotals::new(frames, total),
            owner_frames: FrameTotals::new(frames, total),
            unclassified: FrameTotals::new(frames, total),
            types: FxHashMap::default(),
        }
    }

    fn add(&mut self, facts: &StackFacts, cache: &FactCache<'_>, w: u128) {
        if let Some(f) = facts.self_frame {
            self.self_frames.add(f, w);
        }
        if let Some(f) = facts.owner_frame {
            self.owner_frames.add(f, w);
        }
        let (a, b) = facts.unclassified;
        for &f in &cache.frames_flat[a as usize..b as usize] {
            self.unclassified.add(f, w);
        }
        if let Some(t) = facts.alloc_type {
            *self
                .types
                .entry(t)
                .or_default()
                .entry(facts.owner)
                .or_default() += w;
        }
    }

    /// The frames each list shows as one row: by owner and name (self and owner lists), and
    /// by label for unclassified frames when some have a module (else the first serves).
    fn groupings(
        &self,
        profile: &Profile,
        classes: &Classification,
    ) -> (Vec<u32>, Option<Vec<u32>>) {
        // the two on two cores: on millions of distinct frames each is a pass over all of them
        rayon::join(
            // owner names are unique: the id stands for the name, and hashes cheaper
            || {
                label_groups(
                    profile.frame_count(),
                    (0..profile.frame_count() as u32).map(FrameId),
                    |f| (classes.owner_of(f), &*profile.frame(f).name),
                )
            },
            // unclassified frames without a module are labelled by their name alone, as one
            // owner's: when none has a module, the grouping by name is theirs too
            || {
                let with_module = (profile.frames().zip(&classes.frame_owner))
                    .any(|(f, &o)| o == OwnerId::UNCLASSIFIED && f.module.is_some());
                with_module.then(|| {
                    label_groups(
                        profile.frame_count(),
                        self.unclassified.weighed().map(|(f, _)| f),
                        |f| frame_label(profile.frame(f)),
                    )
                })
            },
        )
    }

    /// The heaviest `top` of each list, named, beside the allocated types (`types`, summed
    /// before: the lists only read the totals, so the user hint can read them at once).
    fn finish(
        &self,
        profile: &Profile,
        rules: &RuleSet,
        classes: &Classification,
        top: usize,
        types: Vec<TypeWeight>,
    ) -> FrameLists {
        if top == 0 {
            // no list is shown (flame's legend, fleet rows): no grouping to make
            return FrameLists {
                top_self: Vec::new(),
                top_owner_frames: Vec::new(),
                unclassified: Vec::new(),
                types,
            };
        }
        let owner_name = |f: FrameId| rules.owner(classes.owner_of(f)).name.as_str();
        let name = |f: FrameId| Cow::Borrowed(&*profile.frame(f).name);
        // self and owner lists show a row per owner and name: one grouping serves both
        let (by_name, own_groups) = self.groupings(profile, classes);
        let groups = own_groups.as_deref().unwrap_or(&by_name);
        let name_frames =
            |totals: &FrameTotals| heaviest(totals, &by_name, &owner_name, &name, top);
        let unclassified_name = rules.owner(OwnerId::UNCLASSIFIED).name.as_str();
        let ((top_self, top_owner_frames), unclassified) = rayon::join(
            || {
                rayon::join(
                    || name_frames(&self.self_frames),
                    || name_frames(&self.owner_frames),
                )
            },
            || {
                heaviest(
                    &self.unclassified,
                    groups,
                    &|_| unclassified_name,
                    &|f| frame_label(profile.frame(f)),
                    top,
                )
            },
        );
        FrameLists {
            top_self,
            top_owner_frames,
            unclassified,
            types,
        }
    }
}

/// The negative part of signed values (pprof delta profiles), attributed as the positive.
fn negative_attribution(
    profile: &Profile,
    cache: &mut FactCache<'_>,
    metric: usize,
    rules: &RuleSet,
) -> Attribution {
    let mut negative = Attribution::new(rules.owners().len());
    for row in profile.negative.rows() {
        let w = row.values[metric];
        if w > 0 {
            let facts = cache.get(row.stack);
            negative.add(&facts, cache, w, rules);
        }
    }
    negative
}

/// The `--user PREFIX` that would move the most weight to user code: every frame with who
/// owns it and the owner-view weight it decides, then the weight through the prefix.
fn suggest_user(
    profile: &Profile,
    rules: &RuleSet,
    classes: &Classification,
    frames: &FrameAccumulator,
    all: &Attribution,
    metric: usize,
) -> Option<quality::UserHint> {
    let claim = |f: FrameId| match classes.owner_of(f) {
        OwnerId::UNCLASSIFIED => quality::Claim::Unclassified,
        o if rules.owner(o).category == Category::User => quality::Claim::User,
        _ => quality::Claim::Other,
    };
    let hint_frame = |f: u32| {
        let f = FrameId(f);
        let name = &*profile.frame(f).name;
        let (owner, inclusive) = (frames.owner_frames.get(f), frames.unclassified.get(f));
        (name, claim(f), owner, inclusive)
    };
    let count = profile.frame_count() as u32;
    // every frame's name is read and cut: on every core past a few thousand
    let weights = if count as usize >= PARALLEL_GROUPING {
        use rayon::prelude::*;
        (0..count)
            .into_par_iter()
            .fold(quality::PrefixWeights::default, |mut weights, f| {
                weights.add(hint_frame(f));
                weights
            })
            .reduce(
                quality::PrefixWeights::default,
                quality::PrefixWeights::merge,
            )
    } else {
        quality::PrefixWeights::of((0..count).map(hint_frame))
    };
    let mut hint = quality::suggest_user_prefix(weights, all.total)?;
    hint.anywhere = weight_through(profile, metric, |f| {
        claim(f) == quality::Claim::Unclassified
            && quality::has_prefix(&profile.frame(f).name, &hint.prefix)
    });
    Some(hint)
}

/// The owners of one stack in the self and owner views.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StackOwners {
    pub self_owner: OwnerId,
    pub owner: OwnerId,
}

/// The self-view and owner-view owner of every distinct stack, decided exactly as the report
/// decides them (for writers that label samples, such as `convert --to pprof`).
pub fn stack_owners(
    profile: &Profile,
    rules: &RuleSet,
    classes: &Classification,
    types_as_frames: bool,
) -> Vec<StackOwners> {
    let walk = StackWalk {
        profile,
        rules,
        classes,
        types_as_frames,
    };
    (0..profile.stack_count())
        .map(|i| walk.owners(StackId(i as u32)))
        .collect()
}

/// Weight per frame, dense by `FrameId`, in the narrowest integer that holds the metric's
/// total: 4 bytes a frame for most profiles, where the hash maps of (owner, frame) to u128
/// they replace cost about 70 bytes per distinct frame (issue 17). A list adds a row's weight
/// to a frame at most once (one self frame, one owner frame, each unclassified frame once per
/// stack), so no frame's sum passes the total and no addition can overflow.
enum FrameTotals {
    U32(Vec<u32>),
    U64(Vec<u64>),
    U128(Vec<u128>),
}

impl FrameTotals {
    /// Totals of `frames` frames whose sums are at most `total`.
    fn new(frames: usize, total: u128) -> FrameTotals {
        if total <= u128::from(u32::MAX) {
            FrameTotals::U32(vec![0; frames])
        } else if total <= u128::from(u64::MAX) {
            FrameTotals::U64(vec![0; frames])
        } else {
            FrameTotals::U128(vec![0; frames])
        }
    }

    /// Adds `w`; saturating only to stay panic-free should the bound above ever not hold.
    fn add(&mut self, f: FrameId, w: u128) {
        let i = f.0 as usize;
        match self {
            FrameTotals::U32(v) => v[i] = v[i].saturating_add(w.try_into().unwrap_or(u32::MAX)),
            FrameTotals::U64(v) => v[i] = v[i].saturating_add(w.try_into().unwrap_or(u64::MAX)),
            FrameTotals::U128(v) => v[i] = v[i].saturating_add(w),
        }
    }

    fn get(&self, f: FrameId) -> u128 {
        let i = f.0 as usize;
        match self {
            FrameTotals::U32(v) => v[i].into(),
            FrameTotals::U64(v) => v[i].into(),
            FrameTotals::U128(v) => v[i],
        }
    }

    fn len(&self) -> usize {
        match self {
            FrameTotals::U32(v) => v.len(),
            FrameTotals::U64(v) => v.len(),
            FrameTotals::U128(v) => v.len(),
        }
    }

    /// Every frame with weight, in id order.
    fn weighed(&self) -> impl Iterator<Item = (FrameId, u128)> + '_ {
        (0..self.len() as u32)
            .map(|i| (FrameId(i), self.get(FrameId(i))))
            .filter(|&(_, w)| w > 0)
    }
}

/// The weight in `metric` of the samples whose stack holds a frame for which `marked` holds
/// (each frame judged once, each stack once).
fn weight_through(profile: &Profile, metric: usize, marked: impl Fn(FrameId) -> bool) -> u128 {
    let frames: Vec<bool> = (0..profile.frame_count() as u32)
        .map(|f| marked(FrameId(f)))
        .collect();
    let mut stacks: Vec<Option<bool>> = vec![None; profile.stack_count()];
    let mut weight = 0u128;
    for row in profile.rows() {
        let through = *stacks[row.stack.0 as usize]
            .get_or_insert_with(|| (profile.stack(row.stack).iter()).any(|f| frames[f.0 as usize]));
        if through {
            weight = weight.saturating_add(row.values[metric]);
        }
    }
    weight
}

/// How a frame reads in the unclassified list: its name and module, as `Frame` displays.
fn frame_label(frame: &Frame) -> Cow<'_, str> {
    match frame.module {
        None => Cow::Borrowed(&frame.name),
        Some(_) => Cow::Owned(frame.to_string()),
    }
}

/// The heaviest `top` entries of `totals`, named for display.
/// Frames of one group of `groups` (one owner and label: frames that differ only by line or
/// module read as one function; see [`label_groups`]) are merged into one entry first. Ordered by weight, then owner name, then
/// label. Works on frame ids and allocates names only for what it keeps, so a profile of
/// millions of distinct frames costs an index of the merged entries, not a string each.
fn heaviest<'p>(
    totals: &FrameTotals,
    groups: &[u32],
    owner_name: &(dyn Fn(FrameId) -> &'p str + Sync),
    label: &(dyn Fn(FrameId) -> Cow<'p, str> + Sync),
    top: usize,
) -> Vec<FrameWeight> {
    if top == 0 {
        return Vec::new();
    }
    let merged = group_sums(totals, groups);
    let weight = |f: FrameId| {
        if merged.is_empty() {
            return totals.get(f);
        }
        merged.get(&f).copied().unwrap_or_else(|| totals.get(f))
    };
    let order = |a: &FrameId, b: &FrameId| {
        weight(*b)
            .cmp(&weight(*a))
            .then_with(|| owner_name(*a).cmp(owner_name(*b)))
            .then_with(|| label(*a).cmp(&label(*b)))
    };
    // the best `top`, straight from the totals: no list of every entry. Once the list is
    // full, its last entry's position, weight and names are kept beside it: most frames are
    // lighter and turned away on their weight alone, and a tie reads only the new frame's
    // names (a million frames of a few weights tie by the hundred thousand)
    let mut kept: Vec<FrameId> = Vec::with_capacity(top);
    let mut worst: Option<(usize, u128, &str, Cow<'p, str>)> = None;
    for f in (0..totals.len() as u32).map(FrameId) {
        if groups[f.0 as usize] != f.0 {
            continue;
        }
        let w = weight(f);
        if w == 0 {
            continue;
        }
        if let Some((at, worst_weight, worst_owner, worst_label)) = &worst {
            let better = w > *worst_weight
                || (w == *worst_weight
                    && match owner_name(f).cmp(worst_owner) {
                        std::cmp::Ordering::Less => true,
                        std::cmp::Ordering::Equal => label(f) < *worst_label,
                        std::cmp::Ordering::Greater => false,
                    });
            if !better {
                continue;
            }
            kept[*at] = f;
        } else {
            kept.push(f);
        }
        if kept.len() == top {
            let at = (0..top)
                .max_by(|&i, &j| order(&kept[i], &kept[j]))
                .expect("top > 0");
            let f = kept[at];
            worst = Some((at, weight(f), owner_name(f), label(f)));
        }
    }
    kept.sort_by(order);
    kept.into_iter()
        .map(|f| FrameWeight {
            owner: owner_name(f).to_string(),
            frame: label(f).into_owned(),
            weight: weight(f),
        })
        .collect()
}

/// The first frame of each group stands for the others: the sums of those that stand for
/// more than one, kept apart, in u128 (one stack may hold two frames of one label, so such a
/// sum may pass the total that sized `totals`).
fn group_sums(totals: &FrameTotals, groups: &[u32]) -> FxHashMap<FrameId, u128> {
    let mut merged: FxHashMap<FrameId, u128> = FxHashMap::default();
    for (f, w) in totals.weighed() {
        let first = FrameId(groups[f.0 as usize]);
        if first != f {
            let sum = merged.entry(first).or_insert_with(|| totals.get(first));
            *sum = sum.saturating_add(w);
        }
    }
    merged
}

/// For every frame `frames` yields, the first of them (in id order) with the same `key`:
/// the frames a list shows as one row (`u32::MAX` for the frames not yielded). Each key is
/// hashed once, to 32 bits; frames whose hash no other frame has are their own group, and
/// only the few whose hash may repeat are sorted by it and compared by key (sorting a
/// million frames by hash was a third of the report's lists on a million distinct frames).
fn label_groups<K: std::hash::Hash + Eq>(
    frame_count: usize,
    frames: impl Iterator<Item = FrameId>,
    key: impl Fn(FrameId) -> K + Sync,
) -> Vec<u32> {
    use rayon::prelude::*;
    let hash = |f: u32| hash32(hash_of(&key(FrameId(f))));
    let ids: Vec<u32> = frames.map(|f| f.0).collect();
    // hashing reads every frame's key, cold memory on millions of them: on every core
    let parallel = ids.len() >= PARALLEL_GROUPING;
    if ids.len() == frame_count {
        // distinct ascending ids below `frame_count`: every frame, so the id is the index
        drop(ids);
        let hashes = if parallel {
            (0..frame_count as u32).into_par_iter().map(hash).collect()
        } else {
            (0..frame_count as u32).map(hash).collect()
        };
        return first_of_each_key(KeyHashes::OfEveryFrame(hashes), key);
    }
    let hashes = if parallel {
        ids.par_iter().map(|&f| hash(f)).collect()
    } else {
        ids.iter().map(|&f| hash(f)).collect()
    };
    first_of_each_key(
        KeyHashes::Of {
            frame_count,
            ids,
            hashes,
        },
        key,
    )
}

/// Frames to group and 32 bits of their keys' hashes (as [`hash32`] folds them).
enum KeyHashes {
    /// Frame i's hash at i, for every frame.
    OfEveryFrame(Vec<u32>),
    /// Some frames (ascending ids) and their hashes, side by side.
    Of {
        frame_count: usize,
        ids: Vec<u32>,
        hashes: Vec<u32>,
    },
}

/// Frames at least this many are grouped on every core.
const PARALLEL_GROUPING: usize = 1 << 16;

/// 32 bits of a 64-bit hash, both halves mixed in.
fn hash32(hash: u64) -> u32 {
    (hash >> 32) as u32 ^ hash as u32
}

/// [`label_groups`] from the hashes of the frames' keys, for callers that hash without making
/// the key (`flame_lines` writes a frame's text into one buffer, and on all cores). Every
/// frame's hashes become its group in place: 4 bytes a frame, where pairs of hash and id
/// sorted were 8 and the groups 4 more, at the report's peak on millions of distinct frames.
fn first_of_each_key<K: std::hash::Hash + Eq>(
    hashes: KeyHashes,
    key: impl Fn(FrameId) -> K,
) -> Vec<u32> {
    let mut maybe_shared: Vec<(u32, u32)> = Vec::new();
    let groups = match hashes {
        KeyHashes::OfEveryFrame(mut groups) => {
            let shared = SharedHashes::of(&groups);
            for (f, slot) in (0u32..).zip(groups.iter_mut()) {
                if shared.may_repeat(*slot) {
                    maybe_shared.push((*slot, f));
                }
                *slot = f;
            }
            groups
        }
        KeyHashes::Of {
            frame_count,
            ids,
            hashes,
        } => {
            let shared = SharedHashes::of(&hashes);
            let mut groups = vec![u32::MAX; frame_count];
            for (f, h) in ids.into_iter().zip(hashes) {
                if shared.may_repeat(h) {
                    maybe_shared.push((h, f));
                }
                groups[f as usize] = f;
            }
            groups
        }
    };
    group_shared(groups, maybe_shared, key)
}

/// `groups` with the frames of `maybe_shared` (hash and id, each its own group so far)
/// grouped with the first of their key.
fn group_shared<K: std::hash::Hash + Eq>(
    mut groups: Vec<u32>,
    mut maybe_shared: Vec<(u32, u32)>,
    key: impl Fn(FrameId) -> K,
) -> Vec<u32> {
    maybe_shared.sort_unstable();
    for run in maybe_shared.chunk_by(|a, b| a.0 == b.0) {
        if run.len() == 1 {
            continue;
        }
        // ids ascend within a run, so the first of a key is met first
        let mut firsts: FxHashMap<K, u32> = FxHashMap::default();
        for &(_, f) in run {
            groups[f as usize] = *firsts.entry(key(FrameId(f))).or_insert(f);
        }
    }
    groups
}

/// Which 32-bit hashes may occur more than once among a list's: a bit per slot, as a Bloom
/// filter of one hash function, with 8 to 16 slots an entry (2 to 4 bits an entry in all), so
/// one hash in 8 to 16 that occurs once is taken for shared. A hash it calls single is
/// single.
struct SharedHashes {
    mask: usize,
    seen: Vec<u64>,
    repeated: Vec<u64>,
}

impl SharedHashes {
    fn of(hashes: &[u32]) -> SharedHashes {
        let slots = (hashes.len().saturating_mul(8))
            .next_power_of_two()
            .clamp(64, 1 << 32);
        let mut filter = SharedHashes {
            mask: slots - 1,
            seen: vec![0; slots / 64],
            repeated: vec![0; slots / 64],
        };
        for &h in hashes {
            let (word, bit) = filter.slot(h);
            if filter.seen[word] & bit != 0 {
                filter.repeated[word] |= bit;
            }
            filter.seen[word] |= bit;
        }
        filter
    }

    fn slot(&self, hash: u32) -> (usize, u64) {
        let slot = hash as usize & self.mask;
        (slot / 64, 1 << (slot % 64))
    }

    fn may_repeat(&self, hash: u32) -> bool {
        let (word, bit) = self.slot(hash);
        self.repeated[word] & bit != 0
    }
}

fn type_weights(
    profile: &Profile,
    types: FxHashMap<FrameId, FxHashMap<OwnerId, u128>>,
) -> Vec<TypeWeight> {
    let mut by_name: FxHashMap<String, FxHashMap<OwnerId, u128>> = FxHashMap::default();
    for (f, owners) in types {
        let entry = by_name
            .entry(profile.frame(f).name.to_string())
            .or_default();
        for (o, w) in owners {
            *entry.entry(o).or_default() += w;
        }
    }
    let mut out: Vec<TypeWeight> = by_name
        .into_iter()
        .map(|(name, owners)| {
            let mut owners: Vec<(OwnerId, u128)> = owners.into_iter().collect();
            owners.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            TypeWeight {
                name,
                weight: owners.iter().map(|(_, w)| w).sum(),
                owners,
            }
        })
        .collect();
    out.sort_by(|a, b| b.weight.cmp(&a.weight).then_with(|| a.name.cmp(&b.name)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// The kept-worst shortcut picks what sorting every entry and taking the first `top`
        /// picks: ties on weight by owner, then label, with groups merged first.
        #[test]
        fn heaviest_is_the_head_of_everything_sorted(
            entries in proptest::collection::vec((0u32..4, 0u8..3, 0u8..12), 1..60),
            top in 1usize..8,
        ) {
            let owners = ["lib", "app", "jdk"];
            let n = entries.len();
            let labels: Vec<String> = entries.iter().map(|e| format!("f{}", e.2)).collect();
            let mut totals = FrameTotals::new(n, u128::from(u32::MAX));
            for (i, e) in entries.iter().enumerate() {
                totals.add(FrameId(i as u32), u128::from(e.0));
            }
            let owner = |f: FrameId| owners[entries[f.0 as usize].1 as usize];
            let label = |f: FrameId| Cow::Borrowed(labels[f.0 as usize].as_str());
            let all = (0..n as u32).map(FrameId);
            let groups = label_groups(n, all.clone(), |f| (owner(f), label(f)));
            let got = heaviest(&totals, &groups, &owner, &label, top);
            // the oracle: every group summed, sorted, cut
            let mut sums: FxHashMap<(&str, String), u128> = FxHashMap::default();
            for f in all {
                *sums.entry((owner(f), label(f).into_owned())).or_default() += totals.get(f);
            }
            let mut want: Vec<(u128, &str, String)> =
                sums.into_iter().filter(|e| e.1 > 0).map(|((o, l), w)| (w, o, l)).collect();
            want.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(b.1)).then(a.2.cmp(&b.2)));
            want.truncate(top);
            let got: Vec<(u128, &str, String)> =
                got.iter().map(|e| (e.weight, e.owner.as_str(), e.frame.clone())).collect();
            proptest::prop_assert_eq!(got, want);
        }

        /// A hash the filter calls single occurs once.
        #[test]
        fn shared_hashes_never_miss_a_repeat(hashes in proptest::collection::vec(0u32..5000, 0..300)) {
            let shared = SharedHashes::of(&hashes);
            for &h in &hashes {
                if !shared.may_repeat(h) {
                    proptest::prop_assert_eq!(hashes.iter().filter(|&&x| x == h).count(), 1);
                }
            }
        }
    }

    #[test]
    fn label_groups_name_the_first_frame_of_each_key_also_when_hashes_collide() {
        let keys = ["a", "b", "a", "c", "b", "a"];
        let all = || (0..keys.len() as u32).map(FrameId);
        let by_text = label_groups(keys.len() + 1, all(), |f| keys[f.0 as usize]);
        assert_eq!(by_text, [0, 1, 0, 3, 1, 0, u32::MAX]);
        /// Every key hashes alike, so all frames meet in one run of equal hashes.
        #[derive(PartialEq, Eq)]
        struct Colliding(&'static str);
        impl std::hash::Hash for Colliding {
            fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
                state.write_u8(7);
            }
        }
        let colliding = label_groups(keys.len(), all(), |f| Colliding(keys[f.0 as usize]));
        assert_eq!(colliding, [0, 1, 0, 3, 1, 0]);
        // frames not yielded keep no group
        let some = label_groups(keys.len(), [1, 2, 4].map(FrameId).into_iter(), |f| {
            keys[f.0 as usize]
        });
        assert_eq!(some, [u32::MAX, 1, 2, u32::MAX, 1, u32::MAX]);
    }

    #[test]
    fn frame_totals_are_as_wide_as_the_total_needs() {
        let most = [u128::from(u32::MAX), u128::from(u64::MAX), u128::MAX];
        for (i, total) in most.into_iter().enumerate() {
            let mut t = FrameTotals::new(3, total);
            let width = match t {
                FrameTotals::U32(_) => 0,
                FrameTotals::U64(_) => 1,
                FrameTotals::U128(_) => 2,
            };
            assert_eq!(width, i);
            t.add(FrameId(1), total - 5);
            t.add(FrameId(1), 5);
            t.add(FrameId(2), 1);
            assert_eq!(
                t.weighed().collect::<Vec<_>>(),
                [(FrameId(1), total), (FrameId(2), 1)]
            );
        }
    }

    /// `p` aggregated with `main.` as user code and no presets, intervals on.
    fn aggregate_with_user_main(p: &Profile) -> (Aggregate, RuleSet) {
        use crate::classify::RuleOptions;
        let options = RuleOptions {
            user_prefixes: vec!["main.".into()],
            no_presets: true,
            ..RuleOptions::default()
        };
        let rules = RuleSet::build(&options, std::slice::from_ref(p)).unwrap();
        let classes = rules.classify(p);
        let options = AggregateOptions {
            metric: 0,
            types_as_frames: false,
            threads: false,
            top: 5,
            intervals: true,
            user_hint: true,
        };
        (aggregate(p, &rules, &classes, &options), rules)
    }

    #[test]
    fn fixed_thread_roles_do_not_inflate_the_interval() {
        use crate::model::{Frame, SampleType, Unit};
        // 8 threads of 100 samples: 4 run only `main.work` (user), 4 only `lib.work`. No
        // times: the samples are independent draws, p = 1/2 of 800, the binomial
        // 0.25/800 — not the variance between the threads' fixed roles (issue 54)
        let mut p = Profile::new(vec![SampleType::new("samples", Unit::Count)]);
        for t in 0..8 {
            let name = if t < 4 { "main.work" } else { "lib.work" };
            let f = p.intern_frame(Frame::named(name, FrameKind::Native));
            let s = p.intern_stack(&[f]);
            let thread = p.intern_thread(&format!("t{t}"));
            p.add_sample(s, Some(thread), &[100]);
        }
        let (agg, rules) = aggregate_with_user_main(&p);
        let d = &agg.dispersion;
        assert_eq!((d.samples, d.counted), (800, true));
        // q_r = W_r²/n_r = 100 per row
        assert_eq!(d.total_sq, 800.0);
        let user = rules.owners().iter().position(|o| o.name == "user");
        let sums = d.sums(&agg.all, user.unwrap(), false, report::View::Owner);
        assert_eq!((sums.weight, sums.total, sums.owner_sq), (400, 800, 400.0));
        let e = sums.estimate(800.0);
        assert_eq!(e.method, interval::Method::Wilson);
        assert!((e.var - 0.25 / 800.0).abs() < 1e-15, "{}", e.var);
    }

    #[test]
    fn time_stamped_samples_are_judged_in_time_blocks_of_all_threads() {
        use crate::model::{Frame, SampleType, Timeline};
        // the JVM service's shape: each millisecond, 4 worker threads take one sample each,
        // in user code with probability 0.88 (a fixed draw below), and 4 idle-ish threads
        // one sample each in a library. Per bucket the user weight is a sum of 4 Bernoulli
        // draws: Var(p) = 1000 · 4 · 0.88 · 0.12 / 8000² = 6.6e-6 (SE 0.26 points), below
        // the binomial 0.44 · 0.56 / 8000 = 3.1e-5 that ignores the roles, and far below
        // the variance between the roles (0.44² a thread) that issue 25's switch measured
        let mut p = Profile::new(vec![SampleType::samples()]);
        let main = p.intern_frame(Frame::named("main.work", FrameKind::Native));
        let lib = p.intern_frame(Frame::named("lib.work", FrameKind::Native));
        let (main, lib) = (p.intern_stack(&[main]), p.intern_stack(&[lib]));
        let threads: Vec<_> = (0..8).map(|t| p.intern_thread(&format!("t{t}"))).collect();
        let mut timeline = Timeline::new(1);
        let mut seed = 7u64;
        for ms in 0..1000u64 {
            for (t, &thread) in threads.iter().enumerate() {
                seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                let user = t < 4 && (seed >> 33) % 100 < 88;
                let stack = if user { main } else { lib };
                p.add_sample(stack, Some(thread), &[1]);
                timeline.add(ms * 1_000_000 + 500_000, stack.0, 0, 1);
            }
        }
        p.meta.timeline = Some(timeline);
        let (agg, rules) = aggregate_with_user_main(&p);
        let user = rules
            .owners()
            .iter()
            .position(|o| o.name == "user")
            .unwrap();
        let d = &agg.dispersion;
        assert_eq!(d.bucket_nanos, 1_000_000);
        let e = d
            .sums(&agg.all, user, false, report::View::Owner)
            .estimate(d.samples as f64);
        assert_eq!(e.method, interval::Method::TimeBlocks);
        let want = 1000.0 * 4.0 * 0.88 * 0.12 / 64e6;
        assert!(
            e.var > 0.6 * want && e.var < 1.5 * want,
            "{} vs {want}",
            e.var
        );
        assert!(e.block.unwrap() < 3.0, "{:?}", e.block);
    }

    #[test]
    fn thread_pools_fold() {
        assert_eq!(thread_group("worker-12"), "worker-*");
        assert_eq!(thread_group("pool-1-thread-3"), "pool-*-thread-*");
        assert_eq!(thread_group("main"), "main");
    }
}
