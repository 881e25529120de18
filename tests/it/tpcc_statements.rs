//! TPC-C's statements speak as their reference does (issue 66), read from the server
//! itself: against a server of the test's own (`--dsn`, `--no-probes`), one transaction
//! type alone (`--mix`). New-Orders move the server's `Com_insert` and `Com_select` by one
//! statement per order line and step, as sysbench-tpcc sends them (the default,
//! `per-line`), and by one per order for its lines with `--tpcc-statements batched`
//! (go-tpc's IN lists and multi-row INSERT); Order-Status reads all of the customer's
//! orders, as sysbench-tpcc's does (`Handler_read_prev`). The counts per kind come from
//! the record; the server's counters say the statements reached it as such.

use crate::common;
use crate::common::server_counters::run_counted;

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

/// `run tpcc` of `EVENTS` transactions of `mix` alone on `server` with `extra` flags, in
/// `database`: its record, and the server's counters moved over the whole run.
fn transactions(
    server: &ThrowawayServer,
    tmp: &std::path::Path,
    (database, mix): (&str, &str),
    extra: &[&str],
) -> (Value, BTreeMap<String, i64>) {
    let events = EVENTS.to_string();
    let mut args = vec![
        "run",
        "tpcc",
        "--warehouses=1",
        "--mix",
        mix,
        "--threads=1",
        "--events",
        &events,
        "--no-probes",
        "--no-crash",
    ];
    args.extend_from_slice(extra);
    run_counted(server, tmp, database, &args, "")
}

/// New-Orders alone (see [`transactions`]).
fn new_orders(
    server: &ThrowawayServer,
    tmp: &std::path::Path,
    database: &str,
    extra: &[&str],
) -> (Value, BTreeMap<String, i64>) {
    let (record, delta) = transactions(server, tmp, (database, "1,0,0,0,0"), extra);
    assert_eq!(count(&record, "New-Order"), EVENTS as i64, "{record}");
    (record, delta)
}

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

#[test]
fn order_status_reads_every_order_of_the_customer_s_as_sysbench_tpcc_does() {
    common::require_mariadb();
    let server = ThrowawayServer::start(&ServerOptions::default()).unwrap();
    let tmp = common::private_tmpdir("tpcc-order-status");

    let (record, delta) = transactions(&server, &tmp, ("tpcc_order_status", "0,0,1,0,0"), &[]);
    let statuses = count(&record, "Order-Status");
    let by_name = count(&record, "os_customers_by_name");
    let by_id = count(&record, "os_get_customer");
    let last_orders = count(&record, "os_get_last_order");
    eprintln!("{statuses} Order-Status, {by_name} by name, {by_id} by id; server {delta:?}");
    assert_eq!(statuses, EVENTS as i64, "{record}");
    // Every last name of the run's is loaded in every district, and every customer placed
    // an order at load: a customer is found each time, then its last order and its lines.
    assert_eq!(by_name + by_id, statuses);
    assert_eq!(count(&record, "customers_count_by_name"), by_name);
    assert_eq!(last_orders, statuses);
    assert_eq!(count(&record, "os_get_order_lines"), last_orders);
    // The server saw them one by one: by name the names counted, then read with the
    // customer's figures; by id the customer read; then the orders and the lines.
    assert_selects(&delta, 2 * by_name + by_id + 2 * last_orders);
    // No LIMIT on the customer's orders, newest first, as in sysbench-tpcc and the
    // specification's sample code: past the newest the engine reads on backwards to the
    // end of the customer's (with LIMIT 1 it stops at the newest and reads none back).
    let read_back = delta.get("Handler_read_prev").copied().unwrap_or(0);
    assert!(
        read_back >= last_orders,
        "Handler_read_prev {read_back}: {delta:?}"
    );
    common::assert_nothing_left(&tmp);
}
