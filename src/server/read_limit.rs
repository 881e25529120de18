//! Bounds on how long a connection of the `mysql` crate waits for the server: the login
//! handshake (a listener that accepts and never greets must not hang a run), and the
//! runner's own short questions (counters, diagnosis, clean-up), which a server that
//! stopped answering would otherwise leave waiting for ever. The crate fixes a read timeout
//! when it connects; these set the socket's own (SO_RCVTIMEO) around a piece of work, so
//! one connection can bound its probes and still run a long set-up statement. This module
//! must not know what is asked on the connection.

use std::os::fd::{AsRawFd, RawFd};
use std::time::Duration;

/// How long a new connection may wait for the server's greeting and its login answer.
pub const HANDSHAKE_LIMIT: Duration = Duration::from_secs(10);
/// How long the runner's own short questions (SHOW GLOBAL STATUS, PROCESSLIST) may wait.
pub const PROBE_LIMIT: Duration = Duration::from_secs(3);

/// Reads (and writes) on a socket bounded until this drops, then unbounded again.
pub struct ReadLimit {
    fd: RawFd,
}

/// Bounds every read and write on `conn`'s socket by `limit` until the guard drops. A read
/// that times out fails with an I/O error ("would block"), and the connection is then
/// unusable: the caller opens another.
pub fn limit_reads(conn: &impl AsRawFd, limit: Duration) -> ReadLimit {
    let fd = conn.as_raw_fd();
    set_socket_timeouts(fd, Some(limit));
    ReadLimit { fd }
}

impl Drop for ReadLimit {
    fn drop(&mut self) {
        set_socket_timeouts(self.fd, None);
    }
}

/// SO_RCVTIMEO and SO_SNDTIMEO on `fd` (None: wait for ever).
pub fn set_socket_timeouts(fd: RawFd, limit: Option<Duration>) {
    let limit = limit.unwrap_or(Duration::ZERO);
    let value = libc::timeval {
        tv_sec: limit.as_secs() as libc::time_t,
        tv_usec: limit.subsec_micros() as libc::suseconds_t,
    };
    for option in [libc::SO_RCVTIMEO, libc::SO_SNDTIMEO] {
        // SAFETY: setting an option of an open socket from a value that lives across the
        // call; a descriptor that is not a socket only makes the call fail.
        unsafe {
            libc::setsockopt(
                fd,
                libc::SOL_SOCKET,
                option,
                (&value as *const libc::timeval).cast(),
                std::mem::size_of::<libc::timeval>() as libc::socklen_t,
            );
        }
    }
}

/// Whether `err` is a read or write that ran out of its time limit.
pub fn timed_out(err: &mysql::Error) -> bool {
    use mysql_common::proto::codec::error::PacketCodecError;
    let io = match err {
        mysql::Error::IoError(io) => io,
        mysql::Error::CodecError(PacketCodecError::Io(io)) => io,
        _ => return false,
    };
    matches!(
        io.kind(),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
    )
}
