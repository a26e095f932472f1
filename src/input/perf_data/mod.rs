//! perf.data, read with `linux-perf-data` (file and pipe mode, zstd `-z` records) and
//! symbolised by whose itself.
//!
//! The record loop keeps, per process, the memory map over time (MMAP/MMAP2, FORK inherits,
//! exec replaces) and the thread names (COMM); each SAMPLE's callchain is turned into
//! (module, address) pairs against the map *at that moment*: `PERF_CONTEXT_*` markers switch
//! between kernel and user and are never frames, and every address after the first of a
//! context is a return address, looked up at `address - 1` so a call at the very end of a
//! function is not blamed on the next one. Samples fold into rows of distinct address stacks;
//! after the whole file is read, these go to symbolisation as a
//! [`symbolize::AddressProfile`], which resolves each distinct (module, address) once and
//! turns the rows into frames ([`symbolize::to_profile`]).
//!
//! Sample types: one per event, weighted by the sample period (so `cpu-clock` and
//! `task-clock` weigh nanoseconds, `cycles` cycles), then `samples`; the first event is the
//! default metric. LOST and LOST_SAMPLES records are counted and reported, THROTTLE records
//! counted, and the call-graph mode is read from the event attributes; all go to the
//! profile's [`crate::model::Recording`] for the recording-quality figures. What
//! zstd-compressed records inflate to is capped by `--max-decompressed` before the library
//! inflates them (`inflate`).
//!
//! `header` checks what the library would trust before it reads anything; `decode` runs on
//! its own thread, turning records into owned batches; `fold` keeps the maps (`maps`),
//! caches (`cache`) and folded rows on this thread and hands them over; `early` loads the
//! sampled modules' files meanwhile, at idle priority.

mod cache;
mod decode;
mod early;
mod fault;
mod fold;
mod header;
mod inflate;
mod mapped;
mod maps;

use crate::model::{CallGraph, InlineChoice, Notice, Profile, SampleType, ThreadId};
use decode::{
    Batch, ChainBytes, ChainHash, Event, LibraryRecords, Records, SampleEvent, UserCopy, decode_all,
};
use fold::Reader;
use header::{Counting, CutProbe, Refusal, check_header};
use inflate::{InflationCheck, PERF_RECORD_COMPRESSED, PERF_RECORD_COMPRESSED2};

use super::filter::{SampleFilter, TimeSlice};
use super::options::{Probe, ReadOptions};
use super::progress::Progress;
use super::source::Source;
use crate::error::{Error, Position, Result};
use crate::model::perf::is_kernel_address;
use crate::model::perf::{event_type_name, event_unit};
use crate::symbolize::{self, ModuleKind};
use linux_perf_data::linux_perf_event_reader::{
    CpuMode, EventRecord, Mmap2FileId, RecordType, SampleFormat,
};
use linux_perf_data::{DsoKey, PerfFileReader, PerfFileRecord, UserRecordType};
use rustc_hash::FxHashMap;
use std::io::{Cursor, Read, Seek, SeekFrom};
use std::path::Path;

const PERF_CONTEXT_MAX: u64 = -4095i64 as u64;
const PERF_CONTEXT_KERNEL: u64 = -128i64 as u64;
const PERF_CONTEXT_USER: u64 = -512i64 as u64;
const PERF_CONTEXT_GUEST_KERNEL: u64 = -2176i64 as u64;
const PERF_CONTEXT_GUEST_USER: u64 = -2560i64 as u64;
const PERF_CONTEXT_HV: u64 = -32i64 as u64;
const PERF_RECORD_MISC_MMAP_BUILD_ID: u16 = 1 << 14;

/// Reads a perf.data file (or pipe-mode stream) into a symbolised profile.
/// perf.data starts with the magic `PERFILE2` (a head inside it is a file cut there).
pub fn probe(head: &[u8]) -> Probe {
    Probe::of_magic(head, b"PERFILE2")
}

pub fn read(mut source: Source, options: &ReadOptions) -> Result<Profile> {
    let path = source.path.clone();
    let regular = !source.gzipped && path != Path::new("<stdin>") && path.is_file();
    if regular {
        // the file's pages are read in place, and given back as the records are consumed.
        // Mapping is safe from `perf record` itself: it writes the data size into the header
        // last (an unfinished file is refused) and moves an old file aside before writing a
        // new one, so the pages mapped stay the file's (see `map_file` on files rewritten in
        // place)
        let map = crate::symbolize::locate::map_file(&path).map_err(|e| Error::io(&path, e))?;
        let _ = map.advise(memmap2::Advice::Sequential);
        let release = ReleaseBehind::new(&map);
        return parse(&map, Some(&release), &path, options);
    }
    // stdin or gzip: the bytes are held in memory (file mode needs to seek)
    let bytes = source.read_capped(options.max_decompressed)?;
    parse(&bytes, None, &path, options)
}

/// Gives the pages of a file's map back once the records in them are consumed: mapped pages
/// count in the process's memory until unmapped, and the records are read once, front to
/// back (the page cache keeps them for the next run).
struct ReleaseBehind<'m> {
    map: &'m memmap2::Mmap,
    /// Pages before this offset are given back.
    released: std::sync::atomic::AtomicUsize,
}

/// Given back in steps of this many bytes: each step is one `madvise` call.
const RELEASE_STEP: usize = 8 << 20;

impl<'m> ReleaseBehind<'m> {
    fn new(map: &'m memmap2::Mmap) -> ReleaseBehind<'m> {
        ReleaseBehind {
            map,
            released: std::sync::atomic::AtomicUsize::new(0),
        }
    }

    /// Nothing before `offset` is read again.
    fn consumed(&self, offset: usize) {
        use std::sync::atomic::Ordering::Relaxed;
        let from = self.released.load(Relaxed);
        let to = offset.min(self.map.len()) / RELEASE_STEP * RELEASE_STEP;
        if to <= from {
            return;
        }
        // SAFETY: MADV_DONTNEED on a read-only shared file mapping drops this process's page
        // table entries only; a later read of the range faults the file's pages in again, so
        // no data is lost or changed (it would be for a private or anonymous mapping)
        let _ = unsafe {
            self.map
                .unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, from, to - from)
        };
        self.released.store(to, Relaxed);
    }
}

/// Reads the records of a file- or pipe-mode recording held in `bytes`; a pipe-mode stream
/// that ends inside a record is read up to there, with a warning (a file's cut is an error
/// of `check_header`).
fn parse(
    bytes: &[u8],
    release: Option<&ReleaseBehind<'_>>,
    path: &Path,
    options: &ReadOptions,
) -> Result<Profile> {
    let len = bytes.len() as u64;
    let layout = check_header(&mut Cursor::new(bytes), len, path)?;
    let unreadable = |e| {
        Error::input(
            path,
            Position::Whole,
            format!("not readable as perf.data: {e}"),
        )
    };
    if layout.in_place {
        let file = PerfFileReader::parse_file(Cursor::new(bytes))
            .map_err(unreadable)?
            .perf_file;
        let (start, end) = (layout.records.start as usize, layout.records.end as usize);
        let records = mapped::MappedRecords::new(bytes, start, end, &file);
        let records = |_| Records::InPlace(Box::new(records));
        return read_records(file, records, bytes, release, path, options);
    }
    // compressed records, simpleperf's layout or pipe mode: the library's iterator, over a
    // reader that caps what compressed records inflate to (and, for a pipe, sees a cut)
    let cap = options
        .max_decompressed
        .unwrap_or(super::source::DEFAULT_MAX_DECOMPRESSED);
    let counting =
        Counting::new(Cursor::new(bytes), Some(len), layout.records.start).cap_inflation(cap);
    let refusal = counting.refusal();
    let probe = layout.pipe.then(CutProbe::default);
    let parsed = match &probe {
        Some(probe) => PerfFileReader::parse_pipe(counting.watch_for_cut(probe.clone())),
        None => PerfFileReader::parse_file(counting),
    };
    let PerfFileReader {
        perf_file,
        record_iter,
    } = parsed.map_err(|e| refused_or(&refusal, path, unreadable(e)))?;
    let records = |file| {
        Records::Library(Box::new(LibraryRecords {
            file,
            iter: record_iter,
            refusal,
        }))
    };
    let mut profile = read_records(perf_file, records, &[], None, path, options)?;
    let cut = probe.and_then(|p| *p.lock().unwrap_or_else(|e| e.into_inner()));
    if let Some(cut) = cut {
        profile.meta.warnings.push(Notice::StreamCut {
            path: path.to_path_buf(),
            record_at: cut.record_at,
            record_size: cut.record_size,
            stream_len: cut.stream_len,
        });
    }
    Ok(profile)
}

/// The error for a failed read that [`Counting`] refused, with its reason and offset; else
/// `otherwise`.
fn refused_or(refusal: &Refusal, path: &Path, otherwise: Error) -> Error {
    match refusal.take_refused() {
        Some((record_at, reason)) => Error::input(
            path,
            Position::Offset(record_at),
            format!("refused the compressed record here: {reason}"),
        ),
        None => otherwise,
    }
}

/// Reads the records `records` makes of the recording (it is handed the parsed file once its
/// metadata are read) into a profile.
fn read_records<'b>(
    perf_file: linux_perf_data::PerfFile,
    records: impl FnOnce(linux_perf_data::PerfFile) -> Records<'b> + Send,
    source: &'b [u8],
    release: Option<&ReleaseBehind<'_>>,
    path: &Path,
    options: &ReadOptions,
) -> Result<Profile> {
    let attrs = perf_file.event_attributes().to_vec();
    // the recorded command (`perf record -g -- java ... com.acme.Main`): evidence of whose
    // program this is (issue 53)
    let command = perf_file
        .cmdline()
        .ok()
        .flatten()
        .map(|words| words.join(" "));
    let mode = call_graph(&attrs);
    let (options, inline_note) = with_inline_decided(options, mode);
    let options = &options;
    let build_ids = file_build_ids(&perf_file);
    // the kernel's symbols (parsing /proc/kallsyms takes tens of milliseconds) are the first
    // loaded while the records are read, when the recording can hold kernel samples
    let kernel = samples_kernel(&attrs).then(|| ModuleKind::Kernel {
        build_id: build_ids.get(&DsoKey::Kernel).cloned(),
        text: None,
    });
    let (mut reader, sample_types) = ReaderSetup {
        perf_file: &perf_file,
        attrs: &attrs,
        build_ids,
        mode,
        path,
        source,
        options,
    }
    .reader()?;
    // Decoding the records (the library's parsing and time ordering) runs on its own thread
    // and hands owned batches to this one, which keeps all the state and unwinds: two cores,
    // two halves; a third thread loads the sampled modules' symbols in the time they leave
    // idle (`early`).
    let little = matches!(
        perf_file.endian(),
        linux_perf_data::Endianness::LittleEndian
    );
    let (tx, rx) = std::sync::mpsc::sync_channel::<Result<Batch>>(4);
    // emptied batches go back, so their memory is reused instead of freed across threads
    let (back_tx, back_rx) = std::sync::mpsc::channel::<Batch>();
    let ahead = symbolize::LoadedAhead::default();
    let mut profile = std::thread::scope(|scope| -> Result<Profile> {
        let started = std::time::Instant::now();
        let decoding = std::thread::Builder::new()
            .name("whose-decode".into())
            .spawn_scoped(scope, move || {
                decode_all(records(perf_file), source, path, tx, back_rx);
                thread_cpu()
            })
            .map_err(|e| Error::io(path, e))?;
        if let Some(loads) = early::spawn(scope, &options.symbols, &ahead) {
            if let Some(kind) = kernel {
                loads.request(kind);
            }
            reader.early = Some(loads);
        }
        let folded = fold_batches(&mut reader, rx, &back_tx, release, path, little);
        if std::env::var_os("WHOSE_TIMINGS").is_some() {
            let decoding = decoding.join().unwrap_or_default();
            print_timings(started, decoding);
        }
        // the loader finishes the module in hand while symbolisation starts on the others
        ahead.close();
        reader.early = None;
        folded?;
        reader.finish(sample_types, options, &ahead)
    })?;
    profile.meta.notes.push(inline_note);
    profile.meta.command = command;
    Ok(profile)
}

/// `WHOSE_TIMINGS`: the records phase since `started`, and the CPU time of the folding thread
/// (this one) and of the decoding thread (`decoding`).
fn print_timings(started: std::time::Instant, decoding: std::time::Duration) {
    eprintln!(
        "whose: timings: records {:.3} s (CPU: folding thread {:.3} s, decoding thread {:.3} \
         s)",
        started.elapsed().as_secs_f64(),
        thread_cpu().as_secs_f64(),
        decoding.as_secs_f64()
    );
}

/// The file's BUILD_ID section: module → build id. perf writes empty ids in some modes
/// (`-z`): no id, not an id that never matches.
fn file_build_ids(perf_file: &linux_perf_data::PerfFile) -> FxHashMap<DsoKey, Vec<u8>> {
    perf_file
        .build_ids()
        .map(|m| {
            m.into_iter()
                .filter(|(_, v)| !v.build_id.is_empty())
                .map(|(k, v)| (k, v.build_id))
                .collect()
        })
        .unwrap_or_default()
}

/// What the folding thread's [`Reader`] is made from.
struct ReaderSetup<'a, 'p> {
    perf_file: &'a linux_perf_data::PerfFile,
    attrs: &'a [linux_perf_data::AttributeDescription],
    build_ids: FxHashMap<DsoKey, Vec<u8>>,
    mode: CallGraph,
    path: &'p Path,
    source: &'p [u8],
    options: &'a ReadOptions,
}

impl<'p> ReaderSetup<'_, 'p> {
    /// The reader, with one sample type per event then `samples` (returned too, for
    /// [`Reader::finish`]), the sample filter made absolute, and for `--call-graph dwarf`
    /// the unwinder of each sample's stack copy.
    fn reader(self) -> Result<(Reader<'p>, Vec<SampleType>)> {
        let unwind = crate::unwind::for_recording(self.attrs, &self.options.symbols)
            .map(crate::unwind::perf::PerfUnwind::new);
        let (sample_types, attr_type) = sample_types(self.attrs);
        let samples_type = sample_types.len() - 1;
        let mut reader = Reader::new(
            self.path,
            self.source,
            self.build_ids,
            attr_type,
            sample_types.len(),
            samples_type,
        );
        reader.filter = absolute_filter(&self.options.filter, self.perf_file, self.path)?;
        if self.options.timeline {
            reader.keep_timeline();
        }
        reader.unwind = unwind;
        reader.call_graph = Some(self.mode);
        Ok((reader, sample_types))
    }
}

/// The CPU time the calling thread has used (zero where it cannot be told), for
/// `WHOSE_TIMINGS`: which of the two threads bounds the records phase.
fn thread_cpu() -> std::time::Duration {
    #[cfg(target_os = "linux")]
    {
        let mut t = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `t` is a valid timespec for the call to fill
        if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) } == 0 {
            return std::time::Duration::new(t.tv_sec as u64, t.tv_nsec as u32);
        }
    }
    std::time::Duration::ZERO
}

/// The folding thread's loop: every batch the decoding thread sends, applied in order; each
/// emptied batch goes back for reuse.
fn fold_batches(
    reader: &mut Reader<'_>,
    batches: std::sync::mpsc::Receiver<Result<Batch>>,
    back: &std::sync::mpsc::Sender<Batch>,
    release: Option<&ReleaseBehind<'_>>,
    path: &Path,
    little: bool,
) -> Result<()> {
    // `--each`'s share of this input (`model::budget`): perf.data is read by the decoding
    // thread, not through a `Source`, so the folding loop asks between batches
    let budget = crate::model::budget::current();
    for batch in batches {
        if let Some(b) = &budget {
            b.check().map_err(|e| Error::io(path, e))?;
        }
        let mut batch = batch?;
        reader.apply_batch(&batch, little);
        // the source's pages this batch's callchains were read from are not read again
        if let (Some(release), Some(offset)) = (release, batch.handed_out) {
            release.consumed(offset);
        }
        batch.events.clear();
        batch.chains.clear();
        batch.stacks.clear();
        let _ = back.send(batch);
    }
    Ok(())
}

/// The filter with a percent `--time` slice made absolute over the recording's first and last
/// sample times (its SAMPLE_TIME header, as `perf report` reads them); refused, as perf refuses
/// it, when the recording has no such header.
fn absolute_filter(
    filter: &SampleFilter,
    perf_file: &linux_perf_data::PerfFile,
    path: &Path,
) -> Result<SampleFilter> {
    let Some(time @ TimeSlice::Percent { .. }) = &filter.time else {
        return Ok(filter.clone());
    };
    let range = perf_file
        .sample_time_range()
        .ok()
        .flatten()
        .filter(|r| r.first_sample_time != 0 || r.last_sample_time != 0);
    let Some(range) = range else {
        return Err(Error::input(
            path,
            Position::Whole,
            format!(
                "--time {time}: a percent slice needs the times of the first and last sample, \
                 and this recording has no SAMPLE_TIME header; give START,END in seconds"
            ),
        ));
    };
    Ok(SampleFilter {
        time: Some(time.resolve(range.first_sample_time, range.last_sample_time)),
        ..filter.clone()
    })
}

/// The options with `--inline`/`--no-inline` decided for this recording's call-graph mode
/// ([`symbolize::inline_for`]), and the header note that says which it was and why.
fn with_inline_decided(options: &ReadOptions, mode: CallGraph) -> (ReadOptions, Notice) {
    let asked = options.symbols.inline;
    let inline = symbolize::inline_for(asked, mode);
    let why = match asked {
        Some(_) => InlineChoice::Asked,
        None => InlineChoice::Default(mode),
    };
    let mut decided = options.clone();
    decided.symbols.inline = Some(inline);
    (decided, Notice::InlineFrames { on: inline, why })
}

/// How the call chains were recorded: a stack copy with user registers is `--call-graph
/// dwarf`, a branch call stack `lbr`, a callchain alone frame pointers; the first event that
/// records more than the address decides (perf applies one mode to all).
fn call_graph(attrs: &[linux_perf_data::AttributeDescription]) -> CallGraph {
    use linux_perf_data::linux_perf_event_reader::BranchSampleFormat;
    let mode = |a: &linux_perf_data::AttributeDescription| {
        let format = a.attr.sample_format;
        if format.contains(SampleFormat::STACK_USER) && format.contains(SampleFormat::REGS_USER) {
            CallGraph::Dwarf {
                copy_size: u64::from(a.attr.sample_stack_user),
            }
        } else if format.contains(SampleFormat::BRANCH_STACK)
            && a.attr
                .branch_sample_format
                .contains(BranchSampleFormat::CALL_STACK)
        {
            CallGraph::Lbr
        } else if format.contains(SampleFormat::CALLCHAIN) {
            CallGraph::FramePointers
        } else {
            CallGraph::None
        }
    };
    attrs
        .iter()
        .map(mode)
        .find(|m| *m != CallGraph::None)
        .unwrap_or(CallGraph::None)
}

/// Whether some event samples the kernel (`exclude_kernel` unset).
fn samples_kernel(attrs: &[linux_perf_data::AttributeDescription]) -> bool {
    use linux_perf_data::linux_perf_event_reader::AttrFlags;
    attrs
        .iter()
        .any(|a| !a.attr.flags.contains(AttrFlags::EXCLUDE_KERNEL))
}

/// One sample type per distinct event name (weighted by period), then `samples` (last);
/// and each attribute's sample type.
fn sample_types(attrs: &[linux_perf_data::AttributeDescription]) -> (Vec<SampleType>, Vec<usize>) {
    let mut names: Vec<String> = Vec::new();
    let mut attr_type = Vec::new();
    for (i, a) in attrs.iter().enumerate() {
        let name = a
            .name()
            .map(|n| event_type_name(n).to_string())
            .unwrap_or_else(|| format!("event{i}"));
        let index = match names.iter().position(|t| *t == name) {
            Some(t) => t,
            None => {
                names.push(name);
                names.len() - 1
            }
        };
        attr_type.push(index);
    }
    let mut types: Vec<SampleType> = names
        .iter()
        .map(|n| SampleType::new(n.clone(), event_unit(n)))
        .collect();
    types.push(SampleType::samples());
    (types, attr_type)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 28: the note said "as perf report shows none call graphs"; issue 29 made inline
    /// frames the default with any call chains.
    #[test]
    fn the_inline_note_reads_for_every_call_graph_mode() {
        let note = |mode| with_inline_decided(&ReadOptions::default(), mode).1;
        let default = |on, mode| Notice::InlineFrames {
            on,
            why: InlineChoice::Default(mode),
        };
        assert_eq!(note(CallGraph::None), default(false, CallGraph::None));
        let fp = CallGraph::FramePointers;
        assert_eq!(note(fp), default(true, fp));
        let asked = ReadOptions {
            symbols: crate::symbolize::SymbolOptions {
                inline: Some(false),
                ..Default::default()
            },
            ..Default::default()
        };
        let (_, said) = with_inline_decided(&asked, fp);
        let off = Notice::InlineFrames {
            on: false,
            why: InlineChoice::Asked,
        };
        assert_eq!(said, off);
    }
}
