//! From the command line to the plain option structs the stages take. Core code never sees
//! clap types; everything that can be checked before reading input is checked here.

use crate::aggregate::report::{Combine, GroupBy, View};
use crate::classify::RuleOptions;
use crate::cli::{
    ByArg, FormatIn, FormatOut, InputArgs, RuleArgs, UnitArg, VerdictFormatArg, ViewArg,
};
use crate::input::{InputFormat, ReadOptions};
use crate::model::Unit;
use crate::render::OutputFormat;
use crate::render::gate::VerdictFormat;
use crate::symbolize::SymbolOptions;

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
                format: input.format_in.map(input_format),
                unit: input.unit.map(unit),
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

fn input_format(f: FormatIn) -> InputFormat {
    match f {
        FormatIn::Folded => InputFormat::Folded,
        FormatIn::PyspyRaw => InputFormat::PySpy,
        FormatIn::PerfScript => InputFormat::PerfScript,
        FormatIn::Pprof => InputFormat::Pprof,
        FormatIn::PerfData => InputFormat::PerfData,
    }
}

fn unit(u: UnitArg) -> Unit {
    match u {
        UnitArg::Samples => Unit::Count,
        UnitArg::Bytes => Unit::Bytes,
        UnitArg::Nanoseconds => Unit::Nanoseconds,
    }
}

pub fn group_by(b: ByArg) -> GroupBy {
    match b {
        ByArg::Owner => GroupBy::Owner,
        ByArg::Category => GroupBy::Category,
        ByArg::Type => GroupBy::Type,
    }
}

pub fn views(v: &[ViewArg]) -> Vec<View> {
    let mut out: Vec<View> = Vec::new();
    for a in v {
        let view = match a {
            ViewArg::Self_ => View::Self_,
            ViewArg::Owner => View::Owner,
            ViewArg::Anywhere => View::Anywhere,
        };
        if !out.contains(&view) {
            out.push(view);
        }
    }
    out
}

pub fn output_format(f: FormatOut) -> OutputFormat {
    match f {
        FormatOut::Table => OutputFormat::Table,
        FormatOut::Markdown => OutputFormat::Markdown,
        FormatOut::Json => OutputFormat::Json,
        FormatOut::Csv => OutputFormat::Csv,
    }
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

pub fn verdict_format(f: VerdictFormatArg) -> VerdictFormat {
    match f {
        VerdictFormatArg::Text => VerdictFormat::Text,
        VerdictFormatArg::Markdown => VerdictFormat::Markdown,
        VerdictFormatArg::Json => VerdictFormat::Json,
    }
}

pub fn color_by(c: crate::cli::ColorByArg) -> crate::aggregate::flame::ColorBy {
    match c {
        crate::cli::ColorByArg::Self_ => crate::aggregate::flame::ColorBy::Frame,
        crate::cli::ColorByArg::Owner => crate::aggregate::flame::ColorBy::Sample,
    }
}
