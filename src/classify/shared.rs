//! The rule sets of `report --each` (issue 16): a fleet's inputs classified each as
//! `whose report FILE` would classify it, by rule sets compiled once per distinct detection
//! and shared by the inputs that agree on it, each remembering the owners it has given frames.
//! The policy of what a rule set holds stays [`RuleSet::build_classified`]'s: this module
//! only decides which inputs may share one ([`SharedRuleSets::classified`]).

use super::own_code::Guesses;
use super::presets::DetectMemo;
use super::{Classification, Decided, RuleOptions, RuleSet};
use crate::error::Result;
use crate::model::{Frame, OwnerId, Profile};
use rustc_hash::FxHashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// The rule sets of a run, each compiled once: an input's rule set depends on its frames only
/// through the presets detected from them and the own code guessed from them (see
/// [`RuleSet::build`]), so inputs that agree on both share one. Both are found without compiling
/// the full set: the presets by [`presets::detect`], the own code against a set of those presets
/// alone (itself compiled once per preset list), which is what `RuleSet::build` guesses it
/// against. The sets are `RuleSet::build_base`'s: the guessed owners of third-party units,
/// which differ from input to input, are added per input to a copy
/// ([`SharedRuleSets::classified`]).
pub struct SharedRuleSets {
    options: RuleOptions,
    /// The presets the `--rules` files extend, which every rule set loads.
    extended: Vec<String>,
    presets_alone: Mutex<Vec<(Vec<String>, Arc<RuleSet>)>>,
    sets: Mutex<Vec<(RuleKey, Arc<SharedRules>)>>,
    /// Frames remembered by all of `sets`, against [`REMEMBERED_FRAMES`].
    remembered: AtomicUsize,
    /// The presets' signatures each frame matched, for detection without `--preset`.
    detected: DetectMemo,
}

/// One compiled rule set and the owners it has given frames so far (with what decided each): a fleet's inputs repeat
/// the same frames (each service's profiles share their binaries), and classifying a frame
/// (glob and regex matchers against every block) costs far more than looking it up.
struct SharedRules {
    set: Arc<RuleSet>,
    owners: Mutex<FxHashMap<Frame, (OwnerId, Decided)>>,
}

/// Frames remembered in all rule sets together at most: past it, new frames are classified
/// each time, so memory stays bounded (about 150 bytes a frame, some 80 MB) however many
/// distinct programs and frames a fleet has.
const REMEMBERED_FRAMES: usize = 1 << 19;

impl SharedRules {
    /// What `RuleSet::classify` gives, each remembered frame looked up instead of matched.
    fn classify(&self, profile: &Profile, remembered: &AtomicUsize) -> Classification {
        let mut known: Vec<Option<(OwnerId, Decided)>> = {
            let owners = lock(&self.owners);
            profile.frames().map(|f| owners.get(f).copied()).collect()
        };
        // room is taken before classifying, so that only frames that will be remembered are
        // copied: an input of 5 M distinct frames past the cap no longer clones each of them
        // into a list that is then dropped (issue 23)
        let new = known.iter().filter(|o| o.is_none()).count();
        let kept = take_room(remembered, new);
        let mut learned = Vec::with_capacity(kept);
        for (frame, owner) in profile.frames().zip(&mut known) {
            if owner.is_none() {
                let decided = self.set.decide_frame(frame);
                *owner = Some(decided);
                if learned.len() < kept {
                    learned.push((frame.clone(), decided));
                }
            }
        }
        if !learned.is_empty() {
            lock(&self.owners).extend(learned);
        }
        let (frame_owner, decided) = known.into_iter().flatten().unzip();
        Classification {
            frame_owner,
            decided,
        }
    }
}

/// Claims room for up to `want` frames under [`REMEMBERED_FRAMES`] and returns how many it
/// got; one atomic update, so workers never claim more than the cap between them.
fn take_room(remembered: &AtomicUsize, want: usize) -> usize {
    let mut kept = 0;
    let _ = remembered.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |used| {
        kept = want.min(REMEMBERED_FRAMES.saturating_sub(used));
        Some(used + kept)
    });
    kept
}

/// What makes one input's rule set differ from another's.
type RuleKey = (Vec<String>, Guesses);

impl SharedRuleSets {
    pub fn new(options: &RuleOptions) -> Result<SharedRuleSets> {
        // an unknown preset, a bad rule file or `--through` name is the run's error, found
        // before the first input rather than once per input; `--through` may name an owner of
        // a preset that only detection loads, so it is checked here only without detection
        let detects = options.presets.is_empty() && !options.no_presets;
        let checked = RuleOptions {
            through: if detects {
                Vec::new()
            } else {
                options.through.clone()
            },
            ..options.clone()
        };
        RuleSet::build(&checked, &[])?;
        let mut extended = Vec::new();
        for path in &options.rule_files {
            extended.extend(super::rules::load(path)?.extend);
        }
        Ok(SharedRuleSets {
            options: options.clone(),
            extended,
            presets_alone: Mutex::default(),
            sets: Mutex::default(),
            remembered: AtomicUsize::new(0),
            detected: DetectMemo::default(),
        })
    }

    /// The rule set `whose report FILE` would build for `profile`, and the profile's
    /// classification against it: the one entry point of a fleet's inputs.
    pub fn classified(&self, profile: &Profile) -> Result<(Arc<RuleSet>, Classification)> {
        let shared = self.get(profile)?;
        let mut class = shared.classify(profile, &self.remembered);
        // the shared set has no guessed owners: this input's are added to a copy of it (its
        // blocks shared), as `RuleSet::build_classified` adds them for `whose report FILE`
        let through = &self.options.through;
        let set = if shared.set.guesses() || !through.is_empty() {
            let mut set = (*shared.set).clone();
            set.guess_owners(profile, &mut class);
            set.apply_through(through)?;
            Arc::new(set)
        } else {
            shared.set.clone()
        };
        Ok((set, class))
    }

    /// The shared rule set `whose report FILE` would build for `profile`.
    fn get(&self, profile: &Profile) -> Result<Arc<SharedRules>> {
        let one = std::slice::from_ref(profile);
        let (presets, _) = RuleSet::chosen_presets(&self.options, one, Some(&self.detected))?;
        let alone = self.presets_alone(&presets)?;
        let claimed = |frame: &Frame| alone.claims(frame);
        let key: RuleKey = (
            presets,
            RuleSet::guess_own_code(&self.options, &alone.presets, one, &claimed),
        );
        if let Some((_, set)) = lock(&self.sets).iter().find(|(k, _)| *k == key) {
            return Ok(set.clone());
        }
        // compiled outside the lock; two workers may both compile a new key once
        let set = Arc::new(SharedRules {
            set: Arc::new(RuleSet::build_base(&self.options, one)?),
            owners: Mutex::default(),
        });
        lock(&self.sets).push((key, set.clone()));
        Ok(set)
    }

    /// The presets of `names` and those the rule files extend, and nothing else.
    fn presets_alone(&self, names: &[String]) -> Result<Arc<RuleSet>> {
        if let Some((_, set)) = lock(&self.presets_alone).iter().find(|(n, _)| n == names) {
            return Ok(set.clone());
        }
        let mut presets = self.extended.clone();
        presets.extend(names.iter().cloned());
        let options = RuleOptions {
            presets,
            ..RuleOptions::default()
        };
        let set = Arc::new(RuleSet::build(&options, &[])?);
        lock(&self.presets_alone).push((names.to_vec(), set.clone()));
        Ok(set)
    }
}

/// A lock whose holder cannot leave the list half-changed: a panic elsewhere does not poison
/// what it guards.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
