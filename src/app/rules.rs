//! `whose rules check` and `whose rules list`.

use super::Outcome;
use crate::classify::{RuleSet, rules};
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
        RulesPlan::List { preset } => {
            let names: Vec<String> = match preset {
                Some(p) => vec![p],
                None => crate::classify::presets::names()
                    .map(String::from)
                    .collect(),
            };
            for name in names {
                let options = crate::classify::RuleOptions {
                    presets: vec![name.clone()],
                    ..Default::default()
                };
                let set = RuleSet::build(&options, &[])?;
                println!(
                    "{name} (loads {}): {}",
                    set.presets.join(" → "),
                    owner_list(&set)
                );
            }
        }
    }
    Ok(Outcome::Success)
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
