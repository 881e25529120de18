//! Servers themselves: a throwaway `mariadbd` that enginebench starts, configures and
//! always removes (with the registry that tears every one down on a second Ctrl-C), how to
//! reach a server (`ConnectionSpec`, `--dsn`), and what the record keeps of one. The
//! `target` stage builds on this; this module must not know studies or runs.

pub mod builds;
pub mod caps;
mod cgroup;
mod datadir_template;
mod dsn;
mod error_log;
pub mod option_files;
pub mod own_load;
pub mod powerfs;
pub mod read_limit;
mod registry;
mod shape;
mod throwaway;
pub mod tls;
pub mod topology;

pub use dsn::{moved_password, Dsn, DSN_ENV, PASSWORD_ENV};
pub use option_files::{server_settings, ClientOptions};
pub use own_load::{OwnConn, OwnCounts, Purpose};
pub use powerfs::{PowerCut, PowerFs, PowerFsError};
pub use registry::{emergency_teardown, hurry_teardown};
pub use shape::{NodeRole, ReadFrom, Routing, Topology, WriteTo};
pub use throwaway::{ServerOptions, ThrowawayServer, ROOT_DIR_PREFIX};
use tls::PreferredTls;
pub use tls::{SslMode, TlsOptions, TlsRecord};
pub use topology::Node;

pub use crate::sqlerror::{describe_mysql_error, describe_with_hint, DescribeMysqlError};

use mysql::{Conn, Opts, OptsBuilder};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use thiserror::Error;

/// The packet limit of every mysql-crate connection: the protocol's largest, so that the
/// server's own `max_allowed_packet` is the one that applies (and the crate does not ask
/// for it at each login).
const OWN_MAX_PACKET_BYTES: usize = 1 << 30;

/// The database enginebench works in on any server. On an external server it creates
/// only this database's tables and drops only those it created.
pub const DEFAULT_DATABASE: &str = "enginebench";

#[derive(Debug, Error)]
pub enum ServerError {
    #[error("{binary} not found: install it with `apt-get install mariadb-server` or pass --server-bin PATH")]
    BinaryNotFound { binary: String },
    #[error("server build '{name}' is not fetched yet: run `enginebench server get {name}` first")]
    NotFetched { name: String },
    #[error("'{spec}' names no server build: give `system`, a fetched build ({known}; see `enginebench server list`), a directory unpacked from an official MariaDB or MySQL tarball, or a server binary")]
    UnknownBuild { spec: String, known: String },
    #[error("no mariadbd or mysqld under {dir} (looked in usr/sbin, sbin, bin and libexec of it and of its usr/)")]
    NoServerInTree { dir: String },
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
    #[error(
        "cannot connect to {target}: {cause}; check that the server is running and {address_check}"
    )]
    Unreachable {
        target: String,
        cause: String,
        address_check: &'static str,
    },
    #[error("{0}")]
    Io(String),
    #[error(transparent)]
    Caps(#[from] caps::CapError),
    #[error("{0}")]
    Topology(String),
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
    /// Everything but TLS, which [`Self::opts`] adds as `tls` and the server settle it.
    opts: Opts,
    tls: TlsOptions,
    /// PREFERRED: whether the server took TLS, known after the first connection (shared by
    /// every clone and every spec of the same DSN, so all of a run's connections do as the
    /// first did).
    preferred_tls: Arc<PreferredTls>,
    /// What to call this server in messages: never contains the password.
    label: String,
    /// Several nodes, connection i going to node i mod n (a topology's writers or readers,
    /// several `--dsn`); empty: every connection goes to `opts`.
    spread: Vec<ConnectionSpec>,
}

impl ConnectionSpec {
    /// A connection over a unix socket (the throwaway server's default transport). Both
    /// clients take a named socket as it is; `prefer_socket` would only have the mysql
    /// crate ask the server for its socket (`SELECT @@socket`) at each login.
    pub fn unix_socket(path: &std::path::Path, user: &str, database: Option<&str>) -> Self {
        let builder = OptsBuilder::new()
            .socket(Some(path.to_string_lossy().to_string()))
            .prefer_socket(false)
            .user(Some(user))
            .db_name(database)
            .tcp_connect_timeout(Some(Duration::from_secs(5)));
        ConnectionSpec {
            opts: builder.into(),
            tls: TlsOptions::default(),
            preferred_tls: Arc::default(),
            label: format!("unix socket {}", path.display()),
            spread: Vec::new(),
        }
    }

    /// A TCP connection, or the DSN's `?socket=`, with the DSN's TLS. `prefer_socket` is
    /// switched off: the mysql crate otherwise moves a 127.0.0.1 connection to the unix
    /// socket silently (FACTS.md), and TCP is what was asked; a named socket is taken as
    /// it is (the crate would only ask the server for its own, `SELECT @@socket`).
    pub fn tcp(dsn: &Dsn, database: Option<&str>) -> Self {
        let builder = OptsBuilder::new()
            .ip_or_hostname(Some(dsn.host.clone()))
            .tcp_port(dsn.port)
            .socket(dsn.socket.clone())
            .user(Some(dsn.user.clone()))
            .pass(dsn.password.clone())
            .db_name(database)
            .prefer_socket(false)
            .tcp_connect_timeout(Some(Duration::from_secs(5)));
        ConnectionSpec {
            opts: builder.into(),
            tls: dsn.tls.clone(),
            preferred_tls: dsn.preferred_tls.clone(),
            label: dsn.redacted(),
            spread: Vec::new(),
        }
    }

    /// These connections with `change` made to their options, on every node they spread
    /// over; where they go, their TLS and their label stay.
    fn changed(&self, change: &dyn Fn(OptsBuilder) -> OptsBuilder) -> Self {
        ConnectionSpec {
            opts: change(OptsBuilder::from_opts(self.opts.clone())).into(),
            tls: self.tls.clone(),
            preferred_tls: self.preferred_tls.clone(),
            label: self.label.clone(),
            spread: self
                .spread
                .iter()
                .map(|node| node.changed(change))
                .collect(),
        }
    }

    pub fn with_database(&self, database: &str) -> Self {
        self.changed(&|opts| opts.db_name(Some(database)))
    }

    /// Connections spread round-robin over `nodes` (at least one): connection i goes to
    /// node i mod n; admin use (`connect`, `opts`) goes to the first.
    pub fn spread_over(nodes: Vec<ConnectionSpec>) -> Self {
        let mut nodes: Vec<ConnectionSpec> = nodes
            .into_iter()
            .flat_map(|node| {
                if node.spread.is_empty() {
                    vec![node]
                } else {
                    node.spread
                }
            })
            .collect();
        if nodes.len() == 1 {
            return nodes.remove(0);
        }
        let first = nodes[0].clone();
        ConnectionSpec {
            opts: first.opts,
            tls: first.tls,
            preferred_tls: first.preferred_tls,
            label: format!(
                "{} nodes ({})",
                nodes.len(),
                nodes
                    .iter()
                    .map(|n| n.label.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            spread: nodes,
        }
    }

    /// Where connection `index` goes (a spread's next node; otherwise this one).
    pub fn for_connection(&self, index: usize) -> ConnectionSpec {
        if self.spread.is_empty() {
            self.clone()
        } else {
            self.spread[index % self.spread.len()].clone()
        }
    }

    /// How many nodes connections are spread over.
    pub fn node_count(&self) -> usize {
        self.spread.len().max(1)
    }

    /// Every statement on these connections is aborted by the server after `timeout`
    /// (MariaDB's max_statement_time, error 1969), leaving the server usable; a client read
    /// timeout a little longer catches a server that stops answering altogether.
    pub fn with_query_timeout(&self, timeout: Duration) -> Self {
        self.with_query_timeout_on(timeout, "mariadb")
    }

    /// [`Self::with_query_timeout`] on a server of `flavour`: MySQL has no
    /// max_statement_time; its max_execution_time (in ms, error 3024) bounds read-only
    /// SELECTs only, so there the read timeout is all that bounds other statements.
    pub fn with_query_timeout_on(&self, timeout: Duration, flavour: &str) -> Self {
        let init = if flavour == "mysql" {
            format!(
                "SET SESSION max_execution_time = {}",
                timeout.as_millis().max(1)
            )
        } else {
            format!(
                "SET SESSION max_statement_time = {:.3}",
                timeout.as_secs_f64()
            )
        };
        self.changed(&|opts| {
            opts.init(vec![init.clone()])
                .read_timeout(Some(timeout + Duration::from_secs(5)))
        })
    }

    /// These connections with every read bounded by `limit` (the login included): for
    /// questions to a server that may have stopped answering.
    pub fn with_read_limit(&self, limit: Duration) -> Self {
        self.changed(&|opts| opts.read_timeout(Some(limit)).write_timeout(Some(limit)))
    }

    /// These connections with `sql` run first on each (after what they already run).
    pub fn with_init_sql(&self, sql: &str) -> Self {
        self.changed(&|opts| {
            let mut init = Opts::from(opts.clone()).get_init();
            init.push(sql.to_string());
            opts.init(init)
        })
    }

    pub fn label(&self) -> &str {
        &self.label
    }

    /// The connection options, TLS included when it is in force.
    pub fn opts(&self) -> Opts {
        let ssl = if self.tls_in_force() {
            self.tls.ssl_opts()
        } else {
            None
        };
        OptsBuilder::from_opts(self.opts.clone())
            .ssl_opts(ssl)
            .into()
    }

    /// The TLS asked for, for a client other than the mysql crate (libmariadb).
    pub fn tls(&self) -> &TlsOptions {
        &self.tls
    }

    /// Whether connections use TLS: as the mode says, PREFERRED as the first connection
    /// found (settled by connecting, if none has yet). Over a unix socket, never: the
    /// socket is already private, and neither client encrypts it.
    pub fn tls_in_force(&self) -> bool {
        if self.opts.get_socket().is_some() {
            return false;
        }
        match self.tls.mode() {
            SslMode::Disabled => false,
            SslMode::Preferred => {
                if self.preferred_tls.took_tls.get().is_none() {
                    // A connection of its own, counted as the set-up's: the server
                    // counts it whatever it is for.
                    let _ = self.connect_own(Purpose::Setup);
                }
                self.preferred_tls.took_tls.get().copied().unwrap_or(false)
            }
            _ => true,
        }
    }

    /// A connection of enginebench's own (not the workload's), counted for the record as
    /// `purpose` says: every probe and set-up statement goes through one of these.
    /// Its packet limit is given, so the mysql crate does not ask the server for it with a
    /// `SELECT @@max_allowed_packet` of its own at each login.
    /// Logins that reached the server but gave no connection are counted too (the
    /// server's `Connections` counts them).
    pub fn connect_own(&self, purpose: Purpose) -> Result<OwnConn, ServerError> {
        let spec = self.changed(&|opts| opts.max_allowed_packet(Some(OWN_MAX_PACKET_BYTES)));
        let (conn, failed_logins) = spec.login();
        own_load::count_failed_logins(purpose, failed_logins);
        Ok(OwnConn::opened(conn?, &spec.opts, purpose))
    }

    /// A connection that is not enginebench's own: a worker's (the workload's), or a
    /// command's outside runs. Anything a run sends for itself goes through
    /// [`Self::connect_own`]. Its packet limit is given too: a worker's login sends
    /// nothing beyond the workload's statements, as libmariadb's does.
    pub fn connect(&self) -> Result<Conn, ServerError> {
        self.changed(&|opts| opts.max_allowed_packet(Some(OWN_MAX_PACKET_BYTES)))
            .login()
            .0
    }

    /// A login of enginebench's own by another client (`login`: libmariadb's), counted for
    /// the record as `purpose` says, as [`Self::connect_own`] counts its own, and its
    /// failure described as theirs.
    pub fn connect_own_with<T>(
        &self,
        purpose: Purpose,
        login: impl FnOnce(&ConnectionSpec) -> Result<T, mysql::Error>,
    ) -> Result<T, ServerError> {
        match login(self) {
            Ok(connected) => {
                let opened = own_load::OwnCounts {
                    connections: 1,
                    ..Default::default()
                };
                own_load::count_sent(purpose, &opened);
                Ok(connected)
            }
            Err(err) => {
                own_load::count_failed_logins(
                    purpose,
                    u64::from(own_load::login_reached_server(&err)),
                );
                Err(self.unreachable(&err))
            }
        }
    }

    /// A login to this server that failed with `err`, said with its cause and fix.
    fn unreachable(&self, err: &mysql::Error) -> ServerError {
        ServerError::Unreachable {
            target: self.label.clone(),
            cause: if read_limit::timed_out(err) {
                tls::login_stalled(read_limit::HANDSHAKE_LIMIT, self.tls.mode())
            } else {
                tls::describe_connect_error(err, &self.tls)
            },
            address_check: self.tls.words.address_check(),
        }
    }

    /// A login, and how many logins reached the server without giving the connection:
    /// under PREFERRED, the TLS one a server without TLS refused; the one that failed.
    fn login(&self) -> (Result<Conn, ServerError>, u64) {
        let failed = |err: &mysql::Error| u64::from(own_load::login_reached_server(err));
        let unreachable = |err: mysql::Error| self.unreachable(&err);
        // One login at a time settles PREFERRED: connections opened together (a run's
        // workers) wait for the first one's answer instead of each being refused.
        let settling = (self.tls.mode() == SslMode::Preferred
            && self.preferred_tls.took_tls.get().is_none())
        .then(|| {
            self.preferred_tls
                .settling
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        });
        if settling.is_some() && self.preferred_tls.took_tls.get().is_none() {
            let with_tls = OptsBuilder::from_opts(self.opts.clone()).ssl_opts(self.tls.ssl_opts());
            return match bounded_login(with_tls.into()) {
                Ok(conn) => {
                    let _ = self.preferred_tls.took_tls.set(true);
                    (Ok(conn), 0)
                }
                Err(mysql::Error::DriverError(mysql::DriverError::TlsNotSupported)) => {
                    let _ = self.preferred_tls.took_tls.set(false);
                    match bounded_login(self.opts.clone()) {
                        Ok(conn) => (Ok(conn), 1),
                        Err(err) => {
                            let failed = 1 + failed(&err);
                            (Err(unreachable(err)), failed)
                        }
                    }
                }
                Err(err) => {
                    let failed = failed(&err);
                    (Err(unreachable(err)), failed)
                }
            };
        }
        // Settled by another login meanwhile: `opts` reads the outcome, unlocked.
        drop(settling);
        match bounded_login(self.opts()) {
            Ok(conn) => (Ok(conn), 0),
            Err(err) => {
                let failed = failed(&err);
                (Err(unreachable(err)), failed)
            }
        }
    }
}

/// A connection whose login waits at most [`read_limit::HANDSHAKE_LIMIT`] for the server
/// (the crate's connect timeout covers only the TCP connect); after it, reads wait as the
/// options say (for ever, unless a read timeout is set).
///
/// The login runs on a helper thread and is given up at the limit: the socket's own
/// timeouts bound each read, but a TLS handshake that stalls after the greeting is tried
/// again by every later write of the half-made connection (its login packet, then the
/// COM_QUIT its drop sends), each waiting the limit anew: 30 s for a 10-s limit (issue
/// 64). The helper ends by itself within those few limits.
fn bounded_login(opts: Opts) -> Result<Conn, mysql::Error> {
    let own_limit = opts.get_read_timeout().is_none();
    let opts: Opts = if own_limit {
        OptsBuilder::from_opts(opts)
            .read_timeout(Some(read_limit::HANDSHAKE_LIMIT))
            .write_timeout(Some(read_limit::HANDSHAKE_LIMIT))
            .into()
    } else {
        opts
    };
    let (sender, login) = std::sync::mpsc::channel();
    std::thread::Builder::new()
        .name("login".into())
        .spawn(move || {
            // Nobody listening: the caller gave up; the connection closes here.
            let _ = sender.send(Conn::new(opts));
        })
        .map_err(mysql::Error::IoError)?;
    // A little past the limit, so that the crate's own timeout (a greeting never sent)
    // is the one reported when it comes first.
    let conn = match login.recv_timeout(read_limit::HANDSHAKE_LIMIT + Duration::from_secs(1)) {
        Ok(login) => login?,
        Err(_) => {
            return Err(mysql::Error::IoError(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                "the login did not finish in time",
            )))
        }
    };
    if own_limit {
        use std::os::fd::AsRawFd;
        read_limit::set_socket_timeouts(conn.as_raw_fd(), None);
    }
    Ok(conn)
}

/// What the results record about the server a run used.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ServerRecord {
    /// "throwaway" or "external".
    pub kind: String,
    /// Where it was reached, without password.
    pub address: String,
    pub version: String,
    /// "mariadb" or "mysql", from what the server says of itself.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub flavour: String,
    pub datadir: Option<String>,
    pub datadir_on_tmpfs: bool,
    /// The command line the throwaway server was started with (empty for external).
    pub command_line: Vec<String>,
    /// SHOW GLOBAL VARIABLES, as the server reported it once it was ready.
    pub variables: BTreeMap<String, String>,
    /// The memory and CPU caps it ran under (none: the machine's all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caps: Option<caps::CapsRecord>,
    /// A topology's shape ("Galera, 3 nodes"); absent for one server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topology: Option<String>,
    /// A topology's nodes, the first being the one described above.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<NodeRecord>,
    /// The TLS connections used (absent: plain connections).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<TlsRecord>,
}

impl ServerRecord {
    /// The server as reports name it: its version, then how it was reached
    /// ("10.11.19-MariaDB (external, TLSv1.3 TLS_AES_256_GCM_SHA384, VERIFY_CA)").
    pub fn describe(&self) -> String {
        let mut how = vec![self.kind.clone()];
        if self.datadir_on_tmpfs {
            how.push("datadir on tmpfs".into());
        }
        if let Some(tls) = &self.tls {
            how.push(format!("{} {}, {}", tls.version, tls.cipher, tls.mode));
        }
        format!("{} ({})", self.version, how.join(", "))
    }
}

/// One node of a topology, for the record.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct NodeRecord {
    pub name: String,
    pub role: NodeRole,
    pub address: String,
    pub version: String,
    /// SHOW GLOBAL VARIABLES on this node.
    pub variables: BTreeMap<String, String>,
}

/// The server-side choices of a run, resolved from the command line.
#[derive(Debug, Clone)]
pub struct ServerArgsResolved {
    pub dsn: Option<Dsn>,
    /// Further `--dsn`s: an existing cluster's other nodes, connections spread over all.
    pub more_dsns: Vec<Dsn>,
    /// `--write-to`, `--read-from`: the default routing of phases on a topology.
    pub routing: Routing,
    /// Run on an external database that holds other tables.
    pub force: bool,
    pub database: String,
    pub options: ServerOptions,
}

#[cfg(test)]
mod tests {
    use super::{ConnectionSpec, Dsn};

    /// What one login learnt of PREFERRED TLS reaches every spec built of that DSN or a
    /// clone of it, and no spec of a DSN parsed anew, however alike: another run's, or
    /// another test's server on a port an earlier server used.
    #[test]
    fn preferred_tls_learnt_through_a_dsn_is_its_clones_and_no_other_dsns() {
        let url = "mysql://root@127.0.0.1:1?ssl-mode=PREFERRED";
        let dsn = Dsn::parse(url).unwrap();
        let first = ConnectionSpec::tcp(&dsn, None);
        // As the first login does when the server takes TLS.
        first.preferred_tls.took_tls.set(true).unwrap();
        let clone = dsn.clone();
        assert!(ConnectionSpec::tcp(&clone, Some("enginebench")).tls_in_force());
        assert!(first.with_database("enginebench").tls_in_force());

        let parsed_anew = Dsn::parse(url).unwrap();
        assert_eq!(parsed_anew, dsn, "what they name is the same");
        let other = ConnectionSpec::tcp(&parsed_anew, None);
        assert_eq!(other.preferred_tls.took_tls.get(), None);
    }
}
