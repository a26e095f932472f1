//! The requirement grammar of `whose gate --require`.
//!
//! ```text
//! REQUIREMENT = SUBJECT "." VIEW [ "[" METRIC "]" ] OP PERCENT
//! SUBJECT     = "category:" CATEGORY | "owner:" OWNER | NAME
//! VIEW        = "self" | "owner" | "anywhere"
//! OP          = ">=" | ">" | "<=" | "<"
//! PERCENT     = a number from 0 to 100 followed by "%" (a bare number is refused: 0.4 could
//!               mean 0.4 % or 40 %)
//! ```
//!
//! Owner names may contain dots and dashes (`io.ktor`, `kotlin-stdlib`), so the VIEW is the
//! last `.`-separated word of the left-hand side that is a view name, optionally followed by
//! `[METRIC]`; everything before that dot is the subject. `io.ktor.owner` is the owner
//! `io.ktor` in the owner view, `kotlin-stdlib.self[alloc_space]` the owner `kotlin-stdlib`,
//! self view, metric `alloc_space`. A bare NAME is an owner when the rules declare one by
//! that name, else a category (`allocator.self`); `owner:` and `category:` say which
//! explicitly. Whitespace around the operator is optional.

use crate::aggregate::report::View;
use crate::error::{Error, Result};
use crate::model::Category;
use std::fmt;

/// Who a requirement is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Subject {
    /// An owner if the rules declare it, else a category of that name.
    Name(String),
    /// `owner:NAME`: an owner only.
    Owner(String),
    /// `category:NAME`.
    Category(Category),
}

impl fmt::Display for Subject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Subject::Name(n) => f.write_str(n),
            Subject::Owner(n) => write!(f, "owner:{n}"),
            Subject::Category(c) => write!(f, "category:{c}"),
        }
    }
}

/// The comparison of a requirement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Ge,
    Gt,
    Le,
    Lt,
}

impl Op {
    pub fn as_str(self) -> &'static str {
        match self {
            Op::Ge => ">=",
            Op::Gt => ">",
            Op::Le => "<=",
            Op::Lt => "<",
        }
    }

    /// Whether a measured share satisfies `share OP threshold`.
    pub fn holds(self, share: f64, threshold: f64) -> bool {
        match self {
            Op::Ge => share >= threshold,
            Op::Gt => share > threshold,
            Op::Le => share <= threshold,
            Op::Lt => share < threshold,
        }
    }

    /// A lower bound (`>=`, `>`) must hold for the smallest repeat, an upper bound for the
    /// largest.
    pub fn is_lower_bound(self) -> bool {
        matches!(self, Op::Ge | Op::Gt)
    }
}

/// One parsed `--require` expression.
#[derive(Debug, Clone, PartialEq)]
pub struct Requirement {
    /// The expression as the user wrote it, for messages.
    pub text: String,
    pub subject: Subject,
    pub view: View,
    /// `[METRIC]`: a sample type name (or index); `None` = `--metric` or each input's default.
    pub metric: Option<String>,
    pub op: Op,
    /// In percent.
    pub threshold: f64,
}

impl Requirement {
    /// The requirement in canonical spelling, e.g. `user.owner[alloc_space] >= 25%`.
    pub fn canonical(&self) -> String {
        format!(
            "{}.{}{} {} {}%",
            self.subject,
            self.view.as_str(),
            self.metric
                .as_ref()
                .map_or(String::new(), |m| format!("[{m}]")),
            self.op.as_str(),
            self.threshold
        )
    }
}

const HELP: &str = "expected SUBJECT.VIEW[METRIC] OP PERCENT, e.g. `user.owner >= 25%`, \
                    `category:allocator.self <= 10%`, `io.ktor.anywhere < 50%`, \
                    `user.owner[alloc_space] >= 25%` (VIEW: self, owner, anywhere; OP: >=, >, <=, <)";

/// Parses one requirement; the error (a usage error) names the expression and says what was
/// expected.
pub fn parse(text: &str) -> Result<Requirement> {
    let err = |what: &str| Error::Usage(format!("--require `{text}`: {what}; {HELP}"));
    if let Some(slip) = operator_slip(text) {
        return Err(err(&slip));
    }
    let (at, op) = find_op(text).ok_or_else(|| err("no comparison operator"))?;
    let lhs = text[..at].trim();
    let rhs = text[at + op.as_str().len()..].trim();
    let threshold = parse_percent(rhs).map_err(|e| err(&e))?;
    let (subject, view, metric) = split_lhs(lhs).map_err(|e| err(&e))?;
    Ok(Requirement {
        text: text.trim().to_string(),
        subject: parse_subject(subject).map_err(|e| err(&e))?,
        view,
        metric,
        op,
        threshold,
    })
}

/// The first `<`/`>` (with a following `=` if present) outside the metric brackets.
fn find_op(text: &str) -> Option<(usize, Op)> {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'[' => depth += 1,
            b']' => depth = depth.saturating_sub(1),
            b'<' | b'>' if depth == 0 => {
                let eq = bytes.get(i + 1) == Some(&b'=');
                let op = match (b, eq) {
                    (b'>', true) => Op::Ge,
                    (b'>', false) => Op::Gt,
                    (b'<', true) => Op::Le,
                    _ => Op::Lt,
                };
                return Some((i, op));
            }
            _ => {}
        }
    }
    None
}

/// A threshold must say `%`: `0.4` could mean 0.4 % or a share of 0.4 (40 %), and a gate
/// that guessed would pass or fail on the other reading.
fn parse_percent(rhs: &str) -> Result<f64, String> {
    let (number, percent) = match rhs.strip_suffix('%') {
        Some(n) => (n.trim(), true),
        None => (rhs, false),
    };
    let value: f64 = number
        .parse()
        .map_err(|_| format!("`{rhs}` is not a percentage"))?;
    if !percent {
        let as_fraction = if (0.0..=1.0).contains(&value) {
            // rounded, so that 0.07 reads as 7, not 7.000000000000001
            let percent = (value * 100.0 * 1e9).round() / 1e9;
            format!(" or `{percent}%` for a share of {value}")
        } else {
            String::new()
        };
        return Err(format!(
            "`{rhs}` has no `%`: write `{value}%` for {value} percent{as_fraction}"
        ));
    }
    if !(0.0..=100.0).contains(&value) {
        return Err(format!("{value}% is outside 0–100%"));
    }
    Ok(value)
}

/// A guard's percentage (`--max-unresolved 5%`), by the same rule as a threshold's.
pub fn parse_guard(option: &str, text: &str) -> Result<f64> {
    parse_percent(text.trim()).map_err(|e| Error::Usage(format!("{option} {text}: {e}")))
}

/// `--confidence 95%` as a fraction (0.95); from 50 % (anything lower is no confidence) to
/// 99.99 %.
pub fn parse_confidence(text: &str) -> Result<f64> {
    let value = parse_guard("--confidence", text)?;
    if !(50.0..=99.99).contains(&value) {
        return Err(Error::Usage(format!(
            "--confidence {text}: expected a level from 50% to 99.99%, e.g. `95%`"
        )));
    }
    Ok(value / 100.0)
}

/// Operators people type for `>=` and `<=` that are not in the grammar, with the one meant.
const SLIPS: [(&str, &str); 8] = [
    ("=>", ">="),
    ("=<", "<="),
    ("≥", ">="),
    ("≤", "<="),
    ("==", ">= or <="),
    ("!=", ">= or <="),
    ("<>", ">= or <="),
    ("=", ">= or <="),
];

/// An operator slip outside the metric brackets, as an error text: "did you mean".
fn operator_slip(text: &str) -> Option<String> {
    let outside: String = {
        let mut depth = 0usize;
        text.chars()
            .map(|c| {
                match c {
                    '[' => depth += 1,
                    ']' => depth = depth.saturating_sub(1),
                    _ => {}
                }
                if depth > 0 { ' ' } else { c }
            })
            .collect()
    };
    for (slip, meant) in SLIPS {
        let Some(at) = outside.find(slip) else {
            continue;
        };
        // `>=` and `<=` contain `=`: a lone `=` is a slip only when not part of them
        let before = outside[..at].chars().next_back();
        if slip == "=" && matches!(before, Some('<' | '>')) {
            continue;
        }
        return Some(format!(
            "`{slip}` is no operator here: did you mean `{meant}`?"
        ));
    }
    None
}

/// Splits `SUBJECT.VIEW[METRIC]` at the last dot followed by a view word (and an optional
/// bracketed metric) up to the end, so dots in owner names and metric names are kept.
fn split_lhs(lhs: &str) -> Result<(&str, View, Option<String>), String> {
    for (dot, _) in lhs.rmatch_indices('.') {
        let tail = &lhs[dot + 1..];
        let (word, metric) = match tail.find('[') {
            Some(open) if tail.ends_with(']') => {
                (&tail[..open], Some(&tail[open + 1..tail.len() - 1]))
            }
            Some(_) => continue,
            None => (tail, None),
        };
        let Some(view) = View::parse(word) else {
            continue;
        };
        let metric = match metric.map(str::trim) {
            Some("") => return Err("empty [METRIC]".into()),
            Some(m) => Some(m.to_string()),
            None => None,
        };
        let subject = lhs[..dot].trim();
        if subject.is_empty() {
            return Err("no owner or category before the view".into());
        }
        return Ok((subject, view, metric));
    }
    Err(format!(
        "`{lhs}` does not end in .self, .owner or .anywhere (optionally with [METRIC])"
    ))
}

/// `owner:NAME`, `category:NAME` or a bare name (an owner if declared, else a category).
pub fn parse_subject(s: &str) -> Result<Subject, String> {
    if let Some(name) = s.strip_prefix("category:") {
        let name = name.trim();
        return Category::parse(name).map(Subject::Category).ok_or_else(|| {
            let all: Vec<&str> = Category::ALL.iter().map(|c| c.as_str()).collect();
            format!(
                "unknown category `{name}`; categories are: {}",
                all.join(", ")
            )
        });
    }
    if let Some(name) = s.strip_prefix("owner:") {
        return Ok(Subject::Owner(name.trim().to_string()));
    }
    Ok(Subject::Name(s.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(text: &str) -> Requirement {
        parse(text).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn the_issue_examples_parse() {
        let r = req("user.owner >= 25%");
        assert_eq!(r.subject, Subject::Name("user".into()));
        assert_eq!((r.view, r.op, r.threshold), (View::Owner, Op::Ge, 25.0));
        assert_eq!(r.metric, None);
        let r = req("category:allocator.self <= 10%");
        assert_eq!(r.subject, Subject::Category(Category::Allocator));
        assert_eq!((r.view, r.op, r.threshold), (View::Self_, Op::Le, 10.0));
        let r = req("ktor.anywhere < 50%");
        assert_eq!((r.view, r.op), (View::Anywhere, Op::Lt));
        let r = req("user.owner[alloc_space] >= 25%");
        assert_eq!(r.metric.as_deref(), Some("alloc_space"));
        assert_eq!(r.canonical(), "user.owner[alloc_space] >= 25%");
    }

    #[test]
    fn dots_and_dashes_in_owner_names_stay_in_the_subject() {
        let r = req("io.ktor.owner>2.5%");
        assert_eq!(r.subject, Subject::Name("io.ktor".into()));
        assert_eq!((r.view, r.op, r.threshold), (View::Owner, Op::Gt, 2.5));
        let r = req("kotlin-stdlib.self[cpu-clock] <= 10 %");
        assert_eq!(r.subject, Subject::Name("kotlin-stdlib".into()));
        assert_eq!(r.metric.as_deref(), Some("cpu-clock"));
        // an owner literally named like a view: the last view word is the view
        let r = req("foo.owner.self < 1%");
        assert_eq!(r.subject, Subject::Name("foo.owner".into()));
        assert_eq!(r.view, View::Self_);
        // a dot inside the metric does not split there
        let r = req("owner:a.b.anywhere[sched.switch] >= 0%");
        assert_eq!(r.subject, Subject::Owner("a.b".into()));
        assert_eq!(r.metric.as_deref(), Some("sched.switch"));
    }

    #[test]
    fn malformed_requirements_say_what_is_expected() {
        for (text, want) in [
            ("user.owner 25%", "no comparison operator"),
            ("user.owner >= lots", "not a percentage"),
            ("user.owner >= 125%", "outside 0–100%"),
            ("user >= 25%", "does not end in .self, .owner or .anywhere"),
            ("user.inclusive >= 25%", "does not end in"),
            (".owner >= 1%", "no owner or category"),
            ("user.owner[] >= 1%", "empty [METRIC]"),
            (
                "category:allocators.self <= 1%",
                "unknown category `allocators`",
            ),
        ] {
            let e = parse(text).unwrap_err().to_string();
            assert!(e.contains(want), "{text}: {e}");
            assert!(e.contains("SUBJECT.VIEW[METRIC] OP PERCENT"), "{e}");
        }
    }

    #[test]
    fn a_bare_number_shows_both_readings_and_slips_say_what_was_meant() {
        let e = parse("wf.owner >= 0.4").unwrap_err().to_string();
        assert!(
            e.contains(
                "`0.4` has no `%`: write `0.4%` for 0.4 percent or `40%` for a share of 0.4"
            ),
            "{e}"
        );
        let e = parse("user.owner >= 0.07").unwrap_err().to_string();
        assert!(e.contains("or `7%` for a share of 0.07"), "{e}");
        let e = parse("user.owner >= 25").unwrap_err().to_string();
        assert!(
            e.contains("`25` has no `%`: write `25%` for 25 percent;"),
            "{e}"
        );
        for (text, meant) in [
            (
                "user.owner => 25%",
                "`=>` is no operator here: did you mean `>=`?",
            ),
            ("user.owner =< 25%", "did you mean `<=`?"),
            ("user.owner ≥ 25%", "did you mean `>=`?"),
            ("user.owner == 25%", "did you mean `>= or <=`?"),
            ("user.owner = 25%", "`=` is no operator here"),
        ] {
            let e = parse(text).unwrap_err().to_string();
            assert!(e.contains(meant), "{text}: {e}");
        }
        // `=` inside a metric name is no slip, nor are the real operators
        assert!(parse("user.owner[a=b] >= 1%").is_ok());
        assert!(parse("user.owner <= 1%").is_ok() && parse("user.owner>=1%").is_ok());
    }

    #[test]
    fn bounds_hold_as_written() {
        assert!(Op::Ge.holds(25.0, 25.0) && !Op::Gt.holds(25.0, 25.0));
        assert!(Op::Le.holds(25.0, 25.0) && !Op::Lt.holds(25.0, 25.0));
        assert!(Op::Ge.is_lower_bound() && !Op::Lt.is_lower_bound());
    }
}
