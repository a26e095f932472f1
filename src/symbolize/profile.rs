//! The stage itself: an [`AddressProfile`] in, a [`Profile`] of frames out, with what
//! symbolisation has to tell (modules without symbols and what they cost, how many addresses
//! were resolved) in its notes and warnings, and per module why addresses found no symbol in
//! `meta.unresolved`, for the quality figures.

use super::addresses::{AddressProfile, NO_MODULE};
use super::{LoadedAhead, ModuleRequest, ModuleResult, SymbolOptions, symbolize};
use crate::model::{
    Frame, FrameId, FrameKind, MissingSymbols, Notice, Profile, StackId, ThreadId, UNKNOWN,
    UnresolvedModule,
};
use rustc_hash::FxHashMap;
use std::path::Path;

/// Symbolises every distinct (module, address) of `input` once and builds the profile.
/// `source` names the input in warnings; `ahead`: modules loaded while the input was read.
pub fn to_profile(
    mut input: AddressProfile,
    source: &Path,
    options: &SymbolOptions,
    ahead: &LoadedAhead,
) -> Profile {
    let requests = requests(&input);
    let mut results = symbolize(&requests, options, ahead);
    let mut profile = Profile::new(input.sample_types.clone());
    let spans = Spans::new(&mut profile, &input, &requests, &mut results);
    let row_stacks = add_rows(&mut profile, &input, &spans);
    // the timeline's rows become the profile's stacks (their threads are not kept over time)
    profile.meta.timeline = input.timeline.take().map(|timeline| {
        timeline.rekey(profile.sample_types().len(), |row, values, out| {
            out.copy_from_slice(values);
            row_stacks[row as usize].0
        })
    });
    let missing_cost = missing_cost(&input, &results);
    report(
        &mut profile,
        source,
        &input,
        &requests,
        &results,
        &missing_cost,
    );
    profile
}

/// Per module, its distinct addresses, ascending.
fn requests(input: &AddressProfile) -> Vec<ModuleRequest> {
    let mut per_module: Vec<Vec<u64>> = vec![Vec::new(); input.modules.len()];
    for f in &input.frames {
        if f.module != NO_MODULE {
            per_module[f.module as usize].push(f.address);
        }
    }
    input
        .modules
        .iter()
        .zip(per_module)
        .map(|(kind, mut addresses)| {
            addresses.sort_unstable();
            addresses.dedup();
            ModuleRequest {
                kind: kind.clone(),
                addresses,
            }
        })
        .collect()
}

/// Every module's frames, interned once, in one arena; each raw frame is a span of it.
struct Spans {
    flat: Vec<FrameId>,
    /// Raw frame id → (start in `flat`, length).
    of_raw: Vec<(u32, u32)>,
}

impl Spans {
    fn new(
        profile: &mut Profile,
        input: &AddressProfile,
        requests: &[ModuleRequest],
        results: &mut [ModuleResult],
    ) -> Spans {
        let mut flat: Vec<FrameId> = Vec::new();
        let mut spans: Vec<Vec<(u32, u32)>> = Vec::with_capacity(results.len());
        for result in results.iter_mut() {
            let frames = std::mem::take(&mut result.frames);
            let mut module_spans = Vec::with_capacity(frames.len());
            for address_frames in frames {
                let start = flat.len() as u32;
                flat.extend(address_frames.into_iter().map(|f| profile.intern_frame(f)));
                module_spans.push((start, flat.len() as u32 - start));
            }
            spans.push(module_spans);
        }
        let unknown = (flat.len() as u32, 1);
        flat.push(profile.intern_frame(Frame::named(UNKNOWN, FrameKind::Unknown)));
        let of_raw = input
            .frames
            .iter()
            .map(|f| {
                if f.module == NO_MODULE {
                    return unknown;
                }
                let m = f.module as usize;
                let i = requests[m].addresses.binary_search(&f.address).unwrap_or(0);
                spans[m].get(i).copied().unwrap_or(unknown)
            })
            .collect();
        Spans { flat, of_raw }
    }

    fn get(&self, raw: u32) -> &[FrameId] {
        let (start, len) = self.of_raw[raw as usize];
        &self.flat[start as usize..(start + len) as usize]
    }
}

/// Each row of raw stacks as a row of the profile; the profile's stack of each row.
fn add_rows(profile: &mut Profile, input: &AddressProfile, spans: &Spans) -> Vec<StackId> {
    let n = profile.sample_types().len();
    let mut thread_map: FxHashMap<ThreadId, ThreadId> = FxHashMap::default();
    let mut buf = Vec::new();
    // rows share raw stacks (one per thread): each raw stack becomes a stack once
    let mut stack_ids: Vec<Option<StackId>> = vec![None; input.stacks.len()];
    let mut row_stacks = Vec::with_capacity(input.rows.len());
    for (row, &(stack, thread)) in input.rows.iter().enumerate() {
        let stack_id = *stack_ids[stack as usize].get_or_insert_with(|| {
            buf.clear();
            for &raw in input.stacks.get(stack) {
                buf.extend_from_slice(spans.get(raw));
            }
            profile.intern_stack(&buf)
        });
        let thread_id = thread.map(|t| {
            *thread_map
                .entry(t)
                .or_insert_with(|| profile.intern_thread(input.threads.get(t.0)))
        });
        profile.add_sample(stack_id, thread_id, &input.values[row * n..(row + 1) * n]);
        row_stacks.push(stack_id);
    }
    row_stacks
}

/// Per module, the samples whose stack has a frame of it, for modules without symbols. Rows
/// share raw stacks (one row per thread): each raw stack's cost is summed first and its
/// frames walked once, against one flag per raw frame.
fn missing_cost(input: &AddressProfile, results: &[ModuleResult]) -> Vec<u64> {
    let mut cost: Vec<u64> = vec![0; input.modules.len()];
    if results.iter().all(|r| !r.missing) {
        return cost;
    }
    let missing_module = |m: u32| m != NO_MODULE && results[m as usize].missing;
    let in_missing: Vec<bool> = input
        .frames
        .iter()
        .map(|f| missing_module(f.module))
        .collect();
    let n = input.sample_types.len();
    let mut stack_cost: Vec<u64> = vec![0; input.stacks.len()];
    for (row, &(stack, _)) in input.rows.iter().enumerate() {
        stack_cost[stack as usize] += input.values[row * n + input.cost_type] as u64;
    }
    let mut seen = Vec::new();
    for (stack, &samples) in stack_cost.iter().enumerate() {
        let frames = input.stacks.get(stack as u32);
        if samples == 0 || !frames.iter().any(|&raw| in_missing[raw as usize]) {
            continue;
        }
        seen.clear();
        for &raw in frames.iter().filter(|&&raw| in_missing[raw as usize]) {
            let m = input.frames[raw as usize].module;
            if !seen.contains(&m) {
                seen.push(m);
            }
        }
        for &m in &seen {
            cost[m as usize] += samples;
        }
    }
    cost
}

/// Symbolisation's notes and warnings.
fn report(
    profile: &mut Profile,
    source: &Path,
    input: &AddressProfile,
    requests: &[ModuleRequest],
    results: &[ModuleResult],
    missing_cost: &[u64],
) {
    profile.meta.notes.push(Notice::Symbolized {
        samples: input.samples,
        addresses: input.frames.len(),
        modules: requests.iter().filter(|r| !r.addresses.is_empty()).count(),
    });
    let mut missing: Vec<MissingSymbols> = requests
        .iter()
        .zip(results)
        .zip(missing_cost)
        .filter_map(|((req, res), &cost)| {
            let reason = res.reason.as_ref().filter(|_| res.missing)?;
            (!req.addresses.is_empty()).then(|| MissingSymbols {
                module: req.kind.display_name(),
                reason: reason.clone(),
                samples: cost,
            })
        })
        .collect();
    missing.sort_by(|a, b| (b.samples.cmp(&a.samples)).then_with(|| a.module.cmp(&b.module)));
    if !missing.is_empty() {
        profile.meta.warnings.push(Notice::NoSymbols {
            path: source.to_path_buf(),
            modules: missing,
        });
    }
    for res in results {
        profile.meta.warnings.extend(res.warnings.iter().cloned());
    }
    profile
        .meta
        .unresolved
        .extend(requests.iter().zip(results).filter_map(|(req, res)| {
            Some(UnresolvedModule {
                module: req.kind.display_name(),
                reason: res.reason.clone()?,
            })
        }));
}
