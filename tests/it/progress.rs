//! Progress without a terminal: a run whose stderr is a pipe (CI, `2>log`) prints one line
//! per finished group of cells (a phase at a thread count), saying whether its comparison
//! was decided and after how many rounds, and no line per cell; `--verbose` adds the line
//! per cell. Real throwaway servers, S0's update phase on a small table.

use crate::common;

use serde_json::Value;
use std::collections::BTreeMap;

/// The rounds each thread count of the record's `phase` ran: its highest repeat.
fn rounds_per_threads(record: &Value, phase: &str) -> BTreeMap<u64, u64> {
    let mut rounds = BTreeMap::new();
    for cell in record["cells"].as_array().unwrap() {
        if cell["variant"] == phase {
            let threads = cell["threads"].as_u64().unwrap();
            let repeat = cell["repeat"].as_u64().unwrap();
            let most = rounds.entry(threads).or_insert(0);
            *most = repeat.max(*most);
        }
    }
    rounds
}

/// The lines of stderr that begin a cell's line ("[3/96] update InnoDB threads=1 …").
fn cell_lines(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|line| {
            line.strip_prefix('[')
                .and_then(|rest| rest.split_once(']'))
                .is_some_and(|(counts, _)| counts.contains('/'))
        })
        .collect()
}

#[test]
fn without_a_terminal_a_run_prints_a_line_per_decided_group_and_none_per_cell() {
    common::require_mariadb();
    let tmp = common::private_tmpdir("progress-groups");
    let s0 = [
        "run",
        "s0",
        "--rows",
        "1000",
        "--threads",
        "1,2",
        "--phases",
        "update",
        "--no-db",
    ];
    let (output, record) = common::run_recorded(&tmp, &s0);
    common::assert_success(&output);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(cell_lines(&stderr), Vec::<&str>::new(), "{stderr}");
    let rounds = rounds_per_threads(&record, "update");
    assert_eq!(rounds.keys().copied().collect::<Vec<_>>(), [1, 2]);
    for (threads, rounds) in rounds {
        let place = format!(
            "phase update, {threads} thread{}: ",
            if threads == 1 { "" } else { "s" }
        );
        let lines: Vec<&str> = stderr
            .lines()
            .filter(|line| line.starts_with(&place))
            .collect();
        assert_eq!(lines.len(), 1, "one line per group: {stderr}");
        let answer = &lines[0][place.len()..];
        // Decided (a lead, or equivalent) or not, after the rounds the record holds, then
        // who is ahead.
        let after = format!("decided after {rounds} rounds — ");
        assert!(
            answer.starts_with(&after) || answer.starts_with(&format!("un{after}")),
            "{answer} (the record ran {rounds} rounds)"
        );
        assert!(
            answer.ends_with(" ahead")
                || answer.ends_with(" ahead so far")
                || answer.contains("equivalent within"),
            "{answer}"
        );
    }

    // --verbose: a line per cell besides.
    let mut verbose = s0.to_vec();
    verbose.extend(["--repeat", "3", "--verbose"]);
    let (output, record) = common::run_recorded(&tmp, &verbose);
    common::assert_success(&output);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let cells = record["cells"].as_array().unwrap().len();
    assert_eq!(cells, 2 * 2 * 3);
    assert_eq!(cell_lines(&stderr).len(), cells, "{stderr}");
    for place in ["phase update, 1 thread: ", "phase update, 2 threads: "] {
        let count = stderr.lines().filter(|l| l.starts_with(place)).count();
        assert_eq!(count, 1, "{place}: {stderr}");
    }
    common::assert_nothing_left(&tmp);
}
