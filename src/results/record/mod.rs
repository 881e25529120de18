//! The run record, the contract between measuring and reporting: what a run was (kind,
//! title, parameters, statement classes), the servers it used, and everything it measured
//! (cells, loads, sequences, steps, footprints), each in run order. Built from the driver's
//! measurements here; it must not know how anything is shown.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

use crate::driver::{CellMeasurement, CellOutcome, KindMeasurement};
use crate::engine::Engine;
use crate::load::{LoadOutcome, LoadPlan};
use crate::measure::{
    encode_histogram, EnvironmentRecord, FootprintRecord, LatencySummary, ProcessDelta,
};
use crate::server::ServerRecord;

pub use super::interval::{IntervalQueryRecord, IntervalRecord};

pub use crate::measure::{CellCounters, IntervalCounters, ProbeCost};

mod cell;
pub use cell::{CellKey, CellRecord, OutcomeRecord, QueryRecord};

mod cell_from_measurement;

mod cell_events;
pub use cell_events::{FaultRecord, ProbeRecord, RateRecord, StallRecord};

mod agents;
pub use agents::{AgentCellRecord, AgentRecord, MergedPart, MergedRecord};

/// Bumped whenever a field changes meaning or disappears (adding optional fields does not).
pub const SCHEMA_VERSION: u32 = 2;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Still going (or the process died without a chance to say otherwise).
    Running,
    Completed,
    /// Stopped by Ctrl-C/SIGTERM; finished cells and the partial one are kept.
    Interrupted,
    /// Stopped by an error; `error` says which.
    Failed,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ToolRecord {
    pub name: String,
    pub version: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunRecord {
    pub schema_version: u32,
    pub tool: ToolRecord,
    pub study: String,
    /// What kind of study ran (`scenario`, `sysbench`, `prepare`, `replay`, or a kind added
    /// since): reports pick their layout from this, by the studies' registry.
    pub kind: String,
    /// The study's title, as `enginebench list` shows it.
    pub title: String,
    /// The study's parameters after defaults and command-line overrides.
    pub parameters: BTreeMap<String, serde_json::Value>,
    /// Every query kind a cell records, with sysbench's class of it (read, write, other).
    pub statement_classes: BTreeMap<String, crate::scenario::StatementClass>,
    pub started_at: String,
    pub finished_at: Option<String>,
    pub status: RunStatus,
    pub error: Option<String>,
    pub server: Option<ServerRecord>,
    /// The machine and the enginebench build that measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub environment: Option<EnvironmentRecord>,
    /// Timed setup and DDL steps (table loads, CREATE INDEX), in run order.
    pub steps: Vec<StepRecord>,
    /// Measured cells, in run order.
    pub cells: Vec<CellRecord>,
    /// Server profiles the study switched to, each with its server's record.
    #[serde(default)]
    pub profiles: Vec<ProfileRecord>,
    /// Table loads, in run order, each with its method, outcome and footprint.
    #[serde(default)]
    pub loads: Vec<LoadRecord>,
    /// Runs of sequence phases (timed jobs of steps), in run order.
    #[serde(default)]
    pub sequences: Vec<SequenceRecord>,
    /// Disk footprint of each table after the run (after-load footprints are in `loads`).
    #[serde(default)]
    pub footprints: Vec<FootprintRecord>,
    /// Per statement, once per phase × engine × profile: the plan the server chose and what
    /// the statement did (rows examined, scans, sorts, temporary tables).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub statement_evidence: Vec<EvidenceRecord>,
    /// `--agent K/N`: this record is one agent's part of a run from several client hosts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<AgentRecord>,
    /// A replay: what the capture held, per query kind, to compare the replay against.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<ReplayRecord>,
    /// Set-ups whose figures must not be compared with the others', and why (a check
    /// found that they did less work: a ROLLBACK not honoured, a consistency condition
    /// broken). Every report says so beside their figures.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_comparable: Vec<NotComparableRecord>,
    /// A run merged from agents' parts (`enginebench merge`): which parts, and each
    /// agent's figures.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merged: Option<MergedRecord>,
    /// `--slo`: each cell of a run phase was a capacity search for this latency goal, its
    /// cells the search's probes (see [`ProbeRecord`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slo: Option<crate::measure::slo::Slo>,
    /// `--stage-goal`: the latency goal each stage of a load shape is judged by.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stage_goal: Option<crate::measure::slo::Slo>,
    /// `--crash`: each set-up's crash trials, checked against what the client was told.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub crashes: Vec<super::CrashRecord>,
    /// `--accept-loss`: crash kinds whose losses the user accepts; set-ups that lost data
    /// only in these are ranked.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub accept_loss: Vec<super::CrashKind>,
    /// `--tolerance`: the T of the verdict's "equivalent within ±T%", in per cent; records
    /// without it are judged with [`DEFAULT_TOLERANCE_PCT`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tolerance_pct: Option<f64>,
    /// Decide, then stop: the run's repeats went on per comparison until it was decided;
    /// none for a fixed count (`--repeat`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until_decided: Option<UntilDecided>,
    /// Why the study kept a fixed count of repeats where a run decides, then stops ("s4
    /// times loads or sequences, which are not decided round by round"): the summary says
    /// it. Absent in records from before it was kept, and where the count was the user's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repeats_fixed_why: Option<String>,
    /// What enginebench sent of its own beyond the cells' workload: the set-up the
    /// workload needed and its probes, and whether probes were switched off. Absent in
    /// records from before it was counted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub own_statements: Option<OwnStatementsRecord>,
    /// sysbench's built-in tests of the machine: the run itself, or a study's baseline
    /// (`--machine-baseline`). Absent in older records.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub machine_tests: Vec<super::MachineTestRecord>,
}

/// The statements, prepares and connections enginebench sent outside the workload's own
/// (its workers' statements in the cells), counted as they were sent.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct OwnStatementsRecord {
    /// `--no-probes`: no probe was sent (only what a stalled cell needed to decide whether
    /// to go on waiting); the record lacks server variables, counters, plans and
    /// footprints.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_probes: bool,
    /// What the workload needed outside its cells: its database and tables made, loaded
    /// (every load's statements, also timed in `loads`), checked for reuse, emptied,
    /// dropped; a scenario's DDL and sequence phases, a kind's own steps and checks, crash
    /// trials' ledger, set-up and checks, a script's commands. A crash trial's study load
    /// is counted in its trial (`crashes[].study_check`: statements, connections).
    #[serde(default)]
    pub setup: crate::server::OwnCounts,
    /// What only enginebench asked: server variables and counters, engine checks, plans
    /// and sample runs, footprints, looks at a stalled server.
    #[serde(default)]
    pub probes: crate::server::OwnCounts,
}

/// Decide, then stop: each group of cells (a phase at a thread count on one server) ran
/// repeats until the verdict's comparisons in it were decided, from the first look to the
/// most, or until the budget ran out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct UntilDecided {
    /// The first look: every cell ran at least this many repeats.
    pub min_repeats: u32,
    /// The last: no cell ran more.
    pub max_repeats: u32,
    /// `--budget`: no repeat beyond the first look started after this long, in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_s: Option<f64>,
    /// The budget ran out while some comparison was still undecided.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub budget_spent: bool,
}

impl UntilDecided {
    /// `--budget` as a person writes it ("5m"), to the second.
    pub fn budget_text(&self) -> Option<String> {
        self.budget_s.map(|budget_s| {
            humantime::format_duration(std::time::Duration::from_secs(budget_s.round() as u64))
                .to_string()
        })
    }
}

/// The first look: a decision needs a spread, so at least this many pairs of repeats.
pub const FIRST_LOOK_REPEATS: usize = 3;
/// The most repeats a run that decides then stops runs per cell unless `--max-repeat`
/// says otherwise: repeats 3..=12, ten looks, enough for the decided mode's intervals to
/// tell a 10% lead at a few per cent of noise.
pub const DEFAULT_MAX_REPEATS: usize = 12;

/// The verdict's tolerance when neither the command line nor the record names one, in per
/// cent: differences smaller than this are not worth a lead (criterion's noise threshold is
/// 1%; the run-to-run noise of a server benchmark is a few per cent). Kept with the record
/// because a record without `tolerance_pct` means this.
pub const DEFAULT_TOLERANCE_PCT: f64 = 5.0;

/// What a replayed capture held.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ReplayRecord {
    pub file: String,
    /// Where the capture came from (the proxy's addresses, a general log).
    pub source: String,
    /// `VERSION()` of the captured server.
    pub server_version: Option<String>,
    pub connections: usize,
    pub commands: usize,
    /// From the first replayed command's start to the last one's end, as captured.
    pub captured_s: f64,
    /// A factor on the captured pace; None: as fast as possible.
    pub speed: Option<f64>,
    /// Per query kind (statement digest), what the capture saw.
    pub captured: Vec<CapturedKindRecord>,
    /// What reading the capture warned about (cut short, not closed).
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CapturedKindRecord {
    pub name: String,
    pub count: u64,
    pub errors: u64,
    pub rows: u64,
}

/// A set-up whose figures a check found not comparable with the others'.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct NotComparableRecord {
    pub engine: Engine,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// After which cell (its index in `cells`) the check found it.
    pub after_cell: usize,
    pub why: String,
}

/// Statements of one query kind whose answer differed from what was expected (a replay's
/// captured answers, a ROLLBACK the server could not honour).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MismatchRecord {
    pub name: String,
    pub count: u64,
    /// The first one: what was captured and what the replay got.
    pub example: String,
}

/// The statements of one run phase on one engine (and profile), with their evidence.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct EvidenceRecord {
    pub phase: String,
    pub engine: Engine,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    pub statements: Vec<crate::measure::statement_probe::StatementEvidence>,
}

/// One run of a sequence phase on one engine.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SequenceRecord {
    pub phase: String,
    pub engine: Engine,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// 1-based.
    pub run: u32,
    /// A warm-up run, left out of the summaries.
    pub discarded: bool,
    pub steps: Vec<SequenceStepRecord>,
    pub total_ms: f64,
    pub error: Option<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SequenceStepRecord {
    pub name: String,
    pub elapsed_ms: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ProfileRecord {
    pub name: String,
    pub server: ServerRecord,
    /// A profile from a list of caps the command line compared (`--memory-limit
    /// 256M,1G`): which cap, on which of the study's profiles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cap: Option<CapVariantRecord>,
}

/// One cap of a compared list, as the frontier orders them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CapVariantRecord {
    /// "memory 256 MiB", "server CPUs 0-1".
    pub label: String,
    /// The study's profile it caps; none for the run's one server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_limit_bytes: Option<u64>,
    /// How many CPUs the server was given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_cpus: Option<usize>,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LoadRecord {
    pub table: String,
    pub engine: Engine,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// The load phase this load measures; none for a table prepared for the phases.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    pub plan: LoadPlan,
    /// The plan as tables show it ("load-data 10000/chunk ×2").
    pub label: String,
    pub repeat: u32,
    pub outcome: Option<LoadOutcome>,
    /// Which chunk failed, how many rows made it, the server's error and a hint.
    pub error: Option<String>,
    pub footprint: Option<FootprintRecord>,
}

impl RunRecord {
    /// A record of a run about to start. The runner fills `statement_classes` once it
    /// knows the study's statements.
    pub fn new(
        kind: &str,
        study: &str,
        title: &str,
        parameters: BTreeMap<String, serde_json::Value>,
    ) -> RunRecord {
        RunRecord {
            schema_version: SCHEMA_VERSION,
            tool: ToolRecord {
                name: env!("CARGO_PKG_NAME").into(),
                version: env!("CARGO_PKG_VERSION").into(),
            },
            study: study.into(),
            kind: kind.into(),
            title: title.into(),
            parameters,
            statement_classes: BTreeMap::new(),
            environment: None,
            started_at: now_rfc3339(),
            finished_at: None,
            status: RunStatus::Running,
            error: None,
            server: None,
            steps: Vec::new(),
            cells: Vec::new(),
            profiles: Vec::new(),
            sequences: Vec::new(),
            loads: Vec::new(),
            footprints: Vec::new(),
            statement_evidence: Vec::new(),
            agent: None,
            replay: None,
            not_comparable: Vec::new(),
            crashes: Vec::new(),
            accept_loss: Vec::new(),
            tolerance_pct: None,
            until_decided: None,
            repeats_fixed_why: None,
            own_statements: None,
            machine_tests: Vec::new(),
            merged: None,
            slo: None,
            stage_goal: None,
        }
    }

    pub fn finish(&mut self, status: RunStatus, error: Option<String>) {
        self.status = status;
        self.error = error;
        self.finished_at = Some(now_rfc3339());
    }

    /// Cells and loads that failed (their errors are in the record).
    pub fn failures(&self) -> usize {
        self.cells
            .iter()
            .filter(|c| {
                matches!(
                    c.outcome,
                    OutcomeRecord::Failed | OutcomeRecord::Crashed | OutcomeRecord::Stalled
                )
            })
            .count()
            + self.loads.iter().filter(|l| l.error.is_some()).count()
            + self.sequences.iter().filter(|s| s.error.is_some()).count()
    }
}

pub fn now_rfc3339() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StepRecord {
    /// e.g. "load", "create_index".
    pub name: String,
    pub engine: Option<Engine>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// The SQL or method, for the reader.
    pub detail: String,
    pub elapsed_ms: f64,
    pub rows: Option<u64>,
    pub error: Option<String>,
}
