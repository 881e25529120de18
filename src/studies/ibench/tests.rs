//! The ibench kind's plan against its promises: ibench's steps in order on every engine,
//! tables made per client count, write debt reduced before the first query step, each
//! step's size measured; l.i0 and l.x end when done, the others after --time; the query
//! steps run as two groups; bad choices say what to do.

use super::*;
use crate::driver::client_groups::GroupPacing;

/// `run ibench` with `given` as its own flags, over `matrix`.
fn study(given: &[&str], matrix: &Matrix, rows: Option<u64>) -> anyhow::Result<IbenchParams> {
    let flags = IbenchFlags::augment_args(clap::Command::new("ibench").no_binary_name(true))
        .try_get_matches_from(given)?;
    ibench_study(
        matrix,
        &StudyArgs {
            flags,
            rows,
            ..StudyArgs::default()
        },
    )
}

fn matrix_for(params: &IbenchParams, engines: &[Engine], threads: &[u32]) -> Matrix {
    Matrix {
        engines: engines.to_vec(),
        threads: threads.to_vec(),
        ..Matrix::default()
    }
    .completed(&params.about().defaults)
}

fn shape(params: &IbenchParams, steps: &[Step]) -> Vec<String> {
    steps
        .iter()
        .map(|step| match step {
            Step::Cell(cell) => format!(
                "{}:{}:{}",
                params.step(cell.phase).name(),
                cell.engine.key(),
                cell.threads
            ),
            Step::Own { what, engine } => match Upkeep::of_number(*what) {
                Upkeep::CreateTables { clients } => format!("tables:{}:{clients}", engine.key()),
                Upkeep::ReduceDebt { .. } => format!("debt:{}", engine.key()),
                Upkeep::Size { phase, .. } => {
                    format!("size:{}:{}", params.step(phase).name(), engine.key())
                }
            },
            other => format!("{other:?}"),
        })
        .collect()
}

#[test]
fn every_step_runs_once_in_ibenchs_order_on_each_engine() {
    let params = study(&["--steps", "qp100,l.i2"], &Matrix::default(), Some(1000)).unwrap();
    let engines = [Engine::InnoDb, Engine::RocksDb];
    let matrix = matrix_for(&params, &engines, &[1, 2]);
    assert_eq!(matrix.repeats(), 1, "ibench fixes one repeat");
    assert!(matrix.until_decided.is_none());
    let steps = params.steps_on_one_server(&matrix);
    let mut expected = Vec::new();
    for clients in [1, 2] {
        let both = |what: &str| ["innodb", "rocksdb"].map(|e| format!("{what}:{e}"));
        expected.extend(["innodb", "rocksdb"].map(|e| format!("tables:{e}:{clients}")));
        for step in ["l.i0", "l.x", "l.i2", "qp100"] {
            if step == "qp100" {
                expected.extend(both("debt"));
            }
            expected.extend(["innodb", "rocksdb"].map(|e| format!("{step}:{e}:{clients}")));
            expected.extend(both(&format!("size:{step}")));
        }
    }
    assert_eq!(shape(&params, &steps), expected);
    assert_eq!(params.steps, ["l.i0", "l.x", "l.i2", "qp100"]);
    let tables = params.tables(Engine::RocksDb, &matrix);
    assert!(tables.per_engine_database);
    assert_eq!(tables.owned, ["pi1", "pi2"]);
    assert_eq!(
        params.database_for(Engine::RocksDb, "eb", &matrix),
        "eb_rocksdb"
    );
}

#[test]
fn each_repeat_runs_the_whole_sequence_on_tables_made_afresh() {
    let params = study(&["--steps", "l.i1"], &Matrix::default(), Some(100)).unwrap();
    let matrix = Matrix {
        engines: vec![Engine::InnoDb],
        threads: vec![4],
        repeat: Some(2),
        warmup_repeats: 1,
        ..Matrix::default()
    }
    .completed(&params.about().defaults);
    let steps = params.steps_on_one_server(&matrix);
    let tables = Upkeep::CreateTables { clients: 4 }.number();
    let made: Vec<usize> = steps
        .iter()
        .enumerate()
        .filter(|(_, step)| matches!(step, Step::Own { what, .. } if *what == tables))
        .map(|(at, _)| at)
        .collect();
    // Tables, then l.i0, l.x, l.i1 each followed by its size: 7 steps a repeat.
    assert_eq!(made, [0, 7, 14]);
    let cells: Vec<(u32, bool)> = steps
        .iter()
        .filter_map(|step| match step {
            Step::Cell(cell) => Some((cell.repeat, cell.warmup)),
            _ => None,
        })
        .collect();
    assert_eq!(cells.len(), 9);
    assert_eq!(cells[..3], [(1, true); 3]);
    assert_eq!(cells[6..], [(3, false); 3]);
    let last = steps.last().unwrap();
    assert_eq!(
        *last,
        Step::Own {
            what: Upkeep::Size {
                phase: 2,
                clients: 4,
                repeat: 3
            }
            .number(),
            engine: Engine::InnoDb
        }
    );
}

#[test]
fn load_and_index_end_when_done_the_others_after_the_time() {
    let params = study(&[], &Matrix::default(), Some(1050)).unwrap();
    let matrix = matrix_for(&params, &[Engine::InnoDb], &[1]);
    assert_eq!(matrix.time, Some(DEFAULT_TIME));
    let load = params.phase(0, &matrix);
    assert_eq!(load.name, "l.i0");
    // 1050 rows: ten INSERTs of 100, one of 50.
    assert_eq!(load.pacing.stop.events_per_thread, Some(11));
    assert_eq!(load.pacing.stop.duration, None);
    assert_eq!(load.count.as_deref(), Some("1050 rows per client"));
    let index = params.phase(1, &matrix);
    assert_eq!(index.pacing.stop.events_per_thread, Some(1));
    for phase in 2..params.steps.len() {
        let run = params.phase(phase, &matrix);
        assert_eq!(run.pacing.stop.duration, Some(DEFAULT_TIME), "{}", run.name);
        assert_eq!(run.pacing.stop.events_per_thread, None);
        assert_eq!(run.pacing.rate, None);
    }
    let description = params.about().description;
    assert!(description
        .title
        .starts_with("Insert benchmark (ibench): 1050 rows per client's table; l.i0, l.x, l.i1"));
    assert!(description.notes[1].contains("write-debt reduction"));
}

#[test]
fn a_query_step_is_a_closed_loop_reader_and_an_inserter_and_deleter_per_client_each_second() {
    let spec = crate::server::ConnectionSpec::unix_socket(
        std::path::Path::new("/nonexistent"),
        "root",
        None,
    );
    let text = crate::driver::Protocol::Text;
    let step = IbenchStep::named("qr500").unwrap();
    let grouped = operations::query_step(step, 3, &spec, text, 1, 100).unwrap();
    let groups = grouped.client_groups();
    assert_eq!(groups.len(), 3);
    assert_eq!(groups[0].name, "queries");
    assert_eq!(groups[0].threads, 3);
    assert_eq!(groups[0].pacing, GroupPacing::ClosedLoop);
    for (group, name) in groups[1..].iter().zip(["inserter", "deleter"]) {
        assert_eq!(group.name, name);
        assert_eq!(group.threads, 3);
        let GroupPacing::RatePerConnection(rate) = group.pacing else {
            panic!("{:?}", group.pacing)
        };
        // One event a second per connection: the second's 10 rounds of 50 rows.
        assert_eq!(rate.events_per_s, 1.0);
        assert_eq!(group.offered_rate_at(1.0), Some(3.0));
    }
    assert_eq!(step.writer_rounds_per_s(), Some(10));
    assert_eq!(
        grouped.query_kinds(),
        [
            "queries/market",
            "queries/register",
            "queries/pdc",
            "inserter/insert",
            "deleter/delete",
            "deleter/get_min"
        ]
    );
    let point = operations::query_step(IbenchStep::named("qp100").unwrap(), 1, &spec, text, 1, 100)
        .unwrap()
        .query_kinds();
    assert_eq!(point[..2], ["queries/point", "queries/get_max"]);
    assert!(operations::query_step(IbenchStep::Load, 1, &spec, text, 1, 100).is_err());
    // l.i1 and l.i2: an inserter and a deleter per client, closed loop.
    let writes = operations::write_step(2, &spec, text, 1, 50);
    let groups = writes.client_groups();
    assert_eq!(groups.len(), 2);
    assert!(groups
        .iter()
        .all(|group| group.pacing == GroupPacing::ClosedLoop && group.threads == 2));
    assert_eq!(
        writes.query_kinds(),
        ["inserter/insert", "deleter/delete", "deleter/get_min"]
    );
}

#[test]
fn the_insert_benchmark_sends_text_as_iibench_py_unless_told() {
    let params = study(&[], &Matrix::default(), None).unwrap();
    let matrix = matrix_for(&params, &[Engine::RocksDb], &[1]);
    let phase = params.phase(4, &matrix);
    assert_eq!(phase.protocol.sent, crate::driver::Protocol::Text);
    assert!(!phase.protocol.differs());
    let prepared = Matrix {
        protocol: Some(crate::driver::Protocol::Prepared),
        ..matrix
    };
    let phase = params.phase(4, &prepared);
    assert_eq!(phase.protocol.sent, crate::driver::Protocol::Prepared);
    assert_eq!(phase.protocol.reference, crate::driver::Protocol::Text);
}

#[test]
fn bad_choices_say_the_cause_and_the_fix() {
    let err = |given: &[&str], matrix: Matrix, rows: Option<u64>| {
        study(given, &matrix, rows).unwrap_err().to_string()
    };
    let message = err(&[], Matrix::default(), Some(0));
    assert!(
        message.starts_with(
            "--rows 0: give the rows each client's table is loaded with in l.i0, 1 or more"
        ),
        "{message}"
    );
    let message = err(&["--steps", "l.i1,qx100"], Matrix::default(), None);
    assert!(
        message.starts_with("--steps qx100: no such ibench step"),
        "{message}"
    );
    let paced = Matrix {
        rate: Some(100.0),
        ..Matrix::default()
    };
    assert!(err(&[], paced, None).contains("ibench paces its own steps"));
    let memory = Matrix {
        engines: vec![Engine::Memory],
        ..Matrix::default()
    };
    assert!(err(&[], memory, None).starts_with("--engines memory:"));
    let counted = Matrix {
        loops: Some(10),
        ..Matrix::default()
    };
    assert!(err(&[], counted, None).contains("give --time"));
}

#[test]
fn the_record_keeps_the_choices_and_classes_each_kind() {
    let params = study(&[], &Matrix::default(), Some(5000)).unwrap();
    let matrix = matrix_for(&params, &[Engine::InnoDb], &[1]);
    let mut record = RunRecord::new("ibench", "ibench", "t", Default::default());
    params.add_to_record(&mut record, &matrix);
    assert_eq!(record.parameters["rows_per_table"], 5000);
    assert_eq!(record.parameters["steps"][9], "qp1000");
    let class = |kind: &str| record.statement_classes[kind];
    assert_eq!(class("insert"), StatementClass::Write);
    assert_eq!(class("deleter/delete"), StatementClass::Write);
    assert_eq!(class("queries/market"), StatementClass::Read);
    assert_eq!(class("queries/point"), StatementClass::Read);
}
