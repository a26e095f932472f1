//! DWARF for the functions inlined at an address: `addr2line`'s context, built over the
//! compilation units a module's sampled addresses fall in rather than over every unit.
//!
//! `addr2line::Loader` inflates every debug section of a file and parses every unit's
//! header, abbreviation table and root entry when it opens it: about 300 M instructions for
//! glibc's debug file (1,500 units), of which a profile touches a few dozen units. Here the
//! sections addr2line reads are inflated when the module is loaded (while the records are
//! still read), and once the module's addresses are known, `.debug_aranges` names the units
//! they are in: every other unit of `.debug_info` is stubbed — its header kept, its
//! abbreviations pointed at one shared table, its root entry emptied — and addr2line passes
//! a stub over for the price of its header. No offset moves, so every reference inside the
//! kept units stays valid.
//!
//! The file is used whole, as `Loader` used it, whenever stubs could change an answer: an
//! address no range of `.debug_aranges` covers, or a kept unit whose abbreviations can refer
//! into another unit (`DW_FORM_ref_addr` and the supplementary and type-unit forms). Split
//! DWARF (a lookup that asks for a `.dwo`) and relocatable files are `Loader`'s, which finds
//! and relocates what they need.

use super::locate::map_file;
use addr2line::gimli::{self, EndianSlice, RunTimeEndian, SectionId};
use object::{Object, ObjectSection};
use std::path::{Path, PathBuf};

type Reader<'a> = EndianSlice<'a, RunTimeEndian>;

/// What DWARF says of one function at an address: its raw name, and the file and line there.
pub(super) type DwarfFrame = (Option<String>, Option<String>, Option<u32>);

/// The sections of `.debug_*` addr2line never reads (locations, macros, name and type
/// indexes): not inflated. glibc's `.debug_loclists` alone is 1.4 MB.
const UNREAD: [SectionId; 6] = [
    SectionId::DebugLoc,
    SectionId::DebugLocLists,
    SectionId::DebugMacinfo,
    SectionId::DebugMacro,
    SectionId::DebugNames,
    SectionId::DebugTypes,
];

/// A file's DWARF sections, opened: each is a range of the file's map, or its inflated bytes.
pub(super) struct DwarfFile {
    path: PathBuf,
    map: memmap2::Mmap,
    endian: RunTimeEndian,
    /// Every section but `.debug_info`, which is apart so that stubbing can take it.
    sections: gimli::DwarfSections<Bytes>,
    info: Bytes,
    /// How many units the last lookup stubbed.
    stubbed: usize,
    /// Relocations to apply: only `Loader` does.
    relocatable: bool,
}

#[derive(Default)]
enum Bytes {
    #[default]
    Empty,
    Mapped(std::ops::Range<usize>),
    Owned(Vec<u8>),
}

impl Bytes {
    fn get<'m>(&'m self, map: &'m [u8]) -> &'m [u8] {
        match self {
            Bytes::Empty => &[],
            Bytes::Mapped(range) => &map[range.clone()],
            Bytes::Owned(bytes) => bytes,
        }
    }
}

impl DwarfFile {
    /// Maps `path` and inflates the sections addr2line reads.
    pub(super) fn open(path: &Path) -> Result<DwarfFile, String> {
        let map = map_file(path).map_err(|e| e.to_string())?;
        let object = object::File::parse(&*map).map_err(|e| e.to_string())?;
        let endian = if object.is_little_endian() {
            RunTimeEndian::Little
        } else {
            RunTimeEndian::Big
        };
        let bytes = |id: SectionId| -> object::Result<Bytes> {
            let section = match object.section_by_name(id.name()) {
                Some(section) if !UNREAD.contains(&id) => section,
                _ => return Ok(Bytes::Empty),
            };
            let range = section.compressed_file_range()?;
            if range.format == object::CompressionFormat::None {
                let start = range.offset as usize;
                let end = start.saturating_add(range.uncompressed_size as usize);
                if end <= map.len() {
                    return Ok(Bytes::Mapped(start..end));
                }
            }
            Ok(Bytes::Owned(section.uncompressed_data()?.into_owned()))
        };
        let sections = gimli::DwarfSections::load(|id| match id {
            SectionId::DebugInfo => Ok(Bytes::Empty),
            _ => bytes(id),
        })
        .map_err(|e| e.to_string())?;
        let info = bytes(SectionId::DebugInfo).map_err(|e| e.to_string())?;
        let relocatable = object.kind() == object::ObjectKind::Relocatable;
        drop(object);
        Ok(DwarfFile {
            path: path.to_path_buf(),
            map,
            endian,
            sections,
            info,
            stubbed: 0,
            relocatable,
        })
    }

    pub(super) fn path(&self) -> &Path {
        &self.path
    }

    fn dwarf(&self) -> gimli::Dwarf<Reader<'_>> {
        let mut dwarf = self.sections.borrow(|bytes| self.slice(bytes));
        dwarf.debug_info = self.slice(&self.info).into();
        dwarf
    }

    fn slice<'a>(&'a self, bytes: &'a Bytes) -> Reader<'a> {
        EndianSlice::new(bytes.get(&self.map), self.endian)
    }

    /// The lookup for addresses `probes` (the file's virtual addresses): the units they fall in
    /// kept, every other unit stubbed, when that gives the same answers.
    pub(super) fn lookup(&mut self, probes: &[u64]) -> Result<Lookup<'_>, String> {
        if self.relocatable {
            return Lookup::loader(&self.path);
        }
        if let Some(plan) = stub_plan(&self.dwarf(), probes) {
            let info = match std::mem::take(&mut self.info) {
                Bytes::Owned(bytes) => bytes,
                other => other.get(&self.map).to_vec(),
            };
            self.info = Bytes::Owned(stub_units(info, &plan, self.endian));
            self.stubbed = plan.stubs.len();
        }
        let mut dwarf = self.dwarf();
        dwarf.populate_abbreviations_cache(gimli::AbbreviationsCacheStrategy::Duplicates);
        let context = addr2line::Context::from_dwarf(dwarf).map_err(|e| e.to_string())?;
        Ok(Lookup::Context(context, &self.path))
    }
}

/// Finds the frames DWARF gives an address.
pub(super) enum Lookup<'a> {
    Context(addr2line::Context<Reader<'a>>, &'a Path),
    /// Split DWARF: `Loader` finds the `.dwo` and `.dwp` files a lookup asks for.
    Loader(Box<addr2line::Loader>),
}

impl Lookup<'_> {
    fn loader<'a>(path: &Path) -> Result<Lookup<'a>, String> {
        let loader = addr2line::Loader::new(path).map_err(|e| e.to_string())?;
        Ok(Lookup::Loader(Box::new(loader)))
    }

    /// The frames at `probe`, innermost first, appended to `out`.
    pub(super) fn frames(&mut self, probe: u64, out: &mut Vec<DwarfFrame>) -> Result<(), String> {
        let split = match self {
            Lookup::Context(context, path) => match context.find_frames(probe) {
                addr2line::LookupResult::Output(frames) => {
                    return collect(frames.map_err(|e| e.to_string())?, out);
                }
                addr2line::LookupResult::Load { .. } => path.to_path_buf(),
            },
            Lookup::Loader(loader) => {
                let frames = loader.find_frames(probe).map_err(|e| e.to_string())?;
                return collect(frames, out);
            }
        };
        *self = Lookup::loader(&split)?;
        self.frames(probe, out)
    }
}

fn collect<R: gimli::Reader>(
    mut frames: addr2line::FrameIter<'_, R>,
    out: &mut Vec<DwarfFrame>,
) -> Result<(), String> {
    while let Some(f) = frames.next().map_err(|e| e.to_string())? {
        let name = f
            .function
            .as_ref()
            .and_then(|n| n.raw_name().ok().map(|s| s.into_owned()));
        let file = f.location.as_ref().and_then(|l| l.file.map(str::to_string));
        let line = f.location.as_ref().and_then(|l| l.line);
        out.push((name, file, line));
    }
    Ok(())
}

/// Which units to stub, and the abbreviation table they all point at.
struct StubPlan {
    /// Offsets in `.debug_info` of the units to stub, ascending.
    stubs: Vec<usize>,
    shared_abbrev: u64,
}

/// The units `probes` need none of, when stubbing them cannot change an answer: the units
/// `.debug_aranges` lists are known by its ranges (GCC writes them and the units' own from
/// one list), so a listed unit no probe falls in is stubbed; an unlisted unit is kept, as
/// addr2line would place it by its own attributes (and a probe no listed range covers can
/// only be in one of those); and none of the kept units may refer into another.
fn stub_plan(dwarf: &gimli::Dwarf<Reader<'_>>, probes: &[u64]) -> Option<StubPlan> {
    let mut ranges: Vec<(u64, u64, usize)> = Vec::new();
    let mut listed: Vec<usize> = Vec::new();
    let mut headers = dwarf.debug_aranges.headers();
    while let Some(header) = headers.next().ok()? {
        let unit = header.debug_info_offset().0;
        listed.push(unit);
        let mut entries = header.entries();
        while let Some(entry) = entries.next().ok()? {
            let range = entry.range();
            if range.begin < range.end {
                ranges.push((range.begin, range.end, unit));
            }
        }
    }
    ranges.sort_unstable();
    listed.sort_unstable();
    // the furthest end of the ranges up to each: a probe past its last range's end but
    // before an earlier one's is in nested ranges, which this does not sort out
    let reach: Vec<u64> = (ranges.iter())
        .scan(0, |reach, r| {
            *reach = r.1.max(*reach);
            Some(*reach)
        })
        .collect();
    let mut needed = Vec::with_capacity(probes.len());
    for &probe in probes {
        let Some(i) = ranges.partition_point(|r| r.0 <= probe).checked_sub(1) else {
            continue;
        };
        let (_, end, unit) = ranges[i];
        if probe < end {
            needed.push(unit);
        } else if probe < reach[i] {
            return None;
        }
    }
    needed.sort_unstable();
    needed.dedup();
    let mut stubs = Vec::new();
    let mut shared_abbrev = None;
    let mut units = dwarf.units();
    while let Some(header) = units.next().ok()? {
        let offset = header.debug_info_offset()?.0;
        let stubbable = match header.type_() {
            gimli::UnitType::Compilation | gimli::UnitType::Partial => true,
            // addr2line reads nothing of type units
            gimli::UnitType::Type { .. } | gimli::UnitType::SplitType { .. } => continue,
            _ => false,
        };
        if stubbable
            && listed.binary_search(&offset).is_ok()
            && needed.binary_search(&offset).is_err()
        {
            stubs.push(offset);
            continue;
        }
        let abbrev = header.debug_abbrev_offset().0;
        if refers_across_units(gimli::Section::reader(&dwarf.debug_abbrev), abbrev)? {
            return None;
        }
        shared_abbrev.get_or_insert(abbrev as u64);
    }
    (!stubs.is_empty()).then_some(StubPlan {
        stubs,
        // with every unit stubbed, any table will do: the first unit's
        shared_abbrev: shared_abbrev.unwrap_or(0),
    })
}

/// Whether the abbreviation table at `at` has an attribute whose form can refer outside its
/// unit; `None` when the table cannot be read.
fn refers_across_units(abbrevs: &Reader<'_>, at: usize) -> Option<bool> {
    use gimli::{Reader as _, constants::*};
    let mut r = *abbrevs;
    r.skip(at).ok()?;
    loop {
        if r.read_uleb128().ok()? == 0 {
            return Some(false);
        }
        r.read_uleb128().ok()?; // tag
        r.read_u8().ok()?; // children
        loop {
            let name = r.read_uleb128().ok()?;
            let form = DwForm(u16::try_from(r.read_uleb128().ok()?).ok()?);
            if name == 0 && form.0 == 0 {
                break;
            }
            if form == DW_FORM_implicit_const {
                r.read_sleb128().ok()?;
            }
            let across = [
                DW_FORM_ref_addr,
                DW_FORM_ref_sup4,
                DW_FORM_ref_sup8,
                DW_FORM_ref_sig8,
                DW_FORM_GNU_ref_alt,
            ];
            if across.contains(&form) {
                return Some(true);
            }
        }
    }
}

/// `info` with each unit of `plan.stubs` made a stub: its abbreviation offset set to the
/// shared table, its root entry the null entry (a unit without a root, which addr2line
/// skips).
fn stub_units(mut info: Vec<u8>, plan: &StubPlan, endian: RunTimeEndian) -> Vec<u8> {
    use gimli::Endianity;
    for &offset in &plan.stubs {
        let Some(layout) = StubLayout::at(&info, offset, endian) else {
            continue;
        };
        let field = &mut info[layout.abbrev..layout.abbrev + layout.word];
        if layout.word == 8 {
            endian.write_u64(field, plan.shared_abbrev);
        } else if let Ok(shared) = u32::try_from(plan.shared_abbrev) {
            endian.write_u32(field, shared);
        } else {
            continue;
        }
        info[layout.root] = 0;
    }
    info
}

/// Where a unit header's abbreviation offset and the unit's root entry are.
struct StubLayout {
    abbrev: usize,
    word: usize,
    root: usize,
}

impl StubLayout {
    /// The layout of the compile or partial unit at `offset` (DWARF 2 to 5, 32- or 64-bit).
    fn at(info: &[u8], offset: usize, endian: RunTimeEndian) -> Option<StubLayout> {
        use gimli::Endianity;
        let bytes = info.get(offset..)?;
        let length = endian.read_u32(bytes.get(..4)?);
        let (length_size, word, length) = if length == 0xffff_ffff {
            (
                12,
                8,
                usize::try_from(endian.read_u64(bytes.get(4..12)?)).ok()?,
            )
        } else {
            (4, 4, length as usize)
        };
        let version = endian.read_u16(bytes.get(length_size..length_size + 2)?);
        // DWARF 5 puts the unit type and address size before the abbreviation offset
        let abbrev = length_size + if version >= 5 { 4 } else { 2 };
        // 2-4: offset, then address size; 5: type and size, then offset
        let root = abbrev + word + if version >= 5 { 0 } else { 1 };
        (root < length_size + length && offset + root < info.len()).then_some(StubLayout {
            abbrev: offset + abbrev,
            word,
            root: offset + root,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use object::ObjectSymbol;

    /// Every few bytes of every function of two gcc builds of 25 units (DWARF 5 with
    /// compressed sections, DWARF 4 read in place: `fixtures/src/dwarf-units/make.sh`), each
    /// function looked up with every unit it is not in stubbed, give the frames
    /// `addr2line::Loader` gives over the whole file.
    #[test]
    fn stubbed_units_change_no_answer() {
        for name in ["dwarf-units", "dwarf-units-v4"] {
            let path = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("fixtures/perf/bin")
                .join(name);
            let loader = addr2line::Loader::new(&path).unwrap();
            let map = map_file(&path).unwrap();
            let object = object::File::parse(&*map).unwrap();
            let (mut inlined, mut functions) = (0, 0);
            for symbol in object.symbols() {
                if symbol.kind() != object::SymbolKind::Text || symbol.size() == 0 {
                    continue;
                }
                let probes: Vec<u64> = (symbol.address()..symbol.address() + symbol.size())
                    .step_by(3)
                    .collect();
                let mut file = DwarfFile::open(&path).unwrap();
                let mut lookup = file.lookup(&probes).unwrap();
                for &probe in &probes {
                    let (mut ours, mut whole) = (Vec::new(), Vec::new());
                    lookup.frames(probe, &mut ours).unwrap();
                    collect(loader.find_frames(probe).unwrap(), &mut whole).unwrap();
                    assert_eq!(ours, whole, "{name} {probe:#x}");
                    inlined += usize::from(ours.len() > 1);
                }
                drop(lookup);
                if symbol.name().unwrap().starts_with("stage") {
                    functions += 1;
                    assert!(
                        file.stubbed >= 20,
                        "{name}: {} of 25 units stubbed",
                        file.stubbed
                    );
                }
            }
            assert_eq!(functions, 24, "{name}");
            assert!(
                inlined > 100,
                "{name}: {inlined} probes with inlined frames"
            );
        }
    }

    /// A binary whose units refer into each other (Rust's generics: `DW_FORM_ref_addr`) is
    /// read whole.
    #[test]
    fn units_that_refer_across_are_not_stubbed() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/perf/bin/logcrunch");
        let mut file = DwarfFile::open(&path).unwrap();
        let mut lookup = file.lookup(&[0x1000]).unwrap();
        lookup.frames(0x1000, &mut Vec::new()).unwrap();
        drop(lookup);
        assert_eq!(file.stubbed, 0);
    }

    /// A DWARF 4 and a DWARF 5 unit header, 32-bit: the abbreviation offset and the root
    /// entry are where the standard puts them.
    #[test]
    fn a_stub_s_fields_are_where_each_version_puts_them() {
        let e = RunTimeEndian::Little;
        // v4: length, version 4, abbrev offset (4), address size, root entry code
        let v4 = [9, 0, 0, 0, 4, 0, 0x10, 0, 0, 0, 8, 1, 0];
        let l = StubLayout::at(&v4, 0, e).unwrap();
        assert_eq!((l.abbrev, l.word, l.root), (6, 4, 11));
        // v5: length, version 5, unit type, address size, abbrev offset (4), root entry code
        let v5 = [9, 0, 0, 0, 5, 0, 1, 8, 0x10, 0, 0, 0, 1, 0];
        let l = StubLayout::at(&v5, 0, e).unwrap();
        assert_eq!((l.abbrev, l.word, l.root), (8, 4, 12));
        let plan = StubPlan {
            stubs: vec![0],
            shared_abbrev: 0x20,
        };
        let stubbed = stub_units(v5.to_vec(), &plan, e);
        assert_eq!(stubbed, [9, 0, 0, 0, 5, 0, 1, 8, 0x20, 0, 0, 0, 0, 0]);
        // a header cut short is left alone
        assert!(StubLayout::at(&v5[..10], 0, e).is_none());
    }

    #[test]
    fn abbreviations_that_refer_across_units_are_told() {
        let e = RunTimeEndian::Little;
        // code 1, DW_TAG_compile_unit, children, (DW_AT_name, DW_FORM_strp), end; end
        let within = [1, 0x11, 1, 0x03, 0x0e, 0, 0, 0];
        assert_eq!(
            refers_across_units(&EndianSlice::new(&within, e), 0),
            Some(false)
        );
        // code 2, DW_TAG_subprogram, no children, (DW_AT_abstract_origin, DW_FORM_ref_addr)
        let across = [2, 0x2e, 0, 0x31, 0x10, 0, 0, 0];
        assert_eq!(
            refers_across_units(&EndianSlice::new(&across, e), 0),
            Some(true)
        );
        // an implicit constant's value is skipped, not read as the next attribute
        let implicit = [1, 0x11, 0, 0x3a, 0x21, 0x10, 0, 0, 0];
        assert_eq!(
            refers_across_units(&EndianSlice::new(&implicit, e), 0),
            Some(false)
        );
        assert_eq!(
            refers_across_units(&EndianSlice::new(&within[..3], e), 0),
            None
        );
    }
}
