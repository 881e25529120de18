//! The built-in durability profiles on a real server: `--profile durable --profile relaxed`
//! runs a study twice, each on a server of its own configured as the profile says, and
//! every report states each set-up's durability beside its figures.

use crate::common;

#[test]
fn durable_and_relaxed_twins_run_on_their_own_servers_and_say_so() {
    common::require_mariadb();
    let tmp = common::private_tmpdir("durability-twins");
    let (output, record) = common::run_recorded(
        &tmp,
        &[
            "run",
            "oltp_point_select",
            "--table-size=100",
            "--threads=1",
            "--events=50",
            "--profile",
            "durable",
            "--profile",
            "relaxed",
        ],
    );
    let stdout = common::succeeded(output);
    let profiles = record["profiles"].as_array().unwrap();
    let flush_of = |name: &str| {
        profiles
            .iter()
            .find(|profile| profile["name"] == name)
            .unwrap_or_else(|| panic!("no profile {name} in the record"))["server"]["variables"]
            ["innodb_flush_log_at_trx_commit"]
            .clone()
    };
    assert_eq!(flush_of("durable"), "1");
    assert_eq!(flush_of("relaxed"), "2");
    let ran_on: Vec<&str> = record["cells"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|cell| cell["profile"].as_str())
        .collect();
    assert!(
        ran_on.contains(&"durable") && ran_on.contains(&"relaxed"),
        "{ran_on:?}"
    );
    assert!(
        stdout.contains("Durability: what a commit promises"),
        "{stdout}"
    );
    for line in [
        "| InnoDB (durable) | synced per commit",
        "| InnoDB (relaxed) | survives a process crash, not a power loss",
    ] {
        assert!(stdout.contains(line), "{line} missing from:\n{stdout}");
    }
    common::assert_nothing_left(&tmp);
}
