//! The command line's workloads against YCSB's: the order (inserting workloads last),
//! which settings win, a properties file read as YCSB's -P, and errors that name the flag or
//! file to fix.

use super::*;

fn choices(letters: &[&str]) -> Choices {
    Choices {
        letters: letters.iter().map(|l| l.to_string()).collect(),
        ..Choices::default()
    }
}

fn error(choices: &Choices) -> String {
    format!("{:#}", workloads(choices).unwrap_err())
}

#[test]
fn workloads_that_insert_run_after_the_others() {
    let names: Vec<String> = workloads(&choices(&["e", "a", "D", "workloadc", "f", "a"]))
        .unwrap()
        .into_iter()
        .map(|w| w.name)
        .collect();
    assert_eq!(
        names,
        [
            "workloada",
            "workloadc",
            "workloadf",
            "workloade",
            "workloadd"
        ]
    );
    let all: Vec<String> = workloads(&Choices::default())
        .unwrap()
        .into_iter()
        .map(|w| w.name)
        .collect();
    assert_eq!(
        all,
        [
            "workloada",
            "workloadb",
            "workloadc",
            "workloadf",
            "workloadd",
            "workloade"
        ]
    );
}

#[test]
fn the_runs_sizes_replace_the_built_in_files_toy_ones() {
    let a = &workloads(&choices(&["a"])).unwrap()[0];
    assert_eq!(a.workload.record_count, DEFAULT_RECORD_COUNT);
    assert_eq!(a.workload.operation_count, 0, "time governs");
    assert_eq!(a.workload.read_proportion, 0.5);
    assert_eq!(a.properties["requestdistribution"], "zipfian");
    let mut given = choices(&["a"]);
    given.record_count = Some(500);
    given.properties = vec![
        ("operationcount".into(), "300".into(), "-p"),
        ("recordcount".into(), "9".into(), "-p"),
        ("fieldcount".into(), "3".into(), "-p"),
    ];
    let a = &workloads(&given).unwrap()[0];
    // --record-count wins over -p recordcount.
    assert_eq!(a.workload.record_count, 500);
    assert_eq!(a.workload.insert_count, 500);
    assert_eq!(a.workload.operation_count, 300);
    assert_eq!(a.workload.field_count, 3);
}

#[test]
fn a_properties_file_is_read_as_ycsbs_minus_capital_p() {
    let dir = std::env::temp_dir().join(format!("ycsb-settings-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("mine.properties");
    std::fs::write(
        &path,
        "# my workload\nrecordcount=2000\nreadproportion=0.1\nupdateproportion=0.9\nrequestdistribution=uniform\n",
    )
    .unwrap();
    let alone = workloads(&Choices {
        file: Some(path.clone()),
        ..Choices::default()
    })
    .unwrap();
    assert_eq!(alone.len(), 1);
    assert_eq!(alone[0].name, "mine");
    assert_eq!(alone[0].workload.record_count, 2000);
    assert_eq!(alone[0].workload.update_proportion, 0.9);
    // Over a built-in workload, with -p over the file.
    let mut over = choices(&["c"]);
    over.file = Some(path.clone());
    over.properties = vec![("readproportion".into(), "0.3".into(), "-p")];
    let c = &workloads(&over).unwrap()[0];
    assert_eq!(c.name, "workloadc");
    assert_eq!(c.workload.read_proportion, 0.3);
    assert_eq!(c.workload.update_proportion, 0.9);
    // A bad value names the file it came from.
    std::fs::write(&path, "fieldcount=ten\n").unwrap();
    let err = error(&Choices {
        file: Some(path.clone()),
        ..Choices::default()
    });
    assert!(err.contains("fieldcount=\"ten\" is not allowed"), "{err}");
    assert!(
        err.contains(&format!("set by --properties {}", path.display())),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn errors_name_the_cause_and_the_fix() {
    let err = error(&choices(&["a", "g"]));
    assert!(
        err.contains(
            "--workload g: no such YCSB core workload; the built-in ones are a, b, c, d, e and f"
        ),
        "{err}"
    );
    let err = error(&Choices {
        file: Some("/nonexistent/workloadz".into()),
        ..Choices::default()
    });
    assert!(
        err.contains("--properties /nonexistent/workloadz: cannot read it"),
        "{err}"
    );
    assert!(err.contains("No such file"), "{err}");
    let mut typo = choices(&["a"]);
    typo.properties = vec![("reqeustdistribution".into(), "uniform".into(), "-p")];
    let err = error(&typo);
    assert_eq!(
        err,
        "unknown YCSB property 'reqeustdistribution' (set by -p): did you mean requestdistribution?"
    );
    typo.properties = vec![("threadcount".into(), "8".into(), "-p")];
    assert!(error(&typo).contains("use enginebench's --threads N"));
    typo.properties = vec![("requestdistribution".into(), "pareto".into(), "-p")];
    let err = error(&typo);
    assert!(
        err.contains("requestdistribution=\"pareto\" is not allowed: requestdistribution must be uniform, zipfian, latest")
            && err.contains("(set by -p: change it there)"),
        "{err}"
    );
    typo.properties = vec![("table".into(), "user table".into(), "-p")];
    assert!(error(&typo).contains("table=\"user table\""));
    let mut zero = choices(&["a"]);
    zero.record_count = Some(0);
    assert!(error(&zero).contains("--record-count 0"));
}
