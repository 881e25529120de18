//! A latency goal (`--slo "p99<5ms"`, optionally `,failed<1%`): its parsing, how many
//! events a probe needs to measure its percentile, and whether one probe's measurement met
//! it. The runner's capacity search and the view's reading of a search both judge with
//! [`Slo::judge`], so the record, the progress lines and the reports cannot disagree.
//!
//! Owns: the goal and the judgement of one measurement. Must not know how rates are
//! chosen (the runner's search does) nor how a capacity is reported.

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Tail events a percentile needs beyond it before it is measured rather than guessed:
/// p99 then needs 1,000 events, p99.9 10,000.
pub const TAIL_EVENTS: f64 = 10.0;
/// A probe lasts this long unless the study's cells are timed (its `--time`).
pub const DEFAULT_PROBE: std::time::Duration = std::time::Duration::from_secs(5);
/// The capacity's bracket is narrowed until its ends are within this share of each other,
/// unless `--slo-precision` says otherwise.
pub const DEFAULT_PRECISION: f64 = 0.10;

/// The goal, as `--slo` gives it and the record keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Slo {
    /// As written: "p99<5ms".
    pub text: String,
    /// 99.0 for p99.
    pub percentile: f64,
    /// The bound that percentile of intended-start latency must stay under.
    pub bound_us: u64,
    /// The share of events that may fail (0.01 for 1%); none: failures are not judged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_failed_share: Option<f64>,
    /// How close the bracket's ends must come: 0.1 stops when the lowest rate that failed
    /// is within 10% of the highest that met the goal.
    pub precision: f64,
    /// `--hold`: the rate to find the smallest cap for, among a list of caps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hold_per_s: Option<f64>,
}

/// What one probe measured against the goal.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Judgement {
    /// The goal's percentile of the probe's event latency.
    pub percentile_us: u64,
    pub failed_share: f64,
    /// Events measured, and how many the percentile needed.
    pub events: u64,
    pub events_needed: u64,
    pub met: bool,
}

impl Slo {
    /// "p99<5ms", "p99.9<20ms,failed<1%", "p50 < 800us".
    pub fn parse(text: &str) -> Result<Slo, String> {
        let usage = "use e.g. --slo 'p99<5ms' or 'p99.9<20ms,failed<1%'";
        let mut percentile = None;
        let mut bound_us = None;
        let mut max_failed_share = None;
        for part in text.split(',') {
            let compact: String = part.chars().filter(|c| !c.is_whitespace()).collect();
            let Some((name, bound)) = compact.split_once('<') else {
                return Err(format!("'{part}' in --slo '{text}' has no '<': {usage}"));
            };
            let name = name.to_ascii_lowercase();
            if let Some(p) = name.strip_prefix('p') {
                let p: f64 = p.parse().map_err(|_| {
                    format!("'{name}' in --slo '{text}' is not a percentile: {usage}")
                })?;
                if !(p > 0.0 && p < 100.0) {
                    return Err(format!(
                        "the percentile in --slo '{text}' must lie between 0 and 100 (p99, p99.9)"
                    ));
                }
                let bound = crate::units::parse_duration(bound)
                    .map_err(|err| format!("the latency bound in --slo '{text}': {err}"))?;
                if bound.is_zero() {
                    return Err(format!(
                        "the latency bound in --slo '{text}' must be above 0"
                    ));
                }
                percentile = Some(p);
                // Checked: `as u64` wrapped p99<1e15 (seconds) to a bound nobody wrote.
                let micros = u64::try_from(bound.as_micros()).map_err(|_| {
                    format!("the latency bound in --slo '{text}' is longer than any run can last: {usage}")
                })?;
                bound_us = Some(micros.max(1));
            } else if name == "failed" || name == "errors" {
                let share = bound
                    .strip_suffix('%')
                    .and_then(|p| p.parse::<f64>().ok())
                    .filter(|p| (0.0..=100.0).contains(p))
                    .ok_or_else(|| {
                        format!("'{bound}' in --slo '{text}' is not a share: give e.g. failed<1%")
                    })?;
                max_failed_share = Some(share / 100.0);
            } else {
                return Err(format!(
                    "'{name}' in --slo '{text}' is neither a percentile (p99) nor failed: {usage}"
                ));
            }
        }
        let (Some(percentile), Some(bound_us)) = (percentile, bound_us) else {
            return Err(format!(
                "--slo '{text}' names no latency percentile: {usage}"
            ));
        };
        Ok(Slo {
            text: text.trim().to_string(),
            percentile,
            bound_us,
            max_failed_share,
            precision: DEFAULT_PRECISION,
            hold_per_s: None,
        })
    }

    /// The goal with the command line's `--slo-precision` (when given) and `--hold`.
    pub fn with_choices(mut self, precision: Option<f64>, hold_per_s: Option<f64>) -> Slo {
        if let Some(precision) = precision {
            self.precision = precision;
        }
        self.hold_per_s = hold_per_s;
        self
    }

    /// Events a probe must measure for the goal's percentile to rest on at least
    /// [`TAIL_EVENTS`] events beyond it.
    pub fn events_needed(&self) -> u64 {
        // Less a hair, so that p99.9's 10,000.0000001 (binary fractions) is 10,000.
        (TAIL_EVENTS * 100.0 / (100.0 - self.percentile) - 1e-6).ceil() as u64
    }

    /// Whether a probe's events (latency from their intended start) met the goal. A probe
    /// that measured fewer events than the percentile needs, or could not keep its rate,
    /// does not meet it.
    pub fn judge(
        &self,
        event_latency: &Histogram<u64>,
        failed_events: u64,
        fell_behind: bool,
    ) -> Judgement {
        let events = event_latency.len();
        let percentile_us = if events == 0 {
            0
        } else {
            event_latency.value_at_quantile(self.percentile / 100.0)
        };
        let failed_share = if events + failed_events == 0 {
            0.0
        } else {
            failed_events as f64 / (events + failed_events) as f64
        };
        let events_needed = self.events_needed();
        let met = events >= events_needed
            && !fell_behind
            && percentile_us < self.bound_us
            && self.max_failed_share.is_none_or(|max| failed_share <= max);
        Judgement {
            percentile_us,
            failed_share,
            events,
            events_needed,
            met,
        }
    }

    /// "p99" or "p99.9".
    pub fn percentile_name(&self) -> String {
        format!("p{}", self.percentile)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn goals_parse_with_their_bounds_and_errors_name_the_fix() {
        let slo = Slo::parse("p99<5ms").unwrap();
        assert_eq!(
            (slo.percentile, slo.bound_us, slo.max_failed_share),
            (99.0, 5000, None)
        );
        assert_eq!(slo.events_needed(), 1000);
        let slo = Slo::parse("p99.9 < 20ms, failed<1%").unwrap();
        assert_eq!((slo.percentile, slo.bound_us), (99.9, 20_000));
        assert_eq!(slo.max_failed_share, Some(0.01));
        assert_eq!(slo.events_needed(), 10_000);
        assert_eq!(Slo::parse("p50<800us").unwrap().events_needed(), 20);
        for (bad, says) in [
            ("p99", "has no '<'"),
            ("q99<5ms", "neither a percentile"),
            ("p100<5ms", "between 0 and 100"),
            ("p99<fast", "not a duration"),
            ("failed<1%", "names no latency percentile"),
            ("p99<5ms,failed<x", "is not a share"),
            // It wrapped to a bound nobody wrote.
            ("p99<1e15", "longer than any run can last"),
        ] {
            let err = Slo::parse(bad).unwrap_err();
            assert!(err.contains(says), "{bad}: {err}");
        }
    }

    #[test]
    fn a_probe_meets_the_goal_only_with_enough_events_under_the_bound() {
        let slo = Slo::parse("p99<5ms,failed<1%").unwrap();
        let mut fast = crate::measure::new_histogram();
        for _ in 0..2000 {
            fast.record(1000).unwrap();
        }
        let judged = slo.judge(&fast, 0, false);
        assert!(judged.met && judged.percentile_us < 5000, "{judged:?}");
        assert!(!slo.judge(&fast, 0, true).met, "fell behind its rate");
        assert!(!slo.judge(&fast, 100, false).met, "5% failed");
        let mut slow = fast.clone();
        for _ in 0..100 {
            slow.record(9000).unwrap();
        }
        assert!(!slo.judge(&slow, 0, false).met, "p99 over the bound");
        let mut few = crate::measure::new_histogram();
        few.record(10).unwrap();
        let judged = slo.judge(&few, 0, false);
        assert!(!judged.met && judged.events_needed == 1000, "{judged:?}");
    }
}
