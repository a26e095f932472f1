//! `docs/design.md` is the contract (issue 59): it must name every long option of every
//! command's `--help`, one line each, and name no option a command does not have; its input
//! formats, report formats and exit codes must be the ones the binary has. The option lists
//! are read from the built binary's `--help`, so a new option without its line here fails.

use super::common::*;
use std::collections::{BTreeMap, BTreeSet};

/// The commands, as typed after `whose`, with whether they read profiles (and so take the
/// options of the "every command that reads profiles" section).
const COMMANDS: &[(&str, bool)] = &[
    ("report", true),
    ("explain", true),
    ("top", true),
    ("flame", true),
    ("convert", true),
    ("gate", true),
    ("diff", true),
    ("rules check", false),
    ("rules list", false),
    ("rules show", false),
    ("completions", false),
    ("man", false),
];

/// Options every command has, said once in the design's "Commands" section.
const GLOBAL: &[&str] = &["--color", "--help"];

fn design() -> String {
    std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/design.md"))
        .expect("docs/design.md")
}

fn help(command: &str) -> String {
    let mut args: Vec<&str> = command.split(' ').collect();
    args.push("--help");
    whose_ok(&args)
}

/// The long options an option list line starts with: `  -o, --output <FILE>`,
/// `      --views <VIEWS>`.
fn long_options(help: &str) -> BTreeSet<String> {
    let mut options = BTreeSet::new();
    let mut in_options = false;
    for line in help.lines() {
        if line.starts_with("Options:") {
            in_options = true;
            continue;
        }
        if in_options && !line.is_empty() && !line.starts_with(' ') {
            in_options = false;
        }
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        if !in_options || indent > 6 {
            continue;
        }
        let flag = trimmed.strip_prefix("-").map_or(trimmed, |_| {
            trimmed
                .split_once(", ")
                .filter(|(short, _)| short.len() == 2)
                .map_or(trimmed, |(_, rest)| rest)
        });
        if let Some(name) = flag.strip_prefix("--") {
            let name: String = name
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect();
            options.insert(format!("--{name}"));
        }
    }
    options
}

/// The design's sections (`### ` headings) with the options their bullets start with
/// (``- `--name ...` ``).
fn design_sections(design: &str) -> BTreeMap<String, BTreeSet<String>> {
    let mut sections: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut current = String::new();
    for line in design.lines() {
        if let Some(title) = line.strip_prefix("### ") {
            current = title.to_string();
            sections.entry(current.clone()).or_default();
        } else if let Some(rest) = line.strip_prefix("- `--") {
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect();
            sections
                .entry(current.clone())
                .or_default()
                .insert(format!("--{name}"));
        }
    }
    sections
}

/// The section of `command`: the first whose heading starts with `` `whose COMMAND``.
fn section_of<'a>(
    sections: &'a BTreeMap<String, BTreeSet<String>>,
    command: &str,
) -> &'a BTreeSet<String> {
    let key = format!("`whose {command}");
    sections
        .iter()
        .find(|(title, _)| title.starts_with(&key) || title.contains(&format!(", {key}")))
        .map(|(_, options)| options)
        .unwrap_or_else(|| panic!("docs/design.md has no section for `whose {command}`"))
}

fn reading_options(sections: &BTreeMap<String, BTreeSet<String>>) -> &BTreeSet<String> {
    sections
        .get("Options of every command that reads profiles")
        .expect("the design's section of common options")
}

#[test]
fn the_design_names_every_long_option_of_every_command() {
    let design = design();
    let sections = design_sections(&design);
    let common = reading_options(&sections);
    let mut missing = Vec::new();
    for &(command, reads) in COMMANDS {
        let own = section_of(&sections, command);
        for option in long_options(&help(command)) {
            let named = GLOBAL.contains(&option.as_str())
                || own.contains(&option)
                || (reads && common.contains(&option));
            if !named {
                missing.push(format!("whose {command} {option}"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "docs/design.md does not name these options (one `- `--option ...`` line each, in the \
         command's section or the common one):\n{}",
        missing.join("\n")
    );
    assert!(design.contains("`--color WHEN`"), "the global --color");
}

#[test]
fn the_design_names_no_option_a_command_does_not_have() {
    let sections = design_sections(&design());
    let mut stale = Vec::new();
    let mut check = |command: &str, named: &BTreeSet<String>| {
        let real = long_options(&help(command));
        for option in named {
            if !real.contains(option) {
                stale.push(format!("whose {command} {option}"));
            }
        }
    };
    for &(command, reads) in COMMANDS {
        check(command, section_of(&sections, command));
        if reads {
            check(command, reading_options(&sections));
        }
    }
    assert!(
        stale.is_empty(),
        "docs/design.md names options the binary does not have:\n{}",
        stale.join("\n")
    );
}

/// `[possible values: a, b, c]` after `option` in a help text (wrapped lines joined).
fn possible_values(help: &str, option: &str) -> BTreeSet<String> {
    let flat = help.split_whitespace().collect::<Vec<_>>().join(" ");
    let at = flat
        .find(&format!("--{option} <"))
        .unwrap_or_else(|| panic!("--{option} in the help"));
    let rest = &flat[at..];
    let list = rest
        .split_once("[possible values: ")
        .map(|(_, list)| list.split_once(']').expect("closing bracket").0)
        .expect("possible values");
    list.split(", ").map(str::to_string).collect()
}

#[test]
fn the_design_lists_the_input_formats_the_binary_reads() {
    let design = design();
    let table = design
        .split("## Input formats")
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .expect("the design's input-format table");
    let listed: BTreeSet<String> = table
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split_once('`'))
        .map(|(name, _)| name.to_string())
        .filter(|name| !name.starts_with('-'))
        .collect();
    assert_eq!(listed, possible_values(&help("report"), "format-in"));
}

#[test]
fn the_design_lists_the_report_formats_and_the_exit_codes() {
    let design = design();
    let help = help("report");
    // report's formats are listed one per line under "Possible values:" in the long help
    let formats: BTreeSet<String> = help
        .split("--format <FORMAT>")
        .nth(1)
        .expect("--format")
        .lines()
        .take_while(|l| !l.contains("[default"))
        .filter_map(|l| l.trim().strip_prefix("- "))
        .map(|l| l.split(':').next().unwrap().trim().to_string())
        .collect();
    let line = design
        .lines()
        .find(|l| l.starts_with("- `--format table|"))
        .expect("report's --format line");
    let named: BTreeSet<String> = line
        .trim_start_matches("- `--format ")
        .split('`')
        .next()
        .unwrap()
        .split('|')
        .map(str::to_string)
        .collect();
    assert_eq!(named, formats);

    let top = whose_ok(&["--help"]);
    for code in ["0", "1", "2", "3"] {
        assert!(
            design.contains(&format!("- `{code}`: ")),
            "exit code {code} in the design"
        );
        assert!(
            top.contains(&format!("{code} ")),
            "exit code {code} in --help"
        );
    }
}
