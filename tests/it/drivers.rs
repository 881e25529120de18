//! The event driver (`--driver events`) and the thread driver (`--driver threads`) must
//! account for the same work: on every built-in study with run phases, the same events,
//! the same statements per query kind, and the same server `Com_*` counts, which in turn
//! equal the statements enginebench counted. And the event driver holds 10,000
//! connections from one process, each completing events.

use crate::common;

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

/// Runs `enginebench run ARGS --driver DRIVER --json FILE` and returns the record.
fn spawn(args: &[&str], driver: &str, json: &Path, tmpdir: &Path) -> std::process::Child {
    common::enginebench(tmpdir)
        .arg("run")
        .args(args)
        .args(["--no-db", "--driver", driver, "--json"])
        .arg(json)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("starting enginebench")
}

fn finish(child: std::process::Child, json: &Path, what: &str) -> Value {
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap()
}

/// A completed cell's statements per query kind: (name, ok, failed).
fn query_kinds(cell: &Value, what: &str) -> Vec<(String, u64, u64)> {
    assert_eq!(cell["outcome"], "completed", "{what}: {cell:#}");
    cell["queries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| {
            (
                q["name"].as_str().unwrap().to_string(),
                q["count"].as_u64().unwrap(),
                q["failed"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// Per cell: events, statements per query kind (ok, failed), and the server's Com_* counts.
type Accounting = Vec<(u64, Vec<(String, u64, u64)>, BTreeMap<String, u64>)>;

fn accounting(record: &Value, what: &str) -> Accounting {
    let cells = record["cells"].as_array().unwrap();
    assert!(!cells.is_empty(), "{what}: no cells");
    cells
        .iter()
        .map(|cell| {
            let kinds = query_kinds(cell, what);
            let coms: BTreeMap<String, u64> = cell["server_status_delta"]
                .as_object()
                .unwrap()
                .iter()
                // COM_STMT_CLOSE is sent without waiting for the server, so a cell's closes
                // may be counted in the next cell's window; they are no statement kind.
                .filter(|(name, _)| {
                    name.starts_with("Com_")
                        && *name != "Com_show_status"
                        && *name != "Com_stmt_close"
                })
                .map(|(name, value)| (name.clone(), value.as_u64().unwrap_or(0)))
                .filter(|(_, value)| *value > 0)
                .collect();
            // What enginebench counted is what the server executed: each statement once
            // (prepared or text), BEGIN and COMMIT included; a deadlock's ROLLBACK is the
            // driver's, not a query kind.
            let statements: u64 = kinds.iter().map(|(_, ok, failed)| ok + failed).sum();
            let executed: u64 = [
                "Com_select",
                "Com_insert",
                "Com_update",
                "Com_delete",
                "Com_replace",
                "Com_begin",
                "Com_commit",
            ]
            .iter()
            .map(|name| coms.get(*name).copied().unwrap_or(0))
            .sum();
            assert_eq!(
                statements, executed,
                "{what}: statements counted vs the server's Com_* {coms:?}"
            );
            (cell["events"].as_u64().unwrap(), kinds, coms)
        })
        .collect()
}

#[test]
// Long by design: one scenario, step by step: its assertions read in the order things happen.
#[allow(clippy::too_many_lines)]
fn both_drivers_account_for_the_same_work_on_every_study() {
    common::require_mariadb();
    let tmpdir = common::private_tmpdir("drivers");
    // Small and deterministic: loops per thread (or a fixed event structure), one repeat,
    // no warm-up (its last events overlap the counters' first reading); transactions that
    // can deadlock, and bulk_insert (whose batches depend on how --events is shared out),
    // on one connection.
    let scenarios: &[(&str, &[&str])] = &[
        (
            "s0",
            &[
                "s0",
                "--rows",
                "2000",
                "--threads",
                "1,4",
                "--loops",
                "30",
                "--repeat",
                "1",
                "--engines",
                "myisam,innodb",
            ],
        ),
        (
            "s1",
            &[
                "s1",
                "--scale",
                "0.001",
                "--threads",
                "3",
                "--loops",
                "20",
                "--warmup",
                "0s",
                "--repeat",
                "1",
                "--engines",
                "innodb,memory",
            ],
        ),
        (
            "s2",
            &[
                "s2",
                "--rows",
                "2000",
                "--threads",
                "1",
                "--loops",
                "10",
                "--warmup",
                "0s",
                "--engines",
                "innodb",
            ],
        ),
        (
            "accounts",
            &[
                "accounts",
                "--threads",
                "1",
                "--loops",
                "25",
                "--engines",
                "innodb",
            ],
        ),
    ];
    // Every sysbench workload: (name, connections, events) on a 2,000-row table.
    let sysbench: &[(&str, &str, &str)] = &[
        ("oltp_read_write", "1", "60"),
        ("oltp_insert", "4", "200"),
        ("select_random_ranges", "4", "100"),
        ("oltp_point_select", "4", "80"),
        ("oltp_read_only", "4", "80"),
        ("oltp_write_only", "1", "80"),
        ("oltp_update_index", "4", "80"),
        ("oltp_update_non_index", "4", "80"),
        ("oltp_delete", "1", "80"),
        ("select_random_points", "4", "80"),
        ("bulk_insert", "1", "300"),
    ];
    let studies: Vec<(&str, Vec<&str>)> = scenarios
        .iter()
        .map(|(name, args)| (*name, args.to_vec()))
        .chain(sysbench.iter().map(|&(name, threads, events)| {
            let args = [
                name,
                "--table-size",
                "2000",
                "--threads",
                threads,
                "--events",
                events,
            ];
            (name, args.to_vec())
        }))
        .collect();
    for (name, args) in &studies {
        let threads_json = tmpdir.join(format!("{name}-threads.json"));
        let events_json = tmpdir.join(format!("{name}-events.json"));
        // Both at once, each on its own throwaway server: the counts do not depend on timing.
        let threads = spawn(args, "threads", &threads_json, &tmpdir);
        let events = spawn(args, "events", &events_json, &tmpdir);
        let threads_record = finish(threads, &threads_json, name);
        let events_record = finish(events, &events_json, name);
        // Each record says which driver ran its cells.
        for (record, driver) in [(&threads_record, "threads"), (&events_record, "events")] {
            for cell in record["cells"].as_array().unwrap() {
                assert_eq!(cell["driver"], driver, "{name}");
            }
        }
        let on_threads = accounting(&threads_record, name);
        let on_events = accounting(&events_record, name);
        assert_eq!(on_threads, on_events, "{name}: threads vs events");
    }
    let _ = std::fs::remove_dir_all(&tmpdir);
}

/// Per cell of a topology: events, statements per query kind, and per node its connections
/// and the statements it executed, which over the nodes sum to the statements sent.
type NodeAccounting = Vec<(u64, Vec<(String, u64, u64)>, Vec<(String, u64, u64)>)>;

fn node_accounting(record: &Value, what: &str) -> NodeAccounting {
    let cells = record["cells"].as_array().unwrap();
    assert!(!cells.is_empty(), "{what}: no cells");
    cells
        .iter()
        .map(|cell| {
            let kinds = query_kinds(cell, what);
            let nodes: Vec<(String, u64, u64)> = cell["nodes"]
                .as_array()
                .unwrap()
                .iter()
                .map(|node| {
                    assert!(node["error"].is_null(), "{what}: {node}");
                    (
                        node["name"].as_str().unwrap().to_string(),
                        node["connections"].as_u64().unwrap(),
                        // Deltas are stored as numbers with a fraction (averages share the map).
                        node["status_delta"]["com_stmt_execute"]
                            .as_f64()
                            .unwrap_or(0.0) as u64,
                    )
                })
                .collect();
            // Every statement of the study but BEGIN and COMMIT is prepared: the nodes that
            // served connections executed exactly those sent (the heartbeat's writes are
            // not prepared).
            let sent: u64 = kinds
                .iter()
                .filter(|(name, _, _)| name != "begin" && name != "commit")
                .map(|(_, ok, failed)| ok + failed)
                .sum();
            let served: u64 = nodes.iter().filter(|n| n.1 > 0).map(|n| n.2).sum();
            assert_eq!(
                served, sent,
                "{what}: Com_stmt_execute over the serving nodes {nodes:?}"
            );
            (cell["events"].as_u64().unwrap(), kinds, nodes)
        })
        .collect()
}

#[test]
fn both_drivers_account_for_the_same_work_on_every_node_of_the_cluster_study() {
    common::require_mariadb();
    let tmpdir = common::private_tmpdir("drivers-cluster");
    // Two of its set-ups: replicas (reads stay on the primary by default) and Spider (each
    // statement on the head, which fans out to the backends). One connection: the same
    // statements whatever the timing.
    let args = [
        "cluster",
        "--profile",
        "primary + 2 replicas",
        "--profile",
        "Spider over 2",
        "--rows",
        "5000",
        "--threads",
        "1",
        "--loops",
        "30",
        "--warmup",
        "0s",
    ];
    let threads_json = tmpdir.join("cluster-threads.json");
    let events_json = tmpdir.join("cluster-events.json");
    // One after the other: six servers at once would starve two cores.
    let threads = spawn(&args, "threads", &threads_json, &tmpdir);
    let threads_record = finish(threads, &threads_json, "cluster");
    let events = spawn(&args, "events", &events_json, &tmpdir);
    let events_record = finish(events, &events_json, "cluster");
    let on_threads = node_accounting(&threads_record, "cluster on threads");
    let on_events = node_accounting(&events_record, "cluster on events");
    assert_eq!(on_threads.len(), 2, "one cell per set-up");
    assert_eq!(on_threads, on_events, "cluster: threads vs events");
    let _ = std::fs::remove_dir_all(&tmpdir);
}

#[test]
fn ten_thousand_connections_from_one_process_each_complete_their_loops() {
    common::require_mariadb();
    let tmpdir = common::private_tmpdir("ten-thousand");
    let json = tmpdir.join("run.json");
    let child = spawn(
        &[
            "oltp_point_select",
            "--table-size",
            "1000",
            "--threads",
            "10000",
            "--loops",
            "2",
        ],
        "events",
        &json,
        &tmpdir,
    );
    let record = finish(child, &json, "10,000 connections");
    let cell = &record["cells"][0];
    assert_eq!(cell["outcome"], "completed", "{cell:#}");
    assert_eq!(cell["threads"], 10000);
    assert_eq!(cell["events"], 20000);
    let per_worker = cell["per_worker_events"].as_array().unwrap();
    assert_eq!(per_worker.len(), 10000);
    // What proves 10,000 live connections: each completes its own loops (`--loops`). A
    // shared `--events` budget would promise no connection a share.
    let short = per_worker.iter().filter(|n| n.as_u64() != Some(2)).count();
    assert_eq!(short, 0, "connections that did not complete their 2 loops");
    std::fs::remove_file(&json).unwrap();
    common::assert_nothing_left(&tmpdir);
}

#[test]
fn the_event_driver_waits_for_each_answer_without_a_failed_read_first() {
    use enginebench::driver::events::{with_kind, DriverKind};
    use enginebench::driver::libmariadb::reads_skipped;
    use enginebench::studies::sysbench::oltp::OltpKind;
    common::require_mariadb();
    let server = enginebench::server::ThrowawayServer::start(&Default::default()).unwrap();
    let target = common::as_external(&server);
    let output = enginebench::runner::RunOutput::quiet(std::time::Duration::from_millis(200));
    let mut params = common::oltp_params(OltpKind::ReadWrite, 300, 1);
    params.matrix.threads = vec![4];
    // Prepared once on threads, so that only the measured statements run on the event loop.
    with_kind(DriverKind::Threads, || {
        common::run_oltp(&params, &target, &output)
    })
    .map_err(|(err, _)| err)
    .unwrap();
    let before = reads_skipped();
    let record = with_kind(DriverKind::Events, || {
        common::run_oltp(&params, &target, &output)
    })
    .map_err(|(err, _)| err)
    .unwrap();
    let skipped = reads_skipped() - before;
    let cell = &record.cells[0];
    assert_eq!(cell.events, 300);
    // Every statement's first read waited for the socket instead of failing first (the
    // counts per query kind against the server's are checked above for both drivers).
    let statements: u64 = cell.queries.iter().map(|q| q.count).sum();
    assert!(statements >= 300 * 20, "{statements}");
    assert!(
        skipped >= statements,
        "{skipped} reads skipped for {statements} statements"
    );
}

/// The reproduction, on a real server: a deadlock-heavy oltp_read_write (20 rows, 8
/// connections) with `--events 300` completes exactly 300 transactions on both drivers,
/// the deadlocked ones retried, as sysbench 1.0.20 does (today's main gave 296–299). Repeats
/// are one cell each, so every repeat is a fresh chance for the race.
#[test]
fn events_n_completes_exactly_n_events_when_deadlocks_are_retried_on_both_drivers() {
    common::require_mariadb();
    let tmpdir = common::private_tmpdir("events-exact");
    for driver in ["events", "threads"] {
        let json = tmpdir.join(format!("{driver}.json"));
        let child = spawn(
            &[
                "oltp_read_write",
                "--table-size",
                "20",
                "--threads",
                "8",
                "--events",
                "300",
                "--repeat",
                "4",
                "--engines",
                "innodb",
            ],
            driver,
            &json,
            &tmpdir,
        );
        let record = finish(child, &json, driver);
        let cells = record["cells"].as_array().unwrap();
        assert_eq!(cells.len(), 4);
        let retried: u64 = cells
            .iter()
            .map(|cell| cell["failed_events"].as_u64().unwrap())
            .sum();
        for cell in cells {
            assert_eq!(cell["outcome"], "completed", "{driver}: {cell:#}");
            assert_eq!(
                cell["events"], 300,
                "{driver}: {} retried",
                cell["failed_events"]
            );
            let commits = cell["server_status_delta"]["Com_commit"].as_u64().unwrap();
            assert_eq!(commits, 300, "{driver}: one COMMIT per completed event");
        }
        // The point of the test: events did fail and were retried.
        assert!(retried > 0, "{driver}: no deadlock in 4 × 300 transactions");
        std::fs::remove_file(&json).unwrap();
    }
    common::assert_nothing_left(&tmpdir);
}

/// On a kernel without `epoll_pwait2` (before 5.11, as on many Kubernetes nodes) the event
/// loops fall back to `epoll_wait`, chosen at run time; forced here, the same work completes.
#[test]
fn the_event_driver_falls_back_to_epoll_wait_and_completes_the_same_work() {
    common::require_mariadb();
    let tmpdir = common::private_tmpdir("epoll-wait");
    let json = tmpdir.join("run.json");
    let child = common::enginebench(&tmpdir)
        .args([
            "run",
            "oltp_read_only",
            "--table-size",
            "1000",
            "--threads",
            "8",
            "--events",
            "500",
            "--no-db",
            "--driver",
            "events",
            "--json",
        ])
        .arg(&json)
        .env("ENGINEBENCH_EPOLL", "wait")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.contains("event loops wait with epoll_wait (ENGINEBENCH_EPOLL=wait)"),
        "{stderr}"
    );
    let record: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let cell = &record["cells"][0];
    assert_eq!(cell["driver"], "events");
    assert_eq!(cell["events"], 500);
    // oltp_read_only: a BEGIN, 14 SELECTs and a COMMIT per event, as on epoll_pwait2.
    let delta = &cell["server_status_delta"];
    assert_eq!(delta["Com_select"], 500 * 14);
    assert_eq!(delta["Com_commit"], 500);
    std::fs::remove_file(&json).unwrap();
    common::assert_nothing_left(&tmpdir);
}

/// A prepared statement's rows through libmariadb, as TPC-C reads them: every column as the
/// server prints it, NULL told from empty, a value longer than its buffer read whole (the
/// buffer grows and is bound again), several rows, and the binds reused by later executions.
#[test]
fn prepared_rows_come_back_whole_as_text() {
    use enginebench::driver::libmariadb::{Connection, Param};
    common::require_mariadb();
    let server = enginebench::server::ThrowawayServer::start(&Default::default()).unwrap();
    let conn = Connection::connect(&server.connection_spec(Some("mysql"))).unwrap();
    let mut statement = conn
        .prepare(
            "SELECT ?, NULL, '', REPEAT('x', ?), 1.50, CAST('2026-11-24 10:00:00' AS DATETIME)",
        )
        .unwrap();
    for length in [10, 300, 5000, 20] {
        let mut seen = Vec::new();
        let rows = statement
            .execute_rows([Param::Int(42), Param::Int(length)], |row| {
                seen.push((
                    row.int(0),
                    row.get(1).is_none(),
                    row.get(2).map(<[u8]>::to_vec),
                    row.text(3),
                    row.float(4),
                    row.text(5),
                ));
            })
            .unwrap();
        assert_eq!(rows, 1);
        let (int, null, empty, long, float, date) = &seen[0];
        assert_eq!(*int, 42);
        assert!(*null);
        assert_eq!(empty.as_deref(), Some(&b""[..]));
        assert_eq!(long.len(), length as usize, "REPEAT('x', {length})");
        assert!(long.bytes().all(|b| b == b'x'));
        assert_eq!(*float, 1.5);
        assert_eq!(date, "2026-11-24 10:00:00");
    }
    let mut numbers = conn
        .prepare("SELECT seq FROM seq_1_to_100 WHERE seq <= ?")
        .unwrap();
    let mut sum = 0;
    let rows = numbers
        .execute_rows([Param::Int(64)], |row| sum += row.int(0))
        .unwrap();
    assert_eq!((rows, sum), (64, 64 * 65 / 2));
    // A statement without a result has no rows.
    let mut set = conn.prepare("SET @eb_unused = ?").unwrap();
    assert_eq!(
        set.execute_rows([Param::Int(1)], |_| panic!("a row"))
            .unwrap(),
        0
    );
}

/// A statement whose rows stop with an error part-way (a lock conflict met on the third
/// row locked, here a subquery that fails on the third row) runs again afterwards:
/// libmariadb 3.3 alone waited for ever on its next execution for the rows that never came.
#[test]
fn a_statement_whose_rows_stop_with_an_error_runs_again() {
    use enginebench::driver::libmariadb::{Connection, Param};
    common::require_mariadb();
    let server = enginebench::server::ThrowawayServer::start(&Default::default()).unwrap();
    let spec = server.connection_spec(Some("mysql"));
    let (done, outcome) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let conn = Connection::connect(&spec).unwrap();
        let mut statement = conn
            .prepare("SELECT IF(seq = ?, (SELECT 1 UNION SELECT 2), seq) FROM seq_1_to_5")
            .unwrap();
        let mut seen = 0;
        let failed = statement.execute_rows([Param::Int(3)], |_| seen += 1);
        let code = match failed {
            Err(mysql::Error::MySqlError(error)) => error.code,
            other => panic!("expected error 1242, got {other:?}"),
        };
        let again = statement.execute_rows([Param::Int(99)], |_| ()).unwrap();
        let counted = statement.execute([Param::Int(3)]).is_err();
        let after = statement.execute([Param::Int(99)]).unwrap().rows;
        done.send((code, again, counted, after)).unwrap();
    });
    let (code, again, counted, after) = outcome
        .recv_timeout(std::time::Duration::from_secs(30))
        .expect("the statement's next execution hung");
    assert_eq!(code, 1242);
    assert_eq!(again, 5);
    assert!(counted);
    assert_eq!(after, 5);
}
