//! Aggregation: (profile, classification, chosen metric) → weights per owner and category in
//! the three views (docs/design.md "Semantics of the three views"), with everything the report says
//! beside them. Each row's stack facts are read once ([`walk`]) and handed to one
//! accumulator per figure, each in the file of the figures it fills.
//!
//! - [`walk`]: how a sample gets its owner (the stack walk and the frame predicates it asks)
//! - [`views`]: weights per owner and category in the three views, per thread group
//! - [`quality`]: how far the recording supports the views, and its findings
//! - [`dispersion`]: the sums behind the shares' sampling error; [`interval`] the intervals
//! - [`heaviest`]: the heaviest frames and allocated types, frames grouped by label
//! - [`user_hint`]: the `--user PREFIX` that would move the most weight to user code
//! - [`figures`]: one input's figures ([`Aggregate`]) and the findings read from them
//! - [`timeline`]: owners per time bucket and the warm-up found in them
//! - [`report`], [`rows`]: the report over inputs, and its rows as data
//! - [`functions`]: `explain`'s functions; [`page`]: the HTML page's tree and entries
//! - [`flame_lines`]: folded lines for flame graphs, built from their data (`flame_stacks`)
//!   and sorted as text (`line_order`)

pub mod dispersion;
pub mod figures;
pub mod flame_lines;
mod flame_stacks;
pub mod functions;
pub mod heaviest;
pub mod interval;
mod line_order;
mod marks;
mod options;
pub mod page;
pub mod quality;
pub mod report;
pub mod rows;
pub mod timeline;
pub mod user_hint;
pub mod views;
pub mod walk;

pub use dispersion::Dispersion;
pub use figures::Aggregate;
pub use heaviest::FrameWeight;
pub use options::AggregateOptions;
pub use views::{Attribution, ViewWeights};
pub(crate) use walk::StackWalk;
pub use walk::{StackOwners, category_index, stack_owners};

use crate::classify::{Classification, RuleSet};
use crate::model::{Category, Profile};
use dispersion::DispersionBuilder;
use heaviest::{FrameAccumulator, type_weights};
use quality::QualityAccumulator;
use user_hint::suggest_user;
use views::{ThreadGroups, negative_attribution};
use walk::{FactCache, frame_traits};

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
            d.finish(profile, rules, classes, options)
        }),
        timeline: None,
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
