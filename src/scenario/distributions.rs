//! Random integers in [a, b] with sysbench 1.0's `--rand-type` meanings and parameters, so
//! that a workload driven by enginebench touches rows the way sysbench's does:
//!
//! - uniform: every value equally likely.
//! - gaussian: the mean of `spec_iter` uniform draws (a bell centred in the range).
//! - special: `spec_res`% of values fall uniformly into the middle `spec_pct`% of the
//!   range (the "hot" rows), the rest are gaussian over the whole range. sysbench's default.
//! - pareto: a + (b − a + 1) · u^(ln h / ln(1 − h)), so a fraction h of the values gets
//!   1 − h of the hits.
//! - zipfian: P(k) ∝ 1/k^exp over ranks k = 1..n, by rejection-inversion sampling
//!   (Hörmann & Derflinger 1996, as in Apache Commons RNG and sysbench 1.1).

use clap::ValueEnum;
use rand::rngs::SmallRng;
use rand::Rng;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum RandType {
    Uniform,
    Gaussian,
    Special,
    Pareto,
    Zipfian,
}

/// `--rand-type` and its parameters, with sysbench's defaults.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct RandSpec {
    pub rand_type: RandType,
    pub spec_iter: u32,
    pub spec_pct: u32,
    pub spec_res: u32,
    pub pareto_h: f64,
    pub zipfian_exp: f64,
}

impl Default for RandSpec {
    fn default() -> Self {
        RandSpec {
            rand_type: RandType::Special,
            spec_iter: 12,
            spec_pct: 1,
            spec_res: 75,
            pareto_h: 0.2,
            zipfian_exp: 0.8,
        }
    }
}

/// A sampler with the spec's constants computed once (per worker).
#[derive(Debug, Clone)]
pub struct Distribution {
    spec: RandSpec,
    iter_mult: f64,
    pct_mult: f64,
    pct_half_mult: f64,
    res_mult: f64,
    pareto_power: f64,
    zipf_s: f64,
    zipf_h_integral_x1: f64,
}

impl Distribution {
    pub fn new(spec: RandSpec) -> Result<Distribution, String> {
        if spec.spec_iter == 0 {
            return Err("--rand-spec-iter must be at least 1".into());
        }
        if spec.spec_pct > 100 {
            return Err("--rand-spec-pct is a percentage: 0..=100".into());
        }
        if spec.spec_res >= 100 {
            return Err("--rand-spec-res is a percentage below 100".into());
        }
        if !(spec.pareto_h > 0.0 && spec.pareto_h < 1.0) {
            return Err("--rand-pareto-h must be between 0 and 1 (exclusive)".into());
        }
        if spec.zipfian_exp.is_nan() || spec.zipfian_exp < 0.0 {
            return Err("--rand-zipfian-exp must be >= 0".into());
        }
        let e = spec.zipfian_exp;
        Ok(Distribution {
            spec,
            iter_mult: 1.0 / f64::from(spec.spec_iter),
            pct_mult: f64::from(spec.spec_pct) / 100.0,
            pct_half_mult: f64::from(spec.spec_pct) / 200.0,
            res_mult: 100.0 / (100.0 - f64::from(spec.spec_res)),
            pareto_power: spec.pareto_h.ln() / (1.0 - spec.pareto_h).ln(),
            zipf_s: 2.0 - h_integral_inverse(h_integral(2.5, e) - h(2.0, e), e),
            zipf_h_integral_x1: h_integral(1.5, e) - 1.0,
        })
    }

    /// A value in [a, b] (a <= b) by the configured `--rand-type`.
    #[inline]
    pub fn sample(&self, rng: &mut SmallRng, a: u32, b: u32) -> u32 {
        match self.spec.rand_type {
            RandType::Uniform => uniform(rng, a, b),
            RandType::Gaussian => {
                let t = f64::from(b - a) + 1.0;
                let sum: f64 = (0..self.spec.spec_iter).map(|_| rng.gen::<f64>() * t).sum();
                a + (sum * self.iter_mult) as u32
            }
            RandType::Special => {
                let t = f64::from(b - a);
                let rnd: f64 = rng.gen();
                if rnd * t * self.res_mult < t {
                    let sum: f64 = (0..self.spec.spec_iter).map(|_| rng.gen::<f64>()).sum();
                    return a + (sum * t * self.iter_mult) as u32;
                }
                // The hot spot: the middle spec_pct% of the range, uniformly.
                let width = t * self.pct_mult;
                a + (rnd * (width + 1.0) + t / 2.0 - t * self.pct_half_mult) as u32
            }
            RandType::Pareto => {
                let n = f64::from(b - a) + 1.0;
                a + (n * rng.gen::<f64>().powf(self.pareto_power)) as u32
            }
            RandType::Zipfian => a + self.zipfian_rank(rng, b - a + 1) - 1,
        }
    }

    /// A rank in [1, n] with P(k) ∝ 1/k^e (rejection-inversion).
    fn zipfian_rank(&self, rng: &mut SmallRng, n: u32) -> u32 {
        let e = self.spec.zipfian_exp;
        let h_integral_n = h_integral(f64::from(n) + 0.5, e);
        loop {
            let u = h_integral_n + rng.gen::<f64>() * (self.zipf_h_integral_x1 - h_integral_n);
            let x = h_integral_inverse(u, e);
            let k = ((x + 0.5) as u32).clamp(1, n);
            if f64::from(k) - x <= self.zipf_s
                || u >= h_integral(f64::from(k) + 0.5, e) - h(f64::from(k), e)
            {
                return k;
            }
        }
    }
}

/// Uniform in [a, b], as sysbench's `sysbench.rand.uniform`.
#[inline]
pub fn uniform(rng: &mut SmallRng, a: u32, b: u32) -> u32 {
    a + (rng.gen::<f64>() * (f64::from(b - a) + 1.0)) as u32
}

/// H(x) = (x^(1−e) − 1)/(1 − e), or ln x for e = 1: the integral of h.
fn h_integral(x: f64, e: f64) -> f64 {
    let log_x = x.ln();
    exp_m1_over_x((1.0 - e) * log_x) * log_x
}

/// h(x) = 1/x^e.
fn h(x: f64, e: f64) -> f64 {
    (-e * x.ln()).exp()
}

fn h_integral_inverse(x: f64, e: f64) -> f64 {
    // Numerical error can push t just below −1, where log1p is undefined.
    let t = (x * (1.0 - e)).max(-1.0);
    (ln1p_over_x(t) * x).exp()
}

/// ln(1 + x)/x, by its Taylor series near 0.
fn ln1p_over_x(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x))
    }
}

/// (e^x − 1)/x, by its Taylor series near 0.
fn exp_m1_over_x(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x * 0.5 * (1.0 + x / 3.0 * (1.0 + 0.25 * x))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn histogram(rand_type: RandType, n: u32, draws: usize) -> Vec<usize> {
        let dist = Distribution::new(RandSpec {
            rand_type,
            ..RandSpec::default()
        })
        .unwrap();
        let mut rng = SmallRng::seed_from_u64(11);
        let mut counts = vec![0; n as usize];
        for _ in 0..draws {
            let value = dist.sample(&mut rng, 1, n);
            assert!((1..=n).contains(&value), "{rand_type:?} gave {value}");
            counts[(value - 1) as usize] += 1;
        }
        counts
    }

    #[test]
    fn uniform_is_flat() {
        let counts = histogram(RandType::Uniform, 10, 100_000);
        assert!(
            counts.iter().all(|&c| (9_000..11_000).contains(&c)),
            "{counts:?}"
        );
    }

    #[test]
    fn gaussian_is_centred_and_thin_tailed() {
        // The mean of 12 uniform draws has σ = range/12: ±10 around the centre of 1..=100
        // is ±1.2σ, about 77% of draws; beyond ±40 (4.8σ) almost none.
        let counts = histogram(RandType::Gaussian, 100, 100_000);
        let middle: usize = counts[40..60].iter().sum();
        let tails: usize = counts[..10].iter().chain(counts[90..].iter()).sum();
        assert!((74_000..80_000).contains(&middle), "middle {middle}");
        assert!(tails < 100, "tails {tails}");
    }

    #[test]
    fn special_puts_three_quarters_in_the_middle_percent() {
        // 75% of draws land in a window of 1% of the range (spec_res 75, spec_pct 1) in
        // the middle of 1..=10000: sysbench reuses the deciding draw (in [0.25, 1)) to place
        // them, which puts the window at 4975..=5051. The other 25% are gaussian.
        let counts = histogram(RandType::Special, 10_000, 200_000);
        let hot: usize = counts[4_974..5_051].iter().sum();
        let share = hot as f64 / 200_000.0;
        assert!((0.74..0.80).contains(&share), "hot share {share}");
    }

    #[test]
    fn pareto_gives_most_hits_to_few_values() {
        // h = 0.2: the first 20% of values get about 80% of the hits.
        let counts = histogram(RandType::Pareto, 1000, 100_000);
        let head: usize = counts[..200].iter().sum();
        let share = head as f64 / 100_000.0;
        assert!((0.77..0.83).contains(&share), "head share {share}");
    }

    #[test]
    fn zipfian_follows_its_power_law() {
        // P(k) ∝ k^-0.8: rank 1 is 2^0.8 ≈ 1.74× as likely as rank 2, 10^0.8 ≈ 6.3× rank 10.
        let counts = histogram(RandType::Zipfian, 1000, 400_000);
        let ratio_2 = counts[0] as f64 / counts[1] as f64;
        let ratio_10 = counts[0] as f64 / counts[9] as f64;
        assert!((1.6..1.9).contains(&ratio_2), "{ratio_2}");
        assert!((5.6..7.1).contains(&ratio_10), "{ratio_10}");
    }

    #[test]
    fn bad_parameters_are_refused() {
        let bad = |spec: RandSpec| Distribution::new(spec).is_err();
        assert!(bad(RandSpec {
            spec_iter: 0,
            ..RandSpec::default()
        }));
        assert!(bad(RandSpec {
            spec_res: 100,
            ..RandSpec::default()
        }));
        assert!(bad(RandSpec {
            pareto_h: 1.0,
            ..RandSpec::default()
        }));
        assert!(bad(RandSpec {
            zipfian_exp: -1.0,
            ..RandSpec::default()
        }));
        assert_eq!(
            Distribution::new(RandSpec::default()).unwrap().sample(
                &mut SmallRng::seed_from_u64(1),
                7,
                7
            ),
            7
        );
    }
}
