//! A captured workload as the driver runs it: one worker per captured connection, sending
//! that connection's commands in their captured order, each at its captured time scaled by
//! the speed (or at once), timed from that intended start. Text queries run as text
//! (several statements too), prepared statements are prepared and executed with their
//! captured parameters. SQL errors are results, counted per query kind, never the end of the
//! replay; an answer that differs from the captured one (rows, changed rows, error) is
//! counted as a mismatch with its first example, and a ROLLBACK the server warned it could
//! not honour (1196: non-transactional tables keep their changes) is counted apart, as the
//! Lua kind counts it. It must not know where the capture came from.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mysql::prelude::Queryable;

use crate::capture::format::{Command, CommandKind, Response};
use crate::capture::{Capture, ReplayScript};
use crate::driver::{QueryFailure, Worker, Workload};
use crate::measure::QueryRecorder;
use crate::server::ConnectionSpec;
use crate::sqlerror::ErrorClass;

pub struct ReplayWorkload {
    pub shared: Arc<Shared>,
}

pub struct Shared {
    pub capture: Arc<Capture>,
    pub script: Arc<ReplayScript>,
    /// Connections to the replay server, without a database (each worker picks its own).
    pub spec: ConnectionSpec,
    /// The database the snapshot was loaded into, for connections that named none.
    pub database: String,
    /// The captured database that `database` stands for (`--database` mapped it).
    pub renamed_from: Option<String>,
    /// A factor on the captured pace; None: as fast as possible.
    pub speed: Option<f64>,
    /// Per query kind: mismatches seen, and the first one's description.
    mismatches: Mutex<BTreeMap<usize, (u64, String)>>,
    /// ROLLBACKs answered with a warning: changes left in place (1196).
    rollbacks_not_honoured: AtomicU64,
}

impl Shared {
    /// The database a captured name stands for on the replay server.
    fn mapped<'a>(&'a self, captured: &'a str) -> &'a str {
        match &self.renamed_from {
            Some(from) if from == captured => &self.database,
            _ => captured,
        }
    }

    /// `USE captured` as `USE database` when `--database` maps it; None: run as written.
    fn mapped_use(&self, sql: &str) -> Option<String> {
        let from = self.renamed_from.as_deref()?;
        let rest = sql.trim().trim_end_matches(';').trim_end();
        let (keyword, name) = rest.split_at_checked(3)?;
        if !keyword.eq_ignore_ascii_case("use") || !name.starts_with(char::is_whitespace) {
            return None;
        }
        let name = name.trim().trim_matches('`');
        (name == from).then(|| format!("USE `{}`", self.database.replace('`', "``")))
    }
}

impl ReplayWorkload {
    pub fn new(
        capture: Arc<Capture>,
        script: Arc<ReplayScript>,
        spec: ConnectionSpec,
        database: String,
        renamed_from: Option<String>,
        speed: Option<f64>,
    ) -> ReplayWorkload {
        ReplayWorkload {
            shared: Arc::new(Shared {
                capture,
                script,
                spec,
                database,
                renamed_from,
                speed,
                mismatches: Mutex::new(BTreeMap::new()),
                rollbacks_not_honoured: AtomicU64::new(0),
            }),
        }
    }
}

impl Workload for ReplayWorkload {
    /// The `mysql` crate reads its socket blocking: a replay runs one thread per connection.
    fn blocking_client(&self) -> bool {
        true
    }

    fn query_kinds(&self) -> Vec<String> {
        self.shared.script.kinds.clone()
    }

    fn open_worker(&self, worker_index: usize) -> anyhow::Result<Box<dyn Worker>> {
        let script = &self.shared.script.connections[worker_index];
        let mut conn = self.shared.spec.for_connection(worker_index).connect()?;
        let database = match &script.database {
            Some(chosen) => self.shared.mapped(chosen).to_string(),
            None => self.shared.database.clone(),
        };
        // A database the snapshot does not hold is the replayed statements' problem, as
        // it would have been the application's.
        let _ = conn.select_db(&database);
        let registered = crate::driver::abandon::register(std::os::fd::AsRawFd::as_raw_fd(&conn));
        Ok(Box::new(ReplayWorker {
            shared: self.shared.clone(),
            registered,
            conn,
            commands: script.commands.clone(),
            position: 0,
            statements: HashMap::new(),
            intended: None,
        }))
    }

    fn mismatches(&self) -> Vec<(String, u64, String)> {
        let mismatches = self
            .shared
            .mismatches
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        let mut out: Vec<(String, u64, String)> = mismatches
            .iter()
            .map(|(&kind, (count, example))| {
                (
                    self.shared.script.kinds[kind].clone(),
                    *count,
                    example.clone(),
                )
            })
            .collect();
        let ignored = self.shared.rollbacks_not_honoured.load(Ordering::Relaxed);
        if ignored > 0 {
            out.push((
                crate::sqlerror::ROLLBACK_NOT_HONOURED.to_string(),
                ignored,
                format!(
                    "ROLLBACK left changes in place: the server warned that non-transactional tables could not be rolled back ({})",
                    crate::sqlerror::ER_WARNING_NOT_COMPLETE_ROLLBACK
                ),
            ));
        }
        out
    }
}

struct ReplayWorker {
    shared: Arc<Shared>,
    /// Its socket in the cell's list (so a cell can stop waiting for a silent server);
    /// declared before `conn` so that it leaves the list before the socket closes.
    #[allow(dead_code)]
    registered: Option<crate::driver::abandon::Registered>,
    conn: mysql::Conn,
    commands: Vec<usize>,
    position: usize,
    /// Captured statement id → this connection's prepared statement.
    statements: HashMap<u32, mysql::Statement>,
    /// When the current command was due.
    intended: Option<Instant>,
}

/// What the replay got for one command.
#[derive(Default)]
struct Answer {
    rows: u64,
    affected_rows: u64,
    /// Warnings the server raised (summed over result sets).
    warnings: u64,
}

/// The rows and changed rows of every result set a command returned, read to the end.
fn answer_of<T: mysql::prelude::Protocol>(
    mut result: mysql::QueryResult<'_, '_, '_, T>,
) -> Result<Answer, mysql::Error> {
    let mut answer = Answer::default();
    while let Some(set) = result.iter() {
        // An answer without rows (a ROLLBACK's) carries its OK packet until it is read.
        answer.affected_rows += set.affected_rows();
        answer.warnings += u64::from(set.warnings());
        for row in set {
            row?;
            answer.rows += 1;
        }
    }
    Ok(answer)
}

impl ReplayWorker {
    fn run(&mut self, command: &Command) -> Result<Answer, mysql::Error> {
        let none = Answer::default();
        match command.kind {
            CommandKind::Query => {
                let sql = command.sql.as_deref().unwrap_or("");
                let mapped_use = self.shared.mapped_use(sql);
                answer_of(self.conn.query_iter(mapped_use.as_deref().unwrap_or(sql))?)
            }
            CommandKind::Prepare => {
                let statement = self.conn.prep(command.sql.as_deref().unwrap_or(""))?;
                if let Some(id) = command.statement {
                    self.statements.insert(id, statement);
                }
                Ok(none)
            }
            CommandKind::Execute => {
                let statement = match command.statement.and_then(|id| self.statements.get(&id)) {
                    Some(statement) => statement.clone(),
                    // Prepared before the capture began: prepare it now.
                    None => {
                        let statement = self.conn.prep(command.sql.as_deref().unwrap_or(""))?;
                        if let Some(id) = command.statement {
                            self.statements.insert(id, statement.clone());
                        }
                        statement
                    }
                };
                let params: Vec<mysql::Value> =
                    command.params.iter().map(|v| v.to_mysql()).collect();
                let params = if params.is_empty() {
                    mysql::Params::Empty
                } else {
                    mysql::Params::Positional(params)
                };
                answer_of(self.conn.exec_iter(&statement, params)?)
            }
            CommandKind::CloseStatement => {
                if let Some(statement) =
                    command.statement.and_then(|id| self.statements.remove(&id))
                {
                    self.conn.close(statement)?;
                }
                Ok(none)
            }
            CommandKind::InitDb => {
                let chosen = command.database.as_deref().unwrap_or("");
                self.conn.select_db(self.shared.mapped(chosen))?;
                Ok(none)
            }
            CommandKind::Ping => {
                self.conn.ping()?;
                Ok(none)
            }
            CommandKind::ResetStatement
            | CommandKind::Connect
            | CommandKind::Quit
            | CommandKind::Other => Ok(none),
        }
    }

    /// Whether the replay's answer differs from the captured one, and how.
    fn differs(captured: &Response, replayed: &Result<Answer, mysql::Error>) -> Option<String> {
        match (captured.error, replayed) {
            (None, Ok(answer)) => {
                if answer.rows != captured.rows {
                    Some(format!(
                        "captured {} row(s), replayed {}",
                        captured.rows, answer.rows
                    ))
                } else if answer.affected_rows != captured.affected_rows {
                    Some(format!(
                        "captured {} changed row(s), replayed {}",
                        captured.affected_rows, answer.affected_rows
                    ))
                } else {
                    None
                }
            }
            (Some(code), Ok(_)) => Some(format!("captured error {code}, replayed without error")),
            (expected, Err(err)) => {
                let code = error_code(err);
                let replayed = match err {
                    mysql::Error::MySqlError(err) => format!("error {}: {}", err.code, err.message),
                    other => other.to_string(),
                };
                (expected != code).then(|| match expected {
                    Some(expected) => format!("captured error {expected}, replayed {replayed}"),
                    None => format!("captured success, replayed {replayed}"),
                })
            }
        }
    }
}

/// Whether the capture masked a credential of `command` (in its text, or a parameter of a
/// prepared statement's execute).
fn carries_masked_secret(command: &Command) -> bool {
    let mask = crate::capture::secrets::MASKED_VALUE;
    command
        .sql
        .as_deref()
        .is_some_and(crate::capture::secrets::was_masked)
        || command
            .params
            .iter()
            .any(|value| matches!(value, crate::capture::format::Value::Text(text) if text == mask))
}

/// Whether a command is a ROLLBACK (of the transaction or to a savepoint), as text or
/// prepared.
fn is_rollback(command: &Command) -> bool {
    matches!(command.kind, CommandKind::Query | CommandKind::Execute)
        && command.sql.as_deref().is_some_and(|sql| {
            sql.trim_start()
                .get(..8)
                .is_some_and(|verb| verb.eq_ignore_ascii_case("rollback"))
        })
}

fn error_code(err: &mysql::Error) -> Option<u16> {
    match err {
        mysql::Error::MySqlError(err) => Some(err.code),
        _ => None,
    }
}

impl Worker for ReplayWorker {
    fn next_start(&mut self, measure_started: Instant) -> Option<Instant> {
        let index = *self.commands.get(self.position)?;
        let due = match self.shared.speed {
            None => Instant::now(),
            Some(speed) => {
                let offset_us = (self.shared.capture.commands[index].start_us
                    - self.shared.script.origin_us)
                    .max(0) as f64;
                measure_started + Duration::from_secs_f64(offset_us / 1e6 / speed)
            }
        };
        self.intended = Some(due);
        Some(due)
    }

    fn done(&self) -> bool {
        self.position >= self.commands.len()
    }

    fn event(&mut self, recorder: &mut QueryRecorder) -> Result<(), QueryFailure> {
        let Some(&index) = self.commands.get(self.position) else {
            return Ok(());
        };
        self.position += 1;
        let shared = self.shared.clone();
        let command = &shared.capture.commands[index];
        let Some(kind) = shared.script.kind_of[index] else {
            return Ok(());
        };
        if carries_masked_secret(command) {
            // Its credential never reached the capture: not run, and said per digest.
            let mut mismatches = shared.mismatches.lock().unwrap_or_else(|p| p.into_inner());
            let entry = mismatches.entry(kind).or_insert_with(|| {
                (
                    0,
                    format!(
                        "connection {}: {}: not replayed: the capture masked its credential (secrets are never stored)",
                        command.connection,
                        command.sql.as_deref().unwrap_or("(no text)")
                    ),
                )
            });
            entry.0 += 1;
            return Ok(());
        }
        recorder.statement_started(kind);
        let started = Instant::now();
        let outcome = self.run(command);
        let from = self.intended.take().unwrap_or(started).min(started);
        let latency_us = from.elapsed().as_micros() as u64;
        match &outcome {
            Ok(answer) => {
                recorder.record_ok(kind, latency_us);
                if answer.warnings > 0 && is_rollback(command) {
                    shared
                        .rollbacks_not_honoured
                        .fetch_add(1, Ordering::Relaxed);
                }
            }
            Err(err) => {
                let failure = crate::sqlerror::classify(kind, err);
                // A lost connection ends this connection's replay; SQL errors are results.
                if failure.code.is_none() && failure.class == ErrorClass::Fatal {
                    recorder.record_err(kind, latency_us, None);
                    return Err(failure);
                }
                recorder.record_err(kind, latency_us, failure.code);
            }
        }
        if let Some(captured) = &command.response {
            if let Some(how) = Self::differs(captured, &outcome) {
                let mut mismatches = shared.mismatches.lock().unwrap_or_else(|p| p.into_inner());
                let entry = mismatches.entry(kind).or_insert_with(|| {
                    let params = if command.params.is_empty() {
                        String::new()
                    } else {
                        format!(" with {:?}", command.params)
                    };
                    (
                        0,
                        format!(
                            "connection {}: {}{params}: {how}",
                            command.connection,
                            command.sql.as_deref().unwrap_or("(no text)")
                        ),
                    )
                });
                entry.0 += 1;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_that_differ_say_how() {
        let captured = Response {
            rows: 3,
            ..Default::default()
        };
        let same = Ok(Answer {
            rows: 3,
            ..Default::default()
        });
        assert_eq!(ReplayWorker::differs(&captured, &same), None);
        let fewer = Ok(Answer {
            rows: 2,
            ..Default::default()
        });
        assert_eq!(
            ReplayWorker::differs(&captured, &fewer).as_deref(),
            Some("captured 3 row(s), replayed 2")
        );
        let failed = Response {
            error: Some(1054),
            ..Default::default()
        };
        assert!(ReplayWorker::differs(&failed, &same)
            .unwrap()
            .contains("captured error 1054"));
    }

    #[test]
    fn a_rollback_is_told_by_its_verb_as_text_or_prepared() {
        let command = |kind, sql: &str| Command {
            connection: 1,
            start_us: 0,
            end_us: 0,
            kind,
            sql: Some(sql.into()),
            statement: None,
            params: Vec::new(),
            database: None,
            response: None,
        };
        assert!(is_rollback(&command(CommandKind::Query, "ROLLBACK")));
        assert!(is_rollback(&command(
            CommandKind::Query,
            "  rollback to savepoint a"
        )));
        assert!(is_rollback(&command(CommandKind::Execute, "Rollback")));
        assert!(!is_rollback(&command(CommandKind::Query, "COMMIT")));
        assert!(!is_rollback(&command(CommandKind::Prepare, "ROLLBACK")));
        assert!(!is_rollback(&command(
            CommandKind::Query,
            "SELECT 'rollback'"
        )));
    }
}
