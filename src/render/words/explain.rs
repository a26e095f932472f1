//! `whose explain`'s text: per listed function its inclusive and self shares, owner and the
//! rule that gave it that owner (shortened, so a line fits a terminal), where each of those
//! rules is declared, the heaviest functions no rule matched, and what would claim them.

use super::super::fit::{shorten_middle, wrap};
use super::pct;
use crate::aggregate::Aggregate;
use crate::aggregate::functions::NextStep;
use crate::aggregate::report::share;
use crate::classify::{Matched, Reason, RuleSet, presets};
use crate::model::{Frame, OwnerId};
use std::io::{self, Write};

/// One listed function (or source line, with `--lines`) and how the rules classified it.
pub struct Row<'a> {
    /// Inclusive weight: samples with the function anywhere on the stack, once each.
    pub cum: u128,
    /// Self weight: samples whose leaf it is.
    pub flat: u128,
    /// The function's first frame: its name, module and (with `--lines`) line.
    pub frame: &'a Frame,
    pub owner: OwnerId,
    pub reason: Reason,
}

/// Everything `explain` shows.
pub struct Explained<'a> {
    /// The heaviest functions (matching `--frame`), at most `--top`.
    pub rows: Vec<Row<'a>>,
    /// How many rows are listed, and how many functions there were to list.
    pub listed: usize,
    pub functions: usize,
    /// The heaviest functions no rule matched, and how many there are in all.
    pub unclassified: Vec<Row<'a>>,
    pub unclassified_count: usize,
    pub next_step: Option<NextStep>,
    /// Rows are source lines (`--lines`), not functions.
    pub lines: bool,
}

/// The longest a rule's matcher is shown in a row: a preset's regex can be 550 characters.
const MATCHER_WIDTH: usize = 28;

/// `s` cut to `max` characters, the cut marked with `…`.
fn shorten(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut cut: String = s.chars().take(max.saturating_sub(1)).collect();
        cut.push('…');
        cut
    }
}

/// The row's function in at most `max` columns: its name, then its module's file name and,
/// with `--lines`, `file:line`. A long name is shortened in the middle, keeping what follows
/// it whole when there is room (both ends of a name and its module say which function).
fn function(frame: &Frame, lines: bool, max: usize) -> String {
    let mut suffix = String::new();
    if let Some(module) = frame.module_basename() {
        suffix.push_str(&format!(" ({module})"));
    }
    if lines {
        let file = frame
            .file
            .as_deref()
            .map(|f| f.rsplit('/').next().unwrap_or(f));
        match (file, frame.line) {
            (Some(file), Some(line)) => suffix.push_str(&format!(" {file}:{line}")),
            (Some(file), None) => suffix.push_str(&format!(" {file}")),
            (None, Some(line)) => suffix.push_str(&format!(" line {line}")),
            (None, None) => {}
        }
    }
    let name = &frame.name;
    let suffix_width = suffix.chars().count();
    if name.chars().count() + suffix_width <= max {
        format!("{name}{suffix}")
    } else if max >= suffix_width + MIN_NAME_WIDTH {
        format!("{}{suffix}", shorten_middle(name, max - suffix_width))
    } else {
        shorten_middle(&format!("{name}{suffix}"), max)
    }
}

/// A block's matcher as the rules write it: `prefix "java."`, `kind "jit"`.
fn matched(matcher: &Matched) -> String {
    match matcher {
        Matched::Prefix(p) => format!("prefix {p:?}"),
        Matched::Regex(r) => format!("regex {r:?}"),
        Matched::Module(g) => format!("module {g:?}"),
        Matched::File(g) => format!("file {g:?}"),
        Matched::Crate(c) => format!("crate {c:?}"),
        Matched::Kind(k) => format!("kind {:?}", k.as_str()),
        Matched::AllEntry => "all [...]".to_string(),
        Matched::Nothing => String::new(),
    }
}

/// The rule cell: the matcher that matched, shortened, or why none did.
fn rule(reason: &Reason) -> String {
    shorten(&rule_text(reason), MATCHER_WIDTH)
}

/// The matcher that decided a frame, or why none did (`explain`'s rule cell, in full; the
/// HTML page's hover).
pub fn rule_text(reason: &Reason) -> String {
    match reason {
        Reason::Rule { matcher, .. } => matched(matcher),
        Reason::Guessed(unit) => format!("guessed {}", unit.kind.short()),
        Reason::NoRuleMatched => "no rule matched".to_string(),
        Reason::Unresolved => "unresolved address".to_string(),
    }
}

/// Writes the presets in use, the rows, where their rules are declared, the unclassified
/// functions and the next step, then the recording's quality as the report's header has it.
/// Shares are of the aggregate's total.
/// Prose lines (not the tables' rows) are wrapped to `width` columns, as the report's are.
pub fn write(
    rules: &RuleSet,
    aggregate: &Aggregate,
    explained: &Explained,
    width: usize,
    out: &mut dyn Write,
) -> io::Result<()> {
    write_rule_set(rules, width, out)?;
    write_rows(rules, aggregate.all.total, explained, width, out)?;
    write_after_rows(rules, aggregate, explained, width, out)
}

/// `text` wrapped to `width` columns, a line at a time.
fn prose(out: &mut dyn Write, text: &str, width: usize) -> io::Result<()> {
    for line in wrap(text, width) {
        writeln!(out, "{line}")?;
    }
    Ok(())
}

/// The lines over the table: the presets in use and the guesses made or declined, as the
/// report's header says them, so the rules a row names can be traced to where they came from.
fn write_rule_set(rules: &RuleSet, width: usize, out: &mut dyn Write) -> io::Result<()> {
    let presets = format!("presets: {}", presets::display_list(&rules.presets));
    prose(out, &presets, width)?;
    for code in &rules.own_code {
        prose(out, &super::guess::own_code_line(code), width)?;
    }
    for declined in &rules.own_code_declined {
        prose(out, &super::guess::declined_line(declined), width)?;
    }
    if let Some(line) = super::guess::guess_line(&rules.guessed, !rules.guesses(), &|_| 0) {
        prose(out, &line, width)?;
    }
    Ok(())
}

/// The widths of the table's owner, rule and function columns within a line's width.
struct Widths {
    owner: usize,
    rule: usize,
    function: usize,
}

impl Widths {
    /// The function column comes first: the matchers give up room down to
    /// [`MIN_RULE_WIDTH`] before function names are shortened (in the middle, as the
    /// report's are).
    fn of(rules: &RuleSet, explained: &Explained, width: usize) -> Widths {
        let owner = explained
            .rows
            .iter()
            .map(|r| owner_name(rules, r.owner).chars().count())
            .chain([5])
            .max()
            .unwrap_or(5);
        let budget = width.saturating_sub(6 + 2 + 6 + 2 + owner + 2 + 2);
        let longest_function = explained
            .rows
            .iter()
            .map(|r| {
                function(r.frame, explained.lines, usize::MAX)
                    .chars()
                    .count()
            })
            .max()
            .unwrap_or(0);
        let full_rule_width = explained
            .rows
            .iter()
            .map(|r| rule(&r.reason).chars().count())
            .chain([4])
            .max()
            .unwrap_or(4);
        let rule_width =
            full_rule_width.min(budget.saturating_sub(longest_function).max(MIN_RULE_WIDTH));
        let function_width = budget
            .saturating_sub(rule_width + 2)
            .max(MIN_FUNCTION_WIDTH);
        Widths {
            owner,
            rule: rule_width,
            function: function_width,
        }
    }
}

/// The table (shares of `total`), then how many of the functions it lists and how to list
/// others.
fn write_rows(
    rules: &RuleSet,
    total: u128,
    explained: &Explained,
    width: usize,
    out: &mut dyn Write,
) -> io::Result<()> {
    let Widths {
        owner: owner_width,
        rule: rule_width,
        function: function_width,
    } = Widths::of(rules, explained, width);
    let what = if explained.lines { "line" } else { "function" };
    writeln!(
        out,
        "{:>6}  {:>6}  {:<owner_width$}  {:<rule_width$}  {what}",
        "incl.", "self", "owner", "rule"
    )?;
    for row in &explained.rows {
        writeln!(
            out,
            "{:>6}  {:>6}  {:<owner_width$}  {:<rule_width$}  {}",
            pct(share(row.cum, total)),
            pct(share(row.flat, total)),
            owner_name(rules, row.owner),
            shorten(&rule(&row.reason), rule_width),
            function(row.frame, explained.lines, function_width)
        )?;
    }
    let split = if explained.lines {
        "source lines apart (without --lines: one row per function)"
    } else {
        "--lines to split them by source line"
    };
    let listed = format!(
        "{} of {} {what}s by inclusive weight (--top N lists N; {split})",
        explained.listed, explained.functions
    );
    prose(out, &listed, width)
}

/// What follows the table: where its rules are declared, the unclassified functions, the next
/// step, and the recording's quality with its findings.
fn write_after_rows(
    rules: &RuleSet,
    aggregate: &Aggregate,
    explained: &Explained,
    width: usize,
    out: &mut dyn Write,
) -> io::Result<()> {
    let total = aggregate.all.total;
    let mut text = Vec::new();
    write_origins(rules, explained, &mut text)?;
    write_unclassified(explained, total, width, &mut text)?;
    if let Some(step) = &explained.next_step {
        write_next_step(step, total, &mut text)?;
    }
    writeln!(
        text,
        "{}",
        super::findings::quality_line(&aggregate.quality, total)
    )?;
    // the hint is the next step above
    for finding in aggregate.quality.findings(total) {
        writeln!(text, "{}", super::findings::line(&finding))?;
    }
    for line in String::from_utf8_lossy(&text).lines() {
        if line.starts_with(SNIPPET_INDENT) {
            // the rule snippet is copied into a file as it is: never wrapped
            writeln!(out, "{line}")?;
        } else {
            prose(out, line, width)?;
        }
    }
    Ok(())
}

/// An owner's name in a row: a guessed owner's marked `~`, as in the report's table.
fn owner_name(rules: &RuleSet, owner: OwnerId) -> String {
    let owner = rules.owner(owner);
    if owner.guessed {
        format!("{}~", owner.name)
    } else {
        owner.name.clone()
    }
}

/// Where each rule the rows cite is declared, once per rule block, in the rows' order; and
/// what each guessed owner the rows cite was guessed from.
fn write_origins(rules: &RuleSet, explained: &Explained, out: &mut dyn Write) -> io::Result<()> {
    let mut blocks: Vec<usize> = Vec::new();
    let mut guessed: Vec<(String, &crate::classify::auto_owner::Unit)> = Vec::new();
    for row in &explained.rows {
        match &row.reason {
            Reason::Rule { block, .. } if !blocks.contains(block) => blocks.push(*block),
            Reason::Guessed(unit) if !guessed.iter().any(|(_, u)| *u == unit) => {
                guessed.push((owner_name(rules, row.owner), unit));
            }
            _ => {}
        }
    }
    if !guessed.is_empty() {
        writeln!(
            out,
            "guessed owners (~; --no-guess turns guesses off, a --rules file that names \
             them overrides):"
        )?;
        let width = guessed
            .iter()
            .map(|(name, _)| name.chars().count())
            .max()
            .unwrap_or(0);
        for (name, unit) in guessed {
            writeln!(out, "  {name:<width$}  guessed: {unit} (no rule names it)")?;
        }
    }
    if blocks.is_empty() {
        return Ok(());
    }
    writeln!(
        out,
        "where the rules are (`whose rules show PRESET` prints a preset; `:N` is its line):"
    )?;
    let width = blocks
        .iter()
        .map(|&b| rules.block(b).name.chars().count())
        .max()
        .unwrap_or(0);
    for b in blocks {
        let block = rules.block(b);
        writeln!(
            out,
            "  {:<width$}  {}",
            block.name,
            super::guess::origin(&block.origin)
        )?;
    }
    Ok(())
}

/// The heaviest functions no rule matched, by inclusive weight.
fn write_unclassified(
    explained: &Explained,
    total: u128,
    width: usize,
    out: &mut dyn Write,
) -> io::Result<()> {
    if explained.unclassified.is_empty() {
        return writeln!(
            out,
            "unclassified functions by inclusive weight: none, a rule matched every one"
        );
    }
    writeln!(
        out,
        "unclassified functions by inclusive weight ({} of {}):",
        explained.unclassified.len(),
        explained.unclassified_count
    )?;
    writeln!(out, "{:>6}  {:>6}  function", "incl.", "self")?;
    for row in &explained.unclassified {
        writeln!(
            out,
            "{:>6}  {:>6}  {}",
            pct(share(row.cum, total)),
            pct(share(row.flat, total)),
            function(
                row.frame,
                explained.lines,
                width.saturating_sub(6 + 2 + 6 + 2).max(MIN_FUNCTION_WIDTH)
            )
        )?;
    }
    Ok(())
}

/// The function column is never shortened below this, however narrow the terminal.
const MIN_FUNCTION_WIDTH: usize = 24;
/// A function's name keeps at least this much beside its module before both are shortened.
const MIN_NAME_WIDTH: usize = 12;
/// The matcher column gives up room to function names down to this.
const MIN_RULE_WIDTH: usize = 16;

/// The indent of the rule snippet's lines, which the wrapping leaves whole.
const SNIPPET_INDENT: &str = "    ";

/// What would claim the heaviest unclassified functions: a `--user` prefix, or a rule block
/// to put in a file and pass with `--rules`.
fn write_next_step(step: &NextStep, total: u128, out: &mut dyn Write) -> io::Result<()> {
    match step {
        NextStep::UserPrefix(hint) => writeln!(
            out,
            "next step: `--user {}` would claim the heaviest unclassified functions as user \
             code, {}",
            hint.prefix,
            super::findings::user_moves(share(hint.owner, total), share(hint.anywhere, total))
        ),
        NextStep::Rule { names, weight } => {
            writeln!(
                out,
                "next step: no package prefix covers the heaviest unclassified functions ({} \
                 of the weight passes through one of them); a rule file that claims them, \
                 passed with `--rules FILE` (rename the owner, pick its category):",
                pct(share(*weight, total))
            )?;
            let quoted: Vec<String> = names.iter().map(|n| format!("{n:?}")).collect();
            let i = SNIPPET_INDENT;
            writeln!(out, "{i}[[owner]]")?;
            writeln!(out, "{i}name = \"app\"")?;
            writeln!(out, "{i}category = \"user\"")?;
            writeln!(out, "{i}prefix = [{}]", quoted.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::shorten;

    #[test]
    fn long_matchers_are_cut_with_an_ellipsis() {
        assert_eq!(shorten("prefix \"main.\"", 28), "prefix \"main.\"");
        assert_eq!(shorten("regex \"^(a|b|c)\"", 10), "regex \"^(…");
        assert_eq!(shorten("regex \"^(a|b|c)\"", 10).chars().count(), 10);
    }
}
