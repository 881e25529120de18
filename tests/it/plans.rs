//! `--dry-run` prints the plan every study kind runs by, step for step: scenario files (with
//! profiles, loads, sequences and DDL) and sysbench workloads alike. Snapshots, so the plan's
//! text stays what users read before they spend an hour on a study.

fn dry_run(args: &[&str]) -> String {
    let output = assert_cmd::Command::cargo_bin("enginebench")
        .unwrap()
        .arg("run")
        .args(args)
        .arg("--dry-run")
        .env("PATH", "/nonexistent") // a plan starts nothing
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn plans_of_every_study_kind() {
    let mut all = String::new();
    for args in [
        &["s0", "--rows", "300", "--threads", "1,2", "--repeat", "2"][..],
        &["s0", "--phases", "select+update/indexed", "--threads", "4"],
        &["s1", "--threads", "1,2", "--warmup-repeats", "1"],
        &["s2"],
        &["s3"],
        &["s4", "--repeat", "2"],
        &[
            "oltp_read_write",
            "--engines",
            "innodb,myisam",
            "--threads",
            "1,2",
            "--repeat",
            "2",
        ],
        &["oltp_point_select", "--events", "1000"],
        &["bulk_insert", "--threads", "2"],
    ] {
        all.push_str(&format!("$ enginebench run {} --dry-run\n", args.join(" ")));
        all.push_str(&dry_run(args));
        all.push('\n');
    }
    insta::assert_snapshot!(all);
}
