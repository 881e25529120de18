//! The machine's noise in the verdict: over every comparison of three rounds or more (each
//! server's set-ups at one place, [`crate::view::round_noise`]), the median spreads and
//! the largest drift, in one sentence under the answer. Owns that summary and its words;
//! must not rank anything nor compute the split itself.

use serde::Serialize;

use crate::view::round_noise::RoundNoise;
use crate::view::stats::median;

/// The machine's noise over the run's comparisons, each of one server's set-ups at one
/// place ([`crate::view::round_noise::round_noise`]).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Noise {
    /// Comparisons of three rounds or more looked at.
    pub comparisons: usize,
    /// The median over them of the spread common to every set-up of a round (per cent).
    pub together_pct: f64,
    /// The median over them of each set-up's own spread, the rounds' moves taken out.
    pub apart_pct: f64,
    /// The largest drift from the first round to the last among comparisons of five
    /// rounds or more; none without one.
    pub largest_drift: Option<Drift>,
    /// All of it in a sentence.
    pub text: String,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Drift {
    /// From the first round to the last, on a least-squares line (per cent).
    pub pct: f64,
    /// Where: the phase at its thread count.
    pub at: String,
}

/// Below this, a drift over the run is not worth a clause.
const DRIFT_WORTH_SAYING_PCT: f64 = 2.0;
/// A line through fewer rounds is mostly the first round's warm-up, not a drift.
const MIN_ROUNDS_FOR_DRIFT: usize = 5;

/// The machine's noise over every comparison of three rounds or more, in one sentence:
/// the median spreads, and the largest drift with where it was.
pub(super) fn noise(noises: &[(String, RoundNoise)]) -> Option<Noise> {
    let together = median(
        &noises
            .iter()
            .map(|(_, n)| n.together_pct)
            .collect::<Vec<_>>(),
    )?;
    let apart = median(&noises.iter().map(|(_, n)| n.apart_pct).collect::<Vec<_>>())?;
    let largest = noises
        .iter()
        .filter(|(_, n)| n.rounds >= MIN_ROUNDS_FOR_DRIFT)
        .max_by(|a, b| a.1.trend_pct.abs().total_cmp(&b.1.trend_pct.abs()));
    let comparisons = noises.len();
    let drift = match largest {
        None => String::new(),
        Some((_, largest)) if largest.trend_pct.abs() < DRIFT_WORTH_SAYING_PCT => format!(
            "; no comparison of {MIN_ROUNDS_FOR_DRIFT} rounds or more drifted by {DRIFT_WORTH_SAYING_PCT:.0}% from its first round to its last"
        ),
        Some((at, largest)) => format!(
            "; the largest drift from first round to last was {:+.1}% ({at})",
            largest.trend_pct
        ),
    };
    let text = format!(
        "Noise: from round to round the machine moved every set-up together by ±{together:.1}% (median of {comparisons} comparison{}), which pairing by round cancels; each set-up's own noise was ±{apart:.1}%, which only more repeats narrow{drift}.",
        if comparisons == 1 { "" } else { "s" }
    );
    Some(Noise {
        comparisons,
        together_pct: together,
        apart_pct: apart,
        largest_drift: largest.map(|(at, n)| Drift {
            pct: n.trend_pct,
            at: at.clone(),
        }),
        text,
    })
}
