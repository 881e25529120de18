//! A load that fails says which chunk, how many rows made it, the server's error, and
//! what to change. Nothing is retried silently.

use std::fmt;

#[derive(Debug, Clone)]
pub struct LoadError {
    pub table: String,
    /// The id range being written when it failed (None: during setup).
    pub chunk: Option<(u64, u64)>,
    pub rows_in_table: Option<u64>,
    pub server_error: String,
    pub code: Option<u16>,
    pub hint: Option<&'static str>,
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
        }
    }

    pub(super) fn index(table: &str, message: String) -> Self {
        LoadError {
            hint: Some("building the secondary indexes failed after the rows were loaded"),
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
        }
    }
}

fn hint_for(code: Option<u16>, err: &mysql::Error) -> Option<&'static str> {
    match code {
        Some(4166) | Some(1148) => Some(
            "the server refuses LOAD DATA LOCAL INFILE: set local_infile=ON on it (SET GLOBAL local_infile=1) or pick another --load-method",
        ),
        Some(1153) => Some("a statement exceeded max_allowed_packet: raise it with --server-opt max_allowed_packet=64M or lower --rows-per-statement"),
        Some(1114) => Some(
            "the table is full: for MEMORY raise --server-opt max_heap_table_size (and tmp_table_size); on tmpfs or a small disk, free space or lower --rows",
        ),
        Some(1062) => Some("a duplicate key: the table was not empty or the generator repeats keys"),
        Some(1021) | Some(3) => Some("the disk or tmpfs holding the datadir is full: free space, or lower --rows"),
        _ if matches!(err, mysql::Error::IoError(_) | mysql::Error::DriverError(_)) => {
            Some("the connection to the server was lost: the server may have crashed or run out of memory; see its error log")
        }
        _ => None,
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
