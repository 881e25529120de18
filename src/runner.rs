//! Carries out a plan on a target, step by step, keeping the run record current on disk:
//! the record exists before load starts and is saved after every step and cell.

use anyhow::{anyhow, Context};
use mysql::prelude::Queryable;
use std::collections::BTreeMap;
use std::time::Instant;

use crate::driver::{run_cell, CellConfig, CellObserver, CellOutcome, Progress, StopCondition};
use crate::interrupt;
use crate::measure::{
    measure_footprint, own_cpu_us, sample_process, status_delta, ProcessSample, StatusSnapshot,
};
use crate::plan::{plan_s0, Step};
use crate::report::progress::{note, CellProgress};
use crate::results::{
    CellCounters, CellKey, CellRecord, IntervalCounters, ProbeCost, ResultFile, RunRecord,
    RunStatus, StepRecord,
};
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
    let datadir = match &target {
        Target::Throwaway(server) => Some(server.datadir()),
        Target::External { .. } => None,
    };
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
                    record.footprints.push(
                        measure_footprint(
                            &mut probe,
                            &server.database,
                            &table,
                            engine,
                            datadir.as_deref(),
                            "after_load",
                        )
                        .with_context(|| format!("measuring the disk footprint of {table}"))?,
                    );
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
                    let mut observer = CellWatch::new(&mut probe, &progress, target.server_pid());
                    let measured = run_cell(&workload, &config, &mut observer)?;
                    let counters = observer.into_counters()?;
                    let key = CellKey {
                        variant: variant.key().into(),
                        engine,
                        threads,
                        repeat,
                    };
                    let cell = CellRecord::from_measurement(
                        cell_index, &key, &config, &measured, counters,
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
        if !interrupt::requested() {
            for &engine in &params.engines {
                let table = s0::table_name(engine);
                record.footprints.push(
                    measure_footprint(
                        &mut probe,
                        &server.database,
                        &table,
                        engine,
                        datadir.as_deref(),
                        "after_run",
                    )
                    .with_context(|| format!("measuring the disk footprint of {table}"))?,
                );
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
        let status = match StatusSnapshot::take(self.probe).context("reading SHOW GLOBAL STATUS") {
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
