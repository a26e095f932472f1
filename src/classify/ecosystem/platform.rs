//! The platform under every language: the allocators and the kernel, rules only (no own code,
//! no third-party units). Native code's own row is [`super::native`].

use super::row::Ecosystem;

pub const ALLOCATORS: Ecosystem =
    Ecosystem::rules_only("allocators", include_str!("../../../rules/allocators.toml"));

pub const KERNEL: Ecosystem =
    Ecosystem::rules_only("kernel", include_str!("../../../rules/kernel.toml"));
