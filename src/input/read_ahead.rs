//! A file reader whose sequential part is read by a thread of its own.
//!
//! Reading a large perf.data from the page cache is a kernel copy per byte: on a DWARF
//! recording (4 KiB of stack per sample) that copy alone is a third of the decoding thread's
//! time. From `stream_from` on — where the records start, which are read front to back —
//! a helper thread reads fixed-size chunks ahead with positional reads and hands them over
//! a bounded channel, so the kernel copy runs beside the decoding instead of in it.
//! Everything before (headers, feature sections, read with seeks) is read directly, and a
//! seek while streaming falls back to direct reads, so the reader is correct for any access
//! pattern; it is only fast for the one that matters.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::fs::FileExt;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};

/// Chunk size: large enough that the syscalls are few, small enough to stay in L2.
const CHUNK: usize = 256 << 10;
/// Chunks in flight: the thread stays this far ahead.
const AHEAD: usize = 4;

pub struct ReadAhead {
    file: File,
    pos: u64,
    stream_from: u64,
    stream: Option<Stream>,
}

/// The prefetching thread's output as the reader consumes it.
struct Stream {
    chunks: Receiver<std::io::Result<Vec<u8>>>,
    /// Emptied chunks go back to the thread, so their memory is reused.
    recycle: SyncSender<Vec<u8>>,
    current: Vec<u8>,
    at: usize,
    ended: bool,
}

impl ReadAhead {
    /// `stream_from`: the offset from which the file is read sequentially to its end.
    pub fn new(file: File, stream_from: u64) -> ReadAhead {
        ReadAhead {
            file,
            pos: 0,
            stream_from,
            stream: None,
        }
    }

    fn start_stream(&mut self) -> std::io::Result<()> {
        let file = self.file.try_clone()?;
        let (tx, chunks) = sync_channel(AHEAD);
        let (recycle, back) = sync_channel(AHEAD + 2);
        let from = self.pos;
        std::thread::Builder::new()
            .name("whose-read-ahead".into())
            .spawn(move || prefetch(file, from, tx, back))?;
        self.stream = Some(Stream {
            chunks,
            recycle,
            current: Vec::new(),
            at: 0,
            ended: false,
        });
        Ok(())
    }
}

/// The helper thread: chunks from `at` to the end of the file, until the reader is gone.
fn prefetch(
    file: File,
    mut at: u64,
    tx: SyncSender<std::io::Result<Vec<u8>>>,
    back: Receiver<Vec<u8>>,
) {
    loop {
        let mut chunk = back.try_recv().unwrap_or_default();
        chunk.resize(CHUNK, 0);
        let n = match file.read_at(&mut chunk, at) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                let _ = tx.send(Err(e));
                return;
            }
        };
        chunk.truncate(n);
        at += n as u64;
        // an empty chunk is the end of the file
        if tx.send(Ok(chunk)).is_err() || n == 0 {
            return;
        }
    }
}

impl Read for ReadAhead {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.stream.is_none() && self.pos == self.stream_from {
            self.start_stream()?;
        }
        let Some(stream) = self.stream.as_mut() else {
            let n = self.file.read(buf)?;
            self.pos += n as u64;
            return Ok(n);
        };
        while stream.at == stream.current.len() {
            if stream.ended {
                return Ok(0);
            }
            let next = match stream.chunks.recv() {
                Ok(chunk) => chunk?,
                Err(_) => {
                    return Err(std::io::Error::other("the read-ahead thread stopped"));
                }
            };
            stream.ended = next.is_empty();
            let used = std::mem::replace(&mut stream.current, next);
            let _ = stream.recycle.try_send(used);
            stream.at = 0;
        }
        let n = buf.len().min(stream.current.len() - stream.at);
        buf[..n].copy_from_slice(&stream.current[stream.at..stream.at + n]);
        stream.at += n;
        self.pos += n as u64;
        Ok(n)
    }
}

impl Seek for ReadAhead {
    fn seek(&mut self, to: SeekFrom) -> std::io::Result<u64> {
        let target = match to {
            SeekFrom::Start(n) => Some(n),
            SeekFrom::Current(d) => self.pos.checked_add_signed(d),
            SeekFrom::End(_) => None,
        };
        if target == Some(self.pos) {
            return Ok(self.pos);
        }
        // leaving the stream: its thread stops when it next sends
        self.stream = None;
        self.pos = match target {
            Some(n) => self.file.seek(SeekFrom::Start(n))?,
            None => self.file.seek(to)?,
        };
        Ok(self.pos)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn file_of(len: usize) -> (tempfile::NamedTempFile, Vec<u8>) {
        let bytes: Vec<u8> = (0..len).map(|i| (i * 7 + i / 251) as u8).collect();
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(&bytes).unwrap();
        (f, bytes)
    }

    #[test]
    fn reads_the_same_bytes_as_the_file_across_chunks() {
        let (f, bytes) = file_of(3 * CHUNK + 12345);
        let mut r = ReadAhead::new(File::open(f.path()).unwrap(), 100);
        let mut head = [0u8; 100];
        r.read_exact(&mut head).unwrap();
        assert_eq!(head[..], bytes[..100]);
        // odd-sized reads cross chunk boundaries
        let mut out = Vec::new();
        let mut buf = vec![0u8; 4099];
        loop {
            let n = r.read(&mut buf).unwrap();
            if n == 0 {
                break;
            }
            out.extend_from_slice(&buf[..n]);
        }
        assert_eq!(out, bytes[100..]);
    }

    #[test]
    fn seeks_before_and_during_the_stream_read_the_right_bytes() {
        let (f, bytes) = file_of(2 * CHUNK + 77);
        let mut r = ReadAhead::new(File::open(f.path()).unwrap(), 64);
        let mut small = [0u8; 16];
        r.seek(SeekFrom::Start(CHUNK as u64)).unwrap();
        r.read_exact(&mut small).unwrap();
        assert_eq!(small[..], bytes[CHUNK..CHUNK + 16]);
        r.seek(SeekFrom::Start(64)).unwrap();
        r.read_exact(&mut small).unwrap();
        assert_eq!(small[..], bytes[64..80]);
        assert!(r.stream.is_some());
        r.seek(SeekFrom::Current(-8)).unwrap();
        r.read_exact(&mut small).unwrap();
        assert_eq!(small[..], bytes[72..88]);
        assert!(r.stream.is_none());
        let mut rest = Vec::new();
        r.read_to_end(&mut rest).unwrap();
        assert_eq!(rest, bytes[88..]);
    }

    #[test]
    fn an_empty_stream_ends_at_once() {
        let (f, _) = file_of(10);
        let mut r = ReadAhead::new(File::open(f.path()).unwrap(), 10);
        let mut tail = vec![0u8; 10];
        r.read_exact(&mut tail).unwrap();
        let mut buf = [0u8; 8];
        assert_eq!(r.read(&mut buf).unwrap(), 0);
        assert_eq!(r.read(&mut buf).unwrap(), 0);
    }
}
