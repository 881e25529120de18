//! sysbench's built-in tests as what they are in the record and the report: a study's
//! first step (`--machine-baseline`: the machine and the datadir's disk measured alone,
//! then shown beside each set-up's fsyncs and writes), and a stored `enginebench sysbench
//! cpu run`, reported as a test of the machine with no engine and no server counters.

use super::common;

/// A small s0 run with the baseline: the record keeps each test with what it moved, its
/// files are gone, and the report puts the set-up beside the disk.
#[test]
fn a_study_measures_the_machine_first_and_reports_the_set_ups_beside_the_disk() {
    common::require_mariadb();
    let tmp = common::private_tmpdir("machine-baseline");
    let (output, record) = common::run_short_s0(&tmp, "1", "innodb", &["--machine-baseline"]);
    common::assert_success(&output);
    let tests = record["machine_tests"].as_array().expect("machine tests");
    let names: Vec<&str> = tests.iter().map(|t| t["test"].as_str().unwrap()).collect();
    assert_eq!(names, ["cpu", "memory", "fileio", "fileio"], "{tests:#?}");
    for test in tests {
        assert!(test.get("error").is_none(), "{test:#}");
        assert!(test["events"].as_u64().unwrap() > 0, "{test:#}");
        assert!(test["wall_ms"].as_f64().unwrap() > 0.0, "{test:#}");
        // A baseline is measured before the cells, not one of them.
        assert!(test.get("cell").is_none(), "{test:#}");
    }
    let memory = &tests[1];
    assert!(
        memory["io"]["bytes_written"].as_u64().unwrap() > 0,
        "{memory:#}"
    );
    for fileio in &tests[2..] {
        // An fsync after each write: as many fsyncs as writes.
        let io = &fileio["io"];
        assert!(io["writes"].as_u64().unwrap() > 0, "{fileio:#}");
        assert_eq!(io["fsyncs"], io["writes"], "{fileio:#}");
        assert!(fileio["filesystem"].is_string(), "{fileio:#}");
        let directory = fileio["directory"].as_str().unwrap();
        assert!(
            !std::path::Path::new(directory).exists(),
            "{directory} left behind"
        );
    }
    assert!(tests[2]["what"]
        .as_str()
        .unwrap()
        .contains("random write, 16KiB blocks, fsync after each write"));
    assert!(tests[3]["what"]
        .as_str()
        .unwrap()
        .contains("sequential rewrite, 1MiB blocks, fsync after each write"));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("The machine alone"), "{stdout}");
    assert!(stdout.contains("prime search up to 10000"), "{stdout}");
    let beside = stdout
        .lines()
        .skip_while(|line| !line.starts_with("Each set-up beside the disk alone"))
        .nth(3)
        .unwrap_or_else(|| panic!("no set-up beside the disk: {stdout}"));
    assert!(beside.contains("InnoDB"), "{beside}");
    common::assert_nothing_left(&tmp);
}

/// A stored built-in test is a run of the machine: its report says what it measured and
/// shows no engine, no server counters and no efficiency of a server.
#[test]
fn a_stored_built_in_test_is_reported_as_a_test_of_the_machine() {
    let tmp = common::private_tmpdir("machine-stored");
    let dir = tmp.join("work");
    std::fs::create_dir_all(&dir).unwrap();
    let run = |args: &[&str]| {
        let output = common::enginebench(&tmp)
            .args(args)
            .current_dir(&dir)
            .output()
            .unwrap();
        common::succeeded(output)
    };
    run(&["sysbench", "--events=300", "cpu", "run"]);
    for format in ["text", "markdown", "sysbench", "html"] {
        let report = run(&["report", "latest", "--format", format]);
        assert!(report.contains("cpu"), "{format}: {report}");
        assert!(!report.contains("InnoDB"), "{format}: {report}");
        assert!(!report.contains("server counters"), "{format}: {report}");
        assert!(!report.contains("server CPU"), "{format}: {report}");
        if format != "sysbench" {
            assert!(
                report.contains("prime search up to 10000"),
                "{format}: {report}"
            );
        }
    }
    let record: serde_json::Value =
        serde_json::from_str(&run(&["report", "latest", "--format", "json"])).unwrap();
    assert_eq!(record["kind"], "machine");
    let tests = record["machine_tests"].as_array().unwrap();
    assert_eq!(tests.len(), 1);
    assert_eq!(tests[0]["test"], "cpu");
    assert_eq!(tests[0]["events"], 300);
    assert_eq!(tests[0]["cell"], 0);
    std::fs::remove_dir_all(&dir).unwrap();
    common::assert_nothing_left(&tmp);
}
