//! An external server (`--dsn`): enginebench works only in its own databases (a scenario's
//! per-engine `<database>_<engine>`), refuses one holding tables it did not create unless
//! --force, drops only what it created, and never writes the password anywhere: output,
//! results, or the process title.

use crate::common;

use enginebench::server::{ServerOptions, ThrowawayServer};
use mysql::prelude::Queryable;

const PASSWORD: &str = "hunter2-s3cret";

/// A server standing in for someone else's: a user with a password, and a database.
fn external_server() -> ThrowawayServer {
    common::require_mariadb();
    let server = ThrowawayServer::start(&ServerOptions::default()).unwrap();
    let mut root = server.connection_spec(None).connect().unwrap();
    for host in ["localhost", "127.0.0.1"] {
        root.query_drop(format!(
            "CREATE USER 'bench'@'{host}' IDENTIFIED BY '{PASSWORD}'"
        ))
        .unwrap();
        root.query_drop(format!("GRANT ALL ON `enginebench%`.* TO 'bench'@'{host}'"))
            .unwrap();
    }
    root.query_drop("CREATE DATABASE enginebench").unwrap();
    server
}

fn run_against(
    server: &ThrowawayServer,
    tmp: &std::path::Path,
    json: &std::path::Path,
    extra: &[&str],
) -> common::Running {
    let mut command = common::enginebench(tmp);
    command
        .env_remove("ENGINEBENCH_DSN_PASSWORD")
        .args([
            "run",
            "s0",
            "--rows",
            "500",
            "--threads",
            "2",
            "--loops",
            "20",
            "--repeat",
            "1",
            "--variants",
            "select+update",
        ])
        .arg("--dsn")
        .arg(format!(
            "mysql://bench:{PASSWORD}@127.0.0.1:{}",
            server.port()
        ))
        .arg("--json")
        .arg(json)
        .args(extra);
    common::Running::spawn(command)
}

fn databases_in(server: &ThrowawayServer) -> Vec<String> {
    let mut root = server.connection_spec(None).connect().unwrap();
    root.query("SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME LIKE 'enginebench%' ORDER BY 1")
        .unwrap()
}

fn tables_in(server: &ThrowawayServer) -> Vec<String> {
    let mut root = server
        .connection_spec(Some("enginebench"))
        .connect()
        .unwrap();
    root.query("SHOW TABLES").unwrap()
}

#[test]
fn the_password_appears_nowhere_and_only_our_tables_come_and_go() {
    let server = external_server();
    let tmp = common::private_tmpdir("external");
    let json = tmp.with_extension("external.json");
    let mut run = run_against(&server, &tmp, &json, &[]);
    run.wait_for_line(|line| line.starts_with("using the external server"));
    let title = std::fs::read(format!("/proc/{}/cmdline", run.child.id())).unwrap();
    let title = String::from_utf8_lossy(&title).replace('\0', " ");
    assert!(
        !title.contains(PASSWORD),
        "password in the process title: {title}"
    );
    // The URL names the variable its password moved to.
    assert!(
        title.contains("--dsn mysql://bench:$ENGINEBENCH_DSN_PASSWORD_1@127.0.0.1:"),
        "{title}"
    );
    let (status, stdout, stderr) = run.finish();
    assert!(status.success(), "{stderr}");
    let results = std::fs::read_to_string(&json).unwrap();
    for (what, text) in [
        ("stdout", &stdout),
        ("stderr", &stderr),
        ("results", &results),
    ] {
        assert!(!text.contains(PASSWORD), "password in {what}");
    }
    assert!(
        stderr.contains(&format!(
            "using the external server mysql://bench:***@127.0.0.1:{}",
            server.port()
        )),
        "{stderr}"
    );
    let record: serde_json::Value = serde_json::from_str(&results).unwrap();
    assert_eq!(record["server"]["kind"], "external");
    assert_eq!(record["cells"].as_array().unwrap().len(), 2);
    assert!(
        tables_in(&server).is_empty(),
        "enginebench left tables behind: {:?}",
        tables_in(&server)
    );
    assert_eq!(
        databases_in(&server),
        vec!["enginebench"],
        "per-engine databases dropped"
    );
    common::assert_nothing_left(&tmp);
    let _ = std::fs::remove_file(json);
}

#[test]
fn a_database_with_foreign_tables_is_refused_unless_forced_and_they_survive() {
    let server = external_server();
    let mut root = server
        .connection_spec(Some("enginebench"))
        .connect()
        .unwrap();
    root.query_drop("CREATE TABLE customers (id INT PRIMARY KEY)")
        .unwrap();
    let tmp = common::private_tmpdir("foreign");
    let json = tmp.with_extension("foreign.json");

    let (status, _, stderr) = run_against(&server, &tmp, &json, &[]).finish();
    assert_eq!(status.code(), Some(1));
    assert_eq!(
        stderr.lines().last().unwrap(),
        format!(
            "Error: database enginebench on mysql://bench:***@127.0.0.1:{} holds tables enginebench did not create (customers): pass another --database, or --force to run beside them (they are left alone)",
            server.port()
        )
    );
    assert_eq!(tables_in(&server), vec!["customers"]);

    let (status, _, stderr) = run_against(&server, &tmp, &json, &["--force"]).finish();
    assert!(status.success(), "{stderr}");
    assert_eq!(
        tables_in(&server),
        vec!["customers"],
        "only enginebench's own tables were dropped"
    );

    // A per-engine database someone else made is refused too, and with --force only the
    // scenario's own tables in it are replaced.
    root.query_drop("CREATE DATABASE enginebench_innodb")
        .unwrap();
    root.query_drop("CREATE TABLE enginebench_innodb.orders (id INT PRIMARY KEY)")
        .unwrap();
    let (status, _, stderr) = run_against(&server, &tmp, &json, &["--force"]).finish();
    assert!(status.success(), "{stderr}");
    let mut root = server.connection_spec(None).connect().unwrap();
    let left: Vec<String> = root
        .query("SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'enginebench_innodb'")
        .unwrap();
    assert_eq!(left, vec!["orders"]);
    assert_eq!(
        databases_in(&server),
        vec!["enginebench", "enginebench_innodb"]
    );
    common::assert_nothing_left(&tmp);
    let _ = std::fs::remove_file(json);
}

#[test]
fn a_database_in_the_dsn_path_is_the_one_worked_in() {
    let server = external_server();
    let mut root = server.connection_spec(None).connect().unwrap();
    root.query_drop("CREATE DATABASE enginebench_shop").unwrap();
    root.query_drop("CREATE TABLE enginebench_shop.orders (id INT PRIMARY KEY)")
        .unwrap();
    let tmp = common::private_tmpdir("dsn-path");
    let dsn = format!(
        "mysql://bench:{PASSWORD}@127.0.0.1:{}/enginebench_shop",
        server.port()
    );
    let run = |extra: &[&str]| {
        common::enginebench(&tmp)
            .args([
                "run",
                "s0",
                "--rows",
                "100",
                "--threads",
                "1",
                "--loops",
                "5",
                "--no-db",
                "--dsn",
                &dsn,
            ])
            .args(extra)
            .output()
            .unwrap()
    };
    // The path's database is the one checked: it holds someone else's table.
    let output = run(&[]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("Error: database enginebench_shop on mysql://bench:***@127.0.0.1:"),
        "{stderr}"
    );
    let output = run(&["--database", "enginebench_other"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("Error: --database enginebench_other and the DSN's database enginebench_shop disagree: give one of them"),
        "{stderr}"
    );
    common::assert_nothing_left(&tmp);
}
