//! Disk footprint of a table: bytes from the files themselves (.MYD/.MYI, .MAD/.MAI, .ibd,
//! RocksDB's shared SST directory) and from information_schema, as S1's authors listed them.

use crate::server::OwnConn as Conn;
use mysql::prelude::Queryable;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

use crate::engine::Engine;

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FootprintRecord {
    /// When it was taken: "after_load" or "after_run".
    pub moment: String,
    pub engine: Engine,
    /// The server profile of a footprint after the run (the runner sets it; one after a
    /// load is in the load's record, which has the profile).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    pub table: String,
    /// information_schema.TABLES.TABLE_ROWS (exact for MyISAM/Aria, an estimate otherwise).
    pub rows: u64,
    pub data_bytes: u64,
    pub index_bytes: u64,
    pub free_bytes: u64,
    /// File sizes by extension (`MYD`, `ibd`, …); RocksDB's are the shared `#rocksdb`
    /// directory of all RocksDB tables. Empty when the datadir is not local.
    pub files: BTreeMap<String, u64>,
    /// Bytes of a row as the workload sees it (numbers at their type's size, strings at
    /// their length), averaged over up to `LOGICAL_SAMPLE_ROWS` rows: the denominator of
    /// space and write amplification. None when the table could not be sampled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logical_row_bytes: Option<f64>,
}

impl FootprintRecord {
    pub fn files_total_bytes(&self) -> u64 {
        self.files.values().sum()
    }
}

/// Flushes what the engine holds in memory (so file sizes are current), refreshes the
/// statistics information_schema reports, then measures.
pub fn measure_footprint(
    conn: &mut Conn,
    database: &str,
    table: &str,
    engine: Engine,
    datadir: Option<&Path>,
    moment: &str,
) -> Result<FootprintRecord, mysql::Error> {
    // Best effort: on an external server these need RELOAD or SUPER, which a benchmark
    // user may lack; the sizes are then as current as the engine has made them.
    let _ = conn.query_drop(format!("FLUSH TABLES `{database}`.`{table}`"));
    match engine {
        Engine::InnoDb => {
            let _ = conn.query_drop(format!("ANALYZE TABLE `{database}`.`{table}`"));
        }
        Engine::RocksDb => {
            let _ = conn.query_drop("SET GLOBAL rocksdb_force_flush_memtable_now = 1");
            let _ = conn.query_drop(format!("ANALYZE TABLE `{database}`.`{table}`"));
        }
        _ => {}
    }
    // TABLE_ROWS, DATA_LENGTH, INDEX_LENGTH, DATA_FREE (NULL for some engines).
    type SizeRow = (Option<u64>, Option<u64>, Option<u64>, Option<u64>);
    let row: Option<SizeRow> = conn.exec_first(
        "SELECT TABLE_ROWS, DATA_LENGTH, INDEX_LENGTH, DATA_FREE FROM information_schema.TABLES \
         WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?",
        (database, table),
    )?;
    let (rows, data_bytes, index_bytes, free_bytes) = row.unwrap_or_default();
    let mut files = BTreeMap::new();
    if let Some(datadir) = datadir {
        if engine == Engine::RocksDb {
            files.insert(
                "#rocksdb (shared)".to_string(),
                directory_bytes(&datadir.join("#rocksdb")),
            );
        } else if let Ok(entries) = std::fs::read_dir(datadir.join(database)) {
            let prefix = format!("{table}.");
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                if let Some(extension) = name.strip_prefix(&prefix) {
                    let size = entry.metadata().map(|m| m.len()).unwrap_or(0);
                    *files.entry(extension.to_string()).or_insert(0) += size;
                }
            }
        }
    }
    Ok(FootprintRecord {
        moment: moment.to_string(),
        engine,
        profile: None,
        table: table.to_string(),
        rows: rows.unwrap_or(0),
        data_bytes: data_bytes.unwrap_or(0),
        index_bytes: index_bytes.unwrap_or(0),
        free_bytes: free_bytes.unwrap_or(0),
        files,
        logical_row_bytes: logical_row_bytes(conn, database, table),
    })
}

/// How many rows the logical row size is averaged over: enough for a stable mean of
/// generated strings, few enough to cost milliseconds on any table.
pub const LOGICAL_SAMPLE_ROWS: u32 = 1000;

/// The average logical size of a row: each column at what it holds (an INT 4 bytes, a
/// string its length), whatever the engine stores around it (headers, pages, compression).
fn logical_row_bytes(conn: &mut Conn, database: &str, table: &str) -> Option<f64> {
    let columns: Vec<(String, String)> = conn
        .exec(
            "SELECT COLUMN_NAME, DATA_TYPE FROM information_schema.COLUMNS \
             WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? ORDER BY ORDINAL_POSITION",
            (database, table),
        )
        .ok()?;
    if columns.is_empty() {
        return None;
    }
    let terms: Vec<String> = columns
        .iter()
        .map(|(name, data_type)| match fixed_bytes(data_type) {
            Some(bytes) => bytes.to_string(),
            None => format!("COALESCE(LENGTH(`{}`), 0)", name.replace('`', "``")),
        })
        .collect();
    let sql = format!(
        "SELECT AVG({}) FROM (SELECT * FROM `{database}`.`{table}` LIMIT {LOGICAL_SAMPLE_ROWS}) AS sample",
        terms.join(" + ")
    );
    conn.query_first::<Option<f64>, _>(sql)
        .ok()
        .flatten()
        .flatten()
}

/// The size of a column of a fixed-size type, as the row holds it.
fn fixed_bytes(data_type: &str) -> Option<u32> {
    Some(match data_type.to_ascii_lowercase().as_str() {
        "tinyint" | "bool" | "boolean" | "year" => 1,
        "smallint" => 2,
        "mediumint" | "date" | "time" => 3,
        "int" | "integer" | "float" | "timestamp" => 4,
        "bigint" | "double" | "real" | "datetime" => 8,
        "decimal" | "numeric" => 8,
        _ => return None,
    })
}

pub fn directory_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|entry| match entry.metadata() {
                    Ok(meta) if meta.is_dir() => directory_bytes(&entry.path()),
                    Ok(meta) => meta.len(),
                    Err(_) => 0,
                })
                .sum()
        })
        .unwrap_or(0)
}
