//! `whose rules check` and `whose rules list` in words: a checked file's owners, each
//! preset's owners, and a preset's blocks in the order they are tried.

use crate::classify::RuleSet;
use crate::classify::rules::{Matchers, OwnerBlock};
use crate::model::OwnerId;
use std::path::Path;

/// `rules check`'s line for a file of `blocks` owner blocks that `extend`s those presets.
pub fn checked(path: &Path, blocks: usize, set: &RuleSet, extend: &[String]) -> String {
    format!(
        "{}: ok, {blocks} owner block(s), owners: {}{}",
        path.display(),
        owner_list(set),
        if extend.is_empty() {
            String::new()
        } else {
            format!("; extends {}", extend.join(", "))
        }
    )
}

/// `rules list`: a line per preset (`name`, its rules in `set`), then how to see more.
pub fn presets(sets: &[(&str, RuleSet)]) -> String {
    let mut out = String::new();
    for (name, set) in sets {
        out.push_str(&format!(
            "{name} (loads {}): {}\n",
            set.presets.join(" → "),
            owner_list(set)
        ));
    }
    out.push_str(
        "`whose rules list --preset NAME` lists a preset's blocks, `whose rules show NAME` \
         prints its TOML\n",
    );
    out
}

/// `rules list --preset NAME`: the preset's blocks in the order they are tried, each with
/// where it is declared, its owner and its matchers in brief.
pub fn preset_blocks(name: &str, set: &RuleSet) -> String {
    let mut out = format!(
        "{name} (loads {}): {} owner block(s), tried in this order, the first that matches a \
         frame owns it\n",
        set.presets.join(" → "),
        set.blocks().len()
    );
    let blocks: Vec<&OwnerBlock> = set.blocks().collect();
    let width = |f: &dyn Fn(&OwnerBlock) -> String| {
        blocks
            .iter()
            .map(|b| f(b).chars().count())
            .max()
            .unwrap_or(0)
    };
    let origin_width = width(&|b| super::guess::origin(&b.origin));
    let owner_width = width(&|b| owner_cell(set, b));
    for block in blocks {
        out.push_str(&format!(
            "  {:<origin_width$}  {:<owner_width$}  {}\n",
            super::guess::origin(&block.origin),
            owner_cell(set, block),
            matchers_cell(block)
        ));
    }
    out.push_str("`whose rules show PRESET` prints a preset's TOML; `:N` is its line\n");
    out
}

fn owner_list(set: &RuleSet) -> String {
    set.owners()
        .iter()
        .skip(OwnerId::BUILT_IN_COUNT)
        .map(|o| {
            format!(
                "{} ({}{})",
                o.name,
                o.category,
                if o.transparent { ", transparent" } else { "" }
            )
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// `go-runtime (runtime, transparent)`: a block's owner as the rule set declares it (a
/// block that does not say inherits its category's transparency).
fn owner_cell(set: &RuleSet, block: &OwnerBlock) -> String {
    let transparent = set
        .owners()
        .iter()
        .any(|o| o.name == block.name && o.transparent);
    let transparent = if transparent { ", transparent" } else { "" };
    format!("{} ({}{transparent})", block.name, block.category)
}

/// The longest a block's matcher summary is shown: `rules show` has the whole text.
const MATCHERS_WIDTH: usize = 44;

/// A block's matchers in brief: per kind the first and how many more, `all` entries counted.
fn matchers_cell(block: &OwnerBlock) -> String {
    let mut parts = matcher_kinds(&block.any);
    if !block.all.is_empty() {
        parts.push(format!(
            "all [{} entr{}]",
            block.all.len(),
            if block.all.len() == 1 { "y" } else { "ies" }
        ));
    }
    let text = parts.join(", ");
    if text.chars().count() <= MATCHERS_WIDTH {
        text
    } else {
        let mut cut: String = text.chars().take(MATCHERS_WIDTH - 1).collect();
        cut.push('…');
        cut
    }
}

fn matcher_kinds(m: &Matchers) -> Vec<String> {
    let kind = |name: &str, values: Vec<String>| -> Option<String> {
        let first = values.first()?;
        Some(match values.len() {
            1 => format!("{name} {first:?}"),
            n => format!("{name} {first:?} +{} more", n - 1),
        })
    };
    [
        kind("prefix", m.prefix.clone()),
        kind(
            "regex",
            m.regex.iter().map(|r| r.as_str().to_string()).collect(),
        ),
        kind("module", m.module.iter().map(|g| g.as_string()).collect()),
        kind("file", m.file.iter().map(|g| g.as_string()).collect()),
        kind("crate", m.crates.clone()),
        kind(
            "kind",
            m.kind.iter().map(|k| k.as_str().to_string()).collect(),
        ),
    ]
    .into_iter()
    .flatten()
    .collect()
}
