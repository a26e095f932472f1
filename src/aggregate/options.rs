//! What is asked of an aggregation ([`AggregateOptions`]), below every accumulator that reads
//! it and the figures they fill.

/// What to aggregate. Built once from the command line.
#[derive(Debug, Clone)]
pub struct AggregateOptions {
    /// Index of the sample type to weigh by.
    pub metric: usize,
    /// Keep async-profiler's allocated-class leaves as ordinary frames (the seed harness did).
    pub types_as_frames: bool,
    /// Split by thread (pool numbers folded).
    pub threads: bool,
    /// How many heaviest frames to keep per list.
    pub top: usize,
    /// Build the sums the shares' error bars come from ([`super::Dispersion`]); without them the
    /// aggregate's dispersion is empty. A fifth of the pass over the rows on a million
    /// distinct stacks, for outputs (flame graphs) that show no interval.
    pub intervals: bool,
    /// Find [`Aggregate::suggested_user`] (a pass over every frame's name); without it, none.
    pub user_hint: bool,
}
