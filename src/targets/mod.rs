//! The target stage: where load goes. A [`Target`] is one thing a study talks to — today a
//! throwaway server enginebench starts ([`Throwaway`]) or an external server named by
//! `--dsn` ([`External`]). What differs between them (starting, restarting, replacing for a
//! profile, reading the error log, whether everything on it is ours) lives behind its
//! capability traits, so the runner has no branch per kind: several servers of different
//! versions or a topology of nodes are further implementations. The [`Workspace`] keeps
//! what a run may touch on a target it does not own; [`diagnosis`] explains failures from
//! what the target shows. This stage must not know studies, plans or records of runs.

mod diagnosis;
mod external;
mod throwaway;
mod workspace;

pub use diagnosis::{
    ask_unanswering, disk_state, failure_context, ServerLook, ServerWatch, UnansweringServer,
};
pub use external::External;
pub use throwaway::Throwaway;

pub use workspace::Workspace;

use mysql::prelude::Queryable;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use crate::engine::Engine;
use crate::server::own_load::{probes_allowed, OwnConn, Purpose};
use crate::server::{
    describe_mysql_error, ConnectionSpec, Dsn, NodeRole, PowerCut, Routing, ServerError,
    ServerOptions, ServerRecord, Topology,
};

/// A login that sends nothing and returns the version the server's greeting gave, whole
/// (`10.11.19-MariaDB-0+deb12u1`, MariaDB 10.x's `5.5.5-` prefix dropped): how a
/// `--no-probes` record learns the version. The mysql crate keeps only the greeting's first
/// three numbers (5.5.5 for MariaDB 10.x); the driver's client keeps the whole string, so
/// the caller passes its login in (`driver::libmariadb::Connection::greeting_version`):
/// this stage must not know the driver.
pub type ReadGreeting = fn(&ConnectionSpec) -> Result<String, mysql::Error>;

/// What a crash and the start after it came to.
#[derive(Debug, Clone)]
pub struct Recovery {
    /// What the power cut dropped and undid (None: a process crash only).
    pub power_cut: Option<PowerCut>,
    /// Seconds from the start after the crash until the server answered; None: it did
    /// not come back.
    pub recovery_s: Option<f64>,
    /// Why it did not come back, with the error log's tail.
    pub error: Option<String>,
}

/// Only a throwaway server can be crashed on purpose.
fn not_crashable() -> ServerError {
    ServerError::Io(
        "only a throwaway server enginebench started can be crashed (not an external one)".into(),
    )
}

/// One node of a target, for routing connections and reading its counters.
#[derive(Clone)]
pub struct NodeInfo {
    pub name: String,
    pub role: NodeRole,
    /// An admin connection to it (no default database).
    pub spec: ConnectionSpec,
    /// Its process, when it runs here as ours.
    pub pid: Option<u32>,
    /// host:port, for the record.
    pub address: String,
}

/// A server (or, later, a set of servers) that load goes to: every capability below.
/// Dropping it tears down whatever it started. Code that needs less names the pieces it
/// uses ([`Reach`], [`Observe`], [`Lifecycle`], [`Crash`]), so a fake target in a unit test
/// implements only those.
pub trait Target: Reach + Observe + Lifecycle + Crash {}

// Sized only: a `dyn Target` is a Target as a trait object already.
impl<T: Reach + Observe + Lifecycle + Crash> Target for T {}

/// Where connections go: the admin connection, the nodes, and how a phase's connections
/// are spread over them.
pub trait Reach {
    /// A connection without a default database, for setup and probes.
    fn admin_spec(&self) -> ConnectionSpec;

    /// Its nodes in order; the first is where `admin_spec` goes.
    fn nodes(&self) -> Vec<NodeInfo>;

    /// A connection to `database`.
    fn spec(&self, database: &str) -> ConnectionSpec {
        self.admin_spec().with_database(database)
    }

    /// The shape of the servers (one, replicas, Galera, Spider).
    fn topology(&self) -> Topology {
        Topology::Single
    }

    /// Connections to `database` for a phase, spread round-robin over the nodes `routing`
    /// names for it (`writes`: whether the phase changes data).
    fn route(&self, database: &str, routing: Routing, writes: bool) -> ConnectionSpec {
        let nodes = self.nodes();
        if nodes.len() == 1 {
            return self.spec(database);
        }
        ConnectionSpec::spread_over(
            self.routed_nodes(routing, writes)
                .into_iter()
                .map(|index| nodes[index].spec.with_database(database))
                .collect(),
        )
    }

    /// The indexes of the nodes [`Reach::route`] spreads connections over, in order.
    fn routed_nodes(&self, routing: Routing, writes: bool) -> Vec<usize> {
        let roles: Vec<NodeRole> = self.nodes().iter().map(|node| node.role).collect();
        routing.nodes(&roles, writes)
    }

    /// Spider: makes the table on every backend and returns the head's CREATE TABLE for
    /// it; None: the table is created as written.
    fn shard_table(
        &self,
        _database: &str,
        _table: &str,
        _create_sql: &str,
        _indexes: &[String],
    ) -> Result<Option<String>, ServerError> {
        Ok(None)
    }
}

/// What the target shows about itself without a connection: its process, its error log,
/// its datadir, and whether it is ours.
pub trait Observe {
    /// What the record keeps about it, beyond version and variables: (kind, address,
    /// datadir, on tmpfs, command line).
    fn facts(&self, variables: &BTreeMap<String, String>) -> TargetFacts;

    /// Whether everything on it was made by this run (a throwaway server): the ownership
    /// checks of [`Workspace`] then have nothing to protect.
    fn is_private(&self) -> bool;

    /// Whether the server process still runs (without asking it anything), when it is ours
    /// to watch; `None` when only a connection can tell.
    fn process_running(&mut self) -> Option<bool>;

    /// The end of the server's error log, when it is ours to read.
    fn error_log_tail(&self, lines: usize) -> Option<String>;

    /// Why the server process ended (exit status, the OOM killer of its memory cap), when
    /// it is ours and has ended.
    fn death_cause(&mut self) -> Option<String> {
        None
    }

    /// The server's process id, for /proc probes, when it runs on this machine as ours.
    fn server_pid(&self) -> Option<u32>;

    /// The server's data directory on this machine, for footprints and disk diagnosis.
    fn datadir(&self) -> Option<PathBuf>;
}

/// Start and stop: the same server again, a fresh one in its place, or one that stopped
/// answering ended.
pub trait Lifecycle {
    /// Stops and starts the same server on its datadir (empty caches), dropping the page
    /// cache where allowed; returns whether it was dropped.
    fn restart_cold(&mut self) -> Result<bool, ServerError>;

    /// Puts a fresh server started with `options` in place of this one (a profile's
    /// configuration, or a new server after a crash); the old one is removed.
    fn replace(&mut self, options: &ServerOptions, why: Replacement) -> Result<(), ServerError>;

    /// Stops a server of ours that stopped answering (SIGTERM, then SIGKILL if that does
    /// not end it), so the next cells run on a fresh one; says how it ended. None: not
    /// ours to stop (an external server is left alone).
    fn stop_unanswering(&mut self) -> Option<String> {
        None
    }
}

/// Crash and restart on purpose, for the crash studies.
pub trait Crash {
    /// Kills the server at once (SIGKILL), with `power` also cuts the power of its datadir
    /// (unsynced writes dropped), then starts it again on the same datadir and waits up to
    /// `limit` for it: a recovery that fails is in the result, not an error.
    fn crash_and_restart(
        &mut self,
        _power: bool,
        _limit: Duration,
    ) -> Result<Recovery, ServerError> {
        Err(not_crashable())
    }

    /// Writes back what the datadir's power-loss file system holds; returns the bytes
    /// written (0 when not on one).
    fn checkpoint_power_fs(&mut self) -> Result<u64, ServerError> {
        Ok(0)
    }
}

/// What a connection and a look at the process tell together, the same for every target
/// (given to all that [`Reach`] and [`Observe`]).
pub trait Inspect: Reach + Observe {
    /// Whether the server still runs: the process when it is ours, and a fresh connection.
    ///
    /// A killed server resets its connections before it has finished exiting, so one look
    /// is not enough: wait (up to 3 s) until it has either exited or accepts a connection.
    fn is_alive(&mut self) -> bool {
        let spec = self.admin_spec();
        let deadline = std::time::Instant::now() + Duration::from_secs(3);
        loop {
            if self.process_running() == Some(false) {
                return false;
            }
            if spec.connect_own(Purpose::Probe).is_ok() {
                return true;
            }
            if std::time::Instant::now() >= deadline {
                // Running but not answering: as good as dead for a benchmark.
                return false;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Version and variables, for the results record. Under `--no-probes` nothing is
    /// asked: `read_greeting` logs in and returns the version the server's greeting gave.
    fn record(&self, read_greeting: ReadGreeting) -> Result<ServerRecord, ServerError> {
        // One connection reads the version, the variables and the TLS it got.
        let admin = self.admin_spec();
        if !probes_allowed() {
            let greeting = admin.connect_own_with(Purpose::Setup, read_greeting)?;
            return Ok(self.record_unprobed(greeting));
        }
        let mut conn = admin.connect_own(Purpose::Probe)?;
        let (version, variables) = version_and_variables(&admin, &mut conn)?;
        let facts = self.facts(&variables);
        let says_mariadb = version.contains("MariaDB")
            || variables
                .get("version_comment")
                .is_some_and(|c| c.contains("MariaDB"));
        let nodes = node_records(self, &version, &variables)?;
        Ok(ServerRecord {
            kind: facts.kind.into(),
            address: facts.address,
            flavour: if says_mariadb { "mariadb" } else { "mysql" }.into(),
            version,
            datadir: facts.datadir,
            datadir_on_tmpfs: facts.datadir_on_tmpfs,
            command_line: facts.command_line,
            variables,
            caps: facts.caps,
            topology: (!self.topology().is_single()).then(|| self.topology().to_string()),
            nodes,
            tls: tls_record(&admin, &mut conn)?,
        })
    }

    /// `--no-probes`: what the login told (`greeting`: the version, from the handshake)
    /// and nothing asked; the variables and TLS are not read. A server of ours says its
    /// version with `--version`, sending nothing to the server.
    fn record_unprobed(&self, greeting: String) -> ServerRecord {
        let mariadb = greeting_is_mariadb(&greeting);
        let facts = self.facts(&BTreeMap::new());
        let binary_says = facts
            .command_line
            .first()
            .map(|binary| crate::server::builds::binary_version(std::path::Path::new(binary)));
        ServerRecord {
            kind: facts.kind.into(),
            address: facts.address,
            flavour: if mariadb { "mariadb" } else { "mysql" }.into(),
            version: unprobed_version(binary_says, greeting),
            datadir: facts.datadir,
            datadir_on_tmpfs: facts.datadir_on_tmpfs,
            command_line: facts.command_line,
            variables: BTreeMap::new(),
            caps: facts.caps,
            topology: (!self.topology().is_single()).then(|| self.topology().to_string()),
            nodes: Vec::new(),
            tls: None,
        }
    }

    /// Refuses engines the server lacks, before any table is created.
    fn check_engines(&self, wanted: &[Engine]) -> Result<(), ServerError> {
        let (missing, available) = self.engines_missing(wanted)?;
        match missing.first() {
            Some(&engine) => Err(engine_missing(engine, &available)),
            None => Ok(()),
        }
    }

    /// Which of `wanted` the server does not offer, and what it offers (sorted).
    fn engines_missing(
        &self,
        wanted: &[Engine],
    ) -> Result<(Vec<Engine>, Vec<String>), ServerError> {
        if !probes_allowed() {
            // Not asked: a table on an engine the server lacks fails to be made, saying so.
            return Ok((Vec::new(), Vec::new()));
        }
        let spec = self.admin_spec();
        let mut conn = spec.connect_own(Purpose::Probe)?;
        let rows: Vec<(String, String)> = conn
            .query_map(
                "SELECT ENGINE, SUPPORT FROM information_schema.ENGINES",
                |row| row,
            )
            .map_err(|err| query_error(&spec, &err))?;
        let mut available: Vec<String> = rows
            .into_iter()
            .filter(|(_, support)| support == "YES" || support == "DEFAULT")
            .map(|(name, _)| name)
            .collect();
        available.sort();
        let missing = wanted
            .iter()
            .copied()
            .filter(|engine| {
                !available
                    .iter()
                    .any(|name| name.eq_ignore_ascii_case(engine.sql_name()))
            })
            .collect();
        Ok((missing, available))
    }
}

impl<T: Reach + Observe + ?Sized> Inspect for T {}

/// Every node's version and variables, when there are several; the first node's are the
/// ones [`Inspect::record`] read already.
fn node_records(
    target: &(impl Reach + ?Sized),
    first_version: &str,
    first_variables: &BTreeMap<String, String>,
) -> Result<Vec<crate::server::NodeRecord>, ServerError> {
    let nodes = target.nodes();
    if nodes.len() < 2 {
        return Ok(Vec::new());
    }
    nodes
        .into_iter()
        .enumerate()
        .map(|(index, node)| {
            let (version, variables) = if index == 0 {
                (first_version.to_string(), first_variables.clone())
            } else {
                version_and_variables(&node.spec, &mut node.spec.connect_own(Purpose::Probe)?)?
            };
            Ok(crate::server::NodeRecord {
                name: node.name,
                role: node.role,
                address: node.address,
                version,
                variables,
            })
        })
        .collect()
}

/// What a target says about itself for the record.
pub struct TargetFacts {
    pub kind: &'static str,
    pub address: String,
    pub datadir: Option<String>,
    pub datadir_on_tmpfs: bool,
    pub command_line: Vec<String>,
    pub caps: Option<crate::server::caps::CapsRecord>,
}

/// The version a `--no-probes` record shows, asked of nobody: what our server's binary says
/// (as `@@version` reads it, `10.11.19-MariaDB-0+deb12u1`), else the login's greeting
/// (the same string, MariaDB 10.x's `5.5.5-` prefix dropped).
fn unprobed_version(binary_says: Option<String>, greeting: String) -> String {
    let said = |version: &String| !version.is_empty();
    binary_says
        .filter(said)
        .or(Some(greeting).filter(said))
        .unwrap_or_else(|| "version not read: --no-probes".into())
}

/// Whether a greeting's version is MariaDB's: it says so (`-MariaDB` ends every version a
/// MariaDB server builds), or is 10 or later (MySQL's are 5 to 9).
fn greeting_is_mariadb(greeting: &str) -> bool {
    greeting.contains("MariaDB")
        || greeting
            .split('.')
            .next()
            .and_then(|major| major.parse::<u32>().ok())
            .is_some_and(|major| major >= 10)
}

/// Why a target is replaced, for the message an external server gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Replacement {
    /// A scenario profile's configuration.
    Profile,
    /// The server died; the study goes on with a fresh one.
    AfterCrash,
}

/// Starts a throwaway server, or checks that the external one answers, and makes sure
/// `database` exists.
pub fn open(
    dsn: Option<Dsn>,
    options: &ServerOptions,
    database: &str,
) -> Result<Box<dyn Target>, ServerError> {
    open_nodes(dsn.into_iter().collect(), options, database)
}

/// As [`open`], with every `--dsn` given: several are one existing cluster's nodes.
pub fn open_nodes(
    dsns: Vec<Dsn>,
    options: &ServerOptions,
    database: &str,
) -> Result<Box<dyn Target>, ServerError> {
    let target: Box<dyn Target> = if dsns.is_empty() {
        Box::new(Throwaway::start(options)?)
    } else {
        Box::new(External::new(dsns))
    };
    ensure_database(target.as_ref(), database)?;
    Ok(target)
}

/// Creates `database` on the target unless it is there.
pub fn ensure_database(target: &(impl Reach + ?Sized), database: &str) -> Result<(), ServerError> {
    let spec = target.admin_spec();
    let mut conn = spec.connect_own(Purpose::Setup)?;
    conn.query_drop(format!("CREATE DATABASE IF NOT EXISTS `{database}`"))
        .map_err(|err| query_error(&spec, &err))
}

/// A server's `VERSION()` and `SHOW GLOBAL VARIABLES`, read on `conn` (a connection of
/// `spec`'s).
fn version_and_variables(
    spec: &ConnectionSpec,
    conn: &mut OwnConn,
) -> Result<(String, BTreeMap<String, String>), ServerError> {
    let version: String = conn
        .query_first("SELECT VERSION()")
        .map_err(|err| query_error(spec, &err))?
        .unwrap_or_default();
    let variables = names_and_values(spec, conn, "SHOW GLOBAL VARIABLES")?;
    Ok((version, variables))
}

/// The TLS the target's connections use, as the server reports it for `conn` (one of
/// `spec`'s, so a PREFERRED mode is settled): None when they are plain.
fn tls_record(
    spec: &ConnectionSpec,
    conn: &mut OwnConn,
) -> Result<Option<crate::server::TlsRecord>, ServerError> {
    if !spec.tls_in_force() {
        return Ok(None);
    }
    let status = names_and_values(
        spec,
        conn,
        "SHOW SESSION STATUS WHERE Variable_name IN ('Ssl_version', 'Ssl_cipher')",
    )?;
    let field = |name: &str| status.get(name).cloned().unwrap_or_default();
    Ok(Some(crate::server::TlsRecord {
        mode: spec.tls().mode().name().to_string(),
        version: field("Ssl_version"),
        cipher: field("Ssl_cipher"),
    }))
}

/// A `SHOW … VARIABLES`/`STATUS` statement's rows, a NULL value read as empty.
fn names_and_values(
    spec: &ConnectionSpec,
    conn: &mut OwnConn,
    sql: &str,
) -> Result<BTreeMap<String, String>, ServerError> {
    Ok(conn
        .query_map(sql, |(name, value): (String, Option<String>)| {
            (name, value.unwrap_or_default())
        })
        .map_err(|err| query_error(spec, &err))?
        .into_iter()
        .collect())
}

/// A query on the target failed.
fn query_error(spec: &ConnectionSpec, err: &mysql::Error) -> ServerError {
    ServerError::Query {
        target: spec.label().to_string(),
        cause: describe_mysql_error(err),
    }
}

/// The server lacks `engine`; `available` is what it offers.
pub fn engine_missing(engine: Engine, available: &[String]) -> ServerError {
    ServerError::EngineMissing {
        engine: engine.display_name().to_string(),
        available: available.join(", "),
    }
}

#[cfg(test)]
mod tests {
    use super::{greeting_is_mariadb, unprobed_version};

    #[test]
    fn an_unprobed_record_shows_the_binarys_version_else_the_greetings() {
        assert_eq!(
            unprobed_version(Some("10.11.19-MariaDB-0+deb12u1".into()), String::new()),
            "10.11.19-MariaDB-0+deb12u1"
        );
        assert_eq!(
            unprobed_version(Some("9.7.4".into()), "9.7.4-1".into()),
            "9.7.4"
        );
        // An external server: the greeting's whole version.
        assert_eq!(
            unprobed_version(None, "10.11.19-MariaDB-0+deb12u1".into()),
            "10.11.19-MariaDB-0+deb12u1"
        );
        assert_eq!(
            unprobed_version(Some(String::new()), "11.8.6-MariaDB".into()),
            "11.8.6-MariaDB"
        );
        assert_eq!(
            unprobed_version(None, String::new()),
            "version not read: --no-probes"
        );
    }

    #[test]
    fn a_greeting_is_mariadbs_when_it_says_so_or_is_10_or_later() {
        assert!(greeting_is_mariadb("10.11.19-MariaDB-0+deb12u1"));
        assert!(greeting_is_mariadb("11.8.6"));
        assert!(!greeting_is_mariadb("9.7.4"));
        assert!(!greeting_is_mariadb("8.0.36-0ubuntu0.22.04.1"));
        assert!(!greeting_is_mariadb(""));
    }
}
