//! `enginebench sysbench …`: sysbench's own command line, run as sysbench would. Reading it
//! and what each command prints are the sysbench kind's (`studies::sysbench::command`);
//! this measures `run`'s one cell as sysbench does — the script's workers on the driver,
//! nothing else sent to the server (no probes, no plans, no counters; not even a
//! connection of enginebench's own) — then stores the run (`ENGINEBENCH_DB`) and has
//! sysbench's report printed. A refusal is printed in sysbench's words with its exit code.
//!
//! Owns: the run's one cell driven, recorded and stored. Must not read sysbench's options
//! nor know what it prints.

use std::cell::Cell;
use std::io::Write as _;

use super::Finished;
use crate::driver::{run_cell, CellConfig, CellOutcome, DriverKind};
use crate::measure::{CellObserver, Progress};
use crate::plan::{CellLink, Step};
use crate::results::{CellKey, CellRecord, RunRecord, RunStatus};
use crate::runner::{IntervalHook, RunOutput};
use crate::server::ConnectionSpec;
use crate::studies::sysbench::command::{self, Start, SysbenchRun};
use crate::studies::sysbench::said::Said;

pub fn run(args: Vec<String>) -> anyhow::Result<Finished> {
    let outcome = match command::start(&args) {
        Ok(Start::Done) => Ok(Finished::Success),
        Ok(Start::Run(run)) => measure(&run),
        Err(err) => Err(err),
    };
    match outcome {
        Err(err) => match err.downcast::<Said>() {
            Ok(said) => Ok(print_said(&said)),
            Err(err) => Err(err),
        },
        finished => finished,
    }
}

/// sysbench's ending printed on its streams; its exit code.
fn print_said(said: &Said) -> Finished {
    command::flush_script_output();
    out!("{}", said.stdout);
    let _ = std::io::stdout().flush();
    let _ = write!(std::io::stderr().lock(), "{}", said.stderr);
    Finished::Exit(said.exit_code)
}

/// `run`: the cell measured, stored, and reported as sysbench reports it.
fn measure(run: &SysbenchRun) -> anyhow::Result<Finished> {
    let (plan, dsn) = run.plan()?;
    let Some(cell) = plan.steps.iter().find_map(|step| match step {
        Step::Cell(cell) => Some(cell),
        _ => None,
    }) else {
        anyhow::bail!("sysbench's run planned no cell (a bug in enginebench; please report it)");
    };
    let phase = plan.phase(cell.phase);
    let database = run.database().to_string();
    let workload = plan.study.workload(
        cell,
        CellLink {
            spec: ConnectionSpec::tcp(&dsn, Some(&database)),
            database,
            seed: plan.matrix.seed,
            pacing: phase.pacing,
            protocol: phase.protocol.sent,
        },
    )?;
    let config = CellConfig {
        threads: cell.threads,
        stop: phase.pacing.stop,
        warmup: phase.pacing.warmup,
        rate: phase.pacing.rate,
        report_interval: run.store_interval(),
        interval_log: true,
        // sysbench runs a thread per connection; so does this, unless ENGINEBENCH_DRIVER
        // names a driver.
        driver: std::env::var_os("ENGINEBENCH_DRIVER")
            .is_none()
            .then_some(DriverKind::Threads),
        ..CellConfig::default()
    };
    let mut observer = SysbenchProgress {
        run,
        hook: run.interval_hook()?,
        threads: cell.threads,
        started: Cell::new(false),
    };
    let measured = run_cell(workload.as_ref(), &config, &mut observer)?;
    if let CellOutcome::Failed(why) = &measured.outcome {
        if !observer.started.get() {
            return Err(run.workers_failed(why).into());
        }
    }
    let key = CellKey {
        variant: phase.name,
        engine: cell.engine,
        profile: None,
        threads: cell.threads,
        repeat: cell.repeat,
        warmup_repeat: cell.warmup,
    };
    let mut record = RunRecord::new(
        plan.study.about().kind,
        plan.study.name(),
        &plan.study.about().description.title,
        Default::default(),
    );
    plan.study.add_to_record(&mut record, &plan.matrix);
    record.environment = Some(crate::measure::EnvironmentRecord::probe(None));
    let mut cell_record =
        CellRecord::from_measurement(0, &key, &config, &measured, Default::default());
    cell_record.protocol = Some(phase.protocol);
    for query in &cell_record.queries {
        record
            .statement_classes
            .entry(query.name.clone())
            .or_insert_with(|| crate::scenario::StatementClass::of_sql(&query.name));
    }
    record.cells.push(cell_record);
    let (status, finished) = match &measured.outcome {
        CellOutcome::Completed => (RunStatus::Completed, Finished::Success),
        CellOutcome::Interrupted => (RunStatus::Interrupted, Finished::Interrupted),
        CellOutcome::Stalled(_) | CellOutcome::Failed(_) => {
            (RunStatus::Completed, Finished::CellsFailed)
        }
    };
    record.finish(status, None);
    // A store that cannot be written loses the stored copy only: the report is printed
    // and the exit code is the run's, as sysbench's would be.
    if let Err(err) = store(run, &record) {
        crate::console::note(&format!(
            "enginebench: the run was not stored: {err:#} (set ENGINEBENCH_DB to a writable file)"
        ));
    }
    match &measured.outcome {
        CellOutcome::Failed(why) => {
            // sysbench stops without its report when a worker fails.
            Ok(print_said(&run.run_failed(why)))
        }
        CellOutcome::Stalled(_) => {
            let why = record.cells[0].error.clone().unwrap_or_default();
            Ok(print_said(&Said::fatal(format!(
                "the server stopped answering: {why}"
            ))))
        }
        _ => {
            command::flush_script_output();
            run.ended(measured.events);
            run.report(&record)?;
            command::flush_script_output();
            Ok(finished)
        }
    }
}

/// The run kept in the result store (`ENGINEBENCH_DB`, else enginebench.db here), said on
/// stderr with `--verbose` only.
fn store(run: &SysbenchRun, record: &RunRecord) -> anyhow::Result<()> {
    use anyhow::Context as _;
    let path = std::env::var_os("ENGINEBENCH_DB").unwrap_or_else(|| "enginebench.db".into());
    let output = RunOutput::open(
        None,
        false,
        std::path::Path::new(&path),
        run.store_interval(),
        false,
    )
    .context("opening the result store (ENGINEBENCH_DB)")?;
    output.finish(record)?;
    if let (true, Some(store)) = (run.verbose(), &output.store) {
        if let Some(id) = store.run_id() {
            crate::console::note(&format!(
                "stored as run {id} in {}: `enginebench report {id}` prints it again",
                store.path().display()
            ));
        }
    }
    Ok(())
}

/// sysbench's progress: "Threads started!" once every worker is ready, then each
/// interval's line (or the script's hook) as it closes.
struct SysbenchProgress<'a> {
    run: &'a SysbenchRun,
    hook: Option<IntervalHook>,
    threads: u32,
    started: Cell<bool>,
}

impl CellObserver for SysbenchProgress<'_> {
    fn workers_ready(&mut self) -> Result<(), String> {
        self.started.set(true);
        self.run.threads_started();
        Ok(())
    }

    fn progress(&mut self, progress: &Progress) {
        if let (Some(interval), Some(hook)) = (progress.interval, &self.hook) {
            command::flush_script_output();
            hook(interval, self.threads);
        }
    }
}
