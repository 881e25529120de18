//! enginebench survives the system it tests: a server killed mid-cell, a full tmpfs, a
//! hanging query, engine limits, and a second Ctrl-C.

use crate::common;

use std::process::Command;

#[test]
fn a_server_killed_mid_cell_is_recorded_as_crashed_and_the_study_goes_on() {
    common::require_mariadb();
    let tmp = common::private_tmpdir("crash");
    let json = tmp.with_extension("crash.json");
    let mut command = common::enginebench(&tmp);
    command
        .args([
            "run",
            "s0",
            "--rows",
            "2000",
            "--threads",
            "2",
            "--time",
            "2s",
            "--repeat",
            "1",
        ])
        .args([
            "--variants",
            "select+update,select",
            "--report-interval",
            "200ms",
            "--json",
        ])
        .arg(&json);
    let mut run = common::Running::spawn(command);
    run.wait_for_line(|line| line.starts_with("[ "));
    let servers: Vec<u32> = common::processes_mentioning(&tmp.display().to_string())
        .into_iter()
        .filter(|(_, cmdline)| cmdline.contains("mariadbd"))
        .map(|(pid, _)| pid)
        .collect();
    assert_eq!(servers.len(), 1, "expected one server of ours");
    // SAFETY: killing the server our child started, as an engine crash would.
    unsafe {
        libc::kill(servers[0] as libc::pid_t, libc::SIGKILL);
    }
    let (status, stdout, stderr) = run.finish();
    assert_eq!(
        status.code(),
        Some(1),
        "a crashed cell makes the exit status non-zero\n{stderr}"
    );
    let record = common::read_json(&json);
    assert_eq!(
        record["status"], "completed",
        "the study went on after the crash"
    );
    let cells = record["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 4, "2 variants × 2 engines");
    assert_eq!(cells[0]["outcome"], "crashed");
    let error = cells[0]["error"].as_str().unwrap();
    assert!(
        error.starts_with("the server died during the cell ("),
        "{error}"
    );
    assert!(error.contains("its error log ends with:"), "{error}");
    for cell in &cells[1..] {
        assert_eq!(cell["outcome"], "completed", "{cell}");
    }
    let restarts = record["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["name"] == "server_restart")
        .count();
    assert_eq!(restarts, 1);
    assert_eq!(
        record["loads"].as_array().unwrap().len(),
        4,
        "both tables loaded again on the fresh server"
    );
    assert!(
        stderr.contains("starting a fresh server to go on with the remaining cells..."),
        "{stderr}"
    );
    assert!(stdout.contains("crashed"), "{stdout}");
    assert!(stdout.contains("cell 0 (select+update MyISAM threads=2 repeat 1) crashed: the server died during the cell"), "{stdout}");
    // The verdict names the crashed set-up and does not rank it.
    assert!(
        stdout.contains("- MyISAM in select+update at 2 threads: 1 of 1 repeats crashed (the server died during the cell)"),
        "{stdout}"
    );
    common::assert_nothing_left(&tmp);
    let _ = std::fs::remove_file(json);
}

#[test]
fn a_query_that_hangs_ends_the_cell_with_a_clear_error_and_the_server_stays_usable() {
    use enginebench::driver::{run_cell, CellConfig, CellOutcome, ProgressOnly, StopCondition};
    use enginebench::engine::Engine;
    use enginebench::load::{load_table, LoadPlan};

    use enginebench::server::ServerOptions;
    use enginebench::targets;
    use mysql::prelude::Queryable;
    use std::time::{Duration, Instant};

    common::require_mariadb();
    let target = targets::open(None, &ServerOptions::default(), "enginebench").unwrap();
    let spec = target.spec("enginebench");
    let scenario = common::s0_scenario(1000);
    load_table(
        &spec,
        &scenario.tables[0].load_spec(Engine::MyIsam, 1),
        &LoadPlan::fastest(),
        None,
        &|| true,
    )
    .unwrap();
    // Another session holds the table: every SELECT of the cell waits behind it.
    let mut locker = spec.connect().unwrap();
    locker.query_drop("LOCK TABLES t WRITE").unwrap();
    let workload = common::s0_workload(
        &scenario,
        "select",
        spec.with_query_timeout(Duration::from_secs(1)),
        1,
    );
    let config = CellConfig {
        threads: 2,
        stop: StopCondition {
            events_per_thread: Some(10),
            events_total: None,
            duration: None,
        },
        warmup: None,
        report_interval: Duration::from_millis(100),
        rate: None,
        interval_log: false,
        driver: None,
        stall: Default::default(),
        stages: Default::default(),
    };
    let started = Instant::now();
    let cell = run_cell(
        &workload,
        &config,
        &mut ProgressOnly(|_: &enginebench::driver::Progress| {}),
    )
    .unwrap();
    // A bound of minutes against a hang, not a speed claim: the 1 s timeout fires on any
    // machine, and the message below (the server's 1969) is what shows it did; a cell
    // that waited behind the lock without it would wait for the lock's own timeout.
    assert!(
        started.elapsed() < Duration::from_secs(120),
        "took {:?}",
        started.elapsed()
    );
    match &cell.outcome {
        CellOutcome::Failed(message) => {
            assert!(
                message
                    .contains("a query ran longer than --query-timeout and the server aborted it"),
                "{message}"
            );
            assert!(message.contains("1969"), "{message}");
        }
        other => panic!("expected a failed cell, got {other:?}"),
    }
    locker.query_drop("UNLOCK TABLES").unwrap();
    let rows: u64 = spec
        .connect()
        .unwrap()
        .query_first("SELECT COUNT(*) FROM t")
        .unwrap()
        .unwrap();
    assert_eq!(rows, 1000, "the server is still usable");
}

/// A small tmpfs, unmounted when dropped.
struct SmallTmpfs(std::path::PathBuf);

impl SmallTmpfs {
    fn mount(name: &str, size: &str) -> SmallTmpfs {
        let dir =
            std::env::temp_dir().join(format!("enginebench-tmpfs-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let status = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&dir)
            .status()
            .unwrap();
        assert!(status.success(), "this test mounts a small tmpfs and needs root: run the tests as root (as `make test` on CI does)");
        SmallTmpfs(dir)
    }
}

impl Drop for SmallTmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
        let _ = std::fs::remove_dir(&self.0);
    }
}

#[test]
fn a_full_tmpfs_is_reported_as_such_with_the_table_and_free_space() {
    common::require_mariadb();
    let tmpfs = SmallTmpfs::mount("full", "180m");
    let tmp = common::private_tmpdir("full");
    let json = tmp.with_extension("full.json");
    let output = common::enginebench(&tmp)
        .args([
            "run",
            "s0",
            "--engines",
            "innodb",
            "--rows",
            "1500000",
            "--threads",
            "1",
            "--loops",
            "10",
            "--repeat",
            "1",
        ])
        .arg("--server-dir")
        .arg(&tmpfs.0)
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    let error = stderr.lines().last().unwrap();
    assert!(
        error.starts_with("Error: loading t failed at rows "),
        "{error}"
    );
    assert!(error.contains("The table 't' is full"), "{error}");
    assert!(
        error.contains(&format!(
            "the filesystem holding the datadir ({}, tmpfs) is full (server: ",
            tmpfs.0.display()
        )),
        "{error}"
    );
    assert!(error.contains("error 28"), "{error}");
    assert!(error.contains("MB free before the load,"), "{error}");
    // What was measured is kept: the record names the failed load.
    let record = common::read_json(&json);
    assert_eq!(record["status"], "failed");
    assert!(record["loads"][0]["error"]
        .as_str()
        .unwrap()
        .contains("is full"));
    // The server and its directory are gone from the tmpfs too.
    assert!(
        common::leftovers(&tmpfs.0).is_empty(),
        "{:?}",
        common::leftovers(&tmpfs.0)
    );
    common::assert_nothing_left(&tmp);
    let _ = std::fs::remove_file(json);
}
