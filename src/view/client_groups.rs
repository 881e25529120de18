//! Each cell's client groups and stages as reports read them: per group its rate and
//! latency, interval by interval too, the rate a paced group offered over time, whether it
//! held it (within 5% of what it offered, no event over a second late), and per stage of a
//! load shape its rate, p99 and (with a latency goal) whether it met it. Owns those
//! judgements; must not word or draw them, nor know where the groups came from or what
//! they ran.

use crate::measure::slo::Slo;
use crate::measure::LatencySummary;
use crate::results::{CellRecord, GroupRecord, IntervalRecord};

/// A group with a rate held it when it achieved this share of what it offered.
pub const HELD_SHARE: f64 = 0.95;

/// Whether a paced group (or stage) kept its rate.
#[derive(Debug, Clone, PartialEq)]
pub struct Held {
    pub offered_per_s: f64,
    pub achieved_per_s: f64,
    /// The furthest an event started behind its schedule (whole cell; None per stage).
    pub max_lag_ms: Option<f64>,
    pub held: bool,
    /// Why it was not held, in a few words, when the record tells (whole cell only).
    pub behind: Option<String>,
}

/// One stage of a group's load shape, as it ran.
#[derive(Debug, Clone, PartialEq)]
pub struct StageFigures {
    /// 1-based.
    pub number: usize,
    pub start_s: f64,
    pub end_s: f64,
    pub from: f64,
    pub to: f64,
    pub events_per_s: f64,
    /// Event latency over the stage's intervals (percentiles: the largest interval's).
    pub latency: LatencySummary,
    pub held: Option<Held>,
    /// With a latency goal: whether the stage's p99 met it.
    pub met_goal: Option<bool>,
}

/// One client group of a cell.
#[derive(Debug, Clone)]
pub struct GroupFigures<'a> {
    pub record: &'a GroupRecord,
    pub held: Option<Held>,
    pub stages: Vec<StageFigures>,
    /// Its events/s in each report interval, in order.
    pub rates_per_s: Vec<f64>,
    /// Its p99 event latency in each report interval, µs (from each event's intended start
    /// when paced); None where it finished no event, which has no latency to tell.
    pub p99_us: Vec<Option<f64>>,
    /// What a paced group offered over the measured phase, as the corners of a line
    /// (seconds into the phase, events/s); empty for a closed loop.
    pub offered_per_s: Vec<(f64, f64)>,
}

/// A cell's groups; empty for a cell that ran neither groups nor stages.
pub fn cell_groups<'a>(cell: &'a CellRecord, goal: Option<&Slo>) -> Vec<GroupFigures<'a>> {
    let several = cell.groups.len() > 1;
    cell.groups
        .iter()
        .map(|group| GroupFigures {
            record: group,
            held: group.rate.as_ref().map(|rate| Held {
                offered_per_s: rate.target_per_s,
                achieved_per_s: rate.achieved_per_s,
                max_lag_ms: Some(rate.max_lag_ms),
                held: !rate.fell_behind,
                behind: rate.behind_words(),
            }),
            stages: stage_figures(cell, group, several, goal),
            rates_per_s: cell
                .intervals
                .iter()
                .map(|interval| {
                    let span_s = (interval.end_s - interval.start_s).max(f64::EPSILON);
                    group_events(interval, &group.name, several).count as f64 / span_s
                })
                .collect(),
            p99_us: cell
                .intervals
                .iter()
                .map(|interval| {
                    let events = group_events(interval, &group.name, several);
                    (events.count > 0).then_some(events.p99_us as f64)
                })
                .collect(),
            offered_per_s: offered_line(cell, group),
        })
        .collect()
}

/// The rate a paced group offered: stage by stage when its stages set it (a stage's
/// target is the group's rate, or with a rate per connection its connections, times that
/// rate; a ramp goes from its first to its last), else flat at its rate over the cell's
/// intervals. Empty for a closed loop.
fn offered_line(cell: &CellRecord, group: &GroupRecord) -> Vec<(f64, f64)> {
    let per_target = match group.pacing.as_str() {
        "rate" => Some(1.0),
        "rate_per_connection" => group.rate_per_s,
        _ => return Vec::new(),
    };
    let staged = group.stages_set_rate || group.pacing == "rate_per_connection";
    if let (Some(per_target), true, false) = (per_target, staged, group.stages.is_empty()) {
        return group
            .stages
            .iter()
            .flat_map(|stage| {
                [
                    (stage.start_s, per_target * stage.from),
                    (stage.end_s, per_target * stage.to),
                ]
            })
            .collect();
    }
    let offered_per_s = group.rate.as_ref().map(|rate| rate.target_per_s);
    match (offered_per_s, cell.intervals.last()) {
        (Some(offered_per_s), Some(last)) => {
            vec![(0.0, offered_per_s), (last.end_s, offered_per_s)]
        }
        _ => Vec::new(),
    }
}

/// The group's events in `interval`: its own count with several groups, the cell's
/// otherwise.
fn group_events(interval: &IntervalRecord, group: &str, several: bool) -> LatencySummary {
    if !several {
        return interval.event_latency_us;
    }
    interval
        .groups
        .iter()
        .find(|entry| entry.name == group)
        .map(|entry| entry.event_latency_us)
        .unwrap_or_default()
}

fn stage_figures(
    cell: &CellRecord,
    group: &GroupRecord,
    several: bool,
    goal: Option<&Slo>,
) -> Vec<StageFigures> {
    group
        .stages
        .iter()
        .enumerate()
        .map(|(index, stage)| {
            // An interval belongs to the stage its middle falls in.
            let inside: Vec<&IntervalRecord> = cell
                .intervals
                .iter()
                .filter(|interval| {
                    let middle_s = (interval.start_s + interval.end_s) / 2.0;
                    middle_s >= stage.start_s && middle_s < stage.end_s
                })
                .collect();
            let span_s: f64 = inside.iter().map(|i| i.end_s - i.start_s).sum();
            let latency = inside
                .iter()
                .map(|interval| group_events(interval, &group.name, several))
                .fold(LatencySummary::default(), |merged, part| {
                    merged.merged_with(&part)
                });
            let events_per_s = if span_s > 0.0 {
                latency.count as f64 / span_s
            } else {
                0.0
            };
            let offered_per_s = match group.pacing.as_str() {
                "rate" => Some((stage.from + stage.to) / 2.0),
                "rate_per_connection" => group
                    .rate_per_s
                    .map(|each| each * (stage.from + stage.to) / 2.0),
                _ => None,
            };
            StageFigures {
                number: index + 1,
                start_s: stage.start_s,
                end_s: stage.end_s,
                from: stage.from,
                to: stage.to,
                events_per_s,
                latency,
                held: offered_per_s
                    .filter(|_| span_s > 0.0)
                    .map(|offered_per_s| Held {
                        offered_per_s,
                        achieved_per_s: events_per_s,
                        max_lag_ms: None,
                        behind: None,
                        held: events_per_s >= HELD_SHARE * offered_per_s,
                    }),
                met_goal: goal
                    .filter(|_| latency.count > 0)
                    .map(|goal| percentile_us(&latency, goal.percentile) <= goal.bound_us),
            }
        })
        .collect()
}

/// The percentile a stage goal names, of the percentiles an interval keeps (50, 95, 99;
/// another is read as the next kept one above it, or the maximum).
pub fn percentile_us(latency: &LatencySummary, percentile: f64) -> u64 {
    match percentile {
        p if p <= 50.0 => latency.p50_us,
        p if p <= 95.0 => latency.p95_us,
        p if p <= 99.0 => latency.p99_us,
        _ => latency.max_us,
    }
}

/// The last stage (1-based) from the start that met the goal, with the first that did
/// not; None when every stage met it or none could be judged.
pub fn goal_held_until(stages: &[StageFigures]) -> Option<(Option<usize>, usize)> {
    let first_missed = stages.iter().find(|stage| stage.met_goal == Some(false))?;
    let last_met = stages
        .iter()
        .take_while(|stage| stage.met_goal == Some(true))
        .last()
        .map(|stage| stage.number);
    Some((last_met, first_missed.number))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stage(number: usize, met: Option<bool>) -> StageFigures {
        StageFigures {
            number,
            start_s: 0.0,
            end_s: 1.0,
            from: 1.0,
            to: 1.0,
            events_per_s: 1.0,
            latency: LatencySummary::default(),
            held: None,
            met_goal: met,
        }
    }

    #[test]
    fn the_goal_is_held_up_to_the_first_stage_that_missed_it() {
        let stages = [
            stage(1, Some(true)),
            stage(2, Some(true)),
            stage(3, Some(false)),
            stage(4, Some(true)),
        ];
        assert_eq!(goal_held_until(&stages), Some((Some(2), 3)));
        assert_eq!(goal_held_until(&stages[..2]), None);
        assert_eq!(goal_held_until(&[stage(1, Some(false))]), Some((None, 1)));
    }
}
