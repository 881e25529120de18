//! MySQL errors are data: classified by error number into those a run counts and survives
//! (as sysbench's --mysql-ignore-errors does for deadlocks) and those that end a cell.

use serde::{Deserialize, Serialize};

/// ER_LOCK_DEADLOCK: the server rolled the transaction back; retrying is the client's job.
pub const ER_LOCK_DEADLOCK: u16 = 1213;
/// ER_LOCK_WAIT_TIMEOUT: innodb_lock_wait_timeout (or lock_wait_timeout) elapsed.
pub const ER_LOCK_WAIT_TIMEOUT: u16 = 1205;

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

pub fn classify(kind_index: usize, err: &mysql::Error) -> QueryFailure {
    match err {
        mysql::Error::MySqlError(server_error) => QueryFailure {
            kind_index,
            code: Some(server_error.code),
            message: server_error.to_string(),
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
            message: crate::server::describe_mysql_error(other),
            class: ErrorClass::Fatal,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
