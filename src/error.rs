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
    /// Byte offset into a binary input (after decompression where the input was compressed).
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
    pub fn input(path: impl Into<PathBuf>, position: Position, message: impl Into<String>) -> Self {
        Error::Input {
            path: path.into(),
            position,
            message: message.into(),
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
