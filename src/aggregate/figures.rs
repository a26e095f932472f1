//! One input's figures ([`Aggregate`]) and the findings read from them.

use super::heaviest::{FrameWeight, TypeWeight};
use super::quality::{self, Quality};
use super::views::Attribution;
use super::views::View;
use super::{dispersion::Dispersion, timeline, user_hint};
use crate::model::{Category, OwnerId};

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
    /// move ([`user_hint::suggest_user_prefix`]).
    pub suggested_user: Option<user_hint::UserHint>,
    /// The negative part of a delta profile's values in the metric, attributed as the
    /// positive part is; shares are never computed from it (see `model::NegativeWeights`).
    pub negative: Attribution,
    /// What the sampling error of `all`'s shares needs (issue 25, see [`super::interval`]).
    pub dispersion: Dispersion,
    /// The owners per time bucket (`report --by time`), with the warm-up found in them.
    pub timeline: Option<timeline::OwnerTimeline>,
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
        let user = self.all.category(Category::User);
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
        let user = self.all.category(Category::User);
        let share = quality::percent(user.owner, total);
        (self.quality.jvm_perf_map && user.anywhere > 0 && share < quality::JIT_INLINING_PERCENT)
            .then_some(quality::Finding::JitInlining { user: share })
    }

    /// The percent of the weight that frames no rule, preset or guess names decide in `view`
    /// (the leaf for self, the owner frame for owner, any frame for anywhere): what the
    /// report's quality line shows and `--max-unclassified` guards (issue 29).
    pub fn unclassified_percent(&self, view: View) -> f64 {
        quality::percent(self.unclassified_weight(view), self.all.total)
    }

    /// The weight behind [`Aggregate::unclassified_percent`].
    pub fn unclassified_weight(&self, view: View) -> u128 {
        (self.all.owners)
            .get(OwnerId::UNCLASSIFIED.0 as usize)
            .map_or(0, |w| view.of(w))
    }
}
