//! Load methods: the ways a client can fill a table (study S4 found a 70× spread between
//! them), and the fast default enginebench uses to prepare every study's data.
//!
//! Rows are generated per chunk from an RNG seeded by the chunk's first id, so the same
//! table is loaded whatever the method or the number of parallel connections. Every load
//! connection is one of enginebench's own, counted as the set-up's (a run's record says
//! what its loads sent).

mod args;
mod error;
mod random_text;
mod sql_text;

pub use args::LoadArgs;
pub use error::LoadError;
pub use random_text::{push_alphanumeric, push_digits};

use mysql::prelude::Queryable;
use mysql::LocalInfileHandler;
use rand::rngs::SmallRng;
use rand::SeedableRng;
use serde::{Deserialize, Serialize};
use std::io::Write;
use std::str::FromStr;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use crate::measure::{sample_process, ProcessDelta};
use crate::server::{ConnectionSpec, Purpose};
use sql_text::{push_sql_literal, push_tsv_field};

mod range;
use range::load_range;

/// How rows travel from the client to the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum LoadMethod {
    /// One prepared INSERT per row, autocommit on (S4's method 1).
    RowAutocommit,
    /// One prepared INSERT per row, COMMIT every N rows (method 2).
    CommitEvery,
    /// Multi-row INSERT statements of R rows, COMMIT every N rows (method 3).
    MultiRow,
    /// LOAD DATA LOCAL INFILE fed from memory, C rows per chunk, one commit per chunk
    /// (method 4).
    LoadData,
}

impl LoadMethod {
    pub const ALL: [LoadMethod; 4] = [
        LoadMethod::RowAutocommit,
        LoadMethod::CommitEvery,
        LoadMethod::MultiRow,
        LoadMethod::LoadData,
    ];

    pub fn key(self) -> &'static str {
        match self {
            LoadMethod::RowAutocommit => "row-autocommit",
            LoadMethod::CommitEvery => "commit-every",
            LoadMethod::MultiRow => "multi-row",
            LoadMethod::LoadData => "load-data",
        }
    }
}

impl FromStr for LoadMethod {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        LoadMethod::ALL
            .into_iter()
            .find(|method| method.key() == text.trim())
            .ok_or_else(|| {
                let known: Vec<&str> = LoadMethod::ALL.iter().map(|m| m.key()).collect();
                format!(
                    "unknown load method '{}' (known: {})",
                    text.trim(),
                    known.join(", ")
                )
            })
    }
}

/// When secondary indexes are built: with the table (maintained row by row during the
/// load) or after it (one ALTER TABLE … ADD INDEX, a sort-based build on most engines).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum IndexTiming {
    Before,
    After,
}

/// A load method with its sizes.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LoadPlan {
    pub method: LoadMethod,
    /// COMMIT after this many rows (commit-every, multi-row).
    pub commit_every: u64,
    /// Rows per multi-row INSERT (capped by max_allowed_packet).
    pub rows_per_statement: u64,
    /// Rows per LOAD DATA chunk.
    pub chunk_rows: u64,
    /// Connections loading disjoint key ranges at once.
    pub parallel: u32,
    pub index_timing: IndexTiming,
    /// Tables loading side by side, each with `parallel` connections (the runner loads a
    /// study's tables together when its connections allow). Their times overlap, and the
    /// server's figures of each load cover the whole group.
    #[serde(default = "one_table", skip_serializing_if = "is_one_table")]
    pub tables_at_once: u32,
}

fn one_table() -> u32 {
    1
}

fn is_one_table(count: &u32) -> bool {
    *count == 1
}

impl LoadPlan {
    /// The default for preparing study data: the fastest method measured here (LOAD DATA,
    /// large chunks, two connections, indexes after). bench/prepare_vs_sysbench.sh, sbtest's
    /// 1,000,000 rows, 5 rounds: 100,000-row chunks over 2 connections 1.00x the floor,
    /// 250,000 x2 0.99x, one 1,000,000-row statement 1.01x, 10,000 x2 1.04x: all within
    /// the noise, so the smallest chunks of that group, which keep a commit (and what a
    /// Ctrl-C rolls back) to about 20 MB.
    pub fn fastest() -> LoadPlan {
        LoadPlan {
            method: LoadMethod::LoadData,
            commit_every: 1000,
            rows_per_statement: 1000,
            chunk_rows: 100_000,
            parallel: 2,
            index_timing: IndexTiming::After,
            tables_at_once: 1,
        }
    }

    /// A short label for tables: "load-data ×10000", "multi-row 100/1000 ×2".
    pub fn label(&self) -> String {
        let sizes = match self.method {
            LoadMethod::RowAutocommit => String::new(),
            LoadMethod::CommitEvery => format!(" commit/{}", self.commit_every),
            LoadMethod::MultiRow => format!(
                " {}/stmt commit/{}",
                self.rows_per_statement, self.commit_every
            ),
            LoadMethod::LoadData => format!(" {}/chunk", self.chunk_rows),
        };
        let parallel = if self.parallel > 1 {
            format!(" ×{}", self.parallel)
        } else {
            String::new()
        };
        let together = if self.tables_at_once > 1 {
            format!(", {} tables at once", self.tables_at_once)
        } else {
            String::new()
        };
        format!("{}{sizes}{parallel}{together}", self.method.key())
    }
}

/// One column value of a generated row.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// SQL NULL (`\N` in LOAD DATA).
    Null,
    Int(i64),
    Text(String),
}

/// Produces the rows of a table; `id` runs from 1 to the table's row count.
pub trait RowGenerator: Send + Sync {
    fn fill_row(&self, id: u64, rng: &mut SmallRng, row: &mut Vec<Value>);

    /// Whether every text this generator makes is ASCII. LOAD DATA then sends it as
    /// `CHARACTER SET binary`, which any column stores unconverted and which ASCII reads
    /// the same in every charset: the server's conversion from utf8mb4 costs about 30%
    /// of its ingest (sbtest's rows into latin1: 9.9 s vs 7.2 s, bench/prepare_vs_sysbench.sh
    /// conditions). Text that may not be ASCII is sent as utf8mb4 and converted.
    fn ascii_only(&self) -> bool {
        false
    }
}

/// The session statement that lets `engine` hold a table of `bytes`: MEMORY tables are
/// capped by max_heap_table_size when created or rebuilt (ALTER, CREATE INDEX); other
/// engines need nothing. At least 64 MiB, so small tables keep MariaDB's usual room.
pub fn memory_table_cap(engine: crate::engine::Engine, bytes: u64) -> Option<String> {
    (engine == crate::engine::Engine::Memory)
        .then(|| format!("SET SESSION max_heap_table_size = {}", bytes.max(64 << 20)))
}

/// A table to load: its DDL, its secondary indexes, its columns and how to make rows.
pub struct TableSpec {
    pub name: String,
    /// Session statements run before CREATE TABLE (e.g. MEMORY's max_heap_table_size,
    /// which caps a MEMORY table at creation).
    pub before_create: Vec<String>,
    /// CREATE TABLE without the secondary indexes, ENGINE included.
    pub create_sql: String,
    /// Index clauses for ALTER TABLE … ADD, e.g. "INDEX k_1 (k)".
    pub secondary_indexes: Vec<String>,
    pub columns: Vec<String>,
    pub rows: u64,
    pub seed: u64,
    pub generator: Box<dyn RowGenerator>,
}

/// What a load did.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LoadOutcome {
    pub rows: u64,
    /// Loading the rows (with indexes maintained, if built before).
    pub load_ms: f64,
    /// Building secondary indexes after the load (0 if before or none).
    pub index_ms: f64,
    /// Row data of the rows loaded (`rows`), as tab-separated text: the same measure for
    /// every method.
    pub data_bytes: u64,
    pub statements: u64,
    /// Stopped (Ctrl-C) before all of the table's rows were in: `rows` were committed, the
    /// indexes to build after were not, and the times are not the table's.
    #[serde(default)]
    pub interrupted: bool,
    /// The server's CPU and I/O over the load, when its process is ours to read.
    pub server_process: Option<ProcessDelta>,
}

impl LoadOutcome {
    pub fn total_ms(&self) -> f64 {
        self.load_ms + self.index_ms
    }
    pub fn rows_per_s(&self) -> f64 {
        self.rows as f64 / (self.total_ms() / 1000.0).max(1e-9)
    }
    pub fn mb_per_s(&self) -> f64 {
        self.data_bytes as f64 / (1024.0 * 1024.0) / (self.total_ms() / 1000.0).max(1e-9)
    }
}

/// Drops and creates `table`, loads it with `plan`, and builds its indexes when the plan
/// says so. `keep_going` is asked between chunks (Ctrl-C).
pub fn load_table(
    spec: &ConnectionSpec,
    table: &TableSpec,
    plan: &LoadPlan,
    server_pid: Option<u32>,
    keep_going: &(dyn Fn() -> bool + Sync),
) -> Result<LoadOutcome, LoadError> {
    let mut conn = spec
        .connect_own(Purpose::Setup)
        .map_err(|err| LoadError::setup(&table.name, err.to_string()))?;
    let setup = |err: mysql::Error| LoadError::ddl(&table.name, &err);
    for statement in &table.before_create {
        conn.query_drop(statement).map_err(setup)?;
    }
    conn.query_drop(format!("DROP TABLE IF EXISTS `{}`", table.name))
        .map_err(setup)?;
    conn.query_drop(&table.create_sql).map_err(setup)?;
    if plan.index_timing == IndexTiming::Before {
        for index in &table.secondary_indexes {
            conn.query_drop(format!("ALTER TABLE `{}` ADD {index}", table.name))
                .map_err(setup)?;
        }
    }
    let max_packet: u64 = conn
        .query_first("SELECT @@max_allowed_packet")
        .map_err(setup)?
        .unwrap_or(16 << 20);

    let process_before = server_pid.and_then(sample_process);
    let started = Instant::now();
    let parallel = plan.parallel.clamp(1, 64) as u64;
    let per_worker = table.rows.div_ceil(parallel);
    let ranges: Vec<(u64, u64)> = (0..parallel)
        .map(|w| (w * per_worker + 1, ((w + 1) * per_worker).min(table.rows)))
        .filter(|(first, last)| first <= last)
        .collect();
    let results = on_threads(
        &ranges,
        |_| table.name.clone(),
        |&(first, last)| load_range(spec, table, plan, first, last, max_packet, keep_going),
    );
    let mut totals = WorkerTotals::default();
    for result in results {
        match result {
            Ok(worker) => totals.add(&worker),
            Err(mut err) => {
                err.rows_in_table = count_rows(spec, &table.name);
                return Err(err);
            }
        }
    }
    let load_ms = started.elapsed().as_secs_f64() * 1000.0;

    let mut index_ms = 0.0;
    if plan.index_timing == IndexTiming::After
        && !table.secondary_indexes.is_empty()
        && keep_going()
    {
        let clauses: Vec<String> = table
            .secondary_indexes
            .iter()
            .map(|index| format!("ADD {index}"))
            .collect();
        let index_started = Instant::now();
        conn.query_drop(format!(
            "ALTER TABLE `{}` {}",
            table.name,
            clauses.join(", ")
        ))
        .map_err(|err| LoadError::index(&table.name, crate::server::describe_mysql_error(&err)))?;
        index_ms = index_started.elapsed().as_secs_f64() * 1000.0;
    }
    let process_after = server_pid.and_then(sample_process);
    Ok(LoadOutcome {
        interrupted: totals.rows < table.rows,
        rows: totals.rows,
        load_ms,
        index_ms,
        data_bytes: totals.data_bytes,
        statements: totals.statements,
        server_process: match (process_before, process_after) {
            (Some(before), Some(after)) => Some(after.delta_since(&before)),
            _ => None,
        },
    })
}

/// Loads `tables` side by side, one thread each, every one as `load_table` would alone;
/// their outcomes in order. The server's figures of each load cover the whole group.
pub fn load_tables(
    spec: &ConnectionSpec,
    tables: &[TableSpec],
    plan: &LoadPlan,
    server_pid: Option<u32>,
    keep_going: &(dyn Fn() -> bool + Sync),
) -> Vec<Result<LoadOutcome, LoadError>> {
    on_threads(
        tables,
        |table| table.name.clone(),
        |table| load_table(spec, table, plan, server_pid, keep_going),
    )
}

/// Runs `work` for each item on a scoped thread of its own; the results in order, a
/// panicking thread's as a load error of the table `table_of` names.
fn on_threads<I: Sync, T: Send>(
    items: &[I],
    table_of: impl Fn(&I) -> String,
    work: impl Fn(&I) -> Result<T, LoadError> + Sync,
) -> Vec<Result<T, LoadError>> {
    crate::fan_out::on_threads(items, work, |index| {
        Err(LoadError::setup(
            &table_of(&items[index]),
            "a load thread panicked".into(),
        ))
    })
}

#[derive(Default)]
struct WorkerTotals {
    rows: u64,
    data_bytes: u64,
    statements: u64,
}

impl WorkerTotals {
    fn add(&mut self, other: &WorkerTotals) {
        self.rows += other.rows;
        self.data_bytes += other.data_bytes;
        self.statements += other.statements;
    }
}

fn count_rows(spec: &ConnectionSpec, table: &str) -> Option<u64> {
    let mut conn = spec.connect_own(Purpose::Setup).ok()?;
    conn.query_first(format!("SELECT COUNT(*) FROM `{table}`"))
        .ok()
        .flatten()
}
