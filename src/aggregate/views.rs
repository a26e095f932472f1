//! Weights per owner and category in the three views, and their accumulator: every row's
//! weight added to its stack's self owner, owner-view owner and anywhere owners (and their
//! categories), for the whole input, per thread group (`--threads`) and for the negative part
//! of a delta profile.

use super::walk::{FactCache, StackFacts, category_index};
use crate::classify::RuleSet;
use crate::model::{Category, OwnerId, Profile};
use rustc_hash::FxHashMap;

/// The three views (docs/design.md "Semantics of the three views").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    Self_,
    Owner,
    Anywhere,
}

impl View {
    pub const ALL: [View; 3] = [View::Self_, View::Owner, View::Anywhere];

    /// The view's place in [`View::ALL`], for figures kept per view in arrays of three.
    pub fn index(self) -> usize {
        match self {
            View::Self_ => 0,
            View::Owner => 1,
            View::Anywhere => 2,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            View::Self_ => "self",
            View::Owner => "owner",
            View::Anywhere => "anywhere",
        }
    }

    pub fn parse(s: &str) -> Option<View> {
        View::ALL.into_iter().find(|v| v.as_str() == s)
    }

    pub fn of(self, w: &ViewWeights) -> u128 {
        match self {
            View::Self_ => w.self_,
            View::Owner => w.owner,
            View::Anywhere => w.anywhere,
        }
    }
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

impl Attribution {
    pub(super) fn new(owners: usize) -> Attribution {
        Attribution {
            total: 0,
            stackless: 0,
            owners: vec![ViewWeights::default(); owners],
            categories: vec![ViewWeights::default(); Category::ALL.len()],
        }
    }

    /// The weights of category `c` (what `categories` holds at its position).
    pub fn category(&self, c: Category) -> &ViewWeights {
        &self.categories[category_index(c) as usize]
    }

    pub(super) fn add(
        &mut self,
        facts: &StackFacts,
        cache: &FactCache<'_>,
        w: u128,
        rules: &RuleSet,
    ) {
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

/// The negative part of signed values (pprof delta profiles), attributed as the positive.
pub(super) fn negative_attribution(
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

/// `--threads`: an attribution per thread group (pool numbers folded).
pub(super) struct ThreadGroups {
    groups: FxHashMap<String, Attribution>,
    n_owners: usize,
}

impl ThreadGroups {
    pub(super) fn new(n_owners: usize) -> ThreadGroups {
        ThreadGroups {
            groups: FxHashMap::default(),
            n_owners,
        }
    }

    pub(super) fn add(
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
    pub(super) fn finish(self) -> Vec<(String, Attribution)> {
        let mut threads: Vec<(String, Attribution)> = self.groups.into_iter().collect();
        threads.sort_by(|a, b| b.1.total.cmp(&a.1.total).then(a.0.cmp(&b.0)));
        threads
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
