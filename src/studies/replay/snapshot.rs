//! A replay's own step: the capture's snapshot loaded afresh into one engine's tables (each
//! `CREATE TABLE` with its ENGINE rewritten, the rows inserted in batches), timed and
//! recorded as a step; and the replay's part of the record (what the capture held per query
//! kind). An engine that cannot hold a table is recorded with the server's reason, and its
//! cells fail with it while the other engines replay. This must not know how commands are
//! replayed.

use std::time::Instant;

use anyhow::Context;
use mysql::prelude::Queryable;

use super::ReplayParams;
use crate::console::note;
use crate::engine::Engine;
use crate::plan::{StepHost, StudyKind};
use crate::results::{CapturedKindRecord, ReplayRecord, StepRecord};
use crate::sqlerror::DescribeMysqlError;

/// Rows per INSERT when loading the snapshot.
const ROWS_PER_INSERT: usize = 200;

/// What the record says of a replay's capture.
pub fn replay_record(params: &ReplayParams) -> ReplayRecord {
    let capture = &params.capture;
    let script = &params.script;
    let last_end = script
        .connections
        .iter()
        .flat_map(|c| c.commands.iter())
        .map(|&i| capture.commands[i].end_us)
        .max()
        .unwrap_or(script.origin_us);
    ReplayRecord {
        file: params.file.clone(),
        source: capture.header().source.clone(),
        server_version: capture.header().server_version.clone(),
        connections: script.connections.len(),
        commands: script.commands(),
        captured_s: (last_end - script.origin_us).max(0) as f64 / 1e6,
        speed: params.speed,
        captured: script
            .kinds
            .iter()
            .zip(&script.captured)
            .map(|(name, seen)| CapturedKindRecord {
                name: name.clone(),
                count: seen.count,
                errors: seen.errors,
                rows: seen.rows,
            })
            .collect(),
        warnings: capture.warnings.clone(),
    }
}

/// `CREATE TABLE` text with its engine replaced (or added).
pub fn with_engine(create: &str, engine: Engine) -> String {
    let upper = create.to_ascii_uppercase();
    match upper.rfind("ENGINE=") {
        Some(at) => {
            let rest = &create[at + "ENGINE=".len()..];
            let end = rest
                .find(|c: char| c.is_whitespace())
                .map_or(create.len(), |e| at + "ENGINE=".len() + e);
            format!(
                "{}ENGINE={}{}",
                &create[..at],
                engine.sql_name(),
                &create[end..]
            )
        }
        None => format!("{create} ENGINE={}", engine.sql_name()),
    }
}

/// Loads the snapshot into `engine`'s tables; a failure is recorded and marks the engine's
/// cells, not the run.
pub fn load_snapshot(
    params: &ReplayParams,
    host: &mut dyn StepHost,
    engine: Engine,
    matrix: &crate::plan::Matrix,
) -> anyhow::Result<()> {
    let database = params.database_for(engine, host.run_database(), matrix);
    let started = Instant::now();
    let outcome = load(params, host, &database, engine);
    let elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
    let rows = params
        .capture
        .rows
        .iter()
        .map(|r| r.rows.len() as u64)
        .sum();
    let error = match outcome {
        Ok(()) => {
            host.refuse_cells(engine, None);
            note(&format!(
                "snapshot loaded into {database} on {engine}: {} table(s), {rows} row(s) in {:.2} s",
                params.capture.tables.len(),
                elapsed_ms / 1000.0
            ));
            None
        }
        Err(err) => {
            let message = format!("{err:#}");
            note(&format!("cannot replay on {engine}: {message}"));
            host.refuse_cells(
                engine,
                Some(format!(
                    "the capture cannot be replayed on {engine}: {message}"
                )),
            );
            Some(message)
        }
    };
    host.record_step(StepRecord {
        name: "load_snapshot".into(),
        engine: Some(engine),
        profile: None,
        detail: format!(
            "{} table(s) into {database} with ENGINE={}",
            params.capture.tables.len(),
            engine.sql_name()
        ),
        elapsed_ms,
        rows: Some(rows),
        error,
    })
}

fn load(
    params: &ReplayParams,
    host: &mut dyn StepHost,
    database: &str,
    engine: Engine,
) -> anyhow::Result<()> {
    let names: Vec<&str> = params
        .capture
        .tables
        .iter()
        .map(|t| t.name.as_str())
        .collect();
    host.fresh_database(database, &names)?;
    let mut conn = host.connect(database)?;
    for table in &params.capture.tables {
        conn.query_drop(format!("DROP TABLE IF EXISTS `{}`", table.name))
            .described()?;
        conn.query_drop(with_engine(&table.create, engine))
            .described()
            .with_context(|| {
                format!(
                    "table {} cannot be created with ENGINE={}",
                    table.name,
                    engine.sql_name()
                )
            })?;
    }
    for chunk in &params.capture.rows {
        let columns: Vec<String> = chunk.columns.iter().map(|c| format!("`{c}`")).collect();
        let row_marks = format!("({})", vec!["?"; columns.len()].join(", "));
        for rows in chunk.rows.chunks(ROWS_PER_INSERT) {
            let sql = format!(
                "INSERT INTO `{}` ({}) VALUES {}",
                chunk.table,
                columns.join(", "),
                vec![row_marks.as_str(); rows.len()].join(", ")
            );
            let values: Vec<mysql::Value> = rows.iter().flatten().map(|v| v.to_mysql()).collect();
            conn.exec_drop(sql, mysql::Params::Positional(values))
                .described()
                .with_context(|| format!("rows of table {} on {engine}", chunk.table))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_engine_is_replaced_or_added() {
        assert_eq!(
            with_engine(
                "CREATE TABLE `t` (\n  `id` int(11) NOT NULL\n) ENGINE=InnoDB DEFAULT CHARSET=latin1",
                Engine::MyIsam
            ),
            "CREATE TABLE `t` (\n  `id` int(11) NOT NULL\n) ENGINE=MyISAM DEFAULT CHARSET=latin1"
        );
        assert_eq!(
            with_engine("CREATE TABLE t (id INT)", Engine::Memory),
            "CREATE TABLE t (id INT) ENGINE=MEMORY"
        );
    }
}
