//! File-mode records read in place from the bytes in memory — the file's map, or the bytes
//! of a gzipped file or stdin — in exactly the order `linux-perf-data`'s iterator gives them.
//!
//! The library's iterator reads each record into a buffer of its own and keeps the buffers
//! in its time-ordering queue: on big.perf.data (128 MB, 537 k samples) the kernel's copy
//! into the read-ahead chunks, the copy into record buffers and the queue's moves were half
//! of the decoding thread's time. Here a record is an offset into the bytes until it is
//! handed out, and the queue holds (time, offset) keys. The attribute lookup and the time
//! come from the library's own functions, and the queue keeps the library's round rule
//! (`Sorter`), so the order is the same record for record — a test walks both over every
//! perf.data fixture.
//!
//! Used for file-mode recordings without compressed records (`-z`) or simpleperf's layout;
//! those, and pipe mode, go through the library's iterator.

use super::fault::ReadFault;
use crate::input::progress::Progress;
use linux_perf_data::linux_perf_event_reader::{
    AttrFlags, RawData, RawEventRecord, RecordIdParseInfo, RecordParseInfo, RecordType,
    get_record_id, get_record_identifier, get_record_timestamp,
};
use linux_perf_data::{Endianness, PerfFile, PerfFileRecord, RawUserRecord, UserRecordType};
use rustc_hash::FxHashMap;

/// `PERF_RECORD_FINISHED_ROUND`: everything before the previous round's end may be emitted.
const FINISHED_ROUND: u32 = 68;
const AUXTRACE: u32 = 71;
const COMPRESSED: u32 = 81;
const COMPRESSED2: u32 = 83;
const HEADER_SIZE: usize = 8;

/// How a record's attribute is found (the library's `IdParseInfos`).
enum AttrOf {
    OnlyOne,
    /// Every attribute puts the id in the same place.
    Same(RecordIdParseInfo),
    /// Every attribute has `IDENTIFIER`; whether non-sample records carry it (sample_id_all).
    Identifier(bool),
}

/// A record's place in the time order: (time, offset), records without a time first.
type Key = (Option<u64>, u64);

/// A record waiting in the queue: its key (whose offset says where it is), its header's
/// fields as checked when it was read, and its attribute (event records).
#[derive(Clone, Copy)]
struct Pending {
    key: Key,
    kind: u32,
    misc: u16,
    size: u16,
    attr: Option<u32>,
}

/// The records of a data section, in the library's order, read in place from `bytes`.
pub(super) struct MappedRecords<'b> {
    bytes: &'b [u8],
    /// The next record header to read, and where the data section ends.
    next: usize,
    end: usize,
    endian: Endianness,
    parse_infos: Vec<RecordParseInfo>,
    attr_of: AttrOf,
    id_to_attr: FxHashMap<u64, u32>,
    queue: RoundQueue,
    progress: Progress,
}

impl<'b> MappedRecords<'b> {
    /// The records of `file`'s data section `[start, end)` in `bytes`.
    pub(super) fn new(bytes: &'b [u8], start: usize, end: usize, file: &PerfFile) -> Self {
        let endian = file.endian();
        let attrs = file.event_attributes();
        let parse_infos: Vec<RecordParseInfo> = attrs
            .iter()
            .map(|a| RecordParseInfo::new(&a.attr, endian))
            .collect();
        let mut id_to_attr = FxHashMap::default();
        for (i, a) in attrs.iter().enumerate() {
            for &id in &a.event_ids {
                id_to_attr.insert(id, i as u32);
            }
        }
        let attr_of = match parse_infos.split_first() {
            Some((_, [])) | None => AttrOf::OnlyOne,
            Some((first, rest)) if rest.iter().all(|p| p.id_parse_info == first.id_parse_info) => {
                AttrOf::Same(first.id_parse_info)
            }
            // the library checked at open that every attribute has IDENTIFIER
            Some(_) => AttrOf::Identifier(attrs[0].attr.flags.contains(AttrFlags::SAMPLE_ID_ALL)),
        };
        MappedRecords {
            bytes,
            next: start,
            end: end.min(bytes.len()),
            endian,
            parse_infos,
            attr_of,
            id_to_attr,
            queue: RoundQueue::default(),
            progress: Progress::new(Some(bytes.len() as u64), "reading perf.data"),
        }
    }

    /// Every record before this offset has been handed out (the rest are queued or unread).
    pub(super) fn handed_out(&self) -> usize {
        self.queue.oldest().map_or(self.next, |o| o as usize)
    }

    /// The next record in time order, or `None` at the end of the data section.
    pub(super) fn next_record(&mut self) -> Result<Option<PerfFileRecord<'b>>, ReadFault> {
        if !self.queue.has_ready() {
            self.read_round()?;
        }
        let Some(p) = self.queue.take() else {
            return Ok(None);
        };
        Ok(Some(self.record_at(p)))
    }

    /// Reads records into the queue up to a round end that makes some of them ready (or to
    /// the end of the data section).
    fn read_round(&mut self) -> Result<(), ReadFault> {
        while self.next < self.end {
            let at = self.next;
            let (kind, misc, size) = self.header(at)?;
            self.next = at + usize::from(size);
            match kind {
                FINISHED_ROUND => {
                    self.queue.finish_round();
                    if self.queue.has_ready() {
                        self.progress.set(self.next as u64);
                        return Ok(());
                    }
                }
                AUXTRACE => {
                    return Err(ReadFault::corrupt(
                        at,
                        "AUXTRACE record (Intel PT / CoreSight trace data) is not supported",
                    ));
                }
                COMPRESSED | COMPRESSED2 => {
                    return Err(ReadFault::corrupt(
                        at,
                        "a compressed record in a recording whose header does not say it is \
                         compressed",
                    ));
                }
                _ => {
                    let body = &self.bytes[at + HEADER_SIZE..at + usize::from(size)];
                    let (attr, time) = self.attr_and_time(RecordType(kind), body);
                    self.queue.insert(Pending {
                        key: (time, at as u64),
                        kind,
                        misc,
                        size,
                        attr,
                    });
                }
            }
        }
        self.queue.finish();
        self.progress.set(self.end as u64);
        Ok(())
    }

    /// The header at `at`: type, misc and size, checked against the data section.
    fn header(&self, at: usize) -> Result<(u32, u16, u16), ReadFault> {
        let Some(h) = self
            .bytes
            .get(at..at + HEADER_SIZE)
            .filter(|_| at + HEADER_SIZE <= self.end)
        else {
            return Err(ReadFault::corrupt(
                at,
                format!(
                    "the data section ends {} bytes into a record header",
                    self.end - at
                ),
            ));
        };
        let (kind, misc, size) = match self.endian {
            Endianness::LittleEndian => (
                u32::from_le_bytes(h[0..4].try_into().unwrap_or_default()),
                u16::from_le_bytes(h[4..6].try_into().unwrap_or_default()),
                u16::from_le_bytes(h[6..8].try_into().unwrap_or_default()),
            ),
            Endianness::BigEndian => (
                u32::from_be_bytes(h[0..4].try_into().unwrap_or_default()),
                u16::from_be_bytes(h[4..6].try_into().unwrap_or_default()),
                u16::from_be_bytes(h[6..8].try_into().unwrap_or_default()),
            ),
        };
        let len = usize::from(size);
        if len < HEADER_SIZE {
            return Err(ReadFault::corrupt(
                at,
                format!("record size {size} is smaller than its header"),
            ));
        }
        if at + len > self.end {
            return Err(ReadFault::corrupt(
                at,
                format!(
                    "a {size}-byte record runs {} bytes past the end of the data section",
                    at + len - self.end
                ),
            ));
        }
        Ok((kind, misc, size))
    }

    /// A record's attribute (event records only) and time, as the library finds them.
    fn attr_and_time(&self, kind: RecordType, body: &[u8]) -> (Option<u32>, Option<u64>) {
        if !kind.is_builtin_type() {
            return (None, None);
        }
        match self.endian {
            Endianness::LittleEndian => {
                self.attr_and_time_in::<byteorder::LittleEndian>(kind, body)
            }
            Endianness::BigEndian => self.attr_and_time_in::<byteorder::BigEndian>(kind, body),
        }
    }

    fn attr_and_time_in<T: byteorder::ByteOrder>(
        &self,
        kind: RecordType,
        body: &[u8],
    ) -> (Option<u32>, Option<u64>) {
        let data = RawData::Single(body);
        let id = match &self.attr_of {
            AttrOf::OnlyOne => None,
            AttrOf::Same(info) => get_record_id::<T>(kind, data, info),
            AttrOf::Identifier(all) => get_record_identifier::<T>(kind, data, *all),
        };
        let attr = id
            .and_then(|id| self.id_to_attr.get(&id).copied())
            .unwrap_or(0);
        let time = get_record_timestamp::<T>(kind, data, &self.parse_infos[attr as usize]);
        (Some(attr), time)
    }

    /// The record a queue entry stands for, over the bytes in place.
    fn record_at(&self, p: Pending) -> PerfFileRecord<'b> {
        let at = p.key.1 as usize;
        let (kind, misc) = (p.kind, p.misc);
        let bytes: &'b [u8] = self.bytes;
        let data = RawData::Single(&bytes[at + HEADER_SIZE..at + usize::from(p.size)]);
        match UserRecordType::try_from(RecordType(kind)) {
            Some(record_type) => PerfFileRecord::UserRecord(RawUserRecord {
                record_type,
                endian: self.endian,
                misc,
                data,
            }),
            None => {
                let attr = p.attr.unwrap_or(0) as usize;
                PerfFileRecord::EventRecord {
                    attr_index: attr,
                    record: RawEventRecord {
                        record_type: RecordType(kind),
                        misc,
                        data,
                        parse_info: self.parse_infos[attr],
                    },
                }
            }
        }
    }
}

/// The library's round rule over (time, offset) keys: records read in round N + 2 are never
/// earlier than those of round N, so at the end of each round everything no later than the
/// previous round's latest key is in its final order and ready.
#[derive(Default)]
struct RoundQueue {
    /// Ready, in order; `taken` of them handed out.
    ready: Vec<Pending>,
    taken: usize,
    /// Not yet ready, in reading order.
    incoming: Vec<Pending>,
    previous_max: Key,
    current_max: Key,
    /// How many of `incoming` are no later than `previous_max`.
    no_later: usize,
}

impl RoundQueue {
    fn insert(&mut self, p: Pending) {
        if p.key <= self.previous_max {
            self.no_later += 1;
        } else if p.key > self.current_max {
            self.current_max = p.key;
        }
        self.incoming.push(p);
    }

    fn has_ready(&self) -> bool {
        self.taken < self.ready.len()
    }

    /// The library's `Sorter::finish_round`.
    fn finish_round(&mut self) {
        if self.no_later > 0 {
            let n = self.no_later;
            // what a round adds is a few runs already in time order (one per CPU's buffer),
            // after what is left of the previous round, sorted here then: a run-merging sort
            // takes linear time per run where a quicksort takes n log n (keys are unique, so
            // stable or not is the same order); the `n` earliest are then the ready ones
            self.incoming.sort_by_key(|p| p.key);
            self.start_ready();
            self.ready.extend(self.incoming.drain(..n));
        }
        self.previous_max = self.current_max;
        self.no_later = self.incoming.len();
    }

    /// Everything is read: all of it is ready, in order.
    fn finish(&mut self) {
        self.incoming.sort_by_key(|p| p.key);
        self.start_ready();
        self.ready.append(&mut self.incoming);
        self.no_later = 0;
    }

    /// Drops the records already handed out before more are made ready.
    fn start_ready(&mut self) {
        self.ready.drain(..self.taken);
        self.taken = 0;
    }

    fn take(&mut self) -> Option<Pending> {
        let p = *self.ready.get(self.taken)?;
        self.taken += 1;
        Some(p)
    }

    /// The offset of the earliest-read record still waiting or not yet handed out.
    fn oldest(&self) -> Option<u64> {
        let waiting = self.ready[self.taken..].iter().chain(&self.incoming);
        waiting.map(|p| p.key.1).min()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use linux_perf_data::PerfFileReader;
    use std::io::{Cursor, Read};

    fn pending(time: u64, at: u64) -> Pending {
        Pending {
            key: (Some(time), at),
            kind: 9,
            misc: 0,
            size: 8,
            attr: Some(0),
        }
    }

    fn times(queue: &mut RoundQueue) -> Vec<u64> {
        std::iter::from_fn(|| queue.take())
            .map(|p| p.key.0.unwrap_or(0))
            .collect()
    }

    /// By hand: a round's records are ready only once the next round has ended, and then only
    /// those no later than the first round's latest time; the rest wait for the end.
    #[test]
    fn records_are_ready_a_round_late_and_in_time_order() {
        let mut q = RoundQueue::default();
        q.insert(pending(5, 0));
        q.insert(pending(3, 8));
        q.finish_round();
        assert!(
            !q.has_ready(),
            "nothing is known to be final after one round"
        );
        q.insert(pending(8, 16));
        q.insert(pending(4, 24));
        assert_eq!(q.oldest(), Some(0));
        q.finish_round();
        assert_eq!(times(&mut q), [3, 4, 5]);
        assert_eq!(q.oldest(), Some(16));
        q.insert(pending(6, 32));
        q.finish();
        assert_eq!(times(&mut q), [6, 8]);
        assert_eq!(q.oldest(), None);
    }

    fn fixture_bytes(name: &str) -> Vec<u8> {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/perf")
            .join(name);
        let raw = std::fs::read(&path).unwrap();
        if !name.ends_with(".gz") {
            return raw;
        }
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(&raw[..])
            .read_to_end(&mut out)
            .unwrap();
        out
    }

    /// What a record is, to compare the two readers by.
    fn identity(record: PerfFileRecord<'_>) -> (u32, u16, Option<usize>, Vec<u8>) {
        match record {
            PerfFileRecord::EventRecord { attr_index, record } => (
                record.record_type.0,
                record.misc,
                Some(attr_index),
                record.data.as_slice().into_owned(),
            ),
            PerfFileRecord::UserRecord(r) => (
                r.record_type.record_type().0,
                r.misc,
                None,
                r.data.as_slice().into_owned(),
            ),
        }
    }

    /// The oracle: every file-mode recording among the fixtures gives the same records, in the
    /// same order, with the same attributes, read in place as through the library.
    #[test]
    fn in_place_records_are_the_librarys_record_for_record() {
        let names = [
            "c-malloc.perf.data",
            "jvm-shop.perf.data",
            "rust-native.perf-fp.data",
            "c-malloc.perf-dwarf.data.gz",
            "rust-native.perf-dwarf.data.gz",
        ];
        for name in names {
            let bytes = fixture_bytes(name);
            let path = std::path::Path::new(name);
            let layout = super::super::header::check_header(
                &mut Cursor::new(&bytes),
                bytes.len() as u64,
                path,
            )
            .unwrap();
            assert!(layout.in_place, "{name}");
            let PerfFileReader {
                mut perf_file,
                mut record_iter,
            } = PerfFileReader::parse_file(Cursor::new(&bytes)).unwrap();
            let (start, end) = (layout.records.start as usize, layout.records.end as usize);
            let mut in_place = MappedRecords::new(&bytes, start, end, &perf_file);
            let mut count = 0;
            loop {
                let theirs = record_iter
                    .next_record(&mut perf_file)
                    .unwrap()
                    .map(identity);
                let ours = in_place.next_record().unwrap().map(identity);
                assert_eq!(ours, theirs, "{name}: record #{count}");
                if ours.is_none() {
                    break;
                }
                count += 1;
            }
            assert!(count > 100, "{name}: {count} records");
        }
    }

    #[test]
    fn a_record_past_the_data_section_is_an_error_at_its_offset() {
        let bytes = fixture_bytes("c-malloc.perf.data");
        let path = std::path::Path::new("c-malloc.perf.data");
        let layout =
            super::super::header::check_header(&mut Cursor::new(&bytes), bytes.len() as u64, path)
                .unwrap();
        let file = PerfFileReader::parse_file(Cursor::new(&bytes))
            .unwrap()
            .perf_file;
        // the data section cut 4 bytes into its second record
        let start = layout.records.start as usize;
        let first = usize::from(u16::from_le_bytes([bytes[start + 6], bytes[start + 7]]));
        let mut records = MappedRecords::new(&bytes, start, start + first + 4, &file);
        let fault = loop {
            match records.next_record() {
                Ok(Some(_)) => continue,
                Ok(None) => panic!("read to the end of a cut section"),
                Err(fault) => break format!("{fault:?}"),
            }
        };
        assert!(fault.contains(&format!("at: {}", start + first)), "{fault}");
        assert!(
            fault.contains("ends 4 bytes into a record header"),
            "{fault}"
        );
    }
}
