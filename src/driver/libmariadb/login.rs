//! What a libmariadb connection opens with: its login as C strings, and the time limits
//! set on the handle before it connects.
//!
//! Owns: turning the connection's options into libmariadb's. Must not connect.

use std::ffi::{c_uint, CString};

use super::{c_string, mysql_options, Mysql, MYSQL_OPT_CONNECT_TIMEOUT, MYSQL_OPT_READ_TIMEOUT};

/// What a connection logs in with, as C strings that live until the connect call returns.
pub(super) struct Login {
    pub(super) host: CString,
    pub(super) user: CString,
    pub(super) pass: Option<CString>,
    pub(super) db: Option<CString>,
    pub(super) socket: Option<CString>,
    pub(super) port: c_uint,
}

impl Login {
    pub(super) fn of(opts: &mysql::Opts) -> Result<Login, mysql::Error> {
        // libmariadb takes "localhost" to mean its default socket; the mysql crate connects
        // over TCP unless a socket is named, and so do we.
        let host = match opts.get_ip_or_hostname().as_ref() {
            "localhost" => c_string("127.0.0.1")?,
            other => c_string(other)?,
        };
        Ok(Login {
            host,
            user: c_string(opts.get_user().unwrap_or_default())?,
            pass: opts.get_pass().map(c_string).transpose()?,
            db: opts.get_db_name().map(c_string).transpose()?,
            socket: opts.get_socket().map(c_string).transpose()?,
            port: c_uint::from(opts.get_tcp_port()),
        })
    }
}

/// The same time limits as the mysql crate's connections: a server that stops answering
/// ends the cell instead of hanging it.
pub(super) fn set_time_limits(mysql: *mut Mysql, opts: &mysql::Opts) {
    let seconds = |d: Option<std::time::Duration>| d.map(|d| d.as_secs().max(1) as c_uint);
    for (option, value) in [
        (
            MYSQL_OPT_CONNECT_TIMEOUT,
            seconds(opts.get_tcp_connect_timeout()),
        ),
        (
            MYSQL_OPT_READ_TIMEOUT,
            seconds(opts.get_read_timeout().copied()),
        ),
    ] {
        if let Some(value) = value {
            // SAFETY: both options take a pointer to an unsigned int, read during the call.
            unsafe { mysql_options(mysql, option, (&value as *const c_uint).cast()) };
        }
    }
}
