//! One process's executable mappings and the framehop unwinder built from them.
//!
//! Mappings change rarely (startup, dlopen) and samples come in thousands, so the unwinder is
//! rebuilt lazily: a mapping change marks it stale, the next sample of the process rebuilds it.
//! With `.eh_frame_hdr` present a framehop module is a few pointers into the mapped file, so a
//! rebuild costs nothing worth caching.

use super::image::{Bytes, Image};
use super::{Mapping, StackEnd, UserRegs};
use crate::model::UnwindFailure;
use framehop::x86_64::{CacheX86_64, UnwindRegsX86_64, UnwinderX86_64};
use framehop::{Error as FhError, FrameAddress, Module, Unwinder};
use std::sync::Arc;

/// A mapping as the unwinder sees it: can its code be unwound through?
#[derive(Clone)]
struct Placed {
    start: u64,
    end: u64,
    path: String,
    unwindable: bool,
}

#[derive(Default)]
pub struct Process {
    /// Sorted by start, non-overlapping (a new mapping replaces what it overlaps).
    mappings: Vec<Mapping>,
    built: Option<Built>,
}

struct Built {
    unwinder: UnwinderX86_64<Bytes>,
    cache: CacheX86_64,
    placed: Vec<Placed>,
}

impl Process {
    pub fn add(&mut self, mapping: Mapping) {
        if mapping.end <= mapping.start {
            return;
        }
        self.mappings
            .retain(|m| m.end <= mapping.start || m.start >= mapping.end);
        let at = self.mappings.partition_point(|m| m.start < mapping.start);
        self.mappings.insert(at, mapping);
        self.built = None;
    }

    /// A forked child: same mappings, its own unwinder.
    pub fn fork(&self) -> Process {
        Process {
            mappings: self.mappings.clone(),
            built: None,
        }
    }

    /// Builds the unwinder when the mappings changed since the last sample.
    pub fn prepare(&mut self, mut load: impl FnMut(&Mapping) -> Option<Arc<Image>>) {
        if self.built.is_some() {
            return;
        }
        let mut unwinder = UnwinderX86_64::new();
        let mut placed = Vec::with_capacity(self.mappings.len());
        for m in &self.mappings {
            let image = load(m);
            if let Some(image) = &image {
                unwinder.add_module(Module::new(
                    m.path.clone(),
                    m.start..m.end,
                    image.base_avma(m.start, m.page_offset),
                    image.section_info(),
                ));
            }
            placed.push(Placed {
                start: m.start,
                end: m.end,
                path: m.path.clone(),
                unwindable: image.is_some(),
            });
        }
        self.built = Some(Built {
            unwinder,
            cache: CacheX86_64::new(),
            placed,
        });
    }

    /// Unwinds from `regs` over `stack` (the bytes from `regs.sp` up). Call [`prepare`] first.
    pub fn unwind(
        &mut self,
        regs: UserRegs,
        stack: &[u8],
        max_frames: usize,
        out: &mut Vec<u64>,
    ) -> StackEnd {
        let Some(built) = self.built.as_mut() else {
            return StackEnd::Failed(UnwindFailure::NotPrepared);
        };
        let sp = regs.sp;
        let mut read_stack = |addr: u64| -> Result<u64, ()> {
            let offset = usize::try_from(addr.checked_sub(sp).ok_or(())?).map_err(|_| ())?;
            let bytes = stack
                .get(offset..offset.checked_add(8).ok_or(())?)
                .ok_or(())?;
            let mut word = [0u8; 8];
            word.copy_from_slice(bytes);
            Ok(u64::from_le_bytes(word))
        };
        let placed = &built.placed;
        let mut frames = built.unwinder.iter_frames(
            regs.ip,
            UnwindRegsX86_64::new(regs.ip, regs.sp, regs.bp),
            &mut built.cache,
            &mut read_stack,
        );
        loop {
            match frames.next() {
                Ok(Some(frame)) => {
                    out.push(frame.address());
                    if out.len() >= max_frames {
                        return StackEnd::Failed(UnwindFailure::TooManyFrames(max_frames));
                    }
                    if let Some(end) = check_frame(placed, frame) {
                        return end;
                    }
                }
                Ok(None) => return StackEnd::Complete,
                Err(FhError::CouldNotReadStack(addr)) => {
                    return if addr >= sp {
                        StackEnd::StackExhausted
                    } else {
                        StackEnd::Failed(UnwindFailure::BelowStackPointer)
                    };
                }
                Err(e) => return StackEnd::Failed(UnwindFailure::Unwinder(e.to_string())),
            }
        }
    }
}

/// Stops before unwinding out of a frame framehop could only guess (frame pointers) for:
/// code outside every mapping, or in a module without usable unwind information.
fn check_frame(placed: &[Placed], frame: FrameAddress) -> Option<StackEnd> {
    let addr = frame.address_for_lookup();
    let i = placed.partition_point(|p| p.start <= addr);
    match i.checked_sub(1).map(|i| &placed[i]) {
        Some(p) if addr < p.end => (!p.unwindable).then(|| StackEnd::NoUnwindInfo(p.path.clone())),
        _ => Some(StackEnd::Unmapped),
    }
}
