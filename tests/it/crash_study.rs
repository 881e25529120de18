//! A study's own check after a crash trial: TPC-C's consistency conditions, a Lua
//! script's `--check` command and a scenario file's `check` queries run on the study's
//! tables, which the study's own load was writing beside the ledger's when the server was
//! killed. A check that finds something broken is recorded and keeps the set-up from
//! being ranked against those that lost nothing.

use std::path::Path;

use crate::common;
use serde_json::Value;

/// The study's part of `engine`'s one process-crash trial.
fn study_check<'a>(record: &'a Value, engine: &str) -> &'a Value {
    let trials: Vec<&Value> = record["crashes"]
        .as_array()
        .unwrap_or_else(|| panic!("no crashes in {record}"))
        .iter()
        .filter(|trial| trial["engine"] == engine && trial["kind"] == "process")
        .collect();
    assert_eq!(trials.len(), 1, "{engine}: {:#}", record["crashes"]);
    let check = &trials[0]["study_check"];
    assert!(
        check.is_object(),
        "{engine}: no study check in {}",
        trials[0]
    );
    assert!(check.get("error").is_none(), "{engine}: {check}");
    check
}

fn broken(check: &Value) -> Vec<String> {
    check["broken"]
        .as_array()
        .map(|all| {
            all.iter()
                .map(|b| b.as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// `study` (its arguments) run with one process crash per engine on a tmpfs datadir, its
/// cells as short as they go: the output and the record.
fn crashed_once(tmp: &Path, study: &[&str]) -> (std::process::Output, Value) {
    let mut args = study.to_vec();
    args.extend([
        "--crash", "process", "--tmpfs", "--time", "300ms", "--repeat", "1", "--no-db",
    ]);
    common::run_recorded(tmp, &args)
}

/// A crash trial's study check, whatever it found, after the study's load ran; the
/// statements the load sent counted (each event sends one at least).
fn assert_loaded(check: &Value) {
    let events = check["events"].as_u64().unwrap();
    assert!(events > 0, "{check}");
    assert!(check["statements"].as_u64().unwrap() >= events, "{check}");
}

/// Pairs of rows written in one transaction, 100 rows written before the load, and two
/// check queries: the 100 rows are all there, and no pair is half there.
const PAIRS: &str = r#"
name = "pairs"
title = "Pairs written in one transaction"
threads = [2]
time = "300ms"
check = [
  "SELECT COUNT(*) FROM seeded HAVING COUNT(*) <> 100",
  "SELECT a.id FROM pair_a a LEFT JOIN pair_b b ON b.id = a.id WHERE b.id IS NULL",
]

[[tables]]
name = "seeded"
rows = 100
create = "CREATE TABLE seeded (id INT NOT NULL PRIMARY KEY)"
columns = { id = { sequence = 1 } }

[[tables]]
name = "pair_a"
rows = 1
create = "CREATE TABLE pair_a (id INT NOT NULL AUTO_INCREMENT PRIMARY KEY, v INT NOT NULL)"
columns = { id = { sequence = 1 }, v = { int = [0, 9] } }

[[tables]]
name = "pair_b"
rows = 1
create = "CREATE TABLE pair_b (id INT NOT NULL PRIMARY KEY)"
columns = { id = { sequence = 1 } }

[[phases]]
kind = "run"
name = "pairs"

[[phases.events]]
name = "pair"
transaction = true
statements = [
  { name = "a", sql = "INSERT INTO pair_a (v) VALUES (?)", params = [{ int = [0, 9] }] },
  { name = "b", sql = "INSERT INTO pair_b (id) VALUES (LAST_INSERT_ID())" },
]
"#;

/// On InnoDB the scenario's checks hold after a process crash (its pairs are committed
/// whole, its rows synced); MEMORY comes back empty, and the check query that counts the
/// 100 rows says so.
#[test]
fn a_scenarios_check_queries_run_after_each_crash_and_what_they_find_is_a_loss() {
    common::require_mariadb();
    let tmp = common::private_tmpdir("crash-study-scenario");
    let file = tmp.with_extension("pairs.toml");
    std::fs::write(&file, PAIRS).unwrap();
    let (output, record) = crashed_once(
        &tmp,
        &["run", file.to_str().unwrap(), "--engines", "innodb,memory"],
    );
    common::assert_success(&output);
    let innodb = study_check(&record, "innodb");
    assert_loaded(innodb);
    assert_eq!(broken(innodb), Vec::<String>::new(), "{innodb}");
    // A pair's event sends both of its INSERTs.
    assert!(
        innodb["statements"].as_u64().unwrap() >= 2 * innodb["events"].as_u64().unwrap(),
        "{innodb}"
    );
    let memory = study_check(&record, "memory");
    assert_loaded(memory);
    let found = broken(memory);
    assert!(
        found.len() == 1 && found[0].contains("HAVING COUNT(*) <> 100` returned 1 row(s)"),
        "{memory}"
    );
    // The set-up's loads are not measurements: the record's loads are the run's own,
    // one per table and engine.
    assert_eq!(
        record["loads"].as_array().unwrap().len(),
        6,
        "{}",
        record["loads"]
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("the scenario's 2 check queries"),
        "{stdout}"
    );
    std::fs::remove_file(&file).unwrap();
    common::assert_nothing_left(&tmp);
}

/// The Lua script's `--check` command runs after the crash: on InnoDB the money is all
/// there; on MEMORY the accounts are gone and the check's error is what it found.
#[test]
fn a_lua_scripts_check_command_runs_after_each_crash() {
    common::require_mariadb();
    let tmp = common::private_tmpdir("crash-study-lua");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/lua/transfer.lua");
    let (output, record) = crashed_once(
        &tmp,
        &[
            "run",
            script.to_str().unwrap(),
            "--accounts=50",
            "--engines",
            "innodb,memory",
            "--threads",
            "2",
            "--check",
            "check",
        ],
    );
    common::assert_success(&output);
    let innodb = study_check(&record, "innodb");
    assert_loaded(innodb);
    assert_eq!(broken(innodb), Vec::<String>::new(), "{innodb}");
    let memory = study_check(&record, "memory");
    let found = broken(memory);
    assert!(
        found.len() == 1 && found[0].contains("money was created or lost"),
        "{memory}"
    );
    common::assert_nothing_left(&tmp);
}

/// TPC-C's consistency conditions hold on durable InnoDB after a process crash in the
/// middle of its transactions (MyISAM's may or may not break, by where the kill lands:
/// only that they were checked is asserted).
#[test]
fn tpccs_consistency_conditions_are_checked_after_each_crash() {
    common::require_mariadb();
    let tmp = common::private_tmpdir("crash-study-tpcc");
    let (output, record) = crashed_once(
        &tmp,
        &[
            "run",
            "tpcc",
            "--warehouses",
            "1",
            "--engines",
            "innodb,myisam",
            "--threads",
            "4",
        ],
    );
    common::assert_success(&output);
    let innodb = study_check(&record, "innodb");
    assert_loaded(innodb);
    assert_eq!(innodb["check"], "TPC-C's consistency conditions 1-4");
    assert_eq!(broken(innodb), Vec::<String>::new(), "{innodb}");
    assert_loaded(study_check(&record, "myisam"));
    common::assert_nothing_left(&tmp);
}
