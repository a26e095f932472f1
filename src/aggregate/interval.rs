//! Sampling error of shares (issues 25 and 54): how far a share measured from samples may be
//! from the share the program really has, so that a gate or a diff never decides on noise.
//! What one recording's interval covers and what it cannot: `docs/statistics.md`.
//!
//! # One profile without time: the samples as independent draws
//!
//! A share is a ratio `p = W_o / W` of summed sample weights. The profile keeps, per distinct
//! (stack, thread) row, the summed weight `W_r` and the number of samples `n_r` behind it
//! (a `samples` count, `value / period`, a Go heap profile's sampled allocations: see
//! `aggregate::counting`). The estimator is the linearised (delta-method) variance of a
//! ratio of sums of independent samples,
//!
//! ```text
//! Var(p) ≈ Σ_i w_i² (x_i − p)² / W²       x_i = 1 when sample i counts for the owner
//!        ≈ Σ_r (W_r² / n_r)(x_r − p)² / W²   each row's samples taken as equal weights
//!        = (S_o (1 − 2p) + p² Q) / W²         S_o = Σ_{r in o} W_r²/n_r,  Q = Σ_r W_r²/n_r
//! ```
//!
//! which for unweighted samples is the multinomial (binomial) `p(1 − p)/n`, and for weighted
//! samples (bytes, nanoseconds) the binomial at the effective sample size
//! `n_eff = p(1 − p)/Var(p)` (Kish's `(Σw)²/Σw²` when all samples are alike). The interval
//! is Wilson's score interval at `n_eff` (it stays inside 0–100 % and behaves at shares near
//! 0). Without any count every row is taken as one sample: the fewest samples it can stand
//! for, so the interval is the widest the data allow.
//!
//! # One profile with time: blocks of time, all threads together
//!
//! Consecutive samples are correlated (a function that runs 50 ms fills 50 samples at 1 kHz),
//! and threads with fixed roles make a share's samples anything but a random mixture. Where
//! samples carry a time (perf.data, perf script, JFR) the profile keeps them in time buckets
//! (`model::Timeline`), and the variance comes from the buckets' residuals, every thread of a
//! bucket together. The recording is cut into [`SEGMENTS`] equal segments and each bucket's
//! residual is taken from its own segment's share, `z_b = W_{o,b} − r_s W_b`: what changes
//! slower than a segment (a warm-up, a batch job's phases) is the program's time profile, which
//! every recording of it repeats, not sampling noise. The variance of their sum is the
//! overlapping batch means of Meketon and Schmeiser (what a moving-block bootstrap's variance
//! is in closed form) at a block of `l` buckets,
//!
//! ```text
//! Var(Σ z) ≈ K² / ((K − l + 1)(K − l) l) · Σ_j S_j² · K / (K − G l)   S_j = Σ of z over block j
//! ```
//!
//! (the last factor gives back what the `G` segments' own shares take), with the block
//! length chosen from the data as Flyvbjerg and Petersen's blocking does: blocks of 1, 2,
//! 4, ... buckets up to half a segment, and the largest of their variances, which is where
//! the correlation has run out and the batch means stop growing. The estimate moves with the
//! data without a jump (a maximum of continuous functions); threads enter only through what
//! they do to the buckets' residuals: a measured correlation, never a switch. The interval is
//! Wilson's at the effective sample size this variance implies, with Student's t at
//! `1.5 (K/l − 1) − G` degrees of freedom in place of the normal quantile. How this rule and
//! the segments' count were chosen, on repeated recordings: `docs/statistics.md`.
//!
//! One recording's interval covers that recording's sampling noise only: what differs from
//! run to run (JIT compilation, warm-up, load, GC) is the same in all its buckets and
//! invisible to it. Repeats see it.
//!
//! # Repeats
//!
//! The mean of the repeats' shares with Student's t interval, `mean ± t(n−1) s/√n`, where `s`
//! is the standard deviation of the shares: the spread of the repeats is the whole noise,
//! sampling included, so it is not floored by any one repeat's sampling error.
//!
//! All functions are pure, allocation-light and deterministic.

/// A two-sided interval of a share, in percent.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    pub low: f64,
    pub high: f64,
}

/// How an interval (or a difference's test) was computed; named in text and JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// Wilson at the effective sample size of one profile, its samples taken as independent
    /// draws (an input without sample times).
    Wilson,
    /// Wilson at the effective sample size that batch means over time buckets give (an input
    /// whose samples carry a time).
    TimeBlocks,
    /// Student's t over the repeats' shares.
    RepeatsT,
    /// No interval: the point estimate (`--point-estimate`).
    Point,
}

impl Method {
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Wilson => "wilson-ess",
            Method::TimeBlocks => "time-blocks",
            Method::RepeatsT => "repeats-t",
            Method::Point => "point-estimate",
        }
    }
}

/// The sums one profile's share variance needs, for one owner (or category) in one view.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ShareSums {
    /// The owner's weight `W_o`.
    pub weight: u128,
    /// The total `W`.
    pub total: u128,
    /// `S_o = Σ_{r in o} W_r² / n_r`.
    pub owner_sq: f64,
    /// `Q = Σ_r W_r² / n_r` over every row.
    pub total_sq: f64,
    /// The batch-means sums over time buckets, where the input's samples carry a time
    /// (see [`BlockSums`]).
    pub blocks: Option<BlockSums>,
}

/// A share's point estimate and its sampling variance (as fractions).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    /// The share, a fraction.
    pub p: f64,
    /// Its variance, fraction².
    pub var: f64,
    /// The effective number of independent samples, `p(1−p)/var`.
    pub n_eff: f64,
    /// The samples behind the share (Σ n_r, or rows when uncounted): `n_eff` per sample
    /// converts "more samples" into the unit the user records in.
    pub samples: f64,
    pub method: Method,
    /// The block length in time buckets ([`Method::TimeBlocks`] only).
    pub block: Option<f64>,
    /// Degrees of freedom of the variance (infinite: the normal).
    pub df: f64,
}

impl ShareSums {
    /// The share and its variance; `samples` is the profile's sample count (see
    /// [`Estimate::samples`]).
    pub fn estimate(&self, samples: f64) -> Estimate {
        let w = self.total as f64;
        let method = match self.blocks {
            Some(_) => Method::TimeBlocks,
            None => Method::Wilson,
        };
        if w <= 0.0 || self.total_sq <= 0.0 {
            return Estimate {
                p: 0.0,
                var: 0.0,
                n_eff: 0.0,
                samples,
                method,
                block: None,
                df: f64::INFINITY,
            };
        }
        let p = self.weight as f64 / w;
        let (var, block, df) = match self.blocks {
            Some(b) => (b.variance(self.total), Some(b.block), b.df),
            None => {
                let iid = (self.owner_sq * (1.0 - 2.0 * p) + p * p * self.total_sq) / (w * w);
                (iid.max(0.0), None, f64::INFINITY)
            }
        };
        // Kish's effective size for the degenerate shares 0 and 1, where p(1−p) is 0
        let kish = w * w / self.total_sq;
        let n_eff = if var > 0.0 && p > 0.0 && p < 1.0 {
            (p * (1.0 - p) / var).max(1.0)
        } else {
            kish.max(1.0)
        };
        Estimate {
            p,
            var,
            n_eff,
            samples,
            method,
            block,
            df,
        }
    }
}

impl Estimate {
    /// Wilson's score interval at `n_eff`, in percent; with finite degrees of freedom the
    /// quantile is Student's t.
    pub fn interval(&self, confidence: f64) -> Interval {
        let z = quantile(confidence, self.df);
        let (p, n) = (self.p, self.n_eff.max(1.0));
        let z2 = z * z;
        let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
        let half = z / (1.0 + z2 / n) * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
        Interval {
            low: ((centre - half) * 100.0).max(0.0),
            high: ((centre + half) * 100.0).min(100.0),
        }
    }

    /// How many samples (in the profile's unit: samples, or rows when uncounted) the profile
    /// would need, recorded as it was (the same rate, the same correlation over time), for the
    /// interval to stop straddling `threshold` (percent), at the share measured now; `None`
    /// when the share equals the threshold (no sample count decides).
    pub fn samples_to_decide(&self, threshold: f64, confidence: f64) -> Option<f64> {
        let t = threshold / 100.0;
        let gap = (self.p - t).abs();
        if gap <= 0.0 || self.n_eff <= 0.0 {
            return None;
        }
        let z = z_of(confidence);
        let n_eff_needed = if self.p <= 0.0 || self.p >= 1.0 {
            // Wilson's interval of 0 (or 1) reaches z²/(n + z²) from its end: clear of `t`
            // from n = z²(1 − t)/t (from the other end, z² t/(1 − t))
            let far = if self.p <= 0.0 { t } else { 1.0 - t };
            z * z * (1.0 - far) / far.max(f64::MIN_POSITIVE)
        } else {
            z * z * self.p * (1.0 - self.p) / (gap * gap)
        };
        let per_sample = self.n_eff / self.samples.max(1.0);
        Some((n_eff_needed / per_sample.max(f64::MIN_POSITIVE)).ceil())
    }
}

/// The two-sided quantile at `confidence` for `df` degrees of freedom (the normal's when
/// infinite).
fn quantile(confidence: f64, df: f64) -> f64 {
    let q = 1.0 - (1.0 - confidence) / 2.0;
    if df.is_finite() {
        t_quantile(q, df.max(1.0))
    } else {
        normal_quantile(q)
    }
}

/// Student's t interval of the mean of `shares` (percent), from their spread alone: the
/// repeats' spread holds every noise a run has, its sampling noise included. Fewer than two
/// shares have no spread: the caller gives one profile's own interval instead.
pub fn repeats_interval(shares: &[f64], confidence: f64) -> (f64, Interval) {
    let n = shares.len() as f64;
    let mean = shares.iter().sum::<f64>() / n.max(1.0);
    let half = if shares.len() >= 2 {
        t_quantile(1.0 - (1.0 - confidence) / 2.0, n - 1.0) * repeats_sd(shares) / n.sqrt()
    } else {
        0.0
    };
    let interval = Interval {
        low: (mean - half).max(0.0),
        high: (mean + half).min(100.0),
    };
    (mean, interval)
}

/// The share of a set of repeats and its interval: one profile's own interval, or the mean
/// of several with Student's t over them ([`repeats_interval`]); `shares` in percent, one
/// per estimate.
pub fn of_repeats(shares: &[f64], estimates: &[Estimate], confidence: f64) -> (f64, Interval) {
    match (shares, estimates) {
        ([share], [one]) => (*share, one.interval(confidence)),
        _ => repeats_interval(shares, confidence),
    }
}

/// The sample standard deviation (n − 1); 0 for fewer than two values.
pub fn repeats_sd(values: &[f64]) -> f64 {
    let n = values.len();
    if n < 2 {
        return 0.0;
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    let ss: f64 = values.iter().map(|v| (v - mean) * (v - mean)).sum();
    (ss / (n - 1) as f64).sqrt()
}

/// How many repeats with the spread seen would make the t interval clear `threshold`:
/// the smallest `n` with `t(n−1) · sd / √n < |mean − threshold|`, at most 1000.
pub fn repeats_to_decide(mean: f64, sd: f64, threshold: f64, confidence: f64) -> Option<usize> {
    let gap = (mean - threshold).abs();
    if gap <= 0.0 {
        return None;
    }
    if sd <= 0.0 {
        return Some(2);
    }
    let q = 1.0 - (1.0 - confidence) / 2.0;
    (2..=1000).find(|&n| t_quantile(q, (n - 1) as f64) * sd / (n as f64).sqrt() < gap)
}

/// The two-sided z of a confidence level (0.95 → 1.96).
pub fn z_of(confidence: f64) -> f64 {
    normal_quantile(1.0 - (1.0 - confidence) / 2.0)
}

/// The standard normal CDF, from `erfc` (Numerical Recipes' Chebyshev fit, |error| < 1.2e-7).
pub fn normal_cdf(x: f64) -> f64 {
    0.5 * erfc(-x / std::f64::consts::SQRT_2)
}

fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let poly = -z * z - 1.265_512_23
        + t * (1.000_023_68
            + t * (0.374_091_96
                + t * (0.096_784_18
                    + t * (-0.186_288_06
                        + t * (0.278_868_07
                            + t * (-1.135_203_98
                                + t * (1.488_515_87 + t * (-0.822_152_23 + t * 0.170_872_77))))))));
    let r = t * poly.exp();
    if x >= 0.0 { r } else { 2.0 - r }
}

/// The standard normal quantile (Acklam's rational approximation, refined by one Halley step:
/// relative error below 1e-9).
pub fn normal_quantile(p: f64) -> f64 {
    if p <= 0.0 {
        return f64::NEG_INFINITY;
    }
    if p >= 1.0 {
        return f64::INFINITY;
    }
    const A: [f64; 6] = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] = [
        7.784_695_709_041_462e-3,
        3.224_671_290_700_398e-1,
        2.445_134_137_142_996,
        3.754_408_661_907_416,
    ];
    let tail = |q: f64| {
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    };
    let x = if p < 0.02425 {
        tail((-2.0 * p.ln()).sqrt())
    } else if p > 1.0 - 0.02425 {
        -tail((-2.0 * (1.0 - p).ln()).sqrt())
    } else {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    };
    // one Halley step on the CDF
    let e = normal_cdf(x) - p;
    let u = e * (2.0 * std::f64::consts::PI).sqrt() * (x * x / 2.0).exp();
    x - u / (1.0 + x * u / 2.0)
}

/// Student's t CDF with `df` degrees of freedom (through the regularised incomplete beta);
/// infinite `df` is the normal.
pub fn t_cdf(t: f64, df: f64) -> f64 {
    if !df.is_finite() || df > 1e7 {
        return normal_cdf(t);
    }
    let x = df / (df + t * t);
    let tail = 0.5 * inc_beta(df / 2.0, 0.5, x);
    if t >= 0.0 { 1.0 - tail } else { tail }
}

/// The `q` quantile of Student's t (bisection on [`t_cdf`]; 1e-10 is far below what a
/// verdict can see).
pub fn t_quantile(q: f64, df: f64) -> f64 {
    if !df.is_finite() || df > 1e7 {
        return normal_quantile(q);
    }
    let (mut lo, mut hi) = (-1e4, 1e4);
    for _ in 0..200 {
        let mid = (lo + hi) / 2.0;
        if t_cdf(mid, df) < q {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo < 1e-10 {
            break;
        }
    }
    (lo + hi) / 2.0
}

/// The regularised incomplete beta `I_x(a, b)` (Lentz's continued fraction, as in Numerical
/// Recipes' `betai`).
fn inc_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front =
        (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_cf(a, b, x) / a
    } else {
        1.0 - front * beta_cf(b, a, 1.0 - x) / b
    }
}

fn beta_cf(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..300 {
        let m = m as f64;
        let m2 = 2.0 * m;
        let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 + aa * d;
        d = if d.abs() < TINY { TINY } else { d };
        c = 1.0 + aa / c;
        c = if c.abs() < TINY { TINY } else { c };
        d = 1.0 / d;
        h *= d * c;
        let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 + aa * d;
        d = if d.abs() < TINY { TINY } else { d };
        c = 1.0 + aa / c;
        c = if c.abs() < TINY { TINY } else { c };
        d = 1.0 / d;
        let del = d * c;
        h *= del;
        if (del - 1.0).abs() < 1e-14 {
            break;
        }
    }
    h
}

/// ln Γ(x) for x > 0 (Lanczos, g = 7, 9 terms: about 15 digits).
fn ln_gamma(x: f64) -> f64 {
    const G: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = G[0];
    let t = x + 7.5;
    for (i, g) in G.iter().enumerate().skip(1) {
        a += g / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// A test of `new − base` of one share: the difference, its standard error and degrees of
/// freedom (infinite: normal), and the two-sided p-value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DiffTest {
    /// new − base, percentage points.
    pub delta: f64,
    /// Standard error of `delta`, points.
    pub se: f64,
    pub df: f64,
    pub p_value: f64,
}

impl DiffTest {
    /// From the two sides' standard errors of their means (points) and their degrees of
    /// freedom (Welch–Satterthwaite; infinite df on a side whose error is the sampling error).
    pub fn welch(delta: f64, (se_b, df_b): (f64, f64), (se_n, df_n): (f64, f64)) -> DiffTest {
        let (vb, vn) = (se_b * se_b, se_n * se_n);
        let var = vb + vn;
        let se = var.sqrt();
        let term = |v: f64, df: f64| if df.is_finite() { v * v / df } else { 0.0 };
        let denom = term(vb, df_b) + term(vn, df_n);
        let df = if denom > 0.0 {
            var * var / denom
        } else {
            f64::INFINITY
        };
        let p_value = if se > 0.0 {
            2.0 * (1.0 - t_cdf(delta.abs() / se, df))
        } else if delta == 0.0 {
            1.0
        } else {
            0.0
        };
        DiffTest {
            delta,
            se,
            df,
            p_value: p_value.clamp(0.0, 1.0),
        }
    }

    /// The interval of the difference at `confidence`, points.
    pub fn interval(&self, confidence: f64) -> Interval {
        let half = t_quantile(1.0 - (1.0 - confidence) / 2.0, self.df) * self.se;
        Interval {
            low: self.delta - half,
            high: self.delta + half,
        }
    }
}

/// Benjamini–Hochberg adjusted p-values (q-values), in the input order: a row is a discovery
/// at level α when its q-value is ≤ α, which keeps the expected share of false discoveries
/// among the discoveries at most α for independent or positively dependent tests.
pub fn benjamini_hochberg(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| p[b].total_cmp(&p[a]));
    let mut q = vec![1.0; m];
    let mut running = 1.0f64;
    for (k, &i) in order.iter().enumerate() {
        let rank = (m - k) as f64;
        running = running.min(p[i] * m as f64 / rank);
        q[i] = running.min(1.0);
    }
    q
}

/// The batch-means variance of one share over a profile's time buckets (see the module's
/// doc): `Var(p) = sum_sq / W²`. Sums of independent recordings add.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct BlockSums {
    /// The estimate of `Var(Σ_b z_b)`, in the metric's unit squared.
    pub sum_sq: f64,
    /// The block length, in buckets.
    pub block: f64,
    /// The batch means' degrees of freedom.
    pub df: f64,
}

/// Buckets with weight below which the time blocks say too little: the samples are then
/// taken as independent draws.
pub const MIN_BUCKETS: usize = 8;

/// The recording is cut into this many equal segments, and each bucket's residual is taken
/// from its segment's own share: what changes slower than a segment (a warm-up, a batch
/// job's phases) is the program's time profile, the same in every recording of it, not
/// sampling noise.
pub const SEGMENTS: usize = 8;

/// The fewest buckets a segment holds: a short recording has fewer, longer segments.
const MIN_SEGMENT: usize = 8;

impl BlockSums {
    /// The variance of a share of `total` (fraction²).
    pub fn variance(&self, total: u128) -> f64 {
        if total == 0 {
            return 0.0;
        }
        let w = total as f64;
        (self.sum_sq / (w * w)).max(0.0)
    }

    /// Sums of two independent recordings of one metric (`report --merge`).
    pub fn merged(&self, other: &BlockSums) -> BlockSums {
        BlockSums {
            sum_sq: self.sum_sq + other.sum_sq,
            block: self.block.max(other.block),
            df: self.df + other.df,
        }
    }
}

/// The batch-means variance of the share `Σ owner / Σ total` over consecutive time buckets
/// (`owner[b]`, `total[b]`: the weights of bucket `b`), the block length chosen from the
/// buckets' residuals (see the module's doc); `None` with fewer than [`MIN_BUCKETS`]
/// buckets holding weight, or no weight.
pub fn block_sums(owner: &[f64], total: &[f64]) -> Option<BlockSums> {
    let k = owner.len().min(total.len());
    if total.iter().filter(|&&t| t > 0.0).count() < MIN_BUCKETS {
        return None;
    }
    let z = residuals(&owner[..k], &total[..k]);
    let segment = segment_len(k);
    let segments = k.div_ceil(segment);
    let at = |l: usize| obm(&z, l) * k as f64 / (k as f64 - (segments * l) as f64).max(1.0);
    // blocks of 1, 2, 4... buckets up to half a segment: the largest variance is where the
    // correlation has run out (the batch means stop growing), whatever its time scale
    let (block, sum_sq) = std::iter::successors(Some(1usize), |l| Some(l * 2))
        .take_while(|&l| l == 1 || 2 * l <= segment)
        .map(|l| (l, at(l)))
        .fold(
            (1, 0.0),
            |best, (l, v)| if v > best.1 { (l, v) } else { best },
        );
    let block = block as f64;
    Some(BlockSums {
        sum_sq,
        block,
        df: (1.5 * (k as f64 / block - 1.0) - segments as f64).max(1.0),
    })
}

/// The buckets of one segment ([`SEGMENTS`] of them, at least [`MIN_SEGMENT`] buckets each).
fn segment_len(k: usize) -> usize {
    (k / SEGMENTS).max(MIN_SEGMENT).min(k.max(1))
}

/// Each bucket's residual `O_b − r_s T_b` from its segment's share `r_s`.
fn residuals(owner: &[f64], total: &[f64]) -> Vec<f64> {
    let segment = segment_len(owner.len());
    let mut z = Vec::with_capacity(owner.len());
    for (o, t) in owner.chunks(segment).zip(total.chunks(segment)) {
        let (os, ts): (f64, f64) = (o.iter().sum(), t.iter().sum());
        let r = if ts > 0.0 { os / ts } else { 0.0 };
        z.extend(o.iter().zip(t).map(|(o, t)| o - r * t));
    }
    z
}

/// The overlapping batch means' estimate of `Var(Σ z)` at blocks of `l` buckets:
/// `K² / ((K − l + 1)(K − l) l) · Σ_j S_j²` over the `K − l + 1` blocks' sums `S_j`.
fn obm(z: &[f64], l: usize) -> f64 {
    let k = z.len();
    let l = l.clamp(1, k.saturating_sub(1).max(1));
    let mut sum = 0.0;
    let mut sq = 0.0;
    for b in 0..k {
        sum += z[b];
        if b >= l {
            sum -= z[b - l];
        }
        if b + 1 >= l {
            sq += sum * sum;
        }
    }
    let (kf, lf) = (k as f64, l as f64);
    kf * kf / ((kf - lf + 1.0) * (kf - lf) * lf) * sq
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn quantiles_match_the_tables() {
        assert!(close(normal_quantile(0.975), 1.959_964, 1e-6));
        assert!(close(normal_quantile(0.995), 2.575_829, 1e-6));
        assert!(close(normal_quantile(0.01), -2.326_348, 1e-6));
        assert!(close(normal_cdf(1.959_964), 0.975, 1e-6));
        // t tables: t(0.975; 4) = 2.776445, t(0.975; 1) = 12.7062, t(0.95; 10) = 1.812461
        assert!(close(t_quantile(0.975, 4.0), 2.776_445, 1e-5));
        assert!(close(t_quantile(0.975, 1.0), 12.706_2, 1e-3));
        assert!(close(t_quantile(0.95, 10.0), 1.812_461, 1e-5));
        assert!(close(t_cdf(2.776_445, 4.0), 0.975, 1e-6));
    }

    #[test]
    fn unweighted_samples_give_the_binomial_and_wilson() {
        // 104 of 400 samples (26 %): Var = p(1−p)/n = 0.26·0.74/400
        let sums = ShareSums {
            weight: 104,
            total: 400,
            owner_sq: 104.0,
            total_sq: 400.0,
            blocks: None,
        };
        let e = sums.estimate(400.0);
        assert!(close(e.var, 0.26 * 0.74 / 400.0, 1e-12));
        assert!(close(e.n_eff, 400.0, 1e-6));
        // Wilson by hand: z = 1.959964, n = 400, p = 0.26:
        // centre = (0.26 + z²/800)/(1 + z²/400) = 0.264802/1.009604 = 0.262283,
        // half = z/(1 + z²/400)·√(0.26·0.74/400 + z²/640000) = 1.941329·0.022068 = 0.042841
        let i = e.interval(0.95);
        assert!(
            close(i.low, 21.944, 0.001) && close(i.high, 30.512, 0.001),
            "{i:?}"
        );
        // 0.26·0.74·1.96²/0.01² ≈ 7391 samples would put 25 % outside the interval
        let n = e.samples_to_decide(25.0, 0.95).unwrap();
        assert!(close(n, 7392.0, 2.0), "{n}");
    }

    #[test]
    fn weighted_samples_use_the_effective_sample_size() {
        // two samples of weight 9 for the owner, eight of weight 1 elsewhere: W = 26,
        // p = 18/26; Kish n_eff of all = 26²/(81+81+8) = 3.98
        let sums = ShareSums {
            weight: 18,
            total: 26,
            owner_sq: 162.0,
            total_sq: 170.0,
            blocks: None,
        };
        let e = sums.estimate(10.0);
        let p: f64 = 18.0 / 26.0;
        let var = (162.0 * (1.0 - 2.0 * p) + p * p * 170.0) / (26.0 * 26.0);
        assert!(close(e.var, var, 1e-12));
        assert!(e.n_eff < 10.0 && e.n_eff > 1.0, "{}", e.n_eff);
    }

    #[test]
    fn repeats_use_t_and_say_how_many_would_decide() {
        let (mean, i) = repeats_interval(&[26.0, 27.0, 25.0, 26.0, 26.0], 0.95);
        // sd = sqrt(0.5) = 0.7071; t(0.975; 4) = 2.776445; half = 0.8780
        assert!(close(mean, 26.0, 1e-12));
        assert!(
            close(i.low, 25.122, 1e-3) && close(i.high, 26.878, 1e-3),
            "{i:?}"
        );
        // t(n−1)·√0.5/√n < 1: n = 5 gives 0.878 (enough), n = 4 gives 1.125
        assert_eq!(repeats_to_decide(26.0, 0.5f64.sqrt(), 25.0, 0.95), Some(5));
    }

    #[test]
    fn welch_and_benjamini_hochberg_by_hand() {
        let t = DiffTest::welch(2.0, (0.5, f64::INFINITY), (0.5, f64::INFINITY));
        // z = 2/√0.5 = 2.828; p = 2(1 − Φ(2.828)) = 0.00468
        assert!(close(t.p_value, 0.004_68, 1e-4), "{t:?}");
        assert!(t.df.is_infinite());
        let t = DiffTest::welch(2.0, (0.5, 4.0), (0.5, 4.0));
        // equal variances and df: Welch df = 8; t = 2.828, p(t8) = 0.0222
        assert!(
            close(t.df, 8.0, 1e-9) && close(t.p_value, 0.0222, 1e-3),
            "{t:?}"
        );
        // BH by hand: p = (0.01, 0.04, 0.03, 0.5), m = 4: sorted 0.01·4/1 = 0.04,
        // 0.03·4/2 = 0.06, 0.04·4/3 = 0.0533 → running min from the top: 0.0533, 0.0533
        let q = benjamini_hochberg(&[0.01, 0.04, 0.03, 0.5]);
        let want = [0.04, 0.053_333, 0.053_333, 0.5];
        for (a, b) in q.iter().zip(want) {
            assert!(close(*a, b, 1e-5), "{q:?}");
        }
    }

    #[test]
    fn independent_buckets_give_the_binomial_back() {
        // 320 buckets of one sample each, the owner's in every fourth (p = 1/4). Segments
        // of 320/8 = 40 buckets each hold 10 of the owner's, so every segment's share is
        // 1/4 and the residuals are 3/4, −1/4, −1/4, −1/4 over and over: blocks of 2, 4, ...
        // buckets cancel them, so the largest variance is one bucket's,
        // Var(Σz) = K/(K−1) · Σz² · K/(K − 8) with Σz² = 320 · 3/16 = 60: the binomial
        // p(1−p)/n = 60/320² up to K/(K−1) and the segments' K/(K−8)
        let total = vec![1.0; 320];
        let owner: Vec<f64> = (0..320)
            .map(|b| if b % 4 == 0 { 1.0 } else { 0.0 })
            .collect();
        let sums = block_sums(&owner, &total).unwrap();
        assert_eq!(sums.block, 1.0);
        let var = sums.variance(320);
        let want = 60.0 / (320.0 * 320.0) * (320.0 / 319.0) * (320.0 / 312.0);
        assert!(close(var, want, 1e-15), "{var} {want}");
        assert!(close(sums.df, 1.5 * 319.0 - 8.0, 1e-9));
    }

    #[test]
    fn a_change_slower_than_a_segment_is_the_time_profile_not_noise() {
        // a warm-up: 4 samples a bucket, the owner's 1 of them for the first 160 buckets
        // (two segments of 80) and 3 after. Every segment's share is its buckets' own, so
        // every residual is 0: no sampling noise at all in this made-up recording, where a
        // residual from the whole recording's share (5/8 − 1/4 = 3/8 of every early bucket)
        // would have called the warm-up noise
        let total = vec![4.0; 640];
        let owner: Vec<f64> = (0..640).map(|b| if b < 160 { 1.0 } else { 3.0 }).collect();
        let sums = block_sums(&owner, &total).unwrap();
        assert_eq!(sums.sum_sq, 0.0);
    }

    #[test]
    fn runs_inside_a_segment_lengthen_the_block() {
        // one sample a bucket, the owner's in runs of 4 buckets out of 8 (p = 1/2 in every
        // segment of 80): residuals ±1/2 in runs of 4. Blocks of 1, 2, 4, ... 32 buckets;
        // blocks of 4 see the runs whole and give the largest variance, 254.886 by a
        // reference written apart in Python (the binomial would say 640/4 = 160)
        let total = vec![1.0; 640];
        let owner: Vec<f64> = (0..640)
            .map(|b| if b % 8 < 4 { 1.0 } else { 0.0 })
            .collect();
        let sums = block_sums(&owner, &total).unwrap();
        assert_eq!(sums.block, 4.0);
        assert!(close(sums.sum_sq, 254.886, 1e-3), "{}", sums.sum_sq);
    }

    #[test]
    fn the_block_variance_moves_smoothly_with_one_more_sample() {
        // no cliff (issue 54): one more sample in one bucket moves the interval's width by
        // about what one sample in 2,000 can, never by a jump
        let total: Vec<f64> = (0..500).map(|b| 4.0 + (b % 3) as f64).collect();
        let owner: Vec<f64> = (0..500).map(|b| ((b * 7) % 5) as f64 * 0.8).collect();
        let (o, t) = (owner.iter().sum::<f64>(), total.iter().sum::<f64>());
        let width = |owner: &[f64], total: &[f64], o: f64, t: f64| {
            let s = block_sums(owner, total).unwrap();
            let e = ShareSums {
                weight: o as u128,
                total: t as u128,
                owner_sq: 0.0,
                total_sq: t,
                blocks: Some(s),
            }
            .estimate(t);
            let i = e.interval(0.95);
            i.high - i.low
        };
        let before = width(&owner, &total, o, t);
        let (mut owner2, mut total2) = (owner.clone(), total.clone());
        owner2[250] += 1.0;
        total2[250] += 1.0;
        let after = width(&owner2, &total2, o + 1.0, t + 1.0);
        assert!(
            (after - before).abs() < before * 5.0 / t,
            "{before} {after}"
        );
    }

    #[test]
    fn repeats_have_no_floor() {
        // five repeats 33.0 ± 0.5: the interval is t over them, however noisy one of them
        // would have been alone
        let (mean, i) = repeats_interval(&[32.5, 33.5, 33.0, 32.5, 33.5], 0.95);
        let half =
            t_quantile(0.975, 4.0) * repeats_sd(&[32.5, 33.5, 33.0, 32.5, 33.5]) / 5f64.sqrt();
        assert!(close(mean, 33.0, 1e-12) && close(i.high - i.low, 2.0 * half, 1e-12));
    }
}
