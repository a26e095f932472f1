//! `whose rules check`, `whose rules list` and `whose rules show`. Standard output is written
//! as every command writes it ([`write_output`]): a write error is exit 2, a closed pipe a
//! quiet exit 0 (issue 61).

use super::{Outcome, write_output};
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
                let text = render::rule_listing::checked(f, blocks, &set, &parsed.extend);
                write_output(None, |out, _| writeln!(out, "{text}"))?;
            }
        }
        RulesPlan::List { preset: None } => {
            let sets = presets::names()
                .map(|name| Ok((name, preset_rules(name)?)))
                .collect::<Result<Vec<_>>>()?;
            let text = render::rule_listing::presets(&sets);
            write_output(None, |out, _| out.write_all(text.as_bytes()))?;
        }
        RulesPlan::List { preset: Some(name) } => {
            let set = preset_rules(&name)?;
            let text = render::rule_listing::preset_blocks(&name, &set);
            write_output(None, |out, _| out.write_all(text.as_bytes()))?;
        }
        RulesPlan::Show { preset } => {
            let text = presets::text_or_error(&preset)?;
            write_output(None, |out, _| out.write_all(text.as_bytes()))?;
        }
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
