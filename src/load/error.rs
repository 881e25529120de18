//! A load that fails says which chunk, how many rows made it, the server's error, and
//! what to change. Nothing is retried silently.

use std::fmt;

use crate::sqlerror::hint_for_code;

#[derive(Debug, Clone)]
pub struct LoadError {
    pub table: String,
    /// The id range being written when it failed (None: during setup).
    pub chunk: Option<(u64, u64)>,
    pub rows_in_table: Option<u64>,
    pub server_error: String,
    pub code: Option<u16>,
    pub hint: Option<&'static str>,
    /// It failed building the secondary indexes after the rows were in.
    pub index_build: bool,
}

impl LoadError {
    pub(super) fn setup(table: &str, message: String) -> Self {
        LoadError {
            table: table.into(),
            chunk: None,
            rows_in_table: None,
            server_error: message,
            code: None,
            hint: None,
            index_build: false,
        }
    }

    /// A failed statement while creating the table (DDL, session settings).
    pub(super) fn ddl(table: &str, err: &mysql::Error) -> Self {
        LoadError {
            chunk: None,
            ..LoadError::chunk(table, 0, 0, err)
        }
    }

    pub(super) fn index(table: &str, message: String) -> Self {
        LoadError {
            hint: Some("building the secondary indexes failed after the rows were loaded"),
            index_build: true,
            ..LoadError::setup(table, message)
        }
    }

    pub(super) fn chunk(table: &str, first: u64, last: u64, err: &mysql::Error) -> Self {
        let code = match err {
            mysql::Error::MySqlError(server) => Some(server.code),
            _ => None,
        };
        LoadError {
            table: table.into(),
            chunk: Some((first, last)),
            rows_in_table: None,
            server_error: crate::server::describe_mysql_error(err),
            code,
            hint: hint_for(code, err),
            index_build: false,
        }
    }

    /// What the load was doing when it failed, for a message from outside that names it:
    /// "the load of table sbtest1 (rows 1..=100000)", "the index build of table sbtest1".
    pub fn during(&self) -> String {
        match self.chunk {
            Some((first, last)) => {
                format!("the load of table {} (rows {first}..={last})", self.table)
            }
            None if self.index_build => format!("the index build of table {}", self.table),
            None => format!("the preparation of table {}", self.table),
        }
    }
}

fn hint_for(code: Option<u16>, err: &mysql::Error) -> Option<&'static str> {
    match code {
        Some(code) => hint_for_code(code),
        None if matches!(err, mysql::Error::IoError(_) | mysql::Error::DriverError(_) | mysql::Error::CodecError(_)) => {
            Some("the connection to the server was lost: the server may have crashed or run out of memory; see its error log")
        }
        None => None,
    }
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.chunk {
            Some((first, last)) => {
                write!(f, "loading {} failed at rows {first}..={last}", self.table)?
            }
            None => write!(f, "preparing {} failed", self.table)?,
        }
        if let Some(rows) = self.rows_in_table {
            write!(f, " ({rows} rows are in the table)")?;
        }
        write!(f, ": {}", self.server_error)?;
        if let Some(hint) = self.hint {
            write!(f, "; {hint}")?;
        }
        Ok(())
    }
}

impl std::error::Error for LoadError {}
