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
    /// have no unwind information to load). `build_id` as the reader resolved it (the
    /// record's own, or the file's build-id section).
    #[allow(clippy::too_many_arguments)]
    pub fn mmap(
        &mut self,
        pid: i32,
        start: u64,
        len: u64,
        page_offset: u64,
        mode: CpuMode,
        path: &str,
        build_id: Option<&[u8]>,
        exec: bool,
    ) {
        if !exec || pid == -1 || matches!(mode, CpuMode::Kernel | CpuMode::GuestKernel) {
            return;
        }
        self.unwinder.add_mapping(
            pid,
            Mapping {
                start,
                end: start.saturating_add(len),
                page_offset,
                path: path.to_string(),
                build_id: build_id.map(<[u8]>::to_vec),
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
