//! One report interval of a cell as the record keeps it: events and their latency, each
//! query kind's counts and latency, and the server's counters over the same interval. Owns
//! the shape only; merging long cells' intervals is `downsample`'s.

use serde::{Deserialize, Serialize};

use crate::measure::{IntervalCounters, LatencySummary};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct IntervalRecord {
    pub start_s: f64,
    pub end_s: f64,
    /// Whole events finished in the interval, and their latency.
    #[serde(default)]
    pub events: u64,
    #[serde(default)]
    pub event_latency_us: LatencySummary,
    pub queries: Vec<IntervalQueryRecord>,
    /// The server's counters over the same interval.
    #[serde(default)]
    pub server: Option<IntervalCounters>,
    /// Each client group's events, when the cell ran several.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<super::IntervalGroupRecord>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct IntervalQueryRecord {
    pub name: String,
    pub count: u64,
    pub failed: u64,
    pub qps: f64,
    pub latency_us: LatencySummary,
}
