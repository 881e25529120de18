//! The record's part of a run from several client hosts: each agent's own part, and what
//! a merged run was made of. Must not know how parts are merged (results::merge).

use serde::{Deserialize, Serialize};

use super::{OutcomeRecord, RunStatus};
use crate::measure::LatencySummary;

/// One agent's part of a run from several client hosts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AgentRecord {
    /// 1-based K of `--agent K/N`.
    pub index: u32,
    pub count: u32,
    /// `--start-at`, as given.
    pub start_at: String,
    /// What the agents of one run share: study, start and count.
    pub run_key: String,
    /// How long after `--start-at` this agent's first measured cell began (0: on time).
    #[serde(default)]
    pub started_late_ms: Option<f64>,
}

/// What a merged run was made of.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MergedRecord {
    pub run_key: String,
    /// Agents the run had (N of `--agent K/N`).
    pub agent_count: u32,
    pub parts: Vec<MergedPart>,
    /// The largest clock offset estimated between an agent and agent 1, in ms.
    pub max_clock_offset_ms: f64,
    /// Things a reader must know: late or missing agents, skewed clocks, failed parts.
    pub warnings: Vec<String>,
}

/// One agent's part of a merged run, with its own figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MergedPart {
    pub agent: u32,
    /// The part's file, as given to `merge`.
    pub file: String,
    pub status: RunStatus,
    pub error: Option<String>,
    pub events: u64,
    pub failed_events: u64,
    pub started_late_ms: Option<f64>,
    /// This agent's clock minus agent 1's, estimated from when each cell's measured phase
    /// began on both (the agents start cells together, a few ms apart); median over cells.
    pub clock_offset_ms: Option<f64>,
    /// Cells (by index) where this agent could not keep its share of `--rate`.
    pub cells_fell_behind: Vec<usize>,
    /// Cells (by index) that failed or crashed on this agent.
    pub cells_failed: Vec<usize>,
}

/// One agent's figures in one cell of a merged run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AgentCellRecord {
    pub agent: u32,
    pub threads: u32,
    pub events: u64,
    pub events_per_s: f64,
    pub event_latency_us: LatencySummary,
    pub outcome: OutcomeRecord,
    /// When its measured phase began, by its own clock (seconds since the epoch).
    pub measure_started_unix_s: Option<f64>,
}
