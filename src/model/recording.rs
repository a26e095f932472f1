//! How the samples were recorded, as far as the input says (issue 14): the call-graph mode,
//! and what the kernel and the unwinder lost on the way. Only perf.data carries these facts;
//! text and pprof inputs leave them unknown. The recording-quality figures
//! (`aggregate::quality`) show them beside what the stacks themselves reveal.

/// How the call chains were recorded (perf.data's sample format and branch attributes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallGraph {
    /// No call chains (`perf record` without `-g`): only the sampled address.
    None,
    /// Kernel callchains walked along frame pointers (`-g`, `--call-graph fp`).
    FramePointers,
    /// User registers and a copy of the user stack, unwound afterwards from the binaries'
    /// unwind tables (`--call-graph dwarf,SIZE`); `copy_size` is SIZE in bytes.
    Dwarf { copy_size: u64 },
    /// The CPU's last-branch-record call stack (`--call-graph lbr`).
    Lbr,
}

impl CallGraph {
    /// The name `perf record --call-graph` gives the mode (`none` without `-g`).
    pub fn as_str(self) -> &'static str {
        match self {
            CallGraph::None => "none",
            CallGraph::FramePointers => "fp",
            CallGraph::Dwarf { .. } => "dwarf",
            CallGraph::Lbr => "lbr",
        }
    }
}

/// DWARF-unwound user stacks that stopped before their outermost frame, in samples.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TruncatedStacks {
    /// Samples whose user stack was unwound.
    pub stacks: u64,
    /// Of those, stacks that stopped early (any cause).
    pub truncated: u64,
    /// Stopped because the stack copy ran out although the thread's stack went on: a larger
    /// `--call-graph dwarf,SIZE` would have gone further.
    pub copy_exhausted: u64,
    /// Stopped in a module without usable unwind information, per module path, heaviest
    /// first, with why the module could not be used when that is known.
    pub no_unwind_info: Vec<(String, u64, Option<ModuleProblem>)>,
    /// The other causes (an address outside every mapping, missing registers, the unwinder's
    /// own messages ...) with their counts, heaviest first (ties in no set order: `render`
    /// orders them by their words).
    pub other: Vec<(UnwindCause, u64)>,
}

/// Why DWARF unwinding cannot go through a module.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModuleProblem {
    /// No file of the module was found.
    NotFound,
    /// Only `file`, of another build id `id`, was found.
    OtherBuildId { file: String, id: String },
    /// `path` could not be mapped.
    Unreadable { path: String, error: String },
    /// `path` is not an ELF file whose sections can be read.
    NotElf { path: String, error: String },
    /// Neither `.eh_frame` nor `.debug_frame`.
    NoCfi,
    /// The CFI section (`.eh_frame`, `.debug_frame`) is corrupt: the parser's `error` at
    /// entry `entry`, or no entry at all (`None`).
    CorruptCfi {
        section: &'static str,
        error: Option<(String, usize)>,
    },
}

/// What the recording says about itself.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Recording {
    /// `None` when the input does not say (perf script text, pprof, folded).
    pub call_graph: Option<CallGraph>,
    /// SAMPLE records read.
    pub samples: u64,
    /// Events dropped because perf's ring buffer was full (the sum of the LOST records).
    pub lost_events: u64,
    /// Samples the kernel could not write (the sum of the LOST_SAMPLES records).
    pub lost_samples: u64,
    /// THROTTLE records: times the kernel stopped sampling an event for the rest of a tick
    /// because it sampled faster than `kernel.perf_event_max_sample_rate` allows.
    pub throttles: u64,
    /// DWARF recordings: how the unwinding of user stacks went.
    pub dwarf: Option<TruncatedStacks>,
    /// Recorders that cut every stack at a depth limit (JFR's `stackdepth`, 64 by default):
    /// how many stacks were cut.
    pub depth_cut: Option<DepthCut>,
    /// The recorder walks every stack to its thread's first frame and flags the ones it cuts
    /// (JFR): a stack of only transparent frames is then a runtime thread's own, never cut
    /// short, and the cut ones are counted in `depth_cut` instead.
    pub whole_stacks: bool,
}

/// Stacks a recorder cut at its depth limit and flagged as cut (JFR's `truncated`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DepthCut {
    /// Events with a stack.
    pub stacks: u64,
    /// Of those, stacks cut at the limit.
    pub cut: u64,
    /// The depth of the cut stacks (the limit in force), 0 when none was cut.
    pub depth: usize,
}

impl DepthCut {
    /// Cut stacks as a percentage of all (0 when there are none).
    pub fn percent(&self) -> f64 {
        if self.stacks == 0 {
            0.0
        } else {
            self.cut as f64 * 100.0 / self.stacks as f64
        }
    }
}

/// The fix for LOST records, said alike by the reader's warning and the quality finding.
pub const LOST_FIX: &str = "record with a larger buffer (`perf record -m 1024` / \
                            `--mmap-pages`) or a lower frequency (`-F`), or write to a faster \
                            disk";

/// The fix for throttling.
pub const THROTTLE_FIX: &str = "record with a lower frequency (`-F`), or raise \
                                `kernel.perf_event_max_sample_rate` (sysctl)";

/// The stack copy to suggest when `copy_size` bytes were too few: four times as much, within
/// the kernel's limit of 65528.
pub fn larger_stack_copy(copy_size: u64) -> u64 {
    copy_size.saturating_mul(4).min(65528)
}

impl Recording {
    /// Samples lost: perf writes the kernel's count of lost samples as LOST_SAMPLES at the
    /// end of a recording, and that count includes the ring-buffer losses the LOST records
    /// report while recording (perf 6.1 writes 2086 and 2086 for one run), so the loss is the
    /// larger of the two, not their sum.
    pub fn lost(&self) -> u64 {
        self.lost_events.max(self.lost_samples)
    }

    /// [`Recording::lost`] as a percentage of the samples recorded plus those lost (0 when
    /// nothing was recorded).
    pub fn lost_percent(&self) -> f64 {
        let lost = self.lost();
        let all = self.samples.saturating_add(lost);
        if all == 0 {
            0.0
        } else {
            lost as f64 * 100.0 / all as f64
        }
    }

    /// Truncated DWARF user stacks as a percentage of the unwound ones (0 without DWARF).
    pub fn truncated_percent(&self) -> f64 {
        match &self.dwarf {
            Some(d) if d.stacks > 0 => d.truncated as f64 * 100.0 / d.stacks as f64,
            _ => 0.0,
        }
    }

    /// Sums the counts of another recording of the same kind (`--merge`); the call-graph
    /// mode is kept when both agree.
    pub fn merge(&mut self, other: &Recording) {
        if self.call_graph != other.call_graph {
            self.call_graph = None;
        }
        self.samples += other.samples;
        self.lost_events += other.lost_events;
        self.lost_samples += other.lost_samples;
        self.throttles += other.throttles;
        self.whole_stacks &= other.whole_stacks;
        match (&mut self.depth_cut, &other.depth_cut) {
            (Some(a), Some(b)) => {
                a.stacks += b.stacks;
                a.cut += b.cut;
                a.depth = a.depth.max(b.depth);
            }
            (None, Some(b)) => self.depth_cut = Some(b.clone()),
            _ => {}
        }
        match (&mut self.dwarf, &other.dwarf) {
            (Some(a), Some(b)) => {
                a.stacks += b.stacks;
                a.truncated += b.truncated;
                a.copy_exhausted += b.copy_exhausted;
                for (m, n, why) in &b.no_unwind_info {
                    match a.no_unwind_info.iter_mut().find(|(x, _, _)| x == m) {
                        Some((_, k, _)) => *k += n,
                        None => a.no_unwind_info.push((m.clone(), *n, why.clone())),
                    }
                }
                a.no_unwind_info
                    .sort_by(|x, y| y.1.cmp(&x.1).then(x.0.cmp(&y.0)));
                for (cause, n) in &b.other {
                    match a.other.iter_mut().find(|(x, _)| x == cause) {
                        Some((_, k)) => *k += n,
                        None => a.other.push((cause.clone(), *n)),
                    }
                }
                a.other.sort_by_key(|x| std::cmp::Reverse(x.1));
            }
            (None, Some(b)) => self.dwarf = Some(b.clone()),
            _ => {}
        }
    }
}

/// One cause of DWARF user stacks stopping before their outermost frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UnwindCause {
    CopyExhausted,
    RanPastCopy,
    NoUnwindInfo(String),
    Unmapped,
    MissingRegisters,
    BadRecord,
    /// The unwinder gave up.
    Failed(UnwindFailure),
}

/// Why the unwinder gave up on a stack.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum UnwindFailure {
    /// A process whose mappings were never prepared.
    NotPrepared,
    /// More frames than the limit, `max`.
    TooManyFrames(usize),
    /// A read below the stack pointer.
    BelowStackPointer,
    /// framehop's own error.
    Unwinder(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lost_share_is_the_larger_count() {
        // the LOST_SAMPLES count includes the LOST records' losses
        let r = Recording {
            samples: 900,
            lost_events: 100,
            lost_samples: 40,
            ..Recording::default()
        };
        assert_eq!(r.lost_percent(), 10.0);
        let r = Recording {
            lost_samples: 100,
            lost_events: 0,
            ..r
        };
        assert_eq!(r.lost_percent(), 10.0);
        assert_eq!(Recording::default().lost_percent(), 0.0);
    }

    #[test]
    fn a_larger_copy_stays_within_the_kernel_limit() {
        assert_eq!(larger_stack_copy(4096), 16384);
        assert_eq!(larger_stack_copy(32768), 65528);
        assert_eq!(larger_stack_copy(16), 64);
    }
}
