//! How a sample gets its owner: the walk over a stack that decides the self and owner views
//! (docs/design.md "Semantics of the three views"), and the frame predicates its facts ask. The one
//! file to read to learn who a sample belongs to.
//!
//! For a stack `[f0 (leaf), …, fn]` with weight `w`:
//! - **self**: `w` goes to `owner(f0)`, the leaf's owner;
//! - **owner**: `w` goes to the first owner from the leaf that is not transparent, or to
//!   `owner(f0)` when every frame is transparent (the runtime owns its own work);
//! - **anywhere**: `w` goes once to every distinct owner on the stack.
//!
//! [`StackWalk::walk`] is the one place the self and owner views' walk is decided: the report
//! (through [`FactCache`]), the flame lines and [`stack_owners`] (pprof labels) all call it, so
//! they agree to the sample. Everything else that depends only on the stack is computed once
//! per distinct stack ([`StackFacts`]: the anywhere owners and categories, and whether the
//! stack was cut short, has unresolved frames or runs only in CPython's interpreter, which
//! [`super::quality`] counts); the per-row loop of every accumulator is then additions.
//! Each distinct frame is judged once ([`FrameTraits`]), by the predicates at the end of this
//! file.

use super::marks::Marks;
use crate::classify::ecosystem::{self, Runtime};
use crate::classify::{Classification, RuleSet};
use crate::model::{Category, Frame, FrameId, FrameKind, OwnerId, Profile, StackId, UNKNOWN, perf};
use rustc_hash::FxHashMap;

/// How a stack is walked for its self-view and owner-view owners: what the facts, the
/// flame lines and [`stack_owners`] all read, which need nothing of each frame beforehand.
#[derive(Clone, Copy)]
pub(crate) struct StackWalk<'a> {
    pub profile: &'a Profile,
    pub rules: &'a RuleSet,
    pub classes: &'a Classification,
    pub types_as_frames: bool,
}

impl<'a> StackWalk<'a> {
    /// The frames of `stack` its owners are read from: the allocated-class leaf says *what*
    /// was allocated, not who, and is skipped unless types are frames.
    pub fn owned_frames(&self, stack: StackId) -> &'a [FrameId] {
        let profile = self.profile;
        self.owned_frames_by(stack, |f| profile.frame(f).kind == FrameKind::AllocType)
    }

    /// [`StackWalk::owned_frames`], with `is_type` telling an allocated type's frame.
    fn owned_frames_by(&self, stack: StackId, is_type: impl Fn(FrameId) -> bool) -> &'a [FrameId] {
        let all = self.profile.stack(stack);
        let skip = if self.types_as_frames {
            0
        } else {
            all.iter().take_while(|&&f| is_type(f)).count()
        };
        &all[skip..]
    }

    /// The owners of `frames` (a stack's [`StackWalk::owned_frames`]), and the owner frame
    /// with its position: the one place the self and owner views' walk is decided. The owner
    /// is the first non-transparent frame's from the leaf; a stack of transparent frames
    /// only stays with its leaf's owner.
    #[inline]
    pub fn walk(&self, frames: &[FrameId]) -> (StackOwners, Option<FrameId>, Option<usize>) {
        let owner_of = |f: FrameId| self.classes.owner_of(f);
        let self_owner = frames
            .first()
            .map_or(OwnerId::UNSYMBOLIZED, |&f| owner_of(f));
        let owner_pos = frames
            .iter()
            .position(|&f| !self.rules.owner(owner_of(f)).transparent);
        let (owner, owner_frame) = match owner_pos {
            Some(i) => (owner_of(frames[i]), Some(frames[i])),
            None => (self_owner, frames.first().copied()),
        };
        (StackOwners { self_owner, owner }, owner_frame, owner_pos)
    }

    /// The self and owner views' owners of `stack`, without the rest of its facts.
    fn owners(&self, stack: StackId) -> StackOwners {
        self.walk(self.owned_frames(stack)).0
    }
}

/// The owners of one stack in the self and owner views.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StackOwners {
    pub self_owner: OwnerId,
    pub owner: OwnerId,
}

/// The self-view and owner-view owner of every distinct stack, decided exactly as the report
/// decides them (for writers that label samples, such as `convert --to pprof`).
pub fn stack_owners(
    profile: &Profile,
    rules: &RuleSet,
    classes: &Classification,
    types_as_frames: bool,
) -> Vec<StackOwners> {
    let walk = StackWalk {
        profile,
        rules,
        classes,
        types_as_frames,
    };
    (0..profile.stack_count())
        .map(|i| walk.owners(StackId(i as u32)))
        .collect()
}

/// Facts about one distinct stack that do not depend on the row's weight.
#[derive(Debug, Clone)]
pub(super) struct StackFacts {
    pub(super) self_owner: OwnerId,
    pub(super) owner: OwnerId,
    pub(super) self_frame: Option<FrameId>,
    pub(super) owner_frame: Option<FrameId>,
    pub(super) alloc_type: Option<FrameId>,
    /// Ranges into the shared `flat` vectors of [`FactCache`].
    pub(super) anywhere: (u32, u32),
    pub(super) categories: (u32, u32),
    pub(super) unclassified: (u32, u32),
    /// Frames in the stack (allocated-type leaves skipped unless they are frames).
    pub(super) depth: usize,
    /// The sample had no frame at all (not even an allocated type).
    pub(super) stackless: bool,
    /// Only transparent frames, and no root: a stack cut short (see [`super::quality`]).
    pub(super) ownerless: bool,
    pub(super) leaf_unresolved: bool,
    pub(super) owner_unresolved: bool,
    /// Some frame (or the empty stack) is unresolved: what the anywhere view cannot place.
    pub(super) any_unresolved: bool,
    /// The leaf is an address without a symbol, owned through a module rule.
    pub(super) leaf_module_only: bool,
    /// The interpreter it runs in with no function of its language in it (see
    /// [`super::quality`]).
    pub(super) interpreter_only: Option<Runtime>,
}

pub(super) struct FactCache<'a> {
    /// What a stack's owners are read from, and how.
    pub(super) walk: StackWalk<'a>,
    /// Facts of the stacks that more than one row refers to; every other stack's
    /// facts are computed once, used by its row and dropped, so that memory does not grow by
    /// a [`StackFacts`] per distinct stack (issue 17).
    pub(super) facts: FxHashMap<StackId, StackFacts>,
    /// Per stack: how many weighed rows refer to it, saturating at 2; facts are kept for 2.
    /// Empty when each stack is asked for once.
    pub(super) rows_per_stack: Vec<u8>,
    /// Lengths of the flat vectors that kept facts refer to; a stack that is not kept is
    /// computed past them, and its ranges stay valid until the next [`FactCache::get`].
    pub(super) kept_lens: (usize, usize, usize),
    pub(super) owners_flat: Vec<OwnerId>,
    pub(super) categories_flat: Vec<u8>,
    pub(super) frames_flat: Vec<FrameId>,
    /// Which owners, categories and unclassified frames the stack being computed has shown.
    pub(super) owners_seen: Marks,
    pub(super) categories_seen: Marks,
    pub(super) frames_seen: Marks,
    /// What the facts ask of each distinct frame, by `FrameId`.
    pub(super) traits: Vec<FrameTraits>,
}

impl<'a> FactCache<'a> {
    pub(super) fn new(
        profile: &'a Profile,
        rules: &'a RuleSet,
        classes: &'a Classification,
        types_as_frames: bool,
        rows_per_stack: Vec<u8>,
    ) -> FactCache<'a> {
        let traits = frame_traits(profile, classes);
        FactCache::with_traits(
            profile,
            rules,
            classes,
            types_as_frames,
            rows_per_stack,
            traits,
        )
    }

    /// [`FactCache::new`] with the frames' traits made already.
    pub(super) fn with_traits(
        profile: &'a Profile,
        rules: &'a RuleSet,
        classes: &'a Classification,
        types_as_frames: bool,
        rows_per_stack: Vec<u8>,
        traits: Vec<FrameTraits>,
    ) -> FactCache<'a> {
        FactCache {
            walk: StackWalk {
                profile,
                rules,
                classes,
                types_as_frames,
            },
            facts: FxHashMap::default(),
            rows_per_stack,
            kept_lens: (0, 0, 0),
            owners_flat: Vec::new(),
            categories_flat: Vec::new(),
            frames_flat: Vec::new(),
            owners_seen: Marks::new(rules.owners().len()),
            categories_seen: Marks::new(Category::ALL.len()),
            frames_seen: Marks::new(profile.frame_count()),
            traits,
        }
    }

    /// The facts of `stack`; their ranges into the flat vectors hold until the next call.
    pub(super) fn get(&mut self, stack: StackId) -> StackFacts {
        if let Some(f) = self.facts.get(&stack) {
            return f.clone();
        }
        let (owners, categories, frames) = self.kept_lens;
        self.owners_flat.truncate(owners);
        self.categories_flat.truncate(categories);
        self.frames_flat.truncate(frames);
        let f = self.compute(stack);
        if self.rows_per_stack.get(stack.0 as usize) == Some(&2) {
            self.kept_lens = (
                self.owners_flat.len(),
                self.categories_flat.len(),
                self.frames_flat.len(),
            );
            self.facts.insert(stack, f.clone());
        }
        f
    }

    /// [`StackWalk::owned_frames`], with each frame's kind read from its traits.
    fn owned_frames(&self, stack: StackId) -> &'a [FrameId] {
        (self.walk).owned_frames_by(stack, |f| self.traits[f.0 as usize].alloc_type)
    }

    fn compute(&mut self, stack: StackId) -> StackFacts {
        let all = self.walk.profile.stack(stack);
        let alloc_type = all
            .first()
            .copied()
            .filter(|&f| self.traits[f.0 as usize].alloc_type);
        let frames = self.owned_frames(stack);
        let (StackOwners { self_owner, owner }, owner_frame, owner_pos) = self.walk.walk(frames);
        let (anywhere, categories, unclassified) = self.collect_owners(frames);
        let traits = |f: FrameId| self.traits[f.0 as usize];
        let owner_of = |f: FrameId| self.walk.classes.owner_of(f);
        let frame = |f: FrameId| self.walk.profile.frame(f);
        let unresolved = |f: Option<FrameId>| f.is_none_or(|f| traits(f).unresolved);
        let leaf_unresolved = unresolved(frames.first().copied());
        StackFacts {
            stackless: all.is_empty(),
            depth: frames.len(),
            ownerless: owner_pos.is_none()
                && !self.walk.profile.meta.recording.whole_stacks
                && is_cut_short(
                    &frames
                        .iter()
                        .map(|&f| (frame(f), owner_of(f)))
                        .collect::<Vec<_>>(),
                ),
            leaf_unresolved,
            owner_unresolved: unresolved(owner_frame),
            any_unresolved: frames.is_empty() || frames.iter().any(|&f| traits(f).unresolved),
            interpreter_only: is_interpreter_only(frames.iter().map(|&f| traits(f).python)),
            leaf_module_only: !leaf_unresolved
                && frames.first().is_some_and(|&f| traits(f).unknown),
            self_owner,
            owner,
            self_frame: frames.first().copied(),
            owner_frame,
            alloc_type,
            anywhere,
            categories,
            unclassified,
        }
    }

    /// Appends the distinct owners, categories and unclassified frames of `frames` to the flat
    /// lists; their ranges there (an empty stack is the unsymbolized owner's).
    #[allow(clippy::type_complexity)]
    fn collect_owners(&mut self, frames: &[FrameId]) -> ((u32, u32), (u32, u32), (u32, u32)) {
        let start = self.owners_flat.len() as u32;
        let cat_start = self.categories_flat.len() as u32;
        let unc_start = self.frames_flat.len() as u32;
        if frames.is_empty() {
            self.owners_flat.push(OwnerId::UNSYMBOLIZED);
            self.categories_flat.push(category_index(Category::Unknown));
        }
        self.owners_seen.clear();
        self.categories_seen.clear();
        self.frames_seen.clear();
        for &f in frames {
            let o = self.walk.classes.owner_of(f);
            if self.owners_seen.insert(o.0 as usize) {
                self.owners_flat.push(o);
                let c = category_index(self.walk.rules.owner(o).category);
                if self.categories_seen.insert(c as usize) {
                    self.categories_flat.push(c);
                }
            }
            if o == OwnerId::UNCLASSIFIED && self.frames_seen.insert(f.0 as usize) {
                self.frames_flat.push(f);
            }
        }
        (
            (start, self.owners_flat.len() as u32),
            (cat_start, self.categories_flat.len() as u32),
            (unc_start, self.frames_flat.len() as u32),
        )
    }
}

/// What a stack's facts ask of one frame, judged once per distinct frame: a stack then reads
/// a few bytes per frame instead of the frame itself (cold memory on millions of distinct
/// frames) and its texts.
#[derive(Debug, Clone, Copy)]
pub(super) struct FrameTraits {
    alloc_type: bool,
    /// An address without a symbol ([`FrameKind::Unknown`]).
    unknown: bool,
    /// Unresolved as its owner leaves it ([`is_unresolved`]).
    unresolved: bool,
    python: InterpreterRole,
}

impl FrameTraits {
    fn of(frame: &Frame, owner: OwnerId) -> FrameTraits {
        FrameTraits {
            alloc_type: frame.kind == FrameKind::AllocType,
            unknown: frame.kind == FrameKind::Unknown,
            unresolved: is_unresolved(frame, owner),
            python: InterpreterRole::of(frame),
        }
    }
}

/// Every frame's [`FrameTraits`]: on every core past [`PARALLEL_GROUPING`] frames, each
/// read being cold memory on millions of distinct frames.
pub(super) fn frame_traits(profile: &Profile, classes: &Classification) -> Vec<FrameTraits> {
    use rayon::prelude::*;
    let of = |(frame, &owner): (&Frame, &OwnerId)| FrameTraits::of(frame, owner);
    if profile.frame_count() >= PARALLEL_GROUPING {
        (profile.frame_slice().par_iter().zip(&classes.frame_owner))
            .map(of)
            .collect()
    } else {
        (profile.frames().zip(&classes.frame_owner))
            .map(of)
            .collect()
    }
}

/// The position of `c` in [`Category::ALL`]: the one order of categories, which indexes the
/// per-category weights, the `--by category` rows, the gate's category subjects and the
/// flame colours.
pub fn category_index(c: Category) -> u8 {
    // `Category::ALL` lists the categories in their declaration order (asserted below), so a
    // category's position is its discriminant: no search, on every row of a report
    c as u8
}

const _: () = {
    let mut i = 0;
    while i < Category::ALL.len() {
        assert!(Category::ALL[i] as usize == i);
        i += 1;
    }
};

/// Frames at least this many are judged ([`frame_traits`]) and grouped (the frame lists) on
/// every core.
pub(super) const PARALLEL_GROUPING: usize = 1 << 16;

// Frame predicates: what the facts of a stack ask of its frames, each judged once per
// distinct frame (FrameTraits) or once per distinct stack (StackFacts).

/// Function names a complete stack ends in: process and thread entry points of C, the JVM,
/// Go, Python, V8 and the kernel. Compared without perf's `@GLIBC...` version suffixes.
const ROOTS: &[&str] = &[
    "_start",
    "__libc_start_main",
    "__libc_start_call_main",
    "start_thread",
    "clone",
    "clone3",
    "__clone",
    "__clone3",
    "thread_native_entry",
    "JavaMain",
    "java_start",
    "runtime.goexit",
    "runtime.main",
    "runtime.mstart",
    "runtime.rt0_go",
    "main",
    "ret_from_fork",
    "ret_from_fork_asm",
    "secondary_startup_64",
    "secondary_startup_64_no_verify",
    "x86_64_start_kernel",
    "<module>",
    // V8's pseudo-frames, which a .cpuprofile puts right under its root (issue 29)
    "(garbage collector)",
    "(program)",
    "(idle)",
];

/// Whether `frame` is a process or thread entry point (a stack that reaches it is whole).
fn is_root(frame: &Frame) -> bool {
    let name = frame.name.split('@').next().unwrap_or(&frame.name);
    ROOTS.contains(&name)
}

/// Whether a stack of only transparent frames (`frames` with their owners, leaf first) was
/// cut short: it reaches no root. Go's unwinder never cuts a stack, and pprof drops
/// `runtime.goexit`, so an outermost `runtime.` frame (a GC worker, a system stack) is a root
/// too. A stack holding an unresolved frame of a known mapping (a JIT map, a binary not
/// found) is not judged: the missing symbols are the cause to report there, and the unresolved
/// figures do. An address perf could not even map (`[unknown]` without a module) is what a
/// cut frame-pointer chain leaves behind, so it does not excuse the stack.
pub fn is_cut_short(frames: &[(&Frame, OwnerId)]) -> bool {
    let Some((outermost, _)) = frames.last() else {
        return false;
    };
    let mapped = |f: &Frame| f.module.as_deref().is_some_and(|m| m != UNKNOWN);
    !outermost.name.starts_with("runtime.")
        && !frames
            .iter()
            .any(|(f, o)| is_root(f) || (is_unresolved(f, *o) && mapped(f)))
}

/// Whether `frame`, owned by `owner`, is an address that nothing places (see
/// [`super::quality`]'s module doc).
pub fn is_unresolved(frame: &Frame, owner: OwnerId) -> bool {
    if frame.kind != FrameKind::Unknown {
        return false;
    }
    owner == OwnerId::UNSYMBOLIZED
        || frame.module.as_deref().is_none_or(|m| {
            let basename = m.rsplit('/').next().unwrap_or(m);
            perf::is_jit_module(basename) || m == "//anon" || m.starts_with("[anon")
        })
}

/// Whether `frame` is a Python function: py-spy's and async-profiler-like `_[0]` frames, or
/// a Python 3.12+ `-X perf` trampoline (`py::work:/app/churn.py`).
pub fn is_python_frame(frame: &Frame) -> bool {
    frame.kind == FrameKind::Interpreted || frame.name.starts_with("py::")
}

/// What one frame tells about an interpreter, judged once per distinct frame: a stack's
/// verdict ([`is_interpreter_only`]) then reads these instead of every frame's texts.
#[derive(Debug, Clone, Copy, Default)]
pub struct InterpreterRole {
    /// Code of an interpreter or VM ([`ecosystem::interpreter_of_module`]).
    interpreter: Option<Runtime>,
    /// A function of a language: Python, Ruby, Erlang ([`is_language_frame`]).
    language: bool,
}

impl InterpreterRole {
    pub fn of(frame: &Frame) -> InterpreterRole {
        InterpreterRole {
            interpreter: (frame.module.as_deref()).and_then(ecosystem::interpreter_of_module),
            language: is_language_frame(frame),
        }
    }
}

/// Whether `frame` is a function of an interpreted or JIT-compiled language whose
/// interpreter perf could see instead: a Python function ([`is_python_frame`]), a Ruby method
/// (rbspy's, YJIT's map), an Erlang function (the BEAM's map).
fn is_language_frame(frame: &Frame) -> bool {
    is_python_frame(frame) || (frame.kind == FrameKind::Jit && frame.module.is_none())
}

/// The interpreter a stack runs in with no function of its language in it, if it does.
pub fn is_interpreter_only(roles: impl Iterator<Item = InterpreterRole>) -> Option<Runtime> {
    let (mut interpreter, mut language) = (None, false);
    for role in roles {
        interpreter = interpreter.or(role.interpreter);
        language |= role.language;
    }
    interpreter.filter(|_| !language)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpython_interpreter_modules_and_python_frames() {
        for m in [
            "/usr/bin/python3.11",
            "python3",
            "/opt/lib/libpython3.12.so.1.0",
        ] {
            assert_eq!(
                ecosystem::interpreter_of_module(m),
                Some(Runtime::CPython),
                "{m}"
            );
        }
        for m in [
            "/usr/bin/python3.11-config",
            "python3-foo",
            "/lib/libc.so.6",
        ] {
            assert_eq!(ecosystem::interpreter_of_module(m), None, "{m}");
        }
        let native = |name: &str, module: &str| Frame {
            name: name.into(),
            module: Some(module.into()),
            ..Frame::default()
        };
        let eval = native("_PyEval_EvalFrameDefault", "/usr/bin/python3.11");
        let main = native("main", "/usr/bin/python3.11");
        let only = |frames: &[&Frame]| {
            is_interpreter_only(frames.iter().map(|f| InterpreterRole::of(f))).is_some()
        };
        assert!(only(&[&eval, &main]));
        // a Python 3.12 `-X perf` trampoline names the Python function
        let py = native("py::work:/app/churn.py", "/tmp/perf-1.map");
        assert!(!only(&[&eval, &py, &main]));
        let libc = native("memcpy", "/lib/libc.so.6");
        assert!(!only(&[&libc]));
    }
}
