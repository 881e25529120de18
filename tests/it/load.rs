//! Load methods against a real server: every method and degree of parallelism loads the
//! same table, strings survive escaping, failures name the chunk and the fix.

use crate::common;

use enginebench::engine::Engine;
use enginebench::load::{
    load_table, IndexTiming, LoadMethod, LoadPlan, RowGenerator, TableSpec, Value,
};
use enginebench::server::ServerOptions;
use enginebench::targets;
use mysql::prelude::Queryable;
use rand::rngs::SmallRng;
use rand::Rng;

/// Strings that break naive quoting: quotes, backslashes, tabs, newlines, NUL, non-ASCII.
struct Hostile {
    duplicate_at: Option<u64>,
}

impl RowGenerator for Hostile {
    fn fill_row(&self, id: u64, rng: &mut SmallRng, row: &mut Vec<Value>) {
        let pieces = [
            "it's",
            "back\\slash",
            "tab\there",
            "new\nline",
            "nul\0byte",
            "ünïcødé ✓",
            "\"dq\"",
            "%_",
        ];
        let text: String = (0..rng.gen_range(1..4))
            .map(|_| pieces[rng.gen_range(0..pieces.len())])
            .collect();
        let key = match self.duplicate_at {
            Some(at) if id == at => 1,
            _ => id,
        };
        row.push(Value::Int(key as i64));
        row.push(Value::Int(rng.gen_range(0..1000)));
        row.push(Value::Text(text));
    }
}

fn spec(engine: Engine, rows: u64, duplicate_at: Option<u64>) -> TableSpec {
    TableSpec {
        name: "hostile".into(),
        before_create: Vec::new(),
        create_sql: format!(
            "CREATE TABLE hostile (id INT NOT NULL PRIMARY KEY, n INT NOT NULL, s VARCHAR(200) NOT NULL) ENGINE={} DEFAULT CHARSET=utf8mb4",
            engine.sql_name()
        ),
        secondary_indexes: vec!["INDEX n_idx (n)".into()],
        columns: vec!["id".into(), "n".into(), "s".into()],
        rows,
        seed: 9,
        generator: Box::new(Hostile { duplicate_at }),
    }
}

fn plan(method: LoadMethod, parallel: u32, index_timing: IndexTiming) -> LoadPlan {
    LoadPlan {
        method,
        commit_every: 700,
        rows_per_statement: 300,
        chunk_rows: 900,
        parallel,
        index_timing,
        tables_at_once: 1,
    }
}

#[test]
fn every_method_and_parallelism_loads_the_same_table() {
    common::require_mariadb();
    let target = targets::open(None, &ServerOptions::default(), "enginebench").unwrap();
    let spec_conn = target.spec("enginebench");
    let mut conn = spec_conn.connect().unwrap();
    let rows = 2345; // not a multiple of any chunk, statement or commit size
    for engine in [Engine::MyIsam, Engine::InnoDb] {
        let mut checksums = Vec::new();
        for method in LoadMethod::ALL {
            for (parallel, timing) in [(1, IndexTiming::After), (3, IndexTiming::Before)] {
                let outcome = load_table(
                    &spec_conn,
                    &spec(engine, rows, None),
                    &plan(method, parallel, timing),
                    target.server_pid(),
                    &|| true,
                )
                .unwrap_or_else(|err| panic!("{method:?} ×{parallel} on {engine}: {err}"));
                assert_eq!(outcome.rows, rows);
                assert!(outcome.data_bytes > 0);
                assert!(outcome.server_process.is_some());
                let count: u64 = conn
                    .query_first("SELECT COUNT(*) FROM hostile")
                    .unwrap()
                    .unwrap();
                assert_eq!(count, rows, "{method:?} ×{parallel} on {engine}");
                let checksum: String = conn
                    .query_first("SELECT CAST(SUM(CRC32(CONCAT_WS('|', id, n, HEX(s)))) AS CHAR) FROM hostile")
                    .unwrap()
                    .unwrap();
                checksums.push((format!("{method:?} ×{parallel}"), checksum));
                let indexes: Vec<String> = conn
                    .query_map(
                        "SHOW INDEX FROM hostile WHERE Key_name = 'n_idx'",
                        |row: mysql::Row| row.get::<String, _>("Key_name").unwrap(),
                    )
                    .unwrap();
                assert_eq!(indexes, vec!["n_idx"], "{method:?} index {timing:?}");
            }
        }
        let first = checksums[0].1.clone();
        for (label, checksum) in &checksums {
            assert_eq!(
                checksum, &first,
                "{label} on {engine} loaded different data"
            );
        }
    }
}

/// ASCII text only, of the characters in its range, and says so: LOAD DATA sends it as
/// CHARACTER SET binary.
struct Ascii(std::ops::RangeInclusive<u8>);

/// Letters, digits, punctuation, backslash included.
const PRINTABLE: Ascii = Ascii(b' '..=b'~');
/// Letters only: a row's tab-separated text is exactly its columns' lengths plus 3.
const LETTERS: Ascii = Ascii(b'a'..=b'z');

impl RowGenerator for Ascii {
    fn fill_row(&self, id: u64, rng: &mut SmallRng, row: &mut Vec<Value>) {
        let text: String = (0..rng.gen_range(1..60))
            .map(|_| char::from(rng.gen_range(self.0.clone())))
            .collect();
        row.push(Value::Int(id as i64));
        row.push(Value::Int(rng.gen_range(0..1000)));
        row.push(Value::Text(text));
    }

    fn ascii_only(&self) -> bool {
        true
    }
}

#[test]
fn ascii_rows_load_unconverted_into_any_charset_in_statements_spanning_blocks() {
    common::require_mariadb();
    let target = targets::open(None, &ServerOptions::default(), "enginebench").unwrap();
    let spec_conn = target.spec("enginebench");
    let mut conn = spec_conn.connect().unwrap();
    // Statements of 30,000 rows: each spans several of the generator's blocks.
    let rows = 45_001;
    for charset in ["latin1", "utf8mb4"] {
        let mut checksums = Vec::new();
        for (method, parallel) in [
            (LoadMethod::MultiRow, 1),
            (LoadMethod::LoadData, 1),
            (LoadMethod::LoadData, 2),
        ] {
            let table = TableSpec {
                create_sql: format!(
                    "CREATE TABLE hostile (id INT NOT NULL PRIMARY KEY, n INT NOT NULL, s VARCHAR(200) NOT NULL) ENGINE=InnoDB DEFAULT CHARSET={charset}"
                ),
                generator: Box::new(PRINTABLE),
                ..spec(Engine::InnoDb, rows, None)
            };
            let load_plan = LoadPlan {
                chunk_rows: 30_000,
                ..plan(method, parallel, IndexTiming::After)
            };
            let outcome = load_table(&spec_conn, &table, &load_plan, None, &|| true)
                .unwrap_or_else(|err| panic!("{method:?} ×{parallel} into {charset}: {err}"));
            assert_eq!(outcome.rows, rows);
            let (count, checksum): (u64, String) = conn
                .query_first("SELECT COUNT(*), CAST(SUM(CRC32(CONCAT_WS('|', id, n, HEX(s)))) AS CHAR) FROM hostile")
                .unwrap()
                .unwrap();
            assert_eq!(count, rows, "{method:?} ×{parallel} into {charset}");
            checksums.push((format!("{method:?} ×{parallel}"), checksum));
        }
        for (label, checksum) in &checksums {
            assert_eq!(
                checksum, &checksums[0].1,
                "{label} into {charset} loaded different data"
            );
        }
    }
}

#[test]
fn an_interrupted_load_says_so_and_counts_only_the_rows_and_bytes_committed() {
    common::require_mariadb();
    let target = targets::open(None, &ServerOptions::default(), "enginebench").unwrap();
    let spec_conn = target.spec("enginebench");
    let mut conn = spec_conn.connect().unwrap();
    let rows = 20_000;
    for method in LoadMethod::ALL {
        let table = TableSpec {
            generator: Box::new(LETTERS),
            ..spec(Engine::InnoDb, rows, None)
        };
        // Ctrl-C after a few of the checks between chunks, statements or batches.
        let checks = std::sync::atomic::AtomicU32::new(0);
        let keep_going = || checks.fetch_add(1, std::sync::atomic::Ordering::Relaxed) < 12;
        let outcome = load_table(
            &spec_conn,
            &table,
            &plan(method, 1, IndexTiming::After),
            None,
            &keep_going,
        )
        .unwrap_or_else(|err| panic!("{method:?}: {err}"));
        assert!(outcome.interrupted, "{method:?}: {outcome:?}");
        assert!(
            outcome.rows > 0 && outcome.rows < rows,
            "{method:?}: {outcome:?}"
        );
        let (count, tsv_bytes): (u64, u64) = conn
            .query_first(
                "SELECT COUNT(*), CAST(SUM(LENGTH(id) + LENGTH(n) + LENGTH(s) + 3) AS UNSIGNED) FROM hostile",
            )
            .unwrap()
            .unwrap();
        assert_eq!(
            count, outcome.rows,
            "{method:?}: rows said vs rows in the table"
        );
        assert_eq!(
            tsv_bytes, outcome.data_bytes,
            "{method:?}: bytes said vs the rows in the table"
        );
        let indexes: Option<String> = conn
            .query_first(
                "SELECT INDEX_NAME FROM information_schema.STATISTICS \
                 WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'hostile' AND INDEX_NAME = 'n_idx'",
            )
            .unwrap();
        assert_eq!(
            indexes, None,
            "{method:?}: no index is built after a Ctrl-C"
        );
        let complete = load_table(
            &spec_conn,
            &table,
            &plan(method, 1, IndexTiming::After),
            None,
            &|| true,
        )
        .unwrap();
        assert!(
            !complete.interrupted && complete.rows == rows,
            "{method:?}: {complete:?}"
        );
    }
}

#[test]
fn a_failing_load_names_the_chunk_the_rows_in_the_table_and_the_fix() {
    common::require_mariadb();
    let target = targets::open(None, &ServerOptions::default(), "enginebench").unwrap();
    let spec_conn = target.spec("enginebench");
    let err = load_table(
        &spec_conn,
        &spec(Engine::InnoDb, 3000, Some(1500)),
        &plan(LoadMethod::MultiRow, 1, IndexTiming::After),
        None,
        &|| true,
    )
    .expect_err("a duplicate key must fail the load");
    assert_eq!(err.chunk, Some((1201, 1500)));
    assert_eq!(err.code, Some(1062));
    // Commits fall on statement boundaries (300 rows a statement, commit once 700 are
    // pending): rows 1..=900 were committed; the failing transaction is rolled back.
    assert_eq!(err.rows_in_table, Some(900));
    let message = err.to_string();
    assert!(
        message.starts_with("loading hostile failed at rows 1201..=1500 (900 rows are in the table): ERROR 1062 (23000): Duplicate entry '1' for key 'PRIMARY'; a duplicate key"),
        "{message}"
    );
}

#[test]
fn a_server_refusing_local_infile_says_which_variable_to_set() {
    common::require_mariadb();
    let options = ServerOptions {
        server_opts: vec![("local_infile".into(), "0".into())],
        ..ServerOptions::default()
    };
    let target = targets::open(None, &options, "enginebench").unwrap();
    let err = load_table(
        &target.spec("enginebench"),
        &spec(Engine::MyIsam, 100, None),
        &plan(LoadMethod::LoadData, 1, IndexTiming::After),
        None,
        &|| true,
    )
    .expect_err("LOAD DATA LOCAL must be refused");
    let message = err.to_string();
    assert!(message.contains("(0 rows are in the table)"), "{message}");
    assert!(
        message.contains(
            "set local_infile=ON on it (SET GLOBAL local_infile=1) or pick another --load-method"
        ),
        "{message}"
    );
}

#[test]
fn engine_limits_are_named_with_the_setting_or_change_that_fixes_them() {
    common::require_mariadb();
    let target = targets::open(None, &ServerOptions::default(), "enginebench").unwrap();
    let spec_conn = target.spec("enginebench");
    let table = |create_sql: &str, before_create: Vec<String>, rows| TableSpec {
        name: "limits".into(),
        before_create,
        create_sql: create_sql.into(),
        secondary_indexes: Vec::new(),
        columns: vec!["id".into(), "n".into(), "s".into()],
        rows,
        seed: 1,
        generator: Box::new(Hostile { duplicate_at: None }),
    };
    let fast = LoadPlan::fastest();

    // MEMORY cannot hold TEXT.
    let err = load_table(
        &spec_conn,
        &table(
            "CREATE TABLE limits (id INT PRIMARY KEY, n INT, s TEXT) ENGINE=MEMORY",
            vec![],
            10,
        ),
        &fast,
        None,
        &|| true,
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.starts_with("preparing limits failed: ERROR 1163"),
        "{err}"
    );
    assert!(err.ends_with("MEMORY tables cannot hold TEXT/BLOB columns: use VARCHAR(n) (stored fixed-length), or another engine"), "{err}");

    // MEMORY is capped by max_heap_table_size.
    let err = load_table(
        &spec_conn,
        &table(
            "CREATE TABLE limits (id INT PRIMARY KEY, n INT, s VARCHAR(200)) ENGINE=MEMORY",
            vec!["SET SESSION max_heap_table_size = 65536".into()],
            5000,
        ),
        &LoadPlan {
            parallel: 1,
            ..fast
        },
        None,
        &|| true,
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("ERROR 1114"), "{err}");
    assert!(err.contains("The table 'limits' is full"), "{err}");
    assert!(
        err.contains("for MEMORY raise --server-opt max_heap_table_size"),
        "{err}"
    );

    // A row too large for the engine.
    let wide: Vec<String> = (0..7).map(|i| format!("c{i} VARCHAR(10000)")).collect();
    let err = load_table(
        &spec_conn,
        &table(
            &format!(
                "CREATE TABLE limits (id INT PRIMARY KEY, {}) ENGINE=MyISAM CHARSET=latin1",
                wide.join(", ")
            ),
            vec![],
            1,
        ),
        &fast,
        None,
        &|| true,
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("ERROR 1118"), "{err}");
    assert!(
        err.contains("the row is too large for this engine"),
        "{err}"
    );
}

#[test]
fn prepare_loads_a_studys_tables_side_by_side_when_its_connections_allow() {
    common::require_mariadb();
    let server = enginebench::server::ThrowawayServer::start(&ServerOptions::default()).unwrap();
    let tmpdir = common::private_tmpdir("prepare-together");
    let json = tmpdir.join("prepare.json");
    let dsn = format!("mysql://root@127.0.0.1:{}", server.port());
    // Three tables over the default two connections: two load at once, one connection
    // each, then the third alone over both.
    let output = common::enginebench(&tmpdir)
        .args([
            "prepare",
            "sbtest",
            "--tables",
            "3",
            "--table-size",
            "30000",
            "--dsn",
            &dsn,
        ])
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    common::assert_success(&output);
    let record = common::read_json(&json);
    let loads = record["loads"].as_array().unwrap();
    let shape: Vec<(String, u64, u64, u64)> = loads
        .iter()
        .map(|load| {
            (
                load["table"].as_str().unwrap().to_string(),
                load["plan"]["parallel"].as_u64().unwrap(),
                load["plan"]["tables_at_once"].as_u64().unwrap_or(1),
                load["outcome"]["rows"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        shape,
        vec![
            ("sbtest1".to_string(), 1, 2, 30_000),
            ("sbtest2".to_string(), 1, 2, 30_000),
            ("sbtest3".to_string(), 2, 1, 30_000),
        ]
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("load-data 100000/chunk, 2 tables at once"),
        "{stdout}"
    );
    assert!(stdout.contains("their times overlap"), "{stdout}");
    // The server holds every row, with sysbench's values, whichever way a table loaded.
    let mut conn = server
        .connection_spec(Some("enginebench"))
        .connect()
        .unwrap();
    for table in ["sbtest1", "sbtest2", "sbtest3"] {
        let (count, ids, k_index): (u64, u64, u64) = conn
            .query_first(format!(
                "SELECT COUNT(*), SUM(id), (SELECT COUNT(*) FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = 'enginebench' AND TABLE_NAME = '{table}' AND INDEX_NAME = 'k_{}') FROM {table}",
                &table[6..]
            ))
            .unwrap()
            .unwrap();
        assert_eq!(
            (count, ids, k_index),
            (30_000, 30_000 * 30_001 / 2, 1),
            "{table}"
        );
    }
    let _ = std::fs::remove_dir_all(&tmpdir);
}
