//! Classification: which owner each distinct frame belongs to.
//!
//! Rules are compiled once into an ordered list of owner blocks (user files first, then
//! presets); a frame's owner is the first block that matches it. Each distinct frame is
//! classified exactly once — the result is a side table indexed by `FrameId`, so the same
//! profile can be classified against several rule sets and `explain` can show which rule
//! decided. Owners and categories themselves are the model's ([`crate::model::Owner`]); which
//! presets a profile needs is read from each preset's own `[detect]` table ([`presets`]).

pub mod auto_owner;
mod block_index;
pub mod ecosystem;
mod glob;
mod guess;
pub mod match_key;
pub mod own_code;
pub mod presets;
mod probe;
pub mod rules;
mod script_files;
pub mod shared;
pub mod unit;

pub use probe::Matched;
pub use rules::{Matchers, Origin, OwnerBlock};

use crate::error::{Error, Result};
use crate::model::{
    Category, Frame, FrameId, FrameKind, Owner, OwnerId, Profile, UNCLASSIFIED, UNSYMBOLIZED,
};
use auto_owner::Unit;
use block_index::{BlockIndex, LazyBlockIndex};
use probe::{Probe, first_in_order};
use rayon::prelude::*;
use rustc_hash::FxHashMap;
use std::path::PathBuf;
use std::sync::Arc;

/// Where the rules come from. Built from the command line.
#[derive(Debug, Clone, Default)]
pub struct RuleOptions {
    /// `--rules FILE`, in order; they come before every preset.
    pub rule_files: Vec<PathBuf>,
    /// `--user PREFIX`: top-priority `user` owners.
    pub user_prefixes: Vec<String>,
    /// `--preset NAME`; empty means "detect from the frames".
    pub presets: Vec<String>,
    /// `--no-presets`: the user's files alone.
    pub no_presets: bool,
    /// `--through OWNER|CATEGORY`: made transparent at run time.
    pub through: Vec<String>,
    /// `--no-guess`: nothing is guessed from the frames, neither the program's own code
    /// ([`own_code`]) nor owners of third-party units ([`auto_owner`]); what no rule names
    /// stays `unclassified`.
    pub no_guess: bool,
    /// Keep what decided each frame's owner ([`Classification::decided`]) for the commands
    /// that name it (`explain`, the HTML page): four bytes a distinct frame, which the others
    /// do not pay (4 MB on a million distinct frames).
    pub keep_reasons: bool,
}

/// The compiled rules: an owner table and the ordered blocks that point into it.
#[derive(Debug, Clone)]
pub struct RuleSet {
    owners: Vec<Owner>,
    /// Shared between clones: `report --each` gives each input a copy of a compiled set with
    /// its own guessed owners, and a regex's clone would start with empty caches.
    blocks: Arc<[(OwnerId, OwnerBlock)]>,
    /// The blocks compiled for finding the first that matches, once enough frames ask
    /// ([`LazyBlockIndex`]); until then, or if they would not compile together, they are
    /// tried one by one.
    index: Arc<LazyBlockIndex>,
    /// Presets in effect, for the report header; `auto` says whether they were detected.
    pub presets: Vec<String>,
    pub presets_detected: bool,
    /// The program's own code guessed from the frames and claimed as `user` (Go's module, a
    /// Rust binary's crate), for the report header and `explain`.
    pub own_code: Vec<own_code::OwnCode>,
    /// The guesses not made, and why (a Rust crate from stacks without call chains).
    pub own_code_declined: Vec<own_code::Declined>,
    /// The third-party units that became guessed owners ([`auto_owner`]), in the order found.
    pub guessed: Vec<Unit>,
    /// The owner of each unit guessed so far: a guessed owner, or an owner of the rules that
    /// has the unit's name.
    guessed_owner: FxHashMap<Unit, OwnerId>,
    /// How units are found, or `None` with `--no-guess`.
    guess_context: Option<auto_owner::Context>,
    /// A block of the rules owns frames as `unclassified`: those are then not guessed.
    rules_name_unclassified: bool,
    /// The preset blocks of owners that lump a whole ecosystem's packages together
    /// ([`auto_owner::is_umbrella_owner`]), and their owners: their frames go to their unit's
    /// guessed owner, the umbrella keeping those without a unit.
    umbrella_blocks: Vec<usize>,
    umbrella_owners: Vec<OwnerId>,
}

/// Why a frame got its owner: the block and the matcher that matched, or the fallback.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reason {
    Rule {
        block: usize,
        matcher: Matched,
    },
    /// No block matched, and the frame's third-party unit owns it ([`auto_owner`]).
    Guessed(Unit),
    NoRuleMatched,
    Unresolved,
}

/// What decided a frame's owner, kept beside it in [`Classification`] so that `explain` and
/// the HTML page name the rule without classifying the frame again: the index of the block
/// that matched, or which fallback. One `u32` a distinct frame, no words: [`RuleSet::reason`]
/// adds the matcher and the unit for the few frames that are shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decided(u32);

impl Decided {
    /// No block matched (or an umbrella's did) and the frame's unit's guessed owner owns it.
    pub const GUESSED: Decided = Decided(u32::MAX);
    pub const UNRESOLVED: Decided = Decided(u32::MAX - 1);
    pub const NO_RULE_MATCHED: Decided = Decided(u32::MAX - 2);

    /// The block that decided, when one did.
    pub fn block(self) -> Option<usize> {
        (self.0 < Self::NO_RULE_MATCHED.0).then_some(self.0 as usize)
    }

    /// The block at `index` decided (a rule set has far fewer blocks than the three values
    /// kept for the fallbacks).
    fn by_block(index: usize) -> Decided {
        Decided(index as u32)
    }
}

impl RuleSet {
    /// The presets a rule set for `profiles` loads, and whether they were detected: none with
    /// `--no-presets`, those of `--preset`, else the ones the frames call for. The one place
    /// this is decided (`report --each` keys its shared rule sets by it).
    /// Detection looks frames up in `memo` when the run shares one.
    pub fn chosen_presets(
        options: &RuleOptions,
        profiles: &[Profile],
        memo: Option<&presets::DetectMemo>,
    ) -> Result<(Vec<String>, bool)> {
        Ok(if options.no_presets {
            (Vec::new(), false)
        } else if options.presets.is_empty() {
            let found = presets::detect(profiles, memo)?;
            (found.iter().map(|s| s.to_string()).collect(), true)
        } else {
            (options.presets.clone(), false)
        })
    }

    /// Builds the rule set for `profiles` (presets, the program's own code and the guessed
    /// owners may come from their frames).
    pub fn build(options: &RuleOptions, profiles: &[Profile]) -> Result<RuleSet> {
        Ok(Self::build_classified(options, profiles)?.0)
    }

    /// [`RuleSet::build`] and each profile's [`Classification`] against it, made in one pass:
    /// the frames no block matches are the ones the guessed owners are found among, so
    /// classifying them again afterwards would double the classification's cost.
    pub fn build_classified(
        options: &RuleOptions,
        profiles: &[Profile],
    ) -> Result<(RuleSet, Vec<Classification>)> {
        let mut set = Self::build_base(options, profiles)?;
        let classify = |p| match options.keep_reasons {
            true => set.classify(p),
            false => set.classify_owners(p),
        };
        let mut classes: Vec<Classification> = profiles.iter().map(classify).collect();
        for (profile, class) in profiles.iter().zip(&mut classes) {
            set.guess_owners(profile, class);
        }
        set.apply_through(&options.through)?;
        Ok((set, classes))
    }

    /// The rule set without guessed owners and without `--through`: the user's rules, the
    /// program's own code and the presets. [`RuleSet::guess_owners`] and
    /// [`RuleSet::apply_through`] complete it; `report --each` shares one between inputs
    /// and completes a copy per input.
    pub fn build_base(options: &RuleOptions, profiles: &[Profile]) -> Result<RuleSet> {
        let mut builder = Builder::with_built_in_owners()?;
        builder.add_users_rules(options)?;
        let (presets, detected) = Self::chosen_presets(options, profiles, None)?;
        for preset in &presets {
            builder.queue_preset(preset, "--preset")?;
        }
        let presets_start = builder.blocks.len();
        builder.load_queued_presets()?;
        let own_code::Guesses {
            found: own_code,
            declined: own_code_declined,
        } = builder.add_own_code(options, profiles, presets_start)?;
        let rust = builder.loaded_presets.iter().any(|p| p == "rust")
            && !own_code_declined
                .iter()
                .any(|d| d.unit == unit::UnitKind::RustCrate);
        let rules_name_unclassified = builder
            .blocks
            .iter()
            .any(|(id, _)| *id == OwnerId::UNCLASSIFIED);
        let (umbrella_blocks, umbrella_owners) = umbrella_blocks(&builder.blocks);
        let index = Arc::new(LazyBlockIndex::default());
        Ok(RuleSet {
            owners: builder.owners,
            blocks: builder.blocks.into(),
            index,
            presets: builder.loaded_presets,
            presets_detected: detected,
            own_code,
            own_code_declined,
            guessed: Vec::new(),
            guessed_owner: FxHashMap::default(),
            guess_context: (!options.no_guess).then_some(auto_owner::Context { rust }),
            rules_name_unclassified,
            umbrella_blocks,
            umbrella_owners,
        })
    }

    /// The program's own code guessed from `profiles` ([`own_code::detect`]), or nothing with
    /// `--no-guess`. The switch is here rather than in each guess so that every ecosystem's
    /// guess obeys it.
    pub fn guess_own_code(
        options: &RuleOptions,
        loaded_presets: &[String],
        profiles: &[Profile],
        claimed_by_presets: &dyn Fn(&Frame) -> bool,
    ) -> own_code::Guesses {
        if options.no_guess {
            own_code::Guesses::default()
        } else {
            own_code::detect(loaded_presets, profiles, claimed_by_presets)
        }
    }

    /// Whether the set guesses owners (no `--no-guess`).
    pub fn guesses(&self) -> bool {
        self.guess_context.is_some()
    }

    /// Gives each frame of `profile` that `class` leaves unclassified the owner of its
    /// third-party unit ([`auto_owner::unit`]), adding an owner per unit not seen before.
    /// Each distinct frame is looked at once, so a guess costs once per profile.
    pub fn guess_owners(&mut self, profile: &Profile, class: &mut Classification) {
        let Some(context) = self.guess_context else {
            return;
        };
        // which frames have a unit to be owned by is judged per frame, on every core; owners
        // are then made in frame order, so their order does not depend on the scheduling
        let units: Vec<(usize, Unit)> = (profile.frame_slice().par_iter())
            .zip(&class.frame_owner)
            .enumerate()
            .filter_map(|(i, (frame, owner))| {
                Some((i, self.guessable_unit(frame, *owner, context)?))
            })
            .collect();
        for (i, unit) in units {
            class.frame_owner[i] = match self.guessed_owner.get(&unit) {
                Some(id) => *id,
                None => self.add_guessed_owner(unit),
            };
            if let Some(decided) = class.decided.get_mut(i) {
                *decided = Decided::GUESSED;
            }
        }
    }

    /// The unit of `frame`, owned by `owner` so far, when the guess gives the frame to it:
    /// an unclassified frame the rules do not call unclassified, or a frame of an umbrella
    /// owner's own preset block.
    fn guessable_unit(
        &self,
        frame: &Frame,
        owner: OwnerId,
        context: auto_owner::Context,
    ) -> Option<Unit> {
        let umbrella = self.umbrella_owners.contains(&owner);
        if owner != OwnerId::UNCLASSIFIED && !umbrella {
            return None;
        }
        let key = match_key::match_key(&frame.name);
        let unit = auto_owner::unit(frame, &key, context)?;
        if umbrella {
            // the umbrella's own preset block, not a rule of that name the user wrote
            let by_umbrella = self
                .first_block(frame, &key)
                .is_some_and(|block| self.umbrella_blocks.contains(&block));
            by_umbrella.then_some(unit)
        } else if self.rules_name_unclassified && self.block_owner(frame).is_some() {
            None // the rules call it unclassified
        } else {
            Some(unit)
        }
    }

    /// The owner of `unit`: a new guessed `library` owner of its name, or the owner of the
    /// rules that has that name already (the unit's other frames are that owner's).
    fn add_guessed_owner(&mut self, unit: Unit) -> OwnerId {
        let id = match self.owners.iter().position(|o| o.name == unit.name) {
            Some(i) => OwnerId(i as u32),
            None => {
                self.owners.push(Owner {
                    name: unit.name.clone(),
                    category: Category::Library,
                    transparent: false,
                    guessed: true,
                });
                self.guessed.push(unit.clone());
                OwnerId(self.owners.len() as u32 - 1)
            }
        };
        self.guessed_owner.insert(unit, id);
        id
    }

    /// Makes each owner or category of `--through` transparent.
    pub fn apply_through(&mut self, through: &[String]) -> Result<()> {
        for what in through {
            self.make_transparent(what)?;
        }
        Ok(())
    }

    fn make_transparent(&mut self, what: &str) -> Result<()> {
        let category = Category::parse(what);
        let mut hit = false;
        for owner in &mut self.owners {
            if owner.name == what || Some(owner.category) == category {
                owner.transparent = true;
                hit = true;
            }
        }
        if hit {
            return Ok(());
        }
        let names: Vec<&str> = self.owners.iter().map(|o| o.name.as_str()).collect();
        Err(Error::Usage(format!(
            "--through {what}: no owner or category of that name; owners are {}; categories are {}",
            names.join(", "),
            Category::ALL.map(Category::as_str).join(", ")
        )))
    }

    pub fn owners(&self) -> &[Owner] {
        &self.owners
    }

    pub fn owner(&self, id: OwnerId) -> &Owner {
        &self.owners[id.0 as usize]
    }

    #[cfg(test)]
    pub fn owner_id(&self, name: &str) -> Option<OwnerId> {
        self.owners
            .iter()
            .position(|o| o.name == name)
            .map(|i| OwnerId(i as u32))
    }

    /// The owner of one frame and why. First matching block wins; a frame no block matches
    /// is its unit's guessed owner's, when the set has guessed one.
    pub fn classify_frame(&self, frame: &Frame) -> (OwnerId, Reason) {
        let (owner, decided) = self.decide_frame(frame);
        (owner, self.reason(frame, decided))
    }

    /// The owner of one frame and what decided it, as [`RuleSet::classify`] keeps them.
    pub fn decide_frame(&self, frame: &Frame) -> (OwnerId, Decided) {
        self.decide(frame, &match_key::match_key(&frame.name))
    }

    /// Why `frame` got its owner, from what [`Classification::decided`] kept: the matcher is
    /// looked for in the one block that decided, the unit taken from the frame, so a frame
    /// shown is never matched against the other blocks again.
    pub fn reason(&self, frame: &Frame, decided: Decided) -> Reason {
        let key = match_key::match_key(&frame.name);
        if let Some(block) = decided.block() {
            let matcher = Probe::new(frame, &key)
                .block_match(&self.blocks[block].1)
                .or_else(|| {
                    let callee = stand_in(frame)?;
                    let key = match_key::match_key(&callee.name);
                    Probe::new(&callee, &key).block_match(&self.blocks[block].1)
                })
                .unwrap_or_default();
            return Reason::Rule { block, matcher };
        }
        match decided {
            Decided::UNRESOLVED => Reason::Unresolved,
            // a frame is guessed only when it has a unit, with guesses on
            Decided::GUESSED => (self.guess_context)
                .and_then(|context| auto_owner::unit(frame, &key, context))
                .map_or(Reason::NoRuleMatched, Reason::Guessed),
            _ => Reason::NoRuleMatched,
        }
    }

    /// The owner of one frame and what decided it, without the words `explain` shows: the
    /// one place the order of blocks, umbrella owners and guesses is decided.
    fn decide(&self, frame: &Frame, key: &str) -> (OwnerId, Decided) {
        // a cgo stub is its C function's, where a rule names that function (issue 53)
        if let Some(callee) = stand_in(frame)
            && let Some(block) = self.first_block(&callee, &match_key::match_key(&callee.name))
        {
            return (self.blocks[block].0, Decided::by_block(block));
        }
        if let Some(block) = self.first_block(frame, key) {
            if self.umbrella_blocks.contains(&block)
                && let Some(owner) = self.guessed(frame, key)
            {
                return (owner, Decided::GUESSED);
            }
            return (self.blocks[block].0, Decided::by_block(block));
        }
        if frame.kind == FrameKind::Unknown {
            return (OwnerId::UNSYMBOLIZED, Decided::UNRESOLVED);
        }
        match self.guessed(frame, key) {
            Some(owner) => (owner, Decided::GUESSED),
            None => (OwnerId::UNCLASSIFIED, Decided::NO_RULE_MATCHED),
        }
    }

    /// The guessed owner of `frame`'s unit, when the set has guessed one.
    fn guessed(&self, frame: &Frame, key: &str) -> Option<OwnerId> {
        let context = self.guess_context?;
        if self.guessed_owner.is_empty() {
            return None;
        }
        let unit = auto_owner::unit(frame, key, context)?;
        self.guessed_owner.get(&unit).copied()
    }

    /// The first block that matches `frame` (whose match key is `key`).
    fn first_block(&self, frame: &Frame, key: &str) -> Option<usize> {
        first_block(&self.blocks, &self.index, frame, key)
    }

    /// Whether some block of the set matches `frame` (guesses aside): what "claimed by the
    /// presets" means when the program's own code is guessed, for `report --each`'s sets
    /// ([`shared`]) as for [`RuleSet::build_base`].
    pub fn claims(&self, frame: &Frame) -> bool {
        let key = match_key::match_key(&frame.name);
        self.first_block(frame, &key).is_some()
    }

    /// The owner the blocks alone give `frame`, if any matches.
    fn block_owner(&self, frame: &Frame) -> Option<OwnerId> {
        let key = match_key::match_key(&frame.name);
        self.first_block(frame, &key)
            .map(|block| self.blocks[block].0)
    }

    /// The owner of every distinct frame of a profile, without what decided it (the
    /// classification's [`Classification::decided`] then panics).
    pub fn classify_owners(&self, profile: &Profile) -> Classification {
        Classification {
            frame_owner: (profile.frame_slice().par_iter())
                .map(|f| self.decide_frame(f).0)
                .collect(),
            decided: Vec::new(),
        }
    }

    /// Classifies every distinct frame of a profile once, keeping what decided each owner.
    pub fn classify(&self, profile: &Profile) -> Classification {
        let (frame_owner, decided) = (profile.frame_slice().par_iter())
            .map(|f| self.decide_frame(f))
            .unzip();
        Classification {
            frame_owner,
            decided,
        }
    }

    pub fn block(&self, index: usize) -> &OwnerBlock {
        &self.blocks[index].1
    }

    /// Every owner block in the order they are tried (`rules list --preset` shows them).
    pub fn blocks(&self) -> impl ExactSizeIterator<Item = &OwnerBlock> {
        self.blocks.iter().map(|(_, block)| block)
    }
}

/// The preset blocks of the owners that lump a whole ecosystem's packages together
/// ([`auto_owner::is_umbrella_owner`]), and their owners: a frame of theirs goes to its unit's
/// guessed owner instead where it has a unit. A rule file's block of that name is the user's
/// choice and is left alone.
fn umbrella_blocks(blocks: &[(OwnerId, OwnerBlock)]) -> (Vec<usize>, Vec<OwnerId>) {
    let umbrella_blocks: Vec<usize> = (blocks.iter().enumerate())
        .filter(|(_, (_, block))| {
            auto_owner::is_umbrella_owner(&block.name)
                && block.origin.file.starts_with(&*presets::origin(""))
        })
        .map(|(i, _)| i)
        .collect();
    let mut umbrella_owners: Vec<OwnerId> = umbrella_blocks.iter().map(|&i| blocks[i].0).collect();
    umbrella_owners.dedup();
    (umbrella_blocks, umbrella_owners)
}

/// The frame a stub stands for: a cgo stub's C function ([`crate::names::cgo_callee`]), a
/// native frame of that name.
fn stand_in(frame: &Frame) -> Option<Frame> {
    // one byte test before the search: most frames are no stub
    if !frame.name.contains("func_") {
        return None;
    }
    let callee = crate::names::cgo_callee(&frame.name)?;
    Some(Frame::named(callee, FrameKind::Native))
}

/// `blocks` compiled for lookup ([`BlockIndex`]).
fn index_blocks(blocks: &[(OwnerId, OwnerBlock)]) -> Option<BlockIndex> {
    BlockIndex::new(blocks.iter().map(|(_, b)| (&b.any, b.all.as_slice())))
}

/// The first of `blocks` that matches `frame` (whose match key is `key`), through `index`
/// once it is compiled.
fn first_block(
    blocks: &[(OwnerId, OwnerBlock)],
    index: &LazyBlockIndex,
    frame: &Frame,
    key: &str,
) -> Option<usize> {
    match index.get(|| index_blocks(blocks)) {
        Some(index) => index.first(frame, key),
        None => first_block_in_order(blocks, frame, key),
    }
}

/// The first of `blocks` that matches, tried one by one.
fn first_block_in_order(
    blocks: &[(OwnerId, OwnerBlock)],
    frame: &Frame,
    key: &str,
) -> Option<usize> {
    let matchers = blocks.iter().map(|(_, b)| (&b.any, b.all.as_slice()));
    first_in_order(matchers, frame, key)
}

/// The owner of every frame of one profile, indexed by `FrameId`, and what decided it.
#[derive(Debug, Clone)]
pub struct Classification {
    pub frame_owner: Vec<OwnerId>,
    /// Beside each owner, the block or fallback that gave it ([`Decided`]).
    decided: Vec<Decided>,
}

impl Classification {
    pub fn owner_of(&self, frame: FrameId) -> OwnerId {
        self.frame_owner[frame.0 as usize]
    }

    /// What decided `frame`'s owner; [`RuleSet::reason`] words it. Kept only when the rules
    /// were built with [`RuleOptions::keep_reasons`].
    pub fn decided(&self, frame: FrameId) -> Decided {
        *(self.decided.get(frame.0 as usize))
            .expect("classified with RuleOptions::keep_reasons, which explain and the page set")
    }
}

/// Accumulates owners and blocks while files and presets are loaded in precedence order.
#[derive(Default)]
struct Builder {
    owners: Vec<Owner>,
    /// Where each owner was first declared, for consistency errors.
    owner_origin: FxHashMap<String, String>,
    blocks: Vec<(OwnerId, OwnerBlock)>,
    queued_presets: Vec<(String, String)>,
    loaded_presets: Vec<String>,
}

impl Builder {
    /// A builder holding the two built-in owners, at the ids the model gives them.
    fn with_built_in_owners() -> Result<Builder> {
        let mut builder = Builder::default();
        let unclassified = builder.add_owner(UNCLASSIFIED, Category::Unknown, Some(false), None)?;
        let unsymbolized = builder.add_owner(UNSYMBOLIZED, Category::Unknown, Some(true), None)?;
        debug_assert_eq!(
            (unclassified, unsymbolized),
            (OwnerId::UNCLASSIFIED, OwnerId::UNSYMBOLIZED)
        );
        Ok(builder)
    }

    /// The user's own rules, first because they win: a `user` block per `--user` prefix, then
    /// the blocks of each `--rules` file, whose `extend`ed presets are queued.
    fn add_users_rules(&mut self, options: &RuleOptions) -> Result<()> {
        for prefix in &options.user_prefixes {
            let block = OwnerBlock {
                name: "user".into(),
                category: Category::User,
                transparent: Some(false),
                any: Matchers {
                    prefix: vec![prefix.clone()],
                    ..Matchers::default()
                },
                all: Vec::new(),
                origin: Origin {
                    guess: None,
                    file: format!("--user {prefix}").into(),
                    line: 0,
                },
            };
            self.add_block(block)?;
        }
        for path in &options.rule_files {
            let file = rules::load(path)?;
            for block in file.blocks {
                self.add_block(block)?;
            }
            for preset in file.extend {
                self.queue_preset(&preset, &path.display().to_string())?;
            }
        }
        Ok(())
    }

    /// The program's own code (Go's module, a Rust binary's crate...), guessed among what no
    /// preset claims (the preset blocks start at `presets_start`), as `user` blocks: after
    /// the user's rules and before the presets, or after them for a guess by module
    /// ([`own_code::Placement`]). Returns the guesses, made and declined.
    fn add_own_code(
        &mut self,
        options: &RuleOptions,
        profiles: &[Profile],
        presets_start: usize,
    ) -> Result<own_code::Guesses> {
        let preset_blocks = &self.blocks[presets_start..];
        let preset_index = LazyBlockIndex::default();
        let claimed_by_presets = |frame: &Frame| {
            let key = match_key::match_key(&frame.name);
            first_block(preset_blocks, &preset_index, frame, &key).is_some()
        };
        let guesses =
            RuleSet::guess_own_code(options, &self.loaded_presets, profiles, &claimed_by_presets);
        let mut before = presets_start;
        for code in &guesses.found {
            match code.placement {
                own_code::Placement::BeforePresets => {
                    self.insert_block(before, code.user_block())?;
                    before += 1;
                }
                own_code::Placement::AfterPresets => self.add_block(code.user_block())?,
            }
        }
        Ok(guesses)
    }

    fn add_owner(
        &mut self,
        name: &str,
        category: Category,
        transparent: Option<bool>,
        origin: Option<&Origin>,
    ) -> Result<OwnerId> {
        let transparent = transparent.unwrap_or_else(|| category.transparent_by_default());
        let origin_text = origin.map_or_else(|| "built in".to_string(), |o| o.to_string());
        if let Some(i) = self.owners.iter().position(|o| o.name == name) {
            let existing = &self.owners[i];
            if existing.category != category || existing.transparent != transparent {
                return Err(Error::Rules {
                    path: PathBuf::from(origin.map_or("", |o| &o.file)),
                    position: crate::error::Position::Line(origin.map_or(0, |o| o.line)),
                    message: format!(
                        "owner `{name}` is declared as {category}{} here but as {}{} at {}; \
                         blocks of one owner must agree on category and transparency",
                        if transparent { " (transparent)" } else { "" },
                        existing.category,
                        if existing.transparent {
                            " (transparent)"
                        } else {
                            ""
                        },
                        self.owner_origin[name]
                    ),
                });
            }
            return Ok(OwnerId(i as u32));
        }
        self.owners.push(Owner {
            name: name.to_string(),
            category,
            transparent,
            guessed: false,
        });
        self.owner_origin.insert(name.to_string(), origin_text);
        Ok(OwnerId(self.owners.len() as u32 - 1))
    }

    fn add_block(&mut self, block: OwnerBlock) -> Result<()> {
        let id = self.add_owner(
            &block.name,
            block.category,
            block.transparent,
            Some(&block.origin),
        )?;
        self.blocks.push((id, block));
        Ok(())
    }

    /// [`Builder::add_block`] at position `index` of the blocks.
    fn insert_block(&mut self, index: usize, block: OwnerBlock) -> Result<()> {
        self.add_block(block)?;
        let added = self.blocks.pop().expect("add_block pushed it");
        self.blocks.insert(index, added);
        Ok(())
    }

    fn queue_preset(&mut self, name: &str, requested_by: &str) -> Result<()> {
        if presets::text(name).is_none() {
            return Err(Error::Usage(format!(
                "unknown preset `{name}` (from {requested_by}); presets are: {}",
                presets::names().collect::<Vec<_>>().join(", ")
            )));
        }
        self.queued_presets
            .push((name.to_string(), requested_by.to_string()));
        Ok(())
    }

    /// Loads queued presets in order; a preset's `extend`s load right after it (depth
    /// first), and each preset loads once, at its first position.
    fn load_queued_presets(&mut self) -> Result<()> {
        let queued = std::mem::take(&mut self.queued_presets);
        for (name, _) in queued {
            self.load_preset(&name, 0)?;
        }
        Ok(())
    }

    fn load_preset(&mut self, name: &str, depth: usize) -> Result<()> {
        if self.loaded_presets.iter().any(|p| p == name) || depth > 16 {
            return Ok(());
        }
        let file = presets::parsed(name)?;
        self.loaded_presets.push(name.to_string());
        for block in file.blocks {
            self.add_block(block)?;
        }
        for extended in file.extend {
            self.load_preset(&extended, depth + 1)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::cases::temp_file;
    use crate::model::{SampleType, Unit as WeightUnit};

    /// One sample per stack of `(leaf, module)` frames under a Rust `main`.
    fn profile(leaves: &[(&str, Option<&str>)]) -> Profile {
        let mut p = Profile::new(vec![SampleType::new("samples", WeightUnit::Count)]);
        for (name, module) in leaves {
            let main = p.intern_frame(Frame::named("app::main", FrameKind::Native));
            let mut frame = Frame::named(*name, FrameKind::Native);
            frame.module = module.map(Into::into);
            let leaf = p.intern_frame(frame);
            let stack = p.intern_stack(&[leaf, main]);
            p.add_sample(stack, None, &[1]);
        }
        p
    }

    /// Without `keep_reasons` the owners are the same, and nothing else is kept.
    fn same_owners_without_reasons(options: &RuleOptions, p: &Profile, kept: &Classification) {
        let plain = RuleSet::build_classified(
            &RuleOptions {
                keep_reasons: false,
                ..options.clone()
            },
            std::slice::from_ref(p),
        )
        .unwrap()
        .1;
        assert_eq!(plain[0].frame_owner, kept.frame_owner);
        assert!(plain[0].decided.is_empty());
    }

    #[test]
    fn one_guessed_owner_per_unit_and_the_rules_win() {
        let p = profile(&[
            ("flate2::zio::Writer::write", None),
            ("flate2::ffi::init", None),
            ("sha2::compress", None),
            ("foo_init", Some("/opt/lib/libfoo.so.1")),
            ("plain_c", None),
        ]);
        let options = RuleOptions {
            presets: vec!["rust".into()],
            user_prefixes: vec!["sha2::".into()],
            keep_reasons: true,
            ..RuleOptions::default()
        };
        let (set, classes) = RuleSet::build_classified(&options, std::slice::from_ref(&p)).unwrap();
        let names: Vec<&str> = set.guessed.iter().map(|u| u.name.as_str()).collect();
        assert_eq!(names, ["flate2", "libfoo.so"]);
        let flate2 = set.owner_id("flate2").unwrap();
        assert!(set.owner(flate2).guessed);
        assert_eq!(set.owner(flate2).category, Category::Library);
        same_owners_without_reasons(&options, &p, &classes[0]);
        let owner_of = |name: &str| {
            let (id, f) = p
                .frames()
                .enumerate()
                .find(|(_, f)| &*f.name == name)
                .unwrap();
            assert_eq!(set.decide_frame(f).0, set.classify_frame(f).0, "{name}");
            // the one-pass classification and classify_frame (explain) agree, on the owner
            // and on the rule kept beside it
            assert_eq!(
                classes[0].frame_owner[id],
                set.classify_frame(f).0,
                "{name}"
            );
            assert_eq!(
                set.reason(f, classes[0].decided(FrameId(id as u32))),
                set.classify_frame(f).1,
                "{name}"
            );
            set.owner(set.classify_frame(f).0).name.clone()
        };
        assert_eq!(owner_of("flate2::ffi::init"), "flate2");
        assert_eq!(owner_of("sha2::compress"), "user"); // --user wins
        assert_eq!(owner_of("foo_init"), "libfoo.so");
        assert_eq!(owner_of("plain_c"), UNCLASSIFIED);
        let f = p
            .frames()
            .find(|f| &*f.name == "flate2::ffi::init")
            .unwrap();
        assert_eq!(
            set.classify_frame(f).1,
            Reason::Guessed(Unit {
                kind: unit::UnitKind::RustCrate,
                name: "flate2".into()
            })
        );
        // without guesses: no owner, and no own code either
        let off = RuleOptions {
            no_guess: true,
            ..options
        };
        let (set, classes) = RuleSet::build_classified(&off, std::slice::from_ref(&p)).unwrap();
        assert!(set.guessed.is_empty() && !set.guesses() && set.own_code.is_empty());
        let unclassified = classes[0]
            .frame_owner
            .iter()
            .filter(|&&o| o == OwnerId::UNCLASSIFIED)
            .count();
        // every frame but sha2's (--user): app::main, both of flate2's, foo_init, plain_c
        assert_eq!(unclassified, 5);
    }

    #[test]
    fn a_guess_is_joined_to_a_rule_owner_of_the_same_name() {
        // a rules owner `flate2` that names only `flate2::zio::`: the crate's other frames
        // join it rather than make a second owner of one name
        let (_dir, rules) = temp_file(
            "r.toml",
            "[[owner]]\nname = \"flate2\"\ncategory = \"library\"\nprefix = [\"flate2::zio::\"]\n",
        );
        let p = profile(&[
            ("flate2::zio::Writer::write", None),
            ("flate2::ffi::init", None),
        ]);
        let options = RuleOptions {
            rule_files: vec![rules],
            presets: vec!["rust".into()],
            ..RuleOptions::default()
        };
        let (set, classes) = RuleSet::build_classified(&options, std::slice::from_ref(&p)).unwrap();
        assert!(set.guessed.is_empty());
        let flate2 = set.owner_id("flate2").unwrap();
        assert!(!set.owner(flate2).guessed);
        assert_eq!(
            set.owners().iter().filter(|o| o.name == "flate2").count(),
            1
        );
        assert_eq!(
            classes[0]
                .frame_owner
                .iter()
                .filter(|&&o| o == flate2)
                .count(),
            2
        );
    }
}
