//! What enginebench sends of its own, beyond the workload's statements in the measured
//! cells: every connection the runner opens for itself goes through [`OwnConn`], which
//! counts its connections, text statements, prepares and executions in one process-wide
//! tally, per [`Purpose`] (the workload's set-up, or probes: counters, plans, checks); and
//! whether probes may be sent at all (`--no-probes`). On a production server reached with
//! `--dsn` this is load the user did not ask for, so the record says how much (issue 66).
//!
//! Owns: the counted connection, the tally and the switch. Must not know what a probe
//! asks, nor runs, cells or records beyond the counts it hands out.

use mysql::prelude::{AsStatement, Queryable};
use mysql::{Binary, Conn, Params, QueryResult, Statement, Text};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Why enginebench has a connection of its own open.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// What the workload needs outside its cells: its database, its tables (made, loaded,
    /// reused or emptied), a scenario's DDL and sequence phases, a kind's own steps (TPC-C's
    /// consistency check, the ledger's tables, a replay's snapshot), crash trials, and what
    /// is dropped afterwards. sysbench's `prepare` sends the like.
    Setup,
    /// What only enginebench asks: server variables and counters, engine checks, plans and
    /// sample runs for evidence, footprints, a look at a stalled server. `--no-probes`
    /// sends none.
    Probe,
}

/// Counts of what went to the server, by protocol command.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct OwnCounts {
    /// Connections opened: each login that reached the server, a refused one too (the
    /// server's `Connections` counts every connection it accepted).
    #[serde(default)]
    pub connections: u64,
    /// Text statements (COM_QUERY), the mysql crate's own at login (`SELECT
    /// @@max_allowed_packet`, `SELECT @@socket`) and each connection's init statements
    /// included.
    #[serde(default)]
    pub queries: u64,
    /// Statements prepared (COM_STMT_PREPARE; the server's `Com_stmt_prepare`).
    #[serde(default)]
    pub prepares: u64,
    /// Prepared statements executed (COM_STMT_EXECUTE; the server's `Com_stmt_execute`).
    #[serde(default)]
    pub executes: u64,
}

impl OwnCounts {
    /// Statements the server ran: text ones and executions (prepares run nothing).
    pub fn statements(&self) -> u64 {
        self.queries + self.executes
    }

    pub fn is_zero(&self) -> bool {
        *self == OwnCounts::default()
    }

    /// What was counted since `earlier`, a reading of the same tally.
    pub fn since(&self, earlier: &OwnCounts) -> OwnCounts {
        OwnCounts {
            connections: self.connections.saturating_sub(earlier.connections),
            queries: self.queries.saturating_sub(earlier.queries),
            prepares: self.prepares.saturating_sub(earlier.prepares),
            executes: self.executes.saturating_sub(earlier.executes),
        }
    }

    pub fn add(&mut self, other: &OwnCounts) {
        self.connections += other.connections;
        self.queries += other.queries;
        self.prepares += other.prepares;
        self.executes += other.executes;
    }

    /// "12 statements (3 prepared), 2 connections".
    pub fn describe(&self) -> String {
        format!(
            "{} statement{} ({} text, {} executions of {} prepared), {} connection{}",
            self.statements(),
            if self.statements() == 1 { "" } else { "s" },
            self.queries,
            self.executes,
            self.prepares,
            self.connections,
            if self.connections == 1 { "" } else { "s" }
        )
    }
}

/// One purpose's running counts.
struct Tally {
    connections: AtomicU64,
    queries: AtomicU64,
    prepares: AtomicU64,
    executes: AtomicU64,
}

impl Tally {
    const fn new() -> Tally {
        Tally {
            connections: AtomicU64::new(0),
            queries: AtomicU64::new(0),
            prepares: AtomicU64::new(0),
            executes: AtomicU64::new(0),
        }
    }

    fn read(&self) -> OwnCounts {
        OwnCounts {
            connections: self.connections.load(Ordering::Relaxed),
            queries: self.queries.load(Ordering::Relaxed),
            prepares: self.prepares.load(Ordering::Relaxed),
            executes: self.executes.load(Ordering::Relaxed),
        }
    }
}

// Process-wide: probes go out from the runner's thread, the watchdog's and the nodes'
// samplers alike, and one command runs one run.
static SETUP: Tally = Tally::new();
static PROBES: Tally = Tally::new();
static PROBES_OFF: AtomicBool = AtomicBool::new(false);

fn tally(purpose: Purpose) -> &'static Tally {
    match purpose {
        Purpose::Setup => &SETUP,
        Purpose::Probe => &PROBES,
    }
}

/// Everything counted so far for `purpose`; subtract two readings for a stretch.
pub fn counted(purpose: Purpose) -> OwnCounts {
    tally(purpose).read()
}

/// `--no-probes`: from now on no probe is sent (set once, by the command, before the run).
pub fn switch_probes_off() {
    PROBES_OFF.store(true, Ordering::Relaxed);
}

/// Whether probes may be sent: every probe asks this first and sends nothing when not.
pub fn probes_allowed() -> bool {
    !PROBES_OFF.load(Ordering::Relaxed)
}

/// What a report says where probe evidence would be.
pub const NOT_COLLECTED: &str = "not collected: --no-probes";

/// Counts `logins` that reached the server without giving a connection (a refused
/// password, TLS the server does not offer under PREFERRED, a login given up): each is a
/// connection the server counted.
pub(super) fn count_failed_logins(purpose: Purpose, logins: u64) {
    tally(purpose)
        .connections
        .fetch_add(logins, Ordering::Relaxed);
}

/// Whether a login that failed with `err` reached the server (which then counted a
/// connection): every failure but one to open the transport (nothing listening, no such
/// socket, no route, the TCP connect timing out).
pub(super) fn login_reached_server(err: &mysql::Error) -> bool {
    use std::io::ErrorKind;
    match err {
        mysql::Error::IoError(io) => !matches!(
            io.kind(),
            ErrorKind::ConnectionRefused
                | ErrorKind::NotFound
                | ErrorKind::AddrNotAvailable
                | ErrorKind::PermissionDenied
                | ErrorKind::HostUnreachable
                | ErrorKind::NetworkUnreachable
                | ErrorKind::TimedOut
        ),
        mysql::Error::UrlError(_) => false,
        _ => true,
    }
}

/// Statements sent outside any [`OwnConn`] but on enginebench's own behalf, counted
/// where they are sent (a connection of another client, as a Lua script's set-up).
pub fn count_sent(purpose: Purpose, counts: &OwnCounts) {
    let tally = tally(purpose);
    tally
        .connections
        .fetch_add(counts.connections, Ordering::Relaxed);
    tally.queries.fetch_add(counts.queries, Ordering::Relaxed);
    tally.prepares.fetch_add(counts.prepares, Ordering::Relaxed);
    tally.executes.fetch_add(counts.executes, Ordering::Relaxed);
}

/// A connection of enginebench's own, counting everything it sends. It offers
/// [`Queryable`] and no way to the bare connection that could send uncounted.
pub struct OwnConn {
    conn: Conn,
    purpose: Purpose,
    /// Statement ids the server handed out on this connection: a `prep` answered from the
    /// crate's statement cache returns a known id and sent nothing.
    prepared: HashSet<u32>,
}

impl OwnConn {
    /// Counts a login that `opts` made into `conn`: the connection, the crate's own
    /// `SELECT @@max_allowed_packet` (sent unless the options set it), its `SELECT
    /// @@socket` (sent when it prefers a socket and the host is a loopback one: every
    /// connection over a unix socket, whose host is left at localhost; it moves to the
    /// socket only when none is named, which enginebench's connections always do) and the
    /// init statements.
    pub(super) fn opened(conn: Conn, opts: &mysql::Opts, purpose: Purpose) -> OwnConn {
        let tally = tally(purpose);
        tally.connections.fetch_add(1, Ordering::Relaxed);
        let packet_select = u64::from(opts.get_max_allowed_packet().is_none());
        let socket_select = u64::from(opts.get_prefer_socket() && opts.addr_is_loopback());
        tally.queries.fetch_add(
            packet_select + socket_select + opts.get_init().len() as u64,
            Ordering::Relaxed,
        );
        OwnConn {
            conn,
            purpose,
            prepared: HashSet::new(),
        }
    }

    pub fn purpose(&self) -> Purpose {
        self.purpose
    }

    /// Runs `ask` with what it sends counted as probes (the runner's set-up connection
    /// also reads the counters around cells).
    pub fn probing<R>(&mut self, ask: impl FnOnce(&mut OwnConn) -> R) -> R {
        let purpose = std::mem::replace(&mut self.purpose, Purpose::Probe);
        let answer = ask(self);
        self.purpose = purpose;
        answer
    }

    /// The server's version as its login gave it, and whether it is MariaDB: MariaDB 10.x
    /// greets as "5.5.5-10.x.y-MariaDB", of which the mysql crate keeps only 5.5.5 (None:
    /// the real version is not known without asking); MySQL's versions are 5 to 9,
    /// MariaDB's 10 and on.
    pub fn login_version(&self) -> (bool, Option<(u16, u16, u16)>) {
        match self.conn.server_version() {
            (5, 5, 5) => (true, None),
            version => (version.0 >= 10, Some(version)),
        }
    }

    /// The connection to read from (its server version, its socket), never to send on.
    pub fn inner(&self) -> &Conn {
        &self.conn
    }

    /// Where LOAD DATA LOCAL INFILE's rows come from: the statement itself is counted as
    /// it is sent, the rows it pulls are its own.
    pub fn set_local_infile_handler(&mut self, handler: Option<mysql::LocalInfileHandler>) {
        self.conn.set_local_infile_handler(handler);
    }

    fn count(&self, counter: fn(&Tally) -> &AtomicU64) {
        counter(tally(self.purpose)).fetch_add(1, Ordering::Relaxed);
    }
}

impl std::os::fd::AsRawFd for OwnConn {
    /// The socket, for a worker's registration to be abandoned on a hang (nothing is
    /// sent through it here).
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        self.conn.as_raw_fd()
    }
}

impl Queryable for OwnConn {
    fn query_iter<Q: AsRef<str>>(
        &mut self,
        query: Q,
    ) -> mysql::Result<QueryResult<'_, '_, '_, Text>> {
        self.count(|t| &t.queries);
        self.conn.query_iter(query)
    }

    fn prep<Q: AsRef<str>>(&mut self, query: Q) -> mysql::Result<Statement> {
        let statement = self.conn.prep(query)?;
        if self.prepared.insert(statement.id()) {
            self.count(|t| &t.prepares);
        }
        Ok(statement)
    }

    fn close(&mut self, stmt: Statement) -> mysql::Result<()> {
        self.prepared.remove(&stmt.id());
        self.conn.close(stmt)
    }

    fn exec_iter<S, P>(
        &mut self,
        stmt: S,
        params: P,
    ) -> mysql::Result<QueryResult<'_, '_, '_, Binary>>
    where
        S: AsStatement,
        P: Into<Params>,
    {
        // Prepared here (a text statement) so that the prepare is counted.
        let statement = stmt.as_statement(self)?.into_owned();
        self.count(|t| &t.executes);
        self.conn.exec_iter(statement, params)
    }

    fn exec_batch<S, P, I>(&mut self, stmt: S, params: I) -> mysql::Result<()>
    where
        Self: Sized,
        S: AsStatement,
        P: Into<Params>,
        I: IntoIterator<Item = P>,
    {
        // One execution per parameter set, counted as each is sent (no bulk protocol).
        let statement = stmt.as_statement(self)?.into_owned();
        for params in params {
            self.exec_drop(&statement, params)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_subtract_and_add_per_command() {
        let later = OwnCounts {
            connections: 3,
            queries: 10,
            prepares: 2,
            executes: 20,
        };
        let earlier = OwnCounts {
            connections: 1,
            queries: 4,
            prepares: 2,
            executes: 5,
        };
        let stretch = later.since(&earlier);
        assert_eq!(stretch.statements(), 6 + 15);
        assert_eq!(stretch.prepares, 0);
        let mut total = earlier;
        total.add(&stretch);
        assert_eq!(total, later);
        assert_eq!(
            stretch.describe(),
            "21 statements (6 text, 15 executions of 0 prepared), 2 connections"
        );
    }
}
