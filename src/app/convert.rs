//! `whose convert`: a profile as pprof with owner labels per sample, or as folded stacks.

use super::{Outcome, choose_metric, write_output};
use crate::classify::{Classification, OwnerId, RuleSet, UNSYMBOLIZED};
use crate::cli::{ConvertArgs, ConvertTo};
use crate::config::LoadConfig;
use crate::error::{Error, Position, Result};
use crate::input::{self, InputFormat, pprof::Decoded};
use crate::model::{FrameKind, Profile, StackId};
use crate::render::{self, pprof::OwnerLabels, pprof::StackOwners};
use std::path::Path;

pub fn run(args: ConvertArgs) -> Result<Outcome> {
    let config = LoadConfig::new(&args.input, &args.rules);
    let (profile, decoded) = read(&args.profile, &config)?;
    for w in &profile.meta.warnings {
        eprintln!("whose: warning: {w}");
    }
    match args.to {
        ConvertTo::Folded => {
            let (metric, _) = choose_metric(&profile, &args.profile, config.metric.as_deref())?;
            let mut lines = 0;
            write_output(args.output.as_deref(), |out, _| {
                lines = render::folded::write(&profile, metric, out)?;
                Ok(())
            })?;
            let t = &profile.sample_types()[metric];
            eprintln!(
                "whose: wrote {lines} folded stacks of {} ({}); read them back with --unit {}",
                t.name,
                t.unit,
                t.unit.name()
            );
        }
        ConvertTo::Pprof => {
            let rules = RuleSet::build(&config.rules, std::slice::from_ref(&profile))?;
            let classes = rules.classify(&profile);
            let labels = OwnerLabels {
                per_stack: stack_owners(&profile, &rules, &classes, config.types_as_frames),
                rules: &rules,
            };
            let proto = match decoded {
                Some(mut d) => {
                    render::pprof::add_owner_labels(&mut d.proto, &d.sample_stacks, &labels);
                    d.proto
                }
                None => render::pprof::from_profile(&profile, &labels),
            };
            write_output(args.output.as_deref(), |out, _| {
                render::pprof::write_gz(&proto, out)
            })?;
        }
    }
    Ok(Outcome::Success)
}

/// The profile, and for a pprof file (not standard input, which cannot be read twice) the
/// decoded file too, so its own fields survive the conversion.
fn read(path: &Path, config: &LoadConfig) -> Result<(Profile, Option<Decoded>)> {
    if path != Path::new("-") {
        let (source, format) = input::open(path, &config.read)?;
        if format == InputFormat::Pprof {
            let (profile, decoded) = input::pprof::read_keeping_samples(source, &config.read)?;
            profile.validate().map_err(|e| {
                Error::input(path, Position::Whole, format!("internal reader error: {e}"))
            })?;
            return Ok((profile, Some(decoded)));
        }
    }
    Ok((input::read_profile(path, &config.read)?, None))
}

/// The self-view and owner-view owner of every stack, by DESIGN "Semantics of the three
/// views" (the same rules `aggregate` applies): allocated-class leaves are skipped unless
/// `--types-as-frames`; the owner is the first non-transparent frame's, else the leaf's.
fn stack_owners(
    profile: &Profile,
    rules: &RuleSet,
    classes: &Classification,
    types_as_frames: bool,
) -> Vec<StackOwners> {
    let unsymbolized = rules.owner_id(UNSYMBOLIZED).unwrap_or(OwnerId(1));
    (0..profile.stack_count())
        .map(|i| {
            let all = profile.stack(StackId(i as u32));
            let skip = if types_as_frames {
                0
            } else {
                all.iter()
                    .take_while(|&&f| profile.frame(f).kind == FrameKind::AllocType)
                    .count()
            };
            let frames = &all[skip..];
            let self_owner = frames
                .first()
                .map_or(unsymbolized, |&f| classes.owner_of(f));
            let owner = frames
                .iter()
                .map(|&f| classes.owner_of(f))
                .find(|&o| !rules.owner(o).transparent)
                .unwrap_or(self_owner);
            StackOwners { self_owner, owner }
        })
        .collect()
}
