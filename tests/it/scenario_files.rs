//! Scenario files: exact errors for broken files (before any server starts), the guide's
//! tutorial run as written, the built-in example, and a fuzzer over the parser.

use crate::common;

use enginebench::scenario::file::load_scenario;
use proptest::prelude::*;

fn error_of(text: &str) -> String {
    load_scenario(text, "t.toml", &[], None)
        .unwrap_err()
        .to_string()
}

#[test]
fn broken_files_name_the_line_the_problem_and_what_is_allowed() {
    assert_eq!(
        error_of("name = \"x\"\nthreds = [1]\n"),
        "t.toml:2:1: unknown field `threds`, expected one of `name`, `title`, `description`, `engines`, `threads`, `repeat`, `time`, `loops`, `warmup`, `scale`, `parameters`, `profiles`, `tables`, `phases`, `check`"
    );
    assert_eq!(
        error_of("name = \"x\"\nthreads = \"four\"\n"),
        "t.toml:2:11: invalid type: string \"four\", expected a thread count or a list of them, e.g. threads = 4 or threads = [1, 4, 16]"
    );
    let table = |rows: &str, columns: &str| {
        format!("name = \"x\"\n[parameters]\nrows = 10\n[[tables]]\nname = \"t\"\nrows = {rows}\ncreate = \"CREATE TABLE t (id INT PRIMARY KEY, n INT)\"\ncolumns = {columns}\n")
    };
    assert_eq!(
        error_of(&table("\"rowz\"", "{ id = { sequence = 1 } }")),
        "t.toml:6:8: 'rowz' is not a defined parameter (defined: rows)"
    );
    assert_eq!(
        error_of(&table(
            "10",
            "{ id = { sequence = 1 }, n = { int = [10, 1] } }"
        )),
        "t.toml:8:40: int bounds are impossible: min 10 > max 1"
    );
    assert_eq!(
        error_of(&table("10", "{ id = { sequence = 1 }, n = { ref = \"parent.id\" } }")),
        "t.toml:8:40: ref 'parent.id': table 'parent' is not defined before this point (defined: none)"
    );
    assert_eq!(
        error_of(&table("10", "{ id = { sequence = 1 }, n = { int = [1, 2], dist = \"lognormal\" } }")),
        "t.toml:8:40: unknown dist 'lognormal' (allowed: uniform, gaussian, special, pareto, zipfian)"
    );
    assert_eq!(
        error_of(&table("10", "{ id = { sequence = 1 }, n = { integer = [1, 2] } }")),
        "t.toml:8:40: unknown generator 'integer': a generator is \"now\" or a table with one of: sequence, int (with optional dist), string, pick, value, ref"
    );
    assert_eq!(
        error_of("name = \"x\"\nengines = [\"innodb\", \"falcon\"]\n"),
        "t.toml:2:22: unknown engine 'falcon' (known: myisam, innodb, aria, memory, rocksdb)"
    );
    let run_phase = "name = \"x\"\ntime = \"1s\"\nthreads = [1]\n[[phases]]\nkind = \"run\"\nname = \"r\"\n[[phases.events]]\nname = \"e\"\nstatements = [ { name = \"q\", sql = \"SELECT ? + '?'\", params = [] } ]\n";
    assert_eq!(
        error_of(run_phase),
        "t.toml:9:36: statement 'q' has 1 ? placeholder(s) but 0 param(s)"
    );
    assert_eq!(
        error_of("name = \"x\"\n[[phases]]\nkind = \"bulk\"\nname = \"l\"\n"),
        "t.toml:3:8: unknown phase kind 'bulk' (allowed: ddl, load, run, sequence)"
    );
    assert_eq!(
        error_of("name = \"x\"\n[[profiles]]\nname = \"old\"\nserver_bin = \"/opt/mysql-5.7/bin/mysqld\"\n"),
        "t.toml:4:14: profile 'old': server_bin /opt/mysql-5.7/bin/mysqld does not exist (system, a fetched build: mariadb-11.8, mysql, a directory unpacked from a tarball, or a mariadbd or mysqld binary)"
    );
    let load_phase = |table: &str, methods: &str| {
        format!("name = \"x\"\n[[tables]]\nname = \"t\"\nrows = 10\n{table}create = \"CREATE TABLE t (id INT PRIMARY KEY)\"\ncolumns = {{ id = {{ sequence = 1 }} }}\n[[phases]]\nkind = \"load\"\nname = \"l\"\ntable = \"t\"\nmethods = [{methods}]\n")
    };
    assert_eq!(
        error_of(&load_phase("", "{ method = \"load-data\" }")),
        "t.toml:10:9: load 't': mark the table deferred = true so it is not also loaded before the phases"
    );
    assert_eq!(
        error_of(&load_phase("deferred = true\n", "{ method = \"copy\" }")),
        "t.toml:12:12: unknown load method 'copy' (known: row-autocommit, commit-every, multi-row, load-data)"
    );
    assert_eq!(
        error_of(&load_phase(
            "deferred = true\n",
            "{ method = \"load-data\", chunk_rows = 0 }"
        )),
        "t.toml:12:12: chunk_rows must be at least 1"
    );
    assert_eq!(
        error_of(&load_phase("deferred = true\n", "{ method = \"multi-row\", rows = 5 }")),
        "t.toml:12:36: unknown field `rows`, expected one of `method`, `commit_every`, `rows_per_statement`, `chunk_rows`, `parallel`, `indexes`"
    );
    let set = load_scenario(
        "name = \"x\"\n[parameters]\nrows = 1\n",
        "t.toml",
        &[("rowz".into(), "5".into())],
        None,
    )
    .unwrap_err();
    assert_eq!(
        set.to_string(),
        "--set: 'rowz' is not a parameter of x (defined: rows)"
    );
}

#[test]
fn a_broken_file_is_refused_before_any_server_starts() {
    let tmp = common::private_tmpdir("bad-scenario");
    let file = tmp.join("bad.toml");
    std::fs::write(&file, "name = \"x\"\nengines = [\"falcon\"]\n").unwrap();
    let output = common::enginebench(&tmp)
        .arg("run")
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        stderr.trim_end(),
        format!("Error: {}:2:12: unknown engine 'falcon' (known: myisam, innodb, aria, memory, rocksdb)", file.display())
    );
    std::fs::remove_file(file).unwrap();
    common::assert_nothing_left(&tmp);
}

#[test]
fn dry_run_prints_the_plan_without_starting_a_server() {
    let tmp = common::private_tmpdir("dry-run");
    let output = common::enginebench(&tmp)
        .args(["run", "s0", "--threads", "1,50", "--dry-run"])
        .output()
        .unwrap();
    assert!(output.status.success());
    let stdout = String::from_utf8_lossy(&output.stdout);
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(
        lines[0].starts_with("s0 (built in): MyISAM vs InnoDB"),
        "{stdout}"
    );
    assert_eq!(lines[2], "load t (1000000 rows) for each engine");
    // Repeats alternate between engines; the index is built before the indexed phase.
    assert_eq!(
        lines[3],
        "[1/192] select+update MyISAM threads=1 repeat 1: 200 loops per thread"
    );
    assert_eq!(
        lines[4],
        "[2/192] select+update InnoDB threads=1 repeat 1: 200 loops per thread"
    );
    assert_eq!(
        lines[5],
        "[3/192] select+update MyISAM threads=1 repeat 2: 200 loops per thread"
    );
    let index = lines
        .iter()
        .position(|l| *l == "ddl 'CREATE INDEX value ON t(value)' on MyISAM")
        .unwrap();
    assert!(lines[index + 2].starts_with("[145/192] select+update/indexed MyISAM threads=1"));
    // Repeats 4 to 12 run only while undecided, and the plan says so.
    assert!(
        lines.contains(
            &"[7/192] select+update MyISAM threads=1 repeat 4 (if undecided): 200 loops per thread"
        ),
        "{stdout}"
    );
    assert!(
        stdout.contains("\n48 cells, and up to 144 more while undecided (repeats 4 to 12); timed cells take 0s at most, plus loads"),
        "{stdout}"
    );
    assert!(common::processes_mentioning(&tmp.display().to_string()).is_empty());
    common::assert_nothing_left(&tmp);
}

#[test]
fn an_engine_the_server_lacks_is_named_at_its_place_in_the_file() {
    common::require_mariadb();
    let tmp = common::private_tmpdir("engine-missing-scenario");
    let file = tmp.join("rocks.toml");
    std::fs::write(
        &file,
        "name = \"rocks\"\nengines = [\"innodb\", \"rocksdb\"]\nthreads = [1]\ntime = \"1s\"\n",
    )
    .unwrap();
    // The throwaway server without its RocksDB plugin.
    let output = common::enginebench(&tmp)
        .arg("run")
        .arg(&file)
        .args(["--server-opt", "rocksdb=OFF"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        stderr.lines().last().unwrap(),
        format!("Error: {}:2:22: engine RocksDB is not available on this server (it has: Aria, CSV, InnoDB, MEMORY, MRG_MyISAM, MyISAM, PERFORMANCE_SCHEMA, SEQUENCE); choose others with --engines, or load its plugin with --server-opt plugin_load_add=... (or remove it from this file's engines)", file.display())
    );
    let unknown_phase = common::enginebench(&tmp)
        .args(["run", "s0", "--phases", "select,delete"])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&unknown_phase.stderr).trim_end(),
        "Error: --phases delete: s0 has no such phase (its phases: select+update, select, update, select+update/indexed)"
    );
    std::fs::remove_file(file).unwrap();
    common::assert_nothing_left(&tmp);
}

/// Runs enginebench with `args` and `--json json`, asserts success, and returns the output
/// and the record it wrote.
fn run_with_json<S: AsRef<std::ffi::OsStr>>(
    tmp: &std::path::Path,
    json: &std::path::Path,
    args: &[S],
) -> (std::process::Output, serde_json::Value) {
    let output = common::enginebench(tmp)
        .args(args)
        .arg("--json")
        .arg(json)
        .output()
        .unwrap();
    common::assert_success(&output);
    let record = common::read_json(json);
    (output, record)
}

/// The guide's tutorial scenario (its page "Your own study"), exactly as printed there.
pub fn tutorial() -> String {
    let readme = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/docs/guide/src/compare/scenario-file.md"
    ))
    .unwrap();
    let start = readme
        .find("<!-- tutorial:start -->\n```toml\n")
        .expect("tutorial start marker")
        + "<!-- tutorial:start -->\n```toml\n".len();
    let end = readme[start..]
        .find("```\n<!-- tutorial:end -->")
        .expect("tutorial end marker");
    readme[start..start + end].to_string()
}

#[test]
fn the_guide_tutorial_runs_as_written() {
    common::require_mariadb();
    let tmp = common::private_tmpdir("tutorial");
    let file = tmp.with_extension("shop.toml");
    std::fs::write(&file, tutorial()).unwrap();
    let json = tmp.with_extension("shop.json");
    let output = common::enginebench(&tmp)
        .arg("run")
        .arg(&file)
        .args([
            "--set",
            "products=3000",
            "--time",
            "1s",
            "--repeat",
            "1",
            "--json",
        ])
        .arg(&json)
        .output()
        .unwrap();
    common::assert_success(&output);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("shop browse and buy — events per second (higher is better)"),
        "{stdout}"
    );
    let record: serde_json::Value = common::read_json(&json);
    assert_eq!(record["status"], "completed");
    let cells = record["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 4, "threads 1 and 8 × MyISAM and InnoDB");
    // A scenario file's statements are prepared unless --protocol says otherwise.
    common::assert_protocol(cells, "prepared", "prepared");
    for cell in cells {
        assert_eq!(cell["outcome"], "completed", "{}", cell["error"]);
        let count = |name: &str| {
            cell["queries"]
                .as_array()
                .unwrap()
                .iter()
                .find(|q| q["name"] == name)
                .map_or(0, |q| q["count"].as_u64().unwrap())
        };
        // Weights 9:1 between browsing and buying: buys are a binomial draw with p = 0.1
        // over however many events this machine ran, within five standard deviations.
        let (browse, buy) = (count("stock") as f64, count("order") as f64);
        let events = browse + buy;
        assert!(events > 0.0);
        let spread = 5.0 * (events * 0.1 * 0.9).sqrt() + 1.0;
        assert!(
            (buy - 0.1 * events).abs() <= spread,
            "browse {browse} buy {buy}"
        );
        assert_eq!(count("order"), count("take"));
        assert_eq!(
            cell["server_status_delta"]["Com_insert"].as_u64().unwrap(),
            count("order")
        );
    }
    let loads = record["loads"].as_array().unwrap();
    assert_eq!(loads.len(), 4, "2 tables × 2 engines");
    assert_eq!(loads[0]["outcome"]["rows"], 3000);
    std::fs::remove_file(file).unwrap();
    std::fs::remove_file(json).unwrap();
    common::assert_nothing_left(&tmp);
}

#[test]
fn the_built_in_example_prints_and_runs() {
    common::require_mariadb();
    let tmp = common::private_tmpdir("accounts");
    let show = common::enginebench(&tmp)
        .args(["show", "accounts"])
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&show.stdout),
        include_str!("../../scenarios/accounts.toml")
    );
    let json = tmp.with_extension("accounts.json");
    let (_, record) = run_with_json(
        &tmp,
        &json,
        &[
            "run",
            "accounts",
            "--set",
            "accounts=2000",
            "--threads",
            "2",
            "--time",
            "1s",
        ],
    );
    assert_eq!(
        record["cells"].as_array().unwrap().len(),
        4,
        "2 run phases × 2 engines"
    );
    let ddl: Vec<_> = record["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["name"] == "ddl")
        .collect();
    assert_eq!(ddl.len(), 2);
    assert!(record["parameters"]["scenario_text"]
        .as_str()
        .unwrap()
        .contains("name = \"accounts\""));
    std::fs::remove_file(json).unwrap();
    common::assert_nothing_left(&tmp);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4000, ..ProptestConfig::default() })]

    /// Mutated scenario files (bytes replaced, lines dropped) are accepted or refused with
    /// an error: the parser never panics.
    #[test]
    fn the_parser_never_panics(edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..6), drop_line in any::<prop::sample::Index>(), drop in any::<bool>()) {
        let mut text = tutorial().into_bytes();
        for (position, byte) in edits {
            let at = position.index(text.len());
            text[at] = byte;
        }
        let mut text = String::from_utf8_lossy(&text).into_owned();
        if drop {
            let lines: Vec<&str> = text.lines().collect();
            let skip = drop_line.index(lines.len());
            text = lines.iter().enumerate().filter(|(i, _)| *i != skip).map(|(_, l)| *l).collect::<Vec<_>>().join("\n");
        }
        let _ = load_scenario(&text, "fuzz.toml", &[], None);
    }
}

#[test]
fn study_s1_runs_from_its_scenario_file_on_four_engines() {
    common::require_mariadb();
    let tmp = common::private_tmpdir("s1");
    let json = tmp.with_extension("s1.json");
    let (output, record) = run_with_json(
        &tmp,
        &json,
        &[
            "run",
            "s1",
            "--scale",
            "0.0005",
            "--repeat",
            "1",
            "--threads",
            "2",
            "--time",
            "300ms",
            "--warmup",
            "0s",
        ],
    );
    let cells = record["cells"].as_array().unwrap();
    assert_eq!(
        cells.len(),
        7 * 4,
        "query kinds A-G × MyISAM, InnoDB, MEMORY, Aria"
    );
    assert!(cells.iter().all(|c| c["outcome"] == "completed"));
    let phases: Vec<&str> = cells
        .iter()
        .step_by(4)
        .map(|c| c["variant"].as_str().unwrap())
        .collect();
    assert_eq!(
        phases,
        [
            "A login state",
            "B blog info",
            "C skin for blog display",
            "D skin per user",
            "E active skins",
            "F skin detail",
            "G skins by genre"
        ]
    );
    let loads = record["loads"].as_array().unwrap();
    // --scale shrinks users, blogs and user_skins but not the study's 155 skins.
    let rows = |table: &str| {
        loads.iter().find(|l| l["table"] == table).unwrap()["outcome"]["rows"]
            .as_u64()
            .unwrap()
    };
    assert_eq!(rows("users"), 1000);
    assert_eq!(rows("user_skins"), 550);
    assert_eq!(rows("skins"), 155);
    // The study's table: statements per second, query kinds down, engines across.
    let stdout = String::from_utf8_lossy(&output.stdout);
    let pivot = stdout
        .split("s1 — statements per second by phase, 2 threads")
        .nth(1)
        .unwrap_or_else(|| panic!("no S1 table in {stdout}"));
    let lines: Vec<&str> = pivot.lines().collect();
    assert!(
        lines[1].starts_with("| phase ")
            && lines[1].contains("| MyISAM qps | InnoDB qps | MEMORY qps | Aria qps |"),
        "{pivot}"
    );
    for (line, kind) in lines[3..10].iter().zip([
        "A login state",
        "B blog info",
        "C skin",
        "D skin",
        "E active",
        "F skin",
        "G skins",
    ]) {
        assert!(line.starts_with(&format!("| {kind}")), "{pivot}");
        let figures: Vec<f64> = line
            .split('|')
            .skip(2)
            .filter_map(|cell| cell.trim().parse().ok())
            .collect();
        assert_eq!(figures.len(), 4, "{line}");
        assert!(figures.iter().all(|&qps| qps > 0.0), "{line}");
    }
    std::fs::remove_file(json).unwrap();
    common::assert_nothing_left(&tmp);
}

#[test]
fn profiles_run_the_study_on_differently_configured_servers() {
    common::require_mariadb();
    let tmp = common::private_tmpdir("profiles");
    let json = tmp.with_extension("profiles.json");
    let output = common::enginebench(&tmp)
        .arg("run")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/profiles.toml"
        ))
        .args(["--time", "400ms", "--repeat", "3", "--json"])
        .arg(&json)
        .output()
        .unwrap();
    common::assert_success(&output);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("| threads | InnoDB (big pool) ev/s | InnoDB (big pool) p50/p95/p99 µs | InnoDB (tiny pool) ev/s |"), "{stdout}");
    let record: serde_json::Value = common::read_json(&json);
    let pools: Vec<(String, String)> = record["profiles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["name"].as_str().unwrap().to_string(),
                p["server"]["variables"]["innodb_buffer_pool_size"]
                    .as_str()
                    .unwrap()
                    .to_string(),
            )
        })
        .collect();
    assert_eq!(
        pools,
        [
            ("big pool".to_string(), "268435456".to_string()),
            ("tiny pool".to_string(), "6291456".to_string())
        ]
    );
    assert_eq!(
        record["profiles"][1]["server"]["command_line"][0], "/usr/sbin/mariadbd",
        "the profile's own server binary"
    );
    let cells = record["cells"].as_array().unwrap();
    assert_eq!(
        cells
            .iter()
            .map(|c| c["profile"].as_str().unwrap())
            .collect::<Vec<_>>(),
        [
            "big pool",
            "big pool",
            "big pool",
            "tiny pool",
            "tiny pool",
            "tiny pool"
        ]
    );
    // The small pool misses its cache; the large one does not, once loaded. Per event, so
    // that how many events this machine ran in 400 ms does not decide it: a slow machine
    // runs fewer reads, and misses fewer pages, in either pool.
    let misses = |cell: &serde_json::Value| {
        cell["server_status_delta"]["Innodb_buffer_pool_reads"]
            .as_i64()
            .unwrap_or(0) as f64
    };
    let events = |cell: &serde_json::Value| cell["events"].as_u64().unwrap().max(1) as f64;
    assert!(
        misses(&cells[3]) / events(&cells[3])
            > 10.0 * misses(&cells[0]).max(1.0) / events(&cells[0]),
        "{} misses in {} events vs {} in {}",
        misses(&cells[3]),
        events(&cells[3]),
        misses(&cells[0]),
        events(&cells[0])
    );
    // The two profiles of the stored run, compared cell by cell with a verdict column.
    let compare = common::enginebench(&tmp)
        .args(["compare", "latest#big pool", "latest#tiny pool"])
        .output()
        .unwrap();
    common::assert_success(&compare);
    let table = String::from_utf8_lossy(&compare.stdout);
    let row = table
        .lines()
        .find(|l| l.starts_with("| point reads InnoDB threads=2 "))
        .unwrap_or_else(|| panic!("{table}"));
    assert!(row.contains("| events/s (higher is better) |"), "{row}");
    assert!(row.contains("(n=3)"), "{row}");
    let verdict = row
        .trim_end()
        .trim_end_matches('|')
        .rsplit('|')
        .next()
        .unwrap()
        .trim();
    assert!(
        verdict.starts_with("undecided after 3 repeats: ")
            || verdict == "equivalent within ±5%"
            || verdict.ends_with("× better")
            || verdict.ends_with("× worse"),
        "{row}"
    );
    std::fs::remove_file(json).unwrap();
    common::assert_nothing_left(&tmp);
}

#[test]
fn study_s3_times_its_job_per_step_on_memory_and_innodb_on_disk_and_tmpfs() {
    common::require_mariadb();
    let tmp = common::private_tmpdir("s3");
    let json = tmp.with_extension("s3.json");
    let output = common::enginebench(&tmp)
        .args(["run", "s3", "--scale", "0.05", "--json"])
        .arg(&json)
        .output()
        .unwrap();
    common::assert_success(&output);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("s3 lifecycle — ms per run, min / avg / max of the kept runs (10 warm-up runs discarded)"), "{stdout}");
    for setup in [
        "MEMORY (disk)",
        "InnoDB (disk)",
        "MEMORY (tmpfs)",
        "InnoDB (tmpfs)",
    ] {
        assert!(
            stdout.contains(&format!("| {setup}")),
            "{setup} missing:\n{stdout}"
        );
    }
    // MEMORY's footprint is its allocation, not its rows: the table says so.
    assert!(
        stdout.contains("| categories | MEMORY |")
            && stdout.contains("MEMORY: data and index MB are what the server allocated"),
        "{stdout}"
    );
    let record: serde_json::Value = common::read_json(&json);
    let runs = record["sequences"].as_array().unwrap();
    assert_eq!(runs.len(), 4 * 20);
    assert_eq!(
        runs.iter().filter(|r| r["discarded"] == true).count(),
        4 * 10
    );
    for run in runs {
        assert!(run["error"].is_null(), "{run}");
        let steps: Vec<&str> = run["steps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            steps,
            ["create+import", "index", "select", "join", "update", "drop"]
        );
    }
    let tmpfs = record["profiles"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "tmpfs")
        .unwrap();
    assert_eq!(tmpfs["server"]["datadir_on_tmpfs"], true);
    std::fs::remove_file(json).unwrap();
    common::assert_nothing_left(&tmp);
}

#[test]
fn study_s2_runs_sysbenchs_transaction_under_three_memory_profiles() {
    common::require_mariadb();
    let tmp = common::private_tmpdir("s2");
    let json = tmp.with_extension("s2.json");
    let (_, record) = run_with_json(
        &tmp,
        &json,
        &[
            "run",
            "s2",
            "--scale",
            "0.0005",
            "--repeat",
            "1",
            "--threads",
            "4",
            "--loops",
            "20",
            "--warmup",
            "0s",
        ],
    );
    let cells = record["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 2 * 2 * 3, "2 phases × 2 engines × 3 profiles");
    for cell in cells
        .iter()
        .filter(|c| c["variant"] == "complex (read-write transactions)")
    {
        assert_eq!(cell["outcome"], "completed", "{}", cell["error"]);
        let delta = &cell["server_status_delta"];
        let count = |counter: &str| delta[counter].as_f64().unwrap_or(0.0);
        let commits = count("Com_commit");
        assert_eq!(commits, 80.0, "4 threads × 20 loops, each committed once");
        // sysbench's read-write mix per committed transaction; an attempt rolled back by a
        // deadlock (retried, counted as failed) sent part of it too.
        let attempts = commits + cell["failed_events"].as_f64().unwrap();
        for (counter, per_transaction) in [("Com_select", 14.0), ("Com_update", 2.0)] {
            let sent = count(counter);
            assert!(
                sent >= per_transaction * commits && sent <= per_transaction * attempts,
                "{counter} {sent} for {commits} commits in {attempts} attempts"
            );
        }
    }
    let pools: Vec<&str> = record["profiles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            p["server"]["variables"]["innodb_buffer_pool_size"]
                .as_str()
                .unwrap()
        })
        .collect();
    assert_eq!(pools, ["2147483648", "6291456", "104857600"]);
    // sysbench's report from the saved record: statements grouped by their SQL as sysbench
    // groups its own, per transaction 14 reads, 4 writes, BEGIN + COMMIT.
    let report = common::enginebench_no_tmpdir()
        .args(["report", "--format", "sysbench"])
        .arg(&json)
        .output()
        .unwrap();
    assert!(report.status.success());
    let report = String::from_utf8_lossy(&report.stdout);
    let complex: Vec<&str> = report
        .split("enginebench ")
        .filter(|part| part.starts_with("complex (read-write transactions) on InnoDB"))
        .collect();
    assert_eq!(complex.len(), 3, "one per profile: {report}");
    for part in complex {
        let figure = |label: &str| -> f64 {
            part.lines()
                .find_map(|line| line.trim().strip_prefix(label))
                .and_then(|rest| rest.split_whitespace().next())
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("no {label} in {part}"))
        };
        let transactions = figure("transactions:");
        assert_eq!(transactions, 80.0, "{part}");
        // Statements of attempts rolled back by a deadlock count too, as in sysbench: the
        // exact mix per committed transaction, and at most per attempt.
        let attempts = transactions + figure("ignored errors:");
        for (label, per_transaction) in [("read:", 14.0), ("write:", 4.0), ("other:", 2.0)] {
            let sent = figure(label);
            assert!(
                sent >= per_transaction * transactions && sent <= per_transaction * attempts,
                "{label} {sent} for {transactions} transactions in {attempts} attempts: {part}"
            );
        }
    }
    std::fs::remove_file(json).unwrap();
    common::assert_nothing_left(&tmp);
}

#[test]
fn copy_parameters_name_earlier_ones_of_the_same_event() {
    let base = "name = \"x\"\ntime = \"1s\"\nthreads = [1]\n[[phases]]\nkind = \"run\"\nname = \"r\"\n[[phases.events]]\nname = \"e\"\nstatements = [\n";
    let ok = format!("{base}  {{ name = \"a\", sql = \"SELECT ?, ?\", params = [{{ int = [1, 9] }}, {{ copy = \"a.1\", add = 5 }}] }},\n  {{ name = \"b\", sql = \"SELECT ?\", params = [{{ copy = \"a.2\" }}] }},\n]\n");
    assert!(load_scenario(&ok, "t.toml", &[], None).is_ok());
    let later = format!(
        "{base}  {{ name = \"a\", sql = \"SELECT ?\", params = [{{ copy = \"b.1\" }}] }},\n]\n"
    );
    assert_eq!(
        load_scenario(&later, "t.toml", &[], None)
            .unwrap_err()
            .to_string(),
        "t.toml:10:45: copy 'b.1': no statement 'b' before this one in the event"
    );
    let itself = format!(
        "{base}  {{ name = \"a\", sql = \"SELECT ?\", params = [{{ copy = \"a.1\" }}] }},\n]\n"
    );
    assert_eq!(
        load_scenario(&itself, "t.toml", &[], None)
            .unwrap_err()
            .to_string(),
        "t.toml:10:45: copy 'a.1': that statement binds only 0 parameter(s) before this point"
    );
}

#[test]
fn a_single_thread_count_needs_no_brackets() {
    let text = "name = \"x\"\nthreads = 4\nloops = 10\n[[tables]]\nname = \"t\"\nrows = 10\ncreate = \"CREATE TABLE t (id INT PRIMARY KEY)\"\ncolumns = { id = { sequence = 1 } }\n[[phases]]\nkind = \"run\"\nname = \"a\"\nthreads = 2\n[[phases.events]]\nname = \"e\"\nstatements = [{ name = \"s\", sql = \"SELECT 1\" }]\n[[phases]]\nkind = \"run\"\nname = \"b\"\n[[phases.events]]\nname = \"e\"\nstatements = [{ name = \"s\", sql = \"SELECT 1\" }]\n";
    let scenario = load_scenario(text, "t.toml", &[], None).unwrap();
    let threads: Vec<Vec<u32>> = scenario
        .phases
        .iter()
        .map(|phase| match phase {
            enginebench::scenario::file::Phase::Run { threads, .. } => threads.clone(),
            _ => Vec::new(),
        })
        .collect();
    assert_eq!(threads, vec![vec![2], vec![4]]);
}
