//! What the plan and the runner ask of a kind of study: the [`StudyKind`] trait. Each kind
//! (a scenario file, a sysbench workload, `prepare sbtest`, a replay, …) implements it in a
//! folder of its own under `src/studies/`, and one file there lists them. The plan, the
//! runner, the results, the view and the reports hold a study as `Arc<dyn StudyKind>` and
//! never tell kinds apart. This module must not name any kind.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use super::{AgentShare, CellLength, CellStep, Step};
use crate::driver::{CellConfig, StopCondition, Workload};
use crate::engine::Engine;
use crate::load::LoadPlan;
use crate::results::{CellRecord, RunRecord, StepRecord};
use crate::scenario::file::{KillNode, Profile, Scenario};
use crate::scenario::{StatementClass, TableSet};
use crate::server::{ConnectionSpec, ReadFrom, WriteTo};

/// What runs: one kind of study with its choices made.
pub type Study = Arc<dyn StudyKind>;

/// A run phase's own routing and fault on a topology (a scenario file's `write_to`,
/// `read_from`, `kill_node`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PhaseTopology {
    pub write_to: Option<WriteTo>,
    pub read_from: Option<ReadFrom>,
    pub kill_node: Option<KillNode>,
}

/// What the runner hands a kind to build one cell's workload: where its connections go,
/// and the cell's seed and reporting.
pub struct CellLink {
    /// The connection every worker opens (routed, with the query timeout set).
    pub spec: ConnectionSpec,
    /// The database the cell's tables live in.
    pub database: String,
    pub seed: u64,
    pub report_interval: Duration,
    /// Whether the driver keeps every interval's histogram (agents merge them later).
    pub interval_log: bool,
    /// The driver the command line chose, if it chose one.
    pub driver: Option<crate::driver::DriverKind>,
    /// How long a cell may go without any statement completing.
    pub stall: crate::driver::StallBound,
}

impl CellLink {
    /// A cell's driver configuration: its threads, when it stops and its warm-up, with the
    /// run's reporting and driver; a closed loop (a kind in rate mode sets `rate` after).
    pub fn config(
        &self,
        threads: u32,
        stop: StopCondition,
        warmup: Option<Duration>,
    ) -> CellConfig {
        CellConfig {
            threads,
            stop,
            warmup,
            report_interval: self.report_interval,
            rate: None,
            interval_log: self.interval_log,
            driver: self.driver,
            stall: self.stall,
        }
    }
}

/// What a kind's own step ([`Step::Own`]) may do on the bench: make and reach a database,
/// refuse an engine's cells with a reason, and record itself.
pub trait StepHost {
    /// The run's `--database` (a kind's [`StudyKind::database_for`] places its tables
    /// from it).
    fn run_database(&self) -> &str;
    /// `database` created (or emptied of `tables`) for the run.
    fn fresh_database(&mut self, database: &str, tables: &[&str]) -> anyhow::Result<()>;
    /// A new connection to the server, in `database`.
    fn connect(&self, database: &str) -> anyhow::Result<mysql::Conn>;
    /// How to reach the server in `database`, for a client of the kind's own.
    fn spec(&self, database: &str) -> ConnectionSpec;
    /// `engine`'s cells fail before they start with `reason` (None: they run again).
    fn refuse_cells(&mut self, engine: Engine, reason: Option<String>);
    /// The step recorded (with the current profile) and the record saved.
    fn record_step(&mut self, step: StepRecord) -> anyhow::Result<()>;
    /// The last cell measured, to check what it did.
    fn last_cell(&self) -> Option<&CellRecord>;
    /// The current set-up's figures on `engine` must not be compared (a check found less
    /// work done); every report says `why` beside them.
    fn mark_not_comparable(&mut self, engine: Engine, why: String);
}

/// A kind of study, its choices made: everything the plan and the runner need to know of
/// it. Defaults suit a kind that prepares no tables and has one phase.
pub trait StudyKind: Send + Sync + std::fmt::Debug {
    /// The record's `kind`: which entry of the studies' registry lays its report out.
    fn kind(&self) -> &'static str;

    /// The study's name, as the record and the tables call it.
    fn name(&self) -> &str;

    /// What the study is about, in a line.
    fn title(&self) -> String;

    /// The heading `--dry-run` prints above the steps.
    fn heading(&self) -> Option<String> {
        None
    }

    /// Notes for the user once the plan is made (how names were mapped, what runs as
    /// written).
    fn plan_notes(&self) -> Vec<String> {
        Vec::new()
    }

    /// The engines the study compares, in the order their cells alternate.
    fn engines(&self) -> Vec<Engine>;

    fn seed(&self) -> u64 {
        0
    }

    /// How tables are filled when they are prepared for the phases.
    fn load_plan(&self) -> LoadPlan {
        LoadPlan::fastest()
    }

    fn query_timeout(&self) -> Option<Duration> {
        None
    }

    /// The scenario file behind the study, for the runner's file-defined steps (DDL,
    /// loads, sequences, footprints); None for kinds that plan none.
    fn scenario(&self) -> Option<&Scenario> {
        None
    }

    /// The study's parameters for the record, after defaults and command-line overrides.
    fn parameters(&self) -> BTreeMap<String, serde_json::Value>;

    /// Every query kind the study's cells record, with what its statement does.
    fn statement_classes(&self) -> BTreeMap<String, StatementClass> {
        BTreeMap::new()
    }

    /// A phase's name (a study of one phase: its own name).
    fn phase_name(&self, _phase: usize) -> &str {
        self.name()
    }

    /// Whether a run phase changes data: its connections then go where `write_to` says,
    /// otherwise where `read_from` says (on a topology).
    fn phase_writes(&self, _phase: usize) -> bool {
        true
    }

    /// A run phase's own routing and fault, over the profile's and the command line's.
    fn phase_topology(&self, _phase: usize) -> PhaseTopology {
        PhaseTopology::default()
    }

    /// Where an engine is named in the study's file ("file:line:column"), for an engine
    /// the server turns out to lack.
    fn engine_position(&self, engine_display_name: &str) -> Option<&str> {
        let scenario = self.scenario()?;
        scenario
            .engine_positions
            .iter()
            .find(|(engine, _)| engine.display_name() == engine_display_name)
            .map(|(_, position)| position.as_str())
    }

    /// Tables on an external server the study may use though the run did not create them.
    fn reusable_table(&self, _name: &str) -> bool {
        false
    }

    /// How long one cell of `phase` lasts.
    fn cell_length(&self, phase: usize) -> CellLength;

    /// The tables to prepare on `engine`.
    fn tables(&self, _engine: Engine) -> TableSet {
        TableSet::default()
    }

    /// The database `engine`'s tables live in, given the run's `--database`.
    fn database_for(&self, engine: Engine, database: &str) -> String {
        if self.tables(engine).per_engine_database {
            // Each engine's tables live in a database of their own, so the study's SQL
            // names tables plainly.
            format!("{database}_{}", engine.key())
        } else {
            database.to_string()
        }
    }

    /// The server profiles the study itself compares (a scenario file's).
    fn own_profiles(&self) -> Vec<Profile> {
        self.scenario()
            .map(|scenario| scenario.profiles.clone())
            .unwrap_or_default()
    }

    /// The study's steps on one server, cells not yet numbered.
    fn steps_on_one_server(&self) -> Vec<Step>;

    /// A step other than a cell or a profile's server as `--dry-run` prints it.
    fn describe_step(&self, step: &Step) -> String;

    /// One cell's workload and how the driver runs it.
    fn cell(
        &self,
        cell: &CellStep,
        link: CellLink,
    ) -> anyhow::Result<(Box<dyn Workload>, CellConfig)>;

    /// Carries out one of the kind's own steps ([`Step::Own`]).
    fn run_own_step(
        &self,
        what: usize,
        _engine: Engine,
        _host: &mut dyn StepHost,
    ) -> anyhow::Result<()> {
        anyhow::bail!(
            "{} plans no step of its own numbered {what} (a bug in enginebench)",
            self.name()
        )
    }

    /// The kind's own part of the record, added before the run starts.
    fn add_to_record(&self, _record: &mut RunRecord) {}

    /// The study as agent `agent` runs it, when the kind shares more than threads among
    /// agents (a total rate, an event budget); None: the study as it is.
    fn shared_among_agents(&self, _agent: &AgentShare) -> anyhow::Result<Option<Study>> {
        Ok(None)
    }
}

/// The study's steps on `profiles` servers (none: the one server the run starts with),
/// cells not yet numbered.
pub(super) fn steps(study: &dyn StudyKind, profiles: usize) -> Vec<Step> {
    let servers: Vec<Option<usize>> = if profiles == 0 {
        vec![None]
    } else {
        (0..profiles).map(Some).collect()
    };
    let mut steps = Vec::new();
    for profile in servers {
        if let Some(profile) = profile {
            steps.push(Step::StartProfile { profile });
        }
        steps.extend(study.steps_on_one_server());
    }
    steps
}
