//! The data of the HTML page (issue 27): one input's stacks as a pruned call tree and the
//! folded weights as entries the page sums itself, so that any selection (a time range, an
//! owner, a zoomed frame) recomputes every panel exactly.
//!
//! An entry is `(node, bucket, weight, self owner, owner, anywhere set)`: `node` is the
//! deepest node of the stack that survives pruning, `bucket` its time bucket (0 when the
//! input keeps no time), the owners are the stack's in the self and owner views and the set
//! of owners on it (interned). Entries that agree in all but weight are merged, so the page
//! grows with what it can show (nodes, buckets, owner combinations), not with the input's
//! distinct stacks. The owners of a stack are the report's own ([`super::FactCache`]), so the
//! page's table equals `report --format json` to the integer.
//!
//! Pruning: a node whose total is under `min_share` of the input's total is not drawn (as
//! `flame --min-width` elides frames narrower than a pixel); its weight stays in the entries,
//! at its nearest drawn ancestor, and the counts of what was pruned are kept for the page to
//! say.

use super::FactCache;
use crate::classify::{Classification, Reason, RuleSet};
use crate::model::{FrameId, OwnerId, Profile, StackId};
use rustc_hash::FxHashMap;

/// The share of the total under which a node is pruned by default: 1/20,000 of the width,
/// a tenth of a pixel of a 2,000-pixel-wide flame graph.
pub const DEFAULT_MIN_SHARE: f64 = 0.00005;

/// One node of the call tree; node 0 is the root (all samples), with no frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Node {
    pub parent: u32,
    /// Index into [`PageInput::frames`]; unused for the root.
    pub frame: u32,
}

/// A distinct frame drawn on the page, with its owner and the rule that decided it.
#[derive(Debug, Clone)]
pub struct PageFrame {
    pub id: FrameId,
    pub owner: OwnerId,
    pub reason: Reason,
}

/// Merged weights of stacks that end at one node, in one bucket, with one attribution.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Entry {
    pub node: u32,
    pub bucket: u32,
    pub self_owner: OwnerId,
    pub owner: OwnerId,
    /// Index into [`PageInput::owner_sets`]; `None` for samples without a stack.
    pub anywhere: Option<u32>,
}

/// What the page holds of one input.
#[derive(Debug, Clone, Default)]
pub struct PageInput {
    pub frames: Vec<PageFrame>,
    pub nodes: Vec<Node>,
    /// Each entry with its weight, in first-seen order.
    pub entries: Vec<(Entry, u128)>,
    /// The distinct sets of owners on a stack (the anywhere view), each sorted.
    pub owner_sets: Vec<Vec<OwnerId>>,
    /// Nodes of the full tree not drawn, and the weight of the stacks that reach them.
    pub pruned_nodes: usize,
    pub pruned_weight: u128,
}

/// The page's data of `profile`: `weights` holds each `(bucket, stack, weight)` to show, the
/// whole profile in bucket 0 or its time buckets.
pub fn page_input(
    profile: &Profile,
    rules: &RuleSet,
    classes: &Classification,
    types_as_frames: bool,
    weights: &[(usize, StackId, u128)],
    min_share: f64,
) -> PageInput {
    let tree = FullTree::build(profile, types_as_frames, weights);
    let total: u128 = tree.totals[0];
    let floor = (total as f64 * min_share).ceil() as u128;
    let mut page = PageInput::default();
    let kept = keep_nodes(&tree, floor.max(1), &mut page, |frame| {
        // the owner the report gives the frame, and the rule `explain` names for it, as the
        // classification kept it
        let reason = rules.reason(profile.frame(frame), classes.decided(frame));
        PageFrame {
            id: frame,
            owner: classes.owner_of(frame),
            reason,
        }
    });
    page.pruned_nodes = tree.nodes.len() - page.nodes.len();
    let cache = FactCache::new(profile, rules, classes, types_as_frames, Vec::new());
    let mut owners = OwnerSets::new(cache);
    let mut merged: FxHashMap<Entry, usize> = FxHashMap::default();
    for &(bucket, stack, weight) in weights {
        let full = tree.leaf_of[&stack];
        if kept[full as usize].is_none() {
            page.pruned_weight += weight;
        }
        let (self_owner, owner, anywhere) = owners.of(stack);
        let entry = Entry {
            node: nearest_kept(&tree, &kept, full),
            bucket: bucket as u32,
            self_owner,
            owner,
            anywhere,
        };
        match merged.get(&entry) {
            Some(&i) => page.entries[i].1 += weight,
            None => {
                merged.insert(entry, page.entries.len());
                page.entries.push((entry, weight));
            }
        }
    }
    page.owner_sets = owners.into_sets();
    page
}

/// Puts the nodes of `tree` at least `floor` heavy under a drawn parent into `page` (each
/// distinct frame once, made by `frame`); the new id of each node of the tree, `None` where
/// it is not drawn. Nodes keep their order, parents before children.
fn keep_nodes(
    tree: &FullTree,
    floor: u128,
    page: &mut PageInput,
    frame: impl Fn(FrameId) -> PageFrame,
) -> Vec<Option<u32>> {
    let mut kept: Vec<Option<u32>> = vec![None; tree.nodes.len()];
    let mut frame_index: FxHashMap<FrameId, u32> = FxHashMap::default();
    kept[0] = Some(0);
    page.nodes.push(Node {
        parent: 0,
        frame: u32::MAX,
    });
    for (i, &(parent, id)) in tree.nodes.iter().enumerate().skip(1) {
        let Some(parent) = kept[parent as usize] else {
            continue;
        };
        if tree.totals[i] < floor {
            continue;
        }
        let next = page.frames.len() as u32;
        let f = *frame_index.entry(id).or_insert_with(|| {
            page.frames.push(frame(id));
            next
        });
        kept[i] = Some(page.nodes.len() as u32);
        page.nodes.push(Node { parent, frame: f });
    }
    kept
}

/// Each stack's self and owner view owners and its set of anywhere owners (an index into
/// the distinct sets, `None` for a stack without frames), found once per stack.
struct OwnerSets<'a> {
    cache: FactCache<'a>,
    by_stack: FxHashMap<StackId, (OwnerId, OwnerId, Option<u32>)>,
    sets: FxHashMap<Vec<OwnerId>, u32>,
}

impl<'a> OwnerSets<'a> {
    fn new(cache: FactCache<'a>) -> OwnerSets<'a> {
        OwnerSets {
            cache,
            by_stack: FxHashMap::default(),
            sets: FxHashMap::default(),
        }
    }

    fn of(&mut self, stack: StackId) -> (OwnerId, OwnerId, Option<u32>) {
        let (cache, sets) = (&mut self.cache, &mut self.sets);
        *self.by_stack.entry(stack).or_insert_with(|| {
            let f = cache.get(stack);
            let set = (!f.stackless).then(|| {
                let (a, b) = f.anywhere;
                let mut owners = cache.owners_flat[a as usize..b as usize].to_vec();
                owners.sort_unstable();
                let next = sets.len() as u32;
                *sets.entry(owners).or_insert(next)
            });
            (f.self_owner, f.owner, set)
        })
    }

    /// The distinct sets, by their index.
    fn into_sets(self) -> Vec<Vec<OwnerId>> {
        let mut out = vec![Vec::new(); self.sets.len()];
        for (set, i) in self.sets {
            out[i as usize] = set;
        }
        out
    }
}

/// The drawn node a stack's weight goes to: its own, or its nearest drawn ancestor.
fn nearest_kept(tree: &FullTree, kept: &[Option<u32>], mut node: u32) -> u32 {
    loop {
        if let Some(k) = kept[node as usize] {
            return k;
        }
        node = tree.nodes[node as usize].0;
    }
}

/// Every stack as a path from the root, with each node's total.
struct FullTree {
    /// (parent, frame); node 0 is the root.
    nodes: Vec<(u32, FrameId)>,
    totals: Vec<u128>,
    /// The node each stack ends at.
    leaf_of: FxHashMap<StackId, u32>,
}

impl FullTree {
    fn build(
        profile: &Profile,
        types_as_frames: bool,
        weights: &[(usize, StackId, u128)],
    ) -> FullTree {
        let mut tree = FullTree {
            nodes: vec![(0, FrameId(u32::MAX))],
            totals: vec![0],
            leaf_of: FxHashMap::default(),
        };
        let mut children: FxHashMap<(u32, FrameId), u32> = FxHashMap::default();
        for &(_, stack, weight) in weights {
            let leaf = match tree.leaf_of.get(&stack) {
                Some(&leaf) => leaf,
                None => {
                    let mut node = 0u32;
                    let frames = profile.stack(stack);
                    // allocated-type leaves are not frames unless asked (as in the report)
                    let skip = if types_as_frames {
                        0
                    } else {
                        frames
                            .iter()
                            .take_while(|&&f| {
                                profile.frame(f).kind == crate::model::FrameKind::AllocType
                            })
                            .count()
                    };
                    for &frame in frames[skip..].iter().rev() {
                        let next = tree.nodes.len() as u32;
                        node = *children.entry((node, frame)).or_insert_with(|| {
                            tree.nodes.push((node, frame));
                            tree.totals.push(0);
                            next
                        });
                    }
                    tree.leaf_of.insert(stack, node);
                    node
                }
            };
            let mut node = leaf;
            loop {
                tree.totals[node as usize] += weight;
                if node == 0 {
                    break;
                }
                node = tree.nodes[node as usize].0;
            }
        }
        tree
    }
}
