//! A thin client over libmariadb, the C library sysbench itself uses, for the sysbench
//! workloads: server-side prepared statements executed with `mysql_stmt_execute` and their
//! results read with `mysql_stmt_store_result` and dropped without decoding a row, exactly
//! as sysbench's driver does. The `mysql` crate decodes every row of every result into
//! values, which costs the client CPU per range query that sysbench never spends.
//!
//! Errors come back as `mysql::Error`, so the driver classifies them as it does the crate's:
//! server errors keep their number; client errors (a lost connection) become I/O errors.
//! Each connection belongs to one worker thread, or to one coroutine of an event loop
//! (`driver::events`): a connection opened inside a coroutine is non-blocking and every
//! call goes through libmariadb's `*_start`/`*_cont` functions, suspending the coroutine
//! while the library waits for its socket.

use std::ffi::{c_char, c_int, c_uint, c_ulong, c_void, CStr, CString};
use std::ptr;
use std::sync::Once;

use crate::driver::events::{self, Wait};
use crate::server::ConnectionSpec;

mod greeting;
mod login;
pub use login::{count_init_statements, login_reached_server};
use login::{set_time_limits, Login};

#[allow(non_camel_case_types)]
type my_bool = c_char;

#[repr(C)]
struct Mysql {
    _opaque: [u8; 0],
}

#[repr(C)]
struct MysqlStmt {
    _opaque: [u8; 0],
}

#[repr(C)]
struct MysqlRes {
    _opaque: [u8; 0],
}

/// `MYSQL_BIND` of MariaDB Connector/C 3.x (`mariadb_stmt.h`); its size and the offsets of
/// the fields set here are checked against the header by a test (see build.rs).
#[repr(C)]
pub(crate) struct MysqlBind {
    length: *mut c_ulong,
    is_null: *mut my_bool,
    buffer: *mut c_void,
    error: *mut my_bool,
    row_ptr: *mut u8,
    store_param_func: *mut c_void,
    fetch_result: *mut c_void,
    skip_result: *mut c_void,
    buffer_length: c_ulong,
    offset: c_ulong,
    length_value: c_ulong,
    flags: c_uint,
    pack_length: c_uint,
    buffer_type: c_int,
    error_value: my_bool,
    is_unsigned: my_bool,
    long_data_used: my_bool,
    is_null_value: my_bool,
    extension: *mut c_void,
}

mod results;
mod sendable;
mod statement;

pub use results::{Answer, ResultSet};
pub use sendable::{Sendable, TextStatement};
pub use statement::{Executed, Param, Row, Statement};

const MYSQL_TYPE_LONGLONG: c_int = 8;
const MYSQL_TYPE_DOUBLE: c_int = 5;
const MYSQL_TYPE_NULL: c_int = 6;
/// `CLIENT_MULTI_RESULTS`: a `CALL` may answer with result sets (a script's procedures).
const CLIENT_MULTI_RESULTS: c_ulong = 1 << 17;
/// `enum mysql_option` values (mysql.h).
const MYSQL_OPT_CONNECT_TIMEOUT: c_int = 0;
const MYSQL_OPT_READ_TIMEOUT: c_int = 11;
const MYSQL_TYPE_STRING: c_int = 254;
const MYSQL_OPT_NONBLOCK: c_int = 6000;
const MYSQL_OPT_SSL_VERIFY_SERVER_CERT: c_int = 21;
const MYSQL_OPT_SSL_KEY: c_int = 25;
const MYSQL_OPT_SSL_CERT: c_int = 26;
const MYSQL_OPT_SSL_CA: c_int = 27;
const MYSQL_OPT_SSL_ENFORCE: c_int = 38;
/// Client errors (CR_*) start here; below are the server's.
const CR_MIN_ERROR: c_uint = 2000;

#[link(name = "mariadb")]
extern "C" {
    fn mysql_get_ssl_cipher(mysql: *mut Mysql) -> *const c_char;
    fn mysql_server_init(argc: c_int, argv: *mut *mut c_char, groups: *mut *mut c_char) -> c_int;
    fn mysql_init(mysql: *mut Mysql) -> *mut Mysql;
    fn mysql_real_connect(
        mysql: *mut Mysql,
        host: *const c_char,
        user: *const c_char,
        passwd: *const c_char,
        db: *const c_char,
        port: c_uint,
        unix_socket: *const c_char,
        client_flag: c_ulong,
    ) -> *mut Mysql;
    fn mysql_close(mysql: *mut Mysql);
    fn mysql_options(mysql: *mut Mysql, option: c_int, arg: *const c_void) -> c_int;
    fn mysql_real_query(mysql: *mut Mysql, query: *const c_char, length: c_ulong) -> c_int;
    fn mysql_store_result(mysql: *mut Mysql) -> *mut MysqlRes;
    fn mysql_free_result(result: *mut MysqlRes);
    fn mysql_num_rows(result: *mut MysqlRes) -> u64;
    fn mysql_num_fields(result: *mut MysqlRes) -> c_uint;
    fn mysql_fetch_row(result: *mut MysqlRes) -> *mut *mut c_char;
    fn mysql_fetch_lengths(result: *mut MysqlRes) -> *mut c_ulong;
    fn mysql_affected_rows(mysql: *mut Mysql) -> u64;
    fn mysql_real_escape_string(
        mysql: *mut Mysql,
        to: *mut c_char,
        from: *const c_char,
        length: c_ulong,
    ) -> c_ulong;
    fn mysql_warning_count(mysql: *mut Mysql) -> c_uint;
    fn mysql_more_results(mysql: *mut Mysql) -> my_bool;
    fn mysql_next_result(mysql: *mut Mysql) -> c_int;
    fn mysql_next_result_start(ret: *mut c_int, mysql: *mut Mysql) -> c_int;
    fn mysql_next_result_cont(ret: *mut c_int, mysql: *mut Mysql, status: c_int) -> c_int;
    fn mysql_stmt_num_rows(stmt: *mut MysqlStmt) -> u64;
    fn mysql_stmt_affected_rows(stmt: *mut MysqlStmt) -> u64;
    fn mysql_errno(mysql: *mut Mysql) -> c_uint;
    fn mysql_error(mysql: *mut Mysql) -> *const c_char;
    fn mysql_sqlstate(mysql: *mut Mysql) -> *const c_char;
    fn mysql_stmt_init(mysql: *mut Mysql) -> *mut MysqlStmt;
    fn mysql_stmt_prepare(stmt: *mut MysqlStmt, query: *const c_char, length: c_ulong) -> c_int;
    fn mysql_stmt_param_count(stmt: *mut MysqlStmt) -> c_ulong;
    fn mysql_stmt_bind_param(stmt: *mut MysqlStmt, bind: *mut MysqlBind) -> my_bool;
    fn mysql_stmt_execute(stmt: *mut MysqlStmt) -> c_int;
    fn mysql_stmt_store_result(stmt: *mut MysqlStmt) -> c_int;
    fn mysql_stmt_free_result(stmt: *mut MysqlStmt) -> my_bool;
    fn mysql_stmt_reset(stmt: *mut MysqlStmt) -> my_bool;
    fn mysql_stmt_field_count(stmt: *mut MysqlStmt) -> c_uint;
    fn mysql_stmt_errno(stmt: *mut MysqlStmt) -> c_uint;
    fn mysql_stmt_error(stmt: *mut MysqlStmt) -> *const c_char;
    fn mysql_stmt_sqlstate(stmt: *mut MysqlStmt) -> *const c_char;
    fn mysql_stmt_close(stmt: *mut MysqlStmt) -> my_bool;
    fn mysql_stmt_bind_result(stmt: *mut MysqlStmt, bind: *mut MysqlBind) -> my_bool;
    fn mysql_stmt_fetch(stmt: *mut MysqlStmt) -> c_int;
    fn mysql_stmt_fetch_column(
        stmt: *mut MysqlStmt,
        bind: *mut MysqlBind,
        column: c_uint,
        offset: c_ulong,
    ) -> c_int;

    // The non-blocking API: each `_start` returns 0 when done, else what it waits for
    // (MYSQL_WAIT_*); `_cont` is called with what became ready until it returns 0.
    fn mysql_get_socket(mysql: *mut Mysql) -> c_int;
    fn mysql_get_timeout_value_ms(mysql: *const Mysql) -> c_uint;
    fn mysql_real_connect_start(
        ret: *mut *mut Mysql,
        mysql: *mut Mysql,
        host: *const c_char,
        user: *const c_char,
        passwd: *const c_char,
        db: *const c_char,
        port: c_uint,
        unix_socket: *const c_char,
        client_flag: c_ulong,
    ) -> c_int;
    fn mysql_real_connect_cont(ret: *mut *mut Mysql, mysql: *mut Mysql, status: c_int) -> c_int;
    fn mysql_real_query_start(
        ret: *mut c_int,
        mysql: *mut Mysql,
        query: *const c_char,
        length: c_ulong,
    ) -> c_int;
    fn mysql_real_query_cont(ret: *mut c_int, mysql: *mut Mysql, status: c_int) -> c_int;
    fn mysql_store_result_start(ret: *mut *mut MysqlRes, mysql: *mut Mysql) -> c_int;
    fn mysql_store_result_cont(ret: *mut *mut MysqlRes, mysql: *mut Mysql, status: c_int) -> c_int;
    fn mysql_stmt_prepare_start(
        ret: *mut c_int,
        stmt: *mut MysqlStmt,
        query: *const c_char,
        length: c_ulong,
    ) -> c_int;
    fn mysql_stmt_prepare_cont(ret: *mut c_int, stmt: *mut MysqlStmt, status: c_int) -> c_int;
    fn mysql_stmt_execute_start(ret: *mut c_int, stmt: *mut MysqlStmt) -> c_int;
    fn mysql_stmt_execute_cont(ret: *mut c_int, stmt: *mut MysqlStmt, status: c_int) -> c_int;
    fn mysql_stmt_store_result_start(ret: *mut c_int, stmt: *mut MysqlStmt) -> c_int;
    fn mysql_stmt_store_result_cont(ret: *mut c_int, stmt: *mut MysqlStmt, status: c_int) -> c_int;
    fn mysql_stmt_reset_start(ret: *mut my_bool, stmt: *mut MysqlStmt) -> c_int;
    fn mysql_stmt_reset_cont(ret: *mut my_bool, stmt: *mut MysqlStmt, status: c_int) -> c_int;
    fn mysql_stmt_free_result_start(ret: *mut my_bool, stmt: *mut MysqlStmt) -> c_int;
    fn mysql_stmt_free_result_cont(ret: *mut my_bool, stmt: *mut MysqlStmt, status: c_int)
        -> c_int;
}

extern "C" {
    /// build/pvio_hook.c: a non-blocking connection's first read after each write waits
    /// for the socket instead of trying (and failing) at once; 1 if installed.
    fn eb_skip_read_after_write(mysql: *mut Mysql) -> c_int;
    fn eb_reads_skipped() -> u64;
    /// build/pvio_hook.c: the libmariadb version the hook was compiled against, and the
    /// loaded library's.
    fn eb_hook_built_for(loaded: *mut std::ffi::c_ulong) -> std::ffi::c_ulong;
}

/// Reads this process's non-blocking connections did not try because a request had just
/// been sent (build/pvio_hook.c): one per statement on the event driver.
pub fn reads_skipped() -> u64 {
    // SAFETY: reads an atomic counter.
    unsafe { eb_reads_skipped() }
}

/// Whether non-blocking connections skip the read that follows each request
/// (build/pvio_hook.c); `ENGINEBENCH_EAGER_READ=1` keeps libmariadb's own behaviour, to
/// measure the difference.
fn skip_read_after_write() -> bool {
    static SKIP: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *SKIP.get_or_init(|| {
        std::env::var_os("ENGINEBENCH_EAGER_READ").is_none_or(|v| v != "1") && hook_fits()
    })
}

/// Whether the loaded libmariadb is the release the socket hook was compiled against (it
/// reads a private struct): otherwise the hook stays off, and says so once.
fn hook_fits() -> bool {
    let mut loaded: std::ffi::c_ulong = 0;
    // SAFETY: writes the loaded library's version into a local.
    let built_for = unsafe { eb_hook_built_for(&mut loaded) };
    let fits = built_for == loaded;
    if !fits {
        let version = |v: std::ffi::c_ulong| format!("{}.{}.{}", v / 10000, v / 100 % 100, v % 100);
        crate::console::note(&format!(
            "libmariadb {} is loaded but enginebench was built with {}: the event driver's socket hook is off (one more read per statement); rebuild enginebench against this libmariadb",
            version(loaded),
            version(built_for)
        ));
    }
    fits
}

/// Drives one non-blocking call: `start` once, then `cont` with what became ready, while
/// libmariadb asks to wait; the coroutine is suspended during each wait.
///
/// # Safety
/// `mysql` must be a live handle in non-blocking mode, and `start`/`cont` calls of one
/// non-blocking function on it.
unsafe fn drive(
    mysql: *mut Mysql,
    start: impl FnOnce() -> c_int,
    mut cont: impl FnMut(c_int) -> c_int,
) {
    let mut status = start();
    while status != 0 {
        let timeout_ms = if status & events::WAIT_TIMEOUT != 0 {
            mysql_get_timeout_value_ms(mysql)
        } else {
            0
        };
        let ready = events::suspend(Wait::Io {
            fd: mysql_get_socket(mysql),
            status,
            timeout_ms,
        });
        status = cont(ready);
    }
}

/// A non-blocking call whose answer libmariadb writes through its first argument:
/// `start` and `cont` are told where; returns the answer once the call is done. The
/// answer stays in this frame, which outlives every suspension inside `drive`.
unsafe fn drive_for<T>(
    mysql: *mut Mysql,
    mut answer: T,
    start: impl FnOnce(*mut T) -> c_int,
    mut cont: impl FnMut(*mut T, c_int) -> c_int,
) -> T {
    let out = &mut answer as *mut T;
    drive(mysql, || start(out), |ready| cont(out, ready));
    answer
}

fn text_of(pointer: *const c_char) -> String {
    if pointer.is_null() {
        String::new()
    } else {
        // SAFETY: libmariadb returns NUL-terminated strings that live as long as the handle.
        unsafe { CStr::from_ptr(pointer) }
            .to_string_lossy()
            .into_owned()
    }
}

fn error(code: c_uint, state: String, message: String) -> mysql::Error {
    if code >= CR_MIN_ERROR || code == 0 {
        mysql::Error::IoError(std::io::Error::new(
            std::io::ErrorKind::ConnectionAborted,
            format!("client error {code}: {message}"),
        ))
    } else {
        mysql::Error::MySqlError(mysql::MySqlError {
            state,
            message,
            code: code as u16,
        })
    }
}

fn c_string(text: &str) -> Result<CString, mysql::Error> {
    CString::new(text).map_err(|_| error(0, String::new(), format!("NUL byte in {text:?}")))
}

/// One connection, owned by one worker thread.
pub struct Connection {
    mysql: *mut Mysql,
    /// Opened inside an event loop's coroutine: every call suspends instead of blocking.
    nonblocking: bool,
    /// Its socket, known to its cell so that the cell can stop waiting for a server that
    /// no longer answers (`driver::abandon`); None outside a cell.
    registered: Option<crate::driver::abandon::Registered>,
}

// SAFETY: a connection is used by one thread at a time (the worker that owns it); libmariadb
// allows a handle to move between threads as long as calls do not overlap.
unsafe impl Send for Connection {}

impl Connection {
    /// One attempt: a handle connected to the server, without the session's init SQL.
    fn open(spec: &ConnectionSpec) -> Result<Connection, mysql::Error> {
        static INIT: Once = Once::new();
        // SAFETY: the library initialisation must run once before any thread uses it.
        INIT.call_once(|| unsafe {
            mysql_server_init(0, ptr::null_mut(), ptr::null_mut());
        });
        let opts = spec.opts();
        let login = Login::of(&opts)?;
        // SAFETY: mysql_init with null allocates a handle we own until mysql_close.
        let mysql = unsafe { mysql_init(ptr::null_mut()) };
        if mysql.is_null() {
            return Err(error(0, String::new(), "mysql_init: out of memory".into()));
        }
        let nonblocking = events::in_coroutine();
        let _turn = events::ConnectTurn::take();
        let mut connection = Connection {
            mysql,
            nonblocking,
            registered: None,
        };
        if nonblocking {
            // libmariadb's default context stack (60 KB reserved, touched as deep as used).
            // SAFETY: a null argument selects the default stack size.
            if unsafe { mysql_options(mysql, MYSQL_OPT_NONBLOCK, ptr::null()) } != 0 {
                return Err(error(0, String::new(), "MYSQL_OPT_NONBLOCK refused".into()));
            }
        }
        set_time_limits(mysql, &opts);
        let tls = spec.tls_in_force();
        if tls {
            connection.ask_for_tls(spec.tls())?;
        }
        if connection.real_connect(&login).is_null() {
            return Err(connection.last_error());
        }
        connection.connected(tls)?;
        Ok(connection)
    }

    /// The handle connected with `login` (suspending in a coroutine instead of blocking):
    /// null when it failed.
    fn real_connect(&self, login: &Login) -> *mut Mysql {
        let mysql = self.mysql;
        let as_ptr = |s: &Option<CString>| s.as_ref().map_or(ptr::null(), |s| s.as_ptr());
        // A socket when one is named (as the mysql crate's prefer_socket does), else TCP.
        let host = if login.socket.is_some() {
            c"localhost".as_ptr()
        } else {
            login.host.as_ptr()
        };
        let (user, pass, db, socket) = (
            login.user.as_ptr(),
            as_ptr(&login.pass),
            as_ptr(&login.db),
            as_ptr(&login.socket),
        );
        let port = login.port;
        // SAFETY: every string lives until the call (or the last `_cont`) returns.
        unsafe {
            if self.nonblocking {
                drive_for(
                    mysql,
                    ptr::null_mut(),
                    |out| {
                        mysql_real_connect_start(
                            out,
                            mysql,
                            host,
                            user,
                            pass,
                            db,
                            port,
                            socket,
                            CLIENT_MULTI_RESULTS,
                        )
                    },
                    |out, ready| mysql_real_connect_cont(out, mysql, ready),
                )
            } else {
                mysql_real_connect(
                    mysql,
                    host,
                    user,
                    pass,
                    db,
                    port,
                    socket,
                    CLIENT_MULTI_RESULTS,
                )
            }
        }
    }

    /// A just connected handle made ready for its worker: TLS in force when asked for, its
    /// socket non-blocking in a coroutine and known to its cell.
    fn connected(&mut self, tls: bool) -> Result<(), mysql::Error> {
        let mysql = self.mysql;
        // libmariadb 3.3 goes on in plain text when the server offers no TLS, unless the
        // host name is checked: REQUIRED and VERIFY_CA would run unencrypted, unsaid.
        // SAFETY: a connected handle; the cipher's name is only tested for null.
        if tls && unsafe { mysql_get_ssl_cipher(mysql) }.is_null() {
            return Err(mysql::Error::DriverError(
                mysql::DriverError::TlsNotSupported,
            ));
        }
        if self.nonblocking && tls {
            // libmariadb's TLS handshake leaves the socket blocking (found: every TLS
            // connection of 8 on two loops ran its whole cell in turn, 8× the --time):
            // OpenSSL's reads would then block the loop instead of asking to wait.
            // SAFETY: flags of the connected handle's own socket.
            unsafe {
                let fd = mysql_get_socket(mysql);
                let flags = libc::fcntl(fd, libc::F_GETFL);
                if flags >= 0 && flags & libc::O_NONBLOCK == 0 {
                    libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK);
                }
            }
        }
        // SAFETY: a connected handle's socket.
        self.registered = crate::driver::abandon::register(unsafe { mysql_get_socket(mysql) });
        if self.nonblocking && skip_read_after_write() {
            // SAFETY: a connected handle this coroutine owns; the hook changes only which
            // socket functions its later calls go through.
            unsafe { eb_skip_read_after_write(mysql) };
        }
        Ok(())
    }

    /// TLS as the spec's mode says, before connecting. OpenSSL checks the server's
    /// certificate against `ssl-ca` whenever one is given (VERIFY_CA); the library's
    /// "verify server cert" adds the host name check (VERIFY_IDENTITY). ENFORCE: no
    /// silent fall back to a plain connection.
    fn ask_for_tls(&self, tls: &crate::server::TlsOptions) -> Result<(), mysql::Error> {
        let mode = tls.mode();
        let files = [
            (MYSQL_OPT_SSL_CA, &tls.ca),
            (MYSQL_OPT_SSL_CERT, &tls.cert),
            (MYSQL_OPT_SSL_KEY, &tls.key),
        ];
        for (option, path) in files {
            if let Some(path) = path {
                let path = c_string(&path.to_string_lossy())?;
                // SAFETY: string options are copied by the library during the call.
                unsafe { mysql_options(self.mysql, option, path.as_ptr().cast()) };
            }
        }
        let on: my_bool = 1;
        let mut flags = vec![MYSQL_OPT_SSL_ENFORCE];
        if mode == crate::server::SslMode::VerifyIdentity {
            flags.push(MYSQL_OPT_SSL_VERIFY_SERVER_CERT);
        }
        for option in flags {
            // SAFETY: both options take a pointer to a my_bool, read during the call.
            unsafe { mysql_options(self.mysql, option, (&on as *const my_bool).cast()) };
        }
        Ok(())
    }

    /// Connects, retrying for a while when the server's listen queue is full (a thousand
    /// workers connecting at once on an external server with a small back_log): libmariadb
    /// reports that at once as error 2002/2003 with EAGAIN, where the mysql crate waits.
    pub fn connect(spec: &ConnectionSpec) -> Result<Connection, mysql::Error> {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            match Connection::connect_once(spec) {
                Err(mysql::Error::IoError(err))
                    if err.to_string().contains("(11)") && std::time::Instant::now() < deadline =>
                {
                    events::sleep(std::time::Duration::from_millis(20));
                }
                other => return other,
            }
        }
    }

    /// [`Self::connect`] for a worker: a failure described for the user, with the TLS fix
    /// when TLS is what failed (a server that takes TLS only, a certificate refused).
    pub fn connect_worker(spec: &ConnectionSpec) -> anyhow::Result<Connection> {
        let connection = Connection::connect(spec).map_err(|err| {
            // libmariadb's connect timeout bounds the greeting and the TLS handshake too;
            // it reports running out of it as errno 110 inside another error ("TLS/SSL
            // error: Connection timed out (110)").
            let text = err.to_string();
            match spec.opts().get_tcp_connect_timeout() {
                Some(limit) if text.contains("timed out") || text.contains("system error: 110") => {
                    anyhow::anyhow!(
                        "cannot connect to {}: {}",
                        spec.label(),
                        crate::server::tls::login_stalled(limit, spec.tls().mode())
                    )
                }
                _ => anyhow::anyhow!(crate::server::tls::describe_connect_error(&err, spec.tls())),
            }
        })?;
        count_init_statements(spec);
        Ok(connection)
    }

    fn connect_once(spec: &ConnectionSpec) -> Result<Connection, mysql::Error> {
        // Run here rather than given to libmariadb (MYSQL_INIT_COMMAND): each is counted
        // by whoever opened the connection (`count_init_statements`).
        Connection::open(spec).and_then(|connection| {
            for statement in spec.opts().get_init() {
                connection.query_drop(&statement)?;
            }
            Ok(connection)
        })
    }

    fn last_error(&self) -> mysql::Error {
        self.handle().last_error()
    }

    /// Its handle, for what runs statements on it without owning it (a text statement).
    fn handle(&self) -> Handle {
        Handle {
            mysql: self.mysql,
            nonblocking: self.nonblocking,
        }
    }
}

/// A connection's handle as its statements keep it: they run on it but never close it
/// (workers drop their statements before their connection).
#[derive(Clone, Copy)]
struct Handle {
    mysql: *mut Mysql,
    /// As its connection's: every call suspends instead of blocking.
    nonblocking: bool,
}

impl Handle {
    fn last_error(&self) -> mysql::Error {
        // SAFETY: the handle is valid while its connection is.
        unsafe {
            error(
                mysql_errno(self.mysql),
                text_of(mysql_sqlstate(self.mysql)),
                text_of(mysql_error(self.mysql)),
            )
        }
    }
}

impl Drop for Connection {
    fn drop(&mut self) {
        // Out of its cell's list before the socket closes (its number may then be reused).
        self.registered = None;
        // SAFETY: closing the handle we own, once. Its socket leaves the event loop's epoll
        // first, so a later connection given the same number is registered afresh. The
        // close itself only writes COM_QUIT, which never waits.
        unsafe {
            if self.nonblocking && events::in_coroutine() && !std::thread::panicking() {
                events::suspend(Wait::Forget(mysql_get_socket(self.mysql)));
            }
            mysql_close(self.mysql)
        };
    }
}
