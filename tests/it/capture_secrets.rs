//! Captures hold production data: a session that sets passwords every way MySQL and
//! MariaDB allow (text and prepared, any letter case) is captured through the proxy and
//! imported from the general log; no secret reaches the capture, its summary or a report,
//! the files are their owner's alone (0600) even under a permissive umask, and replay
//! completes, naming the statements it skipped because their credential was masked.

use crate::common;

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::Path;

use enginebench::server::{ServerOptions, ThrowawayServer};
use mysql::prelude::Queryable;

/// The statements, each with its own secret; some fail on this server (a plain-text
/// `SET PASSWORD = '…'` wants a hash), and are captured all the same.
const STATEMENTS: &[(&str, &str)] = &[
    (
        "CREATE USER 'app1'@'%' IDENTIFIED BY 'Secret-one'",
        "Secret-one",
    ),
    (
        "alter user 'app1'@'%' identified by 'Secret-two'",
        "Secret-two",
    ),
    (
        "SET PASSWORD FOR 'app1'@'%' = PASSWORD('Secret-three')",
        "Secret-three",
    ),
    ("SET PASSWORD FOR 'app1'@'%' = 'Secret-four'", "Secret-four"),
    (
        "GRANT SELECT ON *.* TO 'app2'@'%' IDENTIFIED BY 'Secret-five'",
        "Secret-five",
    ),
    (
        "CREATE SERVER srv1 FOREIGN DATA WRAPPER mysql OPTIONS (HOST '127.0.0.1', USER 'u', PASSWORD 'Secret-six')",
        "Secret-six",
    ),
    (
        "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=9, MASTER_USER='r', MASTER_PASSWORD='Secret-seven'",
        "Secret-seven",
    ),
    (
        "start slave user='r' password='Secret-eight'",
        "Secret-eight",
    ),
];
/// Sent as a prepared statement (COM_STMT_PREPARE carries the text).
const PREPARED: (&str, &str) = (
    "CREATE USER 'app3'@'%' IDENTIFIED BY 'Secret-nine'",
    "Secret-nine",
);

fn secrets() -> Vec<&'static str> {
    STATEMENTS
        .iter()
        .map(|(_, secret)| *secret)
        .chain([PREPARED.1])
        .collect()
}

/// Runs the statements on `conn` (errors are part of the session), then undoes what they
/// did, so the server can be captured again.
fn run_session(conn: &mut mysql::Conn) {
    for (sql, _) in STATEMENTS {
        let _ = conn.query_drop(*sql);
    }
    let _ = conn.exec_drop(PREPARED.0, ());
    let _ = conn.query_drop("STOP SLAVE");
    let _ = conn.query_drop("RESET SLAVE ALL");
    let _ = conn.query_drop("DROP SERVER IF EXISTS srv1");
    let _ = conn.query_drop("DROP USER IF EXISTS 'app1'@'%', 'app2'@'%', 'app3'@'%'");
    let _ = conn.query_drop("SELECT 1");
}

/// enginebench under a permissive umask (0000), as a careless shell would run it.
fn enginebench(tmp: &Path) -> std::process::Command {
    let mut command = common::enginebench(tmp);
    // SAFETY: umask(2) in the child between fork and exec touches no shared state.
    unsafe {
        command.pre_exec(|| {
            libc::umask(0);
            Ok(())
        });
    }
    command
}

fn assert_private_and_clean(path: &Path) {
    let mode = std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "{} is {mode:o}", path.display());
    let text = String::from_utf8_lossy(&std::fs::read(path).unwrap()).into_owned();
    for secret in secrets() {
        assert!(
            !text.contains(secret),
            "{} holds {secret}:\n{text}",
            path.display()
        );
    }
}

#[test]
// Long by design: one scenario, step by step: its assertions read in the order things happen.
#[allow(clippy::too_many_lines)]
fn no_credential_reaches_a_capture_its_summary_or_a_report() {
    common::require_mariadb();
    let tmp = common::private_tmpdir("secrets");
    let server = ThrowawayServer::start(&ServerOptions::default()).unwrap();
    let mut root = server.connection_spec(None).connect().unwrap();
    root.query_drop("CREATE DATABASE shop").unwrap();
    root.query_drop("CREATE TABLE shop.t (id INT PRIMARY KEY)")
        .unwrap();
    // A file the capture will replace, left world-readable: it must not keep that mode.
    let file = tmp.with_extension("ebcap");
    std::fs::write(&file, "old").unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();

    // Through the proxy.
    let mut command = enginebench(&tmp);
    command
        .arg("capture")
        .arg("--to")
        .arg(format!("mysql://root@127.0.0.1:{}/shop", server.port()))
        .arg("--out")
        .arg(&file);
    let (proxy, port) = common::start_capture_proxy(command);
    let mut app = mysql::Conn::new(
        mysql::OptsBuilder::new()
            .ip_or_hostname(Some("127.0.0.1"))
            .tcp_port(port)
            .user(Some("root"))
            .db_name(Some("shop"))
            .prefer_socket(false),
    )
    .unwrap();
    run_session(&mut app);
    drop(app);
    // SAFETY: signalling the child we spawned.
    unsafe {
        libc::kill(proxy.child.id() as libc::pid_t, libc::SIGINT);
    }
    let (status, _, stderr) = proxy.finish();
    assert!(status.success(), "{stderr}");
    assert!(
        // Each text statement, and the prepared one at its prepare and its execute.
        stderr.contains("10 statement(s) carried a credential"),
        "{stderr}"
    );
    assert_private_and_clean(&file);
    let capture = enginebench::capture::read(&file).unwrap();
    assert!(capture.header().secrets_masked);
    assert_eq!(capture.end.as_ref().unwrap().secrets_masked, 10);
    let masked = capture
        .commands
        .iter()
        .filter(|c| c.sql.as_deref().is_some_and(|s| s.contains("'<secret>'")))
        .count();
    // Each text statement once, the prepared one at its prepare and its execute.
    assert_eq!(masked, STATEMENTS.len() + 2);

    // The summary, written to a file of its own.
    let summary = tmp.with_extension("toml");
    let output = enginebench(&tmp)
        .args(["capture", "summarize"])
        .arg(&file)
        .arg("--out")
        .arg(&summary)
        .output()
        .unwrap();
    common::assert_success(&output);
    assert_private_and_clean(&summary);

    // Replayed: it completes; the statements whose secret was masked are named, not run.
    let json = tmp.with_extension("replay.json");
    let output = enginebench(&tmp)
        .arg("replay")
        .arg(&file)
        .args(["--speed", "max", "--json"])
        .arg(&json)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        stdout.contains("not replayed: the capture masked its credential"),
        "{stdout}"
    );
    let record: serde_json::Value = common::read_json(&json);
    let mismatches = record["cells"][0]["mismatches"].as_array().unwrap();
    let skipped: u64 = mismatches
        .iter()
        .filter(|m| {
            m["example"]
                .as_str()
                .unwrap()
                .contains("the capture masked its credential")
        })
        .map(|m| m["count"].as_u64().unwrap())
        .sum();
    // Each text statement, and the prepared one at its prepare and its execute.
    assert_eq!(skipped, STATEMENTS.len() as u64 + 2, "{mismatches:#?}");
    // No report holds a secret either: the tables, and the whole record.
    for text in [stdout.to_string(), std::fs::read_to_string(&json).unwrap()] {
        for secret in secrets() {
            assert!(!text.contains(secret), "a report holds {secret}");
        }
    }

    // From the general log (which holds them in clear, as MariaDB writes it).
    let log = server.root_dir().join("general.log");
    root.query_drop(format!("SET GLOBAL general_log_file = '{}'", log.display()))
        .unwrap();
    root.query_drop("SET GLOBAL log_output = 'FILE'").unwrap();
    root.query_drop("SET GLOBAL general_log = ON").unwrap();
    let mut app = server.connection_spec(Some("shop")).connect().unwrap();
    run_session(&mut app);
    drop(app);
    root.query_drop("SET GLOBAL general_log = OFF").unwrap();
    assert!(std::fs::read_to_string(&log)
        .unwrap()
        .contains("Secret-one"));
    let imported = tmp.with_extension("log.ebcap");
    let output = enginebench(&tmp)
        .arg("capture")
        .arg("--from-log")
        .arg(&log)
        .arg("--out")
        .arg(&imported)
        .output()
        .unwrap();
    common::assert_success(&output);
    assert_private_and_clean(&imported);
    let capture = enginebench::capture::read(&imported).unwrap();
    assert!(capture.end.as_ref().unwrap().secrets_masked >= STATEMENTS.len() as u64);

    drop(root);
    drop(server);
    common::assert_nothing_left(&tmp);
}
