//! The validated scenario: what a file means once every parameter, reference and bound is
//! checked — tables, profiles, phases, events and statements. Owns these types and what
//! they say of themselves; must not know TOML (the raw shapes and the resolver do).

use std::collections::BTreeMap;
use std::time::Duration;

use super::FileRows;
use super::Generator;
use crate::engine::Engine;
use crate::load::{memory_table_cap, LoadPlan, TableSpec};
use crate::server::caps::ResourceCaps;
use crate::server::{ReadFrom, Topology, WriteTo};

/// A validated scenario.
#[derive(Debug, Clone)]
pub struct Scenario {
    pub name: String,
    pub title: String,
    pub description: String,
    pub engines: Vec<Engine>,
    /// Where each engine of `engines` is named ("file:line:column"), for errors found once
    /// a server is up (an engine it lacks).
    pub engine_positions: Vec<(Engine, String)>,
    pub threads: Vec<u32>,
    pub repeat: u32,
    /// The file says `repeat`: a fixed count, as `--repeat` would be (without it, runs
    /// that can decide, then stop).
    pub repeat_fixed: bool,
    pub time: Option<Duration>,
    pub loops: Option<u64>,
    pub warmup: Option<Duration>,
    pub scale: f64,
    /// Parameters after defaults and --set, for the record.
    pub parameters: BTreeMap<String, String>,
    pub profiles: Vec<Profile>,
    pub tables: Vec<Table>,
    pub phases: Vec<Phase>,
    /// Queries that return no rows while the tables are consistent: what a crash trial
    /// checks of the scenario's own tables after the restart.
    pub check: Vec<String>,
}

impl Scenario {
    /// The tables to prepare on `engine`: every table but the deferred ones (which phases
    /// create), filled, in a database of the engine's own made afresh.
    pub fn table_set(&self, engine: Engine, seed: u64) -> crate::scenario::TableSet {
        crate::scenario::TableSet {
            per_engine_database: true,
            filled: self
                .tables
                .iter()
                .filter(|t| !t.deferred)
                .map(|t| t.load_spec(engine, seed))
                .collect(),
            empty: Vec::new(),
            owned: self.tables.iter().map(|t| t.name.clone()).collect(),
            reuse_existing: false,
            keep: false,
        }
    }
}

/// A named server configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct Profile {
    pub name: String,
    pub server_opts: Vec<(String, String)>,
    pub tmpfs: bool,
    pub server_bin: Option<std::path::PathBuf>,
    /// Memory and CPU caps for this profile's server and the client.
    pub caps: ResourceCaps,
    /// Its servers as a topology (None: the command line's, one server by default).
    pub topology: Option<Topology>,
    /// Where its phases' connections go, unless a phase says.
    pub write_to: Option<WriteTo>,
    pub read_from: Option<ReadFrom>,
    /// A profile made from a list of caps on the command line (`--memory-limit 256M,1G`):
    /// the caps it stands for, and the profile it caps (none: the run's one server).
    pub cap_of: Option<CapVariant>,
    /// A datadir with the study's tables already loaded (a tune's): the profile's server
    /// starts on a copy of it, and the plan loads nothing on it.
    pub datadir_from: Option<std::path::PathBuf>,
}

impl Profile {
    /// A profile of `server_opts` and nothing else of its own: the default server build,
    /// no tmpfs, caps, topology or routing (the command line's apply).
    pub fn with_options(name: impl Into<String>, server_opts: Vec<(String, String)>) -> Profile {
        Profile {
            name: name.into(),
            server_opts,
            tmpfs: false,
            server_bin: None,
            caps: Default::default(),
            topology: None,
            write_to: None,
            read_from: None,
            cap_of: None,
            datadir_from: None,
        }
    }
}

/// One entry of a list of caps the command line compares (`--memory-limit 256M,1G`,
/// `--server-cpus` given more than once).
#[derive(Debug, Clone, PartialEq)]
pub struct CapVariant {
    /// "memory 256 MiB", "server CPUs 0-1".
    pub label: String,
    pub base: Option<String>,
    pub caps: ResourceCaps,
}

/// A node killed with SIGKILL `at` into a cell's measured time (0-based node index; the
/// first node, which takes the clients, is never killed).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KillNode {
    pub at: Duration,
    pub node: usize,
}

#[derive(Debug, Clone)]
pub struct Table {
    pub name: String,
    pub rows: u64,
    pub deferred: bool,
    pub create: String,
    pub create_for: BTreeMap<Engine, String>,
    pub indexes: Vec<String>,
    pub columns: Vec<(String, Generator)>,
}

impl Table {
    /// The table as the load stage fills it for `engine`.
    pub fn load_spec(&self, engine: Engine, seed: u64) -> TableSpec {
        TableSpec {
            name: self.name.clone(),
            // Scenario tables have no fixed row size: give MEMORY 4 GiB.
            before_create: memory_table_cap(engine, 4 << 30).into_iter().collect(),
            create_sql: self.create_sql(engine),
            secondary_indexes: self.indexes.clone(),
            columns: self.columns.iter().map(|(name, _)| name.clone()).collect(),
            rows: self.rows,
            seed,
            generator: Box::new(FileRows {
                generators: self.columns.iter().map(|(_, g)| g.clone()).collect(),
            }),
        }
    }

    /// The CREATE TABLE for `engine`: its own override, or the common one with `{engine}`
    /// replaced or `ENGINE=...` appended.
    pub fn create_sql(&self, engine: Engine) -> String {
        match self.create_for.get(&engine) {
            Some(sql) => sql.replace("{engine}", engine.sql_name()),
            None if self.create.contains("{engine}") => {
                self.create.replace("{engine}", engine.sql_name())
            }
            None => format!(
                "{} ENGINE={}",
                self.create.trim_end().trim_end_matches(';'),
                engine.sql_name()
            ),
        }
    }
}

#[derive(Debug, Clone)]
pub enum Phase {
    /// A timed statement per engine (CREATE INDEX, ALTER, DROP …).
    Ddl { name: String, sql: String },
    /// A job of timed steps, run `runs` times per engine; the first `discard` are warm-up.
    Sequence {
        name: String,
        runs: u32,
        discard: u32,
        steps: Vec<Step>,
    },
    /// The `table` (an index into `Scenario::tables`) created and filled with each method
    /// in turn, per engine and repeat, each load timed.
    Load {
        name: String,
        table: usize,
        methods: Vec<LoadPlan>,
    },
    /// A measured load: threads × repeats × engines, each event chosen by weight.
    Run {
        name: String,
        ignore_errors: Vec<u16>,
        threads: Vec<u32>,
        time: Option<Duration>,
        loops: Option<u64>,
        warmup: Option<Duration>,
        events: Vec<Event>,
        write_to: Option<WriteTo>,
        read_from: Option<ReadFrom>,
        kill_node: Option<KillNode>,
        /// Client groups run at once, each with its own events (then `events` is empty).
        groups: Vec<PhaseGroup>,
    },
}

/// A client group of a run phase: its own events, connections and pacing.
#[derive(Debug, Clone)]
pub struct PhaseGroup {
    pub name: String,
    /// None: the cell's threads (the phase's threads axis).
    pub threads: Option<u32>,
    pub pacing: GroupRate,
    pub stages: crate::scenario::load_shape::Stages,
    pub events: Vec<Event>,
}

/// How a group of a scenario paces its events.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum GroupRate {
    ClosedLoop,
    /// Events per second for the whole group.
    Rate(f64),
    /// Events per second for each connection.
    RatePerConnection(f64),
}

impl Phase {
    /// A run phase's events with the client group each belongs to (None: the phase's own).
    pub fn run_events(&self) -> Vec<(Option<&str>, &Event)> {
        match self {
            Phase::Run { events, groups, .. } => events
                .iter()
                .map(|event| (None, event))
                .chain(groups.iter().flat_map(|group| {
                    group
                        .events
                        .iter()
                        .map(move |event| (Some(group.name.as_str()), event))
                }))
                .collect(),
            _ => Vec::new(),
        }
    }

    pub fn name(&self) -> &str {
        match self {
            Phase::Ddl { name, .. }
            | Phase::Load { name, .. }
            | Phase::Sequence { name, .. }
            | Phase::Run { name, .. } => name,
        }
    }
}

#[derive(Debug, Clone)]
pub enum Step {
    Sql {
        name: String,
        sql: String,
    },
    /// Create and fill the named table (index into `Scenario::tables`).
    Load {
        name: String,
        table: usize,
    },
}

#[derive(Debug, Clone)]
pub struct Event {
    pub name: String,
    pub weight: u32,
    pub transaction: bool,
    pub statements: Vec<Statement>,
}

#[derive(Debug, Clone)]
pub struct Statement {
    pub name: String,
    pub sql: String,
    pub params: Vec<Generator>,
}
