//! `--slo` runs read back: each capacity search (a phase × set-up × threads × repeat's
//! probe cells) with its probes in order, the bracket they ended in and the capacity it
//! gives, for the capacity groups' values, the verdict and the reports' capacity section.
//!
//! Owns: what a search's capacity and bracket are. Must not choose rates (the runner's
//! search did) nor judge a probe again (the record holds the goal's judgement).

use super::{distinct, Group, Setup, View};
use crate::results::{CellRecord, OutcomeRecord, RunRecord};

/// One probe as reports show it.
#[derive(Debug, Clone, PartialEq)]
pub struct ProbeView {
    pub step: u32,
    /// None: the closed-loop probe.
    pub offered_per_s: Option<f64>,
    pub achieved_per_s: f64,
    pub percentile_us: u64,
    pub failed_share: f64,
    pub events: u64,
    pub events_needed: u64,
    pub fell_behind: bool,
    pub met: bool,
    pub outcome: OutcomeRecord,
}

/// How a search ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchEnd {
    /// A rate that met the goal and one above it that did not.
    Bracketed,
    /// Met even at the closed-loop throughput: the capacity is at least that.
    AtLeast,
    /// No rate probed met the goal.
    NeverMet,
    /// Cut short (a failed probe, Ctrl-C) before anything was met.
    Unfinished,
}

#[derive(Debug, Clone)]
pub struct Search {
    pub phase: String,
    pub setup: Setup,
    pub threads: u32,
    pub repeat: u32,
    pub probes: Vec<ProbeView>,
    /// The closed-loop throughput the search started below.
    pub closed_loop_per_s: Option<f64>,
    /// The highest offered rate that met the goal, and the lowest that did not.
    pub capacity_per_s: Option<f64>,
    pub failed_at_per_s: Option<f64>,
    pub end: SearchEnd,
    /// Why the runner stopped, as it said.
    pub ended: Option<String>,
}

/// Every capacity search of the record, in run order (the view keeps them).
pub(super) fn searches(record: &RunRecord) -> Vec<Search> {
    let probes: Vec<&CellRecord> = record.cells.iter().filter(|c| c.probe.is_some()).collect();
    let keys = distinct(
        probes
            .iter()
            .map(|c| (c.variant.clone(), Setup::of_cell(c), c.threads, c.repeat)),
    );
    keys.into_iter()
        .map(|(phase, setup, threads, repeat)| {
            let mine: Vec<&CellRecord> = probes
                .iter()
                .copied()
                .filter(|c| {
                    c.variant == phase
                        && Setup::of_cell(c) == setup
                        && c.threads == threads
                        && c.repeat == repeat
                })
                .collect();
            search(phase, setup, threads, repeat, &mine)
        })
        .collect()
}

fn search(phase: String, setup: Setup, threads: u32, repeat: u32, cells: &[&CellRecord]) -> Search {
    let probes: Vec<ProbeView> = cells
        .iter()
        .filter_map(|cell| {
            let probe = cell.probe.as_ref()?;
            Some(ProbeView {
                step: probe.step,
                offered_per_s: probe.target_per_s,
                achieved_per_s: cell.events_per_s,
                percentile_us: probe.judgement.percentile_us,
                failed_share: probe.judgement.failed_share,
                events: probe.judgement.events,
                events_needed: probe.judgement.events_needed,
                fell_behind: cell.rate.is_some_and(|r| r.fell_behind),
                met: probe.judgement.met && cell.outcome == OutcomeRecord::Completed,
                outcome: cell.outcome,
            })
        })
        .collect();
    let closed_loop_per_s = probes
        .iter()
        .find(|p| p.offered_per_s.is_none() && p.outcome == OutcomeRecord::Completed)
        .map(|p| p.achieved_per_s);
    let open = || probes.iter().filter_map(|p| Some((p.offered_per_s?, p)));
    let capacity_per_s = open()
        .filter(|(_, p)| p.met)
        .map(|(rate, _)| rate)
        .reduce(f64::max);
    let failed_at_per_s = open()
        .filter(|(rate, p)| !p.met && capacity_per_s.is_none_or(|c| *rate > c))
        .map(|(rate, _)| rate)
        .reduce(f64::min);
    let end = match (capacity_per_s, failed_at_per_s) {
        (Some(_), Some(_)) => SearchEnd::Bracketed,
        (Some(_), None) => SearchEnd::AtLeast,
        (None, Some(_)) if probes.iter().all(|p| p.outcome == OutcomeRecord::Completed) => {
            SearchEnd::NeverMet
        }
        _ => SearchEnd::Unfinished,
    };
    Search {
        phase,
        setup,
        threads,
        repeat,
        closed_loop_per_s,
        capacity_per_s,
        failed_at_per_s,
        end,
        ended: cells
            .iter()
            .rev()
            .find_map(|c| c.probe.as_ref()?.search_ended.clone()),
        probes,
    }
}

/// The searches of a capacity group: its phase, set-up and thread count, every repeat.
pub(super) fn of_group<'a>(
    searches: &'a [Search],
    group: &'a Group,
) -> impl Iterator<Item = &'a Search> {
    searches.iter().filter(|s| {
        s.phase == group.phase && s.setup == group.setup && Some(s.threads) == group.threads
    })
}

impl View {
    /// Every capacity search of the run, in run order.
    pub fn searches(&self) -> &[Search] {
        &self.searches
    }

    /// The searches of a capacity group, every repeat's.
    pub fn searches_of<'a>(&'a self, group: &'a Group) -> impl Iterator<Item = &'a Search> {
        of_group(&self.searches, group)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::slo::Judgement;
    use crate::results::ProbeRecord;

    fn probe_cell(step: u32, rate: Option<f64>, met: bool) -> CellRecord {
        let text = include_str!("../../tests/fixtures/s0-verdict.json");
        let record = crate::results::parse_record(text, "s0-verdict.json").unwrap();
        let mut cell = record.cells[0].clone();
        cell.probe = Some(ProbeRecord {
            step,
            target_per_s: rate,
            judgement: Judgement {
                percentile_us: if met { 100 } else { 9000 },
                failed_share: 0.0,
                events: 5000,
                events_needed: 1000,
                met,
            },
            search_ended: None,
        });
        cell
    }

    #[test]
    fn a_search_is_bracketed_by_its_highest_met_and_lowest_failed_rate() {
        let cells = [
            probe_cell(1, None, true),
            probe_cell(2, Some(1000.0), false),
            probe_cell(3, Some(500.0), true),
            probe_cell(4, Some(707.0), false),
            probe_cell(5, Some(595.0), true),
            probe_cell(6, Some(648.0), false),
        ];
        let refs: Vec<&CellRecord> = cells.iter().collect();
        let setup = Setup::of_cell(&cells[0]);
        let found = search("p".into(), setup.clone(), 4, 1, &refs);
        assert_eq!(found.end, SearchEnd::Bracketed);
        assert_eq!(
            (found.capacity_per_s, found.failed_at_per_s),
            (Some(595.0), Some(648.0))
        );
        let never = search("p".into(), setup, 4, 1, &refs[..2]);
        assert_eq!(never.end, SearchEnd::NeverMet);
        assert_eq!(never.capacity_per_s, None);
    }
}
