//! `whose convert`: a profile as pprof with owner labels per sample, or as folded stacks.

use super::{Outcome, choose_metric, write_output};
use crate::aggregate;
use crate::classify::RuleSet;
use crate::cli::ConvertTo;
use crate::config::{ConvertPlan, LoadConfig};
use crate::error::{Error, Result};
use crate::export::{self, pprof::OwnerLabels};
use crate::input::{self, InputFormat, pprof::Decoded};
use crate::model::Profile;
use std::path::Path;

pub fn run(plan: ConvertPlan) -> Result<Outcome> {
    let config = &plan.load;
    // only `--to pprof` writes a pprof input's own samples back; folded lines need the folded
    // rows alone, so a 10 M-sample profile is read in the memory of its distinct stacks
    let (profile, decoded) = read(&plan.profile, config, plan.to == ConvertTo::Pprof)?;
    for w in &profile.meta.warnings {
        eprintln!("whose: warning: {}", crate::render::notices::text(w));
    }
    match plan.to {
        ConvertTo::Folded => {
            let metric = choose_metric(&profile, &plan.profile, config.metric.as_deref())?;
            let t = &profile.sample_types()[metric];
            let mut written = export::folded::Written {
                lines: 0,
                differential: false,
            };
            if plan.owner_root {
                let negative = profile.negative.total(metric);
                if negative > 0 {
                    return Err(Error::Unsupported(format!(
                        "{}: --owner-root: metric {} has negative weights (-{}, a delta \
                         profile), and an owner's share of a signed total means nothing; \
                         without --owner-root the lines carry both parts (`stack BEFORE AFTER`)",
                        plan.profile.display(),
                        t.name,
                        t.unit.format(negative)
                    )));
                }
                written.lines =
                    write_owner_rooted(&profile, config, metric, plan.output.as_deref())?;
            } else {
                write_output(plan.output.as_deref(), |out, _| {
                    written = export::folded::write(&profile, metric, plan.plain, out)?;
                    Ok(())
                })?;
            }
            let said = crate::render::notices::wrote_folded(written.lines, written.differential, t);
            eprintln!("whose: {said}");
        }
        ConvertTo::Pprof => {
            let (rules, mut classes) =
                RuleSet::build_classified(&config.rules, std::slice::from_ref(&profile))?;
            let classes = classes.remove(0);
            let labels = OwnerLabels {
                per_stack: aggregate::stack_owners(
                    &profile,
                    &rules,
                    &classes,
                    config.types_as_frames,
                ),
                rules: &rules,
            };
            match decoded {
                Some(mut d) => {
                    let (proto, strings) = (&mut d.proto, &mut d.strings);
                    export::pprof::add_owner_labels(proto, strings, &d.sample_stacks, &labels);
                    write_output(plan.output.as_deref(), |out, _| {
                        export::pprof::write_decoded_gz(&d.proto, &d.strings, out)
                    })?;
                }
                None => {
                    if let Some((metric, count)) = export::pprof::count_past_int64(&profile) {
                        return Err(Error::Unsupported(format!(
                            "{}: a count of {}, {count}, does not fit pprof's 64-bit signed \
                             values (at most {}): refused rather than clamped; `convert --to \
                             folded` keeps it",
                            plan.profile.display(),
                            profile.sample_types()[metric].name,
                            i64::MAX
                        )));
                    }
                    write_output(plan.output.as_deref(), |out, _| {
                        export::pprof::write_profile_gz(&profile, &labels, out)
                    })?;
                }
            }
        }
    }
    Ok(Outcome::Success)
}

/// Folded lines under a `[owner: NAME]` root per sample owner, the lines `whose flame
/// --owner-root` draws. Returns the number of lines.
fn write_owner_rooted(
    profile: &Profile,
    config: &LoadConfig,
    metric: usize,
    output: Option<&Path>,
) -> Result<usize> {
    let (rules, mut classes) =
        RuleSet::build_classified(&config.rules, std::slice::from_ref(profile))?;
    let classes = classes.remove(0);
    let options = aggregate::flame_lines::FlameOptions {
        metric,
        types_as_frames: config.types_as_frames,
        annotate: None,
        owner_root: true,
    };
    let lines = aggregate::flame_lines::flame_lines(profile, &rules, &classes, &options);
    let mut written = 0;
    write_output(output, |out, _| {
        written = lines.write_folded(None, out)?;
        Ok(())
    })?;
    Ok(written)
}

/// The profile, and for a pprof file (not standard input, which cannot be read twice) the
/// decoded file too, so its own fields survive the conversion.
fn read(
    path: &Path,
    config: &LoadConfig,
    keep_samples: bool,
) -> Result<(Profile, Option<Decoded>)> {
    if keep_samples && path != Path::new("-") {
        let (source, format) = input::open(path, &config.read)?;
        if format == InputFormat::Pprof {
            let (profile, decoded) = input::pprof::read_keeping_samples(source, &config.read)?;
            input::check_valid(path, &profile)?;
            return Ok((profile, Some(decoded)));
        }
    }
    Ok((input::read_profile(path, &config.read)?, None))
}
