//! perf.data (placeholder until the reader lands).

use super::ReadOptions;
use super::source::Source;
use crate::error::{Error, Result};
use crate::model::Profile;

pub fn read(source: Source, _options: &ReadOptions) -> Result<Profile> {
    Err(Error::Unsupported(format!(
        "perf.data input ({})",
        source.path.display()
    )))
}
