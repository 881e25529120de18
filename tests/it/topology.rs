//! Topologies on real servers: a primary with replicas, a Galera cluster and a Spider head
//! over backends are started for real from a scenario's profile, joined (replicas running
//! with the heartbeat arriving, Galera's cluster size, Spider reading both backends), the
//! statements the driver sent equal to the `Com_stmt_execute` deltas of the nodes that
//! served them (and zero on the others), a killed Galera node recorded with its recovery
//! time while the run goes on, and nothing left behind on success, failure or Ctrl-C.

use crate::common;

use serde_json::Value;
use std::path::Path;

const TABLE: &str = r#"
[[tables]]
name = "t"
rows = 2000
create = "CREATE TABLE t (id INT NOT NULL PRIMARY KEY, v INT NOT NULL DEFAULT 0)"
columns = { id = { sequence = 1 }, v = { int = [1, 100] } }
"#;

const UPDATE: &str = r#"
[[phases.events]]
name = "update"
statements = [{ name = "update", sql = "UPDATE t SET v = v + 1 WHERE id = ?", params = [{ ref = "t.id" }] }]
"#;

const POINT: &str = r#"
[[phases.events]]
name = "point"
statements = [{ name = "point", sql = "SELECT v FROM t WHERE id = ?", params = [{ ref = "t.id" }] }]
"#;

fn run_scenario(dir: &Path, name: &str, toml: &str, extra: &[&str]) -> Value {
    let file = dir.with_extension(format!("{name}.toml"));
    std::fs::write(&file, toml).unwrap();
    let json = dir.with_extension(format!("{name}.json"));
    let output = common::enginebench(dir)
        .arg("run")
        .arg(&file)
        .args(["--json", json.to_str().unwrap(), "--no-db"])
        .args(extra)
        .output()
        .unwrap();
    common::assert_success(&output);
    let record = common::read_json(&json);
    let _ = std::fs::remove_file(&file);
    let _ = std::fs::remove_file(&json);
    record
}

/// Statements the driver sent in a cell (succeeded and failed).
fn statements_sent(cell: &Value) -> f64 {
    cell["queries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| q["count"].as_f64().unwrap() + q["failed"].as_f64().unwrap())
        .sum()
}

fn node<'a>(cell: &'a Value, name: &str) -> &'a Value {
    cell["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["name"] == name)
        .unwrap_or_else(|| panic!("no node {name} in {}", cell["nodes"]))
}

fn executed(node: &Value) -> f64 {
    node["status_delta"]["com_stmt_execute"]
        .as_f64()
        .unwrap_or(0.0)
}

/// The nodes that took connections served every statement sent; the others none.
fn assert_counts_match(cell: &Value) {
    let sent = statements_sent(cell);
    assert!(sent > 0.0, "the cell ran nothing: {cell}");
    let mut served = 0.0;
    for node in cell["nodes"].as_array().unwrap() {
        if node["connections"].as_u64().unwrap() > 0 {
            assert!(
                executed(node) > 0.0,
                "a node with connections served nothing: {node}"
            );
            served += executed(node);
        } else {
            assert_eq!(
                executed(node),
                0.0,
                "a node without connections executed: {node}"
            );
        }
    }
    assert_eq!(
        served, sent,
        "Com_stmt_execute over the serving nodes vs the driver's count"
    );
}

#[test]
fn replicas_take_the_reads_and_show_lag_under_writes() {
    common::require_mariadb();
    let dir = common::private_tmpdir("topology-replicas");
    let toml = format!(
        r#"name = "replicas"
title = "primary and two replicas"
engines = ["innodb"]
threads = [2]
time = "3s"

[[profiles]]
name = "replicated"
topology = {{ replicas = 2 }}
{TABLE}
[[phases]]
kind = "run"
name = "writes"
{UPDATE}
[[phases]]
kind = "run"
name = "reads"
threads = [4]
time = "2s"
read_from = "replicas"
{POINT}"#
    );
    let record = run_scenario(&dir, "replicas", &toml, &[]);
    let roles: Vec<&str> = record["profiles"][0]["server"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["primary", "replica", "replica"]);
    let cells = record["cells"].as_array().unwrap();
    let writes = &cells[0];
    assert_eq!(node(writes, "primary")["connections"], 2);
    assert_counts_match(writes);
    for replica in ["replica1", "replica2"] {
        // The heartbeat written on the primary arrived, late: replication runs.
        // (How many beats and how late depends on this machine's pace: beats arrived,
        // with some lag, is what replication running promises.)
        let lag = &node(writes, replica)["lag"];
        assert!(lag["samples"].as_u64().unwrap() >= 2, "{replica}: {lag}");
        assert!(lag["max_ms"].as_f64().unwrap() > 0.0, "{replica}: {lag}");
        // Lag over time: one point per beat, within the measured phase (its own clock).
        let series = lag["series"].as_array().unwrap();
        assert_eq!(series.len() as u64, lag["samples"].as_u64().unwrap());
        let wall_ms = writes["wall_ms"].as_f64().unwrap();
        assert!(
            series
                .iter()
                .all(|p| p[0].as_f64().unwrap() <= wall_ms + 1000.0),
            "{lag}"
        );
    }
    let reads = &cells[1];
    assert_eq!(node(reads, "primary")["connections"], 0);
    assert_eq!(node(reads, "replica1")["connections"], 2);
    assert_eq!(node(reads, "replica2")["connections"], 2);
    assert_counts_match(reads);
    common::assert_nothing_left(&dir);
}

#[test]
fn a_galera_node_killed_mid_cell_is_recorded_with_its_recovery_and_the_run_goes_on() {
    common::require_mariadb();
    let dir = common::private_tmpdir("topology-galera");
    let toml = format!(
        r#"name = "galera"
title = "three Galera nodes, one killed"
engines = ["innodb"]
threads = [3]

[[profiles]]
name = "galera"
topology = {{ galera = 3 }}
{TABLE}
[[phases]]
kind = "run"
name = "all writers"
time = "2s"
write_to = "all"
{UPDATE}
[[phases]]
kind = "run"
name = "node 3 killed"
time = "14s"
kill_node = {{ at = "3s", node = 3 }}
{UPDATE}
[[phases]]
kind = "run"
name = "after"
time = "1s"
{POINT}"#
    );
    // The survivors block writes until they evict the killed node (Galera's
    // evs.suspect_timeout, 5 s, and its checks): on a loaded machine that took over 10 s,
    // the default stall bound (measured: "back to 90% after 10.2 s"). The test is of
    // the recovery being recorded, not of how soon it comes.
    let record = run_scenario(
        &dir,
        "galera",
        &toml,
        &["--report-interval", "500ms", "--stall-timeout", "30s"],
    );
    let cells = record["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 3, "every phase ran: {cells:?}");
    let all_writers = &cells[0];
    for name in ["node1", "node2", "node3"] {
        let node = node(all_writers, name);
        assert_eq!(node["connections"], 1, "{node}");
        assert_eq!(node["status_delta"]["wsrep_cluster_size"], 3.0, "{node}");
    }
    assert_counts_match(all_writers);
    let killed = &cells[1];
    assert_eq!(killed["outcome"], "completed", "{}", killed["error"]);
    let fault = &killed["fault"];
    assert_eq!(fault["node"], "node3");
    // Killed when the phase said (never early; late only by the machine's pace), and well
    // inside the cell.
    let at = fault["killed_at_s"].as_f64().unwrap();
    let wall_s = killed["wall_ms"].as_f64().unwrap() / 1000.0;
    assert!(at >= 2.9 && at < wall_s, "killed at {at} s of {wall_s} s");
    assert!(
        fault["events_per_s_before"].as_f64().unwrap() > 0.0,
        "{fault}"
    );
    // When throughput came back is the machine's pace; that the record places it inside
    // the cell when it says it came back is the design's.
    if let Some(recovery) = fault["recovery_s"].as_f64() {
        assert!(
            recovery > 0.0 && at + recovery <= wall_s + 0.5,
            "throughput came back within the cell: {fault}"
        );
    }
    let sizes: Vec<u64> = fault["cluster_size"]
        .as_array()
        .unwrap()
        .iter()
        .map(|point| point[1].as_u64().unwrap())
        .collect();
    assert_eq!(sizes.first(), Some(&3), "{sizes:?}");
    assert_eq!(
        sizes.last(),
        Some(&2),
        "the cluster shrank to two: {sizes:?}"
    );
    // The study went on, on a fresh cluster.
    assert_eq!(cells[2]["outcome"], "completed", "{}", cells[2]["error"]);
    assert!(statements_sent(&cells[2]) > 0.0);
    common::assert_nothing_left(&dir);
}

#[test]
fn spider_shards_a_table_over_both_backends() {
    common::require_mariadb();
    if !Path::new("/usr/lib/mysql/plugin/ha_spider.so").exists() {
        panic!("Spider is missing: `make test` installs mariadb-plugin-spider");
    }
    let dir = common::private_tmpdir("topology-spider");
    let toml = format!(
        r#"name = "spider"
title = "Spider over two backends"
engines = ["innodb"]
threads = [2]
time = "2s"

[[profiles]]
name = "sharded"
topology = {{ spider = 2 }}
{TABLE}
[[phases]]
kind = "run"
name = "reads"
{POINT}"#
    );
    let record = run_scenario(&dir, "spider", &toml, &[]);
    let cell = &record["cells"][0];
    assert_eq!(node(cell, "head")["connections"], 2);
    assert_counts_match(cell);
    // Each point select went through the head to the backend holding its row: both
    // backends answered some.
    let mut on_backends = 0.0;
    for backend in ["backend1", "backend2"] {
        let selects = node(cell, backend)["status_delta"]["com_select"]
            .as_f64()
            .unwrap();
        assert!(
            selects > 0.0,
            "{backend} served no reads: {}",
            node(cell, backend)
        );
        on_backends += selects;
    }
    assert!(
        on_backends >= statements_sent(cell),
        "every read reached a backend: {on_backends} < {}",
        statements_sent(cell)
    );
    common::assert_nothing_left(&dir);
}

#[test]
fn a_topology_that_cannot_start_or_is_interrupted_leaves_nothing() {
    common::require_mariadb();
    let dir = common::private_tmpdir("topology-failures");
    // A Galera node whose provider does not exist: the first node fails to start.
    let output = common::enginebench(&dir)
        .args([
            "run",
            "oltp_point_select",
            "--topology",
            "galera=2",
            "--table-size",
            "100",
        ])
        .args(["--time", "1s", "--no-db"])
        .args(["--server-opt", "wsrep_provider=/nonexistent/libgalera.so"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("node1 did not start"), "{stderr}");
    common::assert_nothing_left(&dir);

    // Ctrl-C while the replicas' cell runs: every node goes.
    let dir = common::private_tmpdir("topology-sigint");
    let mut command = common::enginebench(&dir);
    command
        .args([
            "run",
            "oltp_read_write",
            "--topology",
            "replicas=2",
            "--table-size",
            "1000",
        ])
        .args(["--time", "30s", "--threads", "2", "--no-db"]);
    let mut running = common::Running::spawn(command);
    running.wait_for_line(|line| line.contains("ready: primary"));
    let pids: Vec<u32> = common::processes_mentioning(&dir.display().to_string())
        .into_iter()
        .filter(|(_, cmdline)| cmdline.contains("mariadbd"))
        .map(|(pid, _)| pid)
        .collect();
    assert_eq!(pids.len(), 3, "three nodes run");
    running.wait_for_line(|line| line.contains("loaded"));
    std::thread::sleep(std::time::Duration::from_millis(500));
    // SAFETY: signalling the child we started.
    unsafe {
        libc::kill(running.child.id() as libc::pid_t, libc::SIGINT);
    }
    let (status, _, stderr) = running.finish();
    assert!(
        !status.success() || stderr.contains("interrupted"),
        "{stderr}"
    );
    for pid in pids {
        assert!(!common::pid_alive(pid), "node {pid} outlived the command");
    }
    common::assert_nothing_left(&dir);
}

#[test]
fn several_dsns_spread_the_connections_over_the_hosts() {
    common::require_mariadb();
    // One server reached twice (TCP and its socket) stands in for two nodes of an
    // existing cluster: what matters here is where each connection goes.
    let server =
        enginebench::server::ThrowawayServer::start(&enginebench::server::ServerOptions::default())
            .unwrap();
    let dir = common::private_tmpdir("topology-dsns");
    let json = dir.with_extension("dsns.json");
    let tcp = format!("mysql://root@127.0.0.1:{}", server.port());
    let socket = format!(
        "mysql://root@localhost?socket={}",
        server.socket().display()
    );
    let output = common::enginebench(&dir)
        .args([
            "run",
            "oltp_point_select",
            "--table-size",
            "1000",
            "--threads",
            "4",
        ])
        .args(["--time", "1s", "--no-db", "--json", json.to_str().unwrap()])
        .args(["--dsn", &tcp, "--dsn", &socket])
        .output()
        .unwrap();
    common::assert_success(&output);
    let record = common::read_json(&json);
    let cell = &record["cells"][0];
    let sent = statements_sent(cell);
    for host in ["host1", "host2"] {
        let node = node(cell, host);
        assert_eq!(node["connections"], 2, "{node}");
        // Both hosts are the same server: each sees every statement.
        assert_eq!(executed(node), sent, "{node}");
    }
    let _ = std::fs::remove_file(&json);
    drop(server);
    common::assert_nothing_left(&dir);
}
