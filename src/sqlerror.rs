//! What enginebench knows of MySQL/MariaDB errors, a leaf every stage may use: one line
//! for an error without the client crate's noise, the fix users need for error numbers
//! with a known one (engine limits, server settings), and the classification of query
//! errors into those a run counts and survives (as sysbench's --mysql-ignore-errors does
//! for deadlocks) and those that end a cell. It must not know which stage met the error.

use serde::{Deserialize, Serialize};

/// ER_LOCK_DEADLOCK: the server rolled the transaction back; retrying is the client's job.
pub const ER_LOCK_DEADLOCK: u16 = 1213;
/// ER_LOCK_WAIT_TIMEOUT: innodb_lock_wait_timeout (or lock_wait_timeout) elapsed.
pub const ER_LOCK_WAIT_TIMEOUT: u16 = 1205;
/// ER_STATEMENT_TIMEOUT: max_statement_time (set by --query-timeout) elapsed.
pub const ER_STATEMENT_TIMEOUT: u16 = 1969;
/// ER_QUERY_TIMEOUT: MySQL's max_execution_time (set by --query-timeout) elapsed.
pub const ER_QUERY_TIMEOUT: u16 = 3024;
/// ER_WARNING_NOT_COMPLETE_ROLLBACK: a warning, not an error: a ROLLBACK could not undo
/// the changes made to non-transactional tables (MyISAM, MEMORY, Aria without
/// transactions); they stay in place.
pub const ER_WARNING_NOT_COMPLETE_ROLLBACK: u16 = 1196;
/// The mismatch that counts ROLLBACKs that undid nothing (a warning on the ROLLBACK, as
/// 1196), for every kind that looks (Lua scripts, replays): a set-up with one is marked not
/// comparable, its transactions not what the others ran.
pub const ROLLBACK_NOT_HONOURED: &str = "rollback";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorClass {
    /// Counted and the run goes on.
    Survivable,
    /// Ends the cell; the error is kept in the results.
    Fatal,
}

#[derive(Debug, Clone)]
pub struct QueryFailure {
    pub kind_index: usize,
    /// The MySQL error number, when the server sent one.
    pub code: Option<u16>,
    pub message: String,
    pub class: ErrorClass,
}

/// What to change when the server answers with `code`: engine limits and server settings
/// users meet when comparing engines. One table for loads, DDL and queries.
pub fn hint_for_code(code: u16) -> Option<&'static str> {
    Some(match code {
        4166 | 1148 => {
            "the server refuses LOAD DATA LOCAL INFILE: set local_infile=ON on it (SET GLOBAL local_infile=1) or pick another --load-method"
        }
        1153 => "a statement exceeded max_allowed_packet: raise it with --server-opt max_allowed_packet=64M or lower --rows-per-statement",
        1114 => {
            "the table is full: for MEMORY raise --server-opt max_heap_table_size (and tmp_table_size); on tmpfs or a small disk, free space or lower --rows"
        }
        1021 | 3 => "the disk or tmpfs holding the datadir is full: free space, or lower --rows",
        1062 => "a duplicate key: the table was not empty or the generator repeats keys",
        1163 => "MEMORY tables cannot hold TEXT/BLOB columns: use VARCHAR(n) (stored fixed-length), or another engine",
        1118 => "the row is too large for this engine: shorten the columns, or use TEXT/BLOB where the engine stores them off-page (InnoDB)",
        1214 => "this engine has no FULLTEXT indexes: drop the index from the table definition or use InnoDB, MyISAM or Aria",
        1464 => "this engine has no SPATIAL indexes: use InnoDB, MyISAM or Aria",
        1178 => "the engine does not support an option of this table: check the table definition against the engine's limits",
        1286 => "unknown storage engine: the server lacks it (see SHOW ENGINES); load its plugin with --server-opt plugin_load_add=...",
        1461 => "the server allows fewer prepared statements than the connections prepare (each prepares its workload's statements: TPC-C's about fifty): raise max_prepared_stmt_count on the server (SET GLOBAL max_prepared_stmt_count = 1048576) or use fewer --threads",
        1040 => "the server allows fewer connections than --threads: an external server needs max_connections above the largest --threads (plus a few for enginebench's probes), back_log as large for them to connect at once, and open_files_limit (and the service's LimitNOFILE) above both",
        ER_STATEMENT_TIMEOUT | ER_QUERY_TIMEOUT => "a statement ran longer than --query-timeout: raise it, or find what blocks it",
        _ => return None,
    })
}

pub fn classify(kind_index: usize, err: &mysql::Error) -> QueryFailure {
    match err {
        mysql::Error::MySqlError(server_error) => QueryFailure {
            kind_index,
            code: Some(server_error.code),
            message: if matches!(server_error.code, ER_STATEMENT_TIMEOUT | ER_QUERY_TIMEOUT) {
                format!("a query ran longer than --query-timeout and the server aborted it ({server_error}); raise --query-timeout or find what blocks it")
            } else {
                server_error.to_string()
            },
            class: if matches!(server_error.code, ER_LOCK_DEADLOCK | ER_LOCK_WAIT_TIMEOUT) {
                ErrorClass::Survivable
            } else {
                ErrorClass::Fatal
            },
        },
        // Lost connections, protocol errors: the cell cannot go on meaningfully.
        other => QueryFailure {
            kind_index,
            code: None,
            message: describe_mysql_error(other),
            class: ErrorClass::Fatal,
        },
    }
}

/// Turns a mysql crate error into an anyhow error that reads as one line
/// ("ERROR 1227 (42000): Access denied…") instead of the crate's Debug-like Display.
pub trait DescribeMysqlError<T> {
    fn described(self) -> anyhow::Result<T>;
}

impl<T> DescribeMysqlError<T> for Result<T, mysql::Error> {
    fn described(self) -> anyhow::Result<T> {
        self.map_err(|err| anyhow::anyhow!(describe_mysql_error(&err)))
    }
}

/// An error and its causes on one line, as `{:#}` prints them, a server error worded as the
/// server words it (not the crate's `MySqlError { … }`) and followed by what to change when
/// its number has a known fix (too few connections or prepared statements allowed …).
pub fn describe_chain(err: &anyhow::Error) -> String {
    // The server's error is the root cause, so its fix ends the line.
    err.chain()
        .map(|cause| match cause.downcast_ref::<mysql::Error>() {
            Some(mysql_error) => describe_with_hint(mysql_error),
            None => cause.to_string(),
        })
        .collect::<Vec<_>>()
        .join(": ")
}

/// One line for a mysql crate error, with what to change when the error number has a known
/// fix (engine limits, server settings).
pub fn describe_with_hint(err: &mysql::Error) -> String {
    let hint = match err {
        mysql::Error::MySqlError(server) => hint_for_code(server.code),
        _ => None,
    };
    match hint {
        Some(hint) => format!("{}; {hint}", describe_mysql_error(err)),
        None => describe_mysql_error(err),
    }
}

/// One line for a mysql crate error, without the noise of its Debug form.
pub fn describe_mysql_error(err: &mysql::Error) -> String {
    use mysql::DriverError;
    let io_kind = |kind: std::io::ErrorKind, fallback: String| match kind {
        std::io::ErrorKind::ConnectionRefused => "connection refused".to_string(),
        std::io::ErrorKind::NotFound => "socket not found".to_string(),
        _ => fallback,
    };
    match err {
        mysql::Error::IoError(io) => io_kind(io.kind(), io.to_string()),
        mysql::Error::DriverError(DriverError::CouldNotConnect(Some((_, description, kind)))) => {
            io_kind(*kind, description.clone())
        }
        mysql::Error::DriverError(DriverError::ConnectTimeout) => {
            "connection timed out".to_string()
        }
        mysql::Error::MySqlError(server) => server.to_string(),
        // The crate's own Display wraps these as `DriverError { … }` / `CodecError { … }`.
        mysql::Error::DriverError(driver) => driver.to_string(),
        mysql::Error::CodecError(codec) => codec.to_string(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chain_reads_as_the_server_words_it_with_the_fix() {
        let err = anyhow::Error::new(server_error(1461)).context("worker 3");
        let line = describe_chain(&err);
        assert!(
            line.starts_with("worker 3: ERROR 1461 (40001): test; "),
            "{line}"
        );
        assert!(line.contains("max_prepared_stmt_count"), "{line}");
        assert_eq!(describe_chain(&anyhow::anyhow!("plain")), "plain");
    }

    fn server_error(code: u16) -> mysql::Error {
        mysql::Error::MySqlError(mysql::MySqlError {
            state: "40001".into(),
            message: "test".into(),
            code,
        })
    }

    #[test]
    fn deadlocks_and_lock_waits_are_survivable_everything_else_is_fatal() {
        assert_eq!(
            classify(0, &server_error(1213)).class,
            ErrorClass::Survivable
        );
        assert_eq!(
            classify(0, &server_error(1205)).class,
            ErrorClass::Survivable
        );
        assert_eq!(classify(0, &server_error(1062)).class, ErrorClass::Fatal);
        let io = mysql::Error::IoError(std::io::Error::new(std::io::ErrorKind::BrokenPipe, "gone"));
        let failure = classify(2, &io);
        assert_eq!(failure.class, ErrorClass::Fatal);
        assert_eq!(failure.code, None);
        assert_eq!(failure.kind_index, 2);
    }
}
