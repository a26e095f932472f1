//! Owners (named groups of frames) and their categories: what classification produces and
//! every later stage (aggregation, rendering, gates) speaks, so they live in the model at
//! the bottom of the layering rather than in `classify`.

use std::fmt;

/// The fixed set of categories every owner belongs to (docs/design.md "Owners and categories").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Category {
    User,
    Framework,
    Library,
    Runtime,
    Allocator,
    Gc,
    Kernel,
    Unknown,
}

impl Category {
    pub const ALL: [Category; 8] = [
        Category::User,
        Category::Framework,
        Category::Library,
        Category::Runtime,
        Category::Allocator,
        Category::Gc,
        Category::Kernel,
        Category::Unknown,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Category::User => "user",
            Category::Framework => "framework",
            Category::Library => "library",
            Category::Runtime => "runtime",
            Category::Allocator => "allocator",
            Category::Gc => "gc",
            Category::Kernel => "kernel",
            Category::Unknown => "unknown",
        }
    }

    pub fn parse(s: &str) -> Option<Category> {
        Category::ALL.into_iter().find(|c| c.as_str() == s)
    }

    /// Runtime, allocator, GC, kernel and unknown work is done *for* someone else, so the
    /// owner view looks through it by default.
    pub fn transparent_by_default(self) -> bool {
        matches!(
            self,
            Category::Runtime
                | Category::Allocator
                | Category::Gc
                | Category::Kernel
                | Category::Unknown
        )
    }
}

impl fmt::Display for Category {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Index of an owner in a rule set's owner table. Every table opens with the built-in owners
/// [`UNCLASSIFIED`] and [`UNSYMBOLIZED`], at fixed ids, so stages can name them without a
/// lookup.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct OwnerId(pub u32);

impl OwnerId {
    /// The built-in owner [`UNCLASSIFIED`].
    pub const UNCLASSIFIED: OwnerId = OwnerId(0);
    /// The built-in owner [`UNSYMBOLIZED`].
    pub const UNSYMBOLIZED: OwnerId = OwnerId(1);
    /// How many built-in owners open every owner table; the owners of rules follow them.
    pub const BUILT_IN_COUNT: usize = 2;
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    pub name: String,
    pub category: Category,
    pub transparent: bool,
    /// Named after a third-party unit the frames belong to, not by a rule (issue 29;
    /// `classify::auto_owner`): the report marks it, since the name is whose guess.
    pub guessed: bool,
}

/// Frames no rule matches: visible (not transparent), so a user sees which rule to add.
pub const UNCLASSIFIED: &str = "unclassified";
/// Addresses nobody could name: transparent, so they never hide the real owner.
pub const UNSYMBOLIZED: &str = "unsymbolized";
/// The report line of samples recorded without a stack (Go's threadcreate profile): they
/// count in the total and belong to no owner, since there is no frame to own them.
pub const NO_STACK: &str = "(no stack)";
