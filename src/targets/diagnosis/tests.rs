//! Unit tests of the diagnosis of a stalled cell: which server states are silent, busy or worth
//! naming.

use super::*;

fn session(state: &str, lock_wait: bool) -> BusySession {
    BusySession {
        id: 12,
        state: state.into(),
        seconds: 31.4,
        progress: None,
        statement: "ALTER TABLE pi1 add index pi1_marketsegment (productid, customerid, price)"
            .into(),
        lock_wait,
    }
}

fn movement(cpu_ms: u64) -> Option<Movement> {
    Some(Movement {
        over: Duration::from_secs(5),
        cpu_us: cpu_ms * 1000,
        io_bytes: 0,
    })
}

#[test]
fn a_stopped_gone_or_unanswering_server_is_silent_whatever_is_expected() {
    for look in [
        ServerLook::Stopped('T'),
        ServerLook::Gone,
        ServerLook::NoAnswer,
    ] {
        assert!(look.silence(false).is_some(), "{look:?}");
        assert!(look.silence(true).is_some(), "{look:?}");
    }
    assert!(ServerLook::Stopped('T')
        .silence(true)
        .unwrap()
        .starts_with("the server process is stopped (state T"));
    assert_eq!(
        ServerLook::NoAnswer.silence(true).unwrap(),
        "a new connection got no answer within 3 s"
    );
}

#[test]
fn a_statement_that_moves_is_busy_and_said_with_its_progress() {
    let mut building = session("altering table", false);
    building.progress = Some(43.2);
    let look = ServerLook::Answered {
        sessions: vec![building, session("altering table", false)],
        moved: movement(4_000),
    };
    assert_eq!(look.silence(true), None);
    assert_eq!(
            look.busy_words(),
            "2 statements (ALTER TABLE pi1 add index … 43%, 31 s; ALTER TABLE pi1 add index … altering table, 31 s)"
        );
    // Not ours to read: an answer with working sessions is enough.
    let external = ServerLook::Answered {
        sessions: vec![session("Sending data", false)],
        moved: None,
    };
    assert_eq!(external.silence(true), None);
}

#[test]
fn sessions_waiting_on_a_lock_with_nothing_moving_are_silent() {
    let look = ServerLook::Answered {
        sessions: vec![session("Waiting for table metadata lock", true)],
        moved: movement(2),
    };
    let why = look.silence(false).unwrap();
    assert!(
        why.starts_with("waiting on a lock: every busy session waits for one (ALTER TABLE pi1"),
        "{why}"
    );
    // The lock's holder working elsewhere is not a silent server.
    let working = ServerLook::Answered {
        sessions: vec![session("Waiting for table metadata lock", true)],
        moved: movement(3_000),
    };
    assert_eq!(working.silence(true), None);
}

#[test]
fn a_cell_expects_its_statements_on_the_server_and_moving() {
    let idle = ServerLook::Answered {
        sessions: Vec::new(),
        moved: movement(0),
    };
    assert_eq!(idle.silence(false), None, "set-up between statements");
    assert!(idle
        .silence(true)
        .unwrap()
        .contains("runs none of the statements in flight"));
    let still = ServerLook::Answered {
        sessions: vec![session("Updating", false)],
        moved: movement(1),
    };
    assert!(still.silence(true).unwrap().contains("do not move"));
    assert_eq!(still.silence(false), None);
    let sleeping = ServerLook::Answered {
        sessions: vec![session("User sleep", false)],
        moved: movement(0),
    };
    assert_eq!(sleeping.silence(true), None, "asked to sleep");
}

#[test]
fn a_process_is_read_with_its_state_and_start_time() {
    let own = process_stat(std::process::id()).unwrap();
    assert!(matches!(own.state, 'R' | 'S' | 'D'), "{}", own.state);
    assert!(own.started > 0);
}

/// A target that only reaches and shows (no start, stop or crash): a server that has
/// died, with what its error log and the kernel say.
struct DeadServer {
    log: String,
    cause: Option<String>,
}

impl Reach for DeadServer {
    fn admin_spec(&self) -> ConnectionSpec {
        // Never connected to: the process is seen to have ended first.
        ConnectionSpec::tcp(
            &crate::server::Dsn::parse("mysql://root@127.0.0.1:1").unwrap(),
            None,
        )
    }
    fn nodes(&self) -> Vec<super::super::NodeInfo> {
        Vec::new()
    }
}

impl Observe for DeadServer {
    fn facts(
        &self,
        _variables: &std::collections::BTreeMap<String, String>,
    ) -> super::super::TargetFacts {
        unreachable!("a failure's context needs no facts for the record")
    }
    fn is_private(&self) -> bool {
        true
    }
    fn process_running(&mut self) -> Option<bool> {
        Some(false)
    }
    fn error_log_tail(&self, _lines: usize) -> Option<String> {
        Some(self.log.clone())
    }
    fn death_cause(&mut self) -> Option<String> {
        self.cause.clone()
    }
    fn server_pid(&self) -> Option<u32> {
        None
    }
    fn datadir(&self) -> Option<std::path::PathBuf> {
        None
    }
}

#[test]
fn a_dead_server_is_said_with_the_kernels_reason_and_its_error_log() {
    let mut oom = DeadServer {
        log: "[ERROR] InnoDB: out of memory\n".into(),
        cause: Some("killed by the OOM killer".into()),
    };
    assert_eq!(
        failure_context(&mut oom, None),
        "; the server died (killed by the OOM killer), its error log ends with:\n[ERROR] InnoDB: out of memory\n"
    );
    let mut silent = DeadServer {
        log: "\n".into(),
        cause: None,
    };
    assert_eq!(
        failure_context(&mut silent, None),
        "; the server died without a word in its error log"
    );
}
