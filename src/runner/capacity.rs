//! `--slo`: a cell becomes a search for the highest offered rate its set-up holds within
//! the latency goal. A closed-loop probe first finds the throughput the set-up reaches at
//! all; open-loop probes (latency from each event's intended start) then halve the rate
//! from there until one meets the goal (or double it while one does), and bisect (geometrically) between the highest
//! rate that met it and the lowest that did not until the two are within the goal's
//! precision. Each probe is a cell of its own in the record, long enough for the goal's
//! percentile (the events it needs are said). The search says why it stopped on its last
//! probe: bracketed, met even at the closed-loop throughput, or failed even at the lowest
//! rate worth probing.
//!
//! Owns: the choice of the next rate and when to stop. Must not judge a probe (the goal
//! does, `measure::slo`), nor know a study kind.

use std::time::Duration;

use super::bench::Bench;
use super::cell::{measure_as, Probe};
use crate::console::note;
use crate::measure::slo::{Slo, DEFAULT_PROBE};
use crate::plan::{CellStep, Plan};
use crate::results::OutcomeRecord;

/// A probe may be stretched to this many times its length to measure the percentile at
/// a low rate; rates that would need longer are below the search's floor.
const MAX_STRETCH: f64 = 10.0;
/// The search halves the rate at most this many times below the closed-loop throughput.
const MAX_HALVINGS: u32 = 6;
/// The search doubles the rate at most up to this many times the closed-loop throughput.
const MAX_ABOVE_CLOSED_LOOP: f64 = 8.0;

/// Where a search stands: the highest rate that met the goal and the lowest that did not.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Bracket {
    pub met: Option<f64>,
    pub failed: Option<f64>,
}

/// What to do after a probe.
#[derive(Debug, Clone, PartialEq)]
pub enum Next {
    Probe(f64),
    Stop(String),
}

impl Bracket {
    /// The next rate to probe, or why the search is over. `top` is the closed-loop
    /// throughput, `floor` the lowest rate worth probing.
    pub fn next(&self, slo: &Slo, top: f64, floor: f64) -> Next {
        match (self.met, self.failed) {
            (None, None) => Next::Probe(top),
            // Open loop can hold what a closed loop measured: double until a rate misses
            // (one the set-up cannot serve falls behind, and misses).
            (Some(met), None) if met < top * MAX_ABOVE_CLOSED_LOOP => Next::Probe(met * 2.0),
            (Some(met), None) => Next::Stop(format!(
                "met {} even at {met:.0}/s, {MAX_ABOVE_CLOSED_LOOP}× the closed-loop throughput: the capacity is at least that",
                slo.text
            )),
            (None, Some(failed)) => {
                let lower = failed / 2.0;
                if lower < floor {
                    Next::Stop(format!(
                        "failed {} even at {failed:.0}/s, the lowest rate probed: the set-up cannot hold this goal",
                        slo.text
                    ))
                } else {
                    Next::Probe(lower)
                }
            }
            (Some(met), Some(failed)) => {
                if failed / met - 1.0 <= slo.precision {
                    Next::Stop(format!(
                        "bracketed: {met:.0}/s met {}, {failed:.0}/s did not (within {:.0}%)",
                        slo.text,
                        slo.precision * 100.0
                    ))
                } else {
                    Next::Probe((met * failed).sqrt())
                }
            }
        }
    }
}

/// Runs the capacity search of one cell; returns whether the server died (the walk then
/// replaces it and the search is over).
pub fn search(plan: &Plan, bench: &mut Bench, cell: &CellStep, slo: &Slo) -> anyhow::Result<bool> {
    let base = plan
        .phase(cell.phase)
        .pacing
        .stop
        .duration
        .unwrap_or(DEFAULT_PROBE);
    let mut step = 1;
    // The closed-loop probe: how much the set-up serves at all.
    let probe = Probe {
        step,
        rate_per_s: None,
        duration: base,
        slo,
    };
    if measure_as(plan, bench, cell, Some(&probe))? {
        return Ok(true);
    }
    let top = match bench.record.cells.last() {
        Some(last) if last.outcome == OutcomeRecord::Completed && last.events_per_s > 0.0 => {
            last.events_per_s
        }
        _ => {
            end_search(
                bench,
                "the closed-loop probe did not complete: no rate to search from",
            );
            return Ok(false);
        }
    };
    let needed = slo.events_needed() as f64;
    let floor =
        (top / f64::from(1u32 << MAX_HALVINGS)).max(needed / (base.as_secs_f64() * MAX_STRETCH));
    note(&format!(
        "capacity search for {}: {top:.0}/s closed loop; each probe measures at least {} events (for its {})",
        slo.text,
        slo.events_needed(),
        slo.percentile_name()
    ));
    let mut bracket = Bracket::default();
    loop {
        let rate = match bracket.next(slo, top, floor) {
            Next::Probe(rate) => rate,
            Next::Stop(why) => {
                note(&format!("capacity search: {why}"));
                end_search(bench, &why);
                return Ok(false);
            }
        };
        if crate::interrupt::requested() {
            return Ok(false);
        }
        step += 1;
        // Long enough for the percentile's events at this rate, with a fifth to spare.
        let duration = base.max(Duration::from_secs_f64(needed * 1.2 / rate));
        let probe = Probe {
            step,
            rate_per_s: Some(rate),
            duration,
            slo,
        };
        if measure_as(plan, bench, cell, Some(&probe))? {
            return Ok(true);
        }
        let Some(last) = bench.record.cells.last() else {
            return Ok(false);
        };
        let judged = last.probe.as_ref().map(|p| p.judgement);
        match (&last.outcome, judged) {
            (OutcomeRecord::Completed, Some(judged)) => {
                note(&format!(
                    "probe {step}: {rate:.0}/s offered, {} {:.2} ms, {:.2}% failed over {} events: {}",
                    slo.percentile_name(),
                    judged.percentile_us as f64 / 1000.0,
                    judged.failed_share * 100.0,
                    judged.events,
                    if judged.met { "meets the goal" } else { "misses the goal" }
                ));
                if judged.met {
                    bracket.met = Some(rate);
                } else {
                    bracket.failed = Some(rate);
                }
            }
            (OutcomeRecord::Interrupted, _) => return Ok(false),
            _ => {
                end_search(
                    bench,
                    &format!("probe {step} at {rate:.0}/s did not complete"),
                );
                return Ok(false);
            }
        }
    }
}

/// Marks the search's last probe with why it stopped.
fn end_search(bench: &mut Bench, why: &str) {
    if let Some(probe) = bench
        .record
        .cells
        .last_mut()
        .and_then(|cell| cell.probe.as_mut())
    {
        probe.search_ended = Some(why.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slo() -> Slo {
        Slo::parse("p99<5ms").unwrap()
    }

    /// The search against a set-up that meets the goal up to `capacity`.
    fn search_against(capacity: f64, top: f64, floor: f64) -> (Bracket, Vec<f64>, String) {
        let mut bracket = Bracket::default();
        let mut probed = Vec::new();
        loop {
            match bracket.next(&slo(), top, floor) {
                Next::Probe(rate) => {
                    probed.push(rate);
                    if rate <= capacity {
                        bracket.met = Some(rate);
                    } else {
                        bracket.failed = Some(rate);
                    }
                }
                Next::Stop(why) => return (bracket, probed, why),
            }
            assert!(probed.len() < 30, "the search ends");
        }
    }

    #[test]
    fn the_search_brackets_the_capacity_within_the_precision() {
        let (bracket, probed, why) = search_against(3100.0, 10_000.0, 100.0);
        let (met, failed) = (bracket.met.unwrap(), bracket.failed.unwrap());
        assert!(met <= 3100.0 && failed > 3100.0, "{bracket:?}");
        assert!(failed / met - 1.0 <= 0.10, "{bracket:?}");
        assert_eq!(probed[..3], [10_000.0, 5000.0, 2500.0]);
        assert!(why.starts_with("bracketed: "), "{why}");
    }

    #[test]
    fn the_search_stops_and_says_so_when_even_the_lowest_rate_fails() {
        let (bracket, probed, why) = search_against(1.0, 10_000.0, 10_000.0 / 64.0);
        assert_eq!(bracket.met, None);
        assert_eq!(probed.len(), 7, "{probed:?}");
        assert!(why.contains("cannot hold this goal"), "{why}");
        // Met at the closed-loop rate: doubled until a rate misses, then bisected.
        let (bracket, probed, why) = search_against(25_000.0, 10_000.0, 100.0);
        assert_eq!(probed[..3], [10_000.0, 20_000.0, 40_000.0]);
        assert!(bracket.met.unwrap() <= 25_000.0 && bracket.failed.unwrap() > 25_000.0);
        assert!(why.starts_with("bracketed"), "{why}");
        let (bracket, probed, why) = search_against(1e9, 10_000.0, 100.0);
        assert_eq!((bracket.met, probed.len()), (Some(80_000.0), 4));
        assert!(why.contains("at least"), "{why}");
    }
}
