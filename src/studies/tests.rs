//! The plans the kinds make, seen from the command line's choices: their steps in order,
//! engines alternating, profiles and builds, agents' shares, cold restarts.

use std::time::Duration;

use super::*;
use crate::engine::Engine;
use crate::plan::{AgentShare, CellStep, Step};
use crate::scenario::file::Phase;

/// The plan of study `name` over `matrix`, its tables at 100 rows.
fn plan_of(name: &str, matrix: Matrix) -> anyhow::Result<Plan> {
    plan_of_agent(name, matrix, None)
}

fn plan_of_agent(name: &str, matrix: Matrix, agent: Option<AgentShare>) -> anyhow::Result<Plan> {
    let args = StudyArgs {
        rows: Some(100),
        ..StudyArgs::default()
    };
    plan_study(name, &matrix, &args, &[], agent)
}

#[test]
fn an_agent_runs_its_share_of_every_cell_and_refuses_cells_it_cannot_share() {
    let agent = |index| AgentShare {
        index,
        count: 2,
        start_at: std::time::SystemTime::UNIX_EPOCH,
        start_at_text: "2026-11-23T10:00:00Z".into(),
    };
    let whole = plan_of(
        "s0",
        Matrix {
            threads: vec![2, 5],
            ..Matrix::default()
        },
    )
    .unwrap();
    let first = plan_of_agent(
        "s0",
        Matrix {
            threads: vec![2, 5],
            ..Matrix::default()
        },
        Some(agent(1)),
    )
    .unwrap();
    let second = plan_of_agent(
        "s0",
        Matrix {
            threads: vec![2, 5],
            ..Matrix::default()
        },
        Some(agent(2)),
    )
    .unwrap();
    assert_eq!(first.steps.len(), whole.steps.len());
    for ((a, b), w) in first.cells().zip(second.cells()).zip(whole.cells()) {
        assert_eq!(a.threads + b.threads, w.threads);
        assert_eq!((a.phase, a.engine, a.repeat), (w.phase, w.engine, w.repeat));
    }
    let err = plan_of_agent(
        "s0",
        Matrix {
            threads: vec![1, 5],
            ..Matrix::default()
        },
        Some(agent(1)),
    )
    .unwrap_err();
    assert!(
        format!("{err}").contains("1 thread(s), which 2 agents cannot share"),
        "{err}"
    );
}

fn cell(phase: usize, engine: Engine, threads: u32, repeat: u32) -> Step {
    Step::Cell(CellStep {
        phase,
        engine,
        threads,
        repeat,
        warmup: false,
        number: 0,
        total: 0,
    })
}

/// The steps with cell numbers cleared, to compare shapes.
fn shape(plan: &Plan) -> Vec<Step> {
    plan.steps
        .iter()
        .map(|step| match step {
            Step::Cell(c) => cell(c.phase, c.engine, c.threads, c.repeat),
            other => other.clone(),
        })
        .collect()
}

#[test]
fn repeats_alternate_between_engines_and_the_index_comes_before_indexed_cells() {
    use Engine::{InnoDb, MyIsam};
    let plan = plan_of(
        "s0",
        Matrix {
            phases: vec!["select".into(), "select+update/indexed".into()],
            threads: vec![1, 5],
            repeat: Some(2),
            ..Matrix::default()
        },
    )
    .unwrap();
    assert_eq!(
        shape(&plan),
        vec![
            Step::PrepareTables { engine: None },
            cell(0, MyIsam, 1, 1),
            cell(0, InnoDb, 1, 1),
            cell(0, MyIsam, 1, 2),
            cell(0, InnoDb, 1, 2),
            cell(0, MyIsam, 5, 1),
            cell(0, InnoDb, 5, 1),
            cell(0, MyIsam, 5, 2),
            cell(0, InnoDb, 5, 2),
            Step::Ddl {
                phase: 1,
                engine: MyIsam
            },
            Step::Ddl {
                phase: 1,
                engine: InnoDb
            },
            cell(2, MyIsam, 1, 1),
            cell(2, InnoDb, 1, 1),
            cell(2, MyIsam, 1, 2),
            cell(2, InnoDb, 1, 2),
            cell(2, MyIsam, 5, 1),
            cell(2, InnoDb, 5, 1),
            cell(2, MyIsam, 5, 2),
            cell(2, InnoDb, 5, 2),
            Step::Footprints,
        ]
    );
    let numbers: Vec<usize> = plan.cells().map(|c| c.number).collect();
    assert_eq!(numbers, (1..=16).collect::<Vec<_>>());
    assert!(plan.cells().all(|c| c.total == 16));
}

#[test]
fn the_s0_plan_has_the_studys_shape() {
    // By default s0 decides, then stops: at least its own 3 repeats, at most 12.
    let deciding = plan_of("s0", Matrix::default()).unwrap();
    let until = deciding.matrix.until_decided.clone().unwrap();
    assert_eq!((until.min_repeats, until.max_repeats), (3, 12));
    assert_eq!(deciding.cells().count(), 4 * 4 * 12 * 2);
    let plan = plan_of(
        "s0",
        Matrix {
            repeat: Some(3),
            ..Matrix::default()
        },
    )
    .unwrap();
    // 4 run phases × 4 thread counts × 3 repeats × 2 engines
    assert_eq!(plan.cells().count(), 96);
    let text = plan.describe();
    assert!(
        text.contains(
            "[96/96] select+update/indexed InnoDB threads=50 repeat 3: 200 loops per thread"
        ),
        "{text}"
    );
    assert!(text.contains("ddl 'CREATE INDEX value ON t(value)' on MyISAM"));
}

#[test]
fn profiles_each_get_a_server_and_timed_cells_add_up() {
    let plan = plan_of(
        "s2",
        Matrix {
            repeat: Some(1),
            ..Matrix::default()
        },
    )
    .unwrap();
    let scenario = plan.study.scenario().unwrap();
    let starts = plan
        .steps
        .iter()
        .filter(|s| matches!(s, Step::StartProfile { .. }))
        .count();
    assert_eq!(starts, scenario.profiles.len());
    // 3 profiles × 2 phases × 1 thread count × 2 engines, 10 s + 2 s warm-up each.
    assert_eq!(plan.timed_duration(), Duration::from_secs(3 * 2 * 2 * 12));
    assert!(scenario
        .phases
        .iter()
        .all(|p| !matches!(p, Phase::Run { threads, .. } if threads.is_empty())));
}

/// `engines` × threads 1 and 4 × repeats 1..=`repeats`, engines innermost.
fn rounds(phase: usize, engines: &[Engine], repeats: u32) -> Vec<Step> {
    let mut cells = Vec::new();
    for threads in [1, 4] {
        for repeat in 1..=repeats {
            for &engine in engines {
                cells.push(cell(phase, engine, threads, repeat));
            }
        }
    }
    cells
}

fn said_fixed(plan: &Plan) -> bool {
    plan.notes
        .iter()
        .any(|note| note.contains("cannot stop once decided"))
}

#[test]
fn a_sysbench_workload_on_engines_alternates_them_round_by_round() {
    use Engine::{InnoDb, MyIsam};
    let on = |engines: Vec<Engine>, repeat: Option<u32>| Matrix {
        engines,
        threads: vec![1, 4],
        time: Some(Duration::from_secs(2)),
        repeat,
        ..Matrix::default()
    };
    // Two engines: each engine's tables in a database of its own, all prepared first, then
    // rounds of both engines, so the run decides, then stops.
    let plan = plan_of("oltp_read_write", on(vec![InnoDb, MyIsam], None)).unwrap();
    assert!(!said_fixed(&plan), "{:?}", plan.notes);
    let until = plan.matrix.until_decided.clone().unwrap();
    assert_eq!((until.min_repeats, until.max_repeats), (3, 12));
    let mut expected = vec![Step::PrepareTables { engine: None }];
    expected.extend(rounds(0, &[InnoDb, MyIsam], 12));
    // Then the tables' size on disk, for space amplification.
    expected.push(Step::Footprints);
    assert_eq!(shape(&plan), expected);
    let second = plan.cells().nth(1).unwrap();
    assert_eq!(
        plan.cell_label(second),
        "[2/48] oltp_read_write MyISAM threads=1 repeat 1"
    );
    assert_eq!(plan.database_for(InnoDb, "eb"), "eb_innodb");
    assert_eq!(plan.database_for(MyIsam, "eb"), "eb_myisam");
    let tables = plan.tables(MyIsam);
    assert!(tables.per_engine_database && !tables.reuse_existing && !tables.keep);
    assert_eq!(tables.filled[0].name, "sbtest1");
    assert!(tables.filled[0].create_sql.ends_with("ENGINE=MyISAM"));
    let text = plan.describe();
    assert!(
        text.contains(
            "prepare 1 table(s) of 10000 rows on InnoDB and MyISAM, each engine's in a database of its own (<database>_<engine>)"
        ),
        "{text}"
    );
    // A fixed count alternates too.
    let fixed = plan_of("oltp_read_write", on(vec![InnoDb, MyIsam], Some(2))).unwrap();
    assert!(fixed.matrix.until_decided.is_none() && fixed.notes.is_empty());
    let mut expected = vec![Step::PrepareTables { engine: None }];
    expected.extend(rounds(0, &[InnoDb, MyIsam], 2));
    expected.push(Step::Footprints);
    assert_eq!(shape(&fixed), expected);

    // One engine: sysbench's own tables, sbtest1..N in the run's database, reused where an
    // external server has them and kept; nothing to decide.
    let one = plan_of("oltp_read_write", on(vec![InnoDb], None)).unwrap();
    assert!(one.matrix.until_decided.is_none() && one.notes.is_empty());
    assert_eq!(
        shape(&one),
        vec![
            Step::PrepareTables {
                engine: Some(InnoDb)
            },
            cell(0, InnoDb, 1, 1),
            cell(0, InnoDb, 4, 1),
            Step::Footprints,
        ]
    );
    assert_eq!(one.database_for(InnoDb, "eb"), "eb");
    let tables = one.tables(InnoDb);
    assert!(!tables.per_engine_database && tables.reuse_existing && tables.keep);
    assert!(one
        .describe()
        .contains("prepare 1 table(s) of 10000 rows on InnoDB (if not already there)"));
    assert_eq!(one.timed_duration(), Duration::from_secs(4));
}

#[test]
fn bulk_insert_runs_one_engine_after_the_other_at_its_own_count() {
    use Engine::{InnoDb, MyIsam};
    // bulk_insert starts every cell from empty tables, one per thread, in the run's own
    // database: one engine's after the other's, so it keeps its count and says why.
    let bulk = plan_of(
        "bulk_insert",
        Matrix {
            engines: vec![InnoDb, MyIsam],
            threads: vec![3],
            ..Matrix::default()
        },
    )
    .unwrap();
    assert!(bulk.matrix.until_decided.is_none());
    // The record keeps the reason, for the summary to say.
    assert_eq!(
        bulk.repeats_fixed_why.as_deref(),
        Some("bulk_insert runs one engine's cells after the other's (their tables share names)")
    );
    assert!(
        bulk.notes.iter().any(|note| note
            == "bulk_insert runs one engine's cells after the other's (their tables share names), so its repeats cannot stop once decided: 1 repeat(s), as --repeat 1"),
        "{:?}",
        bulk.notes
    );
    assert_eq!(
        shape(&bulk),
        vec![
            Step::PrepareTables {
                engine: Some(InnoDb)
            },
            Step::EmptyTables { engine: InnoDb },
            cell(0, InnoDb, 3, 1),
            Step::PrepareTables {
                engine: Some(MyIsam)
            },
            Step::EmptyTables { engine: MyIsam },
            cell(0, MyIsam, 3, 1),
            Step::Footprints,
        ]
    );
    assert_eq!(bulk.tables(InnoDb).empty.len(), 3);
    assert_eq!(bulk.database_for(MyIsam, "eb"), "eb");
}

#[test]
fn servers_are_one_more_axis_of_every_study() {
    let servers = vec!["system".to_string(), "mysql".to_string()];
    let sysbench = plan_of(
        "oltp_point_select",
        Matrix {
            servers: servers.clone(),
            ..Matrix::default()
        },
    )
    .unwrap();
    assert_eq!(
        sysbench
            .profiles
            .iter()
            .map(|p| (p.name.as_str(), p.server_bin.clone().unwrap()))
            .collect::<Vec<_>>(),
        vec![("system", "system".into()), ("mysql", "mysql".into())]
    );
    assert_eq!(
        shape(&sysbench),
        vec![
            Step::StartProfile { profile: 0 },
            Step::PrepareTables {
                engine: Some(Engine::InnoDb)
            },
            cell(0, Engine::InnoDb, 1, 1),
            Step::Footprints,
            Step::StartProfile { profile: 1 },
            Step::PrepareTables {
                engine: Some(Engine::InnoDb)
            },
            cell(0, Engine::InnoDb, 1, 1),
            Step::Footprints,
        ]
    );
    assert!(sysbench
        .describe()
        .contains("start a server (mysql) for profile 'mysql'"));
    // A study with profiles of its own runs each on each build.
    let s2 = plan_of(
        "s2",
        Matrix {
            servers,
            ..Matrix::default()
        },
    )
    .unwrap();
    assert_eq!(s2.profiles.len(), 6);
    assert_eq!(s2.profiles[1].name, "ample memory on mysql");
    let unknown = plan_of(
        "s0",
        Matrix {
            servers: vec!["mariadb-99".into()],
            ..Matrix::default()
        },
    )
    .unwrap_err();
    assert!(unknown
        .to_string()
        .starts_with("--servers mariadb-99: no such server build"));
}

#[test]
fn profiles_choose_which_of_a_studys_set_ups_run() {
    let plan = plan_of(
        "cluster",
        Matrix {
            profiles: vec!["Spider over 2".into(), "one server".into()],
            ..Matrix::default()
        },
    )
    .unwrap();
    let names: Vec<&str> = plan.profiles.iter().map(|p| p.name.as_str()).collect();
    // The file's order, whatever the command line's.
    assert_eq!(names, vec!["one server", "Spider over 2"]);
    let err = plan_of(
        "cluster",
        Matrix {
            profiles: vec!["galera".into()],
            ..Matrix::default()
        },
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.starts_with("--profile 'galera': cluster has no such profile (its profiles: 'one server', 'primary + 2 replicas', 'Galera 3, one writer',"),
        "{err}"
    );
    let err = plan_of(
        "s0",
        Matrix {
            profiles: vec!["x".into()],
            ..Matrix::default()
        },
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains(
            "s0 has no such profile (its profiles: none; built in: 'durable', 'relaxed', 'unsafe')"
        ),
        "{err}"
    );
}

#[test]
fn every_kind_of_study_runs_on_the_built_in_durability_profiles() {
    let twins = || Matrix {
        profiles: vec!["durable".into(), "relaxed".into()],
        ..Matrix::default()
    };
    for study in ["s0", "tpcc", "oltp_point_select"] {
        let plan = plan_of(study, twins()).unwrap();
        let names: Vec<&str> = plan.profiles.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["durable", "relaxed"], "{study}");
        let flush = |profile: usize| {
            plan.profiles[profile]
                .server_opts
                .iter()
                .find(|(name, _)| name == "innodb_flush_log_at_trx_commit")
                .map(|(_, value)| value.clone())
        };
        assert_eq!((flush(0), flush(1)), (Some("1".into()), Some("2".into())));
        let starts = plan
            .steps
            .iter()
            .filter(|step| matches!(step, Step::StartProfile { .. }))
            .count();
        assert_eq!(starts, 2, "{study}: each profile on a server of its own");
    }
    // A study's own profiles run first, then the built-in ones it names.
    let plan = plan_of(
        "cluster",
        Matrix {
            profiles: vec!["durable".into(), "one server".into()],
            ..Matrix::default()
        },
    )
    .unwrap();
    let names: Vec<&str> = plan.profiles.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["one server", "durable"]);
    let err = plan_of(
        "tpcc",
        Matrix {
            profiles: vec!["fast".into()],
            ..Matrix::default()
        },
    )
    .unwrap_err()
    .to_string();
    assert_eq!(
        err,
        "--profile 'fast': tpcc has no such profile (its profiles: none; built in: 'durable', 'relaxed', 'unsafe')"
    );
}

#[test]
fn cold_runs_restart_before_every_cell() {
    let plan = plan_of(
        "s0",
        Matrix {
            phases: vec!["select".into()],
            threads: vec![1],
            repeat: Some(1),
            cold: true,
            ..Matrix::default()
        },
    )
    .unwrap();
    let restarts = plan
        .steps
        .iter()
        .filter(|s| **s == Step::ColdRestart)
        .count();
    assert_eq!(restarts, plan.cells().count());
    assert!(plan
        .describe()
        .contains("restart the server on its datadir"));
}

/// `--format` takes the report's own formats and the kinds', each name once, in the order
/// they always had (it is `--help`'s order, and the first format claiming `.txt` wins).
#[test]
fn every_format_is_offered_once_in_its_old_place() {
    let names: Vec<&str> = crate::cli::formats().iter().map(|f| f.name()).collect();
    assert_eq!(
        names,
        ["text", "markdown", "sysbench", "csv", "json", "html"]
    );
    let all = crate::cli::formats();
    let said = |name: &str| {
        crate::report::formats::for_file(all, std::path::Path::new(name)).map(|f| f.name())
    };
    assert_eq!(said("run.txt"), Some("text"));
    let sysbench = crate::report::formats::named(all, "sysbench").unwrap();
    assert!(crate::report::formats::fits_file(
        all,
        sysbench,
        std::path::Path::new("run.txt")
    ));
    let err = crate::report::formats::named(all, "pdf").err().unwrap();
    assert!(
        err.contains("sysbench (sysbench's own report, per cell), csv ("),
        "{err}"
    );
}
