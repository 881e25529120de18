//! Statistics over repeats: summaries with a distribution-free confidence interval of the
//! median, the ratio of two cells' medians with a bootstrap interval, and named warnings
//! when the repeats cannot support a conclusion. Every statistic a report shows comes from
//! here; reports only format them. Must not know how a figure is shown beyond `figure`,
//! the precision the warnings quote.

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use statrs::distribution::{Binomial, DiscreteCDF};

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
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
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

impl Ratio {
    /// Whether the interval excludes 1 (no difference): only then is there a verdict.
    pub fn significant(&self) -> bool {
        self.low.is_finite() && self.high.is_finite() && (self.low > 1.0 || self.high < 1.0)
    }
}

/// The warning for cells of `n` repeats when n is too small for an interval.
pub fn too_few_warning(n: usize) -> Option<String> {
    (n > 1 && n < MIN_N_FOR_CI).then(|| {
        format!("{n} repeats per cell are too few for a 95% interval of the median: use --repeat {MIN_N_FOR_CI} or more")
    })
}

/// Named warnings about one cell's repeats (`values` in run order, `label` naming the
/// cell): a repeat far from the others, a wide spread.
pub fn warnings(label: &str, values: &[f64], higher_is_better: bool) -> Vec<String> {
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
                out.push(format!(
                    "{label}: repeat {} was {factor:.1}× slower than the median: use --repeat 10 or a quieter machine",
                    index + 1,
                ));
            }
        }
        let spread = (summary.max - summary.min) / summary.median;
        if spread > 0.5 {
            out.push(format!(
                "{label}: repeats spread over {:.0}% of the median ({} to {}): the figure is not stable here",
                spread * 100.0,
                figure(summary.min),
                figure(summary.max)
            ));
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
mod tests {
    use super::*;

    #[test]
    fn summaries_and_the_median_interval_follow_the_binomial() {
        let summary = summarise(&[3.0, 1.0, 2.0]).unwrap();
        assert_eq!(
            (summary.n, summary.min, summary.median, summary.max),
            (3, 1.0, 2.0, 3.0)
        );
        assert_eq!(summary.sd, Some(1.0));
        assert_eq!(summary.median_ci, None, "n = 3 cannot give 95%");
        // n = 6: P(B <= 0) = 1/64 <= 2.5%, P(B <= 1) = 7/64 > 2.5%: [x(1), x(6)].
        let six: Vec<f64> = (1..=6).map(f64::from).collect();
        assert_eq!(summarise(&six).unwrap().median_ci, Some((1.0, 6.0)));
        // n = 10: P(B <= 1) = 11/1024 <= 2.5%, P(B <= 2) = 56/1024 > 2.5%: [x(2), x(9)].
        let ten: Vec<f64> = (1..=10).map(f64::from).collect();
        assert_eq!(summarise(&ten).unwrap().median_ci, Some((2.0, 9.0)));
        // n = 20: the textbook ranks are 6 and 15.
        let twenty: Vec<f64> = (1..=20).map(f64::from).collect();
        assert_eq!(summarise(&twenty).unwrap().median_ci, Some((6.0, 15.0)));
        assert_eq!(summarise(&[]), None);
    }

    #[test]
    fn a_clear_difference_is_significant_and_noise_is_not() {
        let a = [100.0, 102.0, 98.0, 101.0, 99.0];
        let b = [150.0, 149.0, 152.0, 151.0, 148.0];
        let ratio = ratio_of_medians(&a, &b).unwrap();
        assert!((ratio.ratio - 1.5).abs() < 1e-9);
        assert!(ratio.low > 1.4 && ratio.high < 1.6, "{ratio:?}");
        assert!(ratio.significant());
        let c = [99.0, 103.0, 97.0, 102.0, 100.0];
        assert!(!ratio_of_medians(&a, &c).unwrap().significant());
        // Too few values: a ratio, but no interval and no verdict.
        let few = ratio_of_medians(&[1.0, 2.0], &[3.0, 4.0]).unwrap();
        assert!(few.low.is_nan() && !few.significant());
    }

    #[test]
    fn warnings_name_the_cell_the_repeat_and_the_fix() {
        assert_eq!(
            too_few_warning(3).unwrap(),
            "3 repeats per cell are too few for a 95% interval of the median: use --repeat 6 or more"
        );
        assert_eq!(too_few_warning(1), None);
        assert_eq!(too_few_warning(6), None);
        let warnings = warnings("select InnoDB threads=5", &[100.0, 210.0, 101.0], false);
        assert_eq!(
            warnings[0],
            "select InnoDB threads=5: repeat 2 was 2.1× slower than the median: use --repeat 10 or a quieter machine"
        );
        assert!(
            warnings[1].contains("spread over 109% of the median"),
            "{warnings:?}"
        );
        // Throughput: a low repeat is the slow one.
        let throughput = super::warnings("x", &[1000.0, 400.0, 990.0, 1010.0, 1005.0, 995.0], true);
        assert_eq!(
            throughput,
            vec![
                "x: repeat 2 was 2.5× slower than the median: use --repeat 10 or a quieter machine",
                "x: repeats spread over 61% of the median (400 to 1010): the figure is not stable here"
            ]
        );
    }
}
