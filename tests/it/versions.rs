//! Server builds other than the system's: `enginebench server get` fetches MariaDB 11.8
//! (Debian trixie) and MySQL (Debian sid) into the cache from the machine's own mirror
//! (fetched once, cached across runs), and each starts as a throwaway server from its own
//! tree — its own installer, basedir and plugins — next to the system's MariaDB. A fetch
//! that fails names its cause and leaves nothing in the cache.

use crate::common;

use mysql::prelude::Queryable;

use enginebench::server::{builds, ServerOptions};
use enginebench::targets::{ensure_database, Observe, Reach, Throwaway};

/// Fetches `name` unless it is cached, as `make test` on a fresh machine must.
fn fetched(name: &str) {
    let output = common::enginebench_no_tmpdir()
        .args(["server", "get", name])
        .output()
        .unwrap();
    common::assert_success(&output);
    assert!(
        String::from_utf8_lossy(&output.stdout).starts_with(&format!("{name}: ")),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
}

/// VERSION(), the engines offered, and what the datadir says made it.
fn started(build: &str) -> (String, Vec<String>, String) {
    let options = ServerOptions {
        server_bin: Some(build.into()),
        ..ServerOptions::default()
    };
    let target = Throwaway::start(&options).unwrap();
    ensure_database(&target, "enginebench").unwrap();
    let mut conn = target.admin_spec().connect().unwrap();
    let version: String = conn.query_first("SELECT VERSION()").unwrap().unwrap();
    let engines: Vec<String> = conn
        .query(
            "SELECT ENGINE FROM information_schema.ENGINES WHERE SUPPORT IN ('YES', 'DEFAULT') ORDER BY ENGINE",
        )
        .unwrap();
    let datadir = target.datadir().unwrap();
    // mariadb-install-db leaves the version that made the datadir; MySQL's own initialise
    // leaves its data dictionary.
    let made_by = std::fs::read_to_string(datadir.join("mariadb_upgrade_info"))
        .or_else(|_| std::fs::read_to_string(datadir.join("mysql_upgrade_info")))
        .unwrap_or_else(|_| {
            if datadir.join("mysql.ibd").exists() {
                "mysqld --initialize".into()
            } else {
                String::new()
            }
        });
    (
        version,
        engines,
        made_by.trim_matches(char::from(0)).trim().to_string(),
    )
}

#[test]
fn three_builds_each_start_from_their_own_tree() {
    common::require_mariadb();
    fetched("mariadb-11.8");
    fetched("mysql");
    let (system, system_engines, system_made) = started("system");
    let (mariadb, mariadb_engines, mariadb_made) = started("mariadb-11.8");
    let (mysql, mysql_engines, mysql_made) = started("mysql");
    assert!(system.starts_with("10.11."), "{system}");
    assert!(mariadb.starts_with("11.8."), "{mariadb}");
    assert!(!mysql.contains("MariaDB"), "{mysql}");
    // Each datadir was made by its own build's installer.
    assert!(
        system.starts_with(&system_made),
        "{system} vs {system_made}"
    );
    assert!(
        mariadb.starts_with(&mariadb_made),
        "{mariadb} vs {mariadb_made}"
    );
    assert_eq!(mysql_made, "mysqld --initialize");
    // Each MariaDB loads its own RocksDB; MySQL offers no Aria and no RocksDB.
    for engines in [&system_engines, &mariadb_engines] {
        assert!(engines.iter().any(|e| e == "ROCKSDB"), "{engines:?}");
        assert!(engines.iter().any(|e| e == "Aria"), "{engines:?}");
    }
    assert!(
        !mysql_engines.iter().any(|e| e == "Aria" || e == "ROCKSDB"),
        "{mysql_engines:?}"
    );
    assert!(
        mysql_engines.iter().any(|e| e == "InnoDB"),
        "{mysql_engines:?}"
    );

    // A sysbench workload runs on MySQL through the whole pipeline, and the record names it.
    let tmp = common::private_tmpdir("versions");
    let json = tmp.with_extension("versions.json");
    let output = common::enginebench(&tmp)
        .args([
            "run",
            "oltp_point_select",
            "--server-bin",
            "mysql",
            "--engines",
            "innodb,myisam",
            // One round: this is about MySQL, not about deciding.
            "--repeat",
            "1",
            "--time",
            "1s",
            "--table-size",
            "1000",
            // MySQL has no max_statement_time: the timeout must be set its own way.
            "--query-timeout",
            "5s",
            "--no-db",
            "--json",
        ])
        .arg(&json)
        .output()
        .unwrap();
    common::assert_success(&output);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(
            "--query-timeout on MySQL: its max_execution_time bounds read-only SELECTs only"
        ),
        "{stderr}"
    );
    let record = common::read_json(&json);
    assert_eq!(record["server"]["version"], mysql.as_str());
    assert_eq!(record["server"]["flavour"], "mysql");
    for cell in record["cells"].as_array().unwrap() {
        assert_eq!(cell["outcome"], "completed", "{cell}");
        assert!(cell["events"].as_u64().unwrap() > 0);
    }
    let listed = common::enginebench_no_tmpdir()
        .args(["server", "list"])
        .output()
        .unwrap();
    let listed = common::succeeded(listed);
    for line in [&mariadb, &mysql] {
        assert!(listed.contains(line.split(' ').next().unwrap()), "{listed}");
    }
    common::assert_nothing_left(&tmp);
}

#[test]
fn servers_run_a_study_side_by_side() {
    common::require_mariadb();
    fetched("mariadb-11.8");
    fetched("mysql");
    let tmp = common::private_tmpdir("servers");
    let json = tmp.with_extension("servers.json");
    let output = common::enginebench(&tmp)
        .args([
            "run",
            "oltp_point_select",
            "--servers",
            "system,mariadb-11.8,mysql",
            "--engines",
            "innodb,aria",
            // One round: one cell per build and engine.
            "--repeat",
            "1",
            "--time",
            "1s",
            "--table-size",
            "1000",
            "--no-db",
            "--json",
        ])
        .arg(&json)
        .output()
        .unwrap();
    let stdout = common::succeeded(output);
    let record = common::read_json(&json);
    let profiles: Vec<(String, String, String)> = record["profiles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["name"].as_str().unwrap().to_string(),
                p["server"]["version"].as_str().unwrap().to_string(),
                p["server"]["flavour"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(profiles.len(), 3, "{profiles:?}");
    assert_eq!(profiles[0].0, "system");
    assert!(profiles[0].1.starts_with("10.11."), "{profiles:?}");
    assert!(profiles[1].1.starts_with("11.8."), "{profiles:?}");
    assert_eq!(profiles[2].2, "mysql", "{profiles:?}");
    // Aria is not offered by MySQL: that cell says so, every other one ran.
    let cells = record["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 6);
    for cell in cells {
        let expected = if cell["profile"] == "mysql" && cell["engine"] == "aria" {
            "not_offered"
        } else {
            "completed"
        };
        assert_eq!(cell["outcome"], expected, "{cell}");
    }
    let not_offered = cells
        .iter()
        .find(|c| c["outcome"] == "not_offered")
        .unwrap();
    assert!(not_offered["error"]
        .as_str()
        .unwrap()
        .starts_with("Aria is not offered by mysql 9."));
    assert_eq!(record["status"], "completed");
    assert!(stdout.contains("(mariadb-11.8)"), "{stdout}");
    // MySQL's counters map like MariaDB's: its InnoDB cache and log counters fill the
    // counters table (no "-" where MariaDB has figures) and its why line.
    let mysql_innodb = cells
        .iter()
        .find(|c| c["profile"] == "mysql" && c["engine"] == "innodb")
        .unwrap();
    for counter in ["Innodb_buffer_pool_read_requests", "Handler_read_key"] {
        assert!(
            mysql_innodb["server_status_delta"][counter]
                .as_i64()
                .unwrap_or(0)
                > 0,
            "{counter}: {}",
            mysql_innodb["server_status_delta"]
        );
    }
    let row = stdout
        .lines()
        .find(|l| l.contains("| InnoDB (mysql)") && l.contains("row-lock"))
        .unwrap_or_else(|| panic!("no counters row for InnoDB on mysql: {stdout}"));
    let cells_of_row: Vec<&str> = row.split('|').map(str::trim).collect();
    assert!(!cells_of_row[4..].contains(&"-"), "{row}");
    // Every build explains the same statement in the same words (MySQL 9 is asked for
    // its version-1 JSON plans, the format MariaDB shares).
    for evidence in record["statement_evidence"].as_array().unwrap() {
        if evidence["engine"] != "innodb" {
            continue;
        }
        let table = &evidence["statements"][0]["plan"]["tables"][0];
        assert_eq!(table["access_type"], "const", "{evidence}");
        assert_eq!(table["key"], "PRIMARY", "{evidence}");
        assert_eq!(evidence["statements"][0]["counters"]["rows_examined"], 1.0);
    }
    common::assert_nothing_left(&tmp);
}

#[test]
fn builds_that_cannot_be_had_say_why_and_leave_nothing() {
    let cache = common::private_tmpdir("server-cache");
    // A mirror nobody answers on: the fetch fails while reading the package lists.
    let output = common::enginebench_no_tmpdir()
        .args(["server", "get", "mariadb-11.8"])
        .env("XDG_CACHE_HOME", &cache)
        .env("ENGINEBENCH_APT_MIRROR", "http://127.0.0.1:9/debian")
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(
            "Error: cannot read Debian trixie's package lists from http://127.0.0.1:9/debian"
        ),
        "{stderr}"
    );
    let servers = cache.join("enginebench/servers");
    let left: Vec<_> = std::fs::read_dir(&servers)
        .map(|d| d.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(left.is_empty(), "left in the cache: {left:?}");

    let run = |build: &str| {
        let output = common::enginebench_no_tmpdir()
            .args(["run", "oltp_point_select", "--server-bin", build, "--no-db"])
            .env("XDG_CACHE_HOME", &cache)
            .output()
            .unwrap();
        assert!(!output.status.success());
        String::from_utf8_lossy(&output.stderr).into_owned()
    };
    assert!(
        run("mysql").contains("Error: server build 'mysql' is not fetched yet: run `enginebench server get mysql` first"),
        "{}",
        run("mysql")
    );
    assert!(
        run("mariadb-99").contains("'mariadb-99' names no server build"),
        "{}",
        run("mariadb-99")
    );
    let unknown = common::enginebench_no_tmpdir()
        .args(["server", "get", "postgres"])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&unknown.stderr).contains(
        "no server build named 'postgres': `enginebench server get` knows mariadb-11.8, mysql"
    ));
    assert!(builds::known_names().contains(&"mysql"));
    std::fs::remove_dir_all(&cache).unwrap();
}

/// Two processes (two runs, two tests, two agents on one host) fetching the same build on
/// an empty cache: one fetches, the other waits for it and finds it there; both succeed and
/// the cache holds the one build and nothing else.
#[test]
fn two_processes_fetching_one_build_on_an_empty_cache_both_succeed() {
    let cache = common::private_tmpdir("fetch-twice");
    let spawn = || {
        common::enginebench_no_tmpdir()
            .args(["server", "get", "mariadb-11.8"])
            .env("XDG_CACHE_HOME", &cache)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (first, second) = (spawn(), spawn());
    for child in [first, second] {
        let output = child.wait_with_output().unwrap();
        common::assert_success(&output);
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(stdout.starts_with("mariadb-11.8: "), "{stdout}");
    }
    let servers = cache.join("enginebench/servers");
    let left: Vec<_> = std::fs::read_dir(&servers)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, ["mariadb-11.8"], "the cache holds the build alone");
    std::fs::remove_dir_all(&cache).unwrap();
}
