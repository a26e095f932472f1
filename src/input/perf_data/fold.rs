//! The folding thread's state: the memory maps ([`super::maps`]), the caches that make a
//! repeated sample cost one lookup ([`super::cache`]), and the samples folded into rows of
//! address stacks, which are handed to symbolisation once the whole file is read.

use super::cache::*;
use super::maps::*;
use super::*;
use crate::input::filter::{FilterTally, SampleFilter, SampleKey};
use crate::model::{Notice, Timeline};
use crate::symbolize::{AddressProfile, ModuleId, RawFrame, RawStacks};
use crate::unwind::perf::Mmap;
use rustc_hash::FxHashSet;

pub(super) struct Reader<'p> {
    path: &'p Path,
    /// The bytes records are read in place from (empty when they are not): where the
    /// callchains of [`ChainBytes::Source`] are.
    source: &'p [u8],
    /// `--call-graph dwarf`: the unwinder, fed the same process events as the maps.
    pub(super) unwind: Option<crate::unwind::perf::PerfUnwind>,
    /// How the call chains were recorded (from the event attributes).
    pub(super) call_graph: Option<crate::model::CallGraph>,
    /// The user addresses of the sample being unwound: the callchain's, then the unwinder's.
    chain_user: Vec<u64>,
    user_addrs: Vec<u64>,
    maps: Maps,
    caches: Caches,
    folding: Folding,
    /// `--comm`, `--pid`, `--tid`, `--time` (a percent slice already made absolute), and
    /// what they kept and left out.
    pub(super) filter: SampleFilter,
    tally: FilterTally,
    /// Where each module is asked for the first time a sample falls in it, to be loaded while
    /// the records are still read.
    pub(super) early: Option<super::early::EarlyLoads>,
}

/// The samples folded so far: distinct raw frames, raw stacks and (stack, thread) rows with
/// their summed values.
struct Folding {
    /// (module, lookup address) → raw frame id.
    raw_frames: FxHashMap<RawFrame, u32>,
    raw_frame_list: Vec<RawFrame>,
    raw_stacks: RawStacks,
    /// (raw stack, thread) → row; values are `n_types` per row.
    rows: FxHashMap<(u32, Option<ThreadId>), u32>,
    row_keys: Vec<(u32, Option<ThreadId>)>,
    values: Vec<u128>,
    /// attr index → sample type index.
    attr_type: Vec<usize>,
    n_types: usize,
    samples_type: usize,
    samples: u64,
    lost: u64,
    lost_samples: u64,
    throttles: u64,
    /// tid → thread name.
    comms: FxHashMap<i32, ThreadId>,
    threads: crate::model::Interner<Box<str>>,
    /// The raw stack of the sample being folded.
    stack_buf: Vec<u32>,
    /// The samples over time, keyed by row ([`crate::input::ReadOptions::timeline`]).
    timeline: Option<Timeline>,
}

impl Folding {
    /// Starts fetching a row's values, which a sample adds to.
    fn prefetch_row(&self, row: u32) {
        if let Some(v) = self.values.get(row as usize * self.n_types) {
            prefetch(v);
        }
    }

    fn raw_frame(&mut self, module: ModuleId, address: u64) -> u32 {
        let frame = RawFrame { module, address };
        let next = self.raw_frame_list.len() as u32;
        let id = *self.raw_frames.entry(frame).or_insert(next);
        if id == next {
            self.raw_frame_list.push(frame);
        }
        id
    }

    fn row_for(&mut self, stack: u32, tid: Option<i32>) -> u32 {
        let thread = tid.and_then(|t| self.comms.get(&t).copied());
        let next = self.row_keys.len() as u32;
        let row = *self.rows.entry((stack, thread)).or_insert(next);
        if row == next {
            self.row_keys.push((stack, thread));
            self.values.extend(std::iter::repeat_n(0, self.n_types));
        }
        row
    }

    fn into_addresses(
        self,
        sample_types: Vec<SampleType>,
        modules: Vec<ModuleKind>,
    ) -> AddressProfile {
        AddressProfile {
            sample_types,
            modules,
            frames: self.raw_frame_list,
            stacks: self.raw_stacks,
            rows: self.row_keys,
            values: self.values,
            threads: self.threads,
            samples: self.samples,
            cost_type: self.samples_type,
            timeline: self.timeline,
        }
    }

    /// Adds one sample's weight (its period, in its event's sample type) and count to a row,
    /// and to the row in the sample's time bucket when a timeline is kept.
    fn add(&mut self, row: u32, attr: usize, period: Option<u64>, time: Option<u64>) {
        let base = row as usize * self.n_types;
        let ty = self.attr_type.get(attr).copied().unwrap_or(0);
        let period = u128::from(period.unwrap_or(1));
        self.values[base + ty] = self.values[base + ty].saturating_add(period);
        self.values[base + self.samples_type] += 1;
        if let (Some(timeline), Some(time)) = (&mut self.timeline, time) {
            timeline.add_two(time, row, (ty, period), (self.samples_type, 1));
        }
    }
}

impl<'p> Reader<'p> {
    /// Keeps the samples over time too (`n_types` values a row, as the rows).
    pub(super) fn keep_timeline(&mut self) {
        self.folding.timeline = Some(Timeline::new(self.folding.n_types));
    }

    pub(super) fn new(
        path: &'p Path,
        source: &'p [u8],
        build_ids: FxHashMap<DsoKey, Vec<u8>>,
        attr_type: Vec<usize>,
        n_types: usize,
        samples_type: usize,
    ) -> Reader<'p> {
        Reader {
            path,
            source,
            unwind: None,
            call_graph: None,
            chain_user: Vec::new(),
            user_addrs: Vec::new(),
            maps: Maps {
                processes: FxHashMap::default(),
                kernel: Process::default(),
                kernel_module: None,
                modules: Vec::new(),
                announced: Vec::new(),
                module_index: FxHashMap::default(),
                build_ids,
                generation: 1,
            },
            caches: Caches {
                // generation 0 is never current, so the zeroed entries never hit
                frames: vec![CacheEntry::default(); 1 << FRAME_CACHE_BITS],
                chains: ChainCache::default(),
                chain_stacks: Vec::new(),
                thread_rows: ThreadRows::default(),
                chain_generation: 0,
                row_tids: FxHashSet::default(),
                renamed: false,
            },
            folding: Folding {
                raw_frames: FxHashMap::default(),
                raw_frame_list: Vec::new(),
                raw_stacks: RawStacks::default(),
                rows: FxHashMap::default(),
                row_keys: Vec::new(),
                values: Vec::new(),
                attr_type,
                n_types,
                samples_type,
                samples: 0,
                lost: 0,
                lost_samples: 0,
                throttles: 0,
                comms: FxHashMap::default(),
                threads: crate::model::Interner::default(),
                stack_buf: Vec::new(),
                timeline: None,
            },
            filter: SampleFilter::default(),
            tally: FilterTally::default(),
            early: None,
        }
    }
}

/// How many events ahead of the one folded a sample's chain-cache slot, then its key and
/// thread-row slot, then its row's values are fetched: far enough for memory to answer, near
/// enough to stay in cache.
const SLOT_AHEAD: usize = 16;
const ROW_SLOT_AHEAD: usize = 8;
const ROW_AHEAD: usize = 4;

impl Reader<'_> {
    /// Applies a batch's events in order, fetching what the samples ahead will look up.
    pub(super) fn apply_batch(&mut self, batch: &Batch, little: bool) {
        let events = &batch.events;
        let chains = |i: usize| events.get(i).and_then(cached_hash);
        for (i, event) in events.iter().enumerate() {
            if let Some((hash, _)) = chains(i + SLOT_AHEAD) {
                self.caches.chains.prefetch_slot(hash);
            }
            if let Some((hash, tid)) = chains(i + ROW_SLOT_AHEAD)
                && let Some(chain) = self.caches.chains.peek(hash)
            {
                self.caches.thread_rows.prefetch(chain, tid);
            }
            if let Some((hash, tid)) = chains(i + ROW_AHEAD)
                && let Some(chain) = self.caches.chains.peek(hash)
                && let Some(row) = self.caches.thread_rows.peek(chain, tid)
            {
                self.folding.prefetch_row(row);
            }
            self.apply(event, batch, little);
        }
    }

    fn apply(&mut self, event: &Event, batch: &Batch, little: bool) {
        match event {
            Event::Sample {
                sample,
                chain,
                hash,
                user,
            } => {
                let source = self.source;
                let key = chain.as_ref().map(|bytes| match bytes {
                    ChainBytes::Source(r) => &source[r.clone()],
                    ChainBytes::Batch(r) => &batch.chains[r.clone()],
                });
                let user = user.as_ref().map(|u| (u, &batch.stacks[u.stack.clone()]));
                self.sample(sample, key, *hash, little, user);
            }
            Event::Mmap {
                pid,
                start,
                len,
                pgoff,
                mode,
                path,
                build_id,
                exec,
            } => self.mmap(&Mmap {
                pid: *pid,
                start: *start,
                len: *len,
                page_offset: *pgoff,
                mode: *mode,
                path,
                build_id: build_id.as_deref(),
                exec: *exec,
            }),
            Event::Comm {
                pid,
                tid,
                name,
                exec,
            } => {
                let id = ThreadId(self.folding.threads.intern::<str>(name));
                let before = self.folding.comms.insert(*tid, id);
                if before != Some(id) && self.caches.row_tids.contains(tid) {
                    self.caches.renamed = true;
                }
                if *exec && pid == tid {
                    self.maps.processes.remove(pid);
                    self.maps.generation += 1;
                    if let Some(u) = &mut self.unwind {
                        u.exec(*pid);
                    }
                }
            }
            Event::Fork {
                pid,
                ppid,
                tid,
                ptid,
            } => {
                if pid != ppid {
                    let parent = self.maps.processes.get(ppid).cloned().unwrap_or_default();
                    self.maps.processes.insert(*pid, parent);
                    self.maps.generation += 1;
                    if let Some(u) = &mut self.unwind {
                        u.fork(*ppid, *pid);
                    }
                }
                if let Some(&name) = self.folding.comms.get(ptid) {
                    self.folding.comms.insert(*tid, name);
                }
            }
            Event::Lost(n) => self.folding.lost += n,
            Event::LostSamples(n) => self.folding.lost_samples += n,
            Event::Throttle => self.folding.throttles += 1,
            Event::BuildId(key, id) => {
                self.maps.build_ids.insert(key.clone(), id.clone());
            }
        }
    }

    fn mmap(&mut self, m: &Mmap<'_>) {
        let (pid, start, end, pgoff, path, exec) =
            (m.pid, m.start, m.end(), m.page_offset, m.path, m.exec);
        if m.is_kernel() || pid == -1 {
            let text = path
                .starts_with(crate::model::perf::KERNEL_MODULE)
                .then_some(pgoff);
            let module = self.maps.kernel_module(text);
            self.maps.generation += 1;
            self.maps.kernel.insert(Mapping {
                start,
                end,
                pgoff,
                module,
            });
            return;
        }
        let module = if is_anon(path) {
            if !exec {
                return;
            }
            self.maps.module(ModuleKind::Jit { pid })
        } else if is_pseudo(path) {
            return;
        } else {
            let build_id = m
                .build_id
                .filter(|b| !b.is_empty())
                .map(<[u8]>::to_vec)
                .or_else(|| {
                    let key = DsoKey::detect(path.as_bytes(), m.mode)?;
                    self.maps
                        .build_ids
                        .get(&key)
                        .filter(|b| !b.is_empty())
                        .cloned()
                });
            if let Some(u) = &mut self.unwind {
                u.mmap(&Mmap {
                    build_id: build_id.as_deref(),
                    ..*m
                });
            }
            let kind = ModuleKind::Elf {
                path: path.to_string(),
                build_id,
                exec_pgoff: exec.then_some(pgoff),
            };
            self.maps.elf_module(kind)
        };
        let mapping = Mapping {
            start,
            end,
            pgoff,
            module,
        };
        let jit = matches!(self.maps.modules[module as usize], ModuleKind::Jit { .. });
        let generation = self.maps.generation;
        let process = self.maps.processes.entry(pid).or_default();
        if !process.keeps_lookups(&mapping, jit, generation) {
            self.maps.generation += 1;
        }
        process.insert(mapping);
    }

    fn sample(
        &mut self,
        s: &SampleEvent,
        key: Option<&[u8]>,
        hash: ChainHash,
        little: bool,
        user: Option<(&UserCopy, &[u8])>,
    ) {
        self.folding.samples += 1;
        if !self.filter.is_empty() && !self.keeps(s) {
            return;
        }
        let dwarf = user.filter(|_| self.unwind.is_some());
        let row = match (key, dwarf) {
            // a DWARF sample's user stack is not in its callchain bytes: no cache for it
            (key, Some((copy, bytes))) => {
                let chain = key;
                let mut addrs = std::mem::take(&mut self.user_addrs);
                let truncated = self.unwind_user(s, copy, bytes, chain, little, &mut addrs);
                let stack = self.raw_stack(
                    s.pid,
                    s.kernel,
                    s.ip,
                    chain,
                    little,
                    Some((&addrs, truncated)),
                );
                self.user_addrs = addrs;
                self.folding.row_for(stack, s.tid)
            }
            // most samples repeat a (thread, callchain) seen before under the same maps: one
            // lookup of the key (hashed by the decoding thread) finds its row
            (Some(key), None) => {
                if self.caches.chain_generation != self.maps.generation {
                    self.caches.clear_chains(self.maps.generation);
                } else if self.caches.renamed {
                    self.caches.clear_rows();
                }
                let chain = match self.caches.chains.get(hash) {
                    Some(chain) => chain,
                    None => self.new_chain(s, key, hash, little),
                };
                let tid = ThreadRows::tid(s.tid);
                match self.caches.thread_rows.get(chain, tid) {
                    Some(row) => row,
                    None => self.first_in_thread(s, chain),
                }
            }
            (None, None) => {
                let stack = self.raw_stack(s.pid, s.kernel, s.ip, None, little, None);
                self.folding.row_for(stack, s.tid)
            }
        };
        self.folding.add(row, s.attr, s.period, s.time);
    }

    /// The chain id of a callchain the chain cache has not seen under these maps: its
    /// addresses resolved into a raw stack.
    fn new_chain(&mut self, s: &SampleEvent, key: &[u8], hash: ChainHash, little: bool) -> u32 {
        let chain = key;
        let stack = self.raw_stack(s.pid, s.kernel, s.ip, Some(chain), little, None);
        let id = self.caches.chain_stacks.len() as u32;
        self.caches.chain_stacks.push(stack);
        self.caches.chains.insert(hash, id);
        id
    }

    /// The row of a chain in a thread not seen running it under these maps and names.
    fn first_in_thread(&mut self, s: &SampleEvent, chain: u32) -> u32 {
        let stack = self.caches.chain_stacks[chain as usize];
        let row = self.folding.row_for(stack, s.tid);
        if let Some(tid) = s.tid {
            self.caches.row_tids.insert(tid);
        }
        self.caches
            .thread_rows
            .insert(chain, ThreadRows::tid(s.tid), row);
        row
    }

    /// Whether `--comm`/`--pid`/`--tid`/`--time` keep the sample; counted either way. The
    /// comm is the thread's name at the sample's time, as `perf report` filters it.
    fn keeps(&mut self, s: &SampleEvent) -> bool {
        let comm = s
            .tid
            .and_then(|t| self.folding.comms.get(&t))
            .map(|&id| &**self.folding.threads.get(id.0));
        let key = SampleKey {
            comm,
            pid: (s.pid != -1).then_some(s.pid),
            tid: s.tid,
            time: s.time,
        };
        let number = self.folding.samples;
        self.tally
            .count(&self.filter, &key, |_| format!("#{number}"))
    }

    /// Unwinds a DWARF sample's user stack into `addrs`; whether it stopped early. The
    /// callchain's own user addresses (the ip) stand in when unwinding finds nothing.
    fn unwind_user(
        &mut self,
        s: &SampleEvent,
        copy: &UserCopy,
        bytes: &[u8],
        chain: Option<&[u8]>,
        little: bool,
        addrs: &mut Vec<u64>,
    ) -> bool {
        self.chain_user.clear();
        let mut user = copy.user_mode;
        for addr in chain
            .unwrap_or_default()
            .chunks_exact(8)
            .map(|w| word(w, little))
        {
            if addr >= PERF_CONTEXT_MAX {
                user = matches!(addr, PERF_CONTEXT_USER | PERF_CONTEXT_GUEST_USER);
            } else if user {
                self.chain_user.push(addr);
            }
        }
        let sample = crate::unwind::perf::UserSample {
            pid: s.pid,
            user_mode: copy.user_mode,
            ip: s.ip,
            chain_user: &self.chain_user,
            has_regs: copy.has_regs,
            regs: copy.regs,
            stack: crate::unwind::StackCopy {
                bytes,
                size: copy.size,
                dynamic_size: copy.dynamic_size,
            },
            bad_record: copy.bad_record,
        };
        addrs.clear();
        self.unwind
            .as_mut()
            .is_some_and(|u| u.sample(&sample, addrs).unwrap_or(false))
    }

    /// Resolves a sample's addresses to raw frames and interns the stack they make. `user`:
    /// the unwound user part of a DWARF sample, which replaces the callchain's.
    fn raw_stack(
        &mut self,
        pid: i32,
        kernel: bool,
        ip: Option<u64>,
        chain: Option<&[u8]>,
        little: bool,
        user: Option<(&[u64], bool)>,
    ) -> u32 {
        let mut kernel = kernel;
        self.folding.stack_buf.clear();
        let mut first_in_context = true;
        match chain {
            Some(chain) => {
                for addr in chain.chunks_exact(8).map(|w| word(w, little)) {
                    if addr >= PERF_CONTEXT_MAX {
                        match addr {
                            PERF_CONTEXT_KERNEL | PERF_CONTEXT_GUEST_KERNEL | PERF_CONTEXT_HV => {
                                kernel = true
                            }
                            PERF_CONTEXT_USER | PERF_CONTEXT_GUEST_USER => kernel = false,
                            _ => {}
                        }
                        first_in_context = true;
                        continue;
                    }
                    if user.is_some() && !kernel {
                        continue;
                    }
                    let lookup = if first_in_context {
                        addr
                    } else {
                        addr.saturating_sub(1)
                    };
                    first_in_context = false;
                    let frame = self.raw_frame(pid, lookup, kernel);
                    self.folding.stack_buf.push(frame);
                }
            }
            None if user.is_some() => {}
            None => {
                if let Some(ip) = ip {
                    let frame = self.raw_frame(pid, ip, kernel || is_kernel_address(ip));
                    self.folding.stack_buf.push(frame);
                }
            }
        }
        if let Some((addrs, truncated)) = user {
            self.push_user_stack(pid, addrs, truncated);
        }
        self.folding.raw_stacks.intern(&self.folding.stack_buf)
    }

    /// The unwound user frames: the ip, then return addresses looked up at `address - 1`; a
    /// truncated stack ends in an `[unknown]` frame, as perf prints it.
    fn push_user_stack(&mut self, pid: i32, addrs: &[u64], truncated: bool) {
        for (i, &addr) in addrs.iter().enumerate() {
            let lookup = if i == 0 { addr } else { addr.saturating_sub(1) };
            let frame = self.raw_frame(pid, lookup, false);
            self.folding.stack_buf.push(frame);
        }
        if truncated {
            // address 0 is in no mapping: the `[unknown]` frame without a module
            let frame = self.raw_frame(pid, 0, false);
            self.folding.stack_buf.push(frame);
        }
    }

    /// The raw frame of an address, through a small direct-mapped cache: the same few
    /// thousand (pid, address) pairs recur in almost every sample, and the cache turns the map
    /// search and the hash lookup into one comparison. Any map change invalidates it.
    fn raw_frame(&mut self, pid: i32, addr: u64, kernel: bool) -> u32 {
        let slot = cache_slot(pid, addr, kernel);
        let generation = self.maps.generation;
        let e = self.caches.frames[slot];
        if e.addr == addr && e.pid == pid && e.kernel == kernel && e.generation == generation {
            return e.raw;
        }
        let (module, key) = self.maps.lookup(pid, addr, kernel);
        self.announce(module);
        let raw = self.folding.raw_frame(module, key);
        self.caches.frames[slot] = CacheEntry {
            addr,
            pid,
            kernel,
            generation,
            raw,
        };
        raw
    }

    /// Asks for a module's files to be loaded ahead, the first time a sample falls in it.
    fn announce(&mut self, module: ModuleId) {
        let Some(early) = &self.early else { return };
        let Some(slot) = self.maps.announced.get_mut(module as usize) else {
            return;
        };
        if !*slot {
            *slot = true;
            early.request(self.maps.modules[module as usize].clone());
        }
    }

    /// Hands the folded samples to symbolisation and builds the profile; `ahead` holds the
    /// modules loaded (and the one being loaded) while the records were read.
    pub(super) fn finish(
        mut self,
        sample_types: Vec<SampleType>,
        options: &ReadOptions,
        ahead: &symbolize::LoadedAhead,
    ) -> Result<Profile> {
        self.maps.late_build_ids();
        if self.folding.samples == 0 {
            let (lost, lost_samples) = (self.folding.lost, self.folding.lost_samples);
            let why = if lost.max(lost_samples) > 0 {
                // every sample was lost: say so, not just that there are none
                format!(
                    "no samples in this perf.data: perf lost all of them ({lost} events in \
                     LOST records, {lost_samples} in LOST_SAMPLES); {}",
                    crate::model::LOST_FIX
                )
            } else {
                "no samples in this perf.data".to_string()
            };
            return Err(Error::input(self.path, Position::Whole, why));
        }
        let filtered = self.tally.finish(self.path, &self.filter)?;
        let recording = crate::model::Recording {
            call_graph: self.call_graph,
            samples: self.folding.samples,
            lost_events: self.folding.lost,
            lost_samples: self.folding.lost_samples,
            throttles: self.folding.throttles,
            dwarf: self
                .unwind
                .as_ref()
                .map(|u| u.unwinder.stats.truncated_stacks()),
            depth_cut: None,
            whole_stacks: false,
        };
        if !self.filter.is_empty() {
            // the recording's count stays whole for the lost share; the profile's is of the
            // samples kept
            self.folding.samples = self.tally.kept;
        }
        let lost = self.folding.lost;
        let lost_samples = self.folding.lost_samples;
        let addresses = self.folding.into_addresses(sample_types, self.maps.modules);
        // the caches (the chain and row tables and the frame cache: megabytes on a long
        // recording) are not needed again: freed before the modules' symbols join the folded
        // rows in memory
        drop(self.caches);
        let symbolize_started = std::time::Instant::now();
        let mut profile = symbolize::to_profile(addresses, self.path, &options.symbols, ahead);
        if std::env::var_os("WHOSE_TIMINGS").is_some() {
            crate::unwind::print_timings(
                self.unwind.as_ref().map(|u| &u.unwinder),
                symbolize_started.elapsed(),
            );
        }
        // the recording's own loss, before what symbolisation has to say
        // perf writes the kernel's count of lost samples as LOST_SAMPLES at the end, and it
        // includes the ring-buffer losses the LOST records count: only more is news
        if lost_samples > lost {
            profile.meta.warnings.insert(
                0,
                Notice::LostSamples {
                    path: self.path.to_path_buf(),
                    samples: lost_samples,
                    lost_events: lost,
                },
            );
        }
        if lost > 0 {
            profile.meta.warnings.insert(
                0,
                Notice::LostEvents {
                    path: self.path.to_path_buf(),
                    lost,
                },
            );
        }
        profile.meta.recording = recording;
        profile.meta.notes.extend(filtered);
        if let Some(unwind) = &self.unwind {
            let (notes, warnings) = unwind.unwinder.stats.report();
            profile.meta.notes.extend(notes);
            profile.meta.warnings.extend(warnings);
        }
        Ok(profile)
    }
}

/// A callchain word in the file's byte order.
fn word(bytes: &[u8], little: bool) -> u64 {
    let bytes: [u8; 8] = bytes.try_into().unwrap_or_default();
    if little {
        u64::from_le_bytes(bytes)
    } else {
        u64::from_be_bytes(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::symbolize::NO_MODULE;

    /// A sample of `tid` (pid 1) whose callchain is one user address, as the decoding thread
    /// hands it over.
    fn sample(batch: &mut Batch, tid: i32) -> Event {
        sample_at(batch, tid, 0x1000)
    }

    fn sample_at(batch: &mut Batch, tid: i32, address: u64) -> Event {
        let mut chain = Vec::new();
        for word in [PERF_CONTEXT_USER, address] {
            chain.extend_from_slice(&word.to_le_bytes());
        }
        let (key, hash) = super::super::decode::chain_key(batch, &[], 1, false, &chain);
        Event::Sample {
            sample: SampleEvent {
                attr: 0,
                pid: 1,
                tid: Some(tid),
                time: None,
                period: None,
                kernel: false,
                ip: Some(address),
            },
            chain: Some(key),
            hash,
            user: None,
        }
    }

    fn comm(tid: i32, name: &str) -> Event {
        Event::Comm {
            pid: 1,
            tid,
            name: name.into(),
            exec: false,
        }
    }

    fn mmap(start: u64, len: u64, pgoff: u64, path: &str) -> Event {
        Event::Mmap {
            pid: 1,
            start,
            len,
            pgoff,
            mode: CpuMode::User,
            path: path.into(),
            build_id: None,
            exec: true,
        }
    }

    fn reader_after(events: Vec<Event>, batch: Batch) -> Reader<'static> {
        let mut reader = Reader::new(
            Path::new("test.data"),
            &[],
            FxHashMap::default(),
            vec![0],
            2,
            1,
        );
        let batch = Batch { events, ..batch };
        reader.apply_batch(&batch, true);
        reader
    }

    #[test]
    fn a_growing_jit_code_cache_keeps_the_caches_and_a_remapped_file_does_not() {
        let mut batch = Batch::default();
        let events = vec![
            mmap(0x10000, 0x1000, 0x10000, "//anon"),
            sample_at(&mut batch, 10, 0x10800),
            mmap(0x10000, 0x2000, 0x10000, "//anon"),
        ];
        let reader = reader_after(events, batch);
        // no mapping changed a lookup made (the first covers none): the first generation
        assert_eq!(reader.maps.generation, 1);

        let mut batch = Batch::default();
        let events = vec![
            mmap(0x10000, 0x1000, 0, "/usr/lib/libx.so"),
            sample_at(&mut batch, 10, 0x10800),
            // the same file at another offset: 0x10800 is now another place in it
            mmap(0x10000, 0x1000, 0x1000, "/usr/lib/libx.so"),
        ];
        assert_eq!(reader_after(events, batch).maps.generation, 2);
    }

    #[test]
    fn an_address_found_unmapped_is_found_in_the_mapping_that_comes_to_cover_it() {
        let mut batch = Batch::default();
        let events = vec![
            mmap(0x10000, 0x1000, 0x10000, "//anon"),
            sample_at(&mut batch, 10, 0x11800),
            mmap(0x10000, 0x2000, 0x10000, "//anon"),
            sample_at(&mut batch, 10, 0x11800),
        ];
        let reader = reader_after(events, batch);
        let frames = &reader.folding.raw_frame_list;
        assert_eq!(frames.len(), 2, "{frames:?}");
        assert_eq!(frames[0].module, NO_MODULE);
        assert_eq!((frames[1].module, frames[1].address), (0, 0x11800));
    }

    #[test]
    fn a_renamed_thread_s_later_samples_go_to_its_new_name() {
        let mut batch = Batch::default();
        let events = vec![
            comm(10, "before"),
            sample(&mut batch, 10),
            // a thread named before its first sample: nothing cached is stale
            comm(11, "other"),
            sample(&mut batch, 10),
            comm(10, "after"),
            sample(&mut batch, 10),
            sample(&mut batch, 11),
        ];
        batch.events = events;
        let path = Path::new("test.data");
        let mut reader = Reader::new(path, &[], FxHashMap::default(), vec![0], 2, 1);
        reader.apply_batch(&batch, true);
        let f = &reader.folding;
        let named: Vec<(&str, u128)> = f
            .row_keys
            .iter()
            .enumerate()
            .map(|(row, (_, thread))| (&**f.threads.get(thread.unwrap().0), f.values[row * 2 + 1]))
            .collect();
        assert_eq!(named, [("before", 2), ("after", 1), ("other", 1)]);
        // the three rows share one stack
        assert_eq!(f.raw_stacks.len(), 1);
    }

    #[test]
    fn later_mappings_replace_the_overlapped_part() {
        let mut p = Process::default();
        p.insert(Mapping {
            start: 0x1000,
            end: 0x5000,
            pgoff: 0,
            module: 1,
        });
        p.insert(Mapping {
            start: 0x2000,
            end: 0x3000,
            pgoff: 0,
            module: 2,
        });
        assert_eq!(p.find(0x1500).unwrap().module, 1);
        assert_eq!(p.find(0x2500).unwrap().module, 2);
        let tail = p.find(0x4000).unwrap();
        assert_eq!((tail.module, tail.pgoff, tail.start), (1, 0x2000, 0x3000));
        assert!(p.find(0x6000).is_none());
    }

    #[test]
    fn the_chain_cache_tells_keys_of_one_place_apart_by_the_rest_of_their_hash() {
        let mut cache = ChainCache::default();
        let hash = |home: u64, check: u64| ChainHash { home, check };
        assert_eq!(cache.get(hash(7, 1)), None);
        // many keys, every fourth placed at home 7 with the others of its kind: the table
        // grows and probes past slots of the same home with other keys
        let key = |i: u32| {
            hash(
                if i % 4 == 0 { 7 } else { u64::from(i) << 40 },
                u64::from(i),
            )
        };
        for i in 0..5000 {
            cache.insert(key(i), i);
        }
        for i in 0..5000 {
            assert_eq!(cache.get(key(i)), Some(i), "key {i}");
        }
        assert_eq!(cache.get(hash(7, 5001)), None);
        assert_eq!(
            cache.get(hash(3 << 40, 5)),
            None,
            "home of one, check of another"
        );
        // a peek answers the value of the key at its first slot, and only that key's
        cache.prefetch_slot(key(1));
        assert_eq!(cache.peek(key(1)), Some(1));
        assert_eq!(cache.peek(hash(1 << 40, 2)), None);
        cache.clear();
        assert_eq!(cache.get(key(1)), None);
        assert_eq!(cache.peek(key(1)), None);
        cache.insert(key(1), 9);
        assert_eq!(cache.get(key(1)), Some(9));
    }

    #[test]
    fn a_chain_key_is_read_in_place_and_its_hash_is_of_its_pid_mode_and_callchain() {
        use super::super::decode::chain_key;
        let mut batch = Batch::default();
        let source: Vec<u8> = (0..64).collect();
        let chain = &source[8..24];
        let (bytes, a) = chain_key(&mut batch, &source, 1, false, chain);
        assert!(
            matches!(bytes, ChainBytes::Source(ref r) if *r == (8..24)),
            "{bytes:?}"
        );
        let copy = chain.to_vec();
        let (bytes, same) = chain_key(&mut batch, &source, 1, false, &copy);
        assert!(matches!(bytes, ChainBytes::Batch(ref r) if batch.chains[r.clone()] == *chain));
        let (_, pid) = chain_key(&mut batch, &source, 2, false, chain);
        let (_, mode) = chain_key(&mut batch, &source, 1, true, chain);
        let (_, callchain) = chain_key(&mut batch, &source, 1, false, &source[8..25]);
        assert_eq!(a, same);
        for differs in [pid, mode, callchain] {
            assert_ne!(a.home, differs.home);
            assert_ne!(a.check, differs.check);
        }
    }

    #[test]
    fn thread_rows_are_found_by_chain_and_tid() {
        let mut rows = ThreadRows::default();
        assert_eq!(rows.get(0, 1), None);
        for chain in 0..3000 {
            for tid in [-1, 0, 7] {
                rows.insert(chain, tid, chain * 10 + (tid + 1) as u32);
            }
        }
        for chain in 0..3000 {
            for tid in [-1, 0, 7] {
                assert_eq!(rows.get(chain, tid), Some(chain * 10 + (tid + 1) as u32));
            }
            assert_eq!(rows.get(chain, 8), None);
        }
        rows.clear();
        assert_eq!(rows.get(1, 0), None);
    }

    #[test]
    fn anonymous_memory_is_jit() {
        assert!(is_anon("//anon"));
        assert!(is_anon("[anon:v8]"));
        assert!(!is_anon("/usr/lib/libc.so.6"));
    }
}
