//! `whose rules check`, `whose rules list` and `whose rules show`.

use super::Outcome;
use crate::classify::rules::{Matchers, OwnerBlock};
use crate::classify::{RuleSet, presets, rules};
use crate::config::RulesPlan;
use crate::error::Result;
use crate::model::OwnerId;

pub fn run(plan: RulesPlan) -> Result<Outcome> {
    match plan {
        RulesPlan::Check { files } => {
            for f in &files {
                let parsed = rules::load(f)?;
                let options = crate::classify::RuleOptions {
                    rule_files: vec![f.clone()],
                    no_presets: parsed.extend.is_empty(),
                    ..Default::default()
                };
                let set = RuleSet::build(&options, &[])?;
                println!(
                    "{}: ok, {} owner block(s), owners: {}{}",
                    f.display(),
                    parsed.blocks.len(),
                    owner_list(&set),
                    if parsed.extend.is_empty() {
                        String::new()
                    } else {
                        format!("; extends {}", parsed.extend.join(", "))
                    }
                );
            }
        }
        RulesPlan::List { preset: None } => {
            for name in presets::names() {
                let set = preset_rules(name)?;
                println!(
                    "{name} (loads {}): {}",
                    set.presets.join(" → "),
                    owner_list(&set)
                );
            }
            println!(
                "`whose rules list --preset NAME` lists a preset's blocks, `whose rules show \
                 NAME` prints its TOML"
            );
        }
        RulesPlan::List { preset: Some(name) } => {
            let set = preset_rules(&name)?;
            println!(
                "{name} (loads {}): {} owner block(s), tried in this order, the first that \
                 matches a frame owns it",
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
            let origin_width = width(&|b| b.origin.to_string());
            let owner_width = width(&|b| owner_cell(&set, b));
            for block in blocks {
                println!(
                    "  {:<origin_width$}  {:<owner_width$}  {}",
                    block.origin.to_string(),
                    owner_cell(&set, block),
                    matchers_cell(block)
                );
            }
            println!("`whose rules show PRESET` prints a preset's TOML; `:N` is its line");
        }
        RulesPlan::Show { preset } => print!("{}", presets::text_or_error(&preset)?),
    }
    Ok(Outcome::Success)
}

/// The rules of preset `name` alone, with the presets it extends.
fn preset_rules(name: &str) -> Result<RuleSet> {
    let options = crate::classify::RuleOptions {
        presets: vec![name.to_string()],
        ..Default::default()
    };
    RuleSet::build(&options, &[])
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
