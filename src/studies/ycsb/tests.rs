//! The YCSB kind's plan against its promises: a series per workload, inserting cells on
//! freshly loaded rows, operationcount as the cell's end, flags reaching the workloads, and
//! each query kind's class in the record.

use super::*;

/// `run ycsb` with `given` as its command line's own flags (and --engines).
fn study(given: &[&str], engines: &[Engine]) -> anyhow::Result<YcsbParams> {
    let flags = YcsbFlags::augment_args(clap::Command::new("ycsb").no_binary_name(true))
        .try_get_matches_from(given)?;
    let matrix = Matrix {
        engines: engines.to_vec(),
        ..Matrix::default()
    };
    ycsb_study(
        &matrix,
        &StudyArgs {
            flags,
            ..StudyArgs::default()
        },
    )
}

fn matrix_for(params: &YcsbParams, engines: &[Engine], threads: &[u32]) -> Matrix {
    Matrix {
        engines: engines.to_vec(),
        threads: threads.to_vec(),
        repeat: Some(1),
        ..Matrix::default()
    }
    .completed(&params.about().defaults)
}

#[test]
fn each_workload_is_a_series_and_inserting_cells_get_fresh_rows() {
    let params = study(&["--workload", "d,a,e", "--record-count", "1000"], &[]).unwrap();
    let engines = [Engine::InnoDb, Engine::RocksDb];
    let matrix = matrix_for(&params, &engines, &[1, 2]);
    let steps = params.steps_on_one_server(&matrix);
    let reload = |engine| Step::PrepareTables {
        engine: Some(engine),
    };
    let shape: Vec<String> = steps
        .iter()
        .map(|step| match step {
            Step::Cell(cell) => format!("{}:{}:{}", cell.phase, cell.engine.key(), cell.threads),
            Step::PrepareTables { engine: None } => "load".into(),
            Step::PrepareTables { engine: Some(e) } => format!("reload {}", e.key()),
            Step::Footprints => "footprints".into(),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(
        shape,
        [
            "load",
            // workload a reads and updates: no reload.
            "0:innodb:1",
            "0:rocksdb:1",
            "0:innodb:2",
            "0:rocksdb:2",
            // d: its first cell per engine follows no insert; later ones do.
            "1:innodb:1",
            "1:rocksdb:1",
            "reload innodb",
            "1:innodb:2",
            "reload rocksdb",
            "1:rocksdb:2",
            // e: every cell follows an insert.
            "reload innodb",
            "2:innodb:1",
            "reload rocksdb",
            "2:rocksdb:1",
            "reload innodb",
            "2:innodb:2",
            "reload rocksdb",
            "2:rocksdb:2",
            "footprints",
        ]
    );
    assert!(steps.contains(&reload(Engine::InnoDb)));
    assert_eq!(params.phase(0, &matrix).name, "workloada");
    assert!(params.phase(0, &matrix).writes);
    let tables = params.tables(Engine::RocksDb, &matrix);
    assert!(tables.per_engine_database);
    assert_eq!(tables.filled[0].rows, 1000);
    assert!(tables.filled[0].create_sql.ends_with("ENGINE=ROCKSDB"));
    let description = params.about().description;
    assert!(
        description.title.starts_with(
            "YCSB workloada, workloadd, workloade: 1000 records of 10 fields x 100 bytes"
        ),
        "{}",
        description.title
    );
    assert!(description
        .title
        .contains("workloada read 50%, update 50% (zipfian)"));
    assert!(description.notes[0].starts_with("workloadd and workloade insert rows"));
}

#[test]
fn operationcount_ends_a_cell_otherwise_the_time_does() {
    let counted = study(&["--workload", "c", "-p", "operationcount=500"], &[]).unwrap();
    let matrix = matrix_for(&counted, &[Engine::InnoDb], &[1]);
    assert_eq!(matrix.time, None);
    let phase = counted.phase(0, &matrix);
    assert_eq!(phase.pacing.stop.events_total, Some(500));
    assert_eq!(phase.count.as_deref(), Some("500 operations"));
    assert!(!phase.writes, "workload c only reads");
    let timed = study(&["--workload", "c"], &[]).unwrap();
    let matrix = matrix_for(&timed, &[Engine::InnoDb], &[1]);
    assert_eq!(matrix.time, Some(std::time::Duration::from_secs(10)));
    assert_eq!(timed.phase(0, &matrix).pacing.stop.events_total, None);
}

#[test]
fn flags_reach_the_workloads_and_bad_ones_say_what_to_do() {
    let params = study(
        &[
            "--workload",
            "b",
            "-p",
            "fieldcount=4",
            "--property",
            "requestdistribution=uniform",
        ],
        &[],
    )
    .unwrap();
    let b = &params.workloads[0].workload;
    assert_eq!(b.field_count, 4);
    assert_eq!(
        b.request_distribution,
        properties::RequestDistribution::Uniform
    );
    let err = study(&["-p", "fieldcount"], &[]).unwrap_err().to_string();
    assert!(err.contains("'fieldcount' is not KEY=VALUE"), "{err}");
    let err = study(&["--workload", "a"], &[Engine::InnoDb, Engine::Memory])
        .unwrap_err()
        .to_string();
    assert!(err.contains("MEMORY tables cannot hold"), "{err}");
}

#[test]
fn the_record_classes_each_kind() {
    let params = study(&["--workload", "f"], &[]).unwrap();
    let matrix = matrix_for(&params, &[Engine::InnoDb], &[1]);
    let mut record = RunRecord::new("ycsb", "ycsb", "t", Default::default());
    params.add_to_record(&mut record, &matrix);
    let class = |kind: &str| record.statement_classes[kind];
    assert_eq!(class("read"), StatementClass::Read);
    assert_eq!(class("scan"), StatementClass::Read);
    assert_eq!(class("update"), StatementClass::Write);
    assert_eq!(class("insert"), StatementClass::Write);
    assert_eq!(class("read_modify_write"), StatementClass::Transaction);
    let workloads = &record.parameters["workloads"];
    assert_eq!(workloads[0]["name"], "workloadf");
    assert_eq!(
        workloads[0]["properties"]["readmodifywriteproportion"],
        "0.5"
    );
}
