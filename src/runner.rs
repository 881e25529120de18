//! Carries out a plan on a target, step by step, keeping the run record current on disk:
//! the record exists before load starts and is saved after every step and cell.

use anyhow::{anyhow, Context};
use mysql::prelude::Queryable;
use std::collections::BTreeMap;
use std::time::Instant;

use crate::driver::{run_cell, CellConfig, CellObserver, CellOutcome, Progress, StopCondition};
use crate::interrupt;
use crate::measure::{status_delta, StatusSnapshot};
use crate::plan::{plan_s0, Step};
use crate::report::progress::{note, CellProgress};
use crate::results::{CellKey, CellRecord, ResultFile, RunRecord, RunStatus, StepRecord};
use crate::scenario::s0::{self, S0Params, S0Workload};
use crate::server::{ServerArgsResolved, Target};

/// Options that shape how a run reports, not what it measures.
pub struct RunOutput {
    pub results: ResultFile,
    pub report_interval: std::time::Duration,
    /// Print interval lines on a non-terminal stderr.
    pub print_intervals: bool,
}

/// Runs S0 and returns its record, whatever happened: an error is recorded in it (and the
/// servers are torn down) before it is returned as `Err` together with the record.
pub fn run_s0(
    params: &S0Params,
    server: &ServerArgsResolved,
    output: &RunOutput,
) -> Result<RunRecord, (anyhow::Error, Box<RunRecord>)> {
    let mut record = RunRecord::new(s0::STUDY_NAME, s0_parameters(params));
    if let Err(err) = output.results.save(&record) {
        return Err((err, Box::new(record)));
    }
    let result = execute_s0(params, server, output, &mut record);
    // The target (and any throwaway server) is gone by now: execute_s0 owned it.
    let (status, error) = match &result {
        Ok(()) if interrupt::requested() => (RunStatus::Interrupted, None),
        Ok(()) => (RunStatus::Completed, None),
        Err(err) => (RunStatus::Failed, Some(format!("{err:#}"))),
    };
    record.finish(status, error);
    let saved = output.results.finish(&record);
    match (result, saved) {
        (Ok(()), Ok(())) => Ok(record),
        (Err(err), _) | (Ok(()), Err(err)) => Err((err, Box::new(record))),
    }
}

fn s0_parameters(params: &S0Params) -> BTreeMap<String, serde_json::Value> {
    match serde_json::to_value(params) {
        Ok(serde_json::Value::Object(map)) => map.into_iter().collect(),
        _ => BTreeMap::new(),
    }
}

fn execute_s0(
    params: &S0Params,
    server: &ServerArgsResolved,
    output: &RunOutput,
    record: &mut RunRecord,
) -> anyhow::Result<()> {
    let steps = plan_s0(params);
    let cell_total = steps
        .iter()
        .filter(|s| matches!(s, Step::Cell { .. }))
        .count();
    note(&match &server.dsn {
        Some(dsn) => format!("using the external server {}", dsn.redacted()),
        None => "starting a throwaway MariaDB server...".to_string(),
    });
    let target = Target::open(server.dsn.clone(), &server.options, &server.database)?;
    target.check_engines(&params.engines)?;
    let server_record = target.record()?;
    note(&format!(
        "server {} ready ({})",
        server_record.version, server_record.address
    ));
    record.server = Some(server_record);
    output.results.save(record)?;

    let spec = target.spec(&server.database);
    let mut probe = spec.connect()?;
    let mut created_tables = Vec::new();
    let mut cell_index = 0;
    let result = (|| -> anyhow::Result<()> {
        for step in steps {
            if interrupt::requested() {
                break;
            }
            match step {
                Step::PrepareTable { engine } => {
                    let table = s0::table_name(engine);
                    if matches!(target, Target::External { .. })
                        && table_exists(&mut probe, &table)?
                    {
                        return Err(anyhow!(
                            "table {}.{table} already exists on the external server and was not created by this run; drop it or pass another --database",
                            server.database
                        ));
                    }
                    note(&format!(
                        "loading {} rows into {table} (ENGINE={})...",
                        params.rows,
                        engine.sql_name()
                    ));
                    let started = Instant::now();
                    created_tables.push(table.clone());
                    let loaded =
                        s0::prepare_table(&spec, engine, params.rows, params.seed, &|_| {
                            !interrupt::requested()
                        })?;
                    let elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
                    note(&format!(
                        "loaded {loaded} rows into {table} in {:.2} s",
                        elapsed_ms / 1000.0
                    ));
                    record.steps.push(StepRecord {
                        name: "load".into(),
                        engine: Some(engine),
                        detail: "multi-row INSERT, 1000 rows per statement".into(),
                        elapsed_ms,
                        rows: Some(loaded),
                        error: None,
                    });
                }
                Step::CreateIndex { engine } => {
                    let sql = s0::create_index_sql(engine);
                    note(&format!("{sql}..."));
                    let started = Instant::now();
                    probe
                        .query_drop(&sql)
                        .with_context(|| format!("{sql} failed"))?;
                    let elapsed_ms = started.elapsed().as_secs_f64() * 1000.0;
                    note(&format!("{sql}: {:.2} s", elapsed_ms / 1000.0));
                    record.steps.push(StepRecord {
                        name: "create_index".into(),
                        engine: Some(engine),
                        detail: sql,
                        elapsed_ms,
                        rows: None,
                        error: None,
                    });
                }
                Step::Cell {
                    variant,
                    engine,
                    threads,
                    repeat,
                } => {
                    let workload = S0Workload {
                        spec: spec.clone(),
                        engine,
                        variant,
                        rows: params.rows,
                        seed: params.seed.wrapping_add(cell_index as u64),
                    };
                    let config = CellConfig {
                        threads,
                        stop: StopCondition {
                            events_per_thread: params.time.is_none().then_some(params.loops),
                            duration: params.time,
                        },
                        warmup: params.warmup,
                        report_interval: output.report_interval,
                    };
                    let label = format!(
                        "[{}/{cell_total}] {} {engine} threads={threads} repeat {repeat}",
                        cell_index + 1,
                        variant.key()
                    );
                    let progress = CellProgress::start(
                        label,
                        config.stop.events_per_thread.map(|n| n * threads as u64),
                        output.print_intervals,
                    );
                    let mut observer = CellWatch {
                        probe: &mut probe,
                        progress: &progress,
                        before: None,
                        after: None,
                    };
                    let measured = run_cell(&workload, &config, &mut observer)?;
                    let (before, after) = match (observer.before.take(), observer.after.take()) {
                        (Some(before), Some(after)) => (before?, after?),
                        _ => (StatusSnapshot::default(), StatusSnapshot::default()),
                    };
                    let key = CellKey {
                        variant: variant.key().into(),
                        engine,
                        threads,
                        repeat,
                    };
                    let cell = CellRecord::from_measurement(
                        cell_index,
                        &key,
                        &config,
                        &measured,
                        status_delta(&before, &after),
                    );
                    progress.finish(&match &measured.outcome {
                        CellOutcome::Completed => format!(
                            "{:.0} ms wall, {:.0} events/s",
                            cell.wall_ms, cell.events_per_s
                        ),
                        CellOutcome::Interrupted => "interrupted".into(),
                        CellOutcome::Failed(message) => format!("failed: {message}"),
                    });
                    record.cells.push(cell);
                    cell_index += 1;
                }
            }
            output.results.save(record)?;
        }
        Ok(())
    })();
    // On an external server, leave nothing behind but the database itself.
    if matches!(target, Target::External { .. }) {
        for table in &created_tables {
            let _ = probe.query_drop(format!("DROP TABLE IF EXISTS `{table}`"));
        }
    }
    result
}

fn table_exists(conn: &mut mysql::Conn, table: &str) -> anyhow::Result<bool> {
    let found: Option<String> = conn.exec_first(
        "SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ?",
        (table,),
    )?;
    Ok(found.is_some())
}

/// Follows a running cell: progress on stderr, SHOW GLOBAL STATUS around the measured phase.
struct CellWatch<'a> {
    probe: &'a mut mysql::Conn,
    progress: &'a CellProgress,
    before: Option<anyhow::Result<StatusSnapshot>>,
    after: Option<anyhow::Result<StatusSnapshot>>,
}

impl CellObserver for CellWatch<'_> {
    fn measuring_started(&mut self) {
        self.before = Some(StatusSnapshot::take(self.probe).context("reading SHOW GLOBAL STATUS"));
    }
    fn progress(&mut self, progress: &Progress) {
        self.progress.update(progress);
    }
    fn measuring_finished(&mut self) {
        self.after = Some(StatusSnapshot::take(self.probe).context("reading SHOW GLOBAL STATUS"));
    }
}
