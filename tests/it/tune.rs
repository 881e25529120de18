//! `enginebench tune` on real throwaway servers, kept short (small tables, 1 s cells, spaces
//! of one or two variables): a space file's bad line is refused before any server runs; a
//! tune keeping durability sets no relaxing value, finds a pool that holds the table (a
//! decided lead, the ablation naming the pool and the reads from storage), and writes an
//! option file MariaDB reads and a plain `enginebench run --server-cnf` reproduces; a tune
//! without durability ranks flush 2 first and says what it lost.

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

/// A space of the buffer pool and the redo log's flush, whose 2 relaxes what a commit
/// promises: with `--durability keep` the flush is left at the server's own value.
const POOL_SPACE: &str = r#"engine = "innodb"

[[variable]]
name = "innodb_buffer_pool_size"
memory_share = [0.1, 0.4]

[[variable]]
name = "innodb_flush_log_at_trx_commit"
values = ["1", "2"]
durable = ["1"]
"#;

/// sysbench's read-only mix, uniform over 100,000 rows (about 25 MB), on a server whose
/// default pool is 6 MB and whose every read from storage takes 1 ms: a pool that holds the
/// table is decided faster whatever this machine's pace. Each server starts on a copy of
/// the loaded tables with a cold pool: a second's warm-up leaves the filling out.
const POOL_STUDY: [&str; 19] = [
    "oltp_read_only",
    "--table-size",
    "100000",
    "--rand-type",
    "uniform",
    "--engines",
    "innodb",
    "--threads",
    "2",
    "--time",
    "2s",
    "--warmup",
    "1s",
    "--storage-read-latency",
    "1ms",
    "--memory-limit",
    "512M",
    "--seed",
    "7",
];

#[test]
// Long: one tune, then the file it wrote checked three ways (MariaDB, run, compare).
#[allow(clippy::too_many_lines)]
fn a_tune_keeping_durability_sets_no_relaxing_value_finds_a_pool_for_the_table_and_a_run_given_its_file_reproduces_the_lead(
) {
    common::require_mariadb();
    let tmp = common::private_tmpdir("tune-pool");
    let space = tmp.with_extension("space.toml");
    std::fs::write(&space, POOL_SPACE).unwrap();
    let cnf = tmp.with_extension("tuned.cnf");
    let (space_text, cnf_text) = (space.display().to_string(), cnf.display().to_string());
    let mut args = vec!["tune"];
    // --memory-limit is run's: tune takes --memory.
    args.extend(&POOL_STUDY[..POOL_STUDY.len() - 4]);
    args.extend([
        "--server-opt",
        "innodb_buffer_pool_size=6M",
        "--seed",
        "7",
        "--memory",
        "512M",
        "--space",
        &space_text,
        // A budget of rounds, not of time: the same search on any machine (five: the
        // sequential test's first looks are wide, its error spent over every look).
        "--rounds",
        "6",
        "--candidates",
        "1",
        "--write-cnf",
        &cnf_text,
    ]);
    let output = common::enginebench(&tmp).args(&args).output().unwrap();
    let stdout = common::succeeded(output);
    let record = stored_tune(&tmp);
    let tune = &record["parameters"]["tune"];
    // Loaded once: the rounds' servers started on a copy of it.
    assert!(tune["tables_loaded_once_s"].as_f64().is_some(), "{tune:#}");
    assert!(stdout.contains("loaded once"), "{stdout}");
    // No candidate, on the path of the search or of the ablation, relaxed the flush; every
    // server of the tune ran with flush 1 (the record's own variables).
    let relaxing = |setting: &Value| {
        setting
            .as_str()
            .is_some_and(|s| s.starts_with("innodb_flush_log_at_trx_commit=") && !s.ends_with("=1"))
    };
    for tried in tune["tried"].as_array().unwrap() {
        assert!(
            !tried["settings"].as_array().unwrap().iter().any(relaxing),
            "{tried:#}"
        );
    }
    for profile in record["profiles"].as_array().unwrap() {
        assert_eq!(
            profile["server"]["variables"]["innodb_flush_log_at_trx_commit"], "1",
            "{}",
            profile["name"]
        );
    }
    // The best holds the table: its lead over the 6 MB default is decided, and the
    // ablation finds the pool is why, with the reads from storage that moved.
    assert_eq!(tune["lead_over_default"]["answer"], "leads", "{tune:#}");
    let best_settings = tune["best_settings"].as_array().unwrap();
    assert!(
        best_settings
            .iter()
            .any(|s| s.as_str().unwrap().starts_with("innodb_buffer_pool_size=")),
        "{tune:#}"
    );
    let steps = tune["ablation"]["steps"].as_array().unwrap();
    let pool_step = steps
        .iter()
        .find(|step| step["reset"] == "innodb_buffer_pool_size")
        .unwrap_or_else(|| panic!("{tune:#}"));
    assert!(
        pool_step["decision"]["pairs"].as_u64() >= Some(3),
        "{pool_step:#}"
    );
    assert!(
        pool_step["moved"]
            .as_array()
            .unwrap()
            .iter()
            .any(|moved| moved[0] == "Innodb_buffer_pool_reads"),
        "{pool_step:#}"
    );
    // The winner was crash-tested with each kind and lost nothing.
    let losses = tune["best_losses"].as_array().unwrap();
    assert_eq!(losses.len(), 2, "{tune:#}");
    assert!(losses.iter().all(|loss| loss["lost"] == 0), "{tune:#}");
    // The option file: MariaDB reads it as it is.
    let written = std::fs::read_to_string(&cnf).unwrap();
    let printed = std::process::Command::new("/usr/sbin/mariadbd")
        .arg(format!("--defaults-extra-file={cnf_text}"))
        .arg("--print-defaults")
        .output()
        .unwrap();
    let printed = String::from_utf8_lossy(&printed.stdout);
    for setting in best_settings {
        assert!(
            printed.contains(&format!("--{}", setting.as_str().unwrap())),
            "{printed}\n{written}"
        );
    }
    // A plain run given the file starts its server with it (recorded), and reproduces the
    // lead over a run of the default: `compare` decides it on the paired repeats.
    let mut run = vec!["run"];
    run.extend(POOL_STUDY);
    run.extend(["--repeat", "3"]);
    let mut default_args = run.clone();
    default_args.extend(["--server-opt", "innodb_buffer_pool_size=6M"]);
    let default_run = common::enginebench(&tmp)
        .args(&default_args)
        .output()
        .unwrap();
    common::assert_success(&default_run);
    run.extend(["--server-cnf", &cnf_text]);
    let (tuned_run, ran) = common::run_recorded(&tmp, &run);
    common::assert_success(&tuned_run);
    for setting in best_settings {
        let (name, value) = setting.as_str().unwrap().split_once('=').unwrap();
        assert_eq!(ran["server"]["variables"][name].as_str(), Some(value));
    }
    let compared = common::enginebench(&tmp)
        // Run 1 is the tune, 2 the default's run, 3 the tuned one (the test's own store).
        .args(["compare", "2", "3"])
        .output()
        .unwrap();
    let compared = common::succeeded(compared);
    assert!(compared.contains("better"), "{compared}");
    common::assert_nothing_left(&tmp);
}

#[test]
fn a_tune_without_durability_ranks_flush_2_and_says_what_it_lost() {
    common::require_mariadb();
    let tmp = common::private_tmpdir("tune-no-durability");
    let space = tmp.with_extension("space.toml");
    std::fs::write(
        &space,
        "engine = \"innodb\"\n\n[[variable]]\nname = \"innodb_flush_log_at_trx_commit\"\nvalues = [\"1\", \"2\"]\n",
    )
    .unwrap();
    let space_text = space.display().to_string();
    let output = common::enginebench(&tmp)
        .args(tune_args(
            &space_text,
            &[
                "--rounds",
                "3",
                "--durability",
                "none",
                "--no-ablation",
                // As tests/it/crash.rs: with the timer's flush at its maximum, flush 2
                // syncs nothing during a trial, so what it loses does not depend on timing.
                "--server-opt",
                "innodb_flush_log_at_timeout=2700",
                "--candidates",
                "2",
            ],
        ))
        .output()
        .unwrap();
    let stdout = common::succeeded(output);
    let record = stored_tune(&tmp);
    let tune = &record["parameters"]["tune"];
    // Flush 2 syncs nothing at a commit: the fastest, and nothing kept it out.
    assert_eq!(
        tune["best_settings"],
        serde_json::json!(["innodb_flush_log_at_trx_commit=2"]),
        "{tune:#}"
    );
    let power = tune["best_losses"]
        .as_array()
        .unwrap()
        .iter()
        .find(|loss| loss["kind"] == "power")
        .unwrap_or_else(|| panic!("{tune:#}"))
        .clone();
    assert!(power["lost"].as_u64() > Some(0), "{power:#}");
    assert!(stdout.contains("Safety: --durability none"), "{stdout}");
    assert!(
        stdout.contains(&format!(
            "in a power loss: lost {} of {} acknowledged commits",
            power["lost"], power["acknowledged"]
        )),
        "{stdout}"
    );
    assert!(stdout.contains("loses acknowledged commits"), "{stdout}");
    common::assert_nothing_left(&tmp);
}
