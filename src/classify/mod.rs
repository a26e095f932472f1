//! Classification: which owner each distinct frame belongs to.
//!
//! Rules are compiled once into an ordered list of owner blocks (user files first, then
//! presets); a frame's owner is the first block that matches it. Each distinct frame is
//! classified exactly once — the result is a side table indexed by `FrameId`, so the same
//! profile can be classified against several rule sets and `explain` can show which rule
//! decided. Owners and categories themselves are the model's ([`crate::model::Owner`]); which
//! presets a profile needs is read from each preset's own `[detect]` table ([`presets`]).

mod glob;
pub mod go_module;
pub mod match_key;
pub mod own_code;
pub mod presets;
pub mod rules;
pub mod rust_crate;

pub use rules::{Matchers, Origin, OwnerBlock};

use crate::error::{Error, Result};
use crate::model::{
    Category, Frame, FrameId, FrameKind, Owner, OwnerId, Profile, UNCLASSIFIED, UNSYMBOLIZED,
};
use rustc_hash::FxHashMap;
use std::path::PathBuf;

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
}

/// The compiled rules: an owner table and the ordered blocks that point into it.
#[derive(Debug, Clone)]
pub struct RuleSet {
    owners: Vec<Owner>,
    blocks: Vec<(OwnerId, OwnerBlock)>,
    /// Presets in effect, for the report header; `auto` says whether they were detected.
    pub presets: Vec<String>,
    pub presets_detected: bool,
    /// The program's own code guessed from the frames and claimed as `user` (Go's module, a
    /// Rust binary's crate), for the report header and `explain`.
    pub own_code: Vec<own_code::OwnCode>,
}

/// Why a frame got its owner: the block and the matcher that matched, or the fallback.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reason {
    Rule { block: usize, matcher: String },
    NoRuleMatched,
    Unresolved,
}

impl RuleSet {
    /// The presets a rule set for `profiles` loads, and whether they were detected: none with
    /// `--no-presets`, those of `--preset`, else the ones the frames call for. The one place
    /// this is decided (`report --each` keys its shared rule sets by it).
    pub fn chosen_presets(
        options: &RuleOptions,
        profiles: &[Profile],
    ) -> Result<(Vec<String>, bool)> {
        Ok(if options.no_presets {
            (Vec::new(), false)
        } else if options.presets.is_empty() {
            let found = presets::detect(profiles)?;
            (found.iter().map(|s| s.to_string()).collect(), true)
        } else {
            (options.presets.clone(), false)
        })
    }

    /// Builds the rule set for one profile (presets may be detected from its frames).
    pub fn build(options: &RuleOptions, profiles: &[Profile]) -> Result<RuleSet> {
        let mut builder = Builder::default();
        let unclassified = builder.add_owner(UNCLASSIFIED, Category::Unknown, Some(false), None)?;
        let unsymbolized = builder.add_owner(UNSYMBOLIZED, Category::Unknown, Some(true), None)?;
        debug_assert_eq!(
            (unclassified, unsymbolized),
            (OwnerId::UNCLASSIFIED, OwnerId::UNSYMBOLIZED)
        );
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
                    file: format!("--user {prefix}").into(),
                    line: 0,
                },
            };
            builder.add_block(block)?;
        }
        for path in &options.rule_files {
            let file = rules::load(path)?;
            for block in file.blocks {
                builder.add_block(block)?;
            }
            for preset in file.extend {
                builder.queue_preset(&preset, &path.display().to_string())?;
            }
        }
        let (presets, detected) = Self::chosen_presets(options, profiles)?;
        for preset in &presets {
            builder.queue_preset(preset, "--preset")?;
        }
        let presets_start = builder.blocks.len();
        builder.load_queued_presets()?;
        // the program's own code (Go's module, a Rust binary's crate), guessed among what no
        // preset claims, goes after the user's rules and before the presets
        let preset_blocks = &builder.blocks[presets_start..];
        let claimed_by_presets = |frame: &Frame| {
            let key = match_key::match_key(&frame.name);
            let probe = Probe::new(frame, &key);
            preset_blocks
                .iter()
                .any(|(_, block)| probe.block_match(block).is_some())
        };
        let own_code = own_code::detect(&builder.loaded_presets, profiles, &claimed_by_presets);
        for (i, code) in own_code.iter().enumerate() {
            builder.insert_block(presets_start + i, code.user_block())?;
        }
        let mut set = RuleSet {
            owners: builder.owners,
            blocks: builder.blocks,
            presets: builder.loaded_presets,
            presets_detected: detected,
            own_code,
        };
        for through in &options.through {
            set.make_transparent(through)?;
        }
        Ok(set)
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

    /// The owner of one frame and why. First matching block wins.
    pub fn classify_frame(&self, frame: &Frame) -> (OwnerId, Reason) {
        let key = match_key::match_key(&frame.name);
        let probe = Probe::new(frame, &key);
        for (index, (owner, block)) in self.blocks.iter().enumerate() {
            if let Some(matcher) = probe.block_match(block) {
                return (
                    *owner,
                    Reason::Rule {
                        block: index,
                        matcher,
                    },
                );
            }
        }
        if frame.kind == FrameKind::Unknown {
            (OwnerId::UNSYMBOLIZED, Reason::Unresolved)
        } else {
            (OwnerId::UNCLASSIFIED, Reason::NoRuleMatched)
        }
    }

    /// Classifies every distinct frame of a profile once.
    pub fn classify(&self, profile: &Profile) -> Classification {
        let frame_owner = profile.frames().map(|f| self.classify_frame(f).0).collect();
        Classification { frame_owner }
    }

    pub fn block(&self, index: usize) -> &OwnerBlock {
        &self.blocks[index].1
    }

    /// Every owner block in the order they are tried (`rules list --preset` shows them).
    pub fn blocks(&self) -> impl ExactSizeIterator<Item = &OwnerBlock> {
        self.blocks.iter().map(|(_, block)| block)
    }
}

/// The owner of every frame of one profile, indexed by `FrameId`.
#[derive(Debug, Clone)]
pub struct Classification {
    pub frame_owner: Vec<OwnerId>,
}

impl Classification {
    pub fn owner_of(&self, frame: FrameId) -> OwnerId {
        self.frame_owner[frame.0 as usize]
    }
}

/// What a frame offers to matchers, computed once per frame.
struct Probe<'a> {
    frame: &'a Frame,
    key: &'a str,
    module: Option<&'a str>,
    krate: Option<&'a str>,
}

impl<'a> Probe<'a> {
    /// `key` is the frame's [`match_key::match_key`].
    fn new(frame: &'a Frame, key: &'a str) -> Probe<'a> {
        Probe {
            frame,
            key,
            module: frame.module_basename(),
            krate: match_key::rust_crate(key),
        }
    }

    /// Which matcher of the block matched, as text for `explain`.
    fn block_match(&self, block: &OwnerBlock) -> Option<String> {
        self.first_match(&block.any, &block.all)
    }

    /// Which of `any` matched, or that one entry of `all` did.
    fn first_match(&self, any: &Matchers, all: &[Matchers]) -> Option<String> {
        if let Some(m) = self.any_match(any) {
            return Some(m);
        }
        all.iter()
            .find(|entry| self.all_match(entry))
            .map(|_| "all [...]".to_string())
    }

    fn any_match(&self, m: &Matchers) -> Option<String> {
        if let Some(p) = m.prefix.iter().find(|p| self.key.starts_with(p.as_str())) {
            return Some(format!("prefix {p:?}"));
        }
        if let Some(r) = m.regex.iter().find(|r| r.is_match(&self.frame.name)) {
            return Some(format!("regex {:?}", r.as_str()));
        }
        if let Some(module) = self.module
            && let Some(g) = m.module.iter().find(|g| g.matches(module))
        {
            return Some(format!("module {:?}", g.as_string()));
        }
        if let Some(file) = self.frame.file.as_deref()
            && let Some(g) = m.file.iter().find(|g| g.matches(file))
        {
            return Some(format!("file {:?}", g.as_string()));
        }
        if let Some(krate) = self.krate
            && let Some(c) = m.crates.iter().find(|c| c.as_str() == krate)
        {
            return Some(format!("crate {c:?}"));
        }
        if m.kind.contains(&self.frame.kind) {
            return Some(format!("kind {:?}", self.frame.kind.as_str()));
        }
        None
    }

    fn all_match(&self, m: &Matchers) -> bool {
        let one = |present: bool, hit: bool| !present || hit;
        one(
            !m.prefix.is_empty(),
            m.prefix.iter().any(|p| self.key.starts_with(p.as_str())),
        ) && one(
            !m.regex.is_empty(),
            m.regex.iter().any(|r| r.is_match(&self.frame.name)),
        ) && one(
            !m.module.is_empty(),
            self.module
                .is_some_and(|md| m.module.iter().any(|g| g.matches(md))),
        ) && one(
            !m.file.is_empty(),
            self.frame
                .file
                .as_deref()
                .is_some_and(|f| m.file.iter().any(|g| g.matches(f))),
        ) && one(
            !m.crates.is_empty(),
            self.krate.is_some_and(|k| m.crates.iter().any(|c| c == k)),
        ) && one(!m.kind.is_empty(), m.kind.contains(&self.frame.kind))
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
        let text = presets::text_or_error(name)?;
        let file = rules::parse(text, &presets::origin(name))?;
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
