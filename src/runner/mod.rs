//! Carries out a study on a target, step by step, keeping the run record current on disk:
//! the record exists before load starts and is saved after every load, step and cell.

mod progress;

use anyhow::{anyhow, Context};
use mysql::prelude::Queryable;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

use crate::console::note;
use crate::driver::{
    run_cell, Arrivals, CellConfig, CellObserver, CellOutcome, Progress, RateSpec, StopCondition,
    Workload,
};
use crate::engine::Engine;
use crate::interrupt;
use crate::load::{load_table, memory_table_cap, LoadOutcome, LoadPlan, TableSpec};
use crate::measure::{
    filesystem_of, measure_footprint, own_cpu_us, sample_process, status_delta, EnvironmentRecord,
    FilesystemState, ProcessSample, StatusSnapshot,
};
use crate::plan::{plan_scenario, Step};
use crate::results::{
    CellCounters, CellKey, CellRecord, IntervalCounters, LoadRecord, OutcomeRecord, ProbeCost,
    ProfileRecord, ResultFile, RunRecord, RunStatus, SequenceRecord, SequenceStepRecord,
    StepRecord, Store, StudyKind,
};
use crate::scenario::file::{
    FileWorkload, Phase as FilePhase, Profile as FileProfile, Scenario as FileScenario,
    Step as FileStep,
};
use crate::scenario::oltp::{bulk_insert_table_sql, OltpKind, OltpOptions, OltpWorkload};
use crate::server::{DescribeMysqlError, ServerArgsResolved, Target};
use progress::CellProgress;

/// Options that shape how a run reports, not what it measures.
pub struct RunOutput {
    pub results: ResultFile,
    /// The SQLite result store the run is appended to (`--db`), unless `--no-db`.
    pub store: Option<Store>,
    pub report_interval: std::time::Duration,
    /// Print interval lines on a non-terminal stderr.
    pub print_intervals: bool,
}

impl RunOutput {
    /// Saves the record as it stands to the results file and the store.
    pub fn save(&self, record: &RunRecord) -> anyhow::Result<()> {
        self.results.save(record)?;
        if let Some(store) = &self.store {
            store.save(record)?;
        }
        Ok(())
    }

    /// The last save; `--json -` writes only now.
    fn finish(&self, record: &RunRecord) -> anyhow::Result<()> {
        self.results.finish(record)?;
        if let Some(store) = &self.store {
            store.save(record)?;
        }
        Ok(())
    }
}

/// A run's record, or the error that stopped it together with the record as far as it got
/// (saved, and with the servers already torn down).
pub type RunResult = Result<RunRecord, (anyhow::Error, Box<RunRecord>)>;

/// A sysbench workload's run: the workload, its sysbench options, and the matrix.
#[derive(Debug, Clone, serde::Serialize)]
pub struct OltpParams {
    pub workload: OltpKind,
    pub options: OltpOptions,
    pub engines: Vec<Engine>,
    pub threads: Vec<u32>,
    pub time: Option<std::time::Duration>,
    /// sysbench's --events: events in all, shared among the threads.
    pub events: Option<u64>,
    pub warmup: Option<std::time::Duration>,
    pub repeat: u32,
    /// Rate mode: events per second in all, and how arrivals are spaced.
    pub rate_per_s: Option<f64>,
    pub arrivals: Arrivals,
    pub seed: u64,
    pub load_plan: LoadPlan,
    pub query_timeout: Option<std::time::Duration>,
}

pub fn run_oltp(params: &OltpParams, server: &ServerArgsResolved, output: &RunOutput) -> RunResult {
    // sbtest tables prepared earlier (by sysbench or `enginebench prepare`) are the input.
    let workload = crate::scenario::oltp::OltpWorkload {
        spec: crate::server::ConnectionSpec::unix_socket(std::path::Path::new(""), "", None),
        kind: params.workload,
        options: params.options.clone(),
        threads: 1,
        seed: 0,
    };
    let classes = crate::driver::Workload::query_kinds(&workload)
        .into_iter()
        .map(|name| {
            let class = crate::scenario::oltp::statement_group(&name);
            (name, class)
        })
        .collect();
    let name = params.workload.name();
    let title = crate::results::sysbench_title(name);
    run_study(
        (StudyKind::Sysbench, name, &title, classes),
        params,
        &params.engines,
        server,
        output,
        is_sbtest_table,
        |study| execute_oltp(params, study),
    )
}

fn execute_oltp(params: &OltpParams, study: &mut Study) -> anyhow::Result<()> {
    let cell_total = params.engines.len() * params.threads.len() * params.repeat as usize;
    let max_threads = params.threads.iter().copied().max().unwrap_or(1);
    for &engine in &params.engines {
        if interrupt::requested() {
            break;
        }
        prepare_oltp_tables(study, params, engine, max_threads)?;
        for &threads in &params.threads {
            for repeat in 1..=params.repeat {
                if interrupt::requested() {
                    return Ok(());
                }
                if params.workload == OltpKind::BulkInsert {
                    // Each bulk_insert run counts ids from 1 again: start from empty tables.
                    for table in 1..=threads {
                        study
                            .probe
                            .query_drop(format!("TRUNCATE TABLE sbtest{table}"))
                            .described()?;
                    }
                }
                let workload = OltpWorkload {
                    spec: match params.query_timeout {
                        Some(timeout) => study.spec.with_query_timeout(timeout),
                        None => study.spec.clone(),
                    },
                    kind: params.workload,
                    options: params.options.clone(),
                    threads,
                    seed: params.seed.wrapping_add(study.record.cells.len() as u64),
                };
                let config = CellConfig {
                    threads,
                    stop: StopCondition {
                        events_per_thread: None,
                        events_total: params.events,
                        duration: params.time,
                    },
                    warmup: params.warmup,
                    report_interval: study.output.report_interval,
                    rate: params.rate_per_s.map(|events_per_s| RateSpec {
                        events_per_s,
                        arrivals: params.arrivals,
                    }),
                };
                let label = format!(
                    "[{}/{cell_total}] {} {engine} threads={threads} repeat {repeat}",
                    study.record.cells.len() + 1,
                    params.workload.name()
                );
                let key = CellKey {
                    variant: params.workload.name().into(),
                    engine,
                    profile: None,
                    threads,
                    repeat,
                    warmup_repeat: false,
                };
                if study.measure_cell(&workload, &config, key, label)? {
                    study.restart_server()?;
                    prepare_oltp_tables(study, params, engine, max_threads)?;
                }
            }
        }
    }
    Ok(())
}

/// sysbench's tables for the workload: sbtest1..=tables filled (reused on an external
/// server when they are there, as sysbench's `run` expects a `prepare` before it), or for
/// bulk_insert one empty (id, k) table per thread.
fn prepare_oltp_tables(
    study: &mut Study,
    params: &OltpParams,
    engine: Engine,
    max_threads: u32,
) -> anyhow::Result<()> {
    if params.workload == OltpKind::BulkInsert {
        for table in 1..=max_threads {
            let name = format!("sbtest{table}");
            if matches!(study.target, Target::External { .. })
                && table_exists(&mut study.probe, study.database, &name)?
            {
                return Err(anyhow!(
                    "bulk_insert needs empty tables of its own but {}.{name} exists: run it on a throwaway server or pass another --database",
                    study.database
                ));
            }
            study
                .probe
                .query_drop(format!("DROP TABLE IF EXISTS {name}"))
                .described()?;
            study
                .probe
                .query_drop(bulk_insert_table_sql(table, engine))
                .described()?;
            study
                .created_tables
                .push((study.database.to_string(), name));
        }
        return Ok(());
    }
    let tables = if params.workload.single_table() {
        1
    } else {
        params.options.tables
    };
    if matches!(study.target, Target::External { .. }) {
        let mut existing = 0;
        for table in 1..=tables {
            if table_exists(
                &mut study.probe,
                study.database,
                &crate::scenario::sbtest::table_name(table),
            )? {
                existing += 1;
            }
        }
        if existing == tables {
            note(&format!(
                "using the existing sbtest1..sbtest{tables} tables of {}",
                study.database
            ));
            return Ok(());
        }
    }
    for table in 1..=tables {
        let spec = crate::scenario::sbtest::table_spec(
            table,
            params.options.table_size,
            engine,
            params.seed,
        );
        study.load(engine, &spec, &params.load_plan, 1)?;
        // Like sysbench's prepare, prepared tables stay for the next run.
        study.created_tables.retain(|(_, name)| *name != spec.name);
    }
    Ok(())
}

/// A scenario file's run, with what the command line changed.
#[derive(Debug, Clone, serde::Serialize)]
pub struct FileRunParams {
    /// The scenario file's text, kept in the record so a run can be understood later.
    pub scenario_text: String,
    pub engines: Vec<Engine>,
    pub repeat: u32,
    /// Repeats run first and left out of the reports.
    pub warmup_repeats: u32,
    /// Restart the server (and drop the page cache) before every cell.
    pub cold: bool,
    pub seed: u64,
    pub load_plan: LoadPlan,
    pub query_timeout: Option<std::time::Duration>,
    /// Parameters after --set, and the scale.
    pub parameters: BTreeMap<String, String>,
    pub scale: f64,
}

pub fn run_file_scenario(
    scenario: &FileScenario,
    params: &FileRunParams,
    server: &ServerArgsResolved,
    output: &RunOutput,
) -> RunResult {
    let classes = crate::scenario::file::statement_groups(scenario);
    run_study(
        (
            StudyKind::Scenario,
            &scenario.name,
            &scenario.title,
            classes,
        ),
        params,
        &params.engines,
        server,
        output,
        |_| false,
        |study| execute_file_scenario(scenario, params, study),
    )
}

/// Each engine's tables live in a database of their own, so the scenario's SQL names
/// tables plainly: `<database>_<engine>`.
fn engine_database(study: &Study, engine: Engine) -> String {
    format!("{}_{}", study.database, engine.key())
}

fn execute_file_scenario(
    scenario: &FileScenario,
    params: &FileRunParams,
    study: &mut Study,
) -> anyhow::Result<()> {
    let steps = plan_scenario(
        scenario,
        &params.engines,
        params.repeat,
        params.warmup_repeats,
    );
    let cell_total = steps
        .iter()
        .filter(|s| matches!(s, Step::Cell { .. }))
        .count();
    let base_options = study.server.options.clone();
    // The DDL phases done on the current server, to apply again after a crash.
    let mut done_ddl: Vec<usize> = Vec::new();
    let mut load_failures = 0;
    for step in steps {
        if interrupt::requested() {
            break;
        }
        match step {
            Step::StartProfile { profile } => {
                study.switch_profile(&scenario.profiles[profile], &base_options)?;
                done_ddl.clear();
            }
            Step::PrepareTables => prepare_file_tables(scenario, params, study)?,
            Step::Ddl { phase, engine } => {
                let FilePhase::Ddl { name, sql } = &scenario.phases[phase] else {
                    unreachable!("planned from a ddl phase")
                };
                run_file_ddl(study, engine, name, sql)?;
                if !done_ddl.contains(&phase) {
                    done_ddl.push(phase);
                }
            }
            Step::Load {
                phase,
                method,
                engine,
                repeat,
            } => {
                let FilePhase::Load {
                    name,
                    table,
                    methods,
                } = &scenario.phases[phase]
                else {
                    unreachable!("planned from a load phase")
                };
                let plan = &methods[method];
                let database = engine_database(study, engine);
                let spec = scenario.tables[*table].load_spec(engine, params.seed);
                // A method that fails (a full MEMORY table, a refused LOAD DATA) is
                // recorded and the phase goes on with the others.
                let loaded = study.load_in(&database, engine, &spec, plan, repeat, Some(name));
                if let Err(err) = loaded {
                    note(&format!("{} on {engine} failed: {err:#}", plan.label()));
                    load_failures += 1;
                    if !study.target.is_alive() {
                        recover_file_tables(scenario, params, study, &done_ddl)?;
                    }
                }
            }
            Step::Sequence { phase, engine } => {
                let FilePhase::Sequence {
                    name,
                    runs,
                    discard,
                    steps,
                } = &scenario.phases[phase]
                else {
                    unreachable!("planned from a sequence phase")
                };
                run_file_sequence(
                    study, scenario, params, engine, name, *runs, *discard, steps,
                )?;
            }
            Step::Cell {
                phase,
                engine,
                threads,
                repeat,
                warmup: warmup_repeat,
            } => {
                if params.cold {
                    study.cold_restart()?;
                }
                let FilePhase::Run {
                    name,
                    ignore_errors,
                    time,
                    loops,
                    warmup,
                    events,
                    ..
                } = &scenario.phases[phase]
                else {
                    unreachable!("planned from a run phase")
                };
                let spec = study.spec.with_database(&engine_database(study, engine));
                let workload = FileWorkload {
                    spec: match params.query_timeout {
                        Some(timeout) => spec.with_query_timeout(timeout),
                        None => spec,
                    },
                    events: events.clone(),
                    ignore_errors: ignore_errors.clone(),
                    seed: params.seed.wrapping_add(study.record.cells.len() as u64),
                };
                let config = CellConfig {
                    threads,
                    stop: StopCondition {
                        events_per_thread: if time.is_some() { None } else { *loops },
                        events_total: None,
                        duration: *time,
                    },
                    warmup: *warmup,
                    report_interval: study.output.report_interval,
                    rate: None,
                };
                let label = format!(
                    "[{}/{cell_total}] {name} {engine} threads={threads} repeat {repeat}",
                    study.record.cells.len() + 1
                );
                let key = CellKey {
                    variant: name.clone(),
                    engine,
                    profile: None,
                    threads,
                    repeat,
                    warmup_repeat,
                };
                if study.measure_cell(&workload, &config, key, label)? {
                    recover_file_tables(scenario, params, study, &done_ddl)?;
                }
            }
            Step::Footprints => {
                for &engine in &params.engines {
                    let database = engine_database(study, engine);
                    for table in scenario.tables.iter().filter(|t| !t.deferred) {
                        let footprint = measure_footprint(
                            &mut study.probe,
                            &database,
                            &table.name,
                            engine,
                            study.datadir.as_deref(),
                            "after_run",
                        )
                        .described()
                        .with_context(|| {
                            format!("measuring the disk footprint of {}", table.name)
                        })?;
                        study.record.footprints.push(footprint);
                    }
                }
            }
        }
        study.save()?;
    }
    if load_failures > 0 {
        note(&format!(
            "{load_failures} load(s) failed; their errors are in the results"
        ));
    }
    Ok(())
}

/// Each engine's database created afresh and the scenario's tables (all but the
/// `deferred` ones) loaded into it.
fn prepare_file_tables(
    scenario: &FileScenario,
    params: &FileRunParams,
    study: &mut Study,
) -> anyhow::Result<()> {
    for &engine in &params.engines {
        let database = engine_database(study, engine);
        let exists: Option<String> = study
            .probe
            .exec_first(
                "SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?",
                (&database,),
            )
            .described()?;
        let external = matches!(study.target, Target::External { .. });
        if external && exists.is_some() && !study.created_databases.contains(&database) {
            // Someone else's database: run beside what is there only when told to, and
            // then replace only the scenario's own tables.
            if !study.server.force {
                let tables: Vec<String> = study
                    .probe
                    .exec(
                        "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? ORDER BY TABLE_NAME",
                        (&database,),
                    )
                    .described()?;
                return Err(anyhow!(
                    "database {database} exists on the external server and was not created by this run (tables: {}); drop it, pass another --database, or --force to run beside its tables (only the scenario's own tables are replaced)",
                    if tables.is_empty() { "none".to_string() } else { tables.join(", ") }
                ));
            }
            for table in &scenario.tables {
                study
                    .probe
                    .query_drop(format!(
                        "DROP TABLE IF EXISTS `{database}`.`{}`",
                        table.name
                    ))
                    .described()?;
            }
        } else {
            study
                .probe
                .query_drop(format!("DROP DATABASE IF EXISTS `{database}`"))
                .described()?;
            study
                .probe
                .query_drop(format!("CREATE DATABASE `{database}`"))
                .map_err(|err| {
                    anyhow!(
                        "cannot create the database {database}: {}; a scenario keeps each engine's tables in a database of its own, <--database>_<engine>: grant the user ALL ON `{}\\_%`.* or pass another --database",
                        crate::server::describe_mysql_error(&err),
                        study.database
                    )
                })?;
            if !study.created_databases.contains(&database) {
                study.created_databases.push(database.clone());
            }
        }
        for table in scenario.tables.iter().filter(|t| !t.deferred) {
            let spec = table.load_spec(engine, params.seed);
            study.load_in(&database, engine, &spec, &params.load_plan, 1, None)?;
        }
    }
    Ok(())
}

/// After a crash: a fresh server with the scenario's tables loaded again and the DDL
/// phases already done applied again, so the remaining steps find what they expect.
fn recover_file_tables(
    scenario: &FileScenario,
    params: &FileRunParams,
    study: &mut Study,
    done_ddl: &[usize],
) -> anyhow::Result<()> {
    study.restart_server()?;
    prepare_file_tables(scenario, params, study)?;
    for &phase in done_ddl {
        if let FilePhase::Ddl { name, sql } = &scenario.phases[phase] {
            for &engine in &params.engines {
                run_file_ddl(study, engine, name, sql)?;
            }
        }
    }
    Ok(())
}

/// A sequence phase on one engine: `runs` timed runs of its steps, each run recorded as it
/// finishes. A failing step (an engine limit, a full disk) ends this engine's runs with
/// the error recorded; the study goes on.
#[allow(clippy::too_many_arguments)]
fn run_file_sequence(
    study: &mut Study,
    scenario: &FileScenario,
    params: &FileRunParams,
    engine: Engine,
    name: &str,
    runs: u32,
    discard: u32,
    steps: &[FileStep],
) -> anyhow::Result<()> {
    let database = engine_database(study, engine);
    let spec = study.spec.with_database(&database);
    let mut conn = spec.connect()?;
    // ALTER and CREATE INDEX rebuild a MEMORY table under this session's cap.
    if let Some(cap) = memory_table_cap(engine, 4 << 30) {
        conn.query_drop(cap).described()?;
    }
    for run in 1..=runs {
        if interrupt::requested() {
            return Ok(());
        }
        let mut timings = Vec::new();
        let mut error = None;
        let disk_before = study.datadir.as_deref().and_then(filesystem_of);
        for step in steps {
            let started = Instant::now();
            let (step_name, result) = match step {
                FileStep::Sql { name, sql } => (
                    name,
                    conn.query_drop(sql.replace("{engine}", engine.sql_name()))
                        .map_err(|err| anyhow!(crate::server::describe_with_hint(&err))),
                ),
                FileStep::Load { name, table } => {
                    let table_spec = scenario.tables[*table].load_spec(engine, params.seed);
                    let loaded = load_table(
                        &spec,
                        &table_spec,
                        &params.load_plan,
                        study.target.server_pid(),
                        &|| !interrupt::requested(),
                    );
                    (name, loaded.map(|_| ()).map_err(anyhow::Error::from))
                }
            };
            timings.push(SequenceStepRecord {
                name: step_name.clone(),
                elapsed_ms: started.elapsed().as_secs_f64() * 1000.0,
            });
            if let Err(err) = result {
                error = Some(format!(
                    "step {step_name}: {err:#}{}",
                    study.failure_context(disk_before.as_ref())
                ));
                break;
            }
        }
        let total_ms = timings.iter().map(|t| t.elapsed_ms).sum();
        note(&format!(
            "{name} on {engine}, run {run}/{runs}{}: {}",
            if run <= discard { " (warm-up)" } else { "" },
            match &error {
                Some(error) => format!("failed: {error}"),
                None => format!("{total_ms:.0} ms"),
            }
        ));
        let failed = error.is_some();
        study.record.sequences.push(SequenceRecord {
            phase: name.to_string(),
            engine,
            profile: study.profile.clone(),
            run,
            discarded: run <= discard,
            steps: timings,
            total_ms,
            error,
        });
        study.save()?;
        if failed {
            if !study.target.is_alive() {
                study.restart_server()?;
            }
            break;
        }
    }
    Ok(())
}

fn run_file_ddl(study: &mut Study, engine: Engine, name: &str, sql: &str) -> anyhow::Result<()> {
    let database = engine_database(study, engine);
    let mut conn = study.spec.with_database(&database).connect()?;
    note(&format!("{name} on {engine}: {sql}"));
    let started = Instant::now();
    let result = conn
        .query_drop(sql)
        .map_err(|err| anyhow!(crate::server::describe_with_hint(&err)));
    let elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
    study.record.steps.push(StepRecord {
        name: "ddl".into(),
        engine: Some(engine),
        profile: study.profile.clone(),
        detail: name.to_string(),
        elapsed_ms,
        rows: None,
        error: result.as_ref().err().map(|err| format!("{err:#}")),
    });
    study.save()?;
    result.with_context(|| format!("phase {name} on {engine}: {sql}"))
}

/// `enginebench prepare sbtest`: sysbench's tables, filled with `plan`, left in place.
pub fn run_prepare_sbtest(
    tables: u32,
    table_size: u64,
    engine: Engine,
    seed: u64,
    plan: LoadPlan,
    server: &ServerArgsResolved,
    output: &RunOutput,
) -> RunResult {
    #[derive(serde::Serialize)]
    struct PrepareParams {
        tables: u32,
        table_size: u64,
        engine: Engine,
        load_plan: LoadPlan,
    }
    let params = PrepareParams {
        tables,
        table_size,
        engine,
        load_plan: plan,
    };
    run_study(
        (
            StudyKind::Prepare,
            "prepare-sbtest",
            crate::results::PREPARE_TITLE,
            BTreeMap::new(),
        ),
        &params,
        &[engine],
        server,
        output,
        is_sbtest_table,
        |study| {
            for table_number in 1..=tables {
                let table =
                    crate::scenario::sbtest::table_spec(table_number, table_size, engine, seed);
                study.load(engine, &table, &plan, 1)?;
                // Prepared tables are the point of this command: keep them.
                study.created_tables.retain(|(_, name)| *name != table.name);
            }
            Ok(())
        },
    )
}

/// What a study's body works with: the target, its connections, and the record.
pub struct Study<'a> {
    target: Target,
    /// Tables on an external server the study may use though it did not create them.
    reusable_table: fn(&str) -> bool,
    /// How servers are opened: the command line's choices, plus the current profile's.
    server: ServerArgsResolved,
    /// The scenario profile the current server runs, if any.
    profile: Option<String>,
    engines: &'a [Engine],
    database: &'a str,
    spec: crate::server::ConnectionSpec,
    probe: mysql::Conn,
    datadir: Option<PathBuf>,
    record: &'a mut RunRecord,
    output: &'a RunOutput,
    /// (database, table) made by the run, dropped at its end on an external server.
    created_tables: Vec<(String, String)>,
    /// Databases made for the run (a scenario file's per-engine databases).
    created_databases: Vec<String>,
}

/// Opens the target (starting a throwaway server), refuses engines it lacks, and returns it
/// with the connections a study uses.
fn open_target(
    server: &ServerArgsResolved,
    engines: &[Engine],
    reusable_table: fn(&str) -> bool,
) -> anyhow::Result<(
    Target,
    crate::server::ServerRecord,
    crate::server::ConnectionSpec,
    mysql::Conn,
)> {
    note(&match &server.dsn {
        Some(dsn) => format!("using the external server {}", dsn.redacted()),
        None => "starting a throwaway MariaDB server...".to_string(),
    });
    let target = Target::open(server.dsn.clone(), &server.options, &server.database)?;
    target.check_engines(engines)?;
    let server_record = target.record()?;
    note(&format!(
        "server {} ready ({})",
        server_record.version, server_record.address
    ));
    let spec = target.spec(&server.database);
    let mut probe = spec.connect()?;
    if let (Target::External { dsn }, false) = (&target, server.force) {
        let foreign: Vec<String> = probe
            .exec(
                "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? ORDER BY TABLE_NAME",
                (&server.database,),
            )
            .described()?;
        let foreign: Vec<String> = foreign
            .into_iter()
            .filter(|table| !reusable_table(table))
            .collect();
        if !foreign.is_empty() {
            return Err(anyhow!(
                "database {} on {} holds tables enginebench did not create ({}): pass another --database, or --force to run beside them (they are left alone)",
                server.database,
                dsn.redacted(),
                foreign.join(", ")
            ));
        }
    }
    Ok((target, server_record, spec, probe))
}

fn datadir_of(target: &Target) -> Option<PathBuf> {
    match target {
        Target::Throwaway(server) => Some(server.datadir()),
        Target::External { .. } => None,
    }
}

/// The lifecycle every study shares: record first, then the server, the engine check, the
/// body, and on an external server the removal of the tables the run created.
fn run_study(
    (kind, name, title, statement_classes): (
        StudyKind,
        &str,
        &str,
        BTreeMap<String, crate::scenario::StatementClass>,
    ),
    params: &impl serde::Serialize,
    engines: &[Engine],
    server: &ServerArgsResolved,
    output: &RunOutput,
    reusable_table: fn(&str) -> bool,
    body: impl FnOnce(&mut Study) -> anyhow::Result<()>,
) -> RunResult {
    let parameters = match serde_json::to_value(params) {
        Ok(serde_json::Value::Object(map)) => map.into_iter().collect(),
        _ => BTreeMap::new(),
    };
    let mut record = RunRecord::new(kind, name, title, parameters);
    record.statement_classes = statement_classes;
    record.environment = Some(EnvironmentRecord::probe(None));
    if let Err(err) = output.save(&record) {
        return Err((err, Box::new(record)));
    }
    let result = (|| -> anyhow::Result<()> {
        let (target, server_record, spec, probe) = open_target(server, engines, reusable_table)?;
        record.server = Some(server_record);
        record.environment = Some(EnvironmentRecord::probe(datadir_of(&target).as_deref()));
        output.save(&record)?;
        let mut study = Study {
            reusable_table,
            datadir: datadir_of(&target),
            target,
            server: server.clone(),
            profile: None,
            engines,
            database: &server.database,
            spec,
            probe,
            record: &mut record,
            output,
            created_tables: Vec::new(),
            created_databases: Vec::new(),
        };
        let result = body(&mut study);
        // On an external server, leave nothing behind but the database itself.
        if matches!(study.target, Target::External { .. }) {
            for (database, table) in &study.created_tables {
                let _ = study
                    .probe
                    .query_drop(format!("DROP TABLE IF EXISTS `{database}`.`{table}`"));
            }
            for database in &study.created_databases {
                let _ = study
                    .probe
                    .query_drop(format!("DROP DATABASE IF EXISTS `{database}`"));
            }
        }
        result
        // The study, and with it the target, drops here: a throwaway server is stopped
        // and removed.
    })();
    let (status, error) = match &result {
        Ok(()) if interrupt::requested() => (RunStatus::Interrupted, None),
        Ok(()) => (RunStatus::Completed, None),
        Err(err) => (RunStatus::Failed, Some(format!("{err:#}"))),
    };
    record.finish(status, error);
    let saved = output.finish(&record);
    match (result, saved) {
        (Ok(()), Ok(())) => Ok(record),
        (Err(err), _) | (Ok(()), Err(err)) => Err((err, Box::new(record))),
    }
}

impl Study<'_> {
    fn save(&mut self) -> anyhow::Result<()> {
        self.output.save(self.record)
    }

    /// Runs one measured cell with progress and the server's counters, records it, and
    /// says whether the server died during it (the cell is then recorded as crashed, with
    /// the end of the error log; the caller restarts the server and re-prepares).
    fn measure_cell(
        &mut self,
        workload: &dyn Workload,
        config: &CellConfig,
        mut key: CellKey,
        label: String,
    ) -> anyhow::Result<bool> {
        key.profile = self.profile.clone();
        let expected = match (config.stop.events_per_thread, config.stop.events_total) {
            (Some(each), _) => Some(each * u64::from(config.threads)),
            (None, total) => total,
        };
        let progress = CellProgress::start(label, expected, self.output.print_intervals);
        let server_pid = self.target.server_pid();
        let mut observer = CellWatch::new(&mut self.probe, &progress, server_pid);
        let measured = run_cell(workload, config, &mut observer)?;
        let counters = observer.into_counters();
        // A failed cell or a lost probe may mean the server died.
        let crash = if measured.outcome != CellOutcome::Completed || counters.is_err() {
            (!self.target.is_alive()).then(|| {
                let cause = match (&measured.outcome, &counters) {
                    (CellOutcome::Failed(message), _) => message.clone(),
                    (_, Err(err)) => format!("{err:#}"),
                    _ => "no error reported".into(),
                };
                format!(
                    "the server died during the cell ({cause}); its error log ends with:\n{}",
                    self.target.error_log_tail(20).unwrap_or_default()
                )
            })
        } else {
            None
        };
        let counters = match (&crash, counters) {
            (Some(_), counters) => counters.unwrap_or_default(),
            (None, counters) => counters?,
        };
        let mut cell = CellRecord::from_measurement(
            self.record.cells.len(),
            &key,
            config,
            &measured,
            counters,
        );
        if let Some(message) = &crash {
            cell.outcome = OutcomeRecord::Crashed;
            cell.error = Some(message.clone());
        }
        progress.finish(&match &measured.outcome {
            _ if crash.is_some() => "the server crashed".to_string(),
            CellOutcome::Completed => format!(
                "{:.0} ms wall, {:.0} events/s{}",
                cell.wall_ms,
                cell.events_per_s,
                match &cell.rate {
                    Some(rate) if rate.fell_behind => format!(
                        " — WARNING: could not keep --rate {:.0}/s (max lag {:.0} ms)",
                        rate.target_per_s, rate.max_lag_ms
                    ),
                    _ => String::new(),
                }
            ),
            CellOutcome::Interrupted => "interrupted".into(),
            CellOutcome::Failed(message) => format!("failed: {message}"),
        });
        self.record.cells.push(cell);
        if let Some(message) = &crash {
            note(message);
        }
        self.save()?;
        Ok(crash.is_some())
    }

    /// What the datadir's filesystem and the server's state add to an error: a full
    /// filesystem (with free space before and after), or a server that died (with its log).
    fn failure_context(&mut self, disk_before: Option<&FilesystemState>) -> String {
        let mut context = String::new();
        // Engines grow files in large steps (InnoDB preallocates tens of MB), so a "full"
        // filesystem may still show free space: the server's own ENOSPC line is the proof.
        let log = self.target.error_log_tail(40).unwrap_or_default();
        let enospc_line = log.lines().rev().find(|line| {
            line.contains("error 28")
                || line.contains("No space left")
                || line.contains("Disk is full")
        });
        if let (Some(before), Some(after)) =
            (disk_before, self.datadir.as_deref().and_then(filesystem_of))
        {
            if enospc_line.is_some() || after.is_nearly_full() {
                let mb = |bytes: u64| bytes as f64 / 1048576.0;
                context.push_str(&format!(
                    "; the filesystem holding the datadir ({}, {}) is full{}: {:.1} MB free before the load, {:.1} MB after; give the server more room (a larger tmpfs, another --server-dir) or lower --rows",
                    after.mount_point.display(),
                    after.fs_type,
                    enospc_line.map_or(String::new(), |line| format!(" (server: \"{}\")", line.trim())),
                    mb(before.free_bytes),
                    mb(after.free_bytes)
                ));
            }
        }
        if !self.target.is_alive() {
            context.push_str(&format!(
                "; the server died, its error log ends with:\n{}",
                self.target.error_log_tail(20).unwrap_or_default()
            ));
        }
        context
    }

    /// Opens a fresh target with `self.server`'s options and moves the study onto it; the
    /// old one (a dead server's directory, a previous profile's server) is removed as it
    /// drops here. Tables and databases are the new server's to create.
    fn replace_target(&mut self) -> anyhow::Result<crate::server::ServerRecord> {
        let (target, server_record, spec, probe) =
            open_target(&self.server, self.engines, self.reusable_table)?;
        self.target = target;
        self.datadir = datadir_of(&self.target);
        self.spec = spec;
        self.probe = probe;
        self.created_tables.clear();
        self.created_databases.clear();
        Ok(server_record)
    }

    /// Moves the study to a server configured by `profile` (the command line's server
    /// options, then the profile's, which win). The previous server is removed.
    fn switch_profile(
        &mut self,
        profile: &FileProfile,
        base: &crate::server::ServerOptions,
    ) -> anyhow::Result<()> {
        if matches!(self.target, Target::External { .. }) {
            return Err(anyhow!(
                "the scenario compares server profiles, which needs throwaway servers: drop --dsn (profile '{}')",
                profile.name
            ));
        }
        let mut options = base.clone();
        options
            .server_opts
            .extend(profile.server_opts.iter().cloned());
        options.tmpfs = options.tmpfs || profile.tmpfs;
        if let Some(binary) = &profile.server_bin {
            options.server_bin = Some(binary.clone());
        }
        self.server.options = options;
        note(&format!("profile {}: starting its server...", profile.name));
        let server_record = self.replace_target()?;
        self.profile = Some(profile.name.clone());
        self.record.profiles.push(ProfileRecord {
            name: profile.name.clone(),
            server: server_record,
        });
        self.save()
    }

    /// `--cold`: the same server stopped and started again on its datadir, the page cache
    /// dropped where we may, timed and recorded as a step.
    fn cold_restart(&mut self) -> anyhow::Result<()> {
        let started = Instant::now();
        let dropped = self.target.restart_cold()?;
        self.probe = self.spec.connect()?;
        self.record.steps.push(StepRecord {
            name: "cold_restart".into(),
            engine: None,
            profile: self.profile.clone(),
            detail: if dropped {
                "server restarted, page cache dropped".into()
            } else {
                "server restarted; the page cache could not be dropped (needs root)".into()
            },
            elapsed_ms: started.elapsed().as_secs_f64() * 1000.0,
            rows: None,
            error: None,
        });
        Ok(())
    }

    /// After a crash: a fresh throwaway server with the same configuration. The study
    /// re-prepares its tables itself. An external server cannot be restarted by us.
    fn restart_server(&mut self) -> anyhow::Result<()> {
        if interrupt::requested() {
            return Err(anyhow!(
                "the server died while enginebench was stopping; not starting another"
            ));
        }
        if matches!(self.target, Target::External { .. }) {
            return Err(anyhow!(
                "the external server went away; enginebench cannot restart it: check it and run again"
            ));
        }
        note("starting a fresh server to go on with the remaining cells...");
        let started = Instant::now();
        let server_record = self.replace_target()?;
        self.record.steps.push(StepRecord {
            name: "server_restart".into(),
            engine: None,
            profile: self.profile.clone(),
            detail: format!("fresh {} after a crash", server_record.version),
            elapsed_ms: started.elapsed().as_secs_f64() * 1000.0,
            rows: None,
            error: None,
        });
        self.save()
    }

    /// Loads one table with `plan`, measures its footprint, and records both. A failed load
    /// is recorded too, then returned.
    fn load(
        &mut self,
        engine: Engine,
        table: &TableSpec,
        plan: &LoadPlan,
        repeat: u32,
    ) -> anyhow::Result<LoadOutcome> {
        let database = self.database;
        self.load_in(database, engine, table, plan, repeat, None)
    }

    /// Loads a table into `database` (a scenario file keeps each engine's tables in a
    /// database of its own).
    fn load_in(
        &mut self,
        database: &str,
        engine: Engine,
        table: &TableSpec,
        plan: &LoadPlan,
        repeat: u32,
        phase: Option<&str>,
    ) -> anyhow::Result<LoadOutcome> {
        let qualified = (database.to_string(), table.name.clone());
        if matches!(self.target, Target::External { .. })
            && !self.created_tables.contains(&qualified)
            && table_exists(&mut self.probe, database, &table.name)?
        {
            return Err(anyhow!(
                "table {}.{} already exists on the external server and was not created by this run; drop it or pass another --database",
                database,
                table.name
            ));
        }
        if !self.created_tables.contains(&qualified) {
            self.created_tables.push(qualified);
        }
        note(&format!(
            "loading {} rows into {} (ENGINE={}) with {}...",
            table.rows,
            table.name,
            engine.sql_name(),
            plan.label()
        ));
        let disk_before = self.datadir.as_deref().and_then(filesystem_of);
        let outcome = load_table(
            &self.spec.with_database(database),
            table,
            plan,
            self.target.server_pid(),
            &|| !interrupt::requested(),
        );
        let mut load_record = LoadRecord {
            table: table.name.clone(),
            engine,
            profile: self.profile.clone(),
            phase: phase.map(str::to_string),
            plan: *plan,
            label: plan.label(),
            repeat,
            outcome: None,
            error: None,
            footprint: None,
        };
        match outcome {
            Ok(outcome) => {
                note(&format!(
                    "loaded {} rows into {} in {:.2} s ({:.0} rows/s{})",
                    outcome.rows,
                    table.name,
                    outcome.total_ms() / 1000.0,
                    outcome.rows_per_s(),
                    if outcome.index_ms > 0.0 {
                        format!(", indexes {:.2} s", outcome.index_ms / 1000.0)
                    } else {
                        String::new()
                    }
                ));
                load_record.footprint = Some(
                    measure_footprint(
                        &mut self.probe,
                        database,
                        &table.name,
                        engine,
                        self.datadir.as_deref(),
                        "after_load",
                    )
                    .described()
                    .with_context(|| format!("measuring the disk footprint of {}", table.name))?,
                );
                load_record.outcome = Some(outcome.clone());
                self.record.loads.push(load_record);
                self.save()?;
                Ok(outcome)
            }
            Err(err) => {
                let message = format!("{err}{}", self.failure_context(disk_before.as_ref()));
                load_record.error = Some(message.clone());
                self.record.loads.push(load_record);
                self.save()?;
                Err(anyhow!(message))
            }
        }
    }
}

fn table_exists(conn: &mut mysql::Conn, database: &str, table: &str) -> anyhow::Result<bool> {
    let found: Option<String> = conn
        .exec_first(
            "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ?",
            (database, table),
        )
        .described()?;
    Ok(found.is_some())
}

/// Follows a running cell: progress on stderr, and the server's counters (SHOW GLOBAL
/// STATUS, /proc of the server) at the start, at each report interval and at the end of the
/// measured phase, on the runner's own connection.
struct CellWatch<'a> {
    probe: &'a mut mysql::Conn,
    progress: &'a CellProgress,
    server_pid: Option<u32>,
    first: Option<CounterSample>,
    last: Option<CounterSample>,
    counters: CellCounters,
    client_cpu_at_start: u64,
    error: Option<anyhow::Error>,
}

#[derive(Clone)]
struct CounterSample {
    status: StatusSnapshot,
    process: Option<ProcessSample>,
}

impl<'a> CellWatch<'a> {
    fn new(
        probe: &'a mut mysql::Conn,
        progress: &'a CellProgress,
        server_pid: Option<u32>,
    ) -> Self {
        CellWatch {
            probe,
            progress,
            server_pid,
            first: None,
            last: None,
            counters: CellCounters::default(),
            client_cpu_at_start: 0,
            error: None,
        }
    }

    fn sample(&mut self) -> Option<CounterSample> {
        let started = Instant::now();
        let status = match StatusSnapshot::take(self.probe)
            .described()
            .context("reading SHOW GLOBAL STATUS")
        {
            Ok(status) => status,
            Err(err) => {
                self.error.get_or_insert(err);
                return None;
            }
        };
        let process = self.server_pid.and_then(sample_process);
        self.counters.probe = ProbeCost {
            samples: self.counters.probe.samples + 1,
            total_us: self.counters.probe.total_us + started.elapsed().as_micros() as u64,
        };
        Some(CounterSample { status, process })
    }

    /// Closes an interval: the counters since the previous sample.
    fn close_interval(&mut self) -> Option<CounterSample> {
        let now = self.sample()?;
        if let Some(previous) = &self.last {
            self.counters.intervals.push(counter_delta(previous, &now));
        }
        self.last = Some(now.clone());
        Some(now)
    }

    fn into_counters(self) -> anyhow::Result<CellCounters> {
        match self.error {
            Some(err) => Err(err),
            None => Ok(self.counters),
        }
    }
}

fn counter_delta(before: &CounterSample, after: &CounterSample) -> IntervalCounters {
    IntervalCounters {
        status_delta: status_delta(&before.status, &after.status),
        process: match (&before.process, &after.process) {
            (Some(before), Some(after)) => Some(after.delta_since(before)),
            _ => None,
        },
    }
}

impl CellObserver for CellWatch<'_> {
    fn measuring_started(&mut self) {
        self.first = self.sample();
        self.last = self.first.clone();
        // After the first sample and before the last: the probe's own parsing of SHOW
        // GLOBAL STATUS is not the driver's cost.
        self.client_cpu_at_start = own_cpu_us();
    }
    fn progress(&mut self, progress: &Progress) {
        self.progress.update(progress);
        if progress.interval.is_some() {
            self.close_interval();
        }
    }
    fn measuring_finished(&mut self) {
        self.counters.client_cpu_us = own_cpu_us().saturating_sub(self.client_cpu_at_start);
        if let (Some(last), Some(first)) = (self.close_interval(), self.first.clone()) {
            let whole = counter_delta(&first, &last);
            self.counters.status_delta = whole.status_delta;
            self.counters.server_process = whole.process;
        }
    }
}

fn is_sbtest_table(name: &str) -> bool {
    name.strip_prefix("sbtest")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}
