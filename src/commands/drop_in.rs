//! `enginebench TOOL …` (`enginebench sysbench …`): another tool's own command line, run as
//! that tool would. Reading it and what each command prints are the drop-in's, which the
//! kind that offers it gives the registry ([`crate::studies::DropIn`]); this measures its
//! run's one cell as the tool does — the workers on the driver, nothing else sent to the
//! server (no probes, no plans, no counters; not even a connection of enginebench's own) —
//! then stores the run (`ENGINEBENCH_DB`) and has the tool's report printed. A refusal is
//! printed in the tool's words with its exit code.
//!
//! Owns: the run's one cell driven, recorded and stored. Must not read the tool's options
//! nor know what it prints, nor name a kind.

use std::cell::Cell;
use std::io::Write as _;

use super::Finished;
use crate::driver::{run_cell, CellOutcome};
use crate::measure::{CellObserver, Progress};
use crate::plan::Step;
use crate::results::{CellRecord, RunRecord, RunStatus};
use crate::runner::{IntervalHook, RunOutput};
use crate::server::ConnectionSpec;
use crate::studies::{find_drop_in, DropIn, DropInRun, Said, Started};

/// `enginebench TOOL ARGS…`, carried out by the drop-in of the kind that offers TOOL.
pub fn run(tool: &str, args: Vec<String>) -> anyhow::Result<Finished> {
    let drop_in = find_drop_in(tool)?;
    let outcome = match (drop_in.start)(&args) {
        Ok(Started::Done) => Ok(Finished::Success),
        Ok(Started::Run(run)) => measure(drop_in, run.as_ref()),
        Err(err) => Err(err),
    };
    match outcome {
        Err(err) => match err.downcast::<Said>() {
            Ok(said) => Ok(print_said(drop_in, &said)),
            Err(err) => Err(err),
        },
        finished => finished,
    }
}

/// The tool's ending printed on its streams; its exit code.
fn print_said(drop_in: &DropIn, said: &Said) -> Finished {
    (drop_in.flush_output)();
    out!("{}", said.stdout);
    let _ = std::io::stdout().flush();
    let _ = write!(std::io::stderr().lock(), "{}", said.stderr);
    Finished::Exit(said.exit_code)
}

/// The run: the cell measured, stored, and reported as the tool reports it.
fn measure(drop_in: &DropIn, run: &dyn DropInRun) -> anyhow::Result<Finished> {
    let (plan, dsn) = run.plan()?;
    let Some(cell) = plan.steps.iter().find_map(|step| match step {
        Step::Cell(cell) => Some(cell),
        _ => None,
    }) else {
        anyhow::bail!(
            "{}'s run planned no cell (a bug in enginebench; please report it)",
            drop_in.tool
        );
    };
    let database = run.database().to_string();
    let (workload, config) = plan.cell_driving(
        cell,
        ConnectionSpec::tcp(&dsn, Some(&database)),
        database,
        plan.matrix.seed,
        run.store_interval(),
    )?;
    let mut observer = ToolProgress {
        drop_in,
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
    let key = plan.cell_key(cell, None);
    let mut record = plan.new_record();
    record.environment = Some(crate::measure::EnvironmentRecord::probe(None));
    let mut cell_record =
        CellRecord::from_measurement(0, &key, &config, &measured, Default::default());
    cell_record.protocol = Some(plan.phase(cell.phase).protocol);
    add_cell(run, &mut record, cell_record);
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
            Ok(print_said(drop_in, &run.run_failed(why)))
        }
        CellOutcome::Stalled(_) => {
            let why = record.cells[0].error.clone().unwrap_or_default();
            Ok(print_said(
                drop_in,
                &Said::fatal(format!("the server stopped answering: {why}")),
            ))
        }
        _ => {
            (drop_in.flush_output)();
            run.ended(measured.events);
            run.report(&record)?;
            (drop_in.flush_output)();
            Ok(finished)
        }
    }
}

/// The cell into the record: a test of the machine as such, a run against a database
/// with its statements' classes.
fn add_cell(run: &dyn DropInRun, record: &mut RunRecord, mut cell_record: CellRecord) {
    if let Some(test) = run.machine_test(&cell_record) {
        cell_record.machine_test = Some(test.test.clone());
        record.machine_tests.push(test);
    }
    for query in &cell_record.queries {
        record
            .statement_classes
            .entry(query.name.clone())
            .or_insert_with(|| crate::scenario::StatementClass::of_sql(&query.name));
    }
    record.cells.push(cell_record);
}

/// The run kept in the result store (`ENGINEBENCH_DB`, else enginebench.db here), said on
/// stderr with `--verbose` only.
fn store(run: &dyn DropInRun, record: &RunRecord) -> anyhow::Result<()> {
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

/// The tool's progress (sysbench's "Threads started!") once every worker is ready, then
/// each interval's line (or the script's hook) as it closes.
struct ToolProgress<'a> {
    drop_in: &'a DropIn,
    run: &'a dyn DropInRun,
    hook: Option<IntervalHook>,
    threads: u32,
    started: Cell<bool>,
}

impl CellObserver for ToolProgress<'_> {
    fn workers_ready(&mut self) -> Result<(), String> {
        self.started.set(true);
        self.run.threads_started();
        Ok(())
    }

    fn progress(&mut self, progress: &Progress) {
        if let (Some(interval), Some(hook)) = (progress.interval, &self.hook) {
            (self.drop_in.flush_output)();
            hook(interval, self.threads);
        }
    }
}
