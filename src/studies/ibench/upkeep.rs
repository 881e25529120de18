//! The kind's own steps between its cells, each recorded as a step of the run:
//! - the clients' tables made afresh and empty in the engine's own database;
//! - ibench's write-debt reduction between the write and the query steps (iq.sh's
//!   `vac_my`), done cheaply: ANALYZE TABLE on each table as ibench does, then on InnoDB
//!   the buffer pool's dirty pages flushed (ibench lowers `innodb_max_dirty_pages_pct`;
//!   here to 0, with `innodb_io_capacity` at its max, until no page is dirty and purge
//!   has caught up, then both restored), on RocksDB
//!   the memtable flushed and L0 compacted (`rocksdb_force_flush_memtable_now`,
//!   `rocksdb_compact_lzero_now` where the server has it), on others FLUSH TABLES; each
//!   wait bounded by [`DEBT_WAIT_MAX`], then a short idle ([`DEBT_IDLE`]) where ibench
//!   sleeps 60 s + 1 s per million rows;
//! - the database's size after each step: the files of the engine's database directory
//!   (with RocksDB's shared `#rocksdb` directory, WAL included), as ibench's `dbgb` is
//!   what `du` says; on a server whose datadir is not on this machine, what
//!   information_schema.TABLES says.
//!
//! Owns: those steps and the size step's record (written and read back here). Must not
//! know the plan's order, the driver or the report's wording.

use std::time::{Duration, Instant};

use anyhow::Context;
use mysql::prelude::Queryable;

use super::statements::{create_table, table_name};
use crate::engine::Engine;
use crate::plan::StepHost;
use crate::server::OwnConn;
use crate::results::StepRecord;

/// The longest the write-debt reduction waits for dirty pages, purge or compaction.
pub const DEBT_WAIT_MAX: Duration = Duration::from_secs(30);
/// The idle after it.
pub const DEBT_IDLE: Duration = Duration::from_secs(1);

/// The name of the size steps in the record.
pub const SIZE_STEP: &str = "ibench size";
pub const DEBT_STEP: &str = "ibench reduce write debt";
pub const TABLES_STEP: &str = "ibench create tables";

fn elapsed_ms(started: Instant) -> f64 {
    started.elapsed().as_secs_f64() * 1000.0
}

/// Each of `clients` tables made afresh and empty in `database`.
pub fn create_tables(
    clients: u32,
    engine: Engine,
    database: &str,
    host: &mut dyn StepHost,
) -> anyhow::Result<()> {
    let started = Instant::now();
    let tables: Vec<String> = (0..clients as usize).map(table_name).collect();
    let owned: Vec<&str> = tables.iter().map(String::as_str).collect();
    host.fresh_database(database, &owned)?;
    let mut conn = host.connect(database)?;
    for table in &tables {
        conn.query_drop(format!("DROP TABLE IF EXISTS {table}"))?;
        let ddl = create_table(table, engine);
        conn.query_drop(&ddl)
            .with_context(|| format!("creating ibench's table on {engine}: {ddl}"))?;
    }
    host.record_step(StepRecord {
        name: TABLES_STEP.into(),
        engine: Some(engine),
        profile: None,
        detail: format!(
            "{} ({} empty, ENGINE={}) in {database}",
            owned.join(", "),
            if clients == 1 { "made" } else { "each made" },
            engine.sql_name()
        ),
        elapsed_ms: elapsed_ms(started),
        rows: Some(0),
        error: None,
    })
}

/// A global status counter, if the server has it.
fn status(conn: &mut OwnConn, name: &str) -> Option<i64> {
    let row: Option<(String, String)> = conn
        .query_first(format!("SHOW GLOBAL STATUS LIKE '{name}'"))
        .ok()
        .flatten();
    row.and_then(|(_, value)| value.parse().ok())
}

/// Polls `done` every 100 ms until it holds or `DEBT_WAIT_MAX` passes; whether it held.
fn wait_for(conn: &mut OwnConn, mut done: impl FnMut(&mut OwnConn) -> bool) -> bool {
    let started = Instant::now();
    loop {
        if done(conn) {
            return true;
        }
        if started.elapsed() >= DEBT_WAIT_MAX || crate::interrupt::requested() {
            return false;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// InnoDB: every dirty page flushed and purge caught up, then the flushing settings back.
fn flush_innodb(conn: &mut OwnConn) -> anyhow::Result<String> {
    // No page may stay dirty, and the page cleaner writes at innodb_io_capacity_max.
    let settings = [
        ("innodb_max_dirty_pages_pct", "0"),
        ("innodb_max_dirty_pages_pct_lwm", "0"),
        ("innodb_io_capacity", "@@GLOBAL.innodb_io_capacity_max"),
    ];
    let mut saved = Vec::new();
    for (name, during) in settings {
        let value: Option<String> = conn.query_first(format!("SELECT @@GLOBAL.{name}"))?;
        if let Some(value) = value {
            saved.push((name, value));
            conn.query_drop(format!("SET GLOBAL {name} = {during}"))?;
        }
    }
    let dirty_before = status(conn, "Innodb_buffer_pool_pages_dirty").unwrap_or(0);
    let history_before = status(conn, "Innodb_history_list_length");
    let drained = wait_for(conn, |conn| {
        status(conn, "Innodb_buffer_pool_pages_dirty").unwrap_or(0) == 0
            && status(conn, "Innodb_history_list_length").unwrap_or(0) == 0
    });
    for (name, value) in saved {
        conn.query_drop(format!("SET GLOBAL {name} = {value}"))?;
    }
    let history = history_before.map_or(String::new(), |length| {
        format!(", purge's history list {length} long")
    });
    Ok(format!(
        "InnoDB: innodb_max_dirty_pages_pct(_lwm) set to 0 and innodb_io_capacity to its max ({dirty_before} pages dirty{history}) {}, then restored",
        if drained {
            "until none was dirty and purge had caught up".to_string()
        } else {
            format!("for {} s (not all flushed)", DEBT_WAIT_MAX.as_secs())
        }
    ))
}

/// RocksDB: the memtable flushed, then L0 compacted where the server can.
fn flush_rocksdb(conn: &mut OwnConn) -> anyhow::Result<String> {
    conn.query_drop("SET GLOBAL rocksdb_force_flush_memtable_now = 1")?;
    let compacted = conn
        .query_drop("SET GLOBAL rocksdb_compact_lzero_now = 1")
        .is_ok();
    Ok(format!(
        "RocksDB: memtable flushed (rocksdb_force_flush_memtable_now){}",
        if compacted {
            ", L0 compacted (rocksdb_compact_lzero_now)"
        } else {
            "; this server has no rocksdb_compact_lzero_now"
        }
    ))
}

/// ibench's `vac_my`, cheaply (see the module's comment).
pub fn reduce_debt(
    clients: u32,
    engine: Engine,
    database: &str,
    host: &mut dyn StepHost,
) -> anyhow::Result<()> {
    let started = Instant::now();
    let mut conn = host.connect(database)?;
    let tables: Vec<String> = (0..clients as usize).map(table_name).collect();
    conn.query_drop(format!("ANALYZE TABLE {}", tables.join(", ")))?;
    let flushed = match engine {
        Engine::InnoDb => flush_innodb(&mut conn)?,
        Engine::RocksDb => flush_rocksdb(&mut conn)?,
        other => {
            conn.query_drop(format!("FLUSH TABLES {}", tables.join(", ")))?;
            format!("{other}: FLUSH TABLES")
        }
    };
    drop(conn);
    std::thread::sleep(DEBT_IDLE);
    host.record_step(StepRecord {
        name: DEBT_STEP.into(),
        engine: Some(engine),
        profile: None,
        detail: format!(
            "ANALYZE TABLE {}; {flushed}; then {} s idle",
            tables.join(", "),
            DEBT_IDLE.as_secs()
        ),
        elapsed_ms: elapsed_ms(started),
        rows: None,
        error: None,
    })
}

/// The database's size on disk, and where it was read from.
fn database_bytes(
    conn: &mut OwnConn,
    database: &str,
    engine: Engine,
) -> anyhow::Result<(u64, String)> {
    let datadir: Option<String> = conn.query_first("SELECT @@datadir")?;
    let directory = datadir
        .map(std::path::PathBuf::from)
        .map(|datadir| (datadir.join(database), datadir))
        .filter(|(directory, _)| directory.is_dir());
    if let Some((directory, datadir)) = directory {
        let mut bytes = crate::measure::directory_bytes(&directory);
        let mut from = format!("the files of {database}/");
        if engine == Engine::RocksDb {
            bytes += crate::measure::directory_bytes(&datadir.join("#rocksdb"));
            from.push_str(" and #rocksdb/ (shared, WAL included)");
        }
        return Ok((bytes, from));
    }
    let bytes: Option<u64> = conn.exec_first(
        "SELECT CAST(SUM(data_length + index_length) AS UNSIGNED) FROM information_schema.TABLES WHERE table_schema = ?",
        (database,),
    )?;
    Ok((
        bytes.unwrap_or(0),
        "information_schema.TABLES (the datadir is not on this machine)".into(),
    ))
}

/// Which step a size is measured after.
#[derive(Debug, Clone, PartialEq)]
pub struct SizeAt<'a> {
    pub step: &'a str,
    pub clients: u32,
    /// From 1, warm-up repeats included.
    pub repeat: u32,
}

/// The size step's record: "<step>, <clients> clients, repeat <n>: <bytes> bytes, from …".
fn size_detail(at: &SizeAt, bytes: u64, from: &str) -> String {
    format!(
        "{}, {} clients, repeat {}: {bytes} bytes, from {from}",
        at.step, at.clients, at.repeat
    )
}

/// A size step's place and bytes, read back from its record.
pub fn size_of(record: &StepRecord) -> Option<(SizeAt<'_>, u64)> {
    if record.name != SIZE_STEP {
        return None;
    }
    let (head, rest) = record.detail.split_once(": ")?;
    let mut parts = head.split(", ");
    let step = parts.next()?;
    let clients = parts.next()?.strip_suffix(" clients")?.parse().ok()?;
    let repeat = parts.next()?.strip_prefix("repeat ")?.parse().ok()?;
    let bytes = rest.split_once(" bytes")?.0.parse().ok()?;
    Some((
        SizeAt {
            step,
            clients,
            repeat,
        },
        bytes,
    ))
}

/// The database's size once a step is done.
pub fn measure_size(
    at: &SizeAt,
    engine: Engine,
    database: &str,
    host: &mut dyn StepHost,
) -> anyhow::Result<()> {
    let started = Instant::now();
    let mut conn = host.connect(database)?;
    let (bytes, from) = database_bytes(&mut conn, database, engine)?;
    drop(conn);
    host.record_step(StepRecord {
        name: SIZE_STEP.into(),
        engine: Some(engine),
        profile: None,
        detail: size_detail(at, bytes, &from),
        elapsed_ms: elapsed_ms(started),
        rows: None,
        error: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_size_step_is_read_back_from_its_record() {
        let record = StepRecord {
            name: SIZE_STEP.into(),
            engine: Some(Engine::RocksDb),
            profile: None,
            detail: size_detail(
                &SizeAt {
                    step: "qr100",
                    clients: 2,
                    repeat: 3,
                },
                12_345_678,
                "the files of x/ and #rocksdb/",
            ),
            elapsed_ms: 1.0,
            rows: None,
            error: None,
        };
        let at = SizeAt {
            step: "qr100",
            clients: 2,
            repeat: 3,
        };
        assert_eq!(size_of(&record), Some((at, 12_345_678)));
        let other = StepRecord {
            name: DEBT_STEP.into(),
            ..record
        };
        assert_eq!(size_of(&other), None);
    }
}
