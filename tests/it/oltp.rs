//! sysbench's workloads: the statements each event sends, counted by the server itself;
//! sysbench's report format; rate mode; 1,024 connections from one client.

use crate::common;

use common::run_oltp;
use enginebench::results::{OutcomeRecord, RunStatus};
use enginebench::runner::RunOutput;
use enginebench::server::{ServerArgsResolved, ServerOptions, ThrowawayServer};
use enginebench::studies::sysbench::oltp::OltpKind;
use std::time::Duration;

fn params(workload: OltpKind, events: u64) -> common::OltpRun {
    common::oltp_params(workload, events, 2)
}

fn quiet() -> RunOutput {
    RunOutput::quiet(Duration::from_millis(200))
}

#[test]
fn each_workload_sends_sysbenchs_statements_per_event() {
    common::require_mariadb();
    // One server for all workloads, reached as an external server over TCP, so the sbtest
    // tables are prepared once and reused as sysbench's `run` reuses `prepare`d tables.
    let server = ThrowawayServer::start(&ServerOptions::default()).unwrap();
    let target = common::as_external(&server);
    // Server counters per event, as sysbench 1.0.20's scripts issue them with default options.
    // Com_stmt_execute too: sysbench prepares every statement but oltp_insert's INSERT,
    // BEGIN and COMMIT included (oltp_common.lua's prepare_begin and prepare_commit).
    let expected: &[(OltpKind, &[(&str, u64)])] = &[
        (
            OltpKind::PointSelect,
            &[("Com_select", 1), ("Com_stmt_execute", 1)],
        ),
        (
            OltpKind::ReadOnly,
            &[
                ("Com_begin", 1),
                ("Com_select", 14),
                ("Com_commit", 1),
                ("Com_stmt_execute", 16),
            ],
        ),
        (
            OltpKind::ReadWrite,
            &[
                ("Com_begin", 1),
                ("Com_select", 14),
                ("Com_update", 2),
                ("Com_delete", 1),
                ("Com_insert", 1),
                ("Com_commit", 1),
                ("Com_stmt_execute", 20),
            ],
        ),
        (
            OltpKind::WriteOnly,
            &[
                ("Com_begin", 1),
                ("Com_update", 2),
                ("Com_delete", 1),
                ("Com_insert", 1),
                ("Com_commit", 1),
                ("Com_stmt_execute", 6),
            ],
        ),
        (
            OltpKind::UpdateIndex,
            &[("Com_update", 1), ("Com_stmt_execute", 1)],
        ),
        (
            OltpKind::UpdateNonIndex,
            &[("Com_update", 1), ("Com_stmt_execute", 1)],
        ),
        (
            OltpKind::Insert,
            &[("Com_insert", 1), ("Com_stmt_execute", 0)],
        ),
        (
            OltpKind::Delete,
            &[("Com_delete", 1), ("Com_stmt_execute", 1)],
        ),
        (
            OltpKind::SelectRandomPoints,
            &[("Com_select", 1), ("Com_stmt_execute", 1)],
        ),
        (
            OltpKind::SelectRandomRanges,
            &[("Com_select", 1), ("Com_stmt_execute", 1)],
        ),
    ];
    for (workload, per_event) in expected {
        let record = run_oltp(&params(*workload, 150), &target, &quiet())
            .map_err(|(err, _)| err)
            .unwrap();
        assert_eq!(record.status, RunStatus::Completed, "{workload:?}");
        let cell = &record.cells[0];
        assert_eq!(
            cell.outcome,
            OutcomeRecord::Completed,
            "{workload:?}: {:?}",
            cell.error
        );
        assert_eq!(cell.events, 150, "{workload:?}");
        assert_eq!(cell.event_latency_us.count, 150);
        for (counter, count) in *per_event {
            assert_eq!(
                cell.server_status_delta.get(*counter).copied().unwrap_or(0),
                (count * 150) as i64,
                "{workload:?}: {counter}"
            );
        }
        // enginebench's own count of statements agrees with the server's total.
        let statements: u64 = cell.queries.iter().map(|q| q.count).sum();
        let server_total: u64 = per_event
            .iter()
            .filter(|(counter, _)| *counter != "Com_stmt_execute")
            .map(|(_, count)| count * 150)
            .sum();
        assert_eq!(statements, server_total, "{workload:?}");
    }
}

#[test]
fn bulk_insert_loads_one_row_per_event_into_each_threads_table() {
    common::require_mariadb();
    let mut p = params(OltpKind::BulkInsert, 30_000);
    p.matrix.threads = vec![3];
    let record = run_oltp(
        &p,
        &ServerArgsResolved {
            dsn: None,
            more_dsns: Vec::new(),
            routing: Default::default(),
            force: false,
            database: "enginebench".into(),
            options: ServerOptions::default(),
        },
        &quiet(),
    )
    .map_err(|(err, _)| err)
    .unwrap();
    let cell = &record.cells[0];
    assert_eq!(cell.outcome, OutcomeRecord::Completed, "{:?}", cell.error);
    assert_eq!(cell.events, 30_000);
    // Rows arrive in multi-row INSERTs of up to 512 KiB, the rest flushed at the end (a
    // fast thread may take the whole --events budget before the others start).
    let inserts = cell.server_status_delta["Com_insert"];
    assert!((1..=10).contains(&inserts), "{inserts} INSERT statements");
    // Handler_write, not Innodb_rows_inserted: MariaDB's bulk path for inserts into an
    // empty table does not count the latter.
    assert_eq!(cell.server_status_delta["Handler_write"], 30_000);
}

#[test]
fn sysbench_format_rate_mode_and_a_thousand_connections_from_the_command_line() {
    common::require_mariadb();
    let tmp = common::private_tmpdir("oltp-cli");
    let run = |args: &[&str]| {
        let output = common::enginebench(&tmp).args(args).output().unwrap();
        common::assert_success(&output);
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    let report = run(&[
        "run",
        "oltp_read_write",
        "--tables=2",
        "--table-size=1000",
        "--threads=1",
        "--events=100",
        "--format",
        "sysbench",
        "--percentile",
        "99",
    ]);
    assert!(report.contains("SQL statistics:\n    queries performed:\n        read:                            1400\n"), "{report}");
    assert!(report.contains("        write:                           400\n        other:                           200\n        total:                           2000\n"), "{report}");
    assert!(
        report.contains("    transactions:                        100    ("),
        "{report}"
    );
    assert!(report.contains("         99th percentile:"), "{report}");
    assert!(
        report.contains("Threads fairness:\n    events (avg/stddev):           100.0000/0.00"),
        "{report}"
    );

    let json = tmp.with_extension("rate.json");
    let table = run(&[
        "run",
        "oltp_point_select",
        "--table-size=1000",
        "--threads=2",
        "--time=2s",
        "--rate=400",
        "--rate-arrivals=poisson",
        "--json",
    ]
    .into_iter()
    .chain([json.to_str().unwrap()])
    .collect::<Vec<_>>());
    assert!(table.contains("target/s"), "{table}");
    let record: serde_json::Value = common::read_json(&json);
    // The record says truly whether the driver kept the rate: when it says so, it held at
    // least 95% and no event started a second late; when the machine was too busy, it says
    // that instead (never a silent shortfall). How close to 400/s this machine gets is
    // bench/paced_groups.sh's figure, not a test's (a 360–440/s window here failed now
    // and then on a shared 2-core machine, issue 64).
    // The schedule never runs ahead. Poisson gaps are random: 800 events are due on
    // average in 2 s, give or take 28, so the bound is 1,000 (7 standard deviations
    // above), not 800 plus a connection's one: no schedule reaches it by chance.
    let cells = record["cells"].as_array().unwrap();
    let rates: Vec<String> = cells.iter().map(|cell| cell["rate"].to_string()).collect();
    for cell in cells {
        assert_eq!(cell["outcome"], "completed", "{}", cell["error"]);
        crate::client_groups::assert_rate_tells_the_truth(
            &cell["rate"],
            400.0,
            cell["events"].as_u64().unwrap(),
            cell["wall_ms"].as_f64().unwrap(),
            1000,
            &format!("--rate 400, cell {}", cell["index"]),
        );
    }
    // The table marks a rate that was not kept (in any repeat), and warns; one that was,
    // it does not.
    let not_kept = cells.iter().any(|cell| cell["rate"]["fell_behind"] == true);
    assert_eq!(table.contains("(not kept)"), not_kept, "{rates:?}\n{table}");
    assert_eq!(
        table.contains("the driver could not keep the requested rate"),
        not_kept,
        "{rates:?}\n{table}"
    );

    let many = tmp.with_extension("many.json");
    run(&[
        "run",
        "oltp_point_select",
        "--table-size=1000",
        "--threads=1024",
        "--loops=2",
        "--json",
        many.to_str().unwrap(),
    ]);
    let record: serde_json::Value = common::read_json(&many);
    let cell = &record["cells"][0];
    assert_eq!(cell["outcome"], "completed", "{}", cell["error"]);
    // As sysbench 1.0.20 sends its OLTP statements: prepared.
    common::assert_protocol(std::slice::from_ref(cell), "prepared", "prepared");
    // Every worker connected and prepared its statement (a failure there fails the cell)…
    let per_worker = cell["per_worker_events"].as_array().unwrap();
    assert_eq!(per_worker.len(), 1024);
    // …and each completed its own two loops, however long the scheduler took to go round.
    let short = per_worker
        .iter()
        .filter(|events| events.as_u64() != Some(2))
        .count();
    assert_eq!(
        short, 0,
        "connections of 1,024 that did not complete their 2 loops"
    );
    std::fs::remove_file(json).unwrap();
    std::fs::remove_file(many).unwrap();
    common::assert_nothing_left(&tmp);
}

#[test]
fn prepared_parameters_keep_their_values_as_they_change_length_and_type() {
    use enginebench::driver::libmariadb::{Connection, Param};
    use mysql::prelude::Queryable;
    common::require_mariadb();
    // Parameters are bound once into the statement's own buffers; a text longer than its
    // buffer, or a parameter that changes type, must bind again and still send its value.
    let server = ThrowawayServer::start(&ServerOptions::default()).unwrap();
    server
        .connection_spec(None)
        .connect()
        .unwrap()
        .query_drop("CREATE DATABASE params_test")
        .unwrap();
    let spec = server.connection_spec(Some("params_test"));
    let mut check = spec.connect().unwrap();
    check
        .query_drop("CREATE TABLE params (n INT AUTO_INCREMENT PRIMARY KEY, a TEXT, b TEXT)")
        .unwrap();
    let connection = Connection::connect(&spec).unwrap();
    let mut insert = connection
        .prepare("INSERT INTO params (a, b) VALUES (?, ?)")
        .unwrap();
    let long = "x".repeat(1000);
    let longer = "y".repeat(5000);
    let rows: Vec<(Param, Param)> = vec![
        (Param::Int(7), Param::Text("short")),
        (Param::Text(&long), Param::Int(-3)),
        (Param::Text("tiny"), Param::Text(&longer)),
        (Param::Int(i64::MAX), Param::Text("")),
        (Param::Text(&longer), Param::Text("after growing")),
    ];
    for (a, b) in &rows {
        insert.execute_drop([*a, *b]).unwrap();
    }
    let stored: Vec<(String, String)> = check.query("SELECT a, b FROM params ORDER BY n").unwrap();
    let text = |p: &Param| match p {
        Param::Int(n) => n.to_string(),
        Param::Text(t) => t.to_string(),
        other => unreachable!("the test binds only integers and texts, not {other:?}"),
    };
    let expected: Vec<(String, String)> = rows.iter().map(|(a, b)| (text(a), text(b))).collect();
    assert_eq!(stored, expected);
}
