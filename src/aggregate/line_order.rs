//! The order folded lines sort in as text, found from their frame text ids.
//!
//! inferno sorts the lines it is given as text and merges a frame only with the same frame
//! of the line before, so whoever wants to know what it will draw (which frames are too
//! narrow, what is adjacent) needs that order. Writing 5 M lines out to sort them costs their
//! text; here each frame text is ranked once in the two places it can stand in a line —
//! inside (`text;`) and last (`text ` before the weight) — and a line is its sequence of
//! ranks. Comparing concatenations element by element is comparing their bytes when no key
//! is a proper prefix of another; frame texts hold no `;`, so only `a ` and `a b…` can break
//! that, and then the lines are compared byte by byte instead.

use super::flame_lines::{FlameLines, FlameStack};
use std::cmp::Ordering;

/// Whether lines of equal frames sort by their weight's digits (`stack WEIGHT` as text, as
/// inferno sorts), or compare equal (folded output, which sums them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Weights {
    AsText,
    Ignored,
}

/// Sorts `order` (indexes into `lines.stacks`) as the lines' text sorts.
pub fn sort(lines: &FlameLines, order: &mut [u32], weights: Weights) {
    let stack = |i: u32| &lines.stacks[i as usize];
    match Ranks::new(lines, order) {
        Some(ranks) => order.sort_unstable_by(|&a, &b| {
            ranks
                .compare(lines, stack(a), stack(b))
                .then_with(|| by_weight(stack(a), stack(b), weights))
        }),
        None => order
            .sort_by(|&a, &b| compare_bytes(lines, stack(a), stack(b), weights == Weights::AsText)),
    }
}

/// Lines of the same frames: their weights as text (`10` before `9`).
fn by_weight(a: &FlameStack, b: &FlameStack, weights: Weights) -> Ordering {
    if weights == Weights::Ignored || a.weight() == b.weight() {
        return Ordering::Equal;
    }
    a.weight().to_string().cmp(&b.weight().to_string())
}

/// Each frame text's rank among the keys the lines use, inside a line and last in it.
struct Ranks {
    inner: Vec<u32>,
    last: Vec<u32>,
}

const INNER: u8 = b';';
const LAST: u8 = b' ';

impl Ranks {
    /// The ranks, or None when a key is a proper prefix of another.
    fn new(lines: &FlameLines, order: &[u32]) -> Option<Ranks> {
        let texts = &lines.texts;
        let mut used = vec![0u8; texts.count()];
        for &i in order {
            let frames = lines.frames(&lines.stacks[i as usize]);
            if let Some((&last, inner)) = frames.split_last() {
                used[last as usize] |= 2;
                for &t in inner {
                    used[t as usize] |= 1;
                }
            }
        }
        let mut keys: Vec<(u32, u8)> = Vec::new();
        for (t, &u) in used.iter().enumerate() {
            if u & 1 != 0 {
                keys.push((t as u32, INNER));
            }
            if u & 2 != 0 {
                keys.push((t as u32, LAST));
            }
        }
        drop(used);
        let key = |&(t, sep): &(u32, u8)| (texts.text(t).as_bytes(), sep);
        keys.sort_unstable_by(|a, b| compare_keys(key(a), key(b)));
        if keys
            .windows(2)
            .any(|w| is_proper_prefix(key(&w[0]), key(&w[1])))
        {
            return None;
        }
        let mut ranks = Ranks {
            inner: vec![u32::MAX; texts.count()],
            last: vec![u32::MAX; texts.count()],
        };
        for (rank, &(t, sep)) in keys.iter().enumerate() {
            let slot = if sep == INNER {
                &mut ranks.inner
            } else {
                &mut ranks.last
            };
            slot[t as usize] = rank as u32;
        }
        Some(ranks)
    }

    /// The lines' order as text, but for their weights.
    fn compare(&self, lines: &FlameLines, a: &FlameStack, b: &FlameStack) -> Ordering {
        let (fa, fb) = (lines.frames(a), lines.frames(b));
        let rank = |frames: &[u32], i: usize| {
            let t = frames[i] as usize;
            if i + 1 == frames.len() {
                self.last[t]
            } else {
                self.inner[t]
            }
        };
        for i in 0..fa.len().min(fb.len()) {
            let (ra, rb) = (rank(fa, i), rank(fb, i));
            if ra != rb {
                return ra.cmp(&rb);
            }
        }
        // equal ranks up to the shorter: the last key is the only `text ` one, so both end
        fa.len().cmp(&fb.len())
    }
}

/// `text` followed by `sep`, compared as bytes.
fn compare_keys(a: (&[u8], u8), b: (&[u8], u8)) -> Ordering {
    let n = a.0.len().min(b.0.len());
    a.0[..n].cmp(&b.0[..n]).then_with(|| {
        let rest_a = a.0[n..].iter().copied().chain([a.1]);
        rest_a.cmp(b.0[n..].iter().copied().chain([b.1]))
    })
}

/// Whether `a`'s bytes are a proper prefix of `b`'s.
fn is_proper_prefix(a: (&[u8], u8), b: (&[u8], u8)) -> bool {
    b.0.len() > a.0.len() && b.0.starts_with(a.0) && b.0[a.0.len()] == a.1
}

/// The lines' order by their bytes (`root;…;leaf WEIGHT`, or without the weight).
fn compare_bytes(lines: &FlameLines, a: &FlameStack, b: &FlameStack, weights: bool) -> Ordering {
    let bytes = |s: &FlameStack| {
        let digits = if weights {
            format!(" {}", s.weight())
        } else {
            String::new()
        };
        let frames = lines.frames(s).iter().enumerate().flat_map(|(i, &t)| {
            let sep = (i > 0).then_some(b';');
            sep.into_iter().chain(lines.texts.text(t).bytes())
        });
        frames.chain(digits.into_bytes())
    };
    bytes(a).cmp(bytes(b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::OwnerId;
    use proptest::prelude::*;

    fn sorted_by_ids(lines: &[String], weights: Weights) -> Vec<String> {
        let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
        let flame = FlameLines::from_text(refs, OwnerId::UNCLASSIFIED).unwrap();
        let mut order = flame.select(None);
        sort(&flame, &mut order, weights);
        order
            .iter()
            .map(|&i| flame.line(&flame.stacks[i as usize]))
            .collect()
    }

    #[test]
    fn ranks_sort_as_the_text_does_where_a_leaf_is_a_prefix_of_a_frame() {
        // `fn_1 5` before `fn_12;x 1` before `fn_1;y 2`: ' ' < '2' < ';'
        let lines = ["fn_1;y 2", "fn_12;x 1", "fn_1 5", "a 10", "a 9"].map(String::from);
        let mut text = lines.to_vec();
        text.sort();
        assert_eq!(sorted_by_ids(&lines, Weights::AsText), text);
    }

    #[test]
    fn a_text_with_a_space_after_another_falls_back_to_bytes() {
        let lines = ["a 10", "a 1;x 3", "a 5", "a b 2", "a;c 1"].map(String::from);
        let mut text = lines.to_vec();
        text.sort();
        assert_eq!(sorted_by_ids(&lines, Weights::AsText), text);
    }

    proptest! {
        #[test]
        fn the_order_is_the_order_of_the_text(
            stacks in proptest::collection::vec(
                (proptest::collection::vec("[ab1 ]{1,3}", 1..4), 1u32..30),
                1..40,
            )
        ) {
            let lines: Vec<String> = stacks
                .iter()
                .map(|(frames, w)| format!("{} {w}", frames.join(";")))
                .collect();
            let mut text = lines.clone();
            text.sort();
            prop_assert_eq!(sorted_by_ids(&lines, Weights::AsText), text);
        }

        #[test]
        fn without_weights_lines_of_equal_frames_are_adjacent(
            stacks in proptest::collection::vec(
                (proptest::collection::vec("[ab1]{1,2}", 1..4), 1u32..30),
                1..40,
            )
        ) {
            let lines: Vec<String> = stacks
                .iter()
                .map(|(frames, w)| format!("{} {w}", frames.join(";")))
                .collect();
            let sorted = sorted_by_ids(&lines, Weights::Ignored);
            let stacks: Vec<&str> = sorted.iter().map(|l| l.rsplit_once(' ').unwrap().0).collect();
            let mut expected = stacks.clone();
            expected.sort();
            prop_assert_eq!(stacks, expected);
        }
    }
}
