//! A slow statement is not a silent server, and set-up does not hang: a server stopped
//! (SIGSTOP) while the insert benchmark builds its indexes (l.x, one long ALTER TABLE a
//! client) is still called silent, with the process stopped named as the cause, though the
//! cell looks at the server before it gives up; and a server stopped while a table loads
//! (outside any cell) ends the run within the stall bound with a message that names the
//! table, the cause and the fix, the load recorded. Neither leaves a process or a file
//! behind. Each waits on the design's bounds, with generous guards against a hang, never
//! on how fast the machine is.

use crate::common;

use std::path::Path;
use std::time::Duration;

use crate::common::{server_of, signal};

fn run(tmp: &Path, json: &Path, args: &[&str]) -> common::Running {
    let mut command = common::enginebench(tmp);
    command
        .arg("run")
        .args(args)
        .arg("--no-db")
        .arg("--json")
        .arg(json);
    common::Running::spawn(command)
}

#[test]
fn a_server_stopped_during_an_index_build_is_called_silent_with_the_cause() {
    common::require_mariadb();
    let tmp = common::private_tmpdir("setup-stall-index-build");
    let json = tmp.with_extension("run.json");
    // The default stall bound: the cell looks at the server before it calls it silent.
    let mut running = run(
        &tmp,
        &json,
        &[
            "ibench",
            "--rows",
            "200000",
            "--engines",
            "innodb",
            "--steps",
            "l.i0,l.x",
            "--report-interval",
            "200ms",
        ],
    );
    // An interval line of l.x: its ALTER TABLE is under way.
    running.wait_for_line(|line| line.starts_with("[ ") && line.contains("] l.x "));
    let server = server_of(&tmp);
    signal(server, libc::SIGSTOP);
    let (status, _, stderr) = common::Running::finish_within(running, Duration::from_secs(240));

    assert_eq!(status.code(), Some(1), "a cell did not complete: {stderr}");
    assert!(
        stderr.contains("the server stopped answering: nothing completed for"),
        "{stderr}"
    );
    assert!(
        stderr.contains("the server process is stopped (state T"),
        "the cause is named: {stderr}"
    );
    assert!(
        stderr.contains("stopped by enginebench (it had stopped answering)"),
        "{stderr}"
    );
    assert!(!stderr.contains("died"), "{stderr}");
    assert!(!common::pid_alive(server), "the stopped server is gone");

    let record = common::read_json(&json);
    let index_build = common::cell_where(&record, "variant", "l.x");
    assert_eq!(index_build["outcome"], "stalled", "{index_build}");
    assert_eq!(index_build["stall"]["during"], "measurement");
    assert!(
        index_build["error"]
            .as_str()
            .unwrap()
            .contains("the server process is stopped"),
        "{index_build}"
    );
    assert_eq!(index_build["stall"]["in_flight"]["create_index"], 1);
    common::assert_nothing_left(&tmp);
}

#[test]
fn a_table_load_on_a_server_stopped_mid_load_ends_with_the_table_the_cause_and_the_fix() {
    common::require_mariadb();
    let tmp = common::private_tmpdir("setup-stall-table-load");
    let json = tmp.with_extension("run.json");
    // A table that takes many seconds to load; the server is stopped at its start.
    let mut running = run(
        &tmp,
        &json,
        &[
            "oltp_point_select",
            "--table-size",
            "2000000",
            "--engines",
            "innodb",
            "--time",
            "1s",
        ],
    );
    running.wait_for_line(|line| line.contains("loading 2000000 rows into sbtest1"));
    std::thread::sleep(Duration::from_millis(500));
    let server = server_of(&tmp);
    signal(server, libc::SIGSTOP);
    let (status, _, stderr) = common::Running::finish_within(running, Duration::from_secs(180));

    assert!(!status.success(), "{stderr}");
    assert!(
        stderr.contains("the server stopped answering during the load of table sbtest1"),
        "the table is named: {stderr}"
    );
    assert!(
        stderr.contains("the server process is stopped (state T"),
        "the cause is named: {stderr}"
    );
    assert!(
        stderr.contains("stopped by enginebench (it had stopped answering during the set-up)"),
        "what became of the server: {stderr}"
    );
    assert!(stderr.contains("--stall-timeout"), "the fix: {stderr}");
    assert!(!stderr.contains("died"), "{stderr}");
    assert!(!common::pid_alive(server), "the stopped server is gone");

    let record = common::read_json(&json);
    assert_eq!(record["status"], "failed", "{record}");
    let load = &record["loads"][0];
    assert_eq!(load["table"], "sbtest1", "{record}");
    assert!(
        load["error"]
            .as_str()
            .unwrap()
            .starts_with("the server stopped answering during the load of table sbtest1"),
        "{load}"
    );
    common::assert_nothing_left(&tmp);
}
