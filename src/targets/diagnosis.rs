//! Why something failed on a target, from what the target shows: a full filesystem under
//! the datadir (with free space before and after, and the server's own ENOSPC line), or a
//! server that died (with the end of its error log). It must not know what was running.

use super::Target;
use crate::measure::{filesystem_of, FilesystemState};

/// What the datadir's filesystem and the server's state add to an error message (empty
/// when neither explains anything). `disk_before` is the filesystem before the failed work.
pub fn failure_context(target: &mut dyn Target, disk_before: Option<&FilesystemState>) -> String {
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
pub fn disk_state(target: &dyn Target) -> Option<FilesystemState> {
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
pub fn ask_unanswering(target: &dyn Target, engine: crate::engine::Engine) -> UnansweringServer {
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
    let Ok(mut conn) = target.admin_spec().with_read_limit(ASK_LIMIT).connect() else {
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
fn engine_status_lines(conn: &mut mysql::Conn, engine: crate::engine::Engine) -> Vec<String> {
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
