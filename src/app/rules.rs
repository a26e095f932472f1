//! `whose rules check`, `whose rules list` and `whose rules show`.

use super::Outcome;
use crate::classify::{RuleSet, presets, rules};
use crate::config::RulesPlan;
use crate::error::Result;
use crate::render;

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
                let blocks = parsed.blocks.len();
                println!(
                    "{}",
                    render::rule_listing::checked(f, blocks, &set, &parsed.extend)
                );
            }
        }
        RulesPlan::List { preset: None } => {
            let sets = presets::names()
                .map(|name| Ok((name, preset_rules(name)?)))
                .collect::<Result<Vec<_>>>()?;
            print!("{}", render::rule_listing::presets(&sets));
        }
        RulesPlan::List { preset: Some(name) } => {
            let set = preset_rules(&name)?;
            print!("{}", render::rule_listing::preset_blocks(&name, &set));
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
