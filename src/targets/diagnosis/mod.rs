//! Why something failed on a target, from what the target shows: a full filesystem under
//! the datadir (with free space before and after, and the server's own ENOSPC line), a
//! server that died (with the end of its error log), or one that stopped answering (what a
//! new connection sees). And whether a server that has not answered for a while is busy or
//! silent ([`ServerWatch`]): its process (stopped, gone, using CPU or doing I/O), a new
//! connection's answer, and the statements its process list shows. It must not know what
//! was running.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::{Inspect, Observe, Reach};
use crate::measure::{filesystem_of, sample_process, FilesystemState, ProcessSample};
use crate::server::{ConnectionSpec, OwnConn, Purpose};

/// What the datadir's filesystem and the server's state add to an error message (empty
/// when neither explains anything). `disk_before` is the filesystem before the failed work.
pub fn failure_context(
    target: &mut (impl Reach + Observe + ?Sized),
    disk_before: Option<&FilesystemState>,
) -> String {
    let mut context = String::new();
    // Engines grow files in large steps (InnoDB preallocates tens of MB), so a "full"
    // filesystem may still show free space: the server's own ENOSPC line is the proof.
    let log = target.error_log_tail(40).unwrap_or_default();
    let enospc_line = log.lines().rev().find(|line| {
        line.contains("error 28") || line.contains("No space left") || line.contains("Disk is full")
    });
    if let (Some(before), Some(after)) = (
        disk_before,
        target.datadir().as_deref().and_then(filesystem_of),
    ) {
        if enospc_line.is_some() || after.is_nearly_full() {
            let mb = |bytes: u64| bytes as f64 / 1048576.0;
            context.push_str(&format!(
                "; the filesystem holding the datadir ({}, {}) is full{}: {:.1} MB free before the load, {:.1} MB after; give the server more room (a larger tmpfs, another --server-dir) or lower --rows",
                after.mount_point.display(),
                after.fs_type,
                enospc_line.map_or(String::new(), |line| format!(" (server: \"{}\")", line.trim())),
                mb(before.free_bytes),
                mb(after.free_bytes)
            ));
        }
    }
    if !target.is_alive() {
        // The kernel's reason (the OOM killer under a memory cap) says more than the log,
        // which a killed server never got to write.
        let kernel = target
            .death_cause()
            .map(|why| format!(" ({why})"))
            .unwrap_or_default();
        let log = target.error_log_tail(20).unwrap_or_default();
        context.push_str(&if log.trim().is_empty() {
            format!("; the server died{kernel} without a word in its error log")
        } else {
            format!("; the server died{kernel}, its error log ends with:\n{log}")
        });
    }
    context
}

/// The filesystem under the target's datadir now, to compare with after some work.
pub fn disk_state(target: &(impl Observe + ?Sized)) -> Option<FilesystemState> {
    target.datadir().as_deref().and_then(filesystem_of)
}

/// What a server that stopped answering its connections showed a new one.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UnansweringServer {
    /// Whether a new connection got in and was answered.
    pub answered: bool,
    /// Busy sessions: "id 12 root Query 14 s Updating: UPDATE sbtest1 SET …".
    pub processlist: Vec<String>,
    /// The engine's status lines that tell a lock, a checkpoint or pending I/O.
    pub engine_status: Vec<String>,
    /// The datadir's filesystem, when it is full.
    pub disk: Option<String>,
}

/// How long the questions to a server that stopped answering may wait (the login too).
const ASK_LIMIT: std::time::Duration = std::time::Duration::from_secs(3);
/// At most this many sessions and engine status lines are kept.
const LINES_KEPT: usize = 20;

/// Asks a server whose connections stopped getting answers, on a new connection bounded
/// by [`ASK_LIMIT`], what it is doing: its busy sessions and, for `engine`, the status
/// lines that name a lock, a checkpoint or pending I/O; and looks at the datadir's disk.
pub fn ask_unanswering(
    target: &(impl Reach + Observe + ?Sized),
    engine: crate::engine::Engine,
) -> UnansweringServer {
    use mysql::prelude::Queryable;
    let mut shows = UnansweringServer {
        disk: disk_state(target)
            .filter(|disk| disk.is_nearly_full())
            .map(|disk| {
                format!(
                    "the datadir's filesystem ({}, {}) is full: {:.1} MB free",
                    disk.mount_point.display(),
                    disk.fs_type,
                    disk.free_bytes as f64 / 1048576.0
                )
            }),
        ..UnansweringServer::default()
    };
    if !crate::server::own_load::probes_allowed() {
        return shows;
    }
    let Ok(mut conn) = target
        .admin_spec()
        .with_read_limit(ASK_LIMIT)
        .connect_own(Purpose::Probe)
    else {
        return shows;
    };
    type Session = (
        u64,
        Option<String>,
        Option<String>,
        Option<i64>,
        Option<String>,
        Option<String>,
    );
    let sessions: Result<Vec<Session>, _> = conn.query(
        "SELECT ID, USER, COMMAND, TIME, STATE, LEFT(INFO, 120) FROM information_schema.PROCESSLIST \
         WHERE ID <> CONNECTION_ID() AND COMMAND NOT IN ('Sleep', 'Daemon') ORDER BY TIME DESC",
    );
    let Ok(sessions) = sessions else {
        return shows;
    };
    shows.answered = true;
    let total = sessions.len();
    shows.processlist = sessions
        .into_iter()
        .take(LINES_KEPT)
        .map(|(id, user, command, time, state, info)| {
            format!(
                "id {id} {} {} {} s {}: {}",
                user.unwrap_or_default(),
                command.unwrap_or_default(),
                time.unwrap_or(0),
                state
                    .filter(|s| !s.is_empty())
                    .unwrap_or_else(|| "-".into()),
                info.unwrap_or_default().replace('\n', " ")
            )
        })
        .collect();
    if total > LINES_KEPT {
        shows
            .processlist
            .push(format!("… and {} more", total - LINES_KEPT));
    }
    shows.engine_status = engine_status_lines(&mut conn, engine);
    shows
}

/// The lines of SHOW ENGINE … STATUS that say why work waits.
fn engine_status_lines(conn: &mut OwnConn, engine: crate::engine::Engine) -> Vec<String> {
    use mysql::prelude::Queryable;
    let (sql, telling): (&str, &[&str]) = match engine {
        crate::engine::Engine::RocksDb => (
            "SHOW ENGINE ROCKSDB STATUS",
            &["stall", "Stall", "pending", "compaction"],
        ),
        // InnoDB's status names waits whatever engine the cell used (the server's own
        // tables are InnoDB's).
        _ => (
            "SHOW ENGINE INNODB STATUS",
            &[
                "LOCK WAIT",
                "waiting",
                "Pending",
                "pending",
                "Log sequence number",
                "Last checkpoint",
                "Modified db pages",
                "History list length",
                "semaphore",
            ],
        ),
    };
    let rows: Vec<(String, String, String)> = conn.query(sql).unwrap_or_default();
    rows.iter()
        .flat_map(|(_, _, status)| status.lines())
        .map(str::trim)
        .filter(|line| telling.iter().any(|word| line.contains(word)))
        .take(LINES_KEPT)
        .map(String::from)
        .collect()
}

/// A way to look at a server that has not answered for a while, without disturbing it:
/// its process when it is ours (by pid and start time, so a reused pid is never taken for
/// it), and a new connection bounded by [`ASK_LIMIT`]. Keeps the process's counters of the
/// last look, so each look tells whether it moved since.
pub struct ServerWatch {
    spec: ConnectionSpec,
    process: Option<Process>,
    last: Mutex<Option<(Instant, ProcessSample)>>,
}

/// The server's process, as first seen.
#[derive(Debug, Clone, Copy)]
struct Process {
    pid: u32,
    /// /proc/PID/stat's start time: the same pid with another start is another process.
    started: u64,
}

/// What a look at a server found.
#[derive(Debug, Clone, PartialEq)]
pub enum ServerLook {
    /// Its process is stopped (state T or t: SIGSTOP, a debugger, a paused container).
    Stopped(char),
    /// Its process has ended.
    Gone,
    /// A new connection got no answer within [`ASK_LIMIT`].
    NoAnswer,
    /// A new connection was answered: the busy sessions, and how the process moved since
    /// the last look (None: not ours to read).
    Answered {
        sessions: Vec<BusySession>,
        moved: Option<Movement>,
    },
}

/// One session of the process list that runs a statement.
#[derive(Debug, Clone, PartialEq)]
pub struct BusySession {
    pub id: u64,
    pub state: String,
    pub seconds: f64,
    /// MariaDB's PROGRESS (0-100), when the statement reports one.
    pub progress: Option<f64>,
    /// The statement's start, one line.
    pub statement: String,
    /// It waits for a lock (a metadata or table lock, or an InnoDB row lock).
    pub lock_wait: bool,
}

/// How much a process used between two looks.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Movement {
    pub over: Duration,
    pub cpu_us: u64,
    /// Bytes read and written (storage and write calls).
    pub io_bytes: u64,
}

impl Movement {
    /// Whether it did work: more CPU than an idle server's background threads use (1% of
    /// a core), or a megabyte of I/O.
    pub fn moved(&self) -> bool {
        self.cpu_us * 100 >= self.over.as_micros() as u64 || self.io_bytes >= 1 << 20
    }
}

/// With no look before, the counters are compared over this window.
const FIRST_WINDOW: Duration = Duration::from_secs(1);
/// How long a server stopped on purpose gets to end on SIGTERM before SIGKILL.
const STOP_GRACE: Duration = Duration::from_secs(5);

impl ServerWatch {
    /// A watch over `target`'s server: its process too when it runs here as ours.
    pub fn of(target: &(impl Reach + Observe + ?Sized)) -> ServerWatch {
        let process = target
            .server_pid()
            .filter(|_| target.is_private())
            .and_then(|pid| {
                let stat = process_stat(pid)?;
                Some(Process {
                    pid,
                    started: stat.started,
                })
            });
        ServerWatch {
            spec: target.admin_spec(),
            process,
            last: Mutex::new(None),
        }
    }

    /// One look: the process first (a stopped or ended one needs no connection), then a
    /// new connection's answer and the busy sessions it shows.
    pub fn look(&self) -> ServerLook {
        let moved = match self.process {
            Some(process) => match process_stat(process.pid) {
                Some(stat) if stat.started == process.started => match stat.state {
                    'T' | 't' => return ServerLook::Stopped(stat.state),
                    'Z' | 'X' | 'x' => return ServerLook::Gone,
                    _ => self.movement(process.pid),
                },
                _ => return ServerLook::Gone,
            },
            None => None,
        };
        // Also under --no-probes: whether a cell that completes nothing goes on waiting
        // depends on it (counted with the probes).
        let Ok(mut conn) = self
            .spec
            .with_read_limit(ASK_LIMIT)
            .connect_own(Purpose::Probe)
        else {
            return ServerLook::NoAnswer;
        };
        match busy_sessions(&mut conn) {
            Some(sessions) => ServerLook::Answered { sessions, moved },
            None => ServerLook::NoAnswer,
        }
    }

    /// The process's use since the last look (over [`FIRST_WINDOW`] at the first).
    fn movement(&self, pid: u32) -> Option<Movement> {
        let previous = self.last.lock().unwrap_or_else(|p| p.into_inner()).take();
        let (then, before) = match previous {
            Some(previous) => previous,
            None => {
                let first = (Instant::now(), sample_process(pid)?);
                std::thread::sleep(FIRST_WINDOW);
                first
            }
        };
        let now = (Instant::now(), sample_process(pid)?);
        *self.last.lock().unwrap_or_else(|p| p.into_inner()) = Some(now);
        let delta = now.1.delta_since(&before);
        Some(Movement {
            over: now.0.duration_since(then),
            cpu_us: delta.cpu_us,
            io_bytes: delta.storage_read_bytes
                + delta.storage_write_bytes
                + delta.syscall_write_bytes,
        })
    }

    /// Stops the server's process when it is ours and still the one first seen (SIGTERM
    /// with SIGCONT, SIGKILL if that does not end it within a few seconds), which ends
    /// every statement waiting on it; says how. None: not ours to stop.
    pub fn stop_if_ours(&self, why: &str) -> Option<String> {
        let process = self.process?;
        let same = || {
            process_stat(process.pid).filter(|stat| {
                stat.started == process.started && !matches!(stat.state, 'Z' | 'X' | 'x')
            })
        };
        same()?;
        let signal = |signal| {
            // SAFETY: signalling the server we started, checked above by its start time (a
            // child is not reaped, so its pid not reused, before its owner waits for it).
            unsafe { libc::kill(process.pid as libc::pid_t, signal) };
        };
        signal(libc::SIGTERM);
        signal(libc::SIGCONT);
        let started = Instant::now();
        while started.elapsed() < STOP_GRACE {
            if same().is_none() {
                return Some(format!(
                    "stopped by enginebench ({why}): it ended on SIGTERM in {:.1} s",
                    started.elapsed().as_secs_f64()
                ));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        if same().is_some() {
            signal(libc::SIGKILL);
        }
        Some(format!(
            "stopped by enginebench ({why}): killed with SIGKILL, as SIGTERM had not ended it within {} s",
            STOP_GRACE.as_secs()
        ))
    }
}

impl ServerLook {
    /// Why the server is to be called silent, if it is: stopped, gone, no answer, or every
    /// busy session waiting for a lock while nothing moved. With `statements_expected` (a
    /// cell whose statements are in flight) also a server that runs none of them, or whose
    /// statements do not move (no CPU, no I/O; a statement asked to sleep excepted).
    pub fn silence(&self, statements_expected: bool) -> Option<String> {
        let (sessions, moved) = match self {
            ServerLook::Stopped(state) => {
                return Some(format!(
                    "the server process is stopped (state {state}: SIGSTOP, a debugger or a paused container): it runs nothing until continued"
                ))
            }
            ServerLook::Gone => return Some("the server process is gone".into()),
            ServerLook::NoAnswer => {
                return Some(format!(
                    "a new connection got no answer within {} s",
                    ASK_LIMIT.as_secs()
                ))
            }
            ServerLook::Answered { sessions, moved } => (sessions, moved),
        };
        let still = |movement: &Movement| {
            format!(
                "it used {:.0} ms of CPU and {} KiB of I/O in the last {:.0} s",
                movement.cpu_us as f64 / 1000.0,
                movement.io_bytes / 1024,
                movement.over.as_secs_f64()
            )
        };
        let moved_not = moved.filter(|movement| !movement.moved());
        if !sessions.is_empty()
            && sessions.iter().all(|session| session.lock_wait)
            && moved.is_none_or(|movement| !movement.moved())
        {
            return Some(format!(
                "waiting on a lock: every busy session waits for one ({}){}",
                describe_sessions(sessions, 2),
                moved.map_or(String::new(), |movement| format!(
                    ", and nothing else moves: {}",
                    still(&movement)
                ))
            ));
        }
        if !statements_expected {
            return None;
        }
        if sessions.is_empty() {
            return Some(
                "a new connection was answered, but the server runs none of the statements in flight (no busy session in its process list)"
                    .into(),
            );
        }
        let asked_to_sleep = sessions.iter().any(|session| session.state == "User sleep");
        match moved_not {
            Some(movement) if !asked_to_sleep => Some(format!(
                "a new connection was answered, but its {} busy sessions do not move: {}",
                sessions.len(),
                still(&movement)
            )),
            _ => None,
        }
    }

    /// What the server is busy with, in words: "2 statements (ALTER TABLE pi1 … 43%, 31 s;
    /// …)".
    pub fn busy_words(&self) -> String {
        match self {
            ServerLook::Answered { sessions, .. } => format!(
                "{} ({})",
                if sessions.len() == 1 {
                    "1 statement".to_string()
                } else {
                    format!("{} statements", sessions.len())
                },
                describe_sessions(sessions, 2)
            ),
            _ => "nothing".into(),
        }
    }
}

/// The first `shown` sessions (the longest running first), then how many more.
fn describe_sessions(sessions: &[BusySession], shown: usize) -> String {
    let mut words: Vec<String> = sessions
        .iter()
        .take(shown)
        .map(|session| {
            // Its first words, cut at a word's end.
            let mut statement: String = session.statement.chars().take(40).collect();
            let cut = if statement.len() < session.statement.len() {
                if let Some(space) = statement.rfind(' ') {
                    statement.truncate(space);
                }
                " …"
            } else {
                ""
            };
            let mut how = Vec::new();
            match session.progress.filter(|progress| *progress > 0.0) {
                Some(progress) => how.push(format!("{progress:.0}%")),
                None if !session.state.is_empty() => how.push(session.state.clone()),
                None => {}
            }
            how.push(format!("{:.0} s", session.seconds));
            format!("{statement}{cut} {}", how.join(", "))
        })
        .collect();
    if sessions.len() > shown {
        words.push(format!("and {} more", sessions.len() - shown));
    }
    words.join("; ")
}

/// The sessions running a statement, the longest first, each marked when it waits for a
/// lock; None when the server did not answer. MariaDB's process list has TIME_MS and
/// PROGRESS; MySQL's has neither (whole seconds, no progress).
fn busy_sessions(conn: &mut OwnConn) -> Option<Vec<BusySession>> {
    use mysql::prelude::Queryable;
    const MARIADB: &str = "SELECT ID, TIME_MS / 1000, STATE, PROGRESS, LEFT(INFO, 200) FROM information_schema.PROCESSLIST \
         WHERE ID <> CONNECTION_ID() AND COMMAND NOT IN ('Sleep', 'Daemon', 'Binlog Dump') AND INFO IS NOT NULL ORDER BY TIME_MS DESC";
    const MYSQL: &str = "SELECT ID, TIME, STATE, NULL, LEFT(INFO, 200) FROM information_schema.PROCESSLIST \
         WHERE ID <> CONNECTION_ID() AND COMMAND NOT IN ('Sleep', 'Daemon', 'Binlog Dump') AND INFO IS NOT NULL ORDER BY TIME DESC";
    type Row = (
        u64,
        Option<String>,
        Option<String>,
        Option<String>,
        Option<String>,
    );
    let rows: Vec<Row> = match conn.query(MARIADB) {
        Ok(rows) => rows,
        // The server answered, without those columns: MySQL.
        Err(mysql::Error::MySqlError(_)) => conn.query(MYSQL).ok()?,
        Err(_) => return None,
    };
    // InnoDB's row lock waits show in its transactions, not in the session's state.
    let row_lock_waits: Vec<u64> = conn
        .query("SELECT trx_mysql_thread_id FROM information_schema.INNODB_TRX WHERE trx_state = 'LOCK WAIT'")
        .unwrap_or_default();
    let number = |text: &Option<String>| text.as_deref().and_then(|t| t.trim().parse::<f64>().ok());
    Some(
        rows.into_iter()
            .map(|(id, seconds, state, progress, info)| {
                let state = state.unwrap_or_default();
                BusySession {
                    id,
                    seconds: number(&seconds).unwrap_or(0.0),
                    progress: number(&progress),
                    statement: info
                        .unwrap_or_default()
                        .split_whitespace()
                        .collect::<Vec<_>>()
                        .join(" "),
                    lock_wait: row_lock_waits.contains(&id)
                        || (state.starts_with("Waiting for") && state.contains("lock")),
                    state,
                }
            })
            .collect(),
    )
}

/// What /proc/PID/stat says of a process: its state letter and start time.
struct ProcessStat {
    state: char,
    started: u64,
}

fn process_stat(pid: u32) -> Option<ProcessStat> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The fields after the command name (which may hold spaces and parentheses) start at
    // field 3 (the state); the start time is field 22.
    let fields: Vec<&str> = stat[stat.rfind(')')? + 1..].split_whitespace().collect();
    Some(ProcessStat {
        state: fields.first()?.chars().next()?,
        started: fields.get(19)?.parse().ok()?,
    })
}

#[cfg(test)]
mod tests;
