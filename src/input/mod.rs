//! Readers: one per input format, each turning its input into a [`Profile`].
//!
//! The format is detected from the content (perf.data magic, gzip/protobuf, the shape of the
//! first lines), never from the file name; `--format-in` overrides detection. Each format is a
//! row of [`formats`]; this module opens an input, asks the rows and checks what they read.

pub mod bad_lines;
pub mod cpuprofile;
pub mod filter;
pub mod folded;
pub mod formats;
pub mod jfr;
pub mod name_memo;
pub mod options;
pub mod perf_data;
pub mod perf_script;
pub mod pprof;
pub mod progress;
pub mod source;
pub mod speedscope;

pub use options::{InputFormat, ReadOptions};

use crate::error::{Error, Position, Result};
use crate::model::{Notice, Profile};
use source::Source;
use std::path::Path;

/// Reads one input into a validated profile.
pub fn read_profile(path: &Path, options: &ReadOptions) -> Result<Profile> {
    let (source, format) = open(path, options)?;
    let profile = (formats::row(format).read)(source, options)?;
    finish(path, format, profile)
}

/// A reader's profile as every reader's ends: the format noted first, the model checked.
fn finish(path: &Path, format: InputFormat, mut profile: Profile) -> Result<Profile> {
    profile.release_indexes();
    profile.meta.notes.insert(0, Notice::Format(format.name()));
    check_valid(path, &profile)?;
    Ok(profile)
}

/// [`read_profile`], and the value each of the pprof label `keys` has on the samples (`None`
/// where no sample has it, or the input is not pprof): a pprof input is then decoded keeping
/// its samples, whose labels the model does not hold (`report --each --pprof-label`).
pub fn read_profile_labelled(
    path: &Path,
    options: &ReadOptions,
    keys: &[String],
) -> Result<(Profile, Vec<Option<String>>)> {
    if keys.is_empty() {
        return Ok((read_profile(path, options)?, Vec::new()));
    }
    let (source, format) = open(path, options)?;
    if format != InputFormat::Pprof {
        return Ok((read_profile(path, options)?, vec![None; keys.len()]));
    }
    let (profile, decoded) = pprof::read_keeping_samples(source, options)?;
    let profile = finish(path, format, profile)?;
    let values = keys
        .iter()
        .map(|key| pprof_label(path, &decoded, key))
        .collect::<Result<Vec<_>>>()?;
    Ok((profile, values))
}

/// The one value string label `key` has on the profile's samples; `None` when no sample has
/// it. Several values in one profile would need a row per value, which is not built yet.
fn pprof_label(path: &Path, decoded: &pprof::Decoded, key: &str) -> Result<Option<String>> {
    let (proto, strings) = (&decoded.proto, &decoded.strings);
    let text = |i: i64| strings.get(i as usize).unwrap_or("");
    let mut values: Vec<&str> = Vec::new();
    for sample in &proto.sample {
        for label in &sample.label {
            if label.str != 0 && text(label.key) == key {
                let value = text(label.str);
                if !values.contains(&value) {
                    values.push(value);
                }
            }
        }
    }
    match values.as_slice() {
        [] => Ok(None),
        [one] => Ok(Some(one.to_string())),
        many => Err(Error::Unsupported(format!(
            "{}: --pprof-label {key}: the samples have {} values of it ({}...); a row per \
             label value",
            path.display(),
            many.len(),
            many.iter().take(3).copied().collect::<Vec<_>>().join(", ")
        ))),
    }
}

/// [`Profile::validate`] after a reader: a broken invariant is a reader bug, reported against
/// the input that triggered it.
pub fn check_valid(path: &Path, profile: &Profile) -> Result<()> {
    profile
        .validate()
        .map_err(|e| Error::input(path, Position::Whole, format!("internal reader error: {e}")))
}

/// Opens an input and decides its format, for commands that take a format-specific path
/// (`convert` keeps a pprof input's own fields). A sample filter on a format that records no
/// thread or time per sample is refused here, before any reading.
pub fn open(path: &Path, options: &ReadOptions) -> Result<(Source, InputFormat)> {
    let mut source = Source::open(path)?;
    let format = match options.format {
        Some(f) => f,
        None => formats::detect(&mut source)?,
    };
    if !formats::row(format).filters_samples {
        options.filter.refuse(path, format.name())?;
    }
    Ok((source, format))
}
