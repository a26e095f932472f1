//! The hooks the perf.data reader calls, on its folding thread: that thread sees every
//! record in time order and keeps the maps, so it also keeps the unwinder's and unwinds each
//! DWARF sample from the valid part of its stack copy, which the decoding thread handed on.
//! Decoding (reading, the library's time ordering) and unwinding so run on two cores.

use super::{DwarfUnwinder, Mapping, StackCopy, UserRegs};
use linux_perf_data::linux_perf_event_reader::CpuMode;

/// The unwinder as the perf.data reader drives it: process events in, user stacks out.
pub struct PerfUnwind {
    pub unwinder: DwarfUnwinder,
}

/// One MMAP/MMAP2 record as the perf.data reader hands it on: to its own maps and to the
/// unwinder's.
#[derive(Debug, Clone, Copy)]
pub struct Mmap<'a> {
    pub pid: i32,
    pub start: u64,
    pub len: u64,
    /// The file offset the mapping starts at.
    pub page_offset: u64,
    pub mode: CpuMode,
    pub path: &'a str,
    /// The record's own build id, or (once the reader resolved it) the file's.
    pub build_id: Option<&'a [u8]>,
    /// An executable mapping.
    pub exec: bool,
}

impl Mmap<'_> {
    pub fn end(&self) -> u64 {
        self.start.saturating_add(self.len)
    }

    /// A mapping of the kernel (or a guest's kernel), not of a process.
    pub fn is_kernel(&self) -> bool {
        matches!(self.mode, CpuMode::Kernel | CpuMode::GuestKernel)
    }
}

/// What a DWARF sample carries for its user part, as the perf.data decoder found it.
#[derive(Debug, Clone, Copy)]
pub struct UserSample<'a> {
    pub pid: i32,
    /// Taken in user mode: the sample's ip is a user address.
    pub user_mode: bool,
    pub ip: Option<u64>,
    /// The callchain's user addresses (with `--call-graph dwarf`, at most the ip).
    pub chain_user: &'a [u64],
    /// The record has user registers (ABI not `NONE`: a kernel thread has none).
    pub has_regs: bool,
    /// ip, sp and bp, when the register mask has all three.
    pub regs: Option<UserRegs>,
    pub stack: StackCopy<'a>,
    /// The record's stack size field was larger than the record: the stack was dropped.
    pub bad_record: bool,
}

impl PerfUnwind {
    pub fn new(unwinder: DwarfUnwinder) -> PerfUnwind {
        PerfUnwind { unwinder }
    }

    /// An MMAP/MMAP2 record of a file (anonymous and pseudo mappings, JIT code or `[heap]`,
    /// have no unwind information to load).
    pub fn mmap(&mut self, m: &Mmap<'_>) {
        if !m.exec || m.pid == -1 || m.is_kernel() {
            return;
        }
        self.unwinder.add_mapping(
            m.pid,
            Mapping {
                start: m.start,
                end: m.end(),
                page_offset: m.page_offset,
                path: m.path.to_string(),
                build_id: m.build_id.map(<[u8]>::to_vec),
            },
        );
    }

    pub fn fork(&mut self, ppid: i32, pid: i32) {
        self.unwinder.fork(ppid, pid);
    }

    pub fn exec(&mut self, pid: i32) {
        self.unwinder.exec(pid);
    }

    /// The user stack of a sample that carries a stack copy, into `out` (the ip, then return
    /// addresses); whether it was truncated, or `None` when the sample has no user part (a
    /// kernel thread).
    pub fn sample(&mut self, s: &UserSample<'_>, out: &mut Vec<u64>) -> Option<bool> {
        out.clear();
        let mut fallback = s.chain_user;
        let ip = [s.ip.unwrap_or(0)];
        if fallback.is_empty() {
            // perf leaves the user callchain empty (exclude_callchain_user): in user mode the
            // ip is the sample's own; a kernel thread has no user registers and no user part
            match s.ip {
                Some(_) if s.user_mode => fallback = &ip,
                _ if s.has_regs => {}
                _ => return None,
            }
        }
        let end = if s.bad_record {
            self.unwinder.bad_record()
        } else {
            self.unwinder.unwind(s.pid, s.regs, s.stack, out)
        };
        if out.is_empty() {
            out.extend_from_slice(fallback);
        }
        Some(end.is_truncated())
    }
}
