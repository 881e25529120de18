//! Several client hosts, one server: two agents (`run --agent K/2 --start-at T`, each its
//! own process) load one server together and `merge` adds their parts. Checked against
//! the server's own counters and against histograms added by hand; a skewed agent moves
//! the merged p99 the way the combined histogram says, not the way an average of
//! percentiles would; parts that do not belong together are refused.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime};

use enginebench::measure::interval_log;
use enginebench::measure::{decode_histogram, encode_histogram, new_histogram};
use enginebench::results::{merge, read_record, Part, RunRecord};
use enginebench::server::{ServerOptions, ThrowawayServer};
use mysql::prelude::Queryable;

const LOOPS: u64 = 50;

fn com_update(conn: &mut mysql::Conn) -> u64 {
    let row: Option<(String, u64)> = conn
        .query_first("SHOW GLOBAL STATUS LIKE 'Com_update'")
        .unwrap();
    row.unwrap().1
}

fn agent(tmp: &Path, port: u16, position: &str, start_at: &str, json: &Path) -> Command {
    let mut command = common::enginebench(tmp);
    command
        .args([
            "run",
            "s0",
            "--rows",
            "2000",
            "--threads",
            "2,4",
            "--loops",
            &LOOPS.to_string(),
            "--repeat",
            "1",
            "--phases",
            "update",
            "--engines",
            "innodb",
            "--report-interval",
            "100ms",
            "--no-db",
        ])
        .arg("--dsn")
        .arg(format!("mysql://root@127.0.0.1:{port}"))
        .args(["--agent", position, "--start-at", start_at])
        .arg("--json")
        .arg(json);
    command
}

fn merge_cli(tmp: &Path, parts: &[&Path], json: Option<&Path>) -> std::process::Output {
    let mut command = common::enginebench(tmp);
    command.args(["merge", "--no-db"]).args(parts);
    if let Some(json) = json {
        command.arg("--json").arg(json);
    }
    command.output().unwrap()
}

fn part(path: &Path) -> Part {
    Part {
        file: path.display().to_string(),
        record: read_record(path).unwrap(),
    }
}

fn update_histogram(record: &RunRecord, cell: usize) -> hdrhistogram::Histogram<u64> {
    let query = record.cells[cell]
        .queries
        .iter()
        .find(|q| q.name == "update")
        .unwrap();
    decode_histogram(&query.histogram_v2).unwrap()
}

#[test]
// Long by design: one scenario, step by step: its assertions read in the order things happen.
#[allow(clippy::too_many_lines)]
fn two_agents_load_one_server_and_merge_exactly() {
    common::require_mariadb();
    let tmp = common::private_tmpdir("agents");
    let server = ThrowawayServer::start(&ServerOptions::default()).unwrap();
    let mut root = server.connection_spec(None).connect().unwrap();
    let before = com_update(&mut root);

    let start_at =
        humantime::format_rfc3339_seconds(SystemTime::now() + Duration::from_secs(6)).to_string();
    let parts: Vec<PathBuf> = (1..=2)
        .map(|k| tmp.with_extension(format!("part{k}.json")))
        .collect();
    let running: Vec<std::process::Child> = (1..=2)
        .map(|k| {
            agent(
                &tmp,
                server.port(),
                &format!("{k}/2"),
                &start_at,
                &parts[k - 1],
            )
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
        })
        .collect();
    for child in running {
        let output = child.wait_with_output().unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let after = com_update(&mut root);
    let (first, second) = (part(&parts[0]), part(&parts[1]));

    // Agent 1 prepared the tables and gathered the evidence; agent 2 only measured.
    assert!(!first.record.loads.is_empty());
    assert!(second.record.loads.is_empty());
    assert!(second.record.steps.is_empty(), "{:?}", second.record.steps);
    assert!(second.record.statement_evidence.is_empty());
    let late = first
        .record
        .agent
        .as_ref()
        .unwrap()
        .started_late_ms
        .unwrap();
    // Recorded, never negative: no agent measures before --start-at. How late it is depends
    // on how fast this machine prepared the tables, which the design does not promise.
    assert!(late >= 0.0, "agent 1 started {late} ms after --start-at");

    let merged_json = tmp.with_extension("merged.json");
    let output = merge_cli(&tmp, &[&parts[0], &parts[1]], Some(&merged_json));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("Merged from 2 of 2 agents"), "{stdout}");
    let merged = read_record(&merged_json).unwrap();
    assert_eq!(merged.cells.len(), 2);

    // Events: merged = sum of the parts = what the server executed (plus agent 1's
    // EXPLAINs of the UPDATE for its evidence, which the server counts as Com_update).
    let mut merged_events = 0;
    for (index, cell) in merged.cells.iter().enumerate() {
        let (a, b) = (&first.record.cells[index], &second.record.cells[index]);
        assert_eq!(cell.events, a.events + b.events);
        assert_eq!(cell.threads, a.threads + b.threads);
        assert_eq!(cell.events, LOOPS * u64::from(cell.threads));
        assert_eq!(cell.agents.len(), 2);
        merged_events += cell.events;
        // The merged histogram is the parts' histograms added: same count, same p99.
        let mut combined = update_histogram(&first.record, index);
        combined
            .add(update_histogram(&second.record, index))
            .unwrap();
        let query = cell.queries.iter().find(|q| q.name == "update").unwrap();
        assert_eq!(query.count, combined.len());
        assert_eq!(query.latency_us.p99_us, combined.value_at_quantile(0.99));
        assert_eq!(query.latency_us.max_us, combined.max());
        assert_eq!(decode_histogram(&query.histogram_v2).unwrap(), combined);
        // Intervals add up to the cell, interval by interval from both agents' logs.
        let by_intervals: u64 = cell
            .intervals
            .iter()
            .flat_map(|iv| &iv.queries)
            .filter(|q| q.name == "update")
            .map(|q| q.count)
            .sum();
        assert_eq!(by_intervals, query.count);
        // The agents started the cell together (the rendezvous): within a poll or two on a
        // quiet machine; the bound leaves room for a loaded one.
        let starts: Vec<f64> = cell
            .agents
            .iter()
            .map(|a| a.measure_started_unix_s.unwrap())
            .collect();
        assert!(
            (starts[0] - starts[1]).abs() < 2.0,
            "cell {index}: starts {starts:?}"
        );
    }
    let explains: u64 = first
        .record
        .statement_evidence
        .iter()
        .flat_map(|e| &e.statements)
        .filter(|s| {
            s.sql
                .trim_start()
                .to_ascii_uppercase()
                .starts_with("UPDATE")
        })
        .filter_map(|s| s.plan_samples)
        .map(u64::from)
        .sum();
    assert_eq!(
        after - before,
        merged_events + explains,
        "Com_update delta vs merged events {merged_events} + {explains} EXPLAINs"
    );
    let merged_info = merged.merged.as_ref().unwrap();
    assert_eq!(merged_info.parts.len(), 2);
    // One host, one clock: the offset is the rendezvous's spread, not a clock's error.
    // A bound of a minute: how far apart two agents start is the machine's pace.
    assert!(merged_info.max_clock_offset_ms < 60_000.0);

    // What the run made on the shared server is gone, the rendezvous included.
    let left: Vec<String> = root.query("SHOW DATABASES LIKE 'enginebench\\_%'").unwrap();
    assert!(left.is_empty(), "left on the server: {left:?}");

    // Refusals, each naming its cause.
    let refused = |parts: &[&Path], expected: &str| {
        let output = merge_cli(&tmp, parts, None);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "merged {parts:?}");
        assert!(stderr.contains(expected), "{expected:?} not in: {stderr}");
    };
    refused(&[&parts[0], &parts[0]], "are both agent 1/2");
    refused(&[&parts[0]], "agent(s) 2 of 2 missing");
    let mut value: serde_json::Value = common::read_json(&parts[1]);
    value["agent"]["run_key"] = "s0@2026-01-01T00:00:00Z/2".into();
    let other_run = tmp.with_extension("other.json");
    std::fs::write(&other_run, value.to_string()).unwrap();
    refused(&[&parts[0], &other_run], "is from another run");
    value["agent"] = serde_json::Value::Null;
    let no_agent = tmp.with_extension("noagent.json");
    std::fs::write(&no_agent, value.to_string()).unwrap();
    refused(&[&parts[0], &no_agent], "is not an agent's part");
    let text = std::fs::read_to_string(&parts[1]).unwrap();
    let corrupt = tmp.with_extension("corrupt.json");
    std::fs::write(&corrupt, &text[..text.len() / 2]).unwrap();
    refused(&[&parts[0], &corrupt], "is not an enginebench result");
    let mut value: serde_json::Value = common::read_json(&parts[1]);
    let log = value["cells"][0]["interval_log"]
        .as_str()
        .unwrap()
        .to_string();
    value["cells"][0]["interval_log"] = log.replace("HISTF", "HISTX").into();
    let damaged = tmp.with_extension("damaged.json");
    std::fs::write(&damaged, value.to_string()).unwrap();
    refused(&[&parts[0], &damaged], "does not decode");

    // A skewed agent: agent 2's statements of cell 0 replaced by 79 fast ones and one slow
    // one. Alone its p99 is slow; merged with agent 1's fast ones the slow one is under 1%,
    // so the merged p99 is fast, as the combined histogram says, and far from the average
    // of the two p99s.
    let mut skewed = part(&parts[1]);
    let first_hist = update_histogram(&first.record, 0);
    let mut slow = new_histogram();
    let fast_us = first_hist.value_at_quantile(0.5);
    let slow_us = 50 * first_hist.max().max(1000);
    // 1 slow in 80 is over 1% (this agent's p99 is slow); with agent 1's 50 fast ones it
    // is 1 in 130, under 1%.
    assert!(
        first_hist.len() > 20,
        "agent 1 ran {} updates",
        first_hist.len()
    );
    slow.record_n(fast_us, 79).unwrap();
    slow.record_n(slow_us, 1).unwrap();
    {
        let cell = &mut skewed.record.cells[0];
        let query = cell
            .queries
            .iter_mut()
            .find(|q| q.name == "update")
            .unwrap();
        query.histogram_v2 = encode_histogram(&slow);
        query.count = slow.len();
        let started = cell.measure_started_unix_s.unwrap();
        let mut log = interval_log::header("skewed", started);
        let span = cell.intervals[0].end_s - cell.intervals[0].start_s;
        interval_log::append(
            &mut log,
            started + cell.intervals[0].start_s,
            span,
            &[(interval_log::ok_tag("update"), &slow)],
        );
        cell.interval_log = Some(log);
    }
    let mut combined = first_hist.clone();
    combined.add(&slow).unwrap();
    let merged = merge(vec![part(&parts[0]), skewed], false).unwrap();
    let query = merged.cells[0]
        .queries
        .iter()
        .find(|q| q.name == "update")
        .unwrap();
    let (p99_first, p99_skewed) = (
        first_hist.value_at_quantile(0.99),
        slow.value_at_quantile(0.99),
    );
    assert!(
        p99_skewed >= slow_us * 99 / 100,
        "the skewed agent's p99 is slow"
    );
    assert_eq!(query.latency_us.p99_us, combined.value_at_quantile(0.99));
    let average_of_p99s = (p99_first + p99_skewed) / 2;
    assert!(
        query.latency_us.p99_us * 5 < average_of_p99s,
        "merged p99 {} vs average of p99s {average_of_p99s}",
        query.latency_us.p99_us
    );
    let interval_count: u64 = merged.cells[0].intervals[0]
        .queries
        .iter()
        .filter(|q| q.name == "update")
        .map(|q| q.count)
        .sum();
    assert!(interval_count >= slow.len());

    // An agent that fails stops the others at their next meeting (instead of leaving them
    // waiting), and the merge names it: here agent 1 refuses a database holding a table
    // it did not create.
    root.query_drop("CREATE DATABASE IF NOT EXISTS enginebench")
        .unwrap();
    root.query_drop("CREATE TABLE enginebench.not_ours (id INT)")
        .unwrap();
    let start_at =
        humantime::format_rfc3339_seconds(SystemTime::now() + Duration::from_secs(3)).to_string();
    let outputs: Vec<std::process::Output> = (1..=2)
        .map(|k| {
            agent(
                &tmp,
                server.port(),
                &format!("{k}/2"),
                &start_at,
                &parts[k - 1],
            )
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|child| child.wait_with_output().unwrap())
        .collect();
    let stderr_of = |k: usize| String::from_utf8_lossy(&outputs[k - 1].stderr).to_string();
    assert!(!outputs[0].status.success());
    assert!(stderr_of(1).contains("not_ours"), "{}", stderr_of(1));
    assert!(!outputs[1].status.success());
    assert!(
        stderr_of(2).contains("agent 1/2 stopped") && stderr_of(2).contains("not_ours"),
        "{}",
        stderr_of(2)
    );
    let output = merge_cli(&tmp, &[&parts[0], &parts[1]], None);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("warning: agent 1 failed"), "{stderr}");
    let left: Vec<String> = root.query("SHOW DATABASES LIKE 'enginebench\\_%'").unwrap();
    assert!(left.is_empty(), "left on the server: {left:?}");

    drop(root);
    drop(server);
    for file in [
        &parts[0],
        &parts[1],
        &merged_json,
        &other_run,
        &no_agent,
        &corrupt,
        &damaged,
    ] {
        let _ = std::fs::remove_file(file);
    }
    common::assert_nothing_left(&tmp);
}

#[test]
fn an_agent_without_a_shared_server_or_threads_to_share_is_refused() {
    let tmp = common::private_tmpdir("agents-refused");
    let json = tmp.with_extension("part.json");
    let run = |extra: &[&str]| {
        let output = common::enginebench(&tmp)
            .args(["run", "s0", "--no-db", "--agent", "1/2"])
            .args(["--start-at", "2026-11-23T10:00:00Z", "--json"])
            .arg(&json)
            .args(extra)
            .output()
            .unwrap();
        assert!(!output.status.success());
        String::from_utf8_lossy(&output.stderr).to_string()
    };
    let stderr = run(&["--threads", "2,4"]);
    assert!(stderr.contains("name it with --dsn"), "{stderr}");
    let stderr = run(&["--threads", "1,4", "--dsn", "mysql://root@127.0.0.1:1"]);
    assert!(stderr.contains("which 2 agents cannot share"), "{stderr}");
    let output = common::enginebench(&tmp)
        .args(["run", "s0", "--agent", "1/2", "--start-at", "tomorrow"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("is not an RFC 3339 time"), "{stderr}");
    common::assert_nothing_left(&tmp);
}

/// The guide's ssh recipe (docs/guide/src/scale/agents.md), with ssh and scp standing in
/// for themselves on this machine (two "hosts", both local): agents started, parts copied
/// back, merged.
#[test]
fn the_ssh_recipe_runs_agents_and_merges_their_parts() {
    common::require_mariadb();
    let tmp = common::private_tmpdir("agents-ssh");
    let server = ThrowawayServer::start(&ServerOptions::default()).unwrap();
    let work = tmp.with_extension("work");
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(work.join("remote")).unwrap();
    let fake_ssh = work.join("ssh");
    let fake_scp = work.join("scp");
    std::fs::write(&fake_ssh, "#!/bin/sh\nshift\nexec bash -c \"$*\"\n").unwrap();
    std::fs::write(&fake_scp, "#!/bin/sh\nexec cp \"${1#*:}\" \"$2\"\n").unwrap();
    for script in [&fake_ssh, &fake_scp] {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(script, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let bin = common::BINARY;
    let output = Command::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/scripts/agents-over-ssh.sh"
    ))
    .args(["bench@client-a,bench@client-b"])
    .arg(format!("mysql://root@127.0.0.1:{}", server.port()))
    .args([
        "s0",
        "--rows",
        "1000",
        "--threads",
        "2",
        "--loops",
        "20",
        "--repeat",
        "1",
        "--phases",
        "update",
        "--engines",
        "innodb",
    ])
    .env("SSH", &fake_ssh)
    .env("SCP", &fake_scp)
    .env("OUT", work.join("parts"))
    .env("REMOTE_DIR", work.join("remote"))
    .env("LEAD_S", "3")
    .env("ENGINEBENCH", bin)
    .env("REMOTE_ENGINEBENCH", bin)
    .env("TMPDIR", &tmp)
    .env("ENGINEBENCH_DB", common::store_of(&tmp))
    .output()
    .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let merged = read_record(&work.join("parts/merged.json")).unwrap();
    let info = merged.merged.as_ref().unwrap();
    assert_eq!(info.parts.len(), 2);
    assert_eq!(merged.cells[0].events, 2 * 20);
    assert_eq!(merged.cells[0].threads, 2);
    drop(server);
    std::fs::remove_dir_all(&work).unwrap();
    common::assert_nothing_left(&tmp);
}

/// The guide's Kubernetes recipe (docs/guide/src/scale/agents.md): an Indexed Job whose
/// container command, with the index Kubernetes sets, is a valid agent command line for
/// every pod.
#[test]
fn the_kubernetes_recipe_gives_every_pod_its_agent() {
    let manifest = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/deploy/kubernetes/agents-job.yaml"
    ))
    .unwrap();
    assert!(manifest.contains("completionMode: Indexed"));
    // The folded block scalar after `- >-`: its lines joined by spaces, as YAML folds them.
    let mut lines = manifest
        .lines()
        .skip_while(|l| !l.trim_end().ends_with("- >-"));
    let marker = lines.next().expect("the agent's command");
    let indent = marker.len() - marker.trim_start().len();
    let command: Vec<&str> = lines
        .take_while(|l| l.len() - l.trim_start().len() > indent && !l.trim().is_empty())
        .map(str::trim)
        .collect();
    let command = command.join(" ");
    assert!(command.starts_with("enginebench run "), "{command}");
    let tmp = common::private_tmpdir("agents-k8s");
    let dry_run = command.replacen(
        "enginebench run ",
        &format!("{} run --dry-run ", common::BINARY),
        1,
    );
    for index in 0..4 {
        let output = Command::new("sh")
            .args(["-c", &dry_run])
            .env("JOB_COMPLETION_INDEX", index.to_string())
            .env("AGENTS", "4")
            .env("DSN", "mysql://bench@db.example:3306")
            .env("START_AT", "2026-11-23T10:00:00Z")
            .env("TMPDIR", &tmp)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "pod {index}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        // 64 threads over 4 agents.
        assert!(stdout.contains("threads=16"), "pod {index}: {stdout}");
    }
    common::assert_nothing_left(&tmp);
}
