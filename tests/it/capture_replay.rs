//! Your own workload end to end: a known workload (prepared statements, a transaction, text
//! queries, an error) driven through the capture proxy by a real client, the capture read
//! back, replayed on two engines, and checked per statement digest against the capture and
//! the replay server's own counters; a changed snapshot shows as mismatches on exactly the
//! digests that read the changed rows.

use crate::common;

use std::path::Path;

use enginebench::capture::{self, CommandKind};
use enginebench::results::read_record;
use enginebench::server::{ServerOptions, ThrowawayServer};
use mysql::prelude::Queryable;

const LOOKUP: &str = "SELECT name, price FROM items WHERE id = ?";
const ORDER: &str = "INSERT INTO orders (item, qty) VALUES (?, ?)";

/// The application: two connections, each doing its own work.
fn drive(port: u16) {
    let opts = move |db: &str| {
        mysql::OptsBuilder::new()
            .ip_or_hostname(Some("127.0.0.1"))
            .tcp_port(port)
            .user(Some("root"))
            .db_name(Some(db))
            // The mysql crate would otherwise switch to the server's socket, past the proxy.
            .prefer_socket(false)
    };
    let reader = std::thread::spawn(move || {
        let mut conn = mysql::Conn::new(opts("shop")).unwrap();
        let lookup = conn.prep(LOOKUP).unwrap();
        for id in 1..=20u32 {
            let row: Option<(String, i32)> = conn.exec_first(&lookup, (id,)).unwrap();
            assert!(row.is_some());
        }
        let _: Option<u64> = conn
            .query_first("SELECT COUNT(*) FROM items WHERE price > 50")
            .unwrap();
        conn.query_drop("BEGIN").unwrap();
        let order = conn.prep(ORDER).unwrap();
        for item in 1..=5u32 {
            conn.exec_drop(&order, (item, item * 2)).unwrap();
        }
        conn.query_drop("COMMIT").unwrap();
        assert!(conn.query_drop("SELECT nosuchcolumn FROM items").is_err());
    });
    let writer = std::thread::spawn(move || {
        let mut conn = mysql::Conn::new(opts("shop")).unwrap();
        for _ in 0..10 {
            conn.query_drop("UPDATE items SET price = price + 1 WHERE id = 7")
                .unwrap();
        }
    });
    reader.join().unwrap();
    writer.join().unwrap();
}

fn replay(tmp: &Path, file: &Path, json: &Path) -> std::process::Output {
    common::enginebench(tmp)
        .args(["replay"])
        .arg(file)
        .args([
            "--engines",
            "innodb,myisam",
            "--speed",
            "max",
            "--repeat",
            "1",
            "--no-db",
            "--json",
        ])
        .arg(json)
        .output()
        .unwrap()
}

#[test]
// Long by design: one scenario, step by step: its assertions read in the order things happen.
#[allow(clippy::too_many_lines)]
fn a_captured_workload_replays_with_the_same_counts_on_every_engine() {
    common::require_mariadb();
    let tmp = common::private_tmpdir("capture");
    let server = ThrowawayServer::start(&ServerOptions::default()).unwrap();
    let mut root = server.connection_spec(None).connect().unwrap();
    root.query_drop("CREATE DATABASE shop").unwrap();
    root.query_drop(
        "CREATE TABLE shop.items (id INT PRIMARY KEY, name VARCHAR(20) NOT NULL, price INT NOT NULL) ENGINE=InnoDB",
    )
    .unwrap();
    root.query_drop(
        "CREATE TABLE shop.orders (id INT AUTO_INCREMENT PRIMARY KEY, item INT NOT NULL, qty INT NOT NULL) ENGINE=InnoDB",
    )
    .unwrap();
    for id in 1..=100 {
        root.query_drop(format!(
            "INSERT INTO shop.items VALUES ({id}, 'item {id}', {})",
            id % 90
        ))
        .unwrap();
    }

    let file = tmp.with_extension("ebcap");
    let mut command = common::enginebench(&tmp);
    command
        .arg("capture")
        .arg("--to")
        .arg(format!("mysql://root@127.0.0.1:{}/shop", server.port()))
        .arg("--out")
        .arg(&file);
    let (mut proxy, port) = common::start_capture_proxy(command);
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        drive(port);
        let _ = done.send(());
    });
    if finished
        .recv_timeout(std::time::Duration::from_secs(60))
        .is_err()
    {
        let _ = proxy.child.kill();
        let (_, _, stderr) = proxy.finish();
        panic!("the workload did not finish through the proxy: {stderr}");
    }
    // SAFETY: signalling the child we spawned.
    unsafe {
        libc::kill(proxy.child.id() as libc::pid_t, libc::SIGINT);
    }
    let (status, _, stderr) = proxy.finish();
    assert!(status.success(), "{stderr}");
    assert!(stderr.contains("from 2 connection(s)"), "{stderr}");

    // The capture holds the snapshot and every command with its answer.
    let capture = capture::read(&file).unwrap();
    assert!(capture.warnings.is_empty(), "{:?}", capture.warnings);
    assert_eq!(capture.tables.len(), 2);
    let rows: usize = capture.rows.iter().map(|r| r.rows.len()).sum();
    assert_eq!(rows, 100);
    let count = |kind: CommandKind, sql: &str| {
        capture
            .commands
            .iter()
            .filter(|c| c.kind == kind && c.sql.as_deref() == Some(sql))
            .count()
    };
    assert_eq!(count(CommandKind::Prepare, LOOKUP), 1);
    assert_eq!(count(CommandKind::Execute, LOOKUP), 20);
    assert_eq!(count(CommandKind::Execute, ORDER), 5);
    let executes: Vec<_> = capture
        .commands
        .iter()
        .filter(|c| c.kind == CommandKind::Execute && c.sql.as_deref() == Some(ORDER))
        .collect();
    assert_eq!(
        executes[2].params,
        vec![
            capture::format::Value::Int(3),
            capture::format::Value::Int(6)
        ]
    );
    assert!(capture
        .commands
        .iter()
        .filter(|c| c.kind == CommandKind::Execute && c.sql.as_deref() == Some(LOOKUP))
        .all(|c| c.response.as_ref().unwrap().rows == 1));
    let failed = capture
        .commands
        .iter()
        .find(|c| c.sql.as_deref() == Some("SELECT nosuchcolumn FROM items"))
        .unwrap();
    assert_eq!(failed.response.as_ref().unwrap().error, Some(1054));
    let updates = capture
        .commands
        .iter()
        .filter(|c| c.sql.as_deref() == Some("UPDATE items SET price = price + 1 WHERE id = 7"))
        .count();
    assert_eq!(updates, 10);
    let script = capture::ReplayScript::of(&capture);

    // Replayed on two engines: per digest the captured counts, the server's counters agree,
    // and nothing differs from what was captured.
    let json = tmp.with_extension("replay.json");
    let output = replay(&tmp, &file, &json);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("Per statement digest"), "{stdout}");
    let record = read_record(&json).unwrap();
    assert_eq!(record.cells.len(), 2);
    for cell in &record.cells {
        assert_eq!(cell.threads as usize, script.connections.len());
        for (kind, captured) in script.kinds.iter().zip(&script.captured) {
            let query = cell.queries.iter().find(|q| &q.name == kind).unwrap();
            assert_eq!(
                query.count + query.failed,
                captured.count,
                "{} {kind}",
                cell.engine
            );
        }
        assert!(
            cell.mismatches.is_empty(),
            "{}: {:?}",
            cell.engine,
            cell.mismatches
        );
        let delta = |name: &str| cell.server_status_delta.get(name).copied().unwrap_or(0);
        assert_eq!(delta("Com_stmt_execute"), 25, "{}", cell.engine);
        assert_eq!(delta("Com_stmt_prepare"), 2, "{}", cell.engine);
        assert_eq!(delta("Com_update"), 10, "{}", cell.engine);
        assert_eq!(delta("Com_insert"), 5, "{}", cell.engine);
        assert_eq!(delta("Com_commit"), 1, "{}", cell.engine);
    }

    // The same capture with items 11..100 gone from the snapshot: the lookups of ids
    // 11..20 find nothing, and only their digest reports mismatches.
    let text = std::fs::read_to_string(&file).unwrap();
    let changed: Vec<String> = text
        .lines()
        .map(|line| {
            let mut value: serde_json::Value = serde_json::from_str(line).unwrap();
            if value["t"] == "rows" && value["table"] == "items" {
                let rows = value["rows"].as_array().unwrap().clone();
                let kept: Vec<serde_json::Value> = rows
                    .into_iter()
                    .filter(|row| row[0].as_i64().unwrap() <= 10)
                    .collect();
                value["rows"] = serde_json::Value::Array(kept);
            }
            value.to_string()
        })
        .collect();
    let changed_file = tmp.with_extension("changed.ebcap");
    std::fs::write(&changed_file, changed.join("\n") + "\n").unwrap();
    let changed_json = tmp.with_extension("changed.json");
    let output = replay(&tmp, &changed_file, &changed_json);
    assert!(output.status.success());
    let record = read_record(&changed_json).unwrap();
    let lookup = capture::digest(LOOKUP);
    for cell in &record.cells {
        let names: Vec<&str> = cell.mismatches.iter().map(|m| m.name.as_str()).collect();
        assert_eq!(names, vec![lookup.as_str()], "{}", cell.engine);
        assert_eq!(cell.mismatches[0].count, 10);
        assert!(
            cell.mismatches[0]
                .example
                .contains("captured 1 row(s), replayed 0"),
            "{}",
            cell.mismatches[0].example
        );
    }

    // Replayed onto a server that still holds the captured database (a staging copy of
    // production): `--database` maps the captured `shop` to `shopcopy`, where the snapshot
    // loads and the connections go; `shop` itself is left as it was.
    let orders_before: u64 = root
        .query_first("SELECT COUNT(*) FROM shop.orders")
        .unwrap()
        .unwrap();
    let price_before: i64 = root
        .query_first("SELECT price FROM shop.items WHERE id = 7")
        .unwrap()
        .unwrap();
    let mapped_json = tmp.with_extension("mapped.json");
    let output = common::enginebench(&tmp)
        .arg("replay")
        .arg(&file)
        .args([
            "--speed",
            "max",
            "--no-db",
            "--database",
            "shopcopy",
            "--dsn",
        ])
        .arg(format!("mysql://root@127.0.0.1:{}", server.port()))
        .arg("--json")
        .arg(&mapped_json)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(
        stderr.contains("the captured database shop is replayed as shopcopy"),
        "{stderr}"
    );
    let record = read_record(&mapped_json).unwrap();
    assert_eq!(record.cells.len(), 1);
    let cell = &record.cells[0];
    assert!(cell.mismatches.is_empty(), "{:?}", cell.mismatches);
    assert_eq!(cell.server_status_delta.get("Com_insert").copied(), Some(5));
    // The lookups found their rows (no mismatch) and the orders were inserted, but not in
    // shop: they went to shopcopy, whose tables the run dropped when it ended.
    let copy_tables: u64 = root
        .query_first(
            "SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'shopcopy'",
        )
        .unwrap()
        .unwrap();
    assert_eq!(
        copy_tables, 0,
        "the run's tables in shopcopy are dropped at its end"
    );
    let orders_after: u64 = root
        .query_first("SELECT COUNT(*) FROM shop.orders")
        .unwrap()
        .unwrap();
    assert_eq!(orders_after, orders_before, "shop was left alone");
    let price_after: i64 = root
        .query_first("SELECT price FROM shop.items WHERE id = 7")
        .unwrap()
        .unwrap();
    assert_eq!(price_after, price_before, "shop was left alone");
    root.query_drop("DROP DATABASE shopcopy").unwrap();

    // Capacity under a goal, replayed: as fast as it goes, then at offered rates (each
    // connection its share, in its captured order), each probe a cell of the search.
    let slo_json = tmp.with_extension("slo.json");
    let output = common::enginebench(&tmp)
        .arg("replay")
        .arg(&file)
        .args([
            "--slo",
            "p50<1s",
            "--slo-precision",
            "50%",
            "--no-db",
            "--json",
        ])
        .arg(&slo_json)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(stderr.contains("capacity search: "), "{stderr}");
    let record = read_record(&slo_json).unwrap();
    let probes: Vec<_> = record
        .cells
        .iter()
        .filter_map(|c| c.probe.as_ref())
        .collect();
    assert!(
        probes.len() >= 2,
        "a closed-loop probe and open-loop ones: {probes:?}"
    );
    assert_eq!(probes[0].target_per_s, None);
    assert!(
        probes[1..].iter().all(|p| p.target_per_s.is_some()),
        "{probes:?}"
    );
    assert!(probes.last().unwrap().search_ended.is_some(), "{probes:?}");
    let _ = std::fs::remove_file(&slo_json);

    // The capture as a scenario file: it runs like any study, at a thread count of one's own.
    let output = common::enginebench(&tmp)
        .args(["capture", "summarize"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(output.status.success());
    let scenario = tmp.with_extension("toml");
    std::fs::write(&scenario, &output.stdout).unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains(LOOKUP), "{text}");
    assert!(text.contains("weight = 20"), "{text}");
    assert!(text.contains("failed every time (error 1054)"), "{text}");
    let run = common::enginebench(&tmp)
        .arg("run")
        .arg(&scenario)
        .args(["--threads", "3", "--time", "1s", "--repeat", "1", "--no-db"])
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );

    drop(root);
    drop(server);
    for path in [
        &file,
        &json,
        &changed_file,
        &changed_json,
        &mapped_json,
        &scenario,
    ] {
        let _ = std::fs::remove_file(path);
    }
    common::assert_nothing_left(&tmp);
}

#[test]
fn broken_capture_files_are_refused_with_the_cause() {
    let tmp = common::private_tmpdir("capture-broken");
    let file = tmp.with_extension("broken.ebcap");
    let refused = |text: &str, expected: &str| {
        std::fs::write(&file, text).unwrap();
        let output = common::enginebench(&tmp)
            .arg("replay")
            .arg(&file)
            .args(["--no-db", "--dry-run"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success());
        assert!(stderr.contains(expected), "{expected:?} not in {stderr}");
        assert!(!stderr.contains("panicked"), "{stderr}");
    };
    refused("", "is empty");
    refused("not json\n", "is not an enginebench capture");
    let header = r#"{"t":"header","format":"enginebench-capture","version":1,"source":"test","database":"shop","server_version":null,"started_unix_us":0}"#;
    refused(&format!("{header}\n"), "holds no command to replay");
    refused(
        &format!("{header}\n{{\"t\":\"command\",\"connection\":1}}\n{header}\n"),
        "line 2",
    );
    let _ = std::fs::remove_file(&file);
    common::assert_nothing_left(&tmp);
}

/// An engine that cannot hold a captured table is named with the server's reason; the
/// other engines replay.
#[test]
fn an_engine_that_cannot_hold_a_table_is_named_and_the_others_replay() {
    common::require_mariadb();
    let tmp = common::private_tmpdir("capture-engine");
    let file = tmp.with_extension("text.ebcap");
    let json = tmp.with_extension("text.json");
    std::fs::write(
        &file,
        concat!(
            r#"{"t":"header","format":"enginebench-capture","version":1,"source":"by hand","database":"shop","server_version":null,"started_unix_us":0}"#, "\n",
            r#"{"t":"table","name":"notes","create":"CREATE TABLE `notes` (`id` int NOT NULL PRIMARY KEY, `body` text) ENGINE=InnoDB"}"#, "\n",
            r#"{"t":"rows","table":"notes","columns":["id","body"],"rows":[[1,"hello"],[2,"world"]]}"#, "\n",
            r#"{"t":"command","connection":1,"start_us":0,"end_us":10,"kind":"connect","database":"shop","response":{}}"#, "\n",
            r#"{"t":"command","connection":1,"start_us":10,"end_us":20,"kind":"query","sql":"SELECT body FROM notes WHERE id = 1","response":{"rows":1}}"#, "\n",
            r#"{"t":"end","commands":2,"connections":1,"duration_us":20}"#, "\n",
        ),
    )
    .unwrap();
    let output = common::enginebench(&tmp)
        .arg("replay")
        .arg(&file)
        .args([
            "--engines",
            "memory,innodb",
            "--repeat",
            "1",
            "--no-db",
            "--json",
        ])
        .arg(&json)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("doesn't support BLOB/TEXT"), "{stderr}");
    let record = read_record(&json).unwrap();
    let memory = &record.cells[0];
    assert_eq!(memory.outcome, enginebench::results::OutcomeRecord::Failed);
    assert!(memory
        .error
        .as_ref()
        .unwrap()
        .contains("table notes cannot be created"));
    let innodb = &record.cells[1];
    assert_eq!(
        innodb.outcome,
        enginebench::results::OutcomeRecord::Completed
    );
    assert!(innodb.mismatches.is_empty());
    assert_eq!(innodb.queries[0].count, 1);
    for path in [&file, &json] {
        let _ = std::fs::remove_file(path);
    }
    common::assert_nothing_left(&tmp);
}
