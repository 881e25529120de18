//! TPC-C on a real throwaway server: one warehouse loaded on InnoDB, RocksDB and MyISAM,
//! the standard mix run, and what the kind promises checked: the consistency conditions
//! hold on the transactional engines, MyISAM (whose ROLLBACK changes nothing) is marked not
//! comparable with its count of rollbacks not honoured in the record and every report,
//! every transaction counted is a COMMIT or ROLLBACK the server saw, and about 1% of
//! New-Orders are user aborts.

use crate::common;

use serde_json::Value;

fn count(cell: &Value, kind: &str) -> u64 {
    cell["queries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["name"] == kind)
        .map_or(0, |q| q["count"].as_u64().unwrap())
}

#[test]
// Long by design: one scenario, step by step: its assertions read in the order things happen.
#[allow(clippy::too_many_lines)]
fn tpcc_keeps_its_books_on_transactional_engines_and_myisam_is_marked_not_comparable() {
    common::require_mariadb();
    let tmpdir = common::private_tmpdir("tpcc");
    let json = tmpdir.join("tpcc.json");
    // One thread and an event count: each engine runs the same transactions, drawn from
    // the same seed, so the user aborts among them are the same number on every engine.
    let output = common::enginebench(&tmpdir)
        .args([
            "run",
            "tpcc",
            "--warehouses",
            "1",
            "--engines",
            "innodb,rocksdb,myisam",
            "--threads",
            "1",
            "--events",
            "1500",
            "--repeat",
            "1",
            // Its books, not its storage: on tmpfs, a commit waits for no disk.
            "--tmpfs",
            "--no-db",
            "--format",
            "markdown",
            "--json",
        ])
        .arg(&json)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let record: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(record["kind"], "tpcc");

    // Every table was loaded on every engine, with its specified row count.
    let loads = record["loads"].as_array().unwrap();
    for (table, rows) in [
        ("warehouse", 1),
        ("district", 10),
        ("customer", 30_000),
        ("stock", 100_000),
    ] {
        for engine in ["innodb", "rocksdb", "myisam"] {
            let load = loads
                .iter()
                .find(|l| l["table"] == table && l["engine"] == engine)
                .unwrap_or_else(|| panic!("no load of {table} on {engine}"));
            assert_eq!(load["outcome"]["rows"], rows, "{table} on {engine}");
        }
    }

    let cells = record["cells"].as_array().unwrap();
    // As sysbench-tpcc sends them: text.
    common::assert_protocol(cells, "text", "text");
    assert_eq!(cells.len(), 3);
    for cell in cells {
        let engine = cell["engine"].as_str().unwrap();
        assert_eq!(cell["outcome"], "completed", "{engine}: {cell:#}");
        let events = cell["events"].as_u64().unwrap();
        let failed = cell["failed_events"].as_u64().unwrap();
        assert_eq!(events, 1500, "{engine}");
        // Each transaction ends in one COMMIT or ROLLBACK the server counted.
        let delta = &cell["server_status_delta"];
        let commits = delta["Com_commit"].as_u64().unwrap();
        let rollbacks = delta["Com_rollback"].as_u64().unwrap();
        assert_eq!(events + failed, commits + rollbacks, "{engine}");
        let committed: u64 = [
            "no_commit",
            "p_commit",
            "os_commit",
            "d_commit",
            "sl_commit",
        ]
        .iter()
        .map(|kind| count(cell, kind))
        .sum();
        assert_eq!(committed, commits, "{engine}");
        // Each transaction type is a kind of its own, timed whole: together they are the
        // cell's transactions.
        let types = [
            "New-Order",
            "Payment",
            "Order-Status",
            "Delivery",
            "Stock-Level",
        ];
        let typed: u64 = types.iter().map(|kind| count(cell, kind)).sum();
        assert_eq!(typed, events, "{engine}");
        assert_eq!(
            count(cell, "New-Order"),
            count(cell, "no_commit") + count(cell, "rollback"),
            "{engine}"
        );
        // A New-Order sends its lines one by one, as sysbench-tpcc does: each line's item
        // read, and (unless it is the unused item, which rolls the order back) its stock
        // row locked and updated and its line inserted.
        let stock_updates = count(cell, "no_update_stock");
        assert!(
            (5 * count(cell, "no_commit")..=15 * count(cell, "New-Order")).contains(&stock_updates),
            "{engine}: {stock_updates} stock updates"
        );
        for per_line in ["no_get_stock", "no_insert_order_line"] {
            assert_eq!(count(cell, per_line), stock_updates, "{engine}: {per_line}");
        }
        assert_eq!(
            count(cell, "no_get_item"),
            stock_updates + count(cell, "rollback"),
            "{engine}"
        );
        let new_orders = count(cell, "no_commit") + count(cell, "rollback");
        // The mix: New-Order and Payment dominate, the others about 4% each.
        assert!(
            new_orders > 550 && count(cell, "p_commit") > 550,
            "{engine}"
        );
    }
    // About 1% of New-Orders roll back on the unused item (over the run's ~2,000, whose
    // draws the seed fixes).
    let user_aborts: u64 = cells.iter().map(|c| count(c, "rollback")).sum();
    let new_orders: u64 = cells.iter().map(|c| count(c, "no_commit")).sum::<u64>() + user_aborts;
    let share = user_aborts as f64 / new_orders as f64;
    assert!(
        (0.005..=0.015).contains(&share),
        "{user_aborts} of {new_orders} New-Orders rolled back"
    );

    // The consistency checks: kept on InnoDB and RocksDB, broken on MyISAM.
    let checks: Vec<&Value> = record["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["name"] == "consistency")
        .collect();
    assert_eq!(checks.len(), 3);
    for check in &checks {
        let engine = check["engine"].as_str().unwrap();
        if engine == "myisam" {
            assert!(check["error"].is_string(), "{check:#}");
        } else {
            assert!(check["error"].is_null(), "{engine}: {check:#}");
            assert!(
                check["detail"]
                    .as_str()
                    .unwrap()
                    .starts_with("consistency conditions 1-4 hold"),
                "{check:#}"
            );
        }
    }
    let marked = record["not_comparable"].as_array().unwrap();
    assert_eq!(marked.len(), 1, "{marked:#?}");
    assert_eq!(marked[0]["engine"], "myisam");
    let myisam = cells.iter().find(|c| c["engine"] == "myisam").unwrap();
    let not_honoured = format!("{} ROLLBACK(s) not honoured", count(myisam, "rollback"));
    assert!(
        marked[0]["why"]
            .as_str()
            .unwrap()
            .starts_with(&not_honoured),
        "{marked:#?}"
    );

    // Every report says so above its figures, and its verdict does not rank it.
    let warned = stdout
        .find("NOT COMPARABLE: a check found these set-ups did not do the work the others did")
        .expect("the warning");
    assert!(warned < stdout.find("TPC-C per cell").unwrap(), "{stdout}");
    // What still differs from the reference, sysbench-tpcc, is said with the figures.
    assert!(
        stdout.contains("Unlike sysbench-tpcc: the secondary indexes are built after the rows"),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!(
            "- MyISAM in tpcc at 1 thread: not comparable: {not_honoured}"
        )),
        "{stdout}"
    );
    // NOPM and TPM per minute of the measured phase's wall time (cells of an event count
    // have no set duration).
    let innodb = cells.iter().find(|c| c["engine"] == "innodb").unwrap();
    let minutes = innodb["wall_ms"].as_f64().unwrap() / 60_000.0;
    let nopm = (count(innodb, "no_commit") as f64 / minutes).round();
    // TPC-C's own table (the durability table above it has an InnoDB row too).
    let row: Vec<&str> = stdout[stdout.find("TPC-C per cell").unwrap()..]
        .lines()
        .find(|line| line.starts_with("| InnoDB "))
        .expect("InnoDB's row")
        .split('|')
        .map(str::trim)
        .collect();
    assert_eq!(row[4], format!("{nopm:.0}"), "{stdout}");
    assert!(
        stdout.contains(&format!("- MyISAM (after cell 3): {not_honoured}")),
        "{stdout}"
    );
    for format in ["sysbench", "html", "csv"] {
        let report = common::enginebench(&tmpdir)
            .args(["report", "--format", format])
            .arg(&json)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&report.stdout);
        assert!(report.status.success(), "{format}");
        assert!(text.contains(&not_honoured), "{format}: {text}");
    }
    std::fs::remove_file(&json).unwrap();
    common::assert_nothing_left(&tmpdir);
}
