//! The terminal (issue 15): tables fit the width (80, `COLUMNS`, or the terminal's), names
//! shortened in the middle, warnings wrapped; side-by-side columns named by file; `--color`
//! with `NO_COLOR`/`CLICOLOR_FORCE` as cargo reads them; one palette for the table and the
//! flame graph; an SVG is never written to a terminal.

use super::common::*;
use std::process::{Command, Output};
use unicode_width::UnicodeWidthStr;

/// The repository's root: these tests run `whose` there and name fixtures relative to it, so
/// that the widths they check never include the clone's absolute path (issue 28: the report
/// prints an input's path on a line of its own, and a clone under a long path made it wider
/// than the table).
const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// A fixture's path relative to [`ROOT`], for a `whose` run there.
fn rel(fixture: &str) -> String {
    format!("fixtures/{fixture}")
}

/// `s` quoted for `sh -c`: a clone's path may hold spaces.
fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// `whose ARGS` in [`ROOT`] with `env` set on top of the tests' plain environment.
fn run(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = command();
    c.current_dir(ROOT)
        .env_remove("NO_COLOR")
        .env_remove("COLUMNS");
    for (k, v) in env {
        c.env(k, v);
    }
    c.args(args).output().expect("run whose")
}

fn stdout(out: &Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn py_app() -> Vec<String> {
    vec![
        "report".into(),
        rel("folded/py-app.folded"),
        "--rules".into(),
        rel("rules/py-app.toml"),
        "--no-presets".into(),
    ]
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

#[test]
fn color_follows_the_flag_then_no_color_then_clicolor_force() {
    let args = py_app();
    let args = strs(&args);
    let colored = |env: &[(&str, &str)], extra: &[&str]| {
        let mut a = args.clone();
        a.extend(extra);
        stdout(&run(&a, env)).contains("\x1b[")
    };
    // a pipe: no colour by default, colour when forced, as `| less -R` needs
    assert!(!colored(&[], &[]));
    assert!(colored(&[("CLICOLOR_FORCE", "1")], &[]));
    // NO_COLOR wins over CLICOLOR_FORCE under `auto`, as in cargo
    assert!(!colored(&[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")], &[]));
    // the flag wins over the environment, before or after the subcommand
    assert!(colored(&[("NO_COLOR", "1")], &["--color", "always"]));
    assert!(!colored(&[("CLICOLOR_FORCE", "1")], &["--color", "never"]));
    let mut before = vec!["--color", "always"];
    before.extend(&args);
    assert!(stdout(&run(&before, &[])).contains("\x1b["));
    // -o FILE: colour only when asked for with --color always
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("t.txt");
    let mut a = args.clone();
    a.extend(["-o", file.to_str().unwrap()]);
    stdout(&run(&a, &[("CLICOLOR_FORCE", "1")]));
    assert!(!std::fs::read_to_string(&file).unwrap().contains("\x1b["));
    a.extend(["--color", "always"]);
    stdout(&run(&a, &[]));
    assert!(std::fs::read_to_string(&file).unwrap().contains("\x1b["));
}

/// `(r, g, b)` of the 24-bit foreground that starts the table row of `owner`.
fn row_rgb(table: &str, owner: &str) -> (u8, u8, u8) {
    let row = table
        .lines()
        .find(|l| l.starts_with("  \x1b[38;2;") && l.contains(&format!("m{owner}\x1b[")))
        .unwrap_or_else(|| panic!("no coloured row for {owner}:\n{table}"));
    let code = &row["  \x1b[38;2;".len()..row.find('m').unwrap()];
    let v: Vec<u8> = code.split(';').map(|x| x.parse().unwrap()).collect();
    (v[0], v[1], v[2])
}

#[test]
fn table_rows_take_the_flame_graphs_owner_colours() {
    let profile = [
        rel("folded/flame-mini.folded"),
        "--rules".into(),
        rel("rules/flame-mini.toml"),
        "--no-presets".into(),
    ];
    let mut args = vec!["report", "--color", "always"];
    args.extend(strs(&profile));
    let table = stdout(&run(&args, &[("COLORTERM", "truecolor")]));
    let dir = tempfile::tempdir().unwrap();
    let svg_path = dir.path().join("g.svg");
    let mut args = vec!["flame", "-o", svg_path.to_str().unwrap()];
    args.extend(strs(&profile));
    stdout(&run(&args, &[]));
    let svg = std::fs::read_to_string(&svg_path).unwrap();
    let mut checked = 0;
    for part in svg.split("class=\"whose-legend-entry\"").skip(1) {
        let owner = &part[part.find("data-owner=\"").unwrap() + 12..];
        let owner = &owner[..owner.find('"').unwrap()];
        let fill = &part[part.find("fill=\"rgb(").unwrap() + 10..];
        let fill: Vec<u8> = fill[..fill.find(')').unwrap()]
            .split(',')
            .map(|x| x.parse().unwrap())
            .collect();
        assert_eq!(
            row_rgb(&table, owner),
            (fill[0], fill[1], fill[2]),
            "{owner}: table and flame graph colours differ"
        );
        checked += 1;
    }
    assert!(checked >= 5, "{checked} owners compared");
    // colour changes no position: without its escapes the table is the plain one
    let mut plain_args = vec!["report", "--color", "never"];
    plain_args.extend(strs(&profile));
    let plain = stdout(&run(&plain_args, &[]));
    assert_eq!(strip_ansi(&table), plain);
    // without COLORTERM, the nearest of the 256 xterm colours
    let mut args = vec!["report", "--color", "always"];
    args.extend(strs(&profile));
    let table = stdout(&run(&args, &[("COLORTERM", "")]));
    assert!(table.contains("\x1b[38;5;"), "{table}");
    assert!(!table.contains("\x1b[38;2;"));
}

/// `s` without its `ESC [ … m` sequences.
fn strip_ansi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            for c in chars.by_ref() {
                if c == 'm' {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn widest(text: &str) -> usize {
    text.lines().map(UnicodeWidthStr::width).max().unwrap_or(0)
}

#[test]
fn the_table_fits_columns_and_names_are_shortened_in_the_middle() {
    let run_hermetic = super::hermetic::Hermetic::new();
    let mut args = vec!["report".to_string(), rel("perf/jvm-shop.perf.data")];
    args.extend([
        "--symfs".into(),
        run_hermetic.root().to_str().unwrap().into(),
    ]);
    args.extend(["--binary-path".into(), rel("perf/bin")]);
    args.extend(["--jit-map-dir".into(), rel("perf")]);
    let at = |columns: Option<&str>| {
        let mut c = run_hermetic.command();
        c.current_dir(ROOT);
        match columns {
            Some(columns) => c.env("COLUMNS", columns),
            None => c.env_remove("COLUMNS"),
        };
        let out = c.args(&args).output().unwrap();
        (stdout(&out), String::from_utf8(out.stderr).unwrap())
    };
    // the default for a pipe is 80 (the goldens check that layout byte for byte)
    let (plain, _) = at(None);
    assert!(widest(&plain) <= 80, "{plain}");
    assert_eq!(plain, at(Some("80")).0);
    // 60: the views get a table each, frame names are shortened in the middle
    let (narrow, _) = at(Some("60"));
    assert!(widest(&narrow) <= 60, "{narrow}");
    let frame = narrow
        .lines()
        .find(|l| l.contains("sun.net.httpserver.Request$WriteStream.write"))
        .map(|_| ())
        .is_none();
    assert!(
        frame,
        "a 44-character name fits no 60-column frame list:\n{narrow}"
    );
    assert!(
        narrow
            .lines()
            .any(|l| l.contains("sun.net.") && l.contains('…') && l.ends_with(".write")),
        "{narrow}"
    );
    // 44: owner names too: jdk-httpserver's row shortened in the middle, its numbers whole
    let (tight, _) = at(Some("44"));
    let row = tight
        .lines()
        .find(|l| l.contains("framework") && l.contains("39.8%"))
        .unwrap_or_else(|| panic!("{tight}"));
    assert!(
        row.trim_start().starts_with("jdk-") && row.contains("…server"),
        "{row}"
    );
    assert!(row.contains("2.67 s"), "{row}");
    // wide: nothing shortened, every view in one table
    let (wide, _) = at(Some("300"));
    assert!(!wide.contains('…'), "{wide}");
    assert!(wide.contains("jdk-httpserver  framework"));
    assert!(widest(&wide) > 80);
}

#[test]
fn side_by_side_columns_are_headed_by_file_name() {
    let files: Vec<String> = (1..=3)
        .map(|i| rel(&format!("repeats/churn-{i}.folded")))
        .collect();
    let mut args = vec!["report"];
    args.extend(strs(&files));
    let table = stdout(&run(&args, &[]));
    assert!(
        !table.contains("#1") && !table.contains("self #"),
        "{table}"
    );
    assert!(widest(&table) <= 80, "{table}");
    // one block per view, each headed by the three files
    let heads: Vec<&str> = table
        .lines()
        .filter(|l| l.contains("churn-1.folded  churn-2.folded  churn-3.folded"))
        .collect();
    assert_eq!(heads.len(), 3, "{table}");
    for view in ["self", "owner", "anywhere"] {
        assert!(table.contains(&format!(" {view} ─")), "{view}: {table}");
    }
    // wide enough for all views: one table, still named by file
    let table = stdout(&run(&args, &[("COLUMNS", "200")]));
    let heads = table
        .lines()
        .filter(|l| l.contains("churn-1.folded"))
        .filter(|l| l.starts_with(' '))
        .count();
    assert_eq!(heads, 1, "{table}");
}

#[test]
fn by_type_shares_align_under_ten_percent() {
    let args = [
        "report",
        &rel("folded/seed-ktor-alloc.txt"),
        "--unit",
        "bytes",
        "--types-as-frames",
        "--by",
        "type",
    ]
    .map(str::to_string);
    let table = stdout(&run(&strs(&args), &[]));
    let head = table
        .lines()
        .position(|l| l.contains("allocated type"))
        .unwrap();
    // every share ends where the `share` title ends
    let end = table.lines().nth(head).unwrap().find("share").unwrap() + "share".len();
    let rows: Vec<&str> = table
        .lines()
        .skip(head + 1)
        .take_while(|l| !l.trim().is_empty() && l.contains('%'))
        .collect();
    assert!(
        rows.iter().any(|r| r.contains(" 0.") || r.contains(" 1.")),
        "{table}"
    );
    for r in &rows {
        let pct: String = r.chars().take(end).collect();
        assert!(
            r.chars().count() > end && pct.ends_with('%'),
            "share not right-aligned at {end}: {r:?}\n{table}"
        );
    }
}

#[test]
fn flame_refuses_to_write_an_svg_to_a_terminal() {
    // `script` gives the command a terminal as standard output
    let Ok(script) = which("script") else {
        eprintln!("skipped: no `script` (util-linux) to give whose a terminal");
        return;
    };
    let cmd = format!(
        "cd {} && {} flame {} ; echo exit=$?",
        sh_quote(ROOT),
        sh_quote(env!("CARGO_BIN_EXE_whose")),
        rel("folded/py-app.folded")
    );
    let out = Command::new(script)
        .args(["-qc", &cmd, "/dev/null"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("exit=2"), "{text}");
    assert!(text.contains("standard output is a terminal"), "{text}");
    assert!(text.contains("-o FILE.svg"), "{text}");
    assert!(!text.contains("<svg"), "{text}");
}

#[test]
fn warnings_on_a_terminal_wrap_to_its_width() {
    let Ok(script) = which("script") else {
        eprintln!("skipped: no `script` (util-linux) to give whose a terminal");
        return;
    };
    // jvm-shop without its kernel symbols: a warning of several hundred characters
    let cmd = format!(
        "cd {} && {} report {} --symfs /nonexistent --binary-path {} --jit-map-dir {} --color never",
        sh_quote(ROOT),
        sh_quote(env!("CARGO_BIN_EXE_whose")),
        rel("perf/jvm-shop.perf.data"),
        rel("perf/bin"),
        rel("perf")
    );
    let out = Command::new(script)
        .args(["-qc", &cmd, "/dev/null"])
        .env("COLUMNS", "60")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).replace('\r', "");
    // the warning (after the progress bar's last redraw) and its continuation lines
    let start = text
        .find("whose: warning:")
        .unwrap_or_else(|| panic!("{text}"));
    let mut lines = text[start..].lines();
    let mut warning = vec![lines.next().unwrap()];
    warning.extend(lines.take_while(|l| l.starts_with("  ")));
    assert!(warning.len() > 3, "{warning:#?}");
    for l in &warning {
        assert!(l.width() <= 60, "{l:?} in {warning:#?}");
    }
    // and the report itself fits too
    let report = &text[text.find("presets:").unwrap()..];
    assert!(widest(report) <= 60, "{report}");
}

fn which(name: &str) -> Result<std::path::PathBuf, ()> {
    std::env::var_os("PATH")
        .and_then(|p| {
            std::env::split_paths(&p)
                .map(|d| d.join(name))
                .find(|f| f.is_file())
        })
        .ok_or(())
}

#[test]
fn flame_sums_several_profiles() {
    let dir = tempfile::tempdir().unwrap();
    let draw = |files: &[&str]| {
        let out = dir.path().join("g.svg");
        let mut args = vec!["flame", "--min-width", "0%", "-o", out.to_str().unwrap()];
        args.extend(files);
        stdout(&run(&args, &[]));
        std::fs::read_to_string(out).unwrap()
    };
    let total = |svg: &str| -> u64 {
        let t = &svg[svg.find("total_samples=\"").unwrap() + 15..];
        t[..t.find('"').unwrap()].parse().unwrap()
    };
    let (a, b) = (rel("repeats/churn-1.folded"), rel("repeats/churn-2.folded"));
    let one = draw(&[&a]);
    let two = draw(&[&b]);
    let both = draw(&[&a, &b]);
    assert_eq!(total(&one), 1462);
    assert_eq!(total(&both), total(&one) + total(&two));
    assert!(both.contains("2 profiles summed (churn-1.folded, churn-2.folded)"));
    // the same profile twice: every frame exactly twice as wide, shares unchanged
    let twice = draw(&[&a, &a]);
    assert_eq!(total(&twice), 2 * 1462);
    let shares = |svg: &str| -> Vec<String> {
        svg.split("data-share=\"")
            .skip(1)
            .map(|s| s[..s.find('"').unwrap()].to_string())
            .collect()
    };
    assert_eq!(shares(&twice), shares(&one));
}
