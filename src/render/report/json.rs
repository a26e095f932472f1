//! JSON output, schema `whose/1` (documented in the README): exact integer weights, so
//! results from many machines can be merged. Issue 25 added, without changing anything that
//! was there, each input's `sampling` (samples, whether counted, threads) and on its owners
//! and categories `intervals` (95 % per view, with the `method`). The wire structs live here, separate from the
//! report types, so the schema changes only on purpose.

use crate::aggregate::interval::{Estimate, Method};
use crate::aggregate::quality::{FigureSource, FigureValue, QUALITY_FIGURES};
use crate::aggregate::report::{Report, View, share};
use crate::model::CallGraph;
use serde::Serialize;
use std::io::Write;

pub const SCHEMA: &str = "whose/1";

#[derive(Serialize)]
struct Document<'a> {
    schema: &'static str,
    presets: &'a [String],
    presets_detected: bool,
    /// The program's own code guessed from the frames and claimed as `user`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    user_code_guessed: Vec<OwnCode<'a>>,
    /// Guesses not made (a Rust crate from stacks without call chains), with the reason.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    user_code_not_guessed: Vec<NotGuessed<'a>>,
    /// The owners named after their third-party unit, no rule naming their frames (issue 29):
    /// `{"name": "flate2", "unit": "rust-crate"}`; their owner rows carry `"guessed": true`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    owners_guessed: Vec<Guessed<'a>>,
    /// `--no-guess`: neither the program's own code nor owners were guessed.
    #[serde(skip_serializing_if = "is_false")]
    guesses_off: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    per: Option<u64>,
    inputs: Vec<Input<'a>>,
}

/// A guess of the program's own code (Go module, Rust crate) and how it was made.
/// A guess not made: `{"unit": "rust crate", "reason": "no-call-chains", "would_have_been":
/// "miniz_oxide", "weight": 614}`.
#[derive(Serialize)]
struct NotGuessed<'a> {
    unit: &'a str,
    reason: &'static str,
    would_have_been: &'a str,
    weight: u128,
}

#[derive(Serialize)]
struct OwnCode<'a> {
    /// `go module`, `rust crate`.
    unit: &'a str,
    name: String,
    prefixes: &'a [String],
    /// The source-file globs claimed (node's and Python's scripts).
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    files: &'a [String],
    /// The module globs claimed (a native program's executable).
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    modules: &'a [String],
    /// The module whose C functions are claimed (a Go binary's cgo code).
    #[serde(skip_serializing_if = "Option::is_none")]
    c_functions_of_module: Option<&'a str>,
    evidence: String,
    /// `strong` or `medium` (issue 53).
    strength: &'static str,
}

#[derive(Serialize)]
struct Input<'a> {
    path: &'a str,
    metric: Metric<'a>,
    total: u128,
    /// The part of `total` in samples without a stack, which no owner has.
    #[serde(skip_serializing_if = "is_zero")]
    stackless: u128,
    /// The negative part of a delta profile's values, as magnitudes; `total` and the
    /// owners' weights are the positive part.
    #[serde(skip_serializing_if = "Option::is_none")]
    negative: Option<Negative<'a>>,
    owners: Vec<Owner<'a>>,
    categories: Vec<Owner<'a>>,
    /// What the owners' and categories' `intervals` rest on.
    sampling: Sampling,
    top_owner_frames: Vec<Frame<'a>>,
    top_self_frames: Vec<Frame<'a>>,
    unclassified_frames: Vec<Frame<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    types: Vec<Type<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    threads: Vec<Thread<'a>>,
    quality: Quality<'a>,
    /// `--user PREFIX` that would claim the heaviest unclassified frames.
    #[serde(skip_serializing_if = "Option::is_none")]
    suggested_user: Option<SuggestedUser<'a>>,
    notes: Vec<String>,
    warnings: Vec<String>,
    /// `--by time`: the owners per time bucket and the warm-up found in them.
    #[serde(skip_serializing_if = "Option::is_none")]
    timeline: Option<Timeline<'a>>,
}

/// `report --by time` (issue 27): times in nanoseconds on the recording's clock (perf's, or
/// JFR's epoch nanoseconds), weights in the metric's unit; each bucket's owners are those
/// with weight in it, in all three views.
#[derive(Serialize)]
struct Timeline<'a> {
    /// `{"percent": 5.0}` of the span from the first sample to the last, or `{"width_ns": N}`.
    bucket: BucketSize,
    first_ns: u64,
    last_ns: u64,
    /// The width of the buckets the samples were kept in, on which every edge falls.
    resolution_ns: u64,
    buckets: Vec<TimeBucket<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    warmup: Option<Warmup<'a>>,
}

#[derive(Serialize)]
#[serde(rename_all = "snake_case")]
enum BucketSize {
    Percent(f64),
    WidthNs(u64),
}

#[derive(Serialize)]
struct TimeBucket<'a> {
    start_ns: u64,
    end_ns: u64,
    total: u128,
    samples: u128,
    owners: Vec<TimeOwner<'a>>,
}

#[derive(Serialize)]
struct TimeOwner<'a> {
    name: &'a str,
    #[serde(rename = "self")]
    self_: u128,
    owner: u128,
    anywhere: u128,
}

/// The warm-up finding's figures and its words.
#[derive(Serialize)]
struct Warmup<'a> {
    /// The first settled bucket, and where it starts.
    end_bucket: usize,
    end_ns: u64,
    seconds: f64,
    owner: &'a str,
    /// The owner's owner-view share in the warm-up and after it, percent.
    during: f64,
    after: f64,
    /// `--time` that skips the warm-up.
    time: String,
    finding: String,
}

/// The recording-quality figures (see `aggregate::quality`): weights in the metric's unit.
#[derive(Serialize)]
struct Quality<'a> {
    /// The figures of the stacks (`QUALITY_FIGURES`): `callchains`, `max_depth`, weights.
    #[serde(flatten)]
    stacks: Figures,
    unresolved_by_module: Vec<UnresolvedModule<'a>>,
    /// Where the ownerless stacks stop.
    ownerless_by_module: Vec<ModuleWeight<'a>>,
    /// The recording's own figures: `call_graph` (`none`, `fp`, `dwarf`, `lbr`; `null` when
    /// the input does not say), then counts in samples (0 where the input does not say).
    #[serde(flatten)]
    recording: Figures,
    /// DWARF recordings only.
    #[serde(skip_serializing_if = "Option::is_none")]
    truncated_stacks: Option<TruncatedStacks<'a>>,
    /// What the figures mean for the answer, with the cause and the fix.
    findings: Vec<String>,
}

/// DWARF-unwound user stacks that stopped early, in samples.
#[derive(Serialize)]
struct TruncatedStacks<'a> {
    /// The `--call-graph dwarf,SIZE` stack copy, in bytes.
    stack_copy: u64,
    stacks: u64,
    truncated: u64,
    copy_exhausted: u64,
    no_unwind_info: Vec<NoUnwindInfo<'a>>,
    other: Vec<Cause>,
}

#[derive(Serialize)]
struct Cause {
    cause: String,
    stacks: u64,
}

#[derive(Serialize)]
struct NoUnwindInfo<'a> {
    module: &'a str,
    stacks: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
}

#[derive(Serialize)]
struct SuggestedUser<'a> {
    prefix: &'a str,
    /// Owner-view weight `--user PREFIX` would move from `unclassified` to user code.
    weight: u128,
    /// Weight of the stacks through the prefix's unclassified frames.
    anywhere: u128,
}

#[derive(Serialize)]
struct ModuleWeight<'a> {
    module: &'a str,
    weight: u128,
}

#[derive(Serialize)]
struct UnresolvedModule<'a> {
    module: &'a str,
    weight: u128,
    /// Why the module's addresses have no symbol (`model::Unresolved::code`), in words, and
    /// what to do.
    reason: &'static str,
    cause: String,
    fix: String,
}

/// An owner guessed from its unit.
#[derive(Serialize)]
struct Guessed<'a> {
    name: &'a str,
    unit: &'static str,
}

fn is_false(b: &bool) -> bool {
    !*b
}

#[derive(Serialize)]
struct Metric<'a> {
    name: &'a str,
    unit: &'a str,
}

#[derive(Serialize)]
struct Owner<'a> {
    name: &'a str,
    category: &'a str,
    transparent: bool,
    #[serde(rename = "self")]
    self_: u128,
    owner: u128,
    anywhere: u128,
    /// Named after its third-party unit, not by a rule; absent when false.
    #[serde(skip_serializing_if = "is_false")]
    guessed: bool,
    /// The 95 % interval of each view's share from this input's sample counts (issue 25;
    /// `aggregate::interval`): on an input's owners and categories, not on threads or the
    /// negative part.
    #[serde(skip_serializing_if = "Option::is_none")]
    intervals: Option<Intervals>,
}

impl<'a> Owner<'a> {
    /// One owner's (or category's) row: the three weights of `w`, and their intervals where
    /// the input's sample counts give them.
    fn row(
        name: &'a str,
        category: &'a str,
        transparent: bool,
        w: &crate::aggregate::ViewWeights,
        intervals: Option<Intervals>,
    ) -> Self {
        Owner {
            name,
            category,
            transparent,
            self_: w.self_,
            owner: w.owner,
            anywhere: w.anywhere,
            guessed: false,
            intervals,
        }
    }
}

/// Percent, `[low, high]` per view, and how they were made.
#[derive(Serialize)]
struct Intervals {
    /// `time-blocks` (batch means over time buckets, where samples carry a time) or
    /// `wilson-ess` (samples taken as independent draws).
    method: &'static str,
    confidence: f64,
    #[serde(rename = "self")]
    self_: [f64; 2],
    owner: [f64; 2],
    anywhere: [f64; 2],
    /// The effective number of independent samples behind each view's share.
    effective_samples: PerView<f64>,
    /// The time blocks' length per view, seconds (`time-blocks` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    block_seconds: Option<PerView<f64>>,
}

#[derive(Serialize)]
struct PerView<T> {
    #[serde(rename = "self")]
    self_: T,
    owner: T,
    anywhere: T,
}

/// What the intervals rest on.
#[derive(Serialize)]
struct Sampling {
    /// Samples behind the total (distinct stacks when `counted` is false: the input says
    /// nothing of its samples, and each stack is taken as one sample).
    samples: u128,
    counted: bool,
    /// `time-blocks` where the samples carry a time, else `wilson-ess`.
    estimator: &'static str,
    /// The width of one time bucket, seconds (`time-blocks` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    bucket_seconds: Option<f64>,
    /// The time the samples span, seconds, where known.
    #[serde(skip_serializing_if = "Option::is_none")]
    seconds: Option<f64>,
}

/// The intervals of owner (or category, with `category`) `index` in one input.
fn intervals(agg: &crate::aggregate::Aggregate, index: usize, category: bool) -> Intervals {
    let d = &agg.dispersion;
    let of = |view: View| {
        d.sums(&agg.all, index, category, view)
            .estimate(d.samples as f64)
    };
    let (s, o, a) = (of(View::Self_), of(View::Owner), of(View::Anywhere));
    let bounds = |e: &Estimate| {
        let i = e.interval(REPORT_CONFIDENCE);
        [i.low, i.high]
    };
    let bucket = d.bucket_nanos as f64 / 1e9;
    let blocks = (s.block.is_some() || o.block.is_some() || a.block.is_some()).then(|| PerView {
        self_: s.block.unwrap_or(0.0) * bucket,
        owner: o.block.unwrap_or(0.0) * bucket,
        anywhere: a.block.unwrap_or(0.0) * bucket,
    });
    let method = if blocks.is_some() {
        Method::TimeBlocks
    } else {
        Method::Wilson
    };
    Intervals {
        method: method.as_str(),
        confidence: REPORT_CONFIDENCE,
        self_: bounds(&s),
        owner: bounds(&o),
        anywhere: bounds(&a),
        effective_samples: PerView {
            self_: s.n_eff,
            owner: o.n_eff,
            anywhere: a.n_eff,
        },
        block_seconds: blocks,
    }
}

/// The report's intervals are at the gate's default level.
const REPORT_CONFIDENCE: f64 = crate::gate::DEFAULT_CONFIDENCE;

#[derive(Serialize)]
struct Frame<'a> {
    owner: &'a str,
    frame: &'a str,
    weight: u128,
    share: f64,
}

#[derive(Serialize)]
struct Type<'a> {
    name: &'a str,
    weight: u128,
}

/// The negative weights of a delta profile, attributed as the positive ones are.
#[derive(Serialize)]
struct Negative<'a> {
    total: u128,
    owners: Vec<Owner<'a>>,
}

fn is_zero(w: &u128) -> bool {
    *w == 0
}

#[derive(Serialize)]
struct Thread<'a> {
    name: &'a str,
    total: u128,
    owners: Vec<Owner<'a>>,
}

pub fn write(report: &Report, out: &mut dyn Write) -> std::io::Result<()> {
    let doc = Document {
        schema: SCHEMA,
        presets: &report.presets,
        presets_detected: report.presets_detected,
        user_code_guessed: report
            .own_code
            .iter()
            .map(|c| OwnCode {
                unit: c.unit.as_str(),
                name: super::guess::unit_name(c),
                prefixes: &c.prefixes,
                files: &c.files,
                modules: &c.modules,
                c_functions_of_module: c.c_in_module.as_deref(),
                evidence: super::guess::evidence(&c.evidence),
                strength: c.evidence.strength().as_str(),
            })
            .collect(),
        user_code_not_guessed: report
            .own_code_declined
            .iter()
            .map(|d| match &d.reason {
                crate::classify::own_code::DeclineReason::NoCallChains {
                    heaviest, weight, ..
                } => NotGuessed {
                    unit: d.unit.as_str(),
                    reason: "no-call-chains",
                    would_have_been: heaviest,
                    weight: *weight,
                },
                crate::classify::own_code::DeclineReason::WeakEvidence {
                    heaviest, weight, ..
                } => NotGuessed {
                    unit: d.unit.as_str(),
                    reason: "weak-evidence",
                    would_have_been: heaviest,
                    weight: *weight,
                },
                crate::classify::own_code::DeclineReason::NoLanguageFrames {
                    runtime,
                    weight,
                    ..
                } => NotGuessed {
                    unit: d.unit.as_str(),
                    reason: "no-language-frames",
                    would_have_been: runtime,
                    weight: *weight,
                },
            })
            .collect(),
        owners_guessed: report
            .guessed
            .iter()
            .map(|u| Guessed {
                name: &u.name,
                unit: u.kind.id(),
            })
            .collect(),
        guesses_off: report.guesses_off,
        per: report.per,
        inputs: (0..report.inputs.len()).map(|i| input(report, i)).collect(),
    };
    serde_json::to_writer_pretty(&mut *out, &doc)?;
    writeln!(out)
}

fn owners<'a>(report: &'a Report, a: &'a crate::aggregate::Attribution) -> Vec<Owner<'a>> {
    report
        .owners
        .iter()
        .zip(&a.owners)
        .filter(|(_, w)| w.self_ + w.owner + w.anywhere > 0)
        .map(|(o, w)| Owner {
            guessed: o.guessed,
            ..Owner::row(&o.name, o.category.as_str(), o.transparent, w, None)
        })
        .collect()
}

fn frames<'a>(list: &'a [crate::aggregate::FrameWeight], total: u128) -> Vec<Frame<'a>> {
    list.iter()
        .map(|f| Frame {
            owner: &f.owner,
            frame: &f.frame,
            weight: f.weight,
            share: share(f.weight, total),
        })
        .collect()
}

/// The input `i` of `report` as the schema has it.
fn input(report: &Report, i: usize) -> Input<'_> {
    let inp = &report.inputs[i];
    let agg = &inp.aggregate;
    Input {
        path: &inp.path,
        metric: Metric {
            name: &inp.metric.name,
            unit: inp.metric.unit.name(),
        },
        total: agg.all.total,
        stackless: agg.all.stackless,
        negative: (agg.negative.total > 0).then(|| Negative {
            total: agg.negative.total,
            owners: owners(report, &agg.negative),
        }),
        owners: all_owners(report, agg),
        categories: categories(agg),
        sampling: sampling(agg),
        top_owner_frames: frames(&agg.top_owner_frames, agg.all.total),
        top_self_frames: frames(&agg.top_self, agg.all.total),
        unclassified_frames: frames(&agg.unclassified_frames, agg.all.total),
        types: agg
            .types
            .iter()
            .map(|t| Type {
                name: &t.name,
                weight: t.weight,
            })
            .collect(),
        threads: agg
            .threads
            .iter()
            .map(|(name, a)| Thread {
                name,
                total: a.total,
                owners: owners(report, a),
            })
            .collect(),
        quality: quality(agg),
        suggested_user: agg.suggested_user.as_ref().map(|hint| SuggestedUser {
            prefix: &hint.prefix,
            weight: hint.owner,
            anywhere: hint.anywhere,
        }),
        notes: super::notices::texts(&inp.notes),
        warnings: super::notices::texts(&inp.warnings),
        timeline: agg.timeline.as_ref().map(|t| timeline(report, t)),
    }
}

/// The categories with any weight, each with its intervals.
fn categories(agg: &crate::aggregate::Aggregate) -> Vec<Owner<'static>> {
    crate::model::Category::ALL
        .iter()
        .zip(&agg.all.categories)
        .enumerate()
        .filter(|(_, (_, w))| w.self_ + w.owner + w.anywhere > 0)
        .map(|(i, (c, w))| {
            Owner::row(
                c.as_str(),
                c.as_str(),
                c.transparent_by_default(),
                w,
                Some(intervals(agg, i, true)),
            )
        })
        .collect()
}

/// The owners with any weight in the input, each with its intervals and whether it was
/// guessed.
fn all_owners<'a>(report: &'a Report, agg: &crate::aggregate::Aggregate) -> Vec<Owner<'a>> {
    report
        .owners
        .iter()
        .zip(&agg.all.owners)
        .enumerate()
        .filter(|(_, (_, w))| w.self_ + w.owner + w.anywhere > 0)
        .map(|(i, (o, w))| Owner {
            guessed: o.guessed,
            ..Owner::row(
                &o.name,
                o.category.as_str(),
                o.transparent,
                w,
                Some(intervals(agg, i, false)),
            )
        })
        .collect()
}

/// What the intervals rest on: the samples, and the estimator their spread chose.
fn sampling(agg: &crate::aggregate::Aggregate) -> Sampling {
    Sampling {
        samples: agg.dispersion.samples,
        counted: agg.dispersion.counted,
        estimator: if agg.dispersion.bucket_nanos > 0 {
            Method::TimeBlocks.as_str()
        } else {
            Method::Wilson.as_str()
        },
        bucket_seconds: (agg.dispersion.bucket_nanos > 0)
            .then(|| agg.dispersion.bucket_nanos as f64 / 1e9),
        seconds: agg.dispersion.seconds,
    }
}

fn timeline<'a>(
    report: &'a Report,
    t: &'a crate::aggregate::timeline::OwnerTimeline,
) -> Timeline<'a> {
    use crate::aggregate::timeline::BucketSize as Size;
    Timeline {
        bucket: match t.size {
            Size::Percent(p) => BucketSize::Percent(p),
            Size::Width(w) => BucketSize::WidthNs(w),
        },
        first_ns: t.first,
        last_ns: t.last,
        resolution_ns: t.resolution,
        buckets: t
            .slots
            .iter()
            .map(|slot| TimeBucket {
                start_ns: slot.start,
                end_ns: slot.end,
                total: slot.all.total,
                samples: slot.samples,
                owners: slot
                    .all
                    .owners
                    .iter()
                    .enumerate()
                    .filter(|(_, w)| w.self_ + w.owner + w.anywhere > 0)
                    .map(|(o, w)| TimeOwner {
                        name: &report.owners[o].name,
                        self_: w.self_,
                        owner: w.owner,
                        anywhere: w.anywhere,
                    })
                    .collect(),
            })
            .collect(),
        warmup: t.warmup.as_ref().map(|w| Warmup {
            end_bucket: w.end_bucket,
            end_ns: w.end,
            seconds: w.after_seconds,
            owner: &w.owner_name,
            during: w.during,
            after: w.after,
            time: format!("{},", super::findings::time_arg(w.end)),
            finding: super::findings::text(&w.finding()),
        }),
    }
}

/// Quality figures of one source, as a map in [`QUALITY_FIGURES`] order.
struct Figures(Vec<(&'static str, FigureValue)>);

impl Figures {
    fn of(q: &crate::aggregate::quality::Quality, source: FigureSource) -> Figures {
        let of_source = QUALITY_FIGURES.iter().filter(|f| f.source == source);
        Figures(of_source.map(|f| (f.name, (f.value)(q))).collect())
    }
}

impl Serialize for Figures {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (name, value) in &self.0 {
            match value {
                FigureValue::Flag(b) => map.serialize_entry(name, b)?,
                FigureValue::Number(n) => map.serialize_entry(name, n)?,
                FigureValue::Name(n) => map.serialize_entry(name, n)?,
            }
        }
        map.end()
    }
}

/// The quality figures of `agg` and the findings that follow from them (with user code's
/// bounds where stacks are cut short).
fn quality(agg: &crate::aggregate::Aggregate) -> Quality<'_> {
    let (q, total) = (&agg.quality, agg.all.total);
    Quality {
        stacks: Figures::of(q, FigureSource::Stacks),
        unresolved_by_module: q
            .unresolved_by_module
            .iter()
            .map(|m| UnresolvedModule {
                module: &m.module,
                weight: m.weight,
                reason: m.reason.code(),
                cause: super::notices::unresolved_cause(&m.reason),
                fix: super::notices::unresolved_fix(&m.reason),
            })
            .collect(),
        ownerless_by_module: q
            .ownerless_by_module
            .iter()
            .map(|(module, weight)| ModuleWeight {
                module,
                weight: *weight,
            })
            .collect(),
        recording: Figures::of(q, FigureSource::Recording),
        truncated_stacks: q.recording.dwarf.as_ref().map(|d| TruncatedStacks {
            stack_copy: match q.recording.call_graph {
                Some(CallGraph::Dwarf { copy_size }) => copy_size,
                _ => 0,
            },
            stacks: d.stacks,
            truncated: d.truncated,
            copy_exhausted: d.copy_exhausted,
            no_unwind_info: d
                .no_unwind_info
                .iter()
                .map(|(module, stacks, reason)| NoUnwindInfo {
                    module,
                    stacks: *stacks,
                    reason: reason.as_ref().map(super::notices::module_problem),
                })
                .collect(),
            other: super::notices::by_weight_then_words(&d.other)
                .into_iter()
                .map(|(cause, stacks)| Cause { cause, stacks })
                .collect(),
        }),
        findings: q
            .findings(total)
            .iter()
            .chain(&agg.user_bounds())
            .chain(&agg.jit_inlining())
            .map(super::findings::text)
            .collect(),
    }
}
