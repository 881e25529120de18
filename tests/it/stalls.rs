//! Nothing hangs: a server that stops answering (SIGSTOP, as a paused machine or a disk
//! that never returns would leave it) ends the cell within the stall bound, on both
//! drivers, with what was measured before kept; a throwaway server is then stopped and the
//! next cells run on a fresh one, an external run stops; Ctrl-C ends a cell whose server
//! does not answer within a few seconds; a listener that accepts and never greets is an
//! error naming it, not a hang. Each waits on the design's bounds, with generous guards
//! against a hang, never on how fast the machine is.

use crate::common;

use std::path::Path;
use std::time::Duration;

use enginebench::server::{ServerOptions, ThrowawayServer};

/// The stall bound these tests ask for: short, so that the tests are.
const STALL: &str = "2s";

use crate::common::{server_of, signal};

/// `run oltp_point_select` printing its intervals, on `driver`, with `extra` arguments.
fn oltp_run(tmp: &Path, json: &Path, driver: &str, stall: &str, extra: &[&str]) -> common::Running {
    let mut command = common::enginebench(tmp);
    command
        .args([
            "run",
            "oltp_point_select",
            "--table-size",
            "1000",
            "--engines",
            "innodb",
            "--threads",
            "4",
            "--report-interval",
            "200ms",
            "--stall-timeout",
            stall,
            "--no-db",
            "--driver",
            driver,
        ])
        .arg("--json")
        .arg(json)
        .args(extra);
    common::Running::spawn(command)
}

fn interval_line_of(cell: &'static str) -> impl Fn(&str) -> bool {
    move |line: &str| line.starts_with("[ ") && line.contains(cell)
}

fn measured_intervals(cell: &serde_json::Value) -> usize {
    cell["intervals"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|interval| interval["events"].as_u64().unwrap_or(0) > 0)
        .count()
}

#[test]
fn a_stopped_throwaway_server_ends_its_cell_and_the_next_runs_on_a_fresh_one() {
    common::require_mariadb();
    for driver in ["events", "threads"] {
        let tmp = common::private_tmpdir(&format!("stall-throwaway-{driver}"));
        let json = tmp.with_extension("run.json");
        let mut running = oltp_run(
            &tmp,
            &json,
            driver,
            STALL,
            &["--time", "3s", "--repeat", "2"],
        );
        running.wait_for_line(interval_line_of("[1/2]"));
        let server = server_of(&tmp);
        signal(server, libc::SIGSTOP);
        let (status, _, stderr) = common::Running::finish_within(running, Duration::from_secs(120));

        // The study goes on, and its exit says a cell did not complete.
        assert_eq!(status.code(), Some(1), "{driver}: {stderr}");
        assert!(
            stderr.contains("the server stopped answering: nothing completed for"),
            "{driver}: {stderr}"
        );
        assert!(
            stderr.contains("stopped by enginebench (it had stopped answering)"),
            "{driver}: {stderr}"
        );
        assert!(!stderr.contains("died"), "{driver}: {stderr}");
        assert!(
            !stderr.contains("[Note]"),
            "{driver}: no start-up notes: {stderr}"
        );
        assert!(
            !common::pid_alive(server),
            "{driver}: the stopped server is gone"
        );

        let record = common::read_json(&json);
        let cells = record["cells"].as_array().unwrap();
        assert_eq!(cells.len(), 2, "{driver}");
        let stalled = &cells[0];
        assert_eq!(stalled["outcome"], "stalled", "{driver}: {stalled}");
        assert_eq!(stalled["stall"]["during"], "measurement", "{driver}");
        assert_eq!(stalled["stall"]["bound_s"], 2.0, "{driver}");
        assert!(
            stalled["stall"]["silent_s"].as_f64().unwrap() >= 2.0,
            "{driver}"
        );
        assert_eq!(
            stalled["stall"]["in_flight"]["point_select"], 4,
            "{driver}: every connection waited on its statement: {stalled}"
        );
        assert_eq!(stalled["stall"]["server_answered"], false, "{driver}");
        assert!(
            measured_intervals(stalled) >= 1,
            "{driver}: the intervals before the stop are kept"
        );
        assert!(stalled["events"].as_u64().unwrap() > 0, "{driver}");
        assert_eq!(cells[1]["outcome"], "completed", "{driver}: {}", cells[1]);
        let restarts: Vec<&serde_json::Value> = record["steps"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|step| step["name"] == "server_restart")
            .collect();
        assert_eq!(restarts.len(), 1, "{driver}: a fresh server for cell 2");
        common::assert_nothing_left(&tmp);
    }
}

/// A server standing in for someone else's, reached over TCP.
fn external_server() -> ThrowawayServer {
    common::require_mariadb();
    ThrowawayServer::start(&ServerOptions::default()).unwrap()
}

#[test]
fn a_stopped_external_server_ends_the_run_with_what_was_measured() {
    for driver in ["events", "threads"] {
        let server = external_server();
        let tmp = common::private_tmpdir(&format!("stall-external-{driver}"));
        let json = tmp.with_extension("run.json");
        let dsn = format!("mysql://root@127.0.0.1:{}", server.port());
        let mut running = oltp_run(
            &tmp,
            &json,
            driver,
            STALL,
            &["--time", "30s", "--repeat", "2", "--dsn", &dsn],
        );
        running.wait_for_line(interval_line_of("[1/2]"));
        signal(server.pid(), libc::SIGSTOP);
        let ended = common::Running::finish_within(running, Duration::from_secs(180));
        // Continued before anything can fail: the server is dropped (stopped) at the end.
        signal(server.pid(), libc::SIGCONT);
        let (status, _, stderr) = ended;

        assert!(!status.success(), "{driver}: {stderr}");
        assert!(
            stderr.contains(&format!(
                "127.0.0.1:{} stopped answering during [1/2]",
                server.port()
            )),
            "{driver}: {stderr}"
        );
        assert!(
            stderr.contains("left running: it is not enginebench's to stop"),
            "{driver}: {stderr}"
        );
        assert!(!stderr.contains("died"), "{driver}: {stderr}");
        let record = common::read_json(&json);
        let cells = record["cells"].as_array().unwrap();
        assert_eq!(cells.len(), 1, "{driver}: the run stopped");
        assert_eq!(cells[0]["outcome"], "stalled", "{driver}");
        assert!(measured_intervals(&cells[0]) >= 1, "{driver}");
        assert!(
            common::pid_alive(server.pid()),
            "{driver}: an external server is left alone"
        );
        drop(server);
        common::assert_nothing_left(&tmp);
    }
}

#[test]
fn ctrl_c_ends_a_cell_whose_server_stopped_answering_and_keeps_what_it_measured() {
    common::require_mariadb();
    for driver in ["events", "threads"] {
        let tmp = common::private_tmpdir(&format!("stall-ctrl-c-{driver}"));
        let json = tmp.with_extension("run.json");
        // A stall bound far beyond the test: only Ctrl-C can end this cell in time.
        let mut running = oltp_run(&tmp, &json, driver, "10m", &["--time", "60s"]);
        running.wait_for_line(interval_line_of("[1/1]"));
        let server = server_of(&tmp);
        signal(server, libc::SIGSTOP);
        std::thread::sleep(Duration::from_millis(300));
        signal(running.child.id(), libc::SIGINT);
        let (status, _, stderr) = common::Running::finish_within(running, Duration::from_secs(180));

        assert_eq!(status.code(), Some(130), "{driver}: {stderr}");
        assert!(
            stderr.contains("interrupted: stopped waiting for 4 statements in flight after 2 s"),
            "{driver}: {stderr}"
        );
        assert!(!stderr.contains("died"), "{driver}: {stderr}");
        let record = common::read_json(&json);
        let cell = &record["cells"][0];
        assert_eq!(cell["outcome"], "interrupted", "{driver}: {cell}");
        assert!(measured_intervals(cell) >= 1, "{driver}");
        assert!(!common::pid_alive(server), "{driver}");
        common::assert_nothing_left(&tmp);
    }
}

#[test]
fn a_listener_that_accepts_and_never_answers_is_named_not_waited_for() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    // Accepts every connection and keeps it open without a byte.
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            held.push(stream);
        }
    });
    let tmp = common::private_tmpdir("stall-silent-listener");
    let mut command = common::enginebench(&tmp);
    command.args([
        "run",
        "oltp_point_select",
        "--table-size",
        "100",
        "--time",
        "1s",
        "--no-db",
        "--dsn",
        &format!("mysql://root@127.0.0.1:{port}"),
    ]);
    let (status, _, stderr) =
        common::Running::finish_within(common::Running::spawn(command), Duration::from_secs(180));
    assert!(!status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!("cannot connect to mysql://root@127.0.0.1:{port}")),
        "{stderr}"
    );
    assert!(
        stderr.contains("accepted the connection but did not finish the login within 10 s"),
        "{stderr}"
    );
    common::assert_nothing_left(&tmp);
}
