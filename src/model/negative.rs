//! The negative part of signed sample values, beside the rows of a [`super::Profile`].
//!
//! pprof delta profiles (`go tool pprof -proto -diff_base`, `inuse_*` after subtraction) have
//! negative values. A share of a signed total means nothing (a frame can be 120 % of a total
//! that cancelled out), so the rows keep the positive part, on which every share is computed,
//! and this table keeps the magnitude of the negative part, per (stack, thread) and sample
//! type, for reports to show beside the shares and for the gate to refuse a metric that has
//! any. Both parts are unsigned and additive, so the exact-integer sums of the model hold.

use super::{Row, StackId, ThreadId};
use rustc_hash::FxHashMap;

/// Summed magnitudes of negative values, one row per distinct (stack, thread) that had any.
#[derive(Debug, Clone, Default)]
pub struct NegativeWeights {
    index: FxHashMap<(StackId, Option<ThreadId>), u32>,
    keys: Vec<(StackId, Option<ThreadId>)>,
    /// Row-major: `magnitudes[row * types + type]`.
    magnitudes: Vec<u128>,
    types: usize,
}

impl NegativeWeights {
    /// Every magnitude times `factor` (see [`super::Profile::scale_weights`]).
    pub fn scale(&mut self, factor: u128) {
        for magnitude in &mut self.magnitudes {
            *magnitude = magnitude.saturating_mul(factor);
        }
    }

    /// Adds the magnitudes of one sample's negative values (`magnitudes` has one entry per
    /// sample type, 0 where the value was not negative); saturating, as the rows do.
    pub fn add(&mut self, stack: StackId, thread: Option<ThreadId>, magnitudes: &[u128]) {
        if self.keys.is_empty() {
            self.types = magnitudes.len();
        }
        debug_assert_eq!(magnitudes.len(), self.types);
        let next = self.keys.len() as u32;
        let row = *self.index.entry((stack, thread)).or_insert(next);
        if row == next {
            self.keys.push((stack, thread));
            self.magnitudes.extend_from_slice(magnitudes);
        } else {
            let n = self.types;
            let slot = &mut self.magnitudes[row as usize * n..(row as usize + 1) * n];
            for (s, v) in slot.iter_mut().zip(magnitudes) {
                *s = s.saturating_add(*v);
            }
        }
    }

    /// No sample had a negative value.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// Every row with a negative value in some type; `values` are magnitudes.
    pub fn rows(&self) -> impl Iterator<Item = Row<'_>> {
        self.keys
            .iter()
            .zip(self.magnitudes.chunks(self.types.max(1)))
            .map(|(&(stack, thread), values)| Row {
                stack,
                thread,
                values,
            })
    }

    /// The summed magnitude of the negative values of sample type `metric`.
    pub fn total(&self, metric: usize) -> u128 {
        self.rows()
            .map(|r| r.values.get(metric).copied().unwrap_or(0))
            .fold(0, u128::saturating_add)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_negative_magnitudes_per_stack_thread_and_type() {
        let mut n = NegativeWeights::default();
        assert!(n.is_empty());
        n.add(StackId(0), None, &[5, 0]);
        n.add(StackId(1), None, &[1, 2]);
        n.add(StackId(0), None, &[3, 4]);
        n.add(StackId(0), Some(ThreadId(0)), &[0, 7]);
        assert_eq!((n.total(0), n.total(1)), (9, 13));
        let rows: Vec<_> = n
            .rows()
            .map(|r| (r.stack, r.thread, r.values.to_vec()))
            .collect();
        assert_eq!(rows[0], (StackId(0), None, vec![8, 4]));
        assert_eq!(rows.len(), 3);
    }
}
