//! Capture sources with no proxy, against a real MariaDB with performance_schema on and the
//! server_audit plugin writing its file: a known mix (text statements with rows, changed
//! rows and an error, on two connections, plus server-side prepared executions) is captured
//! from the statement history while it runs and imported from the audit log. Both give the
//! text statements back in each connection's order with what each source knows of the
//! answers; both leave the prepared executions out and say how many; the history capture
//! replays on a fresh server with no mismatch, and the server's consumers are put back.

use crate::common;

use std::path::Path;

use enginebench::capture::{self, Capture, CommandKind};
use enginebench::results::read_record;
use enginebench::server::{ServerOptions, ThrowawayServer};
use mysql::prelude::Queryable;

/// The text statements the first connection sends, and (rows sent, rows changed, error).
const FIRST: [(&str, u64, u64, Option<u16>); 5] = [
    ("SELECT name FROM items WHERE id = 3", 1, 0, None),
    (
        "SELECT id FROM items WHERE category = 'a' ORDER BY id",
        4,
        0,
        None,
    ),
    (
        "UPDATE items SET price = price + 1 WHERE id IN (1, 2)",
        0,
        2,
        None,
    ),
    ("SELECT * FROM missing_table", 0, 0, Some(1146)),
    ("SELECT COUNT(*) FROM items", 1, 0, None),
];
const SECOND: [(&str, u64, u64, Option<u16>); 2] = [
    ("DELETE FROM items WHERE id = 10", 0, 1, None),
    ("SELECT name FROM items WHERE id > 8", 1, 0, None),
];
const PREPARED_EXECUTIONS: usize = 3;
const RING_ROWS: usize = 200;
const BURST: usize = 1000;

fn audited_server(dir: &Path) -> ThrowawayServer {
    common::require_mariadb();
    let options = ServerOptions {
        server_opts: vec![
            ("performance_schema".into(), "ON".into()),
            // Holds the mix many times over, and a burst of BURST does not fit.
            (
                "performance_schema_events_statements_history_long_size".into(),
                RING_ROWS.to_string(),
            ),
            ("plugin_load_add".into(), "server_audit".into()),
            ("server_audit_events".into(), "CONNECT,QUERY".into()),
            (
                "server_audit_file_path".into(),
                dir.with_extension("audit.log").display().to_string(),
            ),
            ("server_audit_logging".into(), "ON".into()),
        ],
        ..Default::default()
    };
    let server = ThrowawayServer::start(&options).unwrap();
    let mut root = server.connection_spec(None).connect().unwrap();
    root.query_drop("CREATE DATABASE shop").unwrap();
    root.query_drop(
        "CREATE TABLE shop.items (id INT NOT NULL PRIMARY KEY, name VARCHAR(20) NOT NULL, \
         category CHAR(1) NOT NULL, price INT NOT NULL) ENGINE=InnoDB",
    )
    .unwrap();
    root.query_drop(
        "INSERT INTO shop.items VALUES (1,'one','a',10),(2,'two','b',20),(3,'three','a',30),\
         (4,'four','b',40),(5,'five','a',50),(6,'six','b',60),(7,'seven','a',70),(8,'eight','b',80),\
         (9,'nine','c',90),(10,'ten','c',100)",
    )
    .unwrap();
    server
}

fn run_mix(server: &ThrowawayServer) {
    let mut first = server.connection_spec(Some("shop")).connect().unwrap();
    let mut second = server.connection_spec(Some("shop")).connect().unwrap();
    for (sql, _, _, error) in FIRST {
        let outcome = first.query_drop(sql);
        assert_eq!(outcome.is_err(), error.is_some(), "{sql}: {outcome:?}");
    }
    for (sql, ..) in SECOND {
        second.query_drop(sql).unwrap();
    }
    let statement = first.prep("SELECT price FROM items WHERE id = ?").unwrap();
    for id in 0..PREPARED_EXECUTIONS {
        let _: Vec<i64> = first.exec(&statement, (id as i64 + 1,)).unwrap();
    }
}

/// The connections' text statements in order, each with the response it was captured with.
fn statements_by_connection(
    capture: &Capture,
) -> Vec<Vec<(String, Option<capture::format::Response>)>> {
    let mut by_connection: std::collections::BTreeMap<u64, Vec<_>> = Default::default();
    for command in &capture.commands {
        if command.kind == CommandKind::Query {
            by_connection
                .entry(command.connection)
                .or_default()
                .push((command.sql.clone().unwrap(), command.response.clone()));
        }
    }
    by_connection.into_values().collect()
}

/// The statements of the connection that sent `first`, from it on (the client library's
/// own queries at connect come before).
fn find<'a>(
    connections: &'a [Vec<(String, Option<capture::format::Response>)>],
    first: &str,
) -> &'a [(String, Option<capture::format::Response>)] {
    connections
        .iter()
        .find_map(|statements| {
            let at = statements.iter().position(|(sql, _)| sql == first)?;
            Some(&statements[at..])
        })
        .unwrap_or_else(|| panic!("no connection sent {first:?}: {connections:#?}"))
}

#[test]
// Long by design: one scenario, step by step: its assertions read in the order things happen.
#[allow(clippy::too_many_lines)]
fn the_statement_history_and_the_audit_log_capture_the_text_statements_with_what_they_know() {
    let tmp = common::private_tmpdir("capture_sources");
    let server = audited_server(&tmp);
    let ps_file = tmp.with_extension("history.ebcap");
    let mut command = common::enginebench(&tmp);
    command
        .args(["capture", "--from-performance-schema", "--to"])
        .arg(format!("mysql://root@127.0.0.1:{}/shop", server.port()))
        .arg("--out")
        .arg(&ps_file);
    let mut capturing = common::Running::spawn(command);
    capturing.wait_for_line(|line| line.contains("Ctrl-C ends the capture"));
    run_mix(&server);
    // SAFETY: kill(2) on our own child.
    unsafe {
        libc::kill(capturing.child.id() as libc::pid_t, libc::SIGINT);
    }
    let (status, _, stderr) = capturing.finish();
    assert!(status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "{} command(s) of server-side prepared statements",
            PREPARED_EXECUTIONS + 2
        )),
        "the prepare, executions and close are said to be left out: {stderr}"
    );

    // The history: text, order, durations, rows, changed rows and errors.
    let history = capture::read(&ps_file).unwrap();
    assert!(history.end.is_some(), "Ctrl-C closed the capture");
    assert_eq!(history.tables.len(), 1, "the snapshot of shop");
    let connections = statements_by_connection(&history);
    for expected in [&FIRST[..], &SECOND[..]] {
        let captured = find(&connections, expected[0].0);
        let texts: Vec<&str> = captured.iter().map(|(sql, _)| sql.as_str()).collect();
        let wanted: Vec<&str> = expected.iter().map(|e| e.0).collect();
        assert_eq!(texts, wanted);
        for ((sql, response), (_, rows, changed, error)) in captured.iter().zip(expected) {
            let response = response.as_ref().unwrap();
            assert_eq!(
                (response.rows, response.affected_rows, response.error),
                (*rows, *changed, *error),
                "{sql}"
            );
        }
    }
    assert!(
        history
            .commands
            .iter()
            .any(|c| c.kind == CommandKind::Query && c.end_us > c.start_us),
        "statements carry their durations"
    );
    assert!(
        history
            .commands
            .iter()
            .all(|c| c.kind != CommandKind::Execute),
        "no prepared execution without its values"
    );
    let mut root = server.connection_spec(None).connect().unwrap();
    let consumers: Vec<String> = root
        .query(
            "SELECT ENABLED FROM performance_schema.setup_consumers WHERE NAME IN \
             ('events_statements_current', 'events_statements_history_long')",
        )
        .unwrap();
    assert_eq!(
        consumers,
        ["NO", "NO"],
        "the consumers are switched back off"
    );

    // The audit log: the same text statements, errors only, prepared executions counted.
    let audit_file = tmp.with_extension("audit.ebcap");
    let output = common::enginebench(&tmp)
        .args(["capture", "--from-audit"])
        .arg(tmp.with_extension("audit.log"))
        .arg("--out")
        .arg(&audit_file)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{said}");
    // The log holds the capture's own snapshot queries too (prepared): at least ours.
    let left_out: usize = said
        .split(" execution(s) of server-side prepared statements")
        .next()
        .and_then(|before| before.rsplit(' ').next())
        .and_then(|count| count.parse().ok())
        .unwrap_or_else(|| panic!("no count of prepared executions left out: {said}"));
    assert!(left_out >= PREPARED_EXECUTIONS, "{said}");
    let audited = capture::read(&audit_file).unwrap();
    assert!(
        audited
            .commands
            .iter()
            .all(|c| c.sql.as_deref() != Some("SELECT price FROM items WHERE id = ?")),
        "a prepared statement's text without its values is not replayable"
    );
    let connections = statements_by_connection(&audited);
    for expected in [&FIRST[..], &SECOND[..]] {
        let captured = find(&connections, expected[0].0);
        let texts: Vec<&str> = captured.iter().map(|(sql, _)| sql.as_str()).collect();
        let wanted: Vec<&str> = expected.iter().map(|e| e.0).collect();
        assert_eq!(texts, wanted);
        let errors: Vec<Option<u16>> = captured
            .iter()
            .map(|(_, response)| response.as_ref().and_then(|r| r.error))
            .collect();
        let wanted: Vec<Option<u16>> = expected.iter().map(|e| e.3).collect();
        assert_eq!(errors, wanted, "the audit log's retcodes");
    }

    // A capture that cannot read while the ring turns over says statements were lost: it
    // is stopped (SIGSTOP) while a burst five times the ring runs, then let go; it ends by
    // itself (--duration), with a last read whenever its time ran out.
    let lossy_file = tmp.with_extension("lossy.ebcap");
    let mut command = common::enginebench(&tmp);
    command
        .args([
            "capture",
            "--from-performance-schema",
            "--no-snapshot",
            "--to",
        ])
        .arg(format!("mysql://root@127.0.0.1:{}/shop", server.port()))
        .args(["--duration", "2s", "--out"])
        .arg(&lossy_file);
    let mut capturing = common::Running::spawn(command);
    capturing
        .wait_for_line(|line| line.contains("Ctrl-C ends the capture, or it ends by itself in 2s"));
    let pid = capturing.child.id() as libc::pid_t;
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(pid, libc::SIGSTOP) };
    let mut burst = server.connection_spec(Some("shop")).connect().unwrap();
    // The burst starts once the capture cannot read: kill(2) only queues the stop, and a
    // read sent just before it would still be answered, from a history holding some of
    // the burst (one stop: 201 of the burst kept). So: every thread of it stopped, and
    // no statement but ours running on the server.
    let stopped_by = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let all_stopped = std::fs::read_dir(format!("/proc/{pid}/task"))
            .unwrap()
            .flatten()
            .all(|task| {
                let stat = std::fs::read_to_string(task.path().join("stat")).unwrap_or_default();
                // The state follows the command's closing parenthesis: T (stopped).
                stat.rsplit_once(") ")
                    .is_some_and(|(_, rest)| rest.starts_with('T'))
            });
        let running: u64 = burst
            .query_first(
                "SELECT COUNT(*) FROM information_schema.PROCESSLIST \
                 WHERE COMMAND = 'Query' AND ID <> CONNECTION_ID()",
            )
            .unwrap()
            .unwrap_or(0);
        if all_stopped && running == 0 {
            break;
        }
        assert!(
            std::time::Instant::now() < stopped_by,
            "the capture did not stop"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    for n in 0..BURST {
        burst.query_drop(format!("SELECT {n}")).unwrap();
    }
    // The server answers a statement before it records it in the history
    // (`dispatch_command` sends the end of the statement, then ends its event): the
    // capture, let go at once, could read the ring before the burst's last row was in it
    // and find that row in its next read (fresh42, fresh43: 201 of the burst kept, each
    // once). So it is let go when the last row is there.
    let last = format!("SELECT {}", BURST - 1);
    let recorded_by = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while root
        .exec_first::<u64, _, _>(
            "SELECT COUNT(*) FROM performance_schema.events_statements_history_long \
             WHERE SQL_TEXT = ?",
            (&last,),
        )
        .unwrap()
        .unwrap_or(0)
        == 0
    {
        assert!(
            std::time::Instant::now() < recorded_by,
            "the burst's last statement never reached the history"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    // SAFETY: as above.
    unsafe { libc::kill(pid, libc::SIGCONT) };
    let (status, _, stderr) = capturing.finish();
    assert!(status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "the history ({RING_ROWS} rows) filled up between two reads"
        )),
        "{stderr}"
    );
    let lossy = capture::read(&lossy_file).unwrap();
    // The burst's own statements only: the waiting loops' reads are captured too.
    let kept: Vec<u64> = lossy
        .commands
        .iter()
        .filter_map(|c| c.sql.as_deref()?.strip_prefix("SELECT ")?.parse().ok())
        .collect();
    let distinct: std::collections::BTreeSet<u64> = kept.iter().copied().collect();
    assert_eq!(
        distinct.len(),
        kept.len(),
        "a statement kept twice: {kept:?}"
    );
    assert!(kept.len() <= RING_ROWS, "{} of the burst kept", kept.len());
    drop(burst);
    drop(root);
    drop(server);

    // The history capture replays on a fresh server from its snapshot, every answer as
    // captured.
    let json = tmp.with_extension("replay.json");
    let output = common::enginebench(&tmp)
        .arg("replay")
        .arg(&ps_file)
        .args(["--speed", "max", "--no-db", "--json"])
        .arg(&json)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let record = read_record(&json).unwrap();
    let cell = &record.cells[0];
    assert!(cell.mismatches.is_empty(), "{:?}", cell.mismatches);
    let replayed: u64 = cell.queries.iter().map(|q| q.count + q.failed).sum();
    assert!(
        replayed >= (FIRST.len() + SECOND.len()) as u64,
        "{replayed} commands replayed"
    );
    common::assert_nothing_left(&tmp);
}
