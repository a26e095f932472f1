//! Weights per function, as `pprof -top` counts them: frames that differ only by source line
//! (or by whatever else the caller's key leaves out) are one function, whose *flat* weight is
//! the samples it is the leaf of and whose *cum* weight the samples it is anywhere on the
//! stack of, counted once per sample however often it recurs. `explain` and `top` rank by
//! these; a per-frame count would list one function once per line, each with a part of its
//! weight (issue 15: `main.handleOrders` 7 times, the largest 54.1 % where pprof says 83.2 %).

use super::marks::Marks;
use super::quality;
use super::user_hint;
use crate::model::{FrameId, FrameKind, Profile};
use rustc_hash::FxHashMap;
use std::hash::Hash;

/// One function: the frames the key folded together and its weights.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FunctionWeight {
    /// The first frame (by id) of the function; it stands for the others in displays.
    pub frame: FrameId,
    /// Weight of the samples whose leaf is this function.
    pub flat: u128,
    /// Weight of the samples with this function anywhere on the stack (once per sample).
    pub cum: u128,
}

/// Every function of `profile` with weight in sample type `metric`, heaviest cum first (then
/// heaviest flat, then frame id). Frames of equal `key` are one function. Allocated-type
/// leaves (async-profiler's `byte[]_[i]`) are skipped unless `types_as_frames`, as the owner
/// views skip them, so flat goes to the frame that allocated.
pub fn function_weights<K: Hash + Eq>(
    profile: &Profile,
    metric: usize,
    types_as_frames: bool,
    key: impl Fn(FrameId) -> K,
) -> Vec<FunctionWeight> {
    let (group_of, first_frame) = function_groups(profile, types_as_frames, key);
    // rows summed per distinct stack first: the stack walk is then once per stack
    let mut stack_weight = vec![0u128; profile.stack_count()];
    for row in profile.rows() {
        let w = &mut stack_weight[row.stack.0 as usize];
        *w = w.saturating_add(row.values[metric]);
    }
    let mut flat = vec![0u128; first_frame.len()];
    let mut cum = vec![0u128; first_frame.len()];
    let mut seen = Marks::new(first_frame.len());
    for (stack, &w) in stack_weight.iter().enumerate() {
        if w == 0 {
            continue;
        }
        seen.clear();
        let stack = profile.stack(crate::model::StackId(stack as u32));
        let groups = stack.iter().filter_map(|f| group_of[f.0 as usize]);
        for (i, g) in groups.map(|g| g as usize).enumerate() {
            if i == 0 {
                flat[g] += w;
            }
            if seen.insert(g) {
                cum[g] += w;
            }
        }
    }
    let mut functions: Vec<FunctionWeight> = first_frame
        .into_iter()
        .zip(flat.into_iter().zip(cum))
        .filter(|(_, (_, cum))| *cum > 0)
        .map(|(frame, (flat, cum))| FunctionWeight { frame, flat, cum })
        .collect();
    functions.sort_by(|a, b| {
        b.cum
            .cmp(&a.cum)
            .then(b.flat.cmp(&a.flat))
            .then(a.frame.cmp(&b.frame))
    });
    functions
}

/// The function (group of frames of one `key`) of every frame, `None` for an allocated-type
/// leaf left out, and the first frame of each function.
fn function_groups<K: Hash + Eq>(
    profile: &Profile,
    types_as_frames: bool,
    key: impl Fn(FrameId) -> K,
) -> (Vec<Option<u32>>, Vec<FrameId>) {
    let mut group_of_key: FxHashMap<K, u32> = FxHashMap::default();
    let mut first_frame: Vec<FrameId> = Vec::new();
    let group_of = (0..profile.frame_count() as u32)
        .map(FrameId)
        .map(|f| {
            if !types_as_frames && profile.frame(f).kind == FrameKind::AllocType {
                return None;
            }
            let next = first_frame.len() as u32;
            let g = *group_of_key.entry(key(f)).or_insert(next);
            if g == next {
                first_frame.push(f);
            }
            Some(g)
        })
        .collect();
    (group_of, first_frame)
}

/// What would claim the heaviest unclassified functions, for `explain`'s last line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NextStep {
    /// `--user PREFIX`: a package prefix covers them (see [`user_hint::suggest_user_prefix`]).
    UserPrefix(user_hint::UserHint),
    /// No package prefix does (C functions, say): a rule block whose `prefix` list names
    /// them, the heaviest first. `weight` is the cum of the heaviest.
    Rule { names: Vec<String>, weight: u128 },
}

/// Functions named in a suggested rule at most: the heaviest few, not a dump of the profile.
const RULE_NAMES: usize = 5;

/// The next step for `unclassified` functions (names and cum weights, heaviest first) out of
/// `total`: the report's `--user` hint (`suggested`, [`user_hint::suggest_user_prefix`], so that
/// `explain` and the report propose one prefix) when there is one, else a rule naming the
/// functions of at least 1 % each; `None` when no unclassified function weighs that much.
pub fn next_step(
    suggested: Option<&user_hint::UserHint>,
    unclassified: &[(&str, u128)],
    total: u128,
) -> Option<NextStep> {
    if let Some(hint) = suggested {
        return Some(NextStep::UserPrefix(hint.clone()));
    }
    let names: Vec<String> = unclassified
        .iter()
        .filter(|(_, w)| quality::percent(*w, total) >= 1.0)
        .take(RULE_NAMES)
        .map(|(n, _)| n.to_string())
        .collect();
    let weight = unclassified.first().map_or(0, |(_, w)| *w);
    (!names.is_empty()).then_some(NextStep::Rule { names, weight })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Frame, SampleType};

    #[test]
    fn lines_of_one_function_are_counted_once_per_sample() {
        let mut p = Profile::new(vec![SampleType::samples()]);
        let line = |l: u32| Frame {
            line: std::num::NonZeroU32::new(l),
            ..Frame::named("f", FrameKind::Native)
        };
        let (f1, f2) = (p.intern_frame(line(1)), p.intern_frame(line(2)));
        let g = p.intern_frame(Frame::named("g", FrameKind::Native));
        // f at line 1 calls g, which calls f again at line 2 (recursion through two lines): 3
        let s = p.intern_stack(&[f2, g, f1]);
        p.add_sample(s, None, &[3]);
        // g alone: 5
        let s = p.intern_stack(&[g]);
        p.add_sample(s, None, &[5]);
        // f line 2 as the leaf: 2
        let s = p.intern_stack(&[f2]);
        p.add_sample(s, None, &[2]);
        let by_name = function_weights(&p, 0, false, |f| p.frame(f).name.clone());
        let get = |n: &str| {
            by_name
                .iter()
                .find(|w| &*p.frame(w.frame).name == n)
                .map(|w| (w.flat, w.cum))
        };
        assert_eq!(get("f"), Some((5, 5)));
        assert_eq!(get("g"), Some((5, 8)));
        assert_eq!(&*p.frame(by_name[0].frame).name, "g", "heaviest cum first");
        let by_frame = function_weights(&p, 0, false, |f| f);
        assert_eq!(by_frame.len(), 3, "each line its own row");
    }

    #[test]
    fn the_next_step_is_a_prefix_when_one_covers_them_else_a_rule() {
        let go = [("main.run", 60), ("main.load", 30), ("helper", 5)];
        let hint = crate::aggregate::user_hint::UserHint {
            prefix: "main.".to_string(),
            owner: 90,
            anywhere: 95,
        };
        assert_eq!(
            next_step(Some(&hint), &go, 100),
            Some(NextStep::UserPrefix(hint.clone()))
        );
        let c = [("main", 50), ("table_put", 20), ("tiny", 0)];
        assert_eq!(
            next_step(None, &c, 100),
            Some(NextStep::Rule {
                names: vec!["main".into(), "table_put".into()],
                weight: 50
            })
        );
        assert_eq!(next_step(None, &[("tiny", 0)], 100), None);
    }
}
