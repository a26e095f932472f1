//! Opening an input: a file or `-` for standard input, gzip detected from the content and
//! decompressed on the fly, behind one buffered reader so every text reader streams.

use crate::error::{Error, Position, Result};
use flate2::bufread::MultiGzDecoder;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

/// 1 MiB: large enough that a read syscall moves a useful amount (inferno's collapsers use
/// the same order of magnitude), small enough to be irrelevant to peak memory.
pub const READ_BUFFER: usize = 1 << 20;

/// The cap on a gzip stream's decompressed size when the caller sets none: the
/// `--max-decompressed` default.
pub const DEFAULT_MAX_DECOMPRESSED: u64 = 2 << 30;

/// An opened input, positioned at its first (decompressed) byte.
pub struct Source {
    /// The name to show in messages and reports (`-` shows as `<stdin>`).
    pub path: PathBuf,
    pub reader: Box<dyn BufRead + Send>,
    pub gzipped: bool,
}

impl Source {
    pub fn open(path: &Path) -> Result<Source> {
        let (display, raw): (PathBuf, Box<dyn Read + Send>) = if path == Path::new("-") {
            (PathBuf::from("<stdin>"), Box::new(std::io::stdin()))
        } else {
            let file = File::open(path).map_err(|e| Error::io(path, e))?;
            if file.metadata().is_ok_and(|m| m.is_dir()) {
                return Err(Error::input(
                    path,
                    Position::Whole,
                    "is a directory, expected a profile file",
                ));
            }
            (path.to_path_buf(), Box::new(file))
        };
        let mut buffered = BufReader::with_capacity(READ_BUFFER, raw);
        let head = buffered.fill_buf().map_err(|e| Error::io(&display, e))?;
        let gzipped = head.starts_with(&[0x1f, 0x8b]);
        let reader: Box<dyn BufRead + Send> = if gzipped {
            Box::new(BufReader::with_capacity(
                READ_BUFFER,
                MultiGzDecoder::new(buffered),
            ))
        } else {
            Box::new(buffered)
        };
        Ok(Source {
            path: display,
            reader,
            gzipped,
        })
    }

    /// Up to `n` bytes from the start of the (decompressed) input without consuming them.
    /// A short read only means the input is short: the reader's buffer holds at least `n`
    /// bytes whenever the input has them and `n` ≤ [`READ_BUFFER`] (gzip streams may deliver
    /// less per read; sniffing only needs the first lines).
    pub fn peek(&mut self, n: usize) -> Result<&[u8]> {
        let gzipped = self.gzipped;
        let path = self.path.clone();
        match self.reader.fill_buf() {
            Ok(buf) => Ok(&buf[..buf.len().min(n)]),
            Err(e) => Err(read_error(&path, gzipped, e)),
        }
    }

    /// Reads the next line (with its `\n`, if any) into `line`, which is cleared first, for
    /// the line-based readers; 0 at the end of the input.
    pub fn read_line(&mut self, line: &mut Vec<u8>) -> Result<usize> {
        line.clear();
        self.reader
            .read_until(b'\n', line)
            .map_err(|e| self.read_error(e))
    }

    /// The whole rest of the input, for readers that need it in memory (pprof decodes one
    /// message, perf.data read from a stream needs to seek). A gzip stream that inflates past
    /// `max_decompressed` ([`DEFAULT_MAX_DECOMPRESSED`] if `None`) is refused before it can
    /// exhaust memory; uncompressed input is as large as it is. Every reader that holds an
    /// input in memory goes through here, so the cap means the same for all of them.
    pub fn read_capped(&mut self, max_decompressed: Option<u64>) -> Result<Vec<u8>> {
        let cap = max_decompressed.unwrap_or(DEFAULT_MAX_DECOMPRESSED);
        let limit = if self.gzipped {
            cap.saturating_add(1)
        } else {
            u64::MAX
        };
        let mut bytes = Vec::new();
        (&mut self.reader)
            .take(limit)
            .read_to_end(&mut bytes)
            .map_err(|e| self.read_error(e))?;
        if self.gzipped && bytes.len() as u64 > cap {
            return Err(Error::input(
                &self.path,
                Position::Whole,
                format!(
                    "gzip stream decompresses to more than {cap} bytes (a gzip bomb?); \
                     if the profile is genuine, raise the cap with --max-decompressed BYTES"
                ),
            ));
        }
        Ok(bytes)
    }

    /// An I/O error while reading, with the file name; a broken gzip stream says so.
    pub fn read_error(&self, e: std::io::Error) -> Error {
        read_error(&self.path, self.gzipped, e)
    }
}

fn read_error(path: &Path, gzipped: bool, e: std::io::Error) -> Error {
    if gzipped {
        Error::input(
            path,
            Position::Whole,
            format!("gzip stream is corrupt or truncated: {e}"),
        )
    } else {
        Error::io(path, e)
    }
}
