//! The glob dialect of `module` and `file` rules: `*` is any run of characters, `?` is one
//! character, everything else is literal — brackets included, because module names such as
//! `[kernel.kallsyms]` and `[vdso]` are common and must not become character classes.

/// The `module` glob of frames that have none.
pub const NO_MODULE: &str = "(none)";

#[derive(Debug, Clone)]
pub struct Glob {
    pattern: Vec<char>,
    shape: Shape,
}

/// How a glob is matched. Nearly every glob the presets and users write is a literal with a
/// `*` at one end or both (`libc.so*`, `*.py`, `*/site-packages/*`): those are one comparison
/// or one precompiled substring search, not the backtracking walk, which costs a few hundred
/// instructions a frame when preset detection tries every module glob on every frame of every
/// input of `report --each` (issue 24).
#[derive(Debug, Clone)]
enum Shape {
    Exact(String),
    Prefix(String),
    Suffix(String),
    Contains(Box<memchr::memmem::Finder<'static>>),
    /// One star inside (`perf-*.map`, `libc-2.*.so`): the text starts with the one part and
    /// ends with the other, which do not overlap.
    Around(String, String),
    /// Anything else (a `?`, more stars): [`matches_units`].
    General,
}

impl Shape {
    fn of(pattern: &str) -> Shape {
        let lead = pattern.starts_with('*');
        let literal = pattern.trim_start_matches('*');
        let trail = literal.ends_with('*');
        let literal = literal.trim_end_matches('*');
        if literal.contains('?') {
            return Shape::General;
        }
        if let Some((head, tail)) = literal.split_once('*') {
            return match (lead, trail, tail.contains('*')) {
                (false, false, false) => Shape::Around(head.to_string(), tail.to_string()),
                _ => Shape::General,
            };
        }
        match (lead, trail) {
            (false, false) => Shape::Exact(literal.to_string()),
            (false, true) => Shape::Prefix(literal.to_string()),
            (true, false) => Shape::Suffix(literal.to_string()),
            (true, true) => {
                Shape::Contains(Box::new(memchr::memmem::Finder::new(literal).into_owned()))
            }
        }
    }
}

impl PartialEq for Glob {
    fn eq(&self, other: &Glob) -> bool {
        self.pattern == other.pattern
    }
}

impl Eq for Glob {}

impl Glob {
    pub fn new(pattern: &str) -> Glob {
        Glob {
            pattern: pattern.chars().collect(),
            shape: Shape::of(pattern),
        }
    }

    pub fn as_string(&self) -> String {
        self.pattern.iter().collect()
    }

    /// `module = ["(none)"]`: the pattern that matches a frame without a module (folded text
    /// that lost them, as stackcollapse-perf writes a JVM), which no other glob matches.
    pub fn is_no_module(&self) -> bool {
        self.pattern.iter().copied().eq(NO_MODULE.chars())
    }

    /// Whether the glob matches a frame's module, absent (`None`) included.
    pub fn matches_module(&self, module: Option<&str>) -> bool {
        match module {
            Some(m) => self.matches(m),
            None => self.is_no_module(),
        }
    }

    /// Iterative matching with single-star backtracking: linear in practice, no recursion,
    /// and no allocation for the ASCII texts modules and files nearly always are.
    pub fn matches(&self, text: &str) -> bool {
        match &self.shape {
            Shape::Exact(literal) => return text == literal,
            Shape::Prefix(literal) => return text.starts_with(literal.as_str()),
            Shape::Suffix(literal) => return text.ends_with(literal.as_str()),
            Shape::Contains(finder) => return finder.find(text.as_bytes()).is_some(),
            Shape::Around(head, tail) => {
                return text.len() >= head.len() + tail.len()
                    && text.starts_with(head.as_str())
                    && text.ends_with(tail.as_str());
            }
            Shape::General => {}
        }
        if text.is_ascii() {
            matches_units(&self.pattern, text.as_bytes(), |p, t| p == char::from(t))
        } else {
            let text: Vec<char> = text.chars().collect();
            matches_units(&self.pattern, &text, |p, t| p == t)
        }
    }
}

/// Glob matching over any text units: `same` says whether a pattern char is a text unit.
fn matches_units<T: Copy>(p: &[char], text: &[T], same: impl Fn(char, T) -> bool) -> bool {
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < text.len() {
        if pi < p.len() && (p[pi] == '?' || same(p[pi], text[ti])) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::Glob;

    #[test]
    fn only_the_no_module_glob_matches_a_frame_without_one() {
        assert!(Glob::new("(none)").matches_module(None));
        assert!(!Glob::new("*").matches_module(None));
        assert!(!Glob::new("(none)").matches_module(Some("libjvm.so")));
        assert!(Glob::new("lib*.so").matches_module(Some("libjvm.so")));
    }

    #[test]
    fn stars_questions_and_literal_brackets() {
        assert!(Glob::new("perf-*.map").matches("perf-22048.map"));
        assert!(Glob::new("libc.so*").matches("libc.so.6"));
        assert!(Glob::new("[kernel.kallsyms]").matches("[kernel.kallsyms]"));
        assert!(!Glob::new("[kernel.kallsyms]").matches("k"));
        assert!(Glob::new("lib?.so").matches("libc.so"));
        assert!(!Glob::new("lib?.so").matches("libcc.so"));
        assert!(Glob::new("*/src/app/*").matches("/home/x/src/app/main.rs"));
        assert!(!Glob::new("churn*").matches("libc.so.6"));
        assert!(Glob::new("*").matches(""));
    }

    /// Every shape gives what the general walk gives, on texts around each literal's edges.
    #[test]
    fn the_shortcut_shapes_agree_with_the_general_walk() {
        let patterns = [
            "libc.so*",
            "*.py",
            "*/site-packages/*",
            "[vdso]",
            "*",
            "**",
            "",
            "a**",
            "**b",
            "*lib*c*",
            "l?b*",
            "*é*",
            "é",
            "*ü",
            "perf-*.map",
            "a*a",
            "lib*.so",
            "é*ü",
            "a**b",
        ];
        let texts = [
            "",
            "libc.so",
            "libc.so.6",
            "xlibc.so",
            "a.py",
            ".py",
            "a.pyc",
            "/x/site-packages/y",
            "/site-packages/",
            "site-packages",
            "[vdso]",
            "[vdso",
            "a",
            "ab",
            "b",
            "liblibc",
            "é",
            "xéy",
            "aü",
            "ü",
            "perf-123.map",
            "perf-.map",
            "perf.map",
            "aa",
            "aba",
            "lib.so",
            "libc.so",
            "éü",
            "éxü",
            "a*b",
            "axxb",
        ];
        for p in patterns {
            let glob = Glob::new(p);
            let pattern: Vec<char> = p.chars().collect();
            for t in texts {
                let chars: Vec<char> = t.chars().collect();
                let want = super::matches_units(&pattern, &chars, |p, t| p == t);
                assert_eq!(glob.matches(t), want, "glob `{p}` on `{t}`");
            }
        }
    }
}
