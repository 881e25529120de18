//! `enginebench tune` on real throwaway servers, kept short (S0's update phase on 2,000
//! rows, 1 s cells, a space of two variables): a space file's bad line is refused before
//! any server runs; a tune finds innodb_flush_log_at_trx_commit=2 unsafe in a crash trial
//! and never recommends it, stores the tune as a run, and writes an option file whose
//! values a plain `enginebench run` starts its server with.

use crate::common;
use serde_json::Value;

/// Two variables: a memory share and the redo log's flush, whose 2 is faster and loses
/// acknowledged commits on a power loss.
const SPACE: &str = r#"engine = "innodb"

[[variable]]
name = "innodb_buffer_pool_size"
memory_share = [0.1, 0.4]

[[variable]]
name = "innodb_flush_log_at_trx_commit"
values = ["1", "2"]
"#;

/// The tiny study every tune here runs.
const STUDY: [&str; 10] = [
    "s0",
    "--rows",
    "2000",
    "--engines",
    "innodb",
    "--threads",
    "2",
    "--time",
    "1s",
    "--phases",
];

fn tune_args<'a>(space: &'a str, more: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["tune"];
    args.extend(STUDY);
    args.extend(["update", "--memory", "512M", "--space", space]);
    args.extend(more);
    args
}

/// `tune` for 30 s on the space `space` (written beside `tmp`): the space file's name, and
/// what the command printed.
fn tune_on_space(tmp: &std::path::Path, space: &str) -> (String, std::process::Output) {
    let file = tmp.with_extension("space.toml");
    std::fs::write(&file, space).unwrap();
    let space_text = file.display().to_string();
    let output = common::enginebench(tmp)
        .args(tune_args(&space_text, &["--budget", "30s"]))
        .output()
        .unwrap();
    (space_text, output)
}

#[test]
fn a_space_with_an_unknown_variable_is_refused_at_its_line_and_nothing_is_measured() {
    common::require_mariadb();
    let tmp = common::private_tmpdir("tune-unknown-variable");
    let (space_text, output) = tune_on_space(
        &tmp,
        &SPACE.replace("innodb_flush_log_at_trx_commit", "innodb_flush_at_commit"),
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(
        stderr.contains(&format!(
            "{space_text}:8: innodb_flush_at_commit is not a variable of this server"
        )),
        "{stderr}"
    );
    // Refused before a round: no store was made, no cell ran.
    assert!(!common::store_of(&tmp).exists(), "{stderr}");
    assert!(!stderr.contains("events/s"), "{stderr}");
    common::assert_nothing_left(&tmp);
}

#[test]
fn a_malformed_space_or_missing_budget_is_refused_before_any_server_starts() {
    let tmp = common::private_tmpdir("tune-malformed-space");
    let (space_text, output) = tune_on_space(
        &tmp,
        &SPACE.replace("values = [\"1\", \"2\"]", "range = [3, 1]"),
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(
        stderr.contains(&format!(
            "{space_text}:8: innodb_flush_log_at_trx_commit: range [3, 1] is empty"
        )),
        "{stderr}"
    );
    assert!(!stderr.contains("starting"), "{stderr}");
    let output = common::enginebench(&tmp)
        .args(tune_args(&space_text, &[]))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("tune needs --budget TIME"), "{stderr}");
    common::assert_nothing_left(&tmp);
}

#[test]
fn a_memory_cap_the_server_cannot_start_under_is_refused_before_any_round() {
    common::require_mariadb();
    let tmp = common::private_tmpdir("tune-memory-too-small");
    let output = common::enginebench(&tmp)
        .args([
            "tune",
            "s0",
            "--engines",
            "innodb",
            "--memory",
            "40M",
            "--budget",
            "30s",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(
        stderr.contains("the server did not start under --memory and these options, so nothing was tuned (give --memory more)"),
        "{stderr}"
    );
    assert!(!common::store_of(&tmp).exists(), "{stderr}");
    common::assert_nothing_left(&tmp);
}

/// The tune's record in the store, by `enginebench export`.
fn stored_tune(tmp: &std::path::Path) -> Value {
    let output = common::enginebench(tmp)
        .args(["export", "latest", "--json"])
        .output()
        .unwrap();
    serde_json::from_str(&common::succeeded(output)).unwrap()
}

#[test]
fn a_tune_finds_flush_2_unsafe_never_recommends_it_and_writes_an_option_file_a_server_starts_with()
{
    common::require_mariadb();
    let tmp = common::private_tmpdir("tune-end-to-end");
    let space = tmp.with_extension("space.toml");
    std::fs::write(&space, SPACE).unwrap();
    let cnf = tmp.with_extension("tuned.cnf");
    let (space_text, cnf_text) = (space.display().to_string(), cnf.display().to_string());
    let output = common::enginebench(&tmp)
        .args(tune_args(
            &space_text,
            &[
                // A budget of rounds, not of time: the same search on any machine.
                "--rounds",
                "3",
                // As tests/it/crash.rs: with the timer's flush at its maximum, flush 2
                // syncs nothing during a trial, so what it loses does not depend on timing.
                "--server-opt",
                "innodb_flush_log_at_timeout=2700",
                "--candidates",
                "2",
                "--write-cnf",
                &cnf_text,
            ],
        ))
        .output()
        .unwrap();
    let stdout = common::succeeded(output);
    let record = stored_tune(&tmp);
    let tune = &record["parameters"]["tune"];
    let tried = tune["tried"].as_array().unwrap();
    // The default always races; every candidate that set flush 2 and stayed in the race
    // to its end was crash-tested and found unsafe; none is the best.
    assert!(tried.iter().any(|t| t["baseline"] == true), "{tune:#}");
    let flush_2 = |t: &&Value| {
        t["settings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s == "innodb_flush_log_at_trx_commit=2")
    };
    let relaxed: Vec<&Value> = tried.iter().filter(flush_2).collect();
    for candidate in &relaxed {
        let why = candidate["out"]["why"].as_str().unwrap_or("none");
        assert!(
            why == "unsafe" || why == "behind" || why == "failed",
            "a flush-2 candidate left in the race: {candidate:#}"
        );
    }
    assert!(
        relaxed.iter().any(|c| c["out"]["why"] == "unsafe"),
        "no flush-2 candidate was found unsafe (drawn: {}): {tune:#}",
        relaxed.len()
    );
    let best_settings = tune["best_settings"].as_array().unwrap();
    assert!(
        !best_settings
            .iter()
            .any(|s| s == "innodb_flush_log_at_trx_commit=2"),
        "{tune:#}"
    );
    assert!(stdout.contains("measured unsafe: lost"), "{stdout}");
    // Stored as a run: each configuration a profile, its crash trials kept.
    assert!(record["profiles"].as_array().unwrap().len() >= 2);
    assert!(record["crashes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["lost"].as_u64() > Some(0)));
    // The option file: a [mysqld] group of the best's settings, which a plain run's server
    // starts with.
    let written = std::fs::read_to_string(&cnf).unwrap();
    assert!(written.contains("[mysqld]"), "{written}");
    let settings: Vec<&str> = written
        .lines()
        .filter(|line| !line.starts_with('#') && line.contains('='))
        .collect();
    assert_eq!(settings.len(), best_settings.len(), "{written}");
    let mut run = vec![
        "run",
        "s0",
        "--rows",
        "2000",
        "--engines",
        "innodb",
        "--threads",
        "1",
        "--time",
        "300ms",
        "--phases",
        "update",
        "--repeat",
        "1",
        "--no-db",
    ];
    for setting in &settings {
        run.extend(["--server-opt", setting]);
    }
    let (output, ran) = common::run_recorded(&tmp, &run);
    common::assert_success(&output);
    let variables = &ran["server"]["variables"];
    for setting in &settings {
        let (name, value) = setting.split_once('=').unwrap();
        assert_eq!(
            variables[name].as_str(),
            Some(value),
            "{name}: {variables:#}"
        );
    }
    common::assert_nothing_left(&tmp);
}
