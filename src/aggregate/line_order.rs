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

use super::flame_stacks::{FlameLines, FlameStack};
use crate::model::folded::{COUNT_SEPARATOR, FRAME_SEPARATOR};
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
    match Ranks::new(lines, order) {
        Some(ranks) => ranks.sort(lines, order, weights),
        None => {
            let stack = |i: u32| &lines.stacks[i as usize];
            order.sort_by(|&a, &b| {
                compare_bytes(lines, stack(a), stack(b), weights == Weights::AsText)
            })
        }
    }
}

/// Groups at least this large are sorted on every core.
const PARALLEL_SORT: usize = 1 << 16;

/// Sorts `keyed` by key and then by the id next to it: a large group by counting its keys
/// where it can ([`counting_sorted`]), else on every core.
fn sort_keyed(keyed: &mut [(u32, u32)]) {
    use rayon::slice::ParallelSliceMut as _;
    if keyed.len() < PARALLEL_SORT {
        keyed.sort_unstable();
    } else if let Some(sorted) = counting_sorted(keyed) {
        keyed.copy_from_slice(&sorted);
    } else {
        keyed.par_sort_unstable();
    }
}

/// `keyed` sorted by key and id in linear time: a stable counting sort by key, when the ids
/// ascend (so each key's stay in order) and keys are dense (ranks: at most four per entry).
/// A million lines under one shared path are one group of a million distinct ranks, which
/// a comparison sort took 35 ms over (issue 24); the lines of one group keep their ids in
/// order from the depth above, so this is the usual case.
fn counting_sorted(keyed: &[(u32, u32)]) -> Option<Vec<(u32, u32)>> {
    if !keyed.windows(2).all(|w| w[0].1 < w[1].1) {
        return None;
    }
    let max = keyed.iter().map(|k| k.0).max()? as usize;
    if max > keyed.len().saturating_mul(4) || u32::try_from(keyed.len()).is_err() {
        return None;
    }
    // starts[k]: where the entries of key k go (u32, as their count is: half the memory)
    let mut starts = vec![0u32; max + 2];
    for &(k, _) in keyed {
        starts[k as usize + 1] += 1;
    }
    for k in 1..starts.len() {
        starts[k] += starts[k - 1];
    }
    let mut sorted = vec![(0, 0); keyed.len()];
    for &(k, id) in keyed {
        let at = &mut starts[k as usize];
        sorted[*at as usize] = (k, id);
        *at += 1;
    }
    Some(sorted)
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

const INNER: u8 = FRAME_SEPARATOR;
const LAST: u8 = COUNT_SEPARATOR;

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
        sort_keys(&mut keys, key);
        use rayon::prelude::*;
        if keys
            .par_windows(2)
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

    /// The rank of a line's frame at `depth` plus one, or 0 past its last frame: a line that
    /// ends sorts before those that go on (it is a prefix of their ranks).
    fn key_at(&self, frames: &[u32], depth: usize) -> u32 {
        let Some(&t) = frames.get(depth) else {
            return 0;
        };
        let rank = if depth + 1 == frames.len() {
            self.last[t as usize]
        } else {
            self.inner[t as usize]
        };
        rank + 1
    }

    /// Sorts the lines by their ranks one depth at a time (most significant first): the
    /// lines are sorted by their first frame's rank, each run of equal ranks by the second,
    /// and so on, so a rank is read once per line and depth instead of once per comparison
    /// (a comparison sort of a million lines under one long shared path reads that path
    /// twenty million times). Lines of equal frames end in a run of key 0, sorted by weight.
    fn sort(&self, lines: &FlameLines, order: &mut [u32], weights: Weights) {
        let frames = |i: u32| lines.frames(&lines.stacks[i as usize]);
        let mut keyed: Vec<(u32, u32)> = Vec::new();
        // runs still to sort: (start, end, depth) of lines equal above depth
        let mut runs: Vec<(usize, usize, usize)> = vec![(0, order.len(), 0)];
        while let Some((start, end, depth)) = runs.pop() {
            if end - start < 2 {
                continue;
            }
            let run = &mut order[start..end];
            let shared = shared_depths(lines, run, depth);
            if shared > 0 {
                // every line has its first line's frames there: nothing to sort by
                runs.push((start, end, depth + shared));
                continue;
            }
            keyed.clear();
            keyed.extend(run.iter().map(|&i| (self.key_at(frames(i), depth), i)));
            if keyed.iter().all(|k| k.0 == keyed[0].0) {
                if keyed[0].0 == 0 {
                    // equal frames: by weight as text, or left as they are
                    run.sort_unstable_by(|&a, &b| {
                        by_weight(
                            &lines.stacks[a as usize],
                            &lines.stacks[b as usize],
                            weights,
                        )
                    });
                } else {
                    runs.push((start, end, depth + 1));
                }
                continue;
            }
            sort_keyed(&mut keyed);
            for (slot, &(_, i)) in run.iter_mut().zip(&keyed) {
                *slot = i;
            }
            let mut first = 0;
            for group in keyed.chunk_by(|a, b| a.0 == b.0) {
                if group.len() > 1 {
                    runs.push((start + first, start + first + group.len(), depth));
                }
                first += group.len();
            }
        }
    }
}

/// How many depths from `depth` on every line of `run` has the frame of its first line there
/// (counting only depths where the first line has a frame). Sorting by rank a depth at a time
/// finds such depths, one pass over the run each, to change nothing; a run under a long
/// shared path is now passed over once for all of it, its frames compared by id. Lines that
/// end at a shared frame still sort before those that go on: past their end their key is 0.
fn shared_depths(lines: &FlameLines, run: &[u32], depth: usize) -> usize {
    let frames = |i: u32| lines.frames(&lines.stacks[i as usize]);
    let Some((&first, rest)) = run.split_first() else {
        return 0;
    };
    let first = frames(first);
    let mut shared = first.len().saturating_sub(depth);
    for &i in rest {
        if shared == 0 {
            break;
        }
        let line = frames(i);
        shared = (depth..depth + shared)
            .take_while(|&d| line.get(d) == first.get(d))
            .count();
    }
    shared
}

/// Sorts distinct frame keys as their bytes sort: each as one 128-bit number, its first
/// twelve bytes (zero-padded, big-endian: it orders as the bytes do wherever two keys differ
/// there) above its place in `keys`, sorted as plain integers; runs that share their twelve
/// bytes are sorted again by the next twelve ([`sort_runs`]). A million `fn_123456 [owner]`
/// keys sort in two thirds of the time of a comparison sort on their first eight bytes and
/// their texts (issue 24): integers compare without a branch on the data, and the keys are
/// packed on every core.
fn sort_keys<'k>(keys: &mut Vec<(u32, u8)>, key: impl Fn(&(u32, u8)) -> (&'k [u8], u8) + Sync) {
    use rayon::prelude::*;
    let key_at = |i: u32| key(&keys[i as usize]);
    let mut packed: Vec<u128> = (0..keys.len() as u32)
        .into_par_iter()
        .map(|i| packed_key(key_at(i), 0, i))
        .collect();
    sort_packed(&mut packed);
    sort_runs(&mut packed, HEAD_BYTES, &key_at);
    let sorted: Vec<(u32, u8)> = packed
        .par_iter()
        .map(|&p| keys[packed_index(p) as usize])
        .collect();
    *keys = sorted;
}

/// The bytes of a key a packed key holds.
const HEAD_BYTES: usize = 12;

/// Key `index`'s bytes from `offset` (twelve of them, zero-padded) above `index`. A key's
/// last byte is its separator, never zero, so two distinct keys differ in some twelve bytes.
fn packed_key((text, sep): (&[u8], u8), offset: usize, index: u32) -> u128 {
    let mut bytes = [0u8; 16];
    let from = text.get(offset..).unwrap_or_default();
    let n = from.len().min(HEAD_BYTES);
    bytes[..n].copy_from_slice(&from[..n]);
    if n < HEAD_BYTES && offset + n == text.len() {
        bytes[n] = sep;
    }
    bytes[HEAD_BYTES..].copy_from_slice(&index.to_be_bytes());
    u128::from_be_bytes(bytes)
}

fn packed_index(packed: u128) -> u32 {
    packed as u32
}

fn packed_head(packed: u128) -> u128 {
    packed >> 32
}

fn sort_packed(packed: &mut [u128]) {
    use rayon::slice::ParallelSliceMut as _;
    if packed.len() >= PARALLEL_SORT {
        packed.par_sort_unstable();
    } else {
        packed.sort_unstable();
    }
}

/// Sorts each run of `packed` that shares its head (the keys' bytes up to `offset`): a long
/// run again by the next twelve bytes, a short one by comparing the keys.
fn sort_runs<'k>(
    packed: &mut [u128],
    offset: usize,
    key_at: &(impl Fn(u32) -> (&'k [u8], u8) + Sync),
) {
    let mut rest = packed;
    while let Some(&first) = rest.first() {
        let run = rest
            .iter()
            .take_while(|&&p| packed_head(p) == packed_head(first))
            .count();
        let (tied, after) = rest.split_at_mut(run);
        // keys that end before `offset` and share all their bytes are one key: no order
        let longest = || {
            tied.iter()
                .map(|&p| key_at(packed_index(p)).0.len() + 1)
                .max()
        };
        if run > SHORT_RUN && longest().is_some_and(|l| l > offset) {
            for p in tied.iter_mut() {
                let index = packed_index(*p);
                *p = packed_key(key_at(index), offset, index);
            }
            sort_packed(tied);
            sort_runs(tied, offset + HEAD_BYTES, key_at);
        } else if run > 1 {
            tied.sort_unstable_by(|&a, &b| {
                compare_keys(key_at(packed_index(a)), key_at(packed_index(b)))
            });
        }
        rest = after;
    }
}

/// Runs up to this long are sorted by comparing their keys' bytes.
const SHORT_RUN: usize = 32;

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
            let sep = (i > 0).then_some(FRAME_SEPARATOR);
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
    fn no_line_and_one_line_sort() {
        assert!(sorted_by_ids(&[], Weights::AsText).is_empty());
        let one = ["a;b 1".to_string()];
        assert_eq!(sorted_by_ids(&one, Weights::AsText), one);
    }

    #[test]
    fn keys_longer_than_their_first_eight_bytes_sort_as_text() {
        // keys equal in their first eight bytes, a key of eight bytes that is a prefix of
        // longer ones inside a line, and a NUL byte where another key has its separator
        let lines = [
            "abcdefghij;x 1",
            "abcdefgh;x 2",
            "abcdefghi 3",
            "abcdefgh 4",
            "abcdefg\u{0};y 5",
            "abcdefg 6",
            "abcdefgha;b;c 7",
            "abcdefgha;b 8",
        ]
        .map(String::from);
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

    /// `keys` sorted by [`sort_keys`] and by comparing their bytes, as texts.
    fn both_sorts(texts: &[String], seps: &[u8]) -> (Vec<String>, Vec<String>) {
        let mut keys: Vec<(u32, u8)> = (0..texts.len() as u32)
            .flat_map(|t| seps.iter().map(move |&sep| (t, sep)))
            .collect();
        let key = |&(t, sep): &(u32, u8)| (texts[t as usize].as_bytes(), sep);
        let mut compared = keys.clone();
        compared.sort_by_key(|&(t, sep)| [texts[t as usize].as_bytes(), &[sep]].concat());
        sort_keys(&mut keys, key);
        let shown = |keys: &[(u32, u8)]| {
            (keys.iter())
                .map(|&(t, sep)| format!("{}{}", texts[t as usize], sep as char))
                .collect()
        };
        (shown(&keys), shown(&compared))
    }

    #[test]
    fn long_runs_of_keys_sharing_their_first_bytes_sort_by_the_next() {
        // forty keys share 30 bytes (runs long enough to be sorted again, twice), some end
        // inside the second twelve bytes, one is the shared part alone
        let shared = "org/example/service/Handler.ru";
        let mut texts: Vec<String> = (0..40).map(|i| format!("{shared}n{}", 97 - i)).collect();
        texts.extend((0..5).map(|i| format!("{}{i}", &shared[..14])));
        texts.push(shared.to_string());
        texts.push(format!("{shared}\u{0}"));
        let (sorted, compared) = both_sorts(&texts, b"; ");
        assert_eq!(sorted, compared);
    }

    /// Up to 40 stacks of 1 to 3 frames whose texts match `frame`, each with a weight.    /// Up to 40 stacks of 1 to 3 frames whose texts match `frame`, each with a weight.
    fn stacks(frame: &'static str) -> impl Strategy<Value = Vec<(Vec<String>, u32)>> {
        proptest::collection::vec((proptest::collection::vec(frame, 1..4), 1u32..30), 1..40)
    }

    /// Folded lines of generated stacks.
    fn folded(stacks: &[(Vec<String>, u32)]) -> Vec<String> {
        (stacks.iter())
            .map(|(frames, w)| {
                let mut line = crate::model::folded::join_frames(frames);
                crate::model::folded::push_count(&mut line, w);
                line
            })
            .collect()
    }

    #[test]
    fn counting_sort_orders_as_the_comparison_sort_or_declines() {
        let keyed: Vec<(u32, u32)> = [5u32, 0, 3, 5, 1, 3, 3, 9]
            .iter()
            .zip(10..)
            .map(|(&k, i)| (k, i))
            .collect();
        let mut want = keyed.clone();
        want.sort_unstable();
        assert_eq!(counting_sorted(&keyed), Some(want));
        // ids out of order: a stable sort by key would not order them
        assert_eq!(counting_sorted(&[(1, 2), (1, 1)]), None);
        // keys too sparse for a count each
        assert_eq!(counting_sorted(&[(100, 1), (0, 2)]), None);
        assert_eq!(counting_sorted(&[]), None);
    }

    proptest! {
        #[test]
        fn counting_sort_agrees_with_sorting(keys in proptest::collection::vec(0u32..50, 1..200)) {
            let keyed: Vec<(u32, u32)> = keys.iter().zip(0..).map(|(&k, i)| (k, i * 3)).collect();
            let mut want = keyed.clone();
            want.sort_unstable();
            if let Some(sorted) = counting_sorted(&keyed) {
                prop_assert_eq!(sorted, want);
            } else {
                prop_assert!(keys.iter().max().map_or(0, |&m| m as usize) > keys.len() * 4);
            }
        }

        #[test]
        fn keys_sort_as_their_bytes(
            texts in proptest::collection::hash_set("(abcdefghijklm|abcdef){0,3}[ab\u{0}]{0,14}", 1..120)
        ) {
            let texts: Vec<String> = texts.into_iter().collect();
            let (sorted, compared) = both_sorts(&texts, b"; ");
            prop_assert_eq!(sorted, compared);
        }

        #[test]
        fn the_order_is_the_order_of_the_text(stacks in stacks("[ab1 ]{1,3}")) {
            let lines = folded(&stacks);
            let mut text = lines.clone();
            text.sort();
            prop_assert_eq!(sorted_by_ids(&lines, Weights::AsText), text);
        }

        #[test]
        fn without_weights_lines_of_equal_frames_are_adjacent(stacks in stacks("[ab1]{1,2}")) {
            let lines = folded(&stacks);
            let sorted = sorted_by_ids(&lines, Weights::Ignored);
            let stacks: Vec<&str> = sorted.iter().map(|l| crate::model::folded::split_count(l).unwrap().0).collect();
            let mut expected = stacks.clone();
            expected.sort();
            prop_assert_eq!(stacks, expected);
        }
    }
}
