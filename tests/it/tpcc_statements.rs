//! TPC-C's New-Orders speak as their reference does (issue 66), read from the server
//! itself: against a server of the test's own (`--dsn`, `--no-probes`), New-Orders alone
//! (`--mix 1,0,0,0,0`), the server's `Com_insert` and `Com_select` moved by one statement
//! per order line and step, as sysbench-tpcc sends them (the default, `per-line`), and by
//! one per order for its lines with `--tpcc-statements batched` (go-tpc's IN lists and
//! multi-row INSERT). The counts per kind come from the record; the server's counters say
//! the statements reached it as such.

use crate::common;
use crate::own_statements::{moved, reader};

use enginebench::measure::StatusSnapshot;
use enginebench::server::{ServerOptions, ThrowawayServer};
use serde_json::Value;
use std::collections::BTreeMap;

/// New-Orders each run sends.
const EVENTS: u64 = 120;

/// Statement `kind`'s count in the run's one cell.
fn count(record: &Value, kind: &str) -> i64 {
    record["cells"][0]["queries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["name"] == kind)
        .map_or(0, |q| q["count"].as_i64().unwrap())
}

/// `run tpcc` of New-Orders alone on `server` with `extra` flags, in `database`: its
/// record, the server's counters moved over the whole run, and the cell's own window.
fn new_orders(
    server: &ThrowawayServer,
    tmp: &std::path::Path,
    database: &str,
    extra: &[&str],
) -> (Value, BTreeMap<String, i64>) {
    let dsn = format!("mysql://root@127.0.0.1:{}", server.port());
    let events = EVENTS.to_string();
    let mut args = vec![
        "run",
        "tpcc",
        "--warehouses=1",
        "--mix=1,0,0,0,0",
        "--threads=1",
        "--repeat=1",
        "--events",
        &events,
        "--no-probes",
        "--no-crash",
        "--dsn",
        &dsn,
        "--database",
        database,
    ];
    args.extend_from_slice(extra);
    let mut reader = reader(server);
    let before = StatusSnapshot::take(&mut reader).unwrap();
    let (output, record) = common::run_recorded(tmp, &args);
    let after = StatusSnapshot::take(&mut reader).unwrap();
    common::assert_success(&output);
    assert_eq!(record["status"], "completed", "{}", record["error"]);
    assert_eq!(count(&record, "New-Order"), EVENTS as i64, "{record}");
    (record, moved(&before, &after))
}

/// The cell's window of the server's counter `name` (its own SELECTs, the consistency
/// check's and the tables' size, fall outside it).
/// The server's `Com_select` moved by the workload's `expected` SELECTs and the few of the
/// set-up's own (checking the loaded tables; `--no-probes` keeps the record free of the
/// server's counters, so they are read here from outside).
fn assert_selects(delta: &BTreeMap<String, i64>, expected: i64) {
    let selects = delta.get("Com_select").copied().unwrap_or(0);
    assert!(
        (expected..=expected + 50).contains(&selects),
        "Com_select {selects}, the workload's {expected}: {delta:?}"
    );
}

#[test]
fn new_orders_send_a_statement_per_line_as_sysbench_tpcc_does_and_batched_on_demand() {
    common::require_mariadb();
    let server = ThrowawayServer::start(&ServerOptions::default()).unwrap();
    let tmp = common::private_tmpdir("tpcc-statements");

    let (record, delta) = new_orders(&server, &tmp, "tpcc_per_line", &[]);
    assert_eq!(record["parameters"]["statements"], "per-line", "{record}");
    let orders = count(&record, "New-Order");
    let aborts = count(&record, "rollback");
    let lines = count(&record, "no_update_stock");
    eprintln!("per-line: {orders} New-Orders, {aborts} aborted, {lines} lines; server {delta:?}");
    for batched in ["no_get_items", "no_get_stocks", "no_insert_order_lines"] {
        assert_eq!(count(&record, batched), 0, "{batched}");
    }
    // Each line: its item read, its stock row locked and updated, its line inserted; an
    // aborted order's unused item is read and found missing.
    assert!(lines >= 5 * (orders - aborts), "{lines} lines");
    assert_eq!(count(&record, "no_get_stock"), lines);
    assert_eq!(count(&record, "no_insert_order_line"), lines);
    assert_eq!(count(&record, "no_get_item"), lines + aborts);
    // The server saw them one by one: the order and its new_order row, then a row per
    // line; two SELECTs per order (customer and warehouse, district) and two per line.
    // The load is LOAD DATA, so every INSERT the server counted is the workload's.
    assert_eq!(
        delta.get("Com_insert").copied().unwrap_or(0),
        2 * orders + lines,
        "{delta:?}"
    );
    assert_selects(&delta, 2 * orders + 2 * lines + aborts);

    let (record, delta) = new_orders(
        &server,
        &tmp,
        "tpcc_batched",
        &["--tpcc-statements", "batched"],
    );
    assert_eq!(record["parameters"]["statements"], "batched", "{record}");
    let orders = count(&record, "New-Order");
    let aborts = count(&record, "rollback");
    eprintln!("batched: {orders} New-Orders, {aborts} aborted; server {delta:?}");
    for per_line in ["no_get_item", "no_get_stock", "no_insert_order_line"] {
        assert_eq!(count(&record, per_line), 0, "{per_line}");
    }
    // One INSERT for all of an order's lines (none for an aborted order, which stops at
    // its items), one SELECT for its items and one for their stock rows.
    assert_eq!(
        delta.get("Com_insert").copied().unwrap_or(0),
        3 * orders - aborts,
        "{delta:?}"
    );
    assert_selects(&delta, 4 * orders - aborts);
    common::assert_nothing_left(&tmp);
}
