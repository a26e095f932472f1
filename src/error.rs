//! The crate's error type. Every variant carries enough context (file, line, byte offset,
//! what was expected) for a user to find the problem without a debugger; `main` maps all of
//! them to exit code 2.

use std::path::PathBuf;

/// Where in an input a problem was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Position {
    /// 1-based line number of a text input.
    Line(u64),
    /// 1-based line and column (rule files).
    LineColumn(u64, u64),
    /// Byte offset into a binary input (after decompression where the input was compressed,
    /// except for a corrupt gzip stream, whose message says the offset is the compressed one).
    Offset(u64),
    /// The problem concerns the input as a whole.
    Whole,
}

impl std::fmt::Display for Position {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Position::Line(l) => write!(f, ":{l}"),
            Position::LineColumn(l, c) => write!(f, ":{l}:{c}"),
            Position::Offset(o) => write!(f, " at byte offset {o}"),
            Position::Whole => Ok(()),
        }
    }
}

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// The input is not what its format requires.
    #[error("{path}{position}: {message}")]
    Input {
        path: PathBuf,
        position: Position,
        message: String,
    },
    /// A rule file is malformed (TOML syntax, unknown key, bad regex, unknown category...).
    #[error("{path}{position}: {message}")]
    Rules {
        path: PathBuf,
        position: Position,
        message: String,
    },
    /// The command line asks for something inconsistent or absent.
    #[error("{0}")]
    Usage(String),
    /// A feature the input needs that whose does not have yet; better than a wrong number.
    #[error("not supported yet: {0}")]
    Unsupported(String),
}

impl Error {
    /// An input error; a message that carries a long piece of the input (a parser's own
    /// message quoting a 10 MB string where a number belongs) is bounded ([`bounded`]).
    pub fn input(path: impl Into<PathBuf>, position: Position, message: impl Into<String>) -> Self {
        Error::Input {
            path: path.into(),
            position,
            message: bounded(message.into()),
        }
    }

    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The most bytes of input an error message or warning quotes: enough to recognise the
/// token, and a 1 MB token still gives one line of stderr.
pub const QUOTE_BYTES: usize = 80;

/// How a message shows a piece of the input: at most [`QUOTE_BYTES`] bytes of it (cut on a
/// character boundary), invalid UTF-8 as U+FFFD, control characters escaped so the quote stays
/// on one line, and when cut, how long the whole was. The one place every reader quotes
/// input through, so no message can echo a token whole.
pub fn quote(bytes: &[u8]) -> String {
    let cut = bytes.len() > QUOTE_BYTES;
    let mut head = &bytes[..bytes.len().min(QUOTE_BYTES)];
    if cut
        && let Err(e) = std::str::from_utf8(head)
        && e.error_len().is_none()
    {
        // the cut fell inside a character: end before it rather than show U+FFFD
        head = &head[..e.valid_up_to()];
    }
    let mut shown = String::with_capacity(head.len() + 32);
    for c in String::from_utf8_lossy(head).chars() {
        if c.is_control() {
            shown.extend(c.escape_default());
        } else {
            shown.push(c);
        }
    }
    if cut {
        shown.push_str(&format!("… ({} bytes in all)", bytes.len()));
    }
    shown
}

/// The longest message left as it is: a few lines of words.
const MESSAGE_BYTES: usize = 600;

/// `message` with every word longer than [`QUOTE_BYTES`] shown as [`quote`] shows input, when
/// the message is longer than [`MESSAGE_BYTES`]: the parsers' messages (serde_json's
/// `invalid type: string "…", expected f64`) quote the value whole, and a message is one line
/// of stderr, not the input again (issue 61).
pub fn bounded(message: String) -> String {
    if message.len() <= MESSAGE_BYTES {
        return message;
    }
    let mut out = String::with_capacity(MESSAGE_BYTES);
    for (i, word) in message.split(' ').enumerate() {
        if i > 0 {
            out.push(' ');
        }
        match word.len() > QUOTE_BYTES {
            true => out.push_str(&quote(word.as_bytes())),
            false => out.push_str(word),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_message_quoting_a_long_value_is_bounded() {
        let value = "x".repeat(100_000);
        let m = format!("invalid type: string \"{value}\", expected f64 at line 1 column 100064");
        let b = bounded(m);
        assert!(b.len() < 300, "{}", b.len());
        assert!(b.starts_with("invalid type: string \"xxx"), "{b}");
        assert!(
            b.ends_with("(100003 bytes in all) expected f64 at line 1 column 100064"),
            "{b}"
        );
        let short = "a short message with a word".to_string();
        assert_eq!(bounded(short.clone()), short);
    }

    #[test]
    fn short_input_is_quoted_whole_and_long_input_is_cut_with_its_length() {
        assert_eq!(quote(b"main;foo"), "main;foo");
        let long = vec![b'x'; 1 << 20];
        let q = quote(&long);
        assert_eq!(q, format!("{}… (1048576 bytes in all)", "x".repeat(80)));
    }

    #[test]
    fn a_cut_inside_a_character_ends_before_it_and_controls_are_escaped() {
        // 79 ASCII bytes, then a 3-byte character straddling the 80-byte cut
        let mut bytes = vec![b'a'; 79];
        bytes.extend("€€".as_bytes());
        assert_eq!(
            quote(&bytes),
            format!("{}… (85 bytes in all)", "a".repeat(79))
        );
        assert_eq!(quote(b"a\tb\nc\xff"), "a\\tb\\nc\u{fffd}");
    }
}
