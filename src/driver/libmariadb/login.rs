//! What a libmariadb connection opens with: its login as C strings, and the time limits
//! set on the handle before it connects.
//!
//! Also whether a failed login reached the server, and the counting of the statements
//! enginebench adds to a workload connection's login.
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

/// Whether a login that failed with `err` (as [`super::Connection::connect`] gives it) reached
/// the server, which then counted a connection: every failure but libmariadb's own to open
/// the transport (CR_CONNECTION_ERROR 2002: no such socket or nothing on it;
/// CR_CONN_HOST_ERROR 2003: nothing listening at the address; CR_UNKNOWN_HOST 2005: no
/// such host).
pub fn login_reached_server(err: &mysql::Error) -> bool {
    match err {
        mysql::Error::IoError(io) => {
            let text = io.to_string();
            ![
                "client error 2002:",
                "client error 2003:",
                "client error 2005:",
            ]
            .iter()
            .any(|code| text.starts_with(code))
        }
        _ => true,
    }
}

/// The statements enginebench added to a workload connection's login (`--query-timeout`'s
/// bound, a script's storage engine): its set-up's, not the workload's. The cell counts
/// the connection among its threads; the server runs these too.
pub fn count_init_statements(spec: &crate::server::ConnectionSpec) {
    let init = spec.opts().get_init().len() as u64;
    if init > 0 {
        crate::server::own_load::count_sent(
            crate::server::Purpose::Setup,
            &crate::server::OwnCounts {
                queries: init,
                ..Default::default()
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_login_reached_the_server_unless_libmariadb_could_not_open_the_transport() {
        let client = |code: u32| super::super::error(code, String::new(), "its text".into());
        assert!(!login_reached_server(&client(2002)));
        assert!(!login_reached_server(&client(2003)));
        assert!(!login_reached_server(&client(2005)));
        // Lost during the handshake, TLS refused: the server counted the connection.
        assert!(login_reached_server(&client(2013)));
        assert!(login_reached_server(&client(2026)));
        // Refused by the server (access denied).
        assert!(login_reached_server(&client(1045)));
    }
}
