//! The frame lists: the heaviest self frames, owner frames and unclassified frames, and the
//! allocated types, with the accumulator that sums them per frame ([`FrameAccumulator`]) and
//! the grouping that shows frames differing only by line or module as one row.

use super::walk::{FactCache, PARALLEL_GROUPING, StackFacts};
use crate::classify::{Classification, RuleSet};
use crate::model::{Frame, FrameId, OwnerId, Profile, hash_of};
use rustc_hash::FxHashMap;
use std::borrow::Cow;

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

/// Weight per self frame, owner frame and unclassified frame (each frame's owner is its
/// own, so these are per frame), and per allocated type and owner.
pub(super) struct FrameAccumulator {
    pub(super) self_frames: FrameTotals,
    pub(super) owner_frames: FrameTotals,
    pub(super) unclassified: FrameTotals,
    pub(super) types: FxHashMap<FrameId, FxHashMap<OwnerId, u128>>,
}

/// The frame lists of an [`super::Aggregate`].
pub(super) struct FrameLists {
    pub(super) top_self: Vec<FrameWeight>,
    pub(super) top_owner_frames: Vec<FrameWeight>,
    pub(super) unclassified: Vec<FrameWeight>,
    pub(super) types: Vec<TypeWeight>,
}

impl FrameAccumulator {
    pub(super) fn new(frames: usize, total: u128) -> FrameAccumulator {
        FrameAccumulator {
            self_frames: FrameTotals::new(frames, total),
            owner_frames: FrameTotals::new(frames, total),
            unclassified: FrameTotals::new(frames, total),
            types: FxHashMap::default(),
        }
    }

    pub(super) fn add(&mut self, facts: &StackFacts, cache: &FactCache<'_>, w: u128) {
        if let Some(f) = facts.self_frame {
            self.self_frames.add(f, w);
        }
        if let Some(f) = facts.owner_frame {
            self.owner_frames.add(f, w);
        }
        let (a, b) = facts.unclassified;
        for &f in &cache.frames_flat[a as usize..b as usize] {
            self.unclassified.add(f, w);
        }
        if let Some(t) = facts.alloc_type {
            *self
                .types
                .entry(t)
                .or_default()
                .entry(facts.owner)
                .or_default() += w;
        }
    }

    /// The frames each list shows as one row: by owner and name (self and owner lists), and
    /// by label for unclassified frames when some have a module (else the first serves).
    fn groupings(
        &self,
        profile: &Profile,
        classes: &Classification,
    ) -> (Vec<u32>, Option<Vec<u32>>) {
        // the two on two cores: on millions of distinct frames each is a pass over all of them
        rayon::join(
            // owner names are unique: the id stands for the name, and hashes cheaper
            || {
                label_groups(
                    profile.frame_count(),
                    (0..profile.frame_count() as u32).map(FrameId),
                    |f| (classes.owner_of(f), &*profile.frame(f).name),
                )
            },
            // unclassified frames without a module are labelled by their name alone, as one
            // owner's: when none has a module, the grouping by name is theirs too
            || {
                let with_module = (profile.frames().zip(&classes.frame_owner))
                    .any(|(f, &o)| o == OwnerId::UNCLASSIFIED && f.module.is_some());
                with_module.then(|| {
                    label_groups(
                        profile.frame_count(),
                        self.unclassified.weighed().map(|(f, _)| f),
                        |f| frame_label(profile.frame(f)),
                    )
                })
            },
        )
    }

    /// The heaviest `top` of each list, named, beside the allocated types (`types`, summed
    /// before: the lists only read the totals, so the user hint can read them at once).
    pub(super) fn finish(
        &self,
        profile: &Profile,
        rules: &RuleSet,
        classes: &Classification,
        top: usize,
        types: Vec<TypeWeight>,
    ) -> FrameLists {
        if top == 0 {
            // no list is shown (flame's legend, fleet rows): no grouping to make
            return FrameLists {
                top_self: Vec::new(),
                top_owner_frames: Vec::new(),
                unclassified: Vec::new(),
                types,
            };
        }
        let owner_name = |f: FrameId| rules.owner(classes.owner_of(f)).name.as_str();
        let name = |f: FrameId| Cow::Borrowed(&*profile.frame(f).name);
        // self and owner lists show a row per owner and name: one grouping serves both
        let (by_name, own_groups) = self.groupings(profile, classes);
        let groups = own_groups.as_deref().unwrap_or(&by_name);
        let name_frames =
            |totals: &FrameTotals| heaviest(totals, &by_name, &owner_name, &name, top);
        let unclassified_name = rules.owner(OwnerId::UNCLASSIFIED).name.as_str();
        let ((top_self, top_owner_frames), unclassified) = rayon::join(
            || {
                rayon::join(
                    || name_frames(&self.self_frames),
                    || name_frames(&self.owner_frames),
                )
            },
            || {
                heaviest(
                    &self.unclassified,
                    groups,
                    &|_| unclassified_name,
                    &|f| frame_label(profile.frame(f)),
                    top,
                )
            },
        );
        FrameLists {
            top_self,
            top_owner_frames,
            unclassified,
            types,
        }
    }
}

pub(super) fn type_weights(
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

/// Weight per frame, dense by `FrameId`, in the narrowest integer that holds the metric's
/// total: 4 bytes a frame for most profiles, where the hash maps of (owner, frame) to u128
/// they replace cost about 70 bytes per distinct frame (issue 17). A list adds a row's weight
/// to a frame at most once (one self frame, one owner frame, each unclassified frame once per
/// stack), so no frame's sum passes the total and no addition can overflow.
pub(super) enum FrameTotals {
    U32(Vec<u32>),
    U64(Vec<u64>),
    U128(Vec<u128>),
}

impl FrameTotals {
    /// Totals of `frames` frames whose sums are at most `total`.
    fn new(frames: usize, total: u128) -> FrameTotals {
        if total <= u128::from(u32::MAX) {
            FrameTotals::U32(vec![0; frames])
        } else if total <= u128::from(u64::MAX) {
            FrameTotals::U64(vec![0; frames])
        } else {
            FrameTotals::U128(vec![0; frames])
        }
    }

    /// Adds `w`; saturating only to stay panic-free should the bound above ever not hold.
    fn add(&mut self, f: FrameId, w: u128) {
        let i = f.0 as usize;
        match self {
            FrameTotals::U32(v) => v[i] = v[i].saturating_add(w.try_into().unwrap_or(u32::MAX)),
            FrameTotals::U64(v) => v[i] = v[i].saturating_add(w.try_into().unwrap_or(u64::MAX)),
            FrameTotals::U128(v) => v[i] = v[i].saturating_add(w),
        }
    }

    pub(super) fn get(&self, f: FrameId) -> u128 {
        let i = f.0 as usize;
        match self {
            FrameTotals::U32(v) => v[i].into(),
            FrameTotals::U64(v) => v[i].into(),
            FrameTotals::U128(v) => v[i],
        }
    }

    fn len(&self) -> usize {
        match self {
            FrameTotals::U32(v) => v.len(),
            FrameTotals::U64(v) => v.len(),
            FrameTotals::U128(v) => v.len(),
        }
    }

    /// Every frame with weight, in id order.
    fn weighed(&self) -> impl Iterator<Item = (FrameId, u128)> + '_ {
        (0..self.len() as u32)
            .map(|i| (FrameId(i), self.get(FrameId(i))))
            .filter(|&(_, w)| w > 0)
    }
}

/// How a frame reads in the unclassified list: its name and module, as `Frame` displays.
fn frame_label(frame: &Frame) -> Cow<'_, str> {
    match frame.module {
        None => Cow::Borrowed(&frame.name),
        Some(_) => Cow::Owned(frame.to_string()),
    }
}

/// The heaviest `top` entries of `totals`, named for display.
/// Frames of one group of `groups` (one owner and label: frames that differ only by line or
/// module read as one function; see [`label_groups`]) are merged into one entry first. Ordered by weight, then owner name, then
/// label. Works on frame ids and allocates names only for what it keeps, so a profile of
/// millions of distinct frames costs an index of the merged entries, not a string each.
fn heaviest<'p>(
    totals: &FrameTotals,
    groups: &[u32],
    owner_name: &(dyn Fn(FrameId) -> &'p str + Sync),
    label: &(dyn Fn(FrameId) -> Cow<'p, str> + Sync),
    top: usize,
) -> Vec<FrameWeight> {
    if top == 0 {
        return Vec::new();
    }
    let merged = group_sums(totals, groups);
    let weight = |f: FrameId| {
        if merged.is_empty() {
            return totals.get(f);
        }
        merged.get(&f).copied().unwrap_or_else(|| totals.get(f))
    };
    let order = |a: &FrameId, b: &FrameId| {
        weight(*b)
            .cmp(&weight(*a))
            .then_with(|| owner_name(*a).cmp(owner_name(*b)))
            .then_with(|| label(*a).cmp(&label(*b)))
    };
    // the best `top`, straight from the totals: no list of every entry. Once the list is
    // full, its last entry's position, weight and names are kept beside it: most frames are
    // lighter and turned away on their weight alone, and a tie reads only the new frame's
    // names (a million frames of a few weights tie by the hundred thousand)
    let mut kept: Vec<FrameId> = Vec::with_capacity(top);
    let mut worst: Option<(usize, u128, &str, Cow<'p, str>)> = None;
    for f in (0..totals.len() as u32).map(FrameId) {
        if groups[f.0 as usize] != f.0 {
            continue;
        }
        let w = weight(f);
        if w == 0 {
            continue;
        }
        if let Some((at, worst_weight, worst_owner, worst_label)) = &worst {
            let better = w > *worst_weight
                || (w == *worst_weight
                    && match owner_name(f).cmp(worst_owner) {
                        std::cmp::Ordering::Less => true,
                        std::cmp::Ordering::Equal => label(f) < *worst_label,
                        std::cmp::Ordering::Greater => false,
                    });
            if !better {
                continue;
            }
            kept[*at] = f;
        } else {
            kept.push(f);
        }
        if kept.len() == top {
            let at = (0..top)
                .max_by(|&i, &j| order(&kept[i], &kept[j]))
                .expect("top > 0");
            let f = kept[at];
            worst = Some((at, weight(f), owner_name(f), label(f)));
        }
    }
    kept.sort_by(order);
    kept.into_iter()
        .map(|f| FrameWeight {
            owner: owner_name(f).to_string(),
            frame: label(f).into_owned(),
            weight: weight(f),
        })
        .collect()
}

/// The first frame of each group stands for the others: the sums of those that stand for
/// more than one, kept apart, in u128 (one stack may hold two frames of one label, so such a
/// sum may pass the total that sized `totals`).
fn group_sums(totals: &FrameTotals, groups: &[u32]) -> FxHashMap<FrameId, u128> {
    let mut merged: FxHashMap<FrameId, u128> = FxHashMap::default();
    for (f, w) in totals.weighed() {
        let first = FrameId(groups[f.0 as usize]);
        if first != f {
            let sum = merged.entry(first).or_insert_with(|| totals.get(first));
            *sum = sum.saturating_add(w);
        }
    }
    merged
}

/// For every frame `frames` yields, the first of them (in id order) with the same `key`:
/// the frames a list shows as one row (`u32::MAX` for the frames not yielded). Each key is
/// hashed once, to 32 bits; frames whose hash no other frame has are their own group, and
/// only the few whose hash may repeat are sorted by it and compared by key (sorting a
/// million frames by hash was a third of the report's lists on a million distinct frames).
pub(super) fn label_groups<K: std::hash::Hash + Eq>(
    frame_count: usize,
    frames: impl Iterator<Item = FrameId>,
    key: impl Fn(FrameId) -> K + Sync,
) -> Vec<u32> {
    use rayon::prelude::*;
    let hash = |f: u32| hash32(hash_of(&key(FrameId(f))));
    let ids: Vec<u32> = frames.map(|f| f.0).collect();
    // hashing reads every frame's key, cold memory on millions of them: on every core
    let parallel = ids.len() >= PARALLEL_GROUPING;
    if ids.len() == frame_count {
        // distinct ascending ids below `frame_count`: every frame, so the id is the index
        drop(ids);
        let hashes = if parallel {
            (0..frame_count as u32).into_par_iter().map(hash).collect()
        } else {
            (0..frame_count as u32).map(hash).collect()
        };
        return first_of_each_key(KeyHashes::OfEveryFrame(hashes), key);
    }
    let hashes = if parallel {
        ids.par_iter().map(|&f| hash(f)).collect()
    } else {
        ids.iter().map(|&f| hash(f)).collect()
    };
    first_of_each_key(
        KeyHashes::Of {
            frame_count,
            ids,
            hashes,
        },
        key,
    )
}

/// Frames to group and 32 bits of their keys' hashes (as [`hash32`] folds them).
pub(super) enum KeyHashes {
    /// Frame i's hash at i, for every frame.
    OfEveryFrame(Vec<u32>),
    /// Some frames (ascending ids) and their hashes, side by side.
    Of {
        frame_count: usize,
        ids: Vec<u32>,
        hashes: Vec<u32>,
    },
}

/// 32 bits of a 64-bit hash, both halves mixed in.
pub(super) fn hash32(hash: u64) -> u32 {
    (hash >> 32) as u32 ^ hash as u32
}

/// [`label_groups`] from the hashes of the frames' keys, for callers that hash without making
/// the key (`flame_lines` writes a frame's text into one buffer, and on all cores). Every
/// frame's hashes become its group in place: 4 bytes a frame, where pairs of hash and id
/// sorted were 8 and the groups 4 more, at the report's peak on millions of distinct frames.
pub(super) fn first_of_each_key<K: std::hash::Hash + Eq>(
    hashes: KeyHashes,
    key: impl Fn(FrameId) -> K,
) -> Vec<u32> {
    let mut maybe_shared: Vec<(u32, u32)> = Vec::new();
    let groups = match hashes {
        KeyHashes::OfEveryFrame(mut groups) => {
            let shared = SharedHashes::of(&groups);
            for (f, slot) in (0u32..).zip(groups.iter_mut()) {
                if shared.may_repeat(*slot) {
                    maybe_shared.push((*slot, f));
                }
                *slot = f;
            }
            groups
        }
        KeyHashes::Of {
            frame_count,
            ids,
            hashes,
        } => {
            let shared = SharedHashes::of(&hashes);
            let mut groups = vec![u32::MAX; frame_count];
            for (f, h) in ids.into_iter().zip(hashes) {
                if shared.may_repeat(h) {
                    maybe_shared.push((h, f));
                }
                groups[f as usize] = f;
            }
            groups
        }
    };
    group_shared(groups, maybe_shared, key)
}

/// `groups` with the frames of `maybe_shared` (hash and id, each its own group so far)
/// grouped with the first of their key.
fn group_shared<K: std::hash::Hash + Eq>(
    mut groups: Vec<u32>,
    mut maybe_shared: Vec<(u32, u32)>,
    key: impl Fn(FrameId) -> K,
) -> Vec<u32> {
    maybe_shared.sort_unstable();
    for run in maybe_shared.chunk_by(|a, b| a.0 == b.0) {
        if run.len() == 1 {
            continue;
        }
        // ids ascend within a run, so the first of a key is met first
        let mut firsts: FxHashMap<K, u32> = FxHashMap::default();
        for &(_, f) in run {
            groups[f as usize] = *firsts.entry(key(FrameId(f))).or_insert(f);
        }
    }
    groups
}

/// Which 32-bit hashes may occur more than once among a list's: a bit per slot, as a Bloom
/// filter of one hash function, with 8 to 16 slots an entry (2 to 4 bits an entry in all), so
/// one hash in 8 to 16 that occurs once is taken for shared. A hash it calls single is
/// single.
struct SharedHashes {
    mask: usize,
    seen: Vec<u64>,
    repeated: Vec<u64>,
}

impl SharedHashes {
    fn of(hashes: &[u32]) -> SharedHashes {
        let slots = (hashes.len().saturating_mul(8))
            .next_power_of_two()
            .clamp(64, 1 << 32);
        let mut filter = SharedHashes {
            mask: slots - 1,
            seen: vec![0; slots / 64],
            repeated: vec![0; slots / 64],
        };
        for &h in hashes {
            let (word, bit) = filter.slot(h);
            if filter.seen[word] & bit != 0 {
                filter.repeated[word] |= bit;
            }
            filter.seen[word] |= bit;
        }
        filter
    }

    fn slot(&self, hash: u32) -> (usize, u64) {
        let slot = hash as usize & self.mask;
        (slot / 64, 1 << (slot % 64))
    }

    fn may_repeat(&self, hash: u32) -> bool {
        let (word, bit) = self.slot(hash);
        self.repeated[word] & bit != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// The kept-worst shortcut picks what sorting every entry and taking the first `top`
        /// picks: ties on weight by owner, then label, with groups merged first.
        #[test]
        fn heaviest_is_the_head_of_everything_sorted(
            entries in proptest::collection::vec((0u32..4, 0u8..3, 0u8..12), 1..60),
            top in 1usize..8,
        ) {
            let owners = ["lib", "app", "jdk"];
            let n = entries.len();
            let labels: Vec<String> = entries.iter().map(|e| format!("f{}", e.2)).collect();
            let mut totals = FrameTotals::new(n, u128::from(u32::MAX));
            for (i, e) in entries.iter().enumerate() {
                totals.add(FrameId(i as u32), u128::from(e.0));
            }
            let owner = |f: FrameId| owners[entries[f.0 as usize].1 as usize];
            let label = |f: FrameId| Cow::Borrowed(labels[f.0 as usize].as_str());
            let all = (0..n as u32).map(FrameId);
            let groups = label_groups(n, all.clone(), |f| (owner(f), label(f)));
            let got = heaviest(&totals, &groups, &owner, &label, top);
            // the oracle: every group summed, sorted, cut
            let mut sums: FxHashMap<(&str, String), u128> = FxHashMap::default();
            for f in all {
                *sums.entry((owner(f), label(f).into_owned())).or_default() += totals.get(f);
            }
            let mut want: Vec<(u128, &str, String)> =
                sums.into_iter().filter(|e| e.1 > 0).map(|((o, l), w)| (w, o, l)).collect();
            want.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(b.1)).then(a.2.cmp(&b.2)));
            want.truncate(top);
            let got: Vec<(u128, &str, String)> =
                got.iter().map(|e| (e.weight, e.owner.as_str(), e.frame.clone())).collect();
            proptest::prop_assert_eq!(got, want);
        }

        /// A hash the filter calls single occurs once.
        #[test]
        fn shared_hashes_never_miss_a_repeat(hashes in proptest::collection::vec(0u32..5000, 0..300)) {
            let shared = SharedHashes::of(&hashes);
            for &h in &hashes {
                if !shared.may_repeat(h) {
                    proptest::prop_assert_eq!(hashes.iter().filter(|&&x| x == h).count(), 1);
                }
            }
        }
    }

    #[test]
    fn label_groups_name_the_first_frame_of_each_key_also_when_hashes_collide() {
        let keys = ["a", "b", "a", "c", "b", "a"];
        let all = || (0..keys.len() as u32).map(FrameId);
        let by_text = label_groups(keys.len() + 1, all(), |f| keys[f.0 as usize]);
        assert_eq!(by_text, [0, 1, 0, 3, 1, 0, u32::MAX]);
        /// Every key hashes alike, so all frames meet in one run of equal hashes.
        #[derive(PartialEq, Eq)]
        struct Colliding(&'static str);
        impl std::hash::Hash for Colliding {
            fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
                state.write_u8(7);
            }
        }
        let colliding = label_groups(keys.len(), all(), |f| Colliding(keys[f.0 as usize]));
        assert_eq!(colliding, [0, 1, 0, 3, 1, 0]);
        // frames not yielded keep no group
        let some = label_groups(keys.len(), [1, 2, 4].map(FrameId).into_iter(), |f| {
            keys[f.0 as usize]
        });
        assert_eq!(some, [u32::MAX, 1, 2, u32::MAX, 1, u32::MAX]);
    }

    #[test]
    fn frame_totals_are_as_wide_as_the_total_needs() {
        let most = [u128::from(u32::MAX), u128::from(u64::MAX), u128::MAX];
        for (i, total) in most.into_iter().enumerate() {
            let mut t = FrameTotals::new(3, total);
            let width = match t {
                FrameTotals::U32(_) => 0,
                FrameTotals::U64(_) => 1,
                FrameTotals::U128(_) => 2,
            };
            assert_eq!(width, i);
            t.add(FrameId(1), total - 5);
            t.add(FrameId(1), 5);
            t.add(FrameId(2), 1);
            assert_eq!(
                t.weighed().collect::<Vec<_>>(),
                [(FrameId(1), total), (FrameId(2), 1)]
            );
        }
    }
}
