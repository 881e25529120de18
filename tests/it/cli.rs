//! The command line as a user meets it: exact error lines for bad input, JSON on stdout,
//! tables on the terminal.

use crate::common;

use assert_cmd::Command;
use predicates::prelude::*;

fn enginebench(tmpdir: &std::path::Path) -> Command {
    let mut command = Command::cargo_bin("enginebench").unwrap();
    command
        .env("TMPDIR", tmpdir)
        .env("ENGINEBENCH_DB", common::store_of(tmpdir))
        .env("ENGINEBENCH_DETAIL", "1")
        .env_remove("ENGINEBENCH_FAULT");
    command
}

fn last_stderr_line(output: &std::process::Output) -> String {
    String::from_utf8_lossy(&output.stderr)
        .lines()
        .last()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn an_unknown_engine_name_is_refused_before_anything_starts() {
    let tmp = common::private_tmpdir("bad-engine");
    let output = enginebench(&tmp)
        .args(["run", "s0", "--engines", "myisam,falcon"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(
        stderr.lines().next().unwrap(),
        "error: invalid value 'falcon' for '--engines <ENGINES>': unknown engine 'falcon' (known: myisam, innodb, aria, memory, rocksdb)"
    );
    common::assert_nothing_left(&tmp);
}

#[test]
fn an_engine_the_server_lacks_is_refused_before_any_table_is_made() {
    common::require_mariadb();
    let tmp = common::private_tmpdir("engine-missing");
    // With an explicit --server-bin, enginebench loads no plugins: RocksDB is absent.
    let output = enginebench(&tmp)
        .args([
            "run",
            "s0",
            "--engines",
            "innodb,rocksdb",
            "--server-bin",
            "/usr/sbin/mariadbd",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        last_stderr_line(&output),
        "Error: engine RocksDB is not available on this server (it has: Aria, CSV, InnoDB, MEMORY, MRG_MyISAM, MyISAM, PERFORMANCE_SCHEMA, SEQUENCE); choose others with --engines, or load its plugin with --server-opt plugin_load_add=..."
    );
    assert!(!String::from_utf8_lossy(&output.stderr).contains("loading"));
    common::assert_nothing_left(&tmp);
}

#[test]
fn an_unreachable_dsn_names_the_cause_and_never_the_password() {
    let tmp = common::private_tmpdir("dsn");
    let output = enginebench(&tmp)
        .args(["run", "s0", "--dsn", "mysql://bench:hunter2@127.0.0.1:1"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        last_stderr_line(&output),
        "Error: cannot connect to mysql://bench:***@127.0.0.1:1: connection refused; check that the server is running and that --dsn is right"
    );
    let everything = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(!everything.contains("hunter2"));
    // Nothing was measured: the store lists no empty run for it.
    assert!(!everything.contains("stored as run"), "{everything}");
    let runs = enginebench(&tmp).arg("runs").output().unwrap();
    let runs =
        String::from_utf8_lossy(&runs.stdout).into_owned() + &String::from_utf8_lossy(&runs.stderr);
    assert!(runs.contains("holds no runs yet"), "{runs}");
    common::assert_nothing_left(&tmp);
}

#[test]
fn a_missing_server_binary_names_the_fix() {
    let tmp = common::private_tmpdir("no-binary");
    let output = enginebench(&tmp)
        .args(["run", "s0", "--server-bin", "/nonexistent/mariadbd"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        last_stderr_line(&output),
        "Error: /nonexistent/mariadbd not found: install it with `apt-get install mariadb-server` or pass --server-bin PATH"
    );
    common::assert_nothing_left(&tmp);
}

#[test]
fn an_unknown_study_lists_the_built_in_ones() {
    let tmp = common::private_tmpdir("no-study");
    enginebench(&tmp)
        .args(["run", "s9"])
        .assert()
        .code(1)
        .stderr(
            "Error: unknown study 's9': a sysbench Lua script is path/to/script.lua; the built-in studies are s0, s1, s2, s3, s4, accounts, cluster; the sysbench workloads oltp_point_select, oltp_read_only, oltp_read_write, oltp_write_only, oltp_update_index, oltp_update_non_index, oltp_insert, oltp_delete, select_random_points, select_random_ranges, bulk_insert; TPC-C is tpcc; what a crash loses is durability; YCSB is ycsb; the insert benchmark is ibench (see `enginebench list`)\n",
        );
    common::assert_nothing_left(&tmp);
}

#[test]
fn a_bad_server_option_reports_the_servers_complaint_and_leaves_nothing() {
    common::require_mariadb();
    let tmp = common::private_tmpdir("bad-opt");
    let output = enginebench(&tmp)
        .args(["run", "s0", "--server-opt", "no_such_variable=1"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("Error: the throwaway server exited during start-up"),
        "{stderr}"
    );
    assert!(
        stderr.contains("unknown variable 'no_such_variable=1'"),
        "{stderr}"
    );
    common::assert_nothing_left(&tmp);
}

#[test]
fn json_on_stdout_is_one_document_with_a_schema_version_and_tables_go_to_stderr() {
    common::require_mariadb();
    let tmp = common::private_tmpdir("json");
    let output = enginebench(&tmp)
        .args([
            "run",
            "s0",
            "--rows",
            "500",
            "--threads",
            "1,2",
            "--loops",
            "10",
            "--repeat",
            "1",
            "--variants",
            "select+update",
            "--json",
            "-",
        ])
        .output()
        .unwrap();
    common::assert_success(&output);
    let record: serde_json::Value =
        serde_json::from_slice(&output.stdout).expect("stdout is one JSON document");
    assert_eq!(
        record["schema_version"],
        enginebench::results::SCHEMA_VERSION
    );
    assert_eq!(record["study"], "s0");
    assert_eq!(record["status"], "completed");
    assert_eq!(record["cells"].as_array().unwrap().len(), 4);
    assert_eq!(record["parameters"]["parameters"]["rows"], "500");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("s0 select+update — wall ms for all threads to finish 10 loops"),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "| threads | MyISAM ms | MyISAM p50/p95/p99 µs | InnoDB ms | InnoDB p50/p95/p99 µs |"
        ),
        "{stderr}"
    );
    common::assert_nothing_left(&tmp);
}

#[test]
fn list_names_the_built_in_studies() {
    let tmp = common::private_tmpdir("list");
    enginebench(&tmp)
        .arg("list")
        .assert()
        .success()
        .stdout(predicate::str::starts_with("SCRIPT.lua ").and(predicate::str::contains("\ns0 ")));
    common::assert_nothing_left(&tmp);
}

#[test]
fn s4_compares_every_load_method_and_ranks_them_against_the_slowest() {
    common::require_mariadb();
    let tmp = common::private_tmpdir("s4");
    let output = enginebench(&tmp)
        .args([
            "run",
            "s4",
            "--rows",
            "3000",
            "--engines",
            "myisam,innodb",
            "--json",
            "-",
        ])
        .output()
        .unwrap();
    common::assert_success(&output);
    let record: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let loads = record["loads"].as_array().unwrap();
    assert_eq!(loads.len(), 7 * 2, "7 default methods × 2 engines");
    for load in loads {
        assert_eq!(load["outcome"]["rows"], 3000, "{load}");
        assert!(load["footprint"]["data_bytes"].as_u64().unwrap() > 0);
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("s4 bulk load — seconds to load 3000 rows into s4, median of 1 repeat"),
        "{stderr}"
    );
    // The slowest method on each engine is the reference: exactly 1.0× there.
    let table: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("| row-autocommit"))
        .collect();
    assert_eq!(table.len(), 1, "{stderr}");
    common::assert_nothing_left(&tmp);
}

#[test]
fn a_reader_that_stops_early_is_not_an_error() {
    // As in `enginebench list | head -1`: stdout closed before enginebench writes.
    let mut child = common::enginebench_no_tmpdir()
        .arg("list")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let output = child.wait_with_output().unwrap();
    common::assert_success(&output);
    assert!(!String::from_utf8_lossy(&output.stderr).contains("panicked"));
}

#[test]
fn warm_up_repeats_are_kept_but_not_reported_and_cold_cells_restart_the_server() {
    common::require_mariadb();
    let tmp = common::private_tmpdir("cold");
    let output = enginebench(&tmp)
        .args([
            "run",
            "s0",
            "--rows",
            "500",
            "--threads",
            "1",
            "--loops",
            "3",
        ])
        .args([
            "--repeat",
            "2",
            "--warmup-repeats",
            "1",
            "--cold",
            "--phases",
            "select",
        ])
        .args(["--json", "-"])
        .output()
        .unwrap();
    common::assert_success(&output);
    let record: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let cells = record["cells"].as_array().unwrap();
    let warmups: Vec<bool> = cells
        .iter()
        .map(|c| c["warmup_repeat"].as_bool().unwrap_or(false))
        .collect();
    assert_eq!(warmups, [true, true, false, false, false, false]);
    let restarts: Vec<&str> = record["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["name"] == "cold_restart")
        .map(|s| s["detail"].as_str().unwrap())
        .collect();
    assert_eq!(restarts.len(), 6, "one cold start per cell");
    // As root (CI), the page cache is dropped too.
    if unsafe { libc::geteuid() } == 0 {
        assert!(restarts
            .iter()
            .all(|d| *d == "server restarted, page cache dropped"));
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("s0 select — wall ms for all threads to finish 3 loops (lower is better), best / median of 2 repeats"),
        "warm-up repeats are not counted: {stderr}"
    );
    common::assert_nothing_left(&tmp);
}

/// Shell completions and the man pages come from the command line's own definitions: every
/// subcommand and flag is in them, the bash script parses, and the pages are roff.
#[test]
fn completions_and_man_pages_are_generated_from_the_cli() {
    let tmp = common::private_tmpdir("docs");
    let run = |args: &[&str]| {
        let output = enginebench(&tmp).args(args).output().unwrap();
        assert!(output.status.success(), "{args:?}: {output:?}");
        String::from_utf8(output.stdout).unwrap()
    };
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let script = run(&["completions", shell]);
        for word in ["replay", "threads", "format", "dsn", "events"] {
            assert!(script.contains(word), "{shell} completions lack {word}");
        }
    }
    let bash = tmp.join("enginebench.bash");
    std::fs::write(&bash, run(&["completions", "bash"])).unwrap();
    let parsed = std::process::Command::new("bash")
        .arg("-n")
        .arg(&bash)
        .status()
        .unwrap();
    assert!(
        parsed.success(),
        "the bash completion script does not parse"
    );

    let page = run(&["man"]);
    assert!(page.contains(".TH enginebench 1"), "{page}");
    assert!(page.contains("enginebench\\-replay(1)"), "{page}");
    let pages = tmp.join("man1");
    run(&["man", "--dir", pages.to_str().unwrap()]);
    let run_page = std::fs::read_to_string(pages.join("enginebench-run.1")).unwrap();
    assert!(run_page.contains(".TH enginebench-run 1"), "{run_page}");
    assert!(run_page.contains("\\-\\-threads"), "{run_page}");
    assert!(pages.join("enginebench-server-get.1").is_file());
    std::fs::remove_file(&bash).unwrap();
    std::fs::remove_dir_all(&pages).unwrap();
    common::assert_nothing_left(&tmp);
}
