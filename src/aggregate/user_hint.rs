//! The `--user PREFIX` hint: the package prefix that would move the most weight to user
//! code, found from every frame's owner and the owner-view weight it decides.

use super::heaviest::FrameAccumulator;
use super::quality::percent;
use super::views::Attribution;
use super::walk::PARALLEL_GROUPING;
use crate::classify::{Classification, RuleSet};
use crate::model::{Category, FrameId, OwnerId, Profile};

/// The `--user PREFIX` that would move the most weight to user code: every frame with who
/// owns it and the owner-view weight it decides, then the weight through the prefix.
pub(super) fn suggest_user(
    profile: &Profile,
    rules: &RuleSet,
    classes: &Classification,
    frames: &FrameAccumulator,
    all: &Attribution,
    metric: usize,
) -> Option<UserHint> {
    let claim = |f: FrameId| match classes.owner_of(f) {
        OwnerId::UNCLASSIFIED => Claim::Unclassified,
        o if rules.owner(o).category == Category::User => Claim::User,
        _ => Claim::Other,
    };
    let hint_frame = |f: u32| {
        let f = FrameId(f);
        let name = &*profile.frame(f).name;
        let (owner, inclusive) = (frames.owner_frames.get(f), frames.unclassified.get(f));
        (name, claim(f), owner, inclusive)
    };
    let count = profile.frame_count() as u32;
    // every frame's name is read and cut: on every core past a few thousand
    let weights = if count as usize >= PARALLEL_GROUPING {
        use rayon::prelude::*;
        (0..count)
            .into_par_iter()
            .fold(PrefixWeights::default, |mut weights, f| {
                weights.add(hint_frame(f));
                weights
            })
            .reduce(PrefixWeights::default, PrefixWeights::merge)
    } else {
        PrefixWeights::of((0..count).map(hint_frame))
    };
    let mut hint = suggest_user_prefix(weights, all.total)?;
    hint.anywhere = weight_through(profile, metric, |f| {
        claim(f) == Claim::Unclassified && has_prefix(&profile.frame(f).name, &hint.prefix)
    });
    Some(hint)
}

/// The weight in `metric` of the samples whose stack holds a frame for which `marked` holds
/// (each frame judged once, each stack once).
fn weight_through(profile: &Profile, metric: usize, marked: impl Fn(FrameId) -> bool) -> u128 {
    let frames: Vec<bool> = (0..profile.frame_count() as u32)
        .map(|f| marked(FrameId(f)))
        .collect();
    let mut stacks: Vec<Option<bool>> = vec![None; profile.stack_count()];
    let mut weight = 0u128;
    for row in profile.rows() {
        let through = *stacks[row.stack.0 as usize]
            .get_or_insert_with(|| (profile.stack(row.stack).iter()).any(|f| frames[f.0 as usize]));
        if through {
            weight = weight.saturating_add(row.values[metric]);
        }
    }
    weight
}

/// Package roots too broad to be one project's code on their own: a prefix starting with one
/// of them takes its second segment too (`io.ktor.`, `com.example.`).
const BROAD_ROOTS: &[&str] = &[
    "com", "org", "io", "net", "dev", "me", "edu", "uk", "de", "fr", "github", "gitlab",
];

/// The package or crate prefix of a function name (`bench.MainKt.main` → `bench.`,
/// `logcrunch::parse::line` → `logcrunch::`, `main.handle` → `main.`); `None` for a name
/// without one (a C function).
fn prefix_of(name: &str) -> Option<&str> {
    let name = name.trim_start_matches(['<', '&', '*']);
    // the first `::`, `.` or `/`: one pass over the bytes, which every distinct frame pays
    let first = |s: &str| {
        let bytes = s.as_bytes();
        bytes.iter().enumerate().find_map(|(at, b)| match b {
            b'.' => Some((at, ".")),
            b'/' => Some((at, "/")),
            b':' if bytes.get(at + 1) == Some(&b':') => Some((at, "::")),
            _ => None,
        })
    };
    let (at, sep) = first(name)?;
    let head = &name[..at];
    if head.is_empty()
        || !head
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '-')
    {
        return None;
    }
    let prefix_end = at + sep.len();
    // GCC's and LLVM's clone suffixes (`table_round.constprop.0`) are no package
    const CLONE_SUFFIXES: [&str; 7] = [
        "constprop",
        "isra",
        "part",
        "cold",
        "lto_priv",
        "localalias",
        "llvm",
    ];
    if sep == "."
        && CLONE_SUFFIXES
            .iter()
            .any(|c| name[prefix_end..].starts_with(c))
    {
        return None;
    }
    if BROAD_ROOTS.contains(&head) {
        let rest = &name[prefix_end..];
        let (at2, sep2) = first(rest)?;
        return Some(&name[..prefix_end + at2 + sep2.len()]);
    }
    Some(&name[..prefix_end])
}

/// Who owns a frame, as the `--user` hint weighs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Claim {
    /// No rule, guess or preset: `--user` would take it.
    Unclassified,
    /// User code already (a `--user`, a rule, or the guessed own code).
    User,
    /// A preset, a rule or a guess owns it as other than user code.
    Other,
}

/// The `--user PREFIX` hint: the prefix and what it would move to user code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserHint {
    pub prefix: String,
    /// Owner-view weight `--user PREFIX` moves from `unclassified` to user code.
    pub owner: u128,
    /// Weight of the stacks through a frame under the prefix: user code's anywhere weight
    /// gains it (filled in by `aggregate`, which walks the stacks once more for it).
    pub anywhere: u128,
}

/// A frame as the `--user` hint weighs it: its name, who owns it, the owner-view weight it
/// decides (as the owner frame) and its inclusive weight.
pub type HintFrame<'a> = (&'a str, Claim, u128, u128);

/// The `--user PREFIX` hint (issue 28): the package prefix of unclassified frames that would
/// move the most weight to user code in the owner view (then the heaviest frame's inclusive
/// weight decides), with that owner-view weight; `None` unless the prefix's heaviest frame
/// carries at least 1 % of `total`. `anywhere` is left 0 for the caller.
///
/// The owner-view weight is exactly what `--user PREFIX` moves: the prefix's frames are all
/// unclassified (hence not transparent), so a stack changes owner exactly when its owner
/// frame is one of them. A prefix under which a preset, a rule or a guess owns any frame as
/// non-user code is never proposed: `--user` comes first and would take that code from its
/// owner (a framework's `io.ktor.`, a dependency's crate once it is guessed as a library).
pub fn suggest_user_prefix(weights: PrefixWeights<'_>, total: u128) -> Option<UserHint> {
    weights
        .by_prefix
        .into_iter()
        .filter_map(|(p, w)| Some((p, w?)))
        .max_by(|a, b| a.1.cmp(&b.1).then_with(|| b.0.cmp(a.0)))
        .filter(|(_, (_, inclusive))| percent(*inclusive, total) >= 1.0)
        .map(|(p, (owner, _))| UserHint {
            prefix: p.to_string(),
            owner,
            anywhere: 0,
        })
}

/// What [`suggest_user_prefix`] weighs, per package prefix: the owner-view weight moved and
/// the heaviest inclusive frame; `None` once a frame under it is owned as non-user code.
/// Sums of disjoint sets of frames merge into the sum of their union, so the frames can be
/// weighed on every core.
#[derive(Debug, Default)]
pub struct PrefixWeights<'a> {
    // a map, not a list searched per frame: millions of distinct prefixes made that quadratic
    by_prefix: rustc_hash::FxHashMap<&'a str, Option<(u128, u128)>>,
}

impl<'a> PrefixWeights<'a> {
    pub fn of(frames: impl Iterator<Item = HintFrame<'a>>) -> PrefixWeights<'a> {
        let mut weights = PrefixWeights::default();
        frames.for_each(|frame| weights.add(frame));
        weights
    }

    pub fn add(&mut self, (name, claim, owner, inclusive): HintFrame<'a>) {
        let Some(prefix) = prefix_of(name) else {
            return;
        };
        let entry = self.by_prefix.entry(prefix).or_insert(Some((0, 0)));
        match claim {
            Claim::Unclassified => {
                *entry = entry.map(|(o, i)| (o + owner, i.max(inclusive)));
            }
            Claim::Other => *entry = None,
            Claim::User => {}
        }
    }

    /// The weights of both sets of frames.
    pub fn merge(mut self, other: PrefixWeights<'a>) -> PrefixWeights<'a> {
        if self.by_prefix.len() < other.by_prefix.len() {
            return other.merge(self);
        }
        for (prefix, theirs) in other.by_prefix {
            let ours = self.by_prefix.entry(prefix).or_insert(Some((0, 0)));
            *ours = ours
                .zip(theirs)
                .map(|((o, i), (o2, i2))| (o + o2, i.max(i2)));
        }
        self
    }
}

/// Whether `name` is under the package prefix `prefix` as [`prefix_of`] cuts it.
pub fn has_prefix(name: &str, prefix: &str) -> bool {
    prefix_of(name) == Some(prefix)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn package_prefixes_of_each_ecosystem() {
        assert_eq!(prefix_of("bench.MainKt$main$1.invoke"), Some("bench."));
        assert_eq!(prefix_of("io.ktor.server.Foo.bar"), Some("io.ktor."));
        assert_eq!(prefix_of("logcrunch::parse::line"), Some("logcrunch::"));
        assert_eq!(prefix_of("main.handleOrders"), Some("main."));
        assert_eq!(
            prefix_of("<logcrunch::X as core::fmt::Display>::fmt"),
            Some("logcrunch::")
        );
        assert_eq!(prefix_of("table_put"), None);
        assert_eq!(prefix_of("table_round.constprop.0"), None);
        assert_eq!(prefix_of("sort_files.isra.0"), None);
        assert_eq!(prefix_of("[unknown]"), None);
    }

    #[test]
    fn the_hint_weighs_what_user_would_move_and_spares_owned_prefixes() {
        use Claim::*;
        let hint = |prefix: &str, owner| {
            Some(UserHint {
                prefix: prefix.into(),
                owner,
                anywhere: 0,
            })
        };
        // by hand: `app.` owns 60 + 30 of the owner view (two frames: the old hint said 60,
        // its heaviest frame); `lib.` would move 95 but a preset owns `lib.Z.z`, and `--user
        // lib.` would take that from it; `work` has no prefix
        let frames = [
            ("app.A.run", Unclassified, 60, 70),
            ("app.B.go", Unclassified, 30, 30),
            ("app.C.done", User, 40, 40),
            ("lib.X.y", Unclassified, 95, 95),
            ("lib.Z.z", Other, 0, 0),
            ("work", Unclassified, 99, 99),
        ];
        assert_eq!(
            suggest_user_prefix(PrefixWeights::of(frames.into_iter()), 1000),
            hint("app.", 90)
        );
        // frames that own nothing in the owner view (callers of a library that owns it all)
        // are still proposed by their inclusive weight: the anywhere view gains them
        let callers = [("bench.Main.run", Unclassified, 0, 500)];
        assert_eq!(
            suggest_user_prefix(PrefixWeights::of(callers.into_iter()), 1000),
            hint("bench.", 0)
        );
        // under 1 % of the total: no hint
        let tiny = [("app.A.run", Unclassified, 9, 9)];
        assert_eq!(
            suggest_user_prefix(PrefixWeights::of(tiny.into_iter()), 1000),
            None
        );
        // a prefix of user code only: nothing to move
        let user = [("app.A.run", User, 500, 500)];
        assert_eq!(
            suggest_user_prefix(PrefixWeights::of(user.into_iter()), 1000),
            None
        );
        assert!(has_prefix("<app::X as core::fmt::Display>::fmt", "app::"));
        assert!(!has_prefix("apple::x", "app::"));
        // weighed in two parts on two cores, merged: the same hint at every cut
        for cut in 0..=frames.len() {
            let (a, b) = frames.split_at(cut);
            let merged =
                PrefixWeights::of(a.iter().copied()).merge(PrefixWeights::of(b.iter().copied()));
            assert_eq!(
                suggest_user_prefix(merged, 1000),
                hint("app.", 90),
                "cut at {cut}"
            );
        }
    }
}
