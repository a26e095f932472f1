//! The program's own code as guessed from the profile, in words: how each guess was found
//! (the report header, JSON's `evidence`) and the rule origin `explain` and `rules list`
//! show for its `user` block.

use super::pct;
use crate::classify::own_code::{Evidence, OwnCode};
use crate::classify::rules::Origin;

/// How a guess was found, as the header's `detected from ...` says it.
pub fn evidence(evidence: &Evidence) -> String {
    let some = some_of;
    match evidence {
        Evidence::GoMainFile { file } => format!("the main package's file {file}"),
        Evidence::GoPackageFile { function, file } => format!("{function} in {file}"),
        Evidence::GoLocalPackage { function } => format!(
            "`{function}`, of a package path with no domain, which only the main module's has"
        ),
        Evidence::GoInternalPackage { function } => format!(
            "`{function}`, of an internal package the main package calls, which only its own \
             module may import"
        ),
        Evidence::GoBinaryC { function, module } => format!(
            "C functions in the program's binary {module} that no rule names (`{function}`), \
             compiled in by cgo; the binary's Go code is the go module's"
        ),
        Evidence::RustMain { function, module } => format!("`{function}`{}", in_module(module)),
        Evidence::RustOutermost {
            weight,
            total,
            module,
        } => format!(
            "outermost crate frames in {:.1}% of the weight{}",
            percent(*weight, *total),
            in_module(module)
        ),
        Evidence::PythonFiles {
            count,
            dir,
            names,
            not_packages,
        } => python_files(*count, dir, names, not_packages),
        Evidence::NodeScripts { count, dir, names } => format!(
            "{count} script file(s) outside node_modules/ and node's own code, under {dir}: {}",
            some(names)
        ),
        Evidence::Executable { module, by_main } => format!(
            "the recorded program's file {module} ({})",
            if *by_main {
                "the module of `main`"
            } else {
                "the outermost program file on the most weight"
            }
        ),
        Evidence::JvmEntryPoint { .. }
        | Evidence::JvmKotlinMain { .. }
        | Evidence::JvmThreadTask { .. }
        | Evidence::JvmMainClass { .. }
        | Evidence::JvmOutermost { .. } => jvm_evidence(evidence),
        Evidence::RubyFiles { count, dir, names } => format!(
            "{count} Ruby file(s) outside the interpreter's library and every gem, under {dir}: {}",
            some(names)
        ),
        Evidence::BeamCommand { module } => {
            format!("`{module}`, which the recorded command starts")
        }
        Evidence::BeamOutermost {
            function,
            weight,
            total,
        } => format!(
            "outermost BEAM modules not of OTP, Elixir or a known package, called from OTP, in \
             {:.1}% of the weight (`{function}`)",
            percent(*weight, *total)
        ),
        Evidence::None => "nothing in the profile".to_string(),
    }
}

/// How a JVM guess was found ([`evidence`]'s JVM signs).
fn jvm_evidence(evidence: &Evidence) -> String {
    match evidence {
        Evidence::JvmEntryPoint { method } => format!("`{method}`, the program's entry point"),
        Evidence::JvmKotlinMain { method } => {
            format!("`{method}`, of the Kotlin file that holds `main`")
        }
        Evidence::JvmThreadTask {
            method,
            weight,
            total,
        } => format!(
            "`{method}`, a task the JDK's threads run, outermost in {:.1}% of the weight",
            percent(*weight, *total)
        ),
        Evidence::JvmMainClass { class } => {
            format!("`{class}`, the main class the recording names")
        }
        Evidence::JvmOutermost {
            method,
            caller,
            weight,
            total,
        } => format!(
            "outermost JVM frames not of the JDK or a known vendor, called from known code, in \
             {:.1}% of the weight (`{method}`, called from `{caller}`)",
            percent(*weight, *total)
        ),
        _ => String::new(),
    }
}

/// `weight` as a percentage of `total`, for the evidence that is a share of the weight.
fn percent(weight: u128, total: u128) -> f64 {
    weight as f64 * 100.0 / total.max(1) as f64
}

/// ` (module M)` after a Rust guess's evidence, when its binary is known.
fn in_module(module: &Option<String>) -> String {
    (module.as_ref()).map_or_else(String::new, |m| format!(" (module {m})"))
}

/// The Python files a guess was made from: where they are, some of their names, and the
/// names left out as seen installed elsewhere (the longest of the evidence, so its own step).
fn python_files(count: usize, dir: &str, names: &[String], not_packages: &[String]) -> String {
    let place = if dir.is_empty() {
        "named relative to sys.path".to_string()
    } else {
        format!("under {dir}")
    };
    let mut text = format!(
        "{count} Python file(s) outside the standard library and site-packages, {place}: {}",
        some_of(names)
    );
    if !not_packages.is_empty() {
        text.push_str(&format!(
            "; not {} (seen installed under site-packages elsewhere in the profile)",
            some_of(not_packages)
        ));
    }
    text
}

/// Where a block was declared, as `explain` and `rules list` show it: `FILE:LINE`, and for
/// a guessed block the unit and how it was found (`go module whose/gosvc (detected from the
/// main package's file ...; --user PREFIX adds more)`).
pub fn origin(origin: &Origin) -> String {
    match &origin.guess {
        Some(code) => format!(
            "{} {} (detected from {}, {} evidence; --user PREFIX adds more)",
            code.unit,
            unit_name(code),
            evidence(&code.evidence),
            code.evidence.strength().as_str()
        ),
        None => origin.to_string(),
    }
}

/// A guessed unit's name: its own, or for Python files named relative to sys.path (no
/// directory to be named by) some of the files.
pub fn unit_name(code: &OwnCode) -> String {
    match &code.evidence {
        Evidence::PythonFiles { names, .. } if code.name.is_empty() => some_of(names),
        _ => code.name.clone(),
    }
}

/// `a, b, c and 4 more`: the first few names of a list.
pub fn some_of(names: &[String]) -> String {
    const SHOWN: usize = 3;
    let head = names[..names.len().min(SHOWN)].join(", ");
    if names.len() > SHOWN {
        format!("{head} and {} more", names.len() - SHOWN)
    } else {
        head
    }
}

/// The header's line for a guess of the program's own code: what was guessed, what it
/// claims, and how to override it (the report and `explain` say it alike).
pub fn own_code_line(code: &crate::classify::own_code::OwnCode) -> String {
    let claims: Vec<String> = code
        .prefixes
        .iter()
        .map(|p| format!("`{p}`"))
        .chain(code.files.iter().map(|f| format!("file `{f}`")))
        .chain(code.modules.iter().map(|m| format!("module `{m}`")))
        .chain(
            code.c_in_module
                .iter()
                .map(|m| format!("C functions of module `{m}`")),
        )
        .collect();
    format!(
        "user code guessed: {} {} ({}), detected from {} ({} evidence); --user PREFIX adds \
         more, a --rules file that claims them overrides",
        code.unit,
        unit_name(code),
        claims.join(", "),
        evidence(&code.evidence),
        code.evidence.strength().as_str()
    )
}

/// Guessed owners' names listed per kind of unit in the header at most; the table and JSON
/// have them all.
const GUESSED_LISTED: usize = 6;

/// The header's line on the owners guessed from their unit (issue 29), or that `--no-guess`
/// turned guesses off; nothing when there was nothing to guess. Each kind's names are listed
/// by `weight`, heaviest first, then by name.
pub fn guess_line(
    guessed: &[crate::classify::auto_owner::Unit],
    off: bool,
    weight: &dyn Fn(&str) -> u128,
) -> Option<String> {
    if off {
        return Some("guesses: off (--no-guess)".to_string());
    }
    if guessed.is_empty() {
        return None;
    }
    let mut kinds: Vec<_> = guessed.iter().map(|u| u.kind).collect();
    kinds.sort();
    kinds.dedup();
    let groups: Vec<String> = kinds
        .iter()
        .map(|&kind| {
            let mut names: Vec<&str> = guessed
                .iter()
                .filter(|u| u.kind == kind)
                .map(|u| u.name.as_str())
                .collect();
            names.sort_by(|a, b| weight(b).cmp(&weight(a)).then(a.cmp(b)));
            let count = names.len();
            let mut text = names[..count.min(GUESSED_LISTED)].join(", ");
            if count > GUESSED_LISTED {
                text.push_str(&format!(" and {} more", count - GUESSED_LISTED));
            }
            let what = if count == 1 {
                kind.as_str()
            } else {
                kind.plural()
            };
            format!("{text} ({what})")
        })
        .collect();
    Some(format!(
        "owners guessed from their unit: {}; --no-guess turns guesses off, a \
         --rules file that names them overrides",
        groups.join("; ")
    ))
}

/// The header's line for a guess of the program's own code that was not made (issue 29).
pub fn declined_line(declined: &crate::classify::own_code::Declined) -> String {
    use crate::classify::own_code::DeclineReason;
    match &declined.reason {
        DeclineReason::NoCallChains {
            heaviest,
            weight,
            total,
        } => format!(
            "user code not guessed: no {unit} from stacks without call chains, where the \
             outermost frame is only the sampled one (`{heaviest}::` would have been taken, \
             {share} of the weight, and it may well be a dependency); --user CRATE:: names \
             the program's own, or record with `perf record -g`",
            unit = declined.unit,
            share = pct(*weight as f64 * 100.0 / (*total).max(1) as f64),
        ),
        DeclineReason::WeakEvidence {
            heaviest,
            method,
            weight,
            total,
        } => format!(
            "user code not guessed: the outermost {unit} not of {runtime} or a known vendor, \
             `{heaviest}` ({share} of the weight, `{method}`), is called by nothing known \
             (stacks cut short, or a framework the presets do not know): too weak a sign to \
             call it the program's, so its weight stays unclassified; --user {heaviest}. \
             claims it",
            unit = declined.unit,
            runtime = match declined.unit {
                crate::classify::unit::UnitKind::BeamApplication => "OTP, Elixir",
                _ => "the JDK",
            },
            share = pct(*weight as f64 * 100.0 / (*total).max(1) as f64),
        ),
        DeclineReason::NoLanguageFrames {
            runtime,
            weight,
            total,
        } => format!(
            "user code not guessed: no {unit} in the recording, only {runtime}'s native code \
             (in {share} of the weight), so no share of the program's own can be read; {how}",
            unit = declined.unit,
            share = pct(*weight as f64 * 100.0 / (*total).max(1) as f64),
            how = language_frames_fix(declined.unit),
        ),
    }
}

/// How to record a language whose frames perf alone does not see.
pub fn language_frames_fix(unit: crate::classify::unit::UnitKind) -> &'static str {
    match unit {
        crate::classify::unit::UnitKind::BeamApplication => {
            "start the BEAM with `+JPperf true` (ERL_FLAGS, `elixir --erl`) so its JIT writes \
             /tmp/perf-PID.map, and keep that map beside the recording (--jit-map-dir)"
        }
        _ => {
            "perf sees Ruby only as the interpreter's C code: record with rbspy (`rbspy record \
             --format collapsed -- ruby ...`), or with Ruby 3.3+ `--yjit --yjit-perf` for \
             YJIT's perf map"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evidence_reads_as_the_header_says_it() {
        // 7 of 9 is 77.8 %
        let outermost = Evidence::RustOutermost {
            weight: 7,
            total: 9,
            module: Some("/opt/app/bin/crunch".into()),
        };
        assert_eq!(
            evidence(&outermost),
            "outermost crate frames in 77.8% of the weight (module /opt/app/bin/crunch)"
        );
        let scripts = Evidence::PythonFiles {
            count: 5,
            dir: String::new(),
            names: ["a.py", "b.py", "c.py", "d.py", "e.py"]
                .map(String::from)
                .to_vec(),
            not_packages: vec!["simplejson".into()],
        };
        assert_eq!(
            evidence(&scripts),
            "5 Python file(s) outside the standard library and site-packages, named relative \
             to sys.path: a.py, b.py, c.py and 2 more; not simplejson (seen installed under \
             site-packages elsewhere in the profile)"
        );
        let code = OwnCode {
            unit: crate::classify::unit::UnitKind::Executable,
            name: "churn".into(),
            evidence: Evidence::Executable {
                module: "/opt/churn".into(),
                by_main: true,
            },
            ..OwnCode::default()
        };
        let guessed = Origin {
            file: "executable churn".into(),
            line: 0,
            guess: Some(Box::new(code)),
        };
        assert_eq!(
            origin(&guessed),
            "executable churn (detected from the recorded program's file /opt/churn (the \
             module of `main`), strong evidence; --user PREFIX adds more)"
        );
    }
}
