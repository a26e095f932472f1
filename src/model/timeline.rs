//! Weights over time (issue 27): the samples of a recording that stamps each one with a time
//! (perf.data, perf script, JFR), folded into equal-width time buckets as they are read.
//!
//! The profile folds samples into rows and keeps no times, so a reader asked for a timeline
//! folds each sample a second time, into the bucket of its time: per bucket, a row per
//! distinct key (the reader's row while reading, the profile's [`StackId`] once read) with
//! one value per sample type. Memory grows with distinct (bucket, stack) pairs, never with
//! samples: there are at most [`MAX_BUCKETS`] buckets, and when a sample falls past the last
//! one the buckets double in width and merge in pairs, as a streaming histogram does. The
//! buckets start [`FIRST_WIDTH`] wide; a recording of an hour ends with buckets of about
//! four seconds, fine enough for any grouping `report --by time` asks of them.

use super::StackId;
use super::budget;
use rustc_hash::FxHashMap;

/// Buckets at the most; past it they double in width.
pub const MAX_BUCKETS: usize = 1024;

/// The width buckets start with: one millisecond.
pub const FIRST_WIDTH: u64 = 1_000_000;

/// Samples over time, in buckets `origin + i * width` (nanoseconds, the reader's clock).
#[derive(Debug, Clone)]
pub struct Timeline {
    n_types: usize,
    origin: u64,
    width: u64,
    buckets: Vec<Bucket>,
    /// The first and last sample time seen (`None` before the first sample).
    span: Option<(u64, u64)>,
}

/// One bucket: a row of `n_types` values per distinct key.
#[derive(Debug, Clone, Default)]
struct Bucket {
    slots: FxHashMap<u32, u32>,
    keys: Vec<u32>,
    values: Vec<u128>,
}

impl Bucket {
    /// The values of `key`, added if new.
    fn row(&mut self, key: u32, n_types: usize) -> &mut [u128] {
        let next = self.keys.len() as u32;
        let slot = *self.slots.entry(key).or_insert(next) as usize;
        if slot == self.keys.len() {
            self.keys.push(key);
            self.values.extend(std::iter::repeat_n(0, n_types));
            // the key, its slot, its hash entry and its values
            budget::charge(16 + n_types * 16);
        }
        &mut self.values[slot * n_types..(slot + 1) * n_types]
    }

    fn absorb(&mut self, other: Bucket, n_types: usize) {
        for (i, key) in other.keys.into_iter().enumerate() {
            let values = &other.values[i * n_types..(i + 1) * n_types];
            for (s, v) in self.row(key, n_types).iter_mut().zip(values) {
                *s = s.saturating_add(*v);
            }
        }
    }
}

/// One bucket as read back: its time range and each distinct stack's values in it.
#[derive(Debug, Clone, Copy)]
pub struct TimeBucket<'a> {
    /// Nanoseconds, start included.
    pub start: u64,
    /// Nanoseconds, end excluded.
    pub end: u64,
    keys: &'a [u32],
    values: &'a [u128],
    n_types: usize,
}

impl<'a> TimeBucket<'a> {
    /// Each stack in the bucket and its values (one per sample type).
    pub fn rows(self) -> impl Iterator<Item = (StackId, &'a [u128])> + 'a {
        let n = self.n_types;
        let values = self.values;
        self.keys
            .iter()
            .enumerate()
            .map(move |(i, &k)| (StackId(k), &values[i * n..(i + 1) * n]))
    }
}

impl Timeline {
    /// An empty timeline whose rows hold `n_types` values.
    pub fn new(n_types: usize) -> Timeline {
        Timeline {
            n_types,
            origin: 0,
            width: FIRST_WIDTH,
            buckets: Vec::new(),
            span: None,
        }
    }

    /// Adds `value` to sample type `ty` of `key`'s row in the bucket of `time`.
    pub fn add(&mut self, time: u64, key: u32, ty: usize, value: u128) {
        let n = self.n_types;
        let slot = &mut self.bucket(time).row(key, n)[ty];
        *slot = slot.saturating_add(value);
    }

    /// Adds `a` to sample type `ta` and `b` to `tb` of `key`'s row in the bucket of `time`,
    /// with one look-up: a sample's weight and its count, on perf.data's hot path.
    pub fn add_two(&mut self, time: u64, key: u32, (ta, a): (usize, u128), (tb, b): (usize, u128)) {
        let n = self.n_types;
        let row = self.bucket(time).row(key, n);
        row[ta] = row[ta].saturating_add(a);
        row[tb] = row[tb].saturating_add(b);
    }

    /// Adds one value per sample type to `key`'s row in the bucket of `time`.
    pub fn add_values(&mut self, time: u64, key: u32, values: &[u128]) {
        let n = self.n_types;
        for (s, v) in self.bucket(time).row(key, n).iter_mut().zip(values) {
            *s = s.saturating_add(*v);
        }
    }

    /// The same samples under other keys and sample types: `map` writes each row's values in
    /// the new layout (`n_types` of them, zeroed before the call) and returns its new key.
    /// Rows that meet under one key are summed. Readers key rows by their own row ids while
    /// reading and by the profile's stacks once it is built.
    pub fn rekey(
        self,
        n_types: usize,
        mut map: impl FnMut(u32, &[u128], &mut [u128]) -> u32,
    ) -> Timeline {
        let mut out = Timeline {
            n_types,
            origin: self.origin,
            width: self.width,
            buckets: Vec::with_capacity(self.buckets.len()),
            span: self.span,
        };
        let mut new_values = vec![0u128; n_types];
        for bucket in self.buckets {
            let mut new = Bucket::default();
            for (i, &key) in bucket.keys.iter().enumerate() {
                new_values.iter_mut().for_each(|v| *v = 0);
                let values = &bucket.values[i * self.n_types..(i + 1) * self.n_types];
                let new_key = map(key, values, &mut new_values);
                for (s, v) in new.row(new_key, n_types).iter_mut().zip(&new_values) {
                    *s = s.saturating_add(*v);
                }
            }
            out.buckets.push(new);
        }
        out
    }

    /// The first and last sample time, nanoseconds; `None` when no sample had a time.
    pub fn span(&self) -> Option<(u64, u64)> {
        self.span
    }

    /// The width of every bucket, nanoseconds.
    pub fn width(&self) -> u64 {
        self.width
    }

    /// The buckets from the first sample's to the last's, in time order (empty ones too).
    pub fn buckets(&self) -> impl Iterator<Item = TimeBucket<'_>> {
        self.buckets.iter().enumerate().map(|(i, b)| {
            // saturating: a garbage time far from the rest widens the buckets towards u64::MAX
            let start = self
                .origin
                .saturating_add((i as u64).saturating_mul(self.width));
            TimeBucket {
                start,
                end: start.saturating_add(self.width),
                keys: &b.keys,
                values: &b.values,
                n_types: self.n_types,
            }
        })
    }

    /// The bucket `time` falls in, made (and the buckets widened) as needed.
    fn bucket(&mut self, time: u64) -> &mut Bucket {
        self.span = Some(match self.span {
            None => {
                self.origin = time - time % self.width;
                (time, time)
            }
            Some((first, last)) => (first.min(time), last.max(time)),
        });
        if time < self.origin {
            self.extend_back(time);
        }
        while (time - self.origin) / self.width >= MAX_BUCKETS as u64 {
            self.widen();
        }
        let i = ((time - self.origin) / self.width) as usize;
        if self.buckets.len() <= i {
            budget::charge((i + 1 - self.buckets.len()) * std::mem::size_of::<Bucket>());
            self.buckets.resize_with(i + 1, Bucket::default);
        }
        &mut self.buckets[i]
    }

    /// Moves the origin back to a bucket boundary at or before `time` (samples of several
    /// CPUs arrive a little out of time order), widening while the buckets would not fit.
    fn extend_back(&mut self, time: u64) {
        loop {
            let missing = (self.origin - time).div_ceil(self.width);
            if missing + self.buckets.len() as u64 <= MAX_BUCKETS as u64 {
                let mut buckets: Vec<Bucket> = std::iter::repeat_with(Bucket::default)
                    .take(missing as usize)
                    .collect();
                buckets.append(&mut self.buckets);
                self.buckets = buckets;
                self.origin -= missing * self.width;
                return;
            }
            self.widen();
        }
    }

    /// Doubles the buckets' width, merging them in pairs; the origin moves to the new width's
    /// boundary at or before it.
    fn widen(&mut self) {
        let width = self.width.saturating_mul(2);
        let origin = self.origin - self.origin % width;
        // an origin that was not on the new boundary puts the old first bucket second
        let offset = ((self.origin - origin) / self.width) as usize;
        let old = std::mem::take(&mut self.buckets);
        let mut buckets: Vec<Bucket> = Vec::with_capacity(old.len() / 2 + 1);
        for (i, bucket) in old.into_iter().enumerate() {
            let j = (i + offset) / 2;
            if buckets.len() <= j {
                buckets.resize_with(j + 1, Bucket::default);
            }
            buckets[j].absorb(bucket, self.n_types);
        }
        self.buckets = buckets;
        self.origin = origin;
        self.width = width;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (start, [(stack, value)]) of every bucket, rows sorted.
    fn contents(t: &Timeline) -> Vec<(u64, Vec<(u32, u128)>)> {
        t.buckets()
            .map(|b| {
                let mut rows: Vec<(u32, u128)> = b.rows().map(|(s, v)| (s.0, v[0])).collect();
                rows.sort_unstable();
                (b.start, rows)
            })
            .collect()
    }

    #[test]
    fn samples_fall_in_millisecond_buckets_from_the_first() {
        let mut t = Timeline::new(1);
        t.add(5_500_000, 1, 0, 10);
        t.add(5_900_000, 1, 0, 1);
        t.add(7_000_000, 2, 0, 4);
        assert_eq!(t.width(), FIRST_WIDTH);
        assert_eq!(t.span(), Some((5_500_000, 7_000_000)));
        assert_eq!(
            contents(&t),
            vec![
                (5_000_000, vec![(1, 11)]),
                (6_000_000, vec![]),
                (7_000_000, vec![(2, 4)]),
            ]
        );
    }

    #[test]
    fn a_late_sample_widens_the_buckets_and_keeps_every_weight() {
        let mut t = Timeline::new(1);
        for i in 0..3000u64 {
            t.add(i * FIRST_WIDTH, (i % 3) as u32, 0, 1);
        }
        assert!(t.buckets().count() <= MAX_BUCKETS);
        assert_eq!(t.width(), 4 * FIRST_WIDTH);
        let total: u128 = t.buckets().flat_map(|b| b.rows().map(|(_, v)| v[0])).sum();
        assert_eq!(total, 3000);
        // 4 ms buckets: each holds four consecutive samples
        let first = &contents(&t)[0];
        assert_eq!(first, &(0, vec![(0, 2), (1, 1), (2, 1)]));
    }

    #[test]
    fn an_early_sample_moves_the_origin_back() {
        let mut t = Timeline::new(1);
        t.add(10 * FIRST_WIDTH, 1, 0, 1);
        t.add(8 * FIRST_WIDTH + 5, 2, 0, 1);
        assert_eq!(
            contents(&t),
            vec![
                (8 * FIRST_WIDTH, vec![(2, 1)]),
                (9 * FIRST_WIDTH, vec![]),
                (10 * FIRST_WIDTH, vec![(1, 1)]),
            ]
        );
        // far back: the buckets widen until both ends fit
        t.add(0, 3, 0, 1);
        t.add(5000 * FIRST_WIDTH, 3, 0, 1);
        assert!(t.buckets().count() <= MAX_BUCKETS);
        let total: u128 = t.buckets().flat_map(|b| b.rows().map(|(_, v)| v[0])).sum();
        assert_eq!(total, 4);
        let b = t
            .buckets()
            .find(|b| b.start <= 10 * FIRST_WIDTH && 10 * FIRST_WIDTH < b.end);
        assert!(b.unwrap().rows().any(|(s, _)| s.0 == 1));
    }

    #[test]
    fn times_at_the_ends_of_the_clock_keep_every_weight() {
        let mut t = Timeline::new(1);
        for time in [u64::MAX, 0, 5, u64::MAX / 2, u64::MAX - 1] {
            t.add(time, 1, 0, 1);
        }
        assert!(t.buckets().count() <= MAX_BUCKETS);
        let total: u128 = t.buckets().flat_map(|b| b.rows().map(|(_, v)| v[0])).sum();
        assert_eq!(total, 5);
        assert_eq!(t.span(), Some((0, u64::MAX)));
    }

    #[test]
    fn rekey_sums_rows_that_meet() {
        let mut t = Timeline::new(2);
        t.add_values(0, 7, &[1, 10]);
        t.add_values(0, 8, &[2, 20]);
        let t = t.rekey(1, |_, v, out| {
            out[0] = v[1];
            0
        });
        assert_eq!(contents(&t), vec![(0, vec![(0, 30)])]);
    }
}
