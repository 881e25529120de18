//! What a server says of itself when a client logs in: its version, from the greeting
//! libmariadb keeps whole.
//!
//! Owns: reading the greeting's version. Must not send a statement.

use std::ffi::{c_char, CStr};

use super::{Connection, Mysql};
use crate::server::ConnectionSpec;

#[link(name = "mariadb")]
extern "C" {
    fn mysql_get_server_info(mysql: *mut Mysql) -> *const c_char;
}

impl Connection {
    /// The server's version as its greeting gave it, read by a login that sends nothing
    /// (not even the spec's init statements): the whole string, as `@@version` reads it.
    /// MariaDB 10.x greets as `5.5.5-10.11.19-MariaDB…` (the prefix old clients expected);
    /// the mysql crate keeps only the 5.5.5, libmariadb keeps the rest.
    pub fn greeting_version(spec: &ConnectionSpec) -> Result<String, mysql::Error> {
        let connection = Connection::open(spec)?;
        // SAFETY: a connected handle; its version string is copied before it is closed.
        let version = unsafe { mysql_get_server_info(connection.mysql) };
        if version.is_null() {
            return Ok(String::new());
        }
        // SAFETY: non-null, a NUL-terminated string owned by the handle.
        let version = unsafe { CStr::from_ptr(version) }.to_string_lossy();
        Ok(version
            .strip_prefix("5.5.5-")
            .unwrap_or(&version)
            .to_string())
    }
}
