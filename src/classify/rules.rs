//! Rule files: the TOML schema (docs/design.md "Rules", documented in `rules/README.md`) and its
//! checked translation into owner blocks. Every mistake is reported with the file, line and
//! column it is at; unknown keys are rejected rather than ignored, because a misspelt
//! `prefx` that silently matches nothing is the worst kind of wrong answer.

use super::glob::Glob;
use crate::error::{Error, Position, Result};
use crate::model::{Category, FrameKind};
use regex::Regex;
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use toml::Spanned;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleFileToml {
    #[serde(default)]
    extend: Vec<Spanned<String>>,
    #[serde(default)]
    owner: Vec<Spanned<OwnerToml>>,
    /// Only in the shipped presets; see [`Detect`].
    detect: Option<Spanned<DetectToml>>,
    /// Only in the shipped presets; see [`Vendors`].
    vendors: Option<Spanned<Vendors>>,
}

/// A preset's `vendors` table: namespaces of third-party code that are never the program's
/// own (issue 53). The own-code guess never names them, and a frame under them that no owner
/// block claims is owned by its product (a guessed library owner), so that the list of what
/// is not the user's is data beside the owners, not Rust code.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Vendors {
    /// JVM package prefixes of one product each (`io.netty.`, `scala.`): the product is the
    /// prefix less its dot.
    #[serde(default)]
    pub prefix: Vec<String>,
    /// JVM package prefixes of vendors of many products (`org.apache.`): the product is the
    /// prefix and the package segment after it (`org.apache.kafka`).
    #[serde(default)]
    pub products: Vec<String>,
    /// Top-level Python packages (`jinja2`): their files are never the program's, also where
    /// a profiler names them relative to `sys.path` (`jinja2/environment.py`).
    #[serde(default)]
    pub package: Vec<String>,
}

/// A rule file's `vendors` table alone (see [`DetectOnlyToml`]).
#[derive(Debug, Deserialize)]
struct VendorsOnlyToml {
    vendors: Option<Vendors>,
}

/// A rule file's `detect` table alone: the rest of the file is not compiled (its regexes are
/// costly), so preset detection reads just this.
#[derive(Debug, Deserialize)]
struct DetectOnlyToml {
    detect: Option<Spanned<DetectToml>>,
}

/// Declares a rule-file table that holds the matcher keys (`prefix`, `regex`, `module`,
/// `file`, `crate`, `kind`) between its own fields (in that order, the order error messages
/// list the keys in), and `take_matchers`, which moves them out as a [`MatchersToml`]. The keys are declared here once rather than flattened from
/// `MatchersToml`: serde cannot combine `flatten` with `deny_unknown_fields`.
macro_rules! with_matcher_keys {
    (
        $(#[$meta:meta])* struct $name:ident { $($(#[$field_meta:meta])* $field:ident: $ty:ty,)* }
        then { $($(#[$last_meta:meta])* $last:ident: $last_ty:ty,)* }
    ) => {
        $(#[$meta])*
        #[serde(deny_unknown_fields)]
        struct $name {
            $($(#[$field_meta])* $field: $ty,)*
            #[serde(default)]
            prefix: Vec<String>,
            #[serde(default)]
            regex: Vec<Spanned<String>>,
            #[serde(default)]
            module: Vec<String>,
            #[serde(default)]
            file: Vec<String>,
            #[serde(default, rename = "crate")]
            crates: Vec<String>,
            #[serde(default)]
            kind: Vec<Spanned<String>>,
            $($(#[$last_meta])* $last: $last_ty,)*
        }

        impl $name {
            #[allow(dead_code)] // MatchersToml is its own matcher keys
            fn take_matchers(&mut self) -> MatchersToml {
                MatchersToml {
                    prefix: std::mem::take(&mut self.prefix),
                    regex: std::mem::take(&mut self.regex),
                    module: std::mem::take(&mut self.module),
                    file: std::mem::take(&mut self.file),
                    crates: std::mem::take(&mut self.crates),
                    kind: std::mem::take(&mut self.kind),
                }
            }
        }
    };
}

with_matcher_keys! {
    #[derive(Debug, Deserialize)]
    struct DetectToml {}
    then {
        #[serde(default)]
        all: Vec<Spanned<MatchersToml>>,
    }
}

with_matcher_keys! {
    #[derive(Debug, Deserialize)]
    struct OwnerToml {
        name: Spanned<String>,
        category: Spanned<String>,
        transparent: Option<bool>,
    }
    then {
        #[serde(default)]
        all: Vec<Spanned<MatchersToml>>,
    }
}

with_matcher_keys! {
    #[derive(Debug, Default, Deserialize)]
    struct MatchersToml {}
    then {}
}

/// Where a block was declared, for `explain` and for error messages.
#[derive(Debug, Clone)]
pub struct Origin {
    pub file: Arc<str>,
    pub line: u64,
    /// For the program's own code guessed from the profile (`file` then names the unit,
    /// `go module whose/gosvc`): the guess, whose evidence `explain` shows beside it.
    pub guess: Option<Box<super::guess::OwnCode>>,
}

/// `FILE:LINE`; a block with no line (a `--user` prefix, the program's own code guessed from
/// the profile) is named by where it came from alone, never with a meaningless `:0`.
impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.line == 0 {
            write!(f, "{}", self.file)
        } else {
            write!(f, "{}:{}", self.file, self.line)
        }
    }
}

/// A set of matchers; in an owner block any one of them matching is enough, in an `all`
/// entry every kind that is present must match.
#[derive(Debug, Clone, Default)]
pub struct Matchers {
    pub prefix: Vec<String>,
    pub regex: Vec<Regex>,
    pub module: Vec<Glob>,
    pub file: Vec<Glob>,
    pub crates: Vec<String>,
    pub kind: Vec<FrameKind>,
}

impl Matchers {
    pub fn is_empty(&self) -> bool {
        self.prefix.is_empty()
            && self.regex.is_empty()
            && self.module.is_empty()
            && self.file.is_empty()
            && self.crates.is_empty()
            && self.kind.is_empty()
    }
}

/// One `[[owner]]` block, checked.
#[derive(Debug, Clone)]
pub struct OwnerBlock {
    pub name: String,
    pub category: Category,
    pub transparent: Option<bool>,
    pub any: Matchers,
    pub all: Vec<Matchers>,
    pub origin: Origin,
}

/// A preset's `detect` table: the frames that say a profile needs the preset when the user
/// names none. Its keys mean what they mean in an owner block (any one of `any` matching, or
/// every kind present in one `all` entry); one such frame selects the preset. Declared in the
/// preset's TOML beside its owners, so the file says both what it claims and when it applies.
#[derive(Debug, Clone)]
pub struct Detect {
    pub any: Matchers,
    pub all: Vec<Matchers>,
    /// The line of the `detect` table, for messages.
    pub line: u64,
}

/// A parsed rule file: its blocks in order, the presets it extends and, for a preset, when
/// it is detected.
#[derive(Debug, Clone)]
pub struct RuleFile {
    pub blocks: Vec<OwnerBlock>,
    pub extend: Vec<String>,
    pub detect: Option<Detect>,
    /// Whether the file has a `vendors` table (only the presets may; [`parse_vendors`] reads
    /// it), and its line.
    pub vendors_line: Option<u64>,
}

/// Parses rule text. `display` names the file in messages (a path, or `preset jvm`).
pub fn parse(text: &str, display: &str) -> Result<RuleFile> {
    let doc = Located { text, display };
    let parsed: RuleFileToml = doc.toml()?;
    let file: Arc<str> = display.into();
    let blocks = parsed
        .owner
        .into_iter()
        .map(|block| doc.block(block, &file))
        .collect::<Result<Vec<_>>>()?;
    Ok(RuleFile {
        blocks,
        extend: parsed.extend.into_iter().map(Spanned::into_inner).collect(),
        detect: parsed.detect.map(|d| doc.detect(d)).transpose()?,
        vendors_line: parsed.vendors.map(|v| doc.line_of(v.span().start)),
    })
}

/// The `vendors` table of rule text, without compiling its owner blocks.
pub fn parse_vendors(text: &str, display: &str) -> Result<Vendors> {
    let doc = Located { text, display };
    let parsed: VendorsOnlyToml = doc.toml()?;
    Ok(parsed.vendors.unwrap_or_default())
}

/// The `detect` table of rule text, without compiling its owner blocks.
pub fn parse_detect(text: &str, display: &str) -> Result<Option<Detect>> {
    let doc = Located { text, display };
    let parsed: DetectOnlyToml = doc.toml()?;
    parsed.detect.map(|d| doc.detect(d)).transpose()
}

/// Reads and parses a rule file from disk.
pub fn load(path: &Path) -> Result<RuleFile> {
    let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
    let text = String::from_utf8(bytes).map_err(|e| Error::Rules {
        path: path.to_path_buf(),
        position: Position::Offset(e.utf8_error().valid_up_to() as u64),
        message: "rule file is not valid UTF-8".into(),
    })?;
    let file = parse(&text, &path.display().to_string())?;
    if let Some(detect) = &file.detect {
        return Err(Error::Rules {
            path: path.to_path_buf(),
            position: Position::Line(detect.line),
            message: "`detect` only has a meaning in the presets shipped with whose; \
                      name the presets a profile needs with --preset"
                .into(),
        });
    }
    if let Some(line) = file.vendors_line {
        return Err(Error::Rules {
            path: path.to_path_buf(),
            position: Position::Line(line),
            message: "`vendors` only has a meaning in the presets shipped with whose; \
                      claim a namespace of your own with an owner block (`[[owner]]`, \
                      `prefix = [...]`)"
                .into(),
        });
    }
    Ok(file)
}

/// Rule text with its name, to turn byte spans into line:column errors.
struct Located<'a> {
    text: &'a str,
    display: &'a str,
}

impl Located<'_> {
    fn toml<T: serde::de::DeserializeOwned>(&self) -> Result<T> {
        toml::from_str(self.text).map_err(|e| {
            let position = e
                .span()
                .map(|s| self.position(s.start))
                .unwrap_or(Position::Whole);
            self.error(position, e.message().trim().to_string())
        })
    }

    fn detect(&self, detect: Spanned<DetectToml>) -> Result<Detect> {
        let line = match self.position(detect.span().start) {
            Position::LineColumn(l, _) => l,
            _ => 0,
        };
        let mut detect = detect.into_inner();
        let any = self.matchers(detect.take_matchers())?;
        let all = self.all_entries(detect.all)?;
        if any.is_empty() && all.is_empty() {
            return Err(self.error(Position::Line(line), "`detect` has no matcher"));
        }
        Ok(Detect { any, all, line })
    }

    fn all_entries(&self, entries: Vec<Spanned<MatchersToml>>) -> Result<Vec<Matchers>> {
        entries
            .into_iter()
            .map(|entry| {
                let span = entry.span();
                let m = self.matchers(entry.into_inner())?;
                if m.is_empty() {
                    return Err(self.error(self.position(span.start), "empty `all` entry"));
                }
                Ok(m)
            })
            .collect()
    }

    /// The line `offset` is on.
    fn line_of(&self, offset: usize) -> u64 {
        match self.position(offset) {
            Position::LineColumn(l, _) => l,
            _ => 0,
        }
    }

    fn position(&self, offset: usize) -> Position {
        let before = &self.text[..offset.min(self.text.len())];
        let line = before.matches('\n').count() as u64 + 1;
        let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) as u64 + 1;
        Position::LineColumn(line, column)
    }

    fn error(&self, position: Position, message: impl Into<String>) -> Error {
        Error::Rules {
            path: PathBuf::from(self.display),
            position,
            message: message.into(),
        }
    }

    fn at<T>(&self, spanned: &Spanned<T>, message: impl Into<String>) -> Error {
        self.error(self.position(spanned.span().start), message)
    }

    fn block(&self, block: Spanned<OwnerToml>, file: &Arc<str>) -> Result<OwnerBlock> {
        let line = match self.position(block.span().start) {
            Position::LineColumn(l, _) => l,
            _ => 0,
        };
        let mut block = block.into_inner();
        let category = Category::parse(block.category.get_ref()).ok_or_else(|| {
            self.at(
                &block.category,
                format!(
                    "unknown category `{}`; expected one of: {}",
                    block.category.get_ref(),
                    Category::ALL.map(Category::as_str).join(", ")
                ),
            )
        })?;
        let name = block.name.get_ref().trim().to_string();
        if name.is_empty() {
            return Err(self.at(&block.name, "owner name must not be empty"));
        }
        let any = self.matchers(block.take_matchers())?;
        let all = self.all_entries(block.all)?;
        if any.is_empty() && all.is_empty() {
            return Err(self.at(
                &block.name,
                format!(
                    "owner `{name}` has no matcher (prefix, regex, module, file, crate, kind or all)"
                ),
            ));
        }
        Ok(OwnerBlock {
            name,
            category,
            transparent: block.transparent,
            any,
            all,
            origin: Origin {
                guess: None,
                file: file.clone(),
                line,
            },
        })
    }

    fn matchers(&self, m: MatchersToml) -> Result<Matchers> {
        let regex = m
            .regex
            .iter()
            .map(|r| {
                Regex::new(r.get_ref())
                    .map_err(|e| self.at(r, format!("invalid regex `{}`: {e}", r.get_ref())))
            })
            .collect::<Result<Vec<_>>>()?;
        let kind = m
            .kind
            .iter()
            .map(|k| {
                FrameKind::parse(k.get_ref()).ok_or_else(|| {
                    self.at(
                        k,
                        format!(
                            "unknown frame kind `{}`; expected one of: {}",
                            k.get_ref(),
                            FrameKind::ALL.map(FrameKind::as_str).join(", ")
                        ),
                    )
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Matchers {
            prefix: m.prefix,
            regex,
            module: m.module.iter().map(|g| Glob::new(g)).collect(),
            file: m.file.iter().map(|g| Glob::new(g)).collect(),
            crates: m.crates.iter().map(|c| c.replace('-', "_")).collect(),
            kind,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::cases::temp_file;

    fn err(text: &str) -> String {
        parse(text, "t.toml").unwrap_err().to_string()
    }

    #[test]
    fn parses_blocks_in_order() {
        let f = parse(
            "extend = [\"native\"]\n[[owner]]\nname = \"a\"\ncategory = \"user\"\nprefix = [\"a.\"]\n\n[[owner]]\nname = \"m\"\ncategory = \"allocator\"\n[[owner.all]]\nmodule = [\"libc.so*\"]\nregex = ['^malloc$']\n",
            "t.toml",
        )
        .unwrap();
        assert_eq!(f.extend, vec!["native"]);
        assert_eq!(f.blocks.len(), 2);
        assert_eq!(f.blocks[0].origin.line, 2);
        assert_eq!(f.blocks[1].all.len(), 1);
    }

    #[test]
    fn mistakes_name_line_and_column() {
        assert!(err("[[owner]\nname = 1").starts_with("t.toml:1:"));
        let e = err("[[owner]]\nname = \"a\"\ncategory = \"user\"\nprefx = [\"a\"]\n");
        assert!(e.contains("unknown field `prefx`"), "{e}");
        assert!(e.starts_with("t.toml:"), "{e}");
        let e = err("[[owner]]\nname = \"a\"\ncategory = \"user\"\nregex = ['(']\n");
        assert!(e.starts_with("t.toml:4:10: invalid regex"), "{e}");
        let e = err("[[owner]]\nname = \"a\"\ncategory = \"usr\"\nprefix = ['a']\n");
        assert!(e.starts_with("t.toml:3:12: unknown category `usr`"), "{e}");
        let e = err("[[owner]]\nname = \"a\"\ncategory = \"user\"\n");
        assert!(e.contains("has no matcher"), "{e}");
        let e = err("[detect]\npefix = [\"a\"]\n");
        assert!(e.contains("unknown field `pefix`"), "{e}");
    }

    #[test]
    fn a_detect_table_is_read_alone_and_refused_in_user_files() {
        let text = "[detect]\nprefix = [\"a.\"]\nall = [{ kind = [\"kernel\"], module = [\"m\"] }]\n\n[[owner]]\nname = \"a\"\ncategory = \"user\"\nregex = ['(']\n";
        let detect = parse_detect(text, "t.toml").unwrap().unwrap();
        assert_eq!(
            (detect.any.prefix.len(), detect.all.len(), detect.line),
            (1, 1, 1)
        );
        let (_dir, path) = temp_file("mine.toml", "[detect]\nprefix = [\"a.\"]\n");
        let e = load(&path).unwrap_err().to_string();
        assert!(
            e.contains(":1: `detect` only has a meaning in the presets"),
            "{e}"
        );
    }
}
