//! What a phase's set-ups are judged on: what the run let vary. A closed loop lets the
//! server set the pace, so the work done in the time (events/s), or the time the work took
//! (wall ms, load s, job ms), is the answer. A paced run (`--rate`, a replay at the
//! captured pace) offers every set-up the same events at the same times: each does the same
//! work per second as long as it keeps up, so its throughput says nothing, and the answer
//! is how long the events waited and ran, measured from their intended start (the driver
//! times a paced event from when it was due, not from when it began, so a set-up that
//! falls behind pays for the queue it built: wrk2's correction of coordinated omission).
//!
//! A cell that ran several client groups is also judged group by group, on the same idea:
//! a closed-loop group on its own events/s, a group with a rate (for the group or per
//! connection) on its p99 from the intended start, its throughput being its rate.
//!
//! Owns: the choice of the figure per repeat and which way is better. Must not rank nor
//! word (`rank` and `words` do).

use serde::Serialize;

use crate::results::{CellRecord, GroupRecord, OutcomeRecord};
use crate::view::{distinct, Group, GroupKind, Pace};

/// The figure a paced phase is judged on.
pub const PACED_METRIC: &str = "p99 latency µs";

/// The figure a client group with a rate is judged on.
pub const PACED_GROUP_METRIC: &str = "p99 µs from intended start";

/// The figure a closed-loop client group is judged on.
pub const CLOSED_LOOP_GROUP_METRIC: &str = "events/s";

/// What a phase's set-ups are judged on, and why.
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
#[serde(tag = "on", rename_all = "snake_case")]
pub enum Basis {
    /// The groups' own figure: a closed loop's events/s or wall time, a load's or a
    /// job's time, a capacity.
    OwnFigure,
    /// Whole events' p99 latency from their intended start, per repeat: the phase was
    /// paced, so its throughput is the pace, the same everywhere.
    PacedLatency { paced: Pace },
}

/// How a phase is judged: on what, which way is better, and each group's figures.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Judge {
    pub basis: Basis,
    pub metric: &'static str,
    pub higher_is_better: bool,
}

impl Judge {
    /// The judge of one phase's groups (all of them, ranked or not, so that every row of
    /// the phase is judged alike): on latency where its cells were paced, else on the
    /// groups' own figure.
    pub fn of(groups: &[&Group]) -> Judge {
        let paced = groups
            .iter()
            .filter(|g| g.kind == GroupKind::Cell)
            .find_map(|g| g.paced);
        match (paced, groups.first()) {
            (Some(paced), _) => Judge {
                basis: Basis::PacedLatency { paced },
                metric: PACED_METRIC,
                higher_is_better: false,
            },
            (None, first) => Judge {
                basis: Basis::OwnFigure,
                metric: first.map_or("events/s", |g| g.metric),
                higher_is_better: first.is_some_and(|g| g.higher_is_better),
            },
        }
    }

    /// A group's figures, one per completed repeat in run order.
    ///
    /// Paced: each repeat's own p99, so that the repeats stay the unit the decision pairs
    /// by round and bootstraps (the median of the per-repeat p99s is what leads). The p99
    /// of the merged histogram is one number with no spread to put an interval on, and one
    /// disturbed repeat owns its tail; a per-repeat p99 is one repeat's tail, and the
    /// median over repeats sets a disturbed one aside. The p99 rather than the median:
    /// at a pace most events find the server idle whatever its engine, and a difference
    /// between engines shows first in the events that queued (the captured application
    /// waited for those); a higher quantile (p99.9) rests on too few events in a short
    /// replay to be one repeat's figure.
    pub fn values(&self, group: &Group) -> Vec<f64> {
        match self.basis {
            Basis::OwnFigure => group.values.clone(),
            Basis::PacedLatency { .. } => group.event_p99_us.clone(),
        }
    }
}

/// What one client group of a phase's cells is judged on, and why: the group by its name
/// (the same name on every set-up, from the same scenario).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct GroupBasis {
    pub name: String,
    pub metric: &'static str,
    pub higher_is_better: bool,
    /// The rate a paced group was given (for the group, or for each connection): its
    /// events/s is that rate wherever it held it, so its latency is judged; none for a
    /// closed loop.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_per_s: Option<f64>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub per_connection: bool,
}

impl GroupBasis {
    fn of(record: &GroupRecord) -> GroupBasis {
        let per_connection = record.pacing == "rate_per_connection";
        let rate_per_s = record
            .rate_per_s
            .filter(|_| record.pacing == "rate" || per_connection);
        GroupBasis {
            name: record.name.clone(),
            metric: match rate_per_s {
                Some(_) => PACED_GROUP_METRIC,
                None => CLOSED_LOOP_GROUP_METRIC,
            },
            higher_is_better: rate_per_s.is_none(),
            rate_per_s,
            per_connection,
        }
    }

    /// The client groups of `groups`' cells that ran two or more, by name in the order
    /// they first appear; none where every cell ran one group or none (the cell's own
    /// figure is then the group's).
    pub fn of_cells(groups: &[&Group], cells: &[CellRecord]) -> Vec<GroupBasis> {
        let several = || {
            groups
                .iter()
                .flat_map(|g| g.cells.iter().filter_map(|&i| cells.get(i)))
                .filter(|cell| cell.groups.len() > 1)
                .flat_map(|cell| &cell.groups)
        };
        distinct(several().map(|record| record.name.clone()))
            .into_iter()
            .filter_map(|name| several().find(|record| record.name == name))
            .map(GroupBasis::of)
            .collect()
    }

    /// The group's figures on one set-up, one per completed repeat that ran it, in run
    /// order (the repeats paired by round, as the phase's are): its events/s, or its p99
    /// from the intended start (the cell's record keeps the p99 of the group's whole
    /// histogram; a repeat where it finished no event has none).
    pub fn values(&self, group: &Group, cells: &[CellRecord]) -> Vec<f64> {
        group
            .cells
            .iter()
            .zip(&group.outcomes)
            .filter(|(_, outcome)| **outcome == OutcomeRecord::Completed)
            .filter_map(|(&cell, _)| cells.get(cell))
            .filter(|cell| cell.groups.len() > 1)
            .filter_map(|cell| cell.groups.iter().find(|g| g.name == self.name))
            .filter_map(|record| match self.rate_per_s {
                None => Some(record.events_per_s),
                Some(_) => (record.event_latency_us.count > 0)
                    .then_some(record.event_latency_us.p99_us as f64),
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::parse_record;
    use crate::view::View;

    fn fixture() -> crate::results::RunRecord {
        parse_record(
            include_str!("../../../tests/fixtures/s0-verdict.json"),
            "s0-verdict.json",
        )
        .unwrap()
    }

    #[test]
    fn a_closed_loop_is_judged_on_its_own_figure() {
        let view = View::of(&fixture());
        let groups: Vec<&Group> = view.groups_of(GroupKind::Cell).collect();
        let judge = Judge::of(&groups);
        assert_eq!(judge.basis, Basis::OwnFigure);
        assert_eq!(
            (judge.metric, judge.higher_is_better),
            (groups[0].metric, groups[0].higher_is_better)
        );
        assert_eq!(judge.values(groups[0]), groups[0].values);
    }

    #[test]
    fn a_paced_run_is_judged_on_p99_latency_from_the_intended_start_lower_better() {
        let mut record = fixture();
        for (index, cell) in record.cells.iter_mut().enumerate() {
            cell.rate = Some(crate::results::RateRecord {
                target_per_s: 500.0,
                achieved_per_s: 499.0,
                max_lag_ms: 0.5,
                late_events: 0,
                fell_behind: false,
                ..crate::results::RateRecord::default()
            });
            cell.event_latency_us.count = 100;
            cell.event_latency_us.p99_us = 1_000 + index as u64;
        }
        let view = View::of(&record);
        let groups: Vec<&Group> = view.groups_of(GroupKind::Cell).collect();
        let judge = Judge::of(&groups);
        assert_eq!(
            judge.basis,
            Basis::PacedLatency {
                paced: Pace::Rate {
                    target_per_s: 500.0
                }
            }
        );
        assert_eq!(
            (judge.metric, judge.higher_is_better),
            (PACED_METRIC, false)
        );
        let group = groups[0];
        let expected: Vec<f64> = group
            .cells
            .iter()
            .filter(|&&i| record.cells[i].outcome == crate::results::OutcomeRecord::Completed)
            .map(|&i| 1_000.0 + i as f64)
            .collect();
        assert_eq!(
            judge.values(group),
            expected,
            "one p99 per repeat, in run order"
        );
    }

    #[test]
    fn a_replay_at_the_captured_pace_is_paced_and_one_as_fast_as_possible_is_not() {
        let mut record = fixture();
        let replay = |speed| crate::results::ReplayRecord {
            file: "shop.ebcap".into(),
            source: "proxy".into(),
            server_version: None,
            connections: 4,
            commands: 100,
            captured_s: 1.0,
            speed,
            captured: Vec::new(),
            warnings: Vec::new(),
        };
        record.replay = Some(replay(Some(1.0)));
        let view = View::of(&record);
        let groups: Vec<&Group> = view.groups_of(GroupKind::Cell).collect();
        assert_eq!(
            Judge::of(&groups).basis,
            Basis::PacedLatency {
                paced: Pace::Captured { speed: 1.0 }
            }
        );
        record.replay = Some(replay(None));
        let view = View::of(&record);
        let groups: Vec<&Group> = view.groups_of(GroupKind::Cell).collect();
        assert_eq!(Judge::of(&groups).basis, Basis::OwnFigure);
    }
}
