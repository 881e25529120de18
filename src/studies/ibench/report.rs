//! The insert benchmark's report: one row per step and set-up with the figures ibench's
//! reports give (Mark Callaghan's per-step tables): inserts/s, queries/s, CPU per
//! operation, storage reads and KB read per operation, KB written per inserted row, the
//! database's size, the worst response, and for the query steps whether the background
//! writers held their rate. Every figure comes from the record: the cells' query counts
//! and latencies, server counter and process deltas, enginebench's own CPU, the client
//! groups (held or not is the view's judgement) and the size steps. Then the shared
//! tables per statement.
//!
//! Owns: the ibench section's wording and columns, and which counts make an insert and
//! a query. Must not know how a run was made.

use super::statements::{POINT_KINDS, RANGE_KINDS};
use super::steps::IbenchStep;
use super::upkeep::size_of;
use crate::measure::engine_counters;
use crate::results::{CellRecord, OutcomeRecord};
use crate::view::client_groups::cell_groups;
use crate::view::efficiency::written_bytes;
use crate::view::section::{Block, Cell, Section, Table};
use crate::view::{Setup, View};

/// The base name of a query kind (`inserter/insert` → `insert`).
fn base(kind: &str) -> &str {
    kind.rsplit('/').next().unwrap_or(kind)
}

/// Statements of kinds whose base name `wanted` accepts, succeeded and failed.
fn statements(cell: &CellRecord, wanted: impl Fn(&str) -> bool) -> u64 {
    cell.queries
        .iter()
        .filter(|query| wanted(base(&query.name)))
        .map(|query| query.count)
        .sum()
}

/// Rows a cell inserted: its INSERTs × the step's rows per INSERT (l.i0's last INSERT
/// of each table carries what is left of `--rows`).
pub fn rows_inserted(cell: &CellRecord, step: IbenchStep, rows_per_table: Option<u64>) -> u64 {
    let inserts = statements(cell, |kind| kind == "insert");
    let rows = inserts * u64::from(step.rows_per_commit());
    match (step, rows_per_table) {
        (IbenchStep::Load, Some(per_table)) => rows.min(per_table * u64::from(cell.threads)),
        _ => rows,
    }
}

/// Queries a cell ran: range and point queries, not the reads of their bounds.
pub fn queries_run(cell: &CellRecord) -> u64 {
    statements(cell, |kind| {
        RANGE_KINDS.contains(&kind) || kind == POINT_KINDS[0]
    })
}

fn per(value: f64, count: u64) -> Option<f64> {
    (count > 0).then(|| value / count as f64)
}

fn figure(value: Option<f64>, decimals: usize) -> Cell {
    Cell::figure(value.map_or("-".into(), |v| format!("{v:.decimals$}")))
}

fn header() -> Table {
    Table {
        header: [
            "step",
            "set-up",
            "clients",
            "repeat",
            "secs",
            "inserts/s",
            "queries/s",
            "CPU µs/op",
            "reads/op",
            "KB read/op",
            "KB written/insert",
            "DB MiB",
            "max response ms",
            "background writers",
        ]
        .map(String::from)
        .to_vec(),
        rows: Vec::new(),
    }
}

/// Whether the query step's writers held their rows/s, in words: rows/s achieved of those
/// offered, all clients' inserters together (their deleters follow them).
fn writers_held(cell: &CellRecord, step: IbenchStep) -> String {
    let Some(rounds) = step.writer_rounds_per_s() else {
        return "-".into();
    };
    // An inserter's event is a second's rounds.
    let rows_per_event = f64::from(step.rows_per_commit() * rounds);
    let figures = cell_groups(cell, None);
    let held = figures
        .iter()
        .find(|group| group.record.name == super::statements::INSERTER_GROUP)
        .and_then(|group| group.held.clone());
    match held {
        Some(held) => format!(
            "{}: {:.0} of {:.0} rows/s",
            if held.held { "held" } else { "NOT held" },
            held.achieved_per_s * rows_per_event,
            held.offered_per_s * rows_per_event
        ),
        None => "not measured".into(),
    }
}

/// One cell's row of the per-step table.
fn row(view: &View, cell: &CellRecord, step: IbenchStep, rows_per_table: Option<u64>) -> Vec<Cell> {
    let secs = cell.wall_ms / 1000.0;
    let inserted = rows_inserted(cell, step, rows_per_table);
    let queries = queries_run(cell);
    // An operation is a query in the query steps, an inserted row in the others, as
    // ibench's cpupq and cpupi.
    let operations = if step.is_query() { queries } else { inserted };
    let cpu = cell
        .server_process
        .as_ref()
        .map(|process| (process.cpu_us + cell.client_cpu_us) as f64);
    let status = |names: &[&str]| -> f64 {
        names
            .iter()
            .map(|name| cell.server_status_delta.get(*name).copied().unwrap_or(0) as f64)
            .sum()
    };
    let reads = status(engine_counters(cell.engine).cache_misses);
    let bytes_sent = cell
        .server_status_delta
        .get("Bytes_sent")
        .copied()
        .unwrap_or(0);
    let written = cell
        .server_process
        .as_ref()
        .map(|process| written_bytes(process, bytes_sent).0);
    let read_bytes = cell
        .server_process
        .as_ref()
        .map(|process| process.storage_read_bytes as f64);
    let size = view.record.steps.iter().find_map(|record| {
        let (at, bytes) = size_of(record)?;
        (record.engine == Some(cell.engine)
            && record.profile == cell.profile
            && at.step == cell.variant
            && at.clients == cell.threads
            && at.repeat == cell.repeat)
            .then_some(bytes)
    });
    let max_us = cell
        .queries
        .iter()
        .map(|query| query.latency_us.max_us)
        .max()
        .unwrap_or(0);
    let rate = |count: u64| (secs > 0.0 && count > 0).then(|| count as f64 / secs);
    vec![
        Cell::text(cell.variant.clone()),
        Cell::text(Setup::of_cell(cell).label()),
        Cell::figure(cell.threads.to_string()),
        Cell::figure(cell.repeat.to_string()),
        Cell::figure(format!("{secs:.1}")),
        figure(rate(inserted), 0),
        figure(rate(queries), 0),
        figure(cpu.and_then(|cpu| per(cpu, operations)), 1),
        figure(per(reads, operations), 3),
        figure(read_bytes.and_then(|b| per(b / 1024.0, operations)), 3),
        figure(written.and_then(|b| per(b / 1024.0, inserted)), 3),
        figure(size.map(|bytes| bytes as f64 / (1u64 << 20) as f64), 1),
        Cell::figure(format!("{:.1}", max_us as f64 / 1000.0)),
        Cell::text(writers_held(cell, step)),
    ]
}

/// How a run still differs from ibench's own (iibench.py's protocol, writers, pacing,
/// bounds and l.x rows are its), said beside the figures so none passes unnoticed.
pub const STILL_DIFFERS: &str = "Still unlike ibench's own runs: l.i1 and l.i2 last --time instead of inserting a fixed number of rows; each deleter reads its lower bound on its own connection (iibench.py on a third); the price is written as an integer (iibench.py writes 123.00 into the int column); l.i0 on RocksDB runs without rocksdb_bulk_load (iq.sh's bulk option); the write-debt reduction lasts seconds, not minutes.";

/// Per step and set-up: ibench's figures.
pub fn ibench_section(view: &View) -> Section {
    let rows_per_table = view
        .record
        .parameters
        .get("rows_per_table")
        .and_then(serde_json::Value::as_u64);
    let mut table = header();
    let mut failed = Vec::new();
    for cell in view.record.cells.iter().filter(|cell| !cell.warmup_repeat) {
        let Some(step) = IbenchStep::named(&cell.variant) else {
            continue;
        };
        if cell.outcome != OutcomeRecord::Completed {
            failed.push(format!(
                "{} on {}: {:?}{}",
                cell.variant,
                Setup::of_cell(cell).label(),
                cell.outcome,
                cell.error
                    .as_deref()
                    .map_or(String::new(), |error| format!(" ({error})"))
            ));
        }
        table.rows.push(row(view, cell, step, rows_per_table));
    }
    let mut blocks = vec![Block::Table {
        caption: "ibench per step (inserts/s: rows inserted a second; an op is a query in the query steps, an inserted row in the others; CPU: the server's and enginebench's, per op; reads: the engine's reads from storage (its cache misses: InnoDB Innodb_buffer_pool_reads, RocksDB Rocksdb_block_cache_miss) and KB read from storage, per op; KB written: bytes the server wrote per inserted row, deletes included; DB MiB: the database's files after the step; max response: the slowest statement; background writers: whether the writers held the step's rows/s per client, in rows/s achieved of those offered by all clients (held: within 5% of the rate offered, no event over a second late))".into(),
        table,
    }];
    blocks.push(Block::Line(STILL_DIFFERS.into()));
    blocks.extend(Block::list_if_any("steps that did not complete", failed));
    Section {
        id: "ibench",
        title: "Insert benchmark (ibench)".into(),
        blocks,
    }
}
