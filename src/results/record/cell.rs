//! A measured cell as the record keeps it: its set-up (variant, engine, profile, threads,
//! repeat), its outcome, its figures per query kind and per interval, and what was seen
//! beside them (counters, probes, stalls, faults). Shapes of the record only; built from
//! the driver's measurement in `cell_from_measurement`, it must not know how anything is
//! measured or shown.

use super::*;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OutcomeRecord {
    Completed,
    Interrupted,
    Failed,
    /// The server died during the cell; `error` holds the end of its error log.
    Crashed,
    /// The server stopped answering: no statement completed for longer than the stall
    /// bound. What was measured before is kept; `stall` says what was in flight and what
    /// the server showed.
    Stalled,
    /// The profile's server build does not offer the engine (Aria or RocksDB on MySQL);
    /// `error` names the build. The rest of the study runs.
    NotOffered,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CellRecord {
    /// Position in run order, from 0.
    pub index: usize,
    pub variant: String,
    pub engine: Engine,
    /// The server profile (a scenario's named server configuration), if the study has them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    pub threads: u32,
    /// 1-based repeat number.
    pub repeat: u32,
    /// A warm-up repeat (`--warmup-repeats`): kept in the record, left out of every report.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub warmup_repeat: bool,
    pub events_per_thread: Option<u64>,
    pub duration_s: Option<f64>,
    pub warmup_s: Option<f64>,
    pub outcome: OutcomeRecord,
    pub error: Option<String>,
    /// From the start signal until the last worker finished.
    pub wall_ms: f64,
    pub events: u64,
    pub failed_events: u64,
    /// Latencies too large for any histogram (expected 0).
    #[serde(default)]
    pub latency_overflows: u64,
    pub events_per_s: f64,
    pub queries: Vec<QueryRecord>,
    pub intervals: Vec<IntervalRecord>,
    /// How many measured intervals each of `intervals` stands for, when the cell was longer
    /// than `MAX_INTERVALS_KEPT` report intervals (None: one each, as measured).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intervals_merged_by: Option<u32>,
    /// SHOW GLOBAL STATUS over the measured phase (non-zero counters only).
    pub server_status_delta: BTreeMap<String, i64>,
    /// The throwaway server's CPU, RSS and I/O over the measured phase (None if external).
    #[serde(default)]
    pub server_process: Option<ProcessDelta>,
    /// enginebench's own CPU time over the measured phase (all threads).
    #[serde(default)]
    pub client_cpu_us: u64,
    /// What sampling the counters cost: one extra connection, one SHOW GLOBAL STATUS per
    /// report interval plus one at each end of the cell.
    #[serde(default)]
    pub counter_probe: ProbeCost,
    /// Whole events (transactions, loops): latency, measured from the intended start in
    /// rate mode, and its histogram.
    #[serde(default)]
    pub event_latency_us: LatencySummary,
    #[serde(default)]
    pub event_histogram_v2: String,
    /// Service time of events (from their real start): differs from latency in rate mode.
    #[serde(default)]
    pub event_service_us: LatencySummary,
    /// Events and time inside events per worker (sysbench's "threads fairness").
    #[serde(default)]
    pub per_worker_events: Vec<u64>,
    #[serde(default)]
    pub per_worker_busy_ms: Vec<f64>,
    /// Rate mode: the target, what was achieved, and whether the driver kept up.
    #[serde(default)]
    pub rate: Option<RateRecord>,
    /// Client groups (or stages): each group's pacing, stages, events and latency.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<crate::results::GroupRecord>,
    /// When the measured phase began, in seconds since the epoch (this machine's clock).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measure_started_unix_s: Option<f64>,
    /// An agent's part: every interval's histograms as an HdrHistogram interval log (V2,
    /// one tag per query kind, absolute timestamps), for `merge` to add exactly.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval_log: Option<String>,
    /// A merged run: each agent's share of this cell.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub agents: Vec<AgentCellRecord>,
    /// A replay: statements whose answer (rows, changed rows, error) differed from the
    /// captured one, per query kind.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mismatches: Vec<MismatchRecord>,
    /// A topology: each node over the measured phase (its counters, connections, lag).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<crate::measure::node_counters::NodeCellRecord>,
    /// Which driver ran the cell: "events" (event loops, non-blocking connections) or
    /// "threads" (one OS thread per connection); absent in older records.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver: Option<String>,
    /// How the cell's statements were sent (text or prepared) and how the kind's reference
    /// tool sends them; absent in older records.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<crate::driver::CellProtocol>,
    /// A node killed during the cell (`kill_node`), and how the cell came through it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<FaultRecord>,
    /// `--slo`: the cell is one probe of a capacity search, the search of its phase,
    /// set-up, threads and repeat.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe: Option<ProbeRecord>,
    /// The server stopped answering during the cell: for how long, what was in flight,
    /// and what the server showed a new connection then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stall: Option<StallRecord>,
    /// enginebench's own probes for this cell, beyond its workload: the counters read
    /// around and during it, the plans and sample runs after it (also counted in the run's
    /// `own_statements`).
    #[serde(default, skip_serializing_if = "crate::server::OwnCounts::is_zero")]
    pub own_probes: crate::server::OwnCounts,
    /// The cell tested the machine (a sysbench built-in test, this name; its figures in
    /// `machine_tests`), not an engine: `engine` only fills the field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_test: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct QueryRecord {
    pub name: String,
    /// Statements that succeeded.
    pub count: u64,
    /// Statements that failed with an error the run survived.
    pub failed: u64,
    pub errors_by_code: BTreeMap<String, u64>,
    pub qps: f64,
    pub latency_us: LatencySummary,
    pub failed_latency_us: Option<LatencySummary>,
    /// HdrHistogram V2+DEFLATE, base64: merge repeats or cells from this, never average
    /// percentiles.
    pub histogram_v2: String,
}

/// Which cell a measurement belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CellKey {
    pub variant: String,
    pub engine: Engine,
    pub profile: Option<String>,
    pub threads: u32,
    pub repeat: u32,
    pub warmup_repeat: bool,
}
