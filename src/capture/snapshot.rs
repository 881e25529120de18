//! The snapshot of a capture: every base table of one database, as `SHOW CREATE TABLE`
//! prints it and with all its rows (in chunks), read inside one consistent-snapshot
//! transaction so that InnoDB tables agree with one another. Both ways of capturing (the
//! proxy, the general-log import) write it before their commands. This must not know
//! where the commands come from nor how a capture is replayed.

use anyhow::Context;
use mysql::prelude::Queryable;

use super::format::{CaptureWriter, Line, RowsChunk, TableSnapshot, Value};

/// Rows per `Line::Rows`: small enough that a line stays a few hundred KB for ordinary
/// rows, large enough that the JSON keys are not most of the file.
pub const CHUNK_ROWS: usize = 500;

/// What a snapshot held.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SnapshotSummary {
    pub tables: usize,
    pub rows: u64,
}

/// Writes the schema and rows of `database` into `writer`: a `Line::Table` per base table
/// (views and sequences are left out), then its rows in `Line::Rows` chunks of at most
/// [`CHUNK_ROWS`], values read with the binary protocol so numbers stay numbers. Read
/// inside `START TRANSACTION WITH CONSISTENT SNAPSHOT` at REPEATABLE READ: transactional
/// tables are read as of one moment; MyISAM and Aria tables, which have no snapshots, as
/// they are when each is read.
pub fn write_snapshot(
    conn: &mut mysql::Conn,
    database: &str,
    writer: &mut CaptureWriter,
) -> anyhow::Result<SnapshotSummary> {
    let exists: Option<String> = conn
        .exec_first(
            "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?",
            (database,),
        )
        .context("looking up the database to snapshot")?;
    if exists.is_none() {
        anyhow::bail!(
            "database '{database}' does not exist on the server (SHOW DATABASES lists those that do): name the database the workload uses"
        );
    }
    conn.query_drop("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        .context("setting the snapshot's isolation level")?;
    conn.query_drop("START TRANSACTION WITH CONSISTENT SNAPSHOT")
        .context("starting the snapshot's transaction")?;
    let result = read_tables(conn, database, writer);
    // Only reads happened: ending the transaction either way is harmless.
    let ended = conn.query_drop(if result.is_ok() { "COMMIT" } else { "ROLLBACK" });
    let summary = result?;
    ended.context("ending the snapshot's transaction")?;
    Ok(summary)
}

fn read_tables(
    conn: &mut mysql::Conn,
    database: &str,
    writer: &mut CaptureWriter,
) -> anyhow::Result<SnapshotSummary> {
    let tables: Vec<String> = conn
        .exec(
            "SELECT TABLE_NAME FROM information_schema.TABLES \
             WHERE TABLE_SCHEMA = ? AND TABLE_TYPE = 'BASE TABLE' ORDER BY TABLE_NAME",
            (database,),
        )
        .with_context(|| format!("listing the tables of {database}"))?;
    let mut summary = SnapshotSummary::default();
    for table in tables {
        let qualified = format!("{}.{}", quote_name(database), quote_name(&table));
        let create: Option<(String, String)> = conn
            .query_first(format!("SHOW CREATE TABLE {qualified}"))
            .with_context(|| format!("SHOW CREATE TABLE {qualified}"))?;
        let Some((_, create)) = create else {
            anyhow::bail!("SHOW CREATE TABLE {qualified} returned nothing");
        };
        writer.write(&Line::Table(TableSnapshot {
            name: table.clone(),
            create,
        }))?;
        summary.tables += 1;
        // A prepared statement: the binary protocol sends numbers as numbers.
        let statement = conn
            .prep(format!("SELECT * FROM {qualified}"))
            .with_context(|| format!("reading {qualified}"))?;
        let columns: Vec<String> = statement
            .columns()
            .iter()
            .map(|column| column.name_str().into_owned())
            .collect();
        let mut chunk = RowsChunk {
            table: table.clone(),
            columns,
            rows: Vec::new(),
        };
        let mut result = conn
            .exec_iter(&statement, ())
            .with_context(|| format!("reading {qualified}"))?;
        for row in result.by_ref() {
            let row = row.with_context(|| format!("reading {qualified}"))?;
            chunk
                .rows
                .push(row.unwrap().iter().map(Value::from_mysql).collect());
            summary.rows += 1;
            if chunk.rows.len() == CHUNK_ROWS {
                writer.write(&Line::Rows(chunk.clone()))?;
                writer.flush()?;
                chunk.rows.clear();
            }
        }
        drop(result);
        if !chunk.rows.is_empty() {
            writer.write(&Line::Rows(chunk))?;
        }
        conn.close(statement)
            .with_context(|| format!("closing the statement reading {qualified}"))?;
        writer.flush()?;
    }
    Ok(summary)
}

/// A name quoted with backticks, as the server quotes it.
pub fn quote_name(name: &str) -> String {
    format!("`{}`", name.replace('`', "``"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_quoted_as_the_server_quotes_them() {
        assert_eq!(quote_name("shop"), "`shop`");
        assert_eq!(quote_name("we`ird"), "`we``ird`");
    }
}
