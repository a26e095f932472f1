//! What an address means at a moment of the recording: each process's memory map over time
//! (MMAP/MMAP2 insert, FORK inherits, exec replaces), the kernel's, and the modules they map.

use super::*;
use crate::symbolize::{ModuleId, NO_MODULE};

#[derive(Debug, Clone, Copy)]
pub(super) struct Mapping {
    pub(super) start: u64,
    pub(super) end: u64,
    pub(super) pgoff: u64,
    pub(super) module: ModuleId,
}

#[derive(Debug, Clone, Default)]
pub(super) struct Process {
    /// Sorted by start, non-overlapping.
    pub(super) maps: Vec<Mapping>,
    /// The addresses looked up and found in no mapping, in generation `unmapped.0` of
    /// [`Maps`] (broken frame-pointer chains give a few: zero, text read as an address); `None`
    /// once there are more than [`UNMAPPED_KEPT`].
    pub(super) unmapped: (u32, Option<Vec<u64>>),
}

/// How many unmapped addresses a process keeps for [`Process::keeps_lookups`] before any
/// new mapping is taken to change a lookup.
pub(super) const UNMAPPED_KEPT: usize = 1024;

impl Process {
    /// Whether mapping `m` leaves every lookup made in `generation` as it was, so the caches
    /// stay valid: where it overlaps, the old mappings are of the same module at the same
    /// offset (JIT code is looked up by absolute address: any mapping of it is the same), and
    /// no lookup found an address in it unmapped. A JIT code cache that grows mid-recording is
    /// the case this keeps from emptying every cache.
    pub(super) fn keeps_lookups(&self, m: &Mapping, jit: bool, generation: u32) -> bool {
        let unmapped_inside = match &self.unmapped {
            (g, _) if *g != generation => false,
            (_, Some(addresses)) => addresses.iter().any(|&a| a >= m.start && a < m.end),
            (_, None) => true,
        };
        !unmapped_inside
            && self
                .maps
                .iter()
                .filter(|o| o.start < m.end && o.end > m.start)
                .all(|o| {
                    o.module == m.module
                        && (jit || o.start.wrapping_sub(o.pgoff) == m.start.wrapping_sub(m.pgoff))
                })
    }

    pub(super) fn insert(&mut self, m: Mapping) {
        let mut kept = Vec::with_capacity(self.maps.len() + 2);
        for old in self.maps.drain(..) {
            if old.end <= m.start || old.start >= m.end {
                kept.push(old);
                continue;
            }
            if old.start < m.start {
                kept.push(Mapping {
                    end: m.start,
                    ..old
                });
            }
            if old.end > m.end {
                kept.push(Mapping {
                    start: m.end,
                    pgoff: old.pgoff + (m.end - old.start),
                    ..old
                });
            }
        }
        kept.push(m);
        kept.sort_by_key(|x| x.start);
        self.maps = kept;
    }

    /// Notes an address looked up and found in no mapping.
    pub(super) fn unmapped_lookup(&mut self, addr: u64, generation: u32) {
        if self.unmapped.0 != generation {
            self.unmapped = (generation, Some(Vec::new()));
        }
        if let Some(addresses) = &mut self.unmapped.1 {
            if addresses.len() < UNMAPPED_KEPT {
                addresses.push(addr);
            } else {
                self.unmapped.1 = None;
            }
        }
    }

    pub(super) fn find(&self, addr: u64) -> Option<&Mapping> {
        let i = self.maps.partition_point(|m| m.start <= addr);
        let m = self.maps.get(i.checked_sub(1)?)?;
        (addr < m.end).then_some(m)
    }
}
/// What an address means at this moment of the recording: each process's memory map, the
/// kernel's, and the modules they map.
pub(super) struct Maps {
    pub(super) processes: FxHashMap<i32, Process>,
    pub(super) kernel: Process,
    pub(super) kernel_module: Option<ModuleId>,
    pub(super) modules: Vec<ModuleKind>,
    /// Per module: asked for early ([`Reader::announce`]).
    pub(super) announced: Vec<bool>,
    pub(super) module_index: FxHashMap<ModuleKind, ModuleId>,
    /// Build ids from the file's BUILD_ID section (and pipe mode's records).
    pub(super) build_ids: FxHashMap<DsoKey, Vec<u8>>,
    /// Bumped by every change to any memory map; cache entries of older generations are
    /// stale.
    pub(super) generation: u32,
}
impl Maps {
    /// The same file mapped twice (or first without, then with, its executable page offset)
    /// is one module.
    pub(super) fn elf_module(&mut self, kind: ModuleKind) -> ModuleId {
        let ModuleKind::Elf {
            path,
            build_id,
            exec_pgoff,
        } = &kind
        else {
            return self.module(kind);
        };
        let base = ModuleKind::Elf {
            path: path.clone(),
            build_id: build_id.clone(),
            exec_pgoff: None,
        };
        if let Some(&id) = self.module_index.get(&base) {
            if exec_pgoff.is_some()
                && let ModuleKind::Elf {
                    exec_pgoff: slot, ..
                } = &mut self.modules[id as usize]
                && slot.is_none()
            {
                *slot = *exec_pgoff;
            }
            return id;
        }
        let id = self.module(kind);
        self.module_index.insert(base, id);
        id
    }

    pub(super) fn module(&mut self, kind: ModuleKind) -> ModuleId {
        if let Some(&id) = self.module_index.get(&kind) {
            return id;
        }
        let id = self.modules.len() as ModuleId;
        self.modules.push(kind.clone());
        self.announced.push(false);
        self.module_index.insert(kind, id);
        id
    }

    /// The module of an address and the address to symbolise in it: absolute for the kernel
    /// and JIT code, a file offset for a mapped file.
    pub(super) fn lookup(&mut self, pid: i32, addr: u64, kernel: bool) -> (ModuleId, u64) {
        if kernel || is_kernel_address(addr) {
            let module = self
                .kernel
                .find(addr)
                .map(|m| m.module)
                .or(self.kernel_module)
                .unwrap_or_else(|| self.kernel_module(None));
            (module, addr)
        } else {
            match self.processes.get(&pid).and_then(|p| p.find(addr)) {
                Some(m) => match self.modules[m.module as usize] {
                    ModuleKind::Jit { .. } => (m.module, addr),
                    _ => (m.module, addr - m.start + m.pgoff),
                },
                None => {
                    // a later mapping may cover it: that one then changes a cached lookup
                    let generation = self.generation;
                    self.processes
                        .entry(pid)
                        .or_default()
                        .unmapped_lookup(addr, generation);
                    (NO_MODULE, 0)
                }
            }
        }
    }

    pub(super) fn kernel_module(&mut self, text: Option<u64>) -> ModuleId {
        if let Some(id) = self.kernel_module {
            if text.is_some()
                && let ModuleKind::Kernel { text: slot, .. } = &mut self.modules[id as usize]
            {
                *slot = text;
            }
            return id;
        }
        let build_id = self.build_ids.get(&DsoKey::Kernel).cloned();
        let id = self.modules.len() as ModuleId;
        self.modules.push(ModuleKind::Kernel { build_id, text });
        // the kernel's symbols are asked for before the first record
        self.announced.push(true);
        self.kernel_module = Some(id);
        id
    }
}
impl Maps {
    /// Pipe-mode recordings send their build ids as records, usually after the mappings
    /// that need them: fill in what the mappings lacked.
    pub(super) fn late_build_ids(&mut self) {
        for kind in &mut self.modules {
            match kind {
                ModuleKind::Elf { path, build_id, .. } if build_id.is_none() => {
                    *build_id = DsoKey::detect(path.as_bytes(), CpuMode::User)
                        .and_then(|k| self.build_ids.get(&k).cloned());
                }
                ModuleKind::Kernel { build_id, .. } if build_id.is_none() => {
                    *build_id = self.build_ids.get(&DsoKey::Kernel).cloned();
                }
                _ => {}
            }
        }
    }
}

/// Anonymous executable memory, where JIT compilers put their code.
pub(super) fn is_anon(path: &str) -> bool {
    path == "//anon"
        || path.starts_with("[anon")
        || path.starts_with("/memfd:")
        || path.starts_with("/dev/zero")
        || path.starts_with("/anon_hugepage")
        || path.is_empty()
}

/// Mappings that are never code worth symbolising (`[heap]`, `[stack]`, `[vvar]`).
pub(super) fn is_pseudo(path: &str) -> bool {
    matches!(path, "[heap]" | "[stack]" | "[vvar]" | "[vsyscall]")
}
