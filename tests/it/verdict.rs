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
    assert!(stdout.starts_with("Verdict\nOn this machine ("), "{stdout}");
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
