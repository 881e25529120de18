//! What a study is, per kind, in the words the plan needs: its steps, its phases' names and
//! lengths, the tables it prepares, its parameters for the record. The plan's one place
//! that tells study kinds apart; what a kind means (its tables, titles) the scenario stage
//! says.

use serde::Serialize;
use std::collections::BTreeMap;
use std::time::Duration;

use super::{run_phase_cells, CellLength, Step};
use crate::engine::Engine;
use crate::load::LoadPlan;
use crate::scenario::file::{Phase, Profile, Scenario};
use crate::scenario::oltp::{OltpKind, OltpOptions};
use crate::scenario::Arrivals;
use crate::scenario::{sbtest, StatementClass, TableSet};

/// The name a replay's record carries.
pub const REPLAY_STUDY: &str = "replay";

/// What runs.
#[derive(Debug, Clone)]
pub enum Study {
    /// A scenario file (built in or the user's), with what the command line changed.
    Scenario {
        scenario: Box<Scenario>,
        params: ScenarioParams,
        /// Where the file came from ("s0 (built in)", a path), for headings.
        origin: String,
    },
    /// A sysbench workload, option for option.
    Sysbench(OltpParams),
    /// `enginebench prepare sbtest`: sysbench's tables, filled and left in place.
    PrepareSbtest(PrepareParams),
    /// A captured workload replayed on each engine, from its snapshot.
    Replay(ReplayParams),
}

/// A replay's capture and choices; the choices are kept in the record.
#[derive(Debug, Clone, Serialize)]
pub struct ReplayParams {
    /// The capture file, as named on the command line.
    pub file: String,
    pub engines: Vec<Engine>,
    /// A factor on the captured pace; None: as fast as each connection can go.
    pub speed: Option<f64>,
    pub repeat: u32,
    /// The database the snapshot is loaded into: `--database`, or the captured one.
    pub database: Option<String>,
    /// The captured database, when `--database` maps it to another: connections that chose
    /// it, and USE of it, go to `database` instead.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub renamed_from: Option<String>,
    /// Statement kinds that name the captured database explicitly (`db.table`): they run
    /// as written, against the captured database, and the plan says so.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub naming_captured: Vec<String>,
    #[serde(skip)]
    pub capture: std::sync::Arc<crate::capture::Capture>,
    #[serde(skip)]
    pub script: std::sync::Arc<crate::capture::ReplayScript>,
}

/// A scenario file's run, with what the command line changed; kept in the record.
#[derive(Debug, Clone, Serialize)]
pub struct ScenarioParams {
    /// The scenario file's text, kept in the record so a run can be understood later.
    pub scenario_text: String,
    pub engines: Vec<Engine>,
    pub repeat: u32,
    /// Repeats run first and left out of the reports.
    pub warmup_repeats: u32,
    /// Restart the server (and drop the page cache) before every cell.
    pub cold: bool,
    pub seed: u64,
    pub load_plan: LoadPlan,
    pub query_timeout: Option<Duration>,
    /// Parameters after --set, and the scale.
    pub parameters: BTreeMap<String, String>,
    pub scale: f64,
}

/// A sysbench workload's run: the workload, its sysbench options, and the matrix; kept in
/// the record.
#[derive(Debug, Clone, Serialize)]
pub struct OltpParams {
    pub workload: OltpKind,
    pub options: OltpOptions,
    pub engines: Vec<Engine>,
    pub threads: Vec<u32>,
    pub time: Option<Duration>,
    /// sysbench's --events: events in all, shared among the threads.
    pub events: Option<u64>,
    /// `--loops`: events per connection, each completing its own (what proves that every
    /// one of many connections is live; `--events` promises no connection a share).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loops: Option<u64>,
    pub warmup: Option<Duration>,
    pub repeat: u32,
    /// Rate mode: events per second in all, and how arrivals are spaced.
    pub rate_per_s: Option<f64>,
    pub arrivals: Arrivals,
    pub seed: u64,
    pub load_plan: LoadPlan,
    pub query_timeout: Option<Duration>,
}

/// `prepare sbtest`'s choices; kept in the record.
#[derive(Debug, Clone, Serialize)]
pub struct PrepareParams {
    pub tables: u32,
    pub table_size: u64,
    pub engine: Engine,
    pub load_plan: LoadPlan,
    #[serde(skip)]
    pub seed: u64,
}

impl Study {
    /// The study's name, as the record and the tables call it.
    pub fn name(&self) -> &str {
        match self {
            Study::Scenario { scenario, .. } => &scenario.name,
            Study::Sysbench(params) => params.workload.name(),
            Study::PrepareSbtest(_) => sbtest::PREPARE_STUDY,
            Study::Replay(_) => REPLAY_STUDY,
        }
    }

    /// What the study is about, in a line.
    pub fn title(&self) -> String {
        match self {
            Study::Scenario { scenario, .. } => scenario.title.clone(),
            Study::Sysbench(params) => params.workload.title(),
            Study::PrepareSbtest(_) => sbtest::PREPARE_TITLE.into(),
            Study::Replay(params) => format!(
                "{} replayed: {} connection(s), {} command(s), {}",
                params.file,
                params.script.connections.len(),
                params.script.commands(),
                params
                    .speed
                    .map_or("as fast as possible".to_string(), |s| format!(
                        "at {s}× the captured pace"
                    ))
            ),
        }
    }

    /// The heading `--dry-run` prints above the steps.
    pub fn heading(&self) -> Option<String> {
        match self {
            Study::Scenario {
                scenario, origin, ..
            } => Some(format!("{origin}: {}", scenario.title)),
            _ => None,
        }
    }

    /// The engines the study compares, in the order their cells alternate.
    pub fn engines(&self) -> Vec<Engine> {
        match self {
            Study::Scenario { params, .. } => params.engines.clone(),
            Study::Sysbench(params) => params.engines.clone(),
            Study::PrepareSbtest(params) => vec![params.engine],
            Study::Replay(params) => params.engines.clone(),
        }
    }

    pub fn seed(&self) -> u64 {
        match self {
            Study::Scenario { params, .. } => params.seed,
            Study::Sysbench(params) => params.seed,
            Study::PrepareSbtest(params) => params.seed,
            Study::Replay(_) => 0,
        }
    }

    /// How tables are filled when they are prepared for the phases.
    pub fn load_plan(&self) -> LoadPlan {
        match self {
            Study::Scenario { params, .. } => params.load_plan,
            Study::Sysbench(params) => params.load_plan,
            Study::PrepareSbtest(params) => params.load_plan,
            Study::Replay(_) => LoadPlan::fastest(),
        }
    }

    pub fn query_timeout(&self) -> Option<Duration> {
        match self {
            Study::Scenario { params, .. } => params.query_timeout,
            Study::Sysbench(params) => params.query_timeout,
            Study::PrepareSbtest(_) | Study::Replay(_) => None,
        }
    }

    /// The scenario file, for the runner's phases (DDL, loads, sequences, run phases).
    pub fn scenario(&self) -> Option<&Scenario> {
        match self {
            Study::Scenario { scenario, .. } => Some(scenario),
            _ => None,
        }
    }

    /// The study's parameters for the record, after defaults and command-line overrides.
    pub fn parameters(&self) -> BTreeMap<String, serde_json::Value> {
        let value = match self {
            Study::Scenario { params, .. } => serde_json::to_value(params),
            Study::Sysbench(params) => serde_json::to_value(params),
            Study::PrepareSbtest(params) => serde_json::to_value(params),
            Study::Replay(params) => serde_json::to_value(params),
        };
        match value {
            Ok(serde_json::Value::Object(map)) => map.into_iter().collect(),
            _ => BTreeMap::new(),
        }
    }

    /// Every query kind the study's cells record, with what its statement does.
    pub fn statement_classes(&self) -> BTreeMap<String, StatementClass> {
        match self {
            Study::Scenario { scenario, .. } => crate::scenario::file::statement_groups(scenario),
            Study::Sysbench(params) => {
                crate::scenario::oltp::query_kinds(params.workload, &params.options)
                    .into_iter()
                    .collect()
            }
            Study::PrepareSbtest(_) => BTreeMap::new(),
            Study::Replay(params) => params
                .script
                .kinds
                .iter()
                .map(|kind| {
                    let sql = kind.strip_prefix("prepare: ").unwrap_or(kind);
                    (kind.clone(), StatementClass::of_sql(sql))
                })
                .collect(),
        }
    }

    /// A phase's name: a scenario phase's, or the sysbench workload's (its one phase).
    pub fn phase_name(&self, phase: usize) -> &str {
        match self {
            Study::Scenario { scenario, .. } => scenario.phases[phase].name(),
            _ => self.name(),
        }
    }

    /// Where an engine is named in the scenario file ("file:line:column"), for an engine
    /// the server turns out to lack.
    /// Whether a run phase changes data: its connections then go where `write_to` says,
    /// otherwise where `read_from` says (on a topology).
    pub fn phase_writes(&self, phase: usize) -> bool {
        match self {
            Study::Scenario { scenario, .. } => match &scenario.phases[phase] {
                crate::scenario::file::Phase::Run { events, .. } => events
                    .iter()
                    .flat_map(|event| &event.statements)
                    .any(|statement| {
                        crate::scenario::StatementClass::of_sql(&statement.sql)
                            == crate::scenario::StatementClass::Write
                    }),
                _ => true,
            },
            Study::Sysbench(params) => !matches!(
                params.workload,
                OltpKind::PointSelect
                    | OltpKind::ReadOnly
                    | OltpKind::SelectRandomPoints
                    | OltpKind::SelectRandomRanges
            ),
            // A capture's connections each keep their own mix: they go where writes go.
            Study::Replay(_) | Study::PrepareSbtest(_) => true,
        }
    }

    /// A run phase's own routing and fault (a scenario file's `write_to`, `read_from`,
    /// `kill_node`).
    pub fn phase_topology(
        &self,
        phase: usize,
    ) -> (
        Option<crate::server::WriteTo>,
        Option<crate::server::ReadFrom>,
        Option<crate::scenario::file::KillNode>,
    ) {
        match self {
            Study::Scenario { scenario, .. } => match &scenario.phases[phase] {
                crate::scenario::file::Phase::Run {
                    write_to,
                    read_from,
                    kill_node,
                    ..
                } => (*write_to, *read_from, *kill_node),
                _ => (None, None, None),
            },
            _ => (None, None, None),
        }
    }

    pub fn engine_position(&self, engine_display_name: &str) -> Option<&str> {
        let scenario = self.scenario()?;
        scenario
            .engine_positions
            .iter()
            .find(|(engine, _)| engine.display_name() == engine_display_name)
            .map(|(_, position)| position.as_str())
    }

    /// Tables on an external server the study may use though the run did not create them.
    pub fn reusable_table(&self, name: &str) -> bool {
        match self {
            Study::Scenario { .. } | Study::Replay(_) => false,
            // Tables prepared earlier (by sysbench or `enginebench prepare`) are the input.
            Study::Sysbench(_) | Study::PrepareSbtest(_) => sbtest::is_table(name),
        }
    }

    /// How long one cell of `phase` lasts.
    pub fn cell_length(&self, phase: usize) -> CellLength {
        match self {
            Study::Scenario { scenario, .. } => match &scenario.phases[phase] {
                Phase::Run {
                    time,
                    loops,
                    warmup,
                    ..
                } => CellLength {
                    time: *time,
                    warmup: *warmup,
                    count: loops.map(|loops| format!("{loops} loops per thread")),
                },
                _ => CellLength {
                    time: None,
                    warmup: None,
                    count: None,
                },
            },
            Study::Sysbench(params) => CellLength {
                time: params.time,
                warmup: params.warmup,
                count: match (params.events, params.loops) {
                    (Some(events), _) => Some(format!("{events} events")),
                    (None, Some(loops)) => Some(format!("{loops} loops per thread")),
                    (None, None) => None,
                },
            },
            Study::PrepareSbtest(_) => CellLength {
                time: None,
                warmup: None,
                count: None,
            },
            Study::Replay(params) => CellLength {
                time: None,
                warmup: None,
                count: Some(format!(
                    "{} captured command(s) over {} connection(s)",
                    params.script.commands(),
                    params.script.connections.len()
                )),
            },
        }
    }

    /// The tables to prepare on `engine`.
    pub fn tables(&self, engine: Engine) -> TableSet {
        match self {
            Study::Scenario {
                scenario, params, ..
            } => scenario.table_set(engine, params.seed),
            Study::Sysbench(params) => {
                params
                    .workload
                    .table_set(&params.options, max_threads(params), engine, params.seed)
            }
            // Prepared tables are the point of this command: keep them.
            Study::PrepareSbtest(params) => {
                sbtest::table_set(params.tables, params.table_size, engine, params.seed, false)
            }
            // The snapshot is loaded by its own step.
            Study::Replay(_) => TableSet::default(),
        }
    }

    /// Whether every cell starts from empty tables (an [`Step::EmptyTables`] before it).
    fn refills_tables(&self) -> bool {
        matches!(self, Study::Sysbench(params) if params.workload.refills_tables())
    }

    /// The database `engine`'s tables live in, given the run's `--database`.
    pub fn database_for(&self, engine: Engine, database: &str) -> String {
        if let Study::Replay(params) = self {
            // The captured statements name the captured database.
            return params
                .database
                .clone()
                .unwrap_or_else(|| database.to_string());
        }
        if self.tables(engine).per_engine_database {
            // Each engine's tables live in a database of their own, so the scenario's SQL
            // names tables plainly.
            format!("{database}_{}", engine.key())
        } else {
            database.to_string()
        }
    }

    /// The server profiles the study itself compares (a scenario file's).
    pub fn own_profiles(&self) -> Vec<Profile> {
        self.scenario()
            .map(|scenario| scenario.profiles.clone())
            .unwrap_or_default()
    }

    /// The study's steps on `profiles` servers (none: the one server the run starts with),
    /// cells not yet numbered.
    pub(super) fn steps(&self, profiles: usize) -> Vec<Step> {
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
            steps.extend(self.steps_on_one_server());
        }
        steps
    }

    fn steps_on_one_server(&self) -> Vec<Step> {
        match self {
            Study::Scenario {
                scenario, params, ..
            } => scenario_steps(scenario, params),
            Study::Sysbench(params) => {
                let mut steps = Vec::new();
                for &engine in &params.engines {
                    steps.push(Step::PrepareTables {
                        engine: Some(engine),
                    });
                    for cell in run_phase_cells(0, &params.threads, &[engine], params.repeat, 0) {
                        if self.refills_tables() {
                            steps.push(Step::EmptyTables { engine });
                        }
                        steps.push(cell);
                    }
                }
                steps
            }
            Study::PrepareSbtest(params) => vec![Step::PrepareTables {
                engine: Some(params.engine),
            }],
            Study::Replay(params) => {
                // Every repeat starts from the snapshot: the replay's writes change it.
                let threads = [params.script.connections.len().max(1) as u32];
                let mut steps = Vec::new();
                for cell in run_phase_cells(0, &threads, &params.engines, params.repeat, 0) {
                    if let Step::Cell(cell_step) = &cell {
                        steps.push(Step::LoadSnapshot {
                            engine: cell_step.engine,
                        });
                    }
                    steps.push(cell);
                }
                steps
            }
        }
    }

    /// A step other than a cell as `--dry-run` prints it.
    pub fn describe_step(&self, step: &Step) -> String {
        match (self, step) {
            (Study::Scenario { scenario, .. }, step) => describe_scenario_step(scenario, step),
            (
                Study::Sysbench(params),
                Step::PrepareTables {
                    engine: Some(engine),
                },
            ) => params
                .workload
                .describe_tables(&params.options, max_threads(params), *engine),
            (Study::Sysbench(params), Step::EmptyTables { engine }) => format!(
                "empty the tables of {} on {engine} (it counts ids from 1 again)",
                params.workload.name()
            ),
            (Study::PrepareSbtest(params), Step::PrepareTables { .. }) => format!(
                "prepare {} table(s) of {} rows on {} (left in place)",
                params.tables, params.table_size, params.engine
            ),
            (Study::Replay(params), Step::LoadSnapshot { engine }) => format!(
                "load the snapshot ({} table(s), {} row(s)) into {} with ENGINE={}",
                params.capture.tables.len(),
                params
                    .capture
                    .rows
                    .iter()
                    .map(|r| r.rows.len())
                    .sum::<usize>(),
                match (&params.database, &params.renamed_from) {
                    (Some(database), Some(captured)) => format!(
                        "{database} (the captured {captured}, mapped by --database{})",
                        if params.naming_captured.is_empty() {
                            String::new()
                        } else {
                            format!(
                                "; {} statement kind(s) name {captured} explicitly and run against it as written",
                                params.naming_captured.len()
                            )
                        }
                    ),
                    (Some(database), None) => database.clone(),
                    (None, _) => "the run's database".into(),
                },
                engine.sql_name()
            ),
            (_, step) => format!("{step:?}"),
        }
    }
}

/// The most threads any cell runs (some workloads give each thread a table).
fn max_threads(params: &OltpParams) -> u32 {
    params.threads.iter().copied().max().unwrap_or(1)
}

/// A scenario's steps on one server: the tables prepared, then each phase in the file's
/// order, then the footprints.
fn scenario_steps(scenario: &Scenario, params: &ScenarioParams) -> Vec<Step> {
    let engines = &params.engines;
    let mut steps = Vec::new();
    {
        steps.push(Step::PrepareTables { engine: None });
        for (phase, definition) in scenario.phases.iter().enumerate() {
            match definition {
                Phase::Ddl { .. } => {
                    steps.extend(engines.iter().map(|&engine| Step::Ddl { phase, engine }))
                }
                Phase::Sequence { .. } => steps.extend(
                    engines
                        .iter()
                        .map(|&engine| Step::Sequence { phase, engine }),
                ),
                Phase::Load { methods, .. } => {
                    for repeat in 1..=params.repeat {
                        for method in 0..methods.len() {
                            for &engine in engines {
                                steps.push(Step::Load {
                                    phase,
                                    method,
                                    engine,
                                    repeat,
                                });
                            }
                        }
                    }
                }
                Phase::Run { threads, .. } => {
                    for cell in run_phase_cells(
                        phase,
                        threads,
                        engines,
                        params.repeat,
                        params.warmup_repeats,
                    ) {
                        if params.cold {
                            steps.push(Step::ColdRestart);
                        }
                        steps.push(cell);
                    }
                }
            }
        }
        steps.push(Step::Footprints);
    }
    steps
}

fn describe_scenario_step(scenario: &Scenario, step: &Step) -> String {
    let phase_name = |index: usize| scenario.phases[index].name();
    match step {
        Step::PrepareTables { .. } => {
            let tables: Vec<String> = scenario
                .tables
                .iter()
                .filter(|t| !t.deferred)
                .map(|t| format!("{} ({} rows)", t.name, t.rows))
                .collect();
            if tables.is_empty() {
                "create each engine's database".to_string()
            } else {
                format!("load {} for each engine", tables.join(", "))
            }
        }
        Step::ColdRestart => {
            "restart the server on its datadir, page cache dropped (--cold)".to_string()
        }
        Step::Ddl { phase, engine } => format!("ddl '{}' on {engine}", phase_name(*phase)),
        Step::Load {
            phase,
            method,
            engine,
            repeat,
        } => {
            let Phase::Load { methods, table, .. } = &scenario.phases[*phase] else {
                unreachable!("a load step belongs to a load phase")
            };
            format!(
                "load '{}': {} rows of {} with {} on {engine}, repeat {repeat}",
                phase_name(*phase),
                scenario.tables[*table].rows,
                scenario.tables[*table].name,
                methods[*method].label()
            )
        }
        Step::Sequence { phase, engine } => {
            let Phase::Sequence { runs, discard, .. } = &scenario.phases[*phase] else {
                unreachable!("a sequence step belongs to a sequence phase")
            };
            format!(
                "sequence '{}' on {engine}: {runs} runs, first {discard} discarded",
                phase_name(*phase)
            )
        }
        Step::Footprints => "measure each table's disk footprint".to_string(),
        Step::LoadSnapshot { .. } => unreachable!("scenarios load no snapshot"),
        Step::EmptyTables { engine } => format!("empty the tables on {engine}"),
        Step::Cell(_) | Step::StartProfile { .. } => {
            unreachable!("cells and profiles are described by the plan")
        }
    }
}
