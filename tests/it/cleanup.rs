//! No mariadbd, datadir or socket of ours outlives the command: after a normal run, after
//! a panic in a worker, and after SIGINT or SIGTERM (which also keep the partial results).

use crate::common;

use std::process::Stdio;
use std::time::Duration;

const SMALL_RUN: &[&str] = &[
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
];

#[test]
fn a_normal_run_leaves_nothing_behind() {
    common::require_mariadb();
    let tmp = common::private_tmpdir("normal");
    let status = common::enginebench(&tmp)
        .args(SMALL_RUN)
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    common::assert_nothing_left(&tmp);
}

#[test]
fn a_panicking_worker_fails_the_run_and_leaves_nothing_behind() {
    common::require_mariadb();
    let tmp = common::private_tmpdir("panic");
    let json = tmp.with_extension("panic.json");
    let output = common::enginebench(&tmp)
        .args(SMALL_RUN)
        .arg("--json")
        .arg(&json)
        .env("ENGINEBENCH_FAULT", "worker-panic")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr
            .contains("Error: worker 0 panicked: fault injected by ENGINEBENCH_FAULT=worker-panic"),
        "{stderr}"
    );
    let record: serde_json::Value = common::read_json(&json);
    assert_eq!(record["status"], "failed");
    assert!(record["error"].as_str().unwrap().contains("panicked"));
    // The load finished before the panic; it is kept.
    assert_eq!(record["loads"].as_array().unwrap().len(), 2);
    common::assert_nothing_left(&tmp);
    let _ = std::fs::remove_file(json);
}

/// Starts a long run, waits until its first cell is measuring, sends `signal`.
fn interrupt_a_run(name: &str, signal: libc::c_int) {
    common::require_mariadb();
    let tmp = common::private_tmpdir(name);
    let json = tmp.with_extension(format!("{name}.json"));
    let mut command = common::enginebench(&tmp);
    command
        .args([
            "run",
            "s0",
            "--rows",
            "2000",
            "--threads",
            "2",
            "--time",
            "60s",
            "--repeat",
            "1",
            "--report-interval",
            "200ms",
        ])
        .arg("--json")
        .arg(&json);
    let mut run = common::Running::spawn(command);
    run.wait_for_line(|line| line.starts_with("[ "));
    // SAFETY: signalling the child we spawned.
    unsafe {
        libc::kill(run.child.id() as libc::pid_t, signal);
    }
    let (status, stdout, stderr) = run.finish();
    assert_eq!(status.code(), Some(130), "{stderr}");
    let record: serde_json::Value = common::read_json(&json);
    assert_eq!(record["status"], "interrupted");
    let cells = record["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 1, "only the partial first cell");
    assert_eq!(cells[0]["outcome"], "interrupted");
    // The cell stopped at the signal, not at its 60 s: read from the record's own clock,
    // not from how fast this machine tore the server down.
    let wall_ms = cells[0]["wall_ms"].as_f64().unwrap();
    assert!(wall_ms < 60_000.0, "the cell ran {wall_ms} ms of its 60 s");
    assert!(
        cells[0]["events"].as_u64().unwrap() > 0,
        "the partial cell keeps what it measured"
    );
    assert!(stdout.contains("The run was interrupted"), "{stdout}");
    common::assert_nothing_left(&tmp);
    let _ = std::fs::remove_file(json);
}

#[test]
fn sigint_keeps_the_partial_cell_and_leaves_nothing_behind() {
    interrupt_a_run("sigint", libc::SIGINT);
}

#[test]
fn sigterm_keeps_the_partial_cell_and_leaves_nothing_behind() {
    interrupt_a_run("sigterm", libc::SIGTERM);
}

#[test]
fn a_second_sigint_exits_at_once_when_the_first_cannot_finish() {
    use mysql::prelude::Queryable;
    common::require_mariadb();
    let tmp = common::private_tmpdir("sigint-twice");
    let mut command = common::enginebench(&tmp);
    command.args([
        "run",
        "s0",
        "--rows",
        "2000",
        "--threads",
        "2",
        "--time",
        "60s",
        "--repeat",
        "1",
        "--report-interval",
        "200ms",
    ]);
    let mut run = common::Running::spawn(command);
    run.wait_for_line(|line| line.starts_with("[ "));
    // Block the workers behind a table lock, so the graceful stop waits for them.
    let socket = run
        .seen
        .iter()
        .find_map(|line| {
            line.split("(unix socket ")
                .nth(1)
                .map(|rest| rest.trim_end_matches(')').to_string())
        })
        .expect("the socket path is announced");
    let opts = mysql::OptsBuilder::new()
        .socket(Some(socket))
        .user(Some("root"))
        .db_name(Some("enginebench_myisam"));
    let mut locker = mysql::Conn::new(opts.clone()).unwrap();
    locker.query_drop("LOCK TABLES t WRITE").unwrap();
    // Both workers wait behind the lock before the first interrupt: seen on the server,
    // not assumed after a sleep.
    let mut watcher = mysql::Conn::new(opts.clone()).unwrap();
    let waiting_since = std::time::Instant::now();
    loop {
        let waiting: u64 = watcher
            .query_first(
                "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE STATE LIKE 'Waiting for table%'",
            )
            .unwrap()
            .unwrap();
        if waiting >= 2 {
            break;
        }
        assert!(
            waiting_since.elapsed() < Duration::from_secs(180),
            "the workers never waited behind the lock"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(watcher);
    let pid = run.child.id() as libc::pid_t;
    let signal = || unsafe {
        // SAFETY: signalling the child we spawned.
        libc::kill(pid, libc::SIGINT);
    };
    signal();
    run.wait_for_line(|line| line.starts_with("interrupted: finishing in-flight queries"));
    signal();
    // The graceful stop can never finish (the lock is held until the end of this test), so
    // exiting at all proves the second interrupt did not wait for it. A hang guard, not a
    // speed claim: a run still there after 3 minutes is killed, and fails the test below.
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs(180));
        // SAFETY: the child we spawned; by then it has exited (and this does nothing) or
        // it hangs, which the status check below reports.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
        }
    });
    let (status, _, stderr) = run.finish();
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(
        stderr.contains("second interrupt: stopping the servers and exiting now"),
        "{stderr}"
    );
    drop(locker);
    common::assert_nothing_left(&tmp);
}
