//! A cell's client groups and stages as the record keeps them: each group's connections,
//! pacing, stages, events and latency over the cell, and its events in each interval.
//! Owns these record types and making them from the driver's measurement. Must not know
//! how a report judges them (held or not: the view's).

use serde::{Deserialize, Serialize};

use crate::driver::client_groups::GroupPacing;
use crate::driver::GroupMeasurement;
use crate::measure::{encode_histogram, LatencySummary};

/// One client group of a cell that ran several, or ran stages.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GroupRecord {
    pub name: String,
    /// Its connections (with stages of connections: the most any stage reached).
    pub threads: u32,
    /// "closed_loop", "rate" (for the group) or "rate_per_connection".
    pub pacing: String,
    /// The rate as given: for the group, or for each connection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_per_s: Option<f64>,
    /// Its stages, from the start of the measured phase; a target is connections, or
    /// events/s offered by a group with a rate (`stages_set_rate`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stages: Vec<StageRecord>,
    #[serde(default)]
    pub stages_set_rate: bool,
    pub events: u64,
    pub events_per_s: f64,
    /// Whole events (from the intended start when paced).
    pub event_latency_us: LatencySummary,
    /// HdrHistogram V2+DEFLATE, base64, of the same.
    pub event_histogram_v2: String,
    /// A group with a rate: the rate offered over the cell, what was achieved, the lag.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<super::RateRecord>,
}

/// One stage of a group's load shape: from `from` to `to` (equal: a step).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StageRecord {
    pub start_s: f64,
    pub end_s: f64,
    pub from: f64,
    pub to: f64,
}

/// One client group's events finished in an interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct IntervalGroupRecord {
    pub name: String,
    pub events: u64,
    pub event_latency_us: LatencySummary,
}

/// The record of each group the driver measured apart.
pub fn group_records(groups: &[GroupMeasurement], wall_s: f64) -> Vec<GroupRecord> {
    groups
        .iter()
        .map(|measured| {
            let group = &measured.group;
            let (pacing, rate_per_s) = match group.pacing {
                GroupPacing::ClosedLoop => ("closed_loop", None),
                GroupPacing::Rate(rate) => ("rate", Some(rate.events_per_s)),
                GroupPacing::RatePerConnection(rate) => {
                    ("rate_per_connection", Some(rate.events_per_s))
                }
            };
            GroupRecord {
                name: group.name.clone(),
                threads: group.threads,
                pacing: pacing.into(),
                rate_per_s,
                stages: group
                    .stages
                    .bounds_s()
                    .into_iter()
                    .zip(&group.stages.0)
                    .map(|((start_s, end_s), stage)| StageRecord {
                        start_s,
                        end_s,
                        from: stage.from,
                        to: stage.to,
                    })
                    .collect(),
                stages_set_rate: group.pacing.stages_set_rate() && !group.stages.is_empty(),
                events: measured.events,
                events_per_s: if wall_s > 0.0 {
                    measured.events as f64 / wall_s
                } else {
                    0.0
                },
                event_latency_us: LatencySummary::from_histogram(&measured.event_latency),
                event_histogram_v2: encode_histogram(&measured.event_latency),
                rate: measured.rate.as_ref().map(super::RateRecord::of),
            }
        })
        .collect()
}

/// An interval's per-group events, as the driver measured them.
pub fn interval_groups(groups: &[(String, LatencySummary)]) -> Vec<IntervalGroupRecord> {
    groups
        .iter()
        .map(|(name, latency)| IntervalGroupRecord {
            name: name.clone(),
            events: latency.count,
            event_latency_us: *latency,
        })
        .collect()
}
