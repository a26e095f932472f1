//! One module's unwind information, read from its ELF files: `.eh_frame` with its
//! `.eh_frame_hdr` index (from the binary, where the loader needs them), else `.debug_frame`
//! (often only in the separate debug file), plus the load segments that turn a mapping's page
//! offset into the module's base address.
//!
//! The section bytes stay in the memory map of the file; framehop reads them in place, so a
//! module costs its headers, not its size. Unwind information is checked once when the module
//! is loaded: framehop quietly falls back to frame pointers on a parse error, which on code
//! without frame pointers invents callers, so a module whose CFI does not parse is treated as
//! one without unwind information (unwinding stops there and the module is named).

use crate::model::ModuleProblem;
use addr2line::gimli::{
    self, BaseAddresses, CieOrFde, DebugFrame, EhFrame, EhFrameHdr, EndianSlice, LittleEndian,
    UnwindSection,
};
use framehop::ModuleSectionInfo;
use object::{Object, ObjectSection, ObjectSegment};
use std::ops::{Deref, Range};
use std::path::Path;
use std::sync::Arc;

/// Section bytes shared with the file they come from (a memory map, or decompressed bytes).
#[derive(Clone)]
pub struct Bytes {
    backing: Arc<dyn AsRef<[u8]> + Send + Sync>,
    range: Range<usize>,
}

impl Bytes {
    fn new(backing: Arc<dyn AsRef<[u8]> + Send + Sync>, range: Range<usize>) -> Option<Bytes> {
        let len = backing.as_ref().as_ref().len();
        (range.start <= range.end && range.end <= len).then_some(Bytes { backing, range })
    }

    fn owned(data: Vec<u8>) -> Bytes {
        let len = data.len();
        Bytes {
            backing: Arc::new(data),
            range: 0..len,
        }
    }
}

impl Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.backing.as_ref().as_ref()[self.range.clone()]
    }
}

/// A section's bytes and its address as the file states it (SVMA).
#[derive(Clone)]
struct Section {
    svma: Range<u64>,
    data: Bytes,
}

/// A loadable segment: where its bytes are in the file and where it wants to be in memory.
#[derive(Debug, Clone, Copy)]
struct Segment {
    file_offset: u64,
    file_size: u64,
    vaddr: u64,
    executable: bool,
}

/// The unwind information of one module, ready to be placed at any address.
#[derive(Clone)]
pub struct Image {
    eh_frame: Option<Section>,
    eh_frame_hdr: Option<Section>,
    debug_frame: Option<Section>,
    text_svma: Option<Range<u64>>,
    got_svma: Option<Range<u64>>,
    segments: Vec<Segment>,
    /// Why the module cannot be unwound through, when its CFI is absent or corrupt.
    pub problem: Option<ModuleProblem>,
}

impl Image {
    /// Reads the binary (`code`, the file with program headers and loaded sections) and,
    /// when its `.eh_frame` is missing, the `.debug_frame` of `debug`.
    pub fn load(code: &Path, debug: Option<&Path>) -> Result<Image, ModuleProblem> {
        let code_bytes = map(code)?;
        let mut image = Image::parse(code_bytes).map_err(|error| ModuleProblem::NotElf {
            path: code.display().to_string(),
            error,
        })?;
        if image.eh_frame.is_none()
            && image.debug_frame.is_none()
            && let Some(debug) = debug.filter(|d| *d != code)
            && let Ok(bytes) = map(debug)
            && let Ok(other) = Image::parse(bytes)
        {
            image.debug_frame = other.debug_frame;
            image.problem = None;
            image.validate();
        }
        Ok(image)
    }

    /// Parses an ELF image held in memory (a mapped file, or test bytes).
    pub fn parse(bytes: Arc<dyn AsRef<[u8]> + Send + Sync>) -> Result<Image, String> {
        let data: &[u8] = (*bytes).as_ref();
        let file = object::File::parse(data).map_err(|e| e.to_string())?;
        let section = |name: &str| -> Option<Section> {
            let s = file.section_by_name(name)?;
            let (offset, size) = s.file_range()?;
            if size == 0 {
                return None;
            }
            let data = match s.compressed_data().ok()? {
                c if c.format == object::CompressionFormat::None => Bytes::new(
                    bytes.clone(),
                    offset as usize..offset.checked_add(size)? as usize,
                )?,
                c => Bytes::owned(c.decompress().ok()?.into_owned()),
            };
            Some(Section {
                svma: s.address()..s.address().saturating_add(s.size()),
                data,
            })
        };
        let svma = |name: &str| {
            file.section_by_name(name)
                .map(|s| s.address()..s.address().saturating_add(s.size()))
        };
        let segments = file
            .segments()
            .map(|s| {
                let (file_offset, file_size) = s.file_range();
                Segment {
                    file_offset,
                    file_size,
                    vaddr: s.address(),
                    executable: matches!(s.flags(),
                        object::SegmentFlags::Elf { p_flags } if p_flags & object::elf::PF_X != 0),
                }
            })
            .collect();
        let mut image = Image {
            eh_frame: section(".eh_frame"),
            eh_frame_hdr: section(".eh_frame_hdr"),
            debug_frame: section(".debug_frame"),
            text_svma: svma(".text"),
            got_svma: svma(".got"),
            segments,
            problem: None,
        };
        image.validate();
        Ok(image)
    }

    /// Whether framehop gets real unwind information for this module.
    pub fn can_unwind(&self) -> bool {
        self.problem.is_none() && (self.eh_frame.is_some() || self.debug_frame.is_some())
    }

    /// The address at which the module's SVMA 0 lies when the file is mapped at `start` from
    /// file offset `page_offset`: the segment holding that offset fixes the relation.
    pub fn base_avma(&self, start: u64, page_offset: u64) -> u64 {
        let segment = self
            .segments
            .iter()
            .filter(|s| {
                page_offset >= s.file_offset & !0xfff
                    && page_offset < s.file_offset.saturating_add(s.file_size.max(1))
            })
            .max_by_key(|s| s.executable);
        match segment {
            Some(s) => start
                .wrapping_sub(page_offset)
                .wrapping_add(s.file_offset)
                .wrapping_sub(s.vaddr),
            // no segment covers the offset: assume file offsets equal addresses (true of
            // most shared objects' first segment)
            None => start.wrapping_sub(page_offset),
        }
    }

    /// The section view framehop builds a module from.
    pub fn section_info(&self) -> SectionInfo {
        SectionInfo {
            image: self.clone(),
        }
    }

    fn bases(&self) -> BaseAddresses {
        let start = |s: &Option<Range<u64>>| s.as_ref().map_or(0, |r| r.start);
        BaseAddresses::default()
            .set_eh_frame(self.eh_frame.as_ref().map_or(0, |s| s.svma.start))
            .set_eh_frame_hdr(self.eh_frame_hdr.as_ref().map_or(0, |s| s.svma.start))
            .set_text(start(&self.text_svma))
            .set_got(start(&self.got_svma))
    }

    /// Parses every CIE, FDE and CFA program once. A corrupt `.eh_frame_hdr` is dropped
    /// (framehop then indexes `.eh_frame` itself); corrupt CFI makes the module unusable.
    fn validate(&mut self) {
        let bases = self.bases();
        if let Some(hdr) = &self.eh_frame_hdr
            && EhFrameHdr::new(&hdr.data, LittleEndian)
                .parse(&bases, 8)
                .is_err()
        {
            self.eh_frame_hdr = None;
        }
        let result = if let Some(eh) = &self.eh_frame {
            let mut section = EhFrame::new(&eh.data, LittleEndian);
            section.set_address_size(8);
            check_cfi(&section, &bases).map_err(|error| ModuleProblem::CorruptCfi {
                section: ".eh_frame",
                error,
            })
        } else if let Some(df) = &self.debug_frame {
            let mut section = DebugFrame::new(&df.data, LittleEndian);
            section.set_address_size(8);
            check_cfi(&section, &bases).map_err(|error| ModuleProblem::CorruptCfi {
                section: ".debug_frame",
                error,
            })
        } else {
            Err(ModuleProblem::NoCfi)
        };
        self.problem = result.err();
    }
}

/// Walks every entry of a CFI section and every instruction of its CIEs and FDEs; the
/// error is the parser's and the entry it is in, or `None` for a section without entries.
fn check_cfi<'a, S>(section: &S, bases: &BaseAddresses) -> Result<(), Option<(String, usize)>>
where
    S: UnwindSection<EndianSlice<'a, LittleEndian>>,
{
    let mut entries = section.entries(bases);
    let mut count = 0usize;
    loop {
        let offset_err = |e: gimli::Error| Some((e.to_string(), count));
        match entries.next().map_err(offset_err)? {
            None => break,
            Some(CieOrFde::Cie(cie)) => {
                let mut ins = cie.instructions(section, bases);
                while ins.next().map_err(offset_err)?.is_some() {}
            }
            Some(CieOrFde::Fde(partial)) => {
                let fde = partial
                    .parse(|s, b, o| s.cie_from_offset(b, o))
                    .map_err(offset_err)?;
                let mut ins = fde.instructions(section, bases);
                while ins.next().map_err(offset_err)?.is_some() {}
            }
        }
        count += 1;
    }
    if count == 0 {
        return Err(None);
    }
    Ok(())
}

fn map(path: &Path) -> Result<Arc<dyn AsRef<[u8]> + Send + Sync>, ModuleProblem> {
    let map = crate::symbolize::locate::map_file(path).map_err(|e| ModuleProblem::Unreadable {
        path: path.display().to_string(),
        error: e.to_string(),
    })?;
    Ok(Arc::new(map))
}

/// [`ModuleSectionInfo`] over an [`Image`]; ELF modules state their base as SVMA 0.
pub struct SectionInfo {
    image: Image,
}

impl ModuleSectionInfo<Bytes> for SectionInfo {
    fn base_svma(&self) -> u64 {
        0
    }

    fn section_svma_range(&mut self, name: &[u8]) -> Option<Range<u64>> {
        let image = &self.image;
        match name {
            b".text" => image.text_svma.clone(),
            b".got" => image.got_svma.clone(),
            b".eh_frame" => image.eh_frame.as_ref().map(|s| s.svma.clone()),
            b".eh_frame_hdr" => image.eh_frame_hdr.as_ref().map(|s| s.svma.clone()),
            _ => None,
        }
    }

    fn section_data(&mut self, name: &[u8]) -> Option<Bytes> {
        if self.image.problem.is_some() {
            return None;
        }
        let image = &self.image;
        match name {
            b".eh_frame" => image.eh_frame.as_ref().map(|s| s.data.clone()),
            // without .eh_frame there is no use for its index
            b".eh_frame_hdr" => image
                .eh_frame
                .as_ref()
                .and(image.eh_frame_hdr.as_ref())
                .map(|s| s.data.clone()),
            b".debug_frame" => image.debug_frame.as_ref().map(|s| s.data.clone()),
            _ => None,
        }
    }
}
