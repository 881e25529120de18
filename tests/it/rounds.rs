//! Decide, then stop, for sysbench's workloads and Lua scripts: on two engines each
//! engine's tables live in a database of their own, every engine's are set up first, and
//! the cells alternate engines round by round, so a run without --repeat stops once its
//! verdict is decided. Real throwaway servers, small tables, one-second cells.

use crate::common;

use enginebench::server::ConnectionSpec;
use mysql::prelude::Queryable;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// The cells' (engine, repeat) in run order.
fn engines_and_repeats(record: &Value) -> Vec<(String, u64)> {
    record["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|cell| {
            (
                cell["engine"].as_str().unwrap().to_string(),
                cell["repeat"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// Rounds 1..=n of InnoDB then MyISAM.
fn alternating(rounds: u64) -> Vec<(String, u64)> {
    (1..=rounds)
        .flat_map(|repeat| {
            [
                ("innodb".to_string(), repeat),
                ("myisam".to_string(), repeat),
            ]
        })
        .collect()
}

/// A cell's server counter delta (0 when the record leaves it out).
fn delta(cell: &Value, name: &str) -> f64 {
    cell["server_status_delta"][name].as_f64().unwrap_or(0.0)
}

#[test]
// Long by design: one run, looked at while it goes and then in its record.
#[allow(clippy::too_many_lines)]
fn oltp_on_two_engines_runs_rounds_until_decided_each_engine_in_a_database_of_its_own() {
    common::require_mariadb();
    let tmp = common::private_tmpdir("rounds-oltp");
    let json = tmp.with_extension("rounds.json");
    let mut command = common::enginebench(&tmp);
    command
        .args(["run", "oltp_read_write", "--engines", "innodb,myisam"])
        .args(["--threads", "1", "--time", "1", "--table-size", "1000"])
        .args(["--max-repeat", "4", "--database", "rounds", "--no-db"])
        .arg("--json")
        .arg(&json);
    let mut run = common::Running::spawn(command);
    run.wait_for_line(|line| line.contains("ready (unix socket "));
    let socket: PathBuf = run
        .seen
        .last()
        .and_then(|line| line.split("ready (unix socket ").nth(1))
        .map(|rest| rest.trim_end_matches(')').into())
        .unwrap();
    // Both engines' tables are loaded before the first cell.
    for engine in ["InnoDB", "MyISAM"] {
        run.wait_for_line(|line| {
            line.starts_with(&format!("loading 1000 rows into sbtest1 (ENGINE={engine})"))
        });
    }
    run.wait_for_line(|line| line.starts_with("loaded 1000 rows into sbtest1"));
    let mut root = ConnectionSpec::unix_socket(&socket, "root", None)
        .connect()
        .unwrap();
    // While the cells run: each engine's sbtest1 in its own database, none in the run's,
    // and the cells' connections in the engines' databases.
    let tables: Vec<(String, String, String)> = root
        .query(
            "SELECT TABLE_SCHEMA, TABLE_NAME, ENGINE FROM information_schema.TABLES \
             WHERE TABLE_NAME LIKE 'sbtest%' ORDER BY 1, 2",
        )
        .unwrap();
    let table = |database: &str, engine: &str| {
        (
            database.to_string(),
            "sbtest1".to_string(),
            engine.to_string(),
        )
    };
    assert_eq!(
        tables,
        [
            table("rounds_innodb", "InnoDB"),
            table("rounds_myisam", "MyISAM")
        ]
    );
    let mut working_in = BTreeSet::new();
    let since = Instant::now();
    // Until both engines' cells were seen working, or the run ended (its server goes with
    // it); the 2 minutes only guard against a hang (20 s was a pace: a loaded machine may
    // take longer to reach MyISAM's first cell).
    while working_in.len() < 2 && since.elapsed() < Duration::from_secs(120) {
        // Ends with the server, when the run is over.
        let Ok(rows) = root.query::<(Option<String>, Option<String>), _>(
            "SELECT DB, INFO FROM information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID()",
        ) else {
            break;
        };
        for (database, info) in rows {
            let database = database.unwrap_or_default();
            let sent = info.unwrap_or_default();
            // The workload names its tables plainly (the run's probe names them with
            // their database, measuring their footprint).
            if !sent.contains("sbtest") || sent.contains("`rounds_") {
                continue;
            }
            assert_ne!(database, "rounds", "in the run's own database: {sent}");
            working_in.insert(database);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(
        working_in.into_iter().collect::<Vec<_>>(),
        ["rounds_innodb", "rounds_myisam"]
    );
    drop(root);
    let (status, stdout, stderr) = run.finish();
    assert!(status.success(), "{stderr}");
    assert!(
        stdout.contains("repeats paired by round until decided (3 to 4 per cell)"),
        "{stdout}"
    );
    let record = common::read_json(&json);
    let _ = std::fs::remove_file(&json);

    // A decided-mode record, its cells alternating engines round by round: the first look's
    // three rounds, a fourth while undecided.
    assert_eq!(record["until_decided"]["min_repeats"], 3, "{record}");
    assert_eq!(record["until_decided"]["max_repeats"], 4);
    let cells = engines_and_repeats(&record);
    assert!(
        cells == alternating(3) || cells == alternating(4),
        "{cells:?}"
    );
    let loads: Vec<(&str, &str)> = record["loads"]
        .as_array()
        .unwrap()
        .iter()
        .map(|load| {
            assert!(load["error"].is_null(), "{load}");
            (
                load["table"].as_str().unwrap(),
                load["engine"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(loads, [("sbtest1", "innodb"), ("sbtest1", "myisam")]);
    // Each cell worked on its own engine's table: MyISAM's key cache serves MyISAM's
    // cells, InnoDB's buffer pool InnoDB's. For MyISAM's cells the InnoDB side is judged by
    // the rows InnoDB read for statements, not by buffer pool requests: InnoDB's purge of
    // the earlier InnoDB cells' changes goes on in the background by time, not by
    // statement (a MyISAM cell beside other tests saw 3,236 buffer pool requests against
    // 12,265 key cache requests).
    for cell in record["cells"].as_array().unwrap() {
        assert_eq!(cell["outcome"], "completed", "{cell}");
        let (key_cache, buffer_pool, innodb_rows) = (
            delta(cell, "Key_read_requests"),
            delta(cell, "Innodb_buffer_pool_read_requests"),
            delta(cell, "Innodb_rows_read"),
        );
        let own_engine = match cell["engine"].as_str().unwrap() {
            "innodb" => buffer_pool > 10.0 * key_cache.max(1.0),
            _ => key_cache > 4.0 * innodb_rows.max(1.0),
        };
        assert!(
            own_engine,
            "{} cell {}: key cache {key_cache}, buffer pool {buffer_pool}, InnoDB rows read {innodb_rows}",
            cell["engine"], cell["index"]
        );
    }
    common::assert_nothing_left(&tmp);
}

/// A Lua script's steps in the record: (name, engine, succeeded).
fn steps(record: &Value) -> Vec<(String, String, bool)> {
    record["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|step| {
            (
                step["name"].as_str().unwrap().to_string(),
                step["engine"].as_str().unwrap().to_string(),
                step["error"].is_null(),
            )
        })
        .collect()
}

/// The transfer script on InnoDB and MyISAM without --repeat: both prepare, then the cells
/// alternate, each followed by the script's check; MyISAM, whose ROLLBACKs undo nothing,
/// is marked not comparable, so the verdict has nothing left to decide after the first
/// look and the fourth round is skipped. The checks after its skipped cells do not run:
/// neither on the cell before (another engine's) nor again on one already checked.
#[test]
fn a_script_on_two_engines_alternates_them_and_checks_only_the_cells_that_ran() {
    common::require_mariadb();
    let tmp = common::private_tmpdir("rounds-lua");
    let json = tmp.with_extension("rounds.json");
    let script = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/lua/transfer.lua"
    );
    let output = common::enginebench(&tmp)
        .args(["run", script, "--accounts=50", "--engines", "innodb,myisam"])
        .args(["--threads", "2", "--events", "400", "--check", "check"])
        .args(["--max-repeat", "4", "--no-db", "--json"])
        .arg(&json)
        .output()
        .unwrap();
    common::assert_success(&output);
    let record = common::read_json(&json);
    let _ = std::fs::remove_file(&json);
    assert_eq!(record["until_decided"]["max_repeats"], 4, "{record}");
    let cells = engines_and_repeats(&record);
    assert_eq!(cells, alternating(3), "{cells:?}");
    let step = |name: &str, engine: &str, ok: bool| (name.to_string(), engine.to_string(), ok);
    let mut expected = vec![
        step("prepare", "innodb", true),
        step("prepare", "myisam", true),
    ];
    for _ in 1..=3 {
        expected.extend([
            step("check", "innodb", true),
            step("check", "myisam", false),
        ]);
    }
    expected.extend([
        step("cleanup", "innodb", true),
        step("cleanup", "myisam", true),
    ]);
    assert_eq!(steps(&record), expected);
    let marks: Vec<(&str, u64)> = record["not_comparable"]
        .as_array()
        .unwrap()
        .iter()
        .map(|mark| {
            (
                mark["engine"].as_str().unwrap(),
                mark["after_cell"].as_u64().unwrap(),
            )
        })
        .collect();
    assert!(
        !marks.is_empty() && marks.iter().all(|&(engine, _)| engine == "myisam"),
        "{marks:?}"
    );
    // Marked after MyISAM's own cells only (indexes 1, 3, 5), never twice for one reason.
    assert!(
        marks.iter().all(|&(_, after)| [1, 3, 5].contains(&after)),
        "{marks:?}"
    );
    assert!(marks.len() <= 6, "{marks:?}");
    common::assert_nothing_left(&tmp);
}
