//! Importing MariaDB's general log into a capture, for servers where a proxy cannot stand
//! between clients and server: from the `mysql.general_log` table (with a snapshot of the
//! database read on the same connection), or from the log file. The log records what each
//! connection sent and when, but no answers and no durations, and the file form only to the
//! second; what it lacks the capture says it lacks (no responses, ends equal to starts, the
//! resolution in the header's source). This owns reading the log's two forms (`import` numbers
//! connections and maps the command names); it must not know how a capture is summarised or
//! replayed.

use std::io::BufRead;
use std::path::Path;

use anyhow::Context;
use mysql::prelude::Queryable;

use super::format::{CaptureWriter, Header};
#[cfg(test)]
use super::import::connect_database;
pub use super::import::ImportSummary;
use super::import::{local_unix_seconds, take_column, Importer, Spacer, Timed};
use super::snapshot::write_snapshot;

/// The header source of a capture imported from the table.
pub const TABLE_SOURCE: &str = "general log (mysql.general_log)";

/// The fix for an empty or missing log, in every error that needs it.
const TURN_ON: &str = "SET GLOBAL general_log = ON, log_output = 'TABLE'";

/// Imports `mysql.general_log` (ordered by event_time) into a capture at `out`. With
/// `database`, the capture starts with a snapshot of that database read now on `conn`
/// (see [`write_snapshot`]). The commands of `conn` itself (this import's own queries,
/// which the log records too) are left out.
pub fn import_table(
    conn: &mut mysql::Conn,
    database: Option<&str>,
    out: &Path,
) -> anyhow::Result<ImportSummary> {
    let own: u64 = conn
        .query_first("SELECT CONNECTION_ID()")
        .context("asking the server for this connection's id")?
        .unwrap_or(0);
    let settings: Option<(String, String)> = conn
        .query_first("SELECT @@global.general_log, @@global.log_output")
        .context("reading general_log and log_output")?;
    let (enabled, output) = settings.unwrap_or_default();
    let server_version: Option<String> = conn
        .query_first("SELECT VERSION()")
        .context("reading the server's version")?;
    // Without ORDER BY the CSV table returns rows in the order they were logged; a stable
    // sort by time then orders by event_time and keeps the log's order among equal times
    // (a statement and the Execute it logs can share a microsecond).
    let mut logged: Vec<Logged> = Vec::new();
    let result = conn.exec_iter(
        "SELECT CAST(UNIX_TIMESTAMP(event_time) * 1000000 AS SIGNED), thread_id, command_type, argument \
         FROM mysql.general_log WHERE thread_id <> ?",
        (own,),
    );
    let mut result = result.with_context(|| {
        format!("cannot read mysql.general_log: the importing user needs SELECT on it, and the log goes there only with {TURN_ON}")
    })?;
    for row in result.by_ref() {
        let mut row = row.context("reading mysql.general_log")?;
        let time_us: i64 = take(&mut row, 0)?;
        let thread: u64 = take(&mut row, 1)?;
        let command: Vec<u8> = take(&mut row, 2)?;
        let argument: Vec<u8> = take(&mut row, 3)?;
        logged.push(Logged {
            time_us,
            thread,
            command: String::from_utf8_lossy(&command).into_owned(),
            argument: String::from_utf8_lossy(&argument).into_owned(),
        });
    }
    drop(result);
    if logged.is_empty() {
        anyhow::bail!(
            "mysql.general_log holds no commands of other connections (general_log is {}, log_output is {}): {TURN_ON}, run the workload, then import again",
            if enabled == "1" || enabled.eq_ignore_ascii_case("ON") { "ON" } else { "OFF" },
            output
        );
    }
    logged.sort_by_key(|entry| entry.time_us);
    let mut header = Header::new(TABLE_SOURCE, database.map(str::to_string), server_version);
    header.started_unix_us = logged[0].time_us;
    let mut writer = CaptureWriter::create(out, &header)?;
    let mut warnings = Vec::new();
    if let Some(database) = database {
        let snapshot = match write_snapshot(conn, database, &mut writer) {
            Ok(snapshot) => snapshot,
            Err(err) => {
                // A capture of a header alone would pass for an empty workload.
                drop(writer);
                let _ = std::fs::remove_file(out);
                return Err(err);
            }
        };
        warnings.push(format!(
            "the snapshot ({} table(s), {} row(s) of {database}) is of the data as it is now, after the logged commands ran, not as it was when they started",
            snapshot.tables, snapshot.rows
        ));
    }
    let mut importer = Importer::new(writer, logged[0].time_us);
    for entry in logged {
        importer.push(entry.time_us, entry.thread, &entry.command, entry.argument)?;
    }
    importer.finish(warnings)
}

fn take<T: mysql::prelude::FromValue>(row: &mut mysql::Row, index: usize) -> anyhow::Result<T> {
    take_column(row, index, "mysql.general_log")
}

/// One command as the log has it, before connections are numbered.
struct Logged {
    time_us: i64,
    thread: u64,
    command: String,
    argument: String,
}

/// Imports a general log file (MariaDB's format; MySQL's, with ISO times, too) into a
/// capture at `out`. The file has times to the second only: the commands logged in one
/// second keep their order and are spread evenly over it. It has no snapshot: `database`
/// only names the clients' database in the header (import from the table for a snapshot).
pub fn import_file(
    path: &Path,
    database: Option<&str>,
    out: &Path,
) -> anyhow::Result<ImportSummary> {
    let name = path.display().to_string();
    let opened = std::fs::File::open(path).with_context(|| {
        format!("cannot read the general log {name}: check the path (SELECT @@general_log_file names the server's) and that this user may read it")
    })?;
    let mut reader = LogReader::new(std::io::BufReader::new(opened), name.clone());
    let mut spacer: Spacer<Entry> = Spacer::default();
    let mut importer: Option<Importer> = None;
    let mut warnings = Vec::new();
    while let Some(entry) = reader.next_entry()? {
        if let Some(group) = spacer.add(entry.stamp, entry) {
            emit(group, &mut importer, &reader, database, out)?;
        }
    }
    let last = spacer.finish();
    if !last.is_empty() {
        emit(last, &mut importer, &reader, database, out)?;
    }
    let Some(importer) = importer else {
        anyhow::bail!(
            "{name} holds no general-log commands: {TURN_ON} (or log_output = 'FILE' with general_log_file naming this file), run the workload, then import again"
        );
    };
    warnings.push(
        "the general log file has times to the second only: the commands of one second keep their order, spread evenly over it".to_string(),
    );
    if database.is_some() {
        warnings.push(
            "no snapshot: a log file gives no connection to read the tables from (import from the table for one)".to_string(),
        );
    }
    if let Some(line) = reader.first_non_utf8 {
        warnings.push(format!(
            "line {line} (and maybe others) is not UTF-8: its bytes were replaced by U+FFFD"
        ));
    }
    if spacer.backwards > 0 {
        warnings.push(format!(
            "{} time(s) in the file went backwards (threads logging out of order): their commands keep the file's order at the latest time before them",
            spacer.backwards
        ));
    }
    if spacer.before_first_time > 0 {
        warnings.push(format!(
            "the first {} command(s) came before any time in the file: they were given the second before the first time",
            spacer.before_first_time
        ));
    }
    importer.finish(warnings)
}

/// Writes a group of commands, creating the capture at the first (its header starts at
/// the first command's time).
fn emit(
    group: Vec<Timed<Entry>>,
    importer: &mut Option<Importer>,
    reader: &LogReader<impl BufRead>,
    database: Option<&str>,
    out: &Path,
) -> anyhow::Result<()> {
    if importer.is_none() {
        let source = format!(
            "general log file {} (times to the second; commands of one second spread evenly over it)",
            reader.file
        );
        let mut header = Header::new(
            &source,
            database.map(str::to_string),
            reader.server_version.clone(),
        );
        header.started_unix_us = group[0].time_us;
        *importer = Some(Importer::new(
            CaptureWriter::create(out, &header)?,
            group[0].time_us,
        ));
    }
    let importer = importer.as_mut().expect("created above");
    for timed in group {
        let entry = timed.entry;
        importer.push(timed.time_us, entry.thread, &entry.command, entry.argument)?;
    }
    Ok(())
}

/// A command of the file.
#[derive(Debug, Clone, PartialEq)]
struct Entry {
    /// The time its line gave (µs since the epoch, and whether to the µs), or none: the
    /// file writes a time only when it changes.
    stamp: Option<(i64, bool)>,
    thread: u64,
    command: String,
    argument: String,
}

/// Commands that never continue on the next line; any other might (statements do).
const ONE_LINE_COMMANDS: &[&str] = &[
    "Connect",
    "Quit",
    "Init DB",
    "Ping",
    "Close stmt",
    "Reset stmt",
    "Field List",
    "Statistics",
    "Processlist",
    "Kill",
    "Debug",
    "Change user",
    "Set option",
    "Refresh",
    "Shutdown",
    "Sleep",
    "Time",
    "Fetch",
    "Long Data",
    "Reset connection",
];

/// Reads a general log file's commands, joining the lines of multi-line statements and
/// skipping the header the server writes when it opens the file.
struct LogReader<R: BufRead> {
    lines: std::io::Split<R>,
    file: String,
    number: usize,
    pending: Option<Entry>,
    server_version: Option<String>,
    first_non_utf8: Option<usize>,
}

impl<R: BufRead> LogReader<R> {
    fn new(input: R, file: String) -> Self {
        LogReader {
            lines: input.split(b'\n'),
            file,
            number: 0,
            pending: None,
            server_version: None,
            first_non_utf8: None,
        }
    }

    fn next_entry(&mut self) -> anyhow::Result<Option<Entry>> {
        loop {
            let Some(bytes) = self.lines.next() else {
                return Ok(self.pending.take());
            };
            self.number += 1;
            let bytes = bytes.with_context(|| {
                format!(
                    "cannot read the general log {}, line {}",
                    self.file, self.number
                )
            })?;
            let line = match String::from_utf8(bytes) {
                Ok(line) => line,
                Err(err) => {
                    self.first_non_utf8.get_or_insert(self.number);
                    String::from_utf8_lossy(err.as_bytes()).into_owned()
                }
            };
            match classify(&line) {
                Kind::Entry {
                    stamp,
                    thread,
                    command,
                    argument,
                } => {
                    let entry = Entry {
                        stamp,
                        thread,
                        command: command.to_string(),
                        argument: argument.to_string(),
                    };
                    if let Some(done) = self.pending.replace(entry) {
                        return Ok(Some(done));
                    }
                }
                Kind::Header { version } => {
                    if let Some(version) = version {
                        self.server_version = Some(version);
                    }
                }
                Kind::Other => match &mut self.pending {
                    Some(entry) if !ONE_LINE_COMMANDS.contains(&entry.command.as_str()) => {
                        entry.argument.push('\n');
                        entry.argument.push_str(&line);
                    }
                    None if line.trim().is_empty() => {}
                    _ => {
                        let shown: String = line.chars().take(80).collect();
                        anyhow::bail!(
                            "{}, line {}: not a general-log line: {shown:?} (a command is `YYMMDD HH:MM:SS<TAB>ID Command<TAB>Argument`, or the same after two tabs, and only statements go on over several lines): is this the file general_log_file names? The slow and error logs are other files",
                            self.file,
                            self.number
                        );
                    }
                },
            }
        }
    }
}

enum Kind<'a> {
    Entry {
        stamp: Option<(i64, bool)>,
        thread: u64,
        command: &'a str,
        argument: &'a str,
    },
    /// `/usr/sbin/mariadbd, Version: … started with:`, `Tcp port: …`, `Time  Id Command  Argument`.
    Header { version: Option<String> },
    /// Anything else: a statement's next line, or not the general log.
    Other,
}

fn classify(line: &str) -> Kind<'_> {
    if let Some(at) = line.find(", Version: ") {
        if line.trim_end().ends_with("started with:") {
            let rest = &line[at + ", Version: ".len()..];
            let version = rest
                .split([' ', '\t'])
                .next()
                .filter(|v| !v.is_empty())
                .map(str::to_string);
            return Kind::Header { version };
        }
    }
    if line.starts_with("Tcp port:")
        || (line.starts_with("Time")
            && line.contains("Id")
            && line.contains("Command")
            && line.contains("Argument"))
    {
        return Kind::Header { version: None };
    }
    let (stamp, rest) = if let Some(rest) = line.strip_prefix("\t\t") {
        (None, rest)
    } else if let Some((stamp, rest)) = mariadb_stamp(line).or_else(|| iso_stamp(line)) {
        (Some(stamp), rest)
    } else {
        return Kind::Other;
    };
    let rest = rest.trim_start_matches(' ');
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let Ok(thread) = rest[..digits].parse::<u64>() else {
        return Kind::Other;
    };
    let Some(rest) = rest[digits..].strip_prefix(' ') else {
        return Kind::Other;
    };
    let (command, argument) = rest.split_once('\t').unwrap_or((rest, ""));
    let is_name = command
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic())
        && command
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == ' ' || c == '_');
    if !is_name {
        return Kind::Other;
    }
    Kind::Entry {
        stamp,
        thread,
        command,
        argument,
    }
}

/// MariaDB's `YYMMDD HH:MM:SS<TAB>` (the hour padded with a space), in local time.
fn mariadb_stamp(line: &str) -> Option<((i64, bool), &str)> {
    let head = line.as_bytes().get(..16)?;
    let digit = |i: usize| head[i].is_ascii_digit();
    let shape = (0..6).all(digit)
        && head[6] == b' '
        && (head[7] == b' ' || digit(7))
        && digit(8)
        && head[9] == b':'
        && digit(10)
        && digit(11)
        && head[12] == b':'
        && digit(13)
        && digit(14)
        && head[15] == b'\t';
    if !shape {
        return None;
    }
    let number = |from: usize, to: usize| -> i32 { line[from..to].trim().parse().unwrap_or(-1) };
    let (year, month, day) = (2000 + number(0, 2), number(2, 4), number(4, 6));
    let (hour, minute, second) = (number(7, 9), number(10, 12), number(13, 15));
    if !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || !(0..=23).contains(&hour)
        || !(0..=59).contains(&minute)
        || !(0..=60).contains(&second)
    {
        return None;
    }
    let seconds = local_unix_seconds(year, month, day, hour, minute, second);
    Some(((seconds * 1_000_000, false), &line[16..]))
}

/// MySQL's `2025-11-23T17:05:20.123456Z<TAB>`, in UTC, to the microsecond.
fn iso_stamp(line: &str) -> Option<((i64, bool), &str)> {
    let (stamp, rest) = line.split_once('\t')?;
    if stamp.len() < 20 || !stamp.as_bytes()[..4].iter().all(u8::is_ascii_digit) {
        return None;
    }
    let time = humantime::parse_rfc3339(stamp).ok()?;
    let micros = time.duration_since(std::time::UNIX_EPOCH).ok()?.as_micros();
    Some(((i64::try_from(micros).ok()?, true), rest))
}

#[cfg(test)]
mod tests;
