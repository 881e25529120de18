//! Statistics over repeats: summaries with a distribution-free confidence interval of the
//! median, the ratio of two cells' medians with a bootstrap interval (the figure reports
//! print), the decision between two set-ups on their paired log-ratios with an interval
//! valid at every look (what a verdict answers), and named warnings when the repeats cannot
//! support a conclusion. Every statistic a report shows comes from
//! here; reports only format them. Must not know how a figure is shown beyond `figure`,
//! the precision the warnings quote.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use statrs::distribution::{Binomial, ContinuousCDF, DiscreteCDF, StudentsT};

/// The confidence level of every interval enginebench prints.
pub const CONFIDENCE: f64 = 0.95;
/// The fewest repeats for which order statistics give a 95% interval of the median
/// (with n = 5 even [min, max] covers only 93.75%).
pub const MIN_N_FOR_CI: usize = 6;

/// A cell's repeats, summarised.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Summary {
    pub n: usize,
    pub min: f64,
    pub median: f64,
    pub mean: f64,
    pub max: f64,
    /// Sample standard deviation (n - 1); none for one value.
    pub sd: Option<f64>,
    /// 95% confidence interval of the median; none when n is too small.
    pub median_ci: Option<(f64, f64)>,
}

impl Summary {
    /// A chart's whisker: the 95% interval of the median where n allows, else min–max;
    /// none for a single value.
    pub fn whisker(&self) -> Option<(f64, f64)> {
        (self.n >= 2).then(|| self.median_ci.unwrap_or((self.min, self.max)))
    }
}

pub fn summarise(values: &[f64]) -> Option<Summary> {
    let mut sorted: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    if sorted.is_empty() {
        return None;
    }
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    let mean = sorted.iter().sum::<f64>() / n as f64;
    let sd = (n > 1)
        .then(|| (sorted.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt());
    Some(Summary {
        n,
        min: sorted[0],
        median: median_of_sorted(&sorted),
        mean,
        max: sorted[n - 1],
        sd,
        median_ci: median_ci(&sorted),
    })
}

/// The median of the finite values, without the rest of a summary.
pub fn median(values: &[f64]) -> Option<f64> {
    let mut sorted: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    if sorted.is_empty() {
        return None;
    }
    sorted.sort_by(f64::total_cmp);
    Some(median_of_sorted(&sorted))
}

fn median_of_sorted(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

/// The distribution-free confidence interval of the median from order statistics
/// (W. J. Conover, Practical Nonparametric Statistics, 3rd ed., 1999, §3.2): the number of
/// values below the median is Binomial(n, 1/2), so [x(j), x(n+1-j)] covers the median with
/// probability 1 - 2·P(B ≤ j-1). j is the largest rank keeping that at least 95%.
pub fn median_ci(sorted: &[f64]) -> Option<(f64, f64)> {
    let n = sorted.len();
    if n < MIN_N_FOR_CI {
        return None;
    }
    let binomial = Binomial::new(0.5, n as u64).ok()?;
    let tail = (1.0 - CONFIDENCE) / 2.0;
    // The largest j with P(B <= j - 1) <= tail.
    let mut j = 0;
    while j < n / 2 && binomial.cdf(j as u64) <= tail {
        j += 1;
    }
    (j >= 1).then(|| (sorted[j - 1], sorted[n - j]))
}

/// How much `b` differs from `a`: the ratio of medians b/a with a 95% percentile-bootstrap
/// interval (B. Efron and R. Tibshirani, An Introduction to the Bootstrap, 1993, ch. 13):
/// both samples resampled with replacement 10,000 times, the ratio of the resampled
/// medians taken each time, and the 2.5th and 97.5th percentiles of those ratios. Seeded,
/// so a report shows the same interval every time. None with fewer than 3 values a side.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Ratio {
    pub ratio: f64,
    pub low: f64,
    pub high: f64,
}

pub const BOOTSTRAP_RESAMPLES: usize = 10_000;

pub fn ratio_of_medians(a: &[f64], b: &[f64]) -> Option<Ratio> {
    let a: Vec<f64> = a.iter().copied().filter(|v| v.is_finite()).collect();
    let b: Vec<f64> = b.iter().copied().filter(|v| v.is_finite()).collect();
    if a.is_empty() || b.is_empty() {
        return None;
    }
    let (median_a, median_b) = (median(&a)?, median(&b)?);
    if median_a <= 0.0 {
        return None;
    }
    let ratio = median_b / median_a;
    if a.len() < 3 || b.len() < 3 {
        return Some(Ratio {
            ratio,
            low: f64::NAN,
            high: f64::NAN,
        });
    }
    let mut rng = SmallRng::seed_from_u64(0x5eed);
    let mut resample_a = vec![0.0; a.len()];
    let mut resample_b = vec![0.0; b.len()];
    let mut ratios = Vec::with_capacity(BOOTSTRAP_RESAMPLES);
    for _ in 0..BOOTSTRAP_RESAMPLES {
        for slot in resample_a.iter_mut() {
            *slot = a[rng.gen_range(0..a.len())];
        }
        for slot in resample_b.iter_mut() {
            *slot = b[rng.gen_range(0..b.len())];
        }
        if let (Some(denominator), Some(numerator)) = (median(&resample_a), median(&resample_b)) {
            if denominator > 0.0 {
                ratios.push(numerator / denominator);
            }
        }
    }
    ratios.sort_by(f64::total_cmp);
    let at = |q: f64| ratios[((ratios.len() - 1) as f64 * q).round() as usize];
    Some(Ratio {
        ratio,
        low: at((1.0 - CONFIDENCE) / 2.0),
        high: at(1.0 - (1.0 - CONFIDENCE) / 2.0),
    })
}

/// The tolerance of "equivalent" when the record names none (`--tolerance`, in per cent).
pub use crate::results::DEFAULT_TOLERANCE_PCT;
/// The first look, and the most repeats of a run that decides then stops.
pub use crate::results::{DEFAULT_MAX_REPEATS, FIRST_LOOK_REPEATS};

/// How two set-ups' repeats are judged: the tolerance of "equivalent", and the looks the
/// error rate is spent over (see [`paired_looks`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DecisionRule {
    /// T: "equivalent" means within [1/(1+T), 1+T]; a lead must clear 1+T.
    pub tolerance: f64,
    pub looks: Looks,
}

/// When the repeats are looked at.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Looks {
    /// A fixed count (`--repeat N`): one look, once all the repeats are in, with the whole
    /// error rate.
    Once,
    /// Decide, then stop: a look after every round from `first` to `last` repeats, the
    /// run free to stop at any of them.
    EveryRound { first: usize, last: usize },
}

impl DecisionRule {
    /// One look at the end of a fixed count of repeats, with a tolerance in per cent.
    pub fn fixed(tolerance_pct: f64) -> DecisionRule {
        DecisionRule {
            tolerance: tolerance_pct / 100.0,
            looks: Looks::Once,
        }
    }

    /// Looks after rounds `first..=last` (first at least [`FIRST_LOOK_REPEATS`]), with a
    /// tolerance in per cent.
    pub fn sequential(tolerance_pct: f64, first: usize, last: usize) -> DecisionRule {
        let first = first.max(FIRST_LOOK_REPEATS);
        DecisionRule {
            tolerance: tolerance_pct / 100.0,
            looks: Looks::EveryRound {
                first,
                last: last.max(first),
            },
        }
    }

    /// The rounds looked at when `pairs` are in: the last alone for a fixed count; every
    /// round from the first look on when deciding.
    fn look_rounds(&self, pairs: usize) -> std::ops::RangeInclusive<usize> {
        match self.looks {
            Looks::Once => pairs.max(FIRST_LOOK_REPEATS)..=pairs,
            Looks::EveryRound { first, .. } => first..=pairs,
        }
    }

    /// The two-sided error rate spent at each look. A fixed count spends it all at its one
    /// look. Deciding spends it by Bonferroni over the looks first..=last, α/(last−first+1)
    /// each, so that the chance of any look's interval missing the true ratio is at most α
    /// by the union bound whatever the dependence between looks, and so whatever rule
    /// stops the run (the simplest alpha-spending rule: C. Jennison and B. W. Turnbull,
    /// Group Sequential Methods with Applications to Clinical Trials, 2000, §2.2;
    /// docs/design/time-and-verdicts.md §3). Should a run go beyond its last look, the
    /// count of looks grows with it.
    fn alpha_per_look(&self, pairs: usize) -> f64 {
        match self.looks {
            Looks::Once => 1.0 - CONFIDENCE,
            Looks::EveryRound { first, last } => {
                (1.0 - CONFIDENCE) / (last.max(pairs) + 1 - first) as f64
            }
        }
    }

    /// ln(1+T): the tolerance on the log scale, where it is symmetric.
    fn log_tolerance(&self) -> f64 {
        self.tolerance.ln_1p()
    }
}

impl Default for DecisionRule {
    /// Deciding with the default tolerance and most repeats.
    fn default() -> DecisionRule {
        DecisionRule::sequential(
            DEFAULT_TOLERANCE_PCT,
            FIRST_LOOK_REPEATS,
            DEFAULT_MAX_REPEATS,
        )
    }
}

/// What the repeats say about "leader over other".
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Answer {
    /// The whole interval above 1+T.
    Leads,
    /// The whole interval inside [1/(1+T), 1+T].
    Equivalent,
    /// Neither yet, or the interval lies below 1/(1+T) (the paired repeats contradict the
    /// medians' leader); with the repeats more it would take, estimated from the spread.
    Undecided { more_repeats: Option<u32> },
}

/// A decision on paired repeats: the geometric mean of the per-round ratios with the
/// interval the answer was read from.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Decision {
    /// Rounds paired (repeat k of one with repeat k of the other).
    pub pairs: usize,
    /// exp(mean of ln ratios) with the running intersection of the looks' intervals.
    pub interval: Ratio,
    pub answer: Answer,
}

/// Per round, `b[k] / a[k]`: repeat k of each set-up paired, as the runner alternates
/// set-ups within a round, so that a machine's slow drift cancels in the ratio (duet
/// benchmarking's idea without running both at once: L. Bulej et al., ICPE 2020). When the
/// counts differ (a repeat that did not complete, a query kind one repeat never ran) the
/// first min(n) rounds are paired and the rest left out, rather than mixing paired and
/// unpaired evidence. Non-finite and non-positive values give no ratio.
pub fn paired_ratios(a: &[f64], b: &[f64]) -> Vec<f64> {
    a.iter()
        .zip(b)
        .map(|(a, b)| b / a)
        .filter(|r| r.is_finite() && *r > 0.0)
        .collect()
}

/// The intervals of the ratio after each look (the rule's rounds up to n, the length of
/// `ratios`), each the running intersection of the t intervals so far, so that they only
/// shrink and an answer, once given, stays: at look k, mean ± t(1−α_k/2, k−1)·s/√k of the k log-ratios (Student's
/// t interval on the paired differences), α_k from [`DecisionRule::alpha_per_look`]. Should
/// the intersection ever come out empty (a drift the pairing did not cancel), the look's
/// own interval stands.
pub fn paired_looks(ratios: &[f64], rule: &DecisionRule) -> Vec<Ratio> {
    let logs: Vec<f64> = ratios.iter().map(|r| r.ln()).collect();
    let mut looks = Vec::new();
    let (mut low, mut high) = (f64::NEG_INFINITY, f64::INFINITY);
    for k in rule.look_rounds(logs.len()) {
        let (mean, sd) = mean_sd(&logs[..k]);
        let half = t_quantile(rule.alpha_per_look(k), k) * sd / (k as f64).sqrt();
        let (look_low, look_high) = (mean - half, mean + half);
        if look_low.max(low) <= look_high.min(high) {
            (low, high) = (look_low.max(low), look_high.min(high));
        } else {
            (low, high) = (look_low, look_high);
        }
        looks.push(Ratio {
            ratio: mean.exp(),
            low: low.exp(),
            high: high.exp(),
        });
    }
    looks
}

/// The answer an interval of "leader over other" gives under `rule`: a lead only where
/// the whole interval clears 1+T (not merely 1), so that "leads" and "equivalent" can
/// never both be reached on one run's looks: each region, once entered, is kept (an
/// indifference zone, as in group-sequential equivalence trials; the design note argues
/// it). A true ratio right at 1+T never decides, and says so.
pub fn answer_of(interval: &Ratio, rule: &DecisionRule) -> Answer {
    let edge = 1.0 + rule.tolerance;
    if interval.low > edge {
        Answer::Leads
    } else if interval.low >= 1.0 / edge && interval.high <= edge {
        Answer::Equivalent
    } else {
        Answer::Undecided { more_repeats: None }
    }
}

/// The decision on `ratios` (leader over other, one per round, from [`paired_ratios`]):
/// the last look's interval and its answer; undecided with an estimate of the repeats more
/// it would take. None before the first look.
pub fn decide(ratios: &[f64], rule: &DecisionRule) -> Option<Decision> {
    let interval = *paired_looks(ratios, rule).last()?;
    let answer = match answer_of(&interval, rule) {
        Answer::Undecided { .. } => Answer::Undecided {
            more_repeats: more_repeats(ratios, rule),
        },
        decided => decided,
    };
    Some(Decision {
        pairs: ratios.len(),
        interval,
        answer,
    })
}

/// The repeats more that would decide, if the mean and spread of the log-ratios stay as
/// seen: the smallest n with t·s/√n < δ, i.e. n ≈ (t·s/δ)², where δ is the distance from
/// the mean to the edge of the region it lies in (above ln(1+T): a lead; inside ±ln(1+T):
/// equivalence; below −ln(1+T): the other way round). None at an edge (δ = 0: it never
/// decides) or beyond 100,000 repeats.
fn more_repeats(ratios: &[f64], rule: &DecisionRule) -> Option<u32> {
    let logs: Vec<f64> = ratios.iter().map(|r| r.ln()).collect();
    let (mean, sd) = mean_sd(&logs);
    let edge = rule.log_tolerance();
    let delta = (mean.abs() - edge).abs();
    if delta <= 0.0 || !sd.is_finite() {
        return None;
    }
    let now = logs.len();
    let decides = |n: usize| t_quantile(rule.alpha_per_look(n), n) * sd / (n as f64).sqrt() < delta;
    // The half-width falls with n (the cap's growth beyond K is slower than √n), so a
    // binary search finds the smallest n.
    let (mut low, mut high) = (now + 1, 100_000);
    if !decides(high) {
        return None;
    }
    while low < high {
        let mid = (low + high) / 2;
        if decides(mid) {
            high = mid;
        } else {
            low = mid + 1;
        }
    }
    u32::try_from(low - now).ok()
}

/// Mean and sample standard deviation (n − 1).
fn mean_sd(values: &[f64]) -> (f64, f64) {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let variance = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, variance.sqrt())
}

/// Student's t quantile 1 − α/2 with n − 1 degrees of freedom.
fn t_quantile(alpha: f64, n: usize) -> f64 {
    StudentsT::new(0.0, 1.0, (n - 1) as f64)
        .map(|t| t.inverse_cdf(1.0 - alpha / 2.0))
        .unwrap_or(f64::INFINITY)
}

/// The warning for cells of `n` repeats when n is too small for an interval.
pub fn too_few_warning(n: usize) -> Option<String> {
    (n > 1 && n < MIN_N_FOR_CI).then(|| {
        format!("{n} repeats per cell are too few for a 95% interval of the median: use --repeat {MIN_N_FOR_CI} or more")
    })
}

/// What one cell's repeats cannot support.
#[derive(Debug, Clone, PartialEq)]
pub enum CellWarning {
    /// A repeat `factor` times worse than the median (1-based `repeat`).
    FarRepeat {
        label: String,
        repeat: usize,
        factor: f64,
    },
    /// The repeats spread over `pct` per cent of the median, from `min` to `max`.
    Spread {
        label: String,
        pct: f64,
        min: f64,
        max: f64,
    },
}

impl CellWarning {
    pub fn text(&self) -> String {
        match self {
            CellWarning::FarRepeat {
                label,
                repeat,
                factor,
            } => format!(
                "{label}: repeat {repeat} was {factor:.1}× slower than the median: use --repeat 10 or a quieter machine"
            ),
            CellWarning::Spread {
                label,
                pct,
                min,
                max,
            } => format!(
                "{label}: repeats spread over {pct:.0}% of the median ({} to {}): the figure is not stable here",
                figure(*min),
                figure(*max)
            ),
        }
    }
}

/// Named warnings about one cell's repeats (`values` in run order, `label` naming the
/// cell): a repeat far from the others, a wide spread.
pub fn warnings(label: &str, values: &[f64], higher_is_better: bool) -> Vec<String> {
    cell_warnings(label, values, higher_is_better)
        .iter()
        .map(CellWarning::text)
        .collect()
}

/// [`warnings`] as values, for reports that group them.
pub fn cell_warnings(label: &str, values: &[f64], higher_is_better: bool) -> Vec<CellWarning> {
    let Some(summary) = summarise(values) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    if summary.n >= 3 && summary.median > 0.0 {
        // The repeat furthest on the bad side of the median.
        let worst = values.iter().enumerate().max_by(|(_, x), (_, y)| {
            let badness = |v: f64| {
                if higher_is_better {
                    summary.median / v.max(1e-12)
                } else {
                    v / summary.median
                }
            };
            badness(**x).total_cmp(&badness(**y))
        });
        if let Some((index, &value)) = worst {
            let factor = if higher_is_better {
                summary.median / value.max(1e-12)
            } else {
                value / summary.median
            };
            if factor >= 1.5 {
                out.push(CellWarning::FarRepeat {
                    label: label.to_string(),
                    repeat: index + 1,
                    factor,
                });
            }
        }
        let spread = (summary.max - summary.min) / summary.median;
        if spread > 0.5 {
            out.push(CellWarning::Spread {
                label: label.to_string(),
                pct: spread * 100.0,
                min: summary.min,
                max: summary.max,
            });
        }
    }
    out
}

/// A figure with as many decimals as its size deserves.
pub fn figure(value: f64) -> String {
    if value == 0.0 {
        "0".into()
    } else if value.abs() >= 100.0 {
        format!("{value:.0}")
    } else if value.abs() >= 1.0 {
        format!("{value:.2}")
    } else {
        format!("{value:.4}")
    }
}

#[cfg(test)]
mod tests;
