//! What enginebench sends of its own beyond the workload (issue 66), for kinds whose set-up
//! is more than a table checked for reuse: a scenario file that loads its tables, times a
//! DDL phase, a load phase (prepared row inserts, multi-row inserts) and a sequence phase
//! (a load and statements per run); and the durability kind, whose own step makes the
//! ledger's tables (`StepHost::connect`) and whose cells empty them first. Against a
//! server of the test's own (`--dsn`), with and without `--no-probes`, the server's
//! `Com_*` and `Connections` moved by exactly the workload's statements and connections
//! (read from the record's cells) plus what the record counts as its own.

use crate::common;
use crate::common::server_counters::run_counted;
use crate::own_statements::{count, text_statements};

use enginebench::server::{ServerOptions, ThrowawayServer};
use std::collections::BTreeMap;

/// A table loaded before the cells, a run phase of one text SELECT per loop, a DDL phase, a
/// load phase of two methods and a sequence phase that loads and drops a table twice.
const SCENARIO: &str = r#"
name = "own"
engines = ["innodb"]
threads = [1]
loops = 40

[[tables]]
name = "t"
rows = 300
create = "CREATE TABLE t (id INT UNSIGNED NOT NULL PRIMARY KEY, value VARCHAR(100) NOT NULL)"
columns = { id = { sequence = 1 }, value = { string = [8, 100] } }

[[tables]]
name = "d"
rows = 120
deferred = true
create = "CREATE TABLE d (id INT NOT NULL PRIMARY KEY, data VARCHAR(100) NOT NULL)"
columns = { id = { sequence = 1 }, data = { string = [8, 100] } }

[[phases]]
kind = "run"
name = "select"

[[phases.events]]
name = "loop"
statements = [
  { name = "select", sql = "SELECT * FROM t WHERE id = ?", params = [{ ref = "t.id" }] },
]

[[phases]]
kind = "ddl"
name = "index"
sql = "CREATE INDEX value ON t (value)"

[[phases]]
kind = "load"
name = "bulk"
table = "d"
methods = [
  { method = "row-autocommit" },
  { method = "multi-row", rows_per_statement = 50, commit_every = 100 },
]

[[phases]]
kind = "sequence"
name = "job"
runs = 2
discard = 0
steps = [
  { name = "import", load = "d" },
  { name = "count", sql = "SELECT COUNT(*) FROM d" },
  { name = "drop", sql = "DROP TABLE d" },
]
"#;

/// The server saw the cells' text statements on their connections and, beyond them,
/// exactly what the record counts as enginebench's own, command by command.
fn assert_workload_and_own(record: &serde_json::Value, delta: &BTreeMap<String, i64>) {
    let cells = record["cells"].as_array().unwrap();
    assert!(!cells.is_empty(), "{record}");
    let workload_statements: i64 = cells
        .iter()
        .flat_map(|cell| cell["queries"].as_array().unwrap())
        .map(|query| count(&query["count"]) + count(&query["failed"]))
        .sum();
    let workload_connections: i64 = cells.iter().map(|cell| count(&cell["threads"])).sum();
    assert!(workload_statements > 0, "{record}");
    let own = &record["own_statements"];
    let both = |field: &str| count(&own["setup"][field]) + count(&own["probes"][field]);
    let server = |name: &str| delta.get(name).copied().unwrap_or(0);
    eprintln!(
        "workload {workload_statements} text statements on {workload_connections} connections\n\
         server {delta:?}\nrecord {own}"
    );
    // The workload's statements go as text: every prepare and execution is enginebench's.
    assert_eq!(
        server("Com_stmt_execute"),
        both("executes"),
        "{delta:?}\n{own}"
    );
    assert_eq!(
        server("Com_stmt_prepare"),
        both("prepares"),
        "{delta:?}\n{own}"
    );
    assert_eq!(
        text_statements(delta),
        workload_statements + both("queries"),
        "{delta:?}\n{own}"
    );
    assert_eq!(
        server("Connections"),
        workload_connections + both("connections"),
        "{delta:?}\n{own}"
    );
}

/// What `--no-probes` promises beside the equality: no probe counted, none seen.
fn assert_no_probes(record: &serde_json::Value, delta: &BTreeMap<String, i64>) {
    let own = &record["own_statements"];
    assert_eq!(own["no_probes"], true, "{own}");
    assert_eq!(count(&own["probes"]["connections"]), 0, "{own}");
    assert_eq!(count(&own["probes"]["queries"]), 0, "{own}");
    for probe in ["Com_show_status", "Com_show_variables", "Com_show_explain"] {
        assert_eq!(delta.get(probe), None, "{probe}: {delta:?}");
    }
}

#[test]
fn a_scenario_s_loads_ddl_and_sequence_are_counted_with_and_without_probes() {
    common::require_mariadb();
    let server = ThrowawayServer::start(&ServerOptions::default()).unwrap();
    let tmp = common::private_tmpdir("own-statements-scenario");
    let file = tmp.with_extension("own.toml");
    std::fs::write(&file, SCENARIO).unwrap();
    let file = file.to_str().unwrap();
    let args = ["run", file, "--protocol", "text"];

    let (record, delta) = run_counted(&server, &tmp, "own_scenario_a", &args, "");
    assert_workload_and_own(&record, &delta);
    // The loads went through the counted path: LOAD DATA for t (its chunks), the load
    // phase's prepared row inserts, its multi-row inserts, the sequence's loads.
    let setup = &record["own_statements"]["setup"];
    assert!(
        delta.get("Com_load").copied().unwrap_or(0) >= 3,
        "{delta:?}"
    );
    assert!(count(&setup["executes"]) >= 120, "{setup}");
    assert!(count(&setup["prepares"]) >= 1, "{setup}");
    assert!(count(&record["own_statements"]["probes"]["queries"]) > 0);

    let no_probes: Vec<&str> = args.iter().copied().chain(["--no-probes"]).collect();
    let (record, delta) = run_counted(&server, &tmp, "own_scenario_b", &no_probes, "");
    assert_workload_and_own(&record, &delta);
    assert_no_probes(&record, &delta);

    // --query-timeout bounds each workload connection's statements with a SET at its
    // login: the set-up's, counted, not the workload's.
    let bounded: Vec<&str> = no_probes
        .iter()
        .copied()
        .chain(["--query-timeout=30s"])
        .collect();
    let (record, delta) = run_counted(&server, &tmp, "own_scenario_c", &bounded, "");
    assert_workload_and_own(&record, &delta);
    assert!(
        delta.get("Com_set_option").copied().unwrap_or(0) >= 1,
        "{delta:?}"
    );
    let _ = std::fs::remove_file(file);
    common::assert_nothing_left(&tmp);
}

#[test]
fn the_durability_kind_s_own_step_and_emptied_tables_are_counted_with_and_without_probes() {
    common::require_mariadb();
    let server = ThrowawayServer::start(&ServerOptions::default()).unwrap();
    let tmp = common::private_tmpdir("own-statements-durability");
    let args = [
        "run",
        "durability",
        "--engines=innodb",
        "--threads=1",
        "--events=60",
        "--no-crash",
    ];

    let (record, delta) = run_counted(&server, &tmp, "own_ledger_a", &args, "");
    assert_workload_and_own(&record, &delta);
    // The ledger's tables made by the kind's own step, then emptied before the cell.
    assert!(
        delta.get("Com_create_table").copied().unwrap_or(0) >= 1,
        "{delta:?}"
    );
    assert!(
        delta.get("Com_truncate").copied().unwrap_or(0) >= 1,
        "{delta:?}"
    );

    let no_probes: Vec<&str> = args.iter().copied().chain(["--no-probes"]).collect();
    let (plain, delta) = run_counted(&server, &tmp, "own_ledger_b", &no_probes, "");
    assert_workload_and_own(&plain, &delta);
    assert_no_probes(&plain, &delta);

    // TLS PREFERRED on a server without TLS: the first login of each connection family
    // asks for TLS, is refused, and logs in plain; the refused logins are connections the
    // server counted, and so does the record.
    let (record, delta) = run_counted(
        &server,
        &tmp,
        "own_ledger_c",
        &no_probes,
        "?ssl-mode=PREFERRED",
    );
    assert_workload_and_own(&record, &delta);
    let logins =
        |record: &serde_json::Value| count(&record["own_statements"]["setup"]["connections"]);
    assert!(logins(&record) > logins(&plain), "{record}\n{plain}");
    common::assert_nothing_left(&tmp);
}

/// A Lua script's commands (`prepare`, the `--check` command, `cleanup`) are its set-up:
/// each connection they open and each statement they send is counted, and the server saw
/// exactly the script's events' statements (text, `con:query`) and connections beside
/// them, with and without `--no-probes`.
#[test]
fn a_lua_script_s_commands_are_counted_with_and_without_probes() {
    common::require_mariadb();
    let server = ThrowawayServer::start(&ServerOptions::default()).unwrap();
    let tmp = common::private_tmpdir("own-statements-lua");
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/lua/transfer.lua");
    let script = script.to_str().unwrap();
    let args = [
        "run",
        script,
        "--accounts=50",
        "--threads=2",
        "--events=200",
        "--check",
        "check",
    ];

    let (record, delta) = run_counted(&server, &tmp, "own_lua_a", &args, "");
    assert_workload_and_own(&record, &delta);
    // prepare made the table and filled it, check read it, cleanup dropped it: all counted
    // as the set-up's, on connections of their own.
    for made in ["Com_create_table", "Com_drop_table", "Com_insert"] {
        assert!(
            delta.get(made).copied().unwrap_or(0) >= 1,
            "{made}: {delta:?}"
        );
    }
    let setup = &record["own_statements"]["setup"];
    assert!(count(&setup["connections"]) >= 3, "{setup}");

    let no_probes: Vec<&str> = args.iter().copied().chain(["--no-probes"]).collect();
    let (record, delta) = run_counted(&server, &tmp, "own_lua_b", &no_probes, "");
    assert_workload_and_own(&record, &delta);
    assert_no_probes(&record, &delta);
    common::assert_nothing_left(&tmp);
}
