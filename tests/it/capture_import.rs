//! Importing a real MariaDB general log (the table and the file) into a capture, and the
//! scenario summarised from it: a known mix of text queries and prepared statements run by
//! one connection comes back command for command, and the scenario has one event per
//! digest with its count as the weight, and prepares on a server. Also: a corrupted log
//! file never panics the import.

use crate::common;

use std::collections::BTreeMap;
use std::path::PathBuf;

use enginebench::capture::digest::{digest, literals};
use enginebench::capture::general_log::{import_file, import_table, TABLE_SOURCE};
use enginebench::capture::summarize::scenario_text;
use enginebench::capture::{read, Capture, Command, CommandKind};
use enginebench::scenario::file::{load_scenario, Phase};
use enginebench::server::{ServerOptions, ThrowawayServer};
use mysql::prelude::Queryable;

const SELECT_IDS: [i64; 6] = [3, 7, 12, 20, 33, 41];
const CATEGORIES: [&str; 4] = ["a", "b", "a", "b"];
const PRICE_IDS: [i64; 5] = [5, 5, 9, 9, 9];
const PREPARED_SELECT: &str = "SELECT price FROM items WHERE id = ?";
const PREPARED_INSERT: &str = "INSERT INTO items (id, name, category, price) VALUES (?, ?, ?, ?)";

/// A server with `shop.items` (50 rows) whose general log goes to the table and to a file
/// in the server's directory, switched on after the set-up.
fn logged_server() -> (ThrowawayServer, PathBuf) {
    common::require_mariadb();
    let server = ThrowawayServer::start(&ServerOptions::default()).unwrap();
    let mut root = server.connection_spec(None).connect().unwrap();
    root.query_drop("CREATE DATABASE shop").unwrap();
    root.query_drop(
        "CREATE TABLE shop.items (id INT NOT NULL PRIMARY KEY, name VARCHAR(20) NOT NULL, \
         category VARCHAR(10) NOT NULL, price INT NOT NULL, KEY (category)) ENGINE=InnoDB",
    )
    .unwrap();
    let values: Vec<String> = (1..=50)
        .map(|i| format!("({i}, 'item{i}', '{}', {})", ["a", "b", "c"][i % 3], i * 10))
        .collect();
    root.query_drop(format!(
        "INSERT INTO shop.items VALUES {}",
        values.join(", ")
    ))
    .unwrap();
    let log = server.root_dir().join("general.log");
    root.query_drop(format!("SET GLOBAL general_log_file = '{}'", log.display()))
        .unwrap();
    root.query_drop("SET GLOBAL log_output = 'TABLE,FILE'")
        .unwrap();
    root.query_drop("SET GLOBAL general_log = ON").unwrap();
    (server, log)
}

/// The known mix, from a connection of its own to `shop`.
fn run_workload(server: &ThrowawayServer) {
    let mut conn = server.connection_spec(Some("shop")).connect().unwrap();
    for id in SELECT_IDS {
        conn.query_drop(format!("SELECT name FROM items WHERE id = {id}"))
            .unwrap();
    }
    for category in CATEGORIES {
        conn.query_drop(format!(
            "UPDATE items SET price = price + 1 WHERE category = '{category}'"
        ))
        .unwrap();
    }
    // The mysql crate prepares each text once and keeps the statement: one Prepare, then
    // Executes.
    for id in PRICE_IDS {
        conn.exec_drop(PREPARED_SELECT, (id,)).unwrap();
    }
    for id in 101..=103 {
        conn.exec_drop(PREPARED_INSERT, (id, format!("n{id}"), "c", 5))
            .unwrap();
    }
    conn.query_drop("BEGIN").unwrap();
    conn.query_drop("UPDATE items SET price = 0 WHERE id = 1")
        .unwrap();
    conn.query_drop("COMMIT").unwrap();
    conn.query_drop("SET @x = 1").unwrap();
    let _: Vec<String> = conn.query("SHOW TABLES").unwrap();
    // Dropped: the crate closes its two statements and quits (a ping MariaDB does not log),
    // without waiting for the server. The log holds the Quit once the server has ended the
    // connection: wait for that, however long a busy machine takes.
    let id = conn.connection_id();
    drop(conn);
    let mut watcher = server.connection_spec(None).connect().unwrap();
    // Its own polls stay out of the log (its login is logged at once, before any import).
    watcher.query_drop("SET SESSION sql_log_off = 1").unwrap();
    let started = std::time::Instant::now();
    loop {
        let open: u64 = watcher
            .exec_first(
                "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = ?",
                (id,),
            )
            .unwrap()
            .unwrap();
        if open == 0 {
            break;
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(180),
            "the workload's connection {id} did not end"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// The commands of the workload's connection: the one that connected to shop.
fn workload_commands(capture: &Capture) -> Vec<&Command> {
    let connects: Vec<&Command> = capture
        .commands
        .iter()
        .filter(|c| c.kind == CommandKind::Connect && c.database.as_deref() == Some("shop"))
        .collect();
    assert_eq!(connects.len(), 1, "{:#?}", capture.commands);
    let connection = connects[0].connection;
    capture
        .commands
        .iter()
        .filter(|c| c.connection == connection)
        .collect()
}

fn count(commands: &[&Command], kind: CommandKind, sql: &str) -> usize {
    commands
        .iter()
        .filter(|c| c.kind == kind && c.sql.as_deref() == Some(sql))
        .count()
}

/// What both imports must hold of the workload (`from_table`: without the importing
/// connection's own queries).
fn check_commands(capture: &Capture, from_table: bool) {
    let all = &capture.commands;
    assert!(
        all.windows(2).all(|w| w[0].start_us <= w[1].start_us),
        "times go backwards"
    );
    assert!(all
        .iter()
        .all(|c| c.end_us == c.start_us && c.response.is_none()));
    let own = all.iter().any(|c| {
        c.sql
            .as_deref()
            .is_some_and(|s| s.contains("mysql.general_log"))
    });
    assert_eq!(own, !from_table, "the import's own queries");
    let mine = workload_commands(capture);
    let dump = format!("{mine:#?}");
    assert_eq!(mine[0].kind, CommandKind::Connect, "{dump}");
    assert_eq!(mine.last().unwrap().kind, CommandKind::Quit, "{dump}");
    let kinds = |kind| mine.iter().filter(|c| c.kind == kind).count();
    assert_eq!(kinds(CommandKind::Connect), 1, "{dump}");
    assert_eq!(kinds(CommandKind::Quit), 1, "{dump}");
    assert_eq!(kinds(CommandKind::CloseStatement), 2, "{dump}");
    assert_eq!(kinds(CommandKind::Prepare), 2, "{dump}");
    assert_eq!(kinds(CommandKind::Execute), 0, "{dump}");
    for id in SELECT_IDS {
        let sql = format!("SELECT name FROM items WHERE id = {id}");
        assert_eq!(count(&mine, CommandKind::Query, &sql), 1, "{sql}: {dump}");
    }
    for category in ["a", "b"] {
        let sql = format!("UPDATE items SET price = price + 1 WHERE category = '{category}'");
        assert_eq!(count(&mine, CommandKind::Query, &sql), 2, "{sql}: {dump}");
    }
    // Prepares keep their text and get ids 1, 2 of their connection.
    let prepares: Vec<(Option<&str>, Option<u32>)> = mine
        .iter()
        .filter(|c| c.kind == CommandKind::Prepare)
        .map(|c| (c.sql.as_deref(), c.statement))
        .collect();
    assert_eq!(
        prepares,
        vec![
            (Some(PREPARED_SELECT), Some(1)),
            (Some(PREPARED_INSERT), Some(2))
        ]
    );
    // Executes are text queries with the values in them.
    assert_eq!(
        count(
            &mine,
            CommandKind::Query,
            "SELECT price FROM items WHERE id = 5"
        ),
        2,
        "{dump}"
    );
    assert_eq!(
        count(
            &mine,
            CommandKind::Query,
            "SELECT price FROM items WHERE id = 9"
        ),
        3,
        "{dump}"
    );
    let inserts: Vec<Vec<String>> = mine
        .iter()
        .filter(|c| {
            c.kind == CommandKind::Query
                && c.sql.as_deref().map(digest) == Some(digest(PREPARED_INSERT))
        })
        .map(|c| literals(c.sql.as_deref().unwrap()))
        .collect();
    assert_eq!(
        inserts,
        (101..=103)
            .map(|id| vec![id.to_string(), format!("n{id}"), "c".into(), "5".into()])
            .collect::<Vec<_>>(),
        "{dump}"
    );
    for sql in ["BEGIN", "COMMIT", "SET @x = 1", "SHOW TABLES"] {
        assert_eq!(count(&mine, CommandKind::Query, sql), 1, "{sql}: {dump}");
    }
}

/// Digest → how many times it ran, for the statements a scenario replays, counted here
/// independently of the summary.
fn replayed_digests(capture: &Capture) -> BTreeMap<String, u32> {
    let mut counts = BTreeMap::new();
    for command in &capture.commands {
        let (CommandKind::Query, Some(sql)) = (command.kind, &command.sql) else {
            continue;
        };
        let digest = digest(sql);
        let verb = digest.split(' ').next().unwrap_or_default();
        if ["select", "insert", "update", "delete", "begin", "commit"].contains(&verb) {
            *counts.entry(digest).or_insert(0) += 1;
        }
    }
    counts
}

/// The scenario of a capture loads, has one event per digest weighted by its count, fits
/// the parameters to the values, and its statements prepare against its own tables.
fn check_scenario(capture: &Capture, server: &ThrowawayServer) {
    let text = scenario_text(capture, "shop-replay").unwrap();
    let scenario = load_scenario(&text, "shop-replay", &[], None).unwrap();
    let Some(Phase::Run { events, .. }) = scenario.phases.first() else {
        panic!("no run phase: {text}")
    };
    let weights: BTreeMap<String, u32> = events
        .iter()
        .map(|event| (digest(&event.statements[0].sql), event.weight))
        .collect();
    assert_eq!(
        events.len(),
        weights.len(),
        "two events of one digest: {text}"
    );
    assert_eq!(weights, replayed_digests(capture), "{text}");
    let event = |sql: &str| {
        events
            .iter()
            .find(|e| e.statements[0].sql == sql)
            .unwrap_or_else(|| panic!("no event for {sql}: {text}"))
    };
    let by_id = event("SELECT name FROM items WHERE id = ?");
    assert_eq!(by_id.weight, 6);
    let params = format!("{:?}", by_id.statements[0].params);
    assert!(params.starts_with("[Int { min: 3, max: 41,"), "{params}");
    let update = event("UPDATE items SET price = price + ? WHERE category = ?");
    assert_eq!(update.weight, 4);
    assert_eq!(
        format!("{:?}", update.statements[0].params),
        "[Pick([Int(1)]), Pick([Text(\"a\"), Text(\"b\")])]"
    );
    let price = event(PREPARED_SELECT);
    assert_eq!(price.weight, 5);
    assert_eq!(
        format!("{:?}", price.statements[0].params),
        "[Pick([Int(5), Int(9)])]"
    );
    assert_eq!(event(PREPARED_INSERT).weight, 3);
    assert!(
        !text.contains("SHOW TABLES") && text.contains("SHOW ×1"),
        "{text}"
    );
    // Every statement prepares against the scenario's own tables.
    let mut conn = server.connection_spec(None).connect().unwrap();
    conn.query_drop("CREATE DATABASE replay").unwrap();
    conn.query_drop("USE replay").unwrap();
    for table in &scenario.tables {
        conn.query_drop(table.create_sql(enginebench::engine::Engine::InnoDb))
            .unwrap_or_else(|err| panic!("{}: {err}", table.name));
    }
    for event in events {
        for statement in &event.statements {
            let prepared = conn
                .prep(&statement.sql)
                .unwrap_or_else(|err| panic!("{}: {err}", statement.sql));
            assert_eq!(prepared.num_params() as usize, statement.params.len());
            conn.close(prepared).unwrap();
        }
    }
    conn.query_drop("DROP DATABASE replay").unwrap();
}

#[test]
fn the_general_log_table_and_file_import_the_workload_and_summarise_into_a_scenario() {
    let (server, log) = logged_server();
    run_workload(&server);
    let dir = tempfile::tempdir().unwrap();

    // The table, with a snapshot of shop read on the importing connection.
    let out = dir.path().join("table.ebcap");
    let mut importer = server.connection_spec(None).connect().unwrap();
    let summary = import_table(&mut importer, Some("shop"), &out).unwrap();
    let capture = read(&out).unwrap();
    assert!(capture.warnings.is_empty(), "{:?}", capture.warnings);
    assert_eq!(capture.header().source, TABLE_SOURCE);
    assert_eq!(capture.header().database.as_deref(), Some("shop"));
    assert!(capture
        .header()
        .server_version
        .as_deref()
        .is_some_and(|v| v.contains("MariaDB")));
    assert_eq!(summary.commands, capture.commands.len() as u64);
    assert_eq!(summary.connections, capture.connections().len() as u64);
    assert_eq!(capture.end.as_ref().unwrap().commands, summary.commands);
    assert!(
        summary.warnings.iter().any(|w| w.contains("snapshot")),
        "{:?}",
        summary.warnings
    );
    assert_eq!(
        capture
            .tables
            .iter()
            .map(|t| t.name.as_str())
            .collect::<Vec<_>>(),
        vec!["items"]
    );
    assert!(capture.tables[0].create.starts_with("CREATE TABLE `items`"));
    let rows: usize = capture.rows.iter().map(|chunk| chunk.rows.len()).sum();
    assert_eq!(rows, 53, "50 rows and the workload's 3 inserts");
    assert_eq!(
        capture.rows[0].columns,
        vec!["id", "name", "category", "price"]
    );
    check_commands(&capture, true);
    // Importing again leaves out this connection's own queries again, and finds the same.
    let again = import_table(&mut importer, None, &dir.path().join("again.ebcap")).unwrap();
    assert_eq!(again.commands, summary.commands);
    check_scenario(&capture, &server);

    // The file: the same commands, to the second.
    let out = dir.path().join("file.ebcap");
    let file_summary = import_file(&log, Some("shop"), &out).unwrap();
    let from_file = read(&out).unwrap();
    assert!(from_file.header().source.contains("to the second"));
    assert!(from_file.tables.is_empty());
    assert!(file_summary
        .warnings
        .iter()
        .any(|w| w.contains("times to the second")));
    check_commands(&from_file, false);
    // The file also has the imports' own queries (no connection to exclude): the
    // workload's part is the same as the table's.
    let kinds = |capture: &Capture| -> Vec<(CommandKind, Option<String>)> {
        workload_commands(capture)
            .iter()
            .map(|c| (c.kind, c.sql.clone()))
            .collect()
    };
    assert_eq!(kinds(&from_file), kinds(&capture));
    check_scenario_loads(&from_file);
}

/// The file has no snapshot: its scenario still loads, without tables.
fn check_scenario_loads(capture: &Capture) {
    let text = scenario_text(capture, "from-file").unwrap();
    let scenario = load_scenario(&text, "from-file", &[], None).unwrap();
    assert!(scenario.tables.is_empty());
    assert!(text.contains("has no snapshot"), "{text}");
}

#[test]
fn an_empty_general_log_table_is_an_error_with_the_fix() {
    common::require_mariadb();
    let server = ThrowawayServer::start(&ServerOptions::default()).unwrap();
    let mut conn = server.connection_spec(None).connect().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.ebcap");
    let err = format!("{:#}", import_table(&mut conn, None, &out).unwrap_err());
    assert!(err.contains("general_log is OFF"), "{err}");
    assert!(
        err.contains("SET GLOBAL general_log = ON, log_output = 'TABLE'"),
        "{err}"
    );
    assert!(!out.exists(), "a capture was written for nothing");
    // A database that is not there: named, and no capture left behind.
    conn.query_drop("SET GLOBAL log_output = 'TABLE'").unwrap();
    conn.query_drop("SET GLOBAL general_log = ON").unwrap();
    let mut other = server.connection_spec(None).connect().unwrap();
    other.query_drop("SELECT 1").unwrap();
    let err = format!(
        "{:#}",
        import_table(&mut conn, Some("nowhere"), &out).unwrap_err()
    );
    assert!(err.contains("database 'nowhere' does not exist"), "{err}");
    assert!(!out.exists(), "a capture without its snapshot was left");
}

const SAMPLE: &str =
    "/usr/sbin/mariadbd, Version: 10.11.19-MariaDB-0+deb12u1-log (Debian 12). started with:\n\
Tcp port: 0  Unix socket: /tmp/s.sock\n\
Time\t\t    Id Command\tArgument\n\
251123 17:05:20\t     3 Connect\troot@localhost on shop using Socket\n\
\t\t     3 Query\tSELECT * FROM t WHERE id = 1\n\
\t\t     3 Query\tSELECT *\n\
FROM t\n\
WHERE name = 'it''s'\n\
\t\t     3 Prepare\tSELECT * FROM t WHERE id = ?\n\
251123 17:05:21\t     3 Execute\tSELECT * FROM t WHERE id = 2\n\
\t\t     4 Connect\troot@localhost on  using TCP/IP\n\
\t\t     4 Init DB\tshop\n\
\t\t     3 Close stmt\t\n\
251123  9:05:22\t     4 Ping\t\n\
\t\t     3 Quit\t\n";

#[test]
fn a_corrupted_log_file_never_panics_the_import() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("general.log");
    let out = dir.path().join("out.ebcap");
    let attempt = |bytes: &[u8]| {
        std::fs::write(&log, bytes).unwrap();
        if import_file(&log, Some("shop"), &out).is_ok() {
            // What an import writes reads back.
            read(&out).unwrap();
        }
    };
    let text = SAMPLE.as_bytes();
    for cut in 0..text.len() {
        attempt(&text[..cut]);
    }
    let mut seed: u64 = 11;
    let mut imported = 0;
    for _ in 0..1500 {
        let mut bytes = text.to_vec();
        for _ in 0..4 {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let at = (seed >> 33) as usize % bytes.len();
            bytes[at] = match seed % 4 {
                0 => b'\t',
                1 => b'\n',
                2 => b'9',
                _ => (seed >> 13) as u8,
            };
        }
        std::fs::write(&log, &bytes).unwrap();
        if import_file(&log, None, &out).is_ok() {
            imported += 1;
            read(&out).unwrap();
        }
    }
    // Some corruptions still read as a log (a changed letter inside a statement), and
    // some do not: both paths were taken.
    assert!(imported > 0 && imported < 1500, "{imported}");
}
