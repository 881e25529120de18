//! What the plan and the runner ask of a kind of study: the [`StudyKind`] trait. Each kind
//! (a scenario file, a sysbench workload, `prepare sbtest`, a replay, …) implements it in a
//! folder of its own under `src/studies/`, and one file there lists them. The plan, the
//! runner, the results, the view and the reports hold a study as `Arc<dyn StudyKind>` and
//! never tell kinds apart. This module must not name any kind.

use std::sync::Arc;

use super::matrix::{Defaults, Matrix, Pacing};
use super::{CellStep, CrashLoad, Step};
use crate::driver::{CellProtocol, Protocol, Workload};
use crate::engine::Engine;
use crate::results::{CellRecord, RunRecord, StepRecord};
use crate::scenario::file::{KillNode, Profile, Scenario};
use crate::scenario::TableSet;
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
/// the cell's seed, and how the runner paces it (for a workload that tells its script).
pub struct CellLink {
    /// The connection every worker opens (routed, with the query timeout set).
    pub spec: ConnectionSpec,
    /// The database the cell's tables live in.
    pub database: String,
    pub seed: u64,
    pub pacing: Pacing,
    /// How the workload sends its statements (the phase's protocol, `--protocol` or the
    /// kind's reference).
    pub protocol: Protocol,
}

/// What a kind's own step ([`Step::Own`]) may do on the bench: make and reach a database,
/// refuse an engine's cells with a reason, and record itself.
pub trait StepHost {
    /// The run's `--database` (a kind's [`StudyKind::database_for`] places its tables
    /// from it).
    fn run_database(&self) -> &str;
    /// `database` created (or emptied of `tables`) for the run.
    fn fresh_database(&mut self, database: &str, tables: &[&str]) -> anyhow::Result<()>;
    /// A new connection to the server, in `database`, counted as the set-up's own (the
    /// record's `own_statements`).
    fn connect(&self, database: &str) -> anyhow::Result<crate::server::OwnConn>;
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

/// What `--dry-run` and the record say of a study: its title, a heading above the steps,
/// and notes once the plan is made (how names were mapped, what runs as written).
#[derive(Debug, Clone, Default)]
pub struct Description {
    pub title: String,
    pub heading: Option<String>,
    pub notes: Vec<String>,
}

/// One run phase as the runner and `--dry-run` see it.
#[derive(Debug, Clone)]
pub struct RunPhase {
    /// The phase's name (a study of one phase: the study's).
    pub name: String,
    /// Whether it changes data: its connections then go where `write_to` says, otherwise
    /// where `read_from` says (on a topology).
    pub writes: bool,
    /// Its own routing and fault, over the profile's and the command line's.
    pub topology: PhaseTopology,
    /// How each of its cells is paced and stopped.
    pub pacing: Pacing,
    /// How long a cell lasts when no time bounds it, in words ("200 loops per thread").
    pub count: Option<String>,
    /// How its statements are sent, and how the kind's reference tool sends them.
    pub protocol: CellProtocol,
}

impl RunPhase {
    /// A phase named `name` paced as the matrix says, its events called `events` in
    /// `--dry-run` ("1000 transactions"), its statements sent as `--protocol` says, else
    /// as the kind's reference tool sends them (`reference`).
    pub fn of_matrix(name: &str, matrix: &Matrix, events: &str, reference: Protocol) -> RunPhase {
        let pacing = matrix.pacing();
        RunPhase {
            name: name.to_string(),
            writes: true,
            topology: PhaseTopology::default(),
            protocol: CellProtocol::of(reference, matrix.protocol),
            count: match (pacing.stop.events_total, pacing.stop.events_per_thread) {
                (Some(total), _) => Some(format!("{total} {events}")),
                (None, Some(each)) => Some(format!("{each} loops per thread")),
                (None, None) => None,
            },
            pacing,
        }
    }
}

/// What a study says of itself, once: the facts the plan, the runner, `--dry-run` and the
/// record read, as values rather than one method each.
#[derive(Debug, Clone)]
pub struct About {
    /// The record's `kind`: which entry of the studies' registry lays its report out.
    pub kind: &'static str,
    /// Its title, `--dry-run`'s heading and the plan's notes.
    pub description: Description,
    /// What the study runs where the command line leaves the matrix open.
    pub defaults: Defaults,
    /// What the study checks of its own tables after a crash trial, in words ("TPC-C's
    /// consistency conditions 1-4"). A study that has such a check runs its own load
    /// beside the ledger's in each trial, on tables set up afresh (see
    /// [`StudyKind::check_after_crash`]); None: the ledger's alone.
    pub crash_check: Option<String>,
    /// Whether a table on an external server may be used though the run did not create it.
    pub reusable_table: fn(&str) -> bool,
}

impl About {
    /// A study of `kind` titled `title`, with the plan's defaults, no crash check of its
    /// own and no table it reuses.
    pub fn new(kind: &'static str, title: impl Into<String>) -> About {
        About {
            kind,
            description: Description {
                title: title.into(),
                ..Description::default()
            },
            defaults: Defaults::default(),
            crash_check: None,
            reusable_table: |_| false,
        }
    }
}

/// A kind of study, its choices made: what only the kind can know — its parameters, its
/// steps, its workload, its checks and its part of the record. The matrix (engines,
/// threads, lengths, pacing, seed, bounds) is the plan's; methods that need it are given
/// it. Facts that do not depend on the matrix are one value, [`About`]. Defaults suit a
/// kind that prepares no tables and has one phase.
pub trait StudyKind: Send + Sync + std::fmt::Debug {
    /// The study's name, as the record and the tables call it.
    fn name(&self) -> &str;

    /// What the study says of itself: its kind, title, defaults, crash check.
    fn about(&self) -> About;

    /// The scenario file behind the study, for the runner's file-defined steps (DDL,
    /// loads, sequences, footprints) and its profiles; None for kinds that plan none.
    fn scenario(&self) -> Option<&Scenario> {
        None
    }

    /// The kind's part of the record, before the run starts: its parameters (with the
    /// matrix's values it keeps), its statements' classes, anything of its own.
    fn add_to_record(&self, record: &mut RunRecord, matrix: &Matrix);

    /// A run phase: its name, whether it writes, its routing, its pacing and its
    /// protocol (a kind that keeps this default sends each statement its own way).
    fn phase(&self, _phase: usize, matrix: &Matrix) -> RunPhase {
        RunPhase::of_matrix(self.name(), matrix, "events", Protocol::AsSent)
    }

    /// The tables to prepare on `engine`.
    fn tables(&self, _engine: Engine, _matrix: &Matrix) -> TableSet {
        TableSet::default()
    }

    /// The database `engine`'s tables live in, given the run's `--database`.
    fn database_for(&self, engine: Engine, database: &str, matrix: &Matrix) -> String {
        if self.tables(engine, matrix).per_engine_database {
            // Each engine's tables live in a database of their own, so the study's SQL
            // names tables plainly.
            format!("{database}_{}", engine.key())
        } else {
            database.to_string()
        }
    }

    /// The study's steps on one server, cells not yet numbered.
    fn steps_on_one_server(&self, matrix: &Matrix) -> Vec<Step>;

    /// A step other than a cell or a profile's server as `--dry-run` prints it.
    fn describe_step(&self, step: &Step, matrix: &Matrix) -> String;

    /// One cell's workload (the runner configures the driver from the phase's pacing).
    fn workload(&self, cell: &CellStep, link: CellLink) -> anyhow::Result<Box<dyn Workload>>;

    /// That check on `engine`'s tables once the server is back from a crash: what it
    /// found broken, in words (empty: everything holds). An error is a check that could
    /// not run.
    fn check_after_crash(
        &self,
        _engine: Engine,
        _matrix: &Matrix,
        _host: &mut dyn StepHost,
    ) -> anyhow::Result<Vec<String>> {
        Ok(Vec::new())
    }

    /// Carries out one of the kind's own steps ([`Step::Own`]).
    fn run_own_step(
        &self,
        what: usize,
        _engine: Engine,
        _matrix: &Matrix,
        _host: &mut dyn StepHost,
    ) -> anyhow::Result<()> {
        anyhow::bail!(
            "{} plans no step of its own numbered {what} (a bug in enginebench)",
            self.name()
        )
    }
}

/// The server profiles the study itself compares (a scenario file's).
pub fn own_profiles(study: &dyn StudyKind) -> Vec<Profile> {
    study
        .scenario()
        .map(|scenario| scenario.profiles.clone())
        .unwrap_or_default()
}

/// Where an engine is named in the study's file ("file:line:column"), for an engine the
/// server turns out to lack.
pub fn engine_position<'a>(study: &'a dyn StudyKind, engine_display_name: &str) -> Option<&'a str> {
    study
        .scenario()?
        .engine_positions
        .iter()
        .find(|(engine, _)| engine.display_name() == engine_display_name)
        .map(|(_, position)| position.as_str())
}

/// The study's steps on `profiles` servers (none: the one server the run starts with),
/// cells not yet numbered.
pub(super) fn steps(study: &dyn StudyKind, profiles: usize, matrix: &Matrix) -> Vec<Step> {
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
        // Crash trials come first: their losses are known before any cell runs, so a run
        // that decides, then stops, spends no repeats deciding between set-ups the
        // verdict will not rank; the cells then run on a fresh server.
        let crashes = crash_steps(study, matrix);
        if !crashes.is_empty() {
            steps.extend(crashes);
            steps.push(Step::FreshServer);
        }
        let own = study.steps_on_one_server(matrix);
        for step in own {
            // --cold, for every kind: each cell starts on a server just restarted.
            if matrix.cold && matches!(step, Step::Cell(_)) {
                steps.push(Step::ColdRestart);
            }
            steps.push(step);
        }
    }
    steps
}

/// A crash trial runs the study's own load on at most this many connections: the trial
/// is about what survives, not about scale, and the ledger's connections come on top.
const CRASH_LOAD_THREADS_MAX: u32 = 8;

/// `--crash`: before a server's cells, each crash kind's trials on each engine (process
/// crashes first: power losses need the server moved onto the power-loss file system).
fn crash_steps(study: &dyn StudyKind, matrix: &Matrix) -> Vec<Step> {
    let mut kinds = matrix.crash.clone();
    kinds.sort();
    kinds.dedup();
    let mut steps = Vec::new();
    for kind in kinds {
        for trial in 1..=matrix.crashes.max(1) {
            for &engine in &matrix.engines {
                steps.push(Step::Crash {
                    engine,
                    kind,
                    trial,
                    study_load: crash_load(study, matrix, engine).map(Box::new),
                });
            }
        }
    }
    steps
}

/// The study's own part of a crash trial on `engine`, for a study that checks its tables
/// after a crash: the steps its plan takes on that engine before the first cell of its
/// first writing phase (its tables set up), and that phase's load.
fn crash_load(study: &dyn StudyKind, matrix: &Matrix, engine: Engine) -> Option<CrashLoad> {
    let check = study.about().crash_check?;
    let mut one = matrix.clone();
    one.engines = vec![engine];
    one.repeat = Some(1);
    one.warmup_repeats = 0;
    let steps = study.steps_on_one_server(&one);
    let first = steps.iter().position(
        |step| matches!(step, Step::Cell(cell) if study.phase(cell.phase, matrix).writes),
    )?;
    let Step::Cell(first_cell) = &steps[first] else {
        return None;
    };
    let phase = first_cell.phase;
    let threads = steps
        .iter()
        .filter_map(|step| match step {
            Step::Cell(cell) if cell.phase == phase => Some(cell.threads),
            _ => None,
        })
        .max()
        .unwrap_or(1)
        .min(CRASH_LOAD_THREADS_MAX);
    let setup = steps[..first]
        .iter()
        .filter(|step| {
            !matches!(
                step,
                Step::Cell(_) | Step::ColdRestart | Step::Footprints | Step::EmptyTables { .. }
            )
        })
        .map(|step| match step {
            // The trial's engine's tables only: the others are not being crashed.
            Step::PrepareTables { engine: None } => Step::PrepareTables {
                engine: Some(engine),
            },
            other => other.clone(),
        })
        .collect();
    Some(CrashLoad {
        setup,
        phase,
        threads,
        check,
    })
}
