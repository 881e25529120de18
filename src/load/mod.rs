//! Load methods: the ways a client can fill a table (study S4 found a 70× spread between
//! them), and the fast default enginebench uses to prepare every study's data.
//!
//! Rows are generated per chunk from an RNG seeded by the chunk's first id, so the same
//! table is loaded whatever the method or the number of parallel connections.

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
use crate::server::ConnectionSpec;
use sql_text::{push_sql_literal, push_tsv_field};

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
        .connect()
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

/// Rows are made in chunks of this many ids, each from its own seeded RNG, so that every
/// method and every degree of parallelism produces the same table.
const GENERATION_CHUNK: u64 = 1000;

/// Rows per block handed from LOAD DATA's generator thread to its connection (about 1.6
/// MiB of sbtest rows): small enough to keep a few blocks ahead in little memory.
const GENERATION_BLOCK_ROWS: u64 = 8192;
/// Blocks the generator may be ahead of the connection.
const GENERATED_AHEAD: usize = 3;

/// Generates rows first..=last into `sink`, one row at a time.
struct RowStream<'a> {
    table: &'a TableSpec,
    next_id: u64,
    last: u64,
    rng: SmallRng,
    row: Vec<Value>,
}

impl<'a> RowStream<'a> {
    fn new(table: &'a TableSpec, first: u64, last: u64) -> Self {
        let chunk_start = (first - 1) / GENERATION_CHUNK * GENERATION_CHUNK + 1;
        let mut stream = RowStream {
            table,
            next_id: chunk_start,
            last,
            rng: SmallRng::seed_from_u64(table.seed ^ chunk_start),
            row: Vec::with_capacity(table.columns.len()),
        };
        // Advance to `first` within its generation chunk, so ranges line up exactly.
        while stream.next_id < first {
            stream.next();
        }
        stream
    }

    /// The next row's id, with its values in `self.row`.
    fn next(&mut self) -> Option<u64> {
        if self.next_id > self.last {
            return None;
        }
        let id = self.next_id;
        if (id - 1).is_multiple_of(GENERATION_CHUNK) {
            self.rng = SmallRng::seed_from_u64(self.table.seed ^ id);
        }
        self.row.clear();
        self.table
            .generator
            .fill_row(id, &mut self.rng, &mut self.row);
        self.next_id += 1;
        Some(id)
    }
}

// Long by design: one range of rows loaded by one method, its chunks, retries and progress together.
#[allow(clippy::too_many_lines)]
fn load_range(
    spec: &ConnectionSpec,
    table: &TableSpec,
    plan: &LoadPlan,
    first: u64,
    last: u64,
    max_packet: u64,
    keep_going: &(dyn Fn() -> bool + Sync),
) -> Result<WorkerTotals, LoadError> {
    let mut conn = spec
        .connect()
        .map_err(|err| LoadError::setup(&table.name, err.to_string()))?;
    let mut rows = RowStream::new(table, first, last);
    let mut totals = WorkerTotals::default();
    let columns = table
        .columns
        .iter()
        .map(|c| format!("`{c}`"))
        .collect::<Vec<_>>()
        .join(", ");
    let mut tsv = Vec::new();
    let chunk_error =
        |from: u64, to: u64, err: mysql::Error| LoadError::chunk(&table.name, from, to, &err);
    match plan.method {
        LoadMethod::RowAutocommit | LoadMethod::CommitEvery => {
            let placeholders = vec!["?"; table.columns.len()].join(", ");
            let insert = conn
                .prep(format!(
                    "INSERT INTO `{}` ({columns}) VALUES ({placeholders})",
                    table.name
                ))
                .map_err(|err| {
                    LoadError::setup(&table.name, crate::server::describe_mysql_error(&err))
                })?;
            let batch = if plan.method == LoadMethod::CommitEvery {
                plan.commit_every.max(1)
            } else {
                1
            };
            let mut batch_first = first;
            while batch_first <= last {
                if !keep_going() {
                    break;
                }
                let batch_last = (batch_first + batch - 1).min(last);
                let transactional = plan.method == LoadMethod::CommitEvery;
                if transactional {
                    conn.query_drop("START TRANSACTION")
                        .map_err(|e| chunk_error(batch_first, batch_last, e))?;
                }
                for _ in batch_first..=batch_last {
                    rows.next();
                    let params: Vec<mysql::Value> = rows.row.iter().map(to_mysql_value).collect();
                    tsv.clear();
                    push_tsv_row(&mut tsv, &rows.row);
                    totals.data_bytes += tsv.len() as u64;
                    conn.exec_drop(&insert, params)
                        .map_err(|e| chunk_error(batch_first, batch_last, e))?;
                    totals.statements += 1;
                    totals.rows += 1;
                }
                if transactional {
                    conn.query_drop("COMMIT")
                        .map_err(|e| chunk_error(batch_first, batch_last, e))?;
                }
                batch_first = batch_last + 1;
            }
        }
        LoadMethod::MultiRow => {
            let head = format!("INSERT INTO `{}` ({columns}) VALUES ", table.name);
            // Leave room for the packet header and the last row that crosses the line.
            let max_statement = (max_packet as usize)
                .saturating_sub(64 * 1024)
                .max(16 * 1024);
            let mut sql =
                String::with_capacity(head.len() + 256 * plan.rows_per_statement as usize);
            let commit_every = plan.commit_every.max(1);
            let mut in_transaction = false;
            let mut rows_since_commit = 0;
            let mut statement_first = first;
            let mut statement_rows = 0;
            while let Some(id) = rows.next() {
                if statement_rows == 0 {
                    if !keep_going() {
                        break;
                    }
                    if !in_transaction {
                        conn.query_drop("START TRANSACTION")
                            .map_err(|e| chunk_error(id, id, e))?;
                        in_transaction = true;
                    }
                    sql.clear();
                    sql.push_str(&head);
                    statement_first = id;
                } else {
                    sql.push(',');
                }
                sql.push('(');
                for (index, value) in rows.row.iter().enumerate() {
                    if index > 0 {
                        sql.push(',');
                    }
                    push_sql_literal(&mut sql, value);
                }
                sql.push(')');
                tsv.clear();
                push_tsv_row(&mut tsv, &rows.row);
                totals.data_bytes += tsv.len() as u64;
                statement_rows += 1;
                rows_since_commit += 1;
                let full =
                    statement_rows >= plan.rows_per_statement.max(1) || sql.len() >= max_statement;
                if full || id == last {
                    conn.query_drop(&sql)
                        .map_err(|e| chunk_error(statement_first, id, e))?;
                    totals.statements += 1;
                    totals.rows += statement_rows;
                    statement_rows = 0;
                    if rows_since_commit >= commit_every || id == last {
                        conn.query_drop("COMMIT")
                            .map_err(|e| chunk_error(statement_first, id, e))?;
                        in_transaction = false;
                        rows_since_commit = 0;
                    }
                }
            }
            if in_transaction {
                conn.query_drop("COMMIT")
                    .map_err(|e| chunk_error(statement_first, last, e))?;
            }
        }
        LoadMethod::LoadData => {
            // Rows are generated on a thread of their own, a few blocks ahead, and the
            // server pulls them through LOAD DATA's file request: the connection never waits
            // for the generator, and one statement may span many blocks, so what the server
            // ingests sets the pace, as when its own client reads a file (the floor). The
            // generator sends a statement's blocks, then `None` where its rows end.
            let (ready_tx, ready_rx) =
                std::sync::mpsc::sync_channel::<Option<Vec<u8>>>(GENERATED_AHEAD);
            let (spent_tx, spent_rx) = std::sync::mpsc::channel::<Vec<u8>>();
            let ready_rx = Arc::new(Mutex::new(ready_rx));
            // Bytes the statement in flight has sent: counted once it commits, as its rows.
            let statement_bytes = Arc::new(std::sync::atomic::AtomicU64::new(0));
            {
                let ready_rx = Arc::clone(&ready_rx);
                let statement_bytes = Arc::clone(&statement_bytes);
                conn.set_local_infile_handler(Some(LocalInfileHandler::new(move |_, stream| {
                    let ready_rx = ready_rx.lock().unwrap_or_else(|p| p.into_inner());
                    loop {
                        // Nothing more: the generator stopped (Ctrl-C); the statement fails
                        // and the caller sees why.
                        let block = ready_rx.recv().map_err(|_| {
                            std::io::Error::new(std::io::ErrorKind::Interrupted, "load stopped")
                        })?;
                        let Some(bytes) = block else {
                            return stream.flush();
                        };
                        stream.write_all(&bytes)?;
                        statement_bytes
                            .fetch_add(bytes.len() as u64, std::sync::atomic::Ordering::Relaxed);
                        let _ = spent_tx.send(bytes);
                    }
                })));
            }
            let charset = if table.generator.ascii_only() {
                "binary"
            } else {
                "utf8mb4"
            };
            let statement = format!(
                "LOAD DATA LOCAL INFILE 'enginebench-chunk' INTO TABLE `{}` CHARACTER SET {charset} \
                 FIELDS TERMINATED BY '\\t' ESCAPED BY '\\\\' LINES TERMINATED BY '\\n' ({columns})",
                table.name
            );
            let chunk_rows = plan.chunk_rows.max(1);
            let block_rows = chunk_rows.min(GENERATION_BLOCK_ROWS);
            std::thread::scope(|scope| {
                scope.spawn(move || {
                    let mut chunk_first = first;
                    'chunks: while chunk_first <= last {
                        let chunk_last = (chunk_first + chunk_rows - 1).min(last);
                        let mut block_first = chunk_first;
                        while block_first <= chunk_last {
                            if !keep_going() {
                                break 'chunks;
                            }
                            let block_last = (block_first + block_rows - 1).min(chunk_last);
                            let mut bytes = spent_rx.try_recv().unwrap_or_default();
                            bytes.clear();
                            for _ in block_first..=block_last {
                                rows.next();
                                push_tsv_row(&mut bytes, &rows.row);
                            }
                            if ready_tx.send(Some(bytes)).is_err() {
                                // The sender stopped (an error).
                                break 'chunks;
                            }
                            block_first = block_last + 1;
                        }
                        if ready_tx.send(None).is_err() {
                            break;
                        }
                        chunk_first = chunk_last + 1;
                    }
                });
                let result = (|| {
                    let mut chunk_first = first;
                    while chunk_first <= last {
                        if !keep_going() {
                            break;
                        }
                        let chunk_last = (chunk_first + chunk_rows - 1).min(last);
                        // Autocommit is on: each LOAD DATA commits its own chunk.
                        if let Err(err) = conn.query_drop(&statement) {
                            if !keep_going() {
                                break;
                            }
                            return Err(chunk_error(chunk_first, chunk_last, err));
                        }
                        totals.statements += 1;
                        totals.rows += chunk_last - chunk_first + 1;
                        totals.data_bytes +=
                            statement_bytes.swap(0, std::sync::atomic::Ordering::Relaxed);
                        chunk_first = chunk_last + 1;
                    }
                    Ok(())
                })();
                // Whatever happened, the generator must not wait on a full channel: its
                // receiver is dropped (swapped for one with no sender), so its send fails.
                *ready_rx.lock().unwrap_or_else(|p| p.into_inner()) =
                    std::sync::mpsc::sync_channel(0).1;
                result
            })?;
        }
    }
    Ok(totals)
}

fn push_tsv_row(out: &mut Vec<u8>, row: &[Value]) {
    for (index, value) in row.iter().enumerate() {
        if index > 0 {
            out.push(b'\t');
        }
        push_tsv_field(out, value);
    }
    out.push(b'\n');
}

fn to_mysql_value(value: &Value) -> mysql::Value {
    match value {
        Value::Null => mysql::Value::NULL,
        Value::Int(number) => mysql::Value::Int(*number),
        Value::Text(text) => mysql::Value::Bytes(text.as_bytes().to_vec()),
    }
}

fn count_rows(spec: &ConnectionSpec, table: &str) -> Option<u64> {
    let mut conn = spec.connect().ok()?;
    conn.query_first(format!("SELECT COUNT(*) FROM `{table}`"))
        .ok()
        .flatten()
}
