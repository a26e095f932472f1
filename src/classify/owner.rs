//! Owners (named groups of frames) and their categories.

use std::fmt;

/// The fixed set of categories every owner belongs to (DESIGN "Owners and categories").
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

/// Index of an owner in a [`crate::classify::RuleSet`]'s owner table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct OwnerId(pub u32);

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Owner {
    pub name: String,
    pub category: Category,
    pub transparent: bool,
}

/// Frames no rule matches: visible (not transparent), so a user sees which rule to add.
pub const UNCLASSIFIED: &str = "unclassified";
/// Addresses nobody could name: transparent, so they never hide the real owner.
pub const UNSYMBOLIZED: &str = "unsymbolized";
