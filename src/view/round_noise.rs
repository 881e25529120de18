//! The machine's noise as the rounds of repeats show it: on one server, each set-up's
//! values in round order (round k of each paired), split into what moved a whole round
//! together (the drift that pairing by round cancels), what each set-up did on its own
//! (what only more repeats narrow), and the drift over the run. Owns that split; must not
//! decide anything (stats does) nor word it (the verdict does).

/// How one server's rounds of repeats varied, split the way pairing by round sees it
/// (a two-way layout without replication, set-up × round, on log values).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct RoundNoise {
    /// Complete rounds looked at (every set-up has that many values).
    pub rounds: usize,
    /// One standard deviation, as a percentage, of what moved every set-up together from
    /// round to round: the machine's drift and noise between rounds, which a ratio of
    /// values paired by round cancels. Estimated as the round means' variance less the
    /// share of the residual noise they carry (never below 0).
    pub together_pct: f64,
    /// One standard deviation, as a percentage, of each set-up's values once the rounds'
    /// common moves are taken out: the noise pairing leaves, which only more repeats narrow.
    pub apart_pct: f64,
    /// How far the rounds' common level moved from the first round to the last, on a
    /// least-squares line, as a percentage (positive: the figures grew over the run).
    pub trend_pct: f64,
}

/// The round noise of `series`, one per set-up, each its values in round order (round k
/// of each paired); None with fewer than two set-ups or three complete rounds, or a value
/// that is not positive. Log values, so that a percentage means the same at every scale.
pub fn round_noise(series: &[&[f64]]) -> Option<RoundNoise> {
    let rounds = series.iter().map(|s| s.len()).min()?;
    let setups = series.len();
    if setups < 2 || rounds < 3 {
        return None;
    }
    let logs: Vec<Vec<f64>> = series
        .iter()
        .map(|s| s[..rounds].iter().map(|v| v.ln()).collect())
        .collect();
    if logs.iter().flatten().any(|v| !v.is_finite()) {
        return None;
    }
    let setup_means: Vec<f64> = logs
        .iter()
        .map(|s| s.iter().sum::<f64>() / rounds as f64)
        .collect();
    let round_means: Vec<f64> = (0..rounds)
        .map(|r| logs.iter().map(|s| s[r]).sum::<f64>() / setups as f64)
        .collect();
    let grand = round_means.iter().sum::<f64>() / rounds as f64;
    let residual_sq: f64 = logs
        .iter()
        .zip(&setup_means)
        .flat_map(|(s, m)| {
            s.iter()
                .zip(&round_means)
                .map(move |(v, c)| (v - m - c + grand).powi(2))
        })
        .sum();
    let residual_var = residual_sq / ((setups - 1) * (rounds - 1)) as f64;
    let round_mean = round_means.iter().sum::<f64>() / rounds as f64;
    let round_var = round_means
        .iter()
        .map(|c| (c - round_mean).powi(2))
        .sum::<f64>()
        / (rounds - 1) as f64;
    let together_var = (round_var - residual_var / setups as f64).max(0.0);
    // The least-squares slope of the round means over the round number.
    let centre = (rounds - 1) as f64 / 2.0;
    let slope = round_means
        .iter()
        .enumerate()
        .map(|(r, c)| (r as f64 - centre) * (c - grand))
        .sum::<f64>()
        / (0..rounds)
            .map(|r| (r as f64 - centre).powi(2))
            .sum::<f64>();
    let pct = |log: f64| (log.exp() - 1.0) * 100.0;
    Some(RoundNoise {
        rounds,
        together_pct: pct(together_var.sqrt()),
        apart_pct: pct(residual_var.sqrt()),
        trend_pct: pct(slope * (rounds - 1) as f64),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::rngs::SmallRng;
    use rand::{Rng, SeedableRng};

    #[test]
    fn rounds_that_move_every_set_up_together_are_the_machines_drift() {
        // Every set-up 10% up in rounds 2 and 4 and down in round 3, exactly together:
        // all of it is common to the round, none is left against each other.
        let round = [1.0, 1.1, 1.0 / 1.1, 1.1, 1.0];
        let a: Vec<f64> = round.iter().map(|r| 100.0 * r).collect();
        let b: Vec<f64> = round.iter().map(|r| 250.0 * r).collect();
        let noise = round_noise(&[&a, &b]).unwrap();
        assert_eq!(noise.rounds, 5);
        assert!(noise.apart_pct < 1e-9, "{noise:?}");
        assert!((5.0..9.0).contains(&noise.together_pct), "{noise:?}");
        assert!(noise.trend_pct.abs() < 5.0, "no drift one way: {noise:?}");
    }

    #[test]
    fn a_steady_slowdown_is_a_trend_and_independent_noise_is_apart() {
        // Each round 2% slower than the one before, for both: a trend of about 1.02^7.
        let a: Vec<f64> = (0..8).map(|r| 100.0 * 1.02f64.powi(r)).collect();
        let b: Vec<f64> = (0..8).map(|r| 50.0 * 1.02f64.powi(r)).collect();
        let noise = round_noise(&[&a, &b]).unwrap();
        assert!(
            (noise.trend_pct - (1.02f64.powi(7) - 1.0) * 100.0).abs() < 0.01,
            "{noise:?}"
        );
        assert!(noise.apart_pct < 1e-9, "{noise:?}");
        // Set-ups that move on their own, never together: the rounds carry nothing common
        // beyond what that noise puts in their means.
        let mut rng = SmallRng::seed_from_u64(48);
        let mut own = || -> Vec<f64> {
            (0..200)
                .map(|_| 100.0 * (1.0 + rng.gen_range(-0.1..0.1)))
                .collect()
        };
        let (c, d) = (own(), own());
        let noise = round_noise(&[&c, &d]).unwrap();
        assert!(noise.together_pct < 2.0, "{noise:?}");
        assert!((4.0..8.0).contains(&noise.apart_pct), "{noise:?}");
        // Too few rounds, or a single set-up: nothing to say.
        assert_eq!(round_noise(&[&a[..2], &b[..2]]), None);
        assert_eq!(round_noise(&[&a]), None);
    }
}
