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

pub mod flame;
mod marks;
pub mod quality;
pub mod report;

use crate::classify::{Classification, RuleSet};
use crate::model::{Category, FrameId, FrameKind, OwnerId, Profile, StackId, UNCLASSIFIED};
use marks::Marks;
use quality::Quality;
use rustc_hash::FxHashMap;

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
}

/// Weights of one owner or category in the three views.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ViewWeights {
    pub self_: u128,
    pub owner: u128,
    pub anywhere: u128,
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
    /// Heaviest leaf frames, at most `top` per owner.
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
    /// The `--user PREFIX` that would claim the heaviest unclassified frames, and the weight
    /// of the heaviest of them.
    pub suggested_user: Option<(String, u128)>,
    /// The negative part of a delta profile's values in the metric, attributed as the
    /// positive part is; shares are never computed from it (see `model::NegativeWeights`).
    pub negative: Attribution,
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
}

struct FactCache<'a> {
    profile: &'a Profile,
    rules: &'a RuleSet,
    classes: &'a Classification,
    types_as_frames: bool,
    facts: Vec<Option<StackFacts>>,
    owners_flat: Vec<OwnerId>,
    categories_flat: Vec<u8>,
    frames_flat: Vec<FrameId>,
    /// Which owners, categories and unclassified frames the stack being computed has shown.
    owners_seen: Marks,
    categories_seen: Marks,
    frames_seen: Marks,
}

impl<'a> FactCache<'a> {
    fn new(
        profile: &'a Profile,
        rules: &'a RuleSet,
        classes: &'a Classification,
        types_as_frames: bool,
    ) -> FactCache<'a> {
        FactCache {
            profile,
            rules,
            classes,
            types_as_frames,
            facts: vec![None; profile.stack_count()],
            owners_flat: Vec::new(),
            categories_flat: Vec::new(),
            frames_flat: Vec::new(),
            owners_seen: Marks::new(rules.owners().len()),
            categories_seen: Marks::new(Category::ALL.len()),
            frames_seen: Marks::new(profile.frame_count()),
        }
    }

    fn get(&mut self, stack: StackId) -> StackFacts {
        if let Some(f) = &self.facts[stack.0 as usize] {
            return f.clone();
        }
        let f = self.compute(stack);
        self.facts[stack.0 as usize] = Some(f.clone());
        f
    }

    fn compute(&mut self, stack: StackId) -> StackFacts {
        let all = self.profile.stack(stack);
        let alloc_type = all
            .first()
            .copied()
            .filter(|&f| self.profile.frame(f).kind == FrameKind::AllocType);
        // By default the allocated-class leaf says *what* was allocated, not who: skip it.
        let skip = if self.types_as_frames {
            0
        } else {
            all.iter()
                .take_while(|&&f| self.profile.frame(f).kind == FrameKind::AllocType)
                .count()
        };
        let frames = &all[skip..];
        let unsymbolized = OwnerId::UNSYMBOLIZED;
        let owner_of = |f: FrameId| self.classes.owner_of(f);
        let self_owner = frames.first().map_or(unsymbolized, |&f| owner_of(f));
        let owner_pos = frames
            .iter()
            .position(|&f| !self.rules.owner(owner_of(f)).transparent);
        let (owner, owner_frame) = match owner_pos {
            Some(i) => (owner_of(frames[i]), Some(frames[i])),
            None => (self_owner, frames.first().copied()),
        };
        let start = self.owners_flat.len() as u32;
        let cat_start = self.categories_flat.len() as u32;
        let unc_start = self.frames_flat.len() as u32;
        if frames.is_empty() {
            self.owners_flat.push(unsymbolized);
            self.categories_flat.push(category_index(Category::Unknown));
        }
        self.owners_seen.clear();
        self.categories_seen.clear();
        self.frames_seen.clear();
        for &f in frames {
            let o = owner_of(f);
            if self.owners_seen.insert(o.0 as usize) {
                self.owners_flat.push(o);
                let c = category_index(self.rules.owner(o).category);
                if self.categories_seen.insert(c as usize) {
                    self.categories_flat.push(c);
                }
            }
            if o == OwnerId::UNCLASSIFIED && self.frames_seen.insert(f.0 as usize) {
                self.frames_flat.push(f);
            }
        }
        let frame = |f: FrameId| self.profile.frame(f);
        let unresolved =
            |f: Option<FrameId>, o: OwnerId| f.is_none_or(|f| quality::is_unresolved(frame(f), o));
        let leaf_unresolved = unresolved(frames.first().copied(), self_owner);
        StackFacts {
            stackless: all.is_empty(),
            depth: frames.len(),
            ownerless: owner_pos.is_none()
                && quality::is_cut_short(
                    &frames
                        .iter()
                        .map(|&f| (frame(f), owner_of(f)))
                        .collect::<Vec<_>>(),
                ),
            leaf_unresolved,
            owner_unresolved: unresolved(owner_frame, owner),
            any_unresolved: frames.is_empty()
                || frames
                    .iter()
                    .any(|&f| quality::is_unresolved(frame(f), owner_of(f))),
            leaf_module_only: !leaf_unresolved
                && frames
                    .first()
                    .is_some_and(|&f| frame(f).kind == FrameKind::Unknown),
            self_owner,
            owner,
            self_frame: frames.first().copied(),
            owner_frame,
            alloc_type,
            anywhere: (start, self.owners_flat.len() as u32),
            categories: (cat_start, self.categories_flat.len() as u32),
            unclassified: (unc_start, self.frames_flat.len() as u32),
        }
    }
}

/// The position of `c` in [`Category::ALL`]: the one order of categories, which indexes the
/// per-category weights, the `--by category` rows, the gate's category subjects and the
/// flame colours.
pub fn category_index(c: Category) -> u8 {
    Category::ALL
        .iter()
        .position(|&x| x == c)
        .expect("Category::ALL lists every category") as u8
}

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

/// Attributes every sample of `profile` in the chosen metric.
pub fn aggregate(
    profile: &Profile,
    rules: &RuleSet,
    classes: &Classification,
    options: &AggregateOptions,
) -> Aggregate {
    let mut cache = FactCache::new(profile, rules, classes, options.types_as_frames);
    let n_owners = rules.owners().len();
    let mut all = Attribution::new(n_owners);
    let mut threads: FxHashMap<String, Attribution> = FxHashMap::default();
    let mut self_frames: FxHashMap<(OwnerId, FrameId), u128> = FxHashMap::default();
    let mut owner_frames: FxHashMap<(OwnerId, FrameId), u128> = FxHashMap::default();
    let mut unclassified: FxHashMap<FrameId, u128> = FxHashMap::default();
    let mut types: FxHashMap<FrameId, FxHashMap<OwnerId, u128>> = FxHashMap::default();
    let mut quality = Quality::default();
    let mut unresolved_modules: FxHashMap<Option<&str>, u128> = FxHashMap::default();
    let mut ownerless_modules: FxHashMap<Option<&str>, u128> = FxHashMap::default();
    for row in profile.rows() {
        let w = row.values[options.metric];
        if w == 0 {
            continue;
        }
        let facts = cache.get(row.stack);
        all.add(&facts, &cache, w, rules);
        if options.threads {
            let name = row.thread.map_or_else(
                || "(no thread)".to_string(),
                |t| thread_group(profile.thread_name(t)),
            );
            threads
                .entry(name)
                .or_insert_with(|| Attribution::new(n_owners))
                .add(&facts, &cache, w, rules);
        }
        if facts.stackless {
            // no frame: nothing to judge the recording's quality by, nothing to list
            continue;
        }
        quality.max_depth = quality.max_depth.max(facts.depth);
        if facts.ownerless {
            quality.ownerless += w;
            let stack = profile.stack(row.stack).iter().map(|&f| profile.frame(f));
            *ownerless_modules.entry(quality::cut_in(stack)).or_default() += w;
        }
        if facts.leaf_unresolved {
            quality.unresolved_leaf += w;
            let module = facts
                .self_frame
                .and_then(|f| profile.frame(f).module.as_deref());
            *unresolved_modules.entry(module).or_default() += w;
        }
        if facts.owner_unresolved {
            quality.unresolved_owner += w;
        }
        if facts.any_unresolved {
            quality.unresolved_anywhere += w;
        }
        if facts.leaf_module_only {
            quality.module_only_leaf += w;
        }
        if let Some(f) = facts.self_frame {
            *self_frames.entry((facts.self_owner, f)).or_default() += w;
        }
        if let Some(f) = facts.owner_frame {
            *owner_frames.entry((facts.owner, f)).or_default() += w;
        }
        let (a, b) = facts.unclassified;
        for &f in &cache.frames_flat[a as usize..b as usize] {
            *unclassified.entry(f).or_default() += w;
        }
        if let Some(t) = facts.alloc_type {
            *types.entry(t).or_default().entry(facts.owner).or_default() += w;
        }
    }
    // the stacks with positive weight: what the report calls distinct
    let distinct_stacks = cache.facts.iter().filter(|f| f.is_some()).count();
    let mut negative = Attribution::new(n_owners);
    for row in profile.negative.rows() {
        let w = row.values[options.metric];
        if w > 0 {
            let facts = cache.get(row.stack);
            negative.add(&facts, &cache, w, rules);
        }
    }
    let name_frames = |map: FxHashMap<(OwnerId, FrameId), u128>, per_owner: bool| {
        heaviest(
            map.into_iter().map(|((o, f), w)| FrameWeight {
                owner: rules.owner(o).name.clone(),
                frame: profile.frame(f).name.to_string(),
                weight: w,
            }),
            options.top,
            per_owner,
        )
    };
    let mut by_module: Vec<quality::UnresolvedWeight> = unresolved_modules
        .into_iter()
        .map(|(module, weight)| quality::UnresolvedWeight {
            module: module.unwrap_or("[unknown]").to_string(),
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
    let mut ownerless_by_module: Vec<(String, u128)> = ownerless_modules
        .into_iter()
        .map(|(m, w)| (m.unwrap_or("[unknown]").to_string(), w))
        .collect();
    ownerless_by_module.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    quality.ownerless_by_module = ownerless_by_module;
    quality.recording = profile.meta.recording.clone();
    let suggested_user = quality::suggest_user_prefix(
        unclassified
            .iter()
            .map(|(&f, &w)| (&*profile.frame(f).name, w)),
        all.total,
    );
    let mut threads: Vec<(String, Attribution)> = threads.into_iter().collect();
    threads.sort_by(|a, b| b.1.total.cmp(&a.1.total).then(a.0.cmp(&b.0)));
    Aggregate {
        all,
        top_self: name_frames(self_frames, true),
        top_owner_frames: name_frames(owner_frames, false),
        unclassified_frames: heaviest(
            unclassified.into_iter().map(|(f, w)| FrameWeight {
                owner: UNCLASSIFIED.to_string(),
                frame: profile.frame(f).to_string(),
                weight: w,
            }),
            options.top,
            false,
        ),
        types: type_weights(profile, types),
        threads,
        quality,
        suggested_user,
        distinct_stacks,
        negative,
    }
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
    let mut cache = FactCache::new(profile, rules, classes, types_as_frames);
    (0..profile.stack_count())
        .map(|i| {
            let facts = cache.get(StackId(i as u32));
            StackOwners {
                self_owner: facts.self_owner,
                owner: facts.owner,
            }
        })
        .collect()
}

/// Inclusive weight of every frame (counted once per sample even under recursion), indexed
/// by `FrameId`; what `explain` ranks frames by.
pub fn frame_inclusive_weights(profile: &Profile, metric: usize) -> Vec<u128> {
    let mut weights = vec![0u128; profile.frame_count()];
    let mut seen = Marks::new(profile.frame_count());
    for row in profile.rows() {
        let w = row.values[metric];
        seen.clear();
        for &f in profile.stack(row.stack) {
            if seen.insert(f.0 as usize) {
                weights[f.0 as usize] += w;
            }
        }
    }
    weights
}

/// Merges entries of equal (owner, frame name) — frames that differ only by line or module
/// read as one function — then keeps the heaviest `top` (per owner when `per_owner`).
fn heaviest(
    items: impl Iterator<Item = FrameWeight>,
    top: usize,
    per_owner: bool,
) -> Vec<FrameWeight> {
    let mut merged: FxHashMap<(String, String), u128> = FxHashMap::default();
    for item in items {
        *merged.entry((item.owner, item.frame)).or_default() += item.weight;
    }
    let mut list: Vec<FrameWeight> = merged
        .into_iter()
        .map(|((owner, frame), weight)| FrameWeight {
            owner,
            frame,
            weight,
        })
        .collect();
    list.sort_by(|a, b| {
        b.weight
            .cmp(&a.weight)
            .then_with(|| a.owner.cmp(&b.owner))
            .then_with(|| a.frame.cmp(&b.frame))
    });
    if !per_owner {
        list.truncate(top);
        return list;
    }
    let mut kept: FxHashMap<String, usize> = FxHashMap::default();
    list.retain(|fw| {
        let n = kept.entry(fw.owner.clone()).or_default();
        *n += 1;
        *n <= top
    });
    list
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

    #[test]
    fn thread_pools_fold() {
        assert_eq!(thread_group("worker-12"), "worker-*");
        assert_eq!(thread_group("pool-1-thread-3"), "pool-*-thread-*");
        assert_eq!(thread_group("main"), "main");
    }
}
