//! The hooks the perf.data reader calls, on its decoding thread: that thread sees every
//! record in time order, so it keeps the unwinder's process maps and unwinds each DWARF
//! sample where its stack bytes already are (no 4 KiB copy per sample to the folding thread,
//! and unwinding runs beside the folding, on the other core).

use super::{DwarfUnwinder, Mapping, UserRegs};
use linux_perf_data::DsoKey;
use linux_perf_data::linux_perf_event_reader::{CpuMode, SampleRecord};
use rustc_hash::FxHashMap;

const PERF_CONTEXT_MAX: u64 = -4095i64 as u64;
const PERF_CONTEXT_USER: u64 = -512i64 as u64;
const PERF_CONTEXT_GUEST_USER: u64 = -2560i64 as u64;

/// The unwinder plus the build ids the mappings need (the BUILD_ID feature section, and in
/// pipe mode the build-id records as they come).
pub struct PerfUnwind {
    pub unwinder: DwarfUnwinder,
    build_ids: FxHashMap<DsoKey, Vec<u8>>,
    addrs: Vec<u64>,
}

/// A DWARF sample's user part: the ip, then return addresses; `truncated` when the walk
/// stopped before the outermost frame.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct UserStack {
    pub addrs: Box<[u64]>,
    pub truncated: bool,
}

impl PerfUnwind {
    pub fn new(unwinder: DwarfUnwinder, build_ids: FxHashMap<DsoKey, Vec<u8>>) -> PerfUnwind {
        PerfUnwind {
            unwinder,
            build_ids,
            addrs: Vec::new(),
        }
    }

    pub fn build_id(&mut self, key: DsoKey, id: Vec<u8>) {
        self.build_ids.insert(key, id);
    }

    /// An MMAP/MMAP2 record; `file` is false for anonymous and pseudo mappings (JIT code,
    /// `[heap]`), which have no unwind information to load.
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
        file: bool,
    ) {
        if !exec || !file || pid == -1 || matches!(mode, CpuMode::Kernel | CpuMode::GuestKernel) {
            return;
        }
        let build_id = build_id.map(<[u8]>::to_vec).or_else(|| {
            let key = DsoKey::detect(path.as_bytes(), mode)?;
            self.build_ids.get(&key).cloned()
        });
        self.unwinder.add_mapping(
            pid,
            Mapping {
                start,
                end: start.saturating_add(len),
                page_offset,
                path: path.to_string(),
                build_id,
            },
        );
    }

    pub fn fork(&mut self, ppid: i32, pid: i32) {
        self.unwinder.fork(ppid, pid);
    }

    pub fn exec(&mut self, pid: i32) {
        self.unwinder.exec(pid);
    }

    /// The user stack of a sample that carries a stack copy; `None` for other samples (their
    /// callchain is complete as it is). `bad_stack`: the record's stack size lied and the
    /// stack was dropped ([`super::record::repair_user_stack`]).
    pub fn sample(&mut self, s: &SampleRecord<'_>, bad_stack: bool) -> Option<UserStack> {
        s.user_stack.as_ref()?;
        let pid = s.pid.unwrap_or(-1);
        // what the callchain has of user space: with --call-graph dwarf, at most the ip
        let mut chain_user: Vec<u64> = Vec::new();
        if let Some(chain) = &s.callchain {
            let mut user = matches!(s.cpu_mode, CpuMode::User | CpuMode::GuestUser);
            for addr in (0..chain.len()).filter_map(|i| chain.get(i)) {
                if addr >= PERF_CONTEXT_MAX {
                    user = matches!(addr, PERF_CONTEXT_USER | PERF_CONTEXT_GUEST_USER);
                } else if user {
                    chain_user.push(addr);
                }
            }
        }
        if chain_user.is_empty() {
            // perf leaves the user callchain empty (exclude_callchain_user): in user mode the
            // ip is the sample's own; a kernel thread has no user registers and no user part
            match s.ip {
                Some(ip) if matches!(s.cpu_mode, CpuMode::User | CpuMode::GuestUser) => {
                    chain_user.push(ip)
                }
                _ if s.user_regs.is_some() => {}
                _ => return Some(UserStack::default()),
            }
        }
        let end = if bad_stack {
            self.unwinder.bad_record()
        } else {
            let regs = s.user_regs.as_ref().and_then(UserRegs::from_perf);
            let (bytes, dynamic_size) = match &s.user_stack {
                Some((stack, size)) => (stack.as_slice(), *size),
                None => (std::borrow::Cow::Borrowed(&[][..]), 0),
            };
            self.unwinder
                .unwind(pid, regs, &bytes, dynamic_size, &mut self.addrs)
        };
        let addrs: Box<[u64]> = if self.addrs.is_empty() {
            chain_user.into()
        } else {
            self.addrs.as_slice().into()
        };
        Some(UserStack {
            addrs,
            truncated: end.is_truncated(),
        })
    }
}
