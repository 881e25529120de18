//! Per-statement evidence on real servers: the plan each engine runs a statement with, the
//! rows it really examines, and the "plans differ" lines that name the cause (MEMORY's
//! HASH index cannot serve a range or an order) and the fix.

use crate::common;

const HASH_RANGE: &str = r#"name = "hashrange"
engines = ["memory", "innodb"]
threads = [2]
time = "1s"
warmup = "0s"

[[tables]]
name = "items"
rows = 20000
create = "CREATE TABLE items (id INT NOT NULL PRIMARY KEY, price INT NOT NULL, name CHAR(40) NOT NULL)"
indexes = ["INDEX price_idx (price)"]
columns = { id = { sequence = 1 }, price = { int = [1, 20000] }, name = { string = [10, 40] } }

[[phases]]
kind = "run"
name = "ranges"

[[phases.events]]
name = "by_price"
statements = [
  { name = "by_price", sql = "SELECT id, name FROM items WHERE price BETWEEN ? AND ?", params = [{ int = [1, 19990] }, { copy = "by_price.1", add = 10 }] },
]
"#;

fn sum_handler_reads(delta: &serde_json::Value) -> f64 {
    delta
        .as_object()
        .unwrap()
        .iter()
        .filter(|(name, _)| name.starts_with("Handler_read_"))
        .map(|(_, v)| v.as_f64().unwrap())
        .sum()
}

#[test]
fn a_hash_index_range_is_a_full_scan_named_with_its_fix() {
    common::require_mariadb();
    let tmp = common::private_tmpdir("evidence-hash");
    let scenario = tmp.with_extension("hash.toml");
    std::fs::write(&scenario, HASH_RANGE).unwrap();
    let json = tmp.with_extension("hash.json");
    let output = common::enginebench(&tmp)
        .arg("run")
        .arg(&scenario)
        .args(["--no-db", "--json"])
        .arg(&json)
        .output()
        .unwrap();
    let stdout = common::succeeded(output);
    let record = common::read_json(&json);
    let evidence = record["statement_evidence"].as_array().unwrap();
    assert_eq!(evidence.len(), 2, "one per engine");
    let of =
        |engine: &str| &evidence.iter().find(|e| e["engine"] == engine).unwrap()["statements"][0];
    let memory = of("memory");
    let innodb = of("innodb");
    assert_eq!(
        memory["plan"]["tables"][0]["access_type"], "ALL",
        "{memory}"
    );
    assert_eq!(
        memory["plan"]["tables"][0]["possible_keys"][0],
        serde_json::json!(["price_idx", "HASH"])
    );
    assert_eq!(
        innodb["plan"]["tables"][0]["access_type"], "range",
        "{innodb}"
    );
    assert_eq!(innodb["plan"]["tables"][0]["key"], "price_idx");
    assert_eq!(innodb["plan"]["tables"][0]["key_type"], "BTREE");
    // MEMORY examines every row for every range; InnoDB about the range's width.
    let memory_rows = memory["counters"]["rows_examined"].as_f64().unwrap();
    assert!(
        (memory_rows - 20000.0).abs() / 20000.0 < 0.01,
        "{memory_rows}"
    );
    let innodb_rows = innodb["counters"]["rows_examined"].as_f64().unwrap();
    assert!(innodb_rows < 100.0, "{innodb_rows}");
    assert!(
        stdout.contains("by_price: MEMORY scans all 20,001 rows (price_idx is HASH: no range) vs InnoDB range on price_idx, "),
        "{stdout}"
    );
    assert!(
        stdout.contains("fix: a BTREE index for MEMORY (declare price_idx with USING BTREE"),
        "{stdout}"
    );

    // The probe's rows examined per statement predict the cell's own Handler_read_*
    // counters: MEMORY's full scans examine the same rows whatever the values.
    let cell = common::cell_where(&record, "engine", "memory");
    let statements = cell["events"].as_f64().unwrap();
    let handler = sum_handler_reads(&cell["server_status_delta"]);
    let predicted = memory_rows * statements;
    assert!(
        (handler - predicted).abs() / handler < 0.05,
        "Handler_read_* {handler} vs {memory_rows} rows × {statements} statements = {predicted}"
    );
    // The HTML report carries the same evidence: the plans-differ line as a table row.
    let html = tmp.with_extension("hash.html");
    let output = common::enginebench(&tmp)
        .arg("report")
        .arg(&json)
        .arg("--html")
        .arg(&html)
        .output()
        .unwrap();
    common::succeeded(output);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains("<tr><td class=\"l\">by_price</td><td class=\"l\">MEMORY scans all 20,001 rows (price_idx is HASH: no range) vs InnoDB range on price_idx,"),
        "no plans-differ row in the HTML"
    );
    assert!(page.contains("<td class=\"l\">price_idx (BTREE)</td>"));
    let _ = std::fs::remove_file(&html);
    common::assert_nothing_left(&tmp);
    let _ = std::fs::remove_file(&scenario);
}

#[test]
fn s1_shows_memorys_sorts_and_hash_lookups() {
    common::require_mariadb();
    let tmp = common::private_tmpdir("evidence-s1");
    let (output, record) = common::run_recorded(
        &tmp,
        &[
            "run",
            "s1",
            "--engines",
            "memory,innodb",
            "--threads",
            "1",
            "--time",
            "0.3s",
            "--warmup",
            "0s",
            "--scale",
            "0.002",
            "--phases",
            "E active skins,G skins by genre",
            "--no-db",
        ],
    );
    let stdout = common::succeeded(output);
    let plan_of = |phase: &str, engine: &str, statement: &str| {
        record["statement_evidence"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["phase"] == phase && e["engine"] == engine)
            .and_then(|e| {
                e["statements"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|s| s["statement"] == statement)
                    .cloned()
            })
            .unwrap_or_else(|| panic!("no evidence for {phase} {engine} {statement}"))["plan"]
            .clone()
    };
    // E: ORDER BY id. InnoDB reads in index order; MEMORY's HASH indexes have no order,
    // so it sorts.
    assert_eq!(plan_of("E active skins", "memory", "E")["filesort"], true);
    assert_eq!(plan_of("E active skins", "innodb", "E")["filesort"], false);
    assert!(
        stdout.contains("E: MEMORY ref on active_idx") && stdout.contains("filesort vs InnoDB"),
        "{stdout}"
    );
    assert!(
        stdout.contains("fix: a BTREE index for MEMORY (declare active_idx with USING BTREE"),
        "{stdout}"
    );
    // G: WHERE genre = ? ORDER BY name: both engines sort (no index has name), MEMORY
    // finds the genre through its HASH index.
    let memory_g = plan_of("G skins by genre", "memory", "G1");
    assert_eq!(memory_g["filesort"], true);
    assert_eq!(memory_g["tables"][0]["key_type"], "HASH", "{memory_g}");
    assert!(stdout.contains("plans and rows per statement"), "{stdout}");
    common::assert_nothing_left(&tmp);
}
