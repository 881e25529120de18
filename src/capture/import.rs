//! What every capture source without a proxy shares: numbering the server's thread ids into
//! connections, giving prepares statement ids, mapping the general log's command names
//! (which the other sources are translated into) to capture commands, keeping each
//! connection's commands in order, and timing the commands of a log that only writes whole
//! seconds, and reading a column of the server's own tables. The sources (`general_log`,
//! `server_audit`, `performance_schema`) own reading their log; this must not know any of
//! their formats.

use std::collections::HashMap;

use super::format::{CaptureWriter, Command, CommandKind, End, Line, Response};

/// What an import wrote.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ImportSummary {
    pub commands: u64,
    pub connections: u64,
    /// What the capture lacks or guessed, for the user to read.
    pub warnings: Vec<String>,
    /// Statements stored with their credential masked.
    pub secrets_masked: u64,
}

/// One command as a log has it, its command named as the general log names it (`Query`,
/// `Connect`, `Prepare`, `Execute`, `Quit`, `Init DB` …).
#[derive(Debug, Clone, PartialEq)]
pub struct Logged {
    /// When it started, µs since the epoch.
    pub time_us: i64,
    /// How long it ran (0 when the log does not say).
    pub duration_us: i64,
    /// The server's thread (connection) id.
    pub thread: u64,
    pub command: String,
    pub argument: String,
    /// What the server answered, when the log says (none: the log records no answers).
    pub response: Option<Response>,
}

impl Logged {
    /// A command of a log that records neither durations nor answers.
    pub fn bare(time_us: i64, thread: u64, command: &str, argument: String) -> Logged {
        Logged {
            time_us,
            duration_us: 0,
            thread,
            command: command.to_string(),
            argument,
            response: None,
        }
    }
}

/// Numbers connections, gives prepares their ids, maps command names, and writes.
pub struct Importer {
    writer: CaptureWriter,
    first_us: i64,
    /// The latest end written, µs after `first_us`: the capture's duration.
    last_us: i64,
    /// The log's thread id → the capture's connection number (the latest, for a thread id
    /// used again), and how many were numbered.
    connections: HashMap<u64, u64>,
    numbered: u64,
    /// Per connection: the last statement id given, and the last start written (a
    /// connection's commands never go back in time; across connections a source may
    /// deliver a long statement after shorter ones that started later).
    statements: HashMap<u64, u32>,
    last_start_us: HashMap<u64, i64>,
    commands: u64,
}

impl Importer {
    /// An importer writing to `writer`, its times counted from `first_us` (µs since the
    /// epoch: the header's start).
    pub fn new(writer: CaptureWriter, first_us: i64) -> Importer {
        Importer {
            writer,
            first_us,
            last_us: 0,
            connections: HashMap::new(),
            numbered: 0,
            statements: HashMap::new(),
            last_start_us: HashMap::new(),
            commands: 0,
        }
    }

    /// Whether this thread id has a connection number yet.
    pub fn knows(&self, thread: u64) -> bool {
        self.connections.contains_key(&thread)
    }

    /// Writes a command that records neither duration nor answer.
    pub fn push(
        &mut self,
        time_us: i64,
        thread: u64,
        command_type: &str,
        argument: String,
    ) -> anyhow::Result<()> {
        self.push_logged(Logged::bare(time_us, thread, command_type, argument))
    }

    /// Writes a connection's opening, into `database`, for a source that logs no connect
    /// (a thread seen for the first time).
    pub fn open(
        &mut self,
        time_us: i64,
        thread: u64,
        database: Option<String>,
    ) -> anyhow::Result<()> {
        let mut command = self.command(time_us, 0, thread, true, None);
        command.kind = CommandKind::Connect;
        command.database = database;
        self.write(command)
    }

    pub fn push_logged(&mut self, logged: Logged) -> anyhow::Result<()> {
        let Logged {
            time_us,
            duration_us,
            thread,
            command: command_type,
            argument,
            response,
        } = logged;
        let mut command = self.command(
            time_us,
            duration_us,
            thread,
            command_type == "Connect",
            response,
        );
        let connection = command.connection;
        match command_type.as_str() {
            "Connect" if argument.starts_with("Access denied") => {
                command.sql = Some(argument);
            }
            "Connect" => {
                command.kind = CommandKind::Connect;
                command.database = connect_database(&argument);
            }
            "Query" => {
                command.kind = CommandKind::Query;
                command.sql = Some(argument);
            }
            "Prepare" => {
                // The logs have no statement ids: each prepare gets the next of its connection.
                let id = self.statements.entry(connection).or_insert(0);
                *id += 1;
                command.kind = CommandKind::Prepare;
                command.statement = Some(*id);
                command.sql = Some(argument);
            }
            "Execute" => {
                // The general log writes the executed statement with its values substituted,
                // not which statement ran with which parameters: it is kept as a text query,
                // so a replay runs it as text (its digest is its prepare's).
                command.kind = CommandKind::Query;
                command.sql = Some(argument);
            }
            "Close stmt" => command.kind = CommandKind::CloseStatement,
            "Reset stmt" => command.kind = CommandKind::ResetStatement,
            "Init DB" => {
                command.kind = CommandKind::InitDb;
                command.database = Some(argument.trim().to_string()).filter(|d| !d.is_empty());
            }
            "Quit" => command.kind = CommandKind::Quit,
            "Ping" => command.kind = CommandKind::Ping,
            _ => {
                command.sql = Some(argument).filter(|a| !a.is_empty());
            }
        }
        self.write(command)
    }

    /// A command of `thread` (numbered now if new, or again at a connect: thread ids start
    /// again after a server restart), its start kept in its connection's order.
    fn command(
        &mut self,
        time_us: i64,
        duration_us: i64,
        thread: u64,
        connects: bool,
        response: Option<Response>,
    ) -> Command {
        let connection = match self.connections.get(&thread) {
            Some(&number) if !connects => number,
            _ => {
                self.numbered += 1;
                self.connections.insert(thread, self.numbered);
                self.numbered
            }
        };
        let last = self.last_start_us.entry(connection).or_insert(0);
        let start_us = (time_us - self.first_us).max(*last);
        *last = start_us;
        let end_us = start_us + duration_us.max(0);
        self.last_us = self.last_us.max(end_us);
        Command {
            connection,
            start_us,
            end_us,
            kind: CommandKind::Other,
            sql: None,
            statement: None,
            params: Vec::new(),
            database: None,
            response,
        }
    }

    fn write(&mut self, command: Command) -> anyhow::Result<()> {
        self.writer.write(&Line::Command(command))?;
        self.commands += 1;
        if self.commands.is_multiple_of(1000) {
            self.writer.flush()?;
        }
        Ok(())
    }

    /// Makes what was written so far readable (a source that runs until Ctrl-C flushes at
    /// each batch, so a cut capture keeps it).
    pub fn flush(&mut self) -> anyhow::Result<()> {
        Ok(self.writer.flush()?)
    }

    /// Closes the capture with its end line.
    pub fn finish(mut self, warnings: Vec<String>) -> anyhow::Result<ImportSummary> {
        let connections = self.numbered;
        self.writer.write(&Line::End(End {
            commands: self.commands,
            connections,
            duration_us: self.last_us,
            // Counted by the writer, which masks them.
            secrets_masked: 0,
            proxy_cost: None,
        }))?;
        self.writer.flush()?;
        Ok(ImportSummary {
            commands: self.commands,
            connections,
            warnings,
            secrets_masked: self.writer.secrets_masked(),
        })
    }
}

/// Column `index` of a row the server's own table gave (`table` names it in errors).
pub(crate) fn take_column<T: mysql::prelude::FromValue>(
    row: &mut mysql::Row,
    index: usize,
    table: &str,
) -> anyhow::Result<T> {
    use anyhow::Context;
    row.take_opt(index)
        .with_context(|| format!("{table}: column {} is missing", index + 1))?
        .map_err(|err| {
            anyhow::anyhow!(
                "{table}: column {} is not what MariaDB writes there ({err})",
                index + 1
            )
        })
}

/// The database of a Connect's argument, `user@host on DB using Socket` (`on  using` when
/// the client chose none).
pub(crate) fn connect_database(argument: &str) -> Option<String> {
    let after_user = argument.find('@').map_or(argument, |at| &argument[at..]);
    let (_, rest) = after_user.split_once(" on ")?;
    let database = rest.split(" using ").next().unwrap_or(rest).trim();
    (!database.is_empty()).then(|| database.to_string())
}

/// Seconds since the epoch of a local time, as the server wrote it (its time zone is taken
/// to be this machine's).
pub(crate) fn local_unix_seconds(
    year: i32,
    month: i32,
    day: i32,
    hour: i32,
    minute: i32,
    second: i32,
) -> i64 {
    // SAFETY: mktime reads a tm we own, initialised field by field; zeroed is a valid tm.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    tm.tm_year = year - 1900;
    tm.tm_mon = month - 1;
    tm.tm_mday = day;
    tm.tm_hour = hour;
    tm.tm_min = minute;
    tm.tm_sec = second;
    tm.tm_isdst = -1;
    // SAFETY: as above; mktime only normalises the tm and returns the time.
    let local = unsafe { libc::mktime(&mut tm) };
    if local != -1 {
        return local as i64;
    }
    // No usable time zone: count the time as UTC (days from the civil date, H. Hinnant).
    let (y, m) = if month <= 2 {
        (i64::from(year) - 1, i64::from(month) + 9)
    } else {
        (i64::from(year), i64::from(month) - 3)
    };
    let era = y.div_euclid(400);
    let year_of_era = y - era * 400;
    let day_of_year = (153 * m + 2) / 5 + i64::from(day) - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    let days = era * 146_097 + day_of_era - 719_468;
    days * 86_400 + i64::from(hour) * 3600 + i64::from(minute) * 60 + i64::from(second)
}

/// An entry with its time in µs since the epoch.
pub struct Timed<T> {
    pub time_us: i64,
    pub entry: T,
}

/// Gives each entry of a log that writes whole seconds a time: the entries of one second
/// spread evenly over it, in order; times never go backwards.
pub struct Spacer<T> {
    /// The current group's start (µs) and whether its time is exact; none before the first
    /// time of the log.
    group_start: Option<(i64, bool)>,
    group: Vec<T>,
    last_us: Option<i64>,
    /// Times that went backwards (threads logging out of order).
    pub backwards: u64,
    /// Entries before any time (given the second before the first).
    pub before_first_time: u64,
}

impl<T> Default for Spacer<T> {
    fn default() -> Self {
        Spacer {
            group_start: None,
            group: Vec::new(),
            last_us: None,
            backwards: 0,
            before_first_time: 0,
        }
    }
}

impl<T> Spacer<T> {
    /// Adds an entry with the time its line gave (µs since the epoch, and whether to the
    /// µs), or none (a log that writes a time only when it changes); returns the group it
    /// closed, timed.
    pub fn add(&mut self, stamp: Option<(i64, bool)>, entry: T) -> Option<Vec<Timed<T>>> {
        let new_group = match (stamp, self.group_start) {
            (None, _) => false,
            // A log that writes every line's time: a group ends when the time changes.
            (Some(stamp), Some(start)) => stamp != start,
            (Some(_), None) => true,
        };
        let closed = if new_group && !self.group.is_empty() {
            let start = self.group_start.unwrap_or_else(|| {
                self.before_first_time = self.group.len() as u64;
                (stamp.map_or(0, |s| s.0) - 1_000_000, false)
            });
            Some(self.time(start))
        } else {
            None
        };
        if let Some(stamp) = stamp {
            self.group_start = Some(stamp);
        }
        self.group.push(entry);
        closed
    }

    /// The last group, timed.
    pub fn finish(&mut self) -> Vec<Timed<T>> {
        if self.group.is_empty() {
            return Vec::new();
        }
        let start = self.group_start.unwrap_or_else(|| {
            self.before_first_time = self.group.len() as u64;
            (0, false)
        });
        self.time(start)
    }

    fn time(&mut self, (start, exact): (i64, bool)) -> Vec<Timed<T>> {
        let group = std::mem::take(&mut self.group);
        let step = if exact {
            0
        } else {
            1_000_000 / group.len() as i64
        };
        if self.last_us.is_some_and(|last| start < last) {
            self.backwards += 1;
        }
        group
            .into_iter()
            .enumerate()
            .map(|(index, entry)| {
                let time = (start + index as i64 * step).max(self.last_us.unwrap_or(i64::MIN));
                self.last_us = Some(time);
                Timed {
                    time_us: time,
                    entry,
                }
            })
            .collect()
    }
}
