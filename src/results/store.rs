//! The result store: every run appended to a SQLite database (`./enginebench.db` unless
//! `--db` says otherwise), saved again after every step and cell, so a run stopped midway
//! keeps every finished cell. A row per run holds the whole record (what reports read);
//! rows per cell, load and sequence hold the figures for queries of your own:
//!
//! ```sql
//! SELECT phase, engine, threads, AVG(events_per_s) FROM cells WHERE run_id = 3 GROUP BY 1, 2, 3;
//! ```

use rusqlite::{params, Connection, OptionalExtension};
use std::cell::Cell;
use std::path::{Path, PathBuf};

use super::{parse_record, RunRecord};

/// Bumped when a table changes shape; older stores are refused with the fix.
const STORE_VERSION: i64 = 1;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY,
    study TEXT NOT NULL,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    status TEXT NOT NULL,
    tool_version TEXT NOT NULL,
    git_hash TEXT,
    server_version TEXT,
    scenario_text TEXT,
    parameters TEXT NOT NULL,
    environment TEXT,
    record TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS cells (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    idx INTEGER NOT NULL,
    phase TEXT NOT NULL,
    engine TEXT NOT NULL,
    profile TEXT,
    threads INTEGER NOT NULL,
    repeat INTEGER NOT NULL,
    outcome TEXT NOT NULL,
    events INTEGER NOT NULL,
    events_per_s REAL NOT NULL,
    wall_ms REAL NOT NULL,
    p50_us INTEGER,
    p95_us INTEGER,
    p99_us INTEGER,
    record TEXT NOT NULL,
    PRIMARY KEY (run_id, idx)
);
CREATE TABLE IF NOT EXISTS loads (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    idx INTEGER NOT NULL,
    phase TEXT,
    table_name TEXT NOT NULL,
    engine TEXT NOT NULL,
    profile TEXT,
    method TEXT NOT NULL,
    repeat INTEGER NOT NULL,
    rows INTEGER,
    seconds REAL,
    error TEXT,
    PRIMARY KEY (run_id, idx)
);
CREATE TABLE IF NOT EXISTS sequences (
    run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    idx INTEGER NOT NULL,
    phase TEXT NOT NULL,
    engine TEXT NOT NULL,
    profile TEXT,
    run INTEGER NOT NULL,
    discarded INTEGER NOT NULL,
    total_ms REAL NOT NULL,
    error TEXT,
    record TEXT NOT NULL,
    PRIMARY KEY (run_id, idx)
);
";

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("cannot open the result store {path}: {cause}; pass --db PATH (or --no-db to run without one)")]
    Open { path: PathBuf, cause: String },
    #[error("the result store {path} was written by a newer enginebench (store version {found}, this one reads {STORE_VERSION}): upgrade, or pass another --db")]
    Newer { path: PathBuf, found: i64 },
    #[error("result store {path}: {cause}")]
    Query { path: PathBuf, cause: String },
    #[error("no run {wanted} in {path}: `enginebench runs` lists the stored runs")]
    NoSuchRun { path: PathBuf, wanted: String },
}

/// One stored run, as `enginebench runs` lists it.
#[derive(Debug, Clone)]
pub struct StoredRun {
    pub id: i64,
    pub study: String,
    pub started_at: String,
    pub status: String,
    pub server_version: Option<String>,
    pub cells: i64,
    pub loads: i64,
}

pub struct Store {
    conn: Connection,
    path: PathBuf,
    /// The run this process appends to, once it has a row.
    run_id: Cell<Option<i64>>,
}

impl Store {
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        let open_error = |cause: String| StoreError::Open {
            path: path.to_path_buf(),
            cause,
        };
        let conn = Connection::open(path).map_err(|e| open_error(e.to_string()))?;
        // Two runs may share a store; the second waits for the first's write.
        conn.busy_timeout(std::time::Duration::from_secs(10))
            .map_err(|e| open_error(e.to_string()))?;
        conn.execute_batch("PRAGMA foreign_keys = ON;")
            .map_err(|e| open_error(e.to_string()))?;
        conn.execute_batch(SCHEMA)
            .map_err(|e| open_error(e.to_string()))?;
        let found: Option<String> = conn
            .query_row(
                "SELECT value FROM meta WHERE key = 'store_version'",
                [],
                |row| row.get(0),
            )
            .optional()
            .map_err(|e| open_error(e.to_string()))?;
        match found.and_then(|v| v.parse::<i64>().ok()) {
            Some(version) if version > STORE_VERSION => {
                return Err(StoreError::Newer {
                    path: path.to_path_buf(),
                    found: version,
                })
            }
            Some(_) => {}
            None => {
                conn.execute(
                    "INSERT OR REPLACE INTO meta (key, value) VALUES ('store_version', ?1)",
                    [STORE_VERSION.to_string()],
                )
                .map_err(|e| open_error(e.to_string()))?;
            }
        }
        Ok(Store {
            conn,
            path: path.to_path_buf(),
            run_id: Cell::new(None),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Saves into stored run `run_id` from now on (a run this process continues: `tune
    /// --resume`), its row replaced and the record's cells beyond the stored appended.
    pub fn continue_run(&self, run_id: i64) {
        self.run_id.set(Some(run_id));
    }

    /// The id of the run this process is storing, once the first save gave it one.
    pub fn run_id(&self) -> Option<i64> {
        self.run_id.get()
    }

    fn query_error(&self, err: impl std::fmt::Display) -> StoreError {
        StoreError::Query {
            path: self.path.clone(),
            cause: err.to_string(),
        }
    }

    /// Takes this process's run out of the store again (a run that failed before it
    /// measured anything: its row would only list an empty run among the others).
    pub fn discard(&self) -> Result<(), StoreError> {
        let Some(id) = self.run_id.take() else {
            return Ok(());
        };
        let transaction = self
            .conn
            .unchecked_transaction()
            .map_err(|e| self.query_error(e))?;
        for table in ["cells", "loads", "sequences", "runs"] {
            let column = if table == "runs" { "id" } else { "run_id" };
            transaction
                .execute(&format!("DELETE FROM {table} WHERE {column} = ?1"), [id])
                .map_err(|e| self.query_error(e))?;
        }
        transaction.commit().map_err(|e| self.query_error(e))
    }

    /// Saves the record as it stands: the run row replaced, cells, loads and sequences not
    /// yet stored appended. One transaction, so a reader never sees half a save.
    pub fn save(&self, record: &RunRecord) -> Result<i64, StoreError> {
        let transaction = self
            .conn
            .unchecked_transaction()
            .map_err(|e| self.query_error(e))?;
        let run_id = self.save_run_row(&transaction, record)?;
        self.append_cells(&transaction, run_id, record)?;
        self.append_loads(&transaction, run_id, record)?;
        self.append_sequences(&transaction, run_id, record)?;
        transaction.commit().map_err(|e| self.query_error(e))?;
        self.run_id.set(Some(run_id));
        Ok(run_id)
    }

    /// The run's row: inserted on the first save, its ending and record replaced after.
    fn save_run_row(
        &self,
        transaction: &rusqlite::Transaction<'_>,
        record: &RunRecord,
    ) -> Result<i64, StoreError> {
        let record_json = serde_json::to_string(record).map_err(|e| self.query_error(e))?;
        let parameters =
            serde_json::to_string(&record.parameters).map_err(|e| self.query_error(e))?;
        let environment = record
            .environment
            .as_ref()
            .map(|e| serde_json::to_string(e).unwrap_or_default());
        let scenario_text = super::migrate::scenario_text(&record.parameters);
        let status = serde_name(&record.status);
        let server_version = record.server.as_ref().map(|s| s.version.clone());
        let git_hash = record.environment.as_ref().map(|e| e.git_hash.clone());
        Ok(match self.run_id.get() {
            Some(id) => {
                transaction
                    .execute(
                        "UPDATE runs SET finished_at = ?2, status = ?3, server_version = ?4, environment = ?5, record = ?6 WHERE id = ?1",
                        params![id, record.finished_at, status, server_version, environment, record_json],
                    )
                    .map_err(|e| self.query_error(e))?;
                id
            }
            None => {
                transaction
                    .execute(
                        "INSERT INTO runs (study, started_at, finished_at, status, tool_version, git_hash, server_version, scenario_text, parameters, environment, record) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
                        params![
                            record.study,
                            record.started_at,
                            record.finished_at,
                            status,
                            record.tool.version,
                            git_hash,
                            server_version,
                            scenario_text,
                            parameters,
                            environment,
                            record_json
                        ],
                    )
                    .map_err(|e| self.query_error(e))?;
                transaction.last_insert_rowid()
            }
        })
    }

    /// Of a record's `items`, those `table` does not hold yet for the run (it holds the
    /// first ones: saves append), each with its index.
    fn unstored<'i, T>(
        &self,
        transaction: &rusqlite::Transaction<'_>,
        table: &str,
        run_id: i64,
        items: &'i [T],
    ) -> Result<impl Iterator<Item = (i64, &'i T)>, StoreError> {
        let stored = transaction
            .query_row(
                &format!("SELECT COUNT(*) FROM {table} WHERE run_id = ?1"),
                [run_id],
                |row| row.get::<_, i64>(0),
            )
            .map_err(|e| self.query_error(e))?;
        Ok(items
            .iter()
            .enumerate()
            .skip(stored as usize)
            .map(|(idx, item)| (idx as i64, item)))
    }

    /// One row of a record's part, inserted.
    fn insert(
        &self,
        transaction: &rusqlite::Transaction<'_>,
        sql: &str,
        params: &[&dyn rusqlite::ToSql],
    ) -> Result<(), StoreError> {
        transaction
            .execute(sql, params)
            .map(drop)
            .map_err(|e| self.query_error(e))
    }

    /// The cells not stored yet, a row each.
    fn append_cells(
        &self,
        transaction: &rusqlite::Transaction<'_>,
        run_id: i64,
        record: &RunRecord,
    ) -> Result<(), StoreError> {
        for (idx, cell) in self.unstored(transaction, "cells", run_id, &record.cells)? {
            let latency = cell.event_latency_us;
            self.insert(
                transaction,
                "INSERT INTO cells (run_id, idx, phase, engine, profile, threads, repeat, outcome, events, events_per_s, wall_ms, p50_us, p95_us, p99_us, record) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
                params![
                    run_id,
                    idx,
                    cell.variant,
                    cell.engine.key(),
                    cell.profile,
                    cell.threads,
                    cell.repeat,
                    serde_name(&cell.outcome),
                    cell.events as i64,
                    cell.events_per_s,
                    cell.wall_ms,
                    latency.p50_us as i64,
                    latency.p95_us as i64,
                    latency.p99_us as i64,
                    serde_json::to_string(cell).map_err(|e| self.query_error(e))?
                ],
            )?;
        }
        Ok(())
    }

    /// The loads not stored yet, a row each.
    fn append_loads(
        &self,
        transaction: &rusqlite::Transaction<'_>,
        run_id: i64,
        record: &RunRecord,
    ) -> Result<(), StoreError> {
        for (idx, load) in self.unstored(transaction, "loads", run_id, &record.loads)? {
            self.insert(
                transaction,
                "INSERT INTO loads (run_id, idx, phase, table_name, engine, profile, method, repeat, rows, seconds, error) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
                params![
                    run_id,
                    idx,
                    load.phase,
                    load.table,
                    load.engine.key(),
                    load.profile,
                    load.label,
                    load.repeat,
                    load.outcome.as_ref().map(|o| o.rows as i64),
                    load.outcome.as_ref().map(|o| o.total_ms() / 1000.0),
                    load.error
                ],
            )?;
        }
        Ok(())
    }

    /// The sequences not stored yet, a row each.
    fn append_sequences(
        &self,
        transaction: &rusqlite::Transaction<'_>,
        run_id: i64,
        record: &RunRecord,
    ) -> Result<(), StoreError> {
        for (idx, sequence) in self.unstored(transaction, "sequences", run_id, &record.sequences)? {
            self.insert(
                transaction,
                "INSERT INTO sequences (run_id, idx, phase, engine, profile, run, discarded, total_ms, error, record) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                params![
                    run_id,
                    idx,
                    sequence.phase,
                    sequence.engine.key(),
                    sequence.profile,
                    sequence.run,
                    sequence.discarded,
                    sequence.total_ms,
                    sequence.error,
                    serde_json::to_string(sequence).map_err(|e| self.query_error(e))?
                ],
            )?;
        }
        Ok(())
    }

    /// Stored runs, oldest first.
    pub fn runs(&self) -> Result<Vec<StoredRun>, StoreError> {
        let mut statement = self
            .conn
            .prepare(
                "SELECT r.id, r.study, r.started_at, r.status, r.server_version,
                        (SELECT COUNT(*) FROM cells c WHERE c.run_id = r.id),
                        (SELECT COUNT(*) FROM loads l WHERE l.run_id = r.id)
                 FROM runs r ORDER BY r.id",
            )
            .map_err(|e| self.query_error(e))?;
        let rows = statement
            .query_map([], |row| {
                Ok(StoredRun {
                    id: row.get(0)?,
                    study: row.get(1)?,
                    started_at: row.get(2)?,
                    status: row.get(3)?,
                    server_version: row.get(4)?,
                    cells: row.get(5)?,
                    loads: row.get(6)?,
                })
            })
            .map_err(|e| self.query_error(e))?;
        rows.collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.query_error(e))
    }

    /// A run by id, or `latest` (also `last`), or `-N` for the N-th latest.
    pub fn resolve(&self, wanted: &str) -> Result<i64, StoreError> {
        let not_found = || StoreError::NoSuchRun {
            path: self.path.clone(),
            wanted: wanted.to_string(),
        };
        let ids: Vec<i64> = self.runs()?.iter().map(|r| r.id).collect();
        let found = match wanted {
            "latest" | "last" => ids.last().copied(),
            text if text.starts_with('-') => text[1..]
                .parse::<usize>()
                .ok()
                .filter(|n| *n >= 1 && *n <= ids.len())
                .map(|n| ids[ids.len() - n]),
            text => text.parse::<i64>().ok().filter(|id| ids.contains(id)),
        };
        found.ok_or_else(not_found)
    }

    /// The stored record of a run, upgraded to the current schema if an older enginebench
    /// stored it.
    pub fn record(&self, run_id: i64) -> Result<RunRecord, StoreError> {
        let text: String = self
            .conn
            .query_row("SELECT record FROM runs WHERE id = ?1", [run_id], |row| {
                row.get(0)
            })
            .optional()
            .map_err(|e| self.query_error(e))?
            .ok_or_else(|| StoreError::NoSuchRun {
                path: self.path.clone(),
                wanted: run_id.to_string(),
            })?;
        parse_record(&text, &format!("{} run {run_id}", self.path.display()))
            .map_err(|e| self.query_error(e))
    }
}

/// An enum's name as the JSON record spells it ("completed", "interrupted").
fn serde_name(value: &impl serde::Serialize) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}
