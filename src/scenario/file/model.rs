//! The scenario format: raw TOML shapes (unknown keys refused), and their resolution into a
//! validated `Scenario` with every parameter, reference and bound checked.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::time::Duration;
use toml::Spanned;

use super::FileRows;
use super::{Generator, ScenarioError};
use crate::engine::Engine;
use crate::load::{memory_table_cap, IndexTiming, LoadMethod, LoadPlan, TableSpec, Value};
use crate::scenario::distributions::{Distribution, RandSpec, RandType};
use crate::server::caps::{parse_memory_limit, CpuList, ResourceCaps};
use crate::server::{ReadFrom, Topology, WriteTo};
use crate::units::parse_duration;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawScenario {
    name: String,
    #[serde(default)]
    title: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    engines: Vec<Spanned<String>>,
    #[serde(default, deserialize_with = "one_or_many")]
    threads: Vec<u32>,
    repeat: Option<u32>,
    time: Option<Spanned<String>>,
    loops: Option<u64>,
    warmup: Option<Spanned<String>>,
    /// The default for --scale (row counts are written at full scale).
    scale: Option<f64>,
    #[serde(default)]
    parameters: toml::Table,
    /// Server configurations compared: each runs the whole study on its own server.
    #[serde(default)]
    profiles: Vec<RawProfile>,
    #[serde(default)]
    tables: Vec<RawTable>,
    #[serde(default)]
    phases: Vec<RawPhase>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProfile {
    name: Spanned<String>,
    /// Server variables: `{ innodb_buffer_pool_size = "1M", key_buffer_size = "1M" }`.
    #[serde(default)]
    server_opts: toml::Table,
    /// The datadir on tmpfs (/dev/shm).
    #[serde(default)]
    tmpfs: bool,
    /// Another server build for this profile (`server` or `server_bin`): `system`, a
    /// fetched build (`mariadb-11.8`, `mysql`), a tarball's directory, or a binary.
    #[serde(alias = "server")]
    server_bin: Option<Spanned<String>>,
    /// The server's memory, page cache included: `"256M"`.
    memory_limit: Option<Spanned<String>>,
    /// The server's CPUs: `"0"`, `"0-1"`.
    server_cpus: Option<Spanned<String>>,
    /// enginebench's client threads' CPUs.
    client_cpus: Option<Spanned<String>>,
    /// The servers as a topology: `{ replicas = 2 }`, `{ galera = 3 }`, `{ spider = 2 }`.
    topology: Option<Spanned<toml::Table>>,
    /// Where phases that write send their connections: "primary" or "all".
    write_to: Option<Spanned<String>>,
    /// Where read-only phases send theirs: "primary", "replicas" or "all".
    read_from: Option<Spanned<String>>,
}

/// A node killed mid-cell: `kill_node = { at = "10s", node = 2 }`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawKillNode {
    at: Spanned<String>,
    node: Spanned<u32>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTable {
    name: Spanned<String>,
    rows: Spanned<toml::Value>,
    /// A table whose size is part of the study (S1's 155 skins): --scale leaves it alone.
    #[serde(default)]
    fixed: bool,
    /// Not loaded before the phases: a sequence's `load` step creates and fills it.
    #[serde(default)]
    deferred: bool,
    create: String,
    /// A different CREATE TABLE for some engines, e.g. MEMORY with BTREE indexes.
    #[serde(default)]
    create_for: BTreeMap<String, String>,
    /// Secondary indexes, built after the load: "INDEX name (columns)".
    #[serde(default)]
    indexes: Vec<String>,
    columns: indexmap::IndexMap<String, Spanned<toml::Value>>,
}

/// `threads = 2` as well as `threads = [2]`.
fn one_or_many<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Vec<u32>, D::Error> {
    struct Threads;
    impl<'de> serde::de::Visitor<'de> for Threads {
        type Value = Vec<u32>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str(
                "a thread count or a list of them, e.g. threads = 4 or threads = [1, 4, 16]",
            )
        }
        fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<Vec<u32>, E> {
            u32::try_from(n)
                .map(|n| vec![n])
                .map_err(|_| E::custom(format!("thread count {n} is out of range")))
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<u32>, A::Error> {
            let mut list = Vec::new();
            while let Some(n) = seq.next_element()? {
                list.push(n);
            }
            Ok(list)
        }
    }
    deserializer.deserialize_any(Threads)
}

fn maybe_one_or_many<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<Vec<u32>>, D::Error> {
    one_or_many(deserializer).map(Some)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPhase {
    kind: Spanned<String>,
    name: String,
    sql: Option<String>,
    #[serde(default, deserialize_with = "maybe_one_or_many")]
    threads: Option<Vec<u32>>,
    time: Option<Spanned<String>>,
    loops: Option<u64>,
    warmup: Option<Spanned<String>>,
    #[serde(default)]
    events: Vec<RawEvent>,
    /// Sequence phases: timed steps, repeated `runs` times, the first `discard` dropped.
    #[serde(default)]
    steps: Vec<RawStep>,
    runs: Option<u32>,
    discard: Option<u32>,
    /// MySQL error numbers counted and retried like deadlocks (sysbench's
    /// --mysql-ignore-errors), e.g. 1062 for delete+insert races on MyISAM.
    #[serde(default)]
    ignore_errors: Vec<u16>,
    /// Load phases: the `deferred` table loaded with each method, timed (S4).
    table: Option<Spanned<String>>,
    /// Run phases on a topology: where connections go (a profile's setting otherwise).
    write_to: Option<Spanned<String>>,
    read_from: Option<Spanned<String>>,
    /// Run phases on a topology: a node killed mid-cell.
    kill_node: Option<RawKillNode>,
    #[serde(default)]
    methods: Vec<Spanned<RawLoadMethod>>,
}

/// A load method with its sizes: `{ method = "multi-row", rows_per_statement = 100 }`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLoadMethod {
    method: String,
    commit_every: Option<u64>,
    rows_per_statement: Option<u64>,
    chunk_rows: Option<u64>,
    parallel: Option<u32>,
    /// "before" or "after" the load [default: after].
    indexes: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStep {
    name: String,
    /// A statement to time (`{engine}` is replaced by the engine's name).
    sql: Option<String>,
    /// Or: create and fill this `deferred` table, timed as one step.
    load: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEvent {
    name: String,
    #[serde(default = "one")]
    weight: u32,
    #[serde(default)]
    transaction: bool,
    statements: Vec<RawStatement>,
}

fn one() -> u32 {
    1
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawStatement {
    name: String,
    sql: Spanned<String>,
    #[serde(default)]
    params: Vec<Spanned<toml::Value>>,
}

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
    pub time: Option<Duration>,
    pub loops: Option<u64>,
    pub warmup: Option<Duration>,
    pub scale: f64,
    /// Parameters after defaults and --set, for the record.
    pub parameters: BTreeMap<String, String>,
    pub profiles: Vec<Profile>,
    pub tables: Vec<Table>,
    pub phases: Vec<Phase>,
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
    },
}

impl Phase {
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

struct Resolver<'a> {
    text: &'a str,
    file: &'a str,
    parameters: toml::Table,
    /// table name → (rows, key columns with their start) for `ref`.
    tables: BTreeMap<String, (u64, BTreeMap<String, i64>)>,
    now: String,
}

impl Resolver<'_> {
    fn error(&self, at: usize, message: impl Into<String>) -> ScenarioError {
        ScenarioError::at(self.file, self.text, at, message)
    }

    /// A value of a profile or phase (`owner`: "profile 'x'", "phase 'y'") parsed by
    /// `parse`, or an error pointing at it.
    fn parsed<T>(
        &self,
        owner: &str,
        value: &Option<Spanned<String>>,
        parse: impl Fn(&str) -> Result<T, String>,
    ) -> Result<Option<T>, ScenarioError> {
        value
            .as_ref()
            .map(|text| {
                parse(text.get_ref())
                    .map_err(|message| self.error(text.span().start, format!("{owner}: {message}")))
            })
            .transpose()
    }

    /// A number, or the name of a numeric parameter.
    fn number(&self, value: &toml::Value, at: usize) -> Result<f64, ScenarioError> {
        match value {
            toml::Value::Integer(n) => Ok(*n as f64),
            toml::Value::Float(x) => Ok(*x),
            toml::Value::String(name) => match self.parameters.get(name) {
                Some(toml::Value::Integer(n)) => Ok(*n as f64),
                Some(toml::Value::Float(x)) => Ok(*x),
                Some(_) => Err(self.error(at, format!("parameter '{name}' is not a number"))),
                None => Err(self.error(
                    at,
                    format!(
                        "'{name}' is not a defined parameter ({})",
                        self.parameter_list()
                    ),
                )),
            },
            _ => Err(self.error(at, "expected a number or the name of a parameter")),
        }
    }

    fn parameter_list(&self) -> String {
        if self.parameters.is_empty() {
            "the scenario defines no [parameters]".into()
        } else {
            format!(
                "defined: {}",
                self.parameters
                    .keys()
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
    }

    fn duration(&self, value: &Option<Spanned<String>>) -> Result<Option<Duration>, ScenarioError> {
        value
            .as_ref()
            .map(|text| {
                parse_duration(text.get_ref()).map_err(|err| self.error(text.span().start, err))
            })
            .transpose()
    }

    /// A generator spec: "now", or a table with one of sequence, int, string, pick,
    /// value, ref.
    fn generator(
        &self,
        spec: &Spanned<toml::Value>,
        column: bool,
    ) -> Result<Generator, ScenarioError> {
        let at = spec.span().start;
        const ALLOWED: &str = "a generator is \"now\" or a table with one of: sequence, int (with optional dist), string, pick, value, ref";
        let table = match spec.get_ref() {
            toml::Value::String(word) if word == "now" => {
                return Ok(Generator::Now(self.now.clone()))
            }
            toml::Value::Table(table) => table,
            _ => return Err(self.error(at, ALLOWED)),
        };
        let kinds: Vec<&String> = table.keys().filter(|k| k.as_str() != "dist").collect();
        if kinds.len() != 1 {
            return Err(self.error(
                at,
                format!(
                    "{ALLOWED}; found {}",
                    if kinds.is_empty() {
                        "none".to_string()
                    } else {
                        kinds
                            .iter()
                            .map(|k| k.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    }
                ),
            ));
        }
        if table.contains_key("dist") && !table.contains_key("int") && !table.contains_key("ref") {
            return Err(self.error(at, "dist applies to int and ref generators only"));
        }
        let pair = |key: &str| -> Result<(f64, f64), ScenarioError> {
            match table.get(key) {
                Some(toml::Value::Array(bounds)) if bounds.len() == 2 => {
                    Ok((self.number(&bounds[0], at)?, self.number(&bounds[1], at)?))
                }
                _ => Err(self.error(at, format!("{key} takes [min, max]"))),
            }
        };
        let kind = kinds[0].as_str();
        match kind {
            "sequence" => {
                if !column {
                    return Err(self.error(at, "sequence fills a column with row numbers; a statement parameter cannot use it (use int or ref)"));
                }
                Ok(Generator::Sequence {
                    start: self.number(&table["sequence"], at)? as i64,
                })
            }
            "int" => {
                let (min, max) = pair("int")?;
                if min > max {
                    return Err(self.error(
                        at,
                        format!("int bounds are impossible: min {min} > max {max}"),
                    ));
                }
                if max - min > f64::from(u32::MAX) {
                    return Err(self.error(at, "int range is wider than 2^32"));
                }
                let distribution = self.distribution(table, at)?;
                Ok(Generator::Int {
                    min: min as i64,
                    max: max as i64,
                    distribution,
                })
            }
            "string" => {
                let (min, max) = pair("string")?;
                if min < 0.0 || min > max || max > 1_000_000.0 {
                    return Err(self.error(at, format!("string lengths are impossible: [{min}, {max}] (0 <= min <= max <= 1000000)")));
                }
                Ok(Generator::Text {
                    min: min as usize,
                    max: max as usize,
                })
            }
            "pick" => match &table["pick"] {
                toml::Value::Array(values) if !values.is_empty() => Ok(Generator::Pick(
                    values
                        .iter()
                        .map(|v| self.scalar(v, at))
                        .collect::<Result<_, _>>()?,
                )),
                _ => Err(self.error(at, "pick takes a non-empty list of values")),
            },
            "value" => Ok(Generator::Constant(self.scalar(&table["value"], at)?)),
            "ref" => {
                let target = match &table["ref"] {
                    toml::Value::String(target) => target,
                    _ => return Err(self.error(at, "ref names a key column: \"table.column\"")),
                };
                let (table_name, column_name) = target.split_once('.').ok_or_else(|| {
                    self.error(at, format!("ref '{target}' must be \"table.column\""))
                })?;
                let (rows, keys) = self.tables.get(table_name).ok_or_else(|| {
                    self.error(at, format!("ref '{target}': table '{table_name}' is not defined before this point (defined: {})", if self.tables.is_empty() { "none".to_string() } else { self.tables.keys().cloned().collect::<Vec<_>>().join(", ") }))
                })?;
                let start = keys.get(column_name).ok_or_else(|| {
                    self.error(at, format!("ref '{target}': column '{column_name}' of {table_name} is not a sequence column, so it has no key range"))
                })?;
                let distribution = self.distribution(table, at)?;
                Ok(Generator::Int {
                    min: *start,
                    max: start + (*rows as i64) - 1,
                    distribution,
                })
            }
            other => Err(self.error(at, format!("unknown generator '{other}': {ALLOWED}"))),
        }
    }

    /// The `dist` of an int or ref generator (uniform when absent).
    fn distribution(&self, table: &toml::Table, at: usize) -> Result<Distribution, ScenarioError> {
        let rand_type = match table.get("dist") {
            None => RandType::Uniform,
            Some(toml::Value::String(name)) => match name.as_str() {
                "uniform" => RandType::Uniform,
                "gaussian" => RandType::Gaussian,
                "special" => RandType::Special,
                "pareto" => RandType::Pareto,
                "zipfian" => RandType::Zipfian,
                other => {
                    return Err(self.error(at, format!("unknown dist '{other}' (allowed: uniform, gaussian, special, pareto, zipfian)")))
                }
            },
            Some(_) => return Err(self.error(at, "dist is a name: uniform, gaussian, special, pareto or zipfian")),
        };
        Distribution::new(RandSpec {
            rand_type,
            ..RandSpec::default()
        })
        .map_err(|err| self.error(at, err))
    }

    /// A statement parameter: any generator but sequence, or `{ copy = "stmt.N", add = K }`
    /// naming a parameter bound earlier in the same event (`earlier`), or earlier in this
    /// statement (`current`, with `bound` parameters so far).
    fn param_generator(
        &self,
        spec: &Spanned<toml::Value>,
        earlier: &[Statement],
        current: &str,
        bound: usize,
    ) -> Result<Generator, ScenarioError> {
        let at = spec.span().start;
        let Some(table) = spec.get_ref().as_table().filter(|t| t.contains_key("copy")) else {
            return self.generator(spec, false);
        };
        if table.keys().any(|k| k != "copy" && k != "add") {
            return Err(self.error(at, "copy takes only copy = \"statement.N\" and add = K"));
        }
        let target = table["copy"]
            .as_str()
            .ok_or_else(|| self.error(at, "copy names a parameter: \"statement.N\""))?;
        let (name, number) = target
            .rsplit_once('.')
            .and_then(|(name, n)| {
                n.parse::<usize>()
                    .ok()
                    .filter(|n| *n >= 1)
                    .map(|n| (name, n - 1))
            })
            .ok_or_else(|| {
                self.error(
                    at,
                    format!("copy '{target}' must be \"statement.N\" with N from 1"),
                )
            })?;
        let add = match table.get("add") {
            None => 0,
            Some(value) => self.number(value, at)? as i64,
        };
        let (statement, params) = if name == current {
            (earlier.len(), bound)
        } else {
            match earlier.iter().position(|s| s.name == name) {
                Some(index) => (index, earlier[index].params.len()),
                None => {
                    return Err(self.error(
                        at,
                        format!(
                            "copy '{target}': no statement '{name}' before this one in the event"
                        ),
                    ))
                }
            }
        };
        if number >= params {
            return Err(self.error(at, format!("copy '{target}': that statement binds only {params} parameter(s) before this point")));
        }
        Ok(Generator::Copy {
            statement,
            param: number,
            add,
        })
    }

    fn scalar(&self, value: &toml::Value, at: usize) -> Result<Value, ScenarioError> {
        match value {
            toml::Value::Integer(n) => Ok(Value::Int(*n)),
            toml::Value::String(s) => Ok(Value::Text(s.clone())),
            toml::Value::Float(x) => Ok(Value::Text(x.to_string())),
            toml::Value::Boolean(b) => Ok(Value::Int(i64::from(*b))),
            _ => Err(self.error(at, "values are numbers, strings or booleans")),
        }
    }
}

/// The index of the `deferred` table a load step or phase names.
fn deferred_table(
    resolver: &Resolver,
    tables: &[Table],
    table: &Spanned<String>,
) -> Result<usize, ScenarioError> {
    let name = table.get_ref();
    let index = tables.iter().position(|t| t.name == *name).ok_or_else(|| {
        resolver.error(
            table.span().start,
            format!(
                "load '{name}': no such table (defined: {})",
                tables
                    .iter()
                    .map(|t| t.name.clone())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )
    })?;
    if !tables[index].deferred {
        return Err(resolver.error(
            table.span().start,
            format!("load '{name}': mark the table deferred = true so it is not also loaded before the phases"),
        ));
    }
    Ok(index)
}

/// A load method of a load phase, with sizes defaulting to those of a one-connection load.
fn load_plan(resolver: &Resolver, raw: &Spanned<RawLoadMethod>) -> Result<LoadPlan, ScenarioError> {
    let at = raw.span().start;
    let spec = raw.get_ref();
    let method: LoadMethod = spec
        .method
        .parse()
        .map_err(|err: String| resolver.error(at, err))?;
    let positive = |value: Option<u64>, default: u64, key: &str| -> Result<u64, ScenarioError> {
        match value {
            Some(0) => Err(resolver.error(at, format!("{key} must be at least 1"))),
            Some(n) => Ok(n),
            None => Ok(default),
        }
    };
    let index_timing = match spec.indexes.as_deref() {
        None | Some("after") => IndexTiming::After,
        Some("before") => IndexTiming::Before,
        Some(other) => {
            return Err(resolver.error(
                at,
                format!("indexes = \"{other}\": allowed are \"before\" and \"after\""),
            ))
        }
    };
    Ok(LoadPlan {
        method,
        commit_every: positive(
            spec.commit_every,
            if method == LoadMethod::RowAutocommit {
                1
            } else {
                1000
            },
            "commit_every",
        )?,
        rows_per_statement: positive(spec.rows_per_statement, 100, "rows_per_statement")?,
        chunk_rows: positive(spec.chunk_rows, 10_000, "chunk_rows")?,
        parallel: positive(spec.parallel.map(u64::from), 1, "parallel")? as u32,
        index_timing,
        tables_at_once: 1,
    })
}

/// Counts `?` placeholders outside quoted strings.
pub fn placeholders(sql: &str) -> usize {
    let mut count = 0;
    let mut quote: Option<char> = None;
    let mut chars = sql.chars().peekable();
    while let Some(ch) = chars.next() {
        match (quote, ch) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), '\\') => {
                chars.next();
            }
            (Some(_), _) => {}
            (None, '\'' | '"' | '`') => quote = Some(ch),
            (None, '?') => count += 1,
            _ => {}
        }
    }
    count
}

pub fn resolve(
    raw: RawScenario,
    text: &str,
    file: &str,
    overrides: &[(String, String)],
    scale: Option<f64>,
) -> Result<Scenario, ScenarioError> {
    let mut parameters = raw.parameters.clone();
    for (name, value) in overrides {
        let Some(default) = parameters.get(name) else {
            let defined = parameters.keys().cloned().collect::<Vec<_>>().join(", ");
            return Err(ScenarioError {
                file: "--set".into(),
                line: 0,
                column: 0,
                message: format!(
                    "'{name}' is not a parameter of {} ({})",
                    raw.name,
                    if defined.is_empty() {
                        "it has none".into()
                    } else {
                        format!("defined: {defined}")
                    }
                ),
            });
        };
        let parsed = match default {
            toml::Value::Integer(_) => {
                crate::units::parse_count(value).map(|n| toml::Value::Integer(n as i64))
            }
            toml::Value::Float(_) => value
                .parse::<f64>()
                .map(toml::Value::Float)
                .map_err(|e| e.to_string()),
            toml::Value::Boolean(_) => value
                .parse::<bool>()
                .map(toml::Value::Boolean)
                .map_err(|e| e.to_string()),
            _ => Ok(toml::Value::String(value.clone())),
        }
        .map_err(|err| ScenarioError {
            file: "--set".into(),
            line: 0,
            column: 0,
            message: format!("{name}={value}: {err}"),
        })?;
        parameters.insert(name.clone(), parsed);
    }
    let mut resolver = Resolver {
        text,
        file,
        parameters,
        tables: BTreeMap::new(),
        now: humantime::format_rfc3339_seconds(std::time::SystemTime::now())
            .to_string()
            .replace('T', " ")
            .trim_end_matches('Z')
            .to_string(),
    };
    let mut engines = Vec::new();
    let mut engine_positions = Vec::new();
    for engine in &raw.engines {
        let parsed: Engine = engine
            .get_ref()
            .parse()
            .map_err(|err: String| resolver.error(engine.span().start, err))?;
        if !engines.contains(&parsed) {
            engines.push(parsed);
            let at = resolver.error(engine.span().start, "");
            engine_positions.push((parsed, format!("{}:{}:{}", at.file, at.line, at.column)));
        }
    }
    let scale = scale.or(raw.scale).unwrap_or(1.0);
    if !(scale > 0.0 && scale.is_finite()) {
        return Err(ScenarioError {
            file: file.into(),
            line: 0,
            column: 0,
            message: format!("scale must be positive, not {scale}"),
        });
    }
    let mut profiles: Vec<Profile> = Vec::new();
    for profile in &raw.profiles {
        let name = profile.name.get_ref().clone();
        if profiles.iter().any(|p| p.name == name) {
            return Err(resolver.error(
                profile.name.span().start,
                format!("profile '{name}' is defined twice"),
            ));
        }
        let mut server_opts = Vec::new();
        for (key, value) in &profile.server_opts {
            let value = match value {
                toml::Value::String(text) => text.clone(),
                toml::Value::Integer(n) => n.to_string(),
                toml::Value::Float(x) => x.to_string(),
                toml::Value::Boolean(b) => {
                    if *b {
                        "ON".into()
                    } else {
                        "OFF".into()
                    }
                }
                _ => {
                    return Err(resolver.error(
                        profile.name.span().start,
                        format!(
                        "profile '{name}': server_opts.{key} must be a string, number or boolean"
                    ),
                    ))
                }
            };
            server_opts.push((key.replace('-', "_"), value));
        }
        let server_bin = match &profile.server_bin {
            Some(path) if !crate::server::builds::could_be_build(path.get_ref()) => {
                return Err(resolver.error(
                    path.span().start,
                    format!(
                        "profile '{name}': server_bin {} does not exist (system, a fetched build: {}, a directory unpacked from a tarball, or a mariadbd or mysqld binary)",
                        path.get_ref(),
                        crate::server::builds::known_names().join(", ")
                    ),
                ))
            }
            Some(path) => Some(std::path::PathBuf::from(path.get_ref())),
            None => None,
        };
        let owner = format!("profile '{name}'");
        let caps = ResourceCaps {
            memory_limit_bytes: resolver.parsed(
                &owner,
                &profile.memory_limit,
                parse_memory_limit,
            )?,
            server_cpus: resolver.parsed(&owner, &profile.server_cpus, CpuList::parse)?,
            client_cpus: resolver.parsed(&owner, &profile.client_cpus, CpuList::parse)?,
        };
        let topology = match &profile.topology {
            None => None,
            Some(table) => {
                let at = table.span().start;
                let entries: Vec<(&String, &toml::Value)> = table.get_ref().iter().collect();
                match entries.as_slice() {
                    [(kind, toml::Value::Integer(count))] => Some(
                        u32::try_from(*count)
                            .map_err(|_| format!("topology {kind} = {count}: a node count"))
                            .and_then(|count| Topology::from_kind(kind, count))
                            .map_err(|message| {
                                resolver.error(at, format!("profile '{name}': {message}"))
                            })?,
                    ),
                    _ => {
                        return Err(resolver.error(
                            at,
                            format!("profile '{name}': topology takes one entry: {{ replicas = N }}, {{ galera = N }} or {{ spider = N }}"),
                        ))
                    }
                }
            }
        };
        profiles.push(Profile {
            name: name.clone(),
            server_opts,
            tmpfs: profile.tmpfs,
            server_bin,
            caps,
            topology,
            write_to: resolver.parsed(&owner, &profile.write_to, WriteTo::parse)?,
            read_from: resolver.parsed(&owner, &profile.read_from, ReadFrom::parse)?,
        });
    }
    let mut tables = Vec::new();
    for table in &raw.tables {
        let name = table.name.get_ref().clone();
        if resolver.tables.contains_key(&name) {
            return Err(resolver.error(
                table.name.span().start,
                format!("table '{name}' is defined twice"),
            ));
        }
        let rows_full = resolver.number(table.rows.get_ref(), table.rows.span().start)?;
        let rows = if table.fixed {
            rows_full.round() as u64
        } else {
            ((rows_full * scale).round() as u64).max(1)
        };
        if rows_full < 1.0 {
            return Err(resolver.error(
                table.rows.span().start,
                format!("rows must be at least 1, not {rows_full}"),
            ));
        }
        if table.columns.is_empty() {
            return Err(resolver.error(
                table.name.span().start,
                format!("table '{name}' has no columns to fill"),
            ));
        }
        let mut create_for = BTreeMap::new();
        for (engine, sql) in &table.create_for {
            let engine: Engine = engine.parse().map_err(|err: String| {
                resolver.error(table.name.span().start, format!("create_for: {err}"))
            })?;
            create_for.insert(engine, sql.clone());
        }
        let mut columns = Vec::new();
        let mut keys = BTreeMap::new();
        for (column, spec) in &table.columns {
            let generator = resolver.generator(spec, true)?;
            if let Generator::Sequence { start } = generator {
                keys.insert(column.clone(), start);
            }
            columns.push((column.clone(), generator));
        }
        // Defined only after its own columns: a table cannot reference itself.
        resolver.tables.insert(name.clone(), (rows, keys));
        tables.push(Table {
            name,
            rows,
            deferred: table.deferred,
            create: table.create.clone(),
            create_for,
            indexes: table.indexes.clone(),
            columns,
        });
    }
    let defaults = (
        raw.threads.clone(),
        resolver.duration(&raw.time)?,
        raw.loops,
        resolver.duration(&raw.warmup)?,
    );
    let mut phases = Vec::new();
    for phase in &raw.phases {
        let at = phase.kind.span().start;
        match phase.kind.get_ref().as_str() {
            "ddl" => {
                let sql = phase.sql.clone().ok_or_else(|| {
                    resolver.error(
                        at,
                        format!("ddl phase '{}' needs sql = \"...\"", phase.name),
                    )
                })?;
                phases.push(Phase::Ddl {
                    name: phase.name.clone(),
                    sql,
                });
            }
            "run" => {
                if phase.events.is_empty() {
                    return Err(
                        resolver.error(at, format!("run phase '{}' has no events", phase.name))
                    );
                }
                let mut events = Vec::new();
                for event in &phase.events {
                    if event.weight == 0 {
                        return Err(resolver.error(
                            at,
                            format!(
                                "event '{}' has weight 0: give a weight of 1 or more",
                                event.name
                            ),
                        ));
                    }
                    if event.statements.is_empty() {
                        return Err(
                            resolver.error(at, format!("event '{}' has no statements", event.name))
                        );
                    }
                    let mut statements = Vec::new();
                    for statement in &event.statements {
                        let wanted = placeholders(statement.sql.get_ref());
                        if wanted != statement.params.len() {
                            return Err(resolver.error(
                                statement.sql.span().start,
                                format!(
                                    "statement '{}' has {wanted} ? placeholder(s) but {} param(s)",
                                    statement.name,
                                    statement.params.len()
                                ),
                            ));
                        }
                        let mut params = Vec::new();
                        for spec in &statement.params {
                            params.push(resolver.param_generator(
                                spec,
                                &statements,
                                &statement.name,
                                params.len(),
                            )?);
                        }
                        statements.push(Statement {
                            name: statement.name.clone(),
                            sql: statement.sql.get_ref().clone(),
                            params,
                        });
                    }
                    events.push(Event {
                        name: event.name.clone(),
                        weight: event.weight,
                        transaction: event.transaction,
                        statements,
                    });
                }
                let time = resolver.duration(&phase.time)?.or(defaults.1);
                let loops = phase.loops.or(defaults.2);
                if time.is_none() && loops.is_none() {
                    return Err(resolver.error(
                        at,
                        format!(
                            "run phase '{}' needs time = \"10s\" or loops = N (here or at the top)",
                            phase.name
                        ),
                    ));
                }
                let threads = phase.threads.clone().unwrap_or_else(|| defaults.0.clone());
                if threads.is_empty() || threads.contains(&0) {
                    return Err(resolver.error(at, format!("run phase '{}' needs threads = [1, ...] (here or at the top), each at least 1", phase.name)));
                }
                phases.push(Phase::Run {
                    name: phase.name.clone(),
                    ignore_errors: phase.ignore_errors.clone(),
                    threads,
                    time,
                    loops,
                    warmup: resolver.duration(&phase.warmup)?.or(defaults.3),
                    events,
                    write_to: resolver.parsed(&format!("phase '{}'", phase.name), &phase.write_to, WriteTo::parse)?,
                    read_from: resolver.parsed(&format!("phase '{}'", phase.name), &phase.read_from, ReadFrom::parse)?,
                    kill_node: match &phase.kill_node {
                        None => None,
                        Some(kill) => {
                            let node = *kill.node.get_ref();
                            if node < 2 {
                                return Err(resolver.error(kill.node.span().start, format!("run phase '{}': kill_node.node = {node}: give a node from 2 on (node 1 takes the clients and enginebench's probe)", phase.name)));
                            }
                            Some(KillNode {
                                at: resolver
                                    .duration(&Some(kill.at.clone()))?
                                    .unwrap_or_default(),
                                node: node as usize - 1,
                            })
                        }
                    },
                });
            }
            "sequence" => {
                if phase.steps.is_empty() {
                    return Err(
                        resolver.error(at, format!("sequence phase '{}' has no steps", phase.name))
                    );
                }
                let runs = phase.runs.unwrap_or(1);
                let discard = phase.discard.unwrap_or(0);
                if runs == 0 || discard >= runs {
                    return Err(resolver.error(at, format!("sequence phase '{}': runs ({runs}) must be more than discard ({discard})", phase.name)));
                }
                let mut steps = Vec::new();
                for step in &phase.steps {
                    steps.push(match (&step.sql, &step.load) {
                        (Some(sql), None) => Step::Sql {
                            name: step.name.clone(),
                            sql: sql.clone(),
                        },
                        (None, Some(table)) => Step::Load {
                            name: step.name.clone(),
                            table: deferred_table(&resolver, &tables, table)?,
                        },
                        _ => {
                            return Err(resolver.error(
                                at,
                                format!(
                                "step '{}' needs exactly one of sql = \"...\" or load = \"table\"",
                                step.name
                            ),
                            ))
                        }
                    });
                }
                phases.push(Phase::Sequence {
                    name: phase.name.clone(),
                    runs,
                    discard,
                    steps,
                });
            }
            "load" => {
                let table = phase.table.as_ref().ok_or_else(|| {
                    resolver.error(
                        at,
                        format!(
                            "load phase '{}' needs table = \"name\" (a deferred table)",
                            phase.name
                        ),
                    )
                })?;
                let index = deferred_table(&resolver, &tables, table)?;
                if phase.methods.is_empty() {
                    return Err(resolver.error(
                        at,
                        format!(
                            "load phase '{}' needs methods = [{{ method = \"load-data\" }}, ...]",
                            phase.name
                        ),
                    ));
                }
                let methods = phase
                    .methods
                    .iter()
                    .map(|method| load_plan(&resolver, method))
                    .collect::<Result<Vec<_>, _>>()?;
                phases.push(Phase::Load {
                    name: phase.name.clone(),
                    table: index,
                    methods,
                });
            }
            other => {
                return Err(resolver.error(
                    at,
                    format!("unknown phase kind '{other}' (allowed: ddl, load, run, sequence)"),
                ))
            }
        }
    }
    Ok(Scenario {
        name: raw.name,
        title: raw.title,
        description: raw.description,
        engines,
        engine_positions,
        threads: raw.threads,
        repeat: raw.repeat.unwrap_or(1).max(1),
        time: defaults.1,
        loops: raw.loops,
        warmup: defaults.3,
        scale,
        parameters: resolver
            .parameters
            .iter()
            .map(|(k, v)| (k.clone(), v.to_string()))
            .collect(),
        profiles,
        tables,
        phases,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_outside_quotes_are_counted() {
        assert_eq!(
            placeholders("SELECT * FROM t WHERE a = ? AND b = '?' AND c = ?"),
            2
        );
        assert_eq!(placeholders("SELECT 'it\\'s ?' , ?"), 1);
    }
}
