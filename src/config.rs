//! From the command line to the plain option structs the stages take. Core code never sees
//! clap types; everything that can be checked before reading input is checked here.

use crate::aggregate::report::{Combine, View};
use crate::classify::RuleOptions;
use crate::cli::{InputArgs, RuleArgs};
use crate::input::{ReadOptions, SymbolOptions};

/// Everything needed to turn paths into classified profiles.
#[derive(Debug, Clone)]
pub struct LoadConfig {
    pub read: ReadOptions,
    pub rules: RuleOptions,
    /// `--metric`, resolved per profile (each input may number its types differently).
    pub metric: Option<String>,
    pub types_as_frames: bool,
}

impl LoadConfig {
    pub fn new(input: &InputArgs, rules: &RuleArgs) -> LoadConfig {
        LoadConfig {
            read: ReadOptions {
                format: input.format_in,
                unit: input.unit.clone(),
                symbols: SymbolOptions {
                    binary_path: input.binary_path.clone(),
                    symfs: input.symfs.clone(),
                    kallsyms: input.kallsyms.clone(),
                    jit_map_dir: input.jit_map_dir.clone(),
                    inline: input.inline,
                },
                max_decompressed: Some(input.max_decompressed),
            },
            rules: RuleOptions {
                rule_files: rules.rule_files.clone(),
                user_prefixes: rules.user.clone(),
                presets: rules.preset.clone(),
                no_presets: rules.no_presets,
                through: rules.through.clone(),
            },
            metric: input.metric.clone(),
            types_as_frames: input.types_as_frames,
        }
    }
}

/// `--views` as given, each view once.
pub fn views(v: &[View]) -> Vec<View> {
    let mut out: Vec<View> = Vec::new();
    for &view in v {
        if !out.contains(&view) {
            out.push(view);
        }
    }
    out
}

pub fn combine(repeats: bool, merge: bool) -> Combine {
    if repeats {
        Combine::Repeats
    } else if merge {
        Combine::Merge
    } else {
        Combine::Columns
    }
}
