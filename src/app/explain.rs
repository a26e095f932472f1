//! `whose explain`: which rule classified each of the heaviest frames.

use super::{Outcome, choose_metric, load, write_output};
use crate::aggregate;
use crate::classify::Reason;
use crate::cli::ExplainArgs;
use crate::config::LoadConfig;
use crate::error::{Error, Result};
use crate::render;

pub fn run(args: ExplainArgs) -> Result<Outcome> {
    let config = LoadConfig::new(&args.input, &args.rules);
    let loaded = load(std::slice::from_ref(&args.profile), &config)?;
    let profile = &loaded.profiles[0];
    let filter = args
        .frame
        .as_deref()
        .map(regex::Regex::new)
        .transpose()
        .map_err(|e| Error::Usage(format!("--frame: invalid regex: {e}")))?;
    let (metric, _) = choose_metric(profile, &args.profile, config.metric.as_deref())?;
    let weights = aggregate::frame_inclusive_weights(profile, metric);
    let mut frames: Vec<(usize, u128)> = weights
        .into_iter()
        .enumerate()
        .filter(|(i, w)| {
            *w > 0
                && filter.as_ref().is_none_or(|r| {
                    r.is_match(&profile.frame(crate::model::FrameId(*i as u32)).name)
                })
        })
        .collect();
    frames.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let total = profile.totals()[metric];
    write_output(None, |out, _| {
        writeln!(
            out,
            "presets: {}",
            if loaded.rules.presets.is_empty() {
                "none".to_string()
            } else {
                loaded.rules.presets.join(", ")
            }
        )?;
        writeln!(out, "{:>7}  {:<20} {:<40} frame", "incl.", "owner", "rule")?;
        for (i, w) in frames.iter().take(args.top) {
            let frame = profile.frame(crate::model::FrameId(*i as u32));
            let (owner, reason) = loaded.rules.classify_frame(frame);
            let why = match reason {
                Reason::Rule { block, matcher } => {
                    format!("{matcher} @ {}", loaded.rules.block(block).origin)
                }
                Reason::NoRuleMatched => "no rule matched".to_string(),
                Reason::Unresolved => "unresolved address".to_string(),
            };
            writeln!(
                out,
                "{:>7}  {:<20} {:<40} {}",
                render::pct(crate::aggregate::report::share(*w, total)),
                loaded.rules.owner(owner).name,
                why,
                frame
            )?;
        }
        Ok(())
    })?;
    Ok(Outcome::Success)
}
