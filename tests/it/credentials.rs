//! Credentials as MySQL's clients find them, on a real server standing in for someone
//! else's: two `--dsn` with different passwords each keep their own; a `--dsn` without a
//! password takes it from `--defaults-file`, from `~/.my.cnf`, or from `MYSQL_PWD`;
//! `ENGINEBENCH_DSN` names the server when no `--dsn` does. No password shows in the output
//! or the record.

use crate::common;

use enginebench::server::{ServerOptions, ThrowawayServer};
use mysql::prelude::Queryable;
use std::path::Path;

const FIRST: (&str, &str) = ("bench1", "first-s3cret");
const SECOND: (&str, &str) = ("bench2", "second-s3cret");

fn server_with_two_users() -> ThrowawayServer {
    common::require_mariadb();
    let server = ThrowawayServer::start(&ServerOptions::default()).unwrap();
    let mut root = server.connection_spec(None).connect().unwrap();
    for (user, password) in [FIRST, SECOND] {
        for host in ["localhost", "127.0.0.1"] {
            root.query_drop(format!(
                "CREATE USER '{user}'@'{host}' IDENTIFIED BY '{password}'"
            ))
            .unwrap();
            root.query_drop(format!(
                "GRANT ALL ON `enginebench%`.* TO '{user}'@'{host}'"
            ))
            .unwrap();
        }
    }
    root.query_drop("CREATE DATABASE enginebench").unwrap();
    server
}

/// A small S0 run on the server, with `dsn_args`, in an environment of `env` only (HOME
/// and MYSQL_PWD as given, never the caller's); its output and record with no password.
fn run(tmp: &Path, env: &[(&str, &str)], dsn_args: &[String]) -> String {
    let json = tmp.with_extension("credentials.json");
    let mut command = common::enginebench(tmp);
    command
        .env("HOME", tmp)
        .env_remove("MYSQL_PWD")
        .env_remove("ENGINEBENCH_DSN")
        .envs(env.iter().copied())
        .args([
            "run",
            "s0",
            "--rows",
            "200",
            "--threads",
            "2",
            "--loops",
            "10",
        ])
        .args(["--repeat", "1", "--variants", "select", "--no-db", "--json"])
        .arg(&json)
        .args(dsn_args);
    let output = command.output().unwrap();
    let text = format!(
        "{}{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
        std::fs::read_to_string(&json).unwrap_or_default()
    );
    for (_, password) in [FIRST, SECOND] {
        assert!(!text.contains(password), "a password showed:\n{text}");
    }
    let _ = std::fs::remove_file(&json);
    assert!(output.status.success(), "{text}");
    text
}

#[test]
fn each_dsn_keeps_its_password_and_option_files_supply_missing_ones() {
    let server = server_with_two_users();
    let tmp = common::private_tmpdir("credentials");
    let url = |(user, password): (&str, &str)| match password {
        "" => format!("mysql://{user}@127.0.0.1:{}", server.port()),
        _ => format!("mysql://{user}:{password}@127.0.0.1:{}", server.port()),
    };

    // Two servers' worth of --dsn (here one server, two users): each its own password.
    run(
        &tmp,
        &[],
        &["--dsn".into(), url(FIRST), format!("--dsn={}", url(SECOND))],
    );

    // No password in the URL: --defaults-file's [client] group.
    let option_file = tmp.join("lab.cnf");
    std::fs::write(
        &option_file,
        format!(
            "[mysqld]\npassword=wrong\n[client]\nuser = {}\npassword = \"{}\" # the lab's\n",
            FIRST.0, FIRST.1
        ),
    )
    .unwrap();
    run(
        &tmp,
        &[],
        &[
            "--dsn".into(),
            url((FIRST.0, "")),
            "--defaults-file".into(),
            option_file.display().to_string(),
        ],
    );
    // ~/.my.cnf, when no --defaults-file is given.
    std::fs::write(
        tmp.join(".my.cnf"),
        format!("[client]\npassword={}\n", FIRST.1),
    )
    .unwrap();
    run(&tmp, &[], &["--dsn".into(), url((FIRST.0, ""))]);
    std::fs::remove_file(tmp.join(".my.cnf")).unwrap();
    // MYSQL_PWD, last.
    run(
        &tmp,
        &[("MYSQL_PWD", FIRST.1)],
        &["--dsn".into(), url((FIRST.0, ""))],
    );
    // ENGINEBENCH_DSN when the command line names no server.
    let text = run(&tmp, &[("ENGINEBENCH_DSN", url(SECOND).as_str())], &[]);
    assert!(text.contains("(external)"), "{text}");

    // A missing --defaults-file is named, with the flag to fix.
    let output = common::enginebench(&tmp)
        .env("HOME", &tmp)
        .args(["run", "s0", "--dry-run", "--dsn"])
        .arg(url((FIRST.0, "")))
        .arg("--defaults-file")
        .arg(tmp.join("missing.cnf"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !output.status.success()
            && stderr.contains("cannot read the option file")
            && stderr.contains("--defaults-file"),
        "{stderr}"
    );
    drop(server);
    let _ = std::fs::remove_file(&option_file);
    common::assert_nothing_left(&tmp);
}
