//! Client groups and load shapes on a real throwaway server: a scenario whose run phase
//! has a closed-loop reader group and a writer group holding 200 inserts/s, each group
//! recorded and reported apart (its statements, events, rate held) and together (the
//! cell's), and given a verdict row of its own (InnoDB against MyISAM); and a built-in workload under `--stages` of connections, each stage recorded
//! with its own figures, its connections brought in at their stage, and judged by
//! `--stage-goal` in the report and the verdict.
//!
//! No assertion here depends on how fast the machine is (issue 64): a paced group is checked
//! for what the design promises — its target is the rate asked, its schedule never offers
//! more events than the rate allows, and its record tells the truth about what it achieved
//! (a group that fell below 95% of its rate or started an event over a second late says it
//! fell behind, and the report says so too). How close to its rate a group gets on this
//! machine is `bench/paced_groups.sh`'s business.

use crate::common;

use serde_json::Value;

const MIXED: &str = r#"
name = "mixed"
title = "Reads as fast as they go while writers hold 200 inserts/s"
engines = ["innodb", "myisam"]
threads = [2]
time = "6s"
repeat = 1

[[tables]]
name = "items"
rows = 5000
create = "CREATE TABLE items (id INT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY, v INT NOT NULL)"
columns = { id = { sequence = 1 }, v = { int = [0, 1000000] } }

[[phases]]
kind = "run"
name = "read+write"

[[phases.groups]]
name = "readers"
[[phases.groups.events]]
name = "read"
statements = [ { name = "point", sql = "SELECT v FROM items WHERE id = ?", params = [{ int = [1, 5000] }] } ]

[[phases.groups]]
name = "writers"
threads = 2
rate = "200/s"
[[phases.groups.events]]
name = "write"
statements = [ { name = "insert", sql = "INSERT INTO items (v) VALUES (?)", params = [{ int = [0, 1000000] }] } ]
"#;

fn query_count(cell: &Value, name: &str) -> u64 {
    cell["queries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["name"] == name)
        .map_or(0, |q| q["count"].as_u64().unwrap())
}

/// Asserts that a paced rate's record (a cell's `rate` or a group's) tells the truth about
/// what was achieved, whatever the machine's pace:
/// - its target is the rate asked;
/// - its achieved rate is its `events` over the time it says it is over
///   (`achieved_over_s`): the cell's wall time, or a group's own, never longer than the
///   cell's;
/// - a rate under 95% of the target, or an event started more than a second late, is
///   flagged `fell_behind` (the record's own definition: `rate_outcome` in
///   src/driver/mod.rs). Checked one way only: a record that says it kept its rate had
///   both; a stricter flag (say, a schedule that ended behind) would still pass;
/// - late events (each started more than 1 ms after its intended time) mean a lag of at
///   least 1 ms;
/// - one that fell behind says whose it was when its figures tell (`behind`: "server",
///   its events were held in flight; "client", the driver started due ones late), and a
///   lag from intended starts the end overtook is counted (`missed_events`);
/// - the schedule never ran ahead: at most `most_events`, what the schedule could offer
///   (every connection's schedule starts at the cell's measured start and stops at its
///   deadline, so a late start cannot add events).
///
/// Values within a hair (1e-9 relative) of a boundary are left alone: JSON may round the
/// last bit of a figure the driver compared exactly.
pub(crate) fn assert_rate_tells_the_truth(
    rate: &Value,
    target_per_s: f64,
    events: u64,
    wall_ms: f64,
    most_events: u64,
    what: &str,
) {
    let number = |name: &str| {
        rate[name]
            .as_f64()
            .unwrap_or_else(|| panic!("{what}: no {name} in {rate}"))
    };
    assert_eq!(number("target_per_s"), target_per_s, "{what}: {rate}");
    let achieved = number("achieved_per_s");
    let max_lag_ms = number("max_lag_ms");
    let late = rate["late_events"].as_u64().unwrap();
    let fell_behind = rate["fell_behind"].as_bool().unwrap();
    let wall_s = wall_ms / 1000.0;
    let over_s = number("achieved_over_s");
    assert!(
        over_s > 0.0 && over_s <= wall_s * (1.0 + 1e-9),
        "{what}: its rate is over {over_s} s, the cell's wall time is {wall_s} s: {rate}"
    );
    assert!(
        (achieved * over_s - events as f64).abs() <= 1e-6 * (events as f64).max(1.0),
        "{what}: achieved {achieved}/s over {over_s} s is not its {events} events: {rate}"
    );
    let clearly_short = achieved < 0.95 * target_per_s * (1.0 - 1e-9);
    let clearly_late = max_lag_ms > 1000.0 * (1.0 + 1e-9);
    if clearly_short || clearly_late {
        assert!(
            fell_behind,
            "{what}: {achieved}/s of {target_per_s}/s, lag up to {max_lag_ms} ms, and not flagged: {rate}"
        );
    }
    if let Some(behind) = rate.get("behind") {
        assert!(
            fell_behind,
            "{what}: behind ({behind}) yet not flagged: {rate}"
        );
        assert!(
            behind == "server" || behind == "client",
            "{what}: behind is the server or the client: {rate}"
        );
    }
    if rate["missed_events"].as_u64().unwrap_or(0) > 0 {
        assert!(
            max_lag_ms >= 1.0,
            "{what}: intended starts were missed, yet the lag was {max_lag_ms} ms: {rate}"
        );
    }
    if late > 0 {
        assert!(
            max_lag_ms >= 1.0,
            "{what}: {late} events started over 1 ms late, yet the lag was {max_lag_ms} ms: {rate}"
        );
    }
    assert!(
        events <= most_events,
        "{what}: the schedule never runs ahead: {events} events, at most {most_events} were due"
    );
}

fn group<'a>(cell: &'a Value, name: &str) -> &'a Value {
    cell["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["name"] == name)
        .unwrap_or_else(|| panic!("no group {name} in {}", cell["groups"]))
}

/// The MIXED run's writers were paced at 200/s, and each engine's record says truly how
/// well they kept it (whether this machine let them is bench/paced_groups.sh's business):
/// at most 200/s × 6 s, one more per connection. The report says what each record says:
/// its writers held 200/s, or fell behind it.
fn assert_the_writers_are_said_truly(record: &Value, stdout: &str) {
    let mut fell_behind = Vec::new();
    for cell in record["cells"].as_array().unwrap() {
        assert_eq!(cell["outcome"], "completed", "{cell}");
        let writers = group(cell, "writers");
        assert_rate_tells_the_truth(
            &writers["rate"],
            200.0,
            writers["events"].as_u64().unwrap(),
            cell["wall_ms"].as_f64().unwrap(),
            200 * 6 + 2,
            &format!("{} writers", cell["engine"]),
        );
        fell_behind.push(writers["rate"]["fell_behind"].as_bool().unwrap());
    }
    if fell_behind.contains(&true) {
        assert!(
            stdout.contains("fell behind: ") && stdout.contains("/s of 200/s"),
            "{fell_behind:?}\n{stdout}"
        );
    }
    if fell_behind.contains(&false) {
        assert!(stdout.contains("held 200/s ("), "{fell_behind:?}\n{stdout}");
    }
}

#[test]
fn a_closed_loop_reader_group_and_a_writer_group_at_200_per_s_are_recorded_apart() {
    common::require_mariadb();
    let tmpdir = common::private_tmpdir("client-groups");
    let scenario = tmpdir.join("mixed.toml");
    std::fs::write(&scenario, MIXED).unwrap();
    let (output, record) = common::run_recorded(
        &tmpdir,
        &[
            "run",
            scenario.to_str().unwrap(),
            // A rate the server can take, so that the quiet outcome (the rate held) is the
            // usual one. With a log fsync at every commit, InnoDB on this kind of VM
            // stalls commits for up to 1.2 s now and then (measured: 0.2–1.2 s in 5 of 6
            // four-second runs; none with the fsync once a second). Either way the
            // assertions below hold: they check that the record tells the truth.
            "--server-opt",
            "innodb_flush_log_at_trx_commit=2",
            "--no-crash",
            "--no-db",
            "--format",
            "markdown",
        ],
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    common::assert_success(&output);
    let cell = common::cell_where(&record, "engine", "innodb");
    assert_eq!(cell["outcome"], "completed", "{stderr}");
    let (readers, writers) = (group(cell, "readers"), group(cell, "writers"));

    assert_eq!(writers["pacing"], "rate");
    assert_eq!(writers["threads"], 2);
    assert_the_writers_are_said_truly(&record, &stdout);
    // Apart: each group's events are its own statements, named with its prefix.
    let inserts = query_count(cell, "writers/insert");
    let points = query_count(cell, "readers/point");
    assert_eq!(writers["events"].as_u64().unwrap(), inserts);
    assert_eq!(readers["events"].as_u64().unwrap(), points);
    assert_eq!(readers["pacing"], "closed_loop");
    assert!(readers.get("rate").is_none());
    // The readers ran, unpaced (how many more than the writers is the machine's pace).
    assert!(points > 0, "{points} reads");
    // Together: the cell's events are both groups'.
    assert_eq!(cell["events"].as_u64().unwrap(), points + inserts);
    // Each interval says what each group did, and they add up to the cell's.
    let per_interval = |name: &str| -> u64 {
        cell["intervals"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|i| i["groups"].as_array().unwrap().iter())
            .filter(|g| g["name"] == name)
            .map(|g| g["events"].as_u64().unwrap())
            .sum()
    };
    assert_eq!(per_interval("writers"), inserts);
    assert_eq!(per_interval("readers"), points);
    // The server saw the writers' inserts and nothing else inserted during the cell.
    assert_eq!(
        cell["server_status_delta"]["Com_insert"].as_u64().unwrap(),
        inserts
    );
    assert!(stdout.contains("Client groups"), "{stdout}");
    assert!(stdout.contains("writers/insert"), "{stdout}");
    // The verdict ranks each group apart, under its phase row: the readers on their
    // events/s, the paced writers on their p99 from the intended start (one repeat: too
    // few to say who leads, but the rows are there).
    let phase = &record["verdict"]["phases"][0];
    let rows = phase["client_groups"].as_array().unwrap();
    let judged: Vec<(&str, &str)> = rows
        .iter()
        .map(|row| {
            let group = &row["client_group"];
            (
                group["name"].as_str().unwrap(),
                group["metric"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        judged,
        [
            ("readers", "events/s"),
            ("writers", "p99 µs from intended start")
        ],
        "{phase:#}"
    );
    assert!(
        stdout.contains("| 2 threads, group writers (p99 µs from intended start) |"),
        "{stdout}"
    );
    std::fs::remove_file(&scenario).unwrap();
    common::assert_nothing_left(&tmpdir);
}

#[test]
fn stages_of_connections_record_each_stage_with_its_own_figures() {
    common::require_mariadb();
    let tmpdir = common::private_tmpdir("stages");
    let (output, record) = common::run_recorded(
        &tmpdir,
        &[
            "run",
            "oltp_point_select",
            "--engines",
            "innodb,myisam",
            "--repeat",
            "1",
            "--table-size",
            "2000",
            "--stages",
            "2s:2,2s:8,2s:16",
            "--report-interval",
            "500ms",
            "--stage-goal",
            "p99<1h",
            "--no-crash",
            "--no-db",
            "--format",
            "markdown",
        ],
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let cell = &record["cells"][0];
    assert_eq!(cell["outcome"], "completed", "{stderr}");
    // The shape set the cell: its peak of connections, as long as its stages.
    assert_eq!(cell["threads"], 16);
    let all = group(cell, "all");
    let stages = all["stages"].as_array().unwrap();
    let bounds: Vec<(f64, f64, f64)> = stages
        .iter()
        .map(|s| {
            (
                s["start_s"].as_f64().unwrap(),
                s["end_s"].as_f64().unwrap(),
                s["to"].as_f64().unwrap(),
            )
        })
        .collect();
    assert_eq!(bounds, [(0.0, 2.0, 2.0), (2.0, 4.0, 8.0), (4.0, 6.0, 16.0)]);
    // Connections came in at their stage: the first two ran all three stages, 2..8 the
    // last two, 8..16 the last only (what the shape says, whatever the machine's pace).
    let per_worker: Vec<u64> = cell["per_worker_events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect();
    assert_eq!(per_worker.len(), 16);
    let busy_ms: Vec<f64> = cell["per_worker_busy_ms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap())
        .collect();
    // A connection starts no event outside its stages' time, so its time inside events is
    // at most that time and the one event it had begun when the time ran out: at most the
    // cell's slowest (closed loop: an event's latency is its service time). A fixed slack
    // instead (it was 300 ms) fails whenever a loaded machine stretches that last event.
    let slowest_ms = cell["event_latency_us"]["max_us"].as_f64().unwrap() / 1000.0;
    for (worker, busy) in busy_ms.iter().enumerate() {
        let active_s = match worker {
            0..=1 => 6.0,
            2..=7 => 4.0,
            _ => 2.0,
        };
        assert!(
            *busy <= active_s * 1000.0 + slowest_ms + 1.0,
            "worker {worker} busy {busy} ms of {active_s} s (slowest event {slowest_ms} ms)"
        );
        assert!(per_worker[worker] > 0, "worker {worker} ran no event");
    }
    // Each stage has its own figures in the report.
    assert!(stdout.contains("Stages"), "{stdout}");
    for target in ["2 conn.", "8 conn.", "16 conn."] {
        assert!(stdout.contains(target), "{target}\n{stdout}");
    }
    // The stage goal is recorded and every stage judged by it.
    assert_eq!(record["stage_goal"]["text"], "p99<1h");
    for setup in ["InnoDB", "MyISAM"] {
        assert!(
            stdout.contains(&format!("{setup}, all: met p99<1h at every stage")),
            "{stdout}"
        );
        // The verdict says it too, per set-up.
        assert!(
            stdout.contains(&format!("{setup}: stages met p99<1h at every stage")),
            "{stdout}"
        );
    }
    common::assert_nothing_left(&tmpdir);
}

#[test]
fn a_lua_script_runs_beside_another_as_a_writer_group_at_its_rate() {
    common::require_mariadb();
    let tmpdir = common::private_tmpdir("lua-groups");
    let (output, record) = common::run_recorded(
        &tmpdir,
        &[
            "run",
            "/usr/share/sysbench/oltp_read_only.lua",
            "--engines",
            "innodb",
            "--table-size",
            "2000",
            "--threads",
            "2",
            "--time",
            "4s",
            "--group",
            "writers:2:100/s=/usr/share/sysbench/oltp_insert.lua",
            // A rate the server can take, so that the rate held is the usual outcome (see
            // the first test: commit stalls of a second); the record must tell the truth
            // either way.
            "--server-opt",
            "innodb_flush_log_at_trx_commit=2",
            "--repeat",
            "1",
            "--no-crash",
            "--no-db",
        ],
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let cell = &record["cells"][0];
    assert_eq!(cell["outcome"], "completed", "{stderr}");
    let (main, writers) = (group(cell, "main"), group(cell, "writers"));
    assert_eq!(main["threads"], 2);
    assert_eq!(main["pacing"], "closed_loop");
    assert_eq!(writers["threads"], 2);
    assert_eq!(writers["pacing"], "rate");
    // Paced at the group's 100/s, and the record says truly how well they kept it: this
    // assertion once required 95–105/s, and failed at 90.1/s and at 21.7/s on a loaded
    // machine (issue 64); the figure is bench/paced_groups.sh's. At most 100/s × 4 s, one
    // more per connection.
    assert_rate_tells_the_truth(
        &writers["rate"],
        100.0,
        writers["events"].as_u64().unwrap(),
        cell["wall_ms"].as_f64().unwrap(),
        100 * 4 + 2,
        "writers",
    );
    // Each script's statements are its group's: the writers' inserts are the server's.
    let queries = cell["queries"].as_array().unwrap();
    let inserts: u64 = queries
        .iter()
        .filter(|q| q["name"].as_str().unwrap().starts_with("writers/insert"))
        .map(|q| q["count"].as_u64().unwrap())
        .sum();
    assert_eq!(inserts, writers["events"].as_u64().unwrap());
    assert_eq!(
        cell["server_status_delta"]["Com_insert"].as_u64().unwrap(),
        inserts
    );
    assert!(queries
        .iter()
        .any(|q| q["name"].as_str().unwrap().starts_with("main/select")));
    assert!(!queries
        .iter()
        .any(|q| q["name"].as_str().unwrap().starts_with("main/insert")));
    common::assert_nothing_left(&tmpdir);
}

/// The stages-and-groups run's paced groups: the writers' rate is the group's, and the
/// record says truly how well they kept it (whether a busy machine let them is
/// bench/paced_groups.sh's business); the flood fell behind, and says so: under 95% of
/// 1,000,000/s on one connection is every machine's outcome, not this one's pace. The
/// stages make the cell 4 s long: at most the rate × 4 s, one more per connection.
fn assert_the_paced_groups_are_said_truly(cell: &Value) {
    let wall_ms = cell["wall_ms"].as_f64().unwrap();
    let writers = group(cell, "writers");
    assert_rate_tells_the_truth(
        &writers["rate"],
        100.0,
        writers["events"].as_u64().unwrap(),
        wall_ms,
        100 * 4 + 2,
        "writers",
    );
    let flood = group(cell, "flood");
    assert_eq!(flood["pacing"], "rate");
    assert_eq!(flood["threads"], 1);
    assert_rate_tells_the_truth(
        &flood["rate"],
        1_000_000.0,
        flood["events"].as_u64().unwrap(),
        wall_ms,
        1_000_000 * 4 + 1,
        "flood",
    );
    assert_eq!(flood["rate"]["fell_behind"], true, "{flood}");
    assert_eq!(
        flood["events"].as_u64().unwrap(),
        query_count(cell, "flood/point_select")
    );
}

#[test]
fn a_sysbench_workload_runs_beside_another_shaped_by_stages_with_paced_groups_saying_how_they_kept_their_rates(
) {
    common::require_mariadb();
    let tmpdir = common::private_tmpdir("oltp-groups");
    let (output, record) = common::run_recorded(
        &tmpdir,
        &[
            "run",
            "oltp_point_select",
            "--engines",
            "innodb",
            "--repeat",
            "1",
            "--table-size",
            "2000",
            "--group",
            "writers:2:100/s=oltp_insert",
            // A rate no single connection can serve (a point select takes tens of µs at
            // best): a group that surely falls behind, which the record and the table
            // must say.
            "--group",
            "flood:1:1000000/s=oltp_point_select",
            "--stages",
            "2s:1,2s:3",
            "--report-interval",
            "500ms",
            "--no-crash",
            "--no-db",
        ],
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert_eq!(
        record["parameters"]["groups"][0],
        "writers:2:100/s=oltp_insert"
    );
    let cell = &record["cells"][0];
    assert_eq!(cell["outcome"], "completed", "{stderr}");
    let (main, writers) = (group(cell, "main"), group(cell, "writers"));
    // --stages shaped the study's own connections, not the group beside them.
    assert_eq!(main["pacing"], "closed_loop");
    assert_eq!(main["threads"], 3);
    let targets: Vec<f64> = main["stages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|stage| stage["to"].as_f64().unwrap())
        .collect();
    assert_eq!(targets, [1.0, 3.0]);
    assert!(writers.get("stages").is_none(), "{writers}");
    assert_eq!(writers["pacing"], "rate");
    assert_eq!(writers["threads"], 2);
    assert_the_paced_groups_are_said_truly(cell);
    // Each group ran its own workload: point selects for main, oltp_insert's one INSERT
    // per event for the writers, and the server counted exactly those inserts.
    let inserts = query_count(cell, "writers/insert");
    assert_eq!(writers["events"].as_u64().unwrap(), inserts);
    assert_eq!(
        main["events"].as_u64().unwrap(),
        query_count(cell, "main/point_select")
    );
    assert_eq!(query_count(cell, "main/insert"), 0);
    assert_eq!(
        cell["server_status_delta"]["Com_insert"].as_u64().unwrap(),
        inserts
    );
    // The record classes each group's statements as sysbench does.
    assert_eq!(record["statement_classes"]["writers/insert"], "write");
    assert_eq!(record["statement_classes"]["main/point_select"], "read");
    // sysbench's table has a row per group under the cell's, with the writers' rate.
    let row = |label: &str| {
        stdout
            .lines()
            .find(|line| line.contains(label))
            .unwrap_or_else(|| panic!("no row {label}\n{stdout}"))
            .to_string()
    };
    assert!(row("main: 3").contains('-'), "{stdout}");
    // A group that did not keep its rate is marked so; one that did is not.
    let writers_row = row("writers: 2");
    assert!(writers_row.contains(" 100"), "{stdout}");
    assert_eq!(
        writers_row.contains("(not kept)"),
        writers["rate"]["fell_behind"] == true,
        "{writers}\n{stdout}"
    );
    assert!(row("flood: 1").contains("1000000 (not kept)"), "{stdout}");
    common::assert_nothing_left(&tmpdir);
}

#[test]
fn a_group_the_study_cannot_run_is_refused_naming_the_fix() {
    let tmpdir = common::private_tmpdir("bad-groups");
    for (args, expected) in [
        (
            vec![
                "run",
                "oltp_point_select",
                "--group",
                "w:1=/usr/share/sysbench/oltp_insert.lua",
            ],
            "run the study as a script too: enginebench run /usr/share/sysbench/oltp_point_select.lua --group",
        ),
        (
            vec!["run", "oltp_point_select", "--group", "w:1=bulk_insert"],
            "runs alone",
        ),
        (
            vec!["run", "ycsb", "--group", "w:1=oltp_insert"],
            "[[phases.groups]]",
        ),
        (
            vec![
                "run",
                "/usr/share/sysbench/oltp_read_only.lua",
                "--group",
                "w:x=oltp_insert.lua",
            ],
            "not a number of connections",
        ),
        (
            vec![
                "run",
                "/usr/share/sysbench/oltp_read_only.lua",
                "--group",
                "w:1:fast=oltp_insert.lua",
            ],
            "is not a rate",
        ),
        (
            vec![
                "run",
                "/usr/share/sysbench/oltp_read_only.lua",
                "--group",
                "main:1=/usr/share/sysbench/oltp_insert.lua",
            ],
            "is taken",
        ),
        (
            vec!["run", "oltp_point_select", "--stages", "10s:2,ten:8"],
            "is not a duration",
        ),
        // Stages under --rate ran as rates of 1/s and 4/s: the stages pace a cell alone.
        (
            vec![
                "run",
                "oltp_point_select",
                "--rate",
                "500",
                "--stages",
                "2s:1,2s:4",
            ],
            "cannot be used with '--stages",
        ),
    ] {
        let output = common::enginebench(&tmpdir)
            .args(&args)
            .arg("--dry-run")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{args:?} succeeded");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }
    common::assert_nothing_left(&tmpdir);
}

#[test]
fn tpc_c_runs_a_reporting_group_beside_its_terminals() {
    common::require_mariadb();
    let tmpdir = common::private_tmpdir("tpcc-groups");
    let (output, record) = common::run_recorded(
        &tmpdir,
        &[
            "run",
            "tpcc",
            "--engines",
            "innodb",
            "--warehouses",
            "1",
            "--threads",
            "2",
            "--time",
            "3s",
            "--group",
            "reports:1:5/s=0,0,0,0,1",
            "--repeat",
            "1",
            "--no-crash",
            "--no-db",
        ],
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let cell = &record["cells"][0];
    assert_eq!(cell["outcome"], "completed", "{stderr}");
    let (terminals, reports) = (group(cell, "terminals"), group(cell, "reports"));
    assert_eq!(terminals["threads"], 2);
    assert_eq!(reports["threads"], 1);
    // The reporting group ran its own mix: Stock-Level only, one per event, at its rate.
    let queries = cell["queries"].as_array().unwrap();
    let of_reports: Vec<&str> = queries
        .iter()
        .map(|q| q["name"].as_str().unwrap())
        .filter(|name| name.starts_with("reports/"))
        .filter(|name| {
            queries
                .iter()
                .any(|q| q["name"] == *name && q["count"].as_u64().unwrap() > 0)
        })
        .collect();
    assert!(!of_reports.is_empty());
    assert!(
        of_reports.iter().all(|name| name.starts_with("reports/sl_")
            || ["reports/Stock-Level", "reports/begin"].contains(name)),
        "{of_reports:?}"
    );
    assert_eq!(
        query_count(cell, "reports/Stock-Level"),
        reports["events"].as_u64().unwrap()
    );
    // At its rate, and the record says truly how well it kept it: at most 5/s × 3 s, one
    // more for the connection (a bound of the schedule, not of the machine's pace).
    assert_rate_tells_the_truth(
        &reports["rate"],
        5.0,
        reports["events"].as_u64().unwrap(),
        cell["wall_ms"].as_f64().unwrap(),
        5 * 3 + 1,
        "reports",
    );
    // TPC-C's figures count every group's transactions: New-Orders came from the terminals.
    assert!(query_count(cell, "terminals/New-Order") > 0);
    assert!(stdout.contains("terminals/New-Order"), "{stdout}");
    let nopm: f64 = stdout
        .split("TPC-C per cell")
        .nth(1)
        .and_then(|table| table.lines().find(|line| line.starts_with("| InnoDB")))
        .and_then(|row| row.split('|').nth(4))
        .and_then(|figure| figure.trim().parse().ok())
        .unwrap_or_else(|| panic!("no NOPM in\n{stdout}"));
    assert!(nopm > 0.0, "{stdout}");
    common::assert_nothing_left(&tmpdir);
}
