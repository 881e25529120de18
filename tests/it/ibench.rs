//! The insert benchmark on a real throwaway server: every step on InnoDB and RocksDB (the
//! MyRocks plugin) with two clients, each on its own table, and what the kind promises
//! checked: the steps run in ibench's order, l.i0 loads --rows rows per table, l.x inserts
//! 100 rows and adds the indexes (one ALTER on InnoDB, three on RocksDB), l.i1 and l.i2
//! insert and delete at once on two connections per client, at 50 and 5 rows per
//! statement, never more than iibench.py's 8 rounds apart, every statement counted is one
//! the server counted (Com_insert, Com_delete, Com_select, Com_alter_table), sent as text
//! as iibench.py sends it, the query steps run a closed-loop reader group beside inserters
//! and deleters sending a second's rounds each second, the write debt is reduced before
//! them and each step's size measured, and the report's per-step table says whether the
//! writers held their rate. `--protocol prepared` sends the same statements prepared, and
//! on MyRocks the range queries then stop being index-only (the engine's own counters).
//! Bad choices fail before any server starts.

use crate::common;

use serde_json::Value;

fn count(cell: &Value, kind: &str) -> u64 {
    cell["queries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|q| q["name"] == kind)
        .map(|q| q["count"].as_u64().unwrap() + q["failed"].as_u64().unwrap())
        .sum()
}

fn delta(cell: &Value, name: &str) -> u64 {
    cell["server_status_delta"][name].as_u64().unwrap_or(0)
}

const STEPS: [&str; 10] = [
    "l.i0", "l.x", "l.i1", "l.i2", "qr100", "qp100", "qr500", "qp500", "qr1000", "qp1000",
];
const ROWS: u64 = 20_000;
const CLIENTS: u64 = 2;

/// Each statement the cell counted is one the server executed, kind by kind, as text.
fn check_counts(cell: &Value, step: &str, what: &str) {
    let (inserter, deleter, rows_per_commit) = match step {
        "l.i0" | "l.x" => ("", "", 100),
        "l.i1" => ("inserter/", "deleter/", 50),
        "l.i2" => ("inserter/", "deleter/", 5),
        _ => ("inserter/", "deleter/", 50),
    };
    let inserts = count(cell, &format!("{inserter}insert"));
    let deletes = count(cell, &format!("{deleter}delete"));
    assert_eq!(inserts, delta(cell, "Com_insert"), "{what}: Com_insert");
    assert_eq!(deletes, delta(cell, "Com_delete"), "{what}: Com_delete");
    assert_eq!(delta(cell, "Com_stmt_execute"), 0, "{what}: sent as text");
    assert_eq!(cell["protocol"]["sent"], "text", "{what}");
    assert_eq!(cell["protocol"]["reference"], "text", "{what}");
    let selects = count(cell, &format!("{deleter}get_min"))
        + ["market", "register", "pdc", "point", "get_max"]
            .iter()
            .map(|kind| count(cell, &format!("queries/{kind}")))
            .sum::<u64>();
    assert_eq!(selects, delta(cell, "Com_select"), "{what}: Com_select");
    assert_eq!(
        count(cell, "create_index"),
        delta(cell, "Com_alter_table"),
        "{what}: Com_alter_table"
    );
    match step {
        "l.i0" => {
            // 200 INSERTs of 100 rows per table.
            assert_eq!(inserts, CLIENTS * ROWS / 100, "{what}");
            assert_eq!(delta(cell, "Handler_write"), CLIENTS * ROWS, "{what}");
        }
        "l.x" => {
            let alters = if cell["engine"] == "rocksdb" { 3 } else { 1 };
            assert_eq!(count(cell, "create_index"), CLIENTS * alters, "{what}");
            // iibench.py's l.x inserts 100 rows before its ALTER.
            assert_eq!(inserts, CLIENTS, "{what}");
        }
        _ => {
            assert!(inserts > 0, "{what}: no inserts");
            // The inserter and the deleter of a client are never more than 8 rounds
            // apart: the table stays about the size l.i0 left.
            assert!(
                inserts.abs_diff(deletes) <= 8 * CLIENTS,
                "{what}: {inserts} inserts, {deletes} deletes"
            );
            assert_eq!(
                delta(cell, "Handler_delete"),
                deletes * rows_per_commit,
                "{what}: rows deleted"
            );
        }
    }
}

#[test]
// Long by design: one run, step by step: its assertions read in the order things happen.
#[allow(clippy::too_many_lines)]
fn ibench_runs_every_step_on_innodb_and_rocksdb_and_each_statement_is_one_the_server_counted() {
    common::require_mariadb();
    let tmpdir = common::private_tmpdir("ibench");
    let (output, record) = common::run_recorded(
        &tmpdir,
        &[
            "run",
            "ibench",
            "--engines",
            "innodb,rocksdb",
            "--rows",
            "20000",
            "--time",
            "1s",
            "--threads",
            "2",
            "--no-db",
            "--format",
            "markdown",
        ],
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert_eq!(record["kind"], "ibench");
    assert_eq!(record["parameters"]["rows_per_table"], ROWS);

    // ibench's steps in its order, the engines alternating step by step.
    let cells = record["cells"].as_array().unwrap();
    let order: Vec<(&str, &str)> = cells
        .iter()
        .map(|c| {
            (
                c["variant"].as_str().unwrap(),
                c["engine"].as_str().unwrap(),
            )
        })
        .collect();
    let expected: Vec<(&str, &str)> = STEPS
        .iter()
        .flat_map(|step| [(*step, "innodb"), (*step, "rocksdb")])
        .collect();
    assert_eq!(order, expected);

    for cell in cells {
        let step = cell["variant"].as_str().unwrap();
        let what = format!("{step} on {}", cell["engine"]);
        assert_eq!(cell["outcome"], "completed", "{what}: {cell:#}");
        assert_eq!(cell["failed_events"], 0, "{what}");
        assert_eq!(cell["threads"], CLIENTS, "{what}");
        check_counts(cell, step, &what);
        let groups = cell["groups"].as_array();
        if step.starts_with("l.i") && step != "l.i0" {
            // An inserter and a deleter per client, at once, closed loop.
            let groups = groups.unwrap_or_else(|| panic!("{what}: no groups"));
            let names: Vec<&Value> = groups.iter().map(|g| &g["name"]).collect();
            assert_eq!(names, ["inserter", "deleter"], "{what}");
            assert!(
                groups.iter().all(|g| g["pacing"] == "closed_loop"),
                "{what}"
            );
        }
        if !step.starts_with('q') {
            continue;
        }
        // A closed-loop reader, an inserter and a deleter per client, the writers paced
        // per connection at one event a second: the second's rounds of 50 rows.
        let groups = groups.unwrap_or_else(|| panic!("{what}: no groups"));
        assert_eq!(groups.len(), 3, "{what}");
        assert_eq!(groups[0]["name"], "queries");
        assert_eq!(groups[0]["pacing"], "closed_loop");
        let rows_per_s: u64 = step[2..].parse().unwrap();
        for (group, name) in groups[1..].iter().zip(["inserter", "deleter"]) {
            assert_eq!(group["name"], name);
            assert_eq!(group["pacing"], "rate_per_connection");
            assert_eq!(group["rate_per_s"], 1.0, "{what}");
            // The record says truly how well the writers kept their rate (whether this
            // machine let them is not a test's to say): at most the step's 1 s of events
            // per connection, one more each.
            crate::client_groups::assert_rate_tells_the_truth(
                &group["rate"],
                CLIENTS as f64,
                group["events"].as_u64().unwrap(),
                cell["wall_ms"].as_f64().unwrap(),
                2 * CLIENTS,
                &format!("{what} {name}s"),
            );
        }
        // Each event is the second's rounds, back to back (an event the cell's end cut
        // short may count its statements and not itself, one per connection).
        let (events, rounds) = (
            groups[1]["events"].as_u64().unwrap(),
            rows_per_s.div_ceil(50),
        );
        let inserts = count(cell, "inserter/insert");
        assert!(
            inserts >= events.saturating_sub(CLIENTS) * rounds
                && inserts <= (events + CLIENTS) * rounds,
            "{what}: {inserts} inserts in {events} events of {rounds}"
        );
        assert!(count(cell, "queries/market") + count(cell, "queries/point") > 0);
    }

    // The kind's own steps: tables made, write debt reduced once before the query steps,
    // each step's size measured, per engine.
    let steps = record["steps"].as_array().unwrap();
    let named = |name: &'static str| -> Vec<&Value> {
        steps.iter().filter(|s| s["name"] == name).collect()
    };
    assert_eq!(named("ibench create tables").len(), 2);
    let debt = named("ibench reduce write debt");
    assert_eq!(debt.len(), 2);
    assert!(
        debt.iter()
            .any(|s| s["detail"].as_str().unwrap().contains("memtable flushed")),
        "{debt:?}"
    );
    assert_eq!(named("ibench size").len(), 2 * STEPS.len());

    // What still differs from ibench's own runs is said with the figures.
    assert!(
        stdout.contains("Still unlike ibench's own runs: l.i1 and l.i2 last --time"),
        "{stdout}"
    );
    // The per-step table, with the writers' rate held or not on every query step.
    assert!(stdout.contains("ibench per step"), "{stdout}");
    for step in STEPS {
        for engine in ["InnoDB", "RocksDB"] {
            let line = stdout
                .lines()
                .find(|line| {
                    line.starts_with(&format!("| {step} "))
                        && line.contains(&format!("| {engine} "))
                        && line.contains("|       2 |")
                })
                .unwrap_or_else(|| panic!("no row for {step} on {engine}: {stdout}"));
            if step.starts_with('q') {
                assert!(
                    line.contains("| held: ") || line.contains("| NOT held: "),
                    "{line}"
                );
            }
        }
    }
    common::assert_nothing_left(&tmpdir);
}

#[test]
fn ibench_refuses_bad_rows_an_unknown_step_and_its_own_pacing_before_starting() {
    let tmpdir = common::private_tmpdir("ibench-errors");
    let refused = |args: &[&str]| {
        let output = common::enginebench(&tmpdir)
            .args(["run", "ibench", "--no-db"])
            .args(args)
            .output()
            .unwrap();
        assert!(!output.status.success(), "{args:?}");
        String::from_utf8_lossy(&output.stderr).into_owned()
    };
    let err = refused(&["--rows", "0"]);
    assert!(
        err.contains("Error: --rows 0: give the rows each client's table is loaded with in l.i0, 1 or more (e.g. --rows 200000)"),
        "{err}"
    );
    let err = refused(&["--steps", "l.i1,qr200"]);
    assert!(
        err.contains("Error: --steps qr200: no such ibench step; the steps are l.i0, l.x, l.i1, l.i2, qr100, qp100, qr500, qp500, qr1000, qp1000"),
        "{err}"
    );
    let err = refused(&["--rate", "100"]);
    assert!(err.contains("ibench paces its own steps"), "{err}");
    assert!(!err.contains("starting a throwaway"), "{err}");
    common::assert_nothing_left(&tmpdir);
}

/// qr100 on MyRocks as `protocol` sends it: the cell, and its range queries' engine
/// counters per query (covered secondary-key lookups: read from the index alone; point
/// reads: rows fetched by primary key), with what the report printed.
fn myrocks_range_queries(protocol: &str, rows: &str) -> (Value, f64, f64, String) {
    let tmpdir = common::private_tmpdir(&format!("ibench-protocol-{protocol}"));
    let (output, record) = common::run_recorded(
        &tmpdir,
        &[
            "run",
            "ibench",
            "--engines",
            "rocksdb",
            "--rows",
            rows,
            "--time",
            "3s",
            "--steps",
            "qr100",
            "--protocol",
            protocol,
            "--no-db",
        ],
    );
    common::assert_success(&output);
    let cell = common::cell_where(&record, "variant", "qr100").clone();
    let queries: u64 = ["market", "register", "pdc"]
        .iter()
        .map(|kind| count(&cell, &format!("queries/{kind}")))
        .sum();
    assert!(queries > 0, "{protocol}: no range query ran");
    let per_query = |name: &str| delta(&cell, name) as f64 / queries as f64;
    let covered = per_query("Rocksdb_covered_secondary_key_lookups");
    let point = per_query("Rocksdb_queries_point");
    common::assert_nothing_left(&tmpdir);
    (
        cell,
        covered,
        point,
        String::from_utf8_lossy(&output.stdout).into_owned(),
    )
}

#[test]
fn on_myrocks_range_queries_sent_as_text_read_the_index_alone_and_prepared_read_the_primary_key() {
    common::require_mariadb();
    let (text, covered, point, stdout) = myrocks_range_queries("text", "20000");
    assert_eq!(text["protocol"]["sent"], "text");
    assert_eq!(text["protocol"]["reference"], "text");
    assert_eq!(delta(&text, "Com_stmt_execute"), 0);
    // Each query's 10 rows from the secondary index alone, none by primary key.
    assert!(
        covered >= 5.0 && point < 1.0,
        "text: {covered:.3} covered lookups and {point:.3} point reads per query"
    );
    assert!(!stdout.contains("Statements were sent"), "{stdout}");

    let (prepared, covered, point, stdout) = myrocks_range_queries("prepared", "20000");
    assert_eq!(prepared["protocol"]["sent"], "prepared");
    assert_eq!(prepared["protocol"]["reference"], "text");
    assert!(delta(&prepared, "Com_stmt_execute") > 0);
    // The same queries prepared: each row fetched by its primary key.
    assert!(
        point >= 5.0 && covered < 1.0,
        "prepared: {covered:.3} covered lookups and {point:.3} point reads per query"
    );
    // The report says the run did not send as iibench.py does, where it gives its answer.
    assert!(
        stdout.contains(
            "Statements were sent prepared where the study's reference tool sends them as text"
        ),
        "{stdout}"
    );
}
