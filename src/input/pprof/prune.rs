//! `drop_frames`/`keep_frames`: pprof's own pruning of stacks, matched as `go tool pprof`
//! matches them, and the location ([`Loc`]) that carries what they decided.

use super::*;

/// One location's frames (leaf first) as a range of `build::Builder::loc_frames`, and how
/// `drop_frames` prunes it.
#[derive(Clone, Copy)]
pub(super) struct Loc {
    pub(super) start: u32,
    pub(super) end: u32,
    /// Every line matched `drop_frames`: the location and everything leafward go.
    pub(super) prune: bool,
    /// Some inlined line matched: the location stays (with fewer frames), leafward goes.
    pub(super) prune_beneath: bool,
}

/// `drop_frames`/`keep_frames`, matched on function names simplified as pprof does.
pub(super) struct Prune {
    pub(super) drop: regex::Regex,
    pub(super) keep: Option<regex::Regex>,
    pub(super) cache: FxHashMap<String, bool>,
}

impl Prune {
    pub(super) fn drops(&mut self, name: &str) -> bool {
        if let Some(&hit) = self.cache.get(name) {
            return hit;
        }
        let simple = simplify_func(name);
        let hit =
            self.drop.is_match(simple) && !self.keep.as_ref().is_some_and(|k| k.is_match(simple));
        self.cache.insert(name.to_string(), hit);
        hit
    }
}

/// pprof's `simplifyFunc`: drop a leading `.` (PPC ELF v1) and everything from the first `(`
/// that does not start `(anonymous namespace)` or `operator()`.
pub(super) fn simplify_func(name: &str) -> &str {
    let name = name.strip_prefix('.').unwrap_or(name);
    let mut search = 0;
    while let Some(pos) = name[search..].find(['(', 'o']) {
        let at = search + pos;
        let rest = &name[at..];
        if rest.starts_with("(anonymous namespace)") {
            search = at + "(anonymous namespace)".len();
        } else if rest.starts_with("operator()") {
            search = at + "operator()".len();
        } else if rest.starts_with('(') {
            return &name[..at];
        } else {
            search = at + 1;
        }
    }
    name
}

/// pprof's `Prune` on one sample (locations leaf first): from the root, after the first
/// location not touched by `drop_frames`, the first dropped location cuts the stack there
/// (itself included), and the first partially dropped one cuts below it.
pub(super) fn prune_sample(locs: &[Loc]) -> &[Loc] {
    let mut found_user = false;
    for i in (0..locs.len()).rev() {
        let loc = locs[i];
        if !loc.prune && !loc.prune_beneath {
            found_user = true;
            continue;
        }
        if !found_user {
            continue;
        }
        if loc.prune {
            return &locs[i + 1..];
        }
        return &locs[i..];
    }
    locs
}
