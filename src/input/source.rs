//! Opening an input: a file or `-` for standard input, gzip detected from the content and
//! decompressed on the fly, behind one buffered reader so every text reader streams.

use crate::error::{Error, Position, Result};
use flate2::bufread::MultiGzDecoder;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// 1 MiB: large enough that a read syscall moves a useful amount (inferno's collapsers use
/// the same order of magnitude), small enough to be irrelevant to peak memory.
pub const READ_BUFFER: usize = 1 << 20;

/// The cap on what a reader holds in memory — a gzip stream's decompressed size, a raw input
/// read whole, a perf.data file's zstd-compressed records inflated — when the caller sets
/// none: the `--max-decompressed` default.
pub const DEFAULT_MAX_DECOMPRESSED: u64 = 2 << 30;

/// How far past the cap an overlong line is read to measure it: a few seconds of input, then
/// its length is "at least" (an endless line, `/dev/zero`, must not hang the reader).
const MEASURED_LINE: u64 = 1 << 30;

/// The longest line a line-based reader takes (`--max-line`): far past any stack a profiler
/// writes (a 10,000-frame stack of 200-byte names is 2 MB), and what one line may cost in
/// memory (issue 61: a 1.2 GB line with no newline aborted the readers under a 2 GB limit).
pub const DEFAULT_MAX_LINE: u64 = 64 << 20;

/// Byte-order marks of text inputs (Windows tools write folded stacks as UTF-16 with one).
const UTF8_BOM: &[u8] = &[0xef, 0xbb, 0xbf];
const UTF16_LE_BOM: &[u8] = &[0xff, 0xfe];
const UTF16_BE_BOM: &[u8] = &[0xfe, 0xff];

/// How much of an input format detection looks at ([`Source::peek`]); also the smallest read
/// buffer, so that a file whose length the file system does not know (`/proc`) still reads in
/// useful steps.
pub const DETECT_PEEK: usize = 64 << 10;

/// A read buffer for an input of `known_len` bytes (`None`: a stream): [`READ_BUFFER`], or
/// less for a smaller input. A buffer's first fill writes zeros over all of it (the readers
/// below it have no `read_buf`), which for 1 MiB is more than decoding a small pprof file:
/// `report --each` over 1,000 of them spent 6 % of its instructions zeroing (issue 24).
fn read_buffer_for(known_len: Option<u64>) -> usize {
    known_len.map_or(READ_BUFFER, |len| {
        usize::try_from(len.saturating_add(1))
            .unwrap_or(usize::MAX)
            .clamp(DETECT_PEEK, READ_BUFFER)
    })
}

/// The first allocation for an input of unknown length read whole; it doubles from there.
const FIRST_ALLOCATION: usize = 64 << 10;

/// An opened input, positioned at its first (decompressed) byte.
pub struct Source {
    /// The name to show in messages and reports (`-` shows as `<stdin>`).
    pub path: PathBuf,
    pub reader: Box<dyn BufRead + Send>,
    pub gzipped: bool,
    /// The length of a regular file, known before reading it.
    file_len: Option<u64>,
    /// For gzip: compressed bytes the decoder has consumed, and decompressed bytes it has
    /// produced, so that a corrupt stream's message says where.
    gzip_position: Option<(Arc<AtomicU64>, Arc<AtomicU64>)>,
    /// The longest line [`Source::read_line`] holds ([`DEFAULT_MAX_LINE`] unless set).
    line_cap: u64,
    /// Lines read so far, for the message of a line past the cap.
    lines_read: u64,
}

impl Source {
    pub fn open(path: &Path) -> Result<Source> {
        let mut file_len = None;
        let (display, raw): (PathBuf, Box<dyn Read + Send>) = if path == Path::new("-") {
            (PathBuf::from("<stdin>"), Box::new(std::io::stdin()))
        } else {
            let file = File::open(path).map_err(|e| Error::io(path, e))?;
            let metadata = file.metadata().ok();
            if metadata.as_ref().is_some_and(|m| m.is_dir()) {
                return Err(Error::input(
                    path,
                    Position::Whole,
                    "is a directory, expected a profile file",
                ));
            }
            file_len = metadata.filter(|m| m.is_file()).map(|m| m.len());
            (path.to_path_buf(), Box::new(file))
        };
        // `--each`: every read first asks whether the input is past its share of memory or
        // time (`model::budget`), so that the reader stops at its next read
        let raw: Box<dyn Read + Send> = match crate::model::budget::current() {
            Some(budget) => Box::new(Budgeted { inner: raw, budget }),
            None => raw,
        };
        let mut buffered = BufReader::with_capacity(read_buffer_for(file_len), raw);
        let head = buffered.fill_buf().map_err(|e| Error::io(&display, e))?;
        let gzipped = head.starts_with(&[0x1f, 0x8b]);
        let mut gzip_position = None;
        let reader: Box<dyn BufRead + Send> = if gzipped {
            let consumed = Arc::new(AtomicU64::new(0));
            let produced = Arc::new(AtomicU64::new(0));
            gzip_position = Some((consumed.clone(), produced.clone()));
            let decoder = MultiGzDecoder::new(Counted::new(buffered, consumed));
            // deflate shrinks a profile some 3-10x; the buffer is only the unit of a read
            let decompressed = file_len.map(|len| len.saturating_mul(8));
            Box::new(BufReader::with_capacity(
                read_buffer_for(decompressed),
                Counted::new(decoder, produced),
            ))
        } else {
            Box::new(buffered)
        };
        let reader = decode_text(reader).map_err(|e| Error::io(&display, e))?;
        Ok(Source {
            path: display,
            reader,
            gzipped,
            file_len,
            gzip_position,
            line_cap: DEFAULT_MAX_LINE,
            lines_read: 0,
        })
    }

    /// Up to `n` bytes from the start of the (decompressed) input without consuming them.
    /// A short read only means the input is short: the reader's buffer holds at least `n`
    /// bytes whenever the input has them and `n` ≤ [`DETECT_PEEK`] (gzip streams may deliver
    /// less per read; sniffing only needs the first lines).
    pub fn peek(&mut self, n: usize) -> Result<&[u8]> {
        if let Err(e) = self.reader.fill_buf() {
            return Err(self.read_error(e));
        }
        // filled just above: this returns the buffer without reading
        let buf = self
            .reader
            .fill_buf()
            .map_err(|e| Error::io(&self.path, e))?;
        Ok(&buf[..buf.len().min(n)])
    }

    /// Reads the next line (with its `\n`, if any) into `line`, which is cleared first, for
    /// the line-based readers; 0 at the end of the input.
    /// The bytes a plain file holds, known before reading it; `None` for a stream or a
    /// compressed file, whose length is known only at its end.
    pub fn len_hint(&self) -> Option<u64> {
        self.file_len.filter(|_| !self.gzipped)
    }

    /// A line longer than the cap (`--max-line`) is refused with its number and length, its
    /// bytes counted but never held: memory stays within the cap for any input (`/dev/zero`
    /// read as folded text, a gigabyte with no newline).
    pub fn read_line(&mut self, line: &mut Vec<u8>) -> Result<usize> {
        line.clear();
        self.lines_read += 1;
        let cap = self.line_cap;
        loop {
            let (take, ends) = match self.reader.fill_buf() {
                Ok([]) => return Ok(line.len()),
                Ok(buf) => {
                    let (take, ends) = match memchr::memchr(b'\n', buf) {
                        Some(i) => (i + 1, true),
                        None => (buf.len(), false),
                    };
                    if (line.len() + take) as u64 > cap {
                        let held = line.len() as u64;
                        line.clear();
                        return Err(self.overlong_line(held));
                    }
                    line.extend_from_slice(&buf[..take]);
                    (take, ends)
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(self.read_error(e)),
            };
            self.reader.consume(take);
            if ends {
                return Ok(line.len());
            }
        }
    }

    /// Sets the longest line [`Source::read_line`] takes (`--max-line`); `None` keeps
    /// [`DEFAULT_MAX_LINE`].
    pub fn cap_lines(&mut self, cap: Option<u64>) {
        self.line_cap = cap.unwrap_or(DEFAULT_MAX_LINE).max(1);
    }

    /// The error for the line being read once it passed the cap with `held` bytes: the rest
    /// of the line is read to its end to say how long it is, without keeping it, up to
    /// [`MEASURED_LINE`] bytes past the cap (`/dev/zero` has no end: "at least").
    fn overlong_line(&mut self, held: u64) -> Error {
        let mut length = held;
        let measured = self.line_cap.saturating_add(MEASURED_LINE);
        let mut ended = false;
        while !ended && length < measured {
            let n = match self.reader.fill_buf() {
                Ok([]) => break,
                Ok(buf) => match memchr::memchr(b'\n', buf) {
                    Some(i) => {
                        ended = true;
                        i
                    }
                    None => buf.len(),
                },
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return self.read_error(e),
            };
            length += n as u64;
            self.reader.consume(n);
        }
        let at_least = if length >= measured { "at least " } else { "" };
        Error::input(
            &self.path,
            Position::Line(self.lines_read),
            format!(
                "a line of {at_least}{length} bytes, longer than the {} bytes a line may hold \
                 (--max-line): no profile's line is that long; raise --max-line to read it",
                self.line_cap
            ),
        )
    }

    /// The whole rest of the input, for readers that need it in memory (pprof decodes one
    /// message, perf.data read from a stream needs to seek), at most `max_decompressed`
    /// bytes ([`DEFAULT_MAX_DECOMPRESSED`] if `None`) whether they come from a gzip stream
    /// (a bomb) or as they are (a file of any size, `/dev/urandom`): a regular file larger
    /// than the cap is refused before it is read, a stream as soon as it passes it. Memory is
    /// taken with `try_reserve`, so an input larger than the machine can hold is an error
    /// naming it, not an abort. Every reader that holds an input whole goes through here, so
    /// the cap means the same for all of them.
    pub fn read_capped(&mut self, max_decompressed: Option<u64>) -> Result<Vec<u8>> {
        let cap = max_decompressed.unwrap_or(DEFAULT_MAX_DECOMPRESSED);
        let known_len = self.file_len.filter(|_| !self.gzipped);
        if let Some(len) = known_len
            && len > cap
        {
            return Err(self.too_large(cap, Some(len)));
        }
        // one allocation for a file, doubling for a stream; never past cap + 1 bytes (the
        // one byte that proves the input is larger than the cap)
        let limit = usize::try_from(cap.saturating_add(1)).unwrap_or(usize::MAX);
        let mut bytes: Vec<u8> = Vec::new();
        let first = known_len.map_or(FIRST_ALLOCATION, |len| len as usize + 1);
        loop {
            let chunk = match self.reader.fill_buf() {
                Ok(chunk) => chunk,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(self.read_error(e)),
            };
            if chunk.is_empty() {
                break;
            }
            let take = chunk.len().min(limit - bytes.len());
            if bytes.capacity() - bytes.len() < take {
                let want = (bytes.len() + take)
                    .max(bytes.capacity().saturating_mul(2))
                    .max(first)
                    .min(limit);
                if bytes.try_reserve_exact(want - bytes.len()).is_err() {
                    return Err(Error::input(
                        &self.path,
                        Position::Offset(bytes.len() as u64),
                        format!(
                            "out of memory: {} bytes of the input are read and {want} bytes \
                             could not be allocated to hold it whole (the machine's memory or a \
                             limit on it is smaller than the input)",
                            bytes.len()
                        ),
                    ));
                }
            }
            let chunk = &self
                .reader
                .fill_buf()
                .map_err(|e| Error::io(&self.path, e))?[..take];
            bytes.extend_from_slice(chunk);
            self.reader.consume(take);
            if bytes.len() as u64 > cap {
                return Err(self.too_large(cap, None));
            }
        }
        Ok(bytes)
    }

    /// The refusal of an input larger than the cap; `file_len` when its length was known.
    fn too_large(&self, cap: u64, file_len: Option<u64>) -> Error {
        let message = match file_len {
            _ if self.gzipped => format!(
                "gzip stream decompresses to more than {cap} bytes (a gzip bomb?); if the \
                 profile is genuine, raise the cap with --max-decompressed BYTES"
            ),
            Some(len) => format!(
                "the file has {len} bytes, more than the {cap}-byte cap on an input held in \
                 memory whole (pprof, and perf.data from a pipe); if the profile is genuine, \
                 raise the cap with --max-decompressed BYTES"
            ),
            None => format!(
                "the input has more than {cap} bytes, the cap on an input held in memory whole \
                 (pprof, and perf.data from a pipe); if the profile is genuine, raise the cap \
                 with --max-decompressed BYTES"
            ),
        };
        Error::input(&self.path, Position::Whole, message)
    }

    /// An I/O error while reading, with the file name; a broken gzip stream says so, and
    /// where.
    pub fn read_error(&self, e: std::io::Error) -> Error {
        match &self.gzip_position {
            Some((consumed, produced)) => Error::input(
                &self.path,
                Position::Offset(consumed.load(Ordering::Relaxed)),
                format!(
                    "gzip stream is corrupt or truncated (the offset is in the compressed file, \
                     after {} decompressed bytes): {e}",
                    produced.load(Ordering::Relaxed)
                ),
            ),
            None => Error::io(&self.path, e),
        }
    }
}

/// A reader that refuses to read on once its input's budget is spent.
struct Budgeted<R> {
    inner: R,
    budget: Arc<crate::model::budget::Budget>,
}

impl<R: Read> Read for Budgeted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.budget.check()?;
        self.inner.read(buf)
    }
}

/// A reader that counts the bytes it delivers (read, or consumed through `BufRead`) into a
/// counter shared with whoever reports errors.
struct Counted<R> {
    inner: R,
    count: Arc<AtomicU64>,
}

impl<R> Counted<R> {
    fn new(inner: R, count: Arc<AtomicU64>) -> Counted<R> {
        Counted { inner, count }
    }
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Counted<R> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        self.inner.fill_buf()
    }

    fn consume(&mut self, amount: usize) {
        self.inner.consume(amount);
        self.count.fetch_add(amount as u64, Ordering::Relaxed);
    }
}

/// Text with a byte-order mark, as inferno and speedscope read it (issue 12): a UTF-8 mark is
/// dropped, UTF-16 (either order) is decoded to UTF-8 on the fly; anything else is passed
/// through untouched. No binary format starts with these bytes (perf.data is `PERFILE2`,
/// gzip `1f 8b`, pprof a protobuf tag).
fn decode_text(mut reader: Box<dyn BufRead + Send>) -> std::io::Result<Box<dyn BufRead + Send>> {
    let head = reader.fill_buf()?;
    if head.starts_with(UTF8_BOM) {
        reader.consume(UTF8_BOM.len());
        return Ok(reader);
    }
    let little_endian = if head.starts_with(UTF16_LE_BOM) {
        true
    } else if head.starts_with(UTF16_BE_BOM) {
        false
    } else {
        return Ok(reader);
    };
    reader.consume(2);
    Ok(Box::new(BufReader::with_capacity(
        READ_BUFFER,
        Utf16Decoder {
            inner: reader,
            little_endian,
            odd_byte: None,
            high_surrogate: None,
            out: Vec::new(),
            pos: 0,
        },
    )))
}

/// UTF-16 to UTF-8 as a reader; unpaired surrogates and a dangling odd byte become U+FFFD
/// (the readers then count the line as lossy, like any other invalid text).
struct Utf16Decoder<R> {
    inner: R,
    little_endian: bool,
    /// The first byte of a code unit split across two reads.
    odd_byte: Option<u8>,
    /// A high surrogate at the end of one read, paired with the next read's first unit.
    high_surrogate: Option<u16>,
    /// Decoded UTF-8 not yet returned, from `pos`.
    out: Vec<u8>,
    pos: usize,
}

impl<R: BufRead> Read for Utf16Decoder<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while self.pos == self.out.len() {
            self.out.clear();
            self.pos = 0;
            let chunk = self.inner.fill_buf()?;
            if chunk.is_empty() {
                let dangling = usize::from(self.odd_byte.take().is_some())
                    + usize::from(self.high_surrogate.take().is_some());
                if dangling == 0 {
                    return Ok(0);
                }
                self.out.extend("\u{fffd}".repeat(dangling).bytes());
                continue;
            }
            let mut units: Vec<u16> = Vec::with_capacity(chunk.len() / 2 + 2);
            units.extend(self.high_surrogate.take());
            let mut bytes = chunk.iter().copied();
            let mut first = self.odd_byte.take();
            while let Some(a) = first.take().or_else(|| bytes.next()) {
                let Some(b) = bytes.next() else {
                    self.odd_byte = Some(a);
                    break;
                };
                units.push(if self.little_endian {
                    u16::from_le_bytes([a, b])
                } else {
                    u16::from_be_bytes([a, b])
                });
            }
            let used = chunk.len();
            self.inner.consume(used);
            if units.last().is_some_and(|u| (0xd800..0xdc00).contains(u)) {
                self.high_surrogate = units.pop();
            }
            for c in std::char::decode_utf16(units) {
                let c = c.unwrap_or(char::REPLACEMENT_CHARACTER);
                let mut utf8 = [0u8; 4];
                self.out
                    .extend_from_slice(c.encode_utf8(&mut utf8).as_bytes());
            }
        }
        let n = buf.len().min(self.out.len() - self.pos);
        buf[..n].copy_from_slice(&self.out[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

#[cfg(test)]
mod bom_tests {
    use super::*;

    fn decoded(bytes: Vec<u8>) -> String {
        let reader: Box<dyn BufRead + Send> =
            Box::new(BufReader::with_capacity(3, std::io::Cursor::new(bytes)));
        let mut text = String::new();
        decode_text(reader)
            .unwrap()
            .read_to_string(&mut text)
            .unwrap();
        text
    }

    #[test]
    fn utf16_with_a_bom_is_decoded_across_short_reads() {
        // a 3-byte buffer splits code units and the surrogate pair of U+1F600
        let text = "a;b\u{e9};\u{1f600} 12\n";
        let mut le = vec![0xff, 0xfe];
        le.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
        assert_eq!(decoded(le), text);
        let mut be = vec![0xfe, 0xff];
        be.extend(text.encode_utf16().flat_map(u16::to_be_bytes));
        assert_eq!(decoded(be), text);
    }

    #[test]
    fn a_utf8_bom_is_dropped_and_other_text_kept() {
        assert_eq!(decoded(b"\xef\xbb\xbfa;b 1\n".to_vec()), "a;b 1\n");
        assert_eq!(decoded(b"a;b 1\n".to_vec()), "a;b 1\n");
        // a lone high surrogate and an odd trailing byte
        assert_eq!(
            decoded(vec![0xff, 0xfe, b'a', 0, 0x00, 0xd8, 7]),
            "a\u{fffd}\u{fffd}"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_buffer_fits_the_input_between_the_peek_and_a_mebibyte() {
        assert_eq!(read_buffer_for(None), READ_BUFFER);
        // `/proc` files say 0 bytes: detection still sees its whole peek
        assert_eq!(read_buffer_for(Some(0)), DETECT_PEEK);
        assert_eq!(read_buffer_for(Some(100_000)), 100_001);
        assert_eq!(read_buffer_for(Some(5 << 30)), READ_BUFFER);
        assert_eq!(read_buffer_for(Some(u64::MAX)), READ_BUFFER);
    }

    #[test]
    fn a_file_the_file_system_calls_empty_is_read_whole() {
        // /proc/self/status has content but a length of 0
        let mut source = Source::open(Path::new("/proc/self/status")).unwrap();
        assert_eq!(source.len_hint(), Some(0));
        let bytes = source.read_capped(None).unwrap();
        assert!(
            bytes.starts_with(b"Name:"),
            "{:?}",
            &bytes[..bytes.len().min(20)]
        );
    }
}
