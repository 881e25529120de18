//! Capturing from `performance_schema`'s statement history instead of through a proxy: the
//! server records each statement as it ends (`events_statements_history_long`, a ring of
//! `performance_schema_events_statements_history_long_size` rows), and this reads the new
//! rows on one connection of its own until told to stop, writing them as a capture. Next to
//! the general log it adds what a replay compares against: each statement's duration (to
//! the nanosecond), rows sent and changed, and its error. What it cannot give: the values
//! of server-side prepared statements (MariaDB records their executions with no text at
//! all: they are counted and left out), statements longer than
//! `performance_schema_max_sql_text_length` (cut, so left out and counted), and statements
//! the ring overwrote between two reads (said). `performance_schema` must have been
//! switched on at the server's start; the two consumers it needs are switched on here and
//! back off at the end. This owns reading the history; it must not know how a capture is
//! summarised or replayed.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::time::Duration;

use anyhow::Context;
use mysql::prelude::Queryable;

use super::format::{unix_now_us, CaptureWriter, Header, Response};
use super::import::{take_column, ImportSummary, Importer, Logged};
use super::snapshot::write_snapshot;

/// The header's source.
pub const SOURCE: &str = "performance_schema (events_statements_history_long)";

/// The consumers the history needs (`current` feeds `history_long`).
const CONSUMERS: [&str; 2] = [
    "events_statements_current",
    "events_statements_history_long",
];

/// Reads come when the ring should hold this share of new rows, at the rate the last read
/// found. Each read scans the whole ring (it has no index: about 0.8 µs of server CPU a row
/// on a 2-CPU machine), so reading a ring of 100,000 rows every 100 ms cost a server of
/// 45,000 statements/s most of a CPU; paced by the fill it costs about two row scans per
/// statement, whatever the ring's size. The rest of the ring is the margin for a read
/// delayed by a busy server.
const READ_AT_FILL: f64 = 0.4;

/// The longest wait between reads (also the first one's), and the shortest.
const LONGEST_WAIT: Duration = Duration::from_secs(1);
const SHORTEST_WAIT: Duration = Duration::from_millis(5);

/// Rows ending this close before the newest end seen are read again (and recognised by
/// their ids): a thread may add its row to the ring just after a later-ending one was read.
/// The newest row seen is among them, which tells whether the ring dropped it.
const LOOK_BACK_PS: u64 = 50_000_000_000;

/// What a capture from the history wrote, and how it went.
pub struct PsCapture {
    pub summary: ImportSummary,
    /// Snapshot tables and rows, when one was taken.
    pub snapshot: Option<(u64, u64)>,
    /// Reads of the history, and the time they took together (the server scanning the
    /// ring and sending the new rows).
    pub reads: u64,
    pub reading: Duration,
}

/// Counts of what the history held that a capture cannot replay.
#[derive(Default)]
struct Tally {
    prepared: u64,
    cut: u64,
    wrapped_reads: u64,
    other: BTreeMap<String, u64>,
    reads: u64,
    reading: Duration,
}

/// Captures the statements of every other connection of the server behind `conn` into
/// `out`, reading the history until `stop()` says so. With `database`, the capture starts
/// with a snapshot of it taken on `conn` first. `started` is told the capture runs.
pub fn capture(
    conn: &mut mysql::Conn,
    database: Option<&str>,
    out: &Path,
    stop: &dyn Fn() -> bool,
    started: &dyn Fn(&str),
) -> anyhow::Result<PsCapture> {
    let enabled: Option<(i64, i64, i64, String)> = conn
        .query_first(
            "SELECT @@performance_schema, @@performance_schema_events_statements_history_long_size, \
             @@performance_schema_max_sql_text_length, VERSION()",
        )
        .context("reading performance_schema's settings")?;
    let Some((enabled, ring_rows, text_limit, version)) = enabled else {
        anyhow::bail!("the server did not say whether performance_schema is on");
    };
    if enabled == 0 {
        anyhow::bail!(
            "performance_schema is OFF on this server, and only a restart switches it on: add performance_schema=ON under [mysqld] in its option file and restart it (for a throwaway server: enginebench server start --server-opt performance_schema=ON); or capture through the proxy, or from the general log (--from-log)"
        );
    }
    if ring_rows <= 0 {
        anyhow::bail!(
            "performance_schema_events_statements_history_long_size is {ring_rows}: the server keeps no statement history; set it (a start-up option, e.g. 100000) and restart"
        );
    }
    let switched_on = switch_on_consumers(conn)?;
    let result = read_history(
        conn,
        database,
        out,
        stop,
        started,
        HistoryLimits {
            ring_rows: ring_rows as u64,
            text_limit: text_limit.max(0) as usize,
            version,
        },
    );
    // Put the server back as it was, whatever happened.
    if !switched_on.is_empty() {
        let names = quoted_list(&switched_on);
        let restored = conn.query_drop(format!(
            "UPDATE performance_schema.setup_consumers SET ENABLED = 'NO' WHERE NAME IN ({names})"
        ));
        if let (Err(err), Ok(_)) = (&restored, &result) {
            crate::console::note(&format!(
                "warning: could not switch {names} back off ({err}): UPDATE performance_schema.setup_consumers SET ENABLED = 'NO' WHERE NAME IN ({names})"
            ));
        }
    }
    result
}

struct HistoryLimits {
    ring_rows: u64,
    text_limit: usize,
    version: String,
}

/// Switches on the consumers the history needs; returns those that were off.
fn switch_on_consumers(conn: &mut mysql::Conn) -> anyhow::Result<Vec<String>> {
    let names = quoted_list(&CONSUMERS);
    let states: Vec<(String, String)> = conn
        .query(format!(
            "SELECT NAME, ENABLED FROM performance_schema.setup_consumers WHERE NAME IN ({names})"
        ))
        .context("reading performance_schema.setup_consumers")?;
    let off: Vec<String> = states
        .into_iter()
        .filter(|(_, enabled)| enabled != "YES")
        .map(|(name, _)| name)
        .collect();
    if !off.is_empty() {
        let list = quoted_list(&off);
        conn.query_drop(format!(
            "UPDATE performance_schema.setup_consumers SET ENABLED = 'YES' WHERE NAME IN ({list})"
        ))
        .with_context(|| {
            format!("cannot switch on the statement history ({list}): the capturing user needs UPDATE on performance_schema.setup_consumers (GRANT UPDATE ON performance_schema.setup_consumers TO …), or a DBA switches them on")
        })?;
    }
    Ok(off)
}

fn quoted_list(names: &[impl AsRef<str>]) -> String {
    names
        .iter()
        .map(|name| format!("'{}'", name.as_ref()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// One row of the history.
struct Row {
    thread: u64,
    event: u64,
    name: String,
    text: Option<String>,
    start_ps: u64,
    end_ps: u64,
    schema: Option<String>,
    rows_sent: u64,
    rows_affected: u64,
    errno: u16,
    message: Option<String>,
}

impl Row {
    /// A row of the query in `read_history`, its columns in that order.
    fn from_history(mut row: mysql::Row) -> anyhow::Result<Row> {
        fn take<T: mysql::prelude::FromValue>(
            row: &mut mysql::Row,
            index: usize,
        ) -> anyhow::Result<T> {
            take_column(row, index, "events_statements_history_long")
        }
        Ok(Row {
            thread: take(&mut row, 0)?,
            event: take(&mut row, 1)?,
            name: take(&mut row, 2)?,
            text: take(&mut row, 3)?,
            start_ps: take(&mut row, 4)?,
            end_ps: take(&mut row, 5)?,
            schema: take(&mut row, 6)?,
            rows_sent: take(&mut row, 7)?,
            rows_affected: take(&mut row, 8)?,
            errno: take(&mut row, 9)?,
            message: take(&mut row, 10)?,
        })
    }
}

fn read_history(
    conn: &mut mysql::Conn,
    database: Option<&str>,
    out: &Path,
    stop: &dyn Fn() -> bool,
    started: &dyn Fn(&str),
    limits: HistoryLimits,
) -> anyhow::Result<PsCapture> {
    let own_thread: u64 = conn
        .query_first(
            "SELECT THREAD_ID FROM performance_schema.threads WHERE PROCESSLIST_ID = CONNECTION_ID()",
        )
        .context("finding this connection's thread in performance_schema.threads")?
        .context("this connection is not in performance_schema.threads: is it instrumented (performance_schema.setup_actors)?")?;
    // The history's clock counts picoseconds from the server's start: this connection's
    // own statement, timed between two readings of the wall clock, ties it to the epoch.
    let before_us = unix_now_us();
    let now_ps: Option<u64> = conn
        .query_first(format!(
            "SELECT TIMER_START FROM performance_schema.events_statements_current WHERE THREAD_ID = {own_thread}"
        ))
        .context("reading performance_schema.events_statements_current")?;
    let after_us = unix_now_us();
    let now_ps = now_ps.context(
        "performance_schema did not time this connection's statement: check that the statement/% instruments are ENABLED and TIMED in performance_schema.setup_instruments",
    )?;
    let epoch_of_zero_us = (before_us + after_us) / 2 - (now_ps / 1_000_000) as i64;
    let started_us = (before_us + after_us) / 2;

    let mut header = Header::new(
        SOURCE,
        database.map(str::to_string),
        Some(limits.version.clone()),
    );
    header.started_unix_us = started_us;
    let mut writer = CaptureWriter::create(out, &header)?;
    let mut snapshot = None;
    if let Some(database) = database {
        let taken = write_snapshot(conn, database, &mut writer).inspect_err(|_| {
            let _ = std::fs::remove_file(out);
        })?;
        snapshot = Some((taken.tables as u64, taken.rows));
    }
    let mut importer = Importer::new(writer, started_us);
    importer.flush()?;
    started(&format!(
        "reading the statement history of {} row(s) as it fills",
        limits.ring_rows,
    ));

    let mut tally = Tally::default();
    // Rows read lately (thread, event id) → their end, to skip when read again.
    let mut seen: HashMap<(u64, u64), u64> = HashMap::new();
    let mut newest_end_ps = now_ps;
    let mut newest_key: Option<(u64, u64)> = None;
    let mut previous_read = std::time::Instant::now();
    let mut wait = SHORTEST_WAIT;
    loop {
        let until = previous_read + wait;
        while std::time::Instant::now() < until && !stop() {
            std::thread::sleep(SHORTEST_WAIT.min(until - std::time::Instant::now()));
        }
        let this_read = std::time::Instant::now();
        let last_read = stop();
        let since_ps = newest_end_ps.saturating_sub(LOOK_BACK_PS);
        let read: Vec<mysql::Row> = conn
            .query(format!(
                "SELECT THREAD_ID, EVENT_ID, EVENT_NAME, SQL_TEXT, TIMER_START, TIMER_END, CURRENT_SCHEMA, \
                 ROWS_SENT, ROWS_AFFECTED, MYSQL_ERRNO, MESSAGE_TEXT \
                 FROM performance_schema.events_statements_history_long \
                 WHERE TIMER_END > {since_ps} AND THREAD_ID <> {own_thread} AND NESTING_EVENT_ID IS NULL"
            ))
            .context("reading performance_schema.events_statements_history_long")?;
        let mut rows = read
            .into_iter()
            .map(Row::from_history)
            .collect::<anyhow::Result<Vec<Row>>>()?;
        tally.reads += 1;
        tally.reading += this_read.elapsed();
        // Every query of the ring scans all of it (it has no index), so loss is found in
        // this read: the ring drops its oldest rows first, and the newest row seen last
        // time ended within the look-back; if it is gone, rows after it may be gone too.
        // A read whose new rows fill the whole ring may have missed some just as well.
        let dropped_newest =
            newest_key.is_some_and(|key| !rows.iter().any(|row| (row.thread, row.event) == key));
        rows.retain(|row| !seen.contains_key(&(row.thread, row.event)) && row.end_ps > now_ps);
        if dropped_newest || rows.len() as u64 >= limits.ring_rows {
            tally.wrapped_reads += 1;
        }
        // The next read when the ring is READ_AT_FILL full again, at this read's rate.
        let per_second = rows.len() as f64 / (this_read - previous_read).as_secs_f64().max(1e-3);
        wait =
            Duration::from_secs_f64(limits.ring_rows as f64 * READ_AT_FILL / per_second.max(1.0))
                .clamp(SHORTEST_WAIT, LONGEST_WAIT);
        previous_read = this_read;
        rows.sort_by_key(|row| (row.start_ps, row.thread, row.event));
        for row in rows {
            seen.insert((row.thread, row.event), row.end_ps);
            if row.end_ps > newest_end_ps {
                newest_end_ps = row.end_ps;
                newest_key = Some((row.thread, row.event));
            }
            write_row(&mut importer, &mut tally, &limits, epoch_of_zero_us, row)?;
        }
        seen.retain(|_, end_ps| *end_ps > newest_end_ps.saturating_sub(LOOK_BACK_PS));
        importer.flush()?;
        if last_read {
            break;
        }
    }
    let summary = importer.finish(warnings(&tally, &limits))?;
    Ok(PsCapture {
        summary,
        snapshot,
        reads: tally.reads,
        reading: tally.reading,
    })
}

/// Writes one row as a command (opening its connection first when its thread is new).
fn write_row(
    importer: &mut Importer,
    tally: &mut Tally,
    limits: &HistoryLimits,
    epoch_of_zero_us: i64,
    row: Row,
) -> anyhow::Result<()> {
    let time_us = epoch_of_zero_us + (row.start_ps / 1_000_000) as i64;
    let duration_us = (row.end_ps.saturating_sub(row.start_ps) / 1_000_000) as i64;
    let command = match row.name.as_str() {
        "statement/com/Quit" => "Quit",
        "statement/com/Init DB" => "Init DB",
        "statement/com/Ping" => "Ping",
        "statement/com/Prepare"
        | "statement/com/Execute"
        | "statement/com/Close stmt"
        | "statement/com/Reset stmt"
        | "statement/com/Long Data"
        | "statement/com/Fetch"
        | "statement/com/Bulk_execute" => {
            tally.prepared += 1;
            return Ok(());
        }
        _ if row.text.is_some() => "Query",
        other => {
            *tally.other.entry(other.to_string()).or_default() += 1;
            return Ok(());
        }
    };
    let text = row.text.unwrap_or_default();
    if command == "Query" && limits.text_limit > 0 && text.len() >= limits.text_limit {
        tally.cut += 1;
        return Ok(());
    }
    if !importer.knows(row.thread) {
        importer.open(time_us, row.thread, row.schema.clone())?;
    }
    let argument = match command {
        // The history has no argument for Init DB: the schema after it is the one chosen.
        "Init DB" => row.schema.clone().unwrap_or_default(),
        _ => text,
    };
    importer.push_logged(Logged {
        time_us,
        duration_us,
        thread: row.thread,
        command: command.to_string(),
        argument,
        response: Some(Response {
            error: (row.errno != 0).then_some(row.errno),
            message: row.message.filter(|_| row.errno != 0),
            rows: row.rows_sent,
            affected_rows: row.rows_affected,
            // The history does not count the answer's bytes.
            bytes: 0,
        }),
    })
}

fn warnings(tally: &Tally, limits: &HistoryLimits) -> Vec<String> {
    let mut warnings = vec![
        "performance_schema records each statement's duration, rows and error, not the bytes of its answer".to_string(),
    ];
    if tally.prepared > 0 {
        warnings.push(format!(
            "{} command(s) of server-side prepared statements (prepare, execute, close) were left out: MariaDB's performance_schema records them with no statement text and no values (capture through the proxy for those clients)",
            tally.prepared
        ));
    }
    if tally.cut > 0 {
        warnings.push(format!(
            "{} statement(s) were longer than performance_schema_max_sql_text_length ({} bytes) and recorded cut: left out (raise it at the server's start to keep them)",
            tally.cut, limits.text_limit
        ));
    }
    if tally.wrapped_reads > 0 {
        warnings.push(format!(
            "the history ({} rows) filled up between two reads {} time(s): statements may have been lost; raise performance_schema_events_statements_history_long_size at the server's start",
            limits.ring_rows, tally.wrapped_reads
        ));
    }
    for (name, count) in &tally.other {
        warnings.push(format!(
            "{count} {name} event(s) carry no statement text: left out"
        ));
    }
    warnings
}
