//! What enginebench sends of its own beyond the workload (issue 66), read from the server
//! itself: SHOW GLOBAL STATUS on a connection of the test's own before and after a run
//! against a server of the test's own (`--dsn`), the sbtest table prepared by an earlier
//! run and reused. With `--no-probes` the server saw the workload's statements and its
//! set-up's and nothing else; without, it saw exactly what the record counts beyond the
//! workload.

use crate::common;
use crate::common::server_counters::{moved, reader};

use enginebench::measure::StatusSnapshot;
use enginebench::server::{ServerOptions, ThrowawayServer};
use mysql::prelude::Queryable;
use std::collections::BTreeMap;

/// Events the measured run sends: one prepared point SELECT each.
const EVENTS: u64 = 300;

/// `enginebench run oltp_point_select` of `events` events on one thread against `server`,
/// with `extra` flags; its record.
fn run(
    server: &ThrowawayServer,
    tmp: &std::path::Path,
    events: u64,
    extra: &[&str],
) -> serde_json::Value {
    let dsn = format!("mysql://root@127.0.0.1:{}", server.port());
    let events = format!("--events={events}");
    let mut args = vec![
        "run",
        "oltp_point_select",
        "--table-size=1000",
        "--threads=1",
        "--repeat=1",
        &events,
        "--dsn",
        &dsn,
    ];
    args.extend_from_slice(extra);
    let (output, record) = common::run_recorded(tmp, &args);
    common::assert_success(&output);
    assert_eq!(record["status"], "completed", "{}", record["error"]);
    record
}

pub(crate) fn count(value: &serde_json::Value) -> i64 {
    value.as_i64().unwrap_or(0)
}

/// Text statements among the counters: every statement counts once in its Com_<command>,
/// a prepared one's execution too (besides Com_stmt_execute), so these are the Com_*
/// counters but the binary protocol's, less its executions.
pub(crate) fn text_statements(delta: &BTreeMap<String, i64>) -> i64 {
    let commands: i64 = delta
        .iter()
        .filter(|(name, _)| name.starts_with("Com_") && !name.starts_with("Com_stmt_"))
        .map(|(_, value)| value)
        .sum();
    commands - delta.get("Com_stmt_execute").copied().unwrap_or(0)
}

#[test]
fn the_server_sees_the_workload_alone_with_no_probes_and_the_counted_probes_without() {
    common::require_mariadb();
    let server = ThrowawayServer::start(&ServerOptions::default()).unwrap();
    let tmp = common::private_tmpdir("own-statements");
    // The table, made once (its load is the load's, not counted here).
    run(&server, &tmp, 10, &[]);
    let mut reader = reader(&server);

    // --no-probes: the workload's statements exactly, and its set-up's, nothing else.
    let before = StatusSnapshot::take(&mut reader).unwrap();
    let record = run(&server, &tmp, EVENTS, &["--no-probes"]);
    let after = StatusSnapshot::take(&mut reader).unwrap();
    let delta = moved(&before, &after);
    let own = &record["own_statements"];
    eprintln!("--no-probes: server {delta:?}\nrecord {own}");
    assert_eq!(own["no_probes"], true);
    assert_eq!(own["probes"]["connections"], 0, "{own}");
    assert_eq!(own["probes"]["queries"], 0, "{own}");
    let cell = &record["cells"][0];
    assert_eq!(cell["events"], EVENTS);
    assert!(cell.get("own_probes").is_none(), "{cell}");
    // One worker: it prepared its statement once and executed it once per event; the
    // set-up's own (the table checked for reuse) are counted in the record.
    assert_eq!(
        delta.get("Com_stmt_execute").copied().unwrap_or(0),
        EVENTS as i64 + count(&own["setup"]["executes"]),
        "{delta:?}\n{own}"
    );
    assert_eq!(
        delta.get("Com_stmt_prepare").copied().unwrap_or(0),
        1 + count(&own["setup"]["prepares"]),
        "{delta:?}\n{own}"
    );
    // No probe of any kind: no counters, variables, plans, engine status.
    for probe in [
        "Com_show_status",
        "Com_show_variables",
        "Com_show_engine_status",
        "Com_show_explain",
    ] {
        assert_eq!(delta.get(probe), None, "{probe}: {delta:?}");
    }
    // The rest is the set-up the record counts (its database and the table checked for
    // reuse), statement for statement, connection for connection.
    assert_eq!(
        text_statements(&delta),
        count(&own["setup"]["queries"]),
        "{delta:?}\n{own}"
    );
    assert_eq!(
        delta.get("Connections").copied().unwrap_or(0),
        1 + count(&own["setup"]["connections"]),
        "{delta:?}\n{own}"
    );
    assert!(record["statement_evidence"]
        .as_array()
        .is_none_or(Vec::is_empty));
    assert!(record["server"]["variables"]
        .as_object()
        .unwrap()
        .is_empty());
    // What the login told, nothing asked: MariaDB, its whole version from the greeting
    // (`5.5.5-10.11.19-MariaDB…`) as the server's own VERSION() says it.
    assert_eq!(
        record["server"]["flavour"], "mariadb",
        "{}",
        record["server"]
    );
    let version: String = reader.query_first("SELECT VERSION()").unwrap().unwrap();
    assert_eq!(record["server"]["version"], version, "{}", record["server"]);
    assert!(cell["server_status_delta"].as_object().unwrap().is_empty());

    // With probes: beyond the workload, exactly what the record counts.
    let before = StatusSnapshot::take(&mut reader).unwrap();
    let record = run(&server, &tmp, EVENTS, &[]);
    let after = StatusSnapshot::take(&mut reader).unwrap();
    let delta = moved(&before, &after);
    let own = &record["own_statements"];
    eprintln!("with probes: server {delta:?}\nrecord {own}");
    assert!(own.get("no_probes").is_none(), "{own}");
    let both = |field: &str| count(&own["setup"][field]) + count(&own["probes"][field]);
    assert!(count(&own["probes"]["queries"]) > 0, "{own}");
    assert_eq!(
        delta.get("Com_stmt_execute").copied().unwrap_or(0),
        EVENTS as i64 + both("executes"),
        "{delta:?}\n{own}"
    );
    assert_eq!(
        delta.get("Com_stmt_prepare").copied().unwrap_or(0),
        1 + both("prepares"),
        "{delta:?}\n{own}"
    );
    assert_eq!(text_statements(&delta), both("queries"), "{delta:?}\n{own}");
    assert_eq!(
        delta.get("Connections").copied().unwrap_or(0),
        1 + both("connections"),
        "{delta:?}\n{own}"
    );
    // The cell's share: the counters read around it and its plans and sample runs.
    let cell_probes = &record["cells"][0]["own_probes"];
    assert!(count(&cell_probes["queries"]) > 0, "{cell_probes}");
    assert!(count(&cell_probes["queries"]) <= count(&own["probes"]["queries"]));
    common::assert_nothing_left(&tmp);
}
