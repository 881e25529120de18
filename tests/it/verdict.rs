//! The verdict every report opens with, on a real S0 run at small scale: the leader per
//! thread count with its interval and why, in the terminal tables and in the `--json` file
//! beside the record; with one repeat it says it cannot judge. (A crashed set-up named and
//! not ranked: tests/robustness.rs, on a server killed mid-cell.)

use crate::common;

#[test]
fn s0_verdict_names_the_leader_per_thread_count_with_an_interval_and_a_why() {
    common::require_mariadb();
    let tmp = common::private_tmpdir("verdict");
    let json = tmp.with_extension("verdict.json");
    let output = common::enginebench(&tmp)
        .args([
            "run",
            "s0",
            "--rows",
            "2000",
            "--threads",
            "1,4",
            "--loops",
            "100",
        ])
        .args([
            "--repeat",
            "3",
            "--variants",
            "select+update",
            "--no-db",
            "--json",
        ])
        .arg(&json)
        .output()
        .unwrap();
    common::assert_success(&output);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_summary_then_verdict(&stdout);
    let record = common::read_json(&json);
    let phases = record["verdict"]["phases"].as_array().unwrap();
    assert_eq!(phases.len(), 1, "{phases:?}");
    let rows = phases[0]["rows"].as_array().unwrap();
    let threads: Vec<u64> = rows
        .iter()
        .map(|r| r["threads"].as_u64().unwrap())
        .collect();
    assert_eq!(threads, [1, 4]);
    for row in rows {
        let leader = row["leader"].as_str().unwrap();
        assert!(["MyISAM", "InnoDB"].contains(&leader), "{row}");
        let against = &row["against"][0];
        let ratio = &against["times_better"];
        let (low, mid, high) = (
            ratio["low"].as_f64().unwrap(),
            ratio["ratio"].as_f64().unwrap(),
            ratio["high"].as_f64().unwrap(),
        );
        assert!(low <= mid && mid <= high && mid >= 1.0, "{ratio}");
        // The answer follows from the paired interval, whatever this machine measured: a
        // lead where it clears the tolerance, equivalent where it lies within it.
        let paired = &against["paired"];
        let (paired_low, paired_high) = (
            paired["low"].as_f64().unwrap(),
            paired["high"].as_f64().unwrap(),
        );
        let answer = against["standing"]["answer"].as_str().unwrap();
        let tolerance = record["verdict"]["tolerance_pct"].as_f64().unwrap() / 100.0;
        assert_eq!(tolerance, 0.05, "the default");
        assert_eq!(
            answer,
            if paired_low > 1.0 + tolerance {
                "leads"
            } else if paired_low >= 1.0 / (1.0 + tolerance) && paired_high <= 1.0 + tolerance {
                "equivalent"
            } else {
                "undecided"
            },
            "{row}"
        );
        let why = row["why"][0].as_str().unwrap();
        assert!(why.starts_with(&format!("{leader} vs ")), "{why}");
        let text = row["text"].as_str().unwrap();
        assert!(stdout.contains(text), "the table shows {text}\n{stdout}");
    }
    assert!(record["verdict"]["not_ranked"]
        .as_array()
        .unwrap()
        .is_empty());

    // One repeat: a verdict that cannot judge, and says how to make it judge.
    let output = common::enginebench(&tmp)
        .args([
            "run",
            "s0",
            "--rows",
            "2000",
            "--threads",
            "2",
            "--loops",
            "50",
        ])
        .args(["--repeat", "1", "--variants", "select", "--no-db"])
        .output()
        .unwrap();
    common::assert_success(&output);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains(
            "too few repeats to say who leads anywhere (1 per cell): use --repeat 3 or more"
        ),
        "{stdout}"
    );
    common::assert_nothing_left(&tmp);
    let _ = std::fs::remove_file(json);
}

/// Without --repeat, two engines on one server decide, then stop: every phase at every
/// thread count runs rounds of both engines from the first look (3) until its comparison
/// is decided or the most (--max-repeat) is reached, so a group that stopped early is one
/// the verdict decided, and one still undecided ran them all. Whatever this machine
/// measures, that is what the record and the verdict must show together.
#[test]
fn without_a_fixed_count_each_group_runs_rounds_until_its_verdict_is_decided() {
    common::require_mariadb();
    let tmp = common::private_tmpdir("verdict-deciding");
    let json = tmp.with_extension("deciding.json");
    let output = common::enginebench(&tmp)
        .args([
            "run",
            "s0",
            "--rows",
            "2000",
            "--threads",
            "1,4",
            "--loops",
            "50",
        ])
        .args(["--variants", "select+update,update", "--max-repeat", "5"])
        .args(["--no-db", "--json"])
        .arg(&json)
        .output()
        .unwrap();
    let stdout = common::succeeded(output);
    assert!(
        stdout.contains("repeats paired by round until decided (3 to 5 per cell)"),
        "{stdout}"
    );
    let record = common::read_json(&json);
    assert_eq!(
        record["until_decided"]["min_repeats"], 3,
        "{}",
        record["until_decided"]
    );
    assert_eq!(record["until_decided"]["max_repeats"], 5);
    let cells = record["cells"].as_array().unwrap();
    let rounds = |variant: &str, threads: u64, engine: &str| {
        cells
            .iter()
            .filter(|c| c["variant"] == variant && c["threads"] == threads && c["engine"] == engine)
            .count()
    };
    let mut groups = 0;
    for phase in record["verdict"]["phases"].as_array().unwrap() {
        let variant = phase["phase"].as_str().unwrap();
        for row in phase["rows"].as_array().unwrap() {
            let threads = row["threads"].as_u64().unwrap();
            let (myisam, innodb) = (
                rounds(variant, threads, "myisam"),
                rounds(variant, threads, "innodb"),
            );
            assert_eq!(myisam, innodb, "{variant} at {threads}: rounds stay paired");
            assert!(
                (3..=5).contains(&myisam),
                "{variant} at {threads}: {myisam}"
            );
            let answers: Vec<&str> = row["against"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a["standing"]["answer"].as_str().unwrap())
                .collect();
            let decided = answers.iter().all(|a| ["leads", "equivalent"].contains(a));
            // Undecided and out of reach: no count estimated, or more than twice the
            // most repeats (5) in all.
            let out_of_reach = row["against"].as_array().unwrap().iter().any(|a| {
                a["standing"]["answer"] == "undecided"
                    && a["standing"]["repeats_needed"]
                        .as_u64()
                        .is_none_or(|needed| needed > 10)
            });
            if myisam < 5 {
                assert!(
                    decided || out_of_reach,
                    "{variant} at {threads} stopped at {myisam}: {row}"
                );
            }
            if !decided && !out_of_reach {
                assert_eq!(myisam, 5, "{variant} at {threads} undecided: {row}");
            }
            groups += 1;
        }
    }
    assert_eq!(groups, 4, "two phases × two thread counts");
    common::assert_nothing_left(&tmp);

    // A fixed count and a rule for stopping are one choice or the other.
    let refused = common::enginebench(&tmp)
        .args([
            "run",
            "s0",
            "--repeat",
            "3",
            "--max-repeat",
            "5",
            "--dry-run",
        ])
        .output()
        .unwrap();
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("--max-repeat") && stderr.contains("--repeat"),
        "{stderr}"
    );
}

/// The summary opens a run's output; with --detail (the harness's default) the verdict
/// follows.
fn assert_summary_then_verdict(stdout: &str) {
    assert!(stdout.starts_with("Summary\n"), "{stdout}");
    assert!(stdout.contains("\nVerdict\nOn this machine ("), "{stdout}");
}
