//! Whether a frame matches an owner block, and by which matcher: asked one block after the
//! other by the rule set, the presets' detection and the block index's `all` entries alike,
//! so it stands below all of them and names nothing of theirs.

use super::match_key;
use super::rules::{Matchers, OwnerBlock};
use crate::model::{Frame, FrameKind};

/// Which matcher of a block claimed a frame, with the pattern as the rules write it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Matched {
    Prefix(String),
    Regex(String),
    Module(String),
    File(String),
    Crate(String),
    Kind(FrameKind),
    /// One entry of the block's `all` list.
    AllEntry,
    /// None (a block chosen without a matcher to name).
    #[default]
    Nothing,
}

/// What a frame offers to matchers, computed once per frame.
pub(super) struct Probe<'a> {
    frame: &'a Frame,
    key: &'a str,
    module: Option<&'a str>,
    krate: Option<&'a str>,
}

impl<'a> Probe<'a> {
    /// `key` is the frame's [`match_key::match_key`].
    pub(super) fn new(frame: &'a Frame, key: &'a str) -> Probe<'a> {
        Probe {
            frame,
            key,
            module: frame.module_basename(),
            krate: match_key::rust_crate(key),
        }
    }

    /// Which matcher of the block matched, for `explain`.
    pub(super) fn block_match(&self, block: &OwnerBlock) -> Option<Matched> {
        self.first_match(&block.any, &block.all)
    }

    /// Which of `any` matched, or that one entry of `all` did.
    fn first_match(&self, any: &Matchers, all: &[Matchers]) -> Option<Matched> {
        if let Some(m) = self.any_match(any) {
            return Some(m);
        }
        all.iter()
            .find(|entry| self.all_match(entry))
            .map(|_| Matched::AllEntry)
    }

    fn any_match(&self, m: &Matchers) -> Option<Matched> {
        if let Some(p) = m.prefix.iter().find(|p| self.key.starts_with(p.as_str())) {
            return Some(Matched::Prefix(p.clone()));
        }
        if let Some(r) = m.regex.iter().find(|r| r.is_match(&self.frame.name)) {
            return Some(Matched::Regex(r.as_str().to_string()));
        }
        if let Some(g) = m.module.iter().find(|g| g.matches_module(self.module)) {
            return Some(Matched::Module(g.as_string()));
        }
        if let Some(file) = self.frame.file.as_deref()
            && let Some(g) = m.file.iter().find(|g| g.matches(file))
        {
            return Some(Matched::File(g.as_string()));
        }
        if let Some(krate) = self.krate
            && let Some(c) = m.crates.iter().find(|c| c.as_str() == krate)
        {
            return Some(Matched::Crate(c.clone()));
        }
        if m.kind.contains(&self.frame.kind) {
            return Some(Matched::Kind(self.frame.kind));
        }
        None
    }

    pub(super) fn all_match(&self, m: &Matchers) -> bool {
        let one = |present: bool, hit: bool| !present || hit;
        one(
            !m.prefix.is_empty(),
            m.prefix.iter().any(|p| self.key.starts_with(p.as_str())),
        ) && one(
            !m.regex.is_empty(),
            m.regex.iter().any(|r| r.is_match(&self.frame.name)),
        ) && one(
            !m.module.is_empty(),
            m.module.iter().any(|g| g.matches_module(self.module)),
        ) && one(
            !m.file.is_empty(),
            self.frame
                .file
                .as_deref()
                .is_some_and(|f| m.file.iter().any(|g| g.matches(f))),
        ) && one(
            !m.crates.is_empty(),
            self.krate.is_some_and(|k| m.crates.iter().any(|c| c == k)),
        ) && one(!m.kind.is_empty(), m.kind.contains(&self.frame.kind))
    }
}

/// The first of `matchers` (each an `any` set and its `all` entries, as [`BlockIndex::new`]
/// takes them) that matches `frame`, tried one by one: what the index answers at once.
pub(super) fn first_in_order<'m>(
    matchers: impl IntoIterator<Item = (&'m Matchers, &'m [Matchers])>,
    frame: &Frame,
    key: &str,
) -> Option<usize> {
    let probe = Probe::new(frame, key);
    (matchers.into_iter()).position(|(any, all)| probe.first_match(any, all).is_some())
}
