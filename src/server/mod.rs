//! The server stage: where the load goes. Either a throwaway `mariadbd` that enginebench
//! starts, configures and always removes, or an external server named by `--dsn`.

mod dsn;
mod registry;
mod throwaway;

pub use dsn::{Dsn, PASSWORD_ENV};
pub use registry::emergency_teardown;
pub use throwaway::{ServerOptions, ThrowawayServer};

pub use crate::sqlerror::{describe_mysql_error, describe_with_hint, DescribeMysqlError};

use mysql::prelude::Queryable;
use mysql::{Conn, Opts, OptsBuilder};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;
use thiserror::Error;

use crate::engine::Engine;

/// The database enginebench works in on any server. On an external server it creates
/// only this database's tables and drops only those it created.
pub const DEFAULT_DATABASE: &str = "enginebench";

#[derive(Debug, Error)]
pub enum ServerError {
    #[error("{binary} not found: install it with `apt-get install mariadb-server` or pass --server-bin PATH")]
    BinaryNotFound { binary: String },
    #[error("mariadb-install-db failed for {datadir} (exit {status}): {log_tail}")]
    InstallFailed {
        datadir: PathBuf,
        status: String,
        log_tail: String,
    },
    #[error("the throwaway server exited during start-up ({status}); its error log ends with:\n{log_tail}")]
    StartFailed { status: String, log_tail: String },
    #[error("the throwaway server did not answer within {seconds} s; its error log ends with:\n{log_tail}")]
    StartTimeout { seconds: u64, log_tail: String },
    #[error("cannot connect to {target}: {cause}; check that the server is running and that --dsn is right")]
    Unreachable { target: String, cause: String },
    #[error("{0}")]
    Io(String),
    #[error("enginebench is exiting: no server is started any more")]
    ShuttingDown,
    #[error("query on {target} failed: {cause}")]
    Query { target: String, cause: String },
    #[error("engine {engine} is not available on this server (it has: {available}); choose others with --engines, or load its plugin with --server-opt plugin_load_add=...")]
    EngineMissing { engine: String, available: String },
}

/// How to reach a server: the unix socket of a throwaway server, or host/port of an
/// external one. Cloned into each worker thread, which opens its own connection.
#[derive(Clone)]
pub struct ConnectionSpec {
    opts: Opts,
    /// What to call this server in messages: never contains the password.
    label: String,
}

impl ConnectionSpec {
    /// A connection over a unix socket (the throwaway server's default transport).
    pub fn unix_socket(path: &std::path::Path, user: &str, database: Option<&str>) -> Self {
        let builder = OptsBuilder::new()
            .socket(Some(path.to_string_lossy().to_string()))
            .user(Some(user))
            .db_name(database)
            .tcp_connect_timeout(Some(Duration::from_secs(5)));
        ConnectionSpec {
            opts: builder.into(),
            label: format!("unix socket {}", path.display()),
        }
    }

    /// A TCP connection, or the DSN's `?socket=`. Otherwise `prefer_socket` is switched off: the mysql crate otherwise moves a
    /// 127.0.0.1 connection to the unix socket silently (FACTS.md), and TCP is what was asked.
    pub fn tcp(dsn: &Dsn, database: Option<&str>) -> Self {
        let builder = OptsBuilder::new()
            .ip_or_hostname(Some(dsn.host.clone()))
            .tcp_port(dsn.port)
            .socket(dsn.socket.clone())
            .user(Some(dsn.user.clone()))
            .pass(dsn.password.clone())
            .db_name(database)
            .prefer_socket(dsn.socket.is_some())
            .tcp_connect_timeout(Some(Duration::from_secs(5)));
        ConnectionSpec {
            opts: builder.into(),
            label: dsn.redacted(),
        }
    }

    pub fn with_database(&self, database: &str) -> Self {
        ConnectionSpec {
            opts: OptsBuilder::from_opts(self.opts.clone())
                .db_name(Some(database))
                .into(),
            label: self.label.clone(),
        }
    }

    /// Every statement on these connections is aborted by the server after `timeout`
    /// (MariaDB's max_statement_time, error 1969), leaving the server usable; a client read
    /// timeout a little longer catches a server that stops answering altogether.
    pub fn with_query_timeout(&self, timeout: Duration) -> Self {
        ConnectionSpec {
            opts: OptsBuilder::from_opts(self.opts.clone())
                .init(vec![format!(
                    "SET SESSION max_statement_time = {:.3}",
                    timeout.as_secs_f64()
                )])
                .read_timeout(Some(timeout + Duration::from_secs(5)))
                .into(),
            label: self.label.clone(),
        }
    }

    pub fn label(&self) -> &str {
        &self.label
    }

    /// The connection options, for a client other than the mysql crate (libmariadb).
    pub fn opts(&self) -> &Opts {
        &self.opts
    }

    pub fn connect(&self) -> Result<Conn, ServerError> {
        Conn::new(self.opts.clone()).map_err(|err| ServerError::Unreachable {
            target: self.label.clone(),
            cause: describe_mysql_error(&err),
        })
    }
}

/// What the results record about the server a run used.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ServerRecord {
    /// "throwaway" or "external".
    pub kind: String,
    /// Where it was reached, without password.
    pub address: String,
    pub version: String,
    pub datadir: Option<String>,
    pub datadir_on_tmpfs: bool,
    /// The command line the throwaway server was started with (empty for external).
    pub command_line: Vec<String>,
    /// SHOW GLOBAL VARIABLES, as the server reported it once it was ready.
    pub variables: BTreeMap<String, String>,
}

/// The server a run talks to; dropping it tears a throwaway server down.
pub enum Target {
    Throwaway(ThrowawayServer),
    External { dsn: Dsn },
}

impl Target {
    /// Starts a throwaway server, or checks that the external one answers, and makes sure
    /// `database` exists.
    pub fn open(
        dsn: Option<Dsn>,
        options: &ServerOptions,
        database: &str,
    ) -> Result<Target, ServerError> {
        let target = match dsn {
            Some(dsn) => Target::External { dsn },
            None => Target::Throwaway(ThrowawayServer::start(options)?),
        };
        let mut conn = target.admin_spec().connect()?;
        conn.query_drop(format!("CREATE DATABASE IF NOT EXISTS `{database}`"))
            .map_err(|err| target.query_error(&err))?;
        Ok(target)
    }

    /// A connection without a default database, for setup and probes.
    pub fn admin_spec(&self) -> ConnectionSpec {
        match self {
            Target::Throwaway(server) => server.connection_spec(None),
            Target::External { dsn } => ConnectionSpec::tcp(dsn, None),
        }
    }

    pub fn spec(&self, database: &str) -> ConnectionSpec {
        self.admin_spec().with_database(database)
    }

    /// Whether the server still runs: our child process for a throwaway server, a fresh
    /// connection for an external one.
    ///
    /// A killed server resets its connections before it has finished exiting, so one look
    /// is not enough: wait (up to 3 s) until it has either exited or accepts a connection.
    pub fn is_alive(&mut self) -> bool {
        let spec = self.admin_spec();
        let deadline = std::time::Instant::now() + Duration::from_secs(3);
        loop {
            if let Target::Throwaway(server) = self {
                if !server.is_running() {
                    return false;
                }
            }
            if spec.connect().is_ok() {
                return true;
            }
            if std::time::Instant::now() >= deadline {
                // Running but not answering: as good as dead for a benchmark.
                return false;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The end of the server's error log, when it is ours to read.
    pub fn error_log_tail(&self, lines: usize) -> Option<String> {
        match self {
            Target::Throwaway(server) => Some(server.error_log_tail(lines)),
            Target::External { .. } => None,
        }
    }

    /// A cold restart of a throwaway server (same datadir); see `ThrowawayServer::restart`.
    pub fn restart_cold(&mut self) -> Result<bool, ServerError> {
        match self {
            Target::Throwaway(server) => server.restart(true),
            Target::External { .. } => Err(ServerError::Io(
                "--cold restarts the server between repeats, which needs a throwaway server: drop --dsn".into(),
            )),
        }
    }

    pub fn server_pid(&self) -> Option<u32> {
        match self {
            Target::Throwaway(server) => Some(server.pid()),
            Target::External { .. } => None,
        }
    }

    fn query_error(&self, err: &mysql::Error) -> ServerError {
        ServerError::Query {
            target: self.admin_spec().label().to_string(),
            cause: describe_mysql_error(err),
        }
    }

    /// Version and variables, for the results record.
    pub fn record(&self) -> Result<ServerRecord, ServerError> {
        let mut conn = self.admin_spec().connect()?;
        let version: String = conn
            .query_first("SELECT VERSION()")
            .map_err(|err| self.query_error(&err))?
            .unwrap_or_default();
        let variables: BTreeMap<String, String> = conn
            .query_map(
                "SHOW GLOBAL VARIABLES",
                |(name, value): (String, Option<String>)| (name, value.unwrap_or_default()),
            )
            .map_err(|err| self.query_error(&err))?
            .into_iter()
            .collect();
        Ok(match self {
            Target::Throwaway(server) => ServerRecord {
                kind: "throwaway".into(),
                address: server.connection_spec(None).label().to_string(),
                version,
                datadir: Some(server.datadir().display().to_string()),
                datadir_on_tmpfs: server.on_tmpfs(),
                command_line: server.command_line().to_vec(),
                variables,
            },
            Target::External { dsn } => ServerRecord {
                kind: "external".into(),
                address: dsn.redacted(),
                version,
                datadir: variables.get("datadir").cloned(),
                datadir_on_tmpfs: false,
                command_line: Vec::new(),
                variables,
            },
        })
    }

    /// Refuses engines the server lacks, before any table is created.
    pub fn check_engines(&self, wanted: &[Engine]) -> Result<(), ServerError> {
        let mut conn = self.admin_spec().connect()?;
        let rows: Vec<(String, String)> = conn
            .query_map(
                "SELECT ENGINE, SUPPORT FROM information_schema.ENGINES",
                |row| row,
            )
            .map_err(|err| self.query_error(&err))?;
        let available: Vec<String> = rows
            .iter()
            .filter(|(_, support)| support == "YES" || support == "DEFAULT")
            .map(|(name, _)| name.clone())
            .collect();
        for engine in wanted {
            if !available
                .iter()
                .any(|name| name.eq_ignore_ascii_case(engine.sql_name()))
            {
                let mut sorted = available.clone();
                sorted.sort();
                return Err(ServerError::EngineMissing {
                    engine: engine.display_name().to_string(),
                    available: sorted.join(", "),
                });
            }
        }
        Ok(())
    }
}

/// The server-side choices of a run, resolved from the command line.
#[derive(Debug, Clone)]
pub struct ServerArgsResolved {
    pub dsn: Option<Dsn>,
    /// Run on an external database that holds other tables.
    pub force: bool,
    pub database: String,
    pub options: ServerOptions,
}
