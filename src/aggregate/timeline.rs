//! Owner shares over time (issue 27): the profile's timeline ([`crate::model::Timeline`])
//! grouped into the buckets `--bucket` asks for, each bucket attributed exactly as the whole
//! report is (the same stack facts), and the warm-up finding: the first buckets' owner shares
//! differing from the settled rest beyond their sampling noise.
//!
//! # The warm-up test
//!
//! The settled state is the second half of the buckets, pooled. Each bucket of the first half
//! is compared with it owner by owner in the owner view: the difference of the two shares
//! over its standard error (each share's variance from [`interval::ShareSums`], the same
//! delta-method variance the report's intervals use; the two are independent samples). A
//! bucket *differs* when some owner's share is at least [`MIN_SHIFT`] percentage points away
//! and its |z| passes the normal quantile at 1 % two-sided, Bonferroni-corrected over the
//! buckets and owners tested. A warm-up is a first bucket that differs; it ends at the first
//! two consecutive buckets that do not (one quiet bucket inside a warm-up does not end it).
//! Samples are taken as independent, as everywhere in whose; the practical floor of
//! [`MIN_SHIFT`] keeps huge recordings from calling a 0.3-point wobble a warm-up.

use super::interval::{self, ShareSums};
use super::{Attribution, FactCache, ViewWeights, category_index};
use crate::classify::{Classification, RuleSet};
use crate::model::{Category, OwnerId, Profile, StackId, Timeline};

/// Percentage points an owner's share must move for a bucket to differ (a practical floor
/// on top of the statistical test).
pub const MIN_SHIFT: f64 = 5.0;

/// Buckets a report shows at the most.
pub const MAX_SHOWN: usize = 1000;

/// The fewest buckets a warm-up is looked for in.
const MIN_BUCKETS_FOR_WARMUP: usize = 4;

/// `--bucket`: a fixed width, or a share of the recording's time span.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum BucketSize {
    /// Nanoseconds.
    Width(u64),
    /// Percent of the time from the first sample to the last.
    Percent(f64),
}

impl Default for BucketSize {
    fn default() -> Self {
        BucketSize::Percent(5.0)
    }
}

impl BucketSize {
    /// `1s`, `250ms`, `500us`, `2m`, or `5%` (0 < N ≤ 100).
    pub fn parse(text: &str) -> Result<BucketSize, String> {
        let t = text.trim();
        let bad = || {
            format!(
                "--bucket {text}: expected a duration (`1s`, `250ms`, `500us`, `2m`) or a \
                 percent of the recording (`5%`)"
            )
        };
        if let Some(p) = t.strip_suffix('%') {
            let p: f64 = p.trim().parse().map_err(|_| bad())?;
            if !(p > 0.0 && p <= 100.0) {
                return Err(format!("--bucket {text}: a percent from above 0 to 100"));
            }
            return Ok(BucketSize::Percent(p));
        }
        let units: [(&str, f64); 5] = [
            ("ns", 1.0),
            ("us", 1e3),
            ("ms", 1e6),
            ("s", 1e9),
            ("m", 60e9),
        ];
        // the longest suffix first: `ms` before `m` and `s`
        let mut sorted = units;
        sorted.sort_by_key(|(u, _)| std::cmp::Reverse(u.len()));
        for (unit, scale) in sorted {
            if let Some(n) = t.strip_suffix(unit) {
                let n: f64 = n.trim().parse().map_err(|_| bad())?;
                let nanos = n * scale;
                if !(1.0..1e18).contains(&nanos) {
                    return Err(format!("--bucket {text}: a duration of at least 1ns"));
                }
                return Ok(BucketSize::Width(nanos as u64));
            }
        }
        Err(bad())
    }
}

/// One bucket of the report: its time range and weights.
#[derive(Debug, Clone, Default)]
pub struct TimeSlot {
    /// Nanoseconds on the recording's clock, start included, end excluded; the edges of the
    /// timeline's own buckets it is made of, so they may differ from the asked-for width by
    /// up to [`OwnerTimeline::resolution`].
    pub start: u64,
    pub end: u64,
    /// The bucket's weights, as the report attributes a whole input.
    pub all: Attribution,
    /// Samples behind `all.total` (rows of the timeline when the input has no sample count).
    pub samples: u128,
    /// `Q = Σ W_r²/n_r` and per owner `S_o` in the owner view (see [`interval`]).
    total_sq: f64,
    owner_sq: Vec<f64>,
}

impl TimeSlot {
    fn new(owners: usize) -> TimeSlot {
        TimeSlot {
            all: Attribution {
                owners: vec![ViewWeights::default(); owners],
                categories: vec![ViewWeights::default(); Category::ALL.len()],
                ..Attribution::default()
            },
            owner_sq: vec![0.0; owners],
            ..TimeSlot::default()
        }
    }

    /// The owner-view share of `owner` with its variance, as fractions.
    fn estimate(&self, owner: usize) -> interval::Estimate {
        ShareSums {
            weight: self.all.owners[owner].owner,
            total: self.all.total,
            owner_sq: self.owner_sq[owner],
            total_sq: self.total_sq,
            blocks: None,
        }
        .estimate(self.samples as f64)
    }

    fn absorb(&mut self, other: &TimeSlot) {
        self.all.total += other.all.total;
        self.all.stackless += other.all.stackless;
        self.samples += other.samples;
        self.total_sq += other.total_sq;
        for (a, b) in self.all.owners.iter_mut().zip(&other.all.owners) {
            a.add(b);
        }
        for (a, b) in self.all.categories.iter_mut().zip(&other.all.categories) {
            a.add(b);
        }
        for (a, b) in self.owner_sq.iter_mut().zip(&other.owner_sq) {
            *a += b;
        }
    }
}

/// The first buckets whose owner shares differ from the settled rest.
#[derive(Debug, Clone, PartialEq)]
pub struct Warmup {
    /// The first settled bucket: the warm-up is the buckets before it.
    pub end_bucket: usize,
    /// Where the warm-up ends: the settled bucket's start (nanoseconds, the recording's clock).
    pub end: u64,
    /// Seconds from the first sample to `end`.
    pub after_seconds: f64,
    /// The owner whose owner-view share moved most (of equal moves, the larger once settled),
    /// its share in the warm-up and after it
    /// (percent).
    pub owner: OwnerId,
    pub owner_name: String,
    pub during: f64,
    pub after: f64,
}

impl Warmup {
    /// The finding that says it ([`crate::aggregate::quality::Finding::Warmup`]).
    pub fn finding(&self) -> crate::aggregate::quality::Finding {
        crate::aggregate::quality::Finding::Warmup {
            seconds: self.after_seconds,
            owner: self.owner_name.clone(),
            during: self.during,
            after: self.after,
            from: self.end,
        }
    }
}

/// The owner view (and self, anywhere) per time bucket of one input.
#[derive(Debug, Clone)]
pub struct OwnerTimeline {
    pub size: BucketSize,
    /// The first and last sample time, nanoseconds.
    pub first: u64,
    pub last: u64,
    /// The width of the timeline's own buckets, which every slot's edges fall on.
    pub resolution: u64,
    pub slots: Vec<TimeSlot>,
    pub warmup: Option<Warmup>,
}

/// How the timeline's own buckets group into the buckets `--bucket` asks for: the one place
/// that decides which shown bucket a sample is in (the report's and the HTML page's).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Slotting {
    /// The first and last sample time, nanoseconds.
    pub first: u64,
    pub last: u64,
    /// The asked-for width, nanoseconds.
    pub width: u64,
    /// The shown buckets.
    pub count: usize,
}

impl Slotting {
    /// The grouping of `timeline` in `size` buckets; `None` when no sample had a time.
    pub fn new(timeline: &Timeline, size: BucketSize) -> Result<Option<Slotting>, TimelineError> {
        let Some((first, last)) = timeline.span() else {
            return Ok(None);
        };
        let resolution = timeline.width();
        let span = (last - first).saturating_add(1);
        let width = match size {
            BucketSize::Width(w) => w,
            BucketSize::Percent(p) => ((span as f64 * p / 100.0).ceil() as u64).max(1),
        };
        if width < resolution && span > resolution {
            return Err(TimelineError::Narrow { width, resolution });
        }
        let count = span.div_ceil(width.max(resolution)) as usize;
        if count > MAX_SHOWN {
            return Err(TimelineError::Many { count });
        }
        Ok(Some(Slotting {
            first,
            last,
            width,
            count,
        }))
    }

    /// The shown bucket of the timeline bucket `[start, end)`: the one its middle falls in,
    /// clipped to the samples' span.
    pub fn index(&self, start: u64, end: u64) -> usize {
        let middle = (start / 2 + end / 2).clamp(self.first, self.last);
        (((middle - self.first) / self.width) as usize).min(self.count - 1)
    }
}

/// Each stack's weight per shown bucket, for consumers that attribute stacks themselves
/// (the HTML page): `(bucket, stack, weight)` in sample type `metric`, zero weights left out,
/// bucketed by [`Slotting::index`] exactly as [`owner_timeline`] buckets them.
pub fn stack_weights<'t>(
    timeline: &'t Timeline,
    slotting: &Slotting,
    metric: usize,
) -> impl Iterator<Item = (usize, StackId, u128)> + 't {
    let slotting = *slotting;
    timeline.buckets().flat_map(move |bucket| {
        let slot = slotting.index(bucket.start, bucket.end);
        bucket
            .rows()
            .map(move |(stack, values)| (slot, stack, values[metric]))
            .filter(|&(_, _, w)| w > 0)
    })
}

/// The owners of one stack, computed once however many buckets it is in.
struct Owners {
    self_owner: OwnerId,
    owner: OwnerId,
    /// Ranges into the flat lists of anywhere owners and categories; `None` for a stack
    /// without frames.
    anywhere: Option<((u32, u32), (u32, u32))>,
}

/// A stack's anywhere owners and categories.
type AnywhereOf<'s> = (&'s [OwnerId], &'s [u8]);

/// The [`Owners`] of each stack the buckets refer to, kept by stack (a stack is in many
/// buckets), with their anywhere owners and categories back to back.
struct StackOwners<'a> {
    cache: FactCache<'a>,
    known: Vec<Option<u32>>,
    owners: Vec<Owners>,
    anywhere_flat: Vec<OwnerId>,
    categories_flat: Vec<u8>,
}

impl<'a> StackOwners<'a> {
    fn new(cache: FactCache<'a>, stack_count: usize) -> StackOwners<'a> {
        StackOwners {
            cache,
            known: vec![None; stack_count],
            owners: Vec::new(),
            anywhere_flat: Vec::new(),
            categories_flat: Vec::new(),
        }
    }

    /// The owners of `stack`, with its anywhere owners and categories (none for a stack
    /// without frames).
    fn of(&mut self, stack: StackId) -> (&Owners, Option<AnywhereOf<'_>>) {
        let k = match self.known[stack.0 as usize] {
            Some(k) => k,
            None => {
                let k = self.add(stack);
                self.known[stack.0 as usize] = Some(k);
                k
            }
        };
        let owners = &self.owners[k as usize];
        let flat = owners.anywhere.map(|((a, b), (c, d))| {
            (
                &self.anywhere_flat[a as usize..b as usize],
                &self.categories_flat[c as usize..d as usize],
            )
        });
        (owners, flat)
    }

    fn add(&mut self, stack: StackId) -> u32 {
        let f = self.cache.get(stack);
        let anywhere = (!f.stackless).then(|| {
            let (start, cat_start) = (
                self.anywhere_flat.len() as u32,
                self.categories_flat.len() as u32,
            );
            let (a, b) = f.anywhere;
            (self.anywhere_flat).extend_from_slice(&self.cache.owners_flat[a as usize..b as usize]);
            let (a, b) = f.categories;
            (self.categories_flat)
                .extend_from_slice(&self.cache.categories_flat[a as usize..b as usize]);
            (
                (start, self.anywhere_flat.len() as u32),
                (cat_start, self.categories_flat.len() as u32),
            )
        });
        self.owners.push(Owners {
            self_owner: f.self_owner,
            owner: f.owner,
            anywhere,
        });
        self.owners.len() as u32 - 1
    }
}

impl TimeSlot {
    /// Adds the weight `w` of `n` samples of a stack owned as `f`, with its anywhere owners
    /// and categories (`None`: a stack without frames).
    fn add(&mut self, f: &Owners, flat: Option<AnywhereOf<'_>>, w: u128, n: u128, rules: &RuleSet) {
        let q = (w as f64) * (w as f64) / n as f64;
        self.all.total += w;
        self.samples += n;
        self.total_sq += q;
        let Some((anywhere, categories)) = flat else {
            self.all.stackless += w;
            return;
        };
        let all = &mut self.all;
        let category = |o: OwnerId| category_index(rules.owner(o).category) as usize;
        all.owners[f.self_owner.0 as usize].self_ += w;
        all.owners[f.owner.0 as usize].owner += w;
        all.categories[category(f.self_owner)].self_ += w;
        all.categories[category(f.owner)].owner += w;
        self.owner_sq[f.owner.0 as usize] += q;
        for o in anywhere {
            all.owners[o.0 as usize].anywhere += w;
        }
        for &k in categories {
            all.categories[k as usize].anywhere += w;
        }
    }
}

/// `profile`'s timeline in `size` buckets, weighed in sample type `metric`; `Err` says why a
/// grouping cannot be made (too many buckets, narrower than the timeline's resolution).
pub fn owner_timeline(
    profile: &Profile,
    timeline: &Timeline,
    rules: &RuleSet,
    classes: &Classification,
    metric: usize,
    types_as_frames: bool,
    size: BucketSize,
) -> Result<Option<OwnerTimeline>, TimelineError> {
    let Some(slotting) = Slotting::new(timeline, size)? else {
        return Ok(None);
    };
    let samples_type = profile
        .sample_types()
        .iter()
        .position(|t| t.name == "samples" && t.unit == crate::model::Unit::Count);
    let cache = FactCache::new(profile, rules, classes, types_as_frames, Vec::new());
    let mut stacks = StackOwners::new(cache, profile.stack_count());
    let mut slots: Vec<TimeSlot> = Vec::with_capacity(slotting.count);
    for bucket in timeline.buckets() {
        let i = slotting.index(bucket.start, bucket.end);
        while slots.len() <= i {
            let mut slot = TimeSlot::new(rules.owners().len());
            slot.start = u64::MAX;
            slots.push(slot);
        }
        let slot = &mut slots[i];
        slot.start = slot.start.min(bucket.start);
        slot.end = slot.end.max(bucket.end);
        for (stack, values) in bucket.rows() {
            let w = values[metric];
            let n = samples_type.map_or(1, |t| values[t]).max(1);
            if w != 0 {
                let (owners, flat) = stacks.of(StackId(stack.0));
                slot.add(owners, flat, w, n, rules);
            }
        }
    }
    close_slots(&mut slots, &slotting);
    let warmup = warmup(&slots, slotting.first).map(|w| Warmup {
        owner_name: rules.owner(w.owner).name.clone(),
        ..w
    });
    Ok(Some(OwnerTimeline {
        size,
        first: slotting.first,
        last: slotting.last,
        resolution: timeline.width(),
        slots,
        warmup,
    }))
}

/// The batch-means sums of every owner's and category's share per view over `timeline`'s
/// own buckets (all threads together), weighed in sample type `metric`: what a time-stamped
/// input's intervals rest on ([`interval::block_sums`]). All are `None` when fewer than
/// [`interval::MIN_BUCKETS`] buckets hold weight.
pub fn time_blocks(
    profile: &Profile,
    timeline: &Timeline,
    rules: &RuleSet,
    classes: &Classification,
    metric: usize,
    types_as_frames: bool,
) -> TimeBlocks {
    let n_owners = rules.owners().len();
    let n_slots = (n_owners + Category::ALL.len()) * 3;
    let cache = FactCache::new(profile, rules, classes, types_as_frames, Vec::new());
    let mut stacks = StackOwners::new(cache, profile.stack_count());
    let k = timeline.buckets().count();
    let mut totals = vec![0.0; k];
    // one series per (owner or category, view), made when it first gets weight
    let mut series: Vec<Option<Vec<f64>>> = vec![None; n_slots];
    let mut add = |slot: usize, b: usize, w: f64| {
        series[slot].get_or_insert_with(|| vec![0.0; k])[b] += w;
    };
    let category = |o: OwnerId| category_index(rules.owner(o).category) as usize;
    let cat_slot = |c: usize, v: usize| (n_owners + c) * 3 + v;
    for (b, bucket) in timeline.buckets().enumerate() {
        for (stack, values) in bucket.rows() {
            let w = values[metric];
            if w == 0 {
                continue;
            }
            let w = w as f64;
            totals[b] += w;
            let (owners, flat) = stacks.of(stack);
            let Some((anywhere, categories)) = flat else {
                continue;
            };
            add(owners.self_owner.0 as usize * 3, b, w);
            add(owners.owner.0 as usize * 3 + 1, b, w);
            add(cat_slot(category(owners.self_owner), 0), b, w);
            add(cat_slot(category(owners.owner), 1), b, w);
            for o in anywhere {
                add(o.0 as usize * 3 + 2, b, w);
            }
            for &c in categories {
                add(cat_slot(c as usize, 2), b, w);
            }
        }
    }
    // a share without weight is 0 in every bucket: its sums are those of a zero series,
    // computed once (the interval is still made from time blocks)
    let nothing = interval::block_sums(&vec![0.0; k], &totals);
    let sums: Vec<Option<interval::BlockSums>> = series
        .iter()
        .map(|s| match s {
            Some(owner) => interval::block_sums(owner, &totals),
            None => nothing,
        })
        .collect();
    let triple = |i: usize| [sums[i * 3], sums[i * 3 + 1], sums[i * 3 + 2]];
    TimeBlocks {
        owners: (0..n_owners).map(triple).collect(),
        categories: (n_owners..n_owners + Category::ALL.len())
            .map(triple)
            .collect(),
    }
}

/// [`time_blocks`]' result: per owner (by `OwnerId`) and per category (by `Category::ALL`
/// position), the sums of the self, owner and anywhere views.
pub struct TimeBlocks {
    pub owners: Vec<[Option<interval::BlockSums>; 3]>,
    pub categories: Vec<[Option<interval::BlockSums>; 3]>,
}

/// Gives a slot no bucket fell in its place in the grid, and keeps every slot within the
/// recording.
fn close_slots(slots: &mut [TimeSlot], slotting: &Slotting) {
    let Slotting {
        first, last, width, ..
    } = *slotting;
    for (i, slot) in slots.iter_mut().enumerate() {
        if slot.start == u64::MAX {
            slot.start = first.saturating_add((i as u64).saturating_mul(width));
            slot.end = slot.start.saturating_add(width);
        }
        slot.start = slot.start.max(first);
        slot.end = slot.end.min(last.saturating_add(1));
    }
}

/// Why `--bucket` cannot group this timeline.
#[derive(Debug, Clone, PartialEq)]
pub enum TimelineError {
    /// Buckets narrower than the timeline's own (nanoseconds).
    Narrow { width: u64, resolution: u64 },
    /// More buckets than a report shows.
    Many { count: usize },
}

/// The warm-up at the start of `slots`, if their owner shares say there is one (see the
/// module's doc).
fn warmup(slots: &[TimeSlot], first: u64) -> Option<Warmup> {
    let n = slots.len();
    if n < MIN_BUCKETS_FOR_WARMUP {
        return None;
    }
    let half = n / 2;
    let owners = slots[0].all.owners.len();
    let settled = pooled(&slots[half..], owners);
    if settled.all.total == 0 {
        return None;
    }
    let tests = (half * owners.max(1)) as f64;
    let z_crit = interval::normal_quantile(1.0 - 0.01 / 2.0 / tests);
    let differs = |slot: &TimeSlot| -> bool {
        slot.all.total > 0
            && (0..owners).any(|o| {
                let (a, b) = (slot.estimate(o), settled.estimate(o));
                let shift = (a.p - b.p).abs();
                let se = (floored(&a) + floored(&b)).sqrt();
                shift * 100.0 >= MIN_SHIFT && shift / se >= z_crit
            })
    };
    if !differs(&slots[0]) {
        return None;
    }
    // the warm-up runs until two consecutive buckets agree with the settled state
    let mut end = half;
    for i in 1..half {
        if !differs(&slots[i]) && (i + 1 >= half || !differs(&slots[i + 1])) {
            end = i;
            break;
        }
    }
    let during = pooled(&slots[..end], owners);
    let after = pooled(&slots[end..], owners);
    let share = |s: &TimeSlot, o: usize| {
        if s.all.total == 0 {
            0.0
        } else {
            s.all.owners[o].owner as f64 * 100.0 / s.all.total as f64
        }
    };
    let owner = (0..owners).max_by(|&a, &b| {
        let shift = |o| (share(&during, o) - share(&after, o)).abs();
        // a tie (two owners trade places) names the one that holds more once settled
        shift(a)
            .total_cmp(&shift(b))
            .then(share(&after, a).total_cmp(&share(&after, b)))
    })?;
    Some(Warmup {
        end_bucket: end,
        end: slots[end].start,
        after_seconds: (slots[end].start - first) as f64 / 1e9,
        owner: OwnerId(owner as u32),
        owner_name: String::new(),
        during: share(&during, owner),
        after: share(&after, owner),
    })
}

/// A share's variance, floored at the binomial variance of the share shrunk towards one
/// half by one sample each way: at a share of 0 or 1 the delta-method variance is 0, and two
/// samples that agree must not make a certain difference.
fn floored(e: &interval::Estimate) -> f64 {
    let n = e.n_eff.max(1.0);
    let p = (e.p * n + 1.0) / (n + 2.0);
    e.var.max(p * (1.0 - p) / n)
}

/// The slots summed into one.
fn pooled(slots: &[TimeSlot], owners: usize) -> TimeSlot {
    let mut all = TimeSlot::new(owners);
    for s in slots {
        all.absorb(s);
    }
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_sizes_parse_as_durations_or_percents() {
        let widths = [
            ("1s", 1_000_000_000),
            ("250ms", 250_000_000),
            ("500us", 500_000),
            ("2m", 120_000_000_000),
            ("0.5s", 500_000_000),
        ];
        for (text, nanos) in widths {
            assert_eq!(
                BucketSize::parse(text),
                Ok(BucketSize::Width(nanos)),
                "{text}"
            );
        }
        assert_eq!(BucketSize::parse("5%"), Ok(BucketSize::Percent(5.0)));
        for bad in ["0%", "1 fortnight", "0s"] {
            assert!(BucketSize::parse(bad).is_err(), "{bad}");
        }
    }

    /// A slot of `n` one-sample rows, `user` of them owned by owner 1, the rest by owner 0.
    fn slot(start: u64, n: u128, user: u128) -> TimeSlot {
        let mut s = TimeSlot::new(2);
        s.start = start;
        s.end = start + 1_000_000_000;
        s.all.total = n;
        s.samples = n;
        s.total_sq = n as f64;
        s.all.owners[1].owner = user;
        s.all.owners[0].owner = n - user;
        s.owner_sq = vec![(n - user) as f64, user as f64];
        s
    }

    #[test]
    fn a_clock_from_zero_to_its_end_groups_without_overflow() {
        let mut t = Timeline::new(1);
        t.add(0, 1, 0, 1);
        t.add(u64::MAX, 2, 0, 1);
        let slotting = Slotting::new(&t, BucketSize::Percent(10.0))
            .unwrap()
            .unwrap();
        assert_eq!(slotting.count, 10);
        let all: u128 = stack_weights(&t, &slotting, 0).map(|(_, _, w)| w).sum();
        assert_eq!(all, 2);
        assert!(Slotting::new(&t, BucketSize::Width(1)).is_err());
    }

    #[test]
    fn stack_weights_fall_in_the_slots_of_the_report() {
        let mut t = Timeline::new(1);
        t.add(0, 1, 0, 5);
        t.add(2_500_000, 2, 0, 7);
        t.add(9_999_999, 1, 0, 1);
        let slotting = Slotting::new(&t, BucketSize::Percent(50.0))
            .unwrap()
            .unwrap();
        assert_eq!(slotting.count, 2);
        let got: Vec<(usize, u32, u128)> = stack_weights(&t, &slotting, 0)
            .map(|(b, s, w)| (b, s.0, w))
            .collect();
        assert_eq!(got, vec![(0, 1, 5), (0, 2, 7), (1, 1, 1)]);
    }

    #[test]
    fn a_warm_up_ends_where_the_shares_settle() {
        // user code owns 10%, 30%, then 80% from the third second on
        let mut slots = vec![slot(0, 1000, 100), slot(1_000_000_000, 1000, 300)];
        for i in 2..10 {
            slots.push(slot(i * 1_000_000_000, 1000, 800));
        }
        let w = warmup(&slots, 0).expect("a warm-up");
        assert_eq!(w.end_bucket, 2);
        assert_eq!(w.after_seconds, 2.0);
        assert_eq!(w.owner, OwnerId(1));
        assert_eq!(w.during, 20.0);
        assert_eq!(w.after, 80.0);
    }

    #[test]
    fn noise_and_small_shifts_are_no_warm_up() {
        // 52% then 50%: within the noise of 100 samples and under the practical floor
        let mut slots = vec![slot(0, 100, 52)];
        for i in 1..10 {
            slots.push(slot(i, 100, 50));
        }
        assert_eq!(warmup(&slots, 0), None);
        // 30% then 50% on 20 samples a bucket: a large shift, but not beyond the noise
        let mut slots = vec![slot(0, 20, 6)];
        for i in 1..10 {
            slots.push(slot(i, 20, 10));
        }
        assert_eq!(warmup(&slots, 0), None);
        // two samples at 50% against a settled 100%: shares of 0 and 1 have no delta-method
        // variance, the floor keeps two samples from deciding
        let mut slots = vec![slot(0, 2, 1)];
        for i in 1..10 {
            slots.push(slot(i, 5, 5));
        }
        assert_eq!(warmup(&slots, 0), None);
    }
}
