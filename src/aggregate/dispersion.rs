//! The sampling error of the shares (issue 25): the sums of squared weights behind them
//! ([`Dispersion`]), how many samples stand behind a row ([`Counting`]), and the accumulator
//! that fills them row by row. [`super::interval`] turns the sums into intervals.

use super::interval;
use super::views::Attribution;
use super::views::View;
use super::walk::{FactCache, StackFacts, category_index};
use super::{AggregateOptions, timeline};
use crate::classify::{Classification, RuleSet};
use crate::model::{Category, OwnerId, Profile};

/// Sums of squared weights behind the shares of [`super::Aggregate::all`], for their intervals
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
        view: View,
    ) -> interval::ShareSums {
        let v = view.index();
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
pub(super) struct DispersionBuilder {
    d: Dispersion,
    counting: Counting,
    /// Σ n_r as a real: `value / period` and the Poisson counts are not integers.
    samples: f64,
}

impl DispersionBuilder {
    pub(super) fn new(profile: &Profile, metric: usize, owners: usize) -> DispersionBuilder {
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

    pub(super) fn add(
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

    /// The sums, with the time blocks where the samples carry a time (a second pass, over
    /// the timeline's buckets).
    pub(super) fn finish(
        mut self,
        profile: &Profile,
        rules: &RuleSet,
        classes: &Classification,
        options: &AggregateOptions,
    ) -> Dispersion {
        self.d.samples = self.samples.round() as u128;
        if let Some(t) = &profile.meta.timeline {
            add_time_blocks(&mut self.d, profile, t, rules, classes, options);
        }
        self.d
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aggregate::{Aggregate, aggregate};
    use crate::model::FrameKind;

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
        let sums = d.sums(&agg.all, user.unwrap(), false, View::Owner);
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
            .sums(&agg.all, user, false, View::Owner)
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
}
